"""Loading the SQL library (``sql/``, tracesql.store.sqlmodules) into a DuckDB connection, module by module.

DuckDB binds a view (and a table macro) when it is created, and binding a query binds every view it names,
through every view beneath those, again for each mention: created in load order, a view deep in the library
costs as much to create as a query of it, and creating the whole library cost 20 s and more of CPU. Here
each module's objects are created against *stand-ins* instead: every view the new objects may name is first
shadowed by a temporary view with the same columns and no rows (``SELECT NULL::type AS col ... WHERE false``),
so creating a view binds its own text only; the stand-ins are dropped afterwards, and the views, which DuckDB
stores as SQL text, then read the real objects (queries bind them again anyway). Creating the whole library
this way costs about as much as parsing it.

The stand-ins need each view's columns. They are computed once per module (its views created in load order,
each against the stand-ins of what it reads) and kept in the cache directory, keyed by the module's SQL, the
keys of the modules it requires, the stored tables' layout and DuckDB's version: editing one ``.sql`` file
recomputes that module and the modules that require it, nothing else.

``Library(con).require(names)`` loads modules and what they require; ``require_for(query)`` loads the
modules defining the objects a query names (a connection loads what its commands use: a native command never
binds ``sql/peers/``). ``script()`` is the whole library as SQL text in the same order, for
``duckdb -init DATASET/init.sql``.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from functools import lru_cache
from pathlib import Path

import duckdb

from tracesql.store.config import cache_dir, configure
from tracesql.store.schema import empty_table_statements
from tracesql.store.sqlmodules import Module, load_order, modules, object_modules, sql_dir

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# {view: [(column, DuckDB type), ...]} of one module
Schemas = dict[str, list[tuple[str, str]]]


def _ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def stand_in(view: str, cols: list[tuple[str, str]]) -> str:
    """A temporary view with the columns of ``view`` and no rows."""
    sel = ", ".join(f"CAST(NULL AS {t}) AS {_ident(c)}" for c, t in cols)
    return f"CREATE OR REPLACE TEMP VIEW {_ident(view)} AS SELECT {sel} WHERE false;"


def statements(m: Module) -> list[tuple[str, str, str]]:
    """(kind, name, SQL) of each object the module creates, in file order; ``${SQL_DIR}`` replaced by the
    shipped sql/ folder (the rule CSVs are read from there)."""
    sd = str(sql_dir()).replace("'", "''")
    return [(kind, name, text.replace("${SQL_DIR}", sd)) for kind, name, text in m.statements]


@lru_cache(maxsize=1)
def _layout_key() -> str:
    """What every module's columns also depend on: the stored tables' columns and DuckDB's version."""
    return duckdb.__version__ + "\n" + "\n".join(empty_table_statements())


@lru_cache(maxsize=4096)
def _module_key(root: str, name: str, layout: str) -> str:
    m = modules()[name]
    h = hashlib.blake2b(digest_size=16)
    h.update(layout.encode())
    for _, _, text in statements(m):
        h.update(text.encode())
    for r in sorted(m.requires):
        h.update(_module_key(root, r, layout).encode())
    return h.hexdigest()


def module_key(name: str) -> str:
    """Identifies the columns of a module's views: its SQL, the keys of what it requires, the table layout."""
    return _module_key(str(sql_dir()), name, _layout_key())


def _cache_file(name: str) -> Path:
    return cache_dir() / "sqlschemas" / f"{name.replace('/', '.')}-{module_key(name)}.json"


_memo: dict[str, Schemas] = {}


def cached(mods: list[Module]) -> dict[str, Schemas]:
    """The columns of the views of those of ``mods`` whose columns are known: in this process's memory or in the
    cache directory, by module."""
    out: dict[str, Schemas] = {}
    for m in mods:
        key = module_key(m.name)
        if key in _memo:
            out[m.name] = _memo[key]
            continue
        try:
            data = json.loads(_cache_file(m.name).read_text())
            out[m.name] = _memo[key] = {v: [(c, t) for c, t in cols] for v, cols in data.items()}
        except (OSError, ValueError, TypeError):
            pass
    return out


def schemas(mods: list[Module]) -> dict[str, Schemas]:
    """The columns of every view of ``mods`` (a closed set in load order: each after what it requires), by
    module: known (cached), or computed in a scratch connection (and then cached)."""
    out = cached(mods)
    missing = {m.name for m in mods} - set(out)
    if missing:
        out.update(_compute(mods, missing, out))
    return out


def _compute(mods: list[Module], todo: set[str], known: dict[str, Schemas]) -> dict[str, Schemas]:
    """Create the modules ``todo`` (and the macros of the others among ``mods``) in a scratch connection over
    tables without rows, each view against stand-ins, and read each view's columns."""
    con = duckdb.connect()
    configure(con, memory_limit="512MB", spill=False)
    out: dict[str, Schemas] = {}
    try:
        for st in empty_table_statements():
            con.execute(st)
        for m in mods:
            if m.name not in todo:
                for view, cols in known[m.name].items():
                    con.execute(stand_in(view, cols))
                for kind, _, text in statements(m):
                    if kind == "MACRO":
                        con.execute(text)
                continue
            out[m.name] = _create_reading_columns(con, m, [])
    finally:
        con.close()
    return out


def _create_reading_columns(con, m: Module, made: list[str]) -> Schemas:
    """Create the module ``m`` on ``con``, each view followed by its stand-in (appended to ``made``), and keep
    the columns read (memory and cache directory)."""
    found: Schemas = {}
    for kind, name, text in statements(m):
        con.execute(text)
        if kind == "VIEW":
            cols = [(c, t) for c, t in con.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() "
                "AND schema_name = 'main' AND table_name = ? ORDER BY column_index", [name]).fetchall()]
            found[name] = cols
            con.execute(stand_in(name, cols))
            made.append(name)
    _memo[module_key(m.name)] = found
    _store(m.name, found)
    return found


def _store(name: str, found: Schemas) -> None:
    """Keep a module's columns in the cache directory (written to a temporary name, then renamed)."""
    path = _cache_file(name)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({v: [list(c) for c in cols] for v, cols in found.items()}))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def _creation(new: list[Module], loaded: list[Module], shadowed: set[str]) -> tuple[list[str], list[str]]:
    """The statements that create the modules ``new`` on a connection that holds ``loaded`` (every module that
    ``new`` requires is in one of the two), and the stand-ins to drop after. ``shadowed``: names a temporary
    object already stands for (e.g. a view computed as a temporary table), given no stand-in."""
    cols = schemas(load_order([m.name for m in new]))
    stmts, made = [], []
    for m in loaded + new:
        for view, c in cols[m.name].items():
            if view not in shadowed:
                stmts.append(stand_in(view, c))
                made.append(view)
    stmts += [(f"-- module {m.name}\n" if i == 0 else "") + text  # each module named where it starts
              for m in new for i, (_, _, text) in enumerate(statements(m))]
    return stmts, made


class Library:
    """The SQL library on one connection: which modules it holds, and loading more on demand."""

    def __init__(self, con, loaded: set[str] | None = None):
        self.con = con
        self.loaded: set[str] = set(loaded or ())
        self._seen: dict[str, None] = {}

    def require(self, names) -> None:
        """Load the modules ``names`` and everything they require (those not loaded yet)."""
        names = [n for n in names if n not in self.loaded]
        if not names:
            return
        order = load_order(names)
        new = [m for m in order if m.name not in self.loaded]
        if not new:
            return
        shadowed = {r[0] for r in self.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE temporary UNION ALL "
            "SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal").fetchall()}
        known = cached(order)
        made: list[str] = []
        try:  # stand-ins of every view whose columns are known; a module whose are not is created reading them
            for m in order:
                for view, c in known.get(m.name, {}).items():
                    if view not in shadowed:
                        self.con.execute(stand_in(view, c))
                        made.append(view)
            for m in new:
                if m.name in known:
                    for _, _, text in statements(m):
                        self.con.execute(text)
                else:
                    _create_reading_columns(self.con, m, made)
        finally:
            for v in made:
                self.con.execute(f"DROP VIEW IF EXISTS temp.main.{_ident(v)}")
        self.loaded |= {m.name for m in new}

    def require_for(self, query: str) -> None:
        """Load the modules defining the library objects that ``query`` names (any word of it that is one)."""
        if query in self._seen:
            return
        owners = object_modules()
        self.require(sorted({owners[w] for w in set(_WORD.findall(query)) if w in owners}))
        if len(self._seen) > 4096:
            self._seen.clear()
        self._seen[query] = None

    def require_all(self) -> None:
        self.require(sorted(modules()))


def script(names: list[str] | None = None) -> list[str]:
    """The statements that create the modules ``names`` (default: all) and what they require on a connection
    holding the table views and nothing of the library: stand-ins, the modules' objects, then the stand-ins
    dropped. Plain SQL, for ``duckdb -init``."""
    new = load_order(names)
    stmts, made = _creation(new, [], set())
    return stmts + [f"DROP VIEW IF EXISTS temp.main.{_ident(v)};" for v in made]
