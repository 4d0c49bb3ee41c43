#!/usr/bin/env python3
"""Measure ``tracesql ingest`` on large traces (and optionally HTA on the same file).

    # measure given files
    python benchmarks/run_ingest.py benchmarks/data/qwen_1g.json

    # generate replicated traces if missing (benchmarks/data/qwen_<size>.json), measure each
    python benchmarks/run_ingest.py --sizes 100MB,1GB,4GB

    # also generate a 500 MB trace and run HTA and tracesql on it, print the ratios
    python benchmarks/run_ingest.py --sizes 100MB,1GB,4GB --hta 500MB

    # A/B against an earlier commit: runs of the two versions alternate (best of --repeat each)
    python benchmarks/run_ingest.py --sizes 1GB --against e10998c --repeat 2

    # the ingest's CPU as a ratio to DuckDB's own JSON reader on the same events (ingest_floor.py), alternating
    python benchmarks/run_ingest.py --sizes 100MB,1GB,4GB --floor --repeat 3

Each measurement runs the tool as a child process: ``tracesql ingest PATH --out
DATASET --quiet`` into a fresh temporary dataset directory (removed afterwards
unless ``--keep``).  Reported per run:

* wall seconds from spawning the child to its exit (interpreter start-up
  included: this is what a user waits for);
* MB/s of *uncompressed* JSON (decimal MB; for ``.json.gz`` the decompressed
  size), and events/s when the generator's ``.stats`` sidecar is present;
* peak RSS of the child, from ``os.wait4``'s resource usage (the same number
  as ``/usr/bin/time -v``'s "Maximum resident set size": the largest RSS of
  the child or any descendant it waited for);
* CPU seconds of the child (user + system, same resource usage, all its
  threads): the work done, which varies much less than wall time when other
  load shares the machine, so it is the number to compare between versions;
* the size of the dataset directory written.

The trace file is read once before each run so that every tool starts with
it in the page cache (``--no-prewarm`` to skip).  With ``--repeat N`` the
fastest of N runs is reported, and the highest peak RSS among them.

With ``--against REV`` the commit REV is checked out in a temporary git worktree and
both versions run from their own source trees (``python -c`` with the tree first on
``sys.path``, the same interpreter and packages), alternating run by run so that both
see the same machine load; the report adds REV's rows and the ratio per trace.

The output is a markdown block (command line, machine, tables) meant to be
pasted into benchmarks/README.md; ``--json-out`` also saves the raw numbers.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata as md
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from make_trace import parse_size  # noqa: E402  (shared size syntax)

DEFAULT_SOURCE = ROOT.parent / "shared" / "traces" / "nvidia" / "h100_qwen_infer.json.gz"
HTA_PYTHON = HERE / ".hta-venv" / "bin" / "python"


# -- helpers -------------------------------------------------------------------
def size_label(n: int) -> str:
    """100_000_000 -> '100m', 4_000_000_000 -> '4g' (used in file names)."""
    for unit, div in (("g", 10**9), ("m", 10**6), ("k", 10**3)):
        if n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def rel(p: Path) -> str:
    """Path as shown in reports: relative to the project root when inside it."""
    try:
        return str(Path(p).resolve().relative_to(ROOT))
    except ValueError:
        return str(p)


def sidecar(path: Path) -> dict | None:
    """Stats written by make_trace.py next to a generated trace, if any."""
    s = path.with_name(path.name + ".stats")
    if not s.is_file():
        return None
    try:
        return json.loads(s.read_text())
    except ValueError:
        return None


def json_bytes(path: Path) -> int:
    """Size of the uncompressed JSON text."""
    meta = sidecar(path)
    if meta and meta.get("file_bytes") == path.stat().st_size:
        return int(meta["json_bytes"])
    if path.name.endswith(".gz"):
        n = 0
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(16 << 20):
                n += len(chunk)
        return n
    return path.stat().st_size


def prewarm(path: Path) -> None:
    """Read the file once so that each tool finds it in the page cache."""
    with open(path, "rb", buffering=0) as fh:
        while fh.read(64 << 20):
            pass


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(cmd: list[str], env: dict | None = None) -> dict:
    """Run cmd as a child; wall seconds, peak RSS (KiB), exit code, output."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        # wait4 reaps exactly this child and returns its own resource usage.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss,
            "rc": proc.returncode, "output": text}


def best_of(runs: list[dict]) -> dict:
    ok = [r for r in runs if r["rc"] == 0]
    if not ok:
        return runs[-1]
    best = dict(min(ok, key=lambda r: r["wall_s"]))
    best["maxrss_kb"] = max(r["maxrss_kb"] for r in ok)
    best["min_cpu_s"] = min(r["cpu_s"] for r in ok)
    best["runs"] = len(runs)
    return best


def fail_note(run: dict) -> str:
    tail = run["output"].strip().splitlines()[-15:]
    return f"exit code {run['rc']}:\n    " + "\n    ".join(tail)


# -- trace preparation -----------------------------------------------------------
def ensure_trace(size: int, args) -> Path:
    """benchmarks/data/<prefix>_<size>.json, generated unless already there."""
    name = f"{args.prefix}_{size_label(size)}.json" + (".gz" if args.gzip else "")
    path = args.data_dir / name
    meta = sidecar(path)
    if (path.is_file() and meta and meta.get("requested_bytes") == size
            and Path(meta.get("source", "")).name == args.source.name
            and meta.get("file_bytes") == path.stat().st_size):
        print(f"using existing {rel(path)}", file=sys.stderr)
        return path
    cmd = [sys.executable, str(HERE / "make_trace.py"), "--source", str(args.source),
           "--size", str(size), "--out", str(path)]
    if args.gzip:
        cmd.append("--gzip")
    print("generating: " + shlex.join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    return path


# -- tools -------------------------------------------------------------------------
def find_tracesql(explicit: str | None) -> str:
    if explicit:
        return explicit
    beside = Path(sys.executable).parent / "tracesql"  # same venv as this script
    if beside.exists():
        return str(beside)
    found = shutil.which("tracesql")
    if not found:
        sys.exit("tracesql not found: install the package (pip install -e .) "
                 "or pass --tracesql PATH")
    return found


def from_tree(tree: Path) -> list[str]:
    """Command that runs the tracesql CLI of the source tree ``tree`` with this interpreter."""
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from tracesql.cli import main; sys.exit(main())"
    return [sys.executable, "-c", code, str(tree)]


def ingest_once(exe: list[str], trace: Path, args) -> dict:
    if not args.no_prewarm:
        prewarm(trace)
    work = Path(tempfile.mkdtemp(prefix="ingest-", dir=args.work_dir))
    dataset = work / "dataset"  # fresh path inside a fresh directory
    try:
        run = measure(exe + ["ingest", str(trace), "--out", str(dataset), "--quiet"])
        run["dataset_bytes"] = dir_bytes(dataset) if dataset.exists() else None
    finally:
        if args.keep:
            print(f"kept dataset {dataset}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return run


def ingest_report_once(exe: list[str], trace: Path, args) -> dict:
    """``tracesql ingest`` then ``tracesql report DATASET --format csv --out DIR``, two child processes: their wall
    and CPU seconds added, the higher peak RSS."""
    if not args.no_prewarm:
        prewarm(trace)
    work = Path(tempfile.mkdtemp(prefix="ingest-report-", dir=args.work_dir))
    try:
        a = measure(exe + ["ingest", str(trace), "--out", str(work / "dataset"), "--quiet"])
        if a["rc"] != 0:
            return a
        b = measure(exe + ["report", str(work / "dataset"), "--format", "csv", "--out", str(work / "report")])
        return {"wall_s": a["wall_s"] + b["wall_s"], "cpu_s": a["cpu_s"] + b["cpu_s"], "rc": b["rc"],
                "maxrss_kb": max(a["maxrss_kb"], b["maxrss_kb"]), "output": a["output"] + b["output"],
                "report_cpu_s": b["cpu_s"]}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_tracesql(exe: list[str], trace: Path, args) -> dict:
    runs = []
    for _ in range(args.repeat):
        runs.append(ingest_once(exe, trace, args))
        if runs[-1]["rc"] != 0:
            break
    return best_of(runs)


def run_ab(exe: list[str], exe_b: list[str], trace: Path, args) -> tuple[dict, dict]:
    """Runs of the two versions alternate; the best of each."""
    runs, runs_b = [], []
    for _ in range(args.repeat):
        runs.append(ingest_once(exe, trace, args))
        runs_b.append(ingest_once(exe_b, trace, args))
        print(f"  run {len(runs)}: this tree {runs[-1]['wall_s']:.1f} s (CPU {runs[-1]['cpu_s']:.1f} s), "
              f"{args.against} {runs_b[-1]['wall_s']:.1f} s (CPU {runs_b[-1]['cpu_s']:.1f} s)", file=sys.stderr)
        if runs[-1]["rc"] != 0 or runs_b[-1]["rc"] != 0:
            break
    return best_of(runs), best_of(runs_b)


def run_floor(trace: Path, args) -> dict:
    """DuckDB's read_json of the trace's events (as NDJSON) into Parquet, in a child process (ingest_floor.py)."""
    from ingest_floor import ensure_ndjson, floor_command

    nd = ensure_ndjson(trace)
    if not args.no_prewarm:
        prewarm(nd)
    return measure(floor_command(nd))


def run_with_floor(exe: list[str], trace: Path, args) -> tuple[dict, dict, list[float]]:
    """Runs of tracesql and of the DuckDB floor alternate; the best of each and the CPU ratio of each pair."""
    runs, floors, ratios = [], [], []
    for _ in range(args.repeat):
        floors.append(run_floor(trace, args))
        runs.append(ingest_once(exe, trace, args))
        ratios.append(runs[-1]["cpu_s"] / floors[-1]["cpu_s"])
        print(f"  run {len(runs)}: tracesql CPU {runs[-1]['cpu_s']:.1f} s, floor CPU {floors[-1]['cpu_s']:.1f} s: "
              f"{runs[-1]['cpu_s'] / floors[-1]['cpu_s']:.2f}×", file=sys.stderr)
        if runs[-1]["rc"] != 0 or floors[-1]["rc"] != 0:
            break
    return best_of(runs), best_of(floors), ratios


class Worktree:
    """A detached git worktree of ``rev`` in a temporary directory, removed on exit."""

    def __init__(self, rev: str):
        self.rev = rev
        self.path = Path(tempfile.mkdtemp(prefix="tracesql-ab-")) / "tree"

    def __enter__(self) -> Path:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(self.path), self.rev],
                       check=True, stdout=sys.stderr)
        return self.path

    def __exit__(self, *exc) -> None:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(self.path)],
                       stdout=sys.stderr, stderr=sys.stderr)
        shutil.rmtree(self.path.parent, ignore_errors=True)


def ensure_hta() -> None:
    if not HTA_PYTHON.exists():
        print("creating the HTA environment (benchmarks/hta_env.sh)", file=sys.stderr)
        subprocess.run(["bash", str(HERE / "hta_env.sh")], check=True, stdout=sys.stderr)


def run_hta(trace: Path, args) -> dict:
    env = dict(os.environ, HTA_DISABLE_NS_ROUNDING="1")
    runs = []
    for _ in range(args.repeat):
        if not args.no_prewarm:
            prewarm(trace)
        run = measure([str(HTA_PYTHON), str(HERE / "hta_load.py"), str(trace)], env=env)
        for line in run["output"].splitlines():
            if line.startswith("HTA_RESULT "):
                run["detail"] = json.loads(line[len("HTA_RESULT "):])
        runs.append(run)
        if run["rc"] != 0:
            break
    return best_of(runs)


# -- report --------------------------------------------------------------------------
def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}"


def versions(with_hta: bool) -> str:
    parts = [f"Python {platform.python_version()}"]
    for pkg in ("tracesql", "duckdb", "orjson", "pyarrow"):
        try:
            parts.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            pass
    if with_hta and HTA_PYTHON.exists():
        code = ("import importlib.metadata as m; print(' '.join("
                "f'{p} {m.version(p)}' for p in ('holistictraceanalysis','pandas','numpy')))")
        out = subprocess.run([str(HTA_PYTHON), "-c", code], capture_output=True, text=True)
        if out.returncode == 0:
            parts.append("HTA env: " + out.stdout.strip())
    return ", ".join(parts)


def mb_text(n: int) -> str:
    mb = n / 1e6
    return f"{mb:,.0f}" if mb >= 10 else f"{mb:.2f}" if mb >= 0.01 else "<0.01"


def fmt_row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def mib(kb) -> str:
    return f"{kb / 1024:,.0f}" if kb else "–"


def cpu_text(run: dict) -> str:
    """CPU seconds of the reported run; with several runs, also the lowest of them."""
    text = f"{run['cpu_s']:.1f}"
    if run.get("runs", 1) > 1 and run.get("min_cpu_s") is not None and run["min_cpu_s"] < run["cpu_s"] - 0.05:
        text += f" (min {run['min_cpu_s']:.1f})"
    return text


def report(rows: list[dict], comparisons: list[dict], args) -> str:
    cmd = "python " + shlex.join([rel(Path(sys.argv[0]))] + sys.argv[1:])
    lines = [
        f"Command: `{cmd}`  ",
        f"Machine: {machine()}  ",
        f"Software: {versions(any('hta' in c for c in comparisons))}  ",
        f"Date: {time.strftime('%Y-%m-%d')}; page cache "
        + ("cold/as-is" if args.no_prewarm else "warm (trace read once before each run)")
        + (f"; best of {args.repeat} runs" if args.repeat > 1 else "; one run each"),
        "",
        fmt_row(["trace", "JSON MB", "events", "tool", "wall s", "MB/s", "events/s", "CPU s",
                 "peak RSS MiB", "dataset MB"]),
        fmt_row(["---", "---:", "---:", "---", "---:", "---:", "---:", "---:", "---:", "---:"]),
    ]
    for r in rows:
        run = r["run"]
        ok = run["rc"] == 0
        mb = r["json_bytes"] / 1e6
        ev = r.get("events")
        lines.append(fmt_row([
            f"`{Path(r['trace']).name}`", f"{mb:,.0f}", f"{ev:,}" if ev else "–", r["tool"],
            f"{run['wall_s']:.1f}" if ok else "FAILED",
            f"{mb / run['wall_s']:,.0f}" if ok else "–",
            f"{ev / run['wall_s']:,.0f}" if ok and ev else "–",
            cpu_text(run) if ok else "–",
            mib(run["maxrss_kb"]) if ok else "–",
            mb_text(run["dataset_bytes"]) if ok and run.get("dataset_bytes") else "–",
        ]))
    for c in comparisons:
        if "floor" in c:
            a, f = c["tracesql"], c["floor"]
            if a["rc"] != 0 or f["rc"] != 0:
                lines += ["", f"`{Path(c['trace']).name}`: floor comparison incomplete: a run failed"]
                continue
            lines += ["", f"`{Path(c['trace']).name}`: tracesql ingest CPU {a['min_cpu_s']:.1f} s, DuckDB floor "
                      f"(read_json of the same events as NDJSON → Parquet) {f['min_cpu_s']:.1f} s: "
                      f"**{a['min_cpu_s'] / f['min_cpu_s']:.2f}×** (lowest CPU of each; runs alternate; "
                      f"per run: " + ", ".join(f"{x:.2f}×" for x in c["ratios"]) + ")"]
            continue
        if "against" in c:
            a, b = c["tracesql"], c["against"]
            if a["rc"] != 0 or b["rc"] != 0:
                lines += ["", f"`{Path(c['trace']).name}`: A/B incomplete: a run failed (see above / stderr)"]
                continue
            lines += ["", f"`{Path(c['trace']).name}`: tracesql {c['rev']} {b['wall_s']:.1f} s, this tree "
                      f"{a['wall_s']:.1f} s: {b['wall_s'] / a['wall_s']:.2f}× (CPU {b['min_cpu_s']:.1f} → "
                      f"{a['min_cpu_s']:.1f} s, lowest of the runs; peak RSS {mib(b['maxrss_kb'])} → "
                      f"{mib(a['maxrss_kb'])} MiB)"]
            continue
        hta, tsql = c["hta"], c["tracesql"]
        lines += ["", f"HTA vs tracesql on `{Path(c['trace']).name}` "
                  f"({c['json_bytes'] / 1e6:,.0f} MB JSON):", ""]
        if hta["rc"] != 0 or tsql["rc"] != 0:
            lines.append("comparison incomplete: a run failed (see above / stderr)")
            continue
        d = hta.get("detail", {})
        lines += [
            fmt_row(["", "HTA 0.5.0 (parse + temporal breakdown)", "tracesql ingest", "ratio HTA / tracesql"]),
            fmt_row(["---", "---:", "---:", "---:"]),
            fmt_row(["wall s", f"{hta['wall_s']:.1f}", f"{tsql['wall_s']:.1f}",
                     f"{hta['wall_s'] / tsql['wall_s']:.1f}×"]),
            fmt_row(["CPU s", f"{hta['min_cpu_s']:.1f}", f"{tsql['min_cpu_s']:.1f}",
                     f"{hta['min_cpu_s'] / tsql['min_cpu_s']:.1f}×"]),
            fmt_row(["peak RSS MiB", mib(hta["maxrss_kb"]), mib(tsql["maxrss_kb"]),
                     f"{hta['maxrss_kb'] / tsql['maxrss_kb']:.1f}×"]),
        ]
        both = c.get("tracesql_report")
        if both and both["rc"] == 0:
            lines += ["", f"tracesql ingest + `report --format csv --out DIR` (two commands): CPU "
                      f"{both['min_cpu_s']:.1f} s (of which the report {both['report_cpu_s']:.1f} s), wall "
                      f"{both['wall_s']:.1f} s: **HTA uses {hta['min_cpu_s'] / both['min_cpu_s']:.1f}× the CPU**."]
        if d:
            lines += ["", f"HTA detail: TraceAnalysis() {d['load_s']:.1f} s, "
                      f"get_temporal_breakdown() {d['breakdown_s']:.1f} s, "
                      f"imports {d['import_s']:.1f} s (wall includes interpreter start-up)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="*", type=Path, help="trace files to measure")
    ap.add_argument("--sizes", help="comma-separated sizes to generate if missing and measure, "
                    "e.g. 100MB,1GB,4GB")
    ap.add_argument("--hta", metavar="SIZE", help="also run HTA and tracesql on a generated "
                    "trace of this size (e.g. 500MB) and print the ratios")
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                    help=f"trace to replicate (default {rel(DEFAULT_SOURCE)})")
    ap.add_argument("--prefix", default=None,
                    help="generated file name prefix (default 'qwen' for the default source, "
                    "else the source's stem)")
    ap.add_argument("--data-dir", type=Path, default=HERE / "data",
                    help="where generated traces live (default benchmarks/data)")
    ap.add_argument("--work-dir", type=Path, default=None,
                    help="where temporary datasets go (default: --data-dir)")
    ap.add_argument("--gzip", action="store_true", help="generate .json.gz traces instead")
    ap.add_argument("--tracesql", help="tracesql executable (default: the one beside this "
                    "interpreter, else PATH)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement; best is kept")
    ap.add_argument("--against", metavar="REV", help="also run the tracesql of git commit REV on every trace, "
                    "alternating with this tree's, and print the ratio")
    ap.add_argument("--floor", action="store_true", help="also time DuckDB's own JSON reader on the same events "
                    "(ingest_floor.py), alternating with the ingest, and print the CPU ratio")
    ap.add_argument("--keep", action="store_true", help="keep the ingested datasets")
    ap.add_argument("--no-prewarm", action="store_true", help="do not pre-read traces")
    ap.add_argument("--json-out", type=Path, help="also write raw results as JSON here")
    args = ap.parse_args(argv)

    if not (args.traces or args.sizes or args.hta):
        ap.error("give trace files, --sizes or --hta")
    if args.prefix is None:
        args.prefix = ("qwen" if args.source.resolve() == DEFAULT_SOURCE.resolve()
                       else args.source.name.split(".")[0])
    args.data_dir.mkdir(parents=True, exist_ok=True)
    args.work_dir = args.work_dir or args.data_dir
    args.work_dir.mkdir(parents=True, exist_ok=True)
    if (args.sizes or args.hta) and not args.source.is_file():
        sys.exit(f"source trace not found: {args.source} (is ../shared present?)")

    exe = [find_tracesql(args.tracesql)]
    traces = [p for p in args.traces]
    for s in (args.sizes.split(",") if args.sizes else []):
        traces.append(ensure_trace(parse_size(s), args))
    hta_trace = ensure_trace(parse_size(args.hta), args) if args.hta else None
    if hta_trace:
        ensure_hta()

    rows, comparisons = [], []

    def add(trace: Path, tool: str, run: dict) -> None:
        meta = sidecar(trace) or {}
        row = {"trace": str(trace), "tool": tool, "json_bytes": json_bytes(trace),
               "events": meta.get("total_events"), "run": run}
        rows.append(row)
        status = f"{run['wall_s']:.1f} s, CPU {run['cpu_s']:.1f} s, {mib(run['maxrss_kb'])} MiB" if run["rc"] == 0 \
            else "FAILED " + fail_note(run)
        print(f"{tool:>8} {rel(trace)}: {status}", file=sys.stderr)

    for trace in traces:
        if not trace.is_file():
            sys.exit(f"no such trace: {trace}")
    if args.against:
        with Worktree(args.against) as tree:
            for trace in traces:
                a, b = run_ab(from_tree(ROOT), from_tree(tree), trace, args)
                add(trace, "tracesql", a)
                add(trace, f"tracesql {args.against}", b)
                comparisons.append({"trace": str(trace), "rev": args.against, "tracesql": a, "against": b})
    elif args.floor:
        for trace in traces:
            a, f, ratios = run_with_floor(exe, trace, args)
            add(trace, "tracesql", a)
            add(trace, "DuckDB floor", f)
            comparisons.append({"trace": str(trace), "floor": f, "tracesql": a, "ratios": ratios})
    else:
        for trace in traces:
            add(trace, "tracesql", run_tracesql(exe, trace, args))
    if hta_trace:
        tsql = next((r["run"] for r in rows if Path(r["trace"]).resolve() == hta_trace.resolve()
                     and r["tool"] == "tracesql"), None)
        if tsql is None:
            tsql = run_tracesql(exe, hta_trace, args)
            add(hta_trace, "tracesql", tsql)
        hta = run_hta(hta_trace, args)
        add(hta_trace, "HTA", hta)
        both = best_of([ingest_report_once(exe, hta_trace, args) for _ in range(args.repeat)])
        add(hta_trace, "tracesql ingest + report", both)
        comparisons.append({"trace": str(hta_trace), "json_bytes": json_bytes(hta_trace),
                            "hta": hta, "tracesql": tsql, "tracesql_report": both})

    text = report(rows, comparisons, args)
    print(text)
    if args.json_out:
        strip = lambda run: {k: v for k, v in run.items() if k != "output"}  # noqa: E731
        args.json_out.write_text(json.dumps({
            "command": sys.argv,
            "rows": [dict(r, run=strip(r["run"])) for r in rows],
            "comparisons": [{k: strip(v) if isinstance(v, dict) else v for k, v in c.items()}
                            for c in comparisons],
        }, indent=2))
    return 0 if all(r["run"]["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
