-- peers/tracelens/perf_ops — TraceLens (0.1.0) perf-model sheets, the part every op family shares: which op
-- names TraceLens models and in which sheet, each modelled op instance with its GPU kernel time and kernels,
-- and the summary of a family's instances into the rows of its sheet (GEMM.csv, SDPA_fwd.csv, ...).
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from its source; the
-- code is ours:
--   registry   TraceLens/PerfModel/torch_op_mapping.py: op_to_perf_model_class_map (op name -> perf model
--              class), each class's `category` (TraceLens/PerfModel/perf_model.py) giving the sheet
--              (build_sheet_category_to_op_names). The map always holds the extension's entries
--              (TraceLens/PerfModel/extensions/pseudo_ops_perf_utils.py, get_pseudo_op_mappings), whatever
--              --enable_pseudo_ops says: aiter::_groupnorm_run is modelled as GroupNorm in every report.
--   instances  TraceLens/Reporting/generate_perf_report_pytorch.py: generate_perf_report_pytorch takes every
--              event of its tree whose name is registered for the sheet, in the tree's event order (file
--              order), and TraceLens/TreePerf/tree_perf.py: build_df_perf_metrics / compute_perf_metrics
--              compute per instance: Kernel Time (µs) = busy time (union of [ts, ts + dur], float µs) of
--              the GPU events in its subtree; kernel_details = those events sorted by start; GFLOPS =
--              flops / 1e9; TFLOPS/s = (GFLOPS / 1e3) / (Kernel Time / 1e6); Data Moved (MB) =
--              bytes / 2^20 (MiB, named MB); FLOPS/Byte = GFLOPS · 1e9 / bytes; TB/s = (bytes / 1e12) /
--              (Kernel Time / 1e6) — NaN (empty) without kernel time or without a byte count. An
--              instance whose model raises (an argument missing or of another shape) is left out.
--   summary    summarize_df_perf_metrics: group by name and the str() of every `param: *` value; GFLOPS,
--              Data Moved, FLOPS/Byte, process/thread names, Compute Spec and the args take the group's
--              first non-empty value; TB/s and TFLOPS/s: mean, median, std (ddof 1), min, max; Kernel
--              Time: the same and sum (pandas's group-by arithmetic, see peers/tracelens/ops_unique_args);
--              name_count; UID_first (the first instance's event index). Rows by Kernel Time sum
--              descending, then UID_first. kernel_details__summarize_kernel_stats (_summarize_kernel_stats):
--              the first instance with kernels is the template; its i-th kernel gives entry i (name,
--              stream) and collects the i-th duration of every instance with as many kernels (others are
--              skipped); numpy's count, sum, mean, median, std (population), min, max per entry; entries
--              sorted by (total duration, name). trunc_kernel_details as in ops_unique_args
--              (add_truncated_kernel_details in generate_perf_report_pytorch.py); empty without kernels.
--   columns    the sheet's columns are `name`, the `param: *` columns in the order they first appear over
--              the instances (each model's parameter dict order), then the statistics in the order above.
--   roofline   with a GPU (peers/tracelens/arch), after Compute Spec: Roofline Time (µs)_first, Roofline
--              Bound_first (the group's first non-empty), Pct Roofline mean, median, std, min, max — in a sheet
--              where some instance has a roofline.
--
-- @requires lib/pytext peers/float_us peers/tracelens/links peers/tracelens/ops_unique_args tree/rollups
-- @requires peers/tracelens/arch

-- tl_perf_model_ops: TraceLens's perf-model registry as far as reproduced here: one row per op name.
--   name    the op (cpu_op) name
--   model   TraceLens's perf model class (TraceLens/PerfModel/perf_model.py)
--   sheet   the sheet (file) its instances go to (the sheet whose rows TraceLens summarises them with:
--           aten::convolution_backward is summarised with CONV_fwd and its rows then moved to CONV_bwd)
CREATE OR REPLACE VIEW tl_perf_model_ops AS
SELECT * FROM (VALUES
    ('aten::mm', 'aten_mm', 'GEMM'),
    ('aten::addmm', 'aten_addmm', 'GEMM'),
    ('aten::_scaled_mm', 'aten_scaled_mm', 'GEMM'),
    ('trtllm::cublas_scaled_mm', 'aten_scaled_mm', 'GEMM'),
    ('bitsandbytes::int8_linear_matmul', 'aten_scaled_mm', 'GEMM'),
    ('aten::bmm', 'aten_bmm', 'GEMM'),
    ('aten::baddbmm', 'aten_baddbmm', 'GEMM'),
    ('sglang_profiler::fp8_utils_gemm_a8w8_blockscale', 'gemm_a8w8_blockscale', 'GEMM'),
    ('sglang_profiler::gemm_a8w8_blockscale_gemm_a8w8_blockscale', 'gemm_a8w8_blockscale', 'GEMM'),
    ('vllm::rocm_aiter_triton_gemm_a8w8_blockscale', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::gemm_a8w8_blockscale_ck', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::gemm_a8w8_blockscale_cktile', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::gemm_a8w8_blockscale_bpreshuffle_ck', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::gemm_a8w8_blockscale_bpreshuffle_cktile', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::flatmm_a8w8_blockscale_asm', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::gfx950_a8w8_blockscale_asm', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::gemm_a8w8_ck', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::gemm_a8w8_bpreshuffle_ck', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::gemm_a8w8_bpreshuffle', 'gemm_a8w8_blockscale', 'GEMM'),
    ('vllm::_rocm_aiter_preshuffled_per_token_w8a8_gemm', 'gemm_a8w8_blockscale', 'GEMM'),
    ('aiter::_gemm_a8w8_blockscale_bpreshuffle_asm', 'gemm_a8w8_blockscale', 'GEMM'),
    ('vllm::rocm_unquantized_gemm', 'vllm_rocm_unquantized_gemm', 'GEMM'),
    ('aiter::gemm_a16w16', 'gemm_a16w16', 'GEMM'),
    ('aiter::gemm_a16w16_atomic_', 'gemm_a16w16_atomic_', 'GEMM'),
    ('sglang_profiler::gemm_kernels_flydsl_hgemm', 'gemm_a16w16_atomic_', 'GEMM'),
    ('aiter::_gemm_a16w16_asm', 'gemm_a16w16_asm', 'GEMM'),
    ('aiter::gemm_afp4wfp4_', 'gemm_afp4wfp4', 'GEMM'),
    ('aiter::batched_gemm_a16wfp4_', 'batched_gemm_a16wfp4', 'GEMM'),
    ('sglang_profiler::batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant_batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant', 'batched_gemm_a8w8', 'GEMM'),
    ('tex_ts::te_gemm_ts', 'tex_ts_te_gemm_ts', 'GEMM'),
    ('vllm::gemm_with_dynamic_quant', 'vllm_gemm_with_dynamic_quant', 'GEMM'),
    ('primus_turbo_cpp_extension::hipblaslt_gemm_fp8', 'hipblaslt_gemm_fp8', 'GEMM'),
    ('primus_turbo::hipblaslt_gemm_fp8', 'hipblaslt_gemm_fp8', 'GEMM'),
    ('primus_turbo_cpp_extension::hipblaslt_gemm_fp4', 'hipblaslt_gemm_fp4', 'GEMM'),
    ('primus_turbo::hipblaslt_gemm_fp4', 'hipblaslt_gemm_fp4', 'GEMM'),
    ('aiter::gemm_a4w4', 'aiter_gemm_a4w4', 'GEMM'),
    ('aiter::_gemm_a4w4_asm', 'aiter_gemm_a4w4', 'GEMM'),
    ('FlashAttnFunc', 'flash_attention', 'SDPA_fwd'),
    ('flash_attn::_flash_attn_forward', 'flash_attention', 'SDPA_fwd'),
    ('aten::_scaled_dot_product_cudnn_attention', 'aten_sdpa_cudnn', 'SDPA_fwd'),
    ('aten::_scaled_dot_product_efficient_attention', 'aten_sdpa_efficient', 'SDPA_fwd'),
    ('aten::_scaled_dot_product_flash_attention', 'aten_sdpa_flash', 'SDPA_fwd'),
    ('flash_attn::_flash_attn_varlen_forward', 'flash_attention_varlen_forward', 'SDPA_fwd'),
    ('aiter::_flash_attn_forward', 'aiter__flash_attn_forward', 'SDPA_fwd'),
    ('aiter::wrapper_fmha_v3_fwd', 'aiter__fmha_v3_forward', 'SDPA_fwd'),
    ('aiter::mha_fwd', 'aiter__mha_fwd', 'SDPA_fwd'),
    ('aiter::fmha_v3_fwd', 'aiter__fmha_v3_fwd', 'SDPA_fwd'),
    ('flash_attn_3::fwd', 'flash_attn_v3_forward', 'SDPA_fwd'),
    ('flash_attn::_flash_attn_backward', 'flash_attention_backward', 'SDPA_fwd'),
    ('flash_attn::_flash_attn_varlen_backward', 'flash_attention_varlen_backward', 'SDPA_fwd'),
    ('aiter::_flash_attn_backward', 'aiter__flash_attn_backward', 'SDPA_fwd'),
    ('aiter::wrapper_fmha_v3_bwd', 'aiter__fmha_v3_backward', 'SDPA_fwd'),
    ('aiter::mha_bwd', 'aiter__mha_bwd', 'SDPA_fwd'),
    -- Evoformer attention, the state-space models (SSM), the fused LN-modulate backward, aiter's fused MLA RoPE and
    -- mHC ops (perf_sdpa, perf_ssm, perf_norm, perf_fused_rope_mhc)
    ('EvoformerAttention', 'evoformer_attention', 'SDPA_fwd'),
    ('DaoAILab::_causal_conv1d_fwd_cpp', 'causal_conv1d_fwd', 'SSM_fwd'),
    ('MambaSplitConv1dScanCombinedFn', 'mamba_ssd_fwd', 'SSM_fwd'),
    ('primus::fused_ln_modulate_backward', 'fused_ln_modulate_backward', 'Normalization'),
    ('aiter::fused_qk_rope_cat_and_cache_mla', 'aiter_fused_qk_rope_cat_and_cache_mla', 'FusedRoPE_fwd'),
    ('aiter::fused_qk_rope_concat_and_cache_mla', 'fused_qk_rope_concat_and_cache_mla', 'FusedRoPE_fwd'),
    ('aiter::mhc_post', 'mhc_post', 'mHC_fwd'),
    ('aiter::mhc_pre_gemm_sqrsum', 'mhc_pre_gemm_sqrsum', 'mHC_fwd'),
    ('aiter::mhc_pre_big_fuse_rmsnorm', 'mhc_pre_big_fuse_rmsnorm', 'mHC_fwd'),
    ('aiter::mhc_fused_post_pre_gemm_sqrsum', 'mhc_fused_post_pre_gemm_sqrsum', 'mHC_fwd'),
    ('aiter::fused_allreduce_rmsnorm', 'aiter_fused_allreduce_rmsnorm', 'CustomCollective_fwd'),
    ('aiter::fused_allreduce_rmsnorm_', 'aiter_fused_allreduce_rmsnorm_', 'CustomCollective_fwd'),
    ('_C_custom_ar::all_reduce', 'custom_ar_all_reduce', 'CustomCollective_fwd'),
    ('_C_custom_ar::qr_all_reduce', 'custom_ar_all_reduce', 'CustomCollective_fwd'),
    ('sgl_kernel::all_reduce_reg', 'custom_ar_all_reduce', 'CustomCollective_fwd'),
    ('sgl_kernel::qr_all_reduce', 'custom_ar_all_reduce', 'CustomCollective_fwd'),
    ('aiter::reduce_scatter', 'aiter_reduce_scatter', 'CustomCollective_fwd'),
    ('aiter::all_gather_reg', 'aiter_all_gather_reg', 'CustomCollective_fwd'),
    ('sglang::reg_all_gather_into_tensor', 'sgl_kernel_reg_all_gather_into_tensor', 'CustomCollective_fwd'),
    ('aten::copy', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::copy_', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::clamp_min', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::clamp_min_', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::clamp_max', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::clamp_max_', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::sigmoid', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::rsqrt', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::silu', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::neg', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::pow', 'aten_unary_elementwise', 'UnaryElementwise'),
    ('aten::replication_pad1d', 'aten_replication_pad', 'UnaryElementwise'),
    ('aten::replication_pad2d', 'aten_replication_pad', 'UnaryElementwise'),
    ('aten::replication_pad3d', 'aten_replication_pad', 'UnaryElementwise'),
    ('aten::upsample_nearest1d', 'aten_upsample_nearest', 'UnaryElementwise'),
    ('aten::upsample_nearest2d', 'aten_upsample_nearest', 'UnaryElementwise'),
    ('aten::upsample_nearest3d', 'aten_upsample_nearest', 'UnaryElementwise'),
    ('aiter::silu_and_mul', 'aiter_silu_and_mul', 'UnaryElementwise'),
    ('_C::silu_and_mul', 'aiter_silu_and_mul', 'UnaryElementwise'),
    ('sgl_kernel::silu_and_mul', 'aiter_silu_and_mul', 'UnaryElementwise'),
    ('aiter::gelu_and_mul', 'aiter_gelu_and_mul', 'UnaryElementwise'),
    ('aiter::gelu_tanh_and_mul', 'aiter_gelu_tanh_and_mul', 'UnaryElementwise'),
    ('primus_turbo_cpp_extension::quantize_fp8_tensorwise', 'primus_turbo_quantize_fp8', 'UnaryElementwise'),
    ('primus_turbo::quantize_fp8_tensorwise', 'primus_turbo_quantize_fp8', 'UnaryElementwise'),
    ('primus_turbo_cpp_extension::quantize_mxfp4_dual', 'primus_turbo_quantize_mxfp4_dual', 'UnaryElementwise'),
    ('primus_turbo::quantize_mxfp4_dual', 'primus_turbo_quantize_mxfp4_dual', 'UnaryElementwise'),
    ('primus::quantize_mxfp4_dual', 'primus_turbo_quantize_mxfp4_dual', 'UnaryElementwise'),
    ('aten::div', 'aten_binary_elementwise', 'BinaryElementwise'),
    ('aten::div_', 'aten_binary_elementwise', 'BinaryElementwise'),
    ('aten::mul', 'aten_binary_elementwise', 'BinaryElementwise'),
    ('aten::mul_', 'aten_binary_elementwise', 'BinaryElementwise'),
    ('aten::add', 'aten_binary_elementwise', 'BinaryElementwise'),
    ('aten::add_', 'aten_binary_elementwise', 'BinaryElementwise'),
    ('aten::sigmoid_backward', 'aten_binary_elementwise', 'BinaryElementwise'),
    ('aten::threshold_backward', 'aten_binary_elementwise', 'BinaryElementwise'),
    ('LigerSiLUMulFunction', 'liger_silu_mul_function', 'BinaryElementwise'),
    ('aiter::dynamic_per_tensor_quant', 'per_group_quant', 'BinaryElementwise'),
    ('aiter::dynamic_per_token_scaled_quant', 'per_group_quant', 'BinaryElementwise'),
    ('aiter::dynamic_per_group_scaled_quant', 'per_group_quant', 'BinaryElementwise'),
    ('vllm::triton_per_token_group_quant_fp8', 'vllm_triton_per_token_group_quant_fp8', 'BinaryElementwise'),
    ('aten::sum', 'aten_reduce', 'Reduce_fwd'),
    ('aten::mean', 'aten_reduce', 'Reduce_fwd'),
    ('aten::max', 'aten_reduce', 'Reduce_fwd'),
    ('aten::min', 'aten_reduce', 'Reduce_fwd'),
    ('aten::norm', 'aten_reduce', 'Reduce_fwd'),
    ('aten::linalg_norm', 'aten_reduce', 'Reduce_fwd'),
    ('aten::std', 'aten_reduce', 'Reduce_fwd'),
    ('aten::var', 'aten_reduce', 'Reduce_fwd'),
    ('aten::logsumexp', 'aten_reduce', 'Reduce_fwd'),
    ('aten::cumsum', 'aten_reduce', 'Reduce_fwd'),
    ('aten::cumprod', 'aten_reduce', 'Reduce_fwd'),
    ('aten::amin', 'aten_reduce', 'Reduce_fwd'),
    ('aten::amax', 'aten_reduce', 'Reduce_fwd'),
    ('aten::convolution', 'aten_conv', 'CONV_fwd'),
    ('aten::convolution_backward', 'aten_conv_bwd', 'CONV_fwd'),
    ('aten::batch_norm', 'batch_norm', 'Normalization'),
    ('aten::native_batch_norm', 'batch_norm', 'Normalization'),
    ('aten::miopen_batch_norm', 'batch_norm', 'Normalization'),
    ('aten::cudnn_batch_norm', 'batch_norm', 'Normalization'),
    ('aten::layer_norm', 'layer_norm', 'Normalization'),
    ('aten::native_layer_norm', 'layer_norm', 'Normalization'),
    ('aten::miopen_layer_norm', 'layer_norm', 'Normalization'),
    ('aten::cudnn_layer_norm', 'layer_norm', 'Normalization'),
    ('aten::group_norm', 'group_norm', 'Normalization'),
    ('aten::native_group_norm', 'group_norm', 'Normalization'),
    ('aten::miopen_group_norm', 'group_norm', 'Normalization'),
    ('aten::cudnn_group_norm', 'group_norm', 'Normalization'),
    ('aiter::_groupnorm_run', 'group_norm', 'Normalization'),
    ('aten::instance_norm', 'instance_norm', 'Normalization'),
    ('aten::native_instance_norm', 'instance_norm', 'Normalization'),
    ('aten::miopen_instance_norm', 'instance_norm', 'Normalization'),
    ('aten::cudnn_instance_norm', 'instance_norm', 'Normalization'),
    ('aten::_fused_rms_norm', 'rms_norm', 'Normalization'),
    ('aten::batch_norm_backward', 'batch_norm_bwd', 'Normalization'),
    ('aten::native_batch_norm_backward', 'batch_norm_bwd', 'Normalization'),
    ('aten::miopen_batch_norm_backward', 'batch_norm_bwd', 'Normalization'),
    ('aten::cudnn_batch_norm_backward', 'batch_norm_bwd', 'Normalization'),
    ('aten::layer_norm_backward', 'layer_norm_bwd', 'Normalization'),
    ('aten::native_layer_norm_backward', 'layer_norm_bwd', 'Normalization'),
    ('aten::miopen_layer_norm_backward', 'layer_norm_bwd', 'Normalization'),
    ('aten::cudnn_layer_norm_backward', 'layer_norm_bwd', 'Normalization'),
    ('aten::group_norm_backward', 'group_norm_bwd', 'Normalization'),
    ('aten::native_group_norm_backward', 'group_norm_bwd', 'Normalization'),
    ('aten::miopen_group_norm_backward', 'group_norm_bwd', 'Normalization'),
    ('aten::cudnn_group_norm_backward', 'group_norm_bwd', 'Normalization'),
    ('aten::instance_norm_backward', 'instance_norm_bwd', 'Normalization'),
    ('aten::native_instance_norm_backward', 'instance_norm_bwd', 'Normalization'),
    ('aten::miopen_instance_norm_backward', 'instance_norm_bwd', 'Normalization'),
    ('aten::cudnn_instance_norm_backward', 'instance_norm_bwd', 'Normalization'),
    ('aten::rms_norm_backward', 'rms_norm_bwd', 'Normalization'),
    ('aten::native_rms_norm_backward', 'rms_norm_bwd', 'Normalization'),
    ('aten::miopen_rms_norm_backward', 'rms_norm_bwd', 'Normalization'),
    ('aten::cudnn_rms_norm_backward', 'rms_norm_bwd', 'Normalization'),
    ('aten::_fused_rms_norm_backward', 'rms_norm_bwd', 'Normalization'),
    ('primus::fused_ln_modulate', 'fused_ln_modulate', 'Normalization'),
    ('MoEDispatch', 'moe_dispatch', 'MoE_comm_fwd'),
    ('MoECombine', 'moe_combine', 'MoE_comm_fwd'),
    ('CrossEntropyFunction', 'cross_entropy_fwd', 'CrossEntropy_fwd'),
    -- ATOM's sampler (aiter::mixed_sample_outer_exponential): category elementwise, sheet elementwise_fwd
    ('aiter::mixed_sample_outer_exponential', 'mixed_sample_outer_exponential', 'elementwise_fwd'),
    ('primus_turbo::grouped_gemm', 'primus_turbo_grouped_gemm', 'GroupedGEMM_fwd'),
    ('primus_turbo::grouped_gemm_impl', 'primus_turbo_grouped_gemm', 'GroupedGEMM_fwd'),
    ('primus_turbo_cpp_extension::grouped_gemm', 'primus_turbo_grouped_gemm', 'GroupedGEMM_fwd'),
    ('primus_turbo_cpp_extension::ck_grouped_gemm', 'primus_turbo_grouped_gemm', 'GroupedGEMM_fwd'),
    ('primus_turbo::grouped_gemm_variable_k', 'primus_turbo_grouped_gemm_variable_k', 'GroupedGEMM_fwd'),
    ('primus_turbo::grouped_gemm_variable_k_impl', 'primus_turbo_grouped_gemm_variable_k', 'GroupedGEMM_fwd'),
    ('primus_turbo_cpp_extension::grouped_gemm_variable_k', 'primus_turbo_grouped_gemm_variable_k', 'GroupedGEMM_fwd'),
    ('primus_turbo_cpp_extension::ck_grouped_gemm_variable_k', 'primus_turbo_grouped_gemm_variable_k', 'GroupedGEMM_fwd'),
    ('FusedRoPEFunc', 'fused_rope_fwd', 'RoPE_fwd'),
    ('aiter::rope_cached_positions_2c_fwd_impl', 'aiter_rope_cached_positions_2c_fwd_impl', 'RoPE_fwd'),
    ('sgl_kernel::rotary_embedding', 'sgl_kernel_rotary_embedding', 'RoPE_fwd'),
    ('sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant', 'fused_flatten_mxfp4_quant', 'GroupQuant_fwd'),
    ('aiter::fused_dynamic_mx_quant_moe_sort_hip', 'fused_dynamic_mx_quant_moe_sort_hip', 'GroupQuant_fwd'),
    ('sglang_profiler::quant_dynamic_mxfp4_quant', 'sglang_quant_dynamic_mxfp4_quant', 'GroupQuant_fwd'),
    ('aiter::fused_dynamic_mxfp4_quant_moe_sort_hip', 'aiter_fused_dynamic_mxfp4_quant_moe_sort_hip', 'GroupQuant_fwd'),
    ('aiter::dynamic_per_group_scaled_quant_fp4', 'aiter_dynamic_per_group_scaled_quant_fp4', 'GroupQuant_fwd'),
    ('aiter::rms_norm', 'aiter_rms_norm', 'RMSNorm_fwd'),
    ('aiter::rmsnorm2d_fwd_ck', 'aiter_rms_norm', 'RMSNorm_fwd'),
    ('aiter::rmsnorm', 'aiter_rmsnorm', 'RMSNorm_fwd'),
    ('aiter::rmsnorm2d_fwd_with_add_ck', 'aiter_rmsnorm2d_fwd_with_add_ck', 'RMSNorm_fwd'),
    ('aiter::add_rmsnorm', 'aiter_rmsnorm2d_fwd_with_add_ck', 'RMSNorm_fwd'),
    ('aiter::rmsnorm2d_fwd_with_dynamicquant_ck', 'aiter_rmsnorm2d_fwd_with_dynamicquant_ck', 'RMSNorm_fwd'),
    ('aiter::rmsnorm_quant', 'aiter_rmsnorm_quant', 'RMSNorm_fwd'),
    ('vllm::rocm_aiter_rmsnorm_fp8_group_quant', 'vllm_rocm_aiter_rmsnorm_fp8_group_quant', 'RMSNorm_fwd'),
    ('vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant', 'vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant', 'RMSNorm_fwd'),
    ('vllm::rocm_aiter_triton_add_rmsnorm_pad', 'vllm_rocm_aiter_triton_add_rmsnorm_pad', 'RMSNorm_fwd'),
    ('aiter::fused_add_rmsnorm_pad_', 'vllm_rocm_aiter_triton_add_rmsnorm_pad', 'RMSNorm_fwd'),
    ('sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant', 'fused_rms_mxfp4_quant', 'RMSNorm_fwd'),
    ('aiter::_fuse_rmsnorm_fp4_quant', 'fused_rms_mxfp4_quant', 'RMSNorm_fwd'),
    -- MoE ops of the extension (peers/tracelens/perf_moe)
    ('aiter::ck_moe_stage1', 'moe_aiter_ck_stage1', 'MoE_unfused_fwd'),
    ('aiter::ck_moe_stage2', 'moe_aiter_ck_stage2', 'MoE_unfused_fwd'),
    ('aiter::moe_cktile2stages_gemm1_ck', 'moe_aiter_unfused_up', 'MoE_unfused_fwd'),
    ('aiter::moe_cktile2stages_gemm2_ck', 'moe_aiter_unfused_down', 'MoE_unfused_fwd'),
    ('sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel', 'moe_triton_invoke_grouped_gemm', 'MoE_unfused_fwd'),
    ('aiter::moe_sorting_fwd', 'MoeSortScatterGather', 'MoE_aux_fwd'),
    ('aiter::mxfp4_moe_sort_hip', 'MoeSortScatterGather', 'MoE_aux_fwd'),
    ('aiter::biased_grouped_topk_hip', 'BiasedGroupedTopk', 'MoE_aux_fwd'),
    ('aiter::topk_softplus', 'topk_softplus', 'MoE_aux_fwd'),
    ('sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts', 'sglang_fused_append_shared_experts', 'MoE_aux_fwd'),
    -- TransformerEngine v2's pseudo GEMM ops (peers/tracelens/perf_gemm)
    ('_Linear_yfwd_mm', 'tev2_pseudo_gemm', 'GEMM'),
    ('_LinearBackward_xgrad_mm', 'tev2_pseudo_gemm', 'GEMM'),
    ('_LinearBackward_wgrad_mm', 'tev2_pseudo_gemm', 'GEMM'),
    ('_LayerNormLinear_yfwd_mm', 'tev2_pseudo_gemm', 'GEMM'),
    ('_LayerNormLinearBackward_xgrad_mm', 'tev2_pseudo_gemm', 'GEMM'),
    ('_LayerNormLinearBackward_wgrad_mm', 'tev2_pseudo_gemm', 'GEMM'),
    -- apex's fused convolutions (peers/tracelens/perf_conv; the backward ops' rows move to CONV_bwd)
    ('ConvBias_', 'ConvBias_', 'CONV_fwd'),
    ('ConvBiasReLU_', 'ConvBiasReLU_', 'CONV_fwd'),
    ('ConvBias_Backward', 'ConvBias_Backward', 'CONV_fwd'),
    ('ConvBiasReLU_Backward', 'ConvBiasReLU_Backward', 'CONV_fwd'),
    -- aiter's fused MoE ops called directly (peers/tracelens/perf_moe)
    ('aiter::fmoe_fp8_blockscale_g1u1', 'moe_aiter_fused_blockscale', 'MoE_fused_fwd'),
    ('aiter::fmoe_g1u1', 'moe_aiter_fused_blockscale', 'MoE_fused_fwd')
) t(name, model, sheet);

-- _tl_pylist1..3(j): a JSON value of the trace's args as Python prints the same value (lists stay lists):
-- [[512], [141, 512], []] -> '[[512], [141, 512], []]', ["", "1"] -> "['', '1']" (the text of TraceLens's
-- `Input Dims_first` ... columns, which keep the args as parsed).
CREATE OR REPLACE MACRO _tl_pylist1(j) AS
    CASE WHEN json_type(j) = 'ARRAY'
         THEN '[' || array_to_string(list_transform(json_extract(j, '$[*]'), lambda x: _py_atom(x)), ', ') || ']'
         ELSE _py_atom(j) END;

CREATE OR REPLACE MACRO _tl_pylist2(j) AS
    CASE WHEN json_type(j) = 'ARRAY'
         THEN '[' || array_to_string(list_transform(json_extract(j, '$[*]'), lambda x: _tl_pylist1(x)), ', ') || ']'
         ELSE _py_atom(j) END;

CREATE OR REPLACE MACRO _tl_pylist3(j) AS
    CASE WHEN json_type(j) = 'ARRAY'
         THEN '[' || array_to_string(list_transform(json_extract(j, '$[*]'), lambda x: _tl_pylist2(x)), ', ') || ']'
         ELSE _py_atom(j) END;

-- _tl_py_bool(b): Python's text of a bool or None.
CREATE OR REPLACE MACRO _tl_py_bool(b) AS CASE WHEN b IS NULL THEN 'None' WHEN b THEN 'True' ELSE 'False' END;

-- _tl_bpe(dtype): TraceLens's bytes per element of a recorded dtype name, case-insensitive; NULL when unknown
-- (name2bpe in TraceLens/PerfModel/utils.py).
CREATE OR REPLACE MACRO _tl_bpe(dtype) AS
    CASE WHEN lower(dtype) IN ('double', 'long int') THEN 8
         WHEN lower(dtype) IN ('float', 'scalar', 'int') THEN 4
         WHEN lower(dtype) IN ('c10::half', 'c10::bfloat16') THEN 2
         WHEN lower(dtype) IN ('c10::float8_e4m3fnuz', 'c10::float8_e4m3fn', 'c10::float8_e5m2', 'c10::float8_e8m0fnu',
                               'unsigned char', 'signed char', 'fp8', 'c10::float4_e2m1fn_x2', 'fp4') THEN 1 END;

-- _tl_precision(dtype): TraceLens's compute precision of a dtype name (torch_dtype_map in
-- TraceLens/PerfModel/utils.py); NULL when unknown.
CREATE OR REPLACE MACRO _tl_precision(dtype) AS
    CASE lower(dtype) WHEN 'float' THEN 'fp32' WHEN 'double' THEN 'fp64' WHEN 'c10::half' THEN 'fp16'
                      WHEN 'c10::bfloat16' THEN 'bf16' WHEN 'c10::float8_e4m3fnuz' THEN 'fp8'
                      WHEN 'unsigned char' THEN 'fp8' WHEN 'fp8' THEN 'fp8' WHEN 'fp4' THEN 'fp4'
                      WHEN 'mxfp4' THEN 'fp4' WHEN 'c10::float4_e2m1fn_x2' THEN 'fp4'
                      WHEN 'c10::float8_e4m3fn' THEN 'fp8' END;

-- _tl_py_strs(xs): a list of texts as Python prints the tuple of them ("('a', 'b')").
CREATE OR REPLACE MACRO _tl_py_strs(xs) AS _py_seq(list_transform(xs, lambda x: _py_str(x)), len(xs));

-- _tl_int_text(s): the integer Python's int() reads from a Concrete Input (surrounding blanks allowed), NULL when
-- it reads none.
CREATE OR REPLACE MACRO _tl_int_text(s) AS
    CASE WHEN regexp_matches(s, '^\s*[+-]?[0-9]+\s*$') THEN trim(s)::BIGINT END;

-- _tl_shape(j): a JSON shape as a list of BIGINT (NULL when j is not a list).
CREATE OR REPLACE MACRO _tl_shape(j) AS
    CASE WHEN json_type(j) = 'ARRAY' THEN json_transform(j, '["BIGINT"]') END;

-- _tl_numel(shape): the number of elements of a shape (1 for ()), as math.prod computes it.
CREATE OR REPLACE MACRO _tl_numel(shape) AS coalesce(list_aggregate(shape::HUGEINT[], 'product')::HUGEINT, 1);

-- _tl_py_opt_str(j): a JSON string of the args as Python prints it inside a tuple; 'None' for SQL NULL.
CREATE OR REPLACE MACRO _tl_py_opt_str(j) AS CASE WHEN j IS NULL THEN 'None' ELSE _py_atom(j) END;

-- _tl_py_list_ints(s): the integers of a Python list literal ('[16, 32, 32]'), NULL when s is not one.
CREATE OR REPLACE MACRO _tl_py_list_ints(s) AS
    CASE WHEN json_valid(s) AND json_type(s::JSON) = 'ARRAY' THEN TRY_CAST(json_transform(s::JSON, '["DOUBLE"]') AS BIGINT[]) END;

-- _tl_py_list_bools(s): the truth values of a Python list literal of bools ('[True, False]'), NULL when s is not one.
CREATE OR REPLACE MACRO _tl_py_list_bools(s) AS
    CASE WHEN json_valid(replace(replace(s, 'True', 'true'), 'False', 'false'))
              AND json_type(replace(replace(s, 'True', 'true'), 'False', 'false')::JSON) = 'ARRAY'
         THEN json_transform(replace(replace(s, 'True', 'true'), 'False', 'false')::JSON, '["BOOLEAN"]') END;

-- _tl_perf_events_of(reg): one row per cpu_op instance of the trace whose name is in reg (a registry view with the
-- columns name, model, sheet), with what every sheet shows of it: the columns of _tl_perf_events.
CREATE OR REPLACE MACRO _tl_perf_events_of(reg) AS TABLE
WITH ev AS MATERIALIZED (
    SELECT e.trace_id, e.event_id, e.name, r.model, r.sheet, e.pid, e.tid, e.input_dims, e.input_types,
           e.input_strides, e.concrete_inputs
    FROM events e JOIN query_table(reg) r ON r.name = e.name
    WHERE e.cat = 'cpu_op'
), k AS MATERIALIZED (
    SELECT p.trace_id, p.op_event_id AS event_id, g.event_id AS gpu_event_id, g.name AS kernel, g.stream,
           _us_f64(g.ts_ns) AS s, _us_f64(g.ts_ns) + _us_f64(g.dur_ns) AS e, _us_f64(g.dur_ns) AS dur_us
    FROM _tree_op_gpu_pairs p
    SEMI JOIN ev ON ev.trace_id = p.trace_id AND ev.event_id = p.op_event_id
    JOIN tl_gpu_event_ops g ON g.trace_id = p.trace_id AND g.event_id = p.gpu_event_id
    WHERE g.tl_linked
), busy AS (
    SELECT trace_id, event_id, sum(_tree_busy_ns(s, e, prev_e)) AS kernel_time_us,
           list({'name': kernel, 'stream': stream, 'dur_us': dur_us} ORDER BY s, gpu_event_id) AS kernels
    FROM (SELECT *, max(e) OVER (PARTITION BY trace_id, event_id ORDER BY s, e
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
          FROM k)
    GROUP BY trace_id, event_id
)
SELECT ev.*, coalesce(b.kernel_time_us, 0.0) AS kernel_time_us, coalesce(b.kernels, []) AS kernels,
       coalesce(pn.v, 'Unknown') AS process_name, coalesce(pl.v, 'Unknown') AS process_label,
       coalesce(tn.v, 'Unknown') AS thread_name
FROM ev
LEFT JOIN busy b ON b.trace_id = ev.trace_id AND b.event_id = ev.event_id
LEFT JOIN _tl_process_meta pn ON pn.trace_id = ev.trace_id AND pn.kind = 'process_name' AND pn.pid = ev.pid
LEFT JOIN _tl_process_meta pl ON pl.trace_id = ev.trace_id AND pl.kind = 'process_labels' AND pl.pid = ev.pid
LEFT JOIN _tl_process_meta tn ON tn.trace_id = ev.trace_id AND tn.kind = 'thread_name' AND tn.pid = ev.pid
                              AND tn.tid = ev.tid;

-- _tl_perf_events: one row per cpu_op instance whose name TraceLens models (tl_perf_model_ops), with what
-- every sheet shows of it (_tl_perf_events_of).
--   trace_id, event_id, name, model, sheet, pid, tid
--   input_dims, input_types, input_strides, concrete_inputs   the args (JSON)
--   kernel_time_us   busy time of the tl_linked GPU events launched inside it (float µs as TraceLens adds
--                    them; 0 without any)
--   kernels          those GPU events by start: name, stream, dur_us
--   process_name, process_label, thread_name   TraceLens's names of its process and thread ('Unknown')
-- @materialize report-tracelens
CREATE OR REPLACE VIEW _tl_perf_events AS SELECT * FROM _tl_perf_events_of('tl_perf_model_ops');

-- _tl_perf_moved_bwd_ops: the op names whose rows TraceLens takes out of CONV_fwd's and SDPA_fwd's summaries
-- into CONV_bwd and SDPA_bwd (the list in generate_perf_report_pytorch).
--   name   the op name
CREATE OR REPLACE VIEW _tl_perf_moved_bwd_ops AS
SELECT * FROM (VALUES ('flash_attn::_flash_attn_varlen_backward'), ('aten::convolution_backward'),
                      ('ConvBias_Backward'), ('ConvBiasReLU_Backward')) t(name);

-- _tl_perf_param(params, key): the text of one parameter of a modelled instance (NULL when it has none).
CREATE OR REPLACE MACRO _tl_perf_param(params, key) AS
    list_filter(params, lambda p: p.k = key)[1].v;

-- _tl_perf_metrics(flops, bytes, kernel_time_us): TraceLens's metrics of one modelled instance, in its order
-- of float operations (compute_perf_metrics in TraceLens/TreePerf/tree_perf.py), as a struct: gflops,
-- data_moved_mb (bytes / 2^20), flops_per_byte, tbs (TB/s), tflops (TFLOPS/s); NULL where TraceLens has NaN
-- (no byte count, no kernel time, no bytes).
CREATE OR REPLACE MACRO _tl_perf_metrics(flops, bytes, kernel_time_us) AS
    {'gflops': flops::DOUBLE / 1e9,
     'data_moved_mb': bytes::DOUBLE / 1048576.0,
     'flops_per_byte': CASE WHEN bytes > 0 THEN (flops::DOUBLE / 1e9 * 1e9) / bytes::DOUBLE END,
     'tbs': CASE WHEN kernel_time_us > 0 THEN (bytes::DOUBLE / 1e12) / (kernel_time_us / 1e6) END,
     'tflops': CASE WHEN kernel_time_us > 0 THEN (flops::DOUBLE / 1e9 / 1e3) / (kernel_time_us / 1e6) END};

-- _tl_kernel_stats(tbl): TraceLens's summary of the GPU kernels of a group of op instances
-- (TreePerfAnalyzer._summarize_kernel_stats in TraceLens/TreePerf/tree_perf.py, add_truncated_kernel_details in
-- TraceLens/Reporting/generate_perf_report_pytorch.py). tbl (a table or CTE name) has one row per instance: gk
-- (its group), ord (its order in the group), kernels (its GPU events in TraceLens's order: name, stream, dur_us).
-- The first instance with kernels is the template; its i-th kernel gives entry i (name, stream) and collects
-- the i-th duration of every instance with as many kernels (the others are skipped); numpy's count, sum,
-- mean, median, std (population), min and max per entry; entries sorted by (total duration, name), stably.
-- One row per group with kernels: gk, kernel_details (the Python list text), trunc_kernel_details (names cut to
-- 64 characters + '...', means rounded to 2 decimals as numpy rounds), kernel_order (the template's kernel
-- positions in the list's order). gk is a struct whose field t is the
-- trace: in a trace that writes its times as integers (_tl_int_times) the durations are Python ints, so numpy's
-- sum, min and max print as np.int64(...).
CREATE OR REPLACE MACRO _tl_kernel_stats(tbl) AS TABLE
WITH inst AS MATERIALIZED (
    SELECT gk, ord, kernels FROM query_table(tbl)
), tmpl AS (   -- the kernel template of each group: its first instance with kernels
    SELECT gk, arg_min(kernels, ord) AS tk FROM inst WHERE len(kernels) > 0 GROUP BY gk
), kx AS MATERIALIZED (   -- kernel entries as _np_sums input: id, i (instance order), x (duration, µs)
    SELECT {'g': gk, 'p': pos} AS id, row_number() OVER (PARTITION BY gk, pos ORDER BY ord) AS i,
           kernels[pos].dur_us AS x
    FROM (SELECT i.*, unnest(generate_series(1, len(i.kernels))) AS pos
          FROM inst i JOIN tmpl t ON t.gk = i.gk WHERE len(i.kernels) = len(t.tk))
), kmean AS MATERIALIZED (
    SELECT id, s AS total, s / n AS mean, n
    FROM _np_sums('kx') JOIN (SELECT id, count(*) AS n FROM kx GROUP BY id) USING (id)
), kdev AS (   -- squared deviations from the entry's mean, for numpy's std
    SELECT kx.id, kx.i, (kx.x - m.mean) * (kx.x - m.mean) AS x FROM kx JOIN kmean m USING (id)
), kent AS (
    SELECT kx.id, any_value(m.n) AS n, any_value(m.total) AS total, any_value(m.mean) AS mean,
           _py_median(list(kx.x)) AS median, sqrt(any_value(d.s) / any_value(m.n)) AS std,
           min(kx.x) AS mn, max(kx.x) AS mx
    FROM kx JOIN kmean m USING (id) JOIN _np_sums('kdev') d USING (id)
    GROUP BY kx.id
)
SELECT k.id.g AS gk,
       '[' || string_agg('{''name'': ' || _py_str(t.tk[k.id.p].name)
                         || ', ''stream'': ' || coalesce(t.tk[k.id.p].stream::VARCHAR, 'None')
                         || ', ''count'': ' || k.n || ', ''total_duration_us'': ' || _tl_np_num(k.total, it.int_us)
                         || ', ''mean_duration_us'': ' || _np_f64(k.mean)
                         || ', ''median_duration_us'': ' || _np_f64(k.median)
                         || ', ''std_dev_duration_us'': ' || _np_f64(k.std)
                         || ', ''min_duration_us'': ' || _tl_np_num(k.mn, it.int_us)
                         || ', ''max_duration_us'': ' || _tl_np_num(k.mx, it.int_us)
                         || '}', ', ' ORDER BY k.total, t.tk[k.id.p].name, k.id.p) || ']' AS kernel_details,
       '[' || string_agg('{''name'': '
                         || _py_str(CASE WHEN length(t.tk[k.id.p].name) > 64 THEN left(t.tk[k.id.p].name, 64) || '...'
                                         ELSE t.tk[k.id.p].name END)
                         || ', ''stream'': ' || coalesce(t.tk[k.id.p].stream::VARCHAR, 'None')
                         || ', ''mean_duration_us'': ' || _np_f64(round_even(k.mean * 100.0, 0) / 100.0) || '}',
                         ', ' ORDER BY k.total, t.tk[k.id.p].name, k.id.p) || ']' AS trunc_kernel_details,
       list(k.id.p ORDER BY k.total, t.tk[k.id.p].name, k.id.p) AS kernel_order
FROM kent k JOIN tmpl t ON t.gk = k.id.g
LEFT JOIN _tl_int_times it ON it.trace_id = k.id.g.t
GROUP BY k.id.g;

-- _tl_perf_summary_of(tbl, ev, by_kernels): _tl_perf_summary over the instances of ev (a view with the columns
-- of _tl_perf_events; event_id is the instance's id and order), grouped by num_kernels (the number of GPU events
-- of the instance) too when by_kernels (TraceLens's group_by_num_kernels, its inference report): the column
-- num_kernels then follows the param columns in sheet_columns.
CREATE OR REPLACE MACRO _tl_perf_summary_of(tbl, ev, by_kernels) AS TABLE
WITH inst0 AS (
    SELECT t.trace_id, t.event_id,
           list_transform(t.params, lambda p: {'k': p.k::VARCHAR, 'v': p.v::VARCHAR, 't': p.t::VARCHAR}) AS params, e.name, e.sheet, e.kernel_time_us AS kt, e.kernels,
           e.process_name, e.process_label, e.thread_name, t.compute_spec,
           _tl_pylist3(e.input_dims) AS input_dims, _tl_pylist3(e.input_types) AS input_type,
           _tl_pylist3(e.input_strides) AS input_strides, _tl_pylist3(e.concrete_inputs) AS concrete_inputs,
           _tl_perf_metrics(t.flops, t.bytes, e.kernel_time_us) AS m,
           _tl_roofline(t.flops::DOUBLE / 1e9, t.bytes, e.kernel_time_us, a.max_tflops, a.mem_bw_gbps) AS rf,
           CASE WHEN by_kernels THEN len(e.kernels) END AS nk,
           dense_rank() OVER (PARTITION BY t.trace_id, e.sheet
                              ORDER BY e.name, t.params, CASE WHEN by_kernels THEN len(e.kernels) END) AS gid
    FROM query_table(tbl) t JOIN query_table(ev) e ON e.trace_id = t.trace_id AND e.event_id = t.event_id
    LEFT JOIN _tl_arch a ON a.compute_spec = t.compute_spec
), inst AS MATERIALIZED (
    SELECT * EXCLUDE (m, rf), m.gflops, m.data_moved_mb, m.flops_per_byte, m.tbs, m.tflops, rf.rt, rf.bound,
           rf.pct FROM inst0
), kin AS (
    SELECT {'t': trace_id, 's': sheet, 'g': gid} AS gk, event_id AS ord, kernels FROM inst
), kdet AS (
    SELECT gk.t AS trace_id, gk.s AS sheet, gk.g AS gid, kernel_details, trunc_kernel_details
    FROM _tl_kernel_stats('kin')
), g AS MATERIALIZED (
    SELECT trace_id, sheet, gid, any_value(name) AS name, any_value(params) AS params, any_value(nk) AS nk,
           count(*) AS n,
           arg_min(gflops, event_id) FILTER (WHERE gflops IS NOT NULL) AS gflops,
           arg_min(data_moved_mb, event_id) FILTER (WHERE data_moved_mb IS NOT NULL) AS data_moved_mb,
           arg_min(flops_per_byte, event_id) FILTER (WHERE flops_per_byte IS NOT NULL) AS flops_per_byte,
           list(tbs ORDER BY event_id) FILTER (WHERE tbs IS NOT NULL) AS tbs,
           list(tflops ORDER BY event_id) FILTER (WHERE tflops IS NOT NULL) AS tflops,
           list(kt ORDER BY event_id) AS kt,
           arg_min(process_name, event_id) AS process_name, arg_min(process_label, event_id) AS process_label,
           arg_min(thread_name, event_id) AS thread_name,
           arg_min(compute_spec, event_id) FILTER (WHERE compute_spec IS NOT NULL) AS compute_spec,
           arg_min(rt, event_id) FILTER (WHERE rt IS NOT NULL) AS rt,
           arg_min(bound, event_id) FILTER (WHERE bound IS NOT NULL) AS bound,
           list(pct ORDER BY event_id) FILTER (WHERE pct IS NOT NULL) AS pct,
           arg_min(input_dims, event_id) FILTER (WHERE input_dims IS NOT NULL) AS input_dims,
           arg_min(input_type, event_id) FILTER (WHERE input_type IS NOT NULL) AS input_type,
           arg_min(input_strides, event_id) FILTER (WHERE input_strides IS NOT NULL) AS input_strides,
           arg_min(concrete_inputs, event_id) FILTER (WHERE concrete_inputs IS NOT NULL) AS concrete_inputs,
           min(event_id) AS uid
    FROM inst GROUP BY trace_id, sheet, gid
), floaty AS (   -- params that are a float column in TraceLens's table: floats in some rows, or integers
                 -- missing from some rows or None there (NaN); their integers print as floats
    SELECT trace_id, sheet, list(k) AS keys
    FROM (SELECT trace_id, sheet, p.k AS k, bool_or(p.t = 'f') AS any_f, bool_or(p.t = 'i') AS any_i, count(p.v) AS n_has
          FROM (SELECT trace_id, sheet, unnest(params) AS p FROM inst) GROUP BY ALL)
    JOIN (SELECT trace_id, sheet, count(*) AS n FROM inst GROUP BY ALL) USING (trace_id, sheet)
    WHERE any_f OR (any_i AND n_has < n)
    GROUP BY ALL
), pcols AS (   -- the param columns of each sheet, in the order they first appear over the instances
    SELECT trace_id, sheet, list('param: ' || k ORDER BY first_at) AS cols
    FROM (SELECT trace_id, sheet, p.k AS k, min((event_id, pos)) AS first_at
          FROM (SELECT trace_id, sheet, event_id, unnest(params) AS p,
                       unnest(generate_series(1, len(params))) AS pos FROM inst)
          GROUP BY ALL)
    GROUP BY ALL
)
SELECT g.trace_id, g.sheet,
       row_number() OVER (PARTITION BY g.trace_id, g.sheet ORDER BY _pd_sum(g.kt) DESC, g.uid) AS rank,
       g.name,
       list_transform(g.params, lambda p: {'k': p.k, 'v': CASE WHEN p.t = 'i' AND list_contains(coalesce(f.keys, []), p.k)
                                                                THEN p.v || '.0' ELSE p.v END}) AS params,
       g.gflops AS "GFLOPS_first", g.data_moved_mb AS "Data Moved (MB)_first", g.flops_per_byte AS "FLOPS/Byte_first",
       _pd_sum(g.tbs) / len(g.tbs) AS "TB/s_mean", _py_median(g.tbs) AS "TB/s_median", _pd_std(g.tbs) AS "TB/s_std",
       list_min(g.tbs) AS "TB/s_min", list_max(g.tbs) AS "TB/s_max",
       _pd_sum(g.tflops) / len(g.tflops) AS "TFLOPS/s_mean", _py_median(g.tflops) AS "TFLOPS/s_median",
       _pd_std(g.tflops) AS "TFLOPS/s_std", list_min(g.tflops) AS "TFLOPS/s_min", list_max(g.tflops) AS "TFLOPS/s_max",
       g.process_name AS process_name_first, g.process_label AS process_label_first,
       g.thread_name AS thread_name_first, coalesce(g.compute_spec, '') AS "Compute Spec",
       g.rt AS "Roofline Time (µs)_first", g.bound AS "Roofline Bound_first",
       _pd_sum(g.pct) / len(g.pct) AS "Pct Roofline_mean", _py_median(g.pct) AS "Pct Roofline_median",
       _pd_std(g.pct) AS "Pct Roofline_std", list_min(g.pct) AS "Pct Roofline_min", list_max(g.pct) AS "Pct Roofline_max",
       coalesce(k.kernel_details, '[]') AS kernel_details__summarize_kernel_stats, k.trunc_kernel_details,
       g.input_dims AS "Input Dims_first", g.input_type AS "Input type_first",
       g.input_strides AS "Input Strides_first", g.concrete_inputs AS "Concrete Inputs_first",
       _pd_sum(g.kt) / len(g.kt) AS "Kernel Time (µs)_mean", _py_median(g.kt) AS "Kernel Time (µs)_median",
       _pd_std(g.kt) AS "Kernel Time (µs)_std", list_min(g.kt) AS "Kernel Time (µs)_min",
       list_max(g.kt) AS "Kernel Time (µs)_max", _pd_sum(g.kt) AS "Kernel Time (µs)_sum",
       g.n AS name_count, g.uid AS "UID_first", g.nk AS num_kernels,
       ['name'] || c.cols || CASE WHEN by_kernels THEN ['num_kernels'] ELSE [] END
       || ['GFLOPS_first', 'Data Moved (MB)_first', 'FLOPS/Byte_first', 'TB/s_mean', 'TB/s_median', 'TB/s_std',
        'TB/s_min', 'TB/s_max', 'TFLOPS/s_mean', 'TFLOPS/s_median', 'TFLOPS/s_std', 'TFLOPS/s_min', 'TFLOPS/s_max',
        'process_name_first', 'process_label_first', 'thread_name_first', 'Compute Spec']
       || CASE WHEN r.roofline THEN ['Roofline Time (µs)_first', 'Roofline Bound_first', 'Pct Roofline_mean',
                                     'Pct Roofline_median', 'Pct Roofline_std', 'Pct Roofline_min', 'Pct Roofline_max']
               ELSE [] END
       || ['kernel_details__summarize_kernel_stats', 'trunc_kernel_details', 'Input Dims_first', 'Input type_first',
        'Input Strides_first', 'Concrete Inputs_first', 'Kernel Time (µs)_mean', 'Kernel Time (µs)_median',
        'Kernel Time (µs)_std', 'Kernel Time (µs)_min', 'Kernel Time (µs)_max', 'Kernel Time (µs)_sum',
        'name_count', 'UID_first'] AS sheet_columns
FROM g
LEFT JOIN kdet k ON k.trace_id = g.trace_id AND k.sheet = g.sheet AND k.gid = g.gid
LEFT JOIN floaty f ON f.trace_id = g.trace_id AND f.sheet = g.sheet
JOIN pcols c ON c.trace_id = g.trace_id AND c.sheet = g.sheet
JOIN (SELECT trace_id, sheet, bool_or(rt IS NOT NULL) AS roofline FROM g GROUP BY ALL) r
    ON r.trace_id = g.trace_id AND r.sheet = g.sheet;

-- _tl_perf_summary(tbl): the rows of a sheet from a family's instances. tbl (a view name) has one row per
-- instance TraceLens keeps: trace_id, event_id (of _tl_perf_events), params (STRUCT(k, v)[]: the model's
-- parameters in its dict order, values as Python's str() prints them, t: 'i' for an integer, 'f' for a float),
-- flops, bytes (NULL when TraceLens has
-- no byte count), compute_spec. Columns: trace_id, sheet, rank (row order), name, params, the statistics
-- (TraceLens's names), sheet_columns (the trace's column list for the sheet, see the top of this file).
-- ev (a view name) gives each instance's name, sheet, kernels and names as _tl_perf_events does: that view by
-- default, a backward sheet's instances with their backward kernels otherwise (peers/tracelens/perf_bwd).
CREATE OR REPLACE MACRO _tl_perf_summary(tbl, ev := '_tl_perf_events') AS TABLE
SELECT * EXCLUDE (num_kernels) FROM _tl_perf_summary_of(tbl, ev, false);
