"""One class per category rule: the GPU timeline, the categories, the gaps, the kernel summary and the report
count communication the same way, also when it runs in kernels whose names say nothing of NCCL (DeepEP's
expert-parallel dispatch/combine), and a user rule changes all of them at once."""
from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

import tracesql
from tracesql.api.categories import add_rules

pytestmark = pytest.mark.slow  # over 3 s on a 2-core machine (the fast tier: -m 'not slow')

# GPU work on device 0 (µs): two streams; DeepEP communication overlaps a GEMM and an elementwise kernel.
KERNELS = [  # (name, stream, start_us, dur_us)
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas", 7, 0, 100),
    ("void deep_ep::internode::dispatch<8, 4, 1024>(int4*, float*, int*)", 8, 50, 150),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, float)", 7, 120, 60),
    ("void deep_ep::intranode::combine<__nv_bfloat16, 8>(void*, float*, int)", 8, 250, 50),
    ("expert_token_exchange_v2", 7, 310, 40),
]
T0 = 1_000_000  # µs


def _trace() -> dict:
    ev: list[dict] = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}}]
    for i, (name, stream, start, dur) in enumerate(KERNELS):
        corr = 100 + i
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::op", "pid": 1, "tid": 1, "ts": T0 - 50 + 2 * i,
                   "dur": 1.5})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": T0 - 50 + 2 * i + 0.2, "dur": 1, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": T0 + start, "dur": dur,
                   "args": {"device": 0, "stream": stream, "correlation": corr}})
    return {"schemaVersion": 1, "traceEvents": ev}


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "deepep.json"
    path.write_text(json.dumps(_trace()))
    out = tmp_path / "ds"
    [r] = tracesql.ingest([str(path)], out=out)
    assert r.status == "ingested", r.error
    return out


def _numbers(ds_path) -> dict:
    with tracesql.open(ds_path) as ds:
        tl = ds.sql("SELECT comm_ns, comm_exposed_ns, compute_ns, busy_ns FROM gpu_timeline WHERE pooled").row(0)
        cat = ds.sql("""SELECT total_time_ms FROM kernel_category_summary
                        WHERE ruleset = 'default' AND kernel_category = 'communication'""")
        gaps = ds.sql("SELECT name, activity_class FROM gpu_gaps ORDER BY ts_ns").rows()
        ks = ds.sql("SELECT activity_class, sum(total_ns) AS ns FROM kernel_summary GROUP BY ALL ORDER BY 1").rows()
    return {"timeline": tl, "category_ms": cat.item() if cat.height else 0.0,
            "gap_classes": [c for _, c in gaps], "summary": dict(ks)}


def _report_comm_us(ds_path, tmp_path, tag: str) -> float:
    out = tmp_path / f"report-{tag}"
    r = subprocess.run([sys.executable, "-m", "tracesql.cli", "report", str(ds_path), "--format", "csv",
                        "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    [f] = list(out.rglob("gpu_timeline.csv"))
    rows = [row for row in csv.DictReader(f.open()) if row["pooled"] == "true"]
    [col] = [c for c in rows[0] if c.startswith("comm_") and not c.startswith("comm_exposed") and c.endswith("_us")]
    return float(rows[0][col])


def test_communication_in_non_nccl_kernels_agrees_everywhere(dataset, tmp_path):
    n = _numbers(dataset)
    # |[50, 200] ∪ [250, 300]| = 200 µs of communication; compute is [0, 100] ∪ [120, 180] ∪ [310, 350],
    # so 20 + 20 + 50 = 90 µs of the communication are exposed
    assert n["timeline"] == (200_000, 90_000, 200_000, 290_000)
    assert n["category_ms"] == pytest.approx(0.2)  # Σ dur of the DeepEP kernels: 150 + 50 µs
    assert n["gap_classes"] == ["compute", "comm", "compute", "comm", "compute"]
    assert n["summary"] == {"comm": 200_000, "compute": 200_000}
    assert _report_comm_us(dataset, tmp_path, "before") == pytest.approx(200.0)


def test_a_user_rule_changes_every_view(dataset, tmp_path):
    rules = tmp_path / "my_rules.csv"
    rules.write_text("category,subcategory,pattern,note\n"
                     "communication,all_to_all,^expert_token_exchange_v2$,our hand-written token exchange\n")
    add_rules(dataset, rules)  # no class given: the class of its category, communication -> comm
    n = _numbers(dataset)
    # the exchange [310, 350] no longer counts as compute: comm 240 µs, exposed 90 + 40 µs
    assert n["timeline"] == (240_000, 130_000, 160_000, 290_000)
    assert n["category_ms"] == pytest.approx(0.24)
    assert n["gap_classes"] == ["compute", "comm", "compute", "comm", "comm"]
    assert n["summary"] == {"comm": 240_000, "compute": 160_000}
    assert _report_comm_us(dataset, tmp_path, "after") == pytest.approx(240.0)


def test_a_rule_may_name_its_class(dataset, tmp_path):
    rules = tmp_path / "copy_rules.csv"
    rules.write_text("category,class,pattern\nmy_copies,memcpy,^expert_token_exchange_v2$\n")
    add_rules(dataset, rules)
    with tracesql.open(dataset) as ds:
        assert ds.sql("SELECT memory_ns, compute_ns FROM gpu_timeline WHERE pooled").row(0) == (40_000, 160_000)
    bad = tmp_path / "bad.csv"
    bad.write_text("category,class,pattern\nx,network,^y$\n")
    with pytest.raises(tracesql.DatasetError, match="class must be one of"):
        add_rules(dataset, bad)
