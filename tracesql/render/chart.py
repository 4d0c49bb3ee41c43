"""Charts drawn from a Vega-Lite spec (https://vega.github.io/vega-lite/) by vl-convert-python, without a browser.

vl-convert-python is the optional extra tracesql[plot] (it bundles a JavaScript engine, ~85 MB installed, which
the SQL analytics do not need): without it, drawing raises one UsageError line saying what to install. External
data is refused while drawing (allowed_base_urls=[]): a chart shows only the values in its spec.

Characters that XML 1.0 cannot hold (C0 controls other than tab, newline and carriage return; lone surrogates;
U+FFFE, U+FFFF) are drawn as U+FFFD: vl-convert-python writes them into its SVG as they are, and one in a title
aborts the whole process (vl-convert-python 1.9). A name such as a kernel's with an escape sequence in it is
drawn with that one character replaced; the spec itself (.json, the data in an HTML page) keeps it.
"""
from __future__ import annotations

import re
from types import ModuleType

from tracesql.render.svg import clean

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _drawable(value):
    """``value`` (a spec, or part of one) with every string fit for XML (see the module's docstring)."""
    if isinstance(value, str):
        return _NOT_XML.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_drawable(k): _drawable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_drawable(v) for v in value]
    return value


def _vl_convert(what: str) -> ModuleType:
    from tracesql.errors import UsageError

    try:
        import vl_convert
    except ImportError:
        raise UsageError(f"writing {what} needs vl-convert-python (pip install 'tracesql[plot]'); "
                         "--plot FILE.json needs nothing") from None
    return vl_convert


def svg(spec: dict, what: str = "a chart", standalone: bool = True) -> str:
    """The chart as an SVG document, checked and written again by render.svg.clean (``standalone=False``: to be
    placed inside an HTML page, without namespace declarations). ``what`` names the output in the message when
    vl-convert-python is missing."""
    return clean(_vl_convert(what).vegalite_to_svg(_drawable(spec), allowed_base_urls=[]), standalone)


def png(spec: dict, what: str = "a chart") -> bytes:
    """The chart as a PNG image."""
    return _vl_convert(what).vegalite_to_png(_drawable(spec), allowed_base_urls=[])
