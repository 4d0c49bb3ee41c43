"""The op layer of CUDA/HIP-graph replays (sql/tree/graph_twins.sql, sql/tree/attribution.sql): each replayed GPU event
takes the op of its capture trace or eager twin, with ground truth from the shared capture/replay pair and from replays
made out of real eager traces (tests/graph_replay.py); launch-site attribution without a twin; the first screen's
warning; `tracesql twin` and `ingest --eager/--capture`."""
from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import polars as pl
import pytest

import tracesql
from tracesql.api import twins
from tracesql.api.summary import _attribution_warning, render

from .conftest import tracesql_cli
from .graph_replay import load, make_replay, ns

H100 = "nvidia/h100_qwen_infer.json.gz"
MI300 = "amd/mi300_qwen_infer.json.gz"
PLACEHOLDERS = ("launch api", "no launch")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(tracesql_cli() + list(args), capture_output=True, text=True, timeout=300)


def _write(doc: dict, path: Path) -> Path:
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return path


def _named_pct(d, tid: str, graphs_only: bool = False) -> float:
    """Share of a trace's GPU time (of its graph launches' only) on an op, not on a placeholder."""
    return d.sql("SELECT 100.0 * sum(dur_ns) FILTER (WHERE source NOT IN ('launch api', 'no launch')) / sum(dur_ns) "
                 "AS p FROM gpu_event_attribution WHERE trace_id = $t AND cat <> 'cuda_sync'"
                 + (" AND launch_kind = 'graph'" if graphs_only else ""), {"t": tid})["p"][0]


def _shuffled(out: Path, events: list[dict]) -> None:
    """Reverse the GPU start times of the first ten graphed events (an execution order other than capture order)."""
    doc = load(out)
    evs = doc["traceEvents"]
    idx = [e["out_index"] for e in events[:10]]
    for i, t in zip(idx, reversed([evs[i]["ts"] for i in idx]), strict=True):
        evs[i]["ts"] = t
    _write(doc, out)


def _bare(out: Path, launch_index: int, to: Path) -> Path:
    """The replay without the CPU events around its graph launch (no launch site)."""
    doc = load(out)
    launch = doc["traceEvents"][launch_index]
    t0, t1 = ns(launch["ts"]), ns(launch["ts"]) + ns(launch["dur"])
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not (
        e is not launch and e.get("ph") == "X" and (e.get("pid"), e.get("tid")) == (launch["pid"], launch["tid"])
        and e.get("cat") in ("cpu_op", "python_function", "user_annotation")
        and ns(e["ts"]) <= t0 and t1 <= ns(e["ts"]) + ns(e.get("dur", 0)))]
    return _write(doc, to)


@pytest.fixture(scope="module")
def graphs(shared_traces, tmp_path_factory):
    """Replays made from the H100 and MI300 qwen steps (tests/graph_replay.py), in one dataset with their eager runs:
      one    the step's ops from the first top-level op through the op before the last in one cudaGraphLaunch (1,192
             GPU events), ingested with `--eager` the H100 trace
      three  the same ops in three graphs (387, 403, 402 events), paired with the H100 trace
      renamed  three graphs again (with graph node ids, so another file), paired with a copy of the H100 trace in
             which the first op of the middle graph's true place is renamed
      rocm   the MI300 step in one hipGraphLaunch with packed graph node ids and PyTorch's graph annotation (`name`),
             its first ten GPU start times reversed, paired with the MI300 trace
      alone  one graph again (with graph node ids), no twin;  bare  `alone` without the CPU events around its launch
    Returns (dataset, {name: trace_id}, {name: ground truth})."""
    tmp = tmp_path_factory.mktemp("graphs")
    h100, mi300 = shared_traces / H100, shared_traces / MI300
    gt = {"one": make_replay(h100, tmp / "one.json.gz"),
          "three": make_replay(h100, tmp / "three.json.gz", regions=3),
          "renamed": make_replay(h100, tmp / "renamed.json.gz", regions=3, node_ids="low32"),
          "rocm": make_replay(mi300, tmp / "rocm.json.gz", node_ids="packed", annotate=True),
          "alone": make_replay(h100, tmp / "alone.json.gz", node_ids="low32")}
    _shuffled(tmp / "rocm.json.gz", gt["rocm"]["graphs"][0]["events"])
    _bare(tmp / "alone.json.gz", gt["alone"]["graphs"][0]["launch_index"], tmp / "bare.json.gz")
    doc = load(h100)
    doc["traceEvents"][gt["three"]["graphs"][1]["events"][0]["op_src_index"]]["name"] = "custom::renamed"
    _write(doc, tmp / "h100_renamed.json.gz")
    ds = tmp / "ds"
    r = _cli("ingest", str(tmp / "one.json.gz"), "--eager", str(h100), "--out", str(ds), "-q")
    assert r.returncode == 0, r.stderr
    assert "one.json.gz: paired with h100_qwen_infer.json.gz as its eager twin" in r.stdout
    others = ["three", "renamed", "rocm", "alone", "bare", "h100_renamed"]
    assert all(x.status == "ingested" for x in tracesql.ingest(
        [str(mi300)] + [str(tmp / f"{n}.json.gz") for n in others], out=ds, quiet=True))
    with tracesql.open(ds) as d:
        ids = {f.removesuffix(".json.gz"): t for f, t in d.sql("SELECT file_name, trace_id FROM traces").iter_rows()}
    twins.pair(ds, ids["three"], ids["h100_qwen_infer"])
    twins.pair(ds, ids["renamed"], ids["h100_renamed"])
    twins.pair(ds, ids["rocm"], ids["mi300_qwen_infer"], kind="eager")
    return ds, ids, gt


@pytest.fixture(scope="module")
def replays(shared_traces, tmp_path_factory):
    """The shared vLLM decode replay with its capture trace, and SGLang's decode replay (no twin), in one dataset:
    (dataset, {relative path: trace_id})."""
    ds = tmp_path_factory.mktemp("replays") / "ds"
    files = ["graphs/vllm_decode_full/graph_execution.json.gz", "graphs/vllm_decode_full/capture_rank0.json.gz",
             "modern/sglang_dsr1_b300_decode.json.gz"]
    results = tracesql.ingest([str(shared_traces / f) for f in files], out=ds, quiet=True)
    assert [r.status for r in results] == ["ingested"] * 3
    return ds, {f: r.trace_id for f, r in zip(files, results, strict=True)}


def test_capture_pair_takes_the_capture_ops(replays):
    """The shared vLLM decode replay (HIP graphs, 421 GPU events in its graph launch) and its capture trace: paired
    without being told (same rank, the capture records graph captures), every GPU event placed by kernel name on the
    capture call graph_capture_links (TraceLens's merge) also finds, and 96.9 % of the GPU time is on capture ops."""
    ds, trace_ids = replays
    replay = trace_ids["graphs/vllm_decode_full/graph_execution.json.gz"]
    capture = trace_ids["graphs/vllm_decode_full/capture_rank0.json.gz"]
    with tracesql.open(ds) as d:
        tw = d.sql("SELECT twin_trace_id, kind, paired_by FROM trace_twins WHERE trace_id = $t", {"t": replay})
        assert tw.rows() == [(capture, "capture", "auto")]
        al = d.sql("SELECT status, twin_kind, method, n_events, candidates, assignments FROM graph_alignment "
                   "WHERE trace_id = $t", {"t": replay})
        assert al.rows() == [("matched", "capture", "names", 421, 1, 1)]
        same = d.sql("SELECT count(*) AS n, count(*) FILTER (WHERE g.twin_launch_event_id = c.capture_launch_event_id "
                     "AND g.twin_trace_id = c.capture_trace_id) AS same FROM graph_kernel_tags g "
                     "JOIN graph_capture_links c USING (trace_id, event_id) WHERE g.trace_id = $t", {"t": replay})
        assert same.rows() == [(421, 421)]
        src = d.sql("SELECT source, count(*) AS n FROM gpu_event_attribution WHERE trace_id = $t "
                    "AND cat <> 'cuda_sync' "
                    "GROUP BY ALL ORDER BY ALL", {"t": replay})
        assert src.rows() == [("capture", 421), ("op", 13)]
        assert _named_pct(d, replay) == pytest.approx(100.0)
        top = d.sql("SELECT op_name, source, op_count, kernel_count, round(time_pct, 1) AS p FROM op_summary "
                    "WHERE trace_id = $t ORDER BY kernel_time_ns DESC LIMIT 2", {"t": replay})
        assert top.rows() == [("vllm::moe_forward", "capture", 24, 72, 66.9), ("aten::addmm", "capture", 72, 72, 8.9)]
        # the capture op's argument set comes with it
        args = d.sql("SELECT input_dims, count FROM op_arg_summary WHERE trace_id = $t "
                     "AND op_name = 'vllm::moe_forward'",
                     {"t": replay})
        assert args.rows() == [("((32, 3072), (32, 32), (), ())", 24)]
        # categories --by op: the replayed ops have their categories, the graph launch keeps its own row
        by_op = d.sql("SELECT cpu_op, sum(count) AS n FROM kernel_category_by_op WHERE trace_id = $t "
                      "AND cpu_op IN ('graph', 'vllm::moe_forward') GROUP BY ALL ORDER BY ALL", {"t": replay})
        assert by_op.rows() == [("graph", 421), ("vllm::moe_forward", 72)]


def test_perf_models_the_replayed_capture_ops(replays, reference_dir):
    """perf reads a replay's GEMMs through their capture ops (one instance per capture op and graph launch, the
    capture op's arguments, the replayed kernels' time): count, kernel time, FLOPs and bytes equal every aten GEMM
    row of TraceLens's inference report on the pair (its GEMM.csv, which merges the capture into the replay)."""
    import csv

    ds, trace_ids = replays
    replay = trace_ids["graphs/vllm_decode_full/graph_execution.json.gz"]
    capture = trace_ids["graphs/vllm_decode_full/capture_rank0.json.gz"]
    with open(reference_dir / "tracelens/graphs/vllm_decode_full/GEMM.csv", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["name"].startswith("aten::")]
    assert len(rows) == 4
    with tracesql.open(ds) as d:
        ours = {(r[0], r[1]): r[2:] for r in d.sql(
            "SELECT op_name, d_txt, count(*), sum(kernel_time_ns)::BIGINT, any_value(flops), any_value(bytes), "
            "count(DISTINCT graph_launch_event_id), any_value(op_trace_id) FROM perf_ops WHERE trace_id = $t "
            "AND family = 'GEMM' GROUP BY ALL", {"t": replay}).iter_rows()}
        assert len(ours) == 4
        for r in rows:
            dims = json.dumps(json.loads(r["Input Dims_first"].replace("(", "[").replace(")", "]")),
                              separators=(",", ":"))
            n, t_ns, flops, nbytes, launches, op_trace = ours[(r["name"], dims)]
            assert n == int(r["name_count"])
            # the graph's addmm are the capture's ops; lm_head's mm runs outside the graph, an op of the replay
            assert (launches, op_trace) == ((1, capture) if r["name"] == "aten::addmm" else (0, replay))
            # TraceLens sums float µs from float timestamps: within 1 ns per kernel of the exact sum
            assert t_ns / 1e3 == pytest.approx(float(r["Kernel Time (µs)_sum"]), abs=1e-3 * n)
            assert flops == pytest.approx(float(r["GFLOPS_first"]) * 1e9, rel=1e-9)
            assert nbytes == pytest.approx(float(r["Data Moved (MB)_first"]) * 2**20, rel=1e-9)
        tr = d.sql("SELECT gpu_time_ns, op_time_ns FROM perf_traces WHERE trace_id = $t", {"t": replay}).row(0)
        assert tr == (10717708, 10717708)  # every GPU event is on an op instance (421 replayed, 13 of the trace)


def test_tree_shows_the_replayed_ops_under_the_graph_launch(replays):
    """The call tree of the replay: under its hipGraphLaunch, one 'twin op' node per capture op and launch (named by
    the op), the replayed GPU events below them; the op selection finds them."""
    ds, trace_ids = replays
    replay = trace_ids["graphs/vllm_decode_full/graph_execution.json.gz"]
    with tracesql.open(ds) as d:
        t = d.tree(trace=replay, merge=True)
        launch = t.filter(pl.col("name") == "hipGraphLaunch")
        assert launch.select("level", "kernel_count").rows() == [(1, 421)]
        below = t.filter((pl.col("level") == 2) & (pl.col("kind") == "twin op"))
        assert below["kernel_count"].sum() == 421 and below.height == 12
        moe = below.filter(pl.col("name") == "vllm::moe_forward").row(0, named=True)
        assert (moe["n_nodes"], moe["kernel_count"], round(moe["gpu_sum_us"], 2)) == (24, 72, 7171.53)
        sel = d.tree(op="vllm::moe_forward", trace=replay, depth=0)
        assert sel.select("kind", "kernel_count").unique().rows() == [("twin op", 3)] and sel.height == 24
    # the command, restricted to the replay, keeps the capture trace its ops come from
    out = _cli("tree", str(ds), "--trace", "graph_execution.json.gz", "--depth", "2", "--merge", "--wide")
    assert out.returncode == 0 and "vllm::moe_forward ×24 " in out.stdout, out.stdout + out.stderr


def test_eager_twin_gives_every_kernel_its_ground_truth_op(graphs):
    """Each replayed GPU event takes the op of the eager launch at its position: the cpu_op event, the GPU event and
    the annotation the generator recorded from the source trace."""
    ds, ids, gt = graphs
    (graph,) = gt["one"]["graphs"]
    assert len(graph["events"]) == 1192
    with tracesql.open(ds) as d:
        al = d.sql("SELECT status, twin_trace_id, twin_kind, method, n_events, assignments FROM graph_alignment "
                   "WHERE trace_id = $t", {"t": ids["one"]})
        assert al.rows() == [("matched", ids["h100_qwen_infer"], "eager", "names", 1192, 1)]
        tags = {r[0]: r[1:] for r in d.sql(
            "SELECT event_id, op_event_id, op_name, twin_gpu_event_id, tag, source, confidence FROM graph_kernel_tags "
            "WHERE trace_id = $t", {"t": ids["one"]}).iter_rows()}
    assert len(tags) == 1192
    for e in graph["events"]:
        assert tags[e["out_index"]] == (e["op_src_index"], e["op_name"], e["src_index"], e["annotation"], "eager",
                                        "names"), e


def test_eager_twin_op_summary_matches_the_eager_run(graphs):
    """op_summary of the replay: all the GPU time of its graph on named ops (the trace's share without an op, 30.1 %,
    is that of the eager run: GEMMs launched before the profiler's CPU window), and each op's kernel count and
    argument sets are those of the eager run (the same GPU events, replayed)."""
    ds, ids, _ = graphs
    replay, eager = ids["one"], ids["h100_qwen_infer"]
    with tracesql.open(ds) as d:
        assert _named_pct(d, replay, graphs_only=True) == pytest.approx(100.0)
        assert _named_pct(d, replay) == pytest.approx(_named_pct(d, eager)) == pytest.approx(69.9, abs=0.05)
        ops = {t: dict(d.sql("SELECT op_name, sum(kernel_count)::BIGINT AS n FROM op_summary WHERE trace_id = $t "
                             "GROUP BY op_name", {"t": t}).iter_rows()) for t in (replay, eager)}
        assert ops[replay] == ops[eager]
        arg_sql = ("SELECT op_name, input_dims, input_type, count, kernel_time_sum_ns FROM op_arg_summary "
                   "WHERE trace_id = $t ORDER BY ALL")
        assert d.sql(arg_sql, {"t": replay}).rows() == d.sql(arg_sql, {"t": eager}).rows()


def test_perf_of_the_eager_twin_replay_is_the_eager_runs(graphs):
    """The replay's graph launch replays the eager run's kernels: perf models the same op instances, with the same
    arguments, kernel time and FLOPs, per argument set (graph launch ids and CPU starts aside)."""
    ds, ids, _ = graphs
    replay, eager = ids["one"], ids["h100_qwen_infer"]
    sql = ("SELECT op_name, family, d_txt, t_txt, c_txt, count(*) AS n, sum(kernel_time_ns)::BIGINT AS t, "
           "sum(flops) AS f, sum(bytes) AS b FROM perf_ops WHERE trace_id = $t GROUP BY ALL ORDER BY ALL")
    with tracesql.open(ds) as d:
        ours, theirs = d.sql(sql, {"t": replay}).rows(), d.sql(sql, {"t": eager}).rows()
        assert len(ours) > 20 and ours == theirs
        n_graph = d.sql("SELECT count(*) FROM perf_ops WHERE trace_id = $t AND graph_launch_event_id IS NOT NULL",
                        {"t": replay}).item()
        assert n_graph > 100


def test_a_graph_of_a_repeated_layer_takes_its_ops_without_its_layer(graphs):
    """Three graphs over consecutive parts of the step: the first holds the model's head and is placed once; the
    others match the decoder layers at 16 places with the same ops: their ops are taken, their module paths (which
    layer) are not."""
    ds, ids, gt = graphs
    with tracesql.open(ds) as d:
        al = d.sql("SELECT graph_index, n_events, status, candidates, assignments FROM graph_alignment "
                   "WHERE trace_id = $t ORDER BY graph_index", {"t": ids["three"]})
        assert al.rows() == [(1, 387, "matched", 1, 1), (2, 403, "matched", 16, 1), (3, 402, "matched", 16, 1)]
        tags = {r[0]: r[1:] for r in d.sql("SELECT event_id, op_name, module_path FROM graph_kernel_tags "
                                            "WHERE trace_id = $t", {"t": ids["three"]}).iter_rows()}
        assert all(tags[e["out_index"]][0] == e["op_name"] for g in gt["three"]["graphs"] for e in g["events"])
        first = {e["out_index"] for e in gt["three"]["graphs"][0]["events"]}
        assert all(m is not None for k, (_, m) in tags.items() if k in first)
        assert all(m is None for k, (_, m) in tags.items() if k not in first)
        assert _named_pct(d, ids["three"], graphs_only=True) == pytest.approx(100.0)


def test_disagreeing_placements_are_reported_ambiguous(graphs):
    """The three graphs against a twin in which the first op of the middle graph's true place is renamed: the
    placements of the middle and last graphs (which repeat decoder layers) now disagree on that op, so those launches
    are reported ambiguous and take nothing from the twin (their GPU time goes to the launch site); the first graph,
    placed once, keeps its ops."""
    ds, ids, gt = graphs
    with tracesql.open(ds) as d:
        al = d.sql("SELECT graph_index, status, twin_trace_id IS NULL AS none, candidates, assignments "
                   "FROM graph_alignment WHERE trace_id = $t ORDER BY graph_index", {"t": ids["renamed"]})
        # the 16 placements of the middle graph now give 9 assignments: the true one and the 8 that hold the renamed
        # op at another position; 8 of the last graph's 16 placements hold it too
        assert al.rows() == [(1, "matched", False, 1, 1), (2, "ambiguous", True, 16, 9), (3, "ambiguous", True, 16, 8)]
        g2 = gt["renamed"]["graphs"][1]
        src2 = d.sql("SELECT DISTINCT a.source, a.op_name FROM gpu_event_attribution a WHERE a.trace_id = $t "
                     "AND a.launch_event_id = $l", {"t": ids["renamed"], "l": g2["launch_index"]})
        assert src2.rows() == [("launch site", "transformers/models/qwen2/modeling_qwen2.py(218): forward")]
        listed = twins.twins(d).filter(pl.col("trace_id") == ids["renamed"])
        assert listed.select("graph_launches", "placed", "ambiguous", "unmatched").rows() == [(3, 1, 2, 0)]


def test_graph_node_ids_order_and_tag_the_replay(graphs):
    """The ROCm replay with packed graph node ids, PyTorch's graph annotation (`name`) and shuffled GPU start times:
    node order still places it on the eager twin, and each node's name is its event's tag (source 'graph node'),
    with the twin's op."""
    ds, ids, gt = graphs
    (graph,) = gt["rocm"]["graphs"]
    with tracesql.open(ds) as d:
        al = d.sql("SELECT status, method FROM graph_alignment WHERE trace_id = $t", {"t": ids["rocm"]})
        assert al.rows() == [("matched", "names")]
        tags = {r[0]: r[1:] for r in d.sql("SELECT event_id, ordinal, node_id, op_name, tag, source, confidence "
                                            "FROM graph_kernel_tags WHERE trace_id = $t",
                                            {"t": ids["rocm"]}).iter_rows()}
    assert len(tags) == len(graph["events"]) == 1048
    for k, e in enumerate(graph["events"], start=1):
        assert tags[e["out_index"]] == (k, k, e["op_name"], e["annotation"] or e["op_name"], "graph node", "names")


def test_no_twin_launch_site_and_warning(graphs):
    """Without a twin, a graph's GPU time goes to its launch site (the innermost named CPU context: here the model's
    forward frame), not to '[cudaGraphLaunch]'; with no CPU context at all it stays on the placeholder and the first
    screen says how much and how to fix it."""
    ds, ids, _ = graphs
    with tracesql.open(ds) as d:
        assert _named_pct(d, ids["alone"], graphs_only=True) == pytest.approx(100.0)
        site = d.sql("SELECT op_name, source, kernel_count FROM op_summary WHERE trace_id = $t "
                     "ORDER BY kernel_time_ns DESC LIMIT 1", {"t": ids["alone"]})
        assert site.rows() == [("transformers/models/qwen2/modeling_qwen2.py(323): forward", "launch site", 1192)]
        # the warm-up GEMMs launched before the CPU window (30.1 %) have no op in the eager run and in the replay
        warning = _attribution_warning(d.sql("SELECT * FROM overview_attribution WHERE trace_id = $t",
                                             {"t": ids["alone"]}).to_dicts())
        assert warning is not None and warning.startswith(
            "Warning    30.1 % of GPU time has no op: 30.1 % was launched before the profiler's CPU window")
        assert "replayed by CUDA/HIP graphs" not in warning
        top = d.sql("SELECT op_name, source, kernel_count FROM op_summary WHERE trace_id = $t "
                    "ORDER BY kernel_time_ns DESC LIMIT 1", {"t": ids["bare"]})
        assert top.rows() == [("[cudaGraphLaunch]", "launch api", 1192)]
        a = d.sql("SELECT round(placeholder_pct, 1) AS p, round(graph_placeholder_pct, 1) AS g "
                  "FROM overview_attribution "
                  "WHERE trace_id = $t", {"t": ids["bare"]})
        assert a.rows() == [(99.8, 69.7)]
        screen = render(d, trace=ids["bare"], w=200)
    assert "Warning    99.8 % of GPU time has no op (69.7 % replayed by CUDA/HIP graphs)" in screen
    assert "--eager FILE" in screen


def test_replay_without_twin_sglang(replays):
    """SGLang decode on B300 under CUDA-graph replay, no capture trace: no GPU time on a placeholder; the graph's
    kernels go to SGLang's replay frame (the frames of torch's own graph code and the built-in call are skipped)."""
    ds, trace_ids = replays
    tid = trace_ids["modern/sglang_dsr1_b300_decode.json.gz"]
    with tracesql.open(ds) as d:
        # the vLLM capture trace beside it (no rank either) holds no capture of its graph's length: not its twin
        assert d.sql("SELECT count(*) FROM trace_twins WHERE trace_id = $t", {"t": tid}).item() == 0
        assert _named_pct(d, tid) == pytest.approx(100.0)
        top = d.sql("SELECT op_name, source, kernel_count FROM op_summary WHERE trace_id = $t "
                    "ORDER BY kernel_time_ns DESC LIMIT 1", {"t": tid})
        (name, source, n) = top.rows()[0]
        assert name.endswith("cuda_graph_runner.py(1359): replay") and source == "launch site" and n == 356


def test_twin_command(graphs):
    """`tracesql twin`: lists the pairings with how the graph launches were placed; pairs and unpairs; refuses a trace
    paired with itself and a name that is not in the dataset, in one line."""
    ds, ids, _ = graphs
    replay, eager = ids["one"], ids["h100_qwen_infer"]
    r = _cli("twin", str(ds), "-f", "csv")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("trace_id,trace,twin_trace_id,twin,kind,paired_by,graph_launches,placed,ambiguous,unmatched,"
                        "twin_pct")
    assert f"{replay},one.json.gz,{eager},h100_qwen_infer.json.gz,eager,user,1,1,0,0," in r.stdout
    assert len(lines) == 1 + 4
    r = _cli("twin", str(ds), replay, replay)
    assert r.returncode != 0 and r.stderr.strip() == "tracesql: error: " + replay + ": a trace cannot be its own twin"
    r = _cli("twin", str(ds), replay, "nope.json")
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
    assert _cli("twin", str(ds), replay, eager, "--remove").returncode == 0
    assert f"{replay}.{eager}.json" not in [p.name for p in (ds / "twins").glob("*.json")]
    assert _cli("twin", str(ds), replay, eager, "--remove").returncode != 0
    r = _cli("twin", str(ds), "one.json.gz", "h100_qwen_infer.json.gz", "--kind", "eager")
    assert r.returncode == 0, r.stderr
    assert f"{replay}.{eager}.json" in [p.name for p in (ds / "twins").glob("*.json")]
