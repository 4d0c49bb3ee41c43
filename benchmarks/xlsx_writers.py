"""Excel writers side by side on one frame: polars' write_excel (XlsxWriter, what `tracesql report --format xlsx`
uses) against pandas' to_excel with openpyxl (what TraceLens writes its workbook with), in one process.

    python benchmarks/xlsx_writers.py DATASET --view op_arg_summary --repeat 3

The frame is a view of the dataset (default: the native op_arg_summary, the largest section), written to a
temporary file; prints CPU seconds (best of --repeat) and the file size of each writer. Needs xlsxwriter, openpyxl
and pandas.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/timing.py
from timing import best_cpu  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("--view", default="op_arg_summary", help="a view, or a subquery in parentheses")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    import pandas as pd

    import tracesql
    from tracesql.render.xlsx import write_workbook

    with tracesql.open(a.dataset) as ds:
        df = ds.con.sql(f"SELECT * FROM {a.view}").pl()
    print(f"frame: {a.view}, {df.height:,} rows x {df.width} columns")
    pdf = df.to_pandas()
    with tempfile.TemporaryDirectory() as tmp:
        p1, p2 = os.path.join(tmp, "polars.xlsx"), os.path.join(tmp, "openpyxl.xlsx")

        def openpyxl_write() -> None:
            with pd.ExcelWriter(p2, engine="openpyxl") as w:
                pdf.to_excel(w, sheet_name="s", index=False)

        t1 = best_cpu(lambda: write_workbook(p1, [("s", df)]), a.repeat)
        t2 = best_cpu(openpyxl_write, a.repeat)
        print(f"polars write_excel (XlsxWriter): {t1:.3f} s CPU, {os.path.getsize(p1) / 1e6:.2f} MB")
        print(f"pandas to_excel (openpyxl):      {t2:.3f} s CPU, {os.path.getsize(p2) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
