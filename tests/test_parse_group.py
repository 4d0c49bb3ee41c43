"""Small files of one ingest run are parsed in groups (tracesql/ingest/parse_group.py): one read and one write per
table for many files. What is stored must not depend on it: every table of a file parsed with others equals the
same table of the file ingested alone, row for row, with the same counts and issues; a file the group cannot take,
or one that fails, is parsed alone and fails alone."""
from __future__ import annotations

import gzip
import importlib
import shutil
from pathlib import Path

import duckdb
import orjson
import pytest

from tests.test_batch_build import _differences
from tracesql.ingest.parse_group import Group
from tracesql.ingest.read import ReadMode

ingest_mod = importlib.import_module("tracesql.ingest")

# small real traces of different kinds: Kineto from NVIDIA and AMD, an args integer beyond int64, JAX
# (complete events without a category, /device: processes), a Perfetto-style JAX CPU trace, a truncated file
# (salvaged), ranks of one job
FILES = ["nvidia/hta_triton_example.json.gz", "nvidia/hta_large_integer.json.gz", "jax/mi300_conv_trace.json.gz",
         "jax/cpu_perfetto_trace.json.gz", "damaged/alexnet_truncated_json.json.gz",
         "amd/mi300_torch_compile_triton.json.gz", "multirank/dlrm_8rank/rank3.json.gz"]


def _hand_made(d: Path) -> list[Path]:
    """Files made here: events with the fields Kineto does not write ({} and null elements, an event of no known
    phase, a counter, an instant, a second traceEvents), a ts of 16 digits (exact text), and a gzip copy."""
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 10.5, "dur": 4,
               "args": {"External id": 7, "Input Dims": [[2, 3], [3, 4]]}},
              {}, None,
              {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 11,
               "dur": 1, "args": {"correlation": 5, "External id": 7}},
              {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 13, "dur": 2.25,
               "args": {"correlation": 5, "device": 0, "stream": 7, "grid": [1, 2, 3]}},
              {"ph": "C", "name": "mem", "pid": 1, "ts": 12, "args": {"bytes": 3}},
              {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 12, "s": "t"},
              {"ph": "Q", "name": "odd phase", "pid": 1, "tid": 2, "ts": 14},
              {"ph": "X", "cat": "cpu_op", "name": "neg", "pid": 1, "tid": 3, "ts": 20, "dur": -1}]
    plain = d / "hand_plain.json"
    plain.write_bytes(b'{"schemaVersion": 1, "traceEvents": ' + orjson.dumps(events)
                      + b', "traceEvents": [{"ph": "X"}], "distributedInfo": {"rank": 3}}')
    exact = d / "hand_exact.json"
    exact.write_bytes(b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, '
                      b'"ts": 1234567890123456.789, "dur": 3.001}, {"ph": "X", "cat": "cpu_op", "name": "b", '
                      b'"pid": 1, "tid": 1, "ts": 1234567890123457.001, "dur": 1}]}')
    gz = d / "hand_plain_copy.json.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes().replace(b'"rank": 3', b'"rank": 4')))
    return [plain, exact, gz]


@pytest.fixture(scope="module")
def files(tmp_path_factory, shared_traces) -> list[Path]:
    d = tmp_path_factory.mktemp("small")
    out = []
    for f in FILES:
        p = d / f.replace("/", "_")
        shutil.copyfile(shared_traces / f, p)
        out.append(p)
    return out + _hand_made(d)


@pytest.fixture(scope="module")
def alone(tmp_path_factory, files) -> tuple[Path, list]:
    """Each file ingested by itself (a run of one file: parsed alone)."""
    ds = tmp_path_factory.mktemp("alone") / "ds"
    results = []
    for f in files:
        results += ingest_mod.ingest(str(f), out=ds, salvage=True)
    assert [r.status for r in results] == ["ingested"] * len(files)
    return ds, results


def _summary(r) -> tuple:
    return (r.trace_id, r.row_counts, r.events_read, r.skipped, r.noted, r.truncated, r.rank, r.unlinked)


def test_files_parsed_together_store_what_each_stores_alone(tmp_path, files, alone, monkeypatch):
    groups: list[list[tuple[str, ReadMode]]] = []
    real = Group.parse

    def seen(self, con, work):
        got = real(self, con, work)  # parsed together (an error would send each file alone)
        groups.append([(Path(m.path).name, m.mode) for m in self.members])
        return got

    monkeypatch.setattr(Group, "parse", seen)
    results = ingest_mod.ingest([str(f) for f in files], out=tmp_path / "ds", salvage=True)
    assert [r.status for r in results] == ["ingested"] * len(files)
    # one group of all of them, read in two modes
    assert [[n for n, _ in g] for g in groups] == [[f.name for f in files]]
    modes = dict(groups[0])
    # ts of 16 digits (µs since the epoch) are read as their exact text
    assert {n for n, m in modes.items() if m is ReadMode.EXACT} == {
        "hand_exact.json", "damaged_alexnet_truncated_json.json.gz", "multirank_dlrm_8rank_rank3.json.gz"}
    ds_alone, results_alone = alone
    by_path = {Path(r.path).name: _summary(r) for r in results_alone}
    assert {Path(r.path).name: _summary(r) for r in results} == by_path
    diff = _differences(tmp_path / "ds", ds_alone)
    for t, (_n, only_a, only_b) in diff.items():
        assert (only_a, only_b) == (0, 0), (t, diff[t])
    # the hand-made file's counts and issues: two skipped elements, the ignored second traceEvents, a kept
    # negative duration
    plain = next(r for r in results if Path(r.path).name == "hand_plain.json")
    assert plain.row_counts["events"] == 3 and plain.row_counts["kernels"] == 1
    assert plain.row_counts["launches"] == 1 and plain.row_counts["counters"] == 1
    assert plain.row_counts["other_events"] == 1 and plain.row_counts["instants"] == 1
    assert plain.skipped == {"empty_event": 2}
    assert plain.noted == {"ignored_second_trace_events": 1, "kept_negative_duration": 1}
    assert plain.rank == 3 and plain.events_read == 9
    truncated = next(r for r in results if Path(r.path).name == "damaged_alexnet_truncated_json.json.gz")
    assert truncated.truncated and truncated.noted == {"truncated_tail": 1}
    # event ids and exact ns as parsed alone
    con = duckdb.connect()
    got = con.execute(f"""SELECT event_id, name, ts_ns, dur_ns FROM read_parquet(
        '{tmp_path}/ds/traces/trace_id={next(r.trace_id for r in results if r.path.endswith('hand_exact.json'))}'
        || '/events/*.parquet') ORDER BY event_id""").fetchall()
    con.close()
    assert got == [(0, "a", 1234567890123456789, 3001), (1, "b", 1234567890123457001, 1000)]
    assert not list((tmp_path / "ds" / ".staging").iterdir())


def test_a_file_the_group_cannot_take_or_that_fails_is_parsed_alone(tmp_path, files, alone, monkeypatch):
    """Files that need the careful read, are malformed, empty or missing are parsed alone, and fail alone; the
    others are parsed together."""
    d = tmp_path / "in"
    d.mkdir()
    careful = d / "b_careful.json"
    careful.write_bytes(b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "s", "pid": 1, "tid": 1, '
                        b'"ts": "12.5", "dur": 2}]}')
    broken = d / "c_broken.json"
    broken.write_bytes(b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "s", "pid": 1, "tid": 1, '
                       b'"ts": 1, "dur": 2}, {"ph": "X", "name": tru}]}')
    empty = d / "d_empty.json"
    empty.write_bytes(b'{"traceEvents": []}')
    good = [d / "a_good.json.gz", d / "e_good.json.gz"]
    shutil.copyfile(files[0], good[0])
    shutil.copyfile(files[5], good[1])
    paths = [str(good[0]), str(careful), str(broken), str(empty), str(good[1]), str(d / "f_missing.json")]
    want = {p: ingest_mod.ingest(p, out=tmp_path / f"alone_{i}") for i, p in enumerate(paths)}
    groups: list[list[tuple[str, str]]] = []
    real = Group.parse

    def seen(self, con, work):
        got = real(self, con, work)
        groups.append([(Path(m.path).name, type(p).__name__) for m, p in zip(self.members, got, strict=True)])
        return got

    monkeypatch.setattr(Group, "parse", seen)
    results = ingest_mod.ingest(paths, out=tmp_path / "ds")
    # the careful and the empty file are not taken; the group's read fails on the broken one, found by halving
    # the group, and parses the good ones together
    assert groups == [[("a_good.json.gz", "ParsedTrace"), ("c_broken.json", "NoneType"),
                       ("e_good.json.gz", "ParsedTrace")]]
    assert [r.status for r in results] == ["ingested", "ingested", "failed", "failed", "ingested", "failed"]
    for r in results:
        w = want[r.path][0]
        assert (r.status, r.error, r.trace_id, r.row_counts, r.noted) == (w.status, w.error, w.trace_id,
                                                                           w.row_counts, w.noted)
    assert results[1].noted == {"repaired_string_time": 1}
    assert "rerun with --salvage" in results[2].error and "traceEvents is empty" in results[3].error
    assert not list((tmp_path / "ds" / ".staging").iterdir())


def test_a_group_that_fails_together_is_parsed_file_by_file(tmp_path, files, alone, monkeypatch):
    """Should the group's read or writes fail, nothing of it is kept and each file is parsed alone."""
    real = Group._parse_mode

    def fails(self, con, members, mode, work):
        real(self, con, members, mode, work)  # the files are written, then the group fails
        raise duckdb.IOException("forced failure of a group's parse")

    monkeypatch.setattr(Group, "_parse_mode", fails)
    results = ingest_mod.ingest([str(f) for f in files], out=tmp_path / "ds", salvage=True)
    assert [r.status for r in results] == ["ingested"] * len(files)
    ds_alone, results_alone = alone
    assert sorted(_summary(r) for r in results) == sorted(_summary(r) for r in results_alone)
    diff = _differences(tmp_path / "ds", ds_alone)
    for t, (_n, only_a, only_b) in diff.items():
        assert (only_a, only_b) == (0, 0), (t, diff[t])
    assert not list((tmp_path / "ds" / ".staging").iterdir())
