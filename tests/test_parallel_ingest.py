"""`tracesql ingest --jobs N`: files ingested by N processes give the dataset a sequential run gives, results in the
order of the files, one init.sql and catalog at the end; an interrupted parallel run leaves whole traces only."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

import tracesql
from tracesql.ingest import _tasks, find_trace_files
from tracesql.parallel.executors import EXIT_ONCE_ENV
from tracesql.store.dataset import table_statements
from tracesql.store.schema import TABLES

from .conftest import good_trace_files, tracesql_cli

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DLRM = "multirank/dlrm_8rank"
# columns that differ between two ingests of the same file: when and how long
VOLATILE = {"traces": ["ingested_at", "ingest_seconds"]}


def _content(ds: Path) -> dict[str, list]:
    """Per table, per trace (by file name): row count and an order-independent hash of the rows."""
    con = duckdb.connect()
    for st in table_statements(ds):
        con.execute(st)
    out = {}
    for table in TABLES:
        drop = ", ".join(VOLATILE.get(table, []))
        cols = f"* EXCLUDE ({drop})" if drop else "*"
        out[table] = con.execute(f"""SELECT t.file_name, count(*), sum(hash(x))
            FROM (SELECT {cols} FROM {table}) x JOIN traces t USING (trace_id)
            GROUP BY ALL ORDER BY ALL""").fetchall()
    con.close()
    return out


def test_parallel_ingest_equals_sequential(tmp_path, shared_traces):
    files = find_trace_files([str(shared_traces / DLRM)])
    assert len(files) == 8
    seq = tracesql.ingest(files, out=tmp_path / "seq", jobs=1)
    par = tracesql.ingest(files, out=tmp_path / "par", jobs=2)
    assert [r.status for r in par] == ["ingested"] * 8
    assert [r.path for r in par] == files  # reported in the order of the files
    assert [(r.trace_id, r.rank, r.events_read, r.row_counts) for r in par] == \
        [(r.trace_id, r.rank, r.events_read, r.row_counts) for r in seq]
    assert [r.rank for r in par] == list(range(8))
    a, b = _content(tmp_path / "seq"), _content(tmp_path / "par")
    assert a == b
    assert len(a["kernels"]) == 8 and all(n > 0 for _, n, _ in a["kernels"])
    # one run recorded, with every file
    (run,) = [json.loads(p.read_text()) for p in (tmp_path / "par" / "runs").glob("*.json")]
    assert (run["status"], run["files_seen"], run["ingested"]) == ("done", 8, 8)
    assert [f["path"] for f in run["files"]] == files
    # the dataset opens without binding anything new: its catalog was written at the end
    with tracesql.open(tmp_path / "par") as d:
        assert d.sql("SELECT count(*) AS n FROM traces")["n"][0] == 8
    assert not list((tmp_path / "par" / ".staging").iterdir())


def test_tasks_are_contiguous_and_balanced(tmp_path):
    files = []
    for i, size in enumerate([10, 10, 10, 10, 10, 10, 100, 10]):
        f = tmp_path / f"{i}.json"
        f.write_bytes(b" " * size)
        files.append(str(f))
    tasks = _tasks(files, 2)
    assert [f for t in tasks for f in t] == files
    # target = 170 // 4 = 42 bytes: groups of four small files, the large file alone
    assert [len(t) for t in tasks] == [4, 2, 1, 1]


def test_glob_patterns_are_expanded(tmp_path, shared_traces):
    pattern = str(shared_traces / DLRM / "rank[0-2].json.gz")
    assert [Path(f).name for f in find_trace_files([pattern])] == ["rank0.json.gz", "rank1.json.gz", "rank2.json.gz"]
    nothing = str(tmp_path / "none*.json")
    assert find_trace_files([nothing]) == [nothing]  # fails later as a missing file


@pytest.mark.slow
def test_interrupted_parallel_run_leaves_whole_traces(tmp_path, shared_traces):
    files = [str(shared_traces / f) for f in good_trace_files()]
    ds = tmp_path / "ds"
    # Ctrl-C typed on a terminal: SIGINT to the whole process group, the pool processes included
    p = subprocess.Popen(tracesql_cli() + ["ingest", *files, "--out", str(ds), "-q", "--jobs", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list((ds / "traces").glob("trace_id=*")):
        time.sleep(0.05)  # interrupt once some trace is published, while others are in flight
    os.killpg(p.pid, signal.SIGINT)
    try:
        out, err = p.communicate(timeout=120)
    finally:  # a run that hangs is killed, its pool processes with it, before the test fails
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 130, (out, err)
    assert err.strip().splitlines() == ["tracesql: interrupted"], err  # no pool process's traceback before it
    published = list((ds / "traces").glob("trace_id=*"))
    assert 0 < len(published) < len(files)
    assert not list((ds / ".staging").iterdir())  # the tasks removed their work areas
    (run,) = [json.loads(x.read_text()) for x in (ds / "runs").glob("*.json")]
    assert run["status"] == "interrupted"
    # every trace published belongs to the run, also those whose task had not reported back
    assert sorted(f["trace_id"] for f in run["files"] if f["status"] == "ingested") == \
        sorted(d.name.split("=", 1)[1] for d in published)
    assert run["ingested"] == len(published)
    # what was published is whole: a later run completes the dataset, adding each remaining file once
    r = tracesql.ingest(files, out=ds, jobs=2)
    assert sum(x.status == "duplicate" for x in r) == len(published)
    assert sum(x.status == "ingested" for x in r) == len(files) - len(published)


@pytest.mark.slow
def test_dask_local_cluster_equals_sequential_and_survives_a_killed_worker(tmp_path, shared_traces, monkeypatch):
    """A Dask LocalCluster (2 workers, 1 thread each, loopback) ingests the 8 ranks of a job into the same tables as
    a sequential run; the first task to stage a trace kills its worker process (os._exit), Dask retries the task
    elsewhere, and every trace ends up present once with no work area left."""
    files = find_trace_files([str(shared_traces / DLRM)])
    tracesql.ingest(files, out=tmp_path / "seq", jobs=1)
    marker = tmp_path / "exited-once"
    monkeypatch.setenv(EXIT_ONCE_ENV, str(marker))
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    ds = tmp_path / "dask"
    res = tracesql.ingest(files, out=ds, jobs=2, executor="dask")
    assert marker.exists()  # a worker did die mid-task
    assert [r.path for r in res] == files
    assert sorted(r.status for r in res) == ["ingested"] * 8
    assert _content(tmp_path / "seq") == _content(ds)
    assert len(list((ds / "traces").glob("trace_id=*"))) == 8
    assert not list((ds / ".staging").iterdir())
    (run,) = [json.loads(p.read_text()) for p in (ds / "runs").glob("*.json")]
    assert (run["status"], run["ingested"], run["already_present"], run["failed"]) == ("done", 8, 0, 0)


@pytest.mark.slow
def test_a_worker_that_dies_after_publishing(tmp_path, shared_traces, monkeypatch):
    """The first pool process to publish a trace dies right after (as one killed would): the traces it had
    published are this run's, reported as ingested (not 'internal error (BrokenProcessPool)'), the files it had
    not finished run again in a new pool, and the run's record lists every trace once."""
    from tracesql.parallel.executors import EXIT_AFTER_PUBLISH_ENV

    files = find_trace_files([str(shared_traces / DLRM)])
    marker = tmp_path / "exited-once"
    monkeypatch.setenv(EXIT_AFTER_PUBLISH_ENV, str(marker))
    ds = tmp_path / "ds"
    res = tracesql.ingest(files, out=ds, jobs=2)
    assert marker.exists()  # a process did die after a publish
    assert [r.path for r in res] == files
    assert [r.status for r in res] == ["ingested"] * 8, [r.error for r in res]
    assert all(r.row_counts.get("kernels") for r in res)
    (run,) = [json.loads(p.read_text()) for p in (ds / "runs").glob("*.json")]
    assert (run["status"], run["ingested"], run["already_present"], run["failed"]) == ("done", 8, 0, 0)
    assert sorted(f["trace_id"] for f in run["files"]) == sorted(str(r.trace_id) for r in res)
    assert len(list((ds / "traces").glob("trace_id=*"))) == 8


def test_idle_pool_processes_exit_quietly_and_with_their_parent(tmp_path):
    """A pool process exits without a traceback when stopped while idle (SIGTERM), and by itself when its parent
    is killed with SIGKILL."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import os, time\n"
        "from tracesql.parallel.executors import Pool\n"
        "if not hasattr(Pool, 'submit_all'):\n"
        "    Pool.submit_all = lambda self, fn, args: [self.submit(fn, *a) for a in args]\n"
        "def pid():\n"
        "    time.sleep(1)\n"
        "    return os.getpid()\n"
        "if __name__ == '__main__':\n"
        "    p = Pool('processes', 2)\n"
        "    fs = p.submit_all(pid, [(), ()])\n"
        "    print(' '.join(str(f.result()) for f in fs), flush=True)\n"
        "    time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    assert parent.stdout is not None
    kids = sorted({int(x) for x in parent.stdout.readline().split()})
    assert len(kids) == 2
    os.kill(kids[0], signal.SIGTERM)  # idle: it exits, quietly
    parent.kill()  # SIGKILL: the other exits by itself
    _, err = parent.communicate(timeout=30)
    deadline = time.time() + 10
    while time.time() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.1)
    assert not any(_alive(k) for k in kids)
    assert "Traceback" not in err, err


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_dataset_inside_the_folder_is_not_ingested(tmp_path, shared_traces):
    """A folder that holds trace files and a dataset (its run records, init.sql, ...): the dataset's files are
    not taken for traces, a nightly `ingest FOLDER --out FOLDER/ds` ingests the traces only."""
    import shutil

    arch = tmp_path / "arch"
    arch.mkdir()
    shutil.copy(shared_traces / "nvidia/hta_triton_example.json.gz", arch / "a.json.gz")
    ds = arch / "ds"
    for _ in range(2):
        res = tracesql.ingest([arch], out=ds)
        assert [(Path(r.path).name, r.status) for r in res] in ([("a.json.gz", "ingested")],
                                                                 [("a.json.gz", "duplicate")])
    assert find_trace_files([str(arch)]) == [str(arch / "a.json.gz")]
