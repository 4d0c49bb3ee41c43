-- tree/hlo_instructions — the HLO modules an XPlane trace carries: every instruction, and what each call of an HLO
-- op (tree/hlo_ops) ran, with its operands.
--
-- An `.xplane.pb` holds the compiled HloProto of every module compiled while the profiler ran; the ingest writes
-- one metadata event `hlo_instruction` per instruction (tracesql/ingest/xplane.py). A JSON trace carries none:
-- there these views are empty and an HLO op has no shapes.
--
-- @requires tree/hlo_ops

-- _hlo_dims(shape): the dimensions of an HLO shape text (bf16[1,16,32] -> [1, 16, 32]; f32[] -> []); of a tuple
-- ((bf16[8,8], u8[1024]): a custom-call's result and its workspace), its first element's.
CREATE OR REPLACE MACRO _hlo_dims(shape) AS
    CASE WHEN regexp_matches(shape, '^\(?[a-z0-9]+\[[0-9,]*\]')
         THEN list_transform(list_filter(string_split(regexp_extract(shape, '^\(?[a-z0-9]+\[([0-9,]*)\]', 1), ','),
                                         lambda x: x <> ''), lambda x: x::BIGINT) END;

-- _hlo_dtype(shape): the element type of an HLO shape text (bf16[1,16] -> 'bf16'; a tuple: its first element's).
CREATE OR REPLACE MACRO _hlo_dtype(shape) AS nullif(regexp_extract(shape, '^\(?([a-z0-9]+)\[', 1), '');

-- hlo_instructions: one row per instruction of every HLO module of an XPlane trace.
--   trace_id, event_id          the metadata event that carries it
--   program_id                  the module's program id (GPU events of its executions carry it: kernels.program_id)
--   hlo_module                  the module's name (jit_forward_3d_conv)
--   computation, is_entry       the computation it is in, and whether that is the module's entry computation
--                               (the instructions of the entry computation are the HLO ops GPU events name)
--   name, opcode                the instruction (cudnn-conv.1) and its opcode (custom-call, fusion, dot, ...)
--   shape                       its result shape, as HLO text without layout (bf16[1,5120,34,31,53]; a tuple:
--                               (bf16[...], u8[7150336]))
--   operand_shapes              the shapes of its operands, in order
--   called_computations         the computations it calls (a fusion's fused computation)
--   framework_op                the framework op path of its metadata (jit(f)/conv_general_dilated)
--   fusion_kind, custom_call_target   (kLoop / kInput / kCustom; __cudnn$convForward, __cublas$lt$matmul)
--   backend_config              its backend config (JSON; GPU: the GEMM's dot dimension numbers, cuDNN's settings)
--   dot_dims                    a dot's dimension numbers {lhs_contracting, rhs_contracting, lhs_batch, rhs_batch}
--   conv_dims                   a convolution's dimension numbers {input_batch, input_feature, input_spatial,
--                               kernel_input_feature, kernel_output_feature, kernel_spatial, output_batch,
--                               output_feature, output_spatial} (dimension indexes, 0-based)
--   window                      a windowed instruction's window, per spatial dimension {size, stride, padding_low,
--                               padding_high, window_dilation, base_dilation}
--   feature_group_count, batch_group_count   of a convolution
CREATE OR REPLACE VIEW hlo_instructions AS
SELECT trace_id, event_id, TRY_CAST(json_extract_string(args, '$.program_id') AS BIGINT) AS program_id,
       json_extract_string(args, '$.hlo_module') AS hlo_module,
       json_extract_string(args, '$.computation') AS computation,
       coalesce(TRY_CAST(json_extract_string(args, '$.entry') AS BOOLEAN), false) AS is_entry,
       json_extract_string(args, '$.name') AS name, json_extract_string(args, '$.opcode') AS opcode,
       json_extract_string(args, '$.shape') AS shape,
       coalesce(json_extract_string(args, '$.operand_shapes[*]'), []) AS operand_shapes,
       coalesce(json_extract_string(args, '$.called_computations[*]'), []) AS called_computations,
       json_extract_string(args, '$.op_name') AS framework_op, json_extract_string(args, '$.fusion_kind') AS fusion_kind,
       json_extract_string(args, '$.custom_call_target') AS custom_call_target,
       json_extract(args, '$.backend_config') AS backend_config, json_extract(args, '$.dot') AS dot_dims,
       json_extract(args, '$.conv') AS conv_dims, json_extract(args, '$.window') AS window,
       TRY_CAST(json_extract_string(args, '$.feature_group_count') AS BIGINT) AS feature_group_count,
       TRY_CAST(json_extract_string(args, '$.batch_group_count') AS BIGINT) AS batch_group_count
FROM metadata WHERE name = 'hlo_instruction';

-- hlo_op_calls: one row per call of an HLO op (gpu_event_hlo_ops.instance_event_id) whose module the trace carries,
-- with the entry instruction it ran: matched by program id when its GPU events carry one (XPlane input), else by
-- module name when the trace holds one module of that name.
--   trace_id, instance_event_id     the call (as in gpu_event_hlo_ops)
--   hlo_module, hlo_op              its module and instruction
--   instruction_event_id            the instruction (hlo_instructions.event_id)
--   d_txt, t_txt                    its operands' dimensions and element types as JSON lists ([[1,16,32],[8,16]],
--                                   ["bf16","bf16"]): the HLO op's argument set, as a cpu_op's Input Dims and types
--   c_txt                           the instruction, as JSON text {hlo_module, opcode, target, result}: with d_txt
--                                   and t_txt the key of its argument set (perf/args)
CREATE OR REPLACE VIEW hlo_op_calls AS
WITH calls AS (
    SELECT trace_id, instance_event_id, any_value(hlo_module) AS hlo_module, any_value(hlo_op) AS hlo_op,
           min(program_id) AS program_id
    FROM gpu_event_hlo_ops GROUP BY trace_id, instance_event_id
), ins AS (
    SELECT *, count(DISTINCT program_id) OVER (PARTITION BY trace_id, hlo_module, name) AS programs
    FROM hlo_instructions WHERE is_entry
)
SELECT c.trace_id, c.instance_event_id, c.hlo_module, c.hlo_op, i.event_id AS instruction_event_id,
       to_json(list_transform(i.operand_shapes, lambda s: _hlo_dims(s)))::VARCHAR AS d_txt,
       to_json(list_transform(i.operand_shapes, lambda s: _hlo_dtype(s)))::VARCHAR AS t_txt,
       json_object('hlo_module', i.hlo_module, 'opcode', i.opcode, 'target', i.custom_call_target,
                   'result', i.shape)::VARCHAR AS c_txt
FROM calls c
JOIN ins i ON i.trace_id = c.trace_id AND i.hlo_module = c.hlo_module AND i.name = c.hlo_op
 AND (i.program_id = c.program_id OR (c.program_id IS NULL AND i.programs = 1));
