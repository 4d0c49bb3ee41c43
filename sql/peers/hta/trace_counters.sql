-- peers/hta/trace_counters — HTA's queue length and memory bandwidth counters, summarised as HTA does
-- (HTA 0.5.0, hta/analyzers/trace_counters.py: get_queue_length_summary, get_memory_bw_summary and the time
-- series they read). Each summary is pandas's describe() of the series' values per group: count, mean, std
-- (sample), min, the quartiles (linear interpolation between the two nearest values) and max. The report writes
-- the columns named 'value/statistic' under pandas's two-level header (tracesql.api.report.peer_files).
--
-- @requires peers/hta/base lib/stats

-- _hta_queue_steps: HTA's queue steps: +1 at each launch call HTA counts (cudaLaunchKernel, cudaLaunchKernelExC,
-- cuLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync and the hip* equivalents; hta/common/trace_symbol_table.py,
-- get_runtime_launch_events_query: graph launches and cuLaunchKernelEx are not among them) whose GPU event is in
-- the trace, -1 at that event's start, on the GPU event's stream. HTA orders the steps by time with an unstable
-- sort, so which of a launch and a GPU start at the same time on a stream comes first is up to numpy's
-- quicksort (it differs between machines); here the launch comes first, as a stable sort of HTA's rows would
-- (launches before GPU events).
CREATE OR REPLACE VIEW _hta_queue_steps AS
WITH g AS (
    SELECT * FROM _hta_gpu
    WHERE runtime_name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel', 'cudaMemcpyAsync',
                           'cudaMemsetAsync', 'hipLaunchKernel', 'hipExtModuleLaunchKernel', 'hipMemsetAsync',
                           'hipMemcpyAsync', 'hipMemcpyWithStream')
)
SELECT trace_id, rank, stream, ts_runtime_us AS ts_us, 0 AS side, event_id, 1 AS delta FROM g
UNION ALL
SELECT trace_id, rank, stream, ts_us, 1, event_id, -1 FROM g;

-- hta_queue_length_summary: HTA's queue_length_summary.csv: one row per (trace, rank, stream), describe() of the
-- queue length after every step (a step per row, not per distinct time).
--   rank, stream                              HTA's rank and the GPU stream
--   queue_length/count                        steps (2 x the GPU events counted), as a float
--   queue_length/mean, queue_length/std       their mean and sample standard deviation
--   queue_length/min, /25%, /50%, /75%, /max  minimum, quartiles, maximum
-- @output report-hta 6 queue_length_summary ORDER BY trace_id, rank, stream
CREATE OR REPLACE VIEW hta_queue_length_summary AS
WITH q AS (
    SELECT trace_id, rank, stream,
           sum(delta) OVER (PARTITION BY trace_id, stream ORDER BY ts_us, side, event_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::BIGINT AS v
    FROM _hta_queue_steps
)
SELECT trace_id, rank, stream, count(*)::DOUBLE AS "queue_length/count", avg(v) AS "queue_length/mean",
       _stddev_samp_int(v) AS "queue_length/std", min(v)::DOUBLE AS "queue_length/min",
       quantile_cont(v, 0.25) AS "queue_length/25%", quantile_cont(v, 0.5) AS "queue_length/50%",
       quantile_cont(v, 0.75) AS "queue_length/75%", max(v)::DOUBLE AS "queue_length/max"
FROM q GROUP BY trace_id, rank, stream;

-- _hta_memory_bw_points: HTA's memory bandwidth series: per (trace, memory kind), the running sum of +bw at the
-- start and -bw at the end (start + duration, a zero duration taken as 1 µs) of each GPU event HTA types MEMORY
-- (names starting Memcpy, Memset or dma), bw its args 'memory bandwidth (GB/s)'. The kind is 'Memset', the
-- first 11 characters of a Memcpy name ('Memcpy DtoH') or 'Memcpy Unknown' (hta/utils/utils.py,
-- get_memory_kernel_type). The sum is taken left to right in float64, as pandas's cumsum, so that a series
-- that returns to zero leaves the same rounding residue.
CREATE OR REPLACE VIEW _hta_memory_bw_points AS
WITH m AS (
    SELECT g.trace_id, g.rank, g.event_id, g.ts_us, CASE WHEN g.dur_us = 0 THEN 1.0 ELSE g.dur_us END AS dur_us,
           CASE WHEN left(g.name, 6) = 'Memset' THEN 'Memset' WHEN left(g.name, 6) <> 'Memcpy' THEN 'Memcpy Unknown'
                ELSE left(g.name, 11) END AS name,
           k.memory_bandwidth_gbps AS bw
    FROM _hta_gpu g JOIN kernels k USING (trace_id, event_id)
    WHERE g.kernel_type = 'MEMORY' AND k.memory_bandwidth_gbps IS NOT NULL
), p AS (
    SELECT trace_id, rank, name, ts_us, 0 AS side, event_id, bw FROM m
    UNION ALL SELECT trace_id, rank, name, ts_us + dur_us, 1, event_id, -bw FROM m
), l AS (
    SELECT trace_id, rank, name, list(bw ORDER BY ts_us, side, event_id) AS xs FROM p GROUP BY ALL
)
SELECT trace_id, rank, name,
       unnest(list_reduce(list_prepend({'s': 0.0::DOUBLE, 'out': []::DOUBLE[]},
                                       list_transform(xs, lambda x: {'s': x, 'out': []::DOUBLE[]})),
                          lambda a, e: {'s': a.s + e.s, 'out': list_append(a.out, a.s + e.s)}).out) AS memory_bw_gbps
FROM l;

-- hta_memory_bw_summary: HTA's memory_bw_summary.csv: one row per (trace, rank, memory kind), describe() of the
-- positive points of the bandwidth series (the points where the running sum is above 0).
--   rank, name                                  HTA's rank and the memory kind (Memcpy DtoH, ..., Memset)
--   memory_bw_gbps/count                        positive points, as a float
--   memory_bw_gbps/mean, memory_bw_gbps/std     their mean and sample standard deviation, GB/s
--   memory_bw_gbps/min, /25%, /50%, /75%, /max  minimum, quartiles, maximum, GB/s
-- @output report-hta 7 memory_bw_summary ORDER BY trace_id, rank, name
CREATE OR REPLACE VIEW hta_memory_bw_summary AS
SELECT trace_id, rank, name, count(*)::DOUBLE AS "memory_bw_gbps/count", _avg_float(v) AS "memory_bw_gbps/mean",
       _stddev_samp_float(v) AS "memory_bw_gbps/std", min(v) AS "memory_bw_gbps/min",
       quantile_cont(v, 0.25) AS "memory_bw_gbps/25%", quantile_cont(v, 0.5) AS "memory_bw_gbps/50%",
       quantile_cont(v, 0.75) AS "memory_bw_gbps/75%", max(v) AS "memory_bw_gbps/max"
FROM (SELECT trace_id, rank, name, memory_bw_gbps AS v FROM _hta_memory_bw_points WHERE memory_bw_gbps > 0)
GROUP BY trace_id, rank, name;
