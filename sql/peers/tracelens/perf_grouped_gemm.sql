-- peers/tracelens/perf_grouped_gemm — TraceLens (0.1.0) grouped-GEMM perf models (Primus-Turbo's and its CK
-- grouped GEMMs) and their sheet GroupedGEMM_fwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (GroupedGemm, primus_turbo_grouped_gemm, primus_turbo_grouped_gemm_variable_k,
-- _collect_2d_shapes); the code is ours. Category GroupedGEMM_fwd, sheet GroupedGEMM_fwd.
--   grouped_gemm  (a, b, ...): a = Input Dims[0] of two or more sizes, the first two positive, b = Input Dims[1] =
--              (G, K, N) or (G, N, K), all positive: M, K = a[0], a[1], G = b[0], N = the size of b that is not K
--              (b[1] = K first). Otherwise the zipped form: Input Dims[0] and [1] are lists of 2-D shapes (A_i =
--              (m_i, K), B_i = (K, N), as many of each): M = Σ m_i, G = their number.
--   grouped_gemm_variable_k  a = (M, K), b = (K', N) both 2-D and positive: one group ((M, K), (K, N)) (K from a);
--              otherwise the zipped form with A_i = (m_i, k_i), B_i = (k_i, n_i): M = Σ m_i, K = k_0, N = n_0,
--              G = their number, param group_pairs = the list of pairs.
--   params     M, K, N, G, bpe_in = bpe of Input type[0], bpe_out = bpe of Input type[1] (of [0] without it)
--              (None when unknown), group_pairs (variable_k).
--   FLOPs      2·M·K·N (variable_k: Σ 2·m_i·k_i·n_i); bytes (M·K + G·K·N)·bpe_in + M·N·bpe_out (variable_k: Σ over
--              the groups with G = 1; None without both bpes; an unknown bpe_in drops a grouped_gemm instance).
--   Compute Spec  'matrix_' + the precision of Input type[0].
-- The zipped forms are read to two levels of nesting (a list of shapes); TraceLens collects 2-D shapes at any depth.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_gg_is2d(j): whether a JSON value is a 2-D shape (a list of two positive integers).
CREATE OR REPLACE MACRO _tl_gg_is2d(j) AS
    coalesce(json_type(j) = 'ARRAY' AND json_array_length(j) = 2
             AND json_type(json_extract(j, '$[0]')) IN ('UBIGINT', 'BIGINT')
             AND json_type(json_extract(j, '$[1]')) IN ('UBIGINT', 'BIGINT')
             AND TRY_CAST(json_extract_string(j, '$[0]') AS BIGINT) > 0
             AND TRY_CAST(json_extract_string(j, '$[1]') AS BIGINT) > 0, false);

-- _tl_gg_flat(j): whether a JSON value is a list of integers (a shape, not a list of shapes).
CREATE OR REPLACE MACRO _tl_gg_flat(j) AS
    coalesce(json_type(j) = 'ARRAY'
             AND list_bool_and(list_transform(json_extract(j, '$[*]'), lambda x: json_type(x) IN ('UBIGINT', 'BIGINT'))),
             false);

-- _tl_gg_shapes(j): the 2-D shapes of a JSON value: itself when it is one, else those among its items, as a list
-- of [rows, cols]; NULL when j is not a list.
CREATE OR REPLACE MACRO _tl_gg_shapes(j) AS
    CASE WHEN json_type(j) <> 'ARRAY' THEN NULL
         WHEN _tl_gg_is2d(j) THEN [json_transform(j, '["BIGINT"]')]
         ELSE list_transform(list_filter(json_extract(j, '$[*]'), lambda x: _tl_gg_is2d(x)),
                             lambda x: json_transform(x, '["BIGINT"]')) END;

-- _tl_perf_grouped_gemm: one row per GroupedGEMM_fwd instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_grouped_gemm AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract_string(input_types, '$[*]') AS ty,
           json_extract(input_dims, '$[0]') AS a, json_extract(input_dims, '$[1]') AS b
    FROM _tl_perf_events WHERE sheet = 'GroupedGEMM_fwd'
), f AS (
    SELECT *, CASE WHEN _tl_gg_flat(a) THEN _tl_shape(a) END AS sa, CASE WHEN _tl_gg_flat(b) THEN _tl_shape(b) END AS sb,
           _tl_gg_shapes(a) AS la, _tl_gg_shapes(b) AS lb,
           _tl_bpe(ty[1]) AS bpe_in, _tl_bpe(coalesce(ty[2], ty[1])) AS bpe_out
    FROM e
), gg AS (   -- grouped_gemm: (m, k, n, g) from the impl form, else the zipped form
    SELECT *,
           CASE WHEN len(sa) >= 2 AND sa[1] > 0 AND sa[2] > 0 AND len(sb) = 3 AND list_bool_and(list_transform(sb, lambda v: v > 0))
                     AND (sb[2] = sa[2] OR sb[3] = sa[2])
                THEN [sa[1], sa[2], CASE WHEN sb[2] = sa[2] THEN sb[3] ELSE sb[2] END, sb[1]]
                WHEN len(la) > 0 AND len(la) = len(lb)
                     AND list_bool_and(list_transform(range(1, len(la) + 1), lambda i: la[i][2] = la[1][2]
                                                      AND lb[i][1] = la[1][2] AND lb[i][2] = lb[1][2]))
                THEN [list_sum(list_transform(la, lambda x: x[1])), la[1][2], lb[1][2], len(la)] END AS mkng
    FROM f WHERE model = 'primus_turbo_grouped_gemm'
), vk AS (   -- grouped_gemm_variable_k: its groups' pairs
    SELECT *,
           CASE WHEN len(sa) = 2 AND len(sb) = 2 AND list_bool_and(list_transform(sa || sb, lambda v: v > 0))
                THEN [[sa, [sa[2], sb[2]]]]
                WHEN len(la) > 0 AND len(la) = len(lb)
                     AND list_bool_and(list_transform(range(1, len(la) + 1), lambda i: la[i][2] = lb[i][1]))
                THEN list_transform(range(1, len(la) + 1), lambda i: [la[i], lb[i]]) END AS pairs
    FROM f WHERE model = 'primus_turbo_grouped_gemm_variable_k'
), rows AS (
    SELECT trace_id, event_id, mkng[1] AS m, mkng[2] AS k, mkng[3] AS n, mkng[4] AS g, bpe_in, bpe_out, ty,
           NULL::BIGINT[][][] AS pairs,
           2 * mkng[1]::HUGEINT * mkng[2] * mkng[3] AS flops,
           (mkng[1]::HUGEINT * mkng[2] + mkng[4]::HUGEINT * mkng[2] * mkng[3]) * bpe_in + mkng[1]::HUGEINT * mkng[3] * bpe_out
               AS bytes
    FROM gg WHERE mkng IS NOT NULL AND bpe_in IS NOT NULL AND bpe_out IS NOT NULL
    UNION ALL
    SELECT trace_id, event_id, list_sum(list_transform(pairs, lambda p: p[1][1])), pairs[1][1][2], pairs[1][2][2],
           len(pairs), bpe_in, bpe_out, ty, pairs,
           list_sum(list_transform(pairs, lambda p: 2 * p[1][1]::HUGEINT * p[1][2] * p[2][2])),
           CASE WHEN bpe_in IS NOT NULL AND bpe_out IS NOT NULL
                THEN list_sum(list_transform(pairs, lambda p: (p[1][1]::HUGEINT * p[1][2] + p[1][2]::HUGEINT * p[2][2]) * bpe_in
                                                              + p[1][1]::HUGEINT * p[2][2] * bpe_out)) END
    FROM vk WHERE pairs IS NOT NULL
)
SELECT trace_id, event_id,
       list_concat(
           [{'k': 'M', 'v': m::VARCHAR, 't': 'i'}, {'k': 'K', 'v': k::VARCHAR, 't': 'i'},
            {'k': 'N', 'v': n::VARCHAR, 't': 'i'}, {'k': 'G', 'v': g::VARCHAR, 't': 'i'},
            {'k': 'bpe_in', 'v': bpe_in::VARCHAR, 't': CASE WHEN bpe_in IS NOT NULL THEN 'i' END},
            {'k': 'bpe_out', 'v': bpe_out::VARCHAR, 't': CASE WHEN bpe_out IS NOT NULL THEN 'i' END}],
           CASE WHEN pairs IS NOT NULL
                THEN [{'k': 'group_pairs',
                       'v': '[' || array_to_string(list_transform(pairs, lambda p: '((' || p[1][1] || ', ' || p[1][2]
                                                                     || '), (' || p[2][1] || ', ' || p[2][2] || '))'), ', ')
                            || ']', 't': NULL}]
                ELSE [] END) AS params,
       flops, bytes, 'matrix_' || _tl_precision(ty[1]) AS compute_spec
FROM rows;

-- _tl_perf_grouped_gemm_sheet(by_kernels): the rows and columns of GroupedGEMM_fwd.csv (see tl_perf_grouped_gemm_fwd), grouped by num_kernels too
-- when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_grouped_gemm_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'M') AS "param: M", _tl_perf_param(params, 'K') AS "param: K",
       _tl_perf_param(params, 'N') AS "param: N", _tl_perf_param(params, 'G') AS "param: G",
       _tl_perf_param(params, 'bpe_in') AS "param: bpe_in", _tl_perf_param(params, 'bpe_out') AS "param: bpe_out",
       _tl_perf_param(params, 'group_pairs') AS "param: group_pairs",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_grouped_gemm', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_grouped_gemm_fwd: TraceLens's GroupedGEMM_fwd.csv, one row per trace and group of grouped-GEMM op
-- instances with the same name and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: M, K, N, G           rows over all groups, inner and output sizes, number of groups
--   param: bpe_in, bpe_out      bytes per element of the inputs and of the output
--   param: group_pairs          (variable_k) each group's ((m, k), (k, n)) shapes
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 24 GroupedGEMM_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_grouped_gemm_fwd AS SELECT * EXCLUDE (num_kernels) FROM _tl_perf_grouped_gemm_sheet(false);
