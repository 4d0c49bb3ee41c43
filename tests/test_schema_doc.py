"""docs/schema.md is generated from tracesql/store/schema.py and must match it."""
from __future__ import annotations

import difflib
from pathlib import Path

from tracesql.store import schema_doc
from tracesql.store.schema import DERIVED_TABLES, TABLES
from tracesql.store.sqlmodules import stored_tables

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_MD = ROOT / "docs" / "schema.md"


def test_schema_doc_is_current():
    expected = schema_doc.render()
    actual = SCHEMA_MD.read_text() if SCHEMA_MD.exists() else ""
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(actual.splitlines(keepends=True), expected.splitlines(keepends=True),
                                                 "docs/schema.md", "render()"))[:40])
        raise AssertionError(f"docs/schema.md is out of date with tracesql/store/schema.py; regenerate it with "
                             f"`{schema_doc.REGENERATE}` and commit the result.\n{diff}")


def test_schema_doc_documents_every_column():
    text = schema_doc.render()
    for table, spec in TABLES.items():
        assert f"### `{table}`" in text, table
        section = text.split(f"### `{table}`", 1)[1].split("\n### ", 1)[0]
        assert "| `trace_id` | VARCHAR |" in section, table
        for col, typ, _ in spec["columns"]:
            assert f"| `{col}` | {typ} |" in section, (table, col)


def test_schema_doc_separates_stored_and_derived():
    text = schema_doc.render()
    stored_part, derived_part = text.split("\n## Derived tables\n", 1)
    for table in TABLES:
        part = derived_part if table in DERIVED_TABLES else stored_part
        assert f"### `{table}`" in part, table
    for table, module in stored_tables().items():
        assert f"`{module.stores[table]}` (`sql/{module.name}.sql`)" in derived_part, table


def test_check_mode(tmp_path, capsys):
    out = tmp_path / "schema.md"
    assert schema_doc.main(["--check", "--output", str(out)]) == 1  # missing
    assert schema_doc.REGENERATE in capsys.readouterr().err
    assert schema_doc.main(["--output", str(out)]) == 0
    assert out.read_text() == schema_doc.render()
    assert schema_doc.main(["--check", "--output", str(out)]) == 0
    out.write_text(out.read_text().replace("| `event_id` |", "| `event_idx` |", 1))
    assert schema_doc.main(["--check", "--output", str(out)]) == 1
    assert "event_idx" in capsys.readouterr().out  # the diff


def test_cli_doc_covers_every_command_and_option():
    """docs/cli.md has a section for every subcommand that names each of its long options."""
    import argparse

    from tracesql.cli.main import build_parser

    text = (ROOT / "docs" / "cli.md").read_text()
    (action,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    sub = action.choices
    for cmd, parser in sub.items():
        assert f"\n## {cmd}\n" in text, f"docs/cli.md has no section for `tracesql {cmd}`"
        section = text.split(f"\n## {cmd}\n", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            for opt in action.option_strings:
                if opt.startswith("--") and opt != "--help":
                    assert opt in section, f"docs/cli.md does not document `tracesql {cmd} {opt}`"
