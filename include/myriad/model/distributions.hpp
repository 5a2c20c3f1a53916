#pragma once
// Distributions for plated models (mpis.md §9.2: the paper's models use these): log densities
// and samplers callable from host and device code. Parameters follow the reference code's
// conventions: Normal and LogNormal take a scale (standard deviation), not a variance; the
// Bernoulli and Binomial take logits.
//
//   double lp = dist::Normal{mu, std::exp(log_sigma)}.log_density(z[0]);
//   z[0] = dist::Normal{0.0, 1.0}.sample(rng);

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad::dist {

inline constexpr double kPi = 3.14159265358979323846;

/// N(loc, scale²).
struct Normal {
  double loc = 0.0;
  double scale = 1.0;
  MYRIAD_HD double log_density(double x) const { return normal_log_density(x, loc, scale); }
  template <class Rng>
  MYRIAD_HD double sample(Rng& rng) const {
    return loc + scale * rng.normal();
  }
};

/// Σ_e log N(z_e; 0, 1) of an event vector of n standard normals, summed in order.
MYRIAD_HD inline double standard_normal_log_density(const double* z, int n) {
  double lp = 0.0;
  for (int e = 0; e < n; ++e) lp += Normal{0.0, 1.0}.log_density(z[e]);
  return lp;
}

/// log X ~ N(loc, scale²), X > 0.
struct LogNormal {
  double loc = 0.0;
  double scale = 1.0;
  MYRIAD_HD double log_density(double x) const {
    if (!(x > 0.0)) return -INFINITY;
    const double log_x = myriad::log(x);
    return normal_log_density(log_x, loc, scale) - log_x;
  }
  template <class Rng>
  MYRIAD_HD double sample(Rng& rng) const {
    return myriad::exp(loc + scale * rng.normal());
  }
};

/// Half-Cauchy with scale s: density 2 / (π s (1 + (x/s)²)) on x ≥ 0.
struct HalfCauchy {
  double scale = 1.0;
  MYRIAD_HD double log_density(double x) const {
    if (!(x >= 0.0)) return -INFINITY;
    const double r = x / scale;
    return kLogTwo - kLogPi - myriad::log(scale) - myriad::log1p(r * r);
  }
  template <class Rng>
  MYRIAD_HD double sample(Rng& rng) const {
    return scale * myriad::tan(0.5 * kPi * rng.uniform());
  }
};

/// Exponential with rate λ: density λ e^(−λx) on x ≥ 0.
struct Exponential {
  double rate = 1.0;
  MYRIAD_HD double log_density(double x) const {
    return x >= 0.0 ? myriad::log(rate) - rate * x : -INFINITY;
  }
  template <class Rng>
  MYRIAD_HD double sample(Rng& rng) const {
    return rng.exponential() / rate;
  }
};

/// Bernoulli with P(x = 1) = σ(logit); x is 0 or 1.
struct BernoulliLogits {
  double logit = 0.0;
  /// log σ(l) = −log(1 + e^(−l)), log(1 − σ(l)) = −log(1 + e^l), both without overflow.
  MYRIAD_HD double log_density(double x) const {
    if (x == 1.0) return -log1p_exp(-logit);
    if (x == 0.0) return -log1p_exp(logit);
    return -INFINITY;
  }
  template <class Rng>
  MYRIAD_HD double sample(Rng& rng) const {
    return myriad::log(rng.uniform()) < -log1p_exp(-logit) ? 1.0 : 0.0;
  }
};

/// Binomial(n, σ(logit)): log C(n, k) + k·l − n·log(1 + e^l).
struct BinomialLogits {
  double total = 1.0;  ///< n
  double logit = 0.0;
  MYRIAD_HD double log_density(double k) const {
    if (!(k >= 0.0 && k <= total) || k != static_cast<double>(static_cast<std::int64_t>(k)))
      return -INFINITY;
    const double log_choose =
        myriad::lgamma(total + 1.0) - myriad::lgamma(k + 1.0) - myriad::lgamma(total - k + 1.0);
    return log_choose + k * logit - total * log1p_exp(logit);
  }
  /// A sum of n Bernoulli draws: exact, O(n) (the paper's counts have n ≤ 131).
  template <class Rng>
  MYRIAD_HD double sample(Rng& rng) const {
    const BernoulliLogits trial{logit};
    double k = 0.0;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(total); ++i) k += trial.sample(rng);
    return k;
  }
};

}  // namespace myriad::dist
