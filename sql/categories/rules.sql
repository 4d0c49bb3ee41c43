-- categories/rules — the data that says what kind of work a kernel or an op is.
--
-- Rules are CSV files with the header
--     ruleset,applies_to,event_cat,category,subcategory,pattern,priority,note
-- read from two places:
--   * ${SQL_DIR}/**/rules/*.csv  shipped with tracesql: the ruleset `default` (sql/categories/rules/) and the
--                              peers' rulesets `tracelens`, `jax` (sql/peers/tracelens/rules/), `hta`
--                              (sql/peers/hta/rules/);
--   * DATASET/rules/*.csv      user rules of this dataset (`tracesql categories DATASET --rules FILE` or
--                              tracesql.categories.add_rules copy them there); a dataset without any is fine.
--                              Read by the view _dataset_rule_files, which opening the dataset defines with
--                              the tables (tracesql/store/dataset.py), so that no file here names a dataset.
-- The files are read as text and parsed here (read_csv of a glob that matches nothing is an error, read_text
-- is not). One rule per line; fields may be double-quoted ("" is a quote inside a quoted field); a field
-- cannot span lines; blank lines and lines starting with # are skipped; the columns are found by the
-- header, so their order is free and only `category` and `pattern` are required.
--
-- Matching (see categories/kernels): a rule applies to a name when `pattern`, an RE2 regular
-- expression, is found anywhere in it (regexp_matches semantics: anchor with ^ and $; (?i) for case-blind).
-- Of all rules of a ruleset that match a name, the one with the highest priority wins; ties go to user
-- rules before shipped ones, then to the earlier file name, then to the earlier line. A name no rule of the
-- ruleset matches gets the category `other`.
--
-- @requires lib/csv

-- Every line of every rule file, with the fields of the file's header line.
CREATE OR REPLACE VIEW _category_rule_lines AS
WITH files AS (
    SELECT 'shipped' AS source, filename, content
    FROM read_text('${SQL_DIR}/**/rules/*.csv')
    UNION ALL
    SELECT 'user', filename, content
    FROM _dataset_rule_files
), split AS (
    SELECT source, filename,
           string_split(replace(content, chr(13), ''), chr(10)) AS lines
    FROM files
), numbered AS (
    SELECT source, filename, lines, unnest(range(2, len(lines) + 1)) AS line_no
    FROM split
)
SELECT source, filename,
       regexp_extract(filename, '[^/\\]+$') AS file,
       line_no,
       list_transform(_csv_fields(lines[1]), lambda h: lower(h)) AS header,
       _csv_fields(lines[line_no]) AS fields
FROM numbered
WHERE trim(lines[line_no]) <> '' AND NOT starts_with(ltrim(lines[line_no]), '#');

-- category_rules: one row per rule of every ruleset, shipped and user.
--   ruleset      name of the rule set: default | tracelens | hta | jax | any name a user file gives
--                (empty in a user file means default)
--   applies_to   what the pattern is matched against: kernel (GPU event names: kernels, memcpy, memset,
--                sync records), op (CPU op names and launch API names), op_first_kernel (the name of the
--                first GPU event of an op, consulted when no op rule matched; used by the tracelens preset),
--                kernel_hlo_op (the HLO op of a JAX GPU event, kernels.hlo_op: such a rule competes with the
--                kernel rules for the events that carry one, by priority; used by the jax preset)
--                (empty in a user file means kernel)
--   event_cat    for kernel rules: only GPU events of this normalised cat (kernel, gpu_memcpy, gpu_memset,
--                cuda_sync) match; NULL = any
--   category     the category a matching name gets
--   subcategory  finer label inside the category (NULL when the rule gives none)
--   class        for kernel rules, what the matched GPU work is to the GPU timeline, the gaps and the kernel
--                summary: compute | comm (communication) | memcpy | memset | sync (a stream waiting, not
--                work). A rule without one takes the class that the rules of its category in its ruleset
--                agree on, else the one the `default` rules of that category agree on, else compute: a user
--                rule that puts a kernel in `communication` makes it communication everywhere.
--   pattern      RE2 regular expression, searched anywhere in the name
--   priority     the highest-priority matching rule wins (user rules without a priority get 10000)
--   note         why the rule exists / what it matches
--   source       shipped | user
--   file         file name the rule came from
--   line_no      line of the rule in that file (1 = header)
CREATE OR REPLACE VIEW category_rules AS
WITH f AS (
    SELECT source, file, line_no,
           fields[list_position(header, 'ruleset')] AS ruleset,
           fields[list_position(header, 'applies_to')] AS applies_to,
           fields[list_position(header, 'event_cat')] AS event_cat,
           fields[list_position(header, 'category')] AS category,
           fields[list_position(header, 'subcategory')] AS subcategory,
           lower(trim(fields[list_position(header, 'class')])) AS class,
           fields[list_position(header, 'pattern')] AS pattern,
           fields[list_position(header, 'priority')] AS priority,
           fields[list_position(header, 'note')] AS note
    FROM _category_rule_lines
), r AS (
    SELECT coalesce(nullif(ruleset, ''), 'default') AS ruleset,
           coalesce(nullif(lower(applies_to), ''), 'kernel') AS applies_to,
           nullif(event_cat, '') AS event_cat,
           category,
           nullif(subcategory, '') AS subcategory,
           nullif(class, '') AS class,
           pattern,
           coalesce(TRY_CAST(nullif(priority, '') AS INTEGER), CASE source WHEN 'user' THEN 10000 ELSE 0 END)
               AS priority,
           note,
           source,
           file,
           line_no
    FROM f
    WHERE coalesce(category, '') <> '' AND coalesce(pattern, '') <> ''
), category_class AS (   -- the class the kernel rules of a category agree on
    SELECT ruleset, category, min(class) AS class FROM r
    WHERE applies_to = 'kernel' AND class IS NOT NULL
    GROUP BY ruleset, category HAVING count(DISTINCT class) = 1
)
SELECT r.ruleset, r.applies_to, r.event_cat, r.category, r.subcategory,
       CASE WHEN r.applies_to IN ('kernel', 'kernel_hlo_op') THEN coalesce(r.class, own.class, dflt.class, 'compute')
            END AS class,
       r.pattern, r.priority, r.note, r.source, r.file, r.line_no
FROM r
LEFT JOIN category_class own ON own.ruleset = r.ruleset AND own.category = r.category
LEFT JOIN category_class dflt ON dflt.ruleset = 'default' AND dflt.category = r.category;

-- _rule_precedence(priority, source, file, line_no): the order in which the rules that match one name are
-- tried: the highest priority first; on equal priority user rules before shipped ones, then the earlier file
-- name, then the earlier line. `ORDER BY _rule_precedence(...)` puts the winning rule first.
CREATE OR REPLACE MACRO _rule_precedence(priority, source, file, line_no) AS
    (-priority, source = 'shipped', file, line_no);
