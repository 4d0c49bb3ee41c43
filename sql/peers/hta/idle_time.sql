-- peers/hta/idle_time — HTA's idle time breakdown per stream.
--
-- @requires peers/hta/base

-- _hta_stream_gaps: kernel/memcpy/memset events per (trace, stream) in start order with HTA's idle interval
-- (start - end of the previous event on the stream; negative when they overlap, NULL for the first).
CREATE OR REPLACE VIEW _hta_stream_gaps AS
SELECT trace_id, rank, stream, event_id, ts_us, ts_runtime_us,
       lag(end_us) OVER w AS prev_end_us, ts_us - lag(end_us) OVER w AS idle_interval_us
FROM _hta_gpu
WHERE cat IN ('kernel', 'gpu_memcpy', 'gpu_memset')
WINDOW w AS (PARTITION BY trace_id, stream ORDER BY ts_us, event_id);

-- hta_idle_time_breakdown_at(kernel_wait_us): HTA's idle time breakdown with its consecutive-kernel delay
-- (HTA documents it in ns but compares it with µs gaps; the default is 30). One row per (trace, stream,
-- category present):
--   rank, stream, idle_category   host_wait (the launching call started after the previous event on the
--                                 stream ended), kernel_wait (otherwise, gap < kernel_wait_us), other
--   idle_time                     sum of the gaps of that category, µs, rounded to 2 decimals
--   idle_time_ratio               share of the stream's idle time, rounded to 2 decimals
--   idle_time_us, ratio           the same unrounded
--   count                         gaps in the category (the first event of a stream counts as 'other'
--                                 with no gap, as in HTA)
CREATE OR REPLACE MACRO hta_idle_time_breakdown_at(kernel_wait_us) AS TABLE
WITH c AS (
    SELECT *, CASE WHEN ts_runtime_us > prev_end_us THEN 'host_wait'
                   WHEN idle_interval_us < kernel_wait_us THEN 'kernel_wait' ELSE 'other' END AS idle_category
    FROM _hta_stream_gaps
), s AS (
    SELECT trace_id, rank, stream, idle_category, coalesce(fsum(idle_interval_us), 0.0) AS idle_time_us,
           count(idle_interval_us) AS count
    FROM c GROUP BY ALL
)
SELECT trace_id, rank, stream, idle_category, round(idle_time_us, 2) AS idle_time,
       round(idle_time_us / sum(idle_time_us) OVER (PARTITION BY trace_id, stream), 2) AS idle_time_ratio,
       idle_time_us, idle_time_us / sum(idle_time_us) OVER (PARTITION BY trace_id, stream) AS ratio, count
FROM s
ORDER BY trace_id, stream, idle_category;

-- hta_idle_time_breakdown: hta_idle_time_breakdown_at(30), HTA's default.
-- @output report-hta 2 idle_time_breakdown EXCLUDE idle_time_us ratio count ORDER BY trace_id, stream, idle_category
CREATE OR REPLACE VIEW hta_idle_time_breakdown AS SELECT * FROM hta_idle_time_breakdown_at(30);
