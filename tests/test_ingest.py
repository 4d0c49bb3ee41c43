"""Ingest of every shared trace: row counts per table and category equal counts taken independently from the
JSON (parsed here with the standard library), and timestamps are exact nanoseconds."""
from __future__ import annotations

import gzip
import hashlib
import importlib
import json
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal

import duckdb
import pytest
import xxhash

import tracesql
from tracesql.errors import TraceError

from .conftest import TRACES, good_trace_files

GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "gpu_memcpy", "gpu_memset": "gpu_memset", "cuda_sync": "cuda_sync",
            "Kernel": "kernel", "Memcpy": "gpu_memcpy", "Memset": "gpu_memset"}
CPU_RENAME = {"Operator": "cpu_op", "Runtime": "cuda_runtime"}


def load(rel: str):
    with gzip.open(TRACES / rel, "rb") as f:
        doc = json.loads(f.read(), parse_float=Decimal)
    return doc if isinstance(doc, dict) else {"traceEvents": doc}


def expected_counts(doc) -> tuple[Counter, Counter, Counter, int]:
    """(rows per table, events rows per normalised cat, kernels rows per cat, skipped) by the documented rules."""
    evs = doc["traceEvents"]
    device_pids = {e.get("pid") for e in evs if e.get("ph") == "M" and e.get("name") == "process_name"
                   and str((e.get("args") or {}).get("name", "")).startswith("/device:")}
    jax = bool(device_pids) and not any(e.get("ph") == "X" and e.get("cat") is not None for e in evs)
    tables: Counter[str] = Counter()
    ev_cats: Counter[str] = Counter()
    k_cats: Counter[str] = Counter()
    skipped = 0
    for e in evs:
        ph, cat = e.get("ph"), e.get("cat")
        if not e:
            skipped += 1
        elif ph == "X" and (cat in GPU_CATS or (jax and cat is None and e.get("pid") in device_pids)):
            tables["kernels"] += 1
            k_cats[GPU_CATS.get(cat, "gpu_memcpy" if "memcpy" in e["name"].lower() else "kernel")] += 1
        elif ph == "X" and cat == "gpu_user_annotation":
            tables["gpu_user_annotations"] += 1
        elif ph in ("X", "B", "E"):
            tables["events"] += 1
            if cat is None and jax:
                n = e["name"]
                cat = ("cuda_runtime" if n[:2] in ("cu", "hi") and n.startswith(("cuda", "cu", "hip"))
                       and n[len("hip" if n.startswith("hip") else "cuda" if n.startswith("cuda") else "cu")].isupper()
                       else "python_function" if n.startswith("$") else "user_annotation")
            ev_cats[CPU_RENAME.get(cat, cat)] += 1
        elif ph in ("s", "f", "t"):
            tables["correlations"] += 1
        elif ph in ("i", "I"):
            tables["instants"] += 1
        elif ph == "M":
            tables["metadata"] += 1
        elif ph == "C":
            tables["counters"] += 1
        else:
            tables["other_events"] += 1
    return tables, ev_cats, k_cats, skipped


@pytest.mark.parametrize("rel", good_trace_files())
def test_counts_match_json(ds, trace_ids, rel):
    tid = trace_ids[rel]
    doc = load(rel)
    tables, ev_cats, k_cats, skipped = expected_counts(doc)
    for table in ["events", "kernels", "correlations", "instants", "metadata", "counters", "gpu_user_annotations",
                  "other_events"]:
        got = ds.con.execute(f"SELECT count(*) FROM {table} WHERE trace_id = ?", [tid]).fetchall()[0][0]
        assert got == tables[table], (rel, table)
    got_ev = dict(ds.con.execute("SELECT coalesce(cat, '<none>'), count(*) FROM events WHERE trace_id = ? GROUP BY 1",
                                 [tid]).fetchall())
    assert got_ev == {("<none>" if k is None else k): v for k, v in ev_cats.items()}, rel
    got_k = dict(ds.con.execute("SELECT cat, count(*) FROM kernels WHERE trace_id = ? GROUP BY 1", [tid]).fetchall())
    assert got_k == dict(k_cats), rel
    read, skip = ds.con.execute("SELECT events_read, events_skipped FROM traces WHERE trace_id = ?",
                                [tid]).fetchall()[0]
    assert read == len(doc["traceEvents"])
    assert skip == skipped
    issues = ds.con.execute("SELECT count(*) FROM ingest_issues WHERE trace_id = ?", [tid]).fetchall()[0][0]
    assert issues == skipped


def _ns(v) -> int:
    return int((Decimal(v) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


@pytest.mark.parametrize("rel", ["nvidia/hta_ns_resolution_rank0.json.gz",  # 19-digit epoch µs with 3 decimals
                                 "nvidia/h100_qwen_infer.json.gz",  # relative µs with 3 decimals
                                 "nvidia/kineto_2021_v1_8.json.gz",  # integer epoch µs
                                 "jax/mi300_conv_trace.json.gz",  # 17-significant-digit decimals
                                 "nvidia/gpumodel_relative_ts.json.gz"])
def test_every_timestamp_is_exact_ns(ds, trace_ids, rel):
    tid = trace_ids[rel]
    doc = load(rel)
    want = {i: (_ns(e["ts"]), _ns(e["dur"])) for i, e in enumerate(doc["traceEvents"])
            if e.get("ph") == "X" and "ts" in e and "dur" in e}
    got = {}
    for table in ("events", "kernels", "gpu_user_annotations"):
        got.update({r[0]: (r[1], r[2]) for r in ds.con.execute(
            f"SELECT event_id, ts_ns, dur_ns FROM {table} WHERE trace_id = ?", [tid]).fetchall()})
    assert got == want


def test_spot_values(ds, trace_ids):
    t = trace_ids["nvidia/hta_ns_resolution_rank0.json.gz"]
    # first event of the file: "ts": 1712195495519689.047 — a double would give ...689.0
    assert ds.con.execute("SELECT ts_ns FROM events WHERE trace_id = ? AND event_id = 0", [t]).fetchall()[0][0] \
        == 1712195495519689047
    q = trace_ids["nvidia/h100_qwen_infer.json.gz"]
    row = ds.con.execute("SELECT base_time_ns, format, device_count, exact_ts_text FROM traces WHERE trace_id = ?",
                         [q]).fetchall()[0]
    assert row == (1751410836000000000, "kineto", 1, False)
    # 509 of 1,707 GPU events are warm-up kernels launched before the CPU window (TraceLens links 1,198)
    assert ds.con.execute("SELECT gpu_events_unlinked FROM traces WHERE trace_id = ?", [q]).fetchall()[0][0] == 509
    # kernels: typed args
    k = ds.con.execute("""SELECT count(*), count(DISTINCT stream), min(device), max(device), count(correlation),
                                 count(grid_x) FROM kernels WHERE trace_id = ?""", [q]).fetchall()[0]
    assert k[0] == 1707 and k[2] == k[3] == 0 and k[4] == 1707
    assert k[5] == 1465  # every kernel has a grid, memcpy/memset have none


def test_old_format_categories_normalised(ds, trace_ids):
    t = trace_ids["nvidia/kineto_2021_v1_8.json.gz"]
    rows = dict(ds.con.execute("SELECT cat_raw || '->' || cat, count(*) FROM kernels WHERE trace_id = ? GROUP BY 1",
                               [t]).fetchall())
    assert rows == {"Kernel->kernel": 9564, "Memcpy->gpu_memcpy": 12, "Memset->gpu_memset": 439}
    ev = dict(ds.con.execute("SELECT cat_raw || '->' || cat, count(*) FROM events WHERE trace_id = ? AND cat_raw IN "
                             "('Operator', 'Runtime') GROUP BY 1", [t]).fetchall())
    assert ev == {"Operator->cpu_op": 33384, "Runtime->cuda_runtime": 10920}
    # the lowercase 'external id' of PyTorch 1.8 kernels is read too
    assert ds.con.execute("SELECT count(external_id) FROM kernels WHERE trace_id = ?", [t]).fetchall()[0][0] == 10015


def test_string_pid_tid_kept(ds, trace_ids):
    t = trace_ids["nvidia/kineto_2021_v1_8.json.gz"]
    assert ds.con.execute("SELECT count(*) FROM events WHERE trace_id = ? AND pid = 'Traces' "
                          "AND tid = 'PyTorch Profiler'", [t]).fetchall()[0][0] == 1
    assert ds.con.execute("SELECT count(*) FROM instants WHERE trace_id = ? AND pid = '' AND tid = ''",
                          [t]).fetchall()[0][0] == 1


def test_jax_trace(ds, trace_ids):
    t = trace_ids["jax/mi300_conv_trace.json.gz"]
    assert ds.con.execute("SELECT format FROM traces WHERE trace_id = ?", [t]).fetchall()[0][0] == "jax"
    k = ds.con.execute("""SELECT count(*), min(device), max(device), count(correlation), count(grid_x), count(stream)
                          FROM kernels WHERE trace_id = ?""", [t]).fetchall()[0]
    assert k[0] == 235 and k[1] == 0 and k[2] == 7 and k[3] == 235 and k[5] == 235
    # the trailing {} that JAX writes is counted as skipped, with its index
    iss = ds.con.execute("SELECT event_id, kind FROM ingest_issues WHERE trace_id = ?", [t]).fetchall()
    assert iss == [(3524, "skipped_empty_event")]
    # launches on the host side link to GPU events through correlation_id
    linked = ds.con.execute("""SELECT count(*) FROM kernels k JOIN launches l USING (trace_id, correlation)
                               WHERE trace_id = ?""", [t]).fetchall()[0][0]
    assert linked == 231  # 4 GPU events share a correlation id with hipStreamWaitEvent/hipLaunchHostFunc


def test_rank_and_distributed_info(ds, trace_ids):
    ranks = dict(ds.con.execute("SELECT file_name, rank FROM traces WHERE source_path LIKE '%dlrm_8rank%'").fetchall())
    assert ranks == {f"rank{i}.json.gz": i for i in range(8)}
    r = ds.con.execute("SELECT rank, rank_source, world_size, distributed_backend FROM traces WHERE trace_id = ?",
                       [trace_ids["cpu/hta_cpu_only_rank34.json.gz"]]).fetchall()[0]
    assert r == (34, "distributedInfo", 300, "gloo")


def test_launches(ds, trace_ids):
    t = trace_ids["nvidia/hta_cuda_graphs_rank0.json.gz"]
    kinds = dict(ds.con.execute("SELECT launch_kind, count(*) FROM launches WHERE trace_id = ? GROUP BY 1",
                                [t]).fetchall())
    assert kinds["graph"] > 0 and kinds["kernel"] > 0 and kinds["memcpy"] > 0
    a = trace_ids["amd/mi300_qwen_infer.json.gz"]
    names = {r[0] for r in ds.con.execute("SELECT DISTINCT name FROM launches WHERE trace_id = ?", [a]).fetchall()}
    assert "hipExtModuleLaunchKernel" in names or "hipLaunchKernel" in names


def test_header_after_trace_events(ds, trace_ids):
    # this file writes traceName and baseTimeNanoseconds after traceEvents
    t = trace_ids["nvidia/h100_qwen_infer.json.gz"]
    name, hdr = ds.con.execute("SELECT trace_name, header->>'$.traceName' FROM traces WHERE trace_id = ?",
                               [t]).fetchall()[0]
    assert name == hdr == "/tmp/tmp8f047i33/file.json"


# ---- dataset behaviour --------------------------------------------------------------------------------

def test_duplicate_ingest_is_detected(tmp_path, shared_traces):
    f = shared_traces / "nvidia/gpumodel_relative_ts.json.gz"
    r1 = tracesql.ingest([f], out=tmp_path / "ds")
    r2 = tracesql.ingest([f], out=tmp_path / "ds")
    assert [r.status for r in r1] == ["ingested"]
    assert [r.status for r in r2] == ["duplicate"] and r2[0].trace_id == r1[0].trace_id
    with tracesql.open(tmp_path / "ds") as d:
        assert d.sql("SELECT count(*) AS n FROM traces")["n"][0] == 1
        assert d.sql("SELECT count(*) AS n FROM kernels")["n"][0] == 5
    assert not list((tmp_path / "ds" / ".staging").iterdir())


def test_content_hash_is_xxh3_of_the_file_bytes(tmp_path, shared_traces):
    f = shared_traces / "nvidia/gpumodel_relative_ts.json.gz"
    digest = xxhash.xxh3_128(f.read_bytes()).hexdigest()
    r = tracesql.ingest([f], out=tmp_path / "ds")[0]
    assert r.trace_id == digest[:16]
    with tracesql.open(tmp_path / "ds") as d:
        assert d.sql("SELECT content_hash FROM traces")["content_hash"].to_list() == [digest]


@pytest.mark.slow
def test_duplicate_of_a_trace_stored_with_a_blake2b_hash_is_detected(tmp_path, shared_traces):
    """Datasets written before the content hash became XXH3-128 store BLAKE2b-128 digests: a file ingested
    then is still recognised."""
    f = shared_traces / "nvidia/gpumodel_relative_ts.json.gz"
    r1 = tracesql.ingest([f], out=tmp_path / "ds")[0]
    old = hashlib.blake2b(f.read_bytes(), digest_size=16).hexdigest()
    part = next((tmp_path / "ds" / "traces").glob("trace_id=*/traces/part-00000.parquet"))
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * REPLACE ('{old}' AS content_hash) FROM read_parquet('{part}')) "
                f"TO '{part}.new' (FORMAT parquet)")
    con.close()
    part.with_name(part.name + ".new").replace(part)
    ingest_mod = importlib.import_module("tracesql.ingest.publish")
    ingest_mod._KNOWN.clear()  # forget the hash this process recorded at the first ingest
    r2 = tracesql.ingest([f], out=tmp_path / "ds")[0]
    assert r1.status == "ingested" and r2.status == "duplicate" and r2.trace_id == old[:16]
    with tracesql.open(tmp_path / "ds") as d:
        assert d.sql("SELECT count(*) AS n FROM traces")["n"][0] == 1


@pytest.mark.slow
def test_truncated_traces_error_and_salvage(tmp_path, shared_traces):
    for name, kept in [("alexnet_truncated_json.json.gz", 868), ("alexnet_truncated_gzip.json.gz", 974)]:
        f = shared_traces / "damaged" / name
        r = tracesql.ingest([f], out=tmp_path / "strict")[0]
        assert r.status == "failed" and r.error is not None
        assert "truncated trace" in r.error and "--salvage" in r.error
        assert "\n" not in r.error
        r = tracesql.ingest([f], out=tmp_path / "salvaged", salvage=True)[0]
        assert r.status == "ingested" and r.truncated and r.events_read == kept
    with tracesql.open(tmp_path / "salvaged") as d:
        assert d.sql("SELECT count(*) AS n FROM traces WHERE truncated")["n"][0] == 2
        kinds = d.sql("SELECT kind, count(*) AS n FROM ingest_issues GROUP BY kind")
        assert kinds.rows() == [("truncated_tail", 2)]
    assert not (tmp_path / "strict").exists()  # nothing ingested: no dataset left behind


@pytest.mark.slow
def test_dataset_opens_from_any_directory(tmp_path, shared_traces, monkeypatch):
    import duckdb

    from tracesql.cli.main import main

    tracesql.ingest([shared_traces / "nvidia/hta_triton_example.json.gz"], out=tmp_path / "ds")
    assert main(["catalog", str(tmp_path / "ds")]) == 0
    monkeypatch.chdir("/")
    con = duckdb.connect(str(tmp_path / "ds" / "catalog.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM kernels").fetchall()[0][0] == 1
    con.close()
    con = duckdb.connect()
    con.execute((tmp_path / "ds" / "init.sql").read_text())
    assert con.execute("SELECT count(*) FROM events").fetchall()[0][0] == 7


def test_bad_file_one_line_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json")
    with pytest.raises(TraceError) as ei:
        import importlib

        importlib.import_module("tracesql.ingest").ingest_file(str(bad), tmp_path / "ds")
    assert str(ei.value).startswith(str(bad)) and "not JSON" in str(ei.value)


@pytest.mark.slow
def test_ingest_with_user_rules(tmp_path, shared_traces, capsys):
    from tracesql.cli.main import main

    rules = tmp_path / "my.csv"
    rules.write_text("category,pattern\nmy_memset,^Memset\n")
    out = tmp_path / "ds"
    assert main(["ingest", str(shared_traces / "nvidia/h100_qwen_infer.json.gz"), "--out", str(out), "-q",
                 "--rules", str(rules)]) == 0
    assert (out / "rules" / "my.csv").exists()
    with tracesql.open(out) as d:
        got = d.sql("SELECT kernel_category, count(*) AS n FROM kernels_categorized "
                    "WHERE kernel_category = 'my_memset' GROUP BY 1")
        assert got.rows() == [("my_memset", 241)]
    bad = tmp_path / "bad.csv"
    bad.write_text("name,regex\nx,y\n")
    assert main(["ingest", str(shared_traces / "nvidia/h100_qwen_infer.json.gz"), "--out", str(out), "-q",
                 "--rules", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "category and pattern" in err[0]


@pytest.mark.slow
def test_older_table_layout_is_a_clear_error(tmp_path, shared_traces):
    """A dataset whose stored events lack a column of the current layout (as written by an earlier version)
    opens with a one-line DatasetError naming the trace, not a binder traceback."""
    import duckdb

    from tracesql.errors import DatasetError

    out = tmp_path / "old.tsql"
    (r,) = tracesql.ingest([str(shared_traces / "nvidia/h100_bert_small_infer.json.gz")], out=str(out))
    part = next((out / "traces" / f"trace_id={r.trace_id}" / "events").glob("*.parquet"))
    tmp = part.with_suffix(".tmp")
    duckdb.sql(f"COPY (SELECT * EXCLUDE (input_dims) FROM read_parquet('{part}')) TO '{tmp}' (FORMAT parquet)")
    tmp.replace(part)
    (out / "catalog.duckdb").unlink(missing_ok=True)
    with pytest.raises(DatasetError,
                       match=rf"older table layout \(e\.g\. trace {r.trace_id} lacks events\.input_dims\)"):
        tracesql.open(out)
    # a trace stored before a table existed (here: without its stored GPU timeline) is caught the same way
    out2 = tmp_path / "old2.tsql"
    (r2,) = tracesql.ingest([str(shared_traces / "nvidia/h100_bert_small_infer.json.gz")], out=str(out2))
    import shutil

    shutil.rmtree(out2 / "traces" / f"trace_id={r2.trace_id}" / "gpu_timeline_all")
    (out2 / "catalog.duckdb").unlink()
    with pytest.raises(DatasetError,
                       match=rf"older table layout \(e\.g\. trace {r2.trace_id} lacks gpu_timeline_all\)"):
        tracesql.open(out2)
    # a table that held columns the current layout keeps in one other place (cpu_nesting copied events' names)
    part = next((out / "traces" / f"trace_id={r.trace_id}" / "cpu_nesting").glob("*.parquet"))
    duckdb.sql(f"COPY (SELECT *, 'x' AS name FROM read_parquet('{part}')) TO '{tmp}' (FORMAT parquet)")
    tmp.replace(part)
    with pytest.raises(DatasetError, match=r"holds cpu_nesting\.name, no longer stored\); ingest their source"):
        tracesql.open(out)


@pytest.mark.slow  # creates every analysis view directly, in load order, for the comparison
def test_the_library_loaded_through_stand_ins_equals_it_created_directly(tmp_path, shared_traces, monkeypatch):
    """Every view created against stand-ins (tracesql.store.library) has the columns and gives the rows of the same view
    created directly in load order; the ingest leaves a current DATASET/catalog.duckdb and init.sql holding the
    same views; each module's columns are cached once; without a writable cache nothing changes."""
    import duckdb

    from tracesql.store import dataset as dsmod
    from tracesql.store import library, sqlmodules

    monkeypatch.setenv("TRACESQL_CACHE_DIR", str(tmp_path / "cache"))
    library._memo.clear()
    out = tmp_path / "ds"
    (r,) = tracesql.ingest([str(shared_traces / "nvidia/h100_qwen_infer.json.gz")], out=str(out))
    assert dsmod.catalog_is_current(out)
    assert len(list((tmp_path / "cache" / "sqlschemas").glob("*.json"))) == len(sqlmodules.modules())
    # created directly: the modules of the views compared below with everything they require (the whole library
    # takes minutes to create directly; the stand-ins of every module are checked by tests/test_sqlmodules.py)
    views = ["gpu_timeline", "kernel_summary", "category_rules", "launch_stats_by_api", "tl_kernel_summary",
             "hta_temporal_breakdown"]
    mods = sqlmodules.load_order(sorted({sqlmodules.object_modules()[v] for v in views}))
    direct = duckdb.connect()
    for st in dsmod.table_statements(out) + sqlmodules.module_statements(mods):
        direct.execute(st)
    catalog = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    init = duckdb.connect()
    init.execute((out / "init.sql").read_text())
    cols = ("SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name <> 'temp' "
            "AND table_name <> '_tracesql_catalog' ORDER BY ALL")
    queries = [f"SELECT * FROM {v} ORDER BY ALL" for v in views]
    with tracesql.open(out) as d:
        d.require()
        want = direct.execute(cols).fetchall()
        names = {r[0] for r in want}
        assert len(want) > 1000
        for con in (d.con.raw, catalog, init):
            assert [r for r in con.execute(cols).fetchall() if r[0] in names] == want
            for q in queries:
                assert con.execute(q).fetchall() == direct.execute(q).fetchall(), q
    # busy = HTA's compute + non-compute (45,432.70 + 214.60 us), span = busy + its idle 4,005.53 us
    assert catalog.execute("SELECT busy_ns, span_ns FROM gpu_timeline WHERE pooled").fetchall() == \
        [(45647300, 49652832)]
    catalog.close()
    # without a writable cache the columns are computed in memory, with the same result
    monkeypatch.setenv("TRACESQL_CACHE_DIR", "/proc/no-such-dir")
    library._memo.clear()
    with tracesql.open(out) as d:
        assert d.sql("SELECT busy_ns FROM gpu_timeline WHERE pooled").item() == 45647300


def test_build_plan_builds_every_derived_table_with_its_build_view():
    from tracesql.ingest.derive import build_plan
    from tracesql.store.schema import DERIVED_TABLES

    plan = build_plan()
    assert sorted(s.table for s in plan.steps) == sorted(DERIVED_TABLES)
    assert all(s.build == f"_{s.table}_build" for s in plan.steps)
    assert {"tree/nesting", "tree/links", "tree/context", "gpu/steps", "gpu/timeline"} <= set(plan.modules)
    # a table is built after the stored tables its build reads
    order = [s.table for s in plan.steps]
    assert order.index("cpu_nesting") < order.index("cpu_event_context")
    assert order.index("gpu_launch_links") < order.index("gpu_timeline_all")
    assert order.index("profiler_steps") < order.index("gpu_timeline_all")
    for step in plan.steps:  # a helper is dropped after its step's table or after a helper computed after it
        for i, h in enumerate(step.helpers):
            assert h.drop_after in [step.table] + [later.view for later in step.helpers[i + 1:]], h
