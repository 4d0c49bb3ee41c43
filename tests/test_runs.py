"""The record of ingest runs (ingest_runs, ingest_run_files, `tracesql runs`): what a scheduled job leaves behind
for the next one and for the people who read it."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tracesql
from tracesql import DatasetError

from .conftest import tracesql_cli

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

QWEN = "nvidia/h100_qwen_infer.json.gz"  # 18,221 events, 1,707 GPU events
BERT = "nvidia/h100_bert_small_infer.json.gz"
DAMAGED = "damaged/alexnet_truncated_json.json.gz"


def _runs(ds: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((ds / "runs").glob("*.json"))]


def test_runs_record_each_file_and_its_fate(tmp_path, shared_traces):
    ds = tmp_path / "ds"
    missing = str(tmp_path / "nowhere.json")
    first = tracesql.ingest([shared_traces / QWEN, shared_traces / DAMAGED, missing], out=ds, command="nightly A")
    assert [r.status for r in first] == ["ingested", "failed", "failed"]
    second = tracesql.ingest([shared_traces / QWEN, shared_traces / BERT], out=ds)
    assert [r.status for r in second] == ["duplicate", "ingested"]

    with tracesql.open(ds) as d:
        runs = d.sql("SELECT * FROM ingest_runs ORDER BY run_id").to_dicts()
        files = d.sql("SELECT * FROM ingest_run_files ORDER BY run_id, path").to_dicts()
        traces = d.sql("SELECT f.run_id, t.file_name, t.events_read FROM traces t "
                       "JOIN ingest_run_files f ON f.trace_id = t.trace_id AND f.status = 'ingested' "
                       "ORDER BY t.file_name").rows()
    assert [(r["status"], r["files_seen"], r["ingested"], r["already_present"], r["failed"]) for r in runs] == [
        ("failed_files", 3, 1, 0, 2), ("done", 2, 1, 1, 0)]
    a, b = runs[0]["run_id"], runs[1]["run_id"]
    assert a < b  # run ids sort by start
    assert runs[0]["command"] == "nightly A" and runs[1]["command"] == "tracesql.ingest"
    assert all(r["ended_at"] > r["started_at"] and r["duration_s"] > 0 and r["error"] is None for r in runs)
    assert runs[0]["json_bytes"] == first[0].json_bytes > 0
    by_path = {(f["run_id"], Path(f["path"]).name): f for f in files}
    assert len(files) == 5
    assert by_path[(a, "h100_qwen_infer.json.gz")]["trace_id"] == first[0].trace_id
    assert by_path[(b, "h100_qwen_infer.json.gz")]["status"] == "duplicate"
    assert by_path[(b, "h100_qwen_infer.json.gz")]["trace_id"] == first[0].trace_id
    damaged = by_path[(a, "alexnet_truncated_json.json.gz")]
    assert damaged["status"] == "failed" and damaged["trace_id"] is None
    assert "truncated trace: the JSON ends inside traceEvents" in damaged["error"]
    assert by_path[(a, "nowhere.json")]["error"] == f"{missing}: no such file or directory"
    # each trace's run: the run whose row for it says ingested
    assert traces == [(b, "h100_bert_small_infer.json.gz", 2551), (a, "h100_qwen_infer.json.gz", 18221)]


def test_runs_command_and_exit_status(tmp_path, shared_traces):
    ds = tmp_path / "ds"
    cli = tracesql_cli()
    p = subprocess.run(cli + ["ingest", str(shared_traces / BERT), str(shared_traces / DAMAGED), "--out", str(ds),
                              "-q"], capture_output=True, text=True)
    assert p.returncode == 1  # a file failed; the other is ingested
    p = subprocess.run(cli + ["ingest", str(shared_traces / BERT), "--out", str(ds), "-q"], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr  # already present is success
    p = subprocess.run(cli + ["runs", str(ds), "--format", "csv"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("run_id,status,started_utc,duration_s,files_seen,ingested,already_present,failed,")
    rows = [line.split(",") for line in lines[1:]]
    assert [r[1] for r in rows] == ["done", "failed_files"]  # newest first
    assert [r[4:8] for r in rows] == [["1", "0", "1", "0"], ["2", "1", "0", "1"]]
    first_run = rows[1][0]
    assert f"ingest {shared_traces / BERT} {shared_traces / DAMAGED} --out {ds} -q" in lines[2]
    p = subprocess.run(cli + ["runs", str(ds), "--failed", "--format", "json"], capture_output=True, text=True)
    failed = json.loads(p.stdout)
    assert [(f["run_id"], Path(f["path"]).name) for f in failed] == [(first_run, "alexnet_truncated_json.json.gz")]
    assert "rerun with --salvage" in failed[0]["error"]
    p = subprocess.run(cli + ["runs", str(ds), "--run", first_run, "--format", "csv"], capture_output=True, text=True)
    assert [line.split(",")[1] for line in p.stdout.splitlines()[1:]] == ["ingested", "failed"]
    p = subprocess.run(cli + ["runs", str(ds), "--run", "19700101T000000Z-0000"], capture_output=True, text=True)
    assert p.returncode == 1 and p.stderr.startswith("tracesql: error: no run 19700101T000000Z-0000 in ")


def test_a_run_whose_process_died_is_marked_killed(tmp_path, shared_traces):
    ds = tmp_path / "ds"
    assert tracesql.ingest([shared_traces / BERT], out=ds)[0].status == "ingested"
    (rec,) = _runs(ds)
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)
    stuck = {**rec, "run_id": "20000101T000000Z-dead", "status": "running", "ended_at": None, "duration_s": None,
             "pid": dead, "files": []}
    (ds / "runs" / "20000101T000000Z-dead.json").write_text(json.dumps(stuck))
    live = {**stuck, "run_id": "20000101T000000Z-live", "pid": __import__("os").getpid()}
    (ds / "runs" / "20000101T000000Z-live.json").write_text(json.dumps(live))
    assert tracesql.ingest([shared_traces / BERT], out=ds)[0].status == "duplicate"
    status = {r["run_id"]: r["status"] for r in _runs(ds)}
    assert status["20000101T000000Z-dead"] == "killed"
    assert status["20000101T000000Z-live"] == "running"  # its process still runs: left alone
    assert sorted(status.values()) == ["done", "done", "killed", "running"]


def test_a_catalog_that_cannot_be_written_is_the_runs_error(tmp_path, shared_traces):
    """The traces are published, but an error writing the catalog is not swallowed: it is the run's error."""
    ds = tmp_path / "ds"
    assert tracesql.ingest([shared_traces / BERT], out=ds)[0].status == "ingested"
    # the first trace as an older layout stored it: without a table of today's layout
    (table,) = (ds / "traces").glob("trace_id=*/cpu_nesting")
    shutil.rmtree(table)
    (ds / "catalog.duckdb").unlink()  # as a catalog of another version of the views would be replaced
    with pytest.raises(DatasetError, match="older table layout"):
        tracesql.ingest([shared_traces / QWEN], out=ds)
    assert len(list((ds / "traces").glob("trace_id=*"))) == 2  # published before the catalog
    last = _runs(ds)[-1]
    assert last["status"] == "error" and "older table layout" in last["error"]
    assert [f["status"] for f in last["files"]] == ["ingested"]


def test_the_cron_recipe_runs_as_written(tmp_path, shared_traces):
    """The crontab line of docs/ingest.md, with its paths pointed at a temporary archive, dataset and log."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "ingest.md").read_text()
    block = doc.split("# m h dom mon dow  command\n", 1)[1].split("```", 1)[0]
    (line,) = [x for x in block.splitlines() if x.strip()]
    fields = line.split(None, 5)
    assert fields[:5] == ["30", "2", "*", "*", "*"]
    command = fields[5]
    archive = tmp_path / "archive"
    archive.mkdir()
    for name in (BERT, DAMAGED):
        shutil.copy(shared_traces / name, archive / Path(name).name)
    exe = " ".join(tracesql_cli())
    command = (command.replace("/opt/tracesql/.venv/bin/tracesql", exe)
               .replace("/data/tracesql_data", str(tmp_path / "ds")).replace("/data/traces", str(archive))
               .replace("/var/log/", f"{tmp_path}/"))
    first = subprocess.run(["bash", "-c", command])
    second = subprocess.run(["bash", "-c", command])  # the next night: nothing new
    assert (first.returncode, second.returncode) == (1, 1)  # the damaged file fails every night, and says so
    log = (tmp_path / "tracesql-ingest.log").read_text()
    assert log.count("h100_bert_small_infer.json.gz -> trace") == 1
    assert log.count("h100_bert_small_infer.json.gz: already in the dataset") == 1
    assert log.count("alexnet_truncated_json.json.gz: truncated trace") == 2
    runs = _runs(tmp_path / "ds")
    assert [(r["status"], r["ingested"], r["already_present"], r["failed"]) for r in runs] == [
        ("failed_files", 1, 0, 1), ("failed_files", 0, 1, 1)]


def test_a_killed_run_keeps_the_traces_it_published(tmp_path, shared_traces):
    """kill -9 of a run once it has published a trace: the trace belongs to the run at once (ingest_run_files,
    hence `report --since`), and the next run marks the run killed with that trace in its record, rather than
    leaving it to no run ('already present' later)."""
    ds = tmp_path / "ds"
    files = [str(shared_traces / f) for f in ("nvidia/hta_triton_example.json.gz", QWEN, BERT)]
    p = subprocess.Popen(tracesql_cli() + ["ingest", *files, "--out", str(ds), "-q"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list((ds / "traces").glob("trace_id=*")):
        time.sleep(0.02)
    p.kill()
    p.communicate(timeout=60)
    published = sorted(d.name.split("=", 1)[1] for d in (ds / "traces").glob("trace_id=*"))
    assert published
    (rec,) = _runs(ds)
    assert rec["status"] == "running"
    with tracesql.open(ds) as d:
        files_of_run = d.sql("SELECT run_id, trace_id FROM ingest_run_files WHERE status = 'ingested' "
                             "ORDER BY trace_id").rows()
    assert files_of_run == [(rec["run_id"], t) for t in published]
    since = subprocess.run(tracesql_cli() + ["report", str(ds), "--since", rec["run_id"], "--out",
                                             str(tmp_path / "rep")], capture_output=True, text=True)
    assert since.returncode == 0, since.stderr
    # the next run: the killed run's record is repaired, the trace stays its own
    again = tracesql.ingest(files, out=ds)
    killed = next(r for r in _runs(ds) if r["run_id"] == rec["run_id"])
    assert killed["status"] == "killed" and killed["ingested"] == len(published)
    assert sorted(f["trace_id"] for f in killed["files"] if f["status"] == "ingested") == published
    assert sorted(str(r.trace_id) for r in again if r.status == "duplicate") == published
    with tracesql.open(ds) as d:
        per_trace = d.sql("SELECT trace_id, count(*) AS n FROM ingest_run_files WHERE status = 'ingested' "
                          "GROUP BY ALL").rows()
    assert sorted(per_trace) == sorted((r.trace_id, 1) for r in again)  # every trace, one run each


def test_a_record_that_cannot_be_written_says_so(tmp_path, shared_traces, monkeypatch, capsys):
    """A run whose record cannot be written at its end (the disk is full) writes what it can in place (status,
    counts, the reason), says so on stderr, and is not later taken for a killed run."""
    import errno

    from tracesql.ingest import runs as runs_mod

    ds = tmp_path / "ds"
    real = runs_mod._write_json

    def full(path, obj):
        if obj.get("status") != "running":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, obj)

    monkeypatch.setattr(runs_mod, "_write_json", full)
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    res = tracesql.ingest([shared_traces / BERT, bad], out=ds)
    assert [r.status for r in res] == ["ingested", "failed"]
    err = capsys.readouterr().err
    assert "without its list of files (No space left on device)" in err
    monkeypatch.setattr(runs_mod, "_write_json", real)
    (rec,) = _runs(ds)
    assert (rec["status"], rec["ingested"], rec["failed"]) == ("failed_files", 1, 1)
    assert "No space left on device" in rec["error"]
    tracesql.ingest([shared_traces / BERT], out=ds)  # a later run does not mark it killed
    assert next(r for r in _runs(ds) if r["run_id"] == rec["run_id"])["status"] == "failed_files"
    with tracesql.open(ds) as d:  # its trace is still its own
        assert d.sql("SELECT run_id FROM ingest_run_files WHERE status = 'ingested'").rows() == [(rec["run_id"],)]


def test_a_ctrl_c_reported_by_duckdb_is_an_interrupt(tmp_path, shared_traces, monkeypatch):
    """DuckDB reports a Ctrl-C during one of its queries as its own error ('Query interrupted'): the run is
    recorded as interrupted, not as an error."""
    import duckdb

    ing = sys.modules["tracesql.ingest"]

    def interrupted(*a, **k):
        raise duckdb.InterruptException("Query interrupted")

    ds = tmp_path / "ds"
    assert tracesql.ingest([shared_traces / BERT], out=ds)[0].status == "ingested"
    monkeypatch.setattr(ing, "_ingest_files", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tracesql.ingest([shared_traces / QWEN], out=ds)
    assert _runs(ds)[-1]["status"] == "interrupted"


def test_a_connection_busy_with_an_interrupted_query_is_closed():
    """DuckDB refuses to close a connection while a query on it is still running (after a Ctrl-C the query may
    still be stopping when the ingest closes its connections): close_connection interrupts the query and closes
    it, and the query ends as interrupted."""
    import threading

    import duckdb

    from tracesql.store.config import close_connection

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = true")  # query_progress() reports a running query (nothing printed)
    con.execute("SET enable_progress_bar_print = false")
    ended: list[str] = []

    def long_query():
        try:
            con.execute("SELECT count(*) FROM range(100000000000) t(i) WHERE i % 7 = 3").fetchall()
            ended.append("finished")
        except duckdb.InterruptException:
            ended.append("interrupted")

    t = threading.Thread(target=long_query)
    t.start()
    deadline = time.monotonic() + 30
    while con.query_progress() < 0 and time.monotonic() < deadline:  # until the query runs
        time.sleep(0.01)
    with pytest.raises(duckdb.ResourceInUseException):
        con.close()
    close_connection(con)
    t.join(timeout=30)
    assert ended == ["interrupted"]
    with pytest.raises(duckdb.ConnectionException):
        con.execute("SELECT 1")
