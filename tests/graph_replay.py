"""CUDA/HIP-graph replay traces made from a real eager Kineto trace, with exact ground truth.

make_replay() folds one or more regions of the main launching CPU thread into graph launches, the way a real
graph replay looks in a Kineto trace: on the CPU thread one cudaGraphLaunch (hipGraphLaunch on ROCm) runtime event
and no cpu_op / python_function / launch events for the work of the graph; on the GPU every kernel, gpu_memcpy
and gpu_memset of the graph carries the correlation of the graph launch, and ac2g flows link them.

A region is a time interval [t0, t1] (integer ns) on the main launching thread that covers a contiguous run of
top-level cpu_ops of the first ProfilerStep. Chosen by default: the longest run of top-level ops of the step,
excluding its last op, that holds no synchronizing call (a graph cannot capture one); `regions=k` cuts that run
into k consecutive pieces of (nearly) equal op counts, each folded into its own graph launch.

Only the standard library and orjson are used: the generator does not depend on tracesql.
"""
from __future__ import annotations

import gzip
from bisect import bisect_left
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import orjson

GPU_WORK = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
GRAPH_LAUNCH_CBID = {"cudaGraphLaunch": 311}  # CUPTI runtime callback id of cudaGraphLaunch
LAUNCH_DUR_NS = 10_000


def ns(v: Any) -> int:
    """A Kineto µs value (number or numeric string, up to 3 decimals) as integer ns, exact on the decimal text."""
    return int((Decimal(str(v)) * 1000).to_integral_value(ROUND_HALF_UP))


def us(v: int) -> int | float:
    """Integer ns as the µs number Kineto writes (orjson prints the shortest text: the exact decimal)."""
    return v // 1000 if v % 1000 == 0 else float(Decimal(v) / 1000)


def load(src: Path) -> dict:
    raw = Path(src).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = orjson.loads(raw)
    return doc if isinstance(doc, dict) else {"traceEvents": doc}


def _span(e: dict) -> tuple[int, int] | None:
    """(start, end) ns of an X or instant event with a timestamp, else None."""
    if e.get("ph") not in ("X", "i", "I") or "ts" not in e:
        return None
    t = ns(e["ts"])
    return t, t + (ns(e.get("dur", 0)) if e.get("ph") == "X" else 0)


def _innermost(containers: list[tuple[int, int, int]], queries: list[tuple[int, int, int]]) -> dict[int, int]:
    """For each query (start, end, index) the index of the innermost container (start, end, index) holding it
    (c.start <= q.start and q.end <= c.end; innermost: latest start, then earliest end). One thread's events."""
    items = [(s, -e, 0, i) for s, e, i in containers] + [(s, -e, 1, i) for s, e, i in queries]
    items.sort()
    stack: list[tuple[int, int, int]] = []
    found: dict[int, int] = {}
    for s, neg_e, kind, i in items:
        e = -neg_e
        while stack and stack[-1][1] < s:
            stack.pop()
        if kind == 0:
            stack.append((s, e, i))
            continue
        for cs, ce, ci in reversed(stack):
            if cs <= s and e <= ce:
                found[i] = ci
                break
    return found


def _is_sync(name: str) -> bool:
    n = name.lower()
    return "synchronize" in n or (("memcpy" in n) and not n.endswith("async")) or "streamwait" in n


def main_thread(evs: list[dict]) -> tuple[Any, Any]:
    """(pid, tid) of the CPU thread whose runtime/driver calls launch the most GPU work."""
    gpu_corr = {(e.get("args") or {}).get("correlation") for e in evs if e.get("cat") in GPU_WORK}
    counts: dict[tuple[Any, Any], int] = {}
    for e in evs:
        if e.get("cat") in LAUNCH_CATS and e.get("ph") == "X" and (e.get("args") or {}).get("correlation") in gpu_corr:
            key = (e.get("pid"), e.get("tid"))
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        raise ValueError("no CPU launch of GPU work in the trace")
    return max(counts, key=lambda k: (counts[k], -list(counts).index(k)))


def default_regions(evs: list[dict], thread: tuple[Any, Any], k: int) -> list[tuple[int, int]]:
    """k consecutive regions (t0_ns, t1_ns) of top-level cpu_ops of the first ProfilerStep on the thread."""
    on_thread = [(i, e) for i, e in enumerate(evs) if (e.get("pid"), e.get("tid")) == thread]
    steps = [_span(e) for _, e in on_thread
             if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#")]
    s0, s1 = steps[0] if steps and steps[0] else (-(1 << 62), 1 << 62)
    ops: list[tuple[int, int, int]] = []
    for i, e in on_thread:
        if e.get("cat") == "cpu_op" and (sp := _span(e)) and s0 <= sp[0] and sp[1] <= s1:
            ops.append((sp[0], sp[1], i))
    ops.sort(key=lambda o: (o[0], -o[1], o[2]))
    top: list[tuple[int, int, int]] = []
    for o in ops:
        if not top or o[0] >= top[-1][1]:
            top.append(o)
    top = top[:-1]  # through the op before the last
    syncs = sorted(sp[0] for _, e in on_thread
                   if e.get("cat") in LAUNCH_CATS and _is_sync(str(e.get("name", ""))) and (sp := _span(e)))
    # longest run of top-level ops holding no synchronizing call (first of equal runs)
    best: tuple[int, int] = (0, 0)
    start = 0
    for j, (a, b, _) in enumerate(top + [(0, 0, -1)]):
        has_sync = j == len(top)
        if not has_sync:
            p = bisect_left(syncs, a)
            has_sync = p < len(syncs) and syncs[p] <= b
        if has_sync:
            if j - start > best[1] - best[0]:
                best = (start, j)
            start = j + 1
    run = top[best[0]:best[1]]
    if len(run) < k:
        raise ValueError(f"only {len(run)} top-level ops to fold into {k} regions")
    cuts = [len(run) * r // k for r in range(k + 1)]
    return [(run[cuts[r]][0], max(o[1] for o in run[cuts[r]:cuts[r + 1]])) for r in range(k)]


def make_replay(src: Path, out: Path, *, regions: int | list = 1, node_ids: str | None = None,
                annotate: bool = False, api: str | None = None) -> dict:
    """Write to `out` the trace `src` with region(s) of its main launching thread folded into graph launches.

    regions: a number k of default regions (see the module doc), or a list of (t0_ns, t1_ns) intervals on the main
    launching thread. node_ids: None, "low32" ("graph node id" = k) or "packed" ("graph node id" = G << 32 | k),
    with "graph id" = G (1, 2, ... per graph launch) and k the 1-based node index in launch order. annotate: each
    graphed GPU event gets args "name" = its innermost enclosing user_annotation, else cpu_op (needs node_ids).
    api: the graph launch's name (default cudaGraphLaunch, hipGraphLaunch for a ROCm source).

    Returns the ground truth: {"graphs": [{"launch_index", "correlation", "graph_id", "t0_ns", "t1_ns", "events":
    [{"out_index", "src_index", "name", "op_name", "op_src_index", "annotation", "launch_src_index"}, ...]}],
    "removed", "removed_flows", "source_events", "output_events", "thread"}.
    """
    if node_ids not in (None, "low32", "packed"):
        raise ValueError(f"node_ids: {node_ids!r}")
    if annotate and node_ids is None:
        raise ValueError("annotate needs node_ids")
    doc = load(src)
    evs: list[dict] = doc["traceEvents"]
    thread = main_thread(evs)
    if api is None:
        rocm = "roctracer_version" in doc or any(
            e.get("cat") in LAUNCH_CATS and str(e.get("name", "")).startswith("hip") for e in evs)
        api = "hipGraphLaunch" if rocm else "cudaGraphLaunch"
    spans = default_regions(evs, thread, regions) if isinstance(regions, int) else [
        (int(a), int(b)) for a, b in regions]
    spans = sorted(spans)
    for (_, prev_end), (next_start, _) in zip(spans, spans[1:], strict=False):
        if next_start <= prev_end:
            raise ValueError("regions overlap")

    # events of the main thread, their spans, and which region holds each entirely
    thread_spans: dict[int, tuple[int, int]] = {}
    for i, e in enumerate(evs):
        if (e.get("pid"), e.get("tid")) == thread and (sp := _span(e)):
            thread_spans[i] = sp
    starts = [a for a, _ in spans]

    def region_of(sp: tuple[int, int]) -> int | None:
        r = bisect_left(starts, sp[0] + 1) - 1
        return r if r >= 0 and spans[r][0] <= sp[0] and sp[1] <= spans[r][1] else None

    removed: dict[int, int] = {}  # source index -> region
    for i, sp in thread_spans.items():
        r = region_of(sp)
        if r is not None:
            removed[i] = r

    # launches (correlated runtime/driver calls) on the thread, and what encloses them
    launch_by_corr: dict[Any, int] = {}
    for i in thread_spans:
        e = evs[i]
        c = (e.get("args") or {}).get("correlation")
        if e.get("cat") in LAUNCH_CATS and e.get("ph") == "X" and c is not None:
            launch_by_corr.setdefault(c, i)
    queries = [(*thread_spans[i], i) for i in launch_by_corr.values()]
    ops = [(*thread_spans[i], i) for i in thread_spans if evs[i].get("cat") == "cpu_op" and evs[i].get("ph") == "X"]
    anns = [(*thread_spans[i], i) for i in thread_spans
            if evs[i].get("cat") == "user_annotation" and evs[i].get("ph") == "X"]
    op_of = _innermost(ops, queries)
    ann_of = _innermost(anns, queries)

    # new correlations above every id in use
    used: list[int] = [0]
    for e in evs:
        for v in ((e.get("args") or {}).get("correlation"), e.get("id")):
            if isinstance(v, int) and not isinstance(v, bool):
                used.append(v)
    base = max(used) + 1
    new_corr = [base + r for r in range(len(spans))]
    removed_corr: set[Any] = {(evs[i].get("args") or {}).get("correlation") for i in removed} - {None}

    # graphed GPU events, per region in launch order
    members: list[list[int]] = [[] for _ in spans]
    for i, e in enumerate(evs):
        if e.get("cat") in GPU_WORK and e.get("ph") == "X":
            li = launch_by_corr.get((e.get("args") or {}).get("correlation"))
            if li is not None and li in removed:
                members[removed[li]].append(i)
    for r, m in enumerate(members):
        m.sort(key=lambda i: (thread_spans[launch_by_corr[evs[i]["args"]["correlation"]]][0],
                              launch_by_corr[evs[i]["args"]["correlation"]], i))
        if not m:
            raise ValueError(f"region {r} {spans[r]} holds no GPU work")

    node_of: dict[int, tuple[int, int]] = {}  # GPU source index -> (region, 1-based node)
    for r, m in enumerate(members):
        for k, i in enumerate(m, 1):
            node_of[i] = (r, k)

    out_evs: list[dict] = []
    out_index: dict[int, int] = {}
    removed_flows = 0
    for i, e in enumerate(evs):
        if i in removed:
            continue
        if e.get("cat") == "ac2g" and e.get("ph") in ("s", "f", "t") and e.get("id") in removed_corr:
            removed_flows += 1
            continue
        if i in node_of:
            r, k = node_of[i]
            g = r + 1
            args = dict(e["args"])
            args["correlation"] = new_corr[r]
            args.pop("External id", None)
            if node_ids is not None:
                args["graph id"] = g
                args["graph node id"] = (g << 32) | k if node_ids == "packed" else k
            if annotate:
                li = launch_by_corr[e["args"]["correlation"]]
                holder = ann_of.get(li, op_of.get(li))
                if holder is not None:
                    args["name"] = evs[holder]["name"]
            e = {**e, "args": args}
        out_index[i] = len(out_evs)
        out_evs.append(e)

    pid, tid = thread
    graphs = []
    for r, (t0, t1) in enumerate(spans):
        launch_args: dict[str, Any] = {"correlation": new_corr[r]}
        if api in GRAPH_LAUNCH_CBID:
            launch_args["cbid"] = GRAPH_LAUNCH_CBID[api]
        launch_index = len(out_evs)
        out_evs.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": pid, "tid": tid, "ts": us(t0),
                        "dur": us(min(LAUNCH_DUR_NS, t1 - t0)), "args": launch_args})
        graphs.append({"launch_index": launch_index, "correlation": new_corr[r], "graph_id": r + 1,
                       "t0_ns": t0, "t1_ns": t1, "events": [
                           {"out_index": out_index[i], "src_index": i, "name": evs[i].get("name"),
                            "op_name": evs[op_of[li]]["name"] if li in op_of else None,
                            "op_src_index": op_of.get(li),
                            "annotation": evs[ann_of[li]]["name"] if li in ann_of else None,
                            "launch_src_index": li}
                           for i in members[r] for li in [launch_by_corr[evs[i]["args"]["correlation"]]]]})
    for r, (t0, _) in enumerate(spans):
        out_evs.append({"ph": "s", "id": new_corr[r], "pid": pid, "tid": tid, "ts": us(t0), "cat": "ac2g",
                        "name": "ac2g"})
        for i in members[r]:
            e = evs[i]
            out_evs.append({"ph": "f", "id": new_corr[r], "pid": e.get("pid"), "tid": e.get("tid"), "ts": e["ts"],
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})

    out_doc = {**doc, "traceEvents": out_evs}
    data = orjson.dumps(out_doc)
    out = Path(out)
    out.write_bytes(gzip.compress(data, compresslevel=1) if out.name.endswith(".gz") else data)
    return {"graphs": graphs, "removed": len(removed), "removed_flows": removed_flows, "source_events": len(evs),
            "output_events": len(out_evs), "thread": thread}
