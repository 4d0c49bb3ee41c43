-- peers/tracelens/comm_implicit_sync — TraceLens's nccl_implicit_sync.csv: one row per collective of a job whose
-- ranks must all arrive before it completes (all-reduce, reduce-scatter, all-gather, all-to-all), with the per-rank
-- start, duration and wait. Facts credited to TraceLens 0.1.0 (AMD-AGI/TraceLens, MIT licence:
-- TraceLens/NcclAnalyser/nccl_analyser.py, NcclAnalyser.build_df_nccl_implicit_sync_cat); the code is ours.
--
-- Which collectives: those whose "Collective name" (of the job's lowest rank that has the collective_id) is one of
-- TraceLens's all-reduce, reduce-scatter, all-gather or all-to-all names; in simplified mode also those with no or
-- an unknown name (so every kernel of traces without metadata). Per collective, over the ranks that have it:
--   comm_latency            shortest duration (µs)
--   rank wait time          latest start - the rank's start; skew in start time = its largest value;
--                           earliest arrival rank = the rank with the largest wait (ties: the highest rank);
--                           avg_wait_time = its mean
--   skew in end time        latest end - earliest end
--   Full msg size (MB)      the Out size for an all-gather, else the In size (when both sizes and the type are
--                           known); algo bw (GB/s) = (Full MB / 1024) / (latency / 10^6) (NaN when latency is 0);
--                           bus bw = algo bw * 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter, all-gather,
--                           all-to-all, n = Group size
-- The metadata columns are those of the lowest rank.
--
-- @requires peers/tracelens/comm_long

-- _tl_coll_type(name): TraceLens's collective type of a "Collective name" (NULL when it does not know it).
CREATE OR REPLACE MACRO _tl_coll_type(name) AS (MAP {
    'allreduce': 'allreduce', 'allreduce_coalesced': 'allreduce',
    'reducescatter': 'reducescatter', '_reduce_scatter_base': 'reducescatter',
    'reduce_scatter_tensor_coalesced': 'reducescatter',
    'allgather': 'allgather', 'all_gather': 'allgather', '_allgather_base': 'allgather',
    'all_gather_into_tensor_coalesced': 'allgather', 'allgather_into_tensor_coalesced': 'allgather',
    'all_to_all': 'alltoall', 'all_to_allv': 'alltoallv'
})[name];

-- tl_nccl_implicit_sync_ranks: one row per (collective, rank) of tl_nccl_implicit_sync: the per-rank columns
-- rank_<r>_ts, rank_<r>_dur, rank_<r>_wait_time of TraceLens's wide table, in long form.
--   job_id, collective_id, rank, ts, dur, wait_time (µs)
-- @materialize tracelens-comm
CREATE OR REPLACE VIEW tl_nccl_implicit_sync_ranks AS
WITH first_row AS (
    SELECT job_id, collective_id, arg_min("Collective name", ord) AS coll_name, min(ord) AS first_ord
    FROM tl_nccl_long GROUP BY job_id, collective_id
), keep AS (
    SELECT f.job_id, f.collective_id, f.first_ord
    FROM first_row f JOIN _tl_nccl_simplified s USING (job_id)
    WHERE CASE WHEN s.simplified AND (f.coll_name IS NULL OR _tl_coll_type(f.coll_name) IS NULL) THEN true
               ELSE coalesce(_tl_coll_type(f.coll_name) IN ('allreduce', 'reducescatter', 'allgather', 'alltoall'),
                             false) END
)
SELECT l.job_id, l.collective_id, l.rank, l.ts, l.dur,
       max(l.ts) OVER (PARTITION BY l.job_id, l.collective_id) - l.ts AS wait_time, k.first_ord
FROM tl_nccl_long l JOIN keep k USING (job_id, collective_id);

-- tl_nccl_implicit_sync: TraceLens's nccl_implicit_sync.csv without its per-rank columns (those are
-- tl_nccl_implicit_sync_ranks), one row per collective in TraceLens's order (ord: first appearance in
-- tl_nccl_long): job_id, collective_id, "Process Group Name", "Process Group Ranks", "Collective name",
-- "Group size", dtype, "In msg nelems", "Out msg nelems", "In msg size (MB)", "Out msg size (MB)",
-- "Full msg size (MB)", comm_latency, "skew in start time", "earliest arrival rank", avg_wait_time,
-- "skew in end time", "algo bw (GB/s)", "bus bw (GB/s)" (see the module header), node_span.
-- @materialize tracelens-comm
-- @output tracelens-comm 4 nccl_implicit_sync EXCLUDE job_id ord ORDER BY ord
CREATE OR REPLACE VIEW tl_nccl_implicit_sync AS
WITH agg AS (
    SELECT job_id, collective_id, any_value(first_ord) AS ord, min(dur) AS comm_latency,
           max(wait_time) AS skew_start, (list(rank ORDER BY wait_time DESC, rank DESC))[1] AS earliest_rank,
           avg(wait_time) AS avg_wait, max(ts + dur) - min(ts + dur) AS skew_end
    FROM tl_nccl_implicit_sync_ranks GROUP BY job_id, collective_id
), meta AS (
    SELECT l.* FROM tl_nccl_long l JOIN agg a ON a.job_id = l.job_id AND a.ord = l.ord
), m AS (
    SELECT a.*, meta.*  EXCLUDE (job_id, collective_id, ord),
           _tl_coll_type(meta."Collective name") AS c_type,
           CASE WHEN meta."In msg size (MB)" IS NOT NULL AND meta."Out msg size (MB)" IS NOT NULL
                     AND _tl_coll_type(meta."Collective name") IS NOT NULL
                THEN CASE WHEN _tl_coll_type(meta."Collective name") = 'allgather' THEN meta."Out msg size (MB)"
                          ELSE meta."In msg size (MB)" END END AS full_mb
    FROM agg a JOIN meta USING (job_id, collective_id)
)
SELECT job_id, collective_id, "Process Group Name", "Process Group Ranks", "Collective name", "Group size", dtype,
       "In msg nelems", "Out msg nelems", "In msg size (MB)", "Out msg size (MB)", full_mb AS "Full msg size (MB)",
       comm_latency, skew_start AS "skew in start time", earliest_rank AS "earliest arrival rank",
       avg_wait AS avg_wait_time, skew_end AS "skew in end time",
       CASE WHEN full_mb IS NOT NULL THEN CASE WHEN comm_latency > 0 THEN (full_mb / 1024) / (comm_latency / 1e6)
                                               ELSE 'NaN'::DOUBLE END END AS "algo bw (GB/s)",
       CASE WHEN full_mb IS NOT NULL AND comm_latency > 0 AND "Group size" IS NOT NULL
                 AND c_type IN ('allreduce', 'reducescatter', 'allgather', 'alltoall')
            THEN (full_mb / 1024) / (comm_latency / 1e6)
                 * CASE c_type WHEN 'allreduce' THEN 2.0 * ("Group size" - 1) / "Group size"
                               ELSE ("Group size" - 1.0) / "Group size" END END AS "bus bw (GB/s)",
       node_span, ord
FROM m;
