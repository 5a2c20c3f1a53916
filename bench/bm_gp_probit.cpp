// The GP probit workload (thesis §3.6.2, models/gp_probit.hpp):
//
// BM_gp_probit_prepare/rows:M — one Laplace fit and its factors (prepare_estimate) at an x drawn
//   from the prior, on M complete rows of the Wisconsin data. Counters: prepares per second, the
//   Newton updates it made, and seconds per cubic operation (the thesis's unit), counting the
//   Cholesky of C, s + 1 of B for s updates, the product L_Cᵀ W L_C and the Cholesky of A:
//   s + 4; against the thesis's 0.0184 s on a 4-core CPU at M = 682.
// BM_gp_probit_estimate/rows:M — one estimate from a prepared cache with N = 50 (the O(M² N)
//   part an APM update of u costs). Counter: estimates per second.
// BM_gp_probit/<sampler>/rows:60 — one whole run of sample_auxiliary (10 chains as the thesis,
//   500 warm-up + 1000 draws, seed 1) per method the thesis ran. Counters as BM_auxiliary's:
//   estimates per second, min bulk ESS per second and per 1000 estimates, max R-hat,
//   acceptances.
// BM_gp_probit/<sampler>/cuda/rows:M/chains:C — on a GPU, the proposals' preparations batched
//   across chains (kernels/staged_preparation.cuh: potrfBatched and gemmBatched at n = M),
//   5 warm-up + 5 draws: a throughput row (estimates per second; no converged ESS, whose
//   counters are reported as measured), sized for the GPU window: one thread per chain still
//   runs each estimate's O(M² N) triangular work, so that at M = 683 64 chains did not finish
//   6 iterations in 35 s on an H200 (bench/results/gpu-2026-11-29-h200.md). M = 100 on 1024
//   chains and the full data, M = 683, on 256. Device memory at M = 683: ~22 MB per chain (two
//   caches and a workspace of two 683 × 683 matrices each).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "auxiliary_run_counters.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/random.hpp"
#include "myriad/models/breast_cancer_wisconsin.hpp"
#include "myriad/models/gp_probit.hpp"
#include "myriad/run/sample_auxiliary.hpp"

namespace myriad::bench {
namespace {

models::GpProbitData<double> gp_data(int rows) {
  const models::BreastCancerRows data = models::breast_cancer_wisconsin(rows);
  return models::GpProbitData<double>::from_arrays(data.rows, models::BreastCancerRows::kFeatures,
                                                   data.features, data.labels);
}

struct PreparedProblem {
  models::GpProbitData<double> data;
  models::GpProbit<double> model;
  std::vector<double> cache, workspace;
  double x[10];
  explicit PreparedProblem(int rows)
      : data(gp_data(rows)),
        model(data.host_model(50)),
        cache(static_cast<std::size_t>(model.estimator_cache_size())),
        workspace(static_cast<std::size_t>(model.estimator_workspace_size())) {
    const RandomStream rng(1, 0);
    for (std::uint32_t attempt = 0; !model.initial_point(rng, attempt, x); ++attempt) {
    }
  }
};

void BM_gp_probit_prepare(benchmark::State& state) {
  PreparedProblem p(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    p.model.prepare_estimate(p.x, p.cache.data(), p.workspace.data());
    benchmark::DoNotOptimize(p.cache.data());
  }
  const int steps = p.model.newton_steps(p.cache.data());
  state.counters["prepares_per_second"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["newton_steps"] = steps;
  state.counters["seconds_per_cubic_op"] =
      benchmark::Counter(double(state.iterations()) * (steps + 4),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_gp_probit_prepare)->ArgName("rows")->Arg(100)->Arg(683)->Unit(benchmark::kMillisecond);

void BM_gp_probit_estimate(benchmark::State& state) {
  PreparedProblem p(static_cast<int>(state.range(0)));
  p.model.prepare_estimate(p.x, p.cache.data(), p.workspace.data());
  const RandomStream rng(2, 0);
  std::uint32_t counter = 0;
  for (auto _ : state) {
    const AuxiliaryVariates<double> u{rng, counter++, AuxiliaryLaw::normal};
    benchmark::DoNotOptimize(p.model.log_estimate_cached(p.cache.data(), u, p.workspace.data()));
  }
  state.counters["estimates_per_second"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_gp_probit_estimate)
    ->ArgName("rows")
    ->Arg(100)
    ->Arg(683)
    ->Unit(benchmark::kMillisecond);

void gp_probit_run(benchmark::State& state, AuxiliaryMethod method, Device device) {
  if (skipped_without_device(state, device)) return;
  models::GpProbitData<double> data = gp_data(static_cast<int>(state.range(0)));
  AuxiliaryConfig config;
  const bool cuda = device == Device::cuda;
  config.chains = cuda ? state.range(1) : 10;
  config.warmup = cuda ? 5 : 500;
  config.draws = cuda ? 5 : 1000;
  config.seed = 1;
  config.device = device;
  config.method = method;
  const models::GpProbit<double> model = cuda ? data.device_model(50) : data.host_model(50);
  time_auxiliary_runs(state, model, config, "estimates");
}

void register_gp_probit_runs() {
  for (const AuxiliaryMethod method : {AuxiliaryMethod::pm_mh, AuxiliaryMethod::apm_mi_mh,
                                       AuxiliaryMethod::apm_ss_mh, AuxiliaryMethod::apm_ss_ss}) {
    const std::string row = std::string("BM_gp_probit/") + to_string(method);
    register_whole_run(row,
                       [method](benchmark::State& s) { gp_probit_run(s, method, Device::cpu); })
        ->ArgName("rows")
        ->Arg(60);
  }
  for (const AuxiliaryMethod method : {AuxiliaryMethod::pm_mh, AuxiliaryMethod::apm_mi_mh}) {
    const std::string row = std::string("BM_gp_probit/") + to_string(method) + "/cuda";
    register_whole_run(row,
                       [method](benchmark::State& s) { gp_probit_run(s, method, Device::cuda); })
        ->ArgNames({"rows", "chains"})
        ->Args({100, 1024})
        ->Args({683, 256});
  }
}

const bool registered = (register_gp_probit_runs(), true);

}  // namespace
}  // namespace myriad::bench
