#pragma once
// Log densities and mass functions written out directly with <cmath>, in probability form, for
// checking models against formulas independent of the library's own (softplus) forms.

#include <cmath>
#include <limits>

namespace myriad::testing {

/// log N(x; mu, sd²).
inline double normal_lpdf(double x, double mu, double sd) {
  const double z = (x - mu) / sd;
  return -0.5 * std::log(2 * M_PI) - std::log(sd) - 0.5 * z * z;
}

/// log HalfCauchy(x; scale) on x ≥ 0, −∞ below.
inline double half_cauchy_lpdf(double x, double scale) {
  if (x < 0) return -std::numeric_limits<double>::infinity();
  return std::log(2.0 / (M_PI * scale)) - std::log(1.0 + (x / scale) * (x / scale));
}

/// 1 / (1 + e^{−logit}).
inline double sigmoid(double logit) { return 1.0 / (1.0 + std::exp(-logit)); }

/// log Bernoulli(y; σ(logit)), y ∈ {0, 1}.
inline double bernoulli_lpmf(double y, double logit) {
  const double p = sigmoid(logit);
  return y == 1.0 ? std::log(p) : std::log(1.0 - p);
}

/// log Binomial(k; n, σ(logit)).
inline double binomial_lpmf(double k, double n, double logit) {
  const double p = sigmoid(logit);
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1) + k * std::log(p) +
         (n - k) * std::log(1.0 - p);
}

}  // namespace myriad::testing
