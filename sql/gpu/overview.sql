-- gpu/overview — the first screen of `tracesql report` and `tracesql summary`: per trace, the GPUs it ran on,
-- the headline timeline numbers, and the first rows of the detailed views (categories, kernels, ops, gaps,
-- launches), ranked here so that the Python side only formats. Every number is read from the detailed view
-- named in its comment, with that view's definition.
--
-- @requires lib/intervals gpu/timeline gpu/kernel_summary gpu/op_summaries gpu/gaps gpu/launches categories/kernels tree/attribution

-- _overview_device_props: one row per entry of a trace's Kineto deviceProperties list.
CREATE OR REPLACE VIEW _overview_device_props AS
SELECT t.trace_id, TRY_CAST(p->>'id' AS INTEGER) AS device, p->>'name' AS gpu_name,
       TRY_CAST(p->>'totalGlobalMem' AS BIGINT) AS memory_bytes, TRY_CAST(p->>'numSms' AS INTEGER) AS num_sms
FROM traces t, unnest(json_extract(t.device_properties, '$[*]')) AS u(p)
WHERE t.device_properties IS NOT NULL;

-- overview_gpus: one row per (trace, device) that ran GPU events (rows of `kernels`).
--   trace_id, device        the device id of the GPU events (NULL when the trace does not say)
--   gpu_name                name of the deviceProperties entry with that id (NULL when there is none)
--   memory_gib              its totalGlobalMem, GiB;  num_sms  its multiprocessor count
--   n_gpu_events            GPU events on the device
CREATE OR REPLACE VIEW overview_gpus AS
SELECT k.trace_id, k.device, p.gpu_name, p.memory_bytes / 1073741824.0 AS memory_gib, p.num_sms,
       k.n_gpu_events
FROM (SELECT trace_id, device, count(*) AS n_gpu_events FROM kernels GROUP BY ALL) k
LEFT JOIN _overview_device_props p ON p.trace_id = k.trace_id AND p.device = k.device;

-- overview_traces: one row per trace: what ran where, and the GPU timeline of all its devices pooled.
--   trace_id, file_name              the trace
--   rank, world_size, distributed_backend   from the trace header (traces)
--   gpu_models                       distinct GPU names of the devices that ran GPU events (overview_gpus),
--                                    ', '-joined; when none of them is in deviceProperties, the names of
--                                    every deviceProperties entry; NULL without deviceProperties
--   gpu_count                        devices that ran GPU events
--   node_gpu_count                   entries in deviceProperties (the GPUs the process could see)
--   n_streams                        (device, stream) pairs with GPU events
--   n_events, span_ns, window_ns, busy_ns, idle_ns   gpu_timeline, pooled row (device NULL)
--   busy_pct, idle_pct, compute_pct, comm_pct, comm_exposed_pct, memory_pct, memory_exposed_pct
--                                    gpu_timeline, pooled row: percentages of span_ns
-- @output summary 1 overview_traces ORDER BY file_name, trace_id
CREATE OR REPLACE VIEW overview_traces AS
WITH g AS (
    SELECT trace_id, string_agg(DISTINCT gpu_name, ', ' ORDER BY gpu_name) AS used_models,
           count(DISTINCT device) AS gpu_count
    FROM overview_gpus GROUP BY trace_id
), p AS (
    SELECT trace_id, string_agg(DISTINCT gpu_name, ', ' ORDER BY gpu_name) AS all_models
    FROM _overview_device_props GROUP BY trace_id
), s AS (
    SELECT trace_id, count(*) AS n_streams FROM (SELECT DISTINCT trace_id, device, stream FROM kernels) GROUP BY ALL
)
SELECT t.trace_id, t.file_name, t.rank, t.world_size, t.distributed_backend,
       coalesce(g.used_models, p.all_models) AS gpu_models, coalesce(g.gpu_count, 0) AS gpu_count,
       t.device_count AS node_gpu_count, coalesce(s.n_streams, 0) AS n_streams,
       tl.n_events, tl.span_ns, tl.window_ns, tl.busy_ns, tl.idle_ns, tl.busy_pct, tl.idle_pct, tl.compute_pct,
       tl.comm_pct, tl.comm_exposed_pct, tl.memory_pct, tl.memory_exposed_pct
FROM traces t
LEFT JOIN g USING (trace_id) LEFT JOIN p USING (trace_id) LEFT JOIN s USING (trace_id)
LEFT JOIN gpu_timeline tl ON tl.trace_id = t.trace_id AND tl.pooled;

-- overview_timeline: the rows of gpu_timeline the first screen shows: the pooled row of every trace, and the
-- per-device rows only for traces that ran on more than one device (for one device they repeat the pooled
-- row). Columns as in gpu_timeline:
--   trace_id, pooled, device (NULL on the pooled row)
--   n_events, span_ns, busy_ns, idle_ns, busy_pct, idle_pct, compute_pct, comm_pct, comm_exposed_pct,
--   memory_pct, memory_exposed_pct
-- @output summary 2 overview_timeline ORDER BY trace_id, pooled DESC, device
CREATE OR REPLACE VIEW overview_timeline AS
SELECT trace_id, pooled, device, n_events, span_ns, busy_ns, idle_ns, busy_pct, idle_pct, compute_pct, comm_pct,
       comm_exposed_pct, memory_pct, memory_exposed_pct
FROM gpu_timeline g
WHERE pooled OR (SELECT count(*) FROM gpu_timeline d WHERE d.trace_id = g.trace_id AND NOT d.pooled) > 1;

-- overview_top_categories: the five kernel categories (default rules) with the most GPU time per trace, from
-- kernel_category_summary (Σ duration over every GPU event, cuda_sync waits included as category sync).
--   trace_id, rank (1 = most time), kernel_category, count, total_ns, pct (of the trace's Σ duration)
-- @output summary 3 overview_top_categories ORDER BY trace_id, rank
CREATE OR REPLACE VIEW overview_top_categories AS
SELECT trace_id, row_order AS rank, kernel_category, count, round(total_time_ms * 1e6)::BIGINT AS total_ns, pct
FROM kernel_category_summary WHERE ruleset = 'default' AND row_order <= 5;

-- overview_top_kernels: the five kernels (short names) with the most GPU time per trace, from kernel_summary.
--   trace_id, rank (1 = most time; ties by name), name, activity_class, count, total_ns, avg_ns,
--   time_pct (of the summed duration of the trace's counted GPU events), n_names (full names merged)
-- @output summary 4 overview_top_kernels ORDER BY trace_id, rank
CREATE OR REPLACE VIEW overview_top_kernels AS
SELECT * FROM (
    SELECT trace_id, row_number() OVER (PARTITION BY trace_id ORDER BY total_ns DESC, name) AS rank, name,
           activity_class, count, total_ns, avg_ns, time_pct, n_names
    FROM kernel_summary)
WHERE rank <= 5;

-- overview_top_ops: the five ops with the most GPU time per trace, from op_summary (a GPU event belongs to
-- its op in gpu_event_attribution; '[no launch]' and '[launch API]' rows included).
--   trace_id, rank (1 = most time; ties by name), op_name, hlo_module, op_count, kernel_count, kernel_time_ns,
--   time_pct
-- @output summary 5 overview_top_ops ORDER BY trace_id, rank
CREATE OR REPLACE VIEW overview_top_ops AS
SELECT * FROM (
    SELECT trace_id,
           row_number() OVER (PARTITION BY trace_id ORDER BY kernel_time_ns DESC, op_name, hlo_module) AS rank,
           op_name, hlo_module, op_count, kernel_count, kernel_time_ns, time_pct
    FROM op_summary)
WHERE rank <= 5;

-- overview_largest_gaps: the three largest idle gaps per trace (gpu_gaps: start of an event minus the latest
-- end of the earlier events on its stream).
--   trace_id, rank (1 = largest; ties by stream position), device, stream
--   gap_ns               length of the gap, ns
--   at_ns                where it starts, ns after the trace's first GPU activity (gpu_timeline pooled row)
--   prev_name, name      short names of the events before and after it
--   host_wait            the launch of the event after it started after the gap began: the GPU waited for the CPU
-- @output summary 6 overview_largest_gaps ORDER BY trace_id, rank
CREATE OR REPLACE VIEW overview_largest_gaps AS
SELECT * FROM (
    SELECT g.trace_id,
           row_number() OVER (PARTITION BY g.trace_id ORDER BY g.gap_ns DESC, g.device, g.stream, g.seq) AS rank,
           g.device, g.stream, g.gap_ns, g.prev_end_ns - tl.first_start_ns AS at_ns,
           coalesce(g.prev_short_name, g.prev_name) AS prev_name, coalesce(g.short_name, g.name) AS name,
           g.host_wait
    FROM gpu_gaps g JOIN gpu_timeline tl ON tl.trace_id = g.trace_id AND tl.pooled
    WHERE g.gap_ns > 0)
WHERE rank <= 3;

-- _overview_host_wait_members: per trace, the intervals of _class_unions that place host waits on the GPU's
-- timeline: C every counted GPU event (all devices and streams, as gpu_timeline), K every host-wait gap
-- (gpu_gaps: from the latest end of the earlier events on the stream to the start of an event whose launch
-- call began after that end).
CREATE OR REPLACE VIEW _overview_host_wait_members AS
SELECT trace_id, 0::BIGINT AS grp, 'C' AS cls, ts_ns AS s, end_ns AS e
FROM _gpu_activity_core WHERE activity_class <> 'sync'
UNION ALL
SELECT trace_id, 0::BIGINT, 'K', prev_end_ns, ts_ns FROM _gpu_gaps_core WHERE gap_ns > 0 AND host_wait;

-- _overview_host_wait_unions: per trace with GPU events, host_wait_union_ns = |U(host-wait gaps)| (time at
-- least one stream waited for a launch) and idle_host_wait_ns = |U(host-wait gaps) - U(GPU events)| (time no
-- stream of any device was busy and at least one waited for a launch), ns.
CREATE OR REPLACE VIEW _overview_host_wait_unions AS
SELECT trace_id, coalesce(K_len, 0)::BIGINT AS host_wait_union_ns, (CK_len - C_len)::BIGINT AS idle_host_wait_ns
FROM _class_unions('_overview_host_wait_members');

-- overview_launch_hints: per trace, whether the GPU waited on the CPU's launches. Pooled over the trace's
-- devices like gpu_timeline: a moment is GPU idle when no stream of any device runs an event.
--   trace_id
--   span_ns, gpu_idle_ns        gpu_timeline, pooled row: first GPU start to last GPU end, and the idle part of it
--   gpu_idle_pct                100 gpu_idle_ns / span_ns (gpu_timeline idle_pct)
--   idle_host_wait_ns           the part of gpu_idle_ns during which at least one stream waited for the CPU to
--                               launch its next event (a host-wait gap, gpu_gaps), ns: the idle time the launches
--                               explain. At most gpu_idle_ns, so at most span_ns
--   idle_host_wait_pct          100 idle_host_wait_ns / gpu_idle_ns (NULL when the GPU was never idle)
--   idle_host_wait_span_pct     100 idle_host_wait_ns / span_ns
--   host_wait_union_ns          time at least one stream waited for a launch (union of the host-wait gaps over
--                               streams, GPU busy on other streams or not), ns
--   n_streams                   (device, stream) pairs with GPU events
--   stream_idle_sum_ns          the positive gaps summed over the n_streams streams (idle_breakdown), ns: it counts
--                               a moment once per idle stream, so it can exceed span_ns
--   host_wait_sum_ns, host_wait_gaps   the host-wait part of stream_idle_sum_ns (summed over streams the same
--                               way), ns, and its number of gaps (idle_breakdown host_wait)
--   host_wait_sum_pct           100 host_wait_sum_ns / stream_idle_sum_ns
--   launches                    launch calls of any kind (kernel, graph, memcpy, memset) whose GPU work is in the
--                               trace (launch_stats, n_gpu_events > 0): the evidence the hint rests on
--   kernel_launches             of those, kernel launch calls
--   short_kernels               of those, the ones whose GPU time was shorter than the call (launch_stats
--                               short_kernel);  short_kernel_pct  100 short_kernels / kernel_launches
--   launch_median_ns            median duration of the kernel launch calls, ns;  kernel_median_ns  median GPU time
--                               per kernel launch call, ns
--   launch_bound                enough evidence, launches >= 50 and host_wait_gaps >= 20 (a handful of kernels, or
--                               one long CPU stall, says nothing about launch overhead), and the GPU spent at
--                               least a tenth of its span idle waiting for launches (idle_host_wait_ns >= 10 % of
--                               span_ns), which explains at least half of its idle time (>= 50 % of gpu_idle_ns)
--   launch_bound_reason         NULL when launch_bound; else the first condition that fails, with its value (the
--                               percentages cut, not rounded, to one decimal)
-- @output summary 7 overview_launch_hints ORDER BY trace_id
CREATE OR REPLACE VIEW overview_launch_hints AS
WITH i AS (
    SELECT trace_id, sum(idle_ns)::BIGINT AS idle_ns,
           coalesce(sum(idle_ns) FILTER (WHERE idle_category = 'host_wait'), 0)::BIGINT AS host_wait_ns,
           coalesce(sum(count) FILTER (WHERE idle_category = 'host_wait'), 0)::BIGINT AS host_wait_gaps
    FROM idle_breakdown GROUP BY trace_id
), l AS (
    SELECT trace_id, count(*) AS launches, count(*) FILTER (WHERE launch_kind = 'kernel') AS kernel_launches,
           count(*) FILTER (WHERE launch_kind = 'kernel' AND short_kernel) AS short_kernels,
           median(cpu_dur_ns) FILTER (WHERE launch_kind = 'kernel') AS launch_median_ns,
           median(gpu_dur_ns) FILTER (WHERE launch_kind = 'kernel') AS kernel_median_ns
    FROM launch_stats WHERE n_gpu_events > 0 GROUP BY trace_id
), h AS (
    SELECT t.trace_id, t.span_ns, t.idle_ns AS gpu_idle_ns, t.idle_pct AS gpu_idle_pct,
           coalesce(u.idle_host_wait_ns, 0) AS idle_host_wait_ns,
           coalesce(u.host_wait_union_ns, 0) AS host_wait_union_ns, t.n_streams,
           coalesce(i.idle_ns, 0) AS stream_idle_sum_ns, coalesce(i.host_wait_ns, 0) AS host_wait_sum_ns,
           coalesce(i.host_wait_gaps, 0) AS host_wait_gaps, coalesce(l.launches, 0) AS launches,
           coalesce(l.kernel_launches, 0) AS kernel_launches, coalesce(l.short_kernels, 0) AS short_kernels,
           l.launch_median_ns, l.kernel_median_ns
    FROM overview_traces t LEFT JOIN _overview_host_wait_unions u USING (trace_id) LEFT JOIN i USING (trace_id)
    LEFT JOIN l USING (trace_id)
)
SELECT trace_id, span_ns, gpu_idle_ns, gpu_idle_pct, idle_host_wait_ns,
       100.0 * idle_host_wait_ns / nullif(gpu_idle_ns, 0) AS idle_host_wait_pct,
       100.0 * idle_host_wait_ns / nullif(span_ns, 0) AS idle_host_wait_span_pct,
       host_wait_union_ns, n_streams, stream_idle_sum_ns, host_wait_sum_ns, host_wait_gaps,
       100.0 * host_wait_sum_ns / nullif(stream_idle_sum_ns, 0) AS host_wait_sum_pct,
       launches, kernel_launches, short_kernels, 100.0 * short_kernels / nullif(kernel_launches, 0) AS short_kernel_pct,
       launch_median_ns, kernel_median_ns,
       launches >= 50 AND host_wait_gaps >= 20 AND idle_host_wait_ns >= 0.1 * span_ns
           AND idle_host_wait_ns >= 0.5 * gpu_idle_ns AS launch_bound,
       CASE WHEN span_ns IS NULL THEN 'no GPU activity'
            WHEN launches < 50 THEN format('{} launch{} with GPU work, too few to tell (needs 50)', launches,
                                         CASE WHEN launches = 1 THEN '' ELSE 'es' END)
            WHEN host_wait_gaps < 20
                THEN format('{} gap{} where the GPU waited for a launch, too few to tell (needs 20)',
                            host_wait_gaps, CASE WHEN host_wait_gaps = 1 THEN '' ELSE 's' END)
            WHEN idle_host_wait_ns < 0.1 * span_ns
                THEN format('the GPU waited for launches {:.1f} % of its span (needs 10 %)',
                            trunc(1000.0 * idle_host_wait_ns / span_ns) / 10)
            WHEN idle_host_wait_ns < 0.5 * gpu_idle_ns
                THEN format('launches explain {:.1f} % of the GPU idle time (needs 50 %)',
                            trunc(1000.0 * idle_host_wait_ns / gpu_idle_ns) / 10)
       END AS launch_bound_reason
FROM h;

-- overview_no_gpu: one row per trace without GPU events (no row of `kernels`: no kernel, memcpy or memset), saying
-- why its GPU sections are absent from a report.
--   trace_id
--   cpu_events            events of the CPU side (the `events` table)
--   launch_calls          launch API calls (the `launches` table): their GPU work is not in the trace
--   gpu_count             entries in the trace's deviceProperties (traces.device_count)
--   reason                one sentence: launch calls without GPU events mean the profiler did not record the GPU
--                         side (its CUDA/ROCm activity off, or a device or mode whose events are not in the JSON:
--                         MTIA, the CUPTI range profiler); without launch calls the run did no GPU work (CPU only)
CREATE OR REPLACE VIEW overview_no_gpu AS
WITH e AS (SELECT trace_id, count(*) AS n FROM events GROUP BY trace_id),
     l AS (SELECT trace_id, count(*) AS n FROM launches GROUP BY trace_id)
SELECT t.trace_id, coalesce(e.n, 0) AS cpu_events, coalesce(l.n, 0) AS launch_calls, t.device_count AS gpu_count,
       CASE WHEN coalesce(l.n, 0) > 0
            THEN format('no GPU events, though {:,} launch calls: the profiler did not record the GPU side (GPU '
                        || 'activity off, or a device or mode whose events it does not write, e.g. MTIA or the '
                        || 'CUPTI range profiler)', l.n)
            ELSE format('no GPU events and no launch calls: a CPU-only run ({:,} CPU events{})', coalesce(e.n, 0),
                        CASE WHEN t.distributed_backend IS NOT NULL
                             THEN ', backend ' || t.distributed_backend ELSE '' END)
       END AS reason
FROM traces t LEFT JOIN e USING (trace_id) LEFT JOIN l USING (trace_id)
WHERE NOT EXISTS (SELECT 1 FROM kernels k WHERE k.trace_id = t.trace_id);

-- overview_attribution: one row per trace with GPU work: how much of its GPU time has no op
-- (gpu_event_attribution; Σ duration of the counted GPU events, cuda_sync waits excluded, as in op_summary).
--   trace_id
--   gpu_ns                   Σ duration of the counted GPU events, ns
--   placeholder_ns, placeholder_pct   of it, under '[launch API]' or '[no launch]' (no op, no launch site)
--   graph_placeholder_pct    the part of placeholder_pct launched by graph launches
--   no_launch_pct            the part of placeholder_pct whose launch is not in the trace
--   twin_pct                 share of GPU time whose op comes from a twin trace or a graph node tag
--   launch_site_pct          share of GPU time attributed to a launch site (no cpu_op around the launch)
--   graph_launches           graph launches with GPU work;  unplaced_graphs  those of a trace with a twin that
--                            were not placed on it (graph_alignment status ambiguous or unmatched)
-- @output summary 10 overview_attribution ORDER BY trace_id
CREATE OR REPLACE VIEW overview_attribution AS
WITH a AS (
    SELECT trace_id, sum(dur_ns)::BIGINT AS gpu_ns,
           coalesce(sum(dur_ns) FILTER (WHERE source IN ('launch api', 'no launch')), 0)::BIGINT AS placeholder_ns,
           coalesce(sum(dur_ns) FILTER (WHERE source = 'launch api' AND launch_kind = 'graph'), 0) AS graph_ph_ns,
           coalesce(sum(dur_ns) FILTER (WHERE source = 'no launch'), 0) AS no_launch_ns,
           coalesce(sum(dur_ns) FILTER (WHERE source IN ('graph node', 'capture', 'eager')), 0) AS twin_ns,
           coalesce(sum(dur_ns) FILTER (WHERE source = 'launch site'), 0) AS site_ns,
           count(DISTINCT launch_event_id) FILTER (WHERE launch_kind = 'graph') AS graph_launches
    FROM gpu_event_attribution WHERE cat <> 'cuda_sync' GROUP BY trace_id
), g AS (
    SELECT trace_id, count(*) FILTER (WHERE status <> 'matched') AS unplaced_graphs FROM graph_alignment GROUP BY ALL
)
SELECT a.trace_id, a.gpu_ns, a.placeholder_ns, 100.0 * a.placeholder_ns / nullif(a.gpu_ns, 0) AS placeholder_pct,
       100.0 * a.graph_ph_ns / nullif(a.gpu_ns, 0) AS graph_placeholder_pct,
       100.0 * a.no_launch_ns / nullif(a.gpu_ns, 0) AS no_launch_pct,
       100.0 * a.twin_ns / nullif(a.gpu_ns, 0) AS twin_pct, 100.0 * a.site_ns / nullif(a.gpu_ns, 0) AS launch_site_pct,
       a.graph_launches, coalesce(g.unplaced_graphs, 0) AS unplaced_graphs
FROM a LEFT JOIN g USING (trace_id);
