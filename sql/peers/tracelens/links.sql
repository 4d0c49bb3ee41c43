-- peers/tracelens/links — TraceLens's (0.1.0) link from a GPU event to its launch and its launcher op,
-- computed at query time from the native tables (gpu_launch_links, cpu_event_context, cpu_nesting).
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence), see docs/peers.md "TraceLens / Linking"
-- and "Launchers"; the code is ours.
--
-- TraceLens links fewer GPU events than the native rule (tree/links): only kernel / gpu_memcpy /
-- gpu_memset events; a graph launch (cudaGraphLaunch / hipGraphLaunch) owns every such event with its
-- correlation; any other runtime/driver call reaches its GPU event only through an ac2g pair — a flow start
-- `s` and a flow end `f` with the call's correlation as id — and the flow end's pid/tid must be those of the
-- GPU event (where ids repeat, the last flow end and the last GPU event in file order win, as in
-- TraceLens's dictionaries).
-- TraceLens's launcher of a launch call: the innermost enclosing cpu_op not named `execute`, unless a
-- runtime call encloses the launch more closely than every cpu_op; else the launch call itself.
--
-- @requires tree/gpu_event_ops tree/link_summary

-- _tl_links: one row per GPU event (row of gpu_launch_links) with tl_linked, whether TraceLens links it.
-- @materialize report-tracelens
CREATE OR REPLACE VIEW _tl_links AS
WITH flows AS MATERIALIZED (
    SELECT trace_id, flow_id, ph, pid, tid, event_id
    FROM correlations WHERE cat = 'ac2g' AND flow_id IS NOT NULL
), flow_starts AS (
    SELECT DISTINCT trace_id, flow_id FROM flows WHERE ph = 's'
), flow_last_end AS (   -- TraceLens keeps the last flow end per id
    SELECT trace_id, flow_id, arg_max(pid, event_id) AS pid, arg_max(tid, event_id) AS tid
    FROM flows WHERE ph = 'f' GROUP BY trace_id, flow_id
), last_gpu AS (   -- TraceLens keys GPU events by (pid, tid, correlation); the last one wins
    SELECT trace_id, max(event_id) AS event_id FROM gpu_launch_links WHERE correlation IS NOT NULL
    GROUP BY trace_id, pid, tid, correlation
)
SELECT l.trace_id, l.event_id,
       coalesce(l.cat IN ('kernel', 'gpu_memcpy', 'gpu_memset') AND l.linked AND (
           l.launch_name IN ('cudaGraphLaunch', 'hipGraphLaunch')
           OR (fs.flow_id IS NOT NULL AND fe.pid = l.pid AND fe.tid = l.tid AND lg.event_id IS NOT NULL)
       ), false) AS tl_linked
FROM gpu_launch_links l
LEFT JOIN flow_starts fs ON fs.trace_id = l.trace_id AND fs.flow_id = l.correlation
LEFT JOIN flow_last_end fe ON fe.trace_id = l.trace_id AND fe.flow_id = l.correlation
LEFT JOIN last_gpu lg ON lg.trace_id = l.trace_id AND lg.event_id = l.event_id;

-- _tl_pseudo_ops(): whether TraceLens's pseudo-op extensions apply (its --enable_pseudo_ops, read by
-- TreePerfAnalyzer.__init__ in TraceLens/TreePerf/tree_perf.py, which then calls apply_pseudo_op_extensions of
-- TraceLens/Trace2Tree/extensions/pseudo_ops_registry.py): the variable tracesql_tl_pseudo_ops, which `tracesql
-- report --style tracelens` sets from --pseudo-ops (off by default, as TraceLens's CLIs); unset (the views
-- queried directly), on, as TraceLens's own inference tests run. The extensions never change the perf-model
-- map: the extension's models (get_pseudo_op_mappings) are registered either way.
CREATE OR REPLACE MACRO _tl_pseudo_ops() AS coalesce(getvariable('tracesql_tl_pseudo_ops'), true);

-- _tl_op_name(name): the name TraceLens gives a cpu_op. With pseudo ops (_tl_pseudo_ops) it strips a
-- trailing _<digits> from cpu_op names that start with `sglang_profiler::` before it builds any table
-- (normalize_sglang_profiler_op_names in TraceLens/Trace2Tree/extensions/pseudo_ops_utils.py, pattern
-- ^(sglang_profiler::.+?)_\d+$, the first step of apply_pseudo_op_extensions): `..._ragged_100` becomes
-- `..._ragged`, which its op registry then knows. Only the last suffix goes (`a_1_2` -> `a_1`).
CREATE OR REPLACE MACRO _tl_op_name(name) AS
    CASE WHEN starts_with(name, 'sglang_profiler::') AND _tl_pseudo_ops()
         THEN regexp_replace(name, '^(sglang_profiler::.+?)_[0-9]+$', '\1')
         ELSE name END;

-- _tl_launch_launchers: one row per launch anchor of cpu_event_context (runtime/driver call with a
-- correlation): the call (trace_id, event_id, name, ts_ns) and TraceLens's launcher of it
-- (tl_launcher_event_id, tl_launcher_name, tl_launcher_ts_ns; the call itself when no op qualifies).
CREATE OR REPLACE VIEW _tl_launch_launchers AS
WITH RECURSIVE l AS MATERIALIZED (
    SELECT trace_id, event_id, name, ts_ns, op_event_id, op_name, runtime_parent_event_id
    FROM cpu_event_context WHERE anchor_kind = 'launch'
), runtime_inner AS (   -- a runtime call encloses the launch more closely than every cpu_op
    SELECT l.trace_id, l.event_id FROM l
    JOIN cpu_nesting r ON r.trace_id = l.trace_id AND r.event_id = l.runtime_parent_event_id
    LEFT JOIN cpu_nesting o ON o.trace_id = l.trace_id AND o.event_id = l.op_event_id
    WHERE o.event_id IS NULL OR r.nest_pos > o.nest_pos
), up(trace_id, event_id, op_id, op_name) AS (   -- up the op chain past ops named `execute`
    SELECT trace_id, event_id, op_event_id, op_name FROM l WHERE op_event_id IS NOT NULL
    UNION ALL
    SELECT u.trace_id, u.event_id, o.op_event_id, o.op_name
    FROM up u JOIN cpu_event_context o ON o.trace_id = u.trace_id AND o.event_id = u.op_id AND o.anchor_kind = 'op'
    WHERE u.op_name = 'execute' AND o.op_event_id IS NOT NULL
), launcher_op AS (
    SELECT u.trace_id, u.event_id, u.op_id, u.op_name FROM up u
    ANTI JOIN runtime_inner ri ON ri.trace_id = u.trace_id AND ri.event_id = u.event_id
    WHERE u.op_name <> 'execute'
)
SELECT l.trace_id, l.event_id, l.name, l.ts_ns,
       coalesce(lo.op_id, l.event_id) AS tl_launcher_event_id, coalesce(_tl_op_name(lo.op_name), l.name) AS tl_launcher_name,
       CASE WHEN lo.op_id IS NULL THEN l.ts_ns ELSE p.ts_ns END AS tl_launcher_ts_ns
FROM l
LEFT JOIN launcher_op lo ON lo.trace_id = l.trace_id AND lo.event_id = l.event_id
LEFT JOIN (SELECT trace_id, event_id, ts_ns FROM events) p ON p.trace_id = lo.trace_id AND p.event_id = lo.op_id;

-- tl_gpu_event_ops: gpu_event_ops (every column) plus TraceLens's view of each GPU event.
--   tl_linked                      TraceLens links the event to its launch (see the top of this file)
--   tl_launcher_trace_id, tl_launcher_event_id, tl_launcher_name   TraceLens's launcher: from the launch
--                                  (for a graph replay with a capture: from the capture call, inside the
--                                  capture root) the launcher defined above; NULL for NCCL/RCCL kernels
--                                  (is_nccl) and for events that are not tl_linked. The
--                                  launcher lives in tl_launcher_trace_id (the capture trace for merged
--                                  graph replays).
--   tl_launcher_ts_ns              start of tl_launcher_event_id, ns (clock of tl_launcher_trace_id)
--   tl_parent_cpu_op               TraceLens's "Parent cpu_op" (kernel_summary): the innermost cpu_op
--                                  around the (capture) call, else the call's name; NULL when not tl_linked
--   is_nccl                        a communication kernel: the name contains nccl, rccl or cross_device_reduce
--                                  (any case; TraceEventUtils.is_communication_string in TraceLens/util.py:
--                                  NCCL/RCCL and its default custom collective, vLLM's custom all-reduce)
-- @materialize report-tracelens
CREATE OR REPLACE VIEW tl_gpu_event_ops AS
WITH ll AS MATERIALIZED (   -- read twice below: for the launch and for the capture-time launch
    SELECT * FROM _tl_launch_launchers
), e AS (
    SELECT g.*, t.tl_linked, regexp_matches(g.name, '(?i)(nccl|rccl|cross_device_reduce)') AS is_nccl,
           c.tl_launcher_event_id AS c_event_id, c.tl_launcher_name AS c_name, c.tl_launcher_ts_ns AS c_ts_ns,
           cc.name AS cc_call_name, cc.tl_launcher_event_id AS cc_event_id, cc.tl_launcher_name AS cc_name,
           cc.tl_launcher_ts_ns AS cc_ts_ns
    FROM gpu_event_ops g
    JOIN _tl_links t USING (trace_id, event_id)
    LEFT JOIN ll c ON c.trace_id = g.trace_id AND c.event_id = g.launch_event_id
    LEFT JOIN ll cc ON cc.trace_id = g.capture_trace_id AND cc.event_id = g.capture_launch_event_id
)
SELECT * EXCLUDE (c_event_id, c_name, c_ts_ns, cc_call_name, cc_event_id, cc_name, cc_ts_ns),
       CASE WHEN tl_linked AND NOT is_nccl THEN coalesce(capture_trace_id, trace_id) END AS tl_launcher_trace_id,
       CASE WHEN NOT tl_linked OR is_nccl THEN NULL
            WHEN capture_launch_event_id IS NULL THEN c_event_id
            WHEN cc_ts_ns < capture_root_ts_ns THEN capture_launch_event_id
            ELSE cc_event_id END AS tl_launcher_event_id,
       CASE WHEN NOT tl_linked OR is_nccl THEN NULL
            WHEN capture_launch_event_id IS NULL THEN c_name
            WHEN cc_ts_ns < capture_root_ts_ns THEN cc_call_name
            ELSE cc_name END AS tl_launcher_name,
       CASE WHEN NOT tl_linked OR is_nccl THEN NULL
            WHEN capture_launch_event_id IS NULL THEN c_ts_ns
            WHEN cc_ts_ns < capture_root_ts_ns THEN capture_launch_ts_ns
            ELSE cc_ts_ns END AS tl_launcher_ts_ns,
       CASE WHEN NOT tl_linked THEN NULL
            WHEN capture_launch_event_id IS NULL THEN coalesce(_tl_op_name(op_name), launch_name)
            ELSE coalesce(_tl_op_name(capture_op_name), cc_call_name) END AS tl_parent_cpu_op
FROM e;

-- tl_link_summary: one row per trace: its GPU events TraceLens links (tl_linked_events) beside the
-- native counts of gpu_link_summary (every column of it).
CREATE OR REPLACE VIEW tl_link_summary AS
SELECT s.*, coalesce(t.n, 0) AS tl_linked_events
FROM gpu_link_summary s
LEFT JOIN (SELECT trace_id, count(*) AS n FROM _tl_links WHERE tl_linked GROUP BY trace_id) t USING (trace_id);
