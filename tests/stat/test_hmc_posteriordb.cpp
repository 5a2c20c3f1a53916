// HMC on posteriordb's regression posteriors against Stan's reference draws, from Stan's default
// starts: every chain uniform in (−2, 2) on the unconstrained scale, at default settings. The
// starts lie where the density is far stiffer than at the posterior (on kidiq the residuals are
// of order 100 and σ = e^τ ≤ e², a curvature up to 1e8 in β), which stranded chains before the
// warm-up restarted them (issue 22).

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "common/run_configs.hpp"
#include "myriad/models/linear_regression.hpp"
#include "myriad/run/sample.hpp"
#include "posteriordb.hpp"

namespace myriad {
namespace {

using models::LinearRegressionData;
using models::ScalePrior;

std::vector<double> numbers(const nlohmann::json& values) {
  return values.get<std::vector<double>>();
}

/// kidiq-kidscore_momhsiq: kid_score ~ N(β1 + β2 mom_hs + β3 mom_iq, σ), σ ~ Cauchy(0, 2.5)
/// on σ > 0, β flat.
LinearRegressionData<double> kidiq() {
  const nlohmann::json data = testing::posteriordb_data("kidiq-kidscore_momhsiq");
  const std::vector<double> hs = numbers(data["mom_hs"]), iq = numbers(data["mom_iq"]);
  const int n = data["N"].get<int>();
  std::vector<double> x;
  for (int i = 0; i < n; ++i) x.insert(x.end(), {1.0, hs[i], iq[i]});
  return LinearRegressionData<double>::from_arrays(
      x, numbers(data["kid_score"]), n, 3, std::vector<double>(3, 0.0),
      LinearRegressionData<double>::flat(3), ScalePrior::half_cauchy, 2.5);
}

/// earnings-logearn_interaction_z: log earn ~ N(β1 + β2 z + β3 male + β4 z·male, σ), z the
/// standardised height (Stan's sd: n − 1), β and σ flat.
LinearRegressionData<double> earnings() {
  const nlohmann::json data = testing::posteriordb_data("earnings-logearn_interaction_z");
  const std::vector<double> earn = numbers(data["earn"]), height = numbers(data["height"]),
                            male = numbers(data["male"]);
  const int n = data["N"].get<int>();
  const double mean = std::accumulate(height.begin(), height.end(), 0.0) / n;
  double ss = 0;
  for (double h : height) ss += (h - mean) * (h - mean);
  const double sd = std::sqrt(ss / (n - 1));
  std::vector<double> x, y;
  for (int i = 0; i < n; ++i) {
    const double z = (height[i] - mean) / sd;
    x.insert(x.end(), {1.0, z, male[i], z * male[i]});
    y.push_back(std::log(earn[i]));
  }
  return LinearRegressionData<double>::from_arrays(x, y, n, 4, std::vector<double>(4, 0.0),
                                                   LinearRegressionData<double>::flat(4),
                                                   ScalePrior::flat, 1.0);
}

void expect_reference_from_default_starts(const LinearRegressionData<double>& data,
                                          const std::string& posterior, std::uint64_t seed) {
  const SampleConfig config = testing::run_config(256, 1000, 500, seed);
  const SampleResult result = sample(data.host_model(), config);
  testing::expect_agrees_with_reference(result, testing::posteriordb_reference(posterior));
  for (const auto& row : result.summary) EXPECT_LT(row.rhat, 1.01) << row.name;
  // The starts strand some chains (seed 22: 36 of 256 on kidiq, 16 on earnings); restarted
  // from healthy ones, none is left stuck.
  EXPECT_GT(result.warmup_restarted_chains, 0);
  EXPECT_EQ(result.sampling_stuck_chains, 0);
}

TEST(StatPosteriordb, KidiqFromStansDefaultStarts) {
  expect_reference_from_default_starts(kidiq(), "kidiq-kidscore_momhsiq", 22);
}

TEST(StatPosteriordb, EarningsFromStansDefaultStarts) {
  expect_reference_from_default_starts(earnings(), "earnings-logearn_interaction_z", 22);
}

}  // namespace
}  // namespace myriad
