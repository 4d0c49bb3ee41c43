-- peers/tracelens/op_categories — TraceLens (0.1.0) op categories and its ops_summary_by_category, reproduced from the rule table.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence), see docs/peers.md; the code is ours.
-- TraceLens's launcher of a GPU event is found by gpu_event_ops (sql/tree/context.sql:
-- tl_launcher_event_id; NCCL/RCCL kernels and events TraceLens does not link have none). The op category
-- of a launcher instance, first match:
--   1. an op rule of ruleset `tracelens` matches the launcher's name (the exact-name registry, then the
--      `^triton` and `^record_param_comms` prefixes; sql/peers/tracelens/rules/tracelens.csv);
--   2. an op_first_kernel rule of ruleset `tracelens` matches the name of its first GPU event (name starts
--      with `void at::native` and contains elementwise / reduce / multi_tensor_apply);
--   3. `other`.
-- The first GPU event is the one that started first on the GPU (then the file order of the GPU events):
-- TraceLens sorts an op's kernel_details by the kernels' ts (TreePerfAnalyzer.get_kernel_launchers in
-- TraceLens/TreePerf/tree_perf.py, a stable sort of the kernels in event order) and its fallback reads
-- entry 0 (_kernel_name_fallback in TraceLens/PerfModel/torch_op_mapping.py).
-- Direct kernel time of a launcher instance (the union of its GPU events' intervals in float64 µs, as
-- TraceLens computes it) comes from tl_launchers (sql/tree/rollups.sql).
--
-- @requires categories/ops peers/tracelens/links

-- _tl_op_rule_category(name): the category of the best `tracelens` op rule matching an op name (NULL when none
-- matches), for names op_name_categories does not cover.
CREATE OR REPLACE MACRO _tl_op_rule_category(name) AS (
    SELECT r.category FROM category_rules r
    WHERE r.ruleset = 'tracelens' AND r.applies_to = 'op' AND regexp_matches(name, r.pattern)
    ORDER BY _rule_precedence(r.priority, r.source, r.file, r.line_no) LIMIT 1);

-- _tl_op_name_categories: TraceLens's registry category of every launcher / parent-op name as TraceLens
-- names it (_tl_op_name, peers/tracelens/links): op_name_categories of the `tracelens` ruleset for the
-- names that _tl_op_name leaves alone, and the same rules matched here for the few names it shortens
-- (those are not among the dataset's op names that op_name_categories covers).
--   name; op_category (`other` when no op rule matches); matched
CREATE OR REPLACE VIEW _tl_op_name_categories AS
WITH kept AS (
    SELECT name, op_category, matched FROM op_name_categories
    WHERE ruleset = 'tracelens' AND _tl_op_name(name) = name
), renamed AS (
    SELECT DISTINCT _tl_op_name(name) AS name FROM op_name_categories
    WHERE ruleset = 'tracelens' AND _tl_op_name(name) <> name
      AND _tl_op_name(name) NOT IN (SELECT name FROM kept)
), best AS (
    SELECT n.name, _tl_op_rule_category(n.name) AS category FROM renamed n
)
SELECT * FROM kept
UNION ALL
SELECT name, coalesce(category, 'other'), category IS NOT NULL FROM best;

-- Helper: the best op_first_kernel rule per (ruleset, kernel name).
CREATE OR REPLACE VIEW _first_kernel_rule_categories AS
SELECT ruleset, name_key, category, subcategory
FROM _category_rule_matches
WHERE applies_to = 'op_first_kernel'
QUALIFY row_number() OVER (PARTITION BY ruleset, name_key
                           ORDER BY _rule_precedence(priority, source, file, line_no)) = 1;

-- _tl_op_category_of(gpu_ops): tl_op_category (below) of a tree whose GPU events and launchers are the table
-- gpu_ops (the columns of tl_gpu_event_ops).
CREATE OR REPLACE MACRO _tl_op_category_of(gpu_ops) AS TABLE
WITH g AS MATERIALIZED (   -- the GPU events of every launcher instance, with the start of the call that launched
                          -- them (for graph replays merged with their capture trace: the capture-time launch call)
    SELECT o.tl_launcher_trace_id, o.tl_launcher_event_id, o.tl_launcher_name, o.tl_launcher_ts_ns, o.trace_id,
           o.event_id, o.name, o.ts_ns,
           CASE WHEN o.capture_launch_event_id IS NOT NULL THEN o.capture_module_path ELSE o.module_path END
               AS module_path
    FROM query_table(gpu_ops) o
    WHERE o.tl_launcher_event_id IS NOT NULL
), f AS (   -- the first GPU event of each launcher (its key only: the long names are joined afterwards)
    SELECT tl_launcher_trace_id, tl_launcher_event_id, any_value(tl_launcher_name) AS tl_launcher_name,
           any_value(tl_launcher_ts_ns) AS tl_launcher_ts_ns,
           arg_min(trace_id, (ts_ns, trace_id, event_id)) AS first_trace_id,
           arg_min(event_id, (ts_ns, trace_id, event_id)) AS first_event_id,
           count(*) AS gpu_events
    FROM g
    GROUP BY ALL
), k AS (
    SELECT f.*, g.name AS first_kernel_name, g.module_path
    FROM f JOIN g ON g.trace_id = f.first_trace_id AND g.event_id = f.first_event_id
               AND g.tl_launcher_trace_id = f.tl_launcher_trace_id AND g.tl_launcher_event_id = f.tl_launcher_event_id
)
SELECT k.tl_launcher_trace_id AS trace_id, k.tl_launcher_event_id, k.tl_launcher_name,
       CASE WHEN oc.matched THEN oc.op_category
            WHEN fk.category IS NOT NULL THEN fk.category
            ELSE 'other' END AS op_category,
       CASE WHEN oc.matched THEN 'op_rule' WHEN fk.category IS NOT NULL THEN 'first_kernel' ELSE 'none' END
           AS category_source,
       k.first_kernel_name, k.gpu_events, k.tl_launcher_ts_ns AS launcher_ts_ns, k.module_path
FROM k
LEFT JOIN (SELECT name, op_category, matched FROM _tl_op_name_categories
           UNION ALL   -- launcher names that are no op name of the dataset (runtime calls, pseudo ops)
           SELECT name, coalesce(c, 'other'), c IS NOT NULL
           FROM (SELECT name, _tl_op_rule_category(name) AS c
                 FROM (SELECT DISTINCT tl_launcher_name AS name FROM f
                       WHERE tl_launcher_name NOT IN (SELECT name FROM _tl_op_name_categories)))) oc
       ON oc.name = k.tl_launcher_name
LEFT JOIN _first_kernel_rule_categories fk
       ON fk.ruleset = 'tracelens' AND fk.name_key = replace(k.first_kernel_name, chr(10), ' ');

-- tl_op_category: one row per TraceLens launcher instance (a cpu_op, or a runtime call without a cpu_op
-- above it, that launched GPU work), with TraceLens's op category. Replaces the placeholder of the same
-- name in sql/tree/rollups.sql, which tl_ops_summary reads.
--   trace_id               the trace that holds the launcher event (tl_gpu_event_ops.tl_launcher_trace_id:
--                          the capture trace for graph replays merged with their capture)
--   tl_launcher_event_id   the launcher event
--   tl_launcher_name       its name (TraceLens's ops_summary `name`)
--   op_category            TraceLens op category (see the top of this file)
--   category_source        'op_rule', 'first_kernel' or 'none' (other)
--   first_kernel_name      name of its first GPU event
--   gpu_events             GPU events it launched (all traces)
--   launcher_ts_ns         start of the launcher event, ns (clock of its trace)
--   module_path            nn.Module stack around its (first) launch call, outermost first, '/'-joined
--                          (gpu_event_ops.module_path, or capture_module_path for merged graph replays)
-- @materialize report-tracelens
CREATE OR REPLACE VIEW tl_op_category AS
SELECT * FROM _tl_op_category_of('tl_gpu_event_ops');
