-- peers/tracelens/perf_reduce — TraceLens (0.1.0) reduction perf model and its sheet Reduce_fwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (classes Reduce, aten_reduce) and the op list reduce_ops of
-- TraceLens/PerfModel/torch_op_mapping.py; the code is ours.
--   num_input_elems    elements of Input Dims[0] (0 when the op has no Input Dims: then also 0 outputs,
--                      dtypes (None, None) and no reduce_type)
--   num_output_elems   cumsum/cumprod: the input's; otherwise, when a reduced dim list is found, the input
--                      shape without those dims (set to 1 with keepdim), else 1. TraceLens looks for the dims
--                      and keepdim among Concrete Inputs[1:] from the end, taking only non-string values (a
--                      bool is keepdim; a list or an integer is the dims). The profiler records every
--                      Concrete Input as a string, so on PyTorch traces this is 1 for every reduction to
--                      a smaller shape, whatever its dims (a TraceLens bug reproduced: aten::mean over the
--                      last dim of (16, 559, 1024) counts one output element, not 16·559).
--   dtype_in_out       (Input type[0], None): the output dtype comes from an `Output type` arg the profiler
--                      does not record, so the output is assumed in the input's dtype.
--   reduce_type        'mean' if the name contains mean, else 'max', 'min', 'norm' likewise, else 'sum'.
--   FLOPs              num_input_elems; bytes = num_input_elems · bpe_in + num_output_elems · bpe_out (NULL
--                      for an unknown dtype).
--   Compute Spec       'vector_' + the precision of the input dtype.
-- Reduce_bwd.csv: the same parameters, FLOPs (flops_bwd: num_input_elems) and bytes (bytes_bwd:
-- num_output_elems · bpe_out + num_input_elems · bpe_in, the same sum) of the reductions that are the forward
-- end of a backward autograd node, with the GPU time of their backward nodes (peers/tracelens/perf_bwd).
--
-- @requires lib/pytext peers/tracelens/perf_ops peers/tracelens/perf_bwd

-- _tl_perf_reduce: one row per reduction instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_reduce AS
WITH e AS (
    SELECT trace_id, event_id, name, input_dims AS d, json_extract(input_types, '$[*]') AS ty,
           list_slice(json_extract(concrete_inputs, '$[*]'), 2, NULL) AS sa
    FROM _tl_perf_events WHERE sheet = 'Reduce_fwd'
), a AS (
    SELECT *, json_extract(d, '$[0]') AS d0,
           coalesce(json_array_length(d) = 0 OR json_type(json_extract(d, '$[0]')) = 'NULL', true) AS no_dims,
           -- keepdim: the last JSON boolean among Concrete Inputs[1:]
           list_filter(list_transform(sa, lambda x, i: {'i': i, 'x': x}), lambda p: json_type(p.x) = 'BOOLEAN')[-1].i
               AS keep_i
    FROM e
), b AS (
    SELECT *, CASE WHEN keep_i IS NOT NULL THEN sa[keep_i]::VARCHAR = 'true' ELSE false END AS keepdim,
           -- dims: the last list or integer among the others
           list_filter(list_transform(sa, lambda x, i: {'i': i, 'x': x}),
                       lambda p: p.i IS DISTINCT FROM keep_i
                                 AND (json_type(p.x) IN ('BIGINT', 'UBIGINT')
                                      OR (json_type(p.x) = 'ARRAY'
                                          AND TRY_CAST(json_transform(p.x, '["DOUBLE"]') AS BIGINT[]) IS NOT NULL)))[-1].x
               AS dim_j,
           _tl_shape(json_extract(d, '$[0]')) AS shape
    FROM a
), c AS (
    SELECT *, CASE WHEN json_type(dim_j) = 'ARRAY' THEN json_transform(dim_j, '["DOUBLE"]')::BIGINT[]
                   WHEN dim_j IS NOT NULL THEN [dim_j::BIGINT] END AS dims
    FROM b
), o AS (
    SELECT *,
           list_transform(dims, lambda x: CASE WHEN x >= 0 THEN x ELSE len(shape) + x END) AS ndims
    FROM c WHERE no_dims OR shape IS NOT NULL
)
SELECT trace_id, event_id,
       CASE WHEN no_dims
            THEN [{'k': 'num_input_elems', 'v': '0', 't': 'i'}, {'k': 'num_output_elems', 'v': '0', 't': 'i'},
                  {'k': 'dtype_in_out', 'v': '(None, None)', 't': NULL}]
            ELSE [{'k': 'num_input_elems', 'v': _tl_numel(shape)::VARCHAR, 't': 'i'},
                  {'k': 'num_output_elems', 'v': n_out::VARCHAR, 't': 'i'},
                  {'k': 'dtype_in_out', 'v': '(' || _tl_py_opt_str(ty[1]) || ', None)', 't': NULL},
                  {'k': 'reduce_type', 'v': reduce_type, 't': 's'}] END AS params,
       CASE WHEN no_dims THEN 0 ELSE _tl_numel(shape) END AS flops,
       CASE WHEN NOT no_dims THEN (_tl_numel(shape) + n_out) * _tl_bpe(ty[1] ->> '$') END AS bytes,
       CASE WHEN NOT no_dims THEN 'vector_' || _tl_precision(ty[1] ->> '$') END AS compute_spec
FROM (SELECT *,
             CASE WHEN contains(name, 'cumsum') OR contains(name, 'cumprod') THEN _tl_numel(shape)
                  WHEN len(ndims) > 0
                  THEN _tl_numel(list_filter(list_transform(shape, lambda s, i: CASE WHEN list_contains(ndims, i - 1)
                                                                                     THEN CASE WHEN keepdim THEN 1 END
                                                                                     ELSE s END),
                                             lambda x: x IS NOT NULL))
                  ELSE 1 END AS n_out,
             CASE WHEN contains(name, 'mean') THEN 'mean' WHEN contains(name, 'max') THEN 'max'
                  WHEN contains(name, 'min') THEN 'min' WHEN contains(name, 'norm') THEN 'norm' ELSE 'sum' END
                 AS reduce_type
      FROM o);

-- _tl_perf_reduce_sheet(by_kernels): the rows and columns of Reduce_fwd.csv (see tl_perf_reduce_fwd), grouped by num_kernels too
-- when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_reduce_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'num_input_elems') AS "param: num_input_elems",
       _tl_perf_param(params, 'num_output_elems') AS "param: num_output_elems",
       _tl_perf_param(params, 'dtype_in_out') AS "param: dtype_in_out",
       _tl_perf_param(params, 'reduce_type') AS "param: reduce_type",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_reduce', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_reduce_fwd: TraceLens's Reduce_fwd.csv, one row per trace and group of reduction instances with the
-- same name and parameters; TraceLens's column names (statistics: peers/tracelens/perf_ops).
--   trace_id                                   the trace
--   name                                       the op name
--   param: num_input_elems, num_output_elems   elements read and written (see the top of this file)
--   param: dtype_in_out                        (input dtype, None)
--   param: reduce_type                         sum, mean, max, min or norm
--   GFLOPS_first ... UID_first                 the statistics of _tl_perf_summary
--   rank                                       row order in TraceLens's file
--   sheet_columns                              the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 13 Reduce_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_reduce_fwd AS SELECT * EXCLUDE (num_kernels) FROM _tl_perf_reduce_sheet(false);

-- tl_perf_reduce_bwd: TraceLens's Reduce_bwd.csv, one row per trace and group of forward reductions with the
-- same name and parameters that autograd ran a backward node for, measured by that node's GPU kernels; the
-- columns of tl_perf_reduce_fwd.
-- @output report-tracelens 14 Reduce_bwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_reduce_bwd AS
SELECT trace_id, name, _tl_perf_param(params, 'num_input_elems') AS "param: num_input_elems",
       _tl_perf_param(params, 'num_output_elems') AS "param: num_output_elems",
       _tl_perf_param(params, 'dtype_in_out') AS "param: dtype_in_out",
       _tl_perf_param(params, 'reduce_type') AS "param: reduce_type",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary('_tl_perf_reduce', '_tl_perf_bwd_events')
ORDER BY trace_id, rank;
