"""The derived tables of one staged trace (schema.DERIVED_TABLES), computed by their build views from sql/.

``build_plan()`` says what the build does: the SQL files that define the views, and in order, each derived table
with its build view and the helper views stored as temporary tables for it. ``build_derived`` follows it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..dataset import sql_dir
from ..schema import TABLES, columns, empty_select


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
    """``sql_files`` (in sql/, run in this order) define the views; ``steps`` build the tables in this order."""

    sql_files: tuple[str, ...]
    steps: tuple[BuildStep, ...]


# The build: each step sorts and joins narrow, exactly counted inputs; a helper read several times is computed once,
# and its memory is free for the next step once it is dropped. A recursive walk is built level by level with its
# level macro (every level of a recursive CTE stays in memory; a table spills).
_PLAN = BuildPlan(
    sql_files=("10_tree_nesting.sql", "11_tree_links.sql", "12_tree_attribution.sql", "30_gpu_activity.sql",
               "31_timeline.sql"),
    steps=(
        BuildStep("cpu_nesting", "_cpu_nesting_build", (
            Helper("_tree_threads", drop_after="cpu_nesting"),
            Helper("_tree_clip", drop_after="_tree_nest_order"),
            Helper("_tree_nest_order", drop_after="_tree_parents"),
            Helper("_tree_parents", drop_after="cpu_nesting"),
        )),
        BuildStep("gpu_launch_links", "_gpu_launch_links_build"),
        BuildStep("cpu_event_context", "_cpu_event_context_build", (
            Helper("_tree_context_names", drop_after="cpu_event_context"),
            Helper("_tree_context_nodes", drop_after="_tree_context_walk", order_by_depth=True),
            Helper("_tree_context_walk", drop_after="_tree_context", level_macro="_tree_context_level",
                   level_nodes="_tree_context_nodes"),
            Helper("_tree_context", drop_after="cpu_event_context"),
            Helper("_tree_module_paths", drop_after="cpu_event_context"),
        )),
        BuildStep("profiler_steps", "_profiler_steps_build"),
        # the helpers are read by each of the interval unions of the timeline (per device, pooled, per step)
        BuildStep("gpu_timeline_all", "_gpu_timeline_all_build", (
            Helper("_gpu_names", drop_after="gpu_timeline_all"),
            Helper("_gpu_activity_core", drop_after="gpu_timeline_all"),
        )),
    ),
)


def build_plan() -> BuildPlan:
    """The plan of the derived-table build."""
    return _PLAN


# DuckDB memory limit of the derived-table build; with the Python process and DuckDB's unmanaged memory the
# ingest's peak RSS stays under 1 GB (benchmarks/README.md).
BUILD_MEMORY_LIMIT = "640MB"


def build_derived(out: Path, staging: Path, plan: BuildPlan | None = None) -> None:
    """Compute the derived tables of one staged trace (its tables are parts under ``out``) as ``plan`` (default:
    ``build_plan()``) says, and store each as ``out/<table>/part-00000.parquet``."""
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
        sd = str(sql_dir()).replace("'", "''")
        for f in plan.sql_files:
            con.execute((sql_dir() / f).read_text().replace("${SQL_DIR}", sd))
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
            (out / t).mkdir()
            part = out / t / "part-00000.parquet"
            cols = ", ".join(f'"{c}"' for c, _, _ in columns(t))
            con.execute(f"COPY (SELECT {cols} FROM {step.build}) TO '{part}' "
                        "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)")
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
