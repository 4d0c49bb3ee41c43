"""Settings of every DuckDB connection tracesql opens for queries, and where it keeps what it can rebuild."""
from __future__ import annotations

import os
import time
from pathlib import Path

import duckdb

# DuckDB plans an ASOF join whose left side it estimates at a few rows as a nested loop and a grouping
# (asof_loop_join_threshold, 64 rows by default); the call tree's ASOF joins read views whose row counts it
# cannot estimate (window outputs), and with duckdb 2.0.1 such a plan of _tree_parents took minutes instead of a
# second on the shared traces. Every connection that queries the SQL library keeps the ASOF join.
ASOF_AS_JOIN = "SET asof_loop_join_threshold = 0"


def cache_dir() -> Path:
    """Where tracesql keeps files it can rebuild at any time: $TRACESQL_CACHE_DIR, else $XDG_CACHE_HOME/tracesql,
    else ~/.cache/tracesql."""
    if os.environ.get("TRACESQL_CACHE_DIR"):
        return Path(os.environ["TRACESQL_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tracesql"


# The share of the machine's memory a query connection may use by default (DuckDB's own default is 80 %, which
# leaves too little for the Python process and polars frames beside it); $TRACESQL_MEMORY_LIMIT or the
# ``memory_limit`` argument of tracesql.open overrides it with a DuckDB size ('4GB', '512MiB').
MEMORY_SHARE = 0.6


def default_memory_limit() -> str:
    """$TRACESQL_MEMORY_LIMIT, else MEMORY_SHARE of the machine's physical memory (in MiB)."""
    env = os.environ.get("TRACESQL_MEMORY_LIMIT", "").strip()
    if env:
        return env
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "4GB"
    return f"{max(256, int(total * MEMORY_SHARE) >> 20)}MiB"


def spill_dir() -> Path:
    """Where query connections spill what does not fit in their memory limit: cache_dir()/spill (DuckDB
    removes its files when the connection closes), or the system's temporary folder when that cannot be made."""
    d = cache_dir() / "spill"
    try:
        d.mkdir(parents=True, exist_ok=True)
        return d
    except OSError:
        import tempfile

        return Path(tempfile.gettempdir())


def configure(con, memory_limit: str | None = None, threads: int | None = None, spill: bool = True) -> None:
    """Settings of every connection tracesql opens for queries: no progress bar (it would go into the output),
    a memory limit and a spill directory, Parquet footers cached, and ASOF joins kept as joins."""
    con.execute("SET enable_progress_bar = false")
    con.execute("SET memory_limit = ?", [memory_limit or default_memory_limit()])
    if spill:
        con.execute("SET temp_directory = ?", [str(spill_dir())])
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    con.execute("SET parquet_metadata_cache = true")
    con.execute(ASOF_AS_JOIN)


def close_connection(con: duckdb.DuckDBPyConnection, wait_s: float = 10.0) -> None:
    """Close ``con``. DuckDB refuses to close a connection while a call on it is still running (a query that a
    Ctrl-C is stopping, or one in another thread): then the query is interrupted and the close tried again until
    it succeeds, for at most ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            con.close()
            return
        except duckdb.ResourceInUseException:
            if time.monotonic() > deadline:
                raise
            con.interrupt()
            time.sleep(0.01)
