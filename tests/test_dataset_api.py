"""The Python API says `trace=` everywhere (a trace_id or a label, as the CLI's --trace), keeps `trace_id=` with a
DeprecationWarning, and offers what the CLI's first screen, report and launches commands show."""
from __future__ import annotations

import csv
import io
import os
import subprocess

import pytest

import tracesql
from tests.conftest import tracesql_cli

QWEN = "h100_qwen_infer.json.gz"


@pytest.fixture(scope="module")
def qds(qwen_dataset):
    d = tracesql.open(qwen_dataset[0])
    yield d
    d.close()


def test_trace_takes_an_id_or_a_label(qds, qwen_dataset):
    tid = qwen_dataset[1]
    by_label = qds.tree(trace=QWEN, op="aten::mm", depth=0)
    assert by_label.height == 96 and by_label.equals(qds.tree(trace=tid, op="aten::mm", depth=0))
    cats = qds.categories(trace=QWEN)
    assert cats.equals(qds.categories(trace=tid[:8]))
    assert cats["kernel_category"][0] == "elementwise" and cats["count"].sum() == 1707


def test_the_old_keyword_still_works_with_a_warning(qds, qwen_dataset):
    tid = qwen_dataset[1]
    with pytest.warns(DeprecationWarning, match=r"Dataset.tree\(trace_id=...\) is deprecated: use trace="):
        old = qds.tree(trace_id=tid, op="aten::mm", depth=0)
    assert old.equals(qds.tree(trace=tid, op="aten::mm", depth=0))
    with pytest.warns(DeprecationWarning, match=r"Dataset.categories\(trace_id=...\)"):
        assert qds.categories(trace_id=tid).equals(qds.categories(trace=tid))
    with pytest.raises(TypeError, match="unexpected keyword argument 'trace_ids'"):
        qds.tree(trace_ids=[tid])


def test_tree_of_an_unknown_module_or_op_raises_as_the_cli_exits_1(qds, qwen_dataset):
    with pytest.raises(tracesql.EmptySelection, match="no module 'Nope' found"):
        qds.tree(module="Nope")
    with pytest.raises(tracesql.EmptySelection, match="no op 'no::such_op' found"):
        qds.tree(op="no::such_op", trace=QWEN)
    r = subprocess.run(tracesql_cli() + ["tree", str(qwen_dataset[0]), "--module", "Nope"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 1 and r.stderr.startswith("tracesql: error: no module 'Nope' found in ")


def test_summary_report_and_launches(qds, qwen_dataset):
    frames = qds.summary(trace=QWEN)
    assert list(frames)[:2] == ["overview_traces", "overview_timeline"]
    (h,) = frames["overview_launch_hints"].to_dicts()
    assert (h["gpu_idle_ns"], h["idle_host_wait_ns"], h["host_wait_gaps"], h["launch_bound"]) == \
        (4_005_532, 1_500_603, 25, False)
    assert frames["overview_top_categories"]["kernel_category"][0] == "elementwise"
    sections = qds.report(trace=QWEN)
    names = [s.name for s in sections]
    assert names[:4] == ["gpu_timeline", "gpu_timeline_by_step", "comm_compute_overlap", "kernel_summary"]
    assert "launch_stats" in names and "short_kernels" in names
    launches = qds.launches(trace=QWEN)
    env = dict(os.environ, COLUMNS="120")
    r = subprocess.run(tracesql_cli() + ["launches", str(qwen_dataset[0]), "-f", "csv"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [x["api"] for x in rows] == launches["api"].to_list()
    assert [int(x["calls"]) for x in rows] == launches["calls"].to_list()
    assert launches["calls_with_gpu"].sum() == 1198  # the launches with GPU work of the first screen
    assert launches.filter(launches["api"] == "cudaLaunchKernel")["short_kernels"].to_list() == [109]


def test_category_rows_are_ordered_not_ranked(qds):
    cols = qds.sql("SELECT * FROM kernel_category_summary LIMIT 0").columns
    assert "row_order" in cols and "rank" not in cols
    rows = qds.sql("SELECT kernel_category, row_order FROM kernel_category_summary WHERE ruleset = 'default' "
                   "ORDER BY row_order").rows()
    assert [r[1] for r in rows] == list(range(1, len(rows) + 1)) and rows[0][0] == "elementwise"
    assert "rank" not in qds.sql("SELECT * FROM kernel_category_summary_all LIMIT 0").columns
