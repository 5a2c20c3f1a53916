#pragma once
// What every per-chain kernel of myriad shares: the kernel declaration macro, the block sizes
// and the 64-bit grid-stride indexing (used by kernels/hmc_kernels.cuh, chmc_kernels.cuh and
// reduction.cuh).
//
// Kernels are templates instantiated per model; they get hidden visibility (MYRIAD_KERNEL) so
// that several shared objects can each instantiate the same kernel without the dynamic linker
// merging their registrations (the reason CUB marks its kernels hidden). Indices are 64-bit:
// dim × chains overflows 32 bits at a million chains.

#include <cstdint>

/// Declares a kernel: __global__ with hidden visibility (STYLE.md, "Layering").
#define MYRIAD_KERNEL __global__ __attribute__((visibility("hidden")))

namespace myriad::kernels {

/// Threads per block of the per-chain kernels. 128 rather than 256: every thread runs a whole
/// trajectory with its own registers, so blocks are few and heavy; smaller blocks balance the
/// last wave better and, with __launch_bounds__(128), let the compiler give models with
/// dual-number gradients up to 255 registers per thread instead of spilling.
constexpr int kChainBlockSize = 128;

/// Threads per block of the reductions (statistics, moments): a power of two for the tree.
constexpr int kReduceBlockSize = 256;

/// Global index of the calling thread and the stride of a grid-stride loop, in 64 bits.
__device__ __forceinline__ std::int64_t global_thread_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace myriad::kernels
