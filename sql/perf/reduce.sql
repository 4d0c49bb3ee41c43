-- perf/reduce — FLOPs and bytes of reductions (sum, mean, max, ...) and of softmax, forward and backward.
--
--   reduction  out = reduce(x, dims):  FLOPs = numel(x) (one combining operation per input element),
--              bytes = numel(x)·bytes(x) + numel(out)·bytes(x), numel(out) = numel(x) / Π sizes of the reduced
--              dimensions (all dimensions when none is given). Source: TraceLens PerfModel/perf_model.py
--              (Reduce.flops_func, Reduce.bytes_func); the reduced dimensions are the op's `dim` argument
--              (native_functions.yaml: sum.dim_IntList(self, dim, keepdim, dtype), mean.dim, amax(self, dim),
--              ...), recorded in Concrete Inputs.
--   softmax    y = exp(x − max) / Σ exp(x − max) along one dimension: FLOPs = 3·numel (exponent, sum, division,
--              as TraceLens Softmax.flops_func), bytes = numel·(bytes(x) + bytes(y)).
--   softmax backward (_softmax_backward_data(grad_output, output, dim, input_dtype)):
--              dx = y ⊙ (dy − Σ dy ⊙ y): FLOPs = 4·numel (multiply, sum, subtract, multiply), bytes = reads dy
--              and y, writes dx.
-- The compute precision is fp32 (at::opmath_type accumulation on the vector units, see perf/elementwise).
--
-- @requires perf/args perf/elementwise

-- _perf_reduce: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_reduce AS
WITH k AS (
    SELECT s.*, regexp_replace(s.op_name, '^aten::', '') AS base FROM _perf_arg_sets s
), r AS (
    SELECT *, dims[1] AS x,
           CASE WHEN len(conc) >= 2 AND conc[2] LIKE '[%' THEN
                list_transform(regexp_extract_all(conc[2], '-?\d+'), lambda v: v::BIGINT) END AS rd
    FROM k WHERE base IN ('sum', 'mean', 'amax', 'amin', 'max', 'min', 'prod', 'norm', 'linalg_vector_norm',
                          'var', 'std', 'var_mean', 'std_mean', 'argmax', 'argmin', 'all', 'any', 'logsumexp')
           AND numel[1] IS NOT NULL AND (len(numel) < 2 OR numel[2] IS NULL)  -- max(x, y) is binary
), ro AS (
    SELECT *, CASE WHEN rd IS NULL OR len(rd) = 0 THEN 1
                   ELSE numel[1] // _perf_numel(list_transform(rd, lambda d: x[CASE WHEN d < 0 THEN len(x) + d + 1
                                                                                   ELSE d + 1 END])) END AS n_out
    FROM r
), sm AS (
    SELECT *, CASE WHEN base IN ('_softmax_backward_data', '_log_softmax_backward_data') THEN 4 ELSE 3 END AS fpe
    FROM k WHERE base IN ('_softmax', 'softmax', '_log_softmax', 'log_softmax', '_softmax_backward_data',
                          '_log_softmax_backward_data') AND numel[1] IS NOT NULL
)
SELECT op_name, d_txt, t_txt, c_txt, 'Reduce' AS family, numel[1]::DOUBLE AS flops,
       (numel[1] * bpe[1] + n_out * bpe[1])::DOUBLE AS bytes, 'fp32' AS precision, false AS matrix,
       format('numel={} out={}', numel[1], n_out) AS shape
FROM ro WHERE n_out IS NOT NULL
UNION ALL
SELECT op_name, d_txt, t_txt, c_txt, CASE WHEN fpe = 4 THEN 'Softmax_bwd' ELSE 'Softmax_fwd' END,
       (fpe * numel[1])::DOUBLE,
       (CASE WHEN fpe = 4 THEN numel[1] * bpe[1] + numel[2] * bpe[2] + numel[1] * bpe[1]
             ELSE 2 * numel[1] * bpe[1] END)::DOUBLE,
       'fp32', false, format('numel={}', numel[1])
FROM sm;
