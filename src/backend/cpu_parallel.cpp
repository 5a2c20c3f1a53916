// The CPU policy's log-sum-product steps (backend/cpu_parallel.hpp): in SIMD lanes of output
// elements where the library has lanes and the policy asks for them, one element at a time
// otherwise.

#include "myriad/backend/cpu_parallel.hpp"

#include "myriad/detail/log_sum_product_lane_types.hpp"

namespace myriad {

#if !defined(MYRIAD_SIMD_LANES)
std::vector<LogSumProductLaneKernel> library_log_sum_product_lane_kernels() { return {}; }
LogSumProductLaneKernel library_log_sum_product_lane_kernel() { return {}; }
#endif

void run_log_sum_product_lanes(const CpuParallel& parallel, const LogSumProductLaneKernel& kernel,
                               const LogSumProductStep& step) {
  const std::int64_t width = kernel.width;
  parallel.for_each((step.out_size + width - 1) / width,
                    [&](std::int64_t group) { kernel.run(step, group); },
                    width * 2 * step.element.elim_size);
}

void run_log_sum_product(const CpuParallel& parallel, const LogSumProductStep& step) {
  if (step.out_size <= 0) return;
  if (parallel.simd_lanes()) {
    const LogSumProductLaneKernel kernel = library_log_sum_product_lane_kernel();  // cached there
    if (kernel.width > 0) return run_log_sum_product_lanes(parallel, kernel, step);
  }
  parallel.for_each(step.out_size, step, 2 * step.element.elim_size);
}

}  // namespace myriad
