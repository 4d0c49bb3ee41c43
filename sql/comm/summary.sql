-- comm/summary — collectives summed up: per job and collective type, per rank (transfer against waiting, how
-- often and by how much each rank held the others up), and the ranks of a job side by side with their GPU
-- timeline.
--
-- The straggler of a job is the rank that kept the others waiting longest: the largest total late_ns (the start
-- skew of each matched collective it arrived at last); ties go to the lower rank.
--
-- @requires comm/matching gpu/timeline lib/stats

-- comm_type_summary: one row per (job, collective type) over its timed collectives (status matched or partial).
--   job_id, coll_type         the group
--   n_collectives             matched collectives in the group
--   total_bytes               sum of their msg_bytes
--   total_latency_ns          sum of their latencies, ns
--   mean_latency_ns, p50_latency_ns, p90_latency_ns, min_latency_ns, max_latency_ns   latency statistics, ns
--   mean_start_skew_ns, max_start_skew_ns, mean_end_skew_ns   skews, ns
--   total_wait_ns             sum over collectives and ranks of the waits, ns
--   mean_algbw_gbps, mean_busbw_gbps   mean bandwidths, GB/s
CREATE OR REPLACE VIEW comm_type_summary AS
SELECT job_id, coll_type, count(*) AS n_collectives, sum(msg_bytes)::BIGINT AS total_bytes,
       sum(latency_ns)::BIGINT AS total_latency_ns, avg(latency_ns) AS mean_latency_ns,
       quantile_cont(latency_ns, 0.5) AS p50_latency_ns, quantile_cont(latency_ns, 0.9) AS p90_latency_ns,
       min(latency_ns) AS min_latency_ns, max(latency_ns) AS max_latency_ns,
       avg(start_skew_ns) AS mean_start_skew_ns, max(start_skew_ns) AS max_start_skew_ns,
       avg(end_skew_ns) AS mean_end_skew_ns, sum(total_wait_ns)::BIGINT AS total_wait_ns,
       _avg_float(algbw_gbps) AS mean_algbw_gbps, _avg_float(busbw_gbps) AS mean_busbw_gbps
FROM comm_matched
WHERE latency_ns IS NOT NULL
GROUP BY job_id, coll_type;

-- comm_rank_summary: one row per rank of a job with its collectives.
--   job_id, rank, trace_id     the rank and its trace
--   n_collectives              collective instances on this rank
--   n_matched                  those whose collective is timed: matched on every rank (status matched, or
--                              partial: on every rank the job has)
--   n_missing                  collectives of this rank's process groups that other ranks have and it lacks
--                              (its trace stops early, or it skipped them)
--   n_unmatched                its instances at positions that are not timed (missing ranks, type mismatch,
--                              execution missing)
--   comm_ns                    sum of its executions over timed collectives, ns
--   transfer_ns                sum of the latencies of those collectives, ns
--   wait_ns                    comm_ns - transfer_ns: time spent waiting for other ranks, ns
--   wait_pct                   100 * wait_ns / comm_ns
--   arrived_last, arrived_first   how many matched collectives it started last / first
--   late_ns                    sum of late_ns: how long the first rank waited for it, over the collectives it
--                              arrived at last, ns
--   is_straggler               the job's straggler (see the module header)
CREATE OR REPLACE VIEW comm_rank_summary AS
WITH r AS MATERIALIZED (
    SELECT job_id, rank, trace_id, count(*) AS n_collectives,
           count(*) FILTER (WHERE latency_ns IS NOT NULL) AS n_matched,
           count(*) FILTER (WHERE latency_ns IS NULL) AS n_unmatched,
           coalesce(sum(dur_ns) FILTER (WHERE latency_ns IS NOT NULL), 0)::BIGINT AS comm_ns,
           coalesce(sum(latency_ns), 0)::BIGINT AS transfer_ns,
           count(*) FILTER (WHERE arrived_last) AS arrived_last,
           count(*) FILTER (WHERE arrived_first) AS arrived_first,
           coalesce(sum(late_ns), 0)::BIGINT AS late_ns
    FROM comm_rank_collectives GROUP BY job_id, rank, trace_id
), m AS MATERIALIZED (
    SELECT cr.job_id, cr.rank, count(m.seq) AS n_missing
    FROM comm_ranks cr LEFT JOIN comm_matched m ON m.job_id = cr.job_id AND list_contains(m.missing_ranks, cr.rank)
    GROUP BY cr.job_id, cr.rank
)
SELECT cr.job_id, cr.rank, cr.trace_id, coalesce(r.n_collectives, 0) AS n_collectives,
       coalesce(r.n_matched, 0) AS n_matched, m.n_missing, coalesce(r.n_unmatched, 0) AS n_unmatched,
       coalesce(r.comm_ns, 0) AS comm_ns, coalesce(r.transfer_ns, 0) AS transfer_ns,
       coalesce(r.comm_ns - r.transfer_ns, 0) AS wait_ns,
       100.0 * (r.comm_ns - r.transfer_ns) / nullif(r.comm_ns, 0) AS wait_pct,
       coalesce(r.arrived_last, 0) AS arrived_last, coalesce(r.arrived_first, 0) AS arrived_first,
       coalesce(r.late_ns, 0) AS late_ns,
       coalesce(r.late_ns, 0) > 0 AND row_number() OVER (PARTITION BY cr.job_id ORDER BY coalesce(r.late_ns, 0) DESC, cr.rank) = 1
           AS is_straggler
FROM comm_ranks cr LEFT JOIN r USING (job_id, rank, trace_id) JOIN m USING (job_id, rank);

-- comm_ranks_side_by_side: one row per rank of a job: its GPU timeline (gpu_timeline_all, all devices of the
-- trace pooled, whole trace) beside its collectives (comm_rank_summary). GPU columns are NULL for a rank
-- without GPU activity (CPU backends).
--   job_id, rank, trace_id     the rank
--   span_ns                    first to last GPU activity, ns
--   compute_ns, gpu_comm_ns, comm_exposed_ns, idle_ns   as in gpu_timeline_all (gpu_comm_ns is its comm_ns), ns
--   busy_pct, idle_pct         as in gpu_timeline_all
--   n_collectives, n_missing, transfer_ns, wait_ns, arrived_last, late_ns, is_straggler
--                              as in comm_rank_summary
--   bounds_job                 this rank is the straggler: the one the others waited for
CREATE OR REPLACE VIEW comm_ranks_side_by_side AS
SELECT s.job_id, s.rank, s.trace_id, t.span_ns, t.compute_ns, t.comm_ns AS gpu_comm_ns, t.comm_exposed_ns,
       t.idle_ns, t.busy_pct, t.idle_pct, s.n_collectives, s.n_missing, s.transfer_ns, s.wait_ns,
       s.arrived_last, s.late_ns, s.is_straggler, s.is_straggler AS bounds_job
FROM comm_rank_summary s
LEFT JOIN gpu_timeline_all t ON t.trace_id = s.trace_id AND t.pooled AND t.step IS NULL;
