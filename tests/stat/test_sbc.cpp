// Simulation-based calibration (run/sbc.hpp) of the samplers on built-in models, through the
// registry as `myriad sbc` runs them: HMC at its defaults (ChEES) on eight_schools with every
// replication in one batch of chains (model/stacked.hpp), on a small logistic regression one
// replication after another, and constrained HMC on linear_gaussian one after another; each at
// R = 200 replications of 16 chains × (500 + 500), ranks among L = 99 draws.
//
// A calibrated sampler gives uniform ranks. Each quantity must pass both tests of diag/sbc.hpp:
// Pearson's chi-square over 20 bins (19 degrees of freedom) with p ≥ 0.001, and the ECDF of its
// ranks inside the simultaneous 99.9% bands of Säilynoja et al. (2022). Over the 19 quantities
// of the three models, a calibrated sampler fails one of the 38 tests with probability at most
// 3.8%; a sampler off by a fraction of a posterior sd fails them (the power is checked in
// tests/unit/test_sbc_statistics.cpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/run_configs.hpp"
#include "myriad/app/registry.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/run/sbc.hpp"

namespace myriad {
namespace {

SbcResult calibrate(const std::string& model,
                    const std::vector<std::pair<std::string, std::string>>& arguments,
                    bool batched = false) {
  const ModelSpec& spec = find_model(model);
  EXPECT_TRUE(static_cast<bool>(spec.sbc)) << model << " states no simulation";
  const ModelArguments args(spec, arguments);
  SbcConfig sbc;
  sbc.replications = 200;
  sbc.posterior_draws = 99;
  sbc.bins = 20;
  sbc.alpha = 0.001;
  sbc.seed = 2026;
  ChmcConfig config;
  static_cast<SampleConfig&>(config) = testing::run_config(16, 500, 500, sbc.seed);
  if (spec.kind == ModelKind::generator) {
    config.sampler = HmcSampler::hmc;
    config.metric = MetricKind::diag;
  }
  // As `myriad sbc --batch on|off` runs them on the CPU: unbatched, replications at once.
  const SbcResult result = batched ? spec.sbc_batch(args, sbc, config, [](std::int64_t) {})
                                   : run_sbc(
                                         sbc, config,
                                         [&](std::int64_t r, const SampleConfig& run) {
                                           ChmcConfig settings = config;
                                           static_cast<SampleConfig&>(settings) = run;
                                           return spec.sbc(args, sbc.seed, r, settings);
                                         },
                                         [](std::int64_t) {}, cpu_threads());
  EXPECT_EQ(result.replications, 200);
  for (const SbcQuantity& q : result.quantities) {
    EXPECT_GE(q.histogram.p_value, 0.001)
        << model << " " << q.name << ": chi-square " << q.histogram.chi_square;
    EXPECT_TRUE(q.bands.inside) << model << " " << q.name << ": ECDF outside its bands";
    std::printf("%s %s: chi-square p %.3f, ECDF %s\n", model.c_str(), q.name.c_str(),
                q.histogram.p_value, q.bands.inside ? "inside" : "OUTSIDE");
  }
  return result;
}

TEST(StatSbc, HmcOnEightSchoolsAsOneBatch) {
  const SbcResult result = calibrate("eight_schools", {}, /*batched=*/true);
  EXPECT_EQ(result.names.size(), 10u);
}

TEST(StatSbc, HmcOnLogisticRegression) {
  const SbcResult result =
      calibrate("logistic", {{"n", "40"}, {"d", "3"}, {"prior_sd", "1"}, {"data_seed", "3"}});
  EXPECT_EQ(result.names.size(), 3u);
}

TEST(StatSbc, ChmcOnLinearGaussian) {
  const SbcResult result = calibrate("linear_gaussian", {});
  EXPECT_EQ(result.names.size(), 6u);
}

}  // namespace
}  // namespace myriad
