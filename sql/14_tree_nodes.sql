-- 14_tree_nodes.sql — the printable call tree: annotations, nn.Module calls, ops, runtime launches and
-- GPU events, each with the GPU time under it. `tracesql tree` and `ds.tree()` read this view.
--
-- A node's parent is its closest enclosing node on the CPU thread (the latest-starting of its innermost
-- enclosing cpu_op, nn.Module frame and user_annotation); a GPU event's parent is its launch. Python
-- frames that are not nn.Module calls and runtime calls that launched nothing are not nodes. Only nodes
-- with at least one linked GPU event below them are kept. GPU time of a node = over the GPU events below
-- it: busy (union of intervals, all streams pooled), Σ durations and count.

-- Helper: the parent node of every CPU anchor (cpu_event_context row): the closest of its innermost
-- enclosing cpu_op, nn.Module frame and user_annotation (the one latest in nesting order).
CREATE OR REPLACE VIEW _call_tree_parents AS
WITH ctx AS MATERIALIZED (
    SELECT trace_id, event_id, nest_pos, op_event_id, module_event_id, annotation_event_id FROM cpu_event_context
)
SELECT c.trace_id, c.event_id,
       CASE WHEN coalesce(o.nest_pos, -1) >= greatest(coalesce(m.nest_pos, -1), coalesce(a.nest_pos, -1))
                 AND o.nest_pos IS NOT NULL THEN o.event_id
            WHEN coalesce(m.nest_pos, -1) >= coalesce(a.nest_pos, -1) AND m.nest_pos IS NOT NULL
                 THEN m.event_id
            ELSE a.event_id END AS parent_id
FROM ctx c
LEFT JOIN ctx o ON o.trace_id = c.trace_id AND o.event_id = c.op_event_id
LEFT JOIN ctx m ON m.trace_id = c.trace_id AND m.event_id = c.module_event_id
LEFT JOIN ctx a ON a.trace_id = c.trace_id AND a.event_id = c.annotation_event_id;

-- Helper: (node, linked GPU event below it) pairs, from each GPU event's launch up the parent chain of
-- _call_tree_parents; ts_ns, dur_ns are the GPU event's.
CREATE OR REPLACE VIEW _call_tree_pairs AS
WITH RECURSIVE up(trace_id, node_id, ts_ns, dur_ns) AS (
    SELECT trace_id, launch_event_id, ts_ns, dur_ns FROM gpu_launch_links WHERE linked
    UNION ALL
    SELECT u.trace_id, p.parent_id, u.ts_ns, u.dur_ns
    FROM up u JOIN _call_tree_parents p ON p.trace_id = u.trace_id AND p.event_id = u.node_id
    WHERE p.parent_id IS NOT NULL
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
CREATE OR REPLACE VIEW call_tree AS
WITH t AS (
    SELECT trace_id, node_id, count(*) AS kernel_count, sum(dur_ns) AS gpu_sum_ns,
           sum(greatest(ts_ns + dur_ns - greatest(ts_ns, coalesce(prev_end, ts_ns)), 0)) AS gpu_busy_ns
    FROM (SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY trace_id, node_id ORDER BY ts_ns, dur_ns
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
          FROM _call_tree_pairs)
    GROUP BY ALL
)
SELECT c.trace_id, c.event_id AS node_id, p.parent_id AS parent_node_id, c.anchor_kind AS kind, c.name,
       c.ts_ns, c.dur_ns, t.gpu_busy_ns::BIGINT AS gpu_busy_ns, t.gpu_sum_ns::BIGINT AS gpu_sum_ns,
       t.kernel_count, [c.ts_ns, c.event_id] AS sort_key
FROM t JOIN cpu_event_context c ON c.trace_id = t.trace_id AND c.event_id = t.node_id
JOIN _call_tree_parents p ON p.trace_id = c.trace_id AND p.event_id = c.event_id
UNION ALL
SELECT trace_id, event_id, launch_event_id, 'gpu', name, ts_ns, dur_ns, dur_ns, dur_ns, 1,
       [ts_ns, event_id]
FROM gpu_launch_links WHERE linked;
