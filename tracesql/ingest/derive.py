"""The derived tables of one staged trace (the ``@stores`` declarations of the SQL library, schemas in
schema.DERIVED_TABLES), computed by their build views.

``build_plan()`` says what the build does, as the SQL modules' headers declare it (tracesql.sqlmodules): the
modules that define the views, and in order, each stored table with its build view and the helper views stored
as temporary tables for it. ``build_derived`` follows it.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..schema import TABLES, columns, empty_select
from ..sqlmodules import load_order, module_statements, stored_tables


@dataclass(frozen=True)
class Helper:
    """A helper view stored as a temporary table of the build connection (shadowing the view of the same name):
    computed at the start of its step, in the order the step lists its helpers, and dropped once ``drop_after``
    (a later helper of the step, or the step's table), the last that reads it, is built.

    ``order_by_depth``: stored in ``depth`` order, so that a scan of one level skips the other levels' row
    groups. ``level_macro``/``level_nodes``: a recursive view stored level by level (``build_by_level``)."""

    view: str
    drop_after: str
    order_by_depth: bool = False
    level_macro: str | None = None
    level_nodes: str | None = None


@dataclass(frozen=True)
class BuildStep:
    """One derived table: its rows are those of the view ``build``; ``helpers`` in the order they are computed."""

    table: str
    build: str
    helpers: tuple[Helper, ...] = ()


@dataclass(frozen=True)
class BuildPlan:
    """``modules`` (SQL library modules, run in this order) define the views; ``steps`` build the tables in this
    order."""

    modules: tuple[str, ...]
    steps: tuple[BuildStep, ...]


def build_plan() -> BuildPlan:
    """The plan of the derived-table build, from the SQL library's declarations: each module that declares
    ``@stores TABLE FROM VIEW`` is a step (in load order, so a table is built after the stored tables it reads),
    with its ``@build-temp`` helpers in the order declared (a ``@build-levels`` helper built level by level, the
    nodes it walks stored in depth order)."""
    stored = stored_tables()
    levels = {v: lv for m in stored.values() for v, lv in m.build_levels.items()}
    by_depth = {nodes for _, nodes in levels.values()}
    steps = []
    for t, m in stored.items():
        helpers = m.build_temp if t == next(iter(m.stores)) else []
        steps.append(BuildStep(t, m.stores[t], tuple(
            Helper(v, drop_after=until, order_by_depth=v in by_depth,
                   level_macro=levels[v][0] if v in levels else None,
                   level_nodes=levels[v][1] if v in levels else None)
            for v, until in helpers)))
    modules = tuple(m.name for m in load_order(sorted({m.name for m in stored.values()})))
    return BuildPlan(modules=modules, steps=tuple(steps))


# DuckDB memory limit of the derived-table build; with the Python process and DuckDB's unmanaged memory the
# ingest's peak RSS stays under 1 GB (benchmarks/README.md).
BUILD_MEMORY_LIMIT = "640MB"


def build_derived(out: Path, staging: Path, plan: BuildPlan | None = None, rules_dir: Path | None = None) -> None:
    """Compute the derived tables of one staged trace (its tables are parts under ``out``) as ``plan`` (default:
    ``build_plan()``) says, and store each as ``out/<table>/part-00000.parquet``. ``rules_dir``: the dataset's
    user rule files (DATASET/rules/), which the category rules read (the GPU timeline's classes)."""
    plan = plan or build_plan()
    built = {s.table for s in plan.steps}
    # checkpoint_threshold: the build's tables are temporary; an automatic checkpoint (which compacts in-memory
    # tables once 16 MB of changes have piled up) would only cost time and memory
    con = duckdb.connect(config={"threads": 2, "memory_limit": BUILD_MEMORY_LIMIT,
                                 "temp_directory": str(staging / "tmp"), "preserve_insertion_order": False,
                                 "checkpoint_threshold": "1TB"})
    try:
        for t in TABLES:
            if t in built:
                con.execute(f"CREATE TABLE {t} AS {empty_select(t)}")  # placeholders until built
            elif t == "traces" or not (out / t).is_dir():
                con.execute(f"CREATE VIEW {t} AS {empty_select(t)}")
            else:
                con.execute(f"CREATE VIEW {t} AS SELECT '' AS trace_id, * FROM read_parquet('{out / t / '*.parquet'}')")
        glob = str((rules_dir or staging / "no-rules") / "*.csv").replace("'", "''")
        con.execute(f"CREATE VIEW _dataset_rule_files AS SELECT filename, content FROM read_text('{glob}')")
        mods = {m.name: m for m in load_order(list(plan.modules))}
        for st in module_statements([mods[n] for n in plan.modules]):
            con.execute(st)
        for step in plan.steps:
            t = step.table
            for h in step.helpers:
                if h.level_macro is not None and h.level_nodes is not None:
                    build_by_level(con, h.view, h.level_macro, h.level_nodes)
                elif h.order_by_depth:
                    con.execute("SET preserve_insertion_order = true")
                    con.execute(f"CREATE TEMP TABLE {h.view} AS SELECT * FROM main.{h.view} ORDER BY depth")
                    con.execute("SET preserve_insertion_order = false")
                else:
                    con.execute(f"CREATE TEMP TABLE {h.view} AS SELECT * FROM main.{h.view}")
                for done in step.helpers:
                    if done.drop_after == h.view:
                        con.execute(f"DROP TABLE temp.{done.view}")
            (out / t).mkdir(exist_ok=True)
            part = out / t / "part-00000.parquet"
            tmp = out / t / f".part-00000.parquet.{os.getpid()}.tmp"  # replaces a part being rebuilt atomically
            cols = ", ".join(f'"{c}"' for c, _, _ in columns(t))
            con.execute(f"COPY (SELECT {cols} FROM {step.build}) TO '{tmp}' "
                        "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)")
            os.replace(tmp, part)
            con.execute(f"DROP TABLE {t}")
            con.execute(f"CREATE VIEW {t} AS SELECT '' AS trace_id, * FROM read_parquet('{part}')")
            for h in step.helpers:
                if h.drop_after == t:
                    con.execute(f"DROP TABLE temp.{h.view}")
    finally:
        con.close()


def build_by_level(con: duckdb.DuckDBPyConnection, name: str, level_macro: str, nodes: str) -> None:
    """Store the recursive helper view ``name`` as a temporary table, one depth level per statement
    (``level_macro(d)`` gives level d from level d - 1 of the table): same rows as the view."""
    con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM main.{name} LIMIT 0")
    row = con.execute(f"SELECT max(depth) FROM {nodes}").fetchone()
    max_depth = row[0] if row is not None else None
    for d in range((max_depth if max_depth is not None else -1) + 1):
        con.execute(f"INSERT INTO {name} SELECT * FROM {level_macro}({d})")


def rule_dependent_tables() -> list[str]:
    """Stored tables whose build reads the category rules (the GPU timeline counts time by the class of each
    kernel's category rule): they must be rebuilt when the dataset's user rules change."""
    stored = stored_tables()
    return [t for t, m in stored.items() if "categories/rules" in {x.name for x in load_order([m.name])}]


def rebuild(dataset: Path, tables: list[str]) -> int:
    """Recompute the stored tables ``tables`` of every trace of ``dataset`` with the dataset's current rules,
    each part file replaced atomically (a reader sees the old rows or the new ones). Returns the number of
    traces rebuilt."""
    from .publish import new_staging

    stored = stored_tables()
    full = build_plan()
    plan = BuildPlan(modules=tuple(m.name for m in load_order(sorted({stored[t].name for t in tables}))),
                     steps=tuple(s for s in full.steps if s.table in tables))
    traces = sorted((Path(dataset) / "traces").glob("trace_id=*"))
    staging = new_staging(Path(dataset))
    try:
        for tdir in traces:
            build_derived(tdir, staging, plan, rules_dir=Path(dataset) / "rules")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return len(traces)
