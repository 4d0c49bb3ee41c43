"""`tracesql export`: traces written back as Chrome trace JSON (sql/export/chrome_json.sql, tracesql.api.export).
A shared trace exported and ingested again gives the same GPU events, CPU ops, nesting and launch links; the eight
ranks of a job merge into one document, a process per rank and no id shared between ranks; the overlays carry the
analyses' values, checked on a trace worked by hand."""
from __future__ import annotations

import gzip
import json
import sys

import orjson
import pytest

import tracesql
from tests.test_queue_copy import T0, _trace
from tracesql.api import export
from tracesql.cli.main import main

HOSTILE = 'op "q" </script><img src=x onerror=alert(1)>\n\u2028'


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    doc = _trace()
    # a CPU op around the first launch, with a name that JSON and HTML must escape
    doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": HOSTILE, "pid": 1, "tid": 1, "ts": T0 - 1,
                               "dur": 3, "args": {"External id": 9}})
    (d / "q.json").write_text(json.dumps(doc))
    [r] = tracesql.ingest([str(d / "q.json")], out=d / "ds", quiet=True)
    assert r.status == "ingested", r.error
    return d


@pytest.fixture(scope="module")
def everything(small):
    """The small trace exported with every overlay as JSON, and as Perfetto's protobuf with every overlay but the
    critical path (the trace has no ProfilerStep: that overlay adds nothing here, and planning it is costly)."""
    with tracesql.open(small / "ds") as ds:
        return export.write(ds, small / "x.json", overlays=["all"]), export.write(
            ds, small / "x.pftrace", overlays=["gpu", "queue", "copies", "memory", "gaps"])


def _events(path) -> list[dict]:
    raw = gzip.open(path).read() if str(path).endswith(".gz") else open(path, "rb").read()
    return orjson.loads(raw)["traceEvents"]


def test_overlays_by_hand(small, everything):
    done = everything[0]
    ev = _events(small / "x.json")
    assert (done.events, done.overlay_events) == (13, 19) and len(ev) == 32
    counters: dict[str, list] = {}
    for e in ev:
        if e["ph"] == "C":
            counters.setdefault(e["name"], []).append((round(e["ts"] - T0, 3), *e["args"].values()))
    # the launch queue of stream 7 (tests/test_queue_copy.py worked it out): launches at 0, 10, 20, 25 µs, starts
    # at 30, 40, 50, 60 µs
    assert sorted(counters["tracesql queue length · stream 7"]) == [
        (0, 1), (10, 2), (20, 3), (25, 4), (30, 3), (40, 2), (50, 1), (60, 0)]
    # the two HtoD copies: 10 GB/s from 60 µs, 5 more from 62 µs, both end at 64 µs
    assert sorted(counters["tracesql copy GB/s · Memcpy HtoD"]) == [(60, 10.0), (62, 15.0), (64, 0.0)]
    assert sorted(counters["tracesql copy GB/s · Memset"]) == [(12, 1.0), (14, 0.0)]
    # stream 8 idles from the memset's end (14 µs) to the memcpy's start (62 µs), whose launch (26 µs) came after 14
    [gap] = [e for e in ev if e.get("cat") == "tracesql_gap"]
    assert (gap["name"], gap["ts"] - T0, gap["dur"], gap["tid"]) == ("idle: waiting for the CPU", 14, 48, 10**9 + 8)
    gpu = {e["name"]: e["args"] for e in ev if e.get("pid") == 0 and e["ph"] == "X"}
    assert gpu["Memset (Device)"]["tracesql_category"] == "memset"
    assert gpu["Memcpy HtoD (Pinned -> Device)"]["tracesql_subcategory"] == "memcpy_htod"
    assert gpu["k1"]["tracesql_op"] == HOSTILE  # the op around its launch
    assert gpu["k2"]["tracesql_op"] == "[cudaLaunchKernel]"
    # every event rebuilt from the tables names its row; the hostile name comes back whole
    assert sorted(e["args"]["tracesql_event_id"] for e in ev if "tracesql_event_id" in e.get("args", {})) == \
        list(range(13))
    assert [e["name"] for e in ev if e.get("cat") == "cpu_op"] == [HOSTILE]


def test_cli_writes_gzip_and_errors_in_one_line(small, capsys):
    out = small / "c.json.gz"
    assert main(["export", str(small / "ds"), "-o", str(out), "--overlay", "queue,gaps"]) == 0
    assert "1 trace, 13 events and 14 overlay events" in capsys.readouterr().out.replace("\n    ", " ")
    assert len(_events(out)) == 27
    assert main(["export", str(small / "ds"), "--overlay", "gpu"]) == 0  # stdout: the document only
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["traceEvents"]) == 13 and doc["schemaVersion"] == 1
    assert main(["export", str(small / "ds"), "-o", str(out), "--overlay", "bogus"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert main(["export", str(small / "ds"), "-o", str(small / "none" / "x.json")]) != 0
    assert "does not exist" in capsys.readouterr().err
    assert sorted(p.name for p in small.iterdir() if p.name.startswith(".")) == []  # no temporary file left


@pytest.mark.slow
def test_round_trip_of_a_shared_trace(shared_traces, tmp_path):
    [a] = tracesql.ingest([str(shared_traces / "nvidia/h100_qwen_infer.json.gz")], out=tmp_path / "a", quiet=True)
    with tracesql.open(tmp_path / "a") as ds:
        done = export.write(ds, tmp_path / "qwen.json.gz")
    assert done.events == 18221
    [b] = tracesql.ingest([str(tmp_path / "qwen.json.gz")], out=tmp_path / "b", quiet=True)
    assert b.status == "ingested", b.error
    with tracesql.open(tmp_path / "a") as da, tracesql.open(tmp_path / "b") as db:
        for q in ["SELECT event_id, name, ts_ns, dur_ns, device, stream, correlation FROM kernels ORDER BY event_id",
                  "SELECT e.event_id, e.cat, e.name, e.ts_ns, e.dur_ns, e.external_id, n.parent_event_id, n.depth "
                  "FROM events e LEFT JOIN cpu_nesting n USING (trace_id, event_id) ORDER BY e.event_id",
                  "SELECT event_id, launch_event_id, link_via FROM gpu_launch_links ORDER BY event_id",
                  "SELECT count(*), count(DISTINCT flow_id) FROM correlations"]:
            x, y = da.sql(q), db.sql(q)
            assert x.height > 0 and x.equals(y, null_equal=True), q
        assert da.sql("SELECT count(*) FROM kernels").item() == 1707
        assert db.sql("SELECT count(*) FROM gpu_launch_links WHERE launch_event_id IS NOT NULL").item() == 1198
    # the same trace as Perfetto's protobuf: every complete event a slice, every launch arrow a flow
    with tracesql.open(tmp_path / "a") as ds:
        proto = export.write(ds, tmp_path / "qwen.pftrace")
    ev, got = _events(tmp_path / "qwen.json.gz"), _proto(tmp_path / "qwen.pftrace")
    assert _slices(got) == _json_slices(ev)
    assert proto.perfetto is not None and (proto.perfetto.slices, proto.perfetto.instants) == (12080, 2452)
    assert _flows(got) == _pairs(ev) == 1198


@pytest.mark.slow
def test_the_ranks_of_a_job_merge_into_one_document(shared_traces, tmp_path):
    files = sorted((shared_traces / "multirank/dlrm_8rank").glob("rank*.json.gz"))
    tracesql.ingest([str(f) for f in files], out=tmp_path / "a", quiet=True)
    with tracesql.open(tmp_path / "a") as ds:
        done = export.write(ds, tmp_path / "job.json.gz")
        kernels, linked = ds.sql("SELECT count(*), count(launch_event_id) FROM gpu_launch_links").row(0)
    assert len(done.trace_ids) == 8 and (kernels, linked) == (2244, 2116)
    ev = _events(tmp_path / "job.json.gz")
    names = [e["args"]["name"] for e in ev if e.get("name") == "process_name"]
    assert sorted({n.split(" · ")[0] for n in names}) == [f"rank {r}" for r in range(8)]
    flows = [(e["ph"], e["id"]) for e in ev if e["ph"] in ("s", "f")]
    assert len(set(flows)) == len(flows)  # no flow id twice: each rank's ids are shifted apart
    [b] = tracesql.ingest([str(tmp_path / "job.json.gz")], out=tmp_path / "b", quiet=True)
    with tracesql.open(tmp_path / "b") as db:
        assert db.sql("SELECT count(DISTINCT trace_id), count(DISTINCT pid), count(*), count(launch_event_id) "
                      "FROM gpu_launch_links").row(0) == (1, 8, 2244, 2116)
        assert db.sql("SELECT count(*) FROM events WHERE args->>'orig correlation' IS NOT NULL").item() > 0
    # the job as Perfetto's protobuf: a process per rank, every launch arrow a flow
    with tracesql.open(tmp_path / "a") as ds:
        export.write(ds, tmp_path / "job.pftrace")
    got = _proto(tmp_path / "job.pftrace")
    assert sorted({name.split(" · ")[0] for pid, tid, name in got["tracks"] if pid is not None and tid is None}) == \
        [f"rank {r}" for r in range(8)]
    assert len(got["slices"]) == sum(e["ph"] == "X" for e in ev) and _flows(got) == _pairs(ev) > 2000


# ---- Perfetto's protobuf format (tracesql/render/perfetto.py) ------------------------------------------------------

def _proto(path) -> dict:
    """A protobuf export decoded as Perfetto reads it: slices per track (begin and end paired by time, at one time
    in file order), instants, counter values, flow ids, and the tracks' descriptors."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

    raw = gzip.open(path).read() if str(path).endswith(".gz") else open(path, "rb").read()
    packets = Trace.FromString(raw).packet
    names: dict[int, str] = {}
    ann_names: dict[int, str] = {}
    tracks = {}
    events = []
    for i, p in enumerate(packets):
        assert p.trusted_packet_sequence_id == 1
        names.update({n.iid: n.name for n in p.interned_data.event_names})
        ann_names.update({n.iid: n.name for n in p.interned_data.debug_annotation_names})
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        if p.HasField("track_event"):
            assert p.track_event.track_uuid in tracks  # described before its first event
            events.append((p.timestamp, i, p.track_event))
    assert packets[0].sequence_flags == 3 and all(p.sequence_flags == 2 for p in packets[1:])

    def where(uuid):
        d = tracks[uuid]
        if d.HasField("thread"):
            return (d.thread.pid, d.thread.tid, d.thread.thread_name)
        if d.HasField("process"):
            return (d.process.pid, None, d.process.process_name)
        return (where(d.parent_uuid)[:2] + (d.name,)) if d.parent_uuid else (None, None, d.name)

    def args(te):
        out = {}
        for a in te.debug_annotations:
            kind = a.WhichOneof("value")
            v = getattr(a, kind)
            out[ann_names[a.name_iid]] = orjson.loads(v) if kind == "legacy_json_value" else v
        return out

    stacks: dict[int, list] = {}
    got: dict[str, list] = {"slices": [], "instants": [], "counters": [], "out": [], "end": []}
    for ts, _, te in sorted(events, key=lambda x: (x[0], x[1])):
        if te.type == TrackEvent.TYPE_SLICE_BEGIN:
            stacks.setdefault(te.track_uuid, []).append((ts, te))
        elif te.type == TrackEvent.TYPE_SLICE_END:
            start, b = stacks[te.track_uuid].pop()
            got["slices"].append(dict(track=where(te.track_uuid), ts=start, dur=ts - start, name=names[b.name_iid],
                                      args=args(b), out=list(b.flow_ids), end=list(b.terminating_flow_ids)))
        elif te.type == TrackEvent.TYPE_INSTANT:
            got["instants"].append((where(te.track_uuid), ts, names[te.name_iid]))
        elif te.type == TrackEvent.TYPE_COUNTER:
            v = te.counter_value if te.HasField("counter_value") else te.double_counter_value
            got["counters"].append((where(te.track_uuid), ts, v))
    assert not any(stacks.values())  # every begin ended
    got["tracks"] = [where(u) for u in tracks]
    return got


def _json_slices(ev) -> list:
    """(pid, tid, ts_ns, dur_ns, name) of the JSON document's complete events, times read exactly (a pid or tid
    that is not a number as '*': the protobuf gives it a number of its own)."""
    from decimal import Decimal

    def ns(x):
        return int(Decimal(str(x)) * 1000)
    def num(x):
        return str(x) if isinstance(x, int) else "*"
    return sorted((num(e["pid"]), num(e["tid"]), ns(e["ts"]), ns(e.get("dur", 0)), e["name"])
                  for e in ev if e["ph"] == "X")


def _slices(got) -> list:
    """(pid, tid, ts_ns, dur_ns, name) of a decoded protobuf export's slices (a number of its own as '*')."""
    def num(x):
        return str(x) if x < 2**31 - 2**20 else "*"
    return sorted((num(s["track"][0]), num(s["track"][1]), s["ts"], s["dur"], s["name"]) for s in got["slices"])


def _pairs(ev) -> int:
    """The flows of a JSON document that have both a start and an end."""
    ends: dict[str, set] = {"s": set(), "f": set()}
    for e in ev:
        if e["ph"] in ends:
            ends[e["ph"]].add((e.get("cat"), e["id"]))
    return len(ends["s"] & ends["f"])


def _flows(got) -> int:
    """The flows of a decoded protobuf export that leave one slice and end at another."""
    out = [f for s in got["slices"] for f in s["out"]]
    end = [f for s in got["slices"] for f in s["end"]]
    assert len(out) == len(set(out)) and len(end) == len(set(end))
    return len(set(out) & set(end))


def test_perfetto_protobuf_by_hand(small, everything):
    done = everything[1]
    ev = _events(small / "x.json")
    got = _proto(small / "x.pftrace")
    w = done.perfetto
    assert w is not None
    assert (done.events, done.overlay_events) == (13, 19)
    # every complete event is a slice with its exact times and name, on its thread
    slices = _slices(got)
    assert slices == _json_slices(ev) and w.slices == len(slices) == 14 and w.overlapped == 0
    # the counters: one track per (process, name, argument) and a value per change
    want = sorted((e["pid"], f"{e['name']} {k}", round(e["ts"] * 1000), v) for e in ev if e["ph"] == "C"
                  for k, v in e["args"].items())
    assert sorted((t[0], t[2], ts, v) for t, ts, v in got["counters"]) == want and w.counter_values == len(want) == 17
    assert (0, None, "tracesql queue length · stream 7 depth") in {t for t, _, _ in got["counters"]}
    # args come back typed; the hostile name whole
    [op] = [s for s in got["slices"] if s["track"][:2] == (1, 1) and s["name"] == HOSTILE]
    assert op["args"] == {"tracesql_event_id": 12, "External id": 9}
    [k1] = [s for s in got["slices"] if s["name"] == "k1"]
    assert k1["args"]["tracesql_op"] == HOSTILE and k1["args"]["stream"] == 7
    # the overlays' threads are named
    assert (0, 10**9 + 8, "tracesql gaps · stream 8") in got["tracks"]
    assert w.skipped == {} and w.unbound_flow_points == 0


def test_perfetto_writer_edge_cases(tmp_path):
    from tracesql.render.perfetto import PerfettoWriter

    rows = [  # (ph, pid, tid, ts, dur, event) in export_track_order's order
        ("M", "1", None, None, None, {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "host"}}),
        ("M", "1", "PyTorch Profiler", None, None,
         {"ph": "M", "name": "thread_name", "pid": 1, "tid": "PyTorch Profiler", "args": {"name": "profiler"}}),
        ("M", "1", None, None, None, {"ph": "M", "name": "process_uptime", "pid": 1, "args": {}}),
        ("i", "1", "2", -5, None, {"ph": "i", "name": "early", "pid": 1, "tid": 2, "s": "t"}),
        ("X", "1", "2", 0, 10, {"ph": "X", "name": "a", "pid": 1, "tid": 2, "args": {"x": [1, [2]], "n": None}}),
        ("X", "1", "2", 5, 10, {"ph": "X", "name": "b", "pid": 1, "tid": 2}),      # overlaps a without nesting
        ("s", "1", "2", 6, None, {"ph": "s", "cat": "c", "name": "n", "id": 1, "pid": 1, "tid": 2}),
        ("B", "1", "2", 20, None, {"ph": "B", "name": "open", "pid": 1, "tid": 2}),
        ("E", "1", "2", 30, None, {"ph": "E", "pid": 1, "tid": 2}),
        ("s", "1", "2", 31, None, {"ph": "s", "cat": "c", "name": "n", "id": 2, "pid": 1, "tid": 2}),  # no slice
        ("f", "1", "2", 40, None, {"ph": "f", "cat": "c", "name": "n", "id": 1, "pid": 1, "tid": 2}),  # next one
        ("X", "1", "2", 45, 5, {"ph": "X", "name": "c", "pid": 1, "tid": 2, "extra": "kept"}),
        ("i", "1", "2", 50, None, {"ph": "i", "name": "at c's end", "pid": 1, "tid": 2, "s": "t"}),
        ("b", "1", "2", 51, None, {"ph": "b", "cat": "c", "name": "async", "id": 3, "pid": 1, "tid": 2}),
        ("C", "1", None, 60, None, {"ph": "C", "name": "mem", "pid": 1, "args": {"used": 5, "note": "x"}}),
        ("i", "1", None, 61, None, {"ph": "i", "name": "proc", "pid": 1, "s": "p"}),
        ("i", "1", None, 62, None, {"ph": "i", "name": "everywhere", "pid": 1, "s": "g"}),
        ("X", "1", "PyTorch Profiler", 70, 1, {"ph": "X", "name": "p", "pid": 1, "tid": "PyTorch Profiler"}),
    ]
    with open(tmp_path / "e.pftrace", "wb") as out:
        writer = PerfettoWriter(out)
        for ph, pid, tid, ts, dur, e in rows:
            writer.add(ph, pid, tid, ts, dur, orjson.dumps(e).decode())
        w = writer.close()
    got = _proto(tmp_path / "e.pftrace")
    slices = {s["name"]: s for s in got["slices"]}
    assert {n: (s["track"], s["ts"], s["dur"]) for n, s in slices.items()} == {
        "a": ((1, 2, ""), 0, 10), "b": ((1, 2, "thread 2 · overlap 1"), 5, 10), "open": ((1, 2, ""), 20, 10),
        "c": ((1, 2, ""), 45, 5), "p": ((1, 2**31 - 1, "profiler"), 70, 1)}
    assert slices["a"]["args"] == {"x": [1, [2]], "n": None} and slices["c"]["args"] == {"extra": "kept"}
    # the flow starts in b (the innermost slice open at 6) and ends at c, the next slice after its end point
    assert slices["b"]["out"] == slices["c"]["end"] != [] and _flows(got) == 1
    assert sorted(got["instants"], key=lambda x: x[1]) == [
        ((1, 2, ""), 50, "at c's end"), ((1, None, "host"), 61, "proc"),
        ((None, None, "global instants"), 62, "everywhere")]
    assert got["counters"] == [((1, None, "mem used"), 60, 5)]
    assert (w.slices, w.instants, w.counter_values, w.flows, w.overlapped, w.unbound_flow_points) == (5, 3, 1, 1, 1, 1)
    assert w.skipped == {"M process_uptime": 1, "i (before time 0)": 1, "b": 1, "C (a value that is not a number)": 1}


def test_cli_writes_protobuf(small, capsys, monkeypatch):
    out = small / "c.pftrace.gz"
    assert main(["export", str(small / "ds"), "-o", str(out), "--overlay", "gaps"]) == 0
    text = capsys.readouterr().out.replace("\n    ", " ")
    assert "1 trace, 13 events and 2 overlay events as 14 slices, 0 instants, 0 counter values and 0 flows" in text
    assert len(_proto(out)["slices"]) == 14
    monkeypatch.setitem(sys.modules, "perfetto.trace_builder.proto_builder", None)  # the extra not installed
    assert main(["export", str(small / "ds"), "-o", str(small / "d.pftrace")]) == 2
    assert "pip install 'tracesql[perfetto]'" in capsys.readouterr().err
    assert not (small / "d.pftrace").exists()
