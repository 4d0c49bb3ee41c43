"""Writes class_map.json: a small hand-made PyTorch profiler trace (Kineto JSON on an MI300X, args laid out as the
ops' Python/C++ signatures record them) with one call of each op name TraceLens's perf-model class map models
(TraceLens/PerfModel/torch_op_mapping.py and its extensions' get_pseudo_op_mappings) that the shared references
never exercise. Every op launches one kernel through hipLaunchKernel (correlation + ac2g flow), stream 0; times are
µs with three decimals. The ops, by family:

  GEMM   aiter's block-scale FP8 GEMMs (gemm_a8w8_blockscale: with x/w scales, and aiter::gemm_a8w8_ck without
         them), aiter's bf16 GEMMs (gemm_a16w16, gemm_a16w16_atomic_ with an fp32 output, _gemm_a16w16_asm),
         vLLM's rocm_unquantized_gemm (with bias), gemm_with_dynamic_quant, aiter's MXFP4 GEMMs (gemm_afp4wfp4_,
         gemm_a4w4, _gemm_a4w4_asm), aiter's batched FP4/FP8 GEMMs, Primus-Turbo's hipBLASLt FP8 (transposed B,
         a Tensile kernel name) and FP4 (transC) GEMMs, TransformerEngine's tex_ts::te_gemm_ts.
  elementwise   the gated activations of aiter, vLLM and sgl-kernel (silu/gelu/gelu-tanh and mul, args (out,
         input)), Primus-Turbo's FP8 and dual MXFP4 quantizers, Liger's SiLU-mul, aiter's per-token and per-tensor
         FP8 quantizers (out, input, scales, ...) and vLLM's Triton per-token-group FP8 quantizer (x, group_size).
  RMSNorm  aiter's and vLLM's RMSNorm ops, plain, with a residual add, with FP8 (per-token, per-group) or MXFP4
         quantization (with and without a second input and a residual), with padding.
  SDPA   aiter's attention forwards (mha_fwd, fmha_v3_fwd, _flash_attn_forward with more keys than queries,
         wrapper_fmha_v3_fwd whose q, k, v follow the output) and FlashAttention-3's flash_attn_3::fwd.
  RoPE   FusedRoPEFunc, aiter's cached-positions RoPE and sgl-kernel's rotary_embedding (head size and rotary
         dims from its args); MXFP4 group quantizers of SGLang and aiter.
  GroupedGEMM  Primus-Turbo's grouped GEMMs, with a (G, K, N) and a (G, N, K) weight, variable-K, and the zipped
         forms with a list of shapes per operand (bf16 unknown for a TensorList: grouped_gemm drops the call).
  other  Primus's fused LN-modulate, MoE token dispatch and combine, fused cross entropy.
  SDPA backward  flash_attn's backward and varlen backward, aiter's _flash_attn_backward, mha_bwd and
         wrapper_fmha_v3_bwd.
  CustomCollective  vLLM's, SGLang's and aiter's custom all-reduce, reduce-scatter and all-gather ops, and aiter's
         fused all-reduce + RMSNorm (its C++ op and its Python wrapper).

Run `python tests/data/tl_class_map/make_trace.py` to rewrite the file; README.md says how the TraceLens reference
CSVs next to it were made.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import BF16, Trace, strides_of  # noqa: E402  (tests/data/kineto_builder.py)

FP8, FP4, E8M0, F32 = "c10::Float8_e4m3fnuz", "c10::Float4_e2m1fn_x2", "c10::Float8_e8m0fnu", "float"
U8 = "unsigned char"

trace_ = Trace(pid=3000, corr=200)
events, PID, TID = trace_.events, trace_.pid, trace_.tid
events.append({"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "python3"}})
events.append({"ph": "M", "name": "thread_name", "pid": PID, "tid": TID, "args": {"name": "python3"}})
_t = [1010.0]
_durs: set[float] = set()


def call(name, kernel, dur, dims, types, concrete=None, strides=None):
    """One op at the next free time, launching `kernel` for `dur` µs."""
    ts = _t[0]
    n = len(dims)
    trace_.op(name, ts, 20.0, dims=dims, types=types,
              strides=strides if strides is not None else [[] for _ in range(n)],
              concrete=concrete if concrete is not None else [""] * n)
    assert dur not in _durs, dur  # distinct kernel times: no ties in the sheets' orders
    _durs.add(dur)
    trace_.launch(kernel, ts + 5.0, ts + 12.0, dur)
    _t[0] = ts + 30.0


# --- GEMM (perf_model_extensions.py and perf_model.py GEMM subclasses) ---
M, N, K = 64, 2112, 7168
d = [[M, K], [N, K], [M, K // 128], [(N + 127) // 128, K // 128], [M, N]]
call("aiter::gemm_a8w8_blockscale_ck", "_gemm_a8w8_blockscale_kernel_BLOCK_SIZE_M_64", 11.5, d,
     [FP8, FP8, F32, F32, BF16], strides=strides_of(d))
call("aiter::gemm_a8w8_blockscale_ck", "_gemm_a8w8_blockscale_kernel_BLOCK_SIZE_M_64", 12.5, d,
     [FP8, FP8, F32, F32, BF16], strides=strides_of(d))
d = [[256, 4096], [4096, 4096], [256, 4096]]
call("aiter::gemm_a8w8_ck", "gemm_a8w8_ck_kernel_256x128x128", 20.25, d, [FP8, FP8, BF16], strides=strides_of(d))
d = [[128, 7168], [1536, 7168], [128, 56], [12, 56], []]
call("vllm::rocm_aiter_triton_gemm_a8w8_blockscale", "_gemm_a8w8_blockscale_kernel_BLOCK_SIZE_M_32", 9.0, d,
     [FP8, FP8, F32, F32, "Scalar"], concrete=["", "", "", "", "15"])
d = [[32, 4096], [11008, 4096], [], [32, 11008]]
call("aiter::gemm_a16w16", "_gemm_a16w16_kernel_BLOCK_SIZE_M_32", 14.0, d, [BF16, BF16, "", "Scalar"],
     concrete=["", "", "", "15"])
d = [[16, 2048], [2048, 2048], [], [16, 2048]]
call("aiter::gemm_a16w16_atomic_", "_gemm_a16w16_atomic_kernel_BLOCK_SIZE_M_16", 6.5, d, [BF16, BF16, "Scalar", F32],
     concrete=["", "", "15", ""])
d = [[8, 5120], [1280, 5120], [8, 1280], [1, 1280]]
call("aiter::_gemm_a16w16_asm", "_ZN5aiter24bf16gemm_fp32bf16_tn_32x64_pf3E", 4.75, d,
     [BF16, BF16, BF16, "unsigned int"])
d = [[48, 3584], [18944, 3584], [18944]]
call("vllm::rocm_unquantized_gemm", "wvSplitK_hf_sml_", 30.0, d, [BF16, BF16, BF16])
d = [[32, 4096], [4096, 4096], []]
call("vllm::gemm_with_dynamic_quant", "gemm_with_dynamic_quant_kernel", 10.0, d, [BF16, BF16, "Scalar"],
     concrete=["", "", "1"], strides=strides_of(d))
d = [[256, 3584], [7168, 3584], [256, 224], [7168, 224], [], [256, 7168]]
call("aiter::gemm_afp4wfp4_", "_gemm_afp4_wfp4_kernel_BLOCK_SIZE_M_64", 15.0, d, [U8, U8, U8, U8, "", BF16])
d = [[512, 2048], [2048, 2048], [512, 128], [2048, 128], [512, 2048], [], [], [], []]
call("aiter::_gemm_a4w4_asm", "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512E", 7.0, d,
     [FP4, FP4, E8M0, E8M0, BF16, "", "Scalar", "Scalar", "Scalar"], concrete=["", "", "", "", "", "", "1", "0", "1"])
d = [[16, 32, 512], [16, 128, 256], [16, 128, 16], [], [16, 32, 128]]
call("aiter::batched_gemm_a16wfp4_", "_batched_gemm_a16wfp4_kernel_BLOCK_SIZE_M_32", 5.5, d,
     [BF16, U8, U8, "", BF16])
d = [[32, 16, 512], [16, 128, 512], [1], [16, 32, 128]]
call("sglang_profiler::batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant_"
     "batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant",
     "_batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant_kernel", 6.0, d, [BF16, FP8, F32, BF16])
d = [[4096, 8192], [], [1024, 8192], [], [], [], [], [], []]
call("primus_turbo::hipblaslt_gemm_fp8", "Cijk_Alik_Bljk_F8BS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x128_MI16x16x1",
     40.0, d, [FP8, F32, FP8, F32, "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
     concrete=["", "", "", "", "15", "False", "True", "False", "0"], strides=strides_of(d))
d = [[2048, 4096], [2048, 256], [1024, 4096], [1024, 256], [], [], [], [], []]
call("primus_turbo_cpp_extension::hipblaslt_gemm_fp4", "Cijk_Alik_Bljk_F4BS_BH_MT256x256x256_MI16x16x1", 25.0, d,
     [FP4, E8M0, FP4, E8M0, "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
     concrete=["", "", "", "", "15", "False", "True", "True", "1"], strides=strides_of(d))
te = [[] for _ in range(19)]
te[0], te[5], te[10] = [1024, 4096], [4096, 2048], [2048, 1024]
te_t = ["Scalar"] * 19
te_t[0], te_t[5], te_t[10], te_t[18] = BF16, BF16, BF16, BF16
te_c = [""] * 19
te_c[4], te_c[9], te_c[14] = "1", "0", ""
call("tex_ts::te_gemm_ts", "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x1", 33.0, te, te_t, concrete=te_c,
     strides=strides_of(te))

# --- elementwise (UnaryElementwise.csv, BinaryElementwise.csv) ---
def contig(*dims):
    """Dims and their contiguous strides, as keyword arguments of call()."""
    return {"dims": list(dims), "strides": strides_of(list(dims))}


call("aiter::silu_and_mul", "_ZN5aiter19act_and_mul_kernelIN3c108BFloat16EXadL_ZNS_11silu_kernelE", 9.5,
     types=[BF16, BF16], **contig([32, 14336], [32, 28672]))
call("_C::silu_and_mul", "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>",
     4.0, types=[BF16, BF16], **contig([16, 4096], [16, 8192]))
call("sgl_kernel::silu_and_mul", "void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu>", 3.5,
     types=[BF16, BF16], **contig([8, 2304], [8, 4608]))
call("aiter::gelu_and_mul", "_ZN5aiter19act_and_mul_kernelIN3c108BFloat16EXadL_ZNS_11gelu_kernelE", 5.0,
     types=[BF16, BF16], **contig([64, 8192], [64, 16384]))
call("aiter::gelu_tanh_and_mul", "_ZN5aiter19act_and_mul_kernelIN3c108BFloat16EXadL_ZNS_16gelu_tanh_kernelE", 5.25,
     types=[BF16, BF16], **contig([64, 8192], [64, 16384]))
call("primus_turbo::quantize_fp8_tensorwise", "quantize_tensorwise_kernel<__hip_bfloat16, __hip_fp8_e4m3_fnuz>", 12.0,
     types=[BF16, F32, F32], **contig([4096, 4096], [], []))
call("primus_turbo_cpp_extension::quantize_mxfp4_dual", "quantize_mxfp4_dual_kernel<__hip_bfloat16>", 8.0,
     types=[BF16] + ["Scalar"] * 11, concrete=[""] + ["1"] * 11, **contig([1000, 4096], *[[]] * 11))
call("LigerSiLUMulFunction", "_swiglu_forward_kernel", 31.0, types=[BF16, BF16],
     **contig([8, 512, 11008], [8, 512, 11008]))
call("aiter::dynamic_per_token_scaled_quant", "_ZN5aiter35dynamic_per_token_scaled_quant_kernelI", 3.0,
     types=[FP8, BF16, F32, "", "Scalar", "", "Scalar"], concrete=["", "", "", "", "False", "", "1"],
     **contig([128, 7168], [128, 7168], [128, 1], [], [], [], []))
call("aiter::dynamic_per_tensor_quant", "_ZN5aiter29dynamic_per_tensor_quant_kernelI", 2.5,
     types=[FP8, BF16, F32], **contig([256, 4096], [256, 4096], [1]))
call("vllm::triton_per_token_group_quant_fp8", "_per_token_group_quant_fp8", 2.25, dims=[[64, 7000], []],
     types=[BF16, "Scalar"], concrete=["", "128"])

# --- RMSNorm extensions (RMSNorm_fwd.csv) ---
RMS_K = "_ZN5aiter14rmsnorm_kernelI"
call("aiter::rms_norm", RMS_K + "rms_norm", 1.5, types=[BF16, BF16, "Scalar"], concrete=["", "", "1e-06"],
     **contig([32, 4096], [4096], []))
call("aiter::rmsnorm2d_fwd_ck", RMS_K + "rmsnorm2d_fwd", 3.25, types=[BF16, BF16, "Scalar", "Scalar"],
     concrete=["", "", "1e-06", "0"], **contig([32, 4096], [4096], [], []))
call("aiter::rmsnorm", RMS_K + "rmsnorm", 1.625, types=[BF16, BF16, BF16, "Scalar"], concrete=["", "", "", "1e-06"],
     **contig([16, 7168], [16, 7168], [7168], []))
call("aiter::rmsnorm2d_fwd_with_add_ck", RMS_K + "with_add", 4.5, types=[BF16] * 5 + ["Scalar", "Scalar"],
     concrete=[""] * 5 + ["1e-06", "0"], **contig(*[[16, 7168]] * 4, [7168], [], []))
call("aiter::add_rmsnorm", RMS_K + "add_rmsnorm", 4.25, types=[BF16] * 5 + ["Scalar"], concrete=[""] * 5 + ["1e-06"],
     **contig(*[[8, 4096]] * 4, [4096], []))
call("aiter::rmsnorm2d_fwd_with_dynamicquant_ck", RMS_K + "dynamicquant", 3.625,
     types=[FP8, BF16, F32, BF16, "Scalar", "Scalar"], concrete=["", "", "", "", "1e-06", "0"],
     **contig([16, 7168], [16, 7168], [16, 1], [7168], [], []))
call("aiter::rmsnorm_quant", RMS_K + "rmsnorm_quant", 3.75,
     types=[FP8, BF16, F32, BF16, "Scalar", "Scalar", "Scalar", "Scalar"],
     concrete=["", "", "", "", "1e-06", "128", "False", "False"],
     **contig([16, 7000], [16, 7000], [16, 55], [7000], [], [], [], []))
call("vllm::rocm_aiter_rmsnorm_fp8_group_quant", "_rmsnorm_fp8_group_quant_kernel", 1.75,
     types=[BF16, BF16, "Scalar", "Scalar"], concrete=["", "", "1e-06", "128"], **contig([4, 1536], [1536], [], []))
call("vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant", "_fused_add_rmsnorm_fp8_group_quant_kernel", 1.875,
     types=[BF16, BF16, BF16, "Scalar", "Scalar"], concrete=["", "", "", "1e-06", "128"],
     **contig([4, 7168], [4, 7168], [7168], [], []))
call("vllm::rocm_aiter_triton_add_rmsnorm_pad", "_fused_add_rmsnorm_pad_kernel", 2.125,
     types=[BF16, BF16, "Scalar", BF16, "Scalar"], concrete=["", "", "1e-05", "", "256"],
     **contig([64, 2880], [2880], [], [64, 2880], []))
call("aiter::_fuse_rmsnorm_fp4_quant", "_fused_rms_mxfp4_quant_kernel", 2.375,
     types=[BF16, BF16, "Scalar", BF16, BF16, "Scalar", BF16, "Scalar", "Scalar", "Scalar"],
     concrete=["", "", "1e-06", "", "", "1e-06", "", "False", "False", "False"],
     **contig([32, 1536], [1536], [], [32, 512], [512], [], [32, 1536], [], [], []))
call("sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant", "_fused_rms_mxfp4_quant_kernel", 2.0,
     types=[BF16, BF16, "Scalar"] + [""] * 4 + ["Scalar"] * 3,
     concrete=["", "", "1e-06"] + [""] * 4 + ["False"] * 3, **contig([8, 7168], [7168], *[[]] * 8))

# --- attention forwards (SDPA_fwd.csv) ---
q, kv = [2, 1024, 16, 128], [2, 1024, 8, 128]
mha_c = ["", "", "", "0.", "0.088388347648", "True", "-1", "0", "True", "False", ""]
mha_t = [BF16, BF16, BF16, "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", ""]
call("aiter::mha_fwd", "aiter::fmha_fwd_hd128_bf16_causal", 55.0, types=mha_t, concrete=mha_c,
     **contig(q, kv, kv, *[[]] * 8))
call("aiter::fmha_v3_fwd", "aiter::fmha_fwd_v3_hd128_bf16_causal", 45.0, types=mha_t, concrete=mha_c,
     **contig(q, kv, kv, *[[]] * 8))
call("aiter::_flash_attn_forward", "aiter::fmha_fwd_hd128_bf16", 21.0, types=mha_t,
     concrete=["", "", "", "0.0", "0.088388347648", "False", "-1", "-1", "True", "False", ""],
     **contig([1, 512, 32, 128], [1, 2048, 8, 128], [1, 2048, 8, 128], *[[]] * 8))
call("aiter::wrapper_fmha_v3_fwd", "aiter::fmha_fwd_v3_hd128_bf16", 35.0, types=[BF16] * 4 + ["Scalar"] * 6,
     concrete=["", "", "", "", "0.1", "0.088388347648", "true", "-1", "0", "False"],
     **contig(q, q, kv, kv, *[[]] * 6))
fa3_c = [""] * 30
fa3_c[24] = "True"
call("flash_attn_3::fwd", "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 80>>", 38.0,
     types=[BF16] * 3 + ["Scalar"] * 27, concrete=fa3_c, **contig([4, 256, 16, 128], [4, 256, 16, 128],
                                                                  [4, 256, 16, 128], *[[]] * 27))

# --- RoPE (RoPE_fwd.csv) and MXFP4 group quant (GroupQuant_fwd.csv) ---
call("FusedRoPEFunc", "kernel_fused_rope_forward<__hip_bfloat16>", 7.25, types=[BF16, F32, "Scalar"],
     **contig([2048, 2, 32, 128], [2048, 1, 1, 128], []))
call("aiter::rope_cached_positions_2c_fwd_impl", "_ZN5aiter28kn_entry_2c_sbhd_cached_indirectI", 6.25,
     types=[BF16, BF16, BF16, BF16, BF16, BF16, "Long", "Scalar"],
     **contig([64, 1, 32, 128], [64, 1, 8, 128], [64, 1, 32, 128], [64, 1, 8, 128], [4096, 1, 1, 64],
              [4096, 1, 1, 64], [64, 1], []))
call("sgl_kernel::rotary_embedding", "void vllm::rotary_embedding_kernel<c10::BFloat16, true>", 4.125,
     types=["long int", BF16, BF16, "Scalar", BF16, "Scalar"], concrete=["", "", "", "128", "", "True"],
     **contig([256], [256, 4096], [256, 1024], [], [32768, 64], []))
call("sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant", "_fused_flatten_mxfp4_quant", 2.625,
     types=[BF16], **contig([32, 16, 512]))
call("sglang_profiler::quant_dynamic_mxfp4_quant", "_dynamic_mxfp4_quant_kernel", 1.375, types=[BF16, "Scalar"],
     concrete=["", "False"], **contig([64, 7168], []))
call("aiter::dynamic_per_group_scaled_quant_fp4", "_ZN5aiter33dynamic_per_group_scaled_quant_fp4I", 1.25,
     types=[U8, BF16, U8, "Scalar", "Scalar"], concrete=["", "", "", "32", "True"],
     **contig([64, 3584], [64, 7168], [64, 224], [], []))
call("aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", "_ZN5aiter30fused_dynamic_mxfp4_quant_moe_sortI", 1.125,
     types=[U8, U8, BF16, "int", "int", "Scalar"], concrete=["", "", "", "", "", "8"],
     **contig([128, 1024], [128, 64], [16, 2048], [16, 8], [1], []))

# --- grouped GEMMs (GroupedGEMM_fwd.csv) ---
GG_K = "_ZN2ck39kernel_grouped_gemm_xdl_splitk_bf16_bf16"
call("primus_turbo::grouped_gemm_impl", GG_K + "_nn", 60.0, types=[BF16, BF16, "long int", "Scalar", "Scalar"],
     concrete=["", "", "", "False", "False"], **contig([4096, 2048], [8, 2048, 1408], [8], [], []))
call("primus_turbo_cpp_extension::ck_grouped_gemm", GG_K + "_nt", 58.0,
     types=[BF16, BF16, "long int", "Scalar", "Scalar"], concrete=["", "", "", "False", "True"],
     **contig([4096, 1408], [8, 2048, 1408], [8], [], []))
call("primus_turbo::grouped_gemm_variable_k_impl", GG_K + "_tn", 52.0,
     types=[BF16, BF16, "long int", "Scalar", "Scalar"], concrete=["", "", "", "True", "False"],
     **contig([2048, 4096], [2048, 1408], [8], [], []))
call("primus_turbo::grouped_gemm_variable_k", GG_K + "_zipped", 19.0, types=["TensorList", "TensorList"],
     dims=[[[512, 1024], [256, 1024], [768, 1024]], [[1024, 2048], [1024, 2048], [1024, 2048]]])
call("primus_turbo::grouped_gemm", GG_K + "_zipped_nn", 18.0, types=["TensorList", "TensorList"],
     dims=[[[512, 1024], [256, 1024]], [[1024, 2048], [1024, 2048]]])

# --- one-name families: Primus's fused LN-modulate (Normalization.csv), MoE token dispatch/combine
# (MoE_comm_fwd.csv), fused cross entropy (CrossEntropy_fwd.csv) ---
call("primus::fused_ln_modulate", "fused_ln_modulate_fwd_kernel<__hip_bfloat16>", 9.25,
     types=[BF16, BF16, BF16, "Scalar"], concrete=["", "", "", "1e-06"],
     **contig([1024, 4, 3072], [4, 3072], [4, 3072], []))
call("MoEDispatch", "dispatch_tokens_kernel", 13.0, types=[BF16, "long int", F32],
     **contig([8192, 4096], [8192, 8], [8192, 8]))
call("MoECombine", "combine_tokens_kernel", 11.0, types=[BF16, F32], **contig([32768, 4096], [8192, 8]))
call("CrossEntropyFunction", "cross_entropy_fwd_kernel", 17.0, types=[BF16, "long int", "Scalar"],
     concrete=["", "", "-100"], **contig([8192, 151936], [8192], []))

# --- flash_attn's varlen forward (SDPA_fwd.csv): 4 packed sequences, 3000 tokens, the longest 1200 ---
vl_c = ["", "", "", "", "", "1200", "1200", "0.0", "0.088388347648", "True", "-1", "-1", "0.0", "False", "False", ""]
call("flash_attn::_flash_attn_varlen_forward", "flash_fwd_varlen_kernel<Flash_fwd_kernel_traits<128, 64, 64>>",
     48.0, types=[BF16, BF16, BF16, "int", "int"] + ["Scalar"] * 11, concrete=vl_c,
     **contig([3000, 32, 128], [3000, 8, 128], [3000, 8, 128], [5], [5], *[[]] * 11))

# --- attention backward ops (TraceLens models them with SDPA's backward formulas; flash_attn's varlen backward
# goes to SDPA_bwd.csv, the others stay in SDPA_fwd.csv) ---
# flash_attn 2: (dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p, softmax_scale, causal, window_size_left,
# window_size_right, softcap, alibi_slopes, deterministic, rng_state)
fb_c = [""] * 9 + ["0.0", "0.088388347648", "True", "-1", "-1", "0.0", "", "False", ""]
call("flash_attn::_flash_attn_backward", "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits>",
     71.0, types=[BF16] * 5 + [F32] + [BF16] * 3 + ["Scalar"] * 6 + ["", "Scalar", ""], concrete=fb_c,
     **contig(q, q, kv, kv, q, [2, 16, 1024], q, kv, kv, *[[]] * 9))
# its varlen form: (dout, q, k, v, out, softmax_lse, dq, dk, dv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
# max_seqlen_k, dropout_p, softmax_scale, causal, ...): 4 packed sequences, 3000 tokens, the longest 1200
vb_c = [""] * 11 + ["1200", "1200", "0.0", "0.088388347648", "True", "-1", "-1", "0.0", "", "False", ""]
tok_q, tok_kv = [3000, 32, 128], [3000, 8, 128]
call("flash_attn::_flash_attn_varlen_backward", "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_varlen>",
     66.0, types=[BF16] * 5 + [F32] + [BF16] * 3 + ["int", "int"] + ["Scalar"] * 7 + ["", "Scalar", ""],
     concrete=vb_c, **contig(tok_q, tok_q, tok_kv, tok_kv, tok_q, [32, 3000], tok_q, tok_kv, tok_kv, [5], [5],
                             *[[]] * 11))
# aiter: _flash_attn_backward (dout, q, k, v, out, softmax_lse, dq, dk, dv, dbias, dropout_p, softmax_scale,
# causal, ...), mha_bwd (dout, q, k, v, out, softmax_lse, dropout_p, softmax_scale, is_causal, ...) and
# wrapper_fmha_v3_bwd (one more tensor before dropout_p); heads equal (TraceLens reads aiter's
# _flash_attn_backward's q, k, v from its first three tensors)
mq = [1, 2048, 8, 128]
call("aiter::_flash_attn_backward", "aiter::fmha_bwd_hd128_bf16_causal", 34.5,
     types=[BF16] * 5 + [F32] + [BF16] * 3 + [""] + ["Scalar"] * 5,
     concrete=[""] * 10 + ["0.0", "0.088388347648", "True", "-1", "0"], **contig(mq, mq, mq, mq, mq, [1, 8, 2048],
                                                                                   mq, mq, mq, [], *[[]] * 5))
call("aiter::mha_bwd", "aiter::fmha_bwd_hd128_bf16", 29.5, types=[BF16] * 5 + [F32] + ["Scalar"] * 5,
     concrete=[""] * 6 + ["0.0", "0.088388347648", "False", "-1", "-1"],
     **contig([2, 512, 16, 128], [2, 512, 16, 128], [2, 1024, 16, 128], [2, 1024, 16, 128], [2, 512, 16, 128],
              [2, 16, 512], *[[]] * 5))
call("aiter::wrapper_fmha_v3_bwd", "aiter::fmha_bwd_v3_hd128_bf16_causal", 27.5,
     types=[BF16] * 5 + [F32, BF16] + ["Scalar"] * 4, concrete=[""] * 7 + ["0.0", "0.088388347648", "true", "-1"],
     **contig(mq, mq, mq, mq, mq, [1, 8, 2048], mq, *[[]] * 4))

# --- custom collectives (CustomCollective_fwd.csv), args as vLLM's, SGLang's and aiter's ops record them ---
H = 7168
call("aiter::fused_allreduce_rmsnorm", "_ZN5aiter24fused_allreduce_rmsnormI", 15.875,
     types=["long int", "Scalar", BF16, BF16, BF16, BF16, BF16, "Scalar", "Scalar", "Scalar"],
     concrete=["", "True", "", "", "", "", "", "1e-06", "False", "False"],
     **contig([1], [], [4, H], [4, H], [4, H], [4, H], [H], [], [], []))
call("aiter::fused_allreduce_rmsnorm_", "_ZN5aiter24fused_allreduce_rmsnormI_py", 16.875,
     types=[BF16, BF16, BF16, "Scalar", "", "Scalar", "Scalar"], concrete=["", "", "", "1e-06", "", "True", "0"],
     **contig([64, H], [64, H], [H], [], [], [], []))
call("_C_custom_ar::all_reduce", "void vllm::cross_device_reduce_1stage<__hip_bfloat16, 8>", 14.875,
     types=["Scalar", BF16, BF16, "Scalar", "Scalar"], concrete=["140000", "", "", "0", "0"],
     **contig([], [4, H], [4, H], [], []))
call("aiter::reduce_scatter", "_ZN5aiter21cross_device_reduce_scatterI", 13.875, types=["Scalar", BF16, BF16],
     concrete=["140000", "", ""], **contig([], [8, H], [4, H]))
call("aiter::all_gather_reg", "_ZN5aiter14all_gather_regI", 12.875, types=["Scalar", BF16, BF16],
     concrete=["140000", "", ""], **contig([], [4, H], [8, H]))
call("sgl_kernel::all_reduce_reg", "void sglang::cross_device_reduce_1stage<__nv_bfloat16, 8>", 10.875,
     types=["Scalar", BF16, BF16], concrete=["140000", "", ""], **contig([], [32, H], [32, H]))
call("sgl_kernel::qr_all_reduce", "void quickreduce::allreduce_prototype_twoshot<__hip_bfloat16>", 9.875,
     types=["Scalar", BF16, BF16, "Scalar", "Scalar"], concrete=["140000", "", "", "3", "False"],
     **contig([], [1866, H], [1866, H], [], []))
call("sglang::reg_all_gather_into_tensor", "_ZN7sglang14all_gather_regI", 8.875, types=[BF16, BF16, "Scalar"],
     concrete=["", "", "140000"], **contig([256, 16160], [32, 16160], []))
call("_C_custom_ar::qr_all_reduce", "void quickreduce::allreduce_prototype_twoshot<__hip_bfloat16, 3>", 7.875,
     types=["Scalar", BF16, BF16, "Scalar", "Scalar"], concrete=["140000", "", "", "3", "True"],
     **contig([], [1689, H], [1689, H], [], []))

trace = {"schemaVersion": 1,
         "deviceProperties": [{"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
                               "computeMajor": 9, "computeMinor": 4, "numSms": 304}],
         "traceEvents": events, "traceName": "class_map.json", "displayTimeUnit": "ms",
         "baseTimeNanoseconds": 1700000000000000000}
Path(__file__).with_name("class_map.json").write_text(json.dumps(trace, indent=1) + "\n")
