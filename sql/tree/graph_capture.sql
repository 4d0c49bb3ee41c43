-- tree/graph_capture — GPU events of a CUDA/HIP graph replay matched to the calls that recorded them in
-- a capture trace of the same dataset.
--
-- @requires tree/links

-- _graph_replay_events: the GPU events of every graph launch (kernel, gpu_memcpy, gpu_memset).
--   trace_id, graph_launch_event_id, graph_index   the cudaGraphLaunch / hipGraphLaunch call and its 1-based
--                                                  rank among the trace's graph launches (by event_id)
--   event_id, name, ts_ns, dur_ns                  the GPU event
--   ordinal, n_events                              its 1-based rank in the launch by (ts, event_id); the launch's count
CREATE OR REPLACE VIEW _graph_replay_events AS
WITH graph_roots AS (
    SELECT r.trace_id, r.event_id AS graph_launch_event_id, r.correlation,
           row_number() OVER (PARTITION BY r.trace_id ORDER BY r.event_id) AS graph_index
    FROM launches r WHERE r.launch_kind = 'graph' AND r.correlation IS NOT NULL
)
SELECT g.trace_id, g.graph_launch_event_id, g.graph_index, k.event_id, k.name, k.ts_ns, k.dur_ns,
       row_number() OVER (PARTITION BY g.trace_id, g.graph_index ORDER BY k.ts_ns, k.event_id) AS ordinal,
       count(*) OVER (PARTITION BY g.trace_id, g.graph_index) AS n_events
FROM graph_roots g JOIN kernels k ON k.trace_id = g.trace_id AND k.correlation = g.correlation
WHERE k.cat IN ('kernel', 'gpu_memcpy', 'gpu_memset');

-- _graph_capture_calls: the launch calls recorded inside each graph capture of a trace.
--   trace_id, graph_index        the capture trace and the capture window (1-based, by event_id: from the end of
--                                *StreamBeginCapture to the start of the next *StreamEndCapture)
--   root_event_id, root_ts_ns    the longest CPU event that starts inside the window, and its start (ns)
--   event_id, name               a runtime/driver call whose name contains 'launch' or 'memcpy', inside the
--                                root, on its thread
--   ordinal, n_calls             its 1-based rank in the window by (ts, event_id); the window's count
--   kernel_name                  the call's args.kernel (ROCm launches name their kernel; CUDA's do not: NULL)
-- @materialize tree report perf summary diff twins
CREATE OR REPLACE VIEW _graph_capture_calls AS
WITH begins AS (
    SELECT trace_id, ts_ns + dur_ns AS t0, row_number() OVER (PARTITION BY trace_id ORDER BY event_id) AS k
    FROM events WHERE cat IN ('cuda_runtime', 'cuda_driver') AND contains(name, 'StreamBeginCapture')
), ends AS (
    SELECT trace_id, ts_ns AS t1, row_number() OVER (PARTITION BY trace_id ORDER BY event_id) AS k
    FROM events WHERE cat IN ('cuda_runtime', 'cuda_driver') AND contains(name, 'StreamEndCapture')
), windows AS (
    SELECT b.trace_id, b.k AS graph_index, b.t0, e.t1 FROM begins b JOIN ends e USING (trace_id, k)
), roots AS (
    SELECT w.trace_id, w.graph_index, e.event_id AS root_event_id, e.pid, e.tid, e.ts_ns AS r0,
           e.ts_ns + e.dur_ns AS r1
    FROM windows w JOIN events e ON e.trace_id = w.trace_id AND e.ts_ns BETWEEN w.t0 AND w.t1
    WHERE e.dur_ns IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY w.trace_id, w.graph_index ORDER BY e.dur_ns DESC, e.event_id) = 1
), calls AS (
    SELECT r.trace_id, r.graph_index, r.root_event_id, r.r0 AS root_ts_ns, e.event_id, e.name,
           row_number() OVER (PARTITION BY r.trace_id, r.graph_index ORDER BY e.ts_ns, e.event_id) AS ordinal,
           count(*) OVER (PARTITION BY r.trace_id, r.graph_index) AS n_calls
    FROM roots r JOIN events e ON e.trace_id = r.trace_id AND e.pid = r.pid AND e.tid = r.tid
     AND e.ts_ns BETWEEN r.r0 AND r.r1
    WHERE e.cat IN ('cuda_runtime', 'cuda_driver')
      AND (contains(lower(e.name), 'launch') OR contains(lower(e.name), 'memcpy'))
), call_args AS (   -- args.kernel of the capture calls (the args text is read for those calls only)
    SELECT trace_id, event_id, json_extract_string(args, '$.kernel') AS kernel_name FROM events
    WHERE (trace_id, event_id) IN (SELECT trace_id, event_id FROM calls)
)
SELECT c.*, a.kernel_name
FROM calls c LEFT JOIN call_args a USING (trace_id, event_id);

-- graph_capture_links: one row per GPU event of a graph replay matched to the launch call that recorded it
-- in a capture trace of the same dataset (TraceLens's capture merge, docs/peers.md / its inference report).
--   trace_id, event_id           the GPU event replayed by the graph (kernel, gpu_memcpy, gpu_memset)
--   graph_launch_event_id        the cudaGraphLaunch / hipGraphLaunch call that owns it
--   graph_index                  1-based rank of that graph launch among the trace's graph launches
--   ordinal                      1-based rank of the GPU event among the launch's GPU events (by ts)
--   capture_trace_id             the capture trace
--   capture_root_event_id        the longest CPU event that starts inside capture window graph_index
--                                (from the end of *StreamBeginCapture to the start of *StreamEndCapture)
--   capture_root_ts_ns           its start, ns (capture trace clock)
--   capture_launch_event_id      the ordinal-th launch call (runtime/driver, name containing 'launch' or
--                                'memcpy') inside the capture root, on its thread, by ts
--   capture_launch_name          its name
--   names_match                  the GPU event's name equals the capture call's args.kernel (NULL when the
--                                call has no args.kernel)
-- Pairing rule: a graph trace and a capture trace are paired when they are different traces of the same
-- rank (or both without a rank) and, for every graph launch k that has a capture window k, the number of
-- GPU events of launch k equals the number of launch calls inside capture root k. When several capture
-- traces qualify, the one with the smallest trace_id is used. (The native attribution, tree/graph_twins,
-- places each graph launch on its own instead.)
-- @materialize tree
CREATE OR REPLACE VIEW graph_capture_links AS
WITH graph_events AS MATERIALIZED (
    SELECT * FROM _graph_replay_events
), capture_calls AS MATERIALIZED (
    SELECT * FROM _graph_capture_calls
), counts_g AS (
    SELECT DISTINCT trace_id, graph_index, n_events FROM graph_events
), counts_c AS (
    SELECT DISTINCT trace_id, graph_index, n_calls FROM capture_calls
), pairs AS (
    SELECT g.trace_id AS graph_trace_id, c.trace_id AS capture_trace_id
    FROM counts_g g JOIN counts_c c ON c.graph_index = g.graph_index AND c.trace_id <> g.trace_id
    JOIN traces tg ON tg.trace_id = g.trace_id JOIN traces tc ON tc.trace_id = c.trace_id
    WHERE tg.rank IS NOT DISTINCT FROM tc.rank
    GROUP BY g.trace_id, c.trace_id
    HAVING bool_and(g.n_events = c.n_calls)
    QUALIFY row_number() OVER (PARTITION BY g.trace_id ORDER BY c.trace_id) = 1
)
SELECT g.trace_id, g.event_id, g.graph_launch_event_id, g.graph_index, g.ordinal,
       p.capture_trace_id, c.root_event_id AS capture_root_event_id, c.root_ts_ns AS capture_root_ts_ns,
       c.event_id AS capture_launch_event_id,
       c.name AS capture_launch_name,
       CASE WHEN c.kernel_name IS NOT NULL THEN g.name = c.kernel_name END AS names_match
FROM pairs p
JOIN graph_events g ON g.trace_id = p.graph_trace_id
JOIN capture_calls c ON c.trace_id = p.capture_trace_id AND c.graph_index = g.graph_index
 AND c.ordinal = g.ordinal;
