#!/usr/bin/env python3
"""Where the CPU time of one ingest goes, by stage and by statement kind.

    python benchmarks/ingest_profile.py benchmarks/data/qwen_1g.json [--top 15]
    python benchmarks/ingest_profile.py benchmarks/data/small_100 [--top 15]   # a folder: one run of its files

Runs ``tracesql.ingest`` in this process into a temporary dataset and measures CPU seconds (all threads of the
process, ``time.process_time``; per statement, the calling thread's ``time.thread_time`` — the workers' DuckDB
connections use one thread each, so a statement's work happens in the thread that runs it):

- the whole ingest, the parse (splitting, hashing, the workers' reads and writes; for small files parsed in
  groups, reading each file and the group's statements), the finish (routing of events
  without a category, ``ingest_issues``, the traces row) and the derived-table build;
- in the workers: the chunk reads (``read_json`` into a temp table), the Parquet writes per table, the rest;
- in the main thread: reading, hashing and splitting the text;
- the build's statements, slowest first (CPU of all threads: nothing else runs then).
"""
from __future__ import annotations

import argparse
import collections
import importlib
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

parse_mod = importlib.import_module("tracesql.ingest.parse")
derive_mod = importlib.import_module("tracesql.ingest.derive")
ingest_mod = importlib.import_module("tracesql.ingest")

_lock = threading.Lock()
stmt_cpu: collections.Counter = collections.Counter()
stmt_n: collections.Counter = collections.Counter()


def kind_of(sql: str) -> str:
    s = " ".join(sql.split())
    m = re.search(r"TO '[^']*/([a-z_]+)/(?:part|\.part)-", s)
    if s.startswith("COPY") and m:
        return f"write {m.group(1)}"
    m = re.search(r"TO '[^']*/([a-z_]+)' \(FORMAT parquet[^)]*PARTITION_BY", s)
    if s.startswith("COPY") and m:
        return f"write {m.group(1)} (one file per trace)"
    if "read_json(" in s:
        return "read chunk (read_json)"
    m = re.match(r"CREATE (?:OR REPLACE )?TEMP TABLE (\w+)", s)
    if m:
        return f"temp table {m.group(1)}"
    m = re.match(r"INSERT INTO (\w+)", s)
    if m:
        return f"insert {m.group(1)}"
    return s[:60]


class Timed:
    """A connection whose statements are timed in CPU seconds of the calling thread."""

    def __init__(self, con, scope: str):
        self._con, self._scope = con, scope

    def execute(self, sql, *args):
        # the build and the finish run alone: all threads' CPU; a parse worker: its own thread's
        clock = time.thread_time if self._scope == "parse" else time.process_time
        c0 = clock()
        r = self._con.execute(sql, *args)
        dt = clock() - c0
        k = (self._scope, kind_of(sql))
        with _lock:
            stmt_cpu[k] += dt
            stmt_n[k] += 1
        return r

    def __getattr__(self, name):
        return getattr(self._con, name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args(argv)

    stage_cpu: collections.Counter = collections.Counter()
    orig_con = parse_mod.Workers.con
    parse_mod.Workers.con = lambda self: Timed(orig_con(self), "parse")  # type: ignore[method-assign]
    orig_connect = duckdb.connect
    derive_mod.duckdb = type("D", (), {"connect": staticmethod(lambda *a, **k: Timed(orig_connect(*a, **k), "build")),
                                       "DuckDBPyConnection": duckdb.DuckDBPyConnection, "Error": duckdb.Error,
                                       "__version__": duckdb.__version__})
    ingest_mod.duckdb = type("D", (), {"connect": staticmethod(lambda *a, **k: Timed(orig_connect(*a, **k), "finish")),
                                       "DuckDBPyConnection": duckdb.DuckDBPyConnection, "Error": duckdb.Error})
    main_thread = {"cpu": 0.0}
    orig_run = parse_mod.TraceParser.run

    def run(self):
        p0, t0 = time.process_time(), time.thread_time()
        try:
            return orig_run(self)
        finally:
            stage_cpu["parse"] += time.process_time() - p0
            main_thread["cpu"] += time.thread_time() - t0

    parse_mod.TraceParser.run = run  # type: ignore[method-assign]
    group_mod = importlib.import_module("tracesql.ingest.parse_group")
    orig_add, orig_parse = group_mod.Group.add, group_mod.Group.parse

    def add(self, *args):  # reading a small file whole, in the main thread
        p0, t0 = time.process_time(), time.thread_time()
        try:
            return orig_add(self, *args)
        finally:
            stage_cpu["parse"] += time.process_time() - p0
            main_thread["cpu"] += time.thread_time() - t0

    def parse(self, *args):  # the group's statements (timed as the workers' are)
        p0 = time.process_time()
        try:
            return orig_parse(self, *args)
        finally:
            stage_cpu["parse"] += time.process_time() - p0

    group_mod.Group.add = add  # type: ignore[method-assign]
    group_mod.Group.parse = parse  # type: ignore[method-assign]
    orig_build = ingest_mod.build_derived  # the name the ingest calls (tracesql/ingest/__init__.py)

    def build(*args, **kw):
        p0 = time.process_time()
        try:
            return orig_build(*args, **kw)
        finally:
            stage_cpu["build"] += time.process_time() - p0

    ingest_mod.build_derived = build
    with tempfile.TemporaryDirectory(prefix="profile-") as d:
        p0, w0 = time.process_time(), time.perf_counter()
        res = ingest_mod.ingest(str(a.trace), out=Path(d) / "ds")
        total, wall = time.process_time() - p0, time.perf_counter() - w0
    bad = [r for r in res if r.status != "ingested"]
    if bad:
        print(bad[0].summary_line(), file=sys.stderr)
        return 1
    files = f"{len(res)} files, " if len(res) > 1 else ""
    print(f"{a.trace.name}: {files}{sum(r.events_read for r in res):,} events; CPU {total:.2f} s (wall {wall:.2f} s)")
    print(f"  parse {stage_cpu['parse']:.2f} s, of which main thread (read, hash, split, orchestration) "
          f"{main_thread['cpu']:.2f} s")
    parse_stmt = sum(v for (s, _), v in stmt_cpu.items() if s == "parse")
    print(f"    worker and group statements {parse_stmt:.2f} s; the rest (chunk files, Python in workers, idle spin) "
          f"{stage_cpu['parse'] - main_thread['cpu'] - parse_stmt:.2f} s")
    for (s, k), v in sorted(stmt_cpu.items(), key=lambda kv: -kv[1]):
        if s == "parse" and v >= 0.05:
            print(f"      {v:6.2f} s  {stmt_n[(s, k)]:4d}×  {k}")
    finish = total - stage_cpu["parse"] - stage_cpu["build"]
    print(f"  finish (without the build) and the rest {finish:.2f} s")
    print(f"  build {stage_cpu['build']:.2f} s; statements:")
    rows = sorted(((v, k) for (s, k), v in stmt_cpu.items() if s == "build"), reverse=True)
    for v, k in rows[:a.top]:
        print(f"      {v:6.2f} s  {stmt_n[('build', k)]:4d}×  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
