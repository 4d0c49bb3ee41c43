"""The SQL library: every module loads with only what it declares it requires, every public object is
documented, peer reproductions live only under sql/peers/, and nothing is defined twice."""
from __future__ import annotations

import re

import duckdb
import pytest

from tracesql.store import library, sqlmodules
from tracesql.store.library import Library
from tracesql.store.schema import TABLES, empty_table_statements

MODULES = sorted(sqlmodules.modules())


def _empty_connection():
    con = duckdb.connect()
    for st in empty_table_statements():
        con.execute(st)
    return con


@pytest.mark.parametrize("name", MODULES)
def test_module_loads_with_only_what_it_requires(name):
    """DuckDB binds a view when it is created: a module that reads an object of a module it does not
    (transitively) require fails here (the library loader gives stand-ins only to what the module requires)."""
    con = _empty_connection()
    try:
        lib = Library(con)
        lib.require([name])
        assert lib.loaded == {m.name for m in sqlmodules.load_order([name])}
        made = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary "
                                          "UNION ALL SELECT DISTINCT function_name FROM duckdb_functions() "
                                          "WHERE function_type IN ('macro', 'table_macro')").fetchall()}
        assert set(sqlmodules.modules()[name].objects) <= made
        # the stand-ins are gone
        assert con.execute("SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal").fetchall() == [(0,)]
    finally:
        con.close()


def test_a_missing_requirement_fails_to_load(tmp_path, monkeypatch):
    """A module that reads a view of a module it does not require cannot be created: the loader gives it no
    stand-in for that view."""
    import shutil

    root = tmp_path / "sql"
    shutil.copytree(sqlmodules.sql_dir(), root)
    f = root / "gpu" / "launches.sql"
    f.write_text(f.read_text() + "\n-- _x_reads_categories: a test helper.\n"
                 "CREATE OR REPLACE VIEW _x_reads_categories AS SELECT * FROM comm_jobs;\n")
    monkeypatch.setattr(sqlmodules, "sql_dir", lambda: root)
    monkeypatch.setattr(library, "sql_dir", lambda: root)
    monkeypatch.setenv("TRACESQL_CACHE_DIR", str(tmp_path / "cache"))
    needs = {m.name for m in sqlmodules.load_order(["gpu/launches"])}
    assert "comm/jobs" not in needs
    con = _empty_connection()
    with pytest.raises(duckdb.CatalogException, match="comm_jobs"):
        Library(con).require(["gpu/launches"])


def test_editing_a_module_changes_the_keys_of_what_depends_on_it_only(tmp_path, monkeypatch):
    """The cached columns of a module are keyed by its SQL and the keys of what it requires: an edit recomputes
    that module and the modules that require it (directly or not), nothing else."""
    import shutil

    root = tmp_path / "sql"
    shutil.copytree(sqlmodules.sql_dir(), root)
    monkeypatch.setattr(sqlmodules, "sql_dir", lambda: root)
    monkeypatch.setattr(library, "sql_dir", lambda: root)
    before = {n: library.module_key(n) for n in MODULES}
    f = root / "tree" / "nesting.sql"
    f.write_text(f.read_text() + "\n-- a comment at the end\n")
    sqlmodules._modules.cache_clear()  # a new process would read the edited file
    library._module_key.cache_clear()
    after = {n: library.module_key(n) for n in MODULES}
    changed = {n for n in MODULES if before[n] != after[n]}
    dependents = {n for n in MODULES if "tree/nesting" in {m.name for m in sqlmodules.load_order([n])}}
    assert changed == dependents
    assert "tree/nesting" in changed and "lib/keys" not in changed
    assert len(changed) < len(MODULES)


def test_every_object_is_defined_once():
    seen: dict[str, str] = {}
    for m in sqlmodules.modules().values():
        for o in m.objects:
            assert o not in seen, f"{o} defined in {seen.get(o)} and {m.name}"
            seen[o] = m.name
        assert not set(m.objects) & set(TABLES), m.name


def test_every_public_object_has_its_documentation_block():
    """A public view, macro or table is headed by a comment block that names it and describes its rows."""
    missing = []
    for m in sqlmodules.modules().values():
        lines = m.path.read_text().splitlines()
        for i, line in enumerate(lines):
            c = re.match(r"CREATE OR REPLACE (?:VIEW|MACRO|TABLE) (\w+)", line)
            if not c or c.group(1).startswith("_"):
                continue
            block = []
            j = i - 1
            while j >= 0 and lines[j].startswith("--"):
                block.append(lines[j])
                j -= 1
            text = "\n".join(reversed(block))
            if c.group(1) not in text or len(block) < 2 and "AS SELECT * FROM" not in line:
                missing.append(f"{m.name}: {c.group(1)}")
    assert not missing, missing


def test_peer_objects_live_only_under_peers():
    native = [m for m in sqlmodules.modules().values() if not m.name.startswith("peers/")]
    bad = [f"{m.name}: {w}" for m in native for w in re.findall(r"\b_?(?:tl|hta)_\w+", m.path.read_text())]
    assert not bad, bad[:10]
    # no native module requires a peer module: deleting sql/peers/ removes the styles and nothing else
    assert not [m.name for m in native if any(r.startswith("peers/") for r in m.requires)]


def test_load_order_puts_requirements_first():
    order = [m.name for m in sqlmodules.load_order()]
    assert sorted(order) == MODULES
    pos = {n: i for i, n in enumerate(order)}
    for m in sqlmodules.modules().values():
        assert all(pos[r] < pos[m.name] for r in m.requires), m.name


def test_unknown_requirement_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "a.sql").write_text("-- a\n--\n-- @requires nowhere/b\n\nCREATE OR REPLACE VIEW _x AS SELECT 1;\n")
    monkeypatch.setattr(sqlmodules, "sql_dir", lambda: tmp_path)
    with pytest.raises(sqlmodules.DatasetError, match="requires nowhere/b"):
        sqlmodules.load_order()


def test_output_declarations(tmp_path):
    """@output: KEYS, EXCLUDE, COLUMNS (the trace's label, ns shown in µs), CALL with its arguments, ORDER BY, and a
    declaration continued over comment lines ending in a backslash."""
    (tmp_path / "a.sql").write_text(
        "-- a: outputs\n\n"
        "-- v: one row per trace.\n"
        "-- @output g 2 shown \\\n"
        "--     COLUMNS trace_id trace n x_ns:us \\\n"
        "--     ORDER BY trace, x_ns DESC\n"
        "-- @output h 1 by-rank EXCLUDE rank ORDER BY trace_id, rank\n"
        "-- @output r 1 called CALL gaps what=transitions top=50 full=false\n"
        "CREATE OR REPLACE VIEW v AS SELECT 't' AS trace_id, 1 AS n, 2000 AS x_ns, 1 AS rank;\n")
    m = sqlmodules._parse("a", tmp_path / "a.sql")
    shown, by_rank, called = m.outputs
    assert (shown.group, shown.position, shown.name, shown.object) == ("g", 2, "shown", "v")
    assert shown.columns == ("trace_id", "trace", "n", "x_ns:us") and shown.order_by == "trace, x_ns DESC"
    assert shown.query("trace_id IN ('t')") == (
        "SELECT o.trace_id, t.trace, o.n, o.x_ns / 1e3 AS x_us FROM v o JOIN (SELECT trace_id, label AS trace "
        "FROM trace_labels) t USING (trace_id) WHERE trace_id IN ('t') ORDER BY trace, x_ns DESC")
    assert shown.query(drop=("trace_id", "trace")) == \
        "SELECT o.n, o.x_ns / 1e3 AS x_us FROM v o ORDER BY trace, x_ns DESC"
    assert by_rank.query() == "SELECT * EXCLUDE (rank) FROM v ORDER BY trace_id, rank"
    assert by_rank.query("trace_id = $t", drop=("trace_id",)) == \
        "SELECT * EXCLUDE (rank, trace_id) FROM v WHERE trace_id = $t ORDER BY trace_id, rank"
    assert called.call == "gaps" and called.call_args == (("what", "transitions"), ("top", 50), ("full", False))
    assert called.order_by is None and not called.columns


def test_an_unreadable_output_is_an_error(tmp_path):
    (tmp_path / "a.sql").write_text("-- a\n\n-- v: x\n-- @output g x v\nCREATE OR REPLACE VIEW v AS SELECT 1 AS x;\n")
    with pytest.raises(sqlmodules.DatasetError, match="cannot read '@output g x v'"):
        sqlmodules._parse("a", tmp_path / "a.sql")


def test_shown_columns_are_columns_of_their_objects():
    """Every COLUMNS entry of an @output names a column of its object (x_ns:us: x_ns; trace: the label)."""
    mods = sqlmodules.load_order()
    cols = {o: [c for c, _ in found] for s in library.schemas(mods).values() for o, found in s.items()}
    bad = [f"{o.group} {o.name}: {c}" for m in mods for o in m.outputs for c in o.columns
           if c != "trace" and c.removesuffix(":us") not in cols[o.object]]
    assert not bad, bad
