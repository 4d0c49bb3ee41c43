-- peers/hta/launch_stats — HTA's CUDA kernel launch statistics.
--
-- @requires peers/hta/base

-- hta_cuda_kernel_launch_stats: HTA's launch statistics: one row per (launch, GPU event) pair joined on
-- correlation, for the calls HTA knows (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync,
-- cudaMemsetAsync; not cuLaunchKernelEx, graph launches or hip* calls: see launch_stats for those).
--   correlation; cpu_duration, gpu_duration  µs;  launch_delay  GPU start - (call start + call duration),
--   µs, clipped at 0
-- @output report-hta 4 cuda_kernel_launch_stats EXCLUDE rank
CREATE OR REPLACE VIEW hta_cuda_kernel_launch_stats AS
SELECT g.trace_id, g.rank, g.correlation, g.runtime_dur_us AS cpu_duration, g.dur_us AS gpu_duration,
       greatest(g.ts_us - g.ts_runtime_us - g.runtime_dur_us, 0.0) AS launch_delay
FROM _hta_gpu g
WHERE g.runtime_name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaMemcpyAsync', 'cudaMemsetAsync')
ORDER BY g.trace_id, g.ts_runtime_us, g.correlation, g.ts_us;
