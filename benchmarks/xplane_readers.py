"""XPlane readers side by side: tracesql's (protobuf runtime + the trace JSON of ingest/xplane.py) against jaxlib's
own reader (`jax.profiler.ProfileData`, every event and statistic touched) and JAX's JSON export of the same file
(`ProfilerSession.export`, which wrote ../shared/traces/jax/mi300_conv_trace.json.gz), on one input.

Run in a virtual environment that has jax (CPU build) and tracesql's dependencies:

    python -m venv /tmp/xpvenv && /tmp/xpvenv/bin/pip install jax==0.10.2 protobuf orjson && \\
    PYTHONPATH=. /tmp/xpvenv/bin/python benchmarks/xplane_readers.py tests/data/jax/mi300_conv.xplane.pb --copies 64

--copies N makes the input N times larger by repeating every line of every plane N times, shifted in time (the
real file is 0.27 MB). Prints CPU seconds per reader (best of --repeat runs) and what each one gives.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/timing.py
from timing import best_cpu  # noqa: E402


def _grow(data: bytes, copies: int) -> bytes:
    from tracesql.ingest import xplane

    space = xplane._classes()["XSpace"]()
    space.ParseFromString(data)
    for plane in space.planes:
        lines = list(plane.lines)
        if not lines:
            continue
        span_ps = max((ev.offset_ps + ev.duration_ps for ln in lines for ev in ln.events), default=0) + 1
        for k in range(1, copies):
            for ln in lines:
                new = plane.lines.add()
                new.CopyFrom(ln)
                for ev in new.events:
                    ev.offset_ps += k * span_ps
    return space.SerializeToString()



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("xplane")
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    from tracesql.ingest import xplane

    data = open(a.xplane, "rb").read()
    if a.copies > 1:
        data = _grow(data, a.copies)
    print(f"input: {len(data) / 1e6:.1f} MB of XSpace ({a.copies} copies of {a.xplane})")

    out = xplane.trace_json("x.xplane.pb", data)
    t_ours = best_cpu(lambda: xplane.trace_json("x.xplane.pb", data), a.repeat)
    print(f"tracesql ingest/xplane.trace_json: {t_ours:.3f} s CPU -> {len(out) / 1e6:.1f} MB of trace JSON "
          "(events, args, HLO instructions)")

    try:
        from jax._src.lib import _profile_data  # noqa: F401
        from jax.profiler import ProfileData
    except ImportError:
        print("jax is not installed here: only tracesql's reader was timed")
        return

    def walk() -> int:
        n = 0
        pd = ProfileData.from_serialized_xspace(data)
        for plane in pd.planes:
            for line in plane.lines:
                for ev in line.events:
                    _ = (ev.name, ev.start_ns, ev.duration_ns, list(ev.stats))
                    n += 1
        return n

    n = walk()
    t_pd = best_cpu(walk, a.repeat)
    print(f"jaxlib ProfileData (every event, name, times, stats): {t_pd:.3f} s CPU for {n:,} events; "
          "the HLO modules (the metadata plane's 'Hlo Proto' statistics) are not reachable through it")

    import glob
    import os
    import tempfile

    from jax._src.lib import _profiler

    with tempfile.TemporaryDirectory() as tmp:
        def export() -> None:  # what the shared JSON traces were made with: <tmp>/plugins/profile/<run>/*.json.gz
            _profiler.ProfilerSession().export(data, tmp)

        t_x = best_cpu(export, a.repeat)
        out_files = glob.glob(os.path.join(tmp, "**", "*.trace.json.gz"), recursive=True)
        size = sum(os.path.getsize(f) for f in out_files) / 1e6
        print(f"jaxlib ProfilerSession.export (XSpace -> <host>.trace.json.gz): {t_x:.3f} s CPU -> {size:.1f} MB gzip "
              "(no HLO modules, no program ids, no allocator records)")


if __name__ == "__main__":
    main()
