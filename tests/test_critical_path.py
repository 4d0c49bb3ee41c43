"""The critical path of an iteration. HTA's (sql/peers/hta/critical_path.sql): small traces worked by hand (one
with each kind of synchronisation edge), the shared HTA 0.5.0 references (critical_path_summary.csv: µs per
bound_by class) and more HTA runs, two of them on traces with cuda_sync rows (tests/data/hta_critical_path). The
native one (sql/gpu/critical_path.sql): a trace worked by hand (a sync, a
graph launch), its export as slices and flow arrows, and its invariants on every step of the shared traces."""
from __future__ import annotations

import csv
import json
from collections.abc import Sequence
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


def trace_doc(cpu: Sequence[tuple], gpu: Sequence[tuple], sync: Sequence[tuple] = ()) -> dict:
    """A trace of one CPU thread and one GPU: CPU events (cat, name, ts, dur, correlation) on thread 1, GPU events
    (name, ts, dur, correlation[, stream]) on stream 7 unless told, and cuda_sync events (name, ts, dur,
    correlation, stream, wait_on_stream, wait_on_cuda_event_record_corr_id), times in µs from T0."""
    ev: list[dict] = []
    for cat, name, ts, dur, corr in cpu:
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": T0 + ts, "dur": dur,
                   "args": {} if corr is None else {"correlation": corr}})
    for name, ts, dur, corr, *stream in gpu:
        s = stream[0] if stream else 7
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": s, "ts": T0 + ts, "dur": dur,
                   "args": {"device": 0, "stream": s, "correlation": corr}})
    for name, ts, dur, corr, s, wait_stream, wait_record in sync:
        ev.append({"ph": "X", "cat": "cuda_sync", "name": name, "pid": 0, "tid": s, "ts": T0 + ts, "dur": dur,
                   "args": {"cuda_sync_kind": name, "wait_on_stream": wait_stream,
                            "wait_on_cuda_event_record_corr_id": wait_record, "stream": s, "correlation": corr,
                            "device": 0}})
    return {"schemaVersion": 1, "traceEvents": ev}


def _open(tmp_path_factory, cpu: Sequence[tuple], gpu: Sequence[tuple], sync: Sequence[tuple] = ()):
    """A dataset of one trace, trace_doc(cpu, gpu, sync)."""
    d = tmp_path_factory.mktemp("cp")
    (d / "cp.json").write_text(json.dumps(trace_doc(cpu, gpu, sync)))
    [r] = tracesql.ingest([str(d / "cp.json")], out=d / "ds", quiet=True)
    assert r.status == "ingested", r.error
    return tracesql.open(d / "ds")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    ds = _open(tmp_path_factory, CPU, GPU)
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


@pytest.mark.parametrize("ref, trace", [
    ("hta/nvidia_h100_qwen_infer/critical_path_summary.csv", "nvidia/h100_qwen_infer.json.gz"),
    ("hta/nvidia_hta_ns_resolution_rank0/critical_path_summary.csv", "nvidia/hta_ns_resolution_rank0.json.gz"),
    (str(OWN / "h100_bert_small_infer.csv"), "nvidia/h100_bert_small_infer.json.gz"),
    (str(OWN / "h100_falconsai_infer.csv"), "nvidia/h100_falconsai_infer.json.gz"),
    (str(OWN / "hta_nccl_data.csv"), "nvidia/hta_nccl_data.json.gz"),
    (str(OWN / "hta_triton_example.csv"), "nvidia/hta_triton_example.json.gz")])
def test_hta_critical_path_equals_hta(ds, trace_ids, reference_dir, ref, trace):
    got = dict(ds.sql("SELECT bound_by, duration FROM hta_critical_path_summary WHERE trace_id = ?",
                      params=[trace_ids[trace]]).rows())
    with open(reference_dir / ref, newline="") as f:  # an absolute path (OWN) replaces reference_dir
        want = {row["bound_by"]: float(row["duration"]) for row in csv.DictReader(f)}
    assert set(got) == set(want)
    for k, v in want.items():
        assert abs(got[k] - v) <= 1e-6, (k, got[k], v)


# HTA's synchronisation edges, worked by hand: two streams and each kind of cuda_sync row (µs from T0). Step
# [0, 250]. A [10, 40] launches k1 at 12 (stream 7, [20, 80]), records event 2 at 20, makes stream 13 wait for it
# at 25 and launches k2 at 30 (stream 13, [82, 100]). B [45, 150] waits in cudaDeviceSynchronize [50, 145]. C
# [155, 195] launches k3 at 160 (stream 7, [170, 180]), records event 7 at 166, waits for it in
# cudaEventSynchronize [170, 185]. D [200, 240] launches k4 at 205 (stream 13, [212, 230]) and waits in
# cudaStreamSynchronize [212, 234].
SYNC_CPU = [("user_annotation", "ProfilerStep#1", 0, 250, None),
            ("cpu_op", "A", 10, 30, None), ("cuda_runtime", "cudaLaunchKernel", 12, 4, 1),
            ("cuda_runtime", "cudaEventRecord", 20, 2, 2), ("cuda_runtime", "cudaStreamWaitEvent", 25, 2, 3),
            ("cuda_runtime", "cudaLaunchKernel", 30, 4, 4),
            ("cpu_op", "B", 45, 105, None), ("cuda_runtime", "cudaDeviceSynchronize", 50, 95, 5),
            ("cpu_op", "C", 155, 40, None), ("cuda_runtime", "cudaLaunchKernel", 160, 5, 6),
            ("cuda_runtime", "cudaEventRecord", 166, 2, 7), ("cuda_runtime", "cudaEventSynchronize", 170, 15, 8),
            ("cpu_op", "D", 200, 40, None), ("cuda_runtime", "cudaLaunchKernel", 205, 5, 9),
            ("cuda_runtime", "cudaStreamSynchronize", 212, 22, 10)]
SYNC_GPU = [("k1", 20, 60, 1, 7), ("k2", 82, 18, 4, 13), ("k3", 170, 10, 6, 7), ("k4", 212, 18, 9, 13)]
# (name, ts, dur, correlation, stream, wait_on_stream, wait_on_cuda_event_record_corr_id)
SYNC_SYNC = [("Stream Wait Event", 27, 1, 3, 13, 7, 2), ("Context Sync", 51, 93, 5, -1, -1, -1),
             ("Event Sync", 171, 13, 8, -1, 7, 7), ("Stream Sync", 213, 20, 10, 13, -1, -1)]


@pytest.fixture(scope="module")
def synced(tmp_path_factory):
    ds = _open(tmp_path_factory, SYNC_CPU, SYNC_GPU, SYNC_SYNC)
    yield ds
    ds.close()


def test_hta_critical_path_sync_edges_by_hand(synced):
    # HTA's loop visits k1 (20), the stream wait (its end, 28), k2 (82), the context sync (144), k3 (170), the
    # event sync (184), k4 (212), the stream sync (233). Event 2 was recorded after the launch of k1 (the last
    # launch onto stream 7 before it), and k2 is the next launch onto stream 13 after the wait: k1's end -> k2's
    # start. k2 is reached by that edge only: k1 ended (80) after k2's launch (30). The context sync ties the last
    # GPU row visited on each stream (k1, k2) to the end of cudaDeviceSynchronize, the event sync k3 (launched
    # last before event 7's record) to cudaEventSynchronize's, the stream sync k4 to cudaStreamSynchronize's; k3
    # and k4 are reached from their launches (10, 7 µs). Longest paths: k1 ends at 2 + 8 + 60 = 70, k2 at 88; the
    # device sync's end takes 88 from k2 (its walk gives 35), B ends at 93, k3 at 93 + 5 + 10 + 10 = 118, the
    # event sync's end takes 118, D starts at 128, k4 ends at 128 + 5 + 7 + 18 = 158, the stream sync's end takes
    # 158, D ends at 164: the path's end. HTA 0.5.0 gives the same (tests/data/hta_critical_path/sync_by_hand.csv).
    edges = synced.sql("SELECT type, bound_by, duration, name FROM _hta_cp_edges ORDER BY ts_us, type").rows()
    op, dep, sync = "critical_path_operator", "critical_path_dependency", "critical_path_sync_dependency"
    launch = "critical_path_kernel_launch_delay"
    assert edges == [
        (op, "cpu_bound", 2.0, "cudaLaunchKernel"),  # A's start -> the launch of k1
        (launch, "gpu_kernel_launch_overhead", 8.0, "k1"),
        (op, "gpu_compute_bound", 60.0, "k1"),
        (sync, "", 0.0, "k2"),  # the stream wait: k1's end -> k2's start
        (op, "gpu_compute_bound", 18.0, "k2"),
        (sync, "", 0.0, "cudaDeviceSynchronize"),  # the context sync: k2's end -> the call's end
        (op, "cpu_bound", 5.0, "B"),
        (dep, "", 0.0, "C"),
        (op, "cpu_bound", 5.0, "cudaLaunchKernel"),
        (launch, "gpu_kernel_launch_overhead", 10.0, "k3"),
        (op, "gpu_compute_bound", 10.0, "k3"),
        (sync, "", 0.0, "cudaEventSynchronize"),  # the event sync: k3's end -> the call's end
        (op, "cpu_bound", 10.0, "C"),
        (dep, "", 0.0, "D"),
        (op, "cpu_bound", 5.0, "cudaLaunchKernel"),
        (launch, "gpu_kernel_launch_overhead", 7.0, "k4"),
        (op, "gpu_compute_bound", 18.0, "k4"),
        (sync, "", 0.0, "cudaStreamSynchronize"),  # the stream sync: k4's end -> the call's end
        (op, "cpu_bound", 6.0, "D")]
    with open(OWN / "sync_by_hand.csv", newline="") as f:
        want = {row["bound_by"]: float(row["duration"]) for row in csv.DictReader(f)}
    got = dict(synced.sql("SELECT bound_by, duration FROM hta_critical_path_summary").rows())
    assert got == want == {"": 0.0, "cpu_bound": 33.0, "gpu_kernel_launch_overhead": 25.0,
                           "gpu_compute_bound": 106.0}


# HTA's loop in whole µs: A [0.5, 40.5] launches kA at 1 (stream 7, [2, 10.2]), records event 2 at 2.5, launches
# kB at 9 ([10.6, 30]), waits in cudaStreamSynchronize [9.5, 30.5] (its Stream Sync row [9.1, 10.3]), then queries
# event 2 in cudaEventQuery [31, 32] (its Event Sync row waits on event 2, or, without the record's id, on nothing).
TRUNC_CPU = [("user_annotation", "ProfilerStep#1", 0, 60, None), ("cpu_op", "A", 0.5, 40, None),
             ("cuda_runtime", "cudaLaunchKernel", 1, 1, 1), ("cuda_runtime", "cudaEventRecord", 2.5, 0.5, 2),
             ("cuda_runtime", "cudaLaunchKernel", 9, 0.25, 3), ("cuda_runtime", "cudaStreamSynchronize", 9.5, 21, 4),
             ("cuda_runtime", "cudaEventQuery", 31, 1, 5)]
TRUNC_GPU = [("kA", 2, 8.2, 1), ("kB", 10.6, 19.4, 3)]


@pytest.mark.parametrize("record, want", [
    (2, {"": 0.0, "cpu_bound": 9.5, "gpu_compute_bound": 27.6, "gpu_kernel_kernel_overhead": 0.4,
         "gpu_kernel_launch_overhead": 1.0}),
    (-1, {"cpu_bound": 0.5, "gpu_compute_bound": 27.6, "gpu_kernel_kernel_overhead": 0.4,
          "gpu_kernel_launch_overhead": 1.0})])
def test_hta_loop_order_in_whole_us_when_records_are_joined(tmp_path_factory, record, want):
    # A sync row waiting on a record of the trace makes HTA join the records to its loop's rows and cast them to
    # integers: the stream sync then ends at 9 + 1 = 10 µs, with kB's start (10): in file order kB comes first and
    # is the row the stream sync waits for, and the path goes on from kB's end through cudaStreamSynchronize's end
    # to A's (cpu_bound 0.5 + 0.5 + 8.5). Without the join, the sync ends (10.3) before kB starts (10.6) and waits
    # for kA; the path ends with kB. HTA 0.5.0 gives both.
    sync = [("Stream Sync", 9.1, 1.2, 4, 7, -1, -1), ("Event Sync", 31.2, 0.5, 5, -1, 7 if record > 0 else -1, record)]
    ds = _open(tmp_path_factory, TRUNC_CPU, TRUNC_GPU, sync)
    try:
        got = dict(ds.sql("SELECT bound_by, duration FROM hta_critical_path_summary").rows())
    finally:
        ds.close()
    assert set(got) == set(want)
    for k, v in want.items():
        assert abs(got[k] - v) <= 1e-9, (k, got[k], v)


@pytest.mark.parametrize("ref, trace, annotation, instance_id", [
    ("hta_alexnet_critical_path.csv", "nvidia/hta_alexnet_critical_path.json.gz",
     "[param|pytorch.model.alex_net|0|0|0|measure|forward]", 1),
    ("hta_event_sync_multi_stream.csv", "nvidia/hta_event_sync_multi_stream.json.gz", "", 0)])
def test_hta_critical_path_of_an_annotation_equals_hta(ds, trace_ids, ref, trace, annotation, instance_id):
    """Traces with cuda_sync rows, the path of an annotation's instance (HTA 0.5.0's runs in
    tests/data/hta_critical_path)."""
    got = dict(ds.sql("SELECT bound_by, duration FROM hta_critical_path_summary_for(?, ?) WHERE trace_id = ?",
                      params=[annotation, instance_id, trace_ids[trace]]).rows())
    with open(OWN / ref, newline="") as f:
        want = {row["bound_by"]: float(row["duration"]) for row in csv.DictReader(f)}
    assert set(got) == set(want)
    for k, v in want.items():
        assert abs(got[k] - v) <= 1e-6, (k, got[k], v)


# The native critical path (sql/gpu/critical_path.sql), worked by hand. Thread 1, two steps (µs from T0):
# step 1 [0, 200]: op A [10, 50] launches k1 at 20 (k1 [30, 90] on stream 7); op B [50, 60] launches k2 at 52 (k2
# [95, 120], held by k1: the stream); op C [60, 130] waits in cudaStreamSynchronize [62, 125] (k2 ends in it); op D
# [130, 170] launches k3 at 140 (k3 [150, 210], held by its launch: k2 ended at 120).
# step 2 [300, 400]: op E [305, 395] launches a graph at 310 (g1 [340, 360], g2 [360, 380]) and waits in
# cudaDeviceSynchronize [335, 390].
NATIVE_CPU = [("user_annotation", "ProfilerStep#1", 0, 200, None), ("cpu_op", "A", 10, 40, None),
              ("cuda_runtime", "cudaLaunchKernel", 20, 5, 1), ("cpu_op", "B", 50, 10, None),
              ("cuda_runtime", "cudaLaunchKernel", 52, 4, 2), ("cpu_op", "C", 60, 70, None),
              ("cuda_runtime", "cudaStreamSynchronize", 62, 63, 5), ("cpu_op", "D", 130, 40, None),
              ("cuda_runtime", "cudaLaunchKernel", 140, 6, 3),
              ("user_annotation", "ProfilerStep#2", 300, 100, None), ("cpu_op", "E", 305, 90, None),
              ("cuda_runtime", "cudaGraphLaunch", 310, 20, 4), ("cuda_runtime", "cudaDeviceSynchronize", 335, 55, 6)]
NATIVE_GPU = [("k1", 30, 60, 1), ("k2", 95, 25, 2), ("k3", 150, 60, 3), ("g1", 340, 20, 4), ("g2", 360, 20, 4)]


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    ds = _open(tmp_path_factory, NATIVE_CPU, NATIVE_GPU)
    yield ds
    ds.close()


def test_native_critical_path_by_hand(native):
    us = 1000
    got = native.sql(f"SELECT step, kind, start_ns - {T0 * us}, end_ns - {T0 * us}, name, op_name, is_graph "
                     "FROM critical_path ORDER BY step, seq").rows()
    # step 1 ends with k3 at 210: k3 <- its launch (held by it) <- CPU back to the sync's end <- the sync edge from
    # k2's end <- k2 <- the gap after k1 (k2 held by the stream) <- k1 <- its launch <- CPU from the step's start
    assert got[:9] == [
        ("ProfilerStep#1", "cpu", 0, 20 * us, None, "A", False),
        ("ProfilerStep#1", "launch", 20 * us, 30 * us, "cudaLaunchKernel", "A", False),
        ("ProfilerStep#1", "gpu_compute", 30 * us, 90 * us, "k1", "A", False),
        ("ProfilerStep#1", "gpu_gap", 90 * us, 95 * us, None, None, False),
        ("ProfilerStep#1", "gpu_compute", 95 * us, 120 * us, "k2", "B", False),
        ("ProfilerStep#1", "sync", 120 * us, 125 * us, "cudaStreamSynchronize", "C", False),
        ("ProfilerStep#1", "cpu", 125 * us, 140 * us, None, "D", False),
        ("ProfilerStep#1", "launch", 140 * us, 150 * us, "cudaLaunchKernel", "D", False),
        ("ProfilerStep#1", "gpu_compute", 150 * us, 210 * us, "k3", "D", False)]
    # step 2 ends on the CPU at 400, after the device sync that waited for the graph's last kernel g2; g2 followed
    # g1 on the stream, g1 was held by the graph launch
    assert got[9:] == [
        ("ProfilerStep#2", "cpu", 300 * us, 310 * us, None, "E", True),
        ("ProfilerStep#2", "launch", 310 * us, 340 * us, "cudaGraphLaunch", "E", True),
        ("ProfilerStep#2", "gpu_compute", 340 * us, 360 * us, "g1", "E", True),
        ("ProfilerStep#2", "gpu_compute", 360 * us, 380 * us, "g2", "E", True),
        ("ProfilerStep#2", "sync", 380 * us, 390 * us, "cudaDeviceSynchronize", "E", False),
        ("ProfilerStep#2", "cpu", 390 * us, 400 * us, None, None, False)]
    summary = native.sql("SELECT step, iteration_ns, cpu_ns, launch_ns, sync_ns, gpu_compute_ns, gpu_gap_ns, "
                         "graph_ns, top_op, top_op_ns FROM critical_path_summary ORDER BY step").rows()
    assert summary == [("ProfilerStep#1", 210 * us, 35 * us, 20 * us, 5 * us, 145 * us, 5 * us, 0, "A", 90 * us),
                       ("ProfilerStep#2", 100 * us, 20 * us, 30 * us, 10 * us, 40 * us, 0, 40 * us, "E", 90 * us)]
    ops = dict(native.sql("SELECT op_name, path_ns FROM critical_path_ops").rows())
    assert ops == {"A": 90 * us, "B": 25 * us, "C": 5 * us, "D": 85 * us, "E": 90 * us}


def test_native_critical_path_in_the_export(native, tmp_path):
    from tracesql.api import export

    done = export.write(native, tmp_path / "x.json", overlays=["critical"])
    ev = json.loads((tmp_path / "x.json").read_text())["traceEvents"]
    slices = [e for e in ev if e.get("cat") == "tracesql_critical_path" and e["ph"] == "X"]
    flows = [e for e in ev if e.get("cat") == "tracesql_critical_path" and e["ph"] in ("s", "f")]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    # 15 elements, and an arrow between consecutive ones of each path (8 in step 1, 5 in step 2), plus two tracks
    assert (len(slices), len(flows), done.overlay_events) == (15, 26, 43)
    assert names == {(1, 2 * 10**9 - 1): "tracesql critical path",
                     (0, 2 * 10**9 + 7): "tracesql critical path · stream 7"}
    first = sorted((round(e["ts"] - T0, 3), e["name"], e["tid"]) for e in slices)[:3]
    assert first == [(0, "cpu · A", 2 * 10**9 - 1), (20, "launch · A", 2 * 10**9 - 1),
                     (30, "gpu_compute · A", 2 * 10**9 + 7)]
    # each arrow starts on one element and ends, bound to the enclosing slice, at the next one's start
    ends = {e["id"]: e for e in flows if e["ph"] == "f"}
    for s in (e for e in flows if e["ph"] == "s"):
        assert ends[s["id"]]["bp"] == "e" and ends[s["id"]]["ts"] > s["ts"]


def test_native_critical_path_on_shared_traces(ds, trace_ids):
    """Every step of every shared trace: the path's elements meet end to start, from the step's start to the later
    of its end and the end of the GPU work launched in it (computed here from gpu_launch_links)."""
    with ds.scope():  # the paths computed once, dropped after
        ds.execute("CREATE TEMP TABLE cp AS SELECT * FROM critical_path")
        bad = ds.sql("""
            WITH e AS (
                SELECT p.trace_id, p.event_id, p.ts_ns, greatest(p.ts_ns + p.dur_ns, coalesce(max(l.ts_ns + l.dur_ns)
                       FILTER (WHERE l.cat <> 'cuda_sync'), 0)) AS end_ns
                FROM profiler_steps p LEFT JOIN gpu_launch_links l ON l.trace_id = p.trace_id
                  AND l.launch_kind IS NOT NULL AND l.launch_ts_ns >= p.ts_ns AND l.launch_ts_ns < p.ts_ns + p.dur_ns
                GROUP BY p.trace_id, p.event_id, p.ts_ns, p.dur_ns),
            c AS (SELECT *, lag(end_ns) OVER (PARTITION BY trace_id, step_event_id ORDER BY seq) AS prev_end_ns
                  FROM cp)
            SELECT e.trace_id, e.event_id, min(c.start_ns) = e.ts_ns AS from_start, max(c.end_ns) = e.end_ns AS to_end,
                   count(*) FILTER (WHERE c.prev_end_ns <> c.start_ns) AS breaks,
                   sum(c.dur_ns) = e.end_ns - e.ts_ns AS adds
            FROM e JOIN c ON c.trace_id = e.trace_id AND c.step_event_id = e.event_id
            GROUP BY e.trace_id, e.event_id, e.ts_ns, e.end_ns
            HAVING NOT (from_start AND to_end AND breaks = 0 AND adds)""")
        assert bad.height == 0, bad
        # the steps of the traces with GPU events (hta_cpu_only_rank34's step has none)
        assert ds.sql("SELECT count(DISTINCT (trace_id, step_event_id)), count(DISTINCT trace_id) FROM cp").row(0) == \
            (45, 24)
        qwen = ds.sql("SELECT sum(dur_ns), count(*) FILTER (WHERE kind = 'gpu_compute') FROM cp WHERE trace_id = ?",
                      params=[trace_ids["nvidia/h100_qwen_infer.json.gz"]]).row(0)
    # the step's 47,151,395 ns, and 2.2 ms more for its GPU work; 963 kernels on the path
    assert qwen == (49_378_903, 963)
