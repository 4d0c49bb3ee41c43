-- lib/names — readable kernel names: template arguments, parameter lists and return types removed.

-- _short_kernel_name(name): a readable kernel name: the leading 'void ', template arguments <...>,
-- parameter lists (...) and the return type are removed, so 'void at::native::elementwise_kernel<128,
-- 4, ...>(int, ...)' becomes 'at::native::elementwise_kernel'. Nested brackets are removed innermost
-- first (up to 12 levels). Names without brackets, or without '::' and a leading 'void ' (such as
-- 'Memset (Device)' or 'Memcpy HtoD (Pageable -> Device)'), are returned unchanged.
CREATE OR REPLACE MACRO _strip_innermost(s) AS
    regexp_replace(regexp_replace(s, '<[^<>]*>', '', 'g'), '\([^()]*\)', '', 'g');

CREATE OR REPLACE MACRO _short_kernel_name(name) AS
    CASE WHEN name IS NULL OR NOT regexp_matches(name, '[<(]') OR NOT regexp_matches(name, '::|^void ') THEN name ELSE
    nullif(trim(regexp_replace(regexp_replace(
        _strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(
        _strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(_strip_innermost(
            replace(replace(name, '(anonymous namespace)', '{anonymous}'), 'operator()', 'operator{}')
        )))))))))))),
        '^(void|[A-Za-z_][A-Za-z0-9_:]*\s+)\s*', ''), '[<>()]', '', 'g')), '') END;
