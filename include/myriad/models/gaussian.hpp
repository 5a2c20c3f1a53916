#pragma once
// `gaussian`: an equicorrelated multivariate normal, N(m·1, s²[(1 − ρ)I + ρ11ᵀ]), with an
// exact answer: every coordinate has mean m and standard deviation s, pairwise correlation ρ.
//
// The covariance has a closed-form inverse and determinant (Sherman–Morrison, matrix
// determinant lemma), so density and gradient cost O(D):
//   Σ⁻¹ = [I − c 11ᵀ] / (s²(1 − ρ)),   c = ρ / (1 − ρ + Dρ),
//   log|Σ| = D log s² + (D − 1) log(1 − ρ) + log(1 + (D − 1)ρ).
// Valid for −1/(D − 1) < ρ < 1.

#include <cmath>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"

namespace myriad::models {

template <class T>
struct Gaussian {
  using value_type = T;
  int dimension = 2;
  T mean = T(0);
  T sd = T(1);
  T rho = T(0);
  T precision_scale = T(1);  ///< 1 / (s²(1 − ρ))
  T rank_one_weight = T(0);  ///< c = ρ / (1 − ρ + Dρ)
  T log_normaliser = T(0);   ///< −D/2 log 2π − ½ log|Σ|

  /// Validates the arguments and precomputes the closed-form inverse.
  static Gaussian make(int dim, double rho, double mean = 0.0, double sd = 1.0) {
    MYRIAD_EXPECTS(dim >= 1, "gaussian: dim must be >= 1, got ", dim);
    MYRIAD_EXPECTS(std::isfinite(mean), "gaussian: mean must be finite, got ", mean);
    MYRIAD_EXPECTS(std::isfinite(sd) && sd > 0, "gaussian: sd must be positive, got ", sd);
    const double lower = dim > 1 ? -1.0 / (dim - 1) : -1.0;
    MYRIAD_EXPECTS(rho > lower && rho < 1.0, "gaussian: rho must lie in (", lower,
                   ", 1) for dim ", dim, ", got ", rho);
    Gaussian g;
    g.dimension = dim;
    g.mean = T(mean);
    g.sd = T(sd);
    g.rho = T(rho);
    g.precision_scale = T(1.0 / (sd * sd * (1.0 - rho)));
    g.rank_one_weight = T(rho / (1.0 - rho + dim * rho));
    const double log_det = dim * std::log(sd * sd) + (dim - 1) * std::log1p(-rho) +
                           std::log1p((dim - 1) * rho);
    g.log_normaliser = T(-0.5 * dim * std::log(2.0 * M_PI) - 0.5 * log_det);
    return g;
  }

  MYRIAD_HD int dim() const { return dimension; }

  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum = S(0), sum_sq = S(0);
    for (int i = 0; i < dimension; ++i) {
      const S y = x[i] - mean;
      sum += y;
      sum_sq += y * y;
    }
    return S(log_normaliser) - S(0.5) * precision_scale * (sum_sq - rank_one_weight * sum * sum);
  }

  /// ∇ log p = −Σ⁻¹(x − m) = −[(x − m) − c Σᵢ(xᵢ − m) 1] / (s²(1 − ρ)).
  template <class Vec, class Grad>
  MYRIAD_HD T log_density_gradient(const Vec& x, Grad& grad) const {
    T sum = T(0), sum_sq = T(0);
    for (int i = 0; i < dimension; ++i) {
      const T y = x[i] - mean;
      sum += y;
      sum_sq += y * y;
    }
    const T shift = rank_one_weight * sum;
    for (int i = 0; i < dimension; ++i) grad[i] = -precision_scale * ((x[i] - mean) - shift);
    return log_normaliser - T(0.5) * precision_scale * (sum_sq - shift * sum);
  }
};

}  // namespace myriad::models
