"""HTML pages: self-contained files (no external URL, no script that runs), every name through tracesql.escape.

A page is ``page(title, body)``, where ``body`` is markup made by the helpers here: ``text`` for any text (kernel,
op, GPU and file names included), ``json_script`` for data, ``chart`` for a chart. Nothing from a trace enters the
markup through string formatting. A chart is inline SVG drawn at write time (render.chart, needs
vl-convert-python), with its Vega-Lite spec beside it as JSON data for reuse; no JavaScript is needed to see it.
The page's Content-Security-Policy forbids scripts and every load outside the file, so a browser would refuse them
even if some markup slipped through.
"""
from __future__ import annotations

import re
from pathlib import Path

from tracesql.escape import html_text, script_json

CSP = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = ("body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}figure{margin:0 0 1.5em}"
         "figure svg{max-width:100%;height:auto}")
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


def page(title: str, body: str, extra_style: str = "") -> str:
    """A complete HTML document: ``title`` is text (escaped here), ``body`` markup made by this module's helpers,
    ``extra_style`` CSS of tracesql's own added to the page's."""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{text(CSP)}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{text(title)}</title>\n<style>{STYLE}{extra_style}</style>\n</head>\n<body>\n{body}\n"
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
