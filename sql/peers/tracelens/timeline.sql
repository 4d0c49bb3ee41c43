-- peers/tracelens/timeline — TraceLens (0.1.0) style: the peer's definitions, reproduced so that its numbers can be checked against
-- ours (`tracesql report --style tracelens`). Facts about TraceLens's definitions are credited to
-- TraceLens (AMD-AGI/TraceLens, MIT licence); see docs/peers.md. The code is ours.
--
-- TraceLens works in float64 µs: ts and dur as parsed from the JSON text, ends as ts + dur. The views
-- below do the same arithmetic (_us_f64) so that the results agree with TraceLens to float precision.
--
-- @requires peers/float_us lib/intervals gpu/activity categories/kernels peers/tracelens/links

-- _tl_linked_gpu: GPU events TraceLens links to a CPU launch (_tl_links, peers/tracelens/links: a graph
-- launch owns every GPU event with its correlation; other calls reach their GPU event through an ac2g
-- flow start and end).
CREATE OR REPLACE VIEW _tl_linked_gpu AS
SELECT trace_id, event_id FROM _tl_links WHERE tl_linked;

-- _tl_gpu: the GPU events of TraceLens's gpu_timeline (cat kernel, gpu_memcpy, gpu_memset; linked only),
-- all devices and streams of a trace pooled, with their bucket (their category under the `tracelens` kernel
-- rules, sql/peers/tracelens/rules/tracelens.csv: memcpy, communication or computation) and float64 µs
-- start/end.
CREATE OR REPLACE VIEW _tl_gpu AS
SELECT a.trace_id, a.event_id, a.cat, a.name, coalesce(c.kernel_category, 'computation') AS bucket,
       _us_f64(a.ts_ns) AS s, _us_f64(a.ts_ns) + _us_f64(a.dur_ns) AS e
FROM gpu_activity a JOIN _tl_linked_gpu USING (trace_id, event_id)
LEFT JOIN kernel_name_categories c ON c.ruleset = 'tracelens' AND c.cat IS NOT DISTINCT FROM a.cat AND c.name = a.name
WHERE a.cat IN ('kernel', 'gpu_memcpy', 'gpu_memset');

CREATE OR REPLACE VIEW _tl_members AS
SELECT trace_id, 0 AS grp, CASE bucket WHEN 'computation' THEN 'C' WHEN 'communication' THEN 'K' ELSE 'M' END AS cls,
       s, e
FROM _tl_gpu;

-- tl_gpu_timeline: TraceLens's gpu_timeline, 8 rows per trace in TraceLens's order.
--   type        computation_time |U(comp)|, exposed_comm_time |U(comm) - U(comp)|, exposed_memcpy_time
--               |U(memcpy) - U(comp) - U(comm)|, busy_time |U(all)|, idle_time total - busy, total_time
--               last end - first start, total_comm_time |U(comm)|, total_memcpy_time |U(memcpy)|
--   time ms     the time in ms
--   percent     100 time / total_time
-- @output report-tracelens 1 gpu_timeline
CREATE OR REPLACE VIEW tl_gpu_timeline AS
WITH p AS (
    SELECT trace_id, C_len, K_len, M_len, CK_len, ALL_len, first_s AS ALL_fs, last_e AS ALL_le
    FROM _class_unions('_tl_members')
), v AS (
    SELECT trace_id, coalesce(C_len, 0.0) AS comp, coalesce(CK_len, 0.0) - coalesce(C_len, 0.0) AS exp_comm,
           ALL_len - coalesce(CK_len, 0.0) AS exp_memcpy, ALL_len AS busy, (ALL_le - ALL_fs) - ALL_len AS idle,
           ALL_le - ALL_fs AS total, coalesce(K_len, 0.0) AS comm, coalesce(M_len, 0.0) AS memcpy
    FROM p
), r AS (
    SELECT trace_id, total, unnest([1, 2, 3, 4, 5, 6, 7, 8]) AS k,
           unnest(['computation_time', 'exposed_comm_time', 'exposed_memcpy_time', 'busy_time', 'idle_time',
                   'total_time', 'total_comm_time', 'total_memcpy_time']) AS "type",
           unnest([comp, exp_comm, exp_memcpy, busy, idle, total, comm, memcpy]) AS us
    FROM v
)
SELECT trace_id, "type", us / 1000 AS "time ms", 100 * us / total AS "percent"
FROM r ORDER BY trace_id, k;
