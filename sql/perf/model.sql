-- perf/model — FLOPs and bytes per argument set of every modelled op family, in one relation.
--
-- @requires perf/gemm perf/attention perf/conv perf/elementwise perf/reduce perf/norm perf/embedding perf/rotary
-- @requires perf/moe perf/paged_attention perf/hlo

-- perf_arg_models: one row per (op name, recorded Input Dims, Input type, Concrete Inputs, step) that a family's
-- model covers. FLOPs and bytes are for one call.
--   op_name, d_txt, t_txt, c_txt, step_txt   the argument set, as recorded (JSON text; the key of
--                the instances, _perf_instances; step_txt '' except for the ops of perf/step_ops)
--   family       GEMM, SDPA_fwd, SDPA_bwd, CONV_fwd, CONV_bwd, UnaryElementwise, BinaryElementwise, Copy,
--                Reduce, Softmax_fwd, Softmax_bwd, LayerNorm_fwd/_bwd, RMSNorm_fwd/_bwd, BatchNorm_fwd,
--                BatchNorm_bwd, GroupNorm_fwd/_bwd, Embedding_fwd/_bwd, RoPE_fwd, MoE_GroupedGEMM, MoE_fused,
--                InferenceAttention_fwd (the modules perf/gemm ... perf/paged_attention say how); for JAX's HLO
--                ops GEMM, CONV_fwd, CONV_bwd (perf/hlo)
--   flops        floating-point operations of one call (a multiply-add counts 2)
--   bytes        bytes the call reads and writes at the least (each tensor once), at the recorded sizes
--   precision    the device-table column whose peak applies (perf_dtypes.precision; fp32 for vector work)
--   matrix       the work runs on the matrix units (tensor cores) rather than the vector units
--   shape        the model's parameters, readable ('B=1 M=8944 N=1024 K=1024')
-- @materialize perf summary
CREATE OR REPLACE VIEW perf_arg_models AS
WITH shaped AS (  -- the families whose model reads only the arguments
    SELECT * FROM _perf_gemm
    UNION ALL SELECT * FROM _perf_attention
    UNION ALL SELECT * FROM _perf_conv
    UNION ALL SELECT * FROM _perf_elementwise
    UNION ALL SELECT * FROM _perf_reduce
    UNION ALL SELECT * FROM _perf_norm
    UNION ALL SELECT * FROM _perf_embedding
    UNION ALL SELECT * FROM _perf_rotary
    UNION ALL SELECT * FROM _perf_moe
    UNION ALL SELECT * FROM _perf_moe_fused
)
SELECT op_name, d_txt, t_txt, c_txt, '' AS step_txt, family, flops, bytes, precision, matrix, shape FROM shaped
UNION ALL
SELECT op_name, d_txt, t_txt, c_txt, step_txt, family, flops, bytes, precision, matrix, shape
FROM _perf_paged_attention
UNION ALL   -- JAX's HLO ops (perf/hlo): one row per argument set (the instruction is part of the key, c_txt)
SELECT c.hlo_op, c.d_txt, c.t_txt, c.c_txt, '', any_value(m.family), any_value(m.flops), any_value(m.bytes),
       any_value(m.precision), true, any_value(m.shape)
FROM hlo_op_calls c JOIN hlo_models m ON m.trace_id = c.trace_id AND m.event_id = c.instruction_event_id
GROUP BY c.hlo_op, c.d_txt, c.t_txt, c.c_txt;
