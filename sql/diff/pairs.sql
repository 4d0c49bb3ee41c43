-- diff/pairs — how two traces are compared: a baseline and a variant, side by side per key.
--
-- Every level of the diff (diff/timeline, diff/categories, diff/ops, diff/kernels, ...) is a table macro taking
-- the two trace_ids, diff_<level>(base_id, variant_id). Each reads one per-trace view of the library through a
-- source view of this folder with the columns (trace_id, k, n, v_ns): k the key of a row as a STRUCT of text
-- fields ('' for a field that is not recorded), n a count and v_ns the value compared, int64 ns. The rows of
-- the two traces are joined on k (a full outer join): a key present on one side only is kept and flagged.
-- A side may be several traces, their trace_ids separated by commas (the ranks of a job): its n and v_ns are
-- then the sums over them, per key. The two traces may come from two datasets opened in one connection
-- (tracesql/api/diff.py open_sides): the macros see trace_ids only.
--
-- Definitions shared by every level:
--   side         'both', 'base_only' (the key has no row in the variant) or 'variant_only'
--   base_*       the baseline's value (NULL when the key is not in the baseline)
--   variant_*    the variant's value (NULL when the key is not in the variant)
--   diff_ns      variant_ns - base_ns, a missing side counting as 0 (positive: the variant takes longer)
--   ratio        variant_ns / base_ns (NULL when a side is missing or base_ns is 0)
-- Rows are ordered by |diff_ns| descending, then by key.

-- _diff_in(trace_id, ids): whether trace_id is one of ids, a trace_id or several separated by commas (a side made
-- of several traces: the ranks of a job).
CREATE OR REPLACE MACRO _diff_in(trace_id, ids) AS list_contains(string_split(ids, ','), trace_id);

-- _diff_sides(src, base_id, variant_id): the rows of the source view `src` (a view name) of the two sides joined
-- on k: k, side, base_count, variant_count, base_ns, variant_ns, diff_ns, ratio (see above). A side of several
-- traces (base_id or variant_id naming several, comma-separated) has the sum of their n and v_ns per key.
CREATE OR REPLACE MACRO _diff_sides(src, base_id, variant_id) AS TABLE
WITH b AS (SELECT k, sum(n) AS n, sum(v_ns) AS v_ns FROM query_table(src) WHERE _diff_in(trace_id, base_id)
           GROUP BY k),
     v AS (SELECT k, sum(n) AS n, sum(v_ns) AS v_ns FROM query_table(src) WHERE _diff_in(trace_id, variant_id)
           GROUP BY k)
SELECT coalesce(b.k, v.k) AS k,
       CASE WHEN v.k IS NULL THEN 'base_only' WHEN b.k IS NULL THEN 'variant_only' ELSE 'both' END AS side,
       b.n::BIGINT AS base_count, v.n::BIGINT AS variant_count,
       b.v_ns::BIGINT AS base_ns, v.v_ns::BIGINT AS variant_ns,
       (coalesce(v.v_ns, 0) - coalesce(b.v_ns, 0))::BIGINT AS diff_ns,
       (v.v_ns / nullif(b.v_ns, 0))::DOUBLE AS ratio
FROM b FULL OUTER JOIN v ON b.k = v.k;
