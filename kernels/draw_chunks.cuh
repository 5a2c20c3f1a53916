#pragma once
// Recorded draws streamed from the device to a DrawSink in chunks, for the HMC and
// constrained-HMC CUDA backends. Kernels write a chunk's draws into one of two device buffers on
// the backend's compute stream; a copy stream moves them into one of two pinned host buffers,
// so that chunk k + 1 computes while chunk k is copied and handed to the sink:
//
//   compute: | chunk 0 | chunk 1 | chunk 2 | ...
//   copy:              | copy 0  | copy 1  | ...
//   host:                        | sink 0  | sink 1 | ...
//
// Device memory: the two chunk buffers of chunk_iterations × quantities × chains values; it does
// not grow with the number of draws.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cuda_buffers.cuh"
#include "cuda_try.cuh"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/device_memory.hpp"

namespace myriad::cuda_detail {

/// DrawChunks::run's check_fits for a backend without a free-memory check of its own: a failed
/// allocation is a cuda_error, as in its constructor.
inline constexpr auto kNoFitCheck = [](std::int64_t) {};

template <class T>
class DrawChunks {
 public:
  DrawChunks() = default;
  DrawChunks(const DrawChunks&) = delete;
  DrawChunks& operator=(const DrawChunks&) = delete;
  /// Waits for copies in flight into the pinned buffers before they are freed. The owner waits
  /// for its compute stream (the kernels writing the device buffers) in its own destructor.
  ~DrawChunks() { cudaStreamSynchronize(copy_.get()); }

  /// Iterations per chunk for a run of num_iterations when chunk_iterations were asked for
  /// (≤ 0 or more than the run: the whole run in one chunk).
  static int chunk_size(int chunk_iterations, int num_iterations) {
    return chunk_iterations <= 0 || chunk_iterations > num_iterations ? std::max(num_iterations, 1)
                                                                      : chunk_iterations;
  }

  /// Grows (never shrinks) the two device and two pinned buffers to `values` each, once
  /// `compute` has passed the work that may still write them. The old buffers are freed first;
  /// check_fits(bytes) sees the device bytes of the new ones before they are allocated (and
  /// throws when they do not fit).
  template <class CheckFits>
  void reserve(std::size_t values, cudaStream_t compute, CheckFits check_fits) {
    if (device_[0].size() >= values) return;
    MYRIAD_CUDA_TRY(cudaStreamSynchronize(compute));
    copy_.synchronize();
    for (int b = 0; b < 2; ++b) {
      device_[b] = DeviceArray<T>();
      host_[b] = PinnedBuffer<T>();
    }
    check_fits(static_cast<std::int64_t>(2 * values * sizeof(T)));
    for (int b = 0; b < 2; ++b) {
      device_[b] = DeviceArray<T>(values);
      host_[b] = PinnedBuffer<T>(values);
    }
  }

  /// Runs num_iterations in chunks of chunk_size(chunk_iterations, num_iterations) iterations,
  /// with a sink the buffers first reserved for a chunk's values (check_fits as in reserve, or
  /// kNoFitCheck). launch(done, n, recorded) enqueues iterations done … done + n − 1 on
  /// `compute`, recording into `recorded`: null without a sink, else a device buffer of
  /// n × values_per_iteration values that is copied out and handed to
  /// sink->consume(…, first_draw + done, n) in order. Returns when the sink has every chunk; the
  /// compute stream may still be running the last chunk's other work.
  template <class CheckFits, class Launch>
  void run(cudaStream_t compute, int num_iterations, int chunk_iterations,
           std::int64_t values_per_iteration, DrawSink<T>* sink, std::int64_t first_draw,
           CheckFits check_fits, Launch launch) {
    const int chunk = chunk_size(chunk_iterations, num_iterations);
    if (sink != nullptr)
      reserve(static_cast<std::size_t>(chunk * values_per_iteration), compute, check_fits);
    // The chunk whose copy is in flight and not yet handed to the sink.
    struct Pending {
      int buffer;
      int done;
      int n;
    };
    bool has_pending = false;
    Pending pending{};
    const auto deliver = [&](const Pending& p) {
      MYRIAD_CUDA_TRY(cudaEventSynchronize(copied_[p.buffer].get()));
      sink->consume(host_[p.buffer].data(), first_draw + p.done, p.n);
    };

    int chunk_index = 0;
    for (int done = 0; done < num_iterations; done += chunk, ++chunk_index) {
      const int n = std::min(chunk, num_iterations - done);
      const int buffer = chunk_index % 2;
      T* recorded = nullptr;
      if (sink != nullptr) {
        recorded = device_[buffer].data();
        // The buffer's previous chunk (two back) must have left the device before the kernel
        // overwrites it. (Waiting on a never-recorded event is a no-op.)
        MYRIAD_CUDA_TRY(cudaStreamWaitEvent(compute, copied_[buffer].get(), 0));
      }
      launch(done, n, recorded);
      if (sink == nullptr) continue;

      MYRIAD_CUDA_TRY(cudaEventRecord(computed_[buffer].get(), compute));
      MYRIAD_CUDA_TRY(cudaStreamWaitEvent(copy_.get(), computed_[buffer].get(), 0));
      MYRIAD_CUDA_TRY(
          cudaMemcpyAsync(host_[buffer].data(), recorded,
                          static_cast<std::size_t>(n * values_per_iteration) * sizeof(T),
                          cudaMemcpyDeviceToHost, copy_.get()));
      MYRIAD_CUDA_TRY(cudaEventRecord(copied_[buffer].get(), copy_.get()));
      // Chunk k is now queued; hand chunk k − 1 to the sink while the device works on chunk k.
      if (has_pending) deliver(pending);
      pending = Pending{buffer, done, n};
      has_pending = true;
    }
    if (has_pending) deliver(pending);
  }

 private:
  // Declared before the buffers so that it is destroyed after them.
  Stream copy_;
  Event computed_[2];
  Event copied_[2];
  DeviceArray<T> device_[2];
  PinnedBuffer<T> host_[2];
};

}  // namespace myriad::cuda_detail
