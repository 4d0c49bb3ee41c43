-- memory/blocks — each allocation paired with its free, the blocks never freed (leaks), and the device's peak with
-- the blocks live at it.
--
-- Pairing: the events of one (trace, device, address) are taken in seq order ((ts_ns, event_id), memory/events);
-- an allocation ends at the next event at its address: a free (the block's free), or another allocation (the
-- address was handed out again with no free recorded between: the block's end is that allocation). So an address
-- used by several blocks in turn pairs each allocation with the free that follows it, never a later one. An
-- allocation with no later event at its address was never freed in the window: a leak (it may be freed after the
-- profiler stopped). A free whose address has no allocation just before it freed a block allocated before the
-- window (or one whose allocation was not recorded): it is an unpaired free.
--
-- @requires memory/events

-- memory_blocks: one row per allocation (memory_events of kind 'alloc').
--   trace_id, device_type, device   the device
--   addr, bytes              the block's address and size (the allocation's bytes)
--   alloc_event_id, alloc_ts_ns, alloc_seq   the allocation (event, time in ns, seq)
--   end_kind                 'free' (its free is in the trace), 'realloc' (the address was allocated again with no
--                            free between) or NULL (nothing later at its address: never freed)
--   end_event_id, end_ts_ns, end_seq   the event that ends the block (NULL when none)
--   free_event_id, free_ts_ns   the free (end_kind 'free' only)
--   live_ns                  end_ts_ns - alloc_ts_ns, ns (NULL when never freed)
--   leaked                   never freed in the window (end_kind NULL)
--   pid, tid, op_event_id, op_name, top_op_name, module_path   where it was allocated (memory_events)
-- @materialize report
CREATE OR REPLACE VIEW memory_blocks AS
WITH e AS (
    SELECT *, lead(kind) OVER w AS next_kind, lead(event_id) OVER w AS next_event_id,
           lead(ts_ns) OVER w AS next_ts_ns, lead(seq) OVER w AS next_seq
    FROM memory_events WHERE kind IS NOT NULL
    WINDOW w AS (PARTITION BY trace_id, device_type, device, addr ORDER BY seq)
)
SELECT trace_id, device_type, device, addr, bytes, event_id AS alloc_event_id, ts_ns AS alloc_ts_ns,
       seq AS alloc_seq, CASE next_kind WHEN 'free' THEN 'free' WHEN 'alloc' THEN 'realloc' END AS end_kind,
       next_event_id AS end_event_id, next_ts_ns AS end_ts_ns, next_seq AS end_seq,
       CASE WHEN next_kind = 'free' THEN next_event_id END AS free_event_id,
       CASE WHEN next_kind = 'free' THEN next_ts_ns END AS free_ts_ns,
       next_ts_ns - ts_ns AS live_ns, next_kind IS NULL AS leaked,
       pid, tid, op_event_id, op_name, top_op_name, module_path
FROM e WHERE kind = 'alloc';

-- _memory_unpaired_frees: one row per free whose address has no allocation just before it (see the top).
CREATE OR REPLACE VIEW _memory_unpaired_frees AS
SELECT * FROM (
    SELECT *, lag(kind) OVER (PARTITION BY trace_id, device_type, device, addr ORDER BY seq) AS prev_kind
    FROM memory_events WHERE kind IS NOT NULL)
WHERE kind = 'free' AND prev_kind IS DISTINCT FROM 'alloc';

-- memory_leaks: one row per (trace, device, allocating op) with blocks never freed in the window.
--   trace_id, device_type, device   the device
--   op_name                  the innermost cpu_op around the allocations (NULL: outside every op)
--   leaked_blocks            blocks it allocated and nothing freed
--   leaked_bytes             their bytes
--   largest_bytes            the largest of them
--   first_alloc_ts_ns        the earliest of their allocations, ns
CREATE OR REPLACE VIEW memory_leaks AS
SELECT trace_id, device_type, device, op_name, count(*) AS leaked_blocks, sum(bytes)::BIGINT AS leaked_bytes,
       max(bytes) AS largest_bytes, min(alloc_ts_ns) AS first_alloc_ts_ns
FROM memory_blocks WHERE leaked
GROUP BY trace_id, device_type, device, op_name;

-- memory_peaks: one row per (trace, device) with memory events: the most the device had allocated.
--   trace_id, device_type, device   the device
--   peak_event_id, peak_seq, peak_ts_ns   the first event after which the device's allocated bytes were at their
--                            largest (the peak is over the events: two at one time can peak between them, above
--                            every value of memory_timeline)
--   peak_allocated_bytes     the device's allocated bytes then (total_allocated_bytes)
--   reserved_bytes           its reserved bytes then
--   live_blocks, live_bytes  blocks allocated in the window at or before the peak event and not ended by then
--                            (memory_live_at_peak) and their bytes
--   unseen_bytes             peak_allocated_bytes - live_bytes: allocated at the peak by allocations the window
--                            does not hold (made before the profiler's window opened)
CREATE OR REPLACE VIEW memory_peaks AS
WITH p AS (
    SELECT trace_id, device_type, device, event_id AS peak_event_id, seq AS peak_seq, ts_ns AS peak_ts_ns,
           total_allocated_bytes AS peak_allocated_bytes, total_reserved_bytes AS reserved_bytes
    FROM memory_events
    QUALIFY row_number() OVER (PARTITION BY trace_id, device_type, device
                               ORDER BY total_allocated_bytes DESC NULLS LAST, seq) = 1
), l AS (
    SELECT p.trace_id, p.device_type, p.device, count(b.addr) AS live_blocks,
           coalesce(sum(b.bytes), 0)::BIGINT AS live_bytes
    FROM p LEFT JOIN memory_blocks b
      ON b.trace_id = p.trace_id AND b.device_type = p.device_type AND b.device = p.device
     AND b.alloc_seq <= p.peak_seq AND (b.end_seq IS NULL OR b.end_seq > p.peak_seq)
    GROUP BY p.trace_id, p.device_type, p.device
)
SELECT p.*, l.live_blocks, l.live_bytes, p.peak_allocated_bytes - l.live_bytes AS unseen_bytes
FROM p JOIN l USING (trace_id, device_type, device);

-- memory_live_at_peak: one row per block live at its device's peak (memory_peaks): allocated at or before the peak
-- event and not ended by then.
--   trace_id, device_type, device   the device
--   addr, bytes, alloc_event_id, alloc_ts_ns   the block
--   age_ns                   peak_ts_ns - alloc_ts_ns: how long it had been live at the peak, ns
--   end_kind, end_ts_ns      how and when it ended after the peak (NULL: never freed)
--   op_name, top_op_name, module_path   where it was allocated
CREATE OR REPLACE VIEW memory_live_at_peak AS
SELECT b.trace_id, b.device_type, b.device, b.addr, b.bytes, b.alloc_event_id, b.alloc_ts_ns,
       p.peak_ts_ns - b.alloc_ts_ns AS age_ns, b.end_kind, b.end_ts_ns, b.op_name, b.top_op_name, b.module_path
FROM memory_blocks b JOIN memory_peaks p
  ON b.trace_id = p.trace_id AND b.device_type = p.device_type AND b.device = p.device
 AND b.alloc_seq <= p.peak_seq AND (b.end_seq IS NULL OR b.end_seq > p.peak_seq);
