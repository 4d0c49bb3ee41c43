-- perf/step_ops — the ops whose work depends on the serving step they run in, not only on their arguments:
-- paged (inference) attention reads the KV cache of every request of the step, whose lengths a serving stack
-- records only in the user_annotation it wraps around the model step (perf/paged_attention reads it).
--
-- Argument positions are the ops' signatures (1-based, as Input Dims lists them):
--   vllm::unified_attention_with_output(query, key, value, output, layer_name, output_scale, output_block_scale)
--   vllm::unified_attention(query, key, value, layer_name) -> output (torch.empty_like(query))
--                      (vllm/attention/layer.py, direct_register_custom_op; query [T, H_Q, d_qk], key and
--                      value [T, H_KV, d] of the step's new tokens, output [T, H_Q, d_v])
--   _C_cache_ops::reshape_and_cache_flash, _C_cache_ops::reshape_and_cache(key, value, key_cache, value_cache,
--                      slot_mapping, kv_cache_dtype, k_scale, v_scale) (vllm/_custom_ops.py): the write of
--                      the new tokens' K and V into the paged cache; key_cache is the cache tensor, recorded
--                      with its storage type ('unsigned char' for an fp8 cache).
--   FlashInfer (commits dbb1e4e to 86d3e13, February to September 2025: each JIT module registers its
--   functions with TORCH_LIBRARY_FRAGMENT under the module's name, the uri of get_batch_decode_uri /
--   get_batch_prefill_uri in flashinfer/jit/attention/pytorch.py; csrc/batch_decode_jit_pybind.cu,
--   csrc/batch_prefill_jit_pybind.cu; later versions bind with tvm-ffi and record no op):
--     batch_decode_with_kv_cache_<dtypes, head dims, ...>::run(float_workspace, int_workspace, plan_info, q,
--                      paged_k_cache, paged_v_cache, kv_indptr, kv_indices, kv_last_page_len, o, maybe_lse,
--                      kv_layout_code, window_left, ...)
--     batch_prefill_with_kv_cache_<...>::paged_run(float_workspace, int_workspace, plan_info, q, paged_k_cache,
--                      paged_v_cache, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, o, maybe_lse,
--                      mask_mode_code, layout, window_left, ...)
--     batch_prefill_with_kv_cache_<...>::ragged_run(float_workspace, int_workspace, plan_info, q, k, v,
--                      qo_indptr, kv_indptr, o, maybe_lse, mask_mode_code, layout, window_left, ...)
--                      q [tokens, H_Q, d_qk]; the caches [pages, page_size, H_KV, d] for layout 0 (NHD) or
--                      [pages, H_KV, page_size, d] for 1 (HND) (include/flashinfer/layout.cuh QKVLayout), a
--                      ragged call's k and v [kv tokens, H_KV, d] (NHD) or [H_KV, kv tokens, d] (HND);
--                      mask_mode_code 0 none, 1 causal (include/flashinfer/attention/mask.cuh MaskMode).
--                      The decode wrapper with use_tensor_cores runs its decode through the prefill module's
--                      paged_run, non-causal (flashinfer/decode.py BatchDecodeWithPagedKVCacheWrapper.run).
--   aiter (torch ops 'aiter::<function name>', aiter/jit/core.py compile_ops and
--   aiter/jit/utils/torch_guard.py torch_compile_guard; aiter/ops/attention.py):
--     aiter::pa_fwd_asm, aiter::_pa_fwd_asm (the same kernel, renamed when bound with ctypes)(Q, K, V,
--                      block_tables, context_lens, block_tables_stride0, max_qlen, K_QScale, V_QScale, out_, ...)
--     aiter::paged_attention_rocm(out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache, ...)
--                      query [seqs, H_Q, d], key_cache [blocks, H_KV, d/x, block_size, x], value_cache
--                      [blocks, H_KV, d, block_size]; decode kernels.
--
-- @requires tree/context

-- _perf_step_ops: one row per paged-attention op name: which requests of its step it runs and where its
-- tensors are.
--   op_name          the cpu_op name
--   phase            'step': every request of the step in one call (vLLM's unified_attention ops); 'decode':
--                    a decode kernel, only the step's generation requests; 'prefill': a prefill kernel, the
--                    context requests (or, in a step without them, the generation requests: FlashInfer's
--                    tensor-core decode)
--   layout           how the key and value tensors are shaped: 'tokens' (the new tokens, [T, H_KV, d]);
--                    'flashinfer' (the paged caches, NHD or HND by the layout code); 'flashinfer_ragged' (a
--                    ragged call's keys and values, NHD or HND); 'aiter' (the paged caches
--                    [blocks, H_KV, d/x, block_size, x] and [blocks, H_KV, d, block_size])
--   iq, ik, iv, io   positions of query, key, value and output in Input Dims (io NULL: the output is a new
--                    tensor of the query's type)
--   im, il           positions in Concrete Inputs of the mask mode and of the KV layout code (NULL: none)
CREATE OR REPLACE VIEW _perf_step_ops AS
WITH named AS (
    SELECT * FROM (VALUES
        ('vllm::unified_attention_with_output', 'step', 'tokens', 1, 2, 3, 4, NULL, NULL),
        ('vllm::unified_attention', 'step', 'tokens', 1, 2, 3, NULL, NULL, NULL),
        ('aiter::pa_fwd_asm', 'decode', 'aiter', 1, 2, 3, 10, NULL, NULL),
        ('aiter::_pa_fwd_asm', 'decode', 'aiter', 1, 2, 3, 10, NULL, NULL),
        ('aiter::paged_attention_rocm', 'decode', 'aiter', 5, 6, 7, 1, NULL, NULL)
    ) AS t(op_name, phase, layout, iq, ik, iv, io, im, il)
), fi AS (  -- FlashInfer's op names carry the module's uri: matched by prefix and suffix
    SELECT * FROM (VALUES
        ('batch_decode_with_kv_cache_', '::run', 'decode', 'flashinfer', 4, 5, 6, 10, NULL, 12),
        ('batch_prefill_with_kv_cache_', '::paged_run', 'prefill', 'flashinfer', 4, 5, 6, 11, 13, 14),
        ('batch_prefill_with_kv_cache_', '::ragged_run', 'prefill', 'flashinfer_ragged', 4, 5, 6, 9, 11, 12)
    ) AS t(prefix, suffix, phase, layout, iq, ik, iv, io, im, il)
)
SELECT * FROM named
UNION ALL
SELECT n.op_name, fi.phase, fi.layout, fi.iq, fi.ik, fi.iv, fi.io, fi.im, fi.il
FROM (SELECT DISTINCT op_name FROM cpu_event_context  -- the ops around kernel launches (stored: no attribution)
      WHERE anchor_kind = 'launch' AND starts_with(op_name, 'batch_')) n
JOIN fi ON starts_with(n.op_name, fi.prefix) AND ends_with(n.op_name, fi.suffix);

-- _perf_kv_cache_writes: one row per op that writes new tokens into the paged KV cache.
--   op_name   the cpu_op name
--   ic        position of the key cache tensor in Input Dims (its recorded type is the cache's)
CREATE OR REPLACE VIEW _perf_kv_cache_writes AS
SELECT * FROM (VALUES
    ('_C_cache_ops::reshape_and_cache_flash', 3),
    ('_C_cache_ops::reshape_and_cache', 3)
) AS t(op_name, ic);
