#pragma once
// `arK`: the autoregressive model of order K, posteriordb's arK-arK (Stan's model `arK`, data
// `arK`: K = 5 lags, T = 200 observations),
//
//   α ~ N(0, 10²),   β_k ~ N(0, 10²) (k = 1 … K),   σ ~ Cauchy(0, 2.5) on σ > 0,
//   y_t ~ N(μ_t, σ²),   μ_t = α + Σ_{k=1}^{K} β_k y_{t−k},   t = K + 1, …, T,
//
// the first K observations conditioned on, not modelled. Stan declares `real<lower=0> sigma`, so
// the sampler sees θ = (α, β_1, …, β_K, τ) with σ = e^τ (lower_bound_transform,
// model/transforms.hpp), whose density carries the Jacobian dσ/dτ = σ. With n = T − K modelled
// observations and r_t = y_t − μ_t,
//
//   log p(θ) = log N(α; 0, 10) + Σ_k log N(β_k; 0, 10)
//              + log 2 − log(2.5 π) − log(1 + σ²/2.5²) + τ
//              − n (½ log 2π + τ) − ½ e^{−2τ} Σ_t r_t²,
//
// every normalising constant included: σ's prior is the Cauchy renormalised to σ > 0 (the
// half-Cauchy; the log 2 is a constant beyond Stan's cauchy_lpdf), so that log Z is the evidence
// log p(y_{K+1:T} | y_{1:K}). log(1 + σ²/2.5²) is log1p_exp(2(τ − log 2.5)), which does not
// overflow for large τ, and 1/σ² is e^{−2τ}, which does not underflow to a division by zero for
// very negative τ. No gradient of its own: forward-mode duals differentiate log_density.
//
// ArK<T> is the trivially copyable view the chains evaluate; ArKData<T> owns the series on the
// host and, on demand, one copy on the device. Recorded quantities are Stan's variables on their
// own scale, in reference.csv's order: alpha, beta[1] … beta[K], sigma. A library model (C++
// API, tests/stat's posteriordb ports), not a CLI built-in; the library holds its CUDA HMC
// instance for double.

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/transforms.hpp"
#include "myriad/models/stan_vector.hpp"

namespace myriad::models {

template <class T>
struct ArK {
  using value_type = T;
  static constexpr double kCoefficientSd = 10.0;  ///< prior sd of α and every β_k
  static constexpr double kLogCoefficientSd = 2.30258509299404568402;  ///< log 10
  static constexpr double kSigmaScale = 2.5;                           ///< Cauchy scale of σ
  static constexpr double kLogSigmaScale = 0.91629073187415506518;     ///< log 2.5

  const T* y = nullptr;  ///< the series y_1 … y_T (0-based here: y[t − 1] is Stan's y[t])
  int n = 0;             ///< T, the series length
  int lags = 0;          ///< K, the order

  /// α, β_1 … β_K, τ = log σ.
  MYRIAD_HD int dim() const { return lags + 2; }

  /// log p(θ) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& theta) const {
    using S = std::decay_t<decltype(theta[0])>;
    S log_jacobian = S(0);
    const S alpha = theta[0];
    const S tau = theta[lags + 1];
    lower_bound_transform(tau, 0.0, log_jacobian);  // σ = e^τ; adds τ
    const S inv_var = myriad::exp(S(-2) * tau);

    S sum_sq = S(0);
    for (int t = lags; t < n; ++t) {  // Stan's t = K + 1 … T
      S mu = alpha;
      for (int k = 1; k <= lags; ++k) mu += theta[k] * S(y[t - k]);
      const S r = S(y[t]) - mu;
      sum_sq += r * r;
    }
    const int observed = n - lags;
    S lp = S(T(-observed) * T(kLogSqrtTwoPi)) - S(T(observed)) * tau - S(0.5) * sum_sq * inv_var;

    // α and the β_k: independent N(0, 10²).
    S coef_sq = alpha * alpha;
    for (int k = 1; k <= lags; ++k) coef_sq += theta[k] * theta[k];
    lp += S(T(-(lags + 1)) * T(kLogSqrtTwoPi + kLogCoefficientSd)) -
          S(0.5 / (kCoefficientSd * kCoefficientSd)) * coef_sq;

    // σ: half-Cauchy(0, 2.5), with log(1 + σ²/2.5²) = log1p_exp(2(τ − log 2.5)).
    lp += S(T(kLogTwo - kLogPi - kLogSigmaScale)) - log1p_exp(S(2) * (tau - S(T(kLogSigmaScale))));
    return lp + log_jacobian;
  }

  /// Recorded quantities: alpha, beta[1] … beta[K], sigma, as reference.csv orders them.
  MYRIAD_HD int num_quantities() const { return lags + 2; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& theta, Out& out) const {
    for (int i = 0; i <= lags; ++i) out[i] = T(theta[i]);
    T unused = T(0);
    out[lags + 1] = lower_bound_transform(T(theta[lags + 1]), 0.0, unused);
  }
  std::string quantity_name(int i) const {
    if (i == 0) return "alpha";
    if (i <= lags) return "beta[" + std::to_string(i) + "]";
    return "sigma";
  }

  /// Backends the library instantiates (model/library_instances.hpp).
  static constexpr unsigned library_backends = library_backend::hmc_in_double<T>;
};

/// Owning host data of an arK posterior, with an optional device copy uploaded once.
/// Movable, not copyable.
template <class T>
class ArKData : public StanSeriesData<ArKData<T>, T> {
 public:
  /// Stan's data block: K (the order), T (passed as `length`: the series length) and y, its T
  /// observations. K must be in 1 … T − 1 (at least one modelled observation) and every y
  /// finite. Messages index y from 1, as Stan does. Throws myriad::invalid_argument naming the
  /// first bad field.
  static ArKData from_arrays(int K, int length, const std::vector<double>& y) {
    MYRIAD_EXPECTS(length >= 2, "arK: T must be >= 2, got ", length);
    MYRIAD_EXPECTS(K >= 1 && K <= length - 1, "arK: K must be in 1..T-1, got ", K);
    ArKData data;
    data.read_series("arK", "T", 2, length, y);
    data.lags_ = K;
    return data;
  }

  int K() const { return lags_; }
  int length() const { return this->n_; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  ArK<T> viewing(Copy copy) const {
    return ArK<T>{copy(this->y_), this->n_, lags_};
  }

 private:
  ArKData() = default;

  int lags_ = 0;
};

}  // namespace myriad::models
