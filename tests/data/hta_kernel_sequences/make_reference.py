"""Write HTA 0.5.0's frequent CUDA kernel sequences of one trace and one operator as HTA writes them.

Run with the interpreter of HTA's own environment (benchmarks/hta_env.sh), from the repository root:

    HTA_DISABLE_NS_ROUNDING=1 benchmarks/.hta-venv/bin/python tests/data/hta_kernel_sequences/make_reference.py \
        TRACE OPERATOR MIN_PATTERN_LEN OUT.csv [--dump FRAME.csv]

The trace is linked as rank-0 into a fresh directory (HTA reads a directory of rank files), and
TraceAnalysis.get_frequent_cuda_kernel_sequences(OPERATOR, <tmp>, MIN_PATTERN_LEN, rank, top_k=5,
visualize=False) is written with DataFrame.to_csv. --dump also writes HTA's trace frame of that rank with its call
stack columns (to compare the intermediate steps).
"""
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HTA_DISABLE_NS_ROUNDING", "1")


def main() -> int:
    args = sys.argv[1:]
    dump = None
    if "--dump" in args:
        i = args.index("--dump")
        dump = args[i + 1]
        del args[i:i + 2]
    trace, op, min_len, out = Path(args[0]).resolve(), args[1], int(args[2]), args[3]
    from hta.trace_analysis import TraceAnalysis

    suffix = ".json.gz" if trace.name.endswith(".gz") else ".json"
    with tempfile.TemporaryDirectory(prefix="hta-seq-") as tmp:
        d = Path(tmp) / "trace"
        d.mkdir()
        os.symlink(trace, d / f"rank-0{suffix}")
        t = TraceAnalysis(trace_dir=str(d))
        rank = t.t.get_ranks()[0]
        df = t.get_frequent_cuda_kernel_sequences(op, tmp, min_pattern_len=min_len, rank=rank, top_k=5,
                                                  visualize=False)
        df.to_csv(out)
        if dump:
            f = t.t.get_trace(rank).copy()
            f["name"] = f["name"].map(t.t.symbol_table.get_sym_table().__getitem__)
            f[["index", "name", "pid", "tid", "stream", "ts", "dur", "depth", "parent", "num_kernels",
               "kernel_dur_sum", "index_correlation"]].to_csv(dump, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
