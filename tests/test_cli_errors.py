"""Errors met inside a command end as one line ``tracesql: error: ...`` on stderr and exit status 1, never as a
traceback: database errors (duckdb.Error) and the RuntimeError the report raises for them included."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import tracesql
from tracesql.api import report
from tracesql.cli.main import EXIT_FAILED, main

from .conftest import tracesql_cli

BAD = Path(__file__).resolve().parent / "data" / "bad"


@pytest.fixture
def small_ds(tmp_path) -> Path:
    """A dataset of one small valid trace (from the bad-input corpus: it needs no shared files)."""
    out = tmp_path / "ds"
    (r,) = tracesql.ingest([str(BAD / "dur_negative.json")], out=out, quiet=True)
    assert r.status == "ingested", r.error
    return out


def _one_error_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("tracesql: error: "), err
    assert "Traceback" not in err
    return err[len("tracesql: error: "):-1]


def test_database_error_inside_report(small_ds, capsys, monkeypatch):
    """report.report turns a duckdb.Error of a section into RuntimeError('report failed: ...'); main reports it."""

    def broken_sections(ds, ids, trace):
        return {"broken": lambda: ds.con.sql("SELECT no_such_column FROM traces").pl()}

    monkeypatch.setattr(report, "_native_sections", broken_sections)
    rc = main(["report", str(small_ds)])
    out, err = capsys.readouterr()
    assert rc == EXIT_FAILED == 1
    msg = _one_error_line(err)
    assert msg.startswith("report failed: Binder Error: ") and "no_such_column" in msg, msg
    assert out == ""


def test_database_error_from_an_analysis_function(small_ds, capsys, monkeypatch):
    """A duckdb.Error that a command does not catch itself (here: `kernels`) is reported by main."""
    from tracesql.api import analysis

    def broken_summary(ds, **kw):
        return ds.con.sql("SELECT * FROM no_such_view").pl()

    monkeypatch.setattr(analysis, "kernel_summary", broken_summary)
    rc = main(["kernels", str(small_ds)])
    msg = _one_error_line(capsys.readouterr().err)
    assert rc == 1
    assert msg.startswith("Catalog Error: ") and "no_such_view" in msg, msg


def test_damaged_table_part_is_one_line_from_the_command_line(small_ds):
    """A Parquet part damaged after the ingest: `tracesql tables` (which counts every table) fails in DuckDB; the
    installed command prints one line and exits 1."""
    (part,) = (small_ds / "traces").glob("trace_id=*/events/*.parquet")
    part.write_bytes(part.read_bytes()[:100])
    proc = subprocess.run(tracesql_cli() + ["tables", str(small_ds)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    msg = _one_error_line(proc.stderr)
    assert "events" in msg or str(part) in msg, msg


def test_exit_statuses_are_in_the_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "exit status: 0 success; 1 a trace, dataset, rule file or query failed" in help_text
    assert "2 bad command line; 130 interrupted" in help_text


# ---- options: absurd values are usage errors (exit 2) before any work --------------------------------------------

def _usage_error(argv: list[str], capsys) -> str:
    """The error line of a command line refused while parsing (argparse: the usage, then one error line)."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2, argv
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("argv", [
    ["perf", "DS", "--below-pct", "nan"], ["perf", "DS", "--below-pct", "inf"],
    ["diff", "A", "B", "--fail-if-slower", "nan"], ["diff", "A", "B", "--fail-if-slower=-inf"],
    ["gaps", "DS", "--hist", "--hist-min", "nan"], ["gaps", "DS", "--hist", "--hist-max", "inf"],
    ["gaps", "DS", "--idle", "--kernel-wait-us", "NaN"], ["launches", "DS", "--runtime-cutoff-us", "nan"],
    ["launches", "DS", "--launch-delay-cutoff-us", "Infinity"],
])
def test_nan_and_inf_are_refused(argv, capsys):
    line = _usage_error(argv, capsys)
    assert "must be a finite number, not" in line and argv[-2 if "=" not in argv[-1] else -1].split("=")[0] in line, \
        line


@pytest.mark.parametrize("argv,text", [
    (["gaps", "DS", "--hist", "--bins", "1000000000"], "--bins: must be at most 10,000 (one row per bin)"),
    (["ingest", "x.json", "--jobs", "100000"], "--jobs/-j: must be at most 1,024"),
    (["report", "DS", "--out", "D", "--jobs", "5000"], "--jobs/-j: must be at most 1,024"),
    (["launches", "DS", "--runtime-cutoff-us", "-1"], "--runtime-cutoff-us: must be at least 0, not -1"),
    (["tree", "DS", "--width", "-3"], "--width: must be 1 or more, not -3"),
    (["perf", "DS", "--below-pct", "ten"], "--below-pct: not a number: 'ten'"),
    (["gaps", "DS", "--hist", "--hist-max", "1e300"], "--hist-max: must be at most 1e+15, not 1e+300"),
    (["gaps", "DS", "--hist", "--hist-min=-1e308"], "--hist-min: must be at least -1e+15, not -1e+308"),
])
def test_options_with_a_cost_are_bounded(argv, text, capsys):
    assert text in _usage_error(argv, capsys)


def test_bins_at_the_bound_run(small_ds, capsys):
    from tracesql.api.analysis import MAX_BINS

    assert main(["gaps", str(small_ds), "--hist", "--bins", str(MAX_BINS), "-f", "csv"]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("peaks,text", [("-989,67,3.35", "bf16_tflops is -989.0"), ("989,0,3.35", "fp32_tflops is 0.0"),
                                        ("989,67,nan", "memory_tb_s is nan"), ("989,inf,3.35", "fp32_tflops is inf")])
def test_arch_file_peaks_must_be_positive(small_ds, tmp_path, capsys, peaks, text):
    spec = tmp_path / "arch.csv"
    spec.write_text(f"gpu,name_pattern,bf16_tflops,fp32_tflops,memory_tb_s\nMine,.,{peaks}\n")
    for cmd in ("perf", "summary"):
        assert main([cmd, str(small_ds), "--arch", str(spec)]) == 2
        msg = _one_error_line(capsys.readouterr().err)
        assert msg.startswith(f"{spec}: device 'Mine': {text}; peaks and bandwidth must be positive"), msg


def test_names_tag_that_is_a_path(small_ds, tmp_path, capsys):
    """`diff --style tracelens --names TAG1 TAG2`: the tags are part of file names; one that is a path is a usage
    error naming it, and nothing is written outside --out."""
    out = tmp_path / "out"
    for tag in ("../x", "a/b", "..", "x\ny"):
        rc = main(["diff", str(small_ds), str(small_ds), "--style", "tracelens", "--names", "base", tag, "--out",
                   str(out)])
        assert rc == 2
        msg = _one_error_line(capsys.readouterr().err)
        assert msg.startswith("--names: ") and "cannot be part of a file name" in msg, msg
    assert not out.exists() and not (tmp_path / "x").exists()


def test_unwritable_output_names_the_path(small_ds, tmp_path, capsys):
    """An output file polars cannot create (its OSError has no strerror): the line names the path."""
    target = tmp_path / "missing" / "k.csv"
    assert main(["query", str(small_ds), "SELECT 1 AS x", "-f", "csv", "-o", str(target)]) == 1
    msg = _one_error_line(capsys.readouterr().err)
    assert str(target) in msg and "FileNotFoundError" != msg, msg


def test_the_suite_fails_a_cli_run_that_prints_a_traceback(tmp_path, request):
    """tests/conftest.py checks every tracesql run a test makes through subprocess: here a stand-in `tracesql`
    that prints a traceback is seen (and forgotten again, so that this test passes)."""
    import os
    import sys

    from .conftest import is_tracesql_run

    fake = tmp_path / "tracesql"
    fake.write_text("#!/bin/sh\necho 'Traceback (most recent call last):' >&2\nexit 1\n")
    fake.chmod(0o755)
    subprocess.run([str(fake), "kernels", "DS"], capture_output=True, text=True)
    subprocess.run([str(fake)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert len(request.node.cli_tracebacks) == 2
    request.node.cli_tracebacks.clear()
    subprocess.run(["sh", "-c", "echo 'Traceback (most recent call last):' >&2"], capture_output=True)  # not ours
    assert request.node.cli_tracebacks == []
    assert is_tracesql_run([sys.executable, "-m", "tracesql.cli", "query"]) and is_tracesql_run(tracesql_cli())
    assert is_tracesql_run(["bash", "-c", f"{os.path.dirname(sys.executable)}/tracesql ingest x"])
    assert not is_tracesql_run([sys.executable, "-c", "print('tracesql')"])


def test_usage_error_line_shows_arguments_escaped(capsys):
    """argparse's own error line repeats what the command line held: escaped like every other error line."""
    line = _usage_error(["kernels", "DS", "x\x1b[2J\u202ey"], capsys)
    assert line.endswith("unrecognized arguments: x\\x1b[2J\\u202ey"), line


@pytest.mark.parametrize("bw,peak,text", [(5300, -708, "max_achievable_tflops.matrix_bf16 is -708.0"),
                                          (0, 708, "mem_bw_gbps is 0.0")])
def test_tracelens_arch_file_peaks_must_be_positive(small_ds, tmp_path, capsys, bw, peak, text):
    import json

    spec = tmp_path / "arch.json"
    spec.write_text(json.dumps({"mem_bw_gbps": bw, "max_achievable_tflops": {"matrix_bf16": peak,
                                                                             "matrix_fp16": 654}}))
    assert main(["report", str(small_ds), "--style", "tracelens", "--arch", str(spec)]) == 2
    msg = _one_error_line(capsys.readouterr().err)
    assert msg == f"{spec}: {text}; the bandwidth and the peaks must be positive numbers", msg


def test_the_api_bounds_histogram_bins_as_the_command_does(small_ds):
    from tracesql.api.analysis import MAX_BINS

    with tracesql.open(small_ds) as ds:
        for bins in (0, MAX_BINS + 1, 1_000_000_000):
            with pytest.raises(ValueError, match="1 to 10,000 bins"):
                ds.gaps(what="histogram", bins=bins)
        assert ds.gaps(what="histogram", bins=MAX_BINS).columns[:3] == ["trace_id", "trace", "bin"]  # the bound runs
