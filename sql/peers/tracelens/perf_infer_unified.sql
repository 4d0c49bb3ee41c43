-- peers/tracelens/perf_infer_unified — TraceLens (0.1.0) inference report's unified_perf_summary.csv: the unified
-- perf table (peers/tracelens/perf_unified) over the inference report's tree, with the call stack columns its
-- --group_by_parent_module run adds.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/TreePerf/tree_perf.py (collect_unified_perf_events, build_df_unified_perf_table,
-- summarize_df_unified_perf_table), TraceLens/Reporting/generate_perf_report_pytorch.py (_find_entry_point) and
-- TraceLens/Trace2Tree/extensions/pseudo_ops_utils.py (inject_pseudo_op, inject_pseudo_op_wrap_children,
-- inject_pseudo_op_above_event); the code is ours.
--   tree        the inference report's tree (peers/tracelens/perf_infer): the trace's own events, the capture
--               windows merged under their graph launch (moved to its start and duration), the MoE pseudo
--               ops, each the child of its kernel's launch's parent with that launch below it, no duration and
--               the moe_forward's args, and the frame pseudo ops (flydsl, MLA, DeepSeek-V4 decode) with their
--               frame's duration and their donor's args: an MLA or V4 one between its frame and the frame's
--               children, a flydsl one between its frame and the frame's parent, so in the ops' tree each sits under
--               the innermost cpu_op around the frame, over the ops inside the frame that hung from that op, and is
--               the innermost op of the kernels launched in the frame outside any cpu_op. Its ops are collected by the rule of peers/tracelens/perf_unified
--               (_tl_unified_collect) with the inference registry (tl_perf_model_ops, tl_perf_infer_model_ops,
--               the modelled pseudo ops, torch.compile's Triton ops); GPU events of no collected op become
--               synthetic ops numbered after the pseudo ops.
--   rows        as perf_unified; a capture op's CPU duration is its graph launch's; the metrics of the
--               inference report's sheets (perf_infer) and of the other families' sheets for the trace's own ops;
--               an op whose model raises NotImplementedError (_tl_perf_infer_unimplemented) has no row.
--   call stack  with --group_by_parent_module the tree holds Python frames and every collected op carries the
--               path that reached it; a kernel's call stack is that path, then the frames from the op down to the
--               kernel's launch, then the kernel name: the names on the way from the tree's root to the launch
--               that contain 'nn.Module', '::' or '/', or are cpu_ops, each with every '_<digits>' removed. A
--               pseudo op is not on its launch's way up, so its kernel's call stack is the path to the pseudo op
--               followed by the whole way from the root to the launch; a synthetic op's is its kernel name only.
--   call_stack_full  from the group's kernel_details_summary entries (its first op's kernels, in the list's
--               order): one kernel, its call stack; several, their common prefix, then each distinct remainder
--               as a list of its own (first seen first); 'Not found' without kernels.
--   entry_point the last frame equal to the op name (else to it without a trailing '_<digits>'), then: the first
--               frame after it with '.py' whose function name (after the last '): ', lower case) contains the
--               op name's part after its last '::' (lower case); else the nearest frame before it with '.py'
--               that is not a wrapper (a name starting '<built-in', 'pybind11_builtins' or 'nn.Module:', a file
--               among torch/_ops.py, torch/nn/modules/module.py, torch/utils/_contextlib.py,
--               torch/utils/_device.py, torch/_tensor.py, torch/functional.py, torch/overrides.py,
--               torch/_inductor/, torch/_functorch/, torch/distributed/c10d_logger.py, triton/backends/, or a
--               function named __torch_function__, _call_impl, _wrapped_call_impl, decorate_context,
--               dispatch_wrapper, handle_torch_function, wrapper, custom_wrapper, wrapper_custom,
--               outer_wrapper); else 'Not found'.
-- Not reproduced: collection order beyond start order (TraceLens visits the trees of Python roots before the
-- cpu_ops outside them), the 10-level limit of TraceLens's leaf test, a cpu_op of the replay around a graph
-- launch, and the families of perf_unified that perf_infer does not model for capture ops.
--
-- @requires lib/pytext peers/float_us peers/tracelens/perf_unified peers/tracelens/perf_infer
-- @requires peers/tracelens/op_categories peers/tracelens/links tree/rollups tree/nesting tree/graph_capture

-- _tl_infer_unified_rows: one row per op of the unified perf table of TraceLens's inference report (before
-- grouping): the columns of _tl_unified_rows, whose kernels also carry each kernel's call stack (stack, a
-- list of frames ending with the kernel name).
-- @materialize report-tracelens-inference
CREATE OR REPLACE VIEW _tl_infer_unified_rows AS
WITH RECURSIVE lk AS MATERIALIZED (   -- the GPU events TraceLens links
    SELECT trace_id, event_id, name, stream, ts_ns, dur_ns, is_nccl, launch_event_id
    FROM tl_gpu_event_ops WHERE tl_linked
), pseudo AS MATERIALIZED (
    SELECT * FROM _tl_infer_perf_events WHERE pseudo_parent_uid IS NOT NULL
), fps AS MATERIALIZED (   -- the frame pseudo ops (flydsl MoE stages, MLA, DeepSeek-V4 decode): their frame's window,
                           -- the frame's parent in the call stack, the innermost cpu_op around the frame (around_id)
                           -- and whether the op wraps the frame's children (else it sits above the frame)
    SELECT s.trace_id, s.event_id AS uid, s.name, s.sheet, s.pseudo_frame_id AS frame_id, s.pseudo_donor_id AS donor_id,
           f.pid, f.tid, f.ts_ns, f.ts_ns + f.dur_ns AS end_ns, f.dur_ns, n.tree_parent_id AS frame_parent,
           NOT starts_with(s.name, 'pseudo_op::moe_flydsl') AS wrap,
           (SELECT arg_max(a.event_id, (a.ts_ns, a.event_id)) FROM events a
            WHERE a.trace_id = f.trace_id AND a.cat = 'cpu_op' AND a.pid = f.pid AND a.tid = f.tid
              AND a.ts_ns <= f.ts_ns AND f.ts_ns + f.dur_ns <= a.ts_ns + a.dur_ns) AS around_id
    FROM _tl_infer_perf_events s JOIN events f ON f.trace_id = s.trace_id AND f.event_id = s.pseudo_frame_id
    LEFT JOIN _tl_stack_nodes n ON n.trace_id = f.trace_id AND n.event_id = f.event_id
), fpg AS MATERIALIZED (   -- their GPU events (launched inside the frame); the op is the innermost one around the
                           -- launch unless a cpu_op inside the frame is
    SELECT x.trace_id, x.uid, o.event_id AS gpu_event_id,
           o.op_event_id IS NOT DISTINCT FROM x.around_id AS is_direct
    FROM fps x JOIN tl_gpu_event_ops o ON o.trace_id = x.trace_id AND o.tl_linked AND o.capture_trace_id IS NULL
     AND o.launch_pid = x.pid AND o.launch_tid = x.tid AND o.launch_ts_ns >= x.ts_ns
     AND o.launch_ts_ns + o.launch_dur_ns <= x.end_ns
), g AS MATERIALIZED (   -- (op, GPU event) pairs of the tree; a pseudo op is its kernel's innermost op
    SELECT p.trace_id, p.uid AS op_event_id, p.gpu_event_id,
           p.is_direct AND NOT EXISTS (SELECT 1 FROM pseudo s WHERE s.trace_id = p.trace_id
                                                             AND s.pseudo_gpu_event_id = p.gpu_event_id)
           AND NOT EXISTS (SELECT 1 FROM fpg f WHERE f.trace_id = p.trace_id AND f.gpu_event_id = p.gpu_event_id
                                                AND f.is_direct) AS is_direct,
           k.is_nccl
    FROM _tl_infer_op_gpu p JOIN lk k ON k.trace_id = p.trace_id AND k.event_id = p.gpu_event_id
    UNION ALL
    SELECT s.trace_id, s.event_id, s.pseudo_gpu_event_id, true, k.is_nccl
    FROM pseudo s JOIN lk k ON k.trace_id = s.trace_id AND k.event_id = s.pseudo_gpu_event_id
    UNION ALL
    SELECT f.trace_id, f.uid, f.gpu_event_id, f.is_direct, k.is_nccl
    FROM fpg f JOIN lk k ON k.trace_id = f.trace_id AND k.event_id = f.gpu_event_id
), launch AS MATERIALIZED (   -- graph launch of each merged window
    SELECT DISTINCT l.trace_id, l.graph_index, l.graph_launch_event_id, e.ts_ns, e.dur_ns
    FROM graph_capture_links l JOIN events e ON e.trace_id = l.trace_id AND e.event_id = l.graph_launch_event_id
), cap AS MATERIALIZED (   -- the capture windows' cpu_ops: uid, the op around them in the window, the launch
    SELECT c.trace_id, c.uid, c.capture_trace_id, c.event_id AS src_event_id, c.graph_index, pc.uid AS parent_id
    FROM _tl_infer_capture_events c
    JOIN cpu_event_context x ON x.trace_id = c.capture_trace_id AND x.event_id = c.event_id
    LEFT JOIN _tl_infer_capture_events pc ON pc.trace_id = c.trace_id AND pc.graph_index = c.graph_index
     AND pc.capture_trace_id = c.capture_trace_id AND pc.event_id = x.op_event_id
    WHERE c.cat = 'cpu_op'
), ops_a AS MATERIALIZED (   -- the trace's own cpu_ops and the capture ops
    SELECT c.trace_id, c.event_id AS uid, coalesce(fx.uid, c.op_event_id) AS parent_id, _tl_op_name(e.name) AS name,
           e.trace_id AS src_trace_id,
           e.event_id AS src_event_id, r.ts_ns AS k1, c.top_op_event_id AS k2, e.ts_ns AS k3, e.event_id AS k4,
           0 AS k5, e.dur_ns, NULL::BIGINT AS pseudo_parent_uid, NULL::BIGINT AS pseudo_gpu_event_id,
           NULL::VARCHAR AS sheet
    FROM cpu_event_context c
    JOIN events e ON e.trace_id = c.trace_id AND e.event_id = c.event_id
    JOIN events r ON r.trace_id = c.trace_id AND r.event_id = c.top_op_event_id
    LEFT JOIN fps fx ON fx.trace_id = c.trace_id AND fx.pid = e.pid AND fx.tid = e.tid   -- an op inside a frame
     AND e.ts_ns >= fx.ts_ns AND e.ts_ns + e.dur_ns <= fx.end_ns                        -- whose pseudo op is now
     AND c.op_event_id IS NOT DISTINCT FROM fx.around_id                                -- between it and its parent
    WHERE c.anchor_kind = 'op'
    UNION ALL
    SELECT c.trace_id, c.uid, c.parent_id, _tl_op_name(e.name), c.capture_trace_id, c.src_event_id, l.ts_ns,
           l.graph_launch_event_id, l.ts_ns, l.graph_launch_event_id, c.uid, l.dur_ns, NULL, NULL, NULL
    FROM cap c JOIN events e ON e.trace_id = c.capture_trace_id AND e.event_id = c.src_event_id
    JOIN launch l ON l.trace_id = c.trace_id AND l.graph_index = c.graph_index
), ops0 AS (   -- every op of the tree: those, the frame pseudo ops (at their frame's place, under the op around
               -- it), and the other pseudo ops, each taking its launch's place (by the launch's id) under the
               -- launch's parent
    SELECT * FROM ops_a
    UNION ALL
    SELECT x.trace_id, x.uid, x.around_id, x.name, x.trace_id, x.donor_id, coalesce(t.ts_ns, x.ts_ns),
           coalesce(a.top_op_event_id, x.uid), x.ts_ns, x.frame_id, 0, x.dur_ns, NULL, NULL, x.sheet
    FROM fps x
    LEFT JOIN cpu_event_context a ON a.trace_id = x.trace_id AND a.event_id = x.around_id AND a.anchor_kind = 'op'
    LEFT JOIN events t ON t.trace_id = a.trace_id AND t.event_id = a.top_op_event_id
    UNION ALL
    SELECT s.trace_id, s.event_id, s.pseudo_parent_uid, s.name, m.src_trace_id, m.src_event_id, m.k1, m.k2, m.k3,
           m.k4, coalesce(cl.uid, m.k5), NULL, s.pseudo_parent_uid, s.pseudo_gpu_event_id, s.sheet
    FROM pseudo s
    JOIN ops_a m ON m.trace_id = s.trace_id AND m.uid = s.pseudo_parent_uid
    LEFT JOIN graph_capture_links gl ON gl.trace_id = s.trace_id AND gl.event_id = s.pseudo_gpu_event_id
    LEFT JOIN _tl_infer_capture_events cl ON cl.trace_id = gl.trace_id AND cl.graph_index = gl.graph_index
     AND cl.capture_trace_id = gl.capture_trace_id AND cl.event_id = gl.capture_launch_event_id
), ops AS MATERIALIZED (   -- the ops with GPU work, with their perf model
    SELECT o.trace_id, o.uid AS event_id, o.parent_id, o.name, o.src_trace_id, o.src_event_id, o.k1, o.k2, o.k3,
           o.k4, o.k5, o.dur_ns, o.pseudo_parent_uid, o.pseudo_gpu_event_id,
           CASE WHEN o.pseudo_parent_uid IS NOT NULL OR o.sheet IS NOT NULL THEN o.sheet IS NOT NULL
                ELSE o.name IN (SELECT name FROM tl_perf_model_ops UNION ALL SELECT name FROM tl_perf_infer_model_ops)
                     OR EXISTS (SELECT 1 FROM _tl_perf_triton t WHERE t.trace_id = o.src_trace_id
                                                               AND t.event_id = o.src_event_id) END AS model
    FROM ops0 o SEMI JOIN g ON g.trace_id = o.trace_id AND g.op_event_id = o.uid
), collected AS MATERIALIZED (
    SELECT o.* FROM ops o SEMI JOIN _tl_unified_collect('g', 'ops') c ON c.trace_id = o.trace_id AND c.event_id = o.event_id
), covered AS (
    SELECT DISTINCT g.trace_id, g.gpu_event_id FROM g SEMI JOIN collected c
        ON c.trace_id = g.trace_id AND c.event_id = g.op_event_id
), left_out AS MATERIALIZED (   -- GPU events of no collected op: each a synthetic op under its parent
    SELECT k.trace_id, k.event_id AS gpu_event_id, k.ts_ns, k.name AS kernel, d.op_event_id AS parent_op,
           coalesce(cl.uid, k.launch_event_id) AS launch_uid
    FROM lk k
    LEFT JOIN g d ON d.trace_id = k.trace_id AND d.gpu_event_id = k.event_id AND d.is_direct
    LEFT JOIN graph_capture_links gl ON gl.trace_id = k.trace_id AND gl.event_id = k.event_id
    LEFT JOIN _tl_infer_capture_events cl ON cl.trace_id = gl.trace_id AND cl.graph_index = gl.graph_index
     AND cl.capture_trace_id = gl.capture_trace_id AND cl.event_id = gl.capture_launch_event_id
    ANTI JOIN covered c ON c.trace_id = k.trace_id AND c.gpu_event_id = k.event_id
    WHERE NOT k.is_nccl
), last_uid AS (   -- the tree's largest id: its own events, merged windows and pseudo ops
    SELECT t.trace_id, greatest(t.events_read - 1, max(c.uid), max(s.event_id), max(x.uid)) AS n
    FROM traces t
    LEFT JOIN _tl_infer_capture_events c ON c.trace_id = t.trace_id
    LEFT JOIN pseudo s ON s.trace_id = t.trace_id
    LEFT JOIN fps x ON x.trace_id = t.trace_id
    GROUP BY t.trace_id, t.events_read
), synth AS (
    SELECT l.*, coalesce(l.parent_op, l.launch_uid) AS parent_id,
           n.n + row_number() OVER (PARTITION BY l.trace_id ORDER BY l.parent_op IS NOT NULL,
                                    CASE WHEN l.parent_op IS NULL THEN l.launch_uid END, l.ts_ns, l.gpu_event_id)
               AS uid
    FROM left_out l JOIN last_uid n ON n.trace_id = l.trace_id
), node AS MATERIALIZED (   -- the call-stack nodes: the trace's own events (a frame pseudo op between its frame and
                             -- the frame's children, or above the frame) and the merged capture events
    SELECT n.trace_id, n.event_id AS uid, n.name, n.cat, coalesce(x.uid, n.tree_parent_id) AS parent_uid,
           n.trace_id AS src_trace_id, n.event_id AS src_event_id
    FROM _tl_stack_nodes n
    LEFT JOIN fps x ON x.trace_id = n.trace_id AND CASE WHEN x.wrap THEN n.tree_parent_id = x.frame_id
                                                        ELSE n.event_id = x.frame_id END
    WHERE n.trace_id IN (SELECT trace_id FROM collected)
    UNION ALL
    SELECT trace_id, uid, name, 'cpu_op', CASE WHEN wrap THEN frame_id ELSE frame_parent END, trace_id, donor_id
    FROM fps
    UNION ALL
    SELECT trace_id, uid, name, cat, parent_uid, capture_trace_id, event_id FROM _tl_infer_capture_events
), real_rows AS (
    SELECT c.trace_id, c.event_id AS uid, c.name, c.model,
           row_number() OVER (PARTITION BY c.trace_id ORDER BY c.k1, c.k2, c.k3, c.k4, c.k5, c.event_id) AS ord,
           c.src_trace_id, c.src_event_id, c.dur_ns, c.pseudo_parent_uid, NULL::BIGINT AS gpu_only
    FROM collected c
), synth_rows AS (
    SELECT s.trace_id, s.uid, p.name || '->' || s.kernel || ' (Synthetic Op)' AS name, false AS model,
           1000000000000 + row_number() OVER (PARTITION BY s.trace_id ORDER BY s.uid) AS ord,
           p.src_trace_id, p.src_event_id, coalesce(o.dur_ns, e.dur_ns) AS dur_ns, NULL::BIGINT, s.gpu_event_id
    FROM synth s
    JOIN node p ON p.trace_id = s.trace_id AND p.uid = s.parent_id
    JOIN events e ON e.trace_id = p.src_trace_id AND e.event_id = p.src_event_id
    LEFT JOIN ops o ON o.trace_id = s.trace_id AND o.event_id = s.parent_id
), rows_ AS MATERIALIZED (
    SELECT * FROM real_rows UNION ALL SELECT * FROM synth_rows
), kern AS MATERIALIZED (   -- each row's GPU events, with the tree node of their (capture-time) launch
    SELECT r.trace_id, r.uid, k.event_id AS gpu_event_id, k.name AS kernel, k.stream, k.ts_ns, k.dur_ns,
           coalesce(cl.uid, k.launch_event_id) AS launch_uid, cl.uid IS NOT NULL AS captured, lt.ts_ns AS launch_ts_ns
    FROM rows_ r
    JOIN g ON g.trace_id = r.trace_id AND g.op_event_id = r.uid
    JOIN lk k ON k.trace_id = g.trace_id AND k.event_id = g.gpu_event_id
    LEFT JOIN events lt ON lt.trace_id = k.trace_id AND lt.event_id = k.launch_event_id
    LEFT JOIN graph_capture_links gl ON gl.trace_id = k.trace_id AND gl.event_id = k.event_id
    LEFT JOIN _tl_infer_capture_events cl ON cl.trace_id = gl.trace_id AND cl.graph_index = gl.graph_index
     AND cl.capture_trace_id = gl.capture_trace_id AND cl.event_id = gl.capture_launch_event_id
    WHERE r.gpu_only IS NULL
    UNION ALL
    SELECT r.trace_id, r.uid, k.event_id, k.name, k.stream, k.ts_ns, k.dur_ns, NULL, false, NULL
    FROM rows_ r JOIN lk k ON r.gpu_only IS NOT NULL AND k.trace_id = r.trace_id AND k.event_id = r.gpu_only
), walk(trace_id, start_uid, uid, depth) AS (   -- from each launch up to the root
    SELECT DISTINCT trace_id, launch_uid, launch_uid, 0 FROM kern WHERE launch_uid IS NOT NULL
    UNION ALL
    SELECT w.trace_id, w.start_uid, n.parent_uid, w.depth + 1
    FROM walk w JOIN node n ON n.trace_id = w.trace_id AND n.uid = w.uid
    WHERE n.parent_uid IS NOT NULL
), paths AS MATERIALIZED (   -- the stack names on the way: down to the launch, and down to its parent
    SELECT w.trace_id, w.start_uid,
           coalesce(list(regexp_replace(n.name, '_\d+', '', 'g') ORDER BY w.depth DESC)
                    FILTER (WHERE n.cat = 'cpu_op' OR contains(n.name, 'nn.Module') OR contains(n.name, '::')
                                  OR contains(n.name, '/')), []) AS to_launch,
           coalesce(list(regexp_replace(n.name, '_\d+', '', 'g') ORDER BY w.depth DESC)
                    FILTER (WHERE w.depth > 0 AND (n.cat = 'cpu_op' OR contains(n.name, 'nn.Module')
                                                   OR contains(n.name, '::') OR contains(n.name, '/'))), [])
               AS to_parent
    FROM walk w JOIN node n ON n.trace_id = w.trace_id AND n.uid = w.uid
    GROUP BY w.trace_id, w.start_uid
), kx AS (
    SELECT k.*, _us_f64(k.ts_ns) AS s, _us_f64(k.ts_ns) + _us_f64(k.dur_ns) AS e, _us_f64(k.dur_ns) AS dur_us,
           CASE WHEN r.gpu_only IS NOT NULL OR p.start_uid IS NULL THEN [k.kernel]
                WHEN r.pseudo_parent_uid IS NOT NULL
                THEN list_concat(p.to_parent, [regexp_replace(r.name, '_\d+', '', 'g')], p.to_launch, [k.kernel])
                ELSE list_concat(p.to_launch, [k.kernel]) END AS stack
    FROM kern k JOIN rows_ r ON r.trace_id = k.trace_id AND r.uid = k.uid
    LEFT JOIN paths p ON p.trace_id = k.trace_id AND p.start_uid = k.launch_uid
), busy AS MATERIALIZED (
    SELECT trace_id, uid, sum(_tree_busy_ns(s, e, prev_e)) AS kernel_time_us,
           list({'name': kernel, 'stream': stream, 'dur_us': dur_us, 'stack': stack}
                ORDER BY CASE WHEN captured THEN ts_ns ELSE launch_ts_ns END,
                         CASE WHEN captured THEN 0 ELSE launch_uid END, s, gpu_event_id) AS kernels,
           arg_min(kernel, (ts_ns, gpu_event_id)) AS first_kernel
    FROM (SELECT *, max(e) OVER (PARTITION BY trace_id, uid ORDER BY s, e
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e FROM kx)
    GROUP BY trace_id, uid
), inst AS MATERIALIZED (   -- the modelled instances: the inference report's families, the others' of own ops
    SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_gemm
    UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_unary
    UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_rmsnorm
    UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_attention
    UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_moe_all
    UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_moe_fused
    UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_ssm
    UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_fused_rope
    UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_mhc
    UNION ALL SELECT * FROM _tl_perf_instances_cpu_families
), tri AS (   -- torch.compile's Triton ops, keyed by their event in its own trace
    SELECT trace_id AS src_trace_id, event_id AS src_event_id, params, flops, bytes, compute_spec FROM _tl_perf_triton
), ev AS MATERIALIZED (
    SELECT e.trace_id, e.event_id, e.pid, e.tid, e.input_dims::VARCHAR AS input_dims,
           e.input_types::VARCHAR AS input_types, e.input_strides::VARCHAR AS input_strides,
           e.concrete_inputs::VARCHAR AS concrete_inputs
    FROM events e SEMI JOIN rows_ r ON r.src_trace_id = e.trace_id AND r.src_event_id = e.event_id
)
SELECT r.trace_id, r.uid, r.ord, r.name,
       CASE WHEN r.gpu_only IS NOT NULL AND _tl_op_rule_category(r.name) IS NOT NULL   -- the registry's name
            THEN _tl_op_rule_category(r.name)
            WHEN r.gpu_only IS NOT NULL AND regexp_matches(split_part(r.name, '->', 1), '^triton') THEN 'triton'
            WHEN r.gpu_only IS NOT NULL AND regexp_matches(split_part(r.name, '->', 1), '^record_param_comms')
            THEN 'record_param_comms'
            WHEN r.gpu_only IS NULL AND nc.matched THEN nc.op_category
            WHEN r.gpu_only IS NULL AND nc.name IS NULL AND _tl_op_rule_category(r.name) IS NOT NULL
            THEN _tl_op_rule_category(r.name)
            ELSE coalesce(fk.category, 'other') END AS op_category,
       e.pid, e.tid, e.input_dims::JSON AS input_dims, e.input_types::JSON AS input_types,
       e.input_strides::JSON AS input_strides, e.concrete_inputs::JSON AS concrete_inputs,
       _us_f64(r.dur_ns) AS duration_us, r.model AS has_perf_model,
       b.kernel_time_us, b.kernels, coalesce(i.params, t.params) AS params, coalesce(i.flops, t.flops) AS flops,
       coalesce(i.bytes, t.bytes) AS bytes,
       CASE WHEN i.event_id IS NOT NULL OR t.src_event_id IS NOT NULL
            THEN coalesce(i.compute_spec, t.compute_spec, '') END AS compute_spec
FROM rows_ r
JOIN ev e ON e.trace_id = r.src_trace_id AND e.event_id = r.src_event_id
JOIN busy b ON b.trace_id = r.trace_id AND b.uid = r.uid
LEFT JOIN _tl_op_name_categories nc ON nc.name = r.name
LEFT JOIN _first_kernel_rule_categories fk
       ON fk.ruleset = 'tracelens' AND fk.name_key = replace(b.first_kernel, chr(10), ' ')
LEFT JOIN inst i ON i.trace_id = r.trace_id AND i.event_id = r.uid AND r.gpu_only IS NULL AND r.model
LEFT JOIN tri t ON t.src_trace_id = r.src_trace_id AND t.src_event_id = r.src_event_id AND r.gpu_only IS NULL
                AND r.model AND r.pseudo_parent_uid IS NULL
WHERE NOT (r.gpu_only IS NULL AND r.model
           AND EXISTS (SELECT 1 FROM _tl_perf_infer_unimplemented u WHERE u.trace_id = r.trace_id AND u.event_id = r.uid));

-- _tl_infer_call_stack(stacks, name): TraceLens's call_stack_full and entry_point of a group (see the top of
-- this file) from its kernels' call stacks in kernel_details_summary's order: a struct (call_stack_full TEXT,
-- entry_point TEXT).
CREATE OR REPLACE MACRO _tl_infer_call_stack(stacks, name) AS (
    WITH c AS (
        SELECT stacks AS ch, list_min(list_transform(stacks, lambda x: len(x))) AS ml
    ), p AS (
        SELECT ch, coalesce(list_filter(range(1, ml + 1),
                                        lambda i: len(list_distinct(list_transform(ch, lambda x: x[i]))) > 1)[1] - 1,
                            ml) AS pl
        FROM c
    ), t AS (
        SELECT ch[1][1:pl] AS common, list_transform(ch, lambda x: x[pl + 1:]) AS tails FROM p
    ), u AS (
        SELECT common, list_transform(list_filter(range(1, len(tails) + 1),
                                                  lambda i: NOT list_contains(tails[1:i - 1], tails[i])),
                                      lambda i: tails[i]) AS ut
        FROM t
    ), f AS (
        SELECT CASE WHEN stacks IS NULL OR len(stacks) = 0 THEN 'Not found'
                    WHEN len(stacks) = 1 THEN '[' || array_to_string(list_transform(stacks[1], lambda x: _py_str(x)), ', ') || ']'
                    ELSE '[' || array_to_string(list_concat(
                             list_transform(common, lambda x: _py_str(x)),
                             list_transform(ut, lambda l: '[' || array_to_string(list_transform(l, lambda x: _py_str(x)), ', ')
                                                          || ']')), ', ') || ']' END AS txt,
               CASE WHEN stacks IS NULL OR len(stacks) = 0 THEN NULL WHEN len(stacks) = 1 THEN stacks[1]
                    ELSE list_concat(common, flatten(ut)) END AS flat
        FROM u
    ), o AS (
        SELECT txt, flat,
               CASE WHEN list_position(list_reverse(flat), name) IS NOT NULL
                    THEN len(flat) + 1 - list_position(list_reverse(flat), name)
                    WHEN regexp_replace(name, '_\d+$', '') <> name
                         AND list_position(list_reverse(flat), regexp_replace(name, '_\d+$', '')) IS NOT NULL
                    THEN len(flat) + 1 - list_position(list_reverse(flat), regexp_replace(name, '_\d+$', '')) END AS idx,
               lower(CASE WHEN contains(name, '::') THEN string_split(name, '::')[-1] ELSE name END) AS loc
        FROM f
    )
    SELECT {'call_stack_full': txt,
            'entry_point': CASE WHEN idx IS NULL THEN 'Not found'
                ELSE coalesce(
                    list_filter(flat[idx + 1:], lambda x: contains(x, '.py') AND contains(
                        lower(CASE WHEN contains(x, '): ') THEN string_split(x, '): ')[-1] ELSE x END), loc))[1],
                    list_filter(list_reverse(flat[1:idx - 1]), lambda x: contains(x, '.py') AND NOT (
                        starts_with(x, '<built-in') OR starts_with(x, 'pybind11_builtins') OR starts_with(x, 'nn.Module:')
                        OR len(list_filter(['torch/_ops.py', 'torch/nn/modules/module.py', 'torch/utils/_contextlib.py',
                                            'torch/utils/_device.py', 'torch/_tensor.py', 'torch/functional.py',
                                            'torch/overrides.py', 'torch/_inductor/', 'torch/_functorch/',
                                            'torch/distributed/c10d_logger.py', 'triton/backends/'],
                                           lambda pat: contains(x, pat))) > 0
                        OR (contains(x, '): ') AND string_split(x, '): ')[-1] IN (
                            '__torch_function__', '_call_impl', '_wrapped_call_impl', 'decorate_context',
                            'dispatch_wrapper', 'handle_torch_function', 'wrapper', 'custom_wrapper', 'wrapper_custom',
                            'outer_wrapper'))))[1],
                    'Not found') END}
    FROM o
);

-- tl_perf_infer_unified_perf_summary: TraceLens's unified_perf_summary.csv of its inference report run with
-- --group_by_parent_module: the columns of tl_unified_perf_summary over _tl_infer_unified_rows, with
-- entry_point and call_stack_full (see the top of this file) after has_perf_model.
--   trace_id ... Cumulative Percentage (%)   as tl_unified_perf_summary
--   entry_point          the frame that called the op (TraceLens's _find_entry_point)
--   call_stack_full      the call stacks of the group's kernels, as a Python list text
--   rank                 row order in TraceLens's file
--   sheet_columns        the columns TraceLens writes for this trace, in its order
-- @materialize report-tracelens-inference
-- @output report-tracelens-module 6 unified_perf_summary EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_unified_perf_summary AS
WITH s AS MATERIALIZED (
    SELECT * FROM _tl_unified_summary_of('_tl_infer_unified_rows')
), st AS (
    SELECT s.trace_id, s.rank,
           _tl_infer_call_stack(list_transform(s.kernel_order, lambda p: r.kernels[p].stack), s.name) AS cs
    FROM s JOIN _tl_infer_unified_rows r ON r.trace_id = s.trace_id AND r.uid = s.tmpl_uid
)
SELECT s.* EXCLUDE (tmpl_uid, kernel_order, sheet_columns, rank),
       coalesce(st.cs.entry_point, 'Not found') AS entry_point,
       coalesce(st.cs.call_stack_full, 'Not found') AS call_stack_full, s.rank,
       list_concat(s.sheet_columns[1:list_position(s.sheet_columns, 'has_perf_model')], ['entry_point', 'call_stack_full'],
                   s.sheet_columns[list_position(s.sheet_columns, 'has_perf_model') + 1:]) AS sheet_columns
FROM s LEFT JOIN st ON st.trace_id = s.trace_id AND st.rank = s.rank
ORDER BY s.trace_id, s.rank;
