#pragma once
// The CUDA parallel policy of the element-wise engines (MP IS): the twin of
// backend/cpu_parallel.hpp with device arrays and a grid-stride kernel, so that the engine runs
// the same per-element functors on the GPU (DESIGN.md rule 1). Every launch and copy goes to
// the legacy default stream, so operations are ordered among themselves and with the
// synchronous copies that read results back.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_try.cuh"
#include "kernel_common.cuh"
#include "memory_pool_hold.cuh"
#include "myriad/backend/cpu_parallel.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/estimate/contraction_path.hpp"
#include "myriad/estimate/log_sum_product_element.hpp"

namespace myriad {

namespace kernels {

/// f(i) for i in [0, n): a grid-stride loop, 64-bit indices.
template <class F>
MYRIAD_KERNEL void for_each_kernel(std::int64_t n, F f) {
  for (std::int64_t i = global_thread_index(); i < n; i += grid_stride()) f(i);
}

/// *count += the number of i in [0, n) with f(i) true: one atomic per block after a
/// shared-memory sum, so the count is exact whatever the order.
template <class F>
MYRIAD_KERNEL void count_if_kernel(std::int64_t n, F f, unsigned long long* count) {
  __shared__ unsigned long long block_count;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  unsigned long long local = 0;
  for (std::int64_t i = global_thread_index(); i < n; i += grid_stride()) local += f(i) ? 1 : 0;
  if (local) atomicAdd(&block_count, local);
  __syncthreads();
  if (threadIdx.x == 0 && block_count) atomicAdd(count, block_count);
}

}  // namespace kernels

/// An owning device array whose bytes are counted by a MemoryTracker. Allocated and freed in
/// stream order on the legacy default stream (cudaMallocAsync from the device's default memory
/// pool, which CudaParallel keeps from returning memory to the driver): an engine allocates and
/// frees dozens of arrays per run, and cudaMalloc/cudaFree would synchronise the device each
/// time. Every launch and copy of the policy uses the same stream, so a freed block is reused
/// only after the work that read it.
template <class T>
class TrackedDeviceArray {
 public:
  TrackedDeviceArray() = default;
  TrackedDeviceArray(std::int64_t n, std::shared_ptr<MemoryTracker> tracker)
      : size_(n), tracker_(std::move(tracker)) {
    if (n > 0)
      MYRIAD_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_),
                                      static_cast<std::size_t>(n) * sizeof(T), cudaStreamLegacy));
    if (tracker_) tracker_->allocate(bytes());
  }
  TrackedDeviceArray(TrackedDeviceArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        tracker_(std::move(o.tracker_)) {}
  TrackedDeviceArray& operator=(TrackedDeviceArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      tracker_ = std::move(o.tracker_);
    }
    return *this;
  }
  TrackedDeviceArray(const TrackedDeviceArray&) = delete;
  TrackedDeviceArray& operator=(const TrackedDeviceArray&) = delete;
  ~TrackedDeviceArray() { release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::int64_t bytes() const { return size_ * static_cast<std::int64_t>(sizeof(T)); }
  void release() noexcept {
    if (tracker_) tracker_->release(bytes());
    tracker_.reset();
    // Never throws (a destructor path), nor leaves its failure for the next launch check.
    if (data_ && cudaFreeAsync(data_, cudaStreamLegacy) != cudaSuccess) cudaGetLastError();
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::int64_t size_ = 0;
  std::shared_ptr<MemoryTracker> tracker_;
};

class CudaParallel {
 public:
  template <class T>
  using Array = TrackedDeviceArray<T>;

  /// Threads per block of the element-wise kernels: elements are independent and light, so
  /// the usual 256.
  static constexpr int kBlockSize = 256;

  explicit CudaParallel(ContractionPath contraction = ContractionPath::automatic)
      : tracker_(std::make_shared<MemoryTracker>()), contraction_(contraction) {
    int device = 0;
    MYRIAD_CUDA_TRY(cudaGetDevice(&device));
    MYRIAD_CUDA_TRY(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
    // Keep freed blocks in the pool while the policy works (memory_pool_hold.cuh); the last copy
    // of the last policy gives them back and restores the pool's threshold.
    pool_hold_ = std::make_shared<cuda_detail::MemoryPoolHold>(device);
  }

  template <class T>
  Array<T> allocate(std::int64_t n) const {
    MYRIAD_EXPECTS(n >= 0, "allocate: negative size ", n);
    return Array<T>(n, tracker_);
  }

  /// `work` (the cost hint of the CPU policy) does not matter on the device.
  template <class F>
  void for_each(std::int64_t n, const F& f, std::int64_t /*work*/ = 1) const {
    if (n <= 0) return;
    kernels::for_each_kernel<F><<<grid(n), kBlockSize>>>(n, f);
    MYRIAD_CHECK_LAUNCH();
  }

  template <class F>
  std::int64_t count_if(std::int64_t n, const F& f) const {
    if (n <= 0) return 0;
    unsigned long long* count = counter_->data();
    MYRIAD_CUDA_TRY(cudaMemsetAsync(count, 0, sizeof(unsigned long long), cudaStreamLegacy));
    kernels::count_if_kernel<F><<<grid(n), kBlockSize>>>(n, f, count);
    MYRIAD_CHECK_LAUNCH();
    unsigned long long host = 0;
    MYRIAD_CUDA_TRY(cudaMemcpy(&host, count, sizeof host, cudaMemcpyDeviceToHost));
    return static_cast<std::int64_t>(host);
  }

  template <class T>
  void upload(Array<T>& destination, const T* source, std::int64_t n) const {
    if (n > 0)
      MYRIAD_CUDA_TRY(cudaMemcpy(destination.data(), source,
                                 static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyHostToDevice));
  }
  template <class T>
  void download(T* destination, const Array<T>& source, std::int64_t n) const {
    if (n > 0)
      MYRIAD_CUDA_TRY(cudaMemcpy(destination, source.data(),
                                 static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyDeviceToHost));
  }
  template <class T>
  std::vector<T> download(const Array<T>& source) const {
    std::vector<T> out(static_cast<std::size_t>(source.size()));
    download(out.data(), source, source.size());
    return out;
  }
  void synchronize() const { MYRIAD_CUDA_TRY(cudaDeviceSynchronize()); }

  const MemoryTracker& memory() const { return *tracker_; }
  MemoryTracker& memory() { return *tracker_; }
  /// How log-sum-product steps run (kernels/cuda_contraction.cuh).
  ContractionPath contraction() const { return contraction_; }
  int sm_count() const { return sm_count_; }

 private:
  /// Enough blocks to cover n, at most a few waves (the loop strides over the rest).
  int grid(std::int64_t n) const {
    const std::int64_t needed = (n + kBlockSize - 1) / kBlockSize;
    return static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(needed, 8ll * sm_count_)));
  }

  std::shared_ptr<MemoryTracker> tracker_;
  std::shared_ptr<cuda_detail::MemoryPoolHold> pool_hold_;
  /// count_if's device counter, allocated once per policy.
  std::shared_ptr<DeviceArray<unsigned long long>> counter_ =
      std::make_shared<DeviceArray<unsigned long long>>(1);
  ContractionPath contraction_ = ContractionPath::automatic;
  int sm_count_ = 1;
};

/// The CUDA policy's log-sum-product steps (defined in kernels/cuda_contraction.cu, documented
/// in kernels/cuda_contraction.cuh): declared with the policy so that every translation unit
/// that runs an engine on CudaParallel calls it, never the generic template (which would also
/// give two definitions of the engine's inline functions that differ between units).
void run_log_sum_product(const CudaParallel& parallel, const LogSumProductStep& step);

}  // namespace myriad
