#pragma once
// `eight_schools`: the hierarchical model of the SAT coaching experiments (Rubin 1981,
// "Estimation in parallel randomized experiments", J. Educ. Stat. 6(4); Gelman et al.,
// "Bayesian Data Analysis", 3rd ed., §5.5), in the non-centred parameterisation that removes the
// funnel between τ and the school effects (Betancourt & Girolami 2015, "Hamiltonian Monte Carlo
// for hierarchical models"):
//
//   μ ~ N(0, 5²),  τ ~ HalfCauchy(0, 5),  η_j ~ N(0, 1),  θ_j = μ + τ η_j,
//   y_j ~ N(θ_j, σ_j²),  j = 1, …, J  (J = 8 in the standard data).
//
// This is posteriordb's eight_schools_noncentered (its model.stan declares theta_trans, mu, tau;
// here the same density with the parameters in another order), which the CLI also registers
// under that name with its data from --data. Parameters are z = (μ, log τ, η_1, …, η_J). With τ =
// e^ℓ the density of ℓ carries the Jacobian dτ/dℓ = τ, so
//   log p(z) = log N(μ; 0, 5) + log(2/(5π)) − log(1 + τ²/25) + ℓ
//              + Σ_j [log N(η_j; 0, 1) + log N(y_j; μ + τ η_j, σ_j)],
// every normalising constant included, so that log Z is the marginal likelihood log p(y).
// log(1 + τ²/25) is evaluated as log1p_exp(2(ℓ − log 5)), which does not overflow for large ℓ.

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/softplus.hpp"
#include "myriad/model/stacked.hpp"

namespace myriad::models {

template <class T>
struct EightSchools {
  using value_type = T;
  static constexpr double kMuSd = 5.0;                        ///< prior sd of μ
  static constexpr double kLogMuSd = 1.6094379124341003;      ///< log 5
  static constexpr double kTauScale = 5.0;                    ///< half-Cauchy scale s of τ
  static constexpr double kLogTauScale = 1.6094379124341003;  ///< log 5
  /// log(2 / (π s)): the half-Cauchy density is 2 / (π s (1 + τ²/s²)) on τ > 0.
  static constexpr double kLogHalfCauchyNormaliser = -2.061020617723555;

  /// J, the number of schools (8 in the standard data; at most kMaxSchools, so that the model
  /// stays a small trivially copyable struct that a kernel takes by value).
  int schools = 8;
  static constexpr int kMaxSchools = 32;
  /// Observed effects y_j and their standard errors σ_j (BDA3, Table 5.2); entries past J unused.
  T y[kMaxSchools] = {T(28), T(8), T(-3), T(7), T(-1), T(1), T(18), T(12)};
  T sigma[kMaxSchools] = {T(15), T(10), T(16), T(11), T(9), T(11), T(10), T(18)};

  /// The model with the standard data.
  static EightSchools make() { return EightSchools{}; }

  /// The model with other data of the same structure, J = effects.size() groups (posteriordb's
  /// eight_schools data: J, y, sigma); σ_j must be positive.
  static EightSchools make(const std::vector<double>& effects,
                           const std::vector<double>& standard_errors) {
    const int J = static_cast<int>(effects.size());
    MYRIAD_EXPECTS(J >= 1 && J <= kMaxSchools, "eight_schools: J must be in 1..", kMaxSchools,
                   ", got ", J);
    MYRIAD_EXPECTS(standard_errors.size() == effects.size(), "eight_schools: sigma has ",
                   standard_errors.size(), " entries, expected J = ", J);
    EightSchools model;
    model.schools = J;
    for (int j = 0; j < J; ++j) {
      MYRIAD_EXPECTS(std::isfinite(effects[j]), "eight_schools: y[", j + 1,
                     "] must be finite, got ", effects[j]);
      MYRIAD_EXPECTS(std::isfinite(standard_errors[j]) && standard_errors[j] > 0,
                     "eight_schools: sigma[", j + 1, "] must be positive, got ",
                     standard_errors[j]);
      model.y[j] = T(effects[j]);
      model.sigma[j] = T(standard_errors[j]);
    }
    return model;
  }

  /// Simulation-based calibration (run/sbc.hpp): a draw from the prior — μ ~ N(0, 5²),
  /// τ ~ half-Cauchy(0, 5) as 5 tan(πu/2) with u uniform, η_j ~ N(0, 1) — and data from the
  /// model given it, ỹ_j ~ N(μ + τ η_j, σ_j²) with this model's σ_j, from RandomStream(seed,
  /// replication) at iteration 0 (tags user + 0: μ, η and ỹ's normals; user + 1: τ's uniform).
  /// Returns the model on ỹ and writes the draw, unconstrained (μ, log τ, η), to `z`.
  EightSchools simulate(std::uint64_t seed, std::int64_t replication,
                        std::vector<double>& z) const {
    constexpr double kPi = 3.14159265358979323846;
    const RandomStream rng(seed, static_cast<std::uint64_t>(replication));
    const auto normal = static_cast<Purpose>(user_purpose(0));
    const double mu = kMuSd * rng.normal<double>(0, normal, 0);
    const double tau =
        kTauScale *
        std::tan(0.5 * kPi * rng.uniform<double>(0, static_cast<Purpose>(user_purpose(1)), 0));
    z.assign(static_cast<std::size_t>(schools + 2), 0.0);
    z[0] = mu;
    z[1] = std::log(tau);
    EightSchools simulated = *this;
    for (int j = 0; j < schools; ++j) {
      z[2 + j] = rng.normal<double>(0, normal, static_cast<std::uint32_t>(1 + j));
      const double noise =
          rng.normal<double>(0, normal, static_cast<std::uint32_t>(1 + schools + j));
      simulated.y[j] = T(mu + tau * z[2 + j] + static_cast<double>(sigma[j]) * noise);
    }
    return simulated;
  }

  MYRIAD_HD int dim() const { return schools + 2; }

  /// log p(μ, log τ, η) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& z) const {
    using S = std::decay_t<decltype(z[0])>;
    const S mu = z[0];
    const S log_tau = z[1];
    const S tau = exp(log_tau);
    S lp = normal_log_density(mu, S(0), S(kMuSd)) + S(kLogHalfCauchyNormaliser) -
           log1p_exp(S(2) * (log_tau - S(kLogTauScale))) + log_tau;
    for (int j = 0; j < schools; ++j) {
      const S eta = z[2 + j];
      lp += normal_log_density(eta, S(0), S(1)) +
            normal_log_density(S(y[j]), mu + tau * eta, S(sigma[j]));
    }
    return lp;
  }

  /// With r_j = (y_j − θ_j)/σ_j² and s = sigmoid(2(ℓ − log 5)):
  ///   ∂/∂μ = −μ/25 + Σ r_j,   ∂/∂ℓ = 1 − 2s + τ Σ η_j r_j,   ∂/∂η_j = −η_j + τ r_j.
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& z, Grad& grad) const {
    using S = element_t<Vec>;  // a scalar, or a SIMD batch of chains (core/lanes.hpp)
    const S mu = z[0];
    const S log_tau = z[1];
    const S tau = myriad::exp(log_tau);
    // log(1 + e^t) and its derivative sigmoid(t) from one exponential.
    const S t = T(2) * (log_tau - T(kLogTauScale));
    S sigmoid;
    const S softplus = softplus_and_logistic<T>(t, sigmoid);

    S lp = T(-kLogSqrtTwoPi - kLogMuSd) - T(0.5) * mu * mu / T(kMuSd * kMuSd) +
           T(kLogHalfCauchyNormaliser) - softplus + log_tau;
    S d_mu = -mu / T(kMuSd * kMuSd);
    S d_log_tau = T(1) - T(2) * sigmoid;
    for (int j = 0; j < schools; ++j) {
      const S eta = z[2 + j];
      const T inv_var = T(1) / (sigma[j] * sigma[j]);
      const S resid = y[j] - (mu + tau * eta);
      const S r = resid * inv_var;
      lp += T(-2 * kLogSqrtTwoPi) - myriad::log(sigma[j]) - T(0.5) * (eta * eta + resid * r);
      d_mu += r;
      d_log_tau += tau * eta * r;
      grad[2 + j] = -eta + tau * r;
    }
    grad[0] = d_mu;
    grad[1] = d_log_tau;
    return lp;
  }

  /// Recorded quantities: μ, τ and the school effects θ_j = μ + τ η_j.
  MYRIAD_HD int num_quantities() const { return schools + 2; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& z, Out& out) const {
    const T mu = z[0];
    const T tau = myriad::exp(T(z[1]));
    out[0] = mu;
    out[1] = tau;
    for (int j = 0; j < schools; ++j) out[2 + j] = mu + tau * T(z[2 + j]);
  }
  std::string quantity_name(int i) const {
    if (i == 0) return "mu";
    if (i == 1) return "tau";
    return "theta[" + std::to_string(i - 1) + "]";  // Stan's names: theta[1] … theta[J]
  }

  /// Backends the library instantiates (model/library_instances.hpp): the CPU lane kernels and
  /// CUDA's.
  static constexpr unsigned library_backends =
      library_backend::cpu_hmc_lanes | library_backend::hmc;
  /// ... and for Stacked<EightSchools<double>> (model/stacked.hpp; batched simulation-based
  /// calibration).
  static constexpr unsigned stacked_library_backends = library_backend::hmc_in_double<T>;
};

/// R replications of the model as one (batched SBC, run/sbc.hpp).
template <class T>
using StackedEightSchools = Stacked<EightSchools<T>>;

}  // namespace myriad::models
