#pragma once
// `garch11`: the GARCH(1, 1) volatility model, posteriordb's garch-garch11 (Stan's model
// `garch11`, data `garch`: T = 200 observations, σ_1 = 0.5),
//
//   y_t ~ N(μ, σ_t²),   σ_1 = sigma1 (data),
//   σ_t² = α_0 + α_1 (y_{t−1} − μ)² + β_1 σ_{t−1}²,   t = 2, …, T,
//
// with no prior statements: flat (improper) priors on μ ∈ ℝ, α_0 > 0, α_1 ∈ (0, 1) and
// β_1 ∈ (0, 1 − α_1), the last a bound that depends on α_1 (stationarity, α_1 + β_1 < 1).
// Stan samples θ = (μ, a, b, c) with
//
//   α_0 = e^a              lower_bound_transform,  log J = a,
//   α_1 = s(b)             interval_transform,     log J = log s(b) + log(1 − s(b)),
//   β_1 = (1 − α_1) s(c)   interval_transform,     log J = log(1 − α_1) + log s(c) + log(1 − s(c)),
//
// s(t) = 1/(1 + e^{−t}), the inverse logit (model/transforms.hpp; s, not σ, which here names the
// volatilities). The log density, with r_t = y_t − μ and v_t = σ_t²,
//
//   log p(θ) = −T ½ log 2π − ½ Σ_t [log v_t + r_t²/v_t] + log J,
//
// is the likelihood with its normalising constant plus the Jacobians (the priors are improper,
// so log Z is not an evidence). The variance recursion runs on v_t directly: Stan's sqrt then
// square is the identity, and log σ_t = ½ log v_t. The bound 1 − α_1 is evaluated as
// s(−b) = e^{−log(1 + e^b)}, which keeps its relative accuracy as α_1 → 1, where Stan's
// 1 − alpha1 keeps few digits (3 at b = 30) and rounds to 0 for b ≳ 37. No gradient of its own:
// forward-mode duals differentiate log_density.
//
// Garch11<T> is the trivially copyable view the chains evaluate; Garch11Data<T> owns the series
// on the host and, on demand, one copy on the device. Recorded quantities are Stan's parameters on
// their own scale, in reference.csv's order: mu, alpha0, alpha1, beta1. A library model (C++ API,
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
struct Garch11 {
  using value_type = T;

  const T* y = nullptr;  ///< the series y_1 … y_T (0-based here: y[t − 1] is Stan's y[t])
  int n = 0;             ///< T, the series length
  T sigma1 = T(1);       ///< σ_1, the first observation's volatility (data)

  /// μ, a = log α_0, b = logit α_1, c = logit(β_1 / (1 − α_1)).
  MYRIAD_HD int dim() const { return 4; }

  /// The constrained parameters (μ, α_0, α_1, β_1) of x, adding the transforms' log-Jacobian.
  template <class Vec, class S>
  MYRIAD_HD static void constrain(const Vec& x, S* params, S& log_jacobian) {
    params[0] = x[0];
    params[1] = lower_bound_transform(S(x[1]), 0.0, log_jacobian);
    const S b = x[2];
    params[2] = interval_transform(b, 0.0, 1.0, log_jacobian);
    const S upper = myriad::exp(-log1p_exp(b));  // 1 − α_1 = s(−b), accurate as α_1 → 1
    params[3] = interval_transform(S(x[3]), 0.0, upper, log_jacobian);
  }

  /// log p(θ) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S log_jacobian = S(0);
    S params[4];
    constrain(x, params, log_jacobian);
    const S mu = params[0], alpha0 = params[1], alpha1 = params[2], beta1 = params[3];

    S r = S(y[0]) - mu;
    S var = S(sigma1 * sigma1);
    S sum = myriad::log(var) + r * r / var;
    for (int t = 1; t < n; ++t) {
      var = alpha0 + alpha1 * r * r + beta1 * var;  // r is still y_{t−1} − μ
      r = S(y[t]) - mu;
      sum += myriad::log(var) + r * r / var;
    }
    return S(T(-n) * T(kLogSqrtTwoPi)) - S(0.5) * sum + log_jacobian;
  }

  /// Recorded quantities: mu, alpha0, alpha1, beta1, as reference.csv orders them.
  MYRIAD_HD int num_quantities() const { return 4; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& x, Out& out) const {
    T params[4];
    T unused = T(0);
    const T u[4] = {T(x[0]), T(x[1]), T(x[2]), T(x[3])};
    constrain(u, params, unused);
    for (int i = 0; i < 4; ++i) out[i] = params[i];
  }
  std::string quantity_name(int i) const {
    static const char* const names[] = {"mu", "alpha0", "alpha1", "beta1"};
    return names[i];
  }

  /// Backends the library instantiates (model/library_instances.hpp).
  static constexpr unsigned library_backends = library_backend::hmc_in_double<T>;
};

/// Owning host data of a garch11 posterior, with an optional device copy uploaded once.
/// Movable, not copyable.
template <class T>
class Garch11Data : public StanSeriesData<Garch11Data<T>, T> {
 public:
  /// Stan's data block: T (passed as `length`: the series length), y, its T observations, and
  /// sigma1, the first observation's volatility. T must be >= 1 (Stan's sigma[1] = sigma1 needs
  /// one observation), every y finite and sigma1 positive and finite (Stan declares
  /// real<lower=0>; 0 would give the first observation a degenerate normal). Messages index y
  /// from 1, as Stan does. Throws myriad::invalid_argument naming the first bad field.
  static Garch11Data from_arrays(int length, const std::vector<double>& y, double sigma1) {
    Garch11Data data;
    data.read_series("garch11", "T", 1, length, y);
    MYRIAD_EXPECTS(std::isfinite(sigma1) && sigma1 > 0,
                   "garch11: sigma1 must be positive and finite, got ", sigma1);
    data.sigma1_ = T(sigma1);
    return data;
  }

  int length() const { return this->n_; }
  T sigma1() const { return sigma1_; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  Garch11<T> viewing(Copy copy) const {
    return Garch11<T>{copy(this->y_), this->n_, sigma1_};
  }

 private:
  Garch11Data() = default;

  T sigma1_ = T(1);
};

}  // namespace myriad::models
