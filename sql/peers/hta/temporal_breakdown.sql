-- peers/hta/temporal_breakdown — HTA's temporal breakdown per rank.
--
-- @requires peers/hta/base

-- hta_temporal_breakdown: one row per trace (rank), HTA's temporal breakdown.
--   rank                    distributed rank (0 when the trace has none)
--   idle_time(us)           kernel_time - |U(all GPU events)|
--   compute_time(us)        |U(COMPUTATION events)|
--   non_compute_time(us)    kernel_time - compute - idle
--   kernel_time(us)         last GPU end - first GPU start
--   *_pctg                  100 x / kernel_time, rounded to 2 decimals
-- @output report-hta 1 temporal_breakdown
CREATE OR REPLACE VIEW hta_temporal_breakdown AS
WITH u AS (
    SELECT a.trace_id, a.grp AS rank, a.last_e - a.first_s AS kernel_time,
           (a.last_e - a.first_s) - a.union_len AS idle_time, coalesce(c.union_len, 0.0) AS compute_time
    FROM _hta_unions a
    LEFT JOIN _hta_unions c ON c.trace_id = a.trace_id AND c.grp = a.grp AND c.set_name = 'COMPUTATION'
    WHERE a.set_name = 'ALL'
)
SELECT trace_id, rank, idle_time AS "idle_time(us)", compute_time AS "compute_time(us)",
       kernel_time - compute_time - idle_time AS "non_compute_time(us)", kernel_time AS "kernel_time(us)",
       round(100 * (idle_time / kernel_time), 2) AS idle_time_pctg,
       round(100 * (compute_time / kernel_time), 2) AS compute_time_pctg,
       round(100 * ((kernel_time - compute_time - idle_time) / kernel_time), 2) AS non_compute_time_pctg
FROM u;
