-- tree/attribution — one op for every GPU event, with where it comes from.
--
-- Kernel names change with every library release; the op that launched a kernel does not. Every GPU event is
-- read through one op, taken from the first of these that has one (docs/tree.md, "Attribution"):
--   'op'           the innermost cpu_op around the call that launched it (tree/context), for work that is not a
--                  graph replay's
--   'graph node'   a graph replay's event whose `graph node id` carries PyTorch's graph annotation (`name`)
--   'capture'      a graph replay's event placed on a capture trace of the same graphs (tree/graph_twins)
--   'eager'        a graph replay's event placed on an eager run of the same code (tree/graph_twins)
--   'op'           a graph replay's event whose graph launch itself has a cpu_op around it
--   'launch site'  the innermost named CPU context around the launch call: a user annotation, a Python frame or
--                  nn.Module frame, any other enclosing event (kernels launched from Python: DeepGEMM's
--                  cuLaunchKernelEx, Triton's launcher, a custom extension; a graph launch with no twin)
--   'launch api'   no CPU event encloses the launch call: its API name in brackets, '[cudaGraphLaunch]'
--   'no launch'    the launch call is not in the trace (warm-up kernels, GPU-only traces): '[no launch]'
-- The last two are placeholders: time there has no op.
--
-- @requires tree/context tree/links tree/graph_twins

-- _attribution_plumbing(cat, name): a CPU event that says nothing of where in the program work was launched:
-- a runtime/driver call, the Python frame of a built-in (`<built-in method replay of ... object at 0x7f...>`: a
-- C++ call, named by its object's address), a Python frame of torch's or Triton's own code (`torch/cuda/graphs.py
-- (137): replay`, Triton's launcher).
CREATE OR REPLACE MACRO _attribution_plumbing(cat, name) AS
    cat IN ('cuda_runtime', 'cuda_driver') OR starts_with(name, '<built-in ')
    OR (cat = 'python_function' AND regexp_matches(name, '^(.*/)?(torch|triton)/'));

-- Helper: the launch site of each launch call without a cpu_op around it: the innermost enclosing CPU event
-- (cpu_nesting) that is not plumbing (_attribution_plumbing), up to eight levels up.
CREATE OR REPLACE VIEW _attribution_launch_sites AS
WITH RECURSIVE l AS (
    SELECT DISTINCT l.trace_id, l.launch_event_id FROM gpu_launch_links l
    JOIN cpu_event_context c ON c.trace_id = l.trace_id AND c.event_id = l.launch_event_id
     AND c.anchor_kind = 'launch'
    WHERE c.op_name IS NULL
), up(trace_id, launch_event_id, event_id, cat, name, level) AS (
    SELECT l.trace_id, l.launch_event_id, p.event_id, p.cat, p.name, 1
    FROM l
    JOIN cpu_nesting n ON n.trace_id = l.trace_id AND n.event_id = l.launch_event_id
    JOIN cpu_nesting p ON p.trace_id = n.trace_id AND p.event_id = n.parent_event_id
    UNION ALL
    SELECT u.trace_id, u.launch_event_id, p.event_id, p.cat, p.name, u.level + 1
    FROM up u
    JOIN cpu_nesting n ON n.trace_id = u.trace_id AND n.event_id = u.event_id
    JOIN cpu_nesting p ON p.trace_id = n.trace_id AND p.event_id = n.parent_event_id
    WHERE u.level < 8 AND _attribution_plumbing(u.cat, u.name)
)
SELECT trace_id, launch_event_id, arg_min(event_id, level) AS site_event_id, arg_min(name, level) AS site_name
FROM up
WHERE NOT _attribution_plumbing(cat, name)
GROUP BY trace_id, launch_event_id;

-- gpu_event_attribution: one row per GPU event (row of `kernels`; cuda_sync rows included) with its op.
--   trace_id, event_id, cat, name, ts_ns, dur_ns   the GPU event
--   launch_event_id, launch_name, launch_kind      the call that launched it (gpu_launch_links)
--   op_name         the op (see the top of this file): a cpu_op name, a graph node tag, a launch site's name,
--                   '[<launch API>]' or '[no launch]'
--   source          'op', 'graph node', 'capture', 'eager', 'launch site', 'launch api', 'no launch'
--   confidence      'exact' (op, launch site, placeholders), or graph_kernel_tags.confidence: 'names',
--                   'order', 'node'
--   op_trace_id, op_event_id   the cpu_op (or launch site) event, in op_trace_id: the trace itself, or the twin
--                   (capture, eager); NULL for placeholders and graph node tags without a twin op
--   op_instance     what counts as one call of the op: {op: op_event_id, launch: NULL} for a cpu_op or launch
--                   site of the trace, {op, launch: the graph launch} for a twin's op replayed by a graph launch,
--                   {op: NULL, launch: launch_event_id} otherwise
--   module_path     nn.Module path around the op (the twin's for twin ops)
--   tag             user annotation around the launch (the twin's launch for twin ops; the graph node's name)
-- @materialize tree report
CREATE OR REPLACE VIEW gpu_event_attribution AS
WITH c AS MATERIALIZED (
    SELECT trace_id, event_id, op_event_id, op_name, module_path, annotation_name
    FROM cpu_event_context WHERE anchor_kind = 'launch'
), a AS (
    SELECT l.trace_id, l.event_id, l.cat, l.name, l.ts_ns, l.dur_ns, l.launch_event_id, l.launch_name,
           l.launch_kind, c.op_event_id, c.op_name AS ctx_op_name, c.module_path AS ctx_module_path,
           c.annotation_name AS ctx_tag,
           t.source AS twin_source, t.confidence AS twin_confidence, t.twin_trace_id, t.op_event_id AS twin_op_event_id,
           t.op_name AS twin_op_name, t.module_path AS twin_module_path, t.tag AS twin_tag,
           s.site_event_id, s.site_name
    FROM gpu_launch_links l
    LEFT JOIN c ON c.trace_id = l.trace_id AND c.event_id = l.launch_event_id
    LEFT JOIN graph_kernel_tags t ON t.trace_id = l.trace_id AND t.event_id = l.event_id
    LEFT JOIN _attribution_launch_sites s ON s.trace_id = l.trace_id AND s.launch_event_id = l.launch_event_id
), k AS (
    SELECT *,
           CASE WHEN launch_event_id IS NULL THEN 'no launch'
                WHEN ctx_op_name IS NOT NULL AND launch_kind IS DISTINCT FROM 'graph' THEN 'op'
                WHEN twin_source IS NOT NULL THEN twin_source
                WHEN ctx_op_name IS NOT NULL THEN 'op'
                WHEN site_name IS NOT NULL THEN 'launch site'
                ELSE 'launch api' END AS source
    FROM a
)
SELECT trace_id, event_id, cat, name, ts_ns, dur_ns, launch_event_id, launch_name, launch_kind,
       CASE source WHEN 'no launch' THEN '[no launch]'
                   WHEN 'op' THEN ctx_op_name
                   WHEN 'launch site' THEN site_name
                   WHEN 'launch api' THEN '[' || launch_name || ']'
                   ELSE coalesce(twin_op_name, twin_tag) END AS op_name,
       source,
       CASE WHEN source IN ('graph node', 'capture', 'eager') THEN twin_confidence ELSE 'exact' END AS confidence,
       CASE WHEN source IN ('op', 'launch site') THEN trace_id
            WHEN source IN ('capture', 'eager') OR twin_op_event_id IS NOT NULL THEN twin_trace_id END AS op_trace_id,
       CASE source WHEN 'op' THEN op_event_id WHEN 'launch site' THEN site_event_id
                   WHEN 'launch api' THEN NULL WHEN 'no launch' THEN NULL
                   ELSE twin_op_event_id END AS op_event_id,
       CASE WHEN source = 'op' THEN {'op': op_event_id, 'launch': NULL::BIGINT}
            WHEN source = 'launch site' THEN {'op': site_event_id, 'launch': NULL::BIGINT}
            WHEN source IN ('graph node', 'capture', 'eager') AND twin_op_event_id IS NOT NULL
                THEN {'op': twin_op_event_id, 'launch': launch_event_id}
            ELSE {'op': NULL::BIGINT, 'launch': launch_event_id} END AS op_instance,
       CASE WHEN source IN ('graph node', 'capture', 'eager') THEN twin_module_path ELSE ctx_module_path END
           AS module_path,
       CASE WHEN source IN ('graph node', 'capture', 'eager') THEN twin_tag ELSE ctx_tag END AS tag
FROM k;
