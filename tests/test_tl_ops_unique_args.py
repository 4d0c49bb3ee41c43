"""TraceLens's ops_unique_args (sql/42_tracelens_ops_unique_args.sql) against every shared TraceLens reference."""
from __future__ import annotations

import csv
import math
import random
from collections import defaultdict

import pytest

from tracesql.api import report
from tracesql.cli.main import main

from .conftest import TRACELENS_REFS

# Every TraceLens reference with an ops_unique_args.csv (the GPU-only trace has no CPU ops and none). The graph
# replay's reference comes from TraceLens's inference report: parent_module, num_kernels and call_stack added.
REFS = [(ref, trace) for ref, trace in TRACELENS_REFS if ref != "amd/mi210_gpu_only"]
MODULE_LAYOUT = {"graphs/vllm_decode_full"}
GRAPH = "graphs/vllm_decode_full/graph_execution.json.gz"
CAPTURE = {"graphs/vllm_decode_full": "graphs/vllm_decode_full/capture_rank0.json.gz"}
STD_KEYS = ["name", "op category", "process_name", "process_label", "thread_name", "Input Dims", "Input type",
            "Input Strides", "Concrete Inputs"]
EXACT_TEXT = {"kernel_details_summary", "trunc_kernel_details", "call_stack"}
QUERY = {view: q for _, view, q in report.TRACELENS}["tl_ops_unique_args"]


def read_csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def keys_of(want: list[dict]) -> list[str]:
    return STD_KEYS + (["parent_module", "num_kernels"] if "parent_module" in want[0] else [])


def close(got, want: str) -> bool:
    if want == "":
        return got is None
    return got is not None and math.isclose(float(got), float(want), rel_tol=1e-6, abs_tol=1e-12)


def as_text(v) -> str:
    return "" if v is None else str(v)


@pytest.fixture(scope="module")
def unique_args(ds, trace_ids):
    """{(view, trace_id): DataFrame} for every reference trace, computed as the report does: the perf-report
    layout of every trace, the inference-report layout of the graph replay."""
    out = {("tl_ops_unique_args", t): df for t, df in
           report._peer_section(ds, "tl_ops_unique_args", QUERY, [trace_ids[t] for _, t in REFS]).items()}
    out.update({("tl_ops_unique_args_module", t): df for t, df in
                report._peer_section(ds, "tl_ops_unique_args_module", QUERY, [trace_ids[GRAPH]]).items()})
    return out


@pytest.mark.parametrize("ref,trace", REFS)
def test_ops_unique_args_equals_reference(unique_args, ds, trace_ids, reference_dir, ref, trace):
    tid = trace_ids[trace]
    want = read_csv(reference_dir / "tracelens" / ref / "ops_unique_args.csv")
    got = unique_args["tl_ops_unique_args_module" if ref in MODULE_LAYOUT else "tl_ops_unique_args", tid]
    assert got.columns == list(want[0])
    keys = keys_of(want)
    got_rows = got.to_dicts()
    # the same groups, in TraceLens's row order
    assert [tuple(as_text(r[k]) for k in keys) for r in got_rows] == [tuple(w[k] for k in keys) for w in want]
    events_read = ds.con.sql("SELECT events_read FROM traces WHERE trace_id = ?", params=[tid]).fetchall()[0][0]
    capture_rows = 0
    for g, w in zip(got_rows, want, strict=True):
        for col, wv in w.items():
            if col in keys:
                continue
            if col in EXACT_TEXT:
                assert g[col] == wv, (w["name"], col, g[col], wv)
            elif col == "ex_UID" and int(wv) >= events_read:
                # a launcher of the merged capture trace: TraceLens's own id, ours is the capture event's id
                capture_rows += 1
                name = ds.con.sql("SELECT name FROM events WHERE trace_id = ? AND event_id = ? AND cat = 'cpu_op'",
                                  params=[trace_ids[CAPTURE[ref]], g[col]]).fetchall()
                assert name == [(w["name"],)], (w["name"], g[col])
            else:
                assert close(g[col], wv), (w["name"], w["Input Dims"], col, g[col], wv)
    assert capture_rows == (16 if ref == "graphs/vllm_decode_full" else 0)


def test_ops_unique_args_values(unique_args, trace_ids):
    """Spot values of nvidia/h100_qwen_infer: the costliest GEMM shape, and a GEMM launching a memset too."""
    df = unique_args["tl_ops_unique_args", trace_ids["nvidia/h100_qwen_infer.json.gz"]]
    top = df.row(0, named=True)
    assert (top["name"], top["Input Dims"], top["operation_count"]) == ("aten::mm", "((8944, 1024), (1024, 2816))", 48)
    assert top["Input type"] == "('c10::BFloat16', 'c10::BFloat16')" and top["ex_UID"] == 215
    assert top["total_direct_kernel_time_sum"] == 4055.25244140625
    assert math.isclose(top["total_direct_kernel_time_std"], 1.1997237297511993, rel_tol=1e-12)
    assert top["trunc_kernel_details"] == (
        "[{'name': 'Memset (Device)', 'stream': 7, 'mean_duration_us': np.float64(0.83)}, "
        "{'name': 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warp...', 'stream': 7, "
        "'mean_duration_us': np.float64(83.66)}]")
    assert df["Percentage (%)"].sum() == pytest.approx(100, rel=1e-12)
    assert df["Cumulative Percentage (%)"].to_list()[-1] == pytest.approx(100, rel=1e-12)
    assert df["total_direct_kernel_time_sum"].is_sorted(descending=True)
    single = df.filter(df["operation_count"] == 1)
    assert single.height > 0 and single["total_direct_kernel_time_std"].null_count() == single.height


def test_ops_unique_args_graph_replay_plain_layout(unique_args, trace_ids, reference_dir):
    """The perf-report layout of the graph replay: the inference-report groups merged over parent_module and
    num_kernels."""
    want = read_csv(reference_dir / "tracelens" / "graphs/vllm_decode_full" / "ops_unique_args.csv")
    merged: defaultdict[tuple, list] = defaultdict(lambda: [0, 0.0, 0.0, math.inf, -math.inf])
    for w in want:
        m = merged[tuple(w[k] for k in STD_KEYS)]
        m[0] += int(w["operation_count"])
        m[1] += float(w["total_direct_kernel_time_sum"])
        m[2] += float(w["total_subtree_kernel_time_sum"])
        m[3] = min(m[3], float(w["total_direct_kernel_time_min"]))
        m[4] = max(m[4], float(w["total_direct_kernel_time_max"]))
    df = unique_args["tl_ops_unique_args", trace_ids[GRAPH]]
    got = {tuple(as_text(r[k]) for k in STD_KEYS): r for r in df.to_dicts()}
    assert set(got) == set(merged) and len(got) == df.height == 25
    for k, (n, d, s, mn, mx) in merged.items():
        g = got[k]
        assert g["operation_count"] == n, k
        assert math.isclose(g["total_direct_kernel_time_sum"], d, rel_tol=1e-9), k
        assert math.isclose(g["total_subtree_kernel_time_sum"], s, rel_tol=1e-9), k
        assert (g["total_direct_kernel_time_min"], g["total_direct_kernel_time_max"]) == (mn, mx), k


def test_report_writes_ops_unique_args(tmp_path, all_dataset, reference_dir):
    out = tmp_path / "tl"
    assert main(["report", str(all_dataset[0]), "--trace", "h100_bert_small_infer", "--style", "tracelens",
                 "--format", "csv", "--out", str(out)]) == 0
    got = read_csv(out / "ops_unique_args.csv")
    want = read_csv(reference_dir / "tracelens" / "nvidia" / "h100_bert_small_infer" / "ops_unique_args.csv")
    assert list(got[0]) == list(want[0])
    assert len(got) == len(want) == 16
    for g, w in zip(got, want, strict=True):
        for col, wv in w.items():
            if col in STD_KEYS or col in EXACT_TEXT or col == "ex_UID" or col == "operation_count":
                assert g[col] == wv, (col, g[col], wv)
            else:
                assert (g[col] == wv == "") or math.isclose(float(g[col]), float(wv), rel_tol=1e-6), (col, g[col], wv)


def test_views_defined(all_dataset, ds):
    """tracesql.open defines both views; DATASET/init.sql has their module after the modules it requires."""
    assert {"tl_ops_unique_args", "tl_ops_unique_args_module"} <= set(ds.views())
    text = (all_dataset[0] / "init.sql").read_text()
    pos = [text.find(s) for s in ("-- module peers/tracelens/launchers", "-- module peers/tracelens/ops_unique_args",
                                  "CREATE OR REPLACE VIEW tl_ops_unique_args AS",
                                  "CREATE OR REPLACE VIEW tl_ops_unique_args_module AS")]
    assert -1 not in pos and pos == sorted(pos)


# ---- numpy's and pandas's arithmetic, beyond the sizes of the references ----------------------------------------

def np_sum(a: list[float]) -> float:
    """numpy's pairwise summation of a float64 array (np.add.reduce), written out."""
    n = len(a)
    if n < 8:
        res = 0.0
        for x in a:
            res += x
        return res
    if n <= 128:
        r = list(a[:8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for x in a[i:]:
            res += x
        return res
    h = n // 2 - (n // 2) % 8
    return np_sum(a[:h]) + np_sum(a[h:])


def kahan(a: list[float]) -> float:
    s = c = 0.0
    for x in a:
        y = x - c
        t = s + y
        c = (t - s) - y
        s = t
    return s


def welford_std(a: list[float]) -> float | None:
    n, m, q = 0, 0.0, 0.0
    for x in a:
        n += 1
        old = m
        m += (x - old) / n
        q += (x - m) * (x - old)
    return math.sqrt(q / (n - 1)) if n > 1 else None


def test_numpy_and_pandas_arithmetic(ds):
    rng = random.Random(7)
    sizes = [1, 2, 7, 8, 9, 16, 17, 100, 128, 129, 136, 257, 1000, 4099]
    lists = [[round(rng.uniform(0.5, 900.0), 3) for _ in range(n)] for n in sizes]
    rows = [(k, i + 1, x) for k, a in enumerate(lists) for i, x in enumerate(a)]
    con = ds.con.cursor()  # its own connection: the temp table stays out of ds.con
    con.execute("CREATE TEMP TABLE np_in (id INTEGER, i INTEGER, x DOUBLE)")
    con.executemany("INSERT INTO np_in VALUES (?, ?, ?)", rows)
    sums = dict(con.sql("SELECT id, s FROM _np_sums('np_in')").fetchall())
    pd = {r[0]: r[1:] for r in con.sql("""SELECT id, _pd_sum(l), _pd_std(l), _py_median(l)
                                          FROM (SELECT id, list(x ORDER BY i) AS l FROM np_in GROUP BY id)"""
                                       ).fetchall()}
    for k, a in enumerate(lists):
        s = sorted(a)
        n = len(a)
        assert sums[k] == np_sum(a), n
        assert pd[k][0] == kahan(a) and pd[k][1] == welford_std(a), n
        assert pd[k][2] == (s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2), n
    # the orders of additions differ: a plain left-to-right sum does not give numpy's result for every list
    assert any(sums[k] != sum(a) for k, a in enumerate(lists))
    assert con.sql("SELECT _py_str('it''s'), _py_str('a\"b'), _py_str('x'), _np_f64(1e-05), _np_f64(98.0)").fetchall() \
        == [('"it\'s"', "'a\"b'", "'x'", "np.float64(1e-05)", "np.float64(98.0)")]
    con.close()
