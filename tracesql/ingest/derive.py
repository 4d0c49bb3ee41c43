"""The derived tables of one staged trace (the ``@stores`` declarations of the SQL library, schemas in
schema.DERIVED_TABLES), computed by their build views.

``build_plan()`` says what the build does, as the SQL modules' headers declare it (tracesql.store.sqlmodules): the
modules that define the views, and in order, each stored table with its build view and the helper views stored
as temporary tables for it. ``build_derived`` follows it.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from tracesql.escape import glob_escape
from tracesql.ingest.extract import write_empty_part
from tracesql.store.config import ASOF_AS_JOIN
from tracesql.store.library import Library
from tracesql.store.schema import TABLES, columns, empty_select
from tracesql.store.sqlmodules import load_order, stored_tables


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

# Traces built together at most (their stored tables are small: see ingest.BATCH_JSON_BYTES).
BATCH_TRACES = 64


def _quote(path: Path | str) -> str:
    return str(path).replace("'", "''")


def _glob(folder: Path, pattern: str) -> str:
    """The text of a SQL literal (without its quotes) of the files ``pattern`` in ``folder`` (a path DuckDB reads,
    its glob characters escaped)."""
    return _quote(glob_escape(folder) + "/" + pattern)


def _parts(outs: list[Path], table: str) -> str | None:
    """A SELECT of ``table``'s rows in the trace directories ``outs`` (trace_id first; '' for a single
    trace, else the name of its directory, ``trace_id=<id>``), or None when none of them has the table."""
    have = [o for o in outs if (o / table).is_dir()]
    if not have:
        return None
    cols = ", ".join(f'"{c}"' for c, _, _ in columns(table))
    if len(outs) == 1:
        return f"SELECT '' AS trace_id, {cols} FROM read_parquet('{_glob(have[0] / table, '*.parquet')}')"
    globs = ", ".join(f"'{_glob(o / table, '*.parquet')}'" for o in have)
    return (f"SELECT trace_id, {cols} FROM read_parquet([{globs}], hive_partitioning = true, "
            "hive_types = {'trace_id': VARCHAR})")


def _placeholders(plan: BuildPlan) -> list[str]:
    """What a build connection holds before the traces' tables are put in: placeholders with each table's
    columns (a table for each table the plan builds, a view without rows for the others) and the rule files'
    view (without files). The plan's SQL modules are then loaded over them (tracesql.store.library)."""
    built = {s.table for s in plan.steps}
    stmts = [f"CREATE {'TABLE' if t in built else 'VIEW'} {t} AS {empty_select(t)}" for t in TABLES]
    stmts += [f"CREATE VIEW {v} AS SELECT NULL::VARCHAR AS filename, NULL::VARCHAR AS content WHERE false"
              for v in ("_dataset_rule_files", "_dataset_twin_files")]
    return stmts


def build_derived(out: Path | list[Path], staging: Path, plan: BuildPlan | None = None,
                  rules_dir: Path | None = None) -> None:
    """Compute the derived tables of staged traces as ``plan`` (default: ``build_plan()``) says, and store each
    as ``<out>/<table>/part-00000.parquet`` (each part replaced atomically). ``out``: one trace directory (its
    tables are parts under it), or several, each named ``trace_id=<id>``: they are built together, in one run of
    every statement, so that a statement's fixed cost is paid once for all of them. ``rules_dir``: the dataset's
    user rule files (DATASET/rules/), which the category rules read (the GPU timeline's classes)."""
    plan = plan or build_plan()
    outs = [out] if isinstance(out, Path) else list(out)
    if len(outs) > 1 and any(not o.name.startswith("trace_id=") for o in outs):
        raise ValueError("traces built together are directories named trace_id=<id>")
    built = {s.table for s in plan.steps}
    work = staging / "derived"  # the tables of several traces, partitioned by trace_id, before they are moved
    # checkpoint_threshold: the build's tables are temporary; an automatic checkpoint (which compacts in-memory
    # tables once 16 MB of changes have piled up) would only cost time and memory
    config: dict[str, str | bool | int | float | list[str]] = {
        "threads": 2, "memory_limit": BUILD_MEMORY_LIMIT, "temp_directory": str(staging / "tmp"),
        "preserve_insertion_order": False, "checkpoint_threshold": "1TB"}
    con = duckdb.connect(config=config)
    try:
        con.execute("SET enable_progress_bar = false")
        for st in _placeholders(plan):
            con.execute(st)
        Library(con).require(list(plan.modules))
        # the footers of the parts are read once, however many statements scan them
        con.execute("SET parquet_metadata_cache = true")
        con.execute(ASOF_AS_JOIN)
        for t in TABLES:
            src = None if t == "traces" else _parts(outs, t)
            if t not in built and src is not None:
                con.execute(f"CREATE OR REPLACE VIEW {t} AS {src}")
        glob = _glob(rules_dir or staging / "no-rules", "*.csv")
        con.execute(f"CREATE OR REPLACE VIEW _dataset_rule_files AS SELECT filename, content FROM read_text('{glob}')")
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
            cols = ", ".join(f'"{c}"' for c, _, _ in columns(t))
            if len(outs) == 1:
                (outs[0] / t).mkdir(exist_ok=True)
                part = outs[0] / t / "part-00000.parquet"
                tmp = outs[0] / t / f".part-00000.parquet.{os.getpid()}.tmp"  # replaces a part being rebuilt
                con.execute(f"COPY (SELECT {cols} FROM {step.build}) TO '{_quote(tmp)}' "
                            "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)")
                os.replace(tmp, part)
                src = _parts(outs, t)
            else:
                work.mkdir(exist_ok=True)
                con.execute(f"COPY (SELECT trace_id, {cols} FROM {step.build}) TO '{_quote(work / t)}' "
                            "(FORMAT parquet, PARTITION_BY (trace_id), COMPRESSION zstd, COMPRESSION_LEVEL 1, "
                            "FILENAME_PATTERN 'part-{i}')")
                written = sorted((work / t).glob("trace_id=*/*.parquet"))
                src = None
                if written:
                    src = (f"SELECT trace_id, {cols} FROM read_parquet('{_glob(work / t, '*/*.parquet')}', "
                           "hive_partitioning = true, hive_types = {'trace_id': VARCHAR})")
            con.execute(f"DROP TABLE {t}")
            con.execute(f"CREATE VIEW {t} AS {src or empty_select(t)}")
            for h in step.helpers:
                if h.drop_after == t:
                    con.execute(f"DROP TABLE temp.{h.view}")
        if len(outs) > 1:
            _move_partitions(con, work, outs, [s.table for s in plan.steps])
    finally:
        con.close()
        shutil.rmtree(work, ignore_errors=True)


def _move_partitions(con: duckdb.DuckDBPyConnection, work: Path, outs: list[Path], tables: list[str]) -> None:
    """Move each trace's partition of each table built together (``work/<table>/trace_id=<id>/``) into its
    directory as ``<out>/<table>/part-NNNNN.parquet``, each part replacing the one there atomically; a trace
    without rows gets an empty part."""
    for t in tables:
        for o in outs:
            d = o / t
            d.mkdir(exist_ok=True)
            files = sorted((work / t / o.name).glob("*.parquet"))
            names = [f"part-{i:05d}.parquet" for i in range(max(1, len(files)))]
            if files:
                for f, name in zip(files, names, strict=True):
                    os.replace(f, d / name)
            else:
                tmp = d / f".{names[0]}.{os.getpid()}.tmp"
                write_empty_part(con, t, tmp)
                os.replace(tmp, d / names[0])
            for stale in d.glob("part-*.parquet"):
                if stale.name not in names:
                    stale.unlink()


# A recursive helper over at most this many nodes is stored in one statement (its levels together fit in memory
# easily); a larger one level by level, each level's statement costing a few ms whatever its size.
LEVELS_IN_ONE_MAX_NODES = 250_000


def build_by_level(con: duckdb.DuckDBPyConnection, name: str, level_macro: str, nodes: str) -> None:
    """Store the recursive helper view ``name`` as a temporary table, one depth level per statement
    (``level_macro(d)`` gives level d from level d - 1 of the table): same rows as the view. Over few nodes
    (``nodes`` is the table of the nodes walked), the view is stored in one statement instead."""
    row = con.execute(f"SELECT max(depth), count(*) FROM {nodes}").fetchone()
    max_depth, n = row if row is not None else (None, 0)
    if n <= LEVELS_IN_ONE_MAX_NODES:
        con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM main.{name}")
        return
    con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM main.{name} LIMIT 0")
    for d in range((max_depth if max_depth is not None else -1) + 1):
        con.execute(f"INSERT INTO {name} SELECT * FROM {level_macro}({d})")


def rule_dependent_tables() -> list[str]:
    """Stored tables whose build reads the category rules (the GPU timeline counts time by the class of each
    kernel's category rule): they must be rebuilt when the dataset's user rules change."""
    stored = stored_tables()
    return [t for t, m in stored.items() if "categories/rules" in {x.name for x in load_order([m.name])}]


def rules_plan(tables: list[str] | None = None) -> BuildPlan:
    """The plan that rebuilds the stored tables ``tables`` (default: those that read the category rules)."""
    tables = rule_dependent_tables() if tables is None else tables
    stored = stored_tables()
    full = build_plan()
    return BuildPlan(modules=tuple(m.name for m in load_order(sorted({stored[t].name for t in tables}))),
                     steps=tuple(s for s in full.steps if s.table in tables))


def rules_stamp(rules_dir: Path) -> str:
    """Identifies the user rule files of a dataset (their names and contents): tables built under one stamp are
    rebuilt before a trace is published under another."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for f in sorted(Path(rules_dir).glob("*.csv")):
        h.update(f.name.encode() + b"\0")
        try:
            h.update(f.read_bytes())
        except OSError:
            pass
        h.update(b"\0")
    return h.hexdigest()


def _link_tree(src: Path, dst: Path) -> None:
    """``dst`` as a copy of the trace directory ``src``'s tables: hard links to its parts (published parts are
    never written in place, only replaced), copies where links are not possible."""
    for d in src.iterdir():
        if not d.is_dir():
            continue
        (dst / d.name).mkdir(parents=True, exist_ok=True)
        for f in d.glob("*.parquet"):
            try:
                os.link(f, dst / d.name / f.name)
            except OSError:
                shutil.copyfile(f, dst / d.name / f.name)


def change_rules(dataset: Path, name: str | None, write, tables: list[str] | None = None) -> int:
    """Install the user rule file ``rules/<name>`` (``write(path)`` writes it; None: none) and rebuild the stored
    tables that read the rules (``tables``) for every trace, as one change: everything is staged in a work area
    first (the dataset does not change), then committed (tracesql.store.lock.commit) and moved into place. An
    interrupt or a kill before the commit leaves the dataset as it was; after it, the change is completed (by this
    process, or by the next command that opens the dataset). The whole change holds the dataset's lock: no trace
    is published meanwhile (a trace built under other rules is rebuilt under the lock before its publish). Returns
    the number of traces rebuilt."""
    import signal
    import threading

    from tracesql.ingest.publish import _fsync_tree, new_staging
    from tracesql.store.lock import commit, dataset_lock, recover

    dataset = Path(dataset)
    plan = rules_plan(tables)
    built = [s.table for s in plan.steps]
    recover(dataset)
    with dataset_lock(dataset):
        staging = new_staging(dataset)
        try:
            rules = staging / "rules"
            rules.mkdir()
            for f in sorted((dataset / "rules").glob("*.csv")):
                shutil.copyfile(f, rules / f.name)
            if name is not None:
                write(rules / name)
            traces = sorted((dataset / "traces").glob("trace_id=*"))
            work = staging / "traces"
            outs = []
            for t in traces:
                _link_tree(t, work / t.name)
                outs.append(work / t.name)
            for i in range(0, len(outs), BATCH_TRACES):
                batch = outs[i:i + BATCH_TRACES]
                build_derived(batch[0] if len(batch) == 1 else batch, staging, plan, rules_dir=rules)
            moves: list[tuple[Path, Path]] = []
            removes: list[Path] = []
            for t, o in zip(traces, outs, strict=True):
                for table in built:
                    new = sorted((o / table).glob("*.parquet"))
                    moves += [(f, t / table / f.name) for f in new]
                    names = {f.name for f in new}
                    removes += [f for f in (t / table).glob("*.parquet") if f.name not in names]
            if name is not None:
                moves.append((rules / name, dataset / "rules" / name))
            (dataset / "rules").mkdir(exist_ok=True)
            _fsync_tree(work)
            _fsync_tree(rules)
            main = threading.current_thread() is threading.main_thread()
            if main:  # the commit and its moves are not cut by a Ctrl-C: the change is then whole or not made
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            try:
                commit(dataset, staging, moves, removes)
            finally:
                if main:
                    pending = signal.sigpending() & {signal.SIGINT, signal.SIGTERM}
                    if pending:
                        import sys

                        print("tracesql: the rules change was already committed when interrupted: it is complete",
                              file=sys.stderr)
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return len(traces)


def rebuild(dataset: Path, tables: list[str] | None = None) -> int:
    """Recompute the stored tables ``tables`` of every trace of ``dataset`` with the dataset's current rules, as
    one change (change_rules, the rule files unchanged). Returns the number of traces rebuilt."""
    return change_rules(dataset, None, None, tables)
