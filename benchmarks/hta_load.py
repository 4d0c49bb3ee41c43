#!/usr/bin/env python3
"""Load one trace with Holistic Trace Analysis (HTA) and time it.

Run with the interpreter of the HTA environment (see hta_env.sh):

    benchmarks/.hta-venv/bin/python benchmarks/hta_load.py benchmarks/data/qwen_500m.json

HTA discovers traces in a directory, so the file is symlinked as ``rank-0.json``
(or ``rank-0.json.gz``) into a temporary directory.  The script times the two
steps a user of HTA would run -- building ``TraceAnalysis`` (parsing the JSON
into pandas frames) and ``get_temporal_breakdown()`` -- and prints the result,
then a final machine-readable line::

    HTA_RESULT {"load_s": ..., "breakdown_s": ..., "total_s": ..., "maxrss_kb": ...}

``maxrss_kb`` is this process's own peak resident set size.
``HTA_DISABLE_NS_ROUNDING=1`` keeps HTA from rounding timestamps to whole µs,
the setting the reference outputs in ../shared/reference/hta were made with.
"""

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

# Must be in place before HTA reads its options.
os.environ.setdefault("HTA_DISABLE_NS_ROUNDING", "1")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    trace = Path(sys.argv[1]).resolve()
    if not trace.is_file():
        print(f"no such trace file: {trace}", file=sys.stderr)
        return 2

    t_import = time.perf_counter()
    import pandas as pd
    from hta.trace_analysis import TraceAnalysis

    import_s = time.perf_counter() - t_import

    suffix = ".json.gz" if trace.name.endswith(".gz") else ".json"
    with tempfile.TemporaryDirectory(prefix="hta-bench-") as tmp:
        os.symlink(trace, Path(tmp) / f"rank-0{suffix}")

        t0 = time.perf_counter()
        analyzer = TraceAnalysis(trace_dir=tmp)
        t1 = time.perf_counter()
        breakdown = analyzer.get_temporal_breakdown(visualize=False)
        t2 = time.perf_counter()

    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(breakdown.to_string(index=False))
    result = {
        "trace": str(trace),
        "import_s": round(import_s, 3),
        "load_s": round(t1 - t0, 3),
        "breakdown_s": round(t2 - t1, 3),
        "total_s": round(t2 - t0, 3),
        # ru_maxrss is in KiB on Linux.
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    print(f"HTA load {result['load_s']:.1f} s + temporal breakdown "
          f"{result['breakdown_s']:.1f} s = {result['total_s']:.1f} s, "
          f"peak RSS {result['maxrss_kb'] / 2**20:.2f} GiB")
    print("HTA_RESULT " + json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
