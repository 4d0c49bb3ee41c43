-- diff/modules — GPU time per nn.Module instance (by module path) of two traces compared.
--
-- @requires diff/pairs tree/rollups

-- _diff_module_src: module_gpu_time per module path (see diff/pairs for the columns): k {module_path}, n the
-- calls of that module instance, v_ns the Σ duration of the GPU events launched anywhere inside them.
-- @materialize diff-modules
CREATE OR REPLACE VIEW _diff_module_src AS
SELECT trace_id, {'module_path': coalesce(module_path, '')} AS k, count(*) AS n, sum(subtree_gpu_sum_ns)::BIGINT AS v_ns
FROM module_gpu_time GROUP BY trace_id, module_path;

-- diff_modules(base_id, variant_id): GPU time per nn.Module instance of the trace variant_id against that of
-- base_id; one row per module path of module_gpu_time present in either trace (the instance names from the
-- outermost module down, '/'-joined, e.g. `Qwen2Model_0/Qwen2DecoderLayer_3/Qwen2MLP_3`):
--   module_path                 the module instance
--   side                        both | base_only | variant_only (diff/pairs)
--   base_count, variant_count   calls of the instance in each trace
--   base_ns, variant_ns         Σ duration of the GPU events launched inside those calls, ns
--                               (module_gpu_time.subtree_gpu_sum_ns; a module's time includes its children's)
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
-- Ordered by |diff_ns| descending, then module path (an outer module before the ones inside it on ties).
-- @output diff-level 7 modules KEYS module_path
CREATE OR REPLACE MACRO diff_modules(base_id, variant_id) AS TABLE
SELECT k.module_path AS module_path, d.* EXCLUDE (k)
FROM _diff_sides('_diff_module_src', base_id, variant_id) d
ORDER BY abs(diff_ns) DESC, module_path;
