// HMC on non-centred eight schools against its exact posterior, computed here by quadrature:
// integrating the school effects and μ out analytically leaves a one-dimensional integral over τ
// (BDA3 §5.4), done on a fine grid in log τ.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/hmc_samplers.hpp"
#include "common/run_configs.hpp"
#include "myriad/models/eight_schools.hpp"
#include "myriad/run/sample.hpp"
#include "posterior_check.hpp"

namespace myriad {
namespace {

struct EightSchoolsExact {
  double mu_mean, mu_sd, tau_mean, tau_sd, theta0_mean, theta0_sd;
};

/// Exact posterior moments of μ, τ and θ₀ by quadrature over s = log τ.
/// Given τ: y_j ~ N(μ, V_j = σ_j² + τ²) and μ ~ N(0, A = 25), so
///   p(y | τ) = N(y; 0, diag(V) + A 11ᵀ)   (Sherman–Morrison for the quadratic form),
///   μ | τ, y ~ N(m, v) with 1/v = 1/A + Σ 1/V_j, m = v Σ y_j/V_j,
///   θ_j | τ, y: mean (1 − b) y_j + b m, variance σ_j²τ²/(σ_j² + τ²) + b² v, b = σ_j²/V_j.
EightSchoolsExact eight_schools_by_quadrature() {
  const double y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
  const double sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};
  const double prior_var = 25.0, tau_scale = 5.0;
  double w_sum = 0, mu1 = 0, mu2 = 0, tau1 = 0, tau2 = 0, th1 = 0, th2 = 0;
  const int n = 200000;
  const double s_lo = -14, s_hi = 9, h = (s_hi - s_lo) / n;
  std::vector<double> log_w(n + 1);
  double max_log_w = -INFINITY;
  for (int i = 0; i <= n; ++i) {
    const double tau = std::exp(s_lo + i * h);
    double sum_inv = 0, sum_y = 0, sum_y2 = 0, log_det = 0;
    for (int j = 0; j < 8; ++j) {
      const double v = sigma[j] * sigma[j] + tau * tau;
      sum_inv += 1 / v;
      sum_y += y[j] / v;
      sum_y2 += y[j] * y[j] / v;
      log_det += std::log(v);
    }
    const double c = 1 + prior_var * sum_inv;
    const double quad = sum_y2 - prior_var * sum_y * sum_y / c;
    const double log_lik = -0.5 * (log_det + std::log(c) + quad);
    // Half-Cauchy prior on τ times the Jacobian dτ/ds = τ.
    const double log_prior = -std::log1p(tau * tau / (tau_scale * tau_scale)) + std::log(tau);
    log_w[i] = log_lik + log_prior;
    max_log_w = std::max(max_log_w, log_w[i]);
  }
  for (int i = 0; i <= n; ++i) {
    const double tau = std::exp(s_lo + i * h);
    const double w = std::exp(log_w[i] - max_log_w) * ((i == 0 || i == n) ? 0.5 : 1.0);
    double sum_inv = 0, sum_y = 0;
    for (int j = 0; j < 8; ++j) {
      const double v = sigma[j] * sigma[j] + tau * tau;
      sum_inv += 1 / v;
      sum_y += y[j] / v;
    }
    const double v_mu = 1 / (1 / prior_var + sum_inv);
    const double m_mu = v_mu * sum_y;
    const double b = sigma[0] * sigma[0] / (sigma[0] * sigma[0] + tau * tau);
    const double m_th = (1 - b) * y[0] + b * m_mu;
    const double v_th =
        sigma[0] * sigma[0] * tau * tau / (sigma[0] * sigma[0] + tau * tau) + b * b * v_mu;
    w_sum += w;
    mu1 += w * m_mu;
    mu2 += w * (v_mu + m_mu * m_mu);
    tau1 += w * tau;
    tau2 += w * tau * tau;
    th1 += w * m_th;
    th2 += w * (v_th + m_th * m_th);
  }
  EightSchoolsExact e;
  e.mu_mean = mu1 / w_sum;
  e.mu_sd = std::sqrt(mu2 / w_sum - e.mu_mean * e.mu_mean);
  e.tau_mean = tau1 / w_sum;
  e.tau_sd = std::sqrt(tau2 / w_sum - e.tau_mean * e.tau_mean);
  e.theta0_mean = th1 / w_sum;
  e.theta0_sd = std::sqrt(th2 / w_sum - e.theta0_mean * e.theta0_mean);
  return e;
}

TEST(StatEightSchools, QuadratureMatchesTheWellKnownPosterior) {
  // The published posterior (e.g. posteriordb's eight_schools reference): E[μ] ≈ 4.4,
  // E[τ] ≈ 3.6. This guards the quadrature itself.
  const EightSchoolsExact e = eight_schools_by_quadrature();
  EXPECT_NEAR(e.mu_mean, 4.4, 0.15);
  EXPECT_NEAR(e.tau_mean, 3.6, 0.15);
  EXPECT_NEAR(e.mu_sd, 3.3, 0.15);
}

/// Fixed-length HMC, ChEES, SNAPER and NUTS against the quadrature.
class StatEightSchoolsSampler : public ::testing::TestWithParam<HmcSampler> {};

INSTANTIATE_TEST_SUITE_P(Samplers, StatEightSchoolsSampler,
                         ::testing::Values(HmcSampler::hmc, HmcSampler::chees, HmcSampler::snaper,
                                           HmcSampler::nuts),
                         testing::HmcSamplerName{});

TEST_P(StatEightSchoolsSampler, AgreesWithExactPosteriorWithinFiveMcse) {
  const EightSchoolsExact exact = eight_schools_by_quadrature();
  SampleConfig config = myriad::testing::run_config(256, 500, 400, 8);
  config.sampler = GetParam();
  const SampleResult result = sample(models::EightSchools<double>::make(), config);

  const int mu = testing::quantity_index(result, "mu");
  const int tau = testing::quantity_index(result, "tau");
  const int theta0 =
      testing::quantity_index(result, "theta[1]");  // the first school, in Stan's names
  const auto identity = [](double x) { return x; };
  testing::expect_within_mcse(testing::mean_of(result, mu, identity), exact.mu_mean, "E[mu]");
  testing::expect_within_mcse(testing::mean_of(result, tau, identity), exact.tau_mean, "E[tau]");
  testing::expect_within_mcse(testing::mean_of(result, theta0, identity), exact.theta0_mean,
                              "E[theta0]");
  testing::expect_within_mcse(
      testing::mean_of(result, mu,
                       [&](double x) { return (x - exact.mu_mean) * (x - exact.mu_mean); }),
      exact.mu_sd * exact.mu_sd, "Var[mu]");
  for (const auto& row : result.summary) EXPECT_LT(row.rhat, 1.01) << row.name;
  // The non-centred form is well conditioned: divergences are rare (counted, not hidden); the
  // adaptive samplers' harmonic-mean step size leaves none.
  EXPECT_LT(result.sampling_stats.divergent, result.sampling_stats.transitions / 100);
  if (GetParam() != HmcSampler::hmc) {
    EXPECT_EQ(result.sampling_stats.divergent, 0);
  }
}

}  // namespace
}  // namespace myriad
