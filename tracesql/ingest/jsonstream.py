"""Streaming access to a Chrome-trace JSON document without parsing it in Python.

The document is read as decompressed byte blocks. ``TraceSplitter`` finds the ``traceEvents`` array and
cuts its contents into chunks of whole events (``{...},{...},...``) that DuckDB's JSON reader parses.
Header fields before and after ``traceEvents`` are small and are parsed with orjson.

Chunk boundaries are found with a fast heuristic (the last ``}`` ``,`` ``{`` in the tail of a block).
A wrong guess (inside a string or a nested list) always makes the chunk invalid JSON, so the parser rejects
it and the caller falls back to ``exact_spans``, a bracket/string scanner that is slow but never wrong.
"""
from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import orjson
import xxhash

from tracesql.errors import TraceError
from tracesql.ingest.xplane import is_xplane, trace_json

GZIP_MAGIC = b"\x1f\x8b"
BLOCK_SIZE = 4 << 20
# The last TAIL_KEEP bytes read are never cut by the heuristic: the fields after traceEvents (which may hold
# lists of objects, i.e. `}` `,` `{` patterns) lie there, and they are scanned exactly at the end of the file.
TAIL_KEEP = 1 << 20

# `}` `,` `{` with optional whitespace: a likely boundary between two events of the array.
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
# What the exact scanners stop at: the quote that opens a string, and brackets (and, in the header, `:` `,`).
# Strings are skipped by ``string_end`` (a search for the next quote), never matched by a regex: a pattern such as
# `"(?:[^"\\]|\\.)*"` costs Python's `re` about 128 bytes of memory per character of the string.
_STRUCT = re.compile(rb'["{}\[\]]')
_HEADER_STRUCT = re.compile(rb'["{}\[\]:,]')
_NON_WS = re.compile(rb"[^ \t\r\n]")
_WS = b" \t\r\n"


try:  # a possessive repeat (Python 3.11+) keeps no state per character and never backtracks
    _STR_BODY: re.Pattern | None = re.compile(rb'(?:[^"\\]+|\\.)*+', re.DOTALL)
except re.error:  # Python 3.10: the quote search below
    _STR_BODY = None


def string_scan(data: bytes | bytearray, pos: int) -> tuple[bool, int]:
    """Scan the text of a JSON string from ``pos`` (just after its opening quote, or a position an earlier scan
    returned): (True, index of the closing quote), or (False, where to go on once ``data`` has grown) when data ends
    inside the string. Linear in the string's length, constant memory."""
    if _STR_BODY is not None:
        m = _STR_BODY.match(data, pos)
        assert m is not None
        end = m.end()
        return (True, end) if end < len(data) and data[end] == 0x22 else (False, end)
    q = pos
    while True:  # each quote found; the backslashes before it (an odd number escapes it) counted 64 at a time
        q = data.find(b'"', q)
        if q < 0:
            # go on from the end, or from a backslash run at the end (what it escapes is not known yet)
            k = len(data)
            while k > pos and data[k - 1] == 0x5C:
                k -= 1
            return False, k
        k = q
        n = 0
        while k > pos and data[k - 1] == 0x5C:
            lo = max(pos, k - 64)
            seg = bytes(data[lo:k])
            run = len(seg) - len(seg.rstrip(b"\\"))
            n += run
            if run < len(seg):
                break
            k = lo
        if n % 2 == 0:
            return True, q
        q += 1


def string_end(data: bytes | bytearray, start: int) -> int:
    """Index of the quote that closes the JSON string whose text starts at ``start`` (just after its opening
    quote), or -1 when ``data`` ends inside the string (``string_scan``)."""
    closed, q = string_scan(data, start)
    return q if closed else -1


def _tokens(data: bytes, start: int = 0, pattern: re.Pattern = _STRUCT) -> Iterator[tuple[int, int, int]]:
    """(position, byte, end) of each string and structural character of ``data`` from ``start``: a string is one
    token from its opening quote to just after its closing one (to the end of data when it is cut there)."""
    n = len(data)
    search = pattern.search
    i = start
    while True:
        m = search(data, i)
        if m is None:
            return
        p = m.start()
        c = data[p]
        if c == 0x22:
            q = string_end(data, p + 1)
            if q < 0:
                yield p, c, n
                return
            yield p, c, q + 1
            i = q + 1
        else:
            yield p, c, p + 1
            i = p + 1


def is_gzip(path: str) -> bool:
    """Whether the file starts with the gzip magic number (the name does not count)."""
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def content_hasher():
    """A new hash object for the content hash of a trace file: XXH3-128 of its raw bytes (it identifies files
    and names traces; it needs no cryptographic strength)."""
    return xxhash.xxh3_128()


class ByteSource:
    """Yields the decompressed bytes of a trace file in blocks and hashes the raw file bytes.

    gzip is recognised by its magic number, not the file name; concatenated members are read one after the other
    (NUL padding between them is skipped). A gzip stream that ends early sets ``gzip_truncated`` (the bytes
    decompressed so far are still yielded: nothing says they are wrong). Corrupt gzip data (a structure error or a
    member whose CRC does not match), and data after the last member that is not gzip, raise TraceError, unless
    ``salvage``: then the file is first decompressed once without keeping anything, to find the first error, and
    only the members before the damaged one are yielded (a member's text is known intact only once its CRC is
    checked at its end); ``gzip_truncated`` and ``gzip_error`` say what was wrong and where, and ``gzip_trailing``
    tells data after the gzip stream (the text before it complete and verified). The whole file is still hashed.
    """

    def __init__(self, path: str, block_size: int = BLOCK_SIZE, salvage: bool = False):
        self.path = str(path)
        self.block_size = block_size
        self.salvage = salvage
        self.hash = content_hasher()
        self.raw_bytes = 0
        self.json_bytes = 0
        self.gzip_truncated = False
        self.gzip_trailing = False
        self.gzip_error: str | None = None
        self.compressed = is_gzip(self.path)

    def _members(self, f, on_raw=None) -> Iterator[tuple[str, int, bytes | str]]:
        """Decompress the gzip file ``f``: ('data', member start in the JSON text, bytes), and at the end one of
        ('end', ...), ('cut', ...) (the stream ends inside a member), ('corrupt', start of the damaged member in the
        JSON text, zlib's message) or ('trailing', raw offset, message) (data after a member that is not gzip).
        ``on_raw`` sees every raw block read."""
        d = zlib.decompressobj(31)
        fed = False  # whether the current member has received any input
        member_start = 0
        out_total = 0
        raw_pos = 0
        consumed = 0  # raw bytes of the file before the current member's first byte
        pending = b""
        while True:
            if not pending:
                pending = f.read(self.block_size)
                if not pending:
                    break
                if on_raw is not None:
                    on_raw(pending)
                raw_pos += len(pending)
            raw, pending = pending, b""
            while raw:
                if not fed and out_total and len(raw) >= 2 and not raw.startswith(GZIP_MAGIC):
                    # after a whole member, something that is not one: data after the stream
                    yield ("trailing", consumed, "data after the end of the gzip stream is not gzip")
                    return
                fed = True
                try:
                    out = d.decompress(raw, self.block_size)
                except zlib.error as e:
                    yield ("corrupt", member_start, f"corrupt gzip data ({e})")
                    return
                if out:
                    out_total += len(out)
                    yield ("data", member_start, out)
                if d.eof:  # end of one member; a concatenated member may follow
                    rest = d.unused_data
                    consumed = raw_pos - len(pending) - len(rest)
                    stripped = rest.lstrip(b"\x00")
                    consumed += len(rest) - len(stripped)
                    raw = stripped
                    d = zlib.decompressobj(31)
                    fed = False
                    member_start = out_total
                else:
                    raw = d.unconsumed_tail
        if fed and not d.eof:
            out = d.flush()
            if out:
                yield ("data", member_start, out)
            yield ("cut", member_start, "")
            return
        yield ("end", out_total, "")

    def blocks(self) -> Iterator[bytes]:
        if is_xplane(self.path):  # an XSpace protobuf: read whole and decoded into its trace JSON (ingest/xplane)
            with open(self.path, "rb") as f:
                raw = f.read()
            self.hash.update(raw)
            self.raw_bytes = len(raw)
            text = trace_json(self.path, raw)
            del raw
            for i in range(0, len(text), self.block_size):
                block = text[i:i + self.block_size]
                self.json_bytes += len(block)
                yield block
            return
        with open(self.path, "rb") as f:
            if not self.compressed:
                while True:
                    raw = f.read(self.block_size)
                    if not raw:
                        return
                    self.hash.update(raw)
                    self.raw_bytes += len(raw)
                    self.json_bytes += len(raw)
                    yield raw
            limit = None  # the JSON text after this offset is not yielded
            first_error: tuple[str, int, bytes | str] | None = None
            if self.salvage:  # the first pass: where the verified text ends
                for kind, at, what in self._members(f):
                    if kind in ("corrupt", "trailing"):
                        limit, first_error = (at if kind == "corrupt" else None), (kind, at, what)
                        break
                f.seek(0)

            def on_raw(raw: bytes) -> None:
                self.hash.update(raw)
                self.raw_bytes += len(raw)

            for kind, at, what in self._members(f, on_raw):
                if kind == "data":
                    assert isinstance(what, bytes)
                    if limit is not None and self.json_bytes + len(what) > limit:
                        what = what[:limit - self.json_bytes]
                    if what:
                        self.json_bytes += len(what)
                        yield what
                    if limit is not None and self.json_bytes >= limit:
                        break
                    continue
                assert isinstance(what, str)
                if kind == "cut":
                    self.gzip_truncated = True
                elif kind == "corrupt":
                    if not self.salvage:
                        if at == 0:  # nothing before it could be kept
                            raise TraceError(self.path, f"{what} in its first gzip member, whose text cannot be "
                                             "verified", offset=at)
                        raise TraceError(self.path, f"{what}; rerun with --salvage to keep the events of the gzip "
                                         "members before it", offset=at)
                elif kind == "trailing":
                    if not self.salvage:
                        raise TraceError(self.path, f"{what} (at byte {at:,} of the file); rerun with --salvage to "
                                         "ingest the text before it")
                break
            if self.salvage and first_error is not None:
                kind, at, what = first_error
                assert isinstance(what, str)
                self.gzip_truncated = True
                if kind == "trailing":
                    self.gzip_trailing = True
                    self.gzip_error = f"{what}, at byte {at:,} of the file"
                else:
                    self.gzip_error = (f"{what} in the gzip member that starts at byte {at:,} of the JSON text; "
                                       "its text is not kept (it cannot be verified)")
            while True:  # the content hash covers the whole file
                raw = f.read(self.block_size)
                if not raw:
                    return
                on_raw(raw)

    @property
    def content_hash(self) -> str:
        return self.hash.hexdigest()


class EventChunk:
    """Whole events ``{..},{..}`` (no enclosing brackets); ``offset`` is the byte offset of ``data[0]``.

    The text is held as the pieces it was read in (``pieces``), so that a chunk written to a file is never
    copied into one string; ``data`` joins them on first use."""

    __slots__ = ("offset", "pieces")

    def __init__(self, data: bytes | list[bytes], offset: int):
        self.pieces = data if isinstance(data, list) else [data]
        self.offset = offset

    @property
    def data(self) -> bytes:
        if len(self.pieces) != 1:
            self.pieces = [b"".join(self.pieces)]
        return self.pieces[0]


@dataclass
class Span:
    start: int
    end: int


@dataclass
class ExactScan:
    """Result of ``exact_spans``: each element of the array, where it closes, and what went wrong."""

    spans: list[Span] = field(default_factory=list)
    array_end: int | None = None  # index of the `]` that closes the array, if seen
    incomplete_from: int | None = None  # start of an element the data ends inside of
    garbage: list[tuple[int, bytes]] = field(default_factory=list)  # (offset, text) of elements that are not
    #                                                                 objects or lists: strings, numbers, words
    separators: list[tuple[int, str]] = field(default_factory=list)  # (offset, problem): missing or extra commas


# Between structural tokens at depth 0: commas and bare words (numbers, true/false/null, garbage).
_SPACE_RUN = re.compile(rb"\s*")
_GAP_WORD = re.compile(rb"[^,\s]+")


def exact_spans(data: bytes, start: int = 0) -> ExactScan:
    """Scan ``data`` (positioned inside the events array, between elements) exactly.

    Strings are skipped whole, so brackets inside names never confuse it. Each element that is not an
    object or a list (a string, a number, a bare word) is reported once in ``garbage``, except ``null``,
    which is a span like ``{}``; a missing comma between two elements, or a comma too many, is reported
    in ``separators``.
    """
    res = ExactScan()
    depth = 0
    ev_start = 0
    prev_end = start
    due = True  # an element is due: at the start, or after a comma
    comma_at: int | None = None  # the last comma, while no element has followed it

    def element(p: int) -> None:
        nonlocal due, comma_at
        if not due:
            res.separators.append((p, "missing comma between events"))
        due, comma_at = False, None

    def gap(lo: int, hi: int) -> None:
        nonlocal due, comma_at
        i = lo
        while True:
            sp = _SPACE_RUN.match(data, i, hi)  # whitespace skipped in one step
            assert sp is not None
            i = sp.end()
            if i >= hi:
                return
            if data[i] == 0x2C:
                if due:
                    res.separators.append((i, "extra comma between events"))
                due, comma_at = True, i
                i += 1
                continue
            g = _GAP_WORD.match(data, i, hi)
            assert g is not None
            element(i)
            if g.group() == b"null":  # read like {} (an event with no fields), as the fast path does
                res.spans.append(Span(i, g.end()))
            else:
                res.garbage.append((i, data[i:min(g.end(), i + 80)]))
            i = g.end()

    for p, c, tok_end in _tokens(data, start):
        if c == 0x22:  # string
            if depth == 0:
                gap(prev_end, p)
                element(p)
                res.garbage.append((p, data[p:min(tok_end, p + 80)]))
                prev_end = tok_end
            continue
        if c == 0x7B or c == 0x5B:  # { [
            if depth == 0:
                gap(prev_end, p)
                element(p)
                ev_start = p
            depth += 1
        else:  # } ]
            depth -= 1
            if depth == 0:
                res.spans.append(Span(ev_start, tok_end))
                prev_end = tok_end
            elif depth < 0:
                gap(prev_end, p)
                if comma_at is not None:
                    res.separators.append((comma_at, "extra comma before the end of traceEvents"))
                res.array_end = p
                return res
    if depth > 0:
        res.incomplete_from = ev_start
    else:
        gap(prev_end, len(data))
        if comma_at is not None:
            res.separators.append((comma_at, "extra comma after the last event"))
    return res


def _last_boundary(data: bytes, window: int = 1 << 18, end: int | None = None, start: int = 0):
    """Position of the last `}` and of the `{` after it in a `}` `,` `{` pattern near ``end`` (default: the end
    of data); the pattern lies wholly in ``data[start:end]``. The search goes back from ``end`` in growing windows:
    time linear in what it searches."""
    n = len(data) if end is None else end
    hi = n
    while hi > start:
        lo = max(start, hi - window)
        last = None
        # a pattern that starts in this window may end in the window searched before it (<= n)
        for m in _BOUNDARY.finditer(data, lo, n):
            if m.start() >= hi:
                break
            last = m
        if last is not None:
            return last.start(), last.end() - 1
        hi = lo
        window *= 4
    return None


def _find_cut(parts: list[bytes], lo: int, hi: int) -> tuple[int, int] | None:
    """The last `}` `,` `{` boundary of the text ``parts`` joined, as positions in that text, whose `}` is at ``lo``
    or after and which ends before ``hi``; searched part by part from the end, and across the seam between two
    parts within 4 KB of it (a boundary with more whitespace than that across a seam is not found: another is).
    Nothing is joined but the seams."""
    offs = []
    o = 0
    for pt in parts:
        offs.append(o)
        o += len(pt)
    for k in range(len(parts) - 1, -1, -1):
        a = offs[k]
        b = a + len(parts[k])
        if b <= lo:
            return None
        if a < hi:
            cut = _last_boundary(parts[k], end=min(hi, b) - a, start=max(lo, a) - a)
            if cut is not None:
                return cut[0] + a, cut[1] + a
        if k > 0 and a > lo and a - 4096 < hi:  # the seam between parts k-1 and k
            s0 = max(lo, a - 4096, offs[k - 1])
            seam = b"".join(_slice(parts, offs, s0, min(hi, a + 4096)))
            cut = _last_boundary(seam)
            if cut is not None and cut[1] + s0 >= a:  # it crosses the seam (else it lies in part k-1)
                return cut[0] + s0, cut[1] + s0
    return None


# a run of backslashes (from its start) before a quote: the quote is escaped when the run is odd
_BS_QUOTE = re.compile(rb'(?<!\\)(\\+)"')


def _quote_parity(pieces: list[bytes]) -> int:
    """The number of unescaped quotes in the text ``pieces`` joined, modulo 2, for a text whose first byte is not
    escaped: 1 when a text that starts outside every string ends inside one. Counted by ``bytes.count`` (a run of
    backslashes makes it look at each run before a quote)."""
    seams = any(a[-1:] == b"\\" and b[:1] in (b'"', b"\\") for a, b in zip(pieces, pieces[1:], strict=False))
    if seams:
        pieces = [b"".join(pieces)]
    n = 0
    for pt in pieces:
        n += pt.count(b'"')
        if b"\\\\" in pt:
            n -= sum(1 for m in _BS_QUOTE.finditer(pt) if len(m.group(1)) % 2)
        else:
            n -= pt.count(b'\\"')
    return n % 2


# the bytes the quick counts look at: everything else is deleted first (one pass; the counts then run over what
# is left, some 15 % of a trace's text)
_COUNTED = b'"{}[]\\'
_NOT_COUNTED = bytes(b for b in range(256) if b not in _COUNTED)


def _counts(pieces: list[bytes]) -> tuple[int, int]:
    """(``_quote_parity``, bracket balance) of the text ``pieces`` joined: 1 when a text that starts outside every
    string ends inside one, and the brackets opened minus those closed, strings included (a cut where the two are
    0 is taken; strings holding unbalanced brackets make the exact scan run)."""
    parity = balance = 0
    escapes = False
    for pt in pieces:
        kept = pt.translate(None, _NOT_COUNTED)
        balance += kept.count(b"{") + kept.count(b"[") - kept.count(b"}") - kept.count(b"]")
        if b"\\" in kept:
            escapes = True
        else:
            parity += kept.count(b'"')
    return (_quote_parity(pieces) if escapes else parity % 2), balance


class _ExactCuts:
    """The exact alternative to the quick cut search, for texts that defeat it (strings holding brackets or `}` `,`
    `{` at every turn, lists of objects inside events): a bracket-and-string scan of the events' text, resumed
    where it stopped, which remembers the last boundary between two elements of the array. Linear in the text."""

    def __init__(self) -> None:
        self.pos = 0  # scanned up to here (positions in the joined parts)
        self.depth = 0
        self.in_str = False
        self.esc = False  # the string's next byte is escaped (a backslash ended the last part)
        self.prev_end: int | None = None  # just after the last element that closed at depth 0
        self.best: tuple[int, int] | None = None  # (its `}`, the `{` of the element after it)
        self.done = False  # the array closed

    def feed(self, parts: list[bytes], offs: list[int], to: int) -> None:
        """Scan the text of ``parts`` from ``pos`` up to ``to`` (a string may be followed past it)."""
        for data, a in zip(parts, offs, strict=True):
            if self.done or self.pos >= to:
                return
            b = a + len(data)
            if b <= self.pos:
                continue
            i = self.pos - a
            lim = min(len(data), to - a)
            while i < lim:
                if self.in_str:
                    if self.esc:
                        self.esc = False
                        i += 1
                        continue
                    closed, q = string_scan(data, i)
                    if closed:
                        self.in_str = False
                        i = q + 1
                    else:
                        self.esc = (len(data) - q) % 2 == 1
                        i = len(data)
                    continue
                m = _STRUCT.search(data, i, lim)
                if m is None:
                    i = lim
                    break
                p = m.start()
                c = data[p]
                i = p + 1
                if c == 0x22:
                    self.in_str = True
                elif c in (0x7B, 0x5B):
                    if self.depth == 0 and self.prev_end is not None:
                        self.best = (self.prev_end - 1, a + p)
                    self.depth += 1
                else:
                    self.depth -= 1
                    if self.depth == 0:
                        self.prev_end = a + p + 1
                    elif self.depth < 0:
                        self.done = True
                        break
            self.pos = a + i

    def rebase(self, shift: int) -> None:
        """The text before ``shift`` was cut off (at a boundary: depth 0, outside strings)."""
        self.pos -= shift
        self.prev_end = None
        self.best = None


def _rstrip_end(data: bytes, end: int) -> int:
    """The index after the last byte before ``end`` that is not whitespace (``len(data[:end].rstrip())`` without
    copying data[:end]: the whitespace is stripped 64 KB at a time)."""
    while end > 0:
        lo = max(0, end - (1 << 16))
        seg = data[lo:end].rstrip(_WS)
        if seg:
            return lo + len(seg)
        end = lo
    return 0


def _slice(parts: list[bytes], offs: list[int], lo: int, hi: int) -> list[bytes]:
    """The pieces of ``parts`` (starting at ``offs``) that make the joined text's [lo, hi)."""
    out = []
    for pt, a in zip(parts, offs, strict=True):
        b = a + len(pt)
        if b <= lo or a >= hi:
            continue
        out.append(pt if lo <= a and b <= hi else pt[max(lo, a) - a:min(hi, b) - a])
    return out


class _HeaderScan:
    """The walk of the top-level object up to the key ``traceEvents``, resumable: ``scan(buf)`` goes on from where
    the previous call on the same (grown) buffer stopped. Returns ('more',) when buf ends too early, ('end', offset
    of the `}`) when the object closes without traceEvents, else ('ok', key_start, value_pos)."""

    def __init__(self, pos: int):
        self.i = pos  # next position to scan
        self.depth = 0
        self.last_str: tuple[int, int] | None = None  # the last string at depth 1, while it may be a key
        self.in_str: int | None = None  # start of a string the buffer ended inside of
        self.str_resume = 0
        self.colon: int | None = None  # after the key traceEvents and its colon: where the value's search goes on

    def scan(self, buf: bytearray):
        if self.colon is not None:
            return self._value(buf)
        if self.in_str is not None:
            closed, q = string_scan(buf, self.str_resume)
            if not closed:
                self.str_resume = q
                return ("more",)
            self.last_str = (self.in_str, q + 1) if self.depth == 1 else None
            self.in_str = None
            self.i = q + 1
        search = _HEADER_STRUCT.search
        while True:
            m = search(buf, self.i)
            if m is None:
                self.i = len(buf)
                return ("more",)
            p = m.start()
            c = buf[p]
            self.i = p + 1
            if c == 0x22:
                closed, q = string_scan(buf, p + 1)
                if not closed:
                    self.in_str, self.str_resume = p, q
                    return ("more",)
                self.last_str = (p, q + 1) if self.depth == 1 else None
                self.i = q + 1
            elif c == 0x3A:  # ':'
                if (self.depth == 1 and self.last_str is not None
                        and buf[self.last_str[0]:self.last_str[1]] == b'"traceEvents"'):
                    self.colon = p + 1
                    return self._value(buf)
                self.last_str = None
            elif c == 0x2C:  # ','
                self.last_str = None
            elif c in (0x7B, 0x5B):
                self.depth += 1
                self.last_str = None
            else:
                self.depth -= 1
                self.last_str = None
                if self.depth == 0:
                    return ("end", p)

    def _value(self, buf: bytearray):
        assert self.colon is not None and self.last_str is not None
        m = _NON_WS.search(buf, self.colon)
        if m is None:
            self.colon = len(buf)
            return ("more",)
        return ("ok", self.last_str[0], m.start())


class TraceSplitter:
    """Splits the ``traceEvents`` array of a trace document into ``EventChunk``s.

    After ``chunks()`` is exhausted: ``header`` holds every top-level field except ``traceEvents``,
    ``truncated`` tells whether the document ended early (only possible with ``salvage``), and
    ``dropped_tail_bytes`` how many bytes of an incomplete last event were dropped.
    """

    def __init__(self, source: ByteSource, chunk_size: int = 32 << 20, salvage: bool = False):
        self.source = source
        self.path = source.path
        self.chunk_size = chunk_size
        self.salvage = salvage
        self.header: dict = {}
        self.top_level_array = False
        self.truncated = False
        self.dropped_tail_bytes = 0
        self.tail_offset: int | None = None
        self.events_offset: int | None = None  # byte offset just after the `[` of traceEvents
        self.tail_detail: str | None = None  # what a salvaged truncated file lost (None: an incomplete last event)
        self.ignored: list[tuple[int, str, str]] = []  # (offset, kind, detail): input found and not read

    # ---- phase 1: the header up to `"traceEvents": [` -------------------------------------------
    def _read_header(self, blocks: Iterator[bytes]) -> tuple[bytes, int]:
        """Returns (bytes after the `[` of traceEvents, their offset in the document).

        The header is read into one growing buffer and scanned once, from where the last block ended (a string
        cut by the end of a block is resumed, not scanned again): time linear in its size, memory its size."""
        buf = bytearray()
        lead = 0  # leading whitespace, not kept
        while True:
            blk = next(blocks, None)
            if blk is None:
                if self.source.gzip_error:
                    raise TraceError(self.path, f"{self.source.gzip_error}: no JSON text", offset=0)
                if self.source.gzip_truncated:
                    raise TraceError(self.path, "gzip stream ends early and holds no JSON", offset=0)
                raise TraceError(self.path, "empty file: no JSON text", offset=0)
            m = _NON_WS.search(blk)
            if m is not None:
                buf += blk
                pos = m.start()
                break
            lead += len(blk)
        while len(buf) < pos + 3 and b"\xef\xbb\xbf".startswith(bytes(buf[pos:])):
            blk = next(blocks, None)
            if blk is None:
                break
            buf += blk
        if buf.startswith(b"\xef\xbb\xbf", pos):  # UTF-8 byte order mark
            pos += 3
            while True:
                m = _NON_WS.search(buf, pos)
                if m is not None:
                    pos = m.start()
                    break
                blk = next(blocks, None)
                if blk is None:
                    raise TraceError(self.path, "empty file: no JSON text after the byte order mark",
                                     offset=lead + len(buf))
                pos = len(buf)
                buf += blk
        first = buf[pos]
        if first == 0x5B:  # a bare array of events (Chrome "JSON Array Format")
            self.top_level_array = True
            return bytes(buf[pos + 1:]), lead + pos + 1
        if first != 0x7B:
            start = bytes(buf[pos:pos + 16]).decode("utf-8", "replace")  # the text, control characters escaped
            raise TraceError(self.path, f"not JSON: starts with {start!r}", offset=lead + pos)
        # Walk the top-level object until the member "traceEvents". A string token at depth 1 directly
        # followed by ':' is a key. A string cut by the end of the buffer means: read more.
        scan = _HeaderScan(pos)
        while True:
            found = scan.scan(buf)
            if found[0] == "end":
                raise TraceError(self.path, "no traceEvents array in the document", offset=lead + found[1])
            if found[0] == "more":
                blk = next(blocks, None)
                if blk is None:
                    raise TraceError(self.path, "JSON ends in the header before traceEvents", offset=lead + len(buf))
                buf += blk
                continue
            _, key_start, value_pos = found
            if buf[value_pos] != 0x5B:
                raise TraceError(self.path, "traceEvents is not a list", offset=lead + value_pos)
            self._parse_members(bytes(buf[pos + 1:key_start]), lead + pos + 1)
            return bytes(buf[value_pos + 1:]), lead + value_pos + 1

    def _parse_members(self, text: bytes, offset: int, where: str = "header") -> None:
        text = text.strip(_WS).rstrip(b",").strip(_WS)
        if text.startswith(b","):
            text = text[1:]
        if not text:
            return
        try:
            members = orjson.loads(b"{" + text + b"}")
        except orjson.JSONDecodeError as e:
            raise TraceError(self.path, f"malformed JSON in the {where}: {e}", offset=offset) from None
        if where != "header" and "traceEvents" in members:  # a second traceEvents key: not read, recorded
            other = members.pop("traceEvents")
            n = f"{len(other):,} elements" if isinstance(other, list) else f"a JSON {type(other).__name__}"
            self.ignored.append((offset, "ignored_second_trace_events",
                                 f"a second traceEvents key after the first ({n}); only the first is read"))
        self.header.update(members)

    # ---- phase 2: the events ------------------------------------------------------------------
    def chunks(self) -> Iterator[EventChunk]:
        blocks = self.source.blocks()
        rest, base = self._read_header(blocks)
        self.events_offset = base
        parts = [rest]
        size = len(rest)
        searched = 0  # the text before this offset holds no boundary the cut could use (one huge event)
        # the quick counts of the text before `at`: whether it ends inside a string, and its brackets' balance
        at, parity, balance = 0, 0, 0
        exact: _ExactCuts | None = None  # once the quick search fails, the exact scan cuts the rest of the file
        for blk in blocks:
            parts.append(blk)
            size += len(blk)
            if size < self.chunk_size or size <= TAIL_KEEP:
                continue
            hi = size - TAIL_KEEP
            offs = [0]
            for pt in parts[:-1]:
                offs.append(offs[-1] + len(pt))
            if exact is None:
                cut = _find_cut(parts, max(0, searched - 64), hi)
                # a `}` `,` `{` inside a string (a name holding it) or inside an event (a list of objects in its
                # args) is no cut: the quotes and brackets before it are counted (from `at`, where the counts stand)
                tries = 0
                while cut is not None:
                    if at > cut[0]:
                        at, parity, balance = 0, 0, 0
                    qp, bal = _counts(_slice(parts, offs, at, cut[0] + 1))
                    if qp == parity and bal + balance == 0:
                        break
                    tries += 1
                    if tries == 8:  # the quick search is fooled: the exact scan takes over
                        exact = _ExactCuts()
                        cut = None
                        break
                    cut = _find_cut(parts, max(0, searched - 64), cut[0])
                # no cut: the counts up to hi, or to a point before it that no backslash escapes
                mark = hi if cut is None else at
                while mark > at and _slice(parts, offs, mark - 1, mark) == [b"\\"]:
                    mark -= 1
                if mark > at:
                    qp, bal = _counts(_slice(parts, offs, at, mark))
                    parity ^= qp
                    balance += bal
                    at = mark
            if exact is not None:
                exact.feed(parts, offs, hi)
                cut = exact.best
            if cut is None:  # one huge event (or much whitespace): keep reading, and search only what is new
                searched = hi
                continue
            close, open_ = cut
            yield EventChunk(_slice(parts, offs, 0, close + 1), base)
            parts = _slice(parts, offs, open_, size)
            size -= open_
            base += open_
            searched = hi - open_
            at, parity, balance = 0, 0, 0  # the text from the cut on starts outside strings, at depth 0
            if exact is not None:
                exact.rebase(open_)
        self._exact_tail = exact is not None
        box = [parts[0] if len(parts) == 1 else b"".join(parts)]
        del parts
        yield from self._tail(box, base)  # the only reference to the text: _tail lets it go before its last chunk

    def _tail(self, box: list[bytes], base: int) -> Iterator[EventChunk]:
        """The last piece (``box`` holds it): events, the `]` closing the array, and the trailing header fields.

        All but the last ~1 MB is cut off by the usual heuristic; the rest is scanned exactly, which
        finds the closing `]` even when the trailing fields hold lists of objects.
        """
        data = box.pop()
        keep = TAIL_KEEP
        if len(data) > 2 * keep and not getattr(self, "_exact_tail", False):
            cut = _last_boundary(data, end=len(data) - keep)
            for _ in range(8):  # not a `}` `,` `{` inside a string or an event (see chunks)
                if cut is None:
                    break
                if _counts([data[:cut[0] + 1]]) == (0, 0):
                    break
                cut = _last_boundary(data, end=cut[0])
            else:
                cut = None
            if cut is not None:
                close, open_ = cut
                yield EventChunk(data[:close + 1], base)
                data = data[open_:]
                base += open_
        end = self._valid_array_end(data)
        if end is not None:
            self._parse_trailer(data[end + 1:], base + end + 1)
            events = data[:_rstrip_end(data, end)]
            del data
            if events:
                yield EventChunk(events, base)
            return
        scan = exact_spans(data)
        if scan.array_end is not None:
            end = scan.array_end
            if data[end] != 0x5D:  # a `}` closing more than was opened, before the end of traceEvents
                raise TraceError(self.path, "malformed JSON: a '}' that closes nothing", offset=base + end)
            self._parse_trailer(data[end + 1:], base + end + 1)
            events = data[:_rstrip_end(data, end)]
            del data
            if events:
                yield EventChunk(events, base)
            return
        # The document ends inside traceEvents: truncated.
        cut_at = scan.spans[-1].end if scan.spans else 0
        gz = " (its gzip stream is cut short too)" if self.source.gzip_truncated else ""
        if not self.salvage:
            raise TraceError(
                self.path,
                f"truncated trace: the JSON ends inside traceEvents{gz}; "
                "rerun with --salvage to keep the complete events",
                offset=base + len(data),
            )
        self.truncated = True
        self.dropped_tail_bytes = len(data) - cut_at
        self.tail_offset = base + cut_at
        if cut_at:
            events = data[:cut_at]
            del data
            yield EventChunk(events, base)

    def _valid_array_end(self, data: bytes) -> int | None:
        """The `]` that closes traceEvents in ``data`` (the last piece of the document), when the piece is valid
        JSON on both sides of it: the events before it parse as the elements of an array, and what follows is
        the rest of the document (blank after a top-level array; else `, members }` of the top-level object).
        Such a `]` is the only one that can close the array; None when there is none (a truncated or damaged
        piece, or values orjson does not read, such as NaN): the exact scan then finds out what is wrong.
        Candidates are tried from the end; orjson parses the small trailer first and the events only then."""
        p = len(data)
        for _ in range(64):
            p = data.rfind(b"]", 0, p)
            if p < 0 or len(data) - p > 4 * TAIL_KEEP or p > 16 * TAIL_KEEP:
                return None  # a long trailer, or a huge last event (parsed here as a copy), is left to the exact scan
            rest = data[p + 1:].strip(_WS)
            if self.top_level_array:
                if rest:
                    return None
            else:
                if not rest.endswith(b"}"):
                    return None
                members = rest[:-1].strip(_WS)
                if members:
                    if not members.startswith(b","):
                        continue
                    try:
                        orjson.loads(b"{" + members[1:] + b"}")
                    except orjson.JSONDecodeError:
                        continue
            try:
                orjson.loads(b"[" + data[:p] + b"]")
            except orjson.JSONDecodeError:
                if self.top_level_array:
                    return None
                continue
            return p
        return None

    def _parse_trailer(self, trailer: bytes, offset: int) -> None:
        lead = len(trailer) - len(trailer.lstrip(_WS))
        if self.top_level_array:
            if trailer.strip(_WS):
                raise TraceError(self.path, "unexpected text after the events array", offset=offset + lead)
            return
        # the `}` that closes the top-level object: the first bracket that closes more than it opened
        depth = 0
        end = None
        for p, c, _ in _tokens(trailer):
            if c == 0x22:
                continue
            depth += 1 if c in (0x7B, 0x5B) else -1
            if depth < 0:
                end = p
                break
        if end is None:
            if not self.salvage:
                raise TraceError(self.path, "JSON ends before the top-level object closes (after traceEvents); "
                                 "rerun with --salvage to keep the events", offset=offset + len(trailer))
            # every event is complete: keep them, and the fields after traceEvents if they are whole
            self.truncated = True
            self.tail_offset = offset + len(trailer)
            try:
                self._parse_members(trailer, offset, where="fields after traceEvents")
                self.tail_detail = "file ends before the top-level object closes (after traceEvents); all events kept"
            except TraceError:
                self.dropped_tail_bytes = len(trailer)
                self.tail_offset = offset
                self.tail_detail = (f"file ends in the fields after traceEvents: {len(trailer)} bytes of them "
                                    "dropped; all events kept")
            return
        if trailer[end] != 0x7D:
            raise TraceError(self.path, "malformed JSON: a ']' where the top-level object should close",
                             offset=offset + end)
        rest = trailer[end + 1:]
        if rest.strip(_WS):
            raise TraceError(self.path, "unexpected text after the end of the JSON document",
                             offset=offset + end + 1 + len(rest) - len(rest.lstrip(_WS)))
        self._parse_members(trailer[:end], offset, where="fields after traceEvents")
