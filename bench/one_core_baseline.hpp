#pragma once
// The one-core side of the GPU goals (issue 3: ≥ 1000× the ESS/s of one core; issue 4: ≥ 100×
// its throughput), kept per workload as the one-core rows run, so that the GPU rows of the same
// process report the ratio beside their own figure as vs_one_core. The suites register their
// one-core rows before their GPU rows, so Google Benchmark runs them first when a filter selects
// both; the ratio is then against the same machine's CPU.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <string>

namespace myriad::bench {

namespace detail {
inline std::map<std::string, double>& one_core_figures() {
  static std::map<std::string, double> figures;
  return figures;
}
}  // namespace detail

/// Records a one-core row's figure for `workload` (a suite-qualified name such as
/// "BM_ais/gaussian_d4"), keeping the best when several rows of it run.
inline void record_one_core(const std::string& workload, double figure) {
  double& best = detail::one_core_figures()[workload];
  best = std::max(best, figure);
}

/// vs_one_core = figure / the workload's recorded one-core figure; 0 when the filter left the
/// one-core rows out of this run.
inline void report_vs_one_core(benchmark::State& state, const std::string& workload,
                               double figure) {
  const auto& figures = detail::one_core_figures();
  const auto baseline = figures.find(workload);
  state.counters["vs_one_core"] =
      baseline != figures.end() && baseline->second > 0 ? figure / baseline->second : 0.0;
}

}  // namespace myriad::bench
