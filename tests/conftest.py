"""Shared fixtures: the real traces in ../shared/traces, ingested once per test session."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TRACESQL_SHARED", ROOT.parent / "shared"))
TRACES = SHARED / "traces"
REFERENCE = SHARED / "reference"

DAMAGED = {"damaged/alexnet_truncated_json.json.gz", "damaged/alexnet_truncated_gzip.json.gz"}


def all_trace_files() -> list[str]:
    """Relative paths (e.g. 'nvidia/h100_qwen_infer.json.gz') of every shared trace."""
    if not TRACES.is_dir():
        return []
    return sorted(str(p.relative_to(TRACES)) for p in TRACES.rglob("*.json.gz"))


def good_trace_files() -> list[str]:
    return [t for t in all_trace_files() if t not in DAMAGED]


@pytest.fixture(scope="session")
def shared_traces() -> Path:
    if not TRACES.is_dir():
        pytest.skip(f"shared traces not found at {TRACES} (set TRACESQL_SHARED)")
    return TRACES


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip(f"shared reference outputs not found at {REFERENCE}")
    return REFERENCE


@pytest.fixture(scope="session")
def all_dataset(tmp_path_factory, shared_traces):
    """Every undamaged shared trace ingested into one dataset. Returns (path, {relative path: trace_id})."""
    import tracesql

    out = tmp_path_factory.mktemp("all") / "ds"
    files = [str(shared_traces / t) for t in good_trace_files()]
    results = tracesql.ingest(files, out=out)
    failed = [r.error for r in results if r.status != "ingested"]
    assert not failed, failed
    ids = {str(Path(r.path).relative_to(shared_traces)): r.trace_id for r in results}
    return out, ids


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
