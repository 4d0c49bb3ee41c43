-- peers/tracelens/kernel_summary — TraceLens's kernel_summary and short-kernel study, per trace.
--
-- @requires peers/float_us peers/tracelens/timeline peers/tracelens/links peers/tracelens/op_categories gpu/op_summaries

-- _tl_kernel_parents: each GPU event with TraceLens's parent cpu_op and its op category: for an event
-- under a cpu_op, the op's category under the `tracelens` rules (peers/tracelens/op_categories: the op
-- registry by name, else the first-kernel rules on the first kernel launched under that op instance, else
-- 'other'); for an event whose parent is its launch call, 'graph' (the call's name contains cudagraph or
-- graphlaunch, any case) or 'runtime'; NULL keys for events TraceLens does not link.
CREATE OR REPLACE VIEW _tl_kernel_parents AS
WITH o AS (
    SELECT e.trace_id, e.event_id, e.name, e.cat, e.stream, e.ts_ns, e.dur_ns, e.op_event_id, e.tl_parent_cpu_op,
           e.launch_name, e.tl_linked, f.first_kernel
    FROM tl_gpu_event_ops e
    LEFT JOIN (SELECT trace_id, op_event_id, arg_min(name, (ts_ns, event_id)) AS first_kernel FROM tl_gpu_event_ops
               WHERE tl_linked AND op_event_id IS NOT NULL GROUP BY ALL) f
      ON f.trace_id = e.trace_id AND f.op_event_id = e.op_event_id
)
SELECT o.*, CASE WHEN o.tl_parent_cpu_op IS NULL THEN NULL
                 WHEN o.op_event_id IS NOT NULL THEN CASE WHEN oc.matched THEN oc.op_category
                                                          ELSE coalesce(fk.category, 'other') END
                 WHEN regexp_matches(o.launch_name, '(?i)cudagraph|graphlaunch') THEN 'graph'
                 ELSE 'runtime' END AS tl_op_category
FROM o
LEFT JOIN _tl_op_name_categories oc ON oc.name = o.tl_parent_cpu_op
LEFT JOIN _first_kernel_rule_categories fk
       ON fk.ruleset = 'tracelens' AND fk.name_key = replace(o.first_kernel, chr(10), ' ');

-- tl_kernel_summary: TraceLens's kernel_summary: every `kernel` event (linked or not; memcpy/memset left
-- out) grouped by (Parent op category, Parent cpu_op, Kernel name, Kernel stream), missing keys as ''.
--   Kernel duration (µs)_sum/_count/_mean/_min/_max   over the group, µs (the sum as pandas's group-by sum,
--                                                     in file order)
--   Percent of kernels time (%)   100 sum / sum over all kernel events of the trace
--   Percent of total time (%)     100 sum / TraceLens's gpu_timeline total_time (so the column can add up
--                                 to more than 100 when unlinked kernels run outside that span)
-- Rows in decreasing order of the sum (equal sums: the group seen first in the file first).
-- @output report-tracelens 2 kernel_summary
CREATE OR REPLACE VIEW tl_kernel_summary AS
WITH k AS (
    SELECT trace_id, coalesce(tl_op_category, '') AS cat_, coalesce(tl_parent_cpu_op, '') AS op_, name,
           stream, event_id, _us_f64(dur_ns) AS dur_us
    FROM _tl_kernel_parents WHERE cat = 'kernel'
), g AS (
    SELECT trace_id, cat_, op_, name, stream, _pd_sum(list(dur_us ORDER BY event_id)) AS s, count(*) AS n,
           min(dur_us) AS mn, max(dur_us) AS mx,
           min(event_id) AS first_event_id
    FROM k GROUP BY trace_id, cat_, op_, name, stream
), tot AS (
    SELECT trace_id, "time ms" * 1000 AS total_us FROM tl_gpu_timeline WHERE "type" = 'total_time'
)
SELECT g.trace_id, cat_ AS "Parent op category", op_ AS "Parent cpu_op", name AS "Kernel name",
       stream AS "Kernel stream", s AS "Kernel duration (µs)_sum", n AS "Kernel duration (µs)_count",
       s / n AS "Kernel duration (µs)_mean", mn AS "Kernel duration (µs)_min", mx AS "Kernel duration (µs)_max",
       100 * s / fsum(s) OVER (PARTITION BY g.trace_id) AS "Percent of kernels time (%)",
       100 * s / tot.total_us AS "Percent of total time (%)"
FROM g LEFT JOIN tot USING (trace_id)
ORDER BY g.trace_id, s DESC, first_event_id;

-- _tl_short: TraceLens's short kernels: `kernel` events (linked or not) shorter than 10 µs, with float64
-- µs durations, TraceLens's parent cpu_op and that op's inputs as TraceLens prints them (gpu/op_summaries _op_args).
CREATE OR REPLACE VIEW _tl_short AS
SELECT g.trace_id, g.event_id, g.name, _us_f64(g.dur_ns) AS dur_us, g.tl_parent_cpu_op,
       a.input_dims, a.input_strides, a.concrete_inputs
FROM tl_gpu_event_ops g
LEFT JOIN _op_args a ON a.trace_id = g.trace_id AND a.event_id = g.op_event_id
WHERE g.cat = 'kernel' AND _us_f64(g.dur_ns) < 10;

-- tl_short_kernel_histogram: TraceLens's short_kernel_histogram: 100 equal bins between the shortest and
-- the longest short kernel (numpy.histogram: edges start + k * step, the last edge the maximum; a value
-- on an inner edge goes to the bin above it, the maximum into the last bin).
--   bin_start, bin_end   µs;  count   short kernels in the bin
-- @output report-tracelens 7 short_kernel_histogram
CREATE OR REPLACE VIEW tl_short_kernel_histogram AS
WITH r AS (SELECT trace_id, min(dur_us) AS mn, max(dur_us) AS mx FROM _tl_short GROUP BY trace_id),
edges AS (
    SELECT r.trace_id, k.range AS bin,
           CASE WHEN k.range = 0 THEN r.mn ELSE k.range * ((r.mx - r.mn) / 100) + r.mn END AS lo,
           CASE WHEN k.range = 99 THEN r.mx ELSE (k.range + 1) * ((r.mx - r.mn) / 100) + r.mn END AS hi
    FROM r CROSS JOIN range(100) k
), idx AS (
    SELECT s.trace_id, s.dur_us,
           least(floor((s.dur_us - r.mn) * (100 / nullif(r.mx - r.mn, 0)))::BIGINT, 99) AS i0
    FROM _tl_short s JOIN r USING (trace_id)
), fixed AS (
    SELECT i.trace_id, CASE WHEN i.dur_us < e.lo THEN i.i0 - 1
                            WHEN i.dur_us >= e.hi AND i.i0 <> 99 THEN i.i0 + 1 ELSE i.i0 END AS bin
    FROM idx i JOIN edges e ON e.trace_id = i.trace_id AND e.bin = coalesce(i.i0, 0)
)
SELECT e.trace_id, e.lo AS bin_start, e.hi AS bin_end, count(f.bin) AS "count"
FROM edges e LEFT JOIN fixed f ON f.trace_id = e.trace_id AND f.bin = e.bin
GROUP BY e.trace_id, e.bin, e.lo, e.hi ORDER BY e.trace_id, e.bin;

-- tl_short_kernels_summary: TraceLens's short_kernels_summary: short kernels grouped by (Parent cpu_op,
-- Input dims, Input strides, Concrete Inputs, Kernel name); groups with any of these missing are left out
-- (as TraceLens's grouping drops them). Sum, count and mean of the durations (µs) and the sum as a
-- percentage of TraceLens's gpu_timeline total_time; in decreasing order of the sum.
-- @output report-tracelens 8 short_kernels_summary
CREATE OR REPLACE VIEW tl_short_kernels_summary AS
WITH g AS (
    SELECT trace_id, tl_parent_cpu_op, input_dims, input_strides, concrete_inputs, name,
           _pd_sum(list(dur_us ORDER BY event_id)) AS s, count(*) AS n, min(event_id) AS first_event_id
    FROM _tl_short
    WHERE tl_parent_cpu_op IS NOT NULL AND input_dims IS NOT NULL AND input_strides IS NOT NULL
      AND concrete_inputs IS NOT NULL
    GROUP BY ALL
), tot AS (SELECT trace_id, "time ms" * 1000 AS total_us FROM tl_gpu_timeline WHERE "type" = 'total_time')
SELECT g.trace_id, tl_parent_cpu_op AS "Parent cpu_op", input_dims AS "Input dims", input_strides AS "Input strides",
       concrete_inputs AS "Concrete Inputs", name AS "Kernel name", s AS "Short Kernel duration (µs) sum",
       n AS "Short Kernel count", s / n AS "Short Kernel duration (µs) mean",
       100 * s / tot.total_us AS "Short Kernel duration (µs) percent of total time"
FROM g LEFT JOIN tot USING (trace_id)
ORDER BY g.trace_id, s DESC, first_event_id;

-- tl_short_kernels_summary_by_name: the same grouped by kernel name alone: what TraceLens writes for a
-- trace without CPU ops (it then has no parent op columns).
CREATE OR REPLACE VIEW tl_short_kernels_summary_by_name AS
WITH g AS (
    SELECT trace_id, name, _pd_sum(list(dur_us ORDER BY event_id)) AS s, count(*) AS n, min(event_id) AS first_event_id
    FROM _tl_short GROUP BY ALL
), tot AS (SELECT trace_id, "time ms" * 1000 AS total_us FROM tl_gpu_timeline WHERE "type" = 'total_time')
SELECT g.trace_id, name AS "Kernel name", s AS "Short Kernel duration (µs) sum", n AS "Short Kernel count",
       s / n AS "Short Kernel duration (µs) mean", 100 * s / tot.total_us AS "Short Kernel duration (µs) percent of total time"
FROM g LEFT JOIN tot USING (trace_id)
ORDER BY g.trace_id, s DESC, first_event_id;
