"""Writes training_step.json: a small hand-made PyTorch profiler trace of one training step (Kineto JSON, args
as torch records them) with forward ops that autograd pairs with backward nodes by their sequence number:

  seq 10  aten::scaled_dot_product_attention > aten::_scaled_dot_product_flash_attention (bf16, 2 x 8 heads x
          256 tokens x 64, causal) and its backward node ScaledDotProductFlashAttentionBackward0 >
          aten::_scaled_dot_product_flash_attention_backward (three kernels);
  seq 11  aten::conv2d > aten::convolution > aten::_convolution > aten::cudnn_convolution (fp32, (8, 3, 32, 32)
          by a (16, 3, 3, 3) filter with bias, stride 1, padding 1) and its backward node ConvolutionBackward0 >
          aten::convolution_backward (three kernels);
  seq 12  aten::sum over dim 1 of a fp32 (8, 16, 32, 32) tensor and its backward node SumBackward1 (one kernel).

Forward ops run on thread 1000, the backward nodes on the autograd thread 1001; every kernel is on stream 7
and linked to its cudaLaunchKernel by correlation and an ac2g flow pair. Times are µs with three decimals, as
recent Kineto writes them. Run `python tests/data/peers/make_training_step.py` to rewrite the file.
"""
from __future__ import annotations

import json
from pathlib import Path

PID, FWD, BWD, GPU_TID, STREAM = 1000, 1000, 1001, 7, 7
events: list[dict] = []
corr = [5000]


def op(name, ts, dur, tid=FWD, seq=None, dims=None, types=None, strides=None, concrete=None, fwd_tid=None):
    args: dict = {"External id": len(events) + 1, "Record function id": 0}
    if seq is not None:
        args["Sequence number"] = seq
        if fwd_tid is not None:
            args["Fwd thread id"] = fwd_tid
    if dims is not None:
        args.update({"Concrete Inputs": concrete, "Input type": types, "Input Strides": strides, "Input Dims": dims})
    events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": PID, "tid": tid, "ts": ts, "dur": dur,
                   "args": args})


def launch(kernel, ts, k_ts, k_dur, tid):
    corr[0] += 1
    c = corr[0]
    events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID, "tid": tid, "ts": ts,
                   "dur": 4.0, "args": {"cbid": 211, "correlation": c}})
    events.append({"ph": "s", "id": c, "pid": PID, "tid": tid, "ts": ts, "cat": "ac2g", "name": "ac2g"})
    events.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": GPU_TID, "ts": k_ts, "dur": k_dur,
                   "args": {"device": 0, "context": 1, "stream": STREAM, "correlation": c, "grid": [128, 1, 1],
                            "block": [128, 1, 1]}})
    events.append({"ph": "f", "id": c, "pid": 0, "tid": GPU_TID, "ts": k_ts, "cat": "ac2g", "name": "ac2g",
                   "bp": "e"})


BF16, F32 = "c10::BFloat16", "float"
Q = [2, 8, 256, 64]
QS = [131072, 16384, 64, 1]
X, W, B, Y = [8, 3, 32, 32], [16, 3, 3, 3], [16], [8, 16, 32, 32]
XS, WS, YS = [3072, 1024, 32, 1], [27, 9, 3, 1], [16384, 1024, 32, 1]

events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": PID, "tid": FWD,
               "ts": 1000.0, "dur": 900.0, "args": {"External id": 0, "Record function id": 0}})
# forward: attention
op("aten::scaled_dot_product_attention", 1010.0, 60.0, seq=10, dims=[Q, Q, Q, [], [], [], [], []],
   types=[BF16, BF16, BF16, "", "Scalar", "Scalar", "", "Scalar"], strides=[QS, QS, QS, [], [], [], [], []],
   concrete=["", "", "", "", "0.", "True", "", "False"])
op("aten::_scaled_dot_product_flash_attention", 1015.5, 50.0, seq=10, dims=[Q, Q, Q, [], [], [], []],
   types=[BF16, BF16, BF16, "Scalar", "Scalar", "Scalar", ""], strides=[QS, QS, QS, [], [], [], []],
   concrete=["", "", "", "0.", "True", "False", ""])
launch("flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t>, true>",
       1030.0, 1100.0, 40.25, FWD)
# forward: convolution
conv_args: dict[str, list] = dict(dims=[X, W, B, [], [], [], [], [], []],
                 types=[F32, F32, F32, "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
                 strides=[XS, WS, [1], [], [], [], [], [], []],
                 concrete=["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"])
op("aten::conv2d", 1100.0, 80.0, seq=11, dims=[X, W, B, [], [], [], []],
   types=[F32, F32, F32, "ScalarList", "ScalarList", "ScalarList", "Scalar"],
   strides=[XS, WS, [1], [], [], [], []], concrete=["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"])
op("aten::convolution", 1102.0, 76.0, seq=11, **conv_args)
op("aten::_convolution", 1104.0, 72.0, seq=11, dims=conv_args["dims"] + [[], [], [], []],
   types=conv_args["types"] + ["Scalar"] * 4, strides=conv_args["strides"] + [[], [], [], []],
   concrete=conv_args["concrete"] + ["False", "False", "True", "True"])
op("aten::cudnn_convolution", 1106.0, 50.0, seq=11, dims=[X, W, [], [], [], [], [], [], []],
   types=[F32, F32, "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar", "Scalar"],
   strides=[XS, WS, [], [], [], [], [], [], []],
   concrete=["", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "False", "False", "True"])
launch("void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>", 1110.0, 1150.0,
       12.5, FWD)
# forward: reduction
op("aten::sum", 1200.0, 20.0, seq=12, dims=[Y, [], [], []], types=[F32, "ScalarList", "Scalar", ""],
   strides=[YS, [], [], []], concrete=["", "[1]", "False", ""])
launch("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
       "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
       "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
       "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
       "unsigned int, float, 4>)", 1205.0, 1210.0, 6.0, FWD)

# backward, on the autograd thread, in reverse order
op("autograd::engine::evaluate_function: SumBackward1", 1400.0, 30.0, tid=BWD, seq=12, fwd_tid=FWD)
op("SumBackward1", 1401.0, 28.0, tid=BWD, seq=12, fwd_tid=FWD)
op("aten::expand", 1402.0, 3.0, tid=BWD, dims=[[8, 1, 32, 32], [], []], types=[F32, "ScalarList", "Scalar"],
   strides=[[1024, 1024, 32, 1], [], []], concrete=["", "[8, 16, 32, 32]", "False"])
op("aten::copy_", 1406.0, 20.0, tid=BWD, dims=[Y, Y, []], types=[F32, F32, "Scalar"], strides=[YS, YS, []],
   concrete=["", "", "False"])
launch("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<"
       "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
       "{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, "
       "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
       "{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, "
       "at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
       "operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, "
       "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
       "{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})", 1410.0, 1440.0, 3.5, BWD)

op("autograd::engine::evaluate_function: ConvolutionBackward0", 1450.0, 100.0, tid=BWD, seq=11, fwd_tid=FWD)
op("ConvolutionBackward0", 1451.0, 98.0, tid=BWD, seq=11, fwd_tid=FWD)
op("aten::convolution_backward", 1452.0, 96.0, tid=BWD, dims=[Y, X, W, [], [], [], [], [], [], [], []],
   types=[F32, F32, F32, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar",
          ""],
   strides=[YS, XS, WS, [], [], [], [], [], [], [], []],
   concrete=["", "", "", "[16]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, True]"])
launch("void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>",
       1460.0, 1500.0, 4.0, BWD)
launch("void dgrad2d_alg1_1<float, 0, 4, 6, 3, 2, 4, true, false, true>", 1470.0, 1505.0, 20.5, BWD)
launch("void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>", 1480.0, 1526.0, 30.25, BWD)

op("autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0", 1600.0, 150.0, tid=BWD,
   seq=10, fwd_tid=FWD)
op("ScaledDotProductFlashAttentionBackward0", 1601.0, 148.0, tid=BWD, seq=10, fwd_tid=FWD)
op("aten::_scaled_dot_product_flash_attention_backward", 1602.0, 146.0, tid=BWD,
   dims=[Q, Q, Q, Q, Q, [2, 8, 256], [], [], [], [], [], [], [], [], []],
   types=[BF16, BF16, BF16, BF16, BF16, F32, "", "", "Scalar", "Scalar", "Scalar", "Scalar", "long int", "long int",
          ""],
   strides=[QS, QS, QS, QS, QS, [2048, 256, 1], [], [], [], [], [], [], [], [], []],
   concrete=["", "", "", "", "", "", "", "", "256", "256", "0.", "True", "", "", ""])
launch("void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, "
       "cutlass::bfloat16_t> >(Flash_bwd_params)", 1610.0, 1700.0, 5.0, BWD)
launch("void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, "
       "false, cutlass::bfloat16_t>, false, true, false, false, true, true, false, false>(Flash_bwd_params)",
       1620.0, 1706.0, 80.5, BWD)
launch("void flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, "
       "cutlass::bfloat16_t> >(Flash_bwd_params, int)", 1630.0, 1790.0, 3.0, BWD)

meta = [{"name": "process_name", "ph": "M", "ts": 1000.0, "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": 1000.0, "pid": PID, "tid": 0, "args": {"labels": "CPU"}},
        {"name": "thread_name", "ph": "M", "ts": 1000.0, "pid": PID, "tid": FWD,
         "args": {"name": "thread 1000 (python3)"}},
        {"name": "thread_name", "ph": "M", "ts": 1000.0, "pid": PID, "tid": BWD,
         "args": {"name": "thread 1001 (pt_autograd_0)"}},
        {"name": "process_name", "ph": "M", "ts": 1000.0, "pid": 0, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": 1000.0, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": 1000.0, "pid": 0, "tid": GPU_TID, "args": {"name": "stream 7 "}}]
trace = {"schemaVersion": 1,
         "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936,
                               "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                               "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
                               "sharedMemPerBlock": 49152, "numSms": 132}],
         "record_shapes": 1, "with_stack": 0, "displayTimeUnit": "ms", "traceEvents": events + meta}
out = Path(__file__).with_name("training_step.json")
out.write_text(json.dumps(trace, indent=1) + "\n")
