"""A trace whose events have ``"name": null`` (a kernel, an op, a runtime call, an annotation) and other text
fields left null: it ingests, and every command runs on it with no traceback (docs/cli.md: a name the trace does
not give is an empty cell in tables, ``[no name]`` in the tree and the first screen)."""
from __future__ import annotations

import json

import pytest

import tracesql
from tracesql.cli.main import main


def _trace() -> dict:
    ev: list[dict] = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 990,
                       "dur": 1000},
                      {"ph": "X", "cat": "user_annotation", "name": None, "pid": 1, "tid": 1, "ts": 992, "dur": 900},
                      {"ph": "X", "cat": None, "name": None, "pid": 1, "tid": 2, "ts": 993, "dur": 5},
                      {"ph": "i", "cat": "cpu_instant_event", "name": None, "pid": 1, "tid": 1, "ts": 994, "s": "t"}]
    for i in range(6):
        ts, corr = 1000 + 100 * i, 10 + i
        ev.append({"ph": "X", "cat": "cpu_op", "name": None if i in (1, 4) else "aten::mm", "pid": 1, "tid": 1,
                   "ts": ts, "dur": 50, "args": {"Input Dims": [[4, 4], [4, 4]], "Input type": ["float", None],
                                                 "Concrete Inputs": [None, ""]}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": None if i == 3 else "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": ts + 1, "dur": 5, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": None if i in (2, 4) else "gemm_kernel", "pid": 0, "tid": 7,
                   "ts": ts + 20, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": corr}})
    return {"schemaVersion": 1, "traceEvents": ev, "deviceProperties": [{"id": 0, "name": None}],
            "distributedInfo": {"backend": None, "rank": 0, "world_size": 1}}


@pytest.fixture(scope="module")
def null_ds(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("nulls")
    (d / "t.json").write_text(json.dumps(_trace()))
    (d / "t2.json").write_text(json.dumps(_trace()).replace('"ts": 990', '"ts": 991'))
    results = tracesql.ingest([str(d / "t.json"), str(d / "t2.json")], out=d / "ds", quiet=True)
    assert [r.status for r in results] == ["ingested", "ingested"], [r.error for r in results]
    return str(d / "ds")


COMMANDS = [
    ["summary"], ["report"], ["report", "-f", "csv"], ["report", "--style", "tracelens", "-f", "csv"],
    ["report", "--style", "hta", "-f", "csv"], ["tree"], ["tree", "--merge"], ["tree", "-f", "csv"],
    ["tree", "--op", "aten::mm"], ["kernels"], ["kernels", "-v"], ["kernels", "--by-category"], ["gaps"],
    ["gaps", "--hist"], ["gaps", "--transitions"], ["gaps", "--idle"], ["gaps", "--events"], ["launches"],
    ["categories"], ["categories", "--by", "op"], ["categories", "--by", "op_kernel"],
    ["categories", "--by", "op_category"], ["categories", "--by", "subcategory"], ["categories", "--unmatched"],
    ["categories", "--ruleset", "tracelens"], ["categories", "--ruleset", "hta"], ["perf"], ["perf", "--by", "op"],
    ["perf", "--by", "kernel"], ["perf", "--by", "category"], ["timeline"], ["timeline", "--by-step"],
    ["timeline", "--style", "hta"], ["traces"], ["runs"], ["tables"], ["query", None, "SELECT * FROM events"],
]


# The commands that failed on such a trace stay in the fast tier; the rest of the sweep is slow (a second each).
FAST = (["summary"], ["report"], ["tree"])


@pytest.mark.parametrize("argv", [a if a in FAST else pytest.param(a, marks=pytest.mark.slow) for a in COMMANDS],
                         ids=lambda a: " ".join(x for x in a if x))
def test_every_command_tolerates_null_names(null_ds, argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    args = [argv[0], null_ds] + [a for a in argv[1:] if a is not None]
    rc = main(args + ["--trace", "t.json"] if argv[0] in ("summary", "tree") and len(argv) == 1 else args)
    out, err = capsys.readouterr()
    assert rc in (0, 1), (rc, err)  # 1: an empty selection, said in one line
    assert "Traceback" not in err and err.count("tracesql: error: ") == rc, err


def test_null_names_shown(null_ds, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["summary", null_ds, "--trace", "t.json"]) == 0
    out = capsys.readouterr().out
    assert "[no name]" in out and "None" not in out
    assert main(["tree", null_ds, "--trace", "t.json"]) == 0
    out = capsys.readouterr().out
    assert "[no name]" in out and "None" not in out


@pytest.mark.slow
@pytest.mark.parametrize("level", [None, "timeline", "steps", "steady", "categories", "ops", "op_args", "kernels",
                                   "tree", "perf"])
def test_diff_tolerates_null_names(null_ds, level, capsys):
    rc = main(["diff", f"{null_ds}:t.json", f"{null_ds}:t2.json"] + (["--level", level] if level else []))
    err = capsys.readouterr().err
    assert rc in (0, 1) and "Traceback" not in err, err


@pytest.mark.slow
@pytest.mark.parametrize("style", ["tracelens", "hta"])
def test_peer_diff_tolerates_null_names(null_ds, style, capsys, tmp_path):
    rc = main(["diff", f"{null_ds}:t.json", f"{null_ds}:t2.json", "--style", style, "--out", str(tmp_path / style)]
              + (["--names", "a", "b"] if style == "tracelens" else []))
    err = capsys.readouterr().err
    assert rc in (0, 1) and "Traceback" not in err, err
