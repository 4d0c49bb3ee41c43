"""Replays an op's recorded argument sets with the installed torch: builds its arguments, calls it, times it and,
with --check, profiles the call and compares what the profiler records with what the trace recorded.

This file is copied whole into every script `tracesql replay` writes (tracesql.api.replay): it imports only the
standard library, and torch when a replay runs. An entry of the replay IR (docs/replay.md) names the op, the
recorded lists and, per argument, its kind, element type, shape, strides, value and fill; the operator's schema
(read from the installed torch) says which overload the recorded arguments fit and what an unrecorded argument
('' in the trace: None, a str, a Device, ...) stands for.
"""
from __future__ import annotations

import argparse
import json
import os
import sys  # noqa: F401 - the scripts' last lines call sys.exit(main(...))
import tempfile
import time

SCALAR_KINDS = {"IntType", "SymIntType", "FloatType", "NumberType", "BoolType", "ComplexType"}


class Unreplayable(Exception):
    """The entry cannot be replayed here: what the trace lacks, or what this torch or device lacks."""


def _torch():
    import torch

    return torch


# --- the operator's schema -----------------------------------------------------------------------------------

def _base(t):
    """(base type, optional?) of a schema type: Optional[X] -> (X, True)."""
    if t.kind() == "OptionalType":
        return t.getElementType(), True
    return t, False


def _fits(arg, schema_arg) -> int | None:
    """How well a recorded argument fits a schema argument: None when it cannot be that argument, else a score
    (2: the recorded kind is that type; 1: an unrecorded value the schema can supply)."""
    t, optional = _base(schema_arg.type)
    k, kind = t.kind(), arg["kind"]
    if kind == "tensor":
        return 2 if k == "TensorType" else None
    if kind == "tensor_list":
        return 2 if k == "ListType" and _base(t.getElementType())[0].kind() == "TensorType" else None
    if kind == "scalar":
        v = arg["value"]
        if v is None:  # a trace without Concrete Inputs: any scalar type
            return 1 if k in SCALAR_KINDS else None
        if k in ("BoolType",):
            return 2 if isinstance(v, bool) else None
        if k in ("IntType", "SymIntType"):
            return 2 if isinstance(v, int) and not isinstance(v, bool) else None
        if k in ("FloatType", "NumberType", "ComplexType"):
            return 2 if not isinstance(v, bool) or k == "NumberType" else None
        return None
    if kind == "scalar_list":
        if k != "ListType":
            return None
        e = _base(t.getElementType())[0].kind()
        if arg["value"] is None:
            return 1 if e in SCALAR_KINDS else None
        if e not in SCALAR_KINDS:
            return 2 if e == "TensorType" and arg["value"] == [] else None
        if e == "BoolType":
            return 2 if all(isinstance(x, bool) for x in arg["value"]) else None
        if e in ("IntType", "SymIntType"):
            return 2 if all(isinstance(x, int) and not isinstance(x, bool) for x in arg["value"]) else None
        return 2
    # unrecorded: None, or a value the profiler does not record
    if optional or k in ("StringType", "DeviceObjType", "GeneratorType") or schema_arg.has_default_value():
        return 1
    if k == "ListType" or k == "ClassType":
        return 1  # a list of optional tensors, a process group: fits, but cannot be built (see _unrecorded)
    return None


def resolve(entry: dict):
    """The overload of the entry's op whose arguments the recorded ones fit, as (schema, callable). Raises
    Unreplayable when this torch has no such operator or no overload fits."""
    torch = _torch()
    name = entry["op_name"]
    schemas = torch._C._jit_get_schemas_for_operator(name)
    if not schemas:
        raise Unreplayable(f"{name} is not an operator of this torch ({torch.__version__}): import the library "
                           "that registers it (--import MODULE)")
    args = entry["args"]
    best = None
    for s in schemas:
        # a torch newer than the trace's may have added arguments after the recorded ones, with defaults
        extra = s.arguments[len(args):]
        if len(s.arguments) < len(args) or not all(sa.has_default_value() for sa in extra):
            continue
        fits = [_fits(a, sa) for a, sa in zip(args, s.arguments[:len(args)], strict=True)]
        if None in fits:
            continue
        score = (-len(extra), sum(f or 0 for f in fits), s.overload_name == "", -len(s.overload_name))
        if best is None or score > best[0]:
            best = (score, s)
    if best is None:
        recorded = ", ".join(a["recorded_type"] or "''" for a in args)
        raise Unreplayable(f"no overload of {name} in this torch ({torch.__version__}) takes the recorded "
                           f"{len(args)} arguments ({recorded})")
    s = best[1]
    ns, op = name.split("::", 1)
    packet = getattr(getattr(torch.ops, ns), op)
    return s, getattr(packet, s.overload_name or "default")


# --- building the arguments ----------------------------------------------------------------------------------

def _fill(base, init: str, high, torch) -> None:
    n = base.numel()
    if n == 0:
        return
    if init == "index":
        base.copy_(torch.randint(0, int(high), (n,), device=base.device))
    elif init == "offsets":
        base.copy_(torch.arange(n, device=base.device) * int(high) // n)
    elif init == "ones":
        base.fill_(1)
    elif init == "bool":
        base.copy_(torch.rand(n, device=base.device) < 0.5)
    elif init == "normal":
        if base.dtype in (torch.float16, torch.float32, torch.float64, torch.bfloat16) or base.is_complex():
            base.normal_()
        else:  # float8 and the like: no normal_ of their own
            try:
                base.copy_(torch.randn(n, device=base.device).to(base.dtype))
            except (RuntimeError, TypeError):
                base.view(torch.uint8).zero_()
    else:
        try:
            base.zero_()
        except (RuntimeError, NotImplementedError):
            base.view(torch.uint8).zero_()


def make_tensor(shape, strides, dtype: str, init: str, high, device):
    """A tensor of the recorded shape, strides and element type on ``device``, filled as ``init`` says. Strides
    that are not contiguous, or that overlap (0 or repeated), are given with as_strided over a storage just large
    enough; without recorded strides, the tensor is contiguous."""
    torch = _torch()
    dt = getattr(torch, dtype, None)
    if not isinstance(dt, torch.dtype):
        raise Unreplayable(f"this torch ({torch.__version__}) has no dtype {dtype}")
    shape = [int(x) for x in shape]
    if str(dt).startswith("torch.q"):
        return torch._empty_affine_quantized(shape, scale=1.0, zero_point=0, dtype=dt, device=device)
    if not strides or len(strides) != len(shape):
        strides = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            strides[i] = strides[i + 1] * max(shape[i + 1], 1)
    strides = [int(x) for x in strides]
    size = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    base = torch.empty(size, dtype=dt, device=device)
    _fill(base, init, high, torch)
    return base.as_strided(shape, strides)


def _unrecorded(schema_arg, device):
    """What an argument recorded as '' stands for: None when the schema allows it, the replay device for a
    Device, the schema's default for a str; Unreplayable for what the profiler never records (a list of optional
    tensors, a process group)."""
    t, optional = _base(schema_arg.type)
    k = t.kind()
    if k == "DeviceObjType":
        return device
    if k == "StringType":
        if schema_arg.has_default_value():
            return schema_arg.default_value
        raise Unreplayable(f"argument {schema_arg.name} (str) is not recorded by the profiler and has no default")
    if optional or k == "GeneratorType":
        return None
    if schema_arg.has_default_value():
        return schema_arg.default_value
    raise Unreplayable(f"argument {schema_arg.name} ({t}) is not recorded by the profiler")


def _unknown_scalar(schema_arg):
    """A scalar whose value the trace does not hold (recorded without Concrete Inputs): the schema's default, else
    False for a bool, 1 for a number, [1] for a list."""
    if schema_arg.has_default_value():
        return schema_arg.default_value
    t = _base(schema_arg.type)[0]
    if t.kind() == "ListType":
        return [1]
    return False if t.kind() == "BoolType" else 1


def _scalar(v, schema_arg):
    if isinstance(v, str):  # inf, nan, a complex number
        for conv in (float, lambda x: complex(x.strip("()").replace(" ", ""))):
            try:
                return conv(v)
            except ValueError:
                pass
        return v
    t = _base(schema_arg.type)[0].kind()
    if t == "FloatType" and isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    return v


def build(entry: dict, schema, device):
    """(positional args, keyword args) of the call, from the entry's arguments and the overload's schema."""
    pos, kw = [], {}
    for a, sa in zip(entry["args"], schema.arguments[:len(entry["args"])], strict=True):
        kind = a["kind"]
        if kind in ("scalar", "scalar_list") and a["value"] is None:
            v = _unknown_scalar(sa)
        elif kind == "tensor":
            v = make_tensor(a["shape"], a["strides"], a["dtype"], a["init"], a.get("index_high"), device)
        elif kind == "tensor_list":
            strides = a["strides"] or [None] * len(a["shape"])
            v = [make_tensor(sh, st, a["dtype"], a["init"], a.get("index_high"), device)
                 for sh, st in zip(a["shape"], strides, strict=True)]
        elif kind == "scalar":
            v = _scalar(a["value"], sa)
        elif kind == "scalar_list":
            v = [_scalar(x, sa) for x in a["value"]]
        else:
            v = _unrecorded(sa, device)
        if sa.kwarg_only:
            kw[sa.name] = v
        else:
            pos.append(v)
    return pos, kw


# --- running -------------------------------------------------------------------------------------------------

def _device_reason(err: Exception, device) -> str | None:
    text = str(err)
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    backend = str(device).split(":")[0].upper()
    if "Could not run" in text and "backend" in text:
        op = first.split("'")[1] if first.count("'") >= 2 else "the op"
        return f"no {backend} kernel: {op} has no kernel for the {backend} backend in this torch"
    if "not implemented for" in text or "only supports CUDA" in text or "CUDA" in text and backend == "CPU":
        return f"not on {backend}: {first}"
    return None


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0] if text else ''}"


def _time(fn, device, iters: int, warmup: int) -> float:
    """Mean time of one call after ``warmup`` untimed ones, µs: CUDA events on a GPU, wall time otherwise."""
    torch = _torch()
    for _ in range(warmup):
        fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize(device)
        return start.elapsed_time(end) * 1000.0 / iters
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) * 1e6 / iters


def _profiled(fn, device, op_name: str) -> tuple[dict | None, list[str]]:
    """Profile one call (record_shapes=True): the args of the outermost event named op_name, and the names of
    the GPU kernels it ran."""
    torch = _torch()
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=acts, record_shapes=True) as prof:
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f).get("traceEvents", [])
    finally:
        os.unlink(path)
    ops = sorted((e for e in events if e.get("name") == op_name and e.get("cat") == "cpu_op"),
                 key=lambda e: (e.get("ts", 0), -e.get("dur", 0)))
    kernels = [e["name"] for e in events if e.get("cat") == "kernel"]
    return (ops[0].get("args", {}) if ops else None), kernels


def replay(entry: dict, device, iters: int = 20, check: bool = False, warmup: int = 2) -> dict:
    """Replay one entry: a result {op_name, rank, arg_set_id, status (ok, unreplayable, failed), reason, overload,
    args_match, traced_us, replayed_us, traced_kernels, replayed_kernels}."""
    out = {"op_name": entry["op_name"], "trace": entry.get("trace"), "rank": entry.get("rank"),
           "arg_set_id": entry.get("arg_set_id"), "status": "ok", "reason": None, "overload": None,
           "args_match": None, "traced_us": entry.get("kernel_time_mean_ns", 0) / 1000.0, "replayed_us": None,
           "traced_kernels": [k["name"] for k in entry.get("kernels", [])], "replayed_kernels": None}
    if entry.get("unreplayable"):
        return {**out, "status": "unreplayable", "reason": entry["unreplayable"]}
    try:
        schema, fn = resolve(entry)
        out["overload"] = str(schema)
        pos, kw = build(entry, schema, device)
    except Unreplayable as e:
        return {**out, "status": "unreplayable", "reason": str(e)}
    except Exception as e:  # noqa: BLE001 - building the arguments failed: reported, never raised
        reason = _device_reason(e, device)
        return {**out, "status": "unreplayable" if reason else "failed", "reason": reason or _first_line(e)}

    def call():
        return fn(*pos, **kw)

    try:
        if iters:
            out["replayed_us"] = _time(call, device, iters, warmup)
        if check:
            args, kernels = _profiled(call, device, entry["op_name"])
            rec = entry["recorded"]
            out["args_match"] = args is not None and args.get("Input Dims") == rec["dims"] \
                and args.get("Input type") == rec["types"]
            if device.type == "cuda":
                out["replayed_kernels"] = kernels
    except Exception as e:  # noqa: BLE001 - every failure of the op is reported, never raised
        reason = _device_reason(e, device)
        return {**out, "status": "unreplayable" if reason else "failed", "reason": reason or _first_line(e)}
    return out


def _line(r: dict) -> str:
    t = f"{r['traced_us']:.1f}" if r["traced_us"] is not None else "-"
    p = f"{r['replayed_us']:.1f}" if r["replayed_us"] is not None else "-"
    m = {True: "args match", False: "ARGS DIFFER", None: ""}[r["args_match"]]
    head = f"#{r['rank']} {r['op_name']}: {r['status']}, traced {t} us, replayed {p} us"
    line = head + (f", {m}" if m else "") + (f" ({r['reason']})" if r["reason"] else "")
    if r["replayed_kernels"] is not None:  # on a GPU, with --check: the kernels side by side
        line += "\n    traced kernels:   " + _names(r["traced_kernels"]) \
            + "\n    replayed kernels: " + _names(r["replayed_kernels"])
    return line


def _names(names: list) -> str:
    """Distinct kernel names in order, each cut to 100 characters."""
    seen = list(dict.fromkeys(names))
    return "; ".join(n if len(n) <= 100 else n[:99] + "…" for n in seen) or "(none)"


def main(argv=None, entries: list | None = None, ir_path: str | None = None) -> int:
    p = argparse.ArgumentParser(description="Replay op argument sets recorded in a trace (written by tracesql "
                                "replay).")
    p.add_argument("--device", default=None, help="cuda or cpu (default: cuda when there is one)")
    p.add_argument("--iters", type=int, default=20, help="timed calls per entry (default 20; 0: none, with --check "
                   "only the profiled call)")
    p.add_argument("--warmup", type=int, default=2, help="untimed calls before them (default 2)")
    p.add_argument("--check", action="store_true", help="profile each replay and compare its recorded Input Dims "
                   "and Input type with the trace's")
    p.add_argument("--json", metavar="FILE", help="write one result object per entry to FILE")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                   help="import MODULE first (a library that registers the ops, e.g. vllm._C)")
    a = p.parse_args(argv)
    if a.iters < 0 or a.warmup < 0 or a.iters == 0 and not a.check:
        p.error("--iters must be 1 or more (0 with --check), --warmup 0 or more")
    torch = _torch()
    import importlib

    for m in a.imports:
        importlib.import_module(m)
    if a.device is None:
        a.device = "cuda" if torch.cuda.is_available() else "cpu"
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        p.error("no CUDA device here: give --device cpu")
    device = torch.device(a.device)
    if entries is None:
        with open(ir_path or os.path.join(os.path.dirname(os.path.abspath(__file__)), "replay_ir.json")) as f:
            entries = json.load(f)["entries"]
    results = []
    for e in entries:
        r = replay(e, device, a.iters, a.check, a.warmup)
        results.append(r)
        print(_line(r), flush=True)
    n = {s: sum(r["status"] == s for r in results) for s in ("ok", "unreplayable", "failed")}
    print(f"{len(results)} entries: {n['ok']} ok, {n['unreplayable']} unreplayable, {n['failed']} failed")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if n["failed"] else 0
