-- tree/graph_capture — GPU events of a CUDA/HIP graph replay matched to the calls that recorded them in
-- a capture trace of the same dataset.
--
-- @requires tree/links

-- _graph_replay_events: the GPU events of every graph launch (kernel, gpu_memcpy, gpu_memset).
--   trace_id, graph_launch_event_id, graph_index   the cudaGraphLaunch / hipGraphLaunch call and its 1-based
--                                                  rank among the trace's graph launches (by event_id)
--   event_id, name, ts_ns, dur_ns                  the GPU event
--   ordinal, n_events                              its 1-based rank in the launch by (ts, event_id); the launch's count
CREATE OR REPLACE VIEW _graph_replay_events AS
WITH graph_roots AS (
    SELECT r.trace_id, r.event_id AS graph_launch_event_id, r.correlation,
           row_number() OVER (PARTITION BY r.trace_id ORDER BY r.event_id) AS graph_index
    FROM launches r WHERE r.launch_kind = 'graph' AND r.correlation IS NOT NULL
)
SELECT g.trace_id, g.graph_launch_event_id, g.graph_index, k.event_id, k.name, k.ts_ns, k.dur_ns,
       row_number() OVER (PARTITION BY g.trace_id, g.graph_index ORDER BY k.ts_ns, k.event_id) AS ordinal,
       count(*) OVER (PARTITION BY g.trace_id, g.graph_index) AS n_events
FROM graph_roots g JOIN kernels k ON k.trace_id = g.trace_id AND k.correlation = g.correlation
WHERE k.cat IN ('kernel', 'gpu_memcpy', 'gpu_memset');

-- _graph_capture_calls: the launch calls recorded inside each graph capture of a trace.
--   trace_id, graph_index        the capture trace and the capture window (1-based, by event_id: from the end of
--                                *StreamBeginCapture to the start of the next *StreamEndCapture)
--   root_event_id, root_ts_ns    the longest CPU event that starts inside the window, and its start (ns)
--   event_id, name               a runtime/driver call whose name contains 'launch' or 'memcpy', inside the
--                                root, on its thread
--   ordinal, n_calls             its 1-based rank in the window by (ts, event_id); the window's count
--   kernel_name                  the call's args.kernel (ROCm launches name their kernel; CUDA's do not: NULL)
-- @materialize tree report perf summary diff twins
CREATE OR REPLACE VIEW _graph_capture_calls AS
WITH begins AS (
    SELECT trace_id, ts_ns + dur_ns AS t0, row_number() OVER (PARTITION BY trace_id ORDER BY event_id) AS k
    FROM events WHERE cat IN ('cuda_runtime', 'cuda_driver') AND contains(name, 'StreamBeginCapture')
), ends AS (
    SELECT trace_id, ts_ns AS t1, row_number() OVER (PARTITION BY trace_id ORDER BY event_id) AS k
    FROM events WHERE cat IN ('cuda_runtime', 'cuda_driver') AND contains(name, 'StreamEndCapture')
), windows AS (
    SELECT b.trace_id, b.k AS graph_index, b.t0, e.t1 FROM begins b JOIN ends e USING (trace_id, k)
), roots AS (
    SELECT w.trace_id, w.graph_index, e.event_id AS root_event_id, e.pid, e.tid, e.ts_ns AS r0,
           e.ts_ns + e.dur_ns AS r1
    FROM windows w JOIN events e ON e.trace_id = w.trace_id AND e.ts_ns BETWEEN w.t0 AND w.t1
    WHERE e.dur_ns IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY w.trace_id, w.graph_index ORDER BY e.dur_ns DESC, e.event_id) = 1
), calls AS (
    SELECT r.trace_id, r.graph_index, r.root_event_id, r.r0 AS root_ts_ns, e.event_id, e.name,
           row_number() OVER (PARTITION BY r.trace_id, r.graph_index ORDER BY e.ts_ns, e.event_id) AS ordinal,
           count(*) OVER (PARTITION BY r.trace_id, r.graph_index) AS n_calls
    FROM roots r JOIN events e ON e.trace_id = r.trace_id AND e.pid = r.pid AND e.tid = r.tid
     AND e.ts_ns BETWEEN r.r0 AND r.r1
    WHERE e.cat IN ('cuda_runtime', 'cuda_driver')
      AND (contains(lower(e.name), 'launch') OR contains(lower(e.name), 'memcpy'))
), call_args AS (   -- args.kernel of the capture calls (the args text is read for those calls only)
    SELECT trace_id, event_id, json_extract_string(args, '$.kernel') AS kernel_name FROM events
    WHERE (trace_id, event_id) IN (SELECT trace_id, event_id FROM calls)
)
SELECT c.*, a.kernel_name
FROM calls c LEFT JOIN call_args a USING (trace_id, event_id);

-- _serving_steps: one row per iteration annotation of a trace as TraceLens finds them (its iteration roots,
-- TraceLens/TraceUtils/annotation_utils.py find_iteration_roots_by_priority): user annotations whose names
-- start in a detailed serving-step format (vLLM's execute_N_context_N(sq..sk..sqsq..sqsk..)_generation_N(...),
-- ATOM's prefill[... sqsq=N ...] / decode[...], SGLang's step[EXTEND|DECODE|MIXED ... sqsq=N ...]), or, in a
-- trace with none of those, in a plain one (vLLM's execute_context_N(N)_generation_N(N), SGLang's
-- step[EXTEND|DECODE|MIXED ...], ATOM's prefill[...] / decode[...], execute_diffusion_N_WxH).
--   trace_id, event_id, name, ts_ns, dur_ns   the annotation
--   batch_size   the step's batch size as TraceLens reads it (IterationAnnotation, the first format that parses
--                the name, else the digits between its first two underscores; find_execution_details): vLLM
--                context + generation query tokens; SGLang c_sq + g_sq, else toks, else bs (the plain DECODE form:
--                bs; EXTEND and MIXED: toks, else bs); ATOM tok (0 when not a number); diffusion its first
--                number. NULL when none is read.
CREATE OR REPLACE VIEW _serving_steps AS
WITH a AS (
    SELECT trace_id, event_id, name, ts_ns, dur_ns,
           CASE WHEN regexp_matches(name, '^execute_\d+_context_\d+\(sq\d+sk\d+sqsq\d+sqsk\d+\)_generation_\d+'
                                          || '\(sq\d+sk\d+sqsq\d+sqsk\d+\)')
                  OR regexp_matches(name, '^(prefill|decode)\[.*sqsq=\d+.*\]')
                  OR regexp_matches(name, '^step\[(?:EXTEND|DECODE|MIXED)\b[^\]]*sqsq=\d+[^\]]*\]') THEN 1
                WHEN regexp_matches(name, '^execute_context_\d+\(\d+\)_generation_\d+\(\d+\)')
                  OR regexp_matches(name, '^step\[(?:EXTEND|DECODE|MIXED)\b.*\]')
                  OR regexp_matches(name, '^(prefill|decode)\[(.*)\]')
                  OR regexp_matches(name, '^execute_diffusion_(\d+)_(\d+x\d+)') THEN 2 END AS tier
    FROM events WHERE cat = 'user_annotation'
), r AS (
    SELECT * FROM a WHERE tier IS NOT NULL QUALIFY tier = min(tier) OVER (PARTITION BY trace_id)
), p AS (
    SELECT *,
           regexp_extract(name, '^execute_\d+_context_\d+\(sq(\d+)sk\d+sqsq\d+sqsk\d+\)_generation_\d+'
                                || '\(sq(\d+)sk\d+sqsq\d+sqsk\d+\)', ['c', 'g']) AS vd,
           regexp_extract(name, '^execute_context_\d+\((\d+)\)_generation_\d+\((\d+)\)', ['c', 'g']) AS vn,
           regexp_extract(name, '^step\[(\w+)\s+bs=(\d+)(?:\s+toks=(\d+))?\]', ['kind', 'bs', 'toks']) AS sn,
           CASE WHEN regexp_matches(name, '^step\[(?:EXTEND|DECODE|MIXED)\b[^\]]*sqsq=\d+[^\]]*\]')
                THEN regexp_extract(name, '^step\[(.*)\]', 1) END AS sd_body,   -- up to the last ']'
           regexp_extract(name, '^(?:prefill|decode)\[(.*)\]', 1) AS atom_body,
           regexp_extract(name, '^execute_diffusion_(\d+)_\d+x\d+', 1) AS diff_bs,
           regexp_extract(name, '^[^_]*_(-*\d+)(?:_|$)', 1) AS split_bs
    FROM r
), kv AS (   -- the last value of each key of a detailed SGLang step (its c_sq, g_sq, toks, bs)
    SELECT *,
           coalesce(list_last(regexp_extract_all(sd_body, '(?:^|\W)c_sq=(\d+)', 1))::BIGINT, 0) AS s_c_sq,
           coalesce(list_last(regexp_extract_all(sd_body, '(?:^|\W)g_sq=(\d+)', 1))::BIGINT, 0) AS s_g_sq,
           coalesce(list_last(regexp_extract_all(sd_body, '(?:^|\W)toks=(\d+)', 1))::BIGINT, 0) AS s_toks,
           coalesce(list_last(regexp_extract_all(sd_body, '(?:^|\W)bs=(\d+)', 1))::BIGINT, 0) AS s_bs
    FROM p
)
SELECT trace_id, event_id, name, ts_ns, dur_ns,
       CASE WHEN vd.c <> '' THEN vd.c::BIGINT + vd.g::BIGINT
            WHEN vn.c <> '' THEN vn.c::BIGINT + vn.g::BIGINT
            WHEN sd_body IS NOT NULL
            THEN CASE WHEN s_c_sq + s_g_sq <> 0 THEN s_c_sq + s_g_sq WHEN s_toks <> 0 THEN s_toks ELSE s_bs END
            WHEN sn.bs <> '' THEN CASE WHEN sn.kind = 'DECODE' THEN sn.bs::BIGINT
                                       ELSE coalesce(nullif(TRY_CAST(nullif(sn.toks, '') AS BIGINT), 0),
                                                     sn.bs::BIGINT) END
            WHEN regexp_matches(name, '^(prefill|decode)\[(.*)\]')
            THEN coalesce(TRY_CAST(list_last(regexp_extract_all(atom_body,
                                             '(?:^|\W)tok=(\[[^\]]*\](?:\.\.\.\+\d+)?|\S+)', 1)) AS BIGINT), 0)
            WHEN diff_bs <> '' THEN diff_bs::BIGINT
            WHEN split_bs <> '' THEN TRY_CAST(split_bs AS BIGINT) END AS batch_size
FROM kv;

-- _graph_capture_traces: one row per trace with a graph capture window (from the end of a
-- *StreamBeginCapture runtime call to the start of the next *StreamEndCapture): the batch size and mode its
-- captures are for, as TraceLens's inference report reads a capture folder
-- (generate_perf_report_pytorch_inference.py, classify_graph_capture_trace): from its first annotation
-- capture_<batch size>_<mode> (by start) when it has as many of them as vLLM `_dummy_run` frames; else mode
-- FULL for at most one *StreamBeginCapture and PIECEWISE for more, and the batch size that leads most input
-- shapes of its cpu_ops (the first dimension of each recorded shape; on a tie the one seen first).
--   trace_id, rank, file_name, n_windows   the trace, its rank, file name and number of capture windows
--   batch_size, mode   NULL / a mode other than FULL and PIECEWISE: TraceLens skips the trace
CREATE OR REPLACE VIEW _graph_capture_traces AS
WITH wn AS (
    SELECT trace_id, least(count(*) FILTER (WHERE contains(name, 'StreamBeginCapture')),
                           count(*) FILTER (WHERE contains(name, 'StreamEndCapture'))) AS n_windows
    FROM events WHERE cat IN ('cuda_runtime', 'cuda_driver')
      AND (contains(name, 'StreamBeginCapture') OR contains(name, 'StreamEndCapture'))
    GROUP BY trace_id HAVING n_windows > 0
), facts AS (
    SELECT e.trace_id,
           count(*) FILTER (WHERE e.cat = 'user_annotation' AND regexp_matches(e.name, '^capture_(\d+)_(.*)'))
               AS n_ann,
           arg_min(e.name, (e.ts_ns, e.event_id)) FILTER (WHERE e.cat = 'user_annotation'
                                                            AND regexp_matches(e.name, '^capture_(\d+)_(.*)'))
               AS ann,
           count(*) FILTER (WHERE contains(e.name, '_dummy_run')
                                  AND regexp_matches(e.name, '^vllm/v1/worker/gpu_model_runner\.py\(\d+\): _dummy_run'))
               AS n_dummy,
           count(*) FILTER (WHERE e.cat = 'cuda_runtime' AND contains(e.name, 'StreamBeginCapture')) AS n_begin
    FROM events e SEMI JOIN wn USING (trace_id)
    WHERE e.cat IN ('user_annotation', 'cuda_runtime') OR contains(e.name, '_dummy_run')
    GROUP BY e.trace_id
), firsts AS (   -- the first dimension of every recorded input shape of the cpu_ops, in file order
    SELECT trace_id, event_id, i, TRY_CAST(json_extract_string(shape, '$[0]') AS BIGINT) AS v
    FROM (SELECT e.trace_id, e.event_id, unnest(json_extract(e.input_dims, '$[*]')) AS shape,
                 generate_subscripts(json_extract(e.input_dims, '$[*]'), 1) AS i
          FROM events e SEMI JOIN facts f ON f.trace_id = e.trace_id AND NOT (f.n_ann > 0 AND f.n_ann = f.n_dummy)
          WHERE e.cat = 'cpu_op' AND e.input_dims IS NOT NULL)
    WHERE json_type(shape) = 'ARRAY' AND json_type(shape, '$[0]') IN ('BIGINT', 'UBIGINT')
), lead AS (
    SELECT trace_id, arg_max(v, (n, -first_event, -first_i)) AS v FROM (
        SELECT trace_id, v, count(*) AS n, min(event_id) AS first_event,
               arg_min(i, event_id) AS first_i
        FROM firsts GROUP BY trace_id, v)
    GROUP BY trace_id
)
SELECT f.trace_id, t.rank, t.file_name, wn.n_windows,
       CASE WHEN f.n_ann > 0 AND f.n_ann = f.n_dummy THEN regexp_extract(f.ann, '^capture_(\d+)_', 1)::BIGINT
            ELSE l.v END AS batch_size,
       CASE WHEN f.n_ann > 0 AND f.n_ann = f.n_dummy THEN regexp_extract(f.ann, '^capture_\d+_(.*)', 1)
            WHEN f.n_begin <= 1 THEN 'FULL' ELSE 'PIECEWISE' END AS mode
FROM facts f JOIN wn USING (trace_id) JOIN traces t USING (trace_id)
LEFT JOIN lead l USING (trace_id);

-- _graph_capture_pairs: one row per graph launch of a trace paired with a capture window of another trace of
-- the same rank (or both without a rank), as TraceLens's inference report merges a capture folder
-- (TraceLens/Trace2Tree/trace_capture_merge_experimental.py, merge_capture_trace_into_graph): for each
-- serving step (_serving_steps) the capture trace whose batch size is the smallest at least the step's (the
-- PIECEWISE one when both modes have it and the step holds other than one graph launch; among traces of the
-- same batch size and mode, the last by file name), then the step's graph launches (cudaGraphLaunch /
-- hipGraphLaunch calls, as TraceLens's events named *graphlaunch*, within the step, by start): each takes the
-- capture's one window, or with as many windows as launches the window of its place.
--   trace_id, graph_launch_event_id, graph_index   the graph launch (graph_index as in _graph_replay_events)
--   capture_trace_id, window_index                 the capture trace and window (1-based, by event_id)
CREATE OR REPLACE VIEW _graph_capture_pairs AS
WITH steps AS MATERIALIZED (
    SELECT * FROM _serving_steps WHERE batch_size IS NOT NULL
), caps AS MATERIALIZED (
    SELECT * FROM _graph_capture_traces WHERE batch_size IS NOT NULL AND mode IN ('FULL', 'PIECEWISE')
), gl AS (   -- the graph launches of each step
    SELECT s.trace_id, s.event_id AS step_id, s.ts_ns AS step_ts_ns, e.event_id, e.ts_ns,
           row_number() OVER (PARTITION BY s.trace_id, s.event_id ORDER BY e.ts_ns, e.event_id) AS place,
           count(*) OVER (PARTITION BY s.trace_id, s.event_id) AS n_launches
    FROM steps s JOIN launches e ON e.trace_id = s.trace_id AND e.launch_kind = 'graph'
     AND e.ts_ns >= s.ts_ns AND e.ts_ns + coalesce(e.dur_ns, 0) <= s.ts_ns + s.dur_ns
), closest AS (   -- each step's capture batch size
    SELECT s.trace_id, s.event_id AS step_id, min(c.batch_size) AS bs
    FROM steps s JOIN traces t USING (trace_id)
    JOIN caps c ON c.trace_id <> s.trace_id AND c.rank IS NOT DISTINCT FROM t.rank AND c.batch_size >= s.batch_size
    GROUP BY ALL
), chosen AS (
    SELECT g.trace_id, g.step_id, g.step_ts_ns, g.event_id, g.ts_ns, g.place, g.n_launches, c.trace_id AS cap_id,
           c.n_windows
    FROM (SELECT DISTINCT trace_id, step_id, step_ts_ns, n_launches FROM gl) s0
    JOIN closest k ON k.trace_id = s0.trace_id AND k.step_id = s0.step_id
    JOIN traces t ON t.trace_id = s0.trace_id
    JOIN caps c ON c.trace_id <> s0.trace_id AND c.rank IS NOT DISTINCT FROM t.rank AND c.batch_size = k.bs
    JOIN gl g ON g.trace_id = s0.trace_id AND g.step_id = s0.step_id
    QUALIFY row_number() OVER (PARTITION BY g.trace_id, g.step_id, g.event_id
                               ORDER BY CASE WHEN (c.mode = 'PIECEWISE') = (s0.n_launches <> 1) THEN 0 ELSE 1 END,
                                        c.file_name DESC, c.trace_id DESC) = 1
), graph_launches AS (   -- graph_index as _graph_replay_events numbers the launches
    SELECT trace_id, event_id, row_number() OVER (PARTITION BY trace_id ORDER BY event_id) AS graph_index
    FROM launches WHERE launch_kind = 'graph' AND correlation IS NOT NULL
)
SELECT c.trace_id, c.event_id AS graph_launch_event_id, l.graph_index, c.cap_id AS capture_trace_id,
       CASE WHEN c.n_windows = 1 THEN 1 ELSE c.place END AS window_index
FROM chosen c JOIN graph_launches l ON l.trace_id = c.trace_id AND l.event_id = c.event_id
WHERE c.n_windows = 1 OR c.n_windows = c.n_launches
QUALIFY row_number() OVER (PARTITION BY c.trace_id, c.event_id ORDER BY c.step_ts_ns, c.step_id) = 1;

-- graph_capture_links: one row per GPU event of a graph replay matched to the launch call that recorded it
-- in a capture trace of the same dataset (TraceLens's capture merge, docs/peers.md / its inference report).
--   trace_id, event_id           the GPU event replayed by the graph (kernel, gpu_memcpy, gpu_memset)
--   graph_launch_event_id        the cudaGraphLaunch / hipGraphLaunch call that owns it
--   graph_index                  1-based rank of that graph launch among the trace's graph launches
--   ordinal                      1-based rank of the GPU event among the launch's GPU events (by ts)
--   capture_trace_id             the capture trace
--   window_index                 the capture window (1-based, by event_id: from the end of *StreamBeginCapture
--                                to the start of *StreamEndCapture) the launch replays
--   capture_root_event_id        the longest CPU event that starts inside that window
--   capture_root_ts_ns           its start, ns (capture trace clock)
--   capture_launch_event_id      the ordinal-th launch call (runtime/driver, name containing 'launch' or
--                                'memcpy') inside the capture root, on its thread, by ts
--   capture_launch_name          its name
--   names_match                  the GPU event's name equals the capture call's args.kernel (NULL when the
--                                call has no args.kernel)
-- Pairing rule: _graph_capture_pairs (TraceLens's), for the launches whose number of GPU events equals the
-- number of launch calls inside the window's capture root. (The native attribution, tree/graph_twins, places
-- each graph launch on its own instead.)
-- @materialize tree
CREATE OR REPLACE VIEW graph_capture_links AS
WITH graph_events AS MATERIALIZED (
    SELECT * FROM _graph_replay_events
), capture_calls AS MATERIALIZED (
    SELECT * FROM _graph_capture_calls
), pairs AS MATERIALIZED (
    SELECT p.* FROM _graph_capture_pairs p
    JOIN (SELECT DISTINCT trace_id, graph_index, n_events FROM graph_events) g
      ON g.trace_id = p.trace_id AND g.graph_index = p.graph_index
    JOIN (SELECT DISTINCT trace_id, graph_index, n_calls FROM capture_calls) c
      ON c.trace_id = p.capture_trace_id AND c.graph_index = p.window_index
    WHERE g.n_events = c.n_calls
)
SELECT g.trace_id, g.event_id, g.graph_launch_event_id, g.graph_index, g.ordinal,
       p.capture_trace_id, p.window_index, c.root_event_id AS capture_root_event_id,
       c.root_ts_ns AS capture_root_ts_ns, c.event_id AS capture_launch_event_id,
       c.name AS capture_launch_name,
       CASE WHEN c.kernel_name IS NOT NULL THEN g.name = c.kernel_name END AS names_match
FROM pairs p
JOIN graph_events g ON g.trace_id = p.trace_id AND g.graph_index = p.graph_index
JOIN capture_calls c ON c.trace_id = p.capture_trace_id AND c.graph_index = p.window_index
 AND c.ordinal = g.ordinal;
