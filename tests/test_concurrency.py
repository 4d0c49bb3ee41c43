"""Two `tracesql ingest` processes writing into one dataset at the same time (e.g. two scheduled jobs over the same
archive): no trace lost, none twice, nothing corrupt. Each trace is published by one rename of its own directory,
so the only contention is two processes ingesting the same file: one publishes it, the other reports it as
already present."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

import tracesql
from tracesql.store.dataset import table_statements

from .conftest import good_trace_files, init_sql_view, tracesql_cli

pytestmark = pytest.mark.slow  # concurrent processes over many traces

TABLES = ["events", "kernels", "correlations", "instants", "metadata", "counters", "gpu_user_annotations",
          "other_events", "launches", "ingest_issues"]


_cli = tracesql_cli


def _counts(ds_path: Path) -> dict[str, tuple]:
    """{source path: (trace_id, events_read, rows per table counted in the parts)}."""
    con = duckdb.connect()
    for stmt in table_statements(ds_path):
        con.execute(stmt)
    out = {}
    rows = con.execute("SELECT trace_id, source_path, events_read FROM traces").fetchall()
    assert len({r[0] for r in rows}) == len(rows)  # one row per trace
    for tid, path, read in rows:
        assert path not in out, f"{path} twice"
        out[path] = (tid, read, tuple(con.execute(f"SELECT count(*) FROM {t} WHERE trace_id = ?",
                                                  [tid]).fetchall()[0][0] for t in TABLES))
    con.close()
    return out


@pytest.fixture(scope="module")
def twenty(shared_traces):
    """The 20 smallest undamaged shared traces with distinct file names (the output names files by base name)."""
    files: dict[str, Path] = {}
    for f in sorted((shared_traces / t for t in good_trace_files()), key=lambda p: p.stat().st_size):
        files.setdefault(f.name, f)
    assert len(files) >= 20
    return [str(f) for f in list(files.values())[:20]]


def test_two_processes_into_one_dataset(tmp_path, twenty):
    ref_ds = tmp_path / "ref"
    assert all(r.status == "ingested" for r in tracesql.ingest(twenty, out=ref_ds))
    ref = _counts(ref_ds)

    # job A: traces 0-14 in order; job B: traces 19-5 in reverse order. 0-4 and 15-19 belong to one job each
    # (2 x 5), 5-14 to both (10), met in opposite orders so that the two jobs race on the same files.
    a, b = twenty[:15], twenty[5:][::-1]
    ds = tmp_path / "ds"
    procs = [subprocess.Popen(_cli() + ["ingest", *files, "--out", str(ds), "-q"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for files in (a, b)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert err == ""
    status: dict[str, list[str]] = {}
    for out in (outs[0][0], outs[1][0]):
        out = out.replace("\n    ", " ")  # results are wrapped to the width, continuation lines indented
        for line in out.splitlines()[:-1]:
            m = re.match(r"(\S+?)(?: -> trace |: already in the dataset)", line)
            assert m, line
            status.setdefault(m.group(1), []).append("duplicate" if "already in the dataset" in line else "ingested")
        assert re.fullmatch(r"15 files: \d+ ingested, \d+ already present, 0 failed; dataset .*",
                            out.splitlines()[-1])
    # every trace is in the dataset once, with the rows of a clean ingest
    got = _counts(ds)
    assert got == ref
    # the traces only one job had were ingested by it; each shared one by exactly one of the two jobs
    for i, n in enumerate(Path(f).name for f in twenty):
        assert sorted(status[n]) == (["ingested"] if i < 5 or i >= 15 else ["duplicate", "ingested"]), n
    assert not list((ds / ".staging").iterdir())
    # the dataset's own views agree
    con = duckdb.connect()
    con.execute(init_sql_view(ds, "traces"))
    assert con.execute("SELECT count(*), count(DISTINCT trace_id) FROM traces").fetchone() == (20, 20)
    con.close()
    # two runs recorded, which between them ingested each trace once
    runs = [json.loads(p.read_text()) for p in (ds / "runs").glob("*.json")]
    assert sorted((r["status"], r["files_seen"], r["failed"]) for r in runs) == [("done", 15, 0), ("done", 15, 0)]
    assert sum(r["ingested"] for r in runs) == 20 and sum(r["already_present"] for r in runs) == 10
    ingested = [f["trace_id"] for r in runs for f in r["files"] if f["status"] == "ingested"]
    assert len(ingested) == len(set(ingested)) == 20


def test_same_file_in_two_processes(tmp_path, shared_traces):
    """The same trace given to two processes at once lands once."""
    f = str(shared_traces / "nvidia/h100_qwen_infer.json.gz")
    ds = tmp_path / "ds"
    procs = [subprocess.Popen(_cli() + ["ingest", f, "--out", str(ds), "-q"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert sum("-> trace" in o for o in outs) == 1
    assert sum("already in the dataset" in o for o in outs) == 1
    got = _counts(ds)
    assert list(got) == [f] and got[f][2][TABLES.index("kernels")] == 1707


# ---- every writing command at once, into a new and into an existing dataset --------------------------------------

SMALL = ["nvidia/hta_large_integer.json.gz", "nvidia/hta_trace_compare_base.json.gz", "jax/cpu_perfetto_trace.json.gz",
         "nvidia/gpumodel_relative_ts.json.gz", "nvidia/hta_triton_example.json.gz",
         "nvidia/hta_event_sync_multi_stream.json.gz"]
# every kernel becomes communication: the stored GPU timeline (built with the rules) changes visibly
ALL_COMM = "category,pattern,class,priority\nall_comm,.,comm,1000000\n"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, shared_traces):
    """Six small good traces and qwen, three files that fail (not a trace, truncated, missing), with the reference
    counts of a clean ingest of the good ones."""
    d = tmp_path_factory.mktemp("mixed")
    good = [str(shared_traces / t) for t in SMALL] + [str(shared_traces / "nvidia/h100_qwen_infer.json.gz")]
    (d / "not_a_trace.json").write_text('{"x": 1}')
    (d / "cut.json").write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}, {"p')
    bad = [str(d / "not_a_trace.json"), str(d / "cut.json"), str(d / "missing.json")]
    (d / "rules.csv").write_text(ALL_COMM)
    ref = d / "ref"
    assert all(r.status == "ingested" for r in tracesql.ingest(good, out=ref))
    return good, bad, d / "rules.csv", _counts(ref)


def _start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(_cli() + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _one_round(tmp: Path, good: list[str], bad: list[str], rules: Path, ref: dict, existing: bool) -> None:
    ds = tmp / "ds"
    if existing:
        assert tracesql.ingest(good[:1], out=ds)[0].status == "ingested"
    # four ingests: one of failing files only (the run that, creating the dataset, would remove it), three that
    # overlap, with failing files among them; a rules change and a catalog at the same time
    # overlap, with failing files among them; the failing one and one that takes a while (qwen, 18,221 events)
    # start first; the others, a rules change and a catalog a moment later
    ingests = [[bad[0], bad[1]], [good[6], bad[0], *good[0:2]], [*good[1:5], bad[2]], [good[5], good[0], bad[1]]]
    procs = [_start(["ingest", *files, "--out", str(ds), "-q"]) for files in ingests[:2]]
    time.sleep(0.5)
    procs += [_start(["ingest", *files, "--out", str(ds), "-q"]) for files in ingests[2:]]
    others = [_start(["categories", str(ds), "--rules", str(rules), "--format", "csv"]),
              _start(["catalog", str(ds)])]
    outs = [p.communicate(timeout=300) for p in procs + others]
    for p, (_out, err) in zip(procs + others, outs, strict=True):
        assert "Traceback" not in err, err
        assert p.returncode in (0, 1), err
        for line in err.splitlines():
            assert line.startswith(("tracesql: ", "rules from ")), err
    assert [p.returncode for p in procs] == [1, 1, 1, 1], [o[1] for o in outs]
    for p, (_out, err) in zip(others, outs[len(procs):], strict=True):
        if p.returncode:  # only before the dataset was there: a command on a dataset never fails because of another
            assert not existing and ("no such directory" in err or "not a tracesql dataset" in err
                                     or "no GPU events" in err), err
    # every good file is in the dataset once, whole, with the rows of a clean ingest
    assert _counts(ds) == ref
    assert not [p for p in (ds / ".staging").iterdir()] if (ds / ".staging").exists() else True
    # every run is recorded, ended, with every file; each trace belongs to exactly one run
    runs = [json.loads(p.read_text()) for p in (ds / "runs").glob("*.json")]
    by_files = sorted(sorted(f["path"] for f in r["files"]) for r in runs if r["command"] != "tracesql.ingest")
    if not existing and sorted(ingests[0]) not in by_files:
        # the run of failing files only made the dataset, published nothing and found itself alone in it: it
        # removed the dataset with its record before the other runs came (and one of them made it again)
        ingests = ingests[1:]
    assert len(runs) == len(ingests) + existing
    assert all(r["status"] in ("done", "failed_files") for r in runs), runs
    assert by_files == sorted(sorted(files) for files in ingests)
    ingested = [f["trace_id"] for r in runs for f in r["files"] if f["status"] == "ingested"]
    assert sorted(ingested) == sorted(v[0] for v in ref.values())
    for r in runs:
        for f in r["files"]:
            assert (f["status"] == "failed") == (f["path"] in bad), f
    with tracesql.open(ds) as d:
        assert d.sql("SELECT count(*) AS n FROM ingest_run_files WHERE status = 'ingested'")["n"][0] == len(ref)
    # the rules change is whole: the rule file is there and every trace's stored timeline is the one its rules
    # give (also the traces published while it ran)
    rule_ok = others[0].returncode == 0 or (ds / "rules" / "rules.csv").exists()
    if rule_ok:
        assert (ds / "rules" / "rules.csv").exists()
    with tracesql.open(ds) as d:
        diff = d.sql("SELECT count(*) AS n FROM (SELECT * FROM gpu_timeline_all EXCEPT ALL "
                     "SELECT * FROM _gpu_timeline_all_build)")["n"][0]
        assert diff == 0
        if rule_ok:
            assert d.sql("SELECT count(*) AS n FROM kernels_categorized WHERE kernel_category = 'all_comm'")["n"][0] > 0
    assert not list(ds.glob(".catalog.*")) and not list(ds.glob(".init.sql.*"))


@pytest.mark.parametrize("existing", [False, True], ids=["new", "existing"])
def test_every_writing_command_at_once(tmp_path, mixed, existing):
    """Four ingests (one of failing files only), a `categories --rules` and a `catalog`, all at once, into a new
    and into an existing dataset: no run removes or spoils what another writes. TRACESQL_CONCURRENCY_ROUNDS=20
    repeats it."""
    good, bad, rules, ref = mixed
    for k in range(int(os.environ.get("TRACESQL_CONCURRENCY_ROUNDS", "1"))):
        _one_round(tmp_path / f"r{k}", good, bad, rules, ref, existing)


def test_a_trace_built_before_a_rules_change_is_published_under_the_new_rules(tmp_path, shared_traces, monkeypatch):
    """A rules change that lands between a trace's build and its publish (another process's `categories --rules`):
    the trace's rule tables are rebuilt under the lock before its publish, so its stored timeline is the one of the
    rules in place."""
    import sys

    ds = tmp_path / "ds"
    assert tracesql.ingest([shared_traces / SMALL[0]], out=ds)[0].status == "ingested"
    ing = sys.modules["tracesql.ingest"]
    real = ing.build_derived
    changed: list[bool] = []

    def build_then_change(*a, **k):
        real(*a, **k)
        if not changed:  # the other process's change, done while this trace waits for its publish
            (ds / "rules").mkdir(exist_ok=True)
            (ds / "rules" / "all_comm.csv").write_text(
                "ruleset,applies_to,event_cat,category,subcategory,class,pattern,priority,note\n"
                '"default","kernel","","all_comm","","comm",".","1000000",""\n')
            changed.append(True)

    monkeypatch.setattr(ing, "build_derived", build_then_change)
    assert tracesql.ingest([shared_traces / "nvidia/h100_bert_small_infer.json.gz"], out=ds)[0].status == "ingested"
    with tracesql.open(ds) as d:
        bert = d.sql("SELECT trace_id FROM traces WHERE file_name LIKE 'h100_bert%'")["trace_id"][0]
        diff = d.sql("SELECT count(*) AS n FROM (SELECT * FROM gpu_timeline_all WHERE trace_id = $t EXCEPT ALL "
                     "SELECT * FROM _gpu_timeline_all_build WHERE trace_id = $t)", {"t": bert})["n"][0]
    assert diff == 0
