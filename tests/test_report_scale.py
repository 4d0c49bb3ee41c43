"""The TraceLens-style report stays within a small memory budget on a large trace: nvidia/h100_qwen_infer
replicated 14 times (benchmarks/make_trace.py, 254,314 events) and reported under a 2 GiB DuckDB memory limit,
its numbers being 14 times those of the single trace.

A join that pairs the rows of one trace with each other (on trace_id alone) grows with the square of the trace:
_tl_unified_rows once did, and this report then needed some 20 GB on a trace of this size."""
from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest

import tracesql
from tracesql.api import report

from .conftest import ROOT

COPIES = 14
EVENTS = 254_314  # 14 copies of the trace's 18,161 events, and its 60 metadata events once


def _sections(path) -> dict[str, pl.DataFrame]:
    ds = tracesql.open(path, memory_limit="2GiB")
    try:
        assert ds.con.sql("SELECT current_setting('memory_limit')").fetchall()[0][0] in ("2.0 GiB", "2.0GiB")
        return {s.name: s.frame for s in report.build(ds, style="tracelens")}
    finally:
        ds.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory, shared_traces, qwen_dataset):
    """(the single trace's TraceLens-style sections, the replicated trace's): {section: DataFrame} each."""
    d = tmp_path_factory.mktemp("scale")
    trace = d / f"qwen_x{COPIES}.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_trace.py"), "--source",
                    str(shared_traces / "nvidia/h100_qwen_infer.json.gz"), "--copies", str(COPIES), "--compact",
                    "--out", str(trace)], check=True, capture_output=True)
    (r,) = tracesql.ingest([str(trace)], out=d / "ds", quiet=True)
    assert r.status == "ingested"
    trace.unlink()
    with tracesql.open(d / "ds") as ds:
        assert ds.con.sql("SELECT events_read FROM traces").fetchall() == [(EVENTS,)]
    return _sections(qwen_dataset[0]), _sections(d / "ds")


def _scaled(one: pl.DataFrame, many: pl.DataFrame, keys: list[str], counts: list[str], sums: list[str]) -> None:
    """many has the rows of one (by keys), with counts COPIES times and sums COPIES times (to 1e-9)."""
    assert many.height == one.height > 0
    j = one.join(many, on=keys, how="full", suffix="_n", nulls_equal=True)
    assert j.height == one.height and j.get_column(counts[0]).null_count() == 0
    assert j.get_column(counts[0] + "_n").null_count() == 0
    for c in counts:
        assert (j.get_column(c) * COPIES).to_list() == j.get_column(c + "_n").to_list(), c
    for c in sums:
        for a, b in zip(j.get_column(c).to_list(), j.get_column(c + "_n").to_list(), strict=True):
            assert b == pytest.approx(a * COPIES, rel=1e-9, abs=1e-9), c


@pytest.mark.slow
def test_tracelens_report_of_replicated_trace_under_2gib(reports):
    one, many = reports
    assert list(many) == list(one)
    assert {k: df.height for k, df in many.items()} == {k: df.height for k, df in one.items()}
    assert one["unified_perf_summary"].height == 35 and one["GEMM"].height == 5

    def timeline(sections):
        return dict(sections["gpu_timeline"].select("type", "time ms").iter_rows())

    t1, tn = timeline(one), timeline(many)
    assert t1["busy_time"] == pytest.approx(31.905483, abs=1e-6)
    for k in ("computation_time", "busy_time", "exposed_memcpy_time"):
        assert tn[k] == pytest.approx(t1[k] * COPIES, rel=1e-9)
    _scaled(one["kernel_summary"], many["kernel_summary"], ["Parent cpu_op", "Kernel name", "Kernel stream"],
            ["Kernel duration (µs)_count"], ["Kernel duration (µs)_sum"])
    args = ["name", "Input Dims", "Input type", "Input Strides", "Concrete Inputs"]
    _scaled(one["ops_unique_args"], many["ops_unique_args"], args, ["operation_count"],
            ["total_direct_kernel_time_sum", "total_subtree_kernel_time_sum"])
    _scaled(one["unified_perf_summary"], many["unified_perf_summary"], ["op category", *args], ["operation_count"],
            ["Kernel Time (µs)_sum", "total_duration_us"])
    gemm = [c for c in one["GEMM"].columns if c.startswith("param: ")]
    _scaled(one["GEMM"], many["GEMM"], ["name", *gemm], ["name_count"], ["Kernel Time (µs)_sum"])
    _scaled(one["short_kernel_histogram"], many["short_kernel_histogram"], ["bin_start", "bin_end"], ["count"], [])
