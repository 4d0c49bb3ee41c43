"""Escaping of untrusted text (kernel, op and file names come from trace files anyone can write).

Anything that renders such a name into another language goes through one of these helpers, never through plain
string formatting:

- ``html_text(s)``: text or a quoted attribute value in an HTML page.
- ``xml_text(s)``, ``xml_attr(s)``: text and a quoted attribute value in XML (an SVG file, or SVG inside an HTML
  page), where a newline, tab or carriage return in an attribute must be a character reference to read back as itself.
- ``script_json(value)``: a JSON value inside ``<script>`` (a name holding ``</script>`` cannot close the element).
- ``py_str(s)``: a Python string literal in a generated script (e.g. a replay script); ``py_comment(s)`` for a
  ``#`` comment line.
- ``sql_str(s)``, ``sql_ident(s)``, ``sql_like(s)``: a SQL string literal, a quoted identifier, a LIKE pattern
  that matches ``s`` literally (use with ``ESCAPE '\\'``). Prefer query parameters where the API allows them.
- ``terminal_text(s)``: one line of plain text for a terminal or a log (control, bidirectional and zero-width
  characters made visible).
- ``glob_escape(path)``, ``sql_path(path, glob)``: a file path as a DuckDB file pattern matching only itself, and
  as a SQL string literal of it (for the paths DuckDB reads; paths it writes only need ``sql_str``);
  ``path_text(path)``: a path whose name is not UTF-8 as text (its other bytes as ``\\xNN``).
- ``file_name(s)``, ``unique_name(base, n)``: a file or folder name made from a name (never ``.``/``..``, no
  separator, no control character, bounded length).

Each returns a ``str`` that, read back by its language, gives exactly ``s`` (``py_comment`` and ``terminal_text``
only keep it on one line; ``file_name`` only keeps it inside its folder).

Who calls them: the HTML and SVG that tracesql writes (`tracesql perf --plot FILE.html|.svg`) are built by
tracesql.render (``html_text``, ``script_json``, ``xml_text``, ``xml_attr``). CSV, JSON and Parquet are written by
polars, which quotes and encodes values itself. Terminal tables (tracesql.render.output), the call tree and the
first screen show names through ``terminal_text``, and so does every one-line error and warning of the command
line (tracesql.cli). The report's sub-folders and TraceLens's tag file names come from ``file_name`` and
``unique_name`` (tracesql.api.report). ``sql_str``, ``glob_escape`` and ``sql_path`` quote
every path the ingest and the dataset's views give DuckDB; ``path_text`` the file names stored with a trace.
tests/test_escape.py covers every helper against hostile names, and tests/test_hostile_names.py every file format
tracesql writes against a trace made of them.
"""
from __future__ import annotations

import json
import re

_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
_HTML_RE = re.compile("[&<>\"']")


def html_text(s: str) -> str:
    """``s`` for HTML text or a quoted attribute value: & < > " ' become character references."""
    return _HTML_RE.sub(lambda m: _HTML[m.group()], str(s))


# XML reads a raw tab, newline or carriage return in an attribute value back as a space, and a raw carriage return
# in text as a newline: character references keep them. (XML 1.0 cannot hold the other C0 controls at all.)
_XML_ATTR = {**_HTML, "\t": "&#x9;", "\n": "&#xA;", "\r": "&#xD;"}
_XML_ATTR_RE = re.compile("[&<>\"'\t\n\r]")
_XML_TEXT_RE = re.compile("[&<>\"'\r]")


def xml_text(s: str) -> str:
    """``s`` for XML (or HTML) element text: as ``html_text``, and a carriage return as ``&#xD;``."""
    return _XML_TEXT_RE.sub(lambda m: _XML_ATTR[m.group()], str(s))


def xml_attr(s: str) -> str:
    """``s`` for a quoted XML (or HTML) attribute value: as ``html_text``, and tab, newline and carriage return as
    character references."""
    return _XML_ATTR_RE.sub(lambda m: _XML_ATTR[m.group()], str(s))


# Inside <script>, the HTML parser ends the element at "</script" and treats "<!--" specially, whatever the
# JavaScript says; U+2028/U+2029 end a line in older JavaScript; a lone surrogate cannot be written in UTF-8.
# Escaping these as \uXXXX keeps the JSON equal.
_SCRIPT_RE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def script_json(value) -> str:
    """JSON text of ``value`` that is safe inside an HTML ``<script>`` element."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return _SCRIPT_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def py_str(s: str) -> str:
    """A Python string literal that evaluates to ``s``: repr() escapes quotes, backslashes and every character
    that is not printable (newlines, control characters, line separators, lone surrogates)."""
    return repr(str(s))


# What a terminal acts on or draws as nothing: C0 and C1 controls (NUL, ESC, newline, carriage return, DEL...), the
# bidirectional controls that reorder what follows (U+061C, U+200E/F, U+202A-E, U+2066-9), zero-width characters
# (U+200B-D, U+2060, U+FEFF), line and paragraph separators and lone surrogates.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
                      "\ud800-\udfff]")


def terminal_text(s) -> str:
    """``s`` on one line: control characters (newlines, ESC and NUL included), bidirectional and zero-width
    characters, line separators and lone surrogates are shown as escapes (``\\x1b``, ``\\u202e``), so a name
    cannot start a new line, move the cursor, change colours, reorder the text after it or hide in plain sight.
    ``None`` is the empty string."""
    if s is None:
        return ""
    s = str(s)
    if _CONTROL.search(s) is None:
        return s
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)


# A file or folder name made from a name: letters, digits, '.', '_' and '-' only, never starting with '.' (so never
# '.' or '..', nor hidden), at most FILE_NAME_MAX characters (well under every file system's 255 bytes).
FILE_NAME_MAX = 100
_NOT_FILE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(s, default: str = "trace") -> str:
    """A safe file or folder name for ``s`` (a trace label, a tag): every run of other characters (separators
    ``/`` and ``\\``, control characters, spaces, non-ASCII) becomes one ``_``, leading dots and dashes are
    dropped, the result is cut to FILE_NAME_MAX characters; ``default`` when nothing is left. The name cannot be
    ``.`` or ``..``, hold a separator or start an option. Different names may give the same result: make names
    unique where they are used (``unique_name``)."""
    out = _NOT_FILE.sub("_", "" if s is None else str(s)).lstrip(".-")[:FILE_NAME_MAX].rstrip(".")
    return out or default


def unique_name(base: str, n: int) -> str:
    """The ``n``-th alternative to the file name ``base`` when it is taken: ``base_N``, still at most
    FILE_NAME_MAX characters."""
    suffix = f"_{n}"
    return base[:FILE_NAME_MAX - len(suffix)] + suffix


def py_comment(s: str) -> str:
    """Text for a ``# ...`` comment line of generated Python: kept on one line (see ``terminal_text``)."""
    return terminal_text(s)


def sql_str(s: str) -> str:
    """A SQL string literal ('...', quotes doubled) whose value is ``s``. A NUL character, which cannot appear in
    query text, is spelled ``chr(0)``."""
    parts = str(s).split("\x00")
    lits = ["'" + p.replace("'", "''") + "'" for p in parts]
    return lits[0] if len(lits) == 1 else "(" + " || chr(0) || ".join(lits) + ")"


def sql_ident(s: str) -> str:
    """A quoted SQL identifier ("...", quotes doubled) naming ``s`` (a NUL character is refused)."""
    s = str(s)
    if "\x00" in s:
        raise ValueError("a SQL identifier cannot contain a NUL character")
    return '"' + s.replace('"', '""') + '"'


def sql_like(s: str, escape: str = "\\") -> str:
    """A LIKE pattern matching ``s`` literally: % _ and the escape character are escaped. Use it inside
    ``sql_str`` (or as a parameter) with ``ESCAPE '\\'``."""
    s = str(s)
    return s.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")


_GLOB_RE = re.compile(r"[*?\[]")


def glob_escape(path) -> str:
    """``path`` as a DuckDB file pattern that matches only itself: ``*``, ``?`` and ``[`` each become a one-character
    class (``[*]``, ``[?]``, ``[[]``). DuckDB expands these in every path it reads (``read_parquet``, ``read_json``,
    ``read_text``, also in a list of files), so a dataset named ``ds[1]`` would otherwise read ``ds1``. Append the
    pattern part (``/*.parquet``) after escaping."""
    return _GLOB_RE.sub(lambda m: f"[{m.group()}]", str(path))


def sql_path(path, glob: str = "") -> str:
    """A SQL string literal naming the file ``path`` for DuckDB to read (glob characters escaped, quotes doubled),
    followed by the pattern ``glob`` as given (e.g. ``/*.parquet``). For a file DuckDB writes (``COPY ... TO``),
    which is never expanded, use ``sql_str``."""
    return sql_str(glob_escape(path) + glob)


def path_text(path) -> str:
    """A file path as UTF-8 text to store or show: the bytes of a name that are not UTF-8 (which Python keeps as
    lone surrogates, PEP 383) become ``\\xNN``; the rest is kept as it is."""
    s = str(path)
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
