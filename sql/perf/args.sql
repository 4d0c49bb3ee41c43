-- perf/args — the recorded arguments of the ops that launched GPU work, parsed into shapes, element sizes and
-- scalar values, once per distinct argument set (few shapes, many calls).
--
-- An op instance is the cpu_op a GPU event is attributed to (gpu/op_summaries _op_gpu, the attribution every
-- GPU view uses): the innermost cpu_op around its launch, or, for a graph replay placed on a twin trace, the
-- twin's cpu_op, once per graph launch. Its arguments are the cpu_op's args 'Input Dims', 'Input type' and
-- 'Concrete Inputs' (events.input_dims, input_types, concrete_inputs), recorded with record_shapes=True.
-- The ops whose work depends on the serving step they run in (perf/step_ops: paged attention) also carry
-- their step: the user_annotation a serving stack wraps around each model step (vLLM's
-- `execute_..._context_N(...)_generation_N(...)`, innermost by start on the op's process, holding the op's start)
-- and the recorded type of the KV cache the step's cache writes (perf/step_ops) store into. The step is part of
-- the argument set's key (step_txt): the same shapes do different work in different steps.
--
-- An HLO op's call (JAX, tree/hlo_ops) is an op instance too, when the trace carries its module (XPlane input): its
-- arguments are the operands of its instruction (tree/hlo_instructions hlo_op_calls: dims, element types, and the
-- instruction itself as c_txt).
--
-- @requires gpu/op_summaries perf/dtypes perf/step_ops tree/hlo_instructions

-- _perf_op_events: one row per cpu_op that made a launch call (the innermost cpu_op around it, tree/context; at
-- graph capture, the call launches nothing yet), and per call of an HLO op whose instruction the trace carries
-- (hlo_op_calls), with its recorded arguments: what an instance's model reads.
-- It does not depend on the attribution: a graph replay's kernels placed on a twin (tree/attribution) read the
-- twin's op here, and the argument sets (_perf_arg_sets) are those of these events.
--   trace_id, event_id (the cpu_op), op_name, ts_ns (its start on the CPU)
--   d_txt, t_txt, s_txt, c_txt, step_txt   as in _perf_instances
CREATE OR REPLACE VIEW _perf_op_events AS
WITH o AS (
    SELECT DISTINCT trace_id, op_event_id, op_name
    FROM cpu_event_context WHERE anchor_kind = 'launch' AND op_event_id IS NOT NULL
), i AS (
    SELECT o.trace_id, o.op_event_id AS event_id, o.op_name, e.ts_ns,
           coalesce(e.input_dims::VARCHAR, '') AS d_txt, coalesce(e.input_types::VARCHAR, '') AS t_txt,
           coalesce(e.input_strides::VARCHAR, '') AS s_txt, coalesce(e.concrete_inputs::VARCHAR, '') AS c_txt, e.pid
    FROM o JOIN events e ON e.trace_id = o.trace_id AND e.event_id = o.op_event_id
), steps AS (  -- the step annotations
    SELECT trace_id, pid, event_id AS step_id, name, ts_ns, ts_ns + dur_ns AS end_ns
    FROM events WHERE cat = 'user_annotation' AND starts_with(name, 'execute_') AND dur_ns IS NOT NULL
), w AS (  -- the step ops and the cache writes, each with the innermost step holding its start
    SELECT i.trace_id, i.event_id, i.op_name, i.t_txt, c.ic, s.step_id, s.name
    FROM (SELECT * FROM i WHERE op_name IN (SELECT op_name FROM _perf_step_ops)
                             OR op_name IN (SELECT op_name FROM _perf_kv_cache_writes)) i
    LEFT JOIN _perf_kv_cache_writes c USING (op_name)
    ASOF JOIN steps s ON s.trace_id = i.trace_id AND s.pid = i.pid AND i.ts_ns >= s.ts_ns
    WHERE i.ts_ns < s.end_ns
), kv AS (
    SELECT trace_id, step_id, min(json_extract_string(t_txt, '$[' || (ic - 1) || ']')) AS kv_cache
    FROM w WHERE ic IS NOT NULL AND t_txt <> '' GROUP BY ALL
), ctx AS (
    SELECT w.trace_id, w.event_id,
           json_object('step', w.name, 'kv_cache', coalesce(kv.kv_cache, ''))::VARCHAR AS step_txt
    FROM w LEFT JOIN kv USING (trace_id, step_id) WHERE w.ic IS NULL
)
SELECT i.* EXCLUDE (pid), coalesce(ctx.step_txt, '') AS step_txt
FROM i LEFT JOIN ctx USING (trace_id, event_id)
UNION ALL   -- the calls of HLO ops, named by their first launch call
SELECT c.trace_id, c.instance_event_id, c.hlo_op, e.ts_ns, c.d_txt, c.t_txt, '', c.c_txt, ''
FROM hlo_op_calls c JOIN events e ON e.trace_id = c.trace_id AND e.event_id = c.instance_event_id;

-- _perf_instances: one row per op instance that launched counted GPU work: a cpu_op of the trace, a twin's
-- cpu_op replayed by one graph launch (gpu_event_attribution.op_instance, sources 'capture', 'eager',
-- 'graph node' with an op), or a call of an HLO op with a known instruction. Launch sites and placeholders are not
-- op instances.
--   trace_id, event_id (the cpu_op, in op_trace_id), op_trace_id (the trace itself, or the twin), op_name
--   graph_launch_event_id          the graph launch that replayed a twin's op (NULL for the trace's own ops)
--   ts_ns                          its start on the CPU: the cpu_op's, or the graph launch call's
--   kernel_count, kernel_time_ns   its GPU events and their summed duration (ns), as in op_arg_summary
--   d_txt, t_txt, s_txt, c_txt     the recorded Input Dims, Input type, Input Strides, Concrete Inputs as
--                                  JSON text ('' when not recorded)
--   step_txt                       for an op of perf/step_ops inside a step annotation, JSON text
--                                  {"step": the annotation's name, "kv_cache": the recorded type of the step's
--                                  KV cache ('' when no cache write records it)}; '' for every other op
-- @materialize perf
CREATE OR REPLACE VIEW _perf_instances AS
WITH g AS (
    SELECT trace_id, op_trace_id, attr_event_id, op_instance.launch AS graph_launch_event_id,
           min(launch_ts_ns) AS launch_ts_ns, count(*) AS kernel_count, sum(dur_ns)::BIGINT AS kernel_time_ns
    FROM _op_gpu WHERE attr_event_id IS NOT NULL AND source IN ('op', 'capture', 'eager', 'graph node', 'hlo op')
    GROUP BY trace_id, op_trace_id, attr_event_id, op_instance.launch
)
SELECT g.trace_id, e.event_id, g.op_trace_id, e.op_name, g.graph_launch_event_id,
       CASE WHEN g.graph_launch_event_id IS NULL THEN e.ts_ns ELSE g.launch_ts_ns END AS ts_ns,
       g.kernel_count, g.kernel_time_ns, e.d_txt, e.t_txt, e.s_txt, e.c_txt, e.step_txt
FROM g JOIN _perf_op_events e ON e.trace_id = g.op_trace_id AND e.event_id = g.attr_event_id;

-- _perf_arg_groups: one row per (trace, op name, argument set) of the op instances: what the per-argument-set
-- views need (perf_args, perf_traces) without the per-instance rows.
--   trace_id, op_name, d_txt, t_txt, c_txt, step_txt   as in _perf_instances
--   count                                    op instances
--   kernel_time_sum_ns, kernel_time_mean_ns  their GPU time, ns (sum, and mean per instance)
-- @materialize perf summary
CREATE OR REPLACE VIEW _perf_arg_groups AS
SELECT trace_id, op_name, d_txt, t_txt, c_txt, step_txt, count(*) AS count,
       sum(kernel_time_ns)::BIGINT AS kernel_time_sum_ns, avg(kernel_time_ns) AS kernel_time_mean_ns
FROM _perf_instances GROUP BY trace_id, op_name, d_txt, t_txt, c_txt, step_txt;

-- _perf_shape(j): a JSON shape ([16, 559, 64]) as BIGINT[]; NULL when j is not a flat list of integers
-- (a tensor list, or a non-tensor argument recorded as []: tell them apart with the type).
CREATE OR REPLACE MACRO _perf_shape(j) AS
    CASE WHEN json_type(j) = 'ARRAY' AND (json_array_length(j) = 0 OR json_type(json_extract(j, '$[0]')) IN ('BIGINT', 'UBIGINT'))
         THEN j::BIGINT[] END;

-- _perf_numel(shape): number of elements of a tensor of that shape (1 for a 0-dim tensor).
CREATE OR REPLACE MACRO _perf_numel(shape) AS list_reduce(list_prepend(1::BIGINT, shape), lambda a, b: a * b);

-- _perf_arg_sets: one row per distinct (op name, Input Dims, Input type, Concrete Inputs, step) of the ops
-- that launched GPU work (_perf_op_events, across traces: every instance's argument set is among them).
--   op_name, d_txt, t_txt, c_txt, step_txt   the key (as in _perf_instances)
--   dims        per argument, its shape (BIGINT[]; NULL for tensor lists and non-tensor arguments)
--   types       per argument, the recorded type name
--   conc        per argument, the recorded concrete value as text ('' for tensors)
--   numel       per argument, elements of the tensor (NULL when the argument is not a tensor of a known type)
--   bpe         per argument, bytes per element of its type (perf_dtypes; NULL when not a tensor)
--   prec        per argument, the precision of its type (perf_dtypes.precision)
-- @materialize perf summary
CREATE OR REPLACE VIEW _perf_arg_sets AS
WITH k AS (SELECT DISTINCT op_name, d_txt, t_txt, c_txt, step_txt FROM _perf_op_events WHERE d_txt <> ''),
p AS (
    SELECT op_name, d_txt, t_txt, c_txt, step_txt,
           list_transform(json_extract(d_txt::JSON, '$[*]'), lambda x: _perf_shape(x)) AS dims,
           CASE WHEN t_txt <> '' THEN json_extract_string(t_txt::JSON, '$[*]') END AS types,
           CASE WHEN c_txt <> '' THEN json_extract_string(c_txt::JSON, '$[*]') END AS conc
    FROM k
), dt AS (SELECT list(type_name) AS names, list(bytes_per_element) AS sizes, list(precision) AS precs FROM perf_dtypes)
SELECT p.op_name, p.d_txt, p.t_txt, p.c_txt, p.step_txt, p.dims, p.types, p.conc,
       list_transform(range(1, len(p.dims) + 1), lambda i:
           CASE WHEN list_position(dt.names, lower(p.types[i])) IS NOT NULL AND p.dims[i] IS NOT NULL
                THEN _perf_numel(p.dims[i]) END) AS numel,
       list_transform(range(1, len(p.dims) + 1), lambda i:
           CASE WHEN p.dims[i] IS NOT NULL THEN dt.sizes[list_position(dt.names, lower(p.types[i]))] END) AS bpe,
       list_transform(range(1, len(p.dims) + 1), lambda i:
           CASE WHEN p.dims[i] IS NOT NULL THEN dt.precs[list_position(dt.names, lower(p.types[i]))] END) AS prec
FROM p, dt;
