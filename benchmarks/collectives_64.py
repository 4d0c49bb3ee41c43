#!/usr/bin/env python3
"""`tracesql collectives` on a 64-rank job: ranks replicated from a real 8-rank job with shifted clocks.

    python benchmarks/collectives_64.py [--ranks 64] [--repeat 3]

Writes ``benchmarks/data/job_<N>/rank<r>.json.gz`` (kept): rank r is the real trace
``../shared/traces/multirank/dlrm_8rank/rank<r mod 8>.json.gz`` with ``distributedInfo`` saying rank r of N and every
``ts`` moved by r × 37 µs (another clock), ingests them into one dataset, then times ``tracesql collectives DATASET``
and ``tracesql ranks DATASET`` as child processes (wall and CPU, lowest of ``--repeat``).
"""
from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run_ingest import find_tracesql, measure  # noqa: E402

SHIFT_US = 37


def make_job(n: int, src: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for r in range(n):
        p = out / f"rank{r}.json.gz"
        if not p.exists():
            doc = orjson.loads(gzip.decompress((src / f"rank{r % 8}.json.gz").read_bytes()))
            doc["distributedInfo"] = {**doc.get("distributedInfo", {}), "rank": r, "world_size": n}
            for ev in doc["traceEvents"]:
                if isinstance(ev.get("ts"), (int, float)):
                    ev["ts"] = ev["ts"] + r * SHIFT_US
            p.write_bytes(gzip.compress(orjson.dumps(doc), compresslevel=1))
        files.append(p)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shared", type=Path, default=HERE.parent.parent / "shared" / "traces")
    ap.add_argument("--tracesql")
    a = ap.parse_args(argv)
    exe = [find_tracesql(a.tracesql)]
    root = HERE / "data" / f"job_{a.ranks}"
    make_job(a.ranks, a.shared / "multirank" / "dlrm_8rank", root / "traces")
    ds = root / "dataset"
    if not (ds / "catalog.duckdb").exists():
        shutil.rmtree(ds, ignore_errors=True)
        subprocess.run(exe + ["ingest", str(root / "traces"), "--out", str(ds), "-q"], check=True,
                       stdout=subprocess.DEVNULL)
    for cmd in (["collectives"], ["ranks"]):
        runs = [measure(exe + cmd + [str(ds), "--format", "csv"]) for _ in range(a.repeat)]
        if any(r["rc"] for r in runs):
            print(runs[0]["output"][-2000:], file=sys.stderr)
            return 1
        rows = runs[0]["output"].count("\n") - 1
        print(f"tracesql {cmd[0]} on {a.ranks} ranks: wall {min(r['wall_s'] for r in runs):.2f} s, CPU "
              f"{min(r['cpu_s'] for r in runs):.2f} s (lowest of {a.repeat}; {rows} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
