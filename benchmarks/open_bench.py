#!/usr/bin/env python3
"""How long the SQL library takes to open: CPU seconds of child processes, each run on a fresh cache directory
("cold": the columns of every module computed) and again on the same one ("warm"), side by side with the floor.

    python benchmarks/open_bench.py DATASET [--repeat 3] [--duckdb PATH]

Rows (each a child process; CPU = user + system from its rusage, the lowest of --repeat runs):
  floor           the duckdb CLI answering `SELECT count(*) FROM kernels` over the table views alone (no library)
  duckdb -init    the duckdb CLI answering the same query after `-init DATASET/init.sql` (the whole library)
  shell           `tracesql shell DATASET` with that query on stdin (checks the dataset, writes init.sql, runs the
                  duckdb CLI)
  report cold     `tracesql report DATASET` (first command on a fresh cache directory, DATASET/catalog.duckdb
                  removed first)
  report warm     the same with the cache directory and DATASET/catalog.duckdb an ingest leaves
  report hta/tracelens cold   the peer styles' reports (`--out TMP`) on a fresh cache directory

The duckdb CLI is the one `pip install duckdb-cli` installs (found on PATH unless --duckdb is given). Another
version of tracesql is measured by putting its checkout first on PYTHONPATH (with a copy of the dataset: the run
rewrites DATASET/init.sql and DATASET/catalog.duckdb).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def _cpu(cmd: list[str], env: dict, stdin: str | None = None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {proc.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duckdb", default=shutil.which("duckdb"))
    a = ap.parse_args()
    if not a.duckdb:
        sys.exit("no duckdb CLI: pip install duckdb-cli")
    ds = Path(a.dataset).resolve()
    tracesql = [sys.executable, "-m", "tracesql.cli"]
    query = "SELECT count(*) FROM kernels;\n"
    work = Path(tempfile.mkdtemp(prefix="open-bench-"))
    try:
        from tracesql.store.dataset import table_statements
    except ImportError:  # a version from before the packages by layer (--against through PYTHONPATH)
        from tracesql.dataset import table_statements  # type: ignore[no-redef]

    floor_sql = work / "floor.sql"
    floor_sql.write_text("SET enable_progress_bar = false;\n" + "\n".join(table_statements(ds)) + "\n")
    rows: dict[str, list[float]] = {}

    def run(name: str, cmd: list[str], stdin: str | None = None, cold: bool = False) -> None:
        cache = work / f"cache-{name.replace(' ', '_')}-{len(rows.get(name, []))}"
        if cold:  # as after an ingest on a fresh cache: no catalog (a version that opens it would bind nothing)
            (ds / "catalog.duckdb").unlink(missing_ok=True)
        env = dict(os.environ, TRACESQL_CACHE_DIR=str(cache if cold else work / "cache-warm"), COLUMNS="120")
        rows.setdefault(name, []).append(_cpu(cmd, env, stdin))

    # the warm cache and a current init.sql first
    run("warm-up", tracesql + ["report", str(ds)])
    subprocess.run(tracesql + ["catalog", str(ds)], env=dict(os.environ, TRACESQL_CACHE_DIR=str(work / "cache-warm")),
                   check=True, capture_output=True)
    for _ in range(a.repeat):
        run("floor", [a.duckdb, "-init", str(floor_sql)], query)
        run("duckdb -init", [a.duckdb, "-init", str(ds / "init.sql")], query)
        run("shell", tracesql + ["shell", str(ds)], query)
        run("report cold", tracesql + ["report", str(ds)], cold=True)
        subprocess.run(tracesql + ["catalog", str(ds)], capture_output=True, check=True,  # as an ingest leaves it
                       env=dict(os.environ, TRACESQL_CACHE_DIR=str(work / "cache-warm")))
        run("report warm", tracesql + ["report", str(ds)])
        for style in ("hta", "tracelens"):
            run(f"report {style} cold", tracesql + ["report", str(ds), "--style", style, "--out",
                                                    str(work / f"out-{style}")], cold=True)
    print(f"{'what':<24} {'CPU s (min)':>12} {'runs':>30}")
    for name, vals in rows.items():
        if name != "warm-up":
            print(f"{name:<24} {min(vals):>12.2f} {' '.join(f'{v:.2f}' for v in vals):>30}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
