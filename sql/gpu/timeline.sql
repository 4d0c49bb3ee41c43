-- gpu/timeline — the GPU timeline (native definition): how the time between the first and the last GPU activity of a device
-- is spent: computation, communication, memory operations, idle.
--
-- Which events count: every row of gpu_activity except cuda_sync waits, whether or not its launch is in
-- the trace (warm-up kernels launched before the CPU window count too: the GPU was busy with them).
-- Classes (gpu_activity.activity_class, from the category rules): compute, comm (communication), memory =
-- memcpy + memset; a user rule that makes a kernel communication moves its time here too.
-- Times are lengths of unions of closed intervals [ts, ts + dur] (touching intervals merge), exact in ns.
-- "span" is first GPU start to last GPU end of the rows' events; the profiler window (first to last
-- event of any kind in the trace) is given beside it as window_ns.
--
-- @requires lib/intervals gpu/activity
-- @stores gpu_timeline_all FROM _gpu_timeline_all_build
-- @build-temp _gpu_names UNTIL gpu_timeline_all
-- @build-temp _gpu_activity_core UNTIL gpu_timeline_all

-- _gt_events: the counted GPU events with their class for the unions (cls C compute, K comm, M memcpy and
-- memset). _gt_multi_device: the traces whose GPU events run on more than one device.
-- _gt_members / _gt_step_members: each event once per grouping {pooled, device, step}: device rows, plus
-- pooled rows (all devices of the trace unioned) for traces with several devices (for one device the
-- pooled row is a copy, made below); step rows only for events launched inside a ProfilerStep.
-- The grouping is one integer, grp = (step_event_id + 1) * 2^20 + device code, so that the window of
-- _class_unions partitions on integers: step part 0 for the whole trace; device code 0 for the pooled
-- row, 1 for events without a device, device + 2 otherwise (device ids below 2^20 - 2).
CREATE OR REPLACE VIEW _gt_events AS
SELECT trace_id, device, step_event_id, ts_ns AS s, end_ns AS e,
       CASE activity_class WHEN 'compute' THEN 'C' WHEN 'comm' THEN 'K' ELSE 'M' END AS cls,
       CASE WHEN device IS NULL THEN 1 ELSE device + 2 END AS dev_code
FROM _gpu_activity_core
WHERE activity_class <> 'sync';

CREATE OR REPLACE VIEW _gt_multi_device AS
SELECT trace_id FROM _gpu_activity_core GROUP BY trace_id HAVING count(DISTINCT coalesce(device, -1)) > 1;

CREATE OR REPLACE VIEW _gt_members AS
SELECT trace_id, dev_code::BIGINT AS grp, cls, s, e FROM _gt_events
UNION ALL
SELECT trace_id, 0::BIGINT, cls, s, e FROM _gt_events WHERE trace_id IN (SELECT trace_id FROM _gt_multi_device);

CREATE OR REPLACE VIEW _gt_step_members AS
SELECT trace_id, ((step_event_id + 1) << 20) + dev_code AS grp, cls, s, e FROM _gt_events
WHERE step_event_id IS NOT NULL
UNION ALL
SELECT trace_id, (step_event_id + 1) << 20, cls, s, e FROM _gt_events
WHERE step_event_id IS NOT NULL AND trace_id IN (SELECT trace_id FROM _gt_multi_device);

-- _gt_unions / _gt_step_unions: _class_unions per grouping; the pooled grouping of a one-device trace is a
-- copy of its device grouping.
CREATE OR REPLACE MACRO _gt_with_pooled_copy(members) AS TABLE
WITH u AS (SELECT * FROM _class_unions(members))
SELECT * FROM u
UNION ALL
SELECT trace_id, (grp >> 20) << 20, u.* EXCLUDE (trace_id, grp)
FROM u WHERE trace_id NOT IN (SELECT trace_id FROM _gt_multi_device);

CREATE OR REPLACE VIEW _gt_unions AS SELECT * FROM _gt_with_pooled_copy('_gt_members');

CREATE OR REPLACE VIEW _gt_step_unions AS SELECT * FROM _gt_with_pooled_copy('_gt_step_members');

-- _trace_window: the profiler window of each trace: first start to last end over CPU and GPU events.
CREATE OR REPLACE VIEW _trace_window AS
SELECT trace_id, min(s) AS window_start_ns, max(e) AS window_end_ns
FROM (SELECT trace_id, ts_ns AS s, ts_ns + coalesce(dur_ns, 0) AS e FROM events
      UNION ALL SELECT trace_id, ts_ns, ts_ns + dur_ns FROM kernels)
GROUP BY trace_id;

-- gpu_timeline_all (stored table, see tracesql/store/schema.py): one row per (trace, device, step) grouping; device
-- NULL = all devices of the trace pooled (a moment counts as busy when any device is busy), step NULL = the
-- whole trace, else the GPU events launched inside that ProfilerStep#N. `tracesql ingest` stores the rows of
-- _gpu_timeline_all_build (below; _gt_rows of each grouping) as DATASET/traces/trace_id=<id>/gpu_timeline_all/:
-- the interval unions take a sort of every GPU event per grouping, done once per trace.
--   trace_id, device, step       the grouping
--   pooled                       true for the all-devices row (device NULL there)
--   n_events                     GPU events counted (cuda_sync excluded)
--   first_start_ns, last_end_ns  first GPU start and last GPU end of those events, ns
--   span_ns                      last_end_ns - first_start_ns: the "total" of this table
--   compute_ns                   |U(compute)|
--   comm_ns, comm_exposed_ns     |U(comm)|, and the part not overlapped by compute |U(comm) - U(compute)|
--   memory_ns, memory_exposed_ns |U(memcpy, memset)|, and the part overlapped by neither compute nor comm
--   busy_ns                      |U(all counted events)|
--   idle_ns                      span_ns - busy_ns
--   *_pct                        each of the above as a percentage of span_ns
--   comm_overlap_pct             share of comm time overlapped by compute: 100 (comm - exposed) / comm
--   window_ns                    whole-trace rows: the profiler window (first to last event of any kind in
--                                the trace); step rows: the ProfilerStep's CPU duration
CREATE OR REPLACE MACRO _gt_rows(unions) AS TABLE
WITH p AS (
    SELECT trace_id, grp, C_len, K_len, M_len, CK_len, ALL_len, first_s AS ALL_fs, last_e AS ALL_le, n AS ALL_n
    FROM query_table(unions)
), t AS (
    SELECT trace_id, (grp & 1048575) = 0 AS pooled,
           CASE WHEN (grp & 1048575) > 1 THEN (grp & 1048575) - 2 END::INTEGER AS device,
           nullif(grp >> 20, 0) - 1 AS step_event_id, ALL_n::BIGINT AS n_events,
           ALL_fs AS first_start_ns, ALL_le AS last_end_ns, ALL_le - ALL_fs AS span_ns,
           coalesce(C_len, 0)::BIGINT AS compute_ns, coalesce(K_len, 0)::BIGINT AS comm_ns,
           (coalesce(CK_len, 0) - coalesce(C_len, 0))::BIGINT AS comm_exposed_ns,
           coalesce(M_len, 0)::BIGINT AS memory_ns, (ALL_len - coalesce(CK_len, 0))::BIGINT AS memory_exposed_ns,
           ALL_len::BIGINT AS busy_ns, ((ALL_le - ALL_fs) - ALL_len)::BIGINT AS idle_ns
    FROM p
)
SELECT t.trace_id, t.pooled, t.device, st.step, t.* EXCLUDE (trace_id, pooled, device, step_event_id),
       100.0 * compute_ns / nullif(span_ns, 0) AS compute_pct,
       100.0 * comm_ns / nullif(span_ns, 0) AS comm_pct,
       100.0 * comm_exposed_ns / nullif(span_ns, 0) AS comm_exposed_pct,
       100.0 * memory_ns / nullif(span_ns, 0) AS memory_pct,
       100.0 * memory_exposed_ns / nullif(span_ns, 0) AS memory_exposed_pct,
       100.0 * busy_ns / nullif(span_ns, 0) AS busy_pct,
       100.0 * idle_ns / nullif(span_ns, 0) AS idle_pct,
       100.0 * (comm_ns - comm_exposed_ns) / nullif(comm_ns, 0) AS comm_overlap_pct,
       st.step_end_ns - st.step_ts_ns AS window_ns
FROM t
LEFT JOIN _gpu_steps st ON st.trace_id = t.trace_id AND st.step_event_id = t.step_event_id;

-- _gt_trace_rows: _gt_rows of the whole-trace groupings, window_ns the profiler window.
CREATE OR REPLACE VIEW _gt_trace_rows AS
SELECT r.* REPLACE (w.window_end_ns - w.window_start_ns AS window_ns)
FROM _gt_rows('_gt_unions') r LEFT JOIN _trace_window w USING (trace_id);

-- _gpu_timeline_all_build: the rows of gpu_timeline_all (whole-trace rows first, step NULL there).
CREATE OR REPLACE VIEW _gpu_timeline_all_build AS
SELECT * FROM _gt_trace_rows UNION ALL SELECT * FROM _gt_rows('_gt_step_unions');

-- gpu_timeline: gpu_timeline_all for whole traces (step IS NULL): one row per (trace, device) plus one
-- row per trace with device NULL (all devices pooled; equal to the device row when there is one device).
-- @output report-native 1 gpu_timeline CALL timeline \
--     TITLE "GPU time: busy, idle, compute, exposed communication and memory" \
--     ABOUT "Per trace and device (and all devices pooled): the span from the first to the last GPU activity split into compute, communication and memory time not hidden by compute, and idle time; µs and % of the span."
CREATE OR REPLACE VIEW gpu_timeline AS
SELECT * EXCLUDE (step) FROM gpu_timeline_all WHERE step IS NULL;

-- gpu_timeline_by_step: gpu_timeline_all per ProfilerStep#N (GPU events whose launch started inside the
-- step's CPU range; the span runs from the first to the last of those events on the GPU).
-- @output report-native 2 gpu_timeline_by_step CALL timeline by_step=true \
--     TITLE "GPU time per profiler step" \
--     ABOUT "As the GPU timeline, for the GPU work of each ProfilerStep#N; µs and % of the step."
CREATE OR REPLACE VIEW gpu_timeline_by_step AS
SELECT * FROM gpu_timeline_all WHERE step IS NOT NULL;

-- comm_compute_overlap: per (trace, device) with communication (device NULL: pooled), how much of the
-- communication time is overlapped by computation.
--   comm_ns                  |U(comm)|;  overlapped_ns  |U(comm) ∩ U(compute)|
--   exposed_ns               comm_ns - overlapped_ns
--   overlap_pct              100 overlapped_ns / comm_ns
-- @output report-native 3 comm_compute_overlap \
--     COLUMNS trace_id trace device pooled comm_ns:us overlapped_ns:us exposed_ns:us overlap_pct \
--     TITLE "Communication overlapped by computation" \
--     ABOUT "Per trace and device: communication time, the part of it that computation overlaps and the exposed rest; µs." \
--     ORDER BY trace, pooled DESC, device
CREATE OR REPLACE VIEW comm_compute_overlap AS
SELECT trace_id, pooled, device, comm_ns, comm_ns - comm_exposed_ns AS overlapped_ns, comm_exposed_ns AS exposed_ns,
       comm_overlap_pct AS overlap_pct
FROM gpu_timeline WHERE comm_ns > 0;
