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

-- _perf_step_ops: one row per paged-attention op name: where its tensors are.
--   op_name          the cpu_op name
--   iq, ik, iv, io   positions of query, key, value and output in Input Dims (io NULL: the output is a new
--                    tensor of the query's type)
CREATE OR REPLACE VIEW _perf_step_ops AS
SELECT * FROM (VALUES
    ('vllm::unified_attention_with_output', 1, 2, 3, 4),
    ('vllm::unified_attention', 1, 2, 3, NULL)
) AS t(op_name, iq, ik, iv, io);

-- _perf_kv_cache_writes: one row per op that writes new tokens into the paged KV cache.
--   op_name   the cpu_op name
--   ic        position of the key cache tensor in Input Dims (its recorded type is the cache's)
CREATE OR REPLACE VIEW _perf_kv_cache_writes AS
SELECT * FROM (VALUES
    ('_C_cache_ops::reshape_and_cache_flash', 3),
    ('_C_cache_ops::reshape_and_cache', 3)
) AS t(op_name, ic);
