"""`tracesql categories DATASET`: GPU time per kernel category under a ruleset (default, tracelens, hta, jax,
or a user one)."""
from __future__ import annotations

import argparse
import sys


def cmd_categories(args) -> int:
    from .categories import _sql, add_rules, categories
    from .cli import write_frame
    from .dataset import Dataset

    for path in args.rules or []:
        dest = add_rules(args.dataset, path)
        print(f"rules from {path} added to the dataset as {dest}", file=sys.stderr)
    ds = Dataset(args.dataset)
    try:
        if args.list_rules:
            df = _sql(ds, "SELECT ruleset, applies_to, event_cat, category, subcategory, pattern, priority, source, "
                        "file, line_no, note FROM category_rules "
                        + ("WHERE ruleset = $rs " if args.ruleset_given else "")
                        + "ORDER BY ruleset, applies_to, priority DESC, source, file, line_no",
                        {"rs": args.ruleset} if args.ruleset_given else None)
        else:
            df = categories(ds, ruleset=args.ruleset, unmatched=args.unmatched, trace_id=args.trace, by=args.by)
    finally:
        ds.close()
    write_frame(df, args.format, args.output)
    return 0


class _RulesetAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        namespace.ruleset = values
        namespace.ruleset_given = True


def register(subparsers) -> None:
    from .categories import BY

    s = subparsers.add_parser(
        "categories", help="GPU time per kernel category (GEMM, attention, conv, elementwise, communication, ...)",
        description="One row per kernel category over all GPU events (sum of durations), under the rules of a "
                    "ruleset: default (tracesql's own), tracelens, hta, jax (the peers' classifications), or one "
                    "from a user rule file.")
    s.add_argument("dataset", metavar="DATASET")
    s.add_argument("--ruleset", "-r", default="default", action=_RulesetAction, metavar="NAME",
                   help="rule set: default, tracelens, hta, jax, or a user one (default: default)")
    s.add_argument("--unmatched", action="store_true",
                   help="list the GPU event names no rule matches (category other) by total time")
    s.add_argument("--by", choices=BY, default="category",
                   help="breakdown: category (default), subcategory, and under the default rules per trace: "
                        "stream, device, op (categories per parent op), op_kernel (per parent op and kernel), "
                        "op_category (GPU time by the category of the launching op)")
    s.add_argument("--trace", metavar="TRACE", help="only this trace (trace_id or file name)")
    s.add_argument("--rules", action="append", metavar="CSV",
                   help="add the rules of this CSV to the dataset first (kept in DATASET/rules/); repeatable")
    s.add_argument("--list-rules", action="store_true", help="print the rule table instead")
    s.add_argument("--format", "-f", choices=["table", "csv", "json"], default="table")
    s.add_argument("--output", "-o", metavar="FILE")
    s.set_defaults(func=cmd_categories, ruleset_given=False)
