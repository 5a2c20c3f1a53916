#pragma once
// What one call of a sampler's backend counts over its chains and iterations: transitions,
// decisions, failures by kind (mcmc/chain_status.hpp) and work. Every counter is an integer
// (acceptance in 2^-32 fixed point, mcmc/accept_prob_total.hpp), so totals do not depend on the
// order in which chains are summed: the CPU's OpenMP reduction, the GPU's block trees and a
// checkpoint's restart all give the same numbers. The CUDA kernels reduce this same type
// (kernels/reduction.cuh keeps it in raw shared storage, since its member initialisers rule out
// a __shared__ array of it).

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/mcmc/accept_prob_total.hpp"
#include "myriad/mcmc/chain_status.hpp"

namespace myriad {

/// The floor on a transition's acceptance α in the harmonic mean over chains: a divergent chain
/// counts as α = 0.01, so that a pooled harmonic mean of 0.8 leaves room for at most about 0.2%
/// divergent transitions.
constexpr double kHarmonicAcceptFloor = 0.01;

/// A transition's term of the harmonic mean's denominator, scaled into (0, 1] so that it sums
/// exactly in AcceptProbTotal: α_min / max(α, α_min).
MYRIAD_HD inline double scaled_inverse_accept(double accept_prob) {
  return kHarmonicAcceptFloor /
         (accept_prob > kHarmonicAcceptFloor ? accept_prob : kHarmonicAcceptFloor);
}

/// Totals over the chains and iterations of one backend call.
struct IterationStats {
  AcceptProbTotal accept_prob_fixed{};  ///< Σ accept_prob_to_fixed(min(1, exp(−ΔH)))
  /// Σ accept_prob_to_fixed(scaled_inverse_accept(α)) (HMC and NUTS; zero for constrained HMC).
  AcceptProbTotal inverse_accept_fixed{};
  std::int64_t transitions = 0;
  std::int64_t accepted = 0;
  std::int64_t divergent = 0;
  std::int64_t non_finite = 0;
  std::int64_t gradient_evaluations = 0;
  // Constrained HMC only (zero for HMC).
  std::int64_t not_converged = 0;
  std::int64_t not_reversible = 0;
  std::int64_t cholesky_failures = 0;
  std::int64_t newton_iterations = 0;  ///< position-projection iterations, forward and reverse
  // NUTS only (zero otherwise; mcmc/nuts.hpp).
  std::int64_t tree_depth_sum = 0;     ///< Σ over transitions of the final tree's depth
  std::int64_t tree_depth_max = 0;     ///< the deepest tree (a maximum, not a sum)
  std::int64_t tree_depth_capped = 0;  ///< transitions whose tree reached the depth cap
  /// Gradient evaluations as a GPU's warps pay for them: per iteration, each warp of 32
  /// consecutive chains takes as many leapfrog steps as its longest tree, its finished lanes
  /// waiting masked; Σ over warps and iterations of (lanes × the warp's most steps).
  /// gradient_evaluations / lockstep_gradient_evaluations is the lockstep efficiency.
  std::int64_t lockstep_gradient_evaluations = 0;
  // The derivative-free samplers (mcmc/auxiliary_samplers.hpp; zero otherwise).
  std::int64_t density_evaluations = 0;  ///< log-density or log-estimate evaluations
  std::int64_t slice_capped = 0;         ///< transitions with a slice update capped (kept x)
  std::int64_t auxiliary_updates = 0;    ///< APM: updates of the auxiliary variates u given x
  std::int64_t auxiliary_accepted = 0;   ///< APM: those that moved u

  /// Counts one transition: its acceptance probability, decision, ChainStatus flags and work.
  MYRIAD_HD void record(double accept_prob, bool was_accepted, std::uint32_t status,
                        int gradients, int newton = 0) {
    accept_prob_fixed += accept_prob_to_fixed(accept_prob);
    ++transitions;
    accepted += was_accepted;
    divergent += (status & kStatusDivergent) != 0;
    non_finite += (status & kStatusNonFinite) != 0;
    not_converged += (status & kStatusNotConverged) != 0;
    not_reversible += (status & kStatusNotReversible) != 0;
    cholesky_failures += (status & kStatusCholeskyFailure) != 0;
    slice_capped += (status & kStatusSliceCapped) != 0;
    gradient_evaluations += gradients;
    newton_iterations += newton;
  }

  double accept_prob_sum() const { return accept_prob_fixed.sum(); }
  double mean_accept_prob() const { return transitions ? accept_prob_sum() / transitions : 0.0; }
  /// The harmonic mean of the transitions' acceptance, each at least kHarmonicAcceptFloor: the
  /// statistic NUTS's step size adapts to across an ensemble (the worst chains dominate it).
  double harmonic_accept_prob() const {
    const double scaled = inverse_accept_fixed.sum();
    return scaled > 0 ? double(transitions) * kHarmonicAcceptFloor / scaled : 0.0;
  }
  double mean_tree_depth() const {
    return transitions ? static_cast<double>(tree_depth_sum) / transitions : 0.0;
  }
  /// The integer counters in one list, visited pairwise in a and b as f(a's, b's, is_maximum)
  /// (tree_depth_max combines by the larger, every other counter adds). operator+= and each
  /// chain's running statistics in device memory (detail/chain_statistics.hpp) walk this list,
  /// so a counter added to it is summed, stored and loaded everywhere. The two acceptance
  /// totals are not in it: they are two words each.
  template <class A, class B, class F>
  MYRIAD_HD static constexpr void for_each_count(A& a, B& b, F&& f) {
    f(a.transitions, b.transitions, false);
    f(a.accepted, b.accepted, false);
    f(a.divergent, b.divergent, false);
    f(a.non_finite, b.non_finite, false);
    f(a.gradient_evaluations, b.gradient_evaluations, false);
    f(a.not_converged, b.not_converged, false);
    f(a.not_reversible, b.not_reversible, false);
    f(a.cholesky_failures, b.cholesky_failures, false);
    f(a.newton_iterations, b.newton_iterations, false);
    f(a.tree_depth_sum, b.tree_depth_sum, false);
    f(a.tree_depth_max, b.tree_depth_max, true);
    f(a.tree_depth_capped, b.tree_depth_capped, false);
    f(a.lockstep_gradient_evaluations, b.lockstep_gradient_evaluations, false);
    f(a.density_evaluations, b.density_evaluations, false);
    f(a.slice_capped, b.slice_capped, false);
    f(a.auxiliary_updates, b.auxiliary_updates, false);
    f(a.auxiliary_accepted, b.auxiliary_accepted, false);
  }

  MYRIAD_HD IterationStats& operator+=(const IterationStats& o) {
    accept_prob_fixed += o.accept_prob_fixed;
    inverse_accept_fixed += o.inverse_accept_fixed;
    for_each_count(*this, o, [](std::int64_t& total, const std::int64_t& more, bool maximum) {
      total = maximum ? (total > more ? total : more) : total + more;
    });
    return *this;
  }
};

}  // namespace myriad
