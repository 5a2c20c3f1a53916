#pragma once
// `banana`: the twisted Gaussian of Haario, Saksman & Tamminen (1999, "Adaptive proposal
// distribution for random walk Metropolis algorithm", Comput. Stat. 14, §4): a Gaussian bent
// along a parabola, the standard curved target whose potential grows faster than quadratically
// (as b² x₁⁴ / 2 along x₁):
//
//   x₁ ~ N(0, a²),   x₂ | x₁ ~ N(b (x₁² − a²), 1),   x_i ~ N(0, 1) for i = 3, …, D.
//
// The density is normalised (log Z = 0):
//   log p = −(D/2) log 2π − log a − x₁²/(2a²) − ½ (x₂ − b(x₁² − a²))² − ½ Σ_{i≥3} x_i²,
// and its moments are exact: E[x₁] = E[x₂] = 0, sd(x₁) = a, sd(x₂) = √(1 + 2 b² a⁴)
// (Var(b(x₁² − a²)) = b² · 2a⁴ for Gaussian x₁), and x_i ~ N(0, 1).

#include <cmath>
#include <string>
#include <type_traits>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad::models {

template <class T>
struct Banana {
  using value_type = T;

  int dimension = 2;  ///< D >= 2
  T scale = T(10);    ///< a: sd of x₁
  T twist = T(0.1);   ///< b: curvature of the parabola

  /// Validates the arguments (D >= 2, a > 0, b finite).
  static Banana make(int dim = 2, double a = 10, double b = 0.1) {
    MYRIAD_EXPECTS(dim >= 2, "banana: dim must be >= 2, got ", dim);
    MYRIAD_EXPECTS(std::isfinite(a) && a > 0, "banana: a must be positive, got ", a);
    MYRIAD_EXPECTS(std::isfinite(b), "banana: b must be finite, got ", b);
    Banana m;
    m.dimension = dim;
    m.scale = T(a);
    m.twist = T(b);
    return m;
  }

  MYRIAD_HD int dim() const { return dimension; }

  /// log p(x) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    const S bend = x[1] - S(twist) * (x[0] * x[0] - S(scale * scale));
    S rest = S(0);
    for (int i = 2; i < dimension; ++i) rest += x[i] * x[i];
    return S(log_normaliser()) - x[0] * x[0] / S(2 * scale * scale) - S(0.5) * bend * bend -
           S(0.5) * rest;
  }

  /// With r = x₂ − b(x₁² − a²): ∂/∂x₁ = −x₁/a² + 2 b x₁ r, ∂/∂x₂ = −r, ∂/∂x_i = −x_i.
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& x, Grad& grad) const {
    using S = element_t<Vec>;  // a scalar, or a SIMD batch of chains (core/lanes.hpp)
    const S x1 = x[0];
    const S bend = S(x[1]) - twist * (x1 * x1 - scale * scale);
    grad[0] = -x1 / (scale * scale) + T(2) * twist * x1 * bend;
    grad[1] = -bend;
    S rest = S(0);
    for (int i = 2; i < dimension; ++i) {
      const S xi = x[i];
      rest += xi * xi;
      grad[i] = -xi;
    }
    return log_normaliser() - x1 * x1 / (T(2) * scale * scale) - T(0.5) * bend * bend -
           T(0.5) * rest;
  }

  /// The recorded quantities are the coordinates x[1], …, x[D].
  MYRIAD_HD int num_quantities() const { return dimension; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& x, Out& out) const {
    for (int i = 0; i < dimension; ++i) out[i] = x[i];
  }
  std::string quantity_name(int i) const { return "x[" + std::to_string(i + 1) + "]"; }

  /// −(D/2) log 2π − log a.
  MYRIAD_HD T log_normaliser() const { return T(-kLogSqrtTwoPi * dimension) - myriad::log(scale); }

  /// The exact standard deviation of x₂: √(1 + 2 b² a⁴).
  double x2_sd() const {
    const double a = static_cast<double>(scale), b = static_cast<double>(twist);
    return std::sqrt(1 + 2 * b * b * a * a * a * a);
  }

  /// Backends the library instantiates (model/library_instances.hpp): the CPU lane kernels and
  /// CUDA's.
  static constexpr unsigned library_backends =
      library_backend::cpu_hmc_lanes | library_backend::hmc;
};

}  // namespace myriad::models
