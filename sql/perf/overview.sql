-- perf/overview — the compute model's line on the first screen of `tracesql report` and `tracesql summary`: the
-- share of GPU time the model covers and the hot ops farthest below their roofline.
--
-- @requires perf/roofline

-- perf_overview: one row per trace: perf_traces' trace_id, gpu, reason, gpu_time_ns, modelled_time_ns,
-- modelled_pct, modelled_op_pct and roofline_pct (see perf_traces).
-- @output summary 8 perf_overview ORDER BY trace_id
CREATE OR REPLACE VIEW perf_overview AS
SELECT trace_id, gpu, reason, gpu_time_ns, modelled_time_ns, modelled_pct, modelled_op_pct, roofline_pct
FROM perf_traces;

-- perf_overview_worst: the three hot (op, argument set) rows of perf_args farthest below their roofline, per
-- trace: those with at least 1 % of the trace's GPU time, in increasing roofline_pct (ties by GPU time).
--   trace_id, rank (1 = farthest below), op_name, family, shape, count, time_pct, roofline_pct, bound
-- @output summary 9 perf_overview_worst ORDER BY trace_id, rank
CREATE OR REPLACE VIEW perf_overview_worst AS
SELECT * FROM (
    SELECT trace_id, row_number() OVER (PARTITION BY trace_id ORDER BY roofline_pct, kernel_time_sum_ns DESC,
                                                                       op_name, shape) AS rank,
           op_name, family, shape, count, time_pct, roofline_pct, bound
    FROM perf_args WHERE time_pct >= 1 AND roofline_pct IS NOT NULL)
WHERE rank <= 3;
