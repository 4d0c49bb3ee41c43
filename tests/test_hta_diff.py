"""HTA's TraceDiff reproduced (sql/peers/hta/trace_diff.sql, tracesql.peers.hta.diff, `tracesql diff --style hta`).

Against the shared reference ../shared/reference/hta/trace_diff/compare_base_vs_test/ (HTA 0.5.0 run on HTA's own
trace_compare fixtures, see its README): every compare_traces and ops_diff file, row for row in HTA's order (the
order pandas gives: the control's names sorted, then the names only the test has, sorted), numbers to 1e-6
relative and text exact, and the written CSV byte for byte. ops_summary_* rows are compared as sets: HTA orders
them by its symbol ids, which follow Python's string hash.

A small hand-made trace checks HTA's iteration rules one by one (hta/common/trace.py add_iteration and
transform_correlation_to_index): which rows HTA's frame keeps, the last matching ProfilerStep winning, a step
seen on a GPU stream counting for CPU rows, a launch at row 0 read as no launch, stream 0 never in an iteration,
a stream written as text read as Python's int() reads it. (HTA 0.5.0 gives every one of those rows the iteration
listed, and the same compare_traces rows.)
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

import tracesql
from tracesql.peers.hta import diff as diff_hta

REF = "hta/trace_diff/compare_base_vs_test"
BASE = "nvidia/hta_trace_compare_base.json.gz"
TEST = "nvidia/hta_trace_compare_test.json.gz"


def _x(cat, name, ts, dur, **args) -> dict:
    e = {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


# The hand-made trace: (event, the iteration HTA gives it; 'dropped' when HTA's frame has no row for it, None
# when the row gets none). Times in µs; the 'Trace' span and the metadata event make dur a float column in HTA.
HAND = [
    (_x("cuda_runtime", "cudaLaunchKernel", 5, 1, correlation=100), 3),      # 0: row 0, in ProfilerStep#3
    (_x("user_annotation", "ProfilerStep#3", 0, 50), 3),                     # 1
    (_x("user_annotation", "ProfilerStep#4", 50, 50), 4),                    # 2
    (_x("cpu_op", "aten::mm", 10, 5), 3),                                    # 3
    (_x("cuda_runtime", "cudaLaunchKernel", 60, 2, correlation=101), 4),     # 4
    (_x("kernel", "void k1<int>(float)", 70, 3, stream=7, correlation=100), -1),  # 5: its launch is row 0
    (_x("kernel", "void k1<int>(float)", 80, 4, stream=7, correlation=101), 4),   # 6: launched by row 4
    (_x("kernel", "void k2(int)", 85, 1, stream=0, correlation=102), None),  # 7: stream 0: no iteration
    (_x("cuda_runtime", "cudaLaunchKernel", 61, 1, correlation=102), 4),     # 8
    (_x("Trace", "PyTorch Profiler (0)", 0, 200), "dropped"),                # 9: cat Trace
    ({"ph": "X", "name": "no_cat", "pid": 1, "tid": 1, "ts": 12, "dur": 1}, "dropped"),  # 10: no cat
    ({"ph": "B", "cat": "cpu_op", "name": "begin_only", "pid": 1, "tid": 1, "ts": 13}, "dropped"),  # 11: no dur
    (_x("gpu_user_annotation", "ProfilerStep#4", 100, 50, stream=7), -1),    # 12: a step on a GPU stream
    ({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}}, "dropped"),  # 13
    (_x("user_annotation", "ProfilerStep#5", 140, 60), 5),                   # 14: overlaps row 12: 5 wins
    (_x("cpu_op", "late_op", 120, 1), 4),                                    # 15: only in row 12's span
    (_x("cpu_op", "late_op", 145, 1), 5),                                    # 16: in rows 12 and 14: the later
    (_x("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 90, 2, stream="9", correlation=101), 4),  # 17: int("9")
    (_x("cuda_runtime", "cudaLaunchKernel", 30, 1, correlation=103), 3),     # 18
    (_x("cuda_driver", "cuLaunchKernel", 70, 1, correlation=103), 4),        # 19
    (_x("kernel", "void k3(int)", 95, 1, stream=7, correlation=103), 4),     # 20: the last CPU row of 103
    (_x("kernel", "void k4(int)", 96, 1, stream=7, correlation=104), -1),    # 21: no launch in the trace
    (_x("cuda_runtime", "hipLaunchKernel", 63, 1, stream="0x0", correlation=105), 4),  # 22: int("0x0") fails: CPU
    (_x("kernel", "void k5(int)", 97, 1, stream=7.0, correlation=105), 4),  # 23: int(7.0) = 7, launched by row 22
]


@pytest.fixture(scope="module")
def hta_pair(tmp_path_factory, shared_traces):
    """(dataset opened on HTA's control and test traces and the hand-made one, control id, test id, hand id)."""
    work = tmp_path_factory.mktemp("hta_diff")
    hand = work / "hand_made.json"
    hand.write_text(json.dumps({"traceEvents": [e for e, _ in HAND]}))
    results = tracesql.ingest([str(shared_traces / BASE), str(shared_traces / TEST), str(hand)],
                              out=work / "ds", quiet=True)
    assert [r.status for r in results] == ["ingested"] * 3
    ids = [str(r.trace_id) for r in results]
    with tracesql.open(work / "ds", trace_ids=ids) as ds:
        yield ds, ids[0], ids[1], ids[2], work / "ds"


@pytest.fixture(scope="module")
def results(hta_pair):
    ds, control, test, _, _ = hta_pair
    return dict(diff_hta.files(ds, control, test))


def _ref_files(reference_dir: Path, prefix: str) -> list[Path]:
    return sorted((reference_dir / REF).glob(f"{prefix}*.csv"))


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as f:
        head, *rows = list(csv.reader(f))
    return head, rows


def _same_value(ours, theirs: str) -> bool:
    if isinstance(ours, str):
        return ours == theirs
    return math.isclose(float(ours), float(theirs), rel_tol=1e-6, abs_tol=0.0)


COMPARE_FILES = ["compare_traces", "compare_traces_all_iterations", "compare_traces_cpu", "compare_traces_gpu",
                 "compare_traces_iter1010_cpu", "compare_traces_iter1010_cpu_short_name",
                 "compare_traces_iter1010_gpu_short_name", "compare_traces_short_name"]
OPS_DIFF_FILES = ["ops_diff", "ops_diff_all_iterations", "ops_diff_cpu", "ops_diff_gpu", "ops_diff_iter1010_cpu",
                  "ops_diff_iter1010_gpu"]


def test_reference_holds_the_files_we_check(reference_dir):
    assert [p.stem for p in _ref_files(reference_dir, "compare_traces")] == COMPARE_FILES
    assert [p.stem for p in _ref_files(reference_dir, "ops_diff")] == OPS_DIFF_FILES


def test_iterations_as_hta_lists_them(hta_pair, reference_dir):
    ds, control, test, _, _ = hta_pair
    info = json.loads((reference_dir / REF / "run_info.json").read_text())
    assert diff_hta.iterations(ds, control) == info["control_iterations"] == [1009, 1010]
    assert diff_hta.iterations(ds, test) == info["test_iterations"] == [1009, 1010]


@pytest.mark.parametrize("name", COMPARE_FILES + OPS_DIFF_FILES)
def test_file_equals_hta(results, reference_dir, name):
    path = reference_dir / REF / f"{name}.csv"
    head, rows = _rows(path)
    df = results[name]
    assert df.columns == head
    assert df.height == len(rows)
    for ours, theirs in zip(df.iter_rows(), rows, strict=True):
        assert all(_same_value(a, b) for a, b in zip(ours, theirs, strict=True)), (ours, theirs)
    # HTA's column types too (an int column where no side is missing, float where the outer join filled one):
    # the CSV text is the same byte for byte
    assert df.write_csv() == path.read_text()


def test_hta_unit_test_expectations(results):
    """The counts HTA's tests/test_trace_diff.py expects for iteration 1010 (rank 1)."""
    cpu = results["compare_traces_iter1010_cpu_short_name"]["counts_change_categories"].value_counts()
    assert dict(cpu.iter_rows()) == {"=": 5, "+": 3, "-": 1}
    gpu = results["compare_traces_iter1010_gpu_short_name"]
    assert gpu["counts_change_categories"].to_list() == ["-"]
    assert gpu["short_name"].to_list() == ["at::native::vectorized_elementwise_kernel"]
    assert diff_hta.as_dict(results["ops_diff_iter1010_cpu"]) == {
        "added": ["AddmmBackward0", "All2All_Pooled_Req", "CatBackward0"], "deleted": ["nccl:all_reduce"],
        "increased": [], "decreased": [],
        "unchanged": ["ProfilerStep#1010", "aten::as_strided", "aten::empty", "cudaEventQuery", "cudaLaunchKernel"]}


@pytest.mark.parametrize("name", OPS_DIFF_FILES)
def test_ops_diff_dict_equals_hta_json(results, reference_dir, name):
    assert diff_hta.as_dict(results[name]) == json.loads((reference_dir / REF / f"{name}.json").read_text())


@pytest.mark.parametrize("side", ["control", "test"])
def test_ops_summary_equals_hta_as_a_set(results, reference_dir, side):
    """Compared as sets of rows (sorted by cat, name): HTA's row order and its cat_id / name_id follow its
    symbol table, numbered in Python's string-hash order, which we do not reproduce."""
    head, rows = _rows(reference_dir / REF / f"ops_summary_{side}.csv")
    assert head[:5] == ["cat", "name", "short_name", "counts", "total_duration"]
    df = results[f"ops_summary_{side}"]
    assert df.columns == head[:5]
    theirs = sorted((r[0], r[1], r[2], int(r[3]), int(r[4])) for r in rows)
    assert list(df.iter_rows()) == theirs
    assert len(theirs) == 7 and ("user_annotation", "ProfilerStep#1009", "ProfilerStep#1009", 1, 100298) in theirs


def test_files_cover_every_iteration_both_traces_have(results):
    for it in (1009, 1010):
        for dev in ("", "_cpu", "_gpu"):
            assert f"compare_traces_iter{it}{dev}" in results
            assert f"compare_traces_iter{it}{dev}_short_name" in results
            assert f"ops_diff_iter{it}{dev}" in results
    # iteration 1009 is the same in both traces: every name unchanged, nothing on one side only
    it1009 = results["compare_traces_iter1009"]
    assert it1009.height == 7 and set(it1009["counts_change_categories"]) == {"="}
    assert it1009["Control_total_duration"].to_list() == it1009["Test_total_duration"].to_list()
    assert len(results) == 5 + 2 * 6 + 4 + 2 * 3 + 2


def test_hand_made_trace_iterations(hta_pair):
    ds, _, _, hand, _ = hta_pair
    rows = ds.con.execute("SELECT event_id, iteration FROM _hta_diff_frame WHERE trace_id = ? ORDER BY event_id",
                          [hand]).fetchall()
    expected = [(i, it) for i, (_, it) in enumerate(HAND) if it != "dropped"]
    assert rows == expected
    assert diff_hta.iterations(ds, hand) == [3, 4, 5]


def test_hand_made_trace_compare(hta_pair):
    ds, _, _, hand, _ = hta_pair
    gpu = diff_hta.compare_traces(ds, hand, hand, 4, 4, device="GPU")
    # row 7 (stream 0) is in no iteration, rows 5 and 21 in iteration -1: never compared, even over all iterations
    assert [r[:5] for r in gpu.iter_rows()] == [
        ("Memcpy HtoD (Pinned -> Device)", 1, 2.0, 1, 2.0), ("void k1<int>(float)", 1, 4.0, 1, 4.0),
        ("void k3(int)", 1, 1.0, 1, 1.0), ("void k5(int)", 1, 1.0, 1, 1.0)]
    every = diff_hta.iterations(ds, hand)
    assert diff_hta.compare_traces(ds, hand, hand, every, every, device="GPU").equals(gpu)
    # the metadata event has no dur: HTA reads dur as float64, so durations print as 2.0, counts as 1
    assert gpu.write_csv().splitlines()[1] == "Memcpy HtoD (Pinned -> Device),1,2.0,1,2.0,0,0.0,="
    short = diff_hta.compare_traces(ds, hand, hand, 4, 4, device="GPU", use_short_name=True)
    assert short["short_name"].to_list() == ["Memcpy HtoD (Pinned -> Device)", "k1", "k3", "k5"]
    cpu = diff_hta.compare_traces(ds, hand, hand, 5, 5, device="CPU")
    assert [(r[0], r[1], r[2]) for r in cpu.iter_rows()] == [("ProfilerStep#5", 1, 60.0), ("late_op", 1, 1.0)]
    # the first iteration by default: 3
    first = diff_hta.compare_traces(ds, hand, hand)
    assert first["name"].to_list() == ["ProfilerStep#3", "aten::mm", "cudaLaunchKernel"]
    assert first["Control_counts"].to_list() == [1, 1, 2]


@pytest.mark.parametrize("name, short", [
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<int>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<int>, at::detail::Array<char*, 3>)",
     "at::native::vectorized_elementwise_kernel"),
    ("Memcpy DtoD (Device -> Device)", "Memcpy DtoD (Device -> Device)"),  # memory names are kept
    ("aten::add", "aten::add"),                                            # no '<' nor '('
    ("std::vector<int> foo(int)", "foo"),                                  # after the last space
    ("a > b(c)", "b"),                                                     # '>' without '<' empties the stack
    ("f(x->y)", "f"),                                                      # '->' removed first
    ("a->b<c>", "ab"),
    ("void k<(8>0)>(int)", ""),                                            # '>' inside (...) ends the <...>
    ("foo<x> ", ""),                                                       # a trailing space leaves ''
])
def test_hta_short_names(hta_pair, name, short):
    ds = hta_pair[0]
    assert ds.con.execute("SELECT _hta_shorten_name(?)", [name]).fetchone()[0] == short


def test_bad_arguments(hta_pair):
    ds, control, test, _, _ = hta_pair
    with pytest.raises(ValueError, match="no iteration 1011"):
        diff_hta.compare_traces(ds, control, test, 1011, 1011)
    with pytest.raises(ValueError, match="device must be"):
        diff_hta.ops_diff(ds, control, test, device="TPU")


def test_cli_writes_hta_files(hta_pair, reference_dir, tmp_path, capsys):
    from tracesql.cli.main import main

    out = tmp_path / "out"
    rc = main(["diff", f"{hta_pair[4]}:hta_trace_compare_base", f"{hta_pair[4]}:hta_trace_compare_test",
               "--style", "hta",
               "--out", str(out)])
    assert rc == 0
    for name in COMPARE_FILES + OPS_DIFF_FILES:
        assert (out / f"{name}.csv").read_text() == (reference_dir / REF / f"{name}.csv").read_text(), name
    assert len(list(out.glob("*.csv"))) == 29
    capsys.readouterr()
    rc = main(["diff", f"{hta_pair[4]}:hta_trace_compare_base", f"{hta_pair[4]}:hta_trace_compare_test",
               "--style", "hta",
               "--level", "ops"])
    assert rc == 2
    assert "--style hta" in capsys.readouterr().err
