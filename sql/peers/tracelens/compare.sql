-- peers/tracelens/compare — TraceLens (0.1.0) style: two traces' perf-report sheets compared as TraceLens's
-- TraceLens_compare_perf_reports_pytorch compares two perf reports (`tracesql diff --style tracelens`).
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from
-- TraceLens/Reporting/compare_perf_reports_pytorch.py (SHEETS_COMPARE_CONFIG, build_df_dff, add_diff_cols,
-- process_summary_sheet, split_df_diff, generate_compare_perf_reports_pytorch); the code is ours.
--   merge      the two sheets are joined with an outer merge on the sheet's keys (rows of one side kept;
--              several rows with one key on both sides give every pair), a missing key matching a missing
--              key; the merged rows come in the order of their key values, then of each side's rows.
--   keys       gpu_timeline: type; ops_summary: name; kernel_summary: Kernel name only; ops_unique_args and
--              unified_perf_summary: name, Input type, Input Dims, Input Strides, Concrete Inputs; the
--              roofline sheets (GEMM, SDPA_fwd, CONV_fwd, UnaryElementwise, BinaryElementwise): name and the
--              `param:` columns both traces' sheets have, sorted by column name.
--   columns    the keys, then per diff metric M: `M__<variant>_diff` = variant - baseline and
--              `M__<variant>_pct` = 100 · diff / baseline (empty where the baseline is 0 or missing), then
--              every other column of the baseline's sheet as `<baseline>::column`, then the variant's as
--              `<variant>::column`. Left out: ops_summary total_direct_kernel_time_sum (both) and the variant's
--              Cumulative Percentage (%); kernel_summary Kernel duration (µs)_min/_max and Parent op category;
--              the roofline variant's GFLOPS_first, Data Moved (MB)_first, FLOPS/Byte_first and Input
--              type/Dims/Strides/Concrete Inputs_first.
--   order      gpu_timeline: the merge's order; ops_summary and kernel_summary: the baseline's sort metric
--              descending, rows without a baseline last. Equal values keep the merge's order here; TraceLens
--              sorts with numpy's quicksort, which is not stable, so the rows a kernel name with several rows
--              on both sides multiplies (equal baseline values) can come in another order there.
--   split      ops_unique_args, unified_perf_summary and the roofline sheets become three files each: rows
--              where the first diff metric is present on both sides (intersect), on the baseline only, on the
--              variant only; intersect and baseline-only sorted by the baseline's sort metric descending,
--              variant-only by the variant's. Baseline-only rows keep the keys and the baseline's columns,
--              variant-only rows the keys, the diff columns and the variant's; a column empty in every row
--              of a file is left out of it (done when the file is written). A roofline sheet is compared
--              only when both traces have rows in it.
-- Column names here carry the placeholders `base::`, `variant::` and `__variant_`; the caller puts the two
-- tags (TraceLens's --names) in their place (tracesql/peers/tracelens/diff.py).
--
-- @requires peers/tracelens/timeline peers/tracelens/launchers peers/tracelens/kernel_summary
-- @requires peers/tracelens/ops_unique_args peers/tracelens/perf_unified peers/tracelens/perf_gemm
-- @requires peers/tracelens/perf_sdpa peers/tracelens/perf_conv peers/tracelens/perf_elementwise

-- _tl_cmp_merge(tbl, base_id, variant_id): the outer merge of the rows of base_id and of variant_id in tbl, a
-- view with trace_id, rank (unique within a trace), _kj (JSON object of the row's key candidates), _kcols (the
-- trace's key candidates, in key order), then the sheet's columns (sheet_columns among them). One row per
-- merged row: keys (the candidates both traces have; those of the trace with rows when the other has none: its
-- sheet is merged as TraceLens merges a sheet with its columns and no rows), b_cols, v_cols (each trace's
-- sheet_columns, [] for a trace without rows), b_rank, v_rank (the rank of each side's row, NULL on the missing
-- side), key_values (the keys' values as text), every sheet column unprefixed (the values of the baseline's row,
-- or of the variant's when only it has one), prefixed `base::` and prefixed `variant::`.
CREATE OR REPLACE MACRO _tl_cmp_merge(tbl, base_id, variant_id) AS TABLE
WITH x AS (
    SELECT trace_id, rank, _kj, _kcols, sheet_columns FROM query_table(tbl)
    WHERE trace_id = base_id OR trace_id = variant_id
), k AS (
    SELECT CASE WHEN b IS NULL THEN coalesce(v, []) WHEN v IS NULL THEN b
                ELSE list_filter(b, lambda c: list_contains(v, c)) END AS keys,
           coalesce(b_cols, []) AS b_cols, coalesce(v_cols, []) AS v_cols
    FROM (SELECT any_value(_kcols) FILTER (WHERE trace_id = base_id) AS b,
                 any_value(_kcols) FILTER (WHERE trace_id = variant_id) AS v,
                 any_value(sheet_columns) FILTER (WHERE trace_id = base_id) AS b_cols,
                 any_value(sheet_columns) FILTER (WHERE trace_id = variant_id) AS v_cols FROM x)
), kx AS (
    SELECT x.trace_id, x.rank, list_transform(k.keys, lambda c: x._kj ->> c) AS kv FROM x, k
), j AS (
    SELECT xb.rank AS b_rank, xv.rank AS v_rank, coalesce(xb.kv, xv.kv) AS key_values
    FROM (SELECT * FROM kx WHERE trace_id = base_id) xb
    FULL JOIN (SELECT * FROM kx WHERE trace_id = variant_id) xv ON to_json(xb.kv) = to_json(xv.kv)
)
SELECT k.*, j.*, COLUMNS(bs.* EXCLUDE (trace_id, rank, _kj, _kcols)),
       COLUMNS(bs.* EXCLUDE (trace_id, rank, _kj, _kcols)) AS 'base::\0',
       COLUMNS(vs.* EXCLUDE (trace_id, rank, _kj, _kcols)) AS 'variant::\0'
FROM j CROSS JOIN k
JOIN query_table(tbl) bs ON bs.trace_id = base_id AND bs.rank = j.b_rank
LEFT JOIN query_table(tbl) vs ON vs.trace_id = variant_id AND vs.rank = j.v_rank
UNION ALL BY NAME
SELECT k.*, j.*, COLUMNS(vs.* EXCLUDE (trace_id, rank, _kj, _kcols)),
       COLUMNS(vs.* EXCLUDE (trace_id, rank, _kj, _kcols)) AS 'variant::\0'
FROM j CROSS JOIN k
JOIN query_table(tbl) vs ON vs.trace_id = variant_id AND vs.rank = j.v_rank
WHERE j.b_rank IS NULL;

-- _tl_cmp_columns(keys, diffs, base_cols, variant_cols, drop_both, drop_variant): a compared sheet's column
-- list: the keys, `M__variant_diff` and `M__variant_pct` per diff metric M, then `base::c` for the baseline's
-- columns and `variant::c` for the variant's, keys and the dropped columns left out.
CREATE OR REPLACE MACRO _tl_cmp_columns(keys, diffs, base_cols, variant_cols, drop_both, drop_variant) AS
keys
|| flatten(list_transform(diffs, lambda m: [m || '__variant_diff', m || '__variant_pct']))
|| list_transform(list_filter(base_cols, lambda c: NOT list_contains(keys, c) AND NOT list_contains(drop_both, c)),
                  lambda c: 'base::' || c)
|| list_transform(list_filter(variant_cols, lambda c: NOT list_contains(keys, c) AND NOT list_contains(drop_both, c)
                                                      AND NOT list_contains(drop_variant, c)),
                  lambda c: 'variant::' || c);

-- _tl_cmp_pct(diff, base): TraceLens's percentage change: 100 · (diff / base), NULL where base is 0 or missing.
CREATE OR REPLACE MACRO _tl_cmp_pct(diff, base) AS 100 * (diff / nullif(base, 0));

-- _tl_cmp_side(b, v): the file of a split sheet a merged row goes to, from its first diff metric on each side.
CREATE OR REPLACE MACRO _tl_cmp_side(b, v) AS
CASE WHEN b IS NOT NULL AND v IS NOT NULL THEN 'intersect' WHEN b IS NOT NULL THEN 'only_baseline'
     WHEN v IS NOT NULL THEN 'only_variant' END;

-- _tl_cmp_file_columns(side, all_cols, keys): the columns a split file keeps of all_cols: every one
-- (intersect), the keys and the baseline's (only_baseline), the keys, the diff columns and the variant's
-- (only_variant).
CREATE OR REPLACE MACRO _tl_cmp_file_columns(side, all_cols, keys) AS
CASE side WHEN 'intersect' THEN all_cols
          WHEN 'only_baseline' THEN list_filter(all_cols, lambda c: list_contains(keys, c) OR starts_with(c, 'base::'))
          ELSE list_filter(all_cols, lambda c: NOT starts_with(c, 'base::')) END;

-- _tl_cmp_sheet_columns(sheet): the columns of a per-trace sheet whose columns do not depend on the trace
-- (gpu_timeline, ops_summary, kernel_summary), in the order TraceLens's perf report writes them.
CREATE OR REPLACE MACRO _tl_cmp_sheet_columns(sheet) AS
CASE sheet
    WHEN 'gpu_timeline' THEN ['type', 'time ms', 'percent']
    WHEN 'ops_summary' THEN
        ['name', 'total_direct_kernel_time_sum', 'total_subtree_kernel_time_sum', 'total_direct_kernel_time_ms',
         'total_subtree_kernel_time_ms', 'Count', 'Categories', 'Percentage (%)', 'Cumulative Percentage (%)']
    WHEN 'kernel_summary' THEN
        ['Parent op category', 'Parent cpu_op', 'Kernel name', 'Kernel stream', 'Kernel duration (µs)_sum',
         'Kernel duration (µs)_count', 'Kernel duration (µs)_mean', 'Kernel duration (µs)_min',
         'Kernel duration (µs)_max', 'Percent of kernels time (%)', 'Percent of total time (%)']
END;

-- tl_compare_file_columns(sheet): the columns of the compared file of gpu_timeline, ops_summary or
-- kernel_summary (placeholders base::, variant::, __variant_), the same for every pair of traces: TraceLens
-- writes the merged frame's columns whatever the rows, and a trace without rows in the sheet is compared as a
-- sheet with its columns and no rows (its values empty). TraceLens's comparison itself stops at such a pair when
-- the report's sheet is an empty file: pandas' merge needs the key column, which a file without a header lacks.
CREATE OR REPLACE MACRO tl_compare_file_columns(sheet) AS
CASE sheet
    WHEN 'gpu_timeline' THEN _tl_cmp_columns(['type'], ['time ms'], _tl_cmp_sheet_columns(sheet),
                                             _tl_cmp_sheet_columns(sheet), [], [])
    WHEN 'ops_summary' THEN _tl_cmp_columns(['name'], ['total_direct_kernel_time_ms', 'Count'],
                                            _tl_cmp_sheet_columns(sheet), _tl_cmp_sheet_columns(sheet),
                                            ['total_direct_kernel_time_sum'], ['Cumulative Percentage (%)'])
    WHEN 'kernel_summary' THEN
        _tl_cmp_columns(['Kernel name'],
                        ['Kernel duration (µs)_sum', 'Kernel duration (µs)_mean', 'Kernel duration (µs)_count'],
                        _tl_cmp_sheet_columns(sheet), _tl_cmp_sheet_columns(sheet),
                        ['Kernel duration (µs)_min', 'Kernel duration (µs)_max', 'Parent op category'], [])
END;

-- _tl_cmp_in_gpu_timeline: tl_gpu_timeline as _tl_cmp_merge reads it (key: type).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_gpu_timeline AS
SELECT trace_id, row_number() OVER (PARTITION BY trace_id ORDER BY "type") AS rank,
       json_object('type', "type") AS _kj, ['type'] AS _kcols, "type", "time ms", percent,
       _tl_cmp_sheet_columns('gpu_timeline') AS sheet_columns
FROM tl_gpu_timeline;

-- tl_compare_gpu_timeline(base_id, variant_id): TraceLens's gpu_timeline.csv comparison, one row per timeline
-- type of either trace, in the order of the type:
--   type                              the timeline row (tl_gpu_timeline)
--   time ms__variant_diff, _pct       variant - baseline (ms), and that in % of the baseline
--   base::time ms, base::percent      the baseline's row; variant::time ms, variant::percent the variant's
--   file_columns                      the file's columns in order (placeholders base::, variant::, __variant_):
--                                     tl_compare_file_columns('gpu_timeline')
CREATE OR REPLACE MACRO tl_compare_gpu_timeline(base_id, variant_id) AS TABLE
SELECT "type", "variant::time ms" - "base::time ms" AS "time ms__variant_diff",
       _tl_cmp_pct("time ms__variant_diff", "base::time ms") AS "time ms__variant_pct",
       "base::time ms", "base::percent", "variant::time ms", "variant::percent",
       tl_compare_file_columns('gpu_timeline') AS file_columns
FROM _tl_cmp_merge('_tl_cmp_in_gpu_timeline', base_id, variant_id)
ORDER BY key_values, b_rank, v_rank;

-- _tl_cmp_in_ops_summary: tl_ops_summary as _tl_cmp_merge reads it (key: name).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_ops_summary AS
SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY total_direct_kernel_time_sum DESC, name) AS rank,
       json_object('name', name) AS _kj, ['name'] AS _kcols, _tl_cmp_sheet_columns('ops_summary') AS sheet_columns
FROM tl_ops_summary;

-- tl_compare_ops_summary(base_id, variant_id): TraceLens's ops_summary.csv comparison, one row per launcher
-- name of either trace, by the baseline's total_direct_kernel_time_ms descending (names only in the variant
-- last):
--   name                                                the launcher name (tl_ops_summary)
--   total_direct_kernel_time_ms__variant_diff, _pct     variant - baseline (ms), and in % of the baseline
--   Count__variant_diff, Count__variant_pct             the same for the instance count
--   base::<column>, variant::<column>                   each side's tl_ops_summary columns
--   file_columns                                        the file's columns in order (see the top of this file):
--                                                       tl_compare_file_columns('ops_summary')
CREATE OR REPLACE MACRO tl_compare_ops_summary(base_id, variant_id) AS TABLE
SELECT name,
       "variant::total_direct_kernel_time_ms" - "base::total_direct_kernel_time_ms"
           AS "total_direct_kernel_time_ms__variant_diff",
       _tl_cmp_pct("total_direct_kernel_time_ms__variant_diff", "base::total_direct_kernel_time_ms")
           AS "total_direct_kernel_time_ms__variant_pct",
       "variant::Count" - "base::Count" AS "Count__variant_diff",
       _tl_cmp_pct("Count__variant_diff", "base::Count") AS "Count__variant_pct",
       COLUMNS('^(base|variant)::'),
       tl_compare_file_columns('ops_summary') AS file_columns
FROM _tl_cmp_merge('_tl_cmp_in_ops_summary', base_id, variant_id)
ORDER BY "base::total_direct_kernel_time_ms" DESC NULLS LAST, key_values, b_rank, v_rank;

-- _tl_cmp_in_kernel_summary: tl_kernel_summary as _tl_cmp_merge reads it (key: Kernel name).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_kernel_summary AS
SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY "Kernel duration (µs)_sum" DESC, "Parent cpu_op",
                                                              "Kernel stream", "Parent op category") AS rank,
       json_object('Kernel name', "Kernel name") AS _kj, ['Kernel name'] AS _kcols,
       _tl_cmp_sheet_columns('kernel_summary') AS sheet_columns
FROM tl_kernel_summary;

-- tl_compare_kernel_summary(base_id, variant_id): TraceLens's kernel_summary.csv comparison: one row per pair
-- of kernel_summary rows with the same kernel name (a name with several rows on both sides gives every
-- pair), and per row whose name the other trace lacks; by the baseline's sum descending (rows only in the
-- variant last):
--   Kernel name                                         the kernel (tl_kernel_summary)
--   Kernel duration (µs)_sum/_mean/_count__variant_diff, _pct   variant - baseline, and in % of the baseline
--   base::<column>, variant::<column>                   each side's tl_kernel_summary columns
--   file_columns                                        the file's columns in order (see the top of this file):
--                                                       tl_compare_file_columns('kernel_summary')
CREATE OR REPLACE MACRO tl_compare_kernel_summary(base_id, variant_id) AS TABLE
SELECT "Kernel name",
       "variant::Kernel duration (µs)_sum" - "base::Kernel duration (µs)_sum" AS "Kernel duration (µs)_sum__variant_diff",
       _tl_cmp_pct("Kernel duration (µs)_sum__variant_diff", "base::Kernel duration (µs)_sum")
           AS "Kernel duration (µs)_sum__variant_pct",
       "variant::Kernel duration (µs)_mean" - "base::Kernel duration (µs)_mean"
           AS "Kernel duration (µs)_mean__variant_diff",
       _tl_cmp_pct("Kernel duration (µs)_mean__variant_diff", "base::Kernel duration (µs)_mean")
           AS "Kernel duration (µs)_mean__variant_pct",
       "variant::Kernel duration (µs)_count" - "base::Kernel duration (µs)_count"
           AS "Kernel duration (µs)_count__variant_diff",
       _tl_cmp_pct("Kernel duration (µs)_count__variant_diff", "base::Kernel duration (µs)_count")
           AS "Kernel duration (µs)_count__variant_pct",
       COLUMNS('^(base|variant)::'),
       tl_compare_file_columns('kernel_summary') AS file_columns
FROM _tl_cmp_merge('_tl_cmp_in_kernel_summary', base_id, variant_id)
ORDER BY "base::Kernel duration (µs)_sum" DESC NULLS LAST, key_values, b_rank, v_rank;

-- _tl_cmp_in_ops_unique_args: tl_ops_unique_args as _tl_cmp_merge reads it (keys: name, Input type, Input
-- Dims, Input Strides, Concrete Inputs).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_ops_unique_args AS
SELECT * EXCLUDE (rank), rank,
       json_object('name', name, 'Input type', "Input type", 'Input Dims', "Input Dims",
                   'Input Strides', "Input Strides", 'Concrete Inputs', "Concrete Inputs") AS _kj,
       ['name', 'Input type', 'Input Dims', 'Input Strides', 'Concrete Inputs'] AS _kcols,
       ['name', 'op category', 'process_name', 'process_label', 'thread_name', 'Input Dims', 'Input type',
        'Input Strides', 'Concrete Inputs', 'operation_count', 'total_direct_kernel_time_mean',
        'total_subtree_kernel_time_mean', 'total_direct_kernel_time_median', 'total_subtree_kernel_time_median',
        'total_direct_kernel_time_std', 'total_subtree_kernel_time_std', 'total_direct_kernel_time_min',
        'total_subtree_kernel_time_min', 'total_direct_kernel_time_max', 'total_subtree_kernel_time_max',
        'total_direct_kernel_time_sum', 'total_subtree_kernel_time_sum', 'ex_UID', 'kernel_details_summary',
        'trunc_kernel_details', 'Percentage (%)', 'Cumulative Percentage (%)'] AS sheet_columns
FROM tl_ops_unique_args;

-- tl_compare_ops_unique_args(base_id, variant_id): TraceLens's ops_unique_args comparison, one row per merged
-- row (launcher name and argument set), each in one of the three files (side):
--   name, Input type, Input Dims, Input Strides, Concrete Inputs   the keys (tl_ops_unique_args)
--   total_direct_kernel_time_sum/_mean__variant_diff, _pct, operation_count__variant_diff, _pct
--                                         variant - baseline, and in % of the baseline
--   base::<column>, variant::<column>     each side's tl_ops_unique_args columns
--   side                                  intersect | only_baseline | only_variant
--   pos                                   row order within the file
--   file_columns                          the file's columns in order (see the top of this file)
CREATE OR REPLACE MACRO tl_compare_ops_unique_args(base_id, variant_id) AS TABLE
WITH d AS (
    SELECT name, "Input type", "Input Dims", "Input Strides", "Concrete Inputs",
           "variant::total_direct_kernel_time_sum" - "base::total_direct_kernel_time_sum"
               AS "total_direct_kernel_time_sum__variant_diff",
           _tl_cmp_pct("total_direct_kernel_time_sum__variant_diff", "base::total_direct_kernel_time_sum")
               AS "total_direct_kernel_time_sum__variant_pct",
           "variant::total_direct_kernel_time_mean" - "base::total_direct_kernel_time_mean"
               AS "total_direct_kernel_time_mean__variant_diff",
           _tl_cmp_pct("total_direct_kernel_time_mean__variant_diff", "base::total_direct_kernel_time_mean")
               AS "total_direct_kernel_time_mean__variant_pct",
           "variant::operation_count" - "base::operation_count" AS "operation_count__variant_diff",
           _tl_cmp_pct("operation_count__variant_diff", "base::operation_count") AS "operation_count__variant_pct",
           COLUMNS('^(base|variant)::'),
           _tl_cmp_side("base::total_direct_kernel_time_sum", "variant::total_direct_kernel_time_sum") AS side,
           CASE WHEN side = 'only_variant' THEN "variant::total_direct_kernel_time_sum"
                ELSE "base::total_direct_kernel_time_sum" END AS _sort,
           _tl_cmp_columns(keys, ['total_direct_kernel_time_sum', 'total_direct_kernel_time_mean', 'operation_count'],
                           b_cols, v_cols, [], []) AS _cols,
           keys, b_cols, v_cols, key_values, b_rank, v_rank
    FROM _tl_cmp_merge('_tl_cmp_in_ops_unique_args', base_id, variant_id)
)
SELECT * EXCLUDE (_sort, _cols, keys, b_cols, v_cols, key_values, b_rank, v_rank),
       row_number() OVER (PARTITION BY side ORDER BY _sort DESC NULLS LAST, key_values, b_rank, v_rank) AS pos,
       _tl_cmp_file_columns(side, _cols, keys) AS file_columns
FROM d WHERE side IS NOT NULL
ORDER BY side, pos;

-- _tl_cmp_in_unified: tl_unified_perf_summary as _tl_cmp_merge reads it (keys as ops_unique_args).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_unified AS
SELECT * EXCLUDE (rank), rank,
       json_object('name', name, 'Input type', "Input type", 'Input Dims', "Input Dims",
                   'Input Strides', "Input Strides", 'Concrete Inputs', "Concrete Inputs") AS _kj,
       ['name', 'Input type', 'Input Dims', 'Input Strides', 'Concrete Inputs'] AS _kcols
FROM tl_unified_perf_summary;

-- tl_compare_unified_perf_summary(base_id, variant_id): TraceLens's unified_perf_summary comparison, one row
-- per merged row (op name and argument set), each in one of the three files (side):
--   name, Input type, Input Dims, Input Strides, Concrete Inputs   the keys (tl_unified_perf_summary)
--   Kernel Time (µs)_sum/_mean__variant_diff, _pct, operation_count__variant_diff, _pct
--                                         variant - baseline, and in % of the baseline
--   base::<column>, variant::<column>     each side's tl_unified_perf_summary columns
--   side, pos, file_columns               as in tl_compare_ops_unique_args
CREATE OR REPLACE MACRO tl_compare_unified_perf_summary(base_id, variant_id) AS TABLE
WITH d AS (
    SELECT name, "Input type", "Input Dims", "Input Strides", "Concrete Inputs",
           "variant::Kernel Time (µs)_sum" - "base::Kernel Time (µs)_sum" AS "Kernel Time (µs)_sum__variant_diff",
           _tl_cmp_pct("Kernel Time (µs)_sum__variant_diff", "base::Kernel Time (µs)_sum")
               AS "Kernel Time (µs)_sum__variant_pct",
           "variant::Kernel Time (µs)_mean" - "base::Kernel Time (µs)_mean" AS "Kernel Time (µs)_mean__variant_diff",
           _tl_cmp_pct("Kernel Time (µs)_mean__variant_diff", "base::Kernel Time (µs)_mean")
               AS "Kernel Time (µs)_mean__variant_pct",
           "variant::operation_count" - "base::operation_count" AS "operation_count__variant_diff",
           _tl_cmp_pct("operation_count__variant_diff", "base::operation_count") AS "operation_count__variant_pct",
           COLUMNS('^(base|variant)::'),
           _tl_cmp_side("base::Kernel Time (µs)_sum", "variant::Kernel Time (µs)_sum") AS side,
           CASE WHEN side = 'only_variant' THEN "variant::Kernel Time (µs)_sum"
                ELSE "base::Kernel Time (µs)_sum" END AS _sort,
           _tl_cmp_columns(keys, ['Kernel Time (µs)_sum', 'Kernel Time (µs)_mean', 'operation_count'],
                           b_cols, v_cols, [], []) AS _cols,
           keys, b_cols, v_cols, key_values, b_rank, v_rank
    FROM _tl_cmp_merge('_tl_cmp_in_unified', base_id, variant_id)
)
SELECT * EXCLUDE (_sort, _cols, keys, b_cols, v_cols, key_values, b_rank, v_rank),
       row_number() OVER (PARTITION BY side ORDER BY _sort DESC NULLS LAST, key_values, b_rank, v_rank) AS pos,
       _tl_cmp_file_columns(side, _cols, keys) AS file_columns
FROM d WHERE side IS NOT NULL
ORDER BY side, pos;

-- _tl_cmp_roofline(tbl, base_id, variant_id): the comparison of a roofline sheet (tbl: one of the
-- _tl_cmp_in_<sheet> views below), empty unless both traces have rows in it; columns as
-- tl_compare_gemm.
CREATE OR REPLACE MACRO _tl_cmp_roofline(tbl, base_id, variant_id) AS TABLE
WITH m AS (
    SELECT * FROM _tl_cmp_merge(tbl, base_id, variant_id)
    WHERE (SELECT count(*) FILTER (WHERE trace_id = base_id) > 0 AND count(*) FILTER (WHERE trace_id = variant_id) > 0
           FROM query_table(tbl))
), d AS (
    SELECT COLUMNS('^(name|param: .*)$'),
           "variant::Kernel Time (µs)_sum" - "base::Kernel Time (µs)_sum" AS "Kernel Time (µs)_sum__variant_diff",
           _tl_cmp_pct("Kernel Time (µs)_sum__variant_diff", "base::Kernel Time (µs)_sum")
               AS "Kernel Time (µs)_sum__variant_pct",
           "variant::Kernel Time (µs)_mean" - "base::Kernel Time (µs)_mean" AS "Kernel Time (µs)_mean__variant_diff",
           _tl_cmp_pct("Kernel Time (µs)_mean__variant_diff", "base::Kernel Time (µs)_mean")
               AS "Kernel Time (µs)_mean__variant_pct",
           "variant::name_count" - "base::name_count" AS "name_count__variant_diff",
           _tl_cmp_pct("name_count__variant_diff", "base::name_count") AS "name_count__variant_pct",
           "variant::TFLOPS/s_mean" - "base::TFLOPS/s_mean" AS "TFLOPS/s_mean__variant_diff",
           _tl_cmp_pct("TFLOPS/s_mean__variant_diff", "base::TFLOPS/s_mean") AS "TFLOPS/s_mean__variant_pct",
           "variant::TB/s_mean" - "base::TB/s_mean" AS "TB/s_mean__variant_diff",
           _tl_cmp_pct("TB/s_mean__variant_diff", "base::TB/s_mean") AS "TB/s_mean__variant_pct",
           COLUMNS('^(base|variant)::'),
           _tl_cmp_side("base::Kernel Time (µs)_sum", "variant::Kernel Time (µs)_sum") AS side,
           CASE WHEN side = 'only_variant' THEN "variant::Kernel Time (µs)_sum"
                ELSE "base::Kernel Time (µs)_sum" END AS _sort,
           _tl_cmp_columns(keys, ['Kernel Time (µs)_sum', 'Kernel Time (µs)_mean', 'name_count', 'TFLOPS/s_mean',
                                  'TB/s_mean'],
                           b_cols, v_cols, [],
                           ['GFLOPS_first', 'Data Moved (MB)_first', 'FLOPS/Byte_first', 'Input type_first',
                            'Input Dims_first', 'Input Strides_first', 'Concrete Inputs_first']) AS _cols,
           keys, b_cols, v_cols, key_values, b_rank, v_rank
    FROM m
)
SELECT * EXCLUDE (_sort, _cols, keys, b_cols, v_cols, key_values, b_rank, v_rank),
       row_number() OVER (PARTITION BY side ORDER BY _sort DESC NULLS LAST, key_values, b_rank, v_rank) AS pos,
       _tl_cmp_file_columns(side, _cols, keys) AS file_columns
FROM d WHERE side IS NOT NULL
ORDER BY side, pos;

-- _tl_cmp_in_gemm: tl_perf_gemm (GEMM.csv) as _tl_cmp_merge reads it
-- (key candidates: name and the trace's param: columns, sorted by name).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_gemm AS
SELECT *, to_json(struct_pack(name, *COLUMNS('^param: '))) AS _kj,
       ['name'] || list_sort(list_filter(sheet_columns, lambda c: starts_with(c, 'param: '))) AS _kcols
FROM tl_perf_gemm;

-- _tl_cmp_in_sdpa_fwd: tl_perf_sdpa_fwd (SDPA_fwd.csv) as _tl_cmp_merge reads it
-- (key candidates: name and the trace's param: columns, sorted by name).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_sdpa_fwd AS
SELECT *, to_json(struct_pack(name, *COLUMNS('^param: '))) AS _kj,
       ['name'] || list_sort(list_filter(sheet_columns, lambda c: starts_with(c, 'param: '))) AS _kcols
FROM tl_perf_sdpa_fwd;

-- _tl_cmp_in_conv_fwd: tl_perf_conv_fwd (CONV_fwd.csv) as _tl_cmp_merge reads it
-- (key candidates: name and the trace's param: columns, sorted by name).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_conv_fwd AS
SELECT *, to_json(struct_pack(name, *COLUMNS('^param: '))) AS _kj,
       ['name'] || list_sort(list_filter(sheet_columns, lambda c: starts_with(c, 'param: '))) AS _kcols
FROM tl_perf_conv_fwd;

-- _tl_cmp_in_unary_elementwise: tl_perf_unary_elementwise (UnaryElementwise.csv) as _tl_cmp_merge reads it
-- (key candidates: name and the trace's param: columns, sorted by name).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_unary_elementwise AS
SELECT *, to_json(struct_pack(name, *COLUMNS('^param: '))) AS _kj,
       ['name'] || list_sort(list_filter(sheet_columns, lambda c: starts_with(c, 'param: '))) AS _kcols
FROM tl_perf_unary_elementwise;

-- _tl_cmp_in_binary_elementwise: tl_perf_binary_elementwise (BinaryElementwise.csv) as _tl_cmp_merge reads it
-- (key candidates: name and the trace's param: columns, sorted by name).
-- @materialize diff-tracelens
CREATE OR REPLACE VIEW _tl_cmp_in_binary_elementwise AS
SELECT *, to_json(struct_pack(name, *COLUMNS('^param: '))) AS _kj,
       ['name'] || list_sort(list_filter(sheet_columns, lambda c: starts_with(c, 'param: '))) AS _kcols
FROM tl_perf_binary_elementwise;

-- tl_compare_gemm(base_id, variant_id): TraceLens's GEMM comparison (files GEMM_*), one row per merged row
-- (op name and parameters), each in one of the three files (side); no rows unless both traces have GEMM rows:
--   name, param: <p>                      the row's op name and parameters (tl_perf_gemm; the keys are name and
--                                         the parameters both traces have)
--   Kernel Time (µs)_sum/_mean, name_count, TFLOPS/s_mean, TB/s_mean __variant_diff, _pct
--                                         variant - baseline, and in % of the baseline
--   base::<column>, variant::<column>     each side's tl_perf_gemm columns
--   side, pos, file_columns               as in tl_compare_ops_unique_args
CREATE OR REPLACE MACRO tl_compare_gemm(base_id, variant_id) AS TABLE
SELECT * FROM _tl_cmp_roofline('_tl_cmp_in_gemm', base_id, variant_id);

-- tl_compare_sdpa_fwd(base_id, variant_id): TraceLens's SDPA_fwd comparison (files SDPA_fwd_*) from
-- tl_perf_sdpa_fwd; columns as tl_compare_gemm.
CREATE OR REPLACE MACRO tl_compare_sdpa_fwd(base_id, variant_id) AS TABLE
SELECT * FROM _tl_cmp_roofline('_tl_cmp_in_sdpa_fwd', base_id, variant_id);

-- tl_compare_conv_fwd(base_id, variant_id): TraceLens's CONV_fwd comparison (files CONV_fwd_*) from
-- tl_perf_conv_fwd; columns as tl_compare_gemm.
CREATE OR REPLACE MACRO tl_compare_conv_fwd(base_id, variant_id) AS TABLE
SELECT * FROM _tl_cmp_roofline('_tl_cmp_in_conv_fwd', base_id, variant_id);

-- tl_compare_unary_elementwise(base_id, variant_id): TraceLens's UnaryElementwise comparison (files
-- un_eltwise_*) from tl_perf_unary_elementwise; columns as tl_compare_gemm.
CREATE OR REPLACE MACRO tl_compare_unary_elementwise(base_id, variant_id) AS TABLE
SELECT * FROM _tl_cmp_roofline('_tl_cmp_in_unary_elementwise', base_id, variant_id);

-- tl_compare_binary_elementwise(base_id, variant_id): TraceLens's BinaryElementwise comparison (files
-- bin_eltwise_*) from tl_perf_binary_elementwise; columns as tl_compare_gemm.
CREATE OR REPLACE MACRO tl_compare_binary_elementwise(base_id, variant_id) AS TABLE
SELECT * FROM _tl_cmp_roofline('_tl_cmp_in_binary_elementwise', base_id, variant_id);
