"""Writes perf_ops.json and infer_ops.json. perf_ops.json: a small hand-made PyTorch profiler trace (Kineto JSON
on an MI300X, args laid out as the ops' Python/C++ signatures record them) with calls of the op names of TraceLens's
perf-model class map (TraceLens/PerfModel/torch_op_mapping.py) that its perf report models in these families:

  SDPA   EvoformerAttention (DeepSpeed's Evoformer kernel; args Q, K, V, res_mask, pair_bias, Q as (batch, N_seq,
         N_res, heads, head dim)); one call with an autograd backward node (a sequence number shared with
         `autograd::engine::evaluate_function: EvoformerAttnBackward` on the backward thread, which launches the
         backward kernel), one with an unknown dtype, one with a 4-d Q (TraceLens drops it).
  SSM    DaoAILab::_causal_conv1d_fwd_cpp (x (batch, channels, seq_len), weight (channels, width), bias, seq_idx,
         initial_states, out, final_states_out, silu_activation), with and without bias; MambaSplitConv1dScanCombinedFn
         (zxbcdt (B, T, combined), conv1d weight, conv1d bias, dt_bias, A, D, chunk_size, initial_states, seq_idx,
         dt_limit, return_final_states, activation, rmsnorm_weight, rmsnorm_eps, outproj_weight, headdim, ngroups,
         norm_before_gate: 18 slots), with its scalars recorded, without them (TraceLens's defaults), with a shape
         whose state size does not divide (dropped), and once with a backward node.
  Normalization  primus::fused_ln_modulate_backward (grad_out (T, B, H), x_norm, mean, rstd, modulation grad).
  FusedRoPE  aiter::fused_qk_rope_cat_and_cache_mla (q_nope, q_pe, k_nope, k_pe, kv_cache, slot_mapping, positions,
         cos, sin, k_scale, is_neox), with an FP8 cache and with empty dtypes; aiter::fused_qk_rope_concat_and_cache_mla
         (q_nope, q_pe, kv_c, k_pe, kv_cache, q_out, ...), the cache and q_out FP8.
  mHC    aiter's mhc_post (out, x, residual, post_layer_mix, comb_res_mix, store_nt), also with an empty dtype of x;
         mhc_pre_gemm_sqrsum (out, sqrsum, x, fn, tile_k, is_fn_pack_bf16); mhc_pre_big_fuse_rmsnorm (post_mix,
         comb_mix, out, gemm_out_mul, gemm_out_sqrsum, hc_scale, hc_base, residual, norm_weight, five eps/scalars,
         sinkhorn_repeat); mhc_fused_post_pre_gemm_sqrsum (gemm_out_mul, gemm_out_sqrsum, next_residual,
         layer_input, residual_in, post_layer_mix, comb_res_mix, fn, tile_m, tile_n, tile_k, is_fn_pack_bf16).

The forward ops run on thread 3000 and launch one kernel each through hipLaunchKernel (correlation + ac2g flow),
stream 0; the backward nodes run on thread 3001. Times are µs with three decimals.

And infer_ops.json: the inference attention ops of TraceLens's inference extension
(TraceLens/PerfModel/extensions/pseudo_ops_perf_utils.py, get_pseudo_op_mappings), inside one user annotation in
vLLM's detailed step format (a context request of 64 new tokens on 128 cached ones, 3 decode requests over 3000 keys
in all), which gives them their chunk statistics; args laid out as TraceLens's models read them:

  aiter::fmha_v3_varlen_fwd   (q, k, v, cu_seqlens_q, cu_seqlens_k, ...): an MLA prefill, q and k with head dim
                              192, v with 128 (Input Dims[2]); a GQA one with an FP8 k and v.
  aiter::mha_batch_prefill    (q, k, v, cu_seqlens_q, kv_indptr, kv_page_indices, ...), k and v paged
                              (pages, page size, heads, head dim).
  aiter::pa_decode_gluon      (query, output, key_cache, value_cache, ...), the FP8 key cache (blocks, H_KV, ...)
                              third, sliding_window = Concrete Inputs[19]: -1 (full attention) and 128.
  sglang_profiler::tilelang_kernel_tilelang_sparse_fwd   (q, kv, indices, ...): MLA q (64, 16, 576), kv (192, 1,
                              576).
  vllm::gdn_attention_core    (mixed_qkv, b, a, core_attn_out, layer_name): Qwen3-Next's gated delta net, 16 key
                              heads and 32 value heads of 128.
  aiter::linear_attention_with_output_base   the same args (TraceLens never annotates it: no row).
  aiter::pa_sparse_prefill_opus_fwd   (q, kv, kv_indices_prefix, kv_indptr_prefix, kv_extend, kv_indices_extend,
                              ...): TraceLens reads q and the two index lists' lengths; once without the second.
  vllm::unified_attention_with_output, sglang::store_cache   one call each.

TraceLens's perf report is run on infer_ops.json too (pa_sparse_prefill_opus_fwd and sglang::store_cache need no
annotation, the perf report annotates vllm::unified_attention_with_output only).

Run `python tests/data/tl_attn/make_trace.py` to rewrite the files; README.md says how the TraceLens reference CSVs
next to them were made.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import BF16, Trace, strides_of  # noqa: E402  (tests/data/kineto_builder.py)

F32 = "float"
HERE = Path(__file__).parent


def header(trace_):
    trace_.events.append({"ph": "M", "name": "process_name", "pid": trace_.pid, "tid": 0, "args": {"name": "python3"}})
    trace_.events.append({"ph": "M", "name": "thread_name", "pid": trace_.pid, "tid": trace_.tid,
                          "args": {"name": "python3"}})


def write(name, events):
    trace = {"schemaVersion": 1,
             "deviceProperties": [{"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
                                   "computeMajor": 9, "computeMinor": 4, "numSms": 304}],
             "traceEvents": events, "traceName": name, "displayTimeUnit": "ms",
             "baseTimeNanoseconds": 1700000000000000000}
    (HERE / name).write_text(json.dumps(trace, indent=1) + "\n")


# ------------------------------------------------------------------ perf_ops.json (TraceLens's perf report)
P = Trace(pid=3000, corr=300)
header(P)
BWD_TID = 3001
P.events.append({"ph": "M", "name": "thread_name", "pid": P.pid, "tid": BWD_TID, "args": {"name": "autograd"}})
_t = [1010.0]
_durs: set[float] = set()
_bwd: list[tuple[int, str, str, float]] = []


def call(name, kernel, dur, dims, types, concrete=None, strides=None, seq=None, bwd=None):
    """One op at the next free time, launching `kernel` for `dur` µs; with `seq` its backward node (name, kernel,
    dur) runs after all forward ops."""
    ts = _t[0]
    n = len(dims)
    P.op(name, ts, 20.0, dims=dims, types=types, strides=strides if strides is not None else strides_of(dims),
         concrete=concrete if concrete is not None else [""] * n)
    if seq is not None:
        P.events[-1]["args"]["Sequence number"] = seq
        P.events[-1]["args"]["Fwd thread id"] = 0
        _bwd.append((seq, *bwd))
    assert dur not in _durs, dur  # distinct kernel times: no ties in the sheets' orders
    _durs.add(dur)
    P.launch(kernel, ts + 5.0, ts + 12.0, dur)
    _t[0] = ts + 30.0


# EvoformerAttention: Q, K, V (1, 128, 256, 8, 32), res_mask (1, 128, 1, 1, 256), pair_bias (1, 1, 8, 256, 256)
q = [1, 128, 256, 8, 32]
EVO_K = "void attention_kernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, true, true, true>"
call("EvoformerAttention", EVO_K, 40.5, [q, q, q, [1, 128, 1, 1, 256], [1, 1, 8, 256, 256]], [BF16] * 5, seq=71,
     bwd=("autograd::engine::evaluate_function: EvoformerAttnBackward", "void attention_back_kernel<bf16>", 81.25))
q2 = [2, 64, 384, 4, 64]
call("EvoformerAttention", EVO_K, 33.75, [q2, q2, q2, [2, 64, 1, 1, 384], [2, 1, 4, 384, 384]], [F32] * 5)
call("EvoformerAttention", EVO_K, 30.125, [q2, q2, q2, [2, 64, 1, 1, 384], [2, 1, 4, 384, 384]], ["", "", "", "", ""])
call("EvoformerAttention", EVO_K, 29.5, [[128, 256, 8, 32]] * 3 + [[], []], [BF16, BF16, BF16, "", ""])

# DaoAILab causal_conv1d forward: x (4, 4352, 1024), weight (4352, 4), bias (4352,)
CONV_K = "void causal_conv1d_fwd_kernel<Causal_conv1d_fwd_kernel_traits<128, 4, true, c10::BFloat16>>"
x = [4, 4352, 1024]
call("DaoAILab::_causal_conv1d_fwd_cpp", CONV_K, 18.25, [x, [4352, 4], [4352], [], [], x, [], []],
     [BF16, BF16, BF16, "", "", BF16, "", "Scalar"], concrete=["", "", "", "", "", "", "", "True"])
call("DaoAILab::_causal_conv1d_fwd_cpp", CONV_K, 16.375, [x, [4352, 4], [], [], [], x, [], []],
     [F32, F32, "", "", "", F32, "", "Scalar"], concrete=["", "", "", "", "", "", "", "False"])

# MambaSplitConv1dScanCombinedFn: Mamba-2 with d_inner 4096 (64 heads of 64), d_state 128, 1 group:
# combined = 2·4096 + 2·128 + 64 = 8512, conv channels 4096 + 256 = 4352, d_conv 4
MAMBA_K = "_chunk_scan_fwd_kernel"


def mamba_args(b, t, combined, ch, h, chunk, headdim, ngroups):
    dims = [[b, t, combined], [ch, 4], [ch], [h], [h], [h], [], [], [], [], [], [], [4096], [], [2048, 4096], [],
            [], []]
    types = [BF16, BF16, BF16, F32, F32, F32, "Scalar", "", "", "GenericList", "Scalar", "str", BF16, "Scalar", BF16,
             "Scalar", "Scalar", "Scalar"]
    conc = ["", "", "", "", "", "", chunk, "", "", "[0.0, inf]", "False", "silu", "", "1e-05", "", headdim, ngroups,
            "False"]
    return dict(dims=dims, types=types, concrete=conc)


call("MambaSplitConv1dScanCombinedFn", MAMBA_K, 120.5, seq=72,
     bwd=("autograd::engine::evaluate_function: MambaSplitConv1dScanCombinedFnBackward", "_chunk_scan_bwd_dx_kernel",
          250.75), **mamba_args(2, 1024, 8512, 4352, 64, "256", "64", "1"))
call("MambaSplitConv1dScanCombinedFn", MAMBA_K, 60.25, **mamba_args(1, 512, 8512, 4352, 64, "", "", ""))
# 8 groups of state size 16: combined = 8192 + 2·8·16 + 64 = 8512 as well, read with headdim 64, ngroups 8
call("MambaSplitConv1dScanCombinedFn", MAMBA_K, 55.125, **mamba_args(1, 512, 8512, 4352, 64, "128", "64", "8"))
call("MambaSplitConv1dScanCombinedFn", MAMBA_K, 50.0, **mamba_args(1, 512, 8513, 4352, 64, "256", "64", "1"))

# primus::fused_ln_modulate_backward: grad_out, x_norm (1024, 4, 3072), mean, rstd (4096,), mod_grad (4, 3072)
LNB_K = "_fused_ln_modulate_bwd_kernel"
g = [1024, 4, 3072]
call("primus::fused_ln_modulate_backward", LNB_K, 36.5, [g, g, [4096], [4096], [4, 3072]], [BF16, BF16, F32, F32, BF16])
call("primus::fused_ln_modulate_backward", LNB_K, 22.0, [[256, 2, 1536], [256, 2, 1536], [512], [512], [2, 1536]],
     [F32, F32, F32, F32, F32], strides=[[], [], [], [], []])

# aiter's fused MLA RoPE + KV-cache writes: q_nope (128, 16, 512), q_pe (128, 16, 64), k_nope / kv_c, k_pe,
# kv_cache (FP8), ...
ROPE_K = "_fused_qk_rope_cat_and_cache_mla_kernel"
call("aiter::fused_qk_rope_cat_and_cache_mla", ROPE_K, 8.5,
     [[128, 16, 512], [128, 16, 64], [128, 1, 512], [128, 1, 64], [4096, 1, 576], [128], [128], [4096, 32],
      [4096, 32], [], []], [BF16, BF16, BF16, BF16, "c10::Float8_e4m3fn", "long int", "long int", BF16, BF16, F32,
                          "Scalar"], concrete=[""] * 10 + ["False"])
call("aiter::fused_qk_rope_cat_and_cache_mla", ROPE_K, 6.75,
     [[64, 8, 512], [64, 8, 64], [64, 1, 512], [64, 1, 64], [4096, 1, 576], [64], [64], [4096, 32], [4096, 32], [],
      []], ["", "", "", "", "", "long int", "long int", BF16, BF16, F32, "Scalar"], concrete=[""] * 10 + ["False"])
call("aiter::fused_qk_rope_concat_and_cache_mla", "fuse_qk_rope_concat_and_cache_mla_per_head_kernel", 7.25,
     [[128, 16, 512], [128, 16, 64], [128, 512], [128, 64], [1024, 64, 576], [128, 16, 576], [128], [4096, 32],
      [4096, 32], []], [BF16, BF16, BF16, BF16, "c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "long int", BF16, BF16,
                        F32])

# mHC (DeepSeek's manifold-constrained hyper-connections) of aiter: 256 tokens, 4 streams of 4096: hc3 = 4² + 2·4
M_, N_, C_, HC3, SPLIT = 256, 4, 4096, 24, 4
call("aiter::mhc_post", "mhc_post_kernel", 11.25,
     [[M_, N_, C_], [M_, C_], [M_, N_, C_], [M_, N_, 1], [M_, N_, N_], []], [BF16, BF16, BF16, F32, F32, "Scalar"],
     concrete=["", "", "", "", "", "False"])
call("aiter::mhc_post", "mhc_post_kernel", 10.25,
     [[M_, N_, C_], [M_, C_], [M_, N_, C_], [M_, N_, 1], [M_, N_, N_], []], [BF16, "", BF16, F32, F32, "Scalar"],
     concrete=["", "", "", "", "", "False"])
call("aiter::mhc_pre_gemm_sqrsum", "mhc_pre_gemm_sqrsum_kernel", 15.5,
     [[SPLIT, M_, HC3], [SPLIT, M_], [M_, N_, C_], [HC3, N_ * C_], [], []], [F32, F32, BF16, F32, "Scalar", "Scalar"],
     concrete=["", "", "", "", "64", "False"])
call("aiter::mhc_pre_big_fuse_rmsnorm", "mhc_pre_big_fuse_rmsnorm_kernel", 12.75,
     [[M_, N_, 1], [M_, N_, N_], [M_, C_], [SPLIT, M_, HC3], [SPLIT, M_], [3], [HC3], [M_, N_, C_], [C_], [], [], [],
      [], [], []], [F32, F32, BF16, F32, F32, F32, F32, BF16, BF16] + ["Scalar"] * 6,
     concrete=[""] * 9 + ["1e-06", "1e-06", "1e-06", "1e-06", "2.0", "20"])
call("aiter::mhc_fused_post_pre_gemm_sqrsum", "mhc_fused_post_pre_gemm_sqrsum_kernel", 19.5,
     [[SPLIT, M_, HC3], [SPLIT, M_], [M_, N_, C_], [M_, C_], [M_, N_, C_], [M_, N_, 1], [M_, N_, N_], [HC3, N_ * C_],
      [], [], [], []], [F32, F32, BF16, BF16, BF16, F32, F32, F32, "Scalar", "Scalar", "Scalar", "Scalar"],
     concrete=[""] * 8 + ["64", "32", "64", "False"])

# the backward nodes, after the forward ops, on the backward thread
P.tid = BWD_TID
for seq, name, kernel, dur in _bwd:
    ts = _t[0]
    P.op(name, ts, 20.0, dims=[], types=[], strides=[], concrete=[])
    P.events[-1]["args"]["Sequence number"] = seq
    assert dur not in _durs, dur
    _durs.add(dur)
    P.launch(kernel, ts + 5.0, ts + 12.0, dur)
    _t[0] = ts + 30.0
P.tid = P.pid
write("perf_ops.json", P.events)


# ------------------------------------------------------------------ infer_ops.json (TraceLens's inference report)
INF = Trace(pid=3000, corr=700)
header(INF)
FP8 = "c10::Float8_e4m3fnuz"
STEP = "execute_4_context_1(sq64sk192sqsq4096sqsk12288)_generation_3(sq3sk3000sqsq3sqsk3000)"
INF.events.append({"ph": "X", "cat": "user_annotation", "name": STEP, "pid": INF.pid, "tid": INF.tid, "ts": 1000.0,
                   "dur": 2000.0, "args": {"External id": 0, "Record function id": 0}})
_it = [1010.0]


def icall(name, kernel, dur, dims, types, concrete=None):
    """One op at the next free time inside the step annotation, launching `kernel` for `dur` µs."""
    ts = _it[0]
    n = len(dims)
    INF.op(name, ts, 20.0, dims=dims, types=types, strides=strides_of(dims),
           concrete=concrete if concrete is not None else [""] * n)
    assert dur not in _durs, dur
    _durs.add(dur)
    INF.launch(kernel, ts + 5.0, ts + 12.0, dur)
    _it[0] = ts + 30.0


FMHA_K = "aiter::fmha_fwd_hd192_bf16_causal_group"
FMHA_C = ["", "", "", "", "", "64", "1000", "0.0"]
icall("aiter::fmha_v3_varlen_fwd", FMHA_K, 21.5, [[67, 16, 192], [192, 16, 192], [192, 16, 128], [5], [5], [], [], []],
      [BF16, BF16, BF16, "int", "int", "Scalar", "Scalar", "Scalar"], concrete=FMHA_C)
icall("aiter::fmha_v3_varlen_fwd", FMHA_K, 19.75, [[67, 32, 128], [192, 8, 128], [192, 8, 128], [5], [5], [], [], []],
      [BF16, FP8, FP8, "int", "int", "Scalar", "Scalar", "Scalar"], concrete=FMHA_C)
icall("aiter::mha_batch_prefill", "aiter::fmha_batch_prefill_hd128_bf16", 17.25,
      [[67, 32, 128], [200, 16, 8, 128], [200, 16, 8, 128], [5], [5], [200], [], []],
      [BF16, BF16, BF16, "int", "int", "int", "Scalar", "Scalar"], concrete=["", "", "", "", "", "", "64", "1000"])
PA_K = "paged_attention_decode_sliding_window"
pa_dims = [[3, 32, 128], [3, 32, 128], [500, 8, 16, 16, 8], [500, 8, 128, 16], [3], [3, 63]] + [[]] * 14
pa_types = [BF16, BF16, FP8, FP8, "int", "int"] + ["Scalar"] * 14
pa_conc = [""] * 6 + ["0.088", "1", "8", "256", "", "", "", "", "", "", "", "", "", "-1"]
icall("aiter::pa_decode_gluon", PA_K, 9.25, pa_dims, pa_types, concrete=pa_conc)
icall("aiter::pa_decode_gluon", PA_K, 7.125, pa_dims, pa_types, concrete=pa_conc[:19] + ["128"])
icall("sglang_profiler::tilelang_kernel_tilelang_sparse_fwd", "main_kernel", 13.5,
      [[64, 16, 576], [192, 1, 576], [64, 1, 2048], [], []], [BF16, BF16, "int", "Scalar", "Scalar"],
      concrete=["", "", "", "0.0416", "256"])
gdn = dict(dims=[[67, 8192], [67, 32], [67, 32], [67, 32, 128], []], types=[BF16, BF16, BF16, BF16, "str"],
           concrete=["", "", "", "", "model.layers.0.linear_attn"])
icall("vllm::gdn_attention_core", "chunk_gated_delta_rule_fwd_kernel_h", 25.5, **gdn)
icall("aiter::linear_attention_with_output_base", "chunk_gated_delta_rule_fwd_kernel_o", 24.25, **gdn)
# DeepSeek-V4 sparse prefill: q (64, 16, 512), 8192 selected history slots (Input Dims[2]) and 2048 in-chunk slots
# ([5]); then a call without in-chunk slots (TraceLens cannot read it: no metrics)
SP_K = "pa_sparse_prefill_opus_fwd_kernel"
sp_dims = [[64, 16, 512], [4096, 1, 512], [8192], [65], [64, 1, 512], [2048], [65], [64, 16, 512], []]
sp_types = [BF16, BF16, "int", "int", BF16, "int", "int", BF16, "Scalar"]
icall("aiter::pa_sparse_prefill_opus_fwd", SP_K, 14.25, sp_dims, sp_types)
icall("aiter::pa_sparse_prefill_opus_fwd", SP_K, 12.125, sp_dims[:5] + [[]] + sp_dims[6:], sp_types)
# vLLM's unified attention (q, k, v, output, layer_name) and SGLang's KV-cache store
icall("vllm::unified_attention_with_output", "kernel_unified_attention_3d", 16.5,
      [[67, 32, 128], [67, 8, 128], [67, 8, 128], [67, 32, 128], []], [BF16, BF16, BF16, BF16, "str"])
icall("sglang::store_cache", "store_kvcache_kernel", 3.25, [[67, 1024], [67, 1024], [4096, 1024], [4096, 1024], [67]],
      [BF16, BF16, BF16, BF16, "long int"])
write("infer_ops.json", INF.events)
