-- 12_tree_attribution.sql — every GPU event attributed up the four layers:
-- nn.Module (Python front end) -> dispatcher op (cpu_op) -> runtime launch -> GPU event.
--
-- The enclosing events come from cpu_nesting (10_tree_nesting.sql): "the innermost cpu_op around a call"
-- is its closest cpu_op ancestor in that tree (Python frames and annotations in between are skipped).
-- Each family (cpu_ops, nn.Module frames, user_annotations, ProfilerStep annotations, runtime calls) is
-- laminar, so its innermost member around an event is one ASOF join away: the latest earlier member (in
-- nesting order) whose own family depth is the event's family depth minus one. No per-event loops and no
-- walk up the whole tree.

-- cpu_event_context (stored table, see tracesql/schema.py): one row per cpu_op, per `nn.Module: ...`
-- frame, per user_annotation and per runtime/driver call that carries a correlation id (every possible
-- launch), with what encloses it on its thread. `tracesql ingest` computes it once per trace with the view
-- below (_cpu_event_context_build) and stores it as DATASET/traces/trace_id=<id>/cpu_event_context/.
--   trace_id, event_id, cat, name, ts_ns, dur_ns   the event
--   anchor_kind              'op', 'module', 'annotation' or 'launch'
--   op_event_id, op_name     innermost cpu_op enclosing it (not itself)
--   top_op_event_id, top_op_name   outermost cpu_op enclosing it; for a cpu_op that is not inside
--                            another one, itself (NULL for modules and for calls outside every op)
--   module_event_id          innermost nn.Module frame enclosing it (not itself)
--   module_path              for a module: the enclosing modules' names and its own, outermost first,
--                            joined by '/' (the `nn.Module: ` prefix dropped); for an op or a launch: the
--                            module_path of module_event_id
--   module_name              for a module: its own name; otherwise the name of module_event_id
--   annotation_event_id, annotation_name   innermost user_annotation enclosing it (not itself)
--   step_event_id, step      the `ProfilerStep#N` range enclosing it and its name (a user_annotation,
--                            or a cpu_op in PyTorch 1.8 traces, where that range is also the outermost op)
--                            (annotation_*: not computed for ops)
--   runtime_parent_event_id  innermost cuda_runtime/cuda_driver call enclosing it (launches only)
--   tl_launcher_event_id, tl_launcher_name, tl_launcher_ts_ns   for a launch: TraceLens's launcher
--                            (PEERS.md) — the first enclosing cpu_op not named `execute`, unless a runtime
--                            call encloses the launch more closely; else the launch itself
--   op_depth, module_depth   number of enclosing cpu_ops / nn.Module frames
--   thread_key, nest_pos     as in cpu_nesting
CREATE OR REPLACE VIEW _cpu_event_context_build AS
WITH RECURSIVE n AS MATERIALIZED (
    SELECT trace_id, event_id, cat, name, ts_ns, dur_ns, nest_end_ns > ts_ns AS can_enclose, thread_key,
           nest_pos, op_depth, module_depth, annotation_depth, step_depth, runtime_depth, has_correlation,
           CASE WHEN cat = 'cpu_op' THEN 'op'
                WHEN cat = 'python_function' THEN 'module'
                WHEN cat IN ('cuda_runtime', 'cuda_driver') THEN 'launch'
                ELSE 'annotation' END AS anchor_kind,
           cat IN ('user_annotation', 'cpu_op') AND starts_with(name, 'ProfilerStep#') AS is_step
    FROM cpu_nesting
    WHERE cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
       OR (cat = 'python_function' AND starts_with(name, 'nn.Module: '))
), a AS MATERIALIZED (   -- the anchors
    SELECT * FROM n WHERE anchor_kind <> 'launch' OR has_correlation
), ops AS MATERIALIZED (
    SELECT trace_id, thread_key, nest_pos, op_depth, event_id, name, ts_ns FROM n WHERE cat = 'cpu_op' AND can_enclose
), op1 AS (         -- innermost enclosing cpu_op
    SELECT a.trace_id, a.thread_key, a.event_id, o.event_id AS op_event_id, o.name AS op_name, o.nest_pos AS op_pos,
           o.ts_ns AS op_ts_ns
    FROM (SELECT trace_id, thread_key, event_id, nest_pos, op_depth FROM a WHERE op_depth > 0) a ASOF JOIN ops o
      ON a.trace_id = o.trace_id AND a.thread_key = o.thread_key
         AND a.op_depth - 1 = o.op_depth AND a.nest_pos > o.nest_pos
), top1 AS (        -- outermost enclosing cpu_op (launches and ops)
    SELECT a.trace_id, a.thread_key, a.event_id, o.event_id AS top_op_event_id, o.name AS top_op_name
    FROM (SELECT trace_id, thread_key, event_id, nest_pos FROM a WHERE op_depth > 0 AND anchor_kind IN ('launch', 'op')) a
    ASOF JOIN (SELECT * FROM ops WHERE op_depth = 0) o ON a.trace_id = o.trace_id AND a.thread_key = o.thread_key
       AND a.nest_pos > o.nest_pos
), mod1 AS (        -- innermost enclosing nn.Module frame
    SELECT a.trace_id, a.thread_key, a.event_id, m.event_id AS module_event_id
    FROM (SELECT trace_id, thread_key, event_id, nest_pos, module_depth FROM a WHERE module_depth > 0) a
    ASOF JOIN (SELECT trace_id, thread_key, nest_pos, module_depth, event_id FROM n
               WHERE anchor_kind = 'module' AND can_enclose) m
      ON a.trace_id = m.trace_id AND a.thread_key = m.thread_key
         AND a.module_depth - 1 = m.module_depth AND a.nest_pos > m.nest_pos
), ann1 AS (        -- innermost enclosing user_annotation (launches, annotations, modules)
    SELECT a.trace_id, a.thread_key, a.event_id, m.event_id AS annotation_event_id, m.name AS annotation_name
    FROM (SELECT trace_id, thread_key, event_id, nest_pos, annotation_depth FROM a
          WHERE annotation_depth > 0 AND anchor_kind <> 'op') a
    ASOF JOIN (SELECT trace_id, thread_key, nest_pos, annotation_depth, event_id, name FROM n
               WHERE cat = 'user_annotation' AND can_enclose) m
      ON a.trace_id = m.trace_id AND a.thread_key = m.thread_key
         AND a.annotation_depth - 1 = m.annotation_depth AND a.nest_pos > m.nest_pos
), step1 AS (       -- enclosing ProfilerStep#N
    SELECT a.trace_id, a.thread_key, a.event_id, m.event_id AS step_event_id, m.name AS step
    FROM (SELECT trace_id, thread_key, event_id, nest_pos, step_depth FROM a WHERE step_depth > 0) a
    ASOF JOIN (SELECT trace_id, thread_key, nest_pos, step_depth, event_id, name FROM n WHERE is_step AND can_enclose) m
      ON a.trace_id = m.trace_id AND a.thread_key = m.thread_key
         AND a.step_depth - 1 = m.step_depth AND a.nest_pos > m.nest_pos
), rt1 AS (         -- innermost enclosing runtime call (launches)
    SELECT a.trace_id, a.thread_key, a.event_id, m.event_id AS runtime_parent_event_id, m.nest_pos AS rt_pos
    FROM (SELECT trace_id, thread_key, event_id, nest_pos, runtime_depth FROM a
          WHERE runtime_depth > 0 AND anchor_kind = 'launch') a
    ASOF JOIN (SELECT trace_id, thread_key, nest_pos, runtime_depth, event_id FROM n
               WHERE anchor_kind = 'launch' AND can_enclose) m
      ON a.trace_id = m.trace_id AND a.thread_key = m.thread_key
         AND a.runtime_depth - 1 = m.runtime_depth AND a.nest_pos > m.nest_pos
), ctx AS MATERIALIZED (
    SELECT a.trace_id, a.event_id, a.cat, a.name, a.ts_ns, a.dur_ns, a.anchor_kind, a.thread_key, a.nest_pos,
           a.op_depth, a.module_depth,
           op1.op_event_id, op1.op_name, op1.op_pos, op1.op_ts_ns,
           CASE WHEN a.anchor_kind = 'op' AND a.op_depth = 0 THEN a.event_id ELSE top1.top_op_event_id END
               AS top_op_event_id,
           CASE WHEN a.anchor_kind = 'op' AND a.op_depth = 0 THEN a.name ELSE top1.top_op_name END AS top_op_name,
           mod1.module_event_id, ann1.annotation_event_id, ann1.annotation_name, step1.step_event_id, step1.step,
           rt1.runtime_parent_event_id, rt1.rt_pos
    FROM a
    LEFT JOIN op1 USING (trace_id, thread_key, event_id) LEFT JOIN top1 USING (trace_id, thread_key, event_id)
    LEFT JOIN mod1 USING (trace_id, thread_key, event_id) LEFT JOIN ann1 USING (trace_id, thread_key, event_id)
    LEFT JOIN step1 USING (trace_id, thread_key, event_id) LEFT JOIN rt1 USING (trace_id, thread_key, event_id)
), mods AS MATERIALIZED (
    SELECT trace_id, thread_key, event_id, substr(name, 12) AS module_name, module_event_id AS parent_id
    FROM ctx WHERE anchor_kind = 'module'
), paths(trace_id, thread_key, event_id, module_path) AS (
    SELECT trace_id, thread_key, event_id, module_name FROM mods WHERE parent_id IS NULL
    UNION ALL
    SELECT m.trace_id, m.thread_key, m.event_id, p.module_path || '/' || m.module_name
    FROM mods m JOIN paths p ON m.trace_id = p.trace_id AND m.thread_key = p.thread_key AND m.parent_id = p.event_id
), named_paths AS MATERIALIZED (
    SELECT p.trace_id, p.thread_key, p.event_id, p.module_path, m.module_name
    FROM paths p JOIN mods m USING (trace_id, thread_key, event_id)
), exec(trace_id, thread_key, event_id, cur_id, cur_name, cur_ts) AS (   -- `execute` ops: first enclosing non-execute op
    SELECT trace_id, thread_key, event_id, op_event_id, op_name, op_ts_ns FROM ctx
    WHERE anchor_kind = 'op' AND name = 'execute'
    UNION ALL
    SELECT x.trace_id, x.thread_key, x.event_id, c.op_event_id, c.op_name, c.op_ts_ns
    FROM exec x JOIN ctx c ON c.trace_id = x.trace_id AND c.thread_key = x.thread_key AND c.event_id = x.cur_id
    WHERE x.cur_name = 'execute'
), exec_resolved AS (
    SELECT trace_id, thread_key, event_id, cur_id AS resolved_id, cur_name AS resolved_name, cur_ts AS resolved_ts_ns
    FROM exec WHERE cur_name IS DISTINCT FROM 'execute'
), tl AS (
    SELECT c.*, x.resolved_id, x.resolved_name, x.resolved_ts_ns,
           CASE WHEN c.anchor_kind <> 'launch' THEN NULL
                WHEN c.op_event_id IS NULL OR c.rt_pos > c.op_pos THEN 'self'
                WHEN c.op_name = 'execute' AND x.resolved_id IS NULL THEN 'self'
                WHEN c.op_name = 'execute' THEN 'resolved'
                ELSE 'op' END AS tl_rule
    FROM ctx c
    LEFT JOIN exec_resolved x ON x.trace_id = c.trace_id AND x.thread_key = c.thread_key AND x.event_id = c.op_event_id
)
SELECT c.trace_id, c.event_id, c.cat, c.name, c.ts_ns, c.dur_ns, c.anchor_kind,
       c.op_event_id, c.op_name, c.top_op_event_id, c.top_op_name, c.module_event_id,
       p.module_path, p.module_name,
       c.annotation_event_id, c.annotation_name, c.step_event_id, c.step, c.runtime_parent_event_id,
       CASE c.tl_rule WHEN 'self' THEN c.event_id WHEN 'resolved' THEN c.resolved_id WHEN 'op' THEN c.op_event_id
       END AS tl_launcher_event_id,
       CASE c.tl_rule WHEN 'self' THEN c.name WHEN 'resolved' THEN c.resolved_name WHEN 'op' THEN c.op_name
       END AS tl_launcher_name,
       CASE c.tl_rule WHEN 'self' THEN c.ts_ns WHEN 'resolved' THEN c.resolved_ts_ns WHEN 'op' THEN c.op_ts_ns
       END AS tl_launcher_ts_ns,
       c.op_depth, c.module_depth, c.thread_key, c.nest_pos
FROM tl c
LEFT JOIN named_paths p ON p.trace_id = c.trace_id AND p.thread_key = c.thread_key
     AND p.event_id = CASE WHEN c.anchor_kind = 'module' THEN c.event_id ELSE c.module_event_id END;

-- module_instances: one row per `nn.Module: X_N` python_function frame (one call of one module instance).
--   trace_id, event_id       the frame
--   module_name              the name without the `nn.Module: ` prefix (class name and instance index)
--   module_class             module_name without its trailing `_N` instance index
--   parent_module_event_id   the enclosing nn.Module frame (NULL for an outermost module)
--   module_path              enclosing modules' names and its own, outermost first, joined by '/'
--   module_level             number of enclosing nn.Module frames (0 for an outermost module)
--   step                     the `ProfilerStep#N` annotation around it, if any
--   ts_ns, dur_ns            start and duration of the call, ns
CREATE OR REPLACE VIEW module_instances AS
SELECT trace_id, event_id, module_name, regexp_replace(module_name, '_[0-9]+$', '') AS module_class,
       module_event_id AS parent_module_event_id, module_path, module_depth AS module_level,
       step, ts_ns, dur_ns
FROM cpu_event_context WHERE anchor_kind = 'module';

-- Helper: the innermost gpu_user_annotation around each GPU event on its own stream (same pid/tid),
-- from a running count of open annotations with the GPU events as probes.
CREATE OR REPLACE VIEW _tree_gpu_annotation AS
WITH g AS MATERIALIZED (
    SELECT trace_id, pid, tid, event_id, ts_ns, ts_ns + dur_ns AS end_ns, name
    FROM gpu_user_annotations WHERE ts_ns IS NOT NULL AND dur_ns > 0
), b AS (
    SELECT trace_id, pid, tid, ts_ns AS t, 1 AS kind, -end_ns AS neg_end, 0 AS probe, event_id, 1 AS delta
    FROM g
    UNION ALL
    SELECT trace_id, pid, tid, end_ns, 0, 0, 0, NULL, -1 FROM g
    UNION ALL
    SELECT trace_id, pid, tid, ts_ns, 1, 0, 1, event_id, 0 FROM kernels
    WHERE (trace_id, pid, tid) IN (SELECT trace_id, pid, tid FROM g)
), d AS MATERIALIZED (
    SELECT * FROM (
        SELECT *, sum(delta) OVER w - delta AS depth, row_number() OVER w AS pos FROM b
        WINDOW w AS (PARTITION BY trace_id, pid, tid ORDER BY t, kind, neg_end, probe, event_id
                     ROWS UNBOUNDED PRECEDING))
    WHERE kind = 1
)
SELECT k.trace_id, k.event_id, g.name AS gpu_annotation_name, g.event_id AS gpu_annotation_event_id
FROM (SELECT * FROM d WHERE probe = 1 AND depth > 0) k
ASOF JOIN (SELECT * FROM d WHERE probe = 0) a
  ON k.trace_id = a.trace_id AND k.pid = a.pid AND k.tid = a.tid AND k.depth - 1 = a.depth AND k.pos > a.pos
JOIN g ON g.trace_id = a.trace_id AND g.event_id = a.event_id;

-- gpu_event_ops: one row per row of `kernels` (every GPU event, unlinked ones included) with the call
-- tree above it.
--   trace_id, event_id, name, cat, device, stream, ts_ns, dur_ns, correlation   the GPU event
--   launch_event_id, launch_name   the runtime/driver call that launched it (gpu_launch_links)
--   linked, tl_linked, link_via    as in gpu_launch_links
--   op_event_id, op_name           innermost cpu_op enclosing the launch (Python frames skipped)
--   top_op_event_id, top_op_name   outermost cpu_op enclosing the launch
--   module_event_id                innermost `nn.Module: ...` frame enclosing the launch
--   module_path, module_name       nn.Module stack as text (outermost first, '/'-joined), innermost name
--   annotation_event_id, annotation_name   innermost user_annotation enclosing the launch
--   gpu_annotation_name            innermost gpu_user_annotation on the GPU event's own stream
--   step                           name of the `ProfilerStep#N` annotation enclosing the launch, or NULL
--   capture_trace_id, capture_launch_event_id   for a GPU event replayed by a CUDA/HIP graph whose
--                                  capture trace is in the dataset: the call that recorded it
--                                  (graph_capture_links); NULL otherwise
--   capture_op_name, capture_module_path   innermost cpu_op / nn.Module path around that call
--   tl_launcher_trace_id, tl_launcher_event_id, tl_launcher_name   TraceLens's launcher (PEERS.md): from
--                                  the launch (for a graph replay with a capture: from the capture call,
--                                  inside the capture root) the first enclosing cpu_op not named `execute`,
--                                  else the call itself; NULL for NCCL/RCCL kernels (name contains 'nccl')
--                                  and for events that are not tl_linked. The launcher lives in
--                                  tl_launcher_trace_id (the capture trace for merged graph replays).
--   tl_parent_cpu_op               TraceLens's "Parent cpu_op" (kernel_summary): the innermost cpu_op
--                                  around the (capture) call, else the call's name; NULL when not tl_linked
--   is_nccl                        the name contains 'nccl' (any case)
--   pid, tid, launch_pid, launch_tid, launch_ts_ns, launch_dur_ns, launch_kind   as in gpu_launch_links
--   capture_launch_ts_ns           start of capture_launch_event_id, ns (capture trace clock)
--   tl_launcher_ts_ns              start of tl_launcher_event_id, ns (clock of tl_launcher_trace_id)
CREATE OR REPLACE VIEW gpu_event_ops AS
WITH c AS MATERIALIZED (
    SELECT * FROM cpu_event_context WHERE anchor_kind = 'launch'
)
SELECT l.trace_id, l.event_id, l.name, l.cat, l.device, l.stream, l.ts_ns, l.dur_ns, l.correlation,
       l.launch_event_id, l.launch_name, l.linked, l.tl_linked, l.link_via,
       c.op_event_id, c.op_name, c.top_op_event_id, c.top_op_name,
       c.module_event_id, c.module_path, c.module_name,
       c.annotation_event_id, c.annotation_name, ga.gpu_annotation_name, c.step,
       gc.capture_trace_id, gc.capture_launch_event_id, cc.op_name AS capture_op_name,
       cc.module_path AS capture_module_path,
       CASE WHEN l.tl_linked AND NOT contains(lower(l.name), 'nccl')
            THEN coalesce(gc.capture_trace_id, l.trace_id) END AS tl_launcher_trace_id,
       CASE WHEN NOT l.tl_linked OR contains(lower(l.name), 'nccl') THEN NULL
            WHEN gc.capture_launch_event_id IS NULL THEN c.tl_launcher_event_id
            WHEN cc.tl_launcher_ts_ns < gc.capture_root_ts_ns THEN cc.event_id
            ELSE cc.tl_launcher_event_id END AS tl_launcher_event_id,
       CASE WHEN NOT l.tl_linked OR contains(lower(l.name), 'nccl') THEN NULL
            WHEN gc.capture_launch_event_id IS NULL THEN c.tl_launcher_name
            WHEN cc.tl_launcher_ts_ns < gc.capture_root_ts_ns THEN cc.name
            ELSE cc.tl_launcher_name END AS tl_launcher_name,
       CASE WHEN NOT l.tl_linked THEN NULL
            WHEN gc.capture_launch_event_id IS NULL THEN coalesce(c.op_name, l.launch_name)
            ELSE coalesce(cc.op_name, cc.name) END AS tl_parent_cpu_op,
       contains(lower(l.name), 'nccl') AS is_nccl,
       l.pid, l.tid, l.launch_pid, l.launch_tid, l.launch_ts_ns, l.launch_dur_ns, l.launch_kind,
       cc.ts_ns AS capture_launch_ts_ns,
       CASE WHEN NOT l.tl_linked OR contains(lower(l.name), 'nccl') THEN NULL
            WHEN gc.capture_launch_event_id IS NULL THEN c.tl_launcher_ts_ns
            WHEN cc.tl_launcher_ts_ns < gc.capture_root_ts_ns THEN cc.ts_ns
            ELSE cc.tl_launcher_ts_ns END AS tl_launcher_ts_ns
FROM gpu_launch_links l
LEFT JOIN c ON c.trace_id = l.trace_id AND c.event_id = l.launch_event_id
LEFT JOIN _tree_gpu_annotation ga ON ga.trace_id = l.trace_id AND ga.event_id = l.event_id
LEFT JOIN graph_capture_links gc ON gc.trace_id = l.trace_id AND gc.event_id = l.event_id
LEFT JOIN c cc ON cc.trace_id = gc.capture_trace_id AND cc.event_id = gc.capture_launch_event_id;
