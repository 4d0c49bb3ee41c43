"""TraceLens perf models the shared references never exercise, on a hand-made trace (tests/data/tl_perf_models/):
replication pad and nearest upsampling (UnaryElementwise.csv gains `param: input_shape`, `param: output_shape` and
`param: padding`), and aiter's group norm (Normalization.csv), against TraceLens's own CSVs for that trace."""
from __future__ import annotations

from pathlib import Path

import pytest

from tracesql.cli import main

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DATA = Path(__file__).parent / "data" / "tl_perf_models"


@pytest.fixture(scope="module")
def out(tl_handmade_perf):
    """The folder of `tracesql report --style tracelens --out` on the hand-made trace."""
    return tl_handmade_perf / "perf_models"


@pytest.mark.parametrize("sheet", ["UnaryElementwise", "Normalization", "unified_perf_summary"])
def test_sheet_equals_tracelens(out, sheet):
    """Every row and column of TraceLens 0.1.0's file for the same trace (tests/data/tl_perf_models/README.md)."""
    import polars as pl

    want = read_csv(DATA / "tracelens" / f"{sheet}.csv")
    got = pl.read_csv(out / f"{sheet}.csv", infer_schema=False)
    assert_sheet_equal(got, want)


def test_pad_and_upsample_shapes(out):
    """aten_replication_pad: (1, 16, 32, 32) padded [1, 1, 2, 2] (innermost dimension first) is (1, 16, 36, 34);
    FLOPs = output elements, bytes = input + output elements, 2 bytes each. aten_upsample_nearest: (1, 8, 16, 16)
    to the recorded output size [32, 32]; the call that records only scale factors has no model. A plain unary op
    in the same sheet leaves the three new columns empty."""
    rows = {r["name"]: r for r in read_csv(out / "UnaryElementwise.csv")}
    assert list(rows) == ["aten::replication_pad2d", "aten::upsample_nearest2d", "aten::silu"]
    assert list(rows["aten::silu"])[1:5] == ["param: input_shape", "param: output_shape", "param: padding",
                                             "param: op_shape"]
    pad, up, silu = rows["aten::replication_pad2d"], rows["aten::upsample_nearest2d"], rows["aten::silu"]
    assert (pad["param: input_shape"], pad["param: output_shape"], pad["param: padding"], pad["param: op_shape"]) == (
        "(1, 16, 32, 32)", "(1, 16, 36, 34)", "[1, 1, 2, 2]", "(1, 16, 36, 34)")
    assert pad["param: dtype_in_out"] == "('c10::BFloat16', 'c10::BFloat16')" and pad["param: stride_output"] == ""
    n_in, n_out = 16 * 32 * 32, 16 * 36 * 34
    assert float(pad["GFLOPS_first"]) == n_out / 1e9
    assert float(pad["Data Moved (MB)_first"]) == (n_in + n_out) * 2 / 2**20
    assert (pad["name_count"], pad["Kernel Time (µs)_sum"]) == ("2", "10.0")
    assert (up["param: output_shape"], up["param: padding"], up["name_count"]) == ("(1, 8, 32, 32)", "", "1")
    assert float(up["Data Moved (MB)_first"]) == (8 * 16 * 16 + 8 * 32 * 32) * 2 / 2**20
    assert (silu["param: input_shape"], silu["param: dtype_in_out"]) == ("", "('c10::BFloat16', None)")


def test_aiter_groupnorm(out):
    """aiter::_groupnorm_run(x, num_groups, weight, bias, eps) is TraceLens's GroupNorm (the extension's map, in
    every report): bf16 (1, 64, 32, 32), affine with bias, training statistics. FLOPs = 3C + 3N + 3C + 2N, bytes =
    2N·2 + (2 + 1 + 1 + 2)·C·2, over the 8.75 µs kernel — a TFLOP/s, not NaN."""
    (r,) = read_csv(out / "Normalization.csv")
    n, c = 64 * 32 * 32, 64
    assert (r["name"], r["param: num_channels"], r["param: is_affine"], r["param: is_training"]) == (
        "aiter::_groupnorm_run", "64", "True", "True")
    flops = 3 * c + 3 * n + 3 * c + 2 * n
    assert float(r["GFLOPS_first"]) == flops / 1e9
    assert float(r["Data Moved (MB)_first"]) == (2 * n * 2 + 6 * c * 2) / 2**20
    assert float(r["TFLOPS/s_mean"]) == pytest.approx(flops / 1e12 / 8.75e-6, rel=1e-12)
    (u,) = [x for x in read_csv(out / "unified_perf_summary.csv") if x["name"] == "aiter::_groupnorm_run"]
    assert u["op category"] == "NORM_fwd" and float(u["TFLOPS/s_mean"]) == pytest.approx(flops / 1e12 / 8.75e-6)


def test_pseudo_ops_option(tmp_path):
    """--pseudo-ops is TraceLens's --enable_pseudo_ops: its first step renames sglang_profiler::<op>_<N> cpu_ops
    <op> (normalize_sglang_profiler_op_names), which the op registry then knows; without it (TraceLens's default)
    the numbered name stays and is `other`. Only the tracelens style takes it."""
    trace = Path(__file__).parent / "data" / "peers" / "tl_sglang_inference_mi300.json"
    assert main(["ingest", "-q", str(trace), "--out", str(tmp_path / "ds")]) == 0
    cats = {}
    for flag in ([], ["--pseudo-ops"]):
        out = tmp_path / f"tl{len(flag)}"
        assert main(["report", str(tmp_path / "ds"), "--style", "tracelens", "--out", str(out),
                     *flag]) == 0
        cats[bool(flag)] = {r["name"]: r["Categories"] for r in read_csv(out / "ops_summary.csv")
                            if r["name"].startswith("sglang_profiler::")}
    assert cats[False] == {"sglang_profiler::attention_paged_attention_ragged_100": "['other']"}
    assert cats[True] == {"sglang_profiler::attention_paged_attention_ragged": "['InferenceAttention']"}
    assert main(["report", str(tmp_path / "ds"), "--pseudo-ops"]) == 2
