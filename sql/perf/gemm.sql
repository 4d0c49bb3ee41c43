-- perf/gemm — FLOPs and bytes of the matrix multiplications (GEMM family), per argument set.
--
-- C[M,N] = A[M,K] B[K,N] costs 2·M·N·K FLOPs (one multiply and one add per term of each dot product) and, at
-- the least, reads A and B once and writes C once: M·K·bytes(A) + K·N·bytes(B) + M·N·bytes(C). A bias added
-- to C costs M·N FLOPs and reads its own elements. Batched forms multiply both by the batch size. Sources: the
-- definition of the product; TraceLens PerfModel/perf_model.py (GEMM.flops_func, GEMM.bytes_func) counts the
-- same terms, but takes the bias as N elements whatever its recorded shape. Element sizes are the recorded
-- types' (perf_dtypes); the output has the type of A (PyTorch gives mm/addmm/bmm/baddbmm/linear/matmul the
-- inputs' type), _scaled_mm's output type is not recorded: 2 bytes (bf16/fp16) for 1-byte inputs, else A's.
-- The compute precision (which peak applies) is A's type.
--
-- Signatures (aten/src/ATen/native/native_functions.yaml):
--   mm(self[M,K], mat2[K,N])                 addmm(self=bias, mat1[M,K], mat2[K,N], beta, alpha)
--   bmm(self[B,M,K], mat2[B,K,N])            baddbmm(self=bias, batch1[B,M,K], batch2[B,K,N], beta, alpha)
--   _scaled_mm(self[M,K], mat2[K,N], scale_a, scale_b, bias?, scale_result?, out_dtype, use_fast_accum)
--   linear(input[...,K], weight[N,K], bias[N]?)   matmul(self[...,M,K] or [K], other[...,K,N] or [K])
--
-- @requires perf/args

-- _perf_gemm: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_gemm AS
WITH a AS (
    SELECT *, CASE op_name WHEN 'aten::addmm' THEN 2 WHEN 'aten::baddbmm' THEN 2 ELSE 1 END AS ia,
              CASE op_name WHEN 'aten::addmm' THEN 1 WHEN 'aten::baddbmm' THEN 1
                           WHEN 'aten::_scaled_mm' THEN 5 WHEN 'aten::linear' THEN 3 END AS ibias
    FROM _perf_arg_sets
    WHERE op_name IN ('aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm', 'aten::_scaled_mm',
                      'aten::linear', 'aten::matmul')
), s AS (  -- batch, M, K, N from the shapes of A (index ia) and B (ia + 1)
    SELECT *, dims[ia] AS sa, dims[ia + 1] AS sb, bpe[ia] AS ba, bpe[ia + 1] AS bb, prec[ia] AS pa,
           CASE WHEN ibias IS NOT NULL AND ibias <= len(dims) THEN numel[ibias] END AS bias_numel,
           CASE WHEN ibias IS NOT NULL AND ibias <= len(dims) THEN bpe[ibias] END AS bias_bpe
    FROM a
), m AS (
    SELECT *,
           CASE WHEN op_name = 'aten::linear' THEN 1
                WHEN len(sa) = 3 AND len(sb) = 3 THEN sa[1]
                WHEN len(sa) >= 3 AND len(sb) = 2 THEN 1      -- matmul: leading dims of A folded into M
                WHEN len(sa) = 2 AND len(sb) = 2 THEN 1
                WHEN len(sa) >= 3 AND len(sb) >= 3 AND sa[1:-3] = sb[1:-3] THEN _perf_numel(sa[1:-3])
           END AS b,
           CASE WHEN op_name = 'aten::linear' OR (len(sa) >= 3 AND len(sb) = 2) THEN _perf_numel(sa[1:-2])
                ELSE sa[-2] END AS mm,
           sa[-1] AS kk,
           CASE WHEN op_name = 'aten::linear' THEN sb[1] ELSE sb[-1] END AS nn
    FROM s WHERE len(sa) >= 2 AND len(sb) >= 2
)
SELECT op_name, d_txt, t_txt, c_txt, 'GEMM' AS family,
       b * (2.0 * mm * nn * kk) + CASE WHEN bias_numel IS NOT NULL THEN b * mm * nn ELSE 0 END AS flops,
       b * (mm * kk * ba + kk * nn * bb
            + mm * nn * CASE WHEN op_name = 'aten::_scaled_mm' AND ba = 1 THEN 2 ELSE ba END)
         + coalesce(bias_numel * bias_bpe, 0) AS bytes,
       pa AS precision, true AS matrix,
       format('B={} M={} N={} K={}', b, mm, nn, kk) AS shape
FROM m WHERE b IS NOT NULL AND ba IS NOT NULL AND bb IS NOT NULL;
