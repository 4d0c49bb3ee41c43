"""Kernel and op categories from the rule table (views in sql/categories/).

``categories(ds)`` reads the views; ``add_rules(DATASET, CSV)`` adds a user rule file to a dataset, where the
views pick it up (``DATASET/rules/*.csv``). Every number comes from the SQL views; this module only selects
and orders rows.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import duckdb
import polars as pl

from tracesql.api import analysis
from tracesql.errors import DatasetError
from tracesql.store.sqlmodules import outputs

RULE_COLUMNS = ["ruleset", "applies_to", "event_cat", "category", "subcategory", "class", "pattern", "priority", "note"]
# what a kernel rule may say its GPU work is to the timeline, the gaps and the kernel summary (sql/categories/rules.sql)
CLASSES = {"compute", "comm", "memcpy", "memset", "sync"}
APPLIES_TO = {"kernel", "op", "op_first_kernel"}


def _sql(ds, query: str, params=None) -> pl.DataFrame:
    return ds.con.sql(query, params=params).pl()


def rulesets(ds) -> list[str]:
    """Names of the rulesets that have kernel rules (shipped and user)."""
    return [r[0] for r in ds.execute("SELECT DISTINCT ruleset FROM category_rules WHERE applies_to = 'kernel' "
                                     "ORDER BY ruleset").fetchall()]


# by= breakdowns of the default ruleset, per trace (trace_id first): the SQL library's ``@output categories-by``,
# named by the --by value.
_BY_OUTPUTS = {o.name: o for o in outputs("categories-by")}
BY = ["category", "subcategory", *_BY_OUTPUTS]


def categories(ds, ruleset: str = "default", unmatched: bool = False, trace: str | None = None,
               by: str = "category") -> pl.DataFrame:
    """GPU time per kernel category under a ruleset.

    ``trace``: one trace (a trace_id, its first 6+ digits, a label, a file name or a path suffix, as `--trace`
    takes them); None: every trace. ``by="category"`` (default): one row per category over all GPU events (Σ dur;
    all traces, or ``trace``), columns ``kernel_category, count, total_time_ms, pct, cumulative_pct, avg_time_us``, most
    time first (views kernel_category_summary / kernel_category_summary_all). ``by="subcategory"``: one row
    per (category, subcategory) (kernel_subcategory_summary[_all]). Under the default ruleset, per trace
    (``trace_id`` column first unless ``trace`` is given): ``by="stream"`` / ``"device"``
    (kernel_category_by_stream / _by_device), ``"op"`` (kernel_category_by_op: categories per parent op),
    ``"op_kernel"`` (kernel_category_by_op_kernel), ``"op_category"`` (op_category_summary).
    ``unmatched=True`` lists instead the GPU event names no rule of the ruleset matches (category ``other``)
    by total time (views kernel_names_unmatched / kernel_names_unmatched_by_trace).
    """
    known = rulesets(ds)
    if ruleset not in known:
        raise DatasetError(f"unknown ruleset {ruleset!r}; known: {', '.join(known)}")
    if by not in BY:
        raise DatasetError(f"unknown breakdown {by!r}; known: {', '.join(BY)}")
    tid = None if trace is None else analysis.trace_ids(ds, trace)[0]
    if unmatched:
        if tid is None:
            return _sql(ds, "SELECT name, cat, count, total_time_ms, pct_of_gpu_time AS pct, traces "
                            "FROM kernel_names_unmatched WHERE ruleset = $rs "
                            "ORDER BY total_time_ms DESC, name", {"rs": ruleset})
        return _sql(ds, "SELECT name, cat, count, total_time_ms, pct_of_trace_gpu_time AS pct "
                        "FROM kernel_names_unmatched_by_trace WHERE ruleset = $rs AND trace_id = $t "
                        "ORDER BY total_time_ms DESC, name", {"rs": ruleset, "t": tid})
    if by in _BY_OUTPUTS:
        if ruleset != "default":
            raise DatasetError(f"--by {by} is computed under the default ruleset only")
        o = _BY_OUTPUTS[by]
        if tid is None:
            return _sql(ds, o.query())
        return _sql(ds, o.query("trace_id = $t", drop=("trace_id",)), {"t": tid})
    if by == "subcategory":
        cols = "kernel_category, kernel_subcategory, count, total_time_ms, pct, pct_of_category"
        order = "total_time_ms DESC, kernel_category, kernel_subcategory"
        if tid is None:
            return _sql(ds, f"SELECT {cols} FROM kernel_subcategory_summary_all WHERE ruleset = $rs ORDER BY {order}",
                        {"rs": ruleset})
        return _sql(ds, f"SELECT {cols} FROM kernel_subcategory_summary WHERE ruleset = $rs AND trace_id = $t "
                        f"ORDER BY {order}", {"rs": ruleset, "t": tid})
    cols = "kernel_category, count, total_time_ms, pct, cumulative_pct, avg_time_us"
    if tid is None:
        return _sql(ds, f"SELECT {cols} FROM kernel_category_summary_all WHERE ruleset = $rs ORDER BY row_order",
                    {"rs": ruleset})
    return _sql(ds, f"SELECT {cols} FROM kernel_category_summary WHERE ruleset = $rs AND trace_id = $t "
                    "ORDER BY row_order", {"rs": ruleset, "t": tid})


# Bounds of a user rule file (docs/cli.md): every rule is one regular expression matched against every GPU event
# name, so the rules' count is the cost of every command that reads categories.
MAX_RULES = 10_000
MAX_RULE_FIELD = 65_536  # characters in one field (a pattern, a note)


def read_rules(csv_path) -> pl.DataFrame:
    """Read and check a rule CSV; returns its rules with the full column set (strings; priority may be '').

    The header must name at least ``category`` and ``pattern``; other columns of RULE_COLUMNS are optional
    (empty ruleset = default, empty applies_to = kernel, empty priority = 10000 once loaded). Every pattern
    must be a valid RE2 expression and every applies_to one of kernel, op, op_first_kernel.
    """
    path = Path(csv_path)
    if not path.is_file():
        raise DatasetError(f"{csv_path}: no such rule file")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte order mark (as Excel writes) is not part of the header
    except UnicodeDecodeError as e:
        raise DatasetError(f"{csv_path}: not UTF-8 text (byte {e.start})") from None
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))  # any field is read; too long ones are said below
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in (reader.fieldnames or [])]
    missing = [c for c in ("category", "pattern") if c not in header]
    if missing:
        raise DatasetError(f"{csv_path}: the header must have the columns category and pattern "
                           f"(missing {', '.join(missing)}); full set: {','.join(RULE_COLUMNS)}")
    rows = []
    for lineno, raw in enumerate(reader, start=2):
        rec = {k.strip().lower(): (v or "").strip() for k, v in raw.items() if k is not None}
        if not any(rec.values()) or next(iter(rec.values()), "").startswith("#"):
            continue
        row = {c: rec.get(c, "") for c in RULE_COLUMNS}
        if not row["category"] or not row["pattern"]:
            raise DatasetError(f"{csv_path}:{lineno}: category and pattern must not be empty")
        if row["applies_to"] and row["applies_to"].lower() not in APPLIES_TO:
            raise DatasetError(f"{csv_path}:{lineno}: applies_to must be one of {', '.join(sorted(APPLIES_TO))}")
        if row["class"] and row["class"].lower() not in CLASSES:
            raise DatasetError(f"{csv_path}:{lineno}: class must be one of {', '.join(sorted(CLASSES))}")
        if row["priority"]:
            try:
                int(row["priority"])
            except ValueError:
                raise DatasetError(f"{csv_path}:{lineno}: priority must be an integer") from None
        if any("\n" in v or "\r" in v for v in row.values()):
            raise DatasetError(f"{csv_path}:{lineno}: fields must not contain line breaks")
        long = [c for c, v in row.items() if len(v) > MAX_RULE_FIELD]
        if long:
            raise DatasetError(f"{csv_path}:{lineno}: {long[0]} has {len(row[long[0]]):,} characters; a rule's "
                               f"field has at most {MAX_RULE_FIELD:,}")
        rows.append(row)
        if len(rows) > MAX_RULES:
            raise DatasetError(f"{csv_path}: more than {MAX_RULES:,} rules; a rule file has at most {MAX_RULES:,} "
                               "(every GPU event name is matched against every rule)")
    con = duckdb.connect(config={"memory_limit": "256MB"})
    con.execute("SET enable_progress_bar = false")
    try:
        try:  # all patterns at once; one by one only to name the bad one
            con.execute("SELECT count(regexp_matches('', p)) FROM unnest(?::VARCHAR[]) t(p)",
                        [[row["pattern"] for row in rows]]).fetchall()
            rows_to_check = []
        except duckdb.Error:
            rows_to_check = rows
        for row in rows_to_check:
            try:
                con.execute("SELECT regexp_matches('', ?)", [row["pattern"]]).fetchall()
            except duckdb.Error as e:
                raise DatasetError(f"{csv_path}: invalid pattern {row['pattern']!r}: "
                                   f"{str(e).splitlines()[0]}") from None
    finally:
        con.close()
    return pl.DataFrame(rows, schema={c: pl.Utf8 for c in RULE_COLUMNS}, orient="row")


def add_rules(dataset_path, csv_path, name: str | None = None) -> Path:
    """Copy a user rule CSV into ``DATASET/rules/`` (checked and rewritten fully quoted, so the SQL reader
    parses it exactly). A file of the same name is replaced; other user rule files are kept, so several
    files merge (ties between equal priorities go to the earlier file name). Returns the written path.
    """
    from tracesql.ingest.derive import change_rules
    from tracesql.store.lock import active

    ds_dir = Path(dataset_path)
    if not (ds_dir / "traces").is_dir():
        raise DatasetError(f"{dataset_path}: not a tracesql dataset (no traces/ folder)")
    rules = read_rules(csv_path)
    stem = Path(name or Path(csv_path).name).name
    if not stem.endswith(".csv"):
        stem += ".csv"

    def write(path: Path) -> None:
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
            w.writerow(RULE_COLUMNS)
            for row in rules.iter_rows():
                w.writerow(row)

    # the rule file and the stored tables computed with the rules (the GPU timeline's classes) change together,
    # so that the timeline, the categories and the gaps agree under the rules in place, whatever interrupts it
    with active(ds_dir) as a:
        if a is None or not (ds_dir / "traces").is_dir():
            raise DatasetError(f"{dataset_path}: not a tracesql dataset (no traces/ folder)")
        _check_rule_total(ds_dir / "rules", stem, rules.height, csv_path)
        change_rules(ds_dir, stem, write)
    return ds_dir / "rules" / stem


def _check_rule_total(out_dir: Path, stem: str, n: int, csv_path) -> None:
    """MAX_RULES bounds the user rules of a dataset too, all files together (the file of the same name is
    replaced, so its rules do not count)."""
    others = 0
    for p in out_dir.glob("*.csv"):
        if p.name != stem:
            with open(p, encoding="utf-8", errors="replace") as f:
                others += max(sum(1 for _ in f) - 1, 0)  # written fully quoted, one rule per line after the header
    if others + n > MAX_RULES:
        raise DatasetError(f"{csv_path}: its {n:,} rules and the {others:,} of the dataset's other rule files make "
                           f"more than {MAX_RULES:,}; a dataset has at most {MAX_RULES:,} user rules")
