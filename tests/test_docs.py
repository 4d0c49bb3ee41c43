"""The README shows commands that exist, and every help text renders (columns: docs/schema.md, test_schema_doc)."""
import argparse
from pathlib import Path

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
