"""`tracesql report --format html`: one self-contained page of the native report, its charts read back against the
sections' frames, no URL, the charts' specs beside it with --out, its one script (the tables' sorting) allowed by
its hash and no other, a real browser's parse of it (every chart kept, no console message, the tables sorted by a
click), and for several traces the traces and the ranks of a job side by side, the straggler marked."""
from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

import tracesql
from tests.conftest import tracesql_cli
from tracesql.api import report


class _Charts(HTMLParser):
    """The page's figures (ids), inline <svg> elements, JSON data elements (id -> parsed JSON), the text of its
    other script elements, and its Content-Security-Policy."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.figures: list[str] = []
        self.svgs = 0
        self.data: dict[str, object] = {}
        self.scripts: list[dict] = []
        self.code: list[str] = []
        self.csp: list[str] = []
        self._script: dict | None = None
        self._buf = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure":
            self.figures.append(a["id"])
        elif tag == "svg":
            self.svgs += 1
        elif tag == "meta" and a.get("http-equiv", "").lower() == "content-security-policy":
            self.csp.append(a["content"])
        elif tag == "script":
            self.scripts.append(a)
            self._script, self._buf = a, ""

    def handle_data(self, data):
        if self._script is not None:
            self._buf += data

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            if self._script.get("type") == "application/json":
                self.data[self._script["id"]] = json.loads(self._buf)
            else:
                self.code.append(self._buf)
            self._script = None


def _sha256(code: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode() + "'"


def _one_script_by_hash(p: _Charts) -> None:
    """The page runs one script, the tables' sorting (render.html.SORT_SCRIPT, bare <script>), and its
    Content-Security-Policy allows that script by its hash and nothing else: no other script, no load."""
    from tracesql.render.html import SORT_SCRIPT

    assert p.code == [SORT_SCRIPT] and p.scripts[-1] == {}
    assert all(s.get("type") == "application/json" for s in p.scripts[:-1])
    assert p.csp == [f"default-src 'none'; style-src 'unsafe-inline'; script-src {_sha256(SORT_SCRIPT)}"]


@pytest.fixture(scope="module")
def page(qwen_dataset, tmp_path_factory):
    pytest.importorskip("vl_convert")  # the test extra installs it; without it the command says what to install
    ds_path, _ = qwen_dataset
    out = tmp_path_factory.mktemp("html")
    r = subprocess.run([*tracesql_cli(), "report", str(ds_path), "-f", "html", "--output", str(out / "r.html")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = (out / "r.html").read_text(encoding="utf-8")
    p = _Charts()
    p.feed(text)
    p.close()
    with tracesql.open(ds_path) as ds:
        frames = {s.name: s.frame for s in report.build(ds)}
    return text, p, frames, out / "r.html"


def _spec(p: _Charts, section: str, n: int = 1) -> dict:
    spec = p.data[f"chart-s-{section}-{n}-spec"]
    assert isinstance(spec, dict)
    return spec


def test_page_has_a_chart_per_section_that_draws_one(page):
    text, p, _, _ = page
    assert p.figures == [f"chart-s-{s}-1" for s in ("gpu_timeline", "kernel_summary", "gap_histogram",
                                                    "idle_breakdown", "launch_stats", "op_summary",
                                                    "short_kernel_histogram", "memory_timeline", "roofline")]
    assert p.svgs == len(p.figures) == 9
    # every script element but the last is JSON data (a browser runs none), one per chart; the last sorts the tables
    assert all(s == {"type": "application/json", "id": f"{f}-spec"} for s, f in zip(p.scripts[:-1], p.figures,
                                                                                      strict=True))
    _one_script_by_hash(p)
    assert not re.search(r"https?:|//[a-z]", text, re.I)  # no URL: nothing to fetch, nothing blank offline
    assert "<pre id=\"first-screen\">" in text and "Top ops by GPU time" in text


def test_chart_data_are_the_sections_rows(page):
    _, p, frames, _ = page
    # top kernels and top ops: the first 15 rows of the section, in its order (by GPU time)
    k = _spec(p, "kernel_summary")["data"]["values"]
    assert k == frames["kernel_summary"].head(15).select("name", "total_us", "class").to_dicts()
    o = _spec(p, "op_summary")["data"]["values"]
    assert o == frames["op_summary"].head(15).select("op_name", "kernel_time_us", "source").to_dicts()
    assert o[0]["op_name"] == frames["op_summary"]["op_name"][0]
    # histograms: every bin with its count
    for name in ("gap_histogram", "short_kernel_histogram"):
        h = _spec(p, name)["data"]["values"]
        assert [(r["bin_start_us"], r["count"]) for r in h] == frames[name].select("bin_start_us", "count").rows()
    # the timeline's bars: compute, exposed communication, exposed memory and idle add up to each row's span
    t = _spec(p, "gpu_timeline")["data"]["values"]
    for row in frames["gpu_timeline"].iter_rows(named=True):
        where = "all devices" if row["pooled"] else f"device {row['device']}"
        assert sum(v["us"] for v in t if v["where"] == where) == pytest.approx(row["total_us"], rel=1e-12)
    # idle causes per stream add up to the section's idle time
    i = _spec(p, "idle_breakdown")["data"]["values"]
    assert sum(v["idle_us"] for v in i) == pytest.approx(frames["idle_breakdown"]["idle_us"].sum(), rel=1e-12)
    # memory over time: the allocated and reserved bytes of each bin of each device, one panel per device
    m = _spec(p, "memory_timeline")
    assert m["facet"]["row"]["field"] == "device_name"
    assert sorted((v["device_name"], v["bin_start_us"], v["what"], v["bytes"]) for v in m["data"]["values"]) == sorted(
        (r["device_name"], r["bin_start_us"], what, r[f"{what}_max_bytes"])
        for r in frames["memory_timeline"].iter_rows(named=True) for what in ("allocated", "reserved"))
    # the roofline: one point per modelled op and argument set, as tracesql perf --plot draws it
    roof = _spec(p, "roofline")
    assert roof["title"] == "Roofline: H100 SXM"  # the device table's row for the trace's GPU
    assert len(roof["layer"][-1]["data"]["values"]) > 10


def test_out_dir_writes_the_page_and_each_charts_spec(qwen_dataset, page, tmp_path):
    _, p, _, _ = page
    r = subprocess.run([*tracesql_cli(), "report", str(qwen_dataset[0]), "-f", "html", "--out", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    specs = sorted((tmp_path / "charts").glob("*.vl.json"))
    assert [s.name for s in specs] == sorted(f"{f}.vl.json" for f in p.figures)
    for s in specs:  # the page's data is the spec without its $schema URL
        spec = json.loads(s.read_text())
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        assert {k: v for k, v in spec.items() if k != "$schema"} == p.data[s.name[:-len(".vl.json")] + "-spec"]
    assert (tmp_path / "report.html").read_text(encoding="utf-8").count("<figure") == len(specs)


def test_html_needs_one_destination(qwen_dataset):
    r = subprocess.run([*tracesql_cli(), "report", str(qwen_dataset[0]), "-f", "html"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and r.stderr.strip().endswith("give --output FILE (or --out DIR for the page and its "
                                                           "charts' specs)")


class _Tables(HTMLParser):
    """Each section's table: section id -> (header texts, aria-sort of each header, rows of cell texts)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, tuple[list[str], list[str | None], list[list[str]]]] = {}
        self._section: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self._section = a["id"]
        elif tag == "table" and self._section is not None:
            self.tables[self._section] = ([], [], [])
        elif tag == "tr" and self._section in self.tables and self._cell is None:
            self.tables[self._section][2].append([])
        elif tag in ("th", "td") and self._section in self.tables:
            self._cell = []
            if tag == "th":
                self.tables[self._section][1].append(a.get("aria-sort"))

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None and self._section is not None:
            head, _, rows = self.tables[self._section]
            (head if tag == "th" else rows[-1]).append("".join(self._cell))
            self._cell = None
        elif tag == "section":
            self._section = None


def _tables(text: str) -> dict[str, tuple[list[str], list[str | None], list[list[str]]]]:
    t = _Tables()
    t.feed(text)
    t.close()
    return {k: (head, sort, [r for r in rows if r]) for k, (head, sort, rows) in t.tables.items()}


def _chromium(tmp_path: Path, page: Path, *args: str) -> tuple[str, list[str]]:
    """Headless Chromium's DOM of the page once its scripts ran, and the console messages it logged (CSP
    violations, uncaught errors and console.* calls all are: ``...:CONSOLE:N] "message", source: ...``)."""
    r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run",
                        f"--user-data-dir={tmp_path / 'u'}", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=5000", *args, "--dump-dom", page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    console = [line for line in r.stderr.splitlines()
               if ":CONSOLE" in line or re.search(r"Content.Security.Policy|Uncaught|Refused to", line)]
    return r.stdout, console


def _with_script(text: str, code: str, allow: bool) -> str:
    """The page with one more inline script at the end of its body, allowed by the page's policy (its hash added
    to script-src) or not."""
    if allow:
        text = text.replace("script-src ", f"script-src {_sha256(code)} ", 1)
    return text.replace("</body>", f"<script>{code}</script>\n</body>", 1)


chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium (.ci/run installs it)")


@chromium
def test_a_browser_draws_every_chart(page, tmp_path):
    """Headless Chromium parses the page offline (no network), keeps every chart and logs no console message (no
    script refused by the policy, no error): the sorting script ran, on every table; a screenshot is taken."""
    text, p, _, path = page
    dom, console = _chromium(tmp_path, path)
    assert console == []
    assert dom.count("<figure") == len(p.figures) and dom.count("<svg") == len(p.figures)
    assert dom.count('<table class="sortable">') == text.count("<table>") >= 10
    assert dom.count('<th tabindex="0">') == text.count("<th>")
    shot = tmp_path / "report.png"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run",
                    f"--user-data-dir={tmp_path / 'u'}", f"--screenshot={shot}", "--window-size=1280,2400",
                    path.as_uri()], capture_output=True, timeout=120)
    assert shot.stat().st_size > 50_000
    assert Path(shot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


_CLICKS = """(function () {
  function click(section, column, times) {
    var table = document.querySelector("#" + section + " table");
    var th = Array.prototype.filter.call(table.tHead.rows[0].cells, function (c) {
      return c.textContent === column; })[0];
    for (var i = 0; i < times; i++) { th.click(); }
  }
  click("s-kernel_transitions", "max_gap_us", 1);
  click("s-op_summary", "kernel_time_us", 2);
  click("s-op_arg_summary", "op_name", 1);
})();"""


def _number(cell: str) -> float:
    return float(cell.replace(",", ""))


@chromium
def test_a_click_on_a_header_sorts_the_table(page, tmp_path):
    """Clicks on headers (a script allowed for this test only): a number column sorts by value, largest first on
    the first click and smallest first on the second (cells written with thousands separators); a text column A
    to Z; rows with equal keys keep their order; the sorted column's header says how (aria-sort)."""
    text, _, _, path = page
    clicked = tmp_path / "clicked.html"
    clicked.write_text(_with_script(text, _CLICKS, allow=True), encoding="utf-8")
    dom, console = _chromium(tmp_path, clicked)
    assert console == []
    before, after = _tables(text), _tables(dom)
    assert after.keys() == before.keys()

    def check(section: str, column: str, how: str, key) -> None:
        head, sort, rows = before[section]
        i = head.index(column)
        assert after[section][0] == head
        assert after[section][1] == [how if h == column else None for h in head]
        want = sorted(rows, key=lambda r: key(r[i]))  # stable, as the script's sort
        assert after[section][2] == want, section
        assert want != rows  # the click changed the order

    check("s-kernel_transitions", "max_gap_us", "descending", lambda c: -_number(c))
    check("s-op_summary", "kernel_time_us", "ascending", _number)
    assert max(_number(r[before["s-op_summary"][0].index("kernel_time_us")])
               for r in before["s-op_summary"][2]) >= 1000  # a number with a separator was read as a number
    names = [r[before["s-op_arg_summary"][0].index("op_name")] for r in after["s-op_arg_summary"][2]]
    assert names == sorted(names, key=str.casefold)
    untouched = [k for k in before if k not in ("s-kernel_transitions", "s-op_summary", "s-op_arg_summary")]
    assert all(after[k] == (before[k][0], [None] * len(before[k][0]), before[k][2]) for k in untouched)


@chromium
def test_the_policy_refuses_any_other_script(page, tmp_path):
    """A script the page does not list by its hash does not run, and the browser says so on its console (which
    the tests above find empty): the policy allows the sorting script alone."""
    text, _, _, path = page
    other = tmp_path / "other.html"
    other.write_text(_with_script(text, 'document.body.setAttribute("data-ran", "1");', allow=False),
                     encoding="utf-8")
    dom, console = _chromium(tmp_path, other)
    assert "<body>" in dom and '<table class="sortable">' in dom  # ours ran, the other did not (no data-ran)
    assert len(console) == 1 and "violates the following Content Security Policy directive" in console[0]


def test_chart_api_gives_the_pages_specs(qwen_dataset, page):
    _, p, _, _ = page
    with tracesql.open(qwen_dataset[0]) as ds:
        specs = ds.chart("op_summary")
        with pytest.raises(ValueError, match="has no chart"):
            ds.chart("gaps_by_stream")
    assert [{k: v for k, v in s.items() if k != "$schema"} for s in specs] == [_spec(p, "op_summary")]


@pytest.fixture(scope="module")
def two(shared_traces, tmp_path_factory) -> Path:
    """A dataset of the H100 and the MI300 run of the same Qwen inference."""
    out = tmp_path_factory.mktemp("two") / "ds"
    files = [str(shared_traces / f"{t}.json.gz") for t in ("nvidia/h100_qwen_infer", "amd/mi300_qwen_infer")]
    tracesql.ingest(files, out=out, quiet=True)
    return out


def test_traces_side_by_side_with_the_longest_marked(two, tmp_path):
    pytest.importorskip("vl_convert")
    r = subprocess.run([*tracesql_cli(), "report", str(two), "-f", "html", "--output", str(tmp_path / "r.html")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    p = _Charts()
    p.feed((tmp_path / "r.html").read_text(encoding="utf-8"))
    p.close()
    assert p.figures[0] == "chart-s-traces_overview-1"  # one chart over both traces, first
    assert sum(f.startswith("chart-s-gpu_timeline-") for f in p.figures) == 2  # a per-trace chart for each
    spec = _spec(p, "traces_overview")
    with tracesql.open(two) as ds:
        sections = {s.name: s.frame for s in report.build(ds)}
        assert [{k: v for k, v in c.items() if k != "$schema"} for c in ds.chart("traces_overview")] == [spec]
    over = sections["traces_overview"]
    longest = over.sort("span_ms", descending=True)["trace"][0]
    assert spec["title"] == f"GPU span per trace (longest: {longest})"
    for row in over.iter_rows(named=True):
        bars = {v["part"]: v for v in spec["data"]["values"] if v["trace"] == row["trace"]}
        assert bars["busy"]["ms"] == row["busy_ms"]
        assert bars["idle"]["ms"] == pytest.approx(row["span_ms"] - row["busy_ms"], rel=1e-12)
        assert bars["busy"]["longest"] is (row["trace"] == longest)
    # no trace is a rank of a job: the ranks' section (IF ROWS) is not shown, nor its chart
    assert "ranks_overview" not in sections and "chart-s-ranks_overview-1" not in p.figures
    assert 'id="s-ranks_overview"' not in (tmp_path / "r.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def dlrm(shared_traces, tmp_path_factory) -> Path:
    """The 8 ranks of a DLRM training job (multirank/dlrm_8rank): rank 7 kept the others waiting longest (the
    straggler of `tracesql ranks`), ranks 1 and 3 have the longest GPU spans."""
    out = tmp_path_factory.mktemp("dlrm") / "ds"
    files = sorted(str(f) for f in (shared_traces / "multirank/dlrm_8rank").glob("rank*.json.gz"))
    tracesql.ingest(files, out=out, quiet=True)
    return out


@pytest.mark.slow  # 8 traces ingested and reported: over 3 s on a 2-core machine
def test_ranks_side_by_side_with_the_straggler(dlrm, tmp_path):
    """A multi-rank job: the section ranks_overview (the numbers of `tracesql ranks`, in ms) and its chart, a bar
    per rank split into compute, exposed communication, exposed memory and idle, the straggler outlined and named;
    every bar is a value of the section's frame."""
    pytest.importorskip("vl_convert")
    from tracesql.api import comm

    r = subprocess.run([*tracesql_cli(), "report", str(dlrm), "-f", "html", "--output", str(tmp_path / "r.html")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    p = _Charts()
    p.feed(text)
    p.close()
    assert p.figures[:2] == ["chart-s-traces_overview-1", "chart-s-ranks_overview-1"]  # one chart of all ranks
    _one_script_by_hash(p)
    with tracesql.open(dlrm) as ds:
        frames = {s.name: s.frame for s in report.build(ds)}
        ranks = comm.ranks(ds)
    frame = frames["ranks_overview"]
    # the section is the job's ranks as `tracesql ranks` shows them (µs there, ms here)
    assert frame["rank"].to_list() == ranks["rank"].to_list() == list(range(8))
    assert frame["is_straggler"].to_list() == ranks["bounds_job"].to_list() == [False] * 7 + [True]
    for ms, us in (("span_ms", "span_us"), ("compute_ms", "compute_us"), ("comm_exposed_ms", "comm_exposed_us"),
                   ("idle_ms", "idle_us"), ("wait_ms", "wait_us"), ("late_ms", "late_us")):
        assert frame[ms].to_list() == pytest.approx([v / 1000 for v in ranks[us].to_list()], rel=1e-12), ms
    spec = _spec(p, "ranks_overview")
    assert spec["title"] == "GPU time per rank (straggler: rank 7)"
    assert spec["encoding"]["stroke"]["condition"]["test"] == "datum.is_straggler"
    values = spec["data"]["values"]
    parts = {"compute": "compute_ms", "exposed communication": "comm_exposed_ms",
             "exposed memory": "memory_exposed_ms", "idle": "idle_ms"}
    for row in frame.iter_rows(named=True):
        bars = {v["part"]: v for v in values if (v["job_id"], v["rank"]) == (row["job_id"], row["rank"])}
        assert {part: bars[part]["ms"] for part in parts} == {part: row[col] for part, col in parts.items()}
        assert sum(b["ms"] for b in bars.values()) == pytest.approx(row["span_ms"], rel=1e-9)  # the parts fill it
        assert {b["is_straggler"] for b in bars.values()} == {row["is_straggler"]}
        assert {b["where"] for b in bars.values()} == {f"rank {row['rank']}" + (" (straggler)" if row["is_straggler"]
                                                                              else "")}
    assert len(values) == 4 * 8
    # the straggler is not the rank with the longest span, which the traces' chart marks
    longest = frames["traces_overview"].sort("span_ms", descending=True)["rank"][0]
    assert longest != 7 and _spec(p, "traces_overview")["title"].startswith("GPU span per trace (longest: rank")
    # the section's table: one row per rank
    assert len(_tables(text)["s-ranks_overview"][2]) == 8


def test_diff_page_draws_the_biggest_changes(two, tmp_path):
    pytest.importorskip("vl_convert")
    import polars as pl

    base, variant = f"{two}:h100_qwen_infer.json.gz", f"{two}:mi300_qwen_infer.json.gz"
    r = subprocess.run([*tracesql_cli(), "diff", base, variant, "-f", "html", "--output", str(tmp_path / "d.html")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "d.html").read_text(encoding="utf-8")
    assert not re.search(r"https?:|//[a-z]", text, re.I)
    p = _Charts()
    p.feed(text)
    p.close()
    assert p.figures == ["chart-s-diff_timeline-1", "chart-s-diff_categories-1", "chart-s-diff_op_args-1"]
    # the diverging bars: the 15 largest regressions and the 15 largest improvements of the ops by argument set
    csv = subprocess.run([*tracesql_cli(), "diff", base, variant, "--level", "op_args", "-f", "csv"],
                         capture_output=True, text=True, check=True).stdout
    df = pl.read_csv(io.StringIO(csv), infer_schema_length=0).with_columns(pl.col("diff_us").cast(pl.Float64))
    both = df.filter((pl.col("side") == "both") & (pl.col("diff_us") != 0))
    want = (both.filter(pl.col("diff_us") > 0).sort("diff_us", descending=True).head(15)["diff_us"].to_list()
            + both.filter(pl.col("diff_us") < 0).sort("diff_us").head(15)["diff_us"].to_list())
    bars = p.data["chart-s-diff_op_args-1-spec"]
    assert isinstance(bars, dict)
    got = [v["diff_us"] for v in bars["data"]["values"]]
    assert got == pytest.approx(want, rel=1e-12) and len(got) == 30
    assert {v["change"] for v in bars["data"]["values"] if v["diff_us"] > 0} == {"slower"}
