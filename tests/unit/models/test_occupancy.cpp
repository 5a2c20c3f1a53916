// Tests of `occupancy` (include/myriad/models/occupancy.hpp; mpis.md §9.2 [code] version),
// an MP IS model: its densities and its parent-mixture proposal against direct formulas written
// here, its synthetic data (reproducible, in range, not degenerate, consistent with the true
// latents) and the CPU engine on it at small K.

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
#include "myriad/models/occupancy.hpp"

namespace myriad {
namespace {

using namespace myriad::testing;
using namespace models;

// ---------------------------------------------------------------------------------------------
// Densities against direct formulas (probability form, independent of the library's softplus
// form; common/log_densities.hpp)

TEST(MpisPaperModels, OccupancyDensitiesAndMixtureProposal) {
  const OccupancyData data = OccupancyData::synthetic(3);
  const Occupancy m = data.host_model();
  const PlateIndex root = plate_index({});
  const double z = 0.45;
  for (int g = Occupancy::kMuBirdMean; g <= Occupancy::kSigmaWeatherWeight; ++g)
    expect_close(m.log_prior(g, &z, {}, root), normal_lpdf(z, 0, 1), "hyper-latent prior");
  const double mu = -0.3, sigma = 0.5;
  for (int g : {Occupancy::kBirdMean, Occupancy::kQualityWeight, Occupancy::kWeatherWeight}) {
    expect_close(m.log_prior(g, &z, parent_values({&mu, &sigma}), plate_index({7})),
                 normal_lpdf(z, mu, std::exp(sigma)), "species latent | mu, sigma");
    expect_close(m.log_proposal(g, &z, {}, plate_index({7})), normal_lpdf(z, 0, 1),
                 "species latent proposal");
  }
  const double bird_mean = 1.2;
  expect_close(
      m.log_prior(Occupancy::kBirdYearMean, &z, parent_values({&bird_mean}), plate_index({7, 3})),
      normal_lpdf(z, bird_mean, 1), "bird_year_mean | bird_mean");

  // z: the prior conditional Bernoulli(σ(bird_year_mean · weather_weight · Weather)), and the
  // proposal is the same conditional given the proposal parents' particles.
  const double bird_year_mean = 0.8, weather_weight = -1.4;
  const ParentValues parents = parent_values({&bird_year_mean, &weather_weight});
  for (const auto& jmi : {std::vector<std::int64_t>{0, 0, 0}, {5, 2, 131}, {11, 5, 199}}) {
    const PlateIndex at = plate_index({jmi[0], jmi[1], jmi[2]});
    const std::int64_t site = (jmi[0] * 6 + jmi[1]) * 200 + jmi[2];
    const double logit = bird_year_mean * weather_weight * data.weather()[site];
    for (double occupied : {0.0, 1.0}) {
      expect_close(m.log_prior(Occupancy::kOccupied, &occupied, parents, at),
                   bernoulli_lpmf(occupied, logit), "z prior at site " + std::to_string(site));
      expect_close(m.log_proposal(Occupancy::kOccupied, &occupied, parents, at),
                   bernoulli_lpmf(occupied, logit), "z proposal at site " + std::to_string(site));
    }
    // Detections: z · quality_weight · Quality + (1 − z)(−10).
    const double quality_weight = 1.9;
    for (std::int64_t r = 0; r < 5; ++r) {
      const std::int64_t visit = site * 5 + r;
      for (double occupied : {0.0, 1.0}) {
        const double detection_logit =
            occupied == 1.0 ? quality_weight * data.quality()[visit] : -10.0;
        expect_close(
            m.log_likelihood(Occupancy::kDetected, parent_values({&occupied, &quality_weight}),
                             plate_index({jmi[0], jmi[1], jmi[2], r})),
            bernoulli_lpmf(data.detected()[visit], detection_logit),
            "detection " + std::to_string(visit));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Synthetic data: reproducible, in range, not degenerate, consistent with the true latents

TEST(MpisPaperModels, OccupancyData) {
  const OccupancyData a = OccupancyData::synthetic(11), again = OccupancyData::synthetic(11),
                      other = OccupancyData::synthetic(12);
  EXPECT_EQ(a.detected(), again.detected());
  EXPECT_EQ(a.quality(), again.quality());
  EXPECT_EQ(a.weather(), again.weather());
  EXPECT_EQ(a.true_latent(Occupancy::kOccupied), again.true_latent(Occupancy::kOccupied));
  EXPECT_NE(a.detected(), other.detected());
  EXPECT_NE(a.weather(), other.weather());
  EXPECT_NE(a.true_latent(Occupancy::kBirdYearMean), other.true_latent(Occupancy::kBirdYearMean));

  ASSERT_EQ(a.detected().size(), 72000u);
  ASSERT_EQ(a.quality().size(), 72000u);
  ASSERT_EQ(a.weather().size(), 14400u);
  expect_true_latent_sizes(a, {1, 1, 1, 1, 1, 1, 12, 12, 12, 72, 14400});
  EXPECT_TRUE(all_binary(a.detected()));
  EXPECT_TRUE(has_both(a.detected()));
  EXPECT_TRUE(all_binary(a.quality()));
  EXPECT_TRUE(has_both(a.quality()));
  EXPECT_TRUE(all_binary(a.true_latent(Occupancy::kOccupied)));
  EXPECT_TRUE(has_both(a.true_latent(Occupancy::kOccupied)));
  EXPECT_TRUE(std::all_of(a.weather().begin(), a.weather().end(),
                          [](double w) { return std::isfinite(w); }));
  expect_normal_moments(a.weather(), 0, 1, "Weather ~ N(0, 1)");

  const auto& z = a.true_latent(Occupancy::kOccupied);
  const auto p = [&](std::size_t visit) {
    const std::size_t site = visit / 5, bird = site / 1200;
    return z[site] == 1.0
               ? sigmoid(a.true_latent(Occupancy::kQualityWeight)[bird] * a.quality()[visit])
               : sigmoid(-10.0);
  };
  expect_consistent_total(
      a.detected(), p, [&](std::size_t i) { return p(i) * (1 - p(i)); }, "detections");
  const auto q = [&](std::size_t site) {
    const std::size_t bird_year = site / 200, bird = bird_year / 6;
    return sigmoid(a.true_latent(Occupancy::kBirdYearMean)[bird_year] *
                   a.true_latent(Occupancy::kWeatherWeight)[bird] * a.weather()[site]);
  };
  expect_consistent_total(
      z, q, [&](std::size_t i) { return q(i) * (1 - q(i)); }, "occupied sites");

  const Occupancy host = a.host_model();
  expect_host_views_and_no_device_model<OccupancyData>(
      {{"detected", host.detected, a.detected().data()},
       {"quality", host.quality, a.quality().data()},
       {"weather", host.weather, a.weather().data()}});
}

// ---------------------------------------------------------------------------------------------
// The engine at small K

TEST(MpisPaperModels, EngineOnOccupancy) {
  // The parent-mixture proposal of z: the subset argument above does not apply verbatim (z's
  // mixture density averages over all K parent particles), but the gap is tens of thousands of
  // nats against a standard error of hundreds.
  expect_log_marginal_increases_on_synthetic_data<OccupancyData>(3);
}

}  // namespace
}  // namespace myriad
