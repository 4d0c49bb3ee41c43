"""The graph-replay generator (tests/graph_replay.py): its output and ground truth, checked against the source trace
read independently with the standard library, and the output ingested with tracesql."""
from __future__ import annotations

import gzip
import json
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

import tracesql

from .graph_replay import make_replay

H100 = "nvidia/h100_qwen_infer.json.gz"
MI300 = "amd/mi300_qwen_infer.json.gz"
GPU = ("kernel", "gpu_memcpy", "gpu_memset")


def read(path: Path) -> dict:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw, parse_float=Decimal)


def ns(v) -> int:
    return int(Decimal(v) * 1000)


def launched_in(doc: dict, thread, t0: int, t1: int) -> list[int]:
    """Indices of the GPU events whose launch call lies inside [t0, t1] ns on the thread: a plain scan."""
    evs = doc["traceEvents"]
    corr = {e["args"]["correlation"] for e in evs
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X" and (e["pid"], e["tid"]) == thread
            and "correlation" in e.get("args", {}) and t0 <= ns(e["ts"]) and ns(e["ts"]) + ns(e["dur"]) <= t1}
    return [i for i, e in enumerate(evs) if e.get("cat") in GPU and e.get("args", {}).get("correlation") in corr]


def ingest(path: Path, tmp: Path) -> Path:
    (r,) = tracesql.ingest([str(path)], out=tmp / "ds", quiet=True)
    assert r.status == "ingested", r
    return tmp / "ds"


@pytest.fixture(scope="module")
def h100_one(shared_traces, tmp_path_factory):
    """h100_qwen_infer with one region folded, low32 node ids and annotations: (source, output, truth, dataset)."""
    tmp = tmp_path_factory.mktemp("replay1")
    out = tmp / "replay.json.gz"
    truth = make_replay(shared_traces / H100, out, regions=1, node_ids="low32", annotate=True)
    return read(shared_traces / H100), read(out), truth, ingest(out, tmp)


@pytest.fixture(scope="module")
def h100_three(shared_traces, tmp_path_factory):
    """h100_qwen_infer with three regions folded, packed node ids, plain JSON output."""
    tmp = tmp_path_factory.mktemp("replay3")
    out = tmp / "replay.json"
    truth = make_replay(shared_traces / H100, out, regions=3, node_ids="packed")
    return read(shared_traces / H100), read(out), truth, ingest(out, tmp)


def test_region_holds_what_a_scan_finds(h100_one):
    src, out, truth, _ = h100_one
    (g,) = truth["graphs"]
    thread = tuple(truth["thread"])
    assert thread == (25286, 25286)
    expected = launched_in(src, thread, g["t0_ns"], g["t1_ns"])
    assert len(expected) >= 100
    assert sorted(e["src_index"] for e in g["events"]) == expected
    assert len(g["events"]) == 1192
    assert len({e["op_name"] for e in g["events"]}) >= 10
    # in launch order: the launches' start times never decrease
    starts = [ns(src["traceEvents"][e["launch_src_index"]]["ts"]) for e in g["events"]]
    assert starts == sorted(starts)
    # every GPU event of the graph carries the launch's correlation and no External id
    for e in g["events"]:
        o = out["traceEvents"][e["out_index"]]
        s = src["traceEvents"][e["src_index"]]
        assert o["name"] == s["name"] == e["name"] and o["ts"] == s["ts"] and o["dur"] == s["dur"]
        assert o["args"]["correlation"] == g["correlation"] and "External id" not in o["args"]


def test_output_structure(h100_one):
    src, out, truth, _ = h100_one
    (g,) = truth["graphs"]
    sev, oev = src["traceEvents"], out["traceEvents"]
    assert {k: v for k, v in out.items() if k != "traceEvents"} == {k: v for k, v in src.items() if k != "traceEvents"}
    assert truth["source_events"] == len(sev) and truth["output_events"] == len(oev)
    launch = oev[g["launch_index"]]
    assert launch["name"] == "cudaGraphLaunch" and launch["cat"] == "cuda_runtime" and launch["ph"] == "X"
    assert launch["args"] == {"correlation": g["correlation"], "cbid": 311}
    assert g["t0_ns"] <= ns(launch["ts"]) and ns(launch["ts"]) + ns(launch["dur"]) <= g["t1_ns"]
    used = {e.get("args", {}).get("correlation") for e in sev} | {e.get("id") for e in sev}
    assert g["correlation"] not in used
    # added: the launch, one flow start, one flow end per GPU event; all at the end
    added = oev[len(oev) - 2 - len(g["events"]):]
    assert added[0] is launch or added[0] == launch
    flows = Counter((e["ph"], e["id"]) for e in added[1:] if e.get("cat") == "ac2g")
    assert flows == {("s", g["correlation"]): 1, ("f", g["correlation"]): len(g["events"])}
    # the rest keeps its order: kept source events in order, unchanged except the graphed GPU events' args
    graphed = {e["src_index"]: e["out_index"] for e in g["events"]}
    kept = oev[:len(oev) - len(added)]
    assert len(kept) == len(sev) - truth["removed"] - truth["removed_flows"]
    thread = tuple(truth["thread"])
    j = 0
    for i, e in enumerate(sev):
        if j < len(kept) and (kept[j] == e or (i in graphed and graphed[i] == j)):
            j += 1
            continue
        # a removed event: inside the region on the main thread, or a flow of a removed launch
        if e.get("cat") == "ac2g":
            continue
        assert (e["pid"], e["tid"]) == thread and g["t0_ns"] <= ns(e["ts"])
        assert ns(e["ts"]) + ns(e.get("dur", 0)) <= g["t1_ns"]
    assert j == len(kept)
    # what encloses the region stays: the ProfilerStep
    assert any(e.get("cat") == "user_annotation" and e["name"] == "ProfilerStep#6" for e in kept)


def test_ingested_links_and_totals(h100_one, qwen_dataset):
    _, _, truth, ds = h100_one
    (g,) = truth["graphs"]
    with tracesql.open(ds) as d:
        links = d.sql(f"""SELECT event_id, launch_name, link_via, launch_event_id FROM gpu_launch_links
                          WHERE correlation = {g['correlation']} ORDER BY event_id""")
        ops_inside = d.sql(f"""SELECT count(*) AS n FROM events WHERE cat = 'cpu_op'
                               AND ts_ns >= {g['t0_ns']} AND ts_ns + dur_ns <= {g['t1_ns']}""")["n"][0]
        totals = d.sql("SELECT count(*) AS n, sum(dur_ns) AS t FROM kernels").row(0)
        names = d.sql(f"""SELECT event_id, json_extract_string(args, '$.name') AS name,
                                 json_extract(args, '$."graph id"')::BIGINT AS gid,
                                 json_extract(args, '$."graph node id"')::BIGINT AS nid
                          FROM kernels WHERE correlation = {g['correlation']} ORDER BY event_id""")
    assert links["event_id"].to_list() == sorted(e["out_index"] for e in g["events"])
    assert set(links["launch_name"]) == {"cudaGraphLaunch"} and set(links["link_via"]) == {"graph"}
    assert set(links["launch_event_id"]) == {g["launch_index"]}
    assert ops_inside == 0
    with tracesql.open(qwen_dataset[0]) as d:
        assert d.sql("SELECT count(*) AS n, sum(dur_ns) AS t FROM kernels").row(0) == totals
    node = {e["out_index"]: k for k, e in enumerate(g["events"], 1)}
    assert names["nid"].to_list() == [node[i] for i in names["event_id"]]
    assert set(names["gid"]) == {1}
    # annotate: the innermost user_annotation, the ProfilerStep here
    assert set(names["name"]) == {"ProfilerStep#6"} == {e["annotation"] for e in g["events"]}


def test_three_regions_packed_ids(h100_three):
    src, out, truth, ds = h100_three
    graphs = truth["graphs"]
    assert [len(g["events"]) for g in graphs] == [387, 403, 402]
    thread = tuple(truth["thread"])
    for a, b in zip(graphs, graphs[1:], strict=False):
        assert a["t1_ns"] < b["t0_ns"]
    for g in graphs:
        assert sorted(e["src_index"] for e in g["events"]) == launched_in(src, thread, g["t0_ns"], g["t1_ns"])
    assert len({g["correlation"] for g in graphs}) == 3
    with tracesql.open(ds) as d:
        ids = d.sql("""SELECT l.event_id, l.launch_event_id, l.link_via,
                              json_extract(k.args, '$."graph id"')::BIGINT AS gid,
                              json_extract(k.args, '$."graph node id"')::BIGINT AS nid,
                              json_extract_string(k.args, '$.name') AS name
                       FROM kernels k JOIN gpu_launch_links l USING (trace_id, event_id)
                       WHERE k.args LIKE '%graph id%' ORDER BY l.event_id""")
    want = {e["out_index"]: (g["launch_index"], g["graph_id"], (g["graph_id"] << 32) | k)
            for g in graphs for k, e in enumerate(g["events"], 1)}
    assert len(ids) == len(want)
    assert {r[0]: (r[1], r[3], r[4]) for r in ids.iter_rows()} == want
    assert set(ids["link_via"]) == {"graph"} and ids["name"].null_count() == len(ids)
    assert [g["graph_id"] for g in graphs] == [1, 2, 3]
    assert out["traceEvents"][graphs[2]["launch_index"]]["name"] == "cudaGraphLaunch"


def test_rocm_source_gives_hip_graph_launch(shared_traces, tmp_path):
    out = tmp_path / "replay.json.gz"
    truth = make_replay(shared_traces / MI300, out, node_ids="low32")
    (g,) = truth["graphs"]
    src = read(shared_traces / MI300)
    assert sorted(e["src_index"] for e in g["events"]) == launched_in(src, tuple(truth["thread"]), g["t0_ns"],
                                                                       g["t1_ns"])
    assert len(g["events"]) == 1048
    ds = ingest(out, tmp_path)
    with tracesql.open(ds) as d:
        links = d.sql(f"SELECT launch_name, link_via, count(*) AS n FROM gpu_launch_links "
                      f"WHERE correlation = {g['correlation']} GROUP BY ALL")
    assert links.rows() == [("hipGraphLaunch", "graph", 1048)]
    launch = read(out)["traceEvents"][g["launch_index"]]
    assert launch["name"] == "hipGraphLaunch" and launch["args"] == {"correlation": g["correlation"]}


def test_api_override_and_plain_json(shared_traces, tmp_path):
    out = tmp_path / "replay.json"
    truth = make_replay(shared_traces / H100, out, api="cuGraphLaunch")
    doc = json.loads(out.read_bytes())
    launch = doc["traceEvents"][truth["graphs"][0]["launch_index"]]
    assert launch["name"] == "cuGraphLaunch" and launch["args"] == {"correlation": truth["graphs"][0]["correlation"]}
    assert not any("graph id" in e.get("args", {}) for e in doc["traceEvents"])


def test_deterministic(shared_traces, tmp_path):
    a = make_replay(shared_traces / H100, tmp_path / "a.json", regions=2, node_ids="low32")
    b = make_replay(shared_traces / H100, tmp_path / "b.json", regions=2, node_ids="low32")
    assert a == b and (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_explicit_regions_and_bad_arguments(shared_traces, tmp_path):
    first = make_replay(shared_traces / H100, tmp_path / "a.json", regions=2)
    spans = [(g["t0_ns"], g["t1_ns"]) for g in first["graphs"]]
    again = make_replay(shared_traces / H100, tmp_path / "b.json", regions=spans)
    assert again == first
    with pytest.raises(ValueError):
        make_replay(shared_traces / H100, tmp_path / "c.json", regions=[spans[0], spans[0]])
    with pytest.raises(ValueError):
        make_replay(shared_traces / H100, tmp_path / "c.json", annotate=True)
    with pytest.raises(ValueError):
        make_replay(shared_traces / H100, tmp_path / "c.json", node_ids="high32")
