"""Two traces compared: thin Python over the table macros of sql/diff/ (their comment blocks define every column).

``diff(ds, base, variant, level)`` picks the two traces (a trace_id or label, as ``--trace`` takes them) and
returns the rows of one level, or of every level, as polars frames; times stay in ns as in the views.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

# level -> the table macro of sql/diff/ that computes it
LEVELS = {
    "timeline": "diff_gpu_timeline",     # sql/diff/timeline.sql
    "steps": "diff_gpu_timeline_by_step",  # sql/diff/steps.sql
    "steady": "diff_gpu_timeline_steady",  # sql/diff/steps.sql
    "categories": "diff_kernel_categories",  # sql/diff/categories.sql
    "ops": "diff_ops",                   # sql/diff/ops.sql
    "op_args": "diff_op_args",           # sql/diff/ops.sql
    "modules": "diff_modules",           # sql/diff/modules.sql
    "kernels": "diff_kernels",           # sql/diff/kernels.sql
    "tree": "diff_tree",                 # sql/diff/tree.sql
}


def pair(ds, base: str, variant: str) -> tuple[str, str]:
    """The trace_ids of ``base`` and ``variant`` (each a trace_id, its first 6+ digits, a label, a file name or a
    path suffix: tracesql.analysis.trace_ids); DatasetError when one names no trace or several."""
    from .analysis import trace_ids

    return trace_ids(ds, base)[0], trace_ids(ds, variant)[0]


def level_frame(ds, base_id: str, variant_id: str, level: str) -> pl.DataFrame:
    """The rows of one level for two trace_ids, ordered by |diff_ns| descending (as the macro orders them)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    return ds.con.sql(f"SELECT * FROM {LEVELS[level]}($b, $v)", params={"b": base_id, "v": variant_id}).pl()


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
                     the lowest common ancestor); None: a dict of every level

    Each frame: the level's key columns, then side (both, base_only, variant_only), base_count, variant_count,
    base_ns, variant_ns, diff_ns (variant - base, a missing side counting 0) and ratio (variant / base), ordered
    by |diff_ns| descending."""
    b, v = pair(ds, base, variant)
    if level is not None:
        return level_frame(ds, b, v, level)
    return {name: level_frame(ds, b, v, name) for name in LEVELS}
