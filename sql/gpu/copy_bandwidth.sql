-- gpu/copy_bandwidth — memory copies and sets on the GPU (gpu_memcpy, gpu_memset events) and the bandwidth they
-- achieved, per copy kind.
--
-- @requires gpu/activity lib/intervals lib/stats

-- copy_events: one row per memcpy or memset event on the GPU.
--   trace_id, event_id, device, stream   the event and where it ran
--   kind                 Memcpy HtoD / DtoH / DtoD / PtoP / HtoH ... (the first 11 characters of a CUDA memcpy
--                        name, 'Memcpy ' || the copy kind JAX records; 'Memcpy Unknown' otherwise) or Memset
--   ts_ns, dur_ns        start and duration on the GPU, ns
--   bytes                bytes copied or set (args bytes; NULL when not recorded)
--   gbps                 bytes / dur_ns: GB/s (10^9 bytes per second); NULL for a zero duration or no bytes
CREATE OR REPLACE VIEW copy_events AS
SELECT k.trace_id, k.event_id, k.device, k.stream,
       CASE WHEN k.cat = 'gpu_memset' THEN 'Memset'
            WHEN k.copy_kind IS NOT NULL THEN 'Memcpy ' || k.copy_kind
            WHEN k.name LIKE 'Memcpy ____%' THEN left(k.name, 11)
            ELSE 'Memcpy Unknown' END AS kind,
       k.ts_ns, k.dur_ns, k.bytes, k.bytes / nullif(k.dur_ns, 0) AS gbps
FROM kernels k
WHERE k.cat IN ('gpu_memcpy', 'gpu_memset') AND k.ts_ns IS NOT NULL AND k.dur_ns IS NOT NULL;

-- copy_bandwidth: one row per (trace, copy kind).
--   trace_id, kind       the trace and the copy kind (see copy_events)
--   count                events of the kind
--   bytes                bytes they moved (events without a byte count add none)
--   dur_ns               their summed duration, ns
--   busy_ns              the union of their intervals: time at least one copy of the kind ran, ns (less than
--                        dur_ns when copies of the kind overlap, e.g. on two streams)
--   achieved_gbps        bytes / busy_ns: GB/s over the time the kind was busy
--   time_weighted_gbps   mean of each event's gbps weighted by its duration: sum(bytes) / sum(dur_ns) over the
--                        events with bytes and a duration, GB/s
--   mean_gbps, max_gbps  plain mean and largest of the events' gbps (a short copy counts as much as a long one)
-- @output report-native 15 copy_bandwidth COLUMNS trace_id trace kind count bytes dur_ns:us busy_ns:us \
--     achieved_gbps time_weighted_gbps mean_gbps max_gbps \
--     TITLE "Memory copies by kind" \
--     ABOUT "Memcpy and memset events per kind: bytes, summed and busy (union) time in µs, achieved GB/s (bytes / busy time), duration-weighted and plain mean GB/s." \
--     ORDER BY trace, kind
CREATE OR REPLACE VIEW copy_bandwidth AS
WITH o AS (
    SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY trace_id, kind ORDER BY ts_ns, event_id
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM copy_events
)
SELECT trace_id, kind, count(*) AS count, coalesce(sum(bytes), 0)::BIGINT AS bytes, sum(dur_ns)::BIGINT AS dur_ns,
       sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_end_ns))::BIGINT AS busy_ns,
       coalesce(sum(bytes), 0) / nullif(sum(_tree_busy_ns(ts_ns, ts_ns + dur_ns, prev_end_ns)), 0) AS achieved_gbps,
       sum(bytes) FILTER (WHERE gbps IS NOT NULL) / sum(dur_ns) FILTER (WHERE gbps IS NOT NULL) AS time_weighted_gbps,
       _avg_float(gbps) AS mean_gbps, max(gbps) AS max_gbps
FROM o
GROUP BY trace_id, kind;
