-- peers/tracelens/perf_ssm — TraceLens (0.1.0) perf models of the state-space-model ops (DaoAILab's causal
-- conv1d, Mamba-2's fused split-conv1d-scan) and their sheets SSM_fwd.csv and SSM_bwd.csv.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (classes CausalConv1d, causal_conv1d_fwd, MambaSSD, mamba_ssd_fwd) and
-- TraceLens/Reporting/generate_perf_report_pytorch.py; the code is ours. Both classes have the category SSM_fwd,
-- so TraceLens writes SSM_fwd.csv and SSM_bwd.csv. Positions are 0-based indexes into the args.
--   causal_conv1d_fwd (DaoAILab::_causal_conv1d_fwd_cpp; args x, weight, bias, ...)   x = Input Dims[0] =
--       (batch, channels, seq_len, ...), weight = [1] = (channels, kernel_size, ...); has_bias = Input Dims[2]
--       is a non-empty list. FLOPs 2·batch·channels·seq_len·kernel_size; bytes x read and the output written
--       (2·batch·channels·seq_len·bpe) + weight (channels·kernel_size·bpe) + bias (channels·bpe, with one).
--   mamba_ssd_fwd (MambaSplitConv1dScanCombinedFn; args zxbcdt, conv1d_weight, conv1d_bias, dt_bias, A, D,
--       chunk_size, ..., headdim [15], ngroups [16])   B, T, combined_dim = Input Dims[0][0..2]; conv_channels,
--       d_conv = Input Dims[1][0..1]; H = Input Dims[3][0]; C = int of Concrete Inputs[6] (128 when absent or
--       empty), P = [15] (64), G = [16] (1); d_inner = H·P; N = (combined_dim − 2·d_inner − H) / (2·G), the
--       instance dropped unless that numerator is positive and divisible. FLOPs 2·B·conv_channels·T·d_conv +
--       2·B·G·T·C·N + 2·B·H·T·C·P + 2·(2·B·H·T·N·P); bytes B·T·combined_dim·bpe + conv_channels·d_conv·bpe +
--       conv_channels·bpe + H·(bpe_dt_bias + bpe_A + bpe_D) + B·T·d_inner·bpe, bpe_dt_bias / bpe_A / bpe_D of
--       Input type[3] / [4] / [5] (when present and known; else 4, 4 and bpe).
--   both   bpe of Input type[0] (2 when empty or unknown); Compute Spec 'matrix_' + the precision of Input
--       type[0] (empty when unknown; an instance without any Input type is dropped: TraceLens fails reading it);
--       a missing argument or dimension drops the instance.
-- SSM_bwd.csv: the forward instances that are the forward end of a backward autograd node, with that node's GPU
-- time (peers/tracelens/perf_bwd); only mamba_ssd_fwd has backward formulas (the forward ones: FLOPs and bytes
-- unchanged), the causal conv1d's instances fail there and are dropped. TraceLens then appends to the sheet the
-- (here empty) forward rows of its moved-op list (generate_perf_report_pytorch's pd.concat): the SSM_fwd columns
-- the backward rows lack follow the others, empty.
--
-- @requires lib/pytext peers/tracelens/perf_ops peers/tracelens/perf_bwd

-- _tl_perf_ssm_of(ev): one row per SSM instance of the events ev (_tl_perf_events or _tl_perf_bwd_events) that
-- TraceLens keeps, in _tl_perf_summary's input form (see the top of this file); bwd_ok: the instance has backward
-- formulas.
CREATE OR REPLACE MACRO _tl_perf_ssm_of(ev) AS TABLE
WITH e AS (
    SELECT trace_id, event_id, model, input_dims AS d, json_extract_string(input_types, '$[*]') AS ty,
           json_extract_string(concrete_inputs, '$[*]') AS ci
    FROM query_table(ev) WHERE sheet IN ('SSM_fwd', 'SSM_bwd')
), a AS (
    SELECT *, _tl_shape(json_extract(d, '$[0]')) AS x, _tl_shape(json_extract(d, '$[1]')) AS w,
           _tl_shape(json_extract(d, '$[3]')) AS hb,
           coalesce(_tl_bpe(ty[1]), 2) AS bpe, 'matrix_' || _tl_precision(ty[1]) AS compute_spec
    FROM e WHERE len(ty) > 0
), conv AS (
    SELECT *, coalesce(len(_tl_shape(json_extract(d, '$[2]'))), 0) > 0 AS has_bias FROM a
    WHERE model = 'causal_conv1d_fwd' AND len(x) >= 3 AND len(w) >= 2
), mam0 AS (
    SELECT *, CASE WHEN coalesce(ci[7], '') = '' THEN 128 ELSE _tl_int_text(ci[7]) END AS c,
           CASE WHEN coalesce(ci[16], '') = '' THEN 64 ELSE _tl_int_text(ci[16]) END AS p,
           CASE WHEN coalesce(ci[17], '') = '' THEN 1 ELSE _tl_int_text(ci[17]) END AS g,
           CASE WHEN coalesce(ty[4], '') = '' THEN 4 ELSE coalesce(_tl_bpe(ty[4]), 4) END AS b_dt,
           CASE WHEN coalesce(ty[5], '') = '' THEN 4 ELSE coalesce(_tl_bpe(ty[5]), 4) END AS b_a,
           CASE WHEN coalesce(ty[6], '') = '' THEN bpe ELSE coalesce(_tl_bpe(ty[6]), bpe) END AS b_d
    FROM a WHERE model = 'mamba_ssd_fwd' AND len(x) >= 3 AND len(w) >= 2 AND len(hb) >= 1
), mam AS (
    SELECT *, x[1]::HUGEINT AS bb, x[2]::HUGEINT AS t, x[3]::HUGEINT AS comb, w[1]::HUGEINT AS ch,
           w[2]::HUGEINT AS k, hb[1]::HUGEINT AS h, hb[1]::HUGEINT * p AS d_inner,
           (x[3] - 2 * hb[1] * p - hb[1]) // (2 * g) AS n
    FROM mam0
    WHERE c IS NOT NULL AND p IS NOT NULL AND g IS NOT NULL AND g <> 0
      AND x[3] - 2 * hb[1] * p - hb[1] > 0 AND (x[3] - 2 * hb[1] * p - hb[1]) % (2 * g) = 0
)
SELECT trace_id, event_id,
       [{'k': 'batch', 'v': x[1]::VARCHAR, 't': 'i'}, {'k': 'channels', 'v': x[2]::VARCHAR, 't': 'i'},
        {'k': 'seq_len', 'v': x[3]::VARCHAR, 't': 'i'}, {'k': 'kernel_size', 'v': w[2]::VARCHAR, 't': 'i'},
        {'k': 'has_bias', 'v': _tl_py_bool(has_bias), 't': NULL}] AS params,
       2 * x[1]::HUGEINT * x[2] * x[3] * w[2] AS flops,
       2 * x[1]::HUGEINT * x[2] * x[3] * bpe + x[2]::HUGEINT * w[2] * bpe
           + CASE WHEN has_bias THEN x[2] * bpe ELSE 0 END AS bytes,
       compute_spec, false AS bwd_ok
FROM conv
UNION ALL
SELECT trace_id, event_id,
       [{'k': 'B', 'v': bb::VARCHAR, 't': 'i'}, {'k': 'T', 'v': t::VARCHAR, 't': 'i'},
        {'k': 'H', 'v': h::VARCHAR, 't': 'i'}, {'k': 'P', 'v': p::VARCHAR, 't': 'i'},
        {'k': 'G', 'v': g::VARCHAR, 't': 'i'}, {'k': 'N', 'v': n::VARCHAR, 't': 'i'},
        {'k': 'C', 'v': c::VARCHAR, 't': 'i'}, {'k': 'd_inner', 'v': d_inner::VARCHAR, 't': 'i'},
        {'k': 'd_conv', 'v': k::VARCHAR, 't': 'i'}, {'k': 'conv_channels', 'v': ch::VARCHAR, 't': 'i'},
        {'k': 'combined_dim', 'v': comb::VARCHAR, 't': 'i'}],
       2 * bb * ch * t * k + 2 * bb * g * t * c * n + 2 * bb * h * t * c * p + 2 * bb * h * t * n * p
           + 2 * bb * h * t * n * p,
       bb * t * comb * bpe + ch * k * bpe + ch * bpe + h * b_dt + h * b_a + h * b_d + bb * t * d_inner * bpe,
       compute_spec, true
FROM mam;

-- _tl_perf_ssm: one row per SSM_fwd.csv instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_ssm AS
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_ssm_of('_tl_perf_events');

-- _tl_perf_ssm_bwd: one row per SSM_bwd.csv instance (a forward instance with a backward node and backward
-- formulas), in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_ssm_bwd AS
SELECT trace_id, event_id, params, flops, bytes, compute_spec FROM _tl_perf_ssm_of('_tl_perf_bwd_events')
WHERE bwd_ok;

-- _tl_perf_ssm_sheet(tbl, ev, by_kernels): the rows and columns of an SSM sheet from the instances tbl and their
-- events ev, grouped by num_kernels too when by_kernels (see _tl_perf_summary_of).
CREATE OR REPLACE MACRO _tl_perf_ssm_sheet(tbl, ev, by_kernels) AS TABLE
SELECT trace_id, name,
       _tl_perf_param(params, 'batch') AS "param: batch", _tl_perf_param(params, 'channels') AS "param: channels",
       _tl_perf_param(params, 'seq_len') AS "param: seq_len",
       _tl_perf_param(params, 'kernel_size') AS "param: kernel_size",
       _tl_perf_param(params, 'has_bias') AS "param: has_bias",
       _tl_perf_param(params, 'B') AS "param: B", _tl_perf_param(params, 'T') AS "param: T",
       _tl_perf_param(params, 'H') AS "param: H", _tl_perf_param(params, 'P') AS "param: P",
       _tl_perf_param(params, 'G') AS "param: G", _tl_perf_param(params, 'N') AS "param: N",
       _tl_perf_param(params, 'C') AS "param: C", _tl_perf_param(params, 'd_inner') AS "param: d_inner",
       _tl_perf_param(params, 'd_conv') AS "param: d_conv",
       _tl_perf_param(params, 'conv_channels') AS "param: conv_channels",
       _tl_perf_param(params, 'combined_dim') AS "param: combined_dim",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of(tbl, ev, by_kernels);

-- tl_perf_ssm_fwd: TraceLens's SSM_fwd.csv, one row per trace and group of SSM op instances with the same name
-- and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: batch, channels, seq_len, kernel_size, has_bias   the causal conv1d's parameters (top of this file)
--   param: B, T, H, P, G, N, C, d_inner, d_conv, conv_channels, combined_dim   Mamba-2's: batch, tokens, heads,
--                               head dim, groups, state size, chunk size, inner width, conv width and channels,
--                               width of the fused projection
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 33 SSM_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_ssm_fwd AS
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_ssm_sheet('_tl_perf_ssm', '_tl_perf_events', false)
ORDER BY trace_id, rank;

-- tl_perf_ssm_bwd: TraceLens's SSM_bwd.csv, one row per trace and group of Mamba-2 instances with the same name
-- and parameters that autograd ran a backward node for, with the node's GPU kernels; the columns of
-- tl_perf_ssm_fwd (sheet_columns: the backward rows' columns, then the trace's SSM_fwd columns they lack).
-- @output report-tracelens 34 SSM_bwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_ssm_bwd AS
SELECT b.* EXCLUDE (num_kernels)
           REPLACE (list_concat(b.sheet_columns,
                                list_filter(coalesce(f.c, []), lambda x: NOT list_contains(b.sheet_columns, x)))
                    AS sheet_columns)
FROM _tl_perf_ssm_sheet('_tl_perf_ssm_bwd', '_tl_perf_bwd_events', false) b
LEFT JOIN (SELECT trace_id, any_value(sheet_columns) AS c FROM tl_perf_ssm_fwd GROUP BY ALL) f USING (trace_id)
ORDER BY b.trace_id, b.rank;
