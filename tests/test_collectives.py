"""Collectives across the ranks of a job (sql/comm): the gloo job of tests/data/multirank_gloo against the values
its script fixes, the same job with one rank cut short, and the 8 DLRM ranks against TraceLens's NcclAnalyser."""
from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

import tracesql
from tracesql.api import comm

from .conftest import tracesql_cli

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

GLOO = Path(__file__).resolve().parent / "data" / "multirank_gloo"


def _script():
    spec = importlib.util.spec_from_file_location("make_traces", GLOO / "make_traces.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


S = _script()
N = S.WORLD_SIZE
BUSBW_FACTOR = {"all_reduce": 2 * (N - 1) / N, "all_gather": (N - 1) / N, "reduce_scatter": (N - 1) / N,
                "all_to_all": (N - 1) / N, "broadcast": 1.0}


def _expected(kind: str, numel: int) -> tuple[int, int]:
    """(in, out) elements per rank of one PLAN step."""
    if kind == "all_gather":
        return numel, numel * N
    if kind == "reduce_scatter":
        return numel, numel // N
    return numel, numel


def _rows(d, sql: str) -> list[dict]:
    return d.sql(sql).to_dicts()


@pytest.fixture(scope="module")
def gloo(tmp_path_factory):
    out = tmp_path_factory.mktemp("gloo") / "ds"
    results = tracesql.ingest(sorted(str(p) for p in GLOO.glob("rank*.json.gz")), out=out)
    assert [r.status for r in results] == ["ingested"] * N
    d = tracesql.open(out)
    comm.prepare(d)
    yield d
    d.close()


def test_gloo_job_is_found_with_every_rank(gloo):
    jobs = _rows(gloo, "SELECT * FROM comm_jobs")
    assert len(jobs) == 1
    j = jobs[0]
    assert (j["world_size"], j["backend"], j["ranks"], j["missing_ranks"], j["complete"]) == \
        (4, "gloo", [0, 1, 2, 3], [], True)


def test_gloo_instances_carry_the_script_sizes(gloo):
    rows = _rows(gloo, "SELECT * FROM comm_collectives ORDER BY rank, seq")
    assert len(rows) == N * len(S.PLAN)
    for r in rows:
        kind, dtype, numel = S.PLAN[r["seq"] - 1]
        n_in, n_out = _expected(kind, numel)
        assert (r["level"], r["coll_type"], r["coll_type_source"], r["dtype"]) == ("c10d_op", kind, "op", dtype), r
        assert (r["in_nelems"], r["out_nelems"], r["nelems_source"]) == (n_in, n_out, "op"), r
        assert r["in_bytes"] == n_in * S.ITEM_BYTES[dtype] and r["out_bytes"] == n_out * S.ITEM_BYTES[dtype]
        assert r["msg_bytes"] == (0 if kind == "barrier" else max(n_in, n_out) * S.ITEM_BYTES[dtype])
        # CPU backend: the execution is the gloo worker's annotation; no process group is named in these traces
        assert (r["exec_kind"], r["n_exec"], r["pg_name"], r["group_size"], r["group_size_source"]) == \
            ("cpu_annotation", 1, None, N, "world"), r
        assert r["dur_ns"] > 0 and r["stream"] is None and r["kernel_name"] is None


def test_gloo_matching_latency_and_bandwidth(gloo):
    m = _rows(gloo, "SELECT * FROM comm_matched ORDER BY seq")
    assert [(x["seq"], x["coll_type"], x["dtype"], x["status"], x["n_ranks"]) for x in m] == \
        [(i + 1, k, d, "matched", N) for i, (k, d, _) in enumerate(S.PLAN)]
    per_rank = _rows(gloo, "SELECT seq, rank, start_ns, end_ns, dur_ns, wait_ns FROM comm_rank_collectives")
    for x in m:
        mine = [r for r in per_rank if r["seq"] == x["seq"]]
        assert x["latency_ns"] == min(r["dur_ns"] for r in mine)
        assert x["start_skew_ns"] == max(r["start_ns"] for r in mine) - min(r["start_ns"] for r in mine)
        assert x["end_skew_ns"] == max(r["end_ns"] for r in mine) - min(r["end_ns"] for r in mine)
        assert sorted(r["wait_ns"] for r in mine)[0] == 0
        assert x["total_wait_ns"] == sum(r["wait_ns"] for r in mine)
        kind, dtype, numel = S.PLAN[x["seq"] - 1]
        if kind == "barrier":
            continue
        size = max(_expected(kind, numel)) * S.ITEM_BYTES[dtype]
        assert x["algbw_gbps"] == pytest.approx(size / x["latency_ns"], rel=1e-12)
        assert x["busbw_gbps"] == pytest.approx(size / x["latency_ns"] * BUSBW_FACTOR[kind], rel=1e-12)


def test_gloo_delayed_rank_is_the_straggler(gloo):
    seq = S.DELAYED_STEP + 1
    delay_ns = S.DELAY_S * 1e9
    m = _rows(gloo, f"SELECT * FROM comm_matched WHERE seq = {seq}")[0]
    assert m["last_rank"] == S.DELAYED_RANK
    assert abs(m["start_skew_ns"] - delay_ns) < 0.05 * delay_ns
    waits = {r["rank"]: r["wait_ns"]
             for r in _rows(gloo, f"SELECT rank, wait_ns FROM comm_rank_collectives WHERE seq = {seq}")}
    assert waits[S.DELAYED_RANK] == 0
    for rank, w in waits.items():
        if rank != S.DELAYED_RANK:
            assert abs(w - delay_ns) < 0.05 * delay_ns, (rank, w)
    # the latency is the shortest gloo:all_reduce of that size over the ranks, read from the files themselves
    numel = S.PLAN[S.DELAYED_STEP][2]
    durs = []
    for p in sorted(GLOO.glob("rank*.json.gz")):
        ev = [e for e in json.load(gzip.open(p))["traceEvents"]
              if e.get("name") == "gloo:all_reduce" and e.get("args", {}).get("Input Dims") == [[numel]]]
        assert len(ev) == 1
        durs.append(ev[0]["dur"])
    assert m["latency_ns"] == round(min(durs) * 1000)
    summary = _rows(gloo, "SELECT * FROM comm_rank_summary ORDER BY rank")
    assert [r["rank"] for r in summary if r["is_straggler"]] == [S.DELAYED_RANK]
    late = summary[S.DELAYED_RANK]
    assert late["late_ns"] >= m["start_skew_ns"] and late["wait_ns"] < 0.05 * delay_ns
    assert all(r["n_collectives"] == len(S.PLAN) and r["n_missing"] == 0 for r in summary)
    assert all(r["wait_ns"] + r["transfer_ns"] == r["comm_ns"] for r in summary)
    types = {r["coll_type"]: r for r in _rows(gloo, "SELECT * FROM comm_type_summary")}
    assert {k: v["n_collectives"] for k, v in types.items()} == \
        {k: sum(1 for p in S.PLAN if p[0] == k) for k, _, _ in S.PLAN}


CUT_BEFORE = 6   # the truncated rank's file stops just before its 7th collective op


def _cut(src: Path, dst: Path, n_ops: int) -> None:
    """Write src cut short just before the event of its (n_ops + 1)-th c10d:: op, as a crashed profiler would."""
    text = gzip.open(src, "rt").read()
    pos = -1
    for _ in range(n_ops + 1):
        pos = text.index('"name": "c10d::', pos + 1)
    start = text.rindex("{", 0, pos)
    with gzip.open(dst, "wt") as f:
        f.write(text[:start])


@pytest.fixture(scope="module")
def cut(tmp_path_factory):
    src = tmp_path_factory.mktemp("cut")
    for p in GLOO.glob("rank*.json.gz"):
        if p.name != "rank3.json.gz":
            shutil.copy(p, src / p.name)
    _cut(GLOO / "rank3.json.gz", src / "rank3.json.gz", CUT_BEFORE)
    out = src / "ds"
    results = tracesql.ingest(sorted(str(p) for p in src.glob("rank*.json.gz")), out=out, salvage=True)
    assert [r.status for r in results] == ["ingested"] * N
    d = tracesql.open(out)
    comm.prepare(d)
    yield d
    d.close()


def test_cut_rank_missing_collectives_are_counted_not_shifted(cut):
    j = _rows(cut, "SELECT * FROM comm_jobs")[0]
    assert (j["ranks"], j["missing_ranks"], j["truncated_ranks"], j["complete"]) == ([0, 1, 2, 3], [], [3], False)
    m = _rows(cut, "SELECT * FROM comm_matched ORDER BY seq")
    # every position keeps the type of the script: nothing moved up to fill the gap
    assert [x["coll_type"] for x in m] == [k for k, _, _ in S.PLAN]
    assert not [x for x in m if x["status"] == "type_mismatch"]
    tail = m[CUT_BEFORE:]
    assert [(x["status"], x["missing_ranks"], x["n_ranks"], x["latency_ns"]) for x in tail] == \
        [("missing_ranks", [3], 3, None)] * (len(S.PLAN) - CUT_BEFORE)
    head = m[:CUT_BEFORE]
    assert {x["status"] for x in head} <= {"matched", "no_execution"}
    # where rank 3's gloo worker record was lost with the end of the file, only rank 3 lacks the execution
    rank3 = {r["seq"]: r for r in _rows(cut, "SELECT * FROM comm_collectives WHERE rank = 3")}
    assert sorted(rank3) == list(range(1, CUT_BEFORE + 1))
    for x in head:
        assert (x["status"] == "no_execution") == (rank3[x["seq"]]["start_ns"] is None)
        assert x["n_executed"] == (N - 1 if x["status"] == "no_execution" else N)
    s = {r["rank"]: r for r in _rows(cut, "SELECT * FROM comm_rank_summary")}
    assert [s[r]["n_missing"] for r in range(N)] == [0, 0, 0, len(S.PLAN) - CUT_BEFORE]
    assert s[3]["n_collectives"] == CUT_BEFORE
    assert s[0]["n_collectives"] == len(S.PLAN)
    assert s[0]["n_unmatched"] == len(S.PLAN) - sum(1 for x in m if x["status"] == "matched")


# --- the 8 DLRM ranks (V100, NCCL, no collective metadata) ------------------------------------------------------

@pytest.fixture(scope="module")
def dlrm(tmp_path_factory, shared_traces):
    out = tmp_path_factory.mktemp("dlrm") / "ds"
    files = sorted(str(p) for p in (shared_traces / "multirank" / "dlrm_8rank").glob("rank*.json.gz"))
    results = tracesql.ingest(files, out=out)
    assert len(results) == 8
    d = tracesql.open(out)
    comm.prepare(d)
    yield d
    d.close()


def test_dlrm_instances_from_ops_and_kernel_names(dlrm):
    rows = _rows(dlrm, "SELECT * FROM comm_collectives ORDER BY rank, seq")
    assert len(rows) == 64
    r0 = [r for r in rows if r["rank"] == 0]
    assert [r["coll_type"] for r in r0] == ["all_to_all"] * 4 + ["all_reduce", "all_to_all", "all_reduce", "all_reduce"]
    assert {(r["coll_type"], r["algo"], r["proto"], r["stream"]) for r in rows} == \
        {("all_to_all", "RING", "SIMPLE", 84), ("all_reduce", "RING", "LL", 84)}
    # all_reduce_ records no tensor-list shapes: the element count comes from the nccl:all_reduce annotation
    assert [(r["in_nelems"], r["nelems_source"], r["dtype"]) for r in r0 if r["coll_type"] == "all_reduce"] == \
        [(394241, "annotation", "float32"), (112, "annotation", "float32"), (226960, "annotation", "float32")]
    assert [(r["in_nelems"], r["out_nelems"], r["dtype"]) for r in r0[:4]] == \
        [(6144, 6144, "float32"), (24, 24, "int64"), (384, 384, "int32"), (3392, 768, "int32")]


def test_dlrm_matches_tracelens_per_collective(dlrm, reference_dir):
    ref = list(csv.DictReader(open(reference_dir / "tracelens/multirank/dlrm_8rank/nccl_implicit_sync.csv")))
    m = _rows(dlrm, "SELECT * FROM comm_matched ORDER BY seq")
    assert len(m) == len(ref) == 8 and {x["status"] for x in m} == {"matched"}
    per_rank = _rows(dlrm, "SELECT seq, rank, start_ns, dur_ns FROM comm_rank_collectives")
    for x, t in zip(m, ref, strict=True):
        assert x["latency_ns"] == int(t["comm_latency"]) * 1000
        assert x["start_skew_ns"] == int(t["skew in start time"]) * 1000
        assert x["end_skew_ns"] == int(t["skew in end time"]) * 1000
        starts = sorted(int(t[f"rank_{k}_ts"]) for k in range(8))
        if starts[0] < starts[1]:   # TraceLens breaks ties its own way; ours is the lowest rank
            assert x["first_rank"] == int(t["earliest arrival rank"])
        for r in per_rank:
            if r["seq"] == x["seq"]:
                assert (r["start_ns"], r["dur_ns"]) == (int(t[f"rank_{r['rank']}_ts"]) * 1000,
                                                        int(t[f"rank_{r['rank']}_dur"]) * 1000)
    lat = [x["latency_ns"] / 1000 for x in m]
    assert (sum(lat) / 8, min(lat), max(lat)) == (27.125, 7, 86)


def test_dlrm_straggler_is_rank_7(dlrm):
    s = _rows(dlrm, "SELECT * FROM comm_rank_summary ORDER BY rank")
    assert [r["rank"] for r in s if r["is_straggler"]] == [7]
    assert [r["arrived_last"] for r in s] == [0, 0, 0, 0, 1, 2, 0, 5]
    side = _rows(dlrm, "SELECT * FROM comm_ranks_side_by_side ORDER BY rank")
    assert [r["rank"] for r in side if r["bounds_job"]] == [7]
    # GPU communication time per rank is the union of its NCCL kernels: TraceLens's total_nccl_dur_us
    assert [r["gpu_comm_ns"] // 1000 for r in side] == [5798, 11336, 3492, 9774, 6587, 6251, 3558, 1746]


# --- Python and the command line ---------------------------------------------------------------------------------

def test_dataset_methods(gloo):
    by_rank = gloo.collectives(by="rank")
    assert by_rank["rank"][0] == S.DELAYED_RANK and by_rank["is_straggler"].to_list() == [True, False, False, False]
    top = gloo.collectives(top=1)
    assert (top.height, top["seq"][0], top["coll_type"][0]) == (1, S.DELAYED_STEP + 1, "all_reduce")
    assert top["total_wait_us"][0] * 1000 == pytest.approx(
        gloo.sql(f"SELECT total_wait_ns FROM comm_matched WHERE seq = {S.DELAYED_STEP + 1}").item())
    by_type = gloo.collectives(by="type")
    assert dict(zip(by_type["coll_type"], by_type["n_collectives"], strict=True)) == \
        {k: sum(1 for p in S.PLAN if p[0] == k) for k, _, _ in S.PLAN}
    side = gloo.ranks()
    assert side["rank"].to_list() == [0, 1, 2, 3] and side["bounds_job"].to_list() == [False, False, True, False]
    assert side["span_us"].null_count() == 4   # CPU backend: no GPU timeline
    with pytest.raises(tracesql.DatasetError, match="no job 2"):
        gloo.collectives(job=2)
    # a CPU backend has no collective kernels: no TraceLens multi-rank report for it
    assert comm.multirank_jobs(gloo) == [1] and comm.tracelens_jobs(gloo) == []


def test_cli_collectives_and_ranks(dlrm):
    env = dict(os.environ, COLUMNS="120")
    run = [tracesql_cli() + [cmd, str(dlrm.path)] + extra for cmd, extra in
           (("collectives", []), ("ranks", []), ("collectives", ["--by", "rank", "--format", "csv"]))]
    procs = [subprocess.run(a, capture_output=True, text=True, timeout=300, env=env) for a in run]
    assert [p.returncode for p in procs] == [0, 0, 0], [p.stderr for p in procs]
    head = "job 1: 8 of 8 ranks (nccl); 8 collectives: 8 matched on every rank; straggler rank 7"
    for p in procs[:2]:
        lines = p.stdout.splitlines()
        assert lines[0] == head and max(map(len, lines)) <= 120
    rows = list(csv.DictReader(procs[2].stdout.splitlines()))
    assert [r["rank"] for r in rows][0] == "7" and rows[0]["is_straggler"] == "true"
    assert [float(r["late_us"]) for r in rows if r["rank"] == "7"] == [9241.0]
    bad = subprocess.run(tracesql_cli() + ["collectives", str(dlrm.path), "--job", "5"], capture_output=True,
                         text=True, timeout=300, env=env)
    assert bad.returncode == 1 and bad.stderr == "tracesql: error: no job 5 in the dataset (jobs: 1)\n"


def test_collectives_table_keeps_seq_waits_and_busbw(dlrm):
    """At 120 columns: no room for the process group and the missing ranks, empty in every row of the DLRM job
    (both stay in CSV), and seq, the waits and busbw are kept; the skews, first/last rank and algbw give way."""
    env = dict(os.environ, COLUMNS="120")
    p = subprocess.run(tracesql_cli() + ["collectives", str(dlrm.path)], capture_output=True, text=True,
                       timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[1].split() == ["job_id", "seq", "coll_type", "dtype", "msg_bytes", "n_ranks", "status",
                                "latency_us", "mean_wait_us", "total_wait_us", "busbw_gbps"]
    assert lines[3].split() == ["1", "1", "all_to_all", "float32", "24,576", "8", "matched", "10.000", "3,304.500",
                                "26,436.000", "2.150"]
    assert lines[-1] == ("(--wide shows all; 5 columns not shown: start_skew_us, end_skew_us, first_rank, "
                         "last_rank, algbw_gbps)")
    assert max(map(len, lines)) <= 120
    c = subprocess.run(tracesql_cli() + ["collectives", str(dlrm.path), "-f", "csv"], capture_output=True,
                       text=True, timeout=300, env=env)
    rows = list(csv.DictReader(c.stdout.splitlines()))
    assert len(rows) == 8 and {(r["pg"], r["missing_ranks"]) for r in rows} == {("", "")}


def test_missing_ranks_print_readably(cut):
    """The collectives rank 3 lacks: `3` in the table, `3` in CSV (a list of several: `1;3`), a list in JSON."""
    from tracesql.render.output import csv_frame, format_table

    df = comm.collectives(cut)
    tail = df.filter(pl.col("status") == "missing_ranks")
    assert tail.height == len(S.PLAN) - CUT_BEFORE and tail["missing_ranks"].to_list()[0] == [3]
    table = format_table(tail.select("seq", "status", "missing_ranks"), width=120).splitlines()
    assert table[2].split() == [str(tail["seq"][0]), "missing_ranks", "3"]
    assert csv_frame(tail)["missing_ranks"].unique().to_list() == ["3"]
    assert csv_frame(pl.DataFrame({"r": [[1, 3], [], None]})).write_csv() == 'r\n1;3\n""\n\n'
    assert json.loads(tail.write_json())[0]["missing_ranks"] == [3]


# --- TraceLens style: the multi-rank collective report ---------------------------------------------------------

def _same(ref: str, ours) -> bool:
    if ref == "":
        return ours is None or (isinstance(ours, float) and ours != ours)
    if isinstance(ours, bool):
        return ref == str(ours)
    if isinstance(ours, (int, float)):
        return abs(float(ref) - ours) <= 1e-6 * max(1.0, abs(float(ref)))
    return ref == str(ours)


def test_tracelens_multirank_report_equals_reference(dlrm, reference_dir):
    ref_dir = reference_dir / "tracelens/multirank/dlrm_8rank"
    frames = comm.tracelens_frames(dlrm, 1)
    assert sorted(frames) == sorted(p.stem for p in ref_dir.glob("*.csv"))
    for name, df in frames.items():
        rows = list(csv.reader(open(ref_dir / f"{name}.csv")))
        assert df.columns == rows[0], name
        assert df.height == len(rows) - 1, name
        for i, (ref_row, ours) in enumerate(zip(rows[1:], df.rows(), strict=True)):
            bad = [(c, r, o) for c, r, o in zip(df.columns, ref_row, ours, strict=True) if not _same(r, o)]
            assert not bad, (name, i, bad)
    assert frames["nccl_summary_long"].height == 0   # every key missing: pandas' groupby drops the rows
    assert frames["straggler_summary"]["rank"][0] == 7


def test_report_tracelens_writes_the_multirank_files(dlrm, reference_dir, tmp_path):
    env = dict(os.environ, COLUMNS="120")
    proc = subprocess.run(tracesql_cli() + ["report", str(dlrm.path), "--style", "tracelens", "--format", "csv",
                                            "--out", str(tmp_path / "rep")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    from tracesql.api.report import MULTIRANK_FILES
    assert MULTIRANK_FILES == {o.name for o in comm.tracelens_files()}
    ref_dir = reference_dir / "tracelens/multirank/dlrm_8rank"
    job = tmp_path / "rep" / "job1"
    assert sorted(p.name for p in job.iterdir()) == sorted(p.name for p in ref_dir.glob("*.csv"))
    for p in ref_dir.glob("*.csv"):
        ref = list(csv.reader(open(p)))
        ours = list(csv.reader(open(job / p.name)))
        assert ours[0] == ref[0] and len(ours) == len(ref), p.name
        for r_row, o_row in zip(ref[1:], ours[1:], strict=True):
            assert all(_same(r, float(o) if o not in ("", "all", "unknown", "Unknown") else (o or None))
                       for r, o in zip(r_row, o_row, strict=True)), (p.name, r_row, o_row)


# --- traces with collective metadata (one rank each of an NCCL job) ---------------------------------------------

@pytest.fixture(scope="module")
def meta(tmp_path_factory, shared_traces):
    out = tmp_path_factory.mktemp("meta") / "ds"
    files = [str(shared_traces / "nvidia" / f) for f in ("hta_nccl_data.json.gz", "b200_eager_nccl.json.gz")]
    assert [r.status for r in tracesql.ingest(files, out=out)] == ["ingested"] * 2
    d = tracesql.open(out)
    comm.prepare(d)
    yield d
    d.close()


def _nccl_kernels(path: Path) -> list[dict]:
    """The NCCL kernels of a trace file with collective metadata in their args, in file order."""
    return [e for e in json.load(gzip.open(path))["traceEvents"]
            if e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower() and "Collective name" in e["args"]]


def test_metadata_is_taken_from_the_trace(meta, shared_traces):
    jobs = {j["world_size"]: j for j in _rows(meta, "SELECT * FROM comm_jobs")}
    assert (jobs[2]["ranks"], jobs[2]["missing_ranks"], jobs[2]["complete"]) == ([0], [1], False)
    assert jobs[8]["missing_ranks"] == [1, 2, 3, 4, 5, 6, 7]
    size = {"Float": 4, "Long": 8, "BFloat16": 2}
    for world, f in ((2, "hta_nccl_data.json.gz"), (8, "b200_eager_nccl.json.gz")):
        ks = sorted(_nccl_kernels(shared_traces / "nvidia" / f), key=lambda e: e["ts"])
        rows = _rows(meta, f"SELECT c.* FROM comm_collectives c JOIN comm_jobs j USING (job_id) "
                           f"WHERE j.world_size = {world} AND c.level = 'c10d_op' ORDER BY seq")
        assert len(rows) == len(ks) > 0
        for r, k in zip(rows, ks, strict=True):
            a = k["args"]
            assert (r["coll_type_source"], r["dtype_source"], r["nelems_source"], r["group_size_source"]) == \
                ("metadata",) * 4
            assert (r["pg_name"], r["pg_ranks"], r["group_size"]) == \
                (a["Process Group Name"], json.loads(a["Process Group Ranks"]), a["Group size"])
            assert (r["in_nelems"], r["out_nelems"]) == (a["In msg nelems"], a["Out msg nelems"])
            assert r["msg_bytes"] == max(a["In msg nelems"], a["Out msg nelems"]) * size[a["dtype"]]
            assert (r["dur_ns"], r["stream"], r["kernel_name"]) == (round(k["dur"] * 1000), k["args"]["stream"],
                                                                   k["name"])
        # the other ranks are not in the dataset: every collective is timed over the one rank there is
        m = _rows(meta, f"SELECT m.* FROM comm_matched m JOIN comm_jobs j USING (job_id) WHERE j.world_size = {world}")
        assert {(x["status"], x["n_absent"], len(x["missing_ranks"])) for x in m} == {("partial", world - 1, 0)}
        durs = {r["seq"]: r["dur_ns"] for r in _rows(
            meta, f"SELECT c.seq, c.dur_ns FROM comm_collectives c JOIN comm_jobs j USING (job_id) "
                  f"WHERE j.world_size = {world}")}
        assert {x["seq"]: x["latency_ns"] for x in m} == durs
    types = _rows(meta, "SELECT level, coll_type, coll_type_source, algo, proto, count(*) AS n FROM comm_collectives "
                        "GROUP BY ALL ORDER BY ALL")
    assert types == [
        {"level": "c10d_op", "coll_type": "all_gather", "coll_type_source": "metadata", "algo": "RING", "proto": "LL",
         "n": 1},
        {"level": "c10d_op", "coll_type": "all_reduce", "coll_type_source": "metadata", "algo": "RING", "proto": "LL",
         "n": 15},
        {"level": "c10d_op", "coll_type": "broadcast", "coll_type_source": "metadata", "algo": "RING", "proto": "LL",
         "n": 6},
        # b200: symmetric-memory all-reduce kernels launched by symm_mem::multimem_all_reduce_, outside any c10d op
        {"level": "kernel", "coll_type": "all_reduce", "coll_type_source": "annotation", "algo": None, "proto": None,
         "n": 73}]


def test_tracelens_regular_mode_with_metadata(meta, shared_traces):
    """With collective metadata TraceLens matches by (process group, order) and keeps only the implicit-sync types;
    bandwidth from the message size in MB and the Group size."""
    job = _rows(meta, "SELECT job_id FROM comm_jobs WHERE world_size = 2")[0]["job_id"]
    frames = comm.tracelens_frames(meta, job)
    ks = _nccl_kernels(shared_traces / "nvidia" / "hta_nccl_data.json.gz")
    by_ts = sorted(range(len(ks)), key=lambda i: ks[i]["ts"])
    long = frames["nccl_long"]   # file order; the index counts the rank's kernels of the group by start
    assert long["collective_id"].to_list() == [f"0_{by_ts.index(i)}" for i in range(len(ks))]
    assert long["ts"].to_list() == [k["ts"] for k in ks]
    sync = frames["nccl_implicit_sync"]
    ars = [k for k in ks if k["args"]["Collective name"] == "allreduce"]   # rows in order of first appearance
    assert sync.height == len(ars) == 15 and set(sync["Collective name"]) == {"allreduce"}
    for row, k in zip(sync.rows(named=True), ars, strict=True):
        mb = k["args"]["In msg nelems"] * 4 / 1024**2
        assert row["Full msg size (MB)"] == pytest.approx(mb, rel=1e-12)
        assert row["comm_latency"] == pytest.approx(k["dur"], abs=1e-9)
        assert row["algo bw (GB/s)"] == pytest.approx(mb / 1024 / (k["dur"] / 1e6), rel=1e-9)
        assert row["bus bw (GB/s)"] == pytest.approx(row["algo bw (GB/s)"] * 2 * (2 - 1) / 2, rel=1e-12)
    summary = frames["nccl_summary_long"]
    assert summary.height == 5 + 2   # 5 all-reduce sizes x 3 calls, 2 broadcasts x 3 calls, each a row
    assert summary["operation_count"].to_list() == [3] * 7


def test_a_rank_profiled_twice_starts_a_second_job(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for p in GLOO.glob("rank*.json.gz"):
        shutil.copy(p, src / p.name)
    _cut(GLOO / "rank3.json.gz", src / "rank3_again.json.gz", CUT_BEFORE)
    out = tmp_path / "ds"
    assert len(tracesql.ingest(sorted(str(p) for p in src.glob("*.json.gz")), out=out, salvage=True)) == N + 1
    with tracesql.open(out) as d:
        jobs = _rows(d, "SELECT ranks, n_traces FROM comm_jobs ORDER BY job_id")
        assert sorted((j["ranks"], j["n_traces"]) for j in jobs) == [([0, 1, 2, 3], 4), ([3], 1)]
        four = _rows(d, "SELECT job_id FROM comm_jobs WHERE n_traces = 4")
        assert comm.multirank_jobs(d) == [four[0]["job_id"]]
