// Issue 26's radon workload (thesis §9.8; models/radon.hpp): the Minnesota radon regression, 92
// parameters with scales from 0.02 (log σ_y) to 1 (the county offsets), whose log Z (the marginal
// likelihood) has no closed form. As in the thesis, continuous tempering from a fitted base is
// checked against AIS from the same base: two methods that share nothing but the target and the
// base must agree on log Z, and on the target's means, within their errors. Gibbs CT runs with the
// base's metric (TemperingMetric::base: δt = 0.2 in the base's units; the unit metric needs
// δt ≈ 0.025 here, bench/results/tempering-cpu.md), AIS with the thesis's HMC (δt = 0.025, L = 4)
// on sigmoidal temperatures.
//
// Tolerances: |log Ẑ_CT − log Ẑ_AIS| ≤ 4 √(SE_CT² + SE_AIS²) (CT's SE over its chains, AIS's the
// delta-method SE of its log-mean-exp, whose Jensen bias, ≈ −(B/ESS − 1)/(2B), a few thousandths
// of a nat here, is far below it); each of the 92 means within 5 √(SE_CT² + SE_AIS²) (AIS's the
// weighted mean's sd/√ESS). The chains start at the base and reach their equilibrium share of
// the target end within 25 transitions (β's trace, 64 chains); 500 are discarded. HMC is not the
// moments' reference here: on this posterior (a funnel in log σ_b, two groups) ChEES at 32 chains
// × 1000 draws had its MCSEs too small by about 2 (z-scores' RMS 1.9 against a long run).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/run_configs.hpp"
#include "myriad/app/radon_data.hpp"
#include "myriad/run/ais.hpp"
#include "myriad/run/temper.hpp"

namespace myriad {
namespace {

TEST(StatTemperRadon, GibbsCtAgreesWithAisOnLogZAndTheMeans) {
  const auto data = radon_data<double>(minnesota_radon());
  const auto target = data.host_model();
  const VariationalBase base = fit_variational_base(target, VariationalBaseConfig{});

  AisConfig ais_config;
  ais_config.particles = 256;
  ais_config.temperatures = 5000;
  ais_config.schedule = ScheduleKind::sigmoid;
  ais_config.steps = 4;
  ais_config.step_size = 0.025;
  ais_config.refresh = 1.0;
  ais_config.seed = 2017;
  ais_config.bootstrap_replicates = 0;
  ais_config.device = Device::cpu;
  ais_config.base = base.spec();
  const AisResult ais_result = ais(target, ais_config);
  const LogZEstimate& annealed = ais_result.forward.estimates[0];

  TemperConfig config = testing::run_config<TemperConfig>(24, 500, 1000, 2017);
  config.method = TemperMethod::gibbs_ct;
  config.step_size = 0.2;
  config.leapfrog_steps = 20;
  config.metric = TemperingMetric::base;
  config.base = base.spec();
  config.log_zeta = base.log_zeta;
  const TemperResult r = temper(target, config);

  const double combined = std::hypot(r.log_z.se, annealed.se_delta);
  std::printf(
      "[ radon     ] gibbs-ct log Z %.4f ± %.4f, AIS %.4f ± %.4f (ESS %.0f of %lld), log ζ %.4f "
      "(%zu fits); base check %.2f se, β R-hat %.3f, mean β %.2f\n",
      r.log_z.value, r.log_z.se, annealed.log_z, annealed.se_delta, annealed.ess,
      static_cast<long long>(annealed.particles), base.log_zeta, base.components.size(),
      r.max_base_error_in_se, r.beta_rhat, r.mean_beta);
  EXPECT_EQ(r.stats.non_finite, 0);
  EXPECT_EQ(r.dropped, 0);
  EXPECT_NEAR(r.log_z.value, annealed.log_z, 4 * combined);
  EXPECT_LT(combined, 0.15) << "the test has power";
  EXPECT_GT(r.log_z.value, base.log_zeta + 1) << "tempering climbs well above the fit's bound";
  ASSERT_EQ(ais_result.summary.size(), static_cast<std::size_t>(r.dim));
  double worst = 0;
  for (int i = 0; i < r.dim; ++i) {
    const WeightedMoments& annealed_moments = ais_result.summary[static_cast<std::size_t>(i)];
    const double se = std::hypot(r.target_mean[i].se, annealed_moments.mcse_mean);
    worst = std::max(worst, std::fabs(r.target_mean[i].value - annealed_moments.mean) / se);
    EXPECT_NEAR(r.target_mean[i].value, annealed_moments.mean, 5 * se) << r.names[i];
  }
  std::printf("[ radon     ] means: worst |CT - AIS| / SE %.2f over %d\n", worst, r.dim);
}

}  // namespace
}  // namespace myriad
