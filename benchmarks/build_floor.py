#!/usr/bin/env python3
"""What DuckDB's primitives cost on the inputs of the call-tree build (the floor under each build statement).

    python benchmarks/build_floor.py benchmarks/data/qwen_1g.tsql

On the first trace of DATASET, with the connection settings of the ingest-time build (two threads, the build's
memory limit), it times, fastest of --repeat runs, wall and CPU seconds:

* sorting the CPU events into nesting order (thread, start, longer first, event id) into a table, and the same
  order inside a window, once with ``row_number()`` and once with a running sum: the nesting passes of
  sql/10_tree_nesting.sql are windows of this kind over the start and end rows;
* an ASOF join of every event to the latest earlier event one level up (the parent step, on the stored
  ``cpu_nesting``);
* writing each stored derived table to Parquet as the build does (zstd level 1), from a table already in memory,
  with and without its text columns.

Nothing here is part of the product; it shows how far each build step is above the cost of the sort, join or
write it cannot avoid.
"""
from __future__ import annotations

import argparse
import importlib
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tracesql.store.schema import DERIVED_TABLES, TABLES, columns, empty_select  # noqa: E402

# (the name tracesql.ingest is the package's ingest() function; the module is imported by its full name)
ingest_module = importlib.import_module("tracesql.ingest")

ORDER = "thread_key, ts_ns, neg_end, grp, event_id"


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    tdirs = sorted(Path(a.dataset, "traces").glob("trace_id=*"))
    if not tdirs:
        sys.exit(f"no traces in {a.dataset}")
    tdir = tdirs[0]
    with tempfile.TemporaryDirectory(dir=a.dataset) as tmp:
        con = duckdb.connect(config={"threads": 2, "memory_limit": ingest_module.BUILD_MEMORY_LIMIT,
                                     "temp_directory": str(Path(tmp) / "spill"), "preserve_insertion_order": False,
                                     "checkpoint_threshold": "1TB"})
        for t in TABLES:
            if t == "traces" or not (tdir / t).is_dir():
                con.execute(f"CREATE VIEW {t} AS {empty_select(t)}")
            else:
                con.execute(f"CREATE VIEW {t} AS SELECT '' AS trace_id, * "
                            f"FROM read_parquet('{tdir / t / '*.parquet'}')")
        con.execute((HERE.parent / "sql" / "10_tree_nesting.sql").read_text())
        con.execute("""CREATE TEMP TABLE s AS SELECT thread_key, event_id, ts_ns, -end_ns AS neg_end, grp,
                       CASE WHEN end_ns > ts_ns THEN 1 ELSE -1 END AS d FROM _tree_slices""")
        n = con.execute("SELECT count(*) FROM s").fetchone()[0]
        con.execute("CREATE TEMP TABLE n AS SELECT thread_key, event_id, depth, nest_pos FROM cpu_nesting")
        out = str(Path(tmp) / "x.parquet")

        results = []

        def timed(label: str, sql: str) -> None:
            best = None
            for _ in range(a.repeat):
                t0, c0 = time.perf_counter(), cpu_seconds()
                con.execute(sql)
                w, c = time.perf_counter() - t0, cpu_seconds() - c0
                if best is None or w < best[0]:
                    best = (w, c)
            results.append((label, *best))
            print(f"{best[0]:6.2f} s wall {best[1]:6.2f} s CPU  {label}", file=sys.stderr, flush=True)

        timed(f"ORDER BY nesting order into a table ({n:,} rows)",
              f"CREATE OR REPLACE TEMP TABLE x AS SELECT * FROM s ORDER BY {ORDER}")
        timed("window row_number() in nesting order",
              f"CREATE OR REPLACE TEMP TABLE x AS SELECT *, row_number() OVER (ORDER BY {ORDER}) AS r FROM s")
        timed("window running sum in nesting order",
              f"CREATE OR REPLACE TEMP TABLE x AS SELECT *, sum(d) OVER (ORDER BY {ORDER} "
              f"ROWS UNBOUNDED PRECEDING) AS r FROM s")
        timed("ASOF join of every event to the latest earlier event one level up (cpu_nesting)",
              """CREATE OR REPLACE TEMP TABLE x AS SELECT c.event_id, q.event_id AS parent FROM n c
                 ASOF LEFT JOIN n q ON c.thread_key = q.thread_key AND c.depth - 1 = q.depth
                 AND c.nest_pos > q.nest_pos""")
        for t in ("cpu_nesting", "gpu_launch_links", "cpu_event_context"):
            if t not in DERIVED_TABLES:
                continue
            cols = [c for c, _, _ in columns(t)]
            texts = [c for c, ty, _ in columns(t) if ty == "VARCHAR"]
            con.execute(f"CREATE OR REPLACE TEMP TABLE w AS SELECT {', '.join(cols)} FROM {t}")
            rows = con.execute("SELECT count(*) FROM w").fetchone()[0]
            opts = "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)"
            timed(f"write `{t}` ({rows:,} rows, {len(cols)} columns)", f"COPY w TO '{out}' {opts}")
            timed(f"write `{t}` without its {len(texts)} text columns",
                  f"COPY (SELECT * EXCLUDE ({', '.join(texts)}) FROM w) TO '{out}' {opts}")
        con.close()

    load = os.getloadavg()
    print(f"`python benchmarks/build_floor.py {' '.join(sys.argv[1:] if argv is None else argv)}`\n")
    print(f"- DuckDB {duckdb.__version__}, 2 threads, memory limit {ingest_module.BUILD_MEMORY_LIMIT}; "
          f"{os.cpu_count()} CPUs; fastest of {a.repeat}; load average at the end {load[0]:.1f}\n")
    print("| primitive | wall s | CPU s |")
    print("|---|---:|---:|")
    for label, w, c in results:
        print(f"| {label} | {w:.2f} | {c:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
