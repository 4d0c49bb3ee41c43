"""Kernel summary, gaps, idle breakdown, launch statistics and the report command on the shared traces."""
from __future__ import annotations

import csv

import pytest

from tracesql import DatasetError
from tracesql.api import analysis, report
from tracesql.cli.main import main
from tracesql.render.formats import write
from tracesql.render.sections import Document
from tracesql.store.sqlmodules import outputs

from .conftest import TRACELENS_KERNEL_REFS

QWEN = "nvidia/h100_qwen_infer.json.gz"


def read_csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def q(ds, sql, params=None):
    return ds.con.sql(sql, params=params).fetchall()


def test_kernel_summary_matches_hta_per_kernel_stats(ds, trace_ids, reference_dir):
    """HTA's kernel_breakdown_all gives sum/max/min/mean/sample std per full kernel name: ours must agree."""
    tid = trace_ids[QWEN]
    want = [r for r in read_csv(reference_dir / "hta" / "nvidia_h100_qwen_infer" / "kernel_breakdown_all.csv")
            if r["name"] != "others"]
    assert len(want) >= 10
    got = {r[0]: r[1:] for r in q(ds, "SELECT name, total_ns, max_ns, min_ns, std_ns, avg_ns FROM kernel_summary_full "
                                      "WHERE trace_id = $t", {"t": tid})}
    for w in want:
        total, mx, mn, std, avg = got[w["name"]]
        assert abs(total / 1e3 - float(w["sum (us)"])) < 1e-6
        assert abs(mx / 1e3 - float(w["max (us)"])) < 1e-9 and abs(mn / 1e3 - float(w["min (us)"])) < 1e-9
        assert abs(avg / 1e3 - float(w["mean (us)"])) < 1e-6 * float(w["mean (us)"])
        assert abs(std / 1e3 - float(w["stddev"])) < 1e-6 * max(1.0, float(w["stddev"]))


def test_kernel_summary_totals_and_options(ds, trace_ids):
    tid = trace_ids[QWEN]
    n, pct_l, pct_t = q(ds, "SELECT sum(count), sum(launches_pct), sum(time_pct) FROM kernel_summary "
                            "WHERE trace_id = $t", {"t": tid})[0]
    assert n == 1707 and abs(pct_l - 100) < 1e-9 and abs(pct_t - 100) < 1e-9
    # short names merge template instances: fewer rows than full names, same totals
    assert q(ds, "SELECT count(*) FROM kernel_summary WHERE trace_id = $t", {"t": tid})[0][0] == 12
    assert q(ds, "SELECT count(*) FROM kernel_summary_full WHERE trace_id = $t", {"t": tid})[0][0] == 28
    df = analysis.kernel_summary(ds, trace="h100_qwen_infer", sort="count", top=2)
    assert df["count"].to_list() == [549, 427] and df["name"][0] == "at::native::elementwise_kernel"
    df = analysis.kernel_summary(ds, trace=QWEN.split("/")[1], step=6, verbose=True)
    assert df["count"].sum() == 1198  # GPU work launched in ProfilerStep#6 (the warm-up kernels are not)
    with pytest.raises(DatasetError, match=r"no ProfilerStep#7 in the selected traces \(steps: 6\)"):
        analysis.kernel_summary(ds, trace="h100_qwen_infer", step=7)


def test_short_kernel_names(ds):
    got = dict(q(ds, "SELECT n, _short_kernel_name(n) FROM (VALUES "
                     "('void at::native::elementwise_kernel<128, 4, at::native::Foo<float> >(int, float)'), "
                     "('void at::native::(anonymous namespace)::CatArrayBatchedCopy<int, 4>(int*)'), "
                     "('Memset (Device)'), ('ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long)'), "
                     "('sm90_xmma_gemm_bf16bf16')) t(n)"))
    assert got == {
        "void at::native::elementwise_kernel<128, 4, at::native::Foo<float> >(int, float)":
            "at::native::elementwise_kernel",
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<int, 4>(int*)":
            "at::native::{anonymous}::CatArrayBatchedCopy",
        "Memset (Device)": "Memset (Device)",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long)":
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "sm90_xmma_gemm_bf16bf16": "sm90_xmma_gemm_bf16bf16",
    }


def test_gaps_agree_with_timeline(ds, trace_ids):
    tid = trace_ids[QWEN]  # one stream: stream idle = device idle
    (row,) = q(ds, "SELECT n_events, n_gaps, idle_ns, span_ns, busy_ns, max_gap_ns FROM gap_totals_by_stream "
                   "WHERE trace_id = $t", {"t": tid})
    assert row == (1707, 1706, 4_005_532, 49_652_832, 45_647_300, 290_943)
    assert q(ds, "SELECT idle_ns FROM gpu_timeline WHERE trace_id = $t AND pooled", {"t": tid})[0][0] == row[2]
    # transitions: one per consecutive pair
    assert q(ds, "SELECT sum(count) FROM kernel_transitions WHERE trace_id = $t", {"t": tid})[0][0] == 1706
    assert q(ds, "SELECT sum(total_idle_ns) FROM kernel_transitions_of(true) WHERE trace_id = $t",
             {"t": tid})[0][0] == 4_005_532
    # histogram: every gap in [0, 300] µs lands in one of the bins
    h = analysis.gaps(ds, trace=tid, what="histogram", hist_min=0, hist_max=300, bins=30)
    assert h.height == 30 and h["count"].sum() == 1706 and abs(float(h["total_us"].sum()) - 4005.532) < 1e-6
    t = analysis.gaps(ds, trace=tid, what="transitions", sort="max", top=1)
    assert t["max_gap_us"][0] == 290.943


def test_idle_breakdown_native(ds, trace_ids):
    tid = trace_ids[QWEN]
    rows = q(ds, "SELECT idle_category, idle_ns, count FROM idle_breakdown WHERE trace_id = $t", {"t": tid})
    assert dict((r[0], r[1]) for r in rows) == {"host_wait": 1_500_603, "kernel_wait": 2_504_929}
    assert sum(r[1] for r in rows) == 4_005_532
    # a 2 µs threshold moves the longer launch gaps to 'other'
    rows = dict((r[0], r[1]) for r in q(ds, "SELECT idle_category, count FROM idle_breakdown_at(2) WHERE trace_id = $t",
                                        {"t": tid}))
    assert rows == {"host_wait": 25, "kernel_wait": 1490, "other": 191}


def test_launch_stats_every_api(ds, trace_ids):
    tid = trace_ids["nvidia/b200_eager_nccl.json.gz"]
    apis = dict(q(ds, "SELECT api, calls_with_gpu FROM launch_stats_by_api WHERE trace_id = $t", {"t": tid}))
    assert apis == {"cuLaunchKernel": 1, "cuLaunchKernelEx": 220, "cudaLaunchKernel": 367,
                    "cudaLaunchKernelExC": 180, "cudaMemcpyAsync": 161}
    amd = dict(q(ds, "SELECT api, calls FROM launch_stats_by_api WHERE trace_id = $t",
                 {"t": trace_ids["graphs/vllm_decode_full/graph_execution.json.gz"]}))
    assert amd["hipGraphLaunch"] == 1 and "hipExtModuleLaunchKernel" in amd
    n = q(ds, "SELECT n_gpu_events FROM launch_stats WHERE trace_id = $t AND api = 'hipGraphLaunch'",
          {"t": trace_ids["graphs/vllm_decode_full/graph_execution.json.gz"]})[0][0]
    assert n == 421
    # HTA's delay is ours clipped at 0, for the APIs HTA knows (up to HTA's float64 rounding of µs clock
    # values near 1.4e12: one ulp is 2^-12 µs)
    diff = q(ds, """SELECT max(abs(greatest(s.launch_delay_ns, 0) / 1e3 - h.launch_delay)), count(*)
                    FROM launch_stats s JOIN hta_cuda_kernel_launch_stats h
                      ON h.trace_id = s.trace_id AND h.correlation = (SELECT correlation FROM launches l
                         WHERE l.trace_id = s.trace_id AND l.event_id = s.launch_event_id)
                    WHERE s.trace_id = $t""", {"t": trace_ids[QWEN]})[0]
    assert diff[1] == 1197 and diff[0] <= 2 ** -12 + 1e-9


def test_report_tracelens_csv(tmp_path, all_dataset, reference_dir):
    out = tmp_path / "tl"
    assert main(["report", str(all_dataset[0]), "--trace", "h100_qwen_infer", "--style", "tracelens",
                 "--format", "csv", "--out", str(out)]) == 0
    got = read_csv(out / "gpu_timeline.csv")
    want = read_csv(reference_dir / "tracelens" / "nvidia" / "h100_qwen_infer" / "gpu_timeline.csv")
    assert [r["type"] for r in got] == [r["type"] for r in want]
    for g, w in zip(got, want, strict=True):
        assert abs(float(g["time ms"]) - float(w["time ms"])) <= 1e-6 * max(1e-9, abs(float(w["time ms"])))


def test_report_hta_csv_files(tmp_path, all_dataset, reference_dir):
    out = tmp_path / "hta"
    assert main(["report", str(all_dataset[0]), "--trace", "hta_ns_resolution_rank0", "--style", "hta",
                 "--format", "csv", "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["comm_comp_overlap.csv", "critical_path_summary.csv", "cuda_kernel_launch_stats.csv",
                     "frequent_cuda_kernel_sequences.csv",
                     "idle_time_breakdown.csv", "kernel_type_breakdown.csv", "memory_bw_summary.csv",
                     "queue_length_summary.csv", "temporal_breakdown.csv"]
    ref = reference_dir / "hta" / "nvidia_hta_ns_resolution_rank0"
    assert (out / "frequent_cuda_kernel_sequences.csv").read_bytes() == \
        (ref / "frequent_cuda_kernel_sequences.csv").read_bytes()  # none found: HTA's empty frame, written '""'
    for name in ("memory_bw_summary.csv", "queue_length_summary.csv"):  # pandas's two-level header, as HTA writes it
        want, got = (ref / name).read_text().splitlines(), (out / name).read_text().splitlines()
        assert got[:3] == want[:3] and [r.split(",")[:3] for r in got] == [r.split(",")[:3] for r in want]
    assert read_csv(out / "idle_time_breakdown.csv") == \
        [{k: v for k, v in r.items() if k} for r in read_csv(ref / "idle_time_breakdown.csv")]
    assert list(read_csv(out / "temporal_breakdown.csv")[0]) == [k for k in read_csv(ref / "temporal_breakdown.csv")[0]
                                                                 if k]


def test_report_native_sections(all_dataset, trace_ids, capsys):
    import tracesql

    with tracesql.open(all_dataset[0]) as own:  # the report materializes views on its connection
        sections = report.build(own, style="native", trace=trace_ids[QWEN])
    names = [s.name for s in sections]
    # the SQL library's @output report-native, in its order
    assert names == ["gpu_timeline", "gpu_timeline_by_step", "comm_compute_overlap", "kernel_summary", "gaps_by_stream",
                     "gap_histogram", "kernel_transitions", "idle_breakdown", "launch_stats", "op_summary",
                     "op_arg_summary", "short_kernels", "short_kernel_histogram", "queue_length", "copy_bandwidth",
                     "memory", "memory_timeline", "frequent_kernel_sequences", "critical_path"]
    assert {o.call for o in outputs("report-native")} - {None} <= set(report._CALLS)
    tl = {s.name: s.frame for s in sections}["gpu_timeline"]
    assert tl.filter(tl["pooled"])["idle_us"].to_list() == [4005.532]
    write(Document(sections), "table")
    assert "== kernel_summary" in capsys.readouterr().out


def test_cli_commands(all_dataset, capsys):
    path = str(all_dataset[0])
    assert main(["kernels", path, "--trace", "h100_qwen_infer", "--top", "1", "--format", "csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[1].split(",", 1)[1].startswith(
        "h100_qwen_infer.json.gz,at::native::elementwise_kernel,compute,549,")
    assert main(["gaps", path, "--trace", "h100_qwen_infer", "--idle", "--format", "csv"]) == 0
    assert "host_wait,25," in capsys.readouterr().out
    assert main(["timeline", path, "--trace", "h100_qwen_infer", "--style", "tracelens", "--format", "csv"]) == 0
    assert "busy_time,31.905483154296" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["kernels", path, "--sort", "bogus"])


KERNEL_SUMMARY_REFS = TRACELENS_KERNEL_REFS


@pytest.fixture(scope="module")
def tl_kernel_summaries(ds, trace_ids):
    """TraceLens kernel_summary of every reference trace, computed in one query as the report does."""
    return report._peer_section(ds, "tl_kernel_summary", None, [trace_ids[t] for _, t in KERNEL_SUMMARY_REFS])


@pytest.mark.parametrize("ref,trace", KERNEL_SUMMARY_REFS)
def test_tracelens_kernel_summary_equals_reference(tl_kernel_summaries, trace_ids, reference_dir, ref, trace):
    want = read_csv(reference_dir / "tracelens" / ref / "kernel_summary.csv")
    got = tl_kernel_summaries[trace_ids[trace]]
    assert got.columns == list(want[0])
    assert got.height == len(want)
    for g, w in zip(got.iter_rows(named=True), want, strict=True):
        for k, v in w.items():
            if k in ("Parent op category", "Parent cpu_op", "Kernel name") or g[k] is None:
                assert g[k] == v, (k, g[k], v)
            else:
                assert abs(float(g[k]) - float(v)) <= 1e-6 * max(abs(float(v)), 1e-12), (k, g[k], v)


def test_tracelens_kernel_summary_percent_of_total_exceeds_100(ds, trace_ids):
    """TraceLens divides by its gpu_timeline total, which leaves out unlinked kernels (docs/peers.md)."""
    pct = q(ds, 'SELECT sum("Percent of total time (%)"), sum("Percent of kernels time (%)") FROM tl_kernel_summary '
                "WHERE trace_id = $t", {"t": trace_ids[QWEN]})[0]
    assert 130 < pct[0] < 131 and abs(pct[1] - 100) < 1e-9
