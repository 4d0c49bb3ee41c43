-- gpu/steps — the ProfilerStep#N ranges of every trace.
--
-- @stores profiler_steps FROM _profiler_steps_build

-- profiler_steps (stored table, see tracesql/store/schema.py): one row per ProfilerStep#N range on the CPU: the
-- events (user_annotation; cpu_op in PyTorch 1.8 traces) named 'ProfilerStep#<N>' that have a duration.
-- `tracesql ingest` stores the rows of _profiler_steps_build as DATASET/traces/trace_id=<id>/profiler_steps/.
--   trace_id, event_id, cat, name, pid, tid   the range, as in `events`
--   step_number                               N (NULL when the suffix is not an integer)
--   ts_ns, dur_ns, end_ns                     start, duration and end (ts_ns + dur_ns), ns
CREATE OR REPLACE VIEW _profiler_steps_build AS
SELECT trace_id, event_id, cat, name, TRY_CAST(substr(name, 14) AS BIGINT) AS step_number, pid, tid,
       ts_ns, dur_ns, ts_ns + dur_ns AS end_ns
FROM events
WHERE name LIKE 'ProfilerStep#%' AND dur_ns IS NOT NULL;

-- _gpu_steps: the ProfilerStep#N ranges (profiler_steps) under the names the GPU views use.
CREATE OR REPLACE VIEW _gpu_steps AS
SELECT trace_id, event_id AS step_event_id, name AS step, step_number, ts_ns AS step_ts_ns, end_ns AS step_end_ns
FROM profiler_steps;
