-- lib/keys — integer keys for traces and events, so that windows, groupings and joins per (trace, event)
-- run on one BIGINT instead of on (trace_id text, event_id).

-- Helper: an integer key per trace (1, 2, ... in trace_id order). _tree_key(trace_key, event_id) packs it
-- with an event_id into one BIGINT that names an event of the dataset: the windows and groupings per
-- (trace, event) below run on that one integer instead of on (trace_id text, event_id), which DuckDB
-- sorts and hashes several times faster. Exact while event_id < 2^40 (an event_id is the event's position
-- in its file) and the dataset has fewer than 2^23 traces.
-- @materialize tree
CREATE OR REPLACE VIEW _tree_trace_keys AS
SELECT trace_id, row_number() OVER (ORDER BY trace_id) AS trace_key FROM traces;

CREATE OR REPLACE MACRO _tree_key(trace_key, event_id) AS (trace_key::BIGINT << 40) | event_id;
