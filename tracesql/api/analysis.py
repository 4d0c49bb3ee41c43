"""GPU timeline, kernel summary, gaps and launch statistics: thin Python over the views of sql/gpu/ and sql/peers/.

Every number comes from SQL (see the comment blocks of the views named below); these functions only pick
the rows (trace, step), sort, cut and convert ns to µs for display.
"""
from __future__ import annotations

import polars as pl

SORT_KEYS = {"count": "count", "duration": "avg_ns", "total": "total_ns", "percentage": "time_pct"}
GAP_SORT_KEYS = {"count": "count", "avg": "avg_gap_ns", "max": "max_gap_ns", "stdev": "std_gap_ns",
                 "total": "total_idle_ns"}


MAX_BINS = 10_000  # gaps histogram: one row per bin and trace

def _q(ds, query: str, params: dict | None = None) -> pl.DataFrame:
    """Run a query with named parameters ($name) and return polars."""
    return ds.con.sql(query, params=params).pl() if params else ds.con.sql(query).pl()


def has_view(ds, name: str) -> bool:
    """Whether the SQL library of this installation defines ``name`` (a peer's folder may be removed)."""
    from tracesql.store.sqlmodules import object_modules

    return name in object_modules()


def trace_labels(ds) -> dict[str, str]:
    """{trace_id: label} of every trace (view trace_labels: the file name, made unique within the dataset)."""
    return dict(ds.con.sql("SELECT trace_id, label FROM trace_labels ORDER BY label, trace_id").fetchall())


def trace_ids(ds, trace: str | None = None) -> list[str]:
    """The trace_ids a ``--trace`` value names: all traces when it is None, else the one trace whose trace_id,
    label, file name, source path or path suffix it is (a trace_id prefix of 6 digits or more counts too).

    Raises DatasetError when nothing matches and when a file name or path matches several traces (the message
    lists their labels)."""
    from tracesql.errors import DatasetError

    if trace is None:
        return [r[0] for r in ds.con.sql("SELECT trace_id FROM trace_labels ORDER BY label, trace_id").fetchall()]
    exact = ds.con.sql("SELECT trace_id FROM trace_labels WHERE trace_id = $t OR label = $t",
                       params={"t": trace}).fetchall()
    if len(exact) == 1:
        return [exact[0][0]]
    rows = ds.con.sql(
        "SELECT l.trace_id, l.label FROM trace_labels l JOIN traces t USING (trace_id) "
        "WHERE t.file_name = $t OR t.source_path = $t OR ends_with(t.source_path, '/' || $t) "
        "OR t.file_name = $t || '.json.gz' OR t.file_name = $t || '.json' "
        "OR (length($t) >= 6 AND starts_with(l.trace_id, lower($t))) ORDER BY l.label, l.trace_id",
        params={"t": trace}).fetchall()
    if not rows:
        raise DatasetError(f"no trace matches {trace!r} (give a trace_id or a label; `tracesql traces DATASET` "
                           "lists them)")
    if len(rows) > 1:
        raise DatasetError(f"{trace!r} matches {len(rows)} traces: "
                           + ", ".join(f"{label} ({tid})" for tid, label in rows) + "; give a label or a trace_id")
    return [rows[0][0]]


def _in(ids: list[str]) -> str:
    return "(" + ", ".join("'" + i.replace("'", "''") + "'" for i in ids) + ")"


def _step_name(step) -> str | None:
    if step is None:
        return None
    s = str(step)
    return s if s.startswith("ProfilerStep#") else f"ProfilerStep#{s}"


def _check_top(top: int | None) -> None:
    if top is not None and top < 0:
        raise ValueError(f"top must be 0 or more, not {top}")


def steps(ds, ids: list[str]) -> list[str]:
    """The ProfilerStep names of these traces, in step order."""
    return [r[0] for r in ds.con.sql(f"SELECT DISTINCT step, step_number FROM _gpu_steps WHERE trace_id IN {_in(ids)} "
                                     "ORDER BY step_number, step").fetchall()]


def check_step(ds, ids: list[str], step) -> str | None:
    """The ProfilerStep name of ``step`` (a number or a name); DatasetError when no selected trace has it."""
    name = _step_name(step)
    if name is None:
        return None
    known = steps(ds, ids)
    if name not in known:
        from tracesql.errors import DatasetError

        shown = ", ".join(k.removeprefix("ProfilerStep#") for k in known[:20]) + (", ..." if len(known) > 20 else "")
        raise DatasetError(f"no {name} in the selected traces ("
                           + (f"steps: {shown}" if known else "they have no ProfilerStep") + ")")
    return name


def kernel_summary(ds, trace: str | None = None, step: int | str | None = None, sort: str = "total",
                   top: int | None = None, verbose: bool = False, by_category: bool = False) -> pl.DataFrame:
    """Per trace and kernel name: count, avg/total/min/max/std duration (µs), % of launches, % of kernel time.

    Parameters:
      trace        a trace_id or label (``tracesql traces``); None: every trace
      step         a ProfilerStep number or name: only the GPU work launched in it (DatasetError if no trace has it)
      sort         ``count``, ``duration`` (mean), ``total`` or ``percentage``, largest first
      top          keep the first N kernels of each trace (None: all)
      verbose      group by full kernel names instead of short ones
      by_category  return the view ``kernel_category_by_op`` instead (GPU time per category and parent op)

    Rows of the SQL macro ``kernel_summary_of(step, full_names)``; columns trace_id, trace (the label), name,
    class, count, avg_us, total_us, min_us, max_us, std_us, launches_pct, time_pct.
    """
    ids = trace_ids(ds, trace)
    _check_top(top)
    if by_category:
        if not has_view(ds, "kernel_category_by_op"):
            from tracesql.errors import DatasetError

            raise DatasetError("--by-category needs the kernel category views (sql/categories/)")
        return _q(ds, f"""SELECT k.trace_id, t.label AS trace, k.* EXCLUDE (trace_id) FROM kernel_category_by_op k
            JOIN trace_labels t USING (trace_id) WHERE k.trace_id IN {_in(ids)}
            ORDER BY trace, k.parent_time_ms DESC, k.cpu_op, k.total_time_ms DESC""")
    if sort not in SORT_KEYS:
        raise ValueError(f"sort must be one of {', '.join(SORT_KEYS)}")
    step_name = check_step(ds, ids, step)
    key = SORT_KEYS[sort]
    q = f"""
    SELECT k.trace_id, t.label AS trace, k.name, k.activity_class AS class, k.count,
           k.avg_ns / 1e3 AS avg_us, k.total_ns / 1e3 AS total_us, k.min_ns / 1e3 AS min_us,
           k.max_ns / 1e3 AS max_us, k.std_ns / 1e3 AS std_us, k.launches_pct, k.time_pct,
           row_number() OVER (PARTITION BY k.trace_id ORDER BY k.{key} DESC, k.name) AS rank
    FROM kernel_summary_of($step, $full) k JOIN trace_labels t USING (trace_id)
    WHERE k.trace_id IN {_in(ids)}
    """
    q = f"SELECT * EXCLUDE (rank) FROM ({q}) " + (f"WHERE rank <= {int(top)} " if top is not None else "") + \
        "ORDER BY trace, rank"
    return _q(ds, q, {"step": step_name, "full": bool(verbose)})


def timeline(ds, trace: str | None = None, by_step: bool = False, pooled_only: bool = False,
             style: str = "native") -> pl.DataFrame:
    """GPU time breakdown per trace and device, plus a row per trace pooling its devices.

    Parameters:
      trace        a trace_id or label; None: every trace
      by_step      one row per ProfilerStep#N (view gpu_timeline_by_step) instead of per trace (gpu_timeline)
      pooled_only  only the rows pooling the devices
      style        ``native``, or ``tracelens`` / ``hta`` for the peer's breakdown (tl_gpu_timeline,
                   hta_temporal_breakdown, in the peer's columns)

    Native columns: trace_id, trace, device (NULL on the pooled row), pooled, [step,] n_events, then times in
    µs (ns in the views) and percentages."""
    ids = trace_ids(ds, trace)
    if style == "tracelens":
        return _q(ds, f"SELECT g.trace_id, t.label AS trace, g.* EXCLUDE (trace_id) FROM tl_gpu_timeline g "
                      f"JOIN trace_labels t USING (trace_id) WHERE g.trace_id IN {_in(ids)}")
    if style == "hta":
        return _q(ds, f"SELECT g.trace_id, t.label AS trace, g.* EXCLUDE (trace_id) FROM hta_temporal_breakdown g "
                      f"JOIN trace_labels t USING (trace_id) WHERE g.trace_id IN {_in(ids)} ORDER BY trace")
    if style != "native":
        raise ValueError(f"style must be native, tracelens or hta, not {style!r}")
    view = "gpu_timeline_by_step" if by_step else "gpu_timeline"
    where = " AND g.pooled" if pooled_only else ""
    return _q(ds, f"""
    SELECT g.trace_id, t.label AS trace, CASE WHEN NOT g.pooled THEN g.device END::INTEGER AS device, g.pooled,
           {'g.step, ' if by_step else ''}g.n_events, g.span_ns / 1e3 AS total_us, g.compute_ns / 1e3 AS compute_us,
           g.comm_ns / 1e3 AS comm_us, g.comm_exposed_ns / 1e3 AS comm_exposed_us, g.memory_ns / 1e3 AS memory_us,
           g.memory_exposed_ns / 1e3 AS memory_exposed_us, g.busy_ns / 1e3 AS busy_us, g.idle_ns / 1e3 AS idle_us,
           g.compute_pct, g.comm_pct, g.comm_exposed_pct, g.memory_pct, g.memory_exposed_pct, g.busy_pct,
           g.idle_pct, g.comm_overlap_pct, g.window_ns / 1e3 AS window_us
    FROM {view} g JOIN trace_labels t USING (trace_id)
    {'LEFT JOIN _gpu_steps s ON s.trace_id = g.trace_id AND s.step = g.step' if by_step else ''}
    WHERE g.trace_id IN {_in(ids)}{where}
    ORDER BY trace, {'s.step_number, g.step, ' if by_step else ''}g.pooled DESC, g.device
    """)


GAP_VIEWS = ("streams", "events", "histogram", "transitions", "idle")


def _nice_ceiling(x: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k that is >= x (a histogram's upper bound read from the data)."""
    import math

    if x <= 0:
        return 1.0
    k = math.floor(math.log10(x))
    for m in (1, 2, 2.5, 5, 10):
        if m * 10 ** k >= x:
            return float(m * 10 ** k)
    return float(10 ** (k + 1))


def gaps(ds, trace: str | None = None, what: str = "streams", hist_min: float = 0.0, hist_max: float | None = None,
         bins: int = 20, sort: str = "count", top: int | None = None, verbose: bool = False,
         kernel_wait_us: float = 30.0, step: int | str | None = None) -> pl.DataFrame:
    """Idle gaps between consecutive GPU events on a stream (views of sql/gpu/gaps.sql).

    Parameters:
      trace           a trace_id or label; None: every trace
      what            ``streams`` (totals per stream), ``events`` (every positive gap, largest first; start_us is
                      the event's start relative to the trace's first event), ``histogram``, ``transitions``
                      (kernel pairs A -> B) or ``idle`` (host wait / kernel wait / other)
      hist_min, hist_max, bins   histogram range in µs and bins of equal width; hist_max None: up to the largest
                      gap (rounded up); gaps outside the range are counted in an underflow / overflow bin
      sort            order of ``transitions``: count, avg, max, stdev or total
      top             ``events`` and ``transitions``: the first N rows per trace
      verbose         full kernel names
      kernel_wait_us  ``idle``: gaps shorter than this that are not host waits are kernel waits
      step            a ProfilerStep number or name (``streams``, ``events``, ``histogram``): only the GPU work
                      launched in it

    Every frame starts with trace_id and trace (the label); device and stream are integers."""
    if what not in GAP_VIEWS:
        raise ValueError(f"unknown gaps view {what!r}")
    ids = trace_ids(ds, trace)
    _check_top(top)
    if step is not None and what not in ("streams", "events", "histogram"):
        raise ValueError("a step selects the stream totals, the histogram or the events, not the "
                         f"{what} view")
    step_name = check_step(ds, ids, step)
    w = f"WHERE g.trace_id IN {_in(ids)}"
    j = "JOIN trace_labels t USING (trace_id)"
    if what == "streams" and step_name is None:
        return _q(ds, f"""SELECT g.trace_id, t.label AS trace, g.device::INTEGER AS device, g.stream::INTEGER AS stream,
            g.n_events, g.n_gaps, g.idle_ns / 1e3 AS idle_us, g.mean_gap_ns / 1e3 AS mean_gap_us,
            g.max_gap_ns / 1e3 AS max_gap_us, g.span_ns / 1e3 AS span_us, g.busy_ns / 1e3 AS busy_us, g.idle_pct
            FROM gap_totals_by_stream g {j} {w} ORDER BY trace, g.device, g.stream""")
    if what == "streams":  # the same totals over the events launched in the step
        return _q(ds, f"""SELECT g.trace_id, t.label AS trace, g.device::INTEGER AS device,
            g.stream::INTEGER AS stream, count(*) AS n_events, count(*) FILTER (WHERE g.gap_ns > 0) AS n_gaps,
            coalesce(sum(g.idle_ns), 0) / 1e3 AS idle_us,
            avg(g.gap_ns) FILTER (WHERE g.gap_ns > 0) / 1e3 AS mean_gap_us,
            max(g.gap_ns) FILTER (WHERE g.gap_ns > 0) / 1e3 AS max_gap_us,
            (max(g.end_ns) - min(g.ts_ns)) / 1e3 AS span_us,
            (max(g.end_ns) - min(g.ts_ns) - coalesce(sum(g.idle_ns), 0)) / 1e3 AS busy_us,
            100.0 * coalesce(sum(g.idle_ns), 0) / nullif(max(g.end_ns) - min(g.ts_ns), 0) AS idle_pct
            FROM gpu_gaps g {j} {w} AND g.step = $step GROUP BY ALL ORDER BY trace, device, stream""",
                      {"step": step_name})
    sw = " AND g.step = $step" if step_name else ""
    sp = {"step": step_name} if step_name else {}
    if what == "events":
        name = "g.name" if verbose else "coalesce(g.short_name, g.name)"
        prev = "g.prev_name" if verbose else "coalesce(g.prev_short_name, g.prev_name)"
        q = f"""WITH starts AS (SELECT trace_id, min(ts_ns) AS t0 FROM (
                    SELECT trace_id, ts_ns FROM events WHERE trace_id IN {_in(ids)}
                    UNION ALL SELECT trace_id, ts_ns FROM kernels WHERE trace_id IN {_in(ids)}) GROUP BY trace_id)
            SELECT g.trace_id, t.label AS trace, g.device::INTEGER AS device, g.stream::INTEGER AS stream, g.seq,
            g.event_id, (g.ts_ns - s.t0) / 1e3 AS start_us, g.gap_ns / 1e3 AS gap_us, g.host_wait,
            {prev} AS prev_name, {name} AS name,
            row_number() OVER (PARTITION BY g.trace_id ORDER BY g.gap_ns DESC, g.event_id) AS rank
            FROM gpu_gaps g {j} JOIN starts s USING (trace_id) {w} AND g.gap_ns > 0{sw}"""
        q = f"SELECT * EXCLUDE (rank) FROM ({q}) " + (f"WHERE rank <= {int(top)} " if top is not None else "") + \
            "ORDER BY trace, rank"
        return _q(ds, q, sp)
    if what == "histogram":
        if not 1 <= bins <= MAX_BINS:
            raise ValueError(f"the histogram needs 1 to {MAX_BINS:,} bins (one row per bin), not {bins}")
        lo = float(hist_min)
        if hist_max is None:
            mx = ds.con.sql(f"SELECT max(g.gap_ns) / 1e3 FROM gpu_gaps g {w} AND g.gap_ns > 0{sw}",
                            params=sp or None).fetchall()[0][0]
            hi = _nice_ceiling(mx or 1.0) if (mx or 0) > lo else lo + 1.0
        else:
            hi = float(hist_max)
        if not hi > lo:
            raise ValueError("the histogram needs --hist-max above --hist-min")
        q = f"""WITH g AS (SELECT g.trace_id, g.gap_ns, g.gap_ns / 1e3 AS gap_us FROM gpu_gaps g {w}
                AND g.gap_ns > 0{sw}),
            b AS (SELECT trace_id, gap_ns, gap_us, CASE WHEN gap_us < $lo THEN -1 WHEN gap_us > $hi THEN $bins
                  ELSE least(floor((gap_us - $lo) / (($hi - $lo) / $bins))::BIGINT, $bins - 1) END AS bin FROM g),
            r AS (SELECT DISTINCT b.trace_id, x.range AS bin FROM b, range($bins) x
                  UNION SELECT DISTINCT trace_id, bin FROM b)
            SELECT r.trace_id, t.label AS trace, r.bin,
                   CASE WHEN r.bin < 0 THEN 0.0 WHEN r.bin >= $bins THEN $hi ELSE $lo + r.bin * ($hi - $lo) / $bins END
                       AS bin_start_us,
                   CASE WHEN r.bin < 0 THEN $lo WHEN r.bin >= $bins THEN NULL
                        ELSE $lo + (r.bin + 1) * ($hi - $lo) / $bins END AS bin_end_us,
                   count(b.gap_us) AS count, coalesce(sum(b.gap_ns), 0) / 1e3 AS total_us
            FROM r JOIN trace_labels t USING (trace_id) LEFT JOIN b ON b.trace_id = r.trace_id AND b.bin = r.bin
            GROUP BY ALL ORDER BY trace, r.bin"""
        return _q(ds, q, {"lo": lo, "hi": hi, "bins": int(bins), **sp})
    if what == "transitions":
        if sort not in GAP_SORT_KEYS:
            raise ValueError(f"sort must be one of {', '.join(GAP_SORT_KEYS)}")
        key = GAP_SORT_KEYS[sort]
        q = f"""SELECT g.trace_id, t.label AS trace, g.transition, g.count, g.avg_gap_ns / 1e3 AS avg_gap_us,
            g.max_gap_ns / 1e3 AS max_gap_us, g.min_gap_ns / 1e3 AS min_gap_us, g.std_gap_ns / 1e3 AS std_gap_us,
            g.total_idle_ns / 1e3 AS total_idle_us,
            row_number() OVER (PARTITION BY g.trace_id ORDER BY g.{key} DESC, g.transition) AS rank
            FROM kernel_transitions_of($full) g {j} {w}"""
        q = f"SELECT * EXCLUDE (rank) FROM ({q}) " + (f"WHERE rank <= {int(top)} " if top is not None else "") + \
            "ORDER BY trace, rank"
        return _q(ds, q, {"full": bool(verbose)})
    return _q(ds, f"""SELECT g.trace_id, t.label AS trace, g.device::INTEGER AS device, g.stream::INTEGER AS stream,
        g.idle_category, g.count, g.idle_ns / 1e3 AS idle_us, g.idle_ratio
        FROM idle_breakdown_at($kw) g {j} {w} ORDER BY trace, g.device, g.stream, g.idle_category""",
              {"kw": float(kernel_wait_us)})


def launch_stats(ds, trace: str | None = None, runtime_cutoff_us: float = 50,
                 launch_delay_cutoff_us: float = 100) -> pl.DataFrame:
    """Per trace and launch API: calls, CPU duration, GPU duration, launch delay and flagged calls (view
    ``launch_stats_at(runtime_cutoff_us, launch_delay_cutoff_us)``).

    Parameters:
      trace                   a trace_id or label; None: every trace
      runtime_cutoff_us       a launch call longer than this (µs) is a runtime outlier
      launch_delay_cutoff_us  a launch whose GPU work starts later than this after the call (µs) is a
                              launch-delay outlier"""
    ids = trace_ids(ds, trace)
    return _q(ds, f"""
    SELECT g.trace_id, t.label AS trace, g.api, g.launch_kind, count(*) AS calls,
           count(g.gpu_start_ns) AS calls_with_gpu,
           avg(g.cpu_dur_ns) / 1e3 AS cpu_dur_mean_us, max(g.cpu_dur_ns) / 1e3 AS cpu_dur_max_us,
           avg(g.gpu_dur_ns) / 1e3 AS gpu_dur_mean_us, avg(g.launch_delay_ns) / 1e3 AS launch_delay_mean_us,
           median(g.launch_delay_ns) / 1e3 AS launch_delay_median_us,
           max(g.launch_delay_ns) / 1e3 AS launch_delay_max_us,
           count(*) FILTER (WHERE g.short_kernel) AS short_kernels,
           count(*) FILTER (WHERE g.runtime_outlier) AS runtime_outliers,
           count(*) FILTER (WHERE g.launch_delay_outlier) AS launch_delay_outliers
    FROM launch_stats_at($rc, $dc) g JOIN trace_labels t USING (trace_id)
    WHERE g.trace_id IN {_in(ids)}
    GROUP BY ALL ORDER BY trace, calls DESC, g.api""",
              {"rc": float(runtime_cutoff_us), "dc": float(launch_delay_cutoff_us)})
