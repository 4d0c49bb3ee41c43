"""The compute model (sql/perf/): FLOPs and bytes per op family computed by hand on a small trace, the device table
and its overrides, the roofline columns, and the numbers on the shared trace nvidia/h100_qwen_infer."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import tracesql

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_000_000  # µs
KERNEL_US = 10  # every op of the fixture launches one kernel of 10 µs

BF, F32, F64, F16, FP8, I64 = "c10::BFloat16", "float", "double", "c10::Half", "c10::Float8_e4m3fn", "long int"

# (op name, Input Dims, Input type, Concrete Inputs, family, FLOPs, bytes, precision), FLOPs and bytes by hand.
OPS = [
    # GEMM: 2·M·N·K, A + B + C at their sizes (fp32: 4 bytes)
    ("aten::mm", [[64, 128], [128, 32]], [F32, F32], ["", ""], "GEMM",
     2 * 64 * 32 * 128, (64 * 128 + 128 * 32 + 64 * 32) * 4, "fp32"),
    # addmm: + M·N for the bias, + the bias's 32 elements
    ("aten::addmm", [[32], [64, 128], [128, 32], [], []], [BF, BF, BF, "Scalar", "Scalar"], ["", "", "", "1", "1"],
     "GEMM", 2 * 64 * 32 * 128 + 64 * 32, (64 * 128 + 128 * 32 + 64 * 32 + 32) * 2, "bf16"),
    ("aten::bmm", [[4, 16, 8], [4, 8, 32]], [F16, F16], ["", ""], "GEMM",
     4 * 2 * 16 * 32 * 8, 4 * (16 * 8 + 8 * 32 + 16 * 32) * 2, "fp16"),
    # fp8 inputs (1 byte), out_dtype 6 (float): output 4 bytes; the 0-dim fp32 scales are not a bias
    ("aten::_scaled_mm", [[32, 64], [64, 16], [], [], [], [], [], []],
     [FP8, FP8, F32, F32, "", "", "ScalarType", "Scalar"], ["", "", "", "", "", "", "6", "False"], "GEMM",
     2 * 32 * 16 * 64, 32 * 64 + 64 * 16 + 32 * 16 * 4, "fp8"),
    # fp8 GEMM of Primus-Turbo's hipBLASLt binding, B transposed ([N, K]), fp32 output (out_dtype 6)
    ("primus_turbo_cpp_extension::hipblaslt_gemm_fp8", [[32, 64], [], [16, 64], [], [], [], [], [], []],
     [FP8, F32, FP8, F32, "ScalarType", "Scalar", "Scalar", "Scalar", "Scalar"],
     ["", "", "", "", "6", "False", "True", "False", "0"], "GEMM",
     2 * 32 * 16 * 64, 32 * 64 + 64 * 16 + 32 * 16 * 4, "fp8"),
    # SDPA in fp32 ([B, H, N, d] = [2, 4, 128, 64]): 4·B·H·N²·d; Q, K, V, O at 4 bytes
    ("aten::_scaled_dot_product_efficient_attention", [[2, 4, 128, 64]] * 3 + [[], [], [], [], []],
     [F32, F32, F32, "", "Scalar", "Scalar", "Scalar", ""], ["", "", "", "", "True", "0.", "False", ""],
     "SDPA_fwd", 4 * 2 * 4 * 128 * 128 * 64, 4 * (2 * 4 * 128 * 64) * 4, "fp32"),
    # causal GQA flash attention ([B, N, H, d]: 8 query heads, 2 KV heads): halved
    ("aten::_flash_attention_forward", [[1, 256, 8, 64], [1, 256, 2, 64], [1, 256, 2, 64]] + [[]] * 8,
     [BF, BF, BF, "", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
     ["", "", "", "", "", "256", "256", "0.", "True", "False", "0.125"], "SDPA_fwd",
     2 * 1 * 8 * 256 * 256 * 128 // 2, (256 * 8 * 64 * 2 + 256 * 2 * 64 * 2) * 2, "bf16"),
    # backward ([B, H, N, d] = [1, 2, 64, 32]): recompute QKᵀ + 4 products; reads Q K V dO, writes dQ dK dV
    ("aten::_scaled_dot_product_flash_attention_backward", [[1, 2, 64, 32]] * 5 + [[1, 2, 64]] + [[]] * 6,
     [BF] * 5 + [F32, "", "", "Scalar", "Scalar", "Scalar", "Scalar"],
     ["", "", "", "", "", "", "", "", "64", "64", "0.", "False"], "SDPA_bwd",
     2 * (1 * 2 * 64 * 64) * (3 * 32 + 2 * 32), 7 * (1 * 2 * 64 * 32) * 2, "bf16"),
    # efficient-attention backward in fp16, causal ([B, H, N, d] = [1, 4, 32, 16]): halved
    ("aten::_scaled_dot_product_efficient_attention_backward", [[1, 4, 32, 16]] * 4 + [[], [1, 4, 32, 16], [1, 4, 32]]
     + [[]] * 5, [F16] * 4 + ["", F16, F32, I64, I64, "Scalar", "ScalarList", "Scalar"],
     [""] * 9 + ["0.", "[True, True, True, False]", "True"], "SDPA_bwd",
     2 * (1 * 4 * 32 * 32) * (3 * 16 + 2 * 16) // 2, 7 * (1 * 4 * 32 * 16) * 2, "fp16"),
    # elementwise: one FLOP per output element
    ("aten::silu", [[1024, 256]], [BF], [""], "UnaryElementwise", 1024 * 256, 1024 * 256 * 2 * 2, "fp32"),
    ("aten::exp", [[1000]], [F64], [""], "UnaryElementwise", 1000, 1000 * 8 * 2, "fp32"),
    # broadcast [16, 1, 64] + [1, 32, 64] -> [16, 32, 64]
    ("aten::add", [[16, 1, 64], [1, 32, 64], []], [F32, F32, "Scalar"], ["", "", "1"], "BinaryElementwise",
     16 * 32 * 64, (16 * 64 + 32 * 64 + 16 * 32 * 64) * 4, "fp32"),
    # a bf16 tensor times a wrapped double scalar (a 0-dim tensor of 8 bytes)
    ("aten::mul", [[1024], []], [BF, F64], ["", ""], "BinaryElementwise", 1024, 1024 * 2 + 8 + 1024 * 2, "fp32"),
    ("aten::copy_", [[4096], [4096], []], [BF, F32, "Scalar"], ["", "", "False"], "Copy", 0, 4096 * (2 + 4), "fp32"),
    # reductions: one FLOP per input element; the output is the input without the reduced dims
    ("aten::sum", [[8, 1024], [], [], []], [F32, "ScalarList", "Scalar", ""], ["", "[-1]", "False", ""], "Reduce",
     8 * 1024, 8 * 1024 * 4 + 8 * 4, "fp32"),
    ("aten::mean", [[100], []], [F64, ""], ["", ""], "Reduce", 100, 100 * 8 + 8, "fp32"),
    ("aten::_softmax", [[32, 512], [], []], [BF, "Scalar", "Scalar"], ["", "-1", "False"], "Softmax_fwd",
     3 * 32 * 512, 2 * 32 * 512 * 2, "fp32"),
    # layer norm over 512 elements, 8 rows: 8·numel + rows; x, y, γ, β, and fp32 mean and 1/σ per row
    ("aten::native_layer_norm", [[8, 512], [], [512], [512], []], [BF, "ScalarList", BF, BF, "Scalar"],
     ["", "[512]", "", "", "1e-05"], "LayerNorm_fwd", 8 * 4096 + 8, 2 * 4096 * 2 + 2 * 512 * 2 + 8 * 8, "fp32"),
    ("aten::native_layer_norm_backward", [[8, 512], [8, 512], [], [8, 1], [8, 1], [512], [512], []],
     [BF, BF, "ScalarList", F32, F32, BF, BF, "ScalarList"], ["", "", "[512]", "", "", "", "", "[True, True, True]"],
     "LayerNorm_bwd", 11 * 4096, 3 * 4096 * 2 + 3 * 512 * 2 + 8 * 8, "fp32"),
    # RMS norm in fp32 over 256 elements, 4 rows: 4·numel + 2·rows; x, y, γ
    ("aten::_fused_rms_norm", [[4, 256], [], [256], []], [F32, "ScalarList", F32, "Scalar"],
     ["", "[256]", "", "1e-06"], "RMSNorm_fwd", 4 * 1024 + 2 * 4, 2 * 1024 * 4 + 256 * 4, "fp32"),
    # 3×3 convolution, padding 1: output 32×32; 2·N·C_out·HW·C_in·k² + bias
    ("aten::convolution", [[2, 3, 32, 32], [16, 3, 3, 3], [16], [], [], [], [], [], []],
     [F32, F32, F32, "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
     ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"], "CONV_fwd",
     2 * 2 * 16 * 1024 * 3 * 9 + 2 * 16 * 1024, (2 * 3 * 1024 + 16 * 27 + 2 * 16 * 1024 + 16) * 4, "fp32"),
    # its backward for input and weight: twice the product; reads dy, x, w, writes dx, dw
    ("aten::convolution_backward", [[2, 16, 32, 32], [2, 3, 32, 32], [16, 3, 3, 3]] + [[]] * 8,
     [F32, F32, F32, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar",
      "ScalarList"],
     ["", "", "", "[16]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"], "CONV_bwd",
     2 * (2 * 2 * 16 * 1024 * 3 * 9), (2 * 16 * 1024 + 2 * (2 * 3 * 1024) + 2 * (16 * 27)) * 4, "fp32"),
    # group norm backward, 2 groups of 4 channels × 16 positions per sample: 11·numel; dy, x, dx, γ, dγ, dβ, stats
    ("aten::native_group_norm_backward", [[2, 8, 4, 4], [2, 8, 4, 4], [2, 2], [2, 2], [8], [], [], [], [], []],
     [F32] * 5 + ["Scalar"] * 4 + ["ScalarList"], ["", "", "", "", "", "2", "8", "16", "2", "[True, True, True]"],
     "GroupNorm_bwd", 11 * 256, 3 * 256 * 4 + 3 * 8 * 4 + 8 * 4, "fp32"),
    # vLLM's residual add + RMS norm: 5·numel + 2·rows; input and residual read and written, γ read
    ("_C::fused_add_rms_norm", [[16, 1024], [16, 1024], [1024], []], [BF, BF, BF, "Scalar"], ["", "", "", "1e-06"],
     "RMSNorm_fwd", 5 * 16384 + 2 * 16, 4 * 16384 * 2 + 1024 * 2, "fp32"),
    # vLLM RoPE: 8 tokens, 4 query heads and 1 key head of 64, fully rotated: 3 FLOPs per rotated element
    ("_C::rotary_embedding", [[8], [8, 256], [8, 64], [], [4096, 64], []], [I64, BF, BF, "Scalar", BF, "Scalar"],
     ["", "", "", "64", "", "True"], "RoPE_fwd", 3 * 8 * 5 * 64, 2 * 8 * 5 * 64 * 2 + 8 * 64 * 2 + 8 * 8, "fp32"),
    # MoE grouped GEMM: 128 tokens × K 256 against 8 experts' [256, 512]: 2·T·K·N
    ("aten::_grouped_mm", [[128, 256], [8, 256, 512], [8], [], []], [BF, BF, "int", "", ""], ["", "", "", "", ""],
     "MoE_GroupedGEMM", 2 * 128 * 256 * 512, (128 * 256 + 8 * 256 * 512 + 128 * 512) * 2, "bf16"),
    # embedding: 64 rows of 64 bf16 read and written, 64 int64 indices
    ("aten::embedding", [[1000, 64], [4, 16], [], [], []], [BF, I64, "Scalar", "Scalar", "Scalar"],
     ["", "", "-1", "False", "False"], "Embedding_fwd", 0, 2 * 64 * 64 * 2 + 64 * 8, "fp32"),
]
NOT_MODELLED = ("aten::cat", [[[4], [4]], []], ["TensorList", "Scalar"], ["", "0"])

# NVIDIA A100 SXM4 80GB, sql/perf/devices.csv (datasheet: dense TFLOP/s; TB/s)
A100: dict[str, float] = {"fp32": 19.5, "bf16": 312.0, "fp16": 312.0, "memory": 2.039}  # no fp8 peak
STEP_US = 100 * (len(OPS) + 1) + 50


def _trace(gpu_name: str | None) -> dict:
    ev: list[dict] = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
                       "ts": T0 - 10, "dur": STEP_US}]
    for i, (name, dims, types, conc, *_) in enumerate(OPS + [NOT_MODELLED + (None,)]):
        ts, corr = T0 + 100 * i, 500 + i
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 50,
                   "args": {"Input Dims": dims, "Input type": types, "Concrete Inputs": conc,
                            "Input Strides": [[] for _ in dims]}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 1,
                   "dur": 5, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": f"fixture_kernel_{i}", "pid": 0, "tid": 7,
                   "ts": ts + 20, "dur": KERNEL_US, "args": {"device": 0, "stream": 7, "correlation": corr}})
    out: dict = {"schemaVersion": 1, "traceEvents": ev}
    if gpu_name is not None:
        out["deviceProperties"] = [{"id": 0, "name": gpu_name, "totalGlobalMem": 85_000_000_000, "numSms": 108}]
    return out


def _dataset(tmp_path_factory, tag: str, gpu_name: str | None) -> Path:
    d = tmp_path_factory.mktemp(tag)
    (d / "t.json").write_text(json.dumps(_trace(gpu_name)))
    [r] = tracesql.ingest([str(d / "t.json")], out=d / "ds", quiet=True)
    assert r.status == "ingested", r.error
    return d / "ds"


@pytest.fixture(scope="module")
def fixture_ds(tmp_path_factory):
    """The fixture on an A100, its perf views computed once (temporary tables)."""
    from tracesql.api.tree import materialize
    from tracesql.store.sqlmodules import materialized

    ds = tracesql.open(_dataset(tmp_path_factory, "perf", "NVIDIA A100-SXM4-80GB"))
    materialize(ds, materialized("perf"))
    ds.perf_rows = _ops(ds)  # type: ignore[attr-defined]
    yield ds
    ds.close()


@pytest.fixture(scope="module")
def unknown_ds(tmp_path_factory):
    ds = tracesql.open(_dataset(tmp_path_factory, "perf_unknown", "Quadro GP100"))
    yield ds
    ds.close()


def _ops(ds) -> dict:
    rows = ds.sql("""SELECT op_name, family, flops, bytes, precision, kernel_time_ns, tflop_per_s, tb_per_s,
                            gpu, peak_tflop_per_s, memory_tb_per_s, roofline_ns, bound, roofline_pct
                     FROM perf_ops""").rows(named=True)
    return {r["op_name"]: r for r in rows}


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS, ids=[o[0] for o in OPS])
def test_flops_and_bytes_by_hand(fixture_ds, op):
    name, _, _, _, family, flops, nbytes, precision = op
    r = fixture_ds.perf_rows[name]
    assert (r["family"], r["flops"], r["bytes"], r["precision"]) == (family, flops, nbytes, precision)
    assert r["kernel_time_ns"] == KERNEL_US * 1000
    # SI units: 10¹² FLOP/s and 10¹² bytes/s over the kernel time
    assert r["tflop_per_s"] == pytest.approx(flops / (KERNEL_US * 1e-6) / 1e12)
    assert r["tb_per_s"] == pytest.approx(nbytes / (KERNEL_US * 1e-6) / 1e12)


@pytest.mark.parametrize("op", [o for o in OPS if o[7] in A100], ids=lambda o: o[0])
def test_roofline_on_the_recognised_gpu(fixture_ds, op):
    name, *_, flops, nbytes, precision = op
    r = fixture_ds.perf_rows[name]
    t_compute, t_memory = flops / (A100[precision] * 1e12), nbytes / (A100["memory"] * 1e12)
    assert r["gpu"] == "A100 SXM4 80GB"
    assert r["peak_tflop_per_s"] == A100[precision] and r["memory_tb_per_s"] == A100["memory"]
    assert r["roofline_ns"] == pytest.approx(max(t_compute, t_memory) * 1e9)
    assert r["bound"] == ("compute" if t_compute >= t_memory else "memory")
    assert r["roofline_pct"] == pytest.approx(100 * max(t_compute, t_memory) / (KERNEL_US * 1e-6))


def test_a100_has_no_fp8_peak(fixture_ds):
    r = fixture_ds.perf_rows["aten::_scaled_mm"]
    assert r["peak_tflop_per_s"] is None and r["roofline_ns"] is None and r["flops"] == 2 * 32 * 16 * 64


def test_categories_traces_and_steps(fixture_ds):
    cats = {r["family"]: r for r in fixture_ds.sql("SELECT * FROM perf_categories").rows(named=True)}
    n_gpu = len(OPS) + 1
    assert cats["GEMM"]["op_count"] == 5 and cats["GEMM"]["kernel_time_ns"] == 5 * KERNEL_US * 1000
    assert cats["(not modelled)"]["op_count"] == 1
    assert sum(r["time_pct"] for r in cats.values()) == pytest.approx(100)
    assert cats["GEMM"]["time_pct"] == pytest.approx(100 * 5 / n_gpu)
    [t] = fixture_ds.sql("SELECT * FROM perf_traces").rows(named=True)
    assert (t["gpu_name"], t["gpu"], t["reason"]) == ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB", None)
    assert t["gpu_time_ns"] == n_gpu * KERNEL_US * 1000 and t["modelled_time_ns"] == len(OPS) * KERNEL_US * 1000
    assert t["modelled_pct"] == pytest.approx(100 * len(OPS) / n_gpu)
    assert t["flops"] == sum(o[5] for o in OPS) and t["bytes"] == sum(o[6] for o in OPS)
    # MFU: the step's FLOPs over its duration, against the peak of the precision with the most FLOPs
    by_prec: dict[str, int] = {}
    for o in OPS:
        by_prec[o[7]] = by_prec.get(o[7], 0) + o[5]
    top = max(by_prec, key=lambda p: by_prec[p])
    [s] = fixture_ds.sql("SELECT * FROM perf_steps").rows(named=True)
    assert (s["step_number"], s["precision"], s["flops"]) == (1, top, sum(o[5] for o in OPS))
    assert s["mfu_pct"] == pytest.approx(100 * sum(o[5] for o in OPS) / (STEP_US * 1e-6) / (A100[top] * 1e12))


def test_arg_sets(fixture_ds):
    [r] = fixture_ds.sql("SELECT * FROM perf_args WHERE op_name = 'aten::mm'").rows(named=True)
    assert r["input_dims"] == "((64, 128), (128, 32))" and r["input_type"] == "('float', 'float')"
    assert r["count"] == 1 and r["kernel_time_sum_ns"] == KERNEL_US * 1000


@pytest.mark.slow
def test_unknown_gpu_keeps_flops_and_says_why(unknown_ds):
    [t] = unknown_ds.sql("SELECT gpu_name, gpu, reason, flops FROM perf_traces").rows(named=True)
    assert t["gpu_name"] == "Quadro GP100" and t["gpu"] is None
    assert "'Quadro GP100' is not in the device table" in t["reason"]
    assert t["flops"] == sum(o[5] for o in OPS)
    nulls = unknown_ds.sql("""SELECT count(*) AS n, count(roofline_ns) AS roof, count(flops) AS f,
                                     count(tflop_per_s) AS tf FROM perf_ops""").row(0)
    assert nulls == (len(OPS), 0, len(OPS), len(OPS))


@pytest.mark.slow
def test_arch_name_and_user_spec_override(unknown_ds):
    con = unknown_ds.con
    try:
        con.execute("SET VARIABLE tracesql_perf_arch = 'h100 sxm'")
        r = con.execute("SELECT gpu, memory_tb_s, reason FROM perf_device").fetchone()
        assert r == ("H100 SXM", 3.35, None)
        con.execute("SET VARIABLE tracesql_perf_arch = 'no such gpu'")
        assert "no GPU named 'no such gpu'" in con.execute("SELECT reason FROM perf_device").fetchone()[0]
        # a user row for the trace's GPU: recognised from deviceProperties, its peaks used
        con.execute("RESET VARIABLE tracesql_perf_arch")
        con.execute("SET VARIABLE tracesql_perf_spec = ?", [
            "gpu,name_pattern,fp32_tflops,memory_tb_s\nMy GP100,GP100,10.6,0.717\n"])
        r = con.execute("SELECT gpu, origin, fp32_tflops, memory_tb_s FROM perf_device").fetchone()
        assert r == ("My GP100", "user", 10.6, 0.717)
        mm = con.execute("SELECT roofline_ns FROM perf_ops WHERE op_name = 'aten::mm'").fetchone()[0]
        assert mm == pytest.approx(max(2 * 64 * 32 * 128 / 10.6e12, 57344 / 0.717e12) * 1e9)
    finally:
        con.execute("RESET VARIABLE tracesql_perf_arch")
        con.execute("RESET VARIABLE tracesql_perf_spec")


def test_device_table_is_complete_and_unambiguous():
    rows = list(csv.DictReader((ROOT / "sql/perf/devices.csv").open()))
    names = {r["gpu"] for r in rows}
    for need in ["H100 SXM", "H100 PCIe", "H100 NVL", "H200 SXM", "H800 SXM", "H20", "B200", "GB200",
                 "A100 SXM4 40GB", "A100 SXM4 80GB", "A100 PCIe 40GB", "A100 PCIe 80GB", "A10G", "L4", "L40S",
                 "V100 SXM2", "MI300X", "MI325X", "MI355X", "MI250X", "MI210"]:
        assert need in names
    for r in rows:
        assert r["source_url"].startswith("https://") and float(r["memory_tb_s"]) > 0, r["gpu"]
    import duckdb

    con = duckdb.connect()
    seen = ["NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200", "NVIDIA H20",
            "NVIDIA B200", "NVIDIA GB200", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB",
            "NVIDIA A100 80GB PCIe", "NVIDIA A10G", "NVIDIA L4", "NVIDIA L40S", "Tesla V100-SXM2-32GB",
            "NVIDIA B300 SXM6 AC", "NVIDIA GB200", "NVIDIA H800", "NVIDIA H800 PCIe", "NVIDIA H200 NVL",
            "AMD Instinct MI300X", "AMD Instinct MI300X VF", "AMD Instinct MI325X", "AMD Instinct MI355X",
            "AMD Instinct MI250X", "AMD Instinct MI210"]
    for name in seen:  # every deviceProperties name matches exactly one row
        hits = [r["gpu"] for r in rows
                if con.execute("SELECT regexp_matches(?, ?)", [name, r["name_pattern"]]).fetchall()[0][0]]
        assert len(hits) == 1, (name, hits)


# ---- the shared trace ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def qwen(qwen_dataset):
    ds = tracesql.open(qwen_dataset[0])
    yield ds
    ds.close()


@pytest.mark.slow
def test_qwen_gpu_and_share_modelled(qwen):
    [t] = qwen.sql("SELECT * FROM perf_traces").rows(named=True)
    assert (t["gpu_name"], t["gpu"]) == ("NVIDIA H100 80GB HBM3", "H100 SXM")
    # 45.647 ms of GPU events; 31.905 ms of them launched by an op; the model covers all but aten::cat (2.018 ms)
    # and two small ops (3.9 µs)
    assert (t["gpu_time_ns"], t["op_time_ns"], t["modelled_time_ns"]) == (45_647_300, 31_905_473, 29_883_819)
    assert t["modelled_op_pct"] == pytest.approx(93.6636, abs=1e-4)
    cats = {r["family"]: r["op_count"] for r in qwen.sql("SELECT * FROM perf_categories").rows(named=True)}
    assert cats == {"GEMM": 169, "BinaryElementwise": 415, "Copy": 197, "SDPA_fwd": 24, "UnaryElementwise": 123,
                    "Reduce": 50, "Embedding_fwd": 1, "(not modelled)": 51}


@pytest.mark.slow
def test_qwen_hot_ops(qwen):
    rows = qwen.sql("""SELECT op_name, shape, flops, bytes, count, bound FROM perf_args
                       WHERE family IN ('GEMM', 'SDPA_fwd') ORDER BY kernel_time_sum_ns DESC""").rows(named=True)
    mm = next(r for r in rows if r["shape"] == "B=1 M=8944 N=2816 K=1024")
    assert mm["flops"] == 2 * 8944 * 2816 * 1024 and mm["bytes"] == (8944 * 1024 + 1024 * 2816 + 8944 * 2816) * 2
    assert mm["bound"] == "compute"
    fa = next(r for r in rows if r["op_name"] == "aten::_flash_attention_forward")
    # q, k, v [16, 559, 16, 64] bf16, causal: 4·B·H·N²·d / 2
    assert fa["flops"] == 4 * 16 * 16 * 559 * 559 * 64 // 2 and fa["bytes"] == 4 * 16 * 559 * 16 * 64 * 2
    assert fa["count"] == 24


# ---- Dataset.perf and `tracesql perf` ------------------------------------------------------------------

@pytest.mark.slow
def test_dataset_perf_selections(qwen):
    cats = qwen.perf(by="category", micros=False)
    assert set(cats["trace"]) == {"h100_qwen_infer.json.gz"}
    from polars.testing import assert_frame_equal

    # the same rows as the view (sums of floats in another order: equal to 1e-12)
    assert_frame_equal(cats.drop("trace").sort("family"), qwen.sql("SELECT * FROM perf_categories").sort("family"),
                       rel_tol=1e-12)
    mem = qwen.perf(bound="memory", below_pct=30)
    assert mem.height > 0 and set(mem["bound"]) == {"memory"} and mem["roofline_pct"].max() < 30
    # the flash attention forward is the hot op farthest below its roofline: 19.28 % (memory bound)
    assert "aten::_flash_attention_forward" in set(mem["op_name"])
    ops = qwen.perf(by="op", arch="MI300X")
    mm = ops.filter(ops["op_name"] == "aten::mm").row(0, named=True)
    assert mm["gpu"] == "MI300X" and mm["count"] == 96 and mm["kernel_time_sum_us"] == pytest.approx(6668.679)
    # the override lasts for the call only, and the views are live again afterwards
    assert qwen.sql("SELECT gpu FROM perf_device").item() == "H100 SXM"
    assert qwen.sql("SELECT count(*) FROM duckdb_tables() WHERE temporary").item() == 0
    kernels = qwen.perf(by="kernel", micros=False)
    fa = kernels.filter(kernels["family"] == "SDPA_fwd").row(0, named=True)
    assert fa["kernel_name"] == "pytorch_flash::flash_fwd_kernel" and fa["count"] == 24


def test_arch_after_a_report_materialized_the_views(qwen):
    """A report leaves the first screen's perf views (@materialize summary: argument sets and their models, which
    do not read the device) as temporary tables, and a `perf --arch` call leaves its own (per-op roofline) as
    it found them; each call sees its own device."""
    from tracesql.store.dataset import materialize
    from tracesql.store.sqlmodules import materialized

    assert "perf_ops" not in materialized("summary") and "perf_ops" not in materialized("report")
    materialize(qwen, materialized("summary"))
    try:
        assert set(qwen.perf(arch="MI300X")["gpu"]) == {"MI300X"}
        assert set(qwen.perf()["gpu"]) == {"H100 SXM"}
        assert qwen.sql("SELECT gpu FROM perf_overview").item() == "H100 SXM"
        materialize(qwen, ["perf_ops"])
        assert set(qwen.perf(arch="MI300X")["gpu"]) == {"MI300X"}
        assert qwen.sql("SELECT DISTINCT gpu FROM temp.main.perf_ops").item() == "H100 SXM"
    finally:
        for name in reversed(materialized("summary") + ["perf_ops"]):
            qwen.execute(f'DROP TABLE IF EXISTS temp.main."{name}"')


@pytest.mark.slow
def test_cli_perf(qwen_dataset, unknown_ds, tmp_path):
    import subprocess

    from tests.conftest import tracesql_cli

    out = tmp_path / "ops.csv"
    r = subprocess.run(tracesql_cli() + ["perf", str(qwen_dataset[0]), "--by", "op", "-f", "csv", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = {row["op_name"]: row for row in csv.DictReader(out.open())}
    assert rows["aten::mm"]["count"] == "96" and rows["aten::mm"]["bound"] == "compute"
    assert float(rows["aten::mm"]["kernel_time_sum_us"]) == pytest.approx(6668.679)
    r = subprocess.run(tracesql_cli() + ["perf", str(qwen_dataset[0]), "--arch", "no such gpu"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "unknown --arch" in r.stderr
    r = subprocess.run(tracesql_cli() + ["perf", str(unknown_ds.path), "--by", "category", "-f", "csv"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "no roofline: GPU 'Quadro GP100' is not in the device table" in r.stderr
    spec = tmp_path / "gp100.csv"
    spec.write_text("gpu,name_pattern,fp32_tflops,bf16_tflops,memory_tb_s,source_url\n"
                    "GP100,GP100,10.6,,0.717,https://example.org/gp100\n")
    r = subprocess.run(tracesql_cli() + ["perf", str(unknown_ds.path), "--arch", str(spec), "-f", "csv"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    got = {row["op_name"]: row for row in csv.DictReader(r.stdout.splitlines())}
    assert got["aten::mm"]["gpu"] == "GP100" and got["aten::mm"]["bound"] == "memory"
    assert got["aten::addmm"]["roofline_pct"] == ""  # no bf16 peak in the spec


@pytest.mark.slow
def test_roofline_chart_points_are_the_perf_rows(qwen, tmp_path):
    from tracesql.api.perf import roofline_spec, write_plot

    spec = roofline_spec(qwen)
    roofs, points = spec["layer"][0]["data"]["values"], spec["layer"][1]["data"]["values"]
    rows = qwen.sql("""SELECT op_name, shape, flop_per_byte, tflop_per_s, kernel_time_sum_ns, family FROM perf_args
                       WHERE flops > 0 AND bytes > 0""").rows()
    got = sorted((p["op"], p["shape"], p["flop_per_byte"], p["tflop_per_s"], p["kernel_time_us"] * 1000, p["family"])
                 for p in points)
    assert len(got) == len(rows) == 23  # the argument sets with FLOPs (copies and the lookup have none)
    for g, r in zip(got, sorted(rows), strict=True):
        assert g[:2] == r[:2] and g[5] == r[5] and g[2:5] == pytest.approx(r[2:5])
    # the H100 SXM roofs of the precisions drawn: min(peak, bandwidth · FLOP/byte)
    assert {r["roof"] for r in roofs} == {"bf16 peak 989.4 TFLOP/s, 3.35 TB/s", "fp32 peak 67 TFLOP/s, 3.35 TB/s"}
    for r in roofs:
        peak = 989.4 if r["roof"].startswith("bf16") else 67.0
        assert r["tflop_per_s"] == pytest.approx(min(peak, 3.35 * r["flop_per_byte"]))
    write_plot(spec, str(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text()) == spec
    try:
        import vl_convert  # noqa: F401
    except ImportError:
        from tracesql.errors import UsageError

        for suffix in (".svg", ".html"):
            with pytest.raises(UsageError, match=f"writing {suffix} needs vl-convert-python"):
                write_plot(spec, str(tmp_path / f"r{suffix}"))
            assert not (tmp_path / f"r{suffix}").exists()
    else:
        write_plot(spec, str(tmp_path / "r.svg"))
        assert (tmp_path / "r.svg").read_text().startswith("<svg")
        # the page: the chart as inline SVG, the spec beside it as JSON data (without its $schema URL)
        write_plot(spec, str(tmp_path / "r.html"))
        page = (tmp_path / "r.html").read_text(encoding="utf-8")
        assert page.count("<svg ") == 1 and "<script src" not in page
        data = page.split('<script type="application/json" id="roofline-spec">')[1].split("</script>")[0]
        assert json.loads(data) == {k: v for k, v in spec.items() if k != "$schema"}


@pytest.mark.slow
def test_first_screen_says_share_modelled_and_worst_ops(qwen):
    from tracesql.api.summary import render

    text = render(qwen, w=120)
    compute = " ".join(" ".join(line.split()) for line in text[text.index("\nCompute ") + 1:].splitlines())
    [t] = qwen.sql("SELECT modelled_pct, modelled_op_pct, roofline_pct FROM perf_traces").rows()
    assert f"{t[0]:.1f} % of GPU time ({t[1]:.1f} % of op time), at {t[2]:.1f} % of the H100 SXM roofline" in compute
    assert compute.startswith("Compute ops with a FLOP/byte model (tracesql perf): 65.5 % of GPU time (93.7 %")
    # the hot argument sets (≥ 1 % of GPU time) farthest below their roofline, from perf_args
    worst = qwen.sql("""SELECT op_name, roofline_pct, bound FROM perf_args WHERE time_pct >= 1
                        ORDER BY roofline_pct LIMIT 3""").rows()
    assert worst[0][:1] == ("aten::_flash_attention_forward",) and round(worst[0][1], 1) == 19.3
    assert f"farthest below it: {worst[0][0]} {worst[0][1]:.1f} % ({worst[0][2]}," in compute
    for o, p, b in worst:
        assert f"{o} {p:.1f} % ({b}, " in compute


# ---- against TraceLens's per-family sheets (the same FLOPs; its Data Moved is in MiB) --------------------

TL_SHEETS = {  # reference folder -> trace
    "nvidia/h100_qwen_infer": "nvidia/h100_qwen_infer.json.gz",
    "nvidia/h100_bert_small_infer": "nvidia/h100_bert_small_infer.json.gz",
    "nvidia/h100_falconsai_infer": "nvidia/h100_falconsai_infer.json.gz",
    "amd/mi300_qwen_infer": "amd/mi300_qwen_infer.json.gz",
    "amd/mi300_bert_small_infer": "amd/mi300_bert_small_infer.json.gz",
}


def _tl_rows(reference_dir, folder: str, sheet: str) -> list[dict]:
    path = reference_dir / "tracelens" / folder / sheet
    return list(csv.DictReader(path.open())) if path.exists() else []


def _dims(text: str):
    return json.loads(text.replace("(", "[").replace(")", "]").replace(",]", "]"))


def test_gemm_and_binary_agree_with_tracelens(all_dataset, trace_ids, reference_dir):
    """Where both model an op the same way (GEMM, binary elementwise), FLOPs are TraceLens's GFLOPS and bytes are
    its Data Moved (MB) times 2²⁰: TraceLens's MB are MiB."""
    checked = 0
    ds = tracesql.open(all_dataset[0], trace_ids=sorted({trace_ids[t] for t in TL_SHEETS.values()}))
    for folder, trace in TL_SHEETS.items():
        tid = trace_ids[trace]
        ours = ds.sql("""SELECT DISTINCT op_name, d_txt, flops, bytes FROM perf_ops WHERE trace_id = $t""",
                      {"t": tid}).rows()
        for sheet in ("GEMM.csv", "BinaryElementwise.csv"):
            for r in _tl_rows(reference_dir, folder, sheet):
                [(f, b)] = {(f, b) for op, d, f, b in ours if op == r["name"] and json.loads(d) == _dims(
                    r["Input Dims_first"])}
                assert f == pytest.approx(float(r["GFLOPS_first"]) * 1e9, rel=1e-9), (folder, r["name"])
                assert b == pytest.approx(float(r["Data Moved (MB)_first"]) * 2**20, rel=1e-9), (folder, r["name"])
                checked += 1
    ds.close()
    assert checked == 47  # rows of the five GEMM.csv and BinaryElementwise.csv


def test_measured_differences_from_tracelens(ds, trace_ids, reference_dir):
    """The differences docs/perf-model.md lists, measured on the shared traces."""
    tid = trace_ids["nvidia/h100_qwen_infer.json.gz"]

    def ours(op, dims):
        return ds.sql("SELECT DISTINCT flops, bytes FROM perf_ops WHERE trace_id = $t AND op_name = $o AND d_txt = $d",
                      {"t": tid, "o": op, "d": dims}).row(0)

    # mean over the last dim of [16, 559, 1024] fp32: TraceLens writes one element, the output is [16, 559, 1]
    [tl] = [r for r in _tl_rows(reference_dir, "nvidia/h100_qwen_infer", "Reduce_fwd.csv") if r["name"] == "aten::mean"]
    assert float(tl["Data Moved (MB)_first"]) * 2**20 == pytest.approx(9158656 * 4 + 4)
    assert ours("aten::mean", "[[16,559,1024],[],[],[]]") == (9158656, 9158656 * 4 + 8944 * 4)
    # copy_: TraceLens counts one FLOP per element, a copy computes nothing
    tl_copy = [r for r in _tl_rows(reference_dir, "nvidia/h100_qwen_infer", "UnaryElementwise.csv")
               if r["name"] == "aten::copy_" and _dims(r["Input Dims_first"]) == [[16, 559, 1024], [16, 559, 1024], []]]
    assert {float(r["GFLOPS_first"]) * 1e9 for r in tl_copy} == {9158656}
    assert ours("aten::copy_", "[[16,559,1024],[16,559,1024],[]]")[0] == 0
    # layer norm [1, 141, 512]: TraceLens 5·numel + 6·C; here 8·numel + rows (mean, variance, normalise, γ, β)
    bert = trace_ids["nvidia/h100_bert_small_infer.json.gz"]
    [tl_ln] = [r for r in _tl_rows(reference_dir, "nvidia/h100_bert_small_infer", "Normalization.csv")
               if r["name"] == "aten::native_layer_norm"]
    assert float(tl_ln["GFLOPS_first"]) * 1e9 == pytest.approx(5 * 72192 + 6 * 512)
    ln = ds.sql("SELECT DISTINCT flops FROM perf_ops WHERE trace_id = $t AND op_name = 'aten::native_layer_norm'",
                {"t": bert}).item()
    assert ln == 8 * 72192 + 141


def test_every_shared_trace(ds, trace_ids):
    """The perf views on every shared trace: the GPU recognised from deviceProperties (or the reason why not), and
    sane numbers: FLOPs and bytes never negative, modelled time within the op time within the GPU time."""
    expect = {"nvidia/h100_qwen_infer.json.gz": "H100 SXM", "nvidia/b200_eager_nccl.json.gz": "B200",
              "nvidia/zoology_a100.json.gz": "A100 PCIe 80GB", "nvidia/hta_cuda_graphs_rank0.json.gz": "A100 SXM4 80GB",
              "nvidia/hta_triton_example.json.gz": "A100 SXM4 40GB", "multirank/dlrm_8rank/rank3.json.gz": "V100 SXM2",
              "amd/mi300_qwen_infer.json.gz": "MI300X", "amd/mi210_gpu_only.json.gz": "MI210",
              "modern/aorta_mi350x_toy.json.gz": "MI350X", "modern/sglang_dsr1_b300_decode.json.gz": "B300",
              "nvidia/hta_gpu_user_annotation.json.gz": None, "cpu/hta_cpu_only_rank34.json.gz": None}
    got = {r[0]: r[1:] for r in ds.sql("SELECT trace_id, gpu, reason, gpu_time_ns, op_time_ns, modelled_time_ns "
                                       "FROM perf_traces").rows()}
    assert len(got) == len(trace_ids)
    for trace, gpu in expect.items():
        g, reason, *_ = got[trace_ids[trace]]
        assert g == gpu, trace
        assert (reason is None) == (gpu is not None), trace
    assert "'Quadro GP100' is not in the device table" in got[trace_ids["nvidia/hta_gpu_user_annotation.json.gz"]][1]
    for _, _, total, ops, modelled in got.values():
        assert 0 <= modelled <= ops <= total
    bad = ds.sql("""SELECT count(*) FROM perf_ops WHERE flops IS NULL OR bytes IS NULL OR flops < 0 OR bytes < 0
                    OR roofline_pct < 0 OR (gpu IS NOT NULL AND peak_tflop_per_s IS NOT NULL AND roofline_ns IS NULL)
                 """).item()
    assert bad == 0
