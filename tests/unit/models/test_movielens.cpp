// Tests of `movielens` (include/myriad/models/movielens.hpp; mpis.md §9.2 [code] version),
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
#include "myriad/models/movielens.hpp"

namespace myriad {
namespace {

using namespace myriad::testing;
using namespace models;

// ---------------------------------------------------------------------------------------------
// Densities against direct formulas (probability form, independent of the library's softplus
// form; common/log_densities.hpp)

TEST(MpisPaperModels, MovieLensDensities) {
  const MovieLensData data = MovieLensData::synthetic(3);
  const MovieLens m = data.host_model();
  std::vector<double> mu(18), psi(18), z(18);
  for (int g = 0; g < 18; ++g) {
    mu[g] = 0.4 * std::cos(1.0 + g);
    psi[g] = 0.3 * std::sin(2.0 * g) - 0.2;
    z[g] = 0.8 * std::sin(0.5 + 1.3 * g);
  }
  double standard = 0, conditional = 0;
  for (int g = 0; g < 18; ++g) {
    standard += normal_lpdf(z[g], 0, 1);
    conditional += normal_lpdf(z[g], mu[g], std::exp(psi[g]));
  }
  const PlateIndex root = plate_index({});
  expect_close(m.log_prior(MovieLens::kMu, z.data(), {}, root), standard, "mu prior");
  expect_close(m.log_prior(MovieLens::kPsi, z.data(), {}, root), standard, "psi prior");
  expect_close(m.log_prior(MovieLens::kZ, z.data(), parent_values({mu.data(), psi.data()}),
                           plate_index({123})),
               conditional, "z | mu, psi");
  for (int g = 0; g < 3; ++g)
    expect_close(m.log_proposal(g, z.data(), {}, root), standard, "N(0, I) proposal");

  for (const auto& user_film : {std::vector<std::int64_t>{0, 0}, {150, 3}, {299, 4}}) {
    const std::int64_t i = user_film[0] * 5 + user_film[1];
    double logit = 0;
    for (int g = 0; g < 18; ++g) logit += z[g] * data.features()[i * 18 + g];
    expect_close(m.log_likelihood(MovieLens::kRating, parent_values({z.data()}),
                                  plate_index({user_film[0], user_film[1]})),
                 bernoulli_lpmf(data.rating()[i], logit), "rating " + std::to_string(i));
  }
}

// ---------------------------------------------------------------------------------------------
// Synthetic data: reproducible, in range, not degenerate, consistent with the true latents

TEST(MpisPaperModels, MovieLensData) {
  const MovieLensData a = MovieLensData::synthetic(11), again = MovieLensData::synthetic(11),
                      other = MovieLensData::synthetic(12);
  EXPECT_EQ(a.rating(), again.rating());
  EXPECT_EQ(a.features(), again.features());
  EXPECT_EQ(a.true_latent(MovieLens::kZ), again.true_latent(MovieLens::kZ));
  EXPECT_NE(a.rating(), other.rating());
  EXPECT_NE(a.features(), other.features());
  EXPECT_NE(a.true_latent(MovieLens::kPsi), other.true_latent(MovieLens::kPsi));

  ASSERT_EQ(a.rating().size(), 1500u);
  ASSERT_EQ(a.features().size(), 1500u * 18);
  expect_true_latent_sizes(a, {18, 18, 300 * 18});  // mu, psi, z
  EXPECT_TRUE(all_binary(a.rating()));
  EXPECT_TRUE(has_both(a.rating()));
  EXPECT_TRUE(all_binary(a.features()));
  // Every film has its primary genre, and every genre occurs.
  for (std::size_t i = 0; i < 1500; ++i)
    EXPECT_GE(
        std::accumulate(a.features().begin() + i * 18, a.features().begin() + (i + 1) * 18, 0.0),
        1.0)
        << "film " << i;
  for (std::size_t g = 0; g < 18; ++g) {
    double count = 0;
    for (std::size_t i = 0; i < 1500; ++i) count += a.features()[i * 18 + g];
    EXPECT_GT(count, 50) << "genre " << g;
  }
  const auto p = [&](std::size_t i) {
    double logit = 0;
    for (std::size_t g = 0; g < 18; ++g)
      logit += a.true_latent(MovieLens::kZ)[(i / 5) * 18 + g] * a.features()[i * 18 + g];
    return sigmoid(logit);
  };
  expect_consistent_total(
      a.rating(), p, [&](std::size_t i) { return p(i) * (1 - p(i)); }, "positive ratings");

  const MovieLens host = a.host_model();
  expect_host_views_and_no_device_model<MovieLensData>(
      {{"rating", host.rating, a.rating().data()},
       {"features", host.features, a.features().data()}});
}

// ---------------------------------------------------------------------------------------------
// The engine at small K

TEST(MpisPaperModels, EngineOnMovieLens) {
  expect_log_marginal_increases_on_synthetic_data<MovieLensData>(32);
}

}  // namespace
}  // namespace myriad
