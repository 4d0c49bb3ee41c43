-- perf/gemm — FLOPs and bytes of the matrix multiplications (GEMM family), per argument set.
--
-- C[M,N] = A[M,K] B[K,N] costs 2·M·N·K FLOPs (one multiply and one add per term of each dot product) and, at
-- the least, reads A and B once and writes C once: M·K·bytes(A) + K·N·bytes(B) + M·N·bytes(C). A bias added
-- to C costs M·N FLOPs and reads its own elements. Batched forms multiply both by the batch size. Sources: the
-- definition of the product; TraceLens PerfModel/perf_model.py (GEMM.flops_func, GEMM.bytes_func) counts the
-- same terms, but takes the bias as N elements whatever its recorded shape. Element sizes are the recorded
-- types' (perf_dtypes); the output has the type of A (PyTorch gives mm/addmm/bmm/baddbmm/linear/matmul the
-- inputs' type); _scaled_mm's output has the type of its out_dtype argument (a c10::ScalarType number in
-- Concrete Inputs, _perf_scalar_type_bytes), and when that is not recorded 2 bytes for 1-byte inputs (the
-- bf16/fp16 output of an fp8 GEMM, as TraceLens aten_scaled_mm.bytes assumes), else A's.
-- The compute precision (which peak applies) is A's type.
--
-- Vendor GEMM ops whose argument layout is known:
--   primus_turbo(_cpp_extension)::hipblaslt_gemm_fp8(A, scaleA_inv, B, scaleB_inv, out_dtype, transA, transB,
--   transC, granularity) (Primus-Turbo's hipBLASLt binding; layout as TraceLens hipblaslt_gemm_fp8 reads it):
--   with transC the operands swap and their transposes flip; M = A[1] if transA else A[0], K the other,
--   N = B[0] if transB else B[1]; the output has out_dtype's size.
--
-- Signatures (aten/src/ATen/native/native_functions.yaml):
--   mm(self[M,K], mat2[K,N])                 addmm(self=bias, mat1[M,K], mat2[K,N], beta, alpha)
--   bmm(self[B,M,K], mat2[B,K,N])            baddbmm(self=bias, batch1[B,M,K], batch2[B,K,N], beta, alpha)
--   _scaled_mm(self[M,K], mat2[K,N], scale_a, scale_b, bias?, scale_result?, out_dtype, use_fast_accum)
--   linear(input[...,K], weight[N,K], bias[N]?)   matmul(self[...,M,K] or [K], other[...,K,N] or [K])
--
-- @requires perf/args perf/dtypes

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
            + mm * nn * CASE WHEN op_name <> 'aten::_scaled_mm' THEN ba
                             ELSE coalesce(_perf_scalar_type_bytes(conc[7]), CASE WHEN ba = 1 THEN 2 ELSE ba END) END)
         + coalesce(bias_numel * bias_bpe, 0) AS bytes,
       pa AS precision, true AS matrix,
       format('B={} M={} N={} K={}', b, mm, nn, kk) AS shape
FROM m WHERE b IS NOT NULL AND ba IS NOT NULL AND bb IS NOT NULL
UNION ALL
SELECT op_name, d_txt, t_txt, c_txt, 'GEMM', 2.0 * mm * nn * kk,
       (mm * kk * ba + kk * nn * bb + mm * nn * coalesce(_perf_scalar_type_bytes(conc[5]), 2))::DOUBLE,
       pa, true, format('B=1 M={} N={} K={}', mm, nn, kk)
FROM (
    SELECT *, CASE WHEN ta THEN sa[2] ELSE sa[1] END AS mm, CASE WHEN ta THEN sa[1] ELSE sa[2] END AS kk,
           CASE WHEN tb THEN sb[1] ELSE sb[2] END AS nn
    FROM (
        SELECT *, CASE WHEN tc THEN d3 ELSE d1 END AS sa, CASE WHEN tc THEN d1 ELSE d3 END AS sb,
               CASE WHEN tc THEN NOT tb0 ELSE ta0 END AS ta, CASE WHEN tc THEN NOT ta0 ELSE tb0 END AS tb,
               CASE WHEN tc THEN bpe[3] ELSE bpe[1] END AS ba, CASE WHEN tc THEN bpe[1] ELSE bpe[3] END AS bb,
               prec[1] AS pa
        FROM (SELECT *, dims[1] AS d1, dims[3] AS d3, coalesce(conc[6], '') = 'True' AS ta0,
                     coalesce(conc[7], '') = 'True' AS tb0, coalesce(conc[8], '') = 'True' AS tc
              FROM _perf_arg_sets
              WHERE op_name IN ('primus_turbo_cpp_extension::hipblaslt_gemm_fp8', 'primus_turbo::hipblaslt_gemm_fp8')
                    AND len(dims) >= 3 AND len(dims[1]) = 2 AND len(dims[3]) = 2)))
WHERE ba IS NOT NULL AND bb IS NOT NULL;
