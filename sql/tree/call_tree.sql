-- tree/call_tree — the printable call tree: annotations, nn.Module calls, ops, runtime launches and
-- GPU events, each with the GPU time under it. `tracesql tree` and `ds.tree()` read this view.
--
-- A node's parent is its closest enclosing node on the CPU thread (the latest-starting of its innermost
-- enclosing cpu_op, nn.Module frame and user_annotation); a GPU event's parent is its launch. Python
-- frames that are not nn.Module calls and runtime calls that launched nothing are not nodes. Only nodes
-- with at least one linked GPU event below them are kept. GPU time of a node = over the GPU events below
-- it: busy (union of intervals, all streams pooled), Σ durations and count.
--
-- @requires lib/keys lib/intervals tree/context tree/links

-- Helper: the parent node of every CPU anchor (cpu_event_context row): the closest of its innermost
-- enclosing cpu_op, nn.Module frame and user_annotation (the one latest in nesting order).
--   trace_id, event_id, parent_id     the anchor and its parent node (NULL for a root)
--   node_key, parent_key              the same as _tree_key(trace_key, event_id) (lib/keys)
-- @materialize tree
CREATE OR REPLACE VIEW _call_tree_parents AS
WITH ctx AS MATERIALIZED (
    SELECT c.trace_id, c.event_id, k.trace_key, _tree_key(k.trace_key, c.event_id) AS node_key, c.nest_pos,
           c.op_event_id, c.module_event_id, c.annotation_event_id
    FROM cpu_event_context c JOIN _tree_trace_keys k USING (trace_id)
), par AS (
    SELECT c.trace_id, c.event_id, c.trace_key, c.node_key,
           CASE WHEN coalesce(o.nest_pos, -1) >= greatest(coalesce(m.nest_pos, -1), coalesce(a.nest_pos, -1))
                     AND o.nest_pos IS NOT NULL THEN o.event_id
                WHEN coalesce(m.nest_pos, -1) >= coalesce(a.nest_pos, -1) AND m.nest_pos IS NOT NULL
                     THEN m.event_id
                ELSE a.event_id END AS parent_id
    FROM ctx c
    LEFT JOIN ctx o ON o.node_key = _tree_key(c.trace_key, c.op_event_id)
    LEFT JOIN ctx m ON m.node_key = _tree_key(c.trace_key, c.module_event_id)
    LEFT JOIN ctx a ON a.node_key = _tree_key(c.trace_key, c.annotation_event_id)
)
SELECT trace_id, event_id, parent_id, node_key, _tree_key(trace_key, parent_id) AS parent_key FROM par;

-- Helper: (node, linked GPU event below it) pairs, from each GPU event's launch up the parent chain of
-- _call_tree_parents: node_key = _tree_key(trace_key, node event_id) (lib/keys); ts_ns, dur_ns are the GPU
-- event's.
-- @materialize tree
CREATE OR REPLACE VIEW _call_tree_pairs AS
WITH RECURSIVE up(node_key, ts_ns, dur_ns) AS (
    SELECT _tree_key(k.trace_key, l.launch_event_id), l.ts_ns, l.dur_ns
    FROM gpu_launch_links l JOIN _tree_trace_keys k USING (trace_id) WHERE l.linked
    UNION ALL
    SELECT p.parent_key, u.ts_ns, u.dur_ns
    FROM up u JOIN _call_tree_parents p ON p.node_key = u.node_key
    WHERE p.parent_key IS NOT NULL
)
SELECT * FROM up;

-- call_tree: one row per node of the call tree that has GPU work below it.
--   trace_id                    the trace
--   node_id                     event_id of the node (CPU event, or GPU event for kind 'gpu')
--   parent_node_id              event_id of the parent node (NULL for a root)
--   kind                        'annotation', 'module', 'op', 'launch' or 'gpu'
--   name                        event name (`nn.Module: X_N`, `aten::mm`, `cudaLaunchKernel`, kernel name)
--   ts_ns, dur_ns               the node's own start and duration (CPU clock for CPU nodes, GPU for 'gpu')
--   gpu_busy_ns                 union length of the GPU events below it (itself for a GPU event)
--   gpu_sum_ns                  Σ dur_ns of the GPU events below it
--   kernel_count                number of GPU events below it (kernels, memcpy, memset, sync)
--   sort_key                    order of siblings: the node's start (CPU ts for CPU nodes, GPU ts for GPU
--                               events), then node_id
-- @materialize tree
CREATE OR REPLACE VIEW call_tree AS
WITH t AS (
    SELECT node_key, count(*) AS kernel_count, sum(dur_ns) AS gpu_sum_ns,
           sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_end)) AS gpu_busy_ns
    FROM (SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY node_key ORDER BY ts_ns, dur_ns
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
          FROM _call_tree_pairs)
    GROUP BY node_key
)
SELECT c.trace_id, c.event_id AS node_id, p.parent_id AS parent_node_id, c.anchor_kind AS kind, c.name,
       c.ts_ns, c.dur_ns, t.gpu_busy_ns::BIGINT AS gpu_busy_ns, t.gpu_sum_ns::BIGINT AS gpu_sum_ns,
       t.kernel_count, [c.ts_ns, c.event_id] AS sort_key
FROM t JOIN _call_tree_parents p USING (node_key)
JOIN cpu_event_context c ON c.trace_id = p.trace_id AND c.event_id = p.event_id
UNION ALL
SELECT trace_id, event_id, launch_event_id, 'gpu', name, ts_ns, dur_ns, dur_ns, dur_ns, 1,
       [ts_ns, event_id]
FROM gpu_launch_links WHERE linked;
