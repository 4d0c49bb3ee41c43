"""Hostile names in every file tracesql writes.

A hand-made trace whose kernel names, op names, op argument values and GPU name hold markup (``</script><img
onerror>``), both quotes, ``<`` and ``&``, a newline, a comment opener and a CDATA end. Each output format is read
back and gives exactly those names: the CSV, JSON and Parquet of the commands (`query`, `kernels`, `perf`), the
report's CSV and JSON files (`report --out DIR`), and the roofline chart (`perf --plot` as .json, .svg, .html).

The HTML and SVG outputs are also read as an attacker would want them read: no ``</script`` but the end of the
page's own JSON element, no ``<img``, no comment or CDATA section, only the elements tracesql writes, and no URL:
an SVG file names only the namespaces declared on its ``<svg>`` element (tracesql.render.svg.NAMESPACES: the SVG
and XLink namespaces, identifiers that no reader fetches), an HTML page none. The SVG parses as XML (xml.etree) on
its own and inside the page. The HTML report (`report --format html`) holds the same names as text, and runs one
script, its own (render.html.SORT_SCRIPT, allowed by its hash): a browser that runs it shows the names as text, and
sorting a table by them keeps them text.
"""
from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

import tracesql
from tests.test_perf_model_infer import STEP_D, _fi_decode  # a FlashInfer decode op the model covers
from tracesql.cli.main import main
from tracesql.escape import html_text
from tracesql.render.html import SORT_SCRIPT, SORT_SCRIPT_HASH, script_hash
from tracesql.render.svg import ELEMENTS, NAMESPACES, SVG_NS

H = "</script><img src=x onerror=alert(1)>\"'<&\n<!--]]>"
# FlashInfer's op names carry the module's uri between a fixed prefix and suffix, so this hostile name is modelled
# and drawn in the roofline chart; aten::mm is modelled whatever its scalar arguments hold; BAD_OP is not modelled.
FI_OP = "batch_decode_with_kv_cache_" + H + "::run"
BAD_OP = "hostile::op" + H
MM_ARG, BAD_TYPE, BAD_ARG = "arg" + H, "type" + H, "arg2" + H
KERNELS = {"fi_kernel" + H: 1, "mm_kernel" + H: 1, "op_kernel" + H: 2}
TRACE_GPU = "GPU" + H
ARCH_GPU = H.replace("\n", "")  # the device spec file is read line by line: no newline in a field

_fi = _fi_decode(8, 32, 8)
# (op name, Input Dims, Input type, Concrete Inputs, kernel name)
OPS = [
    (FI_OP, _fi[1], _fi[2], _fi[3], "fi_kernel" + H),
    ("aten::mm", [[64, 128], [128, 32]], ["float", "float"], [MM_ARG, ""], "mm_kernel" + H),
    (BAD_OP, [[4], []], ["float", BAD_TYPE], ["", BAD_ARG], "op_kernel" + H),
    (BAD_OP, [[4], []], ["float", BAD_TYPE], ["", BAD_ARG], "op_kernel" + H),
]


def _trace() -> dict:
    ev: list[dict] = [{"ph": "X", "cat": "user_annotation", "name": STEP_D, "pid": 1, "tid": 1, "ts": 995,
                       "dur": 100 * len(OPS) + 10}]
    for i, (name, dims, types, conc, kernel) in enumerate(OPS):
        ts, corr = 1000 + 100 * i, 10 + i
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 50,
                   "args": {"Input Dims": dims, "Input type": types, "Concrete Inputs": conc,
                            "Input Strides": [[] for _ in dims]}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 1,
                   "dur": 5, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": ts + 20, "dur": 20,
                   "args": {"device": 0, "stream": 7, "correlation": corr}})
    return {"schemaVersion": 1, "traceEvents": ev, "deviceProperties": [{"id": 0, "name": TRACE_GPU}]}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[str, str]:
    """(dataset, device spec file naming the GPU ARCH_GPU with H100-like peaks)."""
    d = tmp_path_factory.mktemp("hostile")
    (d / "t.json").write_text(json.dumps(_trace()))
    [r] = tracesql.ingest([str(d / "t.json")], out=d / "ds", quiet=True)
    assert r.status == "ingested", r.error
    with (d / "arch.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["gpu", "name_pattern", "fp32_tflops", "bf16_tflops", "memory_tb_s"])
        w.writerow([ARCH_GPU, ".", "67", "989.4", "3.35"])
    return str(d / "ds"), str(d / "arch.csv")


def _read(path: Path) -> list[dict]:
    """Rows of a file tracesql wrote, by its suffix."""
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    return pl.read_parquet(path).to_dicts()


def _run(*argv: str) -> None:
    assert main(list(argv)) == 0, argv


@pytest.fixture(scope="module")
def short(hostile) -> dict[str, str]:
    """{kernel name: short name}: the name that kernel_summary and perf --by kernel show (template arguments <...>
    dropped); each keeps some hostile characters."""
    with tracesql.open(hostile[0]) as d:
        names = dict(d.sql("SELECT name, _short_kernel_name(name) FROM kernels").rows())
    assert len(set(names.values())) == 3 and all(s.endswith("\"'&\n") for s in names.values())
    return names


def test_query_round_trip(hostile, tmp_path):
    ds, _ = hostile
    sql = ("SELECT * FROM (SELECT ts_ns, cat, name, input_types::VARCHAR AS types, concrete_inputs::VARCHAR AS conc "
           "FROM events WHERE cat = 'cpu_op' UNION ALL SELECT ts_ns, 'kernel', name, '', '' FROM kernels) "
           "ORDER BY ts_ns")
    want = []
    for name, _dims, types, conc, kernel in OPS:
        want += [("cpu_op", name, types, conc), ("kernel", kernel, "", "")]
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"events.{fmt}"
        _run("query", ds, sql, "-f", fmt, "-o", str(out))
        got = [(r["cat"], r["name"], json.loads(r["types"]) if r["types"] else "",
                json.loads(r["conc"]) if r["conc"] else "") for r in _read(out)]
        assert got == want, fmt


def test_kernels_round_trip(hostile, tmp_path):
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"kernels.{fmt}"
        _run("kernels", hostile[0], "--verbose", "-f", fmt, "-o", str(out))
        assert {r["name"]: int(r["count"]) for r in _read(out)} == KERNELS, fmt


def test_perf_round_trip(hostile, short, tmp_path):
    """perf's frames (`tracesql perf --arch FILE [--by kernel]`) through the writer the command uses: each perf
    computation takes a second or more, so each is made once."""
    from tracesql.render.output import write_frame

    ds, arch = hostile
    with tracesql.open(ds) as d:
        by_args, by_kernel = d.perf(arch=arch), d.perf(arch=arch, by="kernel")
    for fmt in ("csv", "json", "parquet"):
        write_frame(by_args, fmt, str(tmp_path / f"perf.{fmt}"))
    write_frame(by_kernel, "csv", str(tmp_path / "perf_kernels.csv"))
    fi_args = "(" + ", ".join(f"'{c}'" for c in _fi[3]) + ")"
    for fmt in ("csv", "json", "parquet"):
        got = {r["op_name"]: (r["gpu"], r["concrete_inputs"], int(r["count"])) for r in _read(tmp_path / f"perf.{fmt}")}
        assert got == {FI_OP: (ARCH_GPU, fi_args, 1), "aten::mm": (ARCH_GPU, f"('{MM_ARG}', '')", 1)}, fmt
    got_kernels = sorted(r["kernel_name"] for r in _read(tmp_path / "perf_kernels.csv"))
    assert got_kernels == [short["fi_kernel" + H], short["mm_kernel" + H]]


def test_report_files(hostile, short, tmp_path):
    ds, _ = hostile
    for fmt in ("csv", "json"):
        out = tmp_path / fmt
        _run("report", ds, "--out", str(out), "-f", fmt)
        files = sorted(out.iterdir())
        assert {p.suffix for p in files} == {f".{fmt}"} and len(files) >= 10
        for p in files:  # every section reads back
            _read(p)
        ops = {r["op_name"]: int(r["op_count"]) for r in _read(out / f"op_summary.{fmt}")}
        assert ops == {FI_OP: 1, "aten::mm": 1, BAD_OP: 2}
        args = {r["op_name"]: r for r in _read(out / f"op_arg_summary.{fmt}")}
        assert (args[BAD_OP]["input_type"], args[BAD_OP]["concrete_inputs"], int(args[BAD_OP]["count"])) == (
            f"('float', '{BAD_TYPE}')", f"('', '{BAD_ARG}')", 2)
        assert args["aten::mm"]["concrete_inputs"] == f"('{MM_ARG}', '')"
        kernels = {r["name"]: int(r["count"]) for r in _read(out / f"kernel_summary.{fmt}")}
        assert kernels == {short[k]: n for k, n in KERNELS.items()}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self.title = ""
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in = tag
        if tag == "script":
            self.scripts.append((dict(attrs), ""))

    def handle_data(self, data):
        if self._in == "script":
            self.scripts[-1] = (self.scripts[-1][0], self.scripts[-1][1] + data)
        elif self._in == "title":
            self.title += data

    def handle_endtag(self, tag):
        self._in = None


def _no_url_but_namespaces(text: str) -> None:
    """The only URLs: the namespace declarations on the one <svg> element."""
    decl = "".join(f' {k}="{v}"' for k, v in NAMESPACES.items())
    assert text.count("<svg ") == 1 and text.count("<svg" + decl) == 1
    assert not re.search(r"https?:|//[a-z]", text.replace(decl, ""), re.I)


def _check_svg(root: ET.Element, title: str) -> None:
    """The drawing: only the elements tracesql writes, no event handler; the chart's title and the hostile op's
    point (its aria-label lists the tooltip's fields) hold the names exactly."""
    tags = {el.tag for el in root.iter()}
    assert tags <= {f"{{{SVG_NS}}}{e}" for e in ELEMENTS}
    assert not [k for el in root.iter() for k in el.attrib if k.lower().startswith("on")]
    texts = ["".join(el.itertext()) for el in root.iter(f"{{{SVG_NS}}}text")]
    assert texts.count(title) == 1
    labels = [el.get("aria-label", "") for el in root.iter(f"{{{SVG_NS}}}path")]
    assert sum(f"op: {FI_OP}; shape: " in a for a in labels) == 1
    assert sum("op: aten::mm; shape: " in a for a in labels) == 1


def test_plot_files(hostile, tmp_path):
    import vl_convert  # noqa: F401 - the .svg and .html charts need it (tracesql[plot], in the test extra)

    from tracesql.api.perf import write_plot

    ds, arch = hostile
    for suffix in (".json", ".html"):
        _run("perf", ds, "--arch", arch, "--plot", str(tmp_path / f"r{suffix}"))
    spec = json.loads((tmp_path / "r.json").read_text())
    write_plot(spec, str(tmp_path / "r.svg"))  # what --plot r.svg writes (the spec is the same)
    title = "Roofline: " + ARCH_GPU
    points = spec["layer"][-1]["data"]["values"]
    assert spec["title"] == title and sorted(p["op"] for p in points) == sorted([FI_OP, "aten::mm"])

    svg = (tmp_path / "r.svg").read_text(encoding="utf-8")
    _no_url_but_namespaces(svg)
    assert "<!--" not in svg and "]]>" not in svg and "<img" not in svg and "<script" not in svg
    _check_svg(ET.fromstring(svg), title)

    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    # the <svg> inside the page declares no namespace (the HTML parser gives it its own): no URL at all
    assert "<svg " in page and not re.search(r"https?:|//[a-z]", page, re.I)
    assert re.findall(r"</script", page, re.I) == ["</script"]  # only the end of the JSON data element
    assert not re.search(r"<img|<!--|]]>|<!\[CDATA", page, re.I)
    p = _Page()
    p.feed(page)
    p.close()
    html_tags = {"html", "head", "meta", "title", "style", "body", "figure", "script"}
    assert set(p.tags) <= html_tags | {e.lower() for e in ELEMENTS} and p.tags.count("script") == 1
    assert p.title == title
    [(attrs, data)] = p.scripts
    assert attrs == {"type": "application/json", "id": "roofline-spec"}
    assert json.loads(data) == {k: v for k, v in spec.items() if k != "$schema"}
    inline = page[page.index("<svg "):page.index("</svg>") + len("</svg>")]
    decl = "".join(f' {k}="{v}"' for k, v in NAMESPACES.items())  # as an XML document it needs them
    _check_svg(ET.fromstring(inline.replace("<svg ", f"<svg{decl} ", 1)), title)


def test_plot_without_vl_convert(hostile, tmp_path, monkeypatch, capsys):
    from tracesql.api.perf import write_plot
    from tracesql.errors import UsageError

    ds, arch = hostile
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import vl_convert raises ImportError
    out = tmp_path / "r.html"
    assert main(["perf", ds, "--arch", arch, "--plot", str(out)]) == 2  # a usage error, as for .svg and .png
    assert capsys.readouterr().err == ("tracesql: error: writing .html needs vl-convert-python (pip install "
                                       "'tracesql[plot]'); --plot FILE.json needs nothing\n")
    assert not out.exists()
    spec = {"title": H, "data": {"values": [{"x": 1}]}, "mark": "point"}
    for suffix in (".svg", ".png"):
        with pytest.raises(UsageError, match=f"^writing \\{suffix} needs vl-convert-python"):
            write_plot(spec, str(tmp_path / f"r{suffix}"))
        assert not (tmp_path / f"r{suffix}").exists()
    write_plot(spec, str(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text()) == spec


# Run in a child process: vl-convert-python 1.9 aborts the process on a control character in a title.
_UNWRITABLE = r"""
import json, sys
from tracesql.api.perf import write_plot
name = "k\x1b[31m\x00\ufffe" + sys.argv[2]
spec = {"title": name, "data": {"values": [{"x": 1, "y": 2, "op": name}]}, "mark": "point",
        "encoding": {"x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"},
                     "tooltip": [{"field": "op"}]}}
for suffix in (".svg", ".html", ".json"):
    write_plot(spec, sys.argv[1] + suffix)
"""


def test_plot_of_characters_xml_cannot_hold(tmp_path):
    import vl_convert  # noqa: F401 - the .svg and .html charts need it (tracesql[plot], in the test extra)
    r = subprocess.run([sys.executable, "-c", _UNWRITABLE, str(tmp_path / "c"), H], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    name = "k\x1b[31m\x00\ufffe" + H
    drawn = "k\ufffd[31m\ufffd\ufffd" + H  # drawn with U+FFFD in place of what XML cannot hold
    root = ET.parse(tmp_path / "c.svg").getroot()
    assert ["".join(el.itertext()) for el in root.iter(f"{{{SVG_NS}}}text")].count(drawn) == 1
    assert [el.get("aria-label") for el in root.iter(f"{{{SVG_NS}}}path") if el.get("aria-label")] == [
        f"x: 1; y: 2; op: {drawn}"]
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    p = _Page()
    p.feed(page)
    p.close()
    assert json.loads(p.scripts[0][1])["title"] == name  # the spec keeps the name as it is
    assert json.loads((tmp_path / "c.json").read_text())["title"] == name


# ---- names on the terminal, in error lines and as folder names -------------------------------------------------

# What a terminal acts on: ESC sequences (clear the screen, colours), NUL, a C1 CSI, bidirectional overrides.
TERMINAL = ["k\x1b[2J\x1b[31mred", "nul\x00k", "c1\x9b2Jk", "abc\u202egpj.exe", "iso\u2066late\u2069", "new\nline\rcr"]
_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # never printed as they are


def _small_trace(kernels: list[str], ts0: int = 1000) -> dict:
    ev: list[dict] = []
    for i, k in enumerate(kernels):
        ts, corr = ts0 + 100 * i, 10 + i
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts, "dur": 50})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 1,
                   "dur": 5, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": k, "pid": 0, "tid": 7, "ts": ts + 20, "dur": 20,
                   "args": {"device": 0, "stream": 7, "correlation": corr}})
    return {"schemaVersion": 1, "traceEvents": ev, "deviceProperties": [{"id": 0, "name": "GPU"}]}


def test_terminal_shows_control_and_bidi_characters_escaped(tmp_path, capsys, monkeypatch):
    """Kernel names holding ESC, NUL, a C1 control and bidirectional overrides: every terminal output (tables,
    tree, first screen) shows them escaped (``\\x1b``, ``\\u202e``), and each name stays on its line."""
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "t.json").write_text(json.dumps(_small_trace(TERMINAL)))
    [r] = tracesql.ingest([str(tmp_path / "t.json")], out=tmp_path / "ds", quiet=True)
    assert r.status == "ingested", r.error
    ds = str(tmp_path / "ds")
    for argv in (["kernels", ds, "-v", "--wide"], ["kernels", ds, "-v", "-f", "table", "-o", str(tmp_path / "k.txt")],
                 ["tree", ds], ["summary", ds], ["gaps", ds, "--transitions", "-v"],
                 ["query", ds, "SELECT name AS \"col\x1b[2J\" FROM kernels"]):
        capsys.readouterr()
        _run(*argv)
        out = capsys.readouterr().out
        if "-o" in argv:
            out = (tmp_path / "k.txt").read_text()
        assert not _RAW.search(out), (argv, out)
        if argv[0] == "kernels":
            assert "k\\x1b[2J\\x1b[31mred" in out and "abc\\u202egpj.exe" in out and "nul\\x00k" in out
            assert "new\\nline\\rcr" in out and "c1\\x9b2Jk" in out
    # machine formats keep the names exactly
    _run("kernels", ds, "-v", "-f", "json", "-o", str(tmp_path / "k.json"))
    assert sorted(r["name"] for r in json.loads((tmp_path / "k.json").read_text())) == sorted(TERMINAL)


def test_hostile_file_name_in_an_error_line(tmp_path):
    """A trace file whose name holds a newline and an escape sequence, and fails: its error is one line, with the
    name escaped (the line is not split, the screen is not cleared)."""
    bad = tmp_path / "bad\n\x1b[2J\u202e.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "ts": ')
    p = subprocess.run([*_cli(), "ingest", str(bad), "--out", str(tmp_path / "ds"), "-q"], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("tracesql: error: "), p.stderr
    assert "bad\\n\\x1b[2J\\u202e.json" in p.stderr and not _RAW.search(p.stderr), p.stderr
    assert "Traceback" not in p.stderr


def _cli() -> list[str]:
    from tests.conftest import tracesql_cli

    return tracesql_cli()


HOSTILE_FILES = ["...json", "..json", ".json.json", "-rf.json", "a b\u202e.json", "bad\n\x1b[2J.json",
                 "nul\x01.json", "x" * 240 + ".json", "Same.json", "same.json", "same.json.gz", "é.json",
                 "...json.gz"]


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [None, "1"])
def test_report_folders_stay_inside_out(tmp_path, jobs):
    """Trace files named to escape the report's folder (`...json` would name a folder `..`): every file the report
    writes is inside --out, each trace has its own folder, no folder is '.', '..' or hidden."""
    import gzip

    src = tmp_path / "src"
    src.mkdir()
    for i, name in enumerate(HOSTILE_FILES):
        data = json.dumps(_small_trace(["gemm"], ts0=1000 + i)).encode()
        path = src / (name if name.endswith((".json", ".json.gz")) else name + ".json")
        path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    results = tracesql.ingest(sorted(str(p) for p in src.iterdir()), out=tmp_path / "ds", quiet=True)
    assert [r.error for r in results if r.status != "ingested"] == []
    work = tmp_path / "work"
    out = work / "rep"
    work.mkdir()
    (work / "keep.txt").write_text("x")
    before = {p for p in tmp_path.rglob("*") if out not in p.parents}
    _run("report", str(tmp_path / "ds"), "--out", str(out), "-f", "csv", *(["--jobs", jobs] if jobs else []))
    after = {p for p in tmp_path.rglob("*") if out not in p.parents and p != out}
    assert after == before  # nothing written outside --out
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == len(HOSTILE_FILES)  # one folder per trace
    for f in folders:
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", f.name) and len(f.name) <= 100, f.name
        assert f.resolve().parent == out.resolve() and (f / "kernel_summary.csv").is_file()
    assert len({f.name.lower() for f in folders}) == len(folders)  # distinct even without case


@pytest.mark.slow
def test_hostile_file_name_as_a_label_on_the_terminal(tmp_path, capsys, monkeypatch):
    """A trace file named with ESC, a bidirectional override and a newline: its label (the file name) is shown
    escaped wherever a terminal shows it: tables' titles, the first screen, the tree, the printed report, diff,
    the pairing of twins."""
    monkeypatch.setenv("COLUMNS", "160")
    src = tmp_path / "x\x1b[2J\u202e\nname.json"
    src.write_text(json.dumps(_small_trace(["gemm", "gemm"])))
    other = tmp_path / "y\x1b]0;title\x07.json"
    other.write_text(json.dumps(_small_trace(["gemm"], ts0=2000)))
    results = tracesql.ingest([str(src), str(other)], out=tmp_path / "ds", quiet=True)
    assert [r.status for r in results] == ["ingested", "ingested"], [r.error for r in results]
    ds = str(tmp_path / "ds")
    t = "x\\x1b[2J\\u202e\\nname.json"
    for argv in (["kernels", ds, "--trace", src.name], ["summary", ds], ["tree", ds, "--trace", src.name],
                 ["traces", ds], ["report", ds, "--style", "hta"], ["report", ds, "--trace", src.name],
                 ["diff", f"{ds}:{src.name}", f"{ds}:{other.name}"], ["twin", ds, src.name, other.name]):
        capsys.readouterr()
        _run(*argv)
        out, err = capsys.readouterr()
        assert not _RAW.search(out + err), (argv, out + err)
        assert t in out or "x\\x1b[2J\\u202e\\nname" in out, (argv, out)


class _Text(HTMLParser):
    """The page's text outside script elements, and its elements."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text = ""
        self.tags: list[str] = []
        self._script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._script = tag == "script"

    def handle_data(self, data):
        if not self._script:
            self.text += data

    def handle_endtag(self, tag):
        self._script = False


def test_html_report(hostile, short, tmp_path):
    import vl_convert  # noqa: F401 - the report's charts need it (tracesql[plot], in the test extra)

    ds, _ = hostile
    _run("report", ds, "-f", "html", "--output", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert not re.search(r"https?:|//[a-z]", page, re.I)
    assert not re.search(r"<img|<!--|]]>|<!\[CDATA", page, re.I)
    # every </script is the end of one of the charts' JSON data elements or of the one script, the tables' sorting
    assert len(re.findall(r"</script", page, re.I)) == page.count('<script type="application/json"') + 1 >= 7
    assert page.count("<script>") == 1 and page.count(f"<script>{SORT_SCRIPT}</script>") == 1
    allowed = html_text(f"script-src {SORT_SCRIPT_HASH}")  # the policy, as the attribute holds it
    assert page.count("script-src") == 1 and f"{allowed}\">" in page  # it alone may run
    p = _Text()
    p.feed(page)
    p.close()
    html_tags = {"html", "head", "meta", "title", "style", "body", "figure", "script", "h1", "h2", "p", "pre", "nav",
                 "ul", "li", "a", "section", "table", "thead", "tbody", "tr", "th", "td"}
    assert set(p.tags) <= html_tags | {e.lower() for e in ELEMENTS}
    # the names are text of the page (the tables hold them whole), never markup
    for name in (BAD_OP, FI_OP, *short.values()):
        assert name in p.text
    if shutil.which("chromium") is None:  # Debian's chromium (.ci/run installs it)
        return
    # a browser, its script sorting every table by every column (the first header of each clicked, for the
    # kernel and op names): no console message (no error, no script refused), the names still text, no <img>
    clicks = ("Array.prototype.forEach.call(document.querySelectorAll('th'), function (th) { th.click(); });")
    clicked = tmp_path / "clicked.html"
    clicked.write_text(page.replace(allowed, html_text(f"script-src {SORT_SCRIPT_HASH} {script_hash(clicks)}"))
                       .replace("</body>", f"<script>{clicks}</script></body>"), encoding="utf-8")
    r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run",
                        f"--user-data-dir={tmp_path / 'u'}", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=5000", "--dump-dom", clicked.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert not [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    dom = _Text()
    dom.feed(r.stdout)
    dom.close()
    assert dom.tags.count("table") == p.tags.count("table") and 'class="sortable"' in r.stdout
    assert "img" not in dom.tags and set(dom.tags) <= html_tags | {e.lower() for e in ELEMENTS}
    for name in (BAD_OP, FI_OP, *short.values()):
        assert name in dom.text


def test_replay_files(hostile, tmp_path):
    """`tracesql replay --out`: the IR holds every hostile name exactly, each script is one valid module whose entry
    reads back as the IR's, and every file stays in the folder; ops whose names are not operator names are listed
    with their reason."""
    import ast

    ds, _ = hostile
    out = tmp_path / "rp"
    _run("replay", ds, "--out", str(out))
    doc = json.loads((out / "replay_ir.json").read_text(encoding="utf-8"))
    by_op = {e["op_name"]: e for e in doc["entries"]}
    assert set(by_op) == {FI_OP, "aten::mm", BAD_OP}
    assert by_op["aten::mm"]["recorded"]["concrete"] == [MM_ARG, ""]
    assert [k["name"] for k in by_op[BAD_OP]["kernels"]] == ["op_kernel" + H]
    assert by_op[BAD_OP]["unreplayable"].startswith("not a PyTorch operator")
    assert by_op[FI_OP]["unreplayable"].startswith("not a PyTorch operator")
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted(["replay_ir.json", "replay.py", by_op["aten::mm"]["script"]])
    for name in files:
        assert (out / name).resolve().parent == out.resolve()
    text = (out / by_op["aten::mm"]["script"]).read_text(encoding="utf-8")
    ast.parse(text)
    ns: dict = {"__name__": "not_main"}
    exec(compile(text, "script.py", "exec"), ns)  # noqa: S102 - the generated script, not run as __main__
    assert ns["ENTRY"] == by_op["aten::mm"]
