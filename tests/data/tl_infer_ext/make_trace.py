"""Writes infer_ext.json: a small hand-made PyTorch profiler trace (Kineto JSON on an MI300X, args laid out as the ops'
Python/C++ signatures record them) with the last names of TraceLens's perf-model class map that TraceLens's
inference report models: two ops called directly and the pseudo ops its tree extensions
(TraceLens/Trace2Tree/extensions/*_pseudo_ops.py, applied with enable_pseudo_ops) make from Python frames
(python_function events) and the ops inside them:

  aiter::topk_softplus (topk_weights (M, topk) float, topk_indices (M, topk) int, gating_output (M, E), ...):
         the router of a MoE (MoE_aux), with bf16 gating logits and with float ones.
  aiter::mixed_sample_outer_exponential (out (T,) int, logits (T, V), exp_noise (T, V) float, ...): ATOM's
         exponential-noise sampler (category elementwise), with bf16 logits and with float ones.
  pseudo_op::moe_flydsl_stage1 / _stage2 (moe_flydsl_pseudo_ops.py): two aiter::fused_moe_ ops (hidden_states,
         w1, w2, topk_weights, topk_ids, ...: the layout of vllm::rocm_aiter_fused_moe), each around the Python
         frames `aiter/fused_moe.py(N): flydsl_moe_stage1` and `...: flydsl_moe_stage2`, which launch their GEMM
         kernel; a moe sorting op before them. MXFP4 weights (w1's K and w2's N packed two to a byte) and FP8 ones.
  pseudo_mla_decode_fwd (mla_decode_pseudo_ops.py): two `aiter/mla.py(N): mla_decode_fwd` frames, each around
         aiter::mla_decode_stage1_asm_fwd (q, kv_buffer, ...) and aiter::mla_reduce_v1; a third frame without the
         stage-1 op gets no pseudo op.
  pseudo_mla_prefill_fwd (mla_prefill_pseudo_ops.py): a `...: mla_fp8_prefill_attn` frame around
         aiter::mla_prefill_ps_asm_fwd (q, k, v, ...; FP8, v of head dim 128) and aiter::mla_reduce_v1.
  pseudo_v4_paged_decode_swa / _csa / _hca (v4_paged_decode_pseudo_ops.py): three aiter::v4_attention_with_output
         ops, each launching a RoPE kernel and around a `.../paged_decode.py(N): sparse_attn_v4_paged_decode` frame
         that launches the split and reduce kernels; the mode comes from the kernels under the op (a
         fused_compress_attn* kernel: CSA, hca_*: HCA, else SWA), H_Q and the head dim from its
         qk_norm_rope_H<H>_D<D>_RD<R> kernel (the SWA one has none: DeepSeek-V4-Flash's 64 heads of 512).

Everything runs inside one user annotation in vLLM's detailed step format (a context request of 64 new tokens on
128 cached ones, 3 decode requests over 3000 keys in all), which gives the attention pseudo ops their chunk
statistics. Every kernel is launched through hipLaunchKernel (correlation + ac2g flow), stream 0; kernel times are
distinct.

Run `python tests/data/tl_infer_ext/make_trace.py` to rewrite the file; README.md says how the TraceLens reference
CSVs next to it were made.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import BF16, Trace, strides_of  # noqa: E402  (tests/data/kineto_builder.py)

F32, I32 = "float", "int"
FP8, FP4 = "c10::Float8_e4m3fnuz", "c10::Float4_e2m1fn_x2"
T = Trace(pid=3000, corr=500)
ev = T.events
ev.append({"ph": "M", "name": "process_name", "pid": T.pid, "tid": 0, "args": {"name": "python3"}})
ev.append({"ph": "M", "name": "thread_name", "pid": T.pid, "tid": T.tid, "args": {"name": "python3"}})
STEP = "execute_4_context_1(sq64sk192sqsq4096sqsk12288)_generation_3(sq3sk3000sqsq3sqsk3000)"
ev.append({"ph": "X", "cat": "user_annotation", "name": STEP, "pid": T.pid, "tid": T.tid, "ts": 1000.0,
           "dur": 9000.0, "args": {"External id": 0, "Record function id": 0}})
_durs: set[float] = set()
_py = [0]


def op(name, ts, dur, dims, types, concrete=None):
    """A cpu_op at ts."""
    T.op(name, ts, dur, dims=dims, types=types, strides=strides_of(dims),
         concrete=concrete if concrete is not None else [""] * len(dims))


def frame(name, ts, dur):
    """A Python frame (python_function event) at ts."""
    _py[0] += 1
    ev.append({"ph": "X", "cat": "python_function", "name": name, "pid": T.pid, "tid": T.tid, "ts": ts, "dur": dur,
               "args": {"Python parent id": 0, "Python id": _py[0], "Python thread": 0}})


def kernel(name, ts, dur):
    """hipLaunchKernel at ts launching `name` for `dur` µs."""
    assert dur not in _durs, dur  # distinct kernel times: no ties in the sheets' orders
    _durs.add(dur)
    T.launch(name, ts, ts + 7.0, dur)


def call(name, k, dur, ts, dims, types, concrete=None):
    """An op launching one kernel."""
    op(name, ts, 20.0, dims, types, concrete)
    kernel(k, ts + 5.0, dur)


# --- ops called directly: aiter's topk_softplus router (64 tokens, 256 experts, top-8) and ATOM's sampler ---
M, E, TOPK = 64, 256, 8
SOFTPLUS_K = "_ZN5aiter20topk_softplus_kernelI"
call("aiter::topk_softplus", SOFTPLUS_K, 4.375, 1010.0, [[M, TOPK], [M, TOPK], [M, E], [E], [], []],
     [F32, I32, BF16, F32, "Scalar", "Scalar"], concrete=["", "", "", "", "True", "2.5"])
call("aiter::topk_softplus", SOFTPLUS_K, 5.125, 1040.0, [[2 * M, TOPK], [2 * M, TOPK], [2 * M, E], [E], [], []],
     [F32, I32, F32, F32, "Scalar", "Scalar"], concrete=["", "", "", "", "True", "2.5"])
TS, V = 16, 129280
SAMPLE_K = "mix_sample_outer_exponential_kernel"
call("aiter::mixed_sample_outer_exponential", SAMPLE_K, 21.75, 1070.0, [[TS], [TS, V], [TS, V], [], []],
     [I32, BF16, F32, "Scalar", "Scalar"], concrete=["", "", "", "1e-10", "False"])
call("aiter::mixed_sample_outer_exponential", SAMPLE_K, 36.5, 1100.0, [[TS], [TS, V], [TS, V], [], []],
     [I32, F32, F32, "Scalar", "Scalar"], concrete=["", "", "", "1e-10", "False"])

# --- aiter::fused_moe_ with flydsl's two stages (256 experts, hidden 7168, inter 256 per rank, top-8) ---
MF, KF, NF, EF = 32, 7168, 256, 256
SORT_K = "_ZN7ck_tile14MoeSortingKernelINS_22MoeSortingProblemExIifEEEEvNT_5KargsE"


def fused_moe(t0, m, wdt, pack, d0, k1, d1, k2, d2):
    """aiter::fused_moe_ of m tokens at t0 (weights of dtype wdt, K of w1 and N of w2 divided by pack) around a
    sorting op (its kernel d0 µs) and the two flydsl stages' frames, stage 1 launching k1 for d1 µs, stage 2 k2 for
    d2 µs."""
    d = [[m, KF], [EF, 2 * NF, KF // pack], [EF, KF, NF // pack], [m, TOPK], [m, TOPK], [], [], [], [], [], [], [],
         [], []]
    op("aiter::fused_moe_", t0, 300.0, d,
       [BF16, wdt, wdt, F32, I32, "", "Scalar", "Scalar", "Scalar", "", "", "", "", "Scalar"],
       concrete=["", "", "", "", "", "", "1", "0", "0", "", "", "", "", "False"])
    call("aiter::moe_sorting_fwd", SORT_K, d0, t0 + 10.0,
         [[m, TOPK], [m, TOPK], [4096], [4096], [128], [2], [m, KF], [], []],
         [I32, F32, I32, F32, I32, I32, BF16, "Scalar", "Scalar"], concrete=[""] * 7 + ["256", "32"])
    frame("aiter/fused_moe.py(1544): flydsl_moe_stage1", t0 + 50.0, 100.0)
    kernel(k1, t0 + 60.0, d1)
    frame("aiter/fused_moe.py(1601): flydsl_moe_stage2", t0 + 170.0, 100.0)
    kernel(k2, t0 + 180.0, d2)


fused_moe(1200.0, MF, FP4, 2, 1.375, "moe_gemm1_0_a4w4_flydsl", 31.25, "moe_gemm2_0_a4w4_flydsl", 17.625)
fused_moe(1600.0, 4 * MF, FP8, 1, 2.375, "moe_gemm1_0_a8w8_flydsl", 52.5, "moe_gemm2_0_a8w8_flydsl", 28.375)

# --- aiter MLA decode (DeepSeek: 16 heads of 576 = 512 latent + 64 rope, one latent KV head, pages of 1) ---
MLA_DEC_K = "mla_a8w8_qh16_qseqlen1_gqaratio16_ps.co"
REDUCE_K = "_ZN5aiter18kn_mla_reduce_v1_psILi512ELi16EEEvNS_20MlaReduceKernelV1ParamsE"


def mla_decode(t0, with_stage1, d1, d2):
    """An `aiter/mla.py: mla_decode_fwd` frame at t0 around the stage-1 op (launching its kernel for d1 µs; left
    out without with_stage1) and the reduce op (d2 µs)."""
    frame("aiter/mla.py(312): mla_decode_fwd", t0, 100.0)
    if with_stage1:
        call("aiter::mla_decode_stage1_asm_fwd", MLA_DEC_K, d1, t0 + 10.0,
             [[3, 16, 576], [8192, 1, 1, 576], [4], [3000], [3], [3, 16, 512], [4, 16, 1, 512], [4, 16, 1], [], [],
              [], []],
             [BF16, BF16, I32, I32, I32, BF16, F32, F32, "Scalar", "Scalar", "Scalar", "Scalar"],
             concrete=["", "", "", "", "", "", "", "", "1", "0.0416", "16", "1"])
    call("aiter::mla_reduce_v1", REDUCE_K, d2, t0 + 50.0, [[4, 16, 1, 512], [4, 16, 1], [3, 16, 512], [], []],
         [F32, F32, BF16, "Scalar", "Scalar"])


mla_decode(2000.0, True, 11.25, 2.625)
mla_decode(2200.0, True, 12.5, 2.875)
mla_decode(2400.0, False, None, 3.125)

# --- aiter MLA FP8 prefill: q and k with head dim 192 (128 + 64 rope), v with 128 ---
frame("vllm/v1/attention/backends/mla/rocm_aiter_mla.py(402): mla_fp8_prefill_attn", 2600.0, 100.0)
call("aiter::mla_prefill_ps_asm_fwd", "mla_pfl_qh192_vh128_m32x8_n128x1_causal1.co", 23.5, 2610.0,
     [[67, 16, 192], [192, 16, 192], [192, 16, 128], [5], [5], [67, 16, 128], [], [], []],
     [FP8, FP8, FP8, I32, I32, BF16, "Scalar", "Scalar", "Scalar"],
     concrete=["", "", "", "", "", "", "64", "1", "0.0722"])
call("aiter::mla_reduce_v1", REDUCE_K, 3.375, 2650.0, [[8, 16, 1, 128], [8, 16, 1], [67, 16, 128], [], []],
     [F32, F32, BF16, "Scalar", "Scalar"])

# --- DeepSeek-V4 sparse paged decode, one v4_attention_with_output per mode ---


def v4(t0, rope_k, extra_k, d_rope, d_extra, d_split, d_reduce):
    """aiter::v4_attention_with_output at t0 launching rope_k (and extra_k), around the sparse paged-decode frame
    that launches its split and reduce kernels."""
    op("aiter::v4_attention_with_output", t0, 200.0,
       [[3, 4096], [3, 512], [3, 64, 512], [], [2048, 1, 512], [3], []],
       [BF16, BF16, BF16, "", BF16, I32, "str"], concrete=["", "", "", "", "", "", "model.layers.0.self_attn"])
    kernel(rope_k, t0 + 10.0, d_rope)
    if extra_k:
        kernel(extra_k, t0 + 30.0, d_extra)
    frame("aiter/ops/paged_decode.py(88): sparse_attn_v4_paged_decode", t0 + 60.0, 100.0)
    kernel("sparse_attn_v4_paged_decode_split_kernel", t0 + 70.0, d_split)
    kernel("sparse_attn_v4_paged_decode_reduce_kernel", t0 + 90.0, d_reduce)


v4(3000.0, "_swa_write_kernel", None, 1.875, None, 14.25, 1.625)
v4(3300.0, "qk_norm_rope_H32_D512_RD64_flydsl", "fused_compress_attn_D512_RD64_R4_OVL_SS8_KB32_rmsbf16_pf_flydsl",
   2.125, 6.75, 16.5, 1.75)
v4(3600.0, "qk_norm_rope_H64_D512_RD64_flydsl", "hca_compress_forward_D512_R128_NW4_SL256_S128_flydsl",
   2.25, 7.125, 18.75, 1.5)

trace = {"schemaVersion": 1,
         "deviceProperties": [{"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
                               "computeMajor": 9, "computeMinor": 4, "numSms": 304}],
         "traceEvents": ev, "traceName": "infer_ext.json", "displayTimeUnit": "ms",
         "baseTimeNanoseconds": 1700000000000000000}
(Path(__file__).parent / "infer_ext.json").write_text(json.dumps(trace, indent=1) + "\n")
