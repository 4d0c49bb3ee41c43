-- peers/tracelens/perf_bwd — the instances of TraceLens's (0.1.0) backward perf sheets (Reduce_bwd.csv,
-- SDPA_bwd.csv, CONV_bwd.csv, SSM_bwd.csv): forward ops measured by the GPU time of the backward autograd nodes
-- linked to them.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from its source; the
-- code is ours:
--   link       TraceLens/Trace2Tree/trace_to_tree.py (link_all_fwd_bwd_events): per 'Sequence number', the
--              first event in file order named `autograd::engine::evaluate_function: ...` is the backward
--              node; its forward op is, among the other events with that number not on the node's pid and
--              tid, the one with the latest start (the first in file order on a tie). Each link is one
--              forward op to one backward node.
--   kernels    TraceLens/TreePerf/tree_perf.py (compute_perf_metrics with bwd=True): the backward nodes
--              linked to the op and to every op below it in the call tree (get_subtree_bwd_events); Kernel
--              Time (µs) = busy time of the GPU events in their subtrees, kernel_details those events by
--              start.
--   instances  build_df_perf_metrics(bwd=True) in the same file keeps only the ops of the sheet's family
--              that are themselves the forward end of a link (an op whose backward nodes hang only below
--              it is dropped); TraceLens/Reporting/generate_perf_report_pytorch.py writes them as
--              <family>_bwd for the families with separate forward and backward sheets (every family but
--              GEMM, UnaryElementwise, BinaryElementwise and Normalization), and drops the convolution
--              forward ops (aten::convolution ...) from CONV_bwd.
--
-- @requires lib/intervals peers/float_us peers/tracelens/links peers/tracelens/perf_ops tree/rollups

-- _tl_fwd_bwd_links: TraceLens's forward to backward links, one row per backward autograd node.
--   trace_id, fwd_event_id   the forward op (any event with the sequence number)
--   bwd_event_id             the `autograd::engine::evaluate_function: ...` event
CREATE OR REPLACE VIEW _tl_fwd_bwd_links AS
WITH sq AS MATERIALIZED (
    SELECT trace_id, event_id, name, pid, tid, ts_ns, sequence_number FROM events WHERE sequence_number IS NOT NULL
), node AS (
    SELECT trace_id, sequence_number, event_id, pid, tid FROM sq
    WHERE starts_with(name, 'autograd::engine::evaluate_function:')
    QUALIFY row_number() OVER (PARTITION BY trace_id, sequence_number ORDER BY event_id) = 1
)
SELECT n.trace_id, f.event_id AS fwd_event_id, n.event_id AS bwd_event_id
FROM node n JOIN sq f ON f.trace_id = n.trace_id AND f.sequence_number = n.sequence_number
WHERE NOT (f.pid IS NOT DISTINCT FROM n.pid AND f.tid IS NOT DISTINCT FROM n.tid)
QUALIFY row_number() OVER (PARTITION BY n.trace_id, n.event_id ORDER BY f.ts_ns DESC, f.event_id) = 1;

-- _tl_perf_bwd_events: one row per instance of a backward sheet, in _tl_perf_events's form (same columns),
-- sheet being the backward sheet (Reduce_bwd, SDPA_bwd, CONV_bwd, SSM_bwd) and kernel_time_us, kernels those of
-- the backward nodes linked to the op and to the ops below it (see the top of this file).
-- @materialize report-tracelens
CREATE OR REPLACE VIEW _tl_perf_bwd_events AS
WITH RECURSIVE ev AS MATERIALIZED (
    SELECT * FROM _tl_perf_events e
    WHERE sheet IN ('Reduce_fwd', 'SDPA_fwd', 'CONV_fwd', 'SSM_fwd')
          AND name NOT IN ('aten::convolution', 'aten::miopen_convolution', 'aten::cudnn_convolution', 'ConvBias_',
                           'ConvBiasReLU_')
          AND EXISTS (SELECT 1 FROM _tl_fwd_bwd_links l WHERE l.trace_id = e.trace_id AND l.fwd_event_id = e.event_id)
), ctx AS MATERIALIZED (
    SELECT trace_id, event_id, op_event_id FROM cpu_event_context WHERE anchor_kind = 'op'
), up(trace_id, op_event_id, bwd_event_id) AS (   -- each link's forward op and the ops above it
    SELECT trace_id, fwd_event_id, bwd_event_id FROM _tl_fwd_bwd_links
    UNION ALL
    SELECT u.trace_id, c.op_event_id, u.bwd_event_id
    FROM up u JOIN ctx c ON c.trace_id = u.trace_id AND c.event_id = u.op_event_id
    WHERE c.op_event_id IS NOT NULL
), nodes AS (
    SELECT DISTINCT u.trace_id, u.op_event_id AS event_id, u.bwd_event_id
    FROM up u SEMI JOIN ev ON ev.trace_id = u.trace_id AND ev.event_id = u.op_event_id
), k AS MATERIALIZED (
    SELECT n.trace_id, n.event_id AS grp, 'k' AS set_name, g.event_id AS gpu_event_id, g.name AS kernel, g.stream,
           _us_f64(g.ts_ns) AS s, _us_f64(g.ts_ns) + _us_f64(g.dur_ns) AS e, _us_f64(g.dur_ns) AS dur_us
    FROM nodes n
    JOIN _tree_op_gpu_pairs p ON p.trace_id = n.trace_id AND p.op_event_id = n.bwd_event_id
    JOIN tl_gpu_event_ops g ON g.trace_id = p.trace_id AND g.event_id = p.gpu_event_id
    WHERE g.tl_linked
), busy AS (
    SELECT u.trace_id, u.grp AS event_id, u.union_len AS kernel_time_us, kl.kernels
    FROM _interval_union('k') u
    JOIN (SELECT trace_id, grp, list({'name': kernel, 'stream': stream, 'dur_us': dur_us} ORDER BY s, gpu_event_id)
                     AS kernels
          FROM k GROUP BY ALL) kl ON kl.trace_id = u.trace_id AND kl.grp = u.grp
)
SELECT ev.* REPLACE (replace(ev.sheet, '_fwd', '_bwd') AS sheet, coalesce(b.kernel_time_us, 0.0) AS kernel_time_us,
                     coalesce(b.kernels, []) AS kernels)
FROM ev LEFT JOIN busy b ON b.trace_id = ev.trace_id AND b.event_id = ev.event_id;
