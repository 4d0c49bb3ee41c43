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

Past 40 files (``--files 1000``), file i is a copy of file i mod 40 with one member added to its top-level object
(``"tracesql_benchmark_copy": i``), so that every file is a distinct trace with the same events as its original.
``--jobs 1,2`` runs the small ingest once per value of ``--jobs`` (each against the same 1 GB runs) and adds files/s
and MB/s of JSON (wall) against the 1 GB run's MB/s.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run_ingest import find_tracesql, json_bytes, measure, prewarm  # noqa: E402

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


def make_copies(files: list[Path], n: int, out: Path) -> list[Path]:
    """Files 40..n-1: distinct copies of the first 40 (module docstring)."""
    base = files[:40]
    extra = []
    for i in range(len(base), n):
        p = out / f"{i:04d}_copy_of_{base[i % len(base)].stem}.json"
        if not p.is_file():
            data = base[i % len(base)].read_bytes()
            brace = data.index(b"{")
            p.write_bytes(data[:brace + 1] + b'"tracesql_benchmark_copy": ' + str(i).encode() + b", "
                          + data[brace + 1:])
        extra.append(p)
    return extra


def measure_ingest(exe: list[str], path: Path, jobs: int) -> dict:
    """``tracesql ingest PATH --jobs JOBS`` into a fresh dataset, removed afterwards."""
    work = Path(tempfile.mkdtemp(prefix="many-small-", dir=HERE / "data"))
    try:
        return measure(exe + ["ingest", str(path), "--out", str(work / "dataset"), "--quiet", "--jobs", str(jobs)])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--big", type=Path, default=HERE / "data" / "qwen_1g.json")
    ap.add_argument("--shared", type=Path, default=HERE.parent.parent / "shared" / "traces")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", default="1", help="comma-separated values of tracesql ingest --jobs (default 1)")
    ap.add_argument("--tracesql")
    a = ap.parse_args(argv)
    a.no_prewarm, a.keep, a.work_dir = True, False, HERE / "data"
    small_dir = HERE / "data" / ("small" if a.files <= 40 else f"small_{a.files}")
    files = make_small(min(a.files, 40), HERE / "data" / "small", a.shared)
    if a.files > 40:
        small_dir.mkdir(parents=True, exist_ok=True)
        for f in files:  # the originals, linked into the larger set
            if not (small_dir / f.name).exists():
                os.link(f, small_dir / f.name)
        files = [small_dir / f.name for f in files] + make_copies(files, a.files, small_dir)
    for stale in set(small_dir.glob("*.json")) - set(files):
        stale.unlink()
    jobs_list = [int(j) for j in a.jobs.split(",")]
    exe = [find_tracesql(a.tracesql)]
    small_bytes = sum(json_bytes(f) for f in files)
    big_bytes = json_bytes(a.big)
    smalls: dict[int, list[dict]] = {j: [] for j in jobs_list}
    bigs = []
    for r in range(a.repeat):
        for j in jobs_list:
            for f in files:
                prewarm(f)
            s = measure_ingest(exe, small_dir, j)
            smalls[j].append(s)
            if s["rc"]:
                print(s["output"][-2000:], file=sys.stderr)
                return 1
            print(f"  run {r + 1}: {len(files)} small files, --jobs {j}: CPU {s['cpu_s']:.2f} s (wall "
                  f"{s['wall_s']:.1f} s, peak RSS {s['maxrss_kb'] / 1024:,.0f} MiB)", file=sys.stderr)
        prewarm(a.big)
        b = measure_ingest(exe, a.big, 1)
        bigs.append(b)
        if b["rc"]:
            print(b["output"][-2000:], file=sys.stderr)
            return 1
        print(f"  run {r + 1}: 1 GB CPU {b['cpu_s']:.2f} s (wall {b['wall_s']:.1f} s, peak RSS "
              f"{b['maxrss_kb'] / 1024:,.0f} MiB)", file=sys.stderr)
    b_cpu = min(x["cpu_s"] for x in bigs)
    b_wall = min(x["wall_s"] for x in bigs)
    share = small_bytes * b_cpu / big_bytes
    print(f"1 GB trace ({big_bytes / 1e6:,.0f} MB): CPU {b_cpu:.1f} s, wall {b_wall:.1f} s, "
          f"{big_bytes / 1e6 / b_wall:.1f} MB/s (lowest of {a.repeat})")
    for j in jobs_list:
        s_cpu = min(x["cpu_s"] for x in smalls[j])
        s_wall = min(x["wall_s"] for x in smalls[j])
        fixed = (s_cpu - share) / len(files)
        print(f"{len(files)} files, {small_bytes / 1e6:.1f} MB of JSON, --jobs {j}: CPU {s_cpu:.2f} s, wall "
              f"{s_wall:.1f} s (lowest of {a.repeat}): {len(files) / s_wall:.1f} files/s, "
              f"{small_bytes / 1e6 / s_wall:.1f} MB/s ({100 * (small_bytes / s_wall) / (big_bytes / b_wall):.0f} % "
              f"of the 1 GB run's MB/s); their share of the 1 GB run's CPU: {share:.2f} s; "
              f"**fixed cost {fixed:.3f} s of CPU per file**")
    return 0


if __name__ == "__main__":
    sys.exit(main())
