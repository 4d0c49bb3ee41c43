"""The call tree (sql/1*.sql, tracesql.api.tree): nesting, launch links, attribution, rollups, TraceLens ops_summary."""
from __future__ import annotations

import csv
import math

import pytest

import tracesql

QWEN = "nvidia/h100_qwen_infer.json.gz"

# TraceLens ops_summary references -> the shared trace they were made from.
OPS_SUMMARY_REFS = {
    "nvidia/h100_qwen_infer": "nvidia/h100_qwen_infer.json.gz",
    "nvidia/h100_bert_small_infer": "nvidia/h100_bert_small_infer.json.gz",
    "nvidia/h100_falconsai_infer": "nvidia/h100_falconsai_infer.json.gz",
    "amd/mi300_qwen_infer": "amd/mi300_qwen_infer.json.gz",
    "amd/mi300_bert_small_infer": "amd/mi300_bert_small_infer.json.gz",
    "amd/mi300_normalization": "amd/mi300_normalization.json.gz",
    "amd/mi300_torch_compile_triton": "amd/mi300_torch_compile_triton.json.gz",
    "graphs/vllm_decode_full": "graphs/vllm_decode_full/graph_execution.json.gz",
}

# cpu_nesting with the event's own columns, which live in events (their one home)
NEST = ("(SELECT n.*, e.pid, e.tid, e.cat, e.name, e.ts_ns, n.end_ns - e.ts_ns AS dur_ns FROM cpu_nesting n "
        "JOIN events e ON e.trace_id = n.trace_id AND e.event_id = n.event_id)")


@pytest.fixture(scope="module")
def tds(ds):
    """The shared dataset with the tree views computed once (temporary tables), dropped afterwards."""
    from tracesql.api.tree import materialize, release

    materialize(ds)
    yield ds
    release(ds)


def one(tds, query, params=None):
    return tds.con.execute(query, params or []).fetchall()


# ---- nesting -----------------------------------------------------------------------------------------

def test_nesting_covers_every_cpu_duration_event(tds):
    n_events, n_nested = one(tds, """SELECT (SELECT count(*) FROM events WHERE dur_ns IS NOT NULL),
                                            (SELECT count(*) FROM cpu_nesting)""")[0]
    assert n_nested == n_events > 0
    # one row per event, depth 0 exactly for the roots
    assert one(tds, "SELECT count(*) - count(DISTINCT (trace_id, event_id)) FROM cpu_nesting")[0][0] == 0
    assert one(tds, """SELECT count(*) FROM cpu_nesting
                       WHERE (parent_event_id IS NULL) <> (depth = 0)""")[0][0] == 0


def test_nesting_is_laminar_and_consistent(tds):
    """Every parent encloses its child (after clipping) on the same thread, one level up."""
    bad = one(tds, f"""
        SELECT count(*) FROM {NEST} c JOIN {NEST} p
          ON p.trace_id = c.trace_id AND p.event_id = c.parent_event_id
        WHERE p.pid <> c.pid OR p.tid <> c.tid OR c.ts_ns < p.ts_ns OR c.nest_end_ns > p.nest_end_ns
           OR c.depth <> p.depth + 1 OR p.nest_pos >= c.nest_pos OR p.nest_end_ns <= p.ts_ns""")[0][0]
    assert bad == 0
    # no two siblings overlap (a laminar family): consecutive children of one parent are disjoint
    overlaps = one(tds, f"""
        SELECT count(*) FROM (
            SELECT ts_ns, lag(nest_end_ns) OVER (PARTITION BY trace_id, pid, tid, parent_event_id
                                                 ORDER BY nest_pos) AS prev_end
            FROM {NEST} WHERE nest_end_ns > ts_ns)
        WHERE ts_ns < prev_end""")[0][0]
    assert overlaps == 0


def test_nesting_matches_a_stack_walk(tds, trace_ids):
    """Independent check on one trace: a plain stack over the clipped intervals gives the same parents."""
    tid = trace_ids["nvidia/b200_eager_nccl.json.gz"]
    rows = one(tds, f"""SELECT pid, tid, event_id, ts_ns, nest_end_ns, parent_event_id, depth FROM {NEST}
                        WHERE trace_id = ? ORDER BY pid, tid, nest_pos""", [tid])
    stacks: dict[tuple, list] = {}
    mismatches = 0
    for pid, t, eid, ts, end, parent, depth in rows:
        st = stacks.setdefault((pid, t), [])
        while st and ts >= st[-1][1]:
            st.pop()
        mismatches += (st[-1][0] if st else None) != parent or depth != len(st)
        if end > ts:
            st.append((eid, end))
    assert len(rows) == 21423 and mismatches == 0


def test_overruns_are_clipped_python_frames_only(tds, trace_ids):
    # Only Python frames are ever clipped; host ranges keep their extent.
    assert one(tds, f"SELECT count(*) FROM {NEST} WHERE clipped AND cat <> 'python_function'")[0][0] == 0
    qwen = trace_ids[QWEN]
    # ProfilerStep#6 starts inside the Python call `_record_function_enter_new` and outlives it by 47 ms:
    # the step keeps its 47 ms, the Python call is cut where the step begins, and the step is not its child.
    step = one(tds, f"""SELECT event_id, ts_ns, dur_ns, clipped FROM {NEST}
                        WHERE trace_id = ? AND name = 'ProfilerStep#6'""", [qwen])[0]
    assert step[2] == 47_151_395 and step[3] is False
    enter = one(tds, f"""SELECT event_id, nest_end_ns, end_ns, clipped FROM {NEST}
                         WHERE trace_id = ? AND cat = 'python_function'
                           AND name LIKE '<built-in method _record_function_enter_new%'
                           AND ts_ns < ? AND end_ns > ?""", [qwen, step[1], step[1]])
    assert len(enter) == 1 and enter[0][3] is True and enter[0][1] == step[1]
    assert one(tds, "SELECT parent_event_id FROM cpu_nesting WHERE trace_id = ? AND event_id = ?",
               [qwen, step[0]])[0][0] != enter[0][0]
    # b200: torch.compile's RecordFunctionFast.__enter__ overlaps its cpu_op by ~20 µs; the cpu_op keeps
    # its extent and encloses what it ran.
    n = one(tds, "SELECT count(*) FROM cpu_nesting WHERE trace_id = ? AND clipped",
            [trace_ids["nvidia/b200_eager_nccl.json.gz"]])[0][0]
    assert n == 19


def test_zero_duration_events_are_leaves(tds, trace_ids):
    tid = trace_ids["nvidia/hta_cuda_graphs_rank0.json.gz"]
    zero, with_children = one(tds, f"""
        SELECT count(*), count(*) FILTER (WHERE event_id IN (SELECT parent_event_id FROM cpu_nesting
                                                             WHERE trace_id = ? AND parent_event_id IS NOT NULL))
        FROM {NEST} WHERE trace_id = ? AND dur_ns = 0""", [tid, tid])[0]
    assert zero == 30423 and with_children == 0


# ---- linking -----------------------------------------------------------------------------------------

def test_qwen_linked_gpu_events_match_tracelens(tds, trace_ids):
    tid = trace_ids[QWEN]
    total, linked, tl_linked = one(tds, """SELECT count(*), count(*) FILTER (WHERE linked),
                                                  count(*) FILTER (WHERE tl_linked)
                                           FROM tl_gpu_event_ops WHERE trace_id = ?""", [tid])[0]
    assert (total, linked, tl_linked) == (1707, 1198, 1198)
    s = one(tds, """SELECT gpu_events, linked_events, unlinked_events, tl_linked_events
                    FROM tl_link_summary WHERE trace_id = ?""", [tid])[0]
    assert s == (1707, 1198, 509, 1198)
    # unlinked events are the warm-up kernels that ran before the CPU window opened
    first_cpu = one(tds, "SELECT min(ts_ns) FROM events WHERE trace_id = ? AND cat = 'cpu_op'", [tid])[0][0]
    n_before = one(tds, """SELECT count(*) FROM gpu_event_ops WHERE trace_id = ? AND NOT linked
                           AND ts_ns < ?""", [tid, first_cpu])[0][0]
    assert n_before == 509


def test_every_gpu_event_is_kept(tds):
    per_trace = one(tds, """SELECT k.trace_id, count(*), (SELECT count(*) FROM gpu_event_ops g
                                                          WHERE g.trace_id = k.trace_id)
                            FROM kernels k GROUP BY k.trace_id""")
    assert per_trace and all(a == b for _, a, b in per_trace)


def test_links_stay_inside_their_trace_when_correlations_collide(tds, trace_ids):
    r0, r1 = trace_ids["multirank/dlrm_8rank/rank0.json.gz"], trace_ids["multirank/dlrm_8rank/rank1.json.gz"]
    shared = one(tds, """SELECT count(*) FROM (SELECT correlation FROM kernels WHERE trace_id = ?
                                               INTERSECT SELECT correlation FROM kernels WHERE trace_id = ?)""",
                 [r0, r1])[0][0]
    assert shared == 19  # the ranks reuse correlation ids
    crossing = one(tds, """SELECT count(*) FROM gpu_launch_links l LEFT JOIN events e
                             ON e.trace_id = l.trace_id AND e.event_id = l.launch_event_id
                           WHERE l.linked AND (e.event_id IS NULL OR e.correlation <> l.correlation)""")[0][0]
    assert crossing == 0
    counts = dict(one(tds, """SELECT t.rank, count(*) FILTER (WHERE l.linked) FROM gpu_launch_links l
                              JOIN traces t USING (trace_id)
                              WHERE t.source_path LIKE '%dlrm_8rank%' GROUP BY t.rank"""))
    assert counts == {0: 261, 1: 262, 2: 262, 3: 273, 4: 273, 5: 261, 6: 262, 7: 262}


def test_old_format_links_by_correlation_not_external_id(tds, trace_ids):
    """PyTorch 1.8 trace: `Runtime`/`Kernel`/`Operator` categories, `async` flows instead of ac2g."""
    tid = trace_ids["nvidia/kineto_2021_v1_8.json.gz"]
    total, linked, with_op, tl_linked = one(tds, """
        SELECT count(*), count(*) FILTER (WHERE linked), count(op_event_id), count(*) FILTER (WHERE tl_linked)
        FROM tl_gpu_event_ops WHERE trace_id = ?""", [tid])[0]
    assert (total, linked, tl_linked) == (10015, 9282, 0)  # TraceLens needs ac2g flows: none here
    assert with_op == 9180
    # kernel 54644: correlation 73186 -> cudaLaunchKernel 54646 (whose External id is 18027, an op id)
    row = one(tds, """SELECT g.launch_event_id, g.launch_name, g.op_name, e.external_id
                      FROM gpu_event_ops g JOIN events e ON e.trace_id = g.trace_id AND e.event_id = g.launch_event_id
                      WHERE g.trace_id = ? AND g.event_id = 54644""", [tid])[0]
    assert row == (54646, "cudaLaunchKernel", "aten::add", 18027)
    # ProfilerStep#N is an Operator in 1.8 traces: it is the step, and the outermost op (the backward
    # thread's launches run outside it)
    assert one(tds, """SELECT count(*) FILTER (WHERE step LIKE 'ProfilerStep#%'),
                              count(*) FILTER (WHERE top_op_name LIKE 'ProfilerStep#%')
                       FROM gpu_event_ops WHERE trace_id = ? AND linked""", [tid])[0] == (5526, 5526)


def test_cuda_graph_launch_owns_all_its_kernels(tds, trace_ids):
    tid = trace_ids["nvidia/hta_cuda_graphs_rank0.json.gz"]
    rows = one(tds, """SELECT link_via, count(*), count(DISTINCT launch_event_id) FROM gpu_launch_links
                       WHERE trace_id = ? GROUP BY ALL ORDER BY 1 NULLS LAST""", [tid])
    assert rows == [("ac2g", 6530, 6530), ("graph", 345, 70), (None, 872, 0)]


def test_amd_graph_replay_merged_with_its_capture(tds, trace_ids):
    g = trace_ids["graphs/vllm_decode_full/graph_execution.json.gz"]
    c = trace_ids["graphs/vllm_decode_full/capture_rank0.json.gz"]
    n, matched, traces = one(tds, """SELECT count(*), count(*) FILTER (WHERE names_match),
                                            list(DISTINCT capture_trace_id)
                                     FROM graph_capture_links WHERE trace_id = ?""", [g])[0]
    assert (n, matched, traces) == (421, 421, [c])
    # hipGraphLaunch writes many ac2g flow ends and no flow start: linking must not need flows
    assert one(tds, """SELECT count(*) FROM gpu_launch_links WHERE trace_id = ? AND link_via = 'graph'""",
               [g])[0][0] == 421
    ops = dict(one(tds, """SELECT tl_launcher_name, count(*) FROM tl_gpu_event_ops
                           WHERE trace_id = ? AND capture_trace_id IS NOT NULL GROUP BY ALL""", [g]))
    assert ops["vllm::moe_forward"] > 0 and "hipGraphLaunch" not in ops


def test_cpu_only_trace(tds, trace_ids):
    tid = trace_ids["cpu/hta_cpu_only_rank34.json.gz"]
    assert one(tds, "SELECT count(*) FROM cpu_nesting WHERE trace_id = ?", [tid])[0][0] == 16
    assert one(tds, "SELECT count(*) FROM gpu_event_ops WHERE trace_id = ?", [tid])[0][0] == 0
    assert one(tds, "SELECT gpu_events, linked_events FROM gpu_link_summary WHERE trace_id = ?",
               [tid])[0] == (0, 0)
    assert tds.tree(trace=tid).height == 0


# ---- attribution and rollups -----------------------------------------------------------------------

def test_qwen_attribution(tds, trace_ids):
    tid = trace_ids[QWEN]
    row = one(tds, """SELECT count(*), count(op_name), count(module_path), count(step), count(annotation_name),
                             count(gpu_annotation_name)
                      FROM gpu_event_ops WHERE trace_id = ? AND linked""", [tid])[0]
    assert row == (1198,) * 6
    # a GEMM launched by aten::mm inside a Linear of an MLP block
    paths = {p for (p,) in one(tds, """SELECT DISTINCT module_path FROM gpu_event_ops
                                       WHERE trace_id = ? AND op_name = 'aten::mm'""", [tid])}
    assert "Qwen2Model_0/Qwen2DecoderLayer_7/Qwen2MLP_7/Linear_55" in paths
    assert one(tds, "SELECT DISTINCT step FROM gpu_event_ops WHERE trace_id = ? AND linked", [tid]) == [
        ("ProfilerStep#6",)]


def test_module_rollups(tds, trace_ids, reference_dir):
    tid = trace_ids[QWEN]
    rows = {name: (n, busy) for name, n, busy in one(tds, """
        SELECT module_name, subtree_kernel_count, subtree_gpu_busy_ns FROM module_gpu_time
        WHERE trace_id = ? AND module_name IN ('Qwen2Model_0', 'Qwen2DecoderLayer_0', 'Embedding_0')""", [tid])}
    assert rows["Qwen2DecoderLayer_0"] == (49, 1_323_644)
    assert rows["Embedding_0"] == (1, 51_776)
    # the whole model holds every linked GPU event: its busy time is TraceLens's gpu_timeline busy_time
    ref = {r["type"]: float(r["time ms"]) for r in
           csv.DictReader(open(reference_dir / "tracelens/nvidia/h100_qwen_infer/gpu_timeline.csv"))}
    assert rows["Qwen2Model_0"][0] == 1198
    assert math.isclose(rows["Qwen2Model_0"][1] / 1e6, ref["busy_time"], rel_tol=1e-6)
    assert one(tds, "SELECT count(*) FROM module_gpu_time WHERE trace_id = ? AND module_class = 'Qwen2DecoderLayer'",
               [tid])[0][0] == 24


def test_op_rollups_direct_and_subtree(tds, trace_ids):
    tid = trace_ids[QWEN]
    # every linked GPU event is direct for exactly one op (here every launch has an op above it)
    assert one(tds, "SELECT sum(direct_kernel_count) FROM op_gpu_time WHERE trace_id = ?", [tid])[0][0] == 1198
    bad = one(tds, """SELECT count(*) FROM op_gpu_time WHERE trace_id = ?
                      AND (subtree_gpu_busy_ns < direct_gpu_busy_ns OR subtree_gpu_sum_ns < subtree_gpu_busy_ns
                           OR subtree_kernel_count < direct_kernel_count)""", [tid])[0][0]
    assert bad == 0
    # aten::linear -> aten::matmul -> aten::mm: the GEMM is direct for aten::mm, subtree for the others
    lin = one(tds, """SELECT sum(direct_kernel_count), sum(subtree_kernel_count) FROM op_gpu_time
                      WHERE trace_id = ? AND name = 'aten::linear'""", [tid])[0]
    assert lin[0] == 0 and lin[1] > 0


def test_fwd_bwd_links(tds, trace_ids):
    tid = trace_ids["nvidia/hta_ns_resolution_rank0.json.gz"]
    rows = {v: (n, s, b) for v, n, s, b in one(tds, """
        SELECT link_via, count(*), count(sequence_number), count(DISTINCT bwd_event_id) FROM op_fwd_bwd
        WHERE trace_id = ? GROUP BY ALL""", [tid])}
    assert rows["fwdbwd"] == (905, 905, 905)  # one per fwdbwd flow
    assert rows["sequence_number"][2] == 905  # every backward node also reached by its sequence number
    # the flow binds aten::convolution to ConvolutionBackward0; the sequence number to its evaluate_function
    pairs = set(one(tds, """SELECT fwd_name, bwd_name, link_via FROM op_fwd_bwd
                            WHERE trace_id = ? AND sequence_number = 18276""", [tid]))
    assert ("aten::convolution", "ConvolutionBackward0", "fwdbwd") in pairs
    assert ("aten::conv2d", "autograd::engine::evaluate_function: ConvolutionBackward0", "sequence_number") in pairs


@pytest.mark.parametrize("ref", sorted(OPS_SUMMARY_REFS))
def test_tl_ops_summary_matches_tracelens(tds, trace_ids, reference_dir, ref):
    tid = trace_ids[OPS_SUMMARY_REFS[ref]]
    expected = {r["name"]: r for r in csv.DictReader(open(reference_dir / "tracelens" / ref / "ops_summary.csv"))}
    got = {r[0]: r[1:] for r in one(tds, """SELECT name, total_direct_kernel_time_sum, total_subtree_kernel_time_sum,
                                                   "Count", total_direct_kernel_time_ms, "Percentage (%)"
                                            FROM tl_ops_summary WHERE trace_id = ?""", [tid])}
    assert set(got) == set(expected)
    for name, r in expected.items():
        direct, subtree, count, ms, pct = got[name]
        assert math.isclose(direct, float(r["total_direct_kernel_time_sum"]), rel_tol=1e-6), name
        assert math.isclose(subtree, float(r["total_subtree_kernel_time_sum"]), rel_tol=1e-6), name
        assert math.isclose(ms, float(r["total_direct_kernel_time_ms"]), rel_tol=1e-6), name
        assert math.isclose(pct, float(r["Percentage (%)"]), rel_tol=1e-6, abs_tol=1e-9), name
        assert count == int(r["Count"]), name


# ---- tree() and the CLI ----------------------------------------------------------------------------

def test_tree_frame(tds, trace_ids):
    tid = trace_ids[QWEN]
    t = tds.tree(trace=tid, depth=1)
    assert t["name"].to_list()[:2] == ["ProfilerStep#6", "nn.Module: Qwen2Model_0"]
    assert t["kind"].to_list()[-1] == "unlinked" and t["kernel_count"].to_list()[-1] == 509
    layers = tds.tree(trace=tid, module="Qwen2DecoderLayer", depth=0)
    assert layers.height == 24 and set(layers["kind"]) == {"module"}
    assert math.isclose(layers.filter(layers["name"] == "nn.Module: Qwen2DecoderLayer_0")["gpu_busy_us"][0],
                        1323.644, rel_tol=1e-9)
    mm = tds.tree(trace=tid, op="aten::mm", depth=2)
    assert set(mm["kind"]) == {"op", "launch", "gpu"}
    assert mm.filter(mm["level"] == 0).height == 96  # TraceLens's Count for aten::mm
    # a node's GPU time covers its children's
    full = tds.tree(trace=tid)
    assert full.filter(full["kind"] == "gpu").height == 1198


def test_tree_cli(qwen_dataset, capsys):
    from tracesql.cli.main import main

    path, tid = qwen_dataset
    assert main(["tree", str(path), "--module", "Qwen2DecoderLayer_2", "--depth", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"trace h100_qwen_infer.json.gz ({tid})"
    assert out[-1].startswith("(deeper levels not shown: --depth 2")
    out = out[:-1]
    assert out[1].startswith("nn.Module: Qwen2DecoderLayer_2 ...") and out[1].endswith("(1,320.41 µs, 49 GPU events)")
    assert [line.split(" ..")[0] for line in out[2:]] == [
        "  nn.Module: Qwen2RMSNorm_4", "  nn.Module: Qwen2Attention_2", "  aten::add", "  nn.Module: Qwen2RMSNorm_5",
        "  nn.Module: Qwen2MLP_2", "  aten::add"]
    assert main(["tree", str(path), "--trace", tid, "--op", "aten::mm", "--depth", "0", "-f", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("trace_id,trace,level,kind,name,gpu_busy_us") and len(rows) == 1 + 96
    assert main(["tree", str(path), "--op", "no::such_op"]) == 1


def test_tree_merge_sums_the_instances(qwen_dataset, capsys):
    """--merge: the 96 aten::mm of h100_qwen_infer are one node ×96 whose times are the sums of theirs, with
    their 96 memsets and 96 GEMM launches merged below it."""
    import polars as pl

    from tracesql.cli.main import main

    path, tid = qwen_dataset
    with tracesql.open(path) as d:
        plain = d.tree(op="aten::mm", depth=0)
        merged = d.tree(op="aten::mm", depth=2, merge=True)
    assert plain.height == 96
    top = merged.row(0, named=True)
    assert (top["level"], top["name"], top["n_nodes"], top["kernel_count"]) == (0, "aten::mm", 96, 192)
    assert math.isclose(top["gpu_busy_us"], plain["gpu_busy_us"].sum(), rel_tol=1e-12)
    assert math.isclose(top["gpu_busy_us"], 6668.679, rel_tol=1e-9)
    assert merged.select("level", "name", "n_nodes").rows()[1:4] == [
        (1, "cudaMemsetAsync", 96), (2, "Memset (Device)", 96), (1, "cudaLaunchKernelExC", 96)]
    assert merged.filter(pl.col("level") == 1)["kernel_count"].sum() == 192
    assert main(["tree", str(path), "--op", "aten::mm", "--depth", "1", "--merge", "--width", "100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "aten::mm ×96 " + "." * 57 + " (6,668.68 µs, 192 GPU events)" and len(out[1]) == 100
    assert out[2].startswith("  cudaMemsetAsync ×96 ...") and out[2].endswith("(80.26 µs, 96 GPU events)")


def test_tree_merge_merges_profiler_steps(tmp_path, shared_traces, capsys):
    """The 2,034 roots of kineto_2021_v1_8 (6 ProfilerStep#N, 966 AccumulateGrad, ...) merge into 11 nodes and
    the [no launch] line; ProfilerStep#N of every N is one ProfilerStep#* ×6."""
    from tracesql.cli.main import main

    tracesql.ingest([str(shared_traces / "nvidia/kineto_2021_v1_8.json.gz")], out=tmp_path / "ds", quiet=True)
    assert main(["tree", str(tmp_path / "ds"), "--depth", "0", "--merge", "--width", "100", "-f", "text"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 + 12 + 1
    assert out[1] == "ProfilerStep#* ×6 " + "." * 48 + " (226,011.00 µs, 5,526 GPU events)" and len(out[1]) == 100
    assert [line.split(" ..")[0] for line in out[6:8]] == ["torch::autograd::AccumulateGrad ×966",
                                                           "MeanBackward1 ×6"]
    with tracesql.open(tmp_path / "ds") as d:
        roots = d.tree(depth=0)
        steps = roots.filter(roots["name"].str.starts_with("ProfilerStep#"))
    assert roots.height == 2034 + 1 and steps.height == 6
    assert (steps["kernel_count"].sum(), round(steps["gpu_busy_us"].sum(), 3)) == (5526, 226011.0)


def test_tree_of_a_module_that_does_not_exist_raises(qwen_dataset):
    with tracesql.open(qwen_dataset[0]) as d, pytest.raises(tracesql.EmptySelection, match="no module 'Nope' found"):
        d.tree(module="Nope")
