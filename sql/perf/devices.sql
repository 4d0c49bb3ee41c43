-- perf/devices — the GPUs' peak throughput and memory bandwidth, and the GPU each trace ran on.
--
-- The device table is data: sql/perf/devices.csv (shipped; one row per GPU model, each with the datasheet its
-- numbers come from) and, when given, a user spec file with the same header (`tracesql perf --arch FILE`,
-- `Dataset.perf(arch=FILE)`), whose text the connection holds in the variable tracesql_perf_spec. A user row
-- takes precedence over a shipped row of the same name or matching the same GPU. Columns:
--   gpu             the model's name (what --arch NAME names, case-blind)
--   name_pattern    an RE2 expression matched against the deviceProperties name ('NVIDIA H100 80GB HBM3')
--   fp64_tflops ... fp4_tflops, int8_tops   dense (no 2:4 sparsity) peak, 10¹² operations per second:
--                   fp64 (FP64 tensor/matrix peak where there is one), fp32 (FP32 without TF32: the vector peak
--                   on NVIDIA, the matrix peak on AMD Instinct), tf32, bf16, fp16, fp8, int8, fp4; empty where
--                   the GPU has no such mode
--   memory_tb_s     peak memory bandwidth, 10¹² bytes per second
--   source_url, note  the datasheet, and how its figure was read (dense = half the sparse figure)
-- The variable tracesql_perf_arch (`--arch NAME`) names the device for every trace instead of deviceProperties.
--
-- @requires lib/csv gpu/overview

-- _perf_device_lines: every data line of the shipped table and of the user spec, with its header's fields.
CREATE OR REPLACE VIEW _perf_device_lines AS
WITH files AS (
    SELECT 'shipped' AS origin, content FROM read_text('${SQL_DIR}/perf/devices.csv')
    UNION ALL
    SELECT 'user', getvariable('tracesql_perf_spec') WHERE getvariable('tracesql_perf_spec') IS NOT NULL
), split AS (
    SELECT origin, string_split(replace(content, chr(13), ''), chr(10)) AS lines FROM files
), numbered AS (
    SELECT origin, lines, unnest(range(2, len(lines) + 1)) AS line_no FROM split
)
SELECT origin, line_no, list_transform(_csv_fields(lines[1]), lambda h: lower(h)) AS header,
       _csv_fields(lines[line_no]) AS fields
FROM numbered
WHERE trim(lines[line_no]) <> '' AND NOT starts_with(ltrim(lines[line_no]), '#');

-- _perf_field(header, fields, name): the field of a parsed line under the header column `name` (NULL if empty).
CREATE OR REPLACE MACRO _perf_field(header, fields, name) AS nullif(fields[list_position(header, name)], '');

-- perf_devices: one row per GPU model of the device table (columns above), plus
--   origin          shipped | user
CREATE OR REPLACE VIEW perf_devices AS
SELECT _perf_field(header, fields, 'gpu') AS gpu, _perf_field(header, fields, 'name_pattern') AS name_pattern,
       TRY_CAST(_perf_field(header, fields, 'fp64_tflops') AS DOUBLE) AS fp64_tflops,
       TRY_CAST(_perf_field(header, fields, 'fp32_tflops') AS DOUBLE) AS fp32_tflops,
       TRY_CAST(_perf_field(header, fields, 'tf32_tflops') AS DOUBLE) AS tf32_tflops,
       TRY_CAST(_perf_field(header, fields, 'bf16_tflops') AS DOUBLE) AS bf16_tflops,
       TRY_CAST(_perf_field(header, fields, 'fp16_tflops') AS DOUBLE) AS fp16_tflops,
       TRY_CAST(_perf_field(header, fields, 'fp8_tflops') AS DOUBLE) AS fp8_tflops,
       TRY_CAST(_perf_field(header, fields, 'int8_tops') AS DOUBLE) AS int8_tops,
       TRY_CAST(_perf_field(header, fields, 'fp4_tflops') AS DOUBLE) AS fp4_tflops,
       TRY_CAST(_perf_field(header, fields, 'memory_tb_s') AS DOUBLE) AS memory_tb_s,
       _perf_field(header, fields, 'source_url') AS source_url, _perf_field(header, fields, 'note') AS note,
       origin
FROM _perf_device_lines
WHERE _perf_field(header, fields, 'gpu') IS NOT NULL;

-- perf_device: one row per trace: the device its roofline uses.
--   trace_id
--   gpu_name        the deviceProperties name of the device that ran the most GPU events (overview_gpus; ties
--                   by name), else (device ids that deviceProperties does not list, as in ROCm traces whose
--                   kernels run on device 2 of one visible GPU) the entry with the lowest id; NULL when the
--                   trace names no GPU
--   gpu             the device-table model used (perf_devices.gpu): the one --arch names, else the one whose
--                   name_pattern matches gpu_name (user rows first); NULL when none
--   origin          shipped | user (of that row)
--   fp64_tflops ... memory_tb_s   its peaks (perf_devices)
--   reason          why gpu is NULL (the roofline columns are then NULL too), else NULL
CREATE OR REPLACE VIEW perf_device AS
WITH g AS (
    SELECT trace_id, arg_max(gpu_name, n_gpu_events) AS gpu_name
    FROM (SELECT trace_id, gpu_name, sum(n_gpu_events) AS n_gpu_events FROM overview_gpus
          WHERE gpu_name IS NOT NULL AND gpu_name <> '' GROUP BY ALL ORDER BY gpu_name)
    GROUP BY trace_id
), p AS (  -- when the GPU events' device ids are not in deviceProperties: its first named entry
    SELECT trace_id, arg_min(gpu_name, device) AS gpu_name FROM _overview_device_props
    WHERE gpu_name IS NOT NULL AND gpu_name <> '' GROUP BY trace_id
), t AS (
    SELECT t.trace_id, coalesce(g.gpu_name, p.gpu_name) AS gpu_name
    FROM traces t LEFT JOIN g USING (trace_id) LEFT JOIN p USING (trace_id)
),
m AS (
    SELECT t.trace_id, d.*,
           row_number() OVER (PARTITION BY t.trace_id ORDER BY d.origin = 'user' DESC, d.gpu) AS rk
    FROM t JOIN perf_devices d
      ON CASE WHEN getvariable('tracesql_perf_arch') IS NOT NULL
              THEN lower(d.gpu) = lower(getvariable('tracesql_perf_arch'))
              ELSE t.gpu_name IS NOT NULL AND regexp_matches(t.gpu_name, d.name_pattern) END
)
SELECT t.trace_id, t.gpu_name, m.gpu, m.origin, m.fp64_tflops, m.fp32_tflops, m.tf32_tflops, m.bf16_tflops,
       m.fp16_tflops, m.fp8_tflops, m.int8_tops, m.fp4_tflops, m.memory_tb_s,
       CASE WHEN m.gpu IS NOT NULL THEN NULL
            WHEN getvariable('tracesql_perf_arch') IS NOT NULL
            THEN 'the device table has no GPU named ''' || getvariable('tracesql_perf_arch') || ''''
            WHEN t.gpu_name IS NULL THEN 'the trace names no GPU (no deviceProperties, or entries without a name); give --arch NAME or FILE'
            ELSE 'GPU ''' || t.gpu_name || ''' is not in the device table (sql/perf/devices.csv); give --arch NAME or FILE'
       END AS reason
FROM t LEFT JOIN m ON m.trace_id = t.trace_id AND m.rk = 1;
