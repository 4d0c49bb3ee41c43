"""The traces of one ingest run are built together (tracesql.ingest.Batch): one run of the derived-table build
for all of them. What is stored must not depend on it: every table of a trace built with others equals the same
table of the trace built alone, row for row."""
from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import duckdb
import pytest

from tracesql.store.schema import DERIVED_TABLES, TABLES

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

ingest_mod = importlib.import_module("tracesql.ingest")

# real traces of different kinds: ranks of one job, NVIDIA and AMD inference, a CUDA-graph capture, JAX
FILES = ["multirank/dlrm_8rank/rank0.json.gz", "multirank/dlrm_8rank/rank1.json.gz",
         "nvidia/h100_qwen_infer.json.gz", "amd/mi300_qwen_infer.json.gz",
         "graphs/vllm_decode_full/capture_rank0.json.gz", "jax/mi300_conv_trace.json.gz"]

# columns that record when and how long, not what
_VOLATILE = {"traces": "EXCLUDE (ingest_seconds, ingested_at)"}


def _rows(ds: Path, table: str) -> str:
    return (f"SELECT * {_VOLATILE.get(table, '')} FROM read_parquet('{ds}/traces/*/{table}/*.parquet', "
            "hive_partitioning = true, union_by_name = true)")


def _differences(a: Path, b: Path) -> dict[str, tuple[int, int, int]]:
    """{table: (rows in a, rows only in a, rows only in b)} for every table."""
    con = duckdb.connect()
    out = {}
    for t in TABLES:
        n = con.execute(f"SELECT count(*) FROM ({_rows(a, t)})").fetchall()[0][0]
        only_a = con.execute(f"SELECT count(*) FROM (({_rows(a, t)}) EXCEPT ALL ({_rows(b, t)}))").fetchall()[0][0]
        only_b = con.execute(f"SELECT count(*) FROM (({_rows(b, t)}) EXCEPT ALL ({_rows(a, t)}))").fetchall()[0][0]
        out[t] = (n, only_a, only_b)
    con.close()
    return out


@pytest.fixture(scope="module")
def alone(tmp_path_factory, shared_traces) -> Path:
    """Each trace ingested by itself (a run of one file: built alone)."""
    ds = tmp_path_factory.mktemp("alone") / "ds"
    for f in FILES:
        r = ingest_mod.ingest(str(shared_traces / f), out=ds)
        assert [x.status for x in r] == ["ingested"]
    return ds


def test_traces_built_together_store_what_each_stores_alone(tmp_path, shared_traces, alone, monkeypatch):
    calls = []
    real = ingest_mod.__dict__["build_derived"]

    def counted(out, *a, **k):
        calls.append(1 if isinstance(out, Path) else len(out))
        return real(out, *a, **k)

    monkeypatch.setattr(ingest_mod, "build_derived", counted)
    results = ingest_mod.ingest([str(shared_traces / f) for f in FILES], out=tmp_path / "ds")
    assert [r.status for r in results] == ["ingested"] * len(FILES)
    # one build for the first five traces: the CUDA-graph capture (32 MiB of JSON, over BUILD_ALONE_JSON_BYTES) is
    # built at once with the four staged before it; the JAX trace after it is built on its own at the end
    assert ingest_mod.BUILD_ALONE_JSON_BYTES < 32 << 20 < ingest_mod.BATCH_JSON_BYTES
    assert calls == [5, 1]
    diff = _differences(tmp_path / "ds", alone)
    for t, (_n, only_a, only_b) in diff.items():
        assert (only_a, only_b) == (0, 0), (t, diff[t])
    # every CPU duration event nested, every GPU event linked or not (the six traces' own counts)
    assert (diff["cpu_nesting"][0], diff["gpu_launch_links"][0]) == (155_401, 4_056)
    assert diff["traces"][0] == len(FILES)
    assert {r.rank for r in results[:2]} == {0, 1}
    # thread keys and nesting positions are numbered within each trace, from 1
    con = duckdb.connect()
    firsts = con.execute(f"""SELECT trace_id, min(thread_key), min(nest_pos)
                             FROM ({_rows(tmp_path / 'ds', 'cpu_nesting')}) GROUP BY trace_id""").fetchall()
    con.close()
    assert len(firsts) == len(FILES)
    assert {(k, p) for _, k, p in firsts} == {(1, 1)}


def test_a_build_that_fails_together_is_run_for_each_trace_alone(tmp_path, shared_traces, alone, monkeypatch):
    """Should the build of several traces fail, each is built alone: only a trace that fails alone fails."""
    real = ingest_mod.__dict__["build_derived"]

    def fails_together(out, *a, **k):
        if not isinstance(out, Path):
            raise duckdb.InvalidInputException("forced failure of a build of several traces")
        return real(out, *a, **k)

    monkeypatch.setattr(ingest_mod, "build_derived", fails_together)
    results = ingest_mod.ingest([str(shared_traces / f) for f in FILES[:3]], out=tmp_path / "ds")
    assert [r.status for r in results] == ["ingested"] * 3
    con = duckdb.connect()
    for t in DERIVED_TABLES:
        got = con.execute(f"SELECT count(*) FROM ({_rows(tmp_path / 'ds', t)})").fetchall()[0][0]
        want = con.execute(f"""SELECT count(*) FROM ({_rows(alone, t)})
                               WHERE trace_id IN (SELECT trace_id FROM ({_rows(tmp_path / 'ds', 'traces')}))""")
        assert got == want.fetchall()[0][0], t
    con.close()
    assert not list((tmp_path / "ds" / ".staging").iterdir())


def test_the_same_content_twice_in_one_run(tmp_path, shared_traces):
    """Two files with the same bytes staged in one batch: the second is a duplicate of the first."""
    a = tmp_path / "a.json.gz"
    b = tmp_path / "b.json.gz"
    shutil.copyfile(shared_traces / FILES[2], a)
    shutil.copyfile(shared_traces / FILES[2], b)
    results = ingest_mod.ingest([str(a), str(b)], out=tmp_path / "ds")
    assert [r.status for r in results] == ["ingested", "duplicate"]
    assert results[0].trace_id == results[1].trace_id
    assert [d.name for d in (tmp_path / "ds" / "traces").iterdir()] == [f"trace_id={results[0].trace_id}"]
    assert results[1].summary_line() == (f"b.json.gz: already in the dataset as trace {results[0].trace_id} "
                                         "(same content hash); skipped")
