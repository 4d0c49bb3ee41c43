"""A hand-made Kineto trace for the peer-style fixtures (tests/data/tl_*/make_trace.py): CPU ops with their recorded
shapes, each launching one kernel through hipLaunchKernel, linked by correlation id and an ac2g flow pair."""
from __future__ import annotations

BF16 = "c10::BFloat16"
GPU_PID, GPU_TID = 2, 0


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


class Trace:
    """The events of one trace: ops on thread (pid, tid), kernels on GPU_PID's stream 0; correlation ids from
    ``corr`` + 1 on."""

    def __init__(self, pid: int, corr: int):
        self.pid = self.tid = pid
        self.corr = corr
        self.events: list[dict] = []

    def op(self, name, ts, dur, dims, types, strides, concrete):
        self.events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": self.pid, "tid": self.tid, "ts": ts,
                            "dur": dur, "args": {"External id": len(self.events) + 1, "Record function id": 0,
                                                 "Concrete Inputs": concrete, "Input type": types,
                                                 "Input Strides": strides, "Input Dims": dims}})

    def launch(self, kernel, ts, k_ts, k_dur):
        self.corr += 1
        c, ev = self.corr, self.events
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": self.pid, "tid": self.tid,
                   "ts": ts, "dur": 3.0, "args": {"External id": len(ev) + 1, "correlation": c}})
        ev.append({"ph": "s", "id": c, "pid": self.pid, "tid": self.tid, "ts": ts, "cat": "ac2g", "name": "ac2g"})
        ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": GPU_PID, "tid": GPU_TID, "ts": k_ts,
                   "dur": k_dur, "args": {"External id": len(ev) + 1, "device": 2, "stream": 0, "correlation": c,
                                          "kernel": kernel, "grid": [256, 1, 1], "block": [256, 1, 1]}})
        ev.append({"ph": "f", "id": c, "pid": GPU_PID, "tid": GPU_TID, "ts": k_ts, "cat": "ac2g", "name": "ac2g",
                   "bp": "e"})
