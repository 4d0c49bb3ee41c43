-- peers/tracelens/perf_triton — TraceLens (0.1.0) perf model of torch.compile's Triton kernels (ops named
-- triton_poi_*, triton_red_*, triton_per_*), as unified_perf_summary.csv shows them.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/PerfModel/triton_compiled_perf_model.py (TritonCompiledPerfModel, _meta_from_trace_args,
-- _parse_kernel_name, the per-op FLOPs table _FLOPS_PER_ELEM and the dtype sizes _C10_DTYPE_BYTES); the code is
-- ours. Only the model's trace-intrinsic path is reproduced: its fallback reads Inductor's cache files on the
-- machine that runs TraceLens, which a trace does not carry.
--   instance   an op whose args have Concrete Inputs, Input Dims and Input type (non-empty) and at least one
--              Concrete Input that is an integer; others have no model (has_perf_model False in TraceLens).
--   xnumel, rnumel  reductions (triton_red_, triton_per_) with two or more integer Concrete Inputs: the last two;
--              otherwise the last one and 1.
--   fused_ops  the name's middle part (triton_<kind>_fused_<part>_<n>) split at '_' and segmented into torch op
--              names (peers/tracelens/torch_op_names.csv): the segmentation ending at each token boundary keeps
--              the longest name, read back from the end; no segmentation of the whole part, no ops. Printed
--              'aten.<op>, aten.<op>, ...'.
--   FLOPs      (sum of the ops' FLOPs per element: add, sub, mul, div, relu, mean, sum, abs, neg, ne, eq, lt,
--              gt 1; pow, sqrt, rsqrt, var, reciprocal 2; exp, log, sigmoid, tanh, silu 4; gelu 8; others 0)
--              · xnumel · rnumel.
--   bytes      sum over the (Input Dims, Input type) pairs that are not Scalar and have a shape: elements ·
--              bytes of the c10 type (c10::BFloat16, Half 2; Float, Int 4; Double, Long 8; Byte, Char 1; any
--              other name, e.g. the profiler's 'float', 0: a TraceLens gap reproduced); pointwise kernels add
--              the first such tensor's element size · xnumel (the output written over an input).
--   Compute Spec  'vector_' + the first sized type's name after '::', lower case ('vector_bfloat16').
--
-- @requires lib/pytext peers/tracelens/perf_ops

-- _tl_torch_op_names: the torch op names (one row per name) of the shipped list torch_op_names.csv.
--   name   the op name (without namespace)
CREATE OR REPLACE VIEW _tl_torch_op_names AS
SELECT DISTINCT trim(l) AS name
FROM (SELECT unnest(string_split(replace(content, chr(13), ''), chr(10))) AS l
      FROM read_text('${SQL_DIR}/peers/tracelens/torch_op_names.csv'))
WHERE trim(l) NOT IN ('', 'name') AND NOT starts_with(l, '#');

-- _tl_triton_op_flops: TraceLens's FLOPs per element of an op fused into a Triton kernel.
--   op      the op name with its namespace ('aten.add')
--   flops   FLOPs per element
CREATE OR REPLACE VIEW _tl_triton_op_flops AS
SELECT * FROM (VALUES
    ('aten.add', 1), ('aten.sub', 1), ('aten.mul', 1), ('aten.div', 1), ('aten.pow', 2), ('aten.sqrt', 2),
    ('aten.rsqrt', 2), ('aten.exp', 4), ('aten.log', 4), ('aten.sigmoid', 4), ('aten.tanh', 4), ('aten.relu', 1),
    ('aten.silu', 4), ('aten.gelu', 8), ('aten.mean', 1), ('aten.sum', 1), ('aten.var', 2), ('aten.abs', 1),
    ('aten.neg', 1), ('aten.reciprocal', 2), ('aten.ne', 1), ('aten.eq', 1), ('aten.lt', 1), ('aten.gt', 1)
) t(op, flops);

-- _tl_triton_fused_ops: the fused ops TraceLens reads from each Triton kernel name of a trace (see the top).
--   name      the kernel (op) name
--   ops       the op names in order, 'aten.' prefixed (empty when the name does not segment)
CREATE OR REPLACE VIEW _tl_triton_fused_ops AS
WITH RECURSIVE k AS (
    SELECT DISTINCT name, string_split(regexp_extract(name, '^triton_(?:poi|red|per)_fused_(.+)_(\d+)$', 1), '_') AS tok
    FROM events WHERE cat = 'cpu_op' AND regexp_matches(name, '^triton_(poi|red|per)_')
), sp AS (
    SELECT name, tok, unnest(generate_series(0, len(tok) - 1)) AS j FROM k
), c AS MATERIALIZED (   -- every token span tok[j+1 .. i] that is an op name: (name, j, i, cand)
    SELECT name, j, i, cand
    FROM (SELECT name, j, i, array_to_string(tok[j + 1:i], '_') AS cand
          FROM (SELECT *, unnest(generate_series(j + 1, len(tok))) AS i FROM sp))
    SEMI JOIN _tl_torch_op_names o ON o.name = cand
), reach(name, pos) AS (   -- token boundaries a segmentation of the prefix reaches
    SELECT name, 0 FROM k
    UNION
    SELECT c.name, c.i FROM reach r JOIN c ON c.name = r.name AND c.j = r.pos
), best AS (   -- at each boundary, the longest op name ending there over a reachable start
    SELECT c.name, c.i, arg_min(c.j, c.j) AS j, arg_min(c.cand, c.j) AS cand
    FROM c SEMI JOIN reach r ON r.name = c.name AND r.pos = c.j
    GROUP BY c.name, c.i
), back(name, pos, ops) AS (   -- read back from the end of the part
    SELECT k.name, len(k.tok), []::VARCHAR[] FROM k SEMI JOIN reach r ON r.name = k.name AND r.pos = len(k.tok)
    UNION ALL
    SELECT b.name, x.j, list_prepend('aten.' || x.cand, b.ops)
    FROM back b JOIN best x ON x.name = b.name AND x.i = b.pos
    WHERE b.pos > 0
)
SELECT k.name, coalesce((SELECT ops FROM back b WHERE b.name = k.name AND b.pos = 0), []::VARCHAR[]) AS ops
FROM k;

-- _tl_perf_triton: one row per Triton kernel op TraceLens models, in _tl_perf_summary's input form (trace_id,
-- event_id, params: fused_ops, xnumel, rnumel; flops; bytes; compute_spec).
CREATE OR REPLACE VIEW _tl_perf_triton AS
WITH e AS (
    SELECT trace_id, event_id, name,
           list_transform(json_extract(input_dims, '$[*]'), lambda x: x) AS dims,
           list_transform(json_extract(input_types, '$[*]'), lambda x: x ->> '$') AS ty,
           list_transform(list_filter(json_extract(concrete_inputs, '$[*]'),
                                      lambda x: regexp_matches(x ->> '$', '^\s*[+-]?[0-9]+\s*$')),
                          lambda x: trim(x ->> '$')::HUGEINT) AS sc,
           regexp_matches(name, '^triton_(red|per)_') AS red, starts_with(name, 'triton_poi_') AS poi
    FROM events
    WHERE cat = 'cpu_op' AND regexp_matches(name, '^triton_(poi|red|per)_')
          AND json_array_length(concrete_inputs) > 0 AND json_array_length(input_dims) > 0
          AND json_array_length(input_types) > 0
), m AS (
    SELECT *,
           CASE WHEN red AND len(sc) >= 2 THEN sc[-2] ELSE sc[-1] END AS xnumel,
           CASE WHEN red AND len(sc) >= 2 THEN sc[-1] ELSE 1 END AS rnumel,
           list_filter(list_transform(range(1, least(len(dims), len(ty)) + 1),
                                      lambda i: {'n': _tl_numel(_tl_shape(dims[i])), 't': ty[i],
                                                 'b': CASE ty[i] WHEN 'c10::BFloat16' THEN 2 WHEN 'c10::Half' THEN 2
                                                                 WHEN 'c10::Float' THEN 4 WHEN 'c10::Double' THEN 8
                                                                 WHEN 'c10::Byte' THEN 1 WHEN 'c10::Char' THEN 1
                                                                 WHEN 'c10::Int' THEN 4 WHEN 'c10::Long' THEN 8
                                                                 ELSE 0 END,
                                                 'ok': ty[i] IS DISTINCT FROM 'Scalar'
                                                       AND json_type(dims[i]) = 'ARRAY'
                                                       AND json_array_length(dims[i]) > 0}),
                       lambda p: p.ok) AS ptrs
    FROM e WHERE len(sc) > 0
)
SELECT m.trace_id, m.event_id,
       [{'k': 'fused_ops', 'v': array_to_string(f.ops, ', '), 't': 's'},
        {'k': 'xnumel', 'v': m.xnumel::VARCHAR, 't': 'i'}, {'k': 'rnumel', 'v': m.rnumel::VARCHAR, 't': 'i'}] AS params,
       (coalesce((SELECT sum(t.flops) FROM unnest(f.ops) u(op) JOIN _tl_triton_op_flops t ON t.op = u.op), 0)
        * m.xnumel * m.rnumel)::DOUBLE AS flops,
       (coalesce(list_sum(list_transform(m.ptrs, lambda p: p.n * p.b)), 0)
        + CASE WHEN m.poi AND len(m.ptrs) > 0 THEN m.ptrs[1].b * m.xnumel ELSE 0 END)::DOUBLE AS bytes,
       'vector_' || lower(string_split(list_filter(m.ptrs, lambda p: p.b > 0)[1].t, '::')[-1]) AS compute_spec
FROM m JOIN _tl_triton_fused_ops f ON f.name = m.name;
