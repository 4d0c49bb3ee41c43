-- perf/hlo — FLOPs and bytes of JAX's HLO ops (tree/hlo_ops) from the HLO modules an XPlane trace carries
-- (tree/hlo_instructions): matrix products and convolutions, per instruction of a module's entry computation.
--
-- The instruction modelled for an HLO op is the op itself when it is a `dot` or a `convolution`, a custom-call
-- that XLA made of one (a cuDNN / MIOpen convolution: its convolution dimension numbers and window; a cuBLAS /
-- cuBLASLt / hipBLASLt GEMM: the dot dimension numbers of its backend config, gemm_backend_config), or else the
-- dots and convolutions of the computations it calls (a fusion: Triton's gemm_fusion_dot_general, the CPU's
-- ynn_fusion), summed.
--   dot:          2 · (elements of the result) · (product of the lhs contracting dimensions): one multiply and
--                 one add per term of each dot product (batch dimensions are in the result)
--   convolution:  2 · (elements of the result) · (kernel input features) · (product of the kernel spatial
--                 dimensions): each output element sums over one kernel window of every input feature of its
--                 group (the kernel's input-feature dimension is the group's); batch-grouped convolutions
--                 (batch_group_count > 1, weight gradients) are not modelled
-- Bytes are those the HLO op reads and writes at the least: each operand of the entry instruction once and its
-- result once (a custom-call's workspace, the second element of its result tuple, is not counted). A custom-call
-- whose target names a backward convolution (__cudnn$convBackwardInput / Filter) is family CONV_bwd.
--
-- @requires tree/hlo_instructions perf/args

-- _hlo_dtype_bytes(dtype): bytes per element of an HLO element type (s4 / u4 / f4 types: half a byte).
CREATE OR REPLACE MACRO _hlo_dtype_bytes(dtype) AS
    CASE WHEN dtype IN ('pred', 's8', 'u8') OR starts_with(dtype, 'f8') THEN 1.0
         WHEN dtype IN ('s16', 'u16', 'f16', 'bf16') THEN 2.0
         WHEN dtype IN ('s32', 'u32', 'f32') THEN 4.0
         WHEN dtype IN ('s64', 'u64', 'f64', 'c64') THEN 8.0
         WHEN dtype = 'c128' THEN 16.0
         WHEN dtype IN ('s4', 'u4', 's2', 'u2') OR starts_with(dtype, 'f4') THEN 0.5 END;

-- _hlo_precision(dtype): the device-table column whose peak applies to math in an HLO element type (perf_dtypes).
CREATE OR REPLACE MACRO _hlo_precision(dtype) AS
    CASE WHEN dtype = 'f64' THEN 'fp64' WHEN dtype = 'f32' THEN 'fp32' WHEN dtype = 'bf16' THEN 'bf16'
         WHEN dtype = 'f16' THEN 'fp16' WHEN starts_with(dtype, 'f8') THEN 'fp8' WHEN starts_with(dtype, 'f4') THEN 'fp4'
         WHEN dtype IN ('s8', 'u8') THEN 'int8' END;

-- _hlo_shape_bytes(shape): bytes of an HLO shape (a tuple: its first element).
CREATE OR REPLACE MACRO _hlo_shape_bytes(shape) AS
    _perf_numel(_hlo_dims(shape)) * _hlo_dtype_bytes(_hlo_dtype(shape));

-- _hlo_dot_flops(lhs, result, lhs_contracting): FLOPs of a dot (see the top of this file); dimension indexes 0-based.
CREATE OR REPLACE MACRO _hlo_dot_flops(lhs, result, lhs_contracting) AS
    2.0 * _perf_numel(_hlo_dims(result))
        * _perf_numel(list_transform(lhs_contracting, lambda c: _hlo_dims(lhs)[c + 1]));

-- _hlo_conv_flops(kernel, result, conv): FLOPs of a convolution with the dimension numbers conv (JSON, as
-- hlo_instructions.conv_dims).
CREATE OR REPLACE MACRO _hlo_conv_flops(kernel, result, conv) AS
    2.0 * _perf_numel(_hlo_dims(result))
        * _hlo_dims(kernel)[json_extract(conv, '$.kernel_input_feature')::BIGINT + 1]
        * _perf_numel(list_transform(json_extract(conv, '$.kernel_spatial')::BIGINT[],
                                     lambda s: _hlo_dims(kernel)[s + 1]));

-- hlo_models: one row per entry instruction of an HLO module that has a model (see the top of this file).
--   trace_id, event_id          the instruction (hlo_instructions)
--   hlo_module, name            its module and name (the HLO op)
--   family                      GEMM (a dot), CONV_fwd, CONV_bwd
--   flops, bytes                of one call
--   precision                   the peak that applies: the element type of its first operand (_hlo_precision)
--   shape                       the model's parameters, readable ('lhs=bf16[8,16] rhs=bf16[16,4] out=bf16[8,4]')
-- @materialize perf summary
CREATE OR REPLACE VIEW hlo_models AS
WITH e AS (SELECT * FROM hlo_instructions WHERE is_entry),
own AS (   -- the entry instructions that are themselves a dot, a convolution, or a custom-call made of one
    SELECT e.trace_id, e.event_id,
           CASE WHEN e.opcode = 'dot' THEN 'dot'
                WHEN e.opcode = 'convolution' OR (e.opcode = 'custom-call' AND e.conv_dims IS NOT NULL) THEN 'conv'
                WHEN e.opcode = 'custom-call'
                     AND json_extract(e.backend_config, '$.gemm_backend_config.dot_dimension_numbers') IS NOT NULL
                    THEN 'gemm' END AS kind,
           e.operand_shapes[1] AS lhs, e.operand_shapes[2] AS rhs, e.shape AS result, e.conv_dims,
           coalesce(json_extract(e.dot_dims, '$.lhs_contracting')::BIGINT[],
                    json_extract_string(e.backend_config,
                        '$.gemm_backend_config.dot_dimension_numbers.lhs_contracting_dimensions[*]')::BIGINT[])
               AS lhs_contracting,
           e.batch_group_count
    FROM e
), inner_ops AS (   -- the dots and convolutions of the computations an entry instruction calls
    SELECT e.trace_id, e.event_id, CASE c.opcode WHEN 'dot' THEN 'dot' ELSE 'conv' END AS kind,
           c.operand_shapes[1] AS lhs, c.operand_shapes[2] AS rhs, c.shape AS result, c.conv_dims,
           json_extract(c.dot_dims, '$.lhs_contracting')::BIGINT[] AS lhs_contracting, c.batch_group_count
    FROM e JOIN hlo_instructions c
      ON c.trace_id = e.trace_id AND c.program_id IS NOT DISTINCT FROM e.program_id AND c.hlo_module = e.hlo_module
     AND list_contains(e.called_computations, c.computation) AND c.opcode IN ('dot', 'convolution')
    WHERE e.event_id NOT IN (SELECT event_id FROM own WHERE kind IS NOT NULL AND own.trace_id = e.trace_id)
), m AS (
    SELECT * FROM own WHERE kind IS NOT NULL
    UNION ALL SELECT * FROM inner_ops
), f AS (
    SELECT trace_id, event_id, kind, lhs, rhs, result,
           CASE WHEN kind IN ('dot', 'gemm') THEN _hlo_dot_flops(lhs, result, lhs_contracting)
                WHEN coalesce(batch_group_count, 1) = 1 THEN _hlo_conv_flops(rhs, result, conv_dims) END AS flops
    FROM m
), g AS (
    SELECT trace_id, event_id, sum(flops) AS flops, bool_or(kind = 'conv') AS conv, count(*) AS n,
           min(lhs) AS lhs, min(rhs) AS rhs, min(result) AS result
    FROM f GROUP BY ALL
)
SELECT e.trace_id, e.event_id, e.hlo_module, e.name,
       CASE WHEN NOT g.conv THEN 'GEMM'
            WHEN e.custom_call_target ILIKE '%convBackward%' THEN 'CONV_bwd' ELSE 'CONV_fwd' END AS family,
       g.flops,
       list_sum(list_transform(e.operand_shapes, lambda s: _hlo_shape_bytes(s))) + _hlo_shape_bytes(e.shape) AS bytes,
       _hlo_precision(_hlo_dtype(e.operand_shapes[1])) AS precision,
       'lhs=' || g.lhs || ' rhs=' || g.rhs || ' out=' || regexp_extract(g.result, '^\(?([a-z0-9]+\[[0-9,]*\])', 1)
           || CASE WHEN g.n > 1 THEN ' (' || g.n || ' products)' ELSE '' END AS shape
FROM g JOIN e USING (trace_id, event_id);
