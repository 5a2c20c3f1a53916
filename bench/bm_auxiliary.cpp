// BM_auxiliary/<workload>/<sampler>/<device>/chains:N — one whole run of
// myriad::sample_auxiliary (500 warm-up + 1000 draws, seed 1) per sampler, on the Gaussian latent
// variable model of the thesis's §3.6.1 (D = 10, σ = 1, ε = 2, M = 10 observations, N = 8
// importance samples: `lvm`; the slice samplers run its exact density) and its M = 3 variant
// (`lvm_m3`, where PM-MH mixes). Manual time: warm-up + sampling seconds. Counters: estimator (or
// density) evaluations per second, min bulk ESS over the ten coordinates per second and per
// 1000 evaluations, the largest R-hat, the acceptance of x's update and, for APM, of u's.
// The CUDA rows run where a device is present (the library's instances of these models).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <limits>
#include <string>

#include "auxiliary_run_counters.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/models/gaussian_latent_variable.hpp"
#include "myriad/run/sample_auxiliary.hpp"

namespace myriad::bench {
namespace {

using Lvm = models::GaussianLatentVariable<double>;

void auxiliary_benchmark(benchmark::State& state, int observations, AuxiliaryMethod method,
                         Device device) {
  if (skipped_without_device(state, device)) return;
  const Lvm model = Lvm::make(10, observations, 8);
  AuxiliaryConfig config;
  config.chains = state.range(0);
  config.warmup = 500;
  config.draws = 1000;
  config.seed = 1;
  config.device = device;
  config.method = method;
  time_auxiliary_runs(state, model, config, "evaluations");
}

void register_auxiliary_benchmarks() {
  for (const Device device : {Device::cpu, Device::cuda}) {
    for (const int observations : {10, 3}) {
      for (const auto& [method, name] : kAuxiliaryMethodNames) {
        const std::string row = std::string("BM_auxiliary/") +
                                (observations == 10 ? "lvm/" : "lvm_m3/") + name + "/" +
                                to_string(device);
        register_whole_run(row,
                           [=, m = method](benchmark::State& s) {
                             auxiliary_benchmark(s, observations, m, device);
                           })
            ->ArgName("chains")
            ->Arg(device == Device::cuda ? 16384 : 64);
      }
    }
  }
}

const bool registered = (register_auxiliary_benchmarks(), true);

}  // namespace
}  // namespace myriad::bench
