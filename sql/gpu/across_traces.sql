-- gpu/across_traces — the traces of a dataset side by side (an archive of runs, the ranks of a job): one row per
-- trace with its headline numbers, and the kernels and ops that take the most GPU time over all traces. Every
-- number is read from the per-trace view named in its comment, with that view's definition.
--
-- @requires gpu/overview lib/trace_labels

-- traces_overview: one row per trace, its headline numbers (overview_traces, overview_top_*).
--   trace_id, trace (trace_labels.label), file_name, rank, gpu_models   as in overview_traces
--   span_ms, busy_ms                       gpu_timeline pooled row, ms
--   busy_pct, idle_pct, compute_pct, comm_pct, comm_exposed_pct, memory_pct   gpu_timeline pooled row, % of span
--   top_category, top_category_pct        the kernel category with the most GPU time (overview_top_categories)
--   top_kernel, top_kernel_pct            the kernel (short name) with the most GPU time (overview_top_kernels)
--   top_op, top_op_pct                    the op with the most GPU time (overview_top_ops)
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

-- kernels_across_traces: one row per kernel (short name, as kernel_summary merges them) over all traces.
--   name, activity_class                   as in kernel_summary
--   n_traces                               traces in which it ran
--   count                                  GPU events over all traces
--   total_ms                               their summed duration, ms
--   share_pct                              of the summed duration of every trace's counted GPU events
--   max_trace_pct, max_trace               its largest share of one trace's GPU time (kernel_summary.time_pct),
--                                          and that trace (label)
CREATE OR REPLACE VIEW kernels_across_traces AS
SELECT k.name, k.activity_class, count(DISTINCT k.trace_id) AS n_traces, sum(k.count)::BIGINT AS count,
       sum(k.total_ns) / 1e6 AS total_ms,
       100.0 * sum(k.total_ns) / (SELECT sum(total_ns) FROM kernel_summary) AS share_pct,
       max(k.time_pct) AS max_trace_pct, arg_max(l.label, k.time_pct) AS max_trace
FROM kernel_summary k JOIN trace_labels l USING (trace_id)
GROUP BY k.name, k.activity_class;

-- ops_across_traces: one row per op name over all traces (op_summary: a GPU event belongs to the innermost
-- cpu_op around its launch).
--   op_name                                as in op_summary ('[no launch]', '[launch API]' included)
--   n_traces                               traces in which it launched GPU work
--   op_count, kernel_count                 calls and GPU events over all traces
--   kernel_time_ms                         GPU time of its kernels over all traces, ms
--   share_pct                              of the GPU time of every trace's ops
--   max_trace_pct, max_trace               its largest share of one trace (op_summary.time_pct), and that trace
CREATE OR REPLACE VIEW ops_across_traces AS
SELECT o.op_name, count(DISTINCT o.trace_id) AS n_traces, sum(o.op_count)::BIGINT AS op_count,
       sum(o.kernel_count)::BIGINT AS kernel_count, sum(o.kernel_time_ns) / 1e6 AS kernel_time_ms,
       100.0 * sum(o.kernel_time_ns) / (SELECT sum(kernel_time_ns) FROM op_summary) AS share_pct,
       max(o.time_pct) AS max_trace_pct, arg_max(l.label, o.time_pct) AS max_trace
FROM op_summary o JOIN trace_labels l USING (trace_id)
GROUP BY o.op_name;
