"""HTA 0.5.0's critical_path_analysis(rank, annotation, instance_id) on one trace, the breakdown's duration summed
per bound_by, written as OUT/critical_path_summary.csv. Run in HTA's own environment.

    make_reference.py TRACE OUT [ANNOTATION INSTANCE_ID]

Without ANNOTATION: the first ProfilerStep user annotation of the file, instance 0. ANNOTATION '' is the whole trace.
"""
import gzip
import json
import os
import shutil
import sys
import tempfile

os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
from hta.trace_analysis import TraceAnalysis  # noqa: E402

src, out = sys.argv[1], sys.argv[2]
d = tempfile.mkdtemp()
shutil.copy(src, os.path.join(d, "rank-0.json.gz" if src.endswith(".gz") else "rank-0.json"))
with (gzip.open(src, "rt") if src.endswith(".gz") else open(src)) as f:
    doc = json.load(f)
if len(sys.argv) > 3:
    ann, instance = sys.argv[3], int(sys.argv[4])
else:
    ann = next(e["name"] for e in doc["traceEvents"]
               if e.get("cat") == "user_annotation" and "ProfilerStep" in e.get("name", ""))
    instance = 0
rank = (doc.get("distributedInfo") or {}).get("rank", 0)
graph, ok = TraceAnalysis(trace_dir=d).critical_path_analysis(rank=rank, annotation=ann, instance_id=instance)
summary = graph.get_critical_path_breakdown().groupby("bound_by").duration.sum()
os.makedirs(out, exist_ok=True)
summary.to_csv(os.path.join(out, "critical_path_summary.csv"))
print(repr(ann), instance, rank, summary.to_dict())
