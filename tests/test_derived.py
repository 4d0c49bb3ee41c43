"""The derived tables stored at ingest (schema.DERIVED_TABLES) hold exactly what their build views compute."""
import pytest

from tracesql.schema import DERIVED_TABLES, columns


@pytest.mark.parametrize("table", list(DERIVED_TABLES))
def test_stored_table_equals_its_build_view(ds, trace_ids, table):
    build = DERIVED_TABLES[table]["build"]
    got = ds.con.execute(f"DESCRIBE SELECT * FROM {build}").fetchall()
    assert [(r[0], r[1]) for r in got] == [("trace_id", "VARCHAR")] + [(c, t) for c, t, _ in columns(table)]
    n_stored = ds.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
    n_built = ds.con.execute(f"SELECT count(*) FROM {build}").fetchall()[0][0]
    assert n_stored == n_built > 0
    diff = ds.con.execute(f"""SELECT count(*) FROM (
        (SELECT * EXCLUDE (thread_key, nest_pos) FROM {table} EXCEPT ALL SELECT * EXCLUDE (thread_key, nest_pos) FROM {build})
        UNION ALL
        (SELECT * EXCLUDE (thread_key, nest_pos) FROM {build} EXCEPT ALL SELECT * EXCLUDE (thread_key, nest_pos) FROM {table}))"""
                          if table != "gpu_launch_links" else f"""SELECT count(*) FROM (
        (SELECT * FROM {table} EXCEPT ALL SELECT * FROM {build})
        UNION ALL (SELECT * FROM {build} EXCEPT ALL SELECT * FROM {table}))""").fetchall()[0][0]
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
    bad = ds.con.execute("""SELECT count(*) FROM (SELECT trace_id, count(DISTINCT (pid, tid)) AS n,
        min(thread_key) AS lo, max(thread_key) AS hi FROM cpu_nesting GROUP BY trace_id)
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
