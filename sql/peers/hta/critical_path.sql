-- peers/hta/critical_path — HTA's critical path of one annotation instance (HTA 0.5.0,
-- hta/analyzers/critical_path_analysis.py: CriticalPathAnalysis.critical_path_analysis, CPGraph, bound_by),
-- summed per bound_by class as HTA's critical-path breakdown. Facts credited to HTA (MIT licence); the code is ours.
--
-- HTA's graph, in short. The window is the instance_id-th row, in file order, whose name contains the annotation
-- (for the report: the first ProfilerStep user annotation of the file, instance 0; '' is the whole trace): from
-- its start to its end (float64 µs). Kept: the CPU rows that start in the window and last > 0, and the GPU rows
-- whose launching call starts in the window and lasts > 0. Every kept cpu_op / cuda_runtime / cuda_driver row and
-- every kept GPU row is two nodes (start, end). On each CPU thread the kept rows are nested by HTA's call stack (an
-- end pops the stack's top, whatever it is) and walked depth first: consecutive nodes of the walk are joined by an
-- edge weighted by their time difference, except that an outermost call is joined to the previous outermost call's
-- end by a zero-weight dependency edge, and the edge into the end of a blocking call (cudaDeviceSynchronize,
-- cudaStreamSynchronize, cudaEventQuery, cudaEventSynchronize, cudaMemcpy, cudaMemcpyAsync) weighs 0. Each GPU row
-- is an edge from its start to its end.
--
-- HTA then visits the GPU rows at their start and the cuda_sync rows at their end, in time order (at one time, here,
-- in file order: HTA's sort is not stable; and in whole µs, truncated, when a sync row waits on an event record of
-- the trace, as HTA's join with the records turns every time of its frame into an integer). A stream wait ('Stream
-- Wait Event', on the waiting stream) makes the first launch after its cudaStreamWaitEvent, from the same thread
-- onto that stream, wait for the GPU row launched by the last launch onto the recorded stream that started no later
-- than the cudaEventRecord it names (args.wait_on_cuda_event_record_corr_id, wait_on_stream): a zero-weight
-- synchronisation edge from that row's end to the waiting row's start, when both are in the graph and the wait is
-- visited first. On its stream, a GPU row is reached from its launch (a kernel launch delay edge: launch start ->
-- GPU start) when the launch queue (HTA's, peers/hta/trace_counters) was 1 just after the launch and 0 just after
-- the GPU start and both the previous row on the stream and the row it waits for ended before the launch began;
-- else from the previous row's end (a kernel-kernel delay edge) when the row it waits for ended before that one;
-- else by its wait only, or by nothing. A context sync ('Context Sync') joins the last row visited on every stream, a
-- stream sync ('Stream Sync') the last one on its stream, an event sync ('Event Sync') the row its event record
-- waits for, to the end of the CPU call that waits (cudaDeviceSynchronize, cudaStreamSynchronize,
-- cudaEventSynchronize or cudaEventQuery) by zero-weight synchronisation edges. The critical path is networkx's
-- longest path (dag_longest_path: a node takes the first of its best predecessors in the order their edges were
-- added (a CPU call's walk before its synchronisations; a GPU row's wait before its launch or the previous row), or
-- starts afresh when that is negative; an edge weighing -1 µs or less counts 0 there, though the breakdown keeps
-- its weight). bound_by: kernel-kernel delay -> gpu_kernel_kernel_overhead, launch delay ->
-- gpu_kernel_launch_overhead, dependency and synchronisation -> '', an edge of a CPU row -> cpu_bound, of a GPU row
-- whose name matches ^nccl.*Kernel -> gpu_communication_bound, of another GPU row -> gpu_compute_bound.
--
-- The longest path is computed without a graph library. The CPU edges of a thread form one chain, the GPU edges of
-- a stream form chains cut at each row not reached from the previous one; the other edges join chains: launches
-- (CPU -> GPU), stream waits (GPU -> GPU) and synchronisations (GPU -> CPU). On a chain, the longest path to a node
-- is S + the running maximum of (B - S), S being the chain's running sum of weights and B what enters a node from
-- outside the chain (0 for a start afresh, or its best edge from another chain). Synchronisations make the values
-- a fixpoint, computed in rounds (a recursive CTE): each round computes the CPU chains, then the GPU chains (their
-- launches from the new CPU values), and a trace takes another round while a GPU end that a synchronisation leaves
-- from changed: one round without synchronisations, about one more for each synchronisation the path crosses.
-- The path is then walked back from its end, chain by chain, over the edges each node took.
--
-- @requires peers/hta/base peers/hta/trace_counters peers/hta/kernel_sequences

-- _hta_cp_window_for(annotation, instance_id): per trace, HTA's window: the annotation (ann_name; NULL asks for
-- the first ProfilerStep user annotation of each trace, by file order), and the start and end (float64 µs from the
-- trace origin) of the instance_id-th row of HTA's frame, in file order, whose name contains it. Annotation ''
-- is the whole trace: HTA then takes the earliest start and the latest end, the ends computed before it shifts
-- the times to the origin: a window every row falls in (here -inf to +inf).
CREATE OR REPLACE MACRO _hta_cp_window_for(annotation, instance_id) AS TABLE
WITH named AS (
    SELECT trace_id, arg_min(name, event_id) AS ann_name FROM events
    WHERE annotation IS NULL AND cat = 'user_annotation' AND contains(name, 'ProfilerStep') GROUP BY trace_id
    UNION ALL
    SELECT trace_id, annotation FROM traces WHERE annotation IS NOT NULL
), hits AS (
    SELECT n.trace_id, n.ann_name, f.ts_us, f.end_us,
           row_number() OVER (PARTITION BY n.trace_id ORDER BY f.event_id) - 1 AS instance_no
    FROM named n JOIN _hta_frame f ON f.trace_id = n.trace_id AND contains(f.name, n.ann_name)
    WHERE n.ann_name <> '' AND f.trace_id IN (SELECT trace_id FROM named)
)
SELECT trace_id, ann_name, ts_us AS start_us, end_us FROM hits WHERE instance_no = instance_id
UNION ALL
SELECT trace_id, ann_name, '-infinity'::DOUBLE, 'infinity'::DOUBLE FROM named WHERE ann_name = '';

-- _hta_cp_cpu_walk_for(annotation, instance_id): the CPU nodes of HTA's graph, per thread in the order of its
-- depth-first walk (seq), with their time (ts_us: the row's start or end), the weight of the edge from the
-- previous node of the walk (w, NULL for a thread's first node) and whether that edge is a dependency edge.
CREATE OR REPLACE MACRO _hta_cp_cpu_walk_for(annotation, instance_id) AS TABLE
WITH w AS MATERIALIZED (SELECT * FROM _hta_cp_window_for(annotation, instance_id)), ev AS (
    SELECT f.trace_id, f.pid, f.tid, f.event_id, f.name, f.ts_us, f.end_us, f.dur_us,
           e.cat IN ('cpu_op', 'cuda_runtime', 'cuda_driver') AS is_node
    FROM _hta_frame f JOIN w USING (trace_id)
    JOIN events e ON e.trace_id = f.trace_id AND e.event_id = f.event_id
    WHERE f.trace_id IN (SELECT trace_id FROM w) AND e.trace_id IN (SELECT trace_id FROM w) AND f.stream = -1
      AND NOT f.is_gpu AND f.ts_us >= w.start_us AND f.ts_us <= w.end_us AND f.dur_us > 0
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

-- _hta_cp_gpu_for(annotation, instance_id): the GPU rows of HTA's graph (its cuda_sync rows left out), in the order
-- HTA's loop visits them with the cuda_sync rows (ord), with their launching call (rt_event_id, rt_ts_us), their
-- position on their stream (pos), the edge into their start (kind 'launch', 'kernel_kernel' or NULL for none), its
-- weight (w_in), the weight of their own edge (w_op = end - start), the segment of the stream's chain they belong
-- to (seg: a new one at each row not reached from the previous row), the GPU row whose end a stream wait makes
-- their start wait for (sync_src_event_id, or NULL), and the CPU calls whose end waits for their end (waited_by:
-- cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize or cudaEventQuery, each with the place of its
-- cuda_sync row in the loop and, for a context sync, the place of the stream's first row: HTA's order of those
-- edges).
CREATE OR REPLACE MACRO _hta_cp_gpu_for(annotation, instance_id) AS TABLE
WITH w AS MATERIALIZED (SELECT * FROM _hta_cp_window_for(annotation, instance_id)),
fr AS MATERIALIZED (SELECT * FROM _hta_frame WHERE trace_id IN (SELECT trace_id FROM w)),
q AS (
    SELECT event_id, trace_id, side,
           sum(delta) OVER (PARTITION BY trace_id, stream ORDER BY ts_us, side, event_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::BIGINT AS v
    FROM _hta_queue_steps WHERE trace_id IN (SELECT trace_id FROM w)
), ql AS (
    SELECT trace_id, event_id, max(v) FILTER (WHERE side = 0) AS ql_runtime, max(v) FILTER (WHERE side = 1) AS ql
    FROM q GROUP BY trace_id, event_id
), cpu AS (
    SELECT trace_id, correlation, arg_min(event_id, event_id) AS rt_event_id, arg_min(name, event_id) AS rt_name,
           arg_min(ts_us, event_id) AS rt_ts_us, arg_min(dur_us, event_id) AS rt_dur_us,
           arg_min(pid, event_id) AS rt_pid, arg_min(tid, event_id) AS rt_tid
    FROM fr WHERE NOT is_gpu AND stream = -1 AND correlation >= 0
    GROUP BY trace_id, correlation
), syncs AS MATERIALIZED (
    -- the frame's cuda_sync rows, with the event record and stream they wait on (-1 when none)
    SELECT f.trace_id, f.event_id, f.name, f.pid, f.stream, f.correlation, f.ts_us, f.dur_us, f.end_us,
           coalesce(TRY_CAST(json_extract_string(k.args, '$.wait_on_stream') AS BIGINT), -1) AS wait_stream,
           coalesce(TRY_CAST(json_extract_string(k.args, '$.wait_on_cuda_event_record_corr_id') AS BIGINT), -1)
               AS wait_record
    FROM fr f JOIN kernels k ON k.trace_id = f.trace_id AND k.event_id = f.event_id
    WHERE k.cat_raw = 'cuda_sync' AND k.trace_id IN (SELECT trace_id FROM w)
), g AS (
    SELECT f.trace_id, f.event_id, f.name, f.stream, f.ts_us, f.end_us, f.dur_us, c.rt_event_id, c.rt_ts_us,
           ql.ql_runtime, ql.ql
    FROM fr f JOIN w USING (trace_id)
    JOIN cpu c ON c.trace_id = f.trace_id AND c.correlation = f.correlation
    LEFT JOIN ql ON ql.trace_id = f.trace_id AND ql.event_id = f.event_id
    WHERE f.is_gpu AND f.stream <> -1 AND c.rt_ts_us >= w.start_us AND c.rt_ts_us <= w.end_us AND c.rt_dur_us > 0
      AND NOT EXISTS (SELECT 1 FROM syncs s WHERE s.trace_id = f.trace_id AND s.event_id = f.event_id)
), sy AS (
    -- the cuda_sync rows HTA's loop visits: a stream wait whatever its time, another row on a stream when its
    -- call starts in the window and lasts > 0, an event or context sync (stream -1) when it does itself
    SELECT s.*, c.rt_event_id, c.rt_name, c.rt_ts_us, c.rt_pid, c.rt_tid
    FROM syncs s JOIN w USING (trace_id)
    JOIN cpu c ON c.trace_id = s.trace_id AND c.correlation = s.correlation
    WHERE (s.stream <> -1 AND (s.name = 'Stream Wait Event'
                               OR (c.rt_ts_us >= w.start_us AND c.rt_ts_us <= w.end_us AND c.rt_dur_us > 0)))
       OR (s.stream = -1 AND s.name IN ('Event Sync', 'Context Sync')
           AND s.ts_us >= w.start_us AND s.ts_us <= w.end_us AND s.dur_us > 0)
), records AS (
    -- the event records some row waits on, with the stream and device (pid) of that wait
    SELECT DISTINCT r.trace_id, r.event_id, r.ts_us, r.correlation, s.wait_stream AS stream, s.pid AS gpu
    FROM fr r JOIN syncs s ON s.trace_id = r.trace_id AND s.wait_record = r.correlation AND s.wait_stream > -1
    WHERE r.name = 'cudaEventRecord'
), launch AS (
    -- the trace's launch calls (HTA's list) with the GPU row each one launched (on a stream)
    SELECT c.trace_id, c.rt_event_id AS event_id, c.rt_ts_us AS ts_us, c.rt_pid AS pid, c.rt_tid AS tid,
           k.event_id AS gpu_event_id, k.pid AS gpu, k.stream
    FROM cpu c JOIN (SELECT trace_id, correlation, arg_max(event_id, event_id) AS event_id,
                            arg_max(pid, event_id) AS pid, arg_max(stream, event_id) AS stream
                     FROM fr WHERE is_gpu AND trace_id IN (SELECT trace_id FROM records) GROUP BY ALL) k
      ON k.trace_id = c.trace_id AND k.correlation = c.correlation
    WHERE k.stream <> -1 AND c.rt_name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel',
        'cudaMemcpyAsync', 'cudaMemsetAsync', 'runFunction - job_prep_and_submit_for_execution', 'hipLaunchKernel',
        'hipExtModuleLaunchKernel', 'hipMemsetAsync', 'hipMemcpyAsync', 'hipMemcpyWithStream')
), recorded AS (
    -- each record's GPU row: the one launched by the last launch onto its device and stream that started no later
    -- (at one start, the last in file order)
    SELECT r.trace_id, r.correlation, arg_max(l.gpu_event_id, l.event_id) AS gpu_event_id
    FROM (SELECT r.*, l.ts_us AS launch_ts_us FROM records r ASOF JOIN launch l
          ON l.trace_id = r.trace_id AND l.gpu = r.gpu AND l.stream = r.stream AND l.ts_us <= r.ts_us) r
    JOIN launch l ON l.trace_id = r.trace_id AND l.gpu = r.gpu AND l.stream = r.stream AND l.ts_us = r.launch_ts_us
    GROUP BY r.trace_id, r.correlation
), merged AS (
    -- traces where HTA joins the records to its loop's rows, which turns their times into whole µs (truncated)
    SELECT DISTINCT trace_id FROM records
), loop AS (
    -- HTA's loop order: a GPU row at its start, a cuda_sync row at its end; at one time, file order
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY sort_us, event_id) AS ord
    FROM (SELECT g.trace_id, g.event_id, false AS is_sync,
                 CASE WHEN m.trace_id IS NULL THEN g.ts_us ELSE trunc(g.ts_us) END AS sort_us
          FROM g LEFT JOIN merged m USING (trace_id)
          UNION ALL
          SELECT s.trace_id, s.event_id, true,
                 CASE WHEN m.trace_id IS NULL THEN s.end_us ELSE trunc(s.ts_us) + trunc(s.dur_us) END
          FROM sy s LEFT JOIN merged m USING (trace_id))
), o AS (
    SELECT g.*, l.ord, row_number() OVER (PARTITION BY g.trace_id, g.stream ORDER BY l.ord) AS pos,
           lag(g.end_us) OVER (PARTITION BY g.trace_id, g.stream ORDER BY l.ord) AS prev_end_us,
           min(l.ord) OVER (PARTITION BY g.trace_id, g.stream) AS stream_first_ord
    FROM g JOIN loop l ON l.trace_id = g.trace_id AND l.event_id = g.event_id AND NOT l.is_sync
), sl AS (
    SELECT s.*, l.ord, x.gpu_event_id AS src_event_id
    FROM sy s JOIN loop l ON l.trace_id = s.trace_id AND l.event_id = s.event_id AND l.is_sync
    LEFT JOIN recorded x ON x.trace_id = s.trace_id AND x.correlation = s.wait_record
), waits AS (
    -- a stream wait: the first launch of its call's thread onto its stream after the call gets to wait for the
    -- record's GPU row; of several waits for one row, the last one visited before it counts
    SELECT s.trace_id, l.gpu_event_id AS dest_event_id, arg_max(s.src_event_id, s.ord) AS src_event_id
    FROM sl s ASOF JOIN launch l ON l.trace_id = s.trace_id AND l.pid = s.rt_pid AND l.tid = s.rt_tid
                                   AND l.stream = s.stream AND l.ts_us > s.rt_ts_us
    JOIN o d ON d.trace_id = s.trace_id AND d.event_id = l.gpu_event_id AND d.ord > s.ord
    WHERE s.name = 'Stream Wait Event' AND s.rt_name = 'cudaStreamWaitEvent' AND s.src_event_id IS NOT NULL
    GROUP BY s.trace_id, l.gpu_event_id
), k AS (
    -- the stream wait counts when its GPU row is in the graph; the row is then reached from its launch only if
    -- that row ended before the launch began, and from the previous row only if it ended before that one did
    SELECT o.*, x.event_id AS sync_src_event_id, x.end_us AS sync_end_us,
           CASE WHEN o.ql_runtime = 1 AND o.ql = 0 AND (o.prev_end_us IS NULL OR o.prev_end_us < o.rt_ts_us)
                     AND (x.end_us IS NULL OR x.end_us < o.rt_ts_us) THEN 'launch'
                WHEN o.prev_end_us IS NOT NULL AND (x.end_us IS NULL OR x.end_us < o.prev_end_us)
                THEN 'kernel_kernel' END AS kind,
           o.end_us - o.ts_us AS w_op
    FROM o LEFT JOIN waits ws ON ws.trace_id = o.trace_id AND ws.dest_event_id = o.event_id
    LEFT JOIN o x ON x.trace_id = ws.trace_id AND x.event_id = ws.src_event_id
), syncs_cpu AS (
    -- the GPU -> CPU edges: an event sync from its record's GPU row (when in the graph), a stream sync from the
    -- last row visited before it on its stream, a context sync from that of every stream
    SELECT s.trace_id, s.src_event_id AS event_id, s.rt_event_id, s.ord, 0 AS stream_ord
    FROM sl s WHERE s.name = 'Event Sync' AND s.src_event_id IN (SELECT event_id FROM o WHERE o.trace_id = s.trace_id)
    UNION ALL
    SELECT s.trace_id, x.event_id, s.rt_event_id, s.ord, 0
    FROM sl s ASOF JOIN o x ON x.trace_id = s.trace_id AND x.stream = s.stream AND x.ord < s.ord
    WHERE s.name = 'Stream Sync'
    UNION ALL
    SELECT s.trace_id, x.event_id, s.rt_event_id, s.ord, x.stream_first_ord
    FROM (SELECT s.*, t.stream AS synced FROM sl s JOIN (SELECT DISTINCT trace_id, stream FROM o) t USING (trace_id)
          WHERE s.name = 'Context Sync') s
    ASOF JOIN o x ON x.trace_id = s.trace_id AND x.stream = s.synced AND x.ord < s.ord
), s AS (
    SELECT *, CASE kind WHEN 'launch' THEN ts_us - rt_ts_us WHEN 'kernel_kernel' THEN ts_us - prev_end_us END AS w_in,
           sum(CASE WHEN kind = 'kernel_kernel' THEN 0 ELSE 1 END)
               OVER (PARTITION BY trace_id, stream ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS seg
    FROM k
)
SELECT s.trace_id, s.event_id, s.name, s.stream, s.ts_us, s.end_us, s.ord, s.pos, s.rt_event_id, s.rt_ts_us, s.kind,
       s.w_in, s.w_op, s.seg, s.sync_src_event_id, c.waited_by
FROM s LEFT JOIN (SELECT trace_id, event_id,
                         list({'cpu_event_id': rt_event_id, 'ord': ord, 'stream_ord': stream_ord}) AS waited_by
                  FROM syncs_cpu GROUP BY trace_id, event_id) c USING (trace_id, event_id);

-- _hta_cp_dist_for(annotation, instance_id): every node of HTA's graph with the longest path ending there (dist, as
-- networkx's dag_longest_path computes it) and the edge that path arrives by. A node is numbered 2 x its row's
-- event_id, + 1 for the row's end; it lies on one chain (a CPU thread's walk, or a segment of a stream) at seq,
-- reached from the chain's previous node by chain_edge ('operator', 'dependency', 'kernel_kernel'; NULL for the
-- chain's first node) of weight w. pick: the path's last edge: 'chain', 'launch' or 'sync' (from node src, of
-- weight entry_w), or 'fresh' (the path starts here); start_seq: the seq of the last node up to this one on its
-- chain whose pick is not 'chain' (where the path to this node enters the chain).
CREATE OR REPLACE MACRO _hta_cp_dist_for(annotation, instance_id) AS TABLE
WITH RECURSIVE cw AS MATERIALIZED (SELECT * FROM _hta_cp_cpu_walk_for(annotation, instance_id)),
gr AS MATERIALIZED (SELECT * FROM _hta_cp_gpu_for(annotation, instance_id)),
nodes AS MATERIALIZED (
    -- S: the chain's running sum of edge weights (an edge of -1 µs or less counted 0, as HTA sets it before the
    -- longest path)
    SELECT *, sum(coalesce(w_eff, 0.0)) OVER (PARTITION BY trace_id, chain ORDER BY seq
                                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS S
    FROM (SELECT *, CASE WHEN w <= -1 THEN 0.0 ELSE w END AS w_eff
          FROM (SELECT trace_id, 2 * event_id + (NOT is_start)::BIGINT AS node, 'cpu' AS side,
                       2 * min(event_id) OVER (PARTITION BY trace_id, pid, tid) AS chain, seq, event_id, name, ts_us,
                       is_start, CASE WHEN is_dependency THEN 'dependency' WHEN w IS NOT NULL THEN 'operator' END
                           AS chain_edge, w
                FROM cw
                UNION ALL
                SELECT trace_id, 2 * event_id, 'gpu', 2 * first_value(event_id) OVER (
                           PARTITION BY trace_id, stream, seg ORDER BY pos), 2 * pos - 1, event_id, name, ts_us, true,
                       CASE WHEN kind = 'kernel_kernel' THEN 'kernel_kernel' END, CASE WHEN kind = 'kernel_kernel'
                                                                                       THEN w_in END
                FROM gr
                UNION ALL
                SELECT trace_id, 2 * event_id + 1, 'gpu', 2 * first_value(event_id) OVER (
                           PARTITION BY trace_id, stream, seg ORDER BY pos), 2 * pos, event_id, name, end_us, false,
                       'operator', w_op
                FROM gr))
), entries AS MATERIALIZED (
    -- the edges between chains: into a GPU start, a stream wait (tried first) and its launch; into a CPU call's
    -- end, after the walk's edge, the synchronisations in HTA's order (po: the place among the node's
    -- predecessors, the chain's edge being 0 at a CPU node and 1 at a GPU start)
    SELECT trace_id, 2 * event_id AS dst, 'gpu' AS dst_side, 2 * rt_event_id AS src, 'cpu' AS src_side,
           'launch' AS kind, w_in AS w, 1 AS po
    FROM gr WHERE kind = 'launch'
    UNION ALL
    SELECT trace_id, 2 * event_id, 'gpu', 2 * sync_src_event_id + 1, 'gpu', 'sync', 0.0, 0
    FROM gr WHERE sync_src_event_id IS NOT NULL
    UNION ALL
    SELECT g.trace_id, 2 * u.x.cpu_event_id + 1, 'cpu', 2 * g.event_id + 1, 'gpu', 'sync', 0.0,
           row_number() OVER (PARTITION BY g.trace_id, u.x.cpu_event_id ORDER BY u.x.ord, u.x.stream_ord)
    FROM gr g, unnest(g.waited_by) u(x)
    WHERE 2 * u.x.cpu_event_id + 1 IN (SELECT node FROM nodes n WHERE n.trace_id = g.trace_id AND n.side = 'cpu')
), slim AS MATERIALIZED (
    -- what the rounds read of each node, and whether a synchronisation leaves from it. This and ent are gathered
    -- into one list and unnested: DuckDB's estimate of their rows then starts from 1 rather than from the product
    -- of the estimates of every join above, which made each round's windows and recursion table far too large
    SELECT unnest(list({'trace_id': n.trace_id, 'node': n.node, 'side': n.side, 'chain': n.chain, 'seq': n.seq,
                        'S': n.S, 'feeds': s.node IS NOT NULL}), recursive := true)
    FROM nodes n LEFT JOIN (SELECT DISTINCT trace_id, src AS node FROM entries WHERE src_side = 'gpu') s
      USING (trace_id, node)
), ent AS MATERIALIZED (
    SELECT unnest(list(e), recursive := true) FROM entries e
), d(trace_id, node, dist, final) USING KEY (trace_id, node) AS (
    -- the longest paths as a fixpoint. Each round takes the GPU ends that synchronisations leave from at their last
    -- values, computes the CPU chains, then the GPU chains (their launches from the new CPU values), and keeps those
    -- GPU ends where they changed; where none did, it keeps every node, final. On a chain, dist = S + the running
    -- maximum of (B - S), B being what enters a node from outside its chain (0: a start afresh, or the best edge
    -- from another chain). Round 0: those GPU ends unknown, and a row -1 per trace for the traces without any.
    SELECT * FROM (SELECT trace_id, node, NULL::DOUBLE, false FROM slim WHERE feeds
                   UNION ALL
                   SELECT DISTINCT trace_id, -1, NULL::DOUBLE, false FROM slim)
    UNION
    (WITH active AS (SELECT DISTINCT trace_id FROM d WHERE NOT final),
     st AS (SELECT r.trace_id, r.node, r.dist FROM recurring.d r
            WHERE NOT r.final AND r.trace_id IN (SELECT trace_id FROM active)),
     cpu_in AS (
        SELECT e.trace_id, e.dst AS node, max(s.dist + e.w) AS b
        FROM ent e JOIN st s ON s.trace_id = e.trace_id AND s.node = e.src
        WHERE e.dst_side = 'cpu'
        GROUP BY e.trace_id, e.dst
     ), cpu_d AS (
        SELECT n.trace_id, n.node, n.S + max(greatest(coalesce(b.b, 0.0), 0.0) - n.S) OVER (
                   PARTITION BY n.trace_id, n.chain ORDER BY n.seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                   AS dist
        FROM slim n LEFT JOIN cpu_in b USING (trace_id, node)
        WHERE n.side = 'cpu' AND n.trace_id IN (SELECT trace_id FROM active)
     ), gpu_in AS (
        SELECT trace_id, node, max(v) AS b
        FROM (SELECT e.trace_id, e.dst AS node, s.dist + CASE WHEN e.w <= -1 THEN 0.0 ELSE e.w END AS v
              FROM ent e JOIN cpu_d s ON s.trace_id = e.trace_id AND s.node = e.src
              WHERE e.dst_side = 'gpu' AND e.src_side = 'cpu'
              UNION ALL
              SELECT e.trace_id, e.dst, s.dist + e.w
              FROM ent e JOIN st s ON s.trace_id = e.trace_id AND s.node = e.src
              WHERE e.dst_side = 'gpu' AND e.src_side = 'gpu')
        GROUP BY trace_id, node
     ), gpu_d AS (
        SELECT n.trace_id, n.node, n.S + max(greatest(coalesce(b.b, 0.0), 0.0) - n.S) OVER (
                   PARTITION BY n.trace_id, n.chain ORDER BY n.seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                   AS dist
        FROM slim n LEFT JOIN gpu_in b USING (trace_id, node)
        WHERE n.side = 'gpu' AND n.trace_id IN (SELECT trace_id FROM active)
     ), x AS MATERIALIZED (
        SELECT * FROM cpu_d UNION ALL SELECT * FROM gpu_d
     ), moved AS (
        SELECT x.trace_id, x.node, x.dist FROM x JOIN st o USING (trace_id, node) WHERE x.dist IS DISTINCT FROM o.dist
     )
     SELECT trace_id, node, dist, false FROM moved
     UNION ALL
     SELECT trace_id, node, dist, true FROM x WHERE trace_id NOT IN (SELECT trace_id FROM moved))
), fin AS MATERIALIZED (
    SELECT n.*, d.dist FROM nodes n JOIN d USING (trace_id, node) WHERE d.final
), cand AS (
    -- each node's predecessors: its chain's previous node and the edges from other chains; networkx keeps the
    -- first best in the order they were added (po), or starts afresh when the best is below 0
    SELECT trace_id, node, 'chain' AS pick, NULL::BIGINT AS src, w AS entry_w, prev_dist + w_eff AS v,
           CASE WHEN side = 'gpu' AND is_start THEN 1 ELSE 0 END AS po
    FROM (SELECT *, lag(dist) OVER (PARTITION BY trace_id, chain ORDER BY seq) AS prev_dist FROM fin)
    WHERE chain_edge IS NOT NULL
    UNION ALL
    SELECT e.trace_id, e.dst, e.kind, e.src, e.w, s.dist + CASE WHEN e.w <= -1 THEN 0.0 ELSE e.w END, e.po
    FROM entries e JOIN fin s ON s.trace_id = e.trace_id AND s.node = e.src
), best AS (
    SELECT trace_id, node, max(v) AS v, arg_max(pick, (v, -po)) AS pick, arg_max(src, (v, -po)) AS src,
           arg_max(entry_w, (v, -po)) AS entry_w
    FROM cand GROUP BY trace_id, node
), picked AS (
    SELECT f.*, CASE WHEN b.v IS NULL OR b.v < 0 THEN 'fresh' ELSE b.pick END AS pick,
           CASE WHEN b.v >= 0 THEN b.src END AS src, CASE WHEN b.v >= 0 THEN b.entry_w END AS entry_w
    FROM fin f LEFT JOIN best b USING (trace_id, node)
)
SELECT trace_id, node, side, chain, seq, event_id, name, ts_us, is_start, chain_edge, w, dist, pick, src, entry_w,
       max(CASE WHEN pick <> 'chain' THEN seq END) OVER (PARTITION BY trace_id, chain ORDER BY seq
                                                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS start_seq
FROM picked;

-- _hta_cp_edges_for(annotation, instance_id): the edges of HTA's critical path. Its end is the node with the
-- longest path (on ties the earliest, a GPU node before a CPU one, then the chain's order); walking back, each
-- node's path follows its chain down to start_seq, then the edge it entered by (a launch or a synchronisation)
-- to another chain, until a node where it starts afresh.
--   side, event_id, name, ts_us   the node the edge ends at
--   type                          HTA's edge type: critical_path_operator, critical_path_dependency,
--                                 critical_path_kernel_launch_delay, critical_path_kernel_kernel_delay,
--                                 critical_path_sync_dependency
--   duration                      the edge's weight, µs (float64, as HTA)
--   bound_by                      HTA's class of the edge
CREATE OR REPLACE MACRO _hta_cp_edges_for(annotation, instance_id) AS TABLE
WITH RECURSIVE dd AS MATERIALIZED (SELECT * FROM _hta_cp_dist_for(annotation, instance_id)),
last AS (
    SELECT trace_id, arg_max(node, (dist, -ts_us, side = 'gpu', -seq, -node)) AS node FROM dd GROUP BY trace_id
), back(trace_id, node) AS (
    SELECT trace_id, node FROM last
    UNION ALL
    SELECT p.trace_id, p.src
    FROM back b JOIN dd n ON n.trace_id = b.trace_id AND n.node = b.node
    JOIN dd p ON p.trace_id = n.trace_id AND p.chain = n.chain AND p.seq = n.start_seq
    WHERE p.pick IN ('launch', 'sync')
), pieces AS (
    SELECT n.trace_id, n.chain, n.start_seq, n.seq AS end_seq FROM back b JOIN dd n USING (trace_id, node)
), on_path AS (
    SELECT x.*, x.seq > p.start_seq AS by_chain
    FROM pieces p JOIN dd x ON x.trace_id = p.trace_id AND x.chain = p.chain AND x.seq >= p.start_seq
                             AND x.seq <= p.end_seq
)
SELECT trace_id, side, event_id, name, ts_us,
       CASE chain_edge WHEN 'dependency' THEN 'critical_path_dependency'
                       WHEN 'kernel_kernel' THEN 'critical_path_kernel_kernel_delay'
                       ELSE 'critical_path_operator' END AS type,
       w AS duration,
       CASE WHEN chain_edge = 'dependency' THEN ''
            WHEN chain_edge = 'kernel_kernel' THEN 'gpu_kernel_kernel_overhead'
            WHEN side = 'cpu' THEN 'cpu_bound'
            WHEN regexp_matches(name, '^nccl.*Kernel') THEN 'gpu_communication_bound'
            ELSE 'gpu_compute_bound' END AS bound_by
FROM on_path WHERE by_chain
UNION ALL
SELECT trace_id, side, event_id, name, ts_us,
       CASE pick WHEN 'launch' THEN 'critical_path_kernel_launch_delay' ELSE 'critical_path_sync_dependency' END,
       entry_w, CASE pick WHEN 'launch' THEN 'gpu_kernel_launch_overhead' ELSE '' END
FROM on_path WHERE NOT by_chain AND pick IN ('launch', 'sync');

-- _hta_cp_edges: the edges of the critical path of each trace's first ProfilerStep (_hta_cp_edges_for(NULL, 0)).
CREATE OR REPLACE VIEW _hta_cp_edges AS SELECT * FROM _hta_cp_edges_for(NULL, 0);

-- hta_critical_path_summary_for(annotation, instance_id): HTA's critical_path_analysis(rank, annotation,
-- instance_id) (instance_id: an int, the instance_id-th row whose name contains the annotation; '' for the whole
-- trace; NULL for the first ProfilerStep user annotation of each trace), its path's edges' weights summed per
-- bound_by as HTA's get_critical_path_breakdown().groupby('bound_by').duration.sum().
--   bound_by   cpu_bound, gpu_compute_bound, gpu_communication_bound, gpu_kernel_kernel_overhead,
--              gpu_kernel_launch_overhead, or '' (dependency and synchronisation edges, 0)
--   duration   µs on the critical path (float64, as HTA)
CREATE OR REPLACE MACRO hta_critical_path_summary_for(annotation, instance_id) AS TABLE
SELECT trace_id, bound_by, list_sum(list(duration ORDER BY duration, ts_us, event_id)) AS duration
FROM _hta_cp_edges_for(annotation, instance_id) GROUP BY trace_id, bound_by;

-- hta_critical_path_summary: HTA's critical_path_summary.csv: the critical path of the first ProfilerStep (HTA's
-- critical_path_analysis(rank, annotation=<its name>, instance_id=0)), its edges' weights summed per bound_by.
--   bound_by   cpu_bound, gpu_compute_bound, gpu_communication_bound, gpu_kernel_kernel_overhead,
--              gpu_kernel_launch_overhead, or '' (dependency and synchronisation edges, 0)
--   duration   µs on the critical path (float64, as HTA)
-- @output report-hta 9 critical_path_summary IF ROWS ORDER BY trace_id, bound_by
CREATE OR REPLACE VIEW hta_critical_path_summary AS
SELECT * FROM hta_critical_path_summary_for(NULL, 0);
