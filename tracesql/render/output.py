"""Terminal tables that fit the screen, and the writers of every command's output.

A table for a person (``--format table``, the default) fits the terminal: its width is ``$COLUMNS``, else the
detected width of the terminal, else 120. Long text (kernel names, transitions) is cut in the middle with an
ellipsis, so that different values still look different (cut_distinct), and when that is not enough the columns of
least value are left out, with one line saying which and that ``--wide`` shows everything. Machine formats (csv,
json, parquet) are written whole. The drawing is rich's.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tracesql.errors import UsageError
from tracesql.escape import terminal_text

if TYPE_CHECKING:  # polars starts threads when imported: only where a frame exists
    import polars as pl

DEFAULT_WIDTH = 120
DATASET_HELP = "the dataset directory (made by tracesql ingest)"
MAX_ROWS = 200  # rows of a table printed on stdout (all rows with --output or a machine format)
ELLIPSIS = "…"
COMFORT_TEXT = 40  # text is cut to this many characters before columns of low value are left out
MIN_TEXT = 16  # and to this many before any other column is left out
SEP = 2  # characters between two columns

# Columns left out first when a table does not fit, most dispensable first (names are matched exactly or, for an
# entry ending in '*', by prefix; an entry starting with '*' by suffix). Everything else goes last, right to left.
LOW_VALUE = [
    "window_us", "gpu_sum_us", "node_id", "parent_node_id", "*_std_us", "std_us", "std_gap_us", "min_us",
    "min_gap_us", "*_median_us", "kernel_time_min_us", "kernel_time_max_us", "calls_with_gpu", "launch_kind",
    "input_strides", "concrete_inputs", "*_exposed_pct", "comm_overlap_pct", "memory_pct", "comm_pct",
    "compute_pct", "cumulative_pct", "*_exposed_us", "launches_pct", "max_us", "busy_us", "span_us",
    "cpu_dur_max_us", "launch_delay_max_us", "input_type", "class", "event_id", "seq", "source_path", "truncated",
    "file", "format", "gpus", "ingest_s", "gpu", "command", "host", "json_mb",
]


def terminal_width() -> int:
    """$COLUMNS, else the terminal's width, else 120."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns or DEFAULT_WIDTH
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns if env else DEFAULT_WIDTH


def cut_middle(s: str, width: int) -> str:
    """``s`` at most ``width`` characters: the start and the end kept, the middle replaced by an ellipsis."""
    if len(s) <= width:
        return s
    if width <= 1:
        return ELLIPSIS[:width]
    head = (width - 1 + 1) // 2
    tail = width - 1 - head
    return s[:head] + ELLIPSIS + (s[-tail:] if tail else "")


BREAKS = " :<>,()[]{}/.-_"  # characters a name is read in parts at: a window starts after one when it can


def _common_lengths(values: list[str]) -> dict[str, int]:
    """{value: the longest common prefix it shares with any other of the distinct ``values``} (the neighbours in
    sorted order have it)."""
    vs = sorted(set(values))
    out = dict.fromkeys(vs, 0)
    for a, b in zip(vs, vs[1:], strict=False):
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        out[a], out[b] = max(out[a], n), max(out[b], n)
    return out


def _cut_at(s: str, width: int, pos: int) -> str:
    """``s`` in ``width`` characters keeping its start, then ``…`` and a window from the part of the name at
    ``pos`` (the first character that tells it from another value), then ``…`` when more follows."""
    if pos < width - 1:  # the start alone tells it apart
        return s[:width - 1] + ELLIPSIS
    head = max(1, min(width // 4, 16))
    room = width - head - 1
    if pos >= len(s) - room:  # the window reaches the end: head … tail
        return s[:head] + ELLIPSIS + s[len(s) - room:]
    room -= 1  # the closing ellipsis
    start = pos
    while start > pos - room // 3 and start > head and s[start - 1] not in BREAKS:
        start -= 1
    return s[:head] + ELLIPSIS + s[start:start + room] + ELLIPSIS


def _distinct_width(values: list[str], natural: int) -> int:
    """The narrowest width at which cut_middle keeps the different ``values`` different (their natural width at
    most)."""
    n = len(set(values))
    lo, hi = 1, max(natural, 1)
    if len({cut_middle(v, hi) for v in set(values)}) < n:  # only equal values look equal: cannot happen
        return hi
    while lo < hi:  # distinctness grows with the width in practice; the search takes the first width that has it
        mid = (lo + hi) // 2
        if len({cut_middle(v, mid) for v in set(values)}) == n:
            hi = mid
        else:
            lo = mid + 1
    return lo


def cut_distinct(values: list[str], width: int) -> dict[str, str]:
    """{value: what is shown of it in ``width`` characters} for the values of one column: cut in the middle
    (cut_middle), except where that makes two different values look the same: those keep their start and the
    part that tells them apart, a window from where they first differ from every other value of the column (after
    the longest prefix they share with any of them; their end when they are a prefix of another)."""
    out = {v: cut_middle(v, width) for v in set(values)}
    if width < 8 or len(set(out.values())) == len(out):
        return out
    seen: dict[str, int] = {}
    for cut in out.values():
        seen[cut] = seen.get(cut, 0) + 1
    clash = [v for v, cut in out.items() if seen[cut] > 1 and len(v) > width]
    if not clash:
        return out
    pre = _common_lengths(list(out))
    for v in clash:
        out[v] = _cut_at(v, width, pre[v])
    return out


def fit_line(s: str, width: int) -> str:
    return s if len(s) <= width else s[: max(width - 1, 0)] + ELLIPSIS


def _cell(v, float_digits: int) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:,.{float_digits}f}"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, list):  # a list column (a collective's missing ranks): its items, empty when it has none
        return ", ".join(_cell(x, float_digits) for x in v)
    return terminal_text(v)  # a name cannot break the line, move the cursor or reorder the text (tracesql.escape)


def _low_value_rank(name: str) -> int | None:
    for i, pat in enumerate(LOW_VALUE):
        if (pat.endswith("*") and name.startswith(pat[:-1])) or (pat.startswith("*") and name.endswith(pat[1:])) \
                or name == pat:
            return i
    return None


def _drop_order(cols: list[str], keep_first: int, keep: Sequence[str] = ()) -> list[int]:
    """Indices of the columns in the order they are left out: the LOW_VALUE ones, then the others right to left,
    then those named in ``keep``, last first (never the first ``keep_first``)."""
    def low(c: str) -> int | None:
        return None if c in keep else _low_value_rank(c)

    ranked = sorted((r, i) for i, c in enumerate(cols) if (r := low(c)) is not None and i >= keep_first)
    rest = [i for i in range(len(cols) - 1, keep_first - 1, -1) if low(cols[i]) is None and cols[i] not in keep]
    kept = [i for c in reversed(keep) for i in [j for j, x in enumerate(cols) if x == c and j >= keep_first]]
    return [i for _, i in ranked] + rest + kept


def empty_columns(df: pl.DataFrame) -> list[str]:
    """The columns without a value in any row: null, empty text or an empty list everywhere."""
    import polars as pl

    out = []
    for c, t in df.schema.items():
        col = df.get_column(c)
        if df.height == 0:
            break
        if col.null_count() == df.height or (t == pl.String and (col.fill_null("") == "").all()) or \
                (isinstance(t, pl.List) and (col.list.len().fill_null(0) == 0).all()):
            out.append(c)
    return out


def format_table(df: pl.DataFrame, max_rows: int | None = MAX_ROWS, float_digits: int = 3,
                 width: int | None = None, wide: bool = False, important: Sequence[str] = ()) -> str:
    """An aligned text table of a polars DataFrame (no trailing newline).

    ``width``: the table fits in this many characters (columns empty in every row left out, long text cut in the
    middle, then columns of least value left out, with a line naming them; the columns named in ``important`` last);
    None or ``wide``: every column whole. ``max_rows``: rows shown (None: all), with a line saying how many more
    there are."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    cols = [terminal_text(c) for c in df.columns]
    shown = df if max_rows is None else df.head(max_rows)
    cells = [[_cell(v, float_digits) for v in row] for row in shown.iter_rows()]
    numeric = [dt.is_numeric() for dt in df.dtypes]
    natural = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(cols)]
    limit = None if wide or width is None else max(width, 20)
    keep = list(range(len(cols)))
    caps = list(natural)
    title = None
    hidden: set[str] = set()  # left out and said otherwise (the title)
    if limit is not None:
        if "trace" in cols and "trace_id" in cols:  # the label identifies the trace for a person
            keep.remove(cols.index("trace_id"))
            hidden.add("trace_id")
        for c in empty_columns(df):  # nothing to read: no room taken (machine formats keep them)
            i = list(df.columns).index(c)
            if i in keep and len(keep) > 1:
                keep.remove(i)
                hidden.add(cols[i])
        if "trace" in cols and cols.index("trace") in keep and len(keep) > 1 and df.height \
                and df.get_column("trace").n_unique() == 1:
            title = f"trace {terminal_text(df.get_column('trace')[0])}"  # one trace: said once above the table
            keep.remove(cols.index("trace"))
            hidden.add("trace")

        def total() -> int:
            return sum(caps[i] for i in keep) + SEP * max(len(keep) - 1, 0)

        distinct = {i: _distinct_width([r[i] for r in cells], natural[i]) for i in keep if not numeric[i]}

        def cut_text(floor: int, keep_distinct: bool = False) -> None:
            """The widest text first, down to floor (the header stays readable); with keep_distinct, no column
            below the width at which its different values still look different (at most COMFORT_TEXT)."""
            def low(j: int) -> int:
                return max(floor, len(cols[j]), min(distinct[j], COMFORT_TEXT) if keep_distinct else 0)

            while total() > limit:
                cands = [i for i in keep if not numeric[i] and caps[i] > low(i)]
                if not cands:
                    return
                i = max(cands, key=lambda j: caps[j])
                caps[i] = max(low(i), caps[i] - (total() - limit))

        def drop(order: list[int]) -> None:
            while total() > limit and len(keep) > 1 and order:
                i = order.pop(0)
                if i in keep:
                    keep.remove(i)

        order = _drop_order(cols, keep_first=1, keep=important)
        low = [i for i in order if _low_value_rank(cols[i]) is not None and cols[i] not in important]
        cut_text(COMFORT_TEXT)
        drop(low)
        cut_text(MIN_TEXT, keep_distinct=True)
        drop(order)
        cut_text(MIN_TEXT)
        cut_text(4)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True,
                  header_style="", show_lines=False)
    for i in keep:
        table.add_column(cut_middle(cols[i], caps[i]), justify="right" if numeric[i] else "left", no_wrap=True,
                         overflow="ellipsis", max_width=caps[i] if limit is not None else None, min_width=None)
    shown_as = {i: cut_distinct([r[i] for r in cells], caps[i]) for i in keep if not numeric[i]}
    for r in cells:
        table.add_row(*[shown_as[i][r[i]] if i in shown_as else cut_middle(r[i], caps[i]) for i in keep])
    console = Console(file=io.StringIO(), width=limit or 10**6, color_system=None, force_terminal=False,
                      highlight=False, emoji=False, markup=False, soft_wrap=False, legacy_windows=False)
    with console.capture() as cap:
        console.print(table)
    lines = [ln.rstrip() for ln in cap.get().splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if title:
        lines.insert(0, title)
    if not cols:
        lines = ["(no columns)"]
    if df.height == 0:
        lines.append("(no rows)")
    elif max_rows is not None and df.height > max_rows:
        lines.append(f"… {df.height - max_rows:,} more rows ({df.height:,} in all; --format csv or --output FILE "
                     "for all)")
    dropped = [cols[i] for i in range(len(cols)) if i not in keep and cols[i] not in hidden]
    if dropped:
        lines.append(f"(--wide shows all; {len(dropped)} column{'s' if len(dropped) > 1 else ''} not shown: "
                     f"{', '.join(dropped)})")
    if limit is not None:
        lines = [fit_line(ln, limit) for ln in lines]
    return "\n".join(lines)


def write_text(text: str, output: str | None) -> None:
    if output:
        with open(output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def frame_json(df: pl.DataFrame):
    """The rows of a frame as a list of JSON objects (for a JSON document that holds several frames)."""
    return json.loads(df.write_json())


def csv_frame(df: pl.DataFrame) -> pl.DataFrame:
    """The frame with its nested columns, which CSV cannot hold, as text: a list of plain values as its items
    joined by ';' (a collective's missing ranks `1;3`; empty when it has none), other lists and structs as JSON."""
    import polars as pl

    def flat(t) -> bool:
        return isinstance(t, (pl.List, pl.Array)) and not isinstance(t.inner, (pl.List, pl.Array, pl.Struct))

    nested = [c for c, t in df.schema.items() if isinstance(t, (pl.List, pl.Array, pl.Struct)) and not flat(t)]
    lists = [c for c, t in df.schema.items() if flat(t)]
    if not nested and not lists:
        return df
    return df.with_columns(
        [pl.col(c).cast(pl.List(pl.String)).list.join(";") for c in lists]
        + [pl.col(c).map_elements(lambda v: json.dumps(v.to_list() if hasattr(v, "to_list") else v, default=str),
                                  return_dtype=pl.String, skip_nulls=True) for c in nested])


def write_frame(df: pl.DataFrame, fmt: str, output: str | None, wide: bool = False,
                important: Sequence[str] = ()) -> None:
    """Write a frame as a table (fitted to the terminal on stdout unless ``wide``; ``important``: the columns it
    leaves out last), CSV, JSON or Parquet."""
    if fmt == "table":
        if output:
            text = format_table(df, max_rows=None) + "\n"
        else:
            text = format_table(df, width=None if wide else terminal_width(), important=important) + "\n"
    elif fmt == "csv":
        text = csv_frame(df).write_csv()
    elif fmt == "json":
        text = df.write_json() + "\n"
    elif fmt == "parquet":
        if not output:
            raise UsageError("--format parquet needs --output FILE")
        df.write_parquet(output)
        return
    else:
        raise UsageError(f"unknown format {fmt}")
    write_text(text, output)


def histogram_bars(df, width: int = 30):
    """The histogram with a `bar` column: █ scaled to the largest bin (of each trace's histogram)."""
    import polars as pl

    if df.height == 0:
        return df
    mx = pl.col("count").max().over("trace_id")
    n = df.select(pl.when(mx > 0).then((pl.col("count") * width / mx).ceil()).otherwise(0).cast(pl.Int64))
    return df.with_columns(pl.Series("bar", ["█" * k for k in n.to_series()], dtype=pl.String))
