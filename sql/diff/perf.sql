-- diff/perf — the compute model's achieved rates of two traces compared, per op and argument set: the same op on
-- the same shapes, dtypes and concrete inputs (perf/roofline perf_args; the model reads no strides), its GPU time,
-- achieved TFLOP/s and TB/s and % of the roofline in each trace. Only the modelled ops have rows.
--
-- @requires diff/pairs perf/roofline

-- _diff_perf_src: perf_args keyed for diff/pairs (see there for the columns): k {op_name, family, input_dims,
-- input_type, concrete_inputs} ('' where not recorded), n op instances, v_ns their GPU time (kernel_time_sum_ns);
-- flops, bytes (per call) and roofline_ns (per call) as in perf_args.
-- @materialize diff-perf
CREATE OR REPLACE VIEW _diff_perf_src AS
SELECT trace_id,
       {'op_name': op_name, 'family': family, 'input_dims': coalesce(input_dims, ''),
        'input_type': coalesce(input_type, ''), 'concrete_inputs': coalesce(concrete_inputs, '')} AS k,
       count AS n, kernel_time_sum_ns AS v_ns, flops, bytes, roofline_ns
FROM perf_args;

-- diff_perf(base_id, variant_id): the modelled ops per argument set of the trace variant_id against those of
-- base_id; one row per (op name, family, input dims, input types, concrete inputs) of perf_args present in either
-- trace (a row on one side only is kept, its other side's values NULL):
--   op_name, family, input_dims, input_type, concrete_inputs   the argument set (perf_args; '' when not recorded)
--   side                        both | base_only | variant_only (diff/pairs)
--   base_count, variant_count   op instances (perf_args.count)
--   base_ns, variant_ns         their GPU time, ns (perf_args.kernel_time_sum_ns)
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
--   base_tflop_per_s, variant_tflop_per_s   achieved 10¹² FLOP/s over all calls, count·flops / GPU time
--                                           (perf_args.tflop_per_s)
--   tflop_per_s_diff, tflop_per_s_ratio     variant - base; variant / base (NULL when a side is missing or 0)
--   base_tb_per_s, variant_tb_per_s         achieved 10¹² bytes/s over all calls, count·bytes / GPU time
--                                           (perf_args.tb_per_s)
--   tb_per_s_diff, tb_per_s_ratio           variant - base; variant / base
--   base_roofline_pct, variant_roofline_pct 100 count·roofline_ns / GPU time, each trace's device (perf_args.
--                                           roofline_pct; NULL when the device is unknown)
--   roofline_pct_diff                       variant - base, percentage points
-- A side of several traces (the ranks of a job, diff/pairs) has its calls and GPU time summed, and its rates
-- over all of them (Σ count·flops / Σ GPU time, ...).
-- Ordered by |diff_ns| descending, then key.
-- @output diff-level 10 perf KEYS op_name family input_dims input_type concrete_inputs
CREATE OR REPLACE MACRO diff_perf(base_id, variant_id) AS TABLE
WITH sides(is_base, ids) AS (VALUES (true, base_id), (false, variant_id)),
r AS MATERIALIZED (
    SELECT s.is_base, p.k,
           sum(p.n * p.flops ORDER BY p.trace_id) / nullif(sum(p.v_ns), 0) / 1e3 AS tflop_per_s,
           sum(p.n * p.bytes ORDER BY p.trace_id) / nullif(sum(p.v_ns), 0) / 1e3 AS tb_per_s,
           100.0 * sum(p.n * p.roofline_ns ORDER BY p.trace_id) / nullif(sum(p.v_ns), 0) AS roofline_pct
    FROM sides s JOIN _diff_perf_src p ON _diff_in(p.trace_id, s.ids)
    GROUP BY s.is_base, p.k
)
SELECT d.k.op_name AS op_name, d.k.family AS family, d.k.input_dims AS input_dims, d.k.input_type AS input_type,
       d.k.concrete_inputs AS concrete_inputs, d.* EXCLUDE (k),
       b.tflop_per_s AS base_tflop_per_s, v.tflop_per_s AS variant_tflop_per_s,
       v.tflop_per_s - b.tflop_per_s AS tflop_per_s_diff, v.tflop_per_s / nullif(b.tflop_per_s, 0) AS tflop_per_s_ratio,
       b.tb_per_s AS base_tb_per_s, v.tb_per_s AS variant_tb_per_s,
       v.tb_per_s - b.tb_per_s AS tb_per_s_diff, v.tb_per_s / nullif(b.tb_per_s, 0) AS tb_per_s_ratio,
       b.roofline_pct AS base_roofline_pct, v.roofline_pct AS variant_roofline_pct,
       v.roofline_pct - b.roofline_pct AS roofline_pct_diff
FROM _diff_sides('_diff_perf_src', base_id, variant_id) d
LEFT JOIN r b ON b.is_base AND b.k = d.k
LEFT JOIN r v ON NOT v.is_base AND v.k = d.k
ORDER BY abs(d.diff_ns) DESC, op_name, family, input_dims, input_type, concrete_inputs;
