"""Commands `tracesql collectives|ranks DATASET ...` (see tracesql.api.comm)."""
from __future__ import annotations

import sys

from tracesql.escape import terminal_text
from tracesql.render.output import DATASET_HELP

# What a reader of a collective's row looks for first: which one (seq), how long the ranks waited, the bandwidth;
# a fitted table leaves them out last.
IMPORTANT = ("seq", "total_wait_us", "mean_wait_us", "busbw_gbps", "wait_us", "mean_busbw_gbps")


def _job_arg(s) -> None:
    # no short form: -j is --jobs (parallelism) in every command
    s.add_argument("--job", type=int, metavar="J", help="only job J (jobs are numbered 1, 2, ... by start; "
                   "every job by default)")


def _header(ds, args) -> None:
    from tracesql.api import comm
    from tracesql.cli.common import _wrapped

    if args.format == "table" and not args.output:
        for line in comm.job_lines(ds, args.job):
            print(_wrapped(terminal_text(line)))


def cmd_collectives(args) -> int:
    from tracesql.api import comm
    from tracesql.cli.common import _open, emit

    with _open(args.dataset) as ds:
        df = comm.collectives(ds, job=args.job, by=args.by, top=args.top)
        _header(ds, args)
        sys.stdout.flush()
        return emit(df, args, "no collectives in the selection", important=IMPORTANT)


def cmd_ranks(args) -> int:
    from tracesql.api import comm
    from tracesql.cli.common import _open, emit

    with _open(args.dataset) as ds:
        df = comm.ranks(ds, job=args.job)
        _header(ds, args)
        sys.stdout.flush()
        return emit(df, args, "no ranks in the selection")


def register(subparsers) -> None:
    from tracesql.cli.common import _out_args, nonneg_int

    s = subparsers.add_parser(
        "collectives", help="collectives matched across the ranks of a job: latency, skew, waits, bandwidth",
        description="A job is the traces with the same world size and backend whose windows overlap. The k-th "
                    "collective of a process group on each rank is the same collective; latency = shortest "
                    "execution over the ranks, wait = a rank's execution minus the latency, algbw = bytes / "
                    "latency, busbw with the nccl-tests factors. Times in µs, bandwidths in GB/s.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _job_arg(s)
    s.add_argument("--by", choices=["collective", "type", "rank"], default="collective",
                   help="one row per matched collective (default), per collective type, or per rank")
    s.add_argument("--top", "-n", type=nonneg_int, metavar="N", help="only the first N rows of each job (--by "
                   "collective: the N with the largest total wait)")
    _out_args(s)
    s.set_defaults(func=cmd_collectives)

    s = subparsers.add_parser(
        "ranks", help="the ranks of a job side by side: GPU timeline, time in collectives, waits, the straggler",
        description="One row per rank: GPU span, compute, communication (exposed), idle, and its collectives: "
                    "transfer vs wait, times it arrived last and how long the others waited for it. The "
                    "straggler (bounds_job) is the rank the others waited for longest. Times in µs.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _job_arg(s)
    _out_args(s)
    s.set_defaults(func=cmd_ranks)
