"""Terminal tables cut long names so that different names still look different: on the real kernel names of
h100_qwen_infer (template signatures of 200+ characters that share their first 60 and their last 30 characters)."""
from __future__ import annotations

import os
import subprocess

import pytest

import tracesql
from tests.conftest import tracesql_cli
from tracesql.render.output import cut_distinct, cut_middle, format_table

ADD = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, "
       "std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul>)")
RSQRT = ("void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)"
         "::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
         "std::array<char*, 2ul> >(int, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::"
         "operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)")


def test_names_cut_alike_keep_what_tells_them_apart():
    # cut in the middle, the two kernels look the same
    assert cut_middle(ADD, 48) == cut_middle(RSQRT, 48) == "void at::native::vectori…std::array<char*, 2ul>)"
    shown = cut_distinct([ADD, RSQRT, ADD, "aten::mm"], 48)
    assert shown == {ADD: "void at::nat…CUDAFunctorOnSelf_add<float>, std:…",
                     RSQRT: "void at::nat…rsqrt_kernel_cuda(at::TensorIterat…",
                     "aten::mm": "aten::mm"}
    assert all(len(v) == 48 for k, v in shown.items() if k != "aten::mm")
    # a difference near the end: the window reaches it
    a, b = "x" * 60 + "_fwd_" + "y" * 30, "x" * 60 + "_bwd_" + "y" * 30
    assert cut_distinct([a, b], 20) == {a: "xxxxx…fwd_yyyyyyyyy…", b: "xxxxx…bwd_yyyyyyyyy…"}
    # a name that is the start of another: cut in the middle, their ends differ
    c = "x" * 60 + "_fwd"
    assert cut_distinct([c, c + "_2"], 20) == {c: "xxxxxxxxxx…xxxxx_fwd", c + "_2": "xxxxxxxxxx…xxx_fwd_2"}
    # names that already look different are cut in the middle as before
    assert cut_distinct(["a" * 50, "b" * 50], 10) == {"a" * 50: "aaaaa…aaaa", "b" * 50: "bbbbb…bbbb"}


@pytest.fixture(scope="module")
def qwen_report(qwen_dataset) -> str:
    env = dict(os.environ, COLUMNS="120")
    r = subprocess.run(tracesql_cli() + ["report", str(qwen_dataset[0])], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _section(text: str, name: str) -> list[str]:
    body = text.split(f"\n== {name}\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return body[3:]  # the trace line, the header and its rule


def test_short_kernels_rows_stay_distinct(qwen_dataset, qwen_report):
    """The report's short_kernels at 120 columns: the (op, kernel) pairs shown are as many as the different pairs
    (before: add and rsqrt, both `void at::native::vectori… std::array<char*, 2ul>)`)."""
    with tracesql.open(qwen_dataset[0]) as ds:
        pairs = ds.execute("SELECT op_name, kernel_name FROM short_kernels").fetchall()
    rows = _section(qwen_report, "short_kernels")
    assert len(rows) == len(pairs) == 14
    shown = [r[:63].rstrip() for r in rows]
    assert len(set(shown)) == len(set(pairs)) == 14
    assert shown[:4] == ["aten::add     void at::nat…CUDAFunctorOnSelf_add<float>, std::…",
                         "aten::rsqrt   void at::nat…rsqrt_kernel_cuda(at::TensorIterato…",
                         "[no launch]   void at::nat…CUDAFunctorOnSelf_add<float>, std::…",
                         "[no launch]   void at::nat…rsqrt_kernel_cuda(at::TensorIterato…"]


def test_a_column_keeps_the_width_that_tells_its_values_apart(qwen_dataset):
    """`perf` by argument set at 120 columns: input_dims is kept wide enough (26 characters) for its 31 different
    values to look different, columns on the right giving way; before, 16 characters made rows look alike."""
    with tracesql.open(qwen_dataset[0]) as ds:
        df = ds.perf()
    text = format_table(df, width=120)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 120
    header = lines[1].split()
    assert header[:4] == ["op_name", "family", "input_dims", "count"]
    start = lines[1].index("input_dims")
    dims = [ln[start:start + 26] for ln in lines[3:-1]]
    keys = list(zip(df["op_name"], df["input_dims"], strict=True))
    assert len(set(zip(df["op_name"], dims, strict=True))) == len(set(keys))
    assert dims[0] == "((8944, 1024)…1024, 2816))"
