"""TraceLens's inference-extension models of SGLang ops (sql/peers/tracelens/perf_infer.sql) on a hand-made trace
(tests/data/tl_sglang_ops/): aiter::gemm_a16w16 (GEMM.csv), sgl_kernel::silu_and_mul (UnaryElementwise.csv), and
sglang_profiler::attention_paged_attention_ragged with sglang::store_cache (InferenceAttention_fwd.csv), against
TraceLens's own CSVs for that trace."""
from __future__ import annotations

from pathlib import Path

import pytest

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DATA = Path(__file__).parent / "data" / "tl_sglang_ops"


@pytest.fixture(scope="module")
def out(tl_handmade_infer):
    """The folder of the TraceLens-style inference report (pseudo ops on, grouped by parent module)."""
    return tl_handmade_infer / "sglang_ops"


@pytest.mark.parametrize("sheet", ["GEMM", "UnaryElementwise", "InferenceAttention_fwd", "unified_perf_summary"])
def test_sheet_equals_tracelens(out, sheet):
    """Every row and column of TraceLens 0.1.0's file for the same trace (tests/data/tl_sglang_ops/README.md)."""
    import polars as pl

    want = read_csv(DATA / "tracelens" / f"{sheet}.csv")
    got = pl.read_csv(out / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)


def test_gemm_a16w16(out):
    """x (2, 64) by w (192, 64), bf16: FLOPs 2·M·N·K, bytes (M·K + N·K + M·N)·2; the bias (192,) adds M·N FLOPs and
    N·2 bytes. dtype_A_B repeats x's dtype for the output (Input type[3] is the `dtype` scalar); no stride columns."""
    rows = {r["param: bias"]: r for r in read_csv(out / "GEMM.csv")}
    m, n, k = 2, 192, 64
    plain, bias = rows["False"], rows["True"]
    assert (plain["name"], plain["param: B"], plain["param: M"], plain["param: N"], plain["param: K"]) == (
        "aiter::gemm_a16w16", "1", "2", "192", "64")
    assert plain["param: dtype_A_B"] == "('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')"
    assert "param: stride_A" not in plain and plain["param: transpose"] == "(True, False)"
    assert float(plain["GFLOPS_first"]) == 2 * m * n * k / 1e9
    assert float(plain["Data Moved (MB)_first"]) == (m * k + n * k + m * n) * 2 / 2**20
    assert float(bias["GFLOPS_first"]) == (2 * m * n * k + m * n) / 1e9
    assert float(bias["Data Moved (MB)_first"]) == (m * k + n * k + m * n + n) * 2 / 2**20


def test_silu_and_mul(out):
    """(out, input) = ((2, 128), (2, 256)): op_shape is out's, the strides swap places; FLOPs 5·n, bytes
    2·n·2 + n·2 for n = 256 output elements."""
    (r,) = read_csv(out / "UnaryElementwise.csv")
    assert (r["name"], r["param: op_shape"], r["param: stride_input"], r["param: stride_output"]) == (
        "sgl_kernel::silu_and_mul", "(2, 128)", "(256, 1)", "(128, 1)")
    n = 2 * 128
    assert float(r["GFLOPS_first"]) == 5 * n / 1e9
    assert float(r["Data Moved (MB)_first"]) == (2 * n * 2 + n * 2) / 2**20


def test_paged_attention_and_store_cache(out):
    """The `_3` suffix goes (pseudo ops); 2 decode requests over 300 KV tokens (the annotation): query (2, 4, 32),
    2 KV heads of 32. FLOPs H_Q·(2·g_sqsk·d + 2·g_sqsk·d), bytes g_sq·(H_Q + H_KV)·2d·2 + (g_sk − g_sq)·H_KV·2d·2.
    store_cache moves k and v (2, 64) in and out: 4·128·2 bytes. Integer params print as floats (NaN in the
    other model's rows), no dtype_KV column."""
    rows = {r["name"]: r for r in read_csv(out / "InferenceAttention_fwd.csv")}
    att, st = rows["sglang_profiler::attention_paged_attention_ragged"], rows["sglang::store_cache"]
    assert "param: dtype_KV" not in att
    assert (att["param: N_Q"], att["param: H_Q"], att["param: H_KV"], att["param: N_KV"], att["param: g_sk"]) == (
        "2.0", "4.0", "2.0", "300.0", "300.0")
    h_q, h_kv, d, g_sq, g_sk = 4, 2, 32, 2, 300
    assert float(att["GFLOPS_first"]) == h_q * (2 * g_sk * d + 2 * g_sk * d) / 1e9
    moved = g_sq * (h_q + h_kv) * 2 * d * 2 + (g_sk - g_sq) * h_kv * 2 * d * 2
    assert float(att["Data Moved (MB)_first"]) == moved / 2**20
    assert (st["param: op_shape"], st["param: nelems"], st["param: dtype"]) == ("(2, 64)", "128.0", "c10::BFloat16")
    assert (float(st["GFLOPS_first"]), float(st["Data Moved (MB)_first"])) == (0.0, 4 * 128 * 2 / 2**20)
