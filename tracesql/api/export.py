"""Traces written back as one Chrome trace-event JSON document (what ui.perfetto.dev and chrome://tracing load),
or as Perfetto's protobuf trace, rebuilt from the dataset's tables, with tracesql's analyses as optional overlays.

The SQL library builds every event's text (sql/export/chrome_json.sql: export_chrome_events, the overlays in
export_chrome_overlays); this module streams them into the file: ``{"traceEvents":[...], <header>}``, gzip when
the name ends in ``.gz``, written to a temporary file beside it and renamed into place at the end, so a failed
export leaves no partial file. A name ending in ``.pftrace`` or ``.perfetto-trace`` (``.gz`` after it: gzip)
gets the protobuf format: the same events in track order (sql/export/track_order.sql) written as TrackEvent
packets by tracesql.render.perfetto.
"""
from __future__ import annotations

import gzip
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import orjson

from tracesql.escape import sql_str
from tracesql.render.perfetto import Written

PROTO_SUFFIXES = (".pftrace", ".perfetto-trace")
# the overlays export_chrome_events and export_chrome_overlays can add (docs/export.md)
OVERLAYS = ("gpu", "queue", "copies", "memory", "gaps", "critical")
BATCH_ROWS = 50_000


@dataclass(frozen=True)
class Exported:
    """What ``write`` wrote: the file, the traces (in their order in the document), the events rebuilt from the
    tables and the events the overlays added."""

    path: Path
    trace_ids: tuple[str, ...]
    events: int
    overlay_events: int
    perfetto: Written | None = None   # the protobuf format's counts (None for JSON)


def _check_overlays(overlays) -> list[str]:
    from tracesql.errors import UsageError

    names = list(dict.fromkeys(overlays or ()))
    if "all" in names:
        return list(OVERLAYS)
    unknown = [n for n in names if n not in OVERLAYS]
    if unknown:
        raise UsageError(f"unknown overlay {unknown[0]!r}: choose from {', '.join(OVERLAYS)} or all")
    return names


def _header(ds, ids: list[str]) -> dict:
    """The document's other fields: a single trace's own header fields; for several, the display unit and the
    list of the merged traces (their order gives the pid and id numbering, sql/export/chrome_json.sql)."""
    rows = ds.con.sql(
        "SELECT trace_id, file_name, rank, header::VARCHAR, display_time_unit FROM traces "
        "WHERE list_contains($ids, trace_id)", params={"ids": ids}).fetchall()
    by_id = {r[0]: r for r in rows}
    if len(ids) == 1:
        head = orjson.loads(by_id[ids[0]][3]) if by_id[ids[0]][3] else {}
        head.pop("traceEvents", None)
        return head
    return {"displayTimeUnit": by_id[ids[0]][4] or "ms",
            "tracesql_merged_traces": [{"ordinal": i, "trace_id": t, "file_name": by_id[t][1], "rank": by_id[t][2],
                                        "pid_base": (i + 1) * 1_000_000, "id_offset": i * 100_000_000_000}
                                       for i, t in enumerate(ids)]}


def _ordered_ids(ds, trace: str | None) -> list[str]:
    """The traces to export: one (``trace``) or all, in rank order (then label)."""
    from tracesql.api.analysis import trace_ids

    ids = trace_ids(ds, trace)
    if len(ids) > 1:
        order = ds.con.sql("SELECT t.trace_id FROM traces t JOIN trace_labels l USING (trace_id) "
                           "WHERE list_contains($ids, t.trace_id) ORDER BY t.rank NULLS LAST, l.label, t.trace_id",
                           params={"ids": ids}).fetchall()
        ids = [r[0] for r in order]
    return ids


def _prepare(ds, trace: str | None, overlays) -> tuple[list[str], list[str]]:
    from tracesql.errors import EmptySelection

    names = _check_overlays(overlays)
    ids = _ordered_ids(ds, trace)
    if not ids:
        raise EmptySelection("the dataset has no trace to export")
    return ids, names


def _sources(ids: list[str], names: list[str]) -> tuple[str, str | None]:
    """The queries of the document's events (export_chrome_events) and of its overlay events
    (export_chrome_overlays; None without overlays), with the columns part (0, 1), ordinal, event_id, event_json."""
    lit = "[" + ", ".join(sql_str(i) for i in ids) + "]::VARCHAR[]"
    events = f"SELECT 0 AS part, ordinal, event_id, event_json FROM export_chrome_events({lit}, {'gpu' in names})"
    extra = [n for n in names if n != "gpu"]
    if not extra:
        return events, None
    ov = "[" + ", ".join(sql_str(n) for n in extra) + "]::VARCHAR[]"
    return events, f"SELECT 1 AS part, ordinal, NULL AS event_id, event_json FROM export_chrome_overlays({lit}, {ov})"


def _stream(ds, out, ids: list[str], names: list[str]) -> tuple[int, int]:
    """Write the document to the binary file ``out``; the events rebuilt and the overlay events written."""
    head = orjson.dumps(_header(ds, ids))
    events_q, overlays_q = _sources(ids, names)
    queries = [f"SELECT event_json FROM ({events_q}) ORDER BY ordinal, event_id NULLS LAST"]
    if overlays_q:
        queries.append(f"SELECT event_json FROM ({overlays_q}) ORDER BY ordinal, event_json")
    counts = []
    out.write(b'{"traceEvents":[\n')
    first = True
    for q in queries:
        n = 0
        for batch in ds.con.sql(q).to_arrow_reader(BATCH_ROWS):
            lines = batch.column(0).to_pylist()
            if lines:
                out.write((b"" if first else b",\n") + ",\n".join(lines).encode())
                first = False
                n += len(lines)
        counts.append(n)
    out.write(b"\n]" + (b"," + head[1:] if head != b"{}" else b"}"))
    return counts[0], sum(counts[1:])


def _stream_proto(ds, out, ids: list[str], names: list[str]) -> tuple[int, int, Written]:
    """Write the events as Perfetto protobuf packets to the binary file ``out``; the events rebuilt, the overlay
    events, and the writer's counts."""
    from tracesql.errors import UsageError

    try:
        from tracesql.render.perfetto import PerfettoWriter
        writer = PerfettoWriter(out)
    except ImportError:
        raise UsageError("the protobuf format needs the perfetto package: pip install 'tracesql[perfetto]'") from None
    events_q, overlays_q = _sources(ids, names)
    doc = events_q + (f" UNION ALL {overlays_q}" if overlays_q else "")
    q = (f"WITH doc AS ({doc}) SELECT ph, pid, tid, ts_ns, dur_ns, event_json, overlay "
         "FROM export_track_order('doc') "
         "ORDER BY ph <> 'M', pid NULLS FIRST, tid NULLS FIRST, ts_ns, kind_order, dur_ns DESC, seq")
    events = extra = 0
    for batch in ds.con.sql(q).to_arrow_reader(BATCH_ROWS):
        for ph, pid, tid, ts, dur, text, overlay in zip(*(c.to_pylist() for c in batch.columns), strict=True):
            writer.add(ph, pid, tid, ts, dur, text)
            if overlay:
                extra += 1
            else:
                events += 1
    return events, extra, writer.close()


def write(ds, path, trace: str | None = None, overlays=()) -> Exported:
    """Write the traces (``trace``: one; None: every trace of the dataset, merged) to ``path`` as Chrome trace
    JSON, or as Perfetto's protobuf format when the name ends in .pftrace or .perfetto-trace (gzip when it ends
    in ``.gz``). ``overlays``: any of OVERLAYS, or 'all'."""
    from tracesql.errors import UsageError

    path = Path(path)
    if not path.parent.is_dir():
        raise UsageError(f"{path}: its folder {path.parent} does not exist")
    ids, names = _prepare(ds, trace, overlays)
    proto = path.name.removesuffix(".gz").endswith(PROTO_SUFFIXES)
    written = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            gz = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) if path.name.endswith(".gz") \
                else None
            out = gz or raw
            if proto:
                events, extra, written = _stream_proto(ds, out, ids, names)
            else:
                events, extra = _stream(ds, out, ids, names)
            if gz is not None:
                gz.close()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Exported(path, tuple(ids), events, extra, written)


def write_to(ds, out, trace: str | None = None, overlays=()) -> Exported:
    """Write the document to the open binary file ``out`` (standard output, say): uncompressed JSON."""
    ids, names = _prepare(ds, trace, overlays)
    events, extra = _stream(ds, out, ids, names)
    return Exported(Path("-"), tuple(ids), events, extra)
