#!/usr/bin/env python3
"""What one chunk costs in a parse worker, statement by statement, against DuckDB doing the bare work on it.

    python benchmarks/chunk_costs.py [--trace benchmarks/data/qwen_1g.json] [--small FILE] [--repeat 5]

Takes the fourth 32 MB chunk of ``--trace`` (cut by the ingest's own splitter) and the whole of a ~1 MB trace
(``--small``, default: the first file of ``benchmarks/data/small/``), and times in one connection with one thread
(the workers' setting), lowest CPU of ``--repeat`` runs of each statement (``time.thread_time``):

- the bare work: ``read_json`` of the chunk with the floor's column list, counted; into a temp table; into one zstd
  Parquet file (what ``ingest_floor.py`` does for the whole trace);
- the worker's statements: the read into the temp table ``c`` (``read.chunk_select``) and one COPY per table
  (``extract.table_copy``);
- for each table's COPY, the same SELECT over no rows: the cost of binding and planning the statement, which a small
  file pays once per table whatever its size.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import duckdb  # noqa: E402

from tracesql.ingest.extract import table_copy  # noqa: E402
from tracesql.ingest.jsonstream import ByteSource, TraceSplitter  # noqa: E402
from tracesql.ingest.read import chunk_select, classify  # noqa: E402

FLOOR_COLUMNS = ("{ph: 'VARCHAR', cat: 'VARCHAR', name: 'VARCHAR', pid: 'JSON', tid: 'JSON', ts: 'DOUBLE', "
                 "dur: 'DOUBLE', id: 'JSON', args: 'JSON'}")
TABLES = ["events", "launches", "kernels", "correlations", "instants", "metadata", "counters",
          "gpu_user_annotations", "other_events"]


def chunk_file(trace: Path, index: int, out: Path) -> int:
    """Write chunk ``index`` of ``trace`` (32 MB chunks) as a JSON array at ``out``; returns its bytes."""
    splitter = TraceSplitter(ByteSource(str(trace), salvage=False), chunk_size=32 << 20, salvage=False)
    chunk = None
    for i, ch in enumerate(splitter.chunks()):
        chunk = ch
        if i == index:
            break
    assert chunk is not None
    with open(out, "wb") as f:
        f.write(b"[")
        f.writelines(chunk.pieces)
        f.write(b"]")
    return out.stat().st_size


def measure(label: str, path: Path, tmp: Path, repeat: int) -> None:
    con = duckdb.connect(config={"threads": 1, "preserve_insertion_order": True})
    con.execute("CREATE TEMP TABLE device_pids (pid VARCHAR, device INTEGER)")

    def cpu_ms(sql: str) -> float:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.thread_time()
            con.execute(sql).fetchall()
            best = min(best, time.thread_time() - t0)
        return best * 1000

    mode, _ = classify(path.read_bytes()[1:-1])
    read = f"read_json('{path}', format = 'array', columns = {FLOOR_COLUMNS}, maximum_object_size = 67108864)"
    rows: list[tuple[str, float, float | None]] = [
        ("floor: read_json, count(*)", cpu_ms(f"SELECT count(*) FROM {read}"), None),
        ("floor: read_json into a temp table", cpu_ms(f"CREATE OR REPLACE TEMP TABLE f AS SELECT * FROM {read}"), None),
        ("floor: read_json into one zstd Parquet file",
         cpu_ms(f"COPY (SELECT * FROM {read}) TO '{tmp / 'floor.parquet'}' (FORMAT parquet, COMPRESSION zstd)"), None),
        (f"worker: read into c ({mode.value})",
         cpu_ms(f"CREATE OR REPLACE TEMP TABLE c AS {chunk_select(str(path), mode, 0)}"), None),
    ]
    routes = dict(con.execute("SELECT route, count(*) FROM c GROUP BY route").fetchall())
    for table in TABLES:
        route = "events" if table == "launches" else table
        if not routes.get(route):
            continue
        src = f"(SELECT ord - 1 AS event_id, * EXCLUDE (ord) FROM c WHERE route = '{route}')"
        copy = table_copy(table, src, str(tmp / f"{table}.parquet"))
        select_none = copy.split("COPY (", 1)[1].rsplit(") TO", 1)[0].replace(f"route = '{route}'", "false")
        rows.append((f"worker: COPY {table} ({routes[route]:,} rows of its route)", cpu_ms(copy),
                     cpu_ms(f"SELECT count(*) FROM ({select_none})")))
    print(f"\n{label}: {path.stat().st_size / 1e6:.1f} MB, {sum(routes.values()):,} events, read mode {mode.value}")
    print(f"  {'statement':<58} {'CPU ms':>8} {'plan ms':>8}")
    for name, ms, plan in rows:
        print(f"  {name:<58} {ms:8.1f} {'' if plan is None else f'{plan:8.1f}':>8}")
    copies = sum(ms for name, ms, _ in rows if name.startswith("worker: COPY"))
    plans = sum(p for _, _, p in rows if p is not None)
    print(f"  worker total (read + copies) {rows[3][1] + copies:.1f} ms, of which planning the copies {plans:.1f} ms")
    con.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", type=Path, default=HERE / "data" / "qwen_1g.json")
    ap.add_argument("--small", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    small = a.small or sorted((HERE / "data" / "small").glob("*.json"))[0]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        big = tmp / "chunk.json"
        chunk_file(a.trace, 3, big)
        measure(f"32 MB chunk of {a.trace.name}", big, tmp, a.repeat)
        whole = tmp / "small.json"
        chunk_file(small, 0, whole)
        measure(f"whole of {small.name}", whole, tmp, a.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
