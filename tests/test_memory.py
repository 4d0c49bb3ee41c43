"""The memory timeline from PyTorch's `[memory]` instants (sql/memory/): an allocation sequence worked by hand (a
block reused at its address at the time of its free, a free of a block allocated before the window, leaks, the peak
and what was live at it, the op and module of each allocation), and nvidia/h100_qwen_infer against a count made
here from the JSON."""
from __future__ import annotations

import bisect
import gzip
import json
from collections import Counter, defaultdict

import orjson
import pytest

import tracesql

T0 = 1_000_000  # µs
BASE = 1_500  # bytes allocated on the GPU before the window (one block of 1,000 at 0x900 among them)
# (µs, device type, device id, address, bytes): in file order; Total Allocated is BASE plus the running sum on the GPU
MEMORY = [
    (15, 1, 0, 0x100, 512),     # A: inside aten::empty, inside aten::linear, inside nn.Module Lin_0
    (25, 0, -1, 0x10, 8),       # a CPU block inside aten::linear, never freed
    (30, 1, 0, 0x200, 256),     # B: inside aten::linear; never freed
    (40, 1, 0, 0x100, -512),    # A freed ...
    (40, 1, 0, 0x100, 128),     # ... and C allocated at its address at the same time (after it in the file)
    (50, 1, 0, 0x900, -1_000),  # a block allocated before the window
    (105, 1, 0, 0x300, 2_048),  # D: inside aten::cat inside aten::to, no module: the peak
    (108, 1, 0, 0x300, -2_048),
    (115, 1, 0, 0x100, -128),   # C freed, outside every op
    (120, 1, 0, 0x400, 64),     # E: at the end of aten::to, so outside it; never freed
]
# (cat, name, start µs, dur µs)
CPU = [("python_function", "nn.Module: Lin_0", 0, 100), ("cpu_op", "aten::linear", 1, 98),
       ("cpu_op", "aten::empty", 10, 10), ("cpu_op", "aten::to", 100, 20), ("cpu_op", "aten::cat", 101, 10)]


def _trace() -> dict:
    ev: list[dict] = [{"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": T0 + ts, "dur": dur, "args": {}}
                      for cat, name, ts, dur in CPU]
    allocated = {0: 0, 1: BASE}
    for ts, dtype, dev, addr, nbytes in MEMORY:
        allocated[dtype] += nbytes
        ev.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,
                   "ts": T0 + ts, "args": {"Total Reserved": 6_144 if dtype else 0, "Total Allocated": allocated[dtype],
                                           "Bytes": nbytes, "Addr": addr, "Device Id": dev, "Device Type": dtype}})
    return {"schemaVersion": 1, "traceEvents": ev}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("memory")
    (d / "m.json").write_text(json.dumps(_trace()))
    [r] = tracesql.ingest([str(d / "m.json")], out=d / "ds", quiet=True)
    assert r.status == "ingested", r.error
    ds = tracesql.open(d / "ds")
    yield ds
    ds.close()


def _us(ns: int | None) -> float | None:
    return None if ns is None else ns / 1000 - T0


def test_timeline_by_hand(small):
    rows = small.sql("SELECT ts_ns, events, delta_bytes, allocated_bytes, reserved_bytes, net_bytes, held_ns "
                     "FROM memory_timeline WHERE device_type = 'cuda' ORDER BY ts_ns").rows()
    # the free and the allocation at 40 µs are one change: the totals after the later of the two
    assert [(_us(ts), *r) for ts, *r in rows] == [
        (15, 1, 512, 2_012, 6_144, 512, 15_000), (30, 1, 256, 2_268, 6_144, 768, 10_000),
        (40, 2, -384, 1_884, 6_144, 384, 10_000), (50, 1, -1_000, 884, 6_144, -616, 55_000),
        (105, 1, 2_048, 2_932, 6_144, 1_432, 3_000), (108, 1, -2_048, 884, 6_144, -616, 7_000),
        (115, 1, -128, 756, 6_144, -744, 5_000), (120, 1, 64, 820, 6_144, -680, None)]
    assert small.sql("SELECT device_name, count(*) FROM memory_timeline_bins GROUP BY ALL ORDER BY 1").rows() == [
        ("cpu", 40), ("cuda:0", 40)]


def test_blocks_pair_by_address_in_order(small):
    blocks = small.sql("SELECT addr, bytes, alloc_ts_ns, end_kind, free_ts_ns, live_ns, leaked, op_name, "
                       "top_op_name, module_path FROM memory_blocks WHERE device_type = 'cuda' ORDER BY alloc_seq"
                       ).rows()
    assert [(a, b, _us(t), k, _us(f), lv, lk, *rest) for a, b, t, k, f, lv, lk, *rest in blocks] == [
        (0x100, 512, 15, "free", 40, 25_000, False, "aten::empty", "aten::linear", "Lin_0"),
        (0x200, 256, 30, None, None, None, True, "aten::linear", "aten::linear", "Lin_0"),
        (0x100, 128, 40, "free", 115, 75_000, False, "aten::linear", "aten::linear", "Lin_0"),  # the address reused
        (0x300, 2_048, 105, "free", 108, 3_000, False, "aten::cat", "aten::to", None),
        (0x400, 64, 120, None, None, None, True, None, None, None)]  # an op ending at the event does not hold it
    assert small.sql("SELECT addr, bytes FROM _memory_unpaired_frees").rows() == [(0x900, -1_000)]


def test_peak_and_what_was_live_at_it(small):
    peaks = small.sql("SELECT device_name, peak_bytes, peak_at_ns, max_reserved_bytes, live_blocks, live_bytes "
                      "FROM memory_summary ORDER BY device_name").rows()
    assert peaks == [("cpu", 8, 0, 0, 1, 8), ("cuda:0", 2_932, 90_000, 6_144, 3, 2_432)]
    # 2,932 at the peak, of which B, C and D allocated in the window; 500 bytes before it (BASE less the free block)
    [(ts, unseen)] = small.sql("SELECT peak_ts_ns, unseen_bytes FROM memory_peaks WHERE device_type = 'cuda'").rows()
    assert (_us(ts), unseen) == (105, 500)
    live = small.sql("SELECT addr, bytes, age_ns, op_name FROM memory_live_at_peak WHERE device_type = 'cuda' "
                     "ORDER BY alloc_ts_ns").rows()
    assert live == [(0x200, 256, 75_000, "aten::linear"), (0x100, 128, 65_000, "aten::linear"),
                    (0x300, 2_048, 0, "aten::cat")]


def test_leaks_by_device_and_op(small):
    leaks = small.sql("SELECT device_name, events, allocs, frees, unpaired_frees, window_ns, leaked_blocks, "
                      "leaked_bytes FROM memory_summary ORDER BY device_name").rows()
    assert leaks == [("cpu", 1, 1, 0, 0, 0, 1, 8), ("cuda:0", 9, 5, 4, 1, 105_000, 2, 320)]
    by_op = small.sql("SELECT device_type, op_name, leaked_blocks, leaked_bytes, largest_bytes FROM memory_leaks "
                      "ORDER BY device_type, op_name NULLS LAST").rows()
    assert by_op == [("cpu", "aten::linear", 1, 8, 8), ("cuda", "aten::linear", 1, 256, 256), ("cuda", None, 1, 64, 64)]


def _innermost_op(ops: list[tuple[float, float, str]], starts: list[float], t: float) -> str | None:
    """The cpu_op around t that started last (the ops of a thread nest), by a scan back from the last start <= t."""
    i = bisect.bisect_right(starts, t) - 1
    while i >= 0:
        ts, end, name = ops[i]
        if end > t:
            return name
        i -= 1
    return None


def test_qwen_against_its_json(qwen_dataset, shared_traces):
    """Counted here from the JSON: the events per device, the allocator's peak (the first event at the largest Total
    Allocated, in (ts, index) order), the blocks live at it (a stack per address), no leak, and the op of each
    allocation (the innermost cpu_op on its thread)."""
    doc = orjson.loads(gzip.decompress((shared_traces / "nvidia/h100_qwen_infer.json.gz").read_bytes()))
    events = doc["traceEvents"]
    mem = sorted((e["ts"], i, e) for i, e in enumerate(events) if e.get("name") == "[memory]")
    assert len(mem) == 2_450
    ops = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                 if e.get("cat") == "cpu_op" and e.get("ph") == "X" and e["dur"] > 0)
    starts = [o[0] for o in ops]
    want: dict[str, dict] = {}
    for dev in ("cpu", "cuda:0"):
        evs = [(i, e["args"]) for _, i, e in mem if (e["args"]["Device Type"] == 1) == (dev == "cuda:0")]
        _, _, peak_i, peak_a = max((a["Total Allocated"], -n, i, a) for n, (i, a) in enumerate(evs))
        live: dict[int, int] = {}
        for i, a in evs:
            if a["Bytes"] > 0:
                live[a["Addr"]] = a["Bytes"]
            else:
                live.pop(a["Addr"], None)
            if i == peak_i:
                at_peak = (len(live), sum(live.values()))
        want[dev] = {"allocs": sum(a["Bytes"] > 0 for _, a in evs), "frees": sum(a["Bytes"] < 0 for _, a in evs),
                     "peak_event_id": peak_i, "peak_bytes": peak_a["Total Allocated"],
                     "max_reserved_bytes": max(a["Total Reserved"] for _, a in evs), "live": at_peak,
                     "leaked_blocks": len(live)}
    assert want["cuda:0"]["peak_bytes"] == 2_088_508_416 and want["cuda:0"]["live"] == (58, 1_103_766_016)
    with tracesql.open(qwen_dataset[0]) as ds:
        got = {r[0]: r[1:] for r in ds.sql(
            "SELECT device_name, allocs, frees, peak_event_id, peak_bytes, max_reserved_bytes, s.live_blocks, "
            "s.live_bytes, leaked_blocks FROM memory_summary s JOIN memory_peaks USING (trace_id, device_type, device)"
        ).rows()}
        assert got == {d: (w["allocs"], w["frees"], w["peak_event_id"], w["peak_bytes"], w["max_reserved_bytes"],
                           *w["live"], w["leaked_blocks"]) for d, w in want.items()}
        assert got["cuda:0"][:2] == (1_125, 1_125) and got["cpu"][:2] == (100, 100)
        allocs_by_op = Counter(ds.sql("SELECT op_name FROM memory_blocks").rows())
        assert ds.sql("SELECT count(*) FROM memory_leaks").item() == 0
    want_ops = Counter((_innermost_op(ops, starts, ts),) for ts, _, e in mem if e["args"]["Bytes"] > 0)
    assert allocs_by_op == want_ops
    assert allocs_by_op[("aten::empty",)] == 240 and allocs_by_op[(None,)] == 51


def test_report_sections(qwen_dataset):
    """The report's memory sections (IF ROWS): per device, and the 40 bins of each device's window, whose largest
    allocated value is the device's peak."""
    from tracesql.api import report

    with tracesql.open(qwen_dataset[0]) as ds:
        sections = {s.name: s.frame for s in report.build(ds, charts=False)}
    m = sections["memory"]
    assert m.columns == ["trace_id", "trace", "device_name", "allocs", "frees", "peak_bytes", "peak_at_us",
                         "max_reserved_bytes", "live_blocks", "leaked_blocks", "leaked_bytes"]
    assert m["device_name"].to_list() == ["cpu", "cuda:0"]
    bins = sections["memory_timeline"]
    assert bins.height == 80
    peaks: defaultdict[str, int] = defaultdict(int)
    for r in bins.iter_rows(named=True):
        peaks[r["device_name"]] = max(peaks[r["device_name"]], r["allocated_max_bytes"] or 0)
    assert dict(peaks) == dict(zip(m["device_name"], m["peak_bytes"], strict=True))


@pytest.mark.slow  # a whole report of two traces: 4-5 s on two cores
def test_a_folder_report_leaves_the_memory_sections_out_of_a_trace_without_memory(tmp_path):
    """The memory sections are IF ROWS: in a report of two traces written to a folder, the trace with [memory] events
    has them and the other, recorded without profile_memory, has no such files (as when its report is written
    alone)."""
    from tracesql.api import report

    doc = _trace()
    doc["traceEvents"] += [  # a kernel and its launch, after the ops: each trace has GPU sections
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": T0 + 200, "dur": 5,
         "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": T0 + 210, "dur": 10,
         "args": {"device": 0, "stream": 7, "correlation": 1}}]
    (tmp_path / "with.json").write_text(json.dumps(doc))
    (tmp_path / "without.json").write_text(json.dumps({**doc, "traceEvents": [e for e in doc["traceEvents"]
                                                                              if e["ph"] == "X"]}))
    rs = tracesql.ingest([str(tmp_path / "with.json"), str(tmp_path / "without.json")], out=tmp_path / "ds",
                         quiet=True)
    assert [r.status for r in rs] == ["ingested", "ingested"]
    with tracesql.open(tmp_path / "ds") as ds:
        report.report(ds, fmt="csv", out=str(tmp_path / "r"))
    files = {p.relative_to(tmp_path / "r").as_posix() for p in (tmp_path / "r").rglob("*.csv")}
    assert {"with/memory.csv", "with/memory_timeline.csv"} <= files
    assert not {f for f in files if f.startswith("without/memory")}
    assert "without/copy_bandwidth.csv" in files  # a section without IF ROWS is written without rows
