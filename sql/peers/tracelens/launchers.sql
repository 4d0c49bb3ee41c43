-- peers/tracelens/launchers — TraceLens's launchers and its ops_summary.
--
-- @requires lib/keys lib/intervals tree/rollups peers/tracelens/links peers/tracelens/op_categories tree/graph_capture

-- _tl_op_gpu_pairs: one row per cpu_op and GPU event TraceLens links launched inside it (any depth; the trace's
-- own ops): trace_id, op_event_id, gpu_event_id, ts_ns, dur_ns (the GPU event's).
CREATE OR REPLACE VIEW _tl_op_gpu_pairs AS
SELECT p.trace_id, p.op_event_id, p.gpu_event_id, p.ts_ns, p.dur_ns
FROM _tree_op_gpu_pairs p JOIN _tl_links t ON t.trace_id = p.trace_id AND t.event_id = p.gpu_event_id
WHERE t.tl_linked;

-- _tl_instance_key(key, copy_id): an instance of a launcher of TraceLens's tree: the launcher's event key
-- (_tree_key), and for an op of a merged capture window the graph launch whose copy of the window holds it
-- (TraceLens merges the window once per launch; NULL otherwise).
CREATE OR REPLACE MACRO _tl_instance_key(key, copy_id) AS (key::HUGEINT << 64) | coalesce(copy_id, 0);

-- _tl_copy_id(launcher_trace_id, capture_trace_id, launch_event_id): the copy of a GPU event's launcher in
-- TraceLens's tree: the graph launch (launch_event_id) when the launcher is an op of the capture trace the
-- event was replayed from, else NULL.
CREATE OR REPLACE MACRO _tl_copy_id(launcher_trace_id, capture_trace_id, launch_event_id) AS
    CASE WHEN launcher_trace_id = capture_trace_id THEN launch_event_id END;

-- _tl_launchers_of(gpu_ops, op_pairs): TraceLens's launcher instances (the columns of tl_launchers below) of a
-- tree whose GPU events and launchers are the table gpu_ops (the columns of tl_gpu_event_ops) and whose ops
-- hold the GPU events of the table op_pairs (the columns of _tl_op_gpu_pairs) in their subtrees.
CREATE OR REPLACE MACRO _tl_launchers_of(gpu_ops, op_pairs) AS TABLE
WITH RECURSIVE g AS MATERIALIZED (
    SELECT o.trace_id, k.trace_key, o.event_id, o.ts_ns, o.dur_ns, o.tl_launcher_trace_id, o.tl_launcher_event_id,
           o.tl_launcher_name, o.launch_event_id, o.capture_trace_id, o.capture_launch_event_id,
           -- a capture op's instance is its copy in the graph launch's merged window (keyed by the launch)
           _tl_instance_key(_tree_key(lk.trace_key, o.tl_launcher_event_id),
                            _tl_copy_id(o.tl_launcher_trace_id, o.capture_trace_id, o.launch_event_id)) AS l_key
    FROM query_table(gpu_ops) o JOIN _tree_trace_keys k USING (trace_id)
    LEFT JOIN _tree_trace_keys lk ON lk.trace_id = o.tl_launcher_trace_id
    WHERE o.tl_linked
), launchers AS MATERIALIZED (
    SELECT DISTINCT trace_key, l_key FROM g WHERE tl_launcher_event_id IS NOT NULL
), direct AS (
    SELECT trace_key, l_key, any_value(trace_id) AS trace_id, any_value(tl_launcher_trace_id) AS tl_launcher_trace_id,
           any_value(tl_launcher_event_id) AS tl_launcher_event_id, any_value(tl_launcher_name) AS name,
           any_value(_tl_copy_id(tl_launcher_trace_id, capture_trace_id, launch_event_id)) AS copy_id,
           count(*) AS n, sum(_tree_busy_ns(s, e, prev_e)) AS busy_us
    FROM (SELECT *, max(e) OVER (PARTITION BY trace_key, l_key ORDER BY s, e
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
          FROM (SELECT *, ts_ns / 1000.0 AS s, ts_ns / 1000.0 + dur_ns / 1000.0 AS e
                FROM g WHERE tl_launcher_event_id IS NOT NULL))
    GROUP BY trace_key, l_key
), ops AS MATERIALIZED (   -- cpu_ops of the capture traces (empty without graph replays merged with a capture)
    SELECT trace_id, event_id, op_event_id, ts_ns, anchor_kind FROM cpu_event_context
    WHERE trace_id IN (SELECT capture_trace_id FROM graph_capture_links)
), cap AS (   -- graph replays merged with a capture: up the capture op chain, inside the capture root
    SELECT g.trace_key, g.event_id, g.ts_ns, g.dur_ns, l.capture_trace_id, l.capture_root_ts_ns,
           o.op_event_id, l.graph_launch_event_id
    FROM g JOIN graph_capture_links l ON l.trace_id = g.trace_id AND l.event_id = g.event_id
    JOIN ops o ON o.trace_id = l.capture_trace_id AND o.event_id = l.capture_launch_event_id
), cap_up(trace_key, event_id, ts_ns, dur_ns, op_trace_id, root_ts_ns, op_event_id, copy_id) AS (
    SELECT c.trace_key, c.event_id, c.ts_ns, c.dur_ns, c.capture_trace_id, c.capture_root_ts_ns, c.op_event_id,
           c.graph_launch_event_id
    FROM cap c JOIN ops o ON o.trace_id = c.capture_trace_id AND o.event_id = c.op_event_id
    WHERE o.ts_ns >= c.capture_root_ts_ns
    UNION ALL
    SELECT u.trace_key, u.event_id, u.ts_ns, u.dur_ns, u.op_trace_id, u.root_ts_ns, p.event_id, u.copy_id
    FROM cap_up u JOIN ops o ON o.trace_id = u.op_trace_id AND o.event_id = u.op_event_id
    JOIN ops p ON p.trace_id = o.trace_id AND p.event_id = o.op_event_id
    WHERE p.ts_ns >= u.root_ts_ns
), sub_pairs AS (
    SELECT k.trace_key, _tl_instance_key(_tree_key(k.trace_key, p.op_event_id), NULL) AS l_key, p.ts_ns, p.dur_ns
    FROM query_table(op_pairs) p JOIN _tree_trace_keys k USING (trace_id)
    UNION ALL
    SELECT u.trace_key, _tl_instance_key(_tree_key(k.trace_key, u.op_event_id), u.copy_id), u.ts_ns, u.dur_ns
    FROM cap_up u JOIN _tree_trace_keys k ON k.trace_id = u.op_trace_id
    UNION ALL   -- a runtime call as launcher: the GPU events it launched itself
    SELECT g.trace_key,
           _tl_instance_key(_tree_key(coalesce(ck.trace_key, g.trace_key),
                                      coalesce(g.capture_launch_event_id, g.launch_event_id)),
                            CASE WHEN g.capture_launch_event_id IS NOT NULL THEN g.launch_event_id END),
           g.ts_ns, g.dur_ns
    FROM g LEFT JOIN _tree_trace_keys ck ON ck.trace_id = g.capture_trace_id
), sub AS (
    SELECT trace_key, l_key, sum(_tree_busy_ns(s, e, prev_e)) AS busy_us
    FROM (SELECT *, max(e) OVER (PARTITION BY trace_key, l_key ORDER BY s, e
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
          FROM (SELECT p.*, p.ts_ns / 1000.0 AS s, p.ts_ns / 1000.0 + p.dur_ns / 1000.0 AS e
                FROM sub_pairs p SEMI JOIN launchers l USING (trace_key, l_key)))
    GROUP BY trace_key, l_key
)
SELECT d.trace_id, d.tl_launcher_trace_id, d.tl_launcher_event_id, d.copy_id, d.name,
       d.busy_us AS direct_kernel_time_us, coalesce(s.busy_us, d.busy_us) AS subtree_kernel_time_us,
       d.n AS direct_kernel_count
FROM direct d LEFT JOIN sub s USING (trace_key, l_key);

-- tl_launchers: one row per TraceLens launcher instance (docs/peers.md "Launchers and ops_summary"), in µs
-- computed the way TraceLens computes them: endpoints are float64 µs (ts_ns/1000 and that plus
-- dur_ns/1000, as a JSON parser reads the trace), so the values match TraceLens bit for bit.
--   trace_id                  the trace of the GPU events
--   tl_launcher_trace_id, tl_launcher_event_id, name   the launcher: a cpu_op, or a runtime call with no
--                             op above it; for graph replays merged with their capture, an event of the
--                             capture trace
--   copy_id                   for an event of a capture trace: the graph launch whose copy of the merged
--                             window holds this instance (TraceLens merges a window once per launch; _tl_copy_id);
--                             NULL otherwise
--   direct_kernel_time_us     busy time of the non-NCCL tl_linked GPU events mapped to it
--   subtree_kernel_time_us    busy time of every tl_linked GPU event launched inside it (NCCL included)
--   direct_kernel_count       number of GPU events mapped to it
-- @materialize report-tracelens
CREATE OR REPLACE VIEW tl_launchers AS
SELECT * FROM _tl_launchers_of('tl_gpu_event_ops', '_tl_op_gpu_pairs');

-- tl_ops_summary: TraceLens's ops_summary, one row per trace and launcher name; columns as in its CSV.
--   trace_id                          the trace
--   name                              launcher name (cpu_op name, or runtime call name)
--   total_direct_kernel_time_sum      Σ over instances of direct_kernel_time_us (µs)
--   total_subtree_kernel_time_sum     Σ over instances of subtree_kernel_time_us (µs)
--   total_direct_kernel_time_ms, total_subtree_kernel_time_ms   the same in ms
--   Count                             number of launcher instances
--   Categories                        the instances' op categories as TraceLens prints them ("['GEMM']"),
--                                     from tl_op_category (NULL until that view has rows)
--   Percentage (%)                    share of the trace's total direct time
--   Cumulative Percentage (%)         running total of Percentage in row order (direct time descending)
-- @output report-tracelens 3 ops_summary
CREATE OR REPLACE VIEW tl_ops_summary AS
WITH l AS (
    SELECT l.*, c.op_category FROM tl_launchers l
    LEFT JOIN tl_op_category c ON c.trace_id = l.tl_launcher_trace_id
                              AND c.tl_launcher_event_id = l.tl_launcher_event_id
), g AS (
    SELECT trace_id, name, sum(direct_kernel_time_us) AS total_direct_kernel_time_sum,
           sum(subtree_kernel_time_us) AS total_subtree_kernel_time_sum, count(*) AS "Count",
           CASE WHEN count(op_category) > 0
                THEN '[' || string_agg(DISTINCT '''' || op_category || '''', ', ' ORDER BY '''' || op_category || '''')
                     || ']' END AS "Categories"
    FROM l GROUP BY ALL
)
SELECT trace_id, name, total_direct_kernel_time_sum, total_subtree_kernel_time_sum,
       total_direct_kernel_time_sum / 1000 AS total_direct_kernel_time_ms,
       total_subtree_kernel_time_sum / 1000 AS total_subtree_kernel_time_ms,
       "Count", "Categories",
       100 * total_direct_kernel_time_sum / sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id)
           AS "Percentage (%)",
       100 * sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id
                 ORDER BY total_direct_kernel_time_sum DESC, name ROWS UNBOUNDED PRECEDING)
           / sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id) AS "Cumulative Percentage (%)"
FROM g
ORDER BY trace_id, total_direct_kernel_time_sum DESC, name;
