-- TraceLens (0.1.0) op categories and its ops_summary_by_category, reproduced from the rule table.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence), see ../shared/PEERS.md; the code is ours.
-- TraceLens's launcher of a GPU event is found by gpu_event_ops (sql/12_tree_attribution.sql:
-- tl_launcher_event_id; NCCL/RCCL kernels and events TraceLens does not link have none). The op category
-- of a launcher instance, first match:
--   1. an op rule of ruleset `tracelens` matches the launcher's name (the exact-name registry, then the
--      `^triton` and `^record_param_comms` prefixes; sql/rules/tracelens.csv);
--   2. an op_first_kernel rule of ruleset `tracelens` matches the name of its first GPU event (name starts
--      with `void at::native` and contains elementwise / reduce / multi_tensor_apply);
--   3. `other`.
-- The first GPU event is the one whose launch call started first (then GPU start, then event_id): the
-- order in which TraceLens meets them while walking its call tree.
-- Direct kernel time of a launcher instance (the union of its GPU events' intervals in float64 µs, as
-- TraceLens computes it) comes from tl_launchers (sql/13_tree_rollups.sql).

-- Helper: the GPU events of every TraceLens launcher instance, with the start of the call that launched
-- them (for graph replays merged with their capture trace: the capture-time launch call).
CREATE OR REPLACE VIEW _tl_launcher_gpu AS
SELECT o.tl_launcher_trace_id, o.tl_launcher_event_id, o.tl_launcher_name, o.tl_launcher_ts_ns, o.trace_id,
       o.event_id, o.name, o.ts_ns, coalesce(o.capture_launch_ts_ns, o.launch_ts_ns) AS launch_ts_ns,
       CASE WHEN o.capture_launch_event_id IS NOT NULL THEN o.capture_module_path ELSE o.module_path END
           AS module_path
FROM gpu_event_ops o
WHERE o.tl_launcher_event_id IS NOT NULL;

-- Helper: the best op_first_kernel rule per (ruleset, kernel name).
CREATE OR REPLACE VIEW _first_kernel_rule_categories AS
SELECT ruleset, name_key, category, subcategory
FROM _category_rule_matches
WHERE applies_to = 'op_first_kernel'
QUALIFY row_number() OVER (PARTITION BY ruleset, name_key
                           ORDER BY priority DESC, source = 'shipped', file, line_no) = 1;

-- tl_op_category: one row per TraceLens launcher instance (a cpu_op, or a runtime call without a cpu_op
-- above it, that launched GPU work), with TraceLens's op category. Replaces the placeholder of the same
-- name in sql/13_tree_rollups.sql, which tl_ops_summary reads.
--   trace_id               the trace that holds the launcher event (gpu_event_ops.tl_launcher_trace_id:
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

-- tl_ops_summary_by_category: TraceLens's ops_summary_by_category.csv, one row per (trace, op category),
-- with TraceLens's column names.
--   trace_id                       trace (of the GPU events)
--   op category                    TraceLens op category
--   Count                          launcher instances in the category (tl_launchers rows)
--   total_direct_kernel_time_ms    Σ of their direct kernel times (tl_launchers, float64 µs) / 1000
--   Percentage (%)                 share of the Σ over all categories of the trace
--   Cumulative Percentage (%)      running sum of the percentage, categories by descending time
--   rank                           row order of TraceLens's file (1 = most time)
CREATE OR REPLACE VIEW tl_ops_summary_by_category AS
WITH g AS (
    SELECT l.trace_id, c.op_category, count(*) AS n, sum(l.direct_kernel_time_us) AS total_us
    FROM tl_launchers l
    JOIN tl_op_category c ON c.trace_id = l.tl_launcher_trace_id AND c.tl_launcher_event_id = l.tl_launcher_event_id
    GROUP BY ALL
), r AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY total_us DESC, op_category) AS rank,
           sum(total_us) OVER (PARTITION BY trace_id) AS all_us
    FROM g
)
SELECT trace_id,
       op_category AS "op category",
       n AS "Count",
       total_us / 1000 AS total_direct_kernel_time_ms,
       total_us / all_us * 100 AS "Percentage (%)",
       sum(total_us / all_us * 100) OVER (PARTITION BY trace_id ORDER BY rank
                                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
           AS "Cumulative Percentage (%)",
       rank
FROM r;

-- tl_ops_summary_by_category_module: the same per (trace, op category, parent module), as TraceLens's
-- inference report writes ops_summary_by_category (the graphs/vllm_decode_full reference), with its
-- column names.
--   trace_id                       trace (of the GPU events)
--   op category                    TraceLens op category
--   parent_module                  'nn.Module: <name>' of the innermost nn.Module around the launcher (the
--                                  instance suffix _N of the frame name removed), 'NA' when there is none
--   Count                          launcher instances
--   call_stack_first               call stack of the earliest instance (by launcher start): the launcher
--                                  name, then its nn.Module frames innermost first, as a Python list literal
--   total_direct_kernel_time_ms    Σ of their direct kernel times / 1000
--   Percentage (%)                 share of the Σ over all rows of the trace
--   Cumulative Percentage (%)      running sum, rows by descending time
--   rank                           row order (1 = most time)
CREATE OR REPLACE VIEW tl_ops_summary_by_category_module AS
WITH i AS (
    SELECT l.trace_id, c.op_category, c.tl_launcher_name, c.launcher_ts_ns, c.tl_launcher_event_id,
           l.direct_kernel_time_us,
           CASE WHEN c.module_path IS NULL OR c.module_path = '' THEN []
                ELSE list_reverse(string_split(c.module_path, '/')) END AS frames
    FROM tl_launchers l
    JOIN tl_op_category c ON c.trace_id = l.tl_launcher_trace_id AND c.tl_launcher_event_id = l.tl_launcher_event_id
), m AS (
    SELECT *,
           CASE WHEN len(frames) = 0 THEN 'NA'
                ELSE 'nn.Module: ' || regexp_replace(frames[1], '_[0-9]+$', '') END AS parent_module,
           '[' || array_to_string(list_transform(list_prepend(tl_launcher_name,
                                                              list_transform(frames, lambda f: 'nn.Module: ' || f)),
                                                 lambda x: chr(39) || x || chr(39)), ', ') || ']' AS call_stack
    FROM i
), g AS (
    SELECT trace_id, op_category, parent_module, count(*) AS n,
           arg_min(call_stack, (launcher_ts_ns, tl_launcher_event_id)) AS call_stack_first,
           sum(direct_kernel_time_us) AS total_us
    FROM m GROUP BY ALL
), r AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY total_us DESC, op_category, parent_module) AS rank,
           sum(total_us) OVER (PARTITION BY trace_id) AS all_us
    FROM g
)
SELECT trace_id,
       op_category AS "op category",
       parent_module,
       n AS "Count",
       call_stack_first,
       total_us / 1000 AS total_direct_kernel_time_ms,
       total_us / all_us * 100 AS "Percentage (%)",
       sum(total_us / all_us * 100) OVER (PARTITION BY trace_id ORDER BY rank
                                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
           AS "Cumulative Percentage (%)",
       rank
FROM r;
