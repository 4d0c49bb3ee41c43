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

Run `python tests/data/tl_gemm_ext/make_trace.py` to rewrite the files; README.md says how the TraceLens reference
CSVs next to them were made.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import BF16, Trace  # noqa: E402  (tests/data/kineto_builder.py)

F32 = "float"
_durs: set[float] = set()


def strides_of(dims):
    """Contiguous strides of each shape."""
    out = []
    for d in dims:
        s, acc = [], 1
        for x in reversed(d):
            s.insert(0, acc)
            acc *= x
        out.append(s)
    return out


def write(events: list[dict], name: str) -> None:
    """The trace file `name` next to this script, with `events`."""
    trace = {"schemaVersion": 1,
             "deviceProperties": [{"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
                                   "computeMajor": 9, "computeMinor": 4, "numSms": 304}],
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
