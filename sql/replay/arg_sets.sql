-- replay/arg_sets — what a replay of an op needs from the trace: its argument sets (the op called on the same
-- recorded arguments, the rows of op_arg_summary) ranked by GPU time, and each argument read from the recorded
-- lists into what builds it again: a tensor's element type, shape and strides and how to fill it, a scalar's or a
-- list's value.
--
-- The PyTorch profiler records, for each input of a cpu_op (record_shapes=True), its 'Input type' (a tensor's
-- element type name, 'Scalar', 'ScalarList', 'TensorList', or '' for everything else: None, str, Device, a
-- generator, a list of optional tensors), its 'Input Dims' and 'Input Strides' (a tensor list's: one list per
-- tensor) and its 'Concrete Inputs' (a scalar's or scalar list's value as text: '15', '0.', 'True', '[3, 4]').
-- A ScalarType, Layout or MemoryFormat argument is recorded as the Scalar of its enum number. What '' stands for
-- and the op's overload are known only from the operator's schema, which the replay script reads from the torch it
-- runs with (docs/replay.md).
--
-- @requires gpu/op_summaries perf/dtypes

-- _replay_scalar(txt): a recorded scalar as JSON: a bool, an integer (digits only), a finite float, else the text
-- as a JSON string ('inf', 'nan', a complex number).
CREATE OR REPLACE MACRO _replay_scalar(txt) AS
    CASE WHEN txt IN ('True', 'False') THEN to_json(txt = 'True')
         WHEN regexp_full_match(txt, '-?[0-9]+') AND TRY_CAST(txt AS BIGINT) IS NOT NULL
              THEN to_json(TRY_CAST(txt AS BIGINT))  -- (a cast alone reads '1e-12' as the integer 0)
         WHEN isfinite(TRY_CAST(txt AS DOUBLE)) THEN to_json(TRY_CAST(txt AS DOUBLE))
         ELSE to_json(txt) END;

-- _replay_index_rules: the integer tensor arguments whose values index another argument, and the bound they stay
-- below, by the operator's schema (native_functions.yaml): one row per (op name, argument position).
--   position       the index tensor's argument position (0-based)
--   bound          how its exclusive upper bound is found, from the argument at ref_position:
--                  'dim'     the size of ref's dimension given by the Scalar at dim_position (dimension 0 when
--                            dim_position is NULL; negative counts from the end)
--                  'value'   ref's recorded integer value
--                  'class'   the class dimension of ref (dimension 1 when ref has two or more, else 0)
--                  'numel'   ref's element count
--                  'spatial' the element count of ref's spatial dimensions (all but the first two)
--                  'offsets' an EmbeddingBag's offsets: increasing from 0, below ref's length (the indices)
--                  'divisor' no bound: an integer divisor, filled with ones (integer division by 0 raises)
CREATE OR REPLACE VIEW _replay_index_rules AS
SELECT * FROM (VALUES
    ('aten::embedding', 1, 'dim', 0, NULL),
    ('aten::embedding_backward', 1, 'value', 2, NULL),
    ('aten::embedding_dense_backward', 1, 'value', 2, NULL),
    ('aten::embedding_sparse_backward', 1, 'value', 2, NULL),
    ('aten::embedding_bag', 1, 'dim', 0, NULL), ('aten::embedding_bag', 2, 'offsets', 1, NULL),
    ('aten::_embedding_bag', 1, 'dim', 0, NULL), ('aten::_embedding_bag', 2, 'offsets', 1, NULL),
    ('aten::_embedding_bag_forward_only', 1, 'dim', 0, NULL),
    ('aten::_embedding_bag_forward_only', 2, 'offsets', 1, NULL),
    ('aten::index_select', 2, 'dim', 0, 1),
    ('aten::index_add', 2, 'dim', 0, 1), ('aten::index_add_', 2, 'dim', 0, 1),
    ('aten::index_copy', 2, 'dim', 0, 1), ('aten::index_copy_', 2, 'dim', 0, 1),
    ('aten::index_fill', 2, 'dim', 0, 1), ('aten::index_fill_', 2, 'dim', 0, 1),
    ('aten::index_reduce', 2, 'dim', 0, 1), ('aten::index_reduce_', 2, 'dim', 0, 1),
    ('aten::gather', 2, 'dim', 0, 1),
    ('aten::scatter', 2, 'dim', 0, 1), ('aten::scatter_', 2, 'dim', 0, 1),
    ('aten::scatter_add', 2, 'dim', 0, 1), ('aten::scatter_add_', 2, 'dim', 0, 1),
    ('aten::scatter_reduce', 2, 'dim', 0, 1), ('aten::scatter_reduce_', 2, 'dim', 0, 1),
    ('aten::take', 1, 'numel', 0, NULL),
    ('aten::one_hot', 0, 'value', 1, NULL),
    ('aten::nll_loss', 1, 'class', 0, NULL), ('aten::nll_loss_nd', 1, 'class', 0, NULL),
    ('aten::nll_loss_forward', 1, 'class', 0, NULL), ('aten::nll_loss2d', 1, 'class', 0, NULL),
    ('aten::nll_loss2d_forward', 1, 'class', 0, NULL),
    ('aten::nll_loss_backward', 2, 'class', 1, NULL), ('aten::nll_loss2d_backward', 2, 'class', 1, NULL),
    ('aten::cross_entropy_loss', 1, 'class', 0, NULL),
    ('aten::max_pool2d_with_indices_backward', 7, 'spatial', 1, NULL),
    ('aten::max_pool3d_with_indices_backward', 7, 'spatial', 1, NULL),
    ('aten::max_unpool2d', 1, 'spatial', 0, NULL), ('aten::max_unpool3d', 1, 'spatial', 0, NULL),
    ('aten::div', 1, 'divisor', NULL, NULL), ('aten::div_', 1, 'divisor', NULL, NULL),
    ('aten::floor_divide', 1, 'divisor', NULL, NULL), ('aten::floor_divide_', 1, 'divisor', NULL, NULL),
    ('aten::remainder', 1, 'divisor', NULL, NULL), ('aten::remainder_', 1, 'divisor', NULL, NULL),
    ('aten::fmod', 1, 'divisor', NULL, NULL), ('aten::fmod_', 1, 'divisor', NULL, NULL)
) AS t(op_name, position, bound, ref_position, dim_position);

-- _replay_sets: one row per argument set of an op that ran GPU work (the rows of op_arg_summary: trace, op name,
-- HLO module and the four recorded lists), ranked as replay_arg_sets; the columns of replay_arg_sets up to
-- kernel_time_mean_ns.
-- @materialize replay
CREATE OR REPLACE VIEW _replay_sets AS
WITH s AS (
    SELECT trace_id, op_name, hlo_module, input_dims, input_type, input_strides, concrete_inputs,
           any_value(dims_json) AS dims_json, any_value(types_json) AS types_json,
           any_value(strides_json) AS strides_json, any_value(concrete_json) AS concrete_json,
           count(*) AS count, sum(t)::BIGINT AS kernel_time_sum_ns, avg(t) AS kernel_time_mean_ns
    FROM _op_arg_instances GROUP BY ALL
)
SELECT trace_id,
       row_number() OVER (PARTITION BY trace_id ORDER BY kernel_time_sum_ns DESC, op_name, hlo_module, input_dims,
                                                       input_type, input_strides, concrete_inputs) AS rank,
       left(md5(concat_ws(chr(31), op_name, hlo_module, types_json, dims_json, strides_json, concrete_json)), 16)
           AS arg_set_id,
       * EXCLUDE (trace_id)
FROM s;

-- _replay_args_raw: one row per recorded argument of each argument set of a PyTorch op with recorded arguments:
-- its position, what was recorded (recorded_type; dims, strides as JSON; concrete as text), the element type's
-- torch_dtype and dtype_kind (perf_dtypes), and what cannot be built from it (why; NULL when it can).
-- @materialize replay
CREATE OR REPLACE VIEW _replay_args_raw AS
WITH a AS (
    SELECT trace_id, rank, op_name, unnest(range(json_array_length(types_json)::BIGINT)) AS position,
           types_json, dims_json, strides_json, concrete_json
    FROM _replay_sets WHERE types_json IS NOT NULL AND dims_json IS NOT NULL AND hlo_module = ''
), r AS (
    SELECT trace_id, rank, op_name, position,
           json_extract_string(types_json, '$[' || position || ']') AS recorded_type,
           json_extract(dims_json, '$[' || position || ']') AS dims,
           json_extract(strides_json, '$[' || position || ']') AS strides,
           json_extract_string(concrete_json, '$[' || position || ']') AS concrete
    FROM a
)
SELECT r.*, d.torch_dtype, d.kind AS dtype_kind,
       CASE WHEN r.recorded_type NOT IN ('', 'Scalar', 'ScalarList', 'TensorList', 'GenericList')
                 AND d.torch_dtype IS NULL
                THEN 'argument ' || r.position || ': unknown element type ' || r.recorded_type
            WHEN r.recorded_type = 'TensorList' AND coalesce(json_array_length(r.dims), 0) = 0
                THEN 'argument ' || r.position || ': the shapes of a tensor list were not recorded'
            WHEN r.recorded_type = 'GenericList'
                THEN 'argument ' || r.position || ': a list whose values the profiler does not record'
       END AS why
FROM r LEFT JOIN perf_dtypes d ON d.type_name = lower(r.recorded_type);

-- replay_arg_sets: one row per argument set of an op that ran GPU work (the rows of op_arg_summary: trace, op
-- name, HLO module and the four recorded lists), with what its replay needs:
--   trace_id, rank        1 for the set with the most GPU time in its trace, then in op_arg_summary's order
--   arg_set_id            16 hex digits naming the op and its recorded lists (the same in every trace)
--   op_name, hlo_module   as in op_arg_summary ('' for an op that is not an HLO op)
--   input_dims, input_type, input_strides, concrete_inputs   as op_arg_summary prints them
--   dims_json, types_json, strides_json, concrete_json        the recorded lists (NULL when not recorded)
--   count                 op instances
--   kernel_time_sum_ns, kernel_time_mean_ns   summed duration of their GPU events, and per instance (ns)
--   kernel_count          their GPU events
--   kernels               the GPU events' names, by summed duration: a list of {name, count, time_ns}
--   unreplayable          why the set cannot be replayed from the trace alone; NULL when a script is written
--                         (whether the installed torch runs it is the script's to say)
CREATE OR REPLACE VIEW replay_arg_sets AS
WITH k AS (
    SELECT s.trace_id, s.rank, g.name_id, count(*) AS n, sum(g.dur_ns)::BIGINT AS time_ns
    FROM _op_arg_instances i
    JOIN _replay_sets s ON s.trace_id = i.trace_id AND s.op_name = i.op_name AND s.hlo_module = i.hlo_module
         AND s.input_dims = i.input_dims AND s.input_type = i.input_type AND s.input_strides = i.input_strides
         AND s.concrete_inputs = i.concrete_inputs
    JOIN _op_gpu g ON g.trace_id = i.trace_id AND g.op_instance = i.op_instance
    GROUP BY ALL
), kl AS (
    SELECT k.trace_id, k.rank, sum(k.n)::BIGINT AS kernel_count,
           list({'name': n.name, 'count': k.n, 'time_ns': k.time_ns} ORDER BY k.time_ns DESC, n.name) AS kernels
    FROM k JOIN _gpu_names n USING (name_id) GROUP BY ALL
), bad AS (  -- per set: the first argument that cannot be built from what was recorded
    SELECT trace_id, rank, min_by(why, position) AS why FROM _replay_args_raw WHERE why IS NOT NULL GROUP BY ALL
)
SELECT s.*, kl.kernel_count, kl.kernels,
       CASE WHEN s.hlo_module <> '' THEN 'an XLA HLO op (JAX): replaying it needs its HLO module, not a PyTorch operator'
            WHEN s.types_json IS NULL OR s.dims_json IS NULL
                THEN 'no arguments recorded (the trace was recorded without record_shapes)'
            WHEN s.op_name = 'record_param_comms'
                THEN 'a collective''s record (record_param_comms): replaying it needs a process group of the job''s ranks'
            WHEN NOT regexp_full_match(s.op_name, '[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_.]*')
                THEN 'not a PyTorch operator (a record_function range, an autograd node, a compiled region or a '
                     || 'kernel): it has no schema to call'
            WHEN json_array_length(s.types_json) <> json_array_length(s.dims_json)
                 OR json_array_length(s.types_json) <> json_array_length(coalesce(s.concrete_json, s.types_json))
                THEN 'the recorded argument lists differ in length'
            ELSE b.why END AS unreplayable
FROM _replay_sets s JOIN kl USING (trace_id, rank) LEFT JOIN bad b USING (trace_id, rank);

-- replay_args: one row per argument of each replayable argument set (replay_arg_sets with unreplayable NULL),
-- in position order: what the replay builds for it.
--   trace_id, rank            the argument set (replay_arg_sets)
--   position                  0-based, as recorded
--   recorded_type             the recorded 'Input type'
--   kind                      'tensor', 'tensor_list', 'scalar', 'scalar_list', or 'unrecorded' (recorded as '':
--                             None, or a value the profiler does not record: str, Device, a list of optional
--                             tensors; the schema says which)
--   dtype                     a tensor's (or each tensor of a list's) torch.dtype name; NULL for other kinds
--   dtype_source              'recorded'; for a tensor list, whose element types are not recorded: 'op' (the
--                             first recorded tensor type of the same op) or 'trace' (the tensor type most
--                             recorded in the trace's argument sets, by calls)
--   shape, strides            JSON: a tensor's recorded dims and strides (a tensor list's: a list of each);
--                             strides NULL when not recorded (the replay makes the tensor contiguous)
--   value                     JSON: a scalar's value (bool, integer, float, or text for inf/nan), a scalar
--                             list's list of them; NULL for other kinds
--   init                      how a tensor is filled: 'normal' (floating-point and complex types: standard normal),
--                             'bool' (a fair coin), 'index' (integers uniform in [0, index_high)), 'offsets'
--                             (an EmbeddingBag's offsets: increasing from 0, below index_high), 'ones' (an
--                             integer divisor), 'zeros' (every other integer or raw type: 0 is valid wherever an
--                             integer indexes)
--   index_high                the exclusive upper bound of an 'index' or 'offsets' tensor (_replay_index_rules)
CREATE OR REPLACE VIEW replay_args AS
WITH r AS (
    SELECT a.* FROM _replay_args_raw a
    JOIN replay_arg_sets s ON s.trace_id = a.trace_id AND s.rank = a.rank AND s.unreplayable IS NULL
), op_dtype AS (
    SELECT trace_id, rank, min_by(torch_dtype, position) AS dtype FROM r WHERE torch_dtype IS NOT NULL GROUP BY ALL
), trace_dtype AS (
    SELECT trace_id, arg_max(torch_dtype, n) AS dtype
    FROM (SELECT a.trace_id, a.torch_dtype, sum(s.count) AS n
          FROM _replay_args_raw a JOIN _replay_sets s USING (trace_id, rank)
          WHERE a.dtype_kind IN ('float', 'complex') GROUP BY ALL)
    GROUP BY ALL
), ref AS (  -- the argument an index rule reads its bound from, and the dimension it names
    SELECT r.trace_id, r.rank, r.position, x.bound, x.ref_position,
           b.dims AS ref_dims, b.concrete AS ref_value, TRY_CAST(dm.concrete AS BIGINT) AS dim
    FROM r JOIN _replay_index_rules x ON x.op_name = r.op_name AND x.position = r.position
    LEFT JOIN r b ON b.trace_id = r.trace_id AND b.rank = r.rank AND b.position = x.ref_position
    LEFT JOIN r dm ON dm.trace_id = r.trace_id AND dm.rank = r.rank AND dm.position = x.dim_position
    WHERE r.dtype_kind = 'int'
), bounds AS (
    SELECT trace_id, rank, position, bound,
           CASE bound
               WHEN 'dim' THEN ref_shape[CASE WHEN coalesce(dim, 0) < 0 THEN len(ref_shape) + dim ELSE coalesce(dim, 0) END + 1]
               WHEN 'value' THEN TRY_CAST(ref_value AS BIGINT)
               WHEN 'class' THEN ref_shape[CASE WHEN len(ref_shape) >= 2 THEN 2 ELSE 1 END]
               WHEN 'numel' THEN list_product(ref_shape)::BIGINT
               WHEN 'spatial' THEN list_product(ref_shape[3:])::BIGINT
               WHEN 'offsets' THEN ref_shape[1]
           END AS index_high
    FROM (SELECT *, from_json(ref_dims, '["BIGINT"]') AS ref_shape FROM ref)
)
SELECT r.trace_id, r.rank, r.position, r.recorded_type,
       CASE r.recorded_type WHEN 'TensorList' THEN 'tensor_list' WHEN 'Scalar' THEN 'scalar'
                            WHEN 'ScalarList' THEN 'scalar_list' WHEN '' THEN 'unrecorded' ELSE 'tensor' END AS kind,
       CASE WHEN r.recorded_type = 'TensorList' THEN coalesce(o.dtype, t.dtype, 'float32') ELSE r.torch_dtype END AS dtype,
       CASE WHEN r.torch_dtype IS NOT NULL THEN 'recorded'
            WHEN r.recorded_type = 'TensorList' THEN CASE WHEN o.dtype IS NOT NULL THEN 'op' ELSE 'trace' END
       END AS dtype_source,
       CASE WHEN r.recorded_type NOT IN ('Scalar', 'ScalarList', '') THEN r.dims END AS shape,
       CASE WHEN r.recorded_type NOT IN ('Scalar', 'ScalarList', '') THEN r.strides END AS strides,
       CASE r.recorded_type
           WHEN 'Scalar' THEN _replay_scalar(r.concrete)
           WHEN 'ScalarList' THEN to_json(CASE WHEN trim(r.concrete) IN ('[]', '') THEN []::JSON[]
                                              ELSE list_transform(string_split(trim(r.concrete, '[] '), ','),
                                                                  lambda x: _replay_scalar(trim(x))) END)
       END AS value,
       CASE WHEN r.recorded_type IN ('Scalar', 'ScalarList', '') THEN NULL
            WHEN b.bound = 'divisor' THEN 'ones'
            WHEN b.bound = 'offsets' AND b.index_high IS NOT NULL THEN 'offsets'
            WHEN b.index_high IS NOT NULL AND b.index_high > 0 THEN 'index'
            WHEN coalesce(r.dtype_kind, ld.kind, 'float') IN ('float', 'complex') THEN 'normal'
            WHEN r.dtype_kind = 'bool' THEN 'bool'
            ELSE 'zeros' END AS init,
       CASE WHEN b.index_high > 0 THEN b.index_high END AS index_high
FROM r LEFT JOIN op_dtype o USING (trace_id, rank) LEFT JOIN trace_dtype t USING (trace_id)
LEFT JOIN bounds b USING (trace_id, rank, position)
LEFT JOIN (SELECT DISTINCT torch_dtype, kind FROM perf_dtypes) ld
       ON r.recorded_type = 'TensorList' AND ld.torch_dtype = coalesce(o.dtype, t.dtype)
ORDER BY r.trace_id, r.rank, r.position;
