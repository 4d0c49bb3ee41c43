-- perf/embedding — FLOPs and bytes of embedding lookups (gathering rows of a table).
--
-- embedding(weight[V, D], indices[...]) and index_select(self[V, D], dim=0, index[n]) read n rows of D
-- elements (n = numel(indices)) and the indices, and write n·D elements: FLOPs = 0, bytes =
-- 2·n·D·bytes(weight) + n·bytes(indices). Only the rows read count, not the whole table. The backward
-- (embedding_dense_backward(grad_output[..., D], indices, num_weights, ...)) reads the gradient rows and the
-- indices and accumulates n·D additions into the V×D gradient (written once): FLOPs = n·D,
-- bytes = n·D·bytes(grad) + n·bytes(indices) + V·D·bytes(grad). Source: the definition of the lookup
-- (native_functions.yaml signatures). The additions run on the vector units (fp32 peak).
--
-- @requires perf/args

-- _perf_embedding: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_embedding AS
SELECT op_name, d_txt, t_txt, c_txt, 'Embedding_fwd' AS family, 0.0 AS flops,
       (2.0 * numel[ii] * dims[1][-1] * bpe[1] + numel[ii] * bpe[ii]) AS bytes, 'fp32' AS precision,
       false AS matrix, format('rows={} D={}', numel[ii], dims[1][-1]) AS shape
FROM (SELECT *, CASE WHEN op_name = 'aten::embedding' THEN 2 ELSE 3 END AS ii FROM _perf_arg_sets
      WHERE op_name = 'aten::embedding'
         OR (op_name = 'aten::index_select' AND len(conc) >= 2 AND conc[2] = '0'))
WHERE len(dims[1]) = 2 AND numel[ii] IS NOT NULL AND bpe[1] IS NOT NULL
UNION ALL
SELECT op_name, d_txt, t_txt, c_txt, 'Embedding_bwd', (numel[2] * dims[1][-1])::DOUBLE,
       (numel[1] * bpe[1] + numel[2] * bpe[2] + TRY_CAST(conc[3] AS BIGINT) * dims[1][-1] * bpe[1])::DOUBLE,
       'fp32', false, format('rows={} D={}', numel[2], dims[1][-1])
FROM _perf_arg_sets
WHERE op_name = 'aten::embedding_dense_backward' AND numel[1] IS NOT NULL AND numel[2] IS NOT NULL
      AND TRY_CAST(conc[3] AS BIGINT) IS NOT NULL;
