-- perf/attention — FLOPs and bytes of scaled dot-product attention (SDPA family), forward and backward.
--
-- For B sequences, H_Q query heads, H_KV key/value heads, N_Q queries, N_KV keys, head sizes d_qk and d_v:
--   forward   S = Q Kᵀ: 2·B·H_Q·N_Q·N_KV·d_qk;  O = P V: 2·B·H_Q·N_Q·N_KV·d_v  (softmax not counted: d times
--             fewer operations). Causal masking with N_Q = N_KV halves it.
--   backward  flash implementations recompute S (2·B·H_Q·N_Q·N_KV·d_qk), then dV = Pᵀ dO, dP = dO Vᵀ,
--             dQ = dS K, dK = dSᵀ Q: 2·B·H_Q·N_Q·N_KV·(2·d_qk + 2·d_v) + 2·B·H_Q·N_Q·N_KV·d_qk, halved when
--             causal (the GQA head reduction, B·N_KV·d·(H_Q/H_KV − 1) per gradient, is counted too).
--   bytes     forward reads Q, K, V and writes O; backward reads Q, K, V, dO and writes dQ, dK, dV; each tensor
--             once, at its recorded element size.
-- Sources: Dao et al., FlashAttention (arXiv:2205.14135) §3 and the FLOP count of flash-attention's
-- benchmarks/benchmark_flash_attention.py (flops = 4·B·H·N_Q·N_KV·d, halved when causal, backward 2.5× the
-- forward); TraceLens PerfModel/perf_model.py (SDPA.flops_func, SDPA.flops_bwd_func, SDPA.bytes_func) uses the
-- same terms but 2 bytes per element for the forward whatever the dtype. Layouts and argument positions
-- (which index holds is_causal) are the ops' signatures in native_functions.yaml and flash_attn's
-- flash_attn_interface.py:
--   aten::_flash_attention_forward(q, k, v, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...)
--                                            q/k/v [B, N, H, d] (or [total, H, d] with cum_seq: varlen)
--   aten::_flash_attention_backward(grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
--                                   dropout_p, is_causal, ...)
--   aten::_scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, ...)            [B, H, N, d]
--   aten::_scaled_dot_product_flash_attention_backward(grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k,
--                                   max_q, max_k, dropout_p, is_causal, ...)                 [B, H, N, d]
--   aten::_scaled_dot_product_efficient_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p,
--                                   is_causal, ...)                                          [B, H, N, d]
--   aten::_scaled_dot_product_efficient_attention_backward(grad_out, q, k, v, attn_bias, out, logsumexp,
--                                   philox_seed, philox_offset, dropout_p, grad_input_mask, is_causal, ...)  [B, H, N, d]
--   aten::_scaled_dot_product_cudnn_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal,
--                                   ...)                                                     [B, H, N, d]
--   aten::_efficient_attention_forward(q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
--                                   dropout_p, custom_mask_type (1, 2 = causal), ...)        [B, N, H, d]
--   flash_attn::_flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal, ...)          [B, N, H, d]
--   flash_attn::_flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p, softmax_scale,
--                                   causal, ...)                                             [B, N, H, d]
--   flash_attn::_flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
--                                   dropout_p, softmax_scale, causal, ...)                   [total, H, d]
--   flash_attn::_flash_attn_varlen_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, cu_seqlens_q,
--                                   cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, causal, ...)
-- Varlen (packed) attention records only the total token counts and the number of sequences (cu_seqlens has
-- B + 1 entries), not each length: the model takes B sequences of equal length (total / B), exact when the
-- lengths are equal.
--
-- @requires perf/args

-- _perf_attention: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_attention AS
WITH spec AS (
    SELECT * FROM (VALUES
        -- op name, index of q, layout (bnhd | bhnd | thd), is_causal index, backward, cu_seqlens_q index
        ('aten::_flash_attention_forward', 1, 'bnhd', 9, false, 4),
        ('aten::_flash_attention_backward', 2, 'bnhd', 12, true, 7),
        ('aten::_scaled_dot_product_flash_attention', 1, 'bhnd', 5, false, NULL),
        ('aten::_scaled_dot_product_flash_attention_backward', 2, 'bhnd', 12, true, NULL),
        ('aten::_scaled_dot_product_efficient_attention', 1, 'bhnd', 7, false, NULL),
        ('aten::_scaled_dot_product_efficient_attention_backward', 2, 'bhnd', 12, true, NULL),
        ('aten::_scaled_dot_product_cudnn_attention', 1, 'bhnd', 7, false, NULL),
        ('aten::_efficient_attention_forward', 1, 'bnhd', 10, false, 5),
        ('flash_attn::_flash_attn_forward', 1, 'bnhd', 6, false, NULL),
        ('FlashAttnFunc', 1, 'bnhd', 6, false, NULL),
        ('flash_attn::_flash_attn_backward', 2, 'bnhd', 12, true, NULL),
        ('flash_attn::_flash_attn_varlen_forward', 1, 'thd', 10, false, 4),
        ('flash_attn::_flash_attn_varlen_backward', 2, 'thd', 16, true, 10)
    ) AS t(op_name, iq, layout, icausal, bwd, icu)
), a AS (
    SELECT s.*, p.iq, p.layout, p.icausal, p.bwd, p.icu,
           s.dims[p.iq] AS q, s.dims[p.iq + 1] AS k, s.dims[p.iq + 2] AS v, s.bpe[p.iq] AS bq,
           s.bpe[p.iq + 1] AS bk, s.bpe[p.iq + 2] AS bv, s.prec[p.iq] AS pq,
           CASE WHEN p.icu IS NOT NULL THEN s.dims[p.icu] END AS cu,
           CASE WHEN s.op_name = 'aten::_efficient_attention_forward'
                THEN coalesce(s.conc[p.icausal], '') IN ('1', '2')
                ELSE coalesce(s.conc[p.icausal], '') = 'True' END AS causal
    FROM _perf_arg_sets s JOIN spec p USING (op_name)
), g AS (  -- B, N_Q, H_Q, N_KV, H_KV, d_qk, d_v
    SELECT *,
        CASE WHEN layout = 'thd' OR (cu IS NOT NULL AND len(cu) = 1 AND len(q) = 3) THEN cu[1] - 1
             ELSE q[1] END AS nb,
        CASE WHEN layout = 'bhnd' THEN q[3] WHEN len(q) = 3 THEN q[1] // nullif(cu[1] - 1, 0) ELSE q[2] END AS nq,
        CASE WHEN layout = 'bhnd' THEN k[3] WHEN len(k) = 3 THEN k[1] // nullif(cu[1] - 1, 0) ELSE k[2] END AS nkv,
        CASE WHEN layout = 'bhnd' THEN q[2] ELSE q[-2] END AS hq,
        CASE WHEN layout = 'bhnd' THEN k[2] ELSE k[-2] END AS hkv,
        q[-1] AS dqk, v[-1] AS dv
    FROM a WHERE len(q) IN (3, 4) AND len(k) = len(q) AND len(v) = len(q)
), f AS (
    SELECT *,
        CASE WHEN causal AND nq = nkv THEN 0.5 ELSE 1.0 END AS cf,
        nb * hq * nq * nkv AS pairs
    FROM g WHERE nb > 0 AND nq IS NOT NULL AND nkv IS NOT NULL
)
SELECT op_name, d_txt, t_txt, c_txt, CASE WHEN bwd THEN 'SDPA_bwd' ELSE 'SDPA_fwd' END AS family,
       cf * CASE WHEN NOT bwd THEN 2.0 * pairs * (dqk + dv)
                 ELSE 2.0 * pairs * (2 * dqk + 2 * dv) + 2.0 * pairs * dqk
                      + nb * nkv * (dqk + dv) * (hq // hkv - 1) END AS flops,
       (nb * nq * hq * dqk) * bq + (nb * nkv * hkv * dqk) * bk + (nb * nkv * hkv * dv) * bv
         + (nb * nq * hq * dv) * bq                                   -- O (forward) or dO (backward)
         + CASE WHEN bwd THEN (nb * nq * hq * dqk) * bq + (nb * nkv * hkv * dqk) * bk + (nb * nkv * hkv * dv) * bv
                ELSE 0 END AS bytes,
       pq AS precision, true AS matrix,
       format('B={} N_Q={} H_Q={} N_KV={} H_KV={} d={} causal={}', nb, nq, hq, nkv, hkv, dqk, causal) AS shape
FROM f WHERE bq IS NOT NULL;
