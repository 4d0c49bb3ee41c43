"""Atomic ingest: `tracesql ingest` processes killed with SIGKILL at random moments leave the dataset as it was, or
with whole traces added: it opens, every trace in it has exactly the rows of a clean ingest, every trace reported as
done is in it, and a later run completes the job (removing the killed run's work area)."""
from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

import tracesql
from tracesql.store.dataset import table_statements

from .conftest import ROOT, init_sql_view, tracesql_cli

TABLES = ["events", "kernels", "correlations", "instants", "metadata", "counters", "gpu_user_annotations",
          "other_events", "launches", "ingest_issues"]
KILLS = 22
SMALL = ["nvidia/hta_triton_example.json.gz", "nvidia/gpumodel_relative_ts.json.gz", "jax/cpu_perfetto_trace.json.gz"]


_cli = tracesql_cli


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, shared_traces):
    """Four files in ingest order: a small trace, a 30 MB trace (long enough to be killed mid-way), two small."""
    d = tmp_path_factory.mktemp("atomic_in")
    big = d / "big_qwen.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_trace.py"), "--source",
                    str(shared_traces / "nvidia/h100_qwen_infer.json.gz"), "--size", "30MB", "--out", str(big)],
                   check=True, capture_output=True)
    return [str(shared_traces / SMALL[0]), str(big), str(shared_traces / SMALL[1]), str(shared_traces / SMALL[2])]


def open_tables(ds_path: Path) -> duckdb.DuckDBPyConnection:
    """The dataset's stored tables as views (what tracesql.open defines first, without the analysis views)."""
    con = duckdb.connect()
    for stmt in table_statements(ds_path):
        con.execute(stmt)
    return con


def _counts(ds_path: Path) -> dict[str, tuple]:
    """{file name: (trace_id, events_read, rows per table counted in the parts)} of a dataset."""
    con = open_tables(ds_path)
    out = {}
    for tid, name, read in con.execute("SELECT trace_id, file_name, events_read FROM traces").fetchall():
        rows = tuple(con.execute(f"SELECT count(*) FROM {t} WHERE trace_id = ?", [tid]).fetchall()[0][0]
                     for t in TABLES)
        out[name] = (tid, read, rows)
    con.close()
    return out


def _reported(stdout: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^(\S+) -> trace [0-9a-f]{16}\b", stdout, re.M)]


@pytest.mark.slow
def test_kill_9_at_random_moments(tmp_path, inputs):
    # a clean run: the reference counts; a second one the time a whole run takes once the SQL library's columns
    # are cached (the first run on a fresh cache computes them, which would put most kills after the last file)
    ref_run = subprocess.run(_cli() + ["ingest", *inputs, "--out", str(tmp_path / "ref"), "-q"],
                             capture_output=True, text=True, timeout=300)
    assert ref_run.returncode == 0, ref_run.stderr
    # the kills are drawn up to the moment the last trace is published (after it, the run only writes init.sql and
    # the catalog: a kill there finds every trace, as one just after the last trace does)
    t0 = time.monotonic()
    timed = subprocess.Popen(_cli() + ["ingest", *inputs, "--out", str(tmp_path / "timed"), "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert timed.stdout is not None
    published = [time.monotonic() - t0 for line in timed.stdout if _reported(line)]
    assert timed.wait(timeout=300) == 0, timed.stderr.read() if timed.stderr else ""
    assert len(published) == len(inputs)
    full = published[-1] * 1.1
    ref = _counts(tmp_path / "ref")
    names = [Path(p).name for p in inputs]
    assert sorted(ref) == sorted(names)
    assert ref["big_qwen.json"][1] > 70_000

    rng = random.Random(20240613)
    outcomes = []
    kills = k = 0
    while kills < KILLS and k < 2 * KILLS:
        k += 1
        ds = tmp_path / f"ds{k}"
        delay = rng.uniform(0.0, full)
        p = subprocess.Popen(_cli() + ["ingest", *inputs, "--out", str(ds), "-q"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
        stdout, stderr = p.communicate(timeout=60)
        # (a run can end between the poll and the signal: then it ended on its own, whole)
        assert p.returncode in (-signal.SIGKILL, 0), stderr
        killed = p.returncode == -signal.SIGKILL
        kills += killed
        assert "Traceback" not in stderr
        done = _reported(stdout)
        if not (ds / "traces").is_dir():  # killed before the dataset was created
            assert killed and not done
            outcomes.append((round(delay, 2), 0))
            continue
        got = _counts(ds)  # the dataset opens and every table reads
        # every trace reported as done is there; at most the one being ingested at the kill is there besides
        assert set(done) <= set(got)
        extra = set(got) - set(done)
        assert extra <= ({names[len(done)]} if len(done) < len(names) else set()), (done, sorted(got))
        for name, c in got.items():
            assert c == ref[name], (k, name)
        # nothing but whole traces under traces/, and the views of init.sql (when written) see them all
        assert sorted(d.name for d in (ds / "traces").iterdir()) == sorted(f"trace_id={c[0]}" for c in got.values())
        if (ds / "init.sql").exists():
            con = duckdb.connect()
            con.execute(init_sql_view(ds, "traces"))
            assert con.execute("SELECT count(*) FROM traces").fetchall()[0][0] == len(got)
            con.close()
        outcomes.append((round(delay, 2), len(got)))
        if k % 7 == 0:
            # the job is run again: it completes, the killed run's work area is removed
            again = subprocess.run(_cli() + ["ingest", *inputs, "--out", str(ds), "-q"], capture_output=True,
                                   text=True, timeout=300)
            assert again.returncode == 0, again.stderr
            assert _counts(ds) == ref
            assert again.stdout.count("already in the dataset") == len(got)
            assert not list((ds / ".staging").iterdir())
    print(f"{kills} kills in {k} runs (full run {full:.1f} s); (delay s, traces present):", outcomes)
    assert kills >= KILLS
    # the kills hit different stages: before anything was published and part-way through the files
    present = [n for _, n in outcomes]
    assert 0 in present and any(0 < n < len(names) for n in present)


@pytest.mark.slow
def test_stale_work_area_of_a_dead_process_is_removed(tmp_path, shared_traces):
    """A work area left by a killed ingest (its pid no longer runs) is removed by the next ingest; one of a live
    process is left alone."""
    ds = tmp_path / "ds"
    staging = ds / ".staging"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    (staging / f"{dead}-deadbeef0000" / "out" / "events").mkdir(parents=True)
    (staging / f"{dead}-deadbeef0000" / "out" / "events" / "part-00000.parquet").write_bytes(b"PAR1 partial")
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (staging / f"{live.pid}-0123456789ab").mkdir()
        r = tracesql.ingest([shared_traces / SMALL[0]], out=ds)
        assert [x.status for x in r] == ["ingested"]
        assert sorted(d.name for d in staging.iterdir()) == [f"{live.pid}-0123456789ab"]
    finally:
        live.kill()
        live.wait()
    con = open_tables(ds)
    assert json.loads(con.execute("SELECT row_counts FROM traces").fetchall()[0][0])["kernels"] == 1
    assert con.execute("SELECT count(*) FROM traces").fetchall()[0][0] == 1


def test_stale_work_area_is_removed_when_every_file_is_already_in_the_dataset(tmp_path, shared_traces):
    """A re-run whose files are all duplicates still removes the work area left by a killed ingest."""
    ds = tmp_path / "ds"
    f = shared_traces / SMALL[0]
    assert [x.status for x in tracesql.ingest([f], out=ds)] == ["ingested"]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = ds / ".staging" / f"{dead}-deadbeef0000"
    (stale / "out" / "events").mkdir(parents=True)
    (stale / "out" / "events" / "part-00000.parquet").write_bytes(b"PAR1 partial")
    assert [x.status for x in tracesql.ingest([f], out=ds)] == ["duplicate"]
    assert not stale.exists()


# ---- a rules change is one change ---------------------------------------------------------------------------------

ALL_COMM = "category,pattern,class,priority\nall_comm,.,comm,1000000\n"
RULES_TRACES = ["nvidia/hta_large_integer.json.gz", "nvidia/hta_trace_compare_base.json.gz",
                "nvidia/gpumodel_relative_ts.json.gz", "nvidia/hta_triton_example.json.gz",
                "nvidia/hta_event_sync_multi_stream.json.gz", "nvidia/h100_bert_small_infer.json.gz"]


def _timeline_files(ds: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ds)): p.read_bytes() for p in sorted(ds.glob("traces/*/gpu_timeline_all/*.parquet"))}


def _consistent(ds: Path) -> bool:
    """The stored GPU timeline is the one the rules in place give."""
    with tracesql.open(ds) as d:
        return d.sql("SELECT count(*) AS n FROM (SELECT * FROM gpu_timeline_all EXCEPT ALL "
                     "SELECT * FROM _gpu_timeline_all_build)")["n"][0] == 0


@pytest.fixture
def rules_ds(tmp_path, shared_traces):
    ds = tmp_path / "ds"
    assert all(r.status == "ingested" for r in tracesql.ingest([shared_traces / t for t in RULES_TRACES], out=ds))
    (tmp_path / "all_comm.csv").write_text(ALL_COMM)
    return ds, tmp_path / "all_comm.csv"


@pytest.mark.slow
def test_ctrl_c_during_a_rules_change_leaves_the_dataset_as_it_was(rules_ds):
    ds, rules = rules_ds
    before = _timeline_files(ds)
    p = subprocess.Popen(_cli() + ["categories", str(ds), "--rules", str(rules)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list((ds / ".staging").glob("*/*")):
        time.sleep(0.01)  # the change is under way: its work area is being filled
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1] == "tracesql: interrupted" and "Traceback" not in err
    assert not (ds / "rules" / "all_comm.csv").exists()
    assert _timeline_files(ds) == before
    assert _consistent(ds)
    assert not list((ds / ".staging").iterdir())


@pytest.mark.slow
def test_a_rules_change_killed_after_its_commit_is_finished_by_the_next_command(rules_ds):
    from tracesql.store.lock import EXIT_AFTER_COMMIT_ENV, JOURNAL

    ds, rules = rules_ds
    before = _timeline_files(ds)
    env = {**os.environ, EXIT_AFTER_COMMIT_ENV: "1"}
    p = subprocess.run(_cli() + ["categories", str(ds), "--rules", str(rules)], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 3  # died between the commit and the moves
    assert (ds / JOURNAL).exists() and not (ds / "rules" / "all_comm.csv").exists()
    # a reader that cannot write the dataset says so instead of reading a mix
    import tracesql.store.lock as lock

    def read_only(*a):
        raise PermissionError(13, "Permission denied")

    real, lock._apply = lock._apply, read_only
    try:
        with pytest.raises(tracesql.DatasetError, match="rules was interrupted after it was committed"):
            tracesql.open(ds)
    finally:
        lock._apply = real
    q = subprocess.run(_cli() + ["timeline", str(ds), "--format", "csv"], capture_output=True, text=True)
    assert q.returncode == 0, q.stderr
    assert not (ds / JOURNAL).exists() and (ds / "rules" / "all_comm.csv").exists()
    assert _timeline_files(ds) != before
    assert _consistent(ds)
    assert not list((ds / ".staging").iterdir())


def test_temporary_catalogs_of_killed_processes_are_removed(tmp_path, shared_traces):
    """`catalog` killed while writing leaves `.catalog.<pid>-<r>.duckdb`: the next catalog (or ingest) removes those
    of processes that are gone, under the dataset's lock; a live process's stays."""
    ds = tmp_path / "ds"
    assert tracesql.ingest([shared_traces / SMALL[0]], out=ds)[0].status == "ingested"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = [ds / f".catalog.{dead}-deadbeef.duckdb", ds / f".catalog.{dead}-deadbeef.duckdb.wal"]
    live = ds / f".catalog.{os.getpid()}-0123abcd.duckdb"
    for f in [*stale, live]:
        f.write_bytes(b"partial")
    p = subprocess.run(_cli() + ["catalog", str(ds)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert not any(f.exists() for f in stale) and live.exists()


def test_shell_does_not_write_what_it_need_not(tmp_path, shared_traces):
    """`shell --builtin` writes nothing into the dataset (a read-only dataset opens); the duckdb CLI route rewrites
    init.sql only when it is not current."""
    ds = tmp_path / "ds"
    assert tracesql.ingest([shared_traces / SMALL[0]], out=ds)[0].status == "ingested"
    (ds / "init.sql").unlink()
    p = subprocess.run(_cli() + ["shell", str(ds), "--builtin"], input="SELECT 42 AS answer;\n.quit\n",
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "42" in p.stdout and not (ds / "init.sql").exists()
    from tracesql.store.dataset import write_init_sql

    path = write_init_sql(ds)
    mtime = path.stat().st_mtime_ns
    os.utime(path, ns=(mtime - 10**9, mtime - 10**9))
    assert write_init_sql(ds) == path and path.stat().st_mtime_ns == mtime - 10**9  # current: not rewritten
