-- peers/tracelens/perf_group_quant — TraceLens (0.1.0) MXFP4 group-quant perf models and their sheet
-- GroupQuant_fwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/extensions/perf_model_extensions.py (fused_flatten_mxfp4_quant and its subclasses
-- fused_dynamic_mx_quant_moe_sort_hip, sglang_quant_dynamic_mxfp4_quant, aiter_fused_dynamic_mxfp4_quant_moe_sort_hip,
-- aiter_dynamic_per_group_scaled_quant_fp4; UnaryElementwise in perf_model.py); the code is ours. Category and
-- sheet GroupQuant (GroupQuant_fwd.csv; no backward model). The group-quant ops whose class derives from
-- BinaryElementwise go to BinaryElementwise.csv instead (peers/tracelens/perf_elementwise).
--   operand    x = Input Dims[0] (fused_flatten_mxfp4_quant, sglang_quant_dynamic_mxfp4_quant), [1]
--              (aiter_dynamic_per_group_scaled_quant_fp4) or [2] (the two moe_sort ops), its dtype at the same
--              position of Input type.
--   params     op_shape = x's shape, dtype_in_out = (dtype, dtype), stride_input = x's Input Strides
--              (fused_flatten_mxfp4_quant and fused_dynamic_mx_quant_moe_sort_hip; None for the others),
--              stride_output None.
--   FLOPs 2·n for n = elements of x; bytes n·bpe + n/2 (packed FP4) + n // 32 (E8M0 scales), None for an unknown
--   dtype. Compute Spec 'vector_' + the precision of the dtype.
-- An instance whose args do not fit (an operand or its stride missing) raises in TraceLens and is left out.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_group_quant_fwd: one row per GroupQuant_fwd instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_group_quant_fwd AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract_string(input_types, '$[*]') AS ty,
           input_strides AS st,
           CASE model WHEN 'aiter_dynamic_per_group_scaled_quant_fp4' THEN 1
                      WHEN 'fused_dynamic_mx_quant_moe_sort_hip' THEN 2
                      WHEN 'aiter_fused_dynamic_mxfp4_quant_moe_sort_hip' THEN 2 ELSE 0 END AS ix,
           model IN ('fused_flatten_mxfp4_quant', 'fused_dynamic_mx_quant_moe_sort_hip') AS strided
    FROM _tl_perf_events WHERE sheet = 'GroupQuant_fwd'
), a AS (
    SELECT *, json_extract(d, '$[' || ix || ']') AS x, _tl_shape(json_extract(d, '$[' || ix || ']')) AS xs,
           ty[ix + 1] AS dt, json_extract(st, '$[' || ix || ']') AS xst
    FROM e
)
SELECT trace_id, event_id,
       [{'k': 'op_shape', 'v': _py_tuple1(x), 't': NULL},
        {'k': 'dtype_in_out', 'v': '(' || _py_str(dt) || ', ' || _py_str(dt) || ')', 't': NULL},
        {'k': 'stride_input', 'v': CASE WHEN strided THEN _py_tuple1(xst) END, 't': NULL},
        {'k': 'stride_output', 'v': NULL, 't': NULL}] AS params,
       2 * _tl_numel(xs) AS flops,
       _tl_numel(xs) * _tl_bpe(dt) + _tl_numel(xs) * 0.5 + _tl_numel(xs) // 32 AS bytes,
       'vector_' || _tl_precision(dt) AS compute_spec
FROM a
WHERE xs IS NOT NULL AND dt IS NOT NULL AND (NOT strided OR json_type(xst) = 'ARRAY');

-- _tl_perf_group_quant_sheet(by_kernels): the rows and columns of GroupQuant_fwd.csv (see tl_perf_group_quant_fwd), grouped by num_kernels too
-- when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_group_quant_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'op_shape') AS "param: op_shape",
       _tl_perf_param(params, 'dtype_in_out') AS "param: dtype_in_out",
       _tl_perf_param(params, 'stride_input') AS "param: stride_input",
       _tl_perf_param(params, 'stride_output') AS "param: stride_output",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_group_quant_fwd', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_group_quant_fwd: TraceLens's GroupQuant_fwd.csv, one row per trace and group of MXFP4 group-quant op
-- instances with the same name and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: op_shape, dtype_in_out, stride_input, stride_output   see the top of this file
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 23 GroupQuant_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_group_quant_fwd AS SELECT * EXCLUDE (num_kernels) FROM _tl_perf_group_quant_sheet(false);
