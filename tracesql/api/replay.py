"""Op replay: the argument sets of the ops that ran GPU work, as scripts that call each op again on arguments built
from the trace alone (shapes, element types, strides, scalar values), with the installed torch.

The SQL library reads the trace (sql/replay/arg_sets.sql: replay_arg_sets, replay_args); this module turns its rows
into the replay IR (one JSON document, docs/replay.md) and writes the scripts: each is the fixed runtime
(tracesql/render/replay_runtime.py, standard library and torch only) followed by its entry. Writing them needs no
torch.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from importlib import resources
from pathlib import Path

import polars as pl

IR_FORMAT = 1
DEFAULT_TOP = 20


def _select(ds, trace: str | None, op: str | None, top: int | None) -> tuple[str, dict]:
    from tracesql.api.analysis import _check_top, _in, trace_ids

    _check_top(top)
    where = [f"s.trace_id IN {_in(trace_ids(ds, trace))}"]
    params: dict = {}
    if op is not None:
        where.append("(s.op_name = $op OR s.op_name LIKE $op)")
        params["op"] = op
    if top is not None:
        # the first N sets of each trace among those the filter keeps
        where.append("s.rank IN (SELECT rank FROM replay_arg_sets f WHERE f.trace_id = s.trace_id"
                     + (" AND (f.op_name = $op OR f.op_name LIKE $op)" if op is not None else "")
                     + f" ORDER BY rank LIMIT {int(top)})")
    return " AND ".join(where), params


def arg_sets(ds, trace: str | None = None, op: str | None = None, top: int | None = DEFAULT_TOP) -> pl.DataFrame:
    """One row per argument set (replay_arg_sets), the first ``top`` of each trace by GPU time (all with None),
    of the ops named ``op`` (an exact name or a LIKE pattern), GPU times in µs: what `tracesql replay` prints."""
    from tracesql.store.sqlmodules import materialized

    where, params = _select(ds, trace, op, top)
    with ds.materialized(materialized("replay")):
        return ds.sql(
            "SELECT l.label AS trace, s.rank, s.op_name, s.input_dims, s.input_type, s.count, "
            "s.kernel_time_sum_ns / 1000.0 AS kernel_time_sum_us, s.kernel_time_mean_ns / 1000.0 AS "
            "kernel_time_mean_us, s.kernel_count, s.unreplayable IS NULL AS replayable, s.unreplayable, "
            "s.kernels[1].name AS top_kernel, s.arg_set_id "
            f"FROM replay_arg_sets s JOIN trace_labels l USING (trace_id) WHERE {where} ORDER BY l.label, s.rank",
            params or None)


def ir(ds, trace: str | None = None, op: str | None = None, top: int | None = DEFAULT_TOP) -> dict:
    """The replay IR of the selected argument sets (see arg_sets): {"format", "entries": [...]}, one entry per
    set with its recorded lists, GPU time, kernels and either its arguments or why it cannot be replayed."""
    from tracesql.store.sqlmodules import materialized

    where, params = _select(ds, trace, op, top)
    with ds.materialized(materialized("replay")):
        sets = ds.con.sql(
            "SELECT l.label, s.trace_id, s.rank, s.arg_set_id, s.op_name, s.count, s.kernel_count, "
            "s.kernel_time_sum_ns, s.kernel_time_mean_ns, to_json(s.kernels)::VARCHAR, s.dims_json::VARCHAR, "
            "s.types_json::VARCHAR, s.strides_json::VARCHAR, s.concrete_json::VARCHAR, s.unreplayable "
            f"FROM replay_arg_sets s JOIN trace_labels l USING (trace_id) WHERE {where} ORDER BY l.label, s.rank",
            params=params or None).fetchall()
        args = ds.con.sql(
            "SELECT a.trace_id, a.rank, a.position, a.recorded_type, a.kind, a.dtype, a.dtype_source, "
            "a.shape::VARCHAR, a.strides::VARCHAR, a.value::VARCHAR, a.init, a.index_high "
            f"FROM replay_args a JOIN replay_arg_sets s USING (trace_id, rank) WHERE {where} "
            "ORDER BY a.trace_id, a.rank, a.position", params=params or None).fetchall()
    by_set: dict[tuple, list] = {}
    for (tid, rank, pos, rtype, kind, dtype, dsrc, shape, strides, value, init, high) in args:
        by_set.setdefault((tid, rank), []).append({
            "position": pos, "recorded_type": rtype, "kind": kind, "dtype": dtype, "dtype_source": dsrc,
            "shape": _json(shape), "strides": _json(strides), "value": _json(value), "init": init,
            "index_high": high})
    entries = []
    for (label, tid, rank, set_id, op_name, count, kcount, ksum, kmean, kernels, dims, types, strides, conc,
         why) in sets:
        entries.append({
            "trace": label, "trace_id": tid, "rank": rank, "arg_set_id": set_id, "op_name": op_name,
            "count": count, "kernel_count": kcount, "kernel_time_sum_ns": ksum, "kernel_time_mean_ns": kmean,
            "kernels": _json(kernels),
            "recorded": {"dims": _json(dims), "types": _json(types), "strides": _json(strides),
                         "concrete": _json(conc)},
            "unreplayable": why, "args": by_set.get((tid, rank), []) if why is None else []})
    return {"format": IR_FORMAT, "entries": entries}


def _write_whole(path: Path, text: str) -> None:
    """Write a file whole: a temporary file beside it, renamed into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".replay-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _json(text):
    return None if text is None else json.loads(text)


def runtime_source() -> str:
    """The text every script starts with (tracesql/render/replay_runtime.py)."""
    return resources.files("tracesql.render").joinpath("replay_runtime.py").read_text()


def script_name(entry: dict) -> str:
    """The file name of an entry's script: trace label, rank and op name, made safe ('t__003_aten_mm.py')."""
    label = re.sub(r"\.json(\.gz)?$", "", entry["trace"])
    stem = f"{label}__{entry['rank']:03d}_{entry['op_name']}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._")[:120] + ".py"


def script_text(entry: dict | None) -> str:
    """A script that replays one entry (``entry``), or, with None, every entry of replay_ir.json beside it."""
    from tracesql.escape import py_str

    head = runtime_source()
    if entry is None:
        tail = '\n\nif __name__ == "__main__":\n    sys.exit(main())\n'
    else:
        tail = ("\n\nENTRY = json.loads(" + py_str(json.dumps(entry, indent=1)) + ")\n\n"
                'if __name__ == "__main__":\n    sys.exit(main(entries=[ENTRY]))\n')
    return head + tail


def write_files(doc: dict, out: Path | str) -> None:
    """Write the IR ``doc`` (see ir) as OUT/replay_ir.json, one script per replayable entry (its name in the
    entry's "script") and OUT/replay.py, which runs every entry. Each file is written whole (a temporary file
    renamed into place)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names: set[str] = set()
    for e in doc["entries"]:
        e["script"] = None
        if e["unreplayable"] is None:
            name = script_name(e)
            while name in names:  # two traces whose labels differ only in the characters made safe
                name = name[:-3] + "_.py"
            names.add(name)
            e["script"] = name
            _write_whole(out / name, script_text(e))
    _write_whole(out / "replay_ir.json", json.dumps(doc, indent=1) + "\n")
    _write_whole(out / "replay.py", script_text(None))


def write(ds, out: Path | str, trace: str | None = None, op: str | None = None,
          top: int | None = DEFAULT_TOP) -> dict:
    """ir() written into the folder ``out`` (write_files); returns the IR."""
    doc = ir(ds, trace, op, top)
    write_files(doc, out)
    return doc
