#pragma once
// cuda_detail::MemoryPoolHold — keeps freed blocks in a device's default memory pool while
// work that allocates in stream order is under way, and leaves the pool as it found it.
//
// The default pool's release threshold is 0: every synchronisation returns its free blocks to
// the driver, which makes the next cudaMallocAsync as slow as cudaMalloc. The MP IS policy
// (cuda_parallel.cuh) allocates its tensors in stream order run after run, so while it lives the
// threshold is raised to "keep everything". The pool and its threshold belong to the whole
// process, though, and the user's own stream-ordered allocations share them. So holds are
// counted per pool: the first hold saves the threshold and raises it; the last one lets the
// pending stream-ordered frees run, gives the free blocks back (pooled memory counts as used for
// cudaMalloc and cudaMemGetInfo, so kept past a run it would shrink the next run's budget and
// every other allocation's room) and restores the saved threshold.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "cuda_try.cuh"

namespace myriad::cuda_detail {

class MemoryPoolHold {
 public:
  /// Holds the default pool of `device`. Throws myriad::cuda_error if the pool cannot be read or
  /// its threshold set (and then holds nothing).
  explicit MemoryPoolHold(int device) {
    MYRIAD_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool_, device));
    const std::lock_guard<std::mutex> lock(mutex());
    auto it = holds().find(pool_);
    if (it == holds().end()) {
      std::uint64_t previous = 0, keep = UINT64_MAX;
      MYRIAD_CUDA_TRY(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &previous));
      MYRIAD_CUDA_TRY(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
      it = holds().emplace(pool_, Hold{0, previous}).first;
    }
    ++it->second.holders;
  }

  ~MemoryPoolHold() {  // never throws: a destructor path
    const std::lock_guard<std::mutex> lock(mutex());
    const auto it = holds().find(pool_);
    if (it == holds().end() || --it->second.holders > 0) return;
    const bool trimmed = cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess &&
                         cudaMemPoolTrimTo(pool_, 0) == cudaSuccess;
    std::uint64_t previous = it->second.previous_threshold;
    const cudaError_t restored =
        cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &previous);
    // A failure here is not the next launch's error (cuda_try.cuh).
    if (!trimmed || restored != cudaSuccess) cudaGetLastError();
    holds().erase(it);
  }

  MemoryPoolHold(const MemoryPoolHold&) = delete;
  MemoryPoolHold& operator=(const MemoryPoolHold&) = delete;

 private:
  struct Hold {
    int holders;
    std::uint64_t previous_threshold;  ///< the threshold before the first hold
  };
  // Function-local statics of inline functions: one registry for the whole program. Never
  // destroyed, so that a hold in a static object (a benchmark's cached policies) may end after
  // the registry's own static lifetime would have.
  static std::mutex& mutex() {
    static auto* m = new std::mutex;
    return *m;
  }
  static std::map<cudaMemPool_t, Hold>& holds() {
    static auto* h = new std::map<cudaMemPool_t, Hold>;
    return *h;
  }

  cudaMemPool_t pool_ = nullptr;
};

}  // namespace myriad::cuda_detail
