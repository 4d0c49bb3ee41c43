"""Peer-style rules on cases the shared references do not exercise, on small hand-written Kineto traces
(tests/data/peers/). Each expected value is derived from the peer's own source (file and function named in the
test); docs/peers.md describes the rules."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import tracesql

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DATA = Path(__file__).resolve().parent / "data" / "peers"


def _open(tmp_path_factory, *names: str):
    out = tmp_path_factory.mktemp("peers") / "ds"
    results = tracesql.ingest([str(DATA / n) for n in names], out=out, quiet=True)
    assert all(r.status == "ingested" for r in results), [r.error for r in results]
    return tracesql.open(out), {r.path.rsplit("/", 1)[-1]: r.trace_id for r in results}


@pytest.fixture(scope="module")
def tl(tmp_path_factory):
    d, ids = _open(tmp_path_factory, "tl_upsample_h100.json", "tl_upsample_mi300.json",
                   "tl_sglang_inference_mi300.json")
    yield d, ids
    d.close()


@pytest.fixture(scope="module")
def hta(tmp_path_factory):
    d, ids = _open(tmp_path_factory, "hta_stream_arg_mi300.json")
    yield d, ids["hta_stream_arg_mi300.json"]
    d.close()


def _rows(d, sql: str, tid: str) -> list[tuple]:
    return d.con.execute(sql, [tid]).fetchall()


@pytest.mark.parametrize("trace", ["tl_upsample_h100.json", "tl_upsample_mi300.json"])
def test_tracelens_upsample_is_elementwise(tl, trace):
    """TraceLens/PerfModel/torch_op_mapping.py: upsample_ops (aten::upsample_nearest1d/2d/3d) map to the perf
    model aten_upsample_nearest, whose `category` is "elementwise" (TraceLens/PerfModel/perf_model.py), so
    OP_CATEGORY_REGISTRY gives elementwise before any kernel-name fallback; aten::cat is in no list and its
    kernel (CatArrayBatchedCopy) has none of the fallback words, so it is `other`. Same on a CUDA and a HIP
    launch. ops_summary_by_category: elementwise 2 instances, 16 µs; other 1 instance, 4 µs."""
    d, ids = tl
    tid = ids[trace]
    cats = dict(_rows(d, "SELECT tl_launcher_name, op_category FROM tl_op_category WHERE trace_id = ?", tid))
    assert cats == {"aten::upsample_nearest1d": "elementwise", "aten::upsample_nearest2d": "elementwise",
                    "aten::cat": "other"}
    got = _rows(d, 'SELECT "op category", "Count", total_direct_kernel_time_ms FROM tl_ops_summary_by_category '
                   "WHERE trace_id = ? ORDER BY rank", tid)
    assert got == [("elementwise", 2, pytest.approx(0.016)), ("other", 1, pytest.approx(0.004))]


def test_tracelens_sglang_names_and_inference_categories(tl):
    """The inference report runs with pseudo ops: apply_pseudo_op_extensions first calls
    normalize_sglang_profiler_op_names (TraceLens/Trace2Tree/extensions/pseudo_ops_utils.py), which renames
    cpu_ops `sglang_profiler::<x>_<digits>` to `sglang_profiler::<x>`. The registry
    (get_pseudo_op_mappings / get_pseudo_op_category_only_mappings in
    TraceLens/PerfModel/extensions/pseudo_ops_perf_utils.py, merged into OP_CATEGORY_REGISTRY) then gives:
    the ragged paged attention and sglang::store_cache -> InferenceAttention, aiter::rmsnorm and
    aiter::add_rmsnorm -> RMSNorm, sgl_kernel::rotary_embedding -> RoPE_fwd, sgl_kernel::silu_and_mul ->
    elementwise; aten::mm -> GEMM."""
    d, ids = tl
    tid = ids["tl_sglang_inference_mi300.json"]
    cats = dict(_rows(d, "SELECT DISTINCT tl_launcher_name, op_category FROM tl_op_category WHERE trace_id = ?",
                      tid))
    assert cats == {
        "sglang_profiler::attention_paged_attention_ragged": "InferenceAttention",
        "sglang::store_cache": "InferenceAttention",
        "aiter::rmsnorm": "RMSNorm",
        "aiter::add_rmsnorm": "RMSNorm",
        "sgl_kernel::rotary_embedding": "RoPE_fwd",
        "sgl_kernel::silu_and_mul": "elementwise",
        "aten::mm": "GEMM",
    }
    # kernel_summary's Parent cpu_op is the renamed op too, with the same category
    parents = set(_rows(d, 'SELECT DISTINCT "Parent op category", "Parent cpu_op" FROM tl_kernel_summary '
                           "WHERE trace_id = ?", tid))
    assert ("InferenceAttention", "sglang_profiler::attention_paged_attention_ragged") in parents
    assert not any(p.endswith("_100") for _, p in parents)


def test_tracelens_inference_ops_summary_splits_by_module(tl):
    """get_df_kernel_launchers_summary_module (TraceLens/TreePerf/tree_perf.py) groups launchers by (name,
    parent_module): aten::mm inside Qwen3Attention (one call, 20 µs) and inside Qwen3MLP (two calls, 40 + 25
    µs) are two rows; call_stack_first is the first instance's stack, innermost module first."""
    d, ids = tl
    tid = ids["tl_sglang_inference_mi300.json"]
    got = _rows(d, "SELECT parent_module, total_direct_kernel_time_sum, \"Count\", \"Categories\", call_stack_first "
                   "FROM tl_ops_summary_module WHERE trace_id = ? AND name = 'aten::mm' ORDER BY rank", tid)
    assert got == [
        ("nn.Module: Qwen3MLP", 65.0, 2, "['GEMM']",
         "['aten::mm', 'nn.Module: Qwen3MLP_0', 'nn.Module: Qwen3ForCausalLM_0']"),
        ("nn.Module: Qwen3Attention", 20.0, 1, "['GEMM']",
         "['aten::mm', 'nn.Module: Qwen3Attention_0', 'nn.Module: Qwen3ForCausalLM_0']"),
    ]
    by_cat = _rows(d, 'SELECT "op category", parent_module, "Count" FROM tl_ops_summary_by_category_module '
                      "WHERE trace_id = ? ORDER BY rank", tid)
    assert ("InferenceAttention", "nn.Module: Qwen3Attention", 2) in by_cat
    assert ("RMSNorm", "nn.Module: Qwen3MLP", 1) in by_cat and ("RMSNorm", "nn.Module: Qwen3Attention", 1) in by_cat
    assert all(c != "other" for c, _, _ in by_cat)


@pytest.mark.slow
def test_tracelens_inference_ops_summary_matches_reference(tmp_path_factory, shared_traces, reference_dir):
    """The one shared inference-report reference (vLLM decode under HIP graph replay merged with its capture):
    ops_summary per (name, parent_module), every row and column."""
    out = tmp_path_factory.mktemp("vllm") / "ds"
    results = tracesql.ingest([str(shared_traces / "graphs/vllm_decode_full/graph_execution.json.gz"),
                               str(shared_traces / "graphs/vllm_decode_full/capture_rank0.json.gz")], out=out,
                              quiet=True)
    tid = next(r.trace_id for r in results if r.path.endswith("graph_execution.json.gz"))
    with open(reference_dir / "tracelens/graphs/vllm_decode_full/ops_summary.csv", newline="") as f:
        ref = list(csv.DictReader(f))
    with tracesql.open(out) as d:
        cur = d.con.execute("SELECT * EXCLUDE (trace_id, rank) FROM tl_ops_summary_module WHERE trace_id = ? "
                            "ORDER BY rank", [tid])
        cols = [c[0] for c in cur.description]
        got = cur.fetchall()
    assert cols == list(ref[0].keys())
    assert len(got) == len(ref)
    for r, g in zip(ref, got, strict=True):
        for c, v in zip(cols, g, strict=True):
            if isinstance(v, float):
                assert v == pytest.approx(float(r[c]), rel=1e-12, abs=1e-9), c
            else:
                assert str(v) == r[c], c


def test_hta_stream_arg_events_are_gpu_events(hta):
    """HTA reads `stream` from every event's args (-1 when absent; normalize_gpu_stream_numbers in
    hta/utils/utils.py) and BreakdownAnalysis.get_temporal_breakdown (hta/analyzers/breakdown_analysis.py)
    takes every row with stream != -1 as a GPU event, typed by get_kernel_type (hta/utils/utils.py). So the
    Triton launcher cpu_op [10, 30] (µs from the origin at the ProfilerStep start) with args.stream = 7 is
    COMPUTATION beside its kernel [40, 50]; `Memset (Device)` [60, 65] is MEMORY (^Memset);
    `__amd_rocclr_fillBufferAligned.kd` [70, 74], ROCm's memset kernel, matches none of the memory or
    non-compute patterns: COMPUTATION; `Stream Sync` [80, 86] matches `.*Sync`: OTHER (neither compute nor
    non-compute work of a kind, but a GPU row); the NCCL kernel [90, 100] is COMMUNICATION.
    kernel_time = 100 - 10 = 90; |U(all)| = 20 + 10 + 5 + 4 + 6 + 10 = 55, idle = 35; compute = 20 + 10 + 4 = 34;
    non_compute = 90 - 34 - 35 = 21."""
    d, tid = hta
    got = _rows(d, 'SELECT "idle_time(us)", "compute_time(us)", "non_compute_time(us)", "kernel_time(us)", '
                   "idle_time_pctg, compute_time_pctg, non_compute_time_pctg FROM hta_temporal_breakdown "
                   "WHERE trace_id = ?", tid)
    assert got == [(35.0, 34.0, 21.0, 90.0, 38.89, 37.78, 23.33)]
    types = dict(_rows(d, "SELECT cat || ':' || name, kernel_type FROM _hta_gpu WHERE trace_id = ?", tid))
    assert types == {
        "cpu_op:triton_poi_fused_add_0": "COMPUTATION",
        "kernel:triton_poi_fused_add_0": "COMPUTATION",
        "gpu_memset:Memset (Device)": "MEMORY",
        "kernel:__amd_rocclr_fillBufferAligned.kd": "COMPUTATION",
        "cuda_sync:Stream Sync": "OTHER",
        "kernel:ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)": "COMMUNICATION",
    }


def test_hta_kernel_type_breakdown_and_idle_with_stream_arg_events(hta):
    """get_gpu_kernel_breakdown (the same stream != -1 selection) pieces: COMPUTATION 34, COMMUNICATION 10,
    MEMORY 5 (OTHER is in none of its sets), percentages of 49. get_idle_time_breakdown keeps only the
    kernel / gpu_memcpy / gpu_memset categories of the stream, so neither the cpu_op nor the sync row is
    there: gaps 10 (memset: its launch at 51 started after the previous end at 50, host_wait), 5 (fill
    kernel: launch at 55 before the previous end at 65, gap < 30: kernel_wait), 16 (NCCL: launch at 89 after
    the previous end at 74: host_wait)."""
    d, tid = hta
    got = _rows(d, "SELECT kernel_type, sum, percentage FROM hta_kernel_type_breakdown_by_trace WHERE trace_id = ? "
                   "ORDER BY sum DESC", tid)
    assert got == [("COMPUTATION", 34, 69.4), ("COMMUNICATION", 10, 20.4), ("MEMORY", 5, 10.2)]
    idle = {c: (t, n) for c, t, n in _rows(d, "SELECT idle_category, idle_time, count FROM hta_idle_time_breakdown "
                                              "WHERE trace_id = ?", tid)}
    assert idle["host_wait"] == (26.0, 2) and idle["kernel_wait"] == (5.0, 1)
    assert _rows(d, "SELECT comp_comm_overlap_pctg FROM hta_comm_comp_overlap WHERE trace_id = ?", tid) == [(0.0,)]


def test_tracelens_op_rules_equal_tracelens_registry_entry_by_entry():
    """TraceLens's categorize_torch_op (TraceLens/PerfModel/torch_op_mapping.py,
    _categorize_torch_op_from_registry): an exact lookup of the op name in OP_CATEGORY_REGISTRY, then the
    OP_CATEGORY_PATTERNS by re.match (a prefix), then the first kernel's name. tracelens_op_registry.json is that
    registry and those patterns as TraceLens 0.1.0 builds them: the tracelens op rules give every entry its
    category, hold no exact entry TraceLens lacks, and match the patterns as prefixes only."""
    import duckdb

    from tracesql.store import sqlmodules
    from tracesql.store.schema import empty_table_statements

    src = json.loads((DATA / "tracelens_op_registry.json").read_text())
    reg: dict[str, str] = src["registry"]
    assert len(reg) == 292
    assert src["patterns"] == [["^triton", "triton"], ["^record_param_comms", "record_param_comms"]]
    probes = {"triton_poi_fused_add_0": "triton", "tritonx": "triton", "record_param_comms_x": "record_param_comms",
              "x_triton_poi": None, "aten::mm_": None, "aten::upsample_nearest1d.vec": None, "my_aten::mm": None}
    con = duckdb.connect()
    try:
        for st in empty_table_statements():
            con.execute(st)
        for st in sqlmodules.module_statements(sqlmodules.load_order(["categories/rules"])):
            con.execute(st)
        con.execute("CREATE TEMP TABLE n (name VARCHAR)")
        con.executemany("INSERT INTO n VALUES (?)", [[k] for k in [*reg, *probes]])
        got = dict(con.execute("""
            SELECT n.name, r.category FROM n
            LEFT JOIN category_rules r
              ON r.ruleset = 'tracelens' AND r.applies_to = 'op' AND regexp_matches(n.name, r.pattern)
            QUALIFY row_number() OVER (PARTITION BY n.name
                                       ORDER BY _rule_precedence(r.priority, r.source, r.file, r.line_no)) = 1
            """).fetchall())
        exact = [p for (p,) in con.execute("""SELECT pattern FROM category_rules
                                              WHERE ruleset = 'tracelens' AND applies_to = 'op'
                                                AND pattern LIKE '^%$'""").fetchall()]
    finally:
        con.close()
    assert {n: got[n] for n in reg} == reg
    assert {n: got[n] for n in probes} == probes
    assert len(exact) == len(reg) == 292
    assert got["aten::upsample_nearest1d"] == "elementwise"
    assert got["sglang_profiler::attention_paged_attention_ragged"] == "InferenceAttention"


def test_tracelens_gpu_timeline_buckets_follow_event_category():
    """TraceLens/TreePerf/gpu_event_analyser.py (GPUEventAnalyser): a gpu_memcpy event is memcpy; a *kernel* event
    named like a ROCm 7.1 rocclr copy (TraceEventUtils._ROCM_LEGACY_MEMCPY_NAMES, re.match, anchored at both ends)
    is memcpy and one named like its fill (_ROCM_LEGACY_MEMSET_NAMES) computation; then nccl / rccl /
    cross_device_reduce anywhere in the name (is_communication_string, case-blind) is communication; everything
    else computation. A gpu_memset event never takes the copy bucket."""
    import duckdb

    from tracesql.store import sqlmodules
    from tracesql.store.schema import empty_table_statements

    cases = {
        ("kernel", "__amd_rocclr_copyBuffer.kd"): "memcpy",
        ("kernel", "MEMORY_COPY_DEVICE_TO_HOST"): "memcpy",
        ("kernel", "__amd_rocclr_copyBufferRectAligned"): "memcpy",
        ("kernel", "__amd_rocclr_copyBuffer.kd_rccl"): "communication",
        ("gpu_memset", "__amd_rocclr_copyBuffer.kd"): "computation",
        ("kernel", "__amd_rocclr_fillBufferAligned.kd"): "computation",
        ("kernel", "__amd_rocclr_fillBufferAligned_rccl"): "communication",
        ("gpu_memcpy", "Memcpy DtoD (Device -> Device)"): "memcpy",
        ("gpu_memset", "Memset (Device)"): "computation",
        ("kernel", "void rcclGenericKernel<1>(ncclDevComm*)"): "communication",
        ("kernel", "void vllm::cross_device_reduce_1stage<__hip_bfloat16, 8>"): "communication",
        ("kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"): "communication",
        ("kernel", "Cijk_Ailk_Bljk_BBS_BH_MT64x256x32_MI16x16x16x1"): "computation",
        ("cuda_sync", "Context Sync"): "ignored",
    }
    con = duckdb.connect()
    try:
        for st in empty_table_statements():
            con.execute(st)
        for st in sqlmodules.module_statements(sqlmodules.load_order(["categories/rules"])):
            con.execute(st)
        con.execute("CREATE TEMP TABLE n (cat VARCHAR, name VARCHAR)")
        con.executemany("INSERT INTO n VALUES (?, ?)", [list(k) for k in cases])
        got = {(c, n): k for c, n, k in con.execute("""
            SELECT n.cat, n.name, r.category FROM n
            LEFT JOIN category_rules r
              ON r.ruleset = 'tracelens' AND r.applies_to = 'kernel' AND (r.event_cat IS NULL OR r.event_cat = n.cat)
             AND regexp_matches(n.name, r.pattern)
            QUALIFY row_number() OVER (PARTITION BY n.cat, n.name
                                       ORDER BY _rule_precedence(r.priority, r.source, r.file, r.line_no)) = 1
            """).fetchall()}
    finally:
        con.close()
    assert got == cases
