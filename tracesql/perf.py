"""The compute model and roofline (`tracesql perf`, `Dataset.perf`): thin Python over the views of sql/perf/.

Every number comes from SQL (the comment blocks of sql/perf/roofline.sql say what each column is); this module
picks the device (--arch), the rows (trace, bound, roofline %) and the grouping, and converts ns to µs for
display. The device choice lives in two variables of the connection that sql/perf/devices.sql reads:
tracesql_perf_arch (a device-table name) and tracesql_perf_spec (the text of a user spec file).
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

# --by -> (view, the columns that identify a row)
VIEWS = {
    "args": ("perf_args", ["op_name", "family", "input_dims"]),
    "op": ("perf_op_names", ["op_name", "family"]),
    "category": ("perf_categories", ["family"]),
    "kernel": ("perf_kernels", ["kernel_name", "family"]),
}
BOUNDS = ("compute", "memory")


def _set_device(ds, arch: str | None) -> None:
    """Point the device views at --arch: a name of the device table, or a spec file with the table's columns
    (its one row then names the device of every trace; with several rows, each trace's GPU is matched against
    them before the shipped rows)."""
    from .errors import DatasetError
    from .output import UsageError

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
        names = [r[0] for r in con.execute("SELECT gpu FROM perf_devices WHERE origin = 'user'").fetchall()]
        if not names:
            raise UsageError(f"{arch}: no device row (the header needs at least the columns gpu, name_pattern, "
                             "memory_tb_s and a peak such as bf16_tflops; see sql/perf/devices.csv)")
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


def _computed(ds, ids: list[str]) -> list[str]:
    """Compute the perf views tagged @materialize perf once (temporary tables of these traces, with the device
    set); returns the ones made here, for _drop."""
    from .analysis import materialize
    from .sqlmodules import materialized

    before = {r[0] for r in ds.con.sql("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
    names = [n for n in materialized("perf") if n not in before]
    materialize(ds, names, ids)
    return names


def _drop(ds, names: list[str]) -> None:
    for n in reversed(names):
        ds.con.execute(f'DROP TABLE IF EXISTS temp.main."{n}"')


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

    trace      only this trace (a trace_id or label; see tracesql.analysis.trace_ids)
    arch       the device: a name of sql/perf/devices.csv ('H100 SXM', case-blind) or a CSV spec file with the
               same columns; default: recognised from each trace's deviceProperties
    by         args (per op and argument set, the default), op (per op name), category (per family, with the
               GPU time no model covers), kernel (per kernel of the ops that launched one)
    bound      only the rows whose roofline bound is compute or memory
    below_pct  only the rows at less than this % of their roofline
    micros     the command line's frame: key columns first, times in µs (*_us), FLOPs and bytes as integers;
               False: the view's rows as they are (ns)
    """
    from .analysis import _in, trace_ids
    from .output import UsageError

    if by not in VIEWS:
        raise UsageError(f"--by must be one of {', '.join(VIEWS)}, not {by!r}")
    if bound is not None and bound not in BOUNDS:
        raise UsageError(f"--bound must be compute or memory, not {bound!r}")
    view, keys = VIEWS[by]
    ids = trace_ids(ds, trace)
    _set_device(ds, arch)
    made: list[str] = []
    try:
        made = _computed(ds, ids)
        where = [f"trace_id IN {_in(ids)}"]
        if bound is not None:
            where.append(f"bound = '{bound}'")
        if below_pct is not None:
            where.append(f"roofline_pct < {float(below_pct)!r}")
        df = ds.con.sql(f"SELECT v.trace_id, l.label AS trace, v.* EXCLUDE (trace_id) FROM {view} v "
                        f"JOIN trace_labels l USING (trace_id) WHERE {' AND '.join(where)}").pl()
    finally:
        _drop(ds, made)
        _reset_device(ds)
    return _display(df, keys) if micros else df


def reasons(ds, trace: str | None = None, arch: str | None = None) -> list[str]:
    """Why a trace has no roofline columns (perf_traces.reason), one line per such trace."""
    from .analysis import _in, trace_ids

    ids = trace_ids(ds, trace)
    _set_device(ds, arch)
    try:
        rows = ds.con.sql(f"SELECT l.label, p.reason FROM perf_traces p JOIN trace_labels l USING (trace_id) "
                          f"WHERE p.reason IS NOT NULL AND p.trace_id IN {_in(ids)} ORDER BY l.label").fetchall()
    finally:
        _reset_device(ds)
    return [f"{label}: no roofline: {reason}" for label, reason in rows]
