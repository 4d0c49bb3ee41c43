-- peers/tracelens/comm_straggler — TraceLens's straggler_summary.csv: per rank of a job, how long it waited in the
-- implicit-sync collectives and how often it arrived last or first. Facts credited to TraceLens 0.1.0
-- (AMD-AGI/TraceLens, MIT licence: TraceLens/NcclAnalyser/nccl_analyser.py, NcclAnalyser.build_df_straggler_summary);
-- the code is ours.
--
-- @requires peers/tracelens/comm_implicit_sync

-- tl_straggler_summary: one row per rank that has a collective in tl_nccl_implicit_sync:
--   job_id, rank
--   total_wait_time_us, mean_wait_time_us   sum and mean of its wait times (tl_nccl_implicit_sync_ranks), rounded
--                                           to 0.1 (half to even)
--   times_arrived_last        collectives where its wait is the smallest (ties: the lowest rank)
--   times_arrived_first       collectives whose "earliest arrival rank" it is
--   pct_arrived_last          100 * times_arrived_last / num_collectives, rounded to 0.1
--   num_collectives           collectives in tl_nccl_implicit_sync of the job
--   total_nccl_dur_us         sum of the durations of all its kernels in tl_nccl_long, rounded to 0.1
--   node_id                   as in tl_nccl_long
-- Rows in TraceLens's order (ord): smallest total wait first — the straggler.
-- @output tracelens-comm 5 straggler_summary EXCLUDE job_id ord ORDER BY ord
CREATE OR REPLACE VIEW tl_straggler_summary AS
WITH last AS (
    SELECT job_id, collective_id, (list(rank ORDER BY wait_time, rank))[1] AS last_rank
    FROM tl_nccl_implicit_sync_ranks GROUP BY job_id, collective_id
), n AS (
    SELECT job_id, count(*) AS num_collectives FROM tl_nccl_implicit_sync GROUP BY job_id
), w AS (
    SELECT r.job_id, r.rank, sum(r.wait_time) AS total_wait, avg(r.wait_time) AS mean_wait
    FROM tl_nccl_implicit_sync_ranks r GROUP BY r.job_id, r.rank
), d AS (
    SELECT job_id, rank, sum(dur) AS total_dur, any_value(node_id) AS node_id FROM tl_nccl_long GROUP BY job_id, rank
), t AS (
    SELECT w.job_id, w.rank, round_even(w.total_wait, 1) AS total_wait_time_us,
           round_even(w.mean_wait, 1) AS mean_wait_time_us,
           (SELECT count(*) FROM last l WHERE l.job_id = w.job_id AND l.last_rank = w.rank) AS times_arrived_last,
           (SELECT count(*) FROM tl_nccl_implicit_sync s WHERE s.job_id = w.job_id
                                                          AND s."earliest arrival rank" = w.rank) AS times_arrived_first,
           n.num_collectives, round_even(d.total_dur, 1) AS total_nccl_dur_us, d.node_id
    FROM w JOIN n USING (job_id) LEFT JOIN d USING (job_id, rank)
)
SELECT job_id, rank, total_wait_time_us, mean_wait_time_us, times_arrived_last, times_arrived_first,
       round_even(100.0 * times_arrived_last / num_collectives, 1) AS pct_arrived_last, num_collectives,
       total_nccl_dur_us, node_id,
       row_number() OVER (PARTITION BY job_id ORDER BY total_wait_time_us, rank) AS ord
FROM t;
