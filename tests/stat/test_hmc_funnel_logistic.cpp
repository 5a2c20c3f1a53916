// Neal's funnel: divergences are detected, counted and reported, never a crash; the marginal of v
// is N(0, 3) away from the neck. Logistic regression: a well-posed target with R-hat < 1.01.

#include <gtest/gtest.h>

#include "common/run_configs.hpp"
#include "myriad/models/funnel.hpp"
#include "myriad/models/logistic.hpp"
#include "myriad/run/sample.hpp"
#include "posterior_check.hpp"

namespace myriad {
namespace {

TEST(StatFunnel, DivergencesAreCountedNotFatal) {
  SampleConfig config = myriad::testing::run_config(128, 200, 200, 3);
  testing::fixed_length_hmc(config);
  const SampleResult result = sample(models::Funnel<double>::make(10), config);
  // The funnel's neck needs step sizes far below the adapted one: fixed-length HMC with one step
  // size diverges there. The counts must be positive and consistent.
  EXPECT_GT(result.sampling_stats.divergent, 0);
  EXPECT_LE(result.sampling_stats.divergent, result.sampling_stats.transitions);
  EXPECT_EQ(result.sampling_stats.transitions, config.chains * config.draws);
  for (double v : result.draws_data) ASSERT_TRUE(std::isfinite(v));
}

TEST(StatLogistic, WellPosedTargetConverges) {
  const auto data = models::LogisticData<double>::synthetic(200, 5, 11);
  SampleConfig config = myriad::testing::run_config(128, 300, 300, 5);
  const SampleResult result = sample(data.host_model(10.0), config);
  EXPECT_EQ(result.sampling_stats.divergent, 0);
  for (const auto& row : result.summary) {
    EXPECT_LT(row.rhat, 1.01) << row.name;
    EXPECT_GT(row.ess_bulk, 1000) << row.name;
  }
  // With 200 observations the posterior concentrates near the data-generating coefficients:
  // each is within 4 posterior sd of its mean (a loose, assumption-light check).
  const auto& truth = data.true_beta();
  for (int j = 0; j < 5; ++j)
    EXPECT_LT(std::abs(result.summary[j].mean - truth[j]), 4 * result.summary[j].sd) << j;
}

}  // namespace
}  // namespace myriad
