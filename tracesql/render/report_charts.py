"""The charts of the report's sections: for a section's frame (as the report shows it), Vega-Lite specs drawn from
its rows, one per trace.

A chart shows values of the frame and nothing else: each spec's data is a list of rows taken from the frame, with
the frame's own column names and values (times in the frame's µs, shares in its %), so that a chart can be read
back and checked against its section (tests/test_report_html.py). The top-N charts (kernels, ops) show the first
rows in the frame's order, which is by time.
"""
from __future__ import annotations

from collections.abc import Callable

import polars as pl

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
TOP = 15  # bars of a top-N chart


def _base(title: str, data: list[dict], width: int = 560) -> dict:
    return {"$schema": VEGA_LITE_SCHEMA, "title": title, "width": width, "data": {"values": data}}


def _rows(df: pl.DataFrame, cols: list[str]) -> list[dict]:
    return df.select(cols).to_dicts()


def _timeline(df: pl.DataFrame, trace: str) -> dict | None:
    """Stacked bar per device (and all devices pooled): compute, exposed communication, exposed memory, idle."""
    parts = {"compute_us": "compute", "comm_exposed_us": "exposed communication",
             "memory_exposed_us": "exposed memory", "idle_us": "idle"}
    if df.height == 0 or not set(parts) <= set(df.columns):
        return None
    rows = []
    for r in df.iter_rows(named=True):
        where = "all devices" if r["pooled"] else f"device {r['device']}"
        rows += [{"where": where, "part": label, "us": r[col]} for col, label in parts.items()]
    spec = _base(f"GPU time: {trace}", rows)
    spec.update(height={"step": 28}, mark="bar", encoding={
        "y": {"field": "where", "type": "nominal", "title": None, "sort": None},
        "x": {"field": "us", "type": "quantitative", "stack": "zero", "title": "µs"},
        "color": {"field": "part", "type": "nominal", "sort": list(parts.values()), "title": None},
        "order": {"field": "part_order", "type": "quantitative"},
        "tooltip": [{"field": "where"}, {"field": "part"}, {"field": "us", "format": ",.1f"}]})
    order = {label: i for i, label in enumerate(parts.values())}
    for row in rows:
        row["part_order"] = order[row["part"]]
    return spec


def _top_bars(title: str, label: str, value: str, color: str | None, unit: str) -> Callable:
    def make(df: pl.DataFrame, trace: str) -> dict | None:
        if df.height == 0 or label not in df.columns or value not in df.columns:
            return None
        cols = [label, value] + ([color] if color and color in df.columns else [])
        rows = _rows(df.head(TOP), cols)
        spec = _base(f"{title}: {trace}", rows)
        enc: dict = {"y": {"field": label, "type": "nominal", "sort": "-x", "title": None,
                           "axis": {"labelLimit": 360}},
                     "x": {"field": value, "type": "quantitative", "title": unit},
                     "tooltip": [{"field": c} for c in cols]}
        if color and color in df.columns:
            enc["color"] = {"field": color, "type": "nominal"}
        spec.update(height={"step": 18}, mark="bar", encoding=enc)
        return spec
    return make


def _histogram(title: str, unit: str) -> Callable:
    def make(df: pl.DataFrame, trace: str) -> dict | None:
        need = {"bin_start_us", "bin_end_us", "count"}
        if df.height == 0 or not need <= set(df.columns):
            return None
        rows = _rows(df, ["bin_start_us", "bin_end_us", "count"])
        spec = _base(f"{title}: {trace}", rows)
        spec.update(height=220, mark="bar", encoding={
            "x": {"field": "bin_start_us", "bin": {"binned": True}, "type": "quantitative", "title": unit},
            "x2": {"field": "bin_end_us"},
            "y": {"field": "count", "type": "quantitative", "title": "count"},
            "tooltip": [{"field": "bin_start_us"}, {"field": "bin_end_us"}, {"field": "count"}]})
        return spec
    return make


def _idle(df: pl.DataFrame, trace: str) -> dict | None:
    if df.height == 0 or not {"idle_category", "idle_us", "stream"} <= set(df.columns):
        return None
    rows = [{"stream": f"{r['device']}:{r['stream']}", "idle_category": r["idle_category"], "idle_us": r["idle_us"]}
            for r in df.iter_rows(named=True)]
    spec = _base(f"Idle time by cause: {trace}", rows)
    spec.update(height={"step": 24}, mark="bar", encoding={
        "y": {"field": "stream", "type": "nominal", "title": "stream"},
        "x": {"field": "idle_us", "type": "quantitative", "stack": "zero", "title": "µs"},
        "color": {"field": "idle_category", "type": "nominal", "title": None},
        "tooltip": [{"field": "stream"}, {"field": "idle_category"}, {"field": "idle_us", "format": ",.1f"}]})
    return spec


def _launch_delay(df: pl.DataFrame, trace: str) -> dict | None:
    if df.height == 0 or not {"api", "launch_delay_mean_us"} <= set(df.columns):
        return None
    rows = _rows(df.filter(pl.col("launch_delay_mean_us").is_not_null()), ["api", "launch_delay_mean_us", "calls"])
    if not rows:
        return None
    spec = _base(f"Mean delay from launch call to GPU start: {trace}", rows)
    spec.update(height={"step": 22}, mark="bar", encoding={
        "y": {"field": "api", "type": "nominal", "sort": "-x", "title": None},
        "x": {"field": "launch_delay_mean_us", "type": "quantitative", "title": "µs"},
        "tooltip": [{"field": "api"}, {"field": "calls"}, {"field": "launch_delay_mean_us", "format": ",.2f"}]})
    return spec


def _traces(df: pl.DataFrame, _: str) -> dict | None:
    """The traces side by side (traces_overview): each trace's GPU span as busy and idle time, the trace with the
    longest span marked (which of a job's ranks held the others up is ranks_overview's straggler, _ranks)."""
    if df.height < 2 or not {"trace", "span_ms", "busy_ms"} <= set(df.columns):
        return None
    longest = df.sort("span_ms", descending=True, nulls_last=True)["trace"][0]
    rows = []
    for r in df.iter_rows(named=True):
        if r["span_ms"] is None:
            continue
        name = r["trace"] if r.get("rank") is None else f"rank {r['rank']}: {r['trace']}"
        for part, ms in (("busy", r["busy_ms"]), ("idle", r["span_ms"] - (r["busy_ms"] or 0))):
            rows.append({"trace": name, "part": part, "ms": ms, "longest": r["trace"] == longest})
    spec = _base(f"GPU span per trace (longest: {longest})", rows)
    spec.update(height={"step": 22}, mark="bar", encoding={
        "y": {"field": "trace", "type": "nominal", "title": None, "sort": None, "axis": {"labelLimit": 360}},
        "x": {"field": "ms", "type": "quantitative", "stack": "zero", "title": "ms"},
        "color": {"field": "part", "type": "nominal", "sort": ["busy", "idle"], "title": None},
        "stroke": {"condition": {"test": "datum.longest", "value": "#d62728"}, "value": None},
        "strokeWidth": {"value": 2},
        "tooltip": [{"field": "trace"}, {"field": "part"}, {"field": "ms", "format": ",.3f"},
                    {"field": "longest"}]})
    return spec


def _ranks(df: pl.DataFrame, _: str) -> dict | None:
    """The ranks of each multi-rank job side by side (ranks_overview): a stacked bar per rank, its GPU span as
    compute, exposed communication, exposed memory and idle (they add up to span_ms), the job's straggler (the rank
    the others waited for longest, as `tracesql ranks` names it) outlined and named. A rank without GPU activity
    has no bar."""
    need = set(_RANK_PARTS) | {"job_id", "rank", "span_ms", "is_straggler"}
    if df.height == 0 or not need <= set(df.columns):
        return None
    jobs = df.get_column("job_id").n_unique() > 1
    rows, stragglers = [], []
    for r in df.iter_rows(named=True):
        where = (f"job {r['job_id']} " if jobs else "") + f"rank {r['rank']}"
        if r["is_straggler"]:
            stragglers.append(where)
            where += " (straggler)"
        if r["span_ms"] is None:
            continue
        rows += [{"where": where, "job_id": r["job_id"], "rank": r["rank"], "part": label, "part_order": i,
                  "ms": r[col], "is_straggler": r["is_straggler"]}
                 for i, (col, label) in enumerate(_RANK_PARTS.items())]
    if not rows:
        return None
    title = ("GPU time per rank (straggler" + ("s: " if len(stragglers) > 1 else ": ") + ", ".join(stragglers) + ")"
             if stragglers else "GPU time per rank (no straggler)")
    spec = _base(title, rows)
    spec.update(height={"step": 22}, mark="bar", encoding={
        "y": {"field": "where", "type": "nominal", "title": None, "sort": None},
        "x": {"field": "ms", "type": "quantitative", "stack": "zero", "title": "ms"},
        "color": {"field": "part", "type": "nominal", "sort": list(_RANK_PARTS.values()), "title": None,
                  "scale": {"domain": list(_RANK_PARTS.values()),  # no red but the straggler's outline
                            "range": ["#4c78a8", "#f58518", "#b279a2", "#bab0ac"]}},
        "order": {"field": "part_order", "type": "quantitative"},
        "stroke": {"condition": {"test": "datum.is_straggler", "value": "#d62728"}, "value": None},
        "strokeWidth": {"value": 2},
        "tooltip": [{"field": "where", "title": "rank"}, {"field": "part"}, {"field": "ms", "format": ",.3f"}]})
    return spec


def _memory(df: pl.DataFrame, trace: str) -> dict | None:
    """The memory over time (memory_timeline): per device, the most bytes allocated and reserved in each bin, as
    steps over the bins' starts (µs after the device's first memory event); one panel per device, each on its own
    scale (a CPU's bytes beside a GPU's would lie flat). Bins before the device's first event have no point."""
    need = {"device_name", "bin_start_us", "allocated_max_bytes", "reserved_max_bytes"}
    if df.height == 0 or not need <= set(df.columns):
        return None
    rows = [{"device_name": r["device_name"], "bin_start_us": r["bin_start_us"], "what": what, "bytes": r[col]}
            for r in df.iter_rows(named=True)
            for col, what in (("allocated_max_bytes", "allocated"), ("reserved_max_bytes", "reserved"))
            if r[col] is not None]
    if not rows:
        return None
    spec = _base(f"Memory over time: {trace}", rows)
    del spec["width"]
    spec.update(facet={"row": {"field": "device_name", "type": "nominal", "title": None}},
                resolve={"scale": {"y": "independent"}},
                spec={"width": 560, "height": 160, "mark": {"type": "line", "interpolate": "step-after"},
                      "encoding": {
                          "x": {"field": "bin_start_us", "type": "quantitative", "title": "µs"},
                          "y": {"field": "bytes", "type": "quantitative", "title": "bytes",
                                "axis": {"format": "~s"}},
                          "color": {"field": "what", "type": "nominal", "sort": ["allocated", "reserved"],
                                    "title": None},
                          "tooltip": [{"field": "device_name"}, {"field": "what"}, {"field": "bin_start_us"},
                                      {"field": "bytes", "format": ","}]}})
    return spec


_RANK_PARTS = {"compute_ms": "compute", "comm_exposed_ms": "exposed communication",
               "memory_exposed_ms": "exposed memory", "idle_ms": "idle"}

# sections drawn once over all their rows (every trace in one chart), not one chart per trace
WHOLE = {"traces_overview", "ranks_overview"}

# section name -> (frame of one trace, its label) -> spec (None: nothing to draw)
CHARTS: dict[str, Callable[[pl.DataFrame, str], dict | None]] = {
    "gpu_timeline": _timeline,
    "kernel_summary": _top_bars("Top kernels by GPU time", "name", "total_us", "class", "µs"),
    "op_summary": _top_bars("Top ops by GPU time", "op_name", "kernel_time_us", "source", "µs"),
    "gap_histogram": _histogram("Idle gaps by length", "gap length (µs)"),
    "idle_breakdown": _idle,
    "launch_stats": _launch_delay,
    "short_kernel_histogram": _histogram("Short kernels by duration", "duration (µs)"),
    "memory_timeline": _memory,
    "traces_overview": _traces,
    "ranks_overview": _ranks,
}


def section_charts(name: str, df: pl.DataFrame) -> list[tuple[str, dict]]:
    """The charts of the section ``name`` over its frame ``df``: (trace label, spec), one per trace of the frame
    (a frame without a ``trace`` column is drawn once, labelled ''); none when the section has no chart."""
    make = CHARTS.get(name)
    if make is None:
        return []
    if "trace" not in df.columns or name in WHOLE:
        spec = make(df, "")
        return [("", spec)] if spec else []
    out = []
    for label in df.get_column("trace").unique(maintain_order=True).to_list():
        spec = make(df.filter(pl.col("trace") == label), label)
        if spec:
            out.append((label, spec))
    return out


def _label(r: dict, keys: list[str]) -> str:
    return " ".join(str(r[k]) for k in keys if r.get(k) not in (None, ""))


def diff_charts(level: str, df: pl.DataFrame, top: int = TOP) -> list[tuple[str, dict]]:
    """The charts of a diff level's frame (tracesql diff, times in µs): for the ops by argument set and the kernel
    categories, the biggest regressions and improvements as one diverging bar chart (rows present in both traces,
    the ``top`` largest |diff_us| of each sign); for the GPU timeline, base against variant per measure."""
    if df.height == 0:
        return []
    if level == "timeline":
        rows = [{"measure": r["measure"], "side": side, "us": r[f"{side}_us"]}
                for r in df.iter_rows(named=True) for side in ("base", "variant") if r[f"{side}_us"] is not None]
        spec = _base("GPU timeline: base and variant", rows)
        spec.update(height={"step": 12}, mark="bar", encoding={
            "y": {"field": "measure", "type": "nominal", "title": None, "sort": None},
            "yOffset": {"field": "side"}, "x": {"field": "us", "type": "quantitative", "title": "µs"},
            "color": {"field": "side", "type": "nominal", "title": None},
            "tooltip": [{"field": "measure"}, {"field": "side"}, {"field": "us", "format": ",.1f"}]})
        return [("", spec)]
    keys = {"op_args": ["op_name", "hlo_module", "input_dims"], "categories": ["kernel_category"]}.get(level)
    if keys is None or "diff_us" not in df.columns:
        return []
    both = df.filter((pl.col("side") == "both") & (pl.col("diff_us") != 0))
    worse = both.filter(pl.col("diff_us") > 0).sort("diff_us", descending=True).head(top)
    better = both.filter(pl.col("diff_us") < 0).sort("diff_us").head(top)
    rows = [{"key": _label(r, keys), "diff_us": r["diff_us"], "change": "slower" if r["diff_us"] > 0 else "faster",
             "base_us": r["base_us"], "variant_us": r["variant_us"]}
            for r in pl.concat([worse, better]).iter_rows(named=True)]
    if not rows:
        return []
    what = "ops by argument set" if level == "op_args" else "kernel categories"
    spec = _base(f"Biggest regressions and improvements: {what}", rows)
    spec.update(height={"step": 18}, mark="bar", encoding={
        "y": {"field": "key", "type": "nominal", "sort": "-x", "title": None, "axis": {"labelLimit": 420}},
        "x": {"field": "diff_us", "type": "quantitative", "title": "variant − base (µs)"},
        "color": {"field": "change", "type": "nominal", "title": None,
                  "scale": {"domain": ["slower", "faster"], "range": ["#d62728", "#2ca02c"]}},
        "tooltip": [{"field": "key"}, {"field": "diff_us", "format": ",.1f"}, {"field": "base_us"},
                    {"field": "variant_us"}]})
    return [("", spec)]
