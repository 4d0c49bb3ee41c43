"""Op summaries and short kernels (native), and TraceLens's short-kernel tables against its references."""
from __future__ import annotations

import csv

import pytest

from tracesql.api import report
from tracesql.render.formats import write
from tracesql.render.sections import Document, Section

from .conftest import TRACELENS_KERNEL_REFS

QWEN = "nvidia/h100_qwen_infer.json.gz"
SHORT_REFS = TRACELENS_KERNEL_REFS


def read_csv(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def q(ds, sql, params=None):
    return ds.con.sql(sql, params=params).fetchall()


def test_python_tuple_text(ds):
    got = q(ds, """SELECT _py_tuple3('[[16,559,1],[],[]]'::JSON),
                          _py_tuple3('[[[1,559,32],[1,559,32]],[]]'::JSON), _py_tuple3('[1024]'::JSON),
                          _py_tuple3('["", "", "1"]'::JSON), _py_tuple3('[[1024]]'::JSON)""")
    assert got == [("((16, 559, 1), (), ())", "(((1, 559, 32), (1, 559, 32)), ())", "(1024,)", "('', '', '1')",
                    "((1024,),)")]


def test_op_summary_qwen(ds, trace_ids):
    rows = {r[0]: r[1:] for r in q(ds, "SELECT op_name, op_count, kernel_count, kernel_time_ns, time_pct "
                                       "FROM op_summary WHERE trace_id = $t", {"t": trace_ids[QWEN]})}
    assert rows["aten::mm"][:3] == (96, 192, 6_668_679)  # a memset and a GEMM per call
    assert rows["[no launch]"][:3] == (0, 509, 13_741_827)  # warm-up kernels launched before the CPU window
    assert abs(sum(r[3] for r in rows.values()) - 100) < 1e-9
    assert sum(r[1] for r in rows.values()) == 1707


def test_op_arg_summary_qwen(ds, trace_ids):
    (row,) = q(ds, """SELECT count, kernel_time_sum_ns, kernel_time_min_ns, kernel_time_max_ns, input_type
                      FROM op_arg_summary WHERE trace_id = $t AND op_name = 'aten::mm'
                      AND input_dims = '((8944, 1024), (1024, 2816))'""", {"t": trace_ids[QWEN]})
    # TraceLens's ops_unique_args row for the same op and shapes: 48 calls, 4,055.25 µs
    assert row[:2] == (48, 4_055_251) and row[4] == "('c10::BFloat16', 'c10::BFloat16')"
    assert row[2] <= row[1] / 48 <= row[3]


def test_short_kernels_native(ds, trace_ids):
    tid = trace_ids[QWEN]
    n = q(ds, "SELECT sum(count) FROM short_kernels WHERE trace_id = $t", {"t": tid})[0][0]
    assert n == 152  # kernels under 10 µs (memsets are not kernels)
    top = q(ds, "SELECT op_name, count, total_ns FROM short_kernels WHERE trace_id = $t ORDER BY total_ns DESC LIMIT 1",
            {"t": tid})[0]
    assert top == ("aten::add", 49, 81_797)
    h = q(ds, "SELECT sum(count), count(*) FROM short_kernel_histogram_at(5, 10) WHERE trace_id = $t", {"t": tid})[0]
    assert h == (q(ds, "SELECT count(*) FROM kernels WHERE trace_id = $t AND cat = 'kernel' AND dur_ns < 5000",
                   {"t": tid})[0][0], 10)


@pytest.fixture(scope="module")
def tl_short_tables(ds, trace_ids):
    """TraceLens's two short-kernel tables for every reference trace, one query each as the report does."""
    ids = [trace_ids[t] for _, t in SHORT_REFS]
    return {name: report._peer_section(ds, view, None, ids) for name, view in
            (("short_kernel_histogram", "tl_short_kernel_histogram"),
             ("short_kernels_summary", "tl_short_kernels_summary"))}


@pytest.mark.parametrize("ref,trace", SHORT_REFS)
def test_tracelens_short_kernel_tables_equal_reference(tl_short_tables, trace_ids, reference_dir, ref, trace):
    sections = {name: frames[trace_ids[trace]] for name, frames in tl_short_tables.items()}
    for name in ("short_kernel_histogram", "short_kernels_summary"):
        path = reference_dir / "tracelens" / ref / f"{name}.csv"
        want = read_csv(path) if path.read_text().strip() else []
        got = sections[name]
        assert got.height == len(want), name
        if want:
            assert got.columns == list(want[0]), name
        for g, w in zip(got.iter_rows(named=True), want, strict=True):
            for k, v in w.items():
                if isinstance(g[k], str):
                    assert g[k] == v, (name, k)
                else:
                    assert abs(float(g[k]) - float(v)) <= 1e-6 * max(abs(float(v)), 1e-12), (name, k, g[k], v)


@pytest.mark.parametrize("ref,trace", [("amd/mi300_torch_compile_triton", "amd/mi300_torch_compile_triton.json.gz"),
                                       ("multirank/dlrm_8rank/rank0", "multirank/dlrm_8rank/rank0.json.gz")])
def test_tracelens_short_kernel_files_without_rows(ds, trace_ids, reference_dir, tmp_path, ref, trace):
    """The two short-kernel files written as TraceLens writes them when the summary has no row: the Inductor trace
    has no kernel under 10 µs (the histogram's header, a lone newline for the summary); DLRM's rank 0 has 222
    (its histogram has them) but its ops record no Input Strides nor Concrete Inputs, so TraceLens's grouping
    leaves every one out and pandas writes the aggregation's two-level header."""
    tid = trace_ids[trace]
    frames = [(name, report._peer_section(ds, view, None, [tid])[tid])
              for name, view in (("short_kernel_histogram", "tl_short_kernel_histogram"),
                                 ("short_kernels_summary", "tl_short_kernels_summary"))]
    assert frames[1][1] is not None and frames[1][1].height == 0
    sections = report.peer_files([Section(name, df, trace="t") for name, df in frames if df is not None])
    write(Document(sections), "csv", out=str(tmp_path))
    for name in ("short_kernel_histogram", "short_kernels_summary"):
        assert (tmp_path / f"{name}.csv").read_bytes() == \
            (reference_dir / "tracelens" / ref / f"{name}.csv").read_bytes(), name
