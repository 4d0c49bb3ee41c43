"""Opening a dataset: DuckDB views over the Parquet tables plus the analysis views in ``sql/``.

Layout of a dataset directory::

    DATASET/traces/trace_id=<id>/<table>/part-N.parquet   a table's rows for one trace (see schema.py),
                                                        one part per chunk of the file (in file order)
    DATASET/init.sql                              the views as SQL, absolute paths: `duckdb -init DATASET/init.sql`
    DATASET/catalog.duckdb                        the same views in a database, written by `tracesql catalog`
    DATASET/.staging/                             private work directories of running ingests
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from tracesql.errors import DatasetError
from tracesql.escape import glob_escape
from tracesql.store.config import configure
from tracesql.store.schema import DATASET_TABLES, TABLES, TWINS_DIR, columns, empty_select

if TYPE_CHECKING:  # polars starts threads when imported: it is imported where a frame is made, not here
    import polars as pl


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def check_dataset_path(path: Path | str) -> None:
    """Raise DatasetError for a dataset path DuckDB cannot read Parquet files below: one holding a backslash (its
    file patterns take a backslash for a path separator on every system). Quotes and glob characters are fine:
    every path is quoted and glob-escaped (tracesql.escape.sql_path)."""
    if "\\" in str(Path(path).absolute()):
        raise DatasetError(f"{path}: a dataset path cannot hold a backslash (DuckDB reads no file pattern below "
                           "one); choose another location")


def table_statements(dataset: Path, trace_ids: list[str] | None = None,
                     also: list[tuple[Path, str, str]] | None = None) -> list[str]:
    """CREATE VIEW statements for the stored tables, with absolute paths, and for the dataset's user rule
    files (``_dataset_rule_files``, read by sql/categories/rules.sql): everything that names the dataset.
    ``trace_ids``: the tables hold only these traces (their directories are named, nothing else is listed).
    ``also`` (with ``trace_ids``): (other dataset, trace_id, as_id) triples: the tables also hold that trace of
    the other dataset, its rows under the trace_id ``as_id`` (a trace can then sit beside its own copy); the
    rule files and the record of ingest runs stay this dataset's."""
    root = Path(dataset).resolve()
    tdir = root / "traces"
    has_traces = any(tdir.glob("trace_id=*/traces/*.parquet")) if tdir.is_dir() else False
    out = []
    for table in TABLES:
        if trace_ids is not None:
            globs = ", ".join(_quote(f"{glob_escape(tdir)}/trace_id={glob_escape(t)}/{table}/*.parquet")
                              for t in trace_ids)
            selects = [f"SELECT trace_id, * EXCLUDE (trace_id) FROM read_parquet([{globs}], hive_partitioning = "
                       f"true, hive_types = {{'trace_id': VARCHAR}})"] if trace_ids else []
            for other, tid, as_id in also or []:
                glob = _quote(f"{glob_escape(Path(other).resolve())}/traces/trace_id={glob_escape(tid)}/{table}/"
                              "*.parquet")
                selects.append(f"SELECT {_quote(as_id)} AS trace_id, * EXCLUDE (trace_id) FROM read_parquet("
                               f"{glob}, hive_partitioning = true, hive_types = {{'trace_id': VARCHAR}})")
            out.append(f"CREATE OR REPLACE VIEW {table} AS {' UNION ALL BY NAME '.join(selects)};")
        elif has_traces and any(tdir.glob(f"trace_id=*/{table}/*.parquet")):
            glob = _quote(f"{glob_escape(tdir)}/trace_id=*/{table}/*.parquet")
            out.append(f"CREATE OR REPLACE VIEW {table} AS SELECT trace_id, * EXCLUDE (trace_id) FROM read_parquet("
                       f"{glob}, hive_partitioning = true, hive_types = {{'trace_id': VARCHAR}});")
        else:
            out.append(f"CREATE OR REPLACE VIEW {table} AS {empty_select(table)};")
    out += _run_statements(root)
    out.append(f"CREATE OR REPLACE VIEW _dataset_rule_files AS SELECT filename, content "
               f"FROM read_text({_quote(glob_escape(root / 'rules') + '/*.csv')});")
    out.append(f"CREATE OR REPLACE VIEW _dataset_twin_files AS SELECT filename, content "
               f"FROM read_text({_quote(glob_escape(root / TWINS_DIR) + '/*.json')});")
    return out


def _run_statements(root: Path) -> list[str]:
    """Views over the record of ingest runs (DATASET/runs/*.json, tracesql/ingest/runs.py): ingest_runs and
    ingest_run_files, with the columns of schema.DATASET_TABLES (no rows before the first run)."""
    if not any((root / "runs").glob("*.json")):
        return [f"CREATE OR REPLACE VIEW {t} AS {empty_select(t)};" for t in DATASET_TABLES]
    glob = _quote(glob_escape(root / "runs") + "/*.json")
    # the entries the traces carry (ingest/runs.py): a published trace its run's record does not list (the run
    # was killed, or is still going) is listed too
    sidecars = _quote(glob_escape(root / "traces") + "/trace_id=*/ingest_run.json")
    has_sidecars = any((root / "traces").glob("trace_id=*/ingest_run.json"))

    def struct(table: str) -> str:
        return ", ".join(f'"{c}" {t}' for c, t, _ in columns(table))

    run_cols = ", ".join(f"'{c}': '{t}'" for c, t, _ in columns("ingest_runs"))
    sidecar_types = ", ".join(f"'{c}': '{t}'" for c, t, _ in columns("ingest_run_files"))
    sidecar_cols = ", ".join(f"'{c}': \"{c}\"" for c, _, _ in columns("ingest_run_files"))
    file_cols = ", ".join(f'f."{c}"' for c, _, _ in columns("ingest_run_files"))
    files_type = f"STRUCT({struct('ingest_run_files')})[]"
    return [
        f"CREATE OR REPLACE VIEW ingest_runs AS SELECT * FROM read_json({glob}, format = 'unstructured', "
        f"columns = {{{run_cols}}});",
        f"CREATE OR REPLACE VIEW ingest_run_files AS SELECT {file_cols} FROM (SELECT unnest(files) AS f "
        f"FROM read_json({glob}, format = 'unstructured', columns = {{'files': '{files_type}'}}))"
        + (f" UNION ALL SELECT {file_cols} FROM (SELECT {{{sidecar_cols}}} AS f FROM read_json({sidecars}, "
           f"format = 'unstructured', columns = {{{sidecar_types}}})) s WHERE NOT EXISTS (SELECT 1 FROM (SELECT "
           f"unnest(files) AS r FROM read_json({glob}, format = 'unstructured', columns = {{'files': "
           f"'{files_type}'}})) WHERE r.run_id = s.f.run_id AND r.trace_id = s.f.trace_id AND r.status = "
           "'ingested')" if has_sidecars else "") + ";",
    ]


def write_init_sql(dataset: Path) -> Path:
    """(Re)write DATASET/init.sql (init_sql_text), replaced atomically, under the dataset's lock; not when it is
    current. Cheap: text only."""
    from tracesql.store.lock import dataset_lock

    dataset = Path(dataset)
    text = init_sql_text(dataset)
    try:
        if (dataset / "init.sql").read_text() == text:
            return dataset / "init.sql"
    except (OSError, UnicodeDecodeError):
        pass
    tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = dataset / f".init.sql.{tag}"
    with dataset_lock(dataset):
        try:
            tmp.write_text(init_sql_text(dataset))
            os.replace(tmp, dataset / "init.sql")
        finally:
            tmp.unlink(missing_ok=True)
    return dataset / "init.sql"


def _remove_stale_catalog_temps(dataset: Path) -> None:
    """Temporary catalogs (``.catalog.<pid>-<random>.duckdb``) of processes that no longer run (killed while
    writing the catalog); the caller holds the dataset's lock."""
    from tracesql.store.lock import pid_alive

    for f in Path(dataset).glob(".catalog.*.duckdb*"):
        pid = f.name[len(".catalog."):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
            f.unlink(missing_ok=True)


def stale_traces(dataset: Path) -> dict[str, list[str]]:
    """Traces of a dataset stored with an older table layout: {trace_id: missing tables / table.column, and
    'table.column (no longer stored)' for a column the current layout dropped}.

    Reads one Parquet footer per stored table of each trace; used to explain a dataset whose views do not
    bind (the views expect the current layout of every table, schema.py)."""
    out: dict[str, list[str]] = {}
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    try:
        for tdir in sorted((Path(dataset) / "traces").glob("trace_id=*")):
            missing = []
            for table in TABLES:
                parts = sorted((tdir / table).glob("*.parquet"))
                if not parts:
                    missing.append(table)
                    continue
                have = {r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(parts[0])]).fetchall()}
                layout = {c for c, _, _ in columns(table)}
                missing += [f"{table}.{c}" for c, _, _ in columns(table) if c not in have]
                missing += [f"{table}.{c} (no longer stored)" for c in sorted(have - layout - {"trace_id"})]
            if missing:
                out[tdir.name.split("=", 1)[1]] = missing
    finally:
        con.close()
    return out


# The catalog is written in the storage format of DuckDB 1.4, so that the duckdb CLI a user can install (pip's
# duckdb-cli, whose newest release may be older than the Python package) opens it; the views in it are SQL text
# that every DuckDB from 1.4 on binds (tests/test_duckdb_cli_route.py runs the route on a pip-installed CLI).
CATALOG_STORAGE_VERSION = "v1.4.0"


def _connect_catalog(path: Path):
    try:
        return duckdb.connect(str(path), config={"storage_compatibility_version": CATALOG_STORAGE_VERSION})
    except duckdb.Error:  # a DuckDB that does not know the setting or the version: its own format
        return duckdb.connect(str(path))


def init_sql_text(dataset: Path) -> str:
    """DATASET/init.sql: the table views, then the whole SQL library (tracesql.store.library.script)."""
    from tracesql.store.library import script

    return ("-- Views of this tracesql dataset. Use: duckdb -init init.sql\n"
            "SET enable_progress_bar = false;\n" + "\n".join(table_statements(dataset) + script()) + "\n")


def _catalog_template(library: list[str]) -> Path | None:
    """A DuckDB database holding the whole library over tables without rows, made once per library and DuckDB
    version and shared by every dataset (cache_dir()/catalog-<key>.duckdb, written to a temporary name and renamed);
    None when the cache directory cannot be written."""
    from tracesql.store.config import cache_dir
    from tracesql.store.schema import empty_table_statements

    empty = empty_table_statements()
    path = cache_dir() / f"catalog-{_catalog_key(empty + library)}.duckdb"
    if path.exists():
        return path
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = _connect_catalog(tmp)
        try:
            con.execute("SET enable_progress_bar = false")
            for st in empty + library:
                con.execute(st)
        finally:
            con.close()
        os.replace(tmp, path)
    except (OSError, duckdb.Error):
        return None
    finally:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
    return path


def write_catalog(dataset: Path) -> Path:
    """Write DATASET/catalog.duckdb: a DuckDB database holding every view (open it with `duckdb FILE`), replaced
    atomically: a copy of the shared template (_catalog_template) with the dataset's table views put in (the
    library's views name the tables, so they read the new ones), or, without a template, every view created here.
    A dataset stored with an older table layout raises DatasetError."""
    from tracesql.store.library import script
    from tracesql.store.lock import dataset_lock

    dataset = Path(dataset)
    with dataset_lock(dataset):
        _remove_stale_catalog_temps(dataset)
        return _write_catalog(dataset, script())


def _write_catalog(dataset: Path, library: list[str]) -> Path:
    tables = table_statements(dataset)
    template = _catalog_template(library)
    tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = dataset / f".catalog.{tag}.duckdb"
    # DuckDB reads what follows a '?' in a database path as options (its WAL would go elsewhere): such a catalog is
    # written in a temporary folder, then copied beside its place
    work = Path(tempfile.mkdtemp(prefix="tracesql-catalog-")) if "?" in str(tmp.absolute()) else None
    build = tmp if work is None else work / tmp.name
    try:
        if template is not None:
            shutil.copyfile(template, build)
        con = _connect_catalog(build)
        try:
            con.execute("SET enable_progress_bar = false")
            for st in tables:
                con.execute(st)
            if _layout_mismatch(con, dataset):
                _raise_stale(dataset)
            if template is None:
                for st in library:
                    con.execute(st)
            con.execute("CREATE TABLE _tracesql_catalog AS SELECT ? AS key", [_catalog_key(tables + library)])
        finally:
            con.close()
        if work is not None:
            shutil.copyfile(build, tmp)
        os.replace(tmp, dataset / "catalog.duckdb")
    finally:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    return dataset / "catalog.duckdb"


def _catalog_key(stmts: list[str]) -> str:
    """Identifies a catalog's content: its statements (which hold the dataset's path) and DuckDB's version."""
    h = hashlib.blake2b(digest_size=16)
    h.update(duckdb.__version__.encode() + CATALOG_STORAGE_VERSION.encode())
    for st in stmts:
        h.update(st.encode())
    return h.hexdigest()


def _temporary(statement: str) -> str:
    """A table statement of table_statements (CREATE OR REPLACE VIEW ...) as a temporary view."""
    head = "CREATE OR REPLACE VIEW "
    if not statement.startswith(head):
        raise ValueError(f"not a table view statement: {statement[:60]}")
    return "CREATE OR REPLACE TEMP VIEW " + statement[len(head):]


def catalog_is_current(dataset: Path) -> bool:
    """Whether DATASET/catalog.duckdb holds exactly the views this installation would write."""
    con = _open_current_catalog(Path(dataset), require_cached=False)
    if con is None:
        return False
    con.close()
    return True


def _open_current_catalog(dataset: Path, require_cached: bool = True):
    """A read-only connection to DATASET/catalog.duckdb when it holds exactly the views this installation would
    write, else None. ``require_cached``: None too when some module's columns are not cached (the key could
    only be computed by binding them: the caller loads what it needs instead)."""
    from tracesql.store.library import cached, script
    from tracesql.store.sqlmodules import load_order

    cat = dataset / "catalog.duckdb"
    if not cat.exists():
        return None
    if require_cached and len(cached(load_order())) < len(load_order()):
        return None
    try:
        con = duckdb.connect(str(cat), read_only=True)
    except duckdb.Error:
        return None
    try:
        key = con.execute("SELECT key FROM _tracesql_catalog").fetchall()[0][0]
    except duckdb.Error:
        key = None
    if key != _catalog_key(table_statements(dataset) + script()):
        con.close()
        return None
    return con


def ensure_catalog(dataset: Path) -> None:
    """Write DATASET/catalog.duckdb unless it is current."""
    if not catalog_is_current(dataset):
        write_catalog(dataset)


def _layout_mismatch(con, dataset: Path) -> list[str]:
    """Tables missing from a stored trace (every ingest writes every table), and columns of the current layout
    missing from a table's view (which reads the schema of the table's first Parquet file), or columns it holds
    that the current layout no longer stores."""
    tdir = Path(dataset) / "traces"
    traces = {p.name for p in tdir.glob("trace_id=*")}
    out = [table for table in TABLES
           if traces - {p.parent.parent.name for p in tdir.glob(f"trace_id=*/{table}/*.parquet")}]
    for table in TABLES:
        have = {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}
        layout = {c for c, _, _ in columns(table)}
        out += [f"{table}.{c}" for c, _, _ in columns(table) if c not in have]
        out += [f"{table}.{c}" for c in sorted(have - layout - {"trace_id"})]
    return out


def _raise_stale(dataset: Path) -> None:
    """Raise the DatasetError that names a trace stored with an older table layout (when there is one)."""
    stale = stale_traces(dataset)
    if stale:
        tid, what = next(iter(stale.items()))
        gone = " (no longer stored)"
        lacks = [w for w in what if not w.endswith(gone)]
        holds = [w.removesuffix(gone) for w in what if w.endswith(gone)]
        detail = "; ".join(([f"lacks {', '.join(lacks[:3])}"] if lacks else [])
                           + ([f"holds {', '.join(holds[:3])}, no longer stored"] if holds else []))
        raise DatasetError(
            f"{dataset}: {len(stale)} trace(s) were stored with an older table layout (e.g. trace {tid} "
            f"{detail}); ingest their source files into a new dataset") from None


class Connection:
    """A DuckDB connection that loads the SQL library's modules a query names before running it
    (tracesql.store.library.Library.require_for). Everything else is the DuckDB connection's own."""

    def __init__(self, con, library):
        self._con = con
        self.library = library

    def sql(self, query, *args, **kwargs):
        if isinstance(query, str):
            self.library.require_for(query)
        return self._con.sql(query, *args, **kwargs)

    query = sql

    def execute(self, query, *args, **kwargs):
        if isinstance(query, str):
            self.library.require_for(query)
        return self._con.execute(query, *args, **kwargs)

    @property
    def raw(self):
        """The DuckDB connection itself (queries through it load nothing)."""
        return self._con

    def __getattr__(self, name):
        return getattr(self._con, name)


class Store:
    """A tracesql dataset opened in an in-memory DuckDB connection: views over its stored tables, and the SQL
    library's modules loaded as queries name their objects (tracesql.Dataset adds the analyses).

    ``ds.sql(query)`` returns a polars DataFrame; ``ds.con`` is the DuckDB connection for power users.
    ``with ds.materialized(views):`` computes views once as temporary tables for the block, dropped after it.
    """

    def __init__(self, path, threads: int | None = None, trace_ids: list[str] | None = None,
                 also: list[tuple[str | Path, str, str]] | None = None, memory_limit: str | None = None):
        from tracesql.store.library import Library
        from tracesql.store.lock import recover
        from tracesql.store.sqlmodules import modules

        self.path = Path(path)
        if not (self.path / "traces").is_dir():
            what = "no such directory" if not self.path.exists() else "not a tracesql dataset (no traces/ folder)"
            raise DatasetError(f"{path}: {what}; create one with `tracesql ingest TRACE --out {path}`")
        check_dataset_path(self.path)
        recover(self.path)  # a rules change committed by a process that died before finishing it
        some = trace_ids is not None or bool(also)
        # a current catalog holds every view already, unbound: nothing to create. Over some traces its views read
        # those traces' tables through temporary views of the same names, which come first in DuckDB's search path
        tables = (self._traces_statements(list(trace_ids or []), [(Path(p), t, a) for p, t, a in also or []])
                  if some else [])
        catalog = _open_current_catalog(self.path)
        if catalog is not None:
            try:
                configure(catalog, memory_limit=memory_limit, threads=threads)
                for st in tables:
                    catalog.execute(_temporary(st))
            except BaseException:
                catalog.close()
                raise
            self.con = Connection(catalog, Library(catalog, loaded=set(modules())))
            return
        if not some:
            tables = table_statements(self.path)
        raw = duckdb.connect()
        try:
            configure(raw, memory_limit=memory_limit, threads=threads)
            try:
                for st in tables:
                    raw.execute(st)
            except duckdb.Error:
                _raise_stale(self.path)
                raise
            if not some and _layout_mismatch(raw, self.path):
                _raise_stale(self.path)
        except BaseException:
            raw.close()
            raise
        self.con = Connection(raw, Library(raw))

    def _traces_statements(self, trace_ids: list[str], also: list[tuple[Path, str, str]]) -> list[str]:
        """The table views of only the traces ``trace_ids`` (a task of a batch job over an archive), and of the
        traces of other datasets ``also`` names (table_statements); nothing else of the dataset is read."""
        if not trace_ids and not also:
            raise DatasetError(f"{self.path}: no trace (none given) in the dataset")
        for root, _, _ in also:
            if not (root / "traces").is_dir():
                raise DatasetError(f"{root}: not a tracesql dataset (no traces/ folder)")
        for root, tid in [(self.path, t) for t in trace_ids] + [(p, t) for p, t, _ in also]:
            if not (root / "traces" / f"trace_id={tid}").is_dir():
                raise DatasetError(f"{root}: no trace {tid} in the dataset")
        as_ids = list(trace_ids) + [a for _, _, a in also]
        if len(set(as_ids)) < len(as_ids):
            raise DatasetError(f"{self.path}: two traces opened under one trace_id ({', '.join(as_ids)})")
        return table_statements(self.path, trace_ids, also)

    def require(self, *modules: str) -> None:
        """Load SQL library modules (and what they require) into the connection; ``require()`` loads them all."""
        if modules:
            self.con.library.require(list(modules))
        else:
            self.con.library.require_all()

    def sql(self, query: str, params=None) -> pl.DataFrame:
        """Run a query and return the result as a polars DataFrame."""
        return self.con.sql(query, params=params).pl() if params is not None else self.con.sql(query).pl()

    def execute(self, query: str, params=None):
        return self.con.execute(query, params) if params is not None else self.con.execute(query)

    @contextmanager
    def scope(self) -> Iterator[None]:
        """Whatever the block leaves on the connection is undone after it: temporary tables and views it made are
        dropped, variables it set are reset to their values before it. The library's calls each run in one, so
        that no call changes what a later call on the same dataset returns."""
        raw = self.con.raw
        temps = "SELECT table_name FROM duckdb_tables() WHERE temporary UNION ALL " \
                "SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal"
        before = {r[0] for r in raw.execute(temps).fetchall()}
        values = _variables(raw)
        try:
            yield
        finally:
            views = {r[0] for r in raw.execute(
                "SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal").fetchall()}
            for (name,) in reversed(raw.execute(temps).fetchall()):
                if name not in before:
                    kind = "VIEW" if name in views else "TABLE"
                    raw.execute(f'DROP {kind} IF EXISTS temp.main."{name.replace(chr(34), chr(34) * 2)}"')
            for name, value in _variables(raw).items():
                if name not in values:
                    raw.execute(f'RESET VARIABLE "{name}"')
                elif value != values[name]:
                    raw.execute(f'SET VARIABLE "{name}" = ?', [values[name]])

    @contextmanager
    def materialized(self, names: list[str], trace_ids: list[str] | None = None) -> Iterator[list[str]]:
        """A scope (Dataset.scope) in which the views ``names`` are computed once, as temporary tables that shadow
        them (every view built on one reads the copy); yields the names made here. With ``trace_ids``, the
        copies hold only those traces' rows (and a graph replay's capture trace): inside the block, the
        connection answers for those traces only. A name already shadowed is left as it is."""
        with self.scope():
            yield materialize(self, names, trace_ids)

    def tables(self) -> list[str]:
        """The stored tables (one Parquet file per trace each), then the record of ingest runs."""
        return [*TABLES, *DATASET_TABLES]

    def views(self) -> list[str]:
        """The analysis views the SQL library defines (loaded or not), in name order."""
        from tracesql.store.sqlmodules import modules

        return sorted(o for m in modules().values() for k, o, _ in m.statements if k == "VIEW")
    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _variables(raw) -> dict:
    """The connection's variables with their values (as their own types)."""
    names = [r[0] for r in raw.execute("SELECT name FROM duckdb_variables()").fetchall()]
    return {n: raw.execute("SELECT getvariable(?)", [n]).fetchall()[0][0] for n in names}


def materialize(ds: Store, names: list[str], ids: list[str] | None = None) -> list[str]:
    """Compute the views ``names`` as temporary tables of the same name (only the traces ``ids`` and their
    capture traces when given), those not made yet; returns the names made, in order. Outside a scope the
    tables stay until the caller drops them: prefer Dataset.materialized."""
    con = ds.con
    for n in names:
        con.library.require_for(n)
    done = {r[0] for r in con.raw.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
    db = con.raw.execute("SELECT current_database()").fetchall()[0][0].replace('"', '""')
    if ids:
        ids = sorted(set(ids) | companion_traces(ds, ids))
    id_list = "(" + ", ".join("'" + i.replace("'", "''") + "'" for i in ids or []) + ")"
    made = []
    for name in names:
        if name in done:
            continue
        per_trace = ids and con.raw.execute(
            "SELECT count(*) FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' "
            "AND database_name <> 'temp' AND column_name = 'trace_id'", [name]).fetchall()[0][0]
        where = f" WHERE trace_id IN {id_list}" if per_trace else ""
        con.raw.execute(f'CREATE TEMP TABLE "{name}" AS SELECT * FROM "{db}".main."{name}"{where}')
        made.append(name)
        done.add(name)
    return made


def companion_traces(ds: Store, ids: list[str]) -> set[str]:
    """The traces whose ops the graph replays among ``ids`` take: their twins (tree/graph_twins: capture traces and
    eager runs) and the capture traces of TraceLens's merge (tree/graph_capture)."""
    id_list = "(" + ", ".join("'" + i.replace("'", "''") + "'" for i in ids) + ")"
    if not ds.con.execute(f"SELECT count(*) FROM launches WHERE launch_kind = 'graph' AND trace_id IN {id_list}"
                          ).fetchall()[0][0]:
        return set()
    return {r[0] for r in ds.con.execute(
        f"SELECT DISTINCT capture_trace_id FROM graph_capture_links WHERE trace_id IN {id_list} UNION "
        f"SELECT DISTINCT twin_trace_id FROM trace_twins WHERE trace_id IN {id_list}").fetchall()}
