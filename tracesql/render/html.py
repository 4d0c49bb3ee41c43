"""HTML pages: self-contained files (no external URL, no script but one fixed one of ours), every name through
tracesql.escape.

A page is ``page(title, body)``, where ``body`` is markup made by the helpers here: ``text`` for any text (kernel,
op, GPU and file names included), ``json_script`` for data, ``chart`` for a chart. Nothing from a trace enters the
markup through string formatting. A chart is inline SVG drawn at write time (render.chart, needs
vl-convert-python), with its Vega-Lite spec beside it as JSON data for reuse; no JavaScript is needed to see it.
The page's Content-Security-Policy forbids every load outside the file and every script but, on a page made with
``sortable=True``, ``SORT_SCRIPT``: a constant of this module (no data enters it), allowed by its SHA-256 hash
(computed at import), which makes the tables sortable by a click on a column's header. A browser would refuse any
other script even if some markup slipped through, and without JavaScript the page reads the same, unsorted.
"""
from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from tracesql.escape import html_text, script_json

# Click a column's header to sort the table's rows by it (again: the other way); Enter or Space on a focused header
# does the same. A number cell (class "n", written with thousands separators) sorts by its value, largest first on
# the first click; other cells by their text, A to Z (digits in text by value); empty cells last either way; equal
# keys keep their order. The header of the sorted column carries aria-sort.
SORT_SCRIPT = """(function () {
  "use strict";
  function key(td) {
    var t = td.textContent;
    if (t === "") { return null; }
    if (td.classList.contains("n")) {
      var s = t.replace(/,/g, "");
      var v = s === "inf" ? Infinity : s === "-inf" ? -Infinity : Number(s);
      return isNaN(v) ? null : v;
    }
    return t;
  }
  function compare(a, b) {
    if (typeof a === "number" && typeof b === "number") { return a < b ? -1 : a > b ? 1 : 0; }
    if (typeof a === "number") { return -1; }
    if (typeof b === "number") { return 1; }
    return a.localeCompare(b, undefined, {numeric: true});
  }
  function sort(table, th, col) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (tr, i) {
      return {tr: tr, i: i, k: col < tr.cells.length ? key(tr.cells[col]) : null};
    });
    var numeric = keyed.some(function (r) { return typeof r.k === "number"; });
    var was = th.getAttribute("aria-sort");
    var dir = was === "descending" ? 1 : was === "ascending" ? -1 : numeric ? -1 : 1;
    keyed.sort(function (a, b) {
      if (a.k === null || b.k === null) { return a.k === b.k ? a.i - b.i : a.k === null ? 1 : -1; }
      return dir * compare(a.k, b.k) || a.i - b.i;
    });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    keyed.forEach(function (r) { body.appendChild(r.tr); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table"), function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    table.classList.add("sortable");
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sort(table, th, col); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(table, th, col); }
      });
    });
  });
})();"""


def script_hash(source: str) -> str:
    """The Content-Security-Policy source that allows the inline script ``source`` (its text exactly):
    ``'sha256-<base64>'``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


SORT_SCRIPT_HASH = script_hash(SORT_SCRIPT)
assert "</" not in SORT_SCRIPT and "<!--" not in SORT_SCRIPT  # nothing that could end or hide the element
CSP = "default-src 'none'; style-src 'unsafe-inline'"
CSP_SORTABLE = f"{CSP}; script-src {SORT_SCRIPT_HASH}"  # the one script a page may run
STYLE = ("body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}figure{margin:0 0 1.5em}"
         "figure svg{max-width:100%;height:auto}")
SORTABLE_STYLE = ("table.sortable th{cursor:pointer;user-select:none;white-space:nowrap}"
                  "table.sortable th[aria-sort=ascending]::after{content:\" \\25B2\"}"
                  "table.sortable th[aria-sort=descending]::after{content:\" \\25BC\"}")
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
_SURROGATE = re.compile("[\ud800-\udfff]")


def text(s: object) -> str:
    """``s`` as HTML text (also fit for a quoted attribute value). A lone surrogate, which UTF-8 cannot hold, becomes
    U+FFFD, as an HTML parser reads a reference to one."""
    return html_text(_SURROGATE.sub("\ufffd", str(s)))


def _id(element_id: str) -> str:
    if not _ID.match(element_id):  # ids are tracesql's own names, never a trace's
        raise ValueError(f"not an element id: {element_id!r}")
    return element_id


def page(title: str, body: str, extra_style: str = "", sortable: bool = False) -> str:
    """A complete HTML document: ``title`` is text (escaped here), ``body`` markup made by this module's helpers,
    ``extra_style`` CSS of tracesql's own added to the page's. ``sortable``: the page ends with ``SORT_SCRIPT``
    (its tables sort by a click on a header) and its Content-Security-Policy allows that script alone."""
    csp, style, script = CSP, STYLE + extra_style, ""
    if sortable:
        csp, style, script = CSP_SORTABLE, style + SORTABLE_STYLE, f"<script>{SORT_SCRIPT}</script>\n"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{text(csp)}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{text(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n{body}\n{script}"
            "</body>\n</html>\n")


def json_script(value: object, element_id: str) -> str:
    """``value`` as JSON data in the page: ``<script type="application/json" id="...">``, which a browser does not
    run and whose text no name can end (escape.script_json). Read back with
    ``json.loads(element.textContent)``."""
    return f"<script type=\"application/json\" id=\"{_id(element_id)}\">{script_json(value)}</script>"


def chart(spec: dict, element_id: str) -> str:
    """A chart: ``<figure id="ID">`` holding the chart drawn as inline SVG, then its Vega-Lite spec as JSON data
    (``json_script``, id ``ID-spec``) without its ``$schema`` URL, which Vega-Lite does not need. Raises UsageError
    without vl-convert-python."""
    from tracesql.render.chart import svg

    drawing = svg(spec, what=".html", standalone=False)
    data = {k: v for k, v in spec.items() if k != "$schema"}
    return (f"<figure id=\"{_id(element_id)}\">\n{drawing}\n</figure>\n"
            + json_script(data, f"{element_id}-spec"))


def write(path: str | Path, html: str) -> None:
    """Write a page (UTF-8, as its meta element says; encoded before the file is opened, so that a failure leaves
    no partial file)."""
    Path(path).write_bytes(html.encode("utf-8"))
