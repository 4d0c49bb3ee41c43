-- peers/tracelens/perf_misc — TraceLens (0.1.0) perf models of one op name each and their sheets: MoE token
-- dispatch/combine (MoE_comm_fwd.csv), fused cross entropy (CrossEntropy_fwd.csv) and ATOM's sampler
-- (elementwise_fwd.csv).
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (MoEComm, moe_dispatch, moe_combine, CrossEntropy, cross_entropy_fwd) and
-- TraceLens/PerfModel/extensions/perf_model_extensions.py (mixed_sample_outer_exponential); the code is ours.
--   moe_dispatch, moe_combine (MoEDispatch, MoECombine)  tokens = Input Dims[0]: params num_tokens = its first
--              size, hidden_dim = its second (None when missing), bpe = bpe of Input type[0] (None when unknown);
--              FLOPs 0, bytes num_tokens·hidden_dim·bpe (None when one is None); no Compute Spec.
--   cross_entropy_fwd (CrossEntropyFunction)  logits = Input Dims[0]: params batch = its first size, vocab_size =
--              its last, logits_shape = the list as recorded; FLOPs 5·batch·vocab_size, bytes elements(logits)·bpe
--              + batch·8 (int64 targets) + batch·4 (fp32 losses), bpe of Input type[0] (2 when unknown or
--              missing); Compute Spec 'vector_' + the precision of Input type[0].
--   mixed_sample_outer_exponential (aiter::mixed_sample_outer_exponential: out, logits, exp_noise, ...)  its own
--              category, elementwise (no sheet_category: the sheet is elementwise_fwd); logits = Input Dims[1] (a
--              call without it is dropped): params T = its first size (1 without one), V = its second (1 without
--              one), dtype_logits = Input type[1] ('c10::bfloat16' without one), dtype_noise = Input type[2]
--              ('float' without one); FLOPs 2·T·V, bytes T·V·(bpe of dtype_logits + bpe of dtype_noise) + T·4 (the
--              int32 token ids; None when a bpe is unknown, name2bpe); Compute Spec 'vector_' + the precision of
--              dtype_logits.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_moe_comm: one row per MoE_comm_fwd instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_moe_comm AS
SELECT trace_id, event_id,
       [{'k': 'num_tokens', 'v': s[1]::VARCHAR, 't': CASE WHEN len(s) >= 1 THEN 'i' END},
        {'k': 'hidden_dim', 'v': s[2]::VARCHAR, 't': CASE WHEN len(s) >= 2 THEN 'i' END},
        {'k': 'bpe', 'v': bpe::VARCHAR, 't': CASE WHEN bpe IS NOT NULL THEN 'i' END}] AS params,
       0 AS flops, s[1]::HUGEINT * s[2] * bpe AS bytes, NULL AS compute_spec
FROM (SELECT trace_id, event_id, coalesce(_tl_shape(json_extract(input_dims, '$[0]')), []) AS s,
             _tl_bpe(nullif(json_extract_string(input_types, '$[0]'), '')) AS bpe
      FROM _tl_perf_events WHERE sheet = 'MoE_comm_fwd');

-- _tl_perf_moe_comm_sheet(by_kernels): the rows and columns of MoE_comm_fwd.csv (see tl_perf_moe_comm_fwd), grouped by num_kernels too
-- when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_moe_comm_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'num_tokens') AS "param: num_tokens",
       _tl_perf_param(params, 'hidden_dim') AS "param: hidden_dim", _tl_perf_param(params, 'bpe') AS "param: bpe",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_moe_comm', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_moe_comm_fwd: TraceLens's MoE_comm_fwd.csv, one row per trace and group of MoE dispatch/combine
-- instances with the same name and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: num_tokens, hidden_dim, bpe   see the top of this file
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 25 MoE_comm_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_moe_comm_fwd AS SELECT * EXCLUDE (num_kernels) FROM _tl_perf_moe_comm_sheet(false);

-- _tl_perf_cross_entropy: one row per CrossEntropy_fwd instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_cross_entropy AS
SELECT trace_id, event_id,
       [{'k': 'batch', 'v': s[1]::VARCHAR, 't': 'i'}, {'k': 'vocab_size', 'v': s[-1]::VARCHAR, 't': 'i'},
        {'k': 'logits_shape', 'v': _tl_pylist1(x), 't': NULL}] AS params,
       5 * s[1]::HUGEINT * s[-1] AS flops,
       _tl_numel(s) * coalesce(_tl_bpe(dt), 2) + s[1]::HUGEINT * 8 + s[1]::HUGEINT * 4 AS bytes,
       'vector_' || _tl_precision(dt) AS compute_spec
FROM (SELECT trace_id, event_id, json_extract(input_dims, '$[0]') AS x, _tl_shape(json_extract(input_dims, '$[0]')) AS s,
             json_extract_string(input_types, '$[0]') AS dt
      FROM _tl_perf_events WHERE sheet = 'CrossEntropy_fwd')
WHERE len(s) >= 1;

-- _tl_perf_cross_entropy_sheet(by_kernels): the rows and columns of CrossEntropy_fwd.csv (see tl_perf_cross_entropy_fwd), grouped by num_kernels too
-- when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_cross_entropy_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'batch') AS "param: batch",
       _tl_perf_param(params, 'vocab_size') AS "param: vocab_size",
       _tl_perf_param(params, 'logits_shape') AS "param: logits_shape",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_cross_entropy', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_cross_entropy_fwd: TraceLens's CrossEntropy_fwd.csv, one row per trace and group of fused cross-entropy
-- instances with the same name and parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: batch, vocab_size, logits_shape   see the top of this file
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 26 CrossEntropy_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_cross_entropy_fwd AS SELECT * EXCLUDE (num_kernels) FROM _tl_perf_cross_entropy_sheet(false);

-- _tl_perf_mixed_sample: one row per elementwise_fwd instance TraceLens keeps (mixed_sample_outer_exponential), in
-- _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_mixed_sample AS
SELECT trace_id, event_id,
       [{'k': 'T', 'v': t::VARCHAR, 't': 'i'}, {'k': 'V', 'v': v::VARCHAR, 't': 'i'},
        {'k': 'dtype_logits', 'v': dl, 't': 's'}, {'k': 'dtype_noise', 'v': dn, 't': 's'}] AS params,
       2 * t::HUGEINT * v AS flops, t::HUGEINT * v * _tl_bpe(dl) + t::HUGEINT * v * _tl_bpe(dn) + t * 4 AS bytes,
       'vector_' || _tl_precision(nullif(dl, '')) AS compute_spec
FROM (SELECT trace_id, event_id, s, CASE WHEN len(s) >= 1 THEN s[1] ELSE 1 END AS t,
             CASE WHEN len(s) >= 2 THEN s[2] ELSE 1 END AS v,
             CASE WHEN len(ty) > 1 THEN ty[2] ELSE 'c10::bfloat16' END AS dl,
             CASE WHEN len(ty) > 2 THEN ty[3] ELSE 'float' END AS dn
      FROM (SELECT trace_id, event_id, _tl_shape(json_extract(input_dims, '$[1]')) AS s,
                   coalesce(json_extract_string(input_types, '$[*]'), []) AS ty
            FROM _tl_perf_events WHERE sheet = 'elementwise_fwd'))
WHERE s IS NOT NULL;

-- _tl_perf_mixed_sample_sheet(by_kernels): the rows and columns of elementwise_fwd.csv (see tl_perf_elementwise_fwd),
-- grouped by num_kernels too when by_kernels (the inference report; num_kernels, NULL otherwise, then follows the
-- params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_mixed_sample_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'T') AS "param: T", _tl_perf_param(params, 'V') AS "param: V",
       _tl_perf_param(params, 'dtype_logits') AS "param: dtype_logits",
       _tl_perf_param(params, 'dtype_noise') AS "param: dtype_noise",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_mixed_sample', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_elementwise_fwd: TraceLens's elementwise_fwd.csv, one row per trace and group of
-- aiter::mixed_sample_outer_exponential instances with the same parameters; TraceLens's columns.
--   trace_id                    the trace
--   name                        the op name
--   param: T, V, dtype_logits, dtype_noise   see the top of this file
--   GFLOPS_first ... UID_first  the statistics of peers/tracelens/perf_ops (_tl_perf_summary)
--   rank                        row order in TraceLens's file
--   sheet_columns               the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 41 elementwise_fwd EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_elementwise_fwd AS SELECT * EXCLUDE (num_kernels) FROM _tl_perf_mixed_sample_sheet(false);
