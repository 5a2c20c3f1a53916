#pragma once
// `arma11`: the ARMA(1, 1) time-series model, posteriordb's arma-arma11 (Stan's model `arma11`,
// data `arma`: T = 200 observations),
//
//   μ ~ N(0, 10²),   φ ~ N(0, 2²),   ϑ ~ N(0, 2²),   σ ~ Cauchy(0, 2.5) on σ > 0,
//   ν_1 = μ + φ μ,                          ε_1 = y_1 − ν_1          (ε_0 = 0, y_0 = μ),
//   ν_t = μ + φ y_{t−1} + ϑ ε_{t−1},         ε_t = y_t − ν_t,          t = 2, …, T,
//   ε_t ~ N(0, σ²),
//
// the one-step prediction errors ε_t computed by the recursion, as Stan's model block does (ϑ is
// Stan's `theta`, the moving-average coefficient). Stan declares `real<lower=0> sigma`, so the
// sampler sees θ = (μ, φ, ϑ, τ) with σ = e^τ (lower_bound_transform, model/transforms.hpp), whose
// density carries the Jacobian dσ/dτ = σ:
//
//   log p(θ) = log N(μ; 0, 10) + log N(φ; 0, 2) + log N(ϑ; 0, 2)
//              + log 2 − log(2.5 π) − log(1 + σ²/2.5²) + τ
//              − T (½ log 2π + τ) − ½ e^{−2τ} Σ_t ε_t²,
//
// every normalising constant included: σ's prior is the Cauchy renormalised to σ > 0 (the
// half-Cauchy; the log 2 is a constant beyond Stan's cauchy_lpdf), so that log Z is the evidence
// log p(y). log(1 + σ²/2.5²) is log1p_exp(2(τ − log 2.5)), which does not overflow, and 1/σ² is
// e^{−2τ}. For |ϑ| > 1 the recursion is not invertible and ε_t grows like ϑ^t: the density is
// then tiny but finite until ε_t² overflows, where it is −∞ (or NaN), which the sampler rejects.
// No gradient of its own: forward-mode duals differentiate log_density.
//
// Arma11<T> is the trivially copyable view the chains evaluate; Arma11Data<T> owns the series
// on the host and, on demand, one copy on the device. Recorded quantities are Stan's variables on
// their own scale, in reference.csv's order: mu, phi, theta, sigma. A library model (C++ API,
// tests/stat's posteriordb ports), not a CLI built-in; the library holds its CUDA HMC instance
// for double.

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
struct Arma11 {
  using value_type = T;
  static constexpr double kMeanSd = 10.0;                           ///< prior sd of μ
  static constexpr double kLogMeanSd = 2.30258509299404568402;      ///< log 10
  static constexpr double kCoefficientSd = 2.0;                     ///< prior sd of φ and ϑ
  static constexpr double kLogCoefficientSd = kLogTwo;              ///< log 2
  static constexpr double kSigmaScale = 2.5;                        ///< Cauchy scale of σ
  static constexpr double kLogSigmaScale = 0.91629073187415506518;  ///< log 2.5

  const T* y = nullptr;  ///< the series y_1 … y_T (0-based here: y[t − 1] is Stan's y[t])
  int n = 0;             ///< T, the series length

  /// μ, φ, ϑ, τ = log σ.
  MYRIAD_HD int dim() const { return 4; }

  /// log p(θ) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    const S mu = x[0], phi = x[1], theta = x[2], tau = x[3];
    S log_jacobian = S(0);
    lower_bound_transform(tau, 0.0, log_jacobian);  // σ = e^τ; adds τ
    const S inv_var = myriad::exp(S(-2) * tau);

    // ε_1 = y_1 − (μ + φ μ), then ε_t = y_t − (μ + φ y_{t−1} + ϑ ε_{t−1}).
    S err = S(y[0]) - (mu + phi * mu);
    S sum_sq = err * err;
    for (int t = 1; t < n; ++t) {
      err = S(y[t]) - (mu + phi * S(y[t - 1]) + theta * err);
      sum_sq += err * err;
    }
    S lp = S(T(-n) * T(kLogSqrtTwoPi)) - S(T(n)) * tau - S(0.5) * sum_sq * inv_var;

    lp += S(T(-kLogSqrtTwoPi - kLogMeanSd)) - S(0.5 / (kMeanSd * kMeanSd)) * mu * mu;
    lp += S(T(-2 * (kLogSqrtTwoPi + kLogCoefficientSd))) -
          S(0.5 / (kCoefficientSd * kCoefficientSd)) * (phi * phi + theta * theta);
    // σ: half-Cauchy(0, 2.5), with log(1 + σ²/2.5²) = log1p_exp(2(τ − log 2.5)).
    lp += S(T(kLogTwo - kLogPi - kLogSigmaScale)) - log1p_exp(S(2) * (tau - S(T(kLogSigmaScale))));
    return lp + log_jacobian;
  }

  /// Recorded quantities: mu, phi, theta, sigma, as reference.csv orders them.
  MYRIAD_HD int num_quantities() const { return 4; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& x, Out& out) const {
    out[0] = T(x[0]);
    out[1] = T(x[1]);
    out[2] = T(x[2]);
    T unused = T(0);
    out[3] = lower_bound_transform(T(x[3]), 0.0, unused);
  }
  std::string quantity_name(int i) const {
    static const char* const names[] = {"mu", "phi", "theta", "sigma"};
    return names[i];
  }

  /// Backends the library instantiates (model/library_instances.hpp).
  static constexpr unsigned library_backends = library_backend::hmc_in_double<T>;
};

/// Owning host data of an arma11 posterior, with an optional device copy uploaded once.
/// Movable, not copyable.
template <class T>
class Arma11Data : public StanSeriesData<Arma11Data<T>, T> {
 public:
  /// Stan's data block: T (passed as `length`: the series length, Stan's `int<lower=1> T`) and
  /// y, its T observations, every one finite. Messages index y from 1, as Stan does. Throws
  /// myriad::invalid_argument naming the first bad field.
  static Arma11Data from_arrays(int length, const std::vector<double>& y) {
    Arma11Data data;
    data.read_series("arma11", "T", 1, length, y);
    return data;
  }

  int length() const { return this->n_; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  Arma11<T> viewing(Copy copy) const {
    return Arma11<T>{copy(this->y_), this->n_};
  }

 private:
  Arma11Data() = default;
};

}  // namespace myriad::models
