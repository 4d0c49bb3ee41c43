"""The README shows commands that exist, and every help text renders (columns: docs/schema.md, test_schema_doc)."""
from pathlib import Path

from tracesql.cli import build_parser

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_readme_commands_exist():
    sub = build_parser()._subparsers._group_actions[0].choices
    for cmd in ["ingest", "query", "tables", "shell", "catalog"]:
        assert cmd in sub
        assert f"tracesql {cmd} " in README


def test_every_help_text_renders(capsys):
    import pytest

    from tracesql.cli import main

    sub = build_parser()._subparsers._group_actions[0].choices
    for argv in [["--help"]] + [[cmd, "--help"] for cmd in sub]:
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0, argv
        assert "usage: tracesql" in capsys.readouterr().out
