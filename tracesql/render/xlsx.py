"""Excel workbooks (.xlsx): one sheet per frame, written by polars' ``write_excel`` through XlsxWriter.

Cells hold the frame's values: numbers as numbers, text as text (never a formula or a link, whatever it starts
with; control characters as Excel's _xHHHH_ escapes), booleans as booleans, nulls (and float NaN, which a cell
cannot hold) as empty cells; the first row is the header. Each sheet is an Excel table (header filters);
floats are shown with 3 decimals but stored whole. Sheet names are at most 31 characters (Excel's limit) and
unique, without the characters Excel refuses (``[]:*?/\\``).
"""
from __future__ import annotations

import re
from pathlib import Path

import polars as pl

_BAD = re.compile(r"[\[\]:*?/\\]")


def _xlsxwriter():
    from tracesql.errors import UsageError

    try:
        import xlsxwriter
    except ImportError:
        raise UsageError("writing .xlsx needs XlsxWriter (pip install 'tracesql[xlsx]')") from None
    return xlsxwriter


def sheet_names(names: list[str]) -> list[str]:
    """Excel sheet names for ``names``, in order: forbidden characters made '_', cut to 31 characters, made unique
    (compared without case, as Excel does) with ' (2)', ' (3)', ..."""
    out: list[str] = []
    seen: set[str] = set()
    for name in names:
        base = _BAD.sub("_", name)[:31] or "sheet"
        cand, n = base, 2
        while cand.lower() in seen:
            suffix = f" ({n})"
            cand, n = base[:31 - len(suffix)] + suffix, n + 1
        seen.add(cand.lower())
        out.append(cand)
    return out


def write_workbook(path: str | Path, sheets: list[tuple[str, pl.DataFrame]]) -> None:
    """Write the frames as the sheets of one workbook at ``path``, in order (a failure leaves no file)."""
    xlsxwriter = _xlsxwriter()
    path = Path(path)
    tmp = path.with_name(f".{path.name}.partial")
    try:
        # text stays text: a name such as "=HYPERLINK(...)" or "https://..." is not made a formula or a link
        with xlsxwriter.Workbook(str(tmp), {"strings_to_formulas": False, "strings_to_urls": False}) as wb:
            for name, (_, df) in zip(sheet_names([n for n, _ in sheets]), sheets, strict=True):
                df = df.with_columns(pl.col(pl.Float32, pl.Float64).fill_nan(None))
                df.write_excel(workbook=wb, worksheet=name, autofit=False)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
