"""The kernel sequences of each op and module (sql/gpu/kernel_sequences.sql) on a small trace worked by hand, and
HTA's frequent CUDA kernel sequences (sql/peers/hta/kernel_sequences.sql) against HTA 0.5.0's own output
(tests/data/hta_kernel_sequences, made by the script and commands of its README)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import tracesql

T0 = 1_000_000  # µs
REFS = Path(__file__).parent / "data" / "hta_kernel_sequences"
# (cat, name, start µs, dur µs): the CPU thread. Two calls of module Blk each run op A, which launches k1 then k2;
# op B launches k3 once; op C's launch runs k1 and k2 on two streams at one start (file order decides).
CPU = [("python_function", "nn.Module: Blk_0", 0, 150), ("cpu_op", "A", 5, 100),
       ("python_function", "nn.Module: Blk_1", 190, 120), ("cpu_op", "A", 200, 100),
       ("cpu_op", "B", 400, 100), ("cpu_op", "C", 600, 50)]
# (launch start µs, GPU name, stream, GPU start µs, GPU dur µs)
WORK = [(10, "k1", 7, 20, 5), (20, "k2", 7, 30, 7), (210, "k1", 7, 220, 6), (220, "k2", 7, 230, 8),
        (410, "k3", 7, 420, 3), (610, "k2", 7, 640, 4), (620, "k1", 8, 640, 2)]


def _trace() -> dict:
    ev: list[dict] = [{"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": T0 + ts, "dur": dur,
                       "args": {}} for cat, name, ts, dur in CPU]
    for i, (launch, name, stream, start, dur) in enumerate(WORK):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": T0 + launch, "dur": 2, "args": {"correlation": 100 + i}})
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": T0 + start, "dur": dur,
                   "args": {"device": 0, "stream": stream, "correlation": 100 + i}})
    return {"schemaVersion": 1, "traceEvents": ev}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("seq")
    (d / "s.json").write_text(json.dumps(_trace()))
    [r] = tracesql.ingest([str(d / "s.json")], out=d / "ds", quiet=True)
    assert r.status == "ingested", r.error
    ds = tracesql.open(d / "ds")
    yield ds
    ds.close()


def test_kernel_sequences_by_hand(small):
    rows = small.sql("SELECT kind, name, sequence, kernels, calls, name_calls, calls_pct, gpu_ns, mean_gpu_ns, dur_ns "
                     "FROM kernel_sequences ORDER BY kind, name, sequence").rows()
    assert rows == [
        # Blk_0 and Blk_1 are one module class; each call runs A: k1 (5, 6 µs) then k2 (7, 8 µs)
        ("module", "nn.Module: Blk", "k1 | k2", 2, 2, 2, 100.0, 26_000, 13_000.0, 270_000),
        ("op", "A", "k1 | k2", 2, 2, 2, 100.0, 26_000, 13_000.0, 200_000),
        ("op", "B", "k3", 1, 1, 1, 100.0, 3_000, 3_000.0, 100_000),
        # k2 and k1 start together (on streams 7 and 8): the file's order, k2's event first
        ("op", "C", "k2 | k1", 2, 1, 1, 100.0, 6_000, 6_000.0, 50_000)]
    # the report's section: sequences of two or more events that two or more calls launched
    freq = small.sql("SELECT kind, name, calls, short_sequence FROM frequent_kernel_sequences ORDER BY kind").rows()
    assert freq == [("module", "nn.Module: Blk", 2, "k1 | k2"), ("op", "A", 2, "k1 | k2")]


def test_hta_sequences_by_hand(small):
    def hta(op: str, n: int) -> list[tuple]:
        return small.sql('SELECT pattern, count, "GPU kernel duration (us)", "CPU op duration (us)" '
                         "FROM hta_frequent_cuda_kernel_sequences_for($op, $n) ORDER BY count DESC, pattern",
                         params={"op": op, "n": n}).rows()

    # the calls named with 'A' at the smallest depth: the two A ops (depth 1, under the modules)
    assert hta("A", 2) == [("A|k1|k2", 2, 26.0, 200.0)]
    assert hta("A", 3) == []
    # 'Blk' names two modules at depth 0: one pattern each, as HTA keeps the name in the pattern
    assert hta("Blk", 2) == [("nn.Module: Blk_0|k1|k2", 1, 12.0, 150.0), ("nn.Module: Blk_1|k1|k2", 1, 14.0, 120.0)]
    # a name only a GPU event has: its stack is that event alone (its own duration twice)
    assert hta("k3", 1) == [("k3|k3", 1, 3.0, 3.0)]
    assert small.sql("SELECT count(*) FROM hta_frequent_cuda_kernel_sequences").item() == 0  # no aten::linear


def _reference(name: str) -> list[tuple]:
    with open(REFS / name, newline="") as f:
        return [(r["pattern"], int(r["count"]), float(r["GPU kernel duration (us)"]),
                 float(r["CPU op duration (us)"])) for r in csv.DictReader(f)]


# (reference file, trace, operator_name, min_pattern_len): see tests/data/hta_kernel_sequences/README.md
HTA_RUNS = [("h100_qwen_infer__apply_rotary_pos_emb.csv", "nvidia/h100_qwen_infer.json.gz",
             "apply_rotary_pos_emb", 3),
            ("h100_qwen_infer__sdpa_attention_forward.csv", "nvidia/h100_qwen_infer.json.gz",
             "sdpa_attention_forward", 3),
            ("hta_ns_resolution_rank0__ConvolutionBackward0.csv", "nvidia/hta_ns_resolution_rank0.json.gz",
             "ConvolutionBackward0", 3),
            ("hta_ns_resolution_rank0__aten_conv2d.csv", "nvidia/hta_ns_resolution_rank0.json.gz", "aten::conv2d", 3)]


@pytest.fixture(scope="module")
def two(tmp_path_factory, shared_traces):
    d = tmp_path_factory.mktemp("seq2")
    files = sorted({t for _, t, _, _ in HTA_RUNS})
    results = tracesql.ingest([str(shared_traces / t) for t in files], out=d / "ds", quiet=True)
    assert all(r.status == "ingested" for r in results)
    ds = tracesql.open(d / "ds")
    yield ds, {t: r.trace_id for t, r in zip(files, results, strict=True)}
    ds.close()


@pytest.mark.slow
def test_hta_sequences_equal_hta(two, reference_dir):
    ds, ids = two
    for ref, trace, op, n in HTA_RUNS:
        got = ds.sql('SELECT pattern, count, "GPU kernel duration (us)", "CPU op duration (us)" '
                     "FROM hta_frequent_cuda_kernel_sequences_for($op, $n) WHERE trace_id = $t "
                     "ORDER BY count DESC, pattern", params={"op": op, "n": n, "t": ids[trace]}).rows()
        want = _reference(ref)
        assert [g[:2] for g in got] == [w[:2] for w in want], ref
        for g, w in zip(got, want, strict=True):
            assert g[2] == pytest.approx(w[2], rel=1e-6) and g[3] == pytest.approx(w[3], rel=1e-6), (ref, g, w)
    # the shared references (aten::linear, length 3): each aten::linear launches one kernel, so HTA finds none
    for t in ids.values():
        assert ds.sql("SELECT count(*) FROM hta_frequent_cuda_kernel_sequences WHERE trace_id = $t",
                      params={"t": t}).item() == 0
    assert (reference_dir / "hta" / "nvidia_h100_qwen_infer" / "frequent_cuda_kernel_sequences.csv").read_text() \
        == '""\n'
