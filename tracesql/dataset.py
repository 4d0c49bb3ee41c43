"""Opening a dataset: DuckDB views over the Parquet tables plus the analysis views in ``sql/``.

Layout of a dataset directory::

    DATASET/traces/trace_id=<id>/<table>/part-N.parquet   a table's rows for one trace (see schema.py),
                                                        one part per chunk of the file (in file order)
    DATASET/init.sql                              the views as SQL, absolute paths: `duckdb -init DATASET/init.sql`
    DATASET/catalog.duckdb                        the same views in a database (`tracesql catalog DATASET`)
    DATASET/.staging/                             private work directories of running ingests
"""
from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from .errors import DatasetError
from .schema import DATASET_TABLES, TABLES, columns, empty_select
from .sqlmodules import statements as _module_statements

if TYPE_CHECKING:  # polars starts threads when imported: it is imported where a frame is made, not here
    import polars as pl


# DuckDB plans an ASOF join whose left side it estimates at a few rows as a nested loop and a grouping
# (asof_loop_join_threshold, 64 rows by default); the call tree's ASOF joins read views whose row counts it
# cannot estimate (window outputs), and with duckdb 2.0.1 such a plan of _tree_parents took minutes instead of a
# second on the shared traces. Every connection that queries the SQL library keeps the ASOF join.
ASOF_AS_JOIN = "SET asof_loop_join_threshold = 0"


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


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
            globs = ", ".join(_quote(f"{tdir}/trace_id={t}/{table}/*.parquet") for t in trace_ids)
            selects = [f"SELECT trace_id, * EXCLUDE (trace_id) FROM read_parquet([{globs}], hive_partitioning = "
                       f"true, hive_types = {{'trace_id': VARCHAR}})"] if trace_ids else []
            for other, tid, as_id in also or []:
                glob = _quote(f"{Path(other).resolve()}/traces/trace_id={tid}/{table}/*.parquet")
                selects.append(f"SELECT {_quote(as_id)} AS trace_id, * EXCLUDE (trace_id) FROM read_parquet("
                               f"{glob}, hive_partitioning = true, hive_types = {{'trace_id': VARCHAR}})")
            out.append(f"CREATE OR REPLACE VIEW {table} AS {' UNION ALL BY NAME '.join(selects)};")
        elif has_traces and any(tdir.glob(f"trace_id=*/{table}/*.parquet")):
            glob = _quote(f"{tdir}/trace_id=*/{table}/*.parquet")
            out.append(f"CREATE OR REPLACE VIEW {table} AS SELECT trace_id, * EXCLUDE (trace_id) FROM read_parquet("
                       f"{glob}, hive_partitioning = true, hive_types = {{'trace_id': VARCHAR}});")
        else:
            out.append(f"CREATE OR REPLACE VIEW {table} AS {empty_select(table)};")
    out += _run_statements(root)
    out.append(f"CREATE OR REPLACE VIEW _dataset_rule_files AS SELECT filename, content "
               f"FROM read_text({_quote(str(root / 'rules' / '*.csv'))});")
    return out


def _run_statements(root: Path) -> list[str]:
    """Views over the record of ingest runs (DATASET/runs/*.json, tracesql/ingest/runs.py): ingest_runs and
    ingest_run_files, with the columns of schema.DATASET_TABLES (no rows before the first run)."""
    if not any((root / "runs").glob("*.json")):
        return [f"CREATE OR REPLACE VIEW {t} AS {empty_select(t)};" for t in DATASET_TABLES]
    glob = _quote(str(root / "runs" / "*.json"))

    def struct(table: str) -> str:
        return ", ".join(f'"{c}" {t}' for c, t, _ in columns(table))

    run_cols = ", ".join(f"'{c}': '{t}'" for c, t, _ in columns("ingest_runs"))
    file_cols = ", ".join(f'f."{c}"' for c, _, _ in columns("ingest_run_files"))
    files_type = f"STRUCT({struct('ingest_run_files')})[]"
    return [
        f"CREATE OR REPLACE VIEW ingest_runs AS SELECT * FROM read_json({glob}, format = 'unstructured', "
        f"columns = {{{run_cols}}});",
        f"CREATE OR REPLACE VIEW ingest_run_files AS SELECT {file_cols} FROM (SELECT unnest(files) AS f "
        f"FROM read_json({glob}, format = 'unstructured', columns = {{'files': '{files_type}'}}));",
    ]


def _empty_table_statements() -> list[str]:
    """table_statements of no dataset: the same views with the same columns, and no rows."""
    return [f"CREATE OR REPLACE VIEW {t} AS {empty_select(t)};" for t in [*TABLES, *DATASET_TABLES]] + [
        "CREATE OR REPLACE VIEW _dataset_rule_files AS SELECT NULL::VARCHAR AS filename, NULL::VARCHAR AS content "
        "WHERE false;"]


def analysis_statements() -> list[str]:
    """Every module of the SQL library (tracesql.sqlmodules) in load order. They name no dataset: they read
    the views of table_statements."""
    return _module_statements()


def catalog_statements(dataset: Path) -> list[str]:
    """Table views (table_statements), then the analysis views (analysis_statements)."""
    return table_statements(dataset) + analysis_statements()


def write_init_sql(dataset: Path) -> Path:
    """(Re)write DATASET/init.sql (views with absolute paths), replaced atomically. Cheap: text only."""
    dataset = Path(dataset)
    stmts = catalog_statements(dataset)
    tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = dataset / f".init.sql.{tag}"
    tmp.write_text("-- Views of this tracesql dataset. Use: duckdb -init init.sql\n" + "\n".join(stmts) + "\n")
    os.replace(tmp, dataset / "init.sql")
    return dataset / "init.sql"


def stale_traces(dataset: Path) -> dict[str, list[str]]:
    """Traces of a dataset stored with an older table layout: {trace_id: missing tables / table.column}.

    Reads one Parquet footer per stored table of each trace; used to explain a dataset whose views do not
    bind (the views expect the current layout of every table, schema.py)."""
    out: dict[str, list[str]] = {}
    con = duckdb.connect()
    try:
        for tdir in sorted((Path(dataset) / "traces").glob("trace_id=*")):
            missing = []
            for table in TABLES:
                parts = sorted((tdir / table).glob("*.parquet"))
                if not parts:
                    missing.append(table)
                    continue
                have = {r[0] for r in con.execute("SELECT name FROM parquet_schema(?)", [str(parts[0])]).fetchall()}
                missing += [f"{table}.{c}" for c, _, _ in columns(table) if c not in have]
            if missing:
                out[tdir.name.split("=", 1)[1]] = missing
    finally:
        con.close()
    return out


def _catalog_key(stmts: list[str]) -> str:
    """Identifies a catalog's content: the view statements (which hold the dataset's path) and DuckDB's version."""
    h = hashlib.blake2b(digest_size=16)
    h.update(duckdb.__version__.encode() + CATALOG_STORAGE_VERSION.encode())
    for st in stmts:
        h.update(st.encode())
    return h.hexdigest()


# The catalog is written in the storage format of DuckDB 1.4, so that the duckdb CLI a user can install (pip's
# duckdb-cli, whose newest release may be older than the Python package) opens it; the views in it are SQL text
# that every DuckDB from 1.4 on binds (tests/test_shell.py runs the route on a pip-installed CLI).
CATALOG_STORAGE_VERSION = "v1.4.0"


def _connect_catalog(path: Path):
    try:
        return duckdb.connect(str(path), config={"storage_compatibility_version": CATALOG_STORAGE_VERSION})
    except duckdb.Error:  # a DuckDB that does not know the setting or the version: its own format
        return duckdb.connect(str(path))


def cache_dir() -> Path:
    """Where tracesql keeps files it can rebuild at any time: $TRACESQL_CACHE_DIR, else $XDG_CACHE_HOME/tracesql,
    else ~/.cache/tracesql."""
    if os.environ.get("TRACESQL_CACHE_DIR"):
        return Path(os.environ["TRACESQL_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tracesql"


def _remove_stale_scratch() -> None:
    """Remove the private catalog copies (.open-<pid>-<hex>.duckdb and its .wal) that processes which no longer
    exist left in the cache directory (killed before Dataset.close)."""
    from .ingest.publish import _pid_alive

    for f in cache_dir().glob(".open-*-*.duckdb*"):
        pid = f.name.split("-")[1]
        if pid.isdigit() and not _pid_alive(int(pid)):
            f.unlink(missing_ok=True)


def _catalog_template(analysis: list[str]) -> Path | None:
    """A DuckDB database with every analysis view created over tables without rows, shared by all datasets
    (``cache_dir()/catalog-<key>.duckdb``, the key covering the SQL, the table layout and DuckDB's version).

    Creating the analysis views binds each of them, which takes seconds; a dataset's catalog is a copy of
    this template whose table views are then replaced by the dataset's own (the analysis views refer to the
    tables by name, so they read the new ones). None when the cache directory cannot be written."""
    return cached_database("catalog", _empty_table_statements() + analysis, _connect_catalog)


def cached_database(prefix: str, stmts: list[str], connect=None) -> Path | None:
    """A DuckDB database holding what ``stmts`` create, made once and shared (``cache_dir()/<prefix>-<key>.duckdb``,
    the key covering the statements and DuckDB's version; written to a temporary name and renamed, so that
    concurrent processes never see half of it). ``connect(path)`` opens the new file (default duckdb.connect).
    None when the cache directory cannot be written."""
    path = cache_dir() / f"{prefix}-{_catalog_key(stmts)}.duckdb"
    if path.exists():
        return path
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = (connect or (lambda p: duckdb.connect(str(p))))(tmp)
        try:
            for st in stmts:
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


def _layout_mismatch(con, dataset: Path) -> list[str]:
    """Tables missing from a stored trace (every ingest writes every table), and columns of the current layout
    missing from a table's view (which reads the schema of the table's first Parquet file)."""
    tdir = Path(dataset) / "traces"
    traces = {p.name for p in tdir.glob("trace_id=*")}
    out = [table for table in TABLES
           if traces - {p.parent.parent.name for p in tdir.glob(f"trace_id=*/{table}/*.parquet")}]
    for table in TABLES:
        have = {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}
        out += [f"{table}.{c}" for c, _, _ in columns(table) if c not in have]
    return out


def write_catalog(dataset: Path) -> Path:
    """Write DATASET/catalog.duckdb: a DuckDB database holding every view (open it with `duckdb FILE`).

    It starts as a copy of the shared template (_catalog_template) with the dataset's table views put in;
    without a template every view is created here. A dataset stored with an older table layout raises
    DatasetError. ``tracesql.open`` reuses the catalog while its key (that of catalog_statements) matches.
    """
    dataset = Path(dataset)
    tables, analysis = table_statements(dataset), analysis_statements()
    stmts = tables + analysis
    template = _catalog_template(analysis)
    tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = dataset / f".catalog.{tag}.duckdb"
    try:
        if template is not None:
            shutil.copyfile(template, tmp)
        con = _connect_catalog(tmp)
        try:
            for st in (tables if template is not None else stmts):
                con.execute(st)
            if _layout_mismatch(con, dataset):
                _raise_stale(dataset)
            con.execute("CREATE TABLE _tracesql_catalog AS SELECT ? AS key", [_catalog_key(stmts)])
        finally:
            con.close()
        os.replace(tmp, dataset / "catalog.duckdb")
    finally:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
    return dataset / "catalog.duckdb"


def _raise_stale(dataset: Path) -> None:
    """Raise the DatasetError that names a trace stored with an older table layout (when there is one)."""
    stale = stale_traces(dataset)
    if stale:
        tid, what = next(iter(stale.items()))
        raise DatasetError(
            f"{dataset}: {len(stale)} trace(s) were stored with an older table layout (e.g. trace {tid} "
            f"lacks {', '.join(what[:3])}); ingest their source files into a new dataset") from None


def ensure_catalog(dataset: Path) -> None:
    """Write DATASET/catalog.duckdb unless it is current (so that the next open binds nothing)."""
    con = _open_catalog(Path(dataset), catalog_statements(Path(dataset)), {})
    if con is not None:
        con.close()
    else:
        write_catalog(dataset)


def _open_catalog(dataset: Path, stmts: list[str], config: dict):
    """A read-only connection to DATASET/catalog.duckdb when it holds exactly these views, else None."""
    cat = dataset / "catalog.duckdb"
    if not cat.exists():
        return None
    try:
        con = duckdb.connect(str(cat), read_only=True, config=config)
    except duckdb.Error:
        return None
    try:
        key = con.execute("SELECT key FROM _tracesql_catalog").fetchall()[0][0]
    except duckdb.Error:
        key = None
    if key != _catalog_key(stmts):
        con.close()
        return None
    return con


class Dataset:
    """A tracesql dataset opened in an in-memory DuckDB connection with every table and view defined.

    ``ds.sql(query)`` returns a polars DataFrame; ``ds.con`` is the DuckDB connection for power users.
    """

    def __init__(self, path, threads: int | None = None, trace_ids: list[str] | None = None,
                 also: list[tuple[str | Path, str, str]] | None = None):
        self.path = Path(path)
        self._scratch: Path | None = None
        if not (self.path / "traces").is_dir():
            what = "no such directory" if not self.path.exists() else "not a tracesql dataset (no traces/ folder)"
            raise DatasetError(f"{path}: {what}; create one with `tracesql ingest TRACE --out {path}`")
        config: dict[str, str | bool | int | float | list[str]] = {"threads": threads} if threads else {}
        if trace_ids is not None or also:
            self._open_traces(list(trace_ids or []), config, [(Path(p), t, a) for p, t, a in also or []])
            return
        stmts = catalog_statements(self.path)
        self.con = _open_catalog(self.path, stmts, config)
        if self.con is None:
            try:  # store the bound views once; later opens read them without binding
                write_catalog(self.path)
                self.con = _open_catalog(self.path, stmts, config)
            except (OSError, duckdb.Error):
                self.con = None  # e.g. a read-only dataset directory: define the views in memory instead
        if self.con is None:
            self.con = duckdb.connect(config=config)
            try:
                for st in stmts:
                    self.con.execute(st)
            except duckdb.Error:
                _raise_stale(self.path)
                raise
            if _layout_mismatch(self.con, self.path):
                _raise_stale(self.path)
        # Every query reads the footers of all Parquet parts it scans; keep them cached for the connection.
        self.con.execute("SET parquet_metadata_cache = true")
        self.con.execute(ASOF_AS_JOIN)

    def _open_traces(self, trace_ids: list[str], config: dict, also: list[tuple[Path, str, str]]) -> None:
        """Open only the traces ``trace_ids`` (a task of a batch job over an archive), and the traces of other
        datasets ``also`` names (table_statements): a private copy of the shared template of analysis views
        (nothing is bound but the table views) whose tables read only these traces' directories; no catalog is
        read or written."""
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
        tables = table_statements(self.path, trace_ids, also)
        analysis = analysis_statements()
        template = _catalog_template(analysis)
        self.con = None
        if template is not None:
            _remove_stale_scratch()
            self._scratch = cache_dir() / f".open-{os.getpid()}-{uuid.uuid4().hex[:8]}.duckdb"
            try:
                shutil.copyfile(template, self._scratch)
                self.con = duckdb.connect(str(self._scratch), config=config)
                for st in tables:
                    self.con.execute(st)
            except (OSError, duckdb.Error):
                self.close()
                self.con = None
        if self.con is None:
            self.con = duckdb.connect(config=config)
            for st in tables + analysis:
                self.con.execute(st)
        self.con.execute("SET parquet_metadata_cache = true")
        self.con.execute(ASOF_AS_JOIN)

    def sql(self, query: str, params=None) -> pl.DataFrame:
        """Run a query and return the result as a polars DataFrame."""
        return self.con.sql(query, params=params).pl() if params is not None else self.con.sql(query).pl()

    def execute(self, query: str, params=None):
        return self.con.execute(query, params) if params is not None else self.con.execute(query)

    def tables(self) -> list[str]:
        """The stored tables (one Parquet file per trace each), then the record of ingest runs."""
        return [*TABLES, *DATASET_TABLES]

    def views(self) -> list[str]:
        """The analysis views defined by the shipped SQL files."""
        rows = self.con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary "
                                "ORDER BY view_name").fetchall()
        return [r[0] for r in rows if r[0] not in TABLES and r[0] not in DATASET_TABLES]

    # Analyses (each a thin wrapper over SQL views; see the modules named).
    def tree(self, op: str | None = None, module: str | None = None, depth: int | None = None,
             trace_id: str | None = None) -> pl.DataFrame:
        """Call tree with GPU time per node (tracesql.tree.tree: the parameters are documented there)."""
        from .tree import tree

        return tree(self, op=op, module=module, depth=depth, trace_id=trace_id)

    def categories(self, ruleset: str = "default", unmatched: bool = False, trace_id: str | None = None,
                   by: str = "category") -> pl.DataFrame:
        """GPU time per kernel category (tracesql.categories.categories: the parameters are documented there)."""
        from .categories import categories

        return categories(self, ruleset=ruleset, unmatched=unmatched, trace_id=trace_id, by=by)

    def kernel_summary(self, trace: str | None = None, step: int | str | None = None, sort: str = "total",
                       top: int | None = None, verbose: bool = False, by_category: bool = False) -> pl.DataFrame:
        """Per-kernel-name statistics (tracesql.analysis.kernel_summary: the parameters are documented there)."""
        from .analysis import kernel_summary

        return kernel_summary(self, trace=trace, step=step, sort=sort, top=top, verbose=verbose,
                              by_category=by_category)

    def timeline(self, trace: str | None = None, by_step: bool = False, pooled_only: bool = False,
                 style: str = "native") -> pl.DataFrame:
        """GPU time breakdown per trace and device (tracesql.analysis.timeline: the parameters are documented
        there)."""
        from .analysis import timeline

        return timeline(self, trace=trace, by_step=by_step, pooled_only=pooled_only, style=style)

    def perf(self, trace: str | None = None, arch: str | None = None, by: str = "args", bound: str | None = None,
             below_pct: float | None = None, micros: bool = True) -> pl.DataFrame:
        """FLOPs, bytes, achieved TFLOP/s and TB/s and the roofline of the modelled ops (tracesql.perf.perf: the
        parameters are documented there)."""
        from .perf import perf

        return perf(self, trace=trace, arch=arch, by=by, bound=bound, below_pct=below_pct, micros=micros)

    def gaps(self, trace: str | None = None, what: str = "streams", hist_min: float = 0.0,
             hist_max: float | None = None, bins: int = 20, sort: str = "count", top: int | None = None,
             verbose: bool = False, kernel_wait_us: float = 30.0, step: int | str | None = None) -> pl.DataFrame:
        """Idle gaps between GPU events (tracesql.analysis.gaps: the parameters are documented there)."""
        from .analysis import gaps

        return gaps(self, trace=trace, what=what, hist_min=hist_min, hist_max=hist_max, bins=bins, sort=sort,
                    top=top, verbose=verbose, kernel_wait_us=kernel_wait_us, step=step)

    # Multi-rank jobs (tracesql.comm over sql/comm/).
    def collectives(self, job: int | None = None, by: str = "collective", top: int | None = None) -> pl.DataFrame:
        """Collectives matched across the ranks of a job (tracesql.comm.collectives: the parameters are documented
        there)."""
        from .comm import collectives

        return collectives(self, job=job, by=by, top=top)

    def ranks(self, job: int | None = None) -> pl.DataFrame:
        """The ranks of a job side by side (tracesql.comm.ranks)."""
        from .comm import ranks

        return ranks(self, job=job)

    def diff(self, base: str, variant: str, level: str | None = None) -> pl.DataFrame | dict[str, pl.DataFrame]:
        """The trace ``variant`` compared with the trace ``base`` of this dataset, one level or (level None) a dict
        of every level (tracesql.diff.diff: the parameters and columns are documented there). Either may also be
        ``DATASET[:TRACE]``, a trace of another dataset (tracesql.diff.compare; the other is then a trace of
        this dataset)."""
        from .diff import compare, diff, is_spec

        if is_spec(base) or is_spec(variant):
            b, v = (x if is_spec(x) else f"{self.path}:{x}" for x in (base, variant))
            return compare(b, v, level=level)
        return diff(self, base, variant, level=level)

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
        if self._scratch is not None:  # the private copy of the views made by _open_traces
            self._scratch.unlink(missing_ok=True)
            Path(f"{self._scratch}.wal").unlink(missing_ok=True)
            self._scratch = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open(path, threads: int | None = None,  # noqa: A001 - mirrors tracesql.open(DATASET)
         trace_ids: list[str] | None = None, also: list[tuple[str | Path, str, str]] | None = None) -> Dataset:
    """Open a dataset. ``trace_ids``: only these traces, without reading or writing the dataset's catalog (cheap
    whatever the dataset's size: for per-trace tasks of a batch job). ``also``: (other dataset, trace_id, as_id)
    triples, traces of other datasets opened beside them, each under the trace_id ``as_id`` (two datasets
    compared in one connection: tracesql.diff)."""
    return Dataset(path, threads=threads, trace_ids=trace_ids, also=also)
