"""Two traces compared (sql/diff/, `tracesql diff`, Dataset.diff).

The dataset holds nvidia/h100_qwen_infer (the baseline), a hand-made variant of it and amd/mi300_qwen_infer. The
variant is the same JSON in which every GPU event launched by one aten::mm call (picked through the call tree:
the first call on the argument set with the most GPU time; it launches a memset and a GEMM) lasts SLOW_NS longer,
and every later event of the GPU stream starts later by as much, so that nothing else changes. Each level of the
diff must put exactly that change on top, and a trace against itself must be all zeros.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import orjson
import polars as pl
import pytest

import tracesql
import tracesql.api.diff
from tracesql.cli.diff import EXIT_SLOWER

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

SLOW_NS = 123_457  # per GPU event of the chosen op
LEVELS = ("timeline", "steps", "steady", "categories", "ops", "op_args", "modules", "kernels", "tree", "perf")


def _ns(us) -> int:
    """A Chrome-trace time (µs) in ns as the ingest reads it: its decimal text times 1000, rounded."""
    return int((Decimal(repr(us)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _us(ns: int) -> float:
    """ns as a µs value whose shortest text reads back as exactly those ns."""
    return ns / 1000


def _slowed_copy(src: Path, dst: Path, chosen: set[int], own_stream: bool = False) -> None:
    """Write ``src`` to ``dst`` with every GPU event whose correlation id is in ``chosen`` made SLOW_NS longer,
    the events of the GPU streams after it moved later by as much (events spanning its end, such as a
    gpu_user_annotation, lengthened); ``own_stream``: only the events of the streams of the chosen events move
    (another stream's kernel running across one, a collective, keeps its time). Nothing on the CPU moves."""
    doc = orjson.loads(gzip.open(src).read())
    events = doc["traceEvents"]
    gpu_cats = ("kernel", "gpu_memcpy", "gpu_memset")
    slowed = [e for e in events if e.get("cat") in gpu_cats and e.get("args", {}).get("correlation") in chosen]
    streams = {(e["pid"], e["tid"]) for e in (slowed if own_stream else events) if e.get("cat") in gpu_cats}
    assert len(slowed) == len(chosen)
    ends = sorted(_ns(e["ts"]) + _ns(e["dur"]) for e in slowed)
    ids = {id(e) for e in slowed}
    for e in events:
        if (e.get("pid"), e.get("tid")) not in streams or "ts" not in e:
            continue
        ts = _ns(e["ts"])
        end = ts + _ns(e["dur"]) if "dur" in e else ts
        shift = SLOW_NS * sum(1 for c in ends if c <= ts)
        grow = SLOW_NS if id(e) in ids else SLOW_NS * sum(1 for c in ends if ts < c < end)
        if shift:
            e["ts"] = _us(ts + shift)
        if grow:
            e["dur"] = _us(end - ts + grow)
    with gzip.open(dst, "wb") as f:
        f.write(orjson.dumps(doc))


@pytest.fixture(scope="module")
def pair(tmp_path_factory, shared_traces):
    """(dataset, base trace_id, variant trace_id, mi300 trace_id, the chosen op's GPU events)."""
    work = tmp_path_factory.mktemp("diff")
    out = work / "ds"
    src = shared_traces / "nvidia/h100_qwen_infer.json.gz"
    (b, m, _) = tracesql.ingest([str(src), str(shared_traces / "amd/mi300_qwen_infer.json.gz"),
                                 str(shared_traces / "cpu/hta_cpu_only_rank34.json.gz")], out=out, quiet=True)
    with tracesql.open(out) as ds:
        # the op: the first aten::mm call (by start) on the aten::mm argument set with the most GPU time
        args = ds.sql("""SELECT input_dims, input_type, input_strides, concrete_inputs FROM op_arg_summary
                         WHERE trace_id = $t AND op_name = 'aten::mm' ORDER BY kernel_time_sum_ns DESC LIMIT 1""",
                      {"t": b.trace_id}).row(0)
        events = ds.sql("""
            WITH calls AS (
                SELECT g.op_event_id, min(g.ts_ns) AS first_ns FROM gpu_event_ops g
                JOIN _op_args a ON a.trace_id = g.trace_id AND a.event_id = g.op_event_id
                WHERE g.trace_id = $t AND g.op_name = 'aten::mm' AND coalesce(a.input_dims, '') = $d
                  AND coalesce(a.input_type, '') = $ty AND coalesce(a.input_strides, '') = $st
                  AND coalesce(a.concrete_inputs, '') = $ci
                GROUP BY g.op_event_id)
            SELECT g.correlation, g.name, g.cat, g.dur_ns FROM gpu_event_ops g
            WHERE g.trace_id = $t AND g.op_event_id = (SELECT op_event_id FROM calls ORDER BY first_ns LIMIT 1)
            ORDER BY g.ts_ns""", {"t": b.trace_id, "d": args[0], "ty": args[1], "st": args[2], "ci": args[3]})
    assert events.height == 2 and sorted(events["cat"]) == ["gpu_memset", "kernel"]
    variant = work / "h100_qwen_slowed.json.gz"
    _slowed_copy(src, variant, set(events["correlation"]))
    (v,) = tracesql.ingest([str(variant)], out=out, quiet=True)
    assert v.status == "ingested"
    return out, b.trace_id, v.trace_id, m.trace_id, events, args


def test_a_trace_against_itself_is_all_zeros(pair):
    out, base, _, mi300, _, _ = pair
    with tracesql.open(out) as ds:
        for tid in (base, mi300):
            for level in LEVELS:
                df = ds.diff(tid, tid, level=level)
                assert df.height > 0
                assert set(df["side"]) == {"both"}, level
                assert df["diff_ns"].abs().max() == 0, level
                assert (df["base_ns"] == df["variant_ns"]).all() and (df["base_count"] == df["variant_count"]).all()
        sizes = {level: ds.diff(base, base, level=level).height for level in LEVELS}
    # the levels of h100_qwen_infer: 8 timeline measures, its categories, 21 op names, argument sets, short names
    assert sizes["timeline"] == 8 and sizes["ops"] == 21


def test_the_slowed_op_is_on_top_of_every_level(pair):
    out, base, variant, _, events, args = pair
    with tracesql.open(out) as ds:
        d = ds.diff(base, variant)
        short = dict(ds.sql("SELECT DISTINCT name, coalesce(short_name, name) FROM _gpu_names").rows())
        cats = dict(ds.sql("SELECT name, kernel_category FROM kernel_name_categories WHERE ruleset = 'default'").rows())
    n = events.height  # the memset and the GEMM of the call
    for level in LEVELS:
        assert set(d[level]["side"]) == {"both"}, level  # nothing appears or disappears
    changed = {lv: {r[0]: r[-2] for r in d[lv].filter(d[lv]["diff_ns"] != 0).select(
        d[lv].columns[0], "diff_ns", "ratio").rows()} for lv in ("timeline", "categories", "ops", "kernels")}
    # the GPU stream does 2 × SLOW_NS more work and ends that much later; one of them is memory (the memset)
    assert changed["timeline"] == {"span": n * SLOW_NS, "busy": n * SLOW_NS, "compute": SLOW_NS,
                                   "memory": SLOW_NS, "memory_exposed": SLOW_NS}
    assert list(d["timeline"]["measure"][:2]) == ["span", "busy"]
    assert changed["categories"] == {cats[name]: SLOW_NS for name in events["name"]} == {"GEMM": SLOW_NS,
                                                                                         "memset": SLOW_NS}
    assert changed["ops"] == {"aten::mm": n * SLOW_NS}
    assert changed["kernels"] == {short[name]: SLOW_NS for name in events["name"]}
    top = d["op_args"].row(0, named=True)
    assert (top["op_name"], top["input_dims"], top["input_type"], top["input_strides"], top["concrete_inputs"],
            top["diff_ns"]) == ("aten::mm", *args, n * SLOW_NS)
    assert d["op_args"]["diff_ns"].abs()[1:].max() == 0
    b = top["base_ns"]
    assert top["variant_ns"] == b + n * SLOW_NS and top["ratio"] == pytest.approx((b + n * SLOW_NS) / b, rel=1e-12)
    assert top["base_count"] == top["variant_count"] == 48  # the calls on that argument set (2 per layer)
    # its step (h100_qwen_infer has one, ProfilerStep#6, so it is also the steady state) did the same more work
    for level in ("steps", "steady"):
        busy = d[level].filter(d[level]["measure"] == "busy").row(0, named=True)
        assert busy["diff_ns"] == n * SLOW_NS and busy["side"] == "both", level
    assert d["steady"]["base_steps"][0] == d["steady"]["variant_steps"][0] == "ProfilerStep#6"
    # the nn.Module instances around the call (its Linear, the MLP, the decoder layer, the model) grew by as much
    modules = d["modules"].filter(d["modules"]["diff_ns"] != 0)
    assert modules.rows() == [(p, "both", 1, 1, b_ns, b_ns + n * SLOW_NS, n * SLOW_NS, (b_ns + n * SLOW_NS) / b_ns)
                              for p, b_ns in zip(modules["module_path"], modules["base_ns"], strict=True)]
    assert list(modules["module_path"]) == ["Qwen2Model_0", "Qwen2Model_0/Qwen2DecoderLayer_0",
                                            "Qwen2Model_0/Qwen2DecoderLayer_0/Qwen2MLP_0",
                                            "Qwen2Model_0/Qwen2DecoderLayer_0/Qwen2MLP_0/Linear_4"]
    # the merged call trees: the call's own node is the lowest common ancestor of the change, its ancestors (the
    # nn.Modules and ops above it) grew by as much, with nothing of their own
    tree = d["tree"]
    node = tree.row(0, named=True)
    assert (node["kind"], node["name"], node["input_dims"], node["base_count"], node["diff_ns"],
            node["self_diff_ns"]) == ("op", "aten::mm", args[0], 1, n * SLOW_NS, n * SLOW_NS)
    assert tree["self_diff_ns"].abs()[1:].max() == 0
    above = tree.filter(tree["diff_ns"] != 0)
    assert set(above["diff_ns"]) == {n * SLOW_NS}
    assert sorted(above["path"]) == [node["path"].rsplit(" > ", k)[0] for k in range(node["depth"], -1, -1)]
    assert [p.split(" > ")[0] for p in above["path"]] == ["ProfilerStep#6"] * (node["depth"] + 1)
    # the compute model: the same FLOPs and bytes in b + 2 SLOW_NS instead of b, so the argument set's achieved
    # TFLOP/s and TB/s and its % of roofline fall by the ratio b / (b + 2 SLOW_NS); nothing else moves
    perf = d["perf"]
    mm = perf.row(0, named=True)
    assert (mm["op_name"], mm["family"], mm["input_dims"], mm["input_type"], mm["concrete_inputs"], mm["base_count"],
            mm["base_ns"], mm["diff_ns"]) == ("aten::mm", "GEMM", args[0], args[1], args[3], 48, b, n * SLOW_NS)
    fall = b / (b + n * SLOW_NS)
    assert mm["tflop_per_s_ratio"] == pytest.approx(fall, rel=1e-12) and mm["tb_per_s_ratio"] == pytest.approx(
        fall, rel=1e-12)
    assert mm["variant_tflop_per_s"] == pytest.approx(mm["base_tflop_per_s"] * fall, rel=1e-12)
    assert mm["variant_roofline_pct"] == pytest.approx(mm["base_roofline_pct"] * fall, rel=1e-12)
    assert mm["tflop_per_s_diff"] == pytest.approx(mm["base_tflop_per_s"] * (fall - 1), rel=1e-9)
    assert 0 < mm["tflop_per_s_diff"] + mm["base_tflop_per_s"] < mm["base_tflop_per_s"]
    rest = perf[1:]
    assert rest.height > 10 and rest["diff_ns"].abs().max() == 0
    assert rest["tflop_per_s_diff"].abs().max() == 0 and rest["roofline_pct_diff"].abs().max() == 0


def _cli(capsys, monkeypatch, *argv: str) -> tuple[int, str, str]:
    from tracesql.cli.main import main

    monkeypatch.setenv("COLUMNS", "120")
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_first_screen_h100_vs_mi300_fits_120_columns(pair, capsys, monkeypatch):
    out, _, _, _, _, _ = pair
    rc, text, _ = _cli(capsys, monkeypatch, "diff", f"{out}:h100_qwen_infer.json.gz",
                       f"{out}:mi300_qwen_infer.json.gz")
    assert rc == 0
    lines = text.splitlines()
    assert max(len(ln) for ln in lines) <= 120
    assert lines[2].startswith("Total      GPU span 49.653 ms -> 47.086 ms: -2.567 ms (-5.2 %), faster")

    def first_row(title: str) -> list[str]:
        i = next(i for i, ln in enumerate(lines) if ln.startswith(title))
        return lines[i + 3].split()

    # the op and argument set that grew most on the MI300: the MLP's aten::mm, 48 calls, 4,055.251 -> 5,308.273 µs
    reg = first_row("Biggest regressions by op and argument set")
    assert reg[0] == "aten::mm" and reg[-6:] == ["1,253.022", "30.899", "4,055.251", "5,308.273", "48", "48"]
    imp = first_row("Biggest improvements by op and argument set")
    assert imp[0] == "aten::copy_" and imp[-6:] == ["-1,020.003", "-48.383", "2,108.187", "1,088.184", "72", "72"]
    cat = first_row("Kernel categories that moved")
    assert cat[:4] == ["elementwise", "both", "-4,713.125", "-26.864"]
    one = first_row("Op and argument sets on one side only")
    assert one[:2] == ["variant_only", "aten::fill_"] and one[-2:] == ["107.545", "24"]
    assert "kernels: 6 base only (18.912 ms), 6 variant only (32.047 ms)" in " ".join(ln.strip() for ln in lines)
    # where in the call tree: the attention of the fifth decoder layer (Qwen2Attention_4) grew most, all of it in
    # its aten::_flash_attention_forward call (the kernels underneath have other names on each platform)
    where = first_row("Where in the call tree")
    assert where[0] == "aten::_flash_attention_forward" and where[-3:] == ["Qwen2Attention_4", "66.663", "66.663"]


def test_levels_files_and_json(pair, capsys, monkeypatch, tmp_path):
    out, base, _, mi300, _, _ = pair
    rc, text, _ = _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}:{mi300}", "--level", "kernels",
                       "-f", "csv")
    assert rc == 0
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(text))}
    gemm = rows["sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off"
                "_kernel__5x_cublas"]
    assert (gemm["side"], gemm["base_count"], gemm["variant_count"], gemm["base_us"], gemm["diff_us"]) == (
        "base_only", "241", "", "12789.918", "-12789.918")
    assert sum(r["side"] == "variant_only" for r in rows.values()) == 6
    rc, _, err = _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}:{mi300}", "--out", str(tmp_path / "d"))
    assert rc == 0 and sorted(p.name for p in (tmp_path / "d").iterdir()) == sorted(
        f"diff_{lv}.csv" for lv in LEVELS)
    rc, text, _ = _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}:{mi300}", "-f", "json")
    doc = json.loads(text)
    assert doc["base"]["trace_id"] == base and set(doc) == {"base", "variant", *LEVELS}
    assert doc["ops"][0]["op_name"] == "aten::mul" and doc["ops"][0]["diff_us"] == -2211.613
    rc, _, err = _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}:{mi300}", "-f", "csv")
    assert rc == 2 and err.strip() == "tracesql: error: --format csv needs --level LEVEL (one level) or --out DIR " \
                                      "(a file per level)"
    rc, _, err = _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}:nothing-like-it")
    assert rc == 1 and len(err.strip().splitlines()) == 1 and "no trace matches 'nothing-like-it'" in err


def test_fail_if_slower(pair, capsys, monkeypatch):
    out, base, variant, _, events, _ = pair
    # the variant's span grew by 2 × 123.457 µs over 49,652.832 µs: 0.497 %
    rc, _, err = _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}:{variant}", "--fail-if-slower", "0.49")
    assert rc == EXIT_SLOWER == 3 and "0.50 % above the baseline's (49.653 ms -> 49.900 ms)" in err
    assert _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}:{variant}", "--fail-if-slower", "0.5")[0] == 0
    assert _cli(capsys, monkeypatch, "diff", f"{out}:{variant}", f"{out}:{base}", "--fail-if-slower", "0")[0] == 0
    assert _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}:{base}", "--fail-if-slower", "0")[0] == 0


def test_a_trace_without_gpu_activity(pair, capsys, monkeypatch):
    """Against a CPU-only trace every GPU row is one-sided; the screen says so and --fail-if-slower has nothing to
    compare."""
    out, base, _, _, _, _ = pair
    with tracesql.open(out) as ds:
        tl = ds.diff(base, "hta_cpu_only_rank34.json.gz", level="timeline")
    assert set(tl["side"]) == {"base_only"} and tl.height == 8 and tl["variant_ns"].null_count() == 8
    assert dict(zip(tl["measure"], tl["diff_ns"], strict=True))["span"] == -49_652_832
    rc, text, _ = _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}:hta_cpu_only_rank34.json.gz",
                       "--fail-if-slower", "0")
    assert rc == 0 and text.splitlines()[2] == "Total      no GPU activity in the variant: no GPU timeline to compare"


def test_steps_are_paired_by_position(tmp_path, shared_traces):
    """HTA's trace_compare pair: two steps each (ProfilerStep#1009, #1010); in the test trace the second step
    launched no GPU work, so its timeline is one-sided, and the steady state (the steps after the first) exists in
    the base trace only."""
    out = tmp_path / "ds"
    base, test = tracesql.ingest([str(shared_traces / "nvidia/hta_trace_compare_base.json.gz"),
                                  str(shared_traces / "nvidia/hta_trace_compare_test.json.gz")], out=out, quiet=True)
    with tracesql.open(out) as ds:
        steps = ds.diff(base.trace_id, test.trace_id, level="steps")
        steady = ds.diff(base.trace_id, test.trace_id, level="steady")
    rows = {(r["step_pos"], r["measure"]): r for r in steps.iter_rows(named=True)}
    assert len(rows) == 16
    first, second = rows[(1, "busy")], rows[(2, "busy")]
    assert (first["base_step"], first["variant_step"], first["side"], first["base_ns"], first["diff_ns"]) == (
        "ProfilerStep#1009", "ProfilerStep#1009", "both", 4000, 0)
    assert (second["base_step"], second["variant_step"], second["side"], second["base_ns"], second["diff_ns"]) == (
        "ProfilerStep#1010", "ProfilerStep#1010", "base_only", 4000, -4000)
    assert list(steps["diff_ns"][:3]) == [-4000] * 3 and set(steady["side"]) == {"base_only"}
    assert steady["base_steps"][0] == "ProfilerStep#1010" and steady.height == 8


@pytest.fixture(scope="module")
def two_datasets(pair, tmp_path_factory, shared_traces):
    """A second dataset holding a copy of the baseline (the same file, so the same trace_id) and the variant."""
    out, base, variant, _, _, _ = pair
    other = tmp_path_factory.mktemp("diff2") / "ds"
    (b2,) = tracesql.ingest([str(shared_traces / "nvidia/h100_qwen_infer.json.gz")], out=other, quiet=True)
    assert b2.trace_id == base
    return out, other, base, variant


def test_a_trace_against_its_copy_in_another_dataset(two_datasets, capsys, monkeypatch):
    """The same trace_id on both sides: the variant's rows are opened under <trace_id>@variant, and the diff is all
    zeros, one-sided nowhere; a dataset of one trace needs no :TRACE."""
    out, other, base, _ = two_datasets
    with tracesql.api.diff.open_sides(f"{out}:{base}", str(other)) as s:
        assert (s.base_ids, s.variant_ids) == ([base], [base + "@variant"])
        assert s.ds.sql("SELECT trace_id, count(*) AS n FROM kernels GROUP BY ALL ORDER BY 1").rows() == [
            (base, 1707), (base + "@variant", 1707)]
    d = tracesql.api.diff.compare(f"{out}:h100_qwen_infer.json.gz", str(other))
    assert isinstance(d, dict) and set(d) == set(LEVELS)
    for level in LEVELS:
        assert d[level].height > 0 and set(d[level]["side"]) == {"both"}, level
        assert d[level]["diff_ns"].abs().max() == 0, level
    assert d["ops"].height == 21
    rc, text, _ = _cli(capsys, monkeypatch, "diff", f"{out}:{base}", str(other))
    lines = text.splitlines()
    assert rc == 0 and lines[0] == f"== base {out}:h100_qwen_infer.json.gz (trace {base})"
    assert lines[1] == f"   variant {other}:h100_qwen_infer.json.gz (trace {base}@variant)"
    assert lines[2].startswith("Total      GPU span 49.653 ms -> 49.653 ms: +0.000 ms (+0.0 %), unchanged")


def test_the_slowed_op_across_two_datasets(two_datasets, pair):
    """The baseline in one dataset, the variant in the other: the same numbers as within one dataset."""
    out, other, base, variant = two_datasets
    with tracesql.open(out) as ds:
        within = ds.diff(base, variant, level="op_args")
        across = ds.diff(str(other), variant, level="op_args")  # Dataset.diff takes DATASET[:TRACE] too
    assert isinstance(within, pl.DataFrame) and isinstance(across, pl.DataFrame)
    assert across.equals(within)
    n = pair[4].height
    assert across["diff_ns"][0] == n * SLOW_NS and across["diff_ns"].abs()[1:].max() == 0


def test_sides_are_checked(pair, two_datasets, capsys, monkeypatch):
    out, other, base, variant = two_datasets
    # the old form, DATASET BASE VARIANT: one line naming the new one
    rc, _, err = _cli(capsys, monkeypatch, "diff", str(out), base, variant)
    assert rc == 2 and err.strip() == ("tracesql: error: diff takes BASE VARIANT, each DATASET[:TRACE] (`tracesql "
                                       "diff DS:TRACE_A DS:TRACE_B`), no longer DATASET BASE VARIANT")
    # a dataset of several traces without :TRACE, and a dataset that does not exist
    rc, _, err = _cli(capsys, monkeypatch, "diff", str(out), str(other))
    assert rc == 1 and len(err.strip().splitlines()) == 1 and f"'{out}' names 4 traces: give DATASET:TRACE" in err
    rc, _, err = _cli(capsys, monkeypatch, "diff", f"{out}:{base}", f"{out}-missing:{base}")
    assert rc == 1 and len(err.strip().splitlines()) == 1 and "no such dataset folder" in err
    with pytest.raises(tracesql.DatasetError, match="no trace 0123456789abcdef in the dataset"):
        tracesql.open(out, trace_ids=[base], also=[(other, "0123456789abcdef", "x")])


@pytest.fixture(scope="module")
def jobs(tmp_path_factory, shared_traces):
    """The 8 ranks of dlrm_8rank in one dataset, and in another the same job with every GPU event of rank 3's
    aten::mm calls made SLOW_NS longer (the other ranks are the same files: the same trace_ids, opened as
    <trace_id>@variant beside the baseline). Returns (base dataset, variant dataset, rank 3's slowed events)."""
    work = tmp_path_factory.mktemp("jobs")
    src = shared_traces / "multirank/dlrm_8rank"
    files = sorted(src.glob("rank*.json.gz"))
    results = tracesql.ingest([str(f) for f in files], out=work / "base", quiet=True)
    ranks = {r.rank: r.trace_id for r in results}
    assert sorted(r for r in ranks if r is not None) == list(range(8))
    r3 = str(ranks[3])
    with tracesql.open(work / "base", trace_ids=[r3]) as ds:
        events = ds.sql("SELECT g.correlation, g.name, a.input_dims FROM gpu_event_ops g JOIN _op_args a "
                        "ON a.trace_id = g.trace_id AND a.event_id = g.op_event_id "
                        "WHERE g.trace_id = $t AND g.op_name = 'aten::mm'", {"t": r3})
    (work / "files").mkdir()
    for f in files:
        dst = work / "files" / f.name
        if f.name == "rank3.json.gz":
            _slowed_copy(f, dst, set(events["correlation"]), own_stream=True)
        else:
            dst.write_bytes(f.read_bytes())
    tracesql.ingest(sorted(str(p) for p in (work / "files").iterdir()), out=work / "variant", quiet=True)
    return work / "base", work / "variant", events


@pytest.mark.slow  # 8 ranks a side, every level (a minute or more)
def test_ranks_pair(jobs):
    """Rank r against rank r: rank 3 holds the whole change, on aten::mm, exactly; the other ranks are all zeros."""
    base, variant, events = jobs
    n = events.height  # the GPU events of rank 3's aten::mm calls (one per call)
    d = tracesql.api.diff.compare(str(base), str(variant), ranks="pair")
    assert isinstance(d, dict) and set(d) == set(LEVELS)
    assert d["modules"].height == 0  # the DLRM traces record no nn.Module
    for level in set(LEVELS) - {"modules"}:
        df = d[level]
        assert df.columns[0] == "rank" and sorted(set(df["rank"])) == list(range(8)), level
        assert set(df["side"]) == {"both"}, level
        assert df.filter(df["rank"] != 3)["diff_ns"].abs().max() == 0, level
    ops = d["ops"].filter(d["ops"]["diff_ns"] != 0)
    assert ops.select("rank", "op_name", "diff_ns").rows() == [(3, "aten::mm", n * SLOW_NS)]
    assert n == 15 and ops["base_count"][0] == 13  # 13 calls, two of them twice on one argument set
    args = d["op_args"].filter(d["op_args"]["diff_ns"] != 0)
    per_dims = events.group_by("input_dims").len()
    assert sorted(zip(args["input_dims"], args["diff_ns"], strict=True)) == sorted(
        (dims, k * SLOW_NS) for dims, k in per_dims.rows())
    assert set(args["op_name"]) == {"aten::mm"} and set(args["rank"]) == {3}
    kernels = d["kernels"].filter(d["kernels"]["diff_ns"] != 0)
    assert kernels["diff_ns"].sum() == n * SLOW_NS and set(kernels["rank"]) == {3}
    tl = d["timeline"].filter(d["timeline"]["rank"] == 3)
    busy = tl.filter(tl["measure"] == "busy").row(0, named=True)
    assert 0 < busy["diff_ns"] <= n * SLOW_NS


@pytest.mark.slow  # 8 ranks a side, every level (a minute or more)
def test_ranks_job(jobs, capsys, monkeypatch):
    """The jobs as a whole: every value summed over the 8 ranks; the change is rank 3's, exactly, and the compute
    model's rates are those of all ranks' calls together."""
    base, variant, events = jobs
    n = events.height
    with tracesql.open(base) as ds:
        mm = ds.sql("SELECT sum(kernel_time_ns)::BIGINT AS t, sum(op_count)::BIGINT AS c FROM op_summary "
                    "WHERE op_name = 'aten::mm'").row(0)
        top_perf = ds.sql("""SELECT input_dims, sum(count)::BIGINT AS c, sum(kernel_time_sum_ns)::BIGINT AS t,
                                    sum(count * flops)::DOUBLE AS f FROM perf_args
                             WHERE op_name = 'aten::mm' AND input_dims = '((16, 512), (512, 512))' GROUP BY 1""").row(0)
    d = tracesql.api.diff.compare(str(base), str(variant), ranks="job")
    assert isinstance(d, dict) and d["modules"].height == 0
    for level in set(LEVELS) - {"modules"}:
        assert set(d[level]["side"]) == {"both"}, level
    ops = d["ops"].filter(d["ops"]["diff_ns"] != 0)
    assert ops.select("op_name", "base_count", "base_ns", "diff_ns").rows() == [("aten::mm", mm[1], mm[0],
                                                                                 n * SLOW_NS)]
    assert mm[1] == 8 * 13
    # the argument set ((16, 512), (512, 512)): its calls on all ranks, one of rank 3's slowed
    k = events.filter(events["input_dims"] == top_perf[0]).height
    assert k == 2 and top_perf[1] == 8  # one call on each rank, whose two GPU events were slowed on rank 3
    perf = d["perf"].filter(d["perf"]["input_dims"] == top_perf[0]).row(0, named=True)
    assert (perf["base_count"], perf["base_ns"], perf["diff_ns"]) == (top_perf[1], top_perf[2], k * SLOW_NS)
    assert perf["base_tflop_per_s"] == pytest.approx(top_perf[3] / top_perf[2] / 1e3, rel=1e-12)
    assert perf["tflop_per_s_ratio"] == pytest.approx(top_perf[2] / (top_perf[2] + k * SLOW_NS), rel=1e-12)
    # the command line: --ranks job's first screen, --ranks pair's per-rank table, --fail-if-slower per rank
    rc, text, _ = _cli(capsys, monkeypatch, "diff", str(base), str(variant), "--ranks", "job")
    assert rc == 0 and "aten::mm" in text
    assert text.splitlines()[0] == f"== base {base}:rank0.json.gz ... rank7.json.gz (8 traces, values summed)"
    ops_line = next(ln for ln in text.splitlines() if ln.startswith("Total"))
    assert ops_line.startswith("Total      GPU span ")
    rc, text, err = _cli(capsys, monkeypatch, "diff", str(base), str(variant), "--ranks", "pair",
                         "--fail-if-slower", "1")
    rows = [ln.split() for ln in text.splitlines() if ln.split()[:2] in (["3", "busy"], ["0", "busy"])]
    assert rows[0][:4] == ["0", "busy", "both", "0.000"] and rows[1][:3] == ["3", "busy", "both"]
    assert rc == EXIT_SLOWER and err.startswith("tracesql: rank 3's GPU span is ")
    rc, _, err = _cli(capsys, monkeypatch, "diff", str(base), str(variant))
    assert rc == 1 and f"'{base}' names 8 traces: give DATASET:TRACE" in err
