"""The README shows commands that exist, and every help text renders (columns: docs/schema.md, test_schema_doc)."""
import argparse
from pathlib import Path

import pytest

from tracesql.cli.main import build_parser

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


def test_readme_commands_exist():
    sub = _subcommands()
    for cmd in ["ingest", "query", "tables", "shell", "catalog"]:
        assert cmd in sub
        assert f"tracesql {cmd} " in README


def test_every_help_text_renders(capsys):
    import pytest

    from tracesql.cli.main import main

    sub = _subcommands()
    for argv in [["--help"]] + [[cmd, "--help"] for cmd in sub]:
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0, argv
        assert "usage: tracesql" in capsys.readouterr().out


@pytest.mark.slow  # runs every command the README shows
def test_readme_outputs_are_what_the_commands_print(shared_traces, monkeypatch):
    """docs/readme_outputs.py --check: each output block of the README is what its command prints now (times
    measured by the run masked); `python docs/readme_outputs.py` rewrites them."""
    import subprocess
    import sys

    monkeypatch.setenv("TRACESQL_SHARED", str(shared_traces.parent))
    script = Path(__file__).resolve().parent.parent / "docs" / "readme_outputs.py"
    proc = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    shown = len(__import__("re").findall(r"```bash\ntracesql [^\n]*\n```\n```\n", README))
    assert shown >= 7  # the outputs checked are really there (ingest, summary, gaps, two queries, tree, categories)
