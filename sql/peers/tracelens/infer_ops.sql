-- peers/tracelens/infer_ops — TraceLens (0.1.0) inference report's ops tables: ops_summary,
-- ops_summary_by_category and ops_unique_args per parent nn.Module, over the inference report's tree, in which
-- the frame pseudo ops launch GPU events.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from its source; the code
-- is ours. The inference report's tree holds Python frames and, with pseudo ops on, the frame pseudo ops of
-- peers/tracelens/perf_infer (_tl_infer_pseudo_ops rows with a frame): pseudo_mla_decode_fwd,
-- pseudo_mla_prefill_fwd and pseudo_v4_paged_decode_* between their frame and its children
-- (inject_pseudo_op_wrap_children in TraceLens/Trace2Tree/extensions/pseudo_ops_utils.py), the flydsl MoE ones
-- between their frame and its parent (inject_pseudo_op_above_event). TraceLens's launcher of a GPU event
-- (TreePerfAnalyzer.get_kernel_launchers in TraceLens/TreePerf/tree_perf.py) is the first cpu_op up from its
-- runtime call past Python frames, and a pseudo op is a cpu_op. So a frame pseudo op launches the GPU events
-- launched inside its frame that nothing inside the frame holds: those whose launcher (peers/tracelens/links)
-- is a cpu_op around the frame, or the launch call itself when no runtime call inside the frame encloses it;
-- under nested frames, the innermost frame's pseudo op. Its subtree holds every GPU event TraceLens links
-- under its frame; its args are its donor's, its thread and start its frame's; its frame's event_id stands for
-- it in the launcher tables and as its ex_UID. The pseudo ops that
-- inject_pseudo_op makes (the MoE ones over one kernel of an op) never launch: it does not make itself the
-- parent of the runtime call it adopts, and the walk goes up by parents.
--
-- @requires tree/nesting tree/context peers/tracelens/links peers/tracelens/launchers peers/tracelens/op_categories
-- @requires peers/tracelens/ops_unique_args peers/tracelens/perf_infer

-- _tl_infer_pseudo_launches: one row per GPU event launched inside a frame with a pseudo op (the innermost such
-- frame).
--   trace_id, event_id          the GPU event
--   frame_id, name, ts_ns       the pseudo op: its frame's event_id (which stands for it as a launcher here; a
--                               Python frame launches nothing itself), its name, its frame's start
--   runtime_ts_ns               start of the runtime call around the launch call, if any
-- @materialize report-tracelens-inference
CREATE OR REPLACE VIEW _tl_infer_pseudo_launches AS
WITH pf AS MATERIALIZED (
    SELECT trace_id, frame_id, name, ts_ns, ts_ns + dur_ns AS end_ns FROM _tl_infer_frame_pseudo_ops
), inner_pf AS MATERIALIZED (
    SELECT g.trace_id, g.gpu_event_id, g.launch_event_id, p.frame_id, p.name, p.ts_ns
    FROM _tl_infer_frame_gpu g JOIN pf p ON p.trace_id = g.trace_id AND p.frame_id = g.frame_id
    QUALIFY row_number() OVER (PARTITION BY g.trace_id, g.gpu_event_id
                               ORDER BY p.ts_ns DESC, p.end_ns, p.frame_id DESC) = 1
)
SELECT f.trace_id, f.gpu_event_id AS event_id, f.frame_id, f.name, f.ts_ns, r.ts_ns AS runtime_ts_ns
FROM inner_pf f
LEFT JOIN cpu_event_context c ON c.trace_id = f.trace_id AND c.event_id = f.launch_event_id AND c.anchor_kind = 'launch'
LEFT JOIN events r ON r.trace_id = c.trace_id AND r.event_id = c.runtime_parent_event_id;

-- _tl_infer_gpu_event_ops: tl_gpu_event_ops over the inference report's tree: every column of it, the
-- launcher columns (tl_launcher_trace_id, tl_launcher_event_id, tl_launcher_name, tl_launcher_ts_ns) naming the
-- frame pseudo op (by its frame's event_id) for the GPU events it launches: those under its frame whose launcher
-- is a cpu_op around the frame, or the launch call itself with no runtime call inside the frame around it.
CREATE OR REPLACE VIEW _tl_infer_gpu_event_ops AS
WITH o AS (
    SELECT o.*, m.frame_id AS p_frame_id, m.name AS p_name, m.ts_ns AS p_ts_ns,
           m.frame_id IS NOT NULL AND o.tl_launcher_event_id IS NOT NULL
           AND CASE WHEN o.tl_launcher_event_id = o.launch_event_id THEN coalesce(m.runtime_ts_ns < m.ts_ns, true)
                    ELSE o.tl_launcher_ts_ns < m.ts_ns END AS p_takes
    FROM tl_gpu_event_ops o
    LEFT JOIN _tl_infer_pseudo_launches m ON m.trace_id = o.trace_id AND m.event_id = o.event_id
)
SELECT * EXCLUDE (p_frame_id, p_name, p_ts_ns, p_takes) REPLACE (
           CASE WHEN p_takes THEN trace_id ELSE tl_launcher_trace_id END AS tl_launcher_trace_id,
           CASE WHEN p_takes THEN p_frame_id ELSE tl_launcher_event_id END AS tl_launcher_event_id,
           CASE WHEN p_takes THEN p_name ELSE tl_launcher_name END AS tl_launcher_name,
           CASE WHEN p_takes THEN p_ts_ns ELSE tl_launcher_ts_ns END AS tl_launcher_ts_ns)
FROM o;

-- _tl_infer_op_gpu_pairs: _tl_op_gpu_pairs of the inference report's tree: the cpu_ops' pairs, and each frame
-- pseudo op (by its frame's event_id) with every GPU event under its frame.
CREATE OR REPLACE VIEW _tl_infer_op_gpu_pairs AS
SELECT trace_id, op_event_id, gpu_event_id, ts_ns, dur_ns FROM _tl_op_gpu_pairs
UNION ALL
SELECT p.trace_id, p.frame_id, g.gpu_event_id, g.ts_ns, g.dur_ns
FROM _tl_infer_frame_pseudo_ops p JOIN _tl_infer_frame_gpu g ON g.trace_id = p.trace_id AND g.frame_id = p.frame_id;

-- _tl_infer_launcher_args: the frame pseudo ops as launchers of the inference report's tree (the launcher_args of
-- _tl_ops_unique_args): each frame with a pseudo op, standing for it, with its thread and start and its donor's
-- args.
CREATE OR REPLACE VIEW _tl_infer_launcher_args AS
SELECT p.trace_id, p.frame_id AS event_id, p.pid, p.tid, p.ts_ns, d.input_dims, d.input_types, d.input_strides,
       d.concrete_inputs
FROM _tl_infer_frame_pseudo_ops p JOIN events d ON d.trace_id = p.trace_id AND d.event_id = p.donor_id;

-- _tl_infer_launchers: tl_launchers of the inference report's tree (its columns).
-- @materialize report-tracelens-inference
CREATE OR REPLACE VIEW _tl_infer_launchers AS
SELECT * FROM _tl_launchers_of('_tl_infer_gpu_event_ops', '_tl_infer_op_gpu_pairs');

-- _tl_infer_op_category: tl_op_category of the inference report's tree (its columns).
-- @materialize report-tracelens-inference
CREATE OR REPLACE VIEW _tl_infer_op_category AS
SELECT * FROM _tl_op_category_of('_tl_infer_gpu_event_ops');

-- Helper: every TraceLens launcher instance with its op category, parent module and call stack as the
-- inference report prints them (TreePerfAnalyzer.get_df_kernel_launchers with include_call_stack, in
-- TraceLens/TreePerf/tree_perf.py), over the inference report's tree.
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
    FROM _tl_infer_launchers l
    JOIN _tl_infer_op_category c ON c.trace_id = l.tl_launcher_trace_id
                                AND c.tl_launcher_event_id = l.tl_launcher_event_id
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
--   Percentage (%)                    the row's ms over the trace's Σ of ms (numpy's sum) · 100, as TraceLens
--                                     divides
--   Cumulative Percentage (%)         running sum of Percentage (%) (numpy's cumsum), rows by direct time
--                                     descending
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
                                                               parent_module) AS rank
    FROM g
), ms AS (   -- the rows' times in ms as _np_sums input, for the trace's total
    SELECT trace_id AS id, rank AS i, total_direct_kernel_time_sum / 1000 AS x FROM r
), pct AS (
    SELECT r.trace_id, r.rank, r.total_direct_kernel_time_sum / 1000 / t.s * 100 AS pct
    FROM r JOIN _np_sums('ms') t ON t.id = r.trace_id
)
SELECT r.trace_id, r.name, r.parent_module, r.total_direct_kernel_time_sum, r.total_subtree_kernel_time_sum,
       r.n AS total_subtree_kernel_time_count, r.total_direct_kernel_time_sum / 1000 AS total_direct_kernel_time_ms,
       r.n AS "Count", r.categories AS "Categories", r.call_stack_first, p.pct AS "Percentage (%)",
       c.cum_pct AS "Cumulative Percentage (%)", r.rank
FROM r JOIN pct p ON p.trace_id = r.trace_id AND p.rank = r.rank
JOIN _np_cumsum_pct('pct') c ON c.trace_id = r.trace_id AND c.rank = r.rank;

-- tl_ops_unique_args_module: the same in the layout of TraceLens's inference report (the graphs/
-- vllm_decode_full reference), grouped also by parent module and kernel count; TraceLens's column names.
--   parent_module     'nn.Module: <class>' of the innermost nn.Module around the launcher (the frame's
--                     instance suffix _N removed), 'NA' when there is none (_tl_infer_op_category.module_path)
--   num_kernels       GPU events of each instance (_tl_infer_launchers.direct_kernel_count)
--   call_stack        of the group's first instance: the launcher name, then its nn.Module frames innermost
--                     first, as a Python list literal
--   ex_UID            as in tl_ops_unique_args; for a frame pseudo op its frame's event_id (TraceLens prints
--                     the pseudo op's own id, _tl_infer_pseudo_ops.event_id: numbering it needs the merged
--                     tree's capture windows and MoE pseudo ops, which this view does not compute)
--   other columns     as in tl_ops_unique_args
-- @output report-tracelens-module 5 ops_unique_args EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_ops_unique_args_module AS
SELECT trace_id, name, op_category AS "op category", parent_module, process_name, process_label, thread_name,
       input_dims AS "Input Dims", input_type AS "Input type", input_strides AS "Input Strides",
       concrete_inputs AS "Concrete Inputs", num_kernels, operation_count,
       d_mean AS total_direct_kernel_time_mean, s_mean AS total_subtree_kernel_time_mean,
       d_median AS total_direct_kernel_time_median, s_median AS total_subtree_kernel_time_median,
       d_std AS total_direct_kernel_time_std, s_std AS total_subtree_kernel_time_std,
       d_min AS total_direct_kernel_time_min, s_min AS total_subtree_kernel_time_min,
       d_max AS total_direct_kernel_time_max, s_max AS total_subtree_kernel_time_max,
       d_sum AS total_direct_kernel_time_sum, s_sum AS total_subtree_kernel_time_sum,
       ex_uid AS "ex_UID", call_stack, kernel_details_summary, trunc_kernel_details,
       pct AS "Percentage (%)", cum_pct AS "Cumulative Percentage (%)", rank
FROM _tl_ops_unique_args(true, '_tl_infer_launchers', '_tl_infer_op_category', '_tl_infer_gpu_event_ops',
                         '_tl_infer_launcher_args')
ORDER BY trace_id, rank;
