-- gpu/queue_length — the launch queue of each GPU stream: work launched by the CPU and not yet started on the GPU.
-- The depth rises by one at each launch call whose GPU work is in the trace (a kernel, memcpy or memset launch;
-- a graph launch once per GPU event of the graph) and falls by one when that work starts on the GPU.
--
-- @requires gpu/activity

-- _queue_length_steps: one row per (GPU event, side): +1 at the start of its launch call, -1 at its GPU start,
-- on the event's (trace, device, stream); events without a launch in the trace (warm-up work) take no part.
CREATE OR REPLACE VIEW _queue_length_steps AS
SELECT trace_id, device, stream, launch_ts_ns AS ts_ns, 1 AS delta FROM _gpu_activity_core
WHERE launch_event_id IS NOT NULL
UNION ALL
SELECT trace_id, device, stream, ts_ns, -1 FROM _gpu_activity_core WHERE launch_event_id IS NOT NULL;

-- queue_length_changes: one row per (trace, device, stream, time) at which the stream's queue depth changes
-- (the launches and GPU starts at one time are applied together, so the order of equal times does not matter).
--   trace_id, device, stream   the stream (device NULL when the trace does not say)
--   ts_ns                      the time of the change, ns (trace clock)
--   launched, started          launch calls and GPU starts at that time
--   depth                      queue depth from ts_ns until the next change: launched so far - started so far
--                              (negative only when a GPU start precedes its launch call on the trace's clocks)
--   held_ns                    how long that depth holds: next change - ts_ns, ns (NULL after the last change)
CREATE OR REPLACE VIEW queue_length_changes AS
WITH c AS (
    SELECT trace_id, device, stream, ts_ns, count(*) FILTER (WHERE delta > 0) AS launched,
           count(*) FILTER (WHERE delta < 0) AS started, sum(delta) AS delta
    FROM _queue_length_steps GROUP BY trace_id, device, stream, ts_ns
)
SELECT trace_id, device, stream, ts_ns, launched, started,
       sum(delta) OVER w::BIGINT AS depth, lead(ts_ns) OVER (PARTITION BY trace_id, device, stream ORDER BY ts_ns)
           - ts_ns AS held_ns
FROM c
WINDOW w AS (PARTITION BY trace_id, device, stream ORDER BY ts_ns ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);

-- queue_length_summary_at(full_depth): one row per (trace, device, stream) with launched work.
--   trace_id, device, stream   the stream
--   launches                   GPU events counted (each raised the depth once and lowered it once)
--   span_ns                    first change (a launch) to last change (a GPU start), ns
--   max_depth                  the deepest the queue got
--   mean_depth                 time-weighted mean depth over the span: sum(depth x held_ns) / span_ns (a depth
--                              held for 1 ms weighs a thousand times one held for 1 µs)
--   full_ns                    time the depth was at or above full_depth, ns
--   full_pct                   100 x full_ns / span_ns
CREATE OR REPLACE MACRO queue_length_summary_at(full_depth) AS TABLE
SELECT trace_id, device, stream, sum(launched)::BIGINT AS launches, max(ts_ns) - min(ts_ns) AS span_ns,
       max(depth) AS max_depth,
       sum(depth * held_ns) / nullif(max(ts_ns) - min(ts_ns), 0) AS mean_depth,
       coalesce(sum(held_ns) FILTER (WHERE depth >= full_depth), 0)::BIGINT AS full_ns,
       100.0 * coalesce(sum(held_ns) FILTER (WHERE depth >= full_depth), 0)
           / nullif(max(ts_ns) - min(ts_ns), 0) AS full_pct
FROM queue_length_changes
GROUP BY trace_id, device, stream;

-- queue_length_summary: queue_length_summary_at(1024), the depth HTA calls a full launch queue.
-- @output report-native 14 queue_length COLUMNS trace_id trace device stream launches span_ns:us max_depth \
--     mean_depth full_ns:us full_pct \
--     TITLE "Launch queue per stream" \
--     ABOUT "Work launched and not yet started on the GPU, per stream: deepest, time-weighted mean over the stream's span, time at or above 1024 (µs)." \
--     ORDER BY trace, device, stream
CREATE OR REPLACE VIEW queue_length_summary AS SELECT * FROM queue_length_summary_at(1024);
