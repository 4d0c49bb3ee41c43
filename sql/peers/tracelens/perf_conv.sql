-- peers/tracelens/perf_conv — TraceLens (0.1.0) convolution perf models (aten::convolution,
-- aten::convolution_backward) and their sheets CONV_fwd.csv and CONV_bwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (classes CONV, aten_conv, aten_conv_bwd) and
-- TraceLens/Reporting/generate_perf_report_pytorch.py (the CONV sheets); the code is ours.
--   args       input_shape = Input Dims[0], filter_shape = Input Dims[1]; bias = the op has exactly three
--              Input Dims entries (aten::convolution records nine, so TraceLens never counts the bias: a bug
--              reproduced); stride, padding, dilation, output_padding = Concrete Inputs[3], [4], [5], [7]
--              as int tuples (empty: 1, 0, 1, 0 per spatial dim; one value: repeated per spatial dim);
--              transposed_conv = Concrete Inputs[6] ('True'/'False'); groups = int(Concrete Inputs[8]);
--              dtype_input_weight = the first two Input types (must be equal); input_stride,
--              weight_stride = Input Strides[0], [1] (None without Input Strides); convNd = conv1d/2d/3d
--              by the input's rank (3, 4, 5; other ranks drop the instance).
--              aten::convolution_backward (grad_output, input, weight, bias_sizes, stride, ...): every index
--              one further (input Input Dims[1], weight [2], Concrete Inputs[4] ... [9], Input type[1:3],
--              Input Strides[1], [2]); bias = Python's `len(dims) > 3 and dims[3] and len(dims[3]) > 0`:
--              False with three entries, else dims[3] itself when empty (the profiler records the int list
--              bias_sizes as [], so the parameter prints '[]' and the bias is never counted), else True.
--   output     (N, filters, spatial...): filters = filter_shape[0] (transposed: [1]); each spatial size
--              int((in + 2·pad − dil·(k − 1) − 1) / stride + 1), transposed (in − 1)·stride − 2·pad +
--              dil·(k − 1) + output_padding + 1.
--   FLOPs      2·prod(filter_shape[1:]) · elements of the output (transposed: of the input) (+ output
--              elements with bias). Groups are not used.
--              backward (CONV.flops_bwd_func): input gradient 2·prod(filter_shape[1:]) · elements of the
--              output (transposed: of the input) + weight gradient 2·N·prod(output spatial) · elements of the
--              filter (transposed: 2·N·prod(input spatial) · filter elements) (+ output elements with bias).
--   bytes      (elements of input + filter + output (+ output channels with bias)) · bpe of the input's dtype.
--              backward (bytes_bwd_func): 2 · (output + filter + input elements) · bpe (+ output elements +
--              output channels with bias, not multiplied by bpe).
--   Compute Spec  'matrix_' + the precision of the input's dtype.
--   sheets     TraceLens summarises the backward op's instances with the forward sheet (its instances
--              computed as forward ones, by their own kernels) and then moves their rows to CONV_bwd.csv;
--              the forward ops it also measures over their backward nodes are dropped from CONV_bwd.csv, so
--              that sheet holds only the backward op's rows, with the columns of the joint summary.
-- TraceLens's other convolution models (ConvBias_, ConvBiasReLU_, their backward ops) are not reproduced here.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_conv: one row per convolution instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_conv AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract(input_types, '$[*]') AS ty, input_strides AS st,
           list_transform(json_extract(concrete_inputs, '$[*]'), lambda x: x ->> '$') AS ci,
           CASE WHEN model = 'aten_conv_bwd' THEN 1 ELSE 0 END AS ofs
    FROM _tl_perf_events WHERE sheet = 'CONV_fwd'
), a AS (
    SELECT *, _tl_shape(json_extract(d, '$[' || ofs || ']')) AS x, _tl_shape(json_extract(d, '$[' || (ofs + 1) || ']')) AS w,
           CASE WHEN ofs = 0 THEN _tl_py_bool(json_array_length(d) = 3)
                WHEN json_array_length(d) <= 3 THEN 'False'
                WHEN json_type(json_extract(d, '$[3]')) = 'NULL' THEN 'None'
                WHEN json_type(json_extract(d, '$[3]')) = 'ARRAY' AND json_array_length(json_extract(d, '$[3]')) = 0 THEN '[]'
                ELSE 'True' END AS bias_text,
           ci[7 + ofs] AS transposed_text, TRY_CAST(ci[9 + ofs] AS BIGINT) AS groups,
           list_transform([4, 5, 6, 8], lambda i: i + ofs) AS ip
    FROM e
), b AS (
    SELECT *, len(x) - 2 AS nd, bias_text = 'True' AS bias,
           list_transform(ip, lambda i: CASE WHEN ci[i] = '' THEN NULL ELSE _tl_py_list_ints(ci[i]) END) AS raw,
           transposed_text = 'True' AS transposed
    FROM a
    WHERE x IS NOT NULL AND w IS NOT NULL AND len(x) BETWEEN 3 AND 5 AND len(ci) >= 9 + ofs
          AND transposed_text IN ('True', 'False') AND groups IS NOT NULL
          AND len(ty) >= 2 + ofs AND ty[1 + ofs] ->> '$' = ty[2 + ofs] ->> '$'
          AND (st IS NULL OR (json_type(json_extract(st, '$[' || ofs || ']')) = 'ARRAY'
                              AND json_type(json_extract(st, '$[' || (ofs + 1) || ']')) = 'ARRAY'))
), c AS (   -- stride, padding, dilation, output_padding: defaults for empty values, one value repeated
    SELECT *,
           list_transform([1, 2, 3, 4], lambda j:
               CASE WHEN ci[ip[j]] = ''
                    THEN list_transform(range(nd), lambda z: [1, 0, 1, 0][j])
                    WHEN len(raw[j]) = 1 THEN list_transform(range(nd), lambda z: raw[j][1])
                    ELSE raw[j] END) AS sp
    FROM b
    WHERE len(list_filter([1, 2, 3, 4], lambda j: ci[ip[j]] <> '' AND raw[j] IS NULL)) = 0
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
        {'k': 'input_shape', 'v': _py_tuple1(json_extract(d, '$[' || ofs || ']')), 't': NULL},
        {'k': 'filter_shape', 'v': _py_tuple1(json_extract(d, '$[' || (ofs + 1) || ']')), 't': NULL},
        {'k': 'dtype_input_weight', 'v': _py_seq(list_transform(list_slice(ty, 1 + ofs, 2 + ofs), lambda t: _py_atom(t)), 2),
         't': NULL},
        {'k': 'input_stride', 'v': CASE WHEN st IS NOT NULL THEN _py_tuple1(json_extract(st, '$[' || ofs || ']')) END,
         't': NULL},
        {'k': 'weight_stride', 'v': CASE WHEN st IS NOT NULL THEN _py_tuple1(json_extract(st, '$[' || (ofs + 1) || ']')) END,
         't': NULL},
        {'k': 'bias', 'v': bias_text, 't': NULL},
        {'k': 'stride', 'v': _py_seq(list_transform(sp[1], lambda v: v::VARCHAR), len(sp[1])), 't': NULL},
        {'k': 'padding', 'v': _py_seq(list_transform(sp[2], lambda v: v::VARCHAR), len(sp[2])), 't': NULL},
        {'k': 'dilation', 'v': _py_seq(list_transform(sp[3], lambda v: v::VARCHAR), len(sp[3])), 't': NULL},
        {'k': 'transposed_conv', 'v': _tl_py_bool(transposed), 't': NULL},
        {'k': 'output_padding', 'v': _py_seq(list_transform(sp[4], lambda v: v::VARCHAR), len(sp[4])), 't': NULL},
        {'k': 'groups', 'v': groups::VARCHAR, 't': 'i'}] AS params,
       CASE WHEN model = 'aten_conv_bwd'
            THEN 2 * _tl_numel(w[2:]) * _tl_numel(CASE WHEN transposed THEN x ELSE y END)
                 + 2 * CASE WHEN transposed THEN x[1] * _tl_numel(x[3:]) ELSE y[1] * _tl_numel(y[3:]) END * _tl_numel(w)
                 + CASE WHEN bias THEN _tl_numel(y) ELSE 0 END
            ELSE 2 * _tl_numel(w[2:]) * _tl_numel(CASE WHEN transposed THEN x ELSE y END)
                 + CASE WHEN bias THEN _tl_numel(y) ELSE 0 END END AS flops,
       CASE WHEN model = 'aten_conv_bwd'
            THEN 2 * (_tl_numel(y) + _tl_numel(w) + _tl_numel(x)) * _tl_bpe(ty[1 + ofs] ->> '$')
                 + CASE WHEN bias THEN _tl_numel(y) + y[2] ELSE 0 END
            ELSE (_tl_numel(x) + _tl_numel(w) + CASE WHEN bias THEN y[2] ELSE 0 END + _tl_numel(y)) * _tl_bpe(ty[1] ->> '$')
            END AS bytes,
       'matrix_' || _tl_precision(ty[1 + ofs] ->> '$') AS compute_spec
FROM o;

-- _tl_perf_conv_sheet(bwd): the rows and columns of CONV_fwd (bwd false) or CONV_bwd (bwd true) from the
-- convolution summary (see tl_perf_conv_fwd).
CREATE OR REPLACE MACRO _tl_perf_conv_sheet(bwd) AS TABLE
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
WHERE (name IN (SELECT name FROM _tl_perf_moved_bwd_ops)) = bwd
ORDER BY trace_id, rank;

-- tl_perf_conv_fwd: TraceLens's CONV_fwd.csv, one row per trace and group of convolution instances with the
-- same name and parameters; TraceLens's column names (statistics: peers/tracelens/perf_ops).
--   trace_id                                   the trace
--   name                                       the op name
--   param: convNd, input_shape, filter_shape, dtype_input_weight, input_stride, weight_stride   the operands
--   param: bias, stride, padding, dilation, transposed_conv, output_padding, groups   see the top of this file
--   GFLOPS_first ... UID_first                 the statistics of _tl_perf_summary
--   rank                                       row order in TraceLens's file
--   sheet_columns                              the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 16 CONV_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_conv_fwd AS SELECT * FROM _tl_perf_conv_sheet(false);

-- tl_perf_conv_bwd: TraceLens's CONV_bwd.csv, one row per trace and group of convolution backward instances
-- (aten::convolution_backward) with the same name and parameters: the rows of CONV_fwd's summary that
-- TraceLens moves to CONV_bwd, in their order, with the same columns.
--   trace_id                                   the trace
--   name                                       the op name
--   param: convNd, input_shape, filter_shape, dtype_input_weight, input_stride, weight_stride   the operands
--   param: bias, stride, padding, dilation, transposed_conv, output_padding, groups   see the top of this file
--   GFLOPS_first ... UID_first                 the statistics of _tl_perf_summary
--   rank                                       row order in TraceLens's file
--   sheet_columns                              the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 18 CONV_bwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_conv_bwd AS SELECT * FROM _tl_perf_conv_sheet(true);
