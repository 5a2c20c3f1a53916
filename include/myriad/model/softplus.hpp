#pragma once
// The softplus log(1 + e^a) together with its derivative, the logistic σ(a), from one
// exponential: the pair the analytic gradients of logistic-type terms need (logistic's
// likelihood, eight_schools' half-Cauchy, mcrbm's hidden units). Per-chain, over a scalar or a
// SIMD batch of chains (core/lanes.hpp).

#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"

namespace myriad {

/// Returns log(1 + e^a) and writes σ(a) to `logistic`, with e = e^{−|a|}: log(1 + e^a) =
/// max(a, 0) + log(1 + e), σ(a) = 1/(1 + e) for a ≥ 0 and e/(1 + e) otherwise; neither
/// overflows. T is the model's scalar, the type of the constant 1 in 1 + e.
template <class T, class S>
MYRIAD_HD S softplus_and_logistic(const S& a, S& logistic) {
  using Lanes = LaneOps<S>;
  const S e = myriad::exp(-myriad::fabs(a));
  logistic = Lanes::select(a >= S(0), S(1), e) / (T(1) + e);
  return Lanes::select(a > S(0), a, S(0)) + myriad::log1p(e);
}

}  // namespace myriad
