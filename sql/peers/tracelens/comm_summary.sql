-- peers/tracelens/comm_summary — TraceLens's two summaries of a job's collectives: nccl_summary_implicit_sync.csv
-- (per collective name, dtype and message size) and nccl_summary_long.csv (per rank and collective signature).
-- Facts credited to TraceLens 0.1.0 (AMD-AGI/TraceLens, MIT licence: TraceLens/NcclAnalyser/nccl_analyser.py,
-- NcclAnalyser.build_df_summary_nccl_implicit_sync_cat and build_df_summary_long, with the aggregations that
-- TraceLens/Reporting/generate_multi_rank_collective_report_pytorch.py asks for); the code is ours.
--
-- @requires peers/tracelens/comm_implicit_sync

-- tl_nccl_summary_implicit_sync: one row per (job, "Collective name", dtype, "In msg nelems") of
-- tl_nccl_implicit_sync, a missing key written 'Unknown' (so traces without metadata give one 'Unknown' row):
--   "Process Group Name", "Group size", "Full msg size (MB)"   the first non-missing value in the group
--   <metric>_mean, _median, _min, _max   for comm_latency, "skew in start time", "skew in end time",
--                                        "algo bw (GB/s)", "bus bw (GB/s)" (TraceLens writes the two bandwidth
--                                        groups only when some collective has a bandwidth)
--   count                                collectives in the group
--   "Total comm latency (ms)"            sum of comm_latency / 1000
-- Rows in TraceLens's order: largest total latency first (ord).
-- @output tracelens-comm 1 nccl_summary_implicit_sync EXCLUDE job_id ord ORDER BY ord
CREATE OR REPLACE VIEW tl_nccl_summary_implicit_sync AS
WITH s AS (
    SELECT *, coalesce("Collective name", 'Unknown') AS k_name, coalesce(dtype, 'Unknown') AS k_dtype,
           coalesce("In msg nelems"::VARCHAR, 'Unknown') AS k_nelems
    FROM tl_nccl_implicit_sync
), g AS (
    SELECT job_id, k_name AS "Collective name", k_dtype AS dtype, k_nelems AS "In msg nelems",
           first("Process Group Name" ORDER BY ord) FILTER (WHERE "Process Group Name" IS NOT NULL) AS "Process Group Name",
           first("Group size" ORDER BY ord) FILTER (WHERE "Group size" IS NOT NULL) AS "Group size",
           first("Full msg size (MB)" ORDER BY ord) FILTER (WHERE "Full msg size (MB)" IS NOT NULL) AS "Full msg size (MB)",
           avg(comm_latency) AS comm_latency_mean, quantile_cont(comm_latency, 0.5) AS comm_latency_median,
           min(comm_latency) AS comm_latency_min, max(comm_latency) AS comm_latency_max,
           avg("skew in start time") AS "skew in start time_mean",
           quantile_cont("skew in start time", 0.5) AS "skew in start time_median",
           min("skew in start time") AS "skew in start time_min", max("skew in start time") AS "skew in start time_max",
           avg("skew in end time") AS "skew in end time_mean",
           quantile_cont("skew in end time", 0.5) AS "skew in end time_median",
           min("skew in end time") AS "skew in end time_min", max("skew in end time") AS "skew in end time_max",
           avg("algo bw (GB/s)") AS "algo bw (GB/s)_mean", quantile_cont("algo bw (GB/s)", 0.5) AS "algo bw (GB/s)_median",
           min("algo bw (GB/s)") AS "algo bw (GB/s)_min", max("algo bw (GB/s)") AS "algo bw (GB/s)_max",
           avg("bus bw (GB/s)") AS "bus bw (GB/s)_mean", quantile_cont("bus bw (GB/s)", 0.5) AS "bus bw (GB/s)_median",
           min("bus bw (GB/s)") AS "bus bw (GB/s)_min", max("bus bw (GB/s)") AS "bus bw (GB/s)_max",
           count(*) AS count, sum(comm_latency) / 1000 AS "Total comm latency (ms)"
    FROM s GROUP BY job_id, k_name, k_dtype, k_nelems
)
SELECT *, row_number() OVER (PARTITION BY job_id ORDER BY "Total comm latency (ms)" DESC) AS ord FROM g;

-- tl_nccl_summary_long: one row per (job, rank, "Process Group Name", "Process Group Ranks", "Collective name",
-- "Group size", dtype, "In msg nelems", "Out msg nelems", "In split size", "Out split size", stream) over the
-- kernels of tl_nccl_long; kernels with any of these keys missing are left out, as pandas' groupby drops them
-- (so traces without collective metadata give no rows):
--   "In msg size (MB)_first", "Out msg size (MB)_first"   first non-missing value
--   dur_sum, dur_mean, dur_std (sample), dur_min, dur_max  of the kernel durations (µs)
--   operation_count                                       kernels
--   node_id                                               as in tl_nccl_long
-- Rows in TraceLens's order: largest dur_sum first (ord).
-- @output tracelens-comm 2 nccl_summary_long EXCLUDE job_id ord ORDER BY ord
CREATE OR REPLACE VIEW tl_nccl_summary_long AS
WITH g AS (
    SELECT job_id, rank, "Process Group Name", "Process Group Ranks", "Collective name", "Group size", dtype,
           "In msg nelems", "Out msg nelems", "In split size", "Out split size", stream,
           first("In msg size (MB)" ORDER BY ord) FILTER (WHERE "In msg size (MB)" IS NOT NULL) AS "In msg size (MB)_first",
           first("Out msg size (MB)" ORDER BY ord) FILTER (WHERE "Out msg size (MB)" IS NOT NULL) AS "Out msg size (MB)_first",
           sum(dur) AS dur_sum, avg(dur) AS dur_mean, stddev_samp(dur) AS dur_std, min(dur) AS dur_min,
           max(dur) AS dur_max, count(*) AS operation_count, any_value(node_id) AS node_id
    FROM tl_nccl_long
    WHERE "Process Group Ranks" IS NOT NULL AND "Collective name" IS NOT NULL AND "Group size" IS NOT NULL
      AND dtype IS NOT NULL AND "In msg nelems" IS NOT NULL AND "Out msg nelems" IS NOT NULL
      AND "In split size" IS NOT NULL AND "Out split size" IS NOT NULL AND stream IS NOT NULL
    GROUP BY ALL
)
SELECT *, row_number() OVER (PARTITION BY job_id ORDER BY dur_sum DESC) AS ord FROM g;
