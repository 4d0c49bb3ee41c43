-- peers/tracelens/comm_long — TraceLens's multi-rank collective report (NcclAnalyser, TraceLens 0.1.0), its per-rank
-- table nccl_long: every collective kernel of every rank of a job, matched to a collective_id. Facts credited to
-- TraceLens (AMD-AGI/TraceLens, MIT licence: TraceLens/NcclAnalyser/nccl_analyser.py, NcclAnalyser.build_df_long and
-- _collective_filter; TraceLens/Reporting/reporting_utils.py, add_node_span_columns and detect_gpus_per_node);
-- the code is ours. The ranks of a job are those of comm_jobs (TraceLens is given one file per rank).
--
-- Which kernels: events of category `kernel` (as written) whose name contains nccl, rccl or cross_device_reduce
-- (any case) and that carry a correlation or an External id. Their metadata is the kernel's own args ("Process
-- Group Name", "Process Group Ranks", "Collective name", "Group size", "dtype", "In/Out msg nelems", "In/Out split
-- size"); a cross_device_reduce kernel without "Collective name" is an 'allreduce'. Message sizes in MB (2^20
-- bytes) only for TraceLens's dtypes (Float, Int, Long, BFloat16, Bool, Byte, Double, Half, Short).
-- Matching: in *simplified mode* — no kernel of the job names a process group (or all are 'Unknown_Group') and
-- each rank's kernels are on at most one stream — every kernel is in group 'all' and collective_id is its index
-- on its rank (by ts, ties in file order); otherwise a missing group name is 'Unknown_Group' and collective_id is
-- '<group>_<index of the kernel among the rank's kernels of that group>'.
-- node_id = rank // gpus per node, where gpus per node is the length of deviceProperties of the job's lowest rank
-- (NULL when it has none); node_span: 'intra_node' / 'inter_node' from the Process Group Ranks, 'unknown' without.
--
-- @requires peers/float_us comm/jobs

-- _tl_nccl_kernels: the collective kernels of every job's ranks with their metadata as TraceLens reads it.
-- @materialize tracelens-comm
CREATE OR REPLACE VIEW _tl_nccl_kernels AS
SELECT r.job_id, r.rank, k.trace_id, k.event_id, k.name, k.stream, _us_f64(k.ts_ns) AS ts, _us_f64(k.dur_ns) AS dur,
       json_extract_string(k.args, '$."Process Group Name"') AS pg_name,
       json_extract_string(k.args, '$."Process Group Ranks"') AS pg_ranks,
       coalesce(json_extract_string(k.args, '$."Collective name"'),
                CASE WHEN regexp_matches(k.name, '(?i)cross_device_reduce') THEN 'allreduce' END) AS coll_name,
       TRY_CAST(json_extract_string(k.args, '$."Group size"') AS BIGINT) AS group_size,
       json_extract_string(k.args, '$.dtype') AS dtype,
       TRY_CAST(json_extract_string(k.args, '$."In msg nelems"') AS BIGINT) AS in_nelems,
       TRY_CAST(json_extract_string(k.args, '$."Out msg nelems"') AS BIGINT) AS out_nelems,
       json_extract_string(k.args, '$."In split size"') AS in_split,
       json_extract_string(k.args, '$."Out split size"') AS out_split,
       (MAP {'Float': 4, 'Int': 4, 'Long': 8, 'BFloat16': 2, 'Bool': 1, 'Byte': 1, 'Double': 8, 'Half': 2,
             'Short': 2})[json_extract_string(k.args, '$.dtype')] AS item_bytes
FROM kernels k JOIN comm_ranks r USING (trace_id)
WHERE k.cat_raw = 'kernel' AND regexp_matches(k.name, '(?i)nccl|rccl|cross_device_reduce')
  AND (k.correlation IS NOT NULL OR k.external_id IS NOT NULL);

-- _tl_nccl_simplified: per job, whether TraceLens matches in its simplified mode (see the module header).
CREATE OR REPLACE VIEW _tl_nccl_simplified AS
SELECT job_id, bool_and(coalesce(pg_name, 'Unknown_Group') = 'Unknown_Group')
                   AND max(n_streams) <= 1 AS simplified
FROM (SELECT job_id, pg_name, count(DISTINCT stream) OVER (PARTITION BY job_id, rank) AS n_streams
      FROM _tl_nccl_kernels)
GROUP BY job_id;

-- _tl_gpus_per_node: per job, the length of deviceProperties of its lowest rank's trace (NULL when empty).
CREATE OR REPLACE VIEW _tl_gpus_per_node AS
SELECT job_id, arg_min(nullif(device_count, 0), rank) AS gpus_per_node
FROM comm_ranks JOIN traces USING (trace_id, rank)
GROUP BY job_id;

-- _tl_node_span(pg_ranks, gpn): TraceLens's node_span of a process group's ranks text ('[0, 1, 2]').
CREATE OR REPLACE MACRO _tl_node_span(pg_ranks, gpn) AS (
    CASE WHEN pg_ranks IS NULL OR len(regexp_extract_all(pg_ranks, '\d+')) = 0 THEN 'unknown'
         WHEN len(list_distinct(list_transform(regexp_extract_all(pg_ranks, '\d+'), lambda x: x::BIGINT // gpn))) = 1
             THEN 'intra_node'
         ELSE 'inter_node' END
);

-- tl_nccl_long: TraceLens's nccl_long.csv, one row per collective kernel per rank, in TraceLens's order (by rank,
-- then file order): job_id, then its columns collective_id, index_in_group, rank, "Process Group Name",
-- "Process Group Ranks", "Collective name", "Group size", dtype, "In msg nelems", "In msg size (MB)",
-- "Out msg nelems", "Out msg size (MB)", "In split size", "Out split size", stream, ts, dur (µs), node_id,
-- node_span (both NULL when the job's gpus per node is unknown); ord is the row's position.
-- @materialize tracelens-comm
-- @output tracelens-comm 3 nccl_long EXCLUDE job_id ord ORDER BY ord
CREATE OR REPLACE VIEW tl_nccl_long AS
WITH k AS (
    SELECT k.*, s.simplified,
           CASE WHEN s.simplified THEN 'all' ELSE coalesce(k.pg_name, 'Unknown_Group') END AS pg
    FROM _tl_nccl_kernels k JOIN _tl_nccl_simplified s USING (job_id)
), i AS (
    SELECT *, (row_number() OVER (PARTITION BY job_id, rank, CASE WHEN simplified THEN '' ELSE pg END
                                  ORDER BY ts, event_id) - 1)::BIGINT AS index_in_group
    FROM k
)
SELECT i.job_id,
       CASE WHEN simplified THEN index_in_group::VARCHAR ELSE pg || '_' || index_in_group END AS collective_id,
       index_in_group, rank, pg AS "Process Group Name", pg_ranks AS "Process Group Ranks",
       coll_name AS "Collective name", group_size AS "Group size", dtype, in_nelems AS "In msg nelems",
       CASE WHEN item_bytes IS NOT NULL AND in_nelems IS NOT NULL THEN in_nelems * item_bytes / 1048576.0 END
           AS "In msg size (MB)",
       out_nelems AS "Out msg nelems",
       CASE WHEN item_bytes IS NOT NULL AND in_nelems IS NOT NULL THEN out_nelems * item_bytes / 1048576.0 END
           AS "Out msg size (MB)",
       in_split AS "In split size", out_split AS "Out split size", stream, ts, dur,
       rank // g.gpus_per_node AS node_id,
       CASE WHEN g.gpus_per_node IS NOT NULL THEN _tl_node_span(pg_ranks, g.gpus_per_node) END AS node_span,
       row_number() OVER (PARTITION BY i.job_id ORDER BY rank, event_id) AS ord
FROM i JOIN _tl_gpus_per_node g USING (job_id);
