-- perf/roofline — achieved throughput and the roofline of every modelled op: per op instance, per (op, argument
-- set), per family, per trace and per ProfilerStep.
--
-- An op instance's GPU time is the summed duration of the GPU events it launched (gpu/op_summaries: the
-- innermost cpu_op around each launch). With F FLOPs and B bytes per call (perf_arg_models) and the device's
-- peak P for the op's precision (perf_device; the fp32 peak for vector work) and bandwidth W:
--   achieved TFLOP/s  = F / time / 10¹²          achieved TB/s = B / time / 10¹²   (SI units throughout)
--   arithmetic intensity = F / B (FLOP per byte)
--   roofline time     = max(F / P, B / W): the least time the device needs for the op (Williams, Waterman and
--                       Patterson, "Roofline: an insightful visual performance model", CACM 52(4), 2009)
--   bound             compute when F / P ≥ B / W, else memory
--   roofline %        100 · roofline time / GPU time (100 = at the roof)
-- With no device (perf_device.reason), the roofline columns are NULL and FLOPs, bytes and achieved rates stay.
--
-- @requires perf/model perf/devices gpu/steps gpu/activity lib/pytext

-- _perf_peak(d, prec): the device row's peak, TFLOP/s, for a precision name.
CREATE OR REPLACE MACRO _perf_peak(d, prec) AS
    CASE prec WHEN 'fp64' THEN d.fp64_tflops WHEN 'fp32' THEN d.fp32_tflops WHEN 'tf32' THEN d.tf32_tflops
                   WHEN 'bf16' THEN d.bf16_tflops WHEN 'fp16' THEN d.fp16_tflops WHEN 'fp8' THEN d.fp8_tflops
                   WHEN 'int8' THEN d.int8_tops WHEN 'fp4' THEN d.fp4_tflops END;

-- _perf_arg_calls: one row per (trace, modelled argument set): one call's model (perf_arg_models) on the
-- trace's device (perf_device), the part of perf_ops and perf_args that does not depend on the measured time.
--   trace_id, op_name, d_txt, t_txt, c_txt, step_txt, family, flops, bytes, precision, matrix, shape
--                                  as perf_arg_models
--   gpu, peak_tflop_per_s, memory_tb_per_s, compute_ns, memory_ns, roofline_ns, bound          as perf_ops
CREATE OR REPLACE VIEW _perf_arg_calls AS
WITH j AS (
    SELECT d.trace_id, m.op_name, m.d_txt, m.t_txt, m.c_txt, m.step_txt, m.family, m.flops, m.bytes, m.precision,
           m.matrix, m.shape, d.gpu, _perf_peak(d, m.precision) AS peak, d.memory_tb_s AS bw
    FROM perf_arg_models m CROSS JOIN perf_device d
), r AS (  -- F / P and B / W in ns (NULL without a peak or a bandwidth)
    SELECT *, flops / nullif(peak, 0) / 1e3 AS t_compute_ns, bytes / nullif(bw, 0) / 1e3 AS t_memory_ns FROM j
)
SELECT trace_id, op_name, d_txt, t_txt, c_txt, step_txt, family, flops, bytes, precision, matrix, shape, gpu,
       peak AS peak_tflop_per_s, bw AS memory_tb_per_s, t_compute_ns AS compute_ns, t_memory_ns AS memory_ns,
       CASE WHEN t_compute_ns IS NOT NULL AND t_memory_ns IS NOT NULL THEN greatest(t_compute_ns, t_memory_ns) END
           AS roofline_ns,
       CASE WHEN t_compute_ns IS NULL OR t_memory_ns IS NULL THEN NULL
            WHEN t_compute_ns >= t_memory_ns THEN 'compute' ELSE 'memory' END AS bound
FROM r;

-- perf_ops: one row per modelled op instance (_perf_instances).
--   trace_id, event_id (the cpu_op), op_name, family, ts_ns (its start on the CPU, ns)
--   op_trace_id                    the trace of event_id: the trace itself, or the twin whose op a graph replay
--                                  took (tree/attribution)
--   graph_launch_event_id          the graph launch that replayed the twin's op (NULL for the trace's own ops)
--   kernel_count, kernel_time_ns   its GPU events and their summed duration, ns
--   flops, bytes                   of the call (perf_arg_models)
--   precision, matrix              which peak applies (perf_arg_models)
--   flop_per_byte                  arithmetic intensity, FLOP/byte
--   tflop_per_s, tb_per_s          achieved, 10¹² FLOP/s and 10¹² bytes/s
--   gpu                            the device model (perf_device; NULL when unknown)
--   peak_tflop_per_s, memory_tb_per_s   its peak for this precision and its bandwidth
--   compute_ns, memory_ns          flops / peak and bytes / bandwidth: the time each roof allows, ns
--   roofline_ns                    max(compute_ns, memory_ns), ns
--   bound                          compute | memory
--   roofline_pct                   100 roofline_ns / kernel_time_ns
--   shape                          the model's parameters
--   d_txt, t_txt, c_txt            the recorded arguments (JSON text)
--   step_txt                       the op's step (JSON text, _perf_instances; '' for ops that do not read it)
-- @materialize perf
CREATE OR REPLACE VIEW perf_ops AS
SELECT i.trace_id, i.event_id, i.op_trace_id, i.graph_launch_event_id, i.op_name, c.family, i.ts_ns, i.kernel_count,
       i.kernel_time_ns, c.flops, c.bytes, c.precision, c.matrix, c.flops / nullif(c.bytes, 0) AS flop_per_byte,
       c.flops / nullif(i.kernel_time_ns, 0) / 1e3 AS tflop_per_s,
       c.bytes / nullif(i.kernel_time_ns, 0) / 1e3 AS tb_per_s,
       c.gpu, c.peak_tflop_per_s, c.memory_tb_per_s, c.compute_ns, c.memory_ns, c.roofline_ns, c.bound,
       100.0 * c.roofline_ns / nullif(i.kernel_time_ns, 0) AS roofline_pct, c.shape, i.d_txt, i.t_txt, i.c_txt,
       i.step_txt
FROM _perf_instances i
JOIN _perf_arg_calls c ON c.trace_id = i.trace_id AND c.op_name = i.op_name AND c.d_txt = i.d_txt
                      AND c.t_txt = i.t_txt AND c.c_txt = i.c_txt AND c.step_txt = i.step_txt;

-- Helper: perf_ops with `ord`, the instance as one sortable value (op_trace_id, event_id, graph_launch_event_id):
-- float sums over instances are taken in this order (a sum of floats depends on the order of its terms).
CREATE OR REPLACE VIEW _perf_ops_ordered AS
SELECT *, {'t': op_trace_id, 'e': event_id, 'l': graph_launch_event_id} AS ord FROM perf_ops;

-- _perf_rollup(flops, bytes, kernel_time_ns, roofline_ns, compute_ns, memory_ns, ord): an aggregate over a group
-- of op instances (perf_ops rows), as a struct: flops and bytes summed, flop_per_byte, tflop_per_s and tb_per_s
-- of the sums, roofline_ns summed and roofline_pct (100 roofline_ns / Σ kernel_time_ns), bound (compute when the
-- summed compute_ns is at least the summed memory_ns; NULL without a roofline). Float sums are taken in the order
-- of ord (_perf_ops_ordered): a sum of floats depends on the order its terms are added in.
CREATE OR REPLACE MACRO _perf_rollup(flops, bytes, kernel_time_ns, roofline_ns, compute_ns, memory_ns, ord) AS {
    'flops': sum(flops ORDER BY ord), 'bytes': sum(bytes ORDER BY ord),
    'flop_per_byte': sum(flops ORDER BY ord) / nullif(sum(bytes ORDER BY ord), 0),
    'tflop_per_s': sum(flops ORDER BY ord) / nullif(sum(kernel_time_ns), 0) / 1e3,
    'tb_per_s': sum(bytes ORDER BY ord) / nullif(sum(kernel_time_ns), 0) / 1e3,
    'roofline_ns': sum(roofline_ns ORDER BY ord),
    'roofline_pct': 100.0 * sum(roofline_ns ORDER BY ord) / nullif(sum(kernel_time_ns), 0),
    'bound': CASE WHEN count(roofline_ns) = 0 THEN NULL
                  WHEN sum(compute_ns) >= sum(memory_ns) THEN 'compute' ELSE 'memory' END};

-- _perf_arg_modelled: one row per modelled (trace, op name, argument set): _perf_arg_groups' columns and
-- _perf_arg_calls' (the model of one call on the trace's device).
CREATE OR REPLACE VIEW _perf_arg_modelled AS
SELECT g.*, c.* EXCLUDE (trace_id, op_name, d_txt, t_txt, c_txt, step_txt)
FROM _perf_arg_groups g
JOIN _perf_arg_calls c ON c.trace_id = g.trace_id AND c.op_name = g.op_name AND c.d_txt = g.d_txt
                      AND c.t_txt = g.t_txt AND c.c_txt = g.c_txt AND c.step_txt = g.step_txt;

-- perf_args: one row per (trace, op name, argument set) of the modelled ops: the same op on the same shapes (and,
-- for the ops of perf/step_ops, in the same step: the shape column then gives the step's token counts).
--   trace_id, op_name, family, input_dims, input_type, concrete_inputs   (Python-style text, as op_arg_summary)
--   count                          op instances
--   kernel_time_sum_ns, kernel_time_mean_ns   their GPU time, ns
--   time_pct                       100 kernel_time_sum_ns / the trace's op-attributed GPU time (op_summary)
--   flops, bytes                   per call
--   precision, flop_per_byte, gpu, peak_tflop_per_s, memory_tb_per_s, roofline_ns (per call), bound   as perf_ops
--   tflop_per_s, tb_per_s          achieved over all calls: count·flops / kernel_time_sum_ns (10¹² per second)
--   roofline_pct                   100 count·roofline_ns / kernel_time_sum_ns
--   shape
-- @output perf-by 1 args KEYS op_name family input_dims
CREATE OR REPLACE VIEW perf_args AS
WITH tot AS (SELECT trace_id, sum(dur_ns) AS all_ns FROM _op_gpu GROUP BY trace_id)
SELECT g.trace_id, g.op_name, g.family, _py_tuple3(nullif(g.d_txt, '')::JSON) AS input_dims,
       _py_tuple3(nullif(g.t_txt, '')::JSON) AS input_type, _py_tuple3(nullif(g.c_txt, '')::JSON) AS concrete_inputs,
       g.count, g.kernel_time_sum_ns, g.kernel_time_mean_ns, 100.0 * g.kernel_time_sum_ns / tot.all_ns AS time_pct,
       g.flops, g.bytes, g.precision, g.flops / nullif(g.bytes, 0) AS flop_per_byte,
       g.count * g.flops / nullif(g.kernel_time_sum_ns, 0) / 1e3 AS tflop_per_s,
       g.count * g.bytes / nullif(g.kernel_time_sum_ns, 0) / 1e3 AS tb_per_s, g.gpu, g.peak_tflop_per_s,
       g.memory_tb_per_s, g.roofline_ns, g.bound,
       100.0 * g.count * g.roofline_ns / nullif(g.kernel_time_sum_ns, 0) AS roofline_pct, g.shape
FROM _perf_arg_modelled g JOIN tot ON tot.trace_id = g.trace_id
ORDER BY g.trace_id, g.kernel_time_sum_ns DESC, g.op_name, input_dims, g.shape;

-- perf_op_names: one row per (trace, op name, family) of the modelled ops, over all their argument sets.
--   trace_id, op_name, family
--   count, kernel_time_sum_ns, kernel_time_mean_ns, time_pct   as perf_args
--   flops, bytes                   summed over the instances
--   flop_per_byte, tflop_per_s, tb_per_s   of the sums
--   gpu, roofline_ns (summed), roofline_pct (100 roofline_ns / kernel_time_sum_ns)
--   bound                          compute when the summed compute_ns is at least the summed memory_ns
-- (flops ... bound: _perf_rollup)
-- @output perf-by 2 op KEYS op_name family
CREATE OR REPLACE VIEW perf_op_names AS
WITH tot AS (SELECT trace_id, sum(dur_ns) AS all_ns FROM _op_gpu GROUP BY trace_id),
g AS (
    SELECT o.trace_id, o.op_name, o.family, count(*) AS count, sum(o.kernel_time_ns)::BIGINT AS kernel_time_sum_ns,
           avg(o.kernel_time_ns) AS kernel_time_mean_ns,
           100.0 * sum(o.kernel_time_ns) / any_value(tot.all_ns) AS time_pct, any_value(o.gpu) AS gpu,
           _perf_rollup(o.flops, o.bytes, o.kernel_time_ns, o.roofline_ns, o.compute_ns, o.memory_ns, o.ord) AS r
    FROM _perf_ops_ordered o JOIN tot USING (trace_id)
    GROUP BY o.trace_id, o.op_name, o.family
)
SELECT trace_id, op_name, family, count, kernel_time_sum_ns, kernel_time_mean_ns, time_pct, r.flops, r.bytes,
       r.flop_per_byte, r.tflop_per_s, r.tb_per_s, gpu, r.roofline_ns, r.roofline_pct, r.bound
FROM g
ORDER BY trace_id, kernel_time_sum_ns DESC, op_name;

-- perf_kernels: one row per (trace, kernel name) over the modelled op instances that launched exactly one GPU
-- event, that kernel (an instance that launched several is not split among them).
--   trace_id, kernel_name (short name, lib/names), family (of the ops; the most GPU time when several)
--   count, kernel_time_sum_ns, time_pct, flops, bytes, flop_per_byte, tflop_per_s, tb_per_s, gpu, roofline_ns,
--   roofline_pct, bound            as perf_op_names
-- @output perf-by 4 kernel KEYS kernel_name family
CREATE OR REPLACE VIEW perf_kernels AS
WITH one AS (
    SELECT o.*, n.name, coalesce(n.short_name, n.name) AS kernel_name
    FROM _perf_ops_ordered o
    JOIN _op_gpu g ON g.trace_id = o.trace_id AND g.op_trace_id = o.op_trace_id AND g.attr_event_id = o.event_id
     AND g.op_instance.launch IS NOT DISTINCT FROM o.graph_launch_event_id
    JOIN _gpu_names n ON n.name_id = g.name_id
    WHERE o.kernel_count = 1
), tot AS (SELECT trace_id, sum(dur_ns) AS all_ns FROM _op_gpu GROUP BY trace_id),
g AS (
    SELECT o.trace_id, o.kernel_name, arg_max(o.family, o.kernel_time_ns) AS family, count(*) AS count,
           sum(o.kernel_time_ns)::BIGINT AS kernel_time_sum_ns,
           100.0 * sum(o.kernel_time_ns) / any_value(tot.all_ns) AS time_pct, any_value(o.gpu) AS gpu,
           _perf_rollup(o.flops, o.bytes, o.kernel_time_ns, o.roofline_ns, o.compute_ns, o.memory_ns, o.ord) AS r
    FROM one o JOIN tot USING (trace_id)
    GROUP BY o.trace_id, o.kernel_name
)
SELECT trace_id, kernel_name, family, count, kernel_time_sum_ns, time_pct, r.flops, r.bytes, r.flop_per_byte,
       r.tflop_per_s, r.tb_per_s, gpu, r.roofline_ns, r.roofline_pct, r.bound
FROM g
ORDER BY trace_id, kernel_time_sum_ns DESC, kernel_name;

-- perf_categories: one row per (trace, family), and one with family '(not modelled)' for the GPU time of every
-- other op (op instances of no family, and GPU events with no op: '[launch API]', '[no launch]').
--   trace_id, family
--   op_count                       op instances (NULL for the not-modelled row's events without an op)
--   kernel_time_ns                 their GPU time, ns;  time_pct  100 kernel_time_ns / the trace's GPU time
--                                  (op_summary: every counted GPU event; the rows of a trace add up to 100)
--   flops, bytes                   summed over the instances
--   tflop_per_s, tb_per_s          achieved: flops / kernel_time_ns, bytes / kernel_time_ns (10¹² per second)
--   roofline_ns                    summed roofline time;  roofline_pct  100 roofline_ns / kernel_time_ns
-- @output perf-by 3 category KEYS family
CREATE OR REPLACE VIEW perf_categories AS
WITH tot AS (SELECT trace_id, sum(dur_ns) AS all_ns FROM _op_gpu GROUP BY trace_id),
f AS (
    SELECT trace_id, family, count(*) AS op_count, sum(kernel_time_ns)::BIGINT AS kernel_time_ns,
           sum(flops ORDER BY ord) AS flops, sum(bytes ORDER BY ord) AS bytes,
           sum(roofline_ns ORDER BY ord) AS roofline_ns
    FROM _perf_ops_ordered GROUP BY ALL
), n AS (
    SELECT t.trace_id, '(not modelled)' AS family,
           ((SELECT count(*) FROM _perf_instances i WHERE i.trace_id = t.trace_id)
             - coalesce((SELECT sum(op_count) FROM f WHERE f.trace_id = t.trace_id), 0))::BIGINT AS op_count,
           (t.all_ns - coalesce((SELECT sum(kernel_time_ns) FROM f WHERE f.trace_id = t.trace_id), 0))::BIGINT AS kernel_time_ns,
           NULL::DOUBLE AS flops, NULL::DOUBLE AS bytes, NULL::DOUBLE AS roofline_ns
    FROM tot t
), u AS (SELECT * FROM f UNION ALL SELECT * FROM n)
SELECT u.trace_id, u.family, u.op_count, u.kernel_time_ns, 100.0 * u.kernel_time_ns / tot.all_ns AS time_pct,
       u.flops, u.bytes, u.flops / nullif(u.kernel_time_ns, 0) / 1e3 AS tflop_per_s,
       u.bytes / nullif(u.kernel_time_ns, 0) / 1e3 AS tb_per_s, u.roofline_ns,
       100.0 * u.roofline_ns / nullif(u.kernel_time_ns, 0) AS roofline_pct
FROM u JOIN tot USING (trace_id)
ORDER BY u.trace_id, u.family = '(not modelled)', u.kernel_time_ns DESC;

-- perf_traces: one row per trace.
--   trace_id, gpu_name, gpu, reason   the device (perf_device)
--   gpu_time_ns                    summed duration of the counted GPU events (op_summary's total), ns
--   op_time_ns                     of it, the GPU time of op instances (_perf_instances: cpu_ops of the trace,
--                                  twins' cpu_ops replayed by graph launches), ns
--   modelled_time_ns               of it, the GPU time of modelled op instances, ns
--   modelled_pct                   100 modelled_time_ns / gpu_time_ns
--   modelled_op_pct                100 modelled_time_ns / op_time_ns (events without an op, e.g. launched
--                                  before the profiler's CPU window, left out)
--   flops, bytes                   summed over the modelled instances
--   tflop_per_s                    flops / modelled_time_ns (10¹² FLOP/s)
--   roofline_ns                    summed roofline time of the modelled instances, ns
--   roofline_pct                   100 roofline_ns / modelled_time_ns
CREATE OR REPLACE VIEW perf_traces AS
WITH tot AS (SELECT trace_id, sum(dur_ns)::BIGINT AS all_ns FROM _op_gpu GROUP BY trace_id),
ops AS (SELECT trace_id, sum(kernel_time_sum_ns)::BIGINT AS op_ns FROM _perf_arg_groups GROUP BY trace_id),
f AS (
    SELECT trace_id, sum(kernel_time_sum_ns)::BIGINT AS t,
           sum(count * flops ORDER BY op_name, d_txt, t_txt, c_txt, step_txt) AS flops,
           sum(count * bytes ORDER BY op_name, d_txt, t_txt, c_txt, step_txt) AS bytes,
           sum(count * roofline_ns ORDER BY op_name, d_txt, t_txt, c_txt, step_txt) AS roofline_ns
    FROM _perf_arg_modelled GROUP BY trace_id
)
SELECT d.trace_id, d.gpu_name, d.gpu, d.reason, coalesce(tot.all_ns, 0) AS gpu_time_ns,
       coalesce(ops.op_ns, 0) AS op_time_ns, coalesce(f.t, 0) AS modelled_time_ns,
       100.0 * coalesce(f.t, 0) / nullif(tot.all_ns, 0) AS modelled_pct,
       100.0 * coalesce(f.t, 0) / nullif(ops.op_ns, 0) AS modelled_op_pct,
       f.flops, f.bytes, f.flops / nullif(f.t, 0) / 1e3 AS tflop_per_s, f.roofline_ns,
       100.0 * f.roofline_ns / nullif(f.t, 0) AS roofline_pct
FROM perf_device d LEFT JOIN tot USING (trace_id) LEFT JOIN ops USING (trace_id) LEFT JOIN f USING (trace_id)
ORDER BY d.trace_id;

-- perf_steps: one row per ProfilerStep#N range (profiler_steps) of a trace: model-FLOPs utilisation.
--   trace_id, step, step_number, dur_ns    the range on the CPU (ns)
--   flops                          FLOPs of the modelled op instances that started on the CPU inside the range
--   precision                      the precision with the most of those FLOPs
--   peak_tflop_per_s               the device's peak for it (perf_device)
--   tflop_per_s                    flops / dur_ns (10¹² FLOP/s)
--   mfu_pct                        model-FLOPs utilisation: 100 tflop_per_s / peak_tflop_per_s (Chowdhery et al.,
--                                  PaLM, arXiv:2204.02311, appendix B: achieved model FLOP/s over peak FLOP/s)
CREATE OR REPLACE VIEW perf_steps AS
WITH o AS (
    SELECT s.trace_id, s.name AS step, s.step_number, s.dur_ns, o.precision, sum(o.flops ORDER BY o.ord) AS flops
    FROM profiler_steps s
    LEFT JOIN _perf_ops_ordered o ON o.trace_id = s.trace_id AND o.ts_ns >= s.ts_ns AND o.ts_ns < s.end_ns
    GROUP BY ALL
), a AS (
    SELECT trace_id, step, step_number, dur_ns, sum(flops ORDER BY precision) AS flops,
           arg_max(precision, flops) AS precision
    FROM o GROUP BY ALL
)
SELECT a.trace_id, a.step, a.step_number, a.dur_ns, coalesce(a.flops, 0) AS flops, a.precision,
       _perf_peak(d, a.precision) AS peak_tflop_per_s, a.flops / nullif(a.dur_ns, 0) / 1e3 AS tflop_per_s,
       100.0 * a.flops / nullif(a.dur_ns, 0) / 1e3 / nullif(_perf_peak(d, a.precision), 0) AS mfu_pct
FROM a LEFT JOIN perf_device d USING (trace_id)
ORDER BY a.trace_id, a.step_number;
