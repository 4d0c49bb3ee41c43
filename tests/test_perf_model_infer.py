"""The compute model of inference ops (sql/perf/paged_attention.sql, the fused MoE part of sql/perf/moe.sql):
paged attention whose KV lengths come from the serving step's annotation, and fused MoE ops with their expert
weights, computed by hand on a small trace and on the shared trace nvidia/b200_eager_nccl."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import tracesql

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

ROOT = Path(__file__).resolve().parent.parent
T0 = 2_000_000  # µs
KERNEL_US = 20  # every op of the fixture launches one kernel of 20 µs
BF, F32, FP8, FP4, U8, I32, I64 = ("c10::BFloat16", "float", "c10::Float8_e4m3fn", "c10::Float4_e2m1fn_x2",
                                   "unsigned char", "int", "long int")

ATTN = "vllm::unified_attention_with_output"
# query [40, 16, 128], key and value [40, 4, 128] of the new tokens, output [40, 16, 128], all bf16
ATTN_ARGS = ([[40, 16, 128], [40, 4, 128], [40, 4, 128], [40, 16, 128], [], [], []],
             [BF, BF, BF, BF, "", "", ""], [""] * 7)
# vLLM's cache write: key, value, key_cache, value_cache (an fp8 cache stored as uint8), slot_mapping, ...
CACHE_WRITE = ("_C_cache_ops::reshape_and_cache_flash",
               [[40, 4, 128], [40, 4, 128], [1000, 16, 4, 128], [1000, 16, 4, 128], [40], [], [], []],
               [BF, BF, U8, U8, I64, "", F32, F32], ["", "", "", "", "", "fp8", "", ""])

# Step A (mixed): one prefill request of 32 new tokens on a 64-token cached prefix (sq 32, sk 96) and 8 decode
# requests with 800 cached tokens in all: Σsq 40, Σsk 896, Σsq² 1032, Σsq·sk 3872.
STEP_A = "execute_40_context_1(sq32sk96sqsq1024sqsk3072)_generation_8(sq8sk800sqsq8sqsk800)"
# prefill: 32·96 − 32·31/2 = 2576 (query, key) pairs per head; decode: 800
PAIRS_A = 32 * 96 - 32 * 31 // 2 + 800
FLOPS_A = 2 * 16 * PAIRS_A * (128 + 128)
# the new tokens' Q read and O written (bf16), every request's K and V read from the fp8 cache (1 byte)
BYTES_A = 40 * 16 * (128 * 2 + 128 * 2) + 896 * 4 * (128 * 1 + 128 * 1)
# Step B (decode only, no cache write recorded): 40 requests with 4000 cached tokens in all; the same arguments
# as in step A, other work; K and V at the key and value arguments' type (bf16)
STEP_B = "execute_40_context_0(sq0sk0sqsq0sqsk0)_generation_40(sq40sk4000sqsq40sqsk4000)"
FLOPS_B = 2 * 16 * 4000 * (128 + 128)
BYTES_B = 40 * 16 * (128 * 2 + 128 * 2) + 4000 * 4 * (128 * 2 + 128 * 2)
STOCK_STEP = "execute_context_0(0)_generation_8(8)"  # vLLM's own annotation: no KV length
# The decode step of graphs/vllm_decode_full (graph_execution's annotation, the capture trace's arguments of its
# attention op), eager here: TraceLens's InferenceAttention_fwd.csv has its FLOPs and bytes
REF_STEP = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"
REF_ARGS = ([[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]], [BF] * 4 + [""] * 3 + [BF],
            [""] * 8)


def _e_active(e: int, topk: int, t: int) -> float:
    """Expected number of distinct experts that t tokens routed uniformly to topk of e experts touch."""
    return e * (1 - ((e - topk) / e) ** t)


# vLLM's Triton fused MoE: 64 tokens of 512, 8 experts, top-2, gated (w1 stacks gate and up: 2·1024 rows)
MOE_VLLM = ("vllm::outplace_fused_experts",
            [[64, 512], [8, 2048, 512], [8, 512, 1024], [64, 2], [64, 2], [], [], [], [], [], [], []],
            [BF, BF, BF, F32, I32, "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
            ["", "", "", "", "", "silu", "False", "False", "False", "False", "False", "False"])
FLOPS_MOE_VLLM = 2 * 64 * 2 * 512 * (2048 + 1024)
BYTES_MOE_VLLM = (64 * 512 * 2 * 2 + _e_active(8, 2, 64) / 8 * (8 * 2048 * 512 * 2 + 8 * 512 * 1024 * 2)
                  + 64 * 2 * 4 + 64 * 2 * 4)
# aiter's assembly fused MoE, fp8 activations and mxfp4 weights (two values per recorded element: K 1024 is
# recorded as 512, I 512 as 256), 16 tokens, 32 experts, top-4; per-expert fp32 scales [32, 1024, 1]
MOE_AITER = ("aiter::fmoe_g1u1",
             [[16, 1024], [16, 1024], [32, 1024, 512], [32, 1024, 256], [80], [80], [20], [1], [], [16, 1],
              [32, 1024, 1], [32, 1024, 1], [], [], []],
             [BF, FP8, FP4, FP4, I32, F32, I32, I32, "Scalar", F32, F32, F32, "", "", "Scalar"],
             [""] * 8 + ["4", "", "", "", "", "", "0"])
FLOPS_MOE_AITER = 2 * 16 * 4 * 1024 * (1024 + 512)
_FRAC = _e_active(32, 4, 16) / 32
BYTES_MOE_AITER = (16 * 1024 * 1 + 16 * 1024 * 2 + _FRAC * (32 * 1024 * 512 + 32 * 1024 * 256)
                   + (80 * 4 + 80 * 4 + 20 * 4 + 4) + 16 * 4 + _FRAC * 2 * (32 * 1024 * 4))
MOE_FORWARD = ("vllm::moe_forward", [[64, 512], [64, 8], []], [BF, BF, ""], ["", "", ""])

# (step annotation or None, op name, Input Dims, Input type, Concrete Inputs): the ops in order, each with one
# kernel of KERNEL_US
OPS: list[tuple] = [
    (STEP_A, *CACHE_WRITE),
    (STEP_A, ATTN, *ATTN_ARGS),
    (STEP_A, ATTN, *ATTN_ARGS),
    (STEP_B, ATTN, *ATTN_ARGS),
    (None, ATTN, *ATTN_ARGS),
    (STOCK_STEP, ATTN, *ATTN_ARGS),
    (REF_STEP, ATTN, *REF_ARGS),
    (None, *MOE_VLLM),
    (None, *MOE_AITER),
    (None, *MOE_FORWARD),
]


def _trace(ops: list[tuple]) -> dict:
    ev: list[dict] = []
    steps: dict[str, list[int]] = {}
    for i, (step, name, dims, types, conc) in enumerate(ops):
        ts, corr = T0 + 100 * i, 700 + i
        if step is not None:
            steps.setdefault(step, []).append(ts)
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 3, "tid": 3, "ts": ts, "dur": 50,
                   "args": {"Input Dims": dims, "Input type": types, "Concrete Inputs": conc,
                            "Input Strides": [[] for _ in dims]}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 3, "tid": 3, "ts": ts + 1,
                   "dur": 5, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": f"infer_kernel_{i}", "pid": 0, "tid": 7, "ts": ts + 20,
                   "dur": KERNEL_US, "args": {"device": 0, "stream": 7, "correlation": corr}})
    for name, starts in steps.items():
        ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 3, "tid": 3,
                   "ts": min(starts) - 5, "dur": max(starts) - min(starts) + 60})
    return {"schemaVersion": 1, "traceEvents": ev,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85_000_000_000}]}


def _open_trace(tmp_path_factory, name: str, ops):
    """A dataset of one hand-made trace of ops (_trace), its perf views materialized; closed after the module."""
    from tracesql.api.tree import materialize
    from tracesql.store.sqlmodules import materialized

    d = tmp_path_factory.mktemp(name)
    (d / "t.json").write_text(json.dumps(_trace(ops)))
    [r] = tracesql.ingest([str(d / "t.json")], out=d / "ds", quiet=True)
    assert r.status == "ingested", r.error
    ds = tracesql.open(d / "ds")
    materialize(ds, materialized("perf"))
    yield ds
    ds.close()


@pytest.fixture(scope="module")
def infer_ds(tmp_path_factory):
    yield from _open_trace(tmp_path_factory, "perf_infer", OPS)


def _ops(ds, family: str) -> list[dict]:
    return ds.sql(f"""SELECT op_name, family, flops, bytes, precision, shape, step_txt, kernel_time_ns
                      FROM perf_ops WHERE family = '{family}' ORDER BY ts_ns""").rows(named=True)


def test_paged_attention_by_hand(infer_ds):
    rows = _ops(infer_ds, "InferenceAttention_fwd")
    # the two calls of step A, the call of step B (then that of REF_STEP); the call outside a step and the one
    # in vLLM's own annotation are not modelled
    assert [(json.loads(r["step_txt"])["step"], r["flops"], r["bytes"]) for r in rows[:3]] == [
        (STEP_A, FLOPS_A, BYTES_A), (STEP_A, FLOPS_A, BYTES_A), (STEP_B, FLOPS_B, BYTES_B)]
    assert (FLOPS_A, BYTES_A, FLOPS_B, BYTES_B) == (27_656_192, 1_245_184, 32_768_000, 8_519_680)
    assert [json.loads(r["step_txt"])["kv_cache"] for r in rows] == [U8, U8, "", ""]
    assert {r["precision"] for r in rows} == {"bf16"}
    assert rows[0]["shape"] == "N_Q=40 H_Q=16 H_KV=4 d_qk=128 d_v=128 sum_sk=896 pairs=3376 kv_cache=unsigned char"


def test_decode_step_agrees_with_tracelens(infer_ds, reference_dir):
    """On a decode step in bf16 the model and TraceLens's count the same work: 32 requests of one new token,
    55,086 cached tokens in all, 64 query and 8 KV heads of 64."""
    [r] = infer_ds.sql("SELECT flops, bytes FROM perf_ops WHERE step_txt LIKE '%sk55086%'").rows()
    assert r == (2 * 64 * 55086 * (64 + 64), 32 * 64 * (64 + 64) * 2 + 55086 * 8 * (64 + 64) * 2)
    ref = list(csv.DictReader((reference_dir / "tracelens/graphs/vllm_decode_full/InferenceAttention_fwd.csv").open()))
    assert {(x["GFLOPS_first"], x["Data Moved (MB)_first"]) for x in ref} == {("0.902529024", "108.08984375")}
    # TraceLens's GFLOPS are 10⁹ FLOPs; its "MB" are MiB: the same 113,340,416 bytes
    assert r == (902_529_024, 113_340_416) == (0.902529024e9, 108.08984375 * 2**20)


def test_the_step_is_part_of_the_argument_set(infer_ds):
    rows = infer_ds.sql(f"""SELECT count, flops, bytes, kernel_time_sum_ns FROM perf_args WHERE op_name = '{ATTN}'
                            AND input_dims LIKE '((40, 16, 128)%' ORDER BY count DESC""").rows(named=True)
    # the same recorded arguments, two steps: two rows with their own work
    assert [(r["count"], r["flops"], r["bytes"]) for r in rows] == [(2, FLOPS_A, BYTES_A), (1, FLOPS_B, BYTES_B)]
    assert rows[0]["kernel_time_sum_ns"] == 2 * KERNEL_US * 1000


def test_unmodelled_inference_ops_are_counted(infer_ds):
    rows = infer_ds.sql("SELECT op_name, reason, count, kernel_time_ns FROM perf_unmodelled").rows()
    assert sorted(rows) == sorted([
        (ATTN, "no step annotation", 1, KERNEL_US * 1000),
        (ATTN, "step annotation without KV lengths", 1, KERNEL_US * 1000),
        ("vllm::moe_forward", "expert weights not among the arguments", 1, KERNEL_US * 1000)])
    cats = {r["family"]: r["op_count"] for r in infer_ds.sql("SELECT * FROM perf_categories").rows(named=True)}
    # the cache write is modelled by no family: (not modelled) = it + the three above
    assert cats == {"InferenceAttention_fwd": 4, "MoE_fused": 2, "(not modelled)": 4}


def test_fused_moe_by_hand(infer_ds):
    rows = {r["op_name"]: r for r in _ops(infer_ds, "MoE_fused")}
    v = rows["vllm::outplace_fused_experts"]
    assert (v["flops"], v["precision"]) == (FLOPS_MOE_VLLM, "bf16") and FLOPS_MOE_VLLM == 402_653_184
    assert v["bytes"] == pytest.approx(BYTES_MOE_VLLM, rel=1e-12)
    assert v["shape"] == "T=64 K=512 E=8 topk=2 N_up=2048 I=1024 E_active=8.00"
    a = rows["aiter::fmoe_g1u1"]
    # fp4 weights: half a byte per value (the recorded packed element is one byte); fp8 input: the fp8 peak
    assert (a["flops"], a["precision"]) == (FLOPS_MOE_AITER, "fp8") and FLOPS_MOE_AITER == 201_326_592
    assert a["bytes"] == pytest.approx(BYTES_MOE_AITER, rel=1e-12)
    assert a["shape"] == f"T=16 K=1024 E=32 topk=4 N_up=1024 I=512 E_active={_e_active(32, 4, 16):.2f}"
    assert round(_e_active(32, 4, 16), 4) == 28.2219  # 32·(1 − (7/8)¹⁶): 16 tokens touch about 28 of the 32 experts


def test_roofline_of_the_inference_ops(infer_ds):
    dev = next(r for r in csv.DictReader((ROOT / "sql/perf/devices.csv").open()) if r["gpu"] == "H100 SXM")
    peak, bw = float(dev["bf16_tflops"]) * 1e12, float(dev["memory_tb_s"]) * 1e12
    [r] = infer_ds.sql(f"""SELECT roofline_ns, bound FROM perf_ops
                           WHERE op_name = '{ATTN}' AND step_txt LIKE '%generation_40%'""").rows()
    assert r[0] == pytest.approx(max(FLOPS_B / peak, BYTES_B / bw) * 1e9) and r[1] == "memory"


# ---- FlashInfer's and aiter's paged attention: separate prefill and decode ops -----------------------------

FI_DECODE = ("batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_qk_128_"
             "head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False::run")
FI_PREFILL = ("batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_e4m3_dtype_o_bf16_dtype_idx_i32_head_dim_qk_128_"
              "head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False_f16qk_False")
FI_PAGED, FI_RAGGED = FI_PREFILL + "::paged_run", FI_PREFILL + "::ragged_run"
_WS = [[134217728], [8388608], [12]]  # float and int workspaces, plan info
_WS_T = [U8, U8, I64]
# the trailing alibi slopes, logits soft cap, sm scale, rope scale and theta
_TAIL: tuple[list, list, list] = ([[], [], [], [], []], ["", "Scalar", "Scalar", "Scalar", "Scalar"],
                                  ["", "0.0", "0.088", "1.0", "0.0001"])


def _fi_decode(tokens: int, heads: int, kv_heads: int) -> tuple:
    """FlashInfer's decode run: q [tokens, H_Q, 128]; a bf16 paged cache NHD [500 pages, 16, H_KV, 128]."""
    dims = _WS + [[tokens, heads, 128], [500, 16, kv_heads, 128], [500, 16, kv_heads, 128], [tokens + 1], [200],
                  [tokens], [tokens, heads, 128], [], [], [], []] + _TAIL[0]
    types = _WS_T + [BF, BF, BF, I32, I32, I32, BF, "", "Scalar", "Scalar", "Scalar"] + _TAIL[1]
    conc = [""] * 10 + ["", "0", "-1", "False"] + _TAIL[2]
    return FI_DECODE, dims, types, conc


def _fi_paged(tokens: int, mask: str) -> tuple:
    """FlashInfer's prefill paged run: q [tokens, 32, 128] bf16; an fp8 paged cache HND [500, 8 heads, 16, 128]."""
    dims = _WS + [[tokens, 32, 128], [500, 8, 16, 128], [500, 8, 16, 128], [3], [3], [20], [2], [tokens, 32, 128],
                  [], [], [], [], []] + _TAIL[0]
    types = _WS_T + [BF, FP8, FP8, I32, I32, I32, I32, BF, "", "Scalar", "Scalar", "Scalar", "Scalar"] + _TAIL[1]
    conc = [""] * 11 + ["", mask, "1", "-1", "False"] + _TAIL[2]
    return FI_PAGED, dims, types, conc


def _fi_ragged(tokens: int, kv_tokens: int) -> tuple:
    """FlashInfer's prefill ragged run, causal, NHD: q [tokens, 32, 128], k and v [kv_tokens, 8, 128], bf16."""
    dims = _WS + [[tokens, 32, 128], [kv_tokens, 8, 128], [kv_tokens, 8, 128], [3], [3], [tokens, 32, 128],
                  [], [], [], [], []] + _TAIL[0]
    types = _WS_T + [BF, BF, BF, I32, I32, BF, "", "Scalar", "Scalar", "Scalar", "Scalar"] + _TAIL[1]
    conc = [""] * 9 + ["", "1", "0", "-1", "False"] + _TAIL[2]
    return FI_RAGGED, dims, types, conc


# aiter's assembly decode: Q [8, 32, 128], K cache [500 blocks, 8 heads, 128/8, 16, 8], V cache [500, 8, 128, 16]
AITER_PA = ("aiter::pa_fwd_asm",
            [[8, 32, 128], [500, 8, 16, 16, 8], [500, 8, 128, 16], [8, 32], [8], [], [], [], [], [8, 32, 128], [],
             [], []],
            [BF, BF, BF, I32, I32, "Scalar", "Scalar", "", "", BF, "", "Scalar", ""],
            ["", "", "", "", "", "32", "1", "", "", "", "", "1", ""])

# Decode-only step: 8 requests with 3000 tokens in all
STEP_D = "execute_8_context_0(sq0sk0sqsq0sqsk0)_generation_8(sq8sk3000sqsq8sqsk3000)"
FLOPS_D = 2 * 32 * 3000 * (128 + 128)
BYTES_D = 8 * 32 * (128 * 2 + 128 * 2) + 3000 * 8 * (128 * 2 + 128 * 2)
BYTES_D_FP8 = 8 * 32 * (128 * 2 + 128 * 2) + 3000 * 8 * (128 * 1 + 128 * 1)  # the same from the fp8 cache
# Prefill-only step: a prompt of 64 new tokens on a cached prefix of 128 (sq 64, sk 192) and one of 32 (sq = sk):
# Σsq 96, Σsk 224, Σsq² 4096 + 1024, Σsq·sk 12288 + 1024
STEP_P = "execute_96_context_2(sq96sk224sqsq5120sqsk13312)_generation_0(sq0sk0sqsq0sqsk0)"
PAIRS_P = (64 * 192 - 64 * 63 // 2) + (32 * 32 - 32 * 31 // 2)
FLOPS_P = 2 * 32 * PAIRS_P * (128 + 128)
# the queries read and outputs written in bf16, the keys and values read from the fp8 cache (1 byte)
BYTES_P = 96 * 32 * (128 * 2 + 128 * 2) + 224 * 8 * (128 * 1 + 128 * 1)
# Prefill-only step without cached prefixes: prompts of 32 and 16 tokens (the ragged call holds every key)
STEP_R = "execute_48_context_2(sq48sk48sqsq1280sqsk1280)_generation_0(sq0sk0sqsq0sqsk0)"
FLOPS_R = 2 * 32 * (32 * 33 // 2 + 16 * 17 // 2) * (128 + 128)
BYTES_R = 48 * 32 * (128 * 2 + 128 * 2) + 48 * 8 * (128 * 2 + 128 * 2)
# Mixed step: one prompt of 12 tokens and the 8 decode requests
STEP_M = "execute_20_context_1(sq12sk12sqsq144sqsk144)_generation_8(sq8sk3000sqsq8sqsk3000)"
MIXED = "mixed step: prefill and decode ops share one annotation"
PARTIAL = "a pass over part of each request's KV"

LIB_OPS: list[tuple] = [
    (STEP_D, *_fi_decode(8, 32, 8)),
    (STEP_D, *_fi_paged(8, "0")),  # FlashInfer's tensor-core decode: the prefill kernel, non-causal
    (STEP_D, *AITER_PA),
    (STEP_P, *_fi_paged(96, "1")),
    (STEP_P, *_fi_paged(96, "0")),  # SGLang's pass over the cached prefixes (non-causal) ...
    (STEP_P, *_fi_ragged(96, 96)),  # ... and over the new tokens (ragged): each a part of the KV
    (STEP_P, *AITER_PA),  # a decode kernel cannot have run the step's prompts
    (STEP_R, *_fi_ragged(48, 48)),
    (STEP_M, *_fi_decode(8, 32, 8)),
    (STEP_M, *_fi_paged(12, "1")),
]


@pytest.fixture(scope="module")
def lib_ds(tmp_path_factory):
    yield from _open_trace(tmp_path_factory, "perf_infer_lib", LIB_OPS)


def test_library_paged_attention_by_hand(lib_ds):
    rows = [(r["op_name"], json.loads(r["step_txt"])["step"], r["flops"], r["bytes"], r["precision"])
            for r in _ops(lib_ds, "InferenceAttention_fwd")]
    assert (FLOPS_D, BYTES_D, BYTES_D_FP8, FLOPS_P, BYTES_P, FLOPS_R, BYTES_R) == (
        49_152_000, 12_419_072, 6_275_072, 176_947_200, 2_031_616, 10_878_976, 983_040)
    assert rows == [
        # a decode-only step: the decode ops (FlashInfer's, its tensor-core path, aiter's) ran every request
        (FI_DECODE, STEP_D, FLOPS_D, BYTES_D, "bf16"),
        (FI_PAGED, STEP_D, FLOPS_D, BYTES_D_FP8, "bf16"),
        ("aiter::pa_fwd_asm", STEP_D, FLOPS_D, BYTES_D, "bf16"),
        # a prefill-only step: the causal paged prefill ran every request's whole KV, from the fp8 cache
        (FI_PAGED, STEP_P, FLOPS_P, BYTES_P, "bf16"),
        # a ragged prefill whose keys are every request's whole KV (no cached prefix)
        (FI_RAGGED, STEP_R, FLOPS_R, BYTES_R, "bf16")]
    shapes = [r["shape"] for r in _ops(lib_ds, "InferenceAttention_fwd")]
    assert shapes[0] == "N_Q=8 H_Q=32 H_KV=8 d_qk=128 d_v=128 sum_sk=3000 pairs=3000 kv_cache=c10::BFloat16"
    assert shapes[3] == ("N_Q=96 H_Q=32 H_KV=8 d_qk=128 d_v=128 sum_sk=224 pairs=10800 "
                         "kv_cache=c10::Float8_e4m3fn")


def test_library_paged_attention_unmodelled(lib_ds):
    rows = lib_ds.sql("SELECT op_name, reason, count, kernel_time_ns FROM perf_unmodelled").rows()
    assert sorted(rows) == sorted([
        (FI_DECODE, MIXED, 1, KERNEL_US * 1000),
        (FI_PAGED, MIXED, 1, KERNEL_US * 1000),
        (FI_PAGED, PARTIAL, 1, KERNEL_US * 1000),
        (FI_RAGGED, PARTIAL, 1, KERNEL_US * 1000),
        ("aiter::pa_fwd_asm", "decode op in a prefill-only step", 1, KERNEL_US * 1000)])
    cats = {r["family"]: r["op_count"] for r in lib_ds.sql("SELECT * FROM perf_categories").rows(named=True)}
    assert cats == {"InferenceAttention_fwd": 5, "(not modelled)": 5}


# ---- the shared trace: vLLM prefill on a B200, eager -----------------------------------------------------

@pytest.fixture(scope="module")
def b200(tmp_path_factory, shared_traces):
    out = tmp_path_factory.mktemp("b200") / "ds"
    (r,) = tracesql.ingest([str(shared_traces / "nvidia/b200_eager_nccl.json.gz")], out=out, quiet=True)
    assert r.status == "ingested"
    ds = tracesql.open(out)
    yield ds
    ds.close()


def test_b200_paged_attention(b200):
    rows = b200.sql("""SELECT count(*) AS n, sum(kernel_time_ns) AS t, min(flops) AS f, max(flops) AS f2,
                              min(bytes) AS b, max(bytes) AS b2, any_value(precision) AS p, any_value(gpu) AS gpu,
                              any_value(step_txt) AS step
                       FROM perf_ops WHERE family = 'InferenceAttention_fwd'""").rows(named=True)
    [r] = rows
    # 36 layers under one step annotation 'execute_context_1(888_788544)_generation_0(0)': one prompt of 888
    # tokens processed whole (Σsq·sk = 888² = 788544); query [888, 8, 64] fp8, output bf16, 1 KV head of 64,
    # the KV cache written by _C_cache_ops::reshape_and_cache_flash as uint8 (fp8, 1 byte)
    pairs = 888 * 888 - 888 * 887 // 2
    flops = 2 * 8 * pairs * (64 + 64)
    nbytes = 888 * 8 * 64 * 1 + 888 * 8 * 64 * 2 + 888 * 1 * (64 + 64) * 1
    assert (flops, nbytes) == (808_378_368, 1_477_632)
    assert (r["n"], r["t"], r["f"], r["f2"], r["b"], r["b2"]) == (36, 485_821, flops, flops, nbytes, nbytes)
    assert (r["p"], r["gpu"]) == ("fp8", "B200")
    assert json.loads(r["step"]) == {"step": "execute_context_1(888_788544)_generation_0(0)",
                                     "kv_cache": "unsigned char"}
    # vllm::moe_forward records only the hidden states and the router logits
    assert b200.sql("SELECT op_name, reason, count, kernel_time_ns FROM perf_unmodelled").rows() == [
        ("vllm::moe_forward", "expert weights not among the arguments", 36, 6_078_426)]


def test_step_annotations_of_real_traces(tmp_path, shared_traces):
    """The detailed step annotation as SGLang (modern/sglang_dsr1_b300_decode) and vLLM
    (graphs/vllm_decode_full) write it: the request aggregates the model reads. Both steps run under CUDA-graph
    replay, where no attention op launches the kernels: nothing there to model natively."""
    files = [str(shared_traces / t) for t in ("modern/sglang_dsr1_b300_decode.json.gz",
                                              "graphs/vllm_decode_full/graph_execution.json.gz")]
    assert all(r.status == "ingested" for r in tracesql.ingest(files, out=tmp_path / "ds", quiet=True))
    ds = tracesql.open(tmp_path / "ds")
    try:
        rows = ds.sql("""SELECT name, _perf_step_stats(name) AS st FROM events
                         WHERE cat = 'user_annotation' AND starts_with(name, 'execute_') ORDER BY name""").rows()
        assert rows == [
            ("execute_16_context_0(sq0sk0sqsq0sqsk0)_generation_16(sq16sk8209sqsq16sqsk8209)",
             {"sq": 16, "sk": 8209, "sqsq": 16, "sqsk": 8209}),
            ("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
             {"sq": 32, "sk": 55086, "sqsq": 32, "sqsk": 55086})]
        assert ds.sql("SELECT count(*) FROM perf_ops WHERE family = 'InferenceAttention_fwd'").item() == 0
    finally:
        ds.close()
