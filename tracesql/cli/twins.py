"""`tracesql twin DATASET [TRACE TWIN] [--kind eager|capture] [--remove]`: pair a graph replay with the trace whose
ops name its kernels (its capture trace, or an eager run of the same code), or list the pairings."""
from __future__ import annotations

from tracesql.cli.common import _out_args
from tracesql.render.output import DATASET_HELP


def cmd_twin(args) -> int:
    from tracesql.api import twins
    from tracesql.cli.common import _open, emit
    from tracesql.errors import DatasetError, UsageError
    from tracesql.render.output import terminal_text

    if (args.trace is None) != (args.twin is None):
        raise UsageError("give both TRACE and TWIN (or neither, to list the pairings)")
    if args.trace is not None:
        if args.remove:
            if not twins.unpair(args.dataset, args.trace, args.twin):
                raise DatasetError(f"{args.trace} is not paired with {args.twin}")
            print(terminal_text(f"{args.trace}: no longer paired with {args.twin}"))
        else:
            path = twins.pair(args.dataset, args.trace, args.twin, args.kind)
            print(terminal_text(f"{args.trace}: {args.twin} is its {args.kind} twin ({path})"))
    elif args.remove:
        raise UsageError("--remove needs TRACE and TWIN")
    with _open(args.dataset) as ds:
        df = twins.twins(ds)
    if args.trace is not None and df.height == 0:  # the pairing just removed was the last one
        return 0
    return emit(df, args, "no graph replay with a twin in the dataset (pair one: tracesql twin DATASET TRACE TWIN)",
                important=("trace", "twin", "kind", "placed"))


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "twin", help="pair a CUDA/HIP-graph replay with its capture trace or an eager run of the same code, whose "
        "ops then name the replay's kernels; without TRACE and TWIN, list the pairings and how each replay's graph "
        "launches were placed")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    s.add_argument("trace", metavar="TRACE", nargs="?", help="the replay: trace id, label or file name")
    s.add_argument("twin", metavar="TWIN", nargs="?", help="the twin trace of the same dataset")
    s.add_argument("--kind", choices=("eager", "capture"), default="eager",
                   help="eager: a run of the same code without graphs (default); capture: the graphs' capture trace "
                   "(found without pairing when it has the replay's rank)")
    s.add_argument("--remove", action="store_true", help="undo the pairing of TRACE with TWIN")
    _out_args(s, formats=("table", "csv", "json"))
    s.set_defaults(func=cmd_twin)
