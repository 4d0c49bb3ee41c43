-- comm/collectives — one row per collective instance per rank: what was communicated (type, process group, data
-- type, element counts and bytes), where each of those facts came from, and when it ran.
--
-- A collective instance is one call of a collective on one rank:
--   'c10d_op'             the c10d:: op that issues it (c10d::allreduce_, c10d::_allgather_base_, ...; an op
--                         nested in another collective op is part of that one);
--   'record_param_comms'  in a trace without c10d:: collective ops, a record_param_comms op that names a
--                         collective ("Collective name");
--   'kernel'              a communication kernel (class comm in the category rules) launched outside every op
--                         above (traces without ops, symmetric-memory ops, graph replays): each one on its own;
--                         the op around its launch (symm_mem::multimem_all_reduce_, ...) can name its type.
-- Its execution is when the data moved: the communication kernels it launched (launch calls inside the op on its
-- thread; GPU backends such as NCCL and RCCL), or, for a CPU backend (gloo), the backend's record of the work:
-- the gloo:<collective> annotation that its worker thread writes, tied to the latest collective op of the rank
-- that starts at or before it (the op only queues the work; the annotation is the transfer including the time
-- spent waiting for the peers). An instance whose execution is not in the trace (a rank cut short, a kernel
-- outside the window) keeps its row with the execution columns NULL.
--
-- Each fact is taken from the first source that has it, and the *_source column names it:
--   'metadata'     the collective metadata that PyTorch writes on record_param_comms and on NCCL kernels
--                  ("Collective name", "dtype", "In msg nelems", "Out msg nelems", "Group size",
--                  "Process Group Name", "Process Group Description", "Process Group Ranks");
--   'op'           the c10d:: op: its name (type), its input types and Input Dims (record_shapes) by the op's
--                  signature (output first for _allgather_base_, _reduce_scatter_base_, alltoall_base_; a tensor
--                  list first for allreduce_, broadcast_, reduce_);
--   'annotation'   the backend annotation inside or after the op (nccl:all_reduce, gloo:all_gather): its name
--                  and the Input Dims / Input type of the tensor it moves; for a 'kernel' instance, the name of
--                  the op around its launch;
--   'kernel_name'  the NCCL/RCCL kernel name (comm/names);
--   'world'        the group size: the job's world size when nothing names the process group.
--
-- @requires comm/names comm/jobs gpu/activity tree/context

-- _comm_numel(dims): elements of a tensor from its Input Dims entry (JSON list of sizes); NULL when the list is
-- empty or not a list of integers (a TensorList the profiler did not expand).
CREATE OR REPLACE MACRO _comm_numel(dims) AS (
    CASE WHEN json_type(dims) = 'ARRAY' AND json_array_length(dims) > 0
              AND json_type(dims, '$[0]') IN ('UBIGINT', 'BIGINT')
         THEN list_product(from_json(dims, '["BIGINT"]'))::BIGINT END
);

-- _comm_list_numel(dims): total elements of a tensor list entry ([[sizes], [sizes], ...]); NULL when empty.
CREATE OR REPLACE MACRO _comm_list_numel(dims) AS (
    CASE WHEN json_type(dims) = 'ARRAY' AND json_array_length(dims) > 0 AND json_type(dims, '$[0]') = 'ARRAY'
         THEN list_sum(list_transform(from_json(dims, '["JSON"]'), lambda d: _comm_numel(d)))::BIGINT END
);

-- _comm_op_nelems(name, dims, side): elements of a c10d:: op's input (side 'in') or output ('out') from its
-- Input Dims, by the op's signature: output first, then input, for _allgather_base_, _reduce_scatter_base_,
-- alltoall_base_ and the tensor-coalesced ops; one tensor list, both input and output, for allreduce_, broadcast_,
-- reduce_; 0 for a barrier; NULL for other ops and for tensor lists the profiler did not expand.
CREATE OR REPLACE MACRO _comm_op_nelems(name, dims, side) AS (
    CASE WHEN name = 'c10d::barrier' THEN 0
         WHEN name IN ('c10d::_allgather_base_', 'c10d::_reduce_scatter_base_', 'c10d::alltoall_base_',
                       'c10d::allgather_into_tensor_coalesced_', 'c10d::reduce_scatter_tensor_coalesced_')
             THEN _comm_numel(json_extract(dims, CASE side WHEN 'in' THEN '$[1]' ELSE '$[0]' END))
         WHEN name IN ('c10d::allreduce_', 'c10d::broadcast_', 'c10d::reduce_', 'c10d::allreduce_coalesced_')
             THEN _comm_list_numel(json_extract(dims, '$[0]'))
    END
);

-- _comm_op_dtype(types): the data type (torch name) of a collective op's first input, from its Input type; NULL
-- for a tensor list or a scalar.
CREATE OR REPLACE MACRO _comm_op_dtype(types) AS (
    CASE WHEN json_extract_string(types, '$[0]') NOT IN ('', 'TensorList', 'Scalar', 'ScalarList')
         THEN _comm_dtype_of(json_extract_string(types, '$[0]')) END
);

-- _comm_ops: the collective ops of every trace: c10d:: collective ops that no other c10d:: collective op on
-- their thread encloses, and record_param_comms ops that name a collective.
CREATE OR REPLACE VIEW _comm_ops AS
WITH c AS MATERIALIZED (
    SELECT trace_id, event_id, pid, tid, name, ts_ns, ts_ns + coalesce(dur_ns, 0) AS end_ns, dur_ns,
           input_dims, input_types, args
    FROM events
    WHERE cat = 'cpu_op' AND (name LIKE 'c10d::%' AND _comm_type_of(name) IS NOT NULL
                              OR name = 'record_param_comms')
)
SELECT c.*, CASE WHEN c.name LIKE 'c10d::%' THEN 'c10d_op' ELSE 'record_param_comms' END AS level
FROM c
WHERE (c.name LIKE 'c10d::%' OR json_extract_string(c.args, '$."Collective name"') IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM c o WHERE o.trace_id = c.trace_id AND o.tid = c.tid AND o.pid = c.pid
                  AND o.name LIKE 'c10d::%' AND o.event_id <> c.event_id
                  AND o.ts_ns <= c.ts_ns AND o.end_ns >= c.end_ns
                  AND (o.ts_ns < c.ts_ns OR o.end_ns > c.end_ns OR o.event_id < c.event_id));

-- _comm_trace_level: the op level at which each trace's issuing ops are found (see the module header; 'kernel'
-- when the trace has neither kind of op).
CREATE OR REPLACE VIEW _comm_trace_level AS
SELECT r.trace_id,
       CASE WHEN bool_or(o.level = 'c10d_op') THEN 'c10d_op'
            WHEN bool_or(o.level = 'record_param_comms') THEN 'record_param_comms'
            ELSE 'kernel' END AS level
FROM comm_ranks r LEFT JOIN _comm_ops o USING (trace_id)
GROUP BY r.trace_id;

-- _comm_issuers: the issuing ops of the traces whose level is an op (one row per instance).
-- @materialize comm
CREATE OR REPLACE VIEW _comm_issuers AS
SELECT o.* FROM _comm_ops o JOIN _comm_trace_level l USING (trace_id, level);

-- _comm_kernels: the communication kernels of every trace with their launch call's thread and time.
-- @materialize comm
CREATE OR REPLACE VIEW _comm_kernels AS
SELECT a.trace_id, a.event_id, a.stream, a.device, a.name, a.ts_ns, a.dur_ns, a.end_ns,
       a.launch_ts_ns, a.launch_tid, a.launch_event_id, k.args
FROM gpu_activity a JOIN kernels k USING (trace_id, event_id)
WHERE a.activity_class = 'comm' AND a.trace_id IN (SELECT trace_id FROM comm_ranks);

-- _comm_issuer_kernels: each issuing op's kernels (launch call on the op's thread, inside the op).
CREATE OR REPLACE VIEW _comm_issuer_kernels AS
SELECT i.trace_id, i.event_id AS issuer_event_id, k.*  EXCLUDE (trace_id)
FROM _comm_issuers i JOIN events l ON l.trace_id = i.trace_id AND l.pid = i.pid AND l.tid = i.tid
     AND l.ts_ns >= i.ts_ns AND l.ts_ns <= i.end_ns
JOIN _comm_kernels k ON k.trace_id = l.trace_id AND k.launch_event_id = l.event_id;

-- _comm_issuer_meta: the record_param_comms op with collective metadata inside each issuing op (itself for a
-- record_param_comms issuer), and the nccl:/rccl: annotation inside it on its thread.
CREATE OR REPLACE VIEW _comm_issuer_meta AS
SELECT i.trace_id, i.event_id AS issuer_event_id,
       arg_min(m.args, m.ts_ns) FILTER (WHERE m.name = 'record_param_comms'
                                        AND json_extract_string(m.args, '$."Collective name"') IS NOT NULL) AS meta_args,
       arg_min(m.name, m.ts_ns) FILTER (WHERE m.name LIKE 'nccl:%' OR m.name LIKE 'rccl:%') AS ann_name,
       arg_min(m.input_dims, m.ts_ns) FILTER (WHERE m.name LIKE 'nccl:%' OR m.name LIKE 'rccl:%') AS ann_dims,
       arg_min(m.input_types, m.ts_ns) FILTER (WHERE m.name LIKE 'nccl:%' OR m.name LIKE 'rccl:%') AS ann_types
FROM _comm_issuers i JOIN events m ON m.trace_id = i.trace_id AND m.pid = i.pid AND m.tid = i.tid
     AND m.ts_ns >= i.ts_ns AND m.ts_ns <= i.end_ns
     AND (m.name = 'record_param_comms' OR m.name LIKE 'nccl:%' OR m.name LIKE 'rccl:%')
GROUP BY ALL;

-- _comm_cpu_exec: the gloo:<collective> annotations of every trace, each tied to the latest issuing op of its
-- trace that starts at or before it, and kept only when it does what the op asked for: the same collective type
-- (gloo runs a reduce-scatter as an all-reduce of the whole input), and the same element count and data type
-- where both are known; so an annotation whose own op is not in the trace is not given to an earlier op. Per op,
-- the first such annotation is its execution.
CREATE OR REPLACE VIEW _comm_cpu_exec AS
WITH a AS (
    SELECT trace_id, event_id, name, ts_ns, ts_ns + dur_ns AS end_ns, input_dims, input_types,
           _comm_numel(json_extract(input_dims, '$[0]')) AS ann_in,
           _comm_dtype_of(json_extract_string(input_types, '$[0]')) AS ann_dtype
    FROM events WHERE name LIKE 'gloo:%' AND dur_ns IS NOT NULL
      AND trace_id IN (SELECT trace_id FROM _comm_issuers)
), m AS (
    SELECT a.*, i.event_id AS issuer_event_id
    FROM a ASOF JOIN _comm_issuers i ON i.trace_id = a.trace_id AND i.ts_ns <= a.ts_ns
    WHERE (_comm_type_of(a.name) = _comm_type_of(i.name)
           OR _comm_type_of(i.name) = 'reduce_scatter' AND _comm_type_of(a.name) = 'all_reduce')
      AND (a.ann_in IS NULL OR _comm_op_nelems(i.name, i.input_dims, 'in') IS NULL
           OR a.ann_in = _comm_op_nelems(i.name, i.input_dims, 'in'))
      AND (a.ann_dtype IS NULL OR _comm_op_dtype(i.input_types) IS NULL OR a.ann_dtype = _comm_op_dtype(i.input_types))
)
SELECT trace_id, issuer_event_id, count(*) AS n_exec, min(ts_ns) AS exec_ts_ns, arg_min(end_ns, ts_ns) AS exec_end_ns,
       arg_min(name, ts_ns) AS ann_name, arg_min(input_dims, ts_ns) AS ann_dims,
       arg_min(input_types, ts_ns) AS ann_types
FROM m GROUP BY trace_id, issuer_event_id;

-- _comm_pg_config: the process groups of each rank's distributedInfo.pg_config: name and global ranks.
CREATE OR REPLACE VIEW _comm_pg_config AS
SELECT trace_id, json_extract_string(pc, '$.pg_name') AS pg_name,
       from_json(json_extract(pc, '$.ranks'), '["INTEGER"]') AS ranks
FROM (SELECT trace_id, unnest(from_json(pg_config, '["JSON"]')) AS pc FROM comm_ranks WHERE pg_config IS NOT NULL);

-- _comm_instances_raw: one row per instance with every candidate value of each fact, before the choice.
CREATE OR REPLACE VIEW _comm_instances_raw AS
WITH ik AS (
    SELECT trace_id, issuer_event_id, count(*) AS n_exec, min(ts_ns) AS exec_ts_ns, max(end_ns) AS exec_end_ns,
           arg_min(stream, ts_ns) AS stream, arg_min(device, ts_ns) AS device, arg_min(name, ts_ns) AS kernel_name,
           arg_min(args, ts_ns) AS kernel_args
    FROM _comm_issuer_kernels GROUP BY ALL
)
SELECT i.trace_id, i.level, i.event_id AS issue_event_id, i.name AS issue_name, i.tid AS issue_tid,
       i.ts_ns AS issue_ts_ns, i.dur_ns AS issue_dur_ns, i.input_dims AS op_dims, i.input_types AS op_types,
       coalesce(mm.meta_args, CASE WHEN json_extract_string(ik.kernel_args, '$."Collective name"') IS NOT NULL
                                   THEN ik.kernel_args END) AS meta,
       coalesce(mm.ann_name, ce.ann_name) AS ann_name, coalesce(mm.ann_dims, ce.ann_dims) AS ann_dims,
       coalesce(mm.ann_types, ce.ann_types) AS ann_types,
       ik.kernel_name, ik.stream, ik.device,
       CASE WHEN ik.n_exec IS NOT NULL THEN 'gpu_kernel' WHEN ce.n_exec IS NOT NULL THEN 'cpu_annotation' END AS exec_kind,
       coalesce(ik.n_exec, ce.n_exec, 0) AS n_exec,
       coalesce(ik.exec_ts_ns, ce.exec_ts_ns) AS exec_ts_ns, coalesce(ik.exec_end_ns, ce.exec_end_ns) AS exec_end_ns
FROM _comm_issuers i
LEFT JOIN ik ON ik.trace_id = i.trace_id AND ik.issuer_event_id = i.event_id
LEFT JOIN _comm_issuer_meta mm ON mm.trace_id = i.trace_id AND mm.issuer_event_id = i.event_id
LEFT JOIN _comm_cpu_exec ce ON ce.trace_id = i.trace_id AND ce.issuer_event_id = i.event_id
UNION ALL
SELECT k.trace_id, 'kernel', k.event_id, k.name, NULL, coalesce(k.launch_ts_ns, k.ts_ns), k.dur_ns, NULL, NULL,
       CASE WHEN json_extract_string(k.args, '$."Collective name"') IS NOT NULL THEN k.args END,
       c.op_name, NULL, NULL, k.name, k.stream, k.device, 'gpu_kernel', 1, k.ts_ns, k.end_ns
FROM _comm_kernels k
LEFT JOIN cpu_event_context c ON c.trace_id = k.trace_id AND c.event_id = k.launch_event_id
WHERE NOT EXISTS (SELECT 1 FROM _comm_issuer_kernels ik WHERE ik.trace_id = k.trace_id AND ik.event_id = k.event_id);

-- comm_collectives: one row per collective instance per rank (see the module header for what an instance is and
-- where each fact comes from). Times are on the job clock (comm_ranks.clock_offset_ns added), ns.
--   job_id, trace_id, rank       the job, the trace and its rank
--   level                        'c10d_op', 'record_param_comms' or 'kernel': what the instance is
--   issue_event_id, issue_name   the issuing op (or the kernel, level 'kernel') and its name
--   issue_ts_ns, issue_dur_ns    when the op was called on the CPU and for how long, ns (a 'kernel' instance:
--                                its launch call's start, else the kernel's, and the kernel's duration)
--   coll_type, coll_type_source  collective type (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast,
--                                reduce, barrier, send_recv, ...) and its source
--   pg_name, pg_desc             process group name and description ("Process Group Name/Description"), NULL
--                                when the trace does not say
--   pg_ranks                     global ranks of the process group (list): metadata, else distributedInfo.pg_config
--                                of the named group
--   group_size, group_size_source  ranks in the process group, and its source ('metadata', 'pg_config', 'world')
--   pg_source                    'metadata' when the process group is named, else NULL
--   dtype, dtype_source          data type (torch name) and its source
--   in_nelems, out_nelems        elements of this rank's input and output, and nelems_source
--   item_bytes                   bytes per element of dtype
--   in_bytes, out_bytes          in_nelems * item_bytes, out_nelems * item_bytes
--   msg_bytes                    the size nccl-tests measures bandwidth with (NVIDIA/nccl-tests doc/PERFORMANCE.md):
--                                the larger of in_bytes and out_bytes (all-gather: the gathered output;
--                                reduce-scatter: the input; all-reduce, broadcast, all-to-all: the buffer); 0 for
--                                a barrier
--   algo, proto                  NCCL algorithm and protocol from the kernel name (NULL for CPU backends)
--   kernel_name                  the first communication kernel of the instance (NULL for CPU backends)
--   stream, device               where the kernel ran (NULL for CPU backends)
--   exec_kind                    'gpu_kernel', 'cpu_annotation', or NULL when the execution is not in the trace
--   n_exec                       kernels or annotations that make up the execution
--   start_ns, end_ns, dur_ns     first execution start, last execution end, and their difference, ns
--   seq                          1, 2, ... : the instance's position among the rank's instances of its process
--                                group (process group name, or all of the rank's instances when unnamed), in
--                                the order they were issued
-- @materialize comm
CREATE OR REPLACE VIEW comm_collectives AS
WITH r AS (
    SELECT i.*, cr.job_id, cr.rank, cr.world_size, cr.pg_config, cr.clock_offset_ns,
           json_extract_string(i.meta, '$."Collective name"') AS meta_coll,
           json_extract_string(i.meta, '$."Process Group Name"') AS meta_pg,
           json_extract_string(i.meta, '$."Process Group Description"') AS meta_pg_desc,
           json_extract_string(i.meta, '$."Process Group Ranks"') AS meta_pg_ranks,
           TRY_CAST(json_extract_string(i.meta, '$."Group size"') AS INTEGER) AS meta_group_size,
           json_extract_string(i.meta, '$.dtype') AS meta_dtype,
           TRY_CAST(json_extract_string(i.meta, '$."In msg nelems"') AS BIGINT) AS meta_in,
           TRY_CAST(json_extract_string(i.meta, '$."Out msg nelems"') AS BIGINT) AS meta_out,
           _comm_kernel_parts(i.kernel_name) AS kp,
           _comm_type_of(i.issue_name) AS op_coll, _comm_type_of(i.ann_name) AS ann_coll
    FROM _comm_instances_raw i JOIN comm_ranks cr USING (trace_id)
), t AS (
    SELECT *,
           coalesce(_comm_type_of(meta_coll), CASE WHEN level <> 'kernel' THEN op_coll END, kp.coll, ann_coll)
               AS coll_type,
           CASE WHEN _comm_type_of(meta_coll) IS NOT NULL THEN 'metadata'
                WHEN level <> 'kernel' AND op_coll IS NOT NULL THEN 'op'
                WHEN kp.coll IS NOT NULL THEN 'kernel_name'
                WHEN ann_coll IS NOT NULL THEN 'annotation' END AS coll_type_source,
           _comm_op_dtype(op_types) AS op_dtype
    FROM r
), g AS (
    SELECT t.*, pc.ranks AS cfg_ranks
    FROM t LEFT JOIN _comm_pg_config pc ON pc.trace_id = t.trace_id AND pc.pg_name = t.meta_pg
), n AS (
    SELECT g.*,
           coalesce(meta_group_size, len(cfg_ranks), world_size)::INTEGER AS group_size,
           CASE WHEN meta_group_size IS NOT NULL THEN 'metadata' WHEN cfg_ranks IS NOT NULL THEN 'pg_config'
                ELSE 'world' END AS group_size_source,
           coalesce(_comm_dtype_of(meta_dtype), op_dtype,
                    _comm_dtype_of(json_extract_string(ann_types, '$[0]')), kp.dtype) AS dtype,
           CASE WHEN _comm_dtype_of(meta_dtype) IS NOT NULL THEN 'metadata'
                WHEN op_dtype IS NOT NULL THEN 'op'
                WHEN _comm_dtype_of(json_extract_string(ann_types, '$[0]')) IS NOT NULL THEN 'annotation'
                WHEN kp.dtype IS NOT NULL THEN 'kernel_name' END AS dtype_source,
           CASE WHEN level = 'c10d_op' THEN _comm_op_nelems(issue_name, op_dims, 'in') END AS op_in,
           CASE WHEN level = 'c10d_op' THEN _comm_op_nelems(issue_name, op_dims, 'out') END AS op_out,
           _comm_numel(json_extract(ann_dims, '$[0]')) AS ann_in
    FROM g
), e AS (
    SELECT n.*,
           CASE WHEN meta_in IS NOT NULL THEN 'metadata' WHEN op_in IS NOT NULL THEN 'op'
                WHEN ann_in IS NOT NULL THEN 'annotation' END AS nelems_source,
           coalesce(meta_in, op_in, ann_in) AS in_nelems,
           coalesce(meta_out, op_out,
                    CASE WHEN coll_type = 'all_gather' THEN ann_in * group_size
                         WHEN coll_type = 'reduce_scatter' THEN ann_in // group_size
                         WHEN coll_type IN ('all_reduce', 'broadcast', 'reduce', 'all_to_all') THEN ann_in END)
               AS out_nelems,
           _comm_item_bytes(dtype) AS item_bytes
    FROM n
)
SELECT job_id, trace_id, rank, level, issue_event_id, issue_name,
       issue_ts_ns + clock_offset_ns AS issue_ts_ns, issue_dur_ns,
       coll_type, coll_type_source, meta_pg AS pg_name, meta_pg_desc AS pg_desc,
       coalesce(CASE WHEN meta_pg_ranks IS NOT NULL THEN TRY_CAST(meta_pg_ranks AS INTEGER[]) END, cfg_ranks) AS pg_ranks,
       group_size, group_size_source, CASE WHEN meta_pg IS NOT NULL THEN 'metadata' END AS pg_source,
       dtype, dtype_source, in_nelems, out_nelems, nelems_source, item_bytes,
       in_nelems * item_bytes AS in_bytes, out_nelems * item_bytes AS out_bytes,
       CASE WHEN coll_type = 'barrier' THEN 0 ELSE greatest(in_nelems * item_bytes, out_nelems * item_bytes) END
           AS msg_bytes,
       kp.algo AS algo, kp.proto AS proto, kernel_name, stream, device, exec_kind, n_exec,
       exec_ts_ns + clock_offset_ns AS start_ns, exec_end_ns + clock_offset_ns AS end_ns,
       exec_end_ns - exec_ts_ns AS dur_ns,
       row_number() OVER (PARTITION BY job_id, rank, trace_id, coalesce(meta_pg, '')
                          ORDER BY issue_ts_ns, issue_event_id) AS seq
FROM e;
