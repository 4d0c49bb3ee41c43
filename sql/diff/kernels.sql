-- diff/kernels — GPU time per kernel (short name) of two traces compared. Kernel names rarely match across
-- vendors, libraries or their versions: across platforms compare ops and argument sets (diff/ops) instead.
--
-- @requires diff/pairs gpu/kernel_summary

-- _diff_kernel_src: kernel_summary (short names; see diff/pairs for the columns): k {name, activity_class}, n
-- GPU events, v_ns their summed duration.
-- @materialize diff-kernels
CREATE OR REPLACE VIEW _diff_kernel_src AS
SELECT trace_id, {'name': coalesce(name, ''), 'activity_class': coalesce(activity_class, '')} AS k, count AS n, total_ns AS v_ns
FROM kernel_summary;

-- diff_kernels(base_id, variant_id): GPU time per kernel short name of the trace variant_id against that of
-- base_id; one row per (short name, class) of kernel_summary present in either trace (every GPU event but
-- cuda_sync waits):
--   name, activity_class        the kernel's short name and class (kernel_summary)
--   side                        both | base_only | variant_only (diff/pairs)
--   base_count, variant_count   GPU events of that name in each trace
--   base_ns, variant_ns         their summed duration, ns (kernel_summary.total_ns)
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
-- Ordered by |diff_ns| descending.
-- @output diff-level 8 kernels KEYS name activity_class
CREATE OR REPLACE MACRO diff_kernels(base_id, variant_id) AS TABLE
SELECT k.name AS name, k.activity_class AS activity_class, d.* EXCLUDE (k)
FROM _diff_sides('_diff_kernel_src', base_id, variant_id) d
ORDER BY abs(diff_ns) DESC, name, activity_class;
