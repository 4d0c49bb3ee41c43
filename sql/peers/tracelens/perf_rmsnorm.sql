-- peers/tracelens/perf_rmsnorm — TraceLens (0.1.0) RMSNorm extension models (aiter's and vLLM's fused RMSNorm
-- ops) and their sheet RMSNorm_fwd.csv of the perf report.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/extensions/rmsnorm_perf_model_extensions.py (on top of RMSNorm and Normalization in
-- TraceLens/PerfModel/perf_model.py) and the op names of get_pseudo_op_mappings (pseudo_ops_perf_utils.py), which
-- the class map holds in every report; the code is ours. The models' category is RMSNorm, its own sheet
-- (RMSNorm_fwd; the ops have no backward sheet).
--   operands   x (the normalized input) and the weight are Input Dims [0] and [1] for aiter_rms_norm
--              (aiter::rms_norm, rmsnorm2d_fwd_ck), fused_rms_mxfp4_quant, vllm_rocm_aiter_rmsnorm_fp8_group_quant
--              and vllm_rocm_aiter_triton_add_rmsnorm_pad; [1] and [2] for aiter_rmsnorm; [1] and [3] for
--              aiter_rmsnorm2d_fwd_with_dynamicquant_ck and aiter_rmsnorm_quant; [1] and [4] for
--              aiter_rmsnorm2d_fwd_with_add_ck (and aiter::add_rmsnorm); [0] and [2] for
--              vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant. dtype and stride are x's.
--   params     op_shape = x's shape, dtype_in_out = (x's dtype, None), stride_input, stride_output None,
--              num_channels c = the weight's first size, has_bias False, is_affine True, is_training False.
--   FLOPs      with n = elements of x: RMSNorm's n / c · (2c + 2) + 2n (a float, as Python divides); + n for a
--              residual add (with_add_ck, add_rmsnorm_pad); + 2n for a quantization (dynamicquant_ck,
--              rmsnorm_quant, fp8_group_quant); + 3n for with_add_fp8_group_quant; fused_rms_mxfp4_quant: + M·c
--              with a residual (Input Dims[6] of rank 2), + int(RMSNorm FLOPs · M·n2 / n) with a second input
--              x2 (Input Dims[3] of rank 2, n2 its second size), + 2n; M = n // c.
--   bytes      b = bpe of x's dtype: RMSNorm's 2·n·b + c·b; with_add_ck 4·n·b + c·b; dynamicquant_ck n·b + c·b +
--              n + 4·M; rmsnorm_quant and fp8_group_quant n·b + c·b + n + 4·M·ceil(c / g) (g = the group size:
--              Concrete Inputs[5] for rmsnorm_quant, c when not a positive integer; [3] for fp8_group_quant);
--              with_add_fp8_group_quant (g = Concrete Inputs[4]) 3·n·b + c·b + n + 4·M·ceil(c / g);
--              add_rmsnorm_pad 2·n·b + c·b + M·c_out·b + M·c·b with c_out = c rounded up to a multiple of
--              Concrete Inputs[4] (c when not positive); fused_rms_mxfp4_quant n·b + c·b + n/2 + n // 32 (+ 2·n·b
--              with the residual; + 2·M·n2·b + n2·b with x2).
--   Compute Spec  'vector_' + the precision of x's dtype.
-- An instance whose args do not fit (an operand or stride missing, an unknown dtype, a group size or pad that is
-- not an integer where the model reads one without a fallback, c = 0) raises in TraceLens and is left out.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_rmsnorm_of(ev): one row per RMSNorm extension instance of ev (_tl_perf_events or a view with its
-- columns) TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE MACRO _tl_perf_rmsnorm_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract_string(input_types, '$[*]') AS ty,
           input_strides AS st, json_extract_string(concrete_inputs, '$[*]') AS ci,
           CASE WHEN model IN ('aiter_rms_norm', 'fused_rms_mxfp4_quant', 'vllm_rocm_aiter_rmsnorm_fp8_group_quant',
                               'vllm_rocm_aiter_triton_add_rmsnorm_pad', 'vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant')
                THEN 0 ELSE 1 END AS ix,
           CASE model WHEN 'aiter_rmsnorm' THEN 2 WHEN 'aiter_rmsnorm2d_fwd_with_dynamicquant_ck' THEN 3
                      WHEN 'aiter_rmsnorm_quant' THEN 3 WHEN 'aiter_rmsnorm2d_fwd_with_add_ck' THEN 4
                      WHEN 'vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant' THEN 2 ELSE 1 END AS iw
    FROM query_table(ev) WHERE sheet = 'RMSNorm_fwd'
), a AS (
    SELECT *, _tl_shape(json_extract(d, '$[' || ix || ']')) AS xs, json_extract(st, '$[' || ix || ']') AS xst,
           json_extract(d, '$[' || iw || '][0]')::BIGINT AS c, _tl_bpe(ty[ix + 1]) AS bpe, ty[ix + 1] AS dt,
           CASE model WHEN 'aiter_rmsnorm_quant' THEN _tl_int_text(ci[6])
                      WHEN 'vllm_rocm_aiter_rmsnorm_fp8_group_quant' THEN _tl_int_text(ci[4])
                      WHEN 'vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant' THEN _tl_int_text(ci[5])
                      WHEN 'vllm_rocm_aiter_triton_add_rmsnorm_pad' THEN _tl_int_text(ci[5]) END AS gi,
           CASE WHEN json_array_length(json_extract(d, '$[3]')) = 2 THEN json_extract(d, '$[3][1]')::BIGINT END AS n2,
           coalesce(json_array_length(json_extract(d, '$[6]')) = 2, false) AS res1
    FROM e
), ok AS (
    SELECT *, _tl_numel(xs)::DOUBLE AS n, _tl_numel(xs) // c AS m,
           CASE WHEN model = 'aiter_rmsnorm_quant' AND coalesce(gi, 0) <= 0 THEN c ELSE gi END AS g
    FROM a
    WHERE xs IS NOT NULL AND json_type(xst) = 'ARRAY' AND c IS NOT NULL AND c <> 0 AND bpe IS NOT NULL
      AND (gi IS NOT NULL OR model NOT IN ('vllm_rocm_aiter_rmsnorm_fp8_group_quant',
                                           'vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant',
                                           'vllm_rocm_aiter_triton_add_rmsnorm_pad'))
      AND (gi <> 0 OR model NOT IN ('vllm_rocm_aiter_rmsnorm_fp8_group_quant',
                                    'vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant'))
), f AS (
    SELECT *, n / c * (2 * c + 2) + n * 2 AS base,
           -floor(-c / g)::BIGINT AS ng,
           CASE WHEN gi > 0 THEN -floor(-c / gi)::BIGINT * gi ELSE c END AS c_out
    FROM ok
)
SELECT trace_id, event_id,
       [{'k': 'op_shape', 'v': _py_tuple1(json_extract(d, '$[' || ix || ']')), 't': NULL},
        {'k': 'dtype_in_out', 'v': '(' || _py_str(dt) || ', None)', 't': NULL},
        {'k': 'stride_input', 'v': _py_tuple1(xst), 't': NULL},
        {'k': 'stride_output', 'v': NULL, 't': NULL},
        {'k': 'num_channels', 'v': c::VARCHAR, 't': 'i'},
        {'k': 'has_bias', 'v': 'False', 't': NULL},
        {'k': 'is_affine', 'v': 'True', 't': NULL},
        {'k': 'is_training', 'v': 'False', 't': NULL}] AS params,
       CASE WHEN model IN ('aiter_rmsnorm2d_fwd_with_add_ck', 'vllm_rocm_aiter_triton_add_rmsnorm_pad') THEN n + base
            WHEN model IN ('aiter_rmsnorm2d_fwd_with_dynamicquant_ck', 'aiter_rmsnorm_quant',
                           'vllm_rocm_aiter_rmsnorm_fp8_group_quant') THEN base + 2 * n
            WHEN model = 'vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant' THEN base + 3 * n
            WHEN model = 'fused_rms_mxfp4_quant'
            THEN base + CASE WHEN res1 THEN m * c ELSE 0 END
                 + CASE WHEN n2 IS NOT NULL THEN trunc(base * (m * n2) / greatest(n, 1)) ELSE 0 END + 2 * n
            ELSE base END AS flops,
       CASE model WHEN 'aiter_rmsnorm2d_fwd_with_add_ck' THEN 4 * n * bpe + c * bpe
                  WHEN 'aiter_rmsnorm2d_fwd_with_dynamicquant_ck' THEN n * bpe + c * bpe + n + m * 4
                  WHEN 'aiter_rmsnorm_quant' THEN n * bpe + c * bpe + n + m * ng * 4
                  WHEN 'vllm_rocm_aiter_rmsnorm_fp8_group_quant' THEN n * bpe + c * bpe + n + m * ng * 4
                  WHEN 'vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant'
                  THEN 2 * n * bpe + c * bpe + n + n * bpe + m * ng * 4
                  WHEN 'vllm_rocm_aiter_triton_add_rmsnorm_pad' THEN 2 * n * bpe + c * bpe + m * c_out * bpe + m * c * bpe
                  WHEN 'fused_rms_mxfp4_quant'
                  THEN n * bpe + c * bpe + n * 0.5 + (n::BIGINT // 32)
                       + CASE WHEN res1 THEN 2 * n * bpe ELSE 0 END
                       + CASE WHEN n2 IS NOT NULL THEN 2 * m * n2 * bpe + n2 * bpe ELSE 0 END
                  ELSE n * bpe + n * bpe + c * bpe END AS bytes,
       'vector_' || _tl_precision(dt) AS compute_spec
FROM f;

-- _tl_perf_rmsnorm: one row per RMSNorm extension instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_rmsnorm AS SELECT * FROM _tl_perf_rmsnorm_of('_tl_perf_events');

-- _tl_perf_rmsnorm_sheet(tbl, ev, by_kernels): the rows and columns of RMSNorm_fwd.csv from the instances tbl and
-- their events ev, grouped by the number of GPU events too when by_kernels (the inference report).
CREATE OR REPLACE MACRO _tl_perf_rmsnorm_sheet(tbl, ev, by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'op_shape') AS "param: op_shape",
       _tl_perf_param(params, 'dtype_in_out') AS "param: dtype_in_out",
       _tl_perf_param(params, 'stride_input') AS "param: stride_input",
       _tl_perf_param(params, 'stride_output') AS "param: stride_output",
       _tl_perf_param(params, 'num_channels') AS "param: num_channels",
       _tl_perf_param(params, 'has_bias') AS "param: has_bias",
       _tl_perf_param(params, 'is_affine') AS "param: is_affine",
       _tl_perf_param(params, 'is_training') AS "param: is_training",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of(tbl, ev, by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_rmsnorm_fwd: TraceLens's RMSNorm_fwd.csv, one row per trace and group of RMSNorm extension op instances
-- with the same name and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: op_shape, dtype_in_out, stride_input, stride_output, num_channels, has_bias, is_affine,
--   is_training                 the model's parameters (see the top of this file), as Python prints them
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 19 RMSNorm_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_rmsnorm_fwd AS
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_rmsnorm_sheet('_tl_perf_rmsnorm', '_tl_perf_events', false);
