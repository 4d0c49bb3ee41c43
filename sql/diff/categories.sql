-- diff/categories — GPU time per kernel category (default rules) of two traces compared.
--
-- @requires diff/pairs categories/kernels

-- _diff_category_src: kernel_category_summary under the default rules (see diff/pairs for the columns):
-- k {kernel_category}, n its GPU events, v_ns its Σ duration in ns (total_time_ms is Σdur_ns / 1e6, turned back
-- to the exact integer).
-- @materialize diff-categories
CREATE OR REPLACE VIEW _diff_category_src AS
SELECT trace_id, {'kernel_category': kernel_category} AS k, count AS n, round(total_time_ms * 1e6)::BIGINT AS v_ns
FROM kernel_category_summary WHERE ruleset = 'default';

-- diff_kernel_categories(base_id, variant_id): GPU time per kernel category of the trace variant_id against
-- that of base_id; one row per category of the default rules present in either trace (kernel_category_summary:
-- Σ duration of every GPU event of the category, concurrent streams counted twice):
--   kernel_category             the category
--   side                        both | base_only | variant_only (diff/pairs)
--   base_count, variant_count   GPU events of the category in each trace
--   base_ns, variant_ns         their summed duration, ns
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
-- Ordered by |diff_ns| descending.
-- @output diff-level 4 categories KEYS kernel_category
CREATE OR REPLACE MACRO diff_kernel_categories(base_id, variant_id) AS TABLE
SELECT k.kernel_category AS kernel_category, d.* EXCLUDE (k)
FROM _diff_sides('_diff_category_src', base_id, variant_id) d
ORDER BY abs(diff_ns) DESC, kernel_category;
