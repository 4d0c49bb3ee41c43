-- export/track_order — the exported Chrome trace events (export/chrome_json, its overlays included) in the order a
-- writer of Perfetto's protobuf format (TrackEvent) takes them: the metadata events first, then track by track
-- (pid, tid) in time order, each with the fields that order them read back from its text.
--
-- @requires export/chrome_json

-- export_track_order(doc): one row per event of the table doc, the exported document's events: its columns part
-- (0 for export_chrome_events, 1 for export_chrome_overlays), ordinal, event_id and event_json as there.
--   ph            the phase ('X', 'i', 's', 'f', 'C', 'M', ...)
--   pid, tid      as written in the document (text; NULL when absent)
--   ts_ns, dur_ns the event's start and duration in ns, read exactly from the document's µs (NULL when absent)
--   kind_order    where the event goes among the events of its track at one time: 0 an end ('E'), 1 a slice's
--                 start ('X', 'B'), 2 any other (instants, flow points and counters bind to the slices open then)
--   seq           its place in the document (export_chrome_events in document order, then the overlays)
--   overlay       the event comes from an overlay
--   event_json    the event's text
-- A writer orders them by: ph <> 'M', pid, tid, ts_ns, kind_order, dur_ns DESC (the outer slice first), seq.
CREATE OR REPLACE MACRO export_track_order(doc) AS TABLE
WITH j AS (
    SELECT *, row_number() OVER (ORDER BY part, ordinal, event_id NULLS LAST, event_json) AS seq,
           json_extract_string(event_json, ['ph', 'pid', 'tid', 'ts', 'dur']) AS f
    FROM query_table(doc)
)
SELECT f[1] AS ph, f[2] AS pid, f[3] AS tid,
       round(f[4]::DECIMAL(38, 3) * 1000)::BIGINT AS ts_ns, round(f[5]::DECIMAL(38, 3) * 1000)::BIGINT AS dur_ns,
       CASE f[1] WHEN 'E' THEN 0 WHEN 'X' THEN 1 WHEN 'B' THEN 1 ELSE 2 END AS kind_order, seq,
       part = 1 AS overlay, event_json
FROM j;
