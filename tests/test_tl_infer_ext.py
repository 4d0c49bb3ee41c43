"""The last names of TraceLens's class map on a hand-made trace (tests/data/tl_infer_ext/), against TraceLens's own
CSVs for it: aiter::topk_softplus (MoE_aux_fwd, sql/peers/tracelens/perf_moe.sql) and ATOM's
aiter::mixed_sample_outer_exponential (elementwise_fwd, perf_misc.sql) in both reports, and in the inference report
the pseudo ops TraceLens's tree extensions make from Python frames (perf_infer.sql, perf_infer_unified.sql): the
flydsl MoE stages (MoE_unfused_fwd), aiter's MLA decode and FP8 prefill and DeepSeek-V4's sparse paged decode in its
three modes (InferenceAttention_fwd), with their rows of the unified table."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tracesql.api import report

from .test_tl_ops_unique_args import read_csv
from .test_tl_perf_sheets import assert_sheet_equal

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

DATA = Path(__file__).parent / "data" / "tl_infer_ext"
PERF_SHEETS = ["MoE_aux_fwd", "elementwise_fwd", "unified_perf_summary", "ops_summary_by_category"]
INFER_SHEETS = ["InferenceAttention_fwd", "MoE_aux_fwd", "MoE_unfused_fwd", "elementwise_fwd", "unified_perf_summary",
                "ops_summary", "ops_summary_by_category", "ops_unique_args"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dict[str, pl.DataFrame]]:
    """{"perf" | "infer": {sheet: DataFrame}}: the perf report's and the inference report's (pseudo ops on, grouped
    by parent module) sheets compared here, on infer_ext.json ingested once, each computed as `tracesql report`
    computes it (its shared views materialized once, then the section's query)."""
    import tracesql

    out = tmp_path_factory.mktemp("tl_infer_ext") / "ds"
    (r,) = tracesql.ingest([str(DATA / "infer_ext.json")], out=out, quiet=True)
    assert r.status == "ingested" and r.trace_id is not None
    got: dict[str, dict[str, pl.DataFrame]] = {}
    with tracesql.open(out) as d:
        for kind, by_module, sheets in [("perf", False, PERF_SHEETS), ("infer", True, INFER_SHEETS)]:
            views = report.materialized_views("tracelens")
            views += report.materialized("report-tracelens-inference") if by_module else []
            sections = {f: (v, q) for f, v, q in report.peer_sections("tracelens", by_module)}
            with d.scope():
                report.set_pseudo_ops(d, "tracelens", by_module)
                with d.materialized(views):
                    frames = {s: report._peer_section(d, *sections[s], [r.trace_id])[r.trace_id] for s in sheets}
            got[kind] = {s: df for s, df in frames.items() if df is not None}
    return got


@pytest.mark.parametrize("sheet", PERF_SHEETS)
def test_perf_sheet_equals_tracelens(reports, sheet):
    """Every row and column of TraceLens 0.1.0's perf report file (tests/data/tl_infer_ext/README.md): no frame
    pseudo op there (its tree holds no Python frames), the flydsl kernels are synthetic ops of aiter::fused_moe_."""
    assert_sheet_equal(reports["perf"][sheet], read_csv(DATA / "tracelens" / f"{sheet}.csv"))


# ex_UID of the frame pseudo ops' groups in ops_unique_args: TraceLens's id of the pseudo op (after the trace's
# events), the frame's event_id here (sql/peers/tracelens/infer_ops.sql); the other groups' ids are the same
PSEUDO_UID_TO_FRAME = {144: 29, 145: 45, 146: 34, 147: 50, 151: 99, 152: 117, 153: 135}


@pytest.mark.parametrize("sheet", INFER_SHEETS)
def test_infer_sheet_equals_tracelens(reports, sheet):
    """Every row and column of TraceLens 0.1.0's inference report file (ops_unique_args: but the ex_UID of the frame
    pseudo ops)."""
    want = read_csv(DATA / "tracelens_inference" / f"{sheet}.csv")
    if sheet == "ops_unique_args":
        for r in want:
            r["ex_UID"] = str(PSEUDO_UID_TO_FRAME.get(int(r["ex_UID"]), int(r["ex_UID"])))
    assert_sheet_equal(reports["infer"][sheet], want,
                       text=frozenset({"parent_module", "call_stack_first", "call_stack", "Categories",
                                       "kernel_details_summary", "trunc_kernel_details"}))


def test_frame_pseudo_ops_launch(reports):
    """In the inference report's tree a frame pseudo op is the launcher of the kernels its frame launches outside
    any cpu_op inside it: the flydsl stages take all of aiter::fused_moe_'s direct kernels (2 + 2 instances,
    83.75 + 46.0 µs; aiter::fused_moe_ launches nothing left), each V4 decode pseudo op its frame's kernels, so
    aiter::v4_attention_with_output keeps 20.125 µs of direct time and its 74.5 µs subtree; the MLA frames'
    kernels are all launched by the ops inside them, so their pseudo ops launch nothing. The perf report's tree
    holds no Python frames: there aiter::fused_moe_ launches them."""
    rows = {r["name"]: r for r in reports["infer"]["ops_summary"].rows(named=True)}
    got = {n: (r["Count"], r["total_direct_kernel_time_sum"], r["total_subtree_kernel_time_sum"])
           for n, r in rows.items() if n.startswith("pseudo") or n.startswith("aiter::v4") or n == "aiter::fused_moe_"}
    assert got == {"pseudo_op::moe_flydsl_stage1": (2, 83.75, 83.75), "pseudo_op::moe_flydsl_stage2": (2, 46.0, 46.0),
                   "pseudo_v4_paged_decode_swa": (1, 15.875, 15.875), "pseudo_v4_paged_decode_csa": (1, 18.25, 18.25),
                   "pseudo_v4_paged_decode_hca": (1, 20.25, 20.25),
                   "aiter::v4_attention_with_output": (3, 20.125, 74.5)}
    args = {(r["name"], r["ex_UID"]): r for r in reports["infer"]["ops_unique_args"].rows(named=True)}
    stage1 = args["pseudo_op::moe_flydsl_stage1", 45]  # the fused op's args, the stage frame's kernel
    assert stage1["Input Dims"].startswith("((128, 7168), (256, 512, 7168)") and stage1["num_kernels"] == 1
    by_cat = {r["op category"]: r["Count"] for r in reports["infer"]["ops_summary_by_category"].rows(named=True)}
    assert by_cat == {"MoE_unfused": 4, "other": 10, "elementwise": 2, "InferenceAttention": 3, "MoE_aux": 4}
    perf = {r["op category"]: r["Count"] for r in reports["perf"]["ops_summary_by_category"].rows(named=True)}
    assert "InferenceAttention" not in perf and "MoE_unfused" not in perf


def _rows(df: pl.DataFrame) -> dict[tuple[str, int], dict]:
    return {(r["name"], r["UID_first"]): r for r in df.rows(named=True)}


def test_topk_softplus(reports):
    """64 tokens over 256 experts, top-8: FLOPs 6·M·E; bytes the bf16 logits, the float bias (E·4) and the top-k
    weights and ids written (2·M·topk·4); float logits read 4 bytes. Mixed with the sorting ops' rows, its numbers
    print as floats."""
    for sheets in reports.values():
        rows = _rows(sheets["MoE_aux_fwd"])
        bf, f32 = rows["aiter::topk_softplus", 3], rows["aiter::topk_softplus", 8]
        m, e, k = 64, 256, 8
        assert (bf["param: M"], bf["param: n"], bf["param: C"], bf["param: E"], bf["param: topk"]) == (
            "64.0", "1.0", "256.0", "256.0", "8.0")
        assert (bf["param: dtype_in"], bf["Compute Spec"], f32["Compute Spec"]) == ("c10::BFloat16", "vector_bf16",
                                                                                   "vector_fp32")
        assert float(bf["GFLOPS_first"]) == 6 * m * e / 1e9
        assert float(bf["Data Moved (MB)_first"]) == (m * e * 2 + e * 4 + 2 * m * k * 4) / 2**20
        assert float(f32["Data Moved (MB)_first"]) == (2 * m * e * 4 + e * 4 + 2 * 2 * m * k * 4) / 2**20


def test_mixed_sample_outer_exponential(reports):
    """ATOM's sampler over 16 rows of a 129280-token vocabulary: FLOPs 2·T·V; bytes the logits and the float noise
    read and T int32 ids written; a sheet of its own, elementwise_fwd (the model's category, no sheet_category)."""
    for sheets in reports.values():
        rows = _rows(sheets["elementwise_fwd"])
        bf = rows["aiter::mixed_sample_outer_exponential", 13]
        t, v = 16, 129280
        assert (bf["param: T"], bf["param: V"], bf["param: dtype_logits"], bf["param: dtype_noise"]) == (
            "16", "129280", "c10::BFloat16", "float")
        assert float(bf["GFLOPS_first"]) == 2 * t * v / 1e9
        assert float(bf["Data Moved (MB)_first"]) == (t * v * 2 + t * v * 4 + t * 4) / 2**20
        f32 = rows["aiter::mixed_sample_outer_exponential", 18]
        assert float(f32["Data Moved (MB)_first"]) == (t * v * 8 + t * 4) / 2**20


def test_flydsl_stages(reports):
    """Each flydsl stage frame under aiter::fused_moe_ becomes a pseudo op with the fused op's args and the stage's
    kernel: 32 tokens, hidden 7168, w2's inter dim 128 packed two to a byte in MXFP4 (N = 128·(7168 // 3584) =
    256), 256 experts, top-8, gated (w1 holds 2N rows); stage 1 the up model, stage 2 the down model, the output at
    the input's size, FP4 weights at half a byte; a matrix op at the weights' precision. Numbered after the
    trace's events, stage 1's before stage 2's."""
    rows = _rows(reports["infer"]["MoE_unfused_fwd"])
    up, down = rows["pseudo_op::moe_flydsl_stage1", 144], rows["pseudo_op::moe_flydsl_stage2", 146]
    m, k, n, e, topk = 32, 7168, 256, 256, 8
    assert (up["param: inter_dim"], up["param: gated"], up["param: weight_dtype"], up["Compute Spec"]) == (
        "256", "True", "c10::Float4_e2m1fn_x2", "matrix_fp4")
    e_active = e * (1 - ((e - topk) / e) ** m)
    assert float(up["GFLOPS_first"]) == 2 * m * k * n * topk * 2 / 1e9
    assert float(up["Data Moved (MB)_first"]) == (m * k * 2 + e_active * 2 * k * n * 0.5 + m * n * topk * 2) / 2**20
    assert float(down["GFLOPS_first"]) == 2 * m * n * k * topk / 1e9
    assert float(down["Data Moved (MB)_first"]) == (m * n * topk * 2 + e_active * n * k * 0.5 + m * k * 2) / 2**20
    assert rows["pseudo_op::moe_flydsl_stage1", 145]["Compute Spec"] == "matrix_fp8"


# the step annotation: one context request of 64 new tokens on 128 cached, 3 decode requests over 3000 keys
C_SQ, C_SK, C_SQSQ, C_SQSK, G_SQ, G_SK, G_SQSK = 64, 192, 64 * 64, 64 * 192, 3, 3000, 3000


def test_mla_pseudo_ops(reports):
    """An aiter/mla.py mla_decode_fwd frame becomes pseudo_mla_decode_fwd over all its kernels (stage 1 and the
    reduce: num_kernels 2) with the stage-1 op's args: q (3, 16, 576), the KV buffer's last three dims (1, 1, 576):
    InferenceAttention's FLOPs with d_qk = d_v = 576; the frame without a stage-1 op gets none. The FP8 prefill
    frame's pseudo op takes v's head dim 128 and 1-byte elements."""
    rows = _rows(reports["infer"]["InferenceAttention_fwd"])
    dec = rows["pseudo_mla_decode_fwd", 148]
    h, d = 16, 576
    assert (dec["num_kernels"], dec["name_count"], dec["param: N_KV"], dec["param: H_KV"]) == (2, 2, "1", "1")
    assert float(dec["GFLOPS_first"]) == h * (d + d) * (2 * C_SQSK - C_SQSQ + 2 * G_SQSK) / 1e9
    moved = (C_SQ + G_SQ) * (h * 2 * d + 2 * d) * 2 + ((C_SK - C_SQ) + (G_SK - G_SQ)) * 2 * d * 2
    assert float(dec["Data Moved (MB)_first"]) == moved / 2**20
    pre = rows["pseudo_mla_prefill_fwd", 150]
    dqk, dv = 192, 128
    assert (pre["param: d_h_v"], pre["Compute Spec"]) == ("128", "matrix_fp8")
    assert float(pre["GFLOPS_first"]) == h * (dqk + dv) * (2 * C_SQSK - C_SQSQ + 2 * G_SQSK) / 1e9
    unified = {r["name"]: r for r in reports["infer"]["unified_perf_summary"].rows(named=True)}
    assert unified["aiter::mla_reduce_v1"]["ex_UID"] == 78  # the frame without a pseudo op keeps its ops
    assert "aiter::mla_decode_stage1_asm_fwd" not in unified


def test_v4_paged_decode(reports):
    """DeepSeek-V4's decode pseudo ops, decode only (context statistics zeroed), one latent KV head, bf16: the mode
    from the kernels of the op around the frame, H_Q and the head dim from its qk_norm_rope kernel (else
    DeepSeek-V4-Flash's 64 heads of 512). Each query reads at most its window: SWA 128, CSA 128 + min(ceil(mean
    context / 4), 512) = 378, HCA 128 + ceil(mean context / 128) = 136, so g_sqsk and g_sk count at most g_sq·W."""
    rows = {r["name"]: r for r in reports["infer"]["InferenceAttention_fwd"].rows(named=True)}
    d = 512
    for mode, h, w in [("swa", 64, 128), ("csa", 32, 378), ("hca", 64, 136)]:
        r = rows[f"pseudo_v4_paged_decode_{mode}"]
        assert (r["param: H_Q"], r["param: sliding_window"], r["param: c_sq"], r["param: N_KV"]) == (
            str(h), f"{w}.0", "0", "3000")
        capped = min(G_SQSK, G_SQ * w)
        assert float(r["GFLOPS_first"]) == h * 2 * capped * d * 2 / 1e9
        moved = (G_SQ * (2 * h * d + 2 * d)) * 2 + (capped - G_SQ) * 2 * d * 2
        assert float(r["Data Moved (MB)_first"]) == moved / 2**20
    unified = {r["name"]: r for r in reports["infer"]["unified_perf_summary"].rows(named=True)}
    synth = "aiter::v4_attention_with_output->hca_compress_forward_D512_R128_NW4_SL256_S128_flydsl (Synthetic Op)"
    assert unified[synth]["op category"] == "InferenceAttention"  # the registry's entry for the synthetic name
