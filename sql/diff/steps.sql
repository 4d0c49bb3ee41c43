-- diff/steps — the GPU timelines of two traces compared step by step (ProfilerStep#N), and in the steady state.
--
-- Steps are paired by position, not by number: the first step of one trace with the first of the other (two
-- runs rarely start counting at the same N). The steady state of a trace is every step after its first when it
-- has several (the first step of a run carries warm-up: allocator growth, autotuning, lazy initialisation), else
-- its only step.
--
-- @requires diff/pairs gpu/timeline

-- _diff_step_positions: every ProfilerStep#N of each trace (_gpu_steps) with its position.
--   trace_id, step        the step
--   step_pos              1 for the first step of the trace (by step number, then start), 2 for the next, ...
--   steady                whether the step is in the trace's steady state (see the top of this file)
CREATE OR REPLACE VIEW _diff_step_positions AS
SELECT trace_id, step, step_pos, step_pos > 1 OR n_steps = 1 AS steady
FROM (SELECT trace_id, step,
             row_number() OVER (PARTITION BY trace_id ORDER BY step_number NULLS LAST, step_ts_ns, step) AS step_pos,
             count(*) OVER (PARTITION BY trace_id) AS n_steps
      FROM _gpu_steps);

-- _diff_step_measures: gpu_timeline_by_step's pooled rows, one row per (trace, step, measure): measure as in
-- diff_gpu_timeline, n_events the GPU events counted, v_ns the measure in ns; step_pos and steady as above.
CREATE OR REPLACE VIEW _diff_step_measures AS
SELECT u.trace_id, u.step, p.step_pos, p.steady, u.measure, u.n_events, u.v_ns
FROM (SELECT trace_id, step, n_events, span_ns AS span, busy_ns AS busy, idle_ns AS idle, compute_ns AS compute,
             comm_ns AS comm, comm_exposed_ns AS comm_exposed, memory_ns AS memory,
             memory_exposed_ns AS memory_exposed
      FROM gpu_timeline_by_step WHERE pooled)
UNPIVOT (v_ns FOR measure IN (span, busy, idle, compute, comm, comm_exposed, memory, memory_exposed)) u
JOIN _diff_step_positions p USING (trace_id, step);

-- _diff_step_src: per step position and measure (see diff/pairs for the columns): k {step_pos, measure}, n the
-- GPU events counted, v_ns the measure.
CREATE OR REPLACE VIEW _diff_step_src AS
SELECT trace_id, {'step_pos': step_pos, 'measure': measure} AS k, n_events AS n, v_ns FROM _diff_step_measures;

-- _diff_steady_src: the steady state per measure (see diff/pairs for the columns): k {measure}, n the steady
-- steps, v_ns the measure's mean over them, rounded to the ns.
CREATE OR REPLACE VIEW _diff_steady_src AS
SELECT trace_id, {'measure': measure} AS k, count(*) AS n, round(avg(v_ns))::BIGINT AS v_ns
FROM _diff_step_measures WHERE steady GROUP BY trace_id, measure;

-- diff_gpu_timeline_by_step(base_id, variant_id): the GPU timeline of each step of the trace variant_id against
-- the step at the same position of base_id (gpu_timeline_by_step, pooled rows: the GPU work launched inside the
-- step); one row per (step position, measure) present in either trace:
--   step_pos                    1 for the first step of each trace, 2 for the second, ...
--   base_step, variant_step     the step at that position in each trace (`ProfilerStep#N`; NULL when none)
--   measure                     span, busy, idle, compute, comm, comm_exposed, memory, memory_exposed
--   side                        both | base_only | variant_only (a position only one trace reaches)
--   base_count, variant_count   GPU events counted in the step
--   base_ns, variant_ns         the measure in the step, ns
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
-- Ordered by |diff_ns| descending, then step position.
-- @output diff-level 2 steps KEYS step_pos base_step variant_step measure
CREATE OR REPLACE MACRO diff_gpu_timeline_by_step(base_id, variant_id) AS TABLE
SELECT d.k.step_pos AS step_pos, b.step AS base_step, v.step AS variant_step, d.k.measure AS measure,
       d.* EXCLUDE (k)
FROM _diff_sides('_diff_step_src', base_id, variant_id) d
LEFT JOIN (SELECT step_pos, min(step) AS step FROM _diff_step_positions WHERE _diff_in(trace_id, base_id)
           GROUP BY step_pos) b ON b.step_pos = d.k.step_pos
LEFT JOIN (SELECT step_pos, min(step) AS step FROM _diff_step_positions WHERE _diff_in(trace_id, variant_id)
           GROUP BY step_pos) v ON v.step_pos = d.k.step_pos
ORDER BY abs(diff_ns) DESC, step_pos,
         list_position(['span', 'busy', 'idle', 'compute', 'comm', 'comm_exposed', 'memory', 'memory_exposed'],
                       measure);

-- diff_gpu_timeline_steady(base_id, variant_id): the steady state of the trace variant_id against that of base_id
-- (see the top of this file): per measure of diff_gpu_timeline_by_step, its mean per steady step:
--   measure                     span, busy, idle, compute, comm, comm_exposed, memory, memory_exposed
--   base_steps, variant_steps   the steady steps of each trace, comma-separated (`ProfilerStep#7, ProfilerStep#8`)
--   side                        both | base_only | variant_only (a trace without steps has no row)
--   base_count, variant_count   steady steps of each trace
--   base_ns, variant_ns         the measure's mean over those steps, ns (rounded)
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
-- Ordered by |diff_ns| descending.
-- @output diff-level 3 steady KEYS measure base_steps variant_steps
CREATE OR REPLACE MACRO diff_gpu_timeline_steady(base_id, variant_id) AS TABLE
WITH sides(is_base, ids) AS (VALUES (true, base_id), (false, variant_id)),
used AS (
    SELECT is_base, string_agg(step, ', ' ORDER BY step_pos, step) AS steps
    FROM (SELECT DISTINCT s.is_base, p.step_pos, p.step
          FROM sides s JOIN _diff_step_positions p ON p.steady AND _diff_in(p.trace_id, s.ids))
    GROUP BY is_base
)
SELECT d.k.measure AS measure,
       (SELECT steps FROM used WHERE is_base) AS base_steps,
       (SELECT steps FROM used WHERE NOT is_base) AS variant_steps,
       d.* EXCLUDE (k)
FROM _diff_sides('_diff_steady_src', base_id, variant_id) d
ORDER BY abs(diff_ns) DESC,
         list_position(['span', 'busy', 'idle', 'compute', 'comm', 'comm_exposed', 'memory', 'memory_exposed'],
                       measure);
