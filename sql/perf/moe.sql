-- perf/moe — FLOPs and bytes of the grouped GEMMs of mixture-of-experts layers (each token multiplied by the
-- weights of the expert it was routed to).
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
