-- peers/hta/kernel_sequences — HTA's frequent CUDA kernel sequences (HTA 0.5.0,
-- hta/analyzers/cuda_kernel_analysis.py: get_frequent_cuda_kernel_sequences) and the call graph it reads
-- (hta/common/trace_call_graph.py, trace_call_stack.py). HTA builds one call stack per CPU thread from its trace
-- frame, hangs each GPU event under the runtime call with its correlation, and hangs the backward thread's
-- outermost calls under the main thread's '## backward ##' annotations. Then, for an operator name, it takes the
-- events whose name contains it, keeps the shallowest of them that have at least min_pattern_len GPU events below,
-- and counts each distinct sequence (the event's name, then its GPU events' names in start order).
--
-- @requires peers/hta/base

-- _hta_frame: HTA's trace frame, the rows its call graph sees: every event with a duration and a category other
-- than 'Trace' (HTA drops the others when it parses), with HTA's stream (args.stream, -1 when absent) and
-- correlation (args.correlation, -1 when absent), times as HTA's float64 µs from the trace origin (ts_us,
-- end_us = ts_us + dur_us), and is_gpu: HTA's GPU rows (stream >= 0 and correlation >= 0, or named 'Event
-- Sync' / 'Context Sync'). When the trace has two or more ProfilerStep names, HTA's last-step filter applies
-- (as in _hta_gpu): the other rows are kept when they start before the last step, the GPU rows when a kept row
-- shares their correlation.
CREATE OR REPLACE VIEW _hta_frame AS
WITH r AS (
    SELECT trace_id, event_id, name, pid, tid, ts_ns, dur_ns, args FROM events
    WHERE dur_ns IS NOT NULL AND ts_ns IS NOT NULL AND cat_raw IS NOT NULL AND cat_raw <> 'Trace'
    UNION ALL
    SELECT trace_id, event_id, name, pid, tid, ts_ns, dur_ns, args FROM kernels
    WHERE dur_ns IS NOT NULL AND ts_ns IS NOT NULL AND cat_raw IS NOT NULL AND cat_raw <> 'Trace'
    UNION ALL
    SELECT trace_id, event_id, name, pid, tid, ts_ns, dur_ns, args FROM gpu_user_annotations
    WHERE dur_ns IS NOT NULL AND ts_ns IS NOT NULL
    UNION ALL
    SELECT trace_id, event_id, name, pid, tid, ts_ns, dur_ns, args FROM other_events
    WHERE dur_ns IS NOT NULL AND ts_ns IS NOT NULL AND cat IS NOT NULL AND cat <> 'Trace'
), f AS (
    SELECT r.trace_id, r.event_id, r.name, r.pid, r.tid, r.ts_ns, r.dur_ns,
           coalesce(TRY_CAST(json_extract_string(r.args, '$.stream') AS BIGINT), -1) AS stream,
           coalesce(TRY_CAST(json_extract_string(r.args, '$.correlation') AS BIGINT), -1) AS correlation,
           _us_f64(r.ts_ns) - h.min_ts_us AS ts_us, _us_f64(r.dur_ns) AS dur_us, h.cut_ts_ns
    FROM r JOIN _hta_trace h USING (trace_id)
), g AS (
    SELECT *, ts_us + dur_us AS end_us,
           (stream >= 0 AND correlation >= 0) OR name IN ('Event Sync', 'Context Sync') AS is_gpu
    FROM f
)
SELECT * EXCLUDE (cut_ts_ns) FROM g
WHERE cut_ts_ns IS NULL
   OR (NOT is_gpu AND ts_ns < cut_ts_ns)
   OR (is_gpu AND correlation IN (SELECT c.correlation FROM g c
                                  WHERE c.trace_id = g.trace_id AND NOT c.is_gpu AND c.ts_ns < c.cut_ts_ns));

-- _hta_call_stacks: HTA's call stack of each CPU thread. A (pid, tid) whose rows all have a stream > 0, or all
-- pid 0, or all tid 0, is a GPU stream and has none. Its rows with stream -1 are nested by a stack: their
-- starts and ends in HTA's order (by time; at one time the ends of non-empty events, shortest first, then the
-- starts, longest first, then the events of zero duration, each inside the previous), a start pushing the event
-- as a child of the stack's top and an end popping the top, whatever it is. So an event's parent is the last
-- event started before it at one level less (level: the stack's size after its start), its depth is its level
-- less one (0 for an outermost event), and its subtree is what starts from its start (seq) until the stack
-- first falls below its level (end_seq). top_event_id is its outermost ancestor (itself at depth 0).
-- label: 'main' for a thread with a ProfilerStep, else 'bwd' for one with an autograd:: call (HTA's labels).
CREATE OR REPLACE VIEW _hta_call_stacks AS
WITH fr AS MATERIALIZED (SELECT * FROM _hta_frame), grp AS (
    SELECT trace_id, pid, tid,
           bool_and(stream > 0) OR bool_and(TRY_CAST(pid AS BIGINT) IS NOT DISTINCT FROM 0)
               OR bool_and(TRY_CAST(tid AS BIGINT) IS NOT DISTINCT FROM 0) AS is_gpu_stream,
           CASE WHEN bool_or(starts_with(name, 'ProfilerStep#')) THEN 'main'
                WHEN bool_or(contains(name, 'autograd::')) THEN 'bwd' END AS label
    FROM fr GROUP BY trace_id, pid, tid
), ev AS (
    SELECT f.trace_id, f.pid, f.tid, g.label, f.event_id, f.ts_us, f.end_us, f.dur_us
    FROM fr f JOIN grp g USING (trace_id, pid, tid)
    WHERE NOT g.is_gpu_stream AND f.stream = -1
), ends AS (
    -- (time, class, key, key2): class 0 end of a non-empty event, 1 start of one, 2 either end of an empty one
    SELECT *, ts_us AS t, CASE WHEN dur_us = 0 THEN 2 ELSE 1 END AS cls,
           CASE WHEN dur_us = 0 THEN 0 ELSE -dur_us END AS k1, event_id AS k2, 1 AS delta FROM ev
    UNION ALL
    SELECT *, CASE WHEN dur_us = 0 THEN ts_us ELSE end_us END, CASE WHEN dur_us = 0 THEN 2 ELSE 0 END,
           CASE WHEN dur_us = 0 THEN 1 ELSE dur_us END, -event_id, -1 FROM ev
), lv AS MATERIALIZED (
    SELECT trace_id, pid, tid, label, event_id, ts_us, end_us, delta, row_number() OVER w AS seq,
           (sum(delta) OVER w)::BIGINT AS level
    FROM ends
    WINDOW w AS (PARTITION BY trace_id, pid, tid ORDER BY t, cls, k1, k2 ROWS UNBOUNDED PRECEDING)
), starts AS MATERIALIZED (
    SELECT *, max(CASE WHEN level = 1 THEN seq END) OVER (PARTITION BY trace_id, pid, tid ORDER BY seq
                                                         ROWS UNBOUNDED PRECEDING) AS top_seq
    FROM lv WHERE delta = 1
)
SELECT s.trace_id, s.pid, s.tid, s.label, s.event_id, s.ts_us, s.end_us, s.level - 1 AS depth, s.seq,
       e.seq AS end_seq, p.event_id AS parent_event_id, t.event_id AS top_event_id
FROM starts s
ASOF LEFT JOIN starts p ON p.trace_id = s.trace_id AND p.pid = s.pid AND p.tid = s.tid
                       AND p.level = s.level - 1 AND s.seq > p.seq
ASOF JOIN lv e ON e.trace_id = s.trace_id AND e.pid = s.pid AND e.tid = s.tid AND e.level = s.level - 1
              AND e.seq > s.seq
JOIN starts t ON t.trace_id = s.trace_id AND t.pid = s.pid AND t.tid = s.tid AND t.seq = s.top_seq;

-- _hta_call_graph: HTA's call graph of a trace: one row per node. CPU nodes are those of _hta_call_stacks; when
-- the trace has exactly one 'main' and one 'bwd' thread, each outermost call of the backward thread that lies
-- within a '## backward ##' annotation of the main thread (else within a ProfilerStep) is moved under the first
-- such annotation (by position in the file), with its calls below it, their depths growing accordingly
-- (moved_under: that annotation, for each call of the moved subtree). GPU nodes are the GPU rows on a stream > 0
-- whose correlation is that of a CPU node (the last such row of the file when several share it; HTA's fallback
-- index 0 links nothing), one level below it.
--   trace_id, event_id          the node
--   is_gpu                      a GPU event (else a CPU call)
--   parent_event_id             its parent (NULL for an outermost CPU call)
--   depth                       HTA's depth: 0 for an outermost call
--   pid, tid, seq, end_seq      a CPU node's thread and subtree (as in _hta_call_stacks)
--   moved_under                 the annotation a CPU node's outermost ancestor was moved under, else NULL
CREATE OR REPLACE VIEW _hta_call_graph AS
WITH cs AS MATERIALIZED (SELECT * FROM _hta_call_stacks),
fr AS MATERIALIZED (SELECT * FROM _hta_frame),
labels AS (
    SELECT trace_id FROM (SELECT DISTINCT trace_id, pid, tid, label FROM cs)
    GROUP BY trace_id
    HAVING count(*) FILTER (WHERE label = 'main') = 1 AND count(*) FILTER (WHERE label = 'bwd') = 1
), named AS (
    SELECT s.*, f.name FROM cs s JOIN fr f USING (trace_id, event_id)
    WHERE s.label = 'main' AND s.trace_id IN (SELECT trace_id FROM labels)
      AND (starts_with(f.name, '## backward ##') OR starts_with(f.name, 'ProfilerStep#'))
), ann AS (
    SELECT * FROM named
    QUALIFY starts_with(name, '## backward ##')
         OR NOT bool_or(starts_with(name, '## backward ##')) OVER (PARTITION BY trace_id)
), moved AS (
    SELECT s.trace_id, s.event_id, min(a.event_id) AS ann_event_id
    FROM cs s JOIN ann a ON a.trace_id = s.trace_id AND s.ts_us >= a.ts_us AND s.end_us <= a.end_us
    WHERE s.label = 'bwd' AND s.depth = 0
    GROUP BY s.trace_id, s.event_id
), cpu AS (
    SELECT s.trace_id, s.event_id, false AS is_gpu,
           CASE WHEN s.depth = 0 AND m.ann_event_id IS NOT NULL THEN m.ann_event_id ELSE s.parent_event_id END
               AS parent_event_id,
           s.depth + coalesce(a.depth + 1, 0) AS depth, s.pid, s.tid, s.seq, s.end_seq,
           m.ann_event_id AS moved_under
    FROM cs s
    LEFT JOIN moved m ON m.trace_id = s.trace_id AND m.event_id = s.top_event_id
    LEFT JOIN cs a ON a.trace_id = s.trace_id AND a.event_id = m.ann_event_id
), link AS (
    SELECT g.trace_id, g.event_id, max(c.event_id) AS cpu_event_id
    FROM fr g JOIN fr c ON c.trace_id = g.trace_id AND c.correlation = g.correlation
    WHERE g.is_gpu AND g.stream > 0 AND g.correlation <> -1 AND NOT c.is_gpu
    GROUP BY g.trace_id, g.event_id
)
SELECT * FROM cpu
UNION ALL
SELECT l.trace_id, l.event_id, true, l.cpu_event_id, c.depth + 1, NULL, NULL, NULL, NULL, NULL
FROM link l JOIN cpu c ON c.trace_id = l.trace_id AND c.event_id = l.cpu_event_id
WHERE l.cpu_event_id > 0;

-- hta_frequent_cuda_kernel_sequences_for(operator_name, min_pattern_len): HTA's frequent_cuda_kernel_sequences.csv
-- of each trace (top_k and the overlaid trace HTA also writes change nothing in it). The roots are the events of
-- HTA's frame whose name contains operator_name, at the smallest depth any of them has (an event outside the call
-- graph, such as a GPU event without a launch, has depth -1: HTA then finds nothing), with at least
-- min_pattern_len GPU events below them.
--   pattern                    the root's name, then the names of the GPU events below it in start order (at one
--                              start, in file order; HTA's sort leaves that order to numpy), joined by '|'
--   count                      roots with that pattern
--   GPU kernel duration (us)   sum of the durations of the roots' GPU events, µs
--   CPU op duration (us)       sum of the roots' durations, µs
-- Rows: count descending, then pattern (by code point).
CREATE OR REPLACE MACRO hta_frequent_cuda_kernel_sequences_for(operator_name, min_pattern_len) AS TABLE
WITH fr AS MATERIALIZED (SELECT trace_id, event_id, name, ts_us, dur_ns FROM _hta_frame),
cg AS MATERIALIZED (SELECT * FROM _hta_call_graph),
roots AS MATERIALIZED (
    SELECT f.trace_id, f.event_id, f.name, f.dur_ns, c.is_gpu, c.pid, c.tid, c.seq, c.end_seq
    FROM fr f LEFT JOIN cg c USING (trace_id, event_id)
    WHERE contains(f.name, operator_name)
    QUALIFY coalesce(c.depth, -1) = min(coalesce(c.depth, -1)) OVER (PARTITION BY f.trace_id) AND c.depth IS NOT NULL
), gpu AS (
    -- each GPU node at its launching call, and at the annotation that call's outermost ancestor was moved under
    SELECT g.trace_id, g.event_id AS gpu_event_id, c.pid, c.tid, c.seq
    FROM cg g JOIN cg c ON c.trace_id = g.trace_id AND c.event_id = g.parent_event_id WHERE g.is_gpu
    UNION ALL
    SELECT g.trace_id, g.event_id, m.pid, m.tid, m.seq
    FROM cg g JOIN cg c ON c.trace_id = g.trace_id AND c.event_id = g.parent_event_id
    JOIN cg m ON m.trace_id = c.trace_id AND m.event_id = c.moved_under WHERE g.is_gpu
), below AS (
    -- a CPU root's GPU nodes: those placed within its subtree on its thread (the roots share one depth, so their
    -- subtrees on a thread are disjoint: the root of a placement is the last one started before it); a GPU
    -- root's: itself
    SELECT r.trace_id, r.event_id, g.gpu_event_id
    FROM gpu g ASOF JOIN (SELECT * FROM roots WHERE NOT is_gpu) r
      ON r.trace_id = g.trace_id AND r.pid = g.pid AND r.tid = g.tid AND g.seq >= r.seq
    WHERE g.seq < r.end_seq
    UNION ALL
    SELECT trace_id, event_id, event_id FROM roots WHERE is_gpu
), seqs AS (
    SELECT r.trace_id, r.event_id, any_value(r.name) AS name, any_value(r.dur_ns) AS dur_ns, count(*) AS n,
           sum(k.dur_ns) AS kernel_ns,
           any_value(r.name) || '|' || string_agg(k.name, '|' ORDER BY k.ts_us, k.event_id) AS pattern
    FROM roots r JOIN below b USING (trace_id, event_id)
    JOIN fr k ON k.trace_id = b.trace_id AND k.event_id = b.gpu_event_id
    GROUP BY r.trace_id, r.event_id
)
SELECT trace_id, pattern, count(*) AS count, sum(kernel_ns) / 1e3 AS "GPU kernel duration (us)",
       sum(dur_ns) / 1e3 AS "CPU op duration (us)"
FROM seqs WHERE n >= min_pattern_len
GROUP BY trace_id, pattern;

-- hta_frequent_cuda_kernel_sequences: hta_frequent_cuda_kernel_sequences_for('aten::linear', 3), the operator and
-- length of the shared HTA references (frequent_cuda_kernel_sequences.csv).
-- @output report-hta 8 frequent_cuda_kernel_sequences ORDER BY trace_id, count DESC, pattern
CREATE OR REPLACE VIEW hta_frequent_cuda_kernel_sequences AS
SELECT * FROM hta_frequent_cuda_kernel_sequences_for('aten::linear', 3);
