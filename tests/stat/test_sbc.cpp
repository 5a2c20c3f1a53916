// Simulation-based calibration (run/sbc.hpp) of the samplers on built-in models, through the
// registry as `myriad sbc` runs them: HMC at its defaults (ChEES) on eight_schools with every
// replication in one batch of chains (model/stacked.hpp), on a small logistic regression and on
// posteriordb's blr (its design from the data file) one replication after another, and
// constrained HMC on linear_gaussian one after another; each at R = 200 replications of 16
// chains × (500 + 500), ranks among L = 99 draws.
//
// A calibrated sampler gives uniform ranks. Each quantity must pass both tests of diag/sbc.hpp:
// Pearson's chi-square over 20 bins (19 degrees of freedom) with p ≥ 0.001, and the ECDF of its
// ranks inside the simultaneous 99.9% bands of Säilynoja et al. (2022). Over the 25 quantities
// of the four models, a calibrated sampler fails one of the 50 tests with probability at most
// 5%; a sampler off by a fraction of a posterior sd fails them (the power is checked in
// tests/unit/test_sbc_statistics.cpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/posteriordb_port_checks.hpp"
#include "common/sbc_calibration.hpp"
#include "myriad/run/sbc.hpp"

namespace myriad {
namespace {

using testing::calibrate;

TEST(StatSbc, HmcOnEightSchoolsAsOneBatch) {
  const SbcResult result = calibrate("eight_schools", {}, /*batched=*/true);
  EXPECT_EQ(result.names.size(), 10u);
}

TEST(StatSbc, HmcOnLogisticRegression) {
  const SbcResult result =
      calibrate("logistic", {{"n", "40"}, {"d", "3"}, {"prior_sd", "1"}, {"data_seed", "3"}});
  EXPECT_EQ(result.names.size(), 3u);
}

TEST(StatSbc, HmcOnPosteriordbsBlrDesign) {
  // posteriordb's blr: its 100 × 5 design from the data file, β ~ N(0, 10²), σ ~ half-N(0, 10²).
  const SbcResult result = calibrate("blr", {}, /*batched=*/false, Device::cpu,
                                     testing::posteriordb_path("sblrc-blr", "data.json"));
  EXPECT_EQ(result.names.size(), 6u);
}

TEST(StatSbc, ChmcOnLinearGaussian) {
  const SbcResult result = calibrate("linear_gaussian", {});
  EXPECT_EQ(result.names.size(), 6u);
}

}  // namespace
}  // namespace myriad
