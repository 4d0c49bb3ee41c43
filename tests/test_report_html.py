"""`tracesql report --format html`: one self-contained page of the native report, its charts read back against the
sections' frames, no URL, the charts' specs beside it with --out, and a real browser's parse of it."""
from __future__ import annotations

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
    """The page's figures (ids), inline <svg> elements and JSON data elements (id -> parsed JSON)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.figures: list[str] = []
        self.svgs = 0
        self.data: dict[str, object] = {}
        self.scripts: list[dict] = []
        self._script: str | None = None
        self._buf = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure":
            self.figures.append(a["id"])
        elif tag == "svg":
            self.svgs += 1
        elif tag == "script":
            self.scripts.append(a)
            self._script, self._buf = a.get("id"), ""

    def handle_data(self, data):
        if self._script is not None:
            self._buf += data

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.data[self._script] = json.loads(self._buf)
            self._script = None


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
                                                    "short_kernel_histogram", "roofline")]
    assert p.svgs == len(p.figures) == 8
    # every script element is JSON data (a browser runs none), one per chart
    assert all(s == {"type": "application/json", "id": f"{f}-spec"} for s, f in zip(p.scripts, p.figures,
                                                                                      strict=True))
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


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium (.ci/run installs it)")
def test_a_browser_draws_every_chart(page, tmp_path):
    """Headless Chromium parses the page offline (no network) and keeps every chart; a screenshot is taken."""
    _, p, _, path = page
    base = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'u'}"]
    dom = subprocess.run([*base, "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert dom.count("<figure") == len(p.figures) and dom.count("<svg") == len(p.figures)
    shot = tmp_path / "report.png"
    subprocess.run([*base, f"--screenshot={shot}", "--window-size=1280,2400", path.as_uri()], capture_output=True,
                   timeout=120)
    assert shot.stat().st_size > 50_000
    assert Path(shot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


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
        over = {s.name: s.frame for s in report.build(ds)}["traces_overview"]
    longest = over.sort("span_ms", descending=True)["trace"][0]
    assert spec["title"] == f"GPU span per trace (longest: {longest})"
    for row in over.iter_rows(named=True):
        bars = {v["part"]: v for v in spec["data"]["values"] if v["trace"] == row["trace"]}
        assert bars["busy"]["ms"] == row["busy_ms"]
        assert bars["idle"]["ms"] == pytest.approx(row["span_ms"] - row["busy_ms"], rel=1e-12)
        assert bars["busy"]["longest"] is (row["trace"] == longest)


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
