// The device side of BM_log_semiring_gemm (bench/bm_log_semiring_gemm.cpp): filling inputs on
// the device and timing one run_log_sum_product call on the CUDA policy with CUDA events.
// Built only with CUDA.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>

#include "myriad/estimate/contraction_path.hpp"
#include "myriad/kernels/cuda_contraction.cuh"
#include "myriad/kernels/cuda_parallel.cuh"
#include "myriad/kernels/cuda_try.cuh"

namespace myriad::bench {

/// data[i] uniform in [−10, 10] from splitmix64 of seed + i·golden ratio, as the host rows'
/// hashed_log_value (bench/bm_log_semiring_gemm.cpp). Outside an anonymous namespace: a kernel
/// template argument must have external linkage for the kernel's hidden visibility.
struct BenchHashedLogValues {
  double* data;
  std::uint64_t seed;
  MYRIAD_HD void operator()(std::int64_t i) const {
    std::uint64_t z = seed + static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    data[i] = -10.0 + 20.0 * static_cast<double>(z >> 11) * 0x1p-53;
  }
};

void fill_hashed_log_values_on_device(double* data, std::int64_t n, std::uint64_t seed) {
  const CudaParallel parallel;
  parallel.for_each(n, BenchHashedLogValues{data, seed});
  parallel.synchronize();
}

/// Seconds of one run_log_sum_product(policy of `path`, step), from CUDA events recorded on
/// the legacy default stream around the call.
double time_log_sum_product_on_device(const LogSumProductStep& step, ContractionPath path) {
  struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    Events() {
      MYRIAD_CUDA_TRY(cudaEventCreate(&start));
      MYRIAD_CUDA_TRY(cudaEventCreate(&stop));
    }
    ~Events() {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
  };
  static const Events events;
  // One policy per path for the whole benchmark: a policy trims the memory pool when its last
  // copy goes (kernels/cuda_parallel.cuh), so one per call would time the cuBLAS path's scratch
  // allocations too.
  static std::map<ContractionPath, CudaParallel> policies;
  const CudaParallel& parallel = policies.try_emplace(path, path).first->second;
  MYRIAD_CUDA_TRY(cudaEventRecord(events.start));
  run_log_sum_product(parallel, step);
  MYRIAD_CUDA_TRY(cudaEventRecord(events.stop));
  MYRIAD_CUDA_TRY(cudaEventSynchronize(events.stop));
  float milliseconds = 0;
  MYRIAD_CUDA_TRY(cudaEventElapsedTime(&milliseconds, events.start, events.stop));
  return milliseconds * 1e-3;
}

}  // namespace myriad::bench
