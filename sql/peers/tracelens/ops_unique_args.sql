-- peers/tracelens/ops_unique_args — TraceLens (0.1.0) ops_unique_args: TraceLens's launcher instances
-- (tl_launchers, peers/tracelens/launchers) grouped by op name, op category, CPU process/thread and input arguments, with
-- statistics of their GPU time (µs) and a summary of the GPU events they launched.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence), read from its reference CSVs in
-- ../shared/reference/tracelens and docs/peers.md; the code is ours.
--
-- Grouping keys (TraceLens's column names): name, op category (tl_op_category, peers/tracelens/op_categories), process_name,
-- process_label, thread_name, Input Dims, Input type, Input Strides, Concrete Inputs; the inference-report
-- layout (tl_ops_unique_args_module) adds parent_module and num_kernels.
--   process_name, process_label, thread_name   args.name / args.labels of the process_name,
--         process_labels and thread_name metadata events of the launcher's pid (and tid), looked up in the
--         trace of the GPU events (for graph replays merged with their capture: the replay trace); the
--         last such event in the file wins; 'Unknown' when there is none.
--   Input Dims, Input type, Input Strides, Concrete Inputs   the launcher's args as Python prints them
--         once lists are tuples (_py_tuple3, lib/pytext): '((8944, 1024), (1024, 2816))',
--         "('c10::BFloat16', 'c10::BFloat16')"; NULL when the launcher has no such arg (a runtime call).
-- Instances are taken in TraceLens's order: file order of the launcher events (launchers of a merged
-- capture trace after those of the replay trace, by start). Over them, pandas's group-by arithmetic:
--   sum, mean      compensated (Kahan) sum left to right; mean = sum / count
--   std            sample standard deviation (ddof 1) by Welford's running update; NULL for one instance
--   median         the middle value, or the mean of the two middle values
-- Kernel details (TreePerfAnalyzer._summarize_kernel_stats in TraceLens/TreePerf/tree_perf.py): the direct
-- GPU events of each instance (those behind its direct kernel time) by GPU start; the group's first instance
-- is the template, and the instances whose list is as long as the template's give one entry per place in the
-- list, named after the template's kernel and stream there, with numpy's arithmetic over those instances
-- (pairwise summation, population std); the others are left out (TraceLens warns). Entries by total duration
-- ascending, then name, then place; trunc_kernel_details cuts names to 64 characters + '...' and rounds the
-- mean as numpy does (rint(mean · 100) / 100).
-- Rows: by total_direct_kernel_time_sum descending, ties by the group's first instance; Percentage (%) =
-- sum / (numpy sum of the sums of all rows of the trace) * 100; Cumulative Percentage (%) = running sum of
-- the percentages in row order.
--
-- On every shared TraceLens reference (7 ops_unique_args.csv files in this layout, the graphs/
-- vllm_decode_full one in the inference layout) every column is equal to TraceLens's, numbers bit for bit
-- and texts character for character (`tracesql report --style tracelens` writes identical files), except:
--   ex_UID   TraceLens's internal id of the group's first instance. Ours is that launcher's event_id (its
--            index in traceEvents), which is TraceLens's id for launchers of the analysed trace; launchers
--            taken from a merged capture trace get ids from TraceLens's own numbering of the merged events,
--            and there the column holds the event_id in the capture trace instead (16 of the 26 graph rows).
-- Known limits, not met by any reference: a tie in total_direct_kernel_time_sum in a trace with more than
-- 16 groups may be ordered differently (TraceLens's sort does not promise an order for ties); how TraceLens
-- prints args of a launcher without them is not known (here NULL).
--
-- @requires lib/pytext peers/float_us peers/tracelens/launchers peers/tracelens/op_categories

-- ---- Python/numpy/pandas arithmetic and text -----------------------------------------------------------

-- _np_pw_block(xs): numpy's pairwise sum of at most 128 doubles, with numpy's order of additions: fewer
-- than 8 values summed left to right from 0.0; otherwise eight running sums over the positions i ≡ 0..7
-- (mod 8) of the first 8·⌊n/8⌋ values, added as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest one
-- by one.
CREATE OR REPLACE MACRO _np_pw_lane(xs, j) AS
    list_reduce(list_slice(xs, j, len(xs) - len(xs) % 8, 8), lambda a, b: a + b);

CREATE OR REPLACE MACRO _np_pw_block(xs) AS
    CASE WHEN len(xs) < 8 THEN list_reduce(xs, lambda a, b: a + b, 0.0::DOUBLE)
         ELSE list_reduce(list_slice(xs, len(xs) - len(xs) % 8 + 1, len(xs)), lambda a, b: a + b,
                          ((_np_pw_lane(xs, 1) + _np_pw_lane(xs, 2)) + (_np_pw_lane(xs, 3) + _np_pw_lane(xs, 4)))
                          + ((_np_pw_lane(xs, 5) + _np_pw_lane(xs, 6)) + (_np_pw_lane(xs, 7) + _np_pw_lane(xs, 8))))
    END;

-- _np_sums(tbl): numpy's sum (np.sum / np.add.reduce of a float64 array) of each list of doubles given as
-- rows of tbl (a table, view or CTE name) with columns id (any type), i (position, 1-based), x; one row
-- (id, s) per id. Above 128 values numpy splits the range at h = ⌊n/2⌋ - ⌊n/2⌋ mod 8 and adds the sums of
-- the two halves. The splitting is unrolled (_np_split, 20 levels: up to 128·2^20 values) into the list
-- of blocks in order, each with the number of halves it closes (c); every block is summed
-- (_np_pw_block), then the block sums are combined on a stack (_np_combine): push the block's sum, then
-- add the top two entries c times.
CREATE OR REPLACE MACRO _np_split(blocks) AS
    flatten(list_transform(blocks, lambda b:
        CASE WHEN b.n > 128
             THEN [{'lo': b.lo, 'n': b.n // 2 - (b.n // 2) % 8, 'c': 0::BIGINT},
                   {'lo': b.lo + b.n // 2 - (b.n // 2) % 8, 'n': b.n - (b.n // 2 - (b.n // 2) % 8), 'c': b.c + 1}]
             ELSE [b] END));

CREATE OR REPLACE MACRO _np_blocks(n) AS
    _np_split(_np_split(_np_split(_np_split(_np_split(_np_split(_np_split(_np_split(_np_split(_np_split(
    _np_split(_np_split(_np_split(_np_split(_np_split(_np_split(_np_split(_np_split(_np_split(_np_split(
        [{'lo': 0::BIGINT, 'n': n::BIGINT, 'c': 0::BIGINT}]))))))))))))))))))));

-- The stack rides in the reduced structs (st) and the list starts with an empty one instead of an initial value:
-- DuckDB before 2.0 types an initial value of another type than the elements as an element.
CREATE OR REPLACE MACRO _np_combine(sums) AS
    list_reduce(list_prepend({'st': []::DOUBLE[], 'v': NULL::DOUBLE, 'c': 0::BIGINT},
                             list_transform(sums, lambda b: {'st': []::DOUBLE[], 'v': b.v::DOUBLE, 'c': b.c::BIGINT})),
        lambda a, b: {'st': list_append(list_slice(a.st, 1, len(a.st) - b.c),
                                        list_reduce(list_reverse(list_slice(a.st, len(a.st) - b.c + 1, len(a.st))),
                                                    lambda acc, x: x + acc, b.v)),
                      'v': NULL::DOUBLE, 'c': 0::BIGINT}).st[1];

-- _np_cumsum_pct(tbl): the running sum of a trace's percentages left to right, added one by one in float64 as
-- numpy's cumsum does. tbl has trace_id, rank (the order) and pct; one row per row of it: trace_id, rank, cum_pct.
CREATE OR REPLACE MACRO _np_cumsum_pct(tbl) AS TABLE
SELECT trace_id,
       unnest(list_reduce(list_prepend({'l': [0.0::DOUBLE], 'x': NULL::DOUBLE},
                                         list({'l': []::DOUBLE[], 'x': pct::DOUBLE} ORDER BY rank)),
                            lambda acc, e: {'l': list_append(acc.l, acc.l[-1] + e.x), 'x': NULL::DOUBLE}).l[2:])
           AS cum_pct,
       unnest(list(rank ORDER BY rank)) AS rank
FROM query_table(tbl) GROUP BY trace_id;

CREATE OR REPLACE MACRO _np_sums(tbl) AS TABLE
WITH v AS (
    SELECT id, i, x::DOUBLE AS x FROM query_table(tbl)
), b AS (
    SELECT id, unnest(list_transform(_np_blocks(n), lambda blk, k: {'lo': blk.lo, 'n': blk.n, 'c': blk.c, 'k': k}))
               AS blk
    FROM (SELECT id, count(*) AS n FROM v GROUP BY id)
), bs AS (
    SELECT b.id, b.blk.k AS k, any_value(b.blk.c) AS c, _np_pw_block(list(v.x ORDER BY v.i)) AS s
    FROM b JOIN v ON v.id = b.id AND v.i > b.blk.lo AND v.i <= b.blk.lo + b.blk.n
    GROUP BY b.id, b.blk.k
)
SELECT id, _np_combine(list({'v': s, 'c': c} ORDER BY k)) AS s FROM bs GROUP BY id;

-- _pd_std(xs): pandas's group-by std (ddof 1): Welford's update, left to right; NULL below 2 values.
CREATE OR REPLACE MACRO _pd_std(xs) AS
    CASE WHEN len(xs) > 1 THEN sqrt(list_reduce(
             list_prepend({'n': 0::BIGINT, 'm': 0.0::DOUBLE, 'q': 0.0::DOUBLE, 'x': NULL::DOUBLE},
                          list_transform(xs, lambda x: {'n': 0::BIGINT, 'm': 0.0::DOUBLE, 'q': 0.0::DOUBLE,
                                                        'x': x::DOUBLE})),
             lambda a, e:
             {'n': a.n + 1, 'm': a.m + (e.x - a.m) / (a.n + 1),
              'q': a.q + (e.x - (a.m + (e.x - a.m) / (a.n + 1))) * (e.x - a.m), 'x': NULL::DOUBLE}
             ).q / (len(xs) - 1)) END;

-- _py_median(xs): the median as numpy and pandas compute it: the middle value, or the mean of the two.
CREATE OR REPLACE MACRO _py_median(xs) AS
    CASE WHEN len(xs) % 2 = 1 THEN list_sort(xs)[len(xs) // 2 + 1]
         ELSE (list_sort(xs)[len(xs) // 2] + list_sort(xs)[len(xs) // 2 + 1]) / 2 END;

-- _py_str(s): Python's repr of a str: single quotes unless the text has a ' and no "; backslash, newline,
-- carriage return and tab escaped ('None' for NULL).
CREATE OR REPLACE MACRO _py_str_body(s) AS
    replace(replace(replace(replace(s, '\', '\\'), chr(10), '\n'), chr(13), '\r'), chr(9), '\t');

CREATE OR REPLACE MACRO _py_str(s) AS
    CASE WHEN s IS NULL THEN 'None'
         WHEN contains(s, '''') AND NOT contains(s, '"') THEN '"' || _py_str_body(s) || '"'
         ELSE '''' || replace(_py_str_body(s), '''', '\''') || '''' END;

-- _tl_int_times: one row per trace: int_us, whether the trace writes its GPU events' ts and dur as JSON
-- integers (µs), as Kineto's older traces do: every GPU event starts and lasts a whole number of µs. TraceLens
-- keeps the parsed values, so numpy sums them as int64 there and as float64 otherwise.
CREATE OR REPLACE VIEW _tl_int_times AS
SELECT trace_id, bool_and(ts_ns % 1000 = 0 AND dur_ns % 1000 = 0) AS int_us
FROM kernels WHERE ts_ns IS NOT NULL AND dur_ns IS NOT NULL
GROUP BY trace_id;

-- _tl_np_num(x, is_int): a numpy sum, min or max of durations as TraceLens prints it inside a list: np.int64(...)
-- over Python ints, np.float64(...) otherwise.
CREATE OR REPLACE MACRO _tl_np_num(x, is_int) AS
    CASE WHEN is_int THEN 'np.int64(' || round(x)::BIGINT || ')' ELSE _np_f64(x) END;

-- _np_f64(x): a float as TraceLens prints a numpy float64 inside a list: np.float64(<Python repr>).
-- (DuckDB's DOUBLE -> VARCHAR is the shortest round-trip text with Python's exponent rules.)
CREATE OR REPLACE MACRO _np_f64(x) AS 'np.float64(' || coalesce(x::VARCHAR, 'nan') || ')';

-- ---- the groups -------------------------------------------------------------------------------------------

-- _tl_process_meta: the names TraceLens gives a CPU process and thread (its tree's metadata): one row per
-- trace, kind ('process_name', 'process_labels', 'thread_name'), pid and tid (NULL but for thread_name)
-- with the value v (args.name, or args.labels for process_labels); the last such event in the file wins.
CREATE OR REPLACE VIEW _tl_process_meta AS
SELECT trace_id, name AS kind, pid, CASE WHEN name = 'thread_name' THEN tid END AS tid,
       arg_max(json_extract_string(args, CASE WHEN name = 'process_labels' THEN '$.labels' ELSE '$.name' END),
               event_id) AS v
FROM metadata WHERE name IN ('process_name', 'process_labels', 'thread_name')
GROUP BY ALL;

-- _tl_no_launcher_args: no launcher_args (the perf report's tree: every launcher is its event).
CREATE OR REPLACE VIEW _tl_no_launcher_args AS
SELECT trace_id, event_id, pid, tid, ts_ns, input_dims, input_types, input_strides, concrete_inputs
FROM events WHERE false;

-- _tl_ops_unique_args(by_module, launchers, categories, gpu_ops, launcher_args): one row per group of launcher
-- instances, with what both layouts need; by_module adds parent_module and num_kernels to the grouping keys. The
-- tree is given by tables: its launcher instances (the columns of tl_launchers), their categories (of
-- tl_op_category), its GPU events (of tl_gpu_event_ops), and the launchers whose thread, start and args are not
-- their event's (launcher_args: trace_id, event_id, pid, tid, ts_ns and the four args columns of events).
-- Columns: trace_id, rank (row order), the keys (name, op_category, parent_module, process_name, process_label,
-- thread_name, input_dims, input_type, input_strides, concrete_inputs, num_kernels), operation_count, d_* / s_*
-- (mean, median, std, min, max, sum of the direct / subtree kernel times, µs), ex_uid, call_stack,
-- kernel_details_summary, trunc_kernel_details, pct, cum_pct.
CREATE OR REPLACE MACRO _tl_ops_unique_args(by_module, launchers, categories, gpu_ops, launcher_args) AS TABLE
WITH meta AS MATERIALIZED (
    SELECT * FROM _tl_process_meta
), lz AS MATERIALIZED (   -- read twice below
    SELECT * FROM query_table(launchers)
), le AS MATERIALIZED (   -- each launcher instance's thread, start and args: its event's, or launcher_args'
    SELECT l.trace_id, l.tl_launcher_trace_id, l.tl_launcher_event_id, l.copy_id,
           CASE WHEN x.event_id IS NULL THEN e.pid ELSE x.pid END AS pid,
           CASE WHEN x.event_id IS NULL THEN e.tid ELSE x.tid END AS tid,
           CASE WHEN x.event_id IS NULL THEN e.ts_ns ELSE x.ts_ns END AS ts_ns,
           CASE WHEN x.event_id IS NULL THEN e.input_dims ELSE x.input_dims END AS input_dims,
           CASE WHEN x.event_id IS NULL THEN e.input_types ELSE x.input_types END AS input_types,
           CASE WHEN x.event_id IS NULL THEN e.input_strides ELSE x.input_strides END AS input_strides,
           CASE WHEN x.event_id IS NULL THEN e.concrete_inputs ELSE x.concrete_inputs END AS concrete_inputs
    FROM lz l
    LEFT JOIN events e ON e.trace_id = l.tl_launcher_trace_id AND e.event_id = l.tl_launcher_event_id
    LEFT JOIN query_table(launcher_args) x ON x.trace_id = l.tl_launcher_trace_id
                                          AND x.event_id = l.tl_launcher_event_id
), texts AS MATERIALIZED (   -- the Python text of each distinct args value (few shapes, many calls)
    SELECT v, _py_tuple3(v::JSON) AS py
    FROM (SELECT input_dims::VARCHAR AS v FROM le UNION SELECT input_types::VARCHAR FROM le
          UNION SELECT input_strides::VARCHAR FROM le UNION SELECT concrete_inputs::VARCHAR FROM le)
    WHERE v IS NOT NULL
), inst AS MATERIALIZED (   -- launcher instances with their keys; ord: TraceLens's order within the trace
    SELECT l.trace_id, l.tl_launcher_trace_id, l.tl_launcher_event_id, l.copy_id, l.name, c.op_category,
           l.direct_kernel_time_us, l.subtree_kernel_time_us,
           coalesce(pn.v, 'Unknown') AS process_name, coalesce(pl.v, 'Unknown') AS process_label,
           coalesce(tn.v, 'Unknown') AS thread_name,
           td.py AS input_dims, tt.py AS input_type, ts.py AS input_strides, tc.py AS concrete_inputs,
           CASE WHEN c.module_path IS NULL OR c.module_path = '' THEN []
                ELSE list_reverse(string_split(c.module_path, '/')) END AS frames,
           CASE WHEN by_module THEN l.direct_kernel_count END AS num_kernels,
           row_number() OVER (PARTITION BY l.trace_id
                              ORDER BY l.tl_launcher_trace_id <> l.trace_id, l.copy_id,
                                       CASE WHEN l.tl_launcher_trace_id <> l.trace_id THEN e.ts_ns END,
                                       l.tl_launcher_trace_id, l.tl_launcher_event_id) AS ord
    FROM lz l
    LEFT JOIN query_table(categories) c ON c.trace_id = l.tl_launcher_trace_id
                                       AND c.tl_launcher_event_id = l.tl_launcher_event_id
    LEFT JOIN le e ON e.trace_id = l.trace_id AND e.tl_launcher_trace_id = l.tl_launcher_trace_id
                  AND e.tl_launcher_event_id = l.tl_launcher_event_id AND e.copy_id IS NOT DISTINCT FROM l.copy_id
    LEFT JOIN meta pn ON pn.trace_id = l.trace_id AND pn.kind = 'process_name' AND pn.pid = e.pid
    LEFT JOIN meta pl ON pl.trace_id = l.trace_id AND pl.kind = 'process_labels' AND pl.pid = e.pid
    LEFT JOIN meta tn ON tn.trace_id = l.trace_id AND tn.kind = 'thread_name' AND tn.pid = e.pid AND tn.tid = e.tid
    LEFT JOIN texts td ON td.v = e.input_dims::VARCHAR LEFT JOIN texts tt ON tt.v = e.input_types::VARCHAR
    LEFT JOIN texts ts ON ts.v = e.input_strides::VARCHAR LEFT JOIN texts tc ON tc.v = e.concrete_inputs::VARCHAR
), grouped AS MATERIALIZED (   -- gid: the instance's group within its trace
    SELECT *, dense_rank() OVER (PARTITION BY trace_id
                                 ORDER BY name, op_category, parent_module, process_name, process_label, thread_name,
                                          input_dims, input_type, input_strides, concrete_inputs, num_kernels) AS gid
    FROM (SELECT *, CASE WHEN by_module THEN CASE WHEN len(frames) = 0 THEN 'NA'
                                                  ELSE 'nn.Module: ' || regexp_replace(frames[1], '_[0-9]+$', '') END
                    END AS parent_module
          FROM inst)
), kern AS MATERIALIZED (   -- direct GPU events of each instance; pos: place in its kernel_details (by GPU start),
                             -- n_k: their number
    SELECT g.trace_id, g.gid, g.ord, o.name AS kernel, coalesce(o.stream::VARCHAR, 'None') AS stream,
           _us_f64(o.dur_ns) AS dur_us,
           row_number() OVER (PARTITION BY g.trace_id, g.ord ORDER BY o.ts_ns, o.event_id) AS pos,
           count(*) OVER (PARTITION BY g.trace_id, g.ord) AS n_k
    FROM query_table(gpu_ops) o
    JOIN grouped g ON g.trace_id = o.trace_id AND g.tl_launcher_trace_id = o.tl_launcher_trace_id
                  AND g.tl_launcher_event_id = o.tl_launcher_event_id
                  AND g.copy_id IS NOT DISTINCT FROM _tl_copy_id(o.tl_launcher_trace_id, o.capture_trace_id,
                                                                 o.launch_event_id)
    WHERE o.tl_linked
), tmpl AS (   -- each group's template: its first instance, and the length of its list
    SELECT trace_id, gid, min(ord) AS t_ord, arg_min(n_k, ord) AS t_n FROM kern GROUP BY ALL
), kx AS MATERIALIZED (   -- kernel entries as _np_sums input: id (group, place), i (instance order), x (duration,
                          -- µs), over the instances whose list is as long as the template's
    SELECT {'t': k.trace_id, 'g': k.gid, 'pos': k.pos} AS id,
           row_number() OVER (PARTITION BY k.trace_id, k.gid, k.pos ORDER BY k.ord) AS i, k.dur_us AS x, k.pos,
           k.ord = t.t_ord AS is_template, k.kernel, k.stream
    FROM kern k JOIN tmpl t ON t.trace_id = k.trace_id AND t.gid = k.gid AND k.n_k = t.t_n
), kmean AS MATERIALIZED (
    SELECT id, s AS total, s / n AS mean, n
    FROM _np_sums('kx') JOIN (SELECT id, count(*) AS n FROM kx GROUP BY id) USING (id)
), kdev AS (   -- squared deviations from the entry's mean, for numpy's std
    SELECT kx.id, kx.i, (kx.x - m.mean) * (kx.x - m.mean) AS x FROM kx JOIN kmean m USING (id)
), kent AS (   -- each entry: the template's kernel name and stream at that place, numpy's statistics
    SELECT kx.id, any_value(kx.kernel) FILTER (WHERE kx.is_template) AS kernel,
           any_value(kx.stream) FILTER (WHERE kx.is_template) AS stream, any_value(m.n) AS n,
           any_value(m.total) AS total, any_value(m.mean) AS mean,
           _py_median(list(kx.x)) AS median, sqrt(any_value(d.s) / any_value(m.n)) AS std,
           min(kx.x) AS mn, max(kx.x) AS mx
    FROM kx JOIN kmean m USING (id) JOIN _np_sums('kdev') d USING (id)
    GROUP BY kx.id
), kdet AS (
    SELECT id.t AS trace_id, id.g AS gid,
           '[' || string_agg('{''name'': ' || _py_str(kernel) || ', ''stream'': ' || stream
                             || ', ''count'': ' || n || ', ''total_duration_us'': ' || _tl_np_num(total, it.int_us)
                             || ', ''mean_duration_us'': ' || _np_f64(mean)
                             || ', ''median_duration_us'': ' || _np_f64(median)
                             || ', ''std_dev_duration_us'': ' || _np_f64(std)
                             || ', ''min_duration_us'': ' || _tl_np_num(mn, it.int_us)
                             || ', ''max_duration_us'': ' || _tl_np_num(mx, it.int_us)
                             || '}', ', ' ORDER BY total, kernel, id.pos) || ']' AS kernel_details_summary,
           '[' || string_agg('{''name'': '
                             || _py_str(CASE WHEN length(kernel) > 64 THEN left(kernel, 64) || '...'
                                             ELSE kernel END)
                             || ', ''stream'': ' || stream
                             || ', ''mean_duration_us'': ' || _np_f64(round_even(mean * 100.0, 0) / 100.0) || '}',
                             ', ' ORDER BY total, kernel, id.pos) || ']' AS trunc_kernel_details
    FROM kent LEFT JOIN _tl_int_times it ON it.trace_id = kent.id.t GROUP BY ALL
), g AS MATERIALIZED (
    SELECT trace_id, gid, any_value(name) AS name, any_value(op_category) AS op_category,
           any_value(parent_module) AS parent_module, any_value(process_name) AS process_name,
           any_value(process_label) AS process_label, any_value(thread_name) AS thread_name,
           any_value(input_dims) AS input_dims, any_value(input_type) AS input_type,
           any_value(input_strides) AS input_strides, any_value(concrete_inputs) AS concrete_inputs,
           any_value(num_kernels) AS num_kernels, count(*) AS operation_count,
           list(direct_kernel_time_us ORDER BY ord) AS dl, list(subtree_kernel_time_us ORDER BY ord) AS sl,
           min(ord) AS first_ord, arg_min(tl_launcher_event_id, ord) AS ex_uid,
           arg_min('[' || array_to_string(list_transform(list_prepend(name, list_transform(frames, lambda f: 'nn.Module: ' || f)),
                                                         lambda x: _py_str(x)), ', ') || ']', ord) AS call_stack
    FROM grouped GROUP BY trace_id, gid
), ranked AS MATERIALIZED (
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY d_sum DESC, first_ord) AS rank
    FROM (SELECT *, _pd_sum(dl) AS d_sum, _pd_sum(sl) AS s_sum FROM g)
), rx AS (   -- the sums of the rows as _np_sums input, for the trace's total
    SELECT trace_id AS id, rank AS i, d_sum AS x FROM ranked
), pct AS (
    SELECT r.trace_id, r.rank, r.d_sum / t.s * 100 AS pct
    FROM ranked r JOIN _np_sums('rx') t ON t.id = r.trace_id
), cum AS (   -- running sum of the percentages, left to right
    SELECT * FROM _np_cumsum_pct('pct')
)
SELECT r.trace_id, r.rank, r.name, r.op_category, r.parent_module, r.process_name, r.process_label, r.thread_name,
       r.input_dims, r.input_type, r.input_strides, r.concrete_inputs, r.num_kernels, r.operation_count,
       r.d_sum / len(r.dl) AS d_mean, r.s_sum / len(r.sl) AS s_mean,
       _py_median(r.dl) AS d_median, _py_median(r.sl) AS s_median, _pd_std(r.dl) AS d_std, _pd_std(r.sl) AS s_std,
       list_min(r.dl) AS d_min, list_min(r.sl) AS s_min, list_max(r.dl) AS d_max, list_max(r.sl) AS s_max,
       r.d_sum, r.s_sum, r.ex_uid, r.call_stack, k.kernel_details_summary, k.trunc_kernel_details, p.pct, c.cum_pct
FROM ranked r
JOIN pct p ON p.trace_id = r.trace_id AND p.rank = r.rank
JOIN cum c ON c.trace_id = r.trace_id AND c.rank = r.rank
LEFT JOIN kdet k ON k.trace_id = r.trace_id AND k.gid = r.gid;

-- ---- public views -------------------------------------------------------------------------------------------

-- tl_ops_unique_args: TraceLens's ops_unique_args.csv (perf report layout), one row per trace and group of
-- launcher instances with the same name, op category, process, thread and input arguments; TraceLens's
-- column names, rows in its order (rank).
--   trace_id                              the trace (of the GPU events)
--   name                                  launcher name (cpu_op, or runtime call without a cpu_op above it)
--   op category                           TraceLens op category of the instances (tl_op_category)
--   process_name, process_label, thread_name   the launcher's CPU process and thread ('Unknown' if unnamed)
--   Input Dims, Input type, Input Strides, Concrete Inputs   the launcher's args, Python tuple text
--   operation_count                       launcher instances in the group
--   total_direct_kernel_time_{mean,median,std,min,max,sum}    over the instances' direct kernel time (µs;
--                                         tl_launchers.direct_kernel_time_us); std is the sample std, NULL for
--                                         one instance
--   total_subtree_kernel_time_{mean,median,std,min,max,sum}   the same over their subtree kernel time (µs)
--   ex_UID                                event_id of the group's first instance (see the top of this file)
--   kernel_details_summary                Python list text: per kernel entry name, stream, count, and the
--                                         total, mean, median, std (population), min, max of its duration (µs)
--   trunc_kernel_details                  the same with names cut to 64 characters and the mean to 2 decimals
--   Percentage (%)                        100 · total_direct_kernel_time_sum / its sum over the trace's rows
--   Cumulative Percentage (%)             running sum of Percentage (%) in row order
--   rank                                  row order in TraceLens's file (1 = most direct kernel time)
-- @output report-tracelens 5 ops_unique_args EXCLUDE rank ORDER BY trace_id, rank
CREATE OR REPLACE VIEW tl_ops_unique_args AS
SELECT trace_id, name, op_category AS "op category", process_name, process_label, thread_name,
       input_dims AS "Input Dims", input_type AS "Input type", input_strides AS "Input Strides",
       concrete_inputs AS "Concrete Inputs", operation_count,
       d_mean AS total_direct_kernel_time_mean, s_mean AS total_subtree_kernel_time_mean,
       d_median AS total_direct_kernel_time_median, s_median AS total_subtree_kernel_time_median,
       d_std AS total_direct_kernel_time_std, s_std AS total_subtree_kernel_time_std,
       d_min AS total_direct_kernel_time_min, s_min AS total_subtree_kernel_time_min,
       d_max AS total_direct_kernel_time_max, s_max AS total_subtree_kernel_time_max,
       d_sum AS total_direct_kernel_time_sum, s_sum AS total_subtree_kernel_time_sum,
       ex_uid AS "ex_UID", kernel_details_summary, trunc_kernel_details,
       pct AS "Percentage (%)", cum_pct AS "Cumulative Percentage (%)", rank
FROM _tl_ops_unique_args(false, 'tl_launchers', 'tl_op_category', 'tl_gpu_event_ops', '_tl_no_launcher_args')
ORDER BY trace_id, rank;
