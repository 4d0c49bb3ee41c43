-- comm/matching — the same collective on every rank of its process group, found by its position: the k-th
-- collective that a rank issued in a process group (comm_collectives.seq) is the k-th collective of that group on
-- every other rank. Matching does not re-align: when a rank skipped or added a collective, or its trace stops
-- early, the positions where the ranks disagree are reported (status) and left out of the timings, and the later
-- positions are compared as they stand. Ranks of the group that have no trace in the job at all (a job of which
-- only some ranks were profiled) cannot be compared: the collective is timed over the ranks the job has, and
-- marked 'partial'.
--
-- Timings of a matched (or partial) collective (every rank of the group that the job has is present, one
-- collective type, every execution in the trace), as TraceLens's NcclAnalyser defines them (TraceLens/NcclAnalyser/nccl_analyser.py) and nccl-tests
-- defines bandwidth (NVIDIA/nccl-tests doc/PERFORMANCE.md):
--   latency    the shortest execution over the ranks: the transfer itself, once the last rank has arrived
--   wait       a rank's execution minus the latency: the time it spent waiting for the others
--   algbw      msg_bytes / latency;  busbw = algbw * factor, the factor of the collective type over n ranks:
--              all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce 1
--
-- @requires comm/collectives

-- _comm_busbw_factor(coll_type, n): nccl-tests' bus bandwidth factor (NULL for types it does not define).
CREATE OR REPLACE MACRO _comm_busbw_factor(coll_type, n) AS (
    CASE coll_type WHEN 'all_reduce' THEN 2.0 * (n - 1) / n
                   WHEN 'all_gather' THEN (n - 1.0) / n WHEN 'reduce_scatter' THEN (n - 1.0) / n
                   WHEN 'all_to_all' THEN (n - 1.0) / n
                   WHEN 'broadcast' THEN 1.0 WHEN 'reduce' THEN 1.0 END
);

-- comm_matched: one row per collective of a job: a process group's seq-th collective, over its ranks.
--   job_id, pg_key, seq        the job, the process group (its name; '' when the traces do not name it) and the
--                              position
--   coll_type                  the collective type when every rank agrees, else NULL
--   coll_types                 the distinct types the ranks report (list)
--   dtype                      the data type when every rank agrees, else NULL
--   msg_bytes                  the largest msg_bytes over the ranks (comm_collectives.msg_bytes)
--   n_expected                 ranks of the process group (pg_ranks, else the world size)
--   n_ranks                    ranks that have this position
--   missing_ranks              ranks of the group that the job has but that lack this position (list)
--   n_absent                   ranks of the group with no trace in the job
--   n_executed                 ranks whose execution is in the trace
--   status                     'matched' (every rank of the group); 'partial' (every rank the job has, but some
--                              ranks of the group have no trace in the job); 'missing_ranks' (ranks of the job
--                              lack this position: cut short, or skipped it); 'type_mismatch' (ranks disagree on
--                              the type: one skipped or added one earlier); 'no_execution' (a rank's execution is
--                              not in the trace)
--   first_start_ns, last_start_ns   earliest and latest execution start over the ranks, job clock, ns
--   first_end_ns, last_end_ns       earliest and latest execution end, ns
--   start_skew_ns, end_skew_ns      last_start_ns - first_start_ns, last_end_ns - first_end_ns
--   first_rank, last_rank      the rank that started first and the one that started last (the straggler); the
--                              lowest rank among ranks that started at the same time
--   latency_ns                 shortest execution over the ranks, ns (matched and partial only, as below)
--   max_dur_ns                 longest execution over the ranks, ns
--   total_wait_ns, mean_wait_ns   sum and mean over the ranks of (execution - latency), ns
--   algbw_gbps, busbw_gbps     bandwidths in GB/s (10^9 bytes/s) from msg_bytes and latency_ns; busbw's factor
--                              counts every rank of the group, present or not
-- @materialize comm
CREATE OR REPLACE VIEW comm_matched AS
WITH c AS (
    SELECT *, coalesce(pg_name, '') AS pg_key FROM comm_collectives
), j AS (SELECT job_id, any_value(world_size) AS world_size, list(DISTINCT rank) AS job_ranks
          FROM comm_ranks GROUP BY job_id
), g AS (
    SELECT c.job_id, c.pg_key, c.seq,
           list_sort(list(DISTINCT c.coll_type) FILTER (WHERE c.coll_type IS NOT NULL)) AS coll_types,
           list(DISTINCT c.dtype) FILTER (WHERE c.dtype IS NOT NULL) AS dtypes,
           max(c.msg_bytes) AS msg_bytes,
           coalesce(any_value(c.pg_ranks) FILTER (WHERE c.pg_ranks IS NOT NULL), range(any_value(j.world_size))::INTEGER[])
               AS expected_ranks,
           any_value(j.job_ranks) AS job_ranks, list(DISTINCT c.rank) AS ranks, count(DISTINCT c.rank) AS n_ranks,
           count(*) FILTER (WHERE c.start_ns IS NOT NULL) AS n_executed,
           min(c.start_ns) AS first_start_ns, max(c.start_ns) AS last_start_ns,
           min(c.end_ns) AS first_end_ns, max(c.end_ns) AS last_end_ns,
           (list(c.rank ORDER BY c.start_ns, c.rank) FILTER (WHERE c.start_ns IS NOT NULL))[1] AS first_rank,
           (list(c.rank ORDER BY c.start_ns DESC, c.rank) FILTER (WHERE c.start_ns IS NOT NULL))[1] AS last_rank,
           min(c.dur_ns) AS min_dur_ns, max(c.dur_ns) AS max_dur_ns, sum(c.dur_ns) AS sum_dur_ns
    FROM c JOIN j USING (job_id)
    GROUP BY c.job_id, c.pg_key, c.seq
), s AS (
    SELECT *, len(expected_ranks) AS n_expected,
           list_filter(expected_ranks, lambda r: list_contains(job_ranks, r) AND NOT list_contains(ranks, r))
               AS missing_ranks,
           len(list_filter(expected_ranks, lambda r: NOT list_contains(job_ranks, r))) AS n_absent
    FROM g
), t AS (
    SELECT *, CASE WHEN len(coll_types) > 1 THEN 'type_mismatch'
                   WHEN len(missing_ranks) > 0 THEN 'missing_ranks'
                   WHEN n_executed < n_ranks THEN 'no_execution'
                   WHEN n_absent > 0 THEN 'partial'
                   ELSE 'matched' END AS status
    FROM s
), s2 AS (
    SELECT *, status IN ('matched', 'partial') AS timed FROM t
)
SELECT job_id, pg_key, seq, CASE WHEN len(coll_types) = 1 THEN coll_types[1] END AS coll_type, coll_types,
       CASE WHEN len(dtypes) = 1 THEN dtypes[1] END AS dtype, msg_bytes, n_expected, n_ranks, missing_ranks,
       n_absent, n_executed, status, first_start_ns, last_start_ns, first_end_ns, last_end_ns,
       last_start_ns - first_start_ns AS start_skew_ns, last_end_ns - first_end_ns AS end_skew_ns,
       first_rank, last_rank,
       CASE WHEN timed THEN min_dur_ns END AS latency_ns, max_dur_ns,
       CASE WHEN timed THEN sum_dur_ns - n_ranks * min_dur_ns END AS total_wait_ns,
       CASE WHEN timed THEN (sum_dur_ns - n_ranks * min_dur_ns) / n_ranks END AS mean_wait_ns,
       CASE WHEN timed THEN msg_bytes / nullif(min_dur_ns, 0) END AS algbw_gbps,
       CASE WHEN timed THEN msg_bytes / nullif(min_dur_ns, 0) * _comm_busbw_factor(coll_types[1], n_expected) END
           AS busbw_gbps
FROM s2;

-- comm_rank_collectives: one row per collective instance per rank (comm_collectives) with its match.
--   (every column of comm_collectives)
--   pg_key, status, latency_ns, last_rank   as in comm_matched for its collective
--   wait_ns                    dur_ns - latency_ns: time this rank waited for the others, ns (timed collectives
--                              only: matched or partial)
--   arrived_last, arrived_first   this rank started the execution last / first among the ranks
--   late_ns                    when it arrived last: start_skew_ns of the collective, the time the first rank
--                              waited for it; else 0 (timed collectives only)
-- @materialize comm
CREATE OR REPLACE VIEW comm_rank_collectives AS
SELECT c.*, m.pg_key, m.status, m.latency_ns, m.last_rank,
       c.dur_ns - m.latency_ns AS wait_ns,
       m.latency_ns IS NOT NULL AND c.rank = m.last_rank AS arrived_last,
       m.latency_ns IS NOT NULL AND c.rank = m.first_rank AS arrived_first,
       CASE WHEN m.latency_ns IS NOT NULL THEN CASE WHEN c.rank = m.last_rank THEN m.start_skew_ns ELSE 0 END END
           AS late_ns
FROM comm_collectives c
JOIN comm_matched m ON m.job_id = c.job_id AND m.pg_key = coalesce(c.pg_name, '') AND m.seq = c.seq;
