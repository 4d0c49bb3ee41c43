"""Shared fixtures: the real traces in ../shared/traces, ingested once per test session.

Without ../shared (or $TRACESQL_SHARED) the session fails at once: most checks compare against the real traces
and the peers' outputs, and a run that skipped them would look green. TRACESQL_NO_SHARED=1 runs the tests that
need no shared files and skips the rest.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TRACESQL_SHARED", ROOT.parent / "shared"))
TRACES = SHARED / "traces"
REFERENCE = SHARED / "reference"
NO_SHARED = os.environ.get("TRACESQL_NO_SHARED", "") not in ("", "0")

# Traces with a TraceLens kernel_summary / short-kernel reference: (folder under reference/tracelens, trace).
TRACELENS_KERNEL_REFS = [
    ("nvidia/h100_qwen_infer", "nvidia/h100_qwen_infer.json.gz"),
    ("nvidia/h100_bert_small_infer", "nvidia/h100_bert_small_infer.json.gz"),
    ("nvidia/h100_falconsai_infer", "nvidia/h100_falconsai_infer.json.gz"),
    ("amd/mi300_qwen_infer", "amd/mi300_qwen_infer.json.gz"),
    ("amd/mi300_bert_small_infer", "amd/mi300_bert_small_infer.json.gz"),
    ("amd/mi300_normalization", "amd/mi300_normalization.json.gz"),
    ("amd/mi300_torch_compile_triton", "amd/mi300_torch_compile_triton.json.gz"),
    ("amd/mi210_gpu_only", "amd/mi210_gpu_only.json.gz"),
]
# ... plus the graph replay, which has a gpu_timeline / ops reference only.
TRACELENS_REFS = TRACELENS_KERNEL_REFS + [
    ("graphs/vllm_decode_full", "graphs/vllm_decode_full/graph_execution.json.gz"),
]

DAMAGED = {"damaged/alexnet_truncated_json.json.gz", "damaged/alexnet_truncated_gzip.json.gz"}


def all_trace_files() -> list[str]:
    """Relative paths (e.g. 'nvidia/h100_qwen_infer.json.gz') of every shared trace."""
    if not TRACES.is_dir():
        return []
    return sorted(str(p.relative_to(TRACES)) for p in TRACES.rglob("*.json.gz"))


def good_trace_files() -> list[str]:
    return [t for t in all_trace_files() if t not in DAMAGED]


def _missing_shared() -> list[Path]:
    return [d for d in (TRACES, REFERENCE) if not d.is_dir()]


def pytest_sessionstart(session):
    missing = _missing_shared()
    if missing and not NO_SHARED:
        raise pytest.UsageError(
            f"shared test files not found: {', '.join(map(str, missing))}. Put shared/ (traces/, reference/) beside "
            "the repository or set TRACESQL_SHARED to its path; TRACESQL_NO_SHARED=1 runs only the tests that need "
            "no shared files.")


# Session fixtures that ingest every shared trace (half a minute, then the analysis views over all of them): a
# test using any of them, directly or through another fixture, is slow.
ALL_TRACES_FIXTURES = {"all_dataset", "ds", "trace_ids"}


# The test files that take longest (their tests' seconds summed from `--durations` of a full run on two workers),
# longest first. They are run first: with `-n 2` each file runs whole on one worker (--dist loadfile), and a
# long file taken last would leave the other worker idle for its length.
LONGEST_FIRST = ["test_critical_path.py", "test_cli_everyday.py", "test_diff.py", "test_archive_dask.py",
                 "test_bad_input.py", "test_perf_model.py", "test_tl_perf_models.py", "test_tl_compare.py",
                 "test_reports.py", "test_replay.py", "test_tl_perf_infer.py", "test_ingest.py",
                 "test_tl_ops_unique_args.py", "test_graph_twins.py", "test_report_html.py", "test_analysis_ops.py",
                 "test_hostile_names.py", "test_categories.py", "test_atomic.py", "test_parallel_ingest.py",
                 "test_fuzz.py", "test_null_names.py", "test_tl_perf_sheets.py", "test_no_hidden_state.py",
                 "test_archive.py", "test_sqlmodules.py", "test_summary.py", "test_derived.py",
                 # then files whose costliest test or module fixture takes 15-30 s (a full run's --durations), which
                 # would otherwise run last in name order
                 "test_tl_attn.py", "test_report_scale.py", "test_export.py", "test_tl_class_map.py",
                 "test_tl_arch.py", "test_tl_infer_ext.py", "test_tl_capture.py", "test_docs.py",
                 "test_collectives.py", "test_peer_rules.py", "test_tl_moe.py", "test_tl_gemm_ext.py",
                 "test_tl_sglang_ops.py"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if ALL_TRACES_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's tests stay in order


def _shared_dir(path: Path) -> Path:
    if not path.is_dir():  # without TRACESQL_NO_SHARED=1, pytest_sessionstart has stopped the run already
        if NO_SHARED:
            pytest.skip(f"{path} not found (TRACESQL_NO_SHARED=1)")
        pytest.fail(f"{path} not found (set TRACESQL_SHARED)")
    return path


@pytest.fixture(scope="session")
def shared_traces() -> Path:
    return _shared_dir(TRACES)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    return _shared_dir(REFERENCE)


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """A directory that ``build`` fills, made once per test run. With pytest-xdist the first worker to ask builds it
    in the run's base directory, under a lock, and the other workers wait for it and read it: a costly session
    fixture is not built again on each worker."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        d = tmp_path_factory.mktemp(name)
        build(d)
        return d
    root = tmp_path_factory.getbasetemp().parent  # the run's, shared by its workers
    d, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():  # (a worker whose build failed left no mark: the next one builds it again)
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir()
            build(d)
            done.touch()
    return d


@pytest.fixture(scope="session")
def all_dataset(tmp_path_factory, shared_traces):
    """Every undamaged shared trace ingested into one dataset. Returns (path, {relative path: trace_id})."""
    import tracesql

    def build(d: Path) -> None:
        files = [str(shared_traces / t) for t in good_trace_files()]
        results = tracesql.ingest(files, out=d / "ds")
        failed = [r.error for r in results if r.status != "ingested"]
        assert not failed, failed
        ids = {str(Path(r.path).relative_to(shared_traces)): r.trace_id for r in results}
        (d / "trace_ids.json").write_text(json.dumps(ids))

    d = built_once(tmp_path_factory, "all", build)
    return d / "ds", json.loads((d / "trace_ids.json").read_text())


@pytest.fixture(scope="session")
def ds(all_dataset):
    """tracesql.Dataset over all undamaged shared traces."""
    import tracesql

    d = tracesql.open(all_dataset[0])
    yield d
    d.close()


@pytest.fixture(scope="session")
def trace_ids(all_dataset) -> dict[str, str]:
    """{'nvidia/h100_qwen_infer.json.gz': trace_id, ...}"""
    return all_dataset[1]


@pytest.fixture(scope="session")
def qwen_dataset(tmp_path_factory, shared_traces) -> tuple[Path, str]:
    """A dataset of one real trace (nvidia/h100_qwen_infer, 384 KB): (path, trace_id). Quick enough for the fast
    tier."""
    import tracesql

    out = tmp_path_factory.mktemp("qwen") / "ds"
    (r,) = tracesql.ingest([str(shared_traces / "nvidia/h100_qwen_infer.json.gz")], out=out, quiet=True)
    assert r.status == "ingested" and r.trace_id is not None
    return out, r.trace_id


# The hand-made traces of TraceLens's models (tests/data/tl_*/), ingested into one dataset and each TraceLens-style
# report written once over all of them, as one folder per trace (named by the file's stem). Such a report costs
# about 15 s of CPU however small its traces (the peer library bound on its connection), so the sheet tests read
# these folders instead of a report each (built once per run, whichever worker of `-n 2` asks first).
TL_HANDMADE = ["tl_gemm_ext/te_v2_gemm.json", "tl_gemm_ext/conv_bias.json", "tl_gemm_ext/moe_fused.json",
               "tl_moe/moe_ops.json", "tl_moe/moe_aiter_fused.json", "tl_moe/moe_gptq_awq.json",
               "tl_attn/perf_ops.json", "tl_attn/infer_ops.json", "tl_class_map/class_map.json",
               "tl_sglang_ops/sglang_ops.json", "tl_perf_models/perf_models.json"]


@pytest.fixture(scope="session")
def tl_handmade(tmp_path_factory) -> Path:
    """The dataset of every TL_HANDMADE trace."""
    from tracesql.cli import main

    def build(d: Path) -> None:
        assert main(["ingest", "-q", *[str(ROOT / "tests" / "data" / f) for f in TL_HANDMADE],
                     "--out", str(d / "ds")]) == 0

    return built_once(tmp_path_factory, "tl_handmade", build) / "ds"


@pytest.fixture(scope="session")
def tl_handmade_perf(tmp_path_factory, tl_handmade) -> Path:
    """`tracesql report --style tracelens --out DIR` (TraceLens's perf report) of tl_handmade: DIR/<stem> per trace."""
    from tracesql.cli import main

    def build(d: Path) -> None:
        assert main(["report", str(tl_handmade), "--style", "tracelens", "--out", str(d / "out")]) == 0

    return built_once(tmp_path_factory, "tl_handmade_perf", build) / "out"


@pytest.fixture(scope="session")
def tl_handmade_infer(tmp_path_factory, tl_handmade) -> Path:
    """The TraceLens-style inference report (`--group-by-parent-module --pseudo-ops`) of tl_handmade, likewise."""
    from tracesql.cli import main

    def build(d: Path) -> None:
        assert main(["report", str(tl_handmade), "--style", "tracelens", "--group-by-parent-module", "--pseudo-ops",
                     "--out", str(d / "out")]) == 0

    return built_once(tmp_path_factory, "tl_handmade_infer", build) / "out"


# ---- no traceback from any tracesql run -------------------------------------------------------------------------
# docs/cli.md promises one error line, never a traceback. Every run of the command line that a test makes through
# subprocess (run, check_output, Popen.communicate: they all read the output through Popen.communicate) is checked:
# a Python traceback on its stderr (or its stdout, when stderr goes there) fails the test, unless the test is marked
# @pytest.mark.traceback_expected. The pseudo-terminal runs of tests/terminal.py are checked there.

def is_tracesql_run(args) -> bool:
    """Whether a subprocess's args run the tracesql command line (the installed script, python -m tracesql.cli, or a
    shell command naming either)."""
    if isinstance(args, (str, bytes, os.PathLike)):
        text = os.fsdecode(args)
        return "tracesql" in text and ("tracesql.cli" in text or "/tracesql " in text or text.startswith("tracesql "))
    parts = [os.fsdecode(a) for a in args]
    if not parts:
        return False
    if Path(parts[0]).name == "tracesql" or "tracesql.cli" in parts[1:3]:
        return True
    return Path(parts[0]).name in ("bash", "sh") and any(is_tracesql_run(p) for p in parts[1:])


@pytest.fixture(autouse=True)
def _no_traceback_in_cli_runs(request, monkeypatch):
    import subprocess

    if request.node.get_closest_marker("traceback_expected"):
        yield
        return
    seen: list[str] = []
    request.node.cli_tracebacks = seen  # what was seen so far (tests/test_cli_errors.py checks the check)
    real = subprocess.Popen.communicate

    def communicate(self, *a, **kw):
        out, err = real(self, *a, **kw)
        if is_tracesql_run(self.args):
            stream = err if err is not None else out  # stdout only when stderr goes there
            text = os.fsdecode(stream) if isinstance(stream, bytes) else (stream or "")
            at = text.find("Traceback (most recent call last)")
            if at >= 0:  # the traceback and what follows it, up to 3,000 characters
                seen.append(f"{self.args!r}:\n{text[at:at + 3000]}")
        return out, err

    monkeypatch.setattr(subprocess.Popen, "communicate", communicate)
    yield
    if seen:
        pytest.fail("a tracesql run printed a traceback (mark the test traceback_expected if it must):\n"
                    + "\n".join(seen), pytrace=False)


def tracesql_cli() -> list[str]:
    """The command that runs the installed CLI in a subprocess."""
    exe = Path(sys.executable).with_name("tracesql")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tracesql.cli"]


def init_sql_view(ds: Path, view: str) -> str:
    """The statement of DATASET/init.sql that defines one table view (the analysis views after it are skipped:
    binding them all is slow)."""
    m = re.search(rf"^CREATE OR REPLACE VIEW {view} AS .*?;$", (ds / "init.sql").read_text(), re.M | re.S)
    assert m, f"no view {view} in init.sql"
    return m.group()
