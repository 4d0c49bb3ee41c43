-- tree/fwd_bwd — forward ops paired with the backward ops autograd ran for them.

-- op_fwd_bwd: one row per link between a forward op and the backward op autograd ran for it.
--   trace_id                    the trace
--   fwd_event_id, fwd_name      the forward cpu_op
--   bwd_event_id, bwd_name      the backward cpu_op
--   sequence_number             the forward op's 'Sequence number'
--   link_via                    'fwdbwd': a fwdbwd flow starts at the forward op and ends at the backward op
--                               (each end bound to the innermost cpu_op starting at the flow's timestamp on
--                               its thread, Kineto's binding point 'e');
--                               'sequence_number': the forward op (a cpu_op with 'Fwd thread id' 0 or none
--                               that is not itself a backward node) and the backward op
--                               `autograd::engine::evaluate_function: ...` share a sequence number (the
--                               pairing TraceLens uses); every op carrying the number is listed
-- @materialize tree
CREATE OR REPLACE VIEW op_fwd_bwd AS
WITH ops AS MATERIALIZED (
    SELECT trace_id, event_id, name, pid, tid, ts_ns, dur_ns, sequence_number, fwd_thread_id
    FROM events WHERE cat = 'cpu_op'
), by_seq AS (
    SELECT f.trace_id, f.event_id AS fwd_event_id, f.name AS fwd_name, b.event_id AS bwd_event_id,
           b.name AS bwd_name, f.sequence_number, 'sequence_number' AS link_via
    FROM ops f JOIN ops b ON b.trace_id = f.trace_id AND b.sequence_number = f.sequence_number
    WHERE f.sequence_number IS NOT NULL AND coalesce(f.fwd_thread_id, 0) = 0
      AND NOT starts_with(f.name, 'autograd::engine::evaluate_function: ')
      AND starts_with(b.name, 'autograd::engine::evaluate_function: ')
), fl AS (
    SELECT trace_id, flow_id, ph, pid, tid, ts_ns FROM correlations WHERE cat = 'fwdbwd'
), fwd_end AS (
    SELECT s.trace_id, s.flow_id, o.event_id, o.name, o.sequence_number
    FROM fl s JOIN ops o ON o.trace_id = s.trace_id AND o.pid = s.pid AND o.tid = s.tid AND o.ts_ns = s.ts_ns
    WHERE s.ph = 's'
    QUALIFY row_number() OVER (PARTITION BY s.trace_id, s.flow_id ORDER BY o.dur_ns, o.event_id DESC) = 1
), bwd_end AS (
    SELECT f.trace_id, f.flow_id, o.event_id, o.name
    FROM fl f JOIN ops o ON o.trace_id = f.trace_id AND o.pid = f.pid AND o.tid = f.tid AND o.ts_ns = f.ts_ns
    WHERE f.ph = 'f'
    QUALIFY row_number() OVER (PARTITION BY f.trace_id, f.flow_id ORDER BY o.dur_ns, o.event_id DESC) = 1
)
SELECT trace_id, fwd_event_id, fwd_name, bwd_event_id, bwd_name, sequence_number, link_via FROM by_seq
UNION ALL
SELECT a.trace_id, a.event_id, a.name, b.event_id, b.name, a.sequence_number, 'fwdbwd'
FROM fwd_end a JOIN bwd_end b USING (trace_id, flow_id);
