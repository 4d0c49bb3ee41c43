"""The launch queue per stream and the memory-copy bandwidth per kind (sql/gpu/queue_length.sql,
sql/gpu/copy_bandwidth.sql) on a small trace worked by hand."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import tracesql

T0 = 1_000_000  # µs
# (launch API, launch start µs, GPU cat, GPU name, stream, GPU start µs, GPU dur µs, bytes)
WORK = [
    ("cudaLaunchKernel", 0, "kernel", "k1", 7, 30, 10, None),
    ("cudaMemsetAsync", 5, "gpu_memset", "Memset (Device)", 8, 12, 2, 2_000),
    ("cudaLaunchKernel", 10, "kernel", "k2", 7, 40, 10, None),
    ("cudaLaunchKernel", 20, "kernel", "k3", 7, 50, 10, None),
    ("cudaMemcpyAsync", 25, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 60, 4, 40_000),
    ("cudaMemcpyAsync", 26, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 8, 62, 2, 10_000),
]


def _trace() -> dict:
    ev: list[dict] = []
    for i, (api, launch, cat, name, stream, start, dur, nbytes) in enumerate(WORK):
        args: dict = {"device": 0, "stream": stream, "correlation": 100 + i}
        if nbytes is not None:
            args |= {"bytes": nbytes, "memory bandwidth (GB/s)": nbytes / (dur * 1000)}
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": 1, "tid": 1, "ts": T0 + launch, "dur": 1,
                   "args": {"correlation": 100 + i}})
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": T0 + start, "dur": dur,
                   "args": args})
    return {"schemaVersion": 1, "traceEvents": ev}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("queue")
    (d / "q.json").write_text(json.dumps(_trace()))
    [r] = tracesql.ingest([str(d / "q.json")], out=d / "ds", quiet=True)
    assert r.status == "ingested", r.error
    ds = tracesql.open(d / "ds")
    yield ds
    ds.close()


def test_queue_depth_by_hand(small):
    changes = small.sql("SELECT stream, ts_ns, depth, held_ns FROM queue_length_changes ORDER BY stream, ts_ns").rows()
    t = T0 * 1000
    # stream 7: launches at 0, 10, 20 (kernels) and 25 µs (memcpy); the GPU starts them at 30, 40, 50, 60 µs
    assert [(s, ts - t, d, h) for s, ts, d, h in changes if s == 7] == [
        (7, 0, 1, 10_000), (7, 10_000, 2, 10_000), (7, 20_000, 3, 5_000), (7, 25_000, 4, 5_000),
        (7, 30_000, 3, 10_000), (7, 40_000, 2, 10_000), (7, 50_000, 1, 10_000), (7, 60_000, 0, None)]
    summary = {r[0]: r[1:] for r in small.sql(
        "SELECT stream, launches, span_ns, max_depth, mean_depth, full_ns, full_pct FROM queue_length_summary_at(3)"
    ).rows()}
    # depth x time on stream 7: 1x10 + 2x10 + 3x5 + 4x5 + 3x10 + 2x10 + 1x10 = 125 depth·µs over 60 µs; depth >= 3
    # from 20 to 40 µs
    assert summary[7][:4] == (4, 60_000, 4, pytest.approx(125 / 60))
    assert summary[7][4:] == (20_000, pytest.approx(100 / 3))
    # stream 8: launched at 5, started at 12; launched at 26, started at 62: 7 + 36 = 43 depth·µs over 57 µs
    assert summary[8] == (2, 57_000, 1, pytest.approx(43 / 57), 0, 0.0)
    assert small.sql("SELECT count(*) FROM queue_length_summary WHERE full_ns > 0").item() == 0  # nothing at 1024


def test_copy_bandwidth_by_hand(small):
    ev = small.sql("SELECT kind, bytes, dur_ns, gbps FROM copy_events ORDER BY ts_ns").rows()
    assert ev == [("Memset", 2_000, 2_000, 1.0), ("Memcpy HtoD", 40_000, 4_000, 10.0),
                  ("Memcpy HtoD", 10_000, 2_000, 5.0)]
    rows = {r[0]: r[1:] for r in small.sql(
        "SELECT kind, count, bytes, dur_ns, busy_ns, achieved_gbps, time_weighted_gbps, mean_gbps, max_gbps "
        "FROM copy_bandwidth").rows()}
    # the two HtoD copies overlap ([60, 64] and [62, 64] µs): busy 4 µs, 50,000 bytes / 4,000 ns = 12.5 GB/s;
    # weighted by duration 50,000 / 6,000 ns; their plain mean (10 + 5) / 2
    assert rows["Memcpy HtoD"] == (2, 50_000, 6_000, 4_000, 12.5, pytest.approx(50 / 6), 7.5, 10.0)
    assert rows["Memset"] == (1, 2_000, 2_000, 2_000, 1.0, 1.0, 1.0, 1.0)


HTA_COUNTER_REFS = Path(__file__).parent / "data" / "hta_counters"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["h100_bert_small_infer", "hta_alexnet_critical_path", "hta_event_sync_multi_stream"])
def test_hta_counter_summaries_equal_hta_on_more_traces(shared_traces, tmp_path, name):
    """HTA 0.5.0's queue length and memory bandwidth summaries of three more shared traces (made by
    tests/data/hta_counters/make_reference.py), to 1e-9 relative."""
    [r] = tracesql.ingest([str(shared_traces / "nvidia" / f"{name}.json.gz")], out=tmp_path / "ds", quiet=True)
    with tracesql.open(tmp_path / "ds") as ds:
        for view, csv_name in (("hta_queue_length_summary", "queue_length_summary"),
                               ("hta_memory_bw_summary", "memory_bw_summary")):
            with open(HTA_COUNTER_REFS / name / f"{csv_name}.csv", newline="") as f:
                want = list(csv.reader(f))[3:]  # below pandas's three header lines
            got = ds.sql(f"SELECT * EXCLUDE (trace_id) FROM {view} ORDER BY 1, 2").rows()
            assert len(got) == len(want) > 0, csv_name
            for g, w in zip(got, want, strict=True):
                assert (str(g[0]), str(g[1])) == (w[0], w[1])
                # pandas leaves the std of one value empty
                assert [v is None for v in g[2:]] == [not v for v in w[2:]], (csv_name, g, w)
                assert [v for v in g[2:] if v is not None] == pytest.approx([float(v) for v in w[2:] if v], rel=1e-9), \
                    (csv_name, g, w)
