// Tests of `bus_breakdown` (include/myriad/models/bus_breakdown.hpp; mpis.md §9.2 [code] version),
// an MP IS model: its densities against direct formulas written here, its synthetic data
// (reproducible, in range, not degenerate, consistent with the true latents) and the CPU engine on
// it at small K.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "common/log_densities.hpp"
#include "common/model_test_synthetic_plated_data.hpp"
#include "common/plated_model_checks.hpp"
#include "myriad/core/error.hpp"
#include "myriad/model/plated_model.hpp"
#include "myriad/models/bus_breakdown.hpp"

namespace myriad {
namespace {

using namespace myriad::testing;
using namespace models;

// ---------------------------------------------------------------------------------------------
// Densities against direct formulas (probability form, independent of the library's softplus
// form; common/log_densities.hpp)

TEST(MpisPaperModels, BusBreakdownDensities) {
  const BusBreakdownData data = BusBreakdownData::synthetic(3);
  const BusBreakdown m = data.host_model();
  const PlateIndex root = plate_index({});
  const double mu_beta = 0.3, sigma_beta = -0.4, beta = -0.7, sigma_alpha = 0.6;

  const double z = 1.1;
  expect_close(m.log_prior(BusBreakdown::kMuBeta, &z, {}, root), normal_lpdf(z, 0, 1), "mu_beta");
  expect_close(m.log_prior(BusBreakdown::kLogSigmaPhiPsi, &z, {}, root), normal_lpdf(z, 0, 1),
               "log_sigma_phi_psi prior");
  expect_close(m.log_proposal(BusBreakdown::kLogSigmaPhiPsi, &z, {}, root), normal_lpdf(z, 0, 1),
               "log_sigma_phi_psi proposal: the same, so its factor is inert");
  expect_close(m.log_prior(BusBreakdown::kBeta, &z, parent_values({&mu_beta, &sigma_beta}),
                           plate_index({2})),
               normal_lpdf(z, mu_beta, std::exp(sigma_beta)), "beta | mu_beta, sigma_beta");
  expect_close(m.log_prior(BusBreakdown::kAlpha, &z, parent_values({&beta, &sigma_alpha}),
                           plate_index({1, 2})),
               normal_lpdf(z, beta, std::exp(sigma_alpha)), "alpha | beta, sigma_alpha");
  expect_close(m.log_proposal(BusBreakdown::kAlpha, &z, parent_values({}), plate_index({1, 2})),
               normal_lpdf(z, 0, 1), "alpha proposal");

  // The weight vectors: one latent, an event vector of N(0, 1) values, prior = proposal.
  std::vector<double> company(50), journey(5);
  for (int c = 0; c < 50; ++c) company[c] = std::sin(0.7 * c + 0.2);
  for (int j = 0; j < 5; ++j) journey[j] = 0.5 * j - 1.0;
  double company_lp = 0, journey_lp = 0;
  for (double w : company) company_lp += normal_lpdf(w, 0, 1);
  for (double w : journey) journey_lp += normal_lpdf(w, 0, 1);
  expect_close(m.log_prior(BusBreakdown::kCompanyWeight, company.data(), {}, root), company_lp,
               "company_weight prior");
  expect_close(m.log_proposal(BusBreakdown::kCompanyWeight, company.data(), {}, root), company_lp,
               "company_weight proposal");
  expect_close(m.log_prior(BusBreakdown::kJourneyWeight, journey.data(), {}, root), journey_lp,
               "journey_weight prior");

  // Delays: Binomial(131, σ(alpha + company_weight[c] + journey_weight[j])) at several buses.
  const double alpha = -0.9;
  const ParentValues parents = parent_values({&alpha, company.data(), journey.data()});
  for (const auto& ybi : {std::vector<std::int64_t>{0, 0, 0}, {1, 2, 17}, {2, 1, 29}}) {
    const std::int64_t i = (ybi[0] * 3 + ybi[1]) * 30 + ybi[2];
    const double logit = alpha + company[data.company()[i]] + journey[data.journey_type()[i]];
    expect_close(
        m.log_likelihood(BusBreakdown::kDelay, parents, plate_index({ybi[0], ybi[1], ybi[2]})),
        binomial_lpmf(data.delay()[i], 131, logit), "delay " + std::to_string(i));
  }
}

// ---------------------------------------------------------------------------------------------
// Synthetic data: reproducible, in range, not degenerate, consistent with the true latents

TEST(MpisPaperModels, BusBreakdownData) {
  const BusBreakdownData a = BusBreakdownData::synthetic(11),
                         again = BusBreakdownData::synthetic(11),
                         other = BusBreakdownData::synthetic(12);
  EXPECT_EQ(a.delay(), again.delay());
  EXPECT_EQ(a.company(), again.company());
  EXPECT_EQ(a.journey_type(), again.journey_type());
  for (int g = 0; g < 8; ++g) EXPECT_EQ(a.true_latent(g), again.true_latent(g));
  EXPECT_NE(a.delay(), other.delay());
  EXPECT_NE(a.company(), other.company());
  EXPECT_NE(a.true_latent(BusBreakdown::kAlpha), other.true_latent(BusBreakdown::kAlpha));

  ASSERT_EQ(a.delay().size(), 270u);
  expect_true_latent_sizes(a, {1, 1, 50, 5, 1, 3, 3, 9});
  for (std::size_t i = 0; i < 270; ++i) {
    const double d = a.delay()[i];
    EXPECT_TRUE(d >= 0 && d <= 131 && d == std::floor(d)) << "delay " << i << " = " << d;
    EXPECT_TRUE(a.company()[i] >= 0 && a.company()[i] < 50);
    EXPECT_TRUE(a.journey_type()[i] >= 0 && a.journey_type()[i] < 5);
  }
  // Not degenerate: delays spread over the range, many companies and every journey type used.
  const auto [lo, hi] = std::minmax_element(a.delay().begin(), a.delay().end());
  EXPECT_LT(*lo, 20.0);
  EXPECT_GT(*hi, 80.0);
  std::vector<int> companies = a.company();
  std::sort(companies.begin(), companies.end());
  EXPECT_GT(std::unique(companies.begin(), companies.end()) - companies.begin(), 40);
  for (int j = 0; j < 5; ++j)
    EXPECT_GT(std::count(a.journey_type().begin(), a.journey_type().end(), j), 20) << j;

  const auto p = [&](std::size_t i) {
    return sigmoid(a.true_latent(BusBreakdown::kAlpha)[i / 30] +
                   a.true_latent(BusBreakdown::kCompanyWeight)[a.company()[i]] +
                   a.true_latent(BusBreakdown::kJourneyWeight)[a.journey_type()[i]]);
  };
  expect_consistent_total(
      a.delay(), [&](std::size_t i) { return 131 * p(i); },
      [&](std::size_t i) { return 131 * p(i) * (1 - p(i)); }, "total delay");

  const BusBreakdown host = a.host_model();
  expect_host_views_and_no_device_model<BusBreakdownData>(
      {{"delay", host.delay, a.delay().data()},
       {"company", host.company, a.company().data()},
       {"journey_type", host.journey_type, a.journey_type().data()}});
}

// ---------------------------------------------------------------------------------------------
// The engine at small K

TEST(MpisPaperModels, EngineOnBusBreakdown) {
  expect_log_marginal_increases_on_synthetic_data<BusBreakdownData>(64);
}

}  // namespace
}  // namespace myriad
