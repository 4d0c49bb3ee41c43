"""TraceLens's MoE op models (sql/peers/tracelens/perf_moe.sql): aiter's CK and CK-tile two-stage MoE GEMMs, SGLang's
Triton MoE GEMM (MoE_unfused_fwd) and the MoE routing / sorting / shared-expert ops (MoE_aux_fwd), one or two calls
each on a hand-made trace (tests/data/tl_moe/), against TraceLens's own CSVs for that trace: its perf report and its
inference report (pseudo ops on, grouped by parent module and number of kernels)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tracesql.cli import main

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DATA = Path(__file__).parent / "data" / "tl_moe"
INV = "sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel"


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    """The hand-made trace ingested."""
    tmp = tmp_path_factory.mktemp("tl_moe")
    assert main(["ingest", "-q", str(DATA / "moe_ops.json"), "--out", str(tmp / "ds")]) == 0
    return tmp / "ds"


@pytest.fixture(scope="module")
def out(tl_handmade_perf):
    """The folder of `tracesql report --style tracelens --out` (TraceLens's perf report)."""
    return tl_handmade_perf / "moe_ops"


@pytest.fixture(scope="module")
def infer(tl_handmade_infer):
    """The folder of the TraceLens-style inference report (pseudo ops on, grouped by parent module)."""
    return tl_handmade_infer / "moe_ops"


def rows_of(folder: Path, sheet: str) -> list[dict]:
    return read_csv(folder / f"{sheet}.csv")


@pytest.mark.parametrize("sheet", ["MoE_unfused_fwd", "MoE_aux_fwd", "unified_perf_summary", "ops_summary_by_category"])
def test_sheet_equals_tracelens(out, sheet):
    """Every row and column of TraceLens 0.1.0's perf report file for the same trace (tests/data/tl_moe/README.md)."""
    import polars as pl

    want = read_csv(DATA / "tracelens" / f"{sheet}.csv")
    got = pl.read_csv(out / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)


@pytest.mark.parametrize("sheet", ["MoE_unfused_fwd", "MoE_aux_fwd", "unified_perf_summary"])
def test_inference_sheet_equals_tracelens(infer, sheet):
    """Every row and column of TraceLens 0.1.0's inference report file for the same trace."""
    import polars as pl

    want = read_csv(DATA / "tracelens_inference" / f"{sheet}.csv")
    got = pl.read_csv(infer / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)


def e_active(e: int, topk: int, m: int) -> float:
    """TraceLens's experts hit by a uniform routing of m tokens to topk of e experts."""
    return e * (1 - ((e - topk) / e) ** m)


def test_ck_moe_stages(out):
    """aiter's CK two-stage MoE, 64 tokens, hidden 7168, inter 2048, 256 experts, top-8, gated (w1 (256, 4096, ·)).
    Stage 1 in FP8: FLOPs 2·M·K·N·topk·2, bytes M·K + E_active·2·K·N + M·N·topk (the output at the input's size).
    With MXFP4 weights the packed w1 (·, ·, 3584) doubles w2's packed N (1024) back to 2048; the 'unsigned char'
    input is unknown to the MoE models (2 bytes) and FP8 to the Compute Spec; FP4 weights count half a byte. Stage 2
    reads w2's dtype (ty[2]) and has no gated parameter."""
    rows = {(r["name"], r["param: weight_dtype"]): r for r in rows_of(out, "MoE_unfused_fwd")}
    m, k, n, e, topk = 64, 7168, 2048, 256, 8
    ea = e_active(e, topk, m)
    fp8 = rows["aiter::ck_moe_stage1", "c10::Float8_e4m3fnuz"]
    assert (fp8["param: hidden_dim"], fp8["param: inter_dim"], fp8["param: gated"], fp8["param: output_dtype"]) == (
        "7168.0", "2048.0", "True", "")  # hidden_dim/inter_dim: a float column, SGLang's rows have none
    assert float(fp8["GFLOPS_first"]) == 2 * m * k * n * topk * 2 / 1e9
    assert float(fp8["Data Moved (MB)_first"]) == pytest.approx((m * k + ea * 2 * k * n + m * n * topk) / 2**20,
                                                                rel=1e-15)
    fp4 = rows["aiter::ck_moe_stage1", "c10::Float4_e2m1fn_x2"]
    assert (fp4["param: inter_dim"], fp4["param: input_dtype"], fp4["Compute Spec"]) == (
        "2048.0", "unsigned char", "matrix_fp8")
    assert float(fp4["Data Moved (MB)_first"]) == pytest.approx(
        (m * k * 2 + ea * 2 * k * n * 0.5 + m * n * topk * 2) / 2**20, rel=1e-15)
    s2 = rows["aiter::ck_moe_stage2", "c10::Float8_e4m3fnuz"]
    assert s2["param: gated"] == "" and float(s2["GFLOPS_first"]) == 2 * m * n * k * topk / 1e9
    assert float(s2["Data Moved (MB)_first"]) == pytest.approx((m * n * topk + ea * n * k + m * k) / 2**20, rel=1e-15)


def test_cktile_and_triton_moe_gemms(out):
    """aiter's CK-tile gemm1 of 128 tokens, hidden 4096, inter 1408 (from Y (128, 6, 1408)), 64 experts, bf16 input
    and output, FP4 weights: bytes M·K·2 + E_active·2·K·N·0.5 + M·N·topk·2, Compute Spec from the input. SGLang's
    invoke_fused_moe_kernel (gate/up): B (128, 1536, 2048), topk_ids (64, 8): m_work 512, FLOPs 2·m_work·N·K, bytes
    m_work·K + E_active·N·K (fp8) + m_work·N·2 (C's bf16, Input type[3]), Compute Spec from the weights."""
    rows = rows_of(out, "MoE_unfused_fwd")
    (up,) = [r for r in rows if r["name"] == "aiter::moe_cktile2stages_gemm1_ck"]
    m, k, n, e, topk = 128, 4096, 1408, 64, 6
    assert (up["param: topk"], up["param: gated"], up["Compute Spec"]) == ("6", "True", "matrix_bf16")
    assert float(up["GFLOPS_first"]) == 2 * m * k * n * topk * 2 / 1e9
    assert float(up["Data Moved (MB)_first"]) == pytest.approx(
        (m * k * 2 + e_active(e, topk, m) * 2 * k * n * 0.5 + m * n * topk * 2) / 2**20, rel=1e-15)
    (gu,) = [r for r in rows if r["name"] == INV and r["param: N"] == "1536.0"]
    mw, n, k = 64 * 8, 1536, 2048
    assert (gu["param: m_work"], gu["param: K"], gu["param: hidden_dim"], gu["Compute Spec"]) == (
        "512.0", "2048.0", "", "matrix_fp8")
    assert float(gu["GFLOPS_first"]) == 2 * mw * n * k / 1e9
    assert float(gu["Data Moved (MB)_first"]) == pytest.approx(
        (mw * k + e_active(128, 8, 64) * n * k + mw * n * 2) / 2**20, rel=1e-15)
    assert INV + "_7" not in {r["name"] for r in rows}  # no pseudo ops: the suffixed name has no model


def test_moe_aux(out):
    """The routing and sorting ops: FLOPs = the largest operand's elements, bytes Σ elements·bpe over the operands
    whose type TraceLens knows. moe_sorting_fwd (two calls, one row): ids/weights (64, 8) int/float, sorted ids and
    weights (4096,), expert ids (128,), num_valid_ids (2,), moe_buf (64, 7168) bf16. mxfp4_moe_sort_hip's
    'unsigned int' operand counts for no bytes, and its largest operand's E8M0 type has no precision: no Compute
    Spec. fused_append_shared_experts: ids and weights (64, 9), bytes 2·(n·4 + n·4)."""
    rows = {r["name"]: r for r in rows_of(out, "MoE_aux_fwd")}
    srt = rows["aiter::moe_sorting_fwd"]
    assert srt["name_count"] == "2" and srt["param: operands"].startswith("[((64, 8), 'int'), ((64, 8), 'float'), ")
    assert float(srt["GFLOPS_first"]) == 64 * 7168 / 1e9
    assert float(srt["Data Moved (MB)_first"]) == (512 * 4 * 2 + 4096 * 4 * 2 + 128 * 4 + 2 * 4 + 64 * 7168 * 2) / 2**20
    mx = rows["aiter::mxfp4_moe_sort_hip"]
    assert mx["param: operands"].endswith(", ((2,), 'unsigned int')]") and mx["Compute Spec"] == ""
    assert float(mx["Data Moved (MB)_first"]) == (4096 * 224 + 64 * 224 + 4096 * 4) / 2**20
    tk = rows["aiter::biased_grouped_topk_hip"]
    assert tk["Compute Spec"] == "vector_bf16" and float(tk["GFLOPS_first"]) == 64 * 256 / 1e9
    assert float(tk["Data Moved (MB)_first"]) == (64 * 256 * 2 + 256 * 2 + 64 * 8 * 4 * 2) / 2**20
    sh = rows["sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts"]
    assert (sh["param: shape_in1"], sh["param: dtype_in1_in2_out"], sh["param: stride_input1"]) == (
        "(64, 9)", "('int', 'float', 'float')", "")
    assert float(sh["GFLOPS_first"]) == 576 / 1e9 and float(sh["Data Moved (MB)_first"]) == 2 * 576 * 8 / 2**20
    assert sh["Compute Spec"] == "vector_fp32"


def test_inference_suffixed_sglang_name(infer):
    """With pseudo ops on, SGLang's per-layer suffix is stripped: `..._kernel_7` (bf16, no scales) is a third
    invoke_fused_moe_kernel row of the inference report, with its kernel count: FLOPs 2·m_work·N·K, bytes at 2
    bytes an element throughout."""
    rows = [r for r in rows_of(infer, "MoE_unfused_fwd") if r["name"] == INV]
    assert len(rows) == 3
    (bf,) = [r for r in rows if r["param: input_dtype"] == "c10::BFloat16"]
    mw, n, k = 512, 1536, 2048
    assert (bf["num_kernels"], bf["Compute Spec"]) == ("1", "matrix_bf16")
    assert float(bf["GFLOPS_first"]) == 2 * mw * n * k / 1e9
    assert float(bf["Data Moved (MB)_first"]) == pytest.approx(
        (mw * k * 2 + e_active(128, 8, 64) * n * k * 2 + mw * n * 2) / 2**20, rel=1e-15)


@pytest.fixture(scope="module")
def fused(tl_handmade_infer):
    """The TraceLens-style inference report of vLLM's fused aiter MoE trace (tests/data/tl_moe/moe_aiter_fused.json)."""
    return tl_handmade_infer / "moe_aiter_fused"


@pytest.mark.parametrize("sheet", ["MoE_fused_fwd", "unified_perf_summary"])
def test_fused_sheet_equals_tracelens(fused, sheet):
    """Every row and column of TraceLens 0.1.0's inference report file for the fused aiter MoE trace."""
    import polars as pl

    want = read_csv(DATA / "tracelens_inference_fused" / f"{sheet}.csv")
    got = pl.read_csv(fused / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)


def test_aiter_fused_1stage(fused):
    """pseudo_op::moe_aiter_fused_1stage of 32 tokens, hidden 4096, inter 1536, 128 experts, top-8, gated, FP8: FLOPs
    2·M·K·N·topk·2 (up) + 2·M·K·N·topk (down) + M·K·(2·topk − 1) (weighted sum); bytes M·K + E_active·N·K·2 +
    E_active·N·K + M·K. Two calls alike make one row; the call with two fused MoE kernels gets no pseudo op."""
    rows = rows_of(fused, "MoE_fused_fwd")
    assert [r["name_count"] for r in rows] == ["2", "1"]
    r = rows[0]
    m, k, n, e, topk = 32, 4096, 1536, 128, 8
    assert (r["param: num_tokens"], r["param: inter_dim"], r["param: gated"], r["Compute Spec"]) == (
        "32", "1536", "True", "matrix_fp8")
    assert float(r["GFLOPS_first"]) == (2 * m * k * n * topk * 2 + 2 * m * k * n * topk + m * k * (2 * topk - 1)) / 1e9
    ea = e_active(e, topk, m)
    assert float(r["Data Moved (MB)_first"]) == pytest.approx((m * k + ea * n * k * 2 + ea * n * k + m * k) / 2**20,
                                                              rel=1e-15)


@pytest.fixture(scope="module")
def gptq(tl_handmade_infer):
    """The TraceLens-style inference report of vLLM's GPTQ/AWQ MoE trace (tests/data/tl_moe/moe_gptq_awq.json)."""
    return tl_handmade_infer / "moe_gptq_awq"


@pytest.mark.parametrize("sheet", ["MoE_unfused_fwd", "unified_perf_summary"])
def test_gptq_sheet_equals_tracelens(gptq, sheet):
    """Every row and column of TraceLens 0.1.0's inference report file for the GPTQ/AWQ MoE trace."""
    import polars as pl

    want = read_csv(DATA / "tracelens_inference_gptq" / f"{sheet}.csv")
    got = pl.read_csv(gptq / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)


def test_gptq_awq(gptq):
    """16 tokens, hidden 2048, 64 experts, top-6 (topk_ids (16, 6)): the up GEMM's w1 (64, 2816, 1024) gives inter
    2816 // 2 = 1408 (gated), the down GEMM's w2 (64, 2048, 704) 704·2 = 1408. Weights at half a byte: up bytes
    M·K·2 + E_active·2·K·N·0.5 + M·N·topk·2, down M·N·topk·2 + E_active·N·K·0.5 + M·K·2. The call with three GEMMs
    has two down pseudo ops (3 instances in that row)."""
    rows = {(r["name"], r["param: num_tokens"]): r for r in rows_of(gptq, "MoE_unfused_fwd")}
    m, k, n, e, topk = 16, 2048, 1408, 64, 6
    ea = e_active(e, topk, m)
    up, down = rows["pseudo_op::moe_gptq_awq_up", "16"], rows["pseudo_op::moe_gptq_awq_down", "16"]
    assert (up["param: inter_dim"], up["param: gated"], up["name_count"], up["Compute Spec"]) == (
        "1408", "True", "2", "matrix_bf16")
    assert float(up["GFLOPS_first"]) == 2 * m * k * n * topk * 2 / 1e9
    assert float(up["Data Moved (MB)_first"]) == pytest.approx(
        (m * k * 2 + ea * 2 * k * n * 0.5 + m * n * topk * 2) / 2**20, rel=1e-15)
    assert (down["param: inter_dim"], down["param: gated"], down["name_count"]) == ("1408", "", "3")
    assert float(down["Data Moved (MB)_first"]) == pytest.approx(
        (m * n * topk * 2 + ea * n * k * 0.5 + m * k * 2) / 2**20, rel=1e-15)
