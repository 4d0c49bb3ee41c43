-- peers/tracelens/perf_infer — TraceLens (0.1.0) inference report's perf-model sheets: GEMM.csv,
-- UnaryElementwise.csv, RMSNorm_fwd.csv, InferenceAttention_fwd.csv and MoE_unfused_fwd.csv as its inference
-- report writes them
-- (TraceLens/Reporting/generate_perf_report_pytorch_inference.py, run with group_by_num_kernels and, for a
-- CUDA/HIP graph replay, its capture trace merged in).
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from its source; the
-- code is ours:
--   registry   the inference extension's op mappings (TraceLens/PerfModel/extensions/pseudo_ops_perf_utils.py,
--              get_pseudo_op_mappings, merged into op_to_perf_model_class_map by torch_op_mapping.py), as far as
--              reproduced here (the GEMM, elementwise and MoE extension ops are in peers/tracelens/perf_ops's
--              registry): the vLLM/aiter inference attention ops (InferenceAttention_fwd) and
--              the unfused Triton MoE pseudo ops (MoE_unfused_fwd, beside the MoE ops of peers/tracelens/perf_moe).
--   instances  every event of the (merged) tree whose name is registered, in the tree's order: the trace's own
--              ops (TraceLens's id = index in traceEvents = event_id), then for a graph replay paired with a
--              capture trace (tree/graph_capture) the cpu_ops of the capture window
--              (TraceLens/Trace2Tree/trace_capture_merge_experimental.py, merge_capture_trace_into_graph; a
--              window is merged once per graph launch that replays it, tree/graph_capture's pairs):
--              find_capture_roots takes the events of the window (from the end of *StreamBeginCapture to the
--              start of *StreamEndCapture) whose parent lies outside it, get_subtree_events their subtrees
--              (cpu_op, python_function and runtime calls) sorted by start, and update_subtree_uids_and_timestamps
--              numbers them from the replay trace's event count (its last id + 1; the window's root first) and
--              moves every one to the graph launch's start and duration. A capture op's GPU events are the
--              replayed events whose capture-time launch lies inside it (make_connections).
--              TraceLens's call stack differs from tree/nesting in two ways that move these ids: it holds no
--              user annotations, and it leaves out an event that ends after the innermost event open at its
--              start when they overlap by 1 µs or more (tree/nesting clips one of the two: the event, or the
--              Python frames open at a cpu_op's start); both are followed here
--              (_tl_infer_capture_events: the 125,785 events of the graphs/vllm_decode_full capture window).
--   kernels    Kernel Time (µs) = busy time of those GPU events (float µs); kernel_details by start; an
--              instance's num_kernels = their number (build_df_perf_metrics), a grouping key of every sheet
--              (summarize_df_perf_metrics with group_by_num_kernels): the column follows the param columns.
--   annotation an op's iteration annotation is the first user_annotation (by start) of the replay trace that
--              holds it: ann.ts <= ts and ts + dur < ann.ts + ann.dur, with the moved ts/dur for capture ops
--              (TraceToTree.apply_annotation); InferenceAttention reads its chunk statistics from it
--              (TraceLens/TraceUtils/annotation_utils.py, IterationAnnotation, vLLM's detailed format
--              execute_N_context_N(sqAskBsqsqCsqskD)_generation_N(sqEskFsqsqGsqskH)).
-- The models (TraceLens/PerfModel/extensions/): see the views below. The sheets: tl_perf_infer_gemm,
-- tl_perf_infer_unary_elementwise, tl_perf_infer_rmsnorm_fwd, tl_perf_infer_attention_fwd,
-- tl_perf_infer_moe_unfused_fwd, tl_perf_infer_moe_aux_fwd, tl_perf_infer_moe_fused_fwd, and the inference
-- report's versions of the perf report's other sheets (tl_perf_infer_sdpa_fwd ... tl_perf_infer_elementwise_fwd).
-- Pseudo ops: TraceLens's unfused Triton, GPTQ/AWQ and flydsl MoE ones (MoE_unfused_fwd.csv), fused aiter MoE
-- ones (MoE_fused_fwd.csv), and the MLA decode / prefill and DeepSeek-V4 sparse paged-decode ones
-- (InferenceAttention_fwd.csv), see _tl_infer_perf_events.
-- Not reproduced: frame pseudo ops inside a merged capture window, and the environment variables TL_MODEL and
-- TL_TP the V4 extension reads (taken unset: DeepSeek-V4-Flash, tensor parallelism 1).
--
-- @requires lib/pytext lib/intervals peers/float_us peers/tracelens/links peers/tracelens/ops_unique_args
-- @requires peers/tracelens/perf_ops peers/tracelens/perf_gemm peers/tracelens/perf_elementwise
-- @requires tree/rollups tree/graph_capture tree/nesting tree/context perf/paged_attention
-- @requires peers/tracelens/perf_rmsnorm peers/tracelens/perf_moe peers/tracelens/perf_ssm
-- @requires peers/tracelens/perf_fused_rope_mhc peers/tracelens/perf_sdpa peers/tracelens/perf_norm
-- @requires peers/tracelens/perf_reduce peers/tracelens/perf_conv peers/tracelens/perf_elementwise
-- @requires peers/tracelens/perf_rope peers/tracelens/perf_group_quant peers/tracelens/perf_grouped_gemm
-- @requires peers/tracelens/perf_misc peers/tracelens/perf_custom_collective

-- tl_perf_infer_model_ops: the ops TraceLens's inference extension models, as far as reproduced here; one row
-- per op name.
--   name    the op (cpu_op) name
--   model   TraceLens's perf model class (TraceLens/PerfModel/extensions/)
--   sheet   the sheet (file) its instances go to
CREATE OR REPLACE VIEW tl_perf_infer_model_ops AS
SELECT * FROM (VALUES
    ('vllm::unified_attention_with_output', 'inference_attention', 'InferenceAttention_fwd'),
    ('aiter::mha_varlen_fwd', 'inference_attention', 'InferenceAttention_fwd'),
    ('sglang_profiler::attention_paged_attention_ragged', 'aiter_paged_attention_ragged', 'InferenceAttention_fwd'),
    ('sglang::store_cache', 'sglang_store_cache', 'InferenceAttention_fwd'),
    -- aiter's varlen and paged-prefill attention, its gluon paged decode, SGLang's TileLang sparse MLA, the gated
    -- delta net (vLLM's op and aiter's, which TraceLens maps to the same model)
    ('aiter::fmha_v3_varlen_fwd', 'aiter_fmha_v3_varlen_fwd', 'InferenceAttention_fwd'),
    ('aiter::mha_batch_prefill', 'aiter_mha_batch_prefill', 'InferenceAttention_fwd'),
    ('aiter::pa_decode_gluon', 'pa_decode_gluon', 'InferenceAttention_fwd'),
    ('sglang_profiler::tilelang_kernel_tilelang_sparse_fwd', 'mla_tilelang_sparse_fwd', 'InferenceAttention_fwd'),
    ('vllm::gdn_attention_core', 'gdn_attention_core', 'InferenceAttention_fwd'),
    ('aiter::linear_attention_with_output_base', 'gdn_attention_core', 'InferenceAttention_fwd'),
    ('aiter::pa_sparse_prefill_opus_fwd', 'pa_sparse_prefill_opus_fwd', 'InferenceAttention_fwd')
) t(name, model, sheet);

-- _tl_infer_annotated_ops: the op-name prefixes whose events TraceLens's inference report gives an iteration
-- annotation (the name_filters of its apply_annotation call in generate_perf_report_pytorch_inference.py; the
-- DeepSeek-V4 and MLA pseudo ops of that list are not reproduced here).
--   prefix   an op whose name starts with it is annotated
CREATE OR REPLACE VIEW _tl_infer_annotated_ops AS
SELECT * FROM (VALUES ('vllm::unified_attention_with_output'), ('aiter::mha_varlen_fwd'), ('pseudo_mla_decode_fwd'),
                      ('pseudo_mla_prefill_fwd'), ('vllm::gdn_attention_core'),
                      ('aiter::fmha_v3_varlen_fwd'), ('sglang_profiler::tilelang_kernel_tilelang_sparse_fwd'),
                      ('sglang_profiler::attention_paged_attention_ragged'), ('aiter::mha_batch_prefill'),
                      ('aiter::pa_decode_gluon'), ('aiter::v4_attention_with_output'),
                      ('pseudo_v4_paged_decode_swa'), ('pseudo_v4_paged_decode_csa'),
                      ('pseudo_v4_paged_decode_hca')) t(prefix);

-- _tl_infer_windows: one row per graph launch of a replay trace merged with a window of its capture trace:
-- trace_id (the replay), graph_index, capture_trace_id, t0_ns/t1_ns (the capture window, capture clock),
-- launch_ts_ns/launch_dur_ns (the graph launch), uid0 (the replay trace's event count: TraceLens's id of the
-- first window's root; later windows follow the subtrees merged before them, see _tl_infer_capture_events).
CREATE OR REPLACE VIEW _tl_infer_windows AS
WITH l AS (
    SELECT DISTINCT trace_id, graph_launch_event_id, graph_index, capture_trace_id, window_index FROM graph_capture_links
), b AS (
    SELECT trace_id, ts_ns + dur_ns AS t0, row_number() OVER (PARTITION BY trace_id ORDER BY event_id) AS k
    FROM events WHERE cat = 'cuda_runtime' AND contains(name, 'StreamBeginCapture')
), e AS (
    SELECT trace_id, ts_ns AS t1, row_number() OVER (PARTITION BY trace_id ORDER BY event_id) AS k
    FROM events WHERE cat = 'cuda_runtime' AND contains(name, 'StreamEndCapture')
)
SELECT l.trace_id, l.graph_index, l.capture_trace_id, b.t0 AS t0_ns, e.t1 AS t1_ns, g.ts_ns AS launch_ts_ns,
       g.dur_ns AS launch_dur_ns, t.events_read AS uid0
FROM l JOIN b ON b.trace_id = l.capture_trace_id AND b.k = l.window_index
JOIN e ON e.trace_id = l.capture_trace_id AND e.k = l.window_index
JOIN events g ON g.trace_id = l.trace_id AND g.event_id = l.graph_launch_event_id
JOIN traces t ON t.trace_id = l.trace_id;

-- _tl_stack_nodes: one row per event of TraceLens's call stack (cpu_ops, Python frames and runtime calls, not
-- user annotations), with its parent there: the nearest enclosing event (tree/nesting) that is not a user
-- annotation, over at most three enclosing annotations.
--   trace_id, event_id, cat, name, ts_ns   as in events
--   end_ns, nest_end_ns, clipped, depth, thread_key   as in cpu_nesting
--   tree_parent_id   the parent in TraceLens's tree (NULL at the top)
CREATE OR REPLACE VIEW _tl_stack_nodes AS
WITH k AS MATERIALIZED (
    SELECT c.trace_id, c.event_id, c.parent_event_id, e.cat, e.name, e.ts_ns, c.end_ns, c.nest_end_ns, c.clipped,
           c.depth, c.thread_key
    FROM cpu_nesting c JOIN events e ON e.trace_id = c.trace_id AND e.event_id = c.event_id
)
SELECT c.trace_id, c.event_id, c.cat, c.name, c.ts_ns, c.end_ns, c.nest_end_ns, c.clipped, c.depth, c.thread_key,
       CASE WHEN p1.cat <> 'user_annotation' THEN p1.event_id WHEN p2.cat <> 'user_annotation' THEN p2.event_id
            WHEN p3.cat <> 'user_annotation' THEN p3.event_id END AS tree_parent_id
FROM k c
LEFT JOIN k p1 ON p1.trace_id = c.trace_id AND p1.event_id = c.parent_event_id
LEFT JOIN k p2 ON p2.trace_id = c.trace_id AND p2.event_id = p1.parent_event_id
LEFT JOIN k p3 ON p3.trace_id = c.trace_id AND p3.event_id = p2.parent_event_id
WHERE c.cat IN ('cpu_op', 'python_function', 'cuda_runtime', 'cuda_driver');

-- _tl_infer_capture_events: the events of each merged capture window with TraceLens's id in the merged tree
-- (cpu_ops, Python frames and runtime calls inside the window whose parent is inside it too, or cpu_ops and
-- Python frames whose parent lies outside it; by start, shallower first on equal starts, the root taking the
-- window's first id). Windows merged one after the other take ids after the previous one's.
--   trace_id, graph_index, capture_trace_id, event_id (in the capture trace), cat, name, uid
--   parent_uid   the event's parent in the merged tree: the uid of its parent in the window, else the graph
--                launch's event_id (the window's root, which holds no name a call stack shows, sits between)
-- @materialize report-tracelens-inference
CREATE OR REPLACE VIEW _tl_infer_capture_events AS
WITH RECURSIVE n AS MATERIALIZED (   -- the capture traces' call stacks
    SELECT * FROM _tl_stack_nodes WHERE trace_id IN (SELECT capture_trace_id FROM _tl_infer_windows)
), ordered AS MATERIALIZED (   -- each thread's events in TraceLens's order: by start, on equal starts file order
                                -- (tk: the thread's number, pos: the place on it)
    SELECT trace_id, thread_key, dense_rank() OVER (ORDER BY trace_id, thread_key) AS tk, event_id, ts_ns, end_ns,
           clipped, tree_parent_id,
           row_number() OVER (PARTITION BY trace_id, thread_key ORDER BY ts_ns, event_id) AS pos,
           lag(end_ns) OVER (PARTITION BY trace_id, thread_key ORDER BY ts_ns, event_id) AS prev_end_ns
    FROM n
), levels AS MATERIALIZED (   -- k = 0, 1, ... while 2^k events fit on the longest thread
    SELECT range AS k FROM range(0, 63) WHERE (1::BIGINT << range) <= (SELECT max(pos) FROM ordered)
), last_ends AS MATERIALIZED (   -- per event, the latest end among it and the 2^k - 1 events before it
                                 -- (fewer at the thread's start), element k + 1 of last_end_ns
    SELECT tk, pos, list(m ORDER BY k) AS last_end_ns FROM (
        SELECT o.tk, o.pos, l.k,
               max(o.end_ns) OVER (PARTITION BY o.tk, l.k ORDER BY o.pos
                                   ROWS BETWEEN (1::BIGINT << l.k) - 1 PRECEDING AND CURRENT ROW) AS m
        FROM ordered o CROSS JOIN levels l)
    GROUP BY ALL
), descent(tk, event_id, c_ts_ns, c_end_ns, k, below) AS (
    -- the stack top at an event's start: the last event before it in that order still open there. The event
    -- just before it when that one is (tops, below); else, from it, step back over every block of 2^k events
    -- (k from the largest down) that ended by then; an event with none open before it steps out of the thread
    -- (below < 1) and leaves the descent
    SELECT tk, event_id, ts_ns, end_ns, (SELECT max(k) FROM levels), pos - 1 FROM ordered
    WHERE NOT clipped AND prev_end_ns <= ts_ns
    UNION ALL
    SELECT d.tk, d.event_id, d.c_ts_ns, d.c_end_ns, d.k - 1,
           CASE WHEN e.last_end_ns[d.k + 1] <= d.c_ts_ns THEN d.below - (1::BIGINT << d.k) ELSE d.below END
    FROM descent d JOIN last_ends e ON e.tk = d.tk AND e.pos = d.below
    WHERE d.k >= 0
), tops AS MATERIALIZED (   -- each unclipped event (its start and end) with the place of the stack top at
                             -- its start
    SELECT tk, event_id, ts_ns AS c_ts_ns, end_ns AS c_end_ns, pos - 1 AS top_pos FROM ordered
    WHERE NOT clipped AND prev_end_ns > ts_ns
    UNION ALL
    SELECT tk, event_id, c_ts_ns, c_end_ns, below FROM descent WHERE k = -1
), dropped AS MATERIALIZED (   -- left out of TraceLens's call stack (TraceToTree.build_host_call_stack_tree):
                               -- an event that ends after the event open at its start (the one that clips it
                               -- here) when they overlap by 1 µs or more or that event is a root
    SELECT DISTINCT c.trace_id, c.event_id
    FROM n c JOIN n t ON t.trace_id = c.trace_id AND t.thread_key = c.thread_key AND t.end_ns = c.nest_end_ns
     AND t.ts_ns <= c.ts_ns AND t.event_id <> c.event_id AND NOT t.clipped
    WHERE c.clipped AND (_us_f64(t.end_ns) - _us_f64(c.ts_ns) >= 1.0 OR t.tree_parent_id IS NULL)
    UNION
    -- the same when tree/nesting clips the open events instead (Python frames open at a cpu_op's start that
    -- end inside it): TraceLens's stack top at the event's start (tops) is the innermost event open there
    -- (latest start; on equal starts the one earlier in the file), whatever it ends
    SELECT t.trace_id, p.event_id
    FROM tops p JOIN ordered t ON t.tk = p.tk AND t.pos = p.top_pos
    WHERE t.end_ns < p.c_end_ns AND (_us_f64(t.end_ns) - _us_f64(p.c_ts_ns) >= 1.0 OR t.tree_parent_id IS NULL)
), w AS (
    SELECT w.trace_id, w.graph_index, w.capture_trace_id, w.uid0, n.event_id, n.cat, n.name, n.ts_ns, n.depth,
           n.tree_parent_id
    FROM _tl_infer_windows w JOIN n ON n.trace_id = w.capture_trace_id AND n.ts_ns >= w.t0_ns AND n.end_ns <= w.t1_ns
    ANTI JOIN dropped d ON d.trace_id = n.trace_id AND d.event_id = n.event_id
), kept AS (   -- the subtrees of the window's roots: events whose parent is in the window, and cpu_ops and
               -- Python frames with a parent outside it
    SELECT c.* FROM w c
    LEFT JOIN w p ON p.trace_id = c.trace_id AND p.graph_index = c.graph_index AND p.event_id = c.tree_parent_id
    WHERE p.event_id IS NOT NULL OR (c.cat IN ('cpu_op', 'python_function') AND c.tree_parent_id IS NOT NULL)
), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id, graph_index ORDER BY ts_ns, depth, event_id) AS pos,
           count(*) OVER (PARTITION BY trace_id, graph_index) AS n
    FROM kept
), offs AS (   -- ids taken by the windows merged before: their events and their root
    SELECT trace_id, graph_index,
           coalesce(sum(n + 1) OVER (PARTITION BY trace_id ORDER BY graph_index
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM (SELECT DISTINCT trace_id, graph_index, n FROM ranked)
)
SELECT r.trace_id, r.graph_index, r.capture_trace_id, r.event_id, r.cat, r.name, r.uid0 + o.before + r.pos AS uid,
       coalesce(p.uid0 + o.before + p.pos, l.graph_launch_event_id) AS parent_uid
FROM ranked r JOIN offs o USING (trace_id, graph_index)
LEFT JOIN ranked p ON p.trace_id = r.trace_id AND p.graph_index = r.graph_index AND p.event_id = r.tree_parent_id
JOIN (SELECT DISTINCT trace_id, graph_index, graph_launch_event_id FROM graph_capture_links) l
  ON l.trace_id = r.trace_id AND l.graph_index = r.graph_index;

-- _tl_infer_op_gpu: one row per cpu_op of the (merged) tree and GPU event launched inside it (any depth): the
-- trace's own ops (tree/op_gpu's pairs) and the ops of its merged capture windows, whose GPU events are the
-- replayed events whose capture-time launch lies inside them (TraceLens's make_connections adds a replayed event
-- to the gpu_events of every ancestor of its capture launch).
--   trace_id       the trace (the graph replay for a merged capture)
--   uid            the op's id in the merged tree (event_id for the trace's own ops, _tl_infer_capture_events.uid)
--   gpu_event_id   the GPU event (of trace_id)
--   is_direct      the op is the innermost cpu_op around the (capture-time) launch
-- @materialize report-tracelens-inference
CREATE OR REPLACE VIEW _tl_infer_op_gpu AS
WITH RECURSIVE ops AS MATERIALIZED (   -- cpu_ops of the capture traces with the op around them
    SELECT trace_id, event_id, op_event_id FROM cpu_event_context
    WHERE trace_id IN (SELECT capture_trace_id FROM _tl_infer_windows)
), up(trace_id, graph_index, gpu_event_id, op_trace_id, op_event_id, direct) AS (   -- capture launch -> ops
    SELECT l.trace_id, l.graph_index, l.event_id, l.capture_trace_id, o.op_event_id, true
    FROM graph_capture_links l JOIN ops o ON o.trace_id = l.capture_trace_id AND o.event_id = l.capture_launch_event_id
    WHERE o.op_event_id IS NOT NULL
    UNION ALL
    SELECT u.trace_id, u.graph_index, u.gpu_event_id, u.op_trace_id, o.op_event_id, false
    FROM up u JOIN ops o ON o.trace_id = u.op_trace_id AND o.event_id = u.op_event_id
    WHERE o.op_event_id IS NOT NULL
)
SELECT trace_id, op_event_id AS uid, gpu_event_id, is_direct FROM _tree_op_gpu_pairs
UNION ALL
SELECT u.trace_id, c.uid, u.gpu_event_id, u.direct
FROM up u JOIN _tl_infer_capture_events c ON c.trace_id = u.trace_id AND c.graph_index = u.graph_index
 AND c.capture_trace_id = u.op_trace_id AND c.event_id = u.op_event_id;

-- _tl_infer_ops: one row per registered op instance of the (merged) tree, before TraceLens's pseudo ops: the
-- trace's own cpu_ops and the cpu_ops of its merged capture windows whose names (_tl_op_name) the registry of
-- peers/tracelens/perf_ops, tl_perf_infer_model_ops or the MoE pseudo-op extensions (model moe_forward,
-- rocm_aiter_fused_moe, outplace_fused_experts) knows.
--   trace_id, event_id     the trace and TraceLens's id of the instance (see the top of this file)
--   src_trace_id, src_event_id   the event it comes from (the capture trace's for capture ops)
--   name, model, sheet     the registered name, its model and sheet
--   pid, tid, input_dims, input_types, input_strides, concrete_inputs   of the source event
--   a_ts_ns, a_dur_ns      start and duration in the merged tree (a capture op: its graph launch's)
--   src_ts_ns, src_dur_ns  start and duration of the source event
CREATE OR REPLACE VIEW _tl_infer_ops AS
WITH reg AS (
    SELECT name, model, sheet FROM tl_perf_model_ops UNION ALL SELECT name, model, sheet FROM tl_perf_infer_model_ops
    UNION ALL SELECT 'vllm::moe_forward', 'moe_forward', NULL
    UNION ALL SELECT 'vllm::rocm_aiter_fused_moe', 'rocm_aiter_fused_moe', NULL
    UNION ALL SELECT 'vllm::outplace_fused_experts', 'outplace_fused_experts', NULL
), own AS MATERIALIZED (
    SELECT e.trace_id, e.event_id, e.event_id AS src_event_id, e.trace_id AS src_trace_id, r.name, r.model,
           r.sheet, e.pid, e.tid, e.input_dims, e.input_types, e.input_strides, e.concrete_inputs,
           e.ts_ns AS a_ts_ns, e.dur_ns AS a_dur_ns, e.ts_ns AS src_ts_ns, e.dur_ns AS src_dur_ns
    FROM events e JOIN reg r ON r.name = _tl_op_name(e.name)
    WHERE e.cat = 'cpu_op'
), cap AS MATERIALIZED (
    SELECT c.trace_id, c.uid AS event_id, c.event_id AS src_event_id, c.capture_trace_id AS src_trace_id, r.name,
           r.model, r.sheet, e.pid, e.tid, e.input_dims, e.input_types, e.input_strides, e.concrete_inputs,
           w.launch_ts_ns AS a_ts_ns, w.launch_dur_ns AS a_dur_ns, e.ts_ns AS src_ts_ns, e.dur_ns AS src_dur_ns,
           c.graph_index
    FROM _tl_infer_capture_events c JOIN reg r ON r.name = _tl_op_name(c.name)
    JOIN events e ON e.trace_id = c.capture_trace_id AND e.event_id = c.event_id
    JOIN _tl_infer_windows w ON w.trace_id = c.trace_id AND w.graph_index = c.graph_index
    WHERE c.cat = 'cpu_op'

)
SELECT * FROM own UNION ALL SELECT * EXCLUDE (graph_index) FROM cap;

-- _tl_infer_kernels_of(ops): the GPU events TraceLens links under each op instance of the table ops (trace_id,
-- event_id: ids of the merged tree, as _tl_infer_op_gpu's uid), by _tl_infer_op_gpu.
--   trace_id, event_id, gpu_event_id, kernel (name), gcat (cat), stream, s, e, dur_us (float µs)
CREATE OR REPLACE MACRO _tl_infer_kernels_of(ops) AS TABLE
SELECT p.trace_id, p.uid AS event_id, g.event_id AS gpu_event_id, g.name AS kernel, g.cat AS gcat, g.stream,
       _us_f64(g.ts_ns) AS s, _us_f64(g.ts_ns) + _us_f64(g.dur_ns) AS e, _us_f64(g.dur_ns) AS dur_us
FROM _tl_infer_op_gpu p SEMI JOIN query_table(ops) o ON o.trace_id = p.trace_id AND o.event_id = p.uid
JOIN tl_gpu_event_ops g ON g.trace_id = p.trace_id AND g.event_id = p.gpu_event_id
WHERE g.tl_linked;

-- _tl_infer_frames: one row per Python frame a frame pseudo-op extension looks for (with pseudo ops on; the
-- trace's own, not from a merged capture window; see _tl_infer_pseudo_ops).
--   trace_id, event_id, name, pid, tid, ts_ns, dur_ns, end_ns   the python_function event
--   ext          its extension: 2 flydsl MoE stage, 3 MLA decode, 4 MLA prefill, 5 DeepSeek-V4 sparse paged decode
--   name_first   the first event_id of a frame of its name
CREATE OR REPLACE VIEW _tl_infer_frames AS
SELECT trace_id, event_id, name, pid, tid, ts_ns, dur_ns, ts_ns + dur_ns AS end_ns,
       CASE WHEN ends_with(name, ': flydsl_moe_stage1') OR ends_with(name, ': flydsl_moe_stage2') THEN 2
            WHEN regexp_matches(name, 'aiter/mla.py\(\d+\): mla_decode_fwd') THEN 3
            WHEN regexp_matches(name, ':\s*mla_fp8_prefill_attn(\b|$)') THEN 4
            ELSE 5 END AS ext,
       min(event_id) OVER (PARTITION BY trace_id, name) AS name_first
FROM events
WHERE cat = 'python_function' AND _tl_pseudo_ops()
  AND (ends_with(name, ': flydsl_moe_stage1') OR ends_with(name, ': flydsl_moe_stage2')
       OR regexp_matches(name, 'aiter/mla.py\(\d+\): mla_decode_fwd')
       OR regexp_matches(name, ':\s*mla_fp8_prefill_attn(\b|$)')
       OR regexp_matches(name, 'paged_decode\.py\(\d+\):\s*sparse_attn_v4_paged_decode\b'));

-- _tl_infer_frame_gpu: one row per frame of _tl_infer_frames and GPU event TraceLens links under it (launched
-- inside it, on its thread).
--   trace_id, frame_id (the frame's event_id), gpu_event_id, kernel, gcat, stream, ts_ns, dur_ns, and s, e, dur_us
--   (float µs), launch_event_id (the call that launched it)
-- @materialize report-tracelens-inference
CREATE OR REPLACE VIEW _tl_infer_frame_gpu AS
SELECT f.trace_id, f.event_id AS frame_id, g.event_id AS gpu_event_id, g.name AS kernel, g.cat AS gcat, g.stream,
       g.ts_ns, g.dur_ns, _us_f64(g.ts_ns) AS s, _us_f64(g.ts_ns) + _us_f64(g.dur_ns) AS e, _us_f64(g.dur_ns) AS dur_us,
       g.launch_event_id
FROM _tl_infer_frames f JOIN gpu_event_ops g ON g.trace_id = f.trace_id AND g.capture_trace_id IS NULL
 AND g.launch_pid = f.pid AND g.launch_tid = f.tid AND g.launch_ts_ns >= f.ts_ns
 AND g.launch_ts_ns + g.launch_dur_ns <= f.end_ns
JOIN _tl_links t ON t.trace_id = g.trace_id AND t.event_id = g.event_id
WHERE t.tl_linked;

-- _tl_infer_frame_pseudo_ops: one row per frame pseudo op (see _tl_infer_pseudo_ops), keyed by its frame.
--   trace_id, frame_id, frame_name, ext, name_first, pid, tid, ts_ns, dur_ns   the frame (_tl_infer_frames)
--   donor_id               the shape donor (an event id of the trace)
--   v4_h_q, v4_d_h         a DeepSeek-V4 decode pseudo op's H_Q and head dim from its qk_norm_rope kernel
--   name, model, sheet     the pseudo op's name, perf model and sheet
--   stage                  the flydsl stage (1, 2), else 0
CREATE OR REPLACE VIEW _tl_infer_frame_pseudo_ops AS
WITH fd AS (   -- each frame's shape donor: the first MLA op inside it (MLA), the innermost aiter::fused_moe_ or
             -- aiter::v4_attention_with_output around it (flydsl, V4); on its thread, by time
    SELECT f.trace_id, f.event_id AS frame_id,
           CASE WHEN f.ext IN (3, 4) THEN arg_min(d.event_id, (d.ts_ns, d.event_id))
                ELSE arg_max(d.event_id, (d.ts_ns, d.event_id)) END AS donor_id
    FROM _tl_infer_frames f JOIN events d ON d.trace_id = f.trace_id AND d.pid = f.pid AND d.tid = f.tid AND d.event_id <> f.event_id
     AND d.name = CASE f.ext WHEN 2 THEN 'aiter::fused_moe_' WHEN 3 THEN 'aiter::mla_decode_stage1_asm_fwd'
                             WHEN 4 THEN 'aiter::mla_prefill_ps_asm_fwd' ELSE 'aiter::v4_attention_with_output' END
     AND CASE WHEN f.ext IN (3, 4) THEN d.ts_ns >= f.ts_ns AND d.ts_ns + d.dur_ns <= f.end_ns
              ELSE d.ts_ns <= f.ts_ns AND f.end_ns <= d.ts_ns + d.dur_ns END
    GROUP BY f.trace_id, f.event_id, f.ext
), v4k AS (   -- the GPU events launched inside each V4 donor (on its thread): the mode, and H_Q and the head
              -- dim of its qk_norm_rope kernel
    SELECT d.trace_id, d.donor_id,
           CASE WHEN bool_or(starts_with(g.name, 'hca_')) THEN 'hca'
                WHEN bool_or(starts_with(g.name, 'fused_compress_attn')
                             OR starts_with(g.name, '_update_compressor_states_kernel')) THEN 'csa'
                ELSE 'swa' END AS mode,
           arg_min(TRY_CAST(regexp_extract(g.name, 'qk_norm_rope_H(\d+)_D(\d+)_RD(\d+)', 1) AS BIGINT), g.event_id)
               FILTER (WHERE regexp_matches(g.name, 'qk_norm_rope_H(\d+)_D(\d+)_RD(\d+)')) AS h_q,
           arg_min(TRY_CAST(regexp_extract(g.name, 'qk_norm_rope_H(\d+)_D(\d+)_RD(\d+)', 2) AS BIGINT), g.event_id)
               FILTER (WHERE regexp_matches(g.name, 'qk_norm_rope_H(\d+)_D(\d+)_RD(\d+)')) AS d_h
    FROM (SELECT DISTINCT f.trace_id, d.donor_id, o.pid, o.tid, o.ts_ns, o.ts_ns + o.dur_ns AS end_ns
          FROM _tl_infer_frames f JOIN fd d ON d.trace_id = f.trace_id AND d.frame_id = f.event_id
          JOIN events o ON o.trace_id = d.trace_id AND o.event_id = d.donor_id
          WHERE f.ext = 5) d
    JOIN gpu_event_ops g ON g.trace_id = d.trace_id AND g.capture_trace_id IS NULL AND g.launch_pid = d.pid
     AND g.launch_tid = d.tid AND g.launch_ts_ns >= d.ts_ns AND g.launch_ts_ns + g.launch_dur_ns <= d.end_ns
    GROUP BY d.trace_id, d.donor_id
)
SELECT f.trace_id, f.event_id AS frame_id, f.name AS frame_name, f.ext, f.name_first, f.pid, f.tid, f.ts_ns,
       f.dur_ns, d.donor_id, v.h_q AS v4_h_q, v.d_h AS v4_d_h,
       CASE WHEN f.ext = 2 THEN 'pseudo_op::moe_flydsl_stage' || right(f.name, 1)
            WHEN f.ext = 3 THEN 'pseudo_mla_decode_fwd' WHEN f.ext = 4 THEN 'pseudo_mla_prefill_fwd'
            ELSE 'pseudo_v4_paged_decode_' || v.mode END AS name,
       CASE WHEN f.ext = 2 THEN 'moe_flydsl_stage' || right(f.name, 1)
            WHEN f.ext = 3 THEN 'mla_decode_fwd' WHEN f.ext = 4 THEN 'pseudo_mla_prefill_fwd'
            ELSE 'pseudo_v4_paged_decode' END AS model,
       CASE WHEN f.ext = 2 THEN 'MoE_unfused_fwd' ELSE 'InferenceAttention_fwd' END AS sheet,
       CASE WHEN f.ext = 2 THEN right(f.name, 1)::BIGINT ELSE 0 END AS stage
FROM _tl_infer_frames f JOIN fd d ON d.trace_id = f.trace_id AND d.frame_id = f.event_id
LEFT JOIN v4k v ON v.trace_id = d.trace_id AND v.donor_id = d.donor_id
WHERE f.ext = 2 OR EXISTS (SELECT 1 FROM _tl_infer_frame_gpu g WHERE g.trace_id = f.trace_id AND g.frame_id = f.event_id);

-- MoE pseudo ops (TraceLens/Trace2Tree/extensions/moe_unfused_triton_pseudo_ops.py, applied by
-- pseudo_ops_registry.apply_pseudo_op_extensions when the tree has vllm::moe_forward, no
-- vllm::rocm_aiter_fused_moe and a kernel named *matmul_ogs*): for every vllm::moe_forward of the tree (in the
-- tree's order) its GPU kernels named *matmul_ogs* by start become pseudo_op::moe_triton_unfused_up (the first)
-- and pseudo_op::moe_triton_unfused_down (the others), each with that one kernel and the moe_forward's args,
-- gated when the kernel name contains '_swiglu' or '_glu'; then its one GPU event named *matmul_scatter*
-- (none when several) becomes pseudo_op::moe_triton_unfused_finalize_matmul_scatter (not modelled). topk is
-- the second Concrete Input of the first TopK op (by start) inside the moe_forward, else 4. The fused aiter MoE
-- pseudo op (TraceLens/Trace2Tree/extensions/moe_aiter_pseudo_ops.py, applied instead when the tree has
-- vllm::moe_forward and vllm::rocm_aiter_fused_moe): every vllm::rocm_aiter_fused_moe without a cpu_op inside it
-- (here: on its thread within its time) whose GPU events hold exactly one kernel whose name contains 'aiter::' and
-- 'fmoe', not 'MoeSorting' nor 'quant' (any case) gets pseudo_op::moe_aiter_fused_1stage with that kernel and its
-- args (MoE_fused_fwd). The GPTQ/AWQ MoE pseudo ops (moe_gptq_awq_pseudo_ops.py, applied next when the tree has
-- vllm::outplace_fused_experts and a kernel named *fused_moe_kernel_gptq_awq*): for every
-- vllm::outplace_fused_experts its GPU kernels named *fused_moe_kernel_gptq_awq* by start become
-- pseudo_op::moe_gptq_awq_up (the first, gated) and pseudo_op::moe_gptq_awq_down (the others), each with that one
-- kernel and the op's args; topk = Input Dims[4][1] (topk_ids), else 8 (MoE_unfused_fwd).
-- The frame pseudo ops, made from python_function events of the trace (the inference report's tree holds Python
-- frames; not from a merged capture window), each with its frame's start and duration (for the annotation), its
-- donor's args and every GPU event launched inside the frame (by time, on its thread):
--   flydsl (moe_flydsl_pseudo_ops.py, when the tree has aiter::fused_moe_; inject_pseudo_op_above_event)   every
--       frame named '<...>: flydsl_moe_stage1' / '...: flydsl_moe_stage2' inside an aiter::fused_moe_ (the
--       innermost one is the donor) gets pseudo_op::moe_flydsl_stage1 / _stage2 (MoE_unfused_fwd), put above the
--       frame;
--   MLA decode, MLA prefill (mla_decode_pseudo_ops.py, mla_prefill_pseudo_ops.py, when the tree has
--       aiter::mla_decode_stage1_asm_fwd / aiter::mla_prefill_ps_asm_fwd; inject_pseudo_op_wrap_children)   every
--       frame whose name matches 'aiter/mla.py\(\d+\): mla_decode_fwd' / ':\s*mla_fp8_prefill_attn(\b|$)' with
--       that op inside it (the first one is the donor) and GPU events gets pseudo_mla_decode_fwd /
--       pseudo_mla_prefill_fwd (InferenceAttention_fwd), put between the frame and its children;
--   DeepSeek-V4 sparse paged decode (v4_paged_decode_pseudo_ops.py, likewise)   every frame matching
--       'paged_decode\.py\(\d+\):\s*sparse_attn_v4_paged_decode\b' inside an aiter::v4_attention_with_output
--       (the innermost one is the donor) with GPU events gets pseudo_v4_paged_decode_<mode>: 'hca' when a kernel
--       under the donor starts with 'hca_', else 'csa' when one starts with 'fused_compress_attn' or
--       '_update_compressor_states_kernel', else 'swa'; H_Q and the head dim from the first of its kernels named
--       *qk_norm_rope_H<H>_D<D>_RD<R>* (v4_h_q, v4_d_h).
-- The pseudo ops are numbered from the merged tree's event count, extension by extension in the registry's order
-- (MoE fused or Triton, GPTQ/AWQ, flydsl, MLA decode, MLA prefill, V4; set_bookkeeping_attr); within one: the
-- MoE ones by parent op, flydsl stage 1 then stage 2, the frames of one name together (names in order of their
-- first event, then by id), V4 by thread and start.
-- _tl_infer_pseudo_ops: one row per such pseudo op.
--   trace_id, event_id   the trace and the pseudo op's id in the merged tree
--   name, model, sheet   its name, perf model and sheet (sheet NULL: no model)
--   parent_id            a MoE pseudo op's parent op (_tl_infer_ops.event_id: the moe_forward, rocm_aiter_fused_moe
--                        or outplace_fused_experts); NULL for frame pseudo ops
--   gpu_event_id         a MoE pseudo op's one GPU event; NULL for frame pseudo ops
--   frame_id, donor_id   a frame pseudo op's Python frame and shape donor (event ids of the trace); NULL for MoE
--   pid, tid, ts_ns, dur_ns   a frame pseudo op's thread, start and duration (its frame's); NULL for MoE
--   moe_topk, moe_gated  a MoE pseudo op's `MoE topk` and `MoE GEMM gated` args
--   v4_h_q, v4_d_h       a DeepSeek-V4 decode pseudo op's H_Q and head dim from its qk_norm_rope kernel
-- @materialize report-tracelens-inference
CREATE OR REPLACE VIEW _tl_infer_pseudo_ops AS
WITH par0 AS MATERIALIZED (   -- the ops the MoE pseudo ops come from
    SELECT * FROM _tl_infer_ops WHERE model IN ('moe_forward', 'rocm_aiter_fused_moe', 'outplace_fused_experts')
), pk0 AS MATERIALIZED (
    SELECT * FROM _tl_infer_kernels_of(par0)
), moe_on AS (   -- traces whose tree gets the unfused Triton MoE pseudo ops (with pseudo ops on)
    SELECT trace_id FROM par0 WHERE name = 'vllm::moe_forward' AND _tl_pseudo_ops()
    INTERSECT SELECT trace_id FROM kernels WHERE cat = 'kernel' AND contains(lower(name), 'matmul_ogs')
    EXCEPT (SELECT trace_id FROM events WHERE name = 'vllm::rocm_aiter_fused_moe'
            UNION SELECT c.trace_id FROM _tl_infer_capture_events c WHERE c.name = 'vllm::rocm_aiter_fused_moe')
), moe AS (
    SELECT i.* FROM par0 i SEMI JOIN moe_on m ON m.trace_id = i.trace_id WHERE i.model = 'moe_forward'
), mk AS (   -- the pseudo ops of each moe_forward: its matmul_ogs kernels, then its matmul_scatter event
    SELECT m.trace_id, m.event_id AS moe_id, k.gpu_event_id, k.kernel,
           row_number() OVER (PARTITION BY m.trace_id, m.event_id ORDER BY k.s, k.gpu_event_id) - 1 AS idx
    FROM moe m JOIN pk0 k ON k.trace_id = m.trace_id AND k.event_id = m.event_id
    WHERE k.gcat = 'kernel' AND contains(lower(k.kernel), 'matmul_ogs')
), fin AS (
    SELECT m.trace_id, m.event_id AS moe_id, any_value(k.gpu_event_id) AS gpu_event_id
    FROM moe m JOIN pk0 k ON k.trace_id = m.trace_id AND k.event_id = m.event_id
    WHERE contains(lower(k.kernel), 'matmul_scatter')
    GROUP BY ALL HAVING count(*) = 1
), fz AS (   -- the vllm::rocm_aiter_fused_moe ops that get a fused aiter MoE pseudo op (a tree with a
              -- vllm::moe_forward; no cpu_op inside the op)
    SELECT i.* FROM par0 i
    WHERE i.model = 'rocm_aiter_fused_moe' AND _tl_pseudo_ops()
      AND i.trace_id IN (SELECT trace_id FROM par0 WHERE name = 'vllm::moe_forward')
      AND NOT EXISTS (SELECT 1 FROM events t
                      WHERE t.trace_id = i.src_trace_id AND t.pid = i.pid AND t.tid = i.tid AND t.cat = 'cpu_op'
                        AND t.event_id <> i.src_event_id AND t.ts_ns >= i.src_ts_ns
                        AND t.ts_ns + t.dur_ns <= i.src_ts_ns + i.src_dur_ns)
), fk AS (   -- its one fused MoE kernel (none when several)
    SELECT f.trace_id, f.event_id AS moe_id, any_value(k.gpu_event_id) AS gpu_event_id, any_value(k.kernel) AS kernel
    FROM fz f JOIN pk0 k ON k.trace_id = f.trace_id AND k.event_id = f.event_id
    WHERE k.gcat = 'kernel' AND contains(k.kernel, 'aiter::') AND contains(k.kernel, 'fmoe')
      AND NOT contains(k.kernel, 'MoeSorting') AND NOT contains(lower(k.kernel), 'quant')
    GROUP BY ALL HAVING count(*) = 1
), gq AS (   -- the vllm::outplace_fused_experts ops of a tree with a GPTQ/AWQ MoE kernel
    SELECT i.* FROM par0 i
    WHERE i.model = 'outplace_fused_experts' AND _tl_pseudo_ops()
      AND i.trace_id IN (SELECT trace_id FROM kernels
                         WHERE cat = 'kernel' AND contains(name, 'fused_moe_kernel_gptq_awq'))
), gk AS (   -- their GPTQ/AWQ MoE kernels by start
    SELECT g.trace_id, g.event_id AS moe_id, k.gpu_event_id, k.kernel,
           row_number() OVER (PARTITION BY g.trace_id, g.event_id ORDER BY k.s, k.gpu_event_id) - 1 AS idx,
           coalesce(CASE WHEN json_array_length(json_extract(g.input_dims, '$[4]')) >= 2
                         THEN TRY_CAST(g.input_dims ->> '$[4][1]' AS BIGINT) END, 8) AS topk
    FROM gq g JOIN pk0 k ON k.trace_id = g.trace_id AND k.event_id = g.event_id
    WHERE k.gcat = 'kernel' AND contains(k.kernel, 'fused_moe_kernel_gptq_awq')
), pk AS (   -- ext: the extension's turn (TraceLens applies the fused or Triton one, then GPTQ/AWQ)
    SELECT trace_id, moe_id, gpu_event_id, kernel, idx,
           CASE WHEN idx = 0 THEN 'pseudo_op::moe_triton_unfused_up' ELSE 'pseudo_op::moe_triton_unfused_down' END
               AS name, 0 AS ext, NULL::BIGINT AS g_topk
    FROM mk
    UNION ALL
    SELECT trace_id, moe_id, gpu_event_id, kernel, 0, 'pseudo_op::moe_aiter_fused_1stage', 0, NULL FROM fk
    UNION ALL
    SELECT f.trace_id, f.moe_id, f.gpu_event_id, NULL, 1000000000,
           'pseudo_op::moe_triton_unfused_finalize_matmul_scatter', 0, NULL
    FROM fin f SEMI JOIN mk ON mk.trace_id = f.trace_id AND mk.moe_id = f.moe_id
    UNION ALL
    SELECT trace_id, moe_id, gpu_event_id, kernel, idx,
           CASE WHEN idx = 0 THEN 'pseudo_op::moe_gptq_awq_up' ELSE 'pseudo_op::moe_gptq_awq_down' END, 1, topk
    FROM gk
), nev AS (   -- events of the merged tree before the pseudo ops: the trace's and its merged windows' (with roots)
    SELECT t.trace_id, t.events_read + coalesce(sum(w.n + 1), 0) AS n
    FROM traces t LEFT JOIN (SELECT trace_id, graph_index, count(*) AS n FROM _tl_infer_capture_events GROUP BY ALL) w
      ON w.trace_id = t.trace_id
    GROUP BY t.trace_id, t.events_read
), topk AS (
    SELECT m.trace_id, m.event_id AS moe_id,
           arg_min(TRY_CAST(json_extract_string(t.concrete_inputs, '$[1]') AS BIGINT), (t.ts_ns, t.event_id))
               FILTER (WHERE TRY_CAST(json_extract_string(t.concrete_inputs, '$[1]') AS BIGINT) IS NOT NULL) AS topk
    FROM moe m JOIN events t ON t.trace_id = m.src_trace_id AND t.pid = m.pid AND t.tid = m.tid AND t.cat = 'cpu_op'
     AND contains(t.name, 'TopK') AND t.ts_ns >= m.src_ts_ns AND t.ts_ns + t.dur_ns <= m.src_ts_ns + m.src_dur_ns
    GROUP BY ALL
), pseudo AS (
    SELECT p.trace_id,
           n.n - 1 + row_number() OVER (PARTITION BY p.trace_id ORDER BY p.ext, p.moe_id, p.idx) AS event_id,
           p.moe_id, p.gpu_event_id, p.name, p.kernel,
           CASE WHEN p.ext = 1 THEN p.g_topk
                WHEN p.name <> 'pseudo_op::moe_aiter_fused_1stage' THEN coalesce(t.topk, 4) END AS moe_topk,
           CASE WHEN p.ext = 1 THEN p.idx = 0
                WHEN p.name <> 'pseudo_op::moe_aiter_fused_1stage'
                THEN contains(lower(p.kernel), '_swiglu') OR contains(lower(p.kernel), '_glu') END AS moe_gated
    FROM pk p JOIN nev n ON n.trace_id = p.trace_id
    LEFT JOIN topk t ON t.trace_id = p.trace_id AND t.moe_id = p.moe_id
), fp AS (   -- numbered after the MoE pseudo ops, extension by extension: flydsl stage 1 then 2 (by the frame name's
             -- first event, then id), MLA decode and prefill (the same), V4 by thread and start
    SELECT f.*,
           n.n - 1 + coalesce(c.k, 0)
               + row_number() OVER (PARTITION BY f.trace_id
                                    ORDER BY f.ext, f.stage, CASE WHEN f.ext = 5 THEN 0 ELSE f.name_first END,
                                             CASE WHEN f.ext = 5 THEN TRY_CAST(f.pid AS BIGINT) END,
                                             CASE WHEN f.ext = 5 THEN TRY_CAST(f.tid AS BIGINT) END,
                                             CASE WHEN f.ext = 5 THEN f.ts_ns END, f.frame_id) AS uid
    FROM _tl_infer_frame_pseudo_ops f JOIN nev n ON n.trace_id = f.trace_id
    LEFT JOIN (SELECT trace_id, count(*) AS k FROM pk GROUP BY ALL) c ON c.trace_id = f.trace_id
)
SELECT p.trace_id, p.event_id::BIGINT AS event_id, p.name,
       CASE p.name WHEN 'pseudo_op::moe_triton_unfused_up' THEN 'moe_triton_unfused_up'
                   WHEN 'pseudo_op::moe_triton_unfused_down' THEN 'moe_triton_unfused_down'
                   WHEN 'pseudo_op::moe_aiter_fused_1stage' THEN 'moe_aiter_fused_1stage'
                   WHEN 'pseudo_op::moe_gptq_awq_up' THEN 'moe_gptq_awq_up'
                   WHEN 'pseudo_op::moe_gptq_awq_down' THEN 'moe_gptq_awq_down' END AS model,
       CASE WHEN p.name = 'pseudo_op::moe_aiter_fused_1stage' THEN 'MoE_fused_fwd'
            WHEN p.kernel IS NOT NULL THEN 'MoE_unfused_fwd' END AS sheet,
       p.moe_id AS parent_id, p.gpu_event_id, NULL::BIGINT AS frame_id, NULL::BIGINT AS donor_id,
       NULL::VARCHAR AS pid, NULL::VARCHAR AS tid, NULL::BIGINT AS ts_ns, NULL::BIGINT AS dur_ns,
       p.moe_topk, p.moe_gated, NULL::BIGINT AS v4_h_q, NULL::BIGINT AS v4_d_h
FROM pseudo p
UNION ALL
SELECT f.trace_id, f.uid::BIGINT, f.name, f.model, f.sheet, NULL, NULL, f.frame_id, f.donor_id, f.pid, f.tid, f.ts_ns,
       f.dur_ns, NULL, NULL, f.v4_h_q, f.v4_d_h
FROM fp f;

-- _tl_infer_perf_events: _tl_perf_events for TraceLens's inference report, one row per modelled op instance of
-- the (merged) tree: the trace's own cpu_ops, the cpu_ops of its merged capture windows, and the MoE pseudo ops
-- TraceLens adds (enable_pseudo_ops; below), with the registry of peers/tracelens/perf_ops and
-- tl_perf_infer_model_ops. Columns as _tl_perf_events (event_id is TraceLens's id of the instance, see the top
-- of this file; input args from the capture trace for capture ops; process and thread names looked up in the
-- replay trace), plus:
--   annotation   the name of the replay trace's user_annotation holding the op (NULL when none)
--   moe_topk, moe_gated   a MoE pseudo op's `MoE topk` and `MoE GEMM gated` args (NULL for other ops)
--   pseudo_parent_uid, pseudo_gpu_event_id   a MoE pseudo op's parent op (the moe_forward, the
--                rocm_aiter_fused_moe) and its one GPU event (NULL for other ops; the pseudo ops without a model,
--                sheet NULL, are rows too)
--   pseudo_frame_id, pseudo_donor_id   a frame pseudo op's Python frame and shape donor (event ids of the trace;
--                NULL for other ops)
--   v4_h_q, v4_d_h   a DeepSeek-V4 decode pseudo op's H_Q and head dim from its qk_norm_rope kernel (NULL when
--                none)
-- @materialize report-tracelens-inference
CREATE OR REPLACE VIEW _tl_infer_perf_events AS
WITH inst0 AS MATERIALIZED (
    SELECT * FROM _tl_infer_ops
), k0 AS MATERIALIZED (
    SELECT * FROM _tl_infer_kernels_of(inst0)
), ps AS MATERIALIZED (
    SELECT * FROM _tl_infer_pseudo_ops
), inst AS (
    SELECT *, NULL::BIGINT AS moe_topk, NULL::BOOLEAN AS moe_gated, NULL::BIGINT AS pseudo_parent_uid,
           NULL::BIGINT AS pseudo_gpu_event_id, NULL::BIGINT AS pseudo_frame_id, NULL::BIGINT AS v4_h_q,
           NULL::BIGINT AS v4_d_h
    FROM inst0 WHERE model NOT IN ('moe_forward', 'rocm_aiter_fused_moe', 'outplace_fused_experts')
    UNION ALL
    SELECT f.trace_id, f.event_id, d.event_id, d.trace_id, f.name, f.model, f.sheet, f.pid, f.tid, d.input_dims,
           d.input_types, d.input_strides, d.concrete_inputs, f.ts_ns, f.dur_ns, f.ts_ns, f.dur_ns, NULL, NULL, NULL,
           NULL, f.frame_id, f.v4_h_q, f.v4_d_h
    FROM ps f JOIN events d ON d.trace_id = f.trace_id AND d.event_id = f.donor_id
    UNION ALL
    SELECT p.trace_id, p.event_id, m.src_event_id, m.src_trace_id, p.name, p.model, p.sheet,
           m.pid, m.tid, m.input_dims, m.input_types, m.input_strides, m.concrete_inputs, NULL, NULL, NULL, NULL,
           p.moe_topk, p.moe_gated, p.parent_id, p.gpu_event_id, NULL, NULL, NULL
    FROM ps p JOIN inst0 m ON m.trace_id = p.trace_id AND m.event_id = p.parent_id
     AND m.model IN ('moe_forward', 'rocm_aiter_fused_moe', 'outplace_fused_experts')
    WHERE p.frame_id IS NULL
), k AS (
    SELECT k0.* FROM k0 SEMI JOIN inst i ON i.trace_id = k0.trace_id AND i.event_id = k0.event_id
    UNION ALL
    SELECT f.trace_id, f.event_id, g.gpu_event_id, g.kernel, g.gcat, g.stream, g.s, g.e, g.dur_us
    FROM ps f JOIN _tl_infer_frame_gpu g ON g.trace_id = f.trace_id AND g.frame_id = f.frame_id
    UNION ALL
    SELECT p.trace_id, p.event_id, k0.gpu_event_id, k0.kernel, k0.gcat, k0.stream, k0.s, k0.e, k0.dur_us
    FROM ps p JOIN k0 ON k0.trace_id = p.trace_id AND k0.event_id = p.parent_id AND k0.gpu_event_id = p.gpu_event_id
), busy AS (
    SELECT trace_id, event_id, sum(_tree_busy_ns(s, e, prev_e)) AS kernel_time_us,
           list({'name': kernel, 'stream': stream, 'dur_us': dur_us} ORDER BY s, gpu_event_id) AS kernels
    FROM (SELECT *, max(e) OVER (PARTITION BY trace_id, event_id ORDER BY s, e
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
          FROM k)
    GROUP BY trace_id, event_id
), ann AS (   -- the first annotation (by start) of the replay trace holding the op, float µs as TraceLens compares
    SELECT i.trace_id, i.event_id, arg_min(a.name, (a.ts_ns, a.event_id)) AS annotation
    FROM inst i JOIN events a ON a.trace_id = i.trace_id AND a.cat = 'user_annotation'
     AND _us_f64(a.ts_ns) <= _us_f64(i.a_ts_ns)
     AND _us_f64(i.a_ts_ns) + _us_f64(i.a_dur_ns) < _us_f64(a.ts_ns) + _us_f64(a.dur_ns)
    WHERE EXISTS (SELECT 1 FROM _tl_infer_annotated_ops f WHERE starts_with(i.name, f.prefix))
    GROUP BY i.trace_id, i.event_id
)
SELECT i.trace_id, i.event_id, i.name, i.model, i.sheet, i.pid, i.tid, i.input_dims, i.input_types,
       i.input_strides, i.concrete_inputs, coalesce(b.kernel_time_us, 0.0) AS kernel_time_us,
       coalesce(b.kernels, []) AS kernels,
       coalesce(pn.v, 'Unknown') AS process_name, coalesce(pl.v, 'Unknown') AS process_label,
       coalesce(tn.v, 'Unknown') AS thread_name, a.annotation, i.moe_topk, i.moe_gated, i.pseudo_parent_uid,
       i.pseudo_gpu_event_id, i.pseudo_frame_id,
       CASE WHEN i.pseudo_frame_id IS NOT NULL THEN i.src_event_id END AS pseudo_donor_id, i.v4_h_q, i.v4_d_h
FROM inst i
LEFT JOIN busy b ON b.trace_id = i.trace_id AND b.event_id = i.event_id
LEFT JOIN ann a ON a.trace_id = i.trace_id AND a.event_id = i.event_id
LEFT JOIN _tl_process_meta pn ON pn.trace_id = i.trace_id AND pn.kind = 'process_name' AND pn.pid = i.pid
LEFT JOIN _tl_process_meta pl ON pl.trace_id = i.trace_id AND pl.kind = 'process_labels' AND pl.pid = i.pid
LEFT JOIN _tl_process_meta tn ON tn.trace_id = i.trace_id AND tn.kind = 'thread_name' AND tn.pid = i.pid
                              AND tn.tid = i.tid
WHERE i.sheet IS NOT NULL OR i.pseudo_parent_uid IS NOT NULL;

-- _tl_perf_infer_gemm: one row per GEMM instance of the inference report TraceLens keeps, in _tl_perf_summary's
-- input form: the GEMM models of peers/tracelens/perf_gemm over the merged tree's instances.
CREATE OR REPLACE VIEW _tl_perf_infer_gemm AS
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_gemm_of('_tl_infer_perf_events');

-- tl_perf_infer_gemm: TraceLens's GEMM.csv of its inference report, one row per trace and group of GEMM op
-- instances of the merged tree with the same name, parameters and number of GPU events; TraceLens's columns.
--   trace_id                  the trace (the graph replay for a merged capture)
--   name                      the op name
--   param: M, N, K, bias, dtype_A_B, B, transpose, stride_A, stride_B, quant_scheme, quant_granularity,
--          block_k, block_n, scale_dtype, output_shape, output_dtype, dtype_scaleA, dtype_scaleB
--                             see peers/tracelens/perf_gemm (text as Python prints them)
--   num_kernels               GPU events per instance
--   GFLOPS_first ... UID_first   the statistics of peers/tracelens/perf_ops (_tl_perf_summary_of)
--   rank                      row order in TraceLens's file
--   sheet_columns             the columns TraceLens writes for this trace, in its order
-- @output report-tracelens-module 9 GEMM EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_gemm AS
SELECT trace_id, name, _tl_perf_param(params, 'B') AS "param: B", _tl_perf_param(params, 'M') AS "param: M",
       _tl_perf_param(params, 'N') AS "param: N", _tl_perf_param(params, 'K') AS "param: K",
       _tl_perf_param(params, 'bias') AS "param: bias", _tl_perf_param(params, 'stride_A') AS "param: stride_A",
       _tl_perf_param(params, 'stride_B') AS "param: stride_B",
       _tl_perf_param(params, 'dtype_A_B') AS "param: dtype_A_B",
       _tl_perf_param(params, 'transpose') AS "param: transpose",
       _tl_perf_param(params, 'quant_scheme') AS "param: quant_scheme",
       _tl_perf_param(params, 'quant_granularity') AS "param: quant_granularity",
       _tl_perf_param(params, 'block_k') AS "param: block_k", _tl_perf_param(params, 'block_n') AS "param: block_n",
       _tl_perf_param(params, 'scale_dtype') AS "param: scale_dtype",
       _tl_perf_param(params, 'output_shape') AS "param: output_shape",
       _tl_perf_param(params, 'output_dtype') AS "param: output_dtype",
       _tl_perf_param(params, 'dtype_scaleA') AS "param: dtype_scaleA",
       _tl_perf_param(params, 'dtype_scaleB') AS "param: dtype_scaleB",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_infer_gemm', '_tl_infer_perf_events', true)
ORDER BY trace_id, rank;

-- _tl_perf_infer_unary: one row per unary elementwise instance of the inference report TraceLens keeps, in
-- _tl_perf_summary's input form: the models of peers/tracelens/perf_elementwise over the merged tree's instances.
CREATE OR REPLACE VIEW _tl_perf_infer_unary AS SELECT * FROM _tl_perf_unary_of('_tl_infer_perf_events');

-- tl_perf_infer_unary_elementwise: TraceLens's UnaryElementwise.csv of its inference report (the model of
-- peers/tracelens/perf_elementwise over the merged tree's instances), grouped by num_kernels too.
--   trace_id                    the trace
--   name                        the op name
--   param: input_shape, output_shape, padding, op_shape, dtype_in_out, stride_input, stride_output   as in
--                               tl_perf_unary_elementwise
--   num_kernels                 GPU events per instance
--   GFLOPS_first ... UID_first  the statistics of _tl_perf_summary_of
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens-module 11 UnaryElementwise EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_unary_elementwise AS
SELECT trace_id, name, _tl_perf_param(params, 'input_shape') AS "param: input_shape",
       _tl_perf_param(params, 'output_shape') AS "param: output_shape",
       _tl_perf_param(params, 'padding') AS "param: padding",
       _tl_perf_param(params, 'op_shape') AS "param: op_shape",
       _tl_perf_param(params, 'dtype_in_out') AS "param: dtype_in_out",
       _tl_perf_param(params, 'stride_input') AS "param: stride_input",
       _tl_perf_param(params, 'stride_output') AS "param: stride_output",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_infer_unary', '_tl_infer_perf_events', true)
ORDER BY trace_id, rank;

-- _tl_perf_infer_rmsnorm: one row per RMSNorm instance of the inference report TraceLens keeps, in
-- _tl_perf_summary's input form: the models of peers/tracelens/perf_rmsnorm over the merged tree's instances.
CREATE OR REPLACE VIEW _tl_perf_infer_rmsnorm AS SELECT * FROM _tl_perf_rmsnorm_of('_tl_infer_perf_events');

-- tl_perf_infer_rmsnorm_fwd: TraceLens's RMSNorm_fwd.csv of its inference report, one row per trace and group of
-- RMSNorm op instances with the same name, parameters and number of GPU events; the columns of
-- tl_perf_rmsnorm_fwd (peers/tracelens/perf_rmsnorm), num_kernels (GPU events per instance) after the params.
-- @output report-tracelens-module 19 RMSNorm_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_rmsnorm_fwd AS
SELECT * FROM _tl_perf_rmsnorm_sheet('_tl_perf_infer_rmsnorm', '_tl_infer_perf_events', true);

-- _tl_py_floordiv(a, b): Python's a // b of integers (rounding down; NULL for b = 0).
CREATE OR REPLACE MACRO _tl_py_floordiv(a, b) AS
    CASE WHEN b <> 0 THEN (a - (((a % b) + b) % b)) // b END;

-- _tl_pa_decode_gluon_of(ev): the aiter::pa_decode_gluon instances of ev (a view with the columns of
-- _tl_infer_perf_events) whose model reads its args and annotation (see _tl_perf_attention_of): trace_id,
-- event_id, n_q, h_q, d (head dim), h_kv, dt_q, dt_kv, sw (sliding window), g_sq, g_sk, g_sqsq, g_sqsk (the
-- generation statistics), g_sqsk_w, g_sk_w (those two capped by the window).
CREATE OR REPLACE MACRO _tl_pa_decode_gluon_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, _tl_shape(json_extract(input_dims, '$[0]')) AS q,
           _tl_shape(json_extract(input_dims, '$[2]')) AS kc, json_extract_string(input_types, '$[*]') AS ty,
           coalesce(_tl_int_text(json_extract_string(concrete_inputs, '$[19]')), 0) AS sw,
           _perf_step_detailed(annotation) AS cs
    FROM query_table(ev) WHERE model = 'pa_decode_gluon'
), a AS (
    SELECT trace_id, event_id, q[1] AS n_q, q[2] AS h_q, q[3] AS d, kc[2] AS h_kv, ty[1] AS dt_q,
           CASE WHEN len(ty) > 2 THEN ty[3] ELSE ty[1] END AS dt_kv, sw,
           cs.g_sq::BIGINT AS g_sq, cs.g_sk::BIGINT AS g_sk, cs.g_sqsq::BIGINT AS g_sqsq, cs.g_sqsk::BIGINT AS g_sqsk
    FROM e WHERE cs.c_sq <> '' AND len(q) >= 3 AND len(kc) >= 2 AND len(ty) >= 1
)
SELECT *, CASE WHEN sw > 0 AND g_sq <> 0 THEN least(g_sqsk, g_sq * sw) ELSE g_sqsk END AS g_sqsk_w,
       CASE WHEN sw > 0 AND g_sq <> 0 THEN least(g_sk, g_sq * sw) ELSE g_sk END AS g_sk_w
FROM a;

-- _tl_gdn_of(ev): the gated-delta-net instances of ev (as _tl_pa_decode_gluon_of) whose model reads its args and
-- annotation (see _tl_perf_attention_of): trace_id, event_id, h_v, h_k, d_v, d_k, c_sq, g_sq, n_tok (c_sq + g_sq), dt_q.
CREATE OR REPLACE MACRO _tl_gdn_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, _tl_shape(json_extract(input_dims, '$[0]')) AS x0,
           _tl_shape(json_extract(input_dims, '$[1]')) AS x1, _tl_shape(json_extract(input_dims, '$[3]')) AS x3,
           json_extract_string(input_types, '$[*]') AS ty, _perf_step_detailed(annotation) AS cs
    FROM query_table(ev) WHERE model = 'gdn_attention_core'
), a AS (
    SELECT trace_id, event_id, x1[2] AS h_v, _tl_py_floordiv(x1[2], 2) AS h_k, x3[3] AS d_v,
           _tl_py_floordiv(x0[2] - x1[2] * x3[3], 2) AS key_dim, ty[1] AS dt_q,
           cs.c_sq::BIGINT AS c_sq, cs.g_sq::BIGINT AS g_sq
    FROM e WHERE cs.c_sq <> '' AND len(x0) >= 2 AND len(x1) >= 2 AND len(x3) >= 3 AND len(ty) >= 1
)
SELECT trace_id, event_id, h_v, h_k, d_v, _tl_py_floordiv(key_dim, h_k) AS d_k, c_sq, g_sq, c_sq + g_sq AS n_tok, dt_q
FROM a WHERE h_k <> 0;

-- _tl_perf_attention_of(ev): one row per instance of ev (a view with the columns of _tl_infer_perf_events: the
-- instances and their annotation) that TraceLens keeps in its InferenceAttention_fwd sheet, in _tl_perf_summary's
-- input form (TraceLens/PerfModel/extensions/attention_perf_model_extensions.py, and
-- sglang_store_cache in perf_model_extensions.py). Chunk statistics c_sq, c_sk, c_sqsq, c_sqsk (context
-- requests) and g_sq, g_sk, g_sqsq, g_sqsk (generation requests) from the op's annotation (vLLM's detailed
-- format, see the top of this file). The attention models read:
--   inference_attention (InferenceAttention)  Q = Input Dims[0] = (N_Q, H_Q, d_h_qk), K = Input Dims[1], whose
--              last three dims are (N_KV, H_KV, d_h_v); dtype_Q = Input type[0], dtype_KV = Input type[1]
--              (dtype_Q without one).
--   aiter_paged_attention_ragged (sglang_profiler::attention_paged_attention_ragged)  Q = Input Dims[2] =
--              (N_Q, H_Q, d_h_qk), the paged K and V caches = [3] and [4] (num_pages, page_size, H_KV, head
--              dim): H_KV = K's second-last dim, d_h_v = V's last; N_KV = c_sk + g_sk; dtype_Q = Input type[2];
--              no dtype_KV parameter (KV bytes at dtype_Q's size).
--   mla_decode_fwd (pseudo_mla_decode_fwd, with the args of aiter::mla_decode_stage1_asm_fwd: q, kv_buffer, ...)
--              as inference_attention.
--   aiter_fmha_v3_varlen_fwd, aiter_mha_batch_prefill, pseudo_mla_prefill_fwd (aiter::fmha_v3_varlen_fwd,
--              aiter::mha_batch_prefill; the pseudo op with the args of aiter::mla_prefill_ps_asm_fwd; args q, k, v,
--              ...)  as inference_attention, d_h_v = the last dim of v (Input Dims[2]) when it has one.
--   mla_tilelang_sparse_fwd (sglang_profiler::tilelang_kernel_tilelang_sparse_fwd)  as inference_attention,
--              d_h_v = 512 (TraceLens looks for Concrete Inputs at the event's top level, where the trace has none).
--   pa_decode_gluon (aiter::pa_decode_gluon; args query, output, key_cache, ...)  N_Q, H_Q, d_h_qk = Input
--              Dims[0][0..2], d_h_v = d_h_qk, H_KV = Input Dims[2][1]; the context statistics set to 0 (a
--              decode-only kernel), N_KV = g_sk; dtype_Q = Input type[0], dtype_KV = Input type[2] (dtype_Q without
--              one); sliding_window = int of Concrete Inputs[19] (0 when absent or not an integer): when > 0, g_sqsk
--              and g_sk count at most g_sq·sliding_window in the FLOPs and bytes (the parameters keep them).
-- All: B = 1, H_V = H_K = H_KV, dropout 0.0, causal False, flash_impl True. An instance without such an
-- annotation, or with c_sq = g_sq = 0, or with other shapes, is dropped (its model gives no FLOPs). FLOPs
-- H_Q·(2·c_sqsk·d_h_qk + 2·c_sqsk·d_h_v − c_sqsq·d_h_qk − c_sqsq·d_h_v + 2·g_sqsk·d_h_qk + 2·g_sqsk·d_h_v);
-- bytes (Q read, output written, current K and V read; cached K and V read): (c_sq + g_sq)·(H_Q·(d_h_qk +
-- d_h_v) + H_KV·(d_h_qk + d_h_v))·bpe + ((c_sk − c_sq) + (g_sk − g_sq))·H_KV·(d_h_qk + d_h_v)·bpe_KV, bpe of
-- dtype_Q (2 when unknown), bpe_KV of dtype_KV (bpe when unknown). Compute Spec 'matrix_' + the precision of
-- dtype_Q.
--   gdn_attention_core (vllm::gdn_attention_core, aiter::linear_attention_with_output_base; args mixed_qkv, b, a,
--              core_attn_out, ...)  the gated delta net's recurrence: D = Input Dims[0][1], H_V = Input Dims[1][1],
--              d_v = Input Dims[3][2], H_K = H_V // 2, d_k = ((D − H_V·d_v) // 2) // H_K (Python's floor
--              division), tokens T = c_sq + g_sq; params B 1, N_Q T, H_Q H_K, N_KV 0, H_KV H_K, H_V, H_K,
--              d_h_qk d_k, d_h_v d_v, c_sq, c_sk = c_sq, c_sqsq 0, c_sqsk 0, g_sq, g_sk = g_sq, g_sqsq 0,
--              g_sqsk 0, dtype_Q = Input type[0]; FLOPs 7·T·H_V·d_v·d_k, bytes T·H_V·(d_k + 2·d_v + 2)·2 (two
--              bytes per element whatever the dtype); Compute Spec 'matrix_' + the precision of dtype_Q. Without a
--              parsed annotation (TraceLens annotates only vllm::gdn_attention_core) or with T = 0 it is dropped.
--   pa_sparse_prefill_opus_fwd (aiter::pa_sparse_prefill_opus_fwd; DeepSeek-V4's sparse prefill, no annotation
--              read)  N_Q, H_Q, d = Input Dims[0][0..2], pairs = Input Dims[2][0] + Input Dims[5][0] (the
--              selected history and in-chunk slots); params B 1, N_Q, H_Q, H_V 1, H_K 1, N_KV pairs, H_KV 1,
--              d_h_qk = d_h_v = d, dropout 0.0, causal False, flash_impl True, prefill_pairs, dtype_Q = Input
--              type[0], dtype_KV = Input type[1] (dtype_Q without one); FLOPs pairs·H_Q·2·(d + d), bytes Q read and
--              output written (2·N_Q·H_Q·d·bpe) + pairs·d·bpe_KV; Compute Spec 'matrix_' + the precision of dtype_Q
--              (bf16 when it has none).
--   pseudo_v4_paged_decode (pseudo_v4_paged_decode_swa / _csa / _hca, _V4PagedDecodeBase, with the args of
--              aiter::v4_attention_with_output)  decode only: the context statistics set to 0; DeepSeek-V4-Flash's
--              configuration (window W0 128, index_topk 512, 64 heads of 512); H_Q = v4_h_q (else 64), d = v4_d_h
--              (else 512); N_Q = Input Dims[0][0] (g_sq when missing or 0); params B 1, N_Q, H_Q, H_V 1, H_K 1,
--              N_KV g_sk, H_KV 1, d_h_qk = d_h_v = d, dropout 0.0, causal False, flash_impl True, the eight
--              statistics, dtype_Q = dtype_KV = 'c10::bfloat16', sliding_window W: swa W0, csa W0 + min(ceil((g_sk /
--              g_sq) / 4), 512), hca W0 + ceil((g_sk / g_sq) / 128) (float divisions); FLOPs and bytes as
--              pa_decode_gluon with g_sqsk and g_sk capped at g_sq·W, two bytes an element; Compute Spec
--              'matrix_bf16'. Without a parsed annotation it is dropped; with g_sq = 0 its model raises.
--   sglang_store_cache (sglang::store_cache, args k, v, k_cache, v_cache, indices, ...): op_shape = k's shape
--              (Input Dims[0]), nelems = its elements, dtype = Input type[0]; FLOPs 0, bytes 4·nelems·bpe (k
--              and v read, their cache rows written; bpe 2 for an unknown dtype); Compute Spec 'vector_' + the
--              precision of dtype.
CREATE OR REPLACE MACRO _tl_perf_attention_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model = 'aiter_paged_attention_ragged' AS ragged,
           json_extract(input_dims, CASE WHEN model = 'aiter_paged_attention_ragged' THEN '$[2]' ELSE '$[0]' END) AS q,
           json_extract(input_dims, CASE WHEN model = 'aiter_paged_attention_ragged' THEN '$[3]' ELSE '$[1]' END)
               AS kk,
           json_extract(input_dims, '$[4]') AS vv,
           json_extract_string(input_types, '$[*]') AS ty,
           _perf_step_detailed(annotation) AS cs,   -- vLLM's detailed step annotation (perf/paged_attention)
           CASE WHEN model IN ('aiter_fmha_v3_varlen_fwd', 'aiter_mha_batch_prefill', 'pseudo_mla_prefill_fwd')
                     AND json_type(json_extract(input_dims, '$[2]')) = 'ARRAY'
                     AND json_array_length(json_extract(input_dims, '$[2]')) >= 1
                THEN json_extract(input_dims, '$[2]') ->> '$[-1]'
                WHEN model = 'mla_tilelang_sparse_fwd' THEN '512' END AS d_v_set
    FROM query_table(ev) WHERE model IN ('inference_attention', 'aiter_paged_attention_ragged',
                                         'aiter_fmha_v3_varlen_fwd', 'aiter_mha_batch_prefill', 'mla_tilelang_sparse_fwd',
                                         'mla_decode_fwd', 'pseudo_mla_prefill_fwd')
), a AS (
    SELECT trace_id, event_id, ragged, ty,
           q ->> '$[0]' AS n_q, (q ->> '$[1]')::BIGINT AS h_q, (q ->> '$[2]')::BIGINT AS d_qk,
           CASE WHEN ragged THEN (cs.c_sk::BIGINT + cs.g_sk::BIGINT)::VARCHAR ELSE kk ->> '$[-3]' END AS n_kv,
           (kk ->> '$[-2]')::BIGINT AS h_kv,
           (CASE WHEN ragged THEN vv ->> '$[-1]' ELSE coalesce(d_v_set, kk ->> '$[-1]') END)::BIGINT AS d_v,
           cs.c_sq::BIGINT AS c_sq, cs.c_sk::BIGINT AS c_sk, cs.c_sqsq::BIGINT AS c_sqsq,
           cs.c_sqsk::BIGINT AS c_sqsk, cs.g_sq::BIGINT AS g_sq, cs.g_sk::BIGINT AS g_sk,
           cs.g_sqsq::BIGINT AS g_sqsq, cs.g_sqsk::BIGINT AS g_sqsk,
           CASE WHEN ragged THEN ty[3] ELSE ty[1] END AS dt_q,
           CASE WHEN ragged THEN NULL WHEN len(ty) > 1 THEN ty[2] ELSE ty[1] END AS dt_kv
    FROM e
    WHERE cs.c_sq <> '' AND json_type(q) = 'ARRAY' AND json_array_length(q) = 3
      AND json_type(kk) = 'ARRAY' AND json_array_length(kk) >= CASE WHEN ragged THEN 2 ELSE 3 END
      AND (NOT ragged OR (json_type(vv) = 'ARRAY' AND json_array_length(vv) >= 1))
      AND len(ty) >= CASE WHEN ragged THEN 3 ELSE 1 END
), ok AS (
    SELECT *, coalesce(_tl_bpe(dt_q), 2) AS bpe, coalesce(_tl_bpe(dt_kv), _tl_bpe(dt_q), 2) AS bpe_kv
    FROM a WHERE NOT (c_sq = 0 AND g_sq = 0)
), sc AS (
    SELECT trace_id, event_id, json_extract(input_dims, '$[0]') AS d0, json_extract_string(input_types, '$[0]') AS dt
    FROM query_table(ev) WHERE model = 'sglang_store_cache'
), pg AS (
    SELECT * FROM _tl_pa_decode_gluon_of(ev) WHERE g_sq <> 0
), gd AS (
    SELECT * FROM _tl_gdn_of(ev) WHERE n_tok <> 0
), v40 AS (   -- the DeepSeek-V4 sparse paged-decode pseudo ops (DeepSeek-V4-Flash's configuration)
    SELECT trace_id, event_id, substr(name, 24) AS mode, coalesce(nullif(v4_h_q, 0), 64) AS h_q,
           coalesce(nullif(v4_d_h, 0), 512) AS d, _tl_shape(json_extract(input_dims, '$[0]')) AS q0,
           _perf_step_detailed(annotation) AS cs
    FROM query_table(ev) WHERE model = 'pseudo_v4_paged_decode'
), v41 AS (
    SELECT trace_id, event_id, mode, h_q, d, cs.g_sq::BIGINT AS g_sq, cs.g_sk::BIGINT AS g_sk,
           cs.g_sqsq::BIGINT AS g_sqsq, cs.g_sqsk::BIGINT AS g_sqsk,
           coalesce(CASE WHEN len(q0) >= 1 THEN nullif(q0[1], 0) END, cs.g_sq::BIGINT) AS n_q
    FROM v40 WHERE cs.c_sq <> ''
), v42 AS (
    SELECT *, CASE mode WHEN 'csa' THEN CASE WHEN g_sq <= 0 THEN 128 + 512
                                             ELSE 128 + least(ceil(g_sk::DOUBLE / g_sq / 4)::BIGINT, 512) END
                        WHEN 'hca' THEN CASE WHEN g_sq <= 0 THEN 0 ELSE 128 + ceil(g_sk::DOUBLE / g_sq / 128)::BIGINT END
                        ELSE 128 END AS sw
    FROM v41 WHERE g_sq <> 0
), v4 AS (
    SELECT *, CASE WHEN sw > 0 AND g_sq <> 0 THEN least(g_sqsk, g_sq * sw) ELSE g_sqsk END AS g_sqsk_w,
              CASE WHEN sw > 0 AND g_sq <> 0 THEN least(g_sk, g_sq * sw) ELSE g_sk END AS g_sk_w
    FROM v42
), sp0 AS (
    SELECT trace_id, event_id, _tl_shape(json_extract(input_dims, '$[0]')) AS q,
           _tl_shape(json_extract(input_dims, '$[2]')) AS pre, _tl_shape(json_extract(input_dims, '$[5]')) AS ext,
           json_extract_string(input_types, '$[*]') AS ty
    FROM query_table(ev) WHERE model = 'pa_sparse_prefill_opus_fwd'
), sp AS (
    SELECT trace_id, event_id, q[1]::HUGEINT AS n_q, q[2]::HUGEINT AS h_q, q[3]::HUGEINT AS d,
           pre[1]::HUGEINT + ext[1] AS pairs, ty[1] AS dt_q, CASE WHEN len(ty) > 1 THEN ty[2] ELSE ty[1] END AS dt_kv
    FROM sp0 WHERE len(q) >= 3 AND len(pre) >= 1 AND len(ext) >= 1 AND len(ty) >= 1
)
SELECT trace_id, event_id,
       list_concat(
           [{'k': 'B', 'v': '1', 't': 'i'}, {'k': 'N_Q', 'v': n_q, 't': 'i'},
            {'k': 'H_Q', 'v': h_q::VARCHAR, 't': 'i'}, {'k': 'H_V', 'v': h_kv::VARCHAR, 't': 'i'},
            {'k': 'H_K', 'v': h_kv::VARCHAR, 't': 'i'}, {'k': 'N_KV', 'v': n_kv, 't': 'i'},
            {'k': 'H_KV', 'v': h_kv::VARCHAR, 't': 'i'}, {'k': 'd_h_qk', 'v': d_qk::VARCHAR, 't': 'i'},
            {'k': 'd_h_v', 'v': d_v::VARCHAR, 't': 'i'}, {'k': 'dropout', 'v': '0.0', 't': 'f'},
            {'k': 'causal', 'v': 'False', 't': NULL}, {'k': 'flash_impl', 'v': 'True', 't': NULL},
            {'k': 'c_sq', 'v': c_sq::VARCHAR, 't': 'i'}, {'k': 'c_sk', 'v': c_sk::VARCHAR, 't': 'i'},
            {'k': 'c_sqsq', 'v': c_sqsq::VARCHAR, 't': 'i'}, {'k': 'c_sqsk', 'v': c_sqsk::VARCHAR, 't': 'i'},
            {'k': 'g_sq', 'v': g_sq::VARCHAR, 't': 'i'}, {'k': 'g_sk', 'v': g_sk::VARCHAR, 't': 'i'},
            {'k': 'g_sqsq', 'v': g_sqsq::VARCHAR, 't': 'i'}, {'k': 'g_sqsk', 'v': g_sqsk::VARCHAR, 't': 'i'},
            {'k': 'dtype_Q', 'v': dt_q, 't': 's'}],
           CASE WHEN ragged THEN [] ELSE [{'k': 'dtype_KV', 'v': dt_kv, 't': 's'}] END) AS params,
       h_q::HUGEINT * (2 * c_sqsk * d_qk) + h_q::HUGEINT * (2 * c_sqsk * d_v) - h_q::HUGEINT * (c_sqsq * d_qk)
           - h_q::HUGEINT * (c_sqsq * d_v) + h_q::HUGEINT * (2 * g_sqsk * d_qk) + h_q::HUGEINT * (2 * g_sqsk * d_v)
           AS flops,
       ((c_sq + g_sq)::HUGEINT * (h_q * d_qk + h_q * d_v + h_kv * d_qk + h_kv * d_v)) * bpe
           + (((c_sk - c_sq) + (g_sk - g_sq))::HUGEINT * (h_kv * d_qk + h_kv * d_v)) * bpe_kv AS bytes,
       'matrix_' || _tl_precision(dt_q) AS compute_spec
FROM ok
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'op_shape', 'v': _py_tuple1(d0), 't': NULL},
        {'k': 'nelems', 'v': _tl_numel(_tl_shape(d0))::VARCHAR, 't': 'i'},
        {'k': 'dtype', 'v': dt, 't': 's'}],
       0, 4 * _tl_numel(_tl_shape(d0)) * coalesce(_tl_bpe(dt), 2), 'vector_' || _tl_precision(dt)
FROM sc WHERE _tl_shape(d0) IS NOT NULL AND dt IS NOT NULL
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'B', 'v': '1', 't': 'i'}, {'k': 'N_Q', 'v': n_q::VARCHAR, 't': 'i'},
        {'k': 'H_Q', 'v': h_q::VARCHAR, 't': 'i'}, {'k': 'H_V', 'v': h_kv::VARCHAR, 't': 'i'},
        {'k': 'H_K', 'v': h_kv::VARCHAR, 't': 'i'}, {'k': 'N_KV', 'v': g_sk::VARCHAR, 't': 'i'},
        {'k': 'H_KV', 'v': h_kv::VARCHAR, 't': 'i'}, {'k': 'd_h_qk', 'v': d::VARCHAR, 't': 'i'},
        {'k': 'd_h_v', 'v': d::VARCHAR, 't': 'i'}, {'k': 'dropout', 'v': '0.0', 't': 'f'},
        {'k': 'causal', 'v': 'False', 't': NULL}, {'k': 'flash_impl', 'v': 'True', 't': NULL},
        {'k': 'c_sq', 'v': '0', 't': 'i'}, {'k': 'c_sk', 'v': '0', 't': 'i'}, {'k': 'c_sqsq', 'v': '0', 't': 'i'},
        {'k': 'c_sqsk', 'v': '0', 't': 'i'}, {'k': 'g_sq', 'v': g_sq::VARCHAR, 't': 'i'},
        {'k': 'g_sk', 'v': g_sk::VARCHAR, 't': 'i'}, {'k': 'g_sqsq', 'v': g_sqsq::VARCHAR, 't': 'i'},
        {'k': 'g_sqsk', 'v': g_sqsk::VARCHAR, 't': 'i'}, {'k': 'dtype_Q', 'v': dt_q, 't': 's'},
        {'k': 'dtype_KV', 'v': dt_kv, 't': 's'}, {'k': 'sliding_window', 'v': sw::VARCHAR, 't': 'i'}],
       h_q::HUGEINT * (2 * g_sqsk_w * d) + h_q::HUGEINT * (2 * g_sqsk_w * d),
       (g_sq::HUGEINT * h_q * d + g_sq::HUGEINT * h_q * d + g_sq::HUGEINT * h_kv * d + g_sq::HUGEINT * h_kv * d)
           * coalesce(_tl_bpe(dt_q), 2)
       + ((g_sk_w - g_sq)::HUGEINT * h_kv * d + (g_sk_w - g_sq)::HUGEINT * h_kv * d)
           * coalesce(_tl_bpe(dt_kv), _tl_bpe(dt_q), 2),
       'matrix_' || _tl_precision(dt_q)
FROM pg
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'B', 'v': '1', 't': 'i'}, {'k': 'N_Q', 'v': n_tok::VARCHAR, 't': 'i'},
        {'k': 'H_Q', 'v': h_k::VARCHAR, 't': 'i'}, {'k': 'N_KV', 'v': '0', 't': 'i'},
        {'k': 'H_KV', 'v': h_k::VARCHAR, 't': 'i'}, {'k': 'H_V', 'v': h_v::VARCHAR, 't': 'i'},
        {'k': 'H_K', 'v': h_k::VARCHAR, 't': 'i'}, {'k': 'd_h_qk', 'v': d_k::VARCHAR, 't': 'i'},
        {'k': 'd_h_v', 'v': d_v::VARCHAR, 't': 'i'}, {'k': 'c_sq', 'v': c_sq::VARCHAR, 't': 'i'},
        {'k': 'c_sk', 'v': c_sq::VARCHAR, 't': 'i'}, {'k': 'c_sqsq', 'v': '0', 't': 'i'},
        {'k': 'c_sqsk', 'v': '0', 't': 'i'}, {'k': 'g_sq', 'v': g_sq::VARCHAR, 't': 'i'},
        {'k': 'g_sk', 'v': g_sq::VARCHAR, 't': 'i'}, {'k': 'g_sqsq', 'v': '0', 't': 'i'},
        {'k': 'g_sqsk', 'v': '0', 't': 'i'}, {'k': 'dtype_Q', 'v': dt_q, 't': 's'}],
       n_tok::HUGEINT * h_v * 7 * d_v * d_k, n_tok::HUGEINT * (h_v * (d_k + 2 * d_v + 2)) * 2,
       'matrix_' || _tl_precision(dt_q)
FROM gd
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'B', 'v': '1', 't': 'i'}, {'k': 'N_Q', 'v': n_q::VARCHAR, 't': 'i'},
        {'k': 'H_Q', 'v': h_q::VARCHAR, 't': 'i'}, {'k': 'H_V', 'v': '1', 't': 'i'}, {'k': 'H_K', 'v': '1', 't': 'i'},
        {'k': 'N_KV', 'v': pairs::VARCHAR, 't': 'i'}, {'k': 'H_KV', 'v': '1', 't': 'i'},
        {'k': 'd_h_qk', 'v': d::VARCHAR, 't': 'i'}, {'k': 'd_h_v', 'v': d::VARCHAR, 't': 'i'},
        {'k': 'dropout', 'v': '0.0', 't': 'f'}, {'k': 'causal', 'v': 'False', 't': NULL},
        {'k': 'flash_impl', 'v': 'True', 't': NULL}, {'k': 'prefill_pairs', 'v': pairs::VARCHAR, 't': 'i'},
        {'k': 'dtype_Q', 'v': dt_q, 't': 's'}, {'k': 'dtype_KV', 'v': dt_kv, 't': 's'}],
       pairs * h_q * 2 * (d + d),
       2 * n_q * h_q * d * coalesce(_tl_bpe(dt_q), 2) + pairs * d * coalesce(_tl_bpe(dt_kv), _tl_bpe(dt_q), 2),
       'matrix_' || coalesce(CASE WHEN dt_q <> '' THEN _tl_precision(dt_q) END, 'bf16')
FROM sp
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'B', 'v': '1', 't': 'i'}, {'k': 'N_Q', 'v': n_q::VARCHAR, 't': 'i'},
        {'k': 'H_Q', 'v': h_q::VARCHAR, 't': 'i'}, {'k': 'H_V', 'v': '1', 't': 'i'}, {'k': 'H_K', 'v': '1', 't': 'i'},
        {'k': 'N_KV', 'v': g_sk::VARCHAR, 't': 'i'}, {'k': 'H_KV', 'v': '1', 't': 'i'},
        {'k': 'd_h_qk', 'v': d::VARCHAR, 't': 'i'}, {'k': 'd_h_v', 'v': d::VARCHAR, 't': 'i'},
        {'k': 'dropout', 'v': '0.0', 't': 'f'}, {'k': 'causal', 'v': 'False', 't': NULL},
        {'k': 'flash_impl', 'v': 'True', 't': NULL},
        {'k': 'c_sq', 'v': '0', 't': 'i'}, {'k': 'c_sk', 'v': '0', 't': 'i'}, {'k': 'c_sqsq', 'v': '0', 't': 'i'},
        {'k': 'c_sqsk', 'v': '0', 't': 'i'}, {'k': 'g_sq', 'v': g_sq::VARCHAR, 't': 'i'},
        {'k': 'g_sk', 'v': g_sk::VARCHAR, 't': 'i'}, {'k': 'g_sqsq', 'v': g_sqsq::VARCHAR, 't': 'i'},
        {'k': 'g_sqsk', 'v': g_sqsk::VARCHAR, 't': 'i'}, {'k': 'dtype_Q', 'v': 'c10::bfloat16', 't': 's'},
        {'k': 'dtype_KV', 'v': 'c10::bfloat16', 't': 's'}, {'k': 'sliding_window', 'v': sw::VARCHAR, 't': 'i'}],
       h_q::HUGEINT * (2 * g_sqsk_w * d) + h_q::HUGEINT * (2 * g_sqsk_w * d),
       (g_sq::HUGEINT * h_q * d + g_sq::HUGEINT * h_q * d + g_sq::HUGEINT * d + g_sq::HUGEINT * d) * 2
       + ((g_sk_w - g_sq)::HUGEINT * d + (g_sk_w - g_sq)::HUGEINT * d) * 2,
       'matrix_bf16'
FROM v4;

-- _tl_perf_infer_attention: the instances of the inference report's InferenceAttention_fwd sheet (the merged tree's
-- ops, _tl_infer_perf_events), in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_infer_attention AS SELECT * FROM _tl_perf_attention_of('_tl_infer_perf_events');

-- _tl_attention_unimplemented_of(ev): the inference attention instances of ev (as _tl_perf_attention_of) whose
-- TraceLens model raises NotImplementedError (see _tl_perf_attention_of): a parsed annotation with c_sq = g_sq = 0 (the decode
-- kernels: g_sq = 0), the gated delta net without a parsed annotation or without tokens. TraceLens's unified perf
-- table leaves their ops out (build_df_unified_perf_table), their kernels with them.
--   trace_id, event_id   the instance
CREATE OR REPLACE MACRO _tl_attention_unimplemented_of(ev) AS TABLE
SELECT trace_id, event_id FROM (
    SELECT trace_id, event_id, json_extract(input_dims, CASE WHEN model = 'aiter_paged_attention_ragged' THEN '$[2]'
                                                             ELSE '$[0]' END) AS q,
           json_extract(input_dims, CASE WHEN model = 'aiter_paged_attention_ragged' THEN '$[3]' ELSE '$[1]' END)
               AS kk,
           json_extract(input_dims, '$[4]') AS vv, model = 'aiter_paged_attention_ragged' AS ragged,
           json_extract_string(input_types, '$[*]') AS ty, _perf_step_detailed(annotation) AS cs
    FROM query_table(ev) WHERE model IN ('inference_attention', 'aiter_paged_attention_ragged',
                                         'aiter_fmha_v3_varlen_fwd', 'aiter_mha_batch_prefill', 'mla_tilelang_sparse_fwd',
                                         'mla_decode_fwd', 'pseudo_mla_prefill_fwd'))
WHERE cs.c_sq <> '' AND json_type(q) = 'ARRAY' AND json_array_length(q) = 3
  AND json_type(kk) = 'ARRAY' AND json_array_length(kk) >= CASE WHEN ragged THEN 2 ELSE 3 END
  AND (NOT ragged OR (json_type(vv) = 'ARRAY' AND json_array_length(vv) >= 1))
  AND len(ty) >= CASE WHEN ragged THEN 3 ELSE 1 END
  AND cs.c_sq::BIGINT = 0 AND cs.g_sq::BIGINT = 0
UNION ALL
SELECT trace_id, event_id FROM _tl_pa_decode_gluon_of(ev) WHERE g_sq = 0
UNION ALL
SELECT trace_id, event_id FROM _tl_gdn_of(ev) WHERE n_tok = 0
UNION ALL
SELECT trace_id, event_id FROM query_table(ev)
WHERE model = 'pseudo_v4_paged_decode' AND coalesce(_perf_step_detailed(annotation).c_sq, '') <> ''
  AND _perf_step_detailed(annotation).g_sq::BIGINT = 0
UNION ALL
SELECT trace_id, event_id FROM query_table(ev)
WHERE model = 'gdn_attention_core' AND coalesce(_perf_step_detailed(annotation).c_sq, '') = '';

-- _tl_perf_infer_unimplemented: _tl_attention_unimplemented_of over the inference report's instances.
--   trace_id, event_id   the instance (_tl_infer_perf_events)
CREATE OR REPLACE VIEW _tl_perf_infer_unimplemented AS
SELECT * FROM _tl_attention_unimplemented_of('_tl_infer_perf_events');

-- _tl_perf_attention_sheet(tbl, ev, by_kernels): the rows and columns of an InferenceAttention_fwd sheet from the
-- instances tbl and their events ev, grouped by num_kernels too when by_kernels (see _tl_perf_summary_of).
CREATE OR REPLACE MACRO _tl_perf_attention_sheet(tbl, ev, by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'op_shape') AS "param: op_shape",
       _tl_perf_param(params, 'nelems') AS "param: nelems", _tl_perf_param(params, 'dtype') AS "param: dtype",
       _tl_perf_param(params, 'B') AS "param: B", _tl_perf_param(params, 'N_Q') AS "param: N_Q",
       _tl_perf_param(params, 'H_Q') AS "param: H_Q", _tl_perf_param(params, 'H_V') AS "param: H_V",
       _tl_perf_param(params, 'H_K') AS "param: H_K", _tl_perf_param(params, 'N_KV') AS "param: N_KV",
       _tl_perf_param(params, 'H_KV') AS "param: H_KV", _tl_perf_param(params, 'd_h_qk') AS "param: d_h_qk",
       _tl_perf_param(params, 'd_h_v') AS "param: d_h_v", _tl_perf_param(params, 'dropout') AS "param: dropout",
       _tl_perf_param(params, 'causal') AS "param: causal", _tl_perf_param(params, 'flash_impl') AS "param: flash_impl",
       _tl_perf_param(params, 'c_sq') AS "param: c_sq", _tl_perf_param(params, 'c_sk') AS "param: c_sk",
       _tl_perf_param(params, 'c_sqsq') AS "param: c_sqsq", _tl_perf_param(params, 'c_sqsk') AS "param: c_sqsk",
       _tl_perf_param(params, 'g_sq') AS "param: g_sq", _tl_perf_param(params, 'g_sk') AS "param: g_sk",
       _tl_perf_param(params, 'g_sqsq') AS "param: g_sqsq", _tl_perf_param(params, 'g_sqsk') AS "param: g_sqsk",
       _tl_perf_param(params, 'dtype_Q') AS "param: dtype_Q", _tl_perf_param(params, 'dtype_KV') AS "param: dtype_KV",
       _tl_perf_param(params, 'sliding_window') AS "param: sliding_window",
       _tl_perf_param(params, 'prefill_pairs') AS "param: prefill_pairs",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of(tbl, ev, by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_infer_attention_fwd: TraceLens's InferenceAttention_fwd.csv of its inference report, one row per trace
-- and group of inference attention op instances with the same name, parameters and number of GPU events.
--   trace_id                    the trace
--   name                        the op name
--   param: op_shape, nelems, dtype   sglang::store_cache's parameters (_tl_perf_infer_attention)
--   param: B, N_Q, H_Q, H_V, H_K, N_KV, H_KV, d_h_qk, d_h_v, dropout, causal, flash_impl, c_sq, c_sk, c_sqsq,
--   c_sqsk, g_sq, g_sk, g_sqsq, g_sqsk, dtype_Q, dtype_KV, sliding_window, prefill_pairs   the models'
--                               parameters (_tl_perf_attention_of)
--   num_kernels                 GPU events per instance
--   GFLOPS_first ... UID_first  the statistics of _tl_perf_summary_of
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens-module 20 InferenceAttention_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_attention_fwd AS
SELECT * FROM _tl_perf_attention_sheet('_tl_perf_infer_attention', '_tl_infer_perf_events', true);

-- _tl_perf_attention_events: the instances of the inference attention ops (tl_perf_infer_model_ops) in TraceLens's
-- perf report (generate_perf_report_pytorch: the trace's own cpu_ops, its class map always holding the extension's
-- entries), in _tl_infer_perf_events's form; that report annotates only vllm::unified_attention_with_output (its
-- apply_annotation name_filters): annotation is the first user_annotation (by start) holding such an op, else NULL.
-- Kernels and names as _tl_perf_events (peers/tracelens/perf_ops, _tl_perf_events_of).
-- @materialize report-tracelens
CREATE OR REPLACE VIEW _tl_perf_attention_events AS
WITH ev AS MATERIALIZED (
    SELECT * FROM _tl_perf_events_of('tl_perf_infer_model_ops')
), ann AS (
    SELECT i.trace_id, i.event_id, arg_min(a.name, (a.ts_ns, a.event_id)) AS annotation
    FROM ev i JOIN events o ON o.trace_id = i.trace_id AND o.event_id = i.event_id
    JOIN events a ON a.trace_id = i.trace_id AND a.cat = 'user_annotation'
     AND _us_f64(a.ts_ns) <= _us_f64(o.ts_ns)
     AND _us_f64(o.ts_ns) + _us_f64(o.dur_ns) < _us_f64(a.ts_ns) + _us_f64(a.dur_ns)
    WHERE starts_with(i.name, 'vllm::unified_attention_with_output')
    GROUP BY i.trace_id, i.event_id
)
SELECT ev.*, a.annotation, NULL::BIGINT AS v4_h_q, NULL::BIGINT AS v4_d_h
FROM ev LEFT JOIN ann a ON a.trace_id = ev.trace_id AND a.event_id = ev.event_id;

-- _tl_perf_attention: the instances of the perf report's InferenceAttention_fwd sheet, in _tl_perf_summary's input
-- form (_tl_perf_attention_of over _tl_perf_attention_events).
CREATE OR REPLACE VIEW _tl_perf_attention AS SELECT * FROM _tl_perf_attention_of('_tl_perf_attention_events');

-- tl_perf_attention_fwd: TraceLens's InferenceAttention_fwd.csv of its perf report: the columns of
-- tl_perf_infer_attention_fwd without num_kernels, over the trace's own ops with the perf report's annotations
-- (_tl_perf_attention_events): rows for the models that need no annotation (pa_sparse_prefill_opus_fwd,
-- sglang_store_cache) and for annotated vllm::unified_attention_with_output ops.
-- @output report-tracelens 20 InferenceAttention_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_attention_fwd AS
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_attention_sheet('_tl_perf_attention', '_tl_perf_attention_events', false);

-- _tl_perf_infer_moe: one row per unfused Triton MoE pseudo op TraceLens keeps, in _tl_perf_summary's input form
-- (moe_triton_unfused_up / moe_triton_unfused_down in TraceLens/PerfModel/extensions/moe_perf_model_extensions.py).
-- From the moe_forward's args: num_tokens M = Input Dims[0][0], hidden_dim K = Input Dims[0][1], inter_dim N = K
-- (TraceLens assumes it), num_experts E = Input Dims[1][1], input_dtype = Input type[0]; topk and gated from the
-- pseudo op (_tl_infer_perf_events); weight_dtype 'FP4' when the kernel name contains 'fp4' (any case), 'FP8'
-- when it contains 'fp8' or 'e4m3'. FLOPs: up 2·M·K·N·topk·(2 if gated), down 2·M·N·K·topk. Bytes, with
-- E_active = E·(1 − ((E − topk)/E)^M) experts hit and bpe from _tl_moe_bpe (peers/tracelens/perf_moe; the
-- output in the input's dtype): up M·K·bpe_in + E_active·(2 if gated)·K·N·bpe_w + M·N·topk·bpe_in; down
-- M·N·topk·bpe_in + E_active·N·K·bpe_w + M·K·bpe_in. An unknown dtype drops the instance. Compute Spec
-- 'matrix_' + the precision of weight_dtype.
CREATE OR REPLACE VIEW _tl_perf_infer_moe AS
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract_string(input_types, '$[*]') AS ty, moe_topk AS topk,
           moe_gated AS gated, lower(kernels[1].name) AS kn
    FROM _tl_infer_perf_events
    WHERE sheet = 'MoE_unfused_fwd' AND model IN ('moe_triton_unfused_up', 'moe_triton_unfused_down')
      AND len(kernels) > 0
), a AS (
    SELECT *, (d ->> '$[0][0]')::BIGINT AS m, (d ->> '$[0][1]')::BIGINT AS k, (d ->> '$[1][1]')::BIGINT AS ne,
           ty[1] AS dt_in,
           CASE WHEN contains(kn, 'mxfp4') OR contains(kn, 'fp4') THEN 'FP4'
                WHEN contains(kn, 'fp8') OR contains(kn, 'e4m3') THEN 'FP8' END AS dt_w
    FROM e WHERE json_array_length(d) >= 2 AND len(ty) >= 2
), ok AS (
    SELECT *, _tl_moe_bpe(dt_in) AS b_in, _tl_moe_bpe(dt_w) AS b_w,
           ne * (1 - pow((ne - topk)::DOUBLE / ne, m)) AS e_active, CASE WHEN gated THEN 2 ELSE 1 END AS g
    FROM a WHERE m IS NOT NULL AND k IS NOT NULL AND ne IS NOT NULL AND _tl_moe_bpe(dt_in) IS NOT NULL
             AND _tl_moe_bpe(dt_w) IS NOT NULL
)
SELECT trace_id, event_id,
       [{'k': 'num_tokens', 'v': m::VARCHAR, 't': 'i'}, {'k': 'hidden_dim', 'v': k::VARCHAR, 't': 'i'},
        {'k': 'inter_dim', 'v': k::VARCHAR, 't': 'i'}, {'k': 'num_experts', 'v': ne::VARCHAR, 't': 'i'},
        {'k': 'topk', 'v': topk::VARCHAR, 't': 'i'}, {'k': 'gated', 'v': _tl_py_bool(gated), 't': NULL},
        {'k': 'input_dtype', 'v': dt_in, 't': 's'}, {'k': 'weight_dtype', 'v': dt_w, 't': 's'}] AS params,
       CASE model WHEN 'moe_triton_unfused_up' THEN 2 * m::HUGEINT * k * k * topk * g
                  ELSE 2 * m::HUGEINT * k * k * topk END AS flops,
       CASE model WHEN 'moe_triton_unfused_up'
                  THEN (m * k * b_in) + e_active * g * k * k * b_w + m * k * topk * b_in
                  ELSE (m * k * topk * b_in) + e_active * k * k * b_w + m * k * b_in END AS bytes,
       'matrix_' || _tl_precision(dt_w) AS compute_spec
FROM ok;

-- _tl_perf_infer_moe_gptq: one row per GPTQ/AWQ MoE pseudo op TraceLens keeps, in _tl_perf_summary's input form
-- (moe_gptq_awq_up / moe_gptq_awq_down in TraceLens/PerfModel/extensions/moe_perf_model_extensions.py), from the
-- vllm::outplace_fused_experts's args (hidden_states, w1, w2, topk_weights, topk_ids, ...; d = Input Dims):
-- num_tokens M = d[0][0], hidden_dim K = d[0][1]; up: num_experts E = d[1][0], inter_dim N = d[1][1] // 2 when
-- gated (else d[1][1]); down: E = d[2][0], N = d[2][2]·2 (INT4 packed two to a byte); topk and gated from the
-- pseudo op; input_dtype = Input type[0] (the pseudo op copies the op's args: without types it raises). FLOPs
-- and bytes of UnfusedMoE_Up / _Down (peers/tracelens/perf_moe) with the weights at 0.5 byte an element and the
-- output at the input's size (bpe of _tl_moe_bpe, 2 when unknown). Compute Spec 'matrix_' + the precision of
-- input_dtype.
CREATE OR REPLACE VIEW _tl_perf_infer_moe_gptq AS
WITH e AS (
    SELECT trace_id, event_id, model = 'moe_gptq_awq_up' AS up, moe_topk AS topk, moe_gated AS gated,
           _tl_shape(json_extract(input_dims, '$[0]')) AS s0, _tl_shape(json_extract(input_dims, '$[1]')) AS s1,
           _tl_shape(json_extract(input_dims, '$[2]')) AS s2,
           input_types ->> '$[0]' AS dt_in, coalesce(json_array_length(input_types) >= 1, false) AS has_type
    FROM _tl_infer_perf_events WHERE model IN ('moe_gptq_awq_up', 'moe_gptq_awq_down')
), a AS (
    SELECT trace_id, event_id, up, topk, gated, dt_in, s0[1] AS m, s0[2] AS k,
           CASE WHEN up THEN s1[1] ELSE s2[1] END AS ne,
           CASE WHEN NOT up THEN s2[3] * 2 WHEN gated THEN s1[2] // 2 ELSE s1[2] END AS n,
           coalesce(_tl_moe_bpe(dt_in), 2) AS b_in
    FROM e
    WHERE has_type AND len(s0) >= 2 AND (CASE WHEN up THEN len(s1) >= 2 ELSE len(s2) >= 3 END)
), b AS (
    SELECT *, _tl_moe_e_active(ne, topk, m) AS e_active FROM a WHERE ne <> 0
)
SELECT trace_id, event_id,
       list_concat([{'k': 'num_tokens', 'v': m::VARCHAR, 't': 'i'}, {'k': 'hidden_dim', 'v': k::VARCHAR, 't': 'i'},
                    {'k': 'inter_dim', 'v': n::VARCHAR, 't': 'i'}, {'k': 'num_experts', 'v': ne::VARCHAR, 't': 'i'},
                    {'k': 'topk', 'v': topk::VARCHAR, 't': 'i'}],
                   CASE WHEN up THEN [{'k': 'gated', 'v': _tl_py_bool(gated), 't': NULL}] ELSE [] END,
                   [{'k': 'input_dtype', 'v': dt_in, 't': 's'}]) AS params,
       CASE WHEN up THEN 2 * m::HUGEINT * k * n * topk * CASE WHEN gated THEN 2 ELSE 1 END
            ELSE 2 * m::HUGEINT * n * k * topk END AS flops,
       CASE WHEN up THEN (m * k)::DOUBLE * b_in + e_active * CASE WHEN gated THEN 2 ELSE 1 END * k * n * 0.5
                         + (m * n * topk)::DOUBLE * b_in
            ELSE (m * n * topk)::DOUBLE * b_in + e_active * n * k * 0.5 + (m * k)::DOUBLE * b_in END AS bytes,
       'matrix_' || _tl_precision(dt_in) AS compute_spec
FROM b;

-- _tl_infer_moe_fused_args: one row per fused-MoE pseudo op of the inference report's tree whose args TraceLens
-- reads in the fused aiter MoE layout (models moe_aiter_fused_1stage, moe_flydsl_stage1, moe_flydsl_stage2; d = Input
-- Dims, ty = Input type): m = num_tokens d[0][0]; ne = num_experts d[1][0]; k = hidden_dim d[2][1]; n = inter_dim
-- d[2][2] · (K // d[1][-1]) (packed weights); topk = d[3][1]; gated: d[1][1] = 2N; dt_in, dt_w = ty[0], ty[1];
-- b_in, b_w their bytes per element (_tl_moe_bpe: 2 for an unknown input type, 1 for an unknown weight type);
-- e_active the experts the tokens reach (_tl_moe_e_active); params the eight parameters TraceLens prints, in
-- _tl_perf_summary's form. Other shapes have no row.
CREATE OR REPLACE VIEW _tl_infer_moe_fused_args AS
WITH e AS (
    SELECT trace_id, event_id, model, json_extract_string(input_types, '$[*]') AS ty,
           _tl_shape(json_extract(input_dims, '$[0]')) AS s0, _tl_shape(json_extract(input_dims, '$[1]')) AS s1,
           _tl_shape(json_extract(input_dims, '$[2]')) AS s2, _tl_shape(json_extract(input_dims, '$[3]')) AS s3
    FROM _tl_infer_perf_events WHERE model IN ('moe_aiter_fused_1stage', 'moe_flydsl_stage1', 'moe_flydsl_stage2')
), a AS (
    SELECT trace_id, event_id, model, s0[1] AS m, s2[2] AS k, s2[3] * (s2[2] // s1[-1]) AS n, s1[1] AS ne,
           s3[2] AS topk, s1, ty[1] AS dt_in, ty[2] AS dt_w
    FROM e
    WHERE len(s0) >= 1 AND len(s1) = 3 AND len(s2) = 3 AND len(s3) >= 2 AND s1[-1] <> 0 AND s1[1] <> 0
      AND len(ty) >= 2
), b AS (
    SELECT *, s1[2] = 2 * n AS gated, coalesce(_tl_moe_bpe(dt_in), 2) AS b_in, coalesce(_tl_moe_bpe(dt_w), 1) AS b_w,
           _tl_moe_e_active(ne, topk, m) AS e_active
    FROM a
)
SELECT *,
       [{'k': 'num_tokens', 'v': m::VARCHAR, 't': 'i'}, {'k': 'hidden_dim', 'v': k::VARCHAR, 't': 'i'},
        {'k': 'inter_dim', 'v': n::VARCHAR, 't': 'i'}, {'k': 'num_experts', 'v': ne::VARCHAR, 't': 'i'},
        {'k': 'topk', 'v': topk::VARCHAR, 't': 'i'}, {'k': 'gated', 'v': _tl_py_bool(gated), 't': NULL},
        {'k': 'input_dtype', 'v': dt_in, 't': 's'}, {'k': 'weight_dtype', 'v': dt_w, 't': 's'}] AS params
FROM b;

-- _tl_perf_infer_moe_flydsl: one row per flydsl MoE pseudo op (pseudo_op::moe_flydsl_stage1 / _stage2) TraceLens
-- keeps, in _tl_perf_summary's input form (moe_flydsl_stage1 / moe_flydsl_stage2, _flydsl_extract_param_details in
-- TraceLens/PerfModel/extensions/moe_perf_model_extensions.py), from the aiter::fused_moe_'s args (hidden_states,
-- w1, w2, topk_weights, ...; d = Input Dims, ty = Input type), the layout of the fused aiter MoE pseudo op:
-- num_tokens M = d[0][0]; (num_experts E, ·, ·) = d[1] (w1, exactly three dims); (·, hidden_dim K, n) = d[2]
-- (w2, exactly three dims); inter_dim N = n · (K // d[1][-1]) (FP4/INT4 packing); topk = d[3][1]; gated = d[1][1]
-- = 2N; input_dtype ty[0], weight_dtype ty[1] (both stages take all eight parameters). FLOPs and bytes of
-- UnfusedMoE_Up (stage 1) and UnfusedMoE_Down (stage 2) of peers/tracelens/perf_moe, the output at the input's
-- size (_tl_moe_bpe: an unknown input type counts 2 bytes, an unknown weight type 1). Compute Spec 'matrix_' + the
-- precision of weight_dtype (an MXFP4 stage runs on the FP4 matrix units). Other shapes drop the instance.
CREATE OR REPLACE VIEW _tl_perf_infer_moe_flydsl AS
WITH b AS (
    SELECT *, model = 'moe_flydsl_stage1' AS up FROM _tl_infer_moe_fused_args
    WHERE model IN ('moe_flydsl_stage1', 'moe_flydsl_stage2')
)
SELECT trace_id, event_id,
       params,
       CASE WHEN up THEN 2 * m::HUGEINT * k * n * topk * CASE WHEN gated THEN 2 ELSE 1 END
            ELSE 2 * m::HUGEINT * n * k * topk END AS flops,
       CASE WHEN up THEN (m * k)::DOUBLE * b_in + e_active * CASE WHEN gated THEN 2 ELSE 1 END * k * n * b_w
                         + (m * n * topk)::DOUBLE * b_in
            ELSE (m * n * topk)::DOUBLE * b_in + e_active * n * k * b_w + (m * k)::DOUBLE * b_in END AS bytes,
       'matrix_' || _tl_precision(dt_w) AS compute_spec
FROM b;

-- _tl_perf_infer_moe_ops: one row per MoE_unfused_fwd or MoE_aux_fwd op instance of the inference report's tree
-- TraceLens keeps, in _tl_perf_summary's input form: the models of peers/tracelens/perf_moe over the merged tree.
CREATE OR REPLACE VIEW _tl_perf_infer_moe_ops AS SELECT * FROM _tl_perf_moe_of('_tl_infer_perf_events');

-- _tl_perf_infer_moe_all: the instances of the inference report's MoE sheets: the pseudo ops (_tl_perf_infer_moe,
-- _tl_perf_infer_moe_gptq) and the ops (_tl_perf_infer_moe_ops).
CREATE OR REPLACE VIEW _tl_perf_infer_moe_all AS
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_moe
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_moe_gptq
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_moe_flydsl
UNION ALL SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_infer_moe_ops;

-- tl_perf_infer_moe_unfused_fwd: TraceLens's MoE_unfused_fwd.csv of its inference report, one row per trace and
-- group of unfused MoE pseudo ops and MoE GEMM ops with the same name, parameters and number of GPU events.
--   trace_id                    the trace
--   name                        the op name (pseudo_op::moe_triton_unfused_up / _down,
--                               pseudo_op::moe_gptq_awq_up / _down, or an op of perf_moe)
--   param: num_tokens, hidden_dim, inter_dim, num_experts, topk, gated, input_dtype, weight_dtype   the pseudo
--                               ops' parameters (_tl_perf_infer_moe), and the ops' (peers/tracelens/perf_moe)
--   param: output_dtype, m_work, N, K   the other parameters of the ops (peers/tracelens/perf_moe)
--   num_kernels                 GPU events per instance (1 for a pseudo op)
--   GFLOPS_first ... UID_first  the statistics of _tl_perf_summary_of
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens-module 21 MoE_unfused_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_moe_unfused_fwd AS
SELECT * EXCLUDE ("param: operands", "param: shape_in1", "param: shape_in2", "param: dtype_in1_in2_out",
                  "param: stride_input1", "param: stride_input2", "param: stride_output")
FROM _tl_perf_moe_sheet('_tl_perf_infer_moe_all', '_tl_infer_perf_events', 'MoE_unfused_fwd', true);

-- tl_perf_infer_moe_aux_fwd: TraceLens's MoE_aux_fwd.csv of its inference report, one row per trace and group of
-- MoE routing / sorting op instances of the merged tree with the same name, parameters and number of GPU events;
-- the columns of tl_perf_moe_aux_fwd (peers/tracelens/perf_moe), num_kernels (GPU events per instance) after the
-- params.
-- @output report-tracelens-module 28 MoE_aux_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_moe_aux_fwd AS
SELECT * FROM _tl_perf_moe_aux_sheet('_tl_perf_infer_moe_ops', '_tl_infer_perf_events', true);

-- _tl_perf_infer_moe_fused: one row per fused aiter MoE pseudo op TraceLens keeps and per aiter fused MoE op called
-- directly (aiter::fmoe_fp8_blockscale_g1u1, aiter::fmoe_g1u1: peers/tracelens/perf_moe), in _tl_perf_summary's
-- input form. The pseudo op
-- (moe_aiter_fused_1stage, FusedMoE in TraceLens/PerfModel/extensions/moe_perf_model_extensions.py), from the
-- vllm::rocm_aiter_fused_moe's args (hidden_states, w1, w2, topk_weights, ...; d = Input Dims, ty = Input type):
-- num_tokens M = d[0][0]; (num_experts E, ·, ·) = d[1] (w1); (·, hidden_dim K, n) = d[2] (w2); inter_dim N =
-- n · (K // d[1][-1]) (w1's K may be packed); topk = d[3][1]; gated = d[1][1] = 2N; input_dtype ty[0],
-- weight_dtype ty[1]. FLOPs 2·M·K·N·topk·(2 if gated) + 2·M·K·N·topk + M·K·(2·topk − 1) (up, down, the weighted
-- sum); bytes M·K·bpe_in + E_active·N·K·bpe_w·(2 if gated) + E_active·N·K·bpe_w + M·K·bpe_in, E_active =
-- E·(1 − ((E − topk)/E)^M), bpe from _tl_moe_bpe (2 for an unknown input type, 1 for an unknown weight type).
-- Compute Spec 'matrix_' + the precision of input_dtype. Other shapes drop the instance.
CREATE OR REPLACE VIEW _tl_perf_infer_moe_fused AS
WITH b AS (SELECT * FROM _tl_infer_moe_fused_args WHERE model = 'moe_aiter_fused_1stage')
SELECT trace_id, event_id,
       params,
       2 * m::HUGEINT * k * n * topk * CASE WHEN gated THEN 2 ELSE 1 END + 2 * m::HUGEINT * k * n * topk
           + m::HUGEINT * k * (2 * topk - 1) AS flops,
       (m * k)::DOUBLE * b_in + e_active * n * k * b_w * CASE WHEN gated THEN 2 ELSE 1 END + e_active * n * k * b_w
           + (m * k)::DOUBLE * b_in AS bytes,
       'matrix_' || _tl_precision(dt_in) AS compute_spec
FROM b
UNION ALL   -- aiter's fused MoE ops called directly (peers/tracelens/perf_moe, moe_aiter_fused_blockscale)
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_moe_fused_of('_tl_infer_perf_events');

-- tl_perf_infer_moe_fused_fwd: TraceLens's MoE_fused_fwd.csv of its inference report, one row per trace and group
-- of fused aiter MoE pseudo ops with the same parameters and number of GPU events.
--   trace_id                    the trace
--   name                        the pseudo op name (pseudo_op::moe_aiter_fused_1stage) or the aiter op's
--   param: num_tokens, hidden_dim, inter_dim, num_experts, topk, gated, input_dtype, weight_dtype, output_dtype
--                               the model's parameters (_tl_perf_infer_moe_fused; output_dtype: the aiter ops')
--   num_kernels                 GPU events per instance (1)
--   GFLOPS_first ... UID_first  the statistics of _tl_perf_summary_of
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens-module 40 MoE_fused_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_moe_fused_fwd AS
SELECT trace_id, name, "param: num_tokens", "param: hidden_dim", "param: inter_dim", "param: num_experts",
       "param: topk", "param: gated", "param: input_dtype", "param: weight_dtype", "param: output_dtype",
       * EXCLUDE (trace_id, name, "param: num_tokens", "param: hidden_dim", "param: inter_dim", "param: num_experts",
                  "param: topk", "param: gated", "param: input_dtype", "param: weight_dtype", "param: output_dtype",
                  "param: m_work", "param: N", "param: K", "param: operands", "param: shape_in1", "param: shape_in2",
                  "param: dtype_in1_in2_out", "param: stride_input1", "param: stride_input2", "param: stride_output")
FROM _tl_perf_moe_sheet('_tl_perf_infer_moe_fused', '_tl_infer_perf_events', 'MoE_fused_fwd', true);

-- _tl_perf_infer_ssm, _tl_perf_infer_fused_rope, _tl_perf_infer_mhc: the instances of the inference report's
-- SSM_fwd, FusedRoPE_fwd and mHC_fwd sheets (the models of peers/tracelens/perf_ssm and perf_fused_rope_mhc over
-- the merged tree's ops), in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_infer_ssm AS
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_ssm_of('_tl_infer_perf_events');
CREATE OR REPLACE VIEW _tl_perf_infer_fused_rope AS SELECT * FROM _tl_perf_fused_rope_of('_tl_infer_perf_events');
CREATE OR REPLACE VIEW _tl_perf_infer_mhc AS SELECT * FROM _tl_perf_mhc_of('_tl_infer_perf_events');

-- tl_perf_infer_ssm_fwd: TraceLens's SSM_fwd.csv of its inference report, grouped by num_kernels too (its
-- generate_perf_report_pytorch writes the forward table of every category but GEMM and the elementwise ones with
-- group_by_num_kernels); the columns of tl_perf_ssm_fwd (peers/tracelens/perf_ssm), num_kernels (GPU events per
-- instance) after the params.
-- @output report-tracelens-module 33 SSM_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_ssm_fwd AS
SELECT * FROM _tl_perf_ssm_sheet('_tl_perf_infer_ssm', '_tl_infer_perf_events', true) ORDER BY trace_id, rank;

-- tl_perf_infer_ssm_bwd: no rows: TraceLens's inference report writes no backward sheet (its backward table is built
-- from an emptied event list); the columns of tl_perf_ssm_bwd.
-- @output report-tracelens-module 34 SSM_bwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_ssm_bwd AS SELECT * FROM tl_perf_ssm_bwd WHERE false;

-- tl_perf_infer_fused_rope_fwd: TraceLens's FusedRoPE_fwd.csv of its inference report: the columns of
-- tl_perf_fused_rope_fwd (peers/tracelens/perf_fused_rope_mhc), num_kernels (GPU events per instance) after the
-- params.
-- @output report-tracelens-module 35 FusedRoPE_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_fused_rope_fwd AS
SELECT * FROM _tl_perf_fused_rope_sheet('_tl_perf_infer_fused_rope', '_tl_infer_perf_events', true);

-- tl_perf_infer_mhc_fwd: TraceLens's mHC_fwd.csv of its inference report: the columns of tl_perf_mhc_fwd
-- (peers/tracelens/perf_fused_rope_mhc), num_kernels (GPU events per instance) after the params.
-- @output report-tracelens-module 36 mHC_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_mhc_fwd AS
SELECT * FROM _tl_perf_mhc_sheet('_tl_perf_infer_mhc', '_tl_infer_perf_events', true);

-- tl_perf_infer_sdpa_fwd: TraceLens's SDPA_fwd.csv of its inference report: the rows of tl_perf_sdpa_fwd
-- (peers/tracelens/perf_sdpa) grouped by num_kernels too (GPU events per instance), that column after the params
-- (its generate_perf_report_pytorch summarises every forward table with group_by_num_kernels); the instances are
-- the trace's own ops, without flash_attn's varlen backward, which that report takes out and does not write.
-- @output report-tracelens-module 10 SDPA_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_sdpa_fwd AS
SELECT * FROM _tl_perf_sdpa_sheet('_tl_perf_sdpa', '_tl_perf_events', by_kernels := true)
WHERE name NOT IN (SELECT name FROM _tl_perf_moved_bwd_ops);

-- tl_perf_infer_normalization_fwd: TraceLens's Normalization_fwd.csv of its inference report (which names every
-- sheet but GEMM and the elementwise ones <category>_fwd): the rows of tl_perf_normalization
-- (peers/tracelens/perf_norm), forward and backward ops, grouped by num_kernels too (GPU events per instance),
-- that column after the params.
-- @output report-tracelens-module 15 Normalization_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_normalization_fwd AS SELECT * FROM _tl_perf_normalization_sheet(true);

-- tl_perf_infer_reduce_bwd: no rows: TraceLens's inference report writes no backward sheet (as
-- tl_perf_infer_ssm_bwd); the columns of tl_perf_reduce_bwd.
-- @output report-tracelens-module 14 Reduce_bwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_reduce_bwd AS SELECT * FROM tl_perf_reduce_bwd WHERE false;

-- tl_perf_infer_sdpa_bwd: no rows (no backward sheet in the inference report); the columns of tl_perf_sdpa_bwd.
-- @output report-tracelens-module 17 SDPA_bwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_sdpa_bwd AS SELECT * FROM tl_perf_sdpa_bwd WHERE false;

-- tl_perf_infer_conv_bwd: no rows (no backward sheet in the inference report); the columns of tl_perf_conv_bwd.
-- @output report-tracelens-module 18 CONV_bwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_conv_bwd AS SELECT * FROM tl_perf_conv_bwd WHERE false;

-- tl_perf_infer_binary_elementwise: TraceLens's BinaryElementwise.csv of its inference report, which summarises every forward
-- table with group_by_num_kernels: the rows of tl_perf_binary_elementwise (peers/tracelens/perf_elementwise) grouped by num_kernels
-- too (GPU events per instance), that column after the params.
-- @output report-tracelens-module 12 BinaryElementwise EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_binary_elementwise AS SELECT * FROM _tl_perf_binary_sheet(true);

-- tl_perf_infer_reduce_fwd: TraceLens's Reduce_fwd.csv of its inference report, which summarises every forward
-- table with group_by_num_kernels: the rows of tl_perf_reduce_fwd (peers/tracelens/perf_reduce) grouped by num_kernels
-- too (GPU events per instance), that column after the params.
-- @output report-tracelens-module 13 Reduce_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_reduce_fwd AS SELECT * FROM _tl_perf_reduce_sheet(true);

-- tl_perf_infer_rope_fwd: TraceLens's RoPE_fwd.csv of its inference report, which summarises every forward
-- table with group_by_num_kernels: the rows of tl_perf_rope_fwd (peers/tracelens/perf_rope) grouped by num_kernels
-- too (GPU events per instance), that column after the params.
-- @output report-tracelens-module 22 RoPE_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_rope_fwd AS SELECT * FROM _tl_perf_rope_sheet(true);

-- tl_perf_infer_group_quant_fwd: TraceLens's GroupQuant_fwd.csv of its inference report, which summarises every forward
-- table with group_by_num_kernels: the rows of tl_perf_group_quant_fwd (peers/tracelens/perf_group_quant) grouped by num_kernels
-- too (GPU events per instance), that column after the params.
-- @output report-tracelens-module 23 GroupQuant_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_group_quant_fwd AS SELECT * FROM _tl_perf_group_quant_sheet(true);

-- tl_perf_infer_grouped_gemm_fwd: TraceLens's GroupedGEMM_fwd.csv of its inference report, which summarises every forward
-- table with group_by_num_kernels: the rows of tl_perf_grouped_gemm_fwd (peers/tracelens/perf_grouped_gemm) grouped by num_kernels
-- too (GPU events per instance), that column after the params.
-- @output report-tracelens-module 24 GroupedGEMM_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_grouped_gemm_fwd AS SELECT * FROM _tl_perf_grouped_gemm_sheet(true);

-- tl_perf_infer_moe_comm_fwd: TraceLens's MoE_comm_fwd.csv of its inference report, which summarises every forward
-- table with group_by_num_kernels: the rows of tl_perf_moe_comm_fwd (peers/tracelens/perf_misc) grouped by num_kernels
-- too (GPU events per instance), that column after the params.
-- @output report-tracelens-module 25 MoE_comm_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_moe_comm_fwd AS SELECT * FROM _tl_perf_moe_comm_sheet(true);

-- tl_perf_infer_cross_entropy_fwd: TraceLens's CrossEntropy_fwd.csv of its inference report, which summarises every forward
-- table with group_by_num_kernels: the rows of tl_perf_cross_entropy_fwd (peers/tracelens/perf_misc) grouped by num_kernels
-- too (GPU events per instance), that column after the params.
-- @output report-tracelens-module 26 CrossEntropy_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_cross_entropy_fwd AS SELECT * FROM _tl_perf_cross_entropy_sheet(true);

-- tl_perf_infer_custom_collective_fwd: TraceLens's CustomCollective_fwd.csv of its inference report, which summarises every forward
-- table with group_by_num_kernels: the rows of tl_perf_custom_collective_fwd (peers/tracelens/perf_custom_collective) grouped by num_kernels
-- too (GPU events per instance), that column after the params.
-- @output report-tracelens-module 27 CustomCollective_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_custom_collective_fwd AS SELECT * FROM _tl_perf_custom_collective_sheet(true);

-- tl_perf_infer_conv_fwd: TraceLens's CONV_fwd.csv of its inference report: the convolution summary of
-- peers/tracelens/perf_conv grouped by num_kernels too (GPU events per instance), that column after the params;
-- that report takes only aten::convolution_backward (and flash_attn's varlen backward) out of it, so the fused
-- backward ops (ConvBias_Backward, ConvBiasReLU_Backward) stay in this sheet.
-- @output report-tracelens-module 16 CONV_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_conv_fwd AS
SELECT * FROM _tl_perf_conv_rows(true) WHERE name <> 'aten::convolution_backward' ORDER BY trace_id, rank;

-- tl_perf_infer_elementwise_fwd: TraceLens's elementwise_fwd.csv of its inference report (tl_perf_elementwise_fwd,
-- peers/tracelens/perf_misc, grouped by num_kernels too).
-- @output report-tracelens-module 41 elementwise_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_infer_elementwise_fwd AS SELECT * FROM _tl_perf_mixed_sample_sheet(true);
