"""Streaming ingest of trace files into a dataset of Parquet tables.

Pipeline for one file (memory stays flat whatever the file size):

1. ``TraceSplitter`` streams the decompressed JSON text and cuts ``traceEvents`` into chunks of whole events.
2. Two worker threads each give a chunk to DuckDB's JSON reader (``read_json`` with an explicit column list)
   and write the parsed rows as a raw Parquet unit in a private staging directory.
   ``ts``/``dur`` are converted to int64 ns: from the parsed double when that is exact (fewer than 14 integer
   digits), otherwise from the decimal text (the chunk's ``"ts": 1712195495519689.047`` values are quoted
   first and cast through DECIMAL). A chunk is first read as it is, with ``ts``/``dur`` as JSON values
   (the probe): when every one is a plain number and every ``ts`` is below 10^13 µs, that read is the result,
   with no scan of the text in Python; otherwise the chunk is scanned and read again on the exact or the
   careful path, and so is the rest of the file.
3. When the file is done, one SQL pass per table routes the raw rows into the final tables (``schema.py``),
   normalising categories and extracting typed args columns.
4. The staging directory is renamed to ``traces/trace_id=<id>`` in one atomic step; the trace id is derived
   from the content hash, so a file that is already in the dataset is detected and not added twice.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import orjson

from . import __version__
from .errors import DatasetError, TraceError
from .jsonstream import ByteSource, EventChunk, TraceSplitter, content_hasher, exact_spans, is_gzip
from .progress import Progress
from .schema import DERIVED_TABLES, EVENT_TABLES, TABLES, columns, empty_select

TRACE_SUFFIXES = (".json", ".json.gz", ".gz")

# ts values with 14+ integer digits and a fraction (or 16+ digits) are not exact as doubles at ns precision.
_NEEDS_EXACT = re.compile(rb'"ts"\s*:\s*-?(?:\d{14,}\.|\d{16})')
_QUOTE_TIME = re.compile(rb'("(?:ts|dur)"\s*:\s*)(-?[0-9][0-9.eE+-]*)')
# A ts/dur whose value is not a plain JSON number: a string, true/false, null, NaN, Infinity, an object or a list.
# One scan per chunk finds the first ts that needs exact text (group 1) or is odd; dur is checked by a second.
# Both have a literal prefix, which keeps them fast; an odd value sends the chunk down the careful path.
_TS_SCAN = re.compile(rb'"ts"\s*:\s*(?:(-?(?:\d{14,}\.|\d{16}))|[^-0-9\s]|-[^0-9])')
_TS_ODD = re.compile(rb'"ts"\s*:\s*(?:[^-0-9\s]|-[^0-9])')
_DUR_ODD = re.compile(rb'"dur"\s*:\s*(?:[^-0-9\s]|-[^0-9])')
# Careful path: a ts/dur given as a JSON string is read through a renamed key, so that SQL can tell it from a number
# (which is quoted by _QUOTE_TIME to keep its exact text).
_STR_KEY = "__tracesql_str_"
_STR_TIME = re.compile(rb'"(ts|dur)"(\s*:\s*")')

_EXTRA_KEYS = ["tts", "tdur", "id", "id2", "bp", "s", "cname", "scope", "bind_id", "flow_in", "flow_out", "sf",
               "stack"]


def _read_columns(exact: bool, odd: bool = False, probe: bool = False) -> str:
    t = "JSON" if probe else "VARCHAR" if exact or odd else "DOUBLE"
    # pid/tid as VARCHAR: numbers come as their text, strings unquoted.
    cols = {"ph": "VARCHAR", "cat": "VARCHAR", "name": "VARCHAR", "pid": "VARCHAR", "tid": "VARCHAR", "ts": t, "dur": t,
            "args": "JSON"}
    if odd:
        cols[_STR_KEY + "ts"] = cols[_STR_KEY + "dur"] = "VARCHAR"
    for k in _EXTRA_KEYS:  # VARCHAR is much cheaper to read than JSON; values are re-typed in _extra_json
        cols[k] = "VARCHAR"
    return "{" + ", ".join(f"'{k}': '{v}'" for k, v in cols.items()) + "}"


def _odd_time(col: str) -> tuple[str, str, str]:
    """Careful path: col holds a number's exact text (quoted by _QUOTE_TIME) or a literal (true, NaN, {...}) as
    text; the renamed key holds the value of a JSON string. Returns (renamed column, text, its DECIMAL value)."""
    s = f'"{_STR_KEY}{col}"'
    txt = f"coalesce({col}, trim({s}))"
    return s, txt, f"TRY_CAST({txt} AS DECIMAL(38,9))"


def _bad_time_expr(odd: bool, probe: bool = False) -> str:
    """Careful path: why the ts or dur of a row is not a finite number in range (the event is malformed), else NULL.
    Such rows are taken out of the chunk and recorded, without failing the chunk.
    Probe: 'probe' where the value would have sent the chunk to the exact or the careful path (a ts/dur that
    is not a finite JSON number, a ts of 10^13 µs or more), else NULL."""
    if probe:  # the JSON text of a number starts with a digit or '-' (NaN and infinities are caught by the range)
        checks = []
        for col, limit in (("ts", "abs(TRY_CAST(ts AS DOUBLE)) < 1e13"), ("dur", "isfinite(TRY_CAST(dur AS DOUBLE))")):
            checks.append(f"({col} IS NOT NULL AND NOT coalesce((ascii({col}::VARCHAR) BETWEEN 48 AND 57 "
                          f"OR ascii({col}::VARCHAR) = 45) AND {limit}, false))")
        return f"CASE WHEN {' OR '.join(checks)} THEN 'probe' END"
    if not odd:
        return "NULL::VARCHAR"
    reasons = []
    for col in ("ts", "dur"):
        s, txt, dec = _odd_time(col)
        reasons.append(f"""CASE WHEN {col} IS NULL AND {s} IS NULL THEN NULL
            WHEN {col} IS NOT NULL AND {s} IS NOT NULL THEN 'duplicate key "{col}"'
            WHEN abs({dec}) < 9223372036854775 THEN NULL
            WHEN {dec} IS NOT NULL THEN '{col} out of range: ' || left({txt}, 40)
            ELSE '{col} is not a number: ' || left(CASE WHEN {s} IS NULL THEN {col} ELSE '"' || {s} || '"' END, 40)
            END""")
    return f"nullif(concat_ws('; ', {', '.join(reasons)}), '')"


def _time_expr(col: str, exact: bool, odd: bool = False, probe: bool = False) -> str:
    if probe:
        col = f"TRY_CAST({col} AS DOUBLE)"
    if odd:  # NULL when the value is bad (see _bad_time_expr)
        s, txt, dec = _odd_time(col)
        return f"""(CASE WHEN {col} IS NOT NULL AND {s} IS NOT NULL THEN NULL
            WHEN abs({dec}) < 9223372036854775 THEN CAST(round({dec} * 1000) AS BIGINT) END)"""
    if exact:
        return f"CAST(round(CAST({col} AS DECIMAL(38,9)) * 1000) AS BIGINT)"
    # floor() is exact for doubles; the fraction has < 0.5 ns error below 2^43 µs.
    return f"(CAST(floor({col}) AS BIGINT) * 1000 + CAST(round(({col} - floor({col})) * 1000) AS BIGINT))"


def _time_repair_expr(odd: bool) -> str:
    """Text naming the ts/dur values that were JSON strings (careful path), else NULL."""
    if not odd:
        return "NULL::VARCHAR"
    return (f"""nullif(concat_ws(', ', 'ts "' || "{_STR_KEY}ts" || '"', 'dur "' || "{_STR_KEY}dur" || '"'), '')""")


def _args_expr(odd: bool) -> str:
    """args as written: on the careful path, keys renamed by _STR_TIME inside args are renamed back."""
    if not odd:
        return "args"
    return (f"""CASE WHEN contains(args::VARCHAR, '"{_STR_KEY}') THEN replace(replace(args::VARCHAR,
                '"{_STR_KEY}ts"', '"ts"'), '"{_STR_KEY}dur"', '"dur"')::JSON ELSE args END""")


def _event_error(msg: str) -> str:
    """DuckDB's error for one event, without what only makes sense for the temporary chunk file."""
    msg = re.sub(r' in file "[^"]*",?', "", msg).replace("Invalid Input Error: ", "")
    msg = re.sub(r",? in record/value \d+", "", msg).strip()
    msg = re.sub(r"^Malformed JSON(?: at byte \d+)?: ", "", msg).rstrip(". ")
    return re.sub(r"^Conversion Error: Type DOUBLE with value (\S+) can't be cast because the value is out of range "
                  r"for the destination type INT64", r"ts or dur out of range: \1", msg)


_GPU_CATS = "('kernel', 'gpu_memcpy', 'gpu_memset', 'cuda_sync')"

# Category as written -> normalised category (PyTorch 1.8 names); other categories are kept as they are.
_CAT_NORM = """CASE cat WHEN 'Operator' THEN 'cpu_op' WHEN 'Runtime' THEN 'cuda_runtime' WHEN 'Kernel' THEN 'kernel'
  WHEN 'Memcpy' THEN 'gpu_memcpy' WHEN 'Memset' THEN 'gpu_memset' ELSE cat END"""

# Which table a row goes to (``cat`` here is the normalised category). Complete events without a category
# ('x_nocat': JAX and other non-Kineto writers) are resolved when the whole file has been read, because that
# needs the process names.
_ROUTE = f"""CASE
  WHEN ph = 'X' AND cat IN {_GPU_CATS} THEN 'kernels'
  WHEN ph = 'X' AND cat = 'gpu_user_annotation' THEN 'gpu_user_annotations'
  WHEN ph = 'X' AND cat IS NULL THEN 'x_nocat'
  WHEN ph IN ('X', 'B', 'E') THEN 'events'
  WHEN ph IN ('s', 'f', 't') THEN 'correlations'
  WHEN ph IN ('i', 'I') THEN 'instants'
  WHEN ph = 'M' THEN 'metadata'
  WHEN ph = 'C' THEN 'counters'
  WHEN ph IS NULL AND name IS NULL AND cat IS NULL AND pid IS NULL AND tid IS NULL AND ts_ns IS NULL
       AND args IS NULL AND {' AND '.join(f'"{k}" IS NULL' for k in _EXTRA_KEYS)} THEN 'empty'
  ELSE 'other_events'
END"""


def _chunk_select(json_path: str, exact: bool, ord_offset: int, odd: bool = False, probe: bool = False) -> str:
    """Rows of one chunk file: raw fields, ns times, normalised category and target table (probe: see
    _bad_time_expr)."""
    extra = ", ".join(f'"{k}"' for k in _EXTRA_KEYS)
    return f"""
  SELECT *, {_ROUTE} AS route FROM (
    SELECT (ordinality + {ord_offset})::BIGINT AS ord, ph, cat AS cat_raw, {_CAT_NORM} AS cat, name, pid, tid,
           {_time_expr('ts', exact, odd, probe)} AS ts_ns, {_time_expr('dur', exact, odd, probe)} AS dur_ns,
           {_args_expr(odd)} AS args, {extra}, {_time_repair_expr(odd)} AS time_repair,
           {_bad_time_expr(odd, probe)} AS bad_time
    FROM read_json('{json_path}', format = 'array', columns = {_read_columns(exact, odd, probe)},
                   maximum_object_size = 67108864) WITH ORDINALITY)"""


@dataclass
class IngestResult:
    path: str
    trace_id: str | None = None
    status: str = "ingested"  # ingested | duplicate | failed
    error: str | None = None
    row_counts: dict = field(default_factory=dict)
    events_read: int = 0
    skipped: dict = field(default_factory=dict)
    json_bytes: int = 0
    seconds: float = 0.0
    truncated: bool = False
    rank: int | None = None
    noted: dict = field(default_factory=dict)  # ingest_issues rows that are not skipped events, by kind
    unlinked: int = 0  # GPU events without a launch call (gpu_launch_links.linked = false)

    def summary_line(self) -> str:
        if self.status == "failed":
            return f"tracesql: error: {self.error}"
        name = os.path.basename(self.path)
        if self.status == "duplicate":
            return f"{name}: already in the dataset as trace {self.trace_id} (same content hash); skipped"
        rc = ", ".join(f"{k} {v:,}" for k, v in self.row_counts.items() if v) or "no rows"
        sk = sum(self.skipped.values())
        skipped = "0 skipped" if not sk else f"{sk:,} skipped (" + ", ".join(
            f"{k}: {v:,}" for k, v in self.skipped.items()) + ")"
        mbs = self.json_bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0
        trunc = "; TRUNCATED file salvaged" if self.truncated else ""
        rank = f" rank {self.rank}" if self.rank is not None else ""
        noted = ""
        if self.noted:
            noted = "; noted in ingest_issues: " + ", ".join(f"{k} {v:,}" for k, v in self.noted.items())
        unlinked = ""
        if self.row_counts.get("kernels"):
            unlinked = f"; GPU events without a launch: {self.unlinked:,}"
        return (f"{name} -> trace {self.trace_id}{rank}: {self.events_read:,} events read in {self.seconds:.2f} s "
                f"({mbs:.0f} MB/s); {rc}; {skipped}{noted}{unlinked}{trunc}")


def find_trace_files(paths: list[str]) -> list[str]:
    """Expand directories into the trace files inside them (recursively), sorted."""
    out: list[str] = []
    for p in paths:
        pp = Path(p)
        if pp.is_dir():
            for f in sorted(pp.rglob("*")):
                if f.is_file() and f.name.endswith(TRACE_SUFFIXES) and not f.name.startswith("."):
                    out.append(str(f))
        else:
            out.append(str(pp))
    return out


class _Workers:
    """Thread pool whose threads each own a DuckDB connection (one thread each)."""

    def __init__(self, n: int):
        self.local = threading.local()
        self.pool = ThreadPoolExecutor(max_workers=n)
        self.cons: list[duckdb.DuckDBPyConnection] = []
        self.lock = threading.Lock()
        # private to this process: concurrent ingests must not share DuckDB's spill files
        self.spill = os.path.join(tempfile.gettempdir(), f"tracesql-spill-{os.getpid()}-{uuid.uuid4().hex[:8]}")

    gen = 0  # bumped by release(): a thread's connection from an earlier generation is closed

    def con(self) -> duckdb.DuckDBPyConnection:
        c = getattr(self.local, "con", None)
        if c is None or self.local.gen != self.gen:
            c = duckdb.connect(config={"threads": 1, "memory_limit": "384MB", "preserve_insertion_order": True,
                                       "temp_directory": self.spill})
            c.execute("CREATE TEMP TABLE device_pids (pid VARCHAR, device INTEGER)")
            self.local.con, self.local.gen = c, self.gen
            with self.lock:
                self.cons.append(c)
        return c

    def release(self):
        """Close the workers' connections (between files, when no chunk is in flight), returning their memory
        before the next step of the ingest builds the derived tables; the next chunk opens new ones."""
        with self.lock:
            for c in self.cons:
                c.close()
            self.cons = []
            self.gen += 1

    def close(self):
        self.pool.shutdown(wait=True)
        for c in self.cons:
            c.close()
        shutil.rmtree(self.spill, ignore_errors=True)


class _Job:
    """One chunk on its way through a worker. ``next_base`` (index of the first element of the next chunk) is
    published as soon as this chunk is parsed, so the next worker can number its events while this one writes."""

    def __init__(self, index: int, chunk: EventChunk, prev: "_Job | None"):
        self.index = index
        self.chunk = chunk
        self.prev = prev
        self.next_base: int | None = None
        self.next_ready = threading.Event()


class _TraceIngest:
    """The per-file state: workers parse chunks into an in-memory table and write one Parquet part per table."""

    def __init__(self, path: str, staging: Path, salvage: bool, chunk_size: int, progress: Progress | None,
                 workers: _Workers):
        self.path = path
        self.staging = staging
        self.out = staging / "out"
        self.pending = staging / "pending"
        self.salvage = salvage
        self.chunk_size = chunk_size
        self.progress = progress
        self.workers = workers
        self.lock = threading.Lock()
        self.issues: list[tuple] = []  # (event_id, byte_offset, kind, detail)
        self.counts: dict[str, int] = {t: 0 for t in EVENT_TABLES + ["launches"]}
        self.empty = 0
        self.x_with_cat = 0  # complete events that have a category (0 in JAX traces)
        self.device_pids: dict[str, int | None] = {}
        self.pending_parts: list[str] = []
        self.elements = 0
        self.exact_any = False
        self.probe = True  # chunks are read by the probe first (see the module doc) until one needs more
        self.seq = 0  # for file names of chunk texts
        self.local = threading.local()  # per worker thread: odd (the chunk took the careful path)
        self.noted: dict[str, int] = {}  # issues that are not skipped events, by kind (set by _finalize)

    # -- parsing ----------------------------------------------------------------------------------
    def _chunk_file(self, pieces: list[bytes]) -> str:
        with self.lock:
            self.seq += 1
            jp = str(self.staging / f"chunk_{self.seq:06d}.json")
        with open(jp, "wb") as f:
            f.write(b"[")
            f.writelines(pieces)
            f.write(b"]")
        return jp

    def _load(self, con, data: bytes | EventChunk, ord_offset: int, create: bool) -> int:
        """Parse ``data`` (events joined by commas, or a whole chunk) into temp table c; returns the number of
        rows."""
        if create and self.probe:
            jp = self._chunk_file(data.pieces if isinstance(data, EventChunk) else [data])
            try:
                con.execute(f"CREATE OR REPLACE TEMP TABLE c AS {_chunk_select(jp, False, ord_offset, probe=True)}")
                n, suspect = con.execute("SELECT count(*), count(bad_time) FROM c").fetchone()
                if not suspect:
                    return n
            except duckdb.Error:
                pass  # read again below, where a bad event is found and reported
            finally:
                os.unlink(jp)
            self.probe = False
        if isinstance(data, EventChunk):
            data = data.data
        m = _TS_SCAN.search(data)
        if m is None:
            exact = False
            odd = _DUR_ODD.search(data) is not None
        elif m.group(1) is not None:  # no odd ts before this one
            exact = True
            odd = _TS_ODD.search(data, m.start()) is not None or _DUR_ODD.search(data) is not None
        else:  # no ts needing exact text before this one
            odd = True
            exact = _NEEDS_EXACT.search(data, m.start()) is not None
        if exact:
            self.exact_any = True
        if odd:  # first rename the keys of string values, then quote the numbers
            self.local.odd = True
            data = _STR_TIME.sub(b'"' + _STR_KEY.encode() + rb'\1"\2', data)
        if exact or odd:
            data = _QUOTE_TIME.sub(rb'\1"\2"', data)
        jp = self._chunk_file([data])
        try:
            sel = _chunk_select(jp, exact, ord_offset, odd)
            if create:
                con.execute(f"CREATE OR REPLACE TEMP TABLE c AS {sel}")
                return con.execute("SELECT count(*) FROM c").fetchone()[0]
            return con.execute(f"INSERT INTO c {sel}").fetchone()[0]
        finally:
            os.unlink(jp)

    def _load_exact(self, con, chunk: EventChunk, local_issues: list) -> int:
        """The fallback for a chunk DuckDB rejected: exact spans, and bisection down to any bad event."""
        if os.environ.get("TRACESQL_DEBUG"):
            print(f"tracesql: re-parsing the chunk at byte {chunk.offset} event by event", file=sys.stderr)
        self._load(con, b"{}", 0, create=True)  # the table with its schema
        con.execute("DELETE FROM c")
        scan = exact_spans(chunk.data)
        if scan.array_end is not None:
            if chunk.data[scan.array_end] == 0x7D:  # }
                raise TraceError(self.path, "malformed JSON: a '}' that closes nothing",
                                 offset=chunk.offset + scan.array_end)
            raise TraceError(self.path, "could not find the end of traceEvents (fields after it hold lists of "
                             "objects larger than 1 MB)", offset=chunk.offset + scan.array_end)
        items: list = [("span", sp.start, sp.end) for sp in scan.spans]
        items += [("garbage", off, txt) for off, txt in scan.garbage]
        items.sort(key=lambda it: it[1])
        if scan.incomplete_from is not None:
            raise TraceError(self.path, "malformed JSON: unbalanced brackets in an event",
                             offset=chunk.offset + scan.incomplete_from)
        # a missing or extra comma is repaired (with --salvage) and recorded; it belongs to no event
        local_issues.extend((None, chunk.offset + off, "repaired_separator", f"malformed JSON: {what}")
                            for off, what in scan.separators)
        run: list[tuple[int, int, int]] = []  # (local index, start, end)
        for i, it in enumerate(items):
            if it[0] == "garbage":
                self._load_spans(con, chunk, run, local_issues)
                run = []
                local_issues.append((i, chunk.offset + it[1], "skipped_malformed_event",
                                     "not an object: " + it[2][:40].decode("utf-8", "replace")))
            else:
                run.append((i, it[1], it[2]))
        self._load_spans(con, chunk, run, local_issues)
        return len(items)

    def _load_spans(self, con, chunk: EventChunk, spans: list, local_issues: list) -> None:
        """Load the events ``spans`` [(local index, start, end)] into table c, finding the bad ones: a JSON syntax
        error names the element it is in (its position is checked), other errors are found by bisection."""
        if not spans:
            return
        # ord numbers inside one run are consecutive: ordinality + (first index)
        data = b",".join(chunk.data[s:e] for _, s, e in spans)
        try:
            self._load(con, data, spans[0][0], create=False)
            return
        except duckdb.Error as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            if len(spans) == 1:
                local_issues.append((spans[0][0], chunk.offset + spans[0][1], "skipped_malformed_event",
                                     f"malformed event: {_event_error(first)}"))
                return
            m = re.search(r"Malformed JSON.* in record/value (\d+)", first)
            k = int(m.group(1)) - 2 if m else -1  # the array's `[` is value 1
            if 0 <= k < len(spans):
                # the events before the bad one load in one go; the bad one alone fails (else it was not it)
                self._load_spans(con, chunk, spans[:k], local_issues)
                self._load_spans(con, chunk, spans[k:k + 1], local_issues)
                self._load_spans(con, chunk, spans[k + 1:], local_issues)
                return
        mid = len(spans) // 2
        self._load_spans(con, chunk, spans[:mid], local_issues)
        self._load_spans(con, chunk, spans[mid:], local_issues)

    # -- one chunk in a worker --------------------------------------------------------------------
    def _work(self, job: _Job) -> None:
        con = self.workers.con()
        n = None
        error: BaseException | None = None
        local_issues: list = []
        self.local.odd = False
        try:
            try:
                n = self._load(con, job.chunk, 0, create=True)
            except duckdb.Error:
                n = self._load_exact(con, job.chunk, local_issues)
            if self.local.odd:
                self._take_bad_times(con, job.chunk, local_issues)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            error = e
        if job.prev is None:
            base = 0
        else:
            job.prev.next_ready.wait()
            base = job.prev.next_base
        if error is not None or base is None:
            job.next_base = None
            job.next_ready.set()
            if error is not None:
                raise error
            return  # an earlier chunk failed; its error is reported
        job.next_base = base + n
        job.next_ready.set()
        job.chunk = None  # free the text
        local_issues.sort(key=lambda it: (it[1] is None, it[1] or 0))
        for li, off, kind, detail in local_issues:
            if not self.salvage:
                raise TraceError(self.path, detail + "; rerun with --salvage to skip bad events", offset=off,
                                 event_index=None if li is None else base + li)
        self._write_parts(con, base, job.index, [(None if li is None else base + li, off, kind, d)
                                                 for li, off, kind, d in local_issues])

    def _take_bad_times(self, con, chunk: EventChunk, local_issues: list) -> None:
        """Rows whose ts/dur is not a number (careful path) are malformed events: recorded with their byte offset
        (found by an exact scan of the chunk, on this rare path only) and removed from table c."""
        marked = con.execute("SELECT ord, bad_time FROM c WHERE bad_time IS NOT NULL ORDER BY ord").fetchall()
        if not marked:
            return
        scan = exact_spans(chunk.data)
        starts = sorted([sp.start for sp in scan.spans] + [off for off, _ in scan.garbage])
        for ord_, why in marked:
            li = ord_ - 1
            off = chunk.offset + starts[li] if li < len(starts) else None
            local_issues.append((li, off, "skipped_malformed_event", f"malformed event: {why}"))
        con.execute("DELETE FROM c WHERE bad_time IS NOT NULL")

    def _write_parts(self, con, base: int, index: int, issues: list) -> None:
        stats = con.execute("""SELECT route, count(*), count(*) FILTER (WHERE ph = 'X' AND cat_raw IS NOT NULL)
                               FROM c GROUP BY route""").fetchall()
        dev = con.execute("""SELECT DISTINCT pid, TRY_CAST(regexp_extract(json_extract_string(args, '$.name'),
                                    '^/device:[A-Za-z_]+:([0-9]+)', 1) AS INTEGER)
                             FROM c WHERE ph = 'M' AND name = 'process_name'
                               AND json_extract_string(args, '$.name') LIKE '/device:%'""").fetchall()
        counts: dict[str, int] = {}
        if self.local.odd:
            issues = issues + [(eid, None, "repaired_string_time", f"{what} given as a JSON string; read as a number")
                               for eid, what in con.execute(f"""SELECT {base} + ord - 1, time_repair FROM c
                                   WHERE time_repair IS NOT NULL ORDER BY ord""").fetchall()]
        src_tpl = f"(SELECT {base} + ord - 1 AS event_id, * EXCLUDE (ord) FROM c WHERE route = '{{r}}')"
        for route, n, _ in stats:
            if route == "empty":
                for (eid,) in con.execute(f"SELECT {base} + ord - 1 FROM c WHERE route = 'empty'").fetchall():
                    issues.append((eid, None, "skipped_empty_event", "event is {} or null, or has none of "
                                   "the trace-event fields (e.g. the trailing {} JAX writes)"))
                continue
            if route == "x_nocat":
                part = str(self.pending / f"part-{index:05d}.parquet")
                con.execute(f"COPY {src_tpl.format(r=route)} TO '{part}' (FORMAT parquet, COMPRESSION lz4_raw)")
                with self.lock:
                    self.pending_parts.append(part)
                continue
            counts[route] = self._copy(con, route, src_tpl.format(r=route), index)
            if route == "events":
                counts["launches"] = self._copy(con, "launches", src_tpl.format(r=route), index)
        with self.lock:
            for t, n in counts.items():
                self.counts[t] += n
            self.issues.extend(issues)
            self.x_with_cat += sum(r[2] for r in stats)
            self.device_pids.update({pid: d for pid, d in dev})

    def _copy(self, con, table: str, src: str, index: int) -> int:
        d = self.out / table
        d.mkdir(exist_ok=True)
        return con.execute(_table_copy(table, src, str(d / f"part-{index:05d}.parquet"))).fetchone()[0]

    # -- the whole file ---------------------------------------------------------------------------
    def run(self) -> tuple[ByteSource, TraceSplitter]:
        self.out.mkdir()
        self.pending.mkdir()
        src = ByteSource(self.path, salvage=self.salvage)
        splitter = TraceSplitter(src, chunk_size=self.chunk_size, salvage=self.salvage)
        inflight: deque = deque()
        prev = None
        try:
            for i, chunk in enumerate(splitter.chunks()):
                job = _Job(i, chunk, prev)
                inflight.append(self.workers.pool.submit(self._work, job))
                prev = job
                while len(inflight) >= 3 or (inflight and inflight[0].done()):
                    inflight.popleft().result()
                    if self.progress:
                        self.progress.update(src.raw_bytes)
                if self.progress:
                    self.progress.update(src.raw_bytes)
            while inflight:
                inflight.popleft().result()
        finally:
            for f in inflight:  # after an error: let running jobs finish before the staging dir goes
                try:
                    f.result()
                except BaseException:  # noqa: BLE001
                    pass
        self.elements = prev.next_base if prev is not None else 0
        gz = ""
        if src.gzip_truncated:
            gz = f" ({src.gzip_error})" if src.gzip_error else " (gzip stream cut short)"
        if self.elements == 0:
            if splitter.truncated:
                raise TraceError(self.path, f"truncated trace{gz}: no complete event before the end of the file",
                                 offset=splitter.tail_offset)
            raise TraceError(self.path, "traceEvents is empty: nothing to ingest", offset=splitter.events_offset)
        if splitter.truncated:
            self.issues.append((None, splitter.tail_offset, "truncated_tail", (splitter.tail_detail or (
                f"file ends inside an event: {splitter.dropped_tail_bytes} bytes of an incomplete last event "
                "dropped")) + gz))
        elif src.gzip_truncated:
            # the JSON text is complete, but the gzip stream is cut short or corrupt after it (e.g. no trailer):
            # nothing is lost, the stream's checksum could not be verified
            self.issues.append((None, src.json_bytes, "gzip_damaged",
                                (src.gzip_error or "gzip stream cut short") + " after the end of the JSON text; "
                                "nothing lost, its checksum not verified"))
        return src, splitter


# ---- rows of one table --------------------------------------------------------------------------------

# Launch APIs by name: graph launches (cudaGraphLaunch, hipGraphLaunch, cuGraphLaunch), memcpy/memset APIs
# (cudaMemcpyAsync, cuMemsetD32Async, hipMemcpyWithStream, ...) and kernel launches
# (cudaLaunchKernel[ExC], cuLaunchKernel[Ex], hipLaunchKernel, hipExtModuleLaunchKernel, ...).
_LAUNCH_KIND = """CASE
  WHEN name ILIKE '%graphlaunch%' THEN 'graph'
  WHEN name LIKE 'cudaMemcpy%' OR name LIKE 'cuMemcpy%' OR name LIKE 'hipMemcpy%' THEN 'memcpy'
  WHEN name LIKE 'cudaMemset%' OR name LIKE 'cuMemset%' OR name LIKE 'hipMemset%' THEN 'memset'
  WHEN (name LIKE 'cu%' OR name LIKE 'hip%') AND name LIKE '%Launch%Kernel%' THEN 'kernel'
END"""

# 'External id' ('external id' in PyTorch 1.8 traces; DuckDB struct keys ignore case, so read it apart)
_EXT_ID = """coalesce(a."External id", CASE WHEN cat_raw IN ('Operator', 'Runtime', 'Kernel', 'Memcpy', 'Memset')
  THEN TRY_CAST(json_extract_string(args, '$."external id"') AS BIGINT) END)"""


def _bigint(expr: str) -> str:
    return f"TRY_CAST({expr} AS BIGINT)"


def _extra_json() -> str:
    # the extra fields were read as text: numbers/objects/lists are valid JSON again, bare strings are re-quoted
    pairs = ", ".join(f"'{k}', CASE WHEN json_valid(\"{k}\") THEN json(\"{k}\") ELSE to_json(\"{k}\") END"
                      for k in _EXTRA_KEYS)
    nulls = " AND ".join(f'"{k}" IS NULL' for k in _EXTRA_KEYS)
    return f"CASE WHEN {nulls} THEN NULL ELSE json_merge_patch('{{}}', json_object({pairs})) END"


def _table_copy(table: str, src: str, out: str) -> str:
    """COPY the rows of ``src`` (event_id + chunk columns, already filtered to this table) into a Parquet part
    with the table's schema (schema.py), extracting typed columns from args."""
    a = "json_transform(args, '{sig}')"
    if table == "events":
        sig = ('{"External id":"BIGINT","correlation":"BIGINT","correlation_id":"BIGINT","Sequence number":"BIGINT",'
               '"Fwd thread id":"BIGINT","Python id":"BIGINT","Python parent id":"BIGINT","Input Dims":"JSON",'
               '"Input type":"JSON","Input Strides":"JSON","Concrete Inputs":"JSON"}')
        sel = f"""SELECT event_id, ph, cat, cat_raw, name, pid, tid, ts_ns, dur_ns,
            {_EXT_ID} AS external_id, coalesce(a.correlation, a.correlation_id) AS correlation,
            a."Sequence number" AS sequence_number, a."Fwd thread id" AS fwd_thread_id,
            a."Python id" AS python_id, a."Python parent id" AS python_parent_id,
            a."Input Dims" AS input_dims, a."Input type" AS input_types, a."Input Strides" AS input_strides,
            a."Concrete Inputs" AS concrete_inputs,
            args, {_extra_json()} AS extra
          FROM (SELECT *, {a.format(sig=sig)} AS a FROM {src})"""
    elif table == "launches":
        sig = '{"External id":"BIGINT","correlation":"BIGINT","correlation_id":"BIGINT","cbid":"BIGINT"}'
        sel = f"""SELECT event_id, name, launch_kind, pid, tid, ts_ns, dur_ns,
            coalesce(a.correlation, a.correlation_id) AS correlation, {_EXT_ID} AS external_id, a.cbid AS cbid
          FROM (SELECT *, {a.format(sig=sig)} AS a FROM (
                  SELECT *, {_LAUNCH_KIND} AS launch_kind FROM {src} WHERE cat IN ('cuda_runtime', 'cuda_driver'))
                WHERE launch_kind IS NOT NULL)"""
    elif table == "kernels":
        sig = ('{"device":"INTEGER","stream":"BIGINT","correlation":"BIGINT","correlation_id":"BIGINT",'
               '"External id":"BIGINT","context":"BIGINT","grid":"BIGINT[]","block":"BIGINT[]",'
               '"registers per thread":"BIGINT","shared memory":"BIGINT","blocks per SM":"DOUBLE",'
               '"warps per SM":"DOUBLE","est. achieved occupancy %":"DOUBLE","queued":"BIGINT",'
               '"bytes":"BIGINT","memory bandwidth (GB/s)":"DOUBLE","kernel_details":"VARCHAR"}')
        dims = []
        for d in ("grid", "block"):
            for i, ax in enumerate("xyz"):
                # JAX writes "kernel_details": " grid:1,1,1 block:512,1,1 ..." instead of lists
                jax_dim = f"string_split(regexp_extract(a.kernel_details, '{d}:([0-9,]+)', 1), ',')[{i + 1}]"
                dims.append(f"CASE WHEN a.kernel_details IS NULL THEN a.{d}[{i + 1}] "
                            f"ELSE {_bigint(jax_dim)} END AS {d}_{ax}")
        sel = f"""SELECT event_id, cat, cat_raw, name, pid, tid, ts_ns, dur_ns,
            coalesce(a.device, dev.device) AS device,
            coalesce(a.stream, CASE WHEN dev.pid IS NOT NULL THEN {_bigint('tid')} END) AS stream,
            coalesce(a.correlation, a.correlation_id) AS correlation, {_EXT_ID} AS external_id,
            a.context AS context, {', '.join(dims)},
            a."registers per thread" AS registers_per_thread, a."shared memory" AS shared_memory_bytes,
            a."blocks per SM" AS blocks_per_sm, a."warps per SM" AS warps_per_sm,
            a."est. achieved occupancy %" AS est_occupancy_pct, a.queued AS queued, a.bytes AS bytes,
            a."memory bandwidth (GB/s)" AS memory_bandwidth_gbps, args
          FROM (SELECT *, {a.format(sig=sig)} AS a FROM {src}) k
          LEFT JOIN device_pids dev USING (pid)"""
    elif table == "correlations":
        sel = f"""SELECT event_id, ph, cat_raw AS cat, name,
            {_bigint("id")} AS flow_id, id AS flow_id_raw, pid, tid, ts_ns, bp AS binding_point
          FROM {src}"""
    elif table == "instants":
        sel = f"""SELECT event_id, ph, cat_raw AS cat, name, pid, tid, ts_ns,
            s AS scope, args FROM {src}"""
    elif table == "metadata":
        sel = f"""SELECT event_id, name, pid, tid, ts_ns,
            coalesce(json_extract_string(args, '$.name'), json_extract_string(args, '$.labels'),
                     json_extract_string(args, '$.sort_index')) AS value, args
          FROM {src}"""
    elif table == "counters":
        sel = f"SELECT event_id, name, cat_raw AS cat, pid, tid, ts_ns, args FROM {src}"
    elif table == "gpu_user_annotations":
        sig = '{"device":"INTEGER","stream":"BIGINT","External id":"BIGINT"}'
        sel = f"""SELECT event_id, name, pid, tid, ts_ns, dur_ns,
            coalesce(a.device, TRY_CAST(pid AS INTEGER)) AS device, coalesce(a.stream, {_bigint('tid')}) AS stream,
            {_EXT_ID} AS external_id, args
          FROM (SELECT *, {a.format(sig=sig)} AS a FROM {src})"""
    elif table == "other_events":
        sel = f"""SELECT event_id, ph, cat_raw AS cat, name, pid, tid, ts_ns, dur_ns, args,
            {_extra_json()} AS extra FROM {src}"""
    else:
        raise KeyError(table)
    cols = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t, _ in columns(table))
    return f"COPY (SELECT {cols} FROM ({sel})) TO '{out}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)"


def _rank_from_name(name: str) -> int | None:
    m = re.search(r"rank[-_]?(\d{1,9})(?!\d)", name, re.I)
    return int(m.group(1)) if m else None


def _int(v, bits: int = 32) -> int | None:
    """An integer header value, or None when it is not one or does not fit the column (INTEGER by default)."""
    try:
        i = int(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return i if -(1 << (bits - 1)) <= i < (1 << (bits - 1)) else None


def _kept_issues(con, out: Path) -> None:
    """Events kept as written although odd, found by one SQL scan over the written parts: negative dur, a complete
    event without dur, a pid/tid that is a JSON object or list. One row each in the temp table issues."""
    nonscalar = "(starts_with({c}, '{{') OR starts_with({c}, '[')) AND json_valid({c})"
    files = [str(out / t / "*.parquet") for t in EVENT_TABLES]
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


def _finalize(con, ing: _TraceIngest, src: ByteSource, splitter: TraceSplitter, started: float):
    h = splitter.header
    out = ing.out
    con.execute("CREATE OR REPLACE TEMP TABLE device_pids (pid VARCHAR, device INTEGER)")
    if ing.device_pids:
        con.executemany("INSERT INTO device_pids VALUES (?, ?)", [list(kv) for kv in ing.device_pids.items()])
    jax = ing.x_with_cat == 0 and bool(ing.device_pids)
    if ing.pending_parts:
        # Complete events without a category: on a /device: process they are GPU activity, else CPU events.
        files = "[" + ", ".join(f"'{p}'" for p in sorted(ing.pending_parts)) + "]"
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
            ing.counts[route] += ing._copy(con, route, f"(SELECT * FROM p WHERE route = '{route}')", last)
        ing.counts["launches"] += ing._copy(con, "launches", "(SELECT * FROM p WHERE route = 'events')", last)
    for table in EVENT_TABLES + ["launches"]:
        d = out / table
        if not d.exists() or not any(d.iterdir()):
            d.mkdir(exist_ok=True)
            con.execute(f"COPY ({_empty_typed(table)}) TO '{d / 'part-00000.parquet'}' (FORMAT parquet)")
    # ingest_issues
    con.execute("CREATE OR REPLACE TEMP TABLE issues (event_id BIGINT, byte_offset BIGINT, kind VARCHAR, "
                "detail VARCHAR)")
    if ing.issues:
        con.executemany("INSERT INTO issues VALUES (?, ?, ?, ?)", [list(i) for i in ing.issues])
    _kept_issues(con, out)
    (out / "ingest_issues").mkdir()
    con.execute(f"COPY (SELECT * FROM issues ORDER BY event_id NULLS FIRST, kind, byte_offset) TO "
                f"'{out / 'ingest_issues' / 'part-00000.parquet'}' (FORMAT parquet)")
    skipped: dict[str, int] = {}
    noted: dict[str, int] = {}
    for kind, n in con.execute("SELECT kind, count(*) FROM issues GROUP BY kind ORDER BY kind").fetchall():
        if kind.startswith("skipped_"):
            skipped[kind[len("skipped_"):]] = n
        else:
            noted[kind] = n
    ing.noted = noted
    counts = {t: ing.counts[t] for t in EVENT_TABLES + ["launches"]}
    events_read = sum(counts[t] for t in EVENT_TABLES) + sum(skipped.values())
    _build_derived(out, ing.staging)
    # GPU events without a launch call in this trace (e.g. warm-up kernels launched before the CPU window), as
    # the stored gpu_launch_links says (linked = false), so the summary equals gpu_link_summary.unlinked_events.
    ing.unlinked = con.execute(f"""SELECT count(*) FILTER (WHERE NOT linked)
        FROM read_parquet('{out / "gpu_launch_links" / "*.parquet"}')""").fetchall()[0][0]
    unlinked = ing.unlinked

    # traces row
    dist = h.get("distributedInfo") if isinstance(h.get("distributedInfo"), dict) else {}
    rank, rank_source = _int(dist.get("rank")), "distributedInfo"
    if rank is None:
        rank, rank_source = _rank_from_name(os.path.basename(ing.path)), "file_name"
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
        "source_path": os.path.abspath(ing.path),
        "file_name": os.path.basename(ing.path),
        "content_hash": content_hash,
        "size_bytes": os.path.getsize(ing.path),
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
        "truncated": splitter.truncated,
        "exact_ts_text": ing.exact_any,
        "ingested_at": _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None),
        "ingest_seconds": time.time() - started,
        "tracesql_version": __version__,
    }
    cols = [("trace_id", "VARCHAR")] + [(c, t) for c, t, _ in columns("traces")]
    placeholders = ", ".join(f"CAST(? AS {t}) AS \"{c}\"" for c, t in cols if c != "trace_id")
    values = [row[c] for c, _ in cols if c != "trace_id"]
    (out / "traces").mkdir()
    con.execute(f"COPY (SELECT {placeholders}) TO '{out / 'traces' / 'part-00000.parquet'}' (FORMAT parquet)", values)
    return row, counts, skipped


# DuckDB memory limit of the derived-table build; with the Python process and DuckDB's unmanaged memory the
# ingest's peak RSS stays under 1 GB (benchmarks/README.md).
BUILD_MEMORY_LIMIT = "640MB"


def _build_derived(out: Path, staging: Path) -> None:
    """Compute the stored derived tables (the ``@stores`` declarations of the SQL library: call-tree nesting,
    launch links, op context, steps, GPU timeline) of one staged trace with their build views, and store them
    next to its other tables.

    Helper views declared ``@build-temp`` are kept as temporary tables of the build connection (which shadow
    the views of the same name) from just before the stored table of their module is built until the object
    named by UNTIL has been built, so that each step sorts and joins narrow, exactly counted inputs, a helper
    read several times is computed once, and the memory is free for the next one. A ``@build-levels`` helper
    is built one depth level per statement (every level of a recursive CTE stays in memory; a table spills),
    over its nodes stored in depth order so that each level's scan skips the other levels' row groups."""
    from .sqlmodules import load_order, module_statements, stored_tables

    stored = stored_tables()
    # checkpoint_threshold: the build's tables are temporary; an automatic checkpoint (which compacts in-memory
    # tables once 16 MB of changes have piled up) would only cost time and memory
    con = duckdb.connect(config={"threads": 2, "memory_limit": BUILD_MEMORY_LIMIT,
                                 "temp_directory": str(staging / "tmp"), "preserve_insertion_order": False,
                                 "checkpoint_threshold": "1TB"})
    try:
        for t in TABLES:
            if t in DERIVED_TABLES:
                con.execute(f"CREATE TABLE {t} AS {empty_select(t)}")  # placeholders until built
            elif t == "traces" or not (out / t).is_dir():
                con.execute(f"CREATE VIEW {t} AS {empty_select(t)}")
            else:
                con.execute(f"CREATE VIEW {t} AS SELECT '' AS trace_id, * FROM read_parquet('{out / t / '*.parquet'}')")
        for st in module_statements(load_order(sorted({m.name for m in stored.values()}))):
            con.execute(st)
        levels = {v: lv for m in stored.values() for v, lv in m.build_levels.items()}
        in_depth_order = {nodes for _, nodes in levels.values()}
        for t, m in stored.items():
            helpers = m.build_temp if t == next(x for x in m.stores) else []
            for v, _ in helpers:
                if v in levels:
                    _build_by_level(con, v, *levels[v])
                elif v in in_depth_order:
                    con.execute("SET preserve_insertion_order = true")
                    con.execute(f"CREATE TEMP TABLE {v} AS SELECT * FROM main.{v} ORDER BY depth")
                    con.execute("SET preserve_insertion_order = false")
                else:
                    con.execute(f"CREATE TEMP TABLE {v} AS SELECT * FROM main.{v}")
                for done, last_done in helpers:
                    if last_done == v:
                        con.execute(f"DROP TABLE temp.{done}")
            (out / t).mkdir()
            part = out / t / "part-00000.parquet"
            cols = ", ".join(f'"{c}"' for c, _, _ in columns(t))
            con.execute(f"COPY (SELECT {cols} FROM {m.stores[t]}) TO '{part}' "
                        "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)")
            con.execute(f"DROP TABLE {t}")
            con.execute(f"CREATE VIEW {t} AS SELECT '' AS trace_id, * FROM read_parquet('{part}')")
            for v, last in helpers:
                if last == t:
                    con.execute(f"DROP TABLE temp.{v}")
    finally:
        con.close()


def _build_by_level(con, name: str, level_macro: str, nodes: str) -> None:
    """Store the recursive helper view ``name`` as a temporary table, one depth level per statement
    (``level_macro(d)`` gives level d from level d - 1 of the table): same rows as the view."""
    con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM main.{name} LIMIT 0")
    max_depth = con.execute(f"SELECT max(depth) FROM {nodes}").fetchall()[0][0]
    for d in range(0, (max_depth if max_depth is not None else -1) + 1):
        con.execute(f"INSERT INTO {name} SELECT * FROM {level_macro}({d})")


def _empty_typed(table: str) -> str:
    cols = ", ".join(f"NULL::{t} AS \"{c}\"" for c, t, _ in columns(table))
    return f"SELECT {cols} WHERE false"


# ---- the dataset side -------------------------------------------------------------------------------

# (size, content hash) of the published traces of each dataset, by trace directory name. A trace directory is
# complete and never changes once published, so only directories not seen before are read (those published by
# another process, or by an earlier call).
_KNOWN: dict[str, dict[str, tuple[int, str]]] = {}


def _known_sizes(dataset: Path) -> dict[int, list[str]]:
    tdir = dataset / "traces"
    cache = _KNOWN.setdefault(str(dataset.resolve()), {})
    present = {d.name for d in tdir.glob("trace_id=*")} if tdir.is_dir() else set()
    for gone in set(cache) - present:
        del cache[gone]
    new = sorted(present - set(cache))
    if new:
        files = [str(tdir / d / "traces" / "part-00000.parquet") for d in new]
        con = duckdb.connect()
        try:
            rows = con.execute("SELECT parse_dirpath(filename), size_bytes, content_hash FROM read_parquet(?, "
                               "filename = true)", [files]).fetchall()
        finally:
            con.close()
        for path, size, h in rows:
            cache[Path(path).parent.name] = (size, h)
    out: dict[int, list[str]] = {}
    for size, h in cache.values():
        out.setdefault(size, []).append(h)
    return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_staging(staging_root: Path) -> None:
    """Remove work areas left by ingests that were killed (their process no longer exists)."""
    for d in staging_root.iterdir():
        pid = d.name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            shutil.rmtree(d, ignore_errors=True)
    for f in staging_root.parent.glob(".init.sql.*"):
        pid = f.name.split(".")[-1].split("-", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            f.unlink(missing_ok=True)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    """fsync every file under ``root`` and the directories holding them."""
    for d, _, names in os.walk(root):
        for n in names:
            fd = os.open(os.path.join(d, n), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(d))


def _known_hash(path: str, hashes: list[str]) -> str | None:
    """The file's content hash if it is one of ``hashes``, else None. Datasets written before the content hash
    became XXH3-128 hold BLAKE2b-128 digests: that digest is computed (a second read of the file) only when the
    XXH3 one is not found."""
    for new_hash in (content_hasher, lambda: hashlib.blake2b(digest_size=16)):
        h = new_hash()
        with open(path, "rb") as f:
            while b := f.read(8 << 20):
                h.update(b)
        if (digest := h.hexdigest()) in hashes:
            return digest
    return None


def _chunk_size(path: str, size: int) -> int:
    """Bytes of JSON per chunk: 32 MB (fewer statements and Parquet parts per trace), but at least 8 chunks
    while they stay 8 MB or more, so that both workers stay busy to the end of a mid-sized file. A gzip file
    is taken to hold 8 times its size of JSON."""
    json_guess = size * (8 if is_gzip(path) else 1)
    return max(8 << 20, min(32 << 20, json_guess // 8))


def ingest_file(path: str, dataset: Path, salvage: bool = False, quiet: bool = True,
                chunk_size: int | None = None, workers: _Workers | None = None) -> IngestResult:
    """Ingest one trace file into ``dataset`` atomically. Raises TraceError for bad input."""
    started = time.time()
    res = IngestResult(path=path)
    if not os.path.isfile(path):
        raise TraceError(path, "no such file" if not os.path.exists(path) else "not a regular file")
    size = os.path.getsize(path)
    known = _known_sizes(dataset)
    if size in known:
        h = _known_hash(path, known[size])
        if h is not None:
            res.status, res.trace_id = "duplicate", h[:16]
            return res
    staging_root = dataset / ".staging"
    staging_root.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(staging_root)
    staging = staging_root / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
    staging.mkdir()
    own_workers = workers is None
    workers = workers or _Workers(2)
    progress = Progress(os.path.basename(path), size, enabled=not quiet and size > 4 << 20)
    try:
        ing = _TraceIngest(path, staging, salvage, chunk_size or _chunk_size(path, size), progress, workers)
        src, splitter = ing.run()
        workers.release()
        con = duckdb.connect(config={"threads": 2, "memory_limit": "512MB", "temp_directory": str(staging / "tmp"),
                                     "preserve_insertion_order": True})
        try:
            row, counts, skipped = _finalize(con, ing, src, splitter, started)
        finally:
            con.close()
        trace_id = row["trace_id"]
        final = dataset / "traces" / f"trace_id={trace_id}"
        final.parent.mkdir(parents=True, exist_ok=True)
        _fsync_tree(ing.out)  # the parts are on disk before they are published: a machine crash cannot publish
        #                       a trace whose files are incomplete
        try:
            os.rename(ing.out, final)  # atomic publish
        except OSError:
            if final.exists():
                res.status, res.trace_id = "duplicate", trace_id
                return res
            raise
        _fsync_dir(final.parent)
        _KNOWN.setdefault(str(dataset.resolve()), {})[final.name] = (row["size_bytes"], row["content_hash"])
        res.trace_id = trace_id
        res.row_counts = counts
        res.events_read = row["events_read"]
        res.skipped = skipped
        res.json_bytes = src.json_bytes
        res.truncated = splitter.truncated
        res.rank = row["rank"]
        res.noted = ing.noted
        res.unlinked = ing.unlinked
        res.seconds = time.time() - started
        return res
    finally:
        progress.close()
        if own_workers:
            workers.close()
        shutil.rmtree(staging, ignore_errors=True)


def ingest(paths, out="tracesql_data", salvage: bool = False, quiet: bool = True, on_result=None) -> list[IngestResult]:
    """Ingest trace files (or directories of them) into the dataset at ``out``.

    Bad files do not stop the others: each yields an IngestResult with status 'failed' and a one-line error.
    """
    from .dataset import ensure_catalog, write_init_sql

    if isinstance(paths, (str, os.PathLike)):
        paths = [str(paths)]
    dataset = Path(out)
    try:
        dataset.mkdir(parents=True, exist_ok=True)
        (dataset / "traces").mkdir(exist_ok=True)
    except OSError as e:
        raise DatasetError(f"{out}: cannot create the dataset here ({e.strerror or type(e).__name__})") from None

    def publish_views():
        try:
            write_init_sql(dataset)
        except OSError as e:
            raise DatasetError(f"{out}: cannot write init.sql ({e.strerror or type(e).__name__})") from None

    files = find_trace_files([str(p) for p in paths])
    results = []
    workers = _Workers(2)
    try:
        for f in files:
            try:
                r = ingest_file(f, dataset, salvage=salvage, quiet=quiet, workers=workers)
            except TraceError as e:
                r = IngestResult(path=f, status="failed", error=str(e))
            except (OSError, duckdb.Error) as e:
                msg = str(e).splitlines()[0] if str(e) else type(e).__name__
                r = IngestResult(path=f, status="failed", error=f"{f}: {msg}")
            except (KeyboardInterrupt, SystemExit, MemoryError):
                raise
            except Exception as e:  # noqa: BLE001 - a bug must not stop the other files; reported in one line
                msg = str(e).splitlines()[0] if str(e) else ""
                r = IngestResult(path=f, status="failed",
                                 error=f"{f}: internal error ({type(e).__name__}: {msg}); please report it")
            if r.status == "ingested":
                publish_views()  # the dataset's init.sql is current after every published trace
            results.append(r)
            if on_result:
                on_result(r)
    finally:
        workers.close()
    publish_views()
    if any(r.status == "ingested" for r in results):
        try:  # the views bound once now, so that the first query after the ingest binds nothing
            ensure_catalog(dataset)
        except (OSError, duckdb.Error, DatasetError):
            pass  # opening the dataset writes it, or says why it cannot (e.g. traces of an older layout)
    return results
