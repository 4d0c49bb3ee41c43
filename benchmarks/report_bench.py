#!/usr/bin/env python3
"""Time `tracesql report` (all sections) on an ingested dataset.

    python benchmarks/report_bench.py DATASET [--style native|tracelens|hta] [--repeat 3]
    python benchmarks/report_bench.py --trace benchmarks/data/qwen_1g.json   # ingests into a temp dataset first

Prints, per repetition, the time to open the dataset (define every view), to compute every section
(tracesql.api.report.build) and to write them as CSV into a temporary folder, and the time of each section, then
a markdown line with the medians. Each repetition opens a fresh connection (no cache carried over).

--cli N also runs the command itself N times, `tracesql report DATASET --style S --format csv --out TMP` as
a child process, and prints its wall time (spawn to exit: interpreter start-up and imports included). With
--trace the trace is first ingested with `tracesql ingest` (also a child process, timed but not counted), so
that the first of these runs is the first command after the ingest.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(dataset: str, style: str, verbose: bool) -> dict:
    import tracesql
    from tracesql.api import analysis, report
    from tracesql.render.formats import write
    from tracesql.render.sections import Document, Section
    from tracesql.store.dataset import materialize

    t0 = time.perf_counter()
    ds = tracesql.open(dataset)
    t1 = time.perf_counter()
    ids = analysis.trace_ids(ds)
    per_section = {}
    if style == "native":  # the same steps as report.build, timed one by one
        for view in report.materialized_views("native"):
            ts = time.perf_counter()
            materialize(ds, [view])
            per_section[f"({view})"] = time.perf_counter() - ts
        sections = []
        for name, fn in report._native_sections(ds, ids, None).items():
            ts = time.perf_counter()
            sections.append(Section(name, fn()))
            per_section[name] = time.perf_counter() - ts
    else:
        sections = report.build(ds, style=style)
    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        write(Document(sections), "csv", out=out)
    t3 = time.perf_counter()
    ds.close()
    if verbose:
        for k, v in per_section.items():
            print(f"    {k:<24} {v:6.2f} s")
    return {"open": t1 - t0, "build": t2 - t1, "write": t3 - t2, "total": t3 - t0}


def _cmd(*args: str) -> list[str]:
    """The tracesql command of this interpreter's environment."""
    exe = Path(sys.executable).with_name("tracesql")
    return [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else ["-m", "tracesql.cli"]), *args]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", nargs="?", help="an ingested dataset")
    p.add_argument("--trace", help="ingest this trace into a temporary dataset first (ingest time not counted)")
    p.add_argument("--style", choices=["native", "tracelens", "hta"], default="native")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quiet", "-q", action="store_true", help="no per-section times")
    p.add_argument("--cli", type=int, default=0, metavar="N", help="also time N runs of the `tracesql report` command")
    a = p.parse_args(argv)
    if not a.dataset and not a.trace:
        p.error("give DATASET or --trace FILE")
    tmp = None
    dataset = a.dataset
    if a.trace:
        tmp = tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR"))
        dataset = str(Path(tmp.name) / "ds")
        t = time.perf_counter()
        subprocess.run(_cmd("ingest", a.trace, "--out", dataset, "--quiet"), check=True)
        print(f"ingest {a.trace}: {time.perf_counter() - t:.1f} s (not counted)")
    for i in range(a.cli):
        with tempfile.TemporaryDirectory() as out:
            t = time.perf_counter()
            subprocess.run(_cmd("report", dataset, "--style", a.style, "--format", "csv", "--out", out), check=True,
                           stdout=subprocess.DEVNULL)
            print(f"cli run {i + 1}{' (first after the ingest)' if a.trace and i == 0 else ''}: "
                  f"`tracesql report` {time.perf_counter() - t:.2f} s")
    runs = []
    for i in range(a.repeat):
        r = run_once(dataset, a.style, verbose=not a.quiet)
        runs.append(r)
        print(f"run {i + 1}: open {r['open']:.2f} s, sections {r['build']:.2f} s, write {r['write']:.2f} s, "
              f"total {r['total']:.2f} s")
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"| {Path(a.trace or dataset).name} | {a.style} | {med['open']:.2f} | {med['build']:.2f} | "
          f"{med['write']:.2f} | {med['total']:.2f} |")
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
