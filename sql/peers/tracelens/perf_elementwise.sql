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

-- _tl_perf_unary_of(ev): one row per unary elementwise instance of ev (_tl_perf_events or a view with its
-- columns: model tells aten_unary_elementwise, aten_replication_pad and aten_upsample_nearest apart) TraceLens
-- keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE MACRO _tl_perf_unary_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract(input_types, '$[*]') AS ty,
           input_strides AS st, json_extract(concrete_inputs, '$[*]') AS ci
    FROM query_table(ev) WHERE sheet = 'UnaryElementwise'
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

-- _tl_perf_unary: one row per unary elementwise instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_unary AS SELECT * FROM _tl_perf_unary_of('_tl_perf_events');

-- _tl_perf_binary: one row per binary elementwise instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_binary AS
WITH e AS (
    SELECT trace_id, event_id, input_dims AS d, json_extract(input_types, '$[*]') AS ty, input_strides AS st
    FROM _tl_perf_events WHERE sheet = 'BinaryElementwise'
), a AS (
    SELECT *, _tl_shape(json_extract(d, '$[0]')) AS s1, _tl_shape(json_extract(d, '$[1]')) AS s2,
           coalesce(json_type(json_extract(d, '$[2]')) = 'ARRAY' AND json_array_length(json_extract(d, '$[2]')) > 0,
                    false) AS has_out
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
FROM o;

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

-- tl_perf_binary_elementwise: TraceLens's BinaryElementwise.csv, one row per trace and group of binary
-- elementwise op instances with the same name and parameters; TraceLens's column names.
--   trace_id                    the trace
--   name                        the op name
--   param: shape_in1, shape_in2 the two inputs' shapes (Python tuple text)
--   param: dtype_in1_in2_out    (dtype 1, dtype 2, output dtype or None)
--   param: stride_input1, stride_input2, stride_output   their strides (stride_output NULL without an output)
--   GFLOPS_first ... UID_first  the statistics of _tl_perf_summary
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 12 BinaryElementwise EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_binary_elementwise AS
SELECT trace_id, name, _tl_perf_param(params, 'shape_in1') AS "param: shape_in1",
       _tl_perf_param(params, 'shape_in2') AS "param: shape_in2",
       _tl_perf_param(params, 'dtype_in1_in2_out') AS "param: dtype_in1_in2_out",
       _tl_perf_param(params, 'stride_input1') AS "param: stride_input1",
       _tl_perf_param(params, 'stride_input2') AS "param: stride_input2",
       _tl_perf_param(params, 'stride_output') AS "param: stride_output",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary('_tl_perf_binary')
ORDER BY trace_id, rank;
