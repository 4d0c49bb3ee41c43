-- peers/float_us — times as the float64 µs a JSON parser reads from the trace: the arithmetic both peers
-- (TraceLens, HTA) do, reproduced by their styles. Native views use int64 ns.

-- _us_f64(ns): a time in ns as the float64 µs value a JSON parser gives for the trace's decimal text.
-- Below 2^53 ns the int64 -> double conversion is exact and the division correctly rounded, so the
-- result equals the parsed text; above it (epoch-ns clocks) the decimal text is rebuilt and cast.
-- Used only by the peer styles (tracelens, hta), which compute in float64 µs; native views use int64 ns.
CREATE OR REPLACE MACRO _us_f64(ns) AS
    CASE WHEN ns IS NULL THEN NULL::DOUBLE
         WHEN abs(ns) < 9007199254740992 THEN ns::DOUBLE / 1000.0
         ELSE printf('%d.%03d', ns // 1000, ns % 1000)::DOUBLE END;

-- _pd_sum(xs): pandas's group-by sum: Kahan-compensated, left to right.
-- (Each value rides in a struct of the accumulator's type, after a zero one.) Both peers sum float64 µs this way.
CREATE OR REPLACE MACRO _pd_sum(xs) AS
    CASE WHEN xs IS NOT NULL THEN
    list_reduce(list_prepend({'s': 0.0::DOUBLE, 'c': 0.0::DOUBLE},
                             list_transform(xs, lambda x: {'s': x::DOUBLE, 'c': 0.0::DOUBLE})),
                lambda a, e: {'s': a.s + (e.s - a.c), 'c': ((a.s + (e.s - a.c)) - a.s) - (e.s - a.c)}).s END;
