#!/usr/bin/env python3
"""The report of an archive and per-trace opening, against one trace.

    python benchmarks/archive_report.py [--traces 200] [--repeat 3]

Ingests the first ``--traces`` files of ``benchmarks/data/small_1000/`` (made by ``many_small.py --files 1000``)
into one dataset and the first of them alone into another (kept in ``benchmarks/data/archive_<N>/``), then, runs
alternating, times as child processes:

- ``tracesql report DATASET --format csv --out DIR`` on each (N traces: the cross-trace sections and one folder per
  trace; 1 trace: one set of files), and reports the CPU per trace of the large one against the small one;
- opening one trace of the N-trace dataset and reading its kernels, with ``tracesql.open(DATASET,
  trace_ids=[t])`` against ``tracesql.open(DATASET)`` (the catalog of every trace) and against DuckDB reading the
  trace's Parquet directly.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run_ingest import find_tracesql, measure  # noqa: E402

OPEN = """
import sys, time, duckdb, tracesql
ds, tid, how = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.process_time()
if how == "parquet":
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{ds}/traces/trace_id={tid}/kernels/*.parquet')").fetchone()[0]
else:
    d = tracesql.open(ds, trace_ids=[tid]) if how == "trace_ids" else tracesql.open(ds)
    n = d.sql(f"SELECT count(*) AS n FROM kernels WHERE trace_id = '{tid}'")["n"][0]
    d.close()
print(f"{time.process_time() - t0:.4f} {n}")
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tracesql")
    a = ap.parse_args(argv)
    exe = [find_tracesql(a.tracesql)]
    files = sorted((HERE / "data" / "small_1000").glob("*.json"))[:a.traces]
    if len(files) < a.traces:
        print("run benchmarks/many_small.py --files 1000 first", file=sys.stderr)
        return 1
    root = HERE / "data" / f"archive_{a.traces}"
    big, one = root / "many", root / "one"
    if not (big / "catalog.duckdb").exists():
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run(exe + ["ingest", *map(str, files), "--out", str(big), "-q"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(exe + ["ingest", str(files[0]), "--out", str(one), "-q"], check=True, stdout=subprocess.DEVNULL)
    tid = next((one / "traces").glob("trace_id=*")).name.split("=", 1)[1]
    reports: dict[str, list[float]] = {"many": [], "one": []}
    opens: dict[str, list[float]] = {"trace_ids": [], "catalog": [], "parquet": []}
    py = str(Path(exe[0]).with_name("python"))
    for _ in range(a.repeat):
        for name, ds in (("many", big), ("one", one)):
            out = Path(tempfile.mkdtemp(dir=HERE / "data"))
            try:
                r = measure(exe + ["report", str(ds), "--format", "csv", "--out", str(out / "r")])
            finally:
                shutil.rmtree(out, ignore_errors=True)
            if r["rc"]:
                print(r["output"][-2000:], file=sys.stderr)
                return 1
            reports[name].append(r["cpu_s"])
        for how in opens:
            p = subprocess.run([py, "-c", OPEN, str(big), tid, how], capture_output=True, text=True, check=True)
            opens[how].append(float(p.stdout.split()[0]))
    many, single = min(reports["many"]), min(reports["one"])
    print(f"tracesql report --format csv --out: {a.traces} traces {many:.2f} s CPU ({many / a.traces:.3f} s per "
          f"trace), 1 trace {single:.2f} s CPU: {many / a.traces / single:.2f}x the single trace's CPU per trace "
          f"(lowest of {a.repeat})")
    print(f"open one trace of {a.traces} and count its kernels, CPU s in the process (lowest of {a.repeat}): "
          + ", ".join(f"{how} {min(v):.3f}" for how, v in opens.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
