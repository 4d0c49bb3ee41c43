"""`tracesql replay DATASET [--trace T] [--op PATTERN] [--top N] [--out DIR]`: the argument sets of the ops that ran
GPU work, as scripts that replay each op alone (tracesql.api.replay); without --out, the list of them."""
from __future__ import annotations

import shlex
from pathlib import Path

from tracesql.cli.common import _out_args, _trace_arg, nonneg_int
from tracesql.render.output import DATASET_HELP

# what a reader of the list looks for first: which op, its GPU time, whether it replays
IMPORTANT = ("rank", "op_name", "input_dims", "kernel_time_sum_us", "replayable")


def cmd_replay(args) -> int:
    from tracesql.api import replay
    from tracesql.cli.common import _open, _wrapped, emit
    from tracesql.errors import EmptySelection
    from tracesql.escape import terminal_text

    top = None if args.top == 0 else args.top
    empty = "no op argument set in the selection (no op ran GPU work)"
    with _open(args.dataset) as ds:
        if args.out is None:
            return emit(replay.arg_sets(ds, args.trace, args.op, top), args, empty, important=IMPORTANT)
        doc = replay.ir(ds, args.trace, args.op, top)
    if not doc["entries"]:
        raise EmptySelection(empty)
    replay.write_files(doc, args.out)
    n = sum(e["script"] is not None for e in doc["entries"])
    print(_wrapped(terminal_text(f"{args.out}: {len(doc['entries'])} argument sets in replay_ir.json, {n} scripts; "
                                 f"{len(doc['entries']) - n} cannot be replayed from the trace (their reasons are "
                                 "in replay_ir.json)")))
    script = shlex.quote(str(Path(args.out) / "replay.py"))  # a command to paste, whatever the folder's name
    print(_wrapped(terminal_text(f"run them: python {script} [--device cuda|cpu] [--check] [--json FILE]")))
    return 0


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "replay", help="write scripts that replay the ops with the most GPU time alone, on arguments built from the "
        "trace (shapes, element types, strides, scalar values; torch only); without --out, list the argument sets")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    s.add_argument("--op", metavar="NAME", help="only this op (exact name or a SQL LIKE pattern, e.g. 'aten::%%mm')")
    s.add_argument("--top", "-n", type=nonneg_int, default=20, metavar="N",
                   help="the first N argument sets of each trace by GPU time (default 20; 0: all)")
    s.add_argument("--out", metavar="DIR", help="write DIR/replay_ir.json, one script per argument set and "
                   "DIR/replay.py that runs them all")
    _out_args(s, formats=("table", "csv", "json", "parquet"))
    s.set_defaults(func=cmd_replay)
