-- peers/tracelens/perf_norm — TraceLens (0.1.0) normalization perf models and their sheet Normalization.csv
-- (forward and backward ops in one sheet, as TraceLens writes it).
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/perf_model.py (classes Normalization, BatchNorm, BatchNormBwd, LayerNorm, LayerNormBwd,
-- GroupNorm, GroupNormBwd, InstanceNorm, InstanceNormBwd, RMSNorm, RMSNormBwd) and norm_ops in
-- TraceLens/PerfModel/torch_op_mapping.py; the code is ours. Positions are 0-based indexes into the args.
--   forward    op_shape = Input Dims[0] (dtype, stride at 0); is_affine = Input Dims[2] is present (an
--              empty list counts: TraceLens tests `is not None`); batch/instance norm: is_training =
--              Concrete Inputs[5] is non-empty, num_channels = op_shape[1]; layer norm: num_channels =
--              product of the list in Concrete Inputs[1], has_bias = Input Dims[3] present, training;
--              group norm (aten's and aiter::_groupnorm_run, whose args are (x, num_groups, weight, bias, eps):
--              the same positions): num_channels = op_shape[1], training; RMS norm (aten::_fused_rms_norm):
--              num_channels as layer norm, no bias, not training. has_bias is True otherwise.
--   backward   batch norm: op_shape = Input Dims[1] (cudnn/miopen variants: [0], not training; others:
--              training = Concrete Inputs[7] non-empty), output_mask = [True]; layer norm: op_shape [1],
--              num_channels from Concrete Inputs[2], output_mask = Concrete Inputs[7], is_affine and
--              has_bias = its 2nd and 3rd entries, training; group norm: op_shape [1], num_channels =
--              op_shape[1] / int(Concrete Inputs[8]) (a float), is_affine = Input Dims[5] present,
--              output_mask = Concrete Inputs[9], training; RMS norm: op_shape [1], is_affine = Input
--              Dims[4] present, num_channels from Concrete Inputs[2], output_mask = Concrete Inputs[5];
--              instance norm backward has no model (TraceLens drops it).
--   FLOPs      forward (N = elements of op_shape, C = num_channels): 3C + (3N if training) + 3C + 2N; RMS:
--              N/C·(2C + 2) + N·(2 if affine else 1). Backward: C·((0 if training else 3) + 4·N/C
--              + (5·N/C if output_mask[0] and training; 2·N/C if not output_mask[0])); RMS backward:
--              N (+ N if affine) (+ 6N if output_mask[0]) (+ N, and N more if N/C > 1, if output_mask[1]
--              and affine).
--   bytes      forward: 2·N·bpe + w·C·bpe, w = 2 (+1 affine, +1 more with bias) (+2 training); RMS:
--              2·N·bpe (+ C·bpe if affine). Backward: N·bpe·(3 if output_mask[0] and training else 2)
--              (+ C·bpe if training) (+ C·bpe if affine, and C·bpe·(2 with bias else 1) more if also
--              training); RMS backward: 3·N·bpe (+ 2·C·bpe if affine). bpe of the input dtype; an unknown
--              dtype makes TraceLens fail and drop the instance.
--   params     op_shape, dtype_in_out ((dtype, None)), stride_input, stride_output (None), num_channels,
--              has_bias, is_affine, is_training, and output_mask for the backward ops. A column whose
--              values are integers in some rows and floats (or missing) in others is a float column in
--              TraceLens's table: its integers print as floats (16.0) — see _tl_perf_summary.
--   Compute Spec  'vector_' + the precision of the input dtype.
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_perf_norm: one row per normalization instance TraceLens keeps, in _tl_perf_summary's input form.
CREATE OR REPLACE VIEW _tl_perf_norm AS
WITH e AS (
    SELECT trace_id, event_id, name, model, input_dims AS d, json_extract(input_types, '$[*]') AS ty,
           input_strides AS st, json_extract(concrete_inputs, '$[*]') AS ci,
           model LIKE '%_bwd' AS bwd,
           CASE WHEN model IN ('layer_norm_bwd', 'group_norm_bwd', 'rms_norm_bwd') THEN 1
                WHEN model = 'batch_norm_bwd' AND name NOT IN ('aten::cudnn_batch_norm_backward',
                                                                'aten::miopen_batch_norm_backward') THEN 1
                ELSE 0 END AS ix
    FROM _tl_perf_events WHERE sheet = 'Normalization' AND model NOT IN ('instance_norm_bwd', 'fused_ln_modulate', 'fused_ln_modulate_backward')
), a AS (
    SELECT *, json_extract(d, '$[' || ix || ']') AS shape_j, ty[ix + 1] AS dt,
           json_extract(st, '$[' || ix || ']') AS stride_j,
           _tl_shape(json_extract(d, '$[' || ix || ']')) AS shape,
           CASE model WHEN 'group_norm_bwd' THEN 5 WHEN 'rms_norm_bwd' THEN 4 ELSE 2 END AS i_affine,
           (ci[CASE WHEN model = 'layer_norm_bwd' THEN 8 WHEN model = 'group_norm_bwd' THEN 10
                    WHEN model = 'rms_norm_bwd' THEN 6 END] ->> '$') AS mask_text
    FROM e
), p AS (
    SELECT *,
           json_array_length(d) > i_affine AND json_type(json_extract(d, '$[' || i_affine || ']')) <> 'NULL' AS affine_dims,
           CASE WHEN model IN ('layer_norm', 'rms_norm') THEN _tl_py_list_ints(ci[2] ->> '$')
                WHEN model IN ('layer_norm_bwd', 'rms_norm_bwd') THEN _tl_py_list_ints(ci[3] ->> '$') END AS ch_list,
           _tl_py_list_bools(mask_text) AS mask
    FROM a
), q AS (
    SELECT *,
           CASE WHEN model IN ('layer_norm', 'rms_norm', 'layer_norm_bwd', 'rms_norm_bwd') THEN _tl_numel(ch_list)::DOUBLE
                WHEN model = 'group_norm_bwd' THEN shape[2]::DOUBLE / TRY_CAST(ci[9] ->> '$' AS BIGINT)
                ELSE shape[2]::DOUBLE END AS c,
           model = 'group_norm_bwd' AS c_float,
           CASE WHEN model = 'layer_norm_bwd' THEN mask[2] ELSE affine_dims END AS affine,
           CASE WHEN model = 'layer_norm' THEN json_array_length(d) > 3 AND json_type(json_extract(d, '$[3]')) <> 'NULL'
                WHEN model = 'layer_norm_bwd' THEN mask[3]
                WHEN model IN ('rms_norm', 'rms_norm_bwd') THEN false
                ELSE true END AS bias,
           CASE WHEN model IN ('batch_norm', 'instance_norm') THEN coalesce(ci[6] ->> '$', '') <> ''
                WHEN model = 'batch_norm_bwd' AND ix = 1 THEN coalesce(ci[8] ->> '$', '') <> ''
                WHEN model IN ('batch_norm_bwd', 'rms_norm', 'rms_norm_bwd') THEN false
                ELSE true END AS training,
           CASE WHEN model = 'batch_norm_bwd' THEN [true] ELSE mask END AS omask,
           _tl_numel(shape)::DOUBLE AS n, _tl_bpe(dt ->> '$') AS bpe
    FROM p
), ok AS (
    SELECT * FROM q
    WHERE shape IS NOT NULL AND dt IS NOT NULL AND json_type(stride_j) = 'ARRAY' AND bpe IS NOT NULL
          AND (model NOT IN ('batch_norm', 'group_norm', 'instance_norm', 'batch_norm_bwd', 'group_norm_bwd') OR len(shape) >= 2)
          AND c IS NOT NULL AND affine IS NOT NULL AND bias IS NOT NULL
          AND (model NOT IN ('batch_norm', 'instance_norm') OR len(ci) >= 6)
          AND (model <> 'batch_norm_bwd' OR ix = 0 OR len(ci) >= 8)
          AND (NOT bwd OR model = 'batch_norm_bwd' OR len(omask) >= CASE model WHEN 'layer_norm_bwd' THEN 3
                                                                                 WHEN 'rms_norm_bwd' THEN 2 ELSE 1 END)
)
SELECT trace_id, event_id,
       list_concat(
           [{'k': 'op_shape', 'v': _py_tuple1(shape_j), 't': NULL},
            {'k': 'dtype_in_out', 'v': '(' || _py_atom(dt) || ', None)', 't': NULL},
            {'k': 'stride_input', 'v': _py_tuple1(stride_j), 't': NULL},
            {'k': 'stride_output', 'v': NULL, 't': NULL},
            {'k': 'num_channels', 'v': CASE WHEN c_float THEN c::VARCHAR ELSE c::BIGINT::VARCHAR END,
             't': CASE WHEN c_float THEN 'f' ELSE 'i' END},
            {'k': 'has_bias', 'v': _tl_py_bool(bias), 't': NULL},
            {'k': 'is_affine', 'v': _tl_py_bool(affine), 't': NULL},
            {'k': 'is_training', 'v': _tl_py_bool(training), 't': NULL}],
           CASE WHEN bwd THEN [{'k': 'output_mask',
                                'v': '[' || array_to_string(list_transform(omask, lambda b: _tl_py_bool(b)), ', ') || ']',
                                't': NULL}]
                ELSE [] END) AS params,
       CASE model
            WHEN 'rms_norm' THEN n / c * (2 * c + 2) + n * CASE WHEN affine THEN 2 ELSE 1 END
            WHEN 'rms_norm_bwd'
            THEN (CASE WHEN affine THEN n ELSE 0 END) + n + CASE WHEN omask[1] THEN 2 * n + 4 * n ELSE 0 END
                 + CASE WHEN omask[2] AND affine THEN n + CASE WHEN n / c > 1 THEN n ELSE 0 END ELSE 0 END
            ELSE CASE WHEN bwd
                      THEN c * ((CASE WHEN training THEN 0 ELSE 3 END + 4 * (n / c))
                                + CASE WHEN omask[1] THEN CASE WHEN training THEN 5 * (n / c) ELSE 0 END
                                       ELSE 2 * (n / c) END)
                      ELSE c * 3 + CASE WHEN training THEN n * 3 ELSE 0 END + c * 3 + 2 * n END END AS flops,
       CASE model
            WHEN 'rms_norm' THEN n * bpe + n * bpe + CASE WHEN affine THEN c * bpe ELSE 0 END
            WHEN 'rms_norm_bwd' THEN n * bpe + n * bpe * 2 + CASE WHEN affine THEN c * bpe * 2 ELSE 0 END
            ELSE CASE WHEN bwd
                      THEN n * bpe + n * bpe * CASE WHEN omask[1] AND training THEN 2 ELSE 1 END
                           + CASE WHEN training THEN c * bpe ELSE 0 END
                           + CASE WHEN affine THEN c * bpe + CASE WHEN training THEN c * bpe * CASE WHEN bias THEN 2 ELSE 1 END
                                                                  ELSE 0 END
                                  ELSE 0 END
                      ELSE n * bpe + n * bpe
                           + (2 + CASE WHEN affine THEN 1 + CASE WHEN bias THEN 1 ELSE 0 END ELSE 0 END
                              + CASE WHEN training THEN 2 ELSE 0 END) * c * bpe END END AS bytes,
       'vector_' || _tl_precision(dt ->> '$') AS compute_spec
FROM ok
UNION ALL
-- primus::fused_ln_modulate (FusedLnModulate, formula per TraceLens PerfModel perf_model.py): x = Input Dims[0] =
-- (T, B, H, ...): op_shape = x, dtype_in_out = (Input type[0], None), stride_input = Input Strides[0] (None
-- without), num_channels = H, has_bias, is_affine and is_training True; FLOPs 12·n, bytes 2·n·bpe + 2·B·H·bpe
-- (scale and shift) + 2·T·B·4 (mean and rstd); an unknown dtype drops the instance.
SELECT trace_id, event_id,
       [{'k': 'op_shape', 'v': _py_tuple1(x), 't': NULL},
        {'k': 'dtype_in_out', 'v': '(' || _py_str(dt) || ', None)', 't': NULL},
        {'k': 'stride_input', 'v': CASE WHEN json_type(xst) = 'ARRAY' THEN _py_tuple1(xst) END, 't': NULL},
        {'k': 'stride_output', 'v': NULL, 't': NULL}, {'k': 'num_channels', 'v': xs[3]::VARCHAR, 't': 'i'},
        {'k': 'has_bias', 'v': 'True', 't': NULL}, {'k': 'is_affine', 'v': 'True', 't': NULL},
        {'k': 'is_training', 'v': 'True', 't': NULL}],
       12 * _tl_numel(xs),
       2 * _tl_numel(xs) * _tl_bpe(dt) + 2 * xs[2]::HUGEINT * xs[3] * _tl_bpe(dt) + 2 * xs[1]::HUGEINT * xs[2] * 4,
       'vector_' || _tl_precision(dt)
FROM (SELECT trace_id, event_id, json_extract(input_dims, '$[0]') AS x, _tl_shape(json_extract(input_dims, '$[0]')) AS xs,
             json_extract_string(input_types, '$[0]') AS dt, json_extract(input_strides, '$[0]') AS xst
      FROM _tl_perf_events WHERE sheet = 'Normalization' AND model = 'fused_ln_modulate')
WHERE len(xs) >= 3 AND _tl_bpe(dt) IS NOT NULL
UNION ALL
-- primus::fused_ln_modulate_backward (FusedLnModulateBackward, formula per TraceLens PerfModel perf_model.py; args
-- grad_out, x_norm, mean, rstd, modulation grad): grad_out = Input Dims[0] = (T, B, H, ...) read as
-- fused_ln_modulate's x, output_mask [True, True, True]; FLOPs 15·n; bytes 2·n·bpe (grad_out, x_norm) + 2·B·T·4
-- (mean, rstd) + n·bpe (x grad) + 2·B·H·bpe (scale and shift grads) + B·H·bpe (modulation grad); an unknown dtype
-- drops the instance.
SELECT trace_id, event_id,
       [{'k': 'op_shape', 'v': _py_tuple1(x), 't': NULL},
        {'k': 'dtype_in_out', 'v': '(' || _py_str(dt) || ', None)', 't': NULL},
        {'k': 'stride_input', 'v': CASE WHEN json_type(xst) = 'ARRAY' THEN _py_tuple1(xst) END, 't': NULL},
        {'k': 'stride_output', 'v': NULL, 't': NULL}, {'k': 'num_channels', 'v': xs[3]::VARCHAR, 't': 'i'},
        {'k': 'has_bias', 'v': 'True', 't': NULL}, {'k': 'is_affine', 'v': 'True', 't': NULL},
        {'k': 'is_training', 'v': 'True', 't': NULL}, {'k': 'output_mask', 'v': '[True, True, True]', 't': NULL}],
       15 * _tl_numel(xs),
       2 * _tl_numel(xs) * _tl_bpe(dt) + 2 * xs[2]::HUGEINT * xs[1] * 4 + _tl_numel(xs) * _tl_bpe(dt)
           + 2 * xs[2]::HUGEINT * xs[3] * _tl_bpe(dt) + xs[2]::HUGEINT * xs[3] * _tl_bpe(dt),
       'vector_' || _tl_precision(dt)
FROM (SELECT trace_id, event_id, json_extract(input_dims, '$[0]') AS x, _tl_shape(json_extract(input_dims, '$[0]')) AS xs,
             json_extract_string(input_types, '$[0]') AS dt, json_extract(input_strides, '$[0]') AS xst
      FROM _tl_perf_events WHERE sheet = 'Normalization' AND model = 'fused_ln_modulate_backward')
WHERE len(xs) >= 3 AND _tl_bpe(dt) IS NOT NULL;

-- _tl_perf_normalization_sheet(by_kernels): the rows and columns of TraceLens's normalization sheet (see
-- tl_perf_normalization), grouped by num_kernels too when by_kernels (the inference report; num_kernels, NULL
-- otherwise, then follows the params in sheet_columns).
CREATE OR REPLACE MACRO _tl_perf_normalization_sheet(by_kernels) AS TABLE
SELECT trace_id, name, _tl_perf_param(params, 'op_shape') AS "param: op_shape",
       _tl_perf_param(params, 'dtype_in_out') AS "param: dtype_in_out",
       _tl_perf_param(params, 'stride_input') AS "param: stride_input",
       _tl_perf_param(params, 'stride_output') AS "param: stride_output",
       _tl_perf_param(params, 'num_channels') AS "param: num_channels",
       _tl_perf_param(params, 'has_bias') AS "param: has_bias", _tl_perf_param(params, 'is_affine') AS "param: is_affine",
       _tl_perf_param(params, 'is_training') AS "param: is_training",
       _tl_perf_param(params, 'output_mask') AS "param: output_mask",
       * EXCLUDE (trace_id, sheet, name, params, rank, sheet_columns), rank, sheet_columns
FROM _tl_perf_summary_of('_tl_perf_norm', '_tl_perf_events', by_kernels)
ORDER BY trace_id, rank;

-- tl_perf_normalization: TraceLens's Normalization.csv, one row per trace and group of normalization op
-- instances (forward and backward) with the same name and parameters; TraceLens's column names
-- (statistics: peers/tracelens/perf_ops).
--   trace_id                       the trace
--   name                           the op name
--   param: op_shape, dtype_in_out, stride_input, stride_output   the normalized tensor
--   param: num_channels            elements sharing one set of statistics / weights (see the top of this file)
--   param: has_bias, is_affine, is_training, output_mask   see the top of this file (output_mask: backward ops)
--   GFLOPS_first ... UID_first     the statistics of _tl_perf_summary
--   rank                           row order in TraceLens's file
--   sheet_columns                  the columns TraceLens writes for this trace, in its order
-- @output report-tracelens 15 Normalization EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_perf_normalization AS
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_normalization_sheet(false);
