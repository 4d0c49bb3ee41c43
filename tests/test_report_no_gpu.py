"""A trace without GPU events (a CPU-only run, or a profile whose GPU side was not recorded) still gets its report
folder, and one line on stderr says why its GPU sections are absent."""
from __future__ import annotations

import subprocess

import tracesql
from tests.conftest import tracesql_cli

CPU = ("tracesql report: hta_cpu_only_rank34.json.gz: no GPU sections, no GPU events and no launch calls: a CPU-only "
       "run (16 CPU events, backend gloo)")
ZOOLOGY = ("tracesql report: zoology_a100.json.gz: no GPU sections, no GPU events, though 268 launch calls: the "
           "profiler did not record the GPU side (GPU activity off, or a device or mode whose events it does not "
           "write, e.g. MTIA or the CUPTI range profiler)")


def _report(ds, out) -> subprocess.CompletedProcess:
    r = subprocess.run(tracesql_cli() + ["report", str(ds), "--out", str(out)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return r


def test_cpu_only_trace_gets_its_folder_and_a_reason(tmp_path, shared_traces):
    tracesql.ingest([str(shared_traces / "cpu/hta_cpu_only_rank34.json.gz")], out=tmp_path / "ds", quiet=True)
    r = _report(tmp_path / "ds", tmp_path / "rep")
    assert (tmp_path / "rep").is_dir() and list((tmp_path / "rep").iterdir()) == []
    assert r.stderr.splitlines() == [CPU]


def test_mixed_dataset_one_line_per_trace_without_gpu(tmp_path, shared_traces):
    files = ["cpu/hta_cpu_only_rank34.json.gz", "nvidia/zoology_a100.json.gz", "nvidia/hta_triton_example.json.gz"]
    tracesql.ingest([str(shared_traces / f) for f in files], out=tmp_path / "ds", quiet=True)
    r = _report(tmp_path / "ds", tmp_path / "rep")
    lines = r.stderr.splitlines()
    assert [ln for ln in lines if ln.startswith("tracesql report:")] == [CPU, ZOOLOGY]
    rep = tmp_path / "rep"
    assert sorted(p.name for p in rep.iterdir() if p.is_dir()) == ["hta_cpu_only_rank34", "hta_triton_example",
                                                                   "zoology_a100"]
    assert list((rep / "hta_cpu_only_rank34").iterdir()) == []
    # what applies to a profile without its GPU side: its launch calls, per API
    assert [p.name for p in (rep / "zoology_a100").iterdir()] == ["launch_stats.csv"]
    stats = (rep / "zoology_a100" / "launch_stats.csv").read_text().splitlines()
    assert [(x.split(",")[2], x.split(",")[4], x.split(",")[5]) for x in stats[1:]] == [
        ("cudaLaunchKernel", "236", "0"), ("cuLaunchKernel", "24", "0"), ("cudaMemcpyAsync", "8", "0")]
    assert (rep / "hta_triton_example" / "kernel_summary.csv").is_file()
    assert (rep / "traces_overview.csv").read_text().count("\n") == 1 + 3
    with tracesql.open(tmp_path / "ds") as d:
        rows = d.sql("SELECT cpu_events, launch_calls FROM overview_no_gpu ORDER BY cpu_events").rows()
    assert rows == [(16, 0), (1478, 268)]
