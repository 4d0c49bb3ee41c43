-- peers/tracelens/perf_rope — TraceLens (0.1.0) rotary-embedding perf models and their sheet RoPE_fwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (FusedRoPE, fused_rope_fwd) and extensions/perf_model_extensions.py
-- (aiter_rope_cached_positions_2c_fwd_impl, sgl_kernel_rotary_embedding); the code is ours. Category RoPE_fwd,
-- sheet RoPE_fwd (no backward model).
--   fused_rope_fwd (FusedRoPEFunc)  t = Input Dims[0] = (seq_len, batch, heads, head_dim, ...): params seq_len,
--              batch, heads, head_dim, num_elements = elements of t.
--   aiter_rope_cached_positions_2c_fwd_impl  x_shape = Input Dims[2], y_shape = [3]: params x_shape, y_shape,
--              num_elements = elements of x + elements of y.
--   sgl_kernel_rotary_embedding (positions, query, key, head_size, cos_sin_cache, ...)  q = Input Dims[1],
--              k = [2]; head_size = the integer in Concrete Inputs[3] when it is not blank, else q's last size;
--              rot_dim = cos_sin_cache's second size (Input Dims[4], when of rank 2 or more), else head_size;
--              param num_elements = q[0] · (q[1] // head_size + k[1] // head_size) · rot_dim.
--   FLOPs 3·num_elements; bytes 2·num_elements·bpe, bpe of Input type[0] (Input type[1], the query's, for
--   sgl_kernel; 2 when unknown or missing). Compute Spec 'vector_' + the precision of that dtype (empty without).
-- An instance whose args do not fit (a shape missing or too short, a head size that is not an integer) raises in
-- TraceLens and is left out.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_rope: one row per RoPE instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_rope AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract_string(input_types, '$[*]') AS ty,
           json_extract_string(concrete_inputs, '$[*]') AS ci,
           _tl_shape(json_extract(input_dims, '$[0]')) AS s0, _tl_shape(json_extract(input_dims, '$[1]')) AS s1,
           _tl_shape(json_extract(input_dims, '$[2]')) AS s2, _tl_shape(json_extract(input_dims, '$[3]')) AS s3,
           _tl_shape(json_extract(input_dims, '$[4]')) AS s4
    FROM _tl_perf_events WHERE sheet = 'RoPE_fwd'
), sk AS (   -- sgl_kernel: head size and rotary dims
    SELECT *, CASE WHEN trim(coalesce(ci[4], '')) <> '' THEN _tl_int_text(ci[4]) ELSE s1[-1] END AS hs,
           trim(coalesce(ci[4], '')) <> '' AS hs_given
    FROM e WHERE model = 'sgl_kernel_rotary_embedding' AND len(s1) >= 2 AND len(s2) >= 2 AND len(ty) >= 2
), rows AS (
    SELECT trace_id, event_id,
           [{'k': 'seq_len', 'v': s0[1]::VARCHAR, 't': 'i'}, {'k': 'batch', 'v': s0[2]::VARCHAR, 't': 'i'},
            {'k': 'heads', 'v': s0[3]::VARCHAR, 't': 'i'}, {'k': 'head_dim', 'v': s0[4]::VARCHAR, 't': 'i'},
            {'k': 'num_elements', 'v': _tl_numel(s0)::VARCHAR, 't': 'i'}] AS params,
           _tl_numel(s0) AS n, ty[1] AS dt
    FROM e WHERE model = 'fused_rope_fwd' AND len(s0) >= 4
    UNION ALL
    SELECT trace_id, event_id,
           [{'k': 'x_shape', 'v': _py_tuple1(json_extract(d, '$[2]')), 't': NULL},
            {'k': 'y_shape', 'v': _py_tuple1(json_extract(d, '$[3]')), 't': NULL},
            {'k': 'num_elements', 'v': (_tl_numel(s2) + _tl_numel(s3))::VARCHAR, 't': 'i'}],
           _tl_numel(s2) + _tl_numel(s3), ty[1]
    FROM e WHERE model = 'aiter_rope_cached_positions_2c_fwd_impl' AND s2 IS NOT NULL AND s3 IS NOT NULL
    UNION ALL
    SELECT trace_id, event_id, [{'k': 'num_elements', 'v': n::VARCHAR, 't': 'i'}], n, ty[2]
    FROM (SELECT *, s1[1]::HUGEINT * (s1[2] // hs + s2[2] // hs) * CASE WHEN len(s4) > 1 THEN s4[2] ELSE hs END AS n
          FROM sk WHERE hs IS NOT NULL AND hs <> 0)
)
SELECT trace_id, event_id, params, 3 * n AS flops, 2 * n * coalesce(_tl_bpe(dt), 2) AS bytes,
       'vector_' || _tl_precision(dt) AS compute_spec
FROM rows;

-- _tl_perf_rope_sheet(by_kernels): the rows and columns of RoPE_fwd.csv (see tl_perf_rope_fwd), grouped by num_kernels too
-- when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_rope_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'seq_len') AS "param: seq_len",
       _tl_perf_param(params, 'batch') AS "param: batch", _tl_perf_param(params, 'heads') AS "param: heads",
       _tl_perf_param(params, 'head_dim') AS "param: head_dim", _tl_perf_param(params, 'x_shape') AS "param: x_shape",
       _tl_perf_param(params, 'y_shape') AS "param: y_shape",
       _tl_perf_param(params, 'num_elements') AS "param: num_elements",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_rope', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_rope_fwd: TraceLens's RoPE_fwd.csv, one row per trace and group of RoPE op instances with the same name
-- and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: seq_len, batch, heads, head_dim   FusedRoPEFunc's tensor sizes
--   param: x_shape, y_shape     aiter's rope_cached_positions_2c_fwd_impl's two tensors
--   param: num_elements         the rotated elements (see the top of this file)
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 22 RoPE_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_rope_fwd AS SELECT * EXCLUDE (num_kernels) FROM _tl_perf_rope_sheet(false);
