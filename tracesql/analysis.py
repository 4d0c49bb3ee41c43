"""GPU timeline, kernel summary, gaps and launch statistics: thin Python over the views of sql/gpu/ and sql/peers/.

Every number comes from SQL (see the comment blocks of the views named below); these functions only pick
the rows (trace, step), sort, cut and convert ns to µs for display.
"""
from __future__ import annotations

import polars as pl

SORT_KEYS = {"count": "count", "duration": "avg_ns", "total": "total_ns", "percentage": "time_pct"}
GAP_SORT_KEYS = {"count": "count", "avg": "avg_gap_ns", "max": "max_gap_ns", "stdev": "std_gap_ns",
                 "total": "total_idle_ns"}


def _q(ds, query: str, params: dict | None = None) -> pl.DataFrame:
    """Run a query with named parameters ($name) and return polars."""
    return ds.con.sql(query, params=params).pl() if params else ds.con.sql(query).pl()


def materialize(ds, names: list[str], ids: list[str] | None = None) -> None:
    """Compute the shared base views once for this connection (a report reads them many times).

    Each is copied into a TEMP table of the same name, which DuckDB resolves before the view of the main
    schema, so every view built on it reads the copy. With ``ids``, only those traces are kept: the copy
    is then a snapshot for a report on those traces, and the connection should not be used for others
    (the command line opens one connection per command). A name already materialized is left as it is.
    """
    done = {r[0] for r in ds.con.sql("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
    db = ds.con.sql("SELECT current_database()").fetchall()[0][0]
    where = f" WHERE trace_id IN {_in(ids)}" if ids else ""
    for name in names:
        if name not in done and has_view(ds, name):
            per_trace = ds.con.sql("SELECT count(*) FROM duckdb_columns() WHERE table_name = $n "
                                   "AND schema_name = 'main' AND column_name = 'trace_id'",
                                   params={"n": name}).fetchall()[0][0]
            ds.con.sql(f'CREATE TEMP TABLE {name} AS SELECT * FROM "{db}".main.{name}{where if per_trace else ""}')


def has_view(ds, name: str) -> bool:
    n = ds.con.sql("SELECT count(*) FROM duckdb_views() WHERE view_name = $n", params={"n": name}).fetchall()[0][0]
    return bool(n)


def trace_ids(ds, trace: str | None = None) -> list[str]:
    """trace_ids matching a trace_id, a file name or a path suffix (all traces when trace is None)."""
    if trace is None:
        rows = ds.con.sql("SELECT trace_id FROM traces ORDER BY file_name, trace_id").fetchall()
    else:
        rows = ds.con.sql(
            "SELECT trace_id FROM traces WHERE trace_id = $t OR file_name = $t OR source_path = $t "
            "OR ends_with(source_path, '/' || $t) OR file_name = $t || '.json.gz' OR file_name = $t || '.json' "
            "ORDER BY file_name, trace_id", params={"t": trace}).fetchall()
        if not rows:
            from .errors import DatasetError

            raise DatasetError(f"no trace matches {trace!r} (give a trace_id or a file name; `tracesql query "
                               f"DATASET \"SELECT trace_id, file_name FROM traces\"` lists them)")
    return [r[0] for r in rows]


def _in(ids: list[str]) -> str:
    return "(" + ", ".join("'" + i.replace("'", "''") + "'" for i in ids) + ")"


def _step_name(step) -> str | None:
    if step is None:
        return None
    s = str(step)
    return s if s.startswith("ProfilerStep#") else f"ProfilerStep#{s}"


def kernel_summary(ds, trace: str | None = None, step=None, sort: str = "total", top: int | None = None,
                   verbose: bool = False, by_category: bool = False) -> pl.DataFrame:
    """Per kernel name: count, avg/total/min/max/std duration (µs), % of launches, % of kernel time.

    Rows of the SQL macro ``kernel_summary_of(step, full_names)``; ``step`` is a ProfilerStep number or
    name, ``sort`` one of count, duration (mean), total, percentage; ``top`` keeps the first N per trace;
    ``verbose`` groups by full kernel names instead of short ones. ``by_category`` returns the categories
    view ``kernel_category_by_op`` instead, when the categories module provides it.
    """
    ids = trace_ids(ds, trace)
    if by_category:
        if not has_view(ds, "kernel_category_by_op"):
            from .errors import DatasetError

            raise DatasetError("--by-category needs the kernel category views (sql/categories/)")
        return _q(ds, f"""SELECT t.file_name AS trace, k.* EXCLUDE (trace_id) FROM kernel_category_by_op k
            JOIN traces t USING (trace_id) WHERE k.trace_id IN {_in(ids)}
            ORDER BY trace, k.parent_time_ms DESC, k.cpu_op, k.total_time_ms DESC""")
    if sort not in SORT_KEYS:
        raise ValueError(f"sort must be one of {', '.join(SORT_KEYS)}")
    key = SORT_KEYS[sort]
    q = f"""
    SELECT t.file_name AS trace, k.name, k.activity_class AS class, k.count,
           k.avg_ns / 1e3 AS avg_us, k.total_ns / 1e3 AS total_us, k.min_ns / 1e3 AS min_us,
           k.max_ns / 1e3 AS max_us, k.std_ns / 1e3 AS std_us, k.launches_pct, k.time_pct,
           row_number() OVER (PARTITION BY k.trace_id ORDER BY k.{key} DESC, k.name) AS rank
    FROM kernel_summary_of($step, $full) k JOIN traces t USING (trace_id)
    WHERE k.trace_id IN {_in(ids)}
    """
    q = f"SELECT * EXCLUDE (rank) FROM ({q}) " + (f"WHERE rank <= {int(top)} " if top else "") + \
        "ORDER BY trace, rank"
    return _q(ds, q, {"step": _step_name(step), "full": bool(verbose)})


def timeline(ds, trace: str | None = None, by_step: bool = False, pooled_only: bool = False,
             style: str = "native") -> pl.DataFrame:
    """GPU time breakdown (views gpu_timeline / gpu_timeline_by_step; tl_gpu_timeline and
    hta_temporal_breakdown for the peer styles). Native times are in µs here (ns in the views)."""
    ids = trace_ids(ds, trace)
    if style == "tracelens":
        return _q(ds, f"SELECT t.file_name AS trace, g.* EXCLUDE (trace_id) FROM tl_gpu_timeline g "
                      f"JOIN traces t USING (trace_id) WHERE g.trace_id IN {_in(ids)}")
    if style == "hta":
        return _q(ds, f"SELECT t.file_name AS trace, g.* EXCLUDE (trace_id) FROM hta_temporal_breakdown g "
                      f"JOIN traces t USING (trace_id) WHERE g.trace_id IN {_in(ids)} ORDER BY trace")
    view = "gpu_timeline_by_step" if by_step else "gpu_timeline"
    where = " AND g.pooled" if pooled_only else ""
    return _q(ds, f"""
    SELECT t.file_name AS trace, CASE WHEN g.pooled THEN 'all' ELSE g.device::VARCHAR END AS device,
           {'g.step, ' if by_step else ''}g.n_events, g.span_ns / 1e3 AS total_us, g.compute_ns / 1e3 AS compute_us,
           g.comm_ns / 1e3 AS comm_us, g.comm_exposed_ns / 1e3 AS comm_exposed_us, g.memory_ns / 1e3 AS memory_us,
           g.memory_exposed_ns / 1e3 AS memory_exposed_us, g.busy_ns / 1e3 AS busy_us, g.idle_ns / 1e3 AS idle_us,
           g.compute_pct, g.comm_pct, g.comm_exposed_pct, g.memory_pct, g.memory_exposed_pct, g.busy_pct,
           g.idle_pct, g.comm_overlap_pct, g.window_ns / 1e3 AS window_us
    FROM {view} g JOIN traces t USING (trace_id)
    {'LEFT JOIN _gpu_steps s ON s.trace_id = g.trace_id AND s.step = g.step' if by_step else ''}
    WHERE g.trace_id IN {_in(ids)}{where}
    ORDER BY trace, {'s.step_number, g.step, ' if by_step else ''}g.pooled DESC, g.device
    """)


def gaps(ds, trace: str | None = None, what: str = "streams", hist_min: float = 0.0, hist_max: float = 100.0,
         bins: int = 20, sort: str = "count", top: int | None = None, verbose: bool = False,
         kernel_wait_us: float = 30.0) -> pl.DataFrame:
    """Idle gaps between consecutive GPU events on a stream (views of sql/gpu/gaps.sql).

    what: 'streams' (totals per stream), 'events' (every gap), 'histogram' (``gap_histogram_of`` with
    hist_min/hist_max in µs and bins), 'transitions' (kernel pairs A -> B, sorted by count, avg, max or
    stdev of the gap), 'idle' (host wait / kernel wait / other, ``idle_breakdown_at(kernel_wait_us)``).
    """
    ids = trace_ids(ds, trace)
    w = f"WHERE g.trace_id IN {_in(ids)}"
    j = "JOIN traces t USING (trace_id)"
    if what == "streams":
        return _q(ds, f"""SELECT t.file_name AS trace, g.device, g.stream, g.n_events, g.n_gaps,
            g.idle_ns / 1e3 AS idle_us, g.mean_gap_ns / 1e3 AS mean_gap_us, g.max_gap_ns / 1e3 AS max_gap_us,
            g.span_ns / 1e3 AS span_us, g.busy_ns / 1e3 AS busy_us, g.idle_pct
            FROM gap_totals_by_stream g {j} {w} ORDER BY trace, g.device, g.stream""")
    if what == "events":
        name = "g.name" if verbose else "coalesce(g.short_name, g.name)"
        prev = "g.prev_name" if verbose else "coalesce(g.prev_short_name, g.prev_name)"
        lim = f" LIMIT {int(top)}" if top else ""
        return _q(ds, f"""SELECT t.file_name AS trace, g.device, g.stream, g.seq, g.event_id, {prev} AS prev_name,
            {name} AS name, g.ts_ns, g.gap_ns / 1e3 AS gap_us, g.host_wait
            FROM gpu_gaps g {j} {w} AND g.gap_ns > 0 ORDER BY g.gap_ns DESC{lim}""")
    if what == "histogram":
        if not hist_max > hist_min or bins < 1:
            raise ValueError("need --hist-max > --hist-min and --bins >= 1")
        return _q(ds, f"""SELECT t.file_name AS trace, g.bin, g.bin_start_us, g.bin_end_us, g.count, g.total_us
            FROM gap_histogram_of($lo, $hi, $bins) g {j} {w} ORDER BY trace, g.bin""",
                      {"lo": float(hist_min), "hi": float(hist_max), "bins": int(bins)})
    if what == "transitions":
        if sort not in GAP_SORT_KEYS:
            raise ValueError(f"sort must be one of {', '.join(GAP_SORT_KEYS)}")
        key = GAP_SORT_KEYS[sort]
        q = f"""SELECT t.file_name AS trace, g.transition, g.count, g.avg_gap_ns / 1e3 AS avg_gap_us,
            g.max_gap_ns / 1e3 AS max_gap_us, g.min_gap_ns / 1e3 AS min_gap_us, g.std_gap_ns / 1e3 AS std_gap_us,
            g.total_idle_ns / 1e3 AS total_idle_us,
            row_number() OVER (PARTITION BY g.trace_id ORDER BY g.{key} DESC, g.transition) AS rank
            FROM kernel_transitions_of($full) g {j} {w}"""
        q = f"SELECT * EXCLUDE (rank) FROM ({q}) " + (f"WHERE rank <= {int(top)} " if top else "") + \
            "ORDER BY trace, rank"
        return _q(ds, q, {"full": bool(verbose)})
    if what == "idle":
        return _q(ds, f"""SELECT t.file_name AS trace, g.device, g.stream, g.idle_category, g.count,
            g.idle_ns / 1e3 AS idle_us, g.idle_ratio
            FROM idle_breakdown_at($kw) g {j} {w} ORDER BY trace, g.device, g.stream, g.idle_category""",
                      {"kw": float(kernel_wait_us)})
    raise ValueError(f"unknown gaps view {what!r}")


def launch_stats(ds, trace: str | None = None, runtime_cutoff_us: float = 50,
                 launch_delay_cutoff_us: float = 100) -> pl.DataFrame:
    """Per launch API: calls, CPU duration, GPU duration, launch delay and flagged calls (launch_stats_by_api)."""
    ids = trace_ids(ds, trace)
    return _q(ds, f"""
    SELECT t.file_name AS trace, g.api, g.launch_kind, count(*) AS calls, count(g.gpu_start_ns) AS calls_with_gpu,
           avg(g.cpu_dur_ns) / 1e3 AS cpu_dur_mean_us, max(g.cpu_dur_ns) / 1e3 AS cpu_dur_max_us,
           avg(g.gpu_dur_ns) / 1e3 AS gpu_dur_mean_us, avg(g.launch_delay_ns) / 1e3 AS launch_delay_mean_us,
           median(g.launch_delay_ns) / 1e3 AS launch_delay_median_us,
           max(g.launch_delay_ns) / 1e3 AS launch_delay_max_us,
           count(*) FILTER (WHERE g.short_kernel) AS short_kernels,
           count(*) FILTER (WHERE g.runtime_outlier) AS runtime_outliers,
           count(*) FILTER (WHERE g.launch_delay_outlier) AS launch_delay_outliers
    FROM launch_stats_at($rc, $dc) g JOIN traces t USING (trace_id)
    WHERE g.trace_id IN {_in(ids)}
    GROUP BY ALL ORDER BY trace, calls DESC, g.api""",
              {"rc": float(runtime_cutoff_us), "dc": float(launch_delay_cutoff_us)})
