-- diff/timeline — the GPU timelines of two traces compared (gpu_timeline, pooled rows: all devices of a trace).
--
-- @requires diff/pairs gpu/timeline

-- _diff_timeline_src: the pooled gpu_timeline row of every trace, one row per measure (see diff/pairs for the
-- columns): k {measure}, n the GPU events counted, v_ns the measure in ns.
CREATE OR REPLACE VIEW _diff_timeline_src AS
SELECT trace_id, {'measure': measure} AS k, n_events AS n, v_ns
FROM (SELECT trace_id, n_events, span_ns AS span, busy_ns AS busy, idle_ns AS idle, compute_ns AS compute,
             comm_ns AS comm, comm_exposed_ns AS comm_exposed, memory_ns AS memory,
             memory_exposed_ns AS memory_exposed
      FROM gpu_timeline WHERE pooled)
UNPIVOT (v_ns FOR measure IN (span, busy, idle, compute, comm, comm_exposed, memory, memory_exposed));

-- diff_gpu_timeline(base_id, variant_id): the GPU timeline of the trace variant_id against that of base_id;
-- one row per measure of gpu_timeline's pooled row (all devices of the trace; see gpu/timeline for each):
--   measure            span, busy, idle, compute, comm, comm_exposed, memory, memory_exposed
--   side               'both' (every measure exists in every trace with GPU events; see diff/pairs)
--   base_count, variant_count   GPU events counted in each trace (gpu_timeline.n_events)
--   base_ns, variant_ns         the measure in each trace, ns
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
-- Ordered by |diff_ns| descending.
-- @output diff-level 1 timeline KEYS measure
CREATE OR REPLACE MACRO diff_gpu_timeline(base_id, variant_id) AS TABLE
SELECT k.measure AS measure, d.* EXCLUDE (k)
FROM _diff_sides('_diff_timeline_src', base_id, variant_id) d
ORDER BY abs(diff_ns) DESC, list_position(['span', 'busy', 'idle', 'compute', 'comm', 'comm_exposed', 'memory',
                                           'memory_exposed'], measure);
