"""TraceLens's inference report with a capture folder on a hand-made HIP-graph capture/replay pair
(tests/data/tl_capture/), against TraceLens's own CSVs for it: a FULL capture replayed by the graph launch of each of
two decode steps (TraceLens merges a copy of the window into each launch); and the serving-step annotations and
capture traces that choose the pairing (sql/tree/graph_capture.sql), against what TraceLens reads from them."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import tracesql
from tracesql.cli.main import main

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DATA = Path(__file__).parent / "data" / "tl_capture"
FILES = [DATA / "graph_execution.json", DATA / "capture" / "graph_capture_rank_0_bs4.json"]
TEXT = frozenset({"parent_module", "call_stack_first", "call_stack", "Categories", "kernel_details_summary",
                  "trunc_kernel_details", "call_stack_full", "perf_params", "entry_point"})


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    """The folder of `tracesql report --trace graph_execution.json --style tracelens --group-by-parent-module` on
    the pair ingested once."""
    d = tmp_path_factory.mktemp("tl_capture")
    assert main(["ingest", *map(str, FILES), "--out", str(d / "ds"), "--quiet"]) == 0
    assert main(["report", str(d / "ds"), "--trace", "graph_execution.json", "--style", "tracelens",
                 "--group-by-parent-module", "--out", str(d / "out")]) == 0
    return d / "out"


def test_report_equals_tracelens(report_dir):
    """Every file of TraceLens 0.1.0's inference report (tests/data/tl_capture/README.md), every row and column:
    gpu_timeline byte for byte, the others value for value (ex_UID of a capture op's group: its event_id in the
    capture trace, docs/peers.md)."""
    wanted = sorted((DATA / "tracelens_inference").glob("*.csv"))
    assert len(wanted) == 7
    for f in wanted:
        got = report_dir / f.name
        assert got.exists(), f.name
        if f.name == "gpu_timeline.csv":
            assert got.read_text() == f.read_text()
            continue
        want = read_csv(f)
        if f.name == "ops_unique_args.csv":   # TraceLens's ids of the capture ops' copies -> their event_id
            for r in want:
                r["ex_UID"] = str(CAPTURE_UID.get(int(r["ex_UID"]), int(r["ex_UID"])))
        assert_sheet_equal(pl.read_csv(got, infer_schema_length=0), want, text=TEXT)


# ex_UID in ops_unique_args: TraceLens's id of the first copy's op (after the replay's 38 events: the window's root,
# then its events by start) -> the op's event_id in the capture trace
CAPTURE_UID = {40: 6, 43: 9, 45: 11, 47: 13, 48: 14, 54: 20}


def test_window_copied_per_launch(report_dir):
    """Both graph launches replay the one window of the batch-size-4 capture (the step of 3 requests rounds up to
    it): every capture op counts two instances, each with its own launch's kernels: aiter::fused_moe_ launches the
    flydsl stages' kernels of both copies (31.75 + 17.875 + 30.25 + 16.625 µs) and holds the sorting op's in its
    subtree; aiter::v4_attention_with_output its four kernels of each copy."""
    rows = {r["name"]: r for r in pl.read_csv(report_dir / "ops_summary.csv").rows(named=True)}
    assert {n: r["Count"] for n, r in rows.items()} == {
        "aten::mm": 2, "aiter::fused_moe_": 2, "aiter::v4_attention_with_output": 2,
        "aiter::mla_decode_stage1_asm_fwd": 2, "aten::argmax": 2, "aiter::mla_reduce_v1": 2,
        "aiter::moe_sorting_fwd": 2}
    moe = rows["aiter::fused_moe_"]
    assert (moe["total_direct_kernel_time_sum"], moe["total_subtree_kernel_time_sum"]) == (96.5, 99.0)
    v4 = rows["aiter::v4_attention_with_output"]
    assert v4["total_direct_kernel_time_sum"] == 2.125 + 6.75 + 16.5 + 1.625 + 1.875 + 6.25 + 15.75 + 1.5


def _trace(path: Path, names: list[str], *, rank: int = 0, capture: int = 0, dims: list | None = None) -> Path:
    """A trace with a user annotation of each name (1 ms apart), `capture` capture windows and a cpu_op for each
    Input Dims value of dims."""
    ev: list[dict] = [{"ph": "X", "cat": "user_annotation", "name": n, "pid": 1, "tid": 1, "ts": 1000.0 * (i + 1),
                       "dur": 500.0, "args": {}} for i, n in enumerate(names)]
    for k in range(capture):
        t = 10000.0 + 100.0 * k
        ev += [{"ph": "X", "cat": "cuda_runtime", "name": "hipStreamBeginCapture", "pid": 1, "tid": 1, "ts": t,
                "dur": 1.0, "args": {}},
               {"ph": "X", "cat": "cuda_runtime", "name": "hipStreamEndCapture", "pid": 1, "tid": 1, "ts": t + 50.0,
                "dur": 1.0, "args": {}}]
    for i, d in enumerate(dims or []):
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 20000.0 + 10 * i,
                   "dur": 5.0, "args": {"Input Dims": d}})
    path.write_text(json.dumps({"schemaVersion": 1, "distributedInfo": {"rank": rank}, "traceEvents": ev}))
    return path


def test_serving_steps_and_capture_traces(tmp_path):
    """The iteration roots and batch sizes TraceLens 0.1.0 finds (find_iteration_roots_by_priority,
    find_execution_details; run on these names, README.md): a trace with detailed step annotations keeps only
    those; a trace without any takes the plain ones, and a plain SGLang step its parser cannot read is skipped.
    The capture traces' batch size and mode (classify_graph_capture_trace): from the capture annotation when each
    has a vLLM _dummy_run frame, else the leading first dimension of the ops' input shapes (on a tie the one seen
    first) and FULL for one window, PIECEWISE for more."""
    detailed = ["execute_8_context_1(sq5sk5sqsq25sqsk25)_generation_3(sq3sk300sqsq3sqsk300)",
                "step[EXTEND bs=2 toks=14721 c_sq=14721 c_sqsq=108745533 c_sqsk=108745533 c_sk=14721]",
                "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
                "decode[bs=32 tok=128 d=32 spec=3 sqsq=512 sqsk=262144 sk=65536]",
                "execute_context_0(0)_generation_64(64)", "ProfilerStep#3"]
    plain = ["execute_context_2(6144)_generation_3(3)", "step[DECODE bs=64]", "step[EXTEND bs=2 toks=14721]",
             "step[MIXED bs=2]", "step[DECODE bs=7 extra]", "decode[bs=117/128 tok=117 d=117]",
             "prefill[bs=2 tok=x ctx=[1, 2]]", "execute_diffusion_1_1024x1024", "capture_4_FULL"]
    files = [_trace(tmp_path / "a.json", detailed), _trace(tmp_path / "b.json", plain, rank=1),
             _trace(tmp_path / "c.json", ["capture_16_PIECEWISE"], capture=2, dims=[[[8, 3], [8]], [[4, 2], []]]),
             _trace(tmp_path / "d.json", [], capture=1, dims=[[[4, 3], [8, 2]], [[], [8]], [[4]]]),
             _trace(tmp_path / "e.json", [], capture=3, dims=[[[2, 3], [6, 2]], [["x"]], [2.5]])]
    out = tmp_path / "ds"
    results = tracesql.ingest([str(f) for f in files], out=out, quiet=True)
    ids = {Path(r.path).name: r.trace_id for r in results}
    with tracesql.open(out) as ds:
        steps = ds.con.execute("SELECT trace_id, name, batch_size FROM _serving_steps").fetchall()
        caps = ds.con.execute("SELECT trace_id, batch_size, mode, n_windows FROM _graph_capture_traces").fetchall()
    got = {(t, n): b for t, n, b in steps}
    assert {n: b for (t, n), b in got.items() if t == ids["a.json"]} == {
        detailed[0]: 8, detailed[1]: 14721, detailed[2]: 6, detailed[3]: 128}
    assert {n: b for (t, n), b in got.items() if t == ids["b.json"]} == {
        plain[0]: 6147, plain[1]: 64, plain[2]: 14721, plain[3]: 2, plain[4]: None, plain[5]: 117, plain[6]: 0,
        plain[7]: 1}
    # c: the annotation is not trusted without a _dummy_run frame; 8 leads the first dimensions (twice), 2 windows;
    # d: 4 and 8 twice each, 4 seen first; e: 2 and 6 once each (a text and a number that is no shape skipped)
    assert sorted(caps) == sorted([(ids["c.json"], 8, "PIECEWISE", 2), (ids["d.json"], 4, "FULL", 1),
                                   (ids["e.json"], 2, "PIECEWISE", 3)])
