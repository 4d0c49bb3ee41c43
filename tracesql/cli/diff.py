"""Command `tracesql diff BASE VARIANT`, each DATASET[:TRACE]: two traces compared, of one dataset or of two
(tracesql.api.diff, sql/diff/)."""
from __future__ import annotations

import sys
from pathlib import Path

from tracesql.api.diff import LEVELS, RANK_MODES
from tracesql.errors import EmptySelection, UsageError
from tracesql.escape import terminal_text
from tracesql.store.sqlmodules import outputs

# Exit status of `diff --fail-if-slower PCT` when the variant's GPU span is more than PCT % above the baseline's
# (the output is written first; 1 and 2 keep their meaning of every command: bad input, bad command line).
EXIT_SLOWER = 3

# The key columns of each level (the first columns of its frame), as in sql/diff/.
# level -> the columns that identify a row (``@output diff-level ... KEYS``)
KEYS = {o.name: list(o.keys) for o in outputs("diff-level")}


def display(df):
    """A level's frame for people and files: times in µs (base_us, variant_us, diff_us) and the change in % of the
    baseline (change_pct = 100 (ratio - 1)), the ns columns and the ratio left out; a kernel's activity_class is
    `class`, as in `tracesql kernels`. Columns: the level's key, side, diff_us, change_pct (self_diff_us), then
    base_us, variant_us, base_count, variant_count (a table too narrow for all leaves out the last ones first)."""
    import polars as pl

    out = df.with_columns(
        (pl.col("base_ns") / 1e3).alias("base_us"), (pl.col("variant_ns") / 1e3).alias("variant_us"),
        (pl.col("diff_ns") / 1e3).alias("diff_us"), ((pl.col("ratio") - 1) * 100).alias("change_pct"),
        *([(pl.col("self_diff_ns") / 1e3).alias("self_diff_us")] if "self_diff_ns" in df.columns else []),
    ).drop("base_ns", "variant_ns", "diff_ns", "ratio", *(["self_diff_ns"] if "self_diff_ns" in df.columns else [])
           ).rename({"activity_class": "class"} if "activity_class" in df.columns else {})
    values = [c for c in ("side", "diff_us", "change_pct", "self_diff_us", "base_us", "variant_us", "base_count",
                          "variant_count") if c in out.columns]
    keys = ["class" if c == "activity_class" else c for c in df.columns[:df.columns.index("side")]]
    return out.select(keys + values + [c for c in out.columns if c not in keys and c not in values])


def _pct(a: float, b: float) -> str:
    return f"{100.0 * (b - a) / a:+.1f} %" if a else "n/a"


def first_screen(frames: dict, labels: tuple[str, str], ids: tuple[str, str], top: int, width: int | None) -> str:
    """The first screen: the total change (GPU span, busy, idle), the steady state's busy time per step, the GPU
    timeline, the biggest regressions and improvements by op and argument set, the categories that moved, where in
    the call tree the time changed, and what exists on one side only (each table a selection of a level's rows;
    every number is the level's, from sql/diff/)."""
    import polars as pl

    from tracesql.render.output import fit_line, format_table

    tl = {r["measure"]: r for r in frames["timeline"].iter_rows(named=True)}
    def traces(side: str) -> str:  # a side of several traces (--ranks job) is named by their count
        return f"{side.count(',') + 1} traces, values summed" if "," in side else f"trace {side}"

    labels = (terminal_text(labels[0]), terminal_text(labels[1]))  # names from the traces, shown escaped
    out = [f"== base {labels[0]} ({traces(ids[0])})", f"   variant {labels[1]} ({traces(ids[1])})"]
    missing = [who for who, key in (("baseline", "base_ns"), ("variant", "variant_ns"))
               if key not in tl.get("span", {}) or tl["span"][key] is None]
    if missing:
        out.append("Total      no GPU activity in the " + " and the ".join(missing) + ": no GPU timeline to compare")
    else:
        s, b, i = tl["span"], tl["busy"], tl["idle"]
        verdict = "slower" if s["diff_ns"] > 0 else "faster" if s["diff_ns"] < 0 else "unchanged"
        out += _wrap(f"Total      GPU span {s['base_ns'] / 1e6:,.3f} ms -> {s['variant_ns'] / 1e6:,.3f} ms: "
                     f"{s['diff_ns'] / 1e6:+,.3f} ms ({_pct(s['base_ns'], s['variant_ns'])}), {verdict}; "
                     f"busy {b['diff_ns'] / 1e6:+,.3f} ms ({_pct(b['base_ns'], b['variant_ns'])}), "
                     f"idle {i['diff_ns'] / 1e6:+,.3f} ms", width)

    steady = {r["measure"]: r for r in frames["steady"].iter_rows(named=True)}
    busy = steady.get("busy")
    if busy and busy["side"] == "both":
        out += _wrap(f"Steady     busy per step {busy['base_ns'] / 1e6:,.3f} ms -> {busy['variant_ns'] / 1e6:,.3f} ms: "
                     f"{busy['diff_ns'] / 1e6:+,.3f} ms ({_pct(busy['base_ns'], busy['variant_ns'])}); steady "
                     f"steps: base {busy['base_steps']}; variant {busy['variant_steps']}", width)

    def table(title: str, df, cols: list[str]) -> None:
        out.append("")
        out.append(title)
        out.extend((format_table(display(df).select(cols), max_rows=None, width=width) if df.height
                    else "(none)").splitlines())

    times = ["diff_us", "change_pct", "base_us", "variant_us", "base_count", "variant_count"]
    table("GPU timeline (all devices pooled)", frames["timeline"],
          ["measure", "diff_us", "change_pct", "base_us", "variant_us"])
    args = frames["op_args"].filter(pl.col("side") == "both")
    table(f"Biggest regressions by op and argument set (variant slower; top {top})",
          args.filter(pl.col("diff_ns") > 0).head(top), KEYS["op_args"] + times)
    table(f"Biggest improvements by op and argument set (variant faster; top {top})",
          args.filter(pl.col("diff_ns") < 0).head(top), KEYS["op_args"] + times)
    table(f"Kernel categories that moved (default rules; top {top})",
          frames["categories"].filter(pl.col("diff_ns") != 0).head(top), ["kernel_category", "side", *times])
    tree = frames["tree"].filter(pl.col("self_diff_ns") != 0).head(top)
    tree = tree.with_columns(pl.Series("module", [_module_of(p) for p in tree["path"]], dtype=pl.String))
    table(f"Where in the call tree (change not explained by a child present in both; top {top})", tree,
          ["name", "input_dims", "module", "self_diff_us", "diff_us"])
    one_sided = frames["op_args"].filter(pl.col("side") != "both")
    table(f"Op and argument sets on one side only (top {top} by GPU time)", one_sided.head(top),
          ["side", *KEYS["op_args"], "diff_us", "base_count", "variant_count"])
    out.append("")
    parts = []
    for level in ("ops", "op_args", "modules", "kernels", "categories", "tree"):
        df = frames[level]
        counts = []
        for side in ("base_only", "variant_only"):
            rows = df.filter(pl.col("side") == side)
            ms = abs(rows["diff_ns"].sum()) / 1e6 if rows.height else 0.0
            counts.append(f"{rows.height:,} {side.replace('_', ' ')} ({ms:,.3f} ms)")
        parts.append(f"{level.replace('_', ' ')}: " + ", ".join(counts))
    line = "One side only  " + "; ".join(parts)
    out += _wrap(line, width)
    out.append("(kernel names rarely match across vendors and versions: `--level kernels` lists them)")
    if width is not None:
        out = [fit_line(ln, width) for ln in out]
    return "\n".join(out) + "\n"


def _module_of(path: str) -> str:
    """The innermost nn.Module above the last node of a diff_tree path ('' when none)."""
    above = [p for p in path.split(" > ")[:-1] if p.startswith("nn.Module: ")]
    return above[-1] if above else ""


def _wrap(line: str, width: int | None) -> list[str]:
    import textwrap

    if width is None:
        return [line]
    return textwrap.wrap(line, width=width, subsequent_indent="               ", break_long_words=False,
                         break_on_hyphens=False)


def _slower(frames: dict, pct: float) -> str | None:
    """The message of --fail-if-slower when the variant's GPU span exceeds the baseline's by more than pct % (with
    --ranks pair: the first rank whose span does; with --ranks job: the spans summed over the ranks)."""
    span = frames["timeline"].filter(frames["timeline"]["measure"] == "span")
    for row in span.iter_rows(named=True):
        b, v = row["base_ns"], row["variant_ns"]
        if b is None or v is None:  # a trace without GPU activity: no span to compare
            continue
        if b and 100.0 * (v - b) / b > pct:
            who = f"rank {row['rank']}'s" if "rank" in row else "the variant's"
            return (f"{who} GPU span is {100.0 * (v - b) / b:.2f} % above the baseline's ({b / 1e6:,.3f} ms -> "
                    f"{v / 1e6:,.3f} ms), more than --fail-if-slower {pct:g}")
    return None


def rank_screen(frames: dict, labels: tuple[str, str], top: int, width: int | None) -> str:
    """The first screen of --ranks pair: each rank's GPU span and busy time, then the biggest regressions and
    improvements by op and argument set over all ranks (rows of diffs.rank_frames)."""
    import polars as pl

    from tracesql.render.output import fit_line, format_table

    labels = (terminal_text(labels[0]), terminal_text(labels[1]))  # names from the traces, shown escaped
    out = [f"== base {labels[0]}", f"   variant {labels[1]}", "(rank r of the baseline against rank r of the variant)"]

    def table(title: str, df, cols: list[str]) -> None:
        out.append("")
        out.append(title)
        out.extend((format_table(display(df).select(cols), max_rows=None, width=width) if df.height
                    else "(none)").splitlines())

    tl = frames["timeline"].filter(pl.col("measure").is_in(["span", "busy"]))
    table("GPU span and busy time per rank", tl, ["rank", "measure", "side", "diff_us", "change_pct", "base_us",
                                                  "variant_us"])
    times = ["diff_us", "change_pct", "base_us", "variant_us", "base_count", "variant_count"]
    args = frames["op_args"].filter(pl.col("side") == "both")
    table(f"Biggest regressions by rank, op and argument set (variant slower; top {top})",
          args.filter(pl.col("diff_ns") > 0).sort("diff_ns", "rank", descending=[True, False]).head(top),
          ["rank", *KEYS["op_args"], *times])
    table(f"Biggest improvements by rank, op and argument set (variant faster; top {top})",
          args.filter(pl.col("diff_ns") < 0).sort("diff_ns", "rank").head(top), ["rank", *KEYS["op_args"], *times])
    one = frames["op_args"].filter(pl.col("side") != "both")
    out.append("")
    out += _wrap(f"One side only  op and argument sets: {one.filter(pl.col('side') == 'base_only').height:,} base "
                 f"only, {one.filter(pl.col('side') == 'variant_only').height:,} variant only (`--level op_args`)",
                 width)
    if width is not None:
        out = [fit_line(ln, width) for ln in out]
    return "\n".join(out) + "\n"


OLD_FORM = ("diff takes BASE VARIANT, each DATASET[:TRACE] (`tracesql diff DS:TRACE_A DS:TRACE_B`), no longer "
            "DATASET BASE VARIANT")


def open_args(args):
    """The BASE and VARIANT arguments (each ``DATASET[:TRACE]``) opened: (the dataset opened over both sides, the
    baseline's trace_id, the variant's trace_id in it), tracesql.api.diff.open_pair; close the dataset when done.
    UsageError for the old form `diff DATASET BASE VARIANT`."""
    from tracesql.api.diff import open_pair

    if getattr(args, "extra", None) is not None:
        raise UsageError(OLD_FORM)
    return open_pair(args.base, args.variant)


def _side_label(side, other) -> str:
    """A side's trace as the first screen names it: its label, after DATASET: when the two datasets differ."""
    label = ", ".join(side.labels) if len(side.labels) <= 3 else f"{side.labels[0]} ... {side.labels[-1]}"
    same = side.dataset.resolve() == other.dataset.resolve()
    return label if same else f"{side.dataset}:{label}"


def _diff_hta(args) -> int:
    """--style hta: HTA's TraceDiff results for BASE (HTA's control) and VARIANT (its test), one file per result
    (tracesql.peers.hta.diff.files: compare_traces*, ops_diff*, ops_summary_*) into --out, or printed."""
    from tracesql.peers.hta import diff as diff_hta
    from tracesql.render.formats import write
    from tracesql.render.output import terminal_width
    from tracesql.render.sections import Document, Section

    fmt = args.format or ("csv" if args.out else "table")
    if fmt not in ("table", "csv", "json"):
        raise UsageError(f"--style hta writes table, csv or json, not {fmt}")
    if args.level or args.fail_if_slower is not None or args.top is not None or args.output or args.names:
        raise UsageError("--style hta writes HTA's TraceDiff files: --level, --top, --fail-if-slower, --output and "
                         "--names do not apply (use --out DIR)")
    ds, base_id, variant_id = open_args(args)
    with ds:
        results = diff_hta.files(ds, base_id, variant_id)
    width = None if args.wide or args.out else terminal_width()
    for path in write(Document([Section(name, df) for name, df in results]), fmt, out=args.out, width=width):
        print(terminal_text(path), file=sys.stderr)
    return 0


def cmd_diff(args) -> int:
    from tracesql.api import diff as diffs
    from tracesql.render.output import frame_json, terminal_width, write_frame, write_text

    if args.extra is not None:
        raise UsageError(OLD_FORM)
    if args.ranks and args.style in ("hta", "tracelens"):
        raise UsageError(f"--ranks goes with the native style, not --style {args.style}")
    if args.style == "hta":  # HTA's TraceDiff results (tracesql.peers.hta.diff)
        return _diff_hta(args)
    if args.style == "tracelens":  # TraceLens's comparison files (tracesql.peers.tracelens.diff)
        return _cmd_diff_tracelens(args)
    if args.names:
        raise UsageError("--names goes with --style tracelens")
    fmt = args.format or ("csv" if args.out else "table")
    if fmt == "html" and (args.level or args.ranks == "pair" or (args.out is None) == (args.output is None)):
        raise UsageError("--format html writes the whole diff of two traces (or two jobs with --ranks job) as one "
                         "page: give --output FILE or --out DIR, no --level, no --ranks pair")
    if args.out and fmt == "table":
        raise UsageError("--out writes csv, json or parquet files, not a table")
    if args.out and args.output:
        raise UsageError("--out DIR and --output FILE cannot be used together")
    if args.level is None and not args.out and fmt in ("csv", "parquet"):
        raise UsageError(f"--format {fmt} needs --level LEVEL (one level) or --out DIR (a file per level)")
    if args.fail_if_slower is not None and args.fail_if_slower < 0:
        raise UsageError(f"--fail-if-slower must be 0 or more, not {args.fail_if_slower:g}")
    levels = [args.level] if args.level else list(LEVELS)
    with diffs.open_sides(args.base, args.variant) as sides, \
            diffs.shared_computed(sides.ds, [*sides.base_ids, *sides.variant_ids]):
        ids = diffs.job_ids(sides) if args.ranks else diffs.one_each(sides)
        labels = (_side_label(sides.base, sides.variant), _side_label(sides.variant, sides.base))
        needed = set(levels) | {"timeline", "steady"}
        if not args.level and not args.out and fmt == "table":
            needed.discard("perf")  # the first screen does not show the compute model
            if args.ranks == "pair":
                needed = {"timeline", "op_args"}
        if args.ranks == "pair":
            frames = {lv: diffs.rank_frames(sides, lv) for lv in needed}
        else:
            frames = {lv: diffs.level_frame(sides.ds, ids[0], ids[1], lv) for lv in needed}
    top = 10 if args.top is None else args.top
    if fmt == "html":
        for p in _diff_html(frames, labels, ids, top, levels, args.output, args.out):
            print(terminal_text(str(p)), file=sys.stderr)
    elif args.out:
        from tracesql.render.formats import write
        from tracesql.render.sections import Document, Section

        sections = [Section(f"diff_{lv}", display(frames[lv])) for lv in levels]
        for path in write(Document(sections), fmt, out=args.out, across=frozenset(s.name for s in sections)):
            print(terminal_text(str(path)), file=sys.stderr)
    elif args.level:
        df = display(frames[args.level])
        if df.height == 0 or args.top == 0:
            raise EmptySelection("--top 0 selects no rows" if args.top == 0
                                 else f"no {args.level} rows in the two traces")
        write_frame(df.head(args.top) if args.top is not None else df, fmt, args.output, wide=args.wide)
    elif fmt == "json":
        import json

        doc = {"base": {"trace_id": ids[0], "trace": labels[0]}, "variant": {"trace_id": ids[1], "trace": labels[1]}}
        doc.update({lv: frame_json(display(frames[lv])) for lv in levels})
        write_text(json.dumps(doc) + "\n", args.output)
    else:
        width = None if args.wide or args.output else terminal_width()
        write_text(rank_screen(frames, labels, top, width) if args.ranks == "pair"
                   else first_screen(frames, labels, ids, top, width), args.output)
    if args.fail_if_slower is not None:
        msg = _slower(frames, args.fail_if_slower)
        if msg:
            print(terminal_text(f"tracesql: {msg}"), file=sys.stderr)
            return EXIT_SLOWER
    return 0


def _diff_html(frames: dict, labels: tuple[str, str], ids: tuple[str, str], top: int, levels: list[str],
               output: str | None, out: str | None) -> list[Path]:
    """`diff --format html`: the first screen, then every level with what it compares (its SQL declaration), its
    charts (tracesql.render.report_charts.diff_charts: the biggest regressions and improvements as a diverging bar,
    the timelines side by side) and its table; one self-contained page (tracesql.render.report_html). With ``out``,
    DIR/diff.html and each chart's Vega-Lite spec in DIR/charts/."""
    from tracesql.render.formats import write
    from tracesql.render.report_charts import diff_charts
    from tracesql.render.sections import Document, Section

    docs = {o.name: o.doc for o in outputs("diff-level")}
    sections = []
    for lv in levels:
        df = display(frames[lv])
        about = docs.get(lv, "").replace("variant_id", "variant").replace("base_id", "base")
        sections.append(Section(f"diff_{lv}", df, title=lv, about=about, charts=diff_charts(lv, df)))
    doc = Document(sections, title=f"tracesql diff: {labels[0]} -> {labels[1]}",
                   head=first_screen(frames, labels, ids, top, 120), page_name="diff.html")
    return write(doc, "html", output=output, out=out)


def _check_tag(tag: str) -> None:
    """A --names tag is part of the file names TraceLens's comparison writes (``ops_unique_args_intersect_TAG2``):
    no path separator or control character, not '.' or '..', at most FILE_NAME_MAX characters."""
    import re

    from tracesql.escape import FILE_NAME_MAX

    if not tag or tag in (".", "..") or len(tag) > FILE_NAME_MAX or re.search(r"[/\\\x00-\x1f\x7f]", tag):
        raise UsageError(f"--names: {tag!r} cannot be part of a file name (a tag has no '/', '\\' or control "
                         f"character, is not '.' or '..', and has 1 to {FILE_NAME_MAX} characters)")


def _cmd_diff_tracelens(args) -> int:
    """`diff --style tracelens`: TraceLens's comparison files (TraceLens_compare_perf_reports_pytorch with --names
    TAG1 TAG2) of the two traces, written into --out (one CSV per file, as TraceLens writes them) or printed."""
    from tracesql.peers.tracelens import diff as diff_tracelens
    from tracesql.render.formats import write
    from tracesql.render.sections import Document, Section

    fmt = args.format or "csv"
    if fmt not in ("csv", "json", "table"):
        raise UsageError(f"--style tracelens writes csv, json or table, not {fmt}")
    if args.out and fmt == "table":
        raise UsageError("--out writes csv or json files, not a table")
    if args.level or args.fail_if_slower is not None or args.top is not None or args.output:
        raise UsageError("--level, --top, --fail-if-slower and --output go with --style native")
    for tag in args.names or ():
        _check_tag(tag)
    ds, base_id, variant_id = open_args(args)  # a graph replay's side opens its capture trace too
    with ds:
        tags = tuple(args.names) if args.names else diff_tracelens.default_tags(ds, base_id, variant_id)
        if tags[0] == tags[1]:
            raise UsageError(f"--names: the two tags must differ, not {tags[0]!r} twice")
        files = diff_tracelens.frames(ds, base_id, variant_id, tags)
    from tracesql.render.output import terminal_width

    width = terminal_width() if fmt == "table" and not args.out and not args.wide else None
    for path in write(Document([Section(name, df) for name, df in files]), fmt, out=args.out, width=width):
        print(terminal_text(path), file=sys.stderr)
    return 0


def register(subparsers) -> None:
    import argparse

    from tracesql.cli.common import _output_arg, finite_float, nonneg_int

    s = subparsers.add_parser(
        "diff", help="compare two traces (DATASET[:TRACE] each): GPU timeline, categories, ops, ops by argument set, "
                     "kernels",
        description="The trace VARIANT against the trace BASE (each DATASET[:TRACE]; two datasets or one), level by "
                    "level, each row with the baseline's and the variant's value, the difference and the change "
                    "in %, sorted by the size of the difference; rows present on one side only are kept and "
                    "flagged. Without --level, the first screen: total change, biggest regressions and improvements "
                    "by op and argument set, categories that moved, what exists on one side only. Times in µs.")
    s.add_argument("base", metavar="BASE", help="the baseline: DATASET[:TRACE], TRACE a trace_id or label as "
                   "--trace takes it (a dataset of one trace needs none)")
    s.add_argument("variant", metavar="VARIANT", help="the variant: DATASET[:TRACE], as BASE (`DS:a DS:b`: two "
                   "traces of one dataset)")
    s.add_argument("extra", nargs="?", help=argparse.SUPPRESS)
    s.add_argument("--level", "-l", choices=list(LEVELS),
                   help="one level, every row: timeline, steps (the k-th ProfilerStep of each trace), steady (mean "
                        "per step after the first), categories, ops, op_args (op, input dims, dtypes, strides, "
                        "concrete inputs), modules (nn.Module instances by path), kernels (short names), tree "
                        "(the merged call trees) or perf (the compute model's TFLOP/s, TB/s and %% of roofline per op "
                        "and argument set)")
    s.add_argument("--ranks", choices=list(RANK_MODES),
                   help="BASE and VARIANT are multi-rank jobs (a dataset, or DATASET:TRACE,TRACE,... one trace per "
                        "rank): pair compares rank r of the baseline with rank r of the variant (a rank column), job "
                        "the jobs as a whole, every time summed over the ranks")
    s.add_argument("--top", "-n", type=nonneg_int, metavar="N",
                   help="the first N rows of each list of the first screen (default 10), or of --level")
    s.add_argument("--fail-if-slower", type=finite_float, metavar="PCT",
                   help=f"exit with status {EXIT_SLOWER} (after the output) when the variant's GPU span is more than "
                        "PCT %% above the baseline's")
    s.add_argument("--format", "-f", choices=["table", "csv", "json", "parquet", "html"], default=None,
                   help="table (the default: the first screen, or the --level table), csv, json (without --level: one "
                        "object keyed by level) or parquet; with --out the default is csv; csv and parquet without "
                        "--level need --out; html: one page with the first screen, every level and charts (the "
                        "biggest regressions and improvements), --output FILE or --out DIR (tracesql[plot])")
    _output_arg(s)
    s.add_argument("--out", metavar="DIR", help="write one file per level into DIR (diff_<level>.csv|json|parquet)")
    s.add_argument("--wide", "-w", action="store_true", help="print the tables whole (no column left out, no name "
                   "shortened to fit the terminal)")
    s.add_argument("--style", choices=["native", "tracelens", "hta"], default="native",
                   help="native (the default: our definitions, the levels above) or a peer's comparison: tracelens "
                        "(TraceLens's comparison files: gpu_timeline, ops_summary, kernel_summary and the intersect / "
                        "only_baseline / only_variant files of ops_unique_args, unified_perf_summary and the roofline "
                        "sheets), hta (HTA's TraceDiff results: compare_traces and ops_diff for the first iteration, "
                        "every iteration and each iteration both traces have; CPU, GPU or both; short names; BASE as "
                        "HTA's control, VARIANT as its test); csv by default, --out DIR for one file each")
    s.add_argument("--names", nargs=2, metavar=("TAG1", "TAG2"),
                   help="--style tracelens: the baseline's and the variant's tags, as TraceLens's --names (default: "
                        "the two trace file names)")
    s.set_defaults(func=cmd_diff)
