"""`tracesql replay`: the replay IR of the shared traces and of tests/data/replay/gaps.json (argument kinds
TraceLens's EventReplay cannot build), written without torch; and, with the CPU build of torch, the scripts run
and the replayed op records the trace's Input Dims and Input type (--check). TraceLens's own results on the same
argument sets are in tests/data/replay/tracelens_*.tsv (README.md there)."""
from __future__ import annotations

import ast
import csv
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, tracesql_cli

DATA = ROOT / "tests" / "data" / "replay"
HAS_TORCH = importlib.util.find_spec("torch") is not None


def needs_torch():
    """Replays need torch (CI installs the CPU build: .ci/run); elsewhere without it they are skipped."""
    if not HAS_TORCH:
        if os.environ.get("CI"):
            pytest.fail("torch is not installed: CI installs torch==2.13.0+cpu (.ci/run)")
        pytest.skip("torch is not installed (pip install torch==2.13.0+cpu)")


def _cli_without_torch(args: list[str]) -> subprocess.CompletedProcess:
    """The command line, in a Python where importing torch fails: writing the scripts must not need it."""
    code = ("import sys; sys.modules['torch'] = None\n"
            "from tracesql.cli.main import main\nsys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT)


def _tsv(name: str) -> list[dict]:
    with open(DATA / name, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _run(folder: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    out = folder / "results.json"
    p = subprocess.run([sys.executable, str(folder / "replay.py"), "--device", "cpu", "--check", "--json", str(out),
                        *args], capture_output=True, text=True, cwd=folder)
    return p, json.loads(out.read_text()) if out.exists() else []


@pytest.fixture(scope="module")
def gaps(tmp_path_factory) -> tuple[Path, dict]:
    import tracesql

    base = tmp_path_factory.mktemp("replay_gaps")
    tracesql.ingest([str(DATA / "gaps.json")], out=base / "ds")
    p = _cli_without_torch(["replay", str(base / "ds"), "--out", str(base / "out")])
    assert p.returncode == 0, p.stderr
    assert "17 argument sets in replay_ir.json, 17 scripts" in " ".join(p.stdout.split())
    return base / "out", json.loads((base / "out" / "replay_ir.json").read_text())


@pytest.fixture(scope="module")
def shared(ds, tmp_path_factory) -> tuple[Path, dict]:
    """The first 20 argument sets of every shared trace, written as `tracesql replay DATASET --out DIR` writes
    them (the gaps fixture runs that command where torch cannot be imported)."""
    from tracesql.api import replay

    out = tmp_path_factory.mktemp("replay_shared") / "out"
    replay.write(ds, out)
    return out, json.loads((out / "replay_ir.json").read_text())


def _entry(doc: dict, op: str, n: int = 0) -> dict:
    return [e for e in doc["entries"] if e["op_name"] == op][n]


def _args(e: dict) -> list[tuple]:
    return [(a["kind"], a["dtype"], a["shape"], a["strides"], a["value"], a["init"], a["index_high"])
            for a in e["args"]]


def test_gaps_ir_builds_every_argument_kind(gaps):
    _, doc = gaps
    assert [e["rank"] for e in doc["entries"]] == list(range(1, 18))
    assert all(e["unreplayable"] is None for e in doc["entries"])
    # a tensor list (its element type is not recorded: the trace's most recorded one, float32)
    assert _args(_entry(doc, "aten::cat")) == [
        ("tensor_list", "float32", [[4, 8], [4, 8]], [[8, 1], [8, 1]], None, "normal", None),
        ("scalar", None, None, None, 0, None, None)]
    assert _entry(doc, "aten::cat")["args"][0]["dtype_source"] == "trace"
    # a str: recorded as '' (the schema's default is used)
    assert _args(_entry(doc, "aten::gelu"))[1] == ("unrecorded", None, None, None, None, None, None)
    # index tensors and their bounds
    assert _args(_entry(doc, "aten::embedding"))[1] == ("tensor", "int64", [3], [1], None, "index", 10)
    assert _args(_entry(doc, "aten::index_select"))[2] == ("tensor", "int64", [3], [1], None, "index", 10)
    assert _args(_entry(doc, "aten::gather"))[2] == ("tensor", "int64", [4, 2], [2, 1], None, "index", 8)
    assert _args(_entry(doc, "aten::embedding_bag"))[1:3] == [("tensor", "int64", [3], [1], None, "index", 10),
                                                              ("tensor", "int64", [2], [1], None, "offsets", 3)]
    assert _args(_entry(doc, "aten::nll_loss_forward"))[1] == ("tensor", "int64", [3], [1], None, "index", 5)
    assert _args(_entry(doc, "aten::floor_divide"))[1][5] == "ones"
    # a dim list, keepdim, dtype float64 (7)
    assert [a["value"] for a in _entry(doc, "aten::sum")["args"]] == [None, [1], True, 7]
    # overlapping and non-contiguous strides, complex64, uint8, float8
    assert _args(_entry(doc, "aten::add"))[1][3] == [0, 1]
    assert _args(_entry(doc, "aten::copy_"))[0][2:4] == ([4, 8], [1, 4])
    assert {a["dtype"] for a in _entry(doc, "aten::mul")["args"]} == {"complex64"}
    assert {a["dtype"] for a in _entry(doc, "aten::bitwise_and")["args"]} == {"uint8"}
    assert [a["dtype"] for a in _entry(doc, "aten::_to_copy", 0)["args"]][0] == "float8_e4m3fn"
    # optional tensors given as None
    assert [a["kind"] for a in _entry(doc, "aten::native_layer_norm")["args"]] == [
        "tensor", "scalar_list", "unrecorded", "unrecorded", "scalar"]


def test_gaps_ir_of_the_to_copy_with_every_enum(gaps):
    _, doc = gaps
    e = [e for e in doc["entries"] if e["op_name"] == "aten::_to_copy" and e["args"][0]["dtype"] == "float32"][0]
    assert [(a["kind"], a["value"]) for a in e["args"]] == [
        ("tensor", None), ("scalar", 15), ("scalar", 0), ("unrecorded", None), ("unrecorded", None),
        ("scalar", False), ("scalar", 0)]


def test_scripts_are_standalone_python(gaps):
    out, doc = gaps
    names = sorted(p.name for p in out.glob("*.py"))
    assert names == sorted([e["script"] for e in doc["entries"]] + ["replay.py"])
    for name in names:
        tree = ast.parse((out / name).read_text())
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | {
            (n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert imported <= {"__future__", "argparse", "json", "os", "sys", "tempfile", "time", "importlib",
                            "torch"}, (name, imported)


def test_hostile_op_names_make_safe_scripts(tmp_path):
    from tracesql.api.replay import script_name, script_text

    name = "evil::op'''\n\"); import os; os.system('x') #"
    e = {"trace": "../../a b.json.gz", "rank": 3, "op_name": name, "args": [], "unreplayable": None}
    assert "/" not in script_name(e) and not script_name(e).startswith(".")
    text = script_text(e)
    tree = ast.parse(text)  # still one valid module
    assert not any(isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "system" for n in ast.walk(tree))
    ns: dict = {"__name__": "not_main"}
    exec(compile(text, "x.py", "exec"), ns)  # noqa: S102 - the generated script, not run as __main__
    assert ns["ENTRY"]["op_name"] == name


def test_shared_ir(shared, trace_ids):
    out, doc = shared
    by_trace: dict[str, list] = {}
    for e in doc["entries"]:
        by_trace.setdefault(e["trace"], []).append(e)
    assert all(len(v) <= 20 for v in by_trace.values())
    assert len(doc["entries"]) == 559
    assert sum(e["unreplayable"] is None for e in doc["entries"]) == 342
    bert = by_trace["h100_bert_small_infer.json.gz"]
    assert [e["op_name"] for e in bert[:3]] == ["aten::addmm", "aten::addmm", "aten::_flash_attention_forward"]
    assert bert[0]["count"] == 17 and bert[0]["kernel_time_sum_ns"] == 98718
    assert bert[0]["recorded"]["strides"][2] == [1, 512]  # a transposed weight: strides kept
    sel = [e for e in bert if e["op_name"] == "aten::index_select"]
    assert [e["args"][2]["index_high"] for e in sel] == [512, 2, 30522]
    reasons = {e["unreplayable"].split(":")[0].split(" (")[0] for e in doc["entries"] if e["unreplayable"]}
    assert reasons == {"no arguments recorded", "not a PyTorch operator", "an XLA HLO op",
                       "a collective's record", "argument 0"}
    assert (out / bert[0]["script"]).is_file()


def test_the_ir_builds_what_tracelens_builds(shared):
    """Where TraceLens's EventReplay builds an IR (150 of the 559 sets), every argument of ours is the same tensor
    (shape, strides, the recorded type) or the same value; TraceLens builds None for an unrecorded argument."""
    _, doc = shared
    ours = {(e["trace"], e["rank"]): e for e in doc["entries"]}
    rows = [r for r in _tsv("tracelens_cpu.tsv") if r["ir"]]
    assert len(rows) == 150
    for r in rows:
        e = ours[(r["trace"], int(r["rank"]))]
        tl = json.loads(r["ir"])
        assert e["op_name"] == r["op_name"] and len(tl) == len(e["args"]), r
        for t, a in zip(tl, e["args"], strict=True):
            if a["kind"] == "tensor":
                assert [a["shape"], a["recorded_type"], a["strides"]] == t, (r, a)
            elif a["kind"] in ("scalar", "scalar_list"):
                assert a["value"] == t, (r, a)
            else:
                assert t in (None, []), (r, a)


def test_the_cli_lists_the_argument_sets(all_dataset):
    p = subprocess.run([*tracesql_cli(), "replay", str(all_dataset[0]), "-t", "h100_bert_small_infer.json.gz",
                        "--op", "aten::%mm", "-f", "csv"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(p.stdout.splitlines()))
    assert [(r["rank"], r["op_name"], r["count"]) for r in rows][:2] == [("1", "aten::addmm", "17"),
                                                                       ("2", "aten::addmm", "1")]
    assert len(rows) == 4 and all(r["replayable"] == "true" for r in rows)
    p = subprocess.run([*tracesql_cli(), "replay", str(all_dataset[0]), "--op", "no::such"], capture_output=True,
                       text=True)
    assert p.returncode == 1 and p.stderr.startswith("tracesql: error: no op argument set")


def test_gaps_replay_on_cpu(gaps):
    needs_torch()
    out, doc = gaps
    p, results = _run(out, "--iters", "1", "--warmup", "0")
    assert p.returncode == 0, p.stderr
    status = {(r["rank"], r["op_name"]): (r["status"], r["args_match"]) for r in results}
    assert status.pop((1, "aten::index")) == ("unreplayable", None)
    assert set(status.values()) == {("ok", True)}
    assert [r["reason"] for r in results if r["rank"] == 1] == [
        "argument indices (List[Optional[Tensor]]) is not recorded by the profiler"]
    tl = _tsv("tracelens_gaps.tsv")
    assert sum(r["status"] == "ok" for r in tl) == 2  # TraceLens: native_layer_norm and copy_ only
    assert "16 ok, 1 unreplayable, 0 failed" in p.stdout


def test_one_script_runs_on_its_own(gaps, tmp_path):
    needs_torch()
    out, doc = gaps
    e = _entry(doc, "aten::embedding_bag")
    shutil.copy(out / e["script"], tmp_path / "alone.py")
    p = subprocess.run([sys.executable, "alone.py", "--device", "cpu", "--iters", "2", "--check"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "aten::embedding_bag: ok" in p.stdout and "args match" in p.stdout


def test_shared_traces_replay_on_cpu(shared):
    """Every first-20 argument set of the shared traces replays on the CPU with the trace's Input Dims and Input
    type, or says why not; every set TraceLens replays is replayed too."""
    needs_torch()
    out, doc = shared
    p, results = _run(out, "--iters", "0")
    assert p.returncode == 0, p.stderr[-2000:]
    n = {s: sum(r["status"] == s for r in results) for s in ("ok", "unreplayable", "failed")}
    assert n == {"ok": 260, "unreplayable": 299, "failed": 0}
    assert all(r["args_match"] for r in results if r["status"] == "ok")
    not_torch = {r["reason"].split(" is not an operator")[0] for r in results
                 if r["reason"] and " is not an operator of this torch" in r["reason"]}
    why = {r["reason"].split(":")[0].split(" (")[0].split(" is not")[0] for r in results
           if r["reason"] and " is not an operator of this torch" not in r["reason"]}
    assert why == {"no arguments recorded", "not a PyTorch operator", "an XLA HLO op", "a collective's record",
                   "argument 0", "no CPU kernel", "argument indices", "argument process_group", "argument reduce_op"}
    # ops of libraries this torch does not have: vLLM, SGLang, aiter, FBGEMM
    assert {o.split("::")[0] for o in not_torch} == {"vllm", "_C", "_C_cache_ops", "aiter", "fbgemm",
                                                    "sglang_profiler"}
    ours = {(r["trace"], r["rank"]): r for r in results}
    tl = _tsv("tracelens_cpu.tsv")
    assert len(tl) == len(results) and sum(r["status"] == "ok" for r in tl) == 130
    missed = [(r["trace"], r["rank"]) for r in tl if r["status"] == "ok"
              and ours[(r["trace"], int(r["rank"]))]["status"] != "ok"]
    assert missed == []


def test_the_printed_line_shows_the_kernels_side_by_side():
    from tracesql.render.replay_runtime import _line

    r = {"rank": 3, "op_name": "aten::mm", "status": "ok", "traced_us": 5.0, "replayed_us": 4.25, "args_match": True,
         "reason": None, "traced_kernels": ["sm90_gemm", "splitk_reduce"], "replayed_kernels": ["sm90_gemm"] * 2}
    assert _line(r).splitlines() == ["#3 aten::mm: ok, traced 5.0 us, replayed 4.2 us, args match",
                                     "    traced kernels:   sm90_gemm; splitk_reduce",
                                     "    replayed kernels: sm90_gemm"]
    r.update(status="unreplayable", replayed_us=None, args_match=None, replayed_kernels=None, reason="no CPU kernel")
    assert _line(r) == "#3 aten::mm: unreplayable, traced 5.0 us, replayed - us (no CPU kernel)"
