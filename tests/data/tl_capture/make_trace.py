"""Writes a hand-made HIP-graph capture/replay pair (Kineto JSON on an MI300X) for TraceLens's inference report with a
capture folder (TraceLens/Trace2Tree/trace_capture_merge_experimental.py) and its frame pseudo ops:

  capture/graph_capture_rank_0_bs4.json   vLLM's capture of one FULL graph for batch size 4 (annotation
         `capture_4_FULL` around a `_dummy_run` frame): between hipStreamBeginCapture and hipStreamEndCapture a model
         forward frame records, through hipLaunchKernel calls that name their kernel (no kernel runs while
         capturing), an aten::mm; aiter's MLA decode frame around aiter::mla_decode_stage1_asm_fwd and
         aiter::mla_reduce_v1; an aiter::fused_moe_ around a sorting op and the flydsl stage frames; and an
         aiter::v4_attention_with_output launching its RoPE and compress kernels around DeepSeek-V4's sparse
         paged-decode frame (CSA mode).
  graph_execution.json   the replay: two decode steps in vLLM's detailed annotation format (4 and 3 requests; the
         capture of batch size 4 serves both), each with an eager aten::argmax and one hipGraphLaunch whose ten
         kernels (the capture's, in its order, with the launch's correlation) run on stream 0.

Kernel times are distinct. Run `python tests/data/tl_capture/make_trace.py` to rewrite the files; README.md says how
TraceLens's reference CSVs next to them were made.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import BF16, GPU_PID, GPU_TID, Trace, strides_of  # noqa: E402  (tests/data/kineto_builder.py)

F32, I32, FP4 = "float", "int", "c10::Float4_e2m1fn_x2"
HERE = Path(__file__).parent
DEVICE = [{"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992, "computeMajor": 9,
           "computeMinor": 4, "numSms": 304}]


def names(t: Trace) -> None:
    for name, tid in (("process_name", 0), ("thread_name", t.tid)):
        t.events.append({"ph": "M", "name": name, "pid": t.pid, "tid": tid, "ts": 0, "args": {"name": "python3"}})


def frame(t: Trace, name: str, ts: float, dur: float) -> None:
    t.events.append({"ph": "X", "cat": "python_function", "name": name, "pid": t.pid, "tid": t.tid, "ts": ts,
                     "dur": dur, "args": {"Python parent id": 0, "Python id": len(t.events), "Python thread": 0}})


def runtime(t: Trace, name: str, ts: float, dur: float, **args) -> None:
    t.corr += 1
    t.events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": t.pid, "tid": t.tid, "ts": ts, "dur": dur,
                     "args": {"External id": len(t.events) + 1, "correlation": t.corr, **args}})


def op(t: Trace, name: str, ts: float, dur: float, dims, types, concrete=None) -> None:
    t.op(name, ts, dur, dims=dims, types=types, strides=strides_of(dims),
         concrete=concrete if concrete is not None else [""] * len(dims))


# --- the capture trace ---------------------------------------------------------------------------------------------
GEMM_K = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x128x64_MI16x16x1"
MLA_K = "mla_a8w8_qh16_qseqlen1_gqaratio16_ps.co"
REDUCE_K = "_ZN5aiter18kn_mla_reduce_v1_psILi512ELi16EEEvNS_20MlaReduceKernelV1ParamsE"
SORT_K = "_ZN7ck_tile14MoeSortingKernelINS_22MoeSortingProblemExIifEEEEvNT_5KargsE"
ST1_K, ST2_K = "moe_gemm1_0_a4w4_flydsl", "moe_gemm2_0_a4w4_flydsl"
ROPE_K = "qk_norm_rope_H32_D512_RD64_flydsl"
CSA_K = "fused_compress_attn_D512_RD64_R4_OVL_SS8_KB32_rmsbf16_pf_flydsl"
SPLIT_K, V4R_K = "sparse_attn_v4_paged_decode_split_kernel", "sparse_attn_v4_paged_decode_reduce_kernel"
KERNELS = [GEMM_K, MLA_K, REDUCE_K, SORT_K, ST1_K, ST2_K, ROPE_K, CSA_K, SPLIT_K, V4R_K]

C = Trace(pid=4000, corr=100)
names(C)
launch = 0


def cap_launch(ts: float) -> None:
    """hipLaunchKernel recording the next kernel of KERNELS (named in its args, as ROCm's capture calls are)."""
    global launch
    runtime(C, "hipLaunchKernel", ts, 3.0, kernel=KERNELS[launch])
    launch += 1


C.events.append({"ph": "X", "cat": "user_annotation", "name": "capture_4_FULL", "pid": C.pid, "tid": C.tid,
                 "ts": 1000.0, "dur": 1000.0, "args": {"External id": 0, "Record function id": 0}})
frame(C, "vllm/v1/worker/gpu_model_runner.py(2301): _dummy_run", 1002.0, 996.0)
runtime(C, "hipStreamBeginCapture", 1010.0, 5.0)
frame(C, "vllm/model_executor/models/deepseek_v2.py(900): forward", 1020.0, 960.0)
op(C, "aten::mm", 1030.0, 20.0, [[4, 7168], [7168, 2048]], [BF16, BF16])
cap_launch(1035.0)
frame(C, "aiter/mla.py(312): mla_decode_fwd", 1100.0, 100.0)
op(C, "aiter::mla_decode_stage1_asm_fwd", 1110.0, 20.0,
   [[4, 16, 576], [8192, 1, 1, 576], [5], [4000], [4], [4, 16, 512], [4, 16, 1, 512], [4, 16, 1], [], [], [], []],
   [BF16, BF16, I32, I32, I32, BF16, F32, F32, "Scalar", "Scalar", "Scalar", "Scalar"],
   concrete=["", "", "", "", "", "", "", "", "1", "0.0416", "16", "1"])
cap_launch(1115.0)
op(C, "aiter::mla_reduce_v1", 1150.0, 20.0, [[4, 16, 1, 512], [4, 16, 1], [4, 16, 512], [], []],
   [F32, F32, BF16, "Scalar", "Scalar"])
cap_launch(1155.0)
MF, KF, NF, EF, TOPK = 4, 7168, 256, 256, 8
op(C, "aiter::fused_moe_", 1300.0, 300.0,
   [[MF, KF], [EF, 2 * NF, KF // 2], [EF, KF, NF // 2], [MF, TOPK], [MF, TOPK], [], [], [], [], [], [], [], [], []],
   [BF16, FP4, FP4, F32, I32, "", "Scalar", "Scalar", "Scalar", "", "", "", "", "Scalar"],
   concrete=["", "", "", "", "", "", "1", "0", "0", "", "", "", "", "False"])
op(C, "aiter::moe_sorting_fwd", 1310.0, 20.0,
   [[MF, TOPK], [MF, TOPK], [4096], [4096], [128], [2], [MF, KF], [], []],
   [I32, F32, I32, F32, I32, I32, BF16, "Scalar", "Scalar"], concrete=[""] * 7 + ["256", "32"])
cap_launch(1315.0)
frame(C, "aiter/fused_moe.py(1544): flydsl_moe_stage1", 1350.0, 100.0)
cap_launch(1360.0)
frame(C, "aiter/fused_moe.py(1601): flydsl_moe_stage2", 1470.0, 100.0)
cap_launch(1480.0)
op(C, "aiter::v4_attention_with_output", 1650.0, 200.0,
   [[4, 4096], [4, 512], [4, 32, 512], [], [2048, 1, 512], [4], []],
   [BF16, BF16, BF16, "", BF16, I32, "str"], concrete=["", "", "", "", "", "", "model.layers.0.self_attn"])
cap_launch(1660.0)
cap_launch(1680.0)
frame(C, "aiter/ops/paged_decode.py(88): sparse_attn_v4_paged_decode", 1710.0, 100.0)
cap_launch(1720.0)
cap_launch(1740.0)
runtime(C, "hipStreamEndCapture", 1985.0, 5.0)
assert launch == len(KERNELS)

# --- the replay trace ----------------------------------------------------------------------------------------------
R = Trace(pid=5000, corr=900)
names(R)
STEPS = [("execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk4000sqsq4sqsk4000)", 1000.0, 4.125,
          [41.25, 11.5, 2.625, 1.375, 31.75, 17.875, 2.125, 6.75, 16.5, 1.625]),
         ("execute_3_context_0(sq0sk0sqsq0sqsk0)_generation_3(sq3sk3100sqsq3sqsk3100)", 3000.0, 4.375,
          [40.5, 10.75, 2.375, 1.125, 30.25, 16.625, 1.875, 6.25, 15.75, 1.5])]
for step, t0, argmax_dur, durs in STEPS:
    R.events.append({"ph": "X", "cat": "user_annotation", "name": step, "pid": R.pid, "tid": R.tid, "ts": t0,
                     "dur": 1000.0, "args": {"External id": 0, "Record function id": 0}})
    frame(R, "vllm/v1/worker/gpu_model_runner.py(2100): execute_model", t0 + 5.0, 990.0)
    op(R, "aten::argmax", t0 + 10.0, 20.0, [[4, 129280], [], []], [BF16, "Scalar", "Scalar"],
       concrete=["", "-1", "False"])
    R.launch("_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIN3c108BFloat16ENS0_14ArgMaxOps", t0 + 15.0,
             t0 + 60.0, argmax_dur)
    runtime(R, "hipGraphLaunch", t0 + 100.0, 30.0)
    k_ts = t0 + 200.0
    for name, dur in zip(KERNELS, durs, strict=True):
        R.events.append({"ph": "X", "cat": "kernel", "name": name, "pid": GPU_PID, "tid": GPU_TID, "ts": k_ts,
                         "dur": dur, "args": {"External id": len(R.events) + 1, "device": 2, "stream": 0,
                                              "correlation": R.corr, "kernel": name, "grid": [256, 1, 1],
                                              "block": [256, 1, 1]}})
        k_ts += dur + 4.0


def write(t: Trace, path: Path) -> None:
    path.parent.mkdir(exist_ok=True)
    trace = {"schemaVersion": 1, "deviceProperties": DEVICE,
             "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1}, "traceEvents": t.events,
             "traceName": path.name,
             "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000}
    path.write_text(json.dumps(trace, indent=1) + "\n")


write(C, HERE / "capture" / "graph_capture_rank_0_bs4.json")
write(R, HERE / "graph_execution.json")
