-- peers/hta/critical_path — HTA's critical path of one annotation instance (HTA 0.5.0,
-- hta/analyzers/critical_path_analysis.py: CriticalPathAnalysis.critical_path_analysis, CPGraph, bound_by),
-- summed per bound_by class as HTA's critical-path breakdown. Facts credited to HTA (MIT licence); the code is ours.
--
-- HTA's graph, in short. The window is the first row whose name contains the annotation (here the first
-- ProfilerStep user annotation of the file): from its start to its end (float64 µs). Kept: the CPU rows that start in
-- the window and last > 0, and the GPU rows whose launching call starts in the window and lasts > 0. Every kept
-- cpu_op / cuda_runtime / cuda_driver row and every kept GPU row is two nodes (start, end). On each CPU thread the
-- kept rows are nested by HTA's call stack (an end pops the stack's top, whatever it is) and walked depth first:
-- consecutive nodes of the walk are joined by an edge weighted by their time difference, except that an outermost
-- call is joined to the previous outermost call's end by a zero-weight dependency edge, and the edge into the end of
-- a blocking call (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventQuery, cudaEventSynchronize, cudaMemcpy,
-- cudaMemcpyAsync) weighs 0. Each GPU row is an edge from its start to its end. On its stream, in start order, a
-- GPU row is reached from its launch (a kernel launch delay edge: launch start -> GPU start) when the launch queue
-- (HTA's, peers/hta/trace_counters) was 1 just after the launch and 0 just after the GPU start and the previous
-- row on the stream ended before the launch began; otherwise from the previous row's end (a kernel-kernel delay
-- edge). The critical path is networkx's longest path (dag_longest_path: a node takes its best predecessor, or
-- starts afresh when that is negative; an edge weighing -1 µs or less counts 0 there, though the breakdown keeps
-- its weight). bound_by: kernel-kernel delay -> gpu_kernel_kernel_overhead, launch delay ->
-- gpu_kernel_launch_overhead, dependency -> '', an edge of a CPU row -> cpu_bound, of a GPU row whose name matches
-- ^nccl.*Kernel -> gpu_communication_bound, of another GPU row -> gpu_compute_bound.
--
-- The longest path is computed without a graph library: the CPU edges of a thread form one chain, the GPU edges
-- of a stream form chains cut at each launch delay edge, and without synchronisation edges the only edges between
-- chains are the launch edges (CPU -> GPU). So the longest path to a CPU node is its chain's running sum less the
-- running minimum before it (the start afresh), and to a GPU node the best launch entry of its segment plus the
-- segment's running sum. HTA's synchronisation edges (from cuda_sync events: context, stream and event
-- synchronisation, stream waits) are not modelled: a trace with cuda_sync events is left out (no rows).
--
-- @requires peers/hta/base peers/hta/trace_counters peers/hta/kernel_sequences

-- _hta_cp_window: per trace, HTA's window: the first ProfilerStep user annotation's name (the annotation HTA is
-- given), the earliest row whose name contains it, and its start and end (float64 µs from the trace origin).
CREATE OR REPLACE VIEW _hta_cp_window AS
WITH ann AS (
    SELECT trace_id, arg_min(name, event_id) AS annotation FROM events
    WHERE cat = 'user_annotation' AND contains(name, 'ProfilerStep') GROUP BY trace_id
)
SELECT a.trace_id, a.annotation, arg_min(f.ts_us, (f.ts_us, f.event_id)) AS start_us,
       arg_min(f.end_us, (f.ts_us, f.event_id)) AS end_us
FROM ann a JOIN _hta_frame f ON f.trace_id = a.trace_id AND contains(f.name, a.annotation)
WHERE f.trace_id IN (SELECT trace_id FROM ann) AND NOT EXISTS (SELECT 1 FROM kernels k WHERE k.trace_id = a.trace_id AND k.cat_raw = 'cuda_sync')
GROUP BY a.trace_id, a.annotation;

-- _hta_cp_cpu_walk: the CPU nodes of HTA's graph, per thread in the order of its depth-first walk (seq), with
-- their time (ts_us: the row's start or end), the weight of the edge from the previous node of the walk (w, NULL
-- for a thread's first node) and whether that edge is a dependency edge.
CREATE OR REPLACE VIEW _hta_cp_cpu_walk AS
WITH w AS MATERIALIZED (SELECT * FROM _hta_cp_window), ev AS (
    SELECT f.trace_id, f.pid, f.tid, f.event_id, f.name, f.ts_us, f.end_us, f.dur_us,
           e.cat IN ('cpu_op', 'cuda_runtime', 'cuda_driver') AS is_node
    FROM _hta_frame f JOIN w USING (trace_id)
    JOIN events e ON e.trace_id = f.trace_id AND e.event_id = f.event_id
    WHERE f.trace_id IN (SELECT trace_id FROM w) AND e.trace_id IN (SELECT trace_id FROM w) AND f.stream = -1 AND NOT f.is_gpu AND f.ts_us >= w.start_us AND f.ts_us <= w.end_us AND f.dur_us > 0
), pts AS (
    -- HTA's order of the stack's events: by time; at one time ends (shortest first) before starts (longest first)
    SELECT trace_id, pid, tid, event_id, name, is_node, ts_us AS t, 1 AS is_start, -dur_us AS k1, event_id AS k2,
           ts_us AS node_ts FROM ev
    UNION ALL
    SELECT trace_id, pid, tid, event_id, name, is_node, end_us, 0, dur_us, -event_id, end_us FROM ev
), ordered AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id, pid, tid ORDER BY t, is_start, k1, k2) AS pos,
           sum(CASE WHEN is_start = 1 THEN 1 ELSE -1 END) OVER (PARTITION BY trace_id, pid, tid ORDER BY t, is_start, k1, k2
                                                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS depth_after
    FROM pts
), starts AS (
    SELECT trace_id, pid, tid, event_id, name, is_node, pos, depth_after AS lvl, node_ts FROM ordered WHERE is_start = 1
), ends AS (
    SELECT trace_id, pid, tid, pos, depth_after + 1 AS lvl FROM ordered WHERE is_start = 0
), walk AS (
    -- an end pops the stack's top: the last event started before it at the stack's level
    SELECT s.trace_id, s.pid, s.tid, s.pos, 1 AS is_start, s.event_id, s.name, s.is_node, s.node_ts FROM starts s
    UNION ALL
    SELECT e.trace_id, e.pid, e.tid, e.pos, 0, s.event_id, s.name, s.is_node, x.end_us
    FROM ends e ASOF JOIN starts s ON s.trace_id = e.trace_id AND s.pid = e.pid AND s.tid = e.tid AND s.lvl = e.lvl
                                     AND s.pos < e.pos
    JOIN ev x ON x.trace_id = s.trace_id AND x.event_id = s.event_id
), nodes AS (
    SELECT *, sum(CASE WHEN is_start = 1 THEN 1 ELSE -1 END) OVER (PARTITION BY trace_id, pid, tid ORDER BY pos
                  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - (CASE WHEN is_start = 1 THEN 1 ELSE -1 END)
               AS op_depth_before,
           lag(node_ts) OVER (PARTITION BY trace_id, pid, tid ORDER BY pos) AS prev_ts
    FROM walk WHERE is_node
)
SELECT trace_id, pid, tid, row_number() OVER (PARTITION BY trace_id, pid, tid ORDER BY pos) AS seq,
       event_id, name, is_start = 1 AS is_start, node_ts AS ts_us,
       is_start = 1 AND op_depth_before = 0 AND prev_ts IS NOT NULL AS is_dependency,
       CASE WHEN prev_ts IS NULL THEN NULL
            WHEN is_start = 1 AND op_depth_before = 0 THEN 0.0
            WHEN is_start = 0 AND name IN ('cudaDeviceSynchronize', 'cudaStreamSynchronize', 'cudaEventQuery',
                                           'cudaEventSynchronize', 'cudaMemcpy', 'cudaMemcpyAsync') THEN 0.0
            ELSE node_ts - prev_ts END AS w
FROM nodes;

-- _hta_cp_cpu_dist: each CPU node with the longest path ending there (dist) and where that path starts on its chain
-- (start_seq): dist is the chain's running sum S (edge weights, an edge of -1 µs or less counted 0) less its
-- running minimum, the path starting at the first node where that minimum is reached.
CREATE OR REPLACE VIEW _hta_cp_cpu_dist AS
WITH s AS (
    SELECT *, sum(CASE WHEN w IS NULL OR w <= -1 THEN 0.0 ELSE w END)
                  OVER (PARTITION BY trace_id, pid, tid ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS S
    FROM _hta_cp_cpu_walk
), m AS (
    SELECT *, min(S) OVER (PARTITION BY trace_id, pid, tid ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
              AS S_min
    FROM s
)
SELECT *, S - S_min AS dist,
       max(CASE WHEN seq = 1 OR S < prev_min THEN seq END)
           OVER (PARTITION BY trace_id, pid, tid ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS start_seq
FROM (SELECT *, lag(S_min) OVER (PARTITION BY trace_id, pid, tid ORDER BY seq) AS prev_min FROM m);

-- _hta_cp_gpu: the GPU rows of HTA's graph per stream in start order (pos), with their launching call, the edge
-- into their start (kind 'launch', 'kernel_kernel' or NULL for none), its weight (w_in), the weight of their own
-- edge (w_op = end - start), the segment of the stream's chain they belong to (seg: a new one at each row not
-- reached from the previous row) and the longest path to their start and end (dist_start, dist_end).
CREATE OR REPLACE VIEW _hta_cp_gpu AS
WITH w AS MATERIALIZED (SELECT * FROM _hta_cp_window), q AS (
    SELECT event_id, trace_id, side,
           sum(delta) OVER (PARTITION BY trace_id, stream ORDER BY ts_us, side, event_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::BIGINT AS v
    FROM _hta_queue_steps WHERE trace_id IN (SELECT trace_id FROM w)
), ql AS (
    SELECT trace_id, event_id, max(v) FILTER (WHERE side = 0) AS ql_runtime, max(v) FILTER (WHERE side = 1) AS ql
    FROM q GROUP BY trace_id, event_id
), cpu AS (
    SELECT trace_id, correlation, arg_min(event_id, event_id) AS rt_event_id, arg_min(ts_us, event_id) AS rt_ts_us,
           arg_min(dur_us, event_id) AS rt_dur_us
    FROM _hta_frame WHERE NOT is_gpu AND stream = -1 AND correlation >= 0 AND trace_id IN (SELECT trace_id FROM w)
    GROUP BY trace_id, correlation
), g AS (
    SELECT f.trace_id, f.event_id, f.name, f.stream, f.ts_us, f.end_us, c.rt_event_id, c.rt_ts_us,
           ql.ql_runtime, ql.ql
    FROM _hta_frame f JOIN w USING (trace_id)
    JOIN cpu c ON c.trace_id = f.trace_id AND c.correlation = f.correlation
    LEFT JOIN ql ON ql.trace_id = f.trace_id AND ql.event_id = f.event_id
    WHERE f.trace_id IN (SELECT trace_id FROM w) AND f.is_gpu AND f.stream <> -1 AND c.rt_ts_us >= w.start_us AND c.rt_ts_us <= w.end_us AND c.rt_dur_us > 0
), o AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id, stream ORDER BY ts_us, event_id) AS pos,
           lag(end_us) OVER (PARTITION BY trace_id, stream ORDER BY ts_us, event_id) AS prev_end_us
    FROM g
), k AS (
    SELECT *, CASE WHEN ql_runtime = 1 AND ql = 0 AND (prev_end_us IS NULL OR prev_end_us < rt_ts_us) THEN 'launch'
                   WHEN prev_end_us IS NOT NULL THEN 'kernel_kernel' END AS kind,
           end_us - ts_us AS w_op
    FROM o
), s AS (
    SELECT *, CASE kind WHEN 'launch' THEN ts_us - rt_ts_us WHEN 'kernel_kernel' THEN ts_us - prev_end_us END AS w_in,
           sum(CASE WHEN kind = 'kernel_kernel' THEN 0 ELSE 1 END)
               OVER (PARTITION BY trace_id, stream ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS seg
    FROM k
), e AS (
    -- the entry of each segment: the longest path to its launch's start plus the launch edge, or 0
    SELECT s.trace_id, s.stream, s.seg,
           CASE WHEN s.kind = 'launch' THEN d.dist + s.w_in ELSE 0.0 END AS entry
    FROM s LEFT JOIN _hta_cp_cpu_dist d ON d.trace_id = s.trace_id AND d.event_id = s.rt_event_id AND d.is_start
    WHERE s.kind IS DISTINCT FROM 'kernel_kernel'
), r AS (
    SELECT s.*, e.entry,
           sum(CASE WHEN kind = 'kernel_kernel' THEN w_in ELSE 0.0 END + w_op)
               OVER (PARTITION BY s.trace_id, s.stream, s.seg ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
               AS run_end
    FROM s JOIN e USING (trace_id, stream, seg)
)
SELECT *, entry + run_end - w_op AS dist_start, entry + run_end AS dist_end FROM r;

-- _hta_cp_edges: the edges of HTA's critical path: its end is the node with the longest path (the latest such
-- node on ties); walking back, a GPU end goes down its segment to the segment's entry, over the launch edge to
-- the launch's start, then down that CPU chain to where the path starts afresh.
CREATE OR REPLACE VIEW _hta_cp_edges AS
WITH cd AS MATERIALIZED (SELECT * FROM _hta_cp_cpu_dist), gd AS MATERIALIZED (SELECT * FROM _hta_cp_gpu),
cands AS (
    SELECT trace_id, 'cpu' AS side, pid, tid, NULL::BIGINT AS stream, NULL::BIGINT AS seg, seq AS pos, dist, ts_us
    FROM cd
    UNION ALL
    SELECT trace_id, 'gpu', NULL, NULL, stream, seg, pos, dist_end, end_us FROM gd
), best AS (
    SELECT trace_id, arg_max(side, (dist, -ts_us)) AS side, arg_max(pid, (dist, -ts_us)) AS pid,
           arg_max(tid, (dist, -ts_us)) AS tid, arg_max(stream, (dist, -ts_us)) AS stream,
           arg_max(seg, (dist, -ts_us)) AS seg, arg_max(pos, (dist, -ts_us)) AS pos
    FROM cands GROUP BY trace_id
), gpu_path AS (
    SELECT g.* FROM gd g JOIN best b ON b.side = 'gpu' AND g.trace_id = b.trace_id AND g.stream = b.stream
                                          AND g.seg = b.seg AND g.pos <= b.pos
), cpu_end AS (
    -- the CPU node the path leaves its chain at: the best node, or the launch of the GPU segment's entry
    SELECT b.trace_id, b.pid, b.tid, b.pos AS seq FROM best b WHERE b.side = 'cpu'
    UNION ALL
    SELECT d.trace_id, d.pid, d.tid, d.seq
    FROM gpu_path g JOIN cd d ON d.trace_id = g.trace_id AND d.event_id = g.rt_event_id AND d.is_start
    WHERE g.kind = 'launch'
), cpu_path AS (
    SELECT d.* FROM cpu_end c JOIN cd x USING (trace_id, pid, tid, seq)
    JOIN cd d ON d.trace_id = c.trace_id AND d.pid = c.pid AND d.tid = c.tid
                           AND d.seq > x.start_seq AND d.seq <= c.seq
)
SELECT trace_id, 'cpu' AS side, event_id, name, ts_us,
       CASE WHEN is_dependency THEN 'critical_path_dependency' ELSE 'critical_path_operator' END AS type,
       w AS duration, CASE WHEN is_dependency THEN '' ELSE 'cpu_bound' END AS bound_by
FROM cpu_path
UNION ALL
SELECT trace_id, 'gpu', event_id, name, ts_us, 'critical_path_operator', w_op,
       CASE WHEN regexp_matches(name, '^nccl.*Kernel') THEN 'gpu_communication_bound' ELSE 'gpu_compute_bound' END
FROM gpu_path
UNION ALL
SELECT trace_id, 'gpu', event_id, name, ts_us,
       CASE kind WHEN 'launch' THEN 'critical_path_kernel_launch_delay' ELSE 'critical_path_kernel_kernel_delay' END,
       w_in, CASE kind WHEN 'launch' THEN 'gpu_kernel_launch_overhead' ELSE 'gpu_kernel_kernel_overhead' END
FROM gpu_path WHERE kind IS NOT NULL;

-- hta_critical_path_summary: HTA's critical_path_summary.csv: the critical path of the first ProfilerStep (HTA's
-- critical_path_analysis(rank, annotation=<its name>, instance_id=0)), its edges' weights summed per bound_by.
--   bound_by   cpu_bound, gpu_compute_bound, gpu_communication_bound, gpu_kernel_kernel_overhead,
--              gpu_kernel_launch_overhead, or '' (dependency edges, 0)
--   duration   µs on the critical path (float64, as HTA)
-- @output report-hta 9 critical_path_summary IF ROWS ORDER BY trace_id, bound_by
CREATE OR REPLACE VIEW hta_critical_path_summary AS
SELECT trace_id, bound_by, list_sum(list(duration ORDER BY duration, ts_us, event_id)) AS duration
FROM _hta_cp_edges GROUP BY trace_id, bound_by;
