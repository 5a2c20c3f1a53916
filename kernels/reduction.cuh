#pragma once
// Sums over chains on the device, shared by the backends (cuda_hmc_backend.cuh,
// cuda_chmc_backend.cuh): a shared-memory tree in a fixed order rather than atomics, so that even
// floating-point sums are the same bits for the same grid on every run, and the per-chain
// statistics (all integers) are exact for any grid.
//
// reduce_sum(n, load, ...) launches reduce_sum_kernel twice: once over the n terms load(i) with
// at most one wave of blocks, then with one block over the block sums, and copies the total
// back on the caller's stream.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <type_traits>

#include "cuda_buffers.cuh"
#include "cuda_try.cuh"
#include "kernel_common.cuh"
#include "myriad/core/hd.hpp"

namespace myriad::kernels {

/// Upper bound on the blocks of the first reduction pass (the second pass is one block): the
/// scratch of reduce_sum holds this many partial sums plus the total.
constexpr int kMaxReduceBlocks = 1024;

/// Sum of `value` over the block, valid in thread 0. Ends with a barrier, so a block may call
/// it repeatedly (once per dimension, say).
///
/// The partial sums live in raw shared storage in which each thread constructs its own slot:
/// a __shared__ array of Value itself would need Value to have a trivial default constructor,
/// and the per-chain statistics (IterationStats, mcmc/iteration_stats.hpp) zero their counters
/// with member initialisers (CUB's cub::Uninitialized does the same).
template <class Value, int BlockSize>
__device__ Value block_sum(Value value) {
  static_assert((BlockSize & (BlockSize - 1)) == 0, "block size must be a power of two");
  static_assert(
      std::is_trivially_copyable<Value>::value && std::is_trivially_destructible<Value>::value,
      "block_sum keeps its partial sums in raw shared storage");
  __shared__ __align__(alignof(Value)) unsigned char storage[BlockSize * sizeof(Value)];
  Value* partial = reinterpret_cast<Value*>(storage);
  new (partial + threadIdx.x) Value(value);
  __syncthreads();
  for (int half = BlockSize / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const Value total = partial[0];
  __syncthreads();
  return total;
}

/// 1 for a chain that found no initial point (initialized[c] == 0), else 0.
struct LoadInitializationFailure {
  const std::uint8_t* initialized;
  __device__ std::int64_t operator()(std::int64_t c) const { return initialized[c] ? 0 : 1; }
};

/// Reads entry i of an array of partial sums (the second pass of reduce_sum).
template <class Value>
struct LoadPartial {
  const Value* partials;
  __device__ Value operator()(std::int64_t i) const { return partials[i]; }
};

/// block_sums[blockIdx.x] = Σ load(i) over the indices i < n that this block's grid-stride loop
/// visits. Launched twice by reduce_sum: over the terms, then with one block over the partials.
template <class Value, class Load>
MYRIAD_KERNEL void __launch_bounds__(kReduceBlockSize)
    reduce_sum_kernel(std::int64_t n, Load load, Value* block_sums) {
  Value sum{};
  for (std::int64_t i = global_thread_index(); i < n; i += grid_stride()) sum += load(i);
  sum = block_sum<Value, kReduceBlockSize>(sum);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = sum;
}

}  // namespace myriad::kernels

namespace myriad::cuda_detail {

/// Σ load(i) over i < n, by two launches of reduce_sum_kernel (blocks, then one block over the
/// block sums) on `stream`; waits for the result. `scratch` holds kMaxReduceBlocks + 1 Values.
template <class Value, class Load>
Value reduce_sum(std::int64_t n, Load load, Value* scratch, int sm_count, cudaStream_t stream) {
  const int blocks = std::min(
      grid_size(kernels::reduce_sum_kernel<Value, Load>, kernels::kReduceBlockSize, n, sm_count),
      kernels::kMaxReduceBlocks);
  kernels::reduce_sum_kernel<Value, Load>
      <<<blocks, kernels::kReduceBlockSize, 0, stream>>>(n, load, scratch);
  MYRIAD_CHECK_LAUNCH();
  kernels::reduce_sum_kernel<Value, kernels::LoadPartial<Value>>
      <<<1, kernels::kReduceBlockSize, 0, stream>>>(blocks, kernels::LoadPartial<Value>{scratch},
                                                    scratch + blocks);
  MYRIAD_CHECK_LAUNCH();
  Value total{};
  MYRIAD_CUDA_TRY(
      cudaMemcpyAsync(&total, scratch + blocks, sizeof(Value), cudaMemcpyDeviceToHost, stream));
  MYRIAD_CUDA_TRY(cudaStreamSynchronize(stream));
  return total;
}

}  // namespace myriad::cuda_detail
