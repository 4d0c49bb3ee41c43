-- peers/hta/trace_diff — HTA's TraceDiff (hta/trace_diff.py, HTA 0.5.0): the op and kernel counts and total
-- durations of two traces, per iteration or over several, compared name by name (`tracesql diff --style hta`).
-- Facts about HTA's definitions are credited to HTA (facebookresearch/HolisticTraceAnalysis, MIT licence); the
-- code is ours.
--
-- TraceDiff reads a trace the way Trace.parse_traces does (hta/common/trace_parser.py, hta/common/trace.py),
-- and nothing more: unlike TraceAnalysis it neither aligns the time origin nor drops the last ProfilerStep, so
-- the rows here are not those of peers/hta/base. HTA's frame of a trace holds every element of traceEvents that
-- has a `dur` and a `cat` (_compress_df drops the rest, and the rows of cat 'Trace'), numbered by its position
-- in traceEvents (its `index`), with `stream` and `correlation` read from args (-1 when absent; the stream
-- turned into an int by normalize_gpu_stream_numbers in hta/utils/utils.py, -1 when that fails). Times are the
-- float64 µs of the file (HTA_DISABLE_NS_ROUNDING=1, as in the shared references).
--
-- @requires peers/float_us

-- _hta_arg_int(args, key): an args field as HTA's frame holds it for the `stream` column: the integer of a
-- number (Python's int() truncates a float), of a string holding a decimal integer as int() reads it (spaces
-- around, a sign, '_' between digits: int(' 7 '), not int('0x0') as in ROCm runtime events' "stream": "0x0"),
-- else -1 (absent, or int() fails).
CREATE OR REPLACE MACRO _hta_arg_int(args, key) AS
    CASE json_type(json_extract(args, '$."' || key || '"'))
         WHEN 'BIGINT' THEN TRY_CAST(json_extract_string(args, '$."' || key || '"') AS BIGINT)
         WHEN 'UBIGINT' THEN TRY_CAST(json_extract_string(args, '$."' || key || '"') AS BIGINT)
         WHEN 'DOUBLE'
             THEN TRY_CAST(trunc(TRY_CAST(json_extract_string(args, '$."' || key || '"') AS DOUBLE)) AS BIGINT)
         WHEN 'VARCHAR' THEN CASE WHEN regexp_matches(json_extract_string(args, '$."' || key || '"'),
                                                      '^\s*[+-]?[0-9]+(_[0-9]+)*\s*$')
             THEN coalesce(TRY_CAST(regexp_replace(json_extract_string(args, '$."' || key || '"'), '[\s_]', '', 'g')
                                    AS BIGINT), -1)
             ELSE -1 END
         ELSE -1 END;

-- _hta_diff_frame: HTA's frame of each trace as TraceDiff selects from it: one row per element of traceEvents
-- with a dur and a cat (not 'Trace'), with HTA's iteration.
--   trace_id; event_id  HTA's index (position in traceEvents); cat, name as written
--   stream       args.stream as an int, -1 when absent; correlation  args.correlation, -1 when absent
--   dur_us       float64 µs as parsed
--   iteration    HTA's add_iteration (hta/common/trace.py): a row with stream < 0 takes the number N of the
--                last row (in file order) named ProfilerStep#N, on any stream, with ts <= row.ts < ts + dur;
--                a row with stream > 0 takes the iteration of the CPU row its correlation links it to
--                (transform_correlation_to_index: the last row of that correlation that is not a GPU row,
--                a GPU row being stream >= 0 and correlation >= 0, or an 'Event Sync' / 'Context Sync'); -1
--                when none, or when that CPU row is row 0 (HTA reads index 0 as "not in the trace"); a row
--                with stream 0 gets none (NULL: HTA leaves it NaN, never selected)
-- @materialize hta-diff
CREATE OR REPLACE VIEW _hta_diff_frame AS
WITH raw AS (
    SELECT trace_id, event_id, cat_raw AS cat, name, ts_ns, dur_ns, args FROM events
    WHERE dur_ns IS NOT NULL AND cat_raw IS NOT NULL
    UNION ALL
    SELECT trace_id, event_id, cat_raw, name, ts_ns, dur_ns, args FROM kernels
    WHERE dur_ns IS NOT NULL AND cat_raw IS NOT NULL
    UNION ALL
    SELECT trace_id, event_id, 'gpu_user_annotation', name, ts_ns, dur_ns, args FROM gpu_user_annotations
    WHERE dur_ns IS NOT NULL
    UNION ALL
    SELECT trace_id, event_id, cat, name, ts_ns, dur_ns, args FROM other_events
    WHERE dur_ns IS NOT NULL AND cat IS NOT NULL
), r AS (
    SELECT trace_id, event_id, cat, name, _us_f64(ts_ns) AS ts_us, _us_f64(dur_ns) AS dur_us,
           _hta_arg_int(args, 'stream') AS stream,
           coalesce(TRY_CAST(json_extract_string(args, '$.correlation') AS BIGINT), -1) AS correlation
    FROM raw WHERE cat <> 'Trace'
), steps AS (
    SELECT trace_id, event_id, ts_us, dur_us,
           TRY_CAST(regexp_extract(name, '^ProfilerStep\s*#\s*(\d+)', 1) AS BIGINT) AS iteration
    FROM r WHERE starts_with(name, 'ProfilerStep') AND regexp_matches(name, '^ProfilerStep\s*#\s*\d')
), cpu_iter AS (
    SELECT r.trace_id, r.event_id, arg_max(s.iteration, s.event_id) AS iteration
    FROM r JOIN steps s ON s.trace_id = r.trace_id AND s.ts_us <= r.ts_us AND r.ts_us < s.ts_us + s.dur_us
    WHERE r.stream < 0
    GROUP BY r.trace_id, r.event_id
), cpu AS (
    SELECT r.trace_id, r.event_id, coalesce(c.iteration, -1) AS iteration
    FROM r LEFT JOIN cpu_iter c USING (trace_id, event_id)
    WHERE r.stream < 0
), launcher AS (
    SELECT trace_id, correlation, max(event_id) AS cpu_event_id
    FROM r
    WHERE correlation <> -1 AND NOT ((stream >= 0 AND correlation >= 0) OR name IN ('Event Sync', 'Context Sync'))
    GROUP BY trace_id, correlation
)
SELECT r.trace_id, r.event_id, r.cat, r.name, r.stream, r.correlation, r.dur_us,
       CASE WHEN r.stream < 0 THEN c.iteration
            WHEN r.stream > 0 THEN
                CASE WHEN r.correlation <> -1 AND ((r.stream >= 0 AND r.correlation >= 0)
                                                   OR r.name IN ('Event Sync', 'Context Sync'))
                          AND l.cpu_event_id > 0
                     THEN coalesce(lc.iteration, -1) ELSE -1 END
       END AS iteration
FROM r
LEFT JOIN cpu c ON r.stream < 0 AND c.trace_id = r.trace_id AND c.event_id = r.event_id
LEFT JOIN launcher l ON r.stream > 0 AND l.trace_id = r.trace_id AND l.correlation = r.correlation
LEFT JOIN cpu lc ON lc.trace_id = l.trace_id AND lc.event_id = l.cpu_event_id;

-- _hta_int_dur(one_trace): whether HTA's frame of the trace one_trace holds dur as int64 rather than float64:
-- pandas reads the column as integers only when every element of traceEvents has a dur and each is a whole
-- number (an element without one, such as a metadata event, makes it NaN and the column float). Read here as:
-- every element read by the ingest has a dur, in whole µs (a dur written as 5.0 reads as whole here, float in
-- HTA). Only the text of HTA's numbers depends on it (4 or 4.0), not their values.
CREATE OR REPLACE MACRO _hta_int_dur(one_trace) AS (
    WITH d AS (
        SELECT dur_ns FROM events WHERE trace_id = one_trace AND dur_ns IS NOT NULL
        UNION ALL SELECT dur_ns FROM kernels WHERE trace_id = one_trace AND dur_ns IS NOT NULL
        UNION ALL SELECT dur_ns FROM gpu_user_annotations WHERE trace_id = one_trace AND dur_ns IS NOT NULL
        UNION ALL SELECT dur_ns FROM other_events WHERE trace_id = one_trace AND dur_ns IS NOT NULL
    )
    SELECT count(*) = (SELECT events_read FROM traces WHERE trace_id = one_trace) AND bool_and(dur_ns % 1000 = 0)
    FROM d);

-- hta_trace_iterations(one_trace): one row per iteration of the trace one_trace as LabeledTrace.iterations() lists them
-- (the N of every ProfilerStep#N name of HTA's frame).
--   iteration   N
CREATE OR REPLACE MACRO hta_trace_iterations(one_trace) AS TABLE
SELECT DISTINCT TRY_CAST(regexp_extract(name, '^ProfilerStep\s*#\s*(\d+)', 1) AS BIGINT) AS iteration
FROM _hta_diff_frame
WHERE trace_id = one_trace AND starts_with(name, 'ProfilerStep') AND regexp_matches(name, '^ProfilerStep\s*#\s*\d')
ORDER BY iteration;

-- _hta_diff_ops(one_trace, iters, device_type): LabeledTrace.extract_ops: the rows of _hta_diff_frame of the
-- trace one_trace in the iterations iters (a list; NULL: the first iteration, HTA's default) on the side
-- device_type: 'CPU' (stream = -1), 'GPU' (stream <> -1) or 'ALL'.
CREATE OR REPLACE MACRO _hta_diff_ops(one_trace, iters, device_type) AS TABLE
SELECT * FROM _hta_diff_frame
WHERE trace_id = one_trace
  AND (CASE WHEN iters IS NULL THEN iteration = (SELECT min(iteration) FROM hta_trace_iterations(one_trace))
            ELSE list_contains(iters, iteration) END)
  AND (CASE device_type WHEN 'CPU' THEN stream = -1 WHEN 'GPU' THEN stream <> -1 ELSE true END);

-- _hta_shorten_name(name): HTA's shorten_name (hta/utils/utils.py): a name starting with Memcpy, Memset or dma,
-- or without '<' and '(', is kept; otherwise, with every '->' removed, the characters are pushed on a stack
-- where a '>' pops back to (and including) the last '<' and a ')' back to the last '(' (the whole stack when
-- there is none), and the result is what follows the last space of what remains.
CREATE OR REPLACE MACRO _hta_shorten_name(name) AS
    CASE WHEN name IS NULL OR regexp_matches(name, '^(Memcpy|Memset|dma)')
              OR (strpos(name, '<') = 0 AND strpos(name, '(') = 0) THEN name
         ELSE (WITH st(s) AS (
                   SELECT list_reduce(string_split(replace(name, '->', ''), ''),
                       lambda acc, ch: CASE ch
                           WHEN '>' THEN CASE WHEN strpos(acc, '<') = 0 THEN ''
                                              ELSE left(acc, length(acc) - strpos(reverse(acc), '<')) END
                           WHEN ')' THEN CASE WHEN strpos(acc, '(') = 0 THEN ''
                                              ELSE left(acc, length(acc) - strpos(reverse(acc), '(')) END
                           ELSE acc || ch END, ''))
               SELECT CASE WHEN strpos(s, ' ') = 0 THEN s ELSE right(s, strpos(reverse(s), ' ') - 1) END FROM st)
    END;

-- hta_trace_ops_summary(one_trace, iters, device_type): LabeledTrace.get_ops_summary(extract_ops(...)) of the
-- trace one_trace: one row per (cat, name) of the selected rows (iters, device_type as in _hta_diff_ops; iters
-- NULL: the first iteration). HTA orders the rows by its symbol ids, which follow Python's string hash: here
-- by cat, name.
--   cat, name       as written;  short_name  HTA's shorten_name of name
--   counts          rows;  total_duration  sum of dur, µs (float64; pandas' groupby sum: compensated, in frame order)
CREATE OR REPLACE MACRO hta_trace_ops_summary(one_trace, iters, device_type) AS TABLE
SELECT cat, name, _hta_shorten_name(name) AS short_name, count(*) AS counts,
       _pd_sum(list(dur_us ORDER BY event_id)) AS total_duration
FROM _hta_diff_ops(one_trace, iters, device_type)
WHERE name IS NOT NULL
GROUP BY cat, name
ORDER BY cat, name;

-- _hta_compare_rows(control, test, control_iters, test_iters, device_type, use_short_name): the rows of
-- hta_compare_traces with pos, their position in HTA's order: the control's names in sorted order, then the
-- names only the test has, sorted (pandas' outer concat of two sorted group indexes keeps the first index's
-- order and appends the second's new labels).
CREATE OR REPLACE MACRO _hta_compare_rows(control, test, control_iters, test_iters, device_type, use_short_name)
AS TABLE
WITH c AS (
    SELECT CASE WHEN use_short_name THEN short_name ELSE name END AS name,
           sum(counts)::DOUBLE AS counts, fsum(total_duration) AS total_duration
    FROM hta_trace_ops_summary(control, control_iters, device_type) GROUP BY ALL
), t AS (
    SELECT CASE WHEN use_short_name THEN short_name ELSE name END AS name,
           sum(counts)::DOUBLE AS counts, fsum(total_duration) AS total_duration
    FROM hta_trace_ops_summary(test, test_iters, device_type) GROUP BY ALL
), j AS (
    SELECT coalesce(c.name, t.name) AS name, c.name IS NULL AS test_only,
           coalesce(c.counts, 0) AS cc, coalesce(c.total_duration, 0) AS cd,
           coalesce(t.counts, 0) AS tc, coalesce(t.total_duration, 0) AS td
    FROM c FULL OUTER JOIN t ON c.name = t.name
)
SELECT row_number() OVER (ORDER BY test_only, name) AS pos, name,
       cc AS Control_counts, cd AS Control_total_duration, tc AS Test_counts, td AS Test_total_duration,
       tc - cc AS diff_counts, td - cd AS diff_duration,
       CASE WHEN tc - cc > 0 THEN '+' WHEN tc - cc < 0 THEN '-' ELSE '=' END AS counts_change_categories
FROM j;

-- hta_compare_traces(control, test, control_iters, test_iters, device_type, use_short_name): TraceDiff.compare_traces
-- of the traces control and test: one row per name (HTA's short name when use_short_name) of either side's
-- selection (iters as in _hta_diff_ops: a list of iteration numbers, NULL for the first iteration; device_type
-- 'ALL', 'CPU' or 'GPU'), in HTA's order (_hta_compare_rows). The column prefixes are HTA's labels for traces
-- given as directories.
--   name                         the op or kernel name (the short name when use_short_name)
--   Control_counts, Test_counts  rows of that name (0 when the side has none)
--   Control_total_duration, Test_total_duration  their summed dur, µs (0 when none)
--   diff_counts                  Test_counts - Control_counts;  diff_duration  the same for the durations, µs
--   counts_change_categories     '+', '-' or '=' from the sign of diff_counts
CREATE OR REPLACE MACRO hta_compare_traces(control, test, control_iters, test_iters, device_type, use_short_name)
AS TABLE
SELECT * EXCLUDE (pos)
FROM _hta_compare_rows(control, test, control_iters, test_iters, device_type, use_short_name)
ORDER BY pos;

-- hta_ops_diff(control, test, control_iters, test_iters, device_type): TraceDiff.ops_diff: the names of
-- hta_compare_traces (full names) sorted into HTA's five lists, one row per (change, name), the lists in HTA's
-- order (added, deleted, increased, decreased, unchanged), each in the order of hta_compare_traces.
--   change   added (control 0, test > 0), deleted (control > 0, test 0), increased (control > 0 and more in
--            test), decreased (test > 0 and fewer in test) or unchanged (test > 0, same count); counts only:
--            a duration change with equal counts is unchanged
--   name     the op or kernel name
CREATE OR REPLACE MACRO hta_ops_diff(control, test, control_iters, test_iters, device_type) AS TABLE
WITH k AS (
    SELECT pos, name,
           CASE WHEN Control_counts = 0 AND Test_counts > 0 THEN 1
                WHEN Control_counts > 0 AND Test_counts = 0 THEN 2
                WHEN Control_counts > 0 AND diff_counts > 0 THEN 3
                WHEN Test_counts > 0 AND diff_counts < 0 THEN 4
                WHEN Test_counts > 0 AND diff_counts = 0 THEN 5 END AS kind
    FROM _hta_compare_rows(control, test, control_iters, test_iters, device_type, false)
)
SELECT ['added', 'deleted', 'increased', 'decreased', 'unchanged'][kind] AS change, name
FROM k WHERE kind IS NOT NULL
ORDER BY kind, pos;
