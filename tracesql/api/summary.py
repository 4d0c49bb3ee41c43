"""The first screen of `tracesql report` and `tracesql summary`: one screen per trace (GPUs, rank, span,
busy/idle, compute / exposed communication / exposed memory, top categories, kernels and ops, the largest idle
gaps, launch hints), after one compact line per trace when the dataset holds several.

Every number comes from the views of sql/gpu/overview.sql; this module only picks rows and formats them, in
plain fixed-width text that fits the terminal width (COLUMNS; 120 when unknown).
"""
from __future__ import annotations

import re
import shutil
import textwrap

import polars as pl

from tracesql.api import analysis
from tracesql.escape import terminal_text
from tracesql.store.sqlmodules import materialized, outputs

MIN_WIDTH = 80


def views() -> list:
    """The views of the first screen (the SQL library's ``@output summary``), in order."""
    return outputs("summary")


def overview(ds, trace: str | None = None, arch: str | None = None) -> dict[str, pl.DataFrame]:
    """{view name: its rows for the selected traces (all when trace is None)}, ordered for display. ``arch``: the
    device of the Compute line (report.set_arch, native style)."""
    from tracesql.api.arch import set_arch

    ids = analysis.trace_ids(ds, trace)
    inn = analysis._in(ids)
    with ds.scope():
        set_arch(ds, "native", arch)
        with ds.materialized(materialized("summary"), ids if trace is not None else None):
            return {o.name: analysis._q(ds, o.query(f"trace_id IN {inn}")) for o in views()}


def width() -> int:
    return max(MIN_WIDTH, shutil.get_terminal_size((120, 50)).columns)


def _cut(s: str, n: int) -> str:
    return s if len(s) <= n else s[:max(n - 1, 0)] + "…"


def _ms(ns) -> str:
    return "" if ns is None else f"{ns / 1e6:,.3f}"


def _us(ns) -> str:
    return "" if ns is None else f"{ns / 1e3:,.1f}"


def _pct(x) -> str:
    return "" if x is None else f"{x:.1f}"


def _table(headers: list[str], rows: list[list[str]], width: int, indent: int = 2) -> list[str]:
    """Fixed-width table: the first column left-aligned and cut to what the others leave of the width, the others
    right-aligned."""
    rest = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers) if i]
    room = width - indent - sum(w + 2 for w in rest)
    first = min(max([len(headers[0])] + [len(r[0]) for r in rows]), max(room, 12))

    def line(cells: list[str]) -> str:
        out = " " * indent + _cut(cells[0], first).ljust(first)
        for c, w in zip(cells[1:], rest, strict=True):
            out += "  " + c.rjust(w)
        return out.rstrip()

    return [line(headers)] + [line(r) for r in rows]


def _n(k: int, what: str) -> str:
    return f"{k:,} {what}" + ("" if k == 1 else "s")


def _device_label(r: dict, n_rows: int, t: dict) -> str:
    if not r["pooled"]:
        return f"device {r['device']}"
    if n_rows > 1:
        return "all devices"
    return "all (1 device)" if t["gpu_count"] == 1 else f"all ({_n(t['gpu_count'], 'device')})"


def _rows(df: pl.DataFrame, trace_id: str) -> list[dict]:
    return _shown(df.filter(pl.col("trace_id") == trace_id).to_dicts())


# A name the trace does not give (JSON null): shown as this in the first screen (an empty cell in tables).
NO_NAME = "[no name]"


def _shown(rows: list[dict]) -> list[dict]:
    """The rows with every text value as the terminal shows it (tracesql.escape.terminal_text: no control or
    bidirectional character reaches the screen)."""
    return [{k: terminal_text(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]


def _name(v) -> str:
    return NO_NAME if v is None else str(v)


def _gpu_line(t: dict) -> str:
    if t["gpu_models"] is None:
        gpus = f"{t['gpu_count']} device(s), no deviceProperties in the trace"
    else:
        gpus = f"{t['gpu_count']} × {t['gpu_models']}"
        if t["node_gpu_count"] and t["node_gpu_count"] != t["gpu_count"]:
            gpus += f" ({t['node_gpu_count']} visible to the process)"
    if t["rank"] is None:
        where = "no rank (single process)"
    else:
        where = f"rank {t['rank']}" + (f" of {t['world_size']}" if t["world_size"] is not None else "")
        if t["distributed_backend"]:
            where += f" ({t['distributed_backend']})"
    return f"GPU        {gpus}; {where}"


def screen(frames: dict[str, pl.DataFrame], trace_id: str, w: int) -> list[str]:
    """The first screen of one trace."""
    (t,) = _rows(frames["overview_traces"], trace_id)
    out = [_cut(f"== {_name(t['file_name'])} (trace {trace_id})", w), _cut(_gpu_line(t), w)]
    if t["span_ns"] is None:
        return out + ["Span       no GPU activity in this trace"]
    out.append(_cut(f"Span       {_ms(t['span_ns'])} ms from the first to the last GPU activity (profile "
                    f"{_ms(t['window_ns'])} ms); {t['n_events']:,} GPU events on {_n(t['n_streams'], 'stream')}", w))
    tl = _rows(frames["overview_timeline"], trace_id)
    out.append("")
    out += _table(["GPU time (% of span)", "span ms", "busy", "idle", "compute", "exposed comm", "exposed memory"],
                  [[_device_label(r, len(tl), t), _ms(r["span_ns"]), _pct(r["busy_pct"]), _pct(r["idle_pct"]),
                    _pct(r["compute_pct"]), _pct(r["comm_exposed_pct"]), _pct(r["memory_exposed_pct"])]
                   for r in tl], w, indent=0)
    cats = _rows(frames["overview_top_categories"], trace_id)
    if cats:
        out.append("")
        out.append(_cut("Categories " + ", ".join(f"{_name(c['kernel_category'])} {_pct(c['pct'])} %" for c in cats)
                        + " (Σ GPU time)", w))
    ks = _rows(frames["overview_top_kernels"], trace_id)
    if ks:
        out.append("")
        out += _table(["Top kernels by GPU time", "count", "total ms", "mean µs", "time %"],
                      [[_name(k["name"]), f"{k['count']:,}", _ms(k["total_ns"]), _us(k["avg_ns"]), _pct(k["time_pct"])]
                       for k in ks], w, indent=0)
    ops = _rows(frames["overview_top_ops"], trace_id)
    if ops:
        out.append("")
        out += _table(["Top ops by GPU time", "ops", "GPU events", "total ms", "time %"],
                      [[_name(o["op_name"] if o["hlo_module"] is None else f"{o['op_name']} ({o['hlo_module']})"),
                        f"{o['op_count']:,}", f"{o['kernel_count']:,}", _ms(o["kernel_time_ns"]),
                        _pct(o["time_pct"])] for o in ops], w, indent=0)
    out += _wrap_warning(_attribution_warning(_rows(frames["overview_attribution"], trace_id)), w)
    gaps = _rows(frames["overview_largest_gaps"], trace_id)
    if gaps:
        out.append("")
        out += _table(["Largest idle gaps: before -> after", "gap ms", "at ms", "stream", "host wait"],
                      [[f"{_name(g['prev_name'])} -> {_name(g['name'])}", _ms(g["gap_ns"]), _ms(g["at_ns"]),
                        f"{g['device']}:{g['stream']}" if g["device"] is not None else str(g["stream"]),
                        "yes" if g["host_wait"] else "no"] for g in gaps], w, indent=0)
    (h,) = _rows(frames["overview_launch_hints"], trace_id)
    out.append("")
    out += _wrap(_launch_line(h), w, "           ")
    verdict = ("launch-bound: the GPU mostly waits for the CPU to launch work (fewer, larger kernels or CUDA graphs "
               "help)" if h["launch_bound"] else f"not launch-bound: {h['launch_bound_reason']}")
    out += ["           " + line for line in _wrap(verdict, w - 11, "")]
    out += _wrap(_compute_line(frames, trace_id), w, "           ")
    return out


# more GPU time than this (%) without an op makes the first screen say so
PLACEHOLDER_WARN_PCT = 10.0


def _attribution_warning(rows: list[dict]) -> str | None:
    """The warning under the top ops when more than PLACEHOLDER_WARN_PCT % of the GPU time has no op
    (overview_attribution): how much, and how to give it one."""
    if not rows or (rows[0]["placeholder_pct"] or 0) <= PLACEHOLDER_WARN_PCT:
        return None
    a = rows[0]
    text = f"Warning    {_pct(a['placeholder_pct'])} % of GPU time has no op"
    fixes = []
    if (a["graph_placeholder_pct"] or 0) > 0:
        text += f" ({_pct(a['graph_placeholder_pct'])} % replayed by CUDA/HIP graphs"
        text += f", {a['unplaced_graphs']:,} graph launches not placed on a twin)" if a["unplaced_graphs"] else ")"
        fixes.append("give the graphs' capture trace or an eager run of the same code (tracesql ingest REPLAY "
                     "--capture FILE or --eager FILE, or tracesql twin DATASET REPLAY TWIN), or record with CUDA "
                     "graph node ids (Kineto with CUPTI on CUDA 12+ writes `graph node id`)")
    if (a["no_launch_pct"] or 0) > 0:
        fixes.append(f"{_pct(a['no_launch_pct'])} % was launched before the profiler's CPU window opened: start "
                     "profiling earlier or record more steps")
    return text + (": " + "; ".join(fixes) if fixes else "")


def _wrap_warning(text: str | None, w: int) -> list[str]:
    return ([""] + _wrap(text, w, "           ")) if text else []


def _launch_line(h: dict) -> str:
    """The Launches line (overview_launch_hints): GPU idle time and the part of it spent waiting for launches (both
    times on the pooled timeline, at most the span); stream sums only beside sums."""
    line = (f"Launches   GPU idle {_ms(h['gpu_idle_ns'])} ms ({_pct(h['gpu_idle_pct'] or 0)} % of the "
            f"span), of which {_ms(h['idle_host_wait_ns'])} ms ({_pct(h['idle_host_wait_pct'] or 0)} %) with a stream "
            f"waiting for a launch ({_n(h['host_wait_gaps'], 'host-wait gap')})")
    if h["n_streams"] > 1:
        line += (f"; summed over {h['n_streams']} streams, host waits {_ms(h['host_wait_sum_ns'])} ms of "
                 f"{_ms(h['stream_idle_sum_ns'])} ms stream idle time")
    if h["kernel_launches"]:
        line += (f"; {h['short_kernels']:,} of {h['kernel_launches']:,} kernel launches "
                 f"({_pct(h['short_kernel_pct'])} %) took longer than their kernel (median call "
                 f"{_us(h['launch_median_ns'])} µs, median kernel {_us(h['kernel_median_ns'])} µs)")
    return line


def _compute_line(frames: dict[str, pl.DataFrame], trace_id: str) -> str:
    """The compute model's line (perf_overview, perf_overview_worst): share of GPU time modelled, the GPU, and
    the hot ops farthest below their roofline."""
    (p,) = _rows(frames["perf_overview"], trace_id)
    line = (f"Compute    ops with a FLOP/byte model (tracesql perf): {_pct(p['modelled_pct'] or 0)} % of GPU time "
            f"({_pct(p['modelled_op_pct'] or 0)} % of op time)")
    if p["gpu"] is None:
        return line + f"; no roofline: {p['reason']}"
    if p["roofline_pct"] is None:  # a GPU (--arch) but no modelled op to place on its roofline
        return line + f"; {p['gpu']} roofline: no modelled op on it"
    worst = _rows(frames["perf_overview_worst"], trace_id)
    line += f", at {_pct(p['roofline_pct'])} % of the {p['gpu']} roofline"
    if worst:
        line += "; farthest below it: " + ", ".join(
            f"{_name(r['op_name'])} {_pct(r['roofline_pct'])} % ({r['bound']}, {_pct(r['time_pct'])} % of time)"
            for r in worst)
    return line


def _wrap(text: str, w: int, indent: str) -> list[str]:
    """``text`` in lines of at most ``w`` characters (a longer word alone on its line), continued after
    ``indent``; a number stays on the line of the unit after it (``37.3 %``, ``1.501 ms``)."""
    lines, cur = [], ""
    for word in re.sub(r"(\d) (%|ms|µs|s)(?=[ ,;)]|$)", "\\1\0\\2", text).split(" "):
        word = word.replace("\0", " ")
        if cur and len(cur) + 1 + len(word) > w:
            lines.append(cur)
            cur = indent + word
        else:
            cur = f"{cur} {word}" if cur else word
    return lines + [cur] if cur else lines


def compact(frames: dict[str, pl.DataFrame], w: int) -> list[str]:
    """One line per trace: file (without .json.gz; up to 40 columns), GPUs (up to 22), rank, span, busy, compute,
    exposed comm, and the top kernel in what is left of the width."""
    kern = {r["trace_id"]: r for r in _shown(frames["overview_top_kernels"].filter(pl.col("rank") == 1).to_dicts())}
    headers = ["trace", "GPUs", "rank", "span ms", "busy %", "compute %", "exp. comm %", "top kernel"]
    rows = []
    for t in _shown(frames["overview_traces"].to_dicts()):
        k = kern.get(t["trace_id"])
        rows.append([re.sub(r"\.json(\.gz)?$", "", _name(t["file_name"])),
                     f"{t['gpu_count']}× {t['gpu_models'] or '?'}",
                     "" if t["rank"] is None else str(t["rank"]), _ms(t["span_ns"]), _pct(t["busy_pct"]),
                     _pct(t["compute_pct"]), _pct(t["comm_exposed_pct"]),
                     "" if k is None else f"{_pct(k['time_pct'])} % {_name(k['name'])}"])
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    widths[0] = min(widths[0], 40)
    widths[1] = min(widths[1], 22)
    room = max(w - sum(x + 2 for x in widths[:-1]), 16)
    lines = []
    for r in [headers] + rows:
        cells = [_cut(r[0], widths[0]).ljust(widths[0]), _cut(r[1], widths[1]).ljust(widths[1])]
        cells += [c.rjust(x) for c, x in zip(r[2:-1], widths[2:-1], strict=True)]
        lines.append(("  ".join(cells) + "  " + _cut(r[-1], room)).rstrip())
    return lines


def _job_screen(ds, ids: list[str], w: int) -> list[str] | None:
    """The first screen of a dataset whose traces are all ranks of multi-rank jobs (tracesql.api.comm): per job, one
    line naming the straggler, the ranks side by side and the collectives that waited longest; None otherwise."""
    from tracesql.api import comm
    from tracesql.render.output import format_table

    if not analysis.has_view(ds, "comm_ranks_side_by_side"):
        return None
    jobs = comm.multirank_jobs(ds)
    if not jobs:
        return None
    in_jobs = {r[0] for r in ds.con.sql(
        f"SELECT DISTINCT trace_id FROM comm_ranks WHERE job_id IN ({', '.join(map(str, jobs))})").fetchall()}
    if not set(ids) <= in_jobs:
        return None
    out: list[str] = []
    for job in jobs:
        # a job line fits the width: the rest of a long one (missing ranks, partial matches) on indented lines
        out += [part for line in comm.job_lines(ds, job)
                for part in textwrap.wrap(terminal_text(line), w, subsequent_indent="    ", break_on_hyphens=False)]
        ranks = comm.ranks(ds, job).select(
            "rank", "span_us", "busy_pct", "compute_us", "gpu_comm_us", "transfer_us", "wait_us", "arrived_last",
            "late_us", "bounds_job")
        out += format_table(ranks, width=w).splitlines()
        top = comm.collectives(ds, job, top=5)
        keep = [c for c in ("seq", "coll_type", "dtype", "msg_bytes", "status", "latency_us", "start_skew_us",
                            "last_rank", "total_wait_us") if c in top.columns]
        out += ["", "Collectives with the most waiting"] + format_table(top.select(keep), width=w).splitlines()
        out.append("")
    out.append("One rank's screen: tracesql summary DATASET --trace RANK_FILE; every collective: tracesql collectives")
    return out


def render(ds, trace: str | None = None, w: int | None = None, arch: str | None = None) -> str:
    """The first screen(s) as text: the compact lines when there are several traces, then one screen per trace;
    for the ranks of multi-rank jobs, the jobs (ranks side by side, straggler, collectives) instead of a screen
    per rank. ``arch``: the device of the Compute line (as `report --arch`)."""
    w = w or width()
    frames = overview(ds, trace, arch=arch)
    ids = frames["overview_traces"]["trace_id"].to_list()
    out: list[str] = []
    if len(ids) > 1:
        out += compact(frames, w) + [""]
        if trace is None and (job := _job_screen(ds, ids, w)) is not None:
            return "\n".join(out + job) + "\n"
    for i, tid in enumerate(ids):
        if i:
            out.append("")
        out += screen(frames, tid, w)
    return "\n".join(out) + "\n"
