-- tree/nesting — the call stack of every CPU thread, rebuilt from timestamps in set-based SQL.
--
-- Rule (our native definition; every tree view uses it):
--   * Nesting is per thread (trace_id, pid, tid). Events are taken in "nesting order": by start,
--     longer first on equal starts (ts_ns, end desc), host ranges before Python frames, then event_id.
--   * Two families: host ranges (cpu_op, user_annotation, cuda_runtime, cuda_driver and any other
--     category) and Python frames (python_function). Each is written by one recorder with one clock and
--     is meant to be a stack on its own.
--   * Overrun inside the Python family: a frame that ends after its Python parent (the frame its
--     `Python parent id` names, when that frame is open at its start) is clipped to the parent's end.
--     Generator and context-manager frames break the stack in real traces: `<built-in function next>`
--     starting 1 µs into a 227 µs `contextlib.py(132): __enter__` is recorded as lasting 305 ms, with
--     Inductor's cudagraph_trees.py frames inside it. Frames without Python ids (JAX) are not clipped
--     this way.
--   * Overrun inside the host family (a child that ends after its parent, e.g. a few hundred ns of
--     clock jitter between a CUPTI runtime call and its op): the child is clipped to its parent's end.
--   * Python frames never break host ranges. A frame that starts inside host range A and ends after A
--     is clipped to A's end. A frame inside which a host range B starts and that ends before B ends is
--     clipped to B's start (so B is not its child). Real traces need both: `ProfilerStep#N` starts
--     inside the Python call `_record_function_enter_new` and outlives it by 47 ms; the frame
--     `profiler.py(...): step` starts inside `ProfilerStep#N` and ends after it; torch.compile's
--     `RecordFunctionFast.__enter__` overlaps the cpu_op it opens by 20 µs; 190-620 ns overlaps between
--     Python frames and cpu_ops are common.
--   * Zero-duration events are leaves: they nest inside whatever is open at their start and never
--     contain anything. An event that starts exactly when another ends is not inside it.
--   * After clipping the intervals are laminar: depth is a running sum over the sorted start/end
--     boundaries (ends before starts at equal times), and the parent is found with an ASOF join to the
--     latest earlier event one level up. The family depths (op_depth, ...) are running sums of the same
--     boundaries, counting only the members of the family: the open events at a start are its ancestors.
-- Two sorts of the boundaries in all (raw, then clipped). ts_ns/dur_ns are never changed; nest_end_ns is
-- the end used for nesting.
--
-- @stores cpu_nesting FROM _cpu_nesting_build
-- @build-temp _tree_threads UNTIL cpu_nesting
-- @build-temp _tree_clip UNTIL _tree_nest_order
-- @build-temp _tree_nest_order UNTIL _tree_parents
-- @build-temp _tree_parents UNTIL cpu_nesting

-- Helper: an exact integer key per CPU thread (trace_id, pid, tid), unique across traces, so the sorts below
-- compare integers (thread_key), and the thread's number within its trace (trace_thread_key, stored).
CREATE OR REPLACE VIEW _tree_threads AS
SELECT trace_id, pid, tid, row_number() OVER (ORDER BY trace_id, pid, tid) AS thread_key,
       row_number() OVER (PARTITION BY trace_id ORDER BY pid, tid) AS trace_thread_key
FROM (SELECT DISTINCT trace_id, pid, tid FROM events WHERE dur_ns IS NOT NULL);

-- _tree_family_flags(cat, name): the families an event belongs to, as a bit set: 1 cpu_op, 2 nn.Module frame,
-- 4 user_annotation, 8 ProfilerStep#N range, 16 runtime/driver call (the families counted by cpu_nesting's
-- *_depth columns and passed down by the op context, tree/context).
CREATE OR REPLACE MACRO _tree_family_flags(cat, name) AS
    (CASE WHEN cat = 'cpu_op' THEN 1 ELSE 0 END
     + CASE WHEN cat = 'python_function' AND starts_with(name, 'nn.Module: ') THEN 2 ELSE 0 END
     + CASE WHEN cat = 'user_annotation' THEN 4 ELSE 0 END
     + CASE WHEN cat IN ('user_annotation', 'cpu_op') AND starts_with(name, 'ProfilerStep#') THEN 8 ELSE 0 END
     + CASE WHEN cat IN ('cuda_runtime', 'cuda_driver') THEN 16 ELSE 0 END)::UTINYINT;

-- Helper: every CPU duration event that takes part in nesting, with its family flags: grp (0 host range,
-- 1 Python frame) and fam (_tree_family_flags), and the Python ids of frames.
CREATE OR REPLACE VIEW _tree_slices AS
SELECT t.thread_key, t.trace_thread_key, e.trace_id, e.event_id, e.pid, e.tid, e.cat, e.name, e.ts_ns,
       e.correlation IS NOT NULL AS has_correlation, greatest(e.dur_ns, 0) AS dur_ns,
       e.ts_ns + greatest(e.dur_ns, 0) AS end_ns,
       CASE WHEN e.cat = 'python_function' THEN 1 ELSE 0 END AS grp,
       _tree_family_flags(e.cat, e.name) AS fam, e.python_id, e.python_parent_id
FROM events e JOIN _tree_threads t USING (trace_id, pid, tid)
WHERE e.ts_ns IS NOT NULL AND e.dur_ns IS NOT NULL AND e.event_id IS NOT NULL;

-- Helper: pass 1 over the raw boundaries, Python frames first clipped to their Python parent's end. For
-- every event: the number of host ranges open at its start (hdepth), the host range one level up (the host
-- parent of a host range; the innermost host range around a Python frame), and for frames the host range
-- that starts inside them one level deeper and is still open at their end. nest_end_ns applies the clipping rules above; ts_ns, grp and fam are passed on so
-- that pass 2 reads this table alone.
CREATE OR REPLACE VIEW _tree_clip AS
WITH s0 AS MATERIALIZED (
    SELECT thread_key, event_id, ts_ns, end_ns, grp, fam, python_id, python_parent_id FROM _tree_slices
), parents AS (   -- Python frames by their Python id (the first frame with the id, should ids repeat)
    SELECT thread_key, python_id, arg_min(ts_ns, event_id) AS p_ts_ns, arg_min(end_ns, event_id) AS p_end_ns
    FROM s0 WHERE grp = 1 AND python_id IS NOT NULL GROUP BY thread_key, python_id
), s AS MATERIALIZED (   -- Python frames clipped to the end of their recorded Python parent
    SELECT s0.thread_key, s0.event_id, s0.ts_ns, s0.grp, s0.fam,
           CASE WHEN p.p_ts_ns <= s0.ts_ns AND p.p_end_ns > s0.ts_ns THEN least(s0.end_ns, p.p_end_ns)
                ELSE s0.end_ns END AS end_ns
    FROM s0 LEFT JOIN parents p
      ON s0.grp = 1 AND p.thread_key = s0.thread_key AND p.python_id = s0.python_parent_id
), b AS (
    SELECT thread_key, ts_ns AS t, 1 AS kind, -end_ns AS neg_end, grp, event_id, end_ns, fam,
           CASE WHEN grp = 0 AND end_ns > ts_ns THEN 1 ELSE 0 END AS dh
    FROM s
    UNION ALL
    SELECT thread_key, end_ns, 0, 0, 0, NULL, NULL, NULL, -1 FROM s WHERE grp = 0 AND end_ns > ts_ns
), d AS MATERIALIZED (
    SELECT thread_key, t, grp, event_id, end_ns, fam, dh, hdepth, pos FROM (
        SELECT *, (sum(dh) OVER w - dh)::INTEGER AS hdepth, row_number() OVER w AS pos
        FROM b
        WINDOW w AS (ORDER BY thread_key, t, kind, neg_end, grp, event_id
                     ROWS UNBOUNDED PRECEDING))
    WHERE kind = 1
), hosts AS (
    SELECT thread_key, pos, hdepth, t, end_ns FROM d WHERE dh = 1
), a AS (   -- host range one level up (open at the start)
    SELECT c.thread_key, c.event_id, c.t, c.grp, c.fam, c.end_ns, c.hdepth, h.end_ns AS a_end_ns
    FROM (SELECT thread_key, event_id, t, grp, fam, end_ns, hdepth, pos FROM d) c ASOF LEFT JOIN hosts h
      ON c.thread_key = h.thread_key AND c.hdepth - 1 = h.hdepth AND c.pos > h.pos
), ab AS (  -- frames only: latest host range at the frame's host depth that starts before the frame ends
    SELECT a.thread_key, a.event_id, a.t, a.fam, a.end_ns, a.a_end_ns, h.t AS b_ts_ns, h.end_ns AS b_end_ns
    FROM (SELECT * FROM a WHERE grp = 1) a ASOF LEFT JOIN hosts h
      ON a.thread_key = h.thread_key AND a.hdepth = h.hdepth AND a.end_ns > h.t
)
SELECT thread_key, event_id, t AS ts_ns, 0 AS grp, fam, least(end_ns, coalesce(a_end_ns, end_ns)) AS nest_end_ns
FROM a WHERE grp = 0
UNION ALL
SELECT thread_key, event_id, t, 1, fam,
       CASE WHEN a_end_ns < end_ns THEN a_end_ns
            WHEN b_end_ns > end_ns THEN b_ts_ns
            ELSE end_ns END
FROM ab;

-- Helper: pass 2 over the clipped boundaries: every event's depth, family depths and nesting position.
-- After clipping the intervals are laminar, so the events open at an event's start are its ancestors: the
-- running sum of +1 (start) / -1 (end) over the boundaries counts them (depth), and the same running sum of
-- the family flags counts the ancestors of each family. All six counts travel in one HUGEINT running sum
-- (_tree_nest_packed: depth in the low 27 bits, then 20 bits per family, so no field can carry into the
-- next while depth < 2^20, which is checked).
CREATE OR REPLACE MACRO _tree_nest_packed(fam) AS
    1::HUGEINT + ((fam & 1)::HUGEINT << 27) + (((fam >> 1) & 1)::HUGEINT << 47)
    + (((fam >> 2) & 1)::HUGEINT << 67) + (((fam >> 3) & 1)::HUGEINT << 87) + (((fam >> 4) & 1)::HUGEINT << 107);

CREATE OR REPLACE MACRO _tree_nest_field(packed, shift, bits) AS
    ((packed >> shift) & ((1::HUGEINT << bits) - 1))::INTEGER;

CREATE OR REPLACE VIEW _tree_nest_order AS
WITH s AS MATERIALIZED (
    SELECT thread_key, event_id, ts_ns, grp, fam, nest_end_ns,
           CASE WHEN nest_end_ns > ts_ns THEN 1 ELSE 0 END AS pos_dur
    FROM _tree_clip
), b AS (
    SELECT thread_key, ts_ns AS t, 1 AS kind, -nest_end_ns AS neg_end, grp, event_id, fam, pos_dur,
           CASE WHEN pos_dur = 1 THEN _tree_nest_packed(fam) ELSE 0 END AS d
    FROM s
    UNION ALL
    SELECT thread_key, nest_end_ns, 0, 0, 0, NULL, NULL, NULL, -_tree_nest_packed(fam)
    FROM s WHERE pos_dur = 1
)
SELECT thread_key, event_id, t AS ts_ns, -neg_end AS nest_end_ns, fam, pos_dur AS can_enclose,
       CASE WHEN _tree_nest_field(open, 0, 27) < 1048576 THEN _tree_nest_field(open, 0, 27)
            ELSE error('tracesql: a call stack deeper than 2^20 events cannot be nested') END AS depth,
       _tree_nest_field(open, 27, 20) AS op_depth, _tree_nest_field(open, 47, 20) AS module_depth,
       _tree_nest_field(open, 67, 20) AS annotation_depth, _tree_nest_field(open, 87, 20) AS step_depth,
       _tree_nest_field(open, 107, 20) AS runtime_depth, nest_pos
FROM (
    SELECT thread_key, t, kind, neg_end, event_id, fam, pos_dur, sum(d) OVER w - d AS open,
           row_number() OVER w AS nest_pos
    FROM b
    WINDOW w AS (PARTITION BY thread_key ORDER BY t, kind, neg_end, grp, event_id ROWS UNBOUNDED PRECEDING))
WHERE kind = 1;

-- Helper: every event's parent, depth, family depths and nesting position: an ASOF join (on narrow columns)
-- to the latest earlier event one level up that can enclose.
CREATE OR REPLACE VIEW _tree_parents AS
WITH d AS MATERIALIZED (
    SELECT * FROM _tree_nest_order
)
SELECT thread_key, event_id, nest_end_ns, NULL::BIGINT AS parent_event_id, depth::INTEGER AS depth, op_depth,
       module_depth, annotation_depth, step_depth, runtime_depth, nest_pos
FROM d WHERE depth = 0
UNION ALL
SELECT c.thread_key, c.event_id, c.nest_end_ns, q.event_id, c.depth::INTEGER, c.op_depth, c.module_depth,
       c.annotation_depth, c.step_depth, c.runtime_depth, c.nest_pos
FROM (SELECT * EXCLUDE (ts_ns, fam, can_enclose) FROM d WHERE depth > 0) c
ASOF JOIN (SELECT thread_key, depth, nest_pos, event_id FROM d WHERE can_enclose = 1) q
  ON c.thread_key = q.thread_key AND c.depth - 1 = q.depth AND c.nest_pos > q.nest_pos;

-- cpu_nesting (stored table, see tracesql/store/schema.py): one row per CPU duration event (every row of `events`
-- with a duration) and its place in the call stack of its thread, under the rule at the top of this file.
-- `tracesql ingest` computes it once per trace with the view below (_cpu_nesting_build) and stores the rows
-- as DATASET/traces/trace_id=<id>/cpu_nesting/; `SELECT * FROM _cpu_nesting_build` recomputes it.
--   trace_id, event_id      the event (join key; its pid, tid, cat, name, ts_ns and dur_ns are in `events`, their
--                           one home)
--   end_ns                  its end as recorded: ts_ns + dur_ns (ns; a negative duration reads as 0)
--   nest_end_ns             end used for nesting: end_ns, or earlier when clipped (see the rule)
--   clipped                 nest_end_ns < end_ns
--   parent_event_id         the innermost event that encloses this one on its thread (NULL for a root)
--   depth                   number of enclosing events (0 for a root)
--   op_depth                number of enclosing cpu_op events
--   module_depth            number of enclosing `nn.Module: ...` python_function frames
--   annotation_depth        number of enclosing user_annotation ranges
--   step_depth              number of enclosing `ProfilerStep#N` ranges (user_annotation; cpu_op in
--                           PyTorch 1.8 traces)
--   runtime_depth           number of enclosing cuda_runtime / cuda_driver calls
--   thread_key              integer id of (pid, tid) within the trace
--   has_correlation         the event carries a correlation id (runtime calls that may launch GPU work)
--   nest_pos                position in the thread's nesting order, from 1 (starts and ends interleaved, so
--                           with gaps): an ancestor always has a smaller nest_pos than its descendants
CREATE OR REPLACE VIEW _cpu_nesting_build AS
SELECT s.trace_id, s.event_id, s.end_ns, p.nest_end_ns,
       p.nest_end_ns < s.end_ns AS clipped, p.parent_event_id, p.depth, p.op_depth, p.module_depth,
       p.annotation_depth, p.step_depth, p.runtime_depth, s.trace_thread_key AS thread_key,
       p.nest_pos, s.has_correlation
FROM _tree_slices s JOIN _tree_parents p USING (thread_key, event_id);
