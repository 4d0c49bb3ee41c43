"""`tracesql report`: every analysis section of a dataset, in our native definitions or a peer's.

Styles:
  native     the sections the SQL library declares (``@output report-native``): the GPU timeline (whole traces
             and per step), the communication overlapped by computation, the kernel summary, the gaps (per
             stream, histogram, kernel transitions, idle causes), the launch statistics, and the op summaries
             and short kernels when the call tree's views are installed, the launch queue per stream, the
             memory copies by kind, and the memory per device and over time (traces with [memory] events)
  tracelens  gpu_timeline, kernel_summary, ops_summary, ops_summary_by_category, ops_unique_args,
             unified_perf_summary, short_kernel_histogram, short_kernels_summary and the perf-model sheets
             (GEMM, SDPA_fwd, UnaryElementwise, BinaryElementwise, Reduce_fwd, Normalization, CONV_fwd: those
             a trace has ops for): TraceLens's file names, columns and definitions
  hta        temporal_breakdown, idle_time_breakdown, kernel_type_breakdown, cuda_kernel_launch_stats,
             comm_comp_overlap, queue_length_summary, memory_bw_summary: HTA's file names, columns and
             definitions

Peer-style sections are per trace: with several traces and --out, each trace gets a sub-folder named
after its file. A native report of several traces starts with traces_overview, kernels_across_traces and
ops_across_traces (the traces side by side), written whole at the top of --out. A section whose views are not
defined in this installation is skipped with a note.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import polars as pl

from tracesql.api import analysis
from tracesql.api.arch import set_arch
from tracesql.errors import DatasetError
from tracesql.escape import terminal_text
from tracesql.render.formats import FORMATS, write
from tracesql.render.output import histogram_bars
from tracesql.render.sections import Document, Section
from tracesql.store.sqlmodules import materialized, outputs

STYLES = ("native", "tracelens", "hta")


def materialized_views(style: str) -> list[str]:
    """Views the report of a style reads many times, computed once per report (Dataset.materialized), in
    dependency order: those the SQL library tags ``@materialize report`` (native) or ``report-<style>``."""
    return materialized("report" if style == "native" else f"report-{style}")


def _q(ds, query: str, params=None) -> pl.DataFrame:
    return analysis._q(ds, query, params)


# ---- section builders: each returns a DataFrame (or None when its views are missing) ------------------

def _gaps_each_trace(ds, trace: str | None = None, **kw) -> pl.DataFrame:
    """analysis.gaps of each trace on its own, a histogram over the trace's own range (up to its largest gap) and
    with bars: a trace's folder is then the same whatever other traces the report covers, and a task that opens
    the trace alone writes it (tracesql.api.archive_report)."""
    ids = analysis.trace_ids(ds, trace)
    df = (pl.concat([analysis.gaps(ds, trace=t, **kw) for t in ids]) if len(ids) > 1
          else analysis.gaps(ds, trace=trace, **kw))
    return histogram_bars(df) if kw.get("what") == "histogram" else df


# The functions a native section may show its object with (``@output report-native ... CALL name arg=value``), by
# the command whose frames they are (tracesql timeline, kernels, gaps, launches), called for the report's traces.
_CALLS: dict[str, Callable[..., pl.DataFrame]] = {
    "timeline": analysis.timeline, "kernels": analysis.kernel_summary, "gaps": analysis.gaps,
    "gaps_each_trace": _gaps_each_trace, "launches": analysis.launch_stats}


def _native_sections(ds, ids: list[str], trace: str | None) -> dict:
    """The native sections, in order (the SQL library's ``@output report-native``): name -> a function computing
    its frame. A section declared by a module that is not installed (the call tree's op summaries) is absent."""
    from functools import partial

    inn = analysis._in(ids)
    out = {}
    for o in outputs("report-native"):
        if o.call is None:
            out[o.name] = partial(_q, ds, o.query(f"trace_id IN {inn}"))
        elif o.call in _CALLS:
            out[o.name] = partial(_CALLS[o.call], ds, trace=trace, **dict(o.call_args))
        else:
            raise DatasetError(f"@output report-native {o.name}: no function {o.call!r} to call (known: "
                               f"{', '.join(_CALLS)})")
    return out


# Native sections over all the traces of a report (sql/gpu/across_traces.sql, ``@output report-across``), written
# whole at the top of --out: name -> query.
ACROSS_TRACES = {o.name: o.query() for o in outputs("report-across")}
# Native sections shown only when they have rows (``@output ... IF ROWS``: the ranks of multi-rank jobs).
IF_ROWS = frozenset(o.name for o in outputs("report-native") + outputs("report-across") if o.if_rows)


def shown(sections: list[Section]) -> list[Section]:
    """The sections a report shows: those declared IF ROWS only when they have rows."""
    return [s for s in sections if s.frame.height or s.name not in IF_ROWS]


def _template(o) -> str:
    """A peer section's query, the object read ({v}) and the traces ({ids}) left to fill in."""
    return o.query("trace_id IN {ids}", source="{v}")


# Peer sections (the SQL library's ``@output report-tracelens``, ``report-hta``): (file name, view, query), in the
# peer's order of writing; the view has trace_id first, dropped on output. TraceLens's perf-model sheets (and
# unified_perf_summary) are written only for a trace with rows, with the columns TraceLens writes for that trace
# (the view's sheet_columns).
TRACELENS = [(o.name, o.object, _template(o)) for o in outputs("report-tracelens")]
HTA = [(o.name, o.object, _template(o)) for o in outputs("report-hta")]
# TraceLens's inference report run with --group_by_parent_module (Reporting/generate_perf_report_pytorch_inference.py,
# generate_perf_report_pytorch: include_call_stack=group_by_parent_module gives every launcher its parent_module;
# TreePerfAnalyzer.get_df_kernel_launchers_summary_module / _summary_by_category_module and
# get_df_kernel_launchers_unique_args(group_by_parent_module=True) then group by it): ``@output
# report-tracelens-module`` names the sections that replace those of the same position, file name included (the
# per-module summaries; the perf-model sheets grouped by num_kernels too, over a graph replay merged with its
# capture trace, with the ops of TraceLens's inference extension, named as that report names them, the backward
# ones without rows; its unified_perf_summary with call stacks: peers/tracelens/perf_infer*), and the sheets only
# that report has, after the others.
_BASE = {o.position: o for o in outputs("report-tracelens")}
TRACELENS_BY_MODULE = {_BASE[o.position].object: (o.name, o.object, _template(o))
                       for o in outputs("report-tracelens-module") if o.position in _BASE}
TRACELENS_INFERENCE = [(o.name, o.object, _template(o)) for o in outputs("report-tracelens-module")
                       if o.position not in _BASE]


def _peer_section(ds, view: str, query: str | None, ids: list[str]) -> dict[str, pl.DataFrame | None]:
    """One section for every trace in ids (one query for all of them): {trace_id: DataFrame}.

    The views keep each trace's rows in the peer's order; an empty table is returned for a trace without
    rows, None for a perf sheet (a view with a sheet_columns column) without rows. A trace without CPU ops
    gets TraceLens's reduced columns for kernel_summary and short_kernels_summary."""
    inn = analysis._in(ids)
    no_ops: set[str] = set()
    if view in ("tl_kernel_summary", "tl_short_kernels_summary"):
        with_ops = {r[0] for r in ds.con.sql(f"SELECT DISTINCT trace_id FROM events WHERE trace_id IN {inn} "
                                              "AND cat = 'cpu_op'").fetchall()}
        no_ops = set(ids) - with_ops

    def run(v: str, tids: list[str]) -> dict[str, pl.DataFrame | None]:
        q = (query or "SELECT * FROM {v} WHERE trace_id IN {ids}").format(v=v, ids=analysis._in(tids))
        df = _q(ds, q).with_row_index("_row")
        parts = {k[0]: g.sort("_row").drop("_row", "trace_id")
                 for k, g in df.group_by("trace_id", maintain_order=True)} if df.height else {}
        if "sheet_columns" in df.columns:  # a perf sheet: its trace's columns, nothing for a trace without rows
            return {t: parts[t].select(parts[t]["sheet_columns"][0].to_list()) if t in parts else None
                    for t in tids}
        empty = df.head(0).drop("_row", "trace_id")
        return {t: parts.get(t, empty) for t in tids}

    out = run(view, [t for t in ids if t not in no_ops]) if len(no_ops) < len(ids) else {}
    if no_ops:
        if view == "tl_short_kernels_summary":  # TraceLens groups by kernel name alone then
            out.update(run("tl_short_kernels_summary_by_name", sorted(no_ops)))
        else:  # and has no Parent cpu_op column in its kernel_summary
            out.update({t: None if df is None else df.drop("Parent cpu_op")
                        for t, df in run(view, sorted(no_ops)).items()})
    return out


def set_pseudo_ops(ds, style: str, on: bool) -> None:
    """TraceLens's --enable_pseudo_ops for this connection (sql/peers/tracelens/links.sql, perf_infer.sql): the
    sglang_profiler op renaming and the pseudo ops of its tree extensions; off, as in TraceLens's CLIs, unless
    ``on``. The views alone (the variable unset) apply them. Style native or hta with ``on``: a UsageError."""
    from tracesql.errors import UsageError

    if style != "tracelens":
        if on:
            raise UsageError("--pseudo-ops applies to --style tracelens")
        return
    ds.con.execute("SET VARIABLE tracesql_tl_pseudo_ops = ?", [on])



def build(ds, style: str = "native", trace: str | None = None, by_module: bool = False, arch: str | None = None,
          pseudo_ops: bool = False, charts: bool = False) -> list[Section]:
    """All sections of a report (tracesql.render.sections.Section), in order: a native section covers every
    selected trace in one frame (trace None); a peer section is one trace's (trace: its label), TraceLens's
    multi-rank files a job's (trace: job<J>).

    by_module (style tracelens): TraceLens's inference report with --group_by_parent_module, whose ops_summary,
    ops_summary_by_category and ops_unique_args group by the launcher's parent nn.Module too, and whose
    perf-model sheets group by num_kernels and add the inference extension's sheets (TRACELENS_INFERENCE).
    arch: the GPU of the roofline (set_arch).
    pseudo_ops (style tracelens): TraceLens's --enable_pseudo_ops (set_pseudo_ops).
    charts (style native): each section's charts (tracesql.render.report_charts) and a roofline section (one per
    trace with modelled ops, as ``tracesql perf --plot``), for a format that draws them.

    The shared views are computed once for the report (Dataset.materialized; with ``trace``, for that trace
    only) and dropped after it.

    Sections whose views are not defined are reported on stderr and left out.
    """
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}")
    ids = analysis.trace_ids(ds, trace)
    views = materialized_views(style)
    if by_module and style == "tracelens":  # the inference report's merged tree (peers/tracelens/perf_infer)
        views += materialized("report-tracelens-inference")
    with ds.scope():
        set_arch(ds, style, arch)
        set_pseudo_ops(ds, style, pseudo_ops)
        with ds.materialized(views, ids if trace is not None else None):
            if style == "native":
                return _native(ds, ids, trace, charts, arch)
            return _peer(ds, style, ids, trace, by_module)


def _native(ds, ids: list[str], trace: str | None, charts: bool, arch: str | None) -> list[Section]:
    decl = {o.name: o for o in outputs("report-native") + outputs("report-across")}
    frames: list[tuple[str, pl.DataFrame]] = []
    if len(ids) > 1 and analysis.has_view(ds, "traces_overview"):  # several traces: side by side first
        frames += [(name, _q(ds, query)) for name, query in ACROSS_TRACES.items()]
    frames += [(name, fn()) for name, fn in _native_sections(ds, ids, trace).items()]
    out = shown([Section(name, df, title=decl[name].title if name in decl else "",
                         about=decl[name].about if name in decl else "", if_rows=name in IF_ROWS)
                 for name, df in frames])
    if charts:
        from tracesql.render.report_charts import section_charts

        for s in out:
            s.charts = section_charts(s.name, s.frame)
        out += _roofline(ds, ids, arch)
    return out


def _roofline(ds, ids: list[str], arch: str | None) -> list[Section]:
    """The roofline section of a page: one chart per trace with ops that have a FLOP and byte model (tracesql perf),
    its frame the charts' points."""
    from tracesql.api import perf
    from tracesql.errors import UsageError

    labels = analysis.trace_labels(ds)
    roofs: list[tuple[str, dict]] = []
    for tid in ids:
        try:
            roofs.append((labels[tid], perf.roofline_spec(ds, trace=tid, arch=arch)))
        except UsageError:  # no modelled op with FLOPs and bytes in this trace
            pass
    if not roofs:
        return []
    points = pl.DataFrame([{"trace": label, **p} for label, spec in roofs for p in spec["layer"][-1]["data"]["values"]])
    return [Section("roofline", points, title="Roofline", charts=roofs,
                    about="One point per op and argument set with a FLOP and byte model (tracesql perf): achieved "
                          "TFLOP/s against FLOP/byte, coloured by family, sized by GPU time, under the device's "
                          "roofs when the trace names its GPU.")]


def peer_sections(style: str, by_module: bool = False) -> list[tuple[str, str, str]]:
    """A peer report's sections, in order: (file name, view, query); with by_module (style tracelens) those of
    TraceLens's inference report (TRACELENS_BY_MODULE, TRACELENS_INFERENCE)."""
    sections = TRACELENS if style == "tracelens" else HTA
    if by_module and style == "tracelens":
        sections = [TRACELENS_BY_MODULE.get(v, (f, v, q)) for f, v, q in sections] + TRACELENS_INFERENCE
    return sections


def _peer(ds, style: str, ids: list[str], trace: str | None, by_module: bool) -> list[Section]:
    names = dict(ds.con.sql(f"SELECT trace_id, label FROM trace_labels WHERE trace_id IN {analysis._in(ids)}")
                 .fetchall())
    sections = peer_sections(style, by_module)
    missing = [view for _, view, _ in sections if not analysis.has_view(ds, view)]
    if missing:
        print(f"tracesql report: views not available in this installation, sections skipped: {', '.join(missing)}",
              file=sys.stderr)
    per_section = [(fname, _peer_section(ds, view, query, ids)) for fname, view, query in sections
                   if view not in missing]
    out: list[Section] = []
    for tid in ids:
        out += peer_files([Section(fname, df, trace=names.get(tid, tid)) for fname, frames in per_section
                           if (df := frames[tid]) is not None])
    if style == "tracelens" and trace is None:
        out.extend(_tracelens_multirank(ds))
    return out


# TraceLens's short_kernels_summary.csv when it has short kernels but every one lacks a grouping key (old traces
# record no Input Strides or Concrete Inputs): pandas writes the aggregation's two-level column header.
TL_SHORT_KERNELS_UNGROUPED = ("Kernel duration (µs),Kernel duration (µs),Kernel duration (µs)\n"
                              "sum,count,mean\n")

# TraceLens's multi-rank report files (tracesql.api.comm.tracelens_files): written with their header when empty.
MULTIRANK_FILES = {"nccl_summary_implicit_sync", "nccl_summary_long", "nccl_long", "nccl_implicit_sync",
                   "straggler_summary"}


def peer_files(sections: list[Section]) -> list[Section]:
    """A peer's files of one trace as the peer writes them when a table has no rows: an empty file (pandas writes
    nothing for a frame without columns), but short_kernel_histogram with its header, and TraceLens's
    short_kernels_summary as a lone newline without short kernels, the aggregation's two-level header when the
    histogram has some (its group keys left them all out), and HTA's frequent_cuda_kernel_sequences as '""'. A
    group-by's describe() (describe_header) is written under pandas's two-level header."""
    short = any(s.name == "short_kernel_histogram" and s.frame.height for s in sections)
    for s in sections:
        s.csv_head = describe_header(s.frame.columns)
        if s.name == "short_kernels_summary":
            s.empty_csv = TL_SHORT_KERNELS_UNGROUPED if short else "\n"
        elif s.name == "frequent_cuda_kernel_sequences":
            s.empty_csv = '""\n'  # HTA returns a frame without columns when it finds no sequence
        elif s.name != "short_kernel_histogram" and "trace" not in s.frame.columns:
            s.empty_csv = ""
    return sections


# pandas's describe() statistics, in its order: a peer frame whose columns end with 'value/<each of these>' is a
# group-by's describe() (HTA's counter summaries), written under pandas's two-level header.
DESCRIBE = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]


def describe_header(columns: list[str]) -> str | None:
    """The CSV header pandas writes for a group-by's describe() (None for any other frame): the frame's columns are
    the group keys, then 'value/statistic' for each statistic of DESCRIBE; pandas writes a line per column level,
    the keys' cells blank, then a line of the keys' names."""
    keys, stats = columns[:-len(DESCRIBE)], columns[-len(DESCRIBE):]
    pairs = [c.split("/", 1) for c in stats]
    if not keys or any(len(p) != 2 or p[0] != pairs[0][0] for p in pairs) or [p[1] for p in pairs] != DESCRIBE:
        return None
    blank = [""] * len(keys)
    return "".join(",".join(row) + "\n" for row in (blank + [p[0] for p in pairs], blank + DESCRIBE,
                                                      keys + [""] * len(pairs)))


def _tracelens_multirank(ds) -> list[Section]:
    """TraceLens's multi-rank collective report of every job of two or more ranks with collective kernels
    (tracesql.api.comm.tracelens_jobs), labelled job<J> (its sub-folder with --out); its files are written with
    their header when empty (MULTIRANK_FILES)."""
    from tracesql.api import comm

    return [Section(fname, df, trace=f"job{job}", empty_csv=None if fname in MULTIRANK_FILES else "")
            for job in comm.tracelens_jobs(ds) for fname, df in comm.tracelens_frames(ds, job).items()]


def document(ds, style: str = "native", fmt: str = "table", trace: str | None = None, by_module: bool = False,
             arch: str | None = None, pseudo_ops: bool = False, head: bool = True) -> Document:
    """The report as a document for format ``fmt`` (tracesql.render.sections): its sections (build; with charts when
    the format draws them), the traces it covers, those without GPU events and, for a native report in a format
    that shows one and with ``head``, the first screen (tracesql.api.summary.render), computed with the sections."""
    f = FORMATS[fmt]
    ids = analysis.trace_ids(ds, trace)
    labels = analysis.trace_labels(ds)
    first = head and f.head and style == "native"
    with ds.scope():
        # the views the report and its first screen share are computed once for both, with the device and
        # TraceLens's pseudo-op switch set as the sections read them
        set_arch(ds, style, arch)
        set_pseudo_ops(ds, style, pseudo_ops)
        shared = materialized_views(style) + (materialized("summary") if first else [])
        with ds.materialized(shared, ids if trace is not None else None):
            sections = build(ds, style=style, trace=trace, by_module=by_module, arch=arch, pseudo_ops=pseudo_ops,
                             charts=f.charts)
            text = ""
            if first:
                from tracesql.api import summary

                text = summary.render(ds, trace=trace, w=f.head_width, arch=arch)
    title = f"tracesql report: {Path(ds.path).name}" + (f" ({labels[ids[0]]})" if trace is not None else "")
    return Document(sections, title=title, head=text, traces=[labels[t] for t in ids],
                    without_gpu=frozenset(label for label, _ in no_gpu(ds, trace)))


def report(ds, style: str = "native", fmt: str = "table", out: str | None = None, output: str | None = None,
           trace: str | None = None, width: int | None = None, wide: bool = False, by_module: bool = False,
           arch: str | None = None, pseudo_ops: bool = False) -> list[Path]:
    """Build and print/write a report (tracesql.render.formats.write); returns the files written (empty when
    printing).

    style: native, tracelens or hta; fmt: a format of tracesql.render.formats.FORMATS (table, csv, json: printed,
    whole into ``output`` or one file per section into the folder ``out``; html: one page at ``output``, or
    ``out``/report.html with the charts' specs; xlsx: one workbook at ``output``); trace: a trace_id or label (None:
    every trace); width: printed tables fit this many characters (None: the terminal's width, see
    tracesql.render.output.terminal_width); wide: print them whole; by_module, arch, pseudo_ops: see build. A
    folder report names each trace without GPU events on stderr (it has no GPU section)."""
    if width is None and not wide:
        from tracesql.render.output import terminal_width

        width = terminal_width()
    try:
        folder = out is not None and FORMATS[fmt].document is None  # a file per section
        doc = document(ds, style, fmt, trace, by_module, arch, pseudo_ops, head=not folder)  # no first screen file
        if folder:
            for label, reason in no_gpu(ds, trace):
                print(terminal_text(f"tracesql report: {label}: no GPU sections, {reason}"), file=sys.stderr)
    except duckdb.Error as e:
        raise RuntimeError(f"report failed: {str(e).splitlines()[0]}") from e
    return write(doc, fmt, output=output, out=out, width=None if wide else width, across=frozenset(ACROSS_TRACES))


def no_gpu(ds, trace: str | None = None) -> list[tuple[str, str]]:
    """(label, reason) of each selected trace without GPU events (view overview_no_gpu): its report has no GPU
    section."""
    ids = analysis.trace_ids(ds, trace)
    return ds.con.sql(f"SELECT l.label, o.reason FROM overview_no_gpu o JOIN trace_labels l USING (trace_id) "
                      f"WHERE o.trace_id IN {analysis._in(ids)} ORDER BY l.label").fetchall()


def trace_sections(ds, style: str, trace: str | None = None, by_module: bool = False, arch: str | None = None,
                   pseudo_ops: bool = False) -> list[Section]:
    """The sections of a peer style's report of one trace in the report's order (``trace`` is needed when the
    dataset has several: a UsageError otherwise)."""
    from tracesql.errors import UsageError

    ids = analysis.trace_ids(ds, trace)
    if len(ids) != 1:
        raise UsageError(f"--style {style} --format xlsx writes the workbook of one trace and the dataset has "
                         f"{len(ids)}: give --trace")
    label = analysis.trace_labels(ds)[ids[0]]
    return [s for s in build(ds, style=style, trace=trace, by_module=by_module, arch=arch, pseudo_ops=pseudo_ops)
            if s.trace == label]


def section_specs(ds, section: str, trace: str | None = None) -> list[dict]:
    """The Vega-Lite specs of one native section's charts (tracesql.render.report_charts), one per trace: the
    section computed alone (no report around it)."""
    from tracesql.render.report_charts import CHARTS, section_charts

    if section not in CHARTS:
        raise ValueError(f"section {section!r} has no chart; these have: {', '.join(CHARTS)}")
    ids = analysis.trace_ids(ds, trace)
    with ds.scope():
        if section in ACROSS_TRACES:  # the traces side by side (a dataset's traces, or the trace alone)
            df = _q(ds, f"SELECT * FROM ({ACROSS_TRACES[section]}) WHERE trace_id IN {analysis._in(ids)}")
        else:
            df = _native_sections(ds, ids, trace)[section]()
    return [spec for _, spec in section_charts(section, df)]
