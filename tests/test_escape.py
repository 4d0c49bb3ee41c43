"""Escaping helpers against hostile kernel/op names: each rendering reads back as exactly the name, and nothing in
the name escapes into the surrounding language."""
from __future__ import annotations

import ast
import html
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracesql.escape import (
    FILE_NAME_MAX,
    file_name,
    html_text,
    py_comment,
    py_str,
    script_json,
    sql_ident,
    sql_like,
    sql_str,
    terminal_text,
    unique_name,
    xml_attr,
    xml_text,
)

HOSTILE = [
    "</script>",
    "</SCRIPT><script>alert(1)</script>",
    '"); import os; os.system("x") #',
    "'; DROP TABLE kernels; --",
    "void gemm<float, 128>(float const*, int&) [with T = \"x\"]",
    "a\nimport os\nos.system('x')",
    "<!-- x --> & &amp; <img src=x onerror=alert(1)>",
    "back\\slash \\\" \\' \\n",
    "nul\x00byte",
    "line\u2028separator\u2029",
    "\x1b[31mred\x1b[0m",
    "100%_done",
    "''''",
    '""""',
    "",
]


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.data: list[str] = []
        self.attrs: list[dict] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.append(dict(attrs))

    def handle_endtag(self, tag):
        self.tags.append("/" + tag)

    def handle_data(self, data):
        self.data.append(data)


@pytest.mark.parametrize("name", HOSTILE)
def test_html_text(name):
    page = f'<td title="{html_text(name)}">{html_text(name)}</td>'
    p = _Collect()
    p.feed(page)
    p.close()
    assert p.tags == ["td", "/td"]  # no element came from the name
    assert p.attrs == [{"title": name}]
    assert "".join(p.data) == name
    assert html.unescape(html_text(name)) == name
    assert not set("<>\"'") & set(html_text(name))


@pytest.mark.parametrize("name", HOSTILE)
def test_script_json(name):
    value = {"kernels": [name, {"name": name}]}
    text = script_json(value)
    page = f"<script>const data = {text};</script>"
    assert re.findall(r"</script", page, re.I) == ["</script"]  # only the real end tag
    assert "<!--" not in text and "<" not in text
    assert json.loads(text) == value
    p = _Collect()
    p.feed(page)
    p.close()
    assert p.tags == ["script", "/script"]


# What XML 1.0 cannot hold, even as a character reference (render.chart draws these as U+FFFD)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
XML_NAMES = [n for n in HOSTILE if not _NOT_XML.search(n)] + ["tab\tnew\nline\r\ncr\r", "]]> <![CDATA[x]]>"]


@pytest.mark.parametrize("name", XML_NAMES)
def test_xml_text_and_attr(name):
    doc = f'<svg xmlns="http://www.w3.org/2000/svg"><text aria-label="{xml_attr(name)}">{xml_text(name)}</text></svg>'
    root = ET.fromstring(doc)  # as XML: one element, its attribute and its text exactly the name
    [el] = list(root)
    assert (el.tag, el.attrib, el.text or "", list(el)) == ("{http://www.w3.org/2000/svg}text", {"aria-label": name},
                                                            name, [])
    p = _Collect()  # as HTML (inline SVG in a page): the same
    p.feed(doc)
    p.close()
    assert p.tags == ["svg", "text", "/text", "/svg"]
    assert p.attrs[1] == {"aria-label": name} and "".join(p.data) == name
    assert not set("<>\"'\t\n\r") & set(xml_attr(name)) and "\r" not in xml_text(name)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\ufffe\uffff"
                                      + "".join(map(chr, range(0x20))).replace("\t", "").replace("\n", "")
                                      .replace("\r", ""))))
def test_xml_round_trip_for_any_text(s):
    el = ET.fromstring(f'<t a="{xml_attr(s)}">{xml_text(s)}</t>')
    assert el.get("a") == s and (el.text or "") == s


def test_script_json_keeps_a_lone_surrogate():
    text = script_json(["a\ud800b"])
    assert text == '["a\\ud800b"]' and json.loads(text) == ["a\ud800b"]
    text.encode("utf-8")  # a page holding it can be written


@pytest.mark.parametrize("name", HOSTILE)
def test_py_str_in_a_generated_script(name):
    src = f"# kernel: {py_comment(name)}\nname = {py_str(name)}\nnames = [{py_str(name)}, {py_str(name)}]\n"
    tree = ast.parse(src)
    # the script is exactly two assignments of constants: no call, no import came from the name
    assert [type(n).__name__ for n in tree.body] == ["Assign", "Assign"]
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Call, ast.Import, ast.ImportFrom, ast.Attribute))]
    ns: dict = {}
    exec(compile(tree, "<replay>", "exec"), {"__builtins__": {}}, ns)  # noqa: S102 - checked above: constants only
    assert ns == {"name": name, "names": [name, name]}
    assert "\n" not in py_comment(name)


@pytest.mark.parametrize("name", HOSTILE)
def test_sql_literal_identifier_and_like(name):
    con = duckdb.connect()
    con.execute("CREATE TABLE kernels (name VARCHAR)")
    con.execute("INSERT INTO kernels VALUES (?), ('other'), ('100 done')", [name])
    # a literal: the query returns the name and runs nothing else
    assert con.execute(f"SELECT {sql_str(name)}").fetchall()[0][0] == name
    assert con.execute(f"SELECT count(*) FROM kernels WHERE name = {sql_str(name)}").fetchall()[0][0] == 1
    # a LIKE pattern built from the name matches it literally, nothing else (% and _ are not wildcards)
    pat = sql_str("%" + sql_like(name) + "%")
    got = con.execute(f"SELECT name FROM kernels WHERE name LIKE {pat} ESCAPE '\\' ORDER BY 1").fetchall()
    assert got == sorted([(n,) for n in (name, "other", "100 done") if name in n])
    if "\x00" not in name:
        # an identifier: a column and a table named after the kernel
        con.execute(f"CREATE TABLE {sql_ident(name or 'empty')} AS SELECT 1 AS {sql_ident(name or 'empty')}")
        assert con.execute(f"SELECT {sql_ident(name or 'empty')} FROM {sql_ident(name or 'empty')}").fetchone() == (1,)
    else:
        with pytest.raises(ValueError):
            sql_ident(name)
    # the kernels table survived every name
    assert con.execute("SELECT count(*) FROM kernels").fetchall()[0][0] == 3


def test_terminal_text():
    assert terminal_text("\x1b[31mred\x1b[0m\nnext") == "\\x1b[31mred\\x1b[0m\\nnext"
    assert terminal_text("gemm<float> ü") == "gemm<float> ü"
    assert terminal_text("a\u2028b\ud800") == "a\\u2028b\\ud800"


def test_terminal_text_shows_nul_bidi_and_zero_width_characters():
    assert terminal_text("k\x00e\x9bx") == "k\\x00e\\x9bx"  # NUL and a C1 control (CSI)
    assert terminal_text("abc\u202edef\u2066g\u200fh") == "abc\\u202edef\\u2066g\\u200fh"  # reorder what follows
    assert terminal_text("zero\u200bwidth\ufeff") == "zero\\u200bwidth\\ufeff"
    assert terminal_text(None) == "" and terminal_text(12) == "12"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_terminal_text_leaves_nothing_a_terminal_acts_on(s):
    shown = terminal_text(s)
    assert not re.search("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]",
                         shown)
    if not re.search("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]", s):
        assert shown == s  # plain text is left as it is


HOSTILE_FILES = ["...json", "..json", "..", ".", "", "...", "../../etc/passwd", "a/b\\c", "-rf", ".hidden",
                 "bad\n\x1b[2J", "\u202eevil", "nul\x00", "x" * 300, "é" * 50, "con", " . "]


@pytest.mark.parametrize("name", HOSTILE_FILES)
def test_file_name(name, tmp_path):
    f = file_name(name)
    assert f not in ("", ".", "..") and not f.startswith((".", "-"))
    assert re.fullmatch(r"[A-Za-z0-9._-]+", f) and len(f) <= FILE_NAME_MAX, f
    (tmp_path / f).mkdir()  # a folder of that name is where it should be
    assert [p.name for p in tmp_path.iterdir()] == [f] and (tmp_path / f).resolve().parent == tmp_path.resolve()


@settings(max_examples=300, deadline=None)
@given(st.text(), st.integers(min_value=2, max_value=10**6))
def test_file_name_for_any_text(s, n):
    for f in (file_name(s), unique_name(file_name(s), n)):
        assert re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", f) and len(f) <= FILE_NAME_MAX
        assert f not in (".", "..")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_round_trips_for_any_text(s):
    assert html.unescape(html_text(s)) == s
    assert json.loads(script_json(s)) == s
    assert ast.literal_eval(py_str(s)) == s
    assert "\n" not in py_comment(s) and "\r" not in py_comment(s)
    assert "</" not in script_json(s)


_CON = duckdb.connect()


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"])))
def test_sql_round_trip_for_any_text(s):
    con = _CON
    assert con.execute(f"SELECT {sql_str(s)}").fetchall()[0][0] == s
    assert con.execute(f"SELECT {sql_str(s)} LIKE {sql_str(sql_like(s))} ESCAPE '\\'").fetchall()[0][0] is True


@pytest.mark.parametrize("name", HOSTILE)
def test_sql_like_with_another_escape_character(name):
    con = duckdb.connect()
    pat = sql_like(name, escape="!")
    assert con.execute(f"SELECT {sql_str(name)} LIKE {sql_str(pat)} ESCAPE '!'").fetchall()[0][0] is True
    assert con.execute(f"SELECT {sql_str(name + 'x')} LIKE {sql_str(pat)} ESCAPE '!'").fetchall()[0][0] is False
    if "%" in name or "_" in name:  # wildcards in the name are matched literally
        other = name.replace("%", "a").replace("_", "b")
        assert con.execute(f"SELECT {sql_str(other)} LIKE {sql_str(pat)} ESCAPE '!'").fetchall()[0][0] is False
