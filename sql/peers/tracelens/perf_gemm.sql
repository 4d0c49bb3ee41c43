-- peers/tracelens/perf_gemm — TraceLens (0.1.0) GEMM perf model and its sheet GEMM.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (classes GEMM, aten_mm, aten_addmm, aten_scaled_mm, aten_bmm,
-- aten_baddbmm) and TraceLens/PerfModel/kernel_name_parser.py (gemm_name_parser); the code is ours.
--   operands   mm, _scaled_mm: A = Input Dims[0], B = Input Dims[1]; addmm, baddbmm: A = [1], B = [2] (the
--              bias C is [0]). M = A[0], K = A[1], N = B[1]; bmm, baddbmm: (batch, M, K) = A (exactly three
--              dims) and N = B[2] (exactly three dims). dtype_A_B = the two dtypes of A and B (Input type
--              at the same positions); stride_A, stride_B = their Input Strides as tuples (None without
--              Input Strides). bias: addmm and baddbmm yes, mm and bmm no, _scaled_mm when it has three
--              operands.
--   transpose  from the first GPU kernel (by start) whose name parses: a hipBLASLt/Tensile name
--              (C???_A???_B??? on one line) gives (True if '_Alik_' / False if '_Ailk_' / None,
--              True if '_Bjlk_' / False if '_Bljk_' / None); a name starting 'nvjet' gives whether the
--              first and second letters of its last '_'-separated part are 'T'. No parsed name, no column.
--   FLOPs      2·M·N·K (+ M·N with bias), × batch for bmm and baddbmm.
--   bytes      (M·K + K·N + M·N (+ N with bias)) · bpe, bpe of A's dtype (the output and the bias assumed
--              in it), × batch for bmm/baddbmm; NULL for an unknown dtype. _scaled_mm: both dtypes must
--              be known (else TraceLens drops the instance); output 2 bytes for 1-byte inputs, the input's
--              size for 2 and 4, unknown otherwise.
--   params     the model's dict order: M, N, K, bias, stride_A, stride_B, dtype_A_B, then B (= 1) appended
--              when the model has none — bmm and baddbmm put B first — then transpose.
--   Compute Spec  'matrix_' + the precision of A's dtype (_tl_precision).
-- An instance whose args do not fit (missing Input Dims or Input type, too few operands, wrong rank, a
-- stride that is not a list, a short nvjet suffix) raises in TraceLens and is left out.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_gemm_kernel(kernels): the name of the first GPU kernel (by start) whose name TraceLens's GEMM name parser
-- reads (a hipBLASLt/Tensile name on one line, or an nvjet name); NULL when none.
CREATE OR REPLACE MACRO _tl_gemm_kernel(kernels) AS
    list_filter(kernels, lambda k: (NOT contains(k.name, chr(10)) AND regexp_matches(k.name, 'C[a-z]{3}_A[a-z]{3}_B[a-z]{3}'))
                                   OR starts_with(k.name, 'nvjet'))[1].name;

-- _tl_gemm_transpose(tk): the transpose parameter TraceLens parses from that kernel name (see the top of this
-- file), as Python prints the tuple; NULL without a name.
CREATE OR REPLACE MACRO _tl_gemm_transpose(tk) AS
    CASE WHEN tk IS NULL THEN NULL
         WHEN regexp_matches(tk, 'C[a-z]{3}_A[a-z]{3}_B[a-z]{3}')
         THEN '(' || _tl_py_bool(CASE WHEN contains(tk, '_Ailk_') THEN false WHEN contains(tk, '_Alik_') THEN true END)
              || ', ' || _tl_py_bool(CASE WHEN contains(tk, '_Bljk_') THEN false WHEN contains(tk, '_Bjlk_') THEN true END)
              || ')'
         ELSE '(' || _tl_py_bool(substr(string_split(tk, '_')[-1], 1, 1) = 'T') || ', '
              || _tl_py_bool(substr(string_split(tk, '_')[-1], 2, 1) = 'T') || ')' END;

-- _tl_gemm_kernel_ok(tk): false when TraceLens's parser raises on that kernel name (an nvjet name whose last
-- '_'-separated part is shorter than two characters).
CREATE OR REPLACE MACRO _tl_gemm_kernel_ok(tk) AS
    tk IS NULL OR NOT starts_with(tk, 'nvjet') OR regexp_matches(tk, 'C[a-z]{3}_A[a-z]{3}_B[a-z]{3}')
    OR length(string_split(tk, '_')[-1]) >= 2;

-- _tl_perf_gemm_aten_of(ev): one row per aten GEMM instance of ev (_tl_perf_events or a view with its columns)
-- TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE MACRO _tl_perf_gemm_aten_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, input_types AS ty, input_strides AS st, kernels,
           CASE WHEN model IN ('aten_addmm', 'aten_baddbmm') THEN 1 ELSE 0 END AS o,
           model IN ('aten_bmm', 'aten_baddbmm') AS batched
    FROM query_table(ev) WHERE sheet = 'GEMM' AND model IN ('aten_mm', 'aten_addmm', 'aten_scaled_mm', 'aten_bmm', 'aten_baddbmm')
), a AS (
    SELECT *, json_extract(d, '$[' || o || ']') AS sa_, json_extract(d, '$[' || (o + 1) || ']') AS sb_,
           list_slice(json_extract(ty, '$[*]'), o + 1, o + 2) AS dt,
           json_extract(st, '$[' || o || ']') AS stride_a, json_extract(st, '$[' || (o + 1) || ']') AS stride_b,
           _tl_gemm_kernel(kernels) AS tk
    FROM e
), v AS (   -- shapes checked as TraceLens's unpacking needs them
    SELECT *,
           d IS NOT NULL AND ty IS NOT NULL
           AND json_type(sa_) = 'ARRAY' AND json_type(sb_) = 'ARRAY'
           AND CASE WHEN batched THEN json_array_length(sa_) = 3 AND json_array_length(sb_) = 3
                    ELSE json_array_length(sa_) >= 2 AND json_array_length(sb_) >= 2 END
           AND (st IS NULL OR (json_type(stride_a) = 'ARRAY' AND json_type(stride_b) = 'ARRAY'))
           AND len(dt) >= 1
           AND (model <> 'aten_scaled_mm' OR (len(dt) = 2 AND _tl_bpe(dt[1] ->> '$') IS NOT NULL
                                                AND _tl_bpe(dt[2] ->> '$') IS NOT NULL))
           AND _tl_gemm_kernel_ok(tk) AS ok
    FROM a
), s AS (
    SELECT *,
           CASE WHEN batched THEN json_extract(sa_, '$[0]')::BIGINT ELSE 1 END AS nb,
           json_extract(sa_, CASE WHEN batched THEN '$[1]' ELSE '$[0]' END)::BIGINT AS m,
           json_extract(sa_, CASE WHEN batched THEN '$[2]' ELSE '$[1]' END)::BIGINT AS k,
           json_extract(sb_, CASE WHEN batched THEN '$[2]' ELSE '$[1]' END)::BIGINT AS n,
           CASE model WHEN 'aten_scaled_mm' THEN json_array_length(d) = 3
                      ELSE model IN ('aten_addmm', 'aten_baddbmm') END AS bias,
           _tl_bpe(dt[1] ->> '$') AS bpe, _tl_gemm_transpose(tk) AS transpose
    FROM v WHERE ok
)
SELECT trace_id, event_id,
       list_concat(
           CASE WHEN batched THEN [{'k': 'B', 'v': nb::VARCHAR, 't': 'i'}] ELSE [] END,
           [{'k': 'M', 'v': m::VARCHAR, 't': 'i'}, {'k': 'N', 'v': n::VARCHAR, 't': 'i'}, {'k': 'K', 'v': k::VARCHAR, 't': 'i'},
            {'k': 'bias', 'v': _tl_py_bool(bias), 't': NULL},
            {'k': 'stride_A', 'v': CASE WHEN st IS NOT NULL THEN _py_tuple1(stride_a) END, 't': NULL},
            {'k': 'stride_B', 'v': CASE WHEN st IS NOT NULL THEN _py_tuple1(stride_b) END, 't': NULL},
            {'k': 'dtype_A_B', 'v': _py_seq(list_transform(dt, lambda x: _py_atom(x)), len(dt)), 't': NULL}],
           CASE WHEN batched THEN [] ELSE [{'k': 'B', 'v': '1', 't': 'i'}] END,
           CASE WHEN transpose IS NOT NULL THEN [{'k': 'transpose', 'v': transpose, 't': NULL}] ELSE [] END) AS params,
       nb::HUGEINT * (2 * m::HUGEINT * n * k + CASE WHEN bias THEN m::HUGEINT * n ELSE 0 END) AS flops,
       CASE WHEN model = 'aten_scaled_mm'
            THEN CASE WHEN bpe IN (1, 2, 4)
                      THEN m::HUGEINT * k * bpe + k::HUGEINT * n * bpe + m::HUGEINT * n * CASE WHEN bpe = 1 THEN 2 ELSE bpe END
                           + CASE WHEN bias THEN n::HUGEINT * bpe ELSE 0 END END
            ELSE nb::HUGEINT * (m::HUGEINT * k * bpe + k::HUGEINT * n * bpe + m::HUGEINT * n * bpe
                                + CASE WHEN bias THEN n::HUGEINT * bpe ELSE 0 END) END AS bytes,
       'matrix_' || _tl_precision(dt[1] ->> '$') AS compute_spec
FROM s;

-- _tl_gemm_flag(s): a Concrete Input read as a bool the way TraceLens's parse_bool reads a string
-- (TraceLens/PerfModel/utils.py): 'true'/'1' true, 'false'/'0'/'' false, any other text true; NULL is false.
CREATE OR REPLACE MACRO _tl_gemm_flag(s) AS coalesce(lower(trim(s)) NOT IN ('false', '0', ''), false);

-- _tl_perf_gemm_ext_of(ev): one row per instance of ev (a view with _tl_perf_events's columns) of the GEMM models
-- beyond aten's that TraceLens keeps, in _tl_perf_summary's input form. Formulas per TraceLens PerfModel
-- (perf_model.py: tex_ts_te_gemm_ts, vllm_gemm_with_dynamic_quant, hipblaslt_gemm_fp8, hipblaslt_gemm_fp4,
-- aiter_gemm_a4w4; extensions/perf_model_extensions.py: gemm_a8w8_blockscale, vllm_rocm_unquantized_gemm,
-- gemm_a16w16_atomic_, gemm_a16w16, gemm_a16w16_asm, gemm_afp4wfp4, batched_gemm_a16wfp4, batched_gemm_a8w8).
-- With d = Input Dims, t = Input type, c = Concrete Inputs (0-based), every model counts FLOPs 2·M·N·K (+ M·N
-- with bias; × B for the batched ones) and, unless said otherwise, bytes M·K·bpe(A) + K·N·bpe(B) +
-- M·N·bpe(out) (+ N·bpe(bias) with bias; × B batched; NULL when a bpe is unknown):
--   gemm_a8w8_blockscale  M, K = d[0], N = d[1][0]; dtype_A_B (t[0], t[1], 'c10::bfloat16'; '' for a missing
--                         type), out bf16. With more than three operands the scales d[2], d[3] add
--                         quant_scheme 'a8w8_blockscale', quant_granularity 'per_block', block_k = ceil(K /
--                         d[2][-1]), block_n = ceil(N / d[3][0]) (None for an empty or zero scale), scale_dtype
--                         t[2] ('float32' without it); then output_shape (M, N), output_dtype 'c10::bfloat16'.
--   vllm_rocm_unquantized_gemm  M, K = d[0], N = d[1][0]; bias when d[2] is a non-empty shape; dtype_A_B (t[0],
--                         t[1], t[2] or ''); out and bias in t[2] with bias, else in t[1].
--   gemm_a16w16_atomic_   dtype_A_B (t[0], t[1], t[3] or 'c10::bfloat16'), out in the third.
--   gemm_a16w16           bias as vllm's; dtype_A_B (t[0], t[1], t[0]).
--   gemm_a16w16_asm       out = t[2] when its size is known, else t[0].
--   gemm_afp4wfp4         K = 2·d[0][1] (packed FP4); A and B 0.5 byte per element, out bf16; precision fp4.
--   batched_gemm_a16wfp4  B, M, K = d[0], N = d[1][1]; B's 0.5 byte per element; out bf16; precision fp4.
--   batched_gemm_a8w8     B, N = d[1][0:2], K = d[0][2], M = d[0][1] when d[0][0] = B else d[0][0]; out bf16;
--                         precision of t[1].
--   tex_ts_te_gemm_ts     A = d[0], B = d[5]; transa = c[4] == '1', transb = c[9] == '1'; M, K = A (A reversed
--                         unless transa); N = B[1] if transb else B[0]; bias when c[14] is not ''; dtype_A_B
--                         (t[0], t[5], t[10], t[18]) for A, B, out, bias; strides of d[0], d[5].
--   vllm_gemm_with_dynamic_quant  A, B = the first two 2-D shapes of d; dtype_A_B = t[0:2]; every operand in
--                         bpe(t[0]); strides of d[0], d[1].
--   hipblaslt_gemm_fp8    A = d[0], B = d[2], transA/B/C = parse_bool(c[5], c[6], c[7]); transC swaps A and B
--                         and gives (not transB, not transA); M, K = A (reversed if transA), N = B[0] if transB
--                         else B[1]; dtype_A_B (t[0], t[2]), dtype_scaleA/B t[1], t[3]; strides of d[0], d[2]
--                         (None when short); both sizes must be known (else dropped); out 2 bytes for 1-byte A.
--   hipblaslt_gemm_fp4    as fp8 with K = 2 × the packed K; bytes M·K/2·bpe(A) + N·K/2·bpe(B) + (M + N) ·
--                         ceil(K/32) scales · bpe(scale, 1 when unknown) + M·N·2.
--   aiter_gemm_a4w4       A = d[0], B = d[1] (transB); M = A[0], K = 2·A[1], N = B[0]; dtype_A_B (t[0], t[1]),
--                         scales t[2], t[3]; strides of d[0], d[1]; bytes as hipblaslt_gemm_fp4.
--   tev2_pseudo_gemm      TransformerEngine v2's pseudo GEMM ops (_Linear_yfwd_mm, _LinearBackward_xgrad_mm,
--                         _LinearBackward_wgrad_mm and the _LayerNormLinear ones), which TraceLens's Megatron
--                         extension injects per GEMM kernel of a _Linear / _LayerNormLinear call with Input Dims
--                         (X, Wᵀ), (dY, W), (dYᵀ, X) and Input Strides []: A = d[0], B = d[1], M = A[0], K = A[1],
--                         N = B[1]; no bias; dtype_A_B = t[0:2], the two must be equal (else dropped); strides of
--                         d[0], d[1] (None without Input Strides; an empty Input Strides, as the extension writes
--                         it, drops the instance); A and B in bpe(t[0]), the output always 2 bytes an element.
-- Params in each model's dict order (t 's' marks a text, quoted in the unified table's perf_params); B (= 1) is appended when the model has none, then transpose (peers/
-- tracelens/perf_gemm). Compute Spec 'matrix_' + the precision of dtype_A_B[0] unless said otherwise. An
-- instance whose args do not fit (an operand missing, a shape too short) raises in TraceLens and is left out.
CREATE OR REPLACE MACRO _tl_perf_gemm_ext_of(ev) AS TABLE
WITH e AS MATERIALIZED (
    SELECT trace_id, event_id, model, input_dims AS d, coalesce(json_extract_string(input_types, '$[*]'), []) AS ty,
           input_types IS NOT NULL AS has_ty, json_extract_string(concrete_inputs, '$[*]') AS ci, input_strides AS st,
           coalesce(json_array_length(input_dims), 0) AS nd,
           _tl_shape(json_extract(input_dims, '$[0]')) AS s0, _tl_shape(json_extract(input_dims, '$[1]')) AS s1,
           _tl_shape(json_extract(input_dims, '$[2]')) AS s2, _tl_shape(json_extract(input_dims, '$[3]')) AS s3,
           _tl_gemm_kernel(kernels) AS tk
    FROM query_table(ev)
    WHERE sheet = 'GEMM' AND model IN ('gemm_a8w8_blockscale', 'vllm_rocm_unquantized_gemm', 'gemm_a16w16_atomic_',
                                       'gemm_a16w16', 'gemm_a16w16_asm', 'gemm_afp4wfp4', 'batched_gemm_a16wfp4',
                                       'batched_gemm_a8w8', 'tex_ts_te_gemm_ts', 'vllm_gemm_with_dynamic_quant',
                                       'hipblaslt_gemm_fp8', 'hipblaslt_gemm_fp4', 'aiter_gemm_a4w4',
                                       'tev2_pseudo_gemm')
      AND _tl_gemm_kernel_ok(_tl_gemm_kernel(kernels))
), aiter AS (   -- aiter's and vLLM's (x[M, K], w[N, K], ...) GEMMs
    SELECT *, s0[1] AS m, s1[1] AS n,
           CASE WHEN model = 'gemm_afp4wfp4' THEN 2 * s0[2] ELSE s0[2] END AS k,
           model IN ('vllm_rocm_unquantized_gemm', 'gemm_a16w16') AND coalesce(len(s2) > 0, false) AS bias,
           CASE model WHEN 'gemm_a8w8_blockscale' THEN [coalesce(ty[1], ''), coalesce(ty[2], ''), 'c10::bfloat16']
                      WHEN 'vllm_rocm_unquantized_gemm' THEN [ty[1], ty[2], coalesce(ty[3], '')]
                      WHEN 'gemm_a16w16_atomic_' THEN [ty[1], ty[2], coalesce(ty[4], 'c10::bfloat16')]
                      WHEN 'gemm_a16w16' THEN [ty[1], ty[2], ty[1]]
                      WHEN 'gemm_a16w16_asm' THEN [ty[1], ty[2], CASE WHEN _tl_bpe(ty[3]) IS NOT NULL THEN ty[3] ELSE ty[1] END]
                      ELSE [ty[1], ty[2], 'c10::bfloat16'] END AS dt
    FROM e
    WHERE model IN ('gemm_a8w8_blockscale', 'vllm_rocm_unquantized_gemm', 'gemm_a16w16_atomic_', 'gemm_a16w16',
                    'gemm_a16w16_asm', 'gemm_afp4wfp4')
      AND len(s0) >= 2 AND len(s1) >= 1 AND (model = 'gemm_a8w8_blockscale' OR (has_ty AND len(ty) >= 2))
), aiter_rows AS (
    SELECT trace_id, event_id, tk, model <> 'vllm_rocm_unquantized_gemm' AS b_in,
           list_concat(
               CASE WHEN model <> 'vllm_rocm_unquantized_gemm' THEN [{'k': 'B', 'v': '1', 't': 'i'}] ELSE [] END,
               [{'k': 'M', 'v': m::VARCHAR, 't': 'i'}, {'k': 'N', 'v': n::VARCHAR, 't': 'i'},
                {'k': 'K', 'v': k::VARCHAR, 't': 'i'}, {'k': 'bias', 'v': _tl_py_bool(bias), 't': NULL},
                {'k': 'dtype_A_B', 'v': _tl_py_strs(dt), 't': NULL}],
               CASE WHEN model = 'gemm_a8w8_blockscale' AND nd > 3
                    THEN [{'k': 'quant_scheme', 'v': 'a8w8_blockscale', 't': 's'},
                          {'k': 'quant_granularity', 'v': 'per_block', 't': 's'},
                          {'k': 'block_k', 'v': CASE WHEN s2[-1] <> 0 THEN (-floor(-k / s2[-1]))::BIGINT::VARCHAR END,
                           't': CASE WHEN s2[-1] <> 0 THEN 'i' END},
                          {'k': 'block_n', 'v': CASE WHEN s3[1] <> 0 THEN (-floor(-n / s3[1]))::BIGINT::VARCHAR END,
                           't': CASE WHEN s3[1] <> 0 THEN 'i' END},
                          {'k': 'scale_dtype', 'v': coalesce(ty[3], 'float32'), 't': 's'}]
                    ELSE [] END,
               CASE WHEN model = 'gemm_a8w8_blockscale'
                    THEN [{'k': 'output_shape', 'v': '(' || m || ', ' || n || ')', 't': NULL},
                          {'k': 'output_dtype', 'v': 'c10::bfloat16', 't': 's'}]
                    ELSE [] END) AS params,
           2 * m::HUGEINT * n * k + CASE WHEN bias THEN m::HUGEINT * n ELSE 0 END AS flops,
           CASE WHEN model = 'gemm_afp4wfp4'
                THEN m * k * 0.5 + k * n * 0.5 + m::DOUBLE * n * _tl_bpe(dt[3])
                ELSE (m::HUGEINT * k * _tl_bpe(dt[1]) + k::HUGEINT * n * _tl_bpe(dt[2])
                      + m::HUGEINT * n * _tl_bpe(CASE WHEN model = 'vllm_rocm_unquantized_gemm' AND NOT bias THEN dt[2] ELSE dt[3] END)
                      + CASE WHEN bias THEN n * _tl_bpe(dt[3]) ELSE 0 END)::DOUBLE END AS bytes,
           CASE WHEN model = 'gemm_afp4wfp4' THEN 'fp4' ELSE _tl_precision(dt[1]) END AS precision
    FROM aiter
), batched AS (   -- aiter's batched GEMMs: x[B, M, K] (or [M, B, K] for a8w8), w[B, N, K(/2)]
    SELECT *, CASE WHEN model = 'batched_gemm_a8w8' THEN s1[1] ELSE s0[1] END AS nb,
           CASE WHEN model = 'batched_gemm_a8w8' AND s0[1] <> s1[1] THEN s0[1] ELSE s0[2] END AS m,
           s1[2] AS n, s0[3] AS k
    FROM e
    WHERE model IN ('batched_gemm_a16wfp4', 'batched_gemm_a8w8') AND len(s0) >= 3 AND len(s1) >= 2 AND len(ty) >= 2
      AND (model = 'batched_gemm_a16wfp4' OR len(s1) >= 2)
), batched_rows AS (
    SELECT trace_id, event_id, tk, true AS b_in,
           [{'k': 'B', 'v': nb::VARCHAR, 't': 'i'}, {'k': 'M', 'v': m::VARCHAR, 't': 'i'},
            {'k': 'N', 'v': n::VARCHAR, 't': 'i'}, {'k': 'K', 'v': k::VARCHAR, 't': 'i'},
            {'k': 'bias', 'v': 'False', 't': NULL},
            {'k': 'dtype_A_B', 'v': _tl_py_strs([ty[1], ty[2], 'c10::bfloat16']), 't': NULL}] AS params,
           nb * 2 * m::HUGEINT * n * k AS flops,
           nb * (m * k * _tl_bpe(ty[1])::DOUBLE
                 + k * n * CASE WHEN model = 'batched_gemm_a16wfp4' THEN 0.5 ELSE _tl_bpe(ty[2]) END + m::DOUBLE * n * 2) AS bytes,
           CASE WHEN model = 'batched_gemm_a16wfp4' THEN 'fp4' ELSE _tl_precision(ty[2]) END AS precision
    FROM batched
), te AS (   -- TransformerEngine's te_gemm_ts (A, ..., B, ..., D, ..., bias at 14, ..., 18)
    SELECT *, _tl_shape(json_extract(d, '$[5]')) AS sb, ci[5] = '1' AS ta, ci[10] = '1' AS tb
    FROM e
    WHERE model = 'tex_ts_te_gemm_ts' AND nd >= 11 AND len(ty) >= 19 AND len(ci) >= 15 AND len(s0) >= 2
      AND (st IS NULL OR (json_type(json_extract(st, '$[0]')) = 'ARRAY' AND json_type(json_extract(st, '$[5]')) = 'ARRAY'))
), dq AS (   -- vLLM's gemm_with_dynamic_quant: the first two 2-D shapes
    SELECT *, list_filter(list_transform(range(nd::BIGINT), lambda i: _tl_shape(json_extract(d, '$[' || i || ']'))),
                          lambda x: len(x) = 2) AS two_d
    FROM e WHERE model = 'vllm_gemm_with_dynamic_quant'
), tev2 AS (   -- TransformerEngine v2's pseudo GEMMs (A, B) with A, B of one dtype
    SELECT *, s0[1] AS m, s0[2] AS k, s1[2] AS n
    FROM e
    WHERE model = 'tev2_pseudo_gemm' AND len(s0) >= 2 AND len(s1) >= 2 AND len(ty) >= 2 AND ty[1] = ty[2]
      AND (st IS NULL OR (json_type(json_extract(st, '$[0]')) = 'ARRAY' AND json_type(json_extract(st, '$[1]')) = 'ARRAY'))
), hb AS (   -- Primus-Turbo's hipBLASLt FP8/FP4 (A, scaleA, B, scaleB, out_dtype, transA, transB, transC, ...)
             -- and aiter's gemm_a4w4 (A, B, scaleA, scaleB, ...)
    SELECT *, model = 'aiter_gemm_a4w4' AS a4w4,
           CASE WHEN model = 'aiter_gemm_a4w4' THEN false ELSE _tl_gemm_flag(ci[6]) END AS ta0,
           CASE WHEN model = 'aiter_gemm_a4w4' THEN true ELSE _tl_gemm_flag(ci[7]) END AS tb0,
           model <> 'aiter_gemm_a4w4' AND _tl_gemm_flag(ci[8]) AS tc,
           CASE WHEN model = 'aiter_gemm_a4w4' THEN s1 ELSE s2 END AS sb0
    FROM e WHERE model IN ('hipblaslt_gemm_fp8', 'hipblaslt_gemm_fp4', 'aiter_gemm_a4w4')
                 AND len(ty) >= CASE WHEN model = 'aiter_gemm_a4w4' THEN 2 ELSE 3 END
), hb2 AS (
    SELECT *, CASE WHEN tc THEN sb0 ELSE s0 END AS sa, CASE WHEN tc THEN s0 ELSE sb0 END AS sbb,
           CASE WHEN tc THEN NOT tb0 ELSE ta0 END AS ta, CASE WHEN tc THEN NOT ta0 ELSE tb0 END AS tb,
           CASE WHEN a4w4 THEN [ty[1], ty[2]] ELSE [ty[1], ty[3]] END AS dt,
           CASE WHEN a4w4 THEN ty[3] ELSE ty[2] END AS dsa, ty[4] AS dsb,
           CASE WHEN json_array_length(st) > CASE WHEN a4w4 THEN 1 ELSE 2 END
                THEN [json_extract(st, '$[0]'), json_extract(st, CASE WHEN a4w4 THEN '$[1]' ELSE '$[2]' END)] END AS strides
    FROM hb
), hb3 AS (
    SELECT *, CASE WHEN ta THEN sa[2] ELSE sa[1] END AS m,
           CASE WHEN ta THEN sa[1] ELSE sa[2] END * CASE WHEN model = 'hipblaslt_gemm_fp8' THEN 1 ELSE 2 END AS k,
           CASE WHEN tb THEN sbb[1] ELSE sbb[2] END AS n
    FROM hb2
    WHERE len(sa) >= 2 AND len(sbb) >= 2 AND _tl_bpe(dt[1]) IS NOT NULL AND _tl_bpe(dt[2]) IS NOT NULL
), std_rows AS (   -- the models with (M, N, K, bias, stride_A, stride_B, dtype_A_B, ...) params
    SELECT trace_id, event_id, tk, false AS b_in, m, n, k, bias, has_st, stride_a, stride_b, dt, extra, bytes,
           _tl_precision(dt[1]) AS precision
    FROM (
        SELECT trace_id, event_id, tk,
               CASE WHEN ta THEN s0[1] ELSE s0[2] END AS m, CASE WHEN tb THEN sb[2] ELSE sb[1] END AS n,
               CASE WHEN ta THEN s0[2] ELSE s0[1] END AS k, ci[15] <> '' AS bias, st IS NOT NULL AS has_st,
               json_extract(st, '$[0]') AS stride_a, json_extract(st, '$[5]') AS stride_b,
               [ty[1], ty[6], ty[11], ty[19]] AS dt, [] AS extra,
               (CASE WHEN ta THEN s0[1] ELSE s0[2] END)::HUGEINT * (CASE WHEN ta THEN s0[2] ELSE s0[1] END) * _tl_bpe(ty[1])
               + (CASE WHEN ta THEN s0[2] ELSE s0[1] END)::HUGEINT * (CASE WHEN tb THEN sb[2] ELSE sb[1] END) * _tl_bpe(ty[6])
               + (CASE WHEN ta THEN s0[1] ELSE s0[2] END)::HUGEINT * (CASE WHEN tb THEN sb[2] ELSE sb[1] END) * _tl_bpe(ty[11])
               + CASE WHEN ci[15] <> '' THEN (CASE WHEN tb THEN sb[2] ELSE sb[1] END) ELSE 0 END * _tl_bpe(ty[19]) AS bytes
        FROM te WHERE len(sb) >= 2
        UNION ALL
        SELECT trace_id, event_id, tk, two_d[1][1], two_d[2][1], two_d[1][2], false, st IS NOT NULL,
               json_extract(st, '$[0]'), json_extract(st, '$[1]'), ty[1:2], [],
               (two_d[1][1]::HUGEINT * two_d[1][2] + two_d[1][2]::HUGEINT * two_d[2][1]
                + two_d[1][1]::HUGEINT * two_d[2][1]) * _tl_bpe(ty[1])
        FROM (SELECT * REPLACE (CASE WHEN len(two_d) = 1 AND nd >= 2 AND list_position(list_transform(range(nd::BIGINT),
                                          lambda i: len(_tl_shape(json_extract(d, '$[' || i || ']'))) = 2), true) = 2
                                     THEN [two_d[1], two_d[1]] ELSE two_d END AS two_d) FROM dq)
        WHERE len(two_d) >= 2 AND len(ty) >= 2
          AND (st IS NULL OR (json_type(json_extract(st, '$[0]')) = 'ARRAY' AND json_type(json_extract(st, '$[1]')) = 'ARRAY'))
        UNION ALL
        SELECT trace_id, event_id, tk, m, n, k, false, strides IS NOT NULL, strides[1], strides[2], dt,
               [{'k': 'dtype_scaleA', 'v': dsa, 't': 's'}, {'k': 'dtype_scaleB', 'v': dsb, 't': 's'}],
               CASE WHEN model = 'hipblaslt_gemm_fp8'
                    THEN m::HUGEINT * k * _tl_bpe(dt[1]) + k::HUGEINT * n * _tl_bpe(dt[2])
                         + m::HUGEINT * n * CASE WHEN _tl_bpe(dt[1]) = 1 THEN 2 ELSE _tl_bpe(dt[1]) END
                    ELSE m::HUGEINT * (k // 2) * _tl_bpe(dt[1]) + n::HUGEINT * (k // 2) * _tl_bpe(dt[2])
                         + m::HUGEINT * ((k + 31) // 32) * coalesce(nullif(_tl_bpe(dsa), 0), 1)
                         + n::HUGEINT * ((k + 31) // 32) * coalesce(nullif(_tl_bpe(dsb), 0), 1) + m::HUGEINT * n * 2 END
        FROM hb3
        UNION ALL
        SELECT trace_id, event_id, tk, m, n, k, false, st IS NOT NULL, json_extract(st, '$[0]'), json_extract(st, '$[1]'),
               ty[1:2], [], (m::HUGEINT * k + k::HUGEINT * n) * _tl_bpe(ty[1]) + m::HUGEINT * n * 2
        FROM tev2)
), std_params AS (
    SELECT trace_id, event_id, tk, b_in,
           list_concat(
               [{'k': 'M', 'v': m::VARCHAR, 't': 'i'}, {'k': 'N', 'v': n::VARCHAR, 't': 'i'},
                {'k': 'K', 'v': k::VARCHAR, 't': 'i'}, {'k': 'bias', 'v': _tl_py_bool(bias), 't': NULL},
                {'k': 'stride_A', 'v': CASE WHEN has_st THEN _py_tuple1(stride_a) END, 't': NULL},
                {'k': 'stride_B', 'v': CASE WHEN has_st THEN _py_tuple1(stride_b) END, 't': NULL},
                {'k': 'dtype_A_B', 'v': _tl_py_strs(dt), 't': NULL}], extra) AS params,
           2 * m::HUGEINT * n * k + CASE WHEN bias THEN m::HUGEINT * n ELSE 0 END AS flops, bytes::DOUBLE AS bytes,
           precision
    FROM std_rows
), allrows AS (
    SELECT * FROM aiter_rows UNION ALL BY NAME SELECT * FROM batched_rows UNION ALL BY NAME SELECT * FROM std_params
)
SELECT trace_id, event_id,
       list_concat(params, CASE WHEN b_in THEN [] ELSE [{'k': 'B', 'v': '1', 't': 'i'}] END,
                   CASE WHEN tk IS NOT NULL THEN [{'k': 'transpose', 'v': _tl_gemm_transpose(tk), 't': NULL}] ELSE [] END)
           AS params,
       flops, bytes, 'matrix_' || precision AS compute_spec
FROM allrows;

-- _tl_perf_gemm_of(ev): one row per GEMM instance of ev (_tl_perf_events or a view with its columns) TraceLens
-- keeps, in _tl_perf_summary's input form: aten's GEMMs and the other GEMM models.
CREATE OR REPLACE MACRO _tl_perf_gemm_of(ev) AS TABLE
SELECT trace_id, event_id, params, flops, bytes::DOUBLE AS bytes, compute_spec FROM _tl_perf_gemm_aten_of(ev)
UNION ALL
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_gemm_ext_of(ev);

-- _tl_perf_gemm: one row per GEMM instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_gemm AS SELECT * FROM _tl_perf_gemm_of('_tl_perf_events');

-- tl_perf_gemm: TraceLens's GEMM.csv, one row per trace and group of GEMM op instances with the same name
-- and parameters; TraceLens's column names (see peers/tracelens/perf_ops for the statistics).
--   trace_id                  the trace
--   name                      the op name
--   param: B, M, N, K         batch and matrix sizes (text as Python prints them)
--   param: bias, stride_A, stride_B, dtype_A_B, transpose   the other parameters (see the top of this file)
--   param: quant_scheme, quant_granularity, block_k, block_n, scale_dtype, output_shape, output_dtype,
--          dtype_scaleA, dtype_scaleB   the quantized GEMMs' parameters (_tl_perf_gemm_ext_of)
--   GFLOPS_first ... UID_first   the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                      row order in TraceLens's file
--   sheet_columns             the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 9 GEMM EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_gemm AS
SELECT trace_id, name, _tl_perf_param(params, 'B') AS "param: B", _tl_perf_param(params, 'M') AS "param: M",
       _tl_perf_param(params, 'N') AS "param: N", _tl_perf_param(params, 'K') AS "param: K",
       _tl_perf_param(params, 'bias') AS "param: bias", _tl_perf_param(params, 'stride_A') AS "param: stride_A",
       _tl_perf_param(params, 'stride_B') AS "param: stride_B",
       _tl_perf_param(params, 'dtype_A_B') AS "param: dtype_A_B",
       _tl_perf_param(params, 'transpose') AS "param: transpose",
       _tl_perf_param(params, 'quant_scheme') AS "param: quant_scheme",
       _tl_perf_param(params, 'quant_granularity') AS "param: quant_granularity",
       _tl_perf_param(params, 'block_k') AS "param: block_k", _tl_perf_param(params, 'block_n') AS "param: block_n",
       _tl_perf_param(params, 'scale_dtype') AS "param: scale_dtype",
       _tl_perf_param(params, 'output_shape') AS "param: output_shape",
       _tl_perf_param(params, 'output_dtype') AS "param: output_dtype",
       _tl_perf_param(params, 'dtype_scaleA') AS "param: dtype_scaleA",
       _tl_perf_param(params, 'dtype_scaleB') AS "param: dtype_scaleB",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary('_tl_perf_gemm')
ORDER BY trace_id, rank;
