#!/usr/bin/env python3
"""The bad-input corpus: small trace files that are broken in one way each.

    python tests/data/bad/make_bad.py [DIR]      # (re)writes the files (default: this folder)

``CASES`` maps a file name to its bytes; tests/test_bad_input.py holds the exact outcome of ingesting each one,
with and without --salvage, and checks that the shipped files are the ones this script writes. Everything is
deterministic (fixed gzip mtime, no randomness).
"""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def ev(i: int, **kw) -> dict:
    """A small complete CPU event; keyword arguments override or add fields."""
    e = {"ph": "X", "cat": "cpu_op", "name": f"aten::op{i}", "pid": 1, "tid": 1, "ts": 100 + 10 * i, "dur": 5,
         "args": {"External id": i}}
    e.update(kw)
    return {k: v for k, v in e.items() if v is not _DROP}


_DROP = object()


def doc(events, **header) -> bytes:
    """A Kineto-style document: schemaVersion first, then traceEvents, one event per line."""
    head = {"schemaVersion": 1, **header}
    text = "{" + "".join(f"{json.dumps(k)}: {json.dumps(v)}, " for k, v in head.items())
    text += '"traceEvents": [\n' + ",\n".join(json.dumps(e) for e in events) + "\n]}\n"
    return text.encode()


def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


def base_events(n: int = 4) -> list[dict]:
    return [ev(i) for i in range(n)]


def _launch_kernel_pair(corr: int, i: int) -> list[dict]:
    return [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 100 + i, "dur": 3,
         "args": {"correlation": corr, "cbid": 211}},
        {"ph": "X", "cat": "kernel", "name": f"kernel_{i}", "pid": 0, "tid": 7, "ts": 120 + i, "dur": 4,
         "args": {"correlation": corr, "device": 0, "stream": 7}},
    ]


def cases() -> dict[str, bytes]:
    good = doc(base_events())
    c: dict[str, bytes] = {}
    # -- not a trace at all
    c["not_json.json"] = b"hello, world: this is not a trace\n"
    c["empty.json"] = b""
    c["whitespace_only.json"] = b" \n\t \n"
    c["zero_bytes.gz"] = b""
    c["binary_garbage.json"] = bytes(range(256))
    # -- traceEvents missing, not a list, empty
    c["no_trace_events.json"] = b'{"schemaVersion": 1, "deviceProperties": []}\n'
    c["trace_events_object.json"] = b'{"traceEvents": {"ph": "X", "name": "a"}}\n'
    c["trace_events_null.json"] = b'{"traceEvents": null}\n'
    c["trace_events_empty.json"] = b'{"schemaVersion": 1, "traceEvents": []}\n'
    c["only_empty_object.json"] = b'{"traceEvents": [{}]}\n'
    # -- cut short
    c["cut_mid_event.json"] = good[:good.index(b'"aten::op3"') + 4]
    c["cut_in_header.json"] = good[:12]
    c["cut_before_first_event.json"] = good[:good.index(b"[") + 1]
    c["cut_after_events.json"] = good[:good.rindex(b"]") + 1]
    c["gzip_cut.json.gz"] = gz(doc(base_events(200)))[:900]
    full = gz(good)
    c["gzip_no_trailer.json.gz"] = full[:-8]
    corrupt = bytearray(gz(doc(base_events(200))))
    corrupt[600:608] = b"\xff" * 8
    c["gzip_corrupt.json.gz"] = bytes(corrupt)
    c["gzip_header_only.json.gz"] = full[:10]
    # -- wrong types
    c["ts_numeric_string.json"] = doc([ev(0), ev(1, ts="110.5"), ev(2, dur=" 7 "), ev(3)])
    c["ts_not_a_number.json"] = doc([ev(0), ev(1, ts="abc"), ev(2), ev(3)])
    c["ts_boolean.json"] = doc([ev(0), ev(1), ev(2, ts=True), ev(3)])
    c["ts_object.json"] = doc([ev(0), ev(1, ts={"us": 110}), ev(2), ev(3)])
    c["dur_negative.json"] = doc([ev(0), ev(1, dur=-5), ev(2), ev(3, dur=-0.5)])
    c["dur_missing.json"] = doc([ev(0), ev(1, dur=_DROP), ev(2, ph="B", dur=_DROP), ev(3, dur=None),
                                 ev(4, cat="kernel", name="gemm", pid=0, tid=7, dur=_DROP)])
    c["pid_object.json"] = doc([ev(0), ev(1, pid={"host": "a", "rank": 0}), ev(2, tid=[1, 2]), ev(3)])
    c["ts_nan.json"] = doc(base_events()).replace(b'"ts": 110', b'"ts": NaN')
    c["ts_infinity.json"] = doc(base_events()).replace(b'"ts": 110', b'"ts": Infinity').replace(
        b'"ts": 120', b'"ts": -Infinity')
    c["ts_out_of_range.json"] = doc(base_events()).replace(b'"ts": 110', b'"ts": 1e300')
    c["duplicate_key.json"] = doc(base_events()).replace(b'"ts": 110', b'"ts": 110, "ts": 111')
    # -- big, odd or hostile content
    c["long_kernel_name.json"] = doc([{"ph": "X", "cat": "kernel", "name": "k" * 100_000, "pid": 0, "tid": 7,
                                       "ts": 100, "dur": 4, "args": {"correlation": 1, "device": 0}}])
    c["non_utf8_name.json"] = doc(base_events()).replace(b"aten::op1", b"aten::op\xff\xfe1")
    c["non_utf8_header.json"] = doc(base_events(), traceName="x").replace(b'"x"', b'"\xc3\x28"')
    c["deep_args.json"] = doc([ev(0), ev(1, args="DEEP"), ev(2)]).replace(b'"DEEP"', _nested(3000))
    c["deep_header.json"] = doc(base_events(), extra="DEEP").replace(b'"DEEP"', _nested(3000))
    c["duplicate_correlation.json"] = doc(_launch_kernel_pair(7, 0) + _launch_kernel_pair(7, 1))
    c["kernel_without_launch.json"] = doc(_launch_kernel_pair(1, 0) + _launch_kernel_pair(2, 1)[1:])
    c["unknown_ph.json"] = doc([ev(0), ev(1, ph="Q"), ev(2, ph=_DROP), ev(3, ph=7)])
    # -- not objects, bad separators, bad brackets
    c["not_objects.json"] = doc([ev(0), 1, "x", None, [1, 2], ev(5)])
    c["missing_comma.json"] = good.replace(b"},\n{", b"}\n{", 1)
    c["extra_comma.json"] = good.replace(b"},\n{", b"},,\n{", 1).replace(b"}\n]", b"},\n]")
    c["extra_brace.json"] = good.replace(b"},\n{", b"}},\n{", 1)
    c["trailing_garbage.json"] = good + b"garbage\n"
    c["names_with_json_syntax.json"] = doc([ev(0, name='a"}, {"ph": "X"'), ev(1, name="b}]\\,{["), ev(2)])
    # -- compression not as named
    c["plain_json_named.json.gz"] = good
    c["gzip_named.json"] = full
    return c


def _nested(depth: int) -> bytes:
    """JSON text of objects nested ``depth`` deep (too deep for json.dumps)."""
    return b'{"a": ' * depth + b"1" + b"}" * depth


def write(out: Path = HERE) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in cases().items():
        p = out / name
        p.write_bytes(data)
        written.append(p)
    return written


if __name__ == "__main__":
    for p in write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(p)
