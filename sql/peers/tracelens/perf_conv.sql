-- peers/tracelens/perf_conv — TraceLens (0.1.0) convolution perf model (aten::convolution) and its sheet
-- CONV_fwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (classes CONV, aten_conv); the code is ours.
--   args       input_shape = Input Dims[0], filter_shape = Input Dims[1]; bias = the op has exactly three
--              Input Dims entries (aten::convolution records nine, so TraceLens never counts the bias: a bug
--              reproduced); stride, padding, dilation, output_padding = Concrete Inputs[3], [4], [5], [7]
--              as int tuples (empty: 1, 0, 1, 0 per spatial dim; one value: repeated per spatial dim);
--              transposed_conv = Concrete Inputs[6] ('True'/'False'); groups = int(Concrete Inputs[8]);
--              dtype_input_weight = the first two Input types (must be equal); input_stride,
--              weight_stride = Input Strides[0], [1] (None without Input Strides); convNd = conv1d/2d/3d
--              by the input's rank (3, 4, 5; other ranks drop the instance).
--   output     (N, filters, spatial...): filters = filter_shape[0] (transposed: [1]); each spatial size
--              int((in + 2·pad − dil·(k − 1) − 1) / stride + 1), transposed (in − 1)·stride − 2·pad +
--              dil·(k − 1) + output_padding + 1.
--   FLOPs      2·prod(filter_shape[1:]) · elements of the output (transposed: of the input) (+ output
--              elements with bias). Groups are not used.
--   bytes      (elements of input + filter + output (+ output channels with bias)) · bpe of the input's dtype.
--   Compute Spec  'matrix_' + the precision of the input's dtype.
-- TraceLens's other convolution models (ConvBias_, ConvBiasReLU_, their backward ops) and CONV_bwd.csv are
-- not reproduced here.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_conv: one row per convolution instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_conv AS
WITH e AS (
    SELECT trace_id, event_id, input_dims AS d, json_extract(input_types, '$[*]') AS ty, input_strides AS st,
           list_transform(json_extract(concrete_inputs, '$[*]'), lambda x: x ->> '$') AS ci
    FROM _tl_perf_events WHERE sheet = 'CONV_fwd'
), a AS (
    SELECT *, _tl_shape(json_extract(d, '$[0]')) AS x, _tl_shape(json_extract(d, '$[1]')) AS w,
           json_array_length(d) = 3 AS bias, ci[7] AS transposed_text, TRY_CAST(ci[9] AS BIGINT) AS groups
    FROM e
), b AS (
    SELECT *, len(x) - 2 AS nd,
           list_transform([4, 5, 6, 8], lambda i: CASE WHEN ci[i] = '' THEN NULL ELSE _tl_py_list_ints(ci[i]) END) AS raw,
           transposed_text = 'True' AS transposed
    FROM a
    WHERE x IS NOT NULL AND w IS NOT NULL AND len(x) BETWEEN 3 AND 5 AND len(ci) >= 9
          AND transposed_text IN ('True', 'False') AND groups IS NOT NULL
          AND len(ty) >= 2 AND ty[1] ->> '$' = ty[2] ->> '$'
          AND (st IS NULL OR (json_type(json_extract(st, '$[0]')) = 'ARRAY' AND json_type(json_extract(st, '$[1]')) = 'ARRAY'))
), c AS (   -- stride, padding, dilation, output_padding: defaults for empty values, one value repeated
    SELECT *,
           list_transform([1, 2, 3, 4], lambda j:
               CASE WHEN ci[[4, 5, 6, 8][j]] = ''
                    THEN list_transform(range(nd), lambda z: [1, 0, 1, 0][j])
                    WHEN len(raw[j]) = 1 THEN list_transform(range(nd), lambda z: raw[j][1])
                    ELSE raw[j] END) AS sp
    FROM b
    WHERE len(list_filter([1, 2, 3, 4], lambda j: ci[[4, 5, 6, 8][j]] <> '' AND raw[j] IS NULL)) = 0
), o AS (
    SELECT *,
           list_concat([x[1], CASE WHEN transposed THEN w[2] ELSE w[1] END],
                       list_transform(range(1, nd + 1), lambda i:
                           CASE WHEN transposed
                                THEN (x[i + 2] - 1) * sp[1][i] - 2 * sp[2][i] + sp[3][i] * (w[i + 2] - 1) + sp[4][i] + 1
                                ELSE trunc((x[i + 2] + 2 * sp[2][i] - sp[3][i] * (w[i + 2] - 1) - 1)::DOUBLE / sp[1][i] + 1)::BIGINT
                           END)) AS y
    FROM c
    WHERE len(list_filter(sp, lambda l: len(l) < nd)) = 0 AND len(w) >= nd + 2
)
SELECT trace_id, event_id,
       [{'k': 'convNd', 'v': 'conv' || nd || 'd', 't': 's'},
        {'k': 'input_shape', 'v': _py_tuple1(json_extract(d, '$[0]')), 't': NULL},
        {'k': 'filter_shape', 'v': _py_tuple1(json_extract(d, '$[1]')), 't': NULL},
        {'k': 'dtype_input_weight', 'v': _py_seq(list_transform(list_slice(ty, 1, 2), lambda t: _py_atom(t)), 2), 't': NULL},
        {'k': 'input_stride', 'v': CASE WHEN st IS NOT NULL THEN _py_tuple1(json_extract(st, '$[0]')) END, 't': NULL},
        {'k': 'weight_stride', 'v': CASE WHEN st IS NOT NULL THEN _py_tuple1(json_extract(st, '$[1]')) END, 't': NULL},
        {'k': 'bias', 'v': _tl_py_bool(bias), 't': NULL},
        {'k': 'stride', 'v': _py_seq(list_transform(sp[1], lambda v: v::VARCHAR), len(sp[1])), 't': NULL},
        {'k': 'padding', 'v': _py_seq(list_transform(sp[2], lambda v: v::VARCHAR), len(sp[2])), 't': NULL},
        {'k': 'dilation', 'v': _py_seq(list_transform(sp[3], lambda v: v::VARCHAR), len(sp[3])), 't': NULL},
        {'k': 'transposed_conv', 'v': _tl_py_bool(transposed), 't': NULL},
        {'k': 'output_padding', 'v': _py_seq(list_transform(sp[4], lambda v: v::VARCHAR), len(sp[4])), 't': NULL},
        {'k': 'groups', 'v': groups::VARCHAR, 't': 'i'}] AS params,
       2 * _tl_numel(w[2:]) * _tl_numel(CASE WHEN transposed THEN x ELSE y END)
           + CASE WHEN bias THEN _tl_numel(y) ELSE 0 END AS flops,
       (_tl_numel(x) + _tl_numel(w) + CASE WHEN bias THEN y[2] ELSE 0 END + _tl_numel(y)) * _tl_bpe(ty[1] ->> '$') AS bytes,
       'matrix_' || _tl_precision(ty[1] ->> '$') AS compute_spec
FROM o;

-- tl_perf_conv_fwd: TraceLens's CONV_fwd.csv, one row per trace and group of convolution instances with the
-- same name and parameters; TraceLens's column names (statistics: peers/tracelens/perf_ops).
--   trace_id                                   the trace
--   name                                       the op name
--   param: convNd, input_shape, filter_shape, dtype_input_weight, input_stride, weight_stride   the operands
--   param: bias, stride, padding, dilation, transposed_conv, output_padding, groups   see the top of this file
--   GFLOPS_first ... UID_first                 the statistics of _tl_perf_summary
--   rank                                       row order in TraceLens's file
--   sheet_columns                              the columns TraceLens writes for this trace, in its order
CREATE OR REPLACE VIEW tl_perf_conv_fwd AS
SELECT trace_id, name, _tl_perf_param(params, 'convNd') AS "param: convNd",
       _tl_perf_param(params, 'input_shape') AS "param: input_shape",
       _tl_perf_param(params, 'filter_shape') AS "param: filter_shape",
       _tl_perf_param(params, 'dtype_input_weight') AS "param: dtype_input_weight",
       _tl_perf_param(params, 'input_stride') AS "param: input_stride",
       _tl_perf_param(params, 'weight_stride') AS "param: weight_stride",
       _tl_perf_param(params, 'bias') AS "param: bias", _tl_perf_param(params, 'stride') AS "param: stride",
       _tl_perf_param(params, 'padding') AS "param: padding", _tl_perf_param(params, 'dilation') AS "param: dilation",
       _tl_perf_param(params, 'transposed_conv') AS "param: transposed_conv",
       _tl_perf_param(params, 'output_padding') AS "param: output_padding",
       _tl_perf_param(params, 'groups') AS "param: groups",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary('_tl_perf_conv')
ORDER BY trace_id, rank;
