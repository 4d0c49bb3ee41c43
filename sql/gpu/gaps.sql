-- gpu/gaps — idle time between consecutive GPU events on the same stream.
--
-- Events: gpu_activity rows except cuda_sync waits, per (trace, device, stream) in start order (ties by
-- event_id). The gap before an event is its start minus the latest end of all earlier events on that
-- stream (not just the previous one, so a short event nested in a long one opens no false gap). A gap
-- <= 0 means the stream was never idle before the event; idle time is the sum of the positive gaps.
--
-- @requires gpu/activity lib/stats

-- _gpu_gaps_core: gpu_gaps without the name text: name_id, short_id, prev_name_id, prev_short_id instead
-- (see _gpu_names); the windows run over these narrow rows.
-- @materialize report
CREATE OR REPLACE VIEW _gpu_gaps_core AS
WITH o AS (
    SELECT trace_id, device, stream, event_id, name_id, short_id, activity_class, ts_ns, dur_ns, end_ns,
           launch_ts_ns, step_event_id,
           row_number() OVER w AS seq,
           lag(event_id) OVER w AS prev_event_id, lag(name_id) OVER w AS prev_name_id,
           lag(short_id) OVER w AS prev_short_id,
           max(end_ns) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM _gpu_activity_core
    WHERE activity_class <> 'sync'
    WINDOW w AS (PARTITION BY trace_id, device, stream ORDER BY ts_ns, event_id)
)
SELECT *, ts_ns - prev_end_ns AS gap_ns, greatest(ts_ns - prev_end_ns, 0) AS idle_ns,
       coalesce(launch_ts_ns > prev_end_ns, false) AS host_wait
FROM o;

-- gpu_gaps: one row per GPU event.
--   trace_id, device, stream, event_id, name, short_name, activity_class, ts_ns, dur_ns, end_ns
--   seq                  1-based position on the stream
--   prev_event_id, prev_name, prev_short_name   the event just before on the stream (NULL for the first)
--   prev_end_ns          latest end of all earlier events on the stream, ns
--   gap_ns               ts_ns - prev_end_ns (NULL for the first event; negative when it started before
--                        earlier work had finished)
--   idle_ns              greatest(gap_ns, 0)
--   launch_ts_ns         start of the launching call (NULL when the launch is not in the trace)
--   host_wait            the launching call started after prev_end_ns: the GPU waited for the CPU
CREATE OR REPLACE VIEW gpu_gaps AS
SELECT g.trace_id, g.device, g.stream, g.event_id, n.name, n.short_name, g.activity_class, g.ts_ns, g.dur_ns,
       g.end_ns, g.launch_ts_ns, st.step, g.seq, g.prev_event_id, p.name AS prev_name, p.short_name AS prev_short_name,
       g.prev_end_ns, g.gap_ns, g.idle_ns, g.host_wait
FROM _gpu_gaps_core g JOIN _gpu_names n USING (name_id) LEFT JOIN _gpu_names p ON p.name_id = g.prev_name_id
LEFT JOIN _gpu_steps st USING (trace_id, step_event_id);

-- gap_totals_by_stream: one row per (trace, device, stream).
--   n_events             GPU events on the stream
--   n_gaps               events preceded by a positive gap
--   idle_ns              sum of the positive gaps, ns
--   mean_gap_ns, max_gap_ns   over the positive gaps, ns
--   first_start_ns, last_end_ns, span_ns   extent of the stream's activity, ns
--   busy_ns              span_ns - idle_ns (time the stream had work)
--   idle_pct             100 idle_ns / span_ns
-- @output report-native 5 gaps_by_stream CALL gaps what=streams \
--     TITLE "Idle gaps per stream" \
--     ABOUT "Per stream: GPU events, idle gaps between them and their total, mean and largest length; µs."
CREATE OR REPLACE VIEW gap_totals_by_stream AS
SELECT trace_id, device, stream, count(*) AS n_events, count(*) FILTER (WHERE gap_ns > 0) AS n_gaps,
       coalesce(sum(idle_ns), 0)::BIGINT AS idle_ns,
       avg(gap_ns) FILTER (WHERE gap_ns > 0) AS mean_gap_ns, max(gap_ns) FILTER (WHERE gap_ns > 0) AS max_gap_ns,
       min(ts_ns) AS first_start_ns, max(end_ns) AS last_end_ns, max(end_ns) - min(ts_ns) AS span_ns,
       (max(end_ns) - min(ts_ns) - coalesce(sum(idle_ns), 0))::BIGINT AS busy_ns,
       100.0 * coalesce(sum(idle_ns), 0) / nullif(max(end_ns) - min(ts_ns), 0) AS idle_pct
FROM _gpu_gaps_core GROUP BY trace_id, device, stream;

-- gap_histogram_of(min_us, max_us, bins): histogram of the positive gaps per trace, bins of equal width
-- between min_us and max_us (µs); gaps outside [min_us, max_us] are left out. One row per (trace, bin):
--   bin (0-based), bin_start_us, bin_end_us, count, total_us (sum of the gaps in the bin, µs)
CREATE OR REPLACE MACRO gap_histogram_of(min_us, max_us, bins) AS TABLE
WITH g AS (
    SELECT trace_id, gap_ns / 1000.0 AS gap_us FROM _gpu_gaps_core
    WHERE gap_ns > 0 AND gap_ns / 1000.0 >= min_us AND gap_ns / 1000.0 <= max_us
), b AS (
    SELECT trace_id, least(floor((gap_us - min_us) / ((max_us - min_us) / bins))::BIGINT, bins - 1) AS bin, gap_us
    FROM g
), traces_with AS (SELECT DISTINCT trace_id FROM g)
SELECT t.trace_id, r.bin, min_us + r.bin * (max_us - min_us) / bins AS bin_start_us,
       min_us + (r.bin + 1) * (max_us - min_us) / bins AS bin_end_us,
       count(b.gap_us) AS count, coalesce(sum(b.gap_us), 0.0) AS total_us
FROM traces_with t CROSS JOIN (SELECT range AS bin FROM range(bins)) r
LEFT JOIN b ON b.trace_id = t.trace_id AND b.bin = r.bin
GROUP BY t.trace_id, r.bin ORDER BY t.trace_id, r.bin;

-- gap_histogram: gap_histogram_of(0, 100, 20): 5 µs bins up to 100 µs.
-- @output report-native 6 gap_histogram CALL gaps_each_trace what=histogram \
--     TITLE "Idle gap lengths" \
--     ABOUT "How many idle gaps between consecutive GPU events on a stream fall in each length bin, and their total; µs."
CREATE OR REPLACE VIEW gap_histogram AS SELECT * FROM gap_histogram_of(0, 100, 20);

-- kernel_transitions_of(full_names): one row per (trace, previous kernel -> kernel) pair of consecutive
-- events on a stream, with the gap between them (gap_ns as in gpu_gaps, negative values included).
--   prev_name, name      short names (full_names false) or full names
--   transition           'prev_name -> name'
--   count; avg_gap_ns, min_gap_ns, max_gap_ns, std_gap_ns (sample standard deviation; 0 for one pair), ns
--   total_idle_ns        sum of the positive gaps, ns
CREATE OR REPLACE MACRO kernel_transitions_of(full_names) AS TABLE
WITH p AS (
    SELECT trace_id, CASE WHEN full_names THEN prev_name_id ELSE prev_short_id END AS a,
           CASE WHEN full_names THEN name_id ELSE short_id END AS b, gap_ns, idle_ns
    FROM _gpu_gaps_core WHERE prev_event_id IS NOT NULL OR seq > 1
), g AS (
    SELECT trace_id, a, b, count(*) AS count,
           avg(gap_ns) AS avg_gap_ns, min(gap_ns) AS min_gap_ns, max(gap_ns) AS max_gap_ns,
           _stddev_samp_int(gap_ns) AS std_gap_ns, sum(idle_ns)::BIGINT AS total_idle_ns
    FROM p GROUP BY trace_id, a, b
), names AS (   -- the text of each id: full names by name_id, short names by short_id
    SELECT DISTINCT CASE WHEN full_names THEN name_id ELSE short_id END AS id,
           CASE WHEN full_names THEN name ELSE coalesce(short_name, name) END AS text
    FROM _gpu_names
)
SELECT g.trace_id, na.text AS prev_name, nb.text AS name, na.text || ' -> ' || nb.text AS transition, g.count,
       g.avg_gap_ns, g.min_gap_ns, g.max_gap_ns, g.std_gap_ns, g.total_idle_ns
FROM g LEFT JOIN names na ON na.id = g.a LEFT JOIN names nb ON nb.id = g.b;

-- kernel_transitions: kernel_transitions_of(false) (short names).
-- @output report-native 7 kernel_transitions CALL gaps what=transitions top=50 \
--     TITLE "Idle time between kernel pairs" \
--     ABOUT "The pairs of consecutive kernels on a stream with the most idle time between them; µs."
CREATE OR REPLACE VIEW kernel_transitions AS SELECT * FROM kernel_transitions_of(false);

-- idle_breakdown_at(kernel_wait_us): why each stream was idle (native definition), one row per
-- (trace, device, stream, category) over the positive gaps of gpu_gaps:
--   idle_category   host_wait    the launching call started after the stream's earlier work had ended:
--                                the GPU waited for the CPU to submit
--                   kernel_wait  otherwise, gap < kernel_wait_us: back-to-back launch overhead
--                   other        otherwise (waits on events/other streams, or work whose launch is not in
--                                the trace)
--   idle_ns         sum of the gaps, ns;  count  number of gaps
--   idle_ratio      share of the stream's idle time
CREATE OR REPLACE MACRO idle_breakdown_at(kernel_wait_us) AS TABLE
WITH c AS (
    SELECT trace_id, device, stream, idle_ns,
           CASE WHEN host_wait THEN 'host_wait' WHEN gap_ns < kernel_wait_us * 1000 THEN 'kernel_wait'
                ELSE 'other' END AS idle_category
    FROM _gpu_gaps_core WHERE gap_ns > 0
), s AS (
    SELECT trace_id, device, stream, idle_category, sum(idle_ns)::BIGINT AS idle_ns, count(*) AS count
    FROM c GROUP BY ALL
)
SELECT *, idle_ns / sum(idle_ns) OVER (PARTITION BY trace_id, device, stream) AS idle_ratio
FROM s ORDER BY trace_id, device, stream, idle_category;

-- idle_breakdown: idle_breakdown_at(30) (30 µs, the threshold HTA uses by default).
-- @output report-native 8 idle_breakdown CALL gaps what=idle \
--     TITLE "Why the GPU was idle" \
--     ABOUT "Idle time per stream by cause: waiting for the host to launch, for another stream, or between kernels; µs and share."
CREATE OR REPLACE VIEW idle_breakdown AS SELECT * FROM idle_breakdown_at(30);
