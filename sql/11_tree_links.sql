-- 11_tree_links.sql — which CPU runtime call launched each piece of GPU work.
--
-- Native rule (column `linked`): a GPU event (any row of `kernels`) is linked to the cuda_runtime /
-- cuda_driver call of the same trace that carries the same correlation id (args.correlation, JAX
-- correlation_id). Correlation ids repeat across traces (ranks), so the join is always per trace_id.
-- When a GPU event has no correlation of its own, the id of the ac2g flow that ends on it (same pid,
-- tid and timestamp) is used instead. A graph launch (cudaGraphLaunch / hipGraphLaunch) owns every GPU
-- event with its correlation: AMD graph replays write many ac2g flow ends and no flow start, so flows
-- are never required. `External id` is an op-level id (in traces up to PyTorch 2.3 it often equals the
-- correlation number by accident) and is never used for linking. GPU events without a launch in the
-- trace (warm-up kernels launched before the CPU window opened) are kept, with linked = false.
--
-- TraceLens's rule (column `tl_linked`, PEERS.md): only kernel / gpu_memcpy / gpu_memset events; a graph
-- launch owns every such event with its correlation; any other runtime/driver call reaches its GPU event
-- only through an ac2g pair — a flow start `s` and a flow end `f` with the call's correlation as id —
-- and the flow end's pid/tid must be those of the GPU event (where ids repeat, the last flow end and
-- the last GPU event in file order win, as in TraceLens's dictionaries).

-- Helper: runtime / driver calls that carry a correlation id (at most one per trace and correlation:
-- the first in file order).
CREATE OR REPLACE VIEW _tree_runtime_calls AS
WITH first_call AS (
    SELECT trace_id, correlation, min(event_id) AS event_id FROM events
    WHERE cat IN ('cuda_runtime', 'cuda_driver') AND correlation IS NOT NULL
    GROUP BY trace_id, correlation
)
SELECT e.trace_id, e.event_id, e.name, e.cat, e.pid, e.tid, e.ts_ns, e.dur_ns, e.correlation, l.launch_kind
FROM first_call f
-- first_call's filter is repeated on this scan of events (true of every first call) so that it is cut before the join
JOIN events e ON e.trace_id = f.trace_id AND e.event_id = f.event_id
 AND e.cat IN ('cuda_runtime', 'cuda_driver') AND e.correlation IS NOT NULL
LEFT JOIN launches l ON l.trace_id = e.trace_id AND l.event_id = e.event_id;

-- gpu_launch_links (stored table, see tracesql/schema.py): one row per row of `kernels` (linked or not) and
-- the runtime call that launched it. `tracesql ingest` computes it once per trace with the view below
-- (_gpu_launch_links_build) and stores it as DATASET/traces/trace_id=<id>/gpu_launch_links/.
--   trace_id, event_id         the GPU event
--   cat, name, pid, tid        as in `kernels` (cat: kernel, gpu_memcpy, gpu_memset, cuda_sync)
--   device, stream             GPU device and stream
--   ts_ns, dur_ns              GPU start and duration, ns
--   correlation                the correlation id used for linking (the event's own, else its ac2g flow's)
--   launch_event_id            the runtime/driver call with that correlation (NULL: none in the trace)
--   launch_name, launch_cat    its name (cudaLaunchKernel, hipGraphLaunch, ...) and category
--   launch_kind                'kernel', 'graph', 'memcpy', 'memset' (from `launches`), or NULL for other
--                              calls (e.g. cudaStreamSynchronize for a cuda_sync row)
--   launch_pid, launch_tid     the CPU thread of the call
--   launch_ts_ns, launch_dur_ns  start and duration of the call, ns
--   link_via                   'graph' (graph launch), 'ac2g' (a flow start and end with the id exist),
--                              'correlation' (plain correlation match), NULL when not linked
--   linked                     has a launch under the native rule above
--   tl_linked                  linked under TraceLens's rule (see above)
CREATE OR REPLACE VIEW _gpu_launch_links_build AS
WITH flows AS MATERIALIZED (
    SELECT trace_id, flow_id, ph, pid, tid, ts_ns, event_id
    FROM correlations WHERE cat = 'ac2g' AND flow_id IS NOT NULL
), flow_starts AS (
    SELECT DISTINCT trace_id, flow_id FROM flows WHERE ph = 's'
), flow_last_end AS (   -- TraceLens keeps the last flow end per id
    SELECT trace_id, flow_id, arg_max(pid, event_id) AS pid, arg_max(tid, event_id) AS tid
    FROM flows WHERE ph = 'f' GROUP BY trace_id, flow_id
), k AS MATERIALIZED (
    SELECT trace_id, event_id, cat, name, pid, tid, device, stream, ts_ns, dur_ns, correlation
    FROM kernels WHERE correlation IS NOT NULL
    UNION ALL   -- no correlation of its own: the id of the ac2g flow that ends on it
    SELECT k.trace_id, k.event_id, k.cat, k.name, k.pid, k.tid, k.device, k.stream, k.ts_ns, k.dur_ns,
           min(f.flow_id)
    FROM kernels k
    LEFT JOIN flows f ON f.ph = 'f' AND f.trace_id = k.trace_id AND f.pid = k.pid AND f.tid = k.tid
                     AND f.ts_ns = k.ts_ns
    WHERE k.correlation IS NULL
    GROUP BY ALL
), last_gpu AS (   -- TraceLens keys GPU events by (pid, tid, correlation); the last one wins
    SELECT trace_id, max(event_id) AS event_id FROM k WHERE correlation IS NOT NULL
    GROUP BY trace_id, pid, tid, correlation
)
SELECT k.trace_id, k.event_id, k.cat, k.name, k.pid, k.tid, k.device, k.stream, k.ts_ns, k.dur_ns,
       k.correlation,
       r.event_id AS launch_event_id, r.name AS launch_name, r.cat AS launch_cat, r.launch_kind,
       r.pid AS launch_pid, r.tid AS launch_tid, r.ts_ns AS launch_ts_ns, r.dur_ns AS launch_dur_ns,
       CASE WHEN r.event_id IS NULL THEN NULL
            WHEN r.name IN ('cudaGraphLaunch', 'hipGraphLaunch') THEN 'graph'
            WHEN fs.flow_id IS NOT NULL AND fe.flow_id IS NOT NULL THEN 'ac2g'
            ELSE 'correlation' END AS link_via,
       r.event_id IS NOT NULL AS linked,
       coalesce(k.cat IN ('kernel', 'gpu_memcpy', 'gpu_memset') AND r.event_id IS NOT NULL AND (
           r.name IN ('cudaGraphLaunch', 'hipGraphLaunch')
           OR (fs.flow_id IS NOT NULL AND fe.pid = k.pid AND fe.tid = k.tid AND lg.event_id IS NOT NULL)
       ), false) AS tl_linked
FROM k
LEFT JOIN _tree_runtime_calls r ON r.trace_id = k.trace_id AND r.correlation = k.correlation
LEFT JOIN flow_starts fs ON fs.trace_id = k.trace_id AND fs.flow_id = k.correlation
LEFT JOIN flow_last_end fe ON fe.trace_id = k.trace_id AND fe.flow_id = k.correlation
LEFT JOIN last_gpu lg ON lg.trace_id = k.trace_id AND lg.event_id = k.event_id;

-- graph_capture_links: one row per GPU event of a graph replay matched to the launch call that recorded it
-- in a capture trace of the same dataset (TraceLens's capture merge, PEERS.md / its inference report).
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

-- gpu_link_summary: one row per trace: how much of its GPU work has a launch in the trace.
--   trace_id                 the trace (every trace, CPU-only ones with zeros)
--   gpu_events               rows of `kernels` (kernel, gpu_memcpy, gpu_memset, cuda_sync)
--   linked_events            of those, linked to a runtime call (native rule)
--   unlinked_events          not linked: kept everywhere, flagged linked = false
--   unlinked_dur_ns          Σ dur_ns of the unlinked events
--   tl_linked_events         linked under TraceLens's rule (kernel/memcpy/memset only)
--   graph_replay_events      linked to a graph launch
--   capture_merged_events    graph replay events matched to a capture trace (graph_capture_links)
CREATE OR REPLACE VIEW gpu_link_summary AS
WITH l AS (
    SELECT trace_id, count(*) AS gpu_events, count(*) FILTER (WHERE linked) AS linked_events,
           count(*) FILTER (WHERE NOT linked) AS unlinked_events,
           coalesce(sum(dur_ns) FILTER (WHERE NOT linked), 0) AS unlinked_dur_ns,
           count(*) FILTER (WHERE tl_linked) AS tl_linked_events,
           count(*) FILTER (WHERE link_via = 'graph') AS graph_replay_events
    FROM gpu_launch_links GROUP BY trace_id
), c AS (
    SELECT trace_id, count(*) AS capture_merged_events FROM graph_capture_links GROUP BY trace_id
)
SELECT t.trace_id, coalesce(l.gpu_events, 0) AS gpu_events, coalesce(l.linked_events, 0) AS linked_events,
       coalesce(l.unlinked_events, 0) AS unlinked_events, coalesce(l.unlinked_dur_ns, 0)::BIGINT AS unlinked_dur_ns,
       coalesce(l.tl_linked_events, 0) AS tl_linked_events,
       coalesce(l.graph_replay_events, 0) AS graph_replay_events,
       coalesce(c.capture_merged_events, 0) AS capture_merged_events
FROM traces t LEFT JOIN l USING (trace_id) LEFT JOIN c USING (trace_id);
