#!/usr/bin/env python3
"""Hostile trace files: small or valid files that cost a careless scanner time or memory out of proportion to
their size, or that hold damage a salvage must not keep. Too large to commit, they are written at test time:

    python tests/data/bad/hostile.py DIR [SCALE]      # writes every case at SCALE (default 1) into DIR

``CASES`` maps a file name to a function ``(path, n)`` writing the case with its size parameter ``n`` (bytes of
the long string, of the whitespace, of the events); ``SIZES`` holds each case's ``n`` at scale 1.
tests/test_bad_input.py ingests each under a memory cap, at two sizes, and checks the outcome.
Everything is deterministic (fixed gzip mtime, no randomness).
"""
from __future__ import annotations

import gzip
import json
import sys
import zlib
from collections.abc import Callable
from pathlib import Path


def _ev(i: int, **kw) -> dict:
    e = {"ph": "X", "cat": "cpu_op", "name": f"aten::op{i}", "pid": 1, "tid": 1, "ts": 100 + 10 * i, "dur": 5,
         "args": {"External id": i}}
    e.update(kw)
    return e


def _events(k: int, **kw) -> bytes:
    return b",\n".join(json.dumps(_ev(i, **kw)).encode() for i in range(k))


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


def _long_string(n: int, kind: str = "plain") -> bytes:
    """The JSON text of a string of about ``n`` bytes: plain letters, or escapes (``\\"`` and ``\\\\``) only."""
    if kind == "escapes":
        return b'"' + b'\\"\\\\' * (n // 4) + b'"'
    return b'"' + b"a" * n + b'"'


def header_string_gz(path: Path, n: int) -> None:
    """Item 7: a long string in the header, before traceEvents; compresses to almost nothing."""
    path.write_bytes(_gz(b'{"note": ' + _long_string(n) + b', "traceEvents": [\n' + _events(4) + b"\n]}\n"))


def header_escapes_gz(path: Path, n: int) -> None:
    """Item 7: a long string of escaped quotes and backslashes in the header."""
    path.write_bytes(_gz(b'{"note": ' + _long_string(n, "escapes") + b', "traceEvents": [\n' + _events(4)
                         + b"\n]}\n"))


def trailer_string_gz(path: Path, n: int) -> None:
    """A long string in the fields after traceEvents."""
    path.write_bytes(_gz(b'{"traceEvents": [\n' + _events(4) + b'\n], "note": ' + _long_string(n) + b"}\n"))


def whitespace_between_events(path: Path, n: int) -> None:
    """Item 8: ``n`` bytes of whitespace between two events (no cut can be found in them)."""
    with open(path, "wb") as f:
        f.write(b'{"traceEvents": [\n' + _events(3) + b",")
        block = b" \n\t" * (1 << 18)
        left = n
        while left > 0:
            f.write(block[:left])
            left -= len(block)
        f.write(json.dumps(_ev(9)).encode() + b"\n]}\n")


def long_arg_string(path: Path, n: int) -> None:
    """Item 2: a valid event whose args hold a string of ``n`` bytes, kept as written."""
    big = b'{"ph": "X", "cat": "cpu_op", "name": "big", "pid": 1, "tid": 1, "ts": 50, "dur": 5, "args": {"s": ' + \
        _long_string(n) + b"}}"
    path.write_bytes(b'{"traceEvents": [\n' + _events(3) + b",\n" + big + b",\n" + _events(2) + b"\n]}\n")


def long_string_bad_ts(path: Path, n: int) -> None:
    """Item 7 (the fallback scanner): an event with a long string and another with a ts that is not a number,
    so the chunk is scanned exactly (with --salvage the bad event is skipped)."""
    big = json.dumps(_ev(100, name="x" * n)).encode()
    bad = json.dumps(_ev(101, ts="abc")).encode()
    path.write_bytes(b'{"traceEvents": [\n' + _events(3) + b",\n" + big + b",\n" + bad + b"\n]}\n")


def boundary_names(path: Path, n: int) -> None:
    """Item 17: a valid file of about ``n`` bytes whose event names hold `}, {` (each cut guess can land in one)."""
    k = max(4, n // 160)
    evs = b",\n".join(json.dumps(_ev(i, name=f'op}},{{"ph": "X"}}, {{ {i}')).encode() for i in range(k))
    path.write_bytes(b'{"traceEvents": [\n' + evs + b"\n]}\n")


def nested_boundaries(path: Path, n: int) -> None:
    """A valid file of about ``n`` bytes whose args hold lists of objects (`}, {` at depth 3)."""
    k = max(4, n // 200)
    evs = b",\n".join(json.dumps(_ev(i, args={"l": [{"a": i}, {"b": i}]})).encode() for i in range(k))
    path.write_bytes(b'{"traceEvents": [\n' + evs + b"\n]}\n")


def gzip_trailing_garbage(path: Path, n: int) -> None:
    """Item 17: a whole gzip member, then ``n`` bytes that are not gzip."""
    path.write_bytes(_gz(b'{"traceEvents": [\n' + _events(4) + b"\n]}\n") + b"GARBAGE!" * max(1, n // 8))


def gzip_corrupt_mid_member(path: Path, n: int) -> None:
    """Item 5: two gzip members of about ``n`` bytes of JSON together, stored (not compressed), so that flipping a
    byte in the middle of the second alters the text without a deflate error: only its CRC, at its end, tells.
    A salvage keeps the events of the first member only."""
    text = b'{"traceEvents": [\n' + _events(max(8, n // 120)) + b"\n]}\n"
    half = len(text) // 2
    members = []
    for part in (text[:half], text[half:]):
        co = zlib.compressobj(0, zlib.DEFLATED, 31)
        members.append(co.compress(part) + co.flush())
    second = bytearray(members[1])
    at = second.index(b'"aten::op', len(second) // 2) + 2
    second[at] ^= 0x20  # "aten::op" -> "Aten::op"
    path.write_bytes(members[0] + bytes(second))


def ts_huge(path: Path, n: int) -> None:
    """Item 17: a ts of 1e18 µs (beyond int64 ns), as an integer and as a float, and a dur of 1e18."""
    huge = [json.dumps(_ev(5, ts=10**18)).encode(), json.dumps(_ev(6, ts="TS")).encode().replace(b'"TS"', b"1e18"),
            json.dumps(_ev(7, dur="D")).encode().replace(b'"D"', b"1e18")]
    path.write_bytes(b'{"traceEvents": [\n' + _events(3) + b",\n" + b",\n".join(huge) + b"\n]}\n")


def second_trace_events(path: Path, n: int) -> None:
    """Item 6: a second traceEvents key after the first."""
    path.write_bytes(b'{"traceEvents": [\n' + _events(3) + b'\n], "traceEvents": [' + _events(2) + b"]}\n")


CASES: dict[str, Callable[[Path, int], None]] = {
    "header_string.json.gz": header_string_gz,
    "header_escapes.json.gz": header_escapes_gz,
    "trailer_string.json.gz": trailer_string_gz,
    "whitespace_between_events.json": whitespace_between_events,
    "long_arg_string.json": long_arg_string,
    "long_string_bad_ts.json": long_string_bad_ts,
    "boundary_names.json": boundary_names,
    "nested_boundaries.json": nested_boundaries,
    "gzip_trailing_garbage.json.gz": gzip_trailing_garbage,
    "gzip_corrupt_mid_member.json.gz": gzip_corrupt_mid_member,
    "ts_huge.json": ts_huge,
    "second_trace_events.json": second_trace_events,
}

# n at scale 1: the sizes of the reports are 50 MB strings, 200 MB whitespace, 60 MB args, 15 MB files
SIZES: dict[str, int] = {
    "header_string.json.gz": 12 << 20,
    "header_escapes.json.gz": 12 << 20,
    "trailer_string.json.gz": 12 << 20,
    "whitespace_between_events.json": 50 << 20,
    "long_arg_string.json": 15 << 20,
    "long_string_bad_ts.json": 5 << 20,
    "boundary_names.json": 15 << 20,
    "nested_boundaries.json": 15 << 20,
    "gzip_trailing_garbage.json.gz": 1 << 10,
    "gzip_corrupt_mid_member.json.gz": 1 << 20,
    "ts_huge.json": 0,
    "second_trace_events.json": 0,
}


def write(out: Path, scale: float = 1) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in CASES.items():
        p = out / name
        make(p, int(SIZES[name] * scale))
        written.append(p)
    return written


if __name__ == "__main__":
    for p in write(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 1):
        print(p)
