"""TraceLens's perf-report workbook: the order of its sheets.

TraceLens (Reporting/generate_perf_report_pytorch.py, commit 171dd74) writes one sheet per entry of the dict of
frames it also writes as CSV files, in the dict's order: gpu_timeline; ops_summary_by_category, ops_summary,
ops_unique_args, unified_perf_summary (traces with CPU ops); the perf-model sheets, category by category in the
order of its op -> perf-model class map (build_sheet_category_to_op_names over PerfModel/torch_op_mapping.py:
GEMM, SDPA, CONV, InferenceAttention, BinaryElementwise, GroupedGEMM, MoE_comm, SSM, RoPE, CrossEntropy,
UnaryElementwise, MoE_fused, MoE_unfused, MoE_aux, RMSNorm, elementwise, GroupQuant, FusedRoPE, CustomCollective,
mHC, Normalization, Reduce), GEMM, the elementwise ones and Normalization as one sheet, the others as <cat>_fwd then
<cat>_bwd; then kernel_summary, short_kernel_histogram, short_kernels_summary (with --enable_kernel_summary
--short_kernel_study). Sheets a trace has no rows for are not written, as TraceLens leaves them out.
"""
from __future__ import annotations

from pathlib import Path

_CATEGORIES = ["GEMM", "SDPA", "CONV", "InferenceAttention", "BinaryElementwise", "GroupedGEMM", "MoE_comm", "SSM",
               "RoPE", "CrossEntropy", "UnaryElementwise", "MoE_fused", "MoE_unfused", "MoE_aux", "RMSNorm",
               "elementwise", "GroupQuant", "FusedRoPE", "CustomCollective", "mHC", "Normalization", "Reduce"]
_ONE_SHEET = {"GEMM", "UnaryElementwise", "BinaryElementwise", "Normalization"}

SHEET_ORDER = (["gpu_timeline", "ops_summary_by_category", "ops_summary", "ops_unique_args", "unified_perf_summary"]
               + [s for c in _CATEGORIES for s in ([c] if c in _ONE_SHEET else [f"{c}_fwd", f"{c}_bwd"])]
               + ["kernel_summary", "short_kernel_histogram", "short_kernels_summary"])


def order_key(sheet: str) -> int:
    """Position of a sheet in TraceLens's workbook (a sheet it does not write, after all of them)."""
    return SHEET_ORDER.index(sheet) if sheet in SHEET_ORDER else len(SHEET_ORDER)


# Columns TraceLens's frames hold as booleans: its CSV files write them True / False (and so do tracesql's, as text),
# its workbook as boolean cells.
BOOL_COLUMNS = frozenset({"has_perf_model"})


def report(ds, output: str | None = None, trace: str | None = None, by_module: bool = False, arch: str | None = None,
           pseudo_ops: bool = False, **_) -> list[Path]:
    """`report --style tracelens --format xlsx --output FILE`: TraceLens's workbook of one trace at ``output``: the
    sections of its report (tracesql.api.report.trace_sections) as sheets in TraceLens's order, BOOL_COLUMNS as
    booleans (tracesql.render.formats' xlsx format). Returns the file written. The other keywords of
    tracesql.api.report.report are taken and not used (one workbook, no folder, no width)."""
    from dataclasses import replace

    from tracesql.api.report import trace_sections
    from tracesql.render.formats import write
    from tracesql.render.sections import Document

    sections = sorted(trace_sections(ds, "tracelens", trace, by_module, arch, pseudo_ops),
                      key=lambda s: order_key(s.name))
    return write(Document([replace(s, bool_columns=BOOL_COLUMNS) for s in sections]), "xlsx", output=output)
