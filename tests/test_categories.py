"""Kernel and op categories from the rule table (sql/rules/*.csv, sql/2*.sql), checked on the shared traces."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import tracesql
from tracesql.api.categories import add_rules, categories, read_rules
from tracesql.errors import DatasetError


def q(ds, sql, params=None):
    return ds.con.sql(sql, params=params).pl()


# Real kernel names from ../shared/traces (a prefix of each, unique enough), checked by hand:
# prefix -> (category, subcategory or None when any subcategory is right).
HAND_CHECKED = {
    # GEMM: cuBLAS / cuBLASLt / CUTLASS / Tensile / hipBLASLt / XLA
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64": ("GEMM", "cublas"),
    "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT": ("GEMM", "nvjet"),
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>": ("GEMM", "cutlass"),
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm": ("GEMM", "cutlass"),
    "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256": ("GEMM", "hipblaslt"),
    "Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MI16x16x16x1": ("GEMM", "tensile"),
    "ampere_fp16_s16816gemm_fp16_128x256_ldg8_f2f_stages_64x3_nn": ("GEMM", None),
    "volta_sgemm_128x64_nt": ("GEMM", None),
    "void sgemm_largek_lds64<": ("GEMM", None),
    "void gemv2T_kernel_val<": ("GEMM", "gemv"),
    "void gemmSN_TN_kernel<": ("GEMM", "gemv"),
    "void cublasLt::splitKreduce_kernel<": ("GEMM", "splitk_reduce"),
    "void epilogue::impl::globalKernel<": ("GEMM", "cublas"),
    "gemm_fusion_dot_general_1.kd": ("GEMM", "xla"),
    # attention
    "void pytorch_flash::flash_fwd_kernel<": ("attention_fwd", "flash"),
    "attn_fwd": ("attention_fwd", "triton_flash"),
    "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausal": ("attention_fwd", "fmha"),
    "kernel_unified_attention_3d": ("attention_fwd", "paged"),
    "kernel_unified_attention_2d": ("attention_fwd", "paged"),
    "reduce_segments": ("attention_fwd", "paged"),
    "void vllm::reshape_and_cache_flash_kernel<": ("attention_fwd", "kv_cache"),
    # convolution (cuDNN, CUTLASS-in-cuDNN, MIOpen, XLA)
    "void cudnn::detail::dgrad_engine<": ("conv", "dgrad"),
    "void cudnn::cnn::wgrad_alg0_engine<": ("conv", "wgrad"),
    "void implicit_convolve_sgemm<": ("conv", "implicit_gemm"),
    "void explicit_convolve_sgemm<": ("conv", "implicit_gemm"),
    "volta_scudnn_128x64_relu_interior_nn_v1": ("conv", "implicit_gemm"),
    "sm80_xmma_fprop_implicit_gemm_": ("conv", "fprop"),
    "sm80_xmma_wgrad_implicit_gemm_": ("conv", "wgrad"),
    "igemm_fwd_gtcx2_nhwc_bf16": ("conv", "fprop"),
    "igemm_bwd_gtcx2_nhwc_bf16": ("conv", "dgrad"),
    "igemm_wrw_gtcx2_nhwc_bf16": ("conv", "wgrad"),
    "void cudnn::winograd_nonfused::winogradForwardData4x4<": ("conv", "winograd"),
    "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolution": ("conv", None),
    "void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::reduction::kernel::ReduceSplitK": ("conv", None),
    "Im3d2Col.kd": ("conv", "im2col"),
    "batched_transpose_64x16_pack_4x1_ediv_2x1_half": ("conv", "layout"),
    "void cudnn::ops::nchwToNhwcKernel<": ("conv", "layout"),
    "void fft2d_r2c_32x32<": ("conv", "fft"),
    "cask_cudnn::computeOffsetsKernel": ("conv", "aux"),
    # elementwise
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>": ("elementwise", "pytorch"),
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel":
        ("elementwise", "activation"),
    "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_kernel_impl<float>":
        ("elementwise", "activation"),
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::masked_fill_kernel":
        ("elementwise", "pytorch"),
    "void vllm::rotary_embedding_kernel<": ("elementwise", "rope"),
    "SubTensorOpWithScalar1d": ("elementwise", "miopen"),
    "wrapped_broadcast.kd": ("elementwise", "xla_fusion"),
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<": ("elementwise", "multi_tensor_apply"),
    # reductions, softmax, norms
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps": ("reduce", "reduce"),
    "void cub::DeviceScanKernel<": ("reduce", "scan"),
    "void cunn_ClassNLLCriterion_updateOutput_kernel<": ("reduce", "loss"),
    "void (anonymous namespace)::softmax_warp_forward<": ("softmax", "forward"),
    "void (anonymous namespace)::softmax_warp_backward<": ("softmax", "backward"),
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<": ("norm", "layer_norm"),
    "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<": ("norm", "layer_norm"),
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<": ("norm", "batch_norm"),
    "void cudnn::bn_bw_1C11_kernel_new<": ("norm", "batch_norm"),
    "MIOpenBatchNormFwdTrainSpatial": ("norm", "batch_norm"),
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::batch_norm_calc_invstd":
        ("norm", "batch_norm"),
    "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwd": ("norm", "rms_norm"),
    "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
    "vllm::fused_add_rms_norm_kernel": ("norm", "rms_norm"),
    "void at::native::(anonymous namespace)::ComputeFusedParamsCUDAKernel<": ("norm", "group_norm"),
    # copies, memsets, sync
    "Memcpy HtoD (Pinned -> Device)": ("copy", "memcpy_htod"),
    "Memcpy DtoD (Device -> Device)": ("copy", "memcpy_dtod"),
    "Memcpy DtoH (Device -> Pageable)": ("copy", "memcpy_dtoh"),
    "__amd_rocclr_copyBuffer.kd": ("copy", "rocclr_copy"),
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy<": ("copy", "cat"),
    "void at::native::elementwise_kernel<128, 4, "
    "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda": ("copy", "copy_kernel"),
    "input_transpose_fusion.kd": ("copy", "transpose"),
    "Memset (Device)": ("memset", "memset"),
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>": ("memset", "fill"),
    "Context Sync": ("sync", "sync"),
    # communication (NCCL and without NCCL)
    "ncclKernel_AllReduce_RING_LL_Sum_float": ("communication", "all_reduce"),
    "ncclDevKernel_AllGather_RING_LL": ("communication", "all_gather"),
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t": ("communication", "send_recv"),
    "ncclKernel_Broadcast_RING_LL_Sum_int8_t": ("communication", "broadcast"),
    "void (anonymous namespace)::multimem_all_reduce_kernel<": ("communication", "all_reduce"),
    # Triton, MoE
    "triton_poi_fused__unsafe_view_mul_silu_2": ("elementwise", "inductor_pointwise"),
    "triton_red_fused_add_mean_mul_pow_rsqrt_0": ("reduce", "inductor_reduction"),
    "triton__0d1d2d3d4d5d6d7d8d9d10d11d12d13d14": ("triton", "other"),
    "triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_5": ("norm", "inductor"),
    "triton_poi_fused_constant_pad_nd_moe_forward_0": ("elementwise", "inductor_pointwise"),
    "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu": ("moe", "grouped_gemm"),
    "bmm_MxE4m3_MxE2m1MxE4m3_Fp32": ("moe", "grouped_gemm"),
    "void moe::dev::routing::routingIndicesHistogramKernel<": ("moe", "routing"),
    "void moe::dev::finalize::finalizeKernelVecLoad<": ("moe", "combine"),
    "_combined_routing_compute": ("moe", "routing"),
    "_topk_forward": ("moe", "routing"),
    # sort, embeddings / indexing, RNG, quantization, optimizer, pooling
    "void cub::DeviceRadixSortOnesweepKernel<": ("sort_topk", "sort"),
    "void split_embedding_codegen_forward_unweighted_kernel<": ("embedding_index", "embedding"),
    "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<":
        ("embedding_index", "embedding"),
    "void at::native::(anonymous namespace)::indexSelectLargeIndex<": ("embedding_index", "index"),
    "void fbgemm_gpu::permute_2D_data_kernel<": ("embedding_index", "sparse"),
    "void bounds_check_indices_kernel<": ("embedding_index", "sparse"),
    "void at::native::_scatter_gather_elementwise_kernel<": ("embedding_index", "gather_scatter"),
    "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
    "at::native::templates::cuda::normal_and_transform": ("rng", "rng"),
    "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<": ("rng", "rng"),
    "void fbgemm_gpu::(anonymous namespace)::_compute_FP8_quantize_cuda_kernel<": ("quantize", "quantize"),
    "void tensorrt_llm::kernels::quantize_with_block_size<": ("quantize", "quantize"),
    "void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_hfp8_to_float_gpu": ("quantize", "quantize"),
    "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>": ("optimizer", "optimizer"),
    "void at::native::(anonymous namespace)::max_pool_backward_nchw<": ("pooling", "pooling"),
    "void at::native::(anonymous namespace)::adaptive_average_pool<": ("pooling", "pooling"),
}


def test_hand_checked_kernel_names(ds):
    assert len(HAND_CHECKED) >= 60
    got = q(ds, "SELECT name, kernel_category, kernel_subcategory FROM kernel_name_categories "
                "WHERE ruleset = 'default'")
    wrong, absent = [], []
    for prefix, (cat, sub) in HAND_CHECKED.items():
        rows = got.filter(got["name"].str.starts_with(prefix))
        if rows.height == 0:
            absent.append(prefix)
        for name, kc, ks in rows.iter_rows():
            if kc != cat or (sub is not None and ks != sub):
                wrong.append((name[:100], (kc, ks), (cat, sub)))
    assert not absent, f"names not in the shared traces: {absent}"
    assert not wrong, wrong


def test_other_is_at_most_two_percent_per_trace(ds, trace_ids, capsys):
    df = q(ds, """
        SELECT t.file_name, s.trace_id, sum(s.total_time_ms) AS gpu_ms,
               coalesce(sum(s.total_time_ms) FILTER (WHERE s.kernel_category = 'other'), 0) AS other_ms
        FROM kernel_category_summary s JOIN traces t USING (trace_id)
        WHERE s.ruleset = 'default' GROUP BY ALL ORDER BY 1""")
    by_id = {v: k for k, v in trace_ids.items()}
    with capsys.disabled():
        print("\n`other` share of GPU time under the default rules (Σ dur over all GPU events):")
        for file_name, tid, gpu_ms, other_ms in df.iter_rows():
            print(f"  {by_id.get(tid, file_name):55s} {other_ms:10.3f} ms of {gpu_ms:10.3f} ms "
                  f"= {100 * other_ms / gpu_ms if gpu_ms else 0:5.2f} %")
    # every trace with GPU events is covered (the CPU-only traces have none)
    gpu_traces = set(q(ds, "SELECT DISTINCT trace_id FROM kernels")["trace_id"])
    assert set(df["trace_id"]) == gpu_traces
    assert len(gpu_traces) >= 30
    for file_name, _, gpu_ms, other_ms in df.iter_rows():
        assert other_ms <= 0.02 * gpu_ms, file_name


def test_every_gpu_event_has_one_category_per_ruleset(ds):
    n = ds.con.sql("SELECT count(*) FROM kernels").fetchall()[0][0]
    df = q(ds, "SELECT ruleset, count(*) AS n, count(DISTINCT (trace_id, event_id)) AS d, "
               "count(kernel_category) AS c FROM gpu_event_categories GROUP BY ruleset ORDER BY ruleset")
    assert df["ruleset"].to_list() == ["default", "hta", "jax", "tracelens"]
    assert df["n"].to_list() == [n] * 4 and df["d"].to_list() == [n] * 4 and df["c"].to_list() == [n] * 4
    k = ds.con.sql("SELECT count(*), count(kernel_category) FROM kernels_categorized").fetchall()[0]
    assert k == (n, n)


def test_no_priority_ties_between_different_categories(ds):
    """For every real name, the two best matching rules of a ruleset never tie with different results."""
    df = q(ds, """
        WITH m AS (
            SELECT m.ruleset, n.cat, n.name, m.category, m.subcategory, m.priority,
                   rank() OVER (PARTITION BY m.ruleset, n.cat, n.name ORDER BY m.priority DESC) AS r
            FROM (SELECT DISTINCT cat, name FROM kernels) n
            JOIN _category_rule_matches m
              ON m.applies_to = 'kernel' AND m.name_key = replace(n.name, chr(10), ' ')
             AND (m.event_cat IS NULL OR m.event_cat = n.cat))
        SELECT ruleset, name, list(DISTINCT category || '/' || coalesce(subcategory, '')) AS results
        FROM m WHERE r = 1 GROUP BY ruleset, cat, name HAVING count(DISTINCT category || '/' ||
                                                               coalesce(subcategory, '')) > 1""")
    assert df.height == 0, df.rows()[:5]
    ops = q(ds, """
        WITH m AS (
            SELECT ruleset, name_key, category, subcategory,
                   rank() OVER (PARTITION BY ruleset, name_key ORDER BY priority DESC) AS r
            FROM _category_rule_matches WHERE applies_to = 'op')
        SELECT ruleset, name_key FROM m WHERE r = 1 GROUP BY ALL
        HAVING count(DISTINCT category || '/' || coalesce(subcategory, '')) > 1""")
    assert ops.height == 0, ops.rows()[:5]


def test_matching_equals_regexp_matches_per_pair(ds):
    """The one-pass text matching gives exactly the (rule, name) pairs of regexp_matches(name, pattern)."""
    names = "(SELECT DISTINCT name FROM kernels WHERE trace_id IN (SELECT trace_id FROM traces WHERE file_name IN " \
            "('hta_ns_resolution_rank0.json.gz', 'b200_eager_nccl.json.gz', 'mi210_gpu_only.json.gz')))"
    a = q(ds, "SELECT ruleset, file, line_no, name_key AS name FROM _category_rule_matches "
              f"WHERE applies_to NOT IN ('op', 'kernel_hlo_op') AND name_key IN {names}")
    b = q(ds, f"SELECT r.ruleset, r.file, r.line_no, n.name FROM {names} n "
              "JOIN category_rules r ON r.applies_to NOT IN ('op', 'kernel_hlo_op') "
              "AND regexp_matches(n.name, r.pattern)")
    assert a.height == b.height > 1000
    assert set(a.iter_rows()) == set(b.iter_rows())


def test_summary_per_trace_h100_qwen(ds, trace_ids):
    tid = trace_ids["nvidia/h100_qwen_infer.json.gz"]
    df = categories(ds, trace=tid)
    assert df.columns[:4] == ["kernel_category", "count", "total_time_ms", "pct"]
    rows = {r[0]: r for r in df.iter_rows()}
    # 1,707 GPU events, Σ dur 45.6473 ms (the kernels table)
    assert sum(df["count"]) == 1707
    assert sum(df["total_time_ms"]) == pytest.approx(45.6473, abs=1e-9)
    # GEMM: 241 sm90_xmma_gemm (12,789.918 µs, as in HTA's kernel_breakdown_all.csv) + 1 CUTLASS sgemm (3.52 µs)
    assert rows["GEMM"][1] == 242 and rows["GEMM"][2] == pytest.approx(12.793438, abs=1e-9)
    assert rows["attention_fwd"][1] == 34 and rows["attention_fwd"][2] == pytest.approx(3.855468, abs=1e-6)
    assert df["kernel_category"][0] == "elementwise"
    assert df["pct"].sum() == pytest.approx(100.0)
    assert df["cumulative_pct"][-1] == pytest.approx(100.0)
    assert "other" not in rows
    # by file name too
    assert categories(ds, trace="h100_qwen_infer.json.gz").equals(df)


def test_hta_preset_reproduces_hta_kernel_types(ds, trace_ids, reference_dir):
    """The hta ruleset gives every kernel of HTA's kernel_breakdown_all.csv the kernel_type HTA reported."""
    for ref, trace in [("nvidia_h100_qwen_infer", "nvidia/h100_qwen_infer.json.gz"),
                       ("nvidia_hta_ns_resolution_rank0", "nvidia/hta_ns_resolution_rank0.json.gz")]:
        with open(reference_dir / "hta" / ref / "kernel_breakdown_all.csv", newline="") as f:
            expected = {r["name"]: r["kernel_type"] for r in csv.DictReader(f)}
        got = dict(q(ds, "SELECT DISTINCT c.name, c.kernel_category FROM kernels k JOIN kernel_name_categories c "
                         "ON c.name = k.name AND c.cat IS NOT DISTINCT FROM k.cat "
                         "WHERE c.ruleset = 'hta' AND k.trace_id = $t", {"t": trace_ids[trace]}).iter_rows())
        assert len(expected) > 20
        assert {n: got.get(n) for n in expected} == expected, ref
    # sync records HTA keeps as GPU events: the ...Sync ones are OTHER, but 'Stream Wait Event' does not
    # match HTA's exclusion regex and so is COMPUTATION; memsets are MEMORY
    sync = q(ds, "SELECT DISTINCT name, kernel_category FROM kernel_name_categories WHERE ruleset = 'hta' "
                 "AND cat = 'cuda_sync' ORDER BY name")
    assert sync.rows() == [("Context Sync", "OTHER"), ("Event Sync", "OTHER"), ("Stream Sync", "OTHER"),
                           ("Stream Wait Event", "COMPUTATION")]
    assert q(ds, "SELECT kernel_category FROM kernel_name_categories WHERE ruleset = 'hta' "
                 "AND name = 'Memset (Device)'")["kernel_category"].to_list() == ["MEMORY"]


def test_tracelens_kernel_buckets(ds):
    got = dict(q(ds, "SELECT name, kernel_category FROM kernel_name_categories WHERE ruleset = 'tracelens' "
                     "AND cat = 'kernel'").iter_rows())
    assert got["__amd_rocclr_copyBuffer.kd"] == "memcpy"
    assert got["ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"] \
        == "communication"
    # multimem all-reduce has no nccl/rccl in its name: TraceLens counts it as computation
    assert [v for k, v in got.items() if "multimem_all_reduce" in k] == ["computation"]
    cats = q(ds, "SELECT cat, list(DISTINCT kernel_category ORDER BY kernel_category) AS c "
                 "FROM kernel_name_categories WHERE ruleset = 'tracelens' GROUP BY cat ORDER BY cat")
    assert dict(cats.iter_rows()) == {"cuda_sync": ["ignored"], "gpu_memcpy": ["memcpy"],
                                      "gpu_memset": ["computation"],
                                      "kernel": ["communication", "computation", "memcpy"]}


def test_jax_preset_keywords(ds, trace_ids):
    df = q(ds, "SELECT DISTINCT c.name, c.kernel_category FROM kernels k JOIN kernel_name_categories c "
               "ON c.name = k.name AND c.cat IS NOT DISTINCT FROM k.cat "
               "WHERE c.ruleset = 'jax' AND k.trace_id = $t ORDER BY 1",
           {"t": trace_ids["jax/mi300_conv_trace.json.gz"]})
    got = dict(df.iter_rows())
    cijk = [v for k, v in got.items() if k.startswith("Cijk")]
    assert cijk == ["GEMM"]
    assert got["Im3d2Col.kd"] == "Uncategorized Events"
    assert got["input_transpose_fusion.kd"] == "Uncategorized Events"
    # keyword lists are case-sensitive: no kernel of the JAX conv trace is Conv ("conv_" is not in its names)
    assert "Conv" not in got.values()
    gemm = q(ds, "SELECT DISTINCT c.name, c.kernel_category FROM kernels k JOIN kernel_name_categories c "
                 "ON c.name = k.name WHERE c.ruleset = 'jax' AND k.trace_id = $t",
             {"t": trace_ids["jax/mi300_gemm_perfetto_trace.json.gz"]})
    gm = dict(gemm.iter_rows())
    assert gm["gemm_fusion_dot_general_1.kd"] == "GEMM"
    assert gm["wrapped_broadcast.kd"] == "Uncategorized Events"


def test_stream_and_device_breakdowns_add_up(ds, trace_ids):
    tid = trace_ids["multirank/hta_sampled/rank-0.json.gz"]
    by_stream = q(ds, "SELECT * FROM kernel_category_by_stream WHERE trace_id = $t", {"t": tid})
    by_device = q(ds, "SELECT * FROM kernel_category_by_device WHERE trace_id = $t", {"t": tid})
    total = q(ds, "SELECT kernel_category, count, total_time_ms FROM kernel_category_summary "
                  "WHERE ruleset = 'default' AND trace_id = $t", {"t": tid})
    assert by_stream["stream"].n_unique() > 1
    for df in (by_stream, by_device):
        agg = df.group_by("kernel_category").agg(pl.col("count").sum(), pl.col("total_time_ms").sum())
        m = {r[0]: (r[1], r[2]) for r in agg.iter_rows()}
        for cat, n, ms in total.iter_rows():
            assert m[cat][0] == n and m[cat][1] == pytest.approx(ms)
    pct = by_stream.group_by(["device", "stream"]).agg(pl.col("pct_of_stream_time").sum())
    assert all(abs(p - 100.0) < 1e-9 for p in pct["pct_of_stream_time"] if p is not None)


# ---- user rules -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def user_rules_ds(all_dataset, tmp_path_factory):
    """A dataset sharing the ingested traces of the session dataset, with three user rule files:
    my_rules.csv (added by add_rules) re-labels one kernel name under `default`; r.csv (add_rules) adds a
    low-priority default rule that loses and a new ruleset `mine`; hand.csv (written by hand into
    DATASET/rules/) tests the reader: header order, CRLF, comments, quoting."""
    base = tmp_path_factory.mktemp("user_rules")
    d = base / "ds"
    d.mkdir()
    os.symlink(Path(all_dataset[0]).resolve() / "traces", d / "traces")
    (base / "my_rules.csv").write_text("category,pattern,subcategory\nmy_gemm,^volta_sgemm_128x64_nt$,volta\n")
    dest = add_rules(d, base / "my_rules.csv")
    assert dest == d / "rules" / "my_rules.csv"
    (base / "r.csv").write_text(
        "ruleset,applies_to,category,pattern,priority,note\n"
        "default,kernel,weak,(?i)sgemm,1,loses against the shipped GEMM rules\n"
        "mine,kernel,gemm_like,\"(?i)(gemm|nvjet|Cijk)\",5,\"quoted, with a comma\"\n"
        "mine,,everything_else,.*,0,\n")
    add_rules(d, base / "r.csv")
    (d / "rules" / "hand.csv").write_text(
        "pattern,category,priority,ruleset\r\n"
        "# comment\r\n"
        "\r\n"
        "\"^Memcpy \"\"?HtoD\",h2d,20000,t1\r\n"
        "\"a{1,2}b\",ab,5,t1\r\n")
    with tracesql.open(d) as d2:
        yield d2


def test_user_rule_changes_only_the_matching_kernels(user_rules_ds, ds):
    cols = "trace_id, event_id, name, kernel_category, kernel_subcategory"
    before = q(ds, f"SELECT {cols} FROM kernels_categorized")
    after = q(user_rules_ds, f"SELECT {cols} FROM kernels_categorized")
    target = "volta_sgemm_128x64_nt"
    j = before.join(after, on=["trace_id", "event_id"], suffix="_after")
    assert j.height == before.height == after.height
    changed = j.filter((j["kernel_category"] != j["kernel_category_after"])
                       | (j["kernel_subcategory"] != j["kernel_subcategory_after"]))
    assert changed.height == before.filter(before["name"] == target).height == 126
    assert set(changed["name"]) == {target}
    assert set(changed["kernel_category"]) == {"GEMM"} and set(changed["kernel_category_after"]) == {"my_gemm"}
    # the peer rulesets are untouched
    for rs in ("tracelens", "hta", "jax"):
        a = q(ds, f"SELECT cat, name, kernel_category FROM kernel_name_categories WHERE ruleset = '{rs}'")
        b = q(user_rules_ds, f"SELECT cat, name, kernel_category FROM kernel_name_categories WHERE ruleset = '{rs}'")
        assert a.sort(["cat", "name"]).equals(b.sort(["cat", "name"]))


def test_user_rule_priority_and_new_ruleset(user_rules_ds):
    d2 = user_rules_ds
    r = q(d2, "SELECT file, ruleset, applies_to, category, priority FROM category_rules WHERE source = 'user' "
              "AND file <> 'hand.csv' ORDER BY file, line_no")
    assert r.rows() == [("my_rules.csv", "default", "kernel", "my_gemm", 10000),
                        ("r.csv", "default", "kernel", "weak", 1),
                        ("r.csv", "mine", "kernel", "gemm_like", 5),
                        ("r.csv", "mine", "kernel", "everything_else", 0)]
    # a low-priority user rule loses against the shipped GEMM rules
    assert q(d2, "SELECT count(*) AS n FROM kernel_name_categories WHERE kernel_category = 'weak'")["n"][0] == 0
    df = categories(d2, ruleset="mine")
    assert set(df["kernel_category"]) == {"gemm_like", "everything_else"}
    assert df["pct"].sum() == pytest.approx(100.0)
    note = q(d2, "SELECT note FROM category_rules WHERE ruleset = 'mine' AND category = 'gemm_like'")
    assert note["note"].to_list() == ["quoted, with a comma"]


def test_rule_file_parsing(user_rules_ds):
    """A hand-written file dropped into DATASET/rules/ is read by header name, with CSV quoting."""
    d2 = user_rules_ds
    r = q(d2, "SELECT ruleset, applies_to, category, pattern, priority, line_no FROM category_rules "
              "WHERE file = 'hand.csv' ORDER BY line_no")
    assert r.rows() == [("t1", "kernel", "h2d", '^Memcpy "?HtoD', 20000, 4),
                        ("t1", "kernel", "ab", "a{1,2}b", 5, 5)]
    h2d = q(d2, "SELECT DISTINCT name FROM kernel_name_categories WHERE ruleset = 't1' AND kernel_category = 'h2d'")
    assert sorted(h2d["name"]) == ["Memcpy HtoD (Host -> Device)", "Memcpy HtoD (Pageable -> Device)",
                                   "Memcpy HtoD (Pinned -> Device)"]
    with pytest.raises(DatasetError, match="unknown ruleset"):
        categories(d2, ruleset="nope")


def test_read_rules_rejects_bad_files(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("category,pattern\nx,(unclosed\n")
    with pytest.raises(DatasetError, match="invalid pattern"):
        read_rules(bad)
    bad.write_text("name,pattern\nx,y\n")
    with pytest.raises(DatasetError, match="category"):
        read_rules(bad)
    bad.write_text("category,pattern,applies_to\nx,y,stream\n")
    with pytest.raises(DatasetError, match="applies_to"):
        read_rules(bad)
    bad.write_text("category,pattern,priority\nx,y,high\n")
    with pytest.raises(DatasetError, match="priority"):
        read_rules(bad)


def test_cli_categories_csv(all_dataset, ds):
    out = subprocess.run([sys.executable, "-m", "tracesql.cli", "categories", str(all_dataset[0]),
                          "--ruleset", "hta", "--format", "csv"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(out.stdout.splitlines()))
    assert {"kernel_category", "count", "total_time_us", "pct"} <= set(rows[0])  # the CLI speaks µs throughout
    assert [r["kernel_category"] for r in rows] == ["COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER"]
    assert sum(float(r["pct"]) for r in rows) == pytest.approx(100.0)
    assert sum(int(r["count"]) for r in rows) == ds.con.sql("SELECT count(*) FROM kernels").fetchall()[0][0]
    un = categories(ds, unmatched=True)
    assert un.columns == ["name", "cat", "count", "total_time_ms", "pct", "traces"] and un.height == 0


# ---- op level: categories per parent op, native op categories, TraceLens's op categories ------------

@pytest.fixture(scope="module")
def ops_ds(all_dataset):
    """The session dataset opened once more, with the call tree's gpu_event_ops (attribution of every GPU
    event), its TraceLens view tl_gpu_event_ops and tl_launchers (TraceLens launcher instances), computed
    over all traces at each use, computed once into tables: the op-level views read them many times here."""
    d = tracesql.open(all_dataset[0])
    for view in ("gpu_event_ops", "tl_gpu_event_ops", "tl_launchers"):
        d.con.execute(f"CREATE TEMP TABLE _{view}_once AS SELECT * FROM {view}")
        d.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM _{view}_once")
    yield d
    d.close()


TL_REFERENCES = ["amd/mi300_bert_small_infer", "amd/mi300_normalization", "amd/mi300_qwen_infer",
                 "amd/mi300_torch_compile_triton", "nvidia/h100_bert_small_infer", "nvidia/h100_falconsai_infer",
                 "nvidia/h100_qwen_infer"]


@pytest.mark.parametrize("trace", TL_REFERENCES)
def test_tracelens_ops_summary_by_category_matches_reference(ops_ds, trace_ids, reference_dir, trace):
    with open(reference_dir / "tracelens" / trace / "ops_summary_by_category.csv", newline="") as f:
        ref = list(csv.DictReader(f))
    got = q(ops_ds, 'SELECT "op category", "Count", total_direct_kernel_time_ms, "Percentage (%)", '
                '"Cumulative Percentage (%)" FROM tl_ops_summary_by_category WHERE trace_id = $t ORDER BY rank',
            {"t": trace_ids[trace + ".json.gz"]})
    assert got.height == len(ref)
    for r, (cat, n, ms, pct, cum) in zip(ref, got.iter_rows(), strict=True):
        assert (cat, n) == (r["op category"], int(r["Count"]))
        assert ms == pytest.approx(float(r["total_direct_kernel_time_ms"]), rel=1e-12)
        assert pct == pytest.approx(float(r["Percentage (%)"]), abs=1e-9)
        assert cum == pytest.approx(float(r["Cumulative Percentage (%)"]), abs=1e-9)


def test_tracelens_inference_report_by_category_and_module_matches_reference(ops_ds, trace_ids, reference_dir):
    """vLLM decode under HIP graph replay, merged with its capture trace (the call tree's capture merge):
    TraceLens's inference report groups by op category and parent nn.Module."""
    with open(reference_dir / "tracelens" / "graphs" / "vllm_decode_full" / "ops_summary_by_category.csv",
              newline="") as f:
        ref = list(csv.DictReader(f))
    got = q(ops_ds, 'SELECT "op category", parent_module, "Count", call_stack_first, total_direct_kernel_time_ms, '
                    '"Percentage (%)", "Cumulative Percentage (%)" FROM tl_ops_summary_by_category_module '
                    "WHERE trace_id = $t ORDER BY rank",
            {"t": trace_ids["graphs/vllm_decode_full/graph_execution.json.gz"]})
    assert got.height == len(ref) == 8
    for r, (cat, mod, n, stack, ms, pct, cum) in zip(ref, got.iter_rows(), strict=True):
        assert (cat, mod, n, stack) == (r["op category"], r["parent_module"], int(r["Count"]), r["call_stack_first"])
        assert ms == pytest.approx(float(r["total_direct_kernel_time_ms"]), rel=1e-12)
        assert pct == pytest.approx(float(r["Percentage (%)"]), abs=1e-9)
        assert cum == pytest.approx(float(r["Cumulative Percentage (%)"]), abs=1e-9)


@pytest.mark.parametrize("trace", ["nvidia/h100_qwen_infer", "amd/mi300_normalization",
                                   "amd/mi300_torch_compile_triton", "nvidia/h100_falconsai_infer"])
def test_tracelens_op_category_per_op_name_matches_ops_summary(ops_ds, trace_ids, reference_dir, trace):
    """The call tree's tl_ops_summary with our op categories: per launcher name, TraceLens's instance count,
    Categories and Σ of direct kernel time (µs)."""
    with open(reference_dir / "tracelens" / trace / "ops_summary.csv", newline="") as f:
        ref = {r["name"]: (int(r["Count"]), r["Categories"], float(r["total_direct_kernel_time_sum"]))
               for r in csv.DictReader(f)}
    got = q(ops_ds, 'SELECT name, "Count", "Categories", total_direct_kernel_time_sum FROM tl_ops_summary '
                    "WHERE trace_id = $t", {"t": trace_ids[trace + ".json.gz"]})
    assert got.height == len(ref)
    for name, n, cats, us in got.iter_rows():
        rn, rcats, rus = ref[name]
        assert (n, cats) == (rn, rcats), name
        assert us == pytest.approx(rus, rel=1e-12), name


def test_tracelens_op_category_sources(ops_ds, trace_ids):
    """Registry names, the first-kernel fallback and `other` on the mi300 normalization trace."""
    df = q(ops_ds, "SELECT DISTINCT tl_launcher_name, op_category, category_source FROM tl_op_category "
               "WHERE trace_id = $t ORDER BY 1", {"t": trace_ids["amd/mi300_normalization.json.gz"]})
    got = {n: (c, s) for n, c, s in df.iter_rows()}
    assert got["aten::native_layer_norm_backward"] == ("NORM_bwd", "op_rule")
    assert got["aten::miopen_batch_norm"] == ("NORM_fwd", "op_rule")
    assert got["aten::_fused_rms_norm"] == ("NORM_fwd", "op_rule")
    assert got["aten::fill_"] == ("elementwise", "first_kernel")
    assert got["aten::normal_"] == ("elementwise", "first_kernel")
    assert got["aten::mean"] == ("reduce", "op_rule")


def test_kernel_category_by_op_h100_qwen(ops_ds, trace_ids):
    tid = trace_ids["nvidia/h100_qwen_infer.json.gz"]
    df = q(ops_ds, "SELECT cpu_op, kernel_category, count, total_time_ms, pct_of_parent_time, parent_time_ms "
               "FROM kernel_category_by_op WHERE trace_id = $t", {"t": tid})
    rows = {(r[0], r[1]): r[2:] for r in df.iter_rows()}
    # aten::mm launches one cuBLAS GEMM and one workspace memset per call
    assert rows[("aten::mm", "GEMM")][0] == 96 and rows[("aten::mm", "memset")][0] == 96
    assert rows[("aten::mm", "GEMM")][2] == pytest.approx(98.796403, abs=1e-6)
    assert rows[("aten::_flash_attention_forward", "attention_fwd")][:3] == (24, pytest.approx(2.722705), 100.0)
    # 509 GPU events ran before the profiler's CPU window opened: no launch in the trace
    assert sum(v[0] for k, v in rows.items() if k[0] == "[no launch]") == 509
    pct = df.group_by("cpu_op").agg(pl.col("pct_of_parent_time").sum())
    assert all(abs(p - 100.0) < 1e-9 for p in pct["pct_of_parent_time"])
    assert df["count"].sum() == 1707
    per_kernel = q(ops_ds, "SELECT kernel_category, kernel_name, count, avg_time_us FROM kernel_category_by_op_kernel "
                       "WHERE trace_id = $t AND cpu_op = 'aten::mm' ORDER BY kernel_category", {"t": tid})
    assert per_kernel["kernel_category"].to_list() == ["GEMM", "memset"]
    assert per_kernel["kernel_name"][0].startswith("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64")


def test_kernel_category_by_op_graph_launch(ops_ds, trace_ids):
    """Kernels replayed by a HIP graph with no cpu_op around the launch are grouped under `graph`."""
    df = q(ops_ds, "SELECT kernel_category, count, pct_of_parent_time FROM kernel_category_by_op "
               "WHERE trace_id = $t AND cpu_op = 'graph' ORDER BY total_time_ms DESC",
           {"t": trace_ids["graphs/vllm_decode_full/graph_execution.json.gz"]})
    assert df["kernel_category"].to_list()[:3] == ["moe", "GEMM", "attention_fwd"]
    assert df["count"].sum() == 421
    assert df["pct_of_parent_time"][0] == pytest.approx(73.8, abs=0.1)


def test_op_category_summary_h100_qwen(ops_ds, trace_ids):
    tid = trace_ids["nvidia/h100_qwen_infer.json.gz"]
    df = q(ops_ds, "SELECT op_category, ops, gpu_events, kernel_time_ms, pct, cumulative_pct FROM op_category_summary "
               "WHERE trace_id = $t ORDER BY rank", {"t": tid})
    assert df["gpu_events"].sum() == 1707
    assert df["kernel_time_ms"].sum() == pytest.approx(45.6473, abs=1e-9)
    rows = {r[0]: r[1:] for r in df.iter_rows()}
    # GEMM ops: 96 aten::mm + 72 aten::addmm + 1 aten::bmm launched by ops, 73 unlinked GEMM kernels
    # (each its own instance); their memsets count with them
    assert rows["GEMM"][0] == 96 + 72 + 1 + 73
    assert df["cumulative_pct"][-1] == pytest.approx(100.0)
    src = q(ops_ds, "SELECT cpu_op, op_category, category_source FROM op_instance_categories WHERE trace_id = $t "
                "AND cpu_op IN ('aten::mm', 'aten::cat', '[no launch]') GROUP BY ALL ORDER BY ALL", {"t": tid})
    got = set(src.iter_rows())
    assert ("aten::mm", "GEMM", "op_rule") in got
    assert ("aten::cat", "copy", "op_rule") in got
    assert all(s == "kernels" for c, _, s in got if c == "[no launch]")


def test_categories_breakdowns(ops_ds, trace_ids):
    t = "nvidia/h100_bert_small_infer.json.gz"
    by_op = categories(ops_ds, trace=trace_ids[t], by="op")
    assert by_op.columns[:3] == ["cpu_op", "kernel_category", "count"]
    assert by_op.row(0)[:3] == ("aten::addmm", "GEMM", 26) and by_op["pct_of_parent_time"][0] == 100.0
    op_cat = categories(ops_ds, trace=trace_ids[t], by="op_category")
    assert op_cat["op_category"].to_list()[:3] == ["GEMM", "attention_fwd", "norm"]
    assert op_cat["gpu_events"].sum() == 61
    sub = categories(ops_ds, trace=trace_ids[t], by="subcategory")
    assert sub["count"].sum() == 61 and sub["pct"].sum() == pytest.approx(100.0)
    allt = categories(ops_ds, by="device")
    assert allt.columns[0] == "trace_id" and allt["count"].sum() == ops_ds.con.sql(
        "SELECT count(*) FROM kernels").fetchall()[0][0]
    with pytest.raises(DatasetError, match="default ruleset"):
        categories(ops_ds, ruleset="hta", by="stream")
    # the breakdowns are the SQL library's @output categories-by, in its order, with their columns
    from tracesql.api.categories import BY

    assert BY == ["category", "subcategory", "stream", "device", "op", "op_kernel", "op_category"]
    assert categories(ops_ds, trace=trace_ids[t], by="stream").columns == [
        "device", "stream", "kernel_category", "count", "total_time_ms", "pct_of_stream_time"]
    assert op_cat.columns == ["op_category", "ops", "gpu_events", "kernel_time_ms", "pct", "cumulative_pct"]
    assert categories(ops_ds, by="op_category").columns == ["trace_id", *op_cat.columns]


def test_default_op_rules_on_real_op_names(ds):
    expected = {
        "aten::mm": "GEMM", "aten::addmm": "GEMM", "aten::bmm": "GEMM", "aten::linear": "GEMM",
        "vllm::rocm_unquantized_gemm": "GEMM", "MmBackward0": "GEMM",
        "aten::_flash_attention_forward": "attention_fwd", "aten::scaled_dot_product_attention": "attention_fwd",
        "vllm::unified_attention_with_output": "attention_fwd",
        "_C_cache_ops::reshape_and_cache_flash": "attention_fwd",
        "aten::cudnn_convolution": "conv", "aten::convolution_backward": "conv",
        "aten::native_layer_norm_backward": "norm", "aiter::rmsnorm2d_fwd_with_add_ck": "norm",
        "aten::cudnn_batch_norm": "norm", "aten::_softmax": "softmax", "aten::_log_softmax_backward_data": "softmax",
        "c10d::allreduce_": "communication", "record_param_comms": "communication",
        "All2All_Pooled_Req": "communication", "c10d::_reduce_scatter_base_": "communication",
        "vllm::moe_forward": "moe", "SortTokens": "moe", "triton_poi_fused__to_copy_1": "elementwise",
        "aten::copy_": "copy", "aten::cat": "copy", "aten::_local_scalar_dense": "copy", "aten::fill_": "memset",
        "aten::mul": "elementwise", "aten::gelu": "elementwise", "aten::threshold_backward": "elementwise",
        "_C::rotary_embedding": "elementwise", "aten::sum": "reduce", "aten::nll_loss_forward": "reduce",
        "aten::index_select": "embedding_index", "aten::embedding": "embedding_index",
        "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function": "embedding_index",
        "fbgemm::FloatToHFP8Quantized": "quantize", "_C::static_scaled_fp8_quant": "quantize",
        "aten::max_pool2d_with_indices": "pooling", "aten::normal_": "rng", "aten::native_dropout": "rng",
        "Optimizer.step#SGD.step": "optimizer", "aten::_foreach_add_": "elementwise", "aten::_fft_r2c": "fft",
    }
    got = dict(q(ds, "SELECT name, op_category FROM op_name_categories WHERE ruleset = 'default'").iter_rows())
    assert {n: got.get(n) for n in expected} == expected


def _read(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_rule_file_with_a_byte_order_mark(tmp_path):
    """A rule file saved with a UTF-8 byte order mark (as Excel writes CSV) reads as without one."""
    f = tmp_path / "bom.csv"
    f.write_bytes(b"\xef\xbb\xbfcategory,pattern\nmine,^gemm\n")
    rules = read_rules(f)
    assert rules.select("category", "pattern").rows() == [("mine", "^gemm")]


def test_rule_file_bounds(tmp_path):
    """A field over the csv module's default limit (131,072 characters) is read and said to be too long, in one
    error naming the line; a field within the bound is kept; more than MAX_RULES rules are refused, quickly."""
    import time

    from tracesql.api.categories import MAX_RULE_FIELD, MAX_RULES

    f = tmp_path / "long.csv"
    f.write_text("category,pattern,note\nx,^a,ok\ny,^b," + "n" * 200_000 + "\n")
    with pytest.raises(DatasetError, match=r"long.csv:3: note has 200,000 characters; a rule's field has at most"):
        read_rules(f)
    f.write_text("category,pattern\nx,^(" + "a" * (MAX_RULE_FIELD - 10) + ")\n")
    assert read_rules(f).height == 1
    f.write_text("category,pattern\n" + "".join(f"c{i},^k{i}_\n" for i in range(MAX_RULES + 1)))
    t0 = time.monotonic()
    with pytest.raises(DatasetError, match=f"more than {MAX_RULES:,} rules"):
        read_rules(f)
    f.write_text("category,pattern\n" + "".join(f"c{i},^k{i}_\n" for i in range(MAX_RULES)))
    assert read_rules(f).height == MAX_RULES
    assert time.monotonic() - t0 < 60
    f.write_text("category,pattern\n" + "".join(f"c{i},^k{i}_\n" for i in range(50)) + "bad,(unclosed\n")
    with pytest.raises(DatasetError, match=r"invalid pattern '\(unclosed'"):  # the batch check still names it
        read_rules(f)


def test_rule_file_errors_from_the_command_line(tmp_path, capsys):
    """`categories --rules` with a rule file out of bounds or not UTF-8: one line, exit 1, no traceback."""
    from tracesql.cli.main import main

    d = tmp_path / "ds"
    (d / "traces").mkdir(parents=True)
    f = tmp_path / "r.csv"
    for content in (b"category,pattern\nx," + b"a" * 140_000 + b"\n", b"category,pattern\nx,\xff\xfe\n"):
        f.write_bytes(content)
        assert main(["categories", str(d), "--rules", str(f)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("tracesql: error: ") and str(f) in err, err


def test_user_rules_of_a_dataset_are_bounded_together(tmp_path):
    """Rule files that are each within MAX_RULES but together above it: the one that crosses it is refused and
    the dataset keeps the others; replacing a file by one of the same name does not count it twice."""
    from tracesql.api.categories import MAX_RULES

    d = tmp_path / "ds"
    (d / "traces").mkdir(parents=True)
    half = MAX_RULES // 2 + 1
    for name in ("a.csv", "b.csv"):
        (tmp_path / name).write_text("category,pattern\n" + "".join(f"c{i},^{name[0]}{i}_\n" for i in range(half)))
    add_rules(d, tmp_path / "a.csv")
    add_rules(d, tmp_path / "a.csv")  # the same file again: replaced
    with pytest.raises(DatasetError, match=f"make more than {MAX_RULES:,}; a dataset has at most"):
        add_rules(d, tmp_path / "b.csv")
    assert sorted(p.name for p in (d / "rules").iterdir()) == ["a.csv"]
