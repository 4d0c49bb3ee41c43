"""`tracesql tree DATASET [--op NAME | --module NAME] [--depth N] [--merge]`: the call tree with GPU time per node."""
from __future__ import annotations

from tracesql.cli.common import MAX_WIDTH, _output_arg, _trace_arg, int_option, nonneg_int
from tracesql.render.output import DATASET_HELP

DEFAULT_DEPTH = 3  # levels below the roots printed when --depth is not given


def cmd_tree(args) -> int:
    from tracesql.api import analysis
    from tracesql.api.tree import format_tree, restrict_to_trace, tree
    from tracesql.cli.common import _open
    from tracesql.errors import EmptySelection
    from tracesql.render.output import terminal_width, write_frame, write_text

    with _open(args.dataset) as ds:
        trace_id = None
        if args.trace:
            (trace_id,) = analysis.trace_ids(ds, args.trace)
            restrict_to_trace(ds, trace_id)
        depth = args.depth
        if depth is None and args.format == "text":
            depth = DEFAULT_DEPTH
        df = tree(ds, op=args.op, module=args.module, depth=None if depth is None else depth + 1, trace=trace_id,
                  merge=args.merge)
        labels = analysis.trace_labels(ds)
    if df.height == 0:
        what = f"op {args.op!r}" if args.op else f"module {args.module!r}" if args.module else "GPU work"
        raise EmptySelection(f"no {what} found in {args.dataset}" + (f" (trace {args.trace})" if args.trace else ""))
    import polars as pl

    deeper = depth is not None and df.filter(pl.col("level") > depth).height
    if depth is not None:
        df = df.filter(pl.col("level") <= depth)
    df = df.with_columns(pl.col("trace_id").replace_strict(labels, default=None).alias("trace"))
    df = df.select("trace_id", "trace", *[c for c in df.columns if c not in ("trace_id", "trace")])
    if args.format == "text":
        width = 110 if args.output else args.width or (10**6 if args.wide else terminal_width())
        text = format_tree(df, width=width) + "\n"
        if deeper:
            text += (f"(deeper levels not shown: --depth {depth + 1} or more shows them; "
                     "--op/--module starts lower)\n")
        write_text(text, args.output)
        return 0
    write_frame(df, args.format, args.output, wide=args.wide)
    return 0


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "tree", help="call tree (nn.Module > op > runtime launch > GPU event) with GPU time per node",
        description="Print the call tree rebuilt from the trace: user annotations, nn.Module calls, "
                    "dispatcher ops, runtime launches and GPU events, each with the busy GPU time "
                    "(union of its GPU events' intervals) and the number of GPU events below it.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    g = s.add_mutually_exclusive_group()
    g.add_argument("--op", metavar="NAME", help="start from every instance of this op (exact name or a "
                   "SQL LIKE pattern, e.g. 'aten::%%mm')")
    g.add_argument("--module", metavar="NAME", help="start from every call of this nn.Module: "
                   "'nn.Module: X_N', 'X_N', a LIKE pattern, or the class name 'X'")
    s.add_argument("--depth", type=nonneg_int, metavar="N", help="levels to print below the starting nodes "
                   f"(0: the starting nodes only; default {DEFAULT_DEPTH} for the text tree, all for the tables)")
    s.add_argument("--merge", action="store_true", help="merge sibling nodes of the same kind and name into one "
                   "(instances ×N, times summed; a trailing #N counts as #*, so ProfilerStep#1, #2, ... merge)")
    _trace_arg(s)
    s.add_argument("--format", "-f", choices=["text", "table", "csv", "json", "parquet"], default="text",
                   help="text: the indented tree (the default); table, csv, json, parquet: one row per node")
    _output_arg(s)
    s.add_argument("--width", type=int_option(1, MAX_WIDTH),
                   metavar="N", help="width of the text lines (default: the terminal's, "
                   "110 with --output)")
    s.add_argument("--wide", "-w", action="store_true", help="names whole (text lines as long as they need)")
    s.set_defaults(func=cmd_tree)
