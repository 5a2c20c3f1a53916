#pragma once
// Small annealing targets for the AIS tests that run the per-particle bodies in other mappings
// (test_ais_team.cpp, test_ais_lanes.cpp): box bounds with every kind of base coordinate, and
// zero-density starts.

#include <limits>
#include <type_traits>

namespace myriad::testing {

/// exp(−2 Σ (x_i − 1)²) on x₀ ≥ 0, x₁ ∈ [−1, 2], x₂ free: one-sided, two-sided and no bound,
/// so the base mixes its three kinds of coordinate and leapfrog steps reflect.
struct BoxedGaussian {
  using value_type = double;
  int dim() const { return 3; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum = S(0);
    for (int i = 0; i < 3; ++i) sum += (x[i] - 1.0) * (x[i] - 1.0);
    return S(-2.0) * sum;
  }
  double lower_bound(int i) const {
    return i == 0 ? 0.0 : (i == 1 ? -1.0 : -std::numeric_limits<double>::infinity());
  }
  double upper_bound(int i) const { return i == 1 ? 2.0 : std::numeric_limits<double>::infinity(); }
};

/// N(0, I) on x₀ ≥ 0 without declaring the bound: about half the base draws start at zero
/// density (failed starts, weight zero) and proposals across x₀ = 0 are non-finite.
struct HalfSpaceGaussian {
  using value_type = double;
  int dim() const { return 2; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    if (x[0] < 0) return S(-std::numeric_limits<double>::infinity());
    return S(-0.5) * (x[0] * x[0] + x[1] * x[1]);
  }
};

}  // namespace myriad::testing
