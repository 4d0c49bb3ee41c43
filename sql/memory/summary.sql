-- memory/summary — each device's memory in a line (the peak, what was live at it, the leaks), and its allocated and
-- reserved bytes in bins of time for a chart: the native report's sections `memory` and `memory_timeline`, shown
-- for the traces recorded with profile_memory (the only ones with `[memory]` events).
--
-- @requires memory/blocks

-- memory_summary: one row per (trace, device) with memory events.
--   trace_id, device_type, device   the device ('cpu' -1, 'cuda' 0, ...)
--   device_name              'cpu', 'cuda:0', ...
--   events, allocs, frees    memory events, allocations and frees on it
--   unpaired_frees           frees of blocks the window saw no allocation of (allocated before it)
--   window_ns                first to last memory event of the device, ns
--   peak_bytes               the most it had allocated (memory_peaks.peak_allocated_bytes)
--   peak_at_ns               when: ns after the device's first memory event
--   max_reserved_bytes       the most its allocator had reserved
--   live_blocks, live_bytes  blocks allocated in the window and live at the peak, and their bytes
--   leaked_blocks, leaked_bytes   blocks allocated in the window and never freed in it (memory_blocks.leaked), and
--                            their bytes
-- @output report-native 16 memory IF ROWS COLUMNS trace_id trace device_name allocs frees \
--     peak_bytes peak_at_ns:us max_reserved_bytes live_blocks leaked_blocks leaked_bytes \
--     TITLE "Memory per device" \
--     ABOUT "The allocator's [memory] events per device (traces recorded with profile_memory): the peak of allocated bytes and when (µs after the device's first event), the most reserved, the blocks live at the peak, and the blocks never freed in the window." \
--     ORDER BY trace, device_type, device
CREATE OR REPLACE VIEW memory_summary AS
WITH e AS (
    SELECT trace_id, device_type, device, count(*) AS events, count(*) FILTER (WHERE kind = 'alloc') AS allocs,
           count(*) FILTER (WHERE kind = 'free') AS frees, max(ts_ns) - min(ts_ns) AS window_ns,
           min(ts_ns) AS first_ts_ns, max(total_reserved_bytes) AS max_reserved_bytes
    FROM memory_events GROUP BY trace_id, device_type, device
), u AS (
    SELECT trace_id, device_type, device, count(*) AS unpaired_frees FROM _memory_unpaired_frees
    GROUP BY trace_id, device_type, device
), k AS (
    SELECT trace_id, device_type, device, count(*) AS leaked_blocks, sum(bytes)::BIGINT AS leaked_bytes
    FROM memory_blocks WHERE leaked GROUP BY trace_id, device_type, device
)
SELECT e.trace_id, e.device_type, e.device, _memory_device_name(e.device_type, e.device) AS device_name, e.events,
       e.allocs, e.frees, coalesce(u.unpaired_frees, 0) AS unpaired_frees, e.window_ns,
       p.peak_allocated_bytes AS peak_bytes, p.peak_ts_ns - e.first_ts_ns AS peak_at_ns, e.max_reserved_bytes,
       p.live_blocks, p.live_bytes, coalesce(k.leaked_blocks, 0) AS leaked_blocks,
       coalesce(k.leaked_bytes, 0) AS leaked_bytes
FROM e JOIN memory_peaks p USING (trace_id, device_type, device)
LEFT JOIN u USING (trace_id, device_type, device)
LEFT JOIN k USING (trace_id, device_type, device);

-- memory_timeline_bins_of(bins): one row per (trace, device, bin): the device's memory window (first to last event)
-- cut into `bins` bins of equal whole ns (the last may end after the window).
--   trace_id, device_type, device, device_name   the device (memory_summary)
--   bin                      0 .. bins - 1
--   bin_start_ns, bin_end_ns the bin [start, end), ns after the device's first memory event
--   allocated_max_bytes      the most the device had allocated during the bin: the largest of the value holding
--                            at its start and the values after each event in it (NULL before the first event)
--   reserved_max_bytes       the same for reserved bytes
--   allocs, frees            allocations and frees in the bin
CREATE OR REPLACE MACRO memory_timeline_bins_of(bins) AS TABLE
WITH w AS (
    SELECT trace_id, device_type, device, min(ts_ns) AS first_ts_ns,
           greatest((max(ts_ns) - min(ts_ns)) // bins + 1, 1) AS width_ns
    FROM memory_events GROUP BY trace_id, device_type, device
), g AS (
    SELECT w.*, b.bin, b.bin * w.width_ns AS bin_start_ns, (b.bin + 1) * w.width_ns AS bin_end_ns
    FROM w CROSS JOIN (SELECT range AS bin FROM range(bins)) b
), held AS (   -- the values holding at each bin's start: those after the last event before it
    SELECT g.trace_id, g.device_type, g.device, g.bin, e.total_allocated_bytes, e.total_reserved_bytes
    FROM g ASOF JOIN (SELECT * FROM memory_events) e
      ON e.trace_id = g.trace_id AND e.device_type = g.device_type AND e.device = g.device
     AND g.first_ts_ns + g.bin_start_ns > e.ts_ns
), inside AS (
    SELECT e.trace_id, e.device_type, e.device, (e.ts_ns - w.first_ts_ns) // w.width_ns AS bin,
           max(e.total_allocated_bytes) AS allocated_bytes, max(e.total_reserved_bytes) AS reserved_bytes,
           count(*) FILTER (WHERE e.kind = 'alloc') AS allocs, count(*) FILTER (WHERE e.kind = 'free') AS frees
    FROM memory_events e JOIN w USING (trace_id, device_type, device)
    GROUP BY ALL
)
SELECT g.trace_id, g.device_type, g.device, _memory_device_name(g.device_type, g.device) AS device_name, g.bin,
       g.bin_start_ns, g.bin_end_ns,
       greatest(h.total_allocated_bytes, i.allocated_bytes) AS allocated_max_bytes,
       greatest(h.total_reserved_bytes, i.reserved_bytes) AS reserved_max_bytes,
       coalesce(i.allocs, 0) AS allocs, coalesce(i.frees, 0) AS frees
FROM g
LEFT JOIN held h USING (trace_id, device_type, device, bin)
LEFT JOIN inside i USING (trace_id, device_type, device, bin);

-- memory_timeline_bins: memory_timeline_bins_of(40).
-- @output report-native 17 memory_timeline IF ROWS COLUMNS trace_id trace device_name bin_start_ns:us \
--     bin_end_ns:us allocated_max_bytes reserved_max_bytes allocs frees \
--     TITLE "Memory over time" \
--     ABOUT "Each device's memory window in 40 bins (µs after its first [memory] event): the most bytes allocated and reserved during each bin, and the allocations and frees in it." \
--     ORDER BY trace, device_type, device, bin_start_us
CREATE OR REPLACE VIEW memory_timeline_bins AS SELECT * FROM memory_timeline_bins_of(40);
