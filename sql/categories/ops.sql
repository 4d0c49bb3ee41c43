-- categories/ops — op categories and kernel categories per parent op (native definitions).
--
-- Parent op of a GPU event (column cpu_op below): its op in gpu_event_attribution (tree/attribution): the
-- innermost cpu_op enclosing the call that launched it, a graph replay's op from its twin trace (or its graph
-- node tag), else its launch site (the innermost named CPU context around the launch); when there is none:
-- `graph` for work launched by a graph launch (cudaGraphLaunch / hipGraphLaunch), else the launch call's name
-- (e.g. cudaLaunchKernel); GPU events without a launch call in the trace (warm-up kernels, GPU-only traces)
-- get `[no launch]`. In the per-parent tables (kernel_category_by_op, kernel_category_by_op_kernel) the GPU
-- events of graph launches are also listed under `graph` (when their own parent is another one): a graph
-- launch's categories, e.g. GEMM 49 %, attention 33 %, beside those of the ops it replays.
--
-- Op category of an op instance (native): the category of the op rule (default ruleset, applies_to = op)
-- that matches the op's name (a cpu_op or an HLO op); when no op rule matches (or the parent is neither), the
-- kernel category
-- with the largest share of the instance's GPU time (Σ dur; ties to the alphabetically first category).
-- Kernel time is Σ dur of the GPU events (not a union): what the op's kernels cost, stream overlap aside.
--
-- @requires categories/kernels tree/attribution

-- op_name_categories: one row per ruleset with op rules and distinct op name (cpu_op names and launch API
-- names of the dataset).
--   ruleset          rule set (default, tracelens, or a user one)
--   name             op name
--   op_category      category of the winning op rule; `other` when no rule matches
--   op_subcategory   subcategory of the winning rule (NULL when none)
--   matched          whether an op rule matched
--   rule_pattern, rule_priority, rule_source, rule_file, rule_line_no   the winning rule
CREATE OR REPLACE VIEW op_name_categories AS
WITH names AS (
    SELECT name FROM _category_subjects WHERE subject = 'op'
), rulesets AS (
    SELECT DISTINCT ruleset FROM category_rules WHERE applies_to = 'op'
), best AS (
    SELECT m.ruleset, n.name, m.category, m.subcategory, m.pattern, m.priority, m.source, m.file, m.line_no
    FROM names n
    JOIN _category_rule_matches m ON m.applies_to = 'op' AND m.name_key = replace(n.name, chr(10), ' ')
    QUALIFY row_number() OVER (PARTITION BY m.ruleset, n.name
                               ORDER BY _rule_precedence(m.priority, m.source, m.file, m.line_no)) = 1
)
SELECT rs.ruleset, n.name,
       coalesce(b.category, 'other') AS op_category,
       b.subcategory AS op_subcategory,
       b.category IS NOT NULL AS matched,
       b.pattern AS rule_pattern,
       b.priority AS rule_priority,
       b.source AS rule_source,
       b.file AS rule_file,
       b.line_no AS rule_line_no
FROM names n
CROSS JOIN rulesets rs
LEFT JOIN best b ON b.ruleset = rs.ruleset AND b.name = n.name;

-- Helper: every GPU event with its parent op (see the top of this file), op instance and default category.
--   op_name         the cpu_op name when the parent is a cpu_op (of the trace or of a twin) or an HLO op (JAX), else
--                   NULL
--   op_instance_id  the cpu_op event when the parent is a cpu_op of the trace, else the launch call for a
--                   launch API parent, else the GPU event itself for `[no launch]` (event ids are unique within
--                   a trace, so the three never collide); for the other parents (a twin's op replayed by one
--                   graph launch, a launch site) a negative number derived from gpu_event_attribution.op_instance
--   in_graph        launched by a graph launch
CREATE OR REPLACE VIEW _gpu_event_parent_op AS
SELECT k.trace_id, k.event_id, k.name, k.cat, k.device, k.stream, k.ts_ns, k.dur_ns,
       k.kernel_category, k.kernel_subcategory,
       a.op_event_id, CASE WHEN a.source IN ('op', 'capture', 'eager', 'hlo op') THEN a.op_name END AS op_name,
       a.launch_event_id, a.launch_name,
       CASE a.source WHEN 'no launch' THEN '[no launch]'
                     WHEN 'launch api' THEN CASE WHEN a.launch_kind = 'graph' THEN 'graph' ELSE a.launch_name END
                     ELSE a.op_name END AS cpu_op,
       CASE a.source WHEN 'op' THEN a.op_event_id WHEN 'launch api' THEN a.launch_event_id
                     WHEN 'no launch' THEN k.event_id
                     ELSE -1 - (hash(a.op_instance) >> 2)::BIGINT END AS op_instance_id,
       a.launch_kind = 'graph' AS in_graph
FROM kernels_categorized k
JOIN gpu_event_attribution a USING (trace_id, event_id);

-- Helper: _gpu_event_parent_op, with the GPU events of graph launches listed a second time under `graph` when
-- their parent is another one (the per-parent tables below).
CREATE OR REPLACE VIEW _gpu_event_parents AS
WITH p AS MATERIALIZED (SELECT * FROM _gpu_event_parent_op)
SELECT * FROM p
UNION ALL
SELECT * REPLACE ('graph' AS cpu_op) FROM p WHERE in_graph AND cpu_op <> 'graph';

-- kernel_category_by_op_kernel: one row per (trace, parent op, kernel category, kernel name).
--   trace_id            trace
--   cpu_op              parent op name (see the top of this file)
--   kernel_category     default-ruleset category of the kernel
--   kernel_name         GPU event name
--   count               GPU events
--   total_time_ms       Σ dur, ms
--   avg_time_us         mean duration, µs
--   pct_of_parent_time  share of the parent op's Σ dur (all its GPU events in the trace)
-- @output categories-by 4 op_kernel ORDER BY trace_id, cpu_op, kernel_category, total_time_ms DESC, kernel_name
CREATE OR REPLACE VIEW kernel_category_by_op_kernel AS
WITH g AS (
    SELECT trace_id, cpu_op, kernel_category, name AS kernel_name, count(*) AS count,
           coalesce(sum(dur_ns), 0) AS total_ns
    FROM _gpu_event_parents
    GROUP BY ALL
)
SELECT trace_id, cpu_op, kernel_category, kernel_name, count,
       total_ns / 1e6 AS total_time_ms,
       total_ns / 1e3 / count AS avg_time_us,
       100.0 * total_ns / nullif(sum(total_ns) OVER (PARTITION BY trace_id, cpu_op), 0) AS pct_of_parent_time
FROM g;

-- kernel_category_by_op: one row per (trace, parent op, kernel category): what kind of GPU work each op
-- launches, e.g. `graph | GEMM | 1 | 0.22 | 48.9` for a graph launch whose GEMM took 48.9 % of its time.
--   trace_id              trace
--   cpu_op                parent op name (see the top of this file)
--   kernel_category       default-ruleset category
--   count                 GPU events
--   total_time_ms         Σ dur, ms
--   pct_of_parent_time    share of the parent op's Σ dur (all its GPU events in the trace)
--   parent_time_ms        the parent op's Σ dur over all its GPU events in the trace, ms
-- @output categories-by 3 op ORDER BY trace_id, parent_time_ms DESC, cpu_op, total_time_ms DESC, kernel_category
CREATE OR REPLACE VIEW kernel_category_by_op AS
WITH g AS (
    SELECT trace_id, cpu_op, kernel_category, count(*) AS count, coalesce(sum(dur_ns), 0) AS total_ns
    FROM _gpu_event_parents
    GROUP BY ALL
)
SELECT trace_id, cpu_op, kernel_category, count,
       total_ns / 1e6 AS total_time_ms,
       100.0 * total_ns / nullif(sum(total_ns) OVER (PARTITION BY trace_id, cpu_op), 0) AS pct_of_parent_time,
       sum(total_ns) OVER (PARTITION BY trace_id, cpu_op) / 1e6 AS parent_time_ms
FROM g;

-- op_instance_categories: one row per op instance that has GPU work (cpu_op event; or graph / launch call
-- without an enclosing cpu_op; or unlinked GPU event), with its native op category.
--   trace_id, op_instance_id   trace and instance (see _gpu_event_parent_op)
--   cpu_op                     parent op name
--   op_category                category (see the top of this file)
--   op_subcategory             subcategory of the op rule; else the subcategory of the longest GPU event of
--                              the dominant kernel category
--   category_source            'op_rule' (an op rule matched the name) or 'kernels' (dominant kernel
--                              category of its GPU events)
--   gpu_events                 GPU events of the instance
--   kernel_time_ns             Σ dur of those events, ns
--   kernel_time_ms             the same in ms
CREATE OR REPLACE VIEW op_instance_categories AS
WITH per_cat AS (
    SELECT trace_id, op_instance_id, any_value(cpu_op) AS cpu_op, any_value(op_name) AS op_name,
           kernel_category, arg_max(kernel_subcategory, dur_ns) AS kernel_subcategory,
           count(*) AS n, coalesce(sum(dur_ns), 0) AS total_ns
    FROM _gpu_event_parent_op
    GROUP BY trace_id, op_instance_id, kernel_category
), top AS (
    SELECT * FROM per_cat
    QUALIFY row_number() OVER (PARTITION BY trace_id, op_instance_id ORDER BY total_ns DESC, kernel_category) = 1
), inst AS (
    SELECT t.trace_id, t.op_instance_id, t.cpu_op, t.op_name, t.kernel_category AS top_category,
           t.kernel_subcategory AS top_subcategory, a.gpu_events, a.total_ns
    FROM top t
    JOIN (SELECT trace_id, op_instance_id, sum(n) AS gpu_events, sum(total_ns) AS total_ns
          FROM per_cat GROUP BY ALL) a USING (trace_id, op_instance_id)
)
SELECT i.trace_id, i.op_instance_id, i.cpu_op,
       CASE WHEN c.matched THEN c.op_category ELSE i.top_category END AS op_category,
       CASE WHEN c.matched THEN c.op_subcategory ELSE i.top_subcategory END AS op_subcategory,
       CASE WHEN c.matched THEN 'op_rule' ELSE 'kernels' END AS category_source,
       i.gpu_events,
       i.total_ns::BIGINT AS kernel_time_ns,
       i.total_ns / 1e6 AS kernel_time_ms
FROM inst i
LEFT JOIN op_name_categories c ON c.ruleset = 'default' AND c.name = i.op_name;

-- op_category_summary: one row per (trace, op category): GPU time by the kind of op that launched it.
--   trace_id          trace
--   op_category       native op category (see the top of this file)
--   ops               op instances in the category
--   gpu_events        their GPU events
--   kernel_time_ms    Σ dur of those events, ms
--   pct               share of the trace's Σ dur over all GPU events
--   cumulative_pct    running sum of pct by descending kernel time
--   rank              1 = the category with the most kernel time
-- @output categories-by 5 op_category EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW op_category_summary AS
WITH g AS (
    -- sums in integer ns: a sum of floats would depend on the order the rows are added in
    SELECT trace_id, op_category, count(*) AS ops, sum(gpu_events) AS gpu_events,
           sum(kernel_time_ns) AS kernel_ns
    FROM op_instance_categories
    GROUP BY ALL
), r AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY kernel_ns DESC, op_category) AS rank,
           sum(kernel_ns) OVER (PARTITION BY trace_id) AS trace_ns
    FROM g
)
SELECT trace_id, op_category, ops, gpu_events::BIGINT AS gpu_events, kernel_ns / 1e6 AS kernel_time_ms,
       100.0 * kernel_ns / nullif(trace_ns, 0) AS pct,
       100.0 * sum(kernel_ns) OVER (PARTITION BY trace_id ORDER BY rank
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
             / nullif(trace_ns, 0) AS cumulative_pct,
       rank
FROM r;
