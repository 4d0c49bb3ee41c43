-- diff/ops — GPU time per op of two traces compared: by op name, and by op name and argument set (the same op on
-- the same input dims, dtypes, strides and concrete inputs), the unit that stays comparable when the kernels
-- underneath have other names (another vendor, library or version).
--
-- @requires diff/pairs gpu/op_summaries

-- _diff_op_src: op_summary (see diff/pairs for the columns): k {op_name, hlo_module ('' but for JAX's HLO ops)},
-- n op instances, v_ns the summed duration of their GPU events. An HLO op is paired by its module and name, which
-- XLA gives the same on every backend (the same JAX program on H100 and MI300).
CREATE OR REPLACE VIEW _diff_op_src AS
SELECT trace_id, {'op_name': coalesce(op_name, ''), 'hlo_module': coalesce(hlo_module, '')} AS k, op_count AS n,
       kernel_time_ns AS v_ns
FROM op_summary;

-- _diff_op_arg_src: op_arg_summary (see diff/pairs for the columns): k {op_name, hlo_module, input_dims,
-- input_type, input_strides, concrete_inputs}, n op instances, v_ns the summed duration of their GPU events.
-- @materialize diff-op_args
CREATE OR REPLACE VIEW _diff_op_arg_src AS
SELECT trace_id,
       {'op_name': op_name, 'hlo_module': hlo_module, 'input_dims': input_dims, 'input_type': input_type, 'input_strides': input_strides,
        'concrete_inputs': concrete_inputs} AS k,
       count AS n, kernel_time_sum_ns AS v_ns
FROM op_arg_summary;

-- diff_ops(base_id, variant_id): GPU time per op name of the trace variant_id against that of base_id; one row
-- per op name (and HLO module) of op_summary present in either trace (a GPU event belongs to its op in
-- gpu_event_attribution; '[no launch]' and '[launch API]' rows included):
--   op_name                     the op
--   hlo_module                  JAX: the HLO op's module ('' for every other op)
--   side                        both | base_only | variant_only (diff/pairs)
--   base_count, variant_count   op instances that launched GPU work (op_summary.op_count)
--   base_ns, variant_ns         summed duration of their GPU events, ns (op_summary.kernel_time_ns)
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
-- Ordered by |diff_ns| descending.
-- @output diff-level 5 ops KEYS op_name hlo_module
CREATE OR REPLACE MACRO diff_ops(base_id, variant_id) AS TABLE
SELECT k.op_name AS op_name, k.hlo_module AS hlo_module, d.* EXCLUDE (k)
FROM _diff_sides('_diff_op_src', base_id, variant_id) d
ORDER BY abs(diff_ns) DESC, op_name, hlo_module;

-- diff_op_args(base_id, variant_id): GPU time per op and argument set of the trace variant_id against that of
-- base_id; one row per (op name, HLO module, input dims, input types, input strides, concrete inputs) of
-- op_arg_summary present in either trace ('' where the trace did not record shapes):
--   op_name, hlo_module, input_dims, input_type, input_strides, concrete_inputs   the argument set
--                               (op_arg_summary)
--   side                        both | base_only | variant_only (diff/pairs)
--   base_count, variant_count   op instances (op_arg_summary.count)
--   base_ns, variant_ns         summed duration of their GPU events, ns (op_arg_summary.kernel_time_sum_ns)
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
-- Ordered by |diff_ns| descending.
-- @output diff-level 6 op_args KEYS op_name hlo_module input_dims input_type input_strides concrete_inputs
CREATE OR REPLACE MACRO diff_op_args(base_id, variant_id) AS TABLE
SELECT k.op_name AS op_name, k.hlo_module AS hlo_module, k.input_dims AS input_dims, k.input_type AS input_type,
       k.input_strides AS input_strides, k.concrete_inputs AS concrete_inputs, d.* EXCLUDE (k)
FROM _diff_sides('_diff_op_arg_src', base_id, variant_id) d
ORDER BY abs(diff_ns) DESC, op_name, hlo_module, input_dims, input_type, input_strides, concrete_inputs;
