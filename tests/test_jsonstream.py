"""The splitter cuts traceEvents into chunks of whole events that cover the array exactly."""
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tracesql.errors import TraceError
from tracesql.ingest import jsonstream
from tracesql.ingest.jsonstream import BLOCK_SIZE, ByteSource, TraceSplitter, string_end, string_scan


def test_chunks_cover_the_events_exactly_at_their_offsets(tmp_path):
    events = [{"ph": "X", "cat": "cpu_op", "name": f"op{i}" if i % 89 else 'x}, {"y', "pid": 1, "tid": 1,
               "ts": i, "dur": 1, "args": {"Input Dims": [[i % 7, 3]]}} for i in range(120_000)]
    body = b",\n  ".join(json.dumps(e).encode() for e in events)
    doc = b'{"schemaVersion": 1, "traceEvents": [\n  ' + body + b'\n], "traceName": "t"}'
    assert len(doc) > 3 * BLOCK_SIZE
    f = tmp_path / "t.json"
    f.write_bytes(doc)
    sp = TraceSplitter(ByteSource(str(f)), chunk_size=2 << 20)
    chunks = list(sp.chunks())
    assert len(chunks) >= 3 and any(len(c.pieces) > 1 for c in chunks)
    for c in chunks:  # each chunk is the document's text at its offset, and parses as a list of events
        assert doc[c.offset:c.offset + len(c.data)] == c.data
    got = [e for c in chunks for e in json.loads(b"[" + c.data + b"]")]
    assert got == events
    assert sp.header == {"schemaVersion": 1, "traceName": "t"}


# ---- hostile input: linear time, bounded memory, nothing altered kept (tests/data/bad/hostile.py) -------------

BAD = Path(__file__).resolve().parent / "data" / "bad"


@pytest.mark.parametrize("impl", ["regex", "find"])
def test_string_scan_finds_the_closing_quote(monkeypatch, impl):
    """Every JSON string (quotes, backslashes, runs of them), whole or fed in pieces, ends where json.dumps ends it."""
    if impl == "find":
        monkeypatch.setattr(jsonstream, "_STR_BODY", None)
    rnd = random.Random(7)
    alphabet = ['a', '"', '\\', '\n', 'é', '}', ',', '{']
    for _ in range(2000):
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 14)))
        enc = json.dumps(s, ensure_ascii=False).encode()
        data = b'x' + enc + b'tail"'
        assert string_end(data, 2) == len(enc), (s, enc)
        buf, rest, pos = bytearray(data[:2]), data[2:], 2
        while True:
            closed, q = string_scan(buf, pos)
            if closed:
                break
            assert rest
            pos = q
            k = rnd.randint(1, 3)
            buf += rest[:k]
            rest = rest[k:]
        assert q == len(enc), (s, enc)
    long = b'"' + b'\\"\\\\' * 100_000 + b'"'
    assert string_end(long, 1) == len(long) - 1


def _capped(code: str, limit: int = 1 << 30) -> subprocess.CompletedProcess:
    """Run Python ``code`` in a process whose address space is capped at ``limit`` bytes (no DuckDB is loaded: the
    splitter alone fits in 1 GiB)."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, preexec_fn=cap,
                          cwd=str(Path(__file__).resolve().parent.parent))


_SPLIT = """
import sys
sys.path.insert(0, {bad!r})
from pathlib import Path
import hostile
from tracesql.ingest.jsonstream import ByteSource, TraceSplitter
p = Path({path!r})
hostile.CASES[p.name](p, {n})
sp = TraceSplitter(ByteSource(str(p), salvage=True), chunk_size=8 << 20, salvage=True)
n = sum(len(c.data) for c in sp.chunks())
print(n, len(sp.header.get("note", "")))
"""


@pytest.mark.slow
@pytest.mark.parametrize("name,n", [("header_string.json.gz", 50 << 20), ("header_escapes.json.gz", 50 << 20),
                                    ("trailer_string.json.gz", 50 << 20),
                                    ("whitespace_between_events.json", 200 << 20)])
def test_splitter_on_hostile_files_under_1gib(tmp_path, name, n):
    """The issue's sizes (a 50 MB string in the header or after traceEvents, 200 MB of whitespace between two events)
    split in a process capped at 1 GiB; the long strings are kept whole. (Python's `re` over `"(?:[^"\\\\]|\\\\.)*"`
    took 128 bytes per character: 6.3 GB for the 50 MB string.)"""
    proc = _capped(_SPLIT.format(bad=str(BAD), path=str(tmp_path / name), n=n))
    assert proc.returncode == 0, proc.stderr[-2000:]
    events, note = map(int, proc.stdout.split())
    assert events > 0
    if "string" in name:
        assert note == n
    if "escapes" in name:
        assert note == n // 2  # each of \" and \\ is one character


def test_the_cut_search_reads_new_text_only(tmp_path, monkeypatch):
    """200 MB of whitespace between two events were searched again for every 4 MB block (47 s): the bytes the cut
    search looks at grow linearly with the text (here at most 3 times it), not with its square."""
    searched = []
    orig = jsonstream._last_boundary

    def counting(data, window=1 << 18, end=None, start=0):
        searched.append((len(data) if end is None else end) - start)
        return orig(data, window, end, start)

    monkeypatch.setattr(jsonstream, "_last_boundary", counting)
    sys.path.insert(0, str(BAD))
    import hostile
    totals = []
    for n in (8 << 20, 32 << 20):
        p = tmp_path / f"ws{n}.json"
        hostile.whitespace_between_events(p, n)
        searched.clear()
        sp = jsonstream.TraceSplitter(jsonstream.ByteSource(str(p), block_size=1 << 20), chunk_size=2 << 20)
        got = [e for c in sp.chunks() for e in json.loads(b"[" + c.data + b"]")]
        assert len(got) == 4
        totals.append(sum(searched))
        assert sum(searched) <= 3 * p.stat().st_size, (n, sum(searched))


def test_boundaries_inside_strings_are_not_cuts(tmp_path):
    """Every event name holds `},{` (and `}, {"ph": "X"}`): each chunk is whole events (it used to fail a valid file as
    'unbalanced brackets' when a cut landed in a name)."""
    events = [{"ph": "X", "name": f'op}},{{"ph": "X"}}, {{ {i}\\\\', "ts": i, "dur": 1,
               "args": {"s": "a},{b" * (i % 5)}} for i in range(60_000)]
    doc = b'{"traceEvents": [\n' + b",\n".join(json.dumps(e).encode() for e in events) + b"\n]}"
    f = tmp_path / "t.json"
    f.write_bytes(doc)
    sp = TraceSplitter(ByteSource(str(f), block_size=1 << 20), chunk_size=1 << 20)
    chunks = list(sp.chunks())
    assert len(chunks) > 3
    got = [e for c in chunks for e in json.loads(b"[" + c.data + b"]")]
    assert got == events


@pytest.mark.parametrize("kind", ["nested", "unbalanced_strings"])
def test_boundaries_inside_events_are_not_cuts(tmp_path, kind):
    """`}, {` inside an event (a list of objects in its args), and names holding unbalanced brackets and `}, {` at
    every turn (the quick search gives up and the exact scan cuts): each chunk is whole events."""
    if kind == "nested":
        events = [{"ph": "X", "ts": i, "args": {"l": [{"a": i}, {"b": [{"c": 1}, {"d": 2}]}]}} for i in range(60_000)]
    else:
        events = [{"ph": "X", "name": "}, {[[" * (i % 3) + "x\\", "ts": i, "args": {"l": [{"a": i}, {"b": 2}]}}
                  for i in range(60_000)]
    doc = b'{"traceEvents": [\n' + b",\n".join(json.dumps(e).encode() for e in events) + b"\n]}"
    f = tmp_path / "t.json"
    f.write_bytes(doc)
    sp = TraceSplitter(ByteSource(str(f), block_size=1 << 19), chunk_size=1 << 20)
    chunks = list(sp.chunks())
    assert len(chunks) > 3
    got = [e for c in chunks for e in json.loads(b"[" + c.data + b"]")]
    assert got == events


def test_a_second_trace_events_key_is_recorded(tmp_path):
    f = tmp_path / "t.json"
    f.write_bytes(b'{"traceEvents": [{"ph": "X", "ts": 1}], "a": 1, "traceEvents": [{"ph": "X"}, {}]}')
    sp = TraceSplitter(ByteSource(str(f)))
    assert [json.loads(b"[" + c.data + b"]") for c in sp.chunks()] == [[{"ph": "X", "ts": 1}]]
    assert sp.header == {"a": 1}
    assert [(k, d) for _, k, d in sp.ignored] == [
        ("ignored_second_trace_events",
         "a second traceEvents key after the first (2 elements); only the first is read")]


def _stored_member(text: bytes) -> bytes:
    co = zlib.compressobj(0, zlib.DEFLATED, 31)
    return co.compress(text) + co.flush()


def test_salvage_keeps_only_verified_gzip_members(tmp_path):
    """A byte flipped inside a stored gzip member alters the text without a deflate error; only the member's CRC, at
    its end, tells. Salvage keeps the members before it, and nothing of the damaged one (it used to keep the altered
    text as good events)."""
    first, second = b'{"traceEvents": [{"name": "aten::a"},\n', b'{"name": "aten::b"}, {"name": "aten::c"}]}'
    bad = bytearray(_stored_member(second))
    bad[bad.index(b"aten::b")] ^= 0x20
    f = tmp_path / "t.json.gz"
    f.write_bytes(_stored_member(first) + bytes(bad))
    src = ByteSource(str(f), salvage=True)
    assert b"".join(src.blocks()) == first
    assert src.gzip_truncated and "incorrect data check" in (src.gzip_error or "")
    assert f"starts at byte {len(first)} of the JSON text" in (src.gzip_error or "")
    assert src.raw_bytes == f.stat().st_size  # the whole file is hashed
    with pytest.raises(TraceError, match="incorrect data check"):
        b"".join(ByteSource(str(f)).blocks())


def test_trailing_data_after_a_gzip_stream(tmp_path):
    """Data after the last member that is not gzip: an error naming it without --salvage; with it, every member's
    text, verified, and ``gzip_trailing``."""
    text = b'{"traceEvents": [{"name": "a"}]}\n'
    f = tmp_path / "t.json.gz"
    f.write_bytes(gzip.compress(text, mtime=0) + b"\x00\x00" + gzip.compress(text, mtime=0) + b"GARBAGE!" * 100)
    with pytest.raises(TraceError, match="data after the end of the gzip stream is not gzip"):
        b"".join(ByteSource(str(f)).blocks())
    src = ByteSource(str(f), salvage=True)
    assert b"".join(src.blocks()) == text + text
    assert src.gzip_trailing and src.gzip_truncated
    assert os.path.getsize(f) == src.raw_bytes
