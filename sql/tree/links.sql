-- tree/links — which CPU runtime call launched each piece of GPU work.
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
-- TraceLens's narrower rule is reproduced at query time by sql/peers/tracelens/links.sql.
--
-- @stores gpu_launch_links FROM _gpu_launch_links_build

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

-- gpu_launch_links (stored table, see tracesql/store/schema.py): one row per row of `kernels` (linked or not) and
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
CREATE OR REPLACE VIEW _gpu_launch_links_build AS
WITH flows AS MATERIALIZED (
    SELECT trace_id, flow_id, ph, pid, tid, ts_ns, event_id
    FROM correlations WHERE cat = 'ac2g' AND flow_id IS NOT NULL
), flow_starts AS (
    SELECT DISTINCT trace_id, flow_id FROM flows WHERE ph = 's'
), flow_ends AS (
    SELECT DISTINCT trace_id, flow_id FROM flows WHERE ph = 'f'
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
)
SELECT k.trace_id, k.event_id, k.cat, k.name, k.pid, k.tid, k.device, k.stream, k.ts_ns, k.dur_ns,
       k.correlation,
       r.event_id AS launch_event_id, r.name AS launch_name, r.cat AS launch_cat, r.launch_kind,
       r.pid AS launch_pid, r.tid AS launch_tid, r.ts_ns AS launch_ts_ns, r.dur_ns AS launch_dur_ns,
       CASE WHEN r.event_id IS NULL THEN NULL
            WHEN r.name IN ('cudaGraphLaunch', 'hipGraphLaunch') THEN 'graph'
            WHEN fs.flow_id IS NOT NULL AND fe.flow_id IS NOT NULL THEN 'ac2g'
            ELSE 'correlation' END AS link_via,
       r.event_id IS NOT NULL AS linked
FROM k
LEFT JOIN _tree_runtime_calls r ON r.trace_id = k.trace_id AND r.correlation = k.correlation
LEFT JOIN flow_starts fs ON fs.trace_id = k.trace_id AND fs.flow_id = k.correlation
LEFT JOIN flow_ends fe ON fe.trace_id = k.trace_id AND fe.flow_id = k.correlation;
