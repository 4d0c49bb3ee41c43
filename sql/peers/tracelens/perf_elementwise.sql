-- peers/tracelens/perf_elementwise — TraceLens (0.1.0) elementwise perf models and their sheets
-- UnaryElementwise.csv and BinaryElementwise.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (classes UnaryElementwise, aten_unary_elementwise, aten_replication_pad,
-- aten_upsample_nearest, BinaryElementwise, aten_binary_elementwise) and the op lists unary_elemwise_ops /
-- binary_elemwise_ops / replication_pad_ops / upsample_ops of TraceLens/PerfModel/torch_op_mapping.py; the
-- code is ours.
--   unary      op_shape = Input Dims[0], dtype_in = Input type[0], stride_input = Input Strides[0]; when a
--              second operand with dims is recorded (the output of copy_), dtype_out = Input type[1] and
--              stride_output = Input Strides[1], else None. FLOPs = elements of op_shape; bytes =
--              elements · (bpe(dtype_in) + bpe(dtype_out, or dtype_in when None)), NULL for an unknown
--              dtype.
--   pad        aten::replication_pad1d/2d/3d (aten_replication_pad): input_shape = Input Dims[0], padding = the
--              integers of Concrete Inputs[1] ('[l, r, t, b, ...]', innermost dimension first): pair i widens
--              dimension -1-i by its two entries, giving output_shape; op_shape = output_shape, dtype_in_out =
--              (dtype, dtype), stride_input = Input Strides[0], stride_output None. FLOPs = elements of
--              output_shape; bytes = elements(input)·bpe + elements(output)·bpe.
--   upsample   aten::upsample_nearest1d/2d/3d (aten_upsample_nearest): input_shape = Input Dims[0], output_shape
--              = its first two sizes and the list in Concrete Inputs[1] (the output size; a call with scale
--              factors only records none and is dropped); otherwise as pad, without padding.
--              These two models put `param: input_shape` and `param: output_shape` (and `param: padding`)
--              before op_shape: the sheet has those columns whenever one of these ops is in it.
--   binary     shape_in1, shape_in2 = Input Dims[0], [1]; dtypes and strides at the same positions; a third
--              operand with dims gives dtype_out and stride_output. The output shape broadcasts the two
--              (right-aligned, 1 stretches; other mismatches drop the instance). FLOPs = output elements;
--              bytes = elements(in1)·bpe1 + elements(in2)·bpe2 + elements(out)·bpe_out, bpe_out =
--              bpe(dtype_out) when recorded, else the larger of the two when both operands have a shape
--              (not ()), else bpe1; NULL when a size is unknown.
--   Compute Spec  'vector_' + the precision of the first input's dtype.
-- Instances without Input Dims, Input type or Input Strides, or with too few of them, are dropped (they
-- raise in TraceLens).
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_unary_aten_of(ev): one row per aten unary elementwise instance of ev (_tl_perf_events or a view with
-- its columns: model tells aten_unary_elementwise, aten_replication_pad and aten_upsample_nearest apart)
-- TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE MACRO _tl_perf_unary_aten_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract(input_types, '$[*]') AS ty,
           input_strides AS st, json_extract(concrete_inputs, '$[*]') AS ci
    FROM query_table(ev)
    WHERE sheet = 'UnaryElementwise' AND model IN ('aten_unary_elementwise', 'aten_replication_pad', 'aten_upsample_nearest')
), a AS (
    SELECT *, _tl_shape(json_extract(d, '$[0]')) AS in_shape,
           coalesce(model = 'aten_unary_elementwise'
                    AND json_type(json_extract(d, '$[1]')) = 'ARRAY' AND json_array_length(json_extract(d, '$[1]')) > 0,
                    false) AS has_out,
           CASE WHEN model IN ('aten_replication_pad', 'aten_upsample_nearest')
                THEN _tl_py_list_ints(ci[2] ->> '$') END AS ci1
    FROM e
), s AS (   -- the output shape of pad and upsample (TraceLens's op_shape for them)
    SELECT *,
           CASE model
                WHEN 'aten_replication_pad'
                THEN list_transform(range(1, len(in_shape) + 1), lambda i:
                         in_shape[i] + CASE WHEN len(in_shape) - i < len(ci1) // 2
                                            THEN ci1[2 * (len(in_shape) - i) + 1] + ci1[2 * (len(in_shape) - i) + 2]
                                            ELSE 0 END)
                WHEN 'aten_upsample_nearest' THEN list_concat(in_shape[1:2], ci1)
                ELSE in_shape END AS op_shape
    FROM a
    WHERE model = 'aten_unary_elementwise' OR (ci1 IS NOT NULL AND len(ci1) // 2 <= len(in_shape))
), ok AS (
    SELECT *, ty[1] AS dt_in, CASE WHEN has_out THEN ty[2] END AS dt_out,
           _tl_bpe(ty[1] ->> '$') AS bpe_in,
           CASE WHEN has_out THEN _tl_bpe(ty[2] ->> '$') ELSE _tl_bpe(ty[1] ->> '$') END AS bpe_out,
           model <> 'aten_unary_elementwise' AS shaped
    FROM s
    WHERE in_shape IS NOT NULL AND len(ty) >= 1 AND json_type(json_extract(st, '$[0]')) = 'ARRAY'
          AND (NOT has_out OR (len(ty) >= 2 AND json_type(json_extract(st, '$[1]')) = 'ARRAY'))
          AND (model = 'aten_unary_elementwise' OR _tl_bpe(ty[1] ->> '$') IS NOT NULL)
)
SELECT trace_id, event_id,
       list_concat(
           CASE WHEN shaped
                THEN [{'k': 'input_shape', 'v': _py_tuple1(json_extract(d, '$[0]')), 't': NULL},
                      {'k': 'output_shape', 'v': _py_seq(op_shape::VARCHAR[], len(op_shape)), 't': NULL}]
                ELSE [] END,
           CASE WHEN model = 'aten_replication_pad'
                THEN [{'k': 'padding', 'v': '[' || array_to_string(ci1, ', ') || ']', 't': NULL}] ELSE [] END,
           [{'k': 'op_shape', 'v': CASE WHEN shaped THEN _py_seq(op_shape::VARCHAR[], len(op_shape))
                                        ELSE _py_tuple1(json_extract(d, '$[0]')) END, 't': NULL},
            {'k': 'dtype_in_out', 'v': '(' || _py_atom(dt_in) || ', '
                                       || CASE WHEN shaped THEN _py_atom(dt_in) ELSE _tl_py_opt_str(dt_out) END || ')',
             't': NULL},
            {'k': 'stride_input', 'v': _py_tuple1(json_extract(st, '$[0]')), 't': NULL},
            {'k': 'stride_output', 'v': CASE WHEN has_out THEN _py_tuple1(json_extract(st, '$[1]')) END, 't': NULL}])
           AS params,
       _tl_numel(op_shape) AS flops,
       _tl_numel(in_shape) * bpe_in + _tl_numel(op_shape) * bpe_out AS bytes,
       'vector_' || _tl_precision(dt_in ->> '$') AS compute_spec
FROM ok;

-- _tl_perf_unary_ext_of(ev): one row per instance of ev of the unary elementwise models beyond aten's that
-- TraceLens keeps, in _tl_perf_summary's input form. Formulas per TraceLens PerfModel (UnaryElementwise in
-- perf_model.py: FLOPs = elements of op_shape, bytes = elements · (bpe(in) + bpe(out, or in when None))):
--   aiter_silu_and_mul (aiter::silu_and_mul, _C::silu_and_mul; sgl_kernel_silu_and_mul the same),
--   aiter_gelu_and_mul, aiter_gelu_tanh_and_mul (extensions/perf_model_extensions.py): args (out, input), out
--              [..., d] and input [..., 2d]: op_shape = Input Dims[0], dtype_in_out = (Input type[1], [0]),
--              stride_input = Input Strides[1], stride_output = [0]; FLOPs 5·n (silu), 8·n (gelu), 10·n (gelu
--              tanh) for n = elements of op_shape; bytes 2·n·bpe(in) + n·bpe(out).
--   primus_turbo_quantize_fp8 (perf_model.py): op_shape = Input Dims[0], dtype_in_out = (Input type[0],
--              'c10::Float8_e4m3fnuz'), stride_input = Input Strides[0] (None without), stride_output None.
--   primus_turbo_quantize_mxfp4_dual: as fp8 with 'c10::Float4_e2m1fn_x2'; op_shape is (M, N); bytes M·N·bpe(in)
--              + 2·ceil(M·N / 2) packed FP4 + M·ceil(N/32) + N·ceil(M/32) scales.
-- An unknown dtype makes the byte count raise in TraceLens (the instance is left out), except for the quantize
-- ops, whose byte count is then None. Compute Spec 'vector_' + the precision of dtype_in_out[0].
CREATE OR REPLACE MACRO _tl_perf_unary_ext_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model, json_extract(input_dims, '$[0]') AS d0, _tl_shape(json_extract(input_dims, '$[0]')) AS s0,
           json_extract_string(input_types, '$[*]') AS ty, input_strides AS st,
           json_extract(input_strides, '$[0]') AS st0, json_extract(input_strides, '$[1]') AS st1
    FROM query_table(ev)
    WHERE sheet = 'UnaryElementwise'
      AND model IN ('aiter_silu_and_mul', 'aiter_gelu_and_mul', 'aiter_gelu_tanh_and_mul', 'primus_turbo_quantize_fp8',
                    'primus_turbo_quantize_mxfp4_dual')
), gated AS (
    SELECT *, _tl_numel(s0) AS n, ty[2] AS dt_in, ty[1] AS dt_out FROM e
    WHERE model IN ('aiter_silu_and_mul', 'aiter_gelu_and_mul', 'aiter_gelu_tanh_and_mul')
      AND s0 IS NOT NULL AND len(ty) >= 2 AND json_type(st0) = 'ARRAY' AND json_type(st1) = 'ARRAY'
      AND _tl_bpe(ty[2]) IS NOT NULL AND _tl_bpe(ty[1]) IS NOT NULL
), quant AS (
    SELECT *, _tl_numel(s0) AS n, ty[1] AS dt_in,
           CASE WHEN model = 'primus_turbo_quantize_fp8' THEN 'c10::Float8_e4m3fnuz' ELSE 'c10::Float4_e2m1fn_x2' END AS dt_out
    FROM e
    WHERE model IN ('primus_turbo_quantize_fp8', 'primus_turbo_quantize_mxfp4_dual') AND s0 IS NOT NULL AND len(ty) >= 1
      AND (model = 'primus_turbo_quantize_fp8' OR len(s0) = 2)
)
SELECT trace_id, event_id,
       [{'k': 'op_shape', 'v': _py_tuple1(d0), 't': NULL},
        {'k': 'dtype_in_out', 'v': '(' || _py_str(dt_in) || ', ' || _py_str(dt_out) || ')', 't': NULL},
        {'k': 'stride_input', 'v': _py_tuple1(st1), 't': NULL},
        {'k': 'stride_output', 'v': _py_tuple1(st0), 't': NULL}] AS params,
       n * CASE model WHEN 'aiter_silu_and_mul' THEN 5 WHEN 'aiter_gelu_and_mul' THEN 8 ELSE 10 END AS flops,
       2 * n * _tl_bpe(dt_in) + n * _tl_bpe(dt_out) AS bytes, 'vector_' || _tl_precision(dt_in) AS compute_spec
FROM gated
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'op_shape', 'v': _py_tuple1(d0), 't': NULL},
        {'k': 'dtype_in_out', 'v': '(' || _py_str(dt_in) || ', ' || _py_str(dt_out) || ')', 't': NULL},
        {'k': 'stride_input', 'v': CASE WHEN json_type(st0) = 'ARRAY' THEN _py_tuple1(st0) END, 't': NULL},
        {'k': 'stride_output', 'v': NULL, 't': NULL}],
       n,
       CASE WHEN model = 'primus_turbo_quantize_fp8' THEN n * _tl_bpe(dt_in) + n * _tl_bpe(dt_out)
            ELSE n * _tl_bpe(dt_in) + 2 * ((n + 1) // 2) + s0[1] * ((s0[2] + 31) // 32) + s0[2] * ((s0[1] + 31) // 32) END,
       'vector_' || _tl_precision(dt_in)
FROM quant;

-- _tl_perf_unary_of(ev): one row per unary elementwise instance of ev TraceLens keeps (aten's and the others),
-- in _tl_perf_summary's input form.
CREATE OR REPLACE MACRO _tl_perf_unary_of(ev) AS TABLE
SELECT * FROM _tl_perf_unary_aten_of(ev) UNION ALL SELECT * FROM _tl_perf_unary_ext_of(ev);

-- _tl_perf_unary: one row per unary elementwise instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_unary AS SELECT * FROM _tl_perf_unary_of('_tl_perf_events');

-- _tl_perf_group_quant: one row per group-quant instance of BinaryElementwise.csv TraceLens keeps, in
-- _tl_perf_summary's input form. Formulas per TraceLens PerfModel (extensions/perf_model_extensions.py; the
-- classes derive from BinaryElementwise and share its sheet):
--   per_group_quant (aiter::dynamic_per_tensor_quant, dynamic_per_token_scaled_quant,
--              dynamic_per_group_scaled_quant; args out, input, scales): shape_in1 = Input Dims[1], shape_in2 =
--              [2], shape_out = [0]; dtype_in1_in2_out = (Input type[1], [2], [0]); strides at the same
--              positions. FLOPs = elements(out) · 2.59375 (a float); bytes = elements · bpe of each of the three
--              (an unknown dtype raises: the instance is left out). Compute Spec from Input type[1].
--   vllm_triton_per_token_group_quant_fp8 (x, group_size): M, N = Input Dims[0] (1, N for one dimension; 1, 1
--              for none), group_size = the integer in Concrete Inputs[1] (128 when empty, 'None' or not an
--              integer), num_groups = max(1, ceil(N / group_size)), shape_x = Input Dims[0], dtype_x = Input
--              type[0] ('' without types); shape_in1 = shape_out = shape_x, shape_in2 = (), dtype_in1_in2_out =
--              (dtype_x, None, 'c10::float8_e4m3fn'), no strides. FLOPs 6·M·N; bytes M·N·bpe(dtype_x) + M·N +
--              M·num_groups·4 (None for an unknown dtype_x). Compute Spec from dtype_x.
CREATE OR REPLACE VIEW _tl_perf_group_quant AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract_string(input_types, '$[*]') AS ty,
           input_strides AS st, json_extract_string(concrete_inputs, '$[*]') AS ci
    FROM _tl_perf_events
    WHERE sheet = 'BinaryElementwise' AND model IN ('per_group_quant', 'vllm_triton_per_token_group_quant_fp8')
), pg AS (
    SELECT *, _tl_shape(json_extract(d, '$[0]')) AS so, _tl_shape(json_extract(d, '$[1]')) AS s1,
           _tl_shape(json_extract(d, '$[2]')) AS s2
    FROM e
    WHERE model = 'per_group_quant' AND len(ty) >= 3 AND _tl_shape(json_extract(d, '$[0]')) IS NOT NULL
      AND _tl_shape(json_extract(d, '$[1]')) IS NOT NULL AND _tl_shape(json_extract(d, '$[2]')) IS NOT NULL AND _tl_bpe(ty[1]) IS NOT NULL AND _tl_bpe(ty[2]) IS NOT NULL
      AND _tl_bpe(ty[3]) IS NOT NULL AND json_type(json_extract(st, '$[0]')) = 'ARRAY'
      AND json_type(json_extract(st, '$[1]')) = 'ARRAY' AND json_type(json_extract(st, '$[2]')) = 'ARRAY'
), tq AS (
    SELECT *, CASE WHEN json_array_length(d) > 0 THEN json_extract(d, '$[0]') ELSE '[]'::JSON END AS x,
           coalesce(_tl_shape(json_extract(d, '$[0]')), []) AS sx,
           CASE WHEN regexp_matches(trim(ci[2]), '^[+-]?[0-9]+$') THEN trim(ci[2])::BIGINT ELSE 128 END AS gs,
           coalesce(ty[1], '') AS dx
    FROM e WHERE model = 'vllm_triton_per_token_group_quant_fp8'
), tq2 AS (
    SELECT *, CASE WHEN len(sx) >= 2 THEN sx[1] ELSE 1 END AS m,
           CASE WHEN len(sx) >= 2 THEN sx[2] WHEN len(sx) = 1 THEN sx[1] ELSE 1 END AS n
    FROM tq WHERE gs <> 0
)
SELECT trace_id, event_id,
       [{'k': 'shape_in1', 'v': _py_tuple1(json_extract(d, '$[1]')), 't': NULL},
        {'k': 'shape_in2', 'v': _py_tuple1(json_extract(d, '$[2]')), 't': NULL},
        {'k': 'shape_out', 'v': _py_tuple1(json_extract(d, '$[0]')), 't': NULL},
        {'k': 'dtype_in1_in2_out', 'v': _tl_py_strs([ty[2], ty[3], ty[1]]), 't': NULL},
        {'k': 'stride_input1', 'v': _py_tuple1(json_extract(st, '$[1]')), 't': NULL},
        {'k': 'stride_input2', 'v': _py_tuple1(json_extract(st, '$[2]')), 't': NULL},
        {'k': 'stride_output', 'v': _py_tuple1(json_extract(st, '$[0]')), 't': NULL}] AS params,
       _tl_numel(so) * 2.59375 AS flops,
       _tl_numel(so) * _tl_bpe(ty[1]) + _tl_numel(s1) * _tl_bpe(ty[2]) + _tl_numel(s2) * _tl_bpe(ty[3]) AS bytes,
       'vector_' || _tl_precision(ty[2]) AS compute_spec
FROM pg
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'M', 'v': m::VARCHAR, 't': 'i'}, {'k': 'N', 'v': n::VARCHAR, 't': 'i'},
        {'k': 'group_size', 'v': gs::VARCHAR, 't': 'i'},
        {'k': 'num_groups', 'v': greatest(1, -floor(-n / gs))::BIGINT::VARCHAR, 't': 'i'},
        {'k': 'shape_x', 'v': _py_tuple1(x), 't': NULL}, {'k': 'dtype_x', 'v': dx, 't': 's'},
        {'k': 'shape_in1', 'v': _py_tuple1(x), 't': NULL}, {'k': 'shape_in2', 'v': '()', 't': NULL},
        {'k': 'shape_out', 'v': _py_tuple1(x), 't': NULL},
        {'k': 'dtype_in1_in2_out', 'v': '(' || _py_str(dx) || ', None, ''c10::float8_e4m3fn'')', 't': NULL},
        {'k': 'stride_input1', 'v': NULL, 't': NULL}, {'k': 'stride_input2', 'v': NULL, 't': NULL},
        {'k': 'stride_output', 'v': NULL, 't': NULL}],
       6 * m::HUGEINT * n,
       m::HUGEINT * n * _tl_bpe(dx) + m::HUGEINT * n + m::HUGEINT * greatest(1, -floor(-n / gs))::BIGINT * 4,
       'vector_' || _tl_precision(dx)
FROM tq2;

-- _tl_perf_binary: one row per binary elementwise instance TraceLens keeps, in _tl_perf_summary's input form
-- (liger_silu_mul_function, LigerSiLUMulFunction(a, b), is the model above without an output operand; the
-- group-quant ops of _tl_perf_group_quant share the sheet).
CREATE OR REPLACE VIEW _tl_perf_binary AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract(input_types, '$[*]') AS ty, input_strides AS st
    FROM _tl_perf_events WHERE sheet = 'BinaryElementwise' AND model IN ('aten_binary_elementwise', 'liger_silu_mul_function')
), a AS (
    SELECT *, _tl_shape(json_extract(d, '$[0]')) AS s1, _tl_shape(json_extract(d, '$[1]')) AS s2,
           coalesce(model = 'aten_binary_elementwise' AND json_type(json_extract(d, '$[2]')) = 'ARRAY'
                    AND json_array_length(json_extract(d, '$[2]')) > 0, false) AS has_out
    FROM e
), b AS (   -- both shapes right-aligned on the longer one
    SELECT *, list_concat(list_transform(range(greatest(len(s1), len(s2)) - len(s1)), lambda x: 1::BIGINT), s1) AS p1,
              list_concat(list_transform(range(greatest(len(s1), len(s2)) - len(s2)), lambda x: 1::BIGINT), s2) AS p2
    FROM a WHERE s1 IS NOT NULL AND s2 IS NOT NULL
), ok AS (
    SELECT *, list_transform(range(1, len(p1) + 1), lambda i: greatest(p1[i], p2[i])) AS s_out,
           ty[1] AS dt1, ty[2] AS dt2, CASE WHEN has_out THEN ty[3] END AS dt_out,
           _tl_bpe(ty[1] ->> '$') AS bpe1, _tl_bpe(ty[2] ->> '$') AS bpe2
    FROM b
    WHERE len(list_filter(range(1, len(p1) + 1), lambda i: p1[i] <> p2[i] AND p1[i] <> 1 AND p2[i] <> 1)) = 0
          AND len(ty) >= 2 AND json_type(json_extract(st, '$[0]')) = 'ARRAY'
          AND json_type(json_extract(st, '$[1]')) = 'ARRAY'
          AND (NOT has_out OR (len(ty) >= 3 AND json_type(json_extract(st, '$[2]')) = 'ARRAY'))
), o AS (
    SELECT *,
           CASE WHEN has_out THEN _tl_bpe(dt_out ->> '$')
                WHEN bpe1 IS NOT NULL AND bpe2 IS NOT NULL
                THEN CASE WHEN len(s1) > 0 AND len(s2) > 0 THEN greatest(bpe1, bpe2) ELSE bpe1 END END AS bpe_out
    FROM ok
)
SELECT trace_id, event_id,
       [{'k': 'shape_in1', 'v': _py_tuple1(json_extract(d, '$[0]')), 't': NULL},
        {'k': 'shape_in2', 'v': _py_tuple1(json_extract(d, '$[1]')), 't': NULL},
        {'k': 'dtype_in1_in2_out', 'v': '(' || _py_atom(dt1) || ', ' || _py_atom(dt2) || ', ' || _tl_py_opt_str(dt_out) || ')', 't': NULL},
        {'k': 'stride_input1', 'v': _py_tuple1(json_extract(st, '$[0]')), 't': NULL},
        {'k': 'stride_input2', 'v': _py_tuple1(json_extract(st, '$[1]')), 't': NULL},
        {'k': 'stride_output', 'v': CASE WHEN has_out THEN _py_tuple1(json_extract(st, '$[2]')) END, 't': NULL}] AS params,
       _tl_numel(s_out) AS flops,
       _tl_numel(s1) * bpe1 + _tl_numel(s2) * bpe2 + _tl_numel(s_out) * bpe_out AS bytes,
       'vector_' || _tl_precision(dt1 ->> '$') AS compute_spec
FROM o
UNION ALL
SELECT * FROM _tl_perf_group_quant;

-- tl_perf_unary_elementwise: TraceLens's UnaryElementwise.csv, one row per trace and group of unary elementwise
-- op instances with the same name and parameters; TraceLens's column names (statistics: peers/tracelens/perf_ops).
--   trace_id                    the trace
--   name                        the op name
--   param: input_shape, output_shape   pad and upsample ops only: their input and output shapes
--   param: padding              replication pad ops only: the padding list
--   param: op_shape             the input's shape (Python tuple text; the output's for pad and upsample)
--   param: dtype_in_out         (input dtype, output dtype or None)
--   param: stride_input, stride_output   their strides (stride_output NULL without an output operand)
--   GFLOPS_first ... UID_first  the statistics of _tl_perf_summary
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 11 UnaryElementwise EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_unary_elementwise AS
SELECT trace_id, name, _tl_perf_param(params, 'input_shape') AS "param: input_shape",
       _tl_perf_param(params, 'output_shape') AS "param: output_shape",
       _tl_perf_param(params, 'padding') AS "param: padding",
       _tl_perf_param(params, 'op_shape') AS "param: op_shape",
       _tl_perf_param(params, 'dtype_in_out') AS "param: dtype_in_out",
       _tl_perf_param(params, 'stride_input') AS "param: stride_input",
       _tl_perf_param(params, 'stride_output') AS "param: stride_output",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary('_tl_perf_unary')
ORDER BY trace_id, rank;

-- _tl_perf_binary_sheet(by_kernels): the rows and columns of BinaryElementwise.csv (see tl_perf_binary_elementwise), grouped by num_kernels too
-- when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_binary_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'shape_in1') AS "param: shape_in1",
       _tl_perf_param(params, 'shape_in2') AS "param: shape_in2",
       _tl_perf_param(params, 'dtype_in1_in2_out') AS "param: dtype_in1_in2_out",
       _tl_perf_param(params, 'stride_input1') AS "param: stride_input1",
       _tl_perf_param(params, 'stride_input2') AS "param: stride_input2",
       _tl_perf_param(params, 'stride_output') AS "param: stride_output",
       _tl_perf_param(params, 'shape_out') AS "param: shape_out", _tl_perf_param(params, 'M') AS "param: M",
       _tl_perf_param(params, 'N') AS "param: N", _tl_perf_param(params, 'group_size') AS "param: group_size",
       _tl_perf_param(params, 'num_groups') AS "param: num_groups", _tl_perf_param(params, 'shape_x') AS "param: shape_x",
       _tl_perf_param(params, 'dtype_x') AS "param: dtype_x",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_binary', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_binary_elementwise: TraceLens's BinaryElementwise.csv, one row per trace and group of binary
-- elementwise op instances with the same name and parameters; TraceLens's column names.
--   trace_id                    the trace
--   name                        the op name
--   param: shape_in1, shape_in2 the two inputs' shapes (Python tuple text)
--   param: dtype_in1_in2_out    (dtype 1, dtype 2, output dtype or None)
--   param: stride_input1, stride_input2, stride_output   their strides (stride_output NULL without an output)
--   param: shape_out, M, N, group_size, num_groups, shape_x, dtype_x   the group-quant ops' parameters
--                               (_tl_perf_group_quant)
--   GFLOPS_first ... UID_first  the statistics of _tl_perf_summary
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 12 BinaryElementwise EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_binary_elementwise AS SELECT * EXCLUDE (num_kernels) FROM _tl_perf_binary_sheet(false);
