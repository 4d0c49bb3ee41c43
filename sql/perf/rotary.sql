-- perf/rotary — FLOPs and bytes of rotary position embedding kernels (RoPE).
--
-- RoPE rotates each pair (x₁, x₂) of the first rot_dim channels of every query and key head by the angle of the
-- token's position: (x₁·cos − x₂·sin, x₂·cos + x₁·sin), 6 FLOPs per pair, 3 per rotated element (Su et al.,
-- RoFormer, arXiv:2104.09864, eq. 34). The kernel reads and writes the rotated channels in place, reads one row
-- of the cos/sin cache (rot_dim elements) and one position per token.
--   vLLM _C::rotary_embedding(positions[T], query[T, H_q·d], key[T, H_k·d]?, head_size, cos_sin_cache[P, rot_dim],
--   is_neox) (vllm/csrc/torch_bindings.cpp): rotated elements E = T·(H_q + H_k)·rot_dim with H = channels / d;
--   FLOPs = 3·E; bytes = 2·E·bytes(query) + T·rot_dim·bytes(cache) + T·bytes(positions).
-- The precision is fp32 (vector units).
--
-- @requires perf/args

-- _perf_rotary: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_rotary AS
WITH a AS (
    SELECT *, TRY_CAST(conc[4] AS BIGINT) AS hd, dims[5][-1] AS rot,
           dims[2][1] AS t, _perf_numel(dims[2][2:]) AS q_ch, coalesce(_perf_numel(dims[3][2:]), 0) AS k_ch
    FROM _perf_arg_sets
    WHERE op_name = '_C::rotary_embedding' AND len(dims) >= 5 AND numel[2] IS NOT NULL AND numel[5] IS NOT NULL
), e AS (SELECT *, t * (q_ch // hd + k_ch // hd) * rot AS n FROM a WHERE hd > 0)
SELECT op_name, d_txt, t_txt, c_txt, 'RoPE_fwd' AS family, 3.0 * n AS flops,
       (2.0 * n * bpe[2] + t * rot * bpe[5] + t * coalesce(bpe[1], 8)) AS bytes, 'fp32' AS precision,
       false AS matrix, format('T={} H_q={} H_k={} rot_dim={}', t, q_ch // hd, k_ch // hd, rot) AS shape
FROM e;
