"""The last step of one file once all its chunks are written: the tables that need the whole file.

``prepare`` routes the complete events without a category (GPU activity on a ``/device:`` process, else CPU
events), writes an empty part for each event table without rows and the ``ingest_issues`` table (the parse's issues
and the events kept as written although odd); the ingest then builds the derived tables (derive.py, several traces
at once), and ``complete`` writes the ``traces`` row and returns what was computed as a ``FinishedTrace``.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import orjson

from tracesql.escape import glob_escape, path_text, sql_path, sql_str
from tracesql.ingest.extract import copy_table, write_empty_part
from tracesql.ingest.parse import ParsedTrace
from tracesql.store.schema import EVENT_TABLES, columns
from tracesql.version import __version__


@dataclass(frozen=True)
class PreparedTrace:
    """What ``prepare`` found: rows per table, skipped and noted issues by kind."""

    counts: dict[str, int]  # rows per table (EVENT_TABLES and launches)
    skipped: dict[str, int]  # skipped events by kind (without the 'skipped_' prefix)
    noted: dict[str, int]  # ingest_issues rows that are not skipped events, by kind
    jax: bool  # a JAX trace (no categories, /device: processes)


@dataclass(frozen=True)
class FinishedTrace:
    """The ``traces`` row of a staged trace and its summary."""

    row: dict[str, Any]  # the traces row, with trace_id
    counts: dict[str, int]  # rows per table (EVENT_TABLES and launches)
    skipped: dict[str, int]  # skipped events by kind (without the 'skipped_' prefix)
    noted: dict[str, int]  # ingest_issues rows that are not skipped events, by kind
    unlinked: int  # GPU events without a launch call (gpu_launch_links.linked = false)


def _rank_from_name(name: str) -> int | None:
    m = re.search(r"rank[-_]?(\d{1,9})(?!\d)", name, re.IGNORECASE)
    return int(m.group(1)) if m else None


def _int(v: object, bits: int = 32) -> int | None:
    """An integer header value, or None when it is not one or does not fit the column (INTEGER by default)."""
    try:
        i = int(v)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return None
    return i if -(1 << (bits - 1)) <= i < (1 << (bits - 1)) else None


def _kept_issues(con: duckdb.DuckDBPyConnection, out: Path) -> None:
    """Events kept as written although odd, found by one SQL scan over the written parts: negative dur, a complete
    event without dur, a pid/tid that is a JSON object or list. One row each in the temp table issues."""
    nonscalar = "(starts_with({c}, '{{') OR starts_with({c}, '[')) AND json_valid({c})"
    files = [glob_escape(out / t) + "/*.parquet" for t in EVENT_TABLES]
    # kernels and gpu_user_annotations hold complete events only (no ph column); tables without dur read NULL
    con.execute(f"""CREATE OR REPLACE TEMP TABLE kept AS
        SELECT event_id, dur_ns, pid, tid, missing FROM (
          SELECT *, dur_ns IS NULL AND (ph = 'X' OR regexp_extract(filename, '([a-z_]+)/[^/]*$', 1)
                                        IN ('kernels', 'gpu_user_annotations')) AS missing
          FROM read_parquet(?, union_by_name = true, filename = true))
        WHERE dur_ns < 0 OR missing OR {nonscalar.format(c="pid")} OR {nonscalar.format(c="tid")}""", [files])
    con.execute(f"""INSERT INTO issues
        SELECT event_id, NULL, 'kept_negative_duration', 'dur ' || dur_ns || ' ns is negative; kept as written'
          FROM kept WHERE dur_ns < 0
        UNION ALL SELECT event_id, NULL, 'kept_missing_duration',
               'complete event (ph X) without dur; kept with dur_ns NULL' FROM kept WHERE missing
        UNION ALL SELECT event_id, NULL, 'kept_nonscalar_pid',
               'pid is a JSON ' || lower(json_type(pid)) || '; kept as its JSON text'
          FROM kept WHERE {nonscalar.format(c="pid")}
        UNION ALL SELECT event_id, NULL, 'kept_nonscalar_tid',
               'tid is a JSON ' || lower(json_type(tid)) || '; kept as its JSON text'
          FROM kept WHERE {nonscalar.format(c="tid")}""")


# JAX host events (no category): launch APIs, Python frames ('$file:line fn') and TraceMe annotations.
_JAX_HOST_CAT = """CASE WHEN regexp_matches(name, '^(cuda|cu|hip)[A-Z]') THEN 'cuda_runtime'
  WHEN starts_with(name, '$') THEN 'python_function' ELSE 'user_annotation' END"""


def rules_dir(parsed: ParsedTrace) -> Path:
    """The dataset's user rule files (DATASET/rules/) of a trace staged in DATASET/.staging/<name>."""
    return parsed.staging.parent.parent / "rules"


def prepare(con: duckdb.DuckDBPyConnection, parsed: ParsedTrace) -> PreparedTrace:
    """Everything of the trace's completion before the derived tables (which the ingest builds, in batches, between
    prepare and complete): the routing of events without a category, empty
    parts, ``ingest_issues``."""
    out = parsed.out
    counts = dict(parsed.counts)
    con.execute("CREATE OR REPLACE TEMP TABLE device_pids (pid VARCHAR, device INTEGER)")
    if parsed.device_pids:
        con.executemany("INSERT INTO device_pids VALUES (?, ?)", [list(kv) for kv in parsed.device_pids.items()])
    jax = parsed.x_with_cat == 0 and bool(parsed.device_pids)
    if parsed.pending_parts:
        # Complete events without a category: on a /device: process they are GPU activity, else CPU events.
        files = "[" + ", ".join(sql_path(p) for p in sorted(parsed.pending_parts)) + "]"
        host_cat = _JAX_HOST_CAT if jax else "NULL"
        con.execute(f"""CREATE OR REPLACE TEMP VIEW p AS
            SELECT * EXCLUDE (cat, route),
              CASE WHEN pid IN (SELECT pid FROM device_pids) THEN CASE
                     WHEN json_extract_string(args, '$.memcpy_details') IS NOT NULL OR name ILIKE '%memcpy%'
                       THEN 'gpu_memcpy'
                     WHEN name ILIKE '%memset%' THEN 'gpu_memset' ELSE 'kernel' END
                   ELSE {host_cat} END AS cat,
              CASE WHEN pid IN (SELECT pid FROM device_pids) THEN 'kernels' ELSE 'events' END AS route
            FROM read_parquet({files})""")
        last = 99999
        for route in ("kernels", "events"):
            counts[route] += copy_table(con, out, route, f"(SELECT * FROM p WHERE route = '{route}')", last)
        counts["launches"] += copy_table(con, out, "launches", "(SELECT * FROM p WHERE route = 'events')", last)
    for table in [*EVENT_TABLES, "launches"]:
        d = out / table
        if not d.exists() or not any(d.iterdir()):
            d.mkdir(exist_ok=True)
            write_empty_part(con, table, d / "part-00000.parquet")
    # ingest_issues
    con.execute("CREATE OR REPLACE TEMP TABLE issues (event_id BIGINT, byte_offset BIGINT, kind VARCHAR, "
                "detail VARCHAR)")
    if parsed.issues:
        con.executemany("INSERT INTO issues VALUES (?, ?, ?, ?)", [list(i) for i in parsed.issues])
    if parsed.odd_rows:
        _kept_issues(con, out)
    (out / "ingest_issues").mkdir()
    con.execute(f"COPY (SELECT * FROM issues ORDER BY event_id NULLS FIRST, kind, byte_offset) TO "
                f"{sql_str(str(out / 'ingest_issues' / 'part-00000.parquet'))} (FORMAT parquet)")
    skipped: dict[str, int] = {}
    noted: dict[str, int] = {}
    for kind, n in con.execute("SELECT kind, count(*) FROM issues GROUP BY kind ORDER BY kind").fetchall():
        if kind.startswith("skipped_"):
            skipped[kind[len("skipped_"):]] = n
        else:
            noted[kind] = n
    counts = {t: counts[t] for t in [*EVENT_TABLES, "launches"]}
    return PreparedTrace(counts=counts, skipped=skipped, noted=noted, jax=jax)


def complete(con: duckdb.DuckDBPyConnection, parsed: ParsedTrace, pre: PreparedTrace, out: Path,
             started: float) -> FinishedTrace:
    """Everything of ``finalize`` after the derived tables (in ``out``): the ``traces`` row."""
    h = parsed.splitter.header
    src = parsed.source
    counts, skipped, noted, jax = pre.counts, pre.skipped, pre.noted, pre.jax
    events_read = sum(counts[t] for t in EVENT_TABLES) + sum(skipped.values())
    # GPU events without a launch call in this trace (e.g. warm-up kernels launched before the CPU window), as
    # the stored gpu_launch_links says (linked = false), so the summary equals gpu_link_summary.unlinked_events.
    unlinked = con.execute(f"""SELECT count(*) FILTER (WHERE NOT linked)
        FROM read_parquet({sql_path(out / "gpu_launch_links", "/*.parquet")})""").fetchall()[0][0]

    # traces row
    dist_info = h.get("distributedInfo")
    dist: dict[str, Any] = dist_info if isinstance(dist_info, dict) else {}
    rank: int | None = _int(dist.get("rank"))
    rank_source: str | None = "distributedInfo"
    if rank is None:
        rank, rank_source = _rank_from_name(os.path.basename(parsed.path)), "file_name"
        if rank is None:
            rank_source = None
    devs = h.get("deviceProperties") if isinstance(h.get("deviceProperties"), list) else None
    flags = {k: h[k] for k in ("record_shapes", "with_stack", "profile_memory", "with_flops", "with_modules",
                               "cuda_runtime_version", "cuda_driver_version", "cupti_version",
                               "hip_runtime_version", "hip_driver_version", "roctracer_version") if k in h}
    fmt = "jax" if jax else ("kineto" if ("schemaVersion" in h or "deviceProperties" in h or
                                          counts["kernels"] or counts["events"] and not jax) else "chrome")
    content_hash = src.content_hash
    row = {
        "trace_id": content_hash[:16],
        "source_path": path_text(os.path.abspath(parsed.path)),  # a name that is not UTF-8: its bytes as \xNN
        "file_name": path_text(os.path.basename(parsed.path)),
        "content_hash": content_hash,
        "size_bytes": src.raw_bytes,  # what was read and hashed (a file still being written may have grown)
        "json_bytes": src.json_bytes,
        "compressed": src.compressed,
        "format": fmt,
        "rank": rank,
        "rank_source": rank_source,
        "world_size": _int(dist.get("world_size")),
        "distributed_backend": dist.get("backend") if isinstance(dist.get("backend"), str) else None,
        "base_time_ns": _int(h.get("baseTimeNanoseconds"), 64),
        "schema_version": _int(h.get("schemaVersion")),
        "trace_name": h.get("traceName") if isinstance(h.get("traceName"), str) else None,
        "display_time_unit": h.get("displayTimeUnit") if isinstance(h.get("displayTimeUnit"), str) else None,
        "device_count": len(devs) if devs is not None else None,
        "device_properties": orjson.dumps(devs).decode() if devs is not None else None,
        "distributed_info": orjson.dumps(dist).decode() if dist else None,
        "profiler_flags": orjson.dumps(flags).decode(),
        "header": orjson.dumps(h, option=orjson.OPT_SERIALIZE_NUMPY).decode(),
        "events_read": events_read,
        "events_skipped": sum(skipped.values()),
        "gpu_events_unlinked": unlinked,
        "row_counts": orjson.dumps(counts).decode(),
        "truncated": parsed.splitter.truncated,
        "exact_ts_text": parsed.exact_text,
        "ingested_at": _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None),
        "ingest_seconds": time.time() - started,
        "tracesql_version": __version__,
    }
    cols = [("trace_id", "VARCHAR")] + [(c, t) for c, t, _ in columns("traces")]
    placeholders = ", ".join(f"CAST(? AS {t}) AS \"{c}\"" for c, t in cols if c != "trace_id")
    values = [row[c] for c, _ in cols if c != "trace_id"]
    (out / "traces").mkdir()
    con.execute(f"COPY (SELECT {placeholders}) TO {sql_str(str(out / 'traces' / 'part-00000.parquet'))} "
                "(FORMAT parquet)", values)
    return FinishedTrace(row=row, counts=counts, skipped=skipped, noted=noted, unlinked=unlinked)
