-- Holistic Trace Analysis (HTA 0.5.0) style: the peer's definitions, reproduced so that its numbers can
-- be checked against ours (`tracesql report --style hta`). Facts about HTA's definitions are credited to
-- HTA (facebookresearch/HolisticTraceAnalysis, BSD licence); see ../shared/PEERS.md. The code is ours.
--
-- HTA works in float64 µs: it parses ts/dur with a JSON float parser, subtracts the earliest ts of the
-- trace, and computes ends as ts + dur. The views below do the same arithmetic (_us_f64) so that the
-- results agree with HTA to float precision. HTA's timestamp rounding (ceil start, floor end) is off
-- here, as in the shared references (HTA_DISABLE_NS_ROUNDING=1).

-- _hta_kernel_type(name): HTA's kernel type, first match: COMMUNICATION (name starts 'nccl' and later
-- has 'Kernel'), MEMORY (starts 'Memcpy', 'Memset' or 'dma'), COMPUTATION (none of: 'nccl..Kernel'
-- prefix, 'Memcpy' anywhere, 'Memset' prefix, 'Sync' anywhere), else OTHER.
CREATE OR REPLACE MACRO _hta_kernel_type(name) AS
    CASE WHEN regexp_matches(name, '^nccl.*Kernel') THEN 'COMMUNICATION'
         WHEN regexp_matches(name, '^(Memcpy|Memset|dma)') THEN 'MEMORY'
         WHEN NOT regexp_matches(name, '^(nccl.*Kernel|.*Memcpy|Memset|.*Sync)') THEN 'COMPUTATION'
         ELSE 'OTHER' END;

-- _hta_trace: per trace, HTA's rank (distributed rank, 0 when absent), its time origin (earliest ts of a
-- complete CPU event other than the 'Trace' span, or of a GPU event; float64 µs), the start of the last
-- step when the trace has two or more distinct ProfilerStep names (HTA then drops the last step: CPU rows
-- starting at or after it and the GPU rows they launched), and the ts of the file's first event: HTA
-- links a GPU event whose launch is not in the trace to row 0 of the file (its fallback correlation index
-- is 0), so that row's ts serves as the 'runtime start' of such events in the idle breakdown.
CREATE OR REPLACE VIEW _hta_trace AS
WITH steps AS (
    SELECT trace_id, count(DISTINCT name) AS n_steps, max(ts_ns) AS last_step_ts_ns
    FROM events WHERE name LIKE '%ProfilerStep%' GROUP BY trace_id
), origin AS (
    SELECT trace_id, min(ts_ns) AS min_ts_ns
    FROM (SELECT trace_id, ts_ns FROM events WHERE ph = 'X' AND cat_raw IS DISTINCT FROM 'Trace'
          UNION ALL SELECT trace_id, ts_ns FROM kernels) GROUP BY trace_id
), first_event AS (
    SELECT trace_id, ts_ns FROM events WHERE event_id = 0
    UNION ALL SELECT trace_id, ts_ns FROM kernels WHERE event_id = 0
    UNION ALL SELECT trace_id, ts_ns FROM gpu_user_annotations WHERE event_id = 0
    UNION ALL SELECT trace_id, ts_ns FROM other_events WHERE event_id = 0
)
SELECT t.trace_id, coalesce(t.rank, 0) AS rank, _us_f64(o.min_ts_ns) AS min_ts_us,
       CASE WHEN s.n_steps >= 2 THEN s.last_step_ts_ns END AS cut_ts_ns,
       _us_f64(f.ts_ns) - _us_f64(o.min_ts_ns) AS event0_ts_us
FROM traces t JOIN origin o USING (trace_id) LEFT JOIN steps s USING (trace_id)
LEFT JOIN first_event f USING (trace_id);

-- _hta_cpu: CPU-side calls carrying a correlation id (the launches), as HTA keeps them after its step filter.
CREATE OR REPLACE VIEW _hta_cpu AS
SELECT l.trace_id, l.event_id, l.name, l.correlation, l.ts_ns,
       _us_f64(l.ts_ns) - h.min_ts_us AS ts_us, _us_f64(l.dur_ns) AS dur_us
FROM launches l JOIN _hta_trace h USING (trace_id)
WHERE h.cut_ts_ns IS NULL OR l.ts_ns < h.cut_ts_ns;

-- _hta_gpu: HTA's GPU events (rows with a stream: kernels, memcpy, memset, sync), float64 µs relative to
-- the trace origin, with HTA's kernel type and the start of the launching call (ts_runtime_us; for work
-- whose launch is not in the trace, the ts of the file's first event, as HTA does).
CREATE OR REPLACE VIEW _hta_gpu AS
SELECT k.trace_id, h.rank, k.event_id, k.cat, k.name, k.stream, k.correlation,
       _hta_kernel_type(k.name) AS kernel_type,
       _us_f64(k.ts_ns) - h.min_ts_us AS ts_us, _us_f64(k.dur_ns) AS dur_us,
       (_us_f64(k.ts_ns) - h.min_ts_us) + _us_f64(k.dur_ns) AS end_us,
       CASE WHEN c.correlation IS NOT NULL THEN c.ts_us WHEN k.correlation > 0 THEN h.event0_ts_us END
           AS ts_runtime_us,
       c.name AS runtime_name, c.dur_us AS runtime_dur_us
FROM kernels k
JOIN _hta_trace h USING (trace_id)
LEFT JOIN _hta_cpu c ON c.trace_id = k.trace_id AND c.correlation = k.correlation
WHERE k.stream IS NOT NULL AND k.stream >= 0 AND k.ts_ns IS NOT NULL AND k.dur_ns IS NOT NULL
  AND (h.cut_ts_ns IS NULL OR c.correlation IS NOT NULL);

-- _hta_members: GPU intervals per rank for the unions: set ALL (every GPU event) and one set per kernel type.
CREATE OR REPLACE VIEW _hta_members AS
SELECT trace_id, rank AS grp, 'ALL' AS set_name, ts_us AS s, end_us AS e FROM _hta_gpu
UNION ALL
SELECT trace_id, rank, kernel_type, ts_us, end_us FROM _hta_gpu;

CREATE OR REPLACE VIEW _hta_unions AS SELECT * FROM _interval_union('_hta_members');

-- hta_temporal_breakdown: one row per trace (rank), HTA's temporal breakdown.
--   rank                    distributed rank (0 when the trace has none)
--   idle_time(us)           kernel_time - |U(all GPU events)|
--   compute_time(us)        |U(COMPUTATION events)|
--   non_compute_time(us)    kernel_time - compute - idle
--   kernel_time(us)         last GPU end - first GPU start
--   *_pctg                  100 x / kernel_time, rounded to 2 decimals
CREATE OR REPLACE VIEW hta_temporal_breakdown AS
WITH u AS (
    SELECT a.trace_id, a.grp AS rank, a.last_e - a.first_s AS kernel_time,
           (a.last_e - a.first_s) - a.union_len AS idle_time, coalesce(c.union_len, 0.0) AS compute_time
    FROM _hta_unions a
    LEFT JOIN _hta_unions c ON c.trace_id = a.trace_id AND c.grp = a.grp AND c.set_name = 'COMPUTATION'
    WHERE a.set_name = 'ALL'
)
SELECT trace_id, rank, idle_time AS "idle_time(us)", compute_time AS "compute_time(us)",
       kernel_time - compute_time - idle_time AS "non_compute_time(us)", kernel_time AS "kernel_time(us)",
       round(100 * (idle_time / kernel_time), 2) AS idle_time_pctg,
       round(100 * (compute_time / kernel_time), 2) AS compute_time_pctg,
       round(100 * ((kernel_time - compute_time - idle_time) / kernel_time), 2) AS non_compute_time_pctg
FROM u;

-- _hta_stream_gaps: kernel/memcpy/memset events per (trace, stream) in start order with HTA's idle interval
-- (start - end of the previous event on the stream; negative when they overlap, NULL for the first).
CREATE OR REPLACE VIEW _hta_stream_gaps AS
SELECT trace_id, rank, stream, event_id, ts_us, ts_runtime_us,
       lag(end_us) OVER w AS prev_end_us, ts_us - lag(end_us) OVER w AS idle_interval_us
FROM _hta_gpu
WHERE cat IN ('kernel', 'gpu_memcpy', 'gpu_memset')
WINDOW w AS (PARTITION BY trace_id, stream ORDER BY ts_us, event_id);

-- hta_idle_time_breakdown_at(kernel_wait_us): HTA's idle time breakdown with its consecutive-kernel delay
-- (HTA documents it in ns but compares it with µs gaps; the default is 30). One row per (trace, stream,
-- category present):
--   rank, stream, idle_category   host_wait (the launching call started after the previous event on the
--                                 stream ended), kernel_wait (otherwise, gap < kernel_wait_us), other
--   idle_time                     sum of the gaps of that category, µs, rounded to 2 decimals
--   idle_time_ratio               share of the stream's idle time, rounded to 2 decimals
--   idle_time_us, ratio           the same unrounded
--   count                         gaps in the category (the first event of a stream counts as 'other'
--                                 with no gap, as in HTA)
CREATE OR REPLACE MACRO hta_idle_time_breakdown_at(kernel_wait_us) AS TABLE
WITH c AS (
    SELECT *, CASE WHEN ts_runtime_us > prev_end_us THEN 'host_wait'
                   WHEN idle_interval_us < kernel_wait_us THEN 'kernel_wait' ELSE 'other' END AS idle_category
    FROM _hta_stream_gaps
), s AS (
    SELECT trace_id, rank, stream, idle_category, coalesce(fsum(idle_interval_us), 0.0) AS idle_time_us,
           count(idle_interval_us) AS count
    FROM c GROUP BY ALL
)
SELECT trace_id, rank, stream, idle_category, round(idle_time_us, 2) AS idle_time,
       round(idle_time_us / sum(idle_time_us) OVER (PARTITION BY trace_id, stream), 2) AS idle_time_ratio,
       idle_time_us, idle_time_us / sum(idle_time_us) OVER (PARTITION BY trace_id, stream) AS ratio, count
FROM s
ORDER BY trace_id, stream, idle_category;

-- hta_idle_time_breakdown: hta_idle_time_breakdown_at(30), HTA's default.
CREATE OR REPLACE VIEW hta_idle_time_breakdown AS SELECT * FROM hta_idle_time_breakdown_at(30);

-- hta_kernel_type_breakdown: HTA's kernel type breakdown (with memory kernels): the time line of each rank
-- cut at the merged-interval boundaries of the COMPUTATION, COMMUNICATION and MEMORY kernels; each piece
-- is labelled by the types running ('COMPUTATION overlapping MEMORY', ...), its length truncated to whole
-- µs as HTA does, and summed over ranks.
--   kernel_type   label;  sum  µs (integer);  percentage  100 sum / total, rounded to 1 decimal
CREATE OR REPLACE VIEW hta_kernel_type_breakdown AS
WITH isl AS (
    SELECT trace_id, grp, set_name, s, e,
           max(e) OVER (PARTITION BY trace_id, grp, set_name ORDER BY s, e
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_max_e
    FROM _hta_members WHERE set_name IN ('COMPUTATION', 'COMMUNICATION', 'MEMORY')
), isl2 AS (
    SELECT *, sum(CASE WHEN prev_max_e IS NULL OR s > prev_max_e THEN 1 ELSE 0 END)
              OVER (PARTITION BY trace_id, grp, set_name ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
    FROM isl
), merged AS (
    SELECT trace_id, grp, set_name, min(s) AS s, max(e) AS e,
           CASE set_name WHEN 'COMPUTATION' THEN 1 WHEN 'COMMUNICATION' THEN 2 ELSE 4 END AS bit
    FROM isl2 GROUP BY trace_id, grp, set_name, island
), bounds AS (
    SELECT trace_id, grp, s AS t, bit AS status FROM merged
    UNION ALL SELECT trace_id, grp, e, -bit FROM merged
), run AS (
    SELECT trace_id, grp, t, sum(status) OVER w AS running, lead(t) OVER w AS next_t
    FROM bounds WINDOW w AS (PARTITION BY trace_id, grp ORDER BY t, status ROWS UNBOUNDED PRECEDING)
), labelled AS (
    SELECT concat_ws(' overlapping ',
               CASE WHEN running & 1 <> 0 THEN 'COMPUTATION' END,
               CASE WHEN running & 2 <> 0 THEN 'COMMUNICATION' END,
               CASE WHEN running & 4 <> 0 THEN 'MEMORY' END) AS kernel_type,
           trunc(next_t - t)::BIGINT AS dur
    FROM run WHERE running > 0
), sums AS (SELECT kernel_type, sum(dur)::BIGINT AS sum FROM labelled GROUP BY kernel_type)
SELECT kernel_type, sum, round(100.0 * sum / sum(sum) OVER (), 1) AS percentage
FROM sums ORDER BY sum DESC;

-- hta_kernel_type_breakdown_by_trace: the same per trace (the view above pools every trace of the dataset,
-- as HTA pools every rank of a trace directory).
CREATE OR REPLACE VIEW hta_kernel_type_breakdown_by_trace AS
WITH isl AS (
    SELECT trace_id, grp, set_name, s, e,
           max(e) OVER (PARTITION BY trace_id, grp, set_name ORDER BY s, e
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_max_e
    FROM _hta_members WHERE set_name IN ('COMPUTATION', 'COMMUNICATION', 'MEMORY')
), isl2 AS (
    SELECT *, sum(CASE WHEN prev_max_e IS NULL OR s > prev_max_e THEN 1 ELSE 0 END)
              OVER (PARTITION BY trace_id, grp, set_name ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
    FROM isl
), merged AS (
    SELECT trace_id, grp, set_name, min(s) AS s, max(e) AS e,
           CASE set_name WHEN 'COMPUTATION' THEN 1 WHEN 'COMMUNICATION' THEN 2 ELSE 4 END AS bit
    FROM isl2 GROUP BY trace_id, grp, set_name, island
), bounds AS (
    SELECT trace_id, grp, s AS t, bit AS status FROM merged
    UNION ALL SELECT trace_id, grp, e, -bit FROM merged
), run AS (
    SELECT trace_id, grp, t, sum(status) OVER w AS running, lead(t) OVER w AS next_t
    FROM bounds WINDOW w AS (PARTITION BY trace_id, grp ORDER BY t, status ROWS UNBOUNDED PRECEDING)
), labelled AS (
    SELECT trace_id, concat_ws(' overlapping ',
               CASE WHEN running & 1 <> 0 THEN 'COMPUTATION' END,
               CASE WHEN running & 2 <> 0 THEN 'COMMUNICATION' END,
               CASE WHEN running & 4 <> 0 THEN 'MEMORY' END) AS kernel_type,
           trunc(next_t - t)::BIGINT AS dur
    FROM run WHERE running > 0
), sums AS (SELECT trace_id, kernel_type, sum(dur)::BIGINT AS sum FROM labelled GROUP BY ALL)
SELECT trace_id, kernel_type, sum, round(100.0 * sum / sum(sum) OVER (PARTITION BY trace_id), 1) AS percentage
FROM sums ORDER BY trace_id, sum DESC;

-- hta_comm_comp_overlap: per trace (rank), HTA's communication/computation overlap:
--   comp_comm_overlap_pctg   100 |U(COMMUNICATION) ∩ U(COMPUTATION)| / |U(COMMUNICATION)|, rounded to 2
--                            decimals; NULL when the rank has no communication kernels (HTA: NaN)
CREATE OR REPLACE VIEW hta_comm_comp_overlap AS
WITH u AS (
    SELECT trace_id, grp, max(union_len) FILTER (WHERE set_name = 'COMPUTATION') AS COMPUTATION,
           max(union_len) FILTER (WHERE set_name = 'COMMUNICATION') AS COMMUNICATION
    FROM _hta_unions GROUP BY trace_id, grp
), both_u AS (
    SELECT trace_id, grp, 'CK' AS set_name, s, e FROM _hta_members WHERE set_name IN ('COMPUTATION', 'COMMUNICATION')
), ck AS (SELECT * FROM _interval_union('both_u'))
SELECT u.trace_id, u.grp AS rank,
       round(100 * ((coalesce(u.COMPUTATION, 0) + u.COMMUNICATION - ck.union_len) / u.COMMUNICATION), 2)
           AS comp_comm_overlap_pctg
FROM u LEFT JOIN ck ON ck.trace_id = u.trace_id AND ck.grp = u.grp;

-- hta_cuda_kernel_launch_stats: HTA's launch statistics: one row per (launch, GPU event) pair joined on
-- correlation, for the calls HTA knows (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync,
-- cudaMemsetAsync; not cuLaunchKernelEx, graph launches or hip* calls: see launch_stats for those).
--   correlation; cpu_duration, gpu_duration  µs;  launch_delay  GPU start - (call start + call duration),
--   µs, clipped at 0
CREATE OR REPLACE VIEW hta_cuda_kernel_launch_stats AS
SELECT g.trace_id, g.rank, g.correlation, g.runtime_dur_us AS cpu_duration, g.dur_us AS gpu_duration,
       greatest(g.ts_us - g.ts_runtime_us - g.runtime_dur_us, 0.0) AS launch_delay
FROM _hta_gpu g
WHERE g.runtime_name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaMemcpyAsync', 'cudaMemsetAsync')
ORDER BY g.trace_id, g.ts_runtime_us, g.correlation, g.ts_us;
