"""The parse pipeline of one file: chunks of events through a pool of worker threads into Parquet parts.

``TraceParser.run`` reads the file with ``jsonstream`` (``ByteSource`` decompresses and hashes it,
``TraceSplitter`` cuts ``traceEvents`` into chunks of whole events) and hands each chunk to a worker; at most
three chunks are in flight. A worker, with its own DuckDB connection:

1. reads the chunk into the temp table ``c`` (read.py): by the probe while the file's chunks all pass it, else
   in the mode ``read.classify`` finds for its text. A chunk DuckDB rejects is split into its events
   (``jsonstream.exact_spans``) and read again run by run, bisecting down to the bad events, which are skipped
   and recorded (or, without ``salvage``, reported as the file's error);
2. waits for the number of events before its chunk (published by the previous chunk's worker as soon as that
   chunk is read), which turns positions into ``event_id``;
3. writes one Parquet part per table (extract.py) into ``staging/out/<table>/``; complete events without a
   category go to ``staging/pending/``, to be routed when the whole file is known (finalize.py).

Each chunk's counts, issues and findings are returned to ``run``, which adds them up in the order of the chunks
and returns them as a ``ParsedTrace``.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
import threading
import uuid
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from tracesql.errors import TraceError
from tracesql.escape import sql_str
from tracesql.ingest.extract import copy_table
from tracesql.ingest.jsonstream import ByteSource, EventChunk, TraceSplitter, exact_spans, is_gzip
from tracesql.ingest.progress import Progress
from tracesql.ingest.read import ReadMode, chunk_select, classify, event_error, rewrite
from tracesql.store.config import close_connection
from tracesql.store.schema import EVENT_TABLES

# (event_id, byte_offset, kind, detail): a row of ingest_issues
Issue = tuple[int | None, int | None, str, str]
# (position in the chunk, byte_offset, kind, detail): an issue of a chunk before its event ids are known
_LocalIssue = tuple[int | None, int | None, str, str]


# What the rows of table c routed to one table hold, after the route itself (GROUP BY route): rows, complete events
# with a category, rows that may be kept although odd (a superset of what finalize's scan reports: negative or
# missing dur, a pid/tid that may be a JSON object or list), and for metadata the /device: processes (JAX) as a list
# of {pid, device}.
ROUTE_STATS = """count(*), count(*) FILTER (WHERE ph = 'X' AND cat_raw IS NOT NULL),
    count(*) FILTER (WHERE dur_ns < 0
                     OR (dur_ns IS NULL AND (ph = 'X' OR route IN ('kernels', 'gpu_user_annotations')))
                     OR starts_with(pid, '{') OR starts_with(pid, '[')
                     OR starts_with(tid, '{') OR starts_with(tid, '[')),
    list(DISTINCT {'pid': pid, 'device': TRY_CAST(regexp_extract(json_extract_string(args, '$.name'),
                                                                '^/device:[A-Za-z_]+:([0-9]+)', 1) AS INTEGER)})
      FILTER (WHERE ph = 'M' AND name = 'process_name' AND json_extract_string(args, '$.name') LIKE '/device:%')"""

EMPTY_EVENT = ("skipped_empty_event", "event is {} or null, or has none of the trace-event fields (e.g. the trailing "
               "{} JAX writes)")

# The memory limit of a worker's connection (raised for a chunk holding a huge event: _read_sql)
WORKER_MEMORY_LIMIT = "384MB"

# Chunks this large or larger are read by the probe first (read.py); smaller ones are classified by their text.
PROBE_MIN_BYTES = 4 << 20


def default_chunk_size(path: str, size: int) -> int:
    """Bytes of JSON per chunk: 32 MB (fewer statements and Parquet parts per trace), but at least 8 chunks
    while they stay 8 MB or more, so that both workers stay busy to the end of a mid-sized file. A gzip file
    is taken to hold 8 times its size of JSON."""
    json_guess = size * (8 if is_gzip(path) else 1)
    return max(8 << 20, min(32 << 20, json_guess // 8))


class Workers:
    """Thread pool whose threads each own a DuckDB connection (one thread each)."""

    def __init__(self, n: int):
        self.local = threading.local()  # the thread's connection and its generation
        self.pool = ThreadPoolExecutor(max_workers=n)
        self.cons: list[duckdb.DuckDBPyConnection] = []
        self.lock = threading.Lock()
        self.gen = 0  # bumped by release(): a thread's connection from an earlier generation is closed
        # private to this process: concurrent ingests must not share DuckDB's spill files
        self.spill = os.path.join(tempfile.gettempdir(), f"tracesql-spill-{os.getpid()}-{uuid.uuid4().hex[:8]}")

    def con(self) -> duckdb.DuckDBPyConnection:
        """The calling thread's connection, opened on first use (and after ``release``)."""
        c = getattr(self.local, "con", None)
        if c is None or self.local.gen != self.gen:
            c = duckdb.connect(config={"threads": 1, "memory_limit": WORKER_MEMORY_LIMIT,
                                       "preserve_insertion_order": True, "temp_directory": self.spill})
            c.execute("SET enable_progress_bar = false")
            c.execute("CREATE TEMP TABLE device_pids (pid VARCHAR, device INTEGER)")
            self.local.con, self.local.gen = c, self.gen
            with self.lock:
                self.cons.append(c)
        return c

    def release(self) -> None:
        """Close the workers' connections (between files, when no chunk is in flight), returning their memory
        before the next step of the ingest builds the derived tables; the next chunk opens new ones."""
        with self.lock:
            for c in self.cons:
                close_connection(c)
            self.cons = []
            self.gen += 1

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        for c in self.cons:
            close_connection(c)
        shutil.rmtree(self.spill, ignore_errors=True)


class _Job:
    """One chunk on its way through a worker. ``next_base`` (index of the first element of the next chunk) is
    published as soon as this chunk is read, so the next worker can number its events while this one writes;
    it stays None when this chunk or an earlier one failed."""

    def __init__(self, index: int, chunk: EventChunk, prev: _Job | None):
        self.index = index
        self.chunk: EventChunk | None = chunk
        self.prev = prev
        self.next_base: int | None = None
        self.next_ready = threading.Event()


@dataclass(frozen=True)
class _Reads:
    """How a text was read: some part of it CAREFUL, and some ts needing its exact decimal text."""

    careful: bool = False
    exact_text: bool = False

    def __or__(self, other: _Reads) -> _Reads:
        return _Reads(self.careful or other.careful, self.exact_text or other.exact_text)


@dataclass
class _ChunkOut:
    """What one chunk added to the trace."""

    counts: dict[str, int]
    issues: list[Issue]
    x_with_cat: int
    device_pids: list[tuple[str, int | None]]
    pending_part: str | None
    exact_text: bool
    odd_rows: int


@dataclass(frozen=True)
class ParsedTrace:
    """A file whose events are all written as parts under ``out`` (and ``pending``)."""

    path: str
    staging: Path
    out: Path  # staging/out: one directory of parts per table
    source: ByteSource  # after the whole file: its hash and sizes
    splitter: TraceSplitter  # after the whole file: its header and whether it was truncated
    counts: dict[str, int]  # rows written per table (EVENT_TABLES and launches)
    issues: list[Issue]  # skipped events, repairs and file-level problems
    x_with_cat: int  # complete events that have a category (0 in JAX traces)
    device_pids: dict[str, int | None]  # pid of each /device: process -> its device number
    pending_parts: list[str] = field(default_factory=list)  # complete events without a category
    exact_text: bool = False  # some ts needed its exact decimal text
    odd_rows: int = 0  # rows that may be kept although odd (finalize looks for them only when there are some)


class TraceParser:
    """Parses one file into Parquet parts under ``staging/out`` (module docstring)."""

    def __init__(self, path: str, staging: Path, salvage: bool, chunk_size: int, progress: Progress | None,
                 workers: Workers):
        self.path = path
        self.staging = staging
        self.out = staging / "out"
        self.pending = staging / "pending"
        self.salvage = salvage
        self.chunk_size = chunk_size
        self.progress = progress
        self.workers = workers
        self.lock = threading.Lock()
        self.seq = 0  # for file names of chunk texts
        # Chunks are read by the probe first until one needs another mode; the rest of the file is classified.
        self.probe_first = True

    # -- reading ----------------------------------------------------------------------------------
    def _chunk_file(self, pieces: list[bytes]) -> str:
        with self.lock:
            self.seq += 1
            jp = str(self.staging / f"chunk_{self.seq:06d}.json")
        with open(jp, "wb") as f:
            f.write(b"[")
            f.writelines(pieces)
            f.write(b"]")
        return jp

    def _read(self, con: duckdb.DuckDBPyConnection, data: bytes, mode: ReadMode, ord_offset: int,
              create: bool) -> int:
        """Read ``data`` (events joined by commas) in ``mode`` into temp table c (replacing it, or adding to it);
        returns the number of rows read."""
        jp = self._chunk_file([rewrite(data, mode)])
        try:
            sel = chunk_select(jp, mode, ord_offset)
            if create:
                _read_sql(con, f"CREATE OR REPLACE TEMP TABLE c AS {sel}", len(data))
                return _scalar(con, "SELECT count(*) FROM c")
            return int(_read_sql(con, f"INSERT INTO c {sel}", len(data))[0])
        finally:
            os.unlink(jp)

    def _read_chunk(self, con: duckdb.DuckDBPyConnection, chunk: EventChunk,
                    local_issues: list[_LocalIssue]) -> tuple[int, _Reads]:
        """Read a whole chunk into temp table c; returns the number of elements and how they were read."""
        # The probe reads a chunk in one go when its times are plain (it flags those that need another mode); a
        # small chunk is classified by its text instead (a few ms), as a flagged probe would be read twice.
        if self.probe_first and sum(len(p) for p in chunk.pieces) >= PROBE_MIN_BYTES:
            jp = self._chunk_file(chunk.pieces)
            try:
                _read_sql(con, f"CREATE OR REPLACE TEMP TABLE c AS {chunk_select(jp, ReadMode.PROBE, 0)}",
                          sum(len(p) for p in chunk.pieces))
                n, suspect = _row(con, "SELECT count(*), count(bad_time) FROM c")
            except duckdb.Error:  # read again below, where a bad event is found and reported
                n, suspect = 0, 1
            finally:
                os.unlink(jp)
            if not suspect:
                return n, _Reads()
            self.probe_first = False
        data = chunk.data
        mode, exact = classify(data)
        reads = _Reads(mode is ReadMode.CAREFUL, exact)
        try:
            return self._read(con, data, mode, 0, create=True), reads
        except duckdb.Error:
            n, span_reads = self._read_events(con, chunk, local_issues)
            return n, reads | span_reads

    def _read_events(self, con: duckdb.DuckDBPyConnection, chunk: EventChunk,
                     local_issues: list[_LocalIssue]) -> tuple[int, _Reads]:
        """The fallback for a chunk DuckDB rejected: exact spans, and bisection down to any bad event."""
        if os.environ.get("TRACESQL_DEBUG"):
            print(f"tracesql: re-parsing the chunk at byte {chunk.offset} event by event", file=sys.stderr)
        self._read(con, b"{}", ReadMode.DOUBLE, 0, create=True)  # the table with its schema
        con.execute("DELETE FROM c")
        scan = exact_spans(chunk.data)
        if scan.array_end is not None:
            if chunk.data[scan.array_end] == 0x7D:  # }
                raise TraceError(self.path, "malformed JSON: a '}' that closes nothing",
                                 offset=chunk.offset + scan.array_end)
            raise TraceError(self.path, "could not find the end of traceEvents (fields after it hold lists of "
                             "objects larger than 1 MB)", offset=chunk.offset + scan.array_end)
        # (start, end) of an element read by DuckDB, (start, text) of one that is not an object or a list
        items: list[tuple[int, int | bytes]] = [(sp.start, sp.end) for sp in scan.spans]
        items += [(off, txt) for off, txt in scan.garbage]
        items.sort(key=lambda it: it[0])
        if scan.incomplete_from is not None:
            raise TraceError(self.path, "malformed JSON: unbalanced brackets in an event",
                             offset=chunk.offset + scan.incomplete_from)
        # a missing or extra comma is repaired (with --salvage) and recorded; it belongs to no event
        local_issues.extend((None, chunk.offset + off, "repaired_separator", f"malformed JSON: {what}")
                            for off, what in scan.separators)
        reads = _Reads()
        run: list[tuple[int, int, int]] = []  # (local index, start, end)
        for i, (start, end_or_text) in enumerate(items):
            if isinstance(end_or_text, bytes):
                reads |= self._read_spans(con, chunk, run, local_issues)
                run = []
                local_issues.append((i, chunk.offset + start, "skipped_malformed_event",
                                     "not an object: " + end_or_text[:40].decode("utf-8", "replace")))
            else:
                run.append((i, start, end_or_text))
        reads |= self._read_spans(con, chunk, run, local_issues)
        return len(items), reads

    def _read_spans(self, con: duckdb.DuckDBPyConnection, chunk: EventChunk, spans: list[tuple[int, int, int]],
                    local_issues: list[_LocalIssue]) -> _Reads:
        """Add the events ``spans`` [(local index, start, end)] to table c, finding the bad ones: a JSON syntax
        error names the element it is in (its position is checked), other errors are found by bisection.
        Returns how the texts were read."""
        if not spans:
            return _Reads()
        # ord numbers inside one run are consecutive: ordinality + (first index)
        data = b",".join(chunk.data[s:e] for _, s, e in spans)
        mode, exact = classify(data)
        reads = _Reads(mode is ReadMode.CAREFUL, exact)
        try:
            self._read(con, data, mode, spans[0][0], create=False)
            return reads
        except duckdb.Error as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            if len(spans) == 1:
                local_issues.append((spans[0][0], chunk.offset + spans[0][1], "skipped_malformed_event",
                                     f"malformed event: {event_error(first)}"))
                return reads
            m = re.search(r"Malformed JSON.* in record/value (\d+)", first)
            k = int(m.group(1)) - 2 if m else -1  # the array's `[` is value 1
            if 0 <= k < len(spans):
                # the events before the bad one load in one go; the bad one alone fails (else it was not it)
                return (reads | self._read_spans(con, chunk, spans[:k], local_issues)
                        | self._read_spans(con, chunk, spans[k:k + 1], local_issues)
                        | self._read_spans(con, chunk, spans[k + 1:], local_issues))
        mid = len(spans) // 2
        return (reads | self._read_spans(con, chunk, spans[:mid], local_issues)
                | self._read_spans(con, chunk, spans[mid:], local_issues))

    def _take_bad_times(self, con: duckdb.DuckDBPyConnection, chunk: EventChunk,
                        local_issues: list[_LocalIssue]) -> None:
        """Rows whose ts/dur is not a number (CAREFUL read) are malformed events: recorded with their byte offset
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

    # -- one chunk in a worker --------------------------------------------------------------------
    def _work(self, job: _Job) -> _ChunkOut | None:
        """Read, number and write one chunk; None when an earlier chunk failed (its error is reported)."""
        con = self.workers.con()
        n = 0
        reads = _Reads()
        error: BaseException | None = None
        local_issues: list[_LocalIssue] = []
        assert job.chunk is not None
        nbytes = sum(len(p) for p in job.chunk.pieces)
        try:
            n, reads = self._read_chunk(con, job.chunk, local_issues)
            if reads.careful:
                self._take_bad_times(con, job.chunk, local_issues)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            error = e
        if job.prev is None:
            base: int | None = 0
        else:
            job.prev.next_ready.wait()
            base = job.prev.next_base
        if error is not None or base is None:
            _reset_limit(con)
            job.next_base = None
            job.next_ready.set()
            if error is not None:
                raise error
            return None
        job.next_base = base + n
        job.next_ready.set()
        job.chunk = None  # free the text
        local_issues.sort(key=lambda it: (it[1] is None, it[1] or 0))
        for li, off, _, detail in local_issues:
            if not self.salvage:
                _reset_limit(con)
                raise TraceError(self.path, detail + "; rerun with --salvage to skip bad events", offset=off,
                                 event_index=None if li is None else base + li)
        issues: list[Issue] = [(None if li is None else base + li, off, kind, d) for li, off, kind, d in local_issues]
        try:
            try:
                return self._write_parts(con, base, job.index, list(issues), reads)
            except duckdb.OutOfMemoryException:  # a huge event's args: written again with the limit raised
                if not _raise_limit(con, nbytes):
                    raise
            return self._write_parts(con, base, job.index, issues, reads)
        finally:
            _reset_limit(con)

    def _write_parts(self, con: duckdb.DuckDBPyConnection, base: int, index: int, issues: list[Issue],
                     reads: _Reads) -> _ChunkOut:
        """Write the rows of table c (first event ``base``) as part ``index`` of each table."""
        # rows and complete events with a category per route; for metadata, the /device: processes (JAX); rows
        # that may be kept although odd (a superset of what finalize's scan reports: negative or missing dur, a
        # pid/tid that may be a JSON object or list)
        stats = con.execute(f"SELECT route, {ROUTE_STATS} FROM c GROUP BY route").fetchall()
        dev = [(d["pid"], d["device"]) for r in stats for d in (r[4] or [])]
        counts: dict[str, int] = {}
        pending_part = None
        if reads.careful:
            issues = issues + [(eid, None, "repaired_string_time", f"{what} given as a JSON string; read as a number")
                               for eid, what in con.execute(f"""SELECT {base} + ord - 1, time_repair FROM c
                                   WHERE time_repair IS NOT NULL ORDER BY ord""").fetchall()]
        src_tpl = f"(SELECT {base} + ord - 1 AS event_id, * EXCLUDE (ord) FROM c WHERE route = '{{r}}')"
        for route, *_ in stats:
            if route == "empty":
                for (eid,) in con.execute(f"SELECT {base} + ord - 1 FROM c WHERE route = 'empty'").fetchall():
                    issues.append((eid, None, *EMPTY_EVENT))
                continue
            if route == "x_nocat":
                pending_part = str(self.pending / f"part-{index:05d}.parquet")
                con.execute(f"COPY {src_tpl.format(r=route)} TO {sql_str(pending_part)} "
                            "(FORMAT parquet, COMPRESSION lz4_raw)")
                continue
            counts[route] = copy_table(con, self.out, route, src_tpl.format(r=route), index)
            if route == "events":
                counts["launches"] = copy_table(con, self.out, "launches", src_tpl.format(r=route), index)
        return _ChunkOut(counts=counts, issues=issues, x_with_cat=sum(r[2] for r in stats),
                         odd_rows=sum(r[3] for r in stats if r[0] != "empty"),
                         device_pids=[(pid, d) for pid, d in dev], pending_part=pending_part,
                         exact_text=reads.exact_text)

    # -- the whole file ---------------------------------------------------------------------------
    def run(self) -> ParsedTrace:
        """Parse the whole file. Raises TraceError for bad input."""
        self.out.mkdir()
        self.pending.mkdir()
        src = ByteSource(self.path, salvage=self.salvage)
        splitter = TraceSplitter(src, chunk_size=self.chunk_size, salvage=self.salvage)
        counts = {t: 0 for t in [*EVENT_TABLES, "launches"]}
        issues: list[Issue] = []
        device_pids: dict[str, int | None] = {}
        pending_parts: list[str] = []
        x_with_cat = 0
        odd_rows = 0
        exact_text = False

        def add(out: _ChunkOut | None) -> None:
            nonlocal x_with_cat, exact_text, odd_rows
            if out is None:
                return
            for t, k in out.counts.items():
                counts[t] += k
            issues.extend(out.issues)
            x_with_cat += out.x_with_cat
            odd_rows += out.odd_rows
            device_pids.update(out.device_pids)
            if out.pending_part is not None:
                pending_parts.append(out.pending_part)
            exact_text = exact_text or out.exact_text

        inflight: deque[Future[_ChunkOut | None]] = deque()
        prev = None
        try:
            for i, chunk in enumerate(splitter.chunks()):
                job = _Job(i, chunk, prev)
                inflight.append(self.workers.pool.submit(self._work, job))
                prev = job
                while len(inflight) >= 3 or (inflight and inflight[0].done()):
                    add(inflight.popleft().result())
                    if self.progress:
                        self.progress.update(src.raw_bytes)
                if self.progress:
                    self.progress.update(src.raw_bytes)
            while inflight:
                add(inflight.popleft().result())
        finally:
            for f in inflight:  # after an error: let running jobs finish before the staging dir goes
                with contextlib.suppress(BaseException):  # the first error is the one reported
                    f.result()
        elements = prev.next_base if prev is not None else 0
        issues.extend(file_issues(self.path, src, splitter, elements or 0))
        return ParsedTrace(path=self.path, staging=self.staging, out=self.out, source=src, splitter=splitter,
                           counts=counts, issues=issues, x_with_cat=x_with_cat, device_pids=device_pids,
                           odd_rows=odd_rows,
                           pending_parts=pending_parts, exact_text=exact_text)


def file_issues(path: str, src: ByteSource, splitter: TraceSplitter, elements: int) -> list[Issue]:
    """The issues of a whole file once its ``elements`` elements of traceEvents are read: input found and not
    read, a truncated tail, a damaged gzip stream. Raises TraceError when no element was read."""
    issues: list[Issue] = []
    gz = ""
    if src.gzip_truncated:
        gz = f" ({src.gzip_error})" if src.gzip_error else " (gzip stream cut short)"
    if elements == 0:
        if splitter.truncated:
            raise TraceError(path, f"truncated trace{gz}: no complete event before the end of the file",
                             offset=splitter.tail_offset)
        raise TraceError(path, "traceEvents is empty: nothing to ingest", offset=splitter.events_offset)
    issues.extend((None, off, kind, detail) for off, kind, detail in splitter.ignored)
    if splitter.truncated:
        issues.append((None, splitter.tail_offset, "truncated_tail", (splitter.tail_detail or (
            f"file ends inside an event: {splitter.dropped_tail_bytes} bytes of an incomplete last event "
            "dropped")) + gz))
    elif src.gzip_truncated:
        # the JSON text is complete, but the gzip stream is cut short or corrupt after it (e.g. no trailer):
        # nothing is lost, the stream's checksum could not be verified
        if src.gzip_trailing:  # every member read and verified; what follows them is not gzip
            issues.append((None, src.json_bytes, "gzip_damaged", f"{src.gzip_error}; ignored (the JSON text "
                           "before it is complete and its checksum verified)"))
        else:
            issues.append((None, src.json_bytes, "gzip_damaged",
                           (src.gzip_error or "gzip stream cut short") + " after the end of the JSON text; "
                           "nothing lost, its checksum not verified"))
    return issues


def _read_sql(con: duckdb.DuckDBPyConnection, sql: str, nbytes: int) -> tuple:
    """Run a statement that reads a chunk file of ``nbytes`` bytes (its first row). DuckDB's JSON reader reserves
    buffers of several times the largest event (a 60 MB event asks for 512 MB, most of it never touched), and so
    does the extraction of its args: when that exceeds the connection's limit, the statement runs again with a
    limit that allows it (``_raise_limit``), kept until the chunk is written. What the process really uses grows
    with the largest event, not with the reservation."""
    try:
        return con.execute(sql).fetchone() or ()
    except duckdb.OutOfMemoryException:
        if not _raise_limit(con, nbytes):
            raise
    return con.execute(sql).fetchone() or ()


def _raise_limit(con: duckdb.DuckDBPyConnection, nbytes: int) -> bool:
    """Raise the memory limit of a worker's connection for a chunk of ``nbytes`` bytes holding a huge event; False
    when it is already that high."""
    limit = max(1 << 30, 20 * nbytes)
    if _raised.get(id(con), 0) >= limit:
        return False
    con.execute(f"SET memory_limit = '{limit}B'")
    _raised[id(con)] = limit
    return True


def _reset_limit(con: duckdb.DuckDBPyConnection) -> None:
    if _raised.pop(id(con), None) is not None:
        con.execute(f"SET memory_limit = '{WORKER_MEMORY_LIMIT}'")


_raised: dict[int, int] = {}  # id of a worker connection -> its raised limit, while it works on a huge event


def _row(con: duckdb.DuckDBPyConnection, sql: str) -> tuple:
    row = con.execute(sql).fetchone()
    assert row is not None
    return row


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    return int(_row(con, sql)[0])
