"""Fuzzing the ingester: random but plausible event streams, and random byte mutations of real traces.

Whatever the input, ``ingest_file`` either raises TraceError (the documented error) or publishes a trace whose counts
are consistent: every element of traceEvents is a row of exactly one event table or a skipped event in
ingest_issues, with event ids 0..n-1. For generated streams the outcome is also predicted exactly (which elements
are malformed, empty or kept, and where each row goes).

Each property runs twice: bounded and derandomized (25 examples), and long and random (75 examples in the suite;
``TRACESQL_FUZZ_EXAMPLES=1000`` for a longer hunt). All of them are marked slow, outside the fast tier
(``pytest -m "not slow"``); ``pytest -m slow tests/test_fuzz.py`` runs them alone.
"""
from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import tempfile
import zlib
from collections import Counter
from decimal import Decimal, InvalidOperation
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tracesql.errors import TraceError
from tracesql.ingest import Workers as _Workers
from tracesql.ingest import ingest_file
from tracesql.ingest.read import EXTRA_KEYS as _EXTRA_KEYS
from tracesql.store.schema import EVENT_TABLES

from .conftest import NO_SHARED, TRACES

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
# LONG draws new random examples on every run (not derandomized), so the runs together explore more than any one;
# TRACESQL_FUZZ_EXAMPLES sets how many a run draws
LONG = settings(max_examples=int(os.environ.get("TRACESQL_FUZZ_EXAMPLES", "20")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def workers():
    w = _Workers(2)
    yield w
    w.close()


def _ingest(data: bytes, name: str, workers, salvage: bool):
    """Ingest ``data`` as a file called ``name`` into a fresh dataset. Returns (result, rows per table read back
    from the published parts, skipped event ids, issue kinds) or the TraceError."""
    tmp = Path(tempfile.mkdtemp(prefix="tracesql-fuzz-"))
    try:
        f = tmp / name
        f.write_bytes(data)
        try:
            r = ingest_file(str(f), tmp / "ds", salvage=salvage, workers=workers)
        except TraceError as e:
            assert str(e).startswith(f"{f}: ") and "\n" not in str(e)
            assert not list((tmp / "ds").glob("traces/trace_id=*"))  # nothing published
            return e
        assert r.status == "ingested"
        tdir = tmp / "ds" / "traces" / f"trace_id={r.trace_id}"
        con = duckdb.connect()
        ids: list[int] = []
        rows = {}
        for t in EVENT_TABLES + ["launches"]:
            got = con.execute(f"SELECT event_id FROM read_parquet('{tdir}/{t}/*.parquet')").fetchall()
            rows[t] = len(got)
            if t != "launches":
                ids += [i for (i,) in got]
        issues = con.execute(f"SELECT event_id, kind FROM read_parquet('{tdir}/ingest_issues/*.parquet')").fetchall()
        ((read, skipped),) = con.execute(
            f"SELECT events_read, events_skipped FROM read_parquet('{tdir}/traces/*.parquet')").fetchall()
        con.close()
        assert not list((tmp / "ds" / ".staging").iterdir())
        skipped_ids = [i for i, k in issues if k.startswith("skipped_")]
        # consistency: every element lands in exactly one table or is skipped, ids 0..n-1
        assert rows == r.row_counts
        assert read == r.events_read == sum(rows[t] for t in EVENT_TABLES) + len(skipped_ids)
        assert skipped == len(skipped_ids) == sum(r.skipped.values())
        assert sorted(ids + skipped_ids) == list(range(read))
        assert rows["launches"] <= rows["events"]
        return r, rows, sorted(skipped_ids), Counter(k for _, k in issues)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- generated event streams ---------------------------------------------------------------------------------

GOOD_STRINGS = ["12.5", " 7 ", "1e3", "-3", "0"]
BAD_STRINGS = ["abc", "", "1,5", "0x10", "NaN", "Infinity", "--1", "1e400"]


def _time_value():
    return st.one_of(
        st.integers(-10**12, 10**12),
        st.floats(-1e12, 1e12, allow_nan=False).map(lambda x: round(x, 3)),
        st.integers(10**17, 10**19),  # out of range as µs
        st.sampled_from([1712195495519689.047, 1.5e-7, float("nan"), float("inf"), float("-inf")]),
        st.sampled_from(GOOD_STRINGS + BAD_STRINGS),
        st.sampled_from([True, None, {"us": 1}, [1]]),
    )


_NAMES = st.one_of(st.sampled_from(["aten::mm", "cudaLaunchKernel", "void gemm<float>(int)", 'a"}, {"b', "</script>",
                                    "x" * 300, "ünï", "\u0000nul", "Memcpy HtoD"]), st.text(max_size=12))


@st.composite
def _event(draw):
    if draw(st.integers(0, 20)) == 0:  # not an object
        return draw(st.sampled_from([None, 1, "x", [1, 2], True, {}]))
    e: dict = {}
    e["ph"] = draw(st.sampled_from(["X", "X", "X", "B", "E", "i", "I", "s", "f", "t", "M", "C", "b", "n", "Q", 7,
                                    None]))
    e["cat"] = draw(st.sampled_from(["kernel", "cpu_op", "cuda_runtime", "gpu_user_annotation", "Kernel", "Memcpy",
                                     "Runtime", "user_annotation", "ac2g", None, 3]))
    e["name"] = draw(_NAMES)
    e["pid"] = draw(st.sampled_from([0, 1, "Spans", "", {"h": 1}, [1], None, 2**40]))
    e["tid"] = draw(st.sampled_from([7, "stream 7", {"t": 1}, None]))
    e["ts"] = draw(_time_value())
    e["dur"] = draw(_time_value())
    if draw(st.booleans()):
        e["args"] = draw(st.sampled_from([{"correlation": 5, "External id": 3, "device": 0, "stream": 7},
                                          {"correlation": "x", "grid": [1, "a"], "block": {"x": 1}},
                                          {"name": "/device:GPU:0"}, {"ts": "12", "dur": "x"}, {}, "str", [1], 5]))
    if draw(st.integers(0, 5)) == 0:
        e[draw(st.sampled_from(_EXTRA_KEYS + ["foo"]))] = draw(st.sampled_from([1, "e", {"a": 1}, None]))
    drop = draw(st.sets(st.sampled_from(sorted(e)), max_size=len(e)))
    return {k: v for k, v in e.items() if k not in drop}


def _time_ok(v) -> bool:
    """Whether a ts/dur value is read as a number (None stands for absent/null): a finite JSON number, or a string
    holding one (surrounding blanks allowed), below 9e15 µs in magnitude."""
    if v is None:
        return True
    if isinstance(v, (bool, dict, list)):
        return False
    if isinstance(v, str):
        if "_" in v:
            return False
        try:
            v = Decimal(v.strip())
        except InvalidOperation:
            return False
        if not v.is_finite():
            return False
    if isinstance(v, float) and not math.isfinite(v):
        return False
    return abs(v) < 9_000_000_000_000_000


# PyTorch 1.8 category names, normalised by the ingest
_OLD_CATEGORIES: dict[object, str] = {"Kernel": "kernel", "Memcpy": "gpu_memcpy", "Runtime": "cuda_runtime"}


def _predict(events: list) -> tuple[Counter, int, int, int]:
    """(rows per table, malformed count, empty count, repaired count) by the documented rules."""
    tables: Counter = Counter()
    malformed = empty = repaired = 0
    fields = {"ph", "cat", "name", "pid", "tid", "ts", "args", *_EXTRA_KEYS}
    for e in events:
        if e is None:
            empty += 1
            continue
        if not isinstance(e, dict):
            malformed += 1
            continue
        if not (_time_ok(e.get("ts")) and _time_ok(e.get("dur"))):
            malformed += 1
            continue
        repaired += isinstance(e.get("ts"), str) or isinstance(e.get("dur"), str)
        if all(e.get(k) is None for k in fields):
            empty += 1
            continue
        ph = None if e.get("ph") is None else str(e["ph"])
        cat = e.get("cat")
        cat = _OLD_CATEGORIES.get(cat, cat)
        if ph == "X" and cat in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"):
            tables["kernels"] += 1
        elif ph == "X" and cat == "gpu_user_annotation":
            tables["gpu_user_annotations"] += 1
        elif ph in ("X", "B", "E"):
            tables["events"] += 1
        elif ph in ("s", "f", "t"):
            tables["correlations"] += 1
        elif ph in ("i", "I"):
            tables["instants"] += 1
        elif ph == "M":
            tables["metadata"] += 1
        elif ph == "C":
            tables["counters"] += 1
        else:
            tables["other_events"] += 1
    return tables, malformed, empty, repaired


def _plain(events: list) -> list:
    """The events with every ts/dur a plain JSON number (read without the careful mode) and no element that is
    not an object or null."""
    out: list[dict | None] = []
    for e in events:
        if isinstance(e, dict):
            e = dict(e)
            for k in ("ts", "dur"):
                v = e.get(k)
                if k in e and not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                                   and abs(v) < 9e15):
                    e[k] = 1000 + len(out)
            out.append(e)
        elif e is None:
            out.append(e)
    return out or [{}]


@st.composite
def _document(draw, plain: bool = False):
    """(events, file bytes); with ``plain``, three documents in four hold _plain events only."""
    events = draw(st.lists(_event(), min_size=1, max_size=25))
    if plain and draw(st.integers(0, 3)):
        events = _plain(events)
    # no /device: process names: JAX-style routing of events without a category is tested elsewhere
    for e in events:
        if isinstance(e, dict) and isinstance(e.get("args"), dict) and "name" in e["args"]:
            e["args"] = {"label": "x"}
    sep = draw(st.sampled_from([",", ",\n", " , "]))
    body = sep.join(json.dumps(e) for e in events)  # NaN/Infinity are written as JSON extensions
    form = draw(st.sampled_from(["object", "object_trailer", "array"]))
    if form == "array":
        text = "[" + body + "]"
    elif form == "object":
        text = '{"schemaVersion": 1, "traceEvents": [' + body + "]}"
    else:
        text = ('{"traceEvents": [' + body + '], "deviceProperties": [{"id": 0}, {"id": 1}], '
                '"traceName": "t", "baseTimeNanoseconds": 1700000000000000000}')
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data = gzip.compress(data, mtime=0)
    return events, data


def _check_generated(events, data, workers):
    note(repr(events))
    tables, malformed, empty, repaired = _predict(events)
    for salvage in (False, True):
        out = _ingest(data, "gen.json", workers, salvage)
        if not salvage and malformed:
            assert isinstance(out, TraceError), "a malformed event must fail without --salvage"
            assert out.event_index is not None and out.offset is not None
            assert "rerun with --salvage" in out.message
            continue
        assert not isinstance(out, TraceError), str(out)
        r, rows, skipped_ids, kinds = out
        assert {t: n for t, n in rows.items() if n and t != "launches"} == {t: n for t, n in tables.items() if n}
        assert kinds["skipped_malformed_event"] == malformed
        assert kinds["skipped_empty_event"] == empty
        assert kinds["repaired_string_time"] == repaired
        assert r.events_read == len(events)


@pytest.mark.slow
@FAST
@given(_document())
def test_generated_event_streams(workers, doc):
    events, data = doc
    _check_generated(events, data, workers)


@pytest.mark.slow
@LONG
@given(_document())
def test_generated_event_streams_long(workers, doc):
    events, data = doc
    _check_generated(events, data, workers)


# ---- mutations of real traces ---------------------------------------------------------------------------------

SOURCES = ["nvidia/hta_triton_example.json.gz", "jax/cpu_perfetto_trace.json.gz",
           "nvidia/gpumodel_relative_ts.json.gz", "nvidia/hta_trace_compare_base.json.gz"]


def _sources() -> dict[str, bytes]:
    if NO_SHARED and not TRACES.is_dir():
        return {}
    return {rel: gzip.decompress((TRACES / rel).read_bytes()) for rel in SOURCES}


_TEXTS = _sources()
_TOKENS = [b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\", b"NaN", b"-", b"\xff", b"\x00", b"null", b"1e999",
           b'"ts": "x"', b"},{", b"\n"]


@st.composite
def _mutation(draw):
    rel = draw(st.sampled_from(sorted(_TEXTS)))
    data = bytearray(_TEXTS[rel])
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["replace", "insert", "delete", "truncate", "duplicate", "flip"]))
        i = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "replace":
            data[i:i + 1] = draw(st.sampled_from(_TOKENS))
        elif kind == "insert":
            data[i:i] = draw(st.sampled_from(_TOKENS))
        elif kind == "delete":
            del data[i:i + draw(st.integers(1, 64))]
        elif kind == "truncate":
            del data[i:]
        elif kind == "duplicate":
            n = draw(st.integers(1, 200))
            data[i:i] = data[i:i + n]
        elif data:
            data[i] ^= 1 << draw(st.integers(0, 7))
    compress = draw(st.sampled_from(["plain", "gzip", "gzip_then_mutate"]))
    out = bytes(data)
    if compress != "plain":
        out = gzip.compress(out, mtime=0)
    if compress == "gzip_then_mutate" and len(out) > 20:
        b = bytearray(out)
        j = draw(st.integers(10, len(b) - 1))
        if draw(st.booleans()):
            b[j] ^= 0xFF
        else:
            del b[j:]
        out = bytes(b)
    return rel, out


def _check_mutation(rel, data, workers):
    note(f"{rel}: {len(data)} bytes")
    results = [_ingest(data, "mutated.json.gz", workers, salvage) for salvage in (False, True)]
    strict, salvaged = results
    if not isinstance(strict, TraceError):
        # what ingests without --salvage ingests the same with it
        assert not isinstance(salvaged, TraceError)
        assert strict[1] == salvaged[1] and strict[2] == salvaged[2]


@pytest.mark.slow
@pytest.mark.skipif(not _TEXTS, reason="shared traces not found (TRACESQL_NO_SHARED=1)")
@FAST
@given(_mutation())
def test_mutated_real_traces(workers, m):
    rel, data = m
    _check_mutation(rel, data, workers)


@pytest.mark.slow
@pytest.mark.skipif(not _TEXTS, reason="shared traces not found (TRACESQL_NO_SHARED=1)")
@LONG
@given(_mutation())
def test_mutated_real_traces_long(workers, m):
    rel, data = m
    _check_mutation(rel, data, workers)


def test_unmutated_sources_ingest(workers):
    """The mutation sources themselves ingest cleanly (so the fuzzing starts from valid traces)."""
    if not _TEXTS:
        pytest.skip("shared traces not found (TRACESQL_NO_SHARED=1)")
    for rel, text in _TEXTS.items():
        r, rows, skipped, kinds = _ingest(text, Path(rel).name, workers, False)
        assert r.events_read == len(json.loads(text)["traceEvents"] if text.lstrip()[:1] == b"{"
                                    else json.loads(text)), rel
        assert set(kinds) <= {"skipped_empty_event"}


def test_zlib_corrupt_member_is_a_trace_error(workers):
    """A gzip stream whose data is corrupt is a TraceError without --salvage (not a zlib.error)."""
    data = bytearray(gzip.compress(json.dumps({"traceEvents": [{"ph": "X", "ts": i, "dur": 1, "name": str(i)}
                                                                for i in range(500)]}).encode(), mtime=0))
    data[40:48] = b"\x00" * 8
    out = _ingest(bytes(data), "z.json.gz", workers, False)
    assert isinstance(out, TraceError) and "corrupt gzip data" in out.message
    with pytest.raises(zlib.error):
        zlib.decompress(bytes(data), 31)


# ---- the splitter on hostile text: strings and args full of brackets, quotes and escapes --------------------

# Strings hold brackets, but as many closing as opening ones each (as kernel names do: `{lambda(int)#1}`); strings
# with unbalanced brackets may defeat the quick cut search, which then fails the file in one line or hands over to
# the exact scan (test_jsonstream.py::test_boundaries_inside_events_are_not_cuts).
_HOSTILE_CHARS = ['a', '},{', '}, {', ']', '[', '{}', '[]', '{lambda(int)#1}', ',', '"', '\\', ' ', '\n', '\\"',
                  '\\\\']
_BALANCED = {"]": "[", "[": "]"}
_hostile_text = st.lists(st.sampled_from(_HOSTILE_CHARS), max_size=12).map(
    lambda ts: "".join(ts) + "".join(_BALANCED[t] for t in ts if t in _BALANCED))  # `]` then `[` balance too
_hostile_value = st.recursive(
    st.one_of(_hostile_text, st.integers(-5, 5), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_hostile_text, inner, max_size=3)),
    max_leaves=6)
_hostile_event = st.fixed_dictionaries({"ph": st.just("X"), "name": _hostile_text, "ts": st.integers(0, 10**6)},
                                       optional={"args": _hostile_value})


@st.composite
def _hostile_doc(draw):
    events = draw(st.lists(_hostile_event, min_size=1, max_size=60))
    seps = [draw(st.sampled_from([",", ", ", ",\n", " ,\t\n "])) for _ in events]
    body = "".join(json.dumps(e, ensure_ascii=draw(st.booleans())) + s for e, s in zip(events, seps, strict=True))
    trailer = draw(st.sampled_from(["", ', "x": [{"a": 1}, {"b": "]}"}]', ', "n": "}, {"']))
    return events, ('{"traceEvents": [' + body.rstrip(", \t\n") + "]" + trailer + "}").encode()


def _check_split(events, doc, block, chunk):
    from tracesql.ingest import jsonstream

    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as d:
        mp.setattr(jsonstream, "TAIL_KEEP", 64)
        f = Path(d) / "t.json"
        f.write_bytes(doc)
        sp = jsonstream.TraceSplitter(jsonstream.ByteSource(str(f), block_size=block), chunk_size=chunk)
        chunks = list(sp.chunks())
    got = [e for c in chunks for e in json.loads(b"[" + c.data + b"]")]
    assert got == events
    for c in chunks:
        assert doc[c.offset:c.offset + len(c.data)] == c.data


@FAST
@given(_hostile_doc(), st.sampled_from([16, 64, 256]), st.sampled_from([32, 128, 1024]))
def test_splitter_cuts_only_between_events(doc, block, chunk):
    events, text = doc
    """Whatever the strings and args hold (`}, {` in names, lists of objects in args, escaped quotes and backslashes,
    unbalanced brackets), with tiny blocks and chunks every chunk is whole events at its offset."""
    _check_split(events, text, block, chunk)


@pytest.mark.slow
@LONG
@given(_hostile_doc(), st.sampled_from([16, 64, 256]), st.sampled_from([32, 128, 1024]))
def test_splitter_cuts_only_between_events_long(doc, block, chunk):
    events, text = doc
    _check_split(events, text, block, chunk)


# ---- generated files parsed together (tracesql/ingest/parse_group.py) -----------------------------------------

GROUPED = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@pytest.mark.slow
@GROUPED
@given(st.lists(_document(plain=True), min_size=2, max_size=4), st.booleans())
def test_generated_files_parsed_together_store_what_each_stores_alone(docs, salvage):
    """Small files of one run are parsed in a group: each file's result and every table equal what the file gets
    when ingested alone, whatever its events (those that fail alone fail, with the same error)."""
    from tracesql.ingest import ingest

    from .test_batch_build import _differences

    tmp = Path(tempfile.mkdtemp(prefix="tracesql-fuzz-group-"))
    try:
        files = []
        for i, (events, data) in enumerate(docs):
            note(f"file {i}: {events!r}")
            f = tmp / "in" / f"f{i}.json"
            f.parent.mkdir(exist_ok=True)
            f.write_bytes(data)
            files.append(str(f))

        def summary(r):
            return (r.path, r.status, r.error, r.trace_id, r.row_counts, r.events_read, r.skipped, r.noted)

        alone = [summary(r) for f in files for r in ingest(f, out=tmp / "alone", salvage=salvage)]
        together = [summary(r) for r in ingest(files, out=tmp / "together", salvage=salvage)]
        # a file with the content of an earlier one is a duplicate in both
        assert together == alone
        if any(s[1] == "ingested" for s in alone):
            for t, (_n, only_a, only_b) in _differences(tmp / "together", tmp / "alone").items():
                assert (only_a, only_b) == (0, 0), t
            assert not list((tmp / "together" / ".staging").iterdir())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
