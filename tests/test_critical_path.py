"""HTA's critical path of an iteration (sql/peers/hta/critical_path.sql): a small trace worked by hand, and the
shared HTA 0.5.0 references (critical_path_summary.csv: µs per bound_by class) and one more HTA run
(tests/data/hta_critical_path)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import tracesql

T0 = 1_000_000  # µs
OWN = Path(__file__).parent / "data" / "hta_critical_path"  # more HTA 0.5.0 runs: see its README
# The CPU thread: step [0, 100] µs; op [10, 60] runs two launches, [20, 25] (k1) and [55, 58] (k2); op2 [65, 70].
# Stream 7 runs k1 at [50, 80] and k2 at [85, 95].
CPU = [("user_annotation", "ProfilerStep#1", 0, 100, None), ("cpu_op", "op", 10, 50, None),
       ("cuda_runtime", "cudaLaunchKernel", 20, 5, 1), ("cuda_runtime", "cudaLaunchKernel", 55, 3, 2),
       ("cpu_op", "op2", 65, 5, None)]
GPU = [("k1", 50, 30, 1), ("k2", 85, 10, 2)]


def _trace() -> dict:
    ev: list[dict] = []
    for cat, name, ts, dur, corr in CPU:
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": T0 + ts, "dur": dur,
                   "args": {} if corr is None else {"correlation": corr}})
    for name, ts, dur, corr in GPU:
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": T0 + ts, "dur": dur,
                   "args": {"device": 0, "stream": 7, "correlation": corr}})
    return {"schemaVersion": 1, "traceEvents": ev}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("cp")
    (d / "cp.json").write_text(json.dumps(_trace()))
    [r] = tracesql.ingest([str(d / "cp.json")], out=d / "ds", quiet=True)
    assert r.status == "ingested", r.error
    ds = tracesql.open(d / "ds")
    yield ds
    ds.close()


def test_hta_critical_path_by_hand(small):
    # HTA's graph: the CPU walk op.start(10) -> launch1 (20, 25) -> launch2 (55, 58) -> op.end(60), then a zero
    # dependency edge to op2 (65, 70): at most 55 µs. The queue is 1 just after launch1 and 0 just after k1 starts,
    # and nothing ran before k1 on its stream, so k1 is reached from launch1's start (a 30 µs launch delay). k2's
    # queue is 1 then 0 too, but k1 was still running when launch2 began (80 > 55), so k2 follows k1 (a 5 µs
    # kernel-kernel delay). Longest path: op.start -> launch1.start (10, cpu) -> k1.start (30, launch) -> k1.end
    # (30, compute) -> k2.start (5, kernel-kernel) -> k2.end (10, compute) = 85 µs. HTA 0.5.0 gives the same.
    edges = small.sql("SELECT type, bound_by, duration FROM _hta_cp_edges ORDER BY ts_us, type").rows()
    assert sorted(edges) == sorted([
        ("critical_path_operator", "cpu_bound", 10.0),
        ("critical_path_kernel_launch_delay", "gpu_kernel_launch_overhead", 30.0),
        ("critical_path_operator", "gpu_compute_bound", 30.0),
        ("critical_path_kernel_kernel_delay", "gpu_kernel_kernel_overhead", 5.0),
        ("critical_path_operator", "gpu_compute_bound", 10.0)])
    got = dict(small.sql("SELECT bound_by, duration FROM hta_critical_path_summary").rows())
    assert got == {"cpu_bound": 10.0, "gpu_kernel_launch_overhead": 30.0, "gpu_compute_bound": 40.0,
                   "gpu_kernel_kernel_overhead": 5.0}


@pytest.mark.slow
@pytest.mark.parametrize("ref, trace", [
    ("hta/nvidia_h100_qwen_infer/critical_path_summary.csv", "nvidia/h100_qwen_infer.json.gz"),
    ("hta/nvidia_hta_ns_resolution_rank0/critical_path_summary.csv", "nvidia/hta_ns_resolution_rank0.json.gz"),
    (str(OWN / "h100_bert_small_infer.csv"), "nvidia/h100_bert_small_infer.json.gz")])
def test_hta_critical_path_equals_hta(tmp_path, shared_traces, reference_dir, ref, trace):
    [r] = tracesql.ingest([str(shared_traces / trace)], out=tmp_path / "ds", quiet=True)
    assert r.status == "ingested", r.error
    with tracesql.open(tmp_path / "ds") as ds:
        got = dict(ds.sql("SELECT bound_by, duration FROM hta_critical_path_summary").rows())
    with open(reference_dir / ref, newline="") as f:  # an absolute path (OWN) replaces reference_dir
        want = {row["bound_by"]: float(row["duration"]) for row in csv.DictReader(f)}
    assert set(got) == set(want)
    for k, v in want.items():
        assert abs(got[k] - v) <= 1e-6, (k, got[k], v)
