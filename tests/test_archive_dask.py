"""`tracesql report DATASET --out DIR --executor dask | --jobs N`: one task per trace, each opening its trace alone
and writing its folder, the cross-trace tables merged by the driver from the rows the tasks return; the files equal
those of the report over one connection, and a task that fails is retried (Dask) or reported, never missing."""
from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import pytest

import tracesql
from tracesql.api.archive_report import report_tasks
from tracesql.ingest import find_trace_files
from tracesql.parallel.executors import EXIT_ONCE_ENV

from .conftest import tracesql_cli

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

TRACES = ["nvidia/h100_bert_small_infer.json.gz", "amd/mi300_bert_small_infer.json.gz", "multirank/hta_sampled"]
FOLDERS = ["h100_bert_small_infer", "mi300_bert_small_infer", "rank-0", "rank-1"]


@pytest.fixture(scope="module")
def archive(tmp_path_factory, shared_traces) -> Path:
    """Four traces: two single-GPU inference traces and the two ranks of a job."""
    ds = tmp_path_factory.mktemp("archive_dask") / "ds"
    files = find_trace_files([str(shared_traces / t) for t in TRACES])
    assert [r.status for r in tracesql.ingest(files, out=ds, jobs=1)] == ["ingested"] * 4
    return ds


def _report(ds: Path, out: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(tracesql_cli() + ["report", str(ds), "--out", str(out), *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})})


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_dask_report_equals_sequential_and_survives_a_killed_worker(archive, tmp_path, monkeypatch):
    """A LocalCluster of 2 single-threaded workers on the loopback interface writes the files of the sequential
    report, byte for byte; the first task's worker dies (os._exit) and Dask runs the task again."""
    seq, par = tmp_path / "seq", tmp_path / "dask"
    p = _report(archive, seq)
    assert p.returncode == 0, p.stderr
    marker = tmp_path / "exited-once"
    env = {EXIT_ONCE_ENV: str(marker)}
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    p = _report(archive, par, "--executor", "dask", "--jobs", "2", env=env)
    assert p.returncode == 0, p.stderr
    assert marker.exists()  # a worker did die mid-task
    a, b = _files(seq), _files(par)
    assert sorted(a) == sorted(b)
    assert [n for n in a if a[n] != b[n]] == []
    assert sorted(d.name for d in par.iterdir() if d.is_dir()) == FOLDERS
    assert len([n for n in b if n.startswith("rank-0/")]) == 17  # every native section of the trace
    # the cross-trace tables the driver merged: every trace, every kernel of every trace
    with open(par / "traces_overview.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["trace"] for r in rows] == ["h100_bert_small_infer.json.gz", "mi300_bert_small_infer.json.gz",
                                          "rank-0.json.gz", "rank-1.json.gz"]
    assert [r["busy_ms"] for r in rows] == ["0.309437", "0.390748", "547.656", "580.05"]
    with tracesql.open(archive) as d:
        total_ms = d.sql("SELECT sum(total_ns) / 1e6 AS t FROM kernel_summary")["t"][0]
        op_ms = d.sql("SELECT sum(kernel_time_ns) / 1e6 AS t FROM op_summary")["t"][0]
    with open(par / "kernels_across_traces.csv") as f:
        kernels = list(csv.DictReader(f))
    with open(par / "ops_across_traces.csv") as f:
        ops = list(csv.DictReader(f))
    assert (len(kernels), len(ops)) == (129, 75)
    assert sum(float(k["total_ms"]) for k in kernels) == pytest.approx(total_ms, rel=1e-12)
    assert sum(float(o["kernel_time_ms"]) for o in ops) == pytest.approx(op_ms, rel=1e-12)
    # the job's collectives lead, in both ranks; rank-0 spends the larger share of its GPU time in them
    assert [kernels[0][c] for c in ("name", "n_traces", "count", "total_ms", "max_trace")] == \
        ["ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "2", "20", "775.252", "rank-0.json.gz"]


@pytest.mark.slow
def test_process_report_equals_sequential_in_each_style(archive, tmp_path):
    """--jobs 2 (local processes, one of which dies in its first task): TraceLens's per-trace folders and its job
    folder (the two ranks' multi-rank report) with the same rows, which differ at most in the last digits of float
    sums (TraceLens's µs sums, whose order DuckDB does not fix: two sequential reports differ so too). The HTA
    style's tasks run through the same code (tracesql.api.archive_report), one style per run of the pool."""
    for style in ("tracelens",):
        seq, par = tmp_path / f"seq_{style}", tmp_path / f"par_{style}"
        p = _report(archive, seq, "--style", style)
        assert p.returncode == 0, p.stderr
        # the first task's process dies (os._exit): its tasks run again in a new pool
        marker = tmp_path / f"exited-once-{style}"
        p = _report(archive, par, "--style", style, "--jobs", "2", env={EXIT_ONCE_ENV: str(marker)})
        assert p.returncode == 0, p.stderr
        assert marker.exists()
        a, b = _files(seq), _files(par)
        assert sorted(a) == sorted(b), style
        assert sorted(d.name for d in par.iterdir()) == sorted(FOLDERS + ["job1"])
        assert "job1/nccl_summary_long.csv" in b
        for name in a:
            ra, rb = list(csv.reader(a[name].decode().splitlines())), list(csv.reader(b[name].decode().splitlines()))
            assert len(ra) == len(rb), name
            for x, y in zip(ra, rb, strict=True):
                assert len(x) == len(y), name
                for u, v in zip(x, y, strict=True):
                    if u != v:
                        assert float(u) == pytest.approx(float(v), rel=1e-12), (name, u, v)


def test_report_tasks_of_some_traces(archive, tmp_path):
    """The driver over a subset (as report --since opens it): the folders and cross-trace rows of those traces
    only, one task per trace in local processes."""
    with tracesql.open(archive) as d:
        ids = d.sql("SELECT trace_id FROM traces WHERE rank IS NOT NULL ORDER BY rank")["trace_id"].to_list()
    out = tmp_path / "some"
    written = report_tasks(archive, out, trace_ids=ids, jobs=2)
    assert sorted(d.name for d in out.iterdir() if d.is_dir()) == ["rank-0", "rank-1"]
    assert written[:4] == [out / f"{n}.csv" for n in ("traces_overview", "kernels_across_traces", "ops_across_traces",
                                                      "ranks_overview")]
    assert len(written) == 4 + 2 * 17  # and the 17 native sections of each trace
    with open(out / "traces_overview.csv") as f:
        assert [r["trace_id"] for r in csv.DictReader(f)] == ids
    with open(out / "ranks_overview.csv") as f:  # computed by the driver: a task sees one rank of the job
        assert [(r["trace_id"], r["rank"], r["is_straggler"]) for r in csv.DictReader(f)] == \
            [(ids[0], "0", "false"), (ids[1], "1", "true")]


def test_a_failed_task_is_reported(archive, tmp_path):
    """A task that fails for good (here its folder cannot be made: a file is in the way) is reported with its
    trace: the report fails and writes no cross-trace table (it would miss that trace); the others are written."""
    out = tmp_path / "failed"
    out.mkdir()
    (out / "rank-1").write_text("in the way")
    p = _report(archive, out, "--jobs", "2")
    assert p.returncode == 1
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"tracesql: error: report: 1 of 4 traces failed, the report in {out} is incomplete "
                               "and has no cross-trace tables: rank-1.json.gz ("), p.stderr
    assert "FileExistsError" in lines[0], p.stderr
    assert not (out / "traces_overview.csv").exists()
    assert len(list((out / "rank-0").iterdir())) == 17


def test_parallel_report_needs_out(archive):
    p = subprocess.run(tracesql_cli() + ["report", str(archive), "--jobs", "2"], capture_output=True, text=True)
    assert p.returncode == 2 and "--jobs and --executor write the report with --out DIR" in p.stderr
    p = subprocess.run(tracesql_cli() + ["report", str(archive), "--out", "x", "--scheduler", "tcp://h:1"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "--scheduler and --scheduler-file go with --executor dask" in p.stderr


@pytest.mark.slow
def test_traces_of_one_file_name_keep_their_labels(tmp_path, shared_traces):
    """Two traces named alike: opened alone, each task still labels its trace as the whole report does (the
    file name and the trace_id's first digits), so the folders and files are those of the sequential report."""
    files = []
    for sub, name in (("a", "hta_trace_compare_base"), ("b", "hta_trace_compare_test")):
        (tmp_path / sub).mkdir()
        files.append(tmp_path / sub / "trace.json.gz")
        files[-1].write_bytes((shared_traces / "nvidia" / f"{name}.json.gz").read_bytes())
    ds = tmp_path / "ds"
    ids = [str(r.trace_id) for r in tracesql.ingest(files, out=ds, jobs=1)]
    seq, par = tmp_path / "seq", tmp_path / "par"
    for out, args in ((seq, []), (par, ["--jobs", "2"])):
        p = _report(ds, out, *args)
        assert p.returncode == 0, p.stderr
    a, b = _files(seq), _files(par)
    assert sorted(a) == sorted(b)
    assert [n for n in a if a[n] != b[n]] == []
    folders = sorted(d.name for d in par.iterdir() if d.is_dir())
    assert folders == sorted(f"trace.json.gz_{t[:8]}" for t in ids)
    with open(par / "traces_overview.csv") as f:
        assert sorted(r["trace"] for r in csv.DictReader(f)) == sorted(f"trace.json.gz@{t[:8]}" for t in ids)
