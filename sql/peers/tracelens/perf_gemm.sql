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

-- _tl_perf_gemm_of(ev): one row per GEMM instance of ev (_tl_perf_events or a view with its columns) TraceLens
-- keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE MACRO _tl_perf_gemm_of(ev) AS TABLE
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

-- _tl_perf_gemm: one row per GEMM instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_gemm AS SELECT * FROM _tl_perf_gemm_of('_tl_perf_events');

-- tl_perf_gemm: TraceLens's GEMM.csv, one row per trace and group of GEMM op instances with the same name
-- and parameters; TraceLens's column names (see peers/tracelens/perf_ops for the statistics).
--   trace_id                  the trace
--   name                      the op name
--   param: B, M, N, K         batch and matrix sizes (text as Python prints them)
--   param: bias, stride_A, stride_B, dtype_A_B, transpose   the other parameters (see the top of this file)
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
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary('_tl_perf_gemm')
ORDER BY trace_id, rank;
