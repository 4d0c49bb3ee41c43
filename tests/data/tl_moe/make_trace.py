"""Writes moe_ops.json: a small hand-made PyTorch profiler trace (Kineto JSON on an MI300X, args laid out as the ops'
Python/C++ signatures record them) with the MoE op names of TraceLens's perf-model class map (its extensions'
get_pseudo_op_mappings) that sql/peers/tracelens/perf_moe.sql models:

  MoE_unfused  aiter's CK two-stage MoE GEMMs: ck_moe_stage1 (hidden_states, w1, w2, sorted_token_ids,
         sorted_expert_ids, num_valid_ids, out, topk, ...) in FP8 and with MXFP4-packed weights (w1's K and w2's N
         halved), ck_moe_stage2 (inter_states, w1, w2, ..., out, topk, ...); the CK-tile ones
         moe_cktile2stages_gemm1_ck (XQ, WQ, Y, sorted_ids, sorted_expert_ids, max_token_ids, topk, ...) and
         moe_cktile2stages_gemm2_ck; SGLang's Triton invoke_fused_moe_kernel (A, B, bias, C, A_scale, B_scale,
         B_zp, topk_weights, topk_ids, sorted_token_ids, expert_ids, num_tokens_post_padded, ...), gate/up and
         down, and once more with a per-layer suffix (`..._kernel_7`) as SGLang's profiler names it.
  MoE_aux  aiter's moe_sorting_fwd (topk_ids, topk_weights, sorted_token_ids, sorted_weights, sorted_expert_ids,
         num_valid_ids, moe_buf, num_experts, unit_size), twice with the same args; mxfp4_moe_sort_hip (with an
         operand of a dtype TraceLens has no size for); biased_grouped_topk_hip (gating_output, correction_bias,
         topk_weights, topk_ids, num_expert_group, topk_grp, need_renorm, routed_scaling_factor); SGLang's
         fused_append_shared_experts (topk_ids, topk_weights, ...).

Every op launches one kernel through hipLaunchKernel (correlation + ac2g flow), stream 0; times are µs with three
decimals, kernel times distinct.

It also writes moe_aiter_fused.json, vLLM's fused aiter MoE: four vllm::moe_forward (hidden_states, router_logits,
layer_name) calls, each around one vllm::rocm_aiter_fused_moe (hidden_states, w1, w2, topk_weights, topk_ids, ...)
that launches a sorting kernel, a quantization kernel and the fused MoE kernel(s), from which TraceLens's pseudo ops
(Trace2Tree/extensions/moe_aiter_pseudo_ops.py) make pseudo_op::moe_aiter_fused_1stage: two calls alike (one sheet
row), a third with a bf16 input, and a fourth whose two fused MoE kernels give it no pseudo op.

And moe_gptq_awq.json, vLLM's GPTQ/AWQ MoE: vllm::outplace_fused_experts (hidden_states, w1, w2, topk_weights,
topk_ids, ...) with INT4 weights packed two to a byte, launching an alignment kernel and its
fused_moe_kernel_gptq_awq GEMMs, from which TraceLens's pseudo ops (moe_gptq_awq_pseudo_ops.py) make
pseudo_op::moe_gptq_awq_up (the first GEMM) and pseudo_op::moe_gptq_awq_down (the others): one call with two GEMMs,
one with three, one of more tokens.

Run `python tests/data/tl_moe/make_trace.py` to rewrite the files; README.md says how the TraceLens reference CSVs
next to them were made.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import BF16, Trace, strides_of  # noqa: E402  (tests/data/kineto_builder.py)

FP8, FP4, E8M0, F32, I32 = "c10::Float8_e4m3fnuz", "c10::Float4_e2m1fn_x2", "c10::Float8_e8m0fnu", "float", "int"

trace_ = Trace(pid=3000, corr=700)
events, PID, TID = trace_.events, trace_.pid, trace_.tid
events.append({"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "python3"}})
events.append({"ph": "M", "name": "thread_name", "pid": PID, "tid": TID, "args": {"name": "python3"}})
_t = [1010.0]
_durs: set[float] = set()


def call(name, kernel, dur, dims, types, concrete=None):
    """One op at the next free time, launching `kernel` for `dur` µs."""
    ts = _t[0]
    n = len(dims)
    assert len(types) == n
    trace_.op(name, ts, 20.0, dims=dims, types=types, strides=strides_of(dims),
              concrete=concrete if concrete is not None else [""] * n)
    assert dur not in _durs, dur  # distinct kernel times: no ties in the sheets' orders
    _durs.add(dur)
    trace_.launch(kernel, ts + 5.0, ts + 12.0, dur)
    _t[0] = ts + 30.0


# --- aiter CK two-stage MoE (DeepSeek-like: 256 experts, hidden 7168, inter 2048, top-8) ---
M, K, N, E, TOPK = 64, 7168, 2048, 256, 8
P, B = 4096, 128   # sorted token ids (padded), expert blocks
sort_args = [[P], [B], [1]]
call("aiter::ck_moe_stage1", "ck_tile::MoeGemmKernel_stage1_fp8_gate_up_bm32", 41.5,
     [[M, K], [E, 2 * N, K], [E, K, N], *sort_args, [M, TOPK, N], [], [], [E, 2 * N // 128, K // 128], [M, K // 128],
      [], [], [], [], []],
     [FP8, FP8, FP8, I32, I32, I32, BF16, "Scalar", "", F32, F32, "Scalar", "", "Scalar", "Scalar", "Scalar"],
     concrete=["", "", "", "", "", "", "", "8", "", "", "", "32", "", "3", "1", "1"])
# MXFP4 weights: K packed in w1 (7168 -> 3584), N packed in w2 (2048 -> 1024); hidden_states packed too
call("aiter::ck_moe_stage1", "ck_tile::MoeGemmKernel_stage1_mxfp4_gate_up_bm32", 37.25,
     [[M, K // 2], [E, 2 * N, K // 2], [E, K, N // 2], *sort_args, [M, TOPK, N], [], [], [E, 2 * N, K // 32],
      [M, K // 32], [], [], [], [], []],
     ["unsigned char", FP4, FP4, I32, I32, I32, BF16, "Scalar", "", E8M0, E8M0, "Scalar", "", "Scalar", "Scalar",
      "Scalar"],
     concrete=["", "", "", "", "", "", "", "8", "", "", "", "32", "", "4", "1", "1"])
call("aiter::ck_moe_stage2", "ck_tile::MoeGemmKernel_stage2_fp8_down_bm32", 29.75,
     [[M, TOPK, N], [E, 2 * N, K], [E, K, N], *sort_args, [M, K], [], [], [E, K // 128, N // 128], [M * TOPK, N // 128],
      [], [P], [], []],
     [FP8, FP8, FP8, I32, I32, I32, BF16, "Scalar", "", F32, F32, "Scalar", F32, "Scalar", "Scalar"],
     concrete=["", "", "", "", "", "", "", "8", "", "", "", "32", "", "3", "1"])

# --- aiter CK-tile two-stage MoE (Qwen-like: 64 experts, hidden 4096, inter 1408, top-6; MXFP4 weights) ---
M2, K2, N2, E2, TOPK2 = 128, 4096, 1408, 64, 6
call("aiter::moe_cktile2stages_gemm1_ck", "ck_tile::MoeFlatmmKernel_gemm1_a16w4", 23.125,
     [[M2, K2], [E2, 2 * N2, K2 // 2], [M2, TOPK2, N2], [2048], [64], [1], [], [], [E2, 2 * N2, K2 // 32], [], []],
     [BF16, FP4, BF16, I32, I32, I32, "Scalar", "", E8M0, "Scalar", "Scalar"],
     concrete=["", "", "", "", "", "", "6", "", "", "32", "1"])
call("aiter::moe_cktile2stages_gemm2_ck", "ck_tile::MoeFlatmmKernel_gemm2_a16w4", 19.625,
     [[M2, TOPK2, N2], [E2, K2, N2 // 2], [M2, K2], [2048], [64], [1], [], [], [E2, K2, N2 // 32], [], []],
     [BF16, FP4, BF16, I32, I32, I32, "Scalar", "", E8M0, "Scalar", "Scalar"],
     concrete=["", "", "", "", "", "", "6", "", "", "32", "1"])

# --- SGLang Triton fused MoE: invoke_fused_moe_kernel, gate/up then down (128 experts, hidden 2048, inter 768) ---
M3, K3, N3, E3, TOPK3 = 64, 2048, 768, 128, 8
INV = "sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel"
inv_tail = [[M3, TOPK3], [M3, TOPK3], [2560], [40], [1], [], [], [], []]
inv_types = [F32, I32, I32, I32, I32, "Scalar", "", "", "Scalar"]
inv_conc = ["", "", "", "", "", "True", "", "", "8"]
call(INV, "fused_moe_kernel_BLOCK_SIZE_M_16_BLOCK_SIZE_N_64_fp8_w8a8", 15.5,
     [[M3, K3], [E3, 2 * N3, K3], [], [M3, TOPK3, 2 * N3], [M3, K3 // 128], [E3, 2 * N3 // 128, K3 // 128], [],
      *inv_tail],
     [FP8, FP8, "", BF16, F32, F32, "", *inv_types], concrete=[""] * 7 + inv_conc)
call(INV, "fused_moe_kernel_BLOCK_SIZE_M_16_BLOCK_SIZE_N_128_fp8_w8a8", 11.75,
     [[M3 * TOPK3, N3], [E3, K3, N3], [], [M3, TOPK3, K3], [M3 * TOPK3, N3 // 128], [E3, K3 // 128, N3 // 128], [],
      *inv_tail],
     [FP8, FP8, "", BF16, F32, F32, "", *inv_types], concrete=[""] * 7 + inv_conc)
# the same gate/up GEMM of another layer, bf16 without scales, as SGLang's profiler names it (a per-layer suffix):
# TraceLens models it only with pseudo ops on (the inference report), which strip the suffix
call(INV + "_7", "fused_moe_kernel_BLOCK_SIZE_M_16_BLOCK_SIZE_N_64_bf16", 17.375,
     [[M3, K3], [E3, 2 * N3, K3], [], [M3, TOPK3, 2 * N3], [], [], [], *inv_tail],
     [BF16, BF16, "", BF16, "", "", "", *inv_types], concrete=[""] * 7 + inv_conc)

# --- MoE auxiliary ops (MoE_aux) ---
call("aiter::moe_sorting_fwd", "_ZN7ck_tile14MoeSortingKernelINS_22MoeSortingProblemExIifEEEEvNT_5KargsE", 3.25,
     [[M, TOPK], [M, TOPK], [P], [P], [B], [2], [M, K], [], []],
     [I32, F32, I32, F32, I32, I32, BF16, "Scalar", "Scalar"], concrete=[""] * 7 + ["256", "32"])
call("aiter::moe_sorting_fwd", "_ZN7ck_tile14MoeSortingKernelINS_22MoeSortingProblemExIifEEEEvNT_5KargsE", 3.625,
     [[M, TOPK], [M, TOPK], [P], [P], [B], [2], [M, K], [], []],
     [I32, F32, I32, F32, I32, I32, BF16, "Scalar", "Scalar"], concrete=[""] * 7 + ["256", "32"])
call("aiter::mxfp4_moe_sort_hip", "_ZN5aiter22mxfp4_moe_sort_kernelI", 2.875,
     [[P, K // 32], [M, K // 32], [P], [2], [], []],
     [E8M0, E8M0, I32, "unsigned int", "Scalar", "Scalar"], concrete=["", "", "", "", "64", "32"])
call("aiter::biased_grouped_topk_hip", "_ZN5aiter19biased_grouped_topk_kernelI14__hip_bfloat16Li8EEEvPKT_", 4.125,
     [[M, E], [E], [M, TOPK], [M, TOPK], [], [], [], []],
     [BF16, BF16, F32, I32, "Scalar", "Scalar", "Scalar", "Scalar"],
     concrete=["", "", "", "", "8", "4", "True", "2.5"])
call("sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts", "fused_append_shared_experts_kernel",
     1.875, [[M, TOPK + 1], [M, TOPK + 1], [], []], [I32, F32, "Scalar", "Scalar"], concrete=["", "", "1", "1.0"])


def write(events: list[dict], name: str) -> None:
    """The trace file `name` next to this script, with `events`."""
    trace = {"schemaVersion": 1,
             "deviceProperties": [{"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
                                   "computeMajor": 9, "computeMinor": 4, "numSms": 304}],
             "traceEvents": events, "traceName": name, "displayTimeUnit": "ms",
             "baseTimeNanoseconds": 1700000000000000000}
    Path(__file__).with_name(name).write_text(json.dumps(trace, indent=1) + "\n")


write(events, "moe_ops.json")

# --- vLLM's fused aiter MoE (moe_aiter_fused.json): 128 experts, hidden 4096, inter 1536, top-8, FP8 weights ---
fused = Trace(pid=3100, corr=900)
fused.events.append({"ph": "M", "name": "process_name", "pid": fused.pid, "tid": 0, "args": {"name": "python3"}})
fused.events.append({"ph": "M", "name": "thread_name", "pid": fused.pid, "tid": fused.tid, "args": {"name": "python3"}})
MF, KF, NF, EF, TOPKF = 32, 4096, 1536, 128, 8
SORT_K = "_ZN7ck_tile14MoeSortingKernelINS_22MoeSortingProblemExIifEEEEvNT_5KargsE"
QUANT_K = "_ZN5aiter35dynamic_per_token_scaled_quant_kernelI"
FMOE_K = "aiter::fmoe_fp8_blockscale_g1u1_subGU_256_silu"


def fused_moe(t0, m, dtype_in, kernels):
    """vllm::moe_forward at t0 around one vllm::rocm_aiter_fused_moe of m tokens launching `kernels` ((name,
    duration) pairs, one after the other)."""
    fused.op("vllm::moe_forward", t0, 200.0, dims=[[m, KF], [m, EF], []], types=[dtype_in, dtype_in, "Scalar"],
             strides=strides_of([[m, KF], [m, EF], []]), concrete=["", "", "model.layers.3.mlp.experts"])
    d = [[m, KF], [EF, 2 * NF, KF], [EF, KF, NF], [m, TOPKF], [m, TOPKF], [], [], [], [],
         [EF, 2 * NF // 128, KF // 128], [EF, KF // 128, NF // 128], [], []]
    fused.op("vllm::rocm_aiter_fused_moe", t0 + 10.0, 180.0, dims=d,
             types=[dtype_in, FP8, FP8, F32, I32, "", "Scalar", "Scalar", "Scalar", F32, F32, "", ""],
             strides=strides_of(d), concrete=["", "", "", "", "", "", "3", "4", "False", "", "", "", ""])
    for j, (kernel, dur) in enumerate(kernels):
        assert dur not in _durs, dur
        _durs.add(dur)
        fused.launch(kernel, t0 + 20.0 + 40.0 * j, t0 + 30.0 + 40.0 * j, dur)


fused_moe(2000.0, MF, FP8, [(SORT_K, 2.125), (QUANT_K, 1.625), (FMOE_K, 33.5)])
fused_moe(2300.0, MF, FP8, [(SORT_K, 2.375), (QUANT_K, 1.375), (FMOE_K, 35.25)])
fused_moe(2600.0, 4 * MF, BF16, [(SORT_K, 2.625), ("aiter::fmoe_bf16_g1u1_silu", 61.75)])
fused_moe(2900.0, MF, FP8, [(SORT_K, 2.75), (FMOE_K, 21.5), (FMOE_K, 22.5)])
write(fused.events, "moe_aiter_fused.json")

# --- vLLM's GPTQ/AWQ MoE (moe_gptq_awq.json): 64 experts, hidden 2048, inter 1408, top-6, INT4 weights ---
gptq = Trace(pid=3200, corr=1100)
gptq.events.append({"ph": "M", "name": "process_name", "pid": gptq.pid, "tid": 0, "args": {"name": "python3"}})
gptq.events.append({"ph": "M", "name": "thread_name", "pid": gptq.pid, "tid": gptq.tid, "args": {"name": "python3"}})
KG, NG, EG, TOPKG = 2048, 1408, 64, 6
ALIGN_K = "void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, int)"
GPTQ_K = "fused_moe_kernel_gptq_awq_BLOCK_SIZE_M_16_BLOCK_SIZE_N_64_BLOCK_SIZE_K_128"


def outplace(t0, m, kernels):
    """vllm::outplace_fused_experts of m tokens at t0 launching `kernels` ((name, duration) pairs)."""
    d = [[m, KG], [EG, 2 * NG, KG // 2], [EG, KG, NG // 2], [m, TOPKG], [m, TOPKG], [], [], [], [], [], [],
         [EG, 2 * NG, KG // 128], [EG, KG, NG // 128], [], [], [], [], []]
    U8 = "unsigned char"
    gptq.op("vllm::outplace_fused_experts", t0, 250.0, dims=d,
            types=[BF16, U8, U8, F32, I32, "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", BF16, BF16, "",
                   "", "", "", ""],
            strides=strides_of(d), concrete=["", "", "", "", "", "silu", "False", "False", "False", "True", "False",
                                             "", "", "", "", "", "", ""])
    for j, (kernel, dur) in enumerate(kernels):
        assert dur not in _durs, dur
        _durs.add(dur)
        gptq.launch(kernel, t0 + 20.0 + 40.0 * j, t0 + 30.0 + 40.0 * j, dur)


outplace(4000.0, 16, [(ALIGN_K, 3.125), (GPTQ_K, 27.125), (GPTQ_K, 14.25)])
outplace(4300.0, 16, [(ALIGN_K, 3.375), (GPTQ_K, 26.625), (GPTQ_K, 13.5), (GPTQ_K, 13.125)])
outplace(4600.0, 256, [(ALIGN_K, 4.375), (GPTQ_K, 88.5), (GPTQ_K, 47.75)])
write(gptq.events, "moe_gptq_awq.json")
