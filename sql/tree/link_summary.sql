-- tree/link_summary — per trace, how much of its GPU work has a launch in the trace.
--
-- @requires tree/links tree/graph_capture

-- gpu_link_summary: one row per trace: how much of its GPU work has a launch in the trace.
--   trace_id                 the trace (every trace, CPU-only ones with zeros)
--   gpu_events               rows of `kernels` (kernel, gpu_memcpy, gpu_memset, cuda_sync)
--   linked_events            of those, linked to a runtime call (native rule)
--   unlinked_events          not linked: kept everywhere, flagged linked = false
--   unlinked_dur_ns          Σ dur_ns of the unlinked events
--   graph_replay_events      linked to a graph launch
--   capture_merged_events    graph replay events matched to a capture trace (graph_capture_links)
-- @materialize tree
CREATE OR REPLACE VIEW gpu_link_summary AS
WITH l AS (
    SELECT trace_id, count(*) AS gpu_events, count(*) FILTER (WHERE linked) AS linked_events,
           count(*) FILTER (WHERE NOT linked) AS unlinked_events,
           coalesce(sum(dur_ns) FILTER (WHERE NOT linked), 0) AS unlinked_dur_ns,
           count(*) FILTER (WHERE link_via = 'graph') AS graph_replay_events
    FROM gpu_launch_links GROUP BY trace_id
), c AS (
    SELECT trace_id, count(*) AS capture_merged_events FROM graph_capture_links GROUP BY trace_id
)
SELECT t.trace_id, coalesce(l.gpu_events, 0) AS gpu_events, coalesce(l.linked_events, 0) AS linked_events,
       coalesce(l.unlinked_events, 0) AS unlinked_events, coalesce(l.unlinked_dur_ns, 0)::BIGINT AS unlinked_dur_ns,
       coalesce(l.graph_replay_events, 0) AS graph_replay_events,
       coalesce(c.capture_merged_events, 0) AS capture_merged_events
FROM traces t LEFT JOIN l USING (trace_id) LEFT JOIN c USING (trace_id);
