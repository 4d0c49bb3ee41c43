-- perf/norm — FLOPs and bytes of layer, RMS, batch and group normalization, forward and backward.
--
-- For an input of numel elements in R groups (R = numel / Π normalized_shape for layer and RMS norm, the channels
-- for batch norm, N·groups for group norm) with C elements of γ and β (Π normalized_shape, or the channels):
--   layer norm forward   mean (1 add per element), variance (subtract, square, add: 3), normalise and apply
--                        γ, β (subtract, multiply by 1/σ, multiply by γ, add β: 4): 8·numel FLOPs (+ R
--                        reciprocal square roots); bytes: read x, write y, read γ and β (C each), write mean and
--                        1/σ (R each, fp32).
--   RMS norm forward     Σ x² (2 per element), scale by 1/rms and by γ (2 per element): 4·numel (+ 2·R);
--                        bytes: read x, write y, read γ (C). (TraceLens RMSNorm.flops: R·(2C + 2) + 2·numel.)
--   batch norm forward   training: statistics 3·numel; every mode: normalise and affine 2·numel (TraceLens
--                        Normalization.flops_func counts the same terms); bytes: read x, write y, read γ, β
--                        (one per channel, dimension 1).
--   group norm forward   as layer norm over groups.
--   backward (native_layer_norm_backward, native_batch_norm_backward, native_group_norm_backward,
--   _fused_rms_norm_backward): dx = (1/σ)(γ dy − mean(γ dy) − x̂ · mean(γ dy · x̂)): 8·numel FLOPs, and
--   dγ = Σ dy·x̂, dβ = Σ dy: 3·numel; bytes: read dy and x, write dx, read γ, write dγ and dβ.
-- Sources: Ba et al., Layer Normalization (arXiv:1607.06450); Zhang & Sennrich, RMSNorm (arXiv:1910.07467);
-- Ioffe & Szegedy, Batch Normalization (arXiv:1502.03167) for the formulas; the argument positions are the
-- ops' signatures in native_functions.yaml:
--   native_layer_norm(input, normalized_shape, weight?, bias?, eps)
--   native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight?, bias?, output_mask)
--   rms_norm / _fused_rms_norm(input, normalized_shape, weight?, eps)
--   native_batch_norm / _native_batch_norm_legit(input, weight?, bias?, running_mean?, running_var?,
--                                                 training, momentum, eps)
--   cudnn_batch_norm / miopen_batch_norm (same first six)
--   native_group_norm(input, weight?, bias?, N, C, HxW, group, eps)
--   native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW, group, output_mask)
--   native_batch_norm_backward(grad_out, input, weight?, running_mean?, running_var?, save_mean?, save_invstd?,
--                              train, eps, output_mask);  miopen/cudnn_batch_norm_backward(input, grad_out, weight, ...)
--   vLLM _C::rms_norm(out, input, weight, eps), _C::fused_add_rms_norm(input, residual, weight, eps)
--   (vllm/csrc/torch_bindings.cpp): the fused form also adds the residual (numel FLOPs) and writes it back:
--   5·numel + 2·R FLOPs, bytes: read input and residual, write both, read γ.
-- Statistics are fp32 (4 bytes). The compute precision is fp32 (vector units, see perf/elementwise).
--
-- @requires perf/args

-- _perf_norm: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_norm AS
WITH k AS (
    SELECT s.*, regexp_replace(s.op_name, '^aten::', '') AS base,
           CASE WHEN len(s.conc) >= 2 AND s.conc[2] LIKE '[%' THEN
                _perf_numel(list_transform(regexp_extract_all(s.conc[2], '\d+'), lambda v: v::BIGINT)) END AS c_ln,
           CASE WHEN len(s.conc) >= 3 AND s.conc[3] LIKE '[%' THEN
                _perf_numel(list_transform(regexp_extract_all(s.conc[3], '\d+'), lambda v: v::BIGINT)) END AS c_lnb
    FROM _perf_arg_sets s
), n AS (
    -- kind, numel, statistics (r), γ/β elements (cw), element size of x, of γ (0 when absent), β present,
    -- backward, training (statistics computed)
    SELECT op_name, d_txt, t_txt, c_txt, 'LayerNorm' AS kind, numel[1] AS ne, numel[1] // nullif(c_ln, 0) AS r,
           c_ln AS cw, bpe[1] AS bx, coalesce(bpe[3], 0) AS bw, numel[4] IS NOT NULL AS has_b, false AS bwd,
           true AS training
    FROM k WHERE base IN ('native_layer_norm', 'layer_norm')
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'LayerNorm', numel[2], numel[2] // nullif(c_lnb, 0), c_lnb, bpe[2],
           coalesce(bpe[6], 0), numel[7] IS NOT NULL, true, true
    FROM k WHERE base = 'native_layer_norm_backward'
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'RMSNorm', numel[1], numel[1] // nullif(c_ln, 0), c_ln, bpe[1],
           coalesce(bpe[3], 0), false, false, true
    FROM k WHERE base IN ('rms_norm', '_fused_rms_norm')
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'RMSNorm', numel[2], numel[2] // nullif(c_lnb, 0), c_lnb, bpe[2],
           coalesce(bpe[5], 0), false, true, true
    FROM k WHERE base = '_fused_rms_norm_backward'
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'BatchNorm', numel[1], dims[1][2], dims[1][2], bpe[1],
           coalesce(bpe[2], 0), numel[3] IS NOT NULL, false,
           base <> '_native_batch_norm_legit_no_training' AND coalesce(conc[6], '') <> 'False'
    FROM k WHERE base IN ('native_batch_norm', '_native_batch_norm_legit', '_native_batch_norm_legit_no_training',
                          'cudnn_batch_norm', 'miopen_batch_norm') AND len(dims[1]) >= 2
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'GroupNorm', numel[1],
           TRY_CAST(conc[4] AS BIGINT) * TRY_CAST(conc[7] AS BIGINT), TRY_CAST(conc[5] AS BIGINT), bpe[1],
           coalesce(bpe[2], 0), numel[3] IS NOT NULL, false, true
    FROM k WHERE base = 'native_group_norm'
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'GroupNorm', numel[2],
           TRY_CAST(conc[6] AS BIGINT) * TRY_CAST(conc[9] AS BIGINT), TRY_CAST(conc[7] AS BIGINT), bpe[2],
           coalesce(bpe[5], 0), true, true, true
    FROM k WHERE base = 'native_group_norm_backward'
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'BatchNorm', numel[2], dims[2][2], dims[2][2], bpe[2],
           coalesce(bpe[3], 0), true, true, true
    FROM k WHERE base = 'native_batch_norm_backward' AND len(dims[2]) >= 2
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'BatchNorm', numel[1], dims[1][2], dims[1][2], bpe[1],
           coalesce(bpe[3], 0), true, true, true
    FROM k WHERE base IN ('miopen_batch_norm_backward', 'cudnn_batch_norm_backward') AND len(dims[1]) >= 2
    UNION ALL
    -- vLLM _C::rms_norm(out, input, weight, eps) and _C::fused_add_rms_norm(input, residual, weight, eps): the
    -- fused form first adds the residual (numel FLOPs) and writes it back (two more tensors moved)
    SELECT op_name, d_txt, t_txt, c_txt, 'RMSNorm', numel[2], numel[2] // nullif(dims[2][-1], 0), dims[2][-1], bpe[2],
           coalesce(bpe[3], 0), false, false, true
    FROM k WHERE op_name = '_C::rms_norm' AND numel[2] IS NOT NULL
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'RMSNorm_add', numel[1], numel[1] // nullif(dims[1][-1], 0), dims[1][-1],
           bpe[1], coalesce(bpe[3], 0), false, false, true
    FROM k WHERE op_name = '_C::fused_add_rms_norm' AND numel[1] IS NOT NULL
), f AS (
    SELECT * FROM n WHERE ne IS NOT NULL AND r IS NOT NULL AND cw IS NOT NULL AND bx IS NOT NULL
)
SELECT op_name, d_txt, t_txt, c_txt,
       replace(kind, '_add', '') || CASE WHEN bwd THEN '_bwd' ELSE '_fwd' END AS family,
       (CASE WHEN bwd THEN 11.0 * ne WHEN kind = 'RMSNorm' THEN 4.0 * ne + 2 * r
             WHEN kind = 'RMSNorm_add' THEN 5.0 * ne + 2 * r
             WHEN kind = 'BatchNorm' THEN (CASE WHEN training THEN 5.0 ELSE 2.0 END) * ne
             ELSE 8.0 * ne + r END) AS flops,
       (CASE WHEN bwd THEN 3.0 * ne * bx + cw * bw * (CASE WHEN has_b THEN 3 ELSE 2 END) + 8 * r
             WHEN kind = 'RMSNorm_add' THEN 4.0 * ne * bx + cw * bw
             ELSE 2.0 * ne * bx + cw * bw * (CASE WHEN has_b THEN 2 ELSE 1 END)
                  + CASE WHEN kind IN ('LayerNorm', 'GroupNorm') THEN 8 * r ELSE 0 END END) AS bytes,
       'fp32' AS precision, false AS matrix, format('numel={} groups={} C={}', ne, r, cw) AS shape
FROM f;
