#pragma once
// The counters of one whole run of an auxiliary-variable sampler (BM_auxiliary, BM_gp_probit):
// `<evaluations>_per_second` (estimator or density evaluations, warm-up included), the smallest
// bulk ESS over the recorded quantities, per second and per 1000 evaluations, the largest R-hat,
// the acceptance of x's update and, for APM, of u's.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <limits>
#include <string>

#include "myriad/run/sample_config.hpp"

namespace myriad::bench {

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

}  // namespace myriad::bench
