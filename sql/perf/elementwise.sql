-- perf/elementwise — FLOPs and bytes of unary and binary elementwise ops, and of copies.
--
-- An elementwise op computes each output element from the elements at the same position of its inputs:
--   unary   out = f(x):        FLOPs = numel(out), bytes = numel(x)·bytes(x) + numel(out)·bytes(out)
--   binary  out = x ∘ y:       the output has the broadcast shape of x and y (each dimension the larger of the
--                              two, shapes aligned at the last dimension; PyTorch's broadcasting semantics);
--                              FLOPs = numel(out), bytes = numel(x)·bytes(x) + numel(y)·bytes(y)
--                              + numel(out)·bytes(out)
--   copy    dst.copy_(src) / clone / contiguous:  FLOPs = 0, bytes = numel(src)·bytes(src) + numel(dst)·bytes(dst)
-- One FLOP per output element whatever the function (exp, silu and rsqrt are counted as one operation, as in
-- TraceLens PerfModel/perf_model.py UnaryElementwise.flops_func and BinaryElementwise.flops_func). The output
-- has the first tensor argument's type when that one has the output's shape (in-place and same-type ops), else
-- the other's; copy_'s destination is its first argument. The compute precision is fp32 whatever the storage
-- type: PyTorch's elementwise kernels compute in at::opmath_type, float for half and bfloat16
-- (aten/src/ATen/OpMathType.h), on the vector units.
--
-- @requires perf/args

-- _perf_unary_ops / _perf_binary_ops: the op names of each kind (aten names without and with the in-place _).
CREATE OR REPLACE VIEW _perf_unary_ops AS
SELECT unnest(['abs', 'neg', 'exp', 'exp2', 'expm1', 'log', 'log2', 'log10', 'log1p', 'sqrt', 'rsqrt', 'sin', 'cos',
               'tan', 'tanh', 'sigmoid', 'silu', 'gelu', 'relu', 'relu6', 'leaky_relu', 'elu', 'selu', 'mish',
               'hardswish', 'hardsigmoid', 'softplus', 'erf', 'erfc', 'reciprocal', 'sign', 'floor', 'ceil',
               'round', 'trunc', 'frac', 'logical_not', 'bitwise_not', 'isnan', 'nan_to_num', 'clamp',
               'clamp_min', 'clamp_max', 'fill', 'zero', 'square', 'sgn', 'sinh', 'cosh', 'asin', 'acos',
               'atan', 'threshold', 'dropout', 'native_dropout']) AS base;

CREATE OR REPLACE VIEW _perf_binary_ops AS
SELECT unnest(['add', 'sub', 'rsub', 'mul', 'div', 'pow', 'maximum', 'minimum', 'max', 'min', 'fmod', 'remainder',
               'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'logical_and', 'logical_or', 'logical_xor', 'bitwise_and',
               'bitwise_or', 'bitwise_xor', 'atan2', 'hypot', 'where', 'masked_fill', 'lerp', 'addcmul',
               'addcdiv', 'floor_divide', 'silu_backward', 'gelu_backward', 'threshold_backward',
               'sigmoid_backward', 'tanh_backward']) AS base;

-- _perf_broadcast_numel(a, b): elements of the broadcast of two shapes.
CREATE OR REPLACE MACRO _perf_broadcast_numel(a, b) AS
    _perf_numel(list_transform(range(1, greatest(len(a), len(b)) + 1),
                               lambda i: greatest(coalesce(a[-i], 1), coalesce(b[-i], 1))));

-- _perf_elementwise: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_elementwise AS
WITH k AS (
    SELECT s.*, regexp_replace(regexp_replace(s.op_name, '^aten::', ''), '_$', '') AS base,
           list_filter(range(1, len(s.dims) + 1), lambda i: s.numel[i] IS NOT NULL) AS t  -- tensor arguments
    FROM _perf_arg_sets s WHERE s.op_name LIKE 'aten::%'
), u AS (
    SELECT op_name, d_txt, t_txt, c_txt, 'UnaryElementwise' AS family, numel[t[1]] AS n_out,
           numel[t[1]] * bpe[t[1]] AS in_bytes, bpe[t[1]] AS out_bpe, 1 AS flop_per
    FROM k WHERE base IN (SELECT base FROM _perf_unary_ops) AND len(t) >= 1
), c AS (
    SELECT op_name, d_txt, t_txt, c_txt, 'Copy' AS family, numel[t[1]] AS n_out,
           numel[t[2]] * bpe[t[2]] AS in_bytes, bpe[t[1]] AS out_bpe, 0 AS flop_per
    FROM k WHERE base = 'copy' AND len(t) >= 2
    UNION ALL
    SELECT op_name, d_txt, t_txt, c_txt, 'Copy', numel[t[1]], numel[t[1]] * bpe[t[1]], bpe[t[1]], 0
    FROM k WHERE base IN ('clone', 'contiguous', '_to_copy') AND len(t) >= 1
), b AS (
    SELECT op_name, d_txt, t_txt, c_txt, 'BinaryElementwise' AS family,
           _perf_broadcast_numel(dims[t[1]], coalesce(dims[t[2]], [])) AS n_out,
           numel[t[1]] * bpe[t[1]] + coalesce(numel[t[2]] * bpe[t[2]], 0)
             + coalesce(numel[t[3]] * bpe[t[3]], 0) AS in_bytes,
           CASE WHEN numel[t[1]] = _perf_broadcast_numel(dims[t[1]], coalesce(dims[t[2]], [])) OR len(t) = 1
                THEN bpe[t[1]] ELSE bpe[t[2]] END AS out_bpe, 1 AS flop_per
    FROM k WHERE base IN (SELECT base FROM _perf_binary_ops) AND len(t) >= 1
              AND (base NOT IN ('max', 'min') OR len(t) >= 2)    -- max(x) is a reduction
)
SELECT op_name, d_txt, t_txt, c_txt, family, (flop_per * n_out)::DOUBLE AS flops,
       (in_bytes + n_out * out_bpe)::DOUBLE AS bytes, 'fp32' AS precision, false AS matrix,
       format('numel={}', n_out) AS shape
FROM (SELECT * FROM u UNION ALL SELECT * FROM c UNION ALL SELECT * FROM b)
WHERE n_out IS NOT NULL AND out_bpe IS NOT NULL;
