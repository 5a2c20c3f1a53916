// cuda_detail::MemoryPoolHold (kernels/memory_pool_hold.cuh): while any hold lives, the device's
// default pool keeps its free blocks; the last hold restores the threshold it found, whatever
// order the holds go in. Skips without a device; the suite exists only in builds with CUDA.

#if defined(MYRIAD_HAS_CUDA)

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "myriad/backend/device.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/kernels/memory_pool_hold.cuh"

namespace myriad {
namespace {

std::uint64_t release_threshold(cudaMemPool_t pool) {
  std::uint64_t value = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value), cudaSuccess);
  return value;
}

void set_release_threshold(cudaMemPool_t pool, std::uint64_t value) {
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value), cudaSuccess);
}

/// The current device and its default memory pool.
struct CurrentPool {
  CurrentPool() {
    EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
    EXPECT_EQ(cudaDeviceGetDefaultMemPool(&pool, device), cudaSuccess);
  }
  int device = 0;
  cudaMemPool_t pool = nullptr;
};

TEST(CudaMemoryPoolHold, KeepsBlocksWhileHeldAndRestoresTheThresholdAfterTheLastHold) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const CurrentPool current;
  const int device = current.device;
  const cudaMemPool_t pool = current.pool;
  const std::uint64_t original = release_threshold(pool);
  constexpr std::uint64_t kUsers = 12345;  // a threshold the program set for itself
  set_release_threshold(pool, kUsers);
  {
    auto first = std::make_unique<cuda_detail::MemoryPoolHold>(device);
    EXPECT_EQ(release_threshold(pool), UINT64_MAX);
    auto second = std::make_unique<cuda_detail::MemoryPoolHold>(device);
    first.reset();  // the first hold goes first: the second still holds
    EXPECT_EQ(release_threshold(pool), UINT64_MAX);
    second.reset();
    EXPECT_EQ(release_threshold(pool), kUsers);
  }
  set_release_threshold(pool, original);
}

// hold_device_memory_pool (core/device_memory.hpp), the handle that run/mpis.hpp keeps across an
// MP IS run's batches, is such a hold on the current device, for as long as a copy lives.
TEST(CudaMemoryPoolHold, TheLibrarysHandleHoldsTheCurrentDevicesPoolWhileACopyLives) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const cudaMemPool_t pool = CurrentPool().pool;
  const std::uint64_t before = release_threshold(pool);
  ASSERT_NE(before, UINT64_MAX) << "an earlier test left the pool held";
  std::shared_ptr<void> hold = hold_device_memory_pool();
  std::shared_ptr<void> copy = hold;
  hold.reset();
  EXPECT_EQ(release_threshold(pool), UINT64_MAX);
  copy.reset();
  EXPECT_EQ(release_threshold(pool), before);
}

}  // namespace
}  // namespace myriad

#endif  // MYRIAD_HAS_CUDA
