-- peers/tracelens/ops_summary_by_category — TraceLens's ops_summary_by_category, per trace (its perf report; the
-- inference report's, per parent module, is in peers/tracelens/infer_ops).
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
