-- comm/names — the vocabulary of collectives: collective types, data types and their sizes, and what the name of
-- a NCCL/RCCL kernel says about the collective it runs.
--
-- Collective types are written as torch.distributed names them (all_reduce, all_gather, reduce_scatter, all_to_all,
-- broadcast, reduce, gather, scatter, barrier, send, recv, send_recv); data types as torch names them (float32,
-- bfloat16, int64, ...).
--
-- NCCL kernel names (NVIDIA/nccl src/device/generate.py, which writes the kernel and function table):
--   NCCL >= 2.19   ncclDevKernel_<Coll>[_<RedOp>_<Type>]_<ALGO>_<PROTO>   e.g. ncclDevKernel_AllReduce_Sum_f16_RING_LL,
--                  ncclDevKernel_AllGather_RING_LL (data-movement collectives carry no reduction and no type);
--                  ncclDevKernel_SendRecv (point-to-point), ncclDevKernel_Generic (several ops in one launch)
--   NCCL <= 2.18   ncclKernel_<Coll>_<ALGO>_<PROTO>_<RedOp>_<type>            e.g. ncclKernel_AllReduce_RING_LL_Sum_float,
--                  ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t (every kernel carries a reduction and a type, but for
--                  data-movement collectives they are the placeholder Sum/int8_t: only reductions' types are kept)
--   RCCL           the same grammar (RCCL is a fork of NCCL), with ncclDevKernel_Generic_<N> launchers.
-- ALGO is one of TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT; PROTO one of LL, LL128, SIMPLE
-- (NCCL src/include/device.h, ncclAlgoStr / ncclProtoStr).

-- _comm_type_names: every spelling of a collective found in collective metadata ("Collective name"), c10d op
-- names (c10d::allreduce_), backend annotations (nccl:all_reduce, gloo:all_reduce) and kernel names (AllReduce),
-- lower-cased and stripped of the c10d::/nccl:/gloo: prefix and of leading/trailing underscores, with its
-- collective type.
CREATE OR REPLACE VIEW _comm_type_names AS
SELECT * FROM (VALUES
    ('allreduce', 'all_reduce'), ('all_reduce', 'all_reduce'), ('allreduce_coalesced', 'all_reduce'),
    ('allreduce_sparse', 'all_reduce'), ('all_reduce_coalesced', 'all_reduce'),
    ('allgather', 'all_gather'), ('all_gather', 'all_gather'), ('allgather_base', 'all_gather'),
    ('all_gather_base', 'all_gather'), ('allgather_into_tensor_coalesced', 'all_gather'),
    ('all_gather_into_tensor', 'all_gather'), ('allgather_coalesced', 'all_gather'),
    ('reducescatter', 'reduce_scatter'), ('reduce_scatter', 'reduce_scatter'),
    ('reduce_scatter_base', 'reduce_scatter'), ('reduce_scatter_tensor_coalesced', 'reduce_scatter'),
    ('reduce_scatter_tensor', 'reduce_scatter'),
    ('alltoall', 'all_to_all'), ('all_to_all', 'all_to_all'), ('alltoall_base', 'all_to_all'),
    ('all_to_allv', 'all_to_all'), ('alltoallv', 'all_to_all'), ('all_to_all_single', 'all_to_all'),
    ('broadcast', 'broadcast'), ('reduce', 'reduce'), ('gather', 'gather'), ('scatter', 'scatter'),
    ('barrier', 'barrier'), ('send', 'send'), ('recv', 'recv'), ('recv_any_source', 'recv'),
    ('sendrecv', 'send_recv'), ('send_recv', 'send_recv')
) t(spelling, coll_type);

-- _comm_type_of(s): the collective type of one spelling (NULL when it names no collective).
CREATE OR REPLACE MACRO _comm_type_of(s) AS (
    SELECT coll_type FROM _comm_type_names
    WHERE spelling = trim(regexp_replace(lower(s), '^(c10d::|nccl:|gloo:|rccl:)', ''), '_')
);

-- _comm_dtypes: every spelling of a data type in collective metadata ("dtype": Float, BFloat16), op input types
-- (float, c10::BFloat16, long int) and kernel names (f16, __nv_bfloat16, int8_t), with its torch name and size.
CREATE OR REPLACE VIEW _comm_dtypes AS
SELECT * FROM (VALUES
    ('float', 'float32', 4), ('float32', 'float32', 4), ('f32', 'float32', 4),
    ('double', 'float64', 8), ('float64', 'float64', 8), ('f64', 'float64', 8),
    ('half', 'float16', 2), ('c10::half', 'float16', 2), ('float16', 'float16', 2), ('f16', 'float16', 2),
    ('bfloat16', 'bfloat16', 2), ('c10::bfloat16', 'bfloat16', 2), ('bf16', 'bfloat16', 2),
    ('__nv_bfloat16', 'bfloat16', 2), ('hip_bfloat16', 'bfloat16', 2), ('rccl_bfloat16', 'bfloat16', 2),
    ('long', 'int64', 8), ('long int', 'int64', 8), ('int64', 'int64', 8), ('int64_t', 'int64', 8), ('i64', 'int64', 8),
    ('uint64_t', 'uint64', 8), ('u64', 'uint64', 8), ('unsigned long', 'uint64', 8),
    ('int', 'int32', 4), ('int32', 'int32', 4), ('int32_t', 'int32', 4), ('i32', 'int32', 4),
    ('uint32_t', 'uint32', 4), ('u32', 'uint32', 4), ('unsigned int', 'uint32', 4),
    ('short', 'int16', 2), ('short int', 'int16', 2), ('int16', 'int16', 2),
    ('char', 'int8', 1), ('signed char', 'int8', 1), ('int8', 'int8', 1), ('int8_t', 'int8', 1), ('i8', 'int8', 1),
    ('byte', 'uint8', 1), ('unsigned char', 'uint8', 1), ('uint8', 'uint8', 1), ('uint8_t', 'uint8', 1), ('u8', 'uint8', 1),
    ('bool', 'bool', 1),
    ('float8_e4m3fn', 'float8_e4m3fn', 1), ('c10::float8_e4m3fn', 'float8_e4m3fn', 1), ('f8e4m3', 'float8_e4m3fn', 1),
    ('__nv_fp8_e4m3', 'float8_e4m3fn', 1),
    ('float8_e5m2', 'float8_e5m2', 1), ('c10::float8_e5m2', 'float8_e5m2', 1), ('f8e5m2', 'float8_e5m2', 1),
    ('__nv_fp8_e5m2', 'float8_e5m2', 1)
) t(spelling, dtype, item_bytes);

-- _comm_dtype_of(s) / _comm_item_bytes(s): the torch name and the size in bytes of one data type spelling.
CREATE OR REPLACE MACRO _comm_dtype_of(s) AS (SELECT dtype FROM _comm_dtypes WHERE spelling = lower(s));
CREATE OR REPLACE MACRO _comm_item_bytes(s) AS (SELECT item_bytes FROM _comm_dtypes WHERE spelling = lower(s));

-- _comm_kernel_parts(name): what a NCCL/RCCL kernel name says, as a struct (fields NULL when absent): coll
-- (collective type), algo, proto, redop, dtype (torch name; only for reductions in the pre-2.19 grammar).
CREATE OR REPLACE MACRO _comm_kernel_parts(name) AS (
    WITH p AS (SELECT regexp_extract(name, '^(?:void )?(nccl(?:Dev)?Kernel)_([A-Za-z0-9_]+)', ['kind', 'rest']) AS m),
    q AS (SELECT m.kind AS kind, string_split(m.rest, '_') AS parts FROM p),
    r AS (SELECT kind, parts, parts[1] AS coll_raw,
                 list_position(parts, 'LL') AS p_ll, list_position(parts, 'LL128') AS p_ll128,
                 list_position(parts, 'SIMPLE') AS p_simple
          FROM q)
    SELECT CASE WHEN kind IS NULL OR kind = '' THEN NULL ELSE {
        'coll': _comm_type_of(coll_raw),
        'algo': CASE
            WHEN kind = 'ncclKernel' AND len(parts) >= 3 THEN
                array_to_string(parts[2:greatest(coalesce(nullif(p_ll, 0), nullif(p_ll128, 0), nullif(p_simple, 0), 1) - 1, 1)], '_')
            WHEN kind = 'ncclDevKernel' AND coalesce(nullif(p_ll, 0), nullif(p_ll128, 0), nullif(p_simple, 0)) IS NOT NULL THEN
                array_to_string(list_filter(parts[2:coalesce(nullif(p_ll, 0), nullif(p_ll128, 0), nullif(p_simple, 0)) - 1],
                                            lambda x: x IN ('TREE', 'RING', 'COLLNET', 'DIRECT', 'CHAIN', 'NVLS', 'PAT')), '_')
        END,
        'proto': CASE WHEN p_ll128 > 0 THEN 'LL128' WHEN p_ll > 0 THEN 'LL' WHEN p_simple > 0 THEN 'SIMPLE' END,
        'redop': CASE
            WHEN kind = 'ncclKernel' AND coalesce(nullif(p_ll, 0), nullif(p_ll128, 0), nullif(p_simple, 0)) IS NOT NULL
                THEN parts[coalesce(nullif(p_ll, 0), nullif(p_ll128, 0), nullif(p_simple, 0)) + 1]
            WHEN kind = 'ncclDevKernel' AND parts[2] IN ('Sum', 'Prod', 'MinMax', 'Max', 'Min', 'PreMulSum', 'SumPostDiv')
                THEN parts[2]
        END,
        'dtype': CASE
            WHEN _comm_type_of(coll_raw) NOT IN ('all_reduce', 'reduce_scatter', 'reduce') THEN NULL
            WHEN kind = 'ncclKernel' AND coalesce(nullif(p_ll, 0), nullif(p_ll128, 0), nullif(p_simple, 0)) IS NOT NULL
                THEN _comm_dtype_of(array_to_string(parts[coalesce(nullif(p_ll, 0), nullif(p_ll128, 0), nullif(p_simple, 0)) + 2:], '_'))
            WHEN kind = 'ncclDevKernel' AND parts[2] IN ('Sum', 'Prod', 'MinMax', 'Max', 'Min', 'PreMulSum', 'SumPostDiv')
                THEN _comm_dtype_of(parts[3])
        END
    } END FROM r
);
