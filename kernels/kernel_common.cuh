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
/// trajectory with its own registers, so blocks are few and heavy, and smaller blocks balance
/// the last wave better.
constexpr int kChainBlockSize = 128;

/// Launch bounds of the per-chain (and per-particle) kernels: at most `threads` per block and,
/// when MYRIAD_CHAIN_MIN_BLOCKS (CMake option of the same name) is above 0, that many resident
/// blocks per SM asked of ptxas. With no minimum, ptxas trades registers for occupancy by its
/// own rule and spills: at sm_90 it holds hmc_iterations_kernel to 72 registers and the
/// constrained-HMC kernels to 168, while a minimum of 1 lets them have 159–254 and spill
/// nothing (bench/results/kernel-resources-sm90.md). Which is faster is measured, not assumed:
/// the default stays ptxas's until a GPU run of both builds decides.
#ifndef MYRIAD_CHAIN_MIN_BLOCKS
#define MYRIAD_CHAIN_MIN_BLOCKS 0
#endif
#if MYRIAD_CHAIN_MIN_BLOCKS > 0
#define MYRIAD_CHAIN_LAUNCH_BOUNDS(threads) __launch_bounds__(threads, MYRIAD_CHAIN_MIN_BLOCKS)
#else
#define MYRIAD_CHAIN_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
#endif

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
