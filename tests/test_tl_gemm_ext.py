"""TraceLens's GEMM and convolution models beyond aten's (sql/peers/tracelens/perf_gemm.sql, perf_conv.sql) on
hand-made traces (tests/data/tl_gemm_ext/), against TraceLens's own CSVs for them: TransformerEngine v2's pseudo GEMM
ops (tev2_pseudo_gemm) in the perf report's and the inference report's GEMM sheets; apex's fused convolutions
(ConvBias_, ConvBiasReLU_ and their backward ops, read through TraceLens's sequence-number cache) in CONV_fwd and
CONV_bwd and both reports' unified tables; aiter's fused MoE ops called directly (aiter::fmoe_fp8_blockscale_g1u1,
aiter::fmoe_g1u1: moe_aiter_fused_blockscale) in both reports' MoE_fused_fwd."""
from __future__ import annotations

from pathlib import Path

import pytest

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DATA = Path(__file__).parent / "data" / "tl_gemm_ext"


@pytest.fixture(scope="module")
def te(tl_handmade_perf):
    """TraceLens's perf report on the TransformerEngine v2 trace."""
    return tl_handmade_perf / "te_v2_gemm"


@pytest.fixture(scope="module")
def te_infer(tl_handmade_infer):
    """TraceLens's inference report (pseudo ops on, grouped by parent module) on the same trace."""
    return tl_handmade_infer / "te_v2_gemm"


def sheet_of(folder: Path, sheet: str) -> list[dict]:
    return read_csv(folder / f"{sheet}.csv")


def assert_matches(got_folder: Path, want_folder: str, sheet: str) -> None:
    import polars as pl

    want = read_csv(DATA / want_folder / f"{sheet}.csv")
    got = pl.read_csv(got_folder / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)


@pytest.mark.parametrize("sheet", ["GEMM", "unified_perf_summary", "ops_summary_by_category"])
def test_te_sheet_equals_tracelens(te, sheet):
    """Every row and column of TraceLens 0.1.0's perf report file for the TE v2 trace (see its README.md)."""
    assert_matches(te, "tracelens", sheet)


@pytest.mark.parametrize("sheet", ["GEMM", "unified_perf_summary"])
def test_te_inference_sheet_equals_tracelens(te_infer, sheet):
    """Every row and column of TraceLens 0.1.0's inference report file for the same trace."""
    assert_matches(te_infer, "tracelens_inference", sheet)


def test_te_pseudo_gemms(te):
    """A (M, K) by B (K, N): _Linear's forward of 1024 tokens, 1024 -> 4096 in bf16 is (1024, 1024) x (1024, 4096):
    FLOPs 2·M·N·K, bytes (M·K + K·N)·2 + M·N·2. Under FP8 (_LayerNormLinear, 1024 -> 3072) the operands count one
    byte an element and the output still two. The pseudo op without Input Strides has no strides; the one with
    the extension's empty Input Strides, and the one of two dtypes, are left out."""
    rows = {r["name"]: r for r in sheet_of(te, "GEMM")}
    y = rows["_Linear_yfwd_mm"]
    m, k, n = 1024, 1024, 4096
    assert (y["param: M"], y["param: N"], y["param: K"], y["param: stride_A"], y["name_count"]) == (
        "1024", "4096", "1024", "", "2")
    assert float(y["GFLOPS_first"]) == 2 * m * n * k / 1e9
    assert float(y["Data Moved (MB)_first"]) == ((m * k + k * n) * 2 + m * n * 2) / 2**20
    x = rows["_LinearBackward_xgrad_mm"]
    assert (x["param: M"], x["param: N"], x["param: K"], x["param: stride_A"]) == ("1024", "1024", "4096", "(4096, 1)")
    f8 = rows["_LayerNormLinear_yfwd_mm"]
    m, k, n = 1024, 1024, 3072
    assert (f8["param: dtype_A_B"], f8["Compute Spec"]) == ("('fp8', 'fp8')", "matrix_fp8")
    assert float(f8["Data Moved (MB)_first"]) == (m * k + k * n + m * n * 2) / 2**20
    assert "_LayerNormLinearBackward_wgrad_mm" not in rows
    assert sum(r["name"] == "_Linear_yfwd_mm" for r in sheet_of(te, "GEMM")) == 1


@pytest.fixture(scope="module")
def conv(tl_handmade_perf):
    """TraceLens's perf report on the apex fused-convolution trace."""
    return tl_handmade_perf / "conv_bias"


@pytest.fixture(scope="module")
def conv_infer(tl_handmade_infer):
    """TraceLens's inference report on the same trace."""
    return tl_handmade_infer / "conv_bias"


@pytest.mark.parametrize("sheet", ["CONV_fwd", "CONV_bwd", "unified_perf_summary", "ops_summary_by_category"])
def test_conv_sheet_equals_tracelens(conv, sheet):
    """Every row and column of TraceLens 0.1.0's perf report file for the fused-convolution trace."""
    assert_matches(conv, "tracelens_conv", sheet)


@pytest.mark.parametrize("sheet", ["CONV_fwd", "unified_perf_summary"])
def test_conv_inference_equals_tracelens(conv_infer, sheet):
    """Every row and column of TraceLens 0.1.0's inference report's files for the same trace: CONV_fwd grouped by
    num_kernels too, the fused backward ops' rows in it (that report takes only aten::convolution_backward out of
    the forward table), and no CONV_bwd.csv (it writes no backward sheet)."""
    assert_matches(conv_infer, "tracelens_conv_inference", sheet)
    names = {r["name"] for r in sheet_of(conv_infer, "CONV_fwd")}
    assert {"ConvBias_Backward", "ConvBiasReLU_Backward", "ConvBias_"} <= names
    assert not (conv_infer / "CONV_bwd.csv").exists()


def test_conv_bias(conv):
    """ConvBias_ (8, 64, 56, 56) * (128, 64, 3, 3) with apex's padding 1, stride 2, read swapped: stride 1, padding
    2, so the output is (8, 128, 58, 58). FLOPs 2·(64·3·3)·out + out (the bias), bytes (x + w + 128 + out)·2. Its
    backward op gets the forward's parameters: FLOPs 2·(64·3·3)·out + 2·8·58·58·w + out, bytes 2·(out + w + x)·2 +
    out + 128. The 1x1 convolution with padding 0 (stride 0 as read) and its backward are left out."""
    x, w, out = 8 * 64 * 56 * 56, 128 * 64 * 3 * 3, 8 * 128 * 58 * 58
    (f,) = [r for r in sheet_of(conv, "CONV_fwd") if r["name"] == "ConvBias_"
            and r["param: input_shape"] == "(8, 64, 56, 56)"]
    assert (f["param: stride"], f["param: padding"], f["param: bias"], f["name_count"]) == (
        "(1, 1)", "(2, 2)", "True", "2")
    assert float(f["GFLOPS_first"]) == (2 * 64 * 9 * out + out) / 1e9
    assert float(f["Data Moved (MB)_first"]) == (x + w + 128 + out) * 2 / 2**20
    (b,) = [r for r in sheet_of(conv, "CONV_bwd") if r["name"] == "ConvBias_Backward"]
    assert b["param: input_shape"] == "(8, 64, 56, 56)" and b["name_count"] == "2"
    assert float(b["GFLOPS_first"]) == (2 * 64 * 9 * out + 2 * 8 * 58 * 58 * w + out) / 1e9
    assert float(b["Data Moved (MB)_first"]) == (2 * (out + w + x) * 2 + out + 128) / 2**20
    assert "(64, 128, 1, 1)" not in {r["param: filter_shape"] for r in sheet_of(conv, "CONV_fwd")}


def test_conv_bias_cache_order(conv):
    """The side thread's ConvBias_ (sequence number 105), written after its backward op in the file: CONV_bwd has no
    row of that backward, unified_perf_summary has it with the forward's parameters: the backward FLOPs of a
    (2, 32, 64, 64) * (32, 32, 3, 3) convolution with padding 1 and stride 1, output (2, 32, 64, 64)."""
    assert "(2, 32, 64, 64)" not in {r["param: input_shape"] for r in sheet_of(conv, "CONV_bwd")}
    (u,) = [r for r in sheet_of(conv, "unified_perf_summary")
            if r["name"] == "ConvBias_Backward" and r["Input Dims"] == "((2, 32, 64, 64),)"]
    out, w = 2 * 32 * 64 * 64, 32 * 32 * 9
    assert float(u["GFLOPS"]) == (2 * 32 * 9 * out + 2 * 2 * 64 * 64 * w + out) / 1e9


@pytest.fixture(scope="module")
def moe(tl_handmade_perf):
    """TraceLens's perf report on the aiter fused-MoE trace."""
    return tl_handmade_perf / "moe_fused"


@pytest.fixture(scope="module")
def moe_infer(tl_handmade_infer):
    """TraceLens's inference report on the same trace."""
    return tl_handmade_infer / "moe_fused"


@pytest.mark.parametrize("sheet", ["MoE_fused_fwd", "unified_perf_summary", "ops_summary_by_category"])
def test_moe_sheet_equals_tracelens(moe, sheet):
    """Every row and column of TraceLens 0.1.0's perf report file for the fused-MoE trace."""
    assert_matches(moe, "tracelens_moe", sheet)


@pytest.mark.parametrize("sheet", ["MoE_fused_fwd", "unified_perf_summary"])
def test_moe_inference_sheet_equals_tracelens(moe_infer, sheet):
    """Every row and column of TraceLens 0.1.0's inference report file for the same trace."""
    assert_matches(moe_infer, "tracelens_moe_inference", sheet)


def test_moe_fused(moe):
    """aiter::fmoe_fp8_blockscale_g1u1 of 32 tokens, hidden 7168, inter 256 (gate (256, 512, 7168): gated), 256
    experts, top-8, FP8 input and weights, bf16 output: FLOPs 2·M·K·N·topk·2 + 2·M·K·N·topk + M·K·(2·topk − 1), bytes
    M·K + E_active·N·K·2 + E_active·N·K + M·K·2. The bf16 fmoe_g1u1 whose topk is recorded empty is left out."""
    rows = {(r["name"], r["param: num_tokens"]): r for r in sheet_of(moe, "MoE_fused_fwd")}
    m, k, n, e, topk = 32, 7168, 256, 256, 8
    ea = e * (1 - ((e - topk) / e) ** m)
    r = rows["aiter::fmoe_fp8_blockscale_g1u1", "32"]
    assert (r["param: gated"], r["param: output_dtype"], r["name_count"], r["Compute Spec"]) == (
        "True", "c10::BFloat16", "2", "matrix_fp8")
    assert float(r["GFLOPS_first"]) == (2 * m * k * n * topk * 2 + 2 * m * k * n * topk + m * k * (2 * topk - 1)) / 1e9
    assert float(r["Data Moved (MB)_first"]) == pytest.approx(
        (m * k + ea * n * k * 2 + ea * n * k + m * k * 2) / 2**20, rel=1e-15)
    assert rows["aiter::fmoe_g1u1", "16"]["name_count"] == "1"
