"""Command line: `tracesql ingest|query|shell|tables ...` (analysis commands register themselves below)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys

import duckdb

from . import cmd_analysis, cmd_categories, cmd_tree
from .errors import DatasetError, TraceError

# Modules that add subcommands: each defines register(subparsers).
COMMAND_MODULES = [cmd_tree, cmd_categories, cmd_analysis]

# Exit statuses (listed in `tracesql --help`).
EXIT_OK = 0
EXIT_FAILED = 1  # a trace, dataset, rule file or query failed; one line on stderr says why
EXIT_USAGE = 2  # bad command line (argparse uses 2 too)
EXIT_INTERRUPTED = 130

EPILOG = f"""exit status: {EXIT_OK} success; {EXIT_FAILED} a trace, dataset, rule file or query failed (one line
'tracesql: error: ...' on stderr); {EXIT_USAGE} bad command line; {EXIT_INTERRUPTED} interrupted."""


def _fail(msg: str, code: int = EXIT_USAGE) -> int:
    print(f"tracesql: error: {msg}", file=sys.stderr)
    return code


def _first_line(e: BaseException) -> str:
    """The first line of an exception's message (DuckDB's messages go on with context lines)."""
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__


# ---- output formatting ------------------------------------------------------------------------------

def format_table(df, max_rows: int = 200, float_digits: int = 3) -> str:
    """Plain aligned text table of a polars DataFrame."""
    cols = df.columns
    shown = df.head(max_rows)
    cells = []
    for row in shown.iter_rows():
        out = []
        for v in row:
            if v is None:
                out.append("")
            elif isinstance(v, float):
                out.append(f"{v:,.{float_digits}f}")
            elif isinstance(v, int) and not isinstance(v, bool):
                out.append(f"{v:,}")
            else:
                s = str(v).replace("\n", " ")
                out.append(s if len(s) <= 120 else s[:117] + "...")
        cells.append(out)
    numeric = [dt.is_numeric() for dt in df.dtypes]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(cols)]
    lines = [" | ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cols, widths, numeric, strict=True)),
             "-+-".join("-" * w for w in widths)]
    for r in cells:
        lines.append(" | ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(r, widths, numeric, strict=True)))
    if df.height > max_rows:
        lines.append(f"... {df.height - max_rows:,} more rows ({df.height:,} in all; use --format csv for all)")
    return "\n".join(lines)


def write_frame(df, fmt: str, output: str | None) -> None:
    if fmt == "table":
        text = format_table(df, max_rows=10**9 if output else 200) + "\n"
    elif fmt == "csv":
        text = df.write_csv()
    elif fmt == "json":
        text = df.write_json() + "\n"
    elif fmt == "parquet":
        if not output:
            raise ValueError("--format parquet needs --output FILE")
        df.write_parquet(output)
        return
    else:
        raise ValueError(f"unknown format {fmt}")
    if output:
        with open(output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


# ---- commands -----------------------------------------------------------------------------------

def cmd_ingest(args) -> int:
    from .ingest import ingest

    failed = 0
    totals = {"ingested": 0, "duplicate": 0, "failed": 0}

    def report(r):
        nonlocal failed
        totals[r.status] += 1
        if r.status == "failed":
            failed += 1
            print(r.summary_line(), file=sys.stderr)
        else:  # --quiet hides the progress bar only; the result lines stay
            print(r.summary_line())

    missing = [p for p in args.paths if not os.path.exists(p)]
    for p in missing:
        print(f"tracesql: error: {p}: no such file or directory", file=sys.stderr)
    rules = []
    if args.rules:  # check the rule files before any work, so a bad file costs nothing
        from .categories import read_rules

        for r in args.rules:
            read_rules(r)
            rules.append(r)
    paths = [p for p in args.paths if os.path.exists(p)]
    results = ingest(paths, out=args.out, salvage=args.salvage, quiet=args.quiet, on_result=report) if paths else []
    if not results and not missing:
        return _fail("no trace files (*.json, *.json.gz) found in " + ", ".join(args.paths))
    if len(results) > 1 or missing:
        print(f"{len(results) + len(missing)} files: {totals['ingested']} ingested, {totals['duplicate']} already "
              f"present, {totals['failed'] + len(missing)} failed; dataset {args.out}")
    if rules and os.path.isdir(os.path.join(args.out, "traces")):
        from .categories import add_rules

        for r in rules:
            print(f"rules {r} -> {add_rules(args.out, r)}")
    return EXIT_FAILED if failed or missing else EXIT_OK


def _open(path):
    from .dataset import Dataset

    return Dataset(path)


def cmd_query(args) -> int:
    ds = _open(args.dataset)
    try:
        if args.format == "parquet":
            if not args.output:
                return _fail("--format parquet needs --output FILE")
            ds.con.execute(f"COPY ({args.sql}) TO '{args.output}' (FORMAT parquet)")
            return 0
        df = ds.sql(args.sql)
    except duckdb.Error as e:
        return _fail(_first_line(e), EXIT_FAILED)
    write_frame(df, args.format, args.output)
    return 0


def cmd_tables(args) -> int:
    import polars as pl

    ds = _open(args.dataset)
    rows = []
    for t in ds.tables():
        rows.append((t, "table", ds.con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]))
    for v in ds.views():
        rows.append((v, "view", None))
    write_frame(pl.DataFrame(rows, schema=["name", "kind", "rows"], orient="row"), args.format, None)
    return 0


def cmd_catalog(args) -> int:
    from .dataset import write_catalog, write_init_sql

    _open(args.dataset).close()  # validates the dataset
    print(write_init_sql(args.dataset))
    print(write_catalog(args.dataset))
    return 0


def cmd_shell(args) -> int:
    from .dataset import write_init_sql

    ds_path = args.dataset
    _open(ds_path).close()  # validates the dataset
    write_init_sql(ds_path)
    exe = shutil.which("duckdb")
    init = os.path.join(ds_path, "init.sql")
    if exe:
        os.execv(exe, [exe, "-init", init])
    return _python_shell(ds_path)


def _python_shell(ds_path) -> int:
    """A minimal SQL prompt for machines without the duckdb CLI: statements end with ';'."""
    ds = _open(ds_path)
    print(f"tracesql shell on {ds_path} (duckdb {duckdb.__version__}). Tables: {', '.join(ds.tables())}.")
    print("End statements with ';'. .tables lists tables and views; .quit or Ctrl-D exits.")
    buf = ""
    while True:
        try:
            line = input("tracesql> " if not buf else "     ...> ")
        except EOFError:
            print()
            return 0
        if not buf and line.strip() in (".quit", ".exit"):
            return 0
        if not buf and line.strip() == ".tables":
            print("\n".join(ds.tables() + ds.views()))
            continue
        buf += line + "\n"
        if buf.strip().endswith(";"):
            try:
                df = ds.sql(buf)
                print(format_table(df))
            except duckdb.Error as e:
                print("Error:", str(e).splitlines()[0])
            buf = ""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tracesql", description="SQL analytics over GPU profiler traces.", epilog=EPILOG)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("ingest", help="stream trace files into a dataset of Parquet tables")
    s.add_argument("paths", nargs="+", metavar="PATH", help="trace files (.json, .json.gz) or directories of them")
    s.add_argument("--out", "-o", default="tracesql_data", metavar="DATASET", help="dataset directory "
                   "(default: ./tracesql_data)")
    s.add_argument("--salvage", action="store_true", help="keep the complete events of truncated or damaged "
                   "files; every skipped event is recorded in ingest_issues")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    s.add_argument("--rules", action="append", metavar="CSV", help="add a user category rule file to the dataset "
                   "(DATASET/rules/; see 'Kernel and op categories'); may be repeated")
    s.set_defaults(func=cmd_ingest)

    s = sub.add_parser("query", help="run SQL against a dataset")
    s.add_argument("dataset", metavar="DATASET")
    s.add_argument("sql", metavar="SQL")
    s.add_argument("--format", "-f", choices=["table", "csv", "json", "parquet"], default="table")
    s.add_argument("--output", "-o", metavar="FILE")
    s.set_defaults(func=cmd_query)

    s = sub.add_parser("tables", help="list the tables and views of a dataset")
    s.add_argument("dataset", metavar="DATASET")
    s.add_argument("--format", "-f", choices=["table", "csv", "json"], default="table")
    s.set_defaults(func=cmd_tables)

    s = sub.add_parser("catalog", help="write DATASET/catalog.duckdb and DATASET/init.sql (views with absolute "
                       "paths) for use from a plain duckdb shell")
    s.add_argument("dataset", metavar="DATASET")
    s.set_defaults(func=cmd_catalog)

    s = sub.add_parser("shell", help="interactive SQL shell (the duckdb CLI when installed)")
    s.add_argument("dataset", metavar="DATASET")
    s.set_defaults(func=cmd_shell)

    for mod in COMMAND_MODULES:
        mod.register(sub)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (TraceError, DatasetError) as e:
        return _fail(str(e), EXIT_FAILED)
    except (duckdb.Error, RuntimeError) as e:  # e.g. a view that fails on this dataset, inside any command
        return _fail(_first_line(e), EXIT_FAILED)
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)


if __name__ == "__main__":
    sys.exit(main())
