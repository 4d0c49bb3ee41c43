-- perf/unmodelled — why the inference ops that the compute model knows are left without a model: paged
-- attention (perf/step_ops, perf/paged_attention) and fused MoE (perf/moe).
--
-- @requires perf/model perf/args perf/step_ops perf/paged_attention perf/moe

-- perf_unmodelled: one row per (trace, op name, reason) of the op instances of those families that no model
-- covers (their GPU time is part of perf_categories' '(not modelled)' row).
--   trace_id, op_name
--   reason           'no step annotation': a paged-attention op outside every step annotation (the KV
--                    lengths are not among its arguments); 'step annotation without KV lengths': the
--                    annotation around it is not in a format that gives them (perf/paged_attention);
--                    'mixed step: prefill and decode ops share one annotation': a library's prefill or decode
--                    op (FlashInfer, aiter) in a step with both context and generation requests, which the
--                    annotation does not split between the ops; 'a pass over part of each request's KV': a
--                    non-causal prefill pass (a cached prefix) or a ragged one whose keys are not the whole
--                    KV, in a prefill-only step; 'decode op in a prefill-only step';
--                    'expert weights not among the arguments': a fused MoE op such as vllm::moe_forward;
--                    'arguments not as expected': shapes or types the model does not read
--   count            op instances
--   kernel_time_ns   their GPU time, ns
CREATE OR REPLACE VIEW perf_unmodelled AS
WITH i AS (
    SELECT i.trace_id, i.op_name, i.kernel_time_ns,
           CASE WHEN p.op_name IS NOT NULL THEN
                    CASE WHEN i.step_txt = '' THEN 'no step annotation'
                         WHEN p.phase <> 'step' AND _perf_step_phase(i.step) = 'mixed'
                             THEN 'mixed step: prefill and decode ops share one annotation'
                         WHEN _perf_step_stats(i.step).sq IS NULL THEN 'step annotation without KV lengths'
                         WHEN p.phase = 'decode' AND _perf_step_phase(i.step) = 'prefill'
                             THEN 'decode op in a prefill-only step'
                         WHEN p.phase = 'prefill' AND _perf_step_phase(i.step) = 'prefill'
                              AND (p.layout = 'flashinfer_ragged'
                                   OR coalesce(json_extract_string(nullif(i.c_txt, ''), '$[' || (p.im - 1) || ']'),
                                               '') <> '1')
                             THEN 'a pass over part of each request''s KV'
                         ELSE 'arguments not as expected' END
                WHEN i.op_name IN ('vllm::moe_forward', 'vllm::moe_forward_shared')
                    THEN 'expert weights not among the arguments'
                WHEN i.op_name IN (SELECT op_name FROM _perf_moe_fused_ops) THEN 'arguments not as expected'
           END AS reason
    FROM (SELECT *, json_extract_string(nullif(step_txt, ''), '$.step') AS step FROM _perf_instances) i
    LEFT JOIN _perf_step_ops p USING (op_name)
    WHERE NOT EXISTS (SELECT 1 FROM perf_arg_models m
                      WHERE m.op_name = i.op_name AND m.d_txt = i.d_txt AND m.t_txt = i.t_txt
                        AND m.c_txt = i.c_txt AND m.step_txt = i.step_txt)
)
SELECT trace_id, op_name, reason, count(*) AS count, sum(kernel_time_ns)::BIGINT AS kernel_time_ns
FROM i WHERE reason IS NOT NULL
GROUP BY ALL ORDER BY trace_id, kernel_time_ns DESC, op_name, reason;
