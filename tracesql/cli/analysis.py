"""Commands `tracesql kernels|gaps|timeline|launches|report|summary|perf DATASET` (tracesql.api.analysis, report)."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from tracesql.api.analysis import MAX_BINS
from tracesql.cli.common import (
    ARCH_NATIVE,
    _arch_arg,
    _open,
    _out_args,
    _output_arg,
    _step_arg,
    _top_arg,
    _trace_arg,
    emit,
    finite_float,
    int_option,
    jobs_number,
    nonneg_time_us,
    time_us,
)
from tracesql.errors import EmptySelection
from tracesql.escape import terminal_text
from tracesql.render.output import DATASET_HELP, histogram_bars


def cmd_kernels(args) -> int:
    from tracesql.api import analysis

    with _open(args.dataset) as ds:
        df = analysis.kernel_summary(ds, trace=args.trace, step=args.step, sort=args.sort, top=args.top,
                                     verbose=args.verbose, by_category=args.by_category)
    return emit(df, args, "no GPU events in the selection")


def cmd_gaps(args) -> int:
    from tracesql.api import analysis
    from tracesql.errors import UsageError

    if args.bins < 1:
        raise UsageError(f"--bins must be 1 or more, not {args.bins}")
    if args.hist_max is not None and not args.hist_max > args.hist_min:
        raise UsageError(f"--hist-max ({args.hist_max:g}) must be above --hist-min ({args.hist_min:g})")
    what = ("histogram" if args.hist else "transitions" if args.transitions else "idle" if args.idle
            else "events" if args.events else "streams")
    if args.step is not None and what not in ("streams", "histogram", "events"):
        raise UsageError("--step works with the stream totals, --hist and --events")
    with _open(args.dataset) as ds:
        df = analysis.gaps(ds, trace=args.trace, what=what, hist_min=args.hist_min, hist_max=args.hist_max,
                           bins=args.bins, sort=args.sort, top=args.top, verbose=args.verbose,
                           kernel_wait_us=args.kernel_wait_us, step=args.step)
    if what == "histogram" and args.format == "table":
        df = histogram_bars(df)
    return emit(df, args, "no GPU gaps in the selection")


def cmd_timeline(args) -> int:
    from tracesql.api import analysis

    with _open(args.dataset) as ds:
        df = analysis.timeline(ds, trace=args.trace, by_step=args.by_step, pooled_only=args.pooled, style=args.style)
    return emit(df, args, "no GPU events in the selection")


def cmd_launches(args) -> int:
    from tracesql.api import analysis

    with _open(args.dataset) as ds:
        df = analysis.launch_stats(ds, trace=args.trace, runtime_cutoff_us=args.runtime_cutoff_us,
                                   launch_delay_cutoff_us=args.launch_delay_cutoff_us)
    return emit(df, args, "no launch calls in the selection")


def cmd_report(args) -> int:
    from tracesql.api import report
    from tracesql.errors import UsageError

    fmt = args.format or ("csv" if args.out else "table")
    parallel = args.jobs is not None or args.executor is not None
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    if (args.scheduler or args.scheduler_file) and args.executor != "dask":
        raise UsageError("--scheduler and --scheduler-file go with --executor dask")
    if parallel and not args.out:
        raise UsageError("--jobs and --executor write the report with --out DIR")
    if fmt == "html" and (args.style != "native" or parallel):
        raise UsageError("--format html writes the native report in one process (no --style, --jobs, --executor)")
    if fmt == "xlsx" and (not args.output or args.out or parallel):
        raise UsageError("--format xlsx writes one workbook: give --output FILE (no --out, --jobs, --executor)")
    if args.output and args.out and fmt != "html":
        raise UsageError("--output FILE writes the printed report, --out DIR one file per section: give one")
    ids = ids_since(args)
    if parallel:  # one task per trace (tracesql.api.archive_report)
        from tracesql.api.archive_report import report_tasks

        written = report_tasks(args.dataset, args.out, style=args.style, fmt=fmt, trace=args.trace, trace_ids=ids,
                               by_module=args.group_by_parent_module, jobs=args.jobs,
                               executor=args.executor or "processes", scheduler=args.scheduler,
                               scheduler_file=args.scheduler_file, arch=args.arch, pseudo_ops=args.pseudo_ops)
    else:
        from tracesql.api.dataset import Dataset

        write: Callable[..., list[Path]] = report.report
        if fmt == "xlsx" and args.style == "tracelens":  # TraceLens's own workbook: its sheet order and cells
            from tracesql.peers.tracelens import workbook

            write = workbook.report
        with Dataset(args.dataset, trace_ids=ids) as ds:
            written = write(ds, style=args.style, fmt=fmt, out=args.out, output=args.output, trace=args.trace,
                            wide=args.wide, by_module=args.group_by_parent_module, arch=args.arch,
                            pseudo_ops=args.pseudo_ops)
    for p in written:
        print(terminal_text(p), file=sys.stderr)
    return 0


def ids_since(args) -> list[str] | None:
    """--since RUN: the traces ingested by that run and the runs after it (opened on their own); None without it."""
    if not args.since:
        return None
    with _open(args.dataset) as ds:
        ids = [r[0] for r in ds.con.execute("""SELECT DISTINCT trace_id FROM ingest_run_files
            WHERE status = 'ingested' AND run_id >= $run ORDER BY trace_id""", {"run": args.since}).fetchall()]
    if not ids:
        raise EmptySelection(f"no traces ingested by run {args.since} or later in {args.dataset}")
    return ids


def cmd_summary(args) -> int:
    from tracesql.api import summary

    with _open(args.dataset) as ds:
        sys.stdout.write(summary.render(ds, trace=args.trace, arch=args.arch))  # the Compute line's GPU
    return 0


def cmd_perf(args) -> int:
    from tracesql.api import perf

    with _open(args.dataset) as ds:
        if args.plot:
            perf.write_plot(perf.roofline_spec(ds, trace=args.trace, arch=args.arch), args.plot)
            print(terminal_text(args.plot), file=sys.stderr)
            return 0
        df = perf.perf(ds, trace=args.trace, arch=args.arch, by=args.by, bound=args.bound, below_pct=args.below_pct)
        for line in perf.reasons(ds, trace=args.trace, arch=args.arch):
            print(terminal_text(line), file=sys.stderr)
    if args.top is not None:
        import polars as pl

        df = df.filter(pl.int_range(pl.len()).over("trace_id") < args.top)
    return emit(df, args, "no modelled ops in the selection")


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "kernels", help="per-kernel statistics: count, mean/total/min/max/std duration, %% of launches and time",
        description="One row per kernel name and trace over every GPU event (kernels, memcpy, memset; cuda_sync "
                    "waits excluded). Durations in µs. Short names (templates and argument lists removed) unless "
                    "--verbose.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    s.add_argument("--sort", "-s", choices=["count", "duration", "total", "percentage"], default="total",
                   help="order by launch count, mean duration, total duration or %% of kernel time (default total)")
    _top_arg(s, "kernels")
    _step_arg(s)
    s.add_argument("--verbose", "-v", action="store_true", help="full kernel names")
    s.add_argument("--by-category", action="store_true", help="GPU time per kernel category and op instead")
    _out_args(s)
    s.set_defaults(func=cmd_kernels)

    s = subparsers.add_parser(
        "gaps", help="idle gaps between consecutive GPU events per stream: totals, histogram, transitions, causes",
        description="Gap before a GPU event = its start minus the latest end of the earlier events on its stream. "
                    "Default: totals per stream. Times in µs; --events gives each event's start relative to the "
                    "trace's first event.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    g = s.add_mutually_exclusive_group()
    g.add_argument("--hist", action="store_true", help="histogram of the gaps (see --hist-min/--hist-max/--bins)")
    g.add_argument("--transitions", action="store_true", help="kernel pairs A -> B with gap statistics")
    g.add_argument("--idle", action="store_true", help="idle time by cause: host_wait, kernel_wait, other")
    g.add_argument("--events", action="store_true", help="every positive gap, largest first")
    s.add_argument("--hist-min", type=time_us, default=0.0, metavar="US", help="histogram lower bound, µs (0); "
                   "smaller gaps are counted in a first bin")
    s.add_argument("--hist-max", type=time_us, default=None,
                   metavar="US", help="histogram upper bound, µs (default: "
                   "the largest gap, rounded up); larger gaps are counted in a last, open bin")
    s.add_argument("--bins", type=int_option(hi=MAX_BINS, what=" (one row per bin)"), default=20, metavar="N",
                   help=f"histogram bins of equal width (20; at most {MAX_BINS:,})")
    s.add_argument("--sort", "-s", choices=["count", "avg", "max", "stdev", "total"], default="count",
                   help="order of --transitions (default count)")
    _top_arg(s, "rows (--events, --transitions)")
    _step_arg(s, "GPU work (totals, --hist, --events)")
    s.add_argument("--kernel-wait-us", type=nonneg_time_us, default=30.0, metavar="US",
                   help="--idle: gaps shorter than this (not host waits) are kernel_wait (default 30)")
    s.add_argument("--verbose", "-v", action="store_true", help="full kernel names")
    _out_args(s)
    s.set_defaults(func=cmd_gaps)

    s = subparsers.add_parser(
        "timeline", help="GPU time breakdown: computation, communication, memory (total/exposed), busy, idle",
        description="Per trace and device (and all devices pooled, device 'all'): unions of GPU intervals between "
                    "the first and the last GPU activity. --style tracelens/hta give the peers' numbers.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    s.add_argument("--by-step", action="store_true", help="one row per ProfilerStep#N")
    s.add_argument("--pooled", action="store_true", help="only the all-devices rows")
    s.add_argument("--style", choices=["native", "tracelens", "hta"], default="native",
                   help="native (tracesql's definitions, the default), or the breakdown of TraceLens or HTA")
    _out_args(s)
    s.set_defaults(func=cmd_timeline)

    s = subparsers.add_parser(
        "launches", help="launch statistics per launch API: CPU duration, GPU duration, launch delay, outliers",
        description="Every launch API in the trace (cudaLaunchKernel(ExC), cuLaunchKernel(Ex), hip*, graph "
                    "launches, memcpy/memset) joined to its GPU work on correlation.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    s.add_argument("--runtime-cutoff-us", type=nonneg_time_us, default=50.0, metavar="US",
                   help="a launch call longer than this is a runtime outlier (default 50)")
    s.add_argument("--launch-delay-cutoff-us", type=nonneg_time_us, default=100.0, metavar="US",
                   help="a launch whose GPU work starts later than this after the call is a launch-delay outlier "
                        "(default 100)")
    _out_args(s)
    s.set_defaults(func=cmd_launches)

    s = subparsers.add_parser(
        "perf", help="compute model and roofline: FLOPs, bytes, achieved TFLOP/s and TB/s per op, against the GPU",
        description="FLOPs and bytes of the modelled ops (GEMM, attention, convolution, elementwise, reductions, "
                    "softmax, norms, embedding) from their recorded shapes and dtypes, the GPU time of the kernels "
                    "each op launched, achieved TFLOP/s and TB/s (10^12 per second), arithmetic intensity and the "
                    "roofline of the GPU named in the trace's deviceProperties (sql/perf/devices.csv). Rows in "
                    "decreasing GPU time; times in µs.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    _arch_arg(s, "the GPU of the roofline instead of the trace's deviceProperties: " + ARCH_NATIVE)
    from tracesql.api.perf import by_views

    s.add_argument("--by", choices=list(by_views()), default="args",
                   help="one row per op and argument set (the default), per op name, per op family (with the GPU "
                        "time no model covers), or per kernel of the ops that launched one")
    s.add_argument("--bound", choices=["compute", "memory"], help="only the rows bound by compute or by memory")
    s.add_argument("--below-pct", type=finite_float,
                   metavar="N", help="only the rows at less than N %% of their roofline")
    s.add_argument("--plot", metavar="FILE", help="write the roofline chart of one trace instead (one point per op and "
                   "argument set): FILE.svg, .png or .html (a self-contained page; these need tracesql[plot]), or "
                   ".json (the Vega-Lite spec)")
    _top_arg(s, "rows")
    _out_args(s)
    s.set_defaults(func=cmd_perf)

    s = subparsers.add_parser(
        "report", help="all analysis sections, in tracesql's definitions or a peer's (tracelens, hta)",
        description="Prints every section, or with --out DIR writes one file per section (peer styles: the "
                    "peer's file and column names; one sub-folder per trace when the dataset has several).")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    s.add_argument("--style", choices=["native", "tracelens", "hta"], default="native",
                   help="native (tracesql's definitions, the default), or TraceLens's or HTA's sections")
    s.add_argument("--group-by-parent-module", action="store_true",
                   help="with --style tracelens: TraceLens's inference report with --group_by_parent_module "
                        "(ops_summary, ops_summary_by_category and ops_unique_args per parent nn.Module too)")
    s.add_argument("--pseudo-ops", action="store_true",
                   help="with --style tracelens: TraceLens's --enable_pseudo_ops: sglang_profiler::<op>_<N> ops "
                        "renamed <op>, and vLLM's unfused Triton MoE split into pseudo_op::moe_triton_unfused_* "
                        "ops (MoE_unfused_fwd); its other pseudo ops are not reproduced")
    _arch_arg(s, "the GPU of the roofline. Native: the first screen's Compute line, as tracesql perf --arch. "
              "--style tracelens: TraceLens's --gpu_arch_platform (MI300X, MI325X) or a TraceLens arch JSON file "
              "(its --gpu_arch_json_path); the perf sheets then carry its roofline columns")
    s.add_argument("--format", "-f", choices=["table", "csv", "json", "html", "xlsx"], default=None,
                   help="table (printed, the default), csv or json (printed: one JSON object keyed by section); "
                        "with --out the default is csv; html: one self-contained page with charts (--output FILE, "
                        "or --out DIR for the page and each chart's Vega-Lite spec; needs tracesql[plot]); xlsx: one "
                        "workbook, a sheet per section (--output FILE; --style tracelens: TraceLens's workbook of "
                        "one trace; needs tracesql[xlsx])")
    _output_arg(s)
    s.add_argument("--out", metavar="DIR", help="write one file per section into DIR (a sub-folder per trace when "
                   "there are several)")
    s.add_argument("--since", metavar="RUN_ID", help="only the traces ingested by this run and the runs after it "
                   "(tracesql runs DATASET lists them)")
    s.add_argument("--wide", "-w", action="store_true", help="print the tables whole (no column left out, no name "
                   "shortened to fit the terminal)")
    s.add_argument("--jobs", "-j", type=jobs_number,
                   metavar="N", help="with --out: one task per trace, N at once in local "
                   "processes (or N local Dask workers with --executor dask; default: one per core); each task "
                   "opens its trace alone and writes its folder, the cross-trace tables are merged at the end")
    s.add_argument("--executor", choices=("processes", "dask"), default=None,
                   help="with --out: where the tasks run: processes on this machine, or a Dask cluster (the "
                   "scheduler of --scheduler, --scheduler-file or DASK_SCHEDULER_ADDRESS, else a local cluster of "
                   "--jobs workers; pip install 'tracesql[dask]'); the dataset and DIR must be on a filesystem "
                   "every worker sees at the same path")
    s.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://head:8786")
    s.add_argument("--scheduler-file", metavar="FILE", help="Dask scheduler file (dask scheduler "
                   "--scheduler-file FILE, as on SLURM)")
    s.set_defaults(func=cmd_report)

    s = subparsers.add_parser(
        "summary", help="the first screen of the report: GPUs, busy/idle, top categories, kernels, ops, gaps",
        description="One screen per trace (after one line per trace when there are several): GPU model and "
                    "count, rank, GPU span, busy/idle and compute / exposed communication / exposed memory %%, "
                    "top categories, kernels and ops by GPU time, the largest idle gaps and launch hints.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    _arch_arg(s, "the GPU of the Compute line's roofline instead of the trace's deviceProperties, as tracesql perf "
              "--arch: " + ARCH_NATIVE)
    s.set_defaults(func=cmd_summary)
