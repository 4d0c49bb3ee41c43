-- gpu/across_traces — the traces of a dataset side by side (an archive of runs, the ranks of a job): one row per
-- trace with its headline numbers, and per kernel and per op the rows of each trace that
-- gpu/across_traces_merge adds up over all traces. Every number is read from the per-trace view named in its
-- comment, with that view's definition.
--
-- This module holds the per-trace part: traces_overview, kernels_by_trace and ops_by_trace, each row of which reads
-- one trace only. The merge over them (kernels_across_traces, ops_across_traces) is gpu/across_traces_merge, which
-- reads nothing but these three, so that a report run as one task per trace (tracesql.archive_report) computes
-- these rows in each task and runs the same merge over their union.
--
-- @requires gpu/overview gpu/kernel_summary gpu/op_summaries lib/trace_labels

-- traces_overview: one row per trace, its headline numbers (overview_traces, overview_top_*).
--   trace_id, trace (trace_labels.label), file_name, rank, gpu_models   as in overview_traces
--   span_ms, busy_ms                       gpu_timeline pooled row, ms
--   busy_pct, idle_pct, compute_pct, comm_pct, comm_exposed_pct, memory_pct   gpu_timeline pooled row, % of span
--   top_category, top_category_pct        the kernel category with the most GPU time (overview_top_categories)
--   top_kernel, top_kernel_pct            the kernel (short name) with the most GPU time (overview_top_kernels)
--   top_op, top_op_pct                    the op with the most GPU time (overview_top_ops)
-- @output report-across 1 traces_overview \
--     TITLE "Traces side by side" \
--     ABOUT "One row per trace: its GPU, span, busy and idle share, top kernel and op." \
--     ORDER BY trace
CREATE OR REPLACE VIEW traces_overview AS
SELECT o.trace_id, l.label AS trace, o.file_name, o.rank, o.gpu_models,
       o.span_ns / 1e6 AS span_ms, o.busy_ns / 1e6 AS busy_ms, o.busy_pct, o.idle_pct, o.compute_pct, o.comm_pct,
       o.comm_exposed_pct, o.memory_pct,
       c.kernel_category AS top_category, c.pct AS top_category_pct,
       k.name AS top_kernel, k.time_pct AS top_kernel_pct,
       p.op_name AS top_op, p.time_pct AS top_op_pct
FROM overview_traces o
JOIN trace_labels l USING (trace_id)
LEFT JOIN overview_top_categories c ON c.trace_id = o.trace_id AND c.rank = 1
LEFT JOIN overview_top_kernels k ON k.trace_id = o.trace_id AND k.rank = 1
LEFT JOIN overview_top_ops p ON p.trace_id = o.trace_id AND p.rank = 1;

-- kernels_by_trace: one row per kernel (short name, as kernel_summary merges them) and trace: what
-- kernels_across reads of each trace.
--   trace_id, trace (trace_labels.label)
--   name, activity_class, count, total_ns, time_pct   as in kernel_summary
CREATE OR REPLACE VIEW kernels_by_trace AS
SELECT k.trace_id, l.label AS trace, k.name, k.activity_class, k.count::BIGINT AS count,
       k.total_ns::BIGINT AS total_ns, k.time_pct
FROM kernel_summary k JOIN trace_labels l USING (trace_id);

-- ops_by_trace: one row per op name and trace (op_summary): what ops_across reads of each trace.
--   trace_id, trace (trace_labels.label)
--   op_name, op_count, kernel_count, kernel_time_ns, time_pct   as in op_summary
CREATE OR REPLACE VIEW ops_by_trace AS
SELECT o.trace_id, l.label AS trace, o.op_name, o.op_count::BIGINT AS op_count,
       o.kernel_count::BIGINT AS kernel_count, o.kernel_time_ns::BIGINT AS kernel_time_ns, o.time_pct
FROM op_summary o JOIN trace_labels l USING (trace_id);
