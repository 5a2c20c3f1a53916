#pragma once
// Host-side CUDA resources shared by the backends (kernels/cuda_hmc_backend.cuh,
// cuda_chmc_backend.cuh, draw_chunks.cuh): pinned host buffers, non-blocking streams,
// ordering events, and the launch-size helpers. Device allocations are DeviceArray
// (core/device_memory.hpp), which host-compiled code can own too.

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

/// An owning handle of a CUDA runtime or library object (a stream, an event, a cuBLAS context):
/// not copyable, destroyed by `destroy` with its status ignored (a destructor cannot throw, and
/// the object is gone either way). Derived classes create the object.
template <class Handle, auto destroy>
class OwnedHandle {
 public:
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;
  ~OwnedHandle() {
    if (handle_) destroy(handle_);
  }
  Handle get() const { return handle_; }

 protected:
  OwnedHandle() = default;
  Handle handle_ = nullptr;
};

/// Owning non-blocking stream: it does not synchronise with the legacy default stream.
class Stream : public OwnedHandle<cudaStream_t, &cudaStreamDestroy> {
 public:
  Stream() { MYRIAD_CUDA_TRY(cudaStreamCreateWithFlags(&handle_, cudaStreamNonBlocking)); }
  void synchronize() const { MYRIAD_CUDA_TRY(cudaStreamSynchronize(handle_)); }
};

/// Owning event used for ordering only (no timing, which makes record/wait cheaper).
class Event : public OwnedHandle<cudaEvent_t, &cudaEventDestroy> {
 public:
  Event() { MYRIAD_CUDA_TRY(cudaEventCreateWithFlags(&handle_, cudaEventDisableTiming)); }
};

/// n rounded up to a multiple of m.
inline std::int64_t round_up(std::int64_t n, std::int64_t m) { return (n + m - 1) / m * m; }

/// Blocks of `block_size` threads of `kernel` resident on the whole device at once: its
/// occupancy (registers and shared memory permitting) times the SMs, at least one per SM.
template <class Kernel>
std::int64_t resident_blocks(Kernel kernel, int block_size, int sm_count) {
  int blocks_per_sm = 0;
  MYRIAD_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, block_size, 0));
  return static_cast<std::int64_t>(sm_count) * std::max(blocks_per_sm, 1);
}

/// Blocks for a grid-stride kernel over n items: enough to cover n, at most one full wave of
/// resident blocks (more would only queue behind the first wave and add tail imbalance).
template <class Kernel>
int grid_size(Kernel kernel, int block_size, std::int64_t n, int sm_count) {
  const std::int64_t wave = resident_blocks(kernel, block_size, sm_count);
  const std::int64_t needed = (n + block_size - 1) / block_size;
  return static_cast<int>(std::max<std::int64_t>(1, std::min(needed, wave)));
}

/// Copies `rows` rows of `row_bytes` bytes, `source_pitch` bytes apart, to rows `destination_pitch`
/// apart (`kind`: device to host or host to device), on `stream` (which the caller synchronises).
/// One cudaMemcpy2DAsync while both pitches are within the device's limit (cudaDevAttrMaxPitch,
/// 2^31 − 1 bytes on current GPUs: a row of 2^28 doubles), else a copy per row.
inline void copy_rows(void* destination, std::size_t destination_pitch, const void* source,
                      std::size_t source_pitch, std::size_t row_bytes, std::size_t rows,
                      cudaMemcpyKind kind, cudaStream_t stream) {
  int device = 0, max_pitch = 0;
  MYRIAD_CUDA_TRY(cudaGetDevice(&device));
  MYRIAD_CUDA_TRY(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device));
  const auto limit = static_cast<std::size_t>(max_pitch);
  if (destination_pitch <= limit && source_pitch <= limit) {
    MYRIAD_CUDA_TRY(cudaMemcpy2DAsync(destination, destination_pitch, source, source_pitch,
                                      row_bytes, rows, kind, stream));
    return;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    MYRIAD_CUDA_TRY(cudaMemcpyAsync(static_cast<char*>(destination) + r * destination_pitch,
                                    static_cast<const char*>(source) + r * source_pitch, row_bytes,
                                    kind, stream));
  }
}

/// copy_rows from device memory to host memory.
inline void copy_rows_to_host(void* destination, std::size_t destination_pitch, const void* source,
                              std::size_t source_pitch, std::size_t row_bytes, std::size_t rows,
                              cudaStream_t stream) {
  copy_rows(destination, destination_pitch, source, source_pitch, row_bytes, rows,
            cudaMemcpyDeviceToHost, stream);
}

}  // namespace myriad::cuda_detail
