"""`tracesql export`: traces written back as Chrome trace JSON (sql/export/chrome_json.sql, tracesql.api.export).
A shared trace exported and ingested again gives the same GPU events, CPU ops, nesting and launch links; the eight
ranks of a job merge into one document, a process per rank and no id shared between ranks; the overlays carry the
analyses' values, checked on a trace worked by hand."""
from __future__ import annotations

import gzip
import json

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


def _events(path) -> list[dict]:
    raw = gzip.open(path).read() if str(path).endswith(".gz") else open(path, "rb").read()
    return orjson.loads(raw)["traceEvents"]


def test_overlays_by_hand(small):
    with tracesql.open(small / "ds") as ds:
        done = export.write(ds, small / "x.json", overlays=["all"])
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
