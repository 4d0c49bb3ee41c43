-- tree/hlo_ops — JAX's op layer: the HLO op (an instruction of a compiled XLA module) that launched each GPU event.
--
-- A JAX trace has no cpu_ops. XLA writes on every GPU event (and on its launch call) the HLO module and the HLO
-- instruction it runs (`hlo_module` jit_forward_3d_conv, `hlo_op` loop_transpose_fusion / custom-call.1 /
-- cudnn-conv.1, kernels.hlo_module / hlo_op), and on the host one span per execution of a module on a device
-- (`GpuExecutable::ExecuteThunks`, args module_name). One call of an HLO op is one instruction in one execution of
-- its module on one device: every GPU event it launched, under one correlation or several.
--
-- Which execution a GPU event belongs to: the ExecuteThunks span of its module around the CPU start of its launch
-- call. Each device is driven by its own execution thread (`py_xla_execute/...`), and the spans of several
-- devices running the same module overlap in time; the thread of a device is the execution thread whose spans
-- hold most of that device's launches, and a launch takes the span of its device's thread first, then the latest
-- started. A GPU event whose launch is not in any span (or not in the trace) counts as its own call.
--
-- @requires tree/links

-- _hlo_executions: one row per execution of an XLA module (GpuExecutable::ExecuteThunks span).
--   trace_id, event_id      the span (events)
--   tid                     the execution thread
--   hlo_module              the module executed (args module_name)
--   ts_ns, end_ns           start and end on the CPU, ns
CREATE OR REPLACE VIEW _hlo_executions AS
SELECT trace_id, event_id, tid, json_extract_string(args, '$.module_name') AS hlo_module, ts_ns,
       ts_ns + dur_ns AS end_ns
FROM events
WHERE starts_with(name, 'GpuExecutable::ExecuteThunks') AND dur_ns IS NOT NULL
  AND json_extract_string(args, '$.module_name') IS NOT NULL;

-- Helper: the GPU events that carry an HLO op, with their launch call (gpu_launch_links) and the execution spans of
-- their module around its CPU start (one row per candidate span; exec_event_id NULL when none).
CREATE OR REPLACE VIEW _hlo_candidates AS
WITH k AS (
    SELECT k.trace_id, k.event_id, k.device, k.hlo_module, k.hlo_op, k.framework_op, k.program_id,
           l.launch_event_id, l.launch_ts_ns
    FROM kernels k JOIN gpu_launch_links l ON l.trace_id = k.trace_id AND l.event_id = k.event_id
    WHERE k.hlo_op IS NOT NULL
)
SELECT k.*, x.event_id AS exec_event_id, x.tid AS exec_tid, x.ts_ns AS exec_ts_ns
FROM k LEFT JOIN _hlo_executions x
  ON x.trace_id = k.trace_id AND x.hlo_module = k.hlo_module
 AND k.launch_ts_ns BETWEEN x.ts_ns AND x.end_ns;

-- _hlo_execution_threads: one row per (trace, execution thread): the device it drives, the device whose launches
-- its spans hold most often (ties: the lowest device).
--   launches      launches of that device inside its spans
CREATE OR REPLACE VIEW _hlo_execution_threads AS
WITH v AS (
    SELECT trace_id, exec_tid, device, count(*) AS launches
    FROM _hlo_candidates WHERE exec_event_id IS NOT NULL GROUP BY ALL
)
SELECT trace_id, exec_tid, arg_max(device, [launches, -device]) AS device, max(launches) AS launches
FROM v GROUP BY ALL;

-- gpu_event_hlo_ops: one row per GPU event that carries an HLO op (kernels.hlo_op), with the call of the op it
-- belongs to (see the top of this file).
--   trace_id, event_id          the GPU event
--   device                      its device
--   hlo_module, hlo_op          the module and the instruction
--   framework_op                the framework op path of the instruction (kernels.framework_op)
--   program_id                  the module's program id (kernels.program_id; XPlane input, else NULL)
--   exec_event_id               the execution of the module (_hlo_executions.event_id; NULL: none around the launch)
--   launch_event_id             the launch call
--   instance_event_id           the call of the HLO op, named by the first launch call (in file order) of its GPU
--                               events: one per (device, execution, module, instruction); the launch call itself,
--                               or the GPU event when there is no launch, when the execution is not known
CREATE OR REPLACE VIEW gpu_event_hlo_ops AS
WITH c AS (
    SELECT c.*, t.device IS NOT DISTINCT FROM c.device AS own_thread
    FROM _hlo_candidates c
    LEFT JOIN _hlo_execution_threads t ON t.trace_id = c.trace_id AND t.exec_tid = c.exec_tid
), pick AS (
    SELECT trace_id, event_id,
           arg_max({'device': device, 'hlo_module': hlo_module, 'hlo_op': hlo_op, 'framework_op': framework_op,
                    'program_id': program_id, 'launch_event_id': launch_event_id, 'exec_event_id': exec_event_id},
                   [own_thread::INTEGER, coalesce(exec_ts_ns, 0), -coalesce(exec_event_id, 0)]) AS p
    FROM c GROUP BY ALL
), u AS (SELECT trace_id, event_id, unnest(p) FROM pick)
SELECT trace_id, event_id, device, hlo_module, hlo_op, framework_op, program_id, exec_event_id, launch_event_id,
       CASE WHEN exec_event_id IS NULL THEN coalesce(launch_event_id, event_id)
            ELSE min(launch_event_id) OVER (PARTITION BY trace_id, device, exec_event_id, hlo_module, hlo_op) END
           AS instance_event_id
FROM u;
