// The CPU policy's log-sum-product steps (backend/cpu_parallel.hpp): in SIMD lanes of output
// elements where the library has lanes and the policy asks for them, one element at a time
// otherwise.

#include "myriad/backend/cpu_parallel.hpp"

#include <algorithm>

#include "myriad/detail/log_sum_product_lane_types.hpp"

namespace myriad {

#if !defined(MYRIAD_SIMD_LANES)
std::vector<LogSumProductLaneKernel> library_log_sum_product_lane_kernels() { return {}; }
LogSumProductLaneKernel library_log_sum_product_lane_kernel() { return {}; }
#endif

void run_log_sum_product_lanes(const LogSumProductLaneKernel& kernel,
                               const LogSumProductStep& step) {
  const std::int64_t width = kernel.width;
  const std::int64_t groups = (step.out_size + width - 1) / width;
  const std::int64_t work = step.out_size * 2 * std::max<std::int64_t>(step.element.elim_size, 1);
#pragma omp parallel for schedule(static) if (groups > 1 && work >= CpuParallel::kParallelWork)
  for (std::int64_t g = 0; g < groups; ++g) kernel.group(step, g);
}

void run_log_sum_product(const CpuParallel& parallel, const LogSumProductStep& step) {
  if (step.out_size <= 0) return;
  if (parallel.simd_lanes()) {
    static const LogSumProductLaneKernel kernel = library_log_sum_product_lane_kernel();
    if (kernel.width > 0) return run_log_sum_product_lanes(kernel, step);
  }
  parallel.for_each(step.out_size, step, 2 * step.element.elim_size);
}

}  // namespace myriad
