#pragma once
// `low_dim_gauss_mix`: a two-component normal mixture in one dimension, posteriordb's
// low_dim_gauss_mix-low_dim_gauss_mix (Stan's model and data `low_dim_gauss_mix`: N = 1000
// observations),
//
//   μ_1 < μ_2 ~ N(0, 2²) each (ordered),   σ_k ~ N(0, 2²) on σ_k > 0,   θ ~ Beta(5, 5),
//   y_n ~ θ N(μ_1, σ_1²) + (1 − θ) N(μ_2, σ_2²),   n = 1, …, N,
//
// the likelihood Stan's log_mix(θ, normal_lpdf(y_n | μ_1, σ_1), normal_lpdf(y_n | μ_2, σ_2)).
// Stan declares `ordered[2] mu`, `array[2] real<lower=0> sigma` and `real<lower=0, upper=1>
// theta`, so the sampler sees x = (x_0, …, x_4) with (model/transforms.hpp)
//
//   μ_1 = x_0,  μ_2 = μ_1 + e^{x_1}      ordered_transform,      log J = x_1,
//   σ_k = e^{x_{1+k}}                    lower_bound_transform,  log J = x_2 + x_3,
//   θ = σ(x_4) = 1/(1 + e^{−x_4})        interval_transform,     log J = log θ + log(1 − θ).
//
// The log density, every normalising constant included,
//
//   log p(x) = log 2 + Σ_k log N(μ_k; 0, 2) + Σ_k [log 2 + log N(σ_k; 0, 2)]
//              + log 630 + 4 log θ + 4 log(1 − θ)                     (Beta(5, 5): 1/B(5, 5) = 630)
//              + Σ_n log(θ N(y_n; μ_1, σ_1) + (1 − θ) N(y_n; μ_2, σ_2)) + log J,
//
// has each prior normalised on its constrained support (the log 2s beyond Stan's lpdfs: the
// normal pair restricted to μ_1 < μ_2, and the half-normals), so that log Z is the evidence
// log p(y). log θ = −log(1 + e^{−x_4}) and log(1 − θ) = −log(1 + e^{x_4}) come from log1p_exp,
// which keeps both tails, and each observation's mixture is a two-term log-sum-exp with the
// larger term factored out. No gradient of its own: forward-mode duals differentiate
// log_density.
//
// LowDimGaussMix<T> is the trivially copyable view the chains evaluate; LowDimGaussMixData<T>
// owns the observations on the host and, on demand, one copy on the device. Recorded quantities
// are Stan's parameters on their own scale, in reference.csv's order: mu[1], mu[2], sigma[1],
// sigma[2], theta. A library model (C++ API, tests/stat's posteriordb ports), not a CLI
// built-in; the library holds its CUDA HMC instance for double.

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
struct LowDimGaussMix {
  using value_type = T;
  static constexpr double kPriorSd = 2.0;         ///< sd of the priors of μ_k and σ_k
  static constexpr double kLogPriorSd = kLogTwo;  ///< log 2
  static constexpr double kLogInverseBeta55 = 6.44571981938557837191;  ///< log 630 = −log B(5, 5)

  const T* y = nullptr;  ///< the N observations
  int n = 0;             ///< N

  /// μ_1, log(μ_2 − μ_1), log σ_1, log σ_2, logit θ.
  MYRIAD_HD int dim() const { return 5; }

  /// The constrained parameters (μ_1, μ_2, σ_1, σ_2, θ) of x, adding the transforms'
  /// log-Jacobian.
  template <class Vec, class S>
  MYRIAD_HD static void constrain(const Vec& x, S* params, S& log_jacobian) {
    ordered_transform(x, 0, 2, params, log_jacobian);
    params[2] = lower_bound_transform(S(x[2]), 0.0, log_jacobian);
    params[3] = lower_bound_transform(S(x[3]), 0.0, log_jacobian);
    params[4] = interval_transform(S(x[4]), 0.0, 1.0, log_jacobian);
  }

  /// log p(x) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S log_jacobian = S(0);
    S params[5];
    constrain(x, params, log_jacobian);
    const S mu1 = params[0], mu2 = params[1], sigma1 = params[2], sigma2 = params[3];
    const S logit_theta = x[4];
    const S log_theta = -log1p_exp(-logit_theta);
    const S log_one_minus_theta = -log1p_exp(logit_theta);

    // Priors: log 2 (the ordered pair) + two N(0, 2) on μ, two half-N(0, 2) on σ, Beta(5, 5).
    const T inv_prior_var = T(1.0 / (kPriorSd * kPriorSd));
    S lp = S(T(kLogTwo - 2 * (kLogSqrtTwoPi + kLogPriorSd))) -
           S(T(0.5) * inv_prior_var) * (mu1 * mu1 + mu2 * mu2);
    lp += S(T(2 * (kLogTwo - kLogSqrtTwoPi - kLogPriorSd))) -
          S(T(0.5) * inv_prior_var) * (sigma1 * sigma1 + sigma2 * sigma2);
    lp += S(T(kLogInverseBeta55)) + S(4) * (log_theta + log_one_minus_theta);

    // Likelihood: Σ_n log(θ N(y_n; μ_1, σ_1) + (1 − θ) N(y_n; μ_2, σ_2)), the −½ log 2π of every
    // term taken out of the sum; log σ_k = x_{1+k}.
    const S log_weight1 = log_theta - S(x[2]);
    const S log_weight2 = log_one_minus_theta - S(x[3]);
    const S inv_sigma1 = S(1) / sigma1, inv_sigma2 = S(1) / sigma2;
    S sum = S(0);
    for (int i = 0; i < n; ++i) {
      const S z1 = (S(y[i]) - mu1) * inv_sigma1;
      const S z2 = (S(y[i]) - mu2) * inv_sigma2;
      sum += log_sum_exp(log_weight1 - S(0.5) * z1 * z1, log_weight2 - S(0.5) * z2 * z2);
    }
    return lp + sum - S(T(n) * T(kLogSqrtTwoPi)) + log_jacobian;
  }

  /// Recorded quantities: mu[1], mu[2], sigma[1], sigma[2], theta, as reference.csv orders them.
  MYRIAD_HD int num_quantities() const { return 5; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& x, Out& out) const {
    T params[5];
    T unused = T(0);
    const T u[5] = {T(x[0]), T(x[1]), T(x[2]), T(x[3]), T(x[4])};
    constrain(u, params, unused);
    for (int i = 0; i < 5; ++i) out[i] = params[i];
  }
  std::string quantity_name(int i) const {
    static const char* const names[] = {"mu[1]", "mu[2]", "sigma[1]", "sigma[2]", "theta"};
    return names[i];
  }

  /// Backends the library instantiates (model/library_instances.hpp).
  static constexpr unsigned library_backends = library_backend::hmc_in_double<T>;

 private:
  /// log(e^u + e^v), the larger exponent factored out (the branch follows the values, so duals
  /// differentiate the branch taken, which is the same function on either side).
  template <class S>
  MYRIAD_HD static S log_sum_exp(const S& u, const S& v) {
    const bool u_larger = myriad::value_of(u) > myriad::value_of(v);
    const S top = u_larger ? u : v;
    const S other = u_larger ? v : u;
    return top + myriad::log1p(myriad::exp(other - top));
  }
};

/// Owning host data of a low_dim_gauss_mix posterior, with an optional device copy uploaded
/// once. Movable, not copyable.
template <class T>
class LowDimGaussMixData : public StanSeriesData<LowDimGaussMixData<T>, T> {
 public:
  /// Stan's data block: N (Stan's `int<lower=0> N`) and y, its N observations, every one finite.
  /// Messages index y from 1, as Stan does. Throws myriad::invalid_argument naming the first bad
  /// field.
  static LowDimGaussMixData from_arrays(int N, const std::vector<double>& y) {
    LowDimGaussMixData data;
    data.read_series("low_dim_gauss_mix", "N", 0, N, y);
    return data;
  }

  int N() const { return this->n_; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  LowDimGaussMix<T> viewing(Copy copy) const {
    return LowDimGaussMix<T>{copy(this->y_), this->n_};
  }

 private:
  LowDimGaussMixData() = default;
};

}  // namespace myriad::models
