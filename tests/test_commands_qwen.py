"""Every command on one real trace (nvidia/h100_qwen_infer alone in a dataset): the fast tier's end-to-end check.

The numbers are the trace's own (1,707 GPU events, 4,005.532 µs idle, ...), the same the slow tests assert on the
dataset of every shared trace.
"""
from __future__ import annotations

import csv
import io

import pytest

from tracesql.cli.main import main


def run(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0, argv
    return capsys.readouterr().out


def rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_tables_and_query(qwen_dataset, capsys):
    path = str(qwen_dataset[0])
    counts = {r["name"]: r["rows"] for r in rows(run(capsys, "tables", path, "-f", "csv")) if r["kind"] == "table"}
    assert {t: counts[t] for t in ("traces", "events", "kernels", "launches", "cpu_nesting")} == {
        "traces": "1", "events": "10372", "kernels": "1707", "launches": "1198", "cpu_nesting": "10372"}
    out = run(capsys, "query", path, "SELECT gpu_events_unlinked, device_count FROM traces", "-f", "csv")
    assert out.splitlines() == ["gpu_events_unlinked,device_count", "509,1"]


def test_kernels_gaps_timeline_launches(qwen_dataset, capsys):
    path = str(qwen_dataset[0])
    k = rows(run(capsys, "kernels", path, "-f", "csv"))
    assert sum(int(r["count"]) for r in k) == 1707
    assert (k[0]["name"], k[0]["count"]) == ("at::native::elementwise_kernel", "549")
    assert abs(sum(float(r["time_pct"]) for r in k) - 100) < 1e-9
    (g,) = rows(run(capsys, "gaps", path, "-f", "csv"))
    assert (g["n_events"], g["n_gaps"], g["idle_us"], g["max_gap_us"], g["busy_us"]) == (
        "1707", "1706", "4005.532", "290.943", "45647.3")
    assert "host_wait,25," in run(capsys, "gaps", path, "--idle", "-f", "csv")
    tl = {("all" if r["pooled"] == "true" else r["device"]): r
          for r in rows(run(capsys, "timeline", path, "-f", "csv"))}
    assert float(tl["all"]["idle_us"]) == 4005.532 and float(tl["all"]["busy_us"]) == 45647.3
    assert "busy_time,31.905483154296" in run(capsys, "timeline", path, "--style", "tracelens", "-f", "csv")
    launches = rows(run(capsys, "launches", path, "-f", "csv"))
    # every launch has its GPU work: 1,707 GPU events less the 509 without a launch
    assert sum(int(r["calls_with_gpu"]) for r in launches) == sum(int(r["calls"]) for r in launches) == 1707 - 509


def test_categories_cover_every_gpu_event(qwen_dataset, capsys):
    cats = rows(run(capsys, "categories", str(qwen_dataset[0]), "-f", "csv"))
    assert sum(int(r["count"]) for r in cats) == 1707
    assert "other" not in {r["kernel_category"] for r in cats}


def test_report_native(qwen_dataset, capsys):
    out = run(capsys, "report", str(qwen_dataset[0]))
    for section in ("gpu_timeline", "kernel_summary", "gaps_by_stream", "idle_breakdown", "launch_stats",
                    "op_summary", "short_kernels"):
        assert f"== {section}\n" in out, section


@pytest.mark.slow
def test_report_tracelens_gpu_timeline_equals_reference(qwen_dataset, reference_dir, tmp_path, capsys):
    assert main(["report", str(qwen_dataset[0]), "--style", "tracelens", "--format", "csv",
                 "--out", str(tmp_path / "tl")]) == 0
    with open(tmp_path / "tl" / "gpu_timeline.csv", newline="") as f:
        got = list(csv.DictReader(f))
    with open(reference_dir / "tracelens" / "nvidia" / "h100_qwen_infer" / "gpu_timeline.csv", newline="") as f:
        want = list(csv.DictReader(f))
    assert [r["type"] for r in got] == [r["type"] for r in want]
    for g, w in zip(got, want, strict=True):
        assert float(g["time ms"]) == pytest.approx(float(w["time ms"]), rel=1e-6, abs=1e-9)
    # every file of the reference is written, with TraceLens's columns in its order (no column of ours added)
    ref = reference_dir / "tracelens" / "nvidia" / "h100_qwen_infer"
    names = sorted(p.name for p in ref.glob("*.csv"))
    assert len(names) == 13
    for name in names:
        with open(tmp_path / "tl" / name, newline="") as f, open(ref / name, newline="") as r:
            assert next(csv.reader(f)) == next(csv.reader(r)), name
