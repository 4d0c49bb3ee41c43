"""`tracesql report --format xlsx`: TraceLens's workbook equals TraceLens's own (tests/data/tl_xlsx), sheet by sheet,
and the native workbook holds every section's frame."""
from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

import tracesql
from tests.conftest import tracesql_cli
from tracesql.api import report

openpyxl = pytest.importorskip("openpyxl")  # the test extra installs it

REF = Path(__file__).parent / "data" / "tl_xlsx"


def _sheets(path: Path) -> dict[str, list[tuple]]:
    wb = openpyxl.load_workbook(path, read_only=True)
    out = {ws.title: [tuple(r) for r in ws.iter_rows(values_only=True)] for ws in wb}
    wb.close()
    return out


def _same(a, b) -> bool:
    if a in (None, "") and b in (None, ""):  # a cell cannot hold an empty text: it is empty
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


@pytest.mark.parametrize("trace", ["nvidia/h100_qwen_infer", "amd/mi300_qwen_infer"])
def test_tracelens_workbook_equals_tracelens(trace, shared_traces, tmp_path):
    tracesql.ingest([str(shared_traces / f"{trace}.json.gz")], out=tmp_path / "ds", quiet=True)
    out = tmp_path / "r.xlsx"
    r = subprocess.run([*tracesql_cli(), "report", str(tmp_path / "ds"), "--style", "tracelens", "-f", "xlsx",
                        "--output", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want, got = _sheets(REF / f"{Path(trace).name}.xlsx"), _sheets(out)
    assert list(got) == list(want)  # names and order
    for name, rows in want.items():
        assert got[name][0] == rows[0], name  # header
        assert len(got[name]) == len(rows), name
        bad = [(name, i, rows[0][j], u, v) for i, (x, y) in enumerate(zip(rows, got[name], strict=True))
               for j, (u, v) in enumerate(zip(x, y, strict=True)) if not _same(u, v)]
        assert not bad, bad[:5]


def test_native_workbook_has_every_section(qwen_dataset, tmp_path):
    out = tmp_path / "n.xlsx"
    r = subprocess.run([*tracesql_cli(), "report", str(qwen_dataset[0]), "-f", "xlsx", "--output", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = _sheets(out)
    with tracesql.open(qwen_dataset[0]) as ds:
        frames = [(s.name, s.frame) for s in report.build(ds)]
    assert list(got) == [name for name, _ in frames]
    for name, df in frames:
        rows = got[name]
        assert rows[0] == tuple(df.columns) and len(rows) == df.height + 1, name
        for x, y in zip(rows[1:], df.iter_rows(), strict=True):
            assert all(_same(u, v) for u, v in zip(x, y, strict=True)), (name, x, y)


def test_peer_workbook_is_one_trace(tmp_path, shared_traces):
    files = [str(shared_traces / f"{t}.json.gz") for t in ("nvidia/h100_qwen_infer", "amd/mi300_qwen_infer")]
    tracesql.ingest(files, out=tmp_path / "ds", quiet=True)
    r = subprocess.run([*tracesql_cli(), "report", str(tmp_path / "ds"), "--style", "tracelens", "-f", "xlsx",
                        "--output", str(tmp_path / "r.xlsx")], capture_output=True, text=True)
    assert r.returncode == 2 and "give --trace" in r.stderr and not (tmp_path / "r.xlsx").exists()


def test_names_stay_text(tmp_path):
    """A name that looks like a formula or a link is written as text; control characters as Excel's escapes."""
    import polars as pl

    from tracesql.render.xlsx import write_workbook

    names = ["=HYPERLINK(\"http://x\",\"y\")", "=1+2", "https://example.org", "@SUM(A1)", "../..", "k\x1b[31m",
             "</script><img src=x>\"'"]
    write_workbook(tmp_path / "h.xlsx", [("s", pl.DataFrame({"name": names}))])
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    cells = [(c.value, c.data_type, c.hyperlink) for c in wb["s"]["A"]][1:]
    assert cells == [(n.replace("\x1b", "_x001B_"), "s", None) for n in names]
