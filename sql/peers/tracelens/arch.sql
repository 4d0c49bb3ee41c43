-- peers/tracelens/arch — the GPU whose roofline TraceLens (0.1.0) adds to its perf-model sheets when it is given
-- one (its --gpu_arch_platform NAME or --gpu_arch_json_path FILE; here `report --style tracelens --arch NAME|FILE`),
-- and the roofline of one modelled op instance as TraceLens computes it.
--
-- Facts credited to TraceLens (AMD-AGI/TraceLens, MIT licence, commit 171dd74), read from its source; the code is
-- ours:
--   platforms  TraceLens/Agent/Analysis/utils/arch/MI300X.json and MI325X.json, the platforms it bundles: memory
--              bandwidth mem_bw_gbps (GB/s) and max_achievable_tflops per compute spec (TFLOP/s; measured
--              achievable figures, not the datasheet peaks of sql/perf/devices.csv).
--   a file     the same JSON object (mem_bw_gbps, max_achievable_tflops: {compute spec: TFLOP/s}, other keys
--              ignored), its text held by the connection in the variable tracesql_tl_arch_json.
--   roofline   TraceLens/TreePerf/tree_perf.py compute_perf_metrics with get_max_achievable_tflops: for an
--              instance whose compute spec has a peak P, with a bandwidth W, a byte count and GFLOPS > 0:
--              compute time = (GFLOPS · 1e9 / (P · 1e12)) · 1e6 µs, memory time = (bytes / (W · 1e9)) · 1e6 µs,
--              Roofline Time (µs) = the larger, Roofline Bound = COMPUTE_BOUND when compute time ≥ memory
--              time else MEMORY_BOUND, Pct Roofline = Roofline Time / Kernel Time · 100 (NaN without kernel
--              time). Any other instance has none of the three (the columns exist in a sheet when one of its
--              instances has them).
--

-- tl_arch_platforms: one row per (platform, compute spec) of TraceLens's bundled GPU platforms.
--   platform      the name --gpu_arch_platform takes ('MI300X', 'MI325X')
--   mem_bw_gbps   memory bandwidth, GB/s
--   compute_spec  TraceLens's compute spec: matrix_ or vector_ and a precision ('matrix_bf16')
--   max_tflops    the achievable peak for that spec, TFLOP/s
CREATE OR REPLACE VIEW tl_arch_platforms AS
SELECT platform, mem_bw_gbps::DOUBLE AS mem_bw_gbps, compute_spec, max_tflops::DOUBLE AS max_tflops
FROM (VALUES
    ('MI300X', 5300, 'matrix_fp16', 654), ('MI300X', 5300, 'matrix_bf16', 708),
    ('MI300X', 5300, 'matrix_fp32', 163), ('MI300X', 5300, 'matrix_fp64', 81),
    ('MI300X', 5300, 'matrix_fp8', 1273), ('MI300X', 5300, 'matrix_int8', 2600),
    ('MI300X', 5300, 'vector_fp16', 163), ('MI300X', 5300, 'vector_bf16', 163),
    ('MI300X', 5300, 'vector_fp32', 81), ('MI300X', 5300, 'vector_fp64', 40),
    ('MI325X', 6000, 'matrix_fp16', 794), ('MI325X', 6000, 'matrix_bf16', 843),
    ('MI325X', 6000, 'matrix_fp32', 194), ('MI325X', 6000, 'matrix_fp64', 97),
    ('MI325X', 6000, 'matrix_fp8', 1519), ('MI325X', 6000, 'matrix_int8', 3094),
    ('MI325X', 6000, 'vector_fp16', 194), ('MI325X', 6000, 'vector_bf16', 194),
    ('MI325X', 6000, 'vector_fp32', 97), ('MI325X', 6000, 'vector_fp64', 48)
) AS t(platform, mem_bw_gbps, compute_spec, max_tflops);

-- _tl_arch: the GPU of this report, one row per compute spec with a peak: mem_bw_gbps, compute_spec,
-- max_tflops (as tl_arch_platforms); the platform named by the variable tracesql_tl_arch, or the JSON text of
-- tracesql_tl_arch_json; no rows when neither is set (no roofline columns).
CREATE OR REPLACE VIEW _tl_arch AS
SELECT mem_bw_gbps, compute_spec, max_tflops FROM tl_arch_platforms
WHERE platform = getvariable('tracesql_tl_arch')
UNION ALL
SELECT TRY_CAST(j ->> 'mem_bw_gbps' AS DOUBLE), k, TRY_CAST(j -> 'max_achievable_tflops' ->> k AS DOUBLE)
FROM (SELECT getvariable('tracesql_tl_arch_json')::JSON AS j WHERE getvariable('tracesql_tl_arch_json') IS NOT NULL),
     unnest(json_keys(j -> 'max_achievable_tflops')) AS s(k);

-- _tl_roofline(gflops, bytes, kernel_time_us, peak, bw): one instance's roofline, as a struct: rt (Roofline
-- Time, µs), bound (COMPUTE_BOUND | MEMORY_BOUND), pct (Pct Roofline; NULL for NaN); peak and bw are _tl_arch's
-- max_tflops for the instance's compute spec and mem_bw_gbps (NULL without a GPU or a peak for the spec). NULL
-- when TraceLens gives the instance none (no peak, no bandwidth, no byte count, no FLOPs).
CREATE OR REPLACE MACRO _tl_roofline(gflops, bytes, kernel_time_us, peak, bw) AS
    CASE WHEN peak IS NOT NULL AND bw IS NOT NULL AND bytes IS NOT NULL AND gflops > 0
         THEN {'rt': greatest(gflops * 1e9 / (peak * 1e12) * 1e6, bytes::DOUBLE / (bw * 1e9) * 1e6),
               'bound': CASE WHEN gflops * 1e9 / (peak * 1e12) * 1e6 >= bytes::DOUBLE / (bw * 1e9) * 1e6
                             THEN 'COMPUTE_BOUND' ELSE 'MEMORY_BOUND' END,
               'pct': CASE WHEN kernel_time_us > 0
                           THEN greatest(gflops * 1e9 / (peak * 1e12) * 1e6, bytes::DOUBLE / (bw * 1e9) * 1e6)
                                / kernel_time_us * 100 END} END;
