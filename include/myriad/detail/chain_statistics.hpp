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

struct ChainStatisticsView {
  /// Counters per chain: IterationStats's nineteen.
  static constexpr int kCounters = 19;

  std::int64_t* counters = nullptr;  ///< kCounters × chains values, [counter][chain]
  std::int64_t chains = 0;

  /// Adds chain c's totals over some transitions. One chain's acceptance totals are at most 2^32
  /// per transition, so they stay in AcceptProbTotal's low word for 2^31 transitions.
  MYRIAD_HD void add(std::int64_t c, const IterationStats& t) const {
    at(0, c) += static_cast<std::int64_t>(t.accept_prob_fixed.low);
    at(1, c) += t.transitions;
    at(2, c) += t.accepted;
    at(3, c) += t.divergent;
    at(4, c) += t.non_finite;
    at(5, c) += t.gradient_evaluations;
    at(6, c) += t.not_converged;
    at(7, c) += t.not_reversible;
    at(8, c) += t.cholesky_failures;
    at(9, c) += t.newton_iterations;
    at(10, c) += t.tree_depth_sum;
    at(11, c) = at(11, c) > t.tree_depth_max ? at(11, c) : t.tree_depth_max;  // a maximum
    at(12, c) += t.tree_depth_capped;
    at(13, c) += t.lockstep_gradient_evaluations;
    at(14, c) += static_cast<std::int64_t>(t.inverse_accept_fixed.low);
    at(15, c) += t.density_evaluations;
    at(16, c) += t.slice_capped;
    at(17, c) += t.auxiliary_updates;
    at(18, c) += t.auxiliary_accepted;
  }

  /// Chain c's totals.
  MYRIAD_HD IterationStats load(std::int64_t c) const {
    IterationStats t;
    t.accept_prob_fixed += at(0, c);
    t.transitions = at(1, c);
    t.accepted = at(2, c);
    t.divergent = at(3, c);
    t.non_finite = at(4, c);
    t.gradient_evaluations = at(5, c);
    t.not_converged = at(6, c);
    t.not_reversible = at(7, c);
    t.cholesky_failures = at(8, c);
    t.newton_iterations = at(9, c);
    t.tree_depth_sum = at(10, c);
    t.tree_depth_max = at(11, c);
    t.tree_depth_capped = at(12, c);
    t.lockstep_gradient_evaluations = at(13, c);
    t.inverse_accept_fixed += at(14, c);
    t.density_evaluations = at(15, c);
    t.slice_capped = at(16, c);
    t.auxiliary_updates = at(17, c);
    t.auxiliary_accepted = at(18, c);
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
