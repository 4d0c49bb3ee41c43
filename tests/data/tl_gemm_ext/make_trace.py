"""Writes te_v2_gemm.json: a small hand-made PyTorch profiler trace (Kineto JSON on an MI300X) of TransformerEngine
v2's linear layers as TraceLens's Megatron extension leaves them (examples/example_megatron_extension.py,
tree_postprocess_extension): each GEMM kernel of a `_Linear` / `_LayerNormLinear` forward or of its
`_LinearBackward` / `_LayerNormLinearBackward` gets a pseudo op of its own, nested in that op, named
`<fn>_yfwd_mm`, `<fn>Backward_xgrad_mm`, `<fn>Backward_wgrad_mm`, with Input Dims (X, Wᵀ), (dY, W) and (dYᵀ, X)
for X the input flattened to 2-D and W the (out, in) weight, Input type (dtype, dtype) ('fp8' under FP8), the
parent's Sequence number and `"Pseudo op": true`. The parents carry TE v2's autograd-function args: `_Linear`
(weight, inp, bias, is_first_microbatch, fp8, ...) and `_LayerNormLinear` (inp, ln_weight, ln_bias, weight, ...,
fp8 at 7).

The extension writes an empty Input Strides and Concrete Inputs on its pseudo ops; the calls vary that to cover
what TraceLens's model (TraceLens/PerfModel/perf_model.py tev2_pseudo_gemm) does with it:

  _Linear (2 × 512 tokens, 1024 -> 4096, bf16), twice alike: `_Linear_yfwd_mm` without Input Strides (strides
         None); `_LinearBackward_xgrad_mm` and `_LinearBackward_wgrad_mm` with contiguous strides.
  _Linear once more, its `_Linear_yfwd_mm` typed (bf16, float) as another extension might write it: dropped (the
         dtypes differ).
  _LayerNormLinear (1024 tokens, 1024 -> 3072) under FP8: `_LayerNormLinear_yfwd_mm` ('fp8', 'fp8') without
         strides, `_LayerNormLinearBackward_xgrad_mm` without strides, `_LayerNormLinearBackward_wgrad_mm` with the
         extension's empty Input Strides (dropped: the model indexes it).

Every GEMM launches one hipBLASLt kernel through hipLaunchKernel (correlation + ac2g flow), stream 0; times are µs
with three decimals, kernel times distinct.

It also writes conv_bias.json: apex's fused cuDNN convolutions (apex/contrib/conv_bias_relu: the autograd functions
ConvBias_ and ConvBiasReLU_, forward(x, weight, bias, padding, stride), autocast to half) on an A100, as the profiler
records them: the forward op with Input Dims (x, weight, bias, [], []), Concrete Inputs ('', '', '', padding,
stride) and its Sequence number; the backward node `ConvBias_Backward` / `ConvBiasReLU_Backward` (Input Dims: the
output gradient) with the same Sequence number, inside `autograd::engine::evaluate_function: ...` on the autograd
thread. TraceLens reads Concrete Inputs[3] as the stride and [4] as the padding, and models a backward op from the
parameters its forward left in a class-level cache keyed by Sequence number (TraceLens/PerfModel/perf_model.py):

  main thread   ConvBias_ (8, 64, 56, 56) * (128, 64, 3, 3), padding 1, stride 2, twice (sequence numbers 100,
                101); ConvBiasReLU_ (8, 128, 28, 28) * (256, 128, 3, 3), padding 1, stride 1 (102); ConvBiasReLU_ in
                fp32 without Input Strides, (4, 3, 224, 224) * (64, 3, 7, 7), padding 3, stride 2 (103); ConvBias_
                with a half input and an fp32 weight (104, dropped: mixed dtypes, so no cached forward either);
                ConvBias_ (8, 128, 28, 28) * (64, 128, 1, 1), padding 0, stride 1 (106, dropped: read as stride 0).
  autograd      the backward nodes of 104 and 106 (no forward cached: dropped), 103, 102, 101, 100, 105.
  side thread   ConvBias_ (2, 32, 64, 64) * (32, 32, 3, 3), padding 1, stride 1 (105), before its backward in time
                but written last in the file: TraceLens's perf sheets, which walk the events in file order, meet its
                backward before the cache holds it (dropped from CONV_bwd), while its unified table, made after
                the sheets, finds it there.

Every forward launches one cuDNN kernel, every backward two (dgrad, wgrad), through cudaLaunchKernel.

And moe_fused.json: aiter's fused MoE ops as SGLang calls them directly (no vLLM wrapper), on an MI300X:
aiter::fmoe_fp8_blockscale_g1u1 (out, input, gate, down, sorted_token_ids, sorted_weights, sorted_expert_ids,
num_valid_ids, topk, input_scale, fc1_scale, fc2_scale, kernel_name, fc_scale_blkn, fc_scale_blkk,
fc2_smooth_scale, activation) of 32 tokens twice alike and of 128 tokens (DeepSeek-like: 256 experts, hidden 7168,
inter 256 per shard, top-8, FP8 weights and input, bf16 output), and aiter::fmoe_g1u1 (out, input, gate, down,
sorted_token_ids, sorted_weights, sorted_expert_ids, num_valid_ids, topk, input_scale, fc1_scale, fc2_scale,
fc2_smooth_scale, activation) in bf16 (128 experts, hidden 4096, inter 1536, top-8), one kernel each; once more
with its topk recorded empty (TraceLens drops that call).

Run `python tests/data/tl_gemm_ext/make_trace.py` to rewrite the files; README.md says how the TraceLens reference
CSVs next to them were made.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import BF16, Trace, strides_of  # noqa: E402  (tests/data/kineto_builder.py)

F32 = "float"
_durs: set[float] = set()


MI300X = {"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992, "computeMajor": 9,
          "computeMinor": 4, "numSms": 304}
A100 = {"id": 2, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85198045184, "computeMajor": 8, "computeMinor": 0,
        "numSms": 108}


def write(events: list[dict], name: str, device: dict = MI300X) -> None:
    """The trace file `name` next to this script, with `events`."""
    trace = {"schemaVersion": 1, "deviceProperties": [device],
             "traceEvents": events, "traceName": name, "displayTimeUnit": "ms",
             "baseTimeNanoseconds": 1700000000000000000}
    Path(__file__).with_name(name).write_text(json.dumps(trace, indent=1) + "\n")


# --- TransformerEngine v2 pseudo GEMMs (te_v2_gemm.json) ---
te = Trace(pid=3300, corr=1300)
te.events.append({"ph": "M", "name": "process_name", "pid": te.pid, "tid": 0, "args": {"name": "python3"}})
te.events.append({"ph": "M", "name": "thread_name", "pid": te.pid, "tid": te.tid, "args": {"name": "python3"}})
NN = "Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1"   # hipBLASLt bf16, A and B not transposed
NT = "Cijk_Ailk_Bjlk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1"   # B transposed
TN = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x64_MI16x16x1"   # A transposed
F8 = "Cijk_Ailk_Bjlk_F8BS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x128_MI16x16x1"


def fn_op(name, ts, dur, seq, dims, types, concrete):
    """A TE v2 autograd-function op (_Linear, _LinearBackward, ...) with its Sequence number."""
    te.op(name, ts, dur, dims=dims, types=types, strides=strides_of(dims), concrete=concrete)
    te.events[-1]["args"]["Sequence number"] = seq


def pseudo_mm(name, ts, seq, dims, dtype, kernel, dur, strides="none"):
    """One pseudo GEMM op at ts (20 µs, nested in its function op) launching `kernel` for `dur` µs; dtype one name
    for both operands or a pair; strides 'none' (no Input Strides), 'empty' (the extension's []) or 'contig'."""
    types = list(dtype) if isinstance(dtype, tuple) else [dtype, dtype]
    te.op(name, ts, 20.0, dims=dims, types=types, strides=strides_of(dims), concrete=[])
    args = te.events[-1]["args"]
    args.update({"Sequence number": seq, "Pseudo op": True})
    if strides == "none":
        del args["Input Strides"]
    elif strides == "empty":
        args["Input Strides"] = []
    assert dur not in _durs, dur  # distinct kernel times: no ties in the sheets' orders
    _durs.add(dur)
    te.launch(kernel, ts + 5.0, ts + 12.0, dur)


def linear(t0, seq, prefix, w, inp, dtype, fn_dims, fn_types, fn_concrete, durs, kernels, strides):
    """One forward (`prefix`) at t0 and its backward (`prefix`Backward) at t0 + 100 µs: the three pseudo GEMMs
    of weight w (out, in) and input inp, as the extension makes them; None in durs skips that GEMM."""
    x = [math.prod(inp[:-1]), inp[-1]]
    dy = [x[0], w[0]]
    fn_op(prefix, t0, 40.0, seq, fn_dims, fn_types, fn_concrete)
    pseudo_mm(f"{prefix}_yfwd_mm", t0 + 10.0, seq, [x, w[::-1]], dtype, kernels[0], durs[0], strides[0])
    if durs[1] is None:
        return
    fn_op(f"{prefix}Backward", t0 + 100.0, 70.0, seq, [[*inp[:-1], w[0]]], [fn_types[0]], [""])
    pseudo_mm(f"{prefix}Backward_xgrad_mm", t0 + 110.0, seq, [dy, w], dtype, kernels[1], durs[1], strides[1])
    pseudo_mm(f"{prefix}Backward_wgrad_mm", t0 + 140.0, seq, [dy[::-1], x], dtype, kernels[2], durs[2], strides[2])


W1, INP1 = [4096, 1024], [2, 512, 1024]
LIN_T = [BF16, BF16, "", "Scalar", "Scalar", "Scalar"]
LIN_C = ["", "", "", "False", "False", "False"]
for i, (t0, durs) in enumerate([(1000.0, (61.25, 58.5, 63.75)), (1300.0, (60.125, 59.375, 64.5))]):
    linear(t0, 41 + i, "_Linear", W1, INP1, BF16, [W1, INP1, [], [], [], []], LIN_T, LIN_C, durs, (NT, NN, TN),
           ("none", "contig", "contig"))
# a pseudo op of two dtypes (the Megatron extension asserts one; another extension might not)
linear(1600.0, 43, "_Linear", W1, INP1, (BF16, F32), [W1, INP1, [], [], [], []], LIN_T, LIN_C, (62.0, None, None),
       (NT,), ("none",))
# the extension's fp8 flag rewrites the dtype; it still asserts W and the input share one (bf16) before
W2, INP2 = [3072, 1024], [1024, 1024]
linear(1900.0, 44, "_LayerNormLinear", W2, INP2, "fp8", [INP2, [1024], [1024], W2, [], [], [], []],
       [BF16, BF16, BF16, BF16, "", "Scalar", "Scalar", "Scalar"], ["", "", "", "", "", "1e-05", "False", "True"],
       (23.5, 22.75, 24.25), (F8, F8, F8), ("none", "none", "empty"))
write(te.events, "te_v2_gemm.json")

# --- apex's fused convolutions (conv_bias.json) ---
cv = Trace(pid=3400, corr=1500)
cv.events.append({"ph": "M", "name": "process_name", "pid": cv.pid, "tid": 0, "args": {"name": "python3"}})
cv.events.append({"ph": "M", "name": "thread_name", "pid": cv.pid, "tid": cv.tid, "args": {"name": "python3"}})
HALF = "c10::Half"
FPROP = "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1"
FPROP32 = "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1"
DGRAD = "sm80_xmma_dgrad_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1"
WGRAD = "sm80_xmma_wgrad_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1"


def kernel(name, ts, dur, k_ts=None):
    """One kernel of `dur` µs launched at ts (cudaLaunchKernel), running from k_ts (ts + 6 by default)."""
    assert dur not in _durs, dur
    _durs.add(dur)
    cv.launch(name, ts, ts + 6.0 if k_ts is None else k_ts, dur)
    cv.events[-4]["name"] = "cudaLaunchKernel"


def conv_fwd(name, ts, seq, x, w, dtypes, padding, stride, dur, strides=True):
    """A forward op of apex's conv_bias_relu at ts (30 µs) launching one kernel."""
    dims = [x, w, [1, w[0], 1, 1], [], []]
    cv.op(name, ts, 30.0, dims=dims, types=[*dtypes, dtypes[1], "Scalar", "Scalar"], strides=strides_of(dims),
          concrete=["", "", "", str(padding), str(stride)])
    args = cv.events[-1]["args"]
    args["Sequence number"] = seq
    if not strides:
        del args["Input Strides"]
    kernel(FPROP if dtypes[0] == HALF else FPROP32, ts + 5.0, dur)


def conv_bwd(name, ts, seq, grad_out, dtype, durs):
    """The backward node of `name` at ts (210 µs) inside its evaluate_function, launching dgrad and wgrad (one after
    the other on the stream)."""
    for n, t, d in ((f"autograd::engine::evaluate_function: {name}Backward", ts, 220.0),
                    (f"{name}Backward", ts + 2, 210.0)):
        cv.op(n, t, d, dims=[grad_out], types=[dtype], strides=strides_of([grad_out]), concrete=[""])
        cv.events[-1]["args"]["Sequence number"] = seq
    kernel(DGRAD, ts + 10.0, durs[0], ts + 16.0)
    kernel(WGRAD, ts + 30.0, durs[1], ts + 110.0)


X1, WC1 = [8, 64, 56, 56], [128, 64, 3, 3]
conv_fwd("ConvBias_", 1000.0, 100, X1, WC1, (HALF, HALF), 1, 2, 41.5)
conv_fwd("ConvBias_", 1100.0, 101, X1, WC1, (HALF, HALF), 1, 2, 42.25)
conv_fwd("ConvBiasReLU_", 1200.0, 102, [8, 128, 28, 28], [256, 128, 3, 3], (HALF, HALF), 1, 1, 37.75)
conv_fwd("ConvBiasReLU_", 1300.0, 103, [4, 3, 224, 224], [64, 3, 7, 7], (F32, F32), 3, 2, 55.5, strides=False)
conv_fwd("ConvBias_", 1400.0, 104, X1, WC1, (HALF, F32), 1, 2, 12.0)
conv_fwd("ConvBias_", 1600.0, 106, [8, 128, 28, 28], [64, 128, 1, 1], (HALF, HALF), 0, 1, 6.25)
cv.tid = 3401   # the autograd engine's thread
cv.events.append({"ph": "M", "name": "thread_name", "pid": cv.pid, "tid": cv.tid, "args": {"name": "autograd"}})
conv_bwd("ConvBias_", 2000.0, 104, [8, 128, 28, 28], HALF, (30.5, 31.5))
conv_bwd("ConvBiasReLU_", 2300.0, 103, [4, 64, 112, 112], F32, (88.25, 91.75))
conv_bwd("ConvBiasReLU_", 2600.0, 102, [8, 256, 28, 28], HALF, (70.5, 72.25))
conv_bwd("ConvBias_", 2900.0, 101, [8, 128, 28, 28], HALF, (60.75, 65.25))
conv_bwd("ConvBias_", 3200.0, 100, [8, 128, 28, 28], HALF, (61.5, 66.5))
conv_bwd("ConvBias_", 3500.0, 105, [2, 32, 64, 64], HALF, (9.25, 10.75))
conv_bwd("ConvBias_", 3800.0, 106, [8, 64, 28, 28], HALF, (7.25, 8.75))
cv.tid = 3402   # a side thread whose events the trace writes last
cv.events.append({"ph": "M", "name": "thread_name", "pid": cv.pid, "tid": cv.tid, "args": {"name": "side"}})
conv_fwd("ConvBias_", 1500.0, 105, [2, 32, 64, 64], [32, 32, 3, 3], (HALF, HALF), 1, 1, 8.5)
write(cv.events, "conv_bias.json", A100)

# --- aiter's fused MoE ops called directly (moe_fused.json) ---
mf = Trace(pid=3500, corr=1700)
mf.events.append({"ph": "M", "name": "process_name", "pid": mf.pid, "tid": 0, "args": {"name": "python3"}})
mf.events.append({"ph": "M", "name": "thread_name", "pid": mf.pid, "tid": mf.tid, "args": {"name": "python3"}})
FP8Z, I32 = "c10::Float8_e4m3fnuz", "int"


def fmoe(name, ts, m, k, n, e, topk, dtype, kernel_name, dur, topk_text=None):
    """One aiter fused-MoE call of m tokens at ts (40 µs) launching its kernel for dur µs."""
    padded = m * topk + e * 31
    dims = [[m, k], [m, k], [e, 2 * n, k], [e, k, n], [padded], [padded], [(padded + 31) // 32], [1], []]
    types = [BF16, dtype, dtype, dtype, I32, F32, I32, I32, "Scalar"]
    concrete = [""] * 8 + [str(topk) if topk_text is None else topk_text]
    if name == "aiter::fmoe_fp8_blockscale_g1u1":
        dims += [[k // 128, m], [e, 2 * n // 128, k // 128], [e, k // 128, n // 128], [], [], [], [], []]
        types += [F32, F32, F32, "", "Scalar", "Scalar", "", "Scalar"]
        concrete += ["", "", "", "", "128", "128", "", "0"]
    else:
        dims += [[], [], [], [], []]
        types += ["", "", "", "", "Scalar"]
        concrete += ["", "", "", "", "0"]
    mf.op(name, ts, 40.0, dims=dims, types=types, strides=strides_of(dims), concrete=concrete)
    assert dur not in _durs, dur
    _durs.add(dur)
    mf.launch(kernel_name, ts + 5.0, ts + 12.0, dur)


BS_K = "aiter::fmoe_fp8_blockscale_g1u1_subGU_256_silu"
fmoe("aiter::fmoe_fp8_blockscale_g1u1", 1000.0, 32, 7168, 256, 256, 8, FP8Z, BS_K, 41.25)
fmoe("aiter::fmoe_fp8_blockscale_g1u1", 1100.0, 32, 7168, 256, 256, 8, FP8Z, BS_K, 43.75)
fmoe("aiter::fmoe_fp8_blockscale_g1u1", 1200.0, 128, 7168, 256, 256, 8, FP8Z, BS_K, 77.5)
fmoe("aiter::fmoe_g1u1", 1300.0, 16, 4096, 1536, 128, 8, BF16, "aiter::fmoe_bf16_g1u1_silu_32x256", 52.125)
fmoe("aiter::fmoe_g1u1", 1400.0, 16, 4096, 1536, 128, 8, BF16, "aiter::fmoe_bf16_g1u1_silu_32x256", 51.375, "")
write(mf.events, "moe_fused.json")
