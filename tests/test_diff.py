"""Two traces compared (sql/diff/, `tracesql diff`, Dataset.diff).

The dataset holds nvidia/h100_qwen_infer (the baseline), a hand-made variant of it and amd/mi300_qwen_infer. The
variant is the same JSON in which every GPU event launched by one aten::mm call (picked through the call tree:
the first call on the argument set with the most GPU time; it launches a memset and a GEMM) lasts SLOW_NS longer,
and every later event of the GPU stream starts later by as much, so that nothing else changes. Each level of the
diff must put exactly that change on top, and a trace against itself must be all zeros.
"""
from __future__ import annotations

import gzip
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import orjson
import pytest

import tracesql

SLOW_NS = 123_457  # per GPU event of the chosen op
LEVELS = ("timeline", "categories", "ops", "op_args", "kernels")


def _ns(us) -> int:
    """A Chrome-trace time (µs) in ns as the ingest reads it: its decimal text times 1000, rounded."""
    return int((Decimal(repr(us)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _us(ns: int) -> float:
    """ns as a µs value whose shortest text reads back as exactly those ns."""
    return ns / 1000


def _slowed_copy(src: Path, dst: Path, chosen: set[int]) -> None:
    """Write ``src`` to ``dst`` with every GPU event whose correlation id is in ``chosen`` made SLOW_NS longer,
    the events of the GPU streams after it moved later by as much (events spanning its end, such as a
    gpu_user_annotation, lengthened). Nothing on the CPU moves."""
    doc = orjson.loads(gzip.open(src).read())
    events = doc["traceEvents"]
    gpu_cats = ("kernel", "gpu_memcpy", "gpu_memset")
    streams = {(e["pid"], e["tid"]) for e in events if e.get("cat") in gpu_cats}
    slowed = [e for e in events if e.get("cat") in gpu_cats and e.get("args", {}).get("correlation") in chosen]
    assert len(slowed) == len(chosen)
    ends = sorted(_ns(e["ts"]) + _ns(e["dur"]) for e in slowed)
    ids = {id(e) for e in slowed}
    for e in events:
        if (e.get("pid"), e.get("tid")) not in streams or "ts" not in e:
            continue
        ts = _ns(e["ts"])
        end = ts + _ns(e["dur"]) if "dur" in e else ts
        shift = SLOW_NS * sum(1 for c in ends if c <= ts)
        grow = SLOW_NS if id(e) in ids else SLOW_NS * sum(1 for c in ends if ts < c < end)
        if shift:
            e["ts"] = _us(ts + shift)
        if grow:
            e["dur"] = _us(end - ts + grow)
    with gzip.open(dst, "wb") as f:
        f.write(orjson.dumps(doc))


@pytest.fixture(scope="module")
def pair(tmp_path_factory, shared_traces):
    """(dataset, base trace_id, variant trace_id, mi300 trace_id, the chosen op's GPU events)."""
    work = tmp_path_factory.mktemp("diff")
    out = work / "ds"
    src = shared_traces / "nvidia/h100_qwen_infer.json.gz"
    (b, m) = tracesql.ingest([str(src), str(shared_traces / "amd/mi300_qwen_infer.json.gz")], out=out, quiet=True)
    with tracesql.open(out) as ds:
        # the op: the first aten::mm call (by start) on the aten::mm argument set with the most GPU time
        args = ds.sql("""SELECT input_dims, input_type, input_strides, concrete_inputs FROM op_arg_summary
                         WHERE trace_id = $t AND op_name = 'aten::mm' ORDER BY kernel_time_sum_ns DESC LIMIT 1""",
                      {"t": b.trace_id}).row(0)
        events = ds.sql("""
            WITH calls AS (
                SELECT g.op_event_id, min(g.ts_ns) AS first_ns FROM gpu_event_ops g
                JOIN _op_args a ON a.trace_id = g.trace_id AND a.event_id = g.op_event_id
                WHERE g.trace_id = $t AND g.op_name = 'aten::mm' AND coalesce(a.input_dims, '') = $d
                  AND coalesce(a.input_type, '') = $ty AND coalesce(a.input_strides, '') = $st
                  AND coalesce(a.concrete_inputs, '') = $ci
                GROUP BY g.op_event_id)
            SELECT g.correlation, g.name, g.cat, g.dur_ns FROM gpu_event_ops g
            WHERE g.trace_id = $t AND g.op_event_id = (SELECT op_event_id FROM calls ORDER BY first_ns LIMIT 1)
            ORDER BY g.ts_ns""", {"t": b.trace_id, "d": args[0], "ty": args[1], "st": args[2], "ci": args[3]})
    assert events.height == 2 and sorted(events["cat"]) == ["gpu_memset", "kernel"]
    variant = work / "h100_qwen_slowed.json.gz"
    _slowed_copy(src, variant, set(events["correlation"]))
    (v,) = tracesql.ingest([str(variant)], out=out, quiet=True)
    assert v.status == "ingested"
    return out, b.trace_id, v.trace_id, m.trace_id, events, args


def test_a_trace_against_itself_is_all_zeros(pair):
    out, base, _, mi300, _, _ = pair
    with tracesql.open(out) as ds:
        for tid in (base, mi300):
            for level in LEVELS:
                df = ds.diff(tid, tid, level=level)
                assert df.height > 0
                assert set(df["side"]) == {"both"}, level
                assert df["diff_ns"].abs().max() == 0, level
                assert (df["base_ns"] == df["variant_ns"]).all() and (df["base_count"] == df["variant_count"]).all()
        sizes = {level: ds.diff(base, base, level=level).height for level in LEVELS}
    # the levels of h100_qwen_infer: 8 timeline measures, its categories, 21 op names, argument sets, short names
    assert sizes["timeline"] == 8 and sizes["ops"] == 21


def test_the_slowed_op_is_on_top_of_every_level(pair):
    out, base, variant, _, events, args = pair
    with tracesql.open(out) as ds:
        d = ds.diff(base, variant)
        short = dict(ds.sql("SELECT DISTINCT name, coalesce(short_name, name) FROM _gpu_names").rows())
        cats = dict(ds.sql("SELECT name, kernel_category FROM kernel_name_categories WHERE ruleset = 'default'").rows())
    n = events.height  # the memset and the GEMM of the call
    for level in LEVELS:
        assert set(d[level]["side"]) == {"both"}, level  # nothing appears or disappears
    changed = {lv: {r[0]: r[-2] for r in d[lv].filter(d[lv]["diff_ns"] != 0).select(
        d[lv].columns[0], "diff_ns", "ratio").rows()} for lv in ("timeline", "categories", "ops", "kernels")}
    # the GPU stream does 2 × SLOW_NS more work and ends that much later; one of them is memory (the memset)
    assert changed["timeline"] == {"span": n * SLOW_NS, "busy": n * SLOW_NS, "compute": SLOW_NS,
                                   "memory": SLOW_NS, "memory_exposed": SLOW_NS}
    assert list(d["timeline"]["measure"][:2]) == ["span", "busy"]
    assert changed["categories"] == {cats[name]: SLOW_NS for name in events["name"]} == {"GEMM": SLOW_NS,
                                                                                         "memset": SLOW_NS}
    assert changed["ops"] == {"aten::mm": n * SLOW_NS}
    assert changed["kernels"] == {short[name]: SLOW_NS for name in events["name"]}
    top = d["op_args"].row(0, named=True)
    assert (top["op_name"], top["input_dims"], top["input_type"], top["input_strides"], top["concrete_inputs"],
            top["diff_ns"]) == ("aten::mm", *args, n * SLOW_NS)
    assert d["op_args"]["diff_ns"].abs()[1:].max() == 0
    b = top["base_ns"]
    assert top["variant_ns"] == b + n * SLOW_NS and top["ratio"] == pytest.approx((b + n * SLOW_NS) / b, rel=1e-12)
    assert top["base_count"] == top["variant_count"] == 48  # the calls on that argument set (2 per layer)
