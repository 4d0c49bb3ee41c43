"""Writes sglang_ops.json: a small hand-made PyTorch profiler trace (Kineto JSON on an MI300X, args as torch records
them in an SGLang decode step with aiter) of the SGLang ops TraceLens's inference extension models:

  aiter::gemm_a16w16          bf16 x (2, 64) by w (192, 64), args (x, w, bias, dtype, ...): once without bias,
                              once with a (192,) bias;
  sgl_kernel::silu_and_mul    args (out, input): out (2, 128), input (2, 256), bf16;
  sglang_profiler::attention_paged_attention_ragged_3   aiter's paged attention as SGLang's profiler names it (a
                              per-layer suffix): query (2, 4, 32) at Input Dims[2], K and V caches (100, 1, 2, 32)
                              at [3] and [4], bf16;
  sglang::store_cache         k, v (2, 64) written to their caches (100, 64), bf16.

All inside one user annotation in vLLM's detailed step format (2 decode requests, 300 tokens of KV in all), which
gives the attention its chunk statistics. Every op launches one kernel through hipLaunchKernel, linked by
correlation and an ac2g flow pair; kernels on stream 0. Times are µs with three decimals. Run
`python tests/data/tl_sglang_ops/make_trace.py` to rewrite the file; README.md says how the TraceLens reference
CSVs next to it were made.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import BF16, Trace  # noqa: E402  (tests/data/kineto_builder.py)

trace_ = Trace(pid=3000, corr=500)
events, op, launch, PID, TID = trace_.events, trace_.op, trace_.launch, trace_.pid, trace_.tid


GEMM_K = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1_ISA942"
SILU_K = ("_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_"
          "PS4_i")
ATTN_K = ("void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 3, false>"
          "(__hip_bfloat16*, float const*, float const*, __hip_bfloat16 const*, int const*, int const*, int, int, "
          "float const*)")
STORE_K = "void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous namespace)::StoreKVCacheParams)"

events.append({"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "python3"}})
events.append({"ph": "M", "name": "thread_name", "pid": PID, "tid": TID, "args": {"name": "python3"}})
events.append({"ph": "X", "cat": "user_annotation",
               "name": "execute_2_context_0(sq0sk0sqsq0sqsk0)_generation_2(sq2sk300sqsq2sqsk300)",
               "pid": PID, "tid": TID, "ts": 1000.0, "dur": 400.0, "args": {"External id": 0, "Record function id": 0}})
gemm = dict(types=[BF16, BF16, "", "Scalar", "", "", ""], strides=[[64, 1], [64, 1], [], [], [], [], []],
            concrete=["", "", "", "15", "", "", ""])
op("aiter::gemm_a16w16", 1010.0, 20.0, dims=[[2, 64], [192, 64], [], [], [], [], []], **gemm)
launch(GEMM_K, 1015.0, 1100.0, 4.5)
op("aiter::gemm_a16w16", 1040.0, 20.0, dims=[[2, 64], [192, 64], [192], [], [], [], []],
   types=[BF16, BF16, BF16, "Scalar", "", "", ""], strides=[[64, 1], [64, 1], [1], [], [], [], []],
   concrete=gemm["concrete"])
launch(GEMM_K, 1045.0, 1110.0, 5.25)
op("sgl_kernel::silu_and_mul", 1070.0, 15.0, dims=[[2, 128], [2, 256]], types=[BF16, BF16],
   strides=[[128, 1], [256, 1]], concrete=["", ""])
launch(SILU_K, 1073.0, 1120.0, 2.125)
op("sglang::store_cache", 1100.0, 15.0, dims=[[2, 64], [2, 64], [100, 64], [100, 64], [2], [], []],
   types=[BF16, BF16, BF16, BF16, "long int", "Scalar", "Scalar"],
   strides=[[64, 1], [64, 1], [64, 1], [64, 1], [1], [], []], concrete=["", "", "", "", "", "128", "0"])
launch(STORE_K, 1103.0, 1130.0, 1.75)
op("sglang_profiler::attention_paged_attention_ragged_3", 1130.0, 30.0,
   dims=[[2, 4, 32], [1000], [2, 4, 32], [100, 1, 2, 32], [100, 1, 2, 32], [3], [300], [4], [], [1], [1], []],
   types=[BF16, "unsigned char", BF16, BF16, BF16, "int", "int", "int", "", "float", "float", ""],
   strides=[[128, 32, 1], [1], [128, 32, 1], [64, 64, 32, 1], [64, 64, 32, 1], [1], [1], [1], [], [1], [1], []],
   concrete=["", "", "", "", "", "", "", "", "", "", "", ""])
launch(ATTN_K, 1140.0, 1150.0, 6.5)

trace = {"schemaVersion": 1,
         "deviceProperties": [{"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
                               "computeMajor": 9, "computeMinor": 4, "numSms": 304}],
         "traceEvents": events, "traceName": "sglang_ops.json", "displayTimeUnit": "ms",
         "baseTimeNanoseconds": 1700000000000000000}
Path(__file__).with_name("sglang_ops.json").write_text(json.dumps(trace, indent=1) + "\n")
