"""TraceLens's perf-model sheets (sql/peers/tracelens/perf_*.sql) against every shared TraceLens reference."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import tracesql
from tracesql.api import report
from tracesql.cli.main import main

from .test_tl_ops_unique_args import as_text, read_csv

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

# (reference folder, trace, sheet) for every per-family sheet and unified_perf_summary.csv under
# reference/tracelens/ that --style tracelens reproduces. Left out, with the reason:
#   CMP/unified_perf_summary    the perf report run with --comparison_json_path adds TraceDiff's columns (tree
#                               merge of the two traces), not reproduced: the others are checked in
#                               test_comparison_unified_but_tracediff_columns.
#   graphs/vllm_decode_full/*   TraceLens's inference report (tests/test_tl_perf_infer.py reproduces its GEMM,
#                               UnaryElementwise, RMSNorm_fwd, InferenceAttention_fwd, MoE_unfused_fwd and
#                               unified_perf_summary with --group-by-parent-module). In the
#                               plain layout tested here, the report over the graph replay merged with its capture:
#                               its sheets group by num_kernels too, model the vLLM custom ops of the inference
#                               extension (vllm::rocm_unquantized_gemm ...) and take the capture trace's ops as
#                               their instances; the perf-report layout reproduced here has none of that
#                               (its UnaryElementwise.csv, whose ops run outside the graphs, differs only by
#                               num_kernels: test_graph_replay_unary_elementwise_but_num_kernels).
CMP = "compare/h100_vs_mi300_bert/perf_report_h100_with_comparison_mi300"   # h100's perf report with TraceDiff
SHEET_REFS = [
    (CMP, "nvidia/h100_bert_small_infer.json.gz", "GEMM"),
    (CMP, "nvidia/h100_bert_small_infer.json.gz", "SDPA_fwd"),
    (CMP, "nvidia/h100_bert_small_infer.json.gz", "BinaryElementwise"),
    (CMP, "nvidia/h100_bert_small_infer.json.gz", "Normalization"),
    ("nvidia/h100_qwen_infer", "nvidia/h100_qwen_infer.json.gz", "GEMM"),
    ("nvidia/h100_bert_small_infer", "nvidia/h100_bert_small_infer.json.gz", "GEMM"),
    ("nvidia/h100_falconsai_infer", "nvidia/h100_falconsai_infer.json.gz", "GEMM"),
    ("amd/mi300_qwen_infer", "amd/mi300_qwen_infer.json.gz", "GEMM"),
    ("amd/mi300_bert_small_infer", "amd/mi300_bert_small_infer.json.gz", "GEMM"),
    ("amd/mi300_torch_compile_triton", "amd/mi300_torch_compile_triton.json.gz", "GEMM"),
    ("nvidia/h100_qwen_infer", "nvidia/h100_qwen_infer.json.gz", "SDPA_fwd"),
    ("nvidia/h100_bert_small_infer", "nvidia/h100_bert_small_infer.json.gz", "SDPA_fwd"),
    ("nvidia/h100_falconsai_infer", "nvidia/h100_falconsai_infer.json.gz", "SDPA_fwd"),
    ("amd/mi300_qwen_infer", "amd/mi300_qwen_infer.json.gz", "SDPA_fwd"),
    ("amd/mi300_bert_small_infer", "amd/mi300_bert_small_infer.json.gz", "SDPA_fwd"),
    ("amd/mi300_torch_compile_triton", "amd/mi300_torch_compile_triton.json.gz", "SDPA_fwd"),
    ("nvidia/h100_qwen_infer", "nvidia/h100_qwen_infer.json.gz", "UnaryElementwise"),
    ("amd/mi300_qwen_infer", "amd/mi300_qwen_infer.json.gz", "UnaryElementwise"),
    ("amd/mi300_normalization", "amd/mi300_normalization.json.gz", "UnaryElementwise"),
    ("nvidia/h100_qwen_infer", "nvidia/h100_qwen_infer.json.gz", "BinaryElementwise"),
    ("nvidia/h100_bert_small_infer", "nvidia/h100_bert_small_infer.json.gz", "BinaryElementwise"),
    ("nvidia/h100_falconsai_infer", "nvidia/h100_falconsai_infer.json.gz", "BinaryElementwise"),
    ("amd/mi300_qwen_infer", "amd/mi300_qwen_infer.json.gz", "BinaryElementwise"),
    ("amd/mi300_bert_small_infer", "amd/mi300_bert_small_infer.json.gz", "BinaryElementwise"),
    ("amd/mi300_normalization", "amd/mi300_normalization.json.gz", "BinaryElementwise"),
    ("nvidia/h100_qwen_infer", "nvidia/h100_qwen_infer.json.gz", "Reduce_fwd"),
    ("amd/mi300_qwen_infer", "amd/mi300_qwen_infer.json.gz", "Reduce_fwd"),
    ("amd/mi300_normalization", "amd/mi300_normalization.json.gz", "Reduce_fwd"),
    ("nvidia/h100_bert_small_infer", "nvidia/h100_bert_small_infer.json.gz", "Normalization"),
    ("nvidia/h100_falconsai_infer", "nvidia/h100_falconsai_infer.json.gz", "Normalization"),
    ("amd/mi300_bert_small_infer", "amd/mi300_bert_small_infer.json.gz", "Normalization"),
    ("amd/mi300_normalization", "amd/mi300_normalization.json.gz", "Normalization"),
    ("nvidia/h100_falconsai_infer", "nvidia/h100_falconsai_infer.json.gz", "CONV_fwd"),
    ("nvidia/h100_qwen_infer", "nvidia/h100_qwen_infer.json.gz", "unified_perf_summary"),
    ("nvidia/h100_bert_small_infer", "nvidia/h100_bert_small_infer.json.gz", "unified_perf_summary"),
    ("nvidia/h100_falconsai_infer", "nvidia/h100_falconsai_infer.json.gz", "unified_perf_summary"),
    ("amd/mi300_qwen_infer", "amd/mi300_qwen_infer.json.gz", "unified_perf_summary"),
    ("amd/mi300_bert_small_infer", "amd/mi300_bert_small_infer.json.gz", "unified_perf_summary"),
    ("amd/mi300_normalization", "amd/mi300_normalization.json.gz", "unified_perf_summary"),
    ("amd/mi300_torch_compile_triton", "amd/mi300_torch_compile_triton.json.gz", "unified_perf_summary"),
    ("multirank/dlrm_8rank/rank0", "multirank/dlrm_8rank/rank0.json.gz", "GEMM"),
    ("multirank/dlrm_8rank/rank0", "multirank/dlrm_8rank/rank0.json.gz", "Reduce_fwd"),
    ("multirank/dlrm_8rank/rank0", "multirank/dlrm_8rank/rank0.json.gz", "Reduce_bwd"),
    ("multirank/dlrm_8rank/rank0", "multirank/dlrm_8rank/rank0.json.gz", "unified_perf_summary"),
]
GRAPH = "graphs/vllm_decode_full/graph_execution.json.gz"
# a hand-made training step (tests/data/peers/make_training_step.py): no shared trace records the shapes of a
# backward attention or convolution
TRAINING_STEP = Path(__file__).parent / "data" / "peers" / "training_step.json"
VIEWS = {fname: (view, q) for fname, view, q in report.TRACELENS}
# columns compared as text, character for character; every other column as a number to 1e-6 relative
TEXT = {"name", "op category", "Input Dims", "Input type", "Input Strides", "Concrete Inputs", "kernel_details_summary",
        "perf_params", "has_perf_model", "process_name", "process_label", "thread_name", "process_name_first",
        "process_label_first", "thread_name_first", "Compute Spec",
        "kernel_details__summarize_kernel_stats", "trunc_kernel_details", "Input Dims_first", "Input type_first",
        "Input Strides_first", "Concrete Inputs_first", "entry_point", "call_stack_full"}


def is_text(col: str) -> bool:
    return col in TEXT or col.startswith("param: ")


def close(got, want: str) -> bool:
    if want == "":
        return got is None
    return got is not None and math.isclose(float(got), float(want), rel_tol=1e-6, abs_tol=1e-12)



def assert_sheet_equal(got, want: list[dict], text: frozenset[str] = frozenset()) -> None:
    """A computed sheet against TraceLens's rows (read_csv): the same columns and rows; text columns (is_text, and
    those in ``text``) character for character, every other column as a number to 1e-6 relative."""
    assert got is not None and got.columns == list(want[0])
    assert got.height == len(want)
    for i, (g, w) in enumerate(zip(got.to_dicts(), want, strict=True)):
        for col, wv in w.items():
            if is_text(col) or col in text:
                assert as_text(g[col]) == wv, (i, w["name"], col, g[col], wv)
            else:
                assert close(g[col], wv), (i, w["name"], col, g[col], wv)

@pytest.fixture(scope="module")
def sheets(all_dataset, trace_ids):
    """{(sheet, trace_id): DataFrame or None} for every sheet and reference trace, computed as the report does, on
    the reference traces opened on their own (the sheets are per trace)."""
    ids = sorted({trace_ids[t] for _, t, _ in SHEET_REFS})
    out = {}
    with tracesql.open(all_dataset[0], trace_ids=ids) as d, d.materialized(report.materialized_views("tracelens")):
        for sheet in sorted({s for _, _, s in SHEET_REFS}):  # the shared views computed once, as the report does
            view, q = VIEWS[sheet]
            out.update({(sheet, t): df for t, df in report._peer_section(d, view, q, ids).items()})
    return out


@pytest.mark.parametrize("ref,trace,sheet", SHEET_REFS)
def test_sheet_equals_reference(sheets, trace_ids, reference_dir, ref, trace, sheet):
    want = read_csv(reference_dir / "tracelens" / ref / f"{sheet}.csv")
    got = sheets[sheet, trace_ids[trace]]
    assert_sheet_equal(got, want)


def test_gemm_values(sheets, trace_ids):
    """nvidia/h100_qwen_infer's costliest GEMM shape, worked by hand: aten::mm of (8944 x 1024) by (1024 x 2816),
    bf16, 48 calls, each launching a memset and a cuBLAS kernel."""
    df = sheets["GEMM", trace_ids["nvidia/h100_qwen_infer.json.gz"]]
    top = df.row(0, named=True)
    m, n, k = 8944, 2816, 1024
    assert (top["name"], top["param: M"], top["param: N"], top["param: K"]) == ("aten::mm", str(m), str(n), str(k))
    assert top["param: bias"] == "False" and top["param: dtype_A_B"] == "('c10::BFloat16', 'c10::BFloat16')"
    assert top["GFLOPS_first"] == 2 * m * n * k / 1e9 == 51.581550592
    assert top["Data Moved (MB)_first"] == (m * k + k * n + m * n) * 2 / 2**20 == 71.0078125
    assert top["FLOPS/Byte_first"] == pytest.approx(2 * m * n * k / ((m * k + k * n + m * n) * 2), rel=1e-12)
    assert top["name_count"] == 48 and top["UID_first"] == 215 and top["Compute Spec"] == "matrix_bf16"
    assert top["Kernel Time (µs)_sum"] == 4055.25244140625  # = ops_unique_args' direct time of the same group
    # TFLOPS/s and TB/s are per call, then averaged
    assert top["TFLOPS/s_max"] == pytest.approx(2 * m * n * k / 1e12 / (top["Kernel Time (µs)_min"] / 1e6), rel=1e-12)
    assert top["TB/s_min"] == pytest.approx((m * k + k * n + m * n) * 2 / 1e12 / (top["Kernel Time (µs)_max"] / 1e6),
                                            rel=1e-12)
    assert df["Kernel Time (µs)_sum"].is_sorted(descending=True) and df.height == 5
    # the batched GEMM puts B first in its parameters: the first GEMM of the trace is that bmm, so B leads
    assert df.columns[:5] == ["name", "param: B", "param: M", "param: N", "param: K"]
    bmm = df.filter(df["name"] == "aten::bmm").row(0, named=True)
    assert bmm["param: B"] == "1" and bmm["GFLOPS_first"] == 2 * 32 * 559 * 1 / 1e9
    assert bmm["Compute Spec"] == "matrix_fp32" and bmm["Data Moved (MB)_first"] == (32 + 559 + 32 * 559) * 4 / 2**20


def test_no_sheet_without_modelled_ops(ds, trace_ids):
    """A trace without any GEMM op gets no GEMM sheet (TraceLens writes none); the GPU-only trace has no ops."""
    tid = trace_ids["amd/mi210_gpu_only.json.gz"]
    view, q = VIEWS["GEMM"]
    assert report._peer_section(ds, view, q, [tid]) == {tid: None}


def test_report_writes_gemm_csv(tmp_path, qwen_dataset, reference_dir):
    """`tracesql report --style tracelens --format csv --out` writes GEMM.csv as TraceLens does."""
    out = tmp_path / "tl"
    assert main(["report", str(qwen_dataset[0]), "--style", "tracelens", "--format", "csv", "--out", str(out)]) == 0
    got = read_csv(out / "GEMM.csv")
    want = read_csv(reference_dir / "tracelens" / "nvidia" / "h100_qwen_infer" / "GEMM.csv")
    assert list(got[0]) == list(want[0]) and len(got) == len(want) == 5
    for g, w in zip(got, want, strict=True):
        for col, wv in w.items():
            if is_text(col) or col in ("name_count", "UID_first"):
                assert g[col] == wv, (col, g[col], wv)
            else:
                assert (g[col] == wv == "") or math.isclose(float(g[col]), float(wv), rel_tol=1e-6), (col, g[col], wv)


def test_sdpa_and_elementwise_values(sheets, trace_ids):
    """nvidia/h100_qwen_infer, worked by hand: causal flash attention over 16 x 16 heads x 559 tokens x 64, and
    elementwise ops whose dtypes are not 2 bytes."""
    qwen = trace_ids["nvidia/h100_qwen_infer.json.gz"]
    sdpa = sheets["SDPA_fwd", qwen].row(0, named=True)
    b, h, n, d = 16, 16, 559, 64
    assert (sdpa["param: causal"], sdpa["param: dropout"], sdpa["name_count"]) == ("True", "0.0", 24)
    assert sdpa["GFLOPS_first"] == b * h * (2 * n * n * d) * 2 / 2 / 1e9  # QK^T and PV, halved when causal
    assert sdpa["Data Moved (MB)_first"] == 4 * b * n * h * d * 2 / 2**20 == 69.875  # 2 bytes per element assumed
    unary = sheets["UnaryElementwise", qwen]
    pow_ = unary.filter(unary["name"] == "aten::pow").row(0, named=True)
    assert pow_["param: dtype_in_out"] == "('float', None)" and pow_["param: stride_output"] is None
    assert pow_["Data Moved (MB)_first"] == 16 * 559 * 1024 * (4 + 4) / 2**20 and pow_["Compute Spec"] == "vector_fp32"
    cast = unary.filter((unary["name"] == "aten::copy_")
                        & (unary["param: dtype_in_out"] == "('float', 'c10::BFloat16')")).row(0, named=True)
    assert cast["Data Moved (MB)_first"] == 16 * 559 * 1024 * (4 + 2) / 2**20 == 52.40625
    binary = sheets["BinaryElementwise", qwen]
    bcast = binary.filter(binary["param: shape_in2"] == "(16, 559, 1)").row(0, named=True)
    # a float (16, 559, 1024) times a float (16, 559, 1): both inputs read, the broadcast output written
    assert bcast["GFLOPS_first"] == 16 * 559 * 1024 / 1e9
    assert bcast["Data Moved (MB)_first"] == (16 * 559 * 1024 + 16 * 559 + 16 * 559 * 1024) * 4 / 2**20


def test_reduce_and_norm_values(sheets, trace_ids):
    """TraceLens's reduce and norm models, worked by hand, bugs included: the reduced shape is not read from the
    (string) Concrete Inputs, so a mean over the last dim counts one output element; a norm sheet with a float
    num_channels (group norm backward) prints every num_channels as a float."""
    mean = sheets["Reduce_fwd", trace_ids["nvidia/h100_qwen_infer.json.gz"]].row(0, named=True)
    n = 16 * 559 * 1024
    assert (mean["param: num_input_elems"], mean["param: num_output_elems"]) == (str(n), "1")
    assert mean["Data Moved (MB)_first"] == (n + 1) * 4 / 2**20 and mean["GFLOPS_first"] == n / 1e9
    norm = sheets["Normalization", trace_ids["amd/mi300_normalization.json.gz"]]
    assert set(norm["param: num_channels"].to_list()) == {"16.0", "128.0", "1024.0", "16384.0", "4.0"}
    ln = norm.filter(norm["name"] == "aten::layer_norm").row(0, named=True)
    big_n, c = 8 * 16 * 32 * 32, 16 * 32 * 32  # fp32, affine with bias, training: 2 + 2 + 2 per-channel tensors
    assert ln["GFLOPS_first"] == (3 * c + 3 * big_n + 3 * c + 2 * big_n) / 1e9
    assert ln["Data Moved (MB)_first"] == (2 * big_n * 4 + 6 * c * 4) / 2**20 == 1.375
    rms = norm.filter(norm["name"] == "aten::_fused_rms_norm").row(0, named=True)
    assert rms["GFLOPS_first"] == (big_n / 1024 * (2 * 1024 + 2) + big_n * 2) / 1e9
    bert = sheets["Normalization", trace_ids["nvidia/h100_bert_small_infer.json.gz"]]
    assert bert["param: num_channels"].to_list() == ["512", "512"]  # integers when no row has a float


def test_reduce_bwd_values(sheets, trace_ids):
    """multirank/dlrm_8rank/rank0 (V100, fp32, a training step): its one reduction that autograd links to a
    backward node is the loss's aten::sum over a 0-d tensor (event 1469, sequence number 519); the node,
    `autograd::engine::evaluate_function: SumBackward1` on the backward thread, expands the gradient without a
    kernel. The model's backward FLOPs and bytes are its forward ones: one element read, one written, fp32."""
    tid = trace_ids["multirank/dlrm_8rank/rank0.json.gz"]
    bwd = sheets["Reduce_bwd", tid]
    assert bwd.height == 1
    r = bwd.row(0, named=True)
    assert (r["name"], r["UID_first"], r["name_count"]) == ("aten::sum", 1469, 1)
    assert (r["param: num_input_elems"], r["param: num_output_elems"]) == ("1", "1")
    assert r["GFLOPS_first"] == 1 / 1e9 and r["Data Moved (MB)_first"] == (1 * 4 + 1 * 4) / 2**20
    assert r["Kernel Time (µs)_sum"] == 0 and r["TB/s_mean"] is None
    assert r["kernel_details__summarize_kernel_stats"] == "[]"
    # the forward sheet has the same reduction with its own (forward) kernel time
    fwd = sheets["Reduce_fwd", tid]
    assert fwd.height == 10 and fwd["Kernel Time (µs)_sum"].sum() > 0


def test_kernel_stats_of_integer_times(sheets, trace_ids):
    """The DLRM trace writes ts and dur as integer µs (older Kineto): TraceLens's numpy sums, minima and maxima
    of those Python ints print as np.int64, means, medians and deviations as np.float64."""
    top = sheets["GEMM", trace_ids["multirank/dlrm_8rank/rank0.json.gz"]].row(0, named=True)
    assert (top["name"], top["param: M"], top["param: N"], top["param: K"]) == ("aten::mm", "16", "512", "512")
    assert top["kernel_details__summarize_kernel_stats"].endswith(
        "'stream': 7, 'count': 1, 'total_duration_us': np.int64(19), 'mean_duration_us': np.float64(19.0), "
        "'median_duration_us': np.float64(19.0), 'std_dev_duration_us': np.float64(0.0), "
        "'min_duration_us': np.int64(19), 'max_duration_us': np.int64(19)}]")
    qwen = sheets["GEMM", trace_ids["nvidia/h100_qwen_infer.json.gz"]].row(0, named=True)
    assert "np.int64" not in qwen["kernel_details__summarize_kernel_stats"]


def test_conv_values(sheets, trace_ids):
    """The ViT patch embedding of nvidia/h100_falconsai_infer, worked by hand: (4, 3, 224, 224) by a (768, 3, 16, 16)
    filter, stride 16, bf16; TraceLens counts no bias (aten::convolution records nine operands, not three)."""
    conv = sheets["CONV_fwd", trace_ids["nvidia/h100_falconsai_infer.json.gz"]].row(0, named=True)
    out = 4 * 768 * 14 * 14
    assert (conv["param: convNd"], conv["param: stride"], conv["param: bias"]) == ("conv2d", "(16, 16)", "False")
    assert conv["GFLOPS_first"] == 2 * 3 * 16 * 16 * out / 1e9
    assert conv["Data Moved (MB)_first"] == (4 * 3 * 224 * 224 + 768 * 3 * 16 * 16 + out) * 2 / 2**20 == 3.421875


def test_unified_values(sheets, trace_ids):
    """unified_perf_summary of nvidia/h100_qwen_infer: modelled ops with their metrics and parameters, launchers
    without a model with their kernel time only; percentages of the total kernel time."""
    df = sheets["unified_perf_summary", trace_ids["nvidia/h100_qwen_infer.json.gz"]]
    assert df.height == 35
    top = df.row(0, named=True)
    assert (top["name"], top["op category"], top["operation_count"], top["ex_UID"]) == ("aten::mm", "GEMM", 48, 215)
    assert top["perf_params"] == ("{'M': 8944, 'N': 2816, 'K': 1024, 'bias': False, 'stride_A': (1024, 1), "
                                  "'stride_B': (1, 1024), 'dtype_A_B': ('c10::BFloat16', 'c10::BFloat16'), 'B': 1}")
    assert top["Kernel Time (µs)_sum"] == 4055.25244140625 and top["GFLOPS"] == 51.581550592
    assert top["total_duration_us"] == pytest.approx(1795.421, rel=1e-12)  # the ops' CPU time
    cat = df.filter(df["name"] == "aten::cat").row(0, named=True)
    assert (cat["has_perf_model"], cat["op category"], cat["GFLOPS"], cat["perf_params"]) \
        == ("False", "other", None, None)
    assert df["Percentage (%)"].sum() == pytest.approx(100, rel=1e-12)
    mean = df.filter(df["name"] == "aten::mean").row(0, named=True)
    assert mean["perf_params"] == ("{'num_input_elems': 9158656, 'num_output_elems': 1, "
                                   "'dtype_in_out': ('float', None), 'reduce_type': 'mean'}")


def test_unified_synthetic_op(sheets, trace_ids, ds):
    """amd/mi300_normalization: a kernel that no collected op covers (launched by aten::mse_loss, which has an
    aten op with GPU work below it) becomes a synthetic op named after its parent, with an id past the file's last
    event."""
    tid = trace_ids["amd/mi300_normalization.json.gz"]
    df = sheets["unified_perf_summary", tid]
    synth = df.filter(df["name"].str.ends_with("(Synthetic Op)"))
    assert synth.height == 1
    row = synth.row(0, named=True)
    assert row["name"].startswith("aten::mse_loss->void at::native::vectorized_elementwise_kernel")
    assert (row["op category"], row["operation_count"], row["has_perf_model"]) == ("elementwise", 3, "False")
    events = ds.con.sql("SELECT events_read FROM traces WHERE trace_id = ?", params=[tid]).fetchall()[0][0]
    assert row["ex_UID"] == events == 8500


# (each triton_* op runs once: its std columns are empty on both sides)
def test_unified_inductor_kernels(sheets, trace_ids):
    """The torch.compile Triton ops of amd/mi300_torch_compile_triton, worked by hand from TraceLens's
    TritonCompiledPerfModel: the fused ops read from the kernel name against torch's op names ('_unsafe_view' is
    one op, not 'unsafe' and 'view'), xnumel (and rnumel for a reduction) from the integer Concrete Inputs, FLOPs
    per element summed over the ops, bytes over the sized tensor args (+ the output for a pointwise kernel)."""
    df = sheets["unified_perf_summary", trace_ids["amd/mi300_torch_compile_triton.json.gz"]]
    poi = df.filter(df["name"] == "triton_poi_fused__unsafe_view_mul_silu_2").row(0, named=True)
    x = 268435456  # = 8 x 4096 x 8192
    assert poi["perf_params"] == ("{'fused_ops': 'aten._unsafe_view, aten.mul, aten.silu', 'xnumel': 268435456, "
                                  "'rnumel': 1}")
    assert poi["GFLOPS"] == (0 + 1 + 4) * x / 1e9  # _unsafe_view 0, mul 1, silu 4
    assert poi["Data Moved (MB)"] == (x * 2 + 32768 * 8192 * 2 + x * 2) / 2**20 == 1536.0  # bf16 in, in, out
    assert poi["Compute Spec"] == "vector_bfloat16" and poi["has_perf_model"] == "True"
    red = df.filter(df["name"] == "triton_red_fused_add_mean_mul_pow_rsqrt_0").row(0, named=True)
    assert red["GFLOPS"] == (1 + 1 + 1 + 2 + 2) * 32768 * 2048 / 1e9  # add, mean, mul, pow, rsqrt over x·r
    assert red["Data Moved (MB)"] == (2 * 8 * 4096 * 2048 + 2048) * 2 / 2**20  # no output term for a reduction


def test_graph_replay_unary_elementwise_but_num_kernels(ds, trace_ids, reference_dir):
    """graphs/vllm_decode_full's UnaryElementwise.csv (kept out of SHEET_REFS: TraceLens's inference report, which
    also groups by num_kernels): the perf-report layout has the same rows and values, without that column."""
    tid = trace_ids[GRAPH]
    view, q = VIEWS["UnaryElementwise"]
    got = report._peer_section(ds, view, q, [tid])[tid]
    want = read_csv(reference_dir / "tracelens" / "graphs/vllm_decode_full" / "UnaryElementwise.csv")
    assert got is not None and got.columns == [c for c in want[0] if c != "num_kernels"]
    assert got.height == len(want) == 7 and {w["num_kernels"] for w in want} == {"1"}
    for g, w in zip(got.to_dicts(), want, strict=True):
        for col in got.columns:
            assert (as_text(g[col]) == w[col]) if is_text(col) else close(g[col], w[col]), (w["name"], col)


@pytest.fixture(scope="module")
def training(tmp_path_factory):
    """{sheet: DataFrame or None} of the hand-made training step, computed as the report does."""
    out = tmp_path_factory.mktemp("training") / "ds"
    (r,) = tracesql.ingest([str(TRAINING_STEP)], out=out, quiet=True)
    tid = r.trace_id
    assert r.status == "ingested" and tid is not None
    with tracesql.open(out) as d:
        return {sheet: report._peer_section(d, *VIEWS[sheet], [tid])[tid]
                for sheet in ("SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd", "Reduce_fwd", "Reduce_bwd")}


def test_sdpa_bwd_hand_computed(training):
    """Causal flash attention, bf16, B 2 x H 8 x N 256 x d 64 (sequence number 10): autograd's node
    ScaledDotProductFlashAttentionBackward0 links to the innermost forward op with that number
    (aten::_scaled_dot_product_flash_attention starts after aten::scaled_dot_product_attention) and launches three
    kernels of 5, 80.5 and 3 µs. TraceLens's SDPA.flops_bwd_func: the recomputed QK^T, dV, dP, dQ and dK, five
    products of 2·B·H·N·N·d (no GQA term: H_Q = H_KV), halved when causal; bytes_bwd_func: q, k, v, dO read and
    dQ, dK, dV written, 2 bytes each."""
    r = training["SDPA_bwd"].row(0, named=True)
    b, h, n, d = 2, 8, 256, 64
    assert training["SDPA_bwd"].height == 1 and training["SDPA_bwd"].columns == training["SDPA_fwd"].columns
    assert (r["name"], r["UID_first"], r["param: causal"], r["param: flash_impl"]) == (
        "aten::_scaled_dot_product_flash_attention", 2, "True", "True")
    assert r["GFLOPS_first"] == 5 * (b * h * 2 * n * n * d) / 2 / 1e9 == 0.33554432
    assert r["Data Moved (MB)_first"] == 7 * (b * n * h * d) * 2 / 2**20 == 3.5
    assert r["Kernel Time (µs)_sum"] == 5 + 80.5 + 3
    assert r["TFLOPS/s_mean"] == pytest.approx(0.33554432 / 1e3 / (88.5 / 1e6), rel=1e-12)
    assert r["kernel_details__summarize_kernel_stats"].count("'count': 1") == 3
    # the forward sheet keeps the forward numbers and the forward kernel (40.25 µs)
    f = training["SDPA_fwd"].row(0, named=True)
    assert f["GFLOPS_first"] == 2 * (b * h * 2 * n * n * d) / 2 / 1e9 and f["Kernel Time (µs)_sum"] == 40.25


def test_conv_bwd_hand_computed(training):
    """aten::convolution_backward of a fp32 (8, 3, 32, 32) input and (16, 3, 3, 3) filter, stride 1, padding 1
    (output (8, 16, 32, 32)), three kernels of 4, 20.5 and 30.25 µs. TraceLens models it as an op of its own
    (aten_conv_bwd: CONV.flops_bwd_func, bytes_bwd_func) and moves its row from the forward summary to
    CONV_bwd.csv; the recorded bias_sizes is an int list, so Input Dims[3] is [] and the bias param prints '[]'
    and is not counted."""
    r = training["CONV_bwd"].row(0, named=True)
    x, w, y = 8 * 3 * 32 * 32, 16 * 3 * 3 * 3, 8 * 16 * 32 * 32
    assert training["CONV_bwd"].height == 1 and training["CONV_bwd"].columns == training["CONV_fwd"].columns
    assert (r["name"], r["UID_first"], r["param: bias"], r["param: input_shape"]) == (
        "aten::convolution_backward", 30, "[]", "(8, 3, 32, 32)")
    input_grad = 2 * (3 * 3 * 3) * y  # 2·prod(filter[1:]) per output element
    weight_grad = 2 * 8 * (32 * 32) * w  # 2·N·prod(output spatial) per filter element
    assert r["GFLOPS_first"] == (input_grad + weight_grad) / 1e9 == 0.014155776
    assert r["Data Moved (MB)_first"] == 2 * (y + w + x) * 4 / 2**20
    assert r["Kernel Time (µs)_sum"] == 4 + 20.5 + 30.25 and r["Compute Spec"] == "matrix_fp32"
    # the forward sheet has only the forward op, measured by its own kernel; the forward op (its backward node
    # linked to the innermost aten::cudnn_convolution) never reaches CONV_bwd
    assert training["CONV_fwd"]["name"].to_list() == ["aten::convolution"]
    assert training["CONV_fwd"]["Kernel Time (µs)_sum"].to_list() == [12.5]


def test_reduce_bwd_hand_computed(training):
    """aten::sum over dim 1 of a fp32 (8, 16, 32, 32) tensor: its backward node SumBackward1 launches one 3.5 µs
    copy kernel; FLOPs and bytes as forward (the dim, recorded as a string, is not read: one output element)."""
    r = training["Reduce_bwd"].row(0, named=True)
    n = 8 * 16 * 32 * 32
    assert (r["name"], r["param: num_input_elems"], r["param: num_output_elems"]) == ("aten::sum", str(n), "1")
    assert r["GFLOPS_first"] == n / 1e9 and r["Data Moved (MB)_first"] == (n + 1) * 4 / 2**20
    assert r["Kernel Time (µs)_sum"] == 3.5
    assert training["Reduce_fwd"].row(0, named=True)["Kernel Time (µs)_sum"] == 6.0


def test_report_writes_backward_sheets(tmp_path):
    """`tracesql report --style tracelens --format csv --out` writes the backward sheets of a training trace."""
    ds_dir, out = tmp_path / "ds", tmp_path / "tl"
    assert main(["ingest", str(TRAINING_STEP), "--out", str(ds_dir)]) == 0
    assert main(["report", str(ds_dir), "--style", "tracelens", "--format", "csv", "--out", str(out)]) == 0
    for sheet, name, gflops in [("SDPA_bwd", "aten::_scaled_dot_product_flash_attention", "0.33554432"),
                                ("CONV_bwd", "aten::convolution_backward", "0.014155776"),
                                ("Reduce_bwd", "aten::sum", "0.000131072")]:
        (row,) = read_csv(out / f"{sheet}.csv")
        assert (row["name"], row["GFLOPS_first"]) == (name, gflops)


# the columns TraceLens's perf report adds to unified_perf_summary from TraceDiff when given --comparison_json_path
# (Reporting/tracediff_comparison_extension.py): not reproduced
TRACEDIFF_COLUMNS = ["speedup (trace2/trace1)", "delta_us (trace2 - trace1)", "lca_count_trace2", "lca_id", "lca_name",
                     "lca_total_kernel_time_trace1_us", "lca_total_kernel_time_trace2_us"]


def test_comparison_unified_but_tracediff_columns(sheets, trace_ids, reference_dir):
    """The perf report of h100_bert_small_infer run against mi300_bert_small_infer: its unified_perf_summary.csv is
    the trace's own, row for row, plus TraceDiff's seven columns."""
    want = read_csv(reference_dir / "tracelens" / CMP / "unified_perf_summary.csv")
    assert [c for c in want[0] if c in TRACEDIFF_COLUMNS] == TRACEDIFF_COLUMNS
    got = sheets["unified_perf_summary", trace_ids["nvidia/h100_bert_small_infer.json.gz"]]
    assert len(want) == got.height == 16
    assert_sheet_equal(got, [{k: v for k, v in w.items() if k not in TRACEDIFF_COLUMNS} for w in want])
