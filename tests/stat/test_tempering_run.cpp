// myriad::temper (run/temper.hpp) end to end on the CPU: every method on an equicorrelated
// Gaussian target whose log Z (0) and means are exact, with ζ one nat off. Tolerances from the
// estimators' standard errors over 64 independent chains (estimate/tempering_estimate.hpp):
// log Ẑ within 4 SE (the bound), every target mean within 5 SE, the base-moment check
// under 5 SE; and the β traces' rank-normalised R-hat under 1.01 (the usual convergence bound:
// 64 chains × 1500 draws of a target this simple mix in β well within it).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "common/expect_error.hpp"
#include "common/run_configs.hpp"
#include "common/temper_methods.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/run/temper.hpp"

namespace myriad {
namespace {

TemperConfig config_for(TemperMethod method) {
  TemperConfig config = testing::run_config<TemperConfig>(64, 200, 1500, 20261129);
  config.method = method;
  config.step_size = 0.25;
  config.leapfrog_steps = 10;
  config.log_zeta = -1.0;
  config.temperatures = 11;
  config.schedule = ScheduleKind::linear;
  config.initial_u = -2.0;
  return config;
}

class StatTemperRun : public ::testing::TestWithParam<TemperMethod> {};

TEST_P(StatTemperRun, RecoversLogZAndTheMeansOfAGaussian) {
  const auto target = models::Gaussian<double>::make(4, 0.3, 1.0, 0.6);
  const TemperResult r = temper(target, config_for(GetParam()));
  const std::string name = r.method;
  std::printf(
      "[ temper    ] %-9s log Z %+.4f ± %.4f (exact 0), base check %.2f se, β R-hat %.4f, "
      "acceptance %.3f\n",
      name.c_str(), r.log_z.value, r.log_z.se, r.max_base_error_in_se, r.beta_rhat,
      r.mean_accept_prob());
  EXPECT_EQ(r.failed_starts, 0);
  EXPECT_EQ(r.stats.non_finite, 0) << name;
  EXPECT_EQ(r.dropped, 0) << name;
  EXPECT_EQ(r.stats.transitions, r.chains * r.draws) << name;
  EXPECT_NEAR(r.log_z.value, r.log_z_exact, 4 * r.log_z.se) << name;
  EXPECT_LT(r.log_z.se, 0.05) << name << ": the test has power";
  for (int i = 0; i < r.dim; ++i)
    EXPECT_NEAR(r.target_mean[i].value, 1.0, 5 * r.target_mean[i].se) << name << " " << i;
  EXPECT_LT(r.max_base_error_in_se, 5.0) << name;
  EXPECT_LT(r.beta_rhat, 1.01) << name;
  EXPECT_GT(r.mean_accept_prob(), 0.5) << name;
  for (int i = 0; i < r.dim; ++i)  // the target's sd, 0.6: a rough check of the second moments
    EXPECT_NEAR(r.target_sd[i], 0.6, 0.05) << name << " " << i;
}

INSTANTIATE_TEST_SUITE_P(Methods, StatTemperRun, testing::kTemperMethods,
                         testing::TemperMethodName{});

/// HMC with M⁻¹ = diag(s²) on x is HMC with unit mass on z = x / s: a run on a Gaussian of sd 4
/// with the base N(0, 4²) and the base's metric is the run on the Gaussian of sd 1 with the base
/// N(0, 1) and the unit metric, in the same random numbers — the same β trace and log Ẑ (the
/// gap Δ is invariant), and the target's means 4 times as large. s = 4, a power of 2, keeps the
/// scaling exact in binary floating point, so they agree to rounding.
class TemperRunMetric : public ::testing::TestWithParam<TemperMethod> {};

TEST_P(TemperRunMetric, TheBaseMetricIsTheUnitRunInTheBasesCoordinates) {
  TemperConfig config = config_for(GetParam());
  config.chains = 8;
  config.warmup = 10;
  config.draws = 40;
  const TemperResult unit = temper(models::Gaussian<double>::make(4, 0.3, 1.0, 1.0), config);
  config.metric = TemperingMetric::base;
  config.base.isotropic_scale = 4.0;
  const TemperResult scaled = temper(models::Gaussian<double>::make(4, 0.3, 4.0, 4.0), config);
  ASSERT_EQ(unit.beta_trace.size(), scaled.beta_trace.size());
  for (std::size_t k = 0; k < unit.beta_trace.size(); ++k)
    ASSERT_NEAR(scaled.beta_trace[k], unit.beta_trace[k], 1e-9) << "draw-chain " << k;
  EXPECT_NEAR(scaled.log_z.value, unit.log_z.value, 1e-9);
  EXPECT_EQ(scaled.stats.accepted, unit.stats.accepted);
  for (int i = 0; i < unit.dim; ++i)
    EXPECT_NEAR(scaled.target_mean[i].value, 4 * unit.target_mean[i].value, 1e-8) << i;
}

INSTANTIATE_TEST_SUITE_P(Methods, TemperRunMetric, testing::kTemperMethods,
                         testing::TemperMethodName{});

TEST(TemperRun, RefusesBadSettingsInOneLine) {
  using testing::expect_invalid_argument;
  const auto target = models::Gaussian<double>::make(2, 0.0);
  TemperConfig config = config_for(TemperMethod::simulated_tempering);
  config.temperatures = 1;
  expect_invalid_argument([&] { temper(target, config); }, "at least 2 inverse temperatures");
  config = config_for(TemperMethod::gibbs_ct);
  config.chains = 1;
  expect_invalid_argument([&] { temper(target, config); }, "at least 2 chains");
  config = config_for(TemperMethod::ct_hmc);
  config.base.scale = {1.0, -2.0};
  expect_invalid_argument([&] { temper(target, config); }, "base scale[1] must be positive");
  config = config_for(TemperMethod::gibbs_ct);
  config.step_size = 0;
  expect_invalid_argument([&] { temper(target, config); }, "step size must be positive");
}

}  // namespace
}  // namespace myriad
