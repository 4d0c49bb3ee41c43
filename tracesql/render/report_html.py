"""The report as one HTML page: the first screen, then each section with its heading, what it means, its charts (inline
SVG, drawn at write time: render.html.chart) and its table. Self-contained: no external URL, every name through
tracesql.escape, and one script, render.html.SORT_SCRIPT (allowed by its hash, no other: render.html's
Content-Security-Policy), which sorts a table by the column whose header is clicked; without it the page reads the
same, each table in its section's order.
"""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tracesql.render import html
from tracesql.render.sections import Section

MAX_ROWS = 200  # table rows shown per section and trace (the CSV/JSON/Parquet outputs have them all)

STYLE = ("table{border-collapse:collapse;font-size:12px;margin:.5em 0 1.5em}"
         "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
         "td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f3f3}"
         "pre{background:#f8f8f8;padding:1em;overflow-x:auto;font-size:12px}"
         "section{margin-bottom:2em}p.about{color:#555;max-width:60em}nav li{margin:.1em 0}")


def _cell(v: object) -> tuple[str, bool]:
    """A table cell's text and whether it is a number."""
    if v is None:
        return "", False
    if isinstance(v, bool):
        return str(v).lower(), False
    if isinstance(v, float):
        return f"{v:,.3f}", True
    if isinstance(v, int):
        return f"{v:,}", True
    return str(v), False


def table(df: pl.DataFrame, max_rows: int = MAX_ROWS) -> str:
    """The frame as an HTML table (its first ``max_rows`` rows, then a line saying how many are left out)."""
    cols = [c for c in df.columns if c != "trace_id"]
    head = "".join(f"<th>{html.text(c)}</th>" for c in cols)
    body = []
    for row in df.head(max_rows).select(cols).iter_rows():
        cells = []
        for v in row:
            t, num = _cell(v)
            cells.append(f"<td class=\"n\">{html.text(t)}</td>" if num else f"<td>{html.text(t)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = (f"<p>{html.text(f'{df.height - max_rows:,} more rows: tracesql report --out DIR writes them all')}</p>"
            if df.height > max_rows else "")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


def page(title: str, first_screen: str | None, sections: list[Section]) -> tuple[str, dict[str, dict]]:
    """The page, and its charts' specs by element id (chart-<section>-<n>), which the page also holds as JSON data."""
    parts = [f"<h1>{html.text(title)}</h1>"]
    if first_screen:
        parts.append(f"<pre id=\"first-screen\">{html.text(first_screen)}</pre>")
    parts.append("<nav><ul>" + "".join(f"<li><a href=\"#{_sid(s.name)}\">{html.text(s.title or s.name)}</a></li>"
                                       for s in sections) + "</ul></nav>")
    specs: dict[str, dict] = {}
    for s in sections:
        body = [f"<section id=\"{_sid(s.name)}\"><h2>{html.text(s.title or s.name)}</h2>"]
        if s.about:
            body.append(f"<p class=\"about\">{html.text(s.about)}</p>")
        for i, (_, spec) in enumerate(s.charts, start=1):
            cid = f"chart-{_sid(s.name)}-{i}"
            specs[cid] = spec
            body.append(html.chart(spec, cid))
        body.append(table(s.frame) if s.frame.height else "<p>no rows</p>")
        parts.append("".join(body) + "</section>")
    return html.page(title, "\n".join(parts), extra_style=STYLE, sortable=True), specs


def _sid(name: str) -> str:
    """An element id of a section name (section names are tracesql's own: letters, digits, underscores)."""
    return "s-" + "".join(c if c.isalnum() or c in "_-" else "-" for c in name)


def write(text: str, specs: dict[str, dict], output: str | None = None, out: str | None = None,
          page_name: str = "report.html") -> list[Path]:
    """Write a page made by ``page``: at ``output``, or with ``out`` as DIR/``page_name`` with each chart's Vega-Lite
    spec beside it (DIR/charts/<id>.vl.json, for reuse). Returns the files written, the page first."""
    written: list[Path] = []
    if out is not None:
        (Path(out) / "charts").mkdir(parents=True, exist_ok=True)
        for cid, spec in specs.items():
            written.append(Path(out) / "charts" / f"{cid}.vl.json")
            written[-1].write_text(json.dumps(spec, ensure_ascii=False, indent=1) + "\n")
        output = str(Path(out) / page_name)
    if output is None:
        raise ValueError("write needs output or out")
    html.write(output, text)
    return [Path(output), *written]
