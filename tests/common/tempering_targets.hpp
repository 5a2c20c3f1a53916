#pragma once
// A Gaussian target with a known normaliser for the tempering tests: p̃(x) = Z N(x; m 1, s² I)
// in D dimensions. With a standard normal base q = N(0, I) the tempered normaliser
// z(β) = ∫ p̃^β q^{1−β} dx is closed form, so the β-marginal of continuous tempering,
// p(β) ∝ z(β) e^{−β log ζ} (thesis (5.20) integrated over x), is known.

#include <cmath>

#include "myriad/core/hd.hpp"

namespace myriad::testing {

struct ShiftedGaussian {
  using value_type = double;
  int dimension = 1;
  double mean = 0;   ///< m, every coordinate
  double sd = 1;     ///< s
  double log_z = 0;  ///< log Z = log ∫ p̃

  MYRIAD_HD int dim() const { return dimension; }

  template <class Vec>
  MYRIAD_HD double log_density(const Vec& x) const {
    double sum = 0;
    for (int i = 0; i < dimension; ++i) {
      const double z = (double(x[i]) - mean) / sd;
      sum += z * z;
    }
    return log_z - 0.5 * sum - 0.5 * dimension * std::log(2 * M_PI * sd * sd);
  }

  template <class Vec, class Grad>
  MYRIAD_HD double log_density_gradient(const Vec& x, Grad& g) const {
    for (int i = 0; i < dimension; ++i) g[i] = -(double(x[i]) - mean) / (sd * sd);
    return log_density(x);
  }

  /// log z(β) = β log Z + D log ∫ N(x; m, s²)^β N(x; 0, 1)^{1−β} dx: with precision
  /// τ = β/s² + 1 − β and mean μ = β m / (s² τ), the integrand is a Gaussian kernel.
  double log_tempered_normaliser(double beta) const {
    const double tau = beta / (sd * sd) + 1 - beta;
    const double mu = beta * mean / (sd * sd * tau);
    const double per_coordinate =
        -0.5 * beta * std::log(2 * M_PI * sd * sd) - 0.5 * (1 - beta) * std::log(2 * M_PI) +
        0.5 * std::log(2 * M_PI / tau) - 0.5 * (beta * mean * mean / (sd * sd) - tau * mu * mu);
    return beta * log_z + dimension * per_coordinate;
  }
};

}  // namespace myriad::testing
