"""JAX's op layer: the HLO op as the op (op_summary, tree, categories, diff, perf) on the shared JAX traces, XPlane
input, and the typed kernel_details / memcpy_details columns."""
from __future__ import annotations

import csv
import gzip
import io
import json
import subprocess
from collections import defaultdict
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pytest

import tracesql
from tests.conftest import tracesql_cli

DATA = Path(__file__).parent / "data" / "jax"
JSON_TRACES = ["jax/mi300_conv_trace.json.gz", "jax/mi300_gemm_perfetto_trace.json.gz",
               "modern/jax_mi300_attention_trace.json.gz"]


def _nvidia_like(path: Path) -> Path:
    """A JAX trace in the form XLA writes on CUDA: kernel_details with regs / static and dynamic shared memory /
    occupancy, and a GPU memcpy with memcpy_details (one kernel, one copy, their launches)."""
    ev = [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 701, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "X", "pid": 701, "tid": 5, "ts": 10.0, "dur": 2.0, "name": "cuLaunchKernel",
         "args": {"correlation_id": "1", "hlo_module": "jit_f", "hlo_op": "fusion.3"}},
        {"ph": "X", "pid": 701, "tid": 5, "ts": 13.0, "dur": 2.0, "name": "cuMemcpyHtoDAsync_v2",
         "args": {"correlation_id": "2", "memcpy_details": "kind:HtoD size:4096 dest:0 async:1"}},
        {"ph": "X", "pid": 1, "tid": 7, "ts": 20.0, "dur": 3.5, "name": "fusion_3",
         "args": {"correlation_id": "1", "hlo_module": "jit_f", "hlo_op": "fusion.3", "name": "jit(f)/mul",
                  "kernel_details": "regs:32\nstatic_shared:1024\ndynamic_shared:16384\ngrid:2,1,1\nblock:32,1,1\n"
                                    "occ_pct:50.5"}},
        {"ph": "X", "pid": 1, "tid": 8, "ts": 30.0, "dur": 2.048, "name": "MemcpyH2D",
         "args": {"correlation_id": "2", "memcpy_details": "kind:HtoD size:4096 dest:0 async:1"}},
        {},
    ]
    path.write_text(json.dumps({"displayTimeUnit": "ns", "traceEvents": ev}))
    return path


@pytest.fixture(scope="module")
def jax_ds(tmp_path_factory, shared_traces):
    tmp = tmp_path_factory.mktemp("jax")
    files = [str(shared_traces / t) for t in JSON_TRACES] + [
        str(DATA / "mi300_conv.xplane.pb"), str(DATA / "cpu_dot_conv.xplane.pb"), str(_nvidia_like(tmp / "nv.json"))]
    res = tracesql.ingest(files, out=tmp / "ds")
    assert [r.status for r in res] == ["ingested"] * len(files), [r.error for r in res]
    ids = {Path(r.path).name: r.trace_id for r in res}
    d = tracesql.open(tmp / "ds")
    yield d, ids
    d.close()


def q(ds, sql, params=None):
    return ds.con.sql(sql, params=params).fetchall()


def _gpu_events_by_hlo_op(path: Path) -> tuple[dict, int, int]:
    """Independently of tracesql: {(hlo_module, hlo_op): [GPU events, Σ dur ns]} of the /device: processes of a JAX
    JSON trace, their Σ dur ns over all GPU events, and that of the GPU events without hlo_op."""
    with gzip.open(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    ev = doc["traceEvents"]
    dev = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
           and e["args"]["name"].startswith("/device:")}
    ops: dict = defaultdict(lambda: [0, 0])
    total = without = 0
    for e in ev:
        if e.get("ph") != "X" or e.get("pid") not in dev:
            continue
        ns = int((Decimal(e["dur"]) * 1000).to_integral_value(ROUND_HALF_EVEN))  # the nearest ns (docs/ingest.md)
        total += ns
        a = e.get("args", {})
        if "hlo_op" in a:
            ops[(a["hlo_module"], a["hlo_op"])][0] += 1
            ops[(a["hlo_module"], a["hlo_op"])][1] += ns
        else:
            without += ns
    return dict(ops), total, without


@pytest.mark.parametrize("trace", JSON_TRACES)
def test_op_summary_has_every_hlo_op_exactly(jax_ds, shared_traces, trace):
    ds, ids = jax_ds
    tid = ids[Path(trace).name]
    want, total, without = _gpu_events_by_hlo_op(shared_traces / trace)
    got = {(m, o): [n, t] for o, m, n, t in q(
        ds, "SELECT op_name, hlo_module, kernel_count, kernel_time_ns FROM op_summary "
            "WHERE trace_id = $t AND source = 'hlo op'", {"t": tid})}
    assert got == want
    # the rest of the GPU time is the work no instruction launched (argument transfers): placeholders
    rest = q(ds, "SELECT sum(kernel_time_ns), bool_and(source = 'launch api'), sum(kernel_time_ns) FILTER "
                 "(WHERE source <> 'hlo op') FROM op_summary WHERE trace_id = $t", {"t": tid})[0]
    assert rest[0] == total and rest[2] == without
    assert 0.015 < without / total < 0.022  # host-to-device argument copies: 1.7-2.1 % of GPU time


def test_one_call_per_instruction_module_execution_and_device(jax_ds):
    ds, ids = jax_ds
    tid = ids["mi300_conv_trace.json.gz"]
    # 8 devices, 5 executions of jit_forward_3d_conv each; the convolution launches Im3d2Col + a GEMM per call
    # (79 GPU events: one Im3d2Col of one call carries no hlo_op in the trace and is a placeholder's)
    rows = q(ds, "SELECT op_name, op_count, kernel_count FROM op_summary WHERE trace_id = $t AND source = 'hlo op' "
                 "ORDER BY op_name", {"t": tid})
    assert rows == [("cudnn-conv.1", 40, 79), ("input_transpose_fusion", 40, 40),
                    ("input_transpose_fusion.1", 39, 39), ("loop_transpose_fusion", 40, 40)]
    # each execution thread drives one device
    threads = q(ds, "SELECT count(*), count(DISTINCT device), min(launches) FROM _hlo_execution_threads "
                    "WHERE trace_id = $t", {"t": tid})
    assert threads == [(8, 8, 23)]  # device 0 launched 23 of its instructions, the others 25
    # a call's GPU events all come from one execution of one device
    bad = q(ds, "SELECT count(*) FROM (SELECT instance_event_id FROM gpu_event_hlo_ops WHERE trace_id = $t "
                "GROUP BY ALL HAVING count(DISTINCT device) > 1 OR count(DISTINCT exec_event_id) > 1)", {"t": tid})
    assert bad == [(0,)]


def test_xplane_gives_the_op_summary_of_its_json_export(jax_ds):
    ds, ids = jax_ds
    cols = "op_name, hlo_module, framework_op, source, op_count, kernel_count, kernel_time_ns"
    x = q(ds, f"SELECT {cols} FROM op_summary WHERE trace_id = $t ORDER BY ALL", {"t": ids["mi300_conv.xplane.pb"]})
    j = q(ds, f"SELECT {cols} FROM op_summary WHERE trace_id = $t ORDER BY ALL",
          {"t": ids["mi300_conv_trace.json.gz"]})
    assert x == j and len(x) == 7
    # the same kernels and launches; the allocator records JAX's export leaves out are kept as instants
    for table in ("kernels", "launches"):
        n = q(ds, f"SELECT count(*) FILTER (WHERE trace_id = $x), count(*) FILTER (WHERE trace_id = $j) FROM {table}",
              {"x": ids["mi300_conv.xplane.pb"], "j": ids["mi300_conv_trace.json.gz"]})
        assert n[0][0] == n[0][1] > 200
    assert q(ds, "SELECT name, count(*) FROM instants WHERE trace_id = $t GROUP BY ALL ORDER BY 1",
             {"t": ids["mi300_conv.xplane.pb"]}) == [("MemoryAllocation", 115), ("MemoryDeallocation", 115)]


def test_compute_model_of_dots_and_convolutions_by_hand(jax_ds):
    ds, ids = jax_ds
    got = {(m, n): (f, fl, b) for m, n, f, fl, b in q(
        ds, "SELECT hlo_module, name, family, flops, bytes FROM hlo_models WHERE trace_id = $t",
        {"t": ids["cpu_dot_conv.xplane.pb"]})}
    # f32[128,256] x f32[256,64]: 2*128*64*256 FLOPs; bytes (128*256 + 256*64 + 128*64) * 4
    assert got[("jit_matmul", "ynn_fusion")] == ("GEMM", 2 * 128 * 64 * 256, (128 * 256 + 256 * 64 + 128 * 64) * 4)
    # batched: f32[4,32,16] x f32[4,16,8] -> f32[4,32,8]: 2*4*32*8*16
    assert got[("jit_bmm", "ynn_fusion")] == ("GEMM", 2 * 4 * 32 * 8 * 16, (4 * 32 * 16 + 4 * 16 * 8 + 4 * 32 * 8) * 4)
    # NHWC f32[2,16,16,8] * HWIO f32[3,3,8,4], SAME: out f32[2,16,16,4]; each output sums 3*3*8 products
    assert got[("jit_conv", "convolution")] == ("CONV_fwd", 2 * (2 * 16 * 16 * 4) * 3 * 3 * 8,
                                                (2 * 16 * 16 * 8 + 3 * 3 * 8 * 4 + 2 * 16 * 16 * 4) * 4)
    # the real MI300 capture: cudnn-conv.1 (MIOpen) of bf16[1,16,32,60,104] with bf16[5120,16,1,2,2] ->
    # bf16[1,5120,34,31,53]: 2 * 286,013,440 outputs * 16 input features * 1*2*2 window
    out = 1 * 5120 * 34 * 31 * 53
    row = q(ds, "SELECT family, flops, bytes, precision FROM hlo_models WHERE trace_id = $t AND name = 'cudnn-conv.1'",
            {"t": ids["mi300_conv.xplane.pb"]})
    assert row == [("CONV_fwd", 2 * out * 16 * 4, (16 * 32 * 60 * 104 + 5120 * 16 * 4 + out) * 2, "bf16")]
    # perf_ops models each of its 40 calls with its kernels' time
    perf = q(ds, "SELECT count(*), sum(kernel_time_ns), min(flops), any_value(family) FROM perf_ops "
                 "WHERE trace_id = $t AND op_name = 'cudnn-conv.1'", {"t": ids["mi300_conv.xplane.pb"]})
    assert perf == [(40, 12_531_616, 2 * out * 16 * 4, "CONV_fwd")]
    # op_arg_summary: the operands' shapes and types (as TraceLens's JAX report gives input_transpose_fusion's)
    args = q(ds, "SELECT input_dims, input_type FROM op_arg_summary WHERE trace_id = $t "
                 "AND op_name = 'input_transpose_fusion'", {"t": ids["mi300_conv.xplane.pb"]})
    assert args == [("((1, 5120, 34, 31, 53),)", "('bf16',)")]


def test_tree_is_module_execution_hlo_op_kernel(jax_ds):
    ds, ids = jax_ds
    tid = ids["mi300_gemm_perfetto_trace.json.gz"]
    # every GPU event of an HLO op hangs from an 'hlo op' node, that from its module's execution
    rows = q(ds, """SELECT p.kind, gp.kind, p.name = k.hlo_op, gp.name = k.hlo_module, count(*)
                    FROM call_tree g JOIN kernels k ON k.trace_id = g.trace_id AND k.event_id = g.node_id
                    JOIN call_tree p ON p.trace_id = g.trace_id AND p.node_id = g.parent_node_id
                    JOIN call_tree gp ON gp.trace_id = g.trace_id AND gp.node_id = p.parent_node_id
                    WHERE g.trace_id = $t AND g.kind = 'gpu' AND k.hlo_op IS NOT NULL GROUP BY ALL""", {"t": tid})
    assert rows == [("hlo op", "hlo module", True, True, 42)]
    assert q(ds, "SELECT count(*) FROM call_tree WHERE trace_id = $t AND kind = 'hlo op'", {"t": tid}) == \
        q(ds, "SELECT sum(op_count)::BIGINT FROM op_summary WHERE trace_id = $t AND source = 'hlo op'", {"t": tid})
    out = subprocess.run([*tracesql_cli(), "tree", str(ds.path), "--trace", tid, "--op", "custom-call.1", "-f", "csv"],
                         capture_output=True, text=True, check=True).stdout
    starts = [r for r in csv.DictReader(io.StringIO(out)) if r["level"] == "0"]
    assert {(r["kind"], r["name"]) for r in starts} == {("hlo op", "custom-call.1")} and len(starts) == 15


def test_diff_pairs_hlo_ops_by_module_and_name(jax_ds):
    ds, ids = jax_ds
    same = q(ds, "SELECT side, count(*), sum(abs(diff_ns)) FROM diff_ops($a, $b) GROUP BY ALL",
             {"a": ids["mi300_conv_trace.json.gz"], "b": ids["mi300_conv.xplane.pb"]})
    assert same == [("both", 7, 0)]
    rows = q(ds, "SELECT op_name, hlo_module, side FROM diff_ops($a, $b) WHERE op_name = 'custom-call.1' ORDER BY 2",
             {"a": ids["mi300_gemm_perfetto_trace.json.gz"], "b": ids["jax_mi300_attention_trace.json.gz"]})
    assert rows == [("custom-call.1", "jit_dot", "base_only"), ("custom-call.1", "jit_matmul", "variant_only")]


def test_categories_of_hlo_ops(jax_ds):
    ds, ids = jax_ds
    tid = ids["mi300_conv_trace.json.gz"]
    # TraceLens's JAX classes: a kernel name no keyword list matches is classed by its event's hlo_op
    jax_cats = q(ds, "SELECT k.name, k.hlo_op IS NOT NULL, c.kernel_category, count(*) FROM kernels k "
                     "JOIN gpu_event_categories c USING (trace_id, event_id) WHERE c.ruleset = 'jax' "
                     "AND k.trace_id = $t AND k.name = 'Im3d2Col.kd' GROUP BY ALL ORDER BY 2", {"t": tid})
    assert jax_cats == [("Im3d2Col.kd", False, "Uncategorized Events", 1), ("Im3d2Col.kd", True, "Conv", 39)]
    # native op categories: the convolution call is conv by the HLO op rule, the fusions by their kernels
    cats = dict(q(ds, "SELECT cpu_op || ' ' || category_source, any_value(op_category) FROM op_instance_categories "
                      "WHERE trace_id = $t GROUP BY ALL", {"t": tid}))
    assert cats["cudnn-conv.1 op_rule"] == "conv"
    assert cats["input_transpose_fusion kernels"] == "copy"


def test_jax_ruleset_classes_te_buffer_fills_by_their_hlo_op(tmp_path):
    """TraceLens's issue #422 reproducer: the buffer fills inside TE fused-attention custom calls have no TE keyword
    in their name; their hlo_op (te_fused_attn_backward_ffi.12) puts them in TE, as TraceLens's JAX report does."""
    tracesql.ingest([str(DATA / "gfx950_te_fused_attn.xplane.pb")], out=tmp_path / "ds")
    ds = tracesql.open(tmp_path / "ds")
    try:
        rows = q(ds, "SELECT c.kernel_category, bool_and(k.hlo_op LIKE 'te_fused_attn_backward_ffi.%'), count(*) "
                     "FROM kernels k JOIN gpu_event_categories c USING (trace_id, event_id) WHERE c.ruleset = 'jax' "
                     "AND k.name = '__amd_rocclr_fillBufferAligned.kd' GROUP BY ALL")
        assert rows == [("TE", True, 20)]
        # the TE kernels of the forward custom call match by name
        te = q(ds, "SELECT DISTINCT c.kernel_category FROM kernels k JOIN gpu_event_categories c "
                   "USING (trace_id, event_id) WHERE c.ruleset = 'jax' AND k.name LIKE 'transformer_engine::%'")
        assert te == [("TE",)]
        # Triton GEMM fusions and CK attention kernels by their names
        cats = dict(q(ds, "SELECT c.kernel_category, count(*) FROM kernels k JOIN gpu_event_categories c "
                          "USING (trace_id, event_id) WHERE c.ruleset = 'jax' GROUP BY ALL"))
        assert cats["GEMM"] >= 25 and cats["FA BWD"] > 0 and cats["FA FWD"] > 0
    finally:
        ds.close()


def test_kernel_and_memcpy_details_are_typed(jax_ds):
    ds, ids = jax_ds
    rows = q(ds, "SELECT name, registers_per_thread, shared_memory_bytes, est_occupancy_pct, grid_x, block_x, "
                 "copy_kind, bytes, memory_bandwidth_gbps, hlo_op, framework_op FROM kernels WHERE trace_id = $t "
                 "ORDER BY ts_ns", {"t": ids["nv.json"]})
    assert rows == [("fusion_3", 32, 1024 + 16384, 50.5, 2, 32, None, None, None, "fusion.3", "jit(f)/mul"),
                    ("MemcpyH2D", None, None, None, None, None, "HtoD", 4096, 4096 / 2048, None, None)]
    # ROCm: group_mem is the LDS bytes
    amd = q(ds, "SELECT DISTINCT shared_memory_bytes, grid_x, block_x FROM kernels WHERE trace_id = $t "
                "AND name = 'wrapped_transpose.kd'", {"t": ids["jax_mi300_attention_trace.json.gz"]})
    assert amd == [(8192, 2048, 256)]


def test_a_file_that_is_not_an_xplane_fails_in_one_line(tmp_path):
    bad = tmp_path / "run.xplane.pb"
    bad.write_bytes(b"\xff\xff\xff\xff not a protobuf")
    r = subprocess.run([*tracesql_cli(), "ingest", str(bad), "--out", str(tmp_path / "ds")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "not an XPlane file" in r.stderr and "Traceback" not in r.stderr
