-- 13_tree_rollups.sql — GPU time rolled up the call tree: per op instance, per nn.Module instance, and
-- TraceLens's launcher / ops_summary view of the same.
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

-- Helper: an integer key per trace (1, 2, ... in trace_id order). _tree_key(trace_key, event_id) packs it
-- with an event_id into one BIGINT that names an event of the dataset: the windows and groupings per
-- (trace, event) below run on that one integer instead of on (trace_id text, event_id), which DuckDB
-- sorts and hashes several times faster. Exact while event_id < 2^40 (an event_id is the event's position
-- in its file) and the dataset has fewer than 2^23 traces.
CREATE OR REPLACE VIEW _tree_trace_keys AS
SELECT trace_id, row_number() OVER (ORDER BY trace_id) AS trace_key FROM traces;

CREATE OR REPLACE MACRO _tree_key(trace_key, event_id) AS (trace_key::BIGINT << 40) | event_id;

-- _tree_busy_ns(s, e, prev_end): the part of [s, e] after prev_end (the latest end of the intervals
-- before it in start order): summed over intervals sorted by start, the length of their union (in the unit
-- of s and e: ns here, float64 µs in tl_launchers).
CREATE OR REPLACE MACRO _tree_busy_ns(s, e, prev_end) AS greatest(e - greatest(s, coalesce(prev_end, s)), 0);

-- Helper: (ancestor, GPU event) pairs up the cpu_op chain. Starts at the launch's innermost op (direct)
-- and follows op parents (cpu_event_context.op_event_id of each op) to the outermost op.
CREATE OR REPLACE VIEW _tree_op_gpu_pairs AS
WITH RECURSIVE ctx AS MATERIALIZED (
    SELECT trace_id, event_id, anchor_kind, op_event_id FROM cpu_event_context
), g AS (
    SELECT l.trace_id, l.event_id AS gpu_event_id, l.ts_ns, l.dur_ns, l.tl_linked,
           contains(lower(l.name), 'nccl') AS is_nccl, c.op_event_id
    FROM gpu_launch_links l
    JOIN ctx c ON c.trace_id = l.trace_id AND c.event_id = l.launch_event_id AND c.anchor_kind = 'launch'
    WHERE l.linked AND c.op_event_id IS NOT NULL
), up(trace_id, op_event_id, gpu_event_id, ts_ns, dur_ns, tl_linked, is_nccl, is_direct) AS (
    SELECT trace_id, op_event_id, gpu_event_id, ts_ns, dur_ns, tl_linked, is_nccl, true FROM g
    UNION ALL
    SELECT u.trace_id, c.op_event_id, u.gpu_event_id, u.ts_ns, u.dur_ns, u.tl_linked, u.is_nccl, false
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

-- op_fwd_bwd: one row per link between a forward op and the backward op autograd ran for it.
--   trace_id                    the trace
--   fwd_event_id, fwd_name      the forward cpu_op
--   bwd_event_id, bwd_name      the backward cpu_op
--   sequence_number             the forward op's 'Sequence number'
--   link_via                    'fwdbwd': a fwdbwd flow starts at the forward op and ends at the backward op
--                               (each end bound to the innermost cpu_op starting at the flow's timestamp on
--                               its thread, Kineto's binding point 'e');
--                               'sequence_number': the forward op (a cpu_op with 'Fwd thread id' 0 or none
--                               that is not itself a backward node) and the backward op
--                               `autograd::engine::evaluate_function: ...` share a sequence number (the
--                               pairing TraceLens uses); every op carrying the number is listed
CREATE OR REPLACE VIEW op_fwd_bwd AS
WITH ops AS MATERIALIZED (
    SELECT trace_id, event_id, name, pid, tid, ts_ns, dur_ns, sequence_number, fwd_thread_id
    FROM events WHERE cat = 'cpu_op'
), by_seq AS (
    SELECT f.trace_id, f.event_id AS fwd_event_id, f.name AS fwd_name, b.event_id AS bwd_event_id,
           b.name AS bwd_name, f.sequence_number, 'sequence_number' AS link_via
    FROM ops f JOIN ops b ON b.trace_id = f.trace_id AND b.sequence_number = f.sequence_number
    WHERE f.sequence_number IS NOT NULL AND coalesce(f.fwd_thread_id, 0) = 0
      AND NOT starts_with(f.name, 'autograd::engine::evaluate_function: ')
      AND starts_with(b.name, 'autograd::engine::evaluate_function: ')
), fl AS (
    SELECT trace_id, flow_id, ph, pid, tid, ts_ns FROM correlations WHERE cat = 'fwdbwd'
), fwd_end AS (
    SELECT s.trace_id, s.flow_id, o.event_id, o.name, o.sequence_number
    FROM fl s JOIN ops o ON o.trace_id = s.trace_id AND o.pid = s.pid AND o.tid = s.tid AND o.ts_ns = s.ts_ns
    WHERE s.ph = 's'
    QUALIFY row_number() OVER (PARTITION BY s.trace_id, s.flow_id ORDER BY o.dur_ns, o.event_id DESC) = 1
), bwd_end AS (
    SELECT f.trace_id, f.flow_id, o.event_id, o.name
    FROM fl f JOIN ops o ON o.trace_id = f.trace_id AND o.pid = f.pid AND o.tid = f.tid AND o.ts_ns = f.ts_ns
    WHERE f.ph = 'f'
    QUALIFY row_number() OVER (PARTITION BY f.trace_id, f.flow_id ORDER BY o.dur_ns, o.event_id DESC) = 1
)
SELECT trace_id, fwd_event_id, fwd_name, bwd_event_id, bwd_name, sequence_number, link_via FROM by_seq
UNION ALL
SELECT a.trace_id, a.event_id, a.name, b.event_id, b.name, a.sequence_number, 'fwdbwd'
FROM fwd_end a JOIN bwd_end b USING (trace_id, flow_id);

-- tl_op_category: hook for the op categories of issue 4 (sql/2*.sql replaces this view with
-- CREATE OR REPLACE VIEW): one row per TraceLens launcher instance.
--   trace_id, tl_launcher_event_id   the launcher (gpu_event_ops.tl_launcher_trace_id and
--                                    tl_launcher_event_id: the trace that holds the launcher event)
--   op_category                      its TraceLens op category ('GEMM', 'elementwise', 'other', ...)
-- Until it is replaced it has no rows, and tl_ops_summary.Categories is NULL.
CREATE OR REPLACE VIEW tl_op_category AS
SELECT NULL::VARCHAR AS trace_id, NULL::BIGINT AS tl_launcher_event_id, NULL::VARCHAR AS op_category
WHERE false;

-- tl_launchers: one row per TraceLens launcher instance (PEERS.md "Launchers and ops_summary"), in µs
-- computed the way TraceLens computes them: endpoints are float64 µs (ts_ns/1000 and that plus
-- dur_ns/1000, as a JSON parser reads the trace), so the values match TraceLens bit for bit.
--   trace_id                  the trace of the GPU events
--   tl_launcher_trace_id, tl_launcher_event_id, name   the launcher: a cpu_op, or a runtime call with no
--                             op above it; for graph replays merged with their capture, an event of the
--                             capture trace
--   direct_kernel_time_us     busy time of the non-NCCL tl_linked GPU events mapped to it
--   subtree_kernel_time_us    busy time of every tl_linked GPU event launched inside it (NCCL included)
--   direct_kernel_count       number of GPU events mapped to it
CREATE OR REPLACE VIEW tl_launchers AS
WITH RECURSIVE g AS MATERIALIZED (
    SELECT o.trace_id, k.trace_key, o.event_id, o.ts_ns, o.dur_ns, o.tl_launcher_trace_id, o.tl_launcher_event_id,
           o.tl_launcher_name, o.launch_event_id, o.capture_trace_id, o.capture_launch_event_id,
           _tree_key(lk.trace_key, o.tl_launcher_event_id) AS l_key
    FROM gpu_event_ops o JOIN _tree_trace_keys k USING (trace_id)
    LEFT JOIN _tree_trace_keys lk ON lk.trace_id = o.tl_launcher_trace_id
    WHERE o.tl_linked
), launchers AS MATERIALIZED (
    SELECT DISTINCT trace_key, l_key FROM g WHERE tl_launcher_event_id IS NOT NULL
), direct AS (
    SELECT trace_key, l_key, any_value(trace_id) AS trace_id, any_value(tl_launcher_trace_id) AS tl_launcher_trace_id,
           any_value(tl_launcher_event_id) AS tl_launcher_event_id, any_value(tl_launcher_name) AS name,
           count(*) AS n, sum(_tree_busy_ns(s, e, prev_e)) AS busy_us
    FROM (SELECT *, max(e) OVER (PARTITION BY trace_key, l_key ORDER BY s, e
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
          FROM (SELECT *, ts_ns / 1000.0 AS s, ts_ns / 1000.0 + dur_ns / 1000.0 AS e
                FROM g WHERE tl_launcher_event_id IS NOT NULL))
    GROUP BY trace_key, l_key
), ops AS MATERIALIZED (   -- cpu_ops of the capture traces (empty without graph replays merged with a capture)
    SELECT trace_id, event_id, op_event_id, ts_ns, anchor_kind FROM cpu_event_context
    WHERE trace_id IN (SELECT capture_trace_id FROM graph_capture_links)
), cap AS (   -- graph replays merged with a capture: up the capture op chain, inside the capture root
    SELECT g.trace_key, g.event_id, g.ts_ns, g.dur_ns, l.capture_trace_id, l.capture_root_ts_ns,
           o.op_event_id
    FROM g JOIN graph_capture_links l ON l.trace_id = g.trace_id AND l.event_id = g.event_id
    JOIN ops o ON o.trace_id = l.capture_trace_id AND o.event_id = l.capture_launch_event_id
), cap_up(trace_key, event_id, ts_ns, dur_ns, op_trace_id, root_ts_ns, op_event_id) AS (
    SELECT c.trace_key, c.event_id, c.ts_ns, c.dur_ns, c.capture_trace_id, c.capture_root_ts_ns, c.op_event_id
    FROM cap c JOIN ops o ON o.trace_id = c.capture_trace_id AND o.event_id = c.op_event_id
    WHERE o.ts_ns >= c.capture_root_ts_ns
    UNION ALL
    SELECT u.trace_key, u.event_id, u.ts_ns, u.dur_ns, u.op_trace_id, u.root_ts_ns, p.event_id
    FROM cap_up u JOIN ops o ON o.trace_id = u.op_trace_id AND o.event_id = u.op_event_id
    JOIN ops p ON p.trace_id = o.trace_id AND p.event_id = o.op_event_id
    WHERE p.ts_ns >= u.root_ts_ns
), sub_pairs AS (
    SELECT k.trace_key, _tree_key(k.trace_key, p.op_event_id) AS l_key, p.ts_ns, p.dur_ns
    FROM _tree_op_gpu_pairs p JOIN _tree_trace_keys k USING (trace_id) WHERE p.tl_linked
    UNION ALL
    SELECT u.trace_key, _tree_key(k.trace_key, u.op_event_id), u.ts_ns, u.dur_ns
    FROM cap_up u JOIN _tree_trace_keys k ON k.trace_id = u.op_trace_id
    UNION ALL   -- a runtime call as launcher: the GPU events it launched itself
    SELECT g.trace_key, _tree_key(coalesce(ck.trace_key, g.trace_key), coalesce(g.capture_launch_event_id, g.launch_event_id)),
           g.ts_ns, g.dur_ns
    FROM g LEFT JOIN _tree_trace_keys ck ON ck.trace_id = g.capture_trace_id
), sub AS (
    SELECT trace_key, l_key, sum(_tree_busy_ns(s, e, prev_e)) AS busy_us
    FROM (SELECT *, max(e) OVER (PARTITION BY trace_key, l_key ORDER BY s, e
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
          FROM (SELECT p.*, p.ts_ns / 1000.0 AS s, p.ts_ns / 1000.0 + p.dur_ns / 1000.0 AS e
                FROM sub_pairs p SEMI JOIN launchers l USING (trace_key, l_key)))
    GROUP BY trace_key, l_key
)
SELECT d.trace_id, d.tl_launcher_trace_id, d.tl_launcher_event_id, d.name,
       d.busy_us AS direct_kernel_time_us, coalesce(s.busy_us, d.busy_us) AS subtree_kernel_time_us,
       d.n AS direct_kernel_count
FROM direct d LEFT JOIN sub s USING (trace_key, l_key);

-- tl_ops_summary: TraceLens's ops_summary, one row per trace and launcher name; columns as in its CSV.
--   trace_id                          the trace
--   name                              launcher name (cpu_op name, or runtime call name)
--   total_direct_kernel_time_sum      Σ over instances of direct_kernel_time_us (µs)
--   total_subtree_kernel_time_sum     Σ over instances of subtree_kernel_time_us (µs)
--   total_direct_kernel_time_ms, total_subtree_kernel_time_ms   the same in ms
--   Count                             number of launcher instances
--   Categories                        the instances' op categories as TraceLens prints them ("['GEMM']"),
--                                     from tl_op_category (NULL until that view has rows)
--   Percentage (%)                    share of the trace's total direct time
--   Cumulative Percentage (%)         running total of Percentage in row order (direct time descending)
CREATE OR REPLACE VIEW tl_ops_summary AS
WITH l AS (
    SELECT l.*, c.op_category FROM tl_launchers l
    LEFT JOIN tl_op_category c ON c.trace_id = l.tl_launcher_trace_id
                              AND c.tl_launcher_event_id = l.tl_launcher_event_id
), g AS (
    SELECT trace_id, name, sum(direct_kernel_time_us) AS total_direct_kernel_time_sum,
           sum(subtree_kernel_time_us) AS total_subtree_kernel_time_sum, count(*) AS "Count",
           CASE WHEN count(op_category) > 0
                THEN '[' || string_agg(DISTINCT '''' || op_category || '''', ', ' ORDER BY '''' || op_category || '''')
                     || ']' END AS "Categories"
    FROM l GROUP BY ALL
)
SELECT trace_id, name, total_direct_kernel_time_sum, total_subtree_kernel_time_sum,
       total_direct_kernel_time_sum / 1000 AS total_direct_kernel_time_ms,
       total_subtree_kernel_time_sum / 1000 AS total_subtree_kernel_time_ms,
       "Count", "Categories",
       100 * total_direct_kernel_time_sum / sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id)
           AS "Percentage (%)",
       100 * sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id
                 ORDER BY total_direct_kernel_time_sum DESC, name ROWS UNBOUNDED PRECEDING)
           / sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id) AS "Cumulative Percentage (%)"
FROM g
ORDER BY trace_id, total_direct_kernel_time_sum DESC, name;
