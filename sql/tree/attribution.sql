-- tree/attribution — one op for every GPU event, with where it comes from.
--
-- Kernel names change with every library release; the op that launched a kernel does not. Every GPU event is
-- read through one op, taken from the first of these that has one (docs/tree.md, "Attribution"):
--   'hlo op'       the HLO instruction that launched it (JAX: kernels.hlo_op; its call: tree/hlo_ops)
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
-- @requires tree/context tree/links tree/graph_twins tree/hlo_ops lib/trace_labels

-- _attribution_plumbing(cat, name): a CPU event that says nothing of where in the program work was launched:
-- a runtime/driver call, the Python frame of a built-in (`<built-in method replay of ... object at 0x7f...>`: a
-- C++ call, named by its object's address), a Python frame of torch's or Triton's own code (`torch/cuda/graphs.py
-- (137): replay`, Triton's launcher).
CREATE OR REPLACE MACRO _attribution_plumbing(cat, name) AS
    cat IN ('cuda_runtime', 'cuda_driver') OR starts_with(name, '<built-in ')
    OR (cat = 'python_function' AND regexp_matches(name, '^(.*/)?(torch|triton)/'));

-- Helper: the launch site of each launch call without a cpu_op around it: the innermost enclosing CPU event
-- (cpu_nesting) that is not plumbing (_attribution_plumbing), up to eight levels up.
-- @materialize tree report perf summary diff twins
CREATE OR REPLACE VIEW _attribution_launch_sites AS
WITH l AS (
    SELECT DISTINCT l.trace_id, l.launch_event_id FROM gpu_launch_links l
    JOIN cpu_event_context c ON c.trace_id = l.trace_id AND c.event_id = l.launch_event_id
     AND c.anchor_kind = 'launch'
    WHERE c.op_name IS NULL
), nest AS MATERIALIZED (   -- the CPU events of those traces (no cpu_op: none is around these launches)
    SELECT n.trace_id, n.event_id, n.parent_event_id, _attribution_plumbing(e.cat, e.name) AS plumbing
    FROM cpu_nesting n SEMI JOIN (SELECT DISTINCT trace_id FROM l) t ON t.trace_id = n.trace_id
    JOIN events e ON e.trace_id = n.trace_id AND e.event_id = n.event_id
    WHERE e.cat <> 'cpu_op'
), up AS (                  -- the eight events above each launch, innermost first
    SELECT l.trace_id, l.launch_event_id, [{'id': p1.event_id, 'plumbing': p1.plumbing}, {'id': p2.event_id, 'plumbing': p2.plumbing}, {'id': p3.event_id, 'plumbing': p3.plumbing}, {'id': p4.event_id, 'plumbing': p4.plumbing}, {'id': p5.event_id, 'plumbing': p5.plumbing}, {'id': p6.event_id, 'plumbing': p6.plumbing}, {'id': p7.event_id, 'plumbing': p7.plumbing}, {'id': p8.event_id, 'plumbing': p8.plumbing}] AS ups
    FROM l
    JOIN nest n ON n.trace_id = l.trace_id AND n.event_id = l.launch_event_id
    LEFT JOIN nest p1 ON p1.trace_id = l.trace_id AND p1.event_id = n.parent_event_id
    LEFT JOIN nest p2 ON p2.trace_id = l.trace_id AND p2.event_id = p1.parent_event_id
    LEFT JOIN nest p3 ON p3.trace_id = l.trace_id AND p3.event_id = p2.parent_event_id
    LEFT JOIN nest p4 ON p4.trace_id = l.trace_id AND p4.event_id = p3.parent_event_id
    LEFT JOIN nest p5 ON p5.trace_id = l.trace_id AND p5.event_id = p4.parent_event_id
    LEFT JOIN nest p6 ON p6.trace_id = l.trace_id AND p6.event_id = p5.parent_event_id
    LEFT JOIN nest p7 ON p7.trace_id = l.trace_id AND p7.event_id = p6.parent_event_id
    LEFT JOIN nest p8 ON p8.trace_id = l.trace_id AND p8.event_id = p7.parent_event_id
), site AS (
    SELECT trace_id, launch_event_id,
           list_filter(ups, lambda u: u.id IS NOT NULL AND NOT u.plumbing)[1].id AS site_event_id
    FROM up
)
SELECT s.trace_id, s.launch_event_id, s.site_event_id, e.name AS site_name
FROM site s JOIN events e ON e.trace_id = s.trace_id AND e.event_id = s.site_event_id;

-- gpu_event_attribution: one row per GPU event (row of `kernels`; cuda_sync rows included) with its op.
--   trace_id, event_id, cat, name, ts_ns, dur_ns   the GPU event
--   launch_event_id, launch_name, launch_kind, launch_ts_ns   the call that launched it and its CPU start
--                                                  (gpu_launch_links)
--   op_name         the op (see the top of this file): a cpu_op name, an HLO op, a graph node tag, a launch
--                   site's name, '[<launch API>]' or '[no launch]'
--   source          'hlo op', 'op', 'graph node', 'capture', 'eager', 'launch site', 'launch api', 'no launch'
--   confidence      'exact' (op, launch site, placeholders), or graph_kernel_tags.confidence: 'names',
--                   'order', 'node'
--   op_trace_id, op_event_id   the cpu_op (or launch site) event, in op_trace_id: the trace itself, or the twin
--                   (capture, eager); for an HLO op, the first launch call of its call (gpu_event_hlo_ops
--                   .instance_event_id); NULL for placeholders and graph node tags without a twin op
--   op_instance     what counts as one call of the op: {op: op_event_id, launch: NULL} for a cpu_op, HLO op or
--                   launch site of the trace, {op, launch: the graph launch} for a twin's op replayed by a graph launch,
--                   {op: NULL, launch: launch_event_id} otherwise
--   module_path     nn.Module path around the op (the twin's for twin ops)
--   tag             user annotation around the launch (the twin's launch for twin ops; the graph node's name)
--   hlo_module, framework_op   for an HLO op: its module and framework op path (gpu_event_hlo_ops), else NULL
-- @materialize tree report perf summary diff twins
CREATE OR REPLACE VIEW gpu_event_attribution AS
WITH c AS MATERIALIZED (
    SELECT trace_id, event_id, op_event_id, op_name, module_path, annotation_name
    FROM cpu_event_context WHERE anchor_kind = 'launch'
), a AS (
    SELECT l.trace_id, l.event_id, l.cat, l.name, l.ts_ns, l.dur_ns, l.launch_event_id, l.launch_name,
           l.launch_kind, l.launch_ts_ns, c.op_event_id, c.op_name AS ctx_op_name, c.module_path AS ctx_module_path,
           c.annotation_name AS ctx_tag,
           t.source AS twin_source, t.confidence AS twin_confidence, t.twin_trace_id, t.op_event_id AS twin_op_event_id,
           t.op_name AS twin_op_name, t.module_path AS twin_module_path, t.tag AS twin_tag,
           s.site_event_id, s.site_name, h.hlo_op, h.hlo_module, h.framework_op, h.instance_event_id AS hlo_instance
    FROM gpu_launch_links l
    LEFT JOIN c ON c.trace_id = l.trace_id AND c.event_id = l.launch_event_id
    LEFT JOIN graph_kernel_tags t ON t.trace_id = l.trace_id AND t.event_id = l.event_id
    LEFT JOIN _attribution_launch_sites s ON s.trace_id = l.trace_id AND s.launch_event_id = l.launch_event_id
    LEFT JOIN gpu_event_hlo_ops h ON h.trace_id = l.trace_id AND h.event_id = l.event_id
), k AS (
    SELECT *,
           CASE WHEN hlo_op IS NOT NULL THEN 'hlo op'
                WHEN launch_event_id IS NULL THEN 'no launch'
                WHEN ctx_op_name IS NOT NULL AND launch_kind IS DISTINCT FROM 'graph' THEN 'op'
                WHEN twin_source IS NOT NULL THEN twin_source
                WHEN ctx_op_name IS NOT NULL THEN 'op'
                WHEN site_name IS NOT NULL THEN 'launch site'
                ELSE 'launch api' END AS source
    FROM a
)
SELECT trace_id, event_id, cat, name, ts_ns, dur_ns, launch_event_id, launch_name, launch_kind, launch_ts_ns,
       CASE source WHEN 'hlo op' THEN hlo_op
                   WHEN 'no launch' THEN '[no launch]'
                   WHEN 'op' THEN ctx_op_name
                   WHEN 'launch site' THEN site_name
                   WHEN 'launch api' THEN '[' || launch_name || ']'
                   ELSE coalesce(twin_op_name, twin_tag) END AS op_name,
       source,
       CASE WHEN source IN ('graph node', 'capture', 'eager') THEN twin_confidence ELSE 'exact' END AS confidence,
       CASE WHEN source IN ('op', 'launch site', 'hlo op') THEN trace_id
            WHEN source IN ('capture', 'eager') OR twin_op_event_id IS NOT NULL THEN twin_trace_id END AS op_trace_id,
       CASE source WHEN 'op' THEN op_event_id WHEN 'launch site' THEN site_event_id WHEN 'hlo op' THEN hlo_instance
                   WHEN 'launch api' THEN NULL WHEN 'no launch' THEN NULL
                   ELSE twin_op_event_id END AS op_event_id,
       CASE WHEN source = 'op' THEN {'op': op_event_id, 'launch': NULL::BIGINT}
            WHEN source = 'hlo op' THEN {'op': hlo_instance, 'launch': NULL::BIGINT}
            WHEN source = 'launch site' THEN {'op': site_event_id, 'launch': NULL::BIGINT}
            WHEN source IN ('graph node', 'capture', 'eager') AND twin_op_event_id IS NOT NULL
                THEN {'op': twin_op_event_id, 'launch': launch_event_id}
            ELSE {'op': NULL::BIGINT, 'launch': launch_event_id} END AS op_instance,
       CASE WHEN source IN ('graph node', 'capture', 'eager') THEN twin_module_path ELSE ctx_module_path END
           AS module_path,
       CASE WHEN source IN ('graph node', 'capture', 'eager') THEN twin_tag ELSE ctx_tag END AS tag,
       hlo_module, framework_op
FROM k;

-- trace_twin_summary: one row per pairing of trace_twins, with how the replay's graph launches were placed
-- (graph_alignment) and how much of its GPU time has its op from a twin (what `tracesql twin` lists).
--   trace_id, trace, twin_trace_id, twin   the replay and its twin, with their labels (trace_labels)
--   kind, paired_by                        as in trace_twins
--   graph_launches, ambiguous, unmatched   the replay's graph launches, and those not placed
--   placed                                 its graph launches placed on this twin
--   twin_pct                               share of the replay's GPU time (cuda_sync excluded) whose op comes from
--                                          a twin or a graph node tag (gpu_event_attribution)
CREATE OR REPLACE VIEW trace_twin_summary AS
WITH a AS (
    SELECT trace_id, count(*) AS graph_launches, count(*) FILTER (WHERE status = 'ambiguous') AS ambiguous,
           count(*) FILTER (WHERE status = 'unmatched') AS unmatched
    FROM graph_alignment GROUP BY ALL
), m AS (
    SELECT trace_id, twin_trace_id, count(*) AS placed FROM graph_alignment WHERE status = 'matched' GROUP BY ALL
), t AS (
    SELECT trace_id, 100.0 * sum(dur_ns) FILTER (WHERE source IN ('graph node', 'capture', 'eager'))
                     / nullif(sum(dur_ns), 0) AS twin_pct
    FROM gpu_event_attribution
    WHERE cat <> 'cuda_sync' AND trace_id IN (SELECT trace_id FROM trace_twins) GROUP BY trace_id
)
SELECT w.trace_id, lt.label AS trace, w.twin_trace_id, lw.label AS twin, w.kind, w.paired_by,
       coalesce(a.graph_launches, 0) AS graph_launches, coalesce(m.placed, 0) AS placed,
       coalesce(a.ambiguous, 0) AS ambiguous, coalesce(a.unmatched, 0) AS unmatched, t.twin_pct
FROM trace_twins w
JOIN trace_labels lt ON lt.trace_id = w.trace_id JOIN trace_labels lw ON lw.trace_id = w.twin_trace_id
LEFT JOIN a ON a.trace_id = w.trace_id
LEFT JOIN m ON m.trace_id = w.trace_id AND m.twin_trace_id = w.twin_trace_id
LEFT JOIN t ON t.trace_id = w.trace_id;
