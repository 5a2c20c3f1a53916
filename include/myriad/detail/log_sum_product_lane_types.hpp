#pragma once
// The CPU policy's log-sum-product steps in SIMD lanes: a kernel's entry point, width and
// instruction set (the bodies: detail/log_sum_product_lane_kernel.hpp, compiled once per
// instruction set in src/backend/simd/), and the library's choice among them.

#include <cstdint>
#include <vector>

#include "myriad/detail/lane_kernel.hpp"
#include "myriad/estimate/log_sum_product_element.hpp"

namespace myriad {

/// U[o] for the output elements of one lane group, o in [group · width, (group + 1) · width)
/// ∩ [0, step.out_size), written where LogSumProductStep writes them.
using LogSumProductLaneKernel = LaneKernel<void(const LogSumProductStep& step, std::int64_t group)>;

/// The kernel of every instruction set this machine runs, widest first; empty in a build
/// without SIMD lanes (no xsimd).
std::vector<LogSumProductLaneKernel> library_log_sum_product_lane_kernels();

/// The widest of them, chosen once; width 0 in a build without SIMD lanes.
LogSumProductLaneKernel library_log_sum_product_lane_kernel();

class CpuParallel;

/// Runs every lane group of `step` with `kernel` on the CPU policy's threads.
void run_log_sum_product_lanes(const CpuParallel& parallel, const LogSumProductLaneKernel& kernel,
                               const LogSumProductStep& step);

}  // namespace myriad
