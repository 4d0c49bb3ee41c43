"""tracesql.Dataset: a dataset opened for queries (tracesql.store.dataset.Store) with its analyses as methods, each
a thin wrapper over a module of this package."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tracesql.store.dataset import Store

if TYPE_CHECKING:  # polars starts threads when imported: it is imported where a frame is made, not here
    import polars as pl


class Dataset(Store):
    """A tracesql dataset: ``ds.sql(query)`` returns a polars DataFrame, ``ds.con`` is the DuckDB connection; the
    methods below are the analyses (tracesql.api.*)."""

    # Analyses (each a thin wrapper over SQL views; see the modules named).
    def tree(self, op: str | None = None, module: str | None = None, depth: int | None = None,
             trace_id: str | None = None) -> pl.DataFrame:
        """Call tree with GPU time per node (tracesql.api.tree.tree: the parameters are documented there)."""
        from tracesql.api.tree import tree

        return tree(self, op=op, module=module, depth=depth, trace_id=trace_id)

    def categories(self, ruleset: str = "default", unmatched: bool = False, trace_id: str | None = None,
                   by: str = "category") -> pl.DataFrame:
        """GPU time per kernel category (tracesql.api.categories.categories: the parameters are documented there)."""
        from tracesql.api.categories import categories

        return categories(self, ruleset=ruleset, unmatched=unmatched, trace_id=trace_id, by=by)

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


def open(path, threads: int | None = None,  # noqa: A001 - mirrors tracesql.open(DATASET)
         trace_ids: list[str] | None = None, also: list[tuple[str | Path, str, str]] | None = None,
         memory_limit: str | None = None) -> Dataset:
    """Open a dataset. ``trace_ids``: only these traces (cheap whatever the dataset's size: for per-trace tasks
    of a batch job). ``also``: (other dataset, trace_id, as_id) triples, traces of other datasets opened beside
    them, each under the trace_id ``as_id`` (two datasets compared in one connection: tracesql.api.diff).
    ``memory_limit``: DuckDB's memory limit for the connection (default: default_memory_limit())."""
    return Dataset(path, threads=threads, trace_ids=trace_ids, also=also, memory_limit=memory_limit)
