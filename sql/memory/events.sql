-- memory/events — the allocator's samples: the `[memory]` instant events PyTorch writes when the profiler records
-- memory (profile_memory=True), one per allocation or free on a device, each with the op it happened in, and the
-- allocated and reserved bytes of each device over time.
--
-- An instant's args (tracesql/store/schema.py, `instants`): Bytes (> 0 an allocation, < 0 a free), Addr (the
-- block's address), Total Allocated and Total Reserved (the device's allocator totals after the event, which count
-- blocks allocated before the profiler's window too), Device Type (c10's DeviceType: 0 CPU, 1 CUDA, also for
-- ROCm) and Device Id (-1 for the CPU).
--
-- Order: the events of one device are taken by (ts_ns, event_id): by time, then by their place in the file,
-- which is the order the profiler wrote them in (`seq`). Every pairing and running total below uses it.
--
-- @requires tree/context lib/intervals

-- _memory_device_type(t): the name of c10's DeviceType number t, as PyTorch spells a device ('cpu', 'cuda', ...).
CREATE OR REPLACE MACRO _memory_device_type(t) AS
    CASE t WHEN 0 THEN 'cpu' WHEN 1 THEN 'cuda' WHEN 6 THEN 'hip' WHEN 12 THEN 'xpu' WHEN 13 THEN 'mps'
           WHEN 15 THEN 'hpu' WHEN 20 THEN 'privateuse1' ELSE 'type ' || t END;

-- _memory_device_name(device_type, device): the device as PyTorch names it: 'cuda:0', and 'cpu' for the CPU (-1).
CREATE OR REPLACE MACRO _memory_device_name(device_type, device) AS
    CASE WHEN device < 0 THEN device_type ELSE device_type || ':' || device END;

-- Helper: every `[memory]` instant with its args read (TRY_CAST: a value that is not a number reads as NULL); an
-- instant without Bytes or Addr takes no part.
CREATE OR REPLACE VIEW _memory_instants AS
SELECT trace_id, event_id, pid, tid, ts_ns,
       _memory_device_type(coalesce(TRY_CAST(args->>'Device Type' AS INTEGER), 1)) AS device_type,
       coalesce(TRY_CAST(args->>'Device Id' AS INTEGER), -1) AS device,
       TRY_CAST(args->>'Addr' AS UBIGINT) AS addr, TRY_CAST(args->>'Bytes' AS BIGINT) AS bytes,
       TRY_CAST(args->>'Total Allocated' AS BIGINT) AS total_allocated_bytes,
       TRY_CAST(args->>'Total Reserved' AS BIGINT) AS total_reserved_bytes
FROM instants
WHERE name = '[memory]' AND ts_ns IS NOT NULL AND TRY_CAST(args->>'Bytes' AS BIGINT) IS NOT NULL
  AND TRY_CAST(args->>'Addr' AS UBIGINT) IS NOT NULL;

-- Helper: the innermost cpu_op around each memory event on its own thread (same trace, pid, tid), by
-- _innermost_interval over the thread's cpu_ops (cpu_nesting, ends as clipped there, so they nest). An op
-- [ts_ns, nest_end_ns) holds an event at ts_ns but not one at nest_end_ns; an op of zero duration holds nothing.
CREATE OR REPLACE VIEW _memory_event_ops AS
WITH m AS MATERIALIZED (
    SELECT trace_id, event_id, pid, tid, ts_ns FROM _memory_instants
), o AS MATERIALIZED (
    SELECT e.trace_id, e.pid, e.tid, e.event_id, e.ts_ns, n.nest_end_ns AS end_ns
    FROM events e JOIN cpu_nesting n ON n.trace_id = e.trace_id AND n.event_id = e.event_id
    WHERE e.cat = 'cpu_op' AND n.nest_end_ns > e.ts_ns
      AND (e.trace_id, e.pid, e.tid) IN (SELECT DISTINCT trace_id, pid, tid FROM m)
)
SELECT trace_id, event_id, interval_event_id AS op_event_id FROM _innermost_interval('o', 'm');

-- memory_events: one row per `[memory]` instant (an allocation or a free on one device).
--   trace_id, event_id       the instant
--   device_type, device      the device: 'cpu', 'cuda', ... (Device Type) and its index (Device Id; -1 for the CPU)
--   seq                      the event's place among its device's events in (ts_ns, event_id) order, from 1
--   ts_ns                    when, ns (trace clock)
--   pid, tid                 the thread that allocated or freed
--   kind                     'alloc' (bytes > 0), 'free' (bytes < 0); NULL for a record of 0 bytes (pairs with
--                            nothing)
--   addr                     the block's address
--   bytes                    bytes allocated (> 0) or freed (< 0)
--   total_allocated_bytes    the device's allocated bytes after the event (the allocator's count, which includes
--                            blocks allocated before the profiler's window)
--   total_reserved_bytes     the device's reserved bytes after the event (memory the caching allocator holds from
--                            the driver; 0 for the CPU)
--   op_event_id, op_name     the innermost cpu_op around the event on its thread (_memory_event_ops); NULL outside
--                            every op
--   top_op_name              the outermost cpu_op around it
--   module_path              the nn.Module frames around that op, outermost first, '/'-joined (cpu_event_context);
--                            NULL when no module encloses it
-- @materialize report
CREATE OR REPLACE VIEW memory_events AS
SELECT m.trace_id, m.event_id, m.device_type, m.device,
       row_number() OVER (PARTITION BY m.trace_id, m.device_type, m.device ORDER BY m.ts_ns, m.event_id) AS seq,
       m.ts_ns, m.pid, m.tid,
       CASE WHEN m.bytes > 0 THEN 'alloc' WHEN m.bytes < 0 THEN 'free' END AS kind,
       m.addr, m.bytes, m.total_allocated_bytes, m.total_reserved_bytes,
       o.op_event_id, c.name AS op_name, c.top_op_name, c.module_path
FROM _memory_instants m
LEFT JOIN _memory_event_ops o USING (trace_id, event_id)
LEFT JOIN cpu_event_context c ON c.trace_id = o.trace_id AND c.event_id = o.op_event_id;

-- memory_timeline: one row per (trace, device, time) at which the device's memory changes: the events at one time
-- are applied together, and the totals are those recorded by the last of them (in seq order).
--   trace_id, device_type, device   the device
--   ts_ns                    the time of the change, ns
--   events                   memory events at that time
--   delta_bytes              their bytes summed (allocated minus freed)
--   allocated_bytes          the device's allocated bytes from ts_ns until the next change (total_allocated_bytes
--                            of the last event at ts_ns)
--   reserved_bytes           the device's reserved bytes from then (total_reserved_bytes of that event)
--   net_bytes                delta_bytes summed from the device's first event: bytes allocated in the window and
--                            not yet freed, less bytes freed in it that were allocated before it
--   held_ns                  how long these values hold: next change - ts_ns, ns (NULL after the last change)
CREATE OR REPLACE VIEW memory_timeline AS
WITH c AS (
    SELECT trace_id, device_type, device, ts_ns, count(*) AS events, sum(bytes)::BIGINT AS delta_bytes,
           arg_max(total_allocated_bytes, seq) AS allocated_bytes, arg_max(total_reserved_bytes, seq) AS reserved_bytes
    FROM memory_events GROUP BY trace_id, device_type, device, ts_ns
)
SELECT trace_id, device_type, device, ts_ns, events, delta_bytes, allocated_bytes, reserved_bytes,
       sum(delta_bytes) OVER (PARTITION BY trace_id, device_type, device ORDER BY ts_ns
                              ROWS UNBOUNDED PRECEDING)::BIGINT AS net_bytes,
       lead(ts_ns) OVER (PARTITION BY trace_id, device_type, device ORDER BY ts_ns) - ts_ns AS held_ns
FROM c;
