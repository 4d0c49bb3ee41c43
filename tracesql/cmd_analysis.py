"""Commands `tracesql kernels|gaps|timeline|launches|report DATASET ...` (see tracesql.analysis, tracesql.report)."""
from __future__ import annotations

import sys


def _open(path):
    from .dataset import Dataset

    return Dataset(path)


def _out_args(s, formats=("table", "csv", "json", "parquet")) -> None:
    s.add_argument("--format", "-f", choices=list(formats), default="table")
    s.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")


def _trace_arg(s) -> None:
    s.add_argument("--trace", "-t", metavar="TRACE", help="only this trace (trace_id or file name)")


def cmd_kernels(args) -> int:
    from . import analysis
    from .cli import write_frame

    with _open(args.dataset) as ds:
        df = analysis.kernel_summary(ds, trace=args.trace, step=args.step, sort=args.sort, top=args.top,
                                     verbose=args.verbose, by_category=args.by_category)
    write_frame(df, args.format, args.output)
    return 0


def cmd_gaps(args) -> int:
    from . import analysis
    from .cli import write_frame

    what = ("histogram" if args.hist else "transitions" if args.transitions else "idle" if args.idle
            else "events" if args.events else "streams")
    with _open(args.dataset) as ds:
        df = analysis.gaps(ds, trace=args.trace, what=what, hist_min=args.hist_min, hist_max=args.hist_max,
                           bins=args.bins, sort=args.sort, top=args.top, verbose=args.verbose,
                           kernel_wait_us=args.kernel_wait_us)
    write_frame(df, args.format, args.output)
    return 0


def cmd_timeline(args) -> int:
    from . import analysis
    from .cli import write_frame

    with _open(args.dataset) as ds:
        df = analysis.timeline(ds, trace=args.trace, by_step=args.by_step, pooled_only=args.pooled, style=args.style)
    write_frame(df, args.format, args.output)
    return 0


def cmd_launches(args) -> int:
    from . import analysis
    from .cli import write_frame

    with _open(args.dataset) as ds:
        df = analysis.launch_stats(ds, trace=args.trace, runtime_cutoff_us=args.runtime_cutoff_us,
                                   launch_delay_cutoff_us=args.launch_delay_cutoff_us)
    write_frame(df, args.format, args.output)
    return 0


def cmd_report(args) -> int:
    from . import report

    with _open(args.dataset) as ds:
        written = report.report(ds, style=args.style, fmt=args.format, out=args.out, trace=args.trace)
    for p in written:
        print(p, file=sys.stderr)
    return 0


def cmd_summary(args) -> int:
    from . import summary

    with _open(args.dataset) as ds:
        sys.stdout.write(summary.render(ds, trace=args.trace))
    return 0


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "kernels", help="per-kernel statistics: count, mean/total/min/max/std duration, %% of launches and time",
        description="One row per kernel name and trace over every GPU event (kernels, memcpy, memset; cuda_sync "
                    "waits excluded). Durations in µs. Short names (templates and argument lists removed) unless "
                    "--verbose.")
    s.add_argument("dataset", metavar="DATASET")
    _trace_arg(s)
    s.add_argument("--sort", "-s", choices=["count", "duration", "total", "percentage"], default="total",
                   help="order by launch count, mean duration, total duration or %% of kernel time (default total)")
    s.add_argument("--top", "-n", type=int, metavar="N", help="only the first N kernels of each trace")
    s.add_argument("--step", metavar="N", help="only GPU work launched in ProfilerStep#N")
    s.add_argument("--verbose", "-v", action="store_true", help="full kernel names")
    s.add_argument("--by-category", action="store_true", help="GPU time per kernel category and op instead")
    _out_args(s)
    s.set_defaults(func=cmd_kernels)

    s = subparsers.add_parser(
        "gaps", help="idle gaps between consecutive GPU events per stream: totals, histogram, transitions, causes",
        description="Gap before a GPU event = its start minus the latest end of the earlier events on its stream. "
                    "Default: totals per stream. Times in µs.")
    s.add_argument("dataset", metavar="DATASET")
    _trace_arg(s)
    g = s.add_mutually_exclusive_group()
    g.add_argument("--hist", action="store_true", help="histogram of the gaps (see --hist-min/--hist-max/--bins)")
    g.add_argument("--transitions", action="store_true", help="kernel pairs A -> B with gap statistics")
    g.add_argument("--idle", action="store_true", help="idle time by cause: host_wait, kernel_wait, other")
    g.add_argument("--events", action="store_true", help="every positive gap, largest first")
    s.add_argument("--hist-min", type=float, default=0.0, metavar="US", help="histogram lower bound, µs (0)")
    s.add_argument("--hist-max", type=float, default=100.0, metavar="US", help="histogram upper bound, µs (100)")
    s.add_argument("--bins", type=int, default=20, help="histogram bins (20)")
    s.add_argument("--sort", "-s", choices=["count", "avg", "max", "stdev", "total"], default="count",
                   help="order of --transitions (default count)")
    s.add_argument("--top", "-n", type=int, metavar="N", help="only the first N rows per trace")
    s.add_argument("--kernel-wait-us", type=float, default=30.0, metavar="US",
                   help="--idle: gaps shorter than this (not host waits) are kernel_wait (default 30)")
    s.add_argument("--verbose", "-v", action="store_true", help="full kernel names")
    _out_args(s)
    s.set_defaults(func=cmd_gaps)

    s = subparsers.add_parser(
        "timeline", help="GPU time breakdown: computation, communication, memory (total/exposed), busy, idle",
        description="Per trace and device (and all devices pooled, device 'all'): unions of GPU intervals between "
                    "the first and the last GPU activity. --style tracelens/hta give the peers' numbers.")
    s.add_argument("dataset", metavar="DATASET")
    _trace_arg(s)
    s.add_argument("--by-step", action="store_true", help="one row per ProfilerStep#N")
    s.add_argument("--pooled", action="store_true", help="only the all-devices rows")
    s.add_argument("--style", choices=["native", "tracelens", "hta"], default="native")
    _out_args(s)
    s.set_defaults(func=cmd_timeline)

    s = subparsers.add_parser(
        "launches", help="launch statistics per launch API: CPU duration, GPU duration, launch delay, outliers",
        description="Every launch API in the trace (cudaLaunchKernel(ExC), cuLaunchKernel(Ex), hip*, graph "
                    "launches, memcpy/memset) joined to its GPU work on correlation.")
    s.add_argument("dataset", metavar="DATASET")
    _trace_arg(s)
    s.add_argument("--runtime-cutoff-us", type=float, default=50.0, metavar="US")
    s.add_argument("--launch-delay-cutoff-us", type=float, default=100.0, metavar="US")
    _out_args(s)
    s.set_defaults(func=cmd_launches)

    s = subparsers.add_parser(
        "report", help="all analysis sections, in tracesql's definitions or a peer's (tracelens, hta)",
        description="Prints every section, or with --out DIR writes one file per section (peer styles: the "
                    "peer's file and column names; one sub-folder per trace when the dataset has several).")
    s.add_argument("dataset", metavar="DATASET")
    _trace_arg(s)
    s.add_argument("--style", choices=["native", "tracelens", "hta"], default="native")
    s.add_argument("--format", "-f", choices=["table", "csv", "json"], default="table")
    s.add_argument("--out", metavar="DIR", help="write the sections into DIR")
    s.set_defaults(func=cmd_report)

    s = subparsers.add_parser(
        "summary", help="the first screen of the report: GPUs, busy/idle, top categories, kernels, ops, gaps",
        description="One screen per trace (after one line per trace when there are several): GPU model and "
                    "count, rank, GPU span, busy/idle and compute / exposed communication / exposed memory %%, "
                    "top categories, kernels and ops by GPU time, the largest idle gaps and launch hints.")
    s.add_argument("dataset", metavar="DATASET")
    _trace_arg(s)
    s.set_defaults(func=cmd_summary)
