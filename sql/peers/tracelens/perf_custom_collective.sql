-- peers/tracelens/perf_custom_collective — TraceLens (0.1.0) perf models of the serving stacks' custom
-- collectives (vLLM's, SGLang's and aiter's all-reduce, reduce-scatter and all-gather ops, aiter's fused
-- all-reduce + RMSNorm) and their sheet CustomCollective_fwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/extensions/custom_collectives_perf_model_extensions.py (classes CustomCollective and its
-- subclasses); the code is ours. The category CustomCollective has no backward: its instances make the sheet
-- CustomCollective_fwd.csv. Per model, the arguments (Input Dims / Input type / Input Strides index) and params:
--   aiter_fused_allreduce_rmsnorm (aiter::fused_allreduce_rmsnorm)   inp [2], weight [6]
--   aiter_fused_allreduce_rmsnorm_ (aiter::fused_allreduce_rmsnorm_) inp [0], weight [2]
--       params op_shape (inp's shape), dtype_in (its type), stride_input (its strides), num_channels (the
--       weight's first size); FLOPs E + (E // C)·(2C + 2) + 2E (residual add, RMSNorm, weight), E = elements of
--       inp, C = num_channels; bytes (4E + C)·bpe (inp and residual read, weight read, residual and output
--       written)
--   custom_ar_all_reduce (_C_custom_ar::all_reduce, _C_custom_ar::qr_all_reduce, sgl_kernel::all_reduce_reg,
--       sgl_kernel::qr_all_reduce)   inp [1]: params op_shape, dtype_in, stride_input; FLOPs 0, bytes 2E·bpe
--   aiter_reduce_scatter, aiter_all_gather_reg (aiter::reduce_scatter, aiter::all_gather_reg)   inp [1], out
--       [2]: params op_shape, out_shape, dtype_in, stride_input; FLOPs 0, bytes (E + elements of out)·bpe
--   sgl_kernel_reg_all_gather_into_tensor (sglang::reg_all_gather_into_tensor)   out [0], inp [1], type [0]:
--       params out_shape, op_shape, dtype_in; FLOPs 0, bytes (E + elements of out)·bpe
-- bpe is name2bpe of dtype_in (peers/tracelens/perf_ops _tl_bpe): an unknown type drops the instance, as does a
-- missing argument or stride list; no Compute Spec.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_custom_collective: one row per CustomCollective_fwd instance TraceLens keeps, in _tl_perf_summary's
-- input form.
CREATE OR REPLACE VIEW _tl_perf_custom_collective AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, input_types AS ty, input_strides AS st,
           CASE model WHEN 'aiter_fused_allreduce_rmsnorm' THEN 2 WHEN 'aiter_fused_allreduce_rmsnorm_' THEN 0
                      ELSE 1 END AS i_in,
           CASE model WHEN 'aiter_fused_allreduce_rmsnorm' THEN 6 WHEN 'aiter_fused_allreduce_rmsnorm_' THEN 2 END
               AS i_w,
           CASE WHEN model IN ('aiter_reduce_scatter', 'aiter_all_gather_reg') THEN 2
                WHEN model = 'sgl_kernel_reg_all_gather_into_tensor' THEN 0 END AS i_out,
           CASE WHEN model = 'sgl_kernel_reg_all_gather_into_tensor' THEN 0
                WHEN model = 'aiter_fused_allreduce_rmsnorm' THEN 2 WHEN model = 'aiter_fused_allreduce_rmsnorm_' THEN 0
                ELSE 1 END AS i_ty,
           model <> 'sgl_kernel_reg_all_gather_into_tensor' AS has_stride
    FROM _tl_perf_events WHERE sheet = 'CustomCollective_fwd'
), a AS (
    SELECT *, json_extract(d, '$[' || i_in || ']') AS inp_j, _tl_shape(json_extract(d, '$[' || i_in || ']')) AS inp,
           json_extract(d, '$[' || i_out || ']') AS out_j, _tl_shape(json_extract(d, '$[' || i_out || ']')) AS out,
           _tl_shape(json_extract(d, '$[' || i_w || ']'))[1] AS c,
           json_extract_string(ty, '$[' || i_ty || ']') AS dtype,
           json_extract(st, '$[' || i_in || ']') AS st_j
    FROM e
), ok AS (
    SELECT *, _tl_numel(inp) AS n, _tl_bpe(dtype) AS bpe FROM a
    WHERE inp IS NOT NULL AND dtype IS NOT NULL AND _tl_bpe(dtype) IS NOT NULL
      AND (i_out IS NULL OR out IS NOT NULL) AND (i_w IS NULL OR c IS NOT NULL)
      AND (NOT has_stride OR json_type(st_j) = 'ARRAY')
)
SELECT trace_id, event_id,
       CASE WHEN model = 'sgl_kernel_reg_all_gather_into_tensor'
            THEN [{'k': 'out_shape', 'v': _py_tuple1(out_j), 't': NULL}, {'k': 'op_shape', 'v': _py_tuple1(inp_j), 't': NULL},
                  {'k': 'dtype_in', 'v': dtype, 't': 's'}]
            ELSE list_concat(
                     [{'k': 'op_shape', 'v': _py_tuple1(inp_j), 't': NULL}],
                     CASE WHEN i_out IS NOT NULL THEN [{'k': 'out_shape', 'v': _py_tuple1(out_j), 't': NULL}] ELSE [] END,
                     [{'k': 'dtype_in', 'v': dtype, 't': 's'}, {'k': 'stride_input', 'v': _py_tuple1(st_j), 't': NULL}],
                     CASE WHEN i_w IS NOT NULL THEN [{'k': 'num_channels', 'v': c::VARCHAR, 't': 'i'}] ELSE [] END)
            END AS params,
       CASE WHEN i_w IS NOT NULL THEN n + (n // c) * (2 * c + 2) + n * 2 ELSE 0 END AS flops,
       CASE WHEN i_w IS NOT NULL THEN 2 * n * bpe + c * bpe + 2 * n * bpe
            WHEN i_out IS NOT NULL THEN (n + _tl_numel(out)) * bpe
            ELSE 2 * n * bpe END AS bytes,
       NULL AS compute_spec
FROM ok;

-- _tl_perf_custom_collective_sheet(by_kernels): the rows and columns of CustomCollective_fwd.csv (see tl_perf_custom_collective_fwd), grouped by num_kernels too
-- when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_custom_collective_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'op_shape') AS "param: op_shape",
       _tl_perf_param(params, 'dtype_in') AS "param: dtype_in",
       _tl_perf_param(params, 'stride_input') AS "param: stride_input",
       _tl_perf_param(params, 'num_channels') AS "param: num_channels",
       _tl_perf_param(params, 'out_shape') AS "param: out_shape",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_custom_collective', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_custom_collective_fwd: TraceLens's CustomCollective_fwd.csv, one row per trace and group of custom
-- collective instances with the same name and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: op_shape, dtype_in, stride_input, num_channels, out_shape   see the top of this file
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 27 CustomCollective_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_custom_collective_fwd AS SELECT * EXCLUDE (num_kernels) FROM _tl_perf_custom_collective_sheet(false);
