"""`tracesql tree DATASET [--op NAME | --module NAME] [--depth N]`: the call tree with GPU time per node."""
from __future__ import annotations

import sys


def cmd_tree(args) -> int:
    import duckdb

    from .cli import _fail, _open, write_frame
    from .tree import format_tree, restrict_to_trace, tree

    ds = _open(args.dataset)
    if args.trace_id:
        restrict_to_trace(ds, args.trace_id)
    try:
        df = tree(ds, op=args.op, module=args.module, depth=args.depth, trace_id=args.trace_id)
    except duckdb.Error as e:
        return _fail(str(e).splitlines()[0], 1)
    if df.height == 0:
        what = f"op {args.op!r}" if args.op else f"module {args.module!r}" if args.module else "GPU work"
        print(f"tracesql: no {what} found in {args.dataset}", file=sys.stderr)
        return 1
    if args.format == "text":
        text = format_tree(df, width=args.width) + "\n"
        if args.output:
            with open(args.output, "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        return 0
    write_frame(df, args.format, args.output)
    return 0


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "tree", help="call tree (nn.Module > op > runtime launch > GPU event) with GPU time per node",
        description="Print the call tree rebuilt from the trace: user annotations, nn.Module calls, "
                    "dispatcher ops, runtime launches and GPU events, each with the busy GPU time "
                    "(union of its GPU events' intervals) and the number of GPU events below it.")
    s.add_argument("dataset", metavar="DATASET")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--op", metavar="NAME", help="start from every instance of this op (exact name or a "
                   "SQL LIKE pattern, e.g. 'aten::%%mm')")
    g.add_argument("--module", metavar="NAME", help="start from every call of this nn.Module: "
                   "'nn.Module: X_N', 'X_N', a LIKE pattern, or the class name 'X'")
    s.add_argument("--depth", type=int, metavar="N", help="levels to print below the starting nodes "
                   "(0: the starting nodes only)")
    s.add_argument("--trace-id", metavar="ID", help="only this trace")
    s.add_argument("--format", "-f", choices=["text", "table", "csv", "json", "parquet"], default="text")
    s.add_argument("--output", "-o", metavar="FILE")
    s.add_argument("--width", type=int, default=110, help="text width of the dotted leaders (default 110)")
    s.set_defaults(func=cmd_tree)
