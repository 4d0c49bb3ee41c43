-- lib/csv — one line of a CSV file parsed into its fields (the rule files are read as text).

-- Parse one CSV line into its fields (quoted fields unquoted, unquoted ones trimmed).
CREATE OR REPLACE MACRO _csv_fields(line) AS
    list_transform(
        regexp_extract_all(line || ',', '\s*("(?:[^"]|"")*"|[^,"]*)\s*,', 1),
        lambda f: CASE WHEN starts_with(trim(f), '"') THEN replace(trim(f)[2:-2], '""', '"') ELSE trim(f) END);
