"""TraceLens's inference report's perf-model sheets (sql/peers/tracelens/perf_infer.sql) against the
graphs/vllm_decode_full reference: a vLLM decode step replayed as one HIP graph, merged with its capture trace."""
from __future__ import annotations

import pytest

import tracesql
from tracesql.api import report
from tracesql.cli.main import main
from tracesql.store.dataset import materialize

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

REF = "graphs/vllm_decode_full"
# the inference report's sheets reproduced here: (file, view)
SHEETS = [("GEMM", "tl_perf_infer_gemm"), ("UnaryElementwise", "tl_perf_infer_unary_elementwise"),
          ("RMSNorm_fwd", "tl_perf_infer_rmsnorm_fwd"), ("InferenceAttention_fwd", "tl_perf_infer_attention_fwd"),
          ("MoE_unfused_fwd", "tl_perf_infer_moe_unfused_fwd"),
          ("unified_perf_summary", "tl_perf_infer_unified_perf_summary")]
QUERY = "SELECT * EXCLUDE (rank) FROM {v} WHERE trace_id IN {ids} ORDER BY trace_id, rank"


@pytest.fixture(scope="module")
def graph_ds(tmp_path_factory, shared_traces):
    """The replay and its capture trace ingested together: (Dataset, replay trace_id, capture trace_id)."""
    out = tmp_path_factory.mktemp("graph") / "ds"
    res = tracesql.ingest([str(shared_traces / REF / f) for f in ("graph_execution.json.gz", "capture_rank0.json.gz")],
                          out=out, quiet=True)
    assert [r.status for r in res] == ["ingested", "ingested"]
    d = tracesql.open(out)
    yield d, res[0].trace_id, res[1].trace_id
    d.close()


@pytest.fixture(scope="module")
def sheets(graph_ds):
    d, tid, _ = graph_ds
    # as the report does: the shared views materialized first (over both traces: the replay reads its capture)
    materialize(d, report.materialized_views("tracelens") + report.materialized("report-tracelens-inference"))
    return {f: report._peer_section(d, view, QUERY, [tid])[tid] for f, view in SHEETS}


@pytest.mark.parametrize("sheet", [f for f, _ in SHEETS])
def test_sheet_equals_reference(sheets, reference_dir, sheet):
    """Every row and column of TraceLens's sheet, UID_first included: numbers to 1e-6, texts exact."""
    want = read_csv(reference_dir / "tracelens" / REF / f"{sheet}.csv")
    got = sheets[sheet]
    assert_sheet_equal(got, want)


def test_gemm_values(sheets):
    """The LM head of the decode step, worked by hand: vllm::rocm_unquantized_gemm of x (32 x 2880) by the weight
    (201088 x 2880), bf16, no bias, in the replay trace itself (id 91, its index in traceEvents), and the
    aten::mm it calls; the layers' GEMMs come from the capture trace, 24 calls each, one kernel per call."""
    df = sheets["GEMM"]
    assert df.height == 8 and set(df["num_kernels"].to_list()) == {1}
    m, n, k = 32, 201088, 2880
    head = df.filter((df["name"] == "vllm::rocm_unquantized_gemm") & (df["param: N"] == str(n))).row(0, named=True)
    assert (head["param: M"], head["param: K"], head["param: bias"]) == (str(m), str(k), "False")
    assert head["param: dtype_A_B"] == "('c10::BFloat16', 'c10::BFloat16', '')"
    assert head["param: stride_A"] is None and head["param: transpose"] == "(True, False)"
    assert head["GFLOPS_first"] == 2 * m * n * k / 1e9
    assert head["Data Moved (MB)_first"] == (m * k + k * n + m * n) * 2 / 2**20 == 1117.05859375
    assert (head["name_count"], head["UID_first"]) == (1, 91)
    assert head["Kernel Time (µs)_sum"] == 276.677734375
    mm = df.filter(df["name"] == "aten::mm").row(0, named=True)
    assert (mm["UID_first"], mm["GFLOPS_first"], mm["param: stride_B"]) == (99, head["GFLOPS_first"], "(1, 2880)")
    # with bias: + M·N FLOPs and N bias elements read (2880 -> 5120 projection, 24 layers)
    qkv = df.filter((df["name"] == "vllm::rocm_unquantized_gemm") & (df["param: N"] == "5120")).row(0, named=True)
    assert qkv["GFLOPS_first"] == (2 * 32 * 5120 * 2880 + 32 * 5120) / 1e9
    assert qkv["Data Moved (MB)_first"] == (32 * 2880 + 2880 * 5120 + 32 * 5120 + 5120) * 2 / 2**20
    assert (qkv["name_count"], qkv["UID_first"]) == (24, 2361)


def test_norm_and_attention_values(sheets):
    """aiter's fused residual add + RMSNorm over (32, 2880) bf16, and vLLM's attention of 32 decode requests
    reading 55,086 cached tokens (the chunk statistics of the step's annotation): 64 query heads, 8 KV heads,
    head dim 64. Half the layers launch two kernels (num_kernels 2), half one."""
    n, c = 32 * 2880, 2880
    norm = sheets["RMSNorm_fwd"].row(0, named=True)
    assert (norm["name"], norm["param: num_channels"], norm["num_kernels"]) == \
        ("aiter::rmsnorm2d_fwd_with_add_ck", "2880", 1)
    assert norm["GFLOPS_first"] == pytest.approx((n + n / c * (2 * c + 2) + 2 * n) / 1e9, rel=1e-15)
    assert norm["Data Moved (MB)_first"] == (4 * n + c) * 2 / 2**20
    att = sheets["InferenceAttention_fwd"]
    assert att["num_kernels"].to_list() == [2, 1] and att["name_count"].to_list() == [12, 12]
    row = att.row(0, named=True)
    assert (row["param: g_sq"], row["param: g_sk"], row["param: c_sq"]) == ("32", "55086", "0")
    h_q, h_kv, d, g_sq, g_sk = 64, 8, 64, 32, 55086
    assert row["GFLOPS_first"] == h_q * (2 * g_sk * d) * 2 / 1e9
    assert row["Data Moved (MB)_first"] == \
        (g_sq * (h_q * d * 2 + h_kv * d * 2) + (g_sk - g_sq) * h_kv * d * 2) * 2 / 2**20 == 108.08984375
    assert row["Compute Spec"] == "matrix_bf16"


def test_capture_ids(graph_ds):
    """TraceLens numbers the merged capture events after the replay trace's 1,993 events: the capture window's
    root, then the 125,785 events of its subtree by start."""
    d, tid, cap = graph_ds
    n, lo, hi = d.con.sql("SELECT count(*), min(uid), max(uid) FROM _tl_infer_capture_events WHERE trace_id = ?",
                          params=[tid]).fetchall()[0]
    assert d.con.sql("SELECT events_read FROM traces WHERE trace_id = ?", params=[tid]).fetchall()[0][0] == 1993
    assert (n, lo, hi) == (125785, 1994, 1993 + 125785)
    rms = d.con.sql("SELECT min(uid) FROM _tl_infer_capture_events WHERE trace_id = ? AND name = 'aiter::rms_norm'",
                    params=[tid]).fetchall()[0][0]
    assert rms == 2340


def test_report_writes_inference_sheets(graph_ds, tmp_path, reference_dir):
    """`report --style tracelens --group-by-parent-module` (TraceLens's inference report) writes the five sheets
    as TraceLens does, and ops_summary and ops_summary_by_category per parent nn.Module with TraceLens's columns in
    its order (the graph replay merged with its capture trace). (The plain perf report of the pair keeps its
    layout: tests/test_archive.py.)"""
    d, _, _ = graph_ds
    out = tmp_path / "infer"
    # the reference was made with --enable_pseudo_ops (its MoE_unfused_fwd.csv holds pseudo ops)
    assert main(["report", str(d.path), "--style", "tracelens", "--group-by-parent-module", "--pseudo-ops",
                 "--format", "csv", "--out", str(out)]) == 0
    for sheet, _ in SHEETS:
        got = read_csv(out / "graph_execution" / f"{sheet}.csv")
        want = read_csv(reference_dir / "tracelens" / REF / f"{sheet}.csv")
        assert list(got[0]) == list(want[0]) and len(got) == len(want), sheet
        for g, w in zip(got, want, strict=True):
            assert g["name"] == w["name"] and g.get("num_kernels") == w.get("num_kernels")
            assert g.get("UID_first", g.get("ex_UID")) == w.get("UID_first", w.get("ex_UID"))
    ref = reference_dir / "tracelens" / REF
    for name, text_cols in [("ops_summary", ["name", "parent_module", "Count", "Categories", "call_stack_first"]),
                            ("ops_summary_by_category", ["op category", "parent_module", "Count", "call_stack_first"])]:
        got, want = read_csv(out / "graph_execution" / f"{name}.csv"), read_csv(ref / f"{name}.csv")
        assert list(got[0]) == list(want[0]), name
        assert len(got) == len(want), name
        for g, w in zip(got, want, strict=True):
            assert [g[c] for c in text_cols] == [w[c] for c in text_cols], name
            for c in w:
                if c not in text_cols:
                    assert float(g[c]) == pytest.approx(float(w[c]), rel=1e-9, abs=1e-9), (name, c)
    ops = read_csv(out / "graph_execution" / "ops_summary.csv")
    assert len(ops) == 16 and ops[0]["name"] == "vllm::moe_forward"
    assert (ops[0]["parent_module"], ops[0]["Count"]) == ("nn.Module: GraphModule", "24")
    assert [(r["name"], r["parent_module"]) for r in ops if r["name"] == "aten::mm"] == \
        [("aten::mm", "nn.Module: LogitsProcessor")]


def test_moe_pseudo_ops(sheets):
    """gpt-oss's unfused MoE, worked by hand: each vllm::moe_forward (24 layers) runs two matmul_ogs kernels, the
    first (gated, swiglu) becomes the up pseudo op, the second the down one; 32 tokens of hidden size 3072,
    32 experts, top 4, bf16 activations and MXFP4 weights (half a byte). TraceLens numbers the pseudo ops after
    the merged tree's 1,993 + 1 + 125,785 events: up, down and the finalize scatter per moe_forward."""
    df = sheets["MoE_unfused_fwd"]
    assert df["name"].to_list() == ["pseudo_op::moe_triton_unfused_down", "pseudo_op::moe_triton_unfused_up"]
    down, up = df.row(0, named=True), df.row(1, named=True)
    assert (up["UID_first"], down["UID_first"]) == (127779, 127780)
    assert (up["param: gated"], down["param: gated"], up["param: weight_dtype"]) == ("True", "False", "FP4")
    assert (up["name_count"], up["num_kernels"], up["Compute Spec"]) == (24, 1, "matrix_fp4")
    m, k, e, topk = 32, 3072, 32, 4
    assert up["GFLOPS_first"] == 2 * m * k * k * topk * 2 / 1e9 and down["GFLOPS_first"] == 2 * m * k * k * topk / 1e9
    e_active = e * (1 - ((e - topk) / e) ** m)
    assert up["Data Moved (MB)_first"] == pytest.approx(
        (m * k * 2 + e_active * 2 * k * k * 0.5 + m * k * topk * 2) / 2**20, rel=1e-12)
    assert down["Data Moved (MB)_first"] == pytest.approx(
        (m * k * topk * 2 + e_active * k * k * 0.5 + m * k * 2) / 2**20, rel=1e-12)


def test_unified_rows_and_call_stacks(sheets):
    """The inference report's unified table, worked by hand on the merged tree: the capture ops take their
    graph launch's CPU duration (506.768 µs, 24 layers: 12,162.432 µs in all); a pseudo op has none (0.0, no
    mean); its call stack is the way to the pseudo op followed by the whole way to its kernel's launch (the
    pseudo op is not on it); the LM head's GEMM is entered from rocm_unquantized_gemm_impl (inward match on
    the op name's part after '::'), the pseudo op from Triton's launcher frame (outward, past the driver's
    wrapper frame); the gather kernel of aten::index, under no collected op, is a synthetic op numbered after
    the 72 pseudo ops."""
    df = sheets["unified_perf_summary"]
    assert df.height == 27
    rows = {(r["name"], r["ex_UID"]): r for r in df.iter_rows(named=True)}
    attn = rows[("vllm::unified_attention_with_output", 2534)]
    assert (attn["operation_count"], attn["mean_duration_us"]) == (24, 506.768)
    assert attn["total_duration_us"] == pytest.approx(24 * 506.768, rel=1e-15)
    assert attn["entry_point"] == \
        "vllm/model_executor/layers/attention/attention.py(685): unified_attention_with_output"
    down = rows[("pseudo_op::moe_triton_unfused_down", 127780)]
    assert (down["op category"], down["total_duration_us"], down["mean_duration_us"]) == ("MoE_unfused", 0.0, None)
    stack = eval(down["call_stack_full"])  # a Python list literal, as TraceLens writes it
    i = stack.index("pseudo_op::moe_triton_unfused_down")
    assert stack[:i] == stack[i + 1:-1] and stack[-1] == "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1"
    assert stack[i - 1] == "triton/backends/amd/driver.py(634): __call__"
    assert down["entry_point"] == "triton/runtime/jit.py(574): run"
    head = rows[("vllm::rocm_unquantized_gemm", 91)]
    assert head["entry_point"] == "vllm/model_executor/layers/utils.py(122): rocm_unquantized_gemm_impl"
    assert eval(head["call_stack_full"])[-4:-1] == ["aten::linear", "aten::matmul", "aten::mm"]
    gather = df.filter(df["name"].str.starts_with("aten::index->")).row(0, named=True)
    assert (gather["ex_UID"], gather["entry_point"]) == (1993 + 1 + 125785 + 72, "Not found")
    sort = rows[("SortTokens", 3912)]
    assert [x for x in eval(sort["call_stack_full"]) if isinstance(x, list)][-1][-1] == "_combined_routing_compute"
