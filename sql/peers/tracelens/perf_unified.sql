-- peers/tracelens/perf_unified — TraceLens (0.1.0) unified_perf_summary.csv: every op that TraceLens's unified
-- perf table collects (a modelled op, else the op that launches the kernels), grouped by name, category,
-- process and arguments, with CPU duration, kernel time and — for modelled ops — the perf-model metrics.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/TreePerf/tree_perf.py (collect_unified_perf_events, build_df_unified_perf_table,
-- summarize_df_unified_perf_table) and TraceLens/Trace2Tree/trace_to_tree.py (cpu_root_nodes, gpu_events);
-- the code is ours.
--   collection  from each outermost cpu_op, depth first in start order: an op without GPU work below it is
--               skipped; an op with a perf model (a registered name: tl_perf_model_ops or the inference extension's
--               tl_perf_infer_model_ops, which TraceLens's class map always holds; or a torch.compile Triton op whose args
--               its model reads: peers/tracelens/perf_triton) is collected (its subtree is not visited); an op
--               with a modelled cpu_op below it (that has GPU work) is looked through; an op that launches kernels
--               itself is collected, unless one of its GPU events is a collective (name contains nccl,
--               rccl or cross_device_reduce); any other op is looked through.
--   synthetic   every non-collective linked GPU event left out of the collected ops' GPU events becomes an op
--               of its own, '<parent>-><kernel> (Synthetic Op)', copying its parent: the innermost cpu_op
--               above it, or the runtime call that launched it when there is none. Their ids continue
--               TraceLens's event ids (the number of events in the file, + 1, + 2, ...: the runtime-parent
--               ones first, then the others, each in start order).
--   row         name; op category (the registry category of the name, else TraceLens's first-kernel fallback:
--               tl_op_category of the launcher; for synthetic ops the registry category of the synthetic name
--               (its category-only entries), else the fallback on the parent's first kernel);
--               duration_us = the op's CPU duration; Kernel Time = busy time of its GPU events (float µs);
--               has_perf_model; for modelled ops the metrics and params of its family (peers/tracelens/perf_*;
--               inference attention with the perf report's annotations, perf_infer's _tl_perf_attention); an
--               op whose model raises NotImplementedError has no row (instance norm backward, and the inference
--               attention instances of _tl_attention_unimplemented_of);
--               kernel_details = its GPU events in the order the tree lists them (by launch call, then start).
--   summary     groups by the str() of name, op category, process/thread names and the four args (tuple
--               text), in collection order; ex_UID and the `first` columns from the group's first row;
--               operation_count; duration_us sum (total_duration_us), mean, std, median, min, max; GFLOPS,
--               Data Moved (MB), FLOPS/Byte, Compute Spec, perf_params, has_perf_model first non-empty; TB/s,
--               TFLOPS/s: mean, std, median, min, max; Kernel Time: mean, std, sum, median, min, max;
--               kernel_details_summary (_tl_kernel_stats); rows by Kernel Time sum descending, then ex_UID;
--               Percentage (%) of the Kernel Time sums' numpy total, Cumulative Percentage (%) running.
-- Not reproduced: backward ops collected through their forward op's model (training traces), the perf
-- models this library has no family for (they are collected as modelled ops, without metrics), call stacks.
--
-- @requires lib/pytext peers/float_us peers/tracelens/op_categories peers/tracelens/ops_unique_args
-- @requires peers/tracelens/perf_ops peers/tracelens/perf_gemm peers/tracelens/perf_sdpa
-- @requires peers/tracelens/perf_elementwise peers/tracelens/perf_reduce peers/tracelens/perf_norm
-- @requires peers/tracelens/perf_conv peers/tracelens/perf_triton peers/tracelens/arch tree/rollups
-- @requires peers/tracelens/perf_rmsnorm peers/tracelens/perf_rope peers/tracelens/perf_group_quant
-- @requires peers/tracelens/perf_grouped_gemm peers/tracelens/perf_misc peers/tracelens/perf_custom_collective
-- @requires peers/tracelens/perf_moe
-- @requires peers/tracelens/perf_ssm peers/tracelens/perf_fused_rope_mhc peers/tracelens/perf_infer

-- _tl_perf_instances_cpu_families: the modelled instances of the families whose ops the inference report reads
-- as the perf report does (SDPA, binary elementwise, reductions, normalization, convolution, RoPE, group quant,
-- grouped GEMM, MoE dispatch/combine, cross entropy, ATOM's sampler, custom collectives).
CREATE OR REPLACE VIEW _tl_perf_instances_cpu_families AS
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_sdpa
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_binary
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_reduce
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_norm
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_conv_unified
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_rope
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_group_quant_fwd
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_grouped_gemm
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_moe_comm
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_cross_entropy
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_mixed_sample
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_custom_collective;

-- _tl_perf_instances: every modelled instance of every family (the union of the families' instance views).
CREATE OR REPLACE VIEW _tl_perf_instances AS
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_gemm
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_unary
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_triton
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_rmsnorm
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_moe
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_ssm
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_fused_rope
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_mhc
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_attention
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_moe_fused
UNION ALL SELECT * FROM _tl_perf_instances_cpu_families;

-- _tl_unified_collect(g, ops): the ops TraceLens's unified perf table collects (the collection rule at the top
-- of this file), over any tree of ops:
--   g     a relation of (trace_id, op_event_id, gpu_event_id, is_direct, is_nccl): the linked GPU events under
--         each op (any depth), is_direct when the op is the innermost op around the launch
--   ops   a relation of (trace_id, event_id, parent_id, model): the ops of g, each with the op around it
--         (NULL at the top) and whether it has a perf model
-- One row per collected op: trace_id, event_id.
CREATE OR REPLACE MACRO _tl_unified_collect(g, ops) AS TABLE
WITH RECURSIVE o AS MATERIALIZED (
    SELECT x.trace_id, x.event_id, x.parent_id, x.model, y.leaf, y.nccl
    FROM query_table(ops) x
    JOIN (SELECT trace_id, op_event_id, bool_or(is_direct) AS leaf, bool_or(is_nccl) AS nccl
          FROM query_table(g) GROUP BY trace_id, op_event_id) y
      ON y.trace_id = x.trace_id AND y.op_event_id = x.event_id
), anc(trace_id, event_id, anc_id) AS MATERIALIZED (   -- (op, strict ancestor op) pairs
    SELECT trace_id, event_id, parent_id FROM o WHERE parent_id IS NOT NULL
    UNION ALL
    SELECT a.trace_id, a.event_id, p.parent_id FROM anc a JOIN o p ON p.trace_id = a.trace_id AND p.event_id = a.anc_id
    WHERE p.parent_id IS NOT NULL
), flags AS MATERIALIZED (
    SELECT o.*, coalesce(d.desc_model, false) AS desc_model
    FROM o
    LEFT JOIN (SELECT a.trace_id, a.anc_id AS event_id, true AS desc_model
               FROM anc a JOIN o m ON m.trace_id = a.trace_id AND m.event_id = a.event_id AND m.model
               GROUP BY ALL) d ON d.trace_id = o.trace_id AND d.event_id = o.event_id
), below_blocked AS MATERIALIZED (   -- ops under an op that is collected or collects its kernels itself
    SELECT DISTINCT a.trace_id, a.event_id
    FROM anc a JOIN flags b ON b.trace_id = a.trace_id AND b.event_id = a.anc_id
    WHERE b.model OR (b.leaf AND NOT b.desc_model)
)
SELECT f.trace_id, f.event_id FROM flags f
WHERE (f.model OR (f.leaf AND NOT f.desc_model AND NOT f.nccl))
  AND NOT EXISTS (SELECT 1 FROM below_blocked x WHERE x.trace_id = f.trace_id AND x.event_id = f.event_id);

-- _tl_unified_rows: one row per op of TraceLens's unified perf table (before grouping), see the top of this
-- file: trace_id, uid, ord (row order), name, op_category, pid, tid, the four args (JSON), duration_us,
-- has_perf_model, kernel_time_us, kernels, params, flops, bytes, compute_spec (NULL for ops without metrics).
-- @materialize report-tracelens
CREATE OR REPLACE VIEW _tl_unified_rows AS
WITH g AS MATERIALIZED (   -- linked GPU events under each cpu_op (all depths)
    SELECT p.trace_id, p.op_event_id, p.gpu_event_id, p.is_direct, o.is_nccl
    FROM _tree_op_gpu_pairs p
    JOIN tl_gpu_event_ops o ON o.trace_id = p.trace_id AND o.event_id = p.gpu_event_id
    WHERE o.tl_linked
), ops AS MATERIALIZED (   -- cpu_ops with GPU work below them
    SELECT g.trace_id, g.op_event_id AS event_id, c.op_event_id AS parent_id, c.top_op_event_id AS root_id,
           e.name, e.ts_ns,
           e.name IN (SELECT name FROM tl_perf_model_ops UNION ALL SELECT name FROM tl_perf_infer_model_ops)
           OR EXISTS (SELECT 1 FROM _tl_perf_triton t WHERE t.trace_id = g.trace_id AND t.event_id = g.op_event_id)
               AS model
    FROM g
    JOIN cpu_event_context c ON c.trace_id = g.trace_id AND c.event_id = g.op_event_id AND c.anchor_kind = 'op'
    JOIN events e ON e.trace_id = g.trace_id AND e.event_id = g.op_event_id
    GROUP BY g.trace_id, g.op_event_id, c.op_event_id, c.top_op_event_id, e.name, e.ts_ns
), collected AS MATERIALIZED (
    SELECT o.* FROM ops o SEMI JOIN _tl_unified_collect('g', 'ops') c ON c.trace_id = o.trace_id AND c.event_id = o.event_id
), covered AS (
    SELECT DISTINCT g.trace_id, g.gpu_event_id FROM g SEMI JOIN collected c
        ON c.trace_id = g.trace_id AND c.event_id = g.op_event_id
), left_out AS MATERIALIZED (   -- GPU events of no collected op: each a synthetic op under its parent
    SELECT o.trace_id, o.event_id AS gpu_event_id, o.ts_ns, o.name AS kernel,
           d.op_event_id AS parent_op, o.launch_event_id
    FROM tl_gpu_event_ops o
    LEFT JOIN g d ON d.trace_id = o.trace_id AND d.gpu_event_id = o.event_id AND d.is_direct
    ANTI JOIN covered c ON c.trace_id = o.trace_id AND c.gpu_event_id = o.event_id
    WHERE o.tl_linked AND NOT o.is_nccl
), synth AS (
    SELECT l.*, coalesce(l.parent_op, l.launch_event_id) AS parent_id,
           t.events_read - 1
           + row_number() OVER (PARTITION BY l.trace_id ORDER BY l.parent_op IS NOT NULL,
                                CASE WHEN l.parent_op IS NULL THEN l.launch_event_id END, l.ts_ns, l.gpu_event_id) AS uid
    FROM left_out l JOIN traces t ON t.trace_id = l.trace_id
), real_rows AS (
    SELECT c.trace_id, c.event_id AS uid, c.name, c.model,
           row_number() OVER (PARTITION BY c.trace_id ORDER BY r.ts_ns, c.root_id, c.ts_ns, c.event_id) AS ord,
           coalesce(nc.op_category, lc.op_category, 'other') AS op_category, c.event_id AS src_id, NULL::BIGINT AS gpu_only
    FROM collected c
    JOIN events r ON r.trace_id = c.trace_id AND r.event_id = c.root_id
    LEFT JOIN _tl_op_name_categories nc ON nc.name = c.name AND nc.matched
    LEFT JOIN tl_op_category lc ON lc.trace_id = c.trace_id AND lc.tl_launcher_event_id = c.event_id
), synth_rows AS (
    SELECT s.trace_id, s.uid, p.name || '->' || s.kernel || ' (Synthetic Op)' AS name, false AS model,
           1000000000000 + row_number() OVER (PARTITION BY s.trace_id ORDER BY s.uid) AS ord,
           CASE WHEN _tl_op_rule_category(p.name || '->' || s.kernel || ' (Synthetic Op)') IS NOT NULL   -- the
                THEN _tl_op_rule_category(p.name || '->' || s.kernel || ' (Synthetic Op)')     -- registry's name
                WHEN regexp_matches(p.name, '^triton') THEN 'triton'
                WHEN regexp_matches(p.name, '^record_param_comms') THEN 'record_param_comms'
                ELSE coalesce(fk.category, 'other') END AS op_category,
           s.parent_id AS src_id, s.gpu_event_id AS gpu_only
    FROM synth s
    JOIN events p ON p.trace_id = s.trace_id AND p.event_id = s.parent_id
    LEFT JOIN tl_op_category lc ON lc.trace_id = s.trace_id AND lc.tl_launcher_event_id = s.parent_id
    LEFT JOIN _first_kernel_rule_categories fk
           ON fk.ruleset = 'tracelens' AND fk.name_key = replace(lc.first_kernel_name, chr(10), ' ')
), rows_ AS MATERIALIZED (
    SELECT * FROM real_rows UNION ALL SELECT * FROM synth_rows
), kern AS (   -- each row's GPU events, in the order the tree lists them
    SELECT r.trace_id, r.uid, r.src_id, o.name AS kernel, o.stream, _us_f64(o.ts_ns) AS s,
           _us_f64(o.ts_ns) + _us_f64(o.dur_ns) AS e, _us_f64(o.dur_ns) AS dur_us, o.event_id AS gpu_event_id,
           o.launch_ts_ns, o.launch_event_id
    FROM rows_ r
    JOIN g ON r.gpu_only IS NULL AND g.trace_id = r.trace_id AND g.op_event_id = r.src_id
    JOIN tl_gpu_event_ops o ON o.trace_id = g.trace_id AND o.event_id = g.gpu_event_id
    UNION ALL
    SELECT r.trace_id, r.uid, r.src_id, o.name, o.stream, _us_f64(o.ts_ns), _us_f64(o.ts_ns) + _us_f64(o.dur_ns),
           _us_f64(o.dur_ns), o.event_id, o.launch_ts_ns, o.launch_event_id
    FROM rows_ r JOIN tl_gpu_event_ops o ON r.gpu_only IS NOT NULL AND o.trace_id = r.trace_id AND o.event_id = r.gpu_only
), busy AS MATERIALIZED (   -- keyed by src_id too: the final join then links each two of its inputs by an
    -- event (ev to busy through src_id), and no join order pairs every ev row of a trace with every busy row
    -- (on trace_id alone, the square of the rows: gigabytes at a quarter of a million events)
    SELECT trace_id, uid, src_id, sum(_tree_busy_ns(s, e, prev_e)) AS kernel_time_us,
           list({'name': kernel, 'stream': stream, 'dur_us': dur_us}
                ORDER BY launch_ts_ns, launch_event_id, s, gpu_event_id) AS kernels
    FROM (SELECT *, max(e) OVER (PARTITION BY trace_id, uid ORDER BY s, e
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e FROM kern)
    GROUP BY trace_id, uid, src_id
), ev AS MATERIALIZED (   -- the events the rows copy (their args read once, for these events only)
    SELECT e.trace_id, e.event_id, e.pid, e.tid, e.dur_ns, e.input_dims::VARCHAR AS input_dims,
           e.input_types::VARCHAR AS input_types, e.input_strides::VARCHAR AS input_strides,
           e.concrete_inputs::VARCHAR AS concrete_inputs
    FROM events e SEMI JOIN rows_ r ON r.trace_id = e.trace_id AND r.src_id = e.event_id
), inst AS MATERIALIZED (   -- the modelled instances with their kernel time
    SELECT i.*, pe.kernel_time_us FROM _tl_perf_instances i
    LEFT JOIN _tl_perf_events pe ON pe.trace_id = i.trace_id AND pe.event_id = i.event_id
)
SELECT r.trace_id, r.uid, r.ord, r.name, r.op_category, e.pid, e.tid, e.input_dims::JSON AS input_dims,
       e.input_types::JSON AS input_types, e.input_strides::JSON AS input_strides,
       e.concrete_inputs::JSON AS concrete_inputs, _us_f64(e.dur_ns) AS duration_us, r.model AS has_perf_model,
       coalesce(i.kernel_time_us, b.kernel_time_us) AS kernel_time_us,
       b.kernels, i.params, i.flops, i.bytes,
       CASE WHEN i.event_id IS NOT NULL THEN coalesce(i.compute_spec, '') END AS compute_spec
FROM rows_ r
JOIN ev e ON e.trace_id = r.trace_id AND e.event_id = r.src_id
JOIN busy b ON b.trace_id = r.trace_id AND b.uid = r.uid AND b.src_id = r.src_id
LEFT JOIN inst i ON i.trace_id = r.trace_id AND i.event_id = r.uid AND r.gpu_only IS NULL
WHERE NOT (r.model AND r.name IN (SELECT name FROM tl_perf_model_ops WHERE model = 'instance_norm_bwd'))
  AND NOT (r.model AND r.gpu_only IS NULL
           AND EXISTS (SELECT 1 FROM _tl_attention_unimplemented_of('_tl_perf_attention_events') u
                       WHERE u.trace_id = r.trace_id AND u.event_id = r.uid));

-- _tl_unified_summary_of(rows): tl_unified_perf_summary over a relation with the columns of _tl_unified_rows
-- (ops without a CPU duration, duration_us NULL, count 0.0 in total_duration_us and leave its statistics
-- empty, as pandas skips them), plus tmpl_uid (the uid of the group's first op with kernels, whose kernels
-- kernel_details_summary lists) and kernel_order (their positions in that list's order).
CREATE OR REPLACE MACRO _tl_unified_summary_of(rows) AS TABLE
WITH r AS MATERIALIZED (
    SELECT u.*, coalesce(pn.v, 'Unknown') AS process_name, coalesce(pl.v, 'Unknown') AS process_label,
           coalesce(tn.v, 'Unknown') AS thread_name,
           _py_tuple3(u.input_dims) AS dims, _py_tuple3(u.input_types) AS types,
           _py_tuple3(u.input_strides) AS strides, _py_tuple3(u.concrete_inputs) AS conc,
           _tl_perf_metrics(u.flops, u.bytes, u.kernel_time_us) AS m,
           _tl_roofline(u.flops::DOUBLE / 1e9, u.bytes, u.kernel_time_us, a.max_tflops, a.mem_bw_gbps) AS rf,
           CASE WHEN u.params IS NOT NULL
                THEN '{' || array_to_string(list_transform(u.params, lambda p: '''' || p.k || ''': '
                         || CASE WHEN p.v IS NULL THEN 'None' WHEN p.t = 's' THEN _py_str(p.v) ELSE p.v END), ', ')
                     || '}' END AS perf_params
    FROM query_table(rows) u
    LEFT JOIN _tl_arch a ON a.compute_spec = u.compute_spec
    LEFT JOIN _tl_process_meta pn ON pn.trace_id = u.trace_id AND pn.kind = 'process_name' AND pn.pid = u.pid
    LEFT JOIN _tl_process_meta pl ON pl.trace_id = u.trace_id AND pl.kind = 'process_labels' AND pl.pid = u.pid
    LEFT JOIN _tl_process_meta tn ON tn.trace_id = u.trace_id AND tn.kind = 'thread_name' AND tn.pid = u.pid
                                  AND tn.tid = u.tid
), grp AS MATERIALIZED (
    SELECT *, dense_rank() OVER (PARTITION BY trace_id ORDER BY name, op_category, process_name, process_label,
                                 thread_name, dims, types, strides, conc) AS gid
    FROM r
), kin AS (
    SELECT {'t': trace_id, 'g': gid} AS gk, ord, kernels FROM grp
), kd AS (
    SELECT gk.t AS trace_id, gk.g AS gid, kernel_details, trunc_kernel_details, kernel_order FROM _tl_kernel_stats('kin')
), s AS MATERIALIZED (
    SELECT trace_id, gid, any_value(name) AS name, any_value(op_category) AS op_category,
           any_value(process_name) AS process_name, any_value(process_label) AS process_label,
           any_value(thread_name) AS thread_name, any_value(dims) AS dims, any_value(types) AS types,
           any_value(strides) AS strides, any_value(conc) AS conc,
           arg_min(uid, ord) AS ex_uid, count(*) AS n,
           coalesce(list(duration_us ORDER BY ord) FILTER (WHERE duration_us IS NOT NULL), []) AS dur,
           arg_min(m.gflops, ord) FILTER (WHERE m.gflops IS NOT NULL) AS gflops,
           arg_min(m.data_moved_mb, ord) FILTER (WHERE m.data_moved_mb IS NOT NULL) AS data_moved_mb,
           arg_min(m.flops_per_byte, ord) FILTER (WHERE m.flops_per_byte IS NOT NULL) AS flops_per_byte,
           arg_min(compute_spec, ord) FILTER (WHERE compute_spec IS NOT NULL) AS compute_spec,
           arg_min(rf.rt, ord) FILTER (WHERE rf.rt IS NOT NULL) AS rt,
           arg_min(rf.bound, ord) FILTER (WHERE rf.bound IS NOT NULL) AS bound,
           list(rf.pct ORDER BY ord) FILTER (WHERE rf.pct IS NOT NULL) AS pct,
           list(m.tbs ORDER BY ord) FILTER (WHERE m.tbs IS NOT NULL) AS tbs,
           list(m.tflops ORDER BY ord) FILTER (WHERE m.tflops IS NOT NULL) AS tflops,
           list(kernel_time_us ORDER BY ord) FILTER (WHERE kernel_time_us IS NOT NULL) AS kt,
           arg_min(perf_params, ord) FILTER (WHERE perf_params IS NOT NULL) AS perf_params,
           arg_min(has_perf_model, ord) AS has_perf_model,
           arg_min(uid, ord) FILTER (WHERE len(kernels) > 0) AS tmpl_uid
    FROM grp GROUP BY trace_id, gid
), ranked AS MATERIALIZED (
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY kt_sum DESC, ex_uid) AS rank
    FROM (SELECT *, _pd_sum(kt) AS kt_sum FROM s)
), rx AS (
    SELECT trace_id AS id, rank AS i, kt_sum AS x FROM ranked
), pct AS (
    SELECT r.trace_id, r.rank, r.kt_sum / t.s * 100 AS pct FROM ranked r JOIN _np_sums('rx') t ON t.id = r.trace_id
), cum AS (   -- running sum of the percentages, left to right
    SELECT * FROM _np_cumsum_pct('pct')
)
SELECT x.trace_id, x.name, x.op_category AS "op category", x.process_name, x.process_label, x.thread_name,
       x.dims AS "Input Dims", x.types AS "Input type", x.strides AS "Input Strides", x.conc AS "Concrete Inputs",
       x.ex_uid AS "ex_UID", x.n AS operation_count, coalesce(_pd_sum(x.dur), 0.0) AS total_duration_us,
       CASE WHEN len(x.dur) > 0 THEN _pd_sum(x.dur) / len(x.dur) END AS mean_duration_us, _pd_std(x.dur) AS std_duration_us,
       x.gflops AS "GFLOPS", x.data_moved_mb AS "Data Moved (MB)", x.flops_per_byte AS "FLOPS/Byte",
       x.compute_spec AS "Compute Spec", x.bound AS "Roofline Bound",
       _pd_sum(x.tbs) / len(x.tbs) AS "TB/s_mean", _pd_std(x.tbs) AS "TB/s_std",
       _pd_sum(x.tflops) / len(x.tflops) AS "TFLOPS/s_mean", _pd_std(x.tflops) AS "TFLOPS/s_std",
       x.kt_sum / len(x.kt) AS "Kernel Time (µs)_mean", _pd_std(x.kt) AS "Kernel Time (µs)_std",
       x.kt_sum AS "Kernel Time (µs)_sum",
       _py_median(x.dur) AS duration_us_median, list_min(x.dur) AS duration_us_min, list_max(x.dur) AS duration_us_max,
       _py_median(x.tbs) AS "TB/s_median", list_min(x.tbs) AS "TB/s_min", list_max(x.tbs) AS "TB/s_max",
       _py_median(x.tflops) AS "TFLOPS/s_median", list_min(x.tflops) AS "TFLOPS/s_min",
       list_max(x.tflops) AS "TFLOPS/s_max",
       x.rt AS "Roofline Time (µs)_first", _pd_sum(x.pct) / len(x.pct) AS "Pct Roofline_mean",
       _py_median(x.pct) AS "Pct Roofline_median", _pd_std(x.pct) AS "Pct Roofline_std",
       list_min(x.pct) AS "Pct Roofline_min", list_max(x.pct) AS "Pct Roofline_max",
       _py_median(x.kt) AS "Kernel Time (µs)_median", list_min(x.kt) AS "Kernel Time (µs)_min",
       list_max(x.kt) AS "Kernel Time (µs)_max",
       coalesce(k.kernel_details, '[]') AS kernel_details_summary, k.trunc_kernel_details,
       x.perf_params, _tl_py_bool(x.has_perf_model) AS has_perf_model,
       p.pct AS "Percentage (%)", c.cum_pct AS "Cumulative Percentage (%)", x.rank, x.tmpl_uid, k.kernel_order,
       list_filter(['name', 'op category', 'process_name', 'process_label', 'thread_name', 'Input Dims', 'Input type',
                    'Input Strides', 'Concrete Inputs', 'ex_UID', 'operation_count', 'total_duration_us',
                    'mean_duration_us', 'std_duration_us', 'GFLOPS', 'Data Moved (MB)', 'FLOPS/Byte', 'Compute Spec',
                    'Roofline Bound', 'TB/s_mean', 'TB/s_std', 'TFLOPS/s_mean', 'TFLOPS/s_std', 'Kernel Time (µs)_mean',
                    'Kernel Time (µs)_std', 'Kernel Time (µs)_sum', 'duration_us_median', 'duration_us_min',
                    'duration_us_max', 'TB/s_median', 'TB/s_min', 'TB/s_max', 'TFLOPS/s_median', 'TFLOPS/s_min',
                    'TFLOPS/s_max', 'Roofline Time (µs)_first', 'Pct Roofline_mean', 'Pct Roofline_median',
                    'Pct Roofline_std', 'Pct Roofline_min', 'Pct Roofline_max', 'Kernel Time (µs)_median', 'Kernel Time (µs)_min', 'Kernel Time (µs)_max',
                    'kernel_details_summary', 'trunc_kernel_details', 'perf_params', 'has_perf_model',
                    'Percentage (%)', 'Cumulative Percentage (%)'],
                   lambda col: (m.roofline OR NOT (col = 'Roofline Bound' OR starts_with(col, 'Roofline Time')
                                                    OR starts_with(col, 'Pct Roofline')))
                               AND (m.any_metrics OR NOT (col IN ('GFLOPS', 'Data Moved (MB)', 'FLOPS/Byte', 'Compute Spec')
                                                     OR starts_with(col, 'TB/s') OR starts_with(col, 'TFLOPS/s'))))
           AS sheet_columns
FROM ranked x
JOIN (SELECT trace_id, bool_or(gflops IS NOT NULL) AS any_metrics, bool_or(rt IS NOT NULL) AS roofline FROM s
      GROUP BY trace_id) m ON m.trace_id = x.trace_id
JOIN pct p ON p.trace_id = x.trace_id AND p.rank = x.rank
JOIN cum c ON c.trace_id = x.trace_id AND c.rank = x.rank
LEFT JOIN kd k ON k.trace_id = x.trace_id AND k.gid = x.gid
ORDER BY x.trace_id, x.rank;

-- tl_unified_perf_summary: TraceLens's unified_perf_summary.csv, one row per trace and group of collected ops
-- with the same name, op category, process, thread and arguments (see the top of this file); TraceLens's
-- column names, rows in its order (rank).
--   trace_id                              the trace
--   name, op category                     the op and its TraceLens op category
--   process_name, process_label, thread_name   its CPU process and thread ('Unknown' if unnamed)
--   Input Dims, Input type, Input Strides, Concrete Inputs   its args as Python tuple text
--   ex_UID                                id of the group's first op (event_id; synthetic ops: see the top)
--   operation_count                       ops in the group
--   total_duration_us, mean_duration_us, std_duration_us, duration_us_median/_min/_max   CPU duration (µs)
--   GFLOPS, Data Moved (MB), FLOPS/Byte, Compute Spec   the perf model's values (modelled ops)
--   Roofline Bound, Roofline Time (µs)_first, Pct Roofline_*   with a GPU (peers/tracelens/arch): the first
--                                         non-empty bound and roofline time, and mean, median, std, min, max of
--                                         Pct Roofline (only when some op of the trace has a roofline)
--   TB/s_*, TFLOPS/s_*                    achieved bandwidth and throughput per op: mean, std, median, min, max
--   Kernel Time (µs)_*                    busy GPU time per op: mean, std, sum, median, min, max
--   kernel_details_summary, trunc_kernel_details   the group's kernels (_tl_kernel_stats)
--   perf_params                           the perf model's parameters as a Python dict text
--   has_perf_model                        'True' when the op has a perf model
--   Percentage (%), Cumulative Percentage (%)   share of the Kernel Time sums, and its running total
--   rank                                  row order in TraceLens's file
--   sheet_columns                         the columns TraceLens writes for this trace, in its order (without
--                                         the perf-model columns when no op of the trace has metrics)
-- @materialize report-tracelens
-- @output report-tracelens 6 unified_perf_summary EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_unified_perf_summary AS
SELECT * EXCLUDE (tmpl_uid, kernel_order) FROM _tl_unified_summary_of('_tl_unified_rows');
