-- peers/tracelens/perf_fused_rope_mhc — TraceLens (0.1.0) perf models of aiter's fused MLA RoPE + KV-cache writes
-- and of aiter's mHC (manifold-constrained hyper-connection) ops, and their sheets FusedRoPE_fwd.csv and mHC_fwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/extensions/perf_model_extensions.py (classes aiter_fused_qk_rope_cat_and_cache_mla,
-- fused_qk_rope_concat_and_cache_mla, _MHCBase, mhc_post, mhc_pre_gemm_sqrsum, mhc_pre_big_fuse_rmsnorm,
-- mhc_fused_post_pre_gemm_sqrsum) and FusedRoPE in TraceLens/PerfModel/perf_model.py; the code is ours. Their sheet
-- categories FusedRoPE and mHC have separate forward and backward tables; the models have no backward formulas,
-- so TraceLens writes only the _fwd sheets. Positions are 0-based indexes into the args; a missing argument or
-- dimension drops the instance.
--   FusedRoPE_fwd   (T, QH, D_lora) = Input Dims[0] (q_nope, exactly three dims), D_pe = Input Dims[1][2];
--       dtype_in = Input type[0], dtype_kv = Input type[4] when present and non-empty (else dtype_in).
--     aiter_fused_qk_rope_cat_and_cache_mla (aiter::fused_qk_rope_cat_and_cache_mla; q_nope, q_pe, k_nope, k_pe,
--       kv_cache, ...): KH = Input Dims[2][1]; params T, QH, KH, D_lora, D_pe, dtype_in, dtype_kv.
--     fused_qk_rope_concat_and_cache_mla (aiter::fused_qk_rope_concat_and_cache_mla; q_nope, q_pe, kv_c, k_pe,
--       kv_cache, q_out, ...): KH = 1, dtype_out = Input type[5] when present and non-empty (else dtype_in); params
--       those and dtype_out.
--     FLOPs 3·(T·QH·D_pe + T·KH·D_pe); bytes q and k read at dtype_in ((T·QH + T·KH)·(D_lora + D_pe)·bpe_in), q
--       written (T·QH·(D_lora + D_pe)) at bpe_in (concat: dtype_out's, bpe_in when unknown), the KV rows written
--       (T·KH·(D_lora + D_pe)) at dtype_kv's (bpe_in when unknown); no byte count when dtype_in is unknown.
--       Compute Spec 'vector_' + the precision of dtype_in (empty when unknown).
--   mHC_fwd   M tokens, n streams of C, hc3 projection rows, K = n·C, split_k partials; dtype_in the residual
--       stream's type (c10::BFloat16 when the op has no such Input type), bpe_in its bytes (unknown: no byte count);
--       the mixes, fn and partials count 4 bytes an element.
--     mhc_post (out, x, residual, post_layer_mix, comb_res_mix, store_nt): M, C = Input Dims[1][0..1], n =
--       Input Dims[0][1], hc3 None, dtype_in = Input type[1]; FLOPs 2·M·n·C·(n + 1); bytes x (M·C·bpe_in), residual
--       and out (2·M·n·C·bpe_in), mixes (M·n + M·n²)·4.
--     mhc_pre_gemm_sqrsum (out, sqrsum, x, fn, ...): M, n, C = Input Dims[2][0..2], hc3, K = Input Dims[3][0..1],
--       split_k = Input Dims[0][0], dtype_in = Input type[2]; FLOPs 2·M·hc3·K; bytes M·n·C·bpe_in + hc3·K·4 +
--       split_k·M·hc3·4 + split_k·M·4.
--     mhc_pre_big_fuse_rmsnorm (post_mix, comb_mix, out, gemm_out_mul, gemm_out_sqrsum, hc_scale, hc_base,
--       residual, norm_weight, ...): M, C = Input Dims[2][0..1], n = Input Dims[0][1], hc3 = Input Dims[6][0],
--       split_k = Input Dims[3][0], dtype_in = Input type[7]; FLOPs 2·M·C·n + 5·M·C; bytes M·n·C·bpe_in +
--       split_k·M·hc3·4 + C·bpe_in + M·C·bpe_in + (M·n + M·n²)·4.
--     mhc_fused_post_pre_gemm_sqrsum (gemm_out_mul, gemm_out_sqrsum, next_residual, layer_input, residual_in,
--       post_layer_mix, comb_res_mix, fn, ...): M, C = Input Dims[3][0..1], n = Input Dims[2][1], hc3, K = Input
--       Dims[7][0..1], split_k = Input Dims[0][0], dtype_in = Input type[3]; FLOPs 2·M·n·C·(n + 1) + 2·M·hc3·K;
--       bytes M·C·bpe_in + 3·M·n·C·bpe_in + (M·n + M·n²)·4 + hc3·K·4 + split_k·M·hc3·4 + split_k·M·4.
--     params M, n, C, hc3, (K,) (split_k,) dtype_in in the models' orders (see the views); Compute Spec
--       'matrix_' (the two GEMM ops) or 'vector_' + the precision of dtype_in (empty when unknown or empty).
-- aiter::topk_softplus, the fifth _MHCBase subclass, has the category MoE_aux (its sheet MoE_aux_fwd):
-- peers/tracelens/perf_moe.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_fused_rope_of(ev): one row per FusedRoPE_fwd instance of ev (_tl_perf_events or a view of its columns)
-- that TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE MACRO _tl_perf_fused_rope_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model = 'fused_qk_rope_concat_and_cache_mla' AS concat,
           _tl_shape(json_extract(input_dims, '$[0]')) AS qn, _tl_shape(json_extract(input_dims, '$[1]')) AS qp,
           _tl_shape(json_extract(input_dims, '$[2]')) AS kn, json_extract_string(input_types, '$[*]') AS ty
    FROM query_table(ev) WHERE sheet = 'FusedRoPE_fwd'
), a AS (
    SELECT trace_id, event_id, concat, qn[1]::HUGEINT AS t, qn[2]::HUGEINT AS qh, qn[3]::HUGEINT AS dl,
           qp[3]::HUGEINT AS dp, CASE WHEN concat THEN 1 ELSE kn[2] END::HUGEINT AS kh, ty[1] AS dt_in,
           CASE WHEN coalesce(ty[5], '') <> '' THEN ty[5] ELSE ty[1] END AS dt_kv,
           CASE WHEN coalesce(ty[6], '') <> '' THEN ty[6] ELSE ty[1] END AS dt_out
    FROM e
    WHERE len(qn) = 3 AND len(qp) >= 3 AND (concat OR len(kn) >= 2) AND len(ty) >= 1 AND ty[1] IS NOT NULL
)
SELECT trace_id, event_id,
       list_concat([{'k': 'T', 'v': t::VARCHAR, 't': 'i'}, {'k': 'QH', 'v': qh::VARCHAR, 't': 'i'},
                    {'k': 'KH', 'v': kh::VARCHAR, 't': 'i'}, {'k': 'D_lora', 'v': dl::VARCHAR, 't': 'i'},
                    {'k': 'D_pe', 'v': dp::VARCHAR, 't': 'i'}, {'k': 'dtype_in', 'v': dt_in, 't': 's'},
                    {'k': 'dtype_kv', 'v': dt_kv, 't': 's'}],
                   CASE WHEN concat THEN [{'k': 'dtype_out', 'v': dt_out, 't': 's'}] ELSE [] END) AS params,
       3 * (t * qh * dp + t * kh * dp) AS flops,
       CASE WHEN _tl_bpe(dt_in) IS NOT NULL
            THEN (t * qh * dl + t * qh * dp) * _tl_bpe(dt_in) + (t * kh * dl + t * kh * dp) * _tl_bpe(dt_in)
                 + t * qh * (dl + dp) * CASE WHEN concat THEN coalesce(_tl_bpe(dt_out), _tl_bpe(dt_in))
                                             ELSE _tl_bpe(dt_in) END
                 + t * kh * (dl + dp) * coalesce(_tl_bpe(dt_kv), _tl_bpe(dt_in)) END AS bytes,
       'vector_' || _tl_precision(dt_in) AS compute_spec
FROM a;

-- _tl_perf_fused_rope: one row per FusedRoPE_fwd.csv instance of the perf report, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_fused_rope AS SELECT * FROM _tl_perf_fused_rope_of('_tl_perf_events');

-- _tl_perf_fused_rope_sheet(tbl, ev, by_kernels): the rows and columns of a FusedRoPE_fwd sheet from the instances
-- tbl and their events ev, grouped by num_kernels too when by_kernels (see _tl_perf_summary_of).
CREATE OR REPLACE MACRO _tl_perf_fused_rope_sheet(tbl, ev, by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'T') AS "param: T", _tl_perf_param(params, 'QH') AS "param: QH",
       _tl_perf_param(params, 'KH') AS "param: KH", _tl_perf_param(params, 'D_lora') AS "param: D_lora",
       _tl_perf_param(params, 'D_pe') AS "param: D_pe", _tl_perf_param(params, 'dtype_in') AS "param: dtype_in",
       _tl_perf_param(params, 'dtype_kv') AS "param: dtype_kv", _tl_perf_param(params, 'dtype_out') AS "param: dtype_out",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of(tbl, ev, by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_fused_rope_fwd: TraceLens's FusedRoPE_fwd.csv, one row per trace and group of fused MLA RoPE op instances
-- with the same name and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: T, QH, KH, D_lora, D_pe   tokens, query and KV heads, the no-RoPE and RoPE head dims
--   param: dtype_in, dtype_kv, dtype_out   the input, KV-cache and (concat op) output types
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 35 FusedRoPE_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_fused_rope_fwd AS
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_fused_rope_sheet('_tl_perf_fused_rope', '_tl_perf_events', false);

-- _tl_perf_mhc_of(ev): one row per mHC_fwd instance of ev (_tl_perf_events or a view of its columns) that
-- TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE MACRO _tl_perf_mhc_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model, json_extract_string(input_types, '$[*]') AS ty,
           list_transform(generate_series(0, 7), lambda i: _tl_shape(json_extract(input_dims, '$[' || i || ']'))) AS d
    FROM query_table(ev) WHERE sheet = 'mHC_fwd'
), a AS (   -- d[i + 1] is Input Dims[i]
    SELECT trace_id, event_id, model,
           CASE model WHEN 'mhc_post' THEN d[2][1] WHEN 'mhc_pre_gemm_sqrsum' THEN d[3][1]
                      WHEN 'mhc_pre_big_fuse_rmsnorm' THEN d[3][1] ELSE d[4][1] END::HUGEINT AS m,
           CASE model WHEN 'mhc_post' THEN d[1][2] WHEN 'mhc_pre_gemm_sqrsum' THEN d[3][2]
                      WHEN 'mhc_pre_big_fuse_rmsnorm' THEN d[1][2] ELSE d[3][2] END::HUGEINT AS n,
           CASE model WHEN 'mhc_post' THEN d[2][2] WHEN 'mhc_pre_gemm_sqrsum' THEN d[3][3]
                      WHEN 'mhc_pre_big_fuse_rmsnorm' THEN d[3][2] ELSE d[4][2] END::HUGEINT AS c,
           CASE model WHEN 'mhc_pre_gemm_sqrsum' THEN d[4][1] WHEN 'mhc_pre_big_fuse_rmsnorm' THEN d[7][1]
                      WHEN 'mhc_fused_post_pre_gemm_sqrsum' THEN d[8][1] END::HUGEINT AS hc3,
           CASE model WHEN 'mhc_pre_gemm_sqrsum' THEN d[4][2] WHEN 'mhc_fused_post_pre_gemm_sqrsum' THEN d[8][2]
                      END::HUGEINT AS k,
           CASE model WHEN 'mhc_post' THEN NULL WHEN 'mhc_pre_big_fuse_rmsnorm' THEN d[4][1] ELSE d[1][1] END::HUGEINT
               AS split_k,
           CASE model WHEN 'mhc_post' THEN 1 WHEN 'mhc_pre_gemm_sqrsum' THEN 2 WHEN 'mhc_pre_big_fuse_rmsnorm' THEN 7
                      ELSE 3 END AS i_ty
    FROM e
), b AS (
    SELECT *, CASE WHEN len(ty) > i_ty THEN ty[i_ty + 1] ELSE 'c10::BFloat16' END AS dt,
           model IN ('mhc_pre_gemm_sqrsum', 'mhc_fused_post_pre_gemm_sqrsum') AS gemm
    FROM (SELECT a.*, e.ty FROM a JOIN e USING (trace_id, event_id))
    WHERE m IS NOT NULL AND n IS NOT NULL AND c IS NOT NULL
      AND (model = 'mhc_post' OR (hc3 IS NOT NULL AND split_k IS NOT NULL))
      AND (model NOT IN ('mhc_pre_gemm_sqrsum', 'mhc_fused_post_pre_gemm_sqrsum') OR k IS NOT NULL)
), c AS (
    SELECT *, _tl_bpe(dt) AS bpe FROM b
)
SELECT trace_id, event_id,
       list_concat([{'k': 'M', 'v': m::VARCHAR, 't': 'i'}, {'k': 'n', 'v': n::VARCHAR, 't': 'i'},
                    {'k': 'C', 'v': c::VARCHAR, 't': 'i'}, {'k': 'hc3', 'v': hc3::VARCHAR, 't': 'i'}],
                   CASE WHEN gemm THEN [{'k': 'K', 'v': k::VARCHAR, 't': 'i'}] ELSE [] END,
                   CASE WHEN model <> 'mhc_post' THEN [{'k': 'split_k', 'v': split_k::VARCHAR, 't': 'i'}] ELSE [] END,
                   [{'k': 'dtype_in', 'v': dt, 't': 's'}]) AS params,
       CASE model WHEN 'mhc_post' THEN 2 * m * n * c * (n + 1) WHEN 'mhc_pre_gemm_sqrsum' THEN 2 * m * hc3 * k
                  WHEN 'mhc_pre_big_fuse_rmsnorm' THEN 2 * m * c * n + 5 * m * c
                  ELSE 2 * m * n * c * (n + 1) + 2 * m * hc3 * k END AS flops,
       CASE model WHEN 'mhc_post' THEN m * c * bpe + m * n * c * bpe + (m * n * 4 + m * n * n * 4) + m * n * c * bpe
                  WHEN 'mhc_pre_gemm_sqrsum' THEN m * n * c * bpe + hc3 * k * 4 + split_k * m * hc3 * 4 + split_k * m * 4
                  WHEN 'mhc_pre_big_fuse_rmsnorm'
                  THEN m * n * c * bpe + split_k * m * hc3 * 4 + c * bpe + m * c * bpe + (m * n * 4 + m * n * n * 4)
                  ELSE m * c * bpe + 3 * (m * n * c * bpe) + (m * n * 4 + m * n * n * 4) + hc3 * k * 4
                       + (split_k * m * hc3 * 4 + split_k * m * 4) END AS bytes,
       CASE WHEN gemm THEN 'matrix_' ELSE 'vector_' END || CASE WHEN dt <> '' THEN _tl_precision(dt) END
           AS compute_spec
FROM c;

-- _tl_perf_mhc: one row per mHC_fwd.csv instance of the perf report, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_mhc AS SELECT * FROM _tl_perf_mhc_of('_tl_perf_events');

-- _tl_perf_mhc_sheet(tbl, ev, by_kernels): the rows and columns of an mHC_fwd sheet from the instances tbl and their
-- events ev, grouped by num_kernels too when by_kernels (see _tl_perf_summary_of).
CREATE OR REPLACE MACRO _tl_perf_mhc_sheet(tbl, ev, by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'M') AS "param: M", _tl_perf_param(params, 'n') AS "param: n",
       _tl_perf_param(params, 'C') AS "param: C", _tl_perf_param(params, 'hc3') AS "param: hc3",
       _tl_perf_param(params, 'K') AS "param: K", _tl_perf_param(params, 'split_k') AS "param: split_k",
       _tl_perf_param(params, 'dtype_in') AS "param: dtype_in",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of(tbl, ev, by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_mhc_fwd: TraceLens's mHC_fwd.csv, one row per trace and group of mHC op instances with the same name and
-- parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: M, n, C, hc3, K, split_k, dtype_in   tokens, streams, hidden size, projection rows, flattened stream
--                               width, split-K partials, the residual's type (see the top of this file)
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 36 mHC_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_mhc_fwd AS
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_mhc_sheet('_tl_perf_mhc', '_tl_perf_events', false);
