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

/// Totals over the chains and iterations of one backend call.
struct IterationStats {
  AcceptProbTotal accept_prob_fixed{};  ///< Σ accept_prob_to_fixed(min(1, exp(−ΔH)))
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
    gradient_evaluations += gradients;
    newton_iterations += newton;
  }

  double accept_prob_sum() const { return accept_prob_fixed.sum(); }
  double mean_accept_prob() const { return transitions ? accept_prob_sum() / transitions : 0.0; }
  MYRIAD_HD IterationStats& operator+=(const IterationStats& o) {
    accept_prob_fixed += o.accept_prob_fixed;
    transitions += o.transitions;
    accepted += o.accepted;
    divergent += o.divergent;
    non_finite += o.non_finite;
    gradient_evaluations += o.gradient_evaluations;
    not_converged += o.not_converged;
    not_reversible += o.not_reversible;
    cholesky_failures += o.cholesky_failures;
    newton_iterations += o.newton_iterations;
    return *this;
  }
};

}  // namespace myriad
