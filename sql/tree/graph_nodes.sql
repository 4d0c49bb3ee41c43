-- tree/graph_nodes — the GPU events of every CUDA/HIP-graph launch in node order, with the graph node ids Kineto
-- writes on them: computed once per trace at ingest (reading every graphed event's args is too costly to repeat
-- on each query of a large replay).
--
-- Node order is the order of the `graph node id` (its low 32 bits: the id was first written as
-- (graph id << 32) | node, then as the node alone, pytorch#191119) when every event of the launch has one, else
-- the GPU start order.
--
-- @requires tree/graph_capture
-- @stores graph_replay_nodes FROM _graph_replay_nodes_build

-- graph_replay_nodes (stored table, see tracesql/store/schema.py): one row per GPU event (kernel, gpu_memcpy,
-- gpu_memset) of a graph launch (cudaGraphLaunch / hipGraphLaunch, tree/graph_capture _graph_replay_events).
--   trace_id, event_id, name, ts_ns, dur_ns   the GPU event
--   graph_launch_event_id, graph_index        its graph launch, and the launch's 1-based rank among the trace's
--   ordinal, n_events                         1-based rank in the launch by (ts, event_id); the launch's count
--   node_id        `graph node id` (its low 32 bits), NULL when absent
--   graph_id       `graph id`, else the high 32 bits of a packed `graph node id`
--   node_tag       `name`, written on a graphed event by PyTorch's graph annotations (torch.cuda graph
--                  annotations joined to the trace by graph node id), NULL when absent
--   pos            1-based rank in node order (see the top of this file)
--   signature      digest of the launch's event names in node order: equal for replays of one graph
CREATE OR REPLACE VIEW _graph_replay_nodes_build AS
WITH ids AS (
    SELECT g.*, TRY_CAST(json_extract(k.args, '$."graph node id"') AS UBIGINT) AS raw_node,
           TRY_CAST(json_extract(k.args, '$."graph id"') AS UBIGINT) AS raw_graph,
           json_extract_string(k.args, '$.name') AS tag_text
    FROM _graph_replay_events g
    JOIN kernels k ON k.trace_id = g.trace_id AND k.event_id = g.event_id
), n AS (
    SELECT trace_id, event_id, name, ts_ns, dur_ns, graph_launch_event_id, graph_index, ordinal, n_events,
           CASE WHEN raw_node > 0 THEN (raw_node & 4294967295)::BIGINT END AS node_id,
           coalesce(raw_graph, CASE WHEN raw_node > 4294967295 THEN raw_node >> 32 END)::BIGINT AS graph_id,
           CASE WHEN raw_node > 0 THEN tag_text END AS node_tag
    FROM ids
), p AS (
    SELECT *, CASE WHEN count(node_id) OVER w = n_events
                   THEN row_number() OVER (PARTITION BY trace_id, graph_index ORDER BY node_id, ordinal)
                   ELSE ordinal END AS pos
    FROM n
    WINDOW w AS (PARTITION BY trace_id, graph_index)
), sig AS (
    SELECT trace_id, graph_index, hash(list(hash(coalesce(name, '')) ORDER BY pos)) AS signature
    FROM p GROUP BY trace_id, graph_index
)
SELECT p.*, sig.signature FROM p JOIN sig USING (trace_id, graph_index);
