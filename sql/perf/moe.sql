-- perf/moe — FLOPs and bytes of mixture-of-experts layers: the grouped GEMMs (each token multiplied by the
-- weights of the expert it was routed to) and the fused MoE ops of vLLM and aiter (below _perf_moe).
--
-- aten::_grouped_mm(self, mat2, offs?, bias?, out_dtype?) (native_functions.yaml; torch._grouped_mm): the rows (or
-- the reduction dimension) of one operand are split among E groups at offs, each multiplied by its group's matrix:
--   self[T, K], mat2[E, K, N]   (tokens of all experts, one weight per expert)   FLOPs 2·T·K·N
--   self[E, M, K], mat2[E, K, N] (a batch per expert)                           FLOPs 2·E·M·K·N
--   self[M, K], mat2[K, N]      (the split is along K: weight gradients)        FLOPs 2·M·K·N
-- bytes: both operands read and the output written once (output of self's type). The counts are those of the
-- dense GEMM (perf/gemm) summed over the groups; unfused MoE layers run aten::mm/bmm per expert and are GEMM rows.
--
-- @requires perf/args

-- _perf_moe: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_moe AS
WITH a AS (
    SELECT *, dims[1] AS sa, dims[2] AS sb FROM _perf_arg_sets
    WHERE op_name = 'aten::_grouped_mm' AND numel[1] IS NOT NULL AND numel[2] IS NOT NULL
), m AS (
    SELECT *,
           CASE WHEN len(sa) = 2 AND len(sb) = 3 THEN 2.0 * sa[1] * sa[2] * sb[3]
                WHEN len(sa) = 3 AND len(sb) = 3 THEN 2.0 * sa[1] * sa[2] * sa[3] * sb[3]
                WHEN len(sa) = 2 AND len(sb) = 2 THEN 2.0 * sa[1] * sa[2] * sb[2] END AS f,
           CASE WHEN len(sa) = 2 AND len(sb) = 3 THEN sa[1] * sb[3]
                WHEN len(sa) = 3 AND len(sb) = 3 THEN sa[1] * sa[2] * sb[3]
                WHEN len(sa) = 2 AND len(sb) = 2 THEN CASE WHEN numel[3] IS NOT NULL THEN numel[3] ELSE 1 END
                     * sa[1] * sb[2] END AS n_out
    FROM a
)
SELECT op_name, d_txt, t_txt, c_txt, 'MoE_GroupedGEMM' AS family, f AS flops,
       (numel[1] * bpe[1] + numel[2] * bpe[2] + n_out * bpe[1])::DOUBLE AS bytes, prec[1] AS precision,
       true AS matrix, format('A={} B={}', sa, sb) AS shape
FROM m WHERE f IS NOT NULL;

-- Fused MoE ops (MoE_fused family): one call routes T tokens of hidden size K to topk of E experts and runs each
-- expert's up projection (N_up rows: 2·I for a gated activation such as SwiGLU, gate and up stacked) and down
-- projection (I → K). Signatures (1-based Input Dims positions):
--   vllm::rocm_aiter_fused_moe(hidden_states, w1, w2, topk_weights, topk_ids, expert_mask, activation_method,
--       quant_method, doweight_stage1, w1_scale, w2_scale, a1_scale, a2_scale)          (vllm rocm_aiter_fused_moe.py)
--   vllm::inplace_fused_experts, vllm::outplace_fused_experts(hidden_states, w1, w2, topk_weights, topk_ids,
--       activation, ..., w1_scale, w2_scale, ...)                   (vllm/model_executor/layers/fused_moe/fused_moe.py)
--   aiter::fused_moe_(hidden_states, w1, w2, topk_weight, topk_ids, expert_mask, activation, quant_type,
--       doweight_stage1, w1_scale, w2_scale, ...)                                          (aiter/fused_moe.py)
--       hidden_states [T, K], w1 [E, N_up, K], w2 [E, K, I], topk_weights [T, topk]
--   aiter::fmoe, fmoe_g1u1, fmoe_int8_g1u0, fmoe_g1u1_tkw1, fmoe_fp8_blockscale_g1u1(out, input, gate, down,
--       sorted_token_ids, sorted_weights, sorted_expert_ids, num_valid_ids, topk, input_scale, fc1_scale, ...)
--       (aiter/ops/moe_op.py; topk a scalar: Concrete Inputs)
--       out and input [T, K], gate [E, N_up, K], down [E, K, I]
-- Weights packed along their input dimension (two fp4 values per recorded element: c10::Float4_e2m1fn_x2 or
-- uint8) record K/p and I/p columns: the packing p = K / (w1's last dimension) restores I = p·(w2's last).
--   FLOPs  2·T·topk·K·(N_up + I)        (each routed token through one expert's up and down GEMMs)
--   bytes  hidden states read and output written (T·K each at their recorded types; no output argument: the
--          hidden states' type), plus the weights of the experts the step is expected to touch:
--          E_active = E·(1 − ((E − topk)/E)^T), the expected number of distinct experts when each token picks
--          topk of E uniformly (an expert is missed by a token with probability (E − topk)/E, independently),
--          at the weights' recorded storage (numel · element size: 1 byte per fp8 element, 0.5 per fp4 value),
--          plus every other recorded tensor (routing weights and ids, scales, biases) once, at the active
--          fraction E_active/E when its leading dimension is E (per-expert scales).
-- The count of FLOPs is TraceLens's (moe_perf_model_extensions.py, FusedMoE.flops_func) without its
-- T·K·(2·topk − 1) for the weighted sum of the experts' outputs; E_active is the same expectation
-- (FusedMoE.bytes_func). Precision: the hidden states' type. Ops whose arguments do not include the expert
-- weights (vllm::moe_forward: hidden states and router logits) are not modelled.

-- _perf_moe_fused_ops: one row per fused MoE op the model reads.
--   op_name                the cpu_op name
--   ix, iw1, iw2           positions of the hidden states, the up (w1, gate) and the down (w2) weights
--   itk                    position of topk_weights [T, topk] (NULL: topk is a scalar, at ctopk)
--   ctopk                  position of topk in Concrete Inputs
--   iout                   position of the output (NULL: a new tensor of the hidden states' type)
CREATE OR REPLACE VIEW _perf_moe_fused_ops AS
SELECT * FROM (VALUES
    ('vllm::rocm_aiter_fused_moe', 1, 2, 3, 4, NULL, NULL),
    ('vllm::inplace_fused_experts', 1, 2, 3, 4, NULL, NULL),
    ('vllm::outplace_fused_experts', 1, 2, 3, 4, NULL, NULL),
    ('aiter::fused_moe_', 1, 2, 3, 4, NULL, NULL),
    ('aiter::fmoe', 2, 3, 4, NULL, 9, 1),
    ('aiter::fmoe_g1u1', 2, 3, 4, NULL, 9, 1),
    ('aiter::fmoe_int8_g1u0', 2, 3, 4, NULL, 9, 1),
    ('aiter::fmoe_g1u1_tkw1', 2, 3, 4, NULL, 9, 1),
    ('aiter::fmoe_fp8_blockscale_g1u1', 2, 3, 4, NULL, 9, 1)
) AS t(op_name, ix, iw1, iw2, itk, ctopk, iout);

-- _perf_moe_fused: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_moe_fused AS
WITH a AS (
    SELECT s.*, p.ix, p.iw1, p.iw2, p.iout, s.dims[p.ix] AS x, s.dims[p.iw1] AS w1, s.dims[p.iw2] AS w2,
           CASE WHEN p.itk IS NOT NULL THEN s.dims[p.itk][2] ELSE TRY_CAST(s.conc[p.ctopk] AS BIGINT) END AS topk
    FROM _perf_arg_sets s JOIN _perf_moe_fused_ops p USING (op_name)
), m AS (
    SELECT *, x[1] AS t, x[2] AS k, w1[1] AS e, w1[2] AS n_up, w2[3] * (x[2] // w1[3]) AS i_dim,
           w1[1] * (1 - pow((w1[1] - topk) / w1[1], x[1])) AS e_active
    FROM a
    WHERE len(x) = 2 AND len(w1) = 3 AND len(w2) = 3 AND numel[ix] IS NOT NULL AND numel[iw1] IS NOT NULL
      AND numel[iw2] IS NOT NULL AND w1[1] = w2[1] AND w1[3] > 0 AND x[2] % w1[3] = 0 AND w2[2] = x[2]
      AND topk BETWEEN 1 AND w1[1]
), b AS (
    SELECT *,
           list_sum(list_transform(range(1, len(dims) + 1), lambda j:
               CASE WHEN j IN (ix, iw1, iw2) OR j = iout OR numel[j] IS NULL THEN 0
                    WHEN len(dims[j]) > 0 AND dims[j][1] = e THEN numel[j] * bpe[j] * e_active / e
                    ELSE numel[j] * bpe[j] END)) AS other_bytes
    FROM m
)
SELECT op_name, d_txt, t_txt, c_txt, 'MoE_fused' AS family, 2.0 * t * topk * k * (n_up + i_dim) AS flops,
       numel[ix] * bpe[ix] + t * k * coalesce(bpe[iout], bpe[ix])
         + e_active / e * (numel[iw1] * bpe[iw1] + numel[iw2] * bpe[iw2]) + other_bytes AS bytes,
       prec[ix] AS precision, true AS matrix,
       format('T={} K={} E={} topk={} N_up={} I={} E_active={:.2f}', t, k, e, topk, n_up, i_dim, e_active) AS shape
FROM b;
