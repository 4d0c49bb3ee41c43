"""What every command shares: opening the dataset, the options that mean one thing in every command, and printing
a frame."""
from __future__ import annotations


def _open(path):
    """The dataset of a command (tracesql.Dataset), closed by the command."""
    from tracesql.api.dataset import Dataset

    return Dataset(path)


# The options' parsers: a value out of bounds is a usage error (exit status 2) naming the option, before any work.
# Bounds on what an option can make a command do (docs/cli.md, "Bounds"):
MAX_JOBS = 1_024  # --jobs: processes or cluster tasks at once
MAX_WIDTH = 100_000  # tree --width: characters per line


def int_option(lo: int | None = None, hi: int | None = None, what: str = ""):
    """An argparse type: a whole number from ``lo`` to ``hi`` (either may be None: no bound); ``what`` says why the
    upper bound is there."""
    import argparse

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if lo is not None and v < lo:
            raise argparse.ArgumentTypeError(f"must be {lo} or more, not {v}")
        if hi is not None and v > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:,}{what}, not {v:,}")
        return v
    return parse


nonneg_int = int_option(0)
jobs_number = int_option(hi=MAX_JOBS)  # --jobs of every command (0 or less is said by the command)


def float_option(lo: float | None = None, lo_open: bool = False, hi: float | None = None):
    """An argparse type: a finite number (nan and inf are refused everywhere: no comparison with them means
    anything), at least ``lo`` (above it with ``lo_open``) and at most ``hi`` when given."""
    import argparse
    import math

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
        if lo is not None and (v <= lo if lo_open else v < lo):
            raise argparse.ArgumentTypeError(f"must be {'above' if lo_open else 'at least'} {lo:g}, not {v:g}")
        if hi is not None and v > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:g}, not {v:g}")
        return v
    return parse


finite_float = float_option()
# A time in µs (histogram bounds, cut-offs): within ±1e15 µs (31 years; a trace's int64 ns reach 9.2e15 µs), so
# that bin widths and comparisons stay finite.
MAX_US = 1e15
time_us = float_option(-MAX_US, hi=MAX_US)
nonneg_time_us = float_option(0.0, hi=MAX_US)


# Option names mean one thing in every command (tests/test_cli_options.py checks the parsers): -o/--output a FILE
# the printed output goes to, --out DIR a folder of files, -j/--jobs the parallelism, --job the job of a
# multi-rank dataset (no short form), -t/--trace one trace, --arch the GPU of the roofline.

# --arch of the native compute model (perf, summary, report): tracesql.api.perf._set_device reads it
ARCH_NATIVE = "a name of the device table (e.g. 'H100 SXM', 'MI300X') or a CSV spec file with its columns"


def _output_arg(s) -> None:
    """-o/--output FILE: what would be printed goes to FILE."""
    s.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout (a table then has every "
                   "row and column)")


def _arch_arg(s, help: str) -> None:
    """--arch NAME|FILE: the GPU of the roofline instead of the trace's deviceProperties (help says how)."""
    s.add_argument("--arch", metavar="NAME|FILE", help=help)


def _out_args(s, formats=("table", "csv", "json", "parquet")) -> None:
    """--format, --output and --wide: the same in every command that prints a table."""
    s.add_argument("--format", "-f", choices=list(formats), default="table",
                   help="table: aligned text fitted to the terminal (the default); " + ", ".join(formats[1:])
                   + ": every row and column" + ("; parquet needs --output" if "parquet" in formats else ""))
    _output_arg(s)
    s.add_argument("--wide", "-w", action="store_true", help="print the table whole: no column left out, no "
                   "name shortened to fit the terminal")


def _trace_arg(s) -> None:
    s.add_argument("--trace", "-t", metavar="TRACE", help="only this trace: its trace_id or label (`tracesql traces "
                   "DATASET` lists them); an error when it names several")


def _step_arg(s, what: str = "GPU work") -> None:
    s.add_argument("--step", metavar="N", help=f"only the {what} launched in ProfilerStep#N")


def _top_arg(s, what: str) -> None:
    s.add_argument("--top", "-n", type=nonneg_int, metavar="N", help=f"only the first N {what} of each trace")


def _nonempty(df, what: str):
    from tracesql.errors import EmptySelection

    if df.height == 0:
        raise EmptySelection(what)
    return df


def emit(df, args, empty: str, important: tuple[str, ...] = ()) -> int:
    """Print or write a frame as the options say (``important``: the columns a fitted table leaves out last)."""
    from tracesql.render.output import write_frame

    _nonempty(df, empty)
    write_frame(df, args.format, args.output, wide=args.wide, important=important)
    return 0


def _wrapped(line: str) -> str:
    """A result line of ``ingest`` wrapped to the terminal's width, its continuation lines indented by four spaces
    (joining each line break and its indent with one space gives the line back)."""
    import textwrap

    from tracesql.render.output import terminal_width

    return textwrap.fill(line, width=max(terminal_width(), 40), subsequent_indent="    ", break_long_words=False,
                         break_on_hyphens=False)
