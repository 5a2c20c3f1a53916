// The Boltzmann machine's exact moments on a GPU (models/boltzmann_enumeration.hpp): one thread
// per block of kBoltzmannGpuLowUnits low units, running the CPU's block body
// (models/boltzmann_block.hpp) and writing the block's sums [value][block] (coalesced: a warp's
// threads write consecutive blocks); the host then merges the blocks exactly as the CPU path
// does (boltzmann_moments_from_blocks). At n = 30 the kernel does the 2^30 states' 7.5 × 10^10
// multiply-adds; the host's merge is 2^20 blocks × n² / 2.
//
// Every thread of a warp runs the same Gray-code sequence over its own high units, so the warp
// stays converged; the scratch arrays (s, the fields, the sums) are per-thread local memory of
// fixed size.

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "cuda_try.cuh"
#include "kernel_common.cuh"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/models/boltzmann_block.hpp"
#include "myriad/models/boltzmann_enumeration.hpp"

namespace myriad::models {

namespace {

constexpr int kLow = kBoltzmannGpuLowUnits;
constexpr int kMaxUnits = 32;

}  // namespace

MYRIAD_KERNEL void enumerate_blocks_kernel(const double* w, const double* b, int n,
                                           std::int64_t blocks, double* sums) {
  double s[kMaxUnits], field[kLow], low_first[kLow], low_second[kLow * (kLow + 1) / 2];
  for (std::int64_t high = kernels::global_thread_index(); high < blocks;
       high += kernels::grid_stride()) {
    const BoltzmannBlockTotals totals =
        enumerate_boltzmann_block(w, b, n, kLow, high, s, field, low_first, low_second);
    sums[high] = totals.bound;
    sums[blocks + high] = totals.total;
    for (int j = 0; j < kLow; ++j) sums[(2 + j) * blocks + high] = low_first[j];
    for (int q = 0; q < kLow * (kLow + 1) / 2; ++q)
      sums[(2 + kLow + q) * blocks + high] = low_second[q];
  }
}

BoltzmannExactMoments boltzmann_exact_moments_cuda(const std::vector<double>& w,
                                                   const std::vector<double>& b) {
  const int n = static_cast<int>(b.size());
  MYRIAD_EXPECTS(n > kLow && n <= kMaxUnits, "boltzmann enumeration on a GPU: units must lie in (",
                 kLow, ", ", kMaxUnits, "], got ", n, " (enumerate on the CPU)");
  check_boltzmann_machine(w, b);  // before the kernel reads them
  const std::int64_t blocks = std::int64_t{1} << (n - kLow);
  const DeviceArray<double> device_w(w), device_b(b);
  DeviceArray<double> sums(static_cast<std::size_t>(blocks) * boltzmann_block_sum_count(kLow));
  constexpr int kThreads = 128;
  const auto grid = static_cast<unsigned>((blocks + kThreads - 1) / kThreads);
  enumerate_blocks_kernel<<<grid, kThreads>>>(device_w.data(), device_b.data(), n, blocks,
                                              sums.data());
  MYRIAD_CHECK_LAUNCH();
  return boltzmann_moments_from_blocks(w, b, kLow, sums.download());
}

}  // namespace myriad::models
