#pragma once
// Acceptance probabilities in 2^-32 fixed point, and their exact totals over chains and
// iterations. The pooled acceptance steers the ensemble's step size (mcmc/dual_averaging.hpp),
// so it must be the same bits for any thread count, grid size or reduction order, and runs stay
// reproducible across launch configurations: integer sums are associative, floating-point sums
// are not.

#include <cstdint>

#include "myriad/core/hd.hpp"

namespace myriad {

/// Units of fixed point per unit of probability: 2^32.
constexpr double kAcceptProbScale = 4294967296.0;

/// min(1, exp(−ΔH)) in [0, 1] as a 2^-32 fixed-point integer.
MYRIAD_HD inline constexpr std::int64_t accept_prob_to_fixed(double accept_prob) {
  return static_cast<std::int64_t>(accept_prob * kAcceptProbScale + 0.5);
}

/// A total of fixed-point acceptance probabilities (accept_prob_to_fixed) over chains and
/// iterations, exact in 128 bits. One chain's total fits 64 bits for 2^31 transitions, but an
/// ensemble's does not: 2^20 chains × 2^11 draws at acceptance 1 would wrap a signed 64-bit sum.
/// Two 64-bit words with a carry keep the addition exact, hence associative, on the host and the
/// device alike. An aggregate without member initialisers, so that it can live in __shared__
/// memory (reduction.cuh); value-initialise it to get zero.
struct AcceptProbTotal {
  std::uint64_t low;
  std::uint64_t high;

  /// Adds one chain's total (non-negative: each term is a probability).
  MYRIAD_HD AcceptProbTotal& operator+=(std::int64_t chain_total) {
    return *this += AcceptProbTotal{static_cast<std::uint64_t>(chain_total), 0};
  }
  /// By value, so that `total += total` is right too.
  MYRIAD_HD AcceptProbTotal& operator+=(AcceptProbTotal o) {
    low += o.low;
    high += o.high + (low < o.low ? 1 : 0);  // the carry out of the low word
    return *this;
  }
  /// Σ min(1, exp(−ΔH)) in probability units.
  double sum() const {
    return (static_cast<double>(high) * 18446744073709551616.0 + static_cast<double>(low)) /
           kAcceptProbScale;
  }
  friend bool operator==(const AcceptProbTotal& a, const AcceptProbTotal& b) {
    return a.low == b.low && a.high == b.high;
  }
  friend bool operator!=(const AcceptProbTotal& a, const AcceptProbTotal& b) { return !(a == b); }
};

}  // namespace myriad
