-- tree/rollups — GPU time rolled up the call tree: per op instance and per nn.Module instance.
--
-- Definitions (native):
--   direct GPU events of a cpu_op   linked GPU events whose launch has this op as innermost enclosing op
--   subtree GPU events of a cpu_op  linked GPU events whose launch lies anywhere inside the op
--   (same for nn.Module frames, with the innermost enclosing module)
--   *_sum_ns                        Σ dur_ns of those GPU events (overlaps counted twice)
--   *_busy_ns                       length of the union of their [ts, ts + dur] intervals, all streams
--                                   and devices of the trace pooled (overlaps counted once)
-- The union is computed with a running max of interval ends over the events sorted by start: each event
-- adds max(0, end - max(start, max end of the earlier ones)).
--
-- @requires lib/keys lib/intervals tree/context tree/links

-- Helper: (ancestor, GPU event) pairs up the cpu_op chain. Starts at the launch's innermost op (direct)
-- and follows op parents (cpu_event_context.op_event_id of each op) to the outermost op.
-- @materialize tree
CREATE OR REPLACE VIEW _tree_op_gpu_pairs AS
WITH RECURSIVE ctx AS MATERIALIZED (
    SELECT trace_id, event_id, anchor_kind, op_event_id FROM cpu_event_context
), g AS (
    SELECT l.trace_id, l.event_id AS gpu_event_id, l.ts_ns, l.dur_ns, c.op_event_id
    FROM gpu_launch_links l
    JOIN ctx c ON c.trace_id = l.trace_id AND c.event_id = l.launch_event_id AND c.anchor_kind = 'launch'
    WHERE l.linked AND c.op_event_id IS NOT NULL
), up(trace_id, op_event_id, gpu_event_id, ts_ns, dur_ns, is_direct) AS (
    SELECT trace_id, op_event_id, gpu_event_id, ts_ns, dur_ns, true FROM g
    UNION ALL
    SELECT u.trace_id, c.op_event_id, u.gpu_event_id, u.ts_ns, u.dur_ns, false
    FROM up u JOIN ctx c ON c.trace_id = u.trace_id AND c.event_id = u.op_event_id AND c.anchor_kind = 'op'
    WHERE c.op_event_id IS NOT NULL
)
SELECT * FROM up;

-- op_gpu_time: one row per cpu_op instance (every cpu_op event), with the GPU time it launched.
--   trace_id, event_id, name, ts_ns, dur_ns   the op
--   parent_op_event_id      innermost enclosing cpu_op (NULL for a top-level op)
--   top_op_event_id         outermost enclosing cpu_op (itself for a top-level op)
--   op_depth                number of enclosing cpu_ops
--   module_event_id, module_path   innermost enclosing nn.Module frame and its module path
--   step                    enclosing `ProfilerStep#N` annotation name
--   direct_kernel_count, direct_gpu_sum_ns, direct_gpu_busy_ns      over its direct GPU events
--   subtree_kernel_count, subtree_gpu_sum_ns, subtree_gpu_busy_ns   over its subtree GPU events
--   ("kernel" counts every GPU event: kernels, memcpy, memset, sync rows)
--   sequence_number         args 'Sequence number' (autograd pairing of forward and backward ops)
-- @materialize tree
CREATE OR REPLACE VIEW op_gpu_time AS
WITH p AS MATERIALIZED (
    SELECT _tree_key(k.trace_key, p.op_event_id) AS op_key, p.ts_ns, p.dur_ns, p.is_direct
    FROM _tree_op_gpu_pairs p JOIN _tree_trace_keys k USING (trace_id)
), sub AS (
    SELECT op_key, count(*) AS n, sum(dur_ns) AS sum_ns, sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_end)) AS busy_ns
    FROM (SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY op_key ORDER BY ts_ns, dur_ns
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
          FROM p)
    GROUP BY op_key
), dir AS (
    SELECT op_key, count(*) AS n, sum(dur_ns) AS sum_ns, sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_end)) AS busy_ns
    FROM (SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY op_key ORDER BY ts_ns, dur_ns
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
          FROM p WHERE is_direct)
    GROUP BY op_key
)
SELECT c.trace_id, c.event_id, c.name, c.ts_ns, c.dur_ns, c.op_event_id AS parent_op_event_id,
       c.top_op_event_id, c.op_depth, c.module_event_id, c.module_path, c.step,
       coalesce(dir.n, 0) AS direct_kernel_count, coalesce(dir.sum_ns, 0)::BIGINT AS direct_gpu_sum_ns,
       coalesce(dir.busy_ns, 0)::BIGINT AS direct_gpu_busy_ns,
       coalesce(sub.n, 0) AS subtree_kernel_count, coalesce(sub.sum_ns, 0)::BIGINT AS subtree_gpu_sum_ns,
       coalesce(sub.busy_ns, 0)::BIGINT AS subtree_gpu_busy_ns,
       e.sequence_number
FROM cpu_event_context c
JOIN _tree_trace_keys k USING (trace_id)
LEFT JOIN (SELECT trace_id, event_id, sequence_number FROM events
           WHERE cat = 'cpu_op' AND sequence_number IS NOT NULL) e ON e.trace_id = c.trace_id AND e.event_id = c.event_id
LEFT JOIN dir ON dir.op_key = _tree_key(k.trace_key, c.event_id)
LEFT JOIN sub ON sub.op_key = _tree_key(k.trace_key, c.event_id)
WHERE c.anchor_kind = 'op';

-- module_gpu_time: one row per nn.Module instance call (`nn.Module: X_N` frame), with the GPU time of
-- the work launched inside it.
--   trace_id, event_id, module_name, module_class, module_path, module_level, parent_module_event_id,
--   step, ts_ns, dur_ns       as in module_instances
--   direct_kernel_count, direct_gpu_sum_ns, direct_gpu_busy_ns       GPU events whose launch has this
--                             frame as innermost enclosing module
--   subtree_kernel_count, subtree_gpu_sum_ns, subtree_gpu_busy_ns    GPU events launched anywhere inside
-- @materialize tree
CREATE OR REPLACE VIEW module_gpu_time AS
WITH RECURSIVE ctx AS MATERIALIZED (
    SELECT trace_id, event_id, anchor_kind, module_event_id FROM cpu_event_context
    WHERE anchor_kind IN ('launch', 'module')
), g AS (
    SELECT l.trace_id, l.event_id AS gpu_event_id, l.ts_ns, l.dur_ns, c.module_event_id
    FROM gpu_launch_links l
    JOIN ctx c ON c.trace_id = l.trace_id AND c.event_id = l.launch_event_id AND c.anchor_kind = 'launch'
    WHERE l.linked AND c.module_event_id IS NOT NULL
), up(trace_id, module_event_id, gpu_event_id, ts_ns, dur_ns, is_direct) AS (
    SELECT trace_id, module_event_id, gpu_event_id, ts_ns, dur_ns, true FROM g
    UNION ALL
    SELECT u.trace_id, c.module_event_id, u.gpu_event_id, u.ts_ns, u.dur_ns, false
    FROM up u JOIN ctx c ON c.trace_id = u.trace_id AND c.event_id = u.module_event_id
                        AND c.anchor_kind = 'module'
    WHERE c.module_event_id IS NOT NULL
), p AS MATERIALIZED (
    SELECT _tree_key(k.trace_key, u.module_event_id) AS module_key, u.ts_ns, u.dur_ns, u.is_direct
    FROM up u JOIN _tree_trace_keys k USING (trace_id)
), w AS (
    SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY module_key ORDER BY ts_ns, dur_ns
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end,
              max(ts_ns + dur_ns) FILTER (WHERE is_direct)
                  OVER (PARTITION BY module_key ORDER BY ts_ns, dur_ns
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_direct_end
    FROM p
), agg AS (
    SELECT module_key,
           count(*) AS sub_n, sum(dur_ns) AS sub_sum, sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_end)) AS sub_busy,
           count(*) FILTER (WHERE is_direct) AS dir_n, sum(dur_ns) FILTER (WHERE is_direct) AS dir_sum,
           sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_direct_end)) FILTER (WHERE is_direct) AS dir_busy
    FROM w GROUP BY module_key
)
SELECT m.trace_id, m.event_id, m.module_name, m.module_class, m.module_path, m.module_level,
       m.parent_module_event_id, m.step, m.ts_ns, m.dur_ns,
       coalesce(a.dir_n, 0) AS direct_kernel_count, coalesce(a.dir_sum, 0)::BIGINT AS direct_gpu_sum_ns,
       coalesce(a.dir_busy, 0)::BIGINT AS direct_gpu_busy_ns,
       coalesce(a.sub_n, 0) AS subtree_kernel_count, coalesce(a.sub_sum, 0)::BIGINT AS subtree_gpu_sum_ns,
       coalesce(a.sub_busy, 0)::BIGINT AS subtree_gpu_busy_ns
FROM module_instances m
JOIN _tree_trace_keys k USING (trace_id)
LEFT JOIN agg a ON a.module_key = _tree_key(k.trace_key, m.event_id);
