"""Two traces compared as TraceLens compares two perf reports (`tracesql diff --style tracelens`): thin Python over
the table macros of sql/peers/tracelens/compare.sql (their comment blocks define every column and rule).

``frames(ds, base_id, variant_id, tags)`` returns TraceLens's comparison files as (file name, polars frame): the
macros compute the rows, the diffs, the split and the order; here the file's columns are selected, the tags put in
place of the placeholders and, in the split files, the columns empty in every row left out, as TraceLens writes
them. gpu_timeline, ops_summary and kernel_summary always have TraceLens's columns (tl_compare_file_columns), also
when one trace or both have no rows in the sheet (a trace whose launches TraceLens cannot link: no ac2g flows).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

# (file name, table macro of sql/peers/tracelens/compare.sql, split into intersect / only_baseline / only_variant
# files named <file>_<side>_<variant tag>), in TraceLens's order (generate_compare_perf_reports_pytorch).
SHEETS = [
    ("gpu_timeline", "tl_compare_gpu_timeline", False),
    ("ops_summary", "tl_compare_ops_summary", False),
    ("kernel_summary", "tl_compare_kernel_summary", False),
    ("ops_unique_args", "tl_compare_ops_unique_args", True),
    ("unified_perf_summary", "tl_compare_unified_perf_summary", True),
    # the roofline sheets: compared only when both traces have rows in them (the macros return none otherwise)
    ("GEMM", "tl_compare_gemm", True),
    ("SDPA_fwd", "tl_compare_sdpa_fwd", True),
    ("CONV_fwd", "tl_compare_conv_fwd", True),
    ("un_eltwise", "tl_compare_unary_elementwise", True),
    ("bin_eltwise", "tl_compare_binary_elementwise", True),
]
ROOFLINE = {"GEMM", "SDPA_fwd", "CONV_fwd", "un_eltwise", "bin_eltwise"}
SIDES = ("intersect", "only_baseline", "only_variant")


def default_tags(ds, base_id: str, variant_id: str) -> tuple[str, str]:
    """The tags TraceLens would take without --names (its reports' folder names): the traces' file names without
    .json(.gz), made safe for a file name."""
    from tracesql.api.analysis import trace_labels
    from tracesql.render.formats import safe_name as _safe_name

    labels = trace_labels(ds)
    return _safe_name(labels[base_id]), _safe_name(labels[variant_id])


def _file(df: pl.DataFrame, tags: tuple[str, str], drop_empty: bool, cols: list[str] | None = None) -> pl.DataFrame:
    """A compared sheet as written: its columns (cols, else the rows' file_columns: none without a row), the
    placeholders replaced by the tags; with drop_empty, the columns without a value in any row (a missing value or
    '', which TraceLens reads back as missing) left out."""
    import polars as pl

    if cols is None:
        cols = df["file_columns"][0].to_list() if df.height else []
    out = df.select(cols)
    if drop_empty:
        out = out.select([c for c in out.columns
                          if out.height and out.select(pl.col(c).cast(pl.String).fill_null("").ne("").any()).item()])

    def name(c: str) -> str:
        if c.startswith("base::"):
            return f"{tags[0]}::{c[len('base::'):]}"
        if c.startswith("variant::"):
            return f"{tags[1]}::{c[len('variant::'):]}"
        for suffix in ("diff", "pct"):
            if c.endswith(f"__variant_{suffix}"):
                return f"{c[:-len(f'__variant_{suffix}')]}__{tags[1]}_{suffix}"
        return c

    return out.rename({c: name(c) for c in out.columns})


def frames(ds, base_id: str, variant_id: str, tags: tuple[str, str]) -> list[tuple[str, pl.DataFrame]]:
    """TraceLens's comparison files of the trace variant_id against the trace base_id: [(file name without .csv,
    frame)], in TraceLens's order. tags: TraceLens's --names (baseline first), which name the value columns
    (`<tag>::column`, `metric__<variant tag>_diff`) and the split files (`ops_unique_args_intersect_<variant tag>`).

    The per-trace sheets are computed once for the two traces (Dataset.materialized) and dropped after."""
    from tracesql.api.report import materialized_views
    from tracesql.store.sqlmodules import materialized

    if tags[0] == tags[1]:
        raise ValueError("the two tags must differ")
    with ds.materialized(materialized_views("tracelens") + materialized("diff-tracelens"), [base_id, variant_id]):
        return _sheets(ds, base_id, variant_id, tags)


def _sheets(ds, base_id: str, variant_id: str, tags: tuple[str, str]) -> list[tuple[str, pl.DataFrame]]:
    import polars as pl

    out: list[tuple[str, pl.DataFrame]] = []
    for stem, macro, split in SHEETS:
        df = ds.con.sql(f"SELECT * FROM {macro}($b, $v)", params={"b": base_id, "v": variant_id}).pl()
        if not split:
            cols = ds.con.sql("SELECT tl_compare_file_columns($s)", params={"s": stem}).fetchall()[0][0]
            out.append((stem, _file(df, tags, drop_empty=False, cols=cols)))
        elif df.height or stem not in ROOFLINE:
            for side in SIDES:
                out.append((f"{stem}_{side}_{tags[1]}", _file(df.filter(pl.col("side") == side), tags,
                                                              drop_empty=True)))
    return out
