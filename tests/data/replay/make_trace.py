"""Writes gaps.json: a Kineto trace whose ops carry exactly the arguments PyTorch records for them, each op launching
one GPU kernel, to test the replay of the argument kinds TraceLens's EventReplay cannot build.

The arguments are not written by hand: each op below is called on the CPU under torch.profiler (record_shapes=True)
and its cpu_op event's args ('Input Dims', 'Input type', 'Input Strides', 'Concrete Inputs') are copied verbatim.
The trace then gives each op one hipLaunchKernel call and one kernel (tests/data/kineto_builder.py), so that the op
has GPU time and an argument set. Needs torch (made with torch 2.13.0+cpu):

    python tests/data/replay/make_trace.py tests/data/replay/gaps.json

The ops, and what each tests:
  aten::cat                 a Tensor[] argument (TraceLens: "Tensor list type not supported")
  aten::gelu                a str argument (approximate='tanh', recorded as ''; TraceLens finds no schema)
  aten::_to_copy            ScalarType (dtype=bfloat16, recorded as 15), Layout, Device and memory_format arguments
  aten::embedding           a 'long int' index tensor (not among TraceLens's 7 dtypes), below the table's size
  aten::index_select        an index tensor below the size of the indexed dimension
  aten::gather              an index tensor below the size of dimension 1
  aten::embedding_bag       indices and an EmbeddingBag's offsets
  aten::nll_loss_forward    class targets below the number of classes
  aten::floor_divide        an integer divisor (0 would raise)
  aten::sum                 a dim list, keepdim and a dtype (float64, recorded as 7)
  aten::add                 an overlapping (expanded, stride 0) input
  aten::copy_               a non-contiguous (transposed) destination
  aten::mul                 complex64 tensors
  aten::bitwise_and         'unsigned char' tensors
  aten::_to_copy            (again) a float8_e4m3fn tensor copied to float32
  aten::native_layer_norm   optional tensors given as None
  aten::index               a list of optional index tensors, which the profiler does not record: listed, not replayed
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kineto_builder import GPU_PID, GPU_TID, Trace  # noqa: E402


def recorded_calls() -> list[dict]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    x = torch.randn(4, 8)
    w = torch.randn(10, 8)
    idx = torch.tensor([1, 2, 3])
    calls = [
        ("aten::cat", lambda: torch.cat([x, x], dim=0)),
        ("aten::gelu", lambda: torch.nn.functional.gelu(x, approximate="tanh")),
        ("aten::_to_copy", lambda: torch.ops.aten._to_copy(x, dtype=torch.bfloat16, layout=torch.strided,
                                                            device="cpu", memory_format=torch.contiguous_format)),
        ("aten::embedding", lambda: torch.nn.functional.embedding(idx, w)),
        ("aten::index_select", lambda: torch.index_select(w, 0, idx)),
        ("aten::gather", lambda: torch.gather(x, 1, torch.tensor([[0, 7]] * 4))),
        ("aten::embedding_bag", lambda: torch.ops.aten.embedding_bag(w, idx, torch.tensor([0, 2]))),
        ("aten::nll_loss_forward", lambda: torch.ops.aten.nll_loss_forward(torch.randn(3, 5), torch.tensor([1, 0, 4]),
                                                                            None, 1, -100)),
        ("aten::floor_divide", lambda: torch.floor_divide(torch.tensor([7, 8, 9, 10]), torch.tensor([2, 3, 4, 5]))),
        ("aten::sum", lambda: torch.sum(x, dim=[1], keepdim=True, dtype=torch.float64)),
        ("aten::add", lambda: torch.add(x, torch.randn(8).expand(4, 8))),
        ("aten::copy_", lambda: torch.empty(8, 4).t().copy_(x)),
        ("aten::mul", lambda: torch.mul(torch.randn(2, 2, dtype=torch.complex64),
                                        torch.randn(2, 2, dtype=torch.complex64))),
        ("aten::bitwise_and", lambda: torch.bitwise_and(torch.arange(16, dtype=torch.uint8),
                                                        torch.arange(16, dtype=torch.uint8))),
        ("aten::_to_copy", lambda: torch.ones(3, dtype=torch.float8_e4m3fn).float()),
        ("aten::native_layer_norm", lambda: torch.ops.aten.native_layer_norm(x, [8], None, None, 1e-5)),
        ("aten::index", lambda: x[idx]),
    ]
    out = []
    for name, fn in calls:
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            fn()
        path = Path(__file__).with_suffix(".tmp.json")
        prof.export_chrome_trace(str(path))
        events = json.loads(path.read_text())["traceEvents"]
        path.unlink()
        ev = min((e for e in events if e.get("cat") == "cpu_op" and e["name"] == name), key=lambda e: e["ts"])
        out.append({"name": name, "args": {k: ev["args"][k] for k in ("Input Dims", "Input type", "Input Strides",
                                                                       "Concrete Inputs")}})
    return out


def main(out: str) -> None:
    t = Trace(pid=3000, corr=0)
    ts = 1000.0
    for i, c in enumerate(recorded_calls()):
        a = c["args"]
        t.op(c["name"], ts, 20.0, a["Input Dims"], a["Input type"], a["Input Strides"], a["Concrete Inputs"])
        t.launch(f"replay_fixture_kernel_{i}", ts + 5.0, ts + 10.0, 2.0 + i)
        ts += 50.0
    meta = [{"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": GPU_TID, "args": {"name": "GPU 2"}}]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 2, "name": "AMD Instinct MI300X"}],
           "traceEvents": meta + t.events}
    Path(out).write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
