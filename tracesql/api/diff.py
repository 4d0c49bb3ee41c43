"""Two traces compared: thin Python over the table macros of sql/diff/ (their comment blocks define every column).

``diff(ds, base, variant, level)`` picks the two traces (a trace_id or label, as ``--trace`` takes them) and
returns the rows of one level, or of every level, as polars frames; times stay in ns as in the views.

Traces of two datasets meet in one connection (``open_sides``): the baseline's dataset opened with only the
chosen traces (``tracesql.open(..., trace_ids=...)``) and the variant's traces beside them (``also=``), each under
its own trace_id, or under ``<trace_id>@variant`` when the same trace is on both sides (a trace compared with its
copy in another dataset), so that the macros of sql/diff/, which take two trace_ids, run unchanged.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tracesql.errors import DatasetError
from tracesql.store.sqlmodules import outputs

if TYPE_CHECKING:
    import polars as pl

    from tracesql.store.dataset import Store as Dataset

# level -> the table macro of sql/diff/ that computes it
# level -> the macro of its rows (the SQL library's ``@output diff-level``, sql/diff/), in order
LEVELS = {o.name: o.object for o in outputs("diff-level")}

# the suffix of a variant trace_id that is also a baseline trace_id, in the connection of open_sides
VARIANT_SUFFIX = "@variant"


def pair(ds, base: str, variant: str) -> tuple[str, str]:
    """The trace_ids of ``base`` and ``variant`` (each a trace_id, its first 6+ digits, a label, a file name or a
    path suffix: tracesql.api.analysis.trace_ids); DatasetError when one names no trace or several."""
    from tracesql.api.analysis import trace_ids

    return trace_ids(ds, base)[0], trace_ids(ds, variant)[0]


def level_frame(ds, base_id: str, variant_id: str, level: str) -> pl.DataFrame:
    """The rows of one level for two trace_ids, ordered by |diff_ns| descending (as the macro orders them). A
    side may be several trace_ids separated by commas (the ranks of a job): their values are summed."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    with _perf_computed(ds, [base_id, variant_id] if level == "perf" else []):
        return ds.con.sql(f"SELECT * FROM {LEVELS[level]}($b, $v)", params={"b": base_id, "v": variant_id}).pl()


@contextmanager
def _perf_computed(ds, sides: list[str]):
    """The compute model's views computed once for the traces of ``sides`` (as `tracesql perf` does), then set
    aside; nothing done when sides is empty or they are computed already (an enclosing call)."""
    from tracesql.api.perf import _computed, _drop

    ids = sorted({t for side in sides for t in side.split(",") if t})
    made, aside = _computed(ds, ids, None) if ids else ([], [])
    try:
        yield
    finally:
        _drop(ds, made, aside)


def split_spec(spec: str) -> tuple[Path, str | None]:
    """``DATASET[:TRACE]`` as (dataset folder, TRACE or None). The whole text is the dataset when it is a folder;
    else the text before the last ':' is. DatasetError when neither is a dataset folder."""
    if os.path.isdir(spec):
        return Path(spec), None
    head, sep, tail = spec.rpartition(":")
    if sep and head and os.path.isdir(head):
        if not tail:
            raise DatasetError(f"{spec!r}: no trace after ':' (DATASET or DATASET:TRACE)")
        return Path(head), tail
    raise DatasetError(f"{spec!r}: no such dataset folder (give DATASET or DATASET:TRACE, TRACE as --trace takes it)")


def is_spec(text: str) -> bool:
    """Whether ``text`` is ``DATASET[:TRACE]`` (split_spec) rather than a trace of a dataset at hand."""
    try:
        split_spec(text)
    except DatasetError:
        return False
    return True


@dataclass
class Side:
    """One side of a comparison, resolved in its own dataset: the traces ``DATASET[:TRACE]`` names."""
    spec: str
    dataset: Path
    trace_ids: list[str]              # the traces compared (one, or the ranks of a job), in rank order
    labels: list[str]                 # their labels in their dataset (trace_labels)
    ranks: list[int | None]           # their ranks (traces.rank)
    open_ids: list[str] = field(default_factory=list)  # the traces opened for them (all, for a graph replay)


def resolve(spec: str) -> Side:
    """The traces that ``DATASET[:TRACE]`` names: TRACE as ``--trace`` takes it, or several of them separated by
    commas; without TRACE every trace of the dataset. A side with CUDA graph replays opens its whole dataset (a
    replay takes its ops from the capture trace, tree/graph_capture)."""
    from tracesql.api.analysis import trace_ids, trace_labels
    from tracesql.store.dataset import Store as Dataset

    path, trace = split_spec(spec)
    with Dataset(path) as ds:
        ids = (trace_ids(ds) if trace is None
               else list(dict.fromkeys(t for part in trace.split(",") for t in trace_ids(ds, part.strip()))))
        labels = trace_labels(ds)
        ranks = dict(ds.con.execute("SELECT trace_id, rank FROM traces").fetchall())
        if not ids:
            raise DatasetError(f"{path}: the dataset holds no trace")
        ids.sort(key=lambda t: (ranks.get(t) is None, ranks.get(t) or 0, labels[t]))
        replays = ds.con.execute("SELECT count(*) FROM launches WHERE launch_kind = 'graph' AND list_contains(?, "
                                 "trace_id)", [ids]).fetchall()[0][0]
        opened = trace_ids(ds) if replays else ids
    return Side(spec, path, ids, [labels[t] for t in ids], [ranks.get(t) for t in ids], opened)


@dataclass
class Sides:
    """Two sides opened in one connection (open_sides): ``ds`` and the trace_ids of each side in it."""
    ds: Dataset
    base: Side
    variant: Side
    base_ids: list[str]      # the baseline's trace_ids in ds (its own)
    variant_ids: list[str]   # the variant's trace_ids in ds (its own, or <id>@variant when the baseline has it)

    def close(self) -> None:
        self.ds.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_sides(base: str, variant: str) -> Sides:
    """Open the traces of ``base`` and ``variant`` (each ``DATASET[:TRACE]``, resolve) in one connection: the
    baseline's dataset restricted to its traces, the variant's traces beside them (tracesql.open's ``also``); a
    variant trace that is also in the baseline's dataset is opened once, under its own trace_id, when the two
    datasets are one folder, else under ``<trace_id>@variant``."""
    from tracesql.store.dataset import Store as Dataset

    b, v = resolve(base), resolve(variant)
    same = b.dataset.resolve() == v.dataset.resolve()
    if same:
        opened = list(dict.fromkeys(b.open_ids + v.open_ids))
        return Sides(Dataset(b.dataset, trace_ids=opened), b, v, b.trace_ids, v.trace_ids)
    as_id = {t: t + VARIANT_SUFFIX if t in b.open_ids else t for t in v.open_ids}
    ds = Dataset(b.dataset, trace_ids=b.open_ids, also=[(v.dataset, t, as_id[t]) for t in v.open_ids])
    return Sides(ds, b, v, b.trace_ids, [as_id[t] for t in v.trace_ids])


def one_each(s: Sides) -> tuple[str, str]:
    """The baseline's and the variant's trace_id in s.ds when each side is one trace; else DatasetError."""
    for side in (s.base, s.variant):
        if len(side.trace_ids) != 1:
            raise DatasetError(
                f"{side.spec!r} names {len(side.trace_ids)} traces: give DATASET:TRACE (`tracesql traces "
                f"{side.dataset}` lists them), or --ranks pair|job to compare multi-rank jobs")
    return s.base_ids[0], s.variant_ids[0]


def open_pair(base: str, variant: str) -> tuple[Dataset, str, str]:
    """``open_sides`` for one trace a side: (the dataset opened over both, the baseline's trace_id, the
    variant's trace_id in it). DatasetError when a side names several traces."""
    s = open_sides(base, variant)
    try:
        b, v = one_each(s)
    except DatasetError:
        s.close()
        raise
    return s.ds, b, v


RANK_MODES = ("pair", "job")


def rank_pairs(s: Sides) -> list[tuple[int, str, str]]:
    """(rank, the baseline's trace_id, the variant's trace_id) for every rank of either side, ascending; '' for a
    side that lacks the rank (its rows are then one-sided). DatasetError when a trace has no rank or a side has a
    rank twice."""
    by_rank: list[dict[int, str]] = []
    for side, ids in ((s.base, s.base_ids), (s.variant, s.variant_ids)):
        ranks: dict[int, str] = {}
        for tid, label, rank in zip(ids, side.labels, side.ranks, strict=True):
            if rank is None:
                raise DatasetError(f"{side.spec!r}: trace {label} has no rank (distributedInfo.rank): --ranks "
                                   "compares the ranks of multi-rank jobs")
            if rank in ranks:
                raise DatasetError(f"{side.spec!r} holds rank {rank} twice (give the traces of one job: "
                                   "DATASET:TRACE,TRACE,...)")
            ranks[rank] = tid
        by_rank.append(ranks)
    return [(r, by_rank[0].get(r, ""), by_rank[1].get(r, "")) for r in sorted(set(by_rank[0]) | set(by_rank[1]))]


def rank_frames(s: Sides, level: str) -> pl.DataFrame:
    """One level, rank by rank (rank r of the baseline against rank r of the variant): the level's frame of
    each rank with a first column ``rank``, ranks ascending, each as level_frame orders it."""
    import polars as pl

    from tracesql.store.sqlmodules import materialized

    pairs = rank_pairs(s)
    ids = [t for _, b, v in pairs for t in (b, v)]
    # a level's sources tagged `@materialize diff-LEVEL` (per-trace summaries and walks that a filter on two traces
    # does not reach into) are computed once for every rank, not once per pair
    with (_perf_computed(s.ds, ids if level == "perf" else []),
          s.ds.materialized(materialized(f"diff-{level}") if len(pairs) > 1 else [], sorted(set(ids)))):
        parts = [level_frame(s.ds, b, v, level) for _, b, v in pairs]
    return pl.concat([df.select(pl.lit(r, dtype=pl.Int64).alias("rank"), pl.all())
                      for (r, _, _), df in zip(pairs, parts, strict=True)])


def job_ids(s: Sides) -> tuple[str, str]:
    """The two sides as a whole: all their trace_ids, comma-separated, as the macros of sql/diff/ take a side of
    several traces (their values summed over the ranks)."""
    return ",".join(s.base_ids), ",".join(s.variant_ids)


def diff(ds, base: str, variant: str, level: str | None = None) -> pl.DataFrame | dict[str, pl.DataFrame]:
    """The trace ``variant`` compared with the trace ``base`` of the same dataset.

    Parameters:
      base, variant  a trace_id (or its first 6+ digits), a label, a file name or a path suffix
      level          ``timeline`` (diff_gpu_timeline), ``steps`` (diff_gpu_timeline_by_step: the k-th ProfilerStep
                     of each trace paired), ``steady`` (diff_gpu_timeline_steady: mean per step over the steps after
                     the first), ``categories`` (diff_kernel_categories), ``ops``
                     (diff_ops), ``op_args`` (diff_op_args: op name, input dims, dtypes, strides, concrete
                     inputs), ``modules`` (diff_modules: nn.Module instances by path), ``kernels`` (diff_kernels,
                     short names) or ``tree`` (diff_tree: the two call trees
                     merged by op name and argument set, with self_diff_ns, the change attributed to the node as
                     the lowest common ancestor) or ``perf`` (diff_perf: the compute model's achieved TFLOP/s,
                     TB/s and % of roofline per op and argument set, each side's value, difference and ratio);
                     None: a dict of every level

    Each frame: the level's key columns, then side (both, base_only, variant_only), base_count, variant_count,
    base_ns, variant_ns, diff_ns (variant - base, a missing side counting 0) and ratio (variant / base), ordered
    by |diff_ns| descending."""
    b, v = pair(ds, base, variant)
    with shared_computed(ds, [b, v]):
        return frames(ds, b, v, level)


@contextmanager
def shared_computed(ds, sides: list[str]):
    """The views every level reads (those tagged ``@materialize diff``: the attribution of GPU events to ops) computed
    once for the traces of ``sides``, in a scope (Dataset.materialized)."""
    from tracesql.store.sqlmodules import materialized

    ids = sorted({t for side in sides for t in side.split(",") if t})
    with ds.materialized(materialized("diff"), ids):
        yield


def frames(ds, base_id: str, variant_id: str, level: str | None = None) -> pl.DataFrame | dict[str, pl.DataFrame]:
    """One level's frame (level_frame), or with level None a dict of every level."""
    if level is not None:
        return level_frame(ds, base_id, variant_id, level)
    return {name: level_frame(ds, base_id, variant_id, name) for name in LEVELS}


def compare(base: str, variant: str, level: str | None = None,
            ranks: str | None = None) -> pl.DataFrame | dict[str, pl.DataFrame]:
    """``variant`` compared with ``base``, each ``DATASET[:TRACE]`` (TRACE as ``--trace`` takes it, or several
    separated by commas; a dataset of one trace needs none): two traces of one dataset or a trace in each of two
    (open_sides). ``level`` and the frames as in diff.

    ``ranks`` for multi-rank jobs (each side a dataset or a set of traces, one per rank): ``pair`` compares rank
    r of base with rank r of variant (each frame with a first column ``rank``, rank_frames), ``job`` the jobs as
    a whole, every value summed over the ranks (job_ids)."""
    if ranks not in (None, *RANK_MODES):
        raise ValueError(f"ranks must be one of {', '.join(RANK_MODES)} or None, not {ranks!r}")
    with open_sides(base, variant) as s, shared_computed(s.ds, [*s.base_ids, *s.variant_ids]):
        if ranks == "pair":
            if level is not None:
                return rank_frames(s, level)
            return {name: rank_frames(s, name) for name in LEVELS}
        b, v = job_ids(s) if ranks == "job" else one_each(s)
        return frames(s.ds, b, v, level)
