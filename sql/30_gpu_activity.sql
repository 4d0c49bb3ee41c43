-- GPU activity: the GPU-side events of every trace, classified, with the CPU call that launched them.
--
-- Helpers used by the timeline, gap, launch and peer-style views (sql/31_* ... sql/41_*).

-- _us_f64(ns): a time in ns as the float64 µs value a JSON parser gives for the trace's decimal text.
-- Below 2^53 ns the int64 -> double conversion is exact and the division correctly rounded, so the
-- result equals the parsed text; above it (epoch-ns clocks) the decimal text is rebuilt and cast.
-- Used only by the peer styles (tracelens, hta), which compute in float64 µs; native views use int64 ns.
CREATE OR REPLACE MACRO _us_f64(ns) AS
    CASE WHEN ns IS NULL THEN NULL::DOUBLE
         WHEN abs(ns) < 9007199254740992 THEN ns::DOUBLE / 1000.0
         ELSE printf('%d.%03d', ns // 1000, ns % 1000)::DOUBLE END;

-- _interval_union(tbl): length of the union of closed intervals [s, e] per (trace_id, grp, set_name).
-- tbl names a view/table with columns trace_id, grp, set_name, s, e (any numeric type; grp any type).
-- One window pass: sorted by start, each interval adds the part of it that ends after the largest end of
-- the intervals before it, e - max(s, previous max end), when positive. (An interval that starts after
-- that largest end opens a new island; touching intervals merge.) One row per group:
--   union_len    total length covered (same unit as s, e)
--   first_s      earliest start;  last_e  latest end
--   n_intervals  input intervals;  n_islands  disjoint islands after merging
CREATE OR REPLACE MACRO _interval_union(tbl) AS TABLE
WITH ordered AS (
    SELECT trace_id, grp, set_name, s, e,
           max(e) OVER (PARTITION BY trace_id, grp, set_name ORDER BY s
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_max_e
    FROM query_table(tbl)
)
SELECT trace_id, grp, set_name,
       sum(CASE WHEN prev_max_e IS NULL OR s >= prev_max_e THEN e - s
                WHEN e > prev_max_e THEN e - prev_max_e ELSE 0 END) AS union_len,
       min(s) AS first_s, max(e) AS last_e, count(*) AS n_intervals,
       count(*) FILTER (WHERE prev_max_e IS NULL OR s > prev_max_e) AS n_islands
FROM ordered GROUP BY trace_id, grp, set_name;

-- _class_unions(tbl): union lengths of three interval classes and their combinations in one pass, per
-- (trace_id, grp). tbl has columns trace_id, grp, cls ('C', 'K' or 'M'), s, e. Same rule as
-- _interval_union, with one running maximum of earlier ends per class over a single sort by start:
--   C_len, K_len, M_len        |U(C)|, |U(K)|, |U(M)|
--   CK_len                     |U(C ∪ K)|
--   ALL_len                    |U(C ∪ K ∪ M)|
--   first_s, last_e, n         earliest start, latest end, number of intervals
-- Differences of these give the exposed parts: |U(K) - U(C)| = CK_len - C_len, |U(M) - U(C ∪ K)| =
-- ALL_len - CK_len, and the overlap |U(K) ∩ U(C)| = C_len + K_len - CK_len.
CREATE OR REPLACE MACRO _contrib(s, e, p) AS
    CASE WHEN p IS NULL OR s >= p THEN e - s WHEN e > p THEN e - p ELSE 0 END;
CREATE OR REPLACE MACRO _class_unions(tbl) AS TABLE
WITH o AS (
    SELECT trace_id, grp, cls, s, e,
           max(CASE WHEN cls = 'C' THEN e END) OVER w AS pc,
           max(CASE WHEN cls = 'K' THEN e END) OVER w AS pk,
           max(CASE WHEN cls = 'M' THEN e END) OVER w AS pm
    FROM query_table(tbl)
    WINDOW w AS (PARTITION BY trace_id, grp ORDER BY s ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
)
SELECT trace_id, grp,
       sum(CASE WHEN cls = 'C' THEN _contrib(s, e, pc) END) AS C_len,
       sum(CASE WHEN cls = 'K' THEN _contrib(s, e, pk) END) AS K_len,
       sum(CASE WHEN cls = 'M' THEN _contrib(s, e, pm) END) AS M_len,
       sum(CASE WHEN cls IN ('C', 'K') THEN _contrib(s, e, greatest(pc, pk)) END) AS CK_len,
       sum(_contrib(s, e, greatest(pc, pk, pm))) AS ALL_len,
       min(s) AS first_s, max(e) AS last_e, count(*) AS n
FROM o GROUP BY trace_id, grp;

-- _short_kernel_name(name): a readable kernel name: the leading 'void ', template arguments <...>,
-- parameter lists (...) and the return type are removed, so 'void at::native::elementwise_kernel<128,
-- 4, ...>(int, ...)' becomes 'at::native::elementwise_kernel'. Nested brackets are removed innermost
-- first (up to 12 levels). Names without brackets, or without '::' and a leading 'void ' (such as
-- 'Memset (Device)' or 'Memcpy HtoD (Pageable -> Device)'), are returned unchanged.
CREATE OR REPLACE MACRO _strip_innermost(s) AS
    regexp_replace(regexp_replace(s, '<[^<>]*>', '', 'g'), '\([^()]*\)', '', 'g');
CREATE OR REPLACE MACRO _short_kernel_name(name) AS
    CASE WHEN name IS NULL OR NOT regexp_matches(name, '[<(]') OR NOT regexp_matches(name, '::|^void ') THEN name ELSE
    nullif(trim(regexp_replace(regexp_replace(
        _strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(
        _strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(
            replace(replace(name, '(anonymous namespace)', '{anonymous}'), 'operator()', 'operator{}')
        )))))))))))),
        '^(void|[A-Za-z_][A-Za-z0-9_:]*\s+)\s*', ''), '[<>()]', '', 'g')), '') END;

-- Class of a GPU event (native definition):
--   comm     kernel whose name contains nccl, rccl, msccl or cross_device_reduce (any case): collectives
--   memcpy   cat gpu_memcpy, and ROCm copy kernels (MEMORY_COPY_*, __amd_rocclr_copyBuffer*)
--   memset   cat gpu_memset, and ROCm fill kernels (__amd_rocclr_fillBuffer*)
--   sync     cat cuda_sync (the stream waiting on an event: not work, never counted as busy)
--   compute  every other kernel
CREATE OR REPLACE MACRO _gpu_activity_class(cat, name) AS
    CASE WHEN cat = 'cuda_sync' THEN 'sync'
         WHEN cat = 'gpu_memcpy' THEN 'memcpy'
         WHEN cat = 'gpu_memset' THEN 'memset'
         WHEN regexp_matches(name, '^(MEMORY_COPY_(HOST_TO_DEVICE|DEVICE_TO_HOST|DEVICE_TO_DEVICE)|__amd_rocclr_copyBuffer(Rect)?(Aligned)?)(\.kd)?$') THEN 'memcpy'
         WHEN regexp_matches(name, '^__amd_rocclr_fillBuffer(Aligned)?(\.kd)?$') THEN 'memset'
         WHEN regexp_matches(name, '(?i)nccl|rccl|msccl|cross_device_reduce') THEN 'comm'
         ELSE 'compute' END;

-- profiler_steps (stored table, see tracesql/schema.py): one row per ProfilerStep#N range on the CPU: the
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

-- _gpu_names: each distinct (cat, name) of the GPU events with its short name and class (computed once per
-- name rather than once per event: the name rewriting is regex work), and integer ids for both names.
-- Kernel names are long (hundreds of characters of template arguments), so the per-event views below carry
-- name_id and join the text only where it is shown: sorting, windowing or hashing the text of every event
-- costs far more than the arithmetic on it.
--   name_id      1, 2, ... in (cat, name) order, unique in the dataset
--   short_id     1, 2, ... in short_name order: events whose names shorten alike share it
CREATE OR REPLACE VIEW _gpu_names AS
SELECT row_number() OVER (ORDER BY cat, name) AS name_id,
       dense_rank() OVER (ORDER BY coalesce(short_name, name)) AS short_id, cat, name, short_name, activity_class
FROM (SELECT cat, name, _short_kernel_name(name) AS short_name, _gpu_activity_class(cat, name) AS activity_class
      FROM (SELECT DISTINCT cat, name FROM kernels));

-- _gpu_activity_core: gpu_activity (below) with integers only: name_id and short_id (see _gpu_names) instead
-- of cat, name and short_name, step_event_id (the ProfilerStep range, see _gpu_steps) instead of step and
-- step_number, and no launch name, kind or thread. The analyses read it; gpu_activity adds the text back.
-- The launch is the call in gpu_launch_links when it is a launch API (a row of `launches`); the step is the
-- latest ProfilerStep#N that starts at or before the launch call, when the call starts before its end (an
-- ASOF join).
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
--   activity_class               compute | comm | memcpy | memset | sync (see _gpu_activity_class)
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
