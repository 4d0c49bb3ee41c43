-- peers/tracelens/perf_sdpa — TraceLens (0.1.0) scaled-dot-product attention perf model and its sheet
-- SDPA_fwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (classes SDPA, flash_attention, aten__scaled_dot_product_flash_attention,
-- aten__scaled_dot_product_efficient_attention, aten__scaled_dot_product_cudnn_attention; extract_sdpa_cfg);
-- the code is ours.
--   shapes     q, k, v = Input Dims[0..2], each read as (B, H, N, d) — flash_attn's ops
--              (flash_attn::_flash_attn_forward, FlashAttnFunc) as (B, N, H, d). B must agree over q, k, v,
--              H and N over k and v, d over q and k (else TraceLens drops the instance). N_Q, H_Q, d_h_qk
--              from q; N_KV, H_KV from k; d_h_v from v.
--   dropout    float of Concrete Inputs[3] (aten flash), [5] (efficient, cudnn); 0.0 when empty or 'None';
--              flash_attn: float of [3] (an empty value drops the instance).
--   causal     Concrete Inputs[4] (aten flash), [6] (efficient, cudnn) is 'true' in any case;
--              flash_attn: [5] evaluated ('True' / 'False' here; other texts are not read).
--   FLOPs      B·H_Q·(2·N_Q·N_KV·d_h_qk + 2·N_Q·d_h_v·N_KV), halved (a float) when causal; causal with
--              N_Q ≠ N_KV drops the instance.
--   bytes      (B·N_Q·H_Q·d_h_qk + B·N_KV·H_KV·d_h_qk + B·N_KV·H_KV·d_h_v + B·N_Q·H_Q·d_h_v) · 2 — two bytes per
--              element whatever the dtype (TraceLens's default bytes_per_element).
--   params     B, N_Q, H_Q, N_KV, H_KV, d_h_qk, d_h_v, (flash_attn: q_stride, k_stride, v_stride,) dropout,
--              causal, flash_impl (True for the flash ops), dtype_A_B (the first two Input types).
--   Compute Spec  'matrix_' + the precision of q's dtype.
-- SDPA_bwd.csv (SDPA.flops_bwd_func, bytes_bwd_func): the same instances and parameters, for the forward ops
-- that are the forward end of a backward autograd node, with that node's GPU time (peers/tracelens/perf_bwd):
--   FLOPs      (flash_impl: the recomputed QK^T, B·H_Q·2·N_Q·N_KV·d_h_qk) + dV: B·H_Q·2·N_KV·N_Q·d_h_v +
--              B·N_KV·d_h_v·(H_Q // H_KV − 1) + dP: B·H_Q·2·N_Q·N_KV·d_h_v + dQ: B·H_Q·2·N_Q·N_KV·d_h_qk + dK:
--              B·H_Q·2·N_KV·N_Q·d_h_qk + B·N_KV·d_h_qk·(H_Q // H_KV − 1), halved (a float) when causal.
--   bytes      (q, k, v read, dO read, dQ, dK, dV written) · 2: (2·(B·N_Q·H_Q·d_h_qk + B·N_KV·H_KV·d_h_qk +
--              B·N_KV·H_KV·d_h_v) + B·N_Q·H_Q·d_h_v) · 2, two bytes per element whatever the dtype.
-- aiter's attention forwards (aiter__flash_attn_forward, aiter__mha_fwd, aiter__fmha_v3_fwd: q, k, v = Input
-- Dims[0..2]; aiter__fmha_v3_forward (aiter::wrapper_fmha_v3_fwd): [1..3]; flash_attn_v3_forward
-- (flash_attn_3::fwd): [0..2]), formulas per TraceLens PerfModel (_parse_aiter_mha_fwd_args and the classes in
-- perf_model.py): shapes (B, N, H, d) as flash_attn's; dropout = float of Concrete Inputs[3] ([4] for
-- fmha_v3_forward; 0.0 when empty, 'None' or not a number; always 0.0 for flash_attn_3), causal = Concrete
-- Inputs[5] ([6] for fmha_v3_forward, [24] for flash_attn_3) is 'true' in any case; flash_impl True; no strides,
-- no dtype_A_B parameter, hence no Compute Spec (empty).
-- flash_attn::_flash_attn_varlen_forward (flash_attention_varlen_forward, formulas per TraceLens PerfModel):
-- q, k, v = Input Dims[0..2] = (total tokens, H, d), B = 1; num_seqs_q/kv = the sizes of the cu_seqlens
-- (Input Dims[3], [4]) − 1; max_seqlen_q/kv = float of Concrete Inputs[5], [6]; dropout = float of [7]; causal =
-- [9] evaluated; strides and dtype_A_B as flash_attn's. FLOPs: the SDPA FLOPs of one sequence of the max lengths,
-- + (num_seqs_q − 1) × those of one sequence of the others' mean lengths ((N − max) // (num_seqs − 1), floats),
-- each halved when causal (unequal query and key lengths there drop the instance); bytes over the totals.
-- The backward ops TraceLens models with these (flash_attention_backward, flash_attention_varlen_backward,
-- aiter__flash_attn_backward, aiter__fmha_v3_backward, aiter__mha_bwd; their sheet is SDPA's, so TraceLens
-- summarises them with the forward ops): the FLOPs and bytes of SDPA_bwd.csv below, bytes at two bytes per element
-- (flash_attn's backward: name2bpe of its first Input type); they stay in SDPA_fwd.csv, except flash_attn's varlen
-- backward, whose rows TraceLens moves to SDPA_bwd.csv. Their arguments (dout, q, k, v, ...): q, k, v = Input
-- Dims[1..3] (aiter's _flash_attn_backward: [0..2], the op's dout, q and k); dropout = Concrete Inputs[8] (flash_attn:
-- 0.0 when absent or empty, else its float), [13] (varlen), [10] (aiter's _flash_attn_backward), [7]
-- (wrapper_fmha_v3_bwd), [6] (mha_bwd); causal = [10] (flash_attn, evaluated as Python does: True when absent or
-- empty, a number is true when not 0 and prints as itself — the op's softmax_scale), [15] (varlen), [12], [9], [8];
-- varlen: num_seqs from Input Dims[9], [10], max_seqlen from Concrete Inputs[11], [12].
-- EvoformerAttention (evoformer_attention, DeepSpeed's Evoformer op; formulas per TraceLens PerfModel perf_model.py
-- class evoformer_attention): args (Q, K, V, res_mask, pair_bias); Q = Input Dims[0] = (batch, N_seq, N_res,
-- heads, head dim), exactly five dims (else TraceLens drops the instance): B = batch·N_seq (the MSA depth folds into
-- the batch), N_Q = N_KV = N_res, H_Q = H_KV = heads, d_h_qk = d_h_v = head dim, causal and flash_impl False, no
-- dropout parameter, dtype_A_B = the one-element list [Input type[0]] ([None] without types), printed as a list;
-- the SDPA FLOPs and bytes above (two bytes per element); Compute Spec 'matrix_' + the precision of that dtype
-- (empty when unknown); SDPA_bwd.csv as for the other SDPA ops (no recomputed QK^T).
--
-- @requires lib/pytext peers/tracelens/perf_ops peers/tracelens/perf_bwd

-- _tl_perf_sdpa_evoformer_cfg: one row per EvoformerAttention instance TraceLens keeps, in _tl_perf_sdpa_cfg's
-- form (see the top of this file).
CREATE OR REPLACE VIEW _tl_perf_sdpa_evoformer_cfg AS
WITH e AS (
    SELECT trace_id, event_id, _tl_shape(json_extract(input_dims, '$[0]')) AS q,
           CASE WHEN json_array_length(input_types) > 0 THEN json_extract_string(input_types, '$[0]') END AS dt
    FROM _tl_perf_events WHERE sheet = 'SDPA_fwd' AND model = 'evoformer_attention'
), ok AS (
    SELECT trace_id, event_id, dt, q[1] * q[2] AS b, q[3] AS n, q[4] AS h, q[5] AS d FROM e WHERE len(q) = 5
)
SELECT trace_id, event_id,
       [{'k': 'B', 'v': b::VARCHAR, 't': 'i'}, {'k': 'N_Q', 'v': n::VARCHAR, 't': 'i'},
        {'k': 'H_Q', 'v': h::VARCHAR, 't': 'i'}, {'k': 'N_KV', 'v': n::VARCHAR, 't': 'i'},
        {'k': 'H_KV', 'v': h::VARCHAR, 't': 'i'}, {'k': 'd_h_qk', 'v': d::VARCHAR, 't': 'i'},
        {'k': 'd_h_v', 'v': d::VARCHAR, 't': 'i'}, {'k': 'causal', 'v': 'False', 't': NULL},
        {'k': 'flash_impl', 'v': 'False', 't': NULL},
        {'k': 'dtype_A_B', 'v': '[' || CASE WHEN dt IS NULL THEN 'None' ELSE _py_str(dt) END || ']', 't': NULL}]
           AS params,
       b::HUGEINT AS b, n::HUGEINT AS n_q, h::HUGEINT AS h_q, n::HUGEINT AS n_kv, h::HUGEINT AS h_kv,
       d::HUGEINT AS d_qk, d::HUGEINT AS d_v, false AS causal, false AS flash_impl,
       'matrix_' || _tl_precision(dt) AS compute_spec, false AS vl, NULL::BIGINT AS nsq, NULL::BIGINT AS nskv,
       NULL::DOUBLE AS mq, NULL::DOUBLE AS mkv, false AS bw, 2 AS bpe_bwd
FROM ok;

-- _tl_perf_sdpa_cfg: one row per SDPA forward instance TraceLens keeps: trace_id, event_id, params (in
-- _tl_perf_summary's input form), the shapes b, n_q, h_q, n_kv, h_kv, d_qk, d_v, causal, flash_impl,
-- compute_spec, and for flash_attn's varlen forward (vl) nsq, nskv, mq, mkv (sequences, longest lengths).
CREATE OR REPLACE VIEW _tl_perf_sdpa_cfg AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, input_types AS ty, input_strides AS st,
           json_extract(concrete_inputs, '$[*]') AS ci,
           model IN ('flash_attention', 'flash_attention_varlen_forward', 'flash_attention_backward',
                     'flash_attention_varlen_backward') AS fa,
           model IN ('flash_attention_varlen_forward', 'flash_attention_varlen_backward') AS vl,
           model IN ('aiter__flash_attn_forward', 'aiter__mha_fwd', 'aiter__fmha_v3_fwd', 'aiter__fmha_v3_forward',
                     'flash_attn_v3_forward', 'aiter__flash_attn_backward', 'aiter__fmha_v3_backward',
                     'aiter__mha_bwd') AS ai,
           model IN ('flash_attention_backward', 'flash_attention_varlen_backward', 'aiter__flash_attn_backward',
                     'aiter__fmha_v3_backward', 'aiter__mha_bwd') AS bw,
           model = 'flash_attention_backward' AS fab
    FROM _tl_perf_events WHERE sheet = 'SDPA_fwd' AND model <> 'evoformer_attention'
), a AS (
    SELECT *,
           CASE WHEN model IN ('aiter__fmha_v3_forward', 'flash_attention_backward', 'flash_attention_varlen_backward',
                               'aiter__fmha_v3_backward', 'aiter__mha_bwd') THEN 1 ELSE 0 END AS i_q,
           list_slice(json_extract(ty, '$[*]'), 1, 2) AS dt,
           CASE model WHEN 'aten_sdpa_flash' THEN 3 WHEN 'flash_attention' THEN 3 WHEN 'aiter__fmha_v3_forward' THEN 4
                      WHEN 'flash_attention_varlen_forward' THEN 7
                      WHEN 'flash_attn_v3_forward' THEN NULL WHEN 'aiter__flash_attn_forward' THEN 3
                      WHEN 'aiter__mha_fwd' THEN 3 WHEN 'aiter__fmha_v3_fwd' THEN 3
                      WHEN 'flash_attention_backward' THEN 8 WHEN 'flash_attention_varlen_backward' THEN 13
                      WHEN 'aiter__flash_attn_backward' THEN 10 WHEN 'aiter__fmha_v3_backward' THEN 7
                      WHEN 'aiter__mha_bwd' THEN 6 ELSE 5 END AS i_drop,
           CASE model WHEN 'aten_sdpa_flash' THEN 4 WHEN 'flash_attention' THEN 5 WHEN 'aiter__fmha_v3_forward' THEN 6
                      WHEN 'flash_attention_varlen_forward' THEN 9
                      WHEN 'flash_attn_v3_forward' THEN 24 WHEN 'aiter__flash_attn_forward' THEN 5
                      WHEN 'aiter__mha_fwd' THEN 5 WHEN 'aiter__fmha_v3_fwd' THEN 5
                      WHEN 'flash_attention_backward' THEN 10 WHEN 'flash_attention_varlen_backward' THEN 15
                      WHEN 'aiter__flash_attn_backward' THEN 12 WHEN 'aiter__fmha_v3_backward' THEN 9
                      WHEN 'aiter__mha_bwd' THEN 8 ELSE 6 END AS i_causal,
           CASE WHEN model = 'flash_attention_varlen_backward' THEN 9 ELSE 3 END AS i_cu
    FROM e
), a2 AS (     -- q, k, v and their strides
    SELECT *,
           list_transform([i_q, i_q + 1, i_q + 2], lambda i: json_extract(d, '$[' || i || ']')) AS qkv,
           list_transform([i_q, i_q + 1, i_q + 2], lambda i: json_extract(st, '$[' || i || ']')) AS qkv_st
    FROM a
), shp AS (
    SELECT *,
           list_transform(qkv, lambda x: CASE WHEN json_type(x) = 'ARRAY' AND json_array_length(x) >= CASE WHEN vl THEN 3 ELSE 4 END
                                             THEN json_transform(x, '["BIGINT"]') END) AS sh,
           CASE WHEN vl THEN json_extract(d, '$[' || i_cu || '][0]')::BIGINT - 1 END AS nsq,
           CASE WHEN vl THEN json_extract(d, '$[' || (i_cu + 1) || '][0]')::BIGINT - 1 END AS nskv,
           CASE WHEN vl THEN TRY_CAST(ci[i_cu + 3] ->> '$' AS DOUBLE) END AS mq,
           CASE WHEN vl THEN TRY_CAST(ci[i_cu + 4] ->> '$' AS DOUBLE) END AS mkv,
           ci[i_drop + 1] ->> '$' AS drop_text, ci[i_causal + 1] ->> '$' AS causal_text
    FROM a2
), p AS (
    SELECT *,
           CASE WHEN vl THEN 1 ELSE sh[1][1] END AS b_q, CASE WHEN vl THEN 1 ELSE sh[2][1] END AS b_k,
           CASE WHEN vl THEN 1 ELSE sh[3][1] END AS b_v,
           CASE WHEN vl THEN sh[1][2] WHEN fa OR ai THEN sh[1][3] ELSE sh[1][2] END AS h_q, CASE WHEN vl THEN sh[2][2] WHEN fa OR ai THEN sh[2][3] ELSE sh[2][2] END AS h_k,
           CASE WHEN vl THEN sh[3][2] WHEN fa OR ai THEN sh[3][3] ELSE sh[3][2] END AS h_v,
           CASE WHEN vl THEN sh[1][1] WHEN fa OR ai THEN sh[1][2] ELSE sh[1][3] END AS n_q,
           CASE WHEN vl THEN sh[2][1] WHEN fa OR ai THEN sh[2][2] ELSE sh[2][3] END AS n_k,
           CASE WHEN vl THEN sh[3][1] WHEN fa OR ai THEN sh[3][2] ELSE sh[3][3] END AS n_v,
           CASE WHEN vl THEN sh[1][3] ELSE sh[1][4] END AS d_q, CASE WHEN vl THEN sh[2][3] ELSE sh[2][4] END AS d_k,
           CASE WHEN vl THEN sh[3][3] ELSE sh[3][4] END AS d_v,
           CASE WHEN fab AND coalesce(drop_text, '') = '' THEN 0.0
                WHEN fa THEN TRY_CAST(drop_text AS DOUBLE)
                WHEN model = 'flash_attn_v3_forward' THEN 0.0
                WHEN drop_text IS NULL OR drop_text IN ('', 'None') THEN 0.0
                ELSE coalesce(TRY_CAST(drop_text AS DOUBLE), 0.0) END AS dropout,
           CASE WHEN fab AND coalesce(causal_text, '') = '' THEN true
                WHEN fab AND causal_text = 'None' THEN false
                WHEN fab AND TRY_CAST(causal_text AS DOUBLE) IS NOT NULL THEN TRY_CAST(causal_text AS DOUBLE) <> 0
                WHEN fa THEN CASE causal_text WHEN 'True' THEN true WHEN 'False' THEN false END
                WHEN causal_text IN ('', 'None') THEN false
                ELSE lower(causal_text) = 'true' END AS causal,
           CASE WHEN fab AND causal_text = 'None' THEN 'None'
                WHEN fab AND coalesce(causal_text, '') NOT IN ('', 'True', 'False')
                    THEN CASE WHEN regexp_matches(causal_text, '^-?[0-9]+$') THEN TRY_CAST(causal_text AS HUGEINT)::VARCHAR
                              ELSE TRY_CAST(causal_text AS DOUBLE)::VARCHAR END
                END AS causal_repr
    FROM shp
), ok AS (
    SELECT * FROM p
    WHERE d IS NOT NULL AND (ai OR ty IS NOT NULL) AND list_count(sh) = 3
          AND (fab OR len(ci) > i_causal) AND dropout IS NOT NULL AND causal IS NOT NULL
          AND b_q = b_k AND b_q = b_v AND h_k = h_v AND n_k = n_v AND d_q = d_k
          AND (ai OR len(dt) >= 1)
          AND CASE WHEN vl   -- varlen: the longest sequences, then the mean of the others (see _tl_perf_sdpa)
                   THEN mq IS NOT NULL AND mkv IS NOT NULL AND nsq IS NOT NULL AND nskv IS NOT NULL
                        AND (NOT causal OR mq = mkv) AND (nsq <= 1 OR (nskv <> 1
                             AND (NOT causal OR floor((n_q - mq) / (nsq - 1)) = floor((n_k - mkv) / (nskv - 1)))))
                   ELSE NOT causal OR n_q = n_k END
          AND (NOT fa OR list_bool_and(list_transform(qkv_st, lambda x: coalesce(json_type(x) = 'ARRAY', false))))
)
SELECT trace_id, event_id,
       list_concat(
           [{'k': 'B', 'v': b_q::VARCHAR, 't': 'i'}, {'k': 'N_Q', 'v': n_q::VARCHAR, 't': 'i'}, {'k': 'H_Q', 'v': h_q::VARCHAR, 't': 'i'},
            {'k': 'N_KV', 'v': n_k::VARCHAR, 't': 'i'}, {'k': 'H_KV', 'v': h_k::VARCHAR, 't': 'i'}, {'k': 'd_h_qk', 'v': d_q::VARCHAR, 't': 'i'},
            {'k': 'd_h_v', 'v': d_v::VARCHAR, 't': 'i'}],
           CASE WHEN fa THEN [{'k': 'q_stride', 'v': _py_tuple1(qkv_st[1]), 't': NULL},
                              {'k': 'k_stride', 'v': _py_tuple1(qkv_st[2]), 't': NULL},
                              {'k': 'v_stride', 'v': _py_tuple1(qkv_st[3]), 't': NULL}] ELSE [] END,
           [{'k': 'dropout', 'v': dropout::VARCHAR, 't': 'f'},
            {'k': 'causal', 'v': coalesce(causal_repr, _tl_py_bool(causal)), 't': NULL},
            {'k': 'flash_impl', 'v': _tl_py_bool(ai OR fa OR model = 'aten_sdpa_flash'), 't': NULL}],
           CASE WHEN ai THEN []
                ELSE [{'k': 'dtype_A_B', 'v': _py_seq(list_transform(dt, lambda x: _py_atom(x)), len(dt)), 't': NULL}] END,
           CASE WHEN vl THEN [{'k': 'num_seqs_q', 'v': nsq::VARCHAR, 't': 'i'},
                              {'k': 'num_seqs_kv', 'v': nskv::VARCHAR, 't': 'i'},
                              {'k': 'max_seqlen_q', 'v': mq::VARCHAR, 't': 'f'},
                              {'k': 'max_seqlen_kv', 'v': mkv::VARCHAR, 't': 'f'}] ELSE [] END)
           AS params,
       b_q::HUGEINT AS b, n_q::HUGEINT AS n_q, h_q::HUGEINT AS h_q, n_k::HUGEINT AS n_kv, h_k::HUGEINT AS h_kv,
       d_q::HUGEINT AS d_qk, d_v::HUGEINT AS d_v, causal,
       ai OR fa OR model = 'aten_sdpa_flash' AS flash_impl,
       CASE WHEN NOT ai THEN 'matrix_' || _tl_precision(dt[1] ->> '$') END AS compute_spec,
       vl, nsq, nskv, mq, mkv, bw, CASE WHEN fab THEN _tl_bpe(dt[1] ->> '$') ELSE 2 END AS bpe_bwd
FROM ok
UNION ALL
SELECT * FROM _tl_perf_sdpa_evoformer_cfg;

-- _tl_sdpa_flops(b, n_q, h_q, n_kv, d_qk, d_v, causal): SDPA.flops_func (see the top of this file): the FLOPs of
-- QK^T and PV, halved when causal (a DOUBLE; Python's order of operations, float arithmetic where n_q, n_kv are).
CREATE OR REPLACE MACRO _tl_sdpa_flops(b, n_q, h_q, n_kv, d_qk, d_v, causal) AS
    (b * h_q * (2 * n_q * n_kv * d_qk) + b * h_q * (2 * n_q * d_v * n_kv))::DOUBLE / CASE WHEN causal THEN 2 ELSE 1 END;

-- _tl_sdpa_flops_bwd(b, n_q, h_q, n_kv, h_kv, d_qk, d_v, causal, flash_impl): SDPA.flops_bwd_func: the recomputed
-- QK^T (flash_impl), dV, dP, dQ, dK and the GQA reductions, halved when causal (a DOUBLE).
CREATE OR REPLACE MACRO _tl_sdpa_flops_bwd(b, n_q, h_q, n_kv, h_kv, d_qk, d_v, causal, flash_impl) AS
    (CASE WHEN flash_impl THEN b * h_q * (2 * n_q * n_kv * d_qk) ELSE 0 END
     + b * h_q * (2 * n_kv * n_q * d_v) + b * n_kv * d_v * (h_q // h_kv - 1)
     + b * h_q * (2 * n_q * n_kv * d_v)
     + b * h_q * (2 * n_q * n_kv * d_qk)
     + b * h_q * (2 * n_kv * n_q * d_qk) + b * n_kv * d_qk * (h_q // h_kv - 1))::DOUBLE
    / CASE WHEN causal THEN 2 ELSE 1 END;

-- _tl_sdpa_elems_bwd(b, n_q, h_q, n_kv, h_kv, d_qk, d_v): SDPA.bytes_bwd_func's elements: q, k, v and dO read,
-- dQ, dK, dV written (times the bytes per element).
CREATE OR REPLACE MACRO _tl_sdpa_elems_bwd(b, n_q, h_q, n_kv, h_kv, d_qk, d_v) AS
    2 * (b * n_q * h_q * d_qk + b * n_kv * h_kv * d_qk + b * n_kv * h_kv * d_v) + b * n_q * h_q * d_v;

-- _tl_perf_sdpa: one row per SDPA_fwd.csv instance TraceLens keeps, in _tl_perf_summary's input form: the
-- forward ops with the forward FLOPs and bytes; the backward ops TraceLens models in the same pass (bw: flash_attn's
-- and aiter's) with their backward ones (varlen: the longest sequences plus the others at their mean lengths).
CREATE OR REPLACE VIEW _tl_perf_sdpa AS
WITH m AS (   -- varlen: the others' mean lengths (Python's float floor division)
    SELECT *, CASE WHEN vl AND nsq > 1 THEN floor((n_q - mq) / (nsq - 1)) END AS oq,
           CASE WHEN vl AND nsq > 1 THEN floor((n_kv - mkv) / (nskv - 1)) END AS okv
    FROM _tl_perf_sdpa_cfg
)
SELECT trace_id, event_id, params,
       CASE WHEN vl AND bw
            THEN _tl_sdpa_flops_bwd(b, mq, h_q, mkv, h_kv, d_qk, d_v, causal, flash_impl)
                 + CASE WHEN nsq > 1 THEN (nsq - 1) * _tl_sdpa_flops_bwd(b, oq, h_q, okv, h_kv, d_qk, d_v, causal,
                                                                         flash_impl) ELSE 0 END
            WHEN vl
            THEN _tl_sdpa_flops(b, mq, h_q, mkv, d_qk, d_v, causal)
                 + CASE WHEN nsq > 1 THEN (nsq - 1) * _tl_sdpa_flops(b, oq, h_q, okv, d_qk, d_v, causal) ELSE 0 END
            WHEN bw THEN _tl_sdpa_flops_bwd(b, n_q, h_q, n_kv, h_kv, d_qk, d_v, causal, flash_impl)
            ELSE _tl_sdpa_flops(b, n_q, h_q, n_kv, d_qk, d_v, causal) END AS flops,
       CASE WHEN bw THEN _tl_sdpa_elems_bwd(b, n_q, h_q, n_kv, h_kv, d_qk, d_v) * bpe_bwd
            ELSE (b * n_q * h_q * d_qk + b * n_kv * h_kv * d_qk + b * n_kv * h_kv * d_v + b * n_q * h_q * d_v) * 2
            END AS bytes,
       compute_spec
FROM m
WHERE NOT bw OR (h_kv <> 0 AND bpe_bwd IS NOT NULL);

-- _tl_perf_sdpa_bwd: the forward instances with the backward FLOPs and bytes of SDPA_bwd.csv (see the top of
-- this file), in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_sdpa_bwd AS
SELECT trace_id, event_id, params, _tl_sdpa_flops_bwd(b, n_q, h_q, n_kv, h_kv, d_qk, d_v, causal, flash_impl) AS flops,
       _tl_sdpa_elems_bwd(b, n_q, h_q, n_kv, h_kv, d_qk, d_v) * 2 AS bytes, compute_spec
FROM _tl_perf_sdpa_cfg
WHERE h_kv <> 0;

-- _tl_perf_sdpa_sheet(tbl, ev, by_kernels): the rows and columns of an attention sheet from the instances tbl and
-- their events ev (see _tl_perf_summary_of): SDPA_fwd, or SDPA_bwd over the backward nodes; grouped by num_kernels
-- too when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_sdpa_sheet(tbl, ev, by_kernels := false) AS TABLE
SELECT trace_id, name,
       _tl_perf_param(params, 'B') AS "param: B", _tl_perf_param(params, 'N_Q') AS "param: N_Q",
       _tl_perf_param(params, 'H_Q') AS "param: H_Q", _tl_perf_param(params, 'N_KV') AS "param: N_KV",
       _tl_perf_param(params, 'H_KV') AS "param: H_KV", _tl_perf_param(params, 'd_h_qk') AS "param: d_h_qk",
       _tl_perf_param(params, 'd_h_v') AS "param: d_h_v", _tl_perf_param(params, 'q_stride') AS "param: q_stride",
       _tl_perf_param(params, 'k_stride') AS "param: k_stride", _tl_perf_param(params, 'v_stride') AS "param: v_stride",
       _tl_perf_param(params, 'dropout') AS "param: dropout", _tl_perf_param(params, 'causal') AS "param: causal",
       _tl_perf_param(params, 'flash_impl') AS "param: flash_impl",
       _tl_perf_param(params, 'dtype_A_B') AS "param: dtype_A_B",
       _tl_perf_param(params, 'num_seqs_q') AS "param: num_seqs_q",
       _tl_perf_param(params, 'num_seqs_kv') AS "param: num_seqs_kv",
       _tl_perf_param(params, 'max_seqlen_q') AS "param: max_seqlen_q",
       _tl_perf_param(params, 'max_seqlen_kv') AS "param: max_seqlen_kv",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of(tbl, ev, by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_sdpa_fwd: TraceLens's SDPA_fwd.csv, one row per trace and group of attention forward instances with
-- the same name and parameters; TraceLens's column names (statistics: peers/tracelens/perf_ops).
--   trace_id                                  the trace
--   name                                      the op name
--   param: B, N_Q, H_Q, N_KV, H_KV, d_h_qk, d_h_v   batch, query/key lengths and heads, head dims
--   param: q_stride, k_stride, v_stride       (flash_attn ops) the strides of q, k, v
--   param: dropout, causal, flash_impl, dtype_A_B   see the top of this file
--   param: num_seqs_q, num_seqs_kv, max_seqlen_q, max_seqlen_kv   (flash_attn's varlen forward) sequences and
--                                             longest lengths
--   GFLOPS_first ... UID_first                the statistics of _tl_perf_summary
--   rank                                      row order in TraceLens's file
--   sheet_columns                             the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 10 SDPA_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_sdpa_fwd AS
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_sdpa_sheet('_tl_perf_sdpa', '_tl_perf_events')
WHERE name NOT IN (SELECT name FROM _tl_perf_moved_bwd_ops);

-- tl_perf_sdpa_bwd: TraceLens's SDPA_bwd.csv, one row per trace and group of attention forward instances with
-- the same name and parameters that autograd ran a backward node for, with the backward FLOPs and bytes and the
-- node's GPU kernels; then the rows of flash_attn's varlen backward op, which TraceLens summarises with
-- SDPA_fwd.csv's instances and moves here (pandas' concat: their columns follow the others'; an integer
-- column of one part that the other part lacks or holds as floats is not turned into floats here); the columns
-- of tl_perf_sdpa_fwd.
-- @output report-tracelens 17 SDPA_bwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_sdpa_bwd AS
WITH b AS (
    SELECT * FROM _tl_perf_sdpa_sheet('_tl_perf_sdpa_bwd', '_tl_perf_bwd_events')
), m AS (
    SELECT * FROM _tl_perf_sdpa_sheet('_tl_perf_sdpa', '_tl_perf_events')
    WHERE name IN (SELECT name FROM _tl_perf_moved_bwd_ops)
), cols AS (
    SELECT trace_id,
           CASE WHEN bc.c IS NULL THEN mc.c WHEN mc.c IS NULL THEN bc.c
                ELSE list_concat(bc.c, list_filter(mc.c, lambda x: NOT list_contains(bc.c, x))) END AS c,
           coalesce(bc.last_rank, 0) AS last_rank
    FROM (SELECT trace_id, any_value(sheet_columns) AS c, max(rank) AS last_rank FROM b GROUP BY ALL) bc
    FULL JOIN (SELECT trace_id, any_value(sheet_columns) AS c FROM m GROUP BY ALL) mc USING (trace_id)
)
SELECT r.* EXCLUDE (rank, sheet_columns, num_kernels), r.rank, c.c AS sheet_columns
FROM (SELECT * FROM b
      UNION ALL BY NAME
      SELECT m.* REPLACE (m.rank + (SELECT last_rank FROM cols WHERE cols.trace_id = m.trace_id) AS rank) FROM m) r
JOIN cols c USING (trace_id);
