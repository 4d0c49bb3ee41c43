"""tracesql.Dataset: a dataset opened for queries (tracesql.store.dataset.Store) with its analyses as methods, each
a thin wrapper over a module of this package."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tracesql.store.dataset import Store

if TYPE_CHECKING:  # polars starts threads when imported: it is imported where a frame is made, not here
    import polars as pl

    from tracesql.render.sections import Section


class Dataset(Store):
    """A tracesql dataset: ``ds.sql(query)`` returns a polars DataFrame, ``ds.con`` is the DuckDB connection; the
    methods below are the analyses (tracesql.api.*)."""

    # Analyses (each a thin wrapper over SQL views; see the modules named). ``trace`` is what the CLI's --trace
    # takes (a trace_id, its first 6+ digits, a label, a file name or a path suffix); None: every trace.
    def tree(self, op: str | None = None, module: str | None = None, depth: int | None = None,
             trace: str | None = None, merge: bool = False, **deprecated) -> pl.DataFrame:
        """Call tree with GPU time per node (tracesql.api.tree.tree: the parameters are documented there); an op or
        module that matches nothing raises EmptySelection, as `tracesql tree` exits 1."""
        from tracesql.api import analysis
        from tracesql.api.tree import tree

        trace = _trace_keyword(trace, deprecated, "tree")
        tid = None if trace is None else analysis.trace_ids(self, trace)[0]
        return tree(self, op=op, module=module, depth=depth, trace=tid, merge=merge)

    def categories(self, ruleset: str = "default", unmatched: bool = False, trace: str | None = None,
                   by: str = "category", **deprecated) -> pl.DataFrame:
        """GPU time per kernel category (tracesql.api.categories.categories: the parameters are documented there)."""
        from tracesql.api.categories import categories

        trace = _trace_keyword(trace, deprecated, "categories")
        return categories(self, ruleset=ruleset, unmatched=unmatched, trace=trace, by=by)

    def summary(self, trace: str | None = None, arch: str | None = None) -> dict[str, pl.DataFrame]:
        """The first screen's frames, {overview view name: its rows} (tracesql.api.summary.overview): what
        `tracesql summary` prints; ``arch``: the GPU of the Compute line's roofline, as --arch."""
        from tracesql.api.summary import overview

        return overview(self, trace, arch=arch)

    def report(self, style: str = "native", trace: str | None = None, by_module: bool = False,
               arch: str | None = None) -> list[Section]:
        """Every section of a report (tracesql.api.report.build): what `tracesql report --style STYLE` writes, each a
        tracesql.render.sections.Section (its name, frame, trace label for a per-trace section, title, meaning)."""
        from tracesql.api.report import build

        return build(self, style=style, trace=trace, by_module=by_module, arch=arch)

    def chart(self, section: str, trace: str | None = None) -> list[dict]:
        """The charts of a native report section as Vega-Lite specs, one per trace (tracesql.render.report_charts,
        what `tracesql report --format html` draws): plain dicts, for ``altair.Chart.from_dict(spec)`` in a notebook
        or any Vega-Lite renderer. ``section``: a section with a chart (kernel_summary, op_summary, gpu_timeline,
        gap_histogram, idle_breakdown, launch_stats, short_kernel_histogram); ValueError for another."""
        from tracesql.api.report import section_specs

        return section_specs(self, section, trace=trace)

    def launches(self, trace: str | None = None, runtime_cutoff_us: float = 50,
                 launch_delay_cutoff_us: float = 100) -> pl.DataFrame:
        """Launch statistics per trace and launch API, what `tracesql launches` shows
        (tracesql.api.analysis.launch_stats: the parameters are documented there)."""
        from tracesql.api.analysis import launch_stats

        return launch_stats(self, trace=trace, runtime_cutoff_us=runtime_cutoff_us,
                            launch_delay_cutoff_us=launch_delay_cutoff_us)

    def kernel_summary(self, trace: str | None = None, step: int | str | None = None, sort: str = "total",
                       top: int | None = None, verbose: bool = False, by_category: bool = False) -> pl.DataFrame:
        """Per-kernel-name statistics (tracesql.api.analysis.kernel_summary: the parameters are documented there)."""
        from tracesql.api.analysis import kernel_summary

        return kernel_summary(self, trace=trace, step=step, sort=sort, top=top, verbose=verbose,
                              by_category=by_category)

    def timeline(self, trace: str | None = None, by_step: bool = False, pooled_only: bool = False,
                 style: str = "native") -> pl.DataFrame:
        """GPU time breakdown per trace and device (tracesql.api.analysis.timeline: the parameters are documented
        there)."""
        from tracesql.api.analysis import timeline

        return timeline(self, trace=trace, by_step=by_step, pooled_only=pooled_only, style=style)

    def perf(self, trace: str | None = None, arch: str | None = None, by: str = "args", bound: str | None = None,
             below_pct: float | None = None, micros: bool = True) -> pl.DataFrame:
        """FLOPs, bytes, achieved TFLOP/s and TB/s and the roofline of the modelled ops (tracesql.api.perf.perf: the
        parameters are documented there)."""
        from tracesql.api.perf import perf

        return perf(self, trace=trace, arch=arch, by=by, bound=bound, below_pct=below_pct, micros=micros)

    def gaps(self, trace: str | None = None, what: str = "streams", hist_min: float = 0.0,
             hist_max: float | None = None, bins: int = 20, sort: str = "count", top: int | None = None,
             verbose: bool = False, kernel_wait_us: float = 30.0, step: int | str | None = None) -> pl.DataFrame:
        """Idle gaps between GPU events (tracesql.api.analysis.gaps: the parameters are documented there)."""
        from tracesql.api.analysis import gaps

        return gaps(self, trace=trace, what=what, hist_min=hist_min, hist_max=hist_max, bins=bins, sort=sort,
                    top=top, verbose=verbose, kernel_wait_us=kernel_wait_us, step=step)

    # Multi-rank jobs (tracesql.api.comm over sql/comm/).
    def collectives(self, job: int | None = None, by: str = "collective", top: int | None = None) -> pl.DataFrame:
        """Collectives matched across the ranks of a job (tracesql.api.comm.collectives: the parameters are documented
        there)."""
        from tracesql.api.comm import collectives

        return collectives(self, job=job, by=by, top=top)

    def ranks(self, job: int | None = None) -> pl.DataFrame:
        """The ranks of a job side by side (tracesql.api.comm.ranks)."""
        from tracesql.api.comm import ranks

        return ranks(self, job=job)

    def diff(self, base: str, variant: str, level: str | None = None) -> pl.DataFrame | dict[str, pl.DataFrame]:
        """The trace ``variant`` compared with the trace ``base`` of this dataset, one level or (level None) a dict
        of every level (tracesql.api.diff.diff: the parameters and columns are documented there). Either may also be
        ``DATASET[:TRACE]``, a trace of another dataset (tracesql.api.diff.compare; the other is then a trace of
        this dataset)."""
        from tracesql.api.diff import compare, diff, is_spec

        if is_spec(base) or is_spec(variant):
            b, v = (x if is_spec(x) else f"{self.path}:{x}" for x in (base, variant))
            return compare(b, v, level=level)
        return diff(self, base, variant, level=level)


def _trace_keyword(trace: str | None, deprecated: dict, method: str) -> str | None:
    """``trace``, or the value of the old keyword ``trace_id`` with a DeprecationWarning; any other keyword is a
    TypeError, as for a method without **kwargs."""
    import warnings

    unknown = set(deprecated) - {"trace_id"}
    if unknown:
        raise TypeError(f"{method}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if "trace_id" in deprecated:
        warnings.warn(f"Dataset.{method}(trace_id=...) is deprecated: use trace= (a trace_id or a label)",
                      DeprecationWarning, stacklevel=3)
        if trace is not None:
            raise TypeError(f"{method}() got both trace and trace_id")
        return deprecated["trace_id"]
    return trace


def open(path, threads: int | None = None,  # noqa: A001 - mirrors tracesql.open(DATASET)
         trace_ids: list[str] | None = None, also: list[tuple[str | Path, str, str]] | None = None,
         memory_limit: str | None = None) -> Dataset:
    """Open a dataset. ``trace_ids``: only these traces (cheap whatever the dataset's size: for per-trace tasks
    of a batch job). ``also``: (other dataset, trace_id, as_id) triples, traces of other datasets opened beside
    them, each under the trace_id ``as_id`` (two datasets compared in one connection: tracesql.api.diff).
    ``memory_limit``: DuckDB's memory limit for the connection (default: default_memory_limit())."""
    return Dataset(path, threads=threads, trace_ids=trace_ids, also=also, memory_limit=memory_limit)
