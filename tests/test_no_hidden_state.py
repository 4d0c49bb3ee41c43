"""No call changes what a later call on the same dataset returns: every Dataset method and every report or summary
(of one trace or of all) gives, in any order on one connection, the frames it gives alone on a fresh connection;
and the connection holds no temporary object or variable after any of them."""
from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

import tracesql
from tracesql.api import replay, report, summary

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

TRACES = ["nvidia/h100_qwen_infer.json.gz", "amd/mi300_bert_small_infer.json.gz"]


@pytest.fixture(scope="module")
def two(tmp_path_factory, shared_traces):
    out = tmp_path_factory.mktemp("state") / "ds"
    res = tracesql.ingest([str(shared_traces / t) for t in TRACES], out=str(out))
    assert [r.status for r in res] == ["ingested", "ingested"]
    return out, [r.trace_id for r in res]


def _calls(ids: list[str]) -> dict[str, Callable]:
    a, b = ids

    def frames(sections):
        return [s.frame for s in sections]

    return {
        "kernel_summary": lambda ds: ds.kernel_summary(),
        "kernel_summary_b": lambda ds: ds.kernel_summary(trace=b),
        "timeline": lambda ds: ds.timeline(),
        "gaps": lambda ds: ds.gaps(),
        "categories": lambda ds: ds.categories(),
        "tree": lambda ds: ds.tree(depth=2),
        "perf": lambda ds: ds.perf(),
        "perf_a_arch": lambda ds: ds.perf(trace=a, arch="H100 SXM"),
        "diff": lambda ds: ds.diff(a, b, level="kernels"),
        "report_a": lambda ds: frames(report.build(ds, trace=a)),
        "report_tracelens_a": lambda ds: frames(report.build(ds, style="tracelens", trace=a)),
        "report_hta": lambda ds: frames(report.build(ds, style="hta")),
        "summary_b": lambda ds: list(summary.overview(ds, trace=b).values()),
        "summary": lambda ds: list(summary.overview(ds).values()),
        "replay_b": lambda ds: replay.ir(ds, trace=b, top=5),
    }


def _equal(x, y) -> bool:
    if isinstance(x, pl.DataFrame):
        return isinstance(y, pl.DataFrame) and x.equals(y, null_equal=True)
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_equal(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(_equal(i, j) for i, j in zip(x, y, strict=True))
    return x == y


def _leftovers(ds) -> list:
    raw = ds.con.raw
    return raw.execute("SELECT table_name FROM duckdb_tables() WHERE temporary UNION ALL "
                       "SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal UNION ALL "
                       "SELECT name FROM duckdb_variables()").fetchall()


@pytest.mark.slow
def test_calls_in_any_order_give_what_they_give_alone(two):
    path, ids = two
    calls = _calls(ids)
    alone = {}
    for name, fn in calls.items():
        with tracesql.open(path) as ds:
            alone[name] = fn(ds)
            assert _leftovers(ds) == [], name
    # the frames are real: both traces' kernels, and each report of one trace only
    ks = alone["kernel_summary"]
    assert isinstance(ks, pl.DataFrame) and set(ks["trace_id"].unique()) == set(ids)
    # one connection, the reports and summaries of one trace first (what leaked state before), then the rest in
    # reverse order of the list
    first = [n for n in reversed(calls) if n.startswith(("report", "summary_b"))]
    for order in [first + [n for n in reversed(calls) if n not in first]]:
        with tracesql.open(path) as ds:
            for name in order:
                got = calls[name](ds)
                assert _equal(got, alone[name]), f"{name} after {order[:order.index(name)]}"
                assert _leftovers(ds) == [], name


def test_a_report_of_one_trace_leaves_the_others_visible(two):
    """The defect this guards against: a report of trace A computed its views for A as temporary tables that
    stayed, and a later kernel summary on the same dataset lost every other trace's rows."""
    path, ids = two
    with tracesql.open(path) as ds:
        before = ds.kernel_summary()
        report.build(ds, trace=ids[0])
        summary.overview(ds, trace=ids[0])
        after = ds.kernel_summary()
        assert set(after["trace_id"].unique()) == set(ids)
        assert after.equals(before, null_equal=True)
        assert _leftovers(ds) == []


def test_a_scope_undoes_what_the_block_left(two):
    path, ids = two
    with tracesql.open(path) as ds:
        ds.execute("SET VARIABLE kept = 1")
        with ds.scope():
            ds.execute("CREATE TEMP TABLE t1 AS SELECT 1 AS x")
            ds.execute("CREATE TEMP VIEW v1 AS SELECT 2 AS x")
            ds.execute("SET VARIABLE kept = 2")
            ds.execute("SET VARIABLE made = 'x'")
        assert _leftovers(ds) == [("kept",)]
        assert ds.execute("SELECT getvariable('kept')").fetchall() == [(1,)]
        with ds.materialized(["gpu_timeline"], [ids[0]]) as made:
            assert made == ["gpu_timeline"]
            assert ds.sql("SELECT DISTINCT trace_id FROM gpu_timeline")["trace_id"].to_list() == [ids[0]]
        assert sorted(ds.sql("SELECT DISTINCT trace_id FROM gpu_timeline")["trace_id"].to_list()) == sorted(ids)


def test_every_connection_has_a_memory_limit_a_spill_directory_and_no_progress_bar(two, monkeypatch, tmp_path):
    path, _ = two
    monkeypatch.setenv("TRACESQL_CACHE_DIR", str(tmp_path / "cache"))
    setting = "SELECT current_setting('memory_limit'), current_setting('temp_directory'), " \
              "current_setting('enable_progress_bar')"
    with tracesql.open(path, memory_limit="1GiB") as ds:
        assert ds.con.execute(setting).fetchall() == [("1.0 GiB", str(tmp_path / "cache" / "spill"), False)]
    monkeypatch.setenv("TRACESQL_MEMORY_LIMIT", "700MiB")
    with tracesql.open(path) as ds:
        assert ds.con.execute(setting).fetchall()[0][0] == "700.0 MiB"
    monkeypatch.delenv("TRACESQL_MEMORY_LIMIT")
    from tracesql.store.config import default_memory_limit

    total = __import__("os").sysconf("SC_PAGE_SIZE") * __import__("os").sysconf("SC_PHYS_PAGES")
    assert default_memory_limit() == f"{int(total * 0.6) >> 20}MiB"


def test_out_of_memory_is_one_line_and_exit_1(two, capsys, monkeypatch):
    """A query that needs more than the memory limit ends the command with one line, exit status 1."""
    from tracesql.cli.main import main

    path, _ = two
    monkeypatch.setenv("TRACESQL_MEMORY_LIMIT", "1MB")
    rc = main(["query", str(path), "SELECT string_agg(name || repeat('x', 1000), ',') AS s FROM "
               "(SELECT k.name FROM kernels k, kernels k2)"])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("tracesql: error: out of memory (DuckDB's memory limit is 1MB; set TRACESQL_MEMORY_LIMIT")
    assert err.count("\n") == 1
