"""Time building the call-tree views (sql/1*.sql) on a dataset.

    python benchmarks/tree_bench.py DATASET [--repeat 3] [--threads N] [--json-out FILE]

Each run opens the dataset in a fresh DuckDB connection and materialises every tree view in dependency
order (tracesql.api.tree.materialize: `CREATE TEMP TABLE v AS SELECT * FROM v`, so each view is computed
once, reading the views before it from their stored rows). Reported per view: the fastest of the runs
and its row count; the total is the fastest complete run. The 1 GB trace is made and ingested with

    python benchmarks/make_trace.py --source ../shared/traces/nvidia/h100_qwen_infer.json.gz \\
        --size 1GB --out benchmarks/data/qwen_1g.json
    tracesql ingest benchmarks/data/qwen_1g.json --out benchmarks/data/qwen_1g.ds
    python benchmarks/tree_bench.py benchmarks/data/qwen_1g.ds
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import resource
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

import tracesql  # noqa: E402
from tracesql.api.tree import materialize, tree_views  # noqa: E402
from tracesql.store.schema import DERIVED_TABLES, TABLES  # noqa: E402

TREE_VIEWS = tree_views()

# (the name tracesql.ingest is the package's ingest() function; the module is imported by its full name)
derive_module = importlib.import_module("tracesql.ingest.derive")

# The views the issue names (the rest are helpers); the "core" set is nesting + links + attribution.
# Query-time part of the links and attribution (cpu_nesting, gpu_launch_links and cpu_event_context are stored
# at ingest; --build times that step).
CORE = ["graph_capture_links", "_tree_gpu_annotation", "gpu_event_ops"]


class _TimedConnection:
    """A DuckDB connection that records the wall and CPU time of each statement (for --build-steps)."""

    def __init__(self, con, steps: list):
        self.con, self.steps = con, steps

    def execute(self, sql, *args):
        t0, c0 = time.perf_counter(), cpu_seconds()
        r = self.con.execute(sql, *args)
        self.steps.append((time.perf_counter() - t0, cpu_seconds() - c0, " ".join(sql.split())))
        return r

    def close(self):
        self.con.close()


def build_run(dataset: str, steps: list | None = None) -> dict[str, tuple[float, float]]:
    """Time the ingest-time build of the derived tables (ingest/derive.py: build_derived) for each trace of the
    dataset, on a scratch copy of its stored tables (symlinks), exactly as `tracesql ingest` runs it: (wall s, CPU s)
    per trace. With ``steps``, (wall s, CPU s, statement) of every statement of the build is appended to it."""
    if steps is not None:
        derive_module.duckdb = types.SimpleNamespace(
            connect=lambda *a, **k: _TimedConnection(duckdb.connect(*a, **k), steps))
    out = {}
    try:
        for tdir in sorted(Path(dataset, "traces").glob("trace_id=*")):
            with tempfile.TemporaryDirectory(dir=dataset) as tmp:
                staging = Path(tmp)
                o = staging / "out"
                o.mkdir()
                for t in TABLES:
                    if t not in DERIVED_TABLES and (tdir / t).is_dir():
                        (o / t).symlink_to((tdir / t).resolve())
                t0, c0 = time.perf_counter(), cpu_seconds()
                derive_module.build_derived(o, staging)
                out[tdir.name] = (time.perf_counter() - t0, cpu_seconds() - c0)
    finally:
        derive_module.duckdb = duckdb
    return out


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one_run(dataset: str, threads: int | None):
    t0 = time.perf_counter()
    ds = tracesql.open(dataset, threads=threads)
    opened = time.perf_counter() - t0
    try:
        timings, cpu = {}, {}
        for v in TREE_VIEWS:   # materialize() view by view, also recording the process CPU time
            c0 = cpu_seconds()
            timings.update(materialize(ds, [v]))
            cpu[v] = cpu_seconds() - c0
        rows = {v: ds.con.execute(f'SELECT count(*) FROM "{v}"').fetchone()[0] for v in TREE_VIEWS}
    finally:
        ds.close()
    return opened, timings, rows, sum(timings.values()), cpu


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: DuckDB's choice)")
    p.add_argument("--json-out", metavar="FILE")
    p.add_argument("--build", action="store_true",
                   help="also time the ingest-time build of the derived tables (cpu_nesting, gpu_launch_links, "
                        "cpu_event_context), fastest of --repeat runs")
    p.add_argument("--build-steps", action="store_true",
                   help="one more build run with the wall time of each of its statements (0.05 s or more)")
    a = p.parse_args(argv)
    build = [build_run(a.dataset) for _ in range(a.repeat)] if a.build else None
    steps: list = []
    if a.build_steps:
        build_run(a.dataset, steps)

    runs = [one_run(a.dataset, a.threads) for _ in range(a.repeat)]
    best_total = min(r[3] for r in runs)
    best = {v: min(r[1][v] for r in runs) for v in TREE_VIEWS}
    best_cpu = {v: min(r[4][v] for r in runs) for v in TREE_VIEWS}
    load = os.getloadavg()
    rows = runs[0][2]
    with tracesql.open(a.dataset) as ds:
        facts = ds.con.execute("""SELECT (SELECT count(*) FROM traces), (SELECT count(*) FROM events),
                                         (SELECT count(*) FROM kernels), (SELECT sum(json_bytes) FROM traces)"""
                               ).fetchone()
        threads = ds.con.execute("SELECT current_setting('threads')").fetchone()[0]

    print(f"`python benchmarks/tree_bench.py {' '.join(sys.argv[1:] if argv is None else argv)}`\n")
    print(f"- machine: {cpu_model()}, {os.cpu_count()} CPUs; DuckDB {duckdb.__version__} with {threads} threads; "
          f"Python {platform.python_version()}")
    print(f"- dataset: {facts[0]} trace(s), {facts[3] / 1e6:,.0f} MB of JSON, {facts[1]:,} CPU events, "
          f"{facts[2]:,} GPU events")
    print(f"- {a.repeat} runs; per view the fastest run; total = fastest complete run "
          f"(opening the dataset: {min(r[0] for r in runs):.2f} s, not included); load average at the end "
          f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    print("- CPU s = user + system time of the process (all DuckDB threads), less sensitive to other load\n")
    print("| view | rows | wall s | CPU s |")
    print("|---|---:|---:|---:|")
    for v in TREE_VIEWS:
        print(f"| `{v}` | {rows[v]:,} | {best[v]:.2f} | {best_cpu[v]:.2f} |")
    print(f"| **nesting + links + attribution** ({', '.join(CORE)}) | | "
          f"**{min(sum(r[1][v] for v in CORE) for r in runs):.2f}** | "
          f"{min(sum(r[4][v] for v in CORE) for r in runs):.2f} |")
    print(f"| **all tree views** | | **{best_total:.2f}** | {min(sum(r[4].values()) for r in runs):.2f} |")
    if build:
        fastest = min(build, key=lambda b: sum(w for w, _ in b.values()))
        print(f"\nIngest-time build of the derived tables ({', '.join(f'`{t}`' for t in DERIVED_TABLES)}, "
              f"as run by `tracesql ingest`), fastest of {len(build)}: "
              f"**{sum(w for w, _ in fastest.values()):.2f} s** ({sum(c for _, c in fastest.values()):.2f} s CPU; "
              f"lowest CPU of the runs {min(sum(c for _, c in b.values()) for b in build):.2f} s)")
    if steps:
        print("\nStatements of one build run (0.05 s or more):\n")
        print("| wall s | CPU s | statement |")
        print("|---:|---:|---|")
        for sec, cpu, sql in steps:
            if sec >= 0.05:
                print(f"| {sec:.2f} | {cpu:.2f} | `{sql[:90]}` |")
        print(f"| **{sum(x[0] for x in steps):.2f}** | **{sum(x[1] for x in steps):.2f}** | all statements |")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"runs": [{"open_s": r[0], "views_s": r[1], "total_s": r[3], "cpu_s": r[4]} for r in runs],
                       "rows": rows, "threads": threads, "facts": facts,
                       "build": [{k: {"wall_s": w, "cpu_s": c} for k, (w, c) in b.items()} for b in build or []],
                       "build_steps": [{"wall_s": w, "cpu_s": c, "sql": q} for w, c, q in steps]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
