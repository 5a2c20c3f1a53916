// HMC on the equicorrelated Gaussian, at the defaults (ChEES, dense metric) and as fixed-length
// HMC with a diagonal metric: means and variances within 5 MCSE of the exact values, in both
// precisions, through the public myriad::sample API on the CPU backend.

#include <gtest/gtest.h>

#include <cmath>

#include "common/run_configs.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/run/sample.hpp"
#include "posterior_check.hpp"

namespace myriad {
namespace {

SampleConfig gaussian_config() {
  SampleConfig config = myriad::testing::run_config(256, 300, 300, 20261122);
  return config;
}

template <class T>
class StatHmcGaussian : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(StatHmcGaussian, Precisions);

/// One run on an 8-D Gaussian (mean 1.5, sd 2, ρ 0.5) at `config`: moments within 5 MCSE, no
/// divergence, and an adapted metric near the covariance.
template <class T>
void expect_gaussian_recovered(const SampleConfig& config) {
  const double mean = 1.5, sd = 2.0, rho = 0.5;
  const int dim = 8;
  const SampleResult result = sample(models::Gaussian<T>::make(dim, rho, mean, sd), config);

  ASSERT_EQ(result.names.size(), static_cast<std::size_t>(dim));
  EXPECT_EQ(result.sampling_stats.divergent, 0);
  EXPECT_EQ(result.sampling_stats.non_finite, 0);
  // Dual averaging steers the pooled acceptance towards 0.8 (fixed-length HMC: the chains'
  // arithmetic mean; ChEES: their harmonic mean); with the final averaged step size the realised
  // acceptance lands near it.
  const IterationStats& s = result.sampling_stats;
  EXPECT_NEAR(config.sampler == HmcSampler::hmc ? s.mean_accept_prob() : s.harmonic_accept_prob(),
              0.8, 0.1);
  for (int q = 0; q < dim; ++q) {
    testing::expect_marginal_moments(result, q, mean, sd);
    EXPECT_GT(result.summary[q].ess_bulk, 1000) << result.names[q];
  }
  // The adapted metric approximates the covariance: sd² = 4 on the diagonal, ρ sd² = 2 off it.
  if (result.metric == MetricKind::dense) {
    ASSERT_EQ(result.inverse_metric.size(), static_cast<std::size_t>(dim * dim));
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j)
        EXPECT_NEAR(result.inverse_metric[i * dim + j], sd * sd * (i == j ? 1 : rho), 0.5);
  } else {
    for (double v : result.inverse_metric) EXPECT_NEAR(v, sd * sd, 0.5);
  }
}

TYPED_TEST(StatHmcGaussian, RecoversMeansAndVariancesWithinFiveMcse) {
  SampleConfig config = gaussian_config();
  {
    SCOPED_TRACE("the defaults: ChEES with the dense metric");
    expect_gaussian_recovered<TypeParam>(config);
  }
  SCOPED_TRACE("fixed-length HMC with the diagonal metric");
  expect_gaussian_recovered<TypeParam>(testing::fixed_length_hmc(config));
}

TEST(StatHmcGaussianCorrelation, RecoversPairwiseCorrelation) {
  const double rho = 0.7;
  const auto model = models::Gaussian<double>::make(4, rho);
  const SampleResult result = sample(model, gaussian_config());
  // E[x0 x1] = ρ for unit variances; MCSE from the product's own ESS.
  const std::int64_t n = result.chains * result.kept_draws;
  std::vector<double> products(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    products[i] = result.draws_data[i * 4 + 0] * result.draws_data[i * 4 + 1];
  const diag::DrawsView view{products.data(), result.chains, result.kept_draws, result.kept_draws, 1};
  double sum = 0;
  for (double p : products) sum += p;
  testing::expect_within_mcse({sum / n, diag::mcse_mean(view)}, rho, "E[x0 x1]");
}

}  // namespace
}  // namespace myriad
