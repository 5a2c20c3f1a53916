#pragma once
// Host-side CUDA resources shared by the backends (kernels/cuda_hmc_backend.cuh,
// cuda_chmc_backend.cuh): pinned host buffers for chunk streaming, non-blocking streams,
// ordering events, and the launch-size helpers. Device allocations are DeviceArray
// (backend/memory.hpp), which host-compiled code can own too.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "cuda_try.cuh"

namespace myriad::cuda_detail {

/// Owning page-locked host allocation (cudaMallocHost): the target of asynchronous copies.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t size) : size_(size) {
    if (size > 0)
      MYRIAD_CUDA_TRY(cudaMallocHost(reinterpret_cast<void**>(&data_), size * sizeof(T)));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~PinnedBuffer() { release(); }

  T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() noexcept {
    if (data_) cudaFreeHost(data_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Owning non-blocking stream: it does not synchronise with the legacy default stream.
class Stream {
 public:
  Stream() { MYRIAD_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t get() const { return stream_; }
  void synchronize() const { MYRIAD_CUDA_TRY(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

/// Owning event used for ordering only (no timing, which makes record/wait cheaper).
class Event {
 public:
  Event() { MYRIAD_CUDA_TRY(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (event_) cudaEventDestroy(event_);
  }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

/// n rounded up to a multiple of m.
inline std::int64_t round_up(std::int64_t n, std::int64_t m) { return (n + m - 1) / m * m; }

/// Blocks for a grid-stride kernel over n items: enough to cover n, at most one full wave of
/// resident blocks (more would only queue behind the first wave and add tail imbalance).
template <class Kernel>
int grid_size(Kernel kernel, int block_size, std::int64_t n, int sm_count) {
  int blocks_per_sm = 0;
  MYRIAD_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, block_size, 0));
  const std::int64_t wave = static_cast<std::int64_t>(sm_count) * std::max(blocks_per_sm, 1);
  const std::int64_t needed = (n + block_size - 1) / block_size;
  return static_cast<int>(std::max<std::int64_t>(1, std::min(needed, wave)));
}

}  // namespace myriad::cuda_detail
