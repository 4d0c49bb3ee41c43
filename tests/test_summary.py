"""The first screen (`tracesql summary`, and the top of `tracesql report`): it fits 120 × 50, names the GPU, and
its numbers are those of the detailed views (gpu_timeline, kernel_summary, op_summary, gpu_gaps) of the same
trace."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

import tracesql
from tests.conftest import tracesql_cli
from tracesql.api.analysis import trace_ids


def _run(*args: str) -> str:
    env = dict(os.environ, COLUMNS="120")
    r = subprocess.run(tracesql_cli() + list(args), capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def qwen_summary(qwen_dataset) -> str:
    return _run("summary", str(qwen_dataset[0]))


def _section(text: str, title: str) -> list[str]:
    """The data rows of the table whose header line starts with title."""
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith(title))
    out = []
    for line in lines[i + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


def test_fits_one_screen(qwen_summary):
    lines = qwen_summary.splitlines()
    assert len(lines) <= 50
    assert max(len(line) for line in lines) <= 120
    assert "NVIDIA H100 80GB HBM3" in lines[1] and "1 × " in lines[1]


def test_numbers_are_the_detailed_views(qwen_dataset, qwen_summary):
    path, tid = qwen_dataset
    with tracesql.open(path) as ds:
        (tl,) = ds.execute("SELECT span_ns, busy_pct, idle_pct, compute_pct, comm_exposed_pct, memory_exposed_pct "
                           "FROM gpu_timeline WHERE trace_id = $t AND pooled", {"t": tid}).fetchall()
        n_devices = ds.execute("SELECT count(*) FROM gpu_timeline WHERE trace_id = $t AND NOT pooled",
                               {"t": tid}).fetchall()[0][0]
        kernels = ds.execute("SELECT name, count, total_ns, time_pct FROM kernel_summary WHERE trace_id = $t "
                             "ORDER BY total_ns DESC, name LIMIT 5", {"t": tid}).fetchall()
        ops = ds.execute("SELECT op_name, kernel_time_ns FROM op_summary WHERE trace_id = $t "
                         "ORDER BY kernel_time_ns DESC, op_name LIMIT 5", {"t": tid}).fetchall()
        (gap,) = ds.execute("SELECT max(gap_ns) FROM gpu_gaps WHERE trace_id = $t", {"t": tid}).fetchall()[0]
    # one device: one timeline row, not a device row and an identical 'all' row
    assert n_devices == 1
    rows = _section(qwen_summary, "GPU time (% of span)")
    assert len(rows) == 1
    cells = rows[0].split()[-6:]
    assert cells == [f"{tl[0] / 1e6:,.3f}"] + [f"{x:.1f}" for x in tl[1:]]
    assert cells[1] == "91.9"  # busy % of h100_qwen_infer (README, docs/definitions.md)
    krows = _section(qwen_summary, "Top kernels by GPU time")
    assert len(krows) == 5
    for line, (name, count, total_ns, pct) in zip(krows, kernels, strict=True):
        assert line.startswith(name[:80]) or line.startswith(name[:79] + "…")
        assert line.split()[-4:-2] == [f"{count:,}", f"{total_ns / 1e6:,.3f}"] and line.split()[-1] == f"{pct:.1f}"
    assert krows[0].startswith("at::native::elementwise_kernel ")
    orows = _section(qwen_summary, "Top ops by GPU time")
    assert [r.startswith(o[0] + " ") for r, o in zip(orows, ops, strict=True)] == [True] * 5
    assert [r.split()[-2] for r in orows] == [f"{o[1] / 1e6:,.3f}" for o in ops]
    grows = _section(qwen_summary, "Largest idle gaps")
    assert grows[0].split()[-4] == f"{gap / 1e6:,.3f}"
    cats = re.search(r"^Categories (\w+) ([\d.]+) %", qwen_summary, re.M)
    assert cats and cats.groups() == ("elementwise", "38.4")


def test_report_opens_with_the_summary(qwen_dataset, qwen_summary):
    text = _run("report", str(qwen_dataset[0]))
    assert text.startswith(qwen_summary)
    assert "\n== gpu_timeline\n" in text[len(qwen_summary):]


@pytest.mark.slow
def test_several_traces_get_one_line_each_first(tmp_path, shared_traces):
    files = [str(shared_traces / "nvidia" / f) for f in ("hta_trace_compare_base.json.gz",
                                                         "hta_trace_compare_test.json.gz")]
    tracesql.ingest(files, out=tmp_path / "ds", quiet=True)
    text = _run("summary", str(tmp_path / "ds"))
    lines = text.splitlines()
    assert lines[0].startswith("trace ") and "top kernel" in lines[0]
    assert [line.split()[0] for line in lines[1:3]] == ["hta_trace_compare_base", "hta_trace_compare_test"]
    assert lines[3] == "" and lines[4].startswith("== hta_trace_compare_base.json.gz")
    assert sum(line.startswith("== ") for line in lines) == 2
    assert max(len(line) for line in lines) <= 120


def _compute(text: str) -> str:
    """The Compute line of a first screen, its continuation lines joined."""
    lines = text[text.index("\nCompute ") + 1:].split("\n\n", 1)[0].splitlines()
    return " ".join(" ".join(line.split()) for line in lines)


@pytest.mark.slow
def test_arch_names_the_roofline_gpu(qwen_dataset, qwen_summary):
    """`summary --arch MI300X` puts the H100 trace's ops on the MI300X roofline, as `report --arch` does at its top;
    the figures are perf_traces' under that device."""
    from tracesql.api.report import set_arch

    path, _ = qwen_dataset
    text = _run("summary", str(path), "--arch", "MI300X")
    with tracesql.open(path) as ds:
        set_arch(ds, "native", "MI300X")
        (t,) = ds.execute("SELECT modelled_pct, modelled_op_pct, roofline_pct FROM perf_traces").fetchall()
    assert f"{t[0]:.1f} % of GPU time ({t[1]:.1f} % of op time), at {t[2]:.1f} % of the MI300X roofline" \
        in _compute(text)
    assert "of the H100 SXM roofline" in _compute(qwen_summary)
    assert text.split("\nCompute ")[0] == qwen_summary.split("\nCompute ")[0]  # the rest of the screen as it was
    assert _run("report", str(path), "--arch", "MI300X").startswith(text)


@pytest.mark.slow
def test_arch_for_a_trace_that_names_no_gpu(tmp_path, shared_traces):
    """The summary asks for --arch when the trace names no GPU, and takes it."""
    tracesql.ingest([str(shared_traces / "nvidia/hta_trace_compare_base.json.gz")], out=tmp_path / "ds", quiet=True)
    assert _compute(_run("summary", str(tmp_path / "ds"))).endswith(
        "no roofline: the trace names no GPU (no deviceProperties, or entries without a name); "
        "give --arch NAME or FILE")
    assert _compute(_run("summary", str(tmp_path / "ds"), "--arch", "H100 SXM")).endswith(
        "0.0 % of GPU time (0.0 % of op time); H100 SXM roofline: no modelled op on it")


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory, shared_traces):
    """Three small traces: one kernel (hta_triton_example), two kernel launches (hta_trace_compare_base), and one
    rank of the DLRM job (4 streams)."""
    out = tmp_path_factory.mktemp("small") / "ds"
    files = [str(shared_traces / f) for f in ("nvidia/hta_triton_example.json.gz",
                                              "nvidia/hta_trace_compare_base.json.gz",
                                              "multirank/dlrm_8rank/rank0.json.gz")]
    tracesql.ingest(files, out=out, quiet=True)
    return out


def _launches(text: str) -> str:
    """The Launches line of a first screen and its continuation lines, joined."""
    lines = text[text.index("\nLaunches ") + 1:].split("\nCompute ", 1)[0].splitlines()
    return " ".join(" ".join(line.split()) for line in lines)


def test_a_few_kernels_are_not_launch_bound(small_dataset):
    """One or two kernels are too little evidence: the hint says so instead of calling the trace launch-bound (the
    triton example's one launch took longer than its kernel, which made it 'launch-bound' before)."""
    one = _launches(_run("summary", str(small_dataset), "--trace", "hta_triton_example.json.gz"))
    assert one.endswith("1 of 1 kernel launches (100.0 %) took longer than their kernel (median call 47.8 µs, "
                        "median kernel 1.8 µs) not launch-bound: 1 launch with GPU work, too few to tell (needs 50)")
    two = _launches(_run("summary", str(small_dataset), "--trace", "hta_trace_compare_base.json.gz"))
    assert two.startswith("Launches GPU idle 272.804 ms (99.4 % of the span), of which 0.000 ms (0.0 %) with a "
                          "stream waiting for a launch (0 host-wait gaps); summed over 2 streams, host waits "
                          "0.000 ms of 373.623 ms stream idle time;")
    assert two.endswith("not launch-bound: 2 launches with GPU work, too few to tell (needs 50)")


def test_host_waits_are_times_of_the_span(small_dataset):
    """On 4 streams the host waits summed over streams (22.2 ms) exceed the GPU span (13.0 ms): the screen compares
    them only with the summed stream idle time, and its headline is the GPU idle time during which a stream waited
    for a launch, recomputed here from gpu_gaps and gpu_activity."""
    text = _launches(_run("summary", str(small_dataset), "--trace", "rank0.json.gz"))
    assert text.startswith("Launches GPU idle 6.419 ms (49.3 % of the span), of which 6.060 ms (94.4 %) with a "
                           "stream waiting for a launch (197 host-wait gaps); summed over 4 streams, host waits "
                           "22.239 ms of 22.383 ms stream idle time; 164 of 245 kernel launches (66.9 %)")
    assert text.endswith("launch-bound: the GPU mostly waits for the CPU to launch work (fewer, larger kernels or "
                         "CUDA graphs help)")
    with tracesql.open(small_dataset) as ds:
        (tid,) = trace_ids(ds, "rank0.json.gz")
        (h,) = ds.execute("SELECT span_ns, gpu_idle_ns, idle_host_wait_ns, host_wait_union_ns, host_wait_sum_ns, "
                          "stream_idle_sum_ns FROM overview_launch_hints WHERE trace_id = $t", {"t": tid}).fetchall()
        busy = ds.execute("SELECT ts_ns, end_ns FROM gpu_activity WHERE trace_id = $t AND activity_class <> 'sync'",
                          {"t": tid}).fetchall()
        waits = ds.execute("SELECT prev_end_ns, ts_ns FROM gpu_gaps WHERE trace_id = $t AND gap_ns > 0 AND host_wait",
                           {"t": tid}).fetchall()
    span, idle, idle_wait, union, wait_sum, idle_sum = h
    assert (span, idle, idle_wait) == (13_009_000, 6_419_000, 6_060_000)
    assert wait_sum > span and idle_sum > span  # sums over streams: not times of the span
    assert idle_wait <= union <= span and idle_wait <= idle

    def merged(iv):
        out: list[list[int]] = []
        for s, e in sorted(iv):
            if out and s <= out[-1][1]:
                out[-1][1] = max(out[-1][1], e)
            else:
                out.append([s, e])
        return out

    def length(iv):
        return sum(e - s for s, e in iv)

    def minus(a, b):  # intervals of a not covered by b, both merged
        out, j = [], 0
        for s, e in a:
            while j < len(b) and b[j][1] <= s:
                j += 1
            k, cur = j, s
            while k < len(b) and b[k][0] < e:
                if b[k][0] > cur:
                    out.append([cur, b[k][0]])
                cur = max(cur, b[k][1])
                k += 1
            if cur < e:
                out.append([cur, e])
        return out

    w, b = merged(waits), merged(busy)
    assert length(w) == union
    assert length(minus(w, b)) == idle_wait
