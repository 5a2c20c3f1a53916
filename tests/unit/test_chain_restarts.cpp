// Stranded chains and their restarts in the HMC warm-up (mcmc/chain_restarts.hpp, the
// scheduler's checks in src/run/run_hmc.cpp): which chains count as stranded, where they restart
// from, when nothing restarts, and a run in which a shared step size strands the chains that
// start where the density is far stiffer than at the posterior.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/run_configs.hpp"
#include "common/test_generators.hpp"
#include "myriad/backend/cpu_chmc_backend.hpp"
#include "myriad/backend/cpu_hmc_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/ensemble_checks.hpp"
#include "myriad/mcmc/chain_restarts.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/linear_regression.hpp"
#include "myriad/run/sample.hpp"
#include "stat/posterior_check.hpp"

namespace myriad {
namespace {

TEST(ChainRestarts, StrandedChainsRestartFromHealthyOnes) {
  const std::vector<double> previous = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<double> current = {1.5, 2, 3.5, 4.5, 5, 6.5, 7.5, 8.5, 9, 10.5};  // 1, 4, 8 stay
  const RestartPlan plan = plan_restarts(unmoved_chains(previous, current), 5, 75);
  EXPECT_TRUE(plan.restart);
  EXPECT_EQ(plan.stranded, 3);
  for (std::int64_t c = 0; c < 10; ++c) {
    const bool stranded = c == 1 || c == 4 || c == 8;
    if (stranded) {
      EXPECT_NE(plan.source[c], c);
      EXPECT_NE(current[plan.source[c]], previous[plan.source[c]]) << "a stranded source";
    } else {
      EXPECT_EQ(plan.source[c], c);
    }
  }
  EXPECT_NO_THROW(check_chain_sources(plan.source, 10));
  EXPECT_EQ(plan_restarts(unmoved_chains(previous, current), 5, 75).source, plan.source)
      << "deterministic";
}

TEST(ChainRestarts, HalfOrMoreStuckRestartNothing) {
  // When half the chains are stuck, the shared step is too large for the ensemble: dual
  // averaging's job, not a restart's (which would collapse the ensemble onto a few points).
  const std::vector<double> previous = {1, 2, 3, 4};
  const RestartPlan half = plan_restarts({true, true, false, false}, 5, 25);
  EXPECT_FALSE(half.restart);
  EXPECT_EQ(half.stranded, 2);
  EXPECT_EQ(half.source, (std::vector<std::int64_t>{0, 1, 2, 3}));
  const RestartPlan none =
      plan_restarts(unmoved_chains(previous, std::vector<double>{1.5, 2.5, 3.5, 4.5}), 5, 25);
  EXPECT_FALSE(none.restart);
  EXPECT_EQ(none.stranded, 0);
}

TEST(ChainRestarts, ChainsFarBehindTheEnsembleRestartWhateverTheirNumber) {
  // Dimension 2: a chain more than 100 + 10·2 = 120 below the upper quartile (the 7th smallest
  // of 8, here −0.5) is far behind: a bar at −120.5.
  EXPECT_EQ(far_behind_log_density(2), 120.0);
  const std::vector<double> three = {-1e60, -1e50, -121, -120, -2, -1, -0.5, -0.1};
  EXPECT_EQ(far_behind_chains(three, 2),
            (std::vector<bool>{true, true, true, false, false, false, false, false}));
  // Five of eight far behind (more than half: arma11's explosive starts): all restart, from the
  // three that are not, while unmoved chains beyond half would stay.
  const std::vector<double> five = {-1e60, -1e50, -1e40, -1e30, -500, -1, -0.5, -0.1};
  const std::vector<bool> far = far_behind_chains(five, 2);
  const RestartPlan plan = plan_restarts(std::vector<bool>(8, false), far, 5, 25);
  EXPECT_TRUE(plan.restart);
  EXPECT_EQ(plan.far_behind, 5);
  EXPECT_EQ(plan.stranded, 5);
  for (int c = 0; c < 5; ++c) EXPECT_GE(plan.source[c], 5) << c;
  for (int c = 5; c < 8; ++c) EXPECT_EQ(plan.source[c], c);
  // The same with the healthy three unmoved too: no source is left, nothing restarts.
  std::vector<bool> unmoved(8, false);
  unmoved[5] = unmoved[6] = unmoved[7] = true;
  EXPECT_FALSE(plan_restarts(unmoved, far, 5, 25).restart);
  // Unmoved chains that are half the ensemble stay (and are no sources), the far-behind restart.
  const std::vector<double> spread = {-1e60, -3, -2, -1, -0.9, -0.8, -0.5, -0.1};
  std::vector<bool> half(8, false);
  half[1] = half[2] = half[3] = half[4] = true;
  const RestartPlan mixed = plan_restarts(half, far_behind_chains(spread, 2), 5, 25);
  EXPECT_TRUE(mixed.restart);
  EXPECT_TRUE(mixed.unmoved_kept);
  EXPECT_GE(mixed.source[0], 5);
  for (int c = 1; c < 8; ++c) EXPECT_EQ(mixed.source[c], c);
}

TEST(ChainRestarts, SourcesAreUniformOverTheHealthyChains) {
  // One stranded chain among five, 4000 checks: each healthy chain is its source ~1000 times.
  // Pearson's chi-square with 3 degrees of freedom exceeds 33 with probability below 1e-6.
  const std::vector<float> previous = {0, 1, 2, 3, 4};
  const std::vector<float> current = {0.5f, 1, 2.5f, 3.5f, 4.5f};
  std::vector<int> counts(5, 0);
  for (std::uint32_t check = 0; check < 4000; ++check)
    ++counts[plan_restarts(unmoved_chains(previous, current), 11, check).source[1]];
  EXPECT_EQ(counts[1], 0);
  double chi_square = 0;
  for (int c : {0, 2, 3, 4}) chi_square += (counts[c] - 1000.0) * (counts[c] - 1000.0) / 1000.0;
  EXPECT_LT(chi_square, 33.0) << counts[0] << " " << counts[2] << " " << counts[3] << " "
                              << counts[4];
}

TEST(ChainRestarts, BackendsRestartAChainAtItsSourcesPoint) {
  // HMC: the point, gradient and log density are copied; constrained HMC: the point and back-off
  // are copied and the Jacobian, Gram factor, φ and ∇φ re-evaluated there, by the same code, so
  // the log density comes out bit for bit. Then both run on from there.
  const std::int64_t chains = 12;
  std::vector<std::int64_t> source(static_cast<std::size_t>(chains));
  for (std::int64_t c = 0; c < chains; ++c) source[c] = c;
  source[2] = 7;
  source[3] = 7;
  source[11] = 0;
  const auto expect_copied = [&](const auto& backend, int dim) {
    const auto positions = backend.positions();
    const auto log_densities = backend.log_densities();
    for (std::int64_t c = 0; c < chains; ++c) {
      const std::int64_t s = source[c];
      EXPECT_EQ(log_densities[c], log_densities[s]) << "chain " << c;
      for (int d = 0; d < dim; ++d)
        EXPECT_EQ(positions[d * chains + c], positions[d * chains + s]) << "chain " << c;
    }
  };

  auto hmc = make_cpu_hmc_backend<models::Gaussian<double>, double>(
      models::Gaussian<double>::make(3, 0.2), chains);
  ASSERT_EQ(hmc->initialize(4, 2.0, 10, 1), 0);
  HmcSettings<double> hmc_settings;
  hmc_settings.step_size = 0.4;
  hmc->run(hmc_settings, 0, 2, nullptr, 0, 0, nullptr);
  hmc->copy_chains(source);
  expect_copied(*hmc, 3);
  EXPECT_GT(hmc->run(hmc_settings, 2, 3, nullptr, 0, 0, nullptr).accepted, 0);

  const test_generators::TestSphere sphere;
  auto chmc = make_cpu_chmc_backend<test_generators::TestSphere, double>(sphere, chains);
  ASSERT_EQ(chmc->initialize(4, 10, 1), 0);
  ChmcSettings<double> chmc_settings;
  chmc_settings.step.step_size = 1.6;
  chmc_settings.step_back_off = true;
  chmc->run(chmc_settings, 0, 3, nullptr, 0, 0);
  EXPECT_EQ(chmc->copy_chains(source), 0);
  expect_copied(*chmc, sphere.input_dim());
  const std::vector<std::uint8_t> halvings = chmc->step_halvings();
  for (std::int64_t c = 0; c < chains; ++c) EXPECT_EQ(halvings[c], halvings[source[c]]);
  EXPECT_GT(chmc->run(chmc_settings, 3, 3, nullptr, 0, 0).accepted, 0);

  auto moving_source = source;  // chain 2 copies chain 7, which itself copies chain 0
  moving_source[7] = 0;
  EXPECT_THROW(chmc->copy_chains(moving_source), invalid_argument);
}

/// A location–scale regression, y_i ~ N(β, σ²) with n = 100 and flat priors on β and σ, on
/// data of sd 20: the posterior has σ ≈ 20, but Stan's starts put σ = e^τ in (e^−2, e^2), where
/// the curvature in τ, 2 Σ (y_i − β)²/σ², reaches 10^6 against the posterior's 2n = 200. Chains
/// started at small σ reject every proposal at a step the others accept; they then dominate the
/// variance the metric is estimated from (τ's inverse metric over 1 where the posterior's variance
/// is 0.005). Marginally β | y is Student-t with n − 2 degrees of freedom, centre ȳ and scale²
/// S/(n(n − 2)), S = Σ (y_i − ȳ)²: E[β] = ȳ, Var[β] = S/(n(n − 4)).
struct LocationScale {
  static constexpr int kN = 100;
  std::vector<double> x = std::vector<double>(kN, 1.0), y;
  double mean = 0, sum_sq = 0;

  LocationScale() {
    for (int i = 0; i < kN; ++i)
      y.push_back(
          20 * RandomStream(7, static_cast<std::uint64_t>(i)).normal<double>(0, Purpose::user, 0));
    for (double v : y) mean += v / kN;
    for (double v : y) sum_sq += (v - mean) * (v - mean);
  }
  models::LinearRegressionData<double> data() const {
    return models::LinearRegressionData<double>::from_arrays(
        x, y, kN, 1, {0.0}, models::LinearRegressionData<double>::flat(1), models::ScalePrior::flat,
        1.0);
  }
};

TEST(ChainRestarts, TheWarmupRestartsChainsStrandedAtStiffStarts) {
  const LocationScale problem;
  const auto data = problem.data();
  // Fixed-length HMC with the diagonal metric, whose entry for tau the stranded chains inflate.
  SampleConfig config = testing::run_config(64, 300, 200, 3);
  testing::fixed_length_hmc(config);
  config.restart_stranded = false;
  const SampleResult stranded = sample(data.host_model(), config);
  EXPECT_EQ(stranded.warmup_restarts, 0);
  EXPECT_GT(stranded.sampling_stuck_chains, 0) << "no chain stranded: the test shows nothing";
  EXPECT_GT(stranded.inverse_metric[1], 0.1) << "the stranded chains set tau's metric";

  config.restart_stranded = true;
  const SampleResult restarted = sample(data.host_model(), config);
  EXPECT_GE(restarted.warmup_restarted_chains, stranded.sampling_stuck_chains);
  EXPECT_GE(restarted.warmup_restarts, restarted.warmup_restarted_chains);
  EXPECT_EQ(restarted.warmup_stuck_checks, 0);
  EXPECT_EQ(restarted.sampling_stuck_chains, 0);
  EXPECT_LT(restarted.inverse_metric[1], 0.01);
  const double n = LocationScale::kN;
  const auto beta = [](double v) { return v; };
  const auto squared_deviation = [&](double v) { return (v - problem.mean) * (v - problem.mean); };
  testing::expect_within_mcse(testing::mean_of(restarted, 0, beta), problem.mean, "E[beta]");
  testing::expect_within_mcse(testing::mean_of(restarted, 0, squared_deviation),
                              problem.sum_sq / (n * (n - 4)), "Var[beta]");
}

}  // namespace
}  // namespace myriad
