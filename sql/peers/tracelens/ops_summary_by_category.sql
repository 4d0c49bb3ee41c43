-- peers/tracelens/ops_summary_by_category — TraceLens's ops_summary_by_category, per trace and per trace and
-- parent module (its inference report).
--
-- @requires peers/tracelens/launchers peers/tracelens/op_categories

-- tl_ops_summary_by_category: TraceLens's ops_summary_by_category.csv, one row per (trace, op category),
-- with TraceLens's column names.
--   trace_id                       trace (of the GPU events)
--   op category                    TraceLens op category
--   Count                          launcher instances in the category (tl_launchers rows)
--   total_direct_kernel_time_ms    Σ of their direct kernel times (tl_launchers, float64 µs) / 1000
--   Percentage (%)                 share of the Σ over all categories of the trace
--   Cumulative Percentage (%)      running sum of the percentage, categories by descending time
--   rank                           row order of TraceLens's file (1 = most time)
-- @output report-tracelens 4 ops_summary_by_category EXCLUDE rank ORDER BY trace_id, rank
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

-- Helper: every TraceLens launcher instance with its op category, parent module and call stack as the
-- inference report prints them (TreePerfAnalyzer.get_df_kernel_launchers with include_call_stack, in
-- TraceLens/TreePerf/tree_perf.py).
--   parent_module   'nn.Module: <name>' of the innermost nn.Module around the launcher (the instance suffix
--                   _N of the frame name removed, as trace_to_tree.py _nn_module_stack_name_for_event
--                   does), 'NA' when there is none
--   call_stack      the launcher name, then its nn.Module frames innermost first, as a Python list literal
CREATE OR REPLACE VIEW _tl_launcher_modules AS
WITH i AS (
    SELECT l.trace_id, c.op_category, c.tl_launcher_name, c.launcher_ts_ns, c.tl_launcher_event_id,
           l.direct_kernel_time_us, l.subtree_kernel_time_us,
           CASE WHEN c.module_path IS NULL OR c.module_path = '' THEN []
                ELSE list_reverse(string_split(c.module_path, '/')) END AS frames
    FROM tl_launchers l
    JOIN tl_op_category c ON c.trace_id = l.tl_launcher_trace_id AND c.tl_launcher_event_id = l.tl_launcher_event_id
)
SELECT *,
       CASE WHEN len(frames) = 0 THEN 'NA'
            ELSE 'nn.Module: ' || regexp_replace(frames[1], '_[0-9]+$', '') END AS parent_module,
       '[' || array_to_string(list_transform(list_prepend(tl_launcher_name,
                                                          list_transform(frames, lambda f: 'nn.Module: ' || f)),
                                             lambda x: chr(39) || x || chr(39)), ', ') || ']' AS call_stack
FROM i;

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
-- @output report-tracelens-module 4 ops_summary_by_category EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_ops_summary_by_category_module AS
WITH m AS (
    SELECT * FROM _tl_launcher_modules
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

-- tl_ops_summary_module: the inference report's ops_summary (TreePerfAnalyzer.
-- get_df_kernel_launchers_summary_module in TraceLens/TreePerf/tree_perf.py): launcher instances grouped by
-- (name, parent module), so one op name used in two nn.Modules gives two rows. TraceLens's column names and
-- order.
--   trace_id; name; parent_module (see _tl_launcher_modules)
--   total_direct_kernel_time_sum, total_subtree_kernel_time_sum   Σ over the instances, µs
--   total_subtree_kernel_time_count   instances (TraceLens counts the subtree column too)
--   total_direct_kernel_time_ms       the direct Σ / 1000
--   Count                             instances
--   Categories                        their op categories as TraceLens prints the sorted set ("['GEMM']")
--   call_stack_first                  call stack of the earliest instance (by launcher start)
--   Percentage (%), Cumulative Percentage (%)   of the trace's Σ direct time, rows by direct time descending
--   rank                              row order (1 = most time)
-- @output report-tracelens-module 3 ops_summary EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_ops_summary_module AS
WITH g AS (
    SELECT trace_id, tl_launcher_name AS name, parent_module,
           sum(direct_kernel_time_us) AS total_direct_kernel_time_sum,
           sum(subtree_kernel_time_us) AS total_subtree_kernel_time_sum, count(*) AS n,
           '[' || string_agg(DISTINCT chr(39) || op_category || chr(39), ', '
                                ORDER BY chr(39) || op_category || chr(39)) || ']'
               AS categories,
           arg_min(call_stack, (launcher_ts_ns, tl_launcher_event_id)) AS call_stack_first
    FROM _tl_launcher_modules GROUP BY ALL
), r AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY total_direct_kernel_time_sum DESC, name,
                                                               parent_module) AS rank,
           sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id) AS all_us
    FROM g
)
SELECT trace_id, name, parent_module, total_direct_kernel_time_sum, total_subtree_kernel_time_sum,
       n AS total_subtree_kernel_time_count, total_direct_kernel_time_sum / 1000 AS total_direct_kernel_time_ms,
       n AS "Count", categories AS "Categories", call_stack_first,
       total_direct_kernel_time_sum / all_us * 100 AS "Percentage (%)",
       sum(total_direct_kernel_time_sum / all_us * 100) OVER (PARTITION BY trace_id ORDER BY rank
                                                              ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
           AS "Cumulative Percentage (%)",
       rank
FROM r;
