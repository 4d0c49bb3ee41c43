"""TraceLens perf-model families added from its class map on hand-made traces (tests/data/tl_attn/): in the perf
report EvoformerAttention (SDPA_fwd / SDPA_bwd, sql/peers/tracelens/perf_sdpa.sql), DaoAILab's causal conv1d and
Mamba-2's fused scan (SSM_fwd / SSM_bwd, perf_ssm.sql), Primus's fused LN-modulate backward (Normalization,
perf_norm.sql), aiter's fused MLA RoPE + KV-cache writes and mHC ops (FusedRoPE_fwd, mHC_fwd,
perf_fused_rope_mhc.sql); in the inference report aiter's varlen, paged-prefill and gluon paged-decode attention,
SGLang's TileLang sparse MLA, the gated delta net and DeepSeek-V4's sparse prefill (InferenceAttention_fwd,
perf_infer.sql), and the perf report's InferenceAttention_fwd on the same trace; against TraceLens's own CSVs for
those traces."""
from __future__ import annotations

from pathlib import Path

import pytest

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DATA = Path(__file__).parent / "data" / "tl_attn"
INFER_SHEETS = ["InferenceAttention_fwd", "unified_perf_summary", "ops_summary_by_category"]
PERF_SHEETS = ["SDPA_fwd", "SDPA_bwd", "SSM_fwd", "SSM_bwd", "Normalization", "FusedRoPE_fwd", "mHC_fwd",
               "unified_perf_summary", "ops_summary_by_category"]


@pytest.fixture(scope="module")
def perf(tl_handmade_perf):
    """The folder of `tracesql report --style tracelens --out` on perf_ops.json."""
    return tl_handmade_perf / "perf_ops"


@pytest.mark.parametrize("sheet", PERF_SHEETS)
def test_perf_sheet_equals_tracelens(perf, sheet):
    """Every row and column of TraceLens 0.1.0's perf report file for the same trace (tests/data/tl_attn/README.md)."""
    import polars as pl

    want = read_csv(DATA / "tracelens" / "perf" / f"{sheet}.csv")
    got = pl.read_csv(perf / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)


def test_evoformer(perf):
    """Q (1, 128, 256, 8, 32) bf16: the 128 MSA rows fold into the batch, B = 128, N = 256, H = 8, d = 32, never
    causal; FLOPs B·H·4·N²·d, bytes (q, k, v, out)·2; dtype_A_B is a one-element list. Its backward node gives
    SDPA_bwd.csv four N²·d products per head (no recomputed QK^T) and 7 tensors of bytes. A 4-d Q has no row."""
    rows = read_csv(perf / "SDPA_fwd.csv")
    assert len(rows) == 3
    r = rows[0]
    b, n, h, d = 128, 256, 8, 32
    assert (r["param: B"], r["param: N_Q"], r["param: H_KV"], r["param: causal"], r["param: flash_impl"]) == (
        "128", "256", "8", "False", "False")
    assert r["param: dtype_A_B"] == "['c10::BFloat16']" and r["Compute Spec"] == "matrix_bf16"
    assert float(r["GFLOPS_first"]) == b * h * 4 * n * n * d / 1e9
    assert float(r["Data Moved (MB)_first"]) == 4 * b * n * h * d * 2 / 2**20
    assert {x["param: dtype_A_B"]: x["Compute Spec"] for x in rows[1:]} == {"['float']": "matrix_fp32", "['']": ""}
    (bw,) = read_csv(perf / "SDPA_bwd.csv")
    assert float(bw["GFLOPS_first"]) == 4 * (b * h * 2 * n * n * d) / 1e9
    assert float(bw["Data Moved (MB)_first"]) == 7 * b * n * h * d * 2 / 2**20
    assert float(bw["Kernel Time (µs)_sum"]) == 81.25


def test_causal_conv1d(perf):
    """x (4, 4352, 1024) by a width-4 depthwise filter: FLOPs 2·b·c·l·k; bytes x and out (2·b·c·l) + weight (c·k)
    + bias (c), at 2 bytes (bf16) or 4 (float); the columns of Mamba's rows print as floats (empty here)."""
    rows = {r["param: has_bias"]: r for r in read_csv(perf / "SSM_fwd.csv")
            if r["name"] == "DaoAILab::_causal_conv1d_fwd_cpp"}
    b, c, seq, k = 4, 4352, 1024, 4
    bias, plain = rows["True"], rows["False"]
    assert (bias["param: batch"], bias["param: kernel_size"], bias["param: B"]) == ("4.0", "4.0", "")
    assert float(bias["GFLOPS_first"]) == 2 * b * c * seq * k / 1e9
    assert float(bias["Data Moved (MB)_first"]) == (2 * b * c * seq * 2 + c * k * 2 + c * 2) / 2**20
    assert float(plain["Data Moved (MB)_first"]) == (2 * b * c * seq * 4 + c * k * 4) / 2**20
    assert plain["Compute Spec"] == "matrix_fp32"


def test_mamba_ssd(perf):
    """Mamba-2 zxbcdt (2, 1024, 8512), 64 heads of 64, chunk 256, 1 group: d_inner 4096, state size N = (8512 −
    2·4096 − 64) / 2 = 128. FLOPs conv 2·B·4352·T·4 + CB^T 2·B·G·T·C·N + M@X 2·B·H·T·C·P + 2 × 2·B·H·T·N·P; bytes
    the input, conv weight and bias (bf16), dt_bias, A and D (float) and the output. Without recorded scalars
    TraceLens assumes C 128, P 64, G 1; a projection width that leaves no whole state size has no row. The backward
    node gives SSM_bwd.csv the same FLOPs and bytes, with the causal conv1d's columns after the others."""
    rows = read_csv(perf / "SSM_fwd.csv")
    m = [r for r in rows if r["name"] == "MambaSplitConv1dScanCombinedFn"]
    assert len(m) == 3
    r = m[0]
    bb, t, h, p, g, n, c, ch, k = 2, 1024, 64, 64, 1, 128, 256, 4352, 4
    assert (r["param: N"], r["param: C"], r["param: d_inner"], r["param: G"]) == ("128.0", "256.0", "4096.0", "1.0")
    flops = 2 * bb * ch * t * k + 2 * bb * g * t * c * n + 2 * bb * h * t * c * p + 2 * (2 * bb * h * t * n * p)
    moved = bb * t * 8512 * 2 + ch * k * 2 + ch * 2 + h * (4 + 4 + 4) + bb * t * 4096 * 2
    assert float(r["GFLOPS_first"]) == flops / 1e9
    assert float(r["Data Moved (MB)_first"]) == moved / 2**20
    assert (m[1]["param: C"], m[1]["param: P"], m[2]["param: G"], m[2]["param: N"]) == ("128.0", "64.0", "8.0", "16.0")
    (bw,) = read_csv(perf / "SSM_bwd.csv")
    assert (bw["param: N"], float(bw["GFLOPS_first"]), float(bw["Kernel Time (µs)_sum"])) == ("128", flops / 1e9,
                                                                                               250.75)
    assert list(bw)[-5:] == ["param: batch", "param: channels", "param: seq_len", "param: kernel_size",
                             "param: has_bias"]


def test_fused_ln_modulate_backward(perf):
    """grad_out (1024, 4, 3072) bf16: FLOPs 15·n; bytes grad_out and x_norm read, x grad written (3·n·2), mean and
    rstd (2·B·T·4), scale/shift grads written and the modulation grad read (3·B·H·2)."""
    r = read_csv(perf / "Normalization.csv")[0]
    t, b, h = 1024, 4, 3072
    n = t * b * h
    assert (r["param: num_channels"], r["param: output_mask"], r["Compute Spec"]) == ("3072", "[True, True, True]",
                                                                                     "vector_bf16")
    assert float(r["GFLOPS_first"]) == 15 * n / 1e9
    assert float(r["Data Moved (MB)_first"]) == (3 * n * 2 + 2 * b * t * 4 + 3 * b * h * 2) / 2**20


def test_fused_qk_rope_mla(perf):
    """q_nope (128, 16, 512), q_pe (.., 64), one latent KV head: FLOPs 3·T·(QH + KH)·D_pe; bytes q and k read and q
    written at 2 bytes, the KV rows written at the FP8 cache's 1 byte (the concat op also writes q in FP8). With
    empty dtypes there is no byte count and no Compute Spec, and dtype_out is empty in the cat op's rows."""
    rows = read_csv(perf / "FusedRoPE_fwd.csv")
    by = {(r["name"], r["param: T"]): r for r in rows}
    cat = by["aiter::fused_qk_rope_cat_and_cache_mla", "128"]
    cc = by["aiter::fused_qk_rope_concat_and_cache_mla", "128"]
    t, qh, dl, dp = 128, 16, 512, 64
    assert (cat["param: KH"], cat["param: dtype_kv"], cat["param: dtype_out"]) == ("1", "c10::Float8_e4m3fn", "")
    assert float(cat["GFLOPS_first"]) == 3 * (t * qh * dp + t * dp) / 1e9
    moved = 2 * t * qh * (dl + dp) * 2 + t * (dl + dp) * 2 + t * (dl + dp)
    assert float(cat["Data Moved (MB)_first"]) == moved / 2**20
    assert float(cc["Data Moved (MB)_first"]) == (t * qh * (dl + dp) * (2 + 1) + t * (dl + dp) * (2 + 1)) / 2**20
    empty = by["aiter::fused_qk_rope_cat_and_cache_mla", "64"]
    assert (empty["param: dtype_in"], empty["Data Moved (MB)_first"], empty["Compute Spec"]) == ("", "", "")
    assert cat["Compute Spec"] == "vector_bf16"


def test_mhc(perf):
    """256 tokens, 4 streams of 4096, hc3 = 24 projection rows of K = 16384, 4 split-K partials. mhc_post: FLOPs
    2·M·n·C·(n + 1), bytes x, residual and out at 2 bytes, the mixes at 4; its hc3 is None, so the column is a
    float one. mhc_pre_gemm_sqrsum: FLOPs 2·M·hc3·K, a matrix op. An empty dtype of x: no byte count."""
    rows = read_csv(perf / "mHC_fwd.csv")
    post = [r for r in rows if r["name"] == "aiter::mhc_post"]
    m, n, c, hc3, k, sk = 256, 4, 4096, 24, 16384, 4
    assert (post[0]["param: hc3"], post[0]["param: dtype_in"], post[0]["Compute Spec"]) == ("", "c10::BFloat16",
                                                                                           "vector_bf16")
    assert float(post[0]["GFLOPS_first"]) == 2 * m * n * c * (n + 1) / 1e9
    assert float(post[0]["Data Moved (MB)_first"]) == (m * c * 2 + 2 * m * n * c * 2 + (m * n + m * n * n) * 4) / 2**20
    assert (post[1]["param: dtype_in"], post[1]["Data Moved (MB)_first"]) == ("", "")
    (g,) = [r for r in rows if r["name"] == "aiter::mhc_pre_gemm_sqrsum"]
    assert (g["param: hc3"], g["param: K"], g["param: split_k"], g["Compute Spec"]) == ("24.0", "16384.0", "4.0",
                                                                                       "matrix_bf16")
    assert float(g["GFLOPS_first"]) == 2 * m * hc3 * k / 1e9
    assert float(g["Data Moved (MB)_first"]) == (m * n * c * 2 + hc3 * k * 4 + sk * m * hc3 * 4 + sk * m * 4) / 2**20


@pytest.fixture(scope="module")
def infer(tl_handmade_infer):
    """The folder of the TraceLens-style inference report on infer_ops.json (pseudo ops on, grouped by parent
    module)."""
    return tl_handmade_infer / "infer_ops"


@pytest.mark.parametrize("sheet", INFER_SHEETS)
def test_infer_sheet_equals_tracelens(infer, sheet):
    """Every row and column of TraceLens 0.1.0's inference report file for the same trace."""
    import polars as pl

    want = read_csv(DATA / "tracelens" / "infer" / f"{sheet}.csv")
    got = pl.read_csv(infer / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want, text=frozenset({"parent_module", "call_stack_first"}))


def _attn(infer):
    """The inference sheet's rows, and by (name, H_Q, sliding_window); sglang::store_cache's row has none of the
    attention parameters, so they are float columns."""
    rows = read_csv(infer / "InferenceAttention_fwd.csv")
    return rows, {(r["name"], r["param: H_Q"], r["param: sliding_window"]): r for r in rows}


# the step annotation: one context request of 64 new tokens on 128 cached, 3 decode requests over 3000 keys
C_SQ, C_SK, C_SQSQ, C_SQSK, G_SQ, G_SK, G_SQSK = 64, 192, 64 * 64, 64 * 192, 3, 3000, 3000


def test_fmha_v3_varlen(infer):
    """MLA prefill: q and k of 16 heads of 192, v (Input Dims[2]) of 128: d_h_v = 128. FLOPs
    H_Q·(d_qk + d_v)·(2·c_sqsk − c_sqsq + 2·g_sqsk); bytes the 67 new tokens' Q, output, K and V at 2 bytes and the
    cached keys' K and V at the KV dtype's (an FP8 k: 1 byte)."""
    _, by = _attn(infer)
    r = by["aiter::fmha_v3_varlen_fwd", "16.0", ""]
    h, dqk, dv = 16, 192, 128
    assert (r["param: d_h_qk"], r["param: d_h_v"], r["param: N_KV"], r["num_kernels"]) == ("192.0", "128.0", "192.0",
                                                                                             "1")
    assert float(r["GFLOPS_first"]) == h * (dqk + dv) * (2 * C_SQSK - C_SQSQ + 2 * G_SQSK) / 1e9
    moved = (C_SQ + G_SQ) * (h * (dqk + dv) + h * (dqk + dv)) * 2 + ((C_SK - C_SQ) + (G_SK - G_SQ)) * h * (dqk + dv) * 2
    assert float(r["Data Moved (MB)_first"]) == moved / 2**20
    fp8 = by["aiter::fmha_v3_varlen_fwd", "32.0", ""]
    assert fp8["param: dtype_KV"] == "c10::Float8_e4m3fnuz"
    moved = (C_SQ + G_SQ) * (32 * 256 + 8 * 256) * 2 + ((C_SK - C_SQ) + (G_SK - G_SQ)) * 8 * 256 * 1
    assert float(fp8["Data Moved (MB)_first"]) == moved / 2**20
    assert by["aiter::mha_batch_prefill", "32.0", ""]["param: N_KV"] == "16.0"  # the paged k's page size


def test_pa_decode_gluon(infer):
    """Decode only: the context statistics are zeroed, N_KV = g_sk, H_KV = the key cache's second dim. With a
    sliding window of 128 each of the 3 requests reads at most 128 keys: g_sqsk and g_sk count as 384 in the FLOPs
    and bytes, the FP8 cache at one byte."""
    _, by = _attn(infer)
    full, win = by["aiter::pa_decode_gluon", "32.0", "-1.0"], by["aiter::pa_decode_gluon", "32.0", "128.0"]
    h, hkv, d = 32, 8, 128
    assert (full["param: c_sq"], full["param: c_sqsk"], full["param: N_KV"], full["param: H_KV"]) == (
        "0.0", "0.0", "3000.0", "8.0")
    assert float(full["GFLOPS_first"]) == h * 2 * G_SQSK * d * 2 / 1e9
    capped = G_SQ * 128
    assert win["param: g_sk"] == "3000.0" and float(win["GFLOPS_first"]) == h * 2 * capped * d * 2 / 1e9
    moved = G_SQ * (2 * h * d + 2 * hkv * d) * 2 + (capped - G_SQ) * hkv * 2 * d * 1
    assert float(win["Data Moved (MB)_first"]) == moved / 2**20


def test_gdn_and_tilelang(infer):
    """Qwen3-Next's gated delta net: mixed_qkv (67, 8192), 32 value heads of 128: 16 key heads, d_k = ((8192 −
    32·128) // 2) // 16 = 128; tokens = c_sq + g_sq = 67; FLOPs 7·T·H_V·d_v·d_k, bytes T·H_V·(d_k + 2·d_v + 2)·2.
    aiter's linear_attention_with_output_base (the same model, never annotated) has no row here nor in the unified
    table. TileLang's sparse MLA takes d_h_v = 512 whatever its args."""
    rows, _ = _attn(infer)
    (g,) = [r for r in rows if r["name"] == "vllm::gdn_attention_core"]
    t, hv, dk, dv = 67, 32, 128, 128
    assert (g["param: N_Q"], g["param: H_Q"], g["param: H_V"], g["param: N_KV"], g["param: g_sk"]) == (
        "67.0", "16.0", "32.0", "0.0", "3.0")
    assert float(g["GFLOPS_first"]) == 7 * t * hv * dv * dk / 1e9
    assert float(g["Data Moved (MB)_first"]) == t * hv * (dk + 2 * dv + 2) * 2 / 2**20
    names = {r["name"] for r in read_csv(infer / "unified_perf_summary.csv")}
    assert "aiter::linear_attention_with_output_base" not in names | {r["name"] for r in rows}
    (tl,) = [r for r in rows if r["name"] == "sglang_profiler::tilelang_kernel_tilelang_sparse_fwd"]
    assert (tl["param: d_h_qk"], tl["param: d_h_v"], tl["param: H_KV"]) == ("576.0", "512.0", "1.0")


def test_pa_sparse_prefill(infer):
    """DeepSeek-V4's sparse prefill needs no annotation: q (64, 16, 512) over 8192 + 2048 selected slots of one
    latent head: FLOPs pairs·H_Q·2·(d + d), bytes q read and out written (2·N_Q·H_Q·d·2) + pairs·d·2. The call
    without in-chunk slots has no row."""
    (r,) = [r for r in read_csv(infer / "InferenceAttention_fwd.csv")
            if r["name"] == "aiter::pa_sparse_prefill_opus_fwd"]
    pairs, h, d, n = 8192 + 2048, 16, 512, 64
    assert (r["param: N_KV"], r["param: prefill_pairs"], r["param: H_KV"], r["param: c_sq"]) == (
        "10240.0", "10240.0", "1.0", "")
    assert float(r["GFLOPS_first"]) == pairs * h * 2 * (d + d) / 1e9
    assert float(r["Data Moved (MB)_first"]) == (2 * n * h * d * 2 + pairs * d * 2) / 2**20


@pytest.fixture(scope="module")
def infer_perf(tl_handmade_perf):
    """The folder of `tracesql report --style tracelens --out` (the perf report) on infer_ops.json."""
    return tl_handmade_perf / "infer_ops"


@pytest.mark.parametrize("sheet", INFER_SHEETS)
def test_infer_ops_perf_report_equals_tracelens(infer_perf, sheet):
    """TraceLens 0.1.0's perf report on infer_ops.json: it annotates vllm::unified_attention_with_output only, so its
    InferenceAttention_fwd holds that op, the sparse prefill and sglang::store_cache; the other attention ops are
    modelled rows of unified_perf_summary without metrics, and the gated delta nets (their model raises
    NotImplementedError without an annotation) are no rows at all."""
    import polars as pl

    want = read_csv(DATA / "tracelens" / "infer_perf" / f"{sheet}.csv")
    got = pl.read_csv(infer_perf / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)
    if sheet == "unified_perf_summary":
        names = {r["name"]: r["has_perf_model"] for r in read_csv(infer_perf / f"{sheet}.csv")}
        assert names["aiter::pa_decode_gluon"] == "True" and "vllm::gdn_attention_core" not in names


@pytest.fixture(scope="module")
def perf_inference(tl_handmade_infer):
    """The folder of the TraceLens-style inference report on perf_ops.json (pseudo ops on, grouped by parent
    module)."""
    return tl_handmade_infer / "perf_ops"


@pytest.mark.parametrize("sheet", ["SDPA_fwd", "Normalization_fwd", "SSM_fwd", "FusedRoPE_fwd", "mHC_fwd",
                                   "unified_perf_summary"])
def test_perf_ops_inference_report_equals_tracelens(perf_inference, sheet):
    """TraceLens 0.1.0's inference report on perf_ops.json: the SDPA, normalization, SSM, fused RoPE and mHC sheets
    grouped by num_kernels too, the normalization sheet named Normalization_fwd (that report names every sheet but
    GEMM and the elementwise ones <category>_fwd), no backward sheet, and the unified table with every family's
    metrics."""
    import polars as pl

    want = read_csv(DATA / "tracelens" / "perf_ops_inference" / f"{sheet}.csv")
    got = pl.read_csv(perf_inference / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)
    assert "num_kernels" in got.columns or sheet == "unified_perf_summary"
    written = {f.stem for f in perf_inference.glob("*.csv")}
    assert not written & {"SDPA_bwd", "SSM_bwd", "Normalization"}
