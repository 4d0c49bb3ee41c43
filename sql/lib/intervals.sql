-- lib/intervals — interval algebra: the length of a union of closed intervals, per group and per class; the
-- innermost of nested intervals around a point.
--
-- Every union in tracesql is the same one-pass rule: intervals sorted by start, each adds the part of it
-- that ends after the largest end of the intervals before it (touching intervals merge).

-- _tree_busy_ns(s, e, prev_end): the part of [s, e] after prev_end (the latest end of the intervals
-- before it in start order): summed over intervals sorted by start, the length of their union (in the unit
-- of s and e: ns in the native views, float64 µs in the peer styles).
CREATE OR REPLACE MACRO _tree_busy_ns(s, e, prev_end) AS greatest(e - greatest(s, coalesce(prev_end, s)), 0);

-- _interval_union(tbl): length of the union of closed intervals [s, e] per (trace_id, grp, set_name).
-- tbl names a view/table with columns trace_id, grp, set_name, s, e (any numeric type; grp any type).
-- One window pass: sorted by start, each interval adds the part of it that ends after the largest end of
-- the intervals before it, e - max(s, previous max end), when positive. (An interval that starts after
-- that largest end opens a new island; touching intervals merge.) One row per group:
--   union_len    total length covered (same unit as s, e)
--   first_s      earliest start;  last_e  latest end
--   n_intervals  input intervals;  n_islands  disjoint islands after merging
CREATE OR REPLACE MACRO _interval_union(tbl) AS TABLE
WITH ordered AS (
    SELECT trace_id, grp, set_name, s, e,
           max(e) OVER (PARTITION BY trace_id, grp, set_name ORDER BY s
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_max_e
    FROM query_table(tbl)
)
SELECT trace_id, grp, set_name,
       sum(CASE WHEN prev_max_e IS NULL OR s >= prev_max_e THEN e - s
                WHEN e > prev_max_e THEN e - prev_max_e ELSE 0 END) AS union_len,
       min(s) AS first_s, max(e) AS last_e, count(*) AS n_intervals,
       count(*) FILTER (WHERE prev_max_e IS NULL OR s > prev_max_e) AS n_islands
FROM ordered GROUP BY trace_id, grp, set_name;

-- _class_unions(tbl): union lengths of three interval classes and their combinations in one pass, per
-- (trace_id, grp). tbl has columns trace_id, grp, cls ('C', 'K' or 'M'), s, e. Same rule as
-- _interval_union, with one running maximum of earlier ends per class over a single sort by start:
--   C_len, K_len, M_len        |U(C)|, |U(K)|, |U(M)|
--   CK_len                     |U(C ∪ K)|
--   ALL_len                    |U(C ∪ K ∪ M)|
--   first_s, last_e, n         earliest start, latest end, number of intervals
-- Differences of these give the exposed parts: |U(K) - U(C)| = CK_len - C_len, |U(M) - U(C ∪ K)| =
-- ALL_len - CK_len, and the overlap |U(K) ∩ U(C)| = C_len + K_len - CK_len.
CREATE OR REPLACE MACRO _contrib(s, e, p) AS
    CASE WHEN p IS NULL OR s >= p THEN e - s WHEN e > p THEN e - p ELSE 0 END;

CREATE OR REPLACE MACRO _class_unions(tbl) AS TABLE
WITH o AS (
    SELECT trace_id, grp, cls, s, e,
           max(CASE WHEN cls = 'C' THEN e END) OVER w AS pc,
           max(CASE WHEN cls = 'K' THEN e END) OVER w AS pk,
           max(CASE WHEN cls = 'M' THEN e END) OVER w AS pm
    FROM query_table(tbl)
    WINDOW w AS (PARTITION BY trace_id, grp ORDER BY s ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
)
SELECT trace_id, grp,
       sum(CASE WHEN cls = 'C' THEN _contrib(s, e, pc) END) AS C_len,
       sum(CASE WHEN cls = 'K' THEN _contrib(s, e, pk) END) AS K_len,
       sum(CASE WHEN cls = 'M' THEN _contrib(s, e, pm) END) AS M_len,
       sum(CASE WHEN cls IN ('C', 'K') THEN _contrib(s, e, greatest(pc, pk)) END) AS CK_len,
       sum(_contrib(s, e, greatest(pc, pk, pm))) AS ALL_len,
       min(s) AS first_s, max(e) AS last_e, count(*) AS n
FROM o GROUP BY trace_id, grp;

-- _innermost_interval(intervals, probes): for each probe, the innermost interval around it on its thread.
-- intervals names a view/table with columns trace_id, pid, tid, event_id, ts_ns, end_ns (end_ns > ts_ns; the
-- intervals of a thread nest, as a call stack's); probes one with trace_id, pid, tid, event_id, ts_ns. One pass
-- per thread: +1 at each start, -1 at each end, 0 at each probe, in time order (at one time: ends, then starts,
-- longest first, then probes), so a probe's depth is the number of intervals open around it and the innermost
-- is the last one to start at depth - 1 before it (an as-of join). A probe at an interval's start is inside it,
-- at its end outside. One row per probe inside at least one interval:
--   trace_id, event_id    the probe
--   interval_event_id     the innermost interval around it
CREATE OR REPLACE MACRO _innermost_interval(intervals, probes) AS TABLE
WITH b AS (
    SELECT trace_id, pid, tid, ts_ns AS t, 1 AS kind, -end_ns AS neg_end, 0 AS probe, event_id, 1 AS delta
    FROM query_table(intervals)
    UNION ALL
    SELECT trace_id, pid, tid, end_ns, 0, 0, 0, NULL, -1 FROM query_table(intervals)
    UNION ALL
    SELECT trace_id, pid, tid, ts_ns, 1, 0, 1, event_id, 0 FROM query_table(probes)
), d AS MATERIALIZED (
    SELECT * FROM (
        SELECT *, (sum(delta) OVER w - delta)::INTEGER AS depth, row_number() OVER w AS pos FROM b
        WINDOW w AS (PARTITION BY trace_id, pid, tid ORDER BY t, kind, neg_end, probe, event_id
                     ROWS UNBOUNDED PRECEDING))
    WHERE kind = 1
)
SELECT k.trace_id, k.event_id, a.event_id AS interval_event_id
FROM (SELECT * FROM d WHERE probe = 1 AND depth > 0) k
ASOF JOIN (SELECT * FROM d WHERE probe = 0) a
  ON k.trace_id = a.trace_id AND k.pid = a.pid AND k.tid = a.tid AND k.depth - 1 = a.depth AND k.pos > a.pos;
