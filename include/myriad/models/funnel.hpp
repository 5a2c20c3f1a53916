#pragma once
// `funnel`: Neal's funnel (Neal 2003, "Slice sampling", Ann. Statist. 31(3), §8), a density whose
// scale changes by orders of magnitude across the support, the standard stress test for
// step-size adaptation:
//
//   v ~ N(0, 3²),   x_i | v ~ N(0, exp(v/2)²),   i = 1, …, D − 1.
//
// Parameters are (v, x_1, …, x_{D−1}). The density is normalised (log Z = 0):
//   log p = −(D/2) log 2π − log 3 − v²/18 − (D − 1) v/2 − ½ e^{−v} Σ x_i²,
// and its exact marginals are v ~ N(0, 3²) and E[x_i] = 0.

#include <string>
#include <type_traits>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad::models {

template <class T>
struct Funnel {
  using value_type = T;
  /// Standard deviation of v (Neal's value).
  static constexpr double kVSd = 3.0;
  static constexpr double kLogVSd = 1.0986122886681098;  ///< log 3

  int dimension = 10;  ///< D: v plus D − 1 coordinates x_i

  /// Validates the dimension (D >= 2; the CLI default is 10).
  static Funnel make(int dim = 10) {
    MYRIAD_EXPECTS(dim >= 2, "funnel: dim must be >= 2, got ", dim);
    Funnel f;
    f.dimension = dim;
    return f;
  }

  MYRIAD_HD int dim() const { return dimension; }

  /// log p(v, x) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& z) const {
    using S = std::decay_t<decltype(z[0])>;
    const S v = z[0];
    S sum_sq = S(0);
    for (int i = 1; i < dimension; ++i) sum_sq += z[i] * z[i];
    return S(log_normaliser()) - v * v / S(2.0 * kVSd * kVSd) - S(0.5 * (dimension - 1)) * v -
           S(0.5) * exp(-v) * sum_sq;
  }

  /// ∂/∂v = −v/9 − (D − 1)/2 + ½ e^{−v} Σ x_i²,   ∂/∂x_i = −e^{−v} x_i.
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& z, Grad& grad) const {
    using S = element_t<Vec>;  // a scalar, or a SIMD batch of chains (core/lanes.hpp)
    const S v = z[0];
    const S precision = myriad::exp(-v);  // 1 / Var(x_i | v)
    S sum_sq = S(0);
    for (int i = 1; i < dimension; ++i) {
      const S xi = z[i];
      sum_sq += xi * xi;
      grad[i] = -precision * xi;
    }
    const S half_precision_sum_sq = T(0.5) * precision * sum_sq;
    grad[0] = -v / T(kVSd * kVSd) - T(0.5 * (dimension - 1)) + half_precision_sum_sq;
    return T(log_normaliser()) - v * v / T(2.0 * kVSd * kVSd) - T(0.5 * (dimension - 1)) * v -
           half_precision_sum_sq;
  }

  /// The recorded quantities are the parameters, named v, x[1], …, x[D−1].
  MYRIAD_HD int num_quantities() const { return dimension; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& z, Out& out) const {
    for (int i = 0; i < dimension; ++i) out[i] = z[i];
  }
  std::string quantity_name(int i) const { return i == 0 ? "v" : "x[" + std::to_string(i) + "]"; }

  /// −(D/2) log 2π − log 3.
  MYRIAD_HD T log_normaliser() const { return T(-kLogSqrtTwoPi * dimension - kLogVSd); }

  /// Backends the library instantiates (model/library_instances.hpp): the CPU lane kernels and
  /// CUDA's.
  static constexpr unsigned library_backends =
      library_backend::cpu_hmc_lanes | library_backend::hmc;
};

}  // namespace myriad::models
