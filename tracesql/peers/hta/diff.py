"""HTA's TraceDiff of two traces (``tracesql diff --style hta``): thin Python over the table macros of
sql/peers/hta/trace_diff.sql (their comment blocks define every column and row order).

The control is the baseline, the test the variant, labelled ``Control`` and ``Test`` as HTA labels two trace
directories. ``files(ds, control, test)`` returns HTA's results under the names of the shared reference
(compare_traces*.csv, ops_diff*.csv, ops_summary_*.csv); the functions before it return one result each.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

DEVICES = ("ALL", "CPU", "GPU")  # HTA's DeviceType: CPU rows have stream -1, GPU rows any other stream


def _device(device: str) -> str:
    d = device.upper()
    if d not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    return d


def iterations(ds, trace_id: str) -> list[int]:
    """LabeledTrace.iterations(): the N of every ProfilerStep#N of the trace, sorted (hta_trace_iterations)."""
    return [r[0] for r in ds.con.execute("SELECT iteration FROM hta_trace_iterations(?)", [trace_id]).fetchall()]


def _iters(ds, trace_id: str, wanted: int | list[int] | None) -> list[int] | None:
    """HTA's checks of an iteration argument (extract_ops): a trace without ProfilerStep has no first iteration,
    and a requested iteration must exist. None stays None (the macros then take the first iteration)."""
    have = iterations(ds, trace_id)
    if not have:
        raise ValueError(f"trace {trace_id} has no ProfilerStep#N: HTA's TraceDiff compares iterations")
    if wanted is None:
        return None
    wanted = [wanted] if isinstance(wanted, int) else list(wanted)
    missing = [i for i in wanted if i not in have]
    if missing:
        raise ValueError(f"trace {trace_id} has no iteration {', '.join(map(str, missing))} "
                         f"(it has {', '.join(map(str, have))})")
    return wanted


def _int_durations(ds, trace_id: str) -> bool:
    return bool(ds.con.execute("SELECT _hta_int_dur(?)", [trace_id]).fetchone()[0])


def _hta_dtypes(df: pl.DataFrame, int_dur: tuple[bool, bool]) -> pl.DataFrame:
    """compare_traces with HTA's column types: a side's columns stay integers only when the side has every
    name (the outer join leaves NaN, hence float64, where it has not) and, for durations, when HTA read the
    trace's dur as integers (_hta_int_dur); a difference is an integer when both of its terms are."""
    import polars as pl

    casts = {}
    ints = {}
    for side, whole in zip(("Control", "Test"), int_dur, strict=True):
        full = df.height == 0 or bool((df[f"{side}_counts"] > 0).all())
        ints[f"{side}_counts"] = full
        ints[f"{side}_total_duration"] = full and whole
    ints["diff_counts"] = ints["Control_counts"] and ints["Test_counts"]
    ints["diff_duration"] = ints["Control_total_duration"] and ints["Test_total_duration"]
    for col, whole in ints.items():
        if whole:
            casts[col] = pl.col(col).cast(pl.Int64)
    return df.with_columns(**casts) if casts else df


def compare_traces(ds, control: str, test: str, control_iteration: int | list[int] | None = None,
                   test_iteration: int | list[int] | None = None, device: str = "ALL",
                   use_short_name: bool = False) -> pl.DataFrame:
    """TraceDiff.compare_traces(control, test, ...) of two trace_ids (hta_compare_traces): the iterations of each
    (an int, a list, or None for the first), device ALL, CPU or GPU, and HTA's short names when use_short_name
    (the first column is then short_name)."""
    ci, ti = _iters(ds, control, control_iteration), _iters(ds, test, test_iteration)
    df = ds.con.sql("SELECT * FROM hta_compare_traces($c, $t, $ci, $ti, $d, $s)",
                    params={"c": control, "t": test, "ci": ci, "ti": ti, "d": _device(device),
                         "s": use_short_name}).pl()
    df = _hta_dtypes(df, (_int_durations(ds, control), _int_durations(ds, test)))
    return df.rename({"name": "short_name"}) if use_short_name else df


def ops_diff(ds, control: str, test: str, control_iteration: int | list[int] | None = None,
             test_iteration: int | list[int] | None = None, device: str = "ALL") -> pl.DataFrame:
    """TraceDiff.ops_diff(control, test, ...) as rows (change, name) in HTA's order (hta_ops_diff); ``as_dict``
    turns it into HTA's Dict[str, List[str]]."""
    ci, ti = _iters(ds, control, control_iteration), _iters(ds, test, test_iteration)
    return ds.con.sql("SELECT * FROM hta_ops_diff($c, $t, $ci, $ti, $d)",
                      params={"c": control, "t": test, "ci": ci, "ti": ti, "d": _device(device)}).pl()


def as_dict(ops: pl.DataFrame) -> dict[str, list[str]]:
    """An ops_diff frame as HTA returns it: {added, deleted, increased, decreased, unchanged: [names]}."""
    out: dict[str, list[str]] = {k: [] for k in ("added", "deleted", "increased", "decreased", "unchanged")}
    for change, name in ops.iter_rows():
        out[change].append(name)
    return out


def ops_summary(ds, trace_id: str, iteration: int | list[int] | None = None, device: str = "ALL") -> pl.DataFrame:
    """LabeledTrace.get_ops_summary(extract_ops(...)) of one trace (hta_trace_ops_summary): one row per (cat,
    name), ordered by cat and name (HTA's order follows its symbol ids, i.e. Python's string hash)."""
    import polars as pl

    its = _iters(ds, trace_id, iteration)
    df = ds.con.sql("SELECT * FROM hta_trace_ops_summary($t, $i, $d)",
                    params={"t": trace_id, "i": its, "d": _device(device)}).pl()
    return df.with_columns(pl.col("total_duration").cast(pl.Int64)) if _int_durations(ds, trace_id) else df


def files(ds, control: str, test: str) -> list[tuple[str, pl.DataFrame]]:
    """HTA's TraceDiff results for two trace_ids, named as in the shared reference (file name without .csv):

      compare_traces, compare_traces_cpu, compare_traces_gpu, compare_traces_short_name   first iteration of each
      compare_traces_all_iterations                              every iteration of each trace
      compare_traces_iter<N>[_cpu|_gpu][_short_name]             iteration N of both (each N both traces have)
      ops_diff, ops_diff_cpu, ops_diff_gpu, ops_diff_all_iterations, ops_diff_iter<N>[_cpu|_gpu]   the same
                                                                 selections, HTA's ops_diff as rows (change, name)
      ops_summary_control, ops_summary_test                      get_ops_summary of each (first iteration)

    HTA's frame of every trace the connection reads is computed once (the views tagged ``@materialize
    hta-diff``): open only the two traces (``tracesql.open(path, trace_ids=[control, test])``) to read no other.
    """
    from tracesql.store.sqlmodules import materialized

    with ds.materialized(materialized("hta-diff")):
        return _compare(ds, control, test)


def _compare(ds, control: str, test: str) -> list[tuple[str, pl.DataFrame]]:
    both = [i for i in iterations(ds, control) if i in set(iterations(ds, test))]
    every = (iterations(ds, control), iterations(ds, test))
    out: list[tuple[str, pl.DataFrame]] = []
    suffix = {"ALL": "", "CPU": "_cpu", "GPU": "_gpu"}
    for dev in DEVICES:
        out.append((f"compare_traces{suffix[dev]}", compare_traces(ds, control, test, device=dev)))
    out.append(("compare_traces_short_name", compare_traces(ds, control, test, use_short_name=True)))
    out.append(("compare_traces_all_iterations", compare_traces(ds, control, test, *every)))
    for it in both:
        for dev in DEVICES:
            for short in (False, True):
                name = f"compare_traces_iter{it}{suffix[dev]}{'_short_name' if short else ''}"
                out.append((name, compare_traces(ds, control, test, it, it, dev, short)))
    for dev in DEVICES:
        out.append((f"ops_diff{suffix[dev]}", ops_diff(ds, control, test, device=dev)))
    out.append(("ops_diff_all_iterations", ops_diff(ds, control, test, *every)))
    for it in both:
        for dev in DEVICES:
            out.append((f"ops_diff_iter{it}{suffix[dev]}", ops_diff(ds, control, test, it, it, dev)))
    out.append(("ops_summary_control", ops_summary(ds, control)))
    out.append(("ops_summary_test", ops_summary(ds, test)))
    return out
