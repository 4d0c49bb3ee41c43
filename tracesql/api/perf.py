"""The compute model and roofline (`tracesql perf`, `Dataset.perf`): thin Python over the views of sql/perf/.

Every number comes from SQL (the comment blocks of sql/perf/roofline.sql say what each column is); this module
picks the device (--arch), the rows (trace, bound, roofline %) and the grouping, and converts ns to µs for
display. The device choice lives in two variables of the connection that sql/perf/devices.sql reads:
tracesql_perf_arch (a device-table name) and tracesql_perf_spec (the text of a user spec file).
"""
from __future__ import annotations

import math
from pathlib import Path

import polars as pl


def by_views() -> dict:
    """--by -> its view (the SQL library's ``@output perf-by``: the view and the columns that identify a row)."""
    from tracesql.store.sqlmodules import outputs

    return {o.name: o for o in outputs("perf-by")}


BOUNDS = ("compute", "memory")


def _set_device(ds, arch: str | None) -> None:
    """Point the device views at --arch: a name of the device table, or a spec file with the table's columns
    (its one row then names the device of every trace; with several rows, each trace's GPU is matched against
    them before the shipped rows)."""
    from tracesql.errors import DatasetError, UsageError

    con = ds.con
    if arch is None:
        return
    p = Path(arch)
    if p.is_file() or arch.endswith(".csv"):
        try:
            text = p.read_text()
        except OSError as e:
            raise DatasetError(f"{arch}: cannot read the device spec file ({e.strerror})") from None
        con.execute("SET VARIABLE tracesql_perf_spec = ?", [text])
        rows = con.execute("SELECT * EXCLUDE (name_pattern, source_url, note, origin) FROM perf_devices "
                           "WHERE origin = 'user'").fetchall()
        names = [r[0] for r in rows]
        if not names:
            raise UsageError(f"{arch}: no device row (the header needs at least the columns gpu, name_pattern, "
                             "memory_tb_s and a peak such as bf16_tflops; see sql/perf/devices.csv)")
        cols = [d[0] for d in con.execute("SELECT * EXCLUDE (name_pattern, source_url, note, origin) FROM "
                                          "perf_devices LIMIT 0").description]
        for r in rows:  # a peak of 0, below 0, nan or inf would give a roofline % of no meaning
            bad = [(c, v) for c, v in zip(cols[1:], r[1:], strict=True) if v is not None and not 0 < v < math.inf]
            if bad:
                raise UsageError(f"{arch}: device {r[0]!r}: {bad[0][0]} is {bad[0][1]}; peaks and bandwidth must "
                                 "be positive numbers (leave a field empty when unknown)")
        if len(names) == 1:
            con.execute("SET VARIABLE tracesql_perf_arch = ?", [names[0]])
        return
    known = [r[0] for r in con.execute("SELECT gpu FROM perf_devices ORDER BY gpu").fetchall()]
    if arch.lower() not in {k.lower() for k in known}:
        raise UsageError(f"unknown --arch {arch!r}: give one of {', '.join(known)}, or a spec file (CSV with the "
                         "columns of sql/perf/devices.csv)")
    con.execute("SET VARIABLE tracesql_perf_arch = ?", [arch])


def _reset_device(ds) -> None:
    ds.con.execute("RESET VARIABLE tracesql_perf_arch")
    ds.con.execute("RESET VARIABLE tracesql_perf_spec")


def _computed(ds, ids: list[str], arch: str | None) -> tuple[list[str], list[str]]:
    """Compute the perf views tagged @materialize perf once (temporary tables of these traces, with the device
    set). Views another caller computed already (a report) are kept, except the per-op roofline when --arch
    overrides the device: that one is set aside and computed again. Returns (made, set aside) for _drop."""
    from tracesql.store.dataset import materialize
    from tracesql.store.sqlmodules import materialized

    before = {r[0] for r in ds.con.sql("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
    aside = []
    if arch is not None and "perf_ops" in before:  # the only one of them that reads the device
        ds.con.execute('ALTER TABLE temp.main.perf_ops RENAME TO "_perf_ops_set_aside"')
        before.discard("perf_ops")
        aside.append("perf_ops")
    names = materialize(ds, [n for n in materialized("perf") if n not in before], ids)
    return names, aside


def _drop(ds, made: list[str], aside: list[str]) -> None:
    for n in reversed(made):
        ds.con.execute(f'DROP TABLE IF EXISTS temp.main."{n}"')
    for n in aside:
        ds.con.execute(f'ALTER TABLE temp.main."_{n}_set_aside" RENAME TO "{n}"')


# Shown first (after the columns that identify a row), so that a table fitted to the terminal keeps them.
FIRST = ["count", "op_count", "kernel_time_sum_ns", "kernel_time_ns", "time_pct", "roofline_pct", "bound",
         "tflop_per_s", "tb_per_s", "flop_per_byte"]


def _display(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The command line's columns: identifying columns, then FIRST, then the rest; times in µs (*_ns -> *_us);
    FLOPs and bytes as whole numbers."""
    order = ["trace_id", "trace"] + [c for c in keys + FIRST if c in df.columns]
    df = df.select(order + [c for c in df.columns if c not in order])
    return df.select([(pl.col(c) / 1000.0).alias(c[:-3] + "_us") if c.endswith("_ns")
                      else pl.col(c).round(0).cast(pl.Int64) if c in ("flops", "bytes") else pl.col(c)
                      for c in df.columns])


def perf(ds, trace: str | None = None, arch: str | None = None, by: str = "args", bound: str | None = None,
         below_pct: float | None = None, micros: bool = True) -> pl.DataFrame:
    """FLOPs, bytes, achieved TFLOP/s and TB/s and the roofline of the modelled ops.

    trace      only this trace (a trace_id or label; see tracesql.api.analysis.trace_ids)
    arch       the device: a name of sql/perf/devices.csv ('H100 SXM', case-blind) or a CSV spec file with the
               same columns; default: recognised from each trace's deviceProperties
    by         args (per op and argument set, the default), op (per op name), category (per family, with the
               GPU time no model covers), kernel (per kernel of the ops that launched one)
    bound      only the rows whose roofline bound is compute or memory
    below_pct  only the rows at less than this % of their roofline
    micros     the command line's frame: key columns first, times in µs (*_us), FLOPs and bytes as integers;
               False: the view's rows as they are (ns)
    """
    from tracesql.api.analysis import _in, trace_ids
    from tracesql.errors import UsageError

    views = by_views()
    if by not in views:
        raise UsageError(f"--by must be one of {', '.join(views)}, not {by!r}")
    if bound is not None and bound not in BOUNDS:
        raise UsageError(f"--bound must be compute or memory, not {bound!r}")
    view, keys = views[by].object, list(views[by].keys)
    ids = trace_ids(ds, trace)
    _set_device(ds, arch)
    made: list[str] = []
    aside: list[str] = []
    try:
        made, aside = _computed(ds, ids, arch)
        where = [f"trace_id IN {_in(ids)}"]
        if bound is not None:
            where.append(f"bound = '{bound}'")
        if below_pct is not None:
            where.append(f"roofline_pct < {float(below_pct)!r}")
        df = ds.con.sql(f"SELECT v.trace_id, l.label AS trace, v.* EXCLUDE (trace_id) FROM {view} v "
                        f"JOIN trace_labels l USING (trace_id) WHERE {' AND '.join(where)}").pl()
    finally:
        _drop(ds, made, aside)
        _reset_device(ds)
    return _display(df, keys) if micros else df


def reasons(ds, trace: str | None = None, arch: str | None = None) -> list[str]:
    """Why a trace has no roofline columns (perf_traces.reason), one line per such trace."""
    from tracesql.api.analysis import _in, trace_ids

    ids = trace_ids(ds, trace)
    _set_device(ds, arch)
    made: list[str] = []
    aside: list[str] = []
    try:
        made, aside = _computed(ds, ids, arch)
        rows = ds.con.sql(f"SELECT l.label, p.reason FROM perf_traces p JOIN trace_labels l USING (trace_id) "
                          f"WHERE p.reason IS NOT NULL AND p.trace_id IN {_in(ids)} ORDER BY l.label").fetchall()
    finally:
        _drop(ds, made, aside)
        _reset_device(ds)
    return [f"{label}: no roofline: {reason}" for label, reason in rows]


# ---- the roofline chart ----------------------------------------------------------------------------------
# A Vega-Lite specification (https://vega.github.io/vega-lite/): plain JSON, so a report can embed the same chart
# later; SVG, PNG and the HTML page's inline SVG are drawn from it by vl-convert-python (the optional extra
# tracesql[plot]), which needs no browser (tracesql.render.chart).

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
PLOT_SUFFIXES = (".svg", ".png", ".html", ".json")


def roofline_spec(ds, trace: str | None = None, arch: str | None = None) -> dict:
    """The roofline chart of one trace as a Vega-Lite spec: one point per (op, argument set) of perf_args with
    FLOPs and bytes (x: FLOP/byte, y: achieved TFLOP/s, both log scales; colour: family; size: GPU time), and the
    device's roofs: min(peak, bandwidth · FLOP/byte) for each precision of the points."""
    from tracesql.api.analysis import trace_ids
    from tracesql.errors import UsageError

    ids = trace_ids(ds, trace)
    if len(ids) != 1:
        raise UsageError(f"--plot draws one trace and the dataset has {len(ids)}: give --trace")
    rows = perf(ds, trace=ids[0], arch=arch, by="args", micros=False)
    pts = rows.filter((pl.col("flops") > 0) & (pl.col("bytes") > 0) & (pl.col("kernel_time_sum_ns") > 0))
    if pts.height == 0:
        raise UsageError("no modelled op with FLOPs and bytes to draw")
    points = [{"op": r["op_name"], "family": r["family"], "shape": r["shape"], "input_dims": r["input_dims"],
               "count": r["count"], "flop_per_byte": r["flop_per_byte"], "tflop_per_s": r["tflop_per_s"],
               "kernel_time_us": r["kernel_time_sum_ns"] / 1000.0, "roofline_pct": r["roofline_pct"],
               "precision": r["precision"]} for r in pts.iter_rows(named=True)]
    x_lo = min(p["flop_per_byte"] for p in points) / 4
    x_hi = max(p["flop_per_byte"] for p in points) * 4
    roofs = []
    peaks = pts.filter(pl.col("peak_tflop_per_s").is_not_null()).group_by("precision").agg(
        pl.col("peak_tflop_per_s").first(), pl.col("memory_tb_per_s").first()).sort("precision")
    for prec, peak, bw in peaks.iter_rows():
        ridge = peak / bw  # FLOP/byte where the memory roof meets the compute roof
        xs = sorted({x_lo, min(max(ridge, x_lo), x_hi), x_hi})
        roofs += [{"roof": f"{prec} peak {peak:g} TFLOP/s, {bw:g} TB/s", "flop_per_byte": x,
                   "tflop_per_s": min(peak, bw * x)} for x in xs]
    gpu = rows["gpu"].drop_nulls()
    title = f"Roofline: {gpu[0] if len(gpu) else 'unknown GPU (no roofs)'}"
    x = {"field": "flop_per_byte", "type": "quantitative", "scale": {"type": "log"},
         "title": "arithmetic intensity (FLOP/byte)"}
    y = {"field": "tflop_per_s", "type": "quantitative", "scale": {"type": "log"}, "title": "achieved TFLOP/s"}
    layers: list[dict] = []
    if roofs:
        layers.append({"data": {"values": roofs}, "mark": {"type": "line", "strokeDash": [4, 2]},
                       "encoding": {"x": x, "y": y, "detail": {"field": "roof"},
                                    "tooltip": [{"field": "roof", "type": "nominal"}]}})
    layers.append({"data": {"values": points}, "mark": {"type": "point", "filled": True, "opacity": 0.7},
                   "encoding": {"x": x, "y": y, "color": {"field": "family", "type": "nominal"},
                                "size": {"field": "kernel_time_us", "type": "quantitative",
                                         "title": "GPU time (µs)"},
                                "tooltip": [{"field": f} for f in ("op", "shape", "count", "kernel_time_us",
                                                                   "tflop_per_s", "flop_per_byte",
                                                                   "roofline_pct")]}})
    return {"$schema": VEGA_LITE_SCHEMA, "title": title, "width": 640, "height": 420, "layer": layers}


def write_plot(spec: dict, path: str) -> None:
    """Write the chart: .json (the spec), or drawn by vl-convert-python (`pip install tracesql[plot]`): .svg,
    .png, or .html (a self-contained page: the chart as inline SVG and its spec as JSON data; tracesql.render)."""
    import json

    from tracesql.errors import UsageError
    from tracesql.render import chart, html

    suffix = Path(path).suffix.lower()
    if suffix not in PLOT_SUFFIXES:
        raise UsageError(f"--plot FILE must end in {', '.join(PLOT_SUFFIXES)}, not {path!r}")
    if suffix == ".json":
        Path(path).write_text(json.dumps(spec, indent=1))
    elif suffix == ".html":
        title = spec.get("title")
        html.write(path, html.page(title if isinstance(title, str) else "Roofline", html.chart(spec, "roofline")))
    elif suffix == ".svg":
        Path(path).write_text(chart.svg(spec, what=".svg"), encoding="utf-8")
    else:
        Path(path).write_bytes(chart.png(spec, what=".png"))
