"""XPlane input: an ``.xplane.pb`` (what ``jax.profiler`` writes) read as the Chrome-trace JSON JAX would export.

An XPlane file is a serialized ``XSpace`` protobuf (TSL's ``xplane.proto``): planes (``/device:GPU:N``,
``/host:CPU``, ``/host:metadata``), each with lines (streams, threads) of events whose names and statistics are
interned in per-plane metadata tables. It is decoded with the ``protobuf`` library from message types declared
here (only the fields read, by their numbers in ``xplane.proto`` and XLA's ``hlo.proto``; the library skips the
rest), and turned into trace events the way JAX's trace export writes them:

* a device plane ``/device:GPU:N`` is process ``N + 1``, ``/host:CPU`` is process 701; a line is a thread, its
  id the line's id and its name the line's (display) name;
* an event is a complete event (ph X) named by its metadata's display name (else its name), at
  ``line.timestamp_ns + offset_ps / 1000`` and lasting ``duration_ps / 1000`` (µs in the text, written exactly
  to the ns: the ingest parses them back to the same int64 ns); its args are the statistics of its metadata and
  its own (the event's win), each as text (``correlation_id``, ``hlo_op``, ``hlo_module``, ``kernel_details``,
  ...), a reference statistic as the name it points to;
* events that only count occurrences (no time of their own) are not events of a timeline and are left out;
  they are counted in the header field ``xplane`` ({"aggregated_events_left_out": N});
* the allocator's records (MemoryAllocation / MemoryDeallocation, no duration) are instant events (ph i, in
  the table ``instants``), which JAX's export leaves out; the host thread ids are the line ids' low 32 bits, as
  JAX's export writes them.

The HLO modules the file carries (``/host:metadata``: per module compiled while profiling, an event metadata entry
whose key is the module's program id and whose statistic ``Hlo Proto`` is the serialized ``HloProto``) are written
as metadata events ``hlo_instruction``, one per instruction, with what the compute model and ``op_arg_summary``
read: module, computation, name, opcode, result shape, operand shapes, dot / convolution dimension numbers,
window, feature groups, custom-call target and backend config, the framework op of its metadata
(sql/tree/hlo_instructions.sql gives them columns).
"""
from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import orjson

from tracesql.errors import TraceError

# process ids of JAX's trace export: device planes from 1, the host threads at 701
_FIRST_DEVICE_PID = 1
_HOST_PID = 701

# allocator records (no duration): instant events (JAX's export leaves them out; here they are kept)
_INSTANTS = {"MemoryAllocation", "MemoryDeallocation"}

# xla.PrimitiveType (xla_data.proto) -> the dtype names of HLO text
_DTYPES = {1: "pred", 2: "s8", 3: "s16", 4: "s32", 5: "s64", 6: "u8", 7: "u16", 8: "u32", 9: "u64", 10: "f16",
           11: "f32", 12: "f64", 13: "tuple", 14: "opaque", 15: "c64", 16: "bf16", 17: "token", 18: "c128",
           19: "f8e5m2", 20: "f8e4m3fn", 21: "s4", 22: "u4", 23: "f8e4m3b11fnuz", 24: "f8e5m2fnuz",
           25: "f8e4m3fnuz", 26: "s2", 27: "u2", 28: "f8e4m3", 29: "f8e3m4", 30: "f4e2m1fn", 31: "f8e8m0fnu"}

_I64, _U64, _I32, _DBL, _STR, _BYTES, _BOOL, _MSG = 3, 4, 5, 1, 9, 12, 8, 11  # FieldDescriptorProto types
_OPT, _REP = 1, 3


def _messages() -> dict[str, list[tuple]]:
    """Message name -> fields (name, number, type, repeated, message type, oneof index)."""
    return {
        # tsl/profiler/protobuf/xplane.proto
        "XSpace": [("planes", 1, _MSG, True, "XPlane"), ("errors", 2, _STR, True), ("warnings", 3, _STR, True),
                   ("hostnames", 4, _STR, True)],
        "XPlane": [("id", 1, _I64), ("name", 2, _STR), ("lines", 3, _MSG, True, "XLine"),
                   ("event_metadata", 4, _MSG, True, "XPlane.EventMetadataEntry"),
                   ("stat_metadata", 5, _MSG, True, "XPlane.StatMetadataEntry"), ("stats", 6, _MSG, True, "XStat")],
        "XPlane.EventMetadataEntry": [("key", 1, _I64), ("value", 2, _MSG, False, "XEventMetadata")],
        "XPlane.StatMetadataEntry": [("key", 1, _I64), ("value", 2, _MSG, False, "XStatMetadata")],
        "XLine": [("id", 1, _I64), ("name", 2, _STR), ("timestamp_ns", 3, _I64), ("events", 4, _MSG, True, "XEvent"),
                  ("duration_ps", 9, _I64), ("display_id", 10, _I64), ("display_name", 11, _STR)],
        "XEvent": [("metadata_id", 1, _I64), ("offset_ps", 2, _I64), ("duration_ps", 3, _I64),
                   ("stats", 4, _MSG, True, "XStat"), ("num_occurrences", 5, _I64)],
        "XStat": [("metadata_id", 1, _I64), ("double_value", 2, _DBL, False, None, 0),
                  ("uint64_value", 3, _U64, False, None, 0), ("int64_value", 4, _I64, False, None, 0),
                  ("str_value", 5, _STR, False, None, 0), ("bytes_value", 6, _BYTES, False, None, 0),
                  ("ref_value", 7, _U64, False, None, 0)],
        "XEventMetadata": [("id", 1, _I64), ("name", 2, _STR), ("metadata", 3, _BYTES), ("display_name", 4, _STR),
                           ("stats", 5, _MSG, True, "XStat"), ("child_id", 6, _I64, True)],
        "XStatMetadata": [("id", 1, _I64), ("name", 2, _STR), ("description", 3, _STR)],
        # xla/service/hlo.proto and xla/xla_data.proto
        "HloProto": [("hlo_module", 1, _MSG, False, "HloModuleProto")],
        "HloModuleProto": [("name", 1, _STR), ("entry_computation_name", 2, _STR),
                           ("computations", 3, _MSG, True, "HloComputationProto"), ("id", 5, _I64),
                           ("entry_computation_id", 6, _I64)],
        "HloComputationProto": [("name", 1, _STR), ("instructions", 2, _MSG, True, "HloInstructionProto"),
                                ("id", 5, _I64), ("root_id", 6, _I64)],
        "HloInstructionProto": [("name", 1, _STR), ("opcode", 2, _STR), ("shape", 3, _MSG, False, "ShapeProto"),
                                ("metadata", 7, _MSG, False, "OpMetadata"), ("fusion_kind", 11, _STR),
                                ("window", 15, _MSG, False, "Window"),
                                ("convolution_dimension_numbers", 16, _MSG, False, "ConvolutionDimensionNumbers"),
                                ("custom_call_target", 28, _STR),
                                ("dot_dimension_numbers", 30, _MSG, False, "DotDimensionNumbers"), ("id", 35, _I64),
                                ("operand_ids", 36, _I64, True), ("called_computation_ids", 38, _I64, True),
                                ("backend_config", 43, _BYTES), ("feature_group_count", 50, _I64),
                                ("batch_group_count", 58, _I64)],
        "ShapeProto": [("element_type", 2, _I32), ("dimensions", 3, _I64, True),
                       ("tuple_shapes", 4, _MSG, True, "ShapeProto")],
        "OpMetadata": [("op_type", 1, _STR), ("op_name", 2, _STR), ("source_file", 3, _STR),
                       ("source_line", 4, _I32)],
        "Window": [("dimensions", 1, _MSG, True, "WindowDimension")],
        "WindowDimension": [("size", 1, _I64), ("stride", 2, _I64), ("padding_low", 3, _I64),
                            ("padding_high", 4, _I64), ("window_dilation", 5, _I64), ("base_dilation", 6, _I64)],
        "ConvolutionDimensionNumbers": [
            ("input_batch_dimension", 7, _I64), ("input_feature_dimension", 8, _I64),
            ("input_spatial_dimensions", 11, _I64, True), ("kernel_input_feature_dimension", 3, _I64),
            ("kernel_output_feature_dimension", 4, _I64), ("kernel_spatial_dimensions", 6, _I64, True),
            ("output_batch_dimension", 9, _I64), ("output_feature_dimension", 10, _I64),
            ("output_spatial_dimensions", 12, _I64, True)],
        "DotDimensionNumbers": [("lhs_contracting_dimensions", 1, _I64, True),
                                ("rhs_contracting_dimensions", 2, _I64, True),
                                ("lhs_batch_dimensions", 3, _I64, True), ("rhs_batch_dimensions", 4, _I64, True)],
    }


@lru_cache(maxsize=1)
def _classes() -> dict[str, Any]:
    """The message classes of _messages(), built once from a file descriptor (no generated code)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pkg = "tracesql.xplane"
    fd = descriptor_pb2.FileDescriptorProto(name="tracesql_xplane.proto", package=pkg, syntax="proto3")
    made: dict[str, Any] = {}
    for full, fields in _messages().items():
        parent, _, name = full.rpartition(".")
        msg = made[parent].nested_type.add(name=name) if parent else fd.message_type.add(name=name)
        if parent:
            msg.options.map_entry = True
        made[full] = msg
        for f in fields:
            fname, number, ftype = f[:3]
            more = list(f[3:]) + [False, None, None][len(f) - 3:]  # repeated, message type, oneof index
            repeated, type_name, oneof = more[0], more[1], more[2]
            if oneof is not None and not msg.oneof_decl:
                msg.oneof_decl.add(name="value")
            fld = msg.field.add(name=fname, number=number, type=ftype, label=_REP if repeated else _OPT)
            if type_name:
                fld.type_name = f".{pkg}.{type_name}"
            if oneof is not None:
                fld.oneof_index = oneof
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{pkg}.{n}"))
            for n in ("XSpace", "HloProto")}


def is_xplane(path: str) -> bool:
    """Whether ``path`` names an XPlane file (by its name: ``*.xplane.pb``, as jax.profiler writes it)."""
    return str(path).endswith(".xplane.pb")


def _stat_value(stat: Any, stat_names: dict[int, str]) -> str | None:
    kind = stat.WhichOneof("value")
    if kind is None:
        return None
    if kind == "ref_value":
        return stat_names.get(stat.ref_value, str(stat.ref_value))
    if kind == "bytes_value":
        return stat.bytes_value.hex()
    v = getattr(stat, kind)
    if kind == "double_value" and float(v).is_integer():
        return str(int(v))
    return str(v)


def _us(ps: int) -> bytes:
    """ps as exact decimal µs text, to the ns (what the ingest reads back as int64 ns)."""
    us, ns = divmod(abs(ps) // 1000, 1000)
    return b"%s%d.%03d" % (b"-" if ps < 0 else b"", us, ns)


def _shape_text(shape: Any) -> str:
    """A ShapeProto as HLO text writes it: bf16[1,32,60] (a tuple: (f32[2], s32[])), without layout."""
    if shape.element_type == 13:
        return "(" + ", ".join(_shape_text(s) for s in shape.tuple_shapes) + ")"
    dt = _DTYPES.get(shape.element_type, f"type{shape.element_type}")
    return f"{dt}[{','.join(str(d) for d in shape.dimensions)}]"


def _hlo_events(data: bytes, program_id: int) -> Iterator[dict]:
    """One metadata event per instruction of the serialized HloProto ``data``, the module of ``program_id`` (the
    key of its entry in /host:metadata, which the GPU events of its executions carry as their program_id)."""
    hlo = _classes()["HloProto"]()
    hlo.ParseFromString(data)
    mod = hlo.hlo_module
    shapes: dict[int, str] = {}
    for comp in mod.computations:
        for ins in comp.instructions:
            shapes[ins.id] = _shape_text(ins.shape)
    comp_names = {c.id: c.name for c in mod.computations}
    entry = mod.entry_computation_name or comp_names.get(mod.entry_computation_id, "")
    for comp in mod.computations:
        for ins in comp.instructions:
            a: dict[str, Any] = {
                "name": ins.name, "hlo_module": mod.name, "program_id": program_id, "computation": comp.name,
                "entry": comp.name == entry, "opcode": ins.opcode, "shape": shapes[ins.id],
                "operand_shapes": [shapes.get(o, "") for o in ins.operand_ids],
                "called_computations": [comp_names.get(c, "") for c in ins.called_computation_ids],
            }
            if ins.metadata.op_name:
                a["op_name"] = ins.metadata.op_name
            if ins.fusion_kind:
                a["fusion_kind"] = ins.fusion_kind
            if ins.custom_call_target:
                a["custom_call_target"] = ins.custom_call_target
            if ins.backend_config:
                try:
                    a["backend_config"] = orjson.loads(ins.backend_config)
                except orjson.JSONDecodeError:
                    pass
            if ins.HasField("dot_dimension_numbers"):
                d = ins.dot_dimension_numbers
                a["dot"] = {"lhs_contracting": list(d.lhs_contracting_dimensions),
                            "rhs_contracting": list(d.rhs_contracting_dimensions),
                            "lhs_batch": list(d.lhs_batch_dimensions), "rhs_batch": list(d.rhs_batch_dimensions)}
            if ins.HasField("convolution_dimension_numbers"):
                c = ins.convolution_dimension_numbers
                a["conv"] = {"input_batch": c.input_batch_dimension, "input_feature": c.input_feature_dimension,
                             "input_spatial": list(c.input_spatial_dimensions),
                             "kernel_input_feature": c.kernel_input_feature_dimension,
                             "kernel_output_feature": c.kernel_output_feature_dimension,
                             "kernel_spatial": list(c.kernel_spatial_dimensions),
                             "output_batch": c.output_batch_dimension,
                             "output_feature": c.output_feature_dimension,
                             "output_spatial": list(c.output_spatial_dimensions)}
                a["feature_group_count"] = ins.feature_group_count or 1
                a["batch_group_count"] = ins.batch_group_count or 1
            if ins.HasField("window"):
                a["window"] = [{"size": w.size, "stride": w.stride or 1, "padding_low": w.padding_low,
                                "padding_high": w.padding_high, "window_dilation": w.window_dilation or 1,
                                "base_dilation": w.base_dilation or 1} for w in ins.window.dimensions]
            yield {"ph": "M", "pid": _HOST_PID, "tid": 0, "name": "hlo_instruction", "args": a}


def trace_json(path: str, data: bytes) -> bytes:
    """The Chrome-trace JSON text of the XSpace ``data`` (the file ``path``), as described at the top."""
    from google.protobuf.message import DecodeError

    space = _classes()["XSpace"]()
    try:
        space.ParseFromString(data)
    except DecodeError as err:
        raise TraceError(path, f"not an XPlane file (the XSpace protobuf does not decode: {err})") from None
    if not space.planes:
        raise TraceError(path, "not an XPlane file (an XSpace without planes)")
    out: list[bytes] = []  # the events, each as JSON text
    aggregated = 0
    for plane in space.planes:
        if plane.name.startswith("/device:"):
            try:
                pid = _FIRST_DEVICE_PID + int(plane.name.rsplit(":", 1)[1])
            except ValueError:
                continue
        elif plane.name == "/host:CPU":
            pid = _HOST_PID
        elif plane.name == "/host:metadata":
            names = {k: v.name for k, v in plane.stat_metadata.items()}
            for key, md in sorted(plane.event_metadata.items()):
                blobs = [st.bytes_value for st in md.stats if names.get(st.metadata_id) == "Hlo Proto"]
                for blob in blobs or ([md.metadata] if md.metadata else []):
                    out.extend(orjson.dumps(e) for e in _hlo_events(blob, key))
            continue
        else:
            continue
        stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        metas = plane.event_metadata
        out.append(orjson.dumps({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": plane.name}}))
        # per event metadata: the JSON text of its name, its statistics as args, and whether it is an instant
        meta_args: dict[int, tuple[bytes, dict[str, str], bool]] = {}
        for line in plane.lines:
            tid = (line.display_id or line.id) & 0xFFFFFFFF
            out.append(orjson.dumps({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                                     "args": {"name": line.display_name or line.name}}))
            head_x = b'{"ph":"X","pid":%d,"tid":%d,"name":' % (pid, tid)
            head_i = b'{"ph":"i","s":"t","pid":%d,"tid":%d,"name":' % (pid, tid)
            base_ps = line.timestamp_ns * 1000
            for ev in line.events:
                if ev.num_occurrences:
                    aggregated += 1
                    continue
                mid = ev.metadata_id
                if mid not in meta_args:
                    md = metas[mid] if mid in metas else None
                    margs: dict[str, str] = {}
                    name = ""
                    if md is not None:
                        name = md.display_name or md.name
                        for st in md.stats:
                            v = _stat_value(st, stat_names)
                            if v is not None:
                                margs[stat_names.get(st.metadata_id, str(st.metadata_id))] = v
                    meta_args[mid] = (orjson.dumps(name), margs, name in _INSTANTS)
                name_json, margs, instant = meta_args[mid]
                args = margs
                if ev.stats:
                    args = dict(margs)
                    for st in ev.stats:
                        v = _stat_value(st, stat_names)
                        if v is not None:
                            args[stat_names.get(st.metadata_id, str(st.metadata_id))] = v
                ts = _us(base_ps + ev.offset_ps)
                tail = b',"args":' + orjson.dumps(args) + b"}" if args else b"}"
                if instant and not ev.duration_ps:
                    out.append(head_i + name_json + b',"ts":' + ts + tail)
                else:
                    out.append(head_x + name_json + b',"ts":' + ts + b',"dur":' + _us(ev.duration_ps) + tail)
    head = {"displayTimeUnit": "ns", "xplane": {"aggregated_events_left_out": aggregated,
                                               "hostnames": list(space.hostnames)}}
    return b'{"traceEvents":[' + b",".join(out) + b"]," + orjson.dumps(head)[1:]
