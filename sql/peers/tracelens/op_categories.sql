-- peers/tracelens/op_categories — TraceLens (0.1.0) op categories and its ops_summary_by_category, reproduced from the rule table.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence), see docs/peers.md; the code is ours.
-- TraceLens's launcher of a GPU event is found by gpu_event_ops (sql/tree/context.sql:
-- tl_launcher_event_id; NCCL/RCCL kernels and events TraceLens does not link have none). The op category
-- of a launcher instance, first match:
--   1. an op rule of ruleset `tracelens` matches the launcher's name (the exact-name registry, then the
--      `^triton` and `^record_param_comms` prefixes; sql/peers/tracelens/rules/tracelens.csv);
--   2. an op_first_kernel rule of ruleset `tracelens` matches the name of its first GPU event (name starts
--      with `void at::native` and contains elementwise / reduce / multi_tensor_apply);
--   3. `other`.
-- The first GPU event is the one whose launch call started first (then GPU start, then event_id): the
-- order in which TraceLens meets them while walking its call tree.
-- Direct kernel time of a launcher instance (the union of its GPU events' intervals in float64 µs, as
-- TraceLens computes it) comes from tl_launchers (sql/tree/rollups.sql).
--
-- @requires categories/ops peers/tracelens/links

-- Helper: the GPU events of every TraceLens launcher instance, with the start of the call that launched
-- them (for graph replays merged with their capture trace: the capture-time launch call).
CREATE OR REPLACE VIEW _tl_launcher_gpu AS
SELECT o.tl_launcher_trace_id, o.tl_launcher_event_id, o.tl_launcher_name, o.tl_launcher_ts_ns, o.trace_id,
       o.event_id, o.name, o.ts_ns, coalesce(o.capture_launch_ts_ns, o.launch_ts_ns) AS launch_ts_ns,
       CASE WHEN o.capture_launch_event_id IS NOT NULL THEN o.capture_module_path ELSE o.module_path END
           AS module_path
FROM tl_gpu_event_ops o
WHERE o.tl_launcher_event_id IS NOT NULL;

-- Helper: the best op_first_kernel rule per (ruleset, kernel name).
CREATE OR REPLACE VIEW _first_kernel_rule_categories AS
SELECT ruleset, name_key, category, subcategory
FROM _category_rule_matches
WHERE applies_to = 'op_first_kernel'
QUALIFY row_number() OVER (PARTITION BY ruleset, name_key
                           ORDER BY _rule_precedence(priority, source, file, line_no)) = 1;

-- tl_op_category: one row per TraceLens launcher instance (a cpu_op, or a runtime call without a cpu_op
-- above it, that launched GPU work), with TraceLens's op category. Replaces the placeholder of the same
-- name in sql/tree/rollups.sql, which tl_ops_summary reads.
--   trace_id               the trace that holds the launcher event (tl_gpu_event_ops.tl_launcher_trace_id:
--                          the capture trace for graph replays merged with their capture)
--   tl_launcher_event_id   the launcher event
--   tl_launcher_name       its name (TraceLens's ops_summary `name`)
--   op_category            TraceLens op category (see the top of this file)
--   category_source        'op_rule', 'first_kernel' or 'none' (other)
--   first_kernel_name      name of its first GPU event
--   gpu_events             GPU events it launched (all traces)
--   launcher_ts_ns         start of the launcher event, ns (clock of its trace)
--   module_path            nn.Module stack around its (first) launch call, outermost first, '/'-joined
--                          (gpu_event_ops.module_path, or capture_module_path for merged graph replays)
-- @materialize report-tracelens
CREATE OR REPLACE VIEW tl_op_category AS
WITH g AS MATERIALIZED (
    SELECT * FROM _tl_launcher_gpu
), f AS (   -- the first GPU event of each launcher (its key only: the long names are joined afterwards)
    SELECT tl_launcher_trace_id, tl_launcher_event_id, any_value(tl_launcher_name) AS tl_launcher_name,
           any_value(tl_launcher_ts_ns) AS tl_launcher_ts_ns,
           arg_min(trace_id, (launch_ts_ns, ts_ns, trace_id, event_id)) AS first_trace_id,
           arg_min(event_id, (launch_ts_ns, ts_ns, trace_id, event_id)) AS first_event_id,
           count(*) AS gpu_events
    FROM g
    GROUP BY ALL
), k AS (
    SELECT f.*, g.name AS first_kernel_name, g.module_path
    FROM f JOIN g ON g.trace_id = f.first_trace_id AND g.event_id = f.first_event_id
               AND g.tl_launcher_trace_id = f.tl_launcher_trace_id AND g.tl_launcher_event_id = f.tl_launcher_event_id
)
SELECT k.tl_launcher_trace_id AS trace_id, k.tl_launcher_event_id, k.tl_launcher_name,
       CASE WHEN oc.matched THEN oc.op_category
            WHEN fk.category IS NOT NULL THEN fk.category
            ELSE 'other' END AS op_category,
       CASE WHEN oc.matched THEN 'op_rule' WHEN fk.category IS NOT NULL THEN 'first_kernel' ELSE 'none' END
           AS category_source,
       k.first_kernel_name, k.gpu_events, k.tl_launcher_ts_ns AS launcher_ts_ns, k.module_path
FROM k
LEFT JOIN op_name_categories oc ON oc.ruleset = 'tracelens' AND oc.name = k.tl_launcher_name
LEFT JOIN _first_kernel_rule_categories fk
       ON fk.ruleset = 'tracelens' AND fk.name_key = replace(k.first_kernel_name, chr(10), ' ');
