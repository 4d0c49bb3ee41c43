#!/usr/bin/env python3
"""Generate a large synthetic Kineto trace by replicating a real one.

    python benchmarks/make_trace.py \
        --source ../shared/traces/nvidia/h100_qwen_infer.json.gz \
        --size 1GB --out benchmarks/data/qwen_1g.json

The source trace (a few MB) is read once.  The output is a single Kineto-style
JSON object written in a streaming fashion (it is never held in memory):

* every top-level field of the source except ``traceEvents`` is copied verbatim
  and in the source's order (fields that came after ``traceEvents`` in the
  source, such as ``baseTimeNanoseconds``, also come after it in the output);
* ``traceEvents`` holds the source's metadata events (``ph == "M"``) once,
  followed by copies 0, 1, 2, ... of all other events, one event per line.
  Copy ``k`` is the source shifted so that copies never overlap in time and
  never share an id:

  - ``ts`` is shifted by ``k * stride_us``; ``stride_us`` is the source's span
    (first start to last end, rounded up to a whole µs) plus ``--gap-us``;
  - ``args.correlation`` and the ``id`` of ``ac2g`` flow events share one
    offset, ``k * (max + 1)``, so runtime -> kernel links and flow arrows stay
    consistent inside each copy;
  - ``External id``, ``Python id``/``Python parent id``, ``Ev Idx`` and
    ``Sequence number`` (and integer ids of other flow/async categories) are
    offset the same way, each kind with its own stride;
  - ``ProfilerStep#N`` names are renumbered so that copy ``k`` holds step
    ``N + k * (number of distinct steps)``: the output reads like a longer run.

  ``dur`` and all other fields are left as they are.

* ``ts``/``dur`` are written with exactly three decimals (µs at ns
  resolution).  They are converted to integer nanoseconds once and formatted
  from integers, so no float drift builds up over thousands of copies.

Sizes are decimal (``MB`` = 10**6 bytes, ``GB`` = 10**9); ``MiB``/``GiB`` are
binary.  The size counts the uncompressed JSON text (also with ``--gzip``).
It is met to within one event: whole copies are written while they fit, then
a *time prefix* of one more copy fills the rest.  The prefix keeps links
intact: an event is kept when it starts before a cutoff, and an event carrying
a correlation id is kept when the first event of its correlation group (the
runtime launch) starts before the cutoff.

The output is deterministic: the same source and size give the same bytes.
``--validate`` re-reads the written file and checks that it is exactly the
expected copies of the source (meant for small sizes: it loads the output).
A small ``<out>.stats`` file (JSON; named so that tools scanning a directory
for ``*.json``/``*.gz`` traces skip it) records what was generated.
"""

from __future__ import annotations

import argparse
import gzip
import math
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import orjson

# Args fields holding integer ids that must stay unique per copy.  Fields of
# the same kind share one stride because their values refer to each other
# (a parent id names a Python id; an ac2g flow id is a correlation id).
ARG_ID_KINDS = {
    "correlation": "correlation",
    "External id": "external",
    "Python id": "python",
    "Python parent id": "python",
    "Ev Idx": "ev_idx",
    "Sequence number": "sequence",
}
# Phases whose top-level integer "id" pairs events (flows, async spans).
ID_PHASES = frozenset("stfbne")
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
UNITS = {
    "": 1, "B": 1,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
}
# Placeholders put into an event before serialising it; each one is then
# replaced by a printf slot (or by static text).  A "v" marker stands for a
# whole JSON value (its quotes are dropped), an "n" marker sits inside a string.
MARKER_RE = re.compile(rb'"@@v(\d+)@@"|@@n(\d+)@@')


def parse_size(text: str) -> int:
    """'100MB' -> 100_000_000; '1GiB' -> 2**30."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).upper() not in UNITS:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (use e.g. 500MB, 1GB, 2GiB)")
    return int(float(m.group(1)) * UNITS[m.group(2).upper()])


def to_ns(us: float | int) -> int:
    """Microseconds as parsed from JSON -> integer nanoseconds."""
    return round(us * 1000)


def fmt_us(ns: int) -> str:
    """Integer nanoseconds -> microseconds text with exactly three decimals."""
    q, r = divmod(abs(ns), 1000)
    return f"{'-' if ns < 0 else ''}{q}.{r:03d}"


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_meta(ev) -> bool:
    return isinstance(ev, dict) and ev.get("ph") == "M"


def flow_kind(ev: dict) -> str | None:
    """Id kind of an event's top-level "id", or None when it is left alone."""
    if ev.get("ph") not in ID_PHASES or not is_int(ev.get("id")):
        return None
    cat = ev.get("cat", "")
    # ac2g flows (CPU launch -> GPU kernel) carry the correlation id.
    return "correlation" if cat == "ac2g" else f"flow:{cat}"


def read_trace(path: Path) -> dict:
    """Load a (possibly gzipped) Chrome-trace JSON object."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    trace = orjson.loads(data)
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise SystemExit(f"{path}: not a Chrome-trace JSON object with a traceEvents list")
    return trace


class Replicator:
    """One copy of the source, pre-rendered as a printf-style template.

    Every value that changes from copy to copy (the integer part of a ``ts``,
    an id, a step number) becomes a ``%d`` slot holding
    ``base + k * stride[kind]``; everything else is static text.  Rendering
    copy ``k`` is then a single ``bytes % tuple`` call, which keeps the
    generator I/O-bound.
    """

    def __init__(self, trace: dict, gap_us: int, compact: bool = False):
        # Events are written in the indented layout of the source file (json indent=2, as Kineto-derived
        # traces in ../shared are), so MB/s figures reflect real files; --compact writes one line per event.
        self.dump_opt = 0 if compact else orjson.OPT_INDENT_2
        events = trace["traceEvents"]
        self.meta = [e for e in events if is_meta(e)]
        self.events = [e for e in events if not is_meta(e)]
        if not self.events:
            raise SystemExit("source has no non-metadata events to replicate")
        self._compute_strides(gap_us)
        self.kinds = sorted(self.stride)
        self._build_templates()
        self._compute_cut_keys()

    # -- strides -----------------------------------------------------------
    def _compute_strides(self, gap_us: int) -> None:
        starts, ends = [], []
        values: dict[str, list[int]] = {}
        for e in self.events:
            if not isinstance(e, dict):
                continue
            if is_num(e.get("ts")):
                t = to_ns(e["ts"])
                starts.append(t)
                ends.append(t + (to_ns(e["dur"]) if is_num(e.get("dur")) else 0))
            args = e.get("args")
            if isinstance(args, dict):
                for key, kind in ARG_ID_KINDS.items():
                    if is_int(args.get(key)):
                        values.setdefault(kind, []).append(args[key])
            kind = flow_kind(e)
            if kind:
                values.setdefault(kind, []).append(e["id"])
            m = STEP_RE.match(str(e.get("name", "")))
            if m:
                values.setdefault("step", []).append(int(m.group(1)))
        if not starts:
            raise SystemExit("source events carry no numeric ts")
        if min(starts) < 0:
            raise SystemExit("source has negative timestamps; not supported")
        self.start_ns = min(starts)
        self.span_ns = max(ends) - self.start_ns
        # Whole-µs time stride: only the integer part of a ts ever changes.
        self.stride = {"ts": math.ceil(self.span_ns / 1000) + gap_us}
        for kind, vals in values.items():
            if kind == "step":
                # Step numbers continue across copies: 6 -> 7 -> 8 ...
                self.stride[kind] = len(set(vals))
            else:
                lo, hi = min(vals), max(vals)
                self.stride[kind] = max(hi + 1, hi - lo + 1)

    # -- templates ---------------------------------------------------------
    def _build_templates(self) -> None:
        kind_index = {k: i for i, k in enumerate(self.kinds)}
        self.ev_tpl: list[bytes] = []  # printf template of each event
        self.ev_slot0: list[int] = []  # index of each event's first slot
        self.bases: list[int] = []  # base value of every slot
        self.slot_kind: list[int] = []  # kind index of every slot

        for ev in self.events:
            self.ev_slot0.append(len(self.bases))
            if not isinstance(ev, dict):
                self.ev_tpl.append(orjson.dumps(ev, option=self.dump_opt).replace(b"%", b"%%"))
                continue
            # subs[i] is (base, kind, suffix) for a slot, or bytes for static text.
            subs: list = []

            def value(sub, subs: list = subs) -> str:  # called within this iteration only
                subs.append(sub)
                return f"@@v{len(subs) - 1}@@"

            e = dict(ev)
            if is_num(e.get("ts")):
                q, r = divmod(to_ns(e["ts"]), 1000)
                e["ts"] = value((q, "ts", b".%03d" % r))
            if is_num(e.get("dur")):
                e["dur"] = value(fmt_us(to_ns(e["dur"])).encode())
            m = STEP_RE.match(str(e.get("name", "")))
            if m:
                subs.append((int(m.group(1)), "step", b""))
                e["name"] = f"ProfilerStep#@@n{len(subs) - 1}@@"
            kind = flow_kind(e)
            if kind:
                e["id"] = value((e["id"], kind, b""))
            if isinstance(e.get("args"), dict):
                args = dict(e["args"])
                for key, kind in ARG_ID_KINDS.items():
                    if is_int(args.get(key)):
                        args[key] = value((args[key], kind, b""))
                e["args"] = args

            def fill(m: re.Match, subs: list = subs) -> bytes:
                sub = subs[int(m.group(1) or m.group(2))]
                if isinstance(sub, bytes):
                    return sub
                base, kind, suffix = sub
                self.bases.append(base)
                self.slot_kind.append(kind_index[kind])
                return b"%d" + suffix

            text = orjson.dumps(e, option=self.dump_opt).replace(b"%", b"%%")
            self.ev_tpl.append(MARKER_RE.sub(fill, text))
        self.ev_slot0.append(len(self.bases))
        self.copy_tpl = b",\n".join(self.ev_tpl)

    def _compute_cut_keys(self) -> None:
        """Time key of each event for cutting a partial copy (see module doc)."""
        first_in_group: dict[int, int] = {}
        keys, groups = [], []
        for e in self.events:
            t = to_ns(e["ts"]) if isinstance(e, dict) and is_num(e.get("ts")) else -1
            g = None
            if isinstance(e, dict):
                if flow_kind(e) == "correlation":
                    g = e["id"]
                elif isinstance(e.get("args"), dict) and is_int(e["args"].get("correlation")):
                    g = e["args"]["correlation"]
            if g is not None:
                first_in_group[g] = min(first_in_group.get(g, t), t)
            keys.append(t)
            groups.append(g)
        self.cut_key = [k if g is None else first_in_group[g] for k, g in zip(keys, groups, strict=True)]

    # -- rendering ---------------------------------------------------------
    def slot_values(self, k: int) -> list[int]:
        offs = [k * self.stride[kind] for kind in self.kinds]
        return [b + offs[i] for b, i in zip(self.bases, self.slot_kind, strict=True)]

    def render_copy(self, k: int) -> bytes:
        return self.copy_tpl % tuple(self.slot_values(k))

    def render_partial(self, k: int, budget: int, leading_sep: bool) -> tuple[bytes, int]:
        """Largest time prefix of copy k that fits in ``budget`` bytes.

        Returns the bytes (with separators) and the number of events in it.
        """
        vals = self.slot_values(k)
        s0 = self.ev_slot0
        rendered = [
            tpl % tuple(vals[s0[i]: s0[i + 1]]) for i, tpl in enumerate(self.ev_tpl)
        ]
        # Walk events in key order, admitting whole key groups while they fit.
        order = sorted(range(len(rendered)), key=self.cut_key.__getitem__)
        used, n_in, cutoff = 0, 0, None
        sep = 2  # len(b",\n")
        i = 0
        while i < len(order):
            key = self.cut_key[order[i]]
            j, cost = i, 0
            while j < len(order) and self.cut_key[order[j]] == key:
                cost += len(rendered[order[j]]) + sep
                j += 1
            if not leading_sep and n_in == 0:
                cost -= sep  # the very first event of the array has no separator
            if used + cost > budget:
                break
            used += cost
            n_in += j - i
            cutoff = key
            i = j
        if cutoff is None:
            return b"", 0
        keep = [r for r, key in zip(rendered, self.cut_key, strict=True) if key <= cutoff]
        body = b",\n".join(keep)
        return (b",\n" + body if leading_sep else body), len(keep)


def header_parts(trace: dict) -> tuple[bytes, bytes]:
    """JSON text before and after the traceEvents array."""
    keys = list(trace)
    pos = keys.index("traceEvents")
    pre = b"{\n"
    for key in keys[:pos]:
        pre += b"  " + orjson.dumps(key) + b": " + orjson.dumps(trace[key]) + b",\n"
    pre += b'  "traceEvents": [\n'
    post = b"\n  ]"
    for key in keys[pos + 1:]:
        post += b",\n  " + orjson.dumps(key) + b": " + orjson.dumps(trace[key])
    post += b"\n}\n"
    return pre, post


def generate(source: Path, out: Path, size: int | None, copies: int | None,
             gap_us: int, gzip_level: int | None, compact: bool = False) -> dict:
    t0 = time.perf_counter()
    trace = read_trace(source)
    rep = Replicator(trace, gap_us, compact)
    pre, post = header_parts(trace)
    meta = b",\n".join(orjson.dumps(e) for e in rep.meta)

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".partial")
    raw = open(tmp, "wb", buffering=16 << 20)
    sink = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=gzip_level, mtime=0) \
        if gzip_level is not None else raw
    written = 0
    full, partial_events = 0, 0
    try:
        def put(chunk: bytes) -> None:
            nonlocal written
            sink.write(chunk)
            written += len(chunk)

        put(pre)
        if meta:
            put(meta)
        have_events = bool(meta)
        target = size if size is not None else math.inf
        while copies is None or full < copies:
            chunk = rep.render_copy(full)
            cost = len(chunk) + (2 if have_events else 0)
            if written + cost + len(post) > target:
                body, partial_events = rep.render_partial(
                    full, int(target - written - len(post)), have_events)
                if body:
                    put(body)
                break
            put(b",\n" + chunk if have_events else chunk)
            have_events = True
            full += 1
        put(post)
    finally:
        if sink is not raw:
            sink.close()
        raw.close()
    os.replace(tmp, out)

    stats = {
        "source": str(source),
        "out": str(out),
        "gzip": gzip_level is not None,
        "json_bytes": written,
        "file_bytes": out.stat().st_size,
        "requested_bytes": size,
        "full_copies": full,
        "partial_copy_events": partial_events,
        "events_per_copy": len(rep.events),
        "metadata_events": len(rep.meta),
        "total_events": full * len(rep.events) + partial_events + len(rep.meta),
        "ts_stride_us": rep.stride["ts"],
        "id_strides": {k: v for k, v in rep.stride.items() if k != "ts"},
        "seconds": round(time.perf_counter() - t0, 3),
    }
    out.with_name(out.name + ".stats").write_bytes(
        orjson.dumps(stats, option=orjson.OPT_INDENT_2) + b"\n")
    return stats


# -- validation --------------------------------------------------------------
def _canonical(ev, k: int, rep: Replicator) -> bytes:
    """Event text with copy k's shifts undone and ts/dur as integer ns."""
    if not isinstance(ev, dict):
        return orjson.dumps(ev)
    e = dict(ev)
    st = rep.stride
    if is_num(e.get("ts")):
        e["ts"] = to_ns(e["ts"]) - k * st["ts"] * 1000
    if is_num(e.get("dur")):
        e["dur"] = to_ns(e["dur"])
    m = STEP_RE.match(str(e.get("name", "")))
    if m and "step" in st:
        e["name"] = f"ProfilerStep#{int(m.group(1)) - k * st['step']}"
    kind = flow_kind(e)
    if kind:
        e["id"] -= k * st[kind]
    if isinstance(e.get("args"), dict):
        args = dict(e["args"])
        for key, kind in ARG_ID_KINDS.items():
            if is_int(args.get(key)):
                args[key] -= k * st[kind]
        e["args"] = args
    return orjson.dumps(e, option=orjson.OPT_SORT_KEYS)


def validate(out: Path, source: Path, stats: dict, gap_us: int) -> None:
    """Check the output is exactly the announced copies of the source."""
    src = read_trace(source)
    rep = Replicator(src, gap_us)
    got = read_trace(out)
    problems = []

    # Header fields: identical, and in the same order.
    if [k for k in got] != [k for k in src]:
        problems.append("top-level keys differ")
    for key in src:
        if key != "traceEvents" and got.get(key) != src[key]:
            problems.append(f"header field {key!r} differs")

    events = got["traceEvents"]
    if len(events) != stats["total_events"]:
        problems.append(f"{len(events)} events, expected {stats['total_events']}")
    meta = [e for e in events if is_meta(e)]
    if meta != rep.meta:
        problems.append("metadata events differ")

    # Every event, with its copy's shifts undone, is an event of the source.
    want = Counter(_canonical(e, 0, rep) for e in rep.events)
    per_copy: defaultdict[int, Counter] = defaultdict(Counter)
    stride_ns = rep.stride["ts"] * 1000
    for e in events:
        if is_meta(e):
            continue
        k = (to_ns(e["ts"]) - rep.start_ns) // stride_ns if is_num(e.get("ts")) else 0
        per_copy[k][_canonical(e, k, rep)] += 1
    for k, seen in sorted(per_copy.items()):
        full = k < stats["full_copies"]
        if (full and seen != want) or (not full and seen - want):
            problems.append(f"copy {k} is not {'a copy' if full else 'a subset'} of the source")
    if len(per_copy) != stats["full_copies"] + (1 if stats["partial_copy_events"] else 0):
        problems.append(f"found {len(per_copy)} copies")

    # Correlation groups are complete, also in the partial copy.
    def corr_counts(evs):
        c = Counter()
        for e in evs:
            if not isinstance(e, dict):
                continue
            if flow_kind(e) == "correlation":
                c[e["id"]] += 1
            elif isinstance(e.get("args"), dict) and is_int(e["args"].get("correlation")):
                c[e["args"]["correlation"]] += 1
        return c

    src_groups = corr_counts(rep.events)
    cs = rep.stride.get("correlation", 1)
    for cid, n in corr_counts(events).items():
        base = cid % cs if cid >= 0 else cid
        if src_groups.get(base) != n:
            problems.append(f"correlation {cid}: {n} events, source has {src_groups.get(base)}")
            break

    if problems:
        raise SystemExit("validation FAILED:\n  " + "\n  ".join(problems))
    print(f"validation OK: {len(events):,} events = {stats['full_copies']} x "
          f"{stats['events_per_copy']:,} + {stats['partial_copy_events']:,} partial + "
          f"{stats['metadata_events']} metadata; every event matches the source")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, required=True, help="real trace (.json or .json.gz)")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--size", type=parse_size,
                       help="uncompressed output size, e.g. 100MB, 1GB, 4GB (decimal units)")
    group.add_argument("--copies", type=int, help="write exactly this many whole copies instead")
    ap.add_argument("--out", type=Path, required=True, help="output path")
    ap.add_argument("--gap-us", type=int, default=1000,
                    help="idle gap between copies in µs (default 1000)")
    ap.add_argument("--compact", action="store_true",
                    help="one line per event instead of the source's indented layout")
    ap.add_argument("--gzip", action="store_true", help="gzip the output (appends .gz if missing)")
    ap.add_argument("--gzip-level", type=int, default=6, help="gzip level with --gzip (default 6)")
    ap.add_argument("--validate", action="store_true",
                    help="re-read the output and check it (loads it all: small sizes only)")
    args = ap.parse_args(argv)

    out = args.out
    if args.gzip and out.suffix != ".gz":
        out = out.with_name(out.name + ".gz")
    stats = generate(args.source, out, args.size, args.copies, args.gap_us,
                     args.gzip_level if args.gzip else None, args.compact)
    mb = stats["json_bytes"] / 1e6
    print(f"wrote {out}: {mb:,.1f} MB JSON"
          + (f" ({stats['file_bytes'] / 1e6:,.1f} MB gzipped)" if stats["gzip"] else "")
          + f", {stats['total_events']:,} events ({stats['full_copies']} full copies"
          + f" + {stats['partial_copy_events']:,} events), {stats['seconds']:.1f} s"
          + f" ({mb / max(stats['seconds'], 1e-9):,.0f} MB/s)")
    if args.size is not None:
        err = (stats["json_bytes"] - args.size) / args.size
        print(f"size: {stats['json_bytes']:,} bytes, {err:+.4%} from the requested {args.size:,}")
    if args.validate:
        validate(out, args.source, stats, args.gap_us)


if __name__ == "__main__":
    sys.exit(main())
