"""Render docs/schema.md, the reference of the stored tables, from ``tracesql.store.schema``.

The column lists live in ``schema.TABLES`` only; this module turns them into markdown so that the document
cannot drift from the code. Regenerate it after any change to ``schema.py``::

    python -m tracesql.store.schema_doc            # writes docs/schema.md
    python -m tracesql.store.schema_doc --check    # exit 1 (and a diff) when docs/schema.md is stale

tests/test_schema_doc.py fails when the file differs from ``render()``.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path
from typing import Any

from tracesql.store import schema
from tracesql.store.sqlmodules import stored_tables

REGENERATE = "python -m tracesql.store.schema_doc"
DEFAULT_PATH = Path(__file__).resolve().parent.parent.parent / "docs" / "schema.md"

_TRACE_ID_MEANING = ("the trace: first 16 hex digits of the file's content hash; the partition key "
                     "(`traces/trace_id=<id>/`)")


def _trace_id_type(table: str) -> str:
    """The type of ``trace_id``, as the table's empty view declares it (VARCHAR)."""
    m = re.search(r"NULL::(\w+) AS trace_id", schema.empty_select(table))
    return m.group(1) if m else "VARCHAR"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _prose(text: str) -> str:
    """A docstring as markdown: reStructuredText ``literals`` become `code`, lines are unwrapped."""
    text = text.replace("``", "`")
    return "\n\n".join(" ".join(line.strip() for line in para.splitlines())
                       for para in text.strip().split("\n\n"))


def _table(name: str, spec: dict[str, Any]) -> list[str]:
    out = [f"### `{name}`", "", _prose(spec["doc"])]
    stored = stored_tables()
    if name in stored:
        m = stored[name]
        out[-1] += f" Built at ingest by the view `{m.stores[name]}` (`sql/{m.name}.sql`)."
    out += ["", "| column | type | meaning |", "|---|---|---|"]
    if name not in schema.DATASET_TABLES:
        out.append(f"| `trace_id` | {_trace_id_type(name)} | {_TRACE_ID_MEANING} |")
    out += [f"| `{col}` | {typ} | {_cell(meaning)} |" for col, typ, meaning in spec["columns"]]
    return out + [""]


def render() -> str:
    """The text of docs/schema.md."""
    derived = list(schema.DERIVED_TABLES)
    stored = [t for t in schema.TABLES if t not in schema.DERIVED_TABLES]
    event_tables = list(getattr(schema, "EVENT_TABLES", []))
    lines = [
        "# Stored tables",
        "",
        f"<!-- Generated from tracesql/store/schema.py by `{REGENERATE}`. Do not edit by hand. -->",
        "",
        _prose(schema.__doc__ or ""),
        "",
        (f"A dataset holds {len(schema.TABLES)} tables per trace; each table below lists `trace_id` first. "
         "Correlation, flow and event ids are unique only within a trace: join on `trace_id` as well. "
         "Column types are DuckDB types."),
        "",
        f"- **Stored from the trace** ({len(stored)}), written by the ingest from the file's header and events: "
        + ", ".join(f"[`{t}`](#{t})" for t in stored) + ".",
    ]
    if event_tables:
        lines.append("  Every element of `traceEvents` becomes one row of exactly one of "
                     + ", ".join(f"`{t}`" for t in event_tables) + ", or is skipped with a row in `ingest_issues`.")
    lines += [
        f"- **Derived** ({len(derived)}), computed at ingest from the tables above by SQL views and stored "
        "next to them, so that queries do not redo their sorts: "
        + ", ".join(f"[`{t}`](#{t})" for t in derived) + ". The view that builds each one stays defined: "
        "selecting from it recomputes the table from the stored events.",
        "",
        "## Tables stored from the trace",
        "",
    ]
    for t in stored:
        lines += _table(t, schema.TABLES[t])
    lines += ["## Derived tables", ""]
    for t in derived:
        lines += _table(t, schema.TABLES[t])
    lines += ["## The record of ingest runs", "",
              _prose("""Two tables of the dataset as a whole, not per trace: each run of the ingest writes
``DATASET/runs/<run_id>.json`` when it starts and again when it ends (``tracesql runs DATASET`` shows them)."""), ""]
    for t in schema.DATASET_TABLES:
        lines += _table(t, schema.DATASET_TABLES[t])
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tracesql.store.schema_doc",
                                description="Write docs/schema.md from tracesql/store/schema.py.")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 with a diff when the file is stale")
    p.add_argument("--output", "-o", type=Path, default=DEFAULT_PATH, metavar="PATH",
                   help="the file (default: docs/schema.md of the source tree)")
    args = p.parse_args(argv)
    text = render()
    path: Path = args.output
    if args.check:
        current = path.read_text() if path.exists() else ""
        if current == text:
            return 0
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(keepends=True), text.splitlines(keepends=True),
                                                   f"{path} (on disk)", f"{path} (from schema.py)"))
        print(f"{path} is stale: regenerate it with `{REGENERATE}`", file=sys.stderr)
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
