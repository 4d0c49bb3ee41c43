"""A dataset of many traces: per-trace opening without the catalog, the traces side by side in the report, and a
report restricted to the traces recent runs added (--since)."""
from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest

import tracesql
from tracesql import DatasetError
from tracesql.ingest import find_trace_files

from .conftest import tracesql_cli

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DLRM = "multirank/dlrm_8rank"


@pytest.fixture(scope="module")
def job(tmp_path_factory, shared_traces) -> tuple[Path, list[str], list]:
    """The 8 ranks of a job ingested in two runs (ranks 0-5, then 6-7): (dataset, run ids, trace ids by rank)."""
    ds = tmp_path_factory.mktemp("archive") / "ds"
    files = find_trace_files([str(shared_traces / DLRM)])
    first = tracesql.ingest(files[:6], out=ds)
    second = tracesql.ingest(files, out=ds)
    assert [r.status for r in second] == ["duplicate"] * 6 + ["ingested"] * 2
    runs = sorted(p.stem for p in (ds / "runs").glob("*.json"))
    return ds, runs, [r.trace_id for r in first] + [r.trace_id for r in second[6:]]


def test_open_only_some_traces(job):
    ds, _, ids = job
    catalog = ds / "catalog.duckdb"
    before = catalog.stat().st_mtime_ns
    with tracesql.open(ds) as full:
        per_trace = dict(full.sql("SELECT trace_id, count(*) AS n FROM kernels GROUP BY ALL").rows())
        busy = dict(full.sql("SELECT trace_id, busy_ns FROM gpu_timeline WHERE pooled").rows())
    with tracesql.open(ds, trace_ids=ids[2:4]) as part:
        got = dict(part.sql("SELECT trace_id, count(*) AS n FROM kernels GROUP BY ALL").rows())
        assert got == {t: per_trace[t] for t in ids[2:4]}
        # the analysis views read only these traces, with the same numbers
        assert dict(part.sql("SELECT trace_id, busy_ns FROM gpu_timeline WHERE pooled").rows()) == \
            {t: busy[t] for t in ids[2:4]}
        assert part.sql("SELECT count(*) AS n FROM traces")["n"][0] == 2
    assert catalog.stat().st_mtime_ns == before  # neither read nor written
    with pytest.raises(DatasetError, match="no trace 0123456789abcdef in the dataset"):
        tracesql.open(ds, trace_ids=["0123456789abcdef"])


def test_report_of_many_traces_starts_side_by_side(job, tmp_path):
    ds, _, ids = job
    out = tmp_path / "rep"
    p = subprocess.run(tracesql_cli() + ["report", str(ds), "--out", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with open(out / "traces_overview.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["trace"] for r in rows] == [f"rank{i}.json.gz" for i in range(8)]
    assert sorted(r["trace_id"] for r in rows) == sorted(ids)
    assert {r["rank"] for r in rows} == {str(i) for i in range(8)}
    assert len([d for d in out.iterdir() if d.is_dir()]) == 8  # one folder per trace besides
    with tracesql.open(ds) as d:
        total_ms = d.sql("SELECT sum(total_ns) / 1e6 AS t FROM kernel_summary")["t"][0]
        busy = dict(d.sql("SELECT trace_id, busy_pct FROM gpu_timeline WHERE pooled").rows())
    with open(out / "kernels_across_traces.csv") as f:
        kernels = list(csv.DictReader(f))
    assert sum(float(k["total_ms"]) for k in kernels) == pytest.approx(total_ms, rel=1e-9)
    assert sum(float(k["share_pct"]) for k in kernels) == pytest.approx(100.0, rel=1e-9)
    nccl = [k for k in kernels if k["name"].startswith("ncclKernel_AllReduce")]
    assert len(nccl) == 1 and nccl[0]["n_traces"] == "8"
    assert {r["trace_id"]: float(r["busy_pct"]) for r in rows} == pytest.approx(busy)


def test_report_since_a_run(job, tmp_path):
    ds, runs, ids = job
    out = tmp_path / "since"
    p = subprocess.run(tracesql_cli() + ["report", str(ds), "--since", runs[1], "--out", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with open(out / "traces_overview.csv") as f:
        assert sorted(r["trace_id"] for r in csv.DictReader(f)) == sorted(ids[6:])
    assert len([d for d in out.iterdir() if d.is_dir()]) == 2
    p = subprocess.run(tracesql_cli() + ["report", str(ds), "--since", "29990101T000000Z"], capture_output=True,
                       text=True)
    assert p.returncode == 1
    assert p.stderr.startswith("tracesql: error: no traces ingested by run 29990101T000000Z or later in ")


def test_report_of_one_graph_replay_trace_keeps_its_capture(tmp_path, shared_traces):
    """--trace on a graph replay: its GPU events take their ops from the capture trace, which the report's
    materialized views keep too, so the trace's files equal its folder of the report over both traces. The plain
    perf report keeps its layout (no num_kernels, no RMSNorm_fwd.csv, ops_summary one row per op name, as
    TraceLens's perf report; tests/test_tl_perf_infer.py has the inference report of the pair)."""
    ds = tmp_path / "ds"
    assert [r.status for r in tracesql.ingest([shared_traces / "graphs/vllm_decode_full"], out=ds)] == \
        ["ingested", "ingested"]
    one, both = tmp_path / "one", tmp_path / "both"
    for args, out in (([ "--trace", "graph_execution.json.gz"], one), ([], both)):
        p = subprocess.run(tracesql_cli() + ["report", str(ds), *args, "--style", "tracelens", "--format", "csv",
                                             "--out", str(out)], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    with open(one / "ops_summary_by_category.csv") as f:
        assert len(list(csv.DictReader(f))) == 6
    assert not (one / "RMSNorm_fwd.csv").exists()
    with open(one / "UnaryElementwise.csv") as f:
        assert "num_kernels" not in next(csv.reader(f))
    with open(one / "ops_summary.csv") as f:
        assert "parent_module" not in next(csv.reader(f))
    for f in sorted(one.iterdir()):  # equal but for the last digits of sums (summation order)
        with open(f) as a, open(both / "graph_execution" / f.name) as b:
            rows_a, rows_b = list(csv.reader(a)), list(csv.reader(b))
        assert len(rows_a) == len(rows_b), f.name
        for ra, rb in zip(rows_a, rows_b, strict=True):
            assert len(ra) == len(rb), f.name
            for x, y in zip(ra, rb, strict=True):
                try:
                    assert float(x) == pytest.approx(float(y), rel=1e-9, abs=1e-9), (f.name, x, y)
                except ValueError:
                    assert x == y, (f.name, x, y)


def test_report_of_a_multirank_job_opens_with_the_job(job):
    """The first screen of the 8 ranks of a job: the ranks side by side and the straggler, not 8 screens."""
    ds, _, _ = job
    p = subprocess.run(tracesql_cli() + ["report", str(ds)], capture_output=True, text=True,
                       env={**__import__("os").environ, "COLUMNS": "120"})
    assert p.returncode == 0, p.stderr
    first = p.stdout.split("\n== ", 1)[0].splitlines()
    assert len(first) <= 40 and max(len(line) for line in first) <= 120
    assert "job 1: 8 of 8 ranks (nccl); 8 collectives: 8 matched on every rank; straggler rank 7" in first
    ranks = [line.split() for line in first if line.split()[:1] and line.split()[0].isdigit()
             and len(line.split()) == 10]
    assert [r[0] for r in ranks] == [str(i) for i in range(8)]
    assert [r[-1] for r in ranks] == ["false"] * 7 + ["true"]  # rank 7 bounds the job
    assert ranks[7][7] == "5"  # arrived last at 5 of the 8 collectives
    assert not any(line.startswith("== rank") for line in first)


def test_csv_output_writes_nested_columns_as_text(job):
    """Lists of plain values (e.g. a collective's missing ranks) go to CSV as their items joined by ';', other
    nested values (structs, lists of lists) as JSON text; nothing is truncated."""
    ds, _, _ = job
    p = subprocess.run(tracesql_cli() + ["query", str(ds), "SELECT [1, 2] AS l, {'a': 1, 'b': 'x'} AS s, "
                                         "NULL::INTEGER[] AS n", "--format", "csv"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert list(csv.reader(p.stdout.splitlines())) == [["l", "s", "n"], ["1;2", '{"a": 1, "b": "x"}', ""]]
    p = subprocess.run(tracesql_cli() + ["collectives", str(ds), "--format", "csv"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(p.stdout.splitlines()))
    assert len(rows) == 8 and {r["missing_ranks"] for r in rows} == {""}
