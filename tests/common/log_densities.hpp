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

/// log Student-t(x; ν, mu, s), the log of Γ((ν + 1)/2) / (Γ(ν/2) √(νπ) s) · (1 + z²/ν)^(−(ν + 1)/2)
/// with z = (x − mu)/s.
inline double student_t_lpdf(double x, double nu, double mu, double s) {
  const double z = (x - mu) / s;
  return std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) - 0.5 * std::log(nu * M_PI) - std::log(s) -
         (nu + 1) / 2 * std::log(1 + z * z / nu);
}

/// log HalfStudent-t(x; ν, scale) on x ≥ 0 (twice the density of Student-t(ν, 0, scale)), −∞
/// below.
inline double half_student_t_lpdf(double x, double nu, double scale) {
  if (x < 0) return -std::numeric_limits<double>::infinity();
  return std::log(2.0) + student_t_lpdf(x, nu, 0, scale);
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
