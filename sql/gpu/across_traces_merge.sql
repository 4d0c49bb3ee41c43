-- gpu/across_traces_merge — the kernels and ops that take the most GPU time over all traces: macros that merge
-- per-trace rows (those of kernels_by_trace or ops_by_trace, for any set of traces) into one row per kernel or op
-- over all of them, and the views over the rows of this connection. Nothing here reads anything but
-- traces_overview, kernels_by_trace and ops_by_trace, so the same SQL serves a report over one connection and
-- one run as a task per trace, whose driver defines those three as the union of the rows its tasks return and
-- runs this module alone (tracesql.archive_report).
--
-- @requires gpu/across_traces

-- kernels_across: one row per kernel (short name, as kernel_summary merges them) over the traces of rows.
--   rows                                   the name of a table or view with the columns of kernels_by_trace
--   name, activity_class                   as in kernel_summary
--   n_traces                               traces in which it ran
--   count                                  GPU events over all traces
--   total_ms                               their summed duration, ms
--   share_pct                              of the summed duration of every trace's counted GPU events
--   max_trace_pct, max_trace               its largest share of one trace's GPU time (kernel_summary.time_pct),
--                                          and that trace (label; the first label in order on a tie)
CREATE OR REPLACE MACRO kernels_across(rows) AS TABLE
SELECT k.name, k.activity_class, count(DISTINCT k.trace_id) AS n_traces, sum(k.count)::BIGINT AS count,
       sum(k.total_ns) / 1e6 AS total_ms,
       100.0 * sum(k.total_ns) / (SELECT sum(total_ns) FROM query_table(rows)) AS share_pct,
       max(k.time_pct) AS max_trace_pct, first(k.trace ORDER BY k.time_pct DESC NULLS LAST, k.trace) AS max_trace
FROM query_table(rows) k
GROUP BY k.name, k.activity_class;

-- ops_across: one row per op name over the traces of rows (op_summary: a GPU event belongs to the innermost
-- cpu_op around its launch).
--   rows                                   the name of a table or view with the columns of ops_by_trace
--   op_name                                as in op_summary ('[no launch]', '[launch API]' included)
--   n_traces                               traces in which it launched GPU work
--   op_count, kernel_count                 calls and GPU events over all traces
--   kernel_time_ms                         GPU time of its kernels over all traces, ms
--   share_pct                              of the GPU time of every trace's ops
--   max_trace_pct, max_trace               its largest share of one trace (op_summary.time_pct), and that trace
--                                          (label; the first label in order on a tie)
CREATE OR REPLACE MACRO ops_across(rows) AS TABLE
SELECT o.op_name, count(DISTINCT o.trace_id) AS n_traces, sum(o.op_count)::BIGINT AS op_count,
       sum(o.kernel_count)::BIGINT AS kernel_count, sum(o.kernel_time_ns) / 1e6 AS kernel_time_ms,
       100.0 * sum(o.kernel_time_ns) / (SELECT sum(kernel_time_ns) FROM query_table(rows)) AS share_pct,
       max(o.time_pct) AS max_trace_pct, first(o.trace ORDER BY o.time_pct DESC NULLS LAST, o.trace) AS max_trace
FROM query_table(rows) o
GROUP BY o.op_name;

-- kernels_across_traces: one row per kernel over all traces (kernels_across over kernels_by_trace).
--   columns as in kernels_across
-- @output report-across 2 kernels_across_traces \
--     TITLE "Kernels across traces" \
--     ABOUT "One row per kernel over all traces: its time in each and in all; ms." \
--     ORDER BY total_ms DESC, name LIMIT 200
CREATE OR REPLACE VIEW kernels_across_traces AS SELECT * FROM kernels_across('kernels_by_trace');

-- ops_across_traces: one row per op name over all traces (ops_across over ops_by_trace).
--   columns as in ops_across
-- @output report-across 3 ops_across_traces \
--     TITLE "Ops across traces" \
--     ABOUT "One row per op over all traces: its time in each and in all; ms." \
--     ORDER BY kernel_time_ms DESC, op_name LIMIT 200
CREATE OR REPLACE VIEW ops_across_traces AS SELECT * FROM ops_across('ops_by_trace');
