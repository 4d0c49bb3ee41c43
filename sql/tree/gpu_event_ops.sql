-- tree/gpu_event_ops — every GPU event with the call tree above its launch (op, module, annotation, step)
-- and the gpu_user_annotation around it on its stream.
--
-- @requires tree/context tree/links tree/graph_capture lib/intervals

-- Helper: the innermost gpu_user_annotation around each GPU event on its own stream (same pid/tid), by
-- _innermost_interval.
-- @materialize tree
CREATE OR REPLACE VIEW _tree_gpu_annotation AS
WITH g AS MATERIALIZED (
    SELECT trace_id, pid, tid, event_id, ts_ns, ts_ns + dur_ns AS end_ns, name
    FROM gpu_user_annotations WHERE ts_ns IS NOT NULL AND dur_ns > 0
), p AS (
    SELECT trace_id, pid, tid, event_id, ts_ns FROM kernels
    WHERE (trace_id, pid, tid) IN (SELECT trace_id, pid, tid FROM g)
)
SELECT x.trace_id, x.event_id, g.name AS gpu_annotation_name, g.event_id AS gpu_annotation_event_id
FROM _innermost_interval('g', 'p') x JOIN g ON g.trace_id = x.trace_id AND g.event_id = x.interval_event_id;

-- gpu_event_ops: one row per row of `kernels` (every GPU event, unlinked ones included) with the call
-- tree above it.
--   trace_id, event_id, name, cat, device, stream, ts_ns, dur_ns, correlation   the GPU event
--   launch_event_id, launch_name   the runtime/driver call that launched it (gpu_launch_links)
--   linked, link_via               as in gpu_launch_links
--   op_event_id, op_name           innermost cpu_op enclosing the launch (Python frames skipped)
--   top_op_event_id, top_op_name   outermost cpu_op enclosing the launch
--   module_event_id                innermost `nn.Module: ...` frame enclosing the launch
--   module_path, module_name       nn.Module stack as text (outermost first, '/'-joined), innermost name
--   annotation_event_id, annotation_name   innermost user_annotation enclosing the launch
--   gpu_annotation_name            innermost gpu_user_annotation on the GPU event's own stream
--   step                           name of the `ProfilerStep#N` annotation enclosing the launch, or NULL
--   capture_trace_id, capture_launch_event_id   for a GPU event replayed by a CUDA/HIP graph whose
--                                  capture trace is in the dataset: the call that recorded it
--                                  (graph_capture_links); NULL otherwise
--   capture_op_name, capture_module_path   innermost cpu_op / nn.Module path around that call
--   capture_root_ts_ns             start of the capture root around that call, ns (capture trace clock)
--   pid, tid, launch_pid, launch_tid, launch_ts_ns, launch_dur_ns, launch_kind   as in gpu_launch_links
--   capture_launch_ts_ns           start of capture_launch_event_id, ns (capture trace clock)
-- @materialize tree
CREATE OR REPLACE VIEW gpu_event_ops AS
WITH c AS MATERIALIZED (
    SELECT * FROM cpu_event_context WHERE anchor_kind = 'launch'
)
SELECT l.trace_id, l.event_id, l.name, l.cat, l.device, l.stream, l.ts_ns, l.dur_ns, l.correlation,
       l.launch_event_id, l.launch_name, l.linked, l.link_via,
       c.op_event_id, c.op_name, c.top_op_event_id, c.top_op_name,
       c.module_event_id, c.module_path, c.module_name,
       c.annotation_event_id, c.annotation_name, ga.gpu_annotation_name, c.step,
       gc.capture_trace_id, gc.capture_launch_event_id, cc.op_name AS capture_op_name,
       cc.module_path AS capture_module_path, gc.capture_root_ts_ns,
       l.pid, l.tid, l.launch_pid, l.launch_tid, l.launch_ts_ns, l.launch_dur_ns, l.launch_kind,
       cc.ts_ns AS capture_launch_ts_ns
FROM gpu_launch_links l
LEFT JOIN c ON c.trace_id = l.trace_id AND c.event_id = l.launch_event_id
LEFT JOIN _tree_gpu_annotation ga ON ga.trace_id = l.trace_id AND ga.event_id = l.event_id
LEFT JOIN graph_capture_links gc ON gc.trace_id = l.trace_id AND gc.event_id = l.event_id
LEFT JOIN c cc ON cc.trace_id = gc.capture_trace_id AND cc.event_id = gc.capture_launch_event_id;
