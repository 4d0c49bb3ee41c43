-- export/chrome_json — traces written back as Chrome trace-event JSON (what ui.perfetto.dev and chrome://tracing
-- load): every stored event of the event tables in its original order, its fields rebuilt from the columns and
-- its args as written, with `tracesql_event_id` added to the args (the row's event_id in its table). Several
-- traces (the ranks of a job) merge into one document: each (trace, pid) becomes its own process, numbered
-- (ordinal + 1) x 10^6 + n and named 'rank R · <its name>', and the ids that link events (correlation,
-- External id, Python id, Python parent id, flow ids) are shifted by ordinal x 10^11 so that no two traces
-- share one; the originals stay in the args as 'orig <key>'. Overlays add tracesql's analyses to the document.
--
-- The traces are given as a list of trace ids; the list's order is the ordinal (0, 1, ...); a list of one
-- trace writes its pids and ids unchanged.
--
-- @requires gpu/queue_length gpu/copy_bandwidth gpu/gaps tree/attribution categories/kernels memory/events
-- @requires gpu/critical_path

-- _export_us(ns): a time in ns as the decimal text of µs, exact (1234567 -> '1234.567', 1000 -> '1').
CREATE OR REPLACE MACRO _export_us(ns) AS
    CASE WHEN ns < 0 THEN '-' ELSE '' END || (abs(ns) // 1000)::VARCHAR
    || CASE WHEN abs(ns) % 1000 = 0 THEN '' ELSE '.' || lpad((abs(ns) % 1000)::VARCHAR, 3, '0') END;

-- _export_id(x): a pid, tid or id as written: a JSON number when the text is an integer, else a JSON string.
CREATE OR REPLACE MACRO _export_id(x) AS
    CASE WHEN regexp_full_match(x, '-?[0-9]{1,15}') THEN x ELSE to_json(x)::VARCHAR END;

-- _export_members(obj): the members of a JSON object's text without its braces ('' for an empty object or NULL).
CREATE OR REPLACE MACRO _export_members(obj) AS
    CASE WHEN obj IS NULL OR trim(obj::VARCHAR) = '{}' THEN ''
         ELSE trim(trim(obj::VARCHAR), '{}') END;

-- _export_object(parts): a JSON object's text from member texts ('"key":value'), the NULL and empty ones left out.
CREATE OR REPLACE MACRO _export_object(parts) AS
    '{' || array_to_string(list_filter(parts, lambda p: p IS NOT NULL AND p <> ''), ',') || '}';

-- _export_member(key, value): '"key":value' (value a JSON text), NULL when the value is NULL.
CREATE OR REPLACE MACRO _export_member(key, value) AS
    CASE WHEN value IS NOT NULL THEN to_json(key::VARCHAR)::VARCHAR || ':' || value END;

-- _export_shift(args, key, value, id_offset): the args text with the id `key` shifted by offset (when offset > 0
-- and the event has the id): the original member renamed 'orig <key>' and the shifted value first.
CREATE OR REPLACE MACRO _export_shift(args, key, value, id_offset) AS
    CASE WHEN id_offset = 0 OR value IS NULL THEN args
         ELSE _export_object([_export_member(key, (value + id_offset)::VARCHAR),
                              _export_members(replace(args, to_json(key::VARCHAR)::VARCHAR || ':',
                                                      to_json(('orig ' || key)::VARCHAR)::VARCHAR || ':'))]) END;

-- _export_traces(ids): one row per exported trace.
--   trace_id     the trace
--   ordinal      its position in ids, from 0
--   merged       more than one trace is exported
--   id_offset    ordinal x 10^11 when merged, else 0: added to the trace's linking ids
--   rank_label   'rank R' (the trace's rank), else 'trace <ordinal>'
CREATE OR REPLACE MACRO _export_traces(ids) AS TABLE
SELECT trace_id, list_position(ids, trace_id) - 1 AS ordinal, len(ids) > 1 AS merged,
       CASE WHEN len(ids) > 1 THEN (list_position(ids, trace_id) - 1) * 100000000000 ELSE 0 END AS id_offset,
       coalesce('rank ' || rank::VARCHAR, 'trace ' || (list_position(ids, trace_id) - 1)::VARCHAR) AS rank_label
FROM traces WHERE list_contains(ids, trace_id);

-- _export_pids(ids): one row per (exported trace, pid) that any event table uses.
--   trace_id, pid   the pid as stored (text)
--   out_pid         the pid written: as stored (single trace) or (ordinal + 1) x 10^6 + its number in pid order
--   process_name    the trace's process_name of the pid (NULL when it has none)
CREATE OR REPLACE MACRO _export_pids(ids) AS TABLE
WITH p AS (
    SELECT DISTINCT trace_id, pid FROM (
        SELECT trace_id, pid FROM events UNION ALL SELECT trace_id, pid FROM kernels
        UNION ALL SELECT trace_id, pid FROM correlations UNION ALL SELECT trace_id, pid FROM instants
        UNION ALL SELECT trace_id, pid FROM metadata UNION ALL SELECT trace_id, pid FROM counters
        UNION ALL SELECT trace_id, pid FROM gpu_user_annotations UNION ALL SELECT trace_id, pid FROM other_events)
    WHERE list_contains(ids, trace_id)
), n AS (
    SELECT trace_id, pid, arg_max(value, event_id) AS process_name
    FROM metadata WHERE name = 'process_name' AND list_contains(ids, trace_id) GROUP BY ALL
)
SELECT p.trace_id, p.pid,
       CASE WHEN t.merged THEN ((t.ordinal + 1) * 1000000
                                + dense_rank() OVER (PARTITION BY p.trace_id ORDER BY p.pid NULLS FIRST))::VARCHAR
            ELSE _export_id(p.pid) END AS out_pid,
       n.process_name
FROM p JOIN _export_traces(ids) t USING (trace_id) LEFT JOIN n USING (trace_id, pid);

-- _export_overlay_gpu(ids): the analysis members added to the args of GPU events (overlay 'gpu'): one row per
-- (trace, GPU event) with its category and subcategory (default rules) and the op its time is attributed to.
CREATE OR REPLACE MACRO _export_overlay_gpu(ids) AS TABLE
SELECT k.trace_id, k.event_id,
       concat_ws(',', _export_member('tracesql_category', to_json(c.kernel_category)::VARCHAR),
                 _export_member('tracesql_subcategory', to_json(c.kernel_subcategory)::VARCHAR),
                 _export_member('tracesql_op', to_json(a.op_name)::VARCHAR)) AS members
FROM kernels k
LEFT JOIN gpu_event_categories c ON c.ruleset = 'default' AND c.trace_id = k.trace_id AND c.event_id = k.event_id
LEFT JOIN gpu_event_attribution a ON a.trace_id = k.trace_id AND a.event_id = k.event_id
WHERE list_contains(ids, k.trace_id);

-- export_chrome_events(ids, overlay_gpu): one row per event of the exported traces, in document order.
--   trace_id, event_id   the event's row (event_id: its index in the trace's traceEvents)
--   ordinal              the trace's position in ids
--   event_json           the event as a JSON object's text
-- overlay_gpu: add the 'gpu' overlay's members to the GPU events' args.
CREATE OR REPLACE MACRO export_chrome_events(ids, overlay_gpu) AS TABLE
WITH t AS MATERIALIZED (SELECT * FROM _export_traces(ids)),
pm AS MATERIALIZED (SELECT * FROM _export_pids(ids)),
ov AS MATERIALIZED (SELECT * FROM _export_overlay_gpu(ids) WHERE overlay_gpu),
-- the common fields of every table: ph, cat, name, pid, tid, ts, dur, the other members (extra), the args
rows AS (
    SELECT trace_id, event_id, ph, cat_raw AS cat, name, pid, tid, ts_ns, dur_ns, NULL AS flow_id, NULL AS bp,
           NULL AS scope, extra::VARCHAR AS extra, args::VARCHAR AS args, external_id, correlation, python_id,
           python_parent_id
    FROM events WHERE list_contains(ids, trace_id)
    UNION ALL
    SELECT trace_id, event_id, 'X', cat_raw, name, pid, tid, ts_ns, dur_ns, NULL, NULL, NULL, NULL, args::VARCHAR,
           external_id, correlation, NULL, NULL
    FROM kernels WHERE list_contains(ids, trace_id)
    UNION ALL
    SELECT trace_id, event_id, 'X', 'gpu_user_annotation', name, pid, tid, ts_ns, dur_ns, NULL, NULL, NULL, NULL,
           args::VARCHAR, external_id, NULL, NULL, NULL
    FROM gpu_user_annotations WHERE list_contains(ids, trace_id)
    UNION ALL
    SELECT trace_id, event_id, ph, cat, name, pid, tid, ts_ns, NULL, flow_id_raw, binding_point, NULL, NULL, NULL,
           NULL, flow_id, NULL, NULL
    FROM correlations WHERE list_contains(ids, trace_id)
    UNION ALL
    SELECT trace_id, event_id, ph, cat, name, pid, tid, ts_ns, NULL, NULL, NULL, scope, NULL, args::VARCHAR,
           NULL, NULL, NULL, NULL
    FROM instants WHERE list_contains(ids, trace_id)
    UNION ALL
    SELECT trace_id, event_id, 'M', NULL, name, pid, tid, ts_ns, NULL, NULL, NULL, NULL, NULL, args::VARCHAR,
           NULL, NULL, NULL, NULL
    FROM metadata WHERE list_contains(ids, trace_id)
    UNION ALL
    SELECT trace_id, event_id, 'C', cat, name, pid, tid, ts_ns, NULL, NULL, NULL, NULL, NULL, args::VARCHAR,
           NULL, NULL, NULL, NULL
    FROM counters WHERE list_contains(ids, trace_id)
    UNION ALL
    SELECT trace_id, event_id, ph, cat, name, pid, tid, ts_ns, dur_ns, NULL, NULL, NULL, extra::VARCHAR,
           args::VARCHAR, NULL, NULL, NULL, NULL
    FROM other_events WHERE list_contains(ids, trace_id)
),
j AS (
    SELECT r.*, t.ordinal, t.merged, t.id_offset, t.rank_label, pm.out_pid, pm.process_name, ov.members,
           coalesce(r.args, '{}') AS a0
    FROM rows r JOIN t USING (trace_id) JOIN pm ON pm.trace_id = r.trace_id AND pm.pid IS NOT DISTINCT FROM r.pid
    LEFT JOIN ov ON ov.trace_id = r.trace_id AND ov.event_id = r.event_id
),
-- the linking ids shifted, one at a time (nesting the macro would multiply the expression it expands to)
s1 AS (SELECT *, _export_shift(a0, 'External id', external_id, id_offset) AS a1 FROM j),
s2 AS (SELECT *, _export_shift(a1, 'correlation', correlation, id_offset) AS a2 FROM s1),
s3 AS (SELECT *, _export_shift(a2, 'Python id', python_id, id_offset) AS a3 FROM s2),
s4 AS (SELECT *, _export_shift(a3, 'Python parent id', python_parent_id, id_offset) AS a4 FROM s3),
s5 AS (
    SELECT *, CASE
        WHEN ph IN ('s', 'f', 't') AND args IS NULL THEN NULL
        WHEN ph = 'M' AND merged AND name = 'process_name' THEN _export_object([
            _export_member('name', to_json(rank_label || ' · ' || coalesce(process_name, 'pid ' || pid))::VARCHAR),
            _export_member('orig name', to_json(process_name)::VARCHAR),
            _export_member('orig pid', to_json(pid)::VARCHAR)])
        WHEN ph = 'M' AND merged AND name = 'process_sort_index' THEN
            _export_object([_export_member('sort_index', out_pid)])
        WHEN ph = 'M' THEN args
        ELSE '{' || concat_ws(',', _export_member('tracesql_event_id', event_id::VARCHAR), members,
                              nullif(_export_members(a4), '')) || '}' END AS args_out
    FROM s4
)
SELECT trace_id, event_id, ordinal,
       _export_object([
           _export_member('ph', to_json(ph)::VARCHAR), _export_member('cat', to_json(cat)::VARCHAR),
           _export_member('name', to_json(name)::VARCHAR), _export_member('pid', out_pid),
           _export_member('tid', _export_id(tid)), _export_member('ts', _export_us(ts_ns)),
           _export_member('dur', _export_us(dur_ns)),
           _export_member('id', CASE WHEN ph NOT IN ('s', 'f', 't') THEN NULL
                                     WHEN merged THEN (correlation + id_offset)::VARCHAR
                                     ELSE _export_id(flow_id) END),
           _export_member('bp', to_json(bp)::VARCHAR), _export_member('s', to_json(scope)::VARCHAR),
           _export_members(extra), _export_member('args', args_out)]) AS event_json
FROM s5
UNION ALL
-- a merged document names every process after its rank, also the processes the trace does not name
SELECT pm.trace_id, NULL, t.ordinal,
       _export_object([_export_member('ph', '"M"'), _export_member('name', '"process_name"'),
                       _export_member('pid', pm.out_pid), _export_member('tid', '0'),
                       _export_member('args', _export_object([_export_member('name',
                           to_json(t.rank_label || ' · pid ' || pm.pid)::VARCHAR), _export_member('orig pid', to_json(pm.pid)::VARCHAR)]))])
FROM pm JOIN t USING (trace_id) WHERE t.merged AND pm.process_name IS NULL;

-- _export_counter(name, pid, ts_ns, members): a counter event's text (ph C) with its values' members.
CREATE OR REPLACE MACRO _export_counter(name, pid, ts_ns, members) AS
    _export_object([_export_member('ph', '"C"'), _export_member('cat', '"tracesql"'),
                    _export_member('name', to_json(name::VARCHAR)::VARCHAR), _export_member('pid', pid),
                    _export_member('ts', _export_us(ts_ns)), _export_member('args', '{' || members || '}')]);

-- export_chrome_overlays(ids, overlays): the events tracesql's analyses add to an exported document, one row per
-- event (columns as export_chrome_events, event_id NULL), for the overlays named in the list `overlays`:
--   'queue'    a counter per GPU stream, 'tracesql queue length · stream S' (depth), at every change of its launch
--              queue (queue_length_changes), in the stream's GPU process
--   'copies'   a counter per (device, copy kind), 'tracesql copy GB/s · <kind>' (gbps): the summed bandwidth of the
--              kind's copies running at each time (copy_events: + gbps at a copy's start, - at its end)
--   'memory'   a counter per memory device, 'tracesql memory · <device>' (allocated, reserved bytes), at every
--              change (memory_timeline), in the process of its [memory] events
--   'gaps'     the idle gaps of each GPU stream (gpu_gaps, gap_ns > 0) as slices named 'idle' (or 'idle: waiting
--              for the CPU' when the launch came after the previous work ended), cat 'tracesql_gap', on a thread of
--              the stream's process named 'tracesql gaps · stream S' (tid 10^9 + the stream)
--   'critical' each step's critical path (critical_path): its elements as slices named by kind and op, cat
--              'tracesql_critical_path', on a thread 'tracesql critical path' of the CPU process (tid 2 x 10^9 - 1;
--              CPU stretches, launch and sync edges) or 'tracesql critical path · stream S' of the GPU process
--              (tid 2 x 10^9 + the stream; GPU events and gaps), joined in path order by flow arrows (ph s at an
--              element's start, ph f bound to the next element's start; id 'tracesql cp <ordinal>.<step>.<seq>')
CREATE OR REPLACE MACRO export_chrome_overlays(ids, overlays) AS TABLE
WITH t AS MATERIALIZED (SELECT * FROM _export_traces(ids)),
pm AS MATERIALIZED (SELECT * FROM _export_pids(ids)),
gp AS MATERIALIZED (
    SELECT k.trace_id, k.device, k.stream, pm.out_pid
    FROM (SELECT trace_id, device, stream, min(pid) AS pid FROM kernels
          WHERE list_contains(ids, trace_id) GROUP BY ALL) k
    JOIN pm ON pm.trace_id = k.trace_id AND pm.pid IS NOT DISTINCT FROM k.pid
),
dp AS (SELECT trace_id, device, min(out_pid) AS out_pid FROM gp GROUP BY ALL),
q AS (
    SELECT c.trace_id, c.ts_ns, _export_counter('tracesql queue length · stream ' || c.stream, gp.out_pid, c.ts_ns,
                                                _export_member('depth', c.depth::VARCHAR)) AS event_json
    FROM queue_length_changes c
    JOIN gp ON gp.trace_id = c.trace_id AND gp.device IS NOT DISTINCT FROM c.device AND gp.stream = c.stream
    WHERE list_contains(overlays, 'queue') AND list_contains(ids, c.trace_id)
),
cp AS (
    SELECT trace_id, device, kind, ts_ns, sum(d) AS d FROM (
        SELECT trace_id, device, kind, ts_ns, gbps AS d FROM copy_events WHERE gbps IS NOT NULL
        UNION ALL SELECT trace_id, device, kind, ts_ns + dur_ns, -gbps FROM copy_events WHERE gbps IS NOT NULL)
    WHERE list_contains(overlays, 'copies') AND list_contains(ids, trace_id)
    GROUP BY ALL
),
c AS (
    SELECT cp.trace_id, cp.ts_ns,
           _export_counter('tracesql copy GB/s · ' || cp.kind, dp.out_pid, cp.ts_ns, _export_member('gbps',
               -- the running sum, rounded to the byte per second so that the sum of a stream returns to 0
               round(sum(cp.d) OVER (PARTITION BY cp.trace_id, cp.device, cp.kind ORDER BY cp.ts_ns
                                     ROWS UNBOUNDED PRECEDING), 9)::VARCHAR)) AS event_json
    FROM cp JOIN dp ON dp.trace_id = cp.trace_id AND dp.device IS NOT DISTINCT FROM cp.device
),
mp AS (
    SELECT e.trace_id, e.device_type, e.device, pm.out_pid
    FROM (SELECT trace_id, device_type, device, min(pid) AS pid FROM memory_events
          WHERE list_contains(overlays, 'memory') AND list_contains(ids, trace_id) GROUP BY ALL) e
    JOIN pm ON pm.trace_id = e.trace_id AND pm.pid IS NOT DISTINCT FROM e.pid
),
m AS (
    SELECT l.trace_id, l.ts_ns,
           _export_counter('tracesql memory · ' || _memory_device_name(l.device_type, l.device), mp.out_pid, l.ts_ns,
                           concat_ws(',', _export_member('allocated', l.allocated_bytes::VARCHAR),
                                     _export_member('reserved', l.reserved_bytes::VARCHAR))) AS event_json
    FROM memory_timeline l JOIN mp USING (trace_id, device_type, device)
),
g AS (
    SELECT g.trace_id, g.prev_end_ns AS ts_ns,
           _export_object([_export_member('ph', '"X"'), _export_member('cat', '"tracesql_gap"'),
                           _export_member('name', CASE WHEN g.host_wait THEN '"idle: waiting for the CPU"'
                                                       ELSE '"idle"' END),
                           _export_member('pid', gp.out_pid), _export_member('tid', (1000000000 + g.stream)::VARCHAR),
                           _export_member('ts', _export_us(g.prev_end_ns)), _export_member('dur', _export_us(g.gap_ns)),
                           _export_member('args', _export_object([
                               _export_member('before', to_json(g.prev_short_name)::VARCHAR),
                               _export_member('after', to_json(g.short_name)::VARCHAR)]))]) AS event_json
    FROM gpu_gaps g
    JOIN gp ON gp.trace_id = g.trace_id AND gp.device IS NOT DISTINCT FROM g.device AND gp.stream = g.stream
    WHERE list_contains(overlays, 'gaps') AND list_contains(ids, g.trace_id) AND g.gap_ns > 0
),
gt AS (
    SELECT DISTINCT trace_id, gp.out_pid, g.stream FROM gpu_gaps g JOIN gp USING (trace_id, device, stream)
    WHERE list_contains(overlays, 'gaps') AND list_contains(ids, trace_id) AND g.gap_ns > 0
),
cpe AS MATERIALIZED (
    SELECT c.trace_id, c.step_event_id, c.step, c.seq, c.kind, c.start_ns, c.dur_ns, c.name, c.op_name, c.stream,
           c.kind LIKE 'gpu\_%' ESCAPE '\' AS on_gpu,
           CASE WHEN c.kind LIKE 'gpu\_%' ESCAPE '\' THEN gp.out_pid ELSE coalesce(cm.out_pid, sm.out_pid) END AS out_pid,
           CASE WHEN c.kind LIKE 'gpu\_%' ESCAPE '\' THEN 2000000000 + c.stream ELSE 1999999999 END AS out_tid,
           t.ordinal, count(*) OVER (PARTITION BY c.trace_id, c.step_event_id) AS n_elements
    FROM critical_path c JOIN t ON t.trace_id = c.trace_id
    JOIN profiler_steps p ON p.trace_id = c.trace_id AND p.event_id = c.step_event_id
    LEFT JOIN gp ON gp.trace_id = c.trace_id AND gp.device IS NOT DISTINCT FROM c.device AND gp.stream = c.stream
    LEFT JOIN pm cm ON cm.trace_id = c.trace_id AND cm.pid = c.pid
    LEFT JOIN pm sm ON sm.trace_id = c.trace_id AND sm.pid = p.pid
    WHERE list_contains(overlays, 'critical') AND list_contains(ids, c.trace_id)
),
cpx AS (
    SELECT trace_id, start_ns AS ts_ns,
           _export_object([_export_member('ph', '"X"'), _export_member('cat', '"tracesql_critical_path"'),
                           _export_member('name', to_json(kind || coalesce(' · ' || op_name, ''))::VARCHAR),
                           _export_member('pid', out_pid), _export_member('tid', out_tid::VARCHAR),
                           _export_member('ts', _export_us(start_ns)), _export_member('dur', _export_us(dur_ns)),
                           _export_member('args', _export_object([
                               _export_member('step', to_json(step)::VARCHAR),
                               _export_member('seq', seq::VARCHAR), _export_member('kind', to_json(kind)::VARCHAR),
                               _export_member('op', to_json(op_name)::VARCHAR),
                               _export_member('event', to_json(name)::VARCHAR)]))]) AS event_json
    FROM cpe
),
cpf AS (
    -- an arrow from each element to the next one of its path
    SELECT trace_id, ts_ns, _export_object([_export_member('ph', to_json(ph)::VARCHAR),
                                            _export_member('cat', '"tracesql_critical_path"'),
                                            _export_member('name', '"critical path"'),
                                            _export_member('id', to_json(fid)::VARCHAR),
                                            _export_member('pid', out_pid), _export_member('tid', out_tid::VARCHAR),
                                            _export_member('ts', _export_us(ts_ns)),
                                            _export_member('bp', CASE WHEN ph = 'f' THEN '"e"' END)]) AS event_json
    FROM (
        SELECT trace_id, 's' AS ph, start_ns AS ts_ns, out_pid, out_tid,
               'tracesql cp ' || ordinal || '.' || step_event_id || '.' || seq AS fid
        FROM cpe WHERE seq < n_elements
        UNION ALL
        SELECT trace_id, 'f', start_ns, out_pid, out_tid,
               'tracesql cp ' || ordinal || '.' || step_event_id || '.' || (seq - 1) FROM cpe WHERE seq > 1)
),
cpt AS (
    SELECT DISTINCT trace_id, out_pid, out_tid, on_gpu, CASE WHEN on_gpu THEN stream END AS stream FROM cpe
)
SELECT x.trace_id, NULL::BIGINT AS event_id, t.ordinal, x.event_json
FROM (SELECT trace_id, ts_ns, event_json FROM q UNION ALL SELECT trace_id, ts_ns, event_json FROM c
      UNION ALL SELECT trace_id, ts_ns, event_json FROM m UNION ALL SELECT trace_id, ts_ns, event_json FROM g
      UNION ALL SELECT trace_id, ts_ns, event_json FROM cpx UNION ALL SELECT trace_id, ts_ns, event_json FROM cpf
      UNION ALL
      SELECT trace_id, NULL, _export_object([_export_member('ph', '"M"'), _export_member('name', '"thread_name"'),
                                             _export_member('pid', out_pid), _export_member('tid', out_tid::VARCHAR),
                                             _export_member('args', _export_object([_export_member('name',
                                                 to_json('tracesql critical path'
                                                         || CASE WHEN on_gpu THEN ' · stream ' || stream ELSE '' END
                                                        )::VARCHAR)]))])
      FROM cpt
      UNION ALL
      SELECT trace_id, NULL, _export_object([_export_member('ph', '"M"'), _export_member('name', '"thread_name"'),
                                             _export_member('pid', out_pid),
                                             _export_member('tid', (1000000000 + stream)::VARCHAR),
                                             _export_member('args', _export_object([_export_member('name',
                                                 to_json('tracesql gaps · stream ' || stream)::VARCHAR)]))])
      FROM gt) x
JOIN t USING (trace_id);
