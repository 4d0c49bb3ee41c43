"""HTA 0.5.0's critical_path_analysis(rank, <first ProfilerStep user annotation>, instance_id=0) on one trace, the
breakdown's duration summed per bound_by, written as OUT/critical_path_summary.csv. Run in HTA's own environment."""
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
shutil.copy(src, os.path.join(d, "rank-0.json.gz"))
with gzip.open(src, "rt") as f:
    doc = json.load(f)
ann = next(e["name"] for e in doc["traceEvents"]
           if e.get("cat") == "user_annotation" and "ProfilerStep" in e.get("name", ""))
rank = (doc.get("distributedInfo") or {}).get("rank", 0)
graph, ok = TraceAnalysis(trace_dir=d).critical_path_analysis(rank=rank, annotation=ann, instance_id=0)
summary = graph.get_critical_path_breakdown().groupby("bound_by").duration.sum()
os.makedirs(out, exist_ok=True)
summary.to_csv(os.path.join(out, "critical_path_summary.csv"))
print(ann, rank, summary.to_dict())
