-- gpu/activity — the GPU-side events of every trace, classified, with the CPU call that launched them: the
-- base of the timeline, kernel summary, gap, launch and peer-style views.
--
-- @requires lib/names gpu/steps tree/links categories/kernels

-- _gpu_names: each distinct (cat, name) of the GPU events with its short name and class (computed once per
-- name rather than once per event: the name rewriting is regex work), and integer ids for both names.
-- Kernel names are long (hundreds of characters of template arguments), so the per-event views below carry
-- name_id and join the text only where it is shown: sorting, windowing or hashing the text of every event
-- costs far more than the arithmetic on it.
--   name_id      1, 2, ... in (cat, name) order, unique in the dataset
--   short_id     1, 2, ... in short_name order: events whose names shorten alike share it
-- @materialize report report-tracelens report-hta
CREATE OR REPLACE VIEW _gpu_names AS
SELECT row_number() OVER (ORDER BY cat, name) AS name_id,
       dense_rank() OVER (ORDER BY coalesce(short_name, name)) AS short_id, cat, name, short_name, activity_class
FROM (SELECT k.cat, k.name, _short_kernel_name(k.name) AS short_name, coalesce(c.activity_class, 'compute') AS activity_class
      FROM (SELECT DISTINCT cat, name FROM kernels) k
      LEFT JOIN kernel_name_categories c
        ON c.ruleset = 'default' AND c.cat IS NOT DISTINCT FROM k.cat AND c.name = k.name);

-- _gpu_activity_core: gpu_activity (below) with integers only: name_id and short_id (see _gpu_names) instead
-- of cat, name and short_name, step_event_id (the ProfilerStep range, see _gpu_steps) instead of step and
-- step_number, and no launch name, kind or thread. The analyses read it; gpu_activity adds the text back.
-- The launch is the call in gpu_launch_links when it is a launch API (a row of `launches`); the step is the
-- latest ProfilerStep#N that starts at or before the launch call, when the call starts before its end (an
-- ASOF join).
-- @materialize report report-tracelens report-hta
CREATE OR REPLACE VIEW _gpu_activity_core AS
SELECT k.trace_id, k.event_id, k.device, k.stream, n.name_id, n.short_id, n.activity_class,
       k.ts_ns, k.dur_ns, k.ts_ns + k.dur_ns AS end_ns, k.correlation, k.launch_event_id, k.launch_ts_ns,
       k.launch_dur_ns, CASE WHEN k.launch_ts_ns < s.step_end_ns THEN s.step_event_id END AS step_event_id
FROM (SELECT trace_id, event_id, device, stream, cat, name, ts_ns, dur_ns, correlation,
             CASE WHEN launch_kind IS NOT NULL THEN launch_event_id END AS launch_event_id,
             CASE WHEN launch_kind IS NOT NULL THEN launch_ts_ns END AS launch_ts_ns,
             CASE WHEN launch_kind IS NOT NULL THEN launch_dur_ns END AS launch_dur_ns
      FROM gpu_launch_links WHERE ts_ns IS NOT NULL AND dur_ns IS NOT NULL) k
JOIN _gpu_names n ON n.cat IS NOT DISTINCT FROM k.cat AND n.name IS NOT DISTINCT FROM k.name
ASOF LEFT JOIN _gpu_steps s ON s.trace_id = k.trace_id AND k.launch_ts_ns >= s.step_ts_ns;

-- gpu_activity: one row per GPU-side event (every row of `kernels`), with its class and its launch.
--   trace_id, event_id           the GPU event
--   device, stream               where it ran (device NULL when the trace does not say)
--   cat, name                    normalised category (kernel, gpu_memcpy, gpu_memset, cuda_sync) and name
--   short_name                   _short_kernel_name(name)
--   activity_class               compute | comm | memcpy | memset | sync: the class of the event's `default`
--                                category rule (kernel_name_categories.activity_class; compute when none)
--   ts_ns, dur_ns, end_ns        start, duration and end on the GPU, ns (end_ns = ts_ns + dur_ns)
--   correlation                  correlation id linking it to its launch (gpu_launch_links.correlation)
--   launch_event_id              the launch API call (a row of `launches`: kernel, graph, memcpy or memset
--                                launch) that gpu_launch_links links it to; NULL when the launch is not in
--                                the trace (warm-up work) or the linked call is not a launch (a cuda_sync
--                                wait's cudaStreamSynchronize)
--   launch_name, launch_kind     API name (cudaLaunchKernel, cuLaunchKernelEx, hipGraphLaunch, ...) and
--                                kind (kernel, graph, memcpy, memset)
--   launch_ts_ns, launch_dur_ns  start and duration of the launching call, ns
--   launch_tid                   CPU thread of the launching call
--   step, step_number            ProfilerStep#N whose CPU range contains the launch start (NULL if none)
CREATE OR REPLACE VIEW gpu_activity AS
SELECT a.trace_id, a.event_id, a.device, a.stream, n.cat, n.name, n.short_name, a.activity_class,
       a.ts_ns, a.dur_ns, a.end_ns, a.correlation, a.launch_event_id,
       CASE WHEN a.launch_event_id IS NOT NULL THEN l.launch_name END AS launch_name,
       CASE WHEN a.launch_event_id IS NOT NULL THEN l.launch_kind END AS launch_kind,
       a.launch_ts_ns, a.launch_dur_ns,
       CASE WHEN a.launch_event_id IS NOT NULL THEN l.launch_tid END AS launch_tid, s.step, s.step_number
FROM _gpu_activity_core a JOIN _gpu_names n USING (name_id)
JOIN gpu_launch_links l USING (trace_id, event_id)
LEFT JOIN _gpu_steps s USING (trace_id, step_event_id);
