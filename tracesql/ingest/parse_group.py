"""The parse of many small files at once: one read and one Parquet write per table for a group of files.

A file whose events fit in one chunk costs the parse about ten statements (the read into table ``c``, the route
counts, one COPY per table), whatever its size: binding and planning them is most of a 1 MB file's parse. A group
of such files (``Group``: up to GROUP_JSON_BYTES of JSON or GROUP_FILES files) is parsed in one go instead:

1. ``Group.add`` reads a file whole (``jsonstream``: decompressed, hashed, split into one chunk) and writes its
   events as a chunk file in the file's own work area; a file that needs more than the plain path offers (more
   than one chunk, a ts/dur that is not a plain JSON number: read.py's CAREFUL mode, any error) is not taken:
   the caller parses it alone (parse.py), where its issues are found and reported as always.
2. ``Group.parse`` reads the chunk files of each read mode with one ``read_json`` over the list of them into
   table ``c`` (``trace_key``: the file's place in the group; ``ord`` renumbered within each file), and writes
   each table with one COPY partitioned by ``trace_key`` (extract.py), whose files are moved to where the file's
   own parse would have written them: ``<work area>/out/<table>/part-00000.parquet``.

What each file gets is what its parse alone gives: the same rows, event ids, counts and issues (a
``ParsedTrace`` each). Should a read or a write of the group fail, nothing of it is kept and each of its files
is parsed alone, so that only a file that fails alone fails.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from tracesql.errors import TraceError
from tracesql.escape import sql_str
from tracesql.ingest.extract import copy_partitioned, partition_files
from tracesql.ingest.jsonstream import ByteSource, TraceSplitter
from tracesql.ingest.parse import EMPTY_EVENT, ROUTE_STATS, Issue, ParsedTrace, file_issues
from tracesql.ingest.read import ReadMode, chunk_select, classify, rewrite
from tracesql.store.schema import EVENT_TABLES

# A file is parsed in a group when its JSON text is at most this large (one chunk of the plain parse).
SMALL_FILE_JSON_BYTES = 8 << 20
# A group holds at most this much JSON (a chunk of a large file: what a worker's connection reads at once) ...
GROUP_JSON_BYTES = 32 << 20
# ... and at most this many files.
GROUP_FILES = 64


@dataclass
class _Member:
    """A file of the group, read and written as a chunk file, waiting for the group's parse."""

    key: int  # its place in the group (trace_key)
    path: str
    staging: Path
    source: ByteSource
    splitter: TraceSplitter
    chunk_file: Path
    mode: ReadMode
    exact_text: bool


class Group:
    """Small files whose parse is one read and one write per table (module docstring)."""

    def __init__(self, salvage: bool):
        self.salvage = salvage
        self.members: list[_Member] = []

    def add(self, path: str, staging: Path) -> bool:
        """Read ``path`` whole into the work area ``staging`` as a member of the group; False when the file is to
        be parsed alone (module docstring; nothing of it is kept in ``staging`` then)."""
        src = ByteSource(path, salvage=self.salvage)
        splitter = TraceSplitter(src, chunk_size=SMALL_FILE_JSON_BYTES, salvage=self.salvage)
        try:
            chunks = list(splitter.chunks())
        except (TraceError, OSError):
            return False  # the parse alone reports it
        if len(chunks) != 1:
            return False
        data = chunks[0].data
        mode, exact = classify(data)
        if mode is ReadMode.CAREFUL:
            return False
        chunk_file = staging / "group_chunk.json"
        with open(chunk_file, "wb") as f:
            f.write(b"[")
            f.write(rewrite(data, mode))
            f.write(b"]")
        self.members.append(_Member(key=len(self.members), path=path, staging=staging, source=src,
                                    splitter=splitter, chunk_file=chunk_file, mode=mode, exact_text=exact))
        return True

    def parse(self, con: duckdb.DuckDBPyConnection, work: Path) -> list[ParsedTrace | TraceError | None]:
        """Parse the members (``con``: a worker's connection; ``work``: a new directory for the group's
        partitioned writes, removed afterwards). Returns for each member, in the order added, its ParsedTrace, the
        TraceError its parse alone would raise (a file without events), or None: the file is to be parsed alone,
        as the group's read failed on it (a malformed event, found alone). Raises OSError when the group cannot
        be parsed together; the members' work areas then hold nothing of it."""
        try:
            out: dict[int, ParsedTrace | TraceError | None] = {}
            for mode in (ReadMode.DOUBLE, ReadMode.EXACT):
                members = [m for m in self.members if m.mode is mode]
                if members:
                    out.update(self._parse_halves(con, members, mode, work))
            return [out[m.key] for m in self.members]
        except BaseException:
            for m in self.members:
                _clear(m)
            raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
            for m in self.members:
                m.chunk_file.unlink(missing_ok=True)

    def _parse_halves(self, con: duckdb.DuckDBPyConnection, members: list[_Member], mode: ReadMode,
                      work: Path) -> dict[int, ParsedTrace | TraceError | None]:
        """``_parse_mode``; when DuckDB rejects the read or a write, each half again, down to the file it fails on
        (None: parsed alone)."""
        try:
            return self._parse_mode(con, members, mode, work / f"{mode.value}-{members[0].key}-{len(members)}")
        except duckdb.Error as e:
            if isinstance(e, duckdb.InterruptException) or "interrupted" in str(e).lower():
                raise
            for m in members:
                _clear(m)
            if len(members) == 1:
                return {members[0].key: None}
            half = len(members) // 2
            return {**self._parse_halves(con, members[:half], mode, work),
                    **self._parse_halves(con, members[half:], mode, work)}

    def _parse_mode(self, con: duckdb.DuckDBPyConnection, members: list[_Member], mode: ReadMode,
                    work: Path) -> dict[int, ParsedTrace | TraceError | None]:
        work.mkdir(parents=True)
        files = [str(m.chunk_file) for m in members]
        keys = ", ".join(f"({sql_str(f)}, {m.key})" for f, m in zip(files, members, strict=True))
        # ord numbers the rows of all files in the order of the list (one thread): renumbered within each file
        con.execute(f"CREATE OR REPLACE TEMP TABLE g AS {chunk_select(files, mode, 0)}")
        con.execute(f"""CREATE OR REPLACE TEMP TABLE c AS
            SELECT k.trace_key, g.ord - f.skip AS ord, g.* EXCLUDE (ord, filename)
            FROM g JOIN (SELECT filename, min(ord) - 1 AS skip FROM g GROUP BY filename) f USING (filename)
                   JOIN (VALUES {keys}) k(filename, trace_key) USING (filename)
            ORDER BY k.trace_key, ord""")
        con.execute("DROP TABLE g")
        stats: dict[int, list[tuple]] = {m.key: [] for m in members}
        for key, *row in con.execute(f"SELECT trace_key, route, {ROUTE_STATS} FROM c GROUP BY trace_key, route "
                                     "ORDER BY trace_key, route").fetchall():
            stats[key].append(tuple(row))
        empties: dict[int, list[int]] = {}
        for key, eid in con.execute("SELECT trace_key, ord - 1 FROM c WHERE route = 'empty' "
                                    "ORDER BY trace_key, ord").fetchall():
            empties.setdefault(key, []).append(eid)
        routes = {r[0] for rows in stats.values() for r in rows} - {"empty"}
        src_tpl = "(SELECT ord - 1 AS event_id, * EXCLUDE (ord) FROM c WHERE route = '{r}')"
        written: dict[str, dict[str, tuple[Path, int]]] = {}
        for route in sorted(routes):
            if route == "x_nocat":
                written["pending"] = _copy_pending(con, work, src_tpl.format(r=route))
                continue
            written[route] = copy_partitioned(con, work, route, src_tpl.format(r=route), "trace_key")
            if route == "events":
                written["launches"] = copy_partitioned(con, work, "launches", src_tpl.format(r=route), "trace_key")
        con.execute("DROP TABLE c")
        parsed: dict[int, ParsedTrace | TraceError | None] = {}
        for m in members:
            out, pending = m.staging / "out", m.staging / "pending"
            out.mkdir()
            pending.mkdir()
            counts = {t: 0 for t in [*EVENT_TABLES, "launches"]}
            pending_parts: list[str] = []
            for table, files_by_key in written.items():
                got = files_by_key.get(str(m.key))
                if got is None:
                    continue
                if table == "pending":
                    dest = pending / "part-00000.parquet"
                    pending_parts.append(str(dest))
                else:
                    (out / table).mkdir()
                    dest = out / table / "part-00000.parquet"
                    counts[table] = got[1]
                os.rename(got[0], dest)
            rows = stats[m.key]
            elements = sum(r[1] for r in rows)
            issues: list[Issue] = [(eid, None, *EMPTY_EVENT) for eid in empties.get(m.key, [])]
            try:
                issues += file_issues(m.path, m.source, m.splitter, elements)
            except TraceError as e:
                parsed[m.key] = e
                continue
            dev = [(d["pid"], d["device"]) for r in rows for d in (r[4] or [])]
            parsed[m.key] = ParsedTrace(
                path=m.path, staging=m.staging, out=out, source=m.source, splitter=m.splitter, counts=counts,
                issues=issues, x_with_cat=sum(r[2] for r in rows), device_pids=dict(dev),
                pending_parts=pending_parts, exact_text=m.exact_text,
                odd_rows=sum(r[3] for r in rows if r[0] != "empty"))
        return parsed


def _clear(m: _Member) -> None:
    """Remove what a failed parse of the group wrote for member ``m``."""
    for d in ("out", "pending"):
        shutil.rmtree(m.staging / d, ignore_errors=True)


def _copy_pending(con: duckdb.DuckDBPyConnection, work: Path, src: str) -> dict[str, tuple[Path, int]]:
    """Complete events without a category, as the chunk's columns (finalize.py routes them), one file per file of
    the group."""
    d = work / "pending"
    return partition_files(con.execute(f"COPY {src} TO {sql_str(str(d))} (FORMAT parquet, COMPRESSION lz4_raw, "
                                       "PARTITION_BY (trace_key), RETURN_STATS)"), "trace_key")
