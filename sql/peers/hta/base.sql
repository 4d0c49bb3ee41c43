-- peers/hta/base — Holistic Trace Analysis (HTA 0.5.0) style: the peer's definitions, reproduced so that its numbers can
-- be checked against ours (`tracesql report --style hta`). Facts about HTA's definitions are credited to
-- HTA (facebookresearch/HolisticTraceAnalysis, MIT licence); see docs/peers.md. The code is ours.
--
-- HTA works in float64 µs: it parses ts/dur with a JSON float parser, subtracts the earliest ts of the
-- trace, and computes ends as ts + dur. The views below do the same arithmetic (_us_f64) so that the
-- results agree with HTA to float precision. HTA's timestamp rounding (ceil start, floor end) is off
-- here, as in the shared references (HTA_DISABLE_NS_ROUNDING=1).
-- HTA's kernel type of a GPU event is its category under the `hta` rules (sql/peers/hta/rules/hta.csv).
--
-- @requires peers/float_us lib/intervals categories/kernels categories/rules

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

-- _hta_stream_events: CPU-side duration events whose args carry a `stream` (e.g. the Triton launcher
-- cpu_ops `triton_poi_*` / `triton_per_*` / `triton_red_*` of a torch.compile run). HTA reads the stream
-- column of every event from args.stream (-1 when absent; normalize_gpu_stream_numbers in hta/utils/utils.py
-- turns it into an int, -1 when int() fails) and takes any row with stream != -1 as a GPU event
-- (BreakdownAnalysis.get_temporal_breakdown / get_gpu_kernel_breakdown, CommunicationAnalysis.
-- get_comm_comp_overlap: trace_df["stream"].ne(-1)), so these rows count as GPU work there, typed by name
-- like kernels (get_kernel_type in hta/utils/utils.py, first match of the `hta` kernel rules without an
-- event_cat). Under the last-step filter (Trace._filter_irrelevant_gpu_kernels with GPUKernelFilter /
-- CPUOperatorFilter in hta/common/trace_filter.py) such a row is a GPU row only when it also has a
-- correlation >= 0; without one it is a CPU row, kept when it starts before the last step.
CREATE OR REPLACE VIEW _hta_stream_events AS
WITH e AS (
    SELECT trace_id, event_id, cat, name, ts_ns, dur_ns, correlation,
           TRY_CAST(json_extract_string(args, '$.stream') AS BIGINT) AS stream
    FROM events
    WHERE ph = 'X' AND dur_ns IS NOT NULL AND ts_ns IS NOT NULL AND args IS NOT NULL
      AND json_extract(args, '$.stream') IS NOT NULL
), names AS (SELECT DISTINCT name FROM e), typed AS (
    SELECT n.name,
           (SELECT r.category FROM category_rules r
            WHERE r.ruleset = 'hta' AND r.applies_to = 'kernel' AND r.event_cat IS NULL
              AND regexp_matches(n.name, r.pattern)
            ORDER BY _rule_precedence(r.priority, r.source, r.file, r.line_no) LIMIT 1) AS kernel_type
    FROM names n
)
SELECT e.*, t.kernel_type FROM e JOIN typed t USING (name)
WHERE e.stream IS NOT NULL AND e.stream <> -1;

-- _hta_gpu: HTA's GPU events (rows with a stream: kernels, memcpy, memset, sync, and the CPU-side events of
-- _hta_stream_events), float64 µs relative to the trace origin, with HTA's kernel type and the start of the
-- launching call (ts_runtime_us; for work whose launch is not in the trace, the ts of the file's first
-- event, as HTA does). cat is the event's own category (cpu_op for a Triton launcher), so the idle time
-- breakdown, which keeps only kernel / memcpy / memset categories, leaves the CPU-side rows out as HTA does.
-- @materialize report-hta
CREATE OR REPLACE VIEW _hta_gpu AS
SELECT s.trace_id, h.rank, s.event_id, s.cat, s.name, s.stream, s.correlation,
       coalesce(s.kernel_type, 'OTHER') AS kernel_type,
       _us_f64(s.ts_ns) - h.min_ts_us AS ts_us, _us_f64(s.dur_ns) AS dur_us,
       (_us_f64(s.ts_ns) - h.min_ts_us) + _us_f64(s.dur_ns) AS end_us,
       NULL::DOUBLE AS ts_runtime_us, NULL::VARCHAR AS runtime_name, NULL::DOUBLE AS runtime_dur_us
FROM _hta_stream_events s
JOIN _hta_trace h USING (trace_id)
LEFT JOIN _hta_cpu c ON s.correlation IS NOT NULL AND s.correlation >= 0
                    AND c.trace_id = s.trace_id AND c.correlation = s.correlation
WHERE h.cut_ts_ns IS NULL
   OR (CASE WHEN s.correlation IS NOT NULL AND s.correlation >= 0 THEN c.correlation IS NOT NULL
            ELSE s.ts_ns < h.cut_ts_ns END)
UNION ALL
SELECT k.trace_id, h.rank, k.event_id, k.cat, k.name, k.stream, k.correlation,
       coalesce(kt.kernel_category, 'OTHER') AS kernel_type,
       _us_f64(k.ts_ns) - h.min_ts_us AS ts_us, _us_f64(k.dur_ns) AS dur_us,
       (_us_f64(k.ts_ns) - h.min_ts_us) + _us_f64(k.dur_ns) AS end_us,
       CASE WHEN c.correlation IS NOT NULL THEN c.ts_us WHEN k.correlation > 0 THEN h.event0_ts_us END
           AS ts_runtime_us,
       c.name AS runtime_name, c.dur_us AS runtime_dur_us
FROM kernels k
JOIN _hta_trace h USING (trace_id)
LEFT JOIN kernel_name_categories kt ON kt.ruleset = 'hta' AND kt.cat IS NOT DISTINCT FROM k.cat AND kt.name = k.name
LEFT JOIN _hta_cpu c ON c.trace_id = k.trace_id AND c.correlation = k.correlation
WHERE k.stream IS NOT NULL AND k.stream >= 0 AND k.ts_ns IS NOT NULL AND k.dur_ns IS NOT NULL
  AND (h.cut_ts_ns IS NULL OR c.correlation IS NOT NULL);

-- _hta_members: GPU intervals per rank for the unions: set ALL (every GPU event) and one set per kernel type.
CREATE OR REPLACE VIEW _hta_members AS
SELECT trace_id, rank AS grp, 'ALL' AS set_name, ts_us AS s, end_us AS e FROM _hta_gpu
UNION ALL
SELECT trace_id, rank, kernel_type, ts_us, end_us FROM _hta_gpu;

CREATE OR REPLACE VIEW _hta_unions AS SELECT * FROM _interval_union('_hta_members');
