#!/usr/bin/env python3
"""The DuckDB floor of an ingest: the trace's events read by DuckDB's own JSON reader into one Parquet file.

    python benchmarks/ingest_floor.py benchmarks/data/qwen_1g.json          # times the floor once
    python benchmarks/run_ingest.py --sizes 1GB --floor                      # with the ingest, in one run

The events of ``traceEvents`` are written once as newline-delimited JSON beside the trace (``<trace>.ndjson``,
kept while it is newer than the trace; git-ignored under benchmarks/data/), one event per line re-serialised by
orjson. The floor is then, in a child process with two threads:

    COPY (SELECT * FROM read_json(NDJSON, format = 'newline_delimited', columns = {ph, cat, name: VARCHAR;
          pid, tid, id, args: JSON; ts, dur: DOUBLE})) TO 'out.parquet' (FORMAT parquet, COMPRESSION zstd)

which parses every event once and writes them, with no exact times, no typed fields, no tables beyond one and no
call tree: the least any ingest of these events must do. ``run_ingest.py --floor`` times it in the same run as the
ingest, alternating, and reports tracesql's CPU seconds as a ratio to it.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FLOOR_SQL = """COPY (SELECT * FROM read_json('{src}', format = 'newline_delimited', maximum_object_size = 100000000,
  columns = {{ph: 'VARCHAR', cat: 'VARCHAR', name: 'VARCHAR', pid: 'JSON', tid: 'JSON', ts: 'DOUBLE', dur: 'DOUBLE',
             id: 'JSON', args: 'JSON'}})) TO '{out}' (FORMAT parquet, COMPRESSION zstd)"""


def ndjson_path(trace: Path) -> Path:
    name = trace.name
    for suffix in (".gz", ".json"):
        name = name.removesuffix(suffix)
    return trace.with_name(name + ".ndjson")


def ensure_ndjson(trace: Path) -> Path:
    """The trace's events as newline-delimited JSON (written once, streamed chunk by chunk)."""
    out = ndjson_path(trace)
    if out.is_file() and out.stat().st_mtime >= trace.stat().st_mtime:
        return out
    from tracesql.ingest.jsonstream import ByteSource, TraceSplitter

    tmp = out.with_name(out.name + ".tmp")
    n = 0
    with open(tmp, "wb") as f:
        for chunk in TraceSplitter(ByteSource(str(trace)), chunk_size=32 << 20).chunks():
            events = orjson.loads(b"[" + chunk.data + b"]")
            f.write(b"\n".join(orjson.dumps(e) for e in events) + b"\n")
            n += len(events)
    os.replace(tmp, out)
    print(f"wrote {out} ({n:,} events)", file=sys.stderr)
    return out


def run_floor(ndjson: Path) -> int:
    """The floor itself (runs in the measured child process)."""
    import duckdb

    with tempfile.TemporaryDirectory(prefix="floor-") as d:
        con = duckdb.connect()
        con.execute("SET threads = 2")
        row = con.execute(FLOOR_SQL.format(src=ndjson, out=os.path.join(d, "out.parquet"))).fetchone()
        con.close()
    assert row is not None
    return int(row[0])


def floor_command(ndjson: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--run", str(ndjson)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--run", action="store_true", help="TRACE is the NDJSON file: run the floor in this process")
    a = ap.parse_args(argv)
    if a.run:
        print(f"FLOOR_ROWS {run_floor(a.trace)}")
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run_ingest import measure

    nd = ensure_ndjson(a.trace)
    r = measure(floor_command(nd))
    print(f"floor: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU, peak RSS {r['maxrss_kb'] / 1024:.0f} MiB; "
          + r["output"].strip())
    return r["rc"]


if __name__ == "__main__":
    sys.exit(main())
