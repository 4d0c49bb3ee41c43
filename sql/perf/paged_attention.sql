-- perf/paged_attention — FLOPs and bytes of paged (inference) attention: one call attends the new tokens of
-- every request of a serving step to that request's whole KV cache (InferenceAttention_fwd family).
--
-- vLLM's unified_attention ops run every request of the step in one call; FlashInfer's and aiter's split it
-- into prefill and decode ops, each modelled only in a step of one phase (_perf_step_op_runs), where that
-- phase's aggregates are the step's. The recorded arguments hold only the new tokens (query [T, H_Q, d_qk],
-- key and value [T, H_KV, d] or the paged caches, output [T, H_Q, d_v]: perf/step_ops). The KV lengths come
-- from the step annotation (_perf_instances.step_txt), which gives per phase (context = prefill, generation =
-- decode) aggregates over its requests, with sq a request's new (scheduled) tokens and sk its total length
-- (cached + new):
--   execute_<T>_context_<n>(sq<Σsq>sk<Σsk>sqsq<Σsq²>sqsk<Σsq·sk>)
--       _generation_<n>(sq<Σsq>sk<Σsk>sqsq<Σsq²>sqsk<Σsq·sk>)   (one name, no line break)
--       (vLLM's worker with TraceLens's patch and detailed_trace_annotation: compute_iteration_details and
--       the aggregates over scheduler_output.num_scheduled_tokens, TraceLens
--       examples/custom_workflows/inference_analysis/vllm_patches/config_vllm_v0.14.0.patch; SGLang traces
--       carry the same text)
--   execute_context_<n>(<Σsq>_<Σsq·sk>)_generation_<n>(<Σsq>)
--       (an earlier patched vLLM: the context requests' tokens and their Σsq·sk, read with sk = sq, a prompt
--       processed whole, as TraceLens read it: attention_perf_model_extensions.py,
--       InferenceAttention.get_param_details, commit efe2015; it gives no KV length for generation requests,
--       so only a step without them is modelled)
-- vLLM's own annotation execute_context_<n>(<tokens>)_generation_<n>(<tokens>) carries no KV length: not modelled.
--
-- Query token j (0-based) of a request attends causally to sk − sq + j + 1 keys, so a request has
-- sq·sk − sq·(sq − 1)/2 (query, key) pairs per query head, and the step P = Σsq·sk − (Σsq² − Σsq)/2
-- (exact from the aggregates; a decode request, sq = 1, has sk pairs):
--   FLOPs = 2·H_Q·P·(d_qk + d_v)                     (S = Q Kᵀ and O = P V, as perf/attention)
--   bytes = Σsq·H_Q·(d_qk·s_Q + d_v·s_O)             the new tokens' queries read and outputs written
--         + Σsk·H_KV·(d_qk·s_K + d_v·s_V)            every request's keys and values read once from the cache
-- with s the element sizes: query and output at their recorded types (no output argument: the query's), the
-- cache at the type the step's cache writes record (perf/step_ops: 'unsigned char' = 1 byte for an fp8 cache),
-- else at the key and value arguments' types (the cache's when vLLM's kv_cache_dtype is 'auto'). The new
-- tokens' key and value arguments are not read again: the cache write stored them and the kernel reads the
-- cache. Precision: the query's type.
--
-- @requires perf/args perf/dtypes perf/step_ops

-- _perf_step_detailed(step), _perf_step_squares(step): the fields of the two formats above (a struct of
-- strings, '' when the annotation does not start in that format; TraceLens's peer style reads the detailed one
-- through the same macro).
CREATE OR REPLACE MACRO _perf_step_detailed(step) AS
    regexp_extract(step, '^execute_\d+_context_\d+\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)'
                         || '_generation_\d+\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)',
                   ['c_sq', 'c_sk', 'c_sqsq', 'c_sqsk', 'g_sq', 'g_sk', 'g_sqsq', 'g_sqsk']);
CREATE OR REPLACE MACRO _perf_step_squares(step) AS
    regexp_extract(step, '^execute_context_\d+\((\d+)_(\d+)\)_generation_(\d+)\((\d+)\)$',
                   ['c_sq', 'c_sqsk', 'g_n', 'g_sq']);

-- _perf_step_stats(step): the request aggregates of a step annotation: a struct (sq, sk, sqsq, sqsk) of Σsq,
-- Σsk, Σsq², Σsq·sk over the step's context and generation requests; NULL fields when the annotation is not in
-- a format that gives them (see above).
CREATE OR REPLACE MACRO _perf_step_stats(step) AS
    CASE WHEN _perf_step_detailed(step).c_sq <> '' THEN
             {'sq': _perf_step_detailed(step).c_sq::BIGINT + _perf_step_detailed(step).g_sq::BIGINT,
              'sk': _perf_step_detailed(step).c_sk::BIGINT + _perf_step_detailed(step).g_sk::BIGINT,
              'sqsq': _perf_step_detailed(step).c_sqsq::BIGINT + _perf_step_detailed(step).g_sqsq::BIGINT,
              'sqsk': _perf_step_detailed(step).c_sqsk::BIGINT + _perf_step_detailed(step).g_sqsk::BIGINT}
         WHEN _perf_step_squares(step).c_sq <> '' AND _perf_step_squares(step).g_n = '0' THEN
             {'sq': _perf_step_squares(step).c_sq::BIGINT, 'sk': _perf_step_squares(step).c_sq::BIGINT,
              'sqsq': _perf_step_squares(step).c_sqsk::BIGINT, 'sqsk': _perf_step_squares(step).c_sqsk::BIGINT}
         ELSE {'sq': NULL::BIGINT, 'sk': NULL::BIGINT, 'sqsq': NULL::BIGINT, 'sqsk': NULL::BIGINT} END;

-- _perf_step_phase(step): which phases the step's requests are in: 'prefill' (context requests only),
-- 'decode' (generation requests only), 'mixed' (both); NULL when the annotation is in neither format above.
CREATE OR REPLACE MACRO _perf_step_phase(step) AS
    CASE WHEN _perf_step_detailed(step).c_sq <> '' THEN
             CASE WHEN _perf_step_detailed(step).g_sq::BIGINT = 0 THEN 'prefill'
                  WHEN _perf_step_detailed(step).c_sq::BIGINT = 0 THEN 'decode' ELSE 'mixed' END
         WHEN _perf_step_squares(step).c_sq <> '' THEN
             CASE WHEN _perf_step_squares(step).g_n::BIGINT = 0 THEN 'prefill'
                  WHEN _perf_step_squares(step).c_sq::BIGINT = 0 THEN 'decode' ELSE 'mixed' END END;

-- _perf_step_op_runs(phase, step_phase, mask): whether an op of perf/step_ops phase `phase` (with its recorded
-- mask mode, '' when it has none) ran every request of a step in phase `step_phase`, so that the step's
-- aggregates are its work: a 'step' op always; a decode op in a decode-only step; a prefill op in a
-- prefill-only step when causal (a non-causal prefill pass reads part of each request's KV only: SGLang's pass
-- over the cached prefix, whose new tokens run in a ragged call), and in a decode-only step (FlashInfer's
-- tensor-core decode, where the mask changes nothing: one query per request).
CREATE OR REPLACE MACRO _perf_step_op_runs(phase, step_phase, mask) AS
    phase = 'step' OR (phase = 'decode' AND step_phase = 'decode')
    OR (phase = 'prefill' AND (step_phase = 'decode' OR (step_phase = 'prefill' AND mask = '1')));

-- _perf_paged_attention: one row per modelled argument set (columns as in perf_arg_models, step_txt included).
CREATE OR REPLACE VIEW _perf_paged_attention AS
WITH a AS (
    SELECT s.*, p.phase, p.layout, p.iq, p.ik, p.iv, p.io, json_extract_string(s.step_txt, '$.step') AS step,
           json_extract_string(s.step_txt, '$.kv_cache') AS kv_type, coalesce(s.conc[p.im], '') AS mask,
           s.conc[p.il] AS kv_layout
    FROM _perf_arg_sets s JOIN _perf_step_ops p USING (op_name) WHERE s.step_txt <> ''
), n AS (
    -- the cache's element size: a paged cache argument's own type, else the type the step's cache writes
    -- record, else the key and value arguments' (perf/step_ops)
    SELECT a.*, _perf_step_stats(step) AS st, dims[iq] AS q, dims[ik] AS k, dims[iv] AS v, bpe[iq] AS bq,
           coalesce(bpe[io], bpe[iq]) AS bo,
           coalesce(CASE WHEN layout <> 'tokens' THEN bpe[ik] END, t.bytes_per_element, bpe[ik]) AS bk,
           coalesce(CASE WHEN layout <> 'tokens' THEN bpe[iv] END, t.bytes_per_element, bpe[iv]) AS bv,
           prec[iq] AS pq
    FROM a LEFT JOIN perf_dtypes t ON t.type_name = lower(a.kv_type)
    WHERE _perf_step_op_runs(phase, _perf_step_phase(step), mask)
), h AS (  -- KV heads and d_v where each layout keeps them
    SELECT *,
           CASE WHEN layout = 'tokens' AND len(k) = 3 AND len(v) = 3 THEN k[2]
                WHEN layout = 'aiter' AND len(k) = 5 AND len(v) = 4 THEN k[2]
                WHEN layout = 'flashinfer' AND len(k) = 4 AND len(v) = 4 AND kv_layout = '0' THEN k[3]
                WHEN layout = 'flashinfer' AND len(k) = 4 AND len(v) = 4 AND kv_layout = '1' THEN k[2]
                -- a ragged call's keys are its arguments: modelled when they are every request's whole KV
                WHEN layout = 'flashinfer_ragged' AND len(k) = 3 AND len(v) = 3 AND kv_layout = '0'
                     AND k[1] = st.sk THEN k[2]
                WHEN layout = 'flashinfer_ragged' AND len(k) = 3 AND len(v) = 3 AND kv_layout = '1'
                     AND k[2] = st.sk THEN k[1] END AS hkv,
           CASE layout WHEN 'tokens' THEN v[3] WHEN 'aiter' THEN v[3] WHEN 'flashinfer' THEN v[4]
                       WHEN 'flashinfer_ragged' THEN v[3] END AS dv,
           coalesce(CASE WHEN layout <> 'tokens' THEN types[ik] END, nullif(kv_type, ''), 'as K/V') AS kv_name
    FROM n
), g AS (
    SELECT *, st.sq AS sq, st.sk AS sk, st.sqsq AS sqsq, st.sqsk AS sqsk, q[2] AS hq, q[3] AS dqk,
           st.sqsk - (st.sqsq - st.sq) // 2 AS pairs
    FROM h WHERE len(q) = 3 AND hkv IS NOT NULL AND st.sq > 0 AND bq IS NOT NULL AND bk IS NOT NULL
)
SELECT op_name, d_txt, t_txt, c_txt, step_txt, 'InferenceAttention_fwd' AS family,
       2.0 * hq * pairs * (dqk + dv) AS flops,
       (sq * hq * (dqk * bq + dv * bo) + sk * hkv * (dqk * bk + dv * bv))::DOUBLE AS bytes,
       pq AS precision, true AS matrix,
       format('N_Q={} H_Q={} H_KV={} d_qk={} d_v={} sum_sk={} pairs={} kv_cache={}', sq, hq, hkv, dqk, dv, sk, pairs,
              kv_name) AS shape
FROM g;
