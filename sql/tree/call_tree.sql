-- tree/call_tree — the printable call tree: annotations, nn.Module calls, ops, runtime launches and
-- GPU events, each with the GPU time under it. `tracesql tree` and `ds.tree()` read this view.
--
-- A node's parent is its closest enclosing node on the CPU thread (the latest-starting of its innermost
-- enclosing cpu_op, nn.Module frame and user_annotation); a GPU event's parent is its launch. Python
-- frames that are not nn.Module calls and runtime calls that launched nothing are not nodes. Only nodes
-- with at least one linked GPU event below them are kept. GPU time of a node = over the GPU events below
-- it: busy (union of intervals, all streams pooled), Σ durations and count.
--
-- A graph replay's GPU events placed on a twin's op (tree/graph_twins, graph_kernel_tags) hang from a node of
-- kind 'twin op' under their graph launch: one per (graph launch, twin op), named by the op, so that the tree
-- of a replay shows its ops as the eager tree does.
--
-- A JAX GPU event hangs from a node of kind 'hlo op' (one per call of an HLO op, tree/hlo_ops), and that node from
-- the execution of its module (the GpuExecutable::ExecuteThunks span, kind 'hlo module', named by the module) with
-- the CPU context above it: module execution -> HLO op -> GPU event; the launch calls are not nodes.
--
-- @requires lib/keys lib/intervals tree/context tree/links tree/graph_twins tree/hlo_ops

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
    -- (a GPU event of an HLO op starts at the execution of its module, above its 'hlo op' node; none when the
    -- execution is not known)
    SELECT _tree_key(k.trace_key, CASE WHEN h.event_id IS NULL THEN l.launch_event_id ELSE h.exec_event_id END),
           l.ts_ns, l.dur_ns
    FROM gpu_launch_links l JOIN _tree_trace_keys k USING (trace_id)
    LEFT JOIN gpu_event_hlo_ops h ON h.trace_id = l.trace_id AND h.event_id = l.event_id
    WHERE l.linked AND (h.event_id IS NULL OR h.exec_event_id IS NOT NULL)
    UNION ALL
    SELECT p.parent_key, u.ts_ns, u.dur_ns
    FROM up u JOIN _call_tree_parents p ON p.node_key = u.node_key
    WHERE p.parent_key IS NOT NULL
)
SELECT * FROM up;

-- call_tree: one row per node of the call tree that has GPU work below it.
--   trace_id                    the trace
--   node_id                     event_id of the node (CPU event, or GPU event for kind 'gpu'); a negative
--                               number for a 'twin op' node (-1, -2, ...) and an 'hlo op' node (-2^40 - the
--                               first launch call of the op's call)
--   parent_node_id              event_id of the parent node (NULL for a root)
--   kind                        'annotation', 'module', 'op', 'launch', 'twin op' (a twin's op replayed by
--                               the graph launch above it), 'hlo module' (an execution of an XLA module),
--                               'hlo op' (a call of an HLO op) or 'gpu'
--   name                        event name (`nn.Module: X_N`, `aten::mm`, `cudaLaunchKernel`, kernel name; the
--                               module for 'hlo module', the instruction for 'hlo op')
--   ts_ns, dur_ns               the node's own start and duration (CPU clock for CPU nodes, GPU for 'gpu',
--                               'twin op' and 'hlo op': first start to last end of its GPU events)
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
), tw AS (      -- a replayed GPU event placed on a twin's op, with its 'twin op' node (a negative id)
    SELECT g.trace_id, g.event_id, g.graph_launch_event_id, g.op_name, l.ts_ns, l.dur_ns,
           -dense_rank() OVER (PARTITION BY g.trace_id
                               ORDER BY g.graph_launch_event_id, g.twin_trace_id, g.op_event_id) AS twin_node_id
    FROM graph_kernel_tags g JOIN gpu_launch_links l USING (trace_id, event_id)
    WHERE g.op_event_id IS NOT NULL AND l.linked
), twn AS (
    SELECT trace_id, twin_node_id, any_value(graph_launch_event_id) AS graph_launch_event_id,
           any_value(op_name) AS op_name, min(ts_ns) AS ts_ns, max(ts_ns + dur_ns) - min(ts_ns) AS dur_ns,
           count(*) AS kernel_count, sum(dur_ns) AS gpu_sum_ns,
           sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_end)) AS gpu_busy_ns
    FROM (SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY trace_id, twin_node_id ORDER BY ts_ns, dur_ns
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
          FROM tw)
    GROUP BY trace_id, twin_node_id
), hl AS (      -- a GPU event of an HLO op, with its 'hlo op' node
    SELECT h.trace_id, h.event_id, h.exec_event_id, h.hlo_op, l.ts_ns, l.dur_ns,
           -1099511627776 - h.instance_event_id AS hlo_node_id
    FROM gpu_event_hlo_ops h JOIN gpu_launch_links l USING (trace_id, event_id) WHERE l.linked
), hln AS (
    SELECT trace_id, hlo_node_id, any_value(exec_event_id) AS exec_event_id, any_value(hlo_op) AS hlo_op,
           min(ts_ns) AS ts_ns, max(ts_ns + dur_ns) - min(ts_ns) AS dur_ns, count(*) AS kernel_count,
           sum(dur_ns) AS gpu_sum_ns, sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_end)) AS gpu_busy_ns
    FROM (SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY trace_id, hlo_node_id ORDER BY ts_ns, dur_ns
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
          FROM hl)
    GROUP BY trace_id, hlo_node_id
)
SELECT c.trace_id, c.event_id AS node_id, p.parent_id AS parent_node_id,
       CASE WHEN x.event_id IS NULL THEN c.anchor_kind ELSE 'hlo module' END AS kind,
       coalesce(x.hlo_module, c.name) AS name,
       c.ts_ns, c.dur_ns, t.gpu_busy_ns::BIGINT AS gpu_busy_ns, t.gpu_sum_ns::BIGINT AS gpu_sum_ns,
       t.kernel_count, [c.ts_ns, c.event_id] AS sort_key
FROM t JOIN _call_tree_parents p USING (node_key)
JOIN cpu_event_context c ON c.trace_id = p.trace_id AND c.event_id = p.event_id
LEFT JOIN _hlo_executions x ON x.trace_id = c.trace_id AND x.event_id = c.event_id
UNION ALL
SELECT trace_id, twin_node_id, graph_launch_event_id, 'twin op', op_name, ts_ns, dur_ns, gpu_busy_ns::BIGINT,
       gpu_sum_ns::BIGINT, kernel_count, [ts_ns, twin_node_id]
FROM twn
UNION ALL
SELECT trace_id, hlo_node_id, exec_event_id, 'hlo op', hlo_op, ts_ns, dur_ns, gpu_busy_ns::BIGINT,
       gpu_sum_ns::BIGINT, kernel_count, [ts_ns, hlo_node_id]
FROM hln
UNION ALL
SELECT l.trace_id, l.event_id, coalesce(tw.twin_node_id, hl.hlo_node_id, l.launch_event_id), 'gpu', l.name,
       l.ts_ns, l.dur_ns, l.dur_ns, l.dur_ns, 1, [l.ts_ns, l.event_id]
FROM gpu_launch_links l LEFT JOIN tw USING (trace_id, event_id) LEFT JOIN hl USING (trace_id, event_id)
WHERE l.linked;

-- call_tree_from(trace_sel, op_sel, module_sel, max_level): the call tree as `tracesql tree` prints it, one row
-- per node in print order (depth first, siblings by start). The starting nodes (level 0) are every instance of
-- the op op_sel (exact name or LIKE pattern; 'twin op' nodes included), else every call of the nn.Module
-- module_sel (`nn.Module: X_N`, `X_N`, a LIKE pattern on it, or the class name X), else the roots; max_level:
-- deepest level kept (NULL: all); trace_sel: one trace_id (NULL: all). Without op_sel and module_sel each trace
-- also gets one row for its GPU events without a launch (kind 'unlinked', name '[no launch]').
--   trace_id, level (0 for the starting nodes), kind, name   as in call_tree
--   gpu_busy_us                 union of the intervals of the GPU events below the node, µs
--   gpu_sum_us                  Σ durations of those events, µs;  kernel_count  their number
--   node_id, parent_node_id, ts_ns, dur_ns   as in call_tree (node_id NULL on the 'unlinked' row)
--   path                        the sort_key of every node from the starting node down: the print order
CREATE OR REPLACE MACRO call_tree_from(trace_sel, op_sel, module_sel, max_level) AS TABLE
WITH RECURSIVE ct AS MATERIALIZED (
    SELECT * FROM call_tree WHERE trace_sel IS NULL OR trace_id = trace_sel
), roots AS (
    SELECT * FROM ct
    WHERE CASE WHEN op_sel IS NOT NULL THEN kind IN ('op', 'twin op', 'hlo op') AND (name = op_sel OR name LIKE op_sel)
               WHEN module_sel IS NOT NULL THEN kind = 'module'
                    AND (name = module_sel OR substr(name, 12) = module_sel OR substr(name, 12) LIKE module_sel
                         OR regexp_replace(substr(name, 12), '_[0-9]+$', '') = module_sel)
               ELSE parent_node_id IS NULL END
), walk(trace_id, node_id, level, path) AS (
    SELECT trace_id, node_id, 0, [sort_key] FROM roots
    UNION ALL
    SELECT c.trace_id, c.node_id, w.level + 1, list_append(w.path, c.sort_key)
    FROM walk w JOIN ct c ON c.trace_id = w.trace_id AND c.parent_node_id = w.node_id
    WHERE max_level IS NULL OR w.level < max_level
), nodes AS (
    SELECT w.trace_id, w.level, c.kind, c.name, c.gpu_busy_ns / 1000.0 AS gpu_busy_us,
           c.gpu_sum_ns / 1000.0 AS gpu_sum_us, c.kernel_count, c.node_id, c.parent_node_id, c.ts_ns, c.dur_ns,
           w.path
    FROM walk w JOIN ct c USING (trace_id, node_id)
), unlinked AS (   -- GPU events without a launch: one summary row per trace (whole-tree view only)
    SELECT trace_id, 0 AS level, 'unlinked' AS kind, '[no launch]' AS name,
           sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_end)) / 1000.0 AS gpu_busy_us,
           sum(dur_ns) / 1000.0 AS gpu_sum_us, count(*) AS kernel_count, NULL::BIGINT AS node_id,
           NULL::BIGINT AS parent_node_id, min(ts_ns) AS ts_ns, NULL::BIGINT AS dur_ns,
           [[9223372036854775807, 0]] AS path
    FROM (SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY trace_id ORDER BY ts_ns, dur_ns
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
          FROM gpu_launch_links WHERE NOT linked AND (trace_sel IS NULL OR trace_id = trace_sel))
    WHERE op_sel IS NULL AND module_sel IS NULL
    GROUP BY trace_id
)
SELECT trace_id, level, kind, name, gpu_busy_us, gpu_sum_us, kernel_count, node_id, parent_node_id,
       ts_ns, dur_ns, path
FROM (SELECT * FROM nodes UNION ALL SELECT * FROM unlinked)
ORDER BY trace_id, path;

-- call_tree_merged_from(trace_sel, op_sel, module_sel, max_level): call_tree_from with the sibling nodes of the
-- same kind and name merged into one, level by level: the starting nodes by (kind, name), then under each merged
-- node its children by (kind, name), and so on. A trailing `#N` of a name is read as `#*`, so that the 279
-- `ProfilerStep#N` of a trace merge into one `ProfilerStep#*` node. One row per merged node in print order
-- (depth first, siblings by the start of their first instance):
--   trace_id, level, kind, name (with `#*` for a trailing `#N`)
--   n_nodes                     instances merged (calls, launches, GPU events)
--   gpu_busy_us                 Σ over the instances of each one's busy GPU time (call_tree_from), µs: instances
--                               whose GPU work overlaps count it once each
--   gpu_sum_us, kernel_count    Σ over the instances, µs and GPU events
--   ts_ns                       start of the first instance;  dur_ns  Σ of the instances' durations
CREATE OR REPLACE MACRO call_tree_merged_from(trace_sel, op_sel, module_sel, max_level) AS TABLE
WITH RECURSIVE n AS MATERIALIZED (
    SELECT *, regexp_replace(name, '#[0-9]+$', '#*') AS merged_name
    FROM call_tree_from(trace_sel, op_sel, module_sel, max_level)
), keyed(trace_id, node_id, level, key) AS (   -- each node's merge key: kind and merged name from its start
    SELECT trace_id, node_id, level, [kind || ' ' || merged_name] FROM n WHERE level = 0
    UNION ALL
    SELECT c.trace_id, c.node_id, c.level, list_append(k.key, c.kind || ' ' || c.merged_name)
    FROM keyed k JOIN n c ON c.trace_id = k.trace_id AND c.parent_node_id = k.node_id AND c.level = k.level + 1
), g AS (
    SELECT n.trace_id, n.level, k.key, any_value(n.kind) AS kind, any_value(n.merged_name) AS name,
           count(*) AS n_nodes, sum(n.gpu_busy_us) AS gpu_busy_us, sum(n.gpu_sum_us) AS gpu_sum_us,
           sum(n.kernel_count)::BIGINT AS kernel_count, min(n.ts_ns) AS ts_ns, sum(n.dur_ns)::BIGINT AS dur_ns,
           min(n.path[-1]) AS first_key
    FROM n LEFT JOIN keyed k ON k.trace_id = n.trace_id AND k.node_id IS NOT DISTINCT FROM n.node_id
        AND k.level = n.level
    GROUP BY n.trace_id, n.level, k.key
), ordered(trace_id, key, opath) AS (   -- print order: the first instances' starts from the top down
    SELECT trace_id, key, [first_key] FROM g WHERE level = 0
    UNION ALL
    SELECT c.trace_id, c.key, list_append(o.opath, c.first_key)
    FROM ordered o JOIN g c ON c.trace_id = o.trace_id AND c.level = len(o.key)
        AND c.key[1:len(o.key)] = o.key
)
SELECT g.trace_id, g.level, g.kind, g.name, g.n_nodes, g.gpu_busy_us, g.gpu_sum_us, g.kernel_count, g.ts_ns,
       g.dur_ns
FROM g JOIN ordered o ON o.trace_id = g.trace_id AND o.key IS NOT DISTINCT FROM g.key
ORDER BY g.trace_id, o.opath;
