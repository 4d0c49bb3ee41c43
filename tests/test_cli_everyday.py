"""Everyday use of the command line on real traces: every command fits a 120-column terminal, machine formats are
whole, bad invocations end in one line and a meaningful exit status, traces of the same file name stay apart."""
from __future__ import annotations

import csv
import gzip
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import tracesql
from tracesql.cli.main import main

from .conftest import tracesql_cli
from .terminal import Terminal

QWEN = "nvidia/h100_qwen_infer.json.gz"


def run_cli(*argv: str, columns: int = 120, timeout: int = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS=str(columns))
    return subprocess.run(tracesql_cli() + list(argv), capture_output=True, text=True, timeout=timeout, env=env)


def one_error_line(proc: subprocess.CompletedProcess, code: int) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    err = proc.stderr
    assert "Traceback" not in err, err
    if code == 2 and err.startswith("usage:"):  # argparse: the usage, then one error line
        return err.strip().splitlines()[-1]
    assert err.count("\n") == 1 and err.startswith("tracesql: "), err
    return err.strip()


# ---- width ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def two_ds(tmp_path_factory, shared_traces) -> Path:
    """qwen and the graph replay with its capture: three traces, two GPU vendors."""
    out = tmp_path_factory.mktemp("two") / "ds"
    files = [shared_traces / QWEN, shared_traces / "graphs/vllm_decode_full/graph_execution.json.gz",
             shared_traces / "graphs/vllm_decode_full/capture_rank0.json.gz"]
    rs = tracesql.ingest([str(f) for f in files], out=out, quiet=True)
    assert [r.status for r in rs] == ["ingested"] * 3, [r.error for r in rs]
    return out


def _invocations(ds: str) -> list[list[str]]:
    """Every command, with each of its options that changes what is printed."""
    return [
        ["traces", ds], ["tables", ds], ["tables", ds, "--all"],
        ["query", ds, "SELECT name, count(*) AS n FROM kernels GROUP BY name ORDER BY n DESC LIMIT 5"],
        ["kernels", ds], ["kernels", ds, "--top", "4"], ["kernels", ds, "--verbose", "-n", "5"],
        ["kernels", ds, "--by-category"], ["kernels", ds, "--sort", "count", "--trace", "h100_qwen_infer.json.gz",
                                           "--step", "6"],
        ["gaps", ds], ["gaps", ds, "--hist"], ["gaps", ds, "--hist", "--hist-max", "50", "--bins", "5"],
        ["gaps", ds, "--transitions", "-n", "5"], ["gaps", ds, "--transitions", "-v", "-n", "5"],
        ["gaps", ds, "--idle"], ["gaps", ds, "--events", "-n", "5"], ["gaps", ds, "--events", "-v", "-n", "5"],
        ["timeline", ds], ["timeline", ds, "--by-step"], ["timeline", ds, "--pooled"],
        ["timeline", ds, "--style", "tracelens"], ["timeline", ds, "--style", "hta"],
        ["launches", ds],
        ["categories", ds], ["categories", ds, "--by", "subcategory"], ["categories", ds, "--by", "op_kernel"],
        ["categories", ds, "--list-rules"],
        ["tree", ds], ["tree", ds, "--op", "aten::mm", "--depth", "2"], ["tree", ds, "-f", "table", "--depth", "1"],
        ["report", ds], ["report", ds, "--style", "tracelens"], ["report", ds, "--style", "hta"],
        ["replay", ds], ["replay", ds, "--top", "2", "--out", ds + ".replay-scripts-of-a-long-folder-name"],
    ]


@pytest.mark.slow
def test_every_command_fits_120_columns(two_ds, shared_traces, tmp_path, capsys, monkeypatch):
    widest = {}
    # ingest: each file's result (its rows per table, skipped and noted events) wrapped to the width
    proc = run_cli("ingest", str(shared_traces / "nvidia/h100_qwen_infer.json.gz"),
                   str(shared_traces / "multirank/dlrm_8rank/rank0.json.gz"), "--out", str(tmp_path / "ds"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("h100_qwen_infer.json.gz -> trace 2a0d63d215214a56: 18,221 events read in ")
    assert " ".join(ln.strip() for ln in lines[:4]).count("launches 1,198") == 1
    widest["ingest"] = max(len(ln) for ln in lines)
    # the commands in this process (as `tracesql` would run them, stdout not a terminal): ~35 fewer interpreters
    monkeypatch.setenv("COLUMNS", "120")
    capsys.readouterr()
    for argv in _invocations(str(two_ds)):
        assert main(list(argv)) == 0, (argv, capsys.readouterr().err)
        lines = capsys.readouterr().out.splitlines()
        assert lines, argv
        widest[" ".join(argv[:1] + argv[2:])] = max(len(ln) for ln in lines)
    too_wide = {k: w for k, w in widest.items() if w > 120}
    assert not too_wide, too_wide


def test_kernels_fit_and_wide_and_csv_are_whole(qwen_dataset):
    ds = str(qwen_dataset[0])
    narrow = run_cli("kernels", ds, "--top", "4", "--verbose", columns=80)
    assert narrow.returncode == 0, narrow.stderr
    lines = narrow.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert lines[0] == "trace h100_qwen_infer.json.gz"
    assert len(lines) == 2 + 1 + 4 + 1  # title, header, rule, 4 rows, the note on the columns left out
    assert "…" in narrow.stdout and lines[-1].startswith("(--wide shows all; 5 columns not shown: class, min_us")
    wide = run_cli("kernels", ds, "--top", "4", "--verbose", "--wide", columns=80)
    csv_out = run_cli("kernels", ds, "--top", "4", "--verbose", "-f", "csv", columns=80)
    names = [r["name"] for r in csv.DictReader(io.StringIO(csv_out.stdout))]
    assert len(names) == 4 and max(map(len, names)) > 200  # full template names, never cut
    for name in names:
        assert name in wide.stdout
    assert "std_us" in wide.stdout and "…" not in wide.stdout


def test_columns_env_is_the_width(qwen_dataset):
    ds = str(qwen_dataset[0])
    for cols in (60, 100, 200):
        proc = run_cli("timeline", ds, columns=cols)
        assert max(map(len, proc.stdout.splitlines())) <= cols
    assert "window_us" in run_cli("timeline", ds, columns=400).stdout  # room for every column


# ---- one line per error ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_bad_invocations_are_one_line(qwen_dataset, tmp_path):
    ds = str(qwen_dataset[0])
    cases = [
        (["tree", ds, "-f", "parquet"], 2, "--format parquet needs --output"),
        (["kernels", ds, "-f", "parquet"], 2, "--format parquet needs --output"),
        (["timeline", ds, "-f", "parquet"], 2, "--format parquet needs --output"),
        (["gaps", ds, "-f", "parquet"], 2, "--format parquet needs --output"),
        (["launches", ds, "-f", "parquet"], 2, "--format parquet needs --output"),
        (["query", ds, "SELECT 1 AS x", "-f", "parquet"], 2, "--format parquet needs --output"),
        (["query", ds, "SELECT 1 AS x", "--output", "/nonexistent/dir/x.csv"], 1, "No such file or directory"),
        (["kernels", ds, "--output", "/nonexistent/dir/x.csv"], 1, "No such file or directory"),
        (["report", ds, "--out", "/proc/x"], 1, "/proc/x"),
        (["gaps", ds, "--hist", "--bins", "0"], 2, "--bins must be 1 or more"),
        (["gaps", ds, "--hist", "--hist-min", "50", "--hist-max", "10"], 2, "must be above --hist-min"),
        (["query", ds, ""], 2, "the SQL statement is empty"),
        (["query", ds, "SELECT nope FROM traces"], 1, "Binder Error"),
        (["kernels", ds, "--step", "99"], 1, "no ProfilerStep#99 in the selected traces (steps: 6)"),
        (["kernels", ds, "--top", "0"], 1, "no GPU events in the selection; nothing to show"),
        (["kernels", ds, "--top", "-1"], 2, "must be 0 or more, not -1"),
        (["gaps", ds, "--idle", "--step", "6"], 2, "--step works with"),
        (["kernels", ds, "--trace", "nope"], 1, "no trace matches 'nope'"),
        (["tree", ds, "--trace", "nope"], 1, "no trace matches 'nope'"),
        (["tree", ds, "--op", "aten::no_such_op"], 1, "no op 'aten::no_such_op' found"),
        (["tree", ds, "--trace-id", "x"], 2, "unrecognized arguments: --trace-id"),
        (["kernels", str(tmp_path / "missing")], 1, "no such directory"),
        (["kernels", str(tmp_path)], 1, "not a tracesql dataset"),
    ]
    for argv, code, text in cases:
        proc = run_cli(*argv)
        line = one_error_line(proc, code)
        assert text in line, (argv, line)
        assert "{" not in line.replace("{anonymous}", ""), line  # no placeholder left in a message
        assert proc.stdout == "", argv
    assert not Path("/nonexistent").exists()


def test_ingest_failures_leave_nothing(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = tmp_path / "x.json"
    bad.write_text("hello world, not JSON at all")
    proc = run_cli("ingest", str(empty), "--out", str(tmp_path / "ds1"))
    assert "no trace files" in one_error_line(proc, 1)
    assert not (tmp_path / "ds1").exists()
    proc = run_cli("ingest", str(bad), "--out", str(tmp_path / "new" / "ds2"))
    assert "x.json: not JSON" in one_error_line(proc, 1)
    assert not (tmp_path / "new").exists()
    there = tmp_path / "there"
    there.mkdir()
    run_cli("ingest", str(bad), "--out", str(there))
    assert there.is_dir() and list(there.iterdir()) == []  # an empty directory given stays, empty
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    proc = run_cli("ingest", str(bad), "--out", str(other))
    assert "not a tracesql dataset and not empty" in one_error_line(proc, 1)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]


# ---- identity ----------------------------------------------------------------------------------------------

def _copy_gz(src: Path, dst: Path, extra: bytes = b"") -> None:
    """A copy of a gzip trace with other bytes (whitespace after the JSON): a different trace, same events."""
    data = gzip.decompress(src.read_bytes()) + extra
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(gzip.compress(data))


@pytest.mark.slow
def test_traces_of_the_same_file_name(shared_traces, tmp_path):
    src = shared_traces / "amd/mi300_torch_compile_triton.json.gz"
    a, b = tmp_path / "run_a" / "trace.json.gz", tmp_path / "run_b" / "trace.json.gz"
    _copy_gz(src, a)
    _copy_gz(src, b, b"\n")
    ds = tmp_path / "ds"
    rs = tracesql.ingest([str(a), str(b)], out=ds, quiet=True)
    assert [r.status for r in rs] == ["ingested", "ingested"]
    ids = {r.path: str(r.trace_id) for r in rs}
    proc = run_cli("traces", str(ds), "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    labels = {r["trace_id"]: r["label"] for r in rows}
    assert labels == {ids[str(a)]: f"trace.json.gz@{ids[str(a)][:8]}", ids[str(b)]: f"trace.json.gz@{ids[str(b)][:8]}"}
    line = one_error_line(run_cli("kernels", str(ds), "--trace", "trace.json.gz"), 1)
    assert "'trace.json.gz' matches 2 traces" in line and all(lbl in line for lbl in labels.values())
    # a label, a trace_id, a path suffix each name one trace
    ta, tb = ids[str(a)], ids[str(b)]
    for key, tid in [(labels[ta], ta), (tb, tb), ("run_a/trace.json.gz", ta)]:
        out = run_cli("kernels", str(ds), "--trace", key, "-f", "csv").stdout
        assert {r["trace_id"] for r in csv.DictReader(io.StringIO(out))} == {tid}
    # the report keeps both: one folder per trace, in every style
    for style in ("native", "tracelens", "hta"):
        out = tmp_path / f"rep_{style}"
        assert main(["report", str(ds), "--style", style, "--out", str(out)]) == 0
        folders = sorted(p.name for p in out.iterdir() if p.is_dir())
        assert len(folders) == 2, folders
        # a native report of several traces starts with the traces side by side, at the top of --out
        assert sorted(p.name for p in out.iterdir() if p.is_file()) == (
            ["kernels_across_traces.csv", "ops_across_traces.csv", "traces_overview.csv"]
            if style == "native" else [])  # no ranks_overview: the two runs are not the ranks of a job
        first = "gpu_timeline.csv" if style != "hta" else "temporal_breakdown.csv"
        texts = [list(csv.DictReader((out / f / first).open())) for f in folders]
        if style == "native":  # each folder has its own trace's rows
            assert [{r["trace_id"] for r in t} for t in texts] == [{ta}, {tb}] or \
                [{r["trace_id"] for r in t} for t in texts] == [{tb}, {ta}]
            texts = [[{k: v for k, v in r.items() if k not in ("trace_id", "trace")} for r in t] for t in texts]
        assert texts[0] and texts[0] == texts[1]  # the same events: the same numbers, once per trace
    with tracesql.open(ds) as d:
        for df in (d.timeline(), d.kernel_summary(), d.gaps(), d.gaps(what="events", top=3)):
            assert df.columns[:2] == ["trace_id", "trace"] and set(df.get_column("trace_id")) == set(ids.values())


def test_report_json_is_one_object_and_out_is_csv(qwen_dataset, tmp_path, capsys):
    ds = str(qwen_dataset[0])
    assert main(["report", ds, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc)[:4] == ["gpu_timeline", "gpu_timeline_by_step", "comm_compute_overlap", "kernel_summary"]
    assert sum(r["count"] for r in doc["kernel_summary"]) == 1707
    assert main(["report", ds, "--style", "hta", "--format", "json"]) == 0
    hta = json.loads(capsys.readouterr().out)
    assert list(hta["temporal_breakdown"]) == ["h100_qwen_infer.json.gz"]
    assert main(["report", ds, "--out", str(tmp_path / "r")]) == 0
    assert sorted(p.suffix for p in (tmp_path / "r").iterdir()) == [".csv"] * 19
    assert {"queue_length.csv", "copy_bandwidth.csv", "memory.csv", "memory_timeline.csv",
            "frequent_kernel_sequences.csv", "critical_path.csv"} <= \
        {p.name for p in (tmp_path / "r").iterdir()}


def test_gap_histogram_covers_every_gap(qwen_dataset, capsys):
    ds = str(qwen_dataset[0])
    assert main(["gaps", ds, "--hist", "-f", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert sum(int(r["count"]) for r in rows) == 1706  # every positive gap (gaps_by_stream: n_gaps 1706)
    assert float(rows[-1]["bin_end_us"]) == 500.0  # the largest gap, 290.943 µs, rounded up
    assert main(["gaps", ds, "--hist", "--hist-max", "50", "--bins", "4"]) == 0
    out = capsys.readouterr().out
    assert "██████████████████████████████" in out  # the largest bin: the full bar
    assert main(["gaps", ds, "--hist", "--hist-max", "50", "--bins", "4", "-f", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert sum(int(r["count"]) for r in rows) == 1706
    assert (rows[-1]["bin_start_us"], rows[-1]["bin_end_us"], rows[-1]["count"]) == ("50.0", "", "8")


def test_gaps_step_and_relative_event_times(qwen_dataset, capsys):
    ds = str(qwen_dataset[0])
    assert main(["gaps", ds, "--step", "6", "-f", "csv"]) == 0
    (row,) = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert row["n_events"] == "1198"  # the GPU work launched in ProfilerStep#6 (gpu_timeline_by_step)
    assert main(["gaps", ds, "--events", "-n", "1", "-f", "csv"]) == 0
    (ev,) = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert ev["gap_us"] == "290.943" and 0 < float(ev["start_us"]) < 60_000  # µs from the trace's start


def test_version_tables_and_tree_default_depth(qwen_dataset, capsys):
    ds = str(qwen_dataset[0])
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith(f"tracesql {tracesql.__version__} (duckdb ")
    assert main(["tables", ds, "-f", "csv"]) == 0
    names = [r["name"] for r in csv.DictReader(io.StringIO(capsys.readouterr().out))]
    assert "kernel_summary" in names and not [n for n in names if n.startswith("_")]
    assert main(["tables", ds, "--all", "-f", "csv"]) == 0
    assert "_gpu_steps" in capsys.readouterr().out
    assert main(["tree", ds]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("(deeper levels not shown: --depth 4") and len(out) < 400
    assert out[-2].startswith("[no launch] ....") and "509 GPU events" in out[-2]


def test_shell_builtin_prompt_in_a_terminal(qwen_dataset, tmp_path):
    """The built-in prompt on a real terminal: a query, Up for the last line (history), line editing, Ctrl-C drops
    the statement being typed (also when it comes just as the prompt is drawn, after queries have run), Ctrl-D."""
    env = dict(os.environ, TRACESQL_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="100")
    with Terminal(tracesql_cli() + ["shell", str(qwen_dataset[0]), "--builtin"], env=env) as p:
        p.expect("tracesql> ")
        p.send("SELECT count(*) AS n FROM kernels;\r")
        p.expect("1,707")
        p.expect("tracesql> ")
        p.send("\x1b[A")  # Up: the last statement comes back, Ctrl-A / Ctrl-K edit it away
        p.expect("SELECT count\\(\\*\\) AS n FROM kernels;")
        p.send("\x01\x0bSELECT 41 + 1 AS answer;\r")
        p.expect("42")
        p.expect("tracesql> ")
        for _ in range(3):
            p.send("SELECT 'dropped'\r")  # a statement left open ...
            p.expect("     ...> ")
            p.send("\x03")  # ... and dropped by Ctrl-C
            p.expect("statement dropped", timeout=10)
            p.expect("tracesql> ")
        p.send("SELECT 6 * 7 AS product;\r")
        p.expect("42")
        p.expect("tracesql> ")
        p.send("\x03")  # Ctrl-C on an empty line: a new prompt
        p.expect("\\^C", timeout=10)
        p.expect("tracesql> ")
        p.send("\x04")  # Ctrl-D leaves
        assert p.wait() == 0
    assert "SELECT 41 + 1" in (tmp_path / "cache" / "shell_history").read_text()


def test_shell_refuses_an_old_duckdb_cli(qwen_dataset, tmp_path):
    fake = tmp_path / "bin" / "duckdb"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'v1.1.3 19864453f7'\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{fake.parent}:{os.environ['PATH']}", TRACESQL_CACHE_DIR=str(tmp_path / "c"))
    proc = subprocess.run(tracesql_cli() + ["shell", str(qwen_dataset[0])], input=".quit\n", capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "is v1.1.3; the dataset needs the duckdb CLI v1.4.0 or newer" in proc.stderr
    assert "tracesql shell on" in proc.stdout



# ---- Ctrl-C ------------------------------------------------------------------------------------------------

BIG = "modern/xdit_flux_mi300x_graph_capture.json.gz"  # 3.2 MB of gzip, over 4 MB of JSON: a progress bar


def _snapshot(ds: Path) -> list[str]:
    return sorted(str(p.relative_to(ds)) for p in ds.rglob("*") if ".staging" not in p.parts)


@pytest.mark.slow
@pytest.mark.parametrize("when", ["parse", "build"])
def test_ctrl_c_stops_the_whole_run(shared_traces, qwen_dataset, tmp_path, when):
    """Ctrl-C typed on the terminal while the first of two files is read (the progress bar shows) or while its
    call tree is built: one line `interrupted`, exit status 130, the second file not touched, the dataset as it
    was (an existing one unchanged; a new one not created)."""
    existing = tmp_path / "existing"
    shutil.copytree(qwen_dataset[0], existing)
    before = _snapshot(existing)
    files = [str(shared_traces / BIG), str(shared_traces / "amd/mi300_qwen_infer.json.gz")]
    wait_for = r"MB JSON" if when == "parse" else r"building the call tree"
    for target in (existing, tmp_path / "new"):
        with Terminal(tracesql_cli() + ["ingest", *files, "--out", str(target)], env=dict(os.environ)) as term:
            term.expect(wait_for, timeout=300)
            term.send("\x03")
            code = term.wait()
        out = term.text
        assert code == 130, out
        assert "tracesql: interrupted" in out and "Traceback" not in out and "internal error" not in out, out
        assert "mi300_qwen_infer" not in out, out  # the second file was not ingested
        if target == existing:
            # the data as it was; the record of runs gains this run, marked interrupted
            new_records = sorted(set(_snapshot(existing)) - set(before))
            assert [p for p in _snapshot(existing) if p not in new_records] == before
            assert len(new_records) == 1 and new_records[0].startswith("runs/"), new_records
            assert json.loads((existing / new_records[0]).read_text())["status"] == "interrupted"
            assert not [p for p in (existing / ".staging").glob("*")] if (existing / ".staging").exists() else True
        else:
            assert not target.exists(), list(target.rglob("*"))
