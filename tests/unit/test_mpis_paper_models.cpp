// The MP IS paper's four models (include/myriad/models/{bus_breakdown, chimpanzees, movielens,
// occupancy}.hpp; mpis.md §9.2 [code] versions) side by side: their plate structures
// (index-variable counts n, largest elimination clique, observation counts), their proposal
// samplers against the proposals' moments, and the engine's backward pass and posterior index
// sampling on each. What concerns one model (its densities, its synthetic data, the engine's
// log marginal at small K) is in tests/unit/models/test_<model>.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "common/log_densities.hpp"
#include "common/plated_model_checks.hpp"
#include "myriad/backend/cpu_parallel.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/mpis_engine.hpp"
#include "myriad/estimate/mpis_plan.hpp"
#include "myriad/model/plated_model.hpp"
#include "myriad/models/bus_breakdown.hpp"
#include "myriad/models/chimpanzees.hpp"
#include "myriad/models/movielens.hpp"
#include "myriad/models/occupancy.hpp"

namespace myriad {
namespace {

using namespace myriad::testing;
using namespace models;

constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------------------------
// Structure

std::int64_t index_variables(const PlatedStructure& s) {
  std::int64_t n = 0;
  for (int g = 0; g < s.latent_count(); ++g) n += s.instances(s.latent_decl(g).plate);
  return n;
}
std::int64_t observations(const PlatedStructure& s) {
  std::int64_t n = 0;
  for (int o = 0; o < s.observed_count(); ++o) n += s.instances(s.observed_decl(o).plate);
  return n;
}
void expect_latent_names(const PlatedStructure& s, const std::vector<std::string>& names) {
  ASSERT_EQ(s.latent_count(), static_cast<int>(names.size()));
  for (int g = 0; g < s.latent_count(); ++g)
    EXPECT_EQ(s.latent_decl(g).name, names[static_cast<std::size_t>(g)]) << "latent id " << g;
}

TEST(MpisPaperModels, StructureMatchesThePaper) {
  // mpis.md §9.2: n = 20 / 54 / 302 / 14514, cliques 5 / 6 / 3 / 7 (§3.3), and 270 / 420 /
  // 1500 / 72000 training observations.
  const BusBreakdownData bus = BusBreakdownData::synthetic(1);
  const PlatedStructure bs = bus.host_model().structure();
  expect_latent_names(bs, {"mu_beta", "sigma_beta", "company_weight", "journey_weight",
                           "log_sigma_phi_psi", "beta", "sigma_alpha", "alpha"});
  EXPECT_EQ(bs.latent_decl(BusBreakdown::kCompanyWeight).event_size, 50);
  EXPECT_EQ(bs.latent_decl(BusBreakdown::kJourneyWeight).event_size, 5);
  EXPECT_EQ(index_variables(bs), 20);
  EXPECT_EQ(plan_mpis(bs, 3, 1).max_clique, 5);
  EXPECT_EQ(observations(bs), 270);

  const ChimpanzeesData chimps = ChimpanzeesData::synthetic(1);
  const PlatedStructure cs = chimps.host_model().structure();
  expect_latent_names(cs, {"sigma_actor", "sigma_block", "alpha", "beta_p", "beta_pc",
                           "alpha_actor", "alpha_block"});
  EXPECT_EQ(index_variables(cs), 54);
  EXPECT_EQ(plan_mpis(cs, 3, 1).max_clique, 6);
  EXPECT_EQ(observations(cs), 420);

  const MovieLensData movielens = MovieLensData::synthetic(1);
  const PlatedStructure ms = movielens.host_model().structure();
  expect_latent_names(ms, {"mu", "psi", "z"});
  for (int g = 0; g < 3; ++g) EXPECT_EQ(ms.latent_decl(g).event_size, 18);
  EXPECT_EQ(index_variables(ms), 302);
  EXPECT_EQ(plan_mpis(ms, 3, 1).max_clique, 3);
  EXPECT_EQ(observations(ms), 1500);

  const OccupancyData occupancy = OccupancyData::synthetic(1);
  const PlatedStructure os = occupancy.host_model().structure();
  expect_latent_names(os, {"mu_bird_mean", "sigma_bird_mean", "mu_quality_weight",
                           "sigma_quality_weight", "mu_weather_weight", "sigma_weather_weight",
                           "bird_mean", "quality_weight", "weather_weight", "bird_year_mean", "z"});
  // z's proposal is the parent mixture over both of its parents (Eq. 73).
  EXPECT_EQ(os.latent_decl(Occupancy::kOccupied).proposal_parents,
            (std::vector<int>{Occupancy::kBirdYearMean, Occupancy::kWeatherWeight}));
  for (int g = 0; g < Occupancy::kOccupied; ++g)
    EXPECT_TRUE(os.latent_decl(g).proposal_parents.empty()) << os.latent_decl(g).name;
  EXPECT_EQ(index_variables(os), 14514);
  EXPECT_EQ(plan_mpis(os, 3, 1).max_clique, 7);
  EXPECT_EQ(observations(os), 72000);
}

// ---------------------------------------------------------------------------------------------
// Proposal samplers against the proposals' moments

constexpr int kDraws = 4000;

/// kDraws draws of latent g's proposal given `qa` at `at`, as the engine draws them (the
/// ParticleRandom of latent g, instance 0, particles 0…kDraws−1), component by component.
template <class Model>
std::vector<std::vector<double>> proposal_draws(const Model& m, int g, int event_size,
                                                const ParentValues& qa, const PlateIndex& at) {
  std::vector<std::vector<double>> draws(static_cast<std::size_t>(event_size));
  std::vector<double> z(static_cast<std::size_t>(event_size));
  for (int i = 0; i < kDraws; ++i) {
    ParticleRandom rng(RandomStream(99, 0), kMpisProposalPurpose + 65536u * g, 0,
                       static_cast<std::uint32_t>(i));
    m.sample_proposal(g, z.data(), qa, at, rng);
    for (int e = 0; e < event_size; ++e) draws[e].push_back(z[e]);
  }
  return draws;
}

/// The fraction of draws at or below `x` within 5 standard errors of `probability`.
void expect_fraction_below(const std::vector<double>& draws, double x, double probability,
                           const std::string& what) {
  const double n = static_cast<double>(draws.size());
  const double fraction = static_cast<double>(std::count_if(draws.begin(), draws.end(),
                                                            [&](double v) { return v <= x; })) /
                          n;
  EXPECT_NEAR(fraction, probability, 5 * std::sqrt(probability * (1 - probability) / n)) << what;
}

TEST(MpisPaperModels, ProposalSamplersMatchTheirProposals) {
  const BusBreakdownData bus = BusBreakdownData::synthetic(1);
  const BusBreakdown b = bus.host_model();
  for (int g : {int(BusBreakdown::kSigmaBeta), int(BusBreakdown::kAlpha)})
    expect_normal_moments(proposal_draws(b, g, 1, {}, plate_index({1, 1}))[0], 0, 1,
                          "bus latent " + std::to_string(g));
  const auto company = proposal_draws(b, BusBreakdown::kCompanyWeight, 50, {}, plate_index({}));
  for (int c = 0; c < 50; c += 7)
    expect_normal_moments(company[c], 0, 1, "company_weight[" + std::to_string(c) + "]");
  const auto journey = proposal_draws(b, BusBreakdown::kJourneyWeight, 5, {}, plate_index({}));
  for (int j = 0; j < 5; ++j)
    expect_normal_moments(journey[j], 0, 1, "journey_weight[" + std::to_string(j) + "]");

  // Chimpanzees: HalfCauchy(1) has no moments; its quartiles are tan(π/8), 1, tan(3π/8).
  const ChimpanzeesData chimps = ChimpanzeesData::synthetic(1);
  const Chimpanzees c = chimps.host_model();
  const auto sigma = proposal_draws(c, Chimpanzees::kSigmaActor, 1, {}, plate_index({}))[0];
  EXPECT_GT(*std::min_element(sigma.begin(), sigma.end()), 0.0);
  expect_fraction_below(sigma, std::tan(kPi / 8), 0.25, "HalfCauchy lower quartile");
  expect_fraction_below(sigma, 1.0, 0.5, "HalfCauchy median");
  expect_fraction_below(sigma, std::tan(3 * kPi / 8), 0.75, "HalfCauchy upper quartile");
  expect_normal_moments(proposal_draws(c, Chimpanzees::kBetaPC, 1, {}, plate_index({}))[0], 0, 10,
                        "beta_pc ~ N(0, 10)");
  expect_normal_moments(proposal_draws(c, Chimpanzees::kAlphaBlock, 1, {}, plate_index({3, 2}))[0],
                        0, 1, "alpha_block ~ N(0, 1)");

  const MovieLensData movielens = MovieLensData::synthetic(1);
  const auto z = proposal_draws(movielens.host_model(), MovieLens::kZ, 18, {}, plate_index({42}));
  for (int g = 0; g < 18; g += 5) expect_normal_moments(z[g], 0, 1, "z[" + std::to_string(g) + "]");

  // Occupancy's z: Bernoulli(σ(bird_year_mean · weather_weight · Weather)) given the chosen
  // proposal parents, at sites with different Weather.
  const OccupancyData occupancy = OccupancyData::synthetic(1);
  const Occupancy o = occupancy.host_model();
  expect_normal_moments(proposal_draws(o, Occupancy::kWeatherWeight, 1, {}, plate_index({4}))[0], 0,
                        1, "weather_weight ~ N(0, 1)");
  const double bird_year_mean = 0.9, weather_weight = 1.6;
  for (const auto& jmi : {std::vector<std::int64_t>{0, 0, 5}, {3, 4, 77}, {11, 5, 199}}) {
    const std::int64_t site = (jmi[0] * 6 + jmi[1]) * 200 + jmi[2];
    const double p = sigmoid(bird_year_mean * weather_weight * occupancy.weather()[site]);
    const auto draws = proposal_draws(o, Occupancy::kOccupied, 1,
                                      parent_values({&bird_year_mean, &weather_weight}),
                                      plate_index({jmi[0], jmi[1], jmi[2]}))[0];
    EXPECT_TRUE(std::all_of(draws.begin(), draws.end(), [](double v) { return v == 0 || v == 1; }));
    const double mean = std::accumulate(draws.begin(), draws.end(), 0.0) / kDraws;
    EXPECT_NEAR(mean, p, 5 * std::sqrt(p * (1 - p) / kDraws)) << "z at site " << site;
  }
}

// ---------------------------------------------------------------------------------------------
// The backward pass on every model

/// The backward pass and posterior index sampling run on the model: every latent's marginal
/// weights are normalised per instance (mpis.md §4–§5) and every sampled index is a particle.
template <class Model>
void expect_posterior_passes(const Model& model, std::int64_t k) {
  const PlatedStructure s = model.structure();
  const int runs = 2;
  MpisEngine<Model, CpuParallel> engine(model, s, plan_mpis(s, k, runs), CpuParallel{}, 7);
  engine.forward();
  engine.backward();
  for (int g = 0; g < s.latent_count(); ++g) {
    const std::vector<double> log_w = engine.log_marginal_weights(g);
    const std::int64_t rows = runs * s.instances(s.latent_decl(g).plate);
    ASSERT_EQ(static_cast<std::int64_t>(log_w.size()), rows * k);
    double worst = 0;
    for (std::int64_t row = 0; row < rows; ++row) {
      double total = 0;
      for (std::int64_t j = 0; j < k; ++j) total += std::exp(log_w[row * k + j]);
      worst = std::max(worst, std::abs(total - 1));
    }
    EXPECT_LT(worst, 1e-9) << s.latent_decl(g).name;
  }
  engine.sample_indices(4);
  for (int g = 0; g < s.latent_count(); ++g) {
    const std::vector<std::int32_t> index = engine.sampled_indices(g);
    EXPECT_TRUE(std::all_of(index.begin(), index.end(), [&](std::int32_t i) {
      return i >= 0 && i < k;
    })) << s.latent_decl(g).name;
  }
}

TEST(MpisPaperModels, PosteriorPassesRunOnEveryModel) {
  const BusBreakdownData bus = BusBreakdownData::synthetic(1);
  const ChimpanzeesData chimps = ChimpanzeesData::synthetic(1);
  const MovieLensData movielens = MovieLensData::synthetic(1);
  const OccupancyData occupancy = OccupancyData::synthetic(1);
  {
    SCOPED_TRACE("bus_breakdown");
    expect_posterior_passes(bus.host_model(), 3);
  }
  {
    SCOPED_TRACE("chimpanzees");
    expect_posterior_passes(chimps.host_model(), 3);
  }
  {
    SCOPED_TRACE("movielens");
    expect_posterior_passes(movielens.host_model(), 3);
  }
  {
    SCOPED_TRACE("occupancy");
    expect_posterior_passes(occupancy.host_model(), 3);
  }
}

}  // namespace
}  // namespace myriad
