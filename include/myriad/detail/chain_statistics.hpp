#pragma once
// Each chain's running statistics in the CUDA backends' device memory (and their host twins in
// the tests): one int64 array per IterationStats counter, [counter][chain], so that a chain's
// thread (or a warp's lane 0) adds its own totals at the end of a launch without atomics, and
// reduce_sum (kernels/reduction.cuh) sums them with LoadChainStatistics into one IterationStats.
// HMC, constrained HMC and their kernels share it; HMC's constrained-HMC counters stay zero.

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/mcmc/iteration_stats.hpp"

namespace myriad::kernels {

/// How many integer counters IterationStats::for_each_count visits.
constexpr int iteration_stats_counts() {
  IterationStats s;
  int n = 0;
  IterationStats::for_each_count(s, s, [&n](std::int64_t&, std::int64_t&, bool) { ++n; });
  return n;
}

struct ChainStatisticsView {
  /// Counters per chain: the low words of IterationStats's two acceptance totals, then its
  /// integer counters in for_each_count's order.
  static constexpr int kCounters = 2 + iteration_stats_counts();

  std::int64_t* counters = nullptr;  ///< kCounters × chains values, [counter][chain]
  std::int64_t chains = 0;

  /// Adds chain c's totals over some transitions. One chain's acceptance totals are at most 2^32
  /// per transition, so they stay in AcceptProbTotal's low word for 2^31 transitions.
  MYRIAD_HD void add(std::int64_t c, const IterationStats& t) const {
    at(0, c) += static_cast<std::int64_t>(t.accept_prob_fixed.low);
    at(1, c) += static_cast<std::int64_t>(t.inverse_accept_fixed.low);
    int k = 2;
    IterationStats::for_each_count(
        t, t, [&](const std::int64_t& count, const std::int64_t&, bool maximum) {
          std::int64_t& total = at(k++, c);
          total = maximum ? (total > count ? total : count) : total + count;
        });
  }

  /// Chain c's totals.
  MYRIAD_HD IterationStats load(std::int64_t c) const {
    IterationStats t;
    t.accept_prob_fixed += at(0, c);
    t.inverse_accept_fixed += at(1, c);
    int k = 2;
    IterationStats::for_each_count(
        t, t, [&](std::int64_t& count, std::int64_t&, bool) { count = at(k++, c); });
    return t;
  }

 private:
  MYRIAD_HD std::int64_t& at(int counter, std::int64_t c) const {
    return counters[counter * chains + c];
  }
};

/// Reads chain c's statistics as one term of reduce_sum (kernels/reduction.cuh).
struct LoadChainStatistics {
  ChainStatisticsView stats;
  MYRIAD_HD IterationStats operator()(std::int64_t c) const { return stats.load(c); }
};

}  // namespace myriad::kernels
