-- comm/ranks_overview — the ranks of each multi-rank job side by side in the report: each rank's GPU time split
-- into its parts beside its collectives, the job's straggler named. Every number is read from the view named in its
-- comment, with that view's definition (the rows `tracesql ranks` shows, in ms).
--
-- @requires comm/summary gpu/timeline lib/trace_labels

-- ranks_overview: one row per rank of a job of two or more ranks (comm_jobs), its GPU time and its collectives.
--   trace_id, trace (trace_labels.label)   the rank's trace
--   job_id, rank                           as in comm_ranks
--   is_straggler                           the job's straggler: the rank the others waited for longest (largest
--                                          late_ns; comm/summary)
--   span_ms                                first to last GPU activity (gpu_timeline_all, pooled whole-trace row), ms
--   compute_ms, comm_exposed_ms, memory_exposed_ms, idle_ms
--                                          the parts of span_ms: compute, communication not overlapped by compute,
--                                          memcpy/memset overlapped by neither, idle (gpu_timeline_all), ms
--   busy_pct                               as in gpu_timeline_all
--   n_collectives, arrived_last            as in comm_rank_summary
--   transfer_ms, wait_ms, late_ms          transfer_ns, wait_ns, late_ns of comm_rank_summary, ms
-- GPU columns are NULL for a rank without GPU activity (CPU backends).
-- @output report-across 4 ranks_overview IF ROWS \
--     TITLE "Ranks side by side" \
--     ABOUT "One row per rank of a multi-rank job: GPU time by part, collectives, the straggler marked; ms." \
--     ORDER BY job_id, rank
CREATE OR REPLACE VIEW ranks_overview AS
SELECT s.trace_id, l.label AS trace, s.job_id, s.rank, s.is_straggler,
       t.span_ns / 1e6 AS span_ms, t.compute_ns / 1e6 AS compute_ms, t.comm_exposed_ns / 1e6 AS comm_exposed_ms,
       t.memory_exposed_ns / 1e6 AS memory_exposed_ms, t.idle_ns / 1e6 AS idle_ms, t.busy_pct,
       s.n_collectives, s.arrived_last, s.transfer_ns / 1e6 AS transfer_ms, s.wait_ns / 1e6 AS wait_ms,
       s.late_ns / 1e6 AS late_ms
FROM comm_rank_summary s
JOIN comm_jobs j ON j.job_id = s.job_id AND len(j.ranks) >= 2
JOIN trace_labels l ON l.trace_id = s.trace_id
LEFT JOIN gpu_timeline_all t ON t.trace_id = s.trace_id AND t.pooled AND t.step IS NULL;
