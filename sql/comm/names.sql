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

-- _comm_type_of(s): the collective type of one spelling found in collective metadata ("Collective name"), c10d op
-- names (c10d::allreduce_), backend annotations (nccl:all_reduce, gloo:all_reduce) and kernel names (AllReduce):
-- and PyTorch's symmetric-memory ops (symm_mem::multimem_all_reduce_, one_shot_all_reduce, ...): lower-cased and
-- stripped of the c10d::/nccl:/gloo:/rccl:/symm_mem:: prefix and of leading/trailing underscores, then looked up;
-- NULL when it names no collective.
CREATE OR REPLACE MACRO _comm_type_of(s) AS (MAP {
    'allreduce': 'all_reduce', 'all_reduce': 'all_reduce', 'allreduce_coalesced': 'all_reduce',
    'allreduce_sparse': 'all_reduce', 'all_reduce_coalesced': 'all_reduce', 'allgather': 'all_gather',
    'all_gather': 'all_gather', 'allgather_base': 'all_gather', 'all_gather_base': 'all_gather',
    'allgather_into_tensor_coalesced': 'all_gather', 'all_gather_into_tensor': 'all_gather',
    'allgather_coalesced': 'all_gather', 'reducescatter': 'reduce_scatter', 'reduce_scatter': 'reduce_scatter',
    'reduce_scatter_base': 'reduce_scatter', 'reduce_scatter_tensor_coalesced': 'reduce_scatter',
    'reduce_scatter_tensor': 'reduce_scatter', 'alltoall': 'all_to_all', 'all_to_all': 'all_to_all',
    'alltoall_base': 'all_to_all', 'all_to_allv': 'all_to_all', 'alltoallv': 'all_to_all',
    'all_to_all_single': 'all_to_all', 'broadcast': 'broadcast', 'reduce': 'reduce', 'gather': 'gather',
    'scatter': 'scatter', 'barrier': 'barrier', 'send': 'send', 'recv': 'recv', 'recv_any_source': 'recv',
    'sendrecv': 'send_recv', 'send_recv': 'send_recv',
    'multimem_all_reduce': 'all_reduce', 'one_shot_all_reduce': 'all_reduce', 'two_shot_all_reduce': 'all_reduce',
    'multimem_one_shot_all_reduce': 'all_reduce', 'multimem_all_gather': 'all_gather',
    'multimem_all_gather_out': 'all_gather', 'one_shot_all_reduce_out': 'all_reduce',
    'two_shot_all_reduce_out': 'all_reduce', 'reduce_scatter_out': 'reduce_scatter'
})[trim(regexp_replace(lower(s), '^(c10d::|nccl:|gloo:|rccl:|symm_mem::)', ''), '_')];

-- _comm_dtype_of(s): the torch name of one data type spelling in collective metadata ("dtype": Float, BFloat16),
-- op input types (float, c10::BFloat16, long int) and kernel names (f16, __nv_bfloat16, int8_t); NULL when unknown.
CREATE OR REPLACE MACRO _comm_dtype_of(s) AS (MAP {
    'float': 'float32', 'float32': 'float32', 'f32': 'float32', 'double': 'float64', 'float64': 'float64',
    'f64': 'float64', 'half': 'float16', 'c10::half': 'float16', 'float16': 'float16', 'f16': 'float16',
    'bfloat16': 'bfloat16', 'c10::bfloat16': 'bfloat16', 'bf16': 'bfloat16', '__nv_bfloat16': 'bfloat16',
    'hip_bfloat16': 'bfloat16', 'rccl_bfloat16': 'bfloat16', 'long': 'int64', 'long int': 'int64', 'int64': 'int64',
    'int64_t': 'int64', 'i64': 'int64', 'uint64_t': 'uint64', 'u64': 'uint64', 'unsigned long': 'uint64',
    'int': 'int32', 'int32': 'int32', 'int32_t': 'int32', 'i32': 'int32', 'uint32_t': 'uint32', 'u32': 'uint32',
    'unsigned int': 'uint32', 'short': 'int16', 'short int': 'int16', 'int16': 'int16', 'char': 'int8',
    'signed char': 'int8', 'int8': 'int8', 'int8_t': 'int8', 'i8': 'int8', 'byte': 'uint8', 'unsigned char': 'uint8',
    'uint8': 'uint8', 'uint8_t': 'uint8', 'u8': 'uint8', 'bool': 'bool', 'float8_e4m3fn': 'float8_e4m3fn',
    'c10::float8_e4m3fn': 'float8_e4m3fn', 'f8e4m3': 'float8_e4m3fn', '__nv_fp8_e4m3': 'float8_e4m3fn',
    'float8_e5m2': 'float8_e5m2', 'c10::float8_e5m2': 'float8_e5m2', 'f8e5m2': 'float8_e5m2',
    '__nv_fp8_e5m2': 'float8_e5m2'
})[lower(s)];

-- _comm_item_bytes(dtype): bytes per element of a data type (torch name, as _comm_dtype_of gives).
CREATE OR REPLACE MACRO _comm_item_bytes(dtype) AS (MAP {
    'float32': 4, 'float64': 8, 'float16': 2, 'bfloat16': 2, 'int64': 8, 'uint64': 8, 'int32': 4, 'uint32': 4,
    'int16': 2, 'int8': 1, 'uint8': 1, 'bool': 1, 'float8_e4m3fn': 1, 'float8_e5m2': 1
})[dtype];

-- _comm_kernel_parts(name): what a NCCL/RCCL kernel name says, as a struct (fields NULL when absent): coll
-- (collective type), algo, proto, redop, dtype (torch name; only for reductions: the pre-2.19 grammar writes a
-- placeholder type on data-movement kernels). Built in three steps: the kernel family and the '_'-separated words
-- after it (_comm_kernel_parts), the position of the protocol word (_comm_kernel_words), the fields
-- (_comm_kernel_fields); pp is that position (0 when there is none).
CREATE OR REPLACE MACRO _comm_kernel_fields(kind, parts, pp) AS (
    CASE WHEN coalesce(kind, '') <> '' THEN {
        'coll': _comm_type_of(parts[1]),
        'algo': CASE
            WHEN pp > 0 AND kind = 'ncclKernel' THEN array_to_string(parts[2:pp - 1], '_')
            WHEN pp > 0 THEN array_to_string(list_filter(parts[2:pp - 1],
                lambda x: x IN ('TREE', 'RING', 'COLLNET', 'DIRECT', 'CHAIN', 'NVLS', 'PAT')), '_')
        END,
        'proto': CASE WHEN pp > 0 THEN parts[pp] END,
        'redop': CASE
            WHEN pp > 0 AND kind = 'ncclKernel' THEN parts[pp + 1]
            WHEN kind = 'ncclDevKernel' AND parts[2] IN ('Sum', 'Prod', 'MinMax', 'Max', 'Min', 'PreMulSum', 'SumPostDiv')
                THEN parts[2]
        END,
        'dtype': CASE
            WHEN _comm_type_of(parts[1]) NOT IN ('all_reduce', 'reduce_scatter', 'reduce') THEN NULL
            WHEN pp > 0 AND kind = 'ncclKernel' THEN _comm_dtype_of(array_to_string(parts[pp + 2:], '_'))
            WHEN kind = 'ncclDevKernel' AND parts[2] IN ('Sum', 'Prod', 'MinMax', 'Max', 'Min', 'PreMulSum', 'SumPostDiv')
                THEN _comm_dtype_of(parts[3])
        END
    } END
);

CREATE OR REPLACE MACRO _comm_kernel_words(kind, parts) AS
    _comm_kernel_fields(kind, parts, coalesce(nullif(list_position(parts, 'LL128'), 0), nullif(list_position(parts, 'LL'), 0),
                                              nullif(list_position(parts, 'SIMPLE'), 0), 0));

CREATE OR REPLACE MACRO _comm_kernel_parts(name) AS
    _comm_kernel_words(regexp_extract(name, '^(?:void )?(nccl(?:Dev)?Kernel)_([A-Za-z0-9_]+)', 1),
                       string_split(regexp_extract(name, '^(?:void )?(nccl(?:Dev)?Kernel)_([A-Za-z0-9_]+)', 2), '_'));
