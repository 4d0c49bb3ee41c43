"""The derived tables stored at ingest (the SQL library's @stores declarations, schemas in
schema.DERIVED_TABLES) hold exactly what their build views compute."""
import pytest

from tests.test_tree import NEST
from tracesql.store.schema import DERIVED_TABLES, columns
from tracesql.store.sqlmodules import stored_tables


def test_stored_tables_are_declared_once_with_a_schema():
    assert sorted(stored_tables()) == sorted(DERIVED_TABLES)


@pytest.mark.parametrize("table", list(DERIVED_TABLES))
def test_stored_table_equals_its_build_view(ds, trace_ids, table):
    build = stored_tables()[table].stores[table]
    got = ds.con.execute(f"DESCRIBE SELECT * FROM {build}").fetchall()
    assert [(r[0], r[1]) for r in got] == [("trace_id", "VARCHAR")] + [(c, t) for c, t, _ in columns(table)]
    # the build view computed once (it is the costly side), compared with the stored table both ways
    ds.con.execute(f"CREATE TEMP TABLE _built_{table} AS SELECT * FROM {build}")
    try:
        n_stored = ds.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        n_built = ds.con.execute(f"SELECT count(*) FROM _built_{table}").fetchall()[0][0]
        assert n_stored == n_built > 0
        per_dataset = [c for c, _, _ in columns(table) if c in ("thread_key", "nest_pos")]
        cols = f"* EXCLUDE ({', '.join(per_dataset)})" if per_dataset else "*"
        diff = ds.con.execute(f"""SELECT count(*) FROM (
            (SELECT {cols} FROM {table} EXCEPT ALL SELECT {cols} FROM _built_{table})
            UNION ALL
            (SELECT {cols} FROM _built_{table} EXCEPT ALL SELECT {cols} FROM {table}))""").fetchall()[0][0]
    finally:
        ds.con.execute(f"DROP TABLE temp.main._built_{table}")
    assert diff == 0  # thread_key and nest_pos number threads and positions per trace at ingest, per dataset here
    # every trace has its rows: the nesting covers every CPU duration event of each trace
    if table == "cpu_nesting":
        per_trace = dict(ds.con.execute("""SELECT trace_id, count(*) FROM events WHERE dur_ns IS NOT NULL
            AND ts_ns IS NOT NULL GROUP BY ALL""").fetchall())
        stored = dict(ds.con.execute("SELECT trace_id, count(*) FROM cpu_nesting GROUP BY ALL").fetchall())
        assert stored == per_trace
        assert stored[trace_ids["nvidia/h100_qwen_infer.json.gz"]] == 10372


def test_thread_key_is_per_trace(ds):
    # thread_key numbers the (pid, tid) pairs of each trace from 1
    bad = ds.con.execute(f"""SELECT count(*) FROM (SELECT trace_id, count(DISTINCT (pid, tid)) AS n,
        min(thread_key) AS lo, max(thread_key) AS hi FROM {NEST} GROUP BY trace_id)
        WHERE lo <> 1 OR hi <> n""").fetchall()[0][0]
    assert bad == 0


def test_nest_pos_orders_ancestors_first(ds):
    # within a trace and thread, an event's parent always has a smaller stored nest_pos
    bad = ds.con.execute("""SELECT count(*) FROM cpu_nesting c JOIN cpu_nesting p
        ON p.trace_id = c.trace_id AND p.event_id = c.parent_event_id
        WHERE NOT (p.nest_pos < c.nest_pos AND p.thread_key = c.thread_key)""").fetchall()[0][0]
    n = ds.con.execute("SELECT count(parent_event_id) FROM cpu_nesting").fetchall()[0][0]
    assert bad == 0 and n > 100_000


def test_ingest_unlinked_count_is_the_stored_links(ds, trace_ids):
    # the ingest summary's "GPU events without a launch" counts gpu_launch_links.linked = false
    rows = ds.con.execute("""SELECT t.trace_id, t.gpu_events_unlinked, s.unlinked_events FROM traces t
        JOIN gpu_link_summary s USING (trace_id)""").fetchall()
    assert len(rows) == len(trace_ids) and all(r[1] == r[2] for r in rows)
    assert {r[0]: r[1] for r in rows}[trace_ids["nvidia/h100_qwen_infer.json.gz"]] == 509


def test_profiler_steps_and_stored_timeline(ds, trace_ids):
    # h100_qwen_infer: one CPU ProfilerStep#6 at ts 1428625731896.179 us lasting 47151.395 us (the file's
    # other 'ProfilerStep#6' is its gpu_user_annotation); the X events span 1428625731456.483 to
    # 1428625781296.515 us (the profiler window of its whole-trace timeline rows)
    t = trace_ids["nvidia/h100_qwen_infer.json.gz"]
    steps = ds.con.execute("SELECT name, step_number, cat, ts_ns, dur_ns, end_ns FROM profiler_steps "
                           "WHERE trace_id = ?", [t]).fetchall()
    assert steps == [("ProfilerStep#6", 6, "user_annotation", 1428625731896179, 47151395,
                      1428625731896179 + 47151395)]
    counts = dict(ds.con.execute("SELECT trace_id, count(*) FROM profiler_steps GROUP BY ALL").fetchall())
    assert counts[trace_ids["nvidia/kineto_2021_v1_8.json.gz"]] == 6  # cpu_op ranges in PyTorch 1.8 traces
    assert counts[trace_ids["nvidia/hta_cuda_graphs_rank0.json.gz"]] == 5
    rows = ds.con.execute("SELECT step, pooled, device, window_ns, busy_ns, span_ns FROM gpu_timeline_all "
                          "WHERE trace_id = ? ORDER BY step NULLS FIRST, pooled DESC", [t]).fetchall()
    assert rows[:2] == [(None, True, None, 1428625781296515 - 1428625731456483, 45647300, 49652832),
                        (None, False, 0, 1428625781296515 - 1428625731456483, 45647300, 49652832)]
    assert [r[:4] for r in rows[2:]] == [("ProfilerStep#6", True, None, 47151395),
                                         ("ProfilerStep#6", False, 0, 47151395)]


@pytest.mark.parametrize("trace, expected", [
    # events, max op_depth, max module_depth, sum of step_depth, max runtime_depth
    ("nvidia/h100_qwen_infer.json.gz", (10372, 4, 4, 10260, 0)),
    ("nvidia/hta_cuda_graphs_rank0.json.gz", (59470, 6, 0, 33684, 1)),
])
def test_family_depths_count_the_ancestors(ds, trace_ids, trace, expected):
    # op_depth, module_depth, ... (running sums at ingest) equal the ancestors of each kind found by walking
    # up the parent links
    got = ds.con.execute(f"""
    WITH RECURSIVE up(event_id, anc_id) AS (
        SELECT event_id, parent_event_id FROM cpu_nesting WHERE trace_id = $t AND parent_event_id IS NOT NULL
        UNION ALL
        SELECT u.event_id, p.parent_event_id FROM up u JOIN cpu_nesting p
          ON p.trace_id = $t AND p.event_id = u.anc_id WHERE p.parent_event_id IS NOT NULL
    ), fam AS (
        SELECT u.event_id, count(*) AS depth,
               count(*) FILTER (WHERE a.cat = 'cpu_op') AS op,
               count(*) FILTER (WHERE a.cat = 'python_function' AND starts_with(a.name, 'nn.Module: ')) AS module,
               count(*) FILTER (WHERE a.cat = 'user_annotation') AS annotation,
               count(*) FILTER (WHERE a.cat IN ('user_annotation', 'cpu_op')
                                AND starts_with(a.name, 'ProfilerStep#')) AS step,
               count(*) FILTER (WHERE a.cat IN ('cuda_runtime', 'cuda_driver')) AS runtime
        FROM up u JOIN {NEST} a ON a.trace_id = $t AND a.event_id = u.anc_id GROUP BY ALL
    )
    SELECT count(*) FILTER (WHERE (n.depth, n.op_depth, n.module_depth, n.annotation_depth, n.step_depth,
                                   n.runtime_depth) IS DISTINCT FROM
                                  (coalesce(f.depth, 0), coalesce(f.op, 0), coalesce(f.module, 0),
                                   coalesce(f.annotation, 0), coalesce(f.step, 0), coalesce(f.runtime, 0))),
           count(*), max(n.op_depth), max(n.module_depth), sum(n.step_depth), max(n.runtime_depth)
    FROM cpu_nesting n LEFT JOIN fam f USING (event_id) WHERE n.trace_id = $t""",
                         {"t": trace_ids[trace]}).fetchall()[0]
    assert got == (0,) + expected
