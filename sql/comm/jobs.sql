-- comm/jobs — which traces of a dataset form one distributed job, and which ranks a job has and lacks.
--
-- A job is a set of traces with a rank that share the world size and the backend of their distributedInfo and
-- whose profiler windows overlap in time (on the job clock: ts_ns + base_time_ns when the trace has a
-- baseTimeNanoseconds, else ts_ns), chained: traces sorted by window start, a new job starts at a trace that
-- starts after every earlier trace of the same (world size, backend) has ended. A job has each rank once: when
-- such a group holds several traces of one rank (the same run profiled twice), the first trace of each rank (by
-- start, then trace_id) forms one job, the second another, and so on. Jobs are numbered 1, 2, ... in the order of
-- their first start.
--
-- @requires gpu/timeline

-- comm_ranks: one row per trace that has a rank, with its job.
--   job_id                 the job (see above)
--   trace_id, rank         the trace and its distributed rank (traces.rank)
--   world_size, backend    distributedInfo.world_size and .backend
--   file_name              base name of the trace file
--   truncated              the file ended early and was salvaged (traces.truncated)
--   pg_config              distributedInfo.pg_config: this rank's process groups (JSON list), NULL when absent
--   clock_offset_ns        what is added to a ts_ns of this trace to put it on the job clock (base_time_ns or 0)
--   window_start_ns, window_end_ns   the profiler window on the job clock, ns
-- @materialize comm
CREATE OR REPLACE VIEW comm_ranks AS
WITH t AS (
    SELECT t.trace_id, t.rank, t.world_size, t.distributed_backend AS backend, t.file_name,
           coalesce(t.truncated, false) AS truncated,
           CASE WHEN json_type(t.distributed_info, '$.pg_config') = 'ARRAY' THEN json_extract(t.distributed_info, '$.pg_config') END
               AS pg_config,
           coalesce(t.base_time_ns, 0) AS clock_offset_ns,
           w.window_start_ns + coalesce(t.base_time_ns, 0) AS window_start_ns,
           w.window_end_ns + coalesce(t.base_time_ns, 0) AS window_end_ns
    FROM traces t JOIN _trace_window w USING (trace_id)
    WHERE t.rank IS NOT NULL
), o AS (
    SELECT *, max(window_end_ns) OVER (PARTITION BY world_size, backend ORDER BY window_start_ns, trace_id
                                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM t
), s AS (
    SELECT *, sum(CASE WHEN prev_end_ns IS NULL OR window_start_ns > prev_end_ns THEN 1 ELSE 0 END)
                  OVER (PARTITION BY world_size, backend ORDER BY window_start_ns, trace_id) AS island
    FROM o
), d AS (
    SELECT *, row_number() OVER (PARTITION BY world_size, backend, island, rank ORDER BY window_start_ns, trace_id)
                  AS copy
    FROM s
), j AS (
    SELECT *, min(window_start_ns) OVER (PARTITION BY world_size, backend, island, copy) AS job_start_ns FROM d
)
SELECT dense_rank() OVER (ORDER BY job_start_ns, world_size, backend, island, copy)::INTEGER AS job_id,
       trace_id, rank, world_size, backend, file_name, truncated, pg_config, clock_offset_ns,
       window_start_ns, window_end_ns
FROM j;

-- comm_jobs: one row per job.
--   job_id                 the job
--   world_size, backend    as in comm_ranks
--   n_traces               traces in the job
--   ranks                  the ranks present, ascending (list)
--   missing_ranks          ranks 0 .. world_size - 1 with no trace in the job (list; empty when complete)
--   truncated_ranks        ranks whose file was cut short and salvaged (list)
--   complete               every rank is present once and none is truncated
--   start_ns, end_ns       first window start and last window end on the job clock, ns
CREATE OR REPLACE VIEW comm_jobs AS
SELECT job_id, any_value(world_size) AS world_size, any_value(backend) AS backend, count(*) AS n_traces,
       list_sort(list(DISTINCT rank)) AS ranks,
       list_filter(range(any_value(world_size)), lambda r: NOT list_contains(list(DISTINCT rank), r)) AS missing_ranks,
       list_sort(coalesce(list(DISTINCT rank) FILTER (WHERE truncated), [])) AS truncated_ranks,
       count(DISTINCT rank) = any_value(world_size) AND count(*) = any_value(world_size) AND NOT bool_or(truncated)
           AS complete,
       min(window_start_ns) AS start_ns, max(window_end_ns) AS end_ns
FROM comm_ranks
GROUP BY job_id;
