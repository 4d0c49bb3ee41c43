"""Write HTA 0.5.0's queue length and memory bandwidth summaries of one trace, as HTA's to_csv writes them:

    HTA_DISABLE_NS_ROUNDING=1 benchmarks/.hta-venv/bin/python tests/data/hta_counters/make_reference.py TRACE OUT_DIR

TRACE is copied as rank-0.json.gz into a fresh folder (HTA reads a folder of rank files, and writes beside it);
OUT_DIR gets queue_length_summary.csv and memory_bw_summary.csv."""
import os
import shutil
import sys
import tempfile

from hta.trace_analysis import TraceAnalysis

trace, out = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as d:
    shutil.copy(trace, os.path.join(d, "rank-0.json.gz"))
    ta = TraceAnalysis(trace_dir=d)
    rank = ta.t.get_ranks()[0]
    os.makedirs(out, exist_ok=True)
    ta.get_queue_length_summary(ranks=[rank]).to_csv(os.path.join(out, "queue_length_summary.csv"))
    ta.get_memory_bw_summary(ranks=[rank]).to_csv(os.path.join(out, "memory_bw_summary.csv"))
