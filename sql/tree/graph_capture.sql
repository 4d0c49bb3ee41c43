-- tree/graph_capture — GPU events of a CUDA/HIP graph replay matched to the calls that recorded them in
-- a capture trace of the same dataset.
--
-- @requires tree/links

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
-- traces qualify, the one with the smallest trace_id is used.
-- @materialize tree
CREATE OR REPLACE VIEW graph_capture_links AS
WITH graph_roots AS (
    SELECT r.trace_id, r.event_id AS graph_launch_event_id, r.correlation,
           row_number() OVER (PARTITION BY r.trace_id ORDER BY r.event_id) AS graph_index
    FROM launches r WHERE r.launch_kind = 'graph' AND r.correlation IS NOT NULL
), graph_events AS (
    SELECT g.trace_id, g.graph_launch_event_id, g.graph_index, k.event_id, k.name,
           row_number() OVER (PARTITION BY g.trace_id, g.graph_index ORDER BY k.ts_ns, k.event_id) AS ordinal,
           count(*) OVER (PARTITION BY g.trace_id, g.graph_index) AS n_events
    FROM graph_roots g JOIN kernels k ON k.trace_id = g.trace_id AND k.correlation = g.correlation
    WHERE k.cat IN ('kernel', 'gpu_memcpy', 'gpu_memset')
), begins AS (
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
), capture_calls AS (
    SELECT r.trace_id, r.graph_index, r.root_event_id, r.r0 AS root_ts_ns, e.event_id, e.name,
           row_number() OVER (PARTITION BY r.trace_id, r.graph_index ORDER BY e.ts_ns, e.event_id) AS ordinal,
           count(*) OVER (PARTITION BY r.trace_id, r.graph_index) AS n_calls
    FROM roots r JOIN events e ON e.trace_id = r.trace_id AND e.pid = r.pid AND e.tid = r.tid
     AND e.ts_ns BETWEEN r.r0 AND r.r1
    WHERE e.cat IN ('cuda_runtime', 'cuda_driver')
      AND (contains(lower(e.name), 'launch') OR contains(lower(e.name), 'memcpy'))
), call_args AS (   -- args.kernel of the capture calls (the args text is read for those calls only)
    SELECT trace_id, event_id, json_extract_string(args, '$.kernel') AS kernel_name FROM events
    WHERE (trace_id, event_id) IN (SELECT trace_id, event_id FROM capture_calls)
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
       CASE WHEN a.kernel_name IS NOT NULL THEN g.name = a.kernel_name END AS names_match
FROM pairs p
JOIN graph_events g ON g.trace_id = p.graph_trace_id
JOIN capture_calls c ON c.trace_id = p.capture_trace_id AND c.graph_index = g.graph_index
 AND c.ordinal = g.ordinal
LEFT JOIN call_args a ON a.trace_id = c.trace_id AND a.event_id = c.event_id;
