"""Write the multi-rank gloo traces of this folder: 4 processes of one torch.distributed job (gloo backend, CPU)
under torch.profiler (record_shapes on), each running the collectives of PLAN; rank DELAYED_RANK sleeps DELAY_S
before the collective DELAYED_STEP, so that the other ranks wait for it there.

    python tests/data/multirank_gloo/make_traces.py          # needs torch (CPU build); writes rank{0..3}.json.gz

The test suite reads PLAN, WORLD_SIZE, DELAYED_RANK, DELAYED_STEP and DELAY_S from this file (it does not need torch).
"""
from __future__ import annotations

import gzip
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

WORLD_SIZE = 4
# (collective, torch dtype name, elements of each rank's input tensor), run in this order on the default group
PLAN: list[tuple[str, str, int]] = [
    ("all_reduce", "float32", 262144),       # 1 MiB per rank
    ("all_gather", "bfloat16", 65536),       # 128 KiB in, 512 KiB out
    ("reduce_scatter", "float32", 262144),   # 1 MiB in, 256 KiB out
    ("all_to_all", "int64", 32768),          # 256 KiB in and out
    ("broadcast", "float16", 131072),        # 256 KiB, from rank 0
    ("all_reduce", "float32", 524288),       # 2 MiB: rank DELAYED_RANK arrives DELAY_S late
    ("all_reduce", "int32", 4096),           # 16 KiB
    ("all_reduce", "float64", 65536),        # 512 KiB
    ("barrier", "uint8", 0),
]
DELAYED_RANK = 2
DELAYED_STEP = 5          # index in PLAN
DELAY_S = 1.0
ITEM_BYTES = {"uint8": 1, "float32": 4, "bfloat16": 2, "int64": 8, "float16": 2, "int32": 4, "float64": 8}


def _run(rank: int, port: int, out_dir: str) -> None:
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, schedule

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    n = WORLD_SIZE

    def step(i: int, kind: str, dtype_name: str, numel: int) -> None:
        dtype = getattr(torch, dtype_name)
        group = None
        x = torch.full((numel,), rank + 1, dtype=dtype)
        if i == DELAYED_STEP and rank == DELAYED_RANK:
            time.sleep(DELAY_S)
        if kind == "barrier":
            dist.barrier(group=group)
        elif kind == "all_reduce":
            dist.all_reduce(x, group=group)
        elif kind == "all_gather":
            dist.all_gather_into_tensor(torch.empty(numel * n, dtype=dtype), x, group=group)
        elif kind == "reduce_scatter":
            dist.reduce_scatter_tensor(torch.empty(numel // n, dtype=dtype), x, group=group)
        elif kind == "all_to_all":
            dist.all_to_all_single(torch.empty(numel, dtype=dtype), x, group=group)
        elif kind == "broadcast":
            dist.broadcast(x, src=0, group=group)

    raw = Path(out_dir) / f"rank{rank}.json"
    # the profiler starts at different times on the ranks: a warm-up step (not recorded) holds a barrier, so that
    # the recorded step starts with the ranks together
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(raw))) as prof:
        dist.barrier()
        prof.step()
        for i, (kind, dtype_name, numel) in enumerate(PLAN):
            step(i, kind, dtype_name, numel)
        prof.step()
    with open(raw, "rb") as src, gzip.open(Path(out_dir) / f"rank{rank}.json.gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    raw.unlink()
    dist.destroy_process_group()


def main() -> None:
    import socket

    import torch.multiprocessing as mp

    out_dir = Path(__file__).resolve().parent
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_run, args=(port, tmp), nprocs=WORLD_SIZE, join=True)
        for r in range(WORLD_SIZE):
            shutil.copy(Path(tmp) / f"rank{r}.json.gz", out_dir / f"rank{r}.json.gz")
    print(f"wrote {WORLD_SIZE} traces to {out_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
