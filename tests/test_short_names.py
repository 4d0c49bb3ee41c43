"""Short kernel names (sql/lib/names.sql, _short_kernel_name): exact results on real names, and the guarantee that
two kernels whose identities differ never share a short name.

A kernel name's *identity* (docs/definitions.md, "Short name") is its function's qualified name, and, when that
function is a generic launch wrapper (cutlass[...]::Kernel, ::Kernel2, ::device_kernel, ck_tile::kentry), also the
qualified name of its identifying template argument: the first one that is not a literal, read through
architecture guards (class templates named enable_...sm...). `identity` below computes it with a bracket-matching
parser written independently of the SQL (which strips brackets with regular expressions); the tests assert that
the SQL short name is exactly the identity, for every GPU event name of every shared trace.
"""
from __future__ import annotations

import re

import duckdb
import pytest

from tracesql.store import sqlmodules

WRAPPER = re.compile(r"^(cutlass\w*::(Kernel|Kernel2|device_kernel)|ck_tile::kentry)$")
GUARD = re.compile(r"(^|::)enable_\w*sm\w*$")
LITERAL = re.compile(r"-?\d\w*|true|false|\([A-Za-z_][\w:]*\)-?\d+")
PAIRS = {"<": ">", "(": ")"}


def _top_level(s: str) -> list[tuple[str, str]]:
    """s split into top-level pieces: ('text', chars outside brackets) and ('<' or '(', a bracket's content). A
    closing bracket that does not match the innermost open one (the '>' of '(8)>(0)') is plain text."""
    out: list[tuple[str, str]] = []
    stack: list[str] = []
    start = 0
    text: list[str] = []
    for i, c in enumerate(s):
        if c in PAIRS:
            if not stack:
                out.append(("text", "".join(text)))
                text, start = [], i
            stack.append(c)
        elif stack and c == PAIRS[stack[-1]]:
            stack.pop()
            if not stack:
                out.append((s[start], s[start + 1:i]))
        elif not stack:
            text.append(c)
    out.append(("text", "".join(text)))
    return out


def _args(inner: str) -> list[str]:
    """Top-level comma-separated arguments of a template argument list."""
    args: list[str] = []
    cur: list[str] = []
    depth = 0
    for c in inner:
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        if c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    args.append("".join(cur).strip())
    return args


def _outer(arg: str) -> str:
    return arg.split("<", 1)[0].strip()


def identity(name: str) -> str | None:
    if not re.search(r"[<(]", name) or not re.search(r"::|^void |^[A-Za-z_]\w*[<(]", name):
        return name
    s = name.replace("(anonymous namespace)", "{anonymous}").replace("operator()", "operator{}")
    s = re.sub(r"(\s*\[clone [^\]]*\])+$", "", s)
    pieces = _top_level(s)
    text = "".join(v for k, v in pieces if k == "text")
    fn = re.sub(r"[<>()]", "", re.sub(r"^(void|[A-Za-z_][\w:]*\s+)\s*", "", text)).strip()
    if not fn:
        return None
    if not WRAPPER.match(fn):
        return fn
    # the function's own template list: the last <...> before the last (...) at the top level
    groups = [(k, v) for k, v in pieces if k != "text"]
    last_paren = max((i for i, (k, _) in enumerate(groups) if k == "("), default=len(groups))
    targs = [v for k, v in groups[:last_paren] if k == "<"]
    if not targs:
        return fn
    args = _args(targs[-1])
    while args and LITERAL.fullmatch(args[0]):
        args.pop(0)
    if not args:
        return fn
    arg = args[0]
    while GUARD.search(_outer(arg)) and "<" in arg:
        arg = _args(arg.split("<", 1)[1].rsplit(">", 1)[0])[0]
    outer = _outer(arg)
    return f"{fn}<{outer}>" if re.fullmatch(r"[A-Za-z_{][\w:{}]*", outer) else fn


# (full name, short name): names from the shared traces, then names written by the libraries' launch code.
CASES = [
    # PyTorch (nvidia/h100_qwen_infer, amd/mi300_qwen_infer)
    ("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor"
     "<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, "
     "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)"
     "::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor"
     "<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})",
     "at::native::elementwise_kernel"),
    ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType"
     "<2u>, unsigned int, 3, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous "
     "namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, "
     "64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
     "at::native::{anonymous}::CatArrayBatchedCopy"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> "
     ">(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>) [clone .kd]",
     "at::native::vectorized_elementwise_kernel"),
    ("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
     "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, "
     "c10::BFloat16 const*, float, int, int)", "vllm::fused_add_rms_norm_kernel"),
    # FlashAttention-2 in PyTorch (nvidia/h100_qwen_infer): a named kernel, its traits stay out
    ("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
     "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, "
     "true, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)", "pytorch_flash::flash_fwd_kernel"),
    # CUTLASS 2 generic kernels (nvidia/h100_qwen_infer, multirank/hta_sampled): the operator names the GEMM
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1"
     "::Params)", "cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>"),
    ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm"
     "_128x128_16x4_nn_align4::Params)", "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>"),
    # cuDNN's embedded CUTLASS (nvidia/hta_nccl_data)
    ("void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::reduction::kernel::ReduceSplitK<cutlass_cudnn_train::"
     "MatrixShape<4, 128>, cutlass_cudnn_train::epilogue::thread::LinearCombination<float, 4, float, float, "
     "(cutlass_cudnn_train::epilogue::thread::ScaleType::Kind)0, (cutlass_cudnn_train::FloatRoundStyle)2>, "
     "cutlass_cudnn_train::reduction::thread::ReduceAdd<float, float, 4>, 4> >(cutlass_cudnn_train::reduction::"
     "kernel::ReduceSplitK<cutlass_cudnn_train::MatrixShape<4, 128>, cutlass_cudnn_train::epilogue::thread::"
     "LinearCombination<float, 4, float, float, (cutlass_cudnn_train::epilogue::thread::ScaleType::Kind)0, "
     "(cutlass_cudnn_train::FloatRoundStyle)2>, cutlass_cudnn_train::reduction::thread::ReduceAdd<float, float, "
     "4>, 4>::Params)", "cutlass_cudnn_train::Kernel<cutlass_cudnn_train::reduction::kernel::ReduceSplitK>"),
    # NCCL (nvidia/b200_eager_nccl, multirank/dlrm_8rank): the parameter list goes
    ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllGather_RING_LL"),
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
     "ncclKernel_AllReduce_RING_LL_Sum_float"),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"),
    # NCCL >= 2.19 / RCCL generic kernel (src/device/common.h: __global__ void ncclDevKernel_Generic(...))
    ("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_Generic_1"),
    # names that are not signatures stay whole
    ("Memset (Device)", "Memset (Device)"),
    ("Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pageable -> Device)"),
    ("triton_poi_fused__to_copy_1", "triton_poi_fused__to_copy_1"),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel"
     "__5x_cublas", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas"),
    ("nvjet_sm103_tst_128x16_64x12_2x1_2cta_v_bz_TNT", "nvjet_sm103_tst_128x16_64x12_2x1_2cta_v_bz_TNT"),
    # FlashAttention-3 (hopper/flash_fwd_launch_template.h: cutlass::device_kernel<AttnKernel>, AttnKernel =
    # flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<...>>)
    ("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwd"
     "Sm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<80>, "
     "cute::C<256> >, 256, cutlass::bfloat16_t, float, cutlass::arch::Sm90, false, false, false, true, true, false, "
     "false, true, true, true, true, false, cutlass::bfloat16_t, 1>, flash::CollectiveEpilogueFwd<cute::tuple"
     "<cute::C<128>, cute::C<256>, cute::C<80> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, "
     "cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, true, false, 1>, flash::VarlenDynamicPersistent"
     "TileScheduler<128, 80, 256, 128, false, true, true, true, false, true> > > >(flash::enable_sm90_or_later"
     "<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2>, flash::CollectiveEpilogueFwd<256>, "
     "flash::VarlenDynamicPersistentTileScheduler<128> > >::Params)",
     "cutlass::device_kernel<flash::FlashAttnFwdSm90>"),
    ("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnBwdSm90<flash::CollectiveMainloopBwd"
     "Sm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<64>, cute::C<128>, "
     "cute::C<128> >, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, false, 2, 2, 1, 2, "
     "false, true, true>, flash::CollectiveEpilogueBwd<cute::tuple<cute::C<64>, cute::C<128>, cute::C<128> >, "
     "cutlass::bfloat16_t, cutlass::arch::Sm90, 256, false, false, false, 2, 1>, flash::SingleTileSchedulerBwd> > "
     ">(flash::enable_sm90_or_later<flash::FlashAttnBwdSm90<flash::CollectiveMainloopBwdSm90<2>, "
     "flash::CollectiveEpilogueBwd<256>, flash::SingleTileSchedulerBwd> >::Params)",
     "cutlass::device_kernel<flash::FlashAttnBwdSm90>"),
    ("void cutlass::device_kernel<flash::FlashAttnFwdCombine<cute::tuple<cute::C<8>, cute::C<128> >, 7, 256, 1, "
     "false, true, cutlass::bfloat16_t, float, cutlass::arch::Sm90> >(flash::FlashAttnFwdCombine<cute::tuple"
     "<cute::C<8>, cute::C<128> >, 7, 256, 1, false, true, cutlass::bfloat16_t, float, cutlass::arch::Sm90>"
     "::Params)", "cutlass::device_kernel<flash::FlashAttnFwdCombine>"),
    # PyTorch's FP8 GEMMs (aten/src/ATen/native/cuda: GemmKernel = enable_3x_kernel_for_sm9x<GemmUniversal<...>>)
    ("void cutlass::device_kernel<at::cuda::detail::enable_3x_kernel_for_sm9x<cutlass::gemm::kernel::GemmUniversal"
     "<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int> >, cutlass::gemm::collective::CollectiveMma"
     "<cutlass::gemm::MainloopSm90ArrayTmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, "
     "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperativeFP8FastAccum>, cute::tuple<cute::C<128>, "
     "cute::C<256>, cute::C<128> >, cutlass::float_e4m3_t, cute::tuple<long, cute::C<1>, cute::C<0> >*, "
     "cutlass::float_e4m3_t, cute::tuple<long, cute::C<1>, cute::C<0> >*>, cutlass::epilogue::collective::"
     "CollectiveEpilogue<cutlass::epilogue::Sm90PtrArrayTmaWarpSpecialized<4, 2, 16, true, false> >, void> > "
     ">(at::cuda::detail::enable_3x_kernel_for_sm9x<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::"
     "GroupProblemShape<cute::tuple<int, int, int> > > >::Params)",
     "cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal>"),
    # CUTLASS's Blackwell FMHA example (examples/77_blackwell_fmha)
    ("void cutlass::device_kernel<cutlass::fmha::kernel::Sm100FmhaFwdKernelTmaWarpspecialized<cute::tuple<int, "
     "int, cute::tuple<cute::tuple<int, int>, int> >, cutlass::fmha::collective::Sm100FmhaFwdMainloopTmaWarp"
     "specialized<cutlass::half_t, float, float, cute::tuple<cute::C<256>, cute::C<128>, cute::C<128> > >, "
     "cutlass::fmha::collective::Sm100FmhaFwdEpilogueTmaWarpspecialized<cutlass::half_t, float>, "
     "cutlass::fmha::kernel::IndividualTileScheduler> >(cutlass::fmha::kernel::Sm100FmhaFwdKernelTmaWarp"
     "specialized<cute::tuple<int, int> >::Params)",
     "cutlass::device_kernel<cutlass::fmha::kernel::Sm100FmhaFwdKernelTmaWarpspecialized>"),
    # Composable Kernel tile kernels (ck_tile/host/kernel_launch.hpp: kentry<[MaxThreadPerBlock,] MinBlockPerCu,
    # Kernel, Args...>), as launched by aiter / the CK flash-attention backend
    ("void ck_tile::kentry<256, 1, ck_tile::FmhaBwdDQDKDVKernel<ck_tile::BlockFmhaBwdDQDKDVPipelineKRKTRVR"
     "<ck_tile::BlockFmhaBwdPipelineProblem<ck_tile::bf16_t, ck_tile::bf16_t, float> >, ck_tile::Default2DEpilogue"
     "<ck_tile::Default2DEpilogueProblem<float, ck_tile::bf16_t, true, true> > >, ck_tile::FmhaBwdDQDKDVKernel"
     "<ck_tile::BlockFmhaBwdDQDKDVPipelineKRKTRVR<ck_tile::BlockFmhaBwdPipelineProblem<ck_tile::bf16_t, "
     "ck_tile::bf16_t, float> > >::FmhaBwdGroupModeKargs>(ck_tile::FmhaBwdDQDKDVKernel<ck_tile::BlockFmhaBwdDQDKDV"
     "PipelineKRKTRVR<ck_tile::BlockFmhaBwdPipelineProblem<ck_tile::bf16_t, ck_tile::bf16_t, float> > >"
     "::FmhaBwdGroupModeKargs)", "ck_tile::kentry<ck_tile::FmhaBwdDQDKDVKernel>"),
    ("void ck_tile::kentry<2, ck_tile::MoeSortingMultiPhaseKernel_P23<ck_tile::MoeSortingProblemMp<int> >, "
     "ck_tile::MoeSortingMultiPhaseKernel_P23<ck_tile::MoeSortingProblemMp<int> >::Kargs>(ck_tile::MoeSorting"
     "MultiPhaseKernel_P23<ck_tile::MoeSortingProblemMp<int> >::Kargs)",
     "ck_tile::kentry<ck_tile::MoeSortingMultiPhaseKernel_P23>"),
]


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    for st in sqlmodules.module_statements(sqlmodules.load_order(["lib/names"])):
        c.execute(st)
    return c


def _short(con, names: list[str]) -> dict[str, str | None]:
    return dict(con.execute("SELECT n, _short_kernel_name(n) FROM (SELECT unnest($1::VARCHAR[]) AS n)",
                            [names]).fetchall())


def test_exact_short_names(con):
    got = _short(con, [full for full, _ in CASES])
    assert got == {full: short for full, short in CASES}


def test_reference_identity_matches_cases():
    """The independent parser agrees with every hand-written expectation, so it can judge the shared traces."""
    assert {full: identity(full) for full, _ in CASES} == {full: short for full, short in CASES}


def test_different_identities_never_share_a_short_name(ds):
    """On every shared trace, the short name is the name's identity: two distinct full names of one trace share a
    short name only when their identities are equal (same function, and for a generic wrapper the same
    identifying template argument)."""
    rows = ds.execute("SELECT DISTINCT trace_id, name, short_name FROM gpu_activity").fetchall()
    assert len(rows) > 1000
    by_short: dict[tuple[str, str | None], set[str | None]] = {}
    for trace_id, name, short in rows:
        assert short == identity(name), name
        by_short.setdefault((trace_id, short), set()).add(identity(name))
    assert all(len(ids) == 1 for ids in by_short.values())
    shorts = {short for _, _, short in rows}
    # the generic wrappers of the shared traces now show what they launch
    assert "cutlass::Kernel" not in shorts and "cutlass::Kernel2" not in shorts
    assert "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>" in shorts
    assert not any(s and s.startswith("nccl") and "(" in s for s in shorts)
