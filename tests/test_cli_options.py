"""One option name, one meaning: the argparse parsers of every subcommand, read by introspection. An option string
(`-o`, `--out`, `-j`, ...) has the same destination, long form, metavar and type in every command that takes it;
the shared ones say the same thing. Plus the spellings that changed: `report --output`, `summary --arch`, ingest's
deprecated `-o`, and `--job` without `-j`."""
from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

import pytest

from tracesql.cli.common import jobs_number
from tracesql.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parent.parent

# What the options that many commands share mean: (dest, option strings, metavar)
MEANING = {
    "--output": ("output", ("--output", "-o"), "FILE"),
    "--out": ("out", ("--out",), "DIR"),
    "--jobs": ("jobs", ("--jobs", "-j"), "N"),
    "--job": ("job", ("--job",), "J"),
    "--trace": ("trace", ("--trace", "-t"), "TRACE"),
    "--format": ("format", ("--format", "-f"), None),
    "--arch": ("arch", ("--arch",), "NAME|FILE"),
    "--top": ("top", ("--top", "-n"), "N"),
    "--wide": ("wide", ("--wide", "-w"), None),
}
# the options whose help is word for word the same in every command
SAME_HELP = {"--output", "--trace", "--job", "--scheduler", "--scheduler-file", "--verbose"}
# former spellings that still work, left out of --help: (command, option string) -> the current spelling
DEPRECATED = {("ingest", "-o"): "--out"}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    p = build_parser()
    (sub,) = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _options() -> dict[str, list[tuple[str, argparse.Action]]]:
    """{option string: [(command, action)]} over the documented options (help not suppressed) of every command."""
    out: dict[str, list[tuple[str, argparse.Action]]] = defaultdict(list)
    for cmd, sp in _subparsers().items():
        for a in sp._actions:
            if a.help == argparse.SUPPRESS or isinstance(a, argparse._HelpAction):
                continue
            for o in a.option_strings:
                out[o].append((cmd, a))
    return out


def test_every_option_string_has_one_meaning():
    options = _options()
    assert {"ingest", "query", "tree", "report", "summary", "diff", "collectives", "ranks"} <= set(_subparsers())
    for opt, uses in options.items():
        for what in ("dest", "option_strings", "metavar", "type", "nargs", "const"):
            seen = {cmd: getattr(a, what) for cmd, a in uses}
            assert len({repr(v) for v in seen.values()}) == 1, (opt, what, seen)
        if opt in SAME_HELP:
            helps = {cmd: a.help for cmd, a in uses}
            assert len(set(helps.values())) == 1, (opt, helps)


def test_the_shared_options_mean_what_the_docs_say():
    options = _options()
    for opt, (dest, strings, metavar) in MEANING.items():
        assert options[opt], opt
        for cmd, a in options[opt]:
            assert (a.dest, tuple(a.option_strings), a.metavar) == (dest, strings, metavar), (cmd, opt)
    # -j is parallelism and -o an output file wherever they exist
    assert {cmd for cmd, _ in options["-j"]} == {"ingest", "report"}
    assert all(a.type is jobs_number for _, a in options["-j"])  # a whole number, at most MAX_JOBS
    assert {cmd for cmd, _ in options["--job"]} == {"collectives", "ranks"}
    assert {cmd for cmd, _ in options["-o"]} >= {"query", "kernels", "tree", "report", "diff"}
    assert "ingest" not in {cmd for cmd, _ in options["-o"]}
    assert {cmd for cmd, _ in options["--out"]} == {"ingest", "report", "diff", "replay"}
    assert {cmd for cmd, _ in options["--arch"]} == {"perf", "report", "summary"}
    assert all((a.help or "").startswith("the GPU") for _, a in options["--arch"])


def test_deprecated_spellings_are_hidden_and_listed():
    hidden = {(cmd, o) for cmd, sp in _subparsers().items() for a in sp._actions if a.help == argparse.SUPPRESS
              for o in a.option_strings}
    assert hidden == set(DEPRECATED)
    for (cmd, opt), current in DEPRECATED.items():
        sp = _subparsers()[cmd]
        assert not re.search(rf"(?<![\w-]){opt}\b", sp.format_help()) and current in sp.format_help()


def test_parsed_values():
    p = build_parser()
    assert p.parse_args(["collectives", "DS", "--job", "2"]).job == 2
    assert p.parse_args(["ranks", "DS", "--job", "1"]).job == 1
    assert p.parse_args(["ingest", "a.json", "-j", "3"]).jobs == 3
    assert p.parse_args(["report", "DS", "-j", "2", "--out", "R"]).jobs == 2
    assert p.parse_args(["report", "DS", "-o", "r.txt"]).output == "r.txt"
    assert p.parse_args(["summary", "DS", "--arch", "MI300X"]).arch == "MI300X"
    ns = p.parse_args(["ingest", "a.json"])
    assert ns.out == "tracesql_data"
    for argv in (["collectives", "DS", "-j", "2"], ["ranks", "DS", "-j", "1"], ["summary", "DS", "--jobs", "2"]):
        with pytest.raises(SystemExit) as e:
            p.parse_args(argv)
        assert e.value.code == 2, argv


@pytest.mark.slow
def test_ingest_dash_o_still_works_with_a_warning(tmp_path, shared_traces, capsys):
    out = tmp_path / "ds"
    assert main(["ingest", str(shared_traces / "nvidia/hta_trace_compare_base.json.gz"), "-o", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    assert "tracesql: warning: tracesql ingest -o is deprecated; use --out DIR" in err
    assert (out / "init.sql").is_file()


def test_docs_use_the_current_spellings():
    """No command line in the README or docs/ uses ingest's -o or -j for the job."""
    texts = {p: p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    for path, text in texts.items():
        for line in text.splitlines():
            assert not re.search(r"tracesql ingest\b.*\s-o\s", line), (path.name, line)
            assert not re.search(r"tracesql (collectives|ranks)\b.*\s-j\s", line), (path.name, line)
            assert "`-o DATASET`" not in line and "-o DATASET" not in line, (path.name, line)


def _csv_sections(text: str) -> dict[str, int]:
    """{section: rows} of a report printed as csv (`# section` lines, each before a CSV with its header)."""
    out = {}
    for block in text.split("# ")[1:]:
        name, body = block.split("\n", 1)
        out[name] = len([line for line in body.splitlines() if line]) - 1
    return out


@pytest.mark.slow
def test_report_output_file(qwen_dataset, tmp_path, capsys, monkeypatch):
    """`report --output FILE` writes what `report` prints, its tables whole: every row and column, where the
    printed tables fit the terminal; with --out it is a usage error."""
    monkeypatch.setenv("COLUMNS", "80")
    path = str(qwen_dataset[0])
    assert main(["report", path, "--format", "csv"]) == 0
    printed = capsys.readouterr().out
    assert main(["report", path, "--format", "csv", "--output", str(tmp_path / "r.csv")]) == 0
    assert capsys.readouterr().out == ""
    assert (tmp_path / "r.csv").read_text(encoding="utf-8") == printed
    rows = _csv_sections(printed)
    assert rows["kernel_summary"] == 12 and rows["op_arg_summary"] == 35

    assert main(["report", path]) == 0
    on_screen = capsys.readouterr().out
    assert max(len(line) for line in on_screen.splitlines()) <= 80
    assert main(["report", path, "-o", str(tmp_path / "r.txt")]) == 0
    text = (tmp_path / "r.txt").read_text(encoding="utf-8")
    assert text.startswith("== h100_qwen_infer.json.gz (trace ")  # the native report opens with the first screen
    tables = {b.split("\n", 1)[0]: b.split("\n", 1)[1] for b in text.split("\n== ")[1:]}
    assert set(tables) == set(rows)
    for name, n in rows.items():
        lines = tables[name].rstrip("\n").splitlines()
        if n:  # the header, its rule, then every row, with no "more rows" or "columns not shown" line
            assert len(lines) == 2 + n and set(lines[1]) == {"─"}, name
    assert max(len(line) for line in tables["kernel_summary"].splitlines()) > 80

    assert main(["report", path, "--output", str(tmp_path / "x"), "--out", str(tmp_path / "d")]) == 2
