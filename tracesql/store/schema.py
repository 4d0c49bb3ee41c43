"""The dataset's tables: one Parquet file per table per trace, with these explicit schemas.

Every table carries ``trace_id``: it is the partition key of the dataset layout
``DATASET/traces/trace_id=<id>/<table>/part-N.parquet`` and the first column of every view over it.
Times are int64 nanoseconds parsed exactly from the decimal text of ``ts``/``dur`` (µs in the file);
``ts_ns`` is the file's own clock (relative to ``traces.base_time_ns`` when the trace has one).
``event_id`` is the 0-based position of the event in the file's ``traceEvents`` array, unique per trace
and shared by all tables, so an event can be found again in the source file.
"""
from __future__ import annotations

# (column, duckdb type, description)
Column = tuple[str, str, str]

_COMMON_HEAD: list[Column] = [
    ("event_id", "BIGINT", "0-based index of the event in the file's traceEvents array"),
]
_PLACE: list[Column] = [
    ("pid", "VARCHAR", "process id as written (an integer or a label such as 'Spans')"),
    ("tid", "VARCHAR", "thread id as written (an integer or a label such as 'stream 7')"),
]

TABLES: dict[str, dict] = {
    "traces": {
        "doc": "One row per ingested trace file.",
        "columns": [
            ("source_path", "VARCHAR", "absolute path of the file when it was ingested"),
            ("file_name", "VARCHAR", "base name of the file"),
            ("content_hash", "VARCHAR", "XXH3-128 hex digest of the file's bytes; trace_id is its first 16 digits"),
            ("size_bytes", "BIGINT", "bytes of the file read and hashed (its size on disk unless it grew while read)"),
            ("json_bytes", "BIGINT", "size of the (decompressed) JSON text"),
            ("compressed", "BOOLEAN", "whether the file was gzip-compressed"),
            ("format", "VARCHAR", "'kineto' (PyTorch profiler), 'jax' (no cat field) or 'chrome' (other)"),
            ("rank", "INTEGER", "distributed rank: distributedInfo.rank, else a 'rank<N>' in the file name"),
            ("rank_source", "VARCHAR", "'distributedInfo', 'file_name' or NULL"),
            ("world_size", "INTEGER", "distributedInfo.world_size"),
            ("distributed_backend", "VARCHAR", "distributedInfo.backend (nccl, gloo, ...)"),
            ("base_time_ns", "BIGINT", "baseTimeNanoseconds: epoch ns of ts = 0 when ts is relative, else NULL"),
            ("schema_version", "INTEGER", "schemaVersion of the Kineto format"),
            ("trace_name", "VARCHAR", "traceName header field"),
            ("display_time_unit", "VARCHAR", "displayTimeUnit header field"),
            ("device_count", "INTEGER", "number of entries in deviceProperties"),
            ("device_properties", "JSON", "deviceProperties list (GPU name, SM count, memory, ...)"),
            ("distributed_info", "JSON", "distributedInfo object (process groups, ranks, backend)"),
            ("profiler_flags", "JSON", "record_shapes, with_stack, profile_memory, with_flops, with_modules, "
                                       "runtime/driver/CUPTI/ROCTracer versions present in the header"),
            ("header", "JSON", "every top-level field except traceEvents"),
            ("events_read", "BIGINT", "elements of traceEvents read (rows written + events skipped)"),
            ("events_skipped", "BIGINT", "elements not written to any table (see ingest_issues)"),
            ("gpu_events_unlinked", "BIGINT", "kernels rows without a launch call: gpu_launch_links.linked = false "
                                              "(e.g. warm-up kernels launched before the CPU window)"),
            ("row_counts", "JSON", "rows written per table for this trace"),
            ("truncated", "BOOLEAN", "the file ended early and was salvaged (--salvage)"),
            ("exact_ts_text", "BOOLEAN", "ts values needed the exact decimal-text path (>= 14 integer digits)"),
            ("ingested_at", "TIMESTAMP", "when the ingest finished (UTC)"),
            ("ingest_seconds", "DOUBLE", "wall time of the ingest"),
            ("tracesql_version", "VARCHAR", "version of tracesql that wrote the rows"),
        ],
    },
    "events": {
        "doc": "Duration events on CPU threads: cpu_op, python_function, user_annotation, cuda_runtime, "
               "cuda_driver, Trace spans, overhead, ... (ph X; B/E begin/end events too, with dur_ns NULL).",
        "columns": _COMMON_HEAD + [
            ("ph", "VARCHAR", "phase: X complete event, B/E begin/end"),
            ("cat", "VARCHAR", "normalised category (Operator->cpu_op, Runtime->cuda_runtime; JAX host: "
                               "cuda_runtime for launch APIs, python_function for '$' frames, else user_annotation)"),
            ("cat_raw", "VARCHAR", "category exactly as written (NULL when the event has none)"),
            ("name", "VARCHAR", "event name"),
        ] + _PLACE + [
            ("ts_ns", "BIGINT", "start, ns"),
            ("dur_ns", "BIGINT", "duration, ns"),
            ("external_id", "BIGINT", "args 'External id' (links ops to runtime calls and kernels)"),
            ("correlation", "BIGINT", "args correlation (runtime/driver calls; JAX correlation_id)"),
            ("sequence_number", "BIGINT", "args 'Sequence number' (forward/backward op pairing)"),
            ("fwd_thread_id", "BIGINT", "args 'Fwd thread id'"),
            ("python_id", "BIGINT", "args 'Python id' (python_function)"),
            ("python_parent_id", "BIGINT", "args 'Python parent id' (python_function)"),
            ("input_dims", "JSON", "args 'Input Dims' (cpu_op shapes, recorded with record_shapes), as JSON"),
            ("input_types", "JSON", "args 'Input type' (cpu_op input dtypes), as JSON"),
            ("input_strides", "JSON", "args 'Input Strides' (cpu_op input strides), as JSON"),
            ("concrete_inputs", "JSON", "args 'Concrete Inputs' (cpu_op scalar inputs), as JSON"),
            ("args", "JSON", "the full args object as written"),
            ("extra", "JSON", "other top-level fields (tts, id, bp, s, cname, ...) when present"),
        ],
    },
    "launches": {
        "doc": "Runtime/driver API calls that launch GPU work (a subset of events): kernel launches "
               "(cudaLaunchKernel*, cuLaunchKernel*, hip*LaunchKernel), graph launches (cudaGraphLaunch, "
               "hipGraphLaunch), memcpy and memset APIs.",
        "columns": _COMMON_HEAD + [
            ("name", "VARCHAR", "API name"),
            ("launch_kind", "VARCHAR", "'kernel', 'graph', 'memcpy' or 'memset'"),
        ] + _PLACE + [
            ("ts_ns", "BIGINT", "start of the API call, ns"),
            ("dur_ns", "BIGINT", "duration of the API call, ns"),
            ("correlation", "BIGINT", "correlation id shared with the GPU work it launched"),
            ("external_id", "BIGINT", "args 'External id' of the call"),
            ("cbid", "BIGINT", "CUPTI callback id"),
        ],
    },
    "kernels": {
        "doc": "GPU-side activity on a device stream: kernel, gpu_memcpy, gpu_memset and cuda_sync events "
               "(Kernel/Memcpy/Memset in PyTorch 1.8 traces; events on /device: processes in JAX traces).",
        "columns": _COMMON_HEAD + [
            ("cat", "VARCHAR", "normalised category: kernel, gpu_memcpy, gpu_memset, cuda_sync"),
            ("cat_raw", "VARCHAR", "category exactly as written"),
            ("name", "VARCHAR", "kernel or activity name"),
        ] + _PLACE + [
            ("ts_ns", "BIGINT", "start on the GPU, ns"),
            ("dur_ns", "BIGINT", "duration on the GPU, ns"),
            ("device", "INTEGER", "args device (JAX: N of /device:GPU:N)"),
            ("stream", "BIGINT", "args stream (JAX: the tid of the stream thread)"),
            ("correlation", "BIGINT", "args correlation (JAX correlation_id): links to launches.correlation"),
            ("external_id", "BIGINT", "args 'External id'"),
            ("context", "BIGINT", "args context"),
            ("grid_x", "BIGINT", "grid dimensions"), ("grid_y", "BIGINT", ""), ("grid_z", "BIGINT", ""),
            ("block_x", "BIGINT", "block dimensions"), ("block_y", "BIGINT", ""), ("block_z", "BIGINT", ""),
            ("registers_per_thread", "BIGINT", "args 'registers per thread' (JAX: regs of kernel_details)"),
            ("shared_memory_bytes", "BIGINT", "args 'shared memory' (JAX: static_shared + dynamic_shared of "
                                              "kernel_details; ROCm: group_mem, the LDS bytes)"),
            ("blocks_per_sm", "DOUBLE", "args 'blocks per SM'"),
            ("warps_per_sm", "DOUBLE", "args 'warps per SM'"),
            ("est_occupancy_pct", "DOUBLE", "args 'est. achieved occupancy %' (JAX: occ_pct of kernel_details, "
                                            "XLA's theoretical occupancy; 0 when ROCm does not compute it)"),
            ("queued", "BIGINT", "args queued"),
            ("bytes", "BIGINT", "args bytes (memcpy/memset; JAX: size of memcpy_details, as written)"),
            ("memory_bandwidth_gbps", "DOUBLE", "args 'memory bandwidth (GB/s)' (JAX: bytes / dur_ns, when bytes "
                                                "> 0)"),
            ("copy_kind", "VARCHAR", "JAX: kind of memcpy_details (HtoD, DtoH, DtoD, ...; 'Unknown' as ROCm "
                                     "writes it)"),
            ("hlo_module", "VARCHAR", "JAX: args hlo_module, the XLA module (compiled jit function) it ran in"),
            ("hlo_op", "VARCHAR", "JAX: args hlo_op, the HLO instruction that launched it "
                                  "(loop_transpose_fusion, custom-call.1, cudnn-conv.1)"),
            ("framework_op", "VARCHAR", "JAX: args name of an event with hlo_op, the framework op path of the "
                                        "instruction (jit(loss_fn)/jvp()/dot_general)"),
            ("program_id", "BIGINT", "JAX: args program_id, the id of the compiled module (XPlane input; "
                                     "hlo_instructions.program_id)"),
            ("args", "JSON", "the full args object as written"),
        ],
    },
    "correlations": {
        "doc": "Flow events (ph s/f/t): ac2g links from a launch to its GPU work, fwdbwd links from a forward "
               "op to its backward op, async links in old traces.",
        "columns": _COMMON_HEAD + [
            ("ph", "VARCHAR", "s start, f finish, t step"),
            ("cat", "VARCHAR", "flow category: ac2g, fwdbwd, async, ..."),
            ("name", "VARCHAR", "flow name"),
            ("flow_id", "BIGINT", "flow id (for ac2g: the correlation id)"),
            ("flow_id_raw", "VARCHAR", "flow id as written"),
        ] + _PLACE + [
            ("ts_ns", "BIGINT", "timestamp of the flow end point, ns"),
            ("binding_point", "VARCHAR", "bp ('e': binds to the enclosing slice)"),
        ],
    },
    "instants": {
        "doc": "Instant events (ph i/I): [memory] allocator samples, Iteration Start, Record Window End.",
        "columns": _COMMON_HEAD + [
            ("ph", "VARCHAR", "i or I"),
            ("cat", "VARCHAR", "category as written"),
            ("name", "VARCHAR", "event name"),
        ] + _PLACE + [
            ("ts_ns", "BIGINT", "timestamp, ns"),
            ("scope", "VARCHAR", "s: g global, p process, t thread"),
            ("args", "JSON", "args as written (memory: Bytes, Total Allocated, Total Reserved, Device Id, Addr)"),
        ],
    },
    "metadata": {
        "doc": "Metadata events (ph M): process_name, thread_name, process_labels, sort indexes.",
        "columns": _COMMON_HEAD + [
            ("name", "VARCHAR", "metadata kind: process_name, thread_name, process_sort_index, ..."),
        ] + _PLACE + [
            ("ts_ns", "BIGINT", "timestamp when present, ns"),
            ("value", "VARCHAR", "args.name, args.labels or args.sort_index as text"),
            ("args", "JSON", "args as written"),
        ],
    },
    "counters": {
        "doc": "Counter events (ph C).",
        "columns": _COMMON_HEAD + [
            ("name", "VARCHAR", "counter name"),
            ("cat", "VARCHAR", "category as written"),
        ] + _PLACE + [
            ("ts_ns", "BIGINT", "timestamp, ns"),
            ("args", "JSON", "counter values"),
        ],
    },
    "gpu_user_annotations": {
        "doc": "user_annotation ranges projected onto a GPU stream (cat gpu_user_annotation).",
        "columns": _COMMON_HEAD + [
            ("name", "VARCHAR", "annotation name"),
        ] + _PLACE + [
            ("ts_ns", "BIGINT", "start, ns"),
            ("dur_ns", "BIGINT", "duration, ns"),
            ("device", "INTEGER", "args device, else pid when it is an integer"),
            ("stream", "BIGINT", "args stream, else tid when it is an integer"),
            ("external_id", "BIGINT", "args 'External id'"),
            ("args", "JSON", "args as written"),
        ],
    },
    "other_events": {
        "doc": "Events of any other phase (async b/e/n, samples, unknown ph), kept whole so nothing is lost.",
        "columns": _COMMON_HEAD + [
            ("ph", "VARCHAR", "phase as written"),
            ("cat", "VARCHAR", "category as written"),
            ("name", "VARCHAR", "event name"),
        ] + _PLACE + [
            ("ts_ns", "BIGINT", "timestamp, ns"),
            ("dur_ns", "BIGINT", "duration, ns"),
            ("args", "JSON", "args as written"),
            ("extra", "JSON", "other top-level fields when present"),
        ],
    },
    "ingest_issues": {
        "doc": "Everything the ingester skipped or repaired, one row per event or per kind of repair.",
        "columns": [
            ("event_id", "BIGINT", "index of the event in traceEvents (NULL for file-level issues)"),
            ("byte_offset", "BIGINT", "offset in the JSON text where the problem starts"),
            ("kind", "VARCHAR", "skipped_empty_event, skipped_malformed_event, truncated_tail, ..."),
            ("detail", "VARCHAR", "one-line explanation"),
        ],
    },
}

# Tables derived from the ones above by the SQL library (Perfetto computes a slice's depth and parent at
# import in the same way): the module that declares `@stores TABLE FROM VIEW` names the build view, which
# `tracesql ingest` runs on each trace once, storing its rows next to the trace's other tables, so that the
# call-tree and timeline views do not redo the sorting on every query. The build view stays defined, so a
# stored table can always be recomputed and compared.
DERIVED_TABLES: dict[str, dict] = {
    "cpu_nesting": {
        "doc": "One row per CPU duration event with its place in its thread's call stack.",
        "columns": [
            ("event_id", "BIGINT", "the event (as in events, which holds its pid, tid, cat, name, ts_ns and dur_ns)"),
            ("end_ns", "BIGINT", "its end, ns: ts_ns + dur_ns (a negative duration reads as 0)"),
            ("nest_end_ns", "BIGINT", "end used for nesting (end_ns, or earlier when clipped)"),
            ("clipped", "BOOLEAN", "nest_end_ns < end_ns"),
            ("parent_event_id", "BIGINT", "innermost enclosing event on the thread (NULL for a root)"),
            ("depth", "INTEGER", "number of enclosing events"),
            ("op_depth", "INTEGER", "number of enclosing cpu_ops"),
            ("module_depth", "INTEGER", "number of enclosing nn.Module frames"),
            ("annotation_depth", "INTEGER", "number of enclosing user_annotations"),
            ("step_depth", "INTEGER", "number of enclosing ProfilerStep#N ranges"),
            ("runtime_depth", "INTEGER", "number of enclosing cuda_runtime/cuda_driver calls"),
            ("thread_key", "BIGINT", "integer id of (pid, tid) within the trace"),
            ("nest_pos", "BIGINT", "position in the thread's nesting order (ancestors come first)"),
            ("has_correlation", "BOOLEAN", "the event carries a correlation id"),
        ],
    },
    "gpu_launch_links": {
        "doc": "One row per GPU event (row of kernels) and the runtime call that launched it.",
        "columns": [
            ("event_id", "BIGINT", "the GPU event (as in kernels)"),
            ("cat", "VARCHAR", "kernel, gpu_memcpy, gpu_memset, cuda_sync"),
            ("name", "VARCHAR", "GPU event name"),
            ("pid", "VARCHAR", "process id"),
            ("tid", "VARCHAR", "thread id"),
            ("device", "INTEGER", "GPU device"),
            ("stream", "BIGINT", "GPU stream"),
            ("ts_ns", "BIGINT", "GPU start, ns"),
            ("dur_ns", "BIGINT", "GPU duration, ns"),
            ("correlation", "BIGINT", "correlation id used for linking (own, else its ac2g flow's)"),
            ("launch_event_id", "BIGINT", "the runtime/driver call with that correlation (NULL: none)"),
            ("launch_name", "VARCHAR", "its name"),
            ("launch_cat", "VARCHAR", "its category"),
            ("launch_kind", "VARCHAR", "kernel, graph, memcpy, memset (from launches) or NULL"),
            ("launch_pid", "VARCHAR", "CPU process of the call"),
            ("launch_tid", "VARCHAR", "CPU thread of the call"),
            ("launch_ts_ns", "BIGINT", "start of the call, ns"),
            ("launch_dur_ns", "BIGINT", "duration of the call, ns"),
            ("link_via", "VARCHAR", "graph, ac2g, correlation, or NULL when not linked"),
            ("linked", "BOOLEAN", "has a launch (native rule)"),
        ],
    },
    "cpu_event_context": {
        "doc": "One row per cpu_op, nn.Module frame, user_annotation and correlated runtime call, with what "
               "encloses it.",
        "columns": [
            ("event_id", "BIGINT", "the event"),
            ("cat", "VARCHAR", "category"),
            ("name", "VARCHAR", "name"),
            ("ts_ns", "BIGINT", "start, ns"),
            ("dur_ns", "BIGINT", "duration, ns"),
            ("anchor_kind", "VARCHAR", "op, module, annotation or launch"),
            ("op_event_id", "BIGINT", "innermost enclosing cpu_op"),
            ("op_name", "VARCHAR", "its name"),
            ("top_op_event_id", "BIGINT", "outermost enclosing cpu_op (itself for a top-level op)"),
            ("top_op_name", "VARCHAR", "its name"),
            ("module_event_id", "BIGINT", "innermost enclosing nn.Module frame"),
            ("module_path", "VARCHAR", "nn.Module stack, outermost first, '/'-joined"),
            ("module_name", "VARCHAR", "innermost module name"),
            ("annotation_event_id", "BIGINT", "innermost enclosing user_annotation"),
            ("annotation_name", "VARCHAR", "its name"),
            ("step_event_id", "BIGINT", "enclosing ProfilerStep#N range"),
            ("step", "VARCHAR", "its name"),
            ("runtime_parent_event_id", "BIGINT", "innermost enclosing runtime/driver call (launches)"),
            ("op_depth", "INTEGER", "number of enclosing cpu_ops"),
            ("module_depth", "INTEGER", "number of enclosing nn.Module frames"),
            ("thread_key", "BIGINT", "as in cpu_nesting"),
            ("nest_pos", "BIGINT", "as in cpu_nesting"),
        ],
    },
    "graph_replay_nodes": {
        "doc": "One row per GPU event of a CUDA/HIP-graph launch, in the graph's node order.",
        "columns": [
            ("event_id", "BIGINT", "the GPU event (as in kernels)"),
            ("name", "VARCHAR", "GPU event name"),
            ("ts_ns", "BIGINT", "GPU start, ns"),
            ("dur_ns", "BIGINT", "GPU duration, ns"),
            ("graph_launch_event_id", "BIGINT", "the cudaGraphLaunch / hipGraphLaunch call"),
            ("graph_index", "BIGINT", "1-based rank of that launch among the trace's graph launches"),
            ("ordinal", "BIGINT", "1-based rank in the launch by GPU start"),
            ("n_events", "BIGINT", "GPU events of the launch"),
            ("node_id", "BIGINT", "args 'graph node id' (low 32 bits), NULL when absent"),
            ("graph_id", "BIGINT", "args 'graph id', else the high 32 bits of a packed node id"),
            ("node_tag", "VARCHAR", "args 'name' of a graphed event (PyTorch's graph annotations)"),
            ("pos", "BIGINT", "1-based rank in node order (node id when all have one, else GPU start)"),
            ("signature", "UBIGINT", "digest of the launch's event names in node order"),
        ],
    },
    "profiler_steps": {
        "doc": "One row per ProfilerStep#N range on the CPU.",
        "columns": [
            ("event_id", "BIGINT", "the range (as in events)"),
            ("cat", "VARCHAR", "user_annotation (cpu_op in PyTorch 1.8 traces)"),
            ("name", "VARCHAR", "'ProfilerStep#<N>'"),
            ("step_number", "BIGINT", "N (NULL when the suffix is not an integer)"),
            ("pid", "VARCHAR", "process id"),
            ("tid", "VARCHAR", "thread id"),
            ("ts_ns", "BIGINT", "start, ns"),
            ("dur_ns", "BIGINT", "duration, ns"),
            ("end_ns", "BIGINT", "ts_ns + dur_ns"),
        ],
    },
    "gpu_timeline_all": {
        "doc": "The GPU timeline of each trace: one row per device (and all devices pooled), for the whole trace "
               "and per ProfilerStep.",
        "columns": [
            ("pooled", "BOOLEAN", "the row pools all devices of the trace (device NULL)"),
            ("device", "INTEGER", "GPU device (NULL: pooled, or events without a device)"),
            ("step", "VARCHAR", "ProfilerStep#N (NULL: the whole trace)"),
            ("n_events", "BIGINT", "GPU events counted (cuda_sync waits excluded)"),
            ("first_start_ns", "BIGINT", "first GPU start, ns"),
            ("last_end_ns", "BIGINT", "last GPU end, ns"),
            ("span_ns", "BIGINT", "last_end_ns - first_start_ns"),
            ("compute_ns", "BIGINT", "time with computation, ns"),
            ("comm_ns", "BIGINT", "time with communication, ns"),
            ("comm_exposed_ns", "BIGINT", "communication time not overlapped by computation, ns"),
            ("memory_ns", "BIGINT", "time with memcpy/memset, ns"),
            ("memory_exposed_ns", "BIGINT", "memcpy/memset time overlapped by neither, ns"),
            ("busy_ns", "BIGINT", "time with any counted GPU event, ns"),
            ("idle_ns", "BIGINT", "span_ns - busy_ns"),
            ("compute_pct", "DOUBLE", "100 compute_ns / span_ns"),
            ("comm_pct", "DOUBLE", "100 comm_ns / span_ns"),
            ("comm_exposed_pct", "DOUBLE", "100 comm_exposed_ns / span_ns"),
            ("memory_pct", "DOUBLE", "100 memory_ns / span_ns"),
            ("memory_exposed_pct", "DOUBLE", "100 memory_exposed_ns / span_ns"),
            ("busy_pct", "DOUBLE", "100 busy_ns / span_ns"),
            ("idle_pct", "DOUBLE", "100 idle_ns / span_ns"),
            ("comm_overlap_pct", "DOUBLE", "100 (comm_ns - comm_exposed_ns) / comm_ns"),
            ("window_ns", "BIGINT", "profiler window (whole trace) or the ProfilerStep's CPU duration, ns"),
        ],
    },
}
TABLES.update(DERIVED_TABLES)

# Tables of the dataset as a whole (not per trace): the record of ingest runs, one JSON file per run in
# DATASET/runs/ (tracesql/ingest/runs.py), read by views of the same names.
DATASET_TABLES: dict[str, dict] = {
    "ingest_runs": {
        "doc": """One row per run of ``tracesql ingest`` (or ``tracesql.ingest``) on the dataset, written when the run
starts and rewritten when it ends, so that a scheduler can tell a finished run from one still going or killed.""",
        "columns": [
            ("run_id", "VARCHAR", "the run: UTC start time to the millisecond and a random suffix, e.g. "
             "20261124T201502.153Z-3fa1; sorts by start"),
            ("status", "VARCHAR", "'running', 'done' (every file ingested or already present), 'failed_files' (some "
             "files failed), 'interrupted' (Ctrl-C or SIGTERM), 'error' (the run stopped on an error of the "
             "dataset; see error), 'killed' (found running by a later run on the same host, its process gone)"),
            ("started_at", "TIMESTAMP", "when the run started (UTC)"),
            ("ended_at", "TIMESTAMP", "when it ended (UTC; NULL while running or when killed)"),
            ("duration_s", "DOUBLE", "wall seconds from start to end"),
            ("host", "VARCHAR", "host name of the machine that ran it"),
            ("pid", "BIGINT", "its process id"),
            ("command", "VARCHAR", "the command line (or 'tracesql.ingest' from Python)"),
            ("tracesql_version", "VARCHAR", "version of tracesql that ran it"),
            ("files_seen", "BIGINT", "trace files found in the paths given"),
            ("ingested", "BIGINT", "files ingested as new traces"),
            ("already_present", "BIGINT", "files skipped: their content is already a trace of the dataset"),
            ("failed", "BIGINT", "files that failed (ingest_run_files.error says why)"),
            ("json_bytes", "BIGINT", "bytes of JSON read from the ingested files"),
            ("error", "VARCHAR", "why the run stopped (status 'error' or 'interrupted'), else NULL"),
        ],
    },
    "ingest_run_files": {
        "doc": """One row per file of an ingest run, in the order the files were taken: what became of it. A trace's
run is the run whose row for it has status 'ingested'.""",
        "columns": [
            ("run_id", "VARCHAR", "the run (ingest_runs.run_id)"),
            ("path", "VARCHAR", "the file as given or found in a directory"),
            ("status", "VARCHAR", "'ingested', 'duplicate' (content already present) or 'failed'"),
            ("trace_id", "VARCHAR", "the trace it is or duplicates (NULL when failed)"),
            ("error", "VARCHAR", "the one-line error of a failed file"),
            ("json_bytes", "BIGINT", "bytes of JSON read (ingested files)"),
            ("seconds", "DOUBLE", "wall seconds spent on the file"),
        ],
    },
}

# Tables whose rows count toward "events read" (every element of traceEvents lands in exactly one).
EVENT_TABLES = ["events", "kernels", "correlations", "instants", "metadata", "counters",
                "gpu_user_annotations", "other_events"]


def columns(table: str) -> list[Column]:
    return (TABLES[table] if table in TABLES else DATASET_TABLES[table])["columns"]


def empty_select(table: str) -> str:
    """A SELECT with the table's schema and no rows (for datasets without traces)."""
    cols = ", ".join(f"NULL::{t} AS \"{c}\"" for c, t, _ in columns(table))
    if table in DATASET_TABLES:
        return f"SELECT {cols} WHERE false"
    return f"SELECT NULL::VARCHAR AS trace_id, {cols} WHERE false"


def empty_table_statements() -> list[str]:
    """The table views of a dataset (tracesql.store.dataset.table_statements) of no dataset: the same views with
    the same columns, and no rows."""
    return [f"CREATE OR REPLACE VIEW {t} AS {empty_select(t)};" for t in [*TABLES, *DATASET_TABLES]] + [
        f"CREATE OR REPLACE VIEW {v} AS SELECT NULL::VARCHAR AS filename, NULL::VARCHAR AS content WHERE false;"
        for v in ("_dataset_rule_files", "_dataset_twin_files")]


# The dataset's pairings of a graph replay with a twin trace (sql/tree/graph_twins.sql): one JSON file per pairing,
# DATASET/twins/<trace_id>.<twin_trace_id>.json, {"trace_id": ..., "twin_trace_id": ..., "kind": "eager"|"capture"},
# read by the view _dataset_twin_files
TWINS_DIR = "twins"
