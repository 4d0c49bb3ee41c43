"""What every command shares: opening the dataset, the options that mean one thing in every command, and printing
a frame."""
from __future__ import annotations


def _open(path):
    """The dataset of a command (tracesql.Dataset), closed by the command."""
    from tracesql.api.dataset import Dataset

    return Dataset(path)


def nonneg_int(text: str) -> int:
    import argparse

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {v}")
    return v


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
