#!/usr/bin/env python3
"""What the compute model (sql/perf/) adds to `tracesql report`: the same command with and without it, alternating.

    python benchmarks/perf_overhead.py DATASET [--repeat 3] [--format table|csv]

Each run is a child process; its CPU time (user + system, from the child's rusage) and wall time are printed.
``with``: `tracesql report DATASET` as a user runs it (table: the text report, first screen included, to
/dev/null with COLUMNS=120; csv: `--format csv --out TMP`). ``without``: the same command in a child that leaves
the compute model out: no view of sql/perf/ is materialized and the first screen's Compute line (the only reader
of perf_overview / perf_overview_worst) is not computed. The ratio of the medians is the overhead.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

_WITHOUT = """
import sys
from tracesql.api import report, summary
from tracesql.store import sqlmodules
from tracesql.cli import main
perf = {o for m in sqlmodules.modules().values() if m.name.startswith("perf/") for o in m.objects}
_views = report.materialized_views
report.materialized_views = lambda style: [v for v in _views(style) if v not in perf]
_summary_views = summary.views
summary.views = lambda: [o for o in _summary_views() if o.object not in perf]
summary.materialized = lambda tag: [v for v in sqlmodules.materialized(tag) if v not in perf]
summary._compute_line = lambda frames, trace_id: "Compute"
sys.exit(main(sys.argv[1:]))
"""
_WITH = "import sys\nfrom tracesql.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def run(dataset: str, fmt: str, without: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        args = ["report", dataset] + (["--format", "csv", "--out", out] if fmt == "csv" else [])
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-c", _WITHOUT if without else _WITH, *args],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "120"})
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"report failed ({'without' if without else 'with'} the compute model)")
    return ru.ru_utime + ru.ru_stime, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--format", choices=["table", "csv"], default="table")
    a = ap.parse_args()
    cpu: dict[bool, list[float]] = {False: [], True: []}
    for i in range(a.repeat):
        for without in (True, False):
            c, w = run(a.dataset, a.format, without)
            cpu[without].append(c)
            print(f"run {i + 1} {'without' if without else 'with   '} the compute model: CPU {c:6.2f} s, "
                  f"wall {w:6.2f} s", flush=True)
    with_, without_ = statistics.median(cpu[False]), statistics.median(cpu[True])
    print(f"| report --format {a.format} | {without_:.2f} s | {with_:.2f} s | "
          f"+{100 * (with_ / without_ - 1):.1f} % |")


if __name__ == "__main__":
    main()
