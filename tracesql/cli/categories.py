"""`tracesql categories DATASET`: GPU time per kernel category under a ruleset (default, tracelens, hta, jax,
or a user one)."""
from __future__ import annotations

import argparse
import sys

from tracesql.cli.common import _out_args, _trace_arg
from tracesql.escape import terminal_text
from tracesql.render.output import DATASET_HELP


def cmd_categories(args) -> int:
    from tracesql.api.categories import _sql, add_rules, categories
    from tracesql.api.dataset import Dataset
    from tracesql.cli.common import emit

    for path in args.rules or []:
        dest = add_rules(args.dataset, path)
        print(terminal_text(f"rules from {path} added to the dataset as {dest}"), file=sys.stderr)
    ds = Dataset(args.dataset)
    try:
        if args.list_rules:
            df = _sql(ds, "SELECT ruleset, applies_to, event_cat, category, subcategory, pattern, priority, source, "
                        "file, line_no, note FROM category_rules "
                        + ("WHERE ruleset = $rs " if args.ruleset_given else "")
                        + "ORDER BY ruleset, applies_to, priority DESC, source, file, line_no",
                        {"rs": args.ruleset} if args.ruleset_given else None)
        else:
            df = categories(ds, ruleset=args.ruleset, unmatched=args.unmatched, trace=args.trace, by=args.by)
    finally:
        ds.close()
    if args.unmatched and df.height == 0:
        print(terminal_text(f"every GPU event name matches a rule of the ruleset {args.ruleset}"), file=sys.stderr)
        return 0
    return emit(in_us(df), args, "no GPU events in the selection")


def in_us(df):
    """Times in µs, as in every other command: each ``*_ms`` column becomes ``*_us``."""
    import polars as pl

    ms = [c for c in df.columns if c.endswith("_ms")]
    return df.with_columns([(pl.col(c) * 1000.0).alias(c[:-3] + "_us") for c in ms]).select(
        [c[:-3] + "_us" if c in ms else c for c in df.columns])


class _RulesetAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        namespace.ruleset = values
        namespace.ruleset_given = True


def register(subparsers) -> None:
    from tracesql.api.categories import BY

    s = subparsers.add_parser(
        "categories", help="GPU time per kernel category (GEMM, attention, conv, elementwise, communication, ...)",
        description="One row per kernel category over all GPU events (sum of durations, µs), under the rules of a "
                    "ruleset: default (tracesql's own), tracelens, hta, jax (the peers' classifications), or one "
                    "from a user rule file.")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    s.add_argument("--ruleset", "-r", default="default", action=_RulesetAction, metavar="NAME",
                   help="rule set: default, tracelens, hta, jax, or a user one (default: default)")
    s.add_argument("--unmatched", action="store_true",
                   help="list the GPU event names no rule matches (category other) by total time")
    s.add_argument("--by", choices=BY, default="category",
                   help="breakdown: category (default), subcategory, and under the default rules per trace: "
                        "stream, device, op (categories per parent op), op_kernel (per parent op and kernel), "
                        "op_category (GPU time by the category of the launching op)")
    _trace_arg(s)
    s.add_argument("--rules", action="append", metavar="CSV",
                   help="add the rules of this CSV to the dataset first (kept in DATASET/rules/); repeatable")
    s.add_argument("--list-rules", action="store_true", help="print the rule table instead")
    _out_args(s, formats=("table", "csv", "json", "parquet"))
    s.set_defaults(func=cmd_categories, ruleset_given=False)
