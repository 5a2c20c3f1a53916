// BM_hmc_kernel/<model>/cuda/chains:N — the fused HMC kernel alone (kernels/hmc_kernels.cuh),
// timed on the device with CUDA events around each launch and reported with UseManualTime():
// the throughput ceiling of BM_hmc/<model>/cuda, without the per-call statistics reduction,
// synchronisation and host overhead of the backend interface. One launch runs
// kIterationsPerLaunch iterations of every chain (L = 8 leapfrog steps, no jitter), nothing
// recorded. Items: gradient evaluations, summed exactly from the per-chain counters.
// Counters as in BM_hmc (bytes_per_grad, flops_per_grad, roofline_fraction), plus the kernel's
// registers per thread and local (spill/stack) bytes from cudaFuncGetAttributes.
// Built only with CUDA; skipped with an error when no device is present.

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "myriad/backend/device.hpp"
#include "myriad/kernels/cuda_hmc_backend.cuh"
#include "myriad/kernels/cuda_try.cuh"
#include "myriad/kernels/hmc_kernels.cuh"
#include "myriad/models/builtin.hpp"
#include "roofline.hpp"

namespace myriad::bench {
namespace {

constexpr int kLeapfrogSteps = 8;
constexpr int kIterationsPerLaunch = 4;

template <class T>
using Buffer = DeviceArray<T>;

template <class Model, class T>
void kernel_benchmark(benchmark::State& state, const Model& model, T step_size,
                      const GradientCost& cost) {
  if (!cuda_device_available()) {
    state.SkipWithError("no CUDA device: CUDA benchmarks skipped");
    return;
  }
  const std::int64_t chains = state.range(0);
  const std::int64_t stride = cuda_detail::round_up(chains, 32);
  const int dim = model.dim();
  const auto state_size = static_cast<std::size_t>(dim) * static_cast<std::size_t>(stride);
  Buffer<T> position(state_size), gradient(state_size), proposal(state_size), momentum(state_size),
      proposal_gradient(state_size), log_density(stride), inverse_metric(dim);
  Buffer<std::uint8_t> initialized(chains);
  Buffer<std::int64_t> counters(kernels::ChainStatisticsView::kCounters *
                                static_cast<std::size_t>(chains));
  const auto view = [&](const Buffer<T>& b) {
    return EnsembleView<T>{b.data(), chains, dim, stride};
  };
  const HmcEnsembleView<T> ensemble{view(position),   view(gradient),          view(proposal),
                                    view(momentum),   view(proposal_gradient), log_density.data(),
                                    EnsembleView<T>{}};  // no NUTS tree: HMC only
  const kernels::ChainStatisticsView stats{counters.data(), chains};
  const std::vector<T> ones(static_cast<std::size_t>(dim), T(1));
  MYRIAD_CUDA_TRY(
      cudaMemcpy(inverse_metric.data(), ones.data(), dim * sizeof(T), cudaMemcpyHostToDevice));
  MYRIAD_CUDA_TRY(cudaMemset(counters.data(), 0, counters.size() * sizeof(std::int64_t)));

  int device = 0, sm_count = 0;
  MYRIAD_CUDA_TRY(cudaGetDevice(&device));
  MYRIAD_CUDA_TRY(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  const auto init = kernels::initialize_chains_kernel<Model, T>;
  const auto iterate = kernels::hmc_iterations_kernel<Model, T>;
  init<<<cuda_detail::grid_size(init, kernels::kChainBlockSize, chains, sm_count),
         kernels::kChainBlockSize>>>(model, view(position), view(gradient), log_density.data(),
                                     initialized.data(), 1, T(2), 100, 1);
  MYRIAD_CHECK_LAUNCH();
  const int grid = cuda_detail::grid_size(iterate, kernels::kChainBlockSize, chains, sm_count);

  HmcSettings<T> settings;
  settings.seed = 1;
  settings.step_size = step_size;
  settings.max_leapfrog_steps = kLeapfrogSteps;
  settings.jitter = T(0);
  cudaEvent_t start, stop;
  MYRIAD_CUDA_TRY(cudaEventCreate(&start));
  MYRIAD_CUDA_TRY(cudaEventCreate(&stop));
  std::uint32_t iteration = 0;
  const auto launch = [&] {
    iterate<<<grid, kernels::kChainBlockSize>>>(
        model, ensemble, settings, MetricView<T>::diagonal_metric(inverse_metric.data(), dim),
        iteration, kIterationsPerLaunch, nullptr, 0, stats);
    iteration += kIterationsPerLaunch;
  };
  launch();  // warm-up: module load and first-touch costs stay out of the timings
  MYRIAD_CHECK_LAUNCH();
  MYRIAD_CUDA_TRY(cudaDeviceSynchronize());
  MYRIAD_CUDA_TRY(cudaMemset(counters.data(), 0, counters.size() * sizeof(std::int64_t)));

  for (auto _ : state) {
    MYRIAD_CUDA_TRY(cudaEventRecord(start));
    launch();
    MYRIAD_CUDA_TRY(cudaEventRecord(stop));
    MYRIAD_CUDA_TRY(cudaEventSynchronize(stop));
    float milliseconds = 0;
    MYRIAD_CUDA_TRY(cudaEventElapsedTime(&milliseconds, start, stop));
    state.SetIterationTime(milliseconds * 1e-3);
  }
  MYRIAD_CHECK_LAUNCH();
  std::vector<std::int64_t> host_counters(counters.size());
  MYRIAD_CUDA_TRY(cudaMemcpy(host_counters.data(), counters.data(),
                             counters.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);

  const kernels::ChainStatisticsView host_stats{host_counters.data(), chains};
  IterationStats total;
  for (std::int64_t c = 0; c < chains; ++c) total += host_stats.load(c);
  state.SetItemsProcessed(total.gradient_evaluations);
  const Roofline roofline = hmc_roofline(cost, dim, sizeof(T), kLeapfrogSteps);
  state.counters["bytes_per_grad"] = roofline.bytes;
  state.counters["flops_per_grad"] = roofline.flops;
  if (const std::optional<DevicePeak> peak = cuda_device_peak(); peak && peak->fp64_flops > 0) {
    state.counters["roofline_fraction"] = benchmark::Counter(
        static_cast<double>(total.gradient_evaluations) * roofline.flops /
            peak->attainable_flops(roofline, sizeof(T)),
        benchmark::Counter::kIsRate);
    state.SetLabel(peak->name);
  }
  cudaFuncAttributes attributes{};
  MYRIAD_CUDA_TRY(cudaFuncGetAttributes(&attributes, iterate));
  state.counters["registers"] = attributes.numRegs;
  state.counters["local_bytes"] = static_cast<double>(attributes.localSizeBytes);
}

void register_kernel_benchmarks() {
  static auto logistic_data = models::LogisticData<double>::synthetic(1000, 10, 1);
  const auto configure = [](benchmark::internal::Benchmark* b) {
    b->ArgName("chains")->RangeMultiplier(4)->Range(1 << 10, 1 << 20)->UseManualTime();
  };
  configure(benchmark::RegisterBenchmark("BM_hmc_kernel/gaussian/cuda", [](benchmark::State& s) {
    kernel_benchmark(s, models::Gaussian<double>::make(100, 0.5), 0.1, gaussian_gradient_cost(100));
  }));
  configure(
      benchmark::RegisterBenchmark("BM_hmc_kernel/gaussian_f32/cuda", [](benchmark::State& s) {
        kernel_benchmark(s, models::Gaussian<float>::make(100, 0.5), 0.1f,
                         gaussian_gradient_cost(100));
      }));
  configure(benchmark::RegisterBenchmark("BM_hmc_kernel/logistic/cuda", [](benchmark::State& s) {
    if (!cuda_device_available()) {
      s.SkipWithError("no CUDA device: CUDA benchmarks skipped");
      return;
    }
    kernel_benchmark(s, logistic_data.device_model(10.0), 0.02, logistic_gradient_cost(1000, 10));
  }));
  configure(
      benchmark::RegisterBenchmark("BM_hmc_kernel/eight_schools/cuda", [](benchmark::State& s) {
        kernel_benchmark(s, models::EightSchools<double>::make(), 0.2,
                         eight_schools_gradient_cost());
      }));
  configure(benchmark::RegisterBenchmark("BM_hmc_kernel/funnel/cuda", [](benchmark::State& s) {
    kernel_benchmark(s, models::Funnel<double>::make(10), 0.1, funnel_gradient_cost(10));
  }));
}

[[maybe_unused]] const int registered = (register_kernel_benchmarks(), 0);

}  // namespace
}  // namespace myriad::bench
