"""SVG as tracesql writes it: parsed, checked and serialised again through tracesql.escape.

Charts are drawn by a renderer tracesql does not control (vl-convert-python runs Vega in an embedded JavaScript
engine), and their text holds kernel, op and GPU names from trace and spec files. `clean` does not pass that SVG on
as it comes: it parses it as XML (so a name can only be text or an attribute value), keeps the drawing elements of
ELEMENTS and refuses anything else (scripts, foreign objects, event-handler attributes, links or url() references
outside the document), and writes the tree again with escape.xml_text and escape.xml_attr. Comments, processing
instructions and a doctype are dropped. The result is a standalone SVG file and, unchanged, valid SVG inside an
HTML page, where no text of it can end the element or open another.

The only URLs in the output are the namespace names declared on the root element (NAMESPACES): identifiers that
no SVG or HTML reader fetches.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from tracesql.escape import xml_attr, xml_text

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
_XML_NS = "http://www.w3.org/XML/1998/namespace"
NAMESPACES = {"xmlns": SVG_NS, "xmlns:xlink": XLINK_NS}
_PREFIX = {XLINK_NS: "xlink", _XML_NS: "xml"}

# What Vega's SVG renderer draws with (marks, axes, legends, titles, clips, gradients).
ELEMENTS = frozenset({"svg", "g", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text",
                      "tspan", "title", "desc", "defs", "clipPath", "linearGradient", "radialGradient", "stop"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_OUTSIDE_REF = re.compile(r"url\(\s*(?!['\"]?#)", re.I)  # url(...) that is not a reference into the document


def _split(tag: str) -> tuple[str, str]:
    if tag.startswith("{"):
        ns, _, local = tag[1:].partition("}")
        return ns, local
    return "", tag


def _element_name(tag: str) -> str:
    ns, local = _split(tag)
    if ns != SVG_NS or local not in ELEMENTS:
        raise ValueError(f"the chart's SVG has an element tracesql does not write: {tag!r}")
    return local


def _attribute(key: str, value: str) -> str:
    ns, local = _split(key)
    if not _NAME.match(local) or (ns and ns not in _PREFIX):
        raise ValueError(f"the chart's SVG has an attribute tracesql does not write: {key!r}")
    name = f"{_PREFIX[ns]}:{local}" if ns else local
    if local.lower().startswith("on"):
        raise ValueError(f"the chart's SVG has an event handler: {name}")
    if (local == "href" and not value.startswith("#")) or _OUTSIDE_REF.search(value):
        raise ValueError(f"the chart's SVG refers outside itself: {name}={value[:60]!r}")
    return f' {name}="{xml_attr(value)}"'


def _write(el: ET.Element, out: list[str], root: bool, standalone: bool = True) -> None:
    name = _element_name(el.tag)
    ns = "".join(f' {k}="{v}"' for k, v in NAMESPACES.items()) if root and standalone else ""
    head = f"<{name}{ns}{''.join(_attribute(k, v) for k, v in el.attrib.items())}"
    children = list(el)
    if not el.text and not children:
        out.append(head + "/>")
        return
    out.append(head + ">")
    if el.text:
        out.append(xml_text(el.text))
    for child in children:
        _write(child, out, False)
        if child.tail:
            out.append(xml_text(child.tail))
    out.append(f"</{name}>")


def clean(svg: str, standalone: bool = True) -> str:
    """The SVG document ``svg`` (text) checked and serialised again (see the module's docstring); ValueError when it
    does not parse or holds something outside what tracesql writes. ``standalone=False``: without the namespace
    declarations, for an ``<svg>`` inside an HTML page, where the HTML parser gives the element and ``xlink:``
    attributes their namespaces itself (the page then names no URL at all)."""
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as e:
        raise ValueError(f"the chart's SVG does not parse ({e})") from None
    if _split(root.tag) != (SVG_NS, "svg"):
        raise ValueError(f"the chart is not an SVG document (root element {root.tag!r})")
    out: list[str] = []
    _write(root, out, True, standalone)
    return "".join(out)
