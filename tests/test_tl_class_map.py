"""Op names of TraceLens's perf-model class map that the shared references never exercise (GEMM, elementwise,
group-quant, RMSNorm, attention, RoPE, grouped-GEMM and other models in sql/peers/tracelens/perf_*.sql), one call
each on a hand-made trace (tests/data/tl_class_map/), against TraceLens's own CSVs for that trace."""
from __future__ import annotations

from pathlib import Path

import pytest

from tracesql.cli import main

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DATA = Path(__file__).parent / "data" / "tl_class_map"
SHEETS = ["GEMM", "UnaryElementwise", "BinaryElementwise", "RMSNorm_fwd", "SDPA_fwd", "SDPA_bwd", "RoPE_fwd",
          "GroupQuant_fwd", "GroupedGEMM_fwd", "Normalization", "MoE_comm_fwd", "CrossEntropy_fwd",
          "CustomCollective_fwd", "unified_perf_summary", "ops_summary_by_category"]


# TraceLens's inference report's versions of the perf report's sheets, and its unified table
INFER_SHEETS = ["BinaryElementwise", "SDPA_fwd", "RoPE_fwd", "GroupQuant_fwd", "GroupedGEMM_fwd", "Normalization_fwd",
                "MoE_comm_fwd", "CrossEntropy_fwd", "CustomCollective_fwd", "unified_perf_summary"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """The hand-made trace, ingested."""
    tmp = tmp_path_factory.mktemp("tl_class_map")
    assert main(["ingest", "-q", str(DATA / "class_map.json"), "--out", str(tmp / "ds")]) == 0
    return tmp / "ds"


@pytest.fixture(scope="module")
def out(tl_handmade_perf):
    """The folder of `tracesql report --style tracelens --out` on the hand-made trace."""
    return tl_handmade_perf / "class_map"


@pytest.fixture(scope="module")
def infer(dataset):
    """{sheet: DataFrame} of INFER_SHEETS in the inference report (`--group-by-parent-module --pseudo-ops`),
    computed as `tracesql report` computes them (its shared views materialized once, then each section's query)."""
    import tracesql
    from tracesql.api import report

    sections = {f: (v, q) for f, v, q in report.peer_sections("tracelens", by_module=True)}
    views = report.materialized_views("tracelens") + report.materialized("report-tracelens-inference")
    with tracesql.open(dataset) as d, d.scope():
        (tid,) = [r[0] for r in d.con.sql("SELECT trace_id FROM traces").fetchall()]
        report.set_pseudo_ops(d, "tracelens", True)
        with d.materialized(views):
            return {s: report._peer_section(d, *sections[s], [tid])[tid] for s in INFER_SHEETS}


@pytest.mark.parametrize("sheet", SHEETS)
def test_sheet_equals_tracelens(out, sheet):
    """Every row and column of TraceLens 0.1.0's file for the same trace (tests/data/tl_class_map/README.md)."""
    import polars as pl

    want = read_csv(DATA / "tracelens" / f"{sheet}.csv")
    got = pl.read_csv(out / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)


@pytest.mark.parametrize("sheet", INFER_SHEETS)
def test_inference_sheet_equals_tracelens(infer, sheet):
    """Every row and column of TraceLens 0.1.0's inference report file: the perf report's sheets grouped by
    num_kernels too, Normalization_fwd.csv, and the unified table with the metrics of every family (RoPE, group
    quant, grouped GEMM, MoE dispatch/combine, cross entropy and custom collectives read as in the perf report)."""
    assert_sheet_equal(infer[sheet], read_csv(DATA / "tracelens_inference" / f"{sheet}.csv"),
                       text=frozenset({"parent_module", "call_stack_first"}))
    assert sheet == "unified_perf_summary" or "num_kernels" in infer[sheet].columns


def test_gemm_names(out):
    """Every GEMM op name of the trace is a row of GEMM.csv (the two calls of aiter::gemm_a8w8_blockscale_ck one)."""
    rows = {r["name"]: r for r in read_csv(out / "GEMM.csv")}
    assert len(rows) == 15 and rows["aiter::gemm_a8w8_blockscale_ck"]["name_count"] == "2"
    assert {"tex_ts::te_gemm_ts", "vllm::gemm_with_dynamic_quant", "aiter::gemm_afp4wfp4_", "aiter::_gemm_a4w4_asm",
            "primus_turbo::hipblaslt_gemm_fp8", "aiter::batched_gemm_a16wfp4_"} < set(rows)


def test_gemm_a8w8_blockscale(out):
    """x (64, 7168) by w (2112, 7168) in FP8 with scales (64, 56) and (17, 56): block_k = ceil(7168 / 56) = 128,
    block_n = ceil(2112 / 17) = 125; bytes M·K + N·K + M·N·2 (bf16 out). aiter::gemm_a8w8_ck records no scales:
    its quant columns are empty, so block_k and block_n print as floats."""
    rows = {r["name"]: r for r in read_csv(out / "GEMM.csv")}
    r, noq = rows["aiter::gemm_a8w8_blockscale_ck"], rows["aiter::gemm_a8w8_ck"]
    m, n, k = 64, 2112, 7168
    assert (r["param: block_k"], r["param: block_n"], r["param: scale_dtype"], r["param: output_shape"]) == (
        "128.0", "125.0", "float", "(64, 2112)")
    assert (noq["param: quant_scheme"], noq["param: block_k"], noq["param: output_dtype"]) == ("", "", "c10::bfloat16")
    assert float(r["GFLOPS_first"]) == 2 * m * n * k / 1e9
    assert float(r["Data Moved (MB)_first"]) == (m * k + n * k + m * n * 2) / 2**20
    assert r["Compute Spec"] == "matrix_fp8" and float(r["Kernel Time (µs)_sum"]) == 24.0


def test_fp4_gemms(out):
    """MXFP4 shapes are packed: K is twice the recorded one. hipblaslt_gemm_fp4 with transC swaps A (2048, 4096)
    and B (1024, 4096): M = 1024, N = 2048, K = 8192; bytes M·K/2 + N·K/2 + (M + N)·K/32 scales + M·N·2.
    gemm_afp4wfp4 counts A and B at half a byte each and is fp4 whatever its uint8 dtype says."""
    rows = {r["name"]: r for r in read_csv(out / "GEMM.csv")}
    hb, af = rows["primus_turbo_cpp_extension::hipblaslt_gemm_fp4"], rows["aiter::gemm_afp4wfp4_"]
    m, n, k = 1024, 2048, 8192
    assert (hb["param: M"], hb["param: N"], hb["param: K"], hb["param: transpose"]) == ("1024", "2048", "8192",
                                                                                       "(True, False)")
    assert float(hb["Data Moved (MB)_first"]) == (m * k // 2 + n * k // 2 + (m + n) * k // 32 + m * n * 2) / 2**20
    m, n, k = 256, 7168, 7168
    assert (af["param: K"], af["Compute Spec"]) == ("7168", "matrix_fp4")
    assert float(af["Data Moved (MB)_first"]) == (m * k * 0.5 + k * n * 0.5 + m * n * 2) / 2**20


def test_gated_activations(out):
    """(out, input) = ((64, 8192), (64, 16384)) bf16: op_shape is out's; FLOPs 5 (SiLU), 8 (GELU) or 10 (GELU tanh)
    per output element; bytes 2·n·2 + n·2."""
    rows = {r["name"]: r for r in read_csv(out / "UnaryElementwise.csv")}
    n = 64 * 8192
    for name, per in (("aiter::gelu_and_mul", 8), ("aiter::gelu_tanh_and_mul", 10)):
        assert rows[name]["param: op_shape"] == "(64, 8192)"
        assert float(rows[name]["GFLOPS_first"]) == per * n / 1e9
        assert float(rows[name]["Data Moved (MB)_first"]) == 3 * n * 2 / 2**20
    assert float(rows["aiter::silu_and_mul"]["GFLOPS_first"]) == 5 * 32 * 14336 / 1e9


def test_quantizers(out):
    """Primus's dual MXFP4 quantizer of (1000, 4096) bf16: M·N·2 read, two packed FP4 copies (M·N bytes) and
    M·ceil(N/32) + N·ceil(M/32) scales. aiter's per-token FP8 quantizer (out, input, scales): FLOPs 2.59375 per
    output element. vLLM's Triton group quantizer of (64, 7000) by groups of 128: 55 groups, FLOPs 6·M·N, bytes
    M·N·2 + M·N + M·55·4."""
    u = {r["name"]: r for r in read_csv(out / "UnaryElementwise.csv")}
    b = {r["name"]: r for r in read_csv(out / "BinaryElementwise.csv")}
    m, n = 1000, 4096
    mx = u["primus_turbo_cpp_extension::quantize_mxfp4_dual"]
    assert mx["param: dtype_in_out"] == "('c10::BFloat16', 'c10::Float4_e2m1fn_x2')"
    assert float(mx["Data Moved (MB)_first"]) == (m * n * 2 + m * n + m * (n // 32) + n * 32) / 2**20
    tok = b["aiter::dynamic_per_token_scaled_quant"]
    assert (tok["param: shape_in1"], tok["param: shape_in2"], tok["param: shape_out"]) == (
        "(128, 7168)", "(128, 1)", "(128, 7168)")
    assert float(tok["GFLOPS_first"]) == 128 * 7168 * 2.59375 / 1e9
    tri = b["vllm::triton_per_token_group_quant_fp8"]
    assert (tri["param: M"], tri["param: N"], tri["param: group_size"], tri["param: num_groups"]) == (
        "64.0", "7000.0", "128.0", "55.0")
    assert float(tri["Data Moved (MB)_first"]) == (64 * 7000 * 3 + 64 * 55 * 4) / 2**20


def test_rmsnorm_ops(out):
    """aiter's and vLLM's RMSNorm ops in the perf report's RMSNorm_fwd.csv (not only the inference report's). With
    n elements of x and c channels: RMSNorm FLOPs n/c·(2c + 2) + 2n; the residual add + n, per-group FP8 quant + 2n
    (rmsnorm_quant of (16, 7000) by groups of 128: 55 FP32 scales a row); the padded output of add_rmsnorm_pad
    (64, 2880) rounds 2880 up to 3072; the MXFP4 quant with x2 (32, 512) and a residual adds both."""
    rows = {r["name"]: r for r in read_csv(out / "RMSNorm_fwd.csv")}
    assert len(rows) == 12

    def base(n, c):
        return n / c * (2 * c + 2) + 2 * n

    q = rows["aiter::rmsnorm_quant"]
    n, c = 16 * 7000, 7000
    assert (q["param: op_shape"], q["param: num_channels"]) == ("(16, 7000)", "7000")
    assert float(q["GFLOPS_first"]) == pytest.approx((base(n, c) + 2 * n) / 1e9, rel=1e-15)
    assert float(q["Data Moved (MB)_first"]) == (n * 2 + c * 2 + n + 16 * 55 * 4) / 2**20
    pad = rows["vllm::rocm_aiter_triton_add_rmsnorm_pad"]
    n, c = 64 * 2880, 2880
    assert float(pad["Data Moved (MB)_first"]) == (2 * n * 2 + c * 2 + 64 * 3072 * 2 + n * 2) / 2**20
    fp4 = rows["aiter::_fuse_rmsnorm_fp4_quant"]
    n, c, n2 = 32 * 1536, 1536, 512
    flops = base(n, c) + 32 * c + int(base(n, c) * 32 * n2 / n) + 2 * n
    assert float(fp4["GFLOPS_first"]) == pytest.approx(flops / 1e9, rel=1e-15)
    moved = n * 2 + c * 2 + n * 0.5 + n // 32 + 2 * n * 2 + 2 * 32 * n2 * 2 + n2 * 2
    assert float(fp4["Data Moved (MB)_first"]) == moved / 2**20


def test_aiter_attention(out):
    """aiter's mha_fwd: q (2, 1024, 16, 128), k and v (2, 1024, 8, 128) as (B, N, H, d), causal: FLOPs
    B·H_Q·4·N_Q·N_KV·d / 2; bytes (q + k + v + out elements)·2 whatever the dtype. The aiter models record no
    dtype: their dtype_A_B is empty (flash_attn's varlen op has one), and so is Compute Spec. wrapper_fmha_v3_fwd
    reads q, k, v after the output and its dropout from Concrete Inputs[4]."""
    rows = {r["name"]: r for r in read_csv(out / "SDPA_fwd.csv")}
    mha, v3w = rows["aiter::mha_fwd"], rows["aiter::wrapper_fmha_v3_fwd"]
    b, n, h_q, h_kv, d = 2, 1024, 16, 8, 128
    assert (mha["param: H_KV"], mha["param: causal"], mha["param: flash_impl"]) == ("8", "True", "True")
    assert (mha["param: dtype_A_B"], mha["Compute Spec"]) == ("", "")
    assert float(mha["GFLOPS_first"]) == b * h_q * 4 * n * n * d / 2 / 1e9
    assert float(mha["Data Moved (MB)_first"]) == (2 * b * n * h_q * d + 2 * b * n * h_kv * d) * 2 / 2**20
    assert (v3w["param: dropout"], v3w["param: causal"]) == ("0.1", "True")
    fa = rows["aiter::_flash_attn_forward"]
    assert (fa["param: N_Q"], fa["param: N_KV"], fa["param: causal"]) == ("512", "2048", "False")


def test_rope(out):
    """FusedRoPEFunc on (2048, 2, 32, 128) bf16: FLOPs 3·n, bytes 2·n·2. sgl_kernel::rotary_embedding: 256 tokens,
    query (256, 4096) and key (256, 1024) with head size 128 (Concrete Inputs[3]) and a cos/sin cache of 64 rotary
    dims: 256·(32 + 8)·64 elements. The parameters of one model print as floats, empty in the others' rows."""
    rows = {r["name"]: r for r in read_csv(out / "RoPE_fwd.csv")}
    fr, sk = rows["FusedRoPEFunc"], rows["sgl_kernel::rotary_embedding"]
    n = 2048 * 2 * 32 * 128
    assert (fr["param: seq_len"], fr["param: head_dim"], fr["param: x_shape"]) == ("2048.0", "128.0", "")
    assert float(fr["GFLOPS_first"]) == 3 * n / 1e9 and float(fr["Data Moved (MB)_first"]) == 4 * n / 2**20
    n = 256 * (32 + 8) * 64
    assert float(sk["param: num_elements"]) == n and float(sk["Data Moved (MB)_first"]) == 4 * n / 2**20
    assert sk["Compute Spec"] == "vector_bf16"


def test_mxfp4_group_quant(out):
    """GroupQuant_fwd.csv: x (64, 7168) bf16 to MXFP4: FLOPs 2·n, bytes n·2 + n/2 + n/32. aiter's moe-sort
    quantizer reads its input third (Input Dims[2])."""
    rows = {r["name"]: r for r in read_csv(out / "GroupQuant_fwd.csv")}
    r = rows["sglang_profiler::quant_dynamic_mxfp4_quant"]
    n = 64 * 7168
    assert (r["param: op_shape"], r["param: stride_input"]) == ("(64, 7168)", "")
    assert float(r["GFLOPS_first"]) == 2 * n / 1e9
    assert float(r["Data Moved (MB)_first"]) == (n * 2 + n / 2 + n // 32) / 2**20
    assert rows["aiter::fused_dynamic_mxfp4_quant_moe_sort_hip"]["param: op_shape"] == "(16, 2048)"
    flat = rows["sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant"]
    assert flat["param: stride_input"] == "(8192, 512, 1)"


def test_grouped_gemm(out):
    """Primus-Turbo's grouped GEMM of a (4096, 2048) by 8 weights (8, 2048, 1408): FLOPs 2·M·K·N, bytes (M·K +
    G·K·N)·2 + M·N·2; a (8, N, K) weight gives the same N. Variable-K in zipped form (lists of shapes, TensorList
    dtypes): M = Σ m_i over 3 groups, FLOPs Σ 2·m_i·k·n, no byte count; the zipped grouped_gemm with TensorList
    dtypes raises in TraceLens (no bytes per element) and has no row."""
    rows = {r["name"]: r for r in read_csv(out / "GroupedGEMM_fwd.csv")}
    assert "primus_turbo::grouped_gemm" not in rows and len(rows) == 4
    gg, ck = rows["primus_turbo::grouped_gemm_impl"], rows["primus_turbo_cpp_extension::ck_grouped_gemm"]
    m, k, n, g = 4096, 2048, 1408, 8
    assert (gg["param: M"], gg["param: K"], gg["param: N"], gg["param: G"]) == ("4096", "2048", "1408", "8")
    assert gg["param: bpe_in"] == "2.0"  # a float column: None (unknown dtype) in the variable-K row
    assert float(gg["GFLOPS_first"]) == 2 * m * k * n / 1e9
    assert float(gg["Data Moved (MB)_first"]) == ((m * k + g * k * n) * 2 + m * n * 2) / 2**20
    assert (ck["param: K"], ck["param: N"]) == ("1408", "2048")
    vk = rows["primus_turbo::grouped_gemm_variable_k"]
    assert vk["param: group_pairs"] == ("[((512, 1024), (1024, 2048)), ((256, 1024), (1024, 2048)), "
                                        "((768, 1024), (1024, 2048))]")
    assert (vk["param: M"], vk["param: G"], vk["param: bpe_in"], vk["Data Moved (MB)_first"]) == ("1536", "3", "", "")
    assert float(vk["GFLOPS_first"]) == 2 * 1536 * 1024 * 2048 / 1e9


def test_one_name_families(out):
    """primus::fused_ln_modulate of x (1024, 4, 3072) bf16: FLOPs 12·n, bytes 2·n·2 + 2·B·H·2 + 2·T·B·4, training
    with bias. MoEDispatch of (8192, 4096) bf16 tokens: no FLOPs, tokens·hidden·2 bytes, no Compute Spec.
    CrossEntropyFunction over (8192, 151936) logits: FLOPs 5·batch·vocab, bytes logits·2 + batch·(8 + 4); its
    logits_shape prints as the recorded list."""
    (ln,) = read_csv(out / "Normalization.csv")
    t, b, h = 1024, 4, 3072
    n = t * b * h
    assert (ln["param: num_channels"], ln["param: has_bias"], ln["param: is_training"]) == ("3072", "True", "True")
    assert float(ln["GFLOPS_first"]) == 12 * n / 1e9
    assert float(ln["Data Moved (MB)_first"]) == (2 * n * 2 + 2 * b * h * 2 + 2 * t * b * 4) / 2**20
    moe = {r["name"]: r for r in read_csv(out / "MoE_comm_fwd.csv")}
    d = moe["MoEDispatch"]
    assert (d["param: num_tokens"], d["param: hidden_dim"], d["param: bpe"], d["GFLOPS_first"]) == (
        "8192", "4096", "2", "0.0")
    assert float(d["Data Moved (MB)_first"]) == 8192 * 4096 * 2 / 2**20 and d["Compute Spec"] == ""
    (ce,) = read_csv(out / "CrossEntropy_fwd.csv")
    assert (ce["param: vocab_size"], ce["param: logits_shape"]) == ("151936", "[8192, 151936]")
    assert float(ce["GFLOPS_first"]) == 5 * 8192 * 151936 / 1e9
    assert float(ce["Data Moved (MB)_first"]) == (8192 * 151936 * 2 + 8192 * 12) / 2**20


def test_flash_attn_varlen_forward(out):
    """flash_attn's varlen forward of 4 packed sequences, 3000 tokens (the longest 1200), q (3000, 32, 128), k and v
    (3000, 8, 128), causal: the FLOPs of one 1200-token sequence plus 3 of the others' mean length (3000 − 1200) //
    3 = 600, each B·H·4·N²·d / 2; bytes over all 3000 tokens."""
    rows = {r["name"]: r for r in read_csv(out / "SDPA_fwd.csv")}
    r = rows["flash_attn::_flash_attn_varlen_forward"]
    assert (r["param: B"], r["param: N_Q"], r["param: num_seqs_q"], r["param: max_seqlen_q"]) == (
        "1", "3000", "4.0", "1200.0")
    h, d = 32, 128
    assert float(r["GFLOPS_first"]) == (h * 4 * 1200 * 1200 * d / 2 + 3 * (h * 4 * 600 * 600 * d / 2)) / 1e9
    assert float(r["Data Moved (MB)_first"]) == (2 * 3000 * 32 * 128 + 2 * 3000 * 8 * 128) * 2 / 2**20
