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
-- apex's fused cuDNN convolutions (apex/contrib/conv_bias_relu: the autograd functions ConvBias_ and ConvBiasReLU_,
-- forward(x, weight, bias, padding, stride), and their backward nodes ConvBias_Backward, ConvBiasReLU_Backward), from
-- TraceLens/PerfModel/perf_model.py (classes ConvBias_, ConvBiasReLU_, ConvBias_Backward, ConvBiasReLU_Backward):
--   forward    input_shape = Input Dims[0], filter_shape = Input Dims[1] (the input's rank 3, 4 or 5, else
--              dropped); bias always True; stride = int(Concrete Inputs[3]) and padding = int(Concrete Inputs[4])
--              repeated per spatial dim (1 and 0 when empty or missing) — apex passes padding at 3 and stride at
--              4, so TraceLens swaps them, and a padding of 0 becomes a stride of 0 whose output size divides by
--              zero (dropped); dilation 1, output_padding 0, transposed_conv False, groups 1;
--              dtype_input_weight = Input type[0:2] (must be equal); input_stride, weight_stride = Input
--              Strides[0], [1], both None without Input Strides or with fewer than two entries. FLOPs, bytes and
--              Compute Spec as aten_conv's, the bias counted (FLOPs + output elements, bytes + output channels).
--   backward   no args of its own: the parameters of its forward, taken from a class-level cache that each
--              forward instance TraceLens computes fills, keyed by Sequence number (ConvBias_Backward reads
--              ConvBias_'s, ConvBiasReLU_Backward ConvBiasReLU_'s); FLOPs and bytes are the forward's
--              flops_bwd / bytes_bwd (as aten_conv_bwd's, with the bias). Without a cached forward the instance
--              raises and is left out. TraceLens fills the cache as it computes, so the CONV sheets (events in
--              file order) see only the forwards before the backward op in the file (the latest such), while
--              unified_perf_summary, made after the sheets, sees every forward of the trace (the latest before
--              the op in the file, else the trace's last one). With one forward per sequence number, as PyTorch
--              numbers them, that is the op's own forward; for several forwards sharing a number we take the
--              latest in file order where TraceLens's unified walk takes the latest it visited.
--   sheets     as aten::convolution_backward's, the backward ops' rows are summarised with CONV_fwd's instances
--              and moved to CONV_bwd.csv.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_conv_aten: one row per aten::convolution or aten::convolution_backward instance TraceLens keeps, in
-- _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_conv_aten AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract(input_types, '$[*]') AS ty, input_strides AS st,
           list_transform(json_extract(concrete_inputs, '$[*]'), lambda x: x ->> '$') AS ci,
           CASE WHEN model = 'aten_conv_bwd' THEN 1 ELSE 0 END AS ofs
    FROM _tl_perf_events WHERE sheet = 'CONV_fwd' AND model IN ('aten_conv', 'aten_conv_bwd')
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

-- _tl_perf_conv_fused: one row per instance of apex's fused convolutions (ConvBias_, ConvBiasReLU_ and their backward
-- ops) that TraceLens computes in its CONV sheets or in its unified table (see the top of this file), in
-- _tl_perf_summary's input form plus:
--   in_sheet     whether the CONV sheets have it (a backward op: a forward cached before it in file order)
--   in_unified   whether unified_perf_summary has it (a backward op: a forward cached anywhere in the trace)
CREATE OR REPLACE VIEW _tl_perf_conv_fused AS
WITH e AS (
    SELECT p.trace_id, p.event_id, p.model, p.input_dims AS d, json_extract_string(p.input_types, '$[*]') AS ty,
           p.input_strides AS st, json_extract_string(p.concrete_inputs, '$[*]') AS ci, x.sequence_number AS seq
    FROM _tl_perf_events p JOIN events x ON x.trace_id = p.trace_id AND x.event_id = p.event_id
    WHERE p.model IN ('ConvBias_', 'ConvBiasReLU_', 'ConvBias_Backward', 'ConvBiasReLU_Backward')
), f AS (   -- the forwards: shapes, and stride / padding as TraceLens reads them
    SELECT *, _tl_shape(json_extract(d, '$[0]')) AS x, _tl_shape(json_extract(d, '$[1]')) AS w,
           CASE WHEN coalesce(ci[4], '') = '' THEN 1 ELSE _tl_int_text(ci[4]) END AS sv,
           CASE WHEN coalesce(ci[5], '') = '' THEN 0 ELSE _tl_int_text(ci[5]) END AS pv,
           coalesce(json_array_length(st) >= 2, false) AS has_st
    FROM e
    WHERE model IN ('ConvBias_', 'ConvBiasReLU_') AND ci IS NOT NULL AND len(ty) >= 2 AND ty[1] = ty[2]
), g AS (
    SELECT *, len(x) - 2 AS nd,
           list_concat([x[1], w[1]], list_transform(range(1, len(x) - 1), lambda i:
               trunc((x[i + 2] + 2 * pv - (w[i + 2] - 1) - 1)::DOUBLE / sv + 1)::BIGINT)) AS y
    FROM f
    WHERE x IS NOT NULL AND w IS NOT NULL AND len(x) BETWEEN 3 AND 5 AND len(w) >= len(x)
      AND sv IS NOT NULL AND sv <> 0 AND pv IS NOT NULL
      AND (NOT has_st OR (json_type(json_extract(st, '$[0]')) = 'ARRAY' AND json_type(json_extract(st, '$[1]')) = 'ARRAY'))
), fwd AS (   -- the forwards TraceLens computes (and caches), with their backward's FLOPs and bytes
    SELECT trace_id, event_id, model, seq,
           [{'k': 'convNd', 'v': 'conv' || nd || 'd', 't': 's'},
            {'k': 'input_shape', 'v': _py_tuple1(json_extract(d, '$[0]')), 't': NULL},
            {'k': 'filter_shape', 'v': _py_tuple1(json_extract(d, '$[1]')), 't': NULL},
            {'k': 'dtype_input_weight', 'v': _tl_py_strs(ty[1:2]), 't': NULL},
            {'k': 'input_stride', 'v': CASE WHEN has_st THEN _py_tuple1(json_extract(st, '$[0]')) END, 't': NULL},
            {'k': 'weight_stride', 'v': CASE WHEN has_st THEN _py_tuple1(json_extract(st, '$[1]')) END, 't': NULL},
            {'k': 'bias', 'v': 'True', 't': NULL},
            {'k': 'stride', 'v': _py_seq(list_transform(range(nd), lambda z: sv::VARCHAR), nd), 't': NULL},
            {'k': 'padding', 'v': _py_seq(list_transform(range(nd), lambda z: pv::VARCHAR), nd), 't': NULL},
            {'k': 'dilation', 'v': _py_seq(list_transform(range(nd), lambda z: '1'), nd), 't': NULL},
            {'k': 'transposed_conv', 'v': 'False', 't': NULL},
            {'k': 'output_padding', 'v': _py_seq(list_transform(range(nd), lambda z: '0'), nd), 't': NULL},
            {'k': 'groups', 'v': '1', 't': 'i'}] AS params,
           2 * _tl_numel(w[2:]) * _tl_numel(y) + _tl_numel(y) AS flops,
           (_tl_numel(x) + _tl_numel(w) + y[2] + _tl_numel(y)) * _tl_bpe(ty[1]) AS bytes,
           2 * _tl_numel(w[2:]) * _tl_numel(y) + 2 * y[1] * _tl_numel(y[3:]) * _tl_numel(w) + _tl_numel(y) AS flops_bwd,
           2 * (_tl_numel(y) + _tl_numel(w) + _tl_numel(x)) * _tl_bpe(ty[1]) + _tl_numel(y) + y[2] AS bytes_bwd,
           'matrix_' || _tl_precision(ty[1]) AS compute_spec
    FROM g
), bwd AS (   -- each backward op with the forward cached before it in the file and the trace's last one
    SELECT b.trace_id, b.event_id,
           max(f.event_id) FILTER (WHERE f.event_id < b.event_id) AS before_id,
           max(f.event_id) AS last_id
    FROM e b JOIN fwd f ON f.trace_id = b.trace_id AND f.seq = b.seq AND f.model || 'Backward' = b.model
    WHERE b.model IN ('ConvBias_Backward', 'ConvBiasReLU_Backward')
    GROUP BY b.trace_id, b.event_id
)
SELECT trace_id, event_id, params, flops, bytes::DOUBLE AS bytes, compute_spec, true AS in_sheet, true AS in_unified
FROM fwd
UNION ALL
SELECT b.trace_id, b.event_id, f.params, f.flops_bwd, f.bytes_bwd::DOUBLE, f.compute_spec, b.before_id IS NOT NULL, true
FROM bwd b JOIN fwd f ON f.trace_id = b.trace_id AND f.event_id = coalesce(b.before_id, b.last_id);

-- _tl_perf_conv: one row per convolution instance of TraceLens's CONV sheets, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_conv AS
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_conv_aten
UNION ALL
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_conv_fused WHERE in_sheet;

-- _tl_perf_conv_unified: one row per convolution instance of TraceLens's unified_perf_summary (the fused backward ops
-- see every cached forward there), in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_conv_unified AS
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_conv_aten
UNION ALL
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_conv_fused WHERE in_unified;

-- _tl_perf_conv_rows(by_kernels): the rows and columns of the convolution summary (see tl_perf_conv_fwd), forward
-- and backward ops, grouped by num_kernels too when by_kernels (the inference report; num_kernels, NULL otherwise,
-- then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_conv_rows(by_kernels) AS TABLE
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
FROM _tl_perf_summary_of('_tl_perf_conv', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- _tl_perf_conv_sheet(bwd): the rows and columns of CONV_fwd (bwd false) or CONV_bwd (bwd true) from the
-- convolution summary (see tl_perf_conv_fwd).
CREATE OR REPLACE MACRO _tl_perf_conv_sheet(bwd) AS TABLE
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_conv_rows(false)
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
