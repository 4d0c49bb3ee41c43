-- tree/context — every GPU event attributed up the four layers:
-- nn.Module (Python front end) -> dispatcher op (cpu_op) -> runtime launch -> GPU event.
--
-- The enclosing events come from cpu_nesting (tree/nesting): "the innermost cpu_op around a call"
-- is its closest cpu_op ancestor in that tree (Python frames and annotations in between are skipped).
-- For every family (cpu_ops, nn.Module frames, user_annotations, ProfilerStep annotations, runtime calls)
-- the innermost member around an event is passed down the parent links of cpu_nesting, all families at
-- once and one depth level at a time: an event's innermost enclosing cpu_op is its parent if the parent is
-- a cpu_op, else its parent's innermost enclosing cpu_op. No per-event loops and no walk up the tree.
--
-- @requires tree/nesting
-- @stores cpu_event_context FROM _cpu_event_context_build
-- @build-temp _tree_context_names UNTIL cpu_event_context
-- @build-temp _tree_context_nodes UNTIL _tree_context_walk
-- @build-levels _tree_context_walk BY _tree_context_level OVER _tree_context_nodes
-- @build-temp _tree_context_walk UNTIL _tree_context
-- @build-temp _tree_context UNTIL cpu_event_context
-- @build-temp _tree_module_paths UNTIL cpu_event_context

-- Helper: the names the context carries (of cpu_ops and user_annotations), each with an integer id, so that
-- the walk below passes integers and the names are looked up once at the end.
CREATE OR REPLACE VIEW _tree_context_names AS
SELECT name, row_number() OVER (ORDER BY name) AS name_id
FROM (SELECT DISTINCT name FROM events WHERE cat IN ('cpu_op', 'user_annotation') AND dur_ns IS NOT NULL);

-- Helper: the tree of cpu_nesting, narrow, with each event's family flags as a bit set (fam): the bits of
-- _tree_family_flags (tree/nesting: 1 cpu_op, 2 nn.Module frame, 4 user_annotation, 8 ProfilerStep#N
-- range, 16 runtime/driver call); name_id (_tree_context_names) for cpu_ops and user_annotations.
CREATE OR REPLACE VIEW _tree_context_nodes AS
SELECT n.trace_id, n.event_id, n.parent_event_id, n.depth,
       _tree_family_flags(e.cat, e.name) AS fam, nm.name_id
FROM cpu_nesting n JOIN events e ON e.trace_id = n.trace_id AND e.event_id = n.event_id
LEFT JOIN _tree_context_names nm ON nm.name = e.name AND e.cat IN ('cpu_op', 'user_annotation');

-- _tree_context_root(): the context of an event at depth 0 (nothing encloses it).
-- _tree_context_inherit(fam, event_id, name_id, ctx): the context of a child of the event (fam, event_id,
-- name_id) whose own context is ctx. A context holds, for every family, the innermost enclosing member
-- (op_id, module_id, annotation_id, step_id, runtime_id), the outermost enclosing cpu_op (top_op_id) and the
-- name ids of the ops and annotations among them (*_name_id).
CREATE OR REPLACE MACRO _tree_context_root() AS
    {'op_id': NULL::BIGINT, 'top_op_id': NULL::BIGINT, 'module_id': NULL::BIGINT, 'annotation_id': NULL::BIGINT,
     'step_id': NULL::BIGINT, 'runtime_id': NULL::BIGINT, 'op_name_id': NULL::BIGINT,
     'top_op_name_id': NULL::BIGINT, 'annotation_name_id': NULL::BIGINT, 'step_name_id': NULL::BIGINT};
CREATE OR REPLACE MACRO _tree_context_inherit(fam, event_id, name_id, ctx) AS
    {'op_id': CASE WHEN fam & 1 <> 0 THEN event_id ELSE ctx.op_id END,
     'top_op_id': CASE WHEN fam & 1 <> 0 AND ctx.top_op_id IS NULL THEN event_id ELSE ctx.top_op_id END,
     'module_id': CASE WHEN fam & 2 <> 0 THEN event_id ELSE ctx.module_id END,
     'annotation_id': CASE WHEN fam & 4 <> 0 THEN event_id ELSE ctx.annotation_id END,
     'step_id': CASE WHEN fam & 8 <> 0 THEN event_id ELSE ctx.step_id END,
     'runtime_id': CASE WHEN fam & 16 <> 0 THEN event_id ELSE ctx.runtime_id END,
     'op_name_id': CASE WHEN fam & 1 <> 0 THEN name_id ELSE ctx.op_name_id END,
     'top_op_name_id': CASE WHEN fam & 1 <> 0 AND ctx.top_op_id IS NULL THEN name_id ELSE ctx.top_op_name_id END,
     'annotation_name_id': CASE WHEN fam & 4 <> 0 THEN name_id ELSE ctx.annotation_name_id END,
     'step_name_id': CASE WHEN fam & 8 <> 0 THEN name_id ELSE ctx.step_name_id END};

-- Helper: the context (see above) of every event of cpu_nesting, passed down the parent links one depth
-- level per step of a recursive walk: an event's innermost enclosing cpu_op is its parent if the parent is
-- a cpu_op, else its parent's innermost enclosing cpu_op (and so on for every family).
CREATE OR REPLACE VIEW _tree_context_walk AS
WITH RECURSIVE nodes AS MATERIALIZED (   -- computed once, not at every step of the walk
    SELECT * FROM _tree_context_nodes
), walk(trace_id, event_id, depth, fam, name_id, ctx) AS (
    SELECT trace_id, event_id, depth, fam, name_id, _tree_context_root() FROM nodes
    WHERE depth = 0
    UNION ALL
    SELECT n.trace_id, n.event_id, n.depth, n.fam, n.name_id,
           _tree_context_inherit(w.fam, w.event_id, w.name_id, w.ctx)
    FROM walk w JOIN nodes n
      ON n.trace_id = w.trace_id AND n.parent_event_id = w.event_id AND n.depth = w.depth + 1
)
SELECT * FROM walk;

-- _tree_context_level(d): the rows of _tree_context_walk at depth d, from those at depth d - 1. `tracesql
-- ingest` builds _tree_context_walk as a table level by level with it (the recursive view holds every
-- level in memory at once; a table of levels spills to disk, so the build's memory does not grow with the
-- trace).
CREATE OR REPLACE MACRO _tree_context_level(d) AS TABLE
SELECT trace_id, event_id, depth, fam, name_id, _tree_context_root() AS ctx FROM _tree_context_nodes
WHERE d = 0 AND depth = 0
UNION ALL
SELECT n.trace_id, n.event_id, n.depth, n.fam, n.name_id,
       _tree_context_inherit(w.fam, w.event_id, w.name_id, w.ctx)
FROM _tree_context_walk w JOIN _tree_context_nodes n
  ON n.trace_id = w.trace_id AND n.parent_event_id = w.event_id AND n.depth = w.depth + 1
WHERE d > 0 AND w.depth = d - 1 AND n.depth = d;

-- Helper: the anchors of cpu_event_context (below) with the ids of what encloses them (_tree_context_walk):
-- op_id, top_op_id, module_id, annotation_id, step_id, runtime_id as the columns *_event_id below (NULL
-- where not computed); the name ids (_tree_context_names) of op_id, top_op_id, annotation_id and step_id.
CREATE OR REPLACE VIEW _tree_context AS
SELECT c.trace_id, c.event_id, c.cat, c.name, c.ts_ns, c.dur_ns, c.anchor_kind, c.op_depth, c.module_depth,
       c.thread_key, c.nest_pos, w.ctx.op_id AS op_id, w.ctx.module_id AS module_id, w.ctx.step_id AS step_id,
       CASE WHEN c.anchor_kind = 'op' THEN coalesce(w.ctx.top_op_id, c.event_id)
            WHEN c.anchor_kind = 'launch' THEN w.ctx.top_op_id END AS top_op_id,
       CASE WHEN c.anchor_kind <> 'op' THEN w.ctx.annotation_id END AS annotation_id,
       CASE WHEN c.anchor_kind = 'launch' THEN w.ctx.runtime_id END AS runtime_id,
       w.ctx.op_name_id AS op_name_id, w.ctx.step_name_id AS step_name_id,
       CASE WHEN c.anchor_kind = 'op' THEN CASE WHEN w.ctx.top_op_id IS NULL THEN w.name_id
                                                 ELSE w.ctx.top_op_name_id END
            WHEN c.anchor_kind = 'launch' THEN w.ctx.top_op_name_id END AS top_op_name_id,
       CASE WHEN c.anchor_kind <> 'op' THEN w.ctx.annotation_name_id END AS annotation_name_id
FROM (SELECT n.trace_id, n.event_id, e.cat, e.name, e.ts_ns, n.end_ns - e.ts_ns AS dur_ns, n.op_depth,
             n.module_depth, n.thread_key, n.nest_pos,
             CASE WHEN e.cat = 'cpu_op' THEN 'op'
                  WHEN e.cat = 'python_function' THEN 'module'
                  WHEN e.cat IN ('cuda_runtime', 'cuda_driver') THEN 'launch'
                  ELSE 'annotation' END AS anchor_kind
      FROM cpu_nesting n JOIN events e ON e.trace_id = n.trace_id AND e.event_id = n.event_id
      WHERE e.cat IN ('cpu_op', 'user_annotation')
         OR (e.cat = 'python_function' AND starts_with(e.name, 'nn.Module: '))
         OR (e.cat IN ('cuda_runtime', 'cuda_driver') AND n.has_correlation)) c
JOIN _tree_context_walk w USING (trace_id, event_id);

-- Helper: every nn.Module frame's path (see module_path below), along the module parents of _tree_context.
CREATE OR REPLACE VIEW _tree_module_paths AS
WITH RECURSIVE mods AS MATERIALIZED (
    SELECT trace_id, thread_key, event_id, substr(name, 12) AS module_name, module_id AS parent_id
    FROM _tree_context WHERE anchor_kind = 'module'
), paths(trace_id, thread_key, event_id, module_path) AS (
    SELECT trace_id, thread_key, event_id, module_name FROM mods WHERE parent_id IS NULL
    UNION ALL
    SELECT m.trace_id, m.thread_key, m.event_id, p.module_path || '/' || m.module_name
    FROM mods m JOIN paths p ON m.trace_id = p.trace_id AND m.thread_key = p.thread_key AND m.parent_id = p.event_id
)
SELECT p.trace_id, p.thread_key, p.event_id, p.module_path, m.module_name
FROM paths p JOIN mods m USING (trace_id, thread_key, event_id);

-- cpu_event_context (stored table, see tracesql/store/schema.py): one row per cpu_op, per `nn.Module: ...`
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
--   op_depth, module_depth   number of enclosing cpu_ops / nn.Module frames
--   thread_key, nest_pos     as in cpu_nesting
CREATE OR REPLACE VIEW _cpu_event_context_build AS
SELECT c.trace_id, c.event_id, c.cat, c.name, c.ts_ns, c.dur_ns, c.anchor_kind,
       c.op_id AS op_event_id, o.name AS op_name, c.top_op_id AS top_op_event_id, t.name AS top_op_name,
       c.module_id AS module_event_id, p.module_path, p.module_name,
       c.annotation_id AS annotation_event_id, an.name AS annotation_name, c.step_id AS step_event_id,
       st.name AS step, c.runtime_id AS runtime_parent_event_id,
       c.op_depth, c.module_depth, c.thread_key, c.nest_pos
FROM _tree_context c
LEFT JOIN _tree_context_names o ON o.name_id = c.op_name_id
LEFT JOIN _tree_context_names t ON t.name_id = c.top_op_name_id
LEFT JOIN _tree_context_names an ON an.name_id = c.annotation_name_id
LEFT JOIN _tree_context_names st ON st.name_id = c.step_name_id
LEFT JOIN _tree_module_paths p ON p.trace_id = c.trace_id AND p.thread_key = c.thread_key
     AND p.event_id = CASE WHEN c.anchor_kind = 'module' THEN c.event_id ELSE c.module_id END;

-- module_instances: one row per `nn.Module: X_N` python_function frame (one call of one module instance).
--   trace_id, event_id       the frame
--   module_name              the name without the `nn.Module: ` prefix (class name and instance index)
--   module_class             module_name without its trailing `_N` instance index
--   parent_module_event_id   the enclosing nn.Module frame (NULL for an outermost module)
--   module_path              enclosing modules' names and its own, outermost first, joined by '/'
--   module_level             number of enclosing nn.Module frames (0 for an outermost module)
--   step                     the `ProfilerStep#N` annotation around it, if any
--   ts_ns, dur_ns            start and duration of the call, ns
-- @materialize tree
CREATE OR REPLACE VIEW module_instances AS
SELECT trace_id, event_id, module_name, regexp_replace(module_name, '_[0-9]+$', '') AS module_class,
       module_event_id AS parent_module_event_id, module_path, module_depth AS module_level,
       step, ts_ns, dur_ns
FROM cpu_event_context WHERE anchor_kind = 'module';
