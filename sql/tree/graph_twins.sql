-- tree/graph_twins — the ops, modules and tags of a CUDA/HIP-graph replay's GPU events, read from a twin trace
-- of the same code: a capture trace (the graph being recorded) or an eager run.
--
-- A graph replay's GPU events carry the correlation of one cudaGraphLaunch / hipGraphLaunch call and no op:
-- the ops that launched them ran once, at capture time. Each graph launch is placed on a twin:
--   capture twin   the launch's GPU events, in node order, against the launch calls of one capture window of
--                  the twin (tree/graph_capture: _graph_capture_calls) with as many calls; a call that names its
--                  kernel (ROCm: args.kernel) must name the event's kernel (method 'names'), a call that does not
--                  (CUDA) matches by position (method 'order')
--   eager twin     the launch's GPU events, in node order, against a run of consecutive GPU events of the twin
--                  (kernel, gpu_memcpy, gpu_memset launched by a kernel/memcpy/memset call, by GPU start) with the
--                  same names, in the same order, repeats kept (method 'names')
-- A placement is a candidate when every event matches. The candidates' assignments (op and tag of every
-- position) are compared: all equal (steps repeated; a graph of one layer that matches every layer) → the launch is
-- 'matched' and takes the first candidate's ops, and their module paths only when every candidate gives every
-- position the same one (else none: which layer is not known); different → 'ambiguous' and nothing is taken; no candidate →
-- 'unmatched'. Capture twins
-- are tried first, eager ones when no capture twin matches. Node order and signatures: tree/graph_nodes (the
-- stored table graph_replay_nodes).
--
-- Which traces are twins (trace_twins): the pairings the user made (DATASET/twins/, `tracesql ingest REPLAY
-- --eager|--capture TWIN`, `tracesql twin`), and, for a trace with graph launches and no capture twin of the
-- user's, every other trace of the same rank (or both without a rank) that records a graph capture with as many
-- launch calls as one of its graph launches has GPU events (a capture that could hold one of its graphs).
--
-- @requires tree/graph_capture tree/graph_nodes tree/context tree/links

-- trace_twins: one row per (graph replay trace, twin trace).
--   trace_id        the trace with graph launches
--   twin_trace_id   a trace of the same code whose ops name the replay's GPU events
--   kind            'capture' (it records graph captures) or 'eager' (it runs the same work without graphs)
--   paired_by       'user' (a file of DATASET/twins/) or 'auto' (a capture trace of the same rank that could
--                   hold one of its graphs, see the top of this file)
-- @materialize tree report perf summary diff twins
CREATE OR REPLACE VIEW trace_twins AS
WITH user_pairs AS (
    SELECT DISTINCT json_extract_string(content, '$.trace_id') AS trace_id,
           json_extract_string(content, '$.twin_trace_id') AS twin_trace_id,
           json_extract_string(content, '$.kind') AS kind
    FROM _dataset_twin_files WHERE json_valid(content)
), replays AS (              -- the lengths of each trace's graph launches
    SELECT DISTINCT trace_id, n_events FROM graph_replay_nodes WHERE ordinal = 1
), captures AS (             -- the lengths of each trace's capture windows
    SELECT DISTINCT trace_id, n_calls FROM _graph_capture_calls
), auto_pairs AS (
    SELECT DISTINCT r.trace_id, c.trace_id AS twin_trace_id, 'capture' AS kind
    FROM replays r JOIN captures c ON c.trace_id <> r.trace_id AND c.n_calls = r.n_events
    JOIN traces tr ON tr.trace_id = r.trace_id JOIN traces tc ON tc.trace_id = c.trace_id
    WHERE tr.rank IS NOT DISTINCT FROM tc.rank
      AND NOT EXISTS (SELECT 1 FROM user_pairs u WHERE u.trace_id = r.trace_id AND u.kind = 'capture')
)
SELECT u.trace_id, u.twin_trace_id, u.kind, 'user' AS paired_by
FROM user_pairs u
WHERE u.kind IN ('capture', 'eager') AND u.trace_id <> u.twin_trace_id
  AND u.trace_id IN (SELECT trace_id FROM traces) AND u.twin_trace_id IN (SELECT trace_id FROM traces)
UNION ALL
SELECT trace_id, twin_trace_id, kind, 'auto' FROM auto_pairs;

-- Helper: what a twin offers, as sequences of launches with the op context of each.
--   twin_trace_id, kind            the twin (trace_twins)
--   seq_window                     capture twins: the capture window (_graph_capture_calls.graph_index);
--                                  eager twins: 0 (the whole trace is one sequence)
--   pos, n_window                  1-based rank in the window (capture: by call start; eager: by GPU start)
--                                  and the window's length
--   name                           the kernel name (eager: the GPU event's; capture: the call's args.kernel,
--                                  NULL when the call does not name it)
--   launch_event_id, gpu_event_id  the twin's launch call and (eager) its GPU event
--   op_event_id, op_name, module_path, tag   innermost cpu_op, nn.Module path and user annotation around the
--                                  launch call (tree/context)
CREATE OR REPLACE VIEW _graph_twin_seq AS
WITH twins AS (
    SELECT DISTINCT twin_trace_id, kind FROM trace_twins
), capture AS (
    SELECT c.trace_id AS twin_trace_id, 'capture' AS kind, c.graph_index AS seq_window, c.ordinal AS pos,
           c.n_calls AS n_window, c.kernel_name AS name, c.event_id AS launch_event_id,
           NULL::BIGINT AS gpu_event_id
    FROM _graph_capture_calls c
    WHERE c.trace_id IN (SELECT twin_trace_id FROM twins WHERE kind = 'capture')
), eager AS (
    SELECT l.trace_id AS twin_trace_id, 'eager' AS kind, 0 AS seq_window,
           row_number() OVER (PARTITION BY l.trace_id ORDER BY l.ts_ns, l.event_id) AS pos,
           count(*) OVER (PARTITION BY l.trace_id) AS n_window,
           l.name, l.launch_event_id, l.event_id AS gpu_event_id
    FROM gpu_launch_links l
    WHERE l.trace_id IN (SELECT twin_trace_id FROM twins WHERE kind = 'eager')
      AND l.cat IN ('kernel', 'gpu_memcpy', 'gpu_memset') AND l.launch_kind IN ('kernel', 'memcpy', 'memset')
), seq AS (
    SELECT * FROM capture UNION ALL SELECT * FROM eager
)
SELECT s.*, c.op_event_id, c.op_name, c.module_path, c.annotation_name AS tag
FROM seq s
LEFT JOIN cpu_event_context c ON c.trace_id = s.twin_trace_id AND c.event_id = s.launch_event_id
     AND c.anchor_kind = 'launch';

-- Helper: every placement of every distinct graph (a launch's sequence of GPU event names) on every twin of its
-- trace where all its events match (see the top of this file), with a digest of the assignment it gives.
--   trace_id, signature, n_events   the replay trace, the digest of the graph's names in node order, its length
--   twin_trace_id, kind, seq_window, start   the placement: twin positions start .. start + n_events - 1 of seq_window
--   method                          'names' (every position compared by name) or 'order' (some capture calls
--                                   without a kernel name: those matched by position)
--   assignment                      digest of the (op, tag) of every position (module paths may differ: a
--                                   graph of one layer placed on every layer)
--   module_paths                    digest of the module path of every position
-- @materialize tree report perf summary diff twins
CREATE OR REPLACE VIEW _graph_twin_candidates AS
WITH graphs AS MATERIALIZED (   -- one row per (trace, graph launch) with the digest of its names
    SELECT trace_id, graph_index, n_events, signature FROM graph_replay_nodes
    WHERE ordinal = 1 AND trace_id IN (SELECT trace_id FROM trace_twins)
), shapes AS MATERIALIZED (     -- one row per (trace, distinct graph, position): the first launch of each graph
    SELECT r.trace_id, g.signature, g.n_events, r.pos, r.name
    FROM (SELECT trace_id, signature, min(graph_index) AS graph_index, any_value(n_events) AS n_events
          FROM graphs GROUP BY ALL) g
    JOIN graph_replay_nodes r ON r.trace_id = g.trace_id AND r.graph_index = g.graph_index
), seq AS MATERIALIZED (
    SELECT * FROM _graph_twin_seq
), name_counts AS (
    SELECT twin_trace_id, name, count(*) AS n FROM seq WHERE kind = 'eager' GROUP BY ALL
), anchors AS (                 -- eager: the position of the graph whose name is rarest in the twin
    SELECT s.trace_id, s.signature, t.twin_trace_id, s.pos, s.name
    FROM shapes s
    JOIN trace_twins t ON t.trace_id = s.trace_id AND t.kind = 'eager'
    JOIN name_counts c ON c.twin_trace_id = t.twin_trace_id AND c.name = s.name
    QUALIFY row_number() OVER (PARTITION BY s.trace_id, s.signature, t.twin_trace_id ORDER BY c.n, s.pos) = 1
), starts AS (
    SELECT DISTINCT a.trace_id, a.signature, a.twin_trace_id, 'eager' AS kind, 0 AS seq_window, q.pos - a.pos + 1 AS start
    FROM anchors a
    JOIN seq q ON q.twin_trace_id = a.twin_trace_id AND q.kind = 'eager' AND q.name = a.name
    WHERE q.pos - a.pos + 1 >= 1
    UNION ALL                   -- capture: every window with as many calls as the graph has events
    SELECT DISTINCT g.trace_id, g.signature, t.twin_trace_id, 'capture', q.seq_window, 1
    FROM (SELECT DISTINCT trace_id, signature, n_events FROM graphs) g
    JOIN trace_twins t ON t.trace_id = g.trace_id AND t.kind = 'capture'
    JOIN seq q ON q.twin_trace_id = t.twin_trace_id AND q.kind = 'capture' AND q.pos = 1
     AND q.n_window = g.n_events
), checked AS (
    SELECT st.trace_id, st.signature, any_value(s.n_events) AS n_events, st.twin_trace_id, st.kind, st.seq_window,
           st.start,
           count(*) FILTER (WHERE q.name = s.name OR (st.kind = 'capture' AND q.name IS NULL)) AS n_match,
           bool_and(q.name IS NOT NULL) AS all_named,
           md5(string_agg(concat_ws(chr(2), coalesce(q.op_name, ''), coalesce(q.tag, '')), chr(1) ORDER BY s.pos))
               AS assignment,
           md5(string_agg(coalesce(q.module_path, ''), chr(1) ORDER BY s.pos)) AS module_paths
    FROM starts st
    JOIN shapes s ON s.trace_id = st.trace_id AND s.signature = st.signature
    JOIN seq q ON q.twin_trace_id = st.twin_trace_id AND q.kind = st.kind AND q.seq_window = st.seq_window
     AND q.pos = st.start + s.pos - 1
    GROUP BY st.trace_id, st.signature, st.twin_trace_id, st.kind, st.seq_window, st.start
)
SELECT trace_id, signature, n_events, twin_trace_id, kind, seq_window, start,
       CASE WHEN all_named THEN 'names' ELSE 'order' END AS method, assignment, module_paths
FROM checked WHERE n_match = n_events;

-- graph_alignment: one row per graph launch of a trace that has a twin: where it was placed, or why not.
--   trace_id, graph_launch_event_id, graph_index   the launch (graph_index: 1-based among the trace's launches)
--   n_events        its GPU events;  signature  digest of their names in node order (equal for replays of one graph)
--   status          'matched' (placed: its events take the twin's ops), 'ambiguous' (placements on the twins
--                   disagree on the ops: nothing taken) or 'unmatched' (no twin sequence matches every event)
--   twin_trace_id, twin_kind, seq_window, start   the placement taken (NULL unless matched)
--   method          'names' or 'order' (see _graph_twin_candidates)
--   paths_agree     every candidate gives every position the same module path (else the launch's events take
--                   none: which layer is not known)
--   candidates      placements where every event matches, on twins of the kind taken (all kinds when not
--                   matched)
--   assignments     distinct assignments among them (1 when matched)
-- @materialize tree report perf summary diff twins
CREATE OR REPLACE VIEW graph_alignment AS
WITH graphs AS (
    SELECT trace_id, graph_launch_event_id, graph_index, n_events, signature FROM graph_replay_nodes
    WHERE ordinal = 1 AND trace_id IN (SELECT trace_id FROM trace_twins)
), per_kind AS (
    SELECT trace_id, signature, kind, count(*) AS candidates, count(DISTINCT assignment) AS assignments,
           count(DISTINCT module_paths) = 1 AS paths_agree,
           arg_min({'twin': twin_trace_id, 'seq_window': seq_window, 'start': start, 'method': method},
                   (twin_trace_id, seq_window, start)) AS first
    FROM _graph_twin_candidates GROUP BY ALL
), chosen AS (
    SELECT * FROM per_kind WHERE assignments = 1
    QUALIFY row_number() OVER (PARTITION BY trace_id, signature ORDER BY kind = 'capture' DESC) = 1
), totals AS (
    SELECT trace_id, signature, sum(candidates)::BIGINT AS candidates, sum(assignments)::BIGINT AS assignments
    FROM per_kind GROUP BY ALL
)
SELECT g.trace_id, g.graph_launch_event_id, g.graph_index, g.n_events, g.signature,
       CASE WHEN c.kind IS NOT NULL THEN 'matched' WHEN t.candidates > 0 THEN 'ambiguous' ELSE 'unmatched' END
           AS status,
       c.first.twin AS twin_trace_id, c.kind AS twin_kind, c.first.seq_window AS seq_window, c.first.start AS start,
       c.first.method AS method, c.paths_agree,
       coalesce(c.candidates, t.candidates, 0) AS candidates, coalesce(c.assignments, t.assignments, 0) AS assignments
FROM graphs g
LEFT JOIN chosen c ON c.trace_id = g.trace_id AND c.signature = g.signature
LEFT JOIN totals t ON t.trace_id = g.trace_id AND t.signature = g.signature;

-- graph_kernel_tags: one row per GPU event of a graph launch that has an attribution of its own: placed on a
-- twin (graph_alignment) or tagged through its graph node id.
--   trace_id, event_id              the GPU event of the replay
--   graph_launch_event_id, ordinal  its graph launch and its 1-based position in it (node order)
--   node_id                         its `graph node id` (low 32 bits), NULL when absent
--   source                          'graph node' (a `name` written on the event for its node: it is the tag;
--                                   the op is the twin's when the launch is placed too), else 'capture' or
--                                   'eager' (the twin's launch at the same position)
--   confidence                      'names' (kernel names compared at every position), 'order' (capture
--                                   calls without kernel names: matched by position), 'node' (graph node tag
--                                   only)
--   twin_trace_id                   the twin the launch is placed on (NULL when not placed)
--   twin_launch_event_id, twin_gpu_event_id   the twin's launch call and (eager) GPU event at that position
--   op_event_id, op_name            innermost cpu_op around the twin's launch (in twin_trace_id)
--   module_path                     its nn.Module path
--   tag                             the graph node's `name`, else the innermost user annotation around the
--                                   twin's launch (record_function ranges such as `line_32_all_reduce`)
-- @materialize tree report perf summary diff twins
CREATE OR REPLACE VIEW graph_kernel_tags AS
WITH a AS MATERIALIZED (
    SELECT * FROM graph_alignment WHERE status = 'matched'
), nodes AS MATERIALIZED (
    SELECT trace_id, event_id, graph_launch_event_id, node_id, node_tag, pos FROM graph_replay_nodes
    WHERE node_tag IS NOT NULL OR trace_id IN (SELECT trace_id FROM a)
), placed AS (
    SELECT n.trace_id, n.event_id, a.twin_kind, a.method, a.twin_trace_id, q.launch_event_id AS twin_launch_event_id,
           q.gpu_event_id AS twin_gpu_event_id, q.op_event_id, q.op_name,
           CASE WHEN a.paths_agree THEN q.module_path END AS module_path, q.tag
    FROM a
    JOIN nodes n ON n.trace_id = a.trace_id AND n.graph_launch_event_id = a.graph_launch_event_id
    JOIN _graph_twin_seq q ON q.twin_trace_id = a.twin_trace_id AND q.kind = a.twin_kind
     AND q.seq_window = a.seq_window AND q.pos = a.start + n.pos - 1
)
SELECT n.trace_id, n.event_id, n.graph_launch_event_id, n.pos AS ordinal, n.node_id,
       CASE WHEN n.node_tag IS NOT NULL THEN 'graph node' ELSE p.twin_kind END AS source,
       coalesce(p.method, 'node') AS confidence,
       p.twin_trace_id, p.twin_launch_event_id, p.twin_gpu_event_id, p.op_event_id, p.op_name, p.module_path,
       coalesce(n.node_tag, p.tag) AS tag
FROM nodes n
LEFT JOIN placed p ON p.trace_id = n.trace_id AND p.event_id = n.event_id
WHERE n.node_tag IS NOT NULL OR p.event_id IS NOT NULL;
