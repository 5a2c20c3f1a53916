#pragma once
// `linear_regression`: the normal linear model with an unknown noise scale, as posteriordb's
// regression posteriors write it (kidiq, earnings, mesquite, nes, blr, kilpisjarvi),
//
//   y_i ~ N(x_iᵀβ, σ²),   β_j ~ N(m_j, s_j²) or flat,   σ ~ half-Cauchy(0, a), half-N(0, a²) or
//   flat on (0, ∞),
//
// sampled on the unconstrained scale θ = (β, τ = log σ) as Stan samples `real<lower=0> sigma`:
// the density of τ carries the Jacobian dσ/dτ = σ. With r = y − Xβ and n observations,
//
//   log p(θ) = −½ Σ_i r_i²/σ² − n log σ − (n/2) log 2π − Σ_j ½ (β_j − m_j)²/s_j² + log p_σ(σ) + τ
//
// (the normal priors' constants −log(s_j √(2π)) and the half-distributions' log 2 included), and
//
//   ∂/∂β_j = Σ_i r_i x_ij / σ² − (β_j − m_j)/s_j²,
//   ∂/∂τ   = Σ_i r_i²/σ² − n + σ · d log p_σ/dσ + 1,
//
// with σ · d log p_σ/dσ = −2u/(1 + u), u = (σ/a)², for the half-Cauchy, −(σ/a)² for the
// half-normal and 0 for the flat prior.
//
// LinearRegression<T> is the trivially copyable view the chains evaluate (X row-major n × k, y,
// and the k prior means and standard deviations, an infinite sd meaning a flat prior);
// LinearRegressionData<T> owns them on the host and, on demand, one copy on the device. Recorded
// quantities are on the constrained scale and named as Stan names them: beta[1] … beta[k], sigma.
// A library model (for the C++ API and the tests' posteriordb ports,
// tests/stat/test_hmc_posteriordb.cpp), not yet a CLI built-in: it has no data of its own, and
// the library holds no CUDA instance of it (compile one with nvcc, as for any user model).

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"

namespace myriad::models {

/// The prior of the noise scale σ.
enum class ScalePrior { flat, half_cauchy, half_normal };

template <class T>
struct LinearRegression {
  using value_type = T;
  static constexpr double kLogSqrtTwoPi = 0.91893853320467274178;  ///< ½ log 2π
  static constexpr double kLogTwo = 0.69314718055994530942;
  static constexpr double kLogPi = 1.14472988584940017414;

  const T* x = nullptr;           ///< n × k design matrix, row-major
  const T* y = nullptr;           ///< n responses
  const T* prior_mean = nullptr;  ///< k prior means m_j
  const T* prior_sd = nullptr;    ///< k prior sds s_j; +inf: flat
  int n = 0;                      ///< observations
  int k = 0;                      ///< coefficients (columns of X)
  ScalePrior scale_prior = ScalePrior::flat;
  T scale = T(1);  ///< a, the scale of σ's prior (unused when flat)

  MYRIAD_HD int dim() const { return k + 1; }

  /// log p(θ) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& theta) const {
    using S = std::decay_t<decltype(theta[0])>;
    const S tau = theta[k];
    const S sigma = myriad::exp(tau);
    const S inv_var = S(1) / (sigma * sigma);
    S sum_sq = S(0);
    for (int i = 0; i < n; ++i) {
      const T* row = x + static_cast<std::int64_t>(i) * k;
      S r = S(y[i]);
      for (int j = 0; j < k; ++j) r -= S(row[j]) * theta[j];
      sum_sq += r * r;
    }
    S lp = S(-0.5) * sum_sq * inv_var - S(n) * tau - S(T(n) * T(kLogSqrtTwoPi)) + tau;
    for (int j = 0; j < k; ++j) {
      if (myriad::isfinite(prior_sd[j])) {
        const S z = (theta[j] - S(prior_mean[j])) / S(prior_sd[j]);
        lp += S(-0.5) * z * z - S(myriad::log(prior_sd[j]) + T(kLogSqrtTwoPi));
      }
    }
    return lp + log_scale_prior(sigma);
  }

  /// log p(θ) and its gradient in one pass over the rows of X.
  template <class Vec, class Grad>
  MYRIAD_HD T log_density_gradient(const Vec& theta, Grad& grad) const {
    const T tau = theta[k];
    const T sigma = myriad::exp(tau);
    const T inv_var = T(1) / (sigma * sigma);
    for (int j = 0; j < k; ++j) grad[j] = T(0);
    T sum_sq = T(0);
    for (int i = 0; i < n; ++i) {
      const T* row = x + static_cast<std::int64_t>(i) * k;
      T r = y[i];
      for (int j = 0; j < k; ++j) r -= row[j] * theta[j];
      sum_sq += r * r;
      for (int j = 0; j < k; ++j) grad[j] += r * row[j];
    }
    T lp = T(-0.5) * sum_sq * inv_var - T(n) * tau - T(n) * T(kLogSqrtTwoPi) + tau;
    for (int j = 0; j < k; ++j) {
      grad[j] *= inv_var;
      if (myriad::isfinite(prior_sd[j])) {
        const T z = (theta[j] - prior_mean[j]) / prior_sd[j];
        lp += T(-0.5) * z * z - (myriad::log(prior_sd[j]) + T(kLogSqrtTwoPi));
        grad[j] -= z / prior_sd[j];
      }
    }
    grad[k] = sum_sq * inv_var - T(n) + scale_prior_slope(sigma) + T(1);
    return lp + log_scale_prior(sigma);
  }

  /// Recorded quantities: β on its own scale and σ = e^τ.
  MYRIAD_HD int num_quantities() const { return k + 1; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& theta, Out& out) const {
    for (int j = 0; j < k; ++j) out[j] = theta[j];
    out[k] = myriad::exp(theta[k]);
  }
  std::string quantity_name(int i) const {
    return i < k ? "beta[" + std::to_string(i + 1) + "]" : "sigma";
  }

  /// log p_σ(σ), normalised on (0, ∞); 0 for the flat prior.
  template <class S>
  MYRIAD_HD S log_scale_prior(const S& sigma) const {
    const S u = sigma / S(scale);
    switch (scale_prior) {
      case ScalePrior::half_cauchy:
        return S(T(kLogTwo) - T(kLogPi) - myriad::log(scale)) - myriad::log1p(u * u);
      case ScalePrior::half_normal:
        return S(T(kLogTwo) - T(kLogSqrtTwoPi) - myriad::log(scale)) - S(0.5) * u * u;
      default:
        return S(0);
    }
  }

  /// σ · d log p_σ(σ)/dσ: the prior's term of ∂/∂τ.
  MYRIAD_HD T scale_prior_slope(T sigma) const {
    const T u = sigma / scale;
    switch (scale_prior) {
      case ScalePrior::half_cauchy:
        return T(-2) * u * u / (T(1) + u * u);
      case ScalePrior::half_normal:
        return -u * u;
      default:
        return T(0);
    }
  }
};

/// Owning host data of a linear regression, with an optional device copy uploaded once.
/// Movable, not copyable.
template <class T>
class LinearRegressionData {
 public:
  /// x is n × k row-major (a column of ones for an intercept); prior_mean and prior_sd have k
  /// entries (an infinite sd: a flat prior on that coefficient); `scale` is a, the scale of σ's
  /// prior. Throws myriad::invalid_argument naming the first bad entry.
  static LinearRegressionData from_arrays(std::vector<T> x, std::vector<T> y, int n, int k,
                                          std::vector<T> prior_mean, std::vector<T> prior_sd,
                                          ScalePrior scale_prior, double scale) {
    MYRIAD_EXPECTS(n >= 1, "linear_regression: n must be >= 1, got ", n);
    MYRIAD_EXPECTS(k >= 1, "linear_regression: k must be >= 1, got ", k);
    const std::size_t entries = static_cast<std::size_t>(n) * static_cast<std::size_t>(k);
    MYRIAD_EXPECTS(x.size() == entries, "linear_regression: x has ", x.size(),
                   " entries, expected n*k = ", entries);
    MYRIAD_EXPECTS(y.size() == static_cast<std::size_t>(n), "linear_regression: y has ", y.size(),
                   " entries, expected n = ", n);
    MYRIAD_EXPECTS(prior_mean.size() == static_cast<std::size_t>(k) &&
                       prior_sd.size() == static_cast<std::size_t>(k),
                   "linear_regression: the priors need k = ", k, " means and sds");
    for (std::size_t e = 0; e < entries; ++e)
      MYRIAD_EXPECTS(std::isfinite(x[e]), "linear_regression: x[", e / k, "][", e % k,
                     "] is not finite");
    for (int i = 0; i < n; ++i)
      MYRIAD_EXPECTS(std::isfinite(y[i]), "linear_regression: y[", i, "] is not finite");
    for (int j = 0; j < k; ++j) {
      MYRIAD_EXPECTS(std::isfinite(prior_mean[j]), "linear_regression: prior mean ", j,
                     " is not finite");
      MYRIAD_EXPECTS(prior_sd[j] > 0, "linear_regression: prior sd ", j,
                     " must be positive (infinite: flat), got ", prior_sd[j]);
    }
    MYRIAD_EXPECTS(scale_prior == ScalePrior::flat || (std::isfinite(scale) && scale > 0),
                   "linear_regression: the scale prior's scale must be positive, got ", scale);
    LinearRegressionData d;
    d.model_.n = n;
    d.model_.k = k;
    d.model_.scale_prior = scale_prior;
    d.model_.scale = T(scale_prior == ScalePrior::flat ? 1.0 : scale);
    d.x_ = std::move(x);
    d.y_ = std::move(y);
    d.prior_mean_ = std::move(prior_mean);
    d.prior_sd_ = std::move(prior_sd);
    return d;
  }

  /// k flat coefficient priors (Stan's default for an unbounded `vector[k] beta` with no prior).
  static std::vector<T> flat(int k) {
    return std::vector<T>(static_cast<std::size_t>(k), std::numeric_limits<T>::infinity());
  }

  int n() const { return model_.n; }
  int k() const { return model_.k; }

  /// A model viewing the host copy (CPU backend); valid while this object lives.
  LinearRegression<T> host_model() const {
    return view(x_.host_data(), y_.host_data(), prior_mean_.host_data(), prior_sd_.host_data());
  }

  /// A model viewing the device copy, uploaded on the first call. Throws
  /// myriad::unavailable_error in a build without CUDA. Valid while this object lives.
  LinearRegression<T> device_model() {
    return view(x_.device_data(), y_.device_data(), prior_mean_.device_data(),
                prior_sd_.device_data());
  }

 private:
  LinearRegressionData() = default;

  LinearRegression<T> view(const T* x, const T* y, const T* mean, const T* sd) const {
    LinearRegression<T> m = model_;
    m.x = x;
    m.y = y;
    m.prior_mean = mean;
    m.prior_sd = sd;
    return m;
  }

  LinearRegression<T> model_;
  MirroredArray<T> x_, y_, prior_mean_, prior_sd_;
};

}  // namespace myriad::models
