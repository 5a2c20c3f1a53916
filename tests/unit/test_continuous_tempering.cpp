// Continuous tempering's per-chain pieces (estimate/continuous_tempering.hpp): the weights, the
// exact draw of β given x, and the gradients of the tempered and extended densities; simulated
// tempering's schedules and index conditional (estimate/simulated_tempering.hpp); and the
// estimators' ratio standard errors (estimate/tempering_estimate.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/expect_error.hpp"
#include "common/tempering_targets.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/continuous_tempering.hpp"
#include "myriad/estimate/simulated_tempering.hpp"
#include "myriad/estimate/tempering_estimate.hpp"
#include "myriad/run/temper_config.hpp"

namespace myriad {
namespace {

using testing::expect_invalid_argument;
using testing::ShiftedGaussian;

TEST(TemperingWeights, AreTheBetaConditionalsEndsAndOneAtZeroGap) {
  const TemperingWeights<double> zero = tempering_weights(0.0);
  EXPECT_EQ(zero.base, 1.0);
  EXPECT_EQ(zero.target, 1.0);
  for (const double gap : {-1000.0, -40.0, -1.5, -1e-12, 1e-12, 0.3, 7.0, 40.0, 1000.0}) {
    const TemperingWeights<double> w = tempering_weights(gap);
    ASSERT_TRUE(std::isfinite(w.base) && std::isfinite(w.target)) << gap;
    ASSERT_GE(w.base, 0.0);
    ASSERT_GE(w.target, 0.0);
    // p(β | x) = Δ e^{−βΔ} / (1 − e^{−Δ}) at β = 1 and β = 0 (long double, away from Δ = 0).
    if (std::fabs(gap) > 1e-6 && std::fabs(gap) < 700) {
      const long double d = gap, norm = 1.0L - std::exp(-d);
      EXPECT_NEAR(w.target, static_cast<double>(d * std::exp(-d) / norm), 1e-13 * (1 + w.target));
      EXPECT_NEAR(w.base, static_cast<double>(d / norm), 1e-13 * (1 + w.base));
    } else if (std::fabs(gap) < 1e-6) {
      EXPECT_NEAR(w.target, 1.0 - gap / 2, 1e-15);
      EXPECT_NEAR(w.base, 1.0 + gap / 2, 1e-15);
    }
  }
  EXPECT_EQ(tempering_weights(1000.0).target, 0.0);  // Δ e^{−Δ}: below the smallest double
  EXPECT_DOUBLE_EQ(tempering_weights(1000.0).base, 1000.0);
}

// The draws' empirical CDF against F(β) = expm1(−βΔ) / expm1(−Δ): the Kolmogorov–Smirnov
// distance of n = 20000 draws exceeds sqrt(ln(2/α) / 2n) = 0.0188 with probability α = 1e-6
// under the law.
TEST(DrawInverseTemperature, FollowsTheTruncatedExponentialForEverySignOfTheGap) {
  constexpr int kDraws = 20000;
  const double critical = std::sqrt(std::log(2 / 1e-6) / (2.0 * kDraws));
  const RandomStream rng(11, 0);
  for (const double gap : {-30.0, -2.0, -1e-9, 0.0, 0.5, 5.0, 40.0}) {
    std::vector<double> beta(kDraws);
    for (int n = 0; n < kDraws; ++n) {
      beta[n] = draw_inverse_temperature(
          gap, rng.uniform<double>(static_cast<std::uint32_t>(n), Purpose::temperature, 0));
      ASSERT_GE(beta[n], 0.0);
      ASSERT_LE(beta[n], 1.0);
    }
    std::sort(beta.begin(), beta.end());
    const auto cdf = [gap](double b) {
      return gap == 0.0 ? b : std::expm1(-b * gap) / std::expm1(-gap);
    };
    double distance = 0;
    for (int n = 0; n < kDraws; ++n) {
      const double f = cdf(beta[n]);
      distance = std::max({distance, f - double(n) / kDraws, double(n + 1) / kDraws - f});
    }
    EXPECT_LT(distance, critical) << "gap " << gap;
  }
}

/// Central differences of log_density against log_density_gradient.
template <class Density>
void expect_gradient_matches(const Density& density, std::vector<double> x) {
  std::vector<double> g(x.size());
  density.log_density_gradient(x.data(), g);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double h = 1e-5, keep = x[i];
    x[i] = keep + h;
    const double up = density.log_density(x.data());
    x[i] = keep - h;
    const double down = density.log_density(x.data());
    x[i] = keep;
    EXPECT_NEAR(g[i], (up - down) / (2 * h), 1e-6 * (1 + std::fabs(g[i]))) << "coordinate " << i;
  }
}

TEST(TemperedDensities, GradientsMatchTheirLogDensities) {
  const ShiftedGaussian target{3, 1.5, 0.7, 3.0};
  const double scale[3] = {1.0, 2.0, 0.5};
  const AnnealingBase<double> base{3, nullptr, scale};
  for (const double beta : {0.0, 0.3, 1.0})
    expect_gradient_matches(
        TemperedDensity<ShiftedGaussian, AnnealingBase<double>>{target, base, beta},
        {0.2, -1.1, 2.0});
  const TemperingConstants<double> constants{
      2.0, base_log_normaliser<double>(3, scale, nullptr, nullptr)};
  for (const double u_scale : {1.0, 8.0})
    for (const double u : {-6.0, 0.4, 3.0})
      expect_gradient_matches(
          ContinuouslyTemperedDensity<ShiftedGaussian, AnnealingBase<double>>{target, base,
                                                                              constants, u_scale},
          {0.2, -1.1, 2.0, u});
}

TEST(TemperedDensities, TheExtendedDensityIsTheJointInXAndBeta) {
  // log π(x, u) − log π(x', u) at a fixed u is the tempered density's difference at β = σ(u),
  // and at β → 1 the gap enters as −β Δ: checked through the closed form of the joint (5.20).
  const ShiftedGaussian target{2, 1.0, 1.3, -0.5};
  const AnnealingBase<double> base{2};
  const TemperingConstants<double> constants{
      0.7, base_log_normaliser<double>(2, nullptr, nullptr, nullptr)};
  const ContinuouslyTemperedDensity<ShiftedGaussian, AnnealingBase<double>> extended{
      target, base, constants, 1.0};
  const double x[3] = {0.4, -0.9, 0.8};
  const double beta = 1 / (1 + std::exp(-x[2]));
  const double phi = -target.log_density(x);
  const double psi = -base.log_density(x) + constants.base_log_normaliser;
  const double joint = -beta * phi - beta * constants.log_zeta - (1 - beta) * psi;
  EXPECT_NEAR(extended.log_density(x), joint + std::log(beta) + std::log(1 - beta), 1e-12);
}

/// Simulated tempering's ladder is an annealing schedule (estimate/annealing_schedule.hpp) of
/// K − 1 steps: linear, or sigmoidal as the thesis's (5.53) with s = 4, symmetric about the middle
/// and dense at both ends.
TEST(TemperatureLadder, IsTheAnnealingScheduleOfKMinusOneSteps) {
  TemperConfig config;
  config.method = TemperMethod::simulated_tempering;
  config.temperatures = 5;
  config.schedule = ScheduleKind::linear;
  EXPECT_EQ(config.ladder(), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  config.temperatures = 1001;
  config.schedule = ScheduleKind::sigmoid;
  const std::vector<double> sigmoidal = config.ladder();
  ASSERT_EQ(sigmoidal.size(), 1001u);
  EXPECT_EQ(sigmoidal, make_schedule(ScheduleKind::sigmoid, 1000, 4.0));
  EXPECT_NEAR(sigmoidal[500], 0.5, 1e-15);
  EXPECT_NEAR(sigmoidal[100] + sigmoidal[900], 1.0, 1e-15);
  // Dense at the ends: the first step is under a quarter of a linear schedule's (1e-3) there.
  EXPECT_LT(sigmoidal[1], 0.25e-3);
  config.temperatures = 1;
  expect_invalid_argument([&] { config.validate(); }, "at least 2 inverse temperatures");
  config.beta = {0, 0.5, 0.5, 1};
  expect_invalid_argument([&] { config.validate(); }, "must increase");
  config.beta = {0.1, 1};
  expect_invalid_argument([&] { config.validate(); }, "must start at beta = 0");
}

// p(k | x) ∝ e^{−β_k Δ}: the draws' frequencies within 5 binomial standard errors of it, and the
// end weights are its first and last entries.
TEST(TemperatureLadder, DrawsTheIndexConditionalAndWeighsItsEnds) {
  const std::vector<double> beta = make_schedule(ScheduleKind::sigmoid, 5, 4.0);
  const TemperatureLadder<double> ladder{beta.data(), 6};
  const RandomStream rng(3, 0);
  constexpr int kDraws = 40000;
  for (const double gap : {-3.0, 0.0, 1.5, 800.0}) {
    std::vector<double> p(6);
    double total = 0;
    for (int k = 0; k < 6; ++k) total += p[k] = std::exp(-beta[k] * gap + (gap < 0 ? gap : 0));
    for (double& v : p) v /= total;
    const TemperingWeights<double> ends = ladder.end_weights(gap);
    EXPECT_NEAR(ends.base, p[0], 1e-14) << gap;
    EXPECT_NEAR(ends.target, p[5], 1e-14) << gap;
    std::vector<int> count(6, 0);
    for (int n = 0; n < kDraws; ++n)
      ++count[ladder.draw(
          gap, rng.uniform<double>(static_cast<std::uint32_t>(n), Purpose::temperature, 0))];
    for (int k = 0; k < 6; ++k) {
      const double se = std::sqrt(p[k] * (1 - p[k]) / kDraws);
      EXPECT_NEAR(double(count[k]) / kDraws, p[k], 5 * se + 1e-12) << "gap " << gap << " k " << k;
    }
  }
}

TEST(TemperingSums, RatioStandardErrorsFollowTheSpreadOverChains) {
  // Two chains whose ratios differ: R = (2 + 6) / (2 + 2) = 2, Var R = 2/1 · (2² + 2²) / 4² = 1.
  TemperingSums sums(2, 1);
  const double f1 = 1.0, f3 = 3.0;
  sums.add(0, TemperingWeights<double>{2.0, 2.0}, &f1);
  sums.add(1, TemperingWeights<double>{2.0, 6.0}, &f3);
  const EstimateWithError z = sums.log_z(0.5);
  EXPECT_NEAR(z.value, 0.5 + std::log(2.0), 1e-15);
  EXPECT_NEAR(z.se, 1.0 / 2.0, 1e-15);
  // E_p[f] = (2·1 + 6·3) / 8 = 2.5; a_c − R b_c = 2 − 5, 18 − 15: Var = 2 (9 + 9) / 64.
  const EstimateWithError mean = sums.target_mean(0);
  EXPECT_NEAR(mean.value, 2.5, 1e-15);
  EXPECT_NEAR(mean.se, std::sqrt(36.0 / 64.0), 1e-15);
  EXPECT_NEAR(sums.base_mean(0).value, 2.0, 1e-15);
}

}  // namespace
}  // namespace myriad
