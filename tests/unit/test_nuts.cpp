// NUTS (mcmc/nuts.hpp) and the dense metric (mcmc/metric.hpp) on the CPU backend, through the
// per-chain code the CUDA kernels run: the iterative tree's bookkeeping, the metric's algebra,
// and exactness: chains started at exact draws of a Gaussian are still exact draws after NUTS
// (and HMC) transitions, at any step size, depth cap and metric. The last is the test that
// catches a wrong weight, a wrong merge or a missed U-turn check, which bias the moments.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/exact_samples.hpp"
#include "common/expect_error.hpp"
#include "myriad/backend/cpu_hmc_backend.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/cpu_ensemble_moments.hpp"
#include "myriad/detail/hmc_chain_bodies.hpp"
#include "myriad/mcmc/metric.hpp"
#include "myriad/mcmc/nuts.hpp"
#include "myriad/mcmc/welford.hpp"
#include "myriad/models/gaussian.hpp"

namespace myriad {
namespace {

using Model = models::Gaussian<double>;

TEST(NutsTree, CheckpointIndicesFollowTheBitsOfTheLeafNumber) {
  EXPECT_EQ(count_ones(0), 0);
  EXPECT_EQ(count_ones(6), 2);
  EXPECT_EQ(count_ones(13), 3);
  EXPECT_EQ(trailing_ones(6), 0);
  EXPECT_EQ(trailing_ones(7), 3);
  EXPECT_EQ(trailing_ones(13), 1);
  // Leaf 3 (binary 11) ends the subtrees [2, 3] and [0, 3], whose first leaves stored their
  // checkpoints at popcount(2) = 1 and popcount(0) = 0.
  EXPECT_EQ(count_ones(3) - 1, 1);
  EXPECT_EQ(count_ones(3) - trailing_ones(3), 0);
}

/// The generalised U-turn criterion of a span with end momenta p₋, p₊ and sum ρ.
bool turning(const std::vector<double>& inverse_metric, const std::vector<double>& p_minus,
             const std::vector<double>& p_plus, const std::vector<double>& rho) {
  const auto metric = MetricView<double>::diagonal_metric(inverse_metric.data(), 2);
  return span_turning(metric, p_minus, p_plus, [&](int i) { return rho[i]; });
}

TEST(NutsTree, GeneralisedUTurnCriterionUsesTheMetric) {
  const std::vector<double> p_minus{1.0, 0.0}, p_plus{0.0, 1.0}, rho{1.0, -0.5};
  const std::vector<double> identity{1.0, 1.0}, stretched{1.0, 4.0};
  // I: (p₋·ρ, p₊·ρ) = (1, −0.5): turning at the + end.
  EXPECT_TRUE(turning(identity, p_minus, p_plus, rho));
  const std::vector<double> rho_ahead{1.0, 0.5};
  EXPECT_FALSE(turning(identity, p_minus, p_plus, rho_ahead));
  // M⁻¹ scales the velocities, not the sign here; a zero product counts as turning.
  EXPECT_FALSE(turning(stretched, p_minus, p_plus, rho_ahead));
  EXPECT_TRUE(turning(identity, p_minus, p_plus, {1.0, 0.0}));
}

/// A 3 × 3 symmetric positive definite M⁻¹ and its storage (M⁻¹, then L).
std::vector<double> dense_inverse_metric() {
  return {2.0,  0.6, -0.3,  //
          0.6,  1.0, 0.2,   //
          -0.3, 0.2, 0.5};
}

TEST(Metric, DenseMomentumHasCovarianceMAndKineticEnergyHalfZz) {
  const std::vector<double> sigma = dense_inverse_metric();
  const std::vector<double> storage = metric_storage(sigma, 3);
  ASSERT_EQ(storage.size(), 18u);
  const MetricView<double> metric = MetricView<double>::from_storage(storage.data(), 3, true);
  ASSERT_TRUE(metric.is_dense());
  // p = L⁻ᵀz: then ½ pᵀM⁻¹p = ½ zᵀL⁻¹LLᵀL⁻ᵀz = ½ zᵀz, for any z.
  const std::vector<double> z{0.7, -1.2, 0.4};
  std::vector<double> p = z;
  const ChainVector<double> pv{p.data(), 1, 3};
  metric.momentum_from_normal(pv);
  EXPECT_NEAR(metric.kinetic_energy(pv), 0.5 * (0.49 + 1.44 + 0.16), 1e-14);
  // The velocity is M⁻¹p, and LᵀP = z.
  for (int i = 0; i < 3; ++i) {
    double v = 0;
    for (int j = 0; j < 3; ++j) v += sigma[i * 3 + j] * p[j];
    EXPECT_NEAR(metric.velocity(pv, i), v, 1e-14);
    double lt_p = 0;
    for (int j = i; j < 3; ++j) lt_p += storage[9 + j * 3 + i] * p[j];
    EXPECT_NEAR(lt_p, z[i], 1e-14);
  }
  // The drift moves q by ε M⁻¹p.
  std::vector<double> q{0.0, 1.0, -1.0};
  metric.drift(ChainVector<double>{q.data(), 1, 3}, pv, 0.5);
  EXPECT_NEAR(q[1], 1.0 + 0.5 * metric.velocity(pv, 1), 1e-15);
}

TEST(Metric, StorageRejectsBadMetrics) {
  std::vector<double> sigma = dense_inverse_metric();
  EXPECT_EQ(metric_storage(std::vector<double>{1.0, 2.0, 3.0}, 3).size(), 3u);
  testing::expect_invalid_argument(
      [] {
        metric_storage(std::vector<double>{1.0, 2.0}, 3);
      },
      "inverse metric has 2 entries");
  testing::expect_invalid_argument(
      [] {
        metric_storage(std::vector<double>{1.0, 0.0, 3.0}, 3);
      },
      "must be positive");
  sigma[1] = 0.61;  // (0, 1) against (1, 0) = 0.6
  testing::expect_invalid_argument([&] { metric_storage(sigma, 3); }, "not symmetric at (1, 0)");
  const std::vector<double> indefinite{1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0};
  testing::expect_invalid_argument([&] { metric_storage(indefinite, 3); }, "not positive definite");
  const int too_large = kMaxDenseMetricDim + 1;
  const std::vector<double> big(static_cast<std::size_t>(too_large) * too_large, 0.0);
  testing::expect_invalid_argument([&] { metric_storage(big, too_large); },
                                   "a dense metric supports dimensions up to 1024");
}

TEST(Metric, WelfordCovarianceMatchesTheDirectCovarianceOverBatches) {
  // Two batches of 4 chains in 2 dimensions, [dim][chain].
  const std::vector<double> a{1.0, 2.0, 4.0, 7.0, /**/ 0.5, -1.0, 2.0, 0.0};
  const std::vector<double> b{-3.0, 0.0, 1.0, 2.0, /**/ 1.0, 1.5, -2.0, 4.0};
  WelfordCovariance covariance(2);
  EnsembleCovariance batch;
  for (const auto* points : {&a, &b}) {
    ensemble_covariance_cpu(EnsembleView<const double>{points->data(), 4, 2, 4}, batch);
    covariance.add(batch);
  }
  std::vector<double> x, y;
  for (int c = 0; c < 4; ++c) {
    x.push_back(a[c]);
    y.push_back(a[4 + c]);
    x.push_back(b[c]);
    y.push_back(b[4 + c]);
  }
  double mx = 0, my = 0;
  for (int i = 0; i < 8; ++i) mx += x[i] / 8, my += y[i] / 8;
  double sxx = 0, sxy = 0, syy = 0;
  for (int i = 0; i < 8; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx) / 7;
    sxy += (x[i] - mx) * (y[i] - my) / 7;
    syy += (y[i] - my) * (y[i] - my) / 7;
  }
  EXPECT_EQ(covariance.count(), 8);
  EXPECT_NEAR(covariance.covariance(0, 0), sxx, 1e-12);
  EXPECT_NEAR(covariance.covariance(0, 1), sxy, 1e-12);
  EXPECT_NEAR(covariance.covariance(1, 0), sxy, 1e-12);
  EXPECT_NEAR(covariance.covariance(1, 1), syy, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Exactness from exact starts.

constexpr int kDim = 3;
constexpr double kMean = 0.5, kSd = 1.5, kRho = 0.6;
constexpr std::int64_t kChains = 40000;

/// Σ of the test Gaussian, row-major.
std::vector<double> target_covariance() {
  std::vector<double> cov(kDim * kDim);
  for (int i = 0; i < kDim; ++i)
    for (int j = 0; j < kDim; ++j) cov[i * kDim + j] = kSd * kSd * (i == j ? 1.0 : kRho);
  return cov;
}

/// kChains exact draws of the Gaussian as [dim][chain] (the layout set_positions takes): x = m +
/// Lz with Σ = LLᵀ, z from the streams of seed 99.
std::vector<double> exact_starts() {
  std::vector<double> factor = target_covariance();
  EXPECT_TRUE(linalg::cholesky_in_place(dense_matrix(factor.data(), kDim, kDim)));
  std::vector<double> points(kDim * kChains);
  for (std::int64_t c = 0; c < kChains; ++c) {
    const RandomStream rng(99, static_cast<std::uint64_t>(c));
    double z[kDim];
    for (int i = 0; i < kDim; ++i) z[i] = rng.normal<double>(0, Purpose::user, i);
    for (int i = 0; i < kDim; ++i) {
      double x = kMean;
      for (int j = 0; j <= i; ++j) x += factor[i * kDim + j] * z[j];
      points[i * kChains + c] = x;
    }
  }
  return points;
}

/// Runs `iterations` transitions from exact starts and checks the chains' points against the
/// Gaussian's mean and covariance (each chain one independent draw).
IterationStats expect_exact_after(const HmcSettings<double>& settings,
                                  const std::vector<double>& inverse_metric, int iterations) {
  auto backend = make_cpu_hmc_backend<Model, double>(Model::make(kDim, kRho, kMean, kSd), kChains);
  EXPECT_EQ(backend->set_positions(exact_starts()), 0);
  backend->set_inverse_metric(inverse_metric);
  const IterationStats stats = backend->run(settings, 0, iterations, nullptr, 0, 0, nullptr);
  const std::vector<double> x = backend->positions();
  std::vector<std::vector<double>> draws(kChains, std::vector<double>(kDim));
  for (std::int64_t c = 0; c < kChains; ++c)
    for (int d = 0; d < kDim; ++d) draws[c][d] = x[d * kChains + c];
  testing::expect_gaussian_moments(draws, std::vector<double>(kDim, kMean), target_covariance());
  EXPECT_EQ(stats.transitions, kChains * iterations);
  return stats;
}

HmcSettings<double> nuts_settings(double step_size, int max_depth) {
  HmcSettings<double> settings;
  settings.seed = 5;
  settings.step_size = step_size;
  settings.max_tree_depth = max_depth;
  return settings;
}

TEST(NutsExactness, KeepsExactDrawsExactWithADiagonalMetric) {
  // A step near the stable limit in the narrow direction: U-turns, long trees and rejections.
  const IterationStats stats = expect_exact_after(nuts_settings(0.9, 10), {1.0, 2.5, 0.7}, 3);
  EXPECT_GT(stats.tree_depth_sum, stats.transitions);  // deeper than one doubling on average
  EXPECT_EQ(stats.tree_depth_capped, 0);
  EXPECT_GT(stats.accepted, stats.transitions / 2);
  EXPECT_GE(stats.lockstep_gradient_evaluations, stats.gradient_evaluations);
}

TEST(NutsExactness, KeepsExactDrawsExactWithCappedTrees) {
  // Depth 2 with a small step: every tree stops at the cap, after exactly 1 + 2 = 3 steps, so
  // every warp's lanes take the same steps.
  const IterationStats stats = expect_exact_after(nuts_settings(0.05, 2), {1, 1, 1}, 3);
  EXPECT_EQ(stats.tree_depth_capped, stats.transitions);
  EXPECT_EQ(stats.tree_depth_max, 2);
  EXPECT_EQ(stats.gradient_evaluations, 3 * stats.transitions);
  EXPECT_EQ(stats.lockstep_gradient_evaluations, stats.gradient_evaluations);
}

TEST(NutsExactness, KeepsExactDrawsExactWithADenseMetric) {
  const IterationStats stats = expect_exact_after(nuts_settings(0.7, 10), target_covariance(), 3);
  // With M⁻¹ = Σ the target is isotropic in the metric: the trees are short and all accept.
  EXPECT_EQ(stats.divergent, 0);
  EXPECT_GT(stats.accept_prob_sum() / stats.transitions, 0.8);
}

TEST(NutsExactness, StopsAtTheFirstUTurnWhenTheMetricMakesTheTargetIsotropic) {
  // A 10-D standard normal at ε = 0.82 with M = I: every direction turns after half a period of
  // ≈ 7.5 steps, at once. The momentum sum over a whole period is then ≈ 0, which the U-turn
  // check of the whole span alone can miss; Stan's checks across the halves of each merge catch
  // it. Without them (Stan < 2.21, NumPyro) these trees took 48.7 steps on average, to depth 9.
  constexpr int dim = 10;
  constexpr std::int64_t chains = 4096;
  auto backend = make_cpu_hmc_backend<Model, double>(Model::make(dim, 0.0), chains);
  std::vector<double> points(dim * chains);
  for (std::int64_t c = 0; c < chains; ++c) {
    const RandomStream rng(98, static_cast<std::uint64_t>(c));
    for (int i = 0; i < dim; ++i) points[i * chains + c] = rng.normal<double>(0, Purpose::user, i);
  }
  ASSERT_EQ(backend->set_positions(points), 0);
  backend->set_inverse_metric(std::vector<double>(dim, 1.0));
  const IterationStats stats = backend->run(nuts_settings(0.82, 10), 0, 5, nullptr, 0, 0, nullptr);
  // Half a period is 3.7 steps: trees of depth 2 or 3 (3 or 7 steps), none deeper than 4.
  EXPECT_LE(stats.tree_depth_max, 4);
  EXPECT_LT(static_cast<double>(stats.gradient_evaluations) / stats.transitions, 8.0);
}

TEST(HmcExactness, KeepsExactDrawsExactWithADenseMetric) {
  HmcSettings<double> settings;
  settings.seed = 6;
  settings.step_size = 0.6;
  settings.max_leapfrog_steps = 5;
  expect_exact_after(settings, target_covariance(), 3);
}

TEST(NutsBackend, RejectsADepthCapOutsideOneToFifteen) {
  auto backend = make_cpu_hmc_backend<Model, double>(Model::make(2, 0.0), 4);
  ASSERT_EQ(backend->initialize(1, 2.0, 10, 1), 0);
  for (int depth : {-1, 16}) {
    testing::expect_invalid_argument(
        [&] { backend->run(nuts_settings(0.1, depth), 0, 1, nullptr, 0, 0, nullptr); },
        "max tree depth must lie in [1, 15]");
  }
}

}  // namespace
}  // namespace myriad
