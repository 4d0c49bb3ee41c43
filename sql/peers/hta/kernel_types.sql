-- peers/hta/kernel_types — HTA's kernel type breakdown and its communication/computation overlap.
--
-- @requires peers/hta/base

-- hta_kernel_type_breakdown_by_trace: HTA's kernel type breakdown (with memory kernels) per trace: the time
-- line of each rank cut at the merged-interval boundaries of the COMPUTATION, COMMUNICATION and MEMORY
-- kernels; each piece is labelled by the types running ('COMPUTATION overlapping MEMORY', ...) and its
-- length truncated to whole µs as HTA does.
--   trace_id; kernel_type   label;  sum  µs (integer);  percentage  100 sum / the trace's total, rounded to
--   1 decimal
-- @output report-hta 3 kernel_type_breakdown ORDER BY trace_id, sum DESC
CREATE OR REPLACE VIEW hta_kernel_type_breakdown_by_trace AS
WITH isl AS (
    SELECT trace_id, grp, set_name, s, e,
           max(e) OVER (PARTITION BY trace_id, grp, set_name ORDER BY s, e
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_max_e
    FROM _hta_members WHERE set_name IN ('COMPUTATION', 'COMMUNICATION', 'MEMORY')
), isl2 AS (
    SELECT *, sum(CASE WHEN prev_max_e IS NULL OR s > prev_max_e THEN 1 ELSE 0 END)
              OVER (PARTITION BY trace_id, grp, set_name ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
    FROM isl
), merged AS (
    SELECT trace_id, grp, set_name, min(s) AS s, max(e) AS e,
           CASE set_name WHEN 'COMPUTATION' THEN 1 WHEN 'COMMUNICATION' THEN 2 ELSE 4 END AS bit
    FROM isl2 GROUP BY trace_id, grp, set_name, island
), bounds AS (
    SELECT trace_id, grp, s AS t, bit AS status FROM merged
    UNION ALL SELECT trace_id, grp, e, -bit FROM merged
), run AS (
    SELECT trace_id, grp, t, sum(status) OVER w AS running, lead(t) OVER w AS next_t
    FROM bounds WINDOW w AS (PARTITION BY trace_id, grp ORDER BY t, status ROWS UNBOUNDED PRECEDING)
), labelled AS (
    SELECT trace_id, concat_ws(' overlapping ',
               CASE WHEN running & 1 <> 0 THEN 'COMPUTATION' END,
               CASE WHEN running & 2 <> 0 THEN 'COMMUNICATION' END,
               CASE WHEN running & 4 <> 0 THEN 'MEMORY' END) AS kernel_type,
           trunc(next_t - t)::BIGINT AS dur
    FROM run WHERE running > 0
), sums AS (SELECT trace_id, kernel_type, sum(dur)::BIGINT AS sum FROM labelled GROUP BY ALL)
SELECT trace_id, kernel_type, sum, round(100.0 * sum / sum(sum) OVER (PARTITION BY trace_id), 1) AS percentage
FROM sums ORDER BY trace_id, sum DESC;

-- hta_kernel_type_breakdown: hta_kernel_type_breakdown_by_trace summed over every trace of the dataset, as
-- HTA pools every rank of a trace directory.
--   kernel_type   label;  sum  µs (integer, Σ of the traces' sums);  percentage  100 sum / total, rounded to
--   1 decimal
CREATE OR REPLACE VIEW hta_kernel_type_breakdown AS
WITH sums AS (SELECT kernel_type, sum(sum)::BIGINT AS sum FROM hta_kernel_type_breakdown_by_trace GROUP BY kernel_type)
SELECT kernel_type, sum, round(100.0 * sum / sum(sum) OVER (), 1) AS percentage
FROM sums ORDER BY sum DESC;

-- hta_comm_comp_overlap: per trace (rank), HTA's communication/computation overlap:
--   comp_comm_overlap_pctg   100 |U(COMMUNICATION) ∩ U(COMPUTATION)| / |U(COMMUNICATION)|, rounded to 2
--                            decimals; NULL when the rank has no communication kernels (HTA: NaN)
-- @output report-hta 5 comm_comp_overlap
CREATE OR REPLACE VIEW hta_comm_comp_overlap AS
WITH u AS (
    SELECT trace_id, grp, max(union_len) FILTER (WHERE set_name = 'COMPUTATION') AS COMPUTATION,
           max(union_len) FILTER (WHERE set_name = 'COMMUNICATION') AS COMMUNICATION
    FROM _hta_unions GROUP BY trace_id, grp
), both_u AS (
    SELECT trace_id, grp, 'CK' AS set_name, s, e FROM _hta_members WHERE set_name IN ('COMPUTATION', 'COMMUNICATION')
), ck AS (SELECT * FROM _interval_union('both_u'))
SELECT u.trace_id, u.grp AS rank,
       round(100 * ((coalesce(u.COMPUTATION, 0) + u.COMMUNICATION - ck.union_len) / u.COMMUNICATION), 2)
           AS comp_comm_overlap_pctg
FROM u LEFT JOIN ck ON ck.trace_id = u.trace_id AND ck.grp = u.grp;
