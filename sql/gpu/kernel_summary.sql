-- gpu/kernel_summary — statistics of GPU event durations per kernel name.
--
-- Which events count: every row of gpu_activity except cuda_sync waits (kernels, memcpy and memset, linked
-- to a launch in the trace or not). Percentages are of the trace's (or step's) counted events.
--
-- @requires gpu/activity lib/stats

-- kernel_summary_of(step_name, full_names): one row per (trace, name); a table macro so that the command
-- line can pick one ProfilerStep and short or full names.
--   step_name    NULL for the whole trace, else a step name such as 'ProfilerStep#6' (GPU events launched
--                inside that step's CPU range)
--   full_names   false: group by short_name (template and parameter lists removed), true: by full name
-- Columns:
--   trace_id; name               the (short or full) kernel name
--   activity_class               compute | comm | memcpy | memset (the first one seen, by name)
--   count                        GPU events
--   total_ns, avg_ns, min_ns, max_ns   sum, mean, minimum, maximum duration, ns
--   std_ns                       sample standard deviation of the duration, ns (0 for a single event)
--   launches_pct                 100 count / all counted events of the trace (or step)
--   time_pct                     100 total_ns / summed duration of all counted events of the trace (or step)
--   n_names                      distinct full names merged into this row (1 with full_names)
CREATE OR REPLACE MACRO kernel_summary_of(step_name, full_names) AS TABLE
WITH ev AS (   -- grouped by the integer ids of _gpu_names; the text is joined to the groups
    SELECT trace_id, CASE WHEN full_names THEN name_id ELSE short_id END AS kid, name_id, activity_class, dur_ns
    FROM _gpu_activity_core
    WHERE activity_class <> 'sync'
      AND (step_name IS NULL OR step_event_id IN (SELECT step_event_id FROM _gpu_steps WHERE step = step_name))
), g AS (
    SELECT trace_id, kid, min(activity_class) AS activity_class, count(*) AS count,
           sum(dur_ns)::BIGINT AS total_ns, avg(dur_ns) AS avg_ns, min(dur_ns) AS min_ns, max(dur_ns) AS max_ns,
           _stddev_samp_int(dur_ns) AS std_ns, count(DISTINCT name_id) AS n_names
    FROM ev GROUP BY trace_id, kid
), names AS (
    SELECT DISTINCT CASE WHEN full_names THEN name_id ELSE short_id END AS kid,
           CASE WHEN full_names THEN name ELSE coalesce(short_name, name) END AS name
    FROM _gpu_names
)
SELECT g.trace_id, n.name, g.activity_class, g.count, g.total_ns, g.avg_ns, g.min_ns, g.max_ns, g.std_ns,
       100.0 * g.count / sum(g.count) OVER (PARTITION BY g.trace_id) AS launches_pct,
       100.0 * g.total_ns / nullif(sum(g.total_ns) OVER (PARTITION BY g.trace_id), 0) AS time_pct,
       g.n_names
FROM g LEFT JOIN names n USING (kid);

-- kernel_summary: kernel_summary_of(NULL, false): whole traces, short names; one row per (trace, short name).
-- @output report-native 4 kernel_summary CALL kernels \
--     TITLE "Kernels by GPU time" \
--     ABOUT "One row per kernel (short name): calls, summed and mean duration, share of the GPU time; µs."
CREATE OR REPLACE VIEW kernel_summary AS SELECT * FROM kernel_summary_of(NULL, false);

-- kernel_summary_full: kernel_summary_of(NULL, true): whole traces, one row per (trace, full kernel name).
CREATE OR REPLACE VIEW kernel_summary_full AS SELECT * FROM kernel_summary_of(NULL, true);
