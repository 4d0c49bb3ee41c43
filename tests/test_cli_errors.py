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
