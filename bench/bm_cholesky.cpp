// BM_cholesky/<tier>/n:<n>/batch:<b> — batched Cholesky factorisation of b SPD matrices of size
// n × n (linalg/batched_cholesky.hpp) in double, the precision of constrained HMC: the CPU twin
// (`cpu`, OpenMP over the batch) and the four CUDA tiers (`registers`, `thread`, `tile`,
// `library` = cuSOLVER potrfBatched). n ∈ {2, 4, …, 256}; b = 2^10, 2^12, 2^14, 2^16, capped so
// that one batch stays within 1 GiB (n = 128: up to 2^12, n = 256: 2^10). The registers tier is
// registered for n ∈ {2, 4, 8, 12} (its fixed-size kernels stop at 12 in double), the thread
// tier for n ≤ 16 and the tile tier for n ≤ 128 (their limits, batched_cholesky_max_size, depend
// on the device's shared memory; beyond them the case is skipped with an error).
//
// Timing (UseManualTime): the factorisation alone. Each iteration first restores the pristine
// batch (memcpy on the CPU; a device-to-device copy on the GPU), untimed; the CPU times the call
// with a steady clock, the GPU with CUDA events around the enqueued work. CUDA cases are skipped
// with an error when no device is present.
//
// Items: matrices factored. Roofline (per matrix, STYLE.md "Benchmarks"): flops_per_matrix =
// n³/3 (the leading term of LAPACK's operation count for potrf: Σ_j (n − j)²/2 ≈ n³/6
// multiply-adds, 2 FLOPs each; the n square roots and divisions are not counted),
// bytes_per_matrix = (n² reads + n(n + 1)/2 writes) · 8: the thread and tile kernels load whole
// columns, the registers kernel the lower triangle, whose cache sectors the strict upper
// triangle shares, and all store the lower triangle. On the GPU also
// roofline_fraction: the achieved FLOP rate over min(peak FP64, intensity × DRAM bandwidth) of
// the device (bench/roofline.hpp).

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#if defined(MYRIAD_HAS_CUDA)
#include <cuda_runtime_api.h>

#include "myriad/kernels/cuda_try.cuh"
#endif

#include "myriad/backend/device.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/linalg/batched_cholesky.hpp"
#include "roofline.hpp"

namespace myriad::bench {
namespace {

using linalg::CholeskyTier;

/// A batch of column-major SPD matrices A = X Xᵀ / n + I / 2 (the lower triangles; the upper
/// triangles mirror them). Matrices repeat with period 64 to keep set-up time small.
std::vector<double> spd_batch(int n, std::int64_t batch) {
  const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
  const std::int64_t distinct = batch < 64 ? batch : 64;
  std::vector<double> out(static_cast<std::size_t>(n2 * batch));
  std::mt19937_64 engine(12345);
  std::normal_distribution<double> normal;
  std::vector<double> x(static_cast<std::size_t>(n2));
  for (std::int64_t b = 0; b < distinct; ++b) {
    for (double& v : x) v = normal(engine);
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) {
        double s = i == j ? 0.5 : 0.0;
        for (int k = 0; k < n; ++k) s += x[i * n + k] * x[j * n + k] / n;
        out[b * n2 + i + j * n] = out[b * n2 + j + i * n] = s;
      }
  }
  for (std::int64_t b = distinct; b < batch; ++b)
    std::memcpy(out.data() + b * n2, out.data() + (b % distinct) * n2, n2 * sizeof(double));
  return out;
}

Roofline cholesky_roofline(int n) {
  const double n_d = n;
  return {(n_d * n_d + n_d * (n_d + 1) / 2) * sizeof(double), n_d * n_d * n_d / 3};
}

void set_counters(benchmark::State& state, int n, std::int64_t batch) {
  const Roofline roofline = cholesky_roofline(n);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * batch);
  state.counters["flops_per_matrix"] = roofline.flops;
  state.counters["bytes_per_matrix"] = roofline.bytes;
}

void cpu_benchmark(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::int64_t batch = state.range(1);
  const std::vector<double> pristine = spd_batch(n, batch);
  std::vector<double> matrices(pristine.size());
  std::vector<int> info(static_cast<std::size_t>(batch));
  for (auto _ : state) {
    std::memcpy(matrices.data(), pristine.data(), pristine.size() * sizeof(double));
    const auto start = std::chrono::steady_clock::now();
    linalg::batched_cholesky_cpu(matrices.data(), n, batch, info.data());
    const auto stop = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(matrices.data());
    state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
  }
  for (int s : info) {
    if (s != 0) state.SkipWithError("a benchmark matrix was not positive definite");
  }
  set_counters(state, n, batch);
}

void cuda_benchmark(benchmark::State& state, CholeskyTier tier) {
  if (!cuda_device_available()) {
    state.SkipWithError("no CUDA device: CUDA benchmarks skipped");
    return;
  }
#if defined(MYRIAD_HAS_CUDA)
  const int n = static_cast<int>(state.range(0));
  const std::int64_t batch = state.range(1);
  if (n > linalg::batched_cholesky_max_size<double>(tier)) {
    state.SkipWithError("n exceeds this tier's limit on this device");
    return;
  }
  const std::vector<double> host = spd_batch(n, batch);
  const DeviceArray<double> pristine(host);
  DeviceArray<double> matrices(host.size());
  DeviceArray<int> info(static_cast<std::size_t>(batch));
  const std::size_t bytes = host.size() * sizeof(double);
  cudaEvent_t start, stop;
  MYRIAD_CUDA_TRY(cudaEventCreate(&start));
  MYRIAD_CUDA_TRY(cudaEventCreate(&stop));
  const auto restore = [&] {
    MYRIAD_CUDA_TRY(cudaMemcpyAsync(matrices.data(), pristine.data(), bytes,
                                    cudaMemcpyDeviceToDevice, nullptr));
  };
  // Warm-up: module load, shared-memory opt-in, library handles and first-touch stay untimed.
  // The library tier's per-call cost stays timed: it builds its arrays of matrix pointers in
  // stream-ordered memory on every call, as it does inside a constrained-HMC iteration, and at
  // small n that, not the factorisation, can dominate the row.
  restore();
  linalg::batched_cholesky_cuda(matrices.data(), n, batch, info.data(), tier);
  MYRIAD_CUDA_TRY(cudaDeviceSynchronize());
  for (auto _ : state) {
    restore();
    MYRIAD_CUDA_TRY(cudaEventRecord(start, nullptr));
    linalg::batched_cholesky_cuda(matrices.data(), n, batch, info.data(), tier);
    MYRIAD_CUDA_TRY(cudaEventRecord(stop, nullptr));
    MYRIAD_CUDA_TRY(cudaEventSynchronize(stop));
    float milliseconds = 0;
    MYRIAD_CUDA_TRY(cudaEventElapsedTime(&milliseconds, start, stop));
    state.SetIterationTime(milliseconds * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  for (int s : info.download()) {
    if (s != 0) {
      state.SkipWithError("a benchmark matrix was not positive definite");
      break;
    }
  }
  set_counters(state, n, batch);
  const Roofline roofline = cholesky_roofline(n);
  if (const std::optional<DevicePeak> peak = cuda_device_peak(); peak && peak->fp64_flops > 0) {
    state.counters["roofline_fraction"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(batch) *
                               roofline.flops / peak->attainable_flops(roofline, sizeof(double)),
                           benchmark::Counter::kIsRate);
    state.SetLabel(peak->name);
  }
#else
  static_cast<void>(tier);
#endif
}

/// Size n at batches 2^10 … 2^16 (× 4), at most 1 GiB of matrices.
void add_size(benchmark::internal::Benchmark* b, int n) {
  const std::int64_t bytes_per_matrix = static_cast<std::int64_t>(n) * n * sizeof(double);
  for (std::int64_t batch = 1 << 10; batch <= (1 << 16); batch *= 4) {
    if (batch > (1 << 10) && batch * bytes_per_matrix > (std::int64_t{1} << 30)) break;
    b->Args({n, batch});
  }
}

/// Sizes 2, 4, …, max_n.
benchmark::internal::Benchmark* add_sizes(benchmark::internal::Benchmark* b, int max_n) {
  b->ArgNames({"n", "batch"})->UseManualTime();
  for (int n = 2; n <= max_n; n *= 2) add_size(b, n);
  return b;
}

void register_cholesky_benchmarks() {
  add_sizes(benchmark::RegisterBenchmark("BM_cholesky/cpu", cpu_benchmark), 256);
  add_size(add_sizes(benchmark::RegisterBenchmark(
                         "BM_cholesky/registers",
                         [](benchmark::State& s) { cuda_benchmark(s, CholeskyTier::registers); }),
                     8),
           12);
  add_sizes(benchmark::RegisterBenchmark(
                "BM_cholesky/thread",
                [](benchmark::State& s) { cuda_benchmark(s, CholeskyTier::thread); }),
            16);
  add_sizes(
      benchmark::RegisterBenchmark(
          "BM_cholesky/tile", [](benchmark::State& s) { cuda_benchmark(s, CholeskyTier::tile); }),
      128);
  add_sizes(benchmark::RegisterBenchmark(
                "BM_cholesky/library",
                [](benchmark::State& s) { cuda_benchmark(s, CholeskyTier::library); }),
            256);
}

[[maybe_unused]] const int registered = (register_cholesky_benchmarks(), 0);

}  // namespace
}  // namespace myriad::bench
