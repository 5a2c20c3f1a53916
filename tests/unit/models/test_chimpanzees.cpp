// Tests of `chimpanzees` (include/myriad/models/chimpanzees.hpp; mpis.md §9.2 [code] version),
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
#include "myriad/models/chimpanzees.hpp"

namespace myriad {
namespace {

using namespace myriad::testing;
using namespace models;

// ---------------------------------------------------------------------------------------------
// Densities against direct formulas (probability form, independent of the library's softplus
// form; common/log_densities.hpp)

TEST(MpisPaperModels, ChimpanzeesDensities) {
  const ChimpanzeesData data = ChimpanzeesData::synthetic(3);
  const Chimpanzees m = data.host_model();
  const PlateIndex root = plate_index({});
  for (double sigma : {0.05, 1.0, 7.5}) {
    expect_close(m.log_prior(Chimpanzees::kSigmaActor, &sigma, {}, root),
                 half_cauchy_lpdf(sigma, 1), "sigma_actor prior");
    expect_close(m.log_proposal(Chimpanzees::kSigmaBlock, &sigma, {}, root),
                 half_cauchy_lpdf(sigma, 1), "sigma_block proposal");
  }
  const double negative = -0.3;
  EXPECT_EQ(m.log_prior(Chimpanzees::kSigmaBlock, &negative, {}, root), -INFINITY);

  const double z = -2.3;
  for (int g : {Chimpanzees::kAlpha, Chimpanzees::kBetaP, Chimpanzees::kBetaPC}) {
    expect_close(m.log_prior(g, &z, {}, root), normal_lpdf(z, 0, 10), "N(0, 10) prior");
    expect_close(m.log_proposal(g, &z, {}, root), normal_lpdf(z, 0, 10), "N(0, 10) proposal");
  }
  const double sigma_actor = 1.7, sigma_block = 0.4;
  expect_close(
      m.log_prior(Chimpanzees::kAlphaActor, &z, parent_values({&sigma_actor}), plate_index({4})),
      normal_lpdf(z, 0, sigma_actor), "alpha_actor | sigma_actor");
  expect_close(
      m.log_prior(Chimpanzees::kAlphaBlock, &z, parent_values({&sigma_block}), plate_index({4, 5})),
      normal_lpdf(z, 0, sigma_block), "alpha_block | sigma_block");
  expect_close(m.log_proposal(Chimpanzees::kAlphaBlock, &z, {}, plate_index({4, 5})),
               normal_lpdf(z, 0, 1), "alpha_block proposal");

  const double alpha = 0.2, beta_p = 0.9, beta_pc = -0.6, alpha_actor = 1.3, alpha_block = -0.25;
  const ParentValues parents =
      parent_values({&alpha, &beta_p, &beta_pc, &alpha_actor, &alpha_block});
  int covariate_patterns = 0;
  for (std::int64_t i = 0; i < 420; i += 7) {
    const std::int64_t a = i / 60, b = (i / 10) % 6, r = i % 10;
    const double condition = data.condition()[i], prosoc_left = data.prosoc_left()[i];
    covariate_patterns |= 1 << static_cast<int>(2 * condition + prosoc_left);
    const double logit =
        alpha + alpha_actor + alpha_block + (beta_p + beta_pc * condition) * prosoc_left;
    expect_close(m.log_likelihood(Chimpanzees::kPulledLeft, parents, plate_index({a, b, r})),
                 bernoulli_lpmf(data.pulled_left()[i], logit), "pull " + std::to_string(i));
  }
  EXPECT_EQ(covariate_patterns, 15) << "every (Condition, ProsocLeft) pattern was checked";
}

// ---------------------------------------------------------------------------------------------
// Synthetic data: reproducible, in range, not degenerate, consistent with the true latents

TEST(MpisPaperModels, ChimpanzeesData) {
  const ChimpanzeesData a = ChimpanzeesData::synthetic(11), again = ChimpanzeesData::synthetic(11),
                        other = ChimpanzeesData::synthetic(12);
  EXPECT_EQ(a.pulled_left(), again.pulled_left());
  EXPECT_EQ(a.condition(), again.condition());
  EXPECT_EQ(a.prosoc_left(), again.prosoc_left());
  EXPECT_EQ(a.true_latent(Chimpanzees::kAlphaBlock), again.true_latent(Chimpanzees::kAlphaBlock));
  EXPECT_NE(a.pulled_left(), other.pulled_left());
  EXPECT_NE(a.condition(), other.condition());
  EXPECT_NE(a.true_latent(Chimpanzees::kAlphaActor), other.true_latent(Chimpanzees::kAlphaActor));

  ASSERT_EQ(a.pulled_left().size(), 420u);
  expect_true_latent_sizes(a, {1, 1, 1, 1, 1, 7, 42});
  EXPECT_EQ(a.true_latent(Chimpanzees::kSigmaActor)[0], ChimpanzeesData::kTrueSigmaActor);
  EXPECT_EQ(a.true_latent(Chimpanzees::kBetaPC)[0], ChimpanzeesData::kTrueBetaPC);
  for (const auto* x : {&a.pulled_left(), &a.condition(), &a.prosoc_left()}) {
    EXPECT_TRUE(all_binary(*x));
    EXPECT_TRUE(has_both(*x));
  }
  const auto p = [&](std::size_t i) {
    const double condition = a.condition()[i], prosoc_left = a.prosoc_left()[i];
    return sigmoid(a.true_latent(Chimpanzees::kAlpha)[0] +
                   a.true_latent(Chimpanzees::kAlphaActor)[i / 60] +
                   a.true_latent(Chimpanzees::kAlphaBlock)[i / 10] +
                   (a.true_latent(Chimpanzees::kBetaP)[0] +
                    a.true_latent(Chimpanzees::kBetaPC)[0] * condition) *
                       prosoc_left);
  };
  expect_consistent_total(
      a.pulled_left(), p, [&](std::size_t i) { return p(i) * (1 - p(i)); }, "left pulls");

  const Chimpanzees host = a.host_model();
  expect_host_views_and_no_device_model<ChimpanzeesData>(
      {{"pulled_left", host.pulled_left, a.pulled_left().data()},
       {"condition", host.condition, a.condition().data()},
       {"prosoc_left", host.prosoc_left, a.prosoc_left().data()}});
}

// ---------------------------------------------------------------------------------------------
// The engine at small K

TEST(MpisPaperModels, EngineOnChimpanzees) {
  expect_log_marginal_increases_on_synthetic_data<ChimpanzeesData>(16);
}

}  // namespace
}  // namespace myriad
