"""The README documents every stored table and column, and the commands it shows exist."""
from pathlib import Path

from tracesql.cli import build_parser
from tracesql.schema import TABLES

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_readme_documents_every_column():
    for table, spec in TABLES.items():
        assert f"#### `{table}`" in README, table
        section = README.split(f"#### `{table}`", 1)[1].split("####", 1)[0]
        for col, typ, _ in spec["columns"]:
            assert f"| `{col}` | {typ} |" in section, (table, col)


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
