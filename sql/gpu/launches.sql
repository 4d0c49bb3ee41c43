-- gpu/launches — every launch API call (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel(Ex),
-- hip*LaunchKernel, cudaGraphLaunch/hipGraphLaunch, memcpy and memset APIs: the `launches` table) with the
-- GPU work it launched: the GPU events gpu_activity links to it (gpu_launch_links: the same trace and
-- correlation id). A graph launch has many GPU events.
--
-- @requires gpu/activity

-- launch_stats_at(runtime_cutoff_us, launch_delay_cutoff_us): one row per launch call.
--   trace_id, launch_event_id, api, launch_kind   the call, its API name and kind (kernel/graph/memcpy/memset)
--   tid                       CPU thread of the call
--   ts_ns, cpu_dur_ns         start and duration of the call on the CPU, ns
--   n_gpu_events              GPU events linked to the call (0: its work is not in the trace)
--   gpu_start_ns, gpu_end_ns  first GPU start and last GPU end of that work, ns
--   gpu_dur_ns                summed duration of that work, ns (the kernel's duration for a kernel launch)
--   launch_delay_ns           gpu_start_ns - (ts_ns + cpu_dur_ns): from the end of the call to the start of
--                             the work, ns; negative when the work started before the call returned
--   short_kernel              gpu_dur_ns < cpu_dur_ns and cpu_dur_ns <= runtime_cutoff_us: launching took
--                             longer than running
--   runtime_outlier           cpu_dur_ns > runtime_cutoff_us
--   launch_delay_outlier      launch_delay_ns > launch_delay_cutoff_us
CREATE OR REPLACE MACRO launch_stats_at(runtime_cutoff_us, launch_delay_cutoff_us) AS TABLE
WITH g AS (
    SELECT trace_id, launch_event_id, count(*) AS n, min(ts_ns) AS s, max(end_ns) AS e, sum(dur_ns) AS d
    FROM _gpu_activity_core WHERE launch_event_id IS NOT NULL GROUP BY trace_id, launch_event_id
)
SELECT l.trace_id, l.event_id AS launch_event_id, l.name AS api, l.launch_kind, l.tid, l.ts_ns,
       l.dur_ns AS cpu_dur_ns, coalesce(g.n, 0) AS n_gpu_events, g.s AS gpu_start_ns, g.e AS gpu_end_ns,
       g.d::BIGINT AS gpu_dur_ns, g.s - (l.ts_ns + l.dur_ns) AS launch_delay_ns,
       coalesce(g.d < l.dur_ns AND l.dur_ns <= runtime_cutoff_us * 1000, false) AS short_kernel,
       l.dur_ns > runtime_cutoff_us * 1000 AS runtime_outlier,
       coalesce(g.s - (l.ts_ns + l.dur_ns) > launch_delay_cutoff_us * 1000, false) AS launch_delay_outlier
FROM launches l
LEFT JOIN g ON g.trace_id = l.trace_id AND g.launch_event_id = l.event_id;

-- launch_stats: launch_stats_at(50, 100): the cut-offs HTA uses (50 µs call, 100 µs delay).
-- @output report-native 9 launch_stats CALL launches \
--     TITLE "Launch calls" \
--     ABOUT "Per launch API: calls, their CPU duration, the delay from the call to the GPU start, and outliers; µs."
CREATE OR REPLACE VIEW launch_stats AS SELECT * FROM launch_stats_at(50, 100);

-- launch_stats_by_api: one row per (trace, launch API) over launch_stats.
--   api, launch_kind; calls; calls_with_gpu (calls whose GPU work is in the trace); gpu_events
--   cpu_dur_mean_ns, cpu_dur_median_ns, cpu_dur_max_ns          duration of the calls, ns
--   gpu_dur_mean_ns                                             GPU time per call with work, ns
--   launch_delay_mean_ns, launch_delay_median_ns, launch_delay_max_ns   over calls with GPU work, ns
--   short_kernels, runtime_outliers, launch_delay_outliers      counts of flagged calls (50 / 100 µs)
CREATE OR REPLACE VIEW launch_stats_by_api AS
SELECT trace_id, api, launch_kind, count(*) AS calls, count(gpu_start_ns) AS calls_with_gpu,
       sum(n_gpu_events)::BIGINT AS gpu_events,
       avg(cpu_dur_ns) AS cpu_dur_mean_ns, median(cpu_dur_ns) AS cpu_dur_median_ns, max(cpu_dur_ns) AS cpu_dur_max_ns,
       avg(gpu_dur_ns) AS gpu_dur_mean_ns,
       avg(launch_delay_ns) AS launch_delay_mean_ns, median(launch_delay_ns) AS launch_delay_median_ns,
       max(launch_delay_ns) AS launch_delay_max_ns,
       count(*) FILTER (WHERE short_kernel) AS short_kernels,
       count(*) FILTER (WHERE runtime_outlier) AS runtime_outliers,
       count(*) FILTER (WHERE launch_delay_outlier) AS launch_delay_outliers
FROM launch_stats GROUP BY trace_id, api, launch_kind;
