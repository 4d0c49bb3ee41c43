"""Writes perf_models.json: a small hand-made PyTorch profiler trace (Kineto JSON on an MI300X, args as torch
records them) of the ops whose TraceLens perf models the shared references never exercise:

  aten::replication_pad2d    bf16 (1, 16, 32, 32) padded by [1, 1, 2, 2] (twice, the second slower);
  aten::upsample_nearest2d   bf16 (1, 8, 16, 16) to an output size of [32, 32] (the overload that records it),
                             and the overload that records only scale factors (no output size: not modelled);
  aten::silu                 bf16 (4, 1024), the plain unary model;
  aiter::_groupnorm_run      aiter's group norm, bf16 (1, 64, 32, 32) in 32 groups with weight and bias, args
                             (x, num_groups, weight, bias, eps) as vLLM/xDiT traces record them.

Every op launches one kernel through hipLaunchKernel, linked by correlation and an ac2g flow pair; kernels on
stream 0. Times are µs with three decimals. Run `python tests/data/tl_perf_models/make_trace.py` to rewrite the
file; README.md says how the TraceLens reference CSVs next to it were made.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import BF16, Trace  # noqa: E402  (tests/data/kineto_builder.py)

trace_ = Trace(pid=2000, corr=100)
events, op, launch, PID, TID = trace_.events, trace_.op, trace_.launch, trace_.pid, trace_.tid


PAD_K = ("void at::native::(anonymous namespace)::replication_pad_forward_kernel2d<c10::BFloat16>"
         "(at::GenericPackedTensorAccessor<c10::BFloat16 const, 4ul, at::DefaultPtrTraits, long>, "
         "at::GenericPackedTensorAccessor<c10::BFloat16, 4ul, at::DefaultPtrTraits, long>, int, int, int, int)")
UP_K = ("void at::native::(anonymous namespace)::upsample_nearest2d_out_frame<c10::BFloat16, "
        "&at::native::nearest_idx>(c10::BFloat16 const*, c10::BFloat16*, unsigned long, unsigned long, "
        "unsigned long, unsigned long, unsigned long, float, float)")
SILU_K = ("void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::silu_kernel("
          "at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::"
          "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::"
          "silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() "
          "const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)")
GN_K = "_groupnorm_fwd_kernel"

events.append({"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "python3"}})
events.append({"ph": "M", "name": "thread_name", "pid": PID, "tid": TID, "args": {"name": "python3"}})
events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": PID, "tid": TID,
               "ts": 1000.0, "dur": 400.0, "args": {"External id": 0, "Record function id": 0}})
pad = dict(dims=[[1, 16, 32, 32], []], types=[BF16, "ScalarList"], strides=[[16384, 1024, 32, 1], []],
           concrete=["", "[1, 1, 2, 2]"])
op("aten::replication_pad2d", 1010.0, 20.0, **pad)
launch(PAD_K, 1015.0, 1100.0, 4.5)
op("aten::replication_pad2d", 1040.0, 20.0, **pad)
launch(PAD_K, 1045.0, 1110.0, 5.5)
op("aten::upsample_nearest2d", 1070.0, 20.0, dims=[[1, 8, 16, 16], [], [], []],
   types=[BF16, "ScalarList", "Scalar", "Scalar"], strides=[[2048, 256, 16, 1], [], [], []],
   concrete=["", "[32, 32]", "2.", "2."])
launch(UP_K, 1075.0, 1120.0, 3.25)
op("aten::upsample_nearest2d", 1100.0, 20.0, dims=[[1, 8, 16, 16], [], []], types=[BF16, "", "ScalarList"],
   strides=[[2048, 256, 16, 1], [], []], concrete=["", "", "[2., 2.]"])
launch(UP_K, 1105.0, 1130.0, 3.0)
op("aten::silu", 1130.0, 15.0, dims=[[4, 1024]], types=[BF16], strides=[[1024, 1]], concrete=[""])
launch(SILU_K, 1133.0, 1140.0, 2.125)
op("aiter::_groupnorm_run", 1160.0, 30.0, dims=[[1, 64, 32, 32], [], [64], [64], []],
   types=[BF16, "Scalar", BF16, BF16, "Scalar"], strides=[[65536, 1024, 32, 1], [], [1], [1], []],
   concrete=["", "32", "", "", "9.9999999999999995e-07"])
launch(GN_K, 1170.0, 1200.0, 8.75)

trace = {"schemaVersion": 1,
         "deviceProperties": [{"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
                               "computeMajor": 9, "computeMinor": 4, "numSms": 304}],
         "traceEvents": events, "traceName": "perf_models.json", "displayTimeUnit": "ms",
         "baseTimeNanoseconds": 1700000000000000000}
Path(__file__).with_name("perf_models.json").write_text(json.dumps(trace, indent=1) + "\n")
