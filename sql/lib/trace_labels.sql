-- lib/trace_labels — the name a person reads for each trace: its file name, made unique within the dataset.

-- trace_labels: one row per trace.
--   trace_id, file_name, rank (as in traces)
--   label        the file name; when several traces of the dataset share it, the file name and '@rank<N>'
--                (when that tells them apart) or '@' and the first 8 digits of the trace_id
CREATE OR REPLACE VIEW trace_labels AS
SELECT trace_id, file_name, rank,
       CASE WHEN count(*) OVER (PARTITION BY file_name) = 1 THEN file_name
            WHEN rank IS NOT NULL AND count(*) OVER (PARTITION BY file_name, rank) = 1
                THEN file_name || '@rank' || rank::VARCHAR
            ELSE file_name || '@' || left(trace_id, 8) END AS label
FROM traces;
