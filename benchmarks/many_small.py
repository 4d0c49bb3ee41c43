#!/usr/bin/env python3
"""The fixed cost per file of ``tracesql ingest``: many small real traces in one run, against the 1 GB trace.

    python benchmarks/many_small.py [--files 40] [--big benchmarks/data/qwen_1g.json] [--repeat 3]

Makes ``--files`` distinct traces of about 1 MB of JSON (``benchmarks/data/small/``, kept): prefixes of real
Kineto traces from ../shared/traces (make_trace.py, eight sources, sizes 1.00, 1.01, ... MB so that no two files
share content). Then, alternating run by run, times as child processes ``tracesql ingest DIR`` on all of them and
``tracesql ingest BIG`` on the 1 GB trace, each into a fresh dataset, and reports the CPU seconds per small file
beyond its size's share of the big run's CPU:

    fixed cost per file = (CPU of the small run - JSON bytes of the small files x CPU per byte of the big run) / files

(the interpreter's start-up is counted in both runs and so shared by the files of the small run).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run_ingest import find_tracesql, ingest_once, json_bytes, prewarm  # noqa: E402

SOURCES = ["nvidia/h100_qwen_infer", "amd/mi300_qwen_infer", "nvidia/hta_nccl_data", "nvidia/b200_eager_nccl",
           "nvidia/kineto_2021_v1_8", "nvidia/hta_ns_resolution_rank0", "nvidia/hta_cuda_graphs_rank0",
           "graphs/vllm_decode_full/capture_rank0"]


def make_small(n: int, out: Path, shared: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(n):
        src = SOURCES[i % len(SOURCES)]
        size = 1_000_000 + 10_000 * (i // len(SOURCES))
        p = out / f"{i:03d}_{src.replace('/', '_')}_{size}.json"
        if not p.is_file():
            subprocess.run([sys.executable, str(HERE / "make_trace.py"), "--source", str(shared / f"{src}.json.gz"),
                            "--size", str(size), "--out", str(p)], check=True, stdout=subprocess.DEVNULL)
        files.append(p)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--big", type=Path, default=HERE / "data" / "qwen_1g.json")
    ap.add_argument("--shared", type=Path, default=HERE.parent.parent / "shared" / "traces")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tracesql")
    a = ap.parse_args(argv)
    a.no_prewarm, a.keep, a.work_dir = True, False, HERE / "data"
    small_dir = HERE / "data" / "small"
    files = make_small(a.files, small_dir, a.shared)
    for stale in set(small_dir.glob("*.json")) - set(files):
        stale.unlink()
    exe = [find_tracesql(a.tracesql)]
    small_bytes = sum(json_bytes(f) for f in files)
    big_bytes = json_bytes(a.big)
    smalls, bigs = [], []
    for r in range(a.repeat):
        for f in files:
            prewarm(f)
        smalls.append(ingest_once(exe, small_dir, a))
        prewarm(a.big)
        bigs.append(ingest_once(exe, a.big, a))
        s, b = smalls[-1], bigs[-1]
        if s["rc"] or b["rc"]:
            print(s["output"][-2000:], b["output"][-2000:], file=sys.stderr)
            return 1
        print(f"  run {r + 1}: {len(files)} small files CPU {s['cpu_s']:.2f} s (wall {s['wall_s']:.1f} s); "
              f"1 GB CPU {b['cpu_s']:.2f} s", file=sys.stderr)
    s_cpu = min(x["cpu_s"] for x in smalls)
    b_cpu = min(x["cpu_s"] for x in bigs)
    share = small_bytes * b_cpu / big_bytes
    fixed = (s_cpu - share) / len(files)
    print(f"{len(files)} files, {small_bytes / 1e6:.1f} MB of JSON: CPU {s_cpu:.2f} s (lowest of {a.repeat}; wall "
          f"{min(x['wall_s'] for x in smalls):.1f} s); their share of the 1 GB run ({big_bytes / 1e6:,.0f} MB, CPU "
          f"{b_cpu:.1f} s): {share:.2f} s; **fixed cost {fixed:.3f} s of CPU per file**")
    return 0


if __name__ == "__main__":
    sys.exit(main())
