-- gpu/op_summaries — GPU time per op (name, and name with its input shapes), and short kernels.
--
-- A GPU event belongs to the op tree/attribution gives it (gpu_event_attribution): the innermost cpu_op around
-- the call that launched it, or on a JAX trace the HLO op (tree/hlo_ops); for a graph replay's work, the op of its
-- twin trace (capture or eager run) or its
-- graph node's tag; else its launch site (the innermost named CPU context around the launch); else, as
-- placeholders, the launch API in brackets ('[cudaGraphLaunch]') or '[no launch]' when its launch is not in the
-- trace. Kernel time here is the summed duration of the op's GPU events (cuda_sync waits excluded): additive,
-- so the percentages of all ops add up to 100.
--
-- @requires lib/pytext gpu/activity tree/context tree/links tree/attribution lib/stats tree/hlo_instructions

-- _op_gpu: the counted GPU events with the op they belong to (see the top of this file); the kernel name as
-- name_id (see _gpu_names).
--   op_name, source, op_instance   as in gpu_event_attribution
--   op_trace_id, attr_event_id     the op's event (a cpu_op or launch site, in op_trace_id; NULL: none)
--   op_event_id                    the cpu_op of this trace around the launch (source 'op' only)
--   launch_ts_ns                   CPU start of the call that launched it (gpu_launch_links)
--   hlo_module, framework_op       an HLO op's module and framework op path (gpu_event_attribution)
-- @materialize report perf summary diff replay
CREATE OR REPLACE VIEW _op_gpu AS
SELECT a.trace_id, a.event_id, n.name_id, a.cat, a.ts_ns, a.dur_ns,
       CASE WHEN a.source = 'op' THEN a.op_event_id END AS op_event_id,
       a.op_name, a.source, a.op_instance, a.op_trace_id, a.op_event_id AS attr_event_id, a.launch_ts_ns,
       a.hlo_module, a.framework_op
FROM gpu_event_attribution a
JOIN _gpu_names n ON n.cat IS NOT DISTINCT FROM a.cat AND n.name IS NOT DISTINCT FROM a.name
WHERE a.cat <> 'cuda_sync';

-- _op_args: the input description of every op event GPU work is attributed to (cpu_ops of the trace or of a
-- twin, launch sites; an HLO op's call: the operands of its instruction, dims and element types, when the trace
-- carries its module), as text (NULL when the trace was recorded without shapes). The text is made once per
-- distinct JSON value (few shapes, many calls); dims_json, types_json, strides_json, concrete_json are the
-- recorded JSON lists themselves (an HLO op's: its operands' dims and element types).
CREATE OR REPLACE VIEW _op_args AS
WITH raw AS (
    SELECT e.trace_id, e.event_id, e.name,
           e.input_dims::VARCHAR AS d, e.input_types::VARCHAR AS ty, e.input_strides::VARCHAR AS st,
           e.concrete_inputs::VARCHAR AS ci
    FROM events e
    JOIN (SELECT DISTINCT op_trace_id, attr_event_id FROM _op_gpu
          WHERE attr_event_id IS NOT NULL AND source <> 'hlo op') o
      ON o.op_trace_id = e.trace_id AND o.attr_event_id = e.event_id
    UNION ALL
    SELECT trace_id, instance_event_id, hlo_op, d_txt, t_txt, NULL, NULL FROM hlo_op_calls
), texts AS (
    SELECT v, _py_tuple3(v::JSON) AS py
    FROM (SELECT d AS v FROM raw UNION SELECT ty FROM raw UNION SELECT st FROM raw UNION SELECT ci FROM raw)
    WHERE v IS NOT NULL
)
SELECT r.trace_id, r.event_id, r.name, td.py AS input_dims, tt.py AS input_type, ts.py AS input_strides,
       tc.py AS concrete_inputs, r.d AS dims_json, r.ty AS types_json, r.st AS strides_json, r.ci AS concrete_json
FROM raw r
LEFT JOIN texts td ON td.v = r.d LEFT JOIN texts tt ON tt.v = r.ty
LEFT JOIN texts ts ON ts.v = r.st LEFT JOIN texts tc ON tc.v = r.ci;

-- op_summary: one row per (trace, op name, HLO module).
--   op_name            the op (or '[launch API]', '[no launch]'), see the top of this file
--   hlo_module         JAX: the XLA module of the HLO op (an HLO op name is unique within its module only);
--                      NULL for every other op
--   framework_op       JAX: the framework op path of the HLO op (jit(f)/dot_general; the first in text order
--                      when its GPU events name several); NULL for every other op
--   source             where the op comes from (gpu_event_attribution.source: hlo op, op, graph node, capture,
--                      eager, launch site, launch api, no launch); '+'-joined when its GPU events have several
--   op_count           op instances that launched GPU work (gpu_event_attribution.op_instance; 0 for the
--                      placeholders)
--   kernel_count       their GPU events
--   kernel_time_ns     summed duration of those GPU events, ns
--   mean_per_op_ns     kernel_time_ns / op_count (ns; NULL for the placeholders)
--   time_pct           100 kernel_time_ns / all GPU time of the trace
--   cumulative_pct     running sum of time_pct in decreasing order of kernel time
-- @output report-native 10 op_summary \
--     COLUMNS trace_id trace op_name hlo_module framework_op source op_count kernel_count kernel_time_ns:us \
--     mean_per_op_ns:us time_pct cumulative_pct \
--     TITLE "Ops by GPU time" \
--     ABOUT "One row per op (a cpu_op, an HLO op, a graph replay's twin op, or a placeholder): calls, GPU events and their summed duration; µs and share." \
--     ORDER BY trace, kernel_time_ns DESC, op_name, hlo_module
CREATE OR REPLACE VIEW op_summary AS
WITH g AS (
    SELECT trace_id, op_name, hlo_module, min(framework_op) AS framework_op,
           string_agg(DISTINCT source, '+' ORDER BY source) AS source,
           count(DISTINCT op_instance) FILTER (WHERE source NOT IN ('launch api', 'no launch')) AS op_count,
           count(*) AS kernel_count, sum(dur_ns)::BIGINT AS kernel_time_ns
    FROM _op_gpu GROUP BY trace_id, op_name, hlo_module
)
SELECT trace_id, op_name, hlo_module, framework_op, source, op_count, kernel_count, kernel_time_ns,
       kernel_time_ns / nullif(op_count, 0) AS mean_per_op_ns,
       100.0 * kernel_time_ns / sum(kernel_time_ns) OVER (PARTITION BY trace_id) AS time_pct,
       100.0 * sum(kernel_time_ns) OVER (PARTITION BY trace_id ORDER BY kernel_time_ns DESC, op_name, hlo_module
                                         ROWS UNBOUNDED PRECEDING)
             / sum(kernel_time_ns) OVER (PARTITION BY trace_id) AS cumulative_pct
FROM g ORDER BY trace_id, kernel_time_ns DESC, op_name, hlo_module;

-- _op_arg_instances: one row per op instance with attributed GPU work (gpu_event_attribution.op_instance) and the
-- op event it is attributed to, with that event's recorded arguments:
--   op_instance, op_trace_id, attr_event_id, op_name   as in _op_gpu
--   hlo_module                              JAX: the HLO op's module ('' for every other op)
--   t                                       summed duration of its GPU events, ns
--   input_dims, input_type, input_strides, concrete_inputs   Python-style text of the recorded lists ('' when
--                                           not recorded), as _op_args
--   dims_json, types_json, strides_json, concrete_json        the recorded JSON lists (NULL when not recorded)
-- @materialize replay
CREATE OR REPLACE VIEW _op_arg_instances AS
WITH inst AS (
    SELECT g.trace_id, g.op_instance, any_value(g.op_trace_id) AS op_trace_id,
           any_value(g.attr_event_id) AS attr_event_id, any_value(g.op_name) AS op_name,
           coalesce(any_value(g.hlo_module), '') AS hlo_module, sum(g.dur_ns) AS t
    FROM _op_gpu g WHERE g.attr_event_id IS NOT NULL GROUP BY g.trace_id, g.op_instance
)
SELECT i.*, coalesce(a.input_dims, '') AS input_dims, coalesce(a.input_type, '') AS input_type,
       coalesce(a.input_strides, '') AS input_strides, coalesce(a.concrete_inputs, '') AS concrete_inputs,
       a.dims_json, a.types_json, a.strides_json, a.concrete_json
FROM inst i LEFT JOIN _op_args a ON a.trace_id = i.op_trace_id AND a.event_id = i.attr_event_id;

-- op_arg_summary: one row per (trace, op name, HLO module, input dims, input types, input strides, concrete
-- inputs): the same op called on the same shapes. Statistics are over op instances, of each instance's kernel
-- time (summed duration of its GPU events):
--   op_name, input_dims, input_type, input_strides, concrete_inputs   ('' when not recorded)
--   hlo_module                              JAX: the HLO op's module, as in op_summary ('' for every other op)
--   count                                   op instances
--   kernel_time_mean_ns, _median_ns, _std_ns (sample), _min_ns, _max_ns, _sum_ns
--   time_pct, cumulative_pct                share of the trace's op-attributed GPU time, as in op_summary
-- The rows of a trace are in the order of their rank in replay/arg_sets (replay_arg_sets), which `tracesql replay`
-- turns into scripts.
-- @output report-native 11 op_arg_summary \
--     COLUMNS trace_id trace op_name hlo_module input_dims input_type input_strides concrete_inputs count \
--     kernel_time_mean_ns:us kernel_time_median_ns:us kernel_time_std_ns:us kernel_time_min_ns:us \
--     kernel_time_max_ns:us kernel_time_sum_ns:us time_pct cumulative_pct \
--     TITLE "Ops by argument set" \
--     ABOUT "One row per op and input shapes, dtypes, strides and scalars: calls and the statistics of their GPU time; µs. `tracesql replay DATASET --trace T --top N --out DIR` writes a script that replays each of a trace's first N rows alone." \
--     ORDER BY trace, kernel_time_sum_ns DESC, op_name, hlo_module, input_dims, input_type, input_strides, \
--     concrete_inputs
CREATE OR REPLACE VIEW op_arg_summary AS
WITH s AS (
    SELECT trace_id, op_name, hlo_module, input_dims, input_type, input_strides, concrete_inputs,
           count(*) AS count, avg(t) AS kernel_time_mean_ns, median(t) AS kernel_time_median_ns,
           _stddev_samp_int(t) AS kernel_time_std_ns, min(t) AS kernel_time_min_ns,
           max(t) AS kernel_time_max_ns, sum(t)::BIGINT AS kernel_time_sum_ns
    FROM _op_arg_instances
    GROUP BY ALL
)
SELECT *, 100.0 * kernel_time_sum_ns / sum(kernel_time_sum_ns) OVER (PARTITION BY trace_id) AS time_pct,
       100.0 * sum(kernel_time_sum_ns) OVER (PARTITION BY trace_id ORDER BY kernel_time_sum_ns DESC, op_name,
                                             hlo_module, input_dims, input_type, input_strides, concrete_inputs
                                             ROWS UNBOUNDED PRECEDING)
             / sum(kernel_time_sum_ns) OVER (PARTITION BY trace_id) AS cumulative_pct
FROM s ORDER BY trace_id, kernel_time_sum_ns DESC;

-- short_kernels_at(threshold_us): GPU kernels (cat kernel) shorter than threshold_us, one row per
-- (trace, op name, kernel name):
--   count, total_ns, mean_ns       of the short kernels
--   short_pct                      100 total_ns / all short-kernel time of the trace
--   pct_of_kernel_time             100 total_ns / all kernel time of the trace
CREATE OR REPLACE MACRO short_kernels_at(threshold_us) AS TABLE
WITH k AS (SELECT * FROM _op_gpu WHERE cat = 'kernel'),
tot AS (SELECT trace_id, sum(dur_ns) AS all_ns FROM k GROUP BY trace_id),
s AS (
    SELECT trace_id, op_name, name_id, count(*) AS count, sum(dur_ns)::BIGINT AS total_ns, avg(dur_ns) AS mean_ns
    FROM k WHERE dur_ns < threshold_us * 1000 GROUP BY ALL
)
SELECT s.trace_id, s.op_name, n.name AS kernel_name, s.count, s.total_ns, s.mean_ns,
       100.0 * total_ns / sum(total_ns) OVER (PARTITION BY s.trace_id) AS short_pct,
       100.0 * total_ns / tot.all_ns AS pct_of_kernel_time
FROM s JOIN tot USING (trace_id) JOIN _gpu_names n USING (name_id) ORDER BY s.trace_id, total_ns DESC;

-- short_kernels: short_kernels_at(10) (10 µs, TraceLens's default threshold).
-- @output report-native 12 short_kernels \
--     COLUMNS trace_id trace op_name kernel_name count total_ns:us mean_ns:us short_pct pct_of_kernel_time \
--     TITLE "Short kernels" \
--     ABOUT "Kernels shorter than 10 µs by op: how many and their time, as a share of all short-kernel and all kernel time." \
--     ORDER BY trace, total_ns DESC, op_name, kernel_name
CREATE OR REPLACE VIEW short_kernels AS SELECT * FROM short_kernels_at(10);

-- short_kernel_histogram_at(threshold_us, bins): durations of the kernels shorter than threshold_us in
-- `bins` equal bins over [0, threshold_us), per trace:
--   bin (0-based), bin_start_us, bin_end_us, count, total_us
CREATE OR REPLACE MACRO short_kernel_histogram_at(threshold_us, bins) AS TABLE
WITH k AS (
    SELECT trace_id, dur_ns, dur_ns / 1000.0 AS d FROM _op_gpu WHERE cat = 'kernel' AND dur_ns < threshold_us * 1000
), t AS (SELECT DISTINCT trace_id FROM k),
b AS (SELECT trace_id, least(floor(d / (threshold_us / bins))::BIGINT, bins - 1) AS bin, d, dur_ns FROM k)
-- (the sum in integer ns: a sum of floats would depend on the order the rows are added in)
SELECT t.trace_id, r.bin, r.bin * threshold_us / bins AS bin_start_us, (r.bin + 1) * threshold_us / bins AS bin_end_us,
       count(b.d) AS count, coalesce(sum(b.dur_ns), 0) / 1000.0 AS total_us
FROM t CROSS JOIN (SELECT range AS bin FROM range(bins)) r
LEFT JOIN b ON b.trace_id = t.trace_id AND b.bin = r.bin
GROUP BY ALL ORDER BY t.trace_id, r.bin;

-- short_kernel_histogram: short_kernel_histogram_at(10, 20): 0.5 µs bins below 10 µs.
-- @output report-native 13 short_kernel_histogram \
--     COLUMNS trace_id trace bin bin_start_us bin_end_us count total_us \
--     TITLE "Short kernel durations" \
--     ABOUT "How many kernels shorter than 10 µs fall in each 0.5 µs bin, and their time; µs." \
--     ORDER BY trace, bin
CREATE OR REPLACE VIEW short_kernel_histogram AS SELECT * FROM short_kernel_histogram_at(10, 20);
