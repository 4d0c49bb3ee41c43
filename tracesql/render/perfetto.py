"""Perfetto's protobuf trace format (TrackEvent) written from Chrome trace events.

The events come from the export's SQL (sql/export/track_order.sql: export_track_events), metadata first, then
track by track (pid, tid) in time order. The packets are built with the message types of the ``perfetto``
package (``perfetto.protos``, an optional extra: ``pip install 'tracesql[perfetto]'``) and streamed one by one
through its ``StreamingTraceProtoBuilder``, so memory holds one open call stack per track, not the trace.

How the JSON maps (docs/export.md):

- each process (pid) is a process track, each (pid, tid) a thread track, named by the ``process_name`` and
  ``thread_name`` metadata; ``process_labels`` go to the process, the sort indices to ``sibling_order_rank``;
- a complete event (ph X) is a slice: a begin and an end on its thread's track. Slices that overlap without
  nesting (the protobuf format needs strict nesting on a track) go to overlap tracks under the thread,
  ``<thread> · overlap k``; B and E events are slices too;
- instants (ph i, I) by their scope: on the thread, the process, or a global track;
- counters (ph C): a counter track per (process, name, argument), named ``<name> <argument>`` as Perfetto's JSON
  importer names them;
- flow events (ph s, t, f) become flow ids on the slices they bind to: the enclosing slice on their thread at
  their time (``f`` without ``"bp": "e"``: the next slice to start there), ``f`` ending the flow;
- args, and any top-level member the format has no field for, become debug annotations (a list or an object as
  its JSON text, which Perfetto reads into nested args);
- names, categories and annotation names are interned.

What has no place in the format is counted (``Written.skipped``, by phase), never dropped silently: among it,
events before time 0, which the format's unsigned timestamps cannot hold. Times are the exported nanoseconds.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any

import orjson
import xxhash

SEQUENCE_ID = 1
_INT = re.compile(r"-?[0-9]{1,10}")
_STANDARD = frozenset(("ph", "cat", "name", "pid", "tid", "ts", "dur", "args", "id", "bp", "s", "id2"))
_SLICE_PHASES = frozenset("XBE")
_INSTANT_PHASES = frozenset("iIR")
_FLOW_PHASES = frozenset("stf")


def _uuid(*parts: object) -> int:
    """A stable 63-bit track uuid for a key."""
    return xxhash.xxh64_intdigest("\x1f".join(map(str, parts)).encode()) >> 1


@dataclass
class Written:
    """What a protobuf export wrote: packets, slices, instants, counter values, flows (arrows) and the tracks;
    slices moved to overlap tracks; events with no place in the format by phase, and flow points with no slice to
    bind to."""

    packets: int = 0
    slices: int = 0
    instants: int = 0
    counter_values: int = 0
    flows: int = 0
    tracks: int = 0
    overlapped: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    unbound_flow_points: int = 0


@dataclass
class _Slice:
    ts: int
    end: int | None          # None: a B event not ended yet
    name: str | None
    cat: str | None
    ann: list[tuple[str, Any]]
    level: int = 0
    instant: bool = False
    flow_ids: list[int] = field(default_factory=list)
    terminating: list[int] = field(default_factory=list)


class _Track:
    """One thread's events: the stacks of open slices (level 0 the thread, k an overlap track), the slices not
    written yet (in start order) and the flow points waiting for the next slice."""

    def __init__(self, key: tuple[str | None, str | None]):
        self.key = key
        self.stacks: list[list[_Slice]] = [[]]
        self.pending: list[_Slice] = []
        self.waiting: list[tuple[int, int]] = []   # (flow id, ts) of 'f' points bound to the next slice

    def pop_ended(self, ts: int, inclusive: bool) -> None:
        for st in self.stacks:
            while st and st[-1].end is not None and (st[-1].end <= ts if inclusive else st[-1].end < ts):
                st.pop()

    def idle(self) -> bool:
        return not any(self.stacks)


class PerfettoWriter:
    """Streams TracePackets to a binary file: feed rows of export_track_events in order, then ``close()``."""

    def __init__(self, out: IO[bytes]):
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent
        from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder

        self._b = StreamingTraceProtoBuilder(out)
        self._te = TrackEvent
        self.w = Written()
        self._names: dict[str, int] = {}
        self._cats: dict[str, int] = {}
        self._ann_names: dict[str, int] = {}
        self._first = True
        self._meta: dict[tuple[str, str | None, str | None], Any] = {}   # (what, pid, tid) -> value
        self._described: set[int] = set()
        self._ids: dict[tuple[str, str | None], int] = {}                # non-integer pid / tid texts
        self._track: _Track | None = None

    # ---- packets -------------------------------------------------------------------------------------------
    def _packet(self, ts: int | None = None):
        p = self._b.create_packet()
        p.trusted_packet_sequence_id = SEQUENCE_ID
        if self._first:
            p.first_packet_on_sequence = True
            p.sequence_flags = 3   # SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE
            self._first = False
        else:
            p.sequence_flags = 2   # SEQ_NEEDS_INCREMENTAL_STATE
        if ts is not None:
            p.timestamp = ts
        return p

    def _write(self, p) -> None:
        self._b.write_packet(p)
        self.w.packets += 1

    def _iid(self, table: dict[str, int], text: str, p, kind: str) -> int:
        iid = table.get(text)
        if iid is None:
            iid = table[text] = len(table) + 1
            entry = getattr(p.interned_data, kind).add()
            entry.iid = iid
            entry.name = text
        return iid

    def _annotate(self, msg, name: str | None, value: Any, p) -> None:
        if name is not None:
            msg.name_iid = self._iid(self._ann_names, name, p, "debug_annotation_names")
        if isinstance(value, bool):
            msg.bool_value = value
        elif isinstance(value, int):
            if -(1 << 63) <= value < (1 << 63):
                msg.int_value = value
            elif 0 <= value < (1 << 64):
                msg.uint_value = value
            else:
                msg.string_value = str(value)
        elif isinstance(value, float):
            msg.double_value = value
        elif isinstance(value, str):
            msg.string_value = value
        else:   # a list, an object or null: its JSON text (Perfetto reads it into nested args)
            msg.legacy_json_value = orjson.dumps(value).decode()

    def _event(self, ts: int, kind: int, track: int, name: str | None = None, cat: str | None = None,
               ann: Iterable[tuple[str, Any]] = (), flow_ids=(), terminating=()) -> None:
        p = self._packet(ts)
        te = p.track_event
        te.type = kind
        te.track_uuid = track
        if name is not None:
            te.name_iid = self._iid(self._names, name, p, "event_names")
        if cat:
            te.category_iids.append(self._iid(self._cats, cat, p, "event_categories"))
        for k, v in ann:
            self._annotate(te.debug_annotations.add(), k, v, p)
        te.flow_ids.extend(flow_ids)
        te.terminating_flow_ids.extend(terminating)
        self._write(p)

    # ---- tracks --------------------------------------------------------------------------------------------
    def _num(self, what: str, text: str | None) -> int:
        """A pid or tid as the int32 the format takes; a text that is not one gets a number of its own."""
        if text is not None and _INT.fullmatch(text) and -(1 << 31) <= int(text) < (1 << 31):
            return int(text)
        return self._ids.setdefault((what, text), (1 << 31) - 1 - len(self._ids))

    def _process(self, pid: str | None) -> int:
        uuid = _uuid("process", pid)
        if uuid not in self._described:
            self._described.add(uuid)
            p = self._packet()
            d = p.track_descriptor
            d.uuid = uuid
            d.process.pid = self._num("pid", pid)
            name = self._meta.get(("process_name", pid, None))
            if name is None and not (pid is not None and _INT.fullmatch(pid)):
                name = pid
            if name is not None:
                d.process.process_name = str(name)
            for label in self._meta.get(("process_labels", pid, None)) or ():
                d.process.process_labels.append(str(label))
            rank = self._meta.get(("process_sort_index", pid, None))
            if isinstance(rank, int) and -(1 << 31) <= rank < (1 << 31):
                d.sibling_order_rank = rank
            self._write(p)
            self.w.tracks += 1
        return uuid

    def _thread(self, pid: str | None, tid: str | None, level: int = 0) -> int:
        uuid = _uuid("thread", pid, tid, level)
        if uuid not in self._described:
            parent = self._process(pid) if level == 0 else self._thread(pid, tid)
            self._described.add(uuid)
            p = self._packet()
            d = p.track_descriptor
            d.uuid = uuid
            d.parent_uuid = parent
            name = self._meta.get(("thread_name", pid, tid))
            if name is None and not (tid is not None and _INT.fullmatch(tid)):
                name = tid
            if level == 0:
                d.thread.pid = self._num("pid", pid)
                d.thread.tid = self._num("tid", tid)
                if name is not None:
                    d.thread.thread_name = str(name)
                rank = self._meta.get(("thread_sort_index", pid, tid))
                if isinstance(rank, int) and -(1 << 31) <= rank < (1 << 31):
                    d.sibling_order_rank = rank
            else:
                d.name = f"{name if name is not None else 'thread ' + str(tid)} · overlap {level}"
            self._write(p)
            self.w.tracks += 1
        return uuid

    def _child(self, parent: int, name: str, counter: bool) -> int:
        uuid = _uuid("child", parent, name, counter)
        if uuid not in self._described:
            self._described.add(uuid)
            p = self._packet()
            d = p.track_descriptor
            d.uuid = uuid
            if parent:
                d.parent_uuid = parent
            d.name = name
            if counter:
                d.counter.SetInParent()
            self._write(p)
            self.w.tracks += 1
        return uuid

    # ---- events --------------------------------------------------------------------------------------------
    def _skip(self, ph: str | None) -> None:
        self.w.skipped[str(ph)] = self.w.skipped.get(str(ph), 0) + 1

    def _flush(self, t: _Track) -> None:
        """Write the pending slices of a track whose stacks are empty: per level, begins and ends in nesting
        order (at one time an end before a begin, the inner end first, the outer begin first)."""
        by_level: dict[int, list[_Slice]] = {}
        for s in t.pending:
            by_level.setdefault(s.level, []).append(s)
        t.pending = []
        for level, slices in by_level.items():
            track = self._thread(t.key[0], t.key[1], level)
            open_: list[_Slice] = []
            for s in slices:
                while open_ and open_[-1].end is not None and open_[-1].end <= s.ts and not (
                        s.instant and open_[-1].end == s.ts and open_[-1].end > open_[-1].ts):
                    self._end(open_.pop(), track)
                if s.instant:
                    self._event(s.ts, self._te.TYPE_INSTANT, track, s.name, s.cat, s.ann, s.flow_ids, s.terminating)
                    self.w.instants += 1
                    continue
                self._event(s.ts, self._te.TYPE_SLICE_BEGIN, track, s.name, s.cat, s.ann, s.flow_ids, s.terminating)
                self.w.slices += 1
                open_.append(s)
            while open_:
                self._end(open_.pop(), track)

    def _end(self, s: _Slice, track: int) -> None:
        if s.end is not None:
            self._event(s.end, self._te.TYPE_SLICE_END, track)

    def _close_track(self) -> None:
        t = self._track
        if t is None:
            return
        for st in t.stacks:   # B events never ended: closed where their last child ends
            for s in st:
                if s.end is None:
                    s.end = max([x.end or x.ts for x in t.pending if x.ts >= s.ts] + [s.ts])
        self.w.unbound_flow_points += len(t.waiting)
        self._flush(t)
        self._track = None

    def _on_track(self, pid: str | None, tid: str | None) -> _Track:
        if self._track is None or self._track.key != (pid, tid):
            self._close_track()
            self._track = _Track((pid, tid))
        return self._track

    def _push(self, t: _Track, s: _Slice) -> None:
        """Put a slice on the first level where it nests (a new overlap level when none)."""
        t.pop_ended(s.ts, inclusive=True)
        if s.end is not None and t.idle() and t.pending:
            self._flush(t)
        level = next((i for i, st in enumerate(t.stacks)
                      if not st or st[-1].end is None or s.end is not None and s.end <= st[-1].end), len(t.stacks))
        if level == len(t.stacks):
            t.stacks.append([])
        if level:
            self.w.overlapped += 1
        s.level = level
        t.stacks[level].append(s)
        t.pending.append(s)
        if t.waiting:   # 'f' points bound to the next slice
            s.terminating.extend(f for f, _ in t.waiting)
            t.waiting = []

    def _enclosing(self, t: _Track, ts: int) -> _Slice | None:
        t.pop_ended(ts, inclusive=False)
        tops = [st[-1] for st in t.stacks if st]
        return max(tops, key=lambda s: s.ts) if tops else None

    def _flow_id(self, e: dict) -> int:
        return _uuid("flow", e.get("cat"), e.get("name"), e.get("id"), e.get("id2"))

    def add(self, ph: str | None, pid: str | None, tid: str | None, ts: int | None, dur: int | None,
            event_json: str) -> None:
        """One row of export_track_events, in its order."""
        e = orjson.loads(event_json)
        if ph == "M":
            self._metadata(e, pid, tid)
            return
        if ts is None or ts < 0:
            self._skip(f"{ph} (no time)" if ts is None else f"{ph} (before time 0)")
            return
        ann = [(k, v) for k, v in (e.get("args") or {}).items()] if isinstance(e.get("args"), dict) else []
        ann += [(k, v) for k, v in e.items() if k not in _STANDARD]
        name, cat = e.get("name"), e.get("cat")
        name = None if name is None else str(name)
        cat = None if cat is None else str(cat)
        if ph == "X" or ph == "B":
            t = self._on_track(pid, tid)
            self._push(t, _Slice(ts, ts + (dur or 0) if ph == "X" else None, name, cat, ann))
        elif ph == "E":
            t = self._on_track(pid, tid)
            for st in reversed(t.stacks):
                if st and st[-1].end is None:
                    st[-1].end = ts
                    st.pop()
                    break
            else:
                self._skip(ph)
        elif ph in _INSTANT_PHASES:
            scope = e.get("s", "t")
            if scope == "g":
                self._event(ts, self._te.TYPE_INSTANT, self._child(0, "global instants", False), name, cat, ann)
                self.w.instants += 1
            elif scope == "p":
                self._event(ts, self._te.TYPE_INSTANT, self._process(pid), name, cat, ann)
                self.w.instants += 1
            else:
                t = self._on_track(pid, tid)
                t.pop_ended(ts, inclusive=False)
                t.pending.append(_Slice(ts, ts, name, cat, ann, instant=True))
                if t.idle():
                    self._flush(t)
        elif ph == "C":
            proc = self._process(pid)
            values: dict = e["args"] if isinstance(e.get("args"), dict) else {}
            for k, v in values.items():
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    self._skip("C (a value that is not a number)")
                    continue
                track = self._child(proc, f"{name} {k}", True)
                p = self._packet(ts)
                te = p.track_event
                te.type = self._te.TYPE_COUNTER
                te.track_uuid = track
                if isinstance(v, int) and -(1 << 63) <= v < (1 << 63):
                    te.counter_value = v
                else:
                    te.double_counter_value = float(v)
                self._write(p)
                self.w.counter_values += 1
        elif ph in _FLOW_PHASES:
            t = self._on_track(pid, tid)
            fid = self._flow_id(e)
            if ph == "f" and e.get("bp") != "e":
                same = [s for s in t.pending if s.ts == ts and not s.instant]
                if same:
                    same[-1].terminating.append(fid)
                else:
                    t.waiting.append((fid, ts))
                return
            s = self._enclosing(t, ts)
            if s is None:
                self.w.unbound_flow_points += 1
            elif ph == "f":
                s.terminating.append(fid)
            else:
                s.flow_ids.append(fid)
                if ph == "s":
                    self.w.flows += 1
        else:
            self._skip(ph)

    def _metadata(self, e: dict, pid: str | None, tid: str | None) -> None:
        what = e.get("name")
        args: dict = e["args"] if isinstance(e.get("args"), dict) else {}
        if what in ("process_name", "thread_name"):
            value: Any = args.get("name")
        elif what in ("process_sort_index", "thread_sort_index"):
            value = args.get("sort_index")
        elif what == "process_labels":
            labels = args.get("labels")
            value = [x.strip() for x in labels.split(",")] if isinstance(labels, str) else labels
        else:
            self._skip(f"M {what}")
            return
        self._meta[(what, pid, tid if what.startswith("thread") else None)] = value

    def close(self) -> Written:
        self._close_track()
        for (what, pid, tid) in list(self._meta):   # processes and threads named but with no event of their own
            if what.startswith("process"):
                self._process(pid)
            elif what == "thread_name":
                self._thread(pid, tid)
        return self.w
