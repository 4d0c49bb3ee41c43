"""The output formats of a report: each is one entry of ``FORMATS`` that writes a document
(tracesql.render.sections.Document), whoever built it (the native report, the peer styles, the archive report,
``diff``); nothing else chooses how a format looks.

Where a document goes:
  printed     ``table`` (the first screen, then each table fitted to the width unless whole), ``csv`` (a
              ``# section`` line before each table), ``json`` (one object keyed by section; per-trace sections
              hold one entry per trace label) on a stream, or whole into one file (``output``)
  a folder    one file per section (``out``: txt, csv, json or parquet), with a sub-folder per trace when the
              sections cover several traces
  one file    ``html`` (the page: tracesql.render.report_html, charts drawn inline; ``out`` also writes each
              chart's Vega-Lite spec) and ``xlsx`` (one sheet per section: tracesql.render.xlsx)
"""
from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import polars as pl

from tracesql.errors import UsageError
from tracesql.escape import file_name, terminal_text, unique_name
from tracesql.render.sections import Document, Section


@dataclass(frozen=True)
class Format:
    """How one format writes a document: ``text`` (printed, or whole into one file) and ``file`` (one section into
    one file of a folder), or ``document`` for a format that is one file whatever the destination."""

    ext: str = ""
    text: Callable[[Document, int | None, bool], str] | None = None  # (document, width or None, whole)
    file: Callable[[Section, Path], None] | None = None
    document: Callable[[Document, str | None, str | None], list[Path]] | None = None  # (doc, output, out)
    charts: bool = False   # draws charts: the report computes them only for such a format
    head: bool = False     # shows the first screen (printed or in one file)
    head_width: int | None = None  # the first screen's width in this format (None: the terminal's)


# ---- printed ------------------------------------------------------------------------------------------------

def _label(s: Section, escaped: bool = True) -> str:
    if s.trace is None:
        return s.name
    return f"{s.name} ({terminal_text(s.trace) if escaped else s.trace})"  # on a terminal, a label on one line


def _table_text(doc: Document, width: int | None, whole: bool) -> str:
    """Printed: each table fitted to ``width`` (None: as wide as it is) and cut to the printed rows; ``whole``
    (into a file): every row and column."""
    from tracesql.render.output import format_table

    parts = [doc.head + "\n"] if doc.head else []
    for s in doc.sections:
        table = format_table(s.frame, max_rows=None) if whole else format_table(s.frame, width=width)
        parts.append(f"== {_label(s, escaped=not whole)}\n{table}\n\n")
    return "".join(parts)


def _csv_text(doc: Document, width: int | None, whole: bool) -> str:
    from tracesql.render.output import csv_frame

    return "".join(f"# {_label(s)}\n{csv_frame(s.frame).write_csv()}\n" for s in doc.sections)


def _json_text(doc: Document, width: int | None, whole: bool) -> str:
    from tracesql.render.output import frame_json

    out: dict = {}
    for s in doc.sections:
        if s.trace is None:
            out[s.name] = frame_json(s.frame)
        else:
            out.setdefault(s.name, {})[s.trace] = frame_json(s.frame)
    return json.dumps(out, ensure_ascii=False) + "\n"


# ---- one file per section ------------------------------------------------------------------------------------

def _table_file(s: Section, path: Path) -> None:
    from tracesql.render.output import format_table

    path.write_text(format_table(s.frame, max_rows=None) + "\n")


def _csv_file(s: Section, path: Path) -> None:
    from tracesql.render.output import csv_frame

    if s.frame.height == 0 and s.empty_csv is not None:
        path.write_text(s.empty_csv)
    elif s.csv_head is not None:
        path.write_text(s.csv_head + csv_frame(s.frame).write_csv(include_header=False))
    else:
        csv_frame(s.frame).write_csv(path)  # lists as text (tracesql.render.output.csv_frame)


def _json_file(s: Section, path: Path) -> None:
    path.write_text(s.frame.write_json() + "\n")


def _parquet_file(s: Section, path: Path) -> None:
    s.frame.write_parquet(path)


def safe_name(s: str) -> str:
    """A trace label as a file or folder name (tracesql.escape.file_name: never '.' or '..', no separator or
    control character, bounded length), without its .json/.json.gz suffix."""
    return file_name(re.sub(r"\.json(\.gz)?$", "", s or ""))


def folders(labels: list[str]) -> dict[str, str]:
    """A folder name per trace label, unique (the labels are; the safe names may meet)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for label in labels:
        base = safe_name(label)
        name, n = base, 2
        while name.lower() in used:  # compared without case, for file systems that ignore it
            name, n = unique_name(base, n), n + 1
        used.add(name.lower())
        out[label] = name
    return out


def per_trace(sections: list[Section], across: frozenset[str] = frozenset()) -> list[Section]:
    """Sections split by trace: a section over every trace (trace None, with a ``trace`` column) becomes one section
    per trace label; sections of one trace already, those without a ``trace`` column and those named in ``across``
    (the traces side by side) stay as they are."""
    from dataclasses import replace

    def split(s: Section) -> bool:
        return s.trace is None and "trace" in s.frame.columns and s.name not in across

    labels = sorted({s.trace for s in sections if s.trace is not None}
                    | {x for s in sections if split(s)
                       for x in s.frame.get_column("trace").unique().to_list() if x is not None})
    out = []
    for s in sections:
        if not split(s):
            out.append(s)
            continue
        out.extend(replace(s, frame=s.frame.filter(pl.col("trace") == label), trace=label) for label in labels)
    return out


def _write_folder(doc: Document, fmt: Format, out: str, across: frozenset[str]) -> list[Path]:
    assert fmt.file is not None
    split = per_trace(doc.sections, across)
    labels = sorted({s.trace for s in split if s.trace is not None} | set(doc.traces or ()))
    names = folders(labels) if len(labels) > 1 else {}
    for folder in [Path(out)] + [Path(out) / f for f in names.values()]:
        folder.mkdir(parents=True, exist_ok=True)
    written = []
    for s in split:
        if (s.trace in doc.without_gpu or s.if_rows) and s.frame.height == 0:
            continue
        folder = Path(out) / names[s.trace] if s.trace is not None and names else Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{s.name}.{fmt.ext}"
        fmt.file(s, path)
        written.append(path)
    return written


# ---- one file of the whole document ------------------------------------------------------------------------

def _html(doc: Document, output: str | None, out: str | None) -> list[Path]:
    from tracesql.render.report_html import page, write

    if (output is None) == (out is None):
        raise UsageError("the HTML report is one file: give --output FILE (or --out DIR for the page and its "
                         "charts' specs)")
    text, specs = page(doc.title, doc.head or None, doc.sections)
    return write(text, specs, output=output, out=out, page_name=doc.page_name)


def _xlsx(doc: Document, output: str | None, out: str | None) -> list[Path]:
    from tracesql.render.xlsx import write_workbook

    if output is None or out is not None:
        raise UsageError("--format xlsx writes one workbook: give --output FILE (no --out)")
    if len(traces := {s.trace for s in doc.sections if s.trace is not None}) > 1:
        raise UsageError(f"--format xlsx writes the workbook of one trace and the report has {len(traces)}: give "
                         "--trace")
    write_workbook(output, [(s.name, s.frame.with_columns((pl.col(c) == "True").alias(c) for c in s.frame.columns
                                                        if c in s.bool_columns and s.frame.schema[c] == pl.String))
                            for s in doc.sections])
    return [Path(output)]


FORMATS: dict[str, Format] = {
    "table": Format(ext="txt", text=_table_text, file=_table_file, head=True),
    "csv": Format(ext="csv", text=_csv_text, file=_csv_file),
    "json": Format(ext="json", text=_json_text, file=_json_file),
    "parquet": Format(ext="parquet", file=_parquet_file),
    "html": Format(document=_html, charts=True, head=True, head_width=120),
    "xlsx": Format(document=_xlsx),
}


def write(doc: Document, fmt: str, output: str | None = None, out: str | None = None, stream: IO[str] | None = None,
          width: int | None = None, across: frozenset[str] = frozenset()) -> list[Path]:
    """Write the document in format ``fmt``: into the folder ``out`` (one file per section; ``across``: sections
    of every trace side by side, written once at its top, not split by trace), into the file ``output``, or
    printed on ``stream`` (default stdout) with tables fitted to ``width`` (None: as wide as they are). Returns
    the files written (none when printed)."""
    from tracesql.render.output import write_text

    f = FORMATS[fmt]
    if f.document is not None:
        return f.document(doc, output, out)
    if out is not None:
        if f.file is None:
            raise UsageError(f"--format {fmt} cannot be written into a folder")
        return _write_folder(doc, f, out, across)
    if f.text is None:
        raise UsageError(f"--format {fmt} needs --out DIR")
    text = f.text(doc, width, output is not None)
    if output is not None:
        write_text(text, output)
    else:
        (stream or sys.stdout).write(text)
    return []
