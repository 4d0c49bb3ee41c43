"""TraceLens's roofline columns (`report --style tracelens --arch`, TraceLens's --gpu_arch_platform) against
TraceLens's own output with a platform (tests/data/tracelens_arch, made as its README says)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import tracesql
from tracesql.api import report
from tracesql.errors import UsageError

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

DATA = Path(__file__).parent / "data" / "tracelens_arch"
TRACES = {"mi300_qwen_infer": ("amd/mi300_qwen_infer.json.gz", "MI300X"),
          "mi300_bert_small_infer": ("amd/mi300_bert_small_infer.json.gz", "MI300X"),
          "h100_falconsai_infer": ("nvidia/h100_falconsai_infer.json.gz", "MI325X")}
REFS = sorted((folder, f.stem) for folder in TRACES for f in (DATA / folder).glob("*.csv"))
VIEWS = {fname: (view, q) for fname, view, q in report.TRACELENS}
ROOF_TEXT = frozenset({"Roofline Bound_first", "Roofline Bound"})


def _sheets(path, trace_id: str, arch: str | None, names: list[str]) -> dict:
    with tracesql.open(path, trace_ids=[trace_id]) as d:
        report.set_arch(d, "tracelens", arch)  # before the report's views are computed, as report.build does
        with d.materialized(report.materialized_views("tracelens")):
            return {n: report._peer_section(d, *VIEWS[n], [trace_id])[trace_id] for n in names}


@pytest.fixture(scope="module")
def computed(all_dataset, trace_ids):
    return {folder: _sheets(all_dataset[0], trace_ids[t], arch, [s for f, s in REFS if f == folder])
            for folder, (t, arch) in TRACES.items()}


def test_references_cover_every_sheet_kind():
    assert len(REFS) == 17 and {s for _, s in REFS} == {
        "GEMM", "SDPA_fwd", "BinaryElementwise", "UnaryElementwise", "Reduce_fwd", "Normalization", "CONV_fwd",
        "unified_perf_summary"}


@pytest.mark.parametrize("folder,sheet", REFS)
def test_roofline_columns_equal_tracelens(computed, folder, sheet):
    want = read_csv(DATA / folder / f"{sheet}.csv")
    got = computed[folder][sheet]
    assert_sheet_equal(got, want, ROOF_TEXT)


def test_gemm_roofline_by_hand(computed):
    """The first GEMM row of mi300_qwen_infer on TraceLens's MI300X (matrix_bf16 708 TFLOP/s, 5300 GB/s)."""
    top = computed["mi300_qwen_infer"]["GEMM"].row(0, named=True)
    gflops, mb = top["GFLOPS_first"], top["Data Moved (MB)_first"]
    compute_us = gflops * 1e9 / (708 * 1e12) * 1e6
    memory_us = mb * 1048576 / (5300 * 1e9) * 1e6
    assert top["Compute Spec"] == "matrix_bf16"
    assert top["Roofline Time (µs)_first"] == pytest.approx(max(compute_us, memory_us), rel=1e-12)
    assert top["Roofline Bound_first"] == ("COMPUTE_BOUND" if compute_us >= memory_us else "MEMORY_BOUND")


def test_arch_json_file_is_the_platform(all_dataset, trace_ids, tmp_path, computed):
    """TraceLens's --gpu_arch_json_path: the same figures in a file give the same sheet; a platform's name is
    case-blind; an unknown name or a file that is not an arch is a usage error."""
    spec = tmp_path / "mi300x.json"
    peaks = {f"{k}_{p}": v for k, vals in (("matrix", {"fp16": 654, "bf16": 708, "fp32": 163, "fp64": 81,
                                                       "fp8": 1273, "int8": 2600}),
                                           ("vector", {"fp16": 163, "bf16": 163, "fp32": 81, "fp64": 40}))
             for p, v in vals.items()}
    spec.write_text(json.dumps({"name": "MI300X", "mem_bw_gbps": 5300, "memory_gb": 192,
                                "max_achievable_tflops": peaks}))
    tid = trace_ids["amd/mi300_qwen_infer.json.gz"]
    got = _sheets(all_dataset[0], tid, str(spec), ["GEMM"])["GEMM"]
    assert got.equals(computed["mi300_qwen_infer"]["GEMM"])
    assert _sheets(all_dataset[0], tid, "mi300x", ["GEMM"])["GEMM"].equals(got)
    bad = tmp_path / "bad.json"
    bad.write_text('{"mem_bw_gbps": 5300}')
    with tracesql.open(all_dataset[0], trace_ids=[tid]) as d:
        with pytest.raises(UsageError, match="not a TraceLens GPU arch file"):
            report.set_arch(d, "tracelens", str(bad))
        with pytest.raises(UsageError, match="MI300X, MI325X"):
            report.set_arch(d, "tracelens", "H100")
        with pytest.raises(UsageError, match="HTA has no roofline"):
            report.set_arch(d, "hta", "MI300X")


def test_without_arch_no_roofline_columns(all_dataset, trace_ids):
    got = _sheets(all_dataset[0], trace_ids["amd/mi300_qwen_infer.json.gz"], None, ["GEMM", "unified_perf_summary"])
    assert not any("Roofline" in c for df in got.values() for c in df.columns)
