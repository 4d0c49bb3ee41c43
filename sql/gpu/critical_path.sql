-- gpu/critical_path — the critical path of each ProfilerStep: the chain of CPU and GPU work, traced back from the
-- step's last moment, that decided when the step ended; each stretch of it classed (CPU, launch, GPU compute,
-- communication, copies, gaps between kernels, synchronisation) and named by its op.
--
-- An iteration is a ProfilerStep#N range [step start, step end] on its CPU thread, in a trace with GPU events (a
-- CPU-only trace has no path). Its GPU work is every GPU event
-- (kernel, memcpy, memset; cuda_sync rows are not work) whose launch call starts in the range, graph-launched
-- events included (each is launched by its graph launch call). The iteration ends at E, the later of the step's
-- end and the last end of its GPU work. The path is traced back from E:
--   * Held by the stream or by the launch. A GPU event starts only after its launch call has started and the
--     previous event on its stream has ended. When the previous event ended at or after the launch call's start,
--     the stream held it; otherwise its launch did (as does an event with nothing before it on its stream). The
--     events held by their stream form a chain back to one held by its launch: the chain's first event.
--   * From a GPU event the path runs back along its chain (the events, and the gaps between them) to the chain's
--     first event, then over the launch edge (launch call start to GPU start) to that call on its CPU thread.
--   * From a moment t on a CPU thread the path runs back over the thread to the end of the last blocking call
--     before t that waited on the GPU (a device, stream or event synchronisation or a synchronous copy, during
--     which a GPU event launched by the same process ended). The last GPU event to end during the call is what it
--     waited for: the path takes the sync edge (that event's end to the call's end) and goes on from that event.
--     With no such call ending after the step's start, the CPU stretch reaches back to the step's start.
--   * The path stops at the step's start: what lies before it is clipped. A chain whose first event has no
--     launch in the trace ends the path there ('no_launch' back to the step's start).
-- Consecutive elements meet, so the elements of a step's path add up to E - step start. Not followed: waits of one
-- stream on another (cudaStreamWaitEvent), dependencies between CPU threads, and the order of a graph's nodes
-- across streams (a graph's events chain per stream like any other).
--
-- @requires gpu/activity tree/attribution

-- _critical_path_gpu: the GPU events per (trace, device, stream) in start order, with what held each and the
-- chain it belongs to.
--   pos               1-based rank on the stream (start, then event_id)
--   prev_end_ns       end of the previous event on the stream (NULL for the first)
--   held_by           'stream' or 'launch' (see the top of this file)
--   chain             number of the chain on its stream (a new one at each event held by its launch)
--   launch_pid, launch_tid, launch_ts_ns   the launch call's CPU thread and start (NULL: not in the trace)
CREATE OR REPLACE VIEW _critical_path_gpu AS
WITH g AS (
    -- (read from gpu_launch_links, as _gpu_activity_core does, rather than from it: its as-of join would sit
    -- under the recursive walk of _critical_path_hops, which DuckDB does not plan)
    SELECT l.trace_id, l.event_id, l.device, l.stream, n.activity_class, l.ts_ns, l.ts_ns + l.dur_ns AS end_ns,
           l.launch_event_id, l.launch_ts_ns, l.launch_pid, l.launch_tid,
           row_number() OVER (PARTITION BY l.trace_id, l.device, l.stream ORDER BY l.ts_ns, l.event_id) AS pos,
           lag(l.ts_ns + l.dur_ns) OVER (PARTITION BY l.trace_id, l.device, l.stream ORDER BY l.ts_ns, l.event_id)
               AS prev_end_ns
    FROM (SELECT trace_id, event_id, cat, name, device, stream, ts_ns, dur_ns,
                 CASE WHEN launch_kind IS NOT NULL THEN launch_event_id END AS launch_event_id,
                 CASE WHEN launch_kind IS NOT NULL THEN launch_ts_ns END AS launch_ts_ns,
                 CASE WHEN launch_kind IS NOT NULL THEN launch_pid END AS launch_pid,
                 CASE WHEN launch_kind IS NOT NULL THEN launch_tid END AS launch_tid
          FROM gpu_launch_links WHERE ts_ns IS NOT NULL AND dur_ns IS NOT NULL) l
    JOIN _gpu_names n ON n.cat IS NOT DISTINCT FROM l.cat AND n.name IS NOT DISTINCT FROM l.name
    WHERE n.activity_class <> 'sync'
), h AS (
    SELECT *, CASE WHEN prev_end_ns IS NOT NULL AND (launch_ts_ns IS NULL OR prev_end_ns >= launch_ts_ns)
                   THEN 'stream' ELSE 'launch' END AS held_by
    FROM g
)
SELECT *, sum(CASE WHEN held_by = 'launch' THEN 1 ELSE 0 END)
              OVER (PARTITION BY trace_id, device, stream ORDER BY pos ROWS UNBOUNDED PRECEDING)::BIGINT AS chain
FROM h;

-- _critical_path_waits: the blocking calls that waited on the GPU: one row per call with the GPU event it waited
-- for (the last GPU event launched by its process to end while it ran; ties by event_id).
CREATE OR REPLACE VIEW _critical_path_waits AS
WITH calls AS (
    SELECT trace_id, event_id, pid, tid, name, ts_ns, ts_ns + dur_ns AS end_ns FROM events
    WHERE cat IN ('cuda_runtime', 'cuda_driver') AND dur_ns > 0
      AND regexp_matches(name, '^(cuda|hip)(DeviceSynchronize|StreamSynchronize|EventSynchronize|Memcpy|Memcpy2D|MemcpyAsync|MemcpyWithStream|MemcpyDtoH|MemcpyDtoHAsync)$|^cu(Ctx|Stream|Event)Synchronize$|^cuMemcpy(DtoH|HtoD|DtoD)?(_v2)?$')
)
SELECT c.trace_id, c.event_id AS wait_event_id, c.pid, c.tid, c.name AS wait_name, c.ts_ns AS wait_ts_ns,
       c.end_ns AS wait_end_ns, arg_max(g.event_id, (g.end_ns, g.event_id)) AS waited_event_id,
       max(g.end_ns) AS waited_end_ns
FROM calls c JOIN _critical_path_gpu g
  ON g.trace_id = c.trace_id AND g.launch_pid = c.pid AND g.end_ns > c.ts_ns AND g.end_ns <= c.end_ns
GROUP BY ALL;

-- _critical_path_points: the moments the path leaves a CPU thread for the GPU, with the last wait (see
-- _critical_path_waits) on that thread to end at or before it: one row per chain (kind 'chain': the launch of its
-- first event) and per ProfilerStep#N (kind 'step': its end, on its thread). Without the trace's wait ending
-- first at a tie, the later of two waits ending at one time (by event_id).
--   kind, trace_id, pid, tid, t_ns         the moment
--   device, stream, chain                  the chain (kind 'chain')
--   step_event_id                          the step (kind 'step')
--   wait                                   {wait_event_id, wait_end_ns, waited_event_id, waited_end_ns}, NULL
--                                          when no wait on the thread ends at or before t_ns
CREATE OR REPLACE VIEW _critical_path_points AS
WITH pts AS (
    SELECT 'chain' AS kind, trace_id, launch_pid AS pid, launch_tid AS tid, launch_ts_ns AS t_ns, 1 AS side,
           device, stream, chain, NULL::BIGINT AS step_event_id, NULL AS w
    FROM _critical_path_gpu WHERE held_by = 'launch' AND launch_ts_ns IS NOT NULL
    UNION ALL
    SELECT 'step', trace_id, pid, tid, end_ns, 1, NULL, NULL, NULL, event_id, NULL FROM profiler_steps
    UNION ALL
    SELECT 'wait', trace_id, pid, tid, wait_end_ns, 0, NULL, NULL, NULL, wait_event_id,
           {'wait_event_id': wait_event_id, 'wait_end_ns': wait_end_ns, 'waited_event_id': waited_event_id,
            'waited_end_ns': waited_end_ns}
    FROM _critical_path_waits
)
SELECT * EXCLUDE (side, w),
       last_value(w IGNORE NULLS) OVER (PARTITION BY trace_id, pid, tid ORDER BY t_ns, side, step_event_id
                                        ROWS UNBOUNDED PRECEDING) AS wait
FROM pts QUALIFY kind <> 'wait';

-- _critical_path_chains: one row per chain (see _critical_path_gpu) with its first event, that event's launch and
-- the last wait on the launching thread to end at or before the launch call's start (_critical_path_points).
CREATE OR REPLACE VIEW _critical_path_chains AS
SELECT f.trace_id, f.device, f.stream, f.chain, f.event_id AS first_event_id, f.ts_ns AS first_ts_ns,
       f.pos AS first_pos, f.launch_event_id, f.launch_pid, f.launch_tid, f.launch_ts_ns,
       p.wait.wait_event_id, p.wait.wait_end_ns, p.wait.waited_event_id, p.wait.waited_end_ns
FROM _critical_path_gpu f
LEFT JOIN _critical_path_points p
  ON p.kind = 'chain' AND p.trace_id = f.trace_id AND p.device IS NOT DISTINCT FROM f.device AND p.stream = f.stream
 AND p.chain = f.chain
WHERE f.held_by = 'launch';

-- _critical_path_hops: per step, the GPU events the path reaches, walking back: hop 0 is the iteration's last GPU
-- event when it ends after the step, else the one the step's last wait waited for; hop n+1 is the event waited
-- for by the last wait before the launch of hop n's chain (each hop's event ends before the previous one's).
--   step_event_id, step_ts_ns, end_ns   the step, its start and the iteration's end E
--   hop, event_id                       the GPU event reached
--   from_ns                             the end of the wait it was reached through (E when reached at the end)
--   to_ns, cpu_pid, cpu_tid             the CPU stretch [from_ns, to_ns] before that wait on that thread: up to E
--                                       on the step's thread for hop 0, up to the previous hop's launch call
--                                       on its thread after
--   wait_event_id                       the wait call (NULL when reached at the end)
--   to_event_id                         the first GPU event of the previous hop's chain (whose launch to_ns is)
CREATE OR REPLACE VIEW _critical_path_hops AS
WITH RECURSIVE s AS MATERIALIZED (
    SELECT p.trace_id, p.event_id AS step_event_id, p.pid, p.tid, p.ts_ns AS step_ts_ns, p.end_ns AS step_end_ns,
           max(a.end_ns) AS gpu_end_ns, arg_max(a.event_id, (a.end_ns, a.event_id)) AS last_event_id
    FROM profiler_steps p LEFT JOIN _critical_path_gpu a
      ON a.trace_id = p.trace_id AND a.launch_ts_ns >= p.ts_ns AND a.launch_ts_ns < p.end_ns
    GROUP BY ALL
), start AS MATERIALIZED (
    SELECT s.trace_id, s.step_event_id, s.step_ts_ns, s.pid, s.tid,
           greatest(s.step_end_ns, coalesce(s.gpu_end_ns, s.step_end_ns)) AS end_ns,
           CASE WHEN s.gpu_end_ns > s.step_end_ns THEN s.last_event_id ELSE w.wait.waited_event_id END AS event_id,
           CASE WHEN s.gpu_end_ns > s.step_end_ns THEN s.gpu_end_ns ELSE w.wait.wait_end_ns END AS from_ns,
           CASE WHEN s.gpu_end_ns > s.step_end_ns THEN NULL ELSE w.wait.wait_event_id END AS wait_event_id
    FROM s LEFT JOIN _critical_path_points w
      ON w.kind = 'step' AND w.trace_id = s.trace_id AND w.step_event_id = s.step_event_id
), nx AS MATERIALIZED (
    -- the events a hop can reach (the waited-for ones and the steps' last ones), each with its chain
    SELECT g.trace_id, g.event_id, g.end_ns, c.launch_ts_ns, c.launch_pid, c.launch_tid, c.first_event_id,
           c.wait_event_id, c.wait_end_ns, c.waited_event_id, c.waited_end_ns
    FROM _critical_path_gpu g
    JOIN _critical_path_chains c ON c.trace_id = g.trace_id AND c.device IS NOT DISTINCT FROM g.device
                                AND c.stream = g.stream AND c.chain = g.chain
    WHERE (g.trace_id, g.event_id) IN (SELECT (trace_id, waited_event_id) FROM _critical_path_waits
                                       UNION ALL SELECT (trace_id, last_event_id) FROM s)
), walk AS (
    -- (the walk joins the small materialized rows above; nothing under this recursive CTE may hold an as-of join,
    -- which DuckDB does not plan there: hence the windows of _critical_path_points)
    SELECT trace_id, step_event_id, step_ts_ns, end_ns, 0 AS hop, event_id, from_ns, end_ns AS to_ns,
           pid AS cpu_pid, tid AS cpu_tid, wait_event_id, NULL::BIGINT AS to_event_id
    FROM start WHERE event_id IS NOT NULL AND from_ns > step_ts_ns
    UNION ALL
    SELECT w.trace_id, w.step_event_id, w.step_ts_ns, w.end_ns, w.hop + 1, n.waited_event_id, n.wait_end_ns,
           n.launch_ts_ns, n.launch_pid, n.launch_tid, n.wait_event_id, n.first_event_id
    FROM walk w JOIN nx n ON n.trace_id = w.trace_id AND n.event_id = w.event_id
    WHERE n.launch_ts_ns > w.step_ts_ns AND n.wait_end_ns > w.step_ts_ns AND n.waited_end_ns < n.end_ns
)
SELECT * FROM walk;
-- critical_path: one row per element of each step's critical path (see the top of this file), in time order.
--   trace_id, step_event_id, step   the ProfilerStep#N range
--   seq                             1-based position on the path, from the step's start
--   kind                            cpu (a stretch of a CPU thread), launch (launch call start to GPU start),
--                                   sync (a waited-for GPU event's end to the wait call's end), gpu_compute,
--                                   gpu_comm, gpu_memcpy, gpu_memset (a GPU event, by its category's class),
--                                   gpu_gap (between two events of a chain on a stream), no_launch (before a
--                                   chain whose first event has no launch in the trace)
--   start_ns, end_ns, dur_ns        the element, clipped to [step start, E], ns
--   pid, tid                        the CPU thread (cpu, sync; launch: the launching thread)
--   device, stream                  the GPU stream (GPU elements and launches)
--   event_id, name                  the GPU event; the launch call (launch); the wait call (sync); NULL for a
--                                   CPU stretch and a gap
--   op_name                         the op: a GPU event's (gpu_event_attribution.op_name); for a launch and the
--                                   CPU stretch leading to it, the op of the GPU event launched; for a sync, the
--                                   innermost cpu_op around the wait call; NULL for the stretch before the end
--   is_graph                        the GPU event (or the launched one) came from a CUDA/HIP graph launch
CREATE OR REPLACE VIEW critical_path AS
WITH h AS (
    SELECT w.*, max(w.hop) OVER (PARTITION BY w.trace_id, w.step_event_id) AS last_hop, g.device, g.stream,
           g.chain, g.pos, g.end_ns AS g_end_ns, c.first_event_id, c.first_ts_ns, c.first_pos, c.launch_event_id,
           c.launch_pid, c.launch_tid, c.launch_ts_ns
    FROM _critical_path_hops w
    JOIN _critical_path_gpu g ON g.trace_id = w.trace_id AND g.event_id = w.event_id
    JOIN _critical_path_chains c ON c.trace_id = g.trace_id AND c.device IS NOT DISTINCT FROM g.device
                                AND c.stream = g.stream AND c.chain = g.chain
), ce AS MATERIALIZED (
    -- each hop's chain: its events from the chain's first to the one the hop reached
    SELECT h.trace_id, h.step_event_id, h.hop, h.first_pos, e.* EXCLUDE (trace_id)
    FROM h JOIN _critical_path_gpu e ON e.trace_id = h.trace_id AND e.device IS NOT DISTINCT FROM h.device
                                    AND e.stream = h.stream AND e.chain = h.chain AND e.pos BETWEEN h.first_pos AND h.pos
), steps AS (
    SELECT p.trace_id, p.event_id AS step_event_id, p.name AS step, p.pid, p.tid, p.ts_ns AS step_ts_ns,
           greatest(p.end_ns, coalesce(max(h.end_ns), p.end_ns)) AS end_ns, count(h.hop) AS hops
    FROM profiler_steps p LEFT JOIN h ON h.trace_id = p.trace_id AND h.step_event_id = p.event_id
    WHERE p.trace_id IN (SELECT trace_id FROM _critical_path_gpu)  -- a trace without GPU work has no path
    GROUP BY p.trace_id, p.event_id, p.name, p.pid, p.tid, p.ts_ns, p.end_ns
), el AS (
    -- the CPU stretch before each hop's wait, up to the end or to the later hop's launch
    SELECT trace_id, step_event_id, 'cpu' AS kind, from_ns AS start_ns, to_ns AS end_ns, cpu_pid AS pid,
           cpu_tid AS tid, NULL::INTEGER AS device, NULL::BIGINT AS stream, NULL::BIGINT AS event_id,
           to_event_id AS op_of_event_id, hop
    FROM h
    UNION ALL
    -- the sync edge: the waited-for event's end to the wait call's end
    SELECT trace_id, step_event_id, 'sync', g_end_ns, from_ns, cpu_pid, cpu_tid, NULL, NULL,
           wait_event_id, NULL, hop
    FROM h
    UNION ALL
    -- the launch edge of the hop's chain
    SELECT trace_id, step_event_id, 'launch', launch_ts_ns, first_ts_ns, launch_pid, launch_tid, device, stream,
           launch_event_id, first_event_id, hop
    FROM h WHERE launch_ts_ns IS NOT NULL
    UNION ALL
    -- the last hop: the CPU stretch from the step's start to its chain's launch (no wait after the start on that
    -- thread led further back), or the time before a chain with no launch
    SELECT trace_id, step_event_id, CASE WHEN launch_ts_ns IS NULL THEN 'no_launch' ELSE 'cpu' END, step_ts_ns,
           coalesce(launch_ts_ns, first_ts_ns), launch_pid, launch_tid, NULL, NULL, NULL,
           CASE WHEN launch_ts_ns IS NOT NULL THEN first_event_id END, hop
    FROM h WHERE hop = last_hop
    UNION ALL
    -- a step the path never leaves: its thread from start to end
    SELECT trace_id, step_event_id, 'cpu', step_ts_ns, end_ns, pid, tid, NULL, NULL, NULL, NULL, NULL
    FROM steps WHERE hops = 0
    UNION ALL
    -- the events of each hop's chain, from its first event to the one reached, and the gap before each but the first
    SELECT trace_id, step_event_id, 'gpu_' || activity_class, ts_ns, end_ns, NULL, NULL, device, stream, event_id,
           event_id, hop
    FROM ce
    UNION ALL
    SELECT trace_id, step_event_id, 'gpu_gap', prev_end_ns, ts_ns, NULL, NULL, device, stream, NULL, NULL, hop
    FROM ce WHERE pos > first_pos
), clipped AS (
    SELECT el.*, greatest(el.start_ns, s.step_ts_ns) AS c_start_ns, least(el.end_ns, s.end_ns) AS c_end_ns, s.step
    FROM el JOIN steps s USING (trace_id, step_event_id)
)
SELECT c.trace_id, c.step_event_id, c.step,
       row_number() OVER (PARTITION BY c.trace_id, c.step_event_id ORDER BY c.c_start_ns, c.hop DESC, c.kind) AS seq,
       c.kind, c.c_start_ns AS start_ns, c.c_end_ns AS end_ns, c.c_end_ns - c.c_start_ns AS dur_ns, c.pid, c.tid,
       c.device, c.stream, c.event_id,
       CASE WHEN c.kind LIKE 'gpu\_%' ESCAPE '\' AND c.kind <> 'gpu_gap' THEN a.name
            WHEN c.event_id IS NOT NULL THEN x.name END AS name,
       CASE WHEN c.kind = 'sync' THEN ctx.op_name ELSE a.op_name END AS op_name,
       coalesce(a.launch_kind = 'graph', false) AS is_graph
FROM clipped c
LEFT JOIN gpu_event_attribution a ON a.trace_id = c.trace_id AND a.event_id = c.op_of_event_id
LEFT JOIN events x ON x.trace_id = c.trace_id AND x.event_id = c.event_id AND c.kind IN ('launch', 'sync')
LEFT JOIN cpu_event_context ctx ON ctx.trace_id = c.trace_id AND ctx.event_id = c.event_id AND c.kind = 'sync'
WHERE c.c_end_ns > c.c_start_ns;

-- critical_path_summary: one row per ProfilerStep#N with its critical path's time by kind (see critical_path).
--   trace_id, step_event_id, step   the step
--   step_ns                         the step's CPU duration, ns
--   iteration_ns                    step start to E (the later of the step's end and its GPU work's end), ns:
--                                   the sum of the path's elements
--   cpu_ns, launch_ns, sync_ns      CPU stretches, launch edges, sync edges on the path, ns
--   gpu_compute_ns, gpu_comm_ns, gpu_memory_ns   GPU events on the path: compute, communication, memcpy + memset
--   gpu_gap_ns, no_launch_ns        gaps between chained GPU events; time before an unlaunched chain, ns
--   gpu_pct                         100 (GPU events + gaps) / iteration_ns: how GPU-bound the step was
--   graph_ns                        time of graph-launched GPU events on the path, ns
--   top_op, top_op_ns               the op with the most time on the path (GPU events and the CPU and launch
--                                   time leading to them) and that time, ns
-- @output report-native 19 critical_path IF ROWS COLUMNS trace_id trace step iteration_ns:us cpu_ns:us \
--     launch_ns:us sync_ns:us gpu_compute_ns:us gpu_comm_ns:us gpu_memory_ns:us gpu_gap_ns:us gpu_pct top_op \
--     top_op_ns:us \
--     TITLE "Critical path per step" \
--     ABOUT "The chain of CPU and GPU work, traced back from each ProfilerStep's end, that decided when it ended: its time by kind and the op with the most of it (µs)." \
--     ORDER BY trace, step_event_id
CREATE OR REPLACE VIEW critical_path_summary AS
WITH c AS MATERIALIZED (SELECT * FROM critical_path), ops AS (
    SELECT trace_id, step_event_id, op_name, sum(dur_ns) AS ns FROM c WHERE op_name IS NOT NULL
    GROUP BY ALL
), top AS (
    SELECT trace_id, step_event_id, arg_max(op_name, (ns, op_name)) AS top_op, max(ns)::BIGINT AS top_op_ns
    FROM ops GROUP BY ALL
)
SELECT p.trace_id, p.event_id AS step_event_id, p.name AS step, p.dur_ns AS step_ns, sum(c.dur_ns)::BIGINT AS iteration_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind = 'cpu'), 0)::BIGINT AS cpu_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind = 'launch'), 0)::BIGINT AS launch_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind = 'sync'), 0)::BIGINT AS sync_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind = 'gpu_compute'), 0)::BIGINT AS gpu_compute_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind = 'gpu_comm'), 0)::BIGINT AS gpu_comm_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind IN ('gpu_memcpy', 'gpu_memset')), 0)::BIGINT AS gpu_memory_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind = 'gpu_gap'), 0)::BIGINT AS gpu_gap_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind = 'no_launch'), 0)::BIGINT AS no_launch_ns,
       100.0 * coalesce(sum(c.dur_ns) FILTER (WHERE c.kind LIKE 'gpu\_%' ESCAPE '\'), 0)
           / nullif(sum(c.dur_ns), 0) AS gpu_pct,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.is_graph AND c.kind LIKE 'gpu\_%' ESCAPE '\'), 0)::BIGINT AS graph_ns,
       any_value(t.top_op) AS top_op, any_value(t.top_op_ns) AS top_op_ns
FROM profiler_steps p JOIN c ON c.trace_id = p.trace_id AND c.step_event_id = p.event_id
LEFT JOIN top t ON t.trace_id = p.trace_id AND t.step_event_id = p.event_id
GROUP BY p.trace_id, p.event_id, p.name, p.dur_ns;

-- critical_path_ops: one row per (trace, op) on the critical paths of the trace's steps.
--   trace_id, op_name               the op (see critical_path.op_name)
--   steps                           steps whose path it is on
--   path_ns                         its time on the paths, ns: gpu_ns + cpu_ns
--   gpu_ns                          its GPU events on the paths, ns
--   cpu_ns                          the CPU stretches, launch edges and syncs it accounts for, ns
--   path_pct                        100 path_ns / the summed iteration_ns of the trace's steps
CREATE OR REPLACE VIEW critical_path_ops AS
SELECT c.trace_id, c.op_name, count(DISTINCT c.step_event_id) AS steps, sum(c.dur_ns)::BIGINT AS path_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind LIKE 'gpu\_%' ESCAPE '\'), 0)::BIGINT AS gpu_ns,
       coalesce(sum(c.dur_ns) FILTER (WHERE c.kind NOT LIKE 'gpu\_%' ESCAPE '\'), 0)::BIGINT AS cpu_ns,
       100.0 * sum(c.dur_ns) / any_value(c.total_ns) AS path_pct
FROM (SELECT *, sum(dur_ns) OVER (PARTITION BY trace_id) AS total_ns FROM critical_path) c
WHERE c.op_name IS NOT NULL
GROUP BY c.trace_id, c.op_name;
