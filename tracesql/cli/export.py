"""`tracesql export DATASET [--trace T] [--output FILE.json[.gz]|FILE.pftrace] [--overlay NAME ...]`: the traces
written back as one Chrome trace-event JSON document for ui.perfetto.dev or chrome://tracing, or as Perfetto's
protobuf trace (tracesql.api.export), to stdout (JSON) or FILE (gzip when it ends in .gz)."""
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
    text = f"{done.path}: {what}, {done.events:,} events" + (f" and {done.overlay_events:,} overlay events"
                                                             if overlays else "")
    w = done.perfetto
    if w is None:
        text += f" ({size / 1e6:,.1f} MB); open it in ui.perfetto.dev or chrome://tracing"
    else:
        text += (f" as {w.slices:,} slices, {w.instants:,} instants, {w.counter_values:,} counter values and "
                 f"{w.flows:,} flows on {w.tracks:,} tracks ({size / 1e6:,.1f} MB); open it in ui.perfetto.dev")
        if w.overlapped:
            text += (f"; {w.overlapped:,} {'slice' if w.overlapped == 1 else 'slices'} overlapping without "
                     "nesting moved to overlap tracks")
        if w.skipped:
            text += "; not written: " + ", ".join(f"{n:,} {ph}" for ph, n in sorted(w.skipped.items()))
        if w.unbound_flow_points:
            text += f"; {w.unbound_flow_points:,} flow points with no slice to bind to"
    print(_wrapped(terminal_text(text)))
    return 0


def register(subparsers) -> None:
    from tracesql.api.export import OVERLAYS

    s = subparsers.add_parser(
        "export", help="write the traces back as one Chrome trace JSON (Perfetto, chrome://tracing), or as Perfetto's "
        "protobuf trace when the output ends in .pftrace, every event linked to its row; several traces (the ranks "
        "of a job) merge into one; overlays add tracesql's analyses")
    s.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    _trace_arg(s)
    _output_arg(s)  # FILE.json, FILE.json.gz (gzip), FILE.pftrace (Perfetto's protobuf format)
    s.add_argument("--overlay", action="append", metavar="NAME",
                   help="add an analysis (repeat it or separate names by commas): gpu (each GPU event's category and "
                   "op in its args), queue (launch queue depth per stream), copies (copy GB/s per kind), memory "
                   "(allocated and reserved bytes per device), gaps (idle gaps per stream as slices), critical (each "
                   "step's critical path as slices joined by flow arrows), or all; "
                   f"one of {', '.join(OVERLAYS)}, all")
    s.set_defaults(func=cmd_export)
