"""Command line: `tracesql ingest|query|shell|tables ...` (analysis commands register themselves below)."""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys

import duckdb

from tracesql.cli import analysis as cmd_analysis
from tracesql.cli import categories as cmd_categories
from tracesql.cli import comm as cmd_comm
from tracesql.cli import diff as cmd_diff
from tracesql.cli import export as cmd_export
from tracesql.cli import replay as cmd_replay
from tracesql.cli import tree as cmd_tree
from tracesql.cli import twins as cmd_twins
from tracesql.cli.common import _open, _wrapped, jobs_number
from tracesql.errors import DatasetError, EmptySelection, TraceError, UsageError
from tracesql.escape import terminal_text
from tracesql.render.output import DATASET_HELP, format_table, terminal_width, write_frame

# Modules that add subcommands: each defines register(subparsers).
COMMAND_MODULES = [cmd_tree, cmd_categories, cmd_analysis, cmd_comm, cmd_diff, cmd_twins, cmd_replay, cmd_export]

# Exit statuses (listed in `tracesql --help`).
EXIT_OK = 0
EXIT_FAILED = 1  # bad input: a trace, dataset, rule file or query failed, an empty selection; one line says why
EXIT_USAGE = 2  # bad command line (argparse uses 2 too), found while parsing or after
EXIT_INTERRUPTED = 130

EPILOG = f"""exit status: {EXIT_OK} success; {EXIT_FAILED} a trace, dataset, rule file or query failed (one line
'tracesql: error: ...' on stderr); {EXIT_USAGE} bad command line; {EXIT_INTERRUPTED} interrupted (Ctrl-C); 3 (diff
--fail-if-slower) the variant is slower."""


def _fail(msg: str, code: int = EXIT_USAGE) -> int:
    """The one error line: names and paths in ``msg`` shown escaped (tracesql.escape.terminal_text), so that a file
    named with a newline or an escape sequence cannot split the line or drive the terminal."""
    print(f"tracesql: error: {terminal_text(msg)}", file=sys.stderr)
    return code


def _first_line(e: BaseException) -> str:
    """The first line of an exception's message (DuckDB's messages go on with context lines)."""
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__


# ---- commands -----------------------------------------------------------------------------------

def cmd_ingest(args) -> int:
    from tracesql.ingest import ingest

    failed = 0
    totals = {"ingested": 0, "duplicate": 0, "failed": 0}

    def report(r):
        nonlocal failed
        totals[r.status] += 1
        if r.status == "failed":
            failed += 1
            print(terminal_text(r.summary_line()), file=sys.stderr)
        else:  # --quiet hides the progress bar only; the results stay, wrapped to the terminal's width
            print(_wrapped(terminal_text(r.summary_line())))

    rules = []
    if args.rules:  # check the rule files before any work, so a bad file costs nothing
        from tracesql.api.categories import read_rules

        for r in args.rules:
            read_rules(r)
            rules.append(r)
    command = "tracesql " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    # a path that does not exist is a failed file of the run (recorded with it), reported in its place
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    if (args.scheduler or args.scheduler_file) and args.executor != "dask":
        raise UsageError("--scheduler and --scheduler-file go with --executor dask")
    twin_file, kind = (args.eager, "eager") if args.eager else (args.capture, "capture")
    results = ingest(args.paths + ([twin_file] if twin_file else []), out=args.out, salvage=args.salvage,
                     quiet=args.quiet, on_result=report, command=command, jobs=args.jobs, executor=args.executor,
                     scheduler=args.scheduler, scheduler_file=args.scheduler_file)
    if not results:
        return _fail("no trace files (*.json, *.json.gz, *.xplane.pb) found in " + ", ".join(args.paths), EXIT_FAILED)
    if len(results) > 1:
        print(_wrapped(f"{len(results)} files: {totals['ingested']} ingested, {totals['duplicate']} "
                       f"already present, {totals['failed']} failed; dataset {terminal_text(args.out)}"))
    if twin_file:
        failed += _pair_twin(args.out, results, twin_file, kind)
    if rules and os.path.isdir(os.path.join(args.out, "traces")):
        from tracesql.api.categories import add_rules

        for r in rules:
            print(terminal_text(f"rules {r} -> {add_rules(args.out, r)}"))
    return EXIT_FAILED if failed else EXIT_OK


def _pair_twin(dataset: str, results, twin_file: str, kind: str) -> int:
    """After `ingest --eager/--capture FILE`: pair every other trace of the run with FILE's trace (tracesql.api.twins).
    Returns 1 when FILE was not ingested (nothing is paired; its error is printed with the other results)."""
    from tracesql.api.twins import pair

    twin = next((r for r in results if r.path == twin_file or os.path.abspath(r.path) == os.path.abspath(twin_file)),
                None)
    if twin is None or twin.trace_id is None:
        print(terminal_text(f"tracesql: error: {twin_file}: not in the dataset; no trace was paired with it"),
              file=sys.stderr)
        return 1
    for r in results:
        if r is not twin and r.trace_id is not None and r.trace_id != twin.trace_id:
            pair(dataset, r.trace_id, twin.trace_id, kind)
            print(terminal_text(f"{os.path.basename(r.path)}: paired with {os.path.basename(twin_file)} as its "
                                f"{kind} twin"))
    return 0


def cmd_query(args) -> int:
    sql = args.sql.strip().rstrip(";").strip()
    if not sql:
        raise UsageError("the SQL statement is empty")
    if args.format == "parquet" and not args.output:
        raise UsageError("--format parquet needs --output FILE")
    ds = _open(args.dataset)
    try:
        if args.format == "parquet":
            out = args.output.replace("'", "''")
            ds.con.execute(f"COPY ({sql}) TO '{out}' (FORMAT parquet)")
            return 0
        df = ds.sql(sql)
    except duckdb.OutOfMemoryException as e:
        return _out_of_memory(e)
    except duckdb.Error as e:
        return _fail(_first_line(e), EXIT_FAILED)
    finally:
        ds.close()
    if df is None:  # a statement without a result (SET, CREATE TEMP VIEW ...)
        return 0
    write_frame(df, args.format, args.output, wide=args.wide)
    return 0


def cmd_traces(args) -> int:
    """One row per trace: what `--trace` accepts and what the dataset holds."""
    ds = _open(args.dataset)
    try:
        df = ds.sql("""SELECT t.trace_id, l.label, t.file_name AS file, t.rank, t.format,
                   coalesce(json_extract_string(t.device_properties, '$[0].name'), '') AS gpu, t.device_count AS gpus,
                   t.events_read AS events, (t.row_counts ->> 'kernels')::BIGINT AS gpu_events,
                   g.span_ns / 1e3 AS gpu_span_us, t.ingest_seconds AS ingest_s, t.events_skipped AS issues,
                   t.truncated, t.source_path
                   FROM traces t JOIN trace_labels l USING (trace_id)
                   LEFT JOIN (SELECT trace_id, span_ns FROM gpu_timeline WHERE pooled) g USING (trace_id)
                   ORDER BY l.label, t.trace_id""")
    finally:
        ds.close()
    if df.height == 0:
        raise EmptySelection(f"no traces in {args.dataset}")
    write_frame(df, args.format, args.output, wide=args.wide)
    return 0


def cmd_runs(args) -> int:
    """The record of ingest runs: one row per run (newest first), or with --files the files of one run (the
    latest unless --run names one), or with --failed every failed file of every run."""
    ds = _open(args.dataset)
    try:
        if args.failed:
            df = ds.sql("""SELECT f.run_id, f.path, f.error FROM ingest_run_files f
                           JOIN ingest_runs r USING (run_id) WHERE f.status = 'failed' ORDER BY f.run_id DESC""")
            what = "no failed files"
        elif args.files or args.run:
            run = args.run or ds.con.execute("SELECT max(run_id) FROM ingest_runs").fetchall()[0][0]
            df = ds.sql("""SELECT path, status, trace_id, json_bytes / 1e6 AS json_mb, seconds, error
                           FROM ingest_run_files WHERE run_id = $run""", {"run": run})
            what = f"no run {run}" if args.run else "no runs"
        else:
            df = ds.sql("""SELECT run_id, status, strftime(started_at, '%Y-%m-%d %H:%M:%S') AS started_utc,
                                  round(duration_s, 2) AS duration_s, files_seen,
                                  ingested, already_present, failed, host, command, json_bytes / 1e6 AS json_mb
                           FROM ingest_runs ORDER BY run_id DESC""")
            what = "no runs"
    finally:
        ds.close()
    if df.height == 0:
        raise EmptySelection(f"{what} in {args.dataset}")
    write_frame(df, args.format, args.output, wide=args.wide)
    return 0


def cmd_tables(args) -> int:
    import polars as pl

    ds = _open(args.dataset)
    try:
        rows = []
        for t in ds.tables():
            rows.append((t, "table", ds.con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]))
        for v in ds.views():
            if args.all or not v.startswith("_"):
                rows.append((v, "view", None))
    finally:
        ds.close()
    df = pl.DataFrame(rows, schema={"name": pl.String, "kind": pl.String, "rows": pl.Int64}, orient="row")
    write_frame(df, args.format, args.output, wide=args.wide)
    return 0


def cmd_catalog(args) -> int:
    from pathlib import Path

    from tracesql.store.dataset import write_catalog, write_init_sql
    from tracesql.store.lock import active

    _open(args.dataset).close()  # validates the dataset
    with active(Path(args.dataset)):  # the dataset is not removed under it
        print(write_init_sql(args.dataset))
        print(write_catalog(args.dataset))
    return 0


# The oldest duckdb CLI that reads DATASET/init.sql and DATASET/catalog.duckdb (tracesql.store.dataset).
MIN_DUCKDB_CLI = (1, 4, 0)


def duckdb_cli_version(exe: str) -> tuple[int, ...] | None:
    """The version of a duckdb CLI (`duckdb --version` prints `v1.5.6 (Variegata) ...`), None when unknown."""
    import re
    import subprocess

    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"\s*v?(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in m.groups()) if m else None


def cmd_shell(args) -> int:
    import signal

    from tracesql.store.dataset import write_init_sql

    ds_path = args.dataset
    # before any thread starts (see _python_shell); exec hands the duckdb CLI a clean mask
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        _open(ds_path).close()  # validates the dataset
    except BaseException:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        raise
    exe = None if args.builtin else shutil.which("duckdb")
    if exe:
        init = _shell_init_sql(ds_path, write_init_sql)
        version = duckdb_cli_version(exe)
        if version is not None and version >= MIN_DUCKDB_CLI:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            os.execv(exe, [exe, "-init", str(init)])
        found = "an unknown version" if version is None else "v" + ".".join(map(str, version))
        print(f"tracesql: {exe} is {found}; the dataset needs the duckdb CLI "
              f"v{'.'.join(map(str, MIN_DUCKDB_CLI))} or newer (pip install duckdb-cli); using the built-in prompt",
              file=sys.stderr)
    return _python_shell(ds_path)


def _shell_init_sql(ds_path, write_init_sql) -> str:
    """DATASET/init.sql for the duckdb CLI: rewritten only when it is not current; for a dataset that cannot be
    written, a copy in a temporary file."""
    import tempfile
    from pathlib import Path

    from tracesql.store.dataset import init_sql_text

    try:
        return str(write_init_sql(ds_path))
    except OSError:
        fd, path = tempfile.mkstemp(prefix="tracesql-init-", suffix=".sql")
        with os.fdopen(fd, "w") as f:
            f.write(init_sql_text(Path(ds_path)))
        return path


def _history_file() -> str | None:
    from tracesql.store.config import cache_dir

    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(cache_dir() / "shell_history")


def _python_shell(ds_path) -> int:
    """A small SQL prompt for machines without a usable duckdb CLI: statements end with ';'. Line editing and
    history (kept in the cache directory) come from readline where Python has it; Ctrl-C drops the line being
    typed (typed during a query, it drops the next one), Ctrl-D or .quit leaves."""
    import signal
    try:
        import readline
    except ImportError:  # e.g. Windows
        readline = None  # type: ignore[assignment]
    hist = _history_file() if readline is not None else None
    if readline is not None and hist:
        try:
            readline.read_history_file(hist)
        except OSError:
            pass
        readline.set_history_length(1000)
    # Threads (DuckDB's, polars's) inherit this thread's signal mask when they start: Ctrl-C stays blocked here
    # except while the prompt waits for a line, so that it always reaches this thread there and drops the line.
    # While it waits, a timer interrupts the wait ten times a second: readline looks at pending signals only
    # when its wait is interrupted, and a Ctrl-C that came just before the wait began would else wait for a key.
    waking = {signal.SIGINT, signal.SIGALRM}
    signal.pthread_sigmask(signal.SIG_BLOCK, waking)
    signal.signal(signal.SIGALRM, lambda *_: None)
    ds = _open(ds_path)
    print(f"tracesql shell on {ds_path} (duckdb {duckdb.__version__}). Tables: {', '.join(ds.tables())}.")
    print("End statements with ';'. .tables lists tables and views; Ctrl-C cancels the line; .quit or Ctrl-D exits.")
    buf = ""
    try:
        while True:
            try:  # DuckDB may leave its own Ctrl-C handler after a query: Python's, for the prompt
                signal.signal(signal.SIGINT, signal.default_int_handler)
                signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, waking)
                try:
                    line = input("tracesql> " if not buf else "     ...> ")
                finally:
                    signal.pthread_sigmask(signal.SIG_BLOCK, waking)
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except EOFError:
                print()
                return 0
            except KeyboardInterrupt:
                print("^C" if not buf else "^C (statement dropped)")
                buf = ""
                continue
            if not buf and line.strip() in (".quit", ".exit"):
                return 0
            if not buf and line.strip() == ".tables":
                print("\n".join(ds.tables() + [v for v in ds.views() if not v.startswith("_")]))
                continue
            buf += line + "\n"
            if buf.strip().endswith(";"):
                try:
                    df = ds.sql(buf)
                    print(format_table(df, width=terminal_width()))
                except KeyboardInterrupt:
                    print("interrupted")
                except (duckdb.Error, RuntimeError) as e:
                    print("Error:", _first_line(e))
                buf = ""
    finally:
        if readline is not None and hist:
            try:
                readline.write_history_file(hist)
            except OSError:
                pass
        ds.close()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, waking)


class _DeprecatedAlias(argparse.Action):
    """A former spelling of an option, kept working but left out of --help and the docs: it stores its value as the
    current spelling (`use`) does, with a warning on stderr."""

    def __init__(self, option_strings, dest, use: str, **kw):
        kw.setdefault("help", argparse.SUPPRESS)
        kw.setdefault("default", argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kw)
        self.use = use

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"tracesql: warning: {parser.prog} {option_string} is deprecated; use {self.use}", file=sys.stderr)
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    """A command's parser: options are never abbreviated (`tree --trace` is not `--trace-id`)."""

    def __init__(self, **kw):
        kw.setdefault("allow_abbrev", False)
        super().__init__(**kw)

    def error(self, message: str):
        """The usage, then one error line: what the command line held shown escaped (an argument with a newline
        or an escape sequence stays on the line)."""
        super().error(terminal_text(message))


def build_parser() -> argparse.ArgumentParser:
    from tracesql.cli.common import _out_args
    from tracesql.version import __version__

    p = _Parser(prog="tracesql", description="SQL analytics over GPU profiler traces.", epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"tracesql {__version__} (duckdb {duckdb.__version__})",
                   help="print the version of tracesql and of DuckDB, then exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("ingest", help="stream trace files into a dataset of Parquet tables")
    s.add_argument("paths", nargs="+", metavar="PATH", help="trace files (.json, .json.gz, JAX .xplane.pb), "
                   "directories of them, or quoted glob patterns")
    s.add_argument("--out", default="tracesql_data", metavar="DIR", help="the dataset folder, created when new or "
                   "empty, added to when a dataset (default: ./tracesql_data)")
    # -o is an output FILE in every other command; ingest's former `-o DATASET` still works, with a warning
    s.add_argument("-o", dest="out", action=_DeprecatedAlias, use="--out DIR", metavar="DIR")
    s.add_argument("--salvage", action="store_true", help="keep the complete events of truncated or damaged "
                   "files; every skipped event is recorded in ingest_issues")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    s.add_argument("--jobs", "-j", type=jobs_number,
                   metavar="N", help="files ingested in parallel by N processes (default: "
                   "one per core, at most one per file, per 32 MB of files and per GiB of free memory)")
    s.add_argument("--executor", choices=("processes", "dask"), default="processes",
                   help="where the files go: processes on this machine (default) or a Dask cluster (the scheduler "
                   "of --scheduler, --scheduler-file or DASK_SCHEDULER_ADDRESS, else a local cluster of --jobs "
                   "workers; pip install 'tracesql[dask]')")
    s.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://head:8786")
    s.add_argument("--scheduler-file", metavar="FILE", help="Dask scheduler file (dask scheduler "
                   "--scheduler-file FILE, as on SLURM)")
    s.add_argument("--rules", action="append", metavar="CSV", help="add a user category rule file to the dataset "
                   "(DATASET/rules/; see 'Kernel and op categories'); may be repeated")
    twin = s.add_mutually_exclusive_group()
    twin.add_argument("--eager", metavar="FILE", help="ingest FILE too, as the eager twin of every other trace: an "
                      "eager run of the same code, whose ops name the kernels the others' CUDA/HIP graphs replay "
                      "(tracesql twin)")
    twin.add_argument("--capture", metavar="FILE", help="ingest FILE too, as the capture twin of every other trace: "
                      "the trace that recorded their graphs' capture")
    s.set_defaults(func=cmd_ingest)

    s = sub.add_parser("query", help="run SQL against a dataset")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    s.add_argument("sql", metavar="SQL", help="one SQL statement over the tables and views (docs/schema.md)")
    _out_args(s)
    s.set_defaults(func=cmd_query)

    s = sub.add_parser("traces", help="list the traces of a dataset: trace id, label, file, rank, GPU, events, span, "
                       "ingest time, issues")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _out_args(s)
    s.set_defaults(func=cmd_traces)

    s = sub.add_parser("runs", help="the record of ingest runs on a dataset: when, what was found, ingested, already "
                       "present and failed; the files of a run")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    s.add_argument("--run", metavar="RUN_ID", help="the files of this run")
    s.add_argument("--files", action="store_true", help="the files of the latest run")
    s.add_argument("--failed", action="store_true", help="every failed file of every run, with its error")
    _out_args(s)
    s.set_defaults(func=cmd_runs)

    s = sub.add_parser("tables", help="list the tables (with row counts) and views of a dataset")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    s.add_argument("--all", "-a", action="store_true", help="the helper views (names starting with _) too")
    _out_args(s, formats=("table", "csv", "json"))
    s.set_defaults(func=cmd_tables)

    s = sub.add_parser("catalog", help="write DATASET/catalog.duckdb and DATASET/init.sql (views with absolute "
                       "paths) for use from a plain duckdb shell")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    s.set_defaults(func=cmd_catalog)

    s = sub.add_parser("shell", help="interactive SQL shell (the duckdb CLI when installed)")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    s.add_argument("--builtin", action="store_true", help="the built-in SQL prompt even when the duckdb CLI is "
                   "installed")
    s.set_defaults(func=cmd_shell)

    for mod in COMMAND_MODULES:
        mod.register(sub)
    return p


def _interrupted() -> int:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not interrupt the message
    print("tracesql: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _os_error(e: OSError) -> str:
    """The path and what went wrong. An OSError raised by polars or DuckDB has no strerror: its message names the
    path."""
    if e.strerror:
        return (f"{e.filename}: " if e.filename else "") + e.strerror
    msg = _first_line(e) if str(e).strip() else type(e).__name__
    return f"{e.filename}: {msg}" if e.filename and str(e.filename) not in msg else msg


def _out_of_memory(e: BaseException) -> int:
    from tracesql.store.config import default_memory_limit

    return _fail(f"out of memory (DuckDB's memory limit is {default_memory_limit()}; set TRACESQL_MEMORY_LIMIT "
                 f"to change it): {_first_line(e)}", EXIT_FAILED)


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except KeyboardInterrupt:
        return _interrupted()
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return _interrupted()
    except duckdb.InterruptException:
        return _interrupted()
    except UsageError as e:
        return _fail(str(e), EXIT_USAGE)
    except EmptySelection as e:
        return _fail(f"{e}; nothing to show", EXIT_FAILED)
    except (TraceError, DatasetError) as e:
        return _fail(str(e), EXIT_FAILED)
    except BrokenPipeError:
        try:  # the reader went away (e.g. `| head`): no message, and none at exit either
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return EXIT_OK
    except OSError as e:  # an output file or folder that cannot be written
        return _fail(_os_error(e), EXIT_FAILED)
    except (duckdb.OutOfMemoryException, MemoryError) as e:
        return _out_of_memory(e)
    except (duckdb.Error, RuntimeError, ValueError) as e:  # e.g. a view that fails on this dataset, a bad value
        msg = _first_line(e)
        if msg.startswith("report failed: Out of Memory Error"):  # report() wraps DuckDB's errors
            return _out_of_memory(e)
        if "interrupted" in msg.lower():
            return _interrupted()
        return _fail(msg, EXIT_FAILED)


if __name__ == "__main__":
    sys.exit(main())
