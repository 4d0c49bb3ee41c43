-- categories/kernels — every GPU event gets a category from the rule table (categories/rules).
--
-- Names are categorised once per distinct name, not per event: the distinct names are joined into one
-- newline-separated text and each rule's pattern is run once over that text (a rule matches a name when
-- its pattern is found in the name's line), then the winner per (ruleset, name) is joined back to events.
-- This is the same result as regexp_matches(name, pattern) for every (name, rule) pair, computed with one
-- compiled expression per rule instead of one per pair.
--
-- @requires categories/rules

-- The names rules are matched against: `kernel` = distinct GPU event names, `op` = distinct CPU op names, HLO
-- op names (JAX) and launch API names (an op category may fall back to a runtime call such as cudaGraphLaunch),
-- `hlo_op` = distinct HLO op names of GPU events (kernels.hlo_op).
CREATE OR REPLACE VIEW _category_subjects AS
SELECT DISTINCT 'kernel' AS subject, name FROM kernels WHERE name IS NOT NULL
UNION ALL
SELECT 'op', name FROM (
    SELECT name FROM events WHERE cat = 'cpu_op' AND name IS NOT NULL
    UNION
    SELECT name FROM launches WHERE name IS NOT NULL
    UNION
    SELECT hlo_op FROM kernels WHERE hlo_op IS NOT NULL
)
UNION ALL
SELECT DISTINCT 'hlo_op', hlo_op FROM kernels WHERE hlo_op IS NOT NULL;

-- (rule, name) pairs where the rule's pattern is found in the name. name_key is the name with line breaks
-- replaced by spaces (the key used in the joined text).
CREATE OR REPLACE VIEW _category_rule_matches AS
WITH txt AS (
    SELECT subject, string_agg(replace(name, chr(10), ' '), chr(10)) AS names_text
    FROM _category_subjects
    GROUP BY subject
), r AS (
    SELECT *, CASE applies_to WHEN 'op' THEN 'op' WHEN 'kernel_hlo_op' THEN 'hlo_op' ELSE 'kernel' END AS subject
    FROM category_rules
)
SELECT r.ruleset, r.applies_to, r.event_cat, r.category, r.subcategory, r.class, r.pattern, r.priority, r.source, r.file,
       r.line_no,
       unnest(regexp_extract_all(txt.names_text, '(?m)^[^\n]*(?:' || r.pattern || ')[^\n]*$')) AS name_key
FROM r JOIN txt USING (subject);

-- kernel_name_categories: one row per ruleset and distinct (cat, name) of GPU events in the dataset.
--   ruleset             rule set (default, tracelens, hta, jax, or a user-defined one)
--   cat                 normalised GPU event category (kernel, gpu_memcpy, gpu_memset, cuda_sync)
--   name                GPU event name
--   kernel_category     category of the winning rule; `other` when no rule of the ruleset matches
--   kernel_subcategory  subcategory of the winning rule (NULL when none)
--   activity_class      class of the winning rule (compute, comm, memcpy, memset, sync; see category_rules):
--                       how the timeline, gaps and kernel summary count the event; compute when no rule matched
--   matched             whether a rule matched
--   rule_pattern        pattern of the winning rule
--   rule_priority       its priority
--   rule_source         shipped | user
--   rule_file           file it came from
--   rule_line_no        its line in that file
CREATE OR REPLACE VIEW kernel_name_categories AS
WITH names AS (
    SELECT DISTINCT cat, name FROM kernels WHERE name IS NOT NULL
), rulesets AS (
    SELECT DISTINCT ruleset FROM category_rules WHERE applies_to = 'kernel'
), best AS (
    SELECT m.ruleset, n.cat, n.name, m.category, m.subcategory, m.class, m.pattern, m.priority, m.source, m.file,
           m.line_no
    FROM names n
    JOIN _category_rule_matches m
      ON m.applies_to = 'kernel'
     AND m.name_key = replace(n.name, chr(10), ' ')
     AND (m.event_cat IS NULL OR m.event_cat = n.cat)
    QUALIFY row_number() OVER (PARTITION BY m.ruleset, n.cat, n.name
                               ORDER BY _rule_precedence(m.priority, m.source, m.file, m.line_no)) = 1
)
SELECT rs.ruleset, n.cat, n.name,
       coalesce(b.category, 'other') AS kernel_category,
       b.subcategory AS kernel_subcategory,
       coalesce(b.class, 'compute') AS activity_class,
       b.category IS NOT NULL AS matched,
       b.pattern AS rule_pattern,
       b.priority AS rule_priority,
       b.source AS rule_source,
       b.file AS rule_file,
       b.line_no AS rule_line_no
FROM names n
CROSS JOIN rulesets rs
LEFT JOIN best b
  ON b.ruleset = rs.ruleset AND b.cat IS NOT DISTINCT FROM n.cat AND b.name = n.name;

-- Helper: the winning kernel_hlo_op rule per ruleset and HLO op name (rules of that kind only).
CREATE OR REPLACE VIEW _hlo_op_rule_winners AS
SELECT ruleset, event_cat, name_key AS hlo_op, category, subcategory, priority, source, file, line_no
FROM _category_rule_matches WHERE applies_to = 'kernel_hlo_op'
QUALIFY row_number() OVER (PARTITION BY ruleset, event_cat, name_key
                           ORDER BY _rule_precedence(priority, source, file, line_no)) = 1;

-- gpu_event_categories: one row per GPU event (kernels row) and ruleset.
--   trace_id, event_id  the GPU event (join key of kernels)
--   ruleset             rule set
--   kernel_category     its category under that ruleset (`other` when no rule matched): the winning rule of
--                       its name (kernel_name_categories), or, for an event with an HLO op (JAX), the
--                       kernel_hlo_op rule of that op when it precedes it (categories/rules)
--   kernel_subcategory  its subcategory (NULL when none)
CREATE OR REPLACE VIEW gpu_event_categories AS
WITH h AS MATERIALIZED (SELECT * FROM _hlo_op_rule_winners),
e AS (
    SELECT k.trace_id, k.event_id, c.ruleset, c.kernel_category, c.kernel_subcategory, h.category AS hlo_category,
           h.subcategory AS hlo_subcategory,
           h.category IS NOT NULL AND (NOT c.matched OR _rule_precedence(h.priority, h.source, h.file, h.line_no)
                                       < _rule_precedence(c.rule_priority, c.rule_source, c.rule_file, c.rule_line_no))
               AS by_hlo_op
    FROM kernels k
    JOIN kernel_name_categories c ON c.cat IS NOT DISTINCT FROM k.cat AND c.name = k.name
    LEFT JOIN h ON h.ruleset = c.ruleset AND h.hlo_op = replace(k.hlo_op, chr(10), ' ')
     AND (h.event_cat IS NULL OR h.event_cat = k.cat)
)
SELECT trace_id, event_id, ruleset,
       CASE WHEN by_hlo_op THEN hlo_category ELSE kernel_category END AS kernel_category,
       CASE WHEN by_hlo_op THEN hlo_subcategory ELSE kernel_subcategory END AS kernel_subcategory
FROM e;

-- kernels_categorized: every row of `kernels` (all its columns) plus its category under the `default` rules.
--   kernel_category     default-ruleset category: GEMM, attention_fwd, attention_bwd, conv, elementwise,
--                       reduce, softmax, norm, pooling, copy, memset, communication, moe, sort_topk,
--                       embedding_index, rng, quantize, optimizer, fft, ssm, sync, triton (a Triton kernel whose
--                       kind its name does not say), or other (no rule matched)
--   kernel_subcategory  finer label (e.g. GEMM/nvjet, communication/all_reduce, copy/memcpy_htod)
CREATE OR REPLACE VIEW kernels_categorized AS
SELECT k.*, c.kernel_category, c.kernel_subcategory
FROM kernels k
LEFT JOIN kernel_name_categories c
  ON c.ruleset = 'default' AND c.cat IS NOT DISTINCT FROM k.cat AND c.name = k.name;

-- kernel_category_summary: one row per (ruleset, trace, category): where the trace's GPU time goes.
-- GPU time is Σdur over every GPU event of the trace (kernels table: kernels, memcpy, memset, sync records),
-- summed, not unioned: concurrent streams count twice.
--   ruleset             rule set
--   trace_id            trace
--   kernel_category     category
--   count               GPU events in the category
--   total_time_ms       Σ dur of those events, ms
--   avg_time_us         mean duration, µs
--   pct                 total_time_ms as a percentage of the trace's Σ dur over all GPU events
--   cumulative_pct      running sum of pct over the categories of the trace by descending time
--   row_order           the row's position when the trace's categories are ordered by time (1 = the most;
--                       ties by category name): an order of rows, not a rank (ties get different numbers)
CREATE OR REPLACE VIEW kernel_category_summary AS
WITH g AS (
    SELECT e.ruleset, k.trace_id, e.kernel_category, count(*) AS count, sum(k.dur_ns) AS total_ns
    FROM kernels k
    JOIN gpu_event_categories e USING (trace_id, event_id)
    GROUP BY ALL
), t AS (
    SELECT *, sum(total_ns) OVER (PARTITION BY ruleset, trace_id) AS trace_ns,
           row_number() OVER (PARTITION BY ruleset, trace_id ORDER BY total_ns DESC NULLS LAST, kernel_category)
               AS row_order
    FROM g
)
SELECT ruleset, trace_id, kernel_category, count,
       coalesce(total_ns, 0) / 1e6 AS total_time_ms,
       coalesce(total_ns, 0) / 1e3 / count AS avg_time_us,
       100.0 * coalesce(total_ns, 0) / nullif(trace_ns, 0) AS pct,
       100.0 * sum(coalesce(total_ns, 0)) OVER (PARTITION BY ruleset, trace_id ORDER BY row_order
                                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
             / nullif(trace_ns, 0) AS cumulative_pct,
       row_order
FROM t;

-- kernel_category_summary_all: one row per (ruleset, category) over every trace of the dataset; same
-- columns and definitions as kernel_category_summary without trace_id (pct of Σ dur over all GPU events of
-- all traces).
CREATE OR REPLACE VIEW kernel_category_summary_all AS
WITH g AS (
    SELECT e.ruleset, e.kernel_category, count(*) AS count, sum(k.dur_ns) AS total_ns
    FROM kernels k
    JOIN gpu_event_categories e USING (trace_id, event_id)
    GROUP BY ALL
), t AS (
    SELECT *, sum(total_ns) OVER (PARTITION BY ruleset) AS all_ns,
           row_number() OVER (PARTITION BY ruleset ORDER BY total_ns DESC NULLS LAST, kernel_category) AS row_order
    FROM g
)
SELECT ruleset, kernel_category, count,
       coalesce(total_ns, 0) / 1e6 AS total_time_ms,
       coalesce(total_ns, 0) / 1e3 / count AS avg_time_us,
       100.0 * coalesce(total_ns, 0) / nullif(all_ns, 0) AS pct,
       100.0 * sum(coalesce(total_ns, 0)) OVER (PARTITION BY ruleset ORDER BY row_order
                                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
             / nullif(all_ns, 0) AS cumulative_pct,
       row_order
FROM t;

-- kernel_subcategory_summary: one row per (ruleset, trace, category, subcategory).
--   count, total_time_ms, avg_time_us   as in kernel_category_summary, for the subcategory
--   pct_of_category                     share of the category's Σ dur
--   pct                                 share of the trace's Σ dur over all GPU events
CREATE OR REPLACE VIEW kernel_subcategory_summary AS
WITH g AS (
    SELECT e.ruleset, k.trace_id, e.kernel_category, e.kernel_subcategory, count(*) AS count,
           coalesce(sum(k.dur_ns), 0) AS total_ns
    FROM kernels k
    JOIN gpu_event_categories e USING (trace_id, event_id)
    GROUP BY ALL
)
SELECT ruleset, trace_id, kernel_category, kernel_subcategory, count,
       total_ns / 1e6 AS total_time_ms,
       total_ns / 1e3 / count AS avg_time_us,
       100.0 * total_ns / nullif(sum(total_ns) OVER (PARTITION BY ruleset, trace_id, kernel_category), 0)
           AS pct_of_category,
       100.0 * total_ns / nullif(sum(total_ns) OVER (PARTITION BY ruleset, trace_id), 0) AS pct
FROM g;

-- kernel_category_by_device: one row per (trace, device, category) under the default rules.
--   device              GPU index (kernels.device; NULL when the trace does not say)
--   count               GPU events
--   total_time_ms       Σ dur, ms
--   pct_of_device_time  share of the device's Σ dur over all its GPU events
-- @output categories-by 2 device ORDER BY trace_id, device, total_time_ms DESC, kernel_category
CREATE OR REPLACE VIEW kernel_category_by_device AS
WITH g AS (
    SELECT trace_id, device, kernel_category, count(*) AS count, coalesce(sum(dur_ns), 0) AS total_ns
    FROM kernels_categorized
    GROUP BY ALL
)
SELECT trace_id, device, kernel_category, count, total_ns / 1e6 AS total_time_ms,
       100.0 * total_ns / nullif(sum(total_ns) OVER (PARTITION BY trace_id, device), 0) AS pct_of_device_time
FROM g;

-- kernel_category_by_stream: one row per (trace, device, stream, category) under the default rules.
--   device, stream      where the events ran (kernels.device, kernels.stream)
--   count               GPU events
--   total_time_ms       Σ dur, ms
--   pct_of_stream_time  share of the stream's Σ dur over all its GPU events
-- @output categories-by 1 stream ORDER BY trace_id, device, stream, total_time_ms DESC, kernel_category
CREATE OR REPLACE VIEW kernel_category_by_stream AS
WITH g AS (
    SELECT trace_id, device, stream, kernel_category, count(*) AS count, coalesce(sum(dur_ns), 0) AS total_ns
    FROM kernels_categorized
    GROUP BY ALL
)
SELECT trace_id, device, stream, kernel_category, count, total_ns / 1e6 AS total_time_ms,
       100.0 * total_ns / nullif(sum(total_ns) OVER (PARTITION BY trace_id, device, stream), 0)
           AS pct_of_stream_time
FROM g;

-- kernel_names_unmatched: one row per ruleset and GPU event name that no rule of the ruleset matches
-- (category `other`), over all traces; the list to read when writing new rules.
--   ruleset           rule set
--   cat               normalised GPU event category
--   name              GPU event name
--   count             events with this name
--   total_time_ms     Σ dur, ms
--   pct_of_gpu_time   share of Σ dur over all GPU events of all traces
--   traces            number of traces it occurs in
CREATE OR REPLACE VIEW kernel_names_unmatched AS
WITH g AS (
    SELECT c.ruleset, k.cat, k.name, count(*) AS count, coalesce(sum(k.dur_ns), 0) AS total_ns,
           count(DISTINCT k.trace_id) AS traces
    FROM kernels k
    JOIN kernel_name_categories c ON c.cat IS NOT DISTINCT FROM k.cat AND c.name = k.name
    WHERE NOT c.matched
    GROUP BY ALL
)
SELECT ruleset, cat, name, count, total_ns / 1e6 AS total_time_ms,
       100.0 * total_ns / nullif((SELECT sum(dur_ns) FROM kernels), 0) AS pct_of_gpu_time,
       traces
FROM g;

-- kernel_names_unmatched_by_trace: as kernel_names_unmatched, one row per ruleset, trace and name.
--   ruleset, trace_id, cat, name   the unmatched name in one trace
--   count                          events with this name in the trace
--   total_time_ms                  Σ dur, ms
--   pct_of_trace_gpu_time          share of the trace's Σ dur over all its GPU events
CREATE OR REPLACE VIEW kernel_names_unmatched_by_trace AS
WITH g AS (
    SELECT c.ruleset, k.trace_id, k.cat, k.name, count(*) AS count, coalesce(sum(k.dur_ns), 0) AS total_ns
    FROM kernels k
    JOIN kernel_name_categories c ON c.cat IS NOT DISTINCT FROM k.cat AND c.name = k.name
    WHERE NOT c.matched
    GROUP BY ALL
), t AS (
    SELECT trace_id, sum(dur_ns) AS trace_ns FROM kernels GROUP BY trace_id
)
SELECT g.ruleset, g.trace_id, g.cat, g.name, g.count, g.total_ns / 1e6 AS total_time_ms,
       100.0 * g.total_ns / nullif(t.trace_ns, 0) AS pct_of_trace_gpu_time
FROM g JOIN t USING (trace_id);

-- kernel_subcategory_summary_all: as kernel_subcategory_summary over every trace of the dataset (no
-- trace_id; pct of Σ dur over all GPU events of all traces).
CREATE OR REPLACE VIEW kernel_subcategory_summary_all AS
WITH g AS (
    SELECT e.ruleset, e.kernel_category, e.kernel_subcategory, count(*) AS count,
           coalesce(sum(k.dur_ns), 0) AS total_ns
    FROM kernels k
    JOIN gpu_event_categories e USING (trace_id, event_id)
    GROUP BY ALL
)
SELECT ruleset, kernel_category, kernel_subcategory, count,
       total_ns / 1e6 AS total_time_ms,
       total_ns / 1e3 / count AS avg_time_us,
       100.0 * total_ns / nullif(sum(total_ns) OVER (PARTITION BY ruleset, kernel_category), 0) AS pct_of_category,
       100.0 * total_ns / nullif(sum(total_ns) OVER (PARTITION BY ruleset), 0) AS pct
FROM g;
