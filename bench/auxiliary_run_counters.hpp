#pragma once
// One whole run of an auxiliary-variable sampler as a benchmark row (BM_auxiliary,
// BM_gp_probit): its registration, its timing (the run's own warm-up and sampling seconds, as
// manual time) and its counters: `<evaluations>_per_second` (estimator or density evaluations,
// warm-up included), the smallest bulk ESS over the recorded quantities, per second and per 1000
// evaluations, the largest R-hat, the acceptance of x's update and, for APM, of u's.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "myriad/backend/device.hpp"
#include "myriad/run/sample_auxiliary.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad::bench {

/// Registers a whole-run row: one iteration (a run takes seconds and measures its own ESS),
/// timed manually, reported in milliseconds. The caller adds the row's arguments.
template <class Run>
benchmark::internal::Benchmark* register_whole_run(const std::string& name, Run&& run) {
  return benchmark::RegisterBenchmark(name.c_str(), std::forward<Run>(run))
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

/// Skips the row with an error when it asks for CUDA and there is no device; true if skipped.
inline bool skipped_without_device(benchmark::State& state, Device device) {
  if (device == Device::cuda && !cuda_device_available()) {
    state.SkipWithError("no CUDA device");
    return true;
  }
  return false;
}

inline void set_auxiliary_run_counters(benchmark::State& state, const SampleResult& result,
                                       const std::string& evaluations_name) {
  double min_ess = std::numeric_limits<double>::infinity(), max_rhat = 0;
  for (const auto& row : result.summary) {
    min_ess = std::min(min_ess, row.ess_bulk);
    max_rhat = std::max(max_rhat, row.rhat);
  }
  const IterationStats& s = result.sampling_stats;
  const double evaluations =
      double(result.warmup_stats.density_evaluations + s.density_evaluations);
  const double seconds = result.warmup_seconds + result.sampling_seconds;
  state.counters[evaluations_name + "_per_second"] = evaluations / seconds;
  state.counters["min_ess_bulk"] = min_ess;
  state.counters["ess_per_second"] = min_ess / seconds;
  state.counters["ess_per_1000_" + evaluations_name] = 1000 * min_ess / evaluations;
  state.counters["max_rhat"] = max_rhat;
  state.counters["acceptance"] = s.mean_accept_prob();
  if (s.auxiliary_updates > 0)
    state.counters["u_acceptance"] = double(s.auxiliary_accepted) / double(s.auxiliary_updates);
}

/// Runs sample_auxiliary(model, config) at each of the state's iterations, timed by the run's
/// warm-up and sampling seconds, and sets the counters of the last run.
template <class Model>
void time_auxiliary_runs(benchmark::State& state, const Model& model, const AuxiliaryConfig& config,
                         const std::string& evaluations_name) {
  SampleResult result;
  for (auto _ : state) {
    result = sample_auxiliary(model, config);
    state.SetIterationTime(result.warmup_seconds + result.sampling_seconds);
  }
  set_auxiliary_run_counters(state, result, evaluations_name);
}

}  // namespace myriad::bench
