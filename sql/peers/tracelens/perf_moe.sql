-- peers/tracelens/perf_moe — TraceLens (0.1.0) perf models of the MoE ops of its extension that run as ops of
-- their own (aiter's CK and CK-tile two-stage MoE GEMMs, SGLang's Triton MoE GEMM, the MoE routing, sorting and
-- shared-expert ops, aiter's fused MoE ops) and the perf report's sheets MoE_unfused_fwd.csv, MoE_aux_fwd.csv and
-- MoE_fused_fwd.csv. The inference report's
-- sheets of the same ops: peers/tracelens/perf_infer.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/extensions/moe_perf_model_extensions.py (classes UnfusedMoE_Up, UnfusedMoE_Down,
-- moe_aiter_ck_stage1, moe_aiter_ck_stage2, moe_aiter_unfused_up, moe_aiter_unfused_down,
-- moe_triton_invoke_grouped_gemm, BiasedGroupedTopk, MoeSortScatterGather, sglang_fused_append_shared_experts,
-- FusedMoE, moe_aiter_fused_blockscale)
-- and TraceLens/PerfModel/perf_model.py (BinaryElementwise); the code is ours. Their categories MoE_unfused and
-- MoE_aux have no backward (flops_bwd raises, or is missing): the instances make MoE_unfused_fwd.csv and
-- MoE_aux_fwd.csv. Per model (d = Input Dims, ty = Input type; an argument missing or of another length drops
-- the instance):
--   moe_aiter_ck_stage1 (aiter::ck_moe_stage1)   num_tokens M = d[0][0]; (num_experts E, hidden_dim K, n) = d[2]
--       (w2); inter_dim N = n · (K // d[1][-1]) (w1's K may be packed, FP4/INT4); topk = d[6][1] (out); gated =
--       d[1][1] = 2N; input_dtype ty[0], weight_dtype ty[1]; the output counted at the input's size.
--   moe_aiter_ck_stage2 (aiter::ck_moe_stage2)   (M, topk, n) = d[0] (inter_states); (E, K, ·) = d[2] (w2);
--       N = n · (K // d[1][-1]) (· 1 when d[1] is empty); input_dtype ty[0], weight_dtype ty[2] (w2's); no gated.
--   moe_aiter_unfused_up (aiter::moe_cktile2stages_gemm1_ck)   (M, K) = d[0]; E = d[1][0]; (·, topk, N) = d[2]
--       (Y); gated = d[1][1] = 2N; input_dtype, weight_dtype, output_dtype = ty[0], ty[1], ty[2].
--   moe_aiter_unfused_down (aiter::moe_cktile2stages_gemm2_ck)   (M, topk, N) = d[0]; (E, K, ·) = d[1]; dtypes
--       ty[0], ty[1], ty[2]; no gated.
--       Up (UnfusedMoE_Up): FLOPs 2·M·K·N·topk·(2 if gated); bytes M·K·bpe_in + E_active·(2 if gated)·K·N·bpe_w
--       + M·N·topk·bpe_out. Down (UnfusedMoE_Down): FLOPs 2·M·N·K·topk; bytes M·N·topk·bpe_in +
--       E_active·N·K·bpe_w + M·K·bpe_out. E_active = E·(1 − ((E − topk)/E)^M), the experts a uniform routing hits.
--       bpe from the MoE models' own table (_tl_moe_bpe, case-sensitive): an unknown input or output type counts
--       2 bytes, an unknown weight type 1. Compute Spec 'matrix_' + the precision of input_dtype.
--   moe_triton_invoke_grouped_gemm (sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel: A, B,
--       bias, C, ...)   at least 9 arguments; (num_experts E, N, K) = d[1] (B); (num_tokens, topk) = d[8]
--       (topk_ids); m_work = num_tokens·topk; input_dtype ty[0], weight_dtype ty[1], output_dtype ty[3] (the
--       input's when empty or missing). FLOPs 2·m_work·N·K; bytes m_work·K·bpe_in + E_active·N·K·bpe_w +
--       m_work·N·bpe_out (E_active over num_tokens; 0 without experts); Compute Spec 'matrix_' + the precision of
--       weight_dtype.
--   BiasedGroupedTopk (aiter::biased_grouped_topk_hip), MoeSortScatterGather (aiter::moe_sorting_fwd,
--       aiter::mxfp4_moe_sort_hip)   operands = every non-empty shape of d (all integers) with its ty entry
--       (None past the end of ty); FLOPs the largest operand's elements (0 without operands); bytes Σ
--       elements·bpe over the operands whose type name2bpe knows (peers/tracelens/perf_ops _tl_bpe), None when
--       that is 0; Compute Spec 'vector_' + the precision of the first largest operand's type.
--   sglang_fused_append_shared_experts (sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts:
--       topk_ids, topk_weights, ...)   shape_in1 = d[0], shape_in2 = d[1] (d[0] when missing or empty), dtypes
--       (ty[0] or 'int', ty[1] or 'float', the same), strides None; the shapes must broadcast; FLOPs elements of
--       shape_in1; bytes 2·(n1·bpe1 + n2·bpe2) (bpe 4 when name2bpe has none); Compute Spec 'vector_' + the
--       precision of the weights' type. It is a BinaryElementwise model whose sheet is MoE_aux.
-- The MoE pseudo ops of the inference report: peers/tracelens/perf_infer (unfused Triton, fused aiter, GPTQ/AWQ).
--   moe_aiter_fused_blockscale (aiter::fmoe_fp8_blockscale_g1u1, aiter::fmoe_g1u1: out, input, gate, down, ...,
--       topk at 8, ...; FusedMoE, category MoE_fused: MoE_fused_fwd.csv)   num_tokens M = d[0][0] (out);
--       (num_experts E, g, ·) = d[2] (gate/w1, exactly three dims); (·, hidden_dim K, n) = d[3] (down/w2, exactly
--       three dims); inter_dim N = n · (K // d[2][-1]); gated = g = 2N; topk = int(Concrete Inputs[8]) (missing
--       or empty drops the call); output_dtype ty[0], input_dtype ty[1], weight_dtype ty[2]. FLOPs 2·M·K·N·topk·
--       (2 if gated) + 2·M·K·N·topk + M·K·(2·topk − 1) (up, down, the weighted sum); bytes M·K·bpe_in +
--       E_active·N·K·bpe_w·(2 if gated) + E_active·N·K·bpe_w + M·K·bpe_out (_tl_moe_bpe; unknown: input 1, weight
--       1, output 2 bytes); Compute Spec 'matrix_' + the precision of input_dtype ('fp8' also for the name
--       'bf16').
--   topk_softplus (aiter::topk_softplus: topk_weights, topk_indices, gating_output, ...; an _MHCBase model of
--       TraceLens/PerfModel/extensions/perf_model_extensions.py, category MoE_aux)   (M, E) = d[2] (gating_output),
--       topk = d[0][1]; params M, n = 1, C = E, E, topk, dtype_in = ty[2] ('c10::BFloat16' without one); FLOPs
--       6·M·E; bytes M·E·bpe (the logits) + E·4 (the bias) + 2·M·topk·4 (weights and ids written), bpe from
--       name2bpe (peers/tracelens/perf_ops _tl_bpe; None without one); Compute Spec 'vector_' + the precision of
--       dtype_in.
-- The flydsl MoE pseudo ops of the inference report: peers/tracelens/perf_infer.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_moe_bpe(dtype): bytes per element of the dtype names TraceLens's MoE models know, case-sensitive
-- (DTYPE_TO_BYTES in TraceLens/PerfModel/extensions/moe_perf_model_extensions.py); NULL otherwise.
CREATE OR REPLACE MACRO _tl_moe_bpe(dtype) AS
    CASE WHEN dtype IN ('Float8_e4m3fn', 'Float8_e4m3fnuz', 'Float8_e5m2', 'Float8_e5m2fnuz', 'FP8',
                        'c10::Float8_e4m3fn', 'c10::Float8_e4m3fnuz') THEN 1.0
         WHEN dtype IN ('FP4', 'c10::Float4_e2m1fn_x2') THEN 0.5
         WHEN dtype IN ('BFloat16', 'Float16', 'Half', 'c10::BFloat16', 'c10::Half') THEN 2.0
         WHEN dtype IN ('Float32', 'Float', 'c10::Float') THEN 4.0 END;

-- _tl_moe_e_active(e, topk, m): the experts a uniform routing of m tokens to topk of e experts hits,
-- e·(1 − ((e − topk)/e)^m), in TraceLens's float operations.
CREATE OR REPLACE MACRO _tl_moe_e_active(e, topk, m) AS e * (1 - pow((e - topk)::DOUBLE / e, m));

-- _tl_perf_moe_of(ev): one row per MoE_unfused_fwd or MoE_aux_fwd instance of ev (_tl_perf_events or a view with
-- its columns) that TraceLens keeps, in _tl_perf_summary's input form (the models at the top of this file).
CREATE OR REPLACE MACRO _tl_perf_moe_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract_string(input_types, '$[*]') AS ty,
           json_array_length(input_dims) AS nd
    FROM query_table(ev) WHERE sheet IN ('MoE_unfused_fwd', 'MoE_aux_fwd')
), s AS (   -- the shapes the GEMM models read
    SELECT *, _tl_shape(json_extract(d, '$[0]')) AS s0, _tl_shape(json_extract(d, '$[1]')) AS s1,
           _tl_shape(json_extract(d, '$[2]')) AS s2, _tl_shape(json_extract(d, '$[6]')) AS s6,
           _tl_shape(json_extract(d, '$[8]')) AS s8
    FROM e WHERE model IN ('moe_aiter_ck_stage1', 'moe_aiter_ck_stage2', 'moe_aiter_unfused_up',
                           'moe_aiter_unfused_down', 'moe_triton_invoke_grouped_gemm')
), g AS (   -- num_tokens m, hidden_dim k, inter_dim n, experts ne, topk, gated; dtypes
    SELECT trace_id, event_id, model, ty,
           CASE WHEN model = 'moe_triton_invoke_grouped_gemm' THEN s8[1] ELSE s0[1] END AS m,
           CASE model WHEN 'moe_aiter_ck_stage1' THEN s2[2] WHEN 'moe_aiter_ck_stage2' THEN s2[2]
                      WHEN 'moe_aiter_unfused_up' THEN s0[2] WHEN 'moe_aiter_unfused_down' THEN s1[2]
                      ELSE s1[3] END AS k,
           CASE model WHEN 'moe_aiter_ck_stage1' THEN s2[3] * (s2[2] // s1[-1])
                      WHEN 'moe_aiter_ck_stage2' THEN s0[3] * CASE WHEN len(s1) > 0 THEN s2[2] // s1[-1] ELSE 1 END
                      WHEN 'moe_aiter_unfused_up' THEN s2[3] WHEN 'moe_aiter_unfused_down' THEN s0[3]
                      ELSE s1[2] END AS n,
           CASE model WHEN 'moe_aiter_ck_stage1' THEN s2[1] WHEN 'moe_aiter_ck_stage2' THEN s2[1]
                      ELSE s1[1] END AS ne,
           CASE model WHEN 'moe_aiter_ck_stage1' THEN s6[2] WHEN 'moe_aiter_ck_stage2' THEN s0[2]
                      WHEN 'moe_aiter_unfused_up' THEN s2[2] WHEN 'moe_aiter_unfused_down' THEN s0[2]
                      ELSE s8[2] END AS topk,
           model IN ('moe_aiter_ck_stage1', 'moe_aiter_unfused_up') AS up,
           ty[1] AS dt_in,
           CASE WHEN model = 'moe_aiter_ck_stage2' THEN ty[3] ELSE ty[2] END AS dt_w,
           CASE WHEN model IN ('moe_aiter_unfused_up', 'moe_aiter_unfused_down') THEN ty[3]
                WHEN model = 'moe_triton_invoke_grouped_gemm' THEN coalesce(nullif(ty[4], ''), ty[1]) END AS dt_out,
           s1
    FROM s
    WHERE CASE model
            WHEN 'moe_aiter_ck_stage1' THEN len(s0) >= 1 AND len(s1) >= 2 AND len(s2) = 3 AND len(s6) >= 2
                                            AND s1[-1] <> 0 AND len(ty) >= 2
            WHEN 'moe_aiter_ck_stage2' THEN len(s0) = 3 AND s1 IS NOT NULL AND len(s2) = 3
                                            AND (len(s1) = 0 OR s1[-1] <> 0) AND len(ty) >= 3
            WHEN 'moe_aiter_unfused_up' THEN len(s0) = 2 AND len(s1) = 3 AND len(s2) = 3 AND len(ty) >= 3
            WHEN 'moe_aiter_unfused_down' THEN len(s0) = 3 AND len(s1) = 3 AND len(ty) >= 3
            ELSE nd >= 9 AND len(s1) = 3 AND len(s8) = 2 END
), gg AS (
    SELECT *, up AND s1[2] = 2 * n AS gated,
           coalesce(_tl_moe_bpe(dt_in), 2) AS b_in, coalesce(_tl_moe_bpe(dt_w), 1) AS b_w,
           coalesce(_tl_moe_bpe(CASE WHEN model IN ('moe_aiter_ck_stage1', 'moe_aiter_ck_stage2') THEN dt_in
                                     ELSE dt_out END), 2) AS b_out,
           CASE WHEN ne > 0 OR model <> 'moe_triton_invoke_grouped_gemm' THEN _tl_moe_e_active(ne, topk, m)
                ELSE 0 END AS e_active
    FROM g WHERE ne <> 0 OR model = 'moe_triton_invoke_grouped_gemm'   -- E_active divides by E
), opr AS (   -- BiasedGroupedTopk / MoeSortScatterGather: their operands (i: the argument's position)
    SELECT trace_id, event_id, i, _tl_shape(json_extract(d, '$[' || i || ']')) AS sh, ty[i + 1] AS dt
    FROM (SELECT *, unnest(range(coalesce(nd, 0)::BIGINT)) AS i FROM e
          WHERE model IN ('BiasedGroupedTopk', 'MoeSortScatterGather'))
    WHERE json_array_length(json_extract(d, '$[' || i || ']')) > 0
      AND list_bool_and(list_transform(json_extract(json_extract(d, '$[' || i || ']'), '$[*]'),
                                       lambda x: json_type(x) IN ('BIGINT', 'UBIGINT')))
), ops AS (
    SELECT e.trace_id, e.event_id,
           string_agg('(' || _py_tuple1(to_json(o.sh)) || ', ' || coalesce(_py_str(o.dt), 'None') || ')', ', '
                      ORDER BY o.i) AS txt,
           max(_tl_numel(o.sh)) AS n_max, sum(_tl_numel(o.sh) * coalesce(_tl_bpe(o.dt), 0)) AS total,
           arg_min(o.dt, (-_tl_numel(o.sh), o.i)) AS dt_max
    FROM e LEFT JOIN opr o ON o.trace_id = e.trace_id AND o.event_id = e.event_id
    WHERE e.model IN ('BiasedGroupedTopk', 'MoeSortScatterGather')
      AND (e.model = 'MoeSortScatterGather' OR e.d IS NOT NULL)
    GROUP BY e.trace_id, e.event_id
), sx AS (   -- sglang_fused_append_shared_experts
    SELECT trace_id, event_id, _tl_shape(json_extract(d, '$[0]')) AS a,
           CASE WHEN nd > 1 AND json_array_length(json_extract(d, '$[1]')) > 0
                THEN _tl_shape(json_extract(d, '$[1]')) ELSE _tl_shape(json_extract(d, '$[0]')) END AS b,
           CASE WHEN len(ty) > 0 THEN ty[1] ELSE 'int' END AS dt_a,
           CASE WHEN len(ty) > 1 THEN ty[2] ELSE 'float' END AS dt_b
    FROM e WHERE model = 'sglang_fused_append_shared_experts' AND ty IS NOT NULL AND nd >= 1
), sx2 AS (   -- the shapes right-aligned on the longer one, to check they broadcast
    SELECT *, list_concat(list_transform(range(greatest(len(a), len(b)) - len(a)), lambda x: 1::BIGINT), a) AS pa,
              list_concat(list_transform(range(greatest(len(a), len(b)) - len(b)), lambda x: 1::BIGINT), b) AS pb
    FROM sx WHERE a IS NOT NULL AND b IS NOT NULL
)
SELECT trace_id, event_id,
       list_concat(
           CASE WHEN model = 'moe_triton_invoke_grouped_gemm'
                THEN [{'k': 'm_work', 'v': (m * topk)::VARCHAR, 't': 'i'},
                      {'k': 'num_tokens', 'v': m::VARCHAR, 't': 'i'}, {'k': 'topk', 'v': topk::VARCHAR, 't': 'i'},
                      {'k': 'N', 'v': n::VARCHAR, 't': 'i'}, {'k': 'K', 'v': k::VARCHAR, 't': 'i'},
                      {'k': 'num_experts', 'v': ne::VARCHAR, 't': 'i'}]
                ELSE list_concat(
                         [{'k': 'num_tokens', 'v': m::VARCHAR, 't': 'i'},
                          {'k': 'hidden_dim', 'v': k::VARCHAR, 't': 'i'}, {'k': 'inter_dim', 'v': n::VARCHAR, 't': 'i'},
                          {'k': 'num_experts', 'v': ne::VARCHAR, 't': 'i'},
                          {'k': 'topk', 'v': topk::VARCHAR, 't': 'i'}],
                         CASE WHEN up THEN [{'k': 'gated', 'v': _tl_py_bool(gated), 't': NULL}] ELSE [] END) END,
           [{'k': 'input_dtype', 'v': dt_in, 't': 's'}, {'k': 'weight_dtype', 'v': dt_w, 't': 's'}],
           CASE WHEN model IN ('moe_aiter_ck_stage1', 'moe_aiter_ck_stage2') THEN []
                ELSE [{'k': 'output_dtype', 'v': dt_out, 't': 's'}] END) AS params,
       CASE WHEN model = 'moe_triton_invoke_grouped_gemm' THEN 2 * (m * topk)::HUGEINT * n * k
            WHEN up THEN 2 * m::HUGEINT * k * n * topk * CASE WHEN gated THEN 2 ELSE 1 END
            ELSE 2 * m::HUGEINT * n * k * topk END AS flops,
       CASE WHEN model = 'moe_triton_invoke_grouped_gemm'
            THEN (m * topk * k)::DOUBLE * b_in + e_active * n * k * b_w + (m * topk * n)::DOUBLE * b_out
            WHEN up THEN (m * k)::DOUBLE * b_in + e_active * CASE WHEN gated THEN 2 ELSE 1 END * k * n * b_w
                         + (m * n * topk)::DOUBLE * b_out
            ELSE (m * n * topk)::DOUBLE * b_in + e_active * n * k * b_w + (m * k)::DOUBLE * b_out END AS bytes,
       'matrix_' || _tl_precision(CASE WHEN model = 'moe_triton_invoke_grouped_gemm' THEN dt_w ELSE dt_in END)
           AS compute_spec
FROM gg
UNION ALL
SELECT trace_id, event_id, [{'k': 'operands', 'v': '[' || coalesce(txt, '') || ']', 't': NULL}],
       coalesce(n_max, 0), CASE WHEN total > 0 THEN total END, 'vector_' || _tl_precision(dt_max)
FROM ops
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'M', 'v': m::VARCHAR, 't': 'i'}, {'k': 'n', 'v': '1', 't': 'i'}, {'k': 'C', 'v': ne::VARCHAR, 't': 'i'},
        {'k': 'E', 'v': ne::VARCHAR, 't': 'i'}, {'k': 'topk', 'v': topk::VARCHAR, 't': 'i'},
        {'k': 'dtype_in', 'v': dt, 't': 's'}],
       6 * m::HUGEINT * ne, m::HUGEINT * ne * _tl_bpe(dt) + ne * 4 + 2 * m::HUGEINT * topk * 4,
       'vector_' || _tl_precision(dt)
FROM (SELECT trace_id, event_id, _tl_shape(json_extract(d, '$[2]')) AS g, _tl_shape(json_extract(d, '$[0]')) AS w,
             g[1] AS m, g[2] AS ne, w[2] AS topk,
             CASE WHEN len(ty) > 2 THEN ty[3] ELSE 'c10::BFloat16' END AS dt
      FROM e WHERE model = 'topk_softplus')
WHERE len(g) >= 2 AND len(w) >= 2
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'shape_in1', 'v': _py_tuple1(to_json(a)), 't': NULL},
        {'k': 'shape_in2', 'v': _py_tuple1(to_json(b)), 't': NULL},
        {'k': 'dtype_in1_in2_out', 'v': _tl_py_strs([dt_a, dt_b, dt_b]), 't': NULL},
        {'k': 'stride_input1', 'v': NULL, 't': NULL}, {'k': 'stride_input2', 'v': NULL, 't': NULL},
        {'k': 'stride_output', 'v': NULL, 't': NULL}],
       _tl_numel(a), 2 * (_tl_numel(a) * coalesce(_tl_bpe(dt_a), 4) + _tl_numel(b) * coalesce(_tl_bpe(dt_b), 4)),
       'vector_' || _tl_precision(nullif(dt_b, ''))
FROM sx2
WHERE list_bool_and(list_transform(pa, lambda x, i: x = pb[i] OR x = 1 OR pb[i] = 1));

-- _tl_perf_moe_sheet(tbl, ev, sheet, by_kernels): the rows of sheet (MoE_unfused_fwd or MoE_fused_fwd) from tbl
-- (instances in _tl_perf_summary's input form) over ev (_tl_perf_events or a view with its columns), grouped by
-- num_kernels too when by_kernels (the inference report): _tl_perf_summary_of's rows with the parameters of both
-- sheets as columns (see tl_perf_moe_unfused_fwd and tl_perf_moe_fused_fwd).
CREATE OR REPLACE MACRO _tl_perf_moe_sheet(tbl, ev, sheet, by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'num_tokens') AS "param: num_tokens",
       _tl_perf_param(params, 'hidden_dim') AS "param: hidden_dim",
       _tl_perf_param(params, 'inter_dim') AS "param: inter_dim",
       _tl_perf_param(params, 'num_experts') AS "param: num_experts", _tl_perf_param(params, 'topk') AS "param: topk",
       _tl_perf_param(params, 'gated') AS "param: gated", _tl_perf_param(params, 'input_dtype') AS "param: input_dtype",
       _tl_perf_param(params, 'weight_dtype') AS "param: weight_dtype",
       _tl_perf_param(params, 'output_dtype') AS "param: output_dtype",
       _tl_perf_param(params, 'm_work') AS "param: m_work", _tl_perf_param(params, 'N') AS "param: N",
       _tl_perf_param(params, 'K') AS "param: K", _tl_perf_param(params, 'operands') AS "param: operands",
       _tl_perf_param(params, 'shape_in1') AS "param: shape_in1",
       _tl_perf_param(params, 'shape_in2') AS "param: shape_in2",
       _tl_perf_param(params, 'dtype_in1_in2_out') AS "param: dtype_in1_in2_out",
       _tl_perf_param(params, 'stride_input1') AS "param: stride_input1",
       _tl_perf_param(params, 'stride_input2') AS "param: stride_input2",
       _tl_perf_param(params, 'stride_output') AS "param: stride_output",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of(tbl, ev, by_kernels) s
WHERE s.sheet = sheet
ORDER BY trace_id, rank;

-- _tl_perf_moe: one row per MoE_unfused_fwd or MoE_aux_fwd instance of the perf report TraceLens keeps, in
-- _tl_perf_summary's input form (_tl_perf_moe_of over _tl_perf_events).
CREATE OR REPLACE VIEW _tl_perf_moe AS SELECT * FROM _tl_perf_moe_of('_tl_perf_events');

-- tl_perf_moe_unfused_fwd: TraceLens's MoE_unfused_fwd.csv of its perf report, one row per trace and group of
-- unfused MoE GEMM op instances with the same name and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: num_tokens, hidden_dim, inter_dim, num_experts, topk, gated, input_dtype, weight_dtype, output_dtype,
--   m_work, N, K                see the top of this file (text as Python prints them; a number missing from
--                               another model's rows prints as a float)
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 21 MoE_unfused_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_moe_unfused_fwd AS
SELECT * EXCLUDE ("param: operands", "param: shape_in1", "param: shape_in2", "param: dtype_in1_in2_out",
                  "param: stride_input1", "param: stride_input2", "param: stride_output", num_kernels)
FROM _tl_perf_moe_sheet('_tl_perf_moe', '_tl_perf_events', 'MoE_unfused_fwd', false);

-- _tl_perf_moe_aux_sheet(tbl, ev, by_kernels): the rows of MoE_aux_fwd from tbl (instances in _tl_perf_summary's
-- input form) over ev (_tl_perf_events or a view with its columns), grouped by num_kernels too when by_kernels
-- (the inference report): _tl_perf_summary_of's rows with the sheet's parameters as columns (see
-- tl_perf_moe_aux_fwd; a sheet of its own: topk_softplus's n and the unfused models' N would share a column name).
CREATE OR REPLACE MACRO _tl_perf_moe_aux_sheet(tbl, ev, by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'operands') AS "param: operands",
       _tl_perf_param(params, 'shape_in1') AS "param: shape_in1",
       _tl_perf_param(params, 'shape_in2') AS "param: shape_in2",
       _tl_perf_param(params, 'dtype_in1_in2_out') AS "param: dtype_in1_in2_out",
       _tl_perf_param(params, 'stride_input1') AS "param: stride_input1",
       _tl_perf_param(params, 'stride_input2') AS "param: stride_input2",
       _tl_perf_param(params, 'stride_output') AS "param: stride_output",
       _tl_perf_param(params, 'M') AS "param: M", _tl_perf_param(params, 'n') AS "param: n",
       _tl_perf_param(params, 'C') AS "param: C", _tl_perf_param(params, 'E') AS "param: E",
       _tl_perf_param(params, 'topk') AS "param: topk", _tl_perf_param(params, 'dtype_in') AS "param: dtype_in",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of(tbl, ev, by_kernels) s
WHERE s.sheet = 'MoE_aux_fwd'
ORDER BY trace_id, rank;

-- tl_perf_moe_aux_fwd: TraceLens's MoE_aux_fwd.csv of its perf report, one row per trace and group of MoE
-- routing / sorting op instances with the same name and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: operands             (shape, dtype) of every operand (BiasedGroupedTopk, MoeSortScatterGather)
--   param: shape_in1, shape_in2, dtype_in1_in2_out, stride_input1, stride_input2, stride_output
--                               sglang_fused_append_shared_experts's parameters (strides always None)
--   param: M, n, C, E, topk, dtype_in   topk_softplus's parameters (tokens, 1, experts twice, top-k, the logits'
--                               dtype; a number missing from another model's rows prints as a float)
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 28 MoE_aux_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_moe_aux_fwd AS
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_moe_aux_sheet('_tl_perf_moe', '_tl_perf_events', false);

-- _tl_perf_moe_fused_of(ev): one row per instance of ev (_tl_perf_events or a view with its columns) of aiter's fused
-- MoE ops called directly (moe_aiter_fused_blockscale, see the top of this file) that TraceLens keeps, in
-- _tl_perf_summary's input form.
CREATE OR REPLACE MACRO _tl_perf_moe_fused_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, json_extract_string(input_types, '$[*]') AS ty,
           json_extract_string(concrete_inputs, '$[*]') AS ci,
           _tl_shape(json_extract(input_dims, '$[0]')) AS s0, _tl_shape(json_extract(input_dims, '$[2]')) AS s2,
           _tl_shape(json_extract(input_dims, '$[3]')) AS s3
    FROM query_table(ev) WHERE model = 'moe_aiter_fused_blockscale'
), a AS (
    SELECT trace_id, event_id, s0[1] AS m, s3[2] AS k, s3[3] * (s3[2] // s2[-1]) AS n, s2[1] AS ne, s2[2] AS g,
           _tl_int_text(ci[9]) AS topk, ty[1] AS dt_out, ty[2] AS dt_in, ty[3] AS dt_w
    FROM e
    WHERE len(s0) >= 1 AND len(s2) = 3 AND len(s3) = 3 AND s2[-1] <> 0 AND coalesce(ci[9], '') <> ''
      AND len(ty) >= 3 AND s2[1] <> 0
), b AS (
    SELECT *, g = 2 * n AS gated, coalesce(_tl_moe_bpe(dt_in), 1) AS b_in, coalesce(_tl_moe_bpe(dt_w), 1) AS b_w,
           coalesce(_tl_moe_bpe(dt_out), 2) AS b_out, _tl_moe_e_active(ne, topk, m) AS e_active
    FROM a WHERE topk IS NOT NULL
)
SELECT trace_id, event_id,
       [{'k': 'num_tokens', 'v': m::VARCHAR, 't': 'i'}, {'k': 'hidden_dim', 'v': k::VARCHAR, 't': 'i'},
        {'k': 'inter_dim', 'v': n::VARCHAR, 't': 'i'}, {'k': 'num_experts', 'v': ne::VARCHAR, 't': 'i'},
        {'k': 'topk', 'v': topk::VARCHAR, 't': 'i'}, {'k': 'gated', 'v': _tl_py_bool(gated), 't': NULL},
        {'k': 'input_dtype', 'v': dt_in, 't': 's'}, {'k': 'weight_dtype', 'v': dt_w, 't': 's'},
        {'k': 'output_dtype', 'v': dt_out, 't': 's'}] AS params,
       2 * m::HUGEINT * k * n * topk * CASE WHEN gated THEN 2 ELSE 1 END + 2 * m::HUGEINT * k * n * topk
           + m::HUGEINT * k * (2 * topk - 1) AS flops,
       (m * k)::DOUBLE * b_in + e_active * n * k * b_w * CASE WHEN gated THEN 2 ELSE 1 END + e_active * n * k * b_w
           + (m * k)::DOUBLE * b_out AS bytes,
       'matrix_' || CASE WHEN dt_in IN ('fp8', 'bf16') THEN 'fp8' ELSE _tl_precision(nullif(dt_in, '')) END
           AS compute_spec
FROM b;

-- _tl_perf_moe_fused: one row per MoE_fused_fwd instance of the perf report TraceLens keeps (aiter's fused MoE ops
-- called directly), in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_moe_fused AS SELECT * FROM _tl_perf_moe_fused_of('_tl_perf_events');

-- tl_perf_moe_fused_fwd: TraceLens's MoE_fused_fwd.csv of its perf report, one row per trace and group of aiter fused
-- MoE op instances (aiter::fmoe_fp8_blockscale_g1u1, aiter::fmoe_g1u1) with the same name and parameters;
-- TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: num_tokens, hidden_dim, inter_dim, num_experts, topk, gated, input_dtype, weight_dtype, output_dtype
--                               see the top of this file (text as Python prints them)
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 40 MoE_fused_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_moe_fused_fwd AS
SELECT trace_id, name, "param: num_tokens", "param: hidden_dim", "param: inter_dim", "param: num_experts",
       "param: topk", "param: gated", "param: input_dtype", "param: weight_dtype", "param: output_dtype",
       * EXCLUDE (trace_id, name, "param: num_tokens", "param: hidden_dim", "param: inter_dim", "param: num_experts",
                  "param: topk", "param: gated", "param: input_dtype", "param: weight_dtype", "param: output_dtype",
                  "param: m_work", "param: N", "param: K", "param: operands", "param: shape_in1", "param: shape_in2",
                  "param: dtype_in1_in2_out", "param: stride_input1", "param: stride_input2", "param: stride_output",
                  num_kernels)
FROM _tl_perf_moe_sheet('_tl_perf_moe_fused', '_tl_perf_events', 'MoE_fused_fwd', false);
