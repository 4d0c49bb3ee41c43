"""`tracesql export DATASET [--trace T] [--output FILE.json[.gz]] [--overlay NAME ...]`: the traces written back as one
Chrome trace-event JSON document for ui.perfetto.dev or chrome://tracing (tracesql.api.export), to stdout or
FILE (gzip when it ends in .gz)."""
from __future__ import annotations

import sys

from tracesql.cli.common import _output_arg, _trace_arg
from tracesql.render.output import DATASET_HELP


def cmd_export(args) -> int:
    from tracesql.api import export
    from tracesql.cli.common import _open, _wrapped
    from tracesql.escape import terminal_text

    overlays = [n.strip() for v in args.overlay or () for n in v.split(",") if n.strip()]
    with _open(args.dataset) as ds:
        if args.output is None:  # the document on stdout, nothing else
            export.write_to(ds, sys.stdout.buffer, args.trace, overlays)
            sys.stdout.flush()
            return 0
        done = export.write(ds, args.output, args.trace, overlays)
    size = done.path.stat().st_size
    what = f"{len(done.trace_ids)} traces merged" if len(done.trace_ids) > 1 else "1 trace"
    print(_wrapped(terminal_text(
        f"{done.path}: {what}, {done.events:,} events" + (f" and {done.overlay_events:,} overlay events"
                                                          if overlays else "")
        + f" ({size / 1e6:,.1f} MB); open it in ui.perfetto.dev or chrome://tracing")))
    return 0


def register(subparsers) -> None:
    from tracesql.api.export import OVERLAYS

    s = subparsers.add_parser(
        "export", help="write the traces back as one Chrome trace JSON (Perfetto, chrome://tracing), every event "
        "linked to its row; several traces (the ranks of a job) merge into one; overlays add tracesql's analyses")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    _output_arg(s)  # FILE.json, or FILE.json.gz: gzip
    s.add_argument("--overlay", action="append", metavar="NAME",
                   help="add an analysis (repeat it or separate names by commas): gpu (each GPU event's category and "
                   "op in its args), queue (launch queue depth per stream), copies (copy GB/s per kind), memory "
                   "(allocated and reserved bytes per device), gaps (idle gaps per stream as slices), critical (each "
                   "step's critical path as slices joined by flow arrows), or all; "
                   f"one of {', '.join(OVERLAYS)}, all")
    s.set_defaults(func=cmd_export)
