"""A report as data: a ``Document`` (a title, an optional first screen, a list of ``Section``). The native report,
the peer styles, the archive report and ``diff`` build documents (tracesql.api.report, tracesql.api.archive_report,
tracesql.cli.diff); the formats write them (tracesql.render.formats).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl


@dataclass
class Section:
    """One section of a report: a frame and what is said of it."""

    name: str                    # its name: the file name (without extension) in a folder, the JSON key, the sheet
    frame: pl.DataFrame          # its rows
    trace: str | None = None     # the trace label (or TraceLens job) it belongs to; None: a frame over every trace
    title: str = ""              # its heading on the page (default: the name)
    about: str = ""              # one line on what it means
    charts: list[tuple[str, dict]] = field(default_factory=list)  # (trace label, Vega-Lite spec) drawn on the page
    empty_csv: str | None = None  # the text of its CSV file when the frame has no rows (None: the header line)
    csv_head: str | None = None  # the header lines of its CSV file in place of the column names (pandas's two levels)
    bool_columns: frozenset[str] = frozenset()  # text columns holding "True"/"False": booleans in a workbook
    if_rows: bool = False        # shown only where it has rows: a trace's folder leaves it out when the trace has none

    @property
    def heading(self) -> str:
        return self.title or self.name


@dataclass
class Document:
    """A whole report."""

    sections: list[Section]
    title: str = "tracesql report"  # the page's title
    head: str = ""                  # the first screen's text: printed before the tables, the page's first block
    traces: list[str] | None = None  # labels of every trace covered: each gets its folder with ``out``
    without_gpu: frozenset[str] = frozenset()  # labels of traces without GPU events: sections without rows skipped
    page_name: str = "report.html"  # the page's file name in a folder (html with ``out``)


