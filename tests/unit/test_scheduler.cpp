// The host scheduler: reproducibility for a fixed seed, invariance to chunking and thread count
// (counter-based randomness), warm-up windows, dual averaging and the Welford merge.

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <random>

#include "common/expect_error.hpp"
#include "common/run_configs.hpp"
#include "myriad/mcmc/dual_averaging.hpp"
#include "myriad/mcmc/warmup_schedule.hpp"
#include "myriad/mcmc/welford.hpp"
#include "myriad/models/funnel.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/run/abc_config.hpp"
#include "myriad/run/chmc_config.hpp"
#include "myriad/run/sample.hpp"

namespace myriad {
namespace {

using testing::expect_invalid_argument;

SampleConfig small_config() {
  SampleConfig config = myriad::testing::run_config(37, 60, 25, 99);  // not a multiple of anything convenient
  return config;
}

TEST(Scheduler, SameSeedSameDraws) {
  const auto model = models::Gaussian<double>::make(3, 0.2);
  const SampleResult a = sample(model, small_config());
  const SampleResult b = sample(model, small_config());
  EXPECT_EQ(a.draws_data, b.draws_data);
  SampleConfig other = small_config();
  other.seed = 100;
  EXPECT_NE(a.draws_data, sample(model, other).draws_data);
}

TEST(Scheduler, DrawsDoNotDependOnChunkingOrThreads) {
  const auto model = models::Gaussian<double>::make(3, 0.2);
  const SampleResult reference = sample(model, small_config());
  SampleConfig chunked = small_config();
  chunked.chunk_iterations = 4;
  EXPECT_EQ(reference.draws_data, sample(model, chunked).draws_data);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const SampleResult serial = sample(model, small_config());
  omp_set_num_threads(threads);
  EXPECT_EQ(reference.draws_data, serial.draws_data);
}

TEST(Scheduler, ResultShapesAndCounts) {
  const auto model = models::Gaussian<double>::make(3, 0.2);
  const SampleConfig config = small_config();
  const SampleResult r = sample(model, config);
  EXPECT_EQ(r.draws_data.size(), static_cast<std::size_t>(config.chains * config.draws * 3));
  EXPECT_EQ(r.summary.size(), 3u);
  EXPECT_EQ(r.sampling_stats.transitions, config.chains * config.draws);
  EXPECT_GT(r.sampling_stats.gradient_evaluations, 0);
  EXPECT_GT(r.step_size, 0);
  EXPECT_EQ(r.superchains, 1);  // 37 is prime: no automatic grouping
  // The defaults: ChEES (an adapted trajectory length), and a dense metric in three dimensions.
  EXPECT_GT(r.trajectory_length, 0);
  EXPECT_EQ(r.metric, MetricKind::dense);
  EXPECT_EQ(r.inverse_metric.size(), 9u);
}

TEST(Scheduler, TheAutomaticMetricIsDenseUpToOneHundredDimensionsExceptUnderSnaper) {
  SampleConfig config;
  EXPECT_EQ(config.sampler, HmcSampler::chees);
  EXPECT_EQ(config.metric, MetricKind::automatic);
  EXPECT_EQ(resolve_metric(config, 1), MetricKind::diag);  // one dimension: the same thing
  EXPECT_EQ(resolve_metric(config, 2), MetricKind::dense);
  EXPECT_EQ(resolve_metric(config, kAutomaticDenseMetricMaxDim), MetricKind::dense);
  EXPECT_EQ(resolve_metric(config, kAutomaticDenseMetricMaxDim + 1), MetricKind::diag);
  config.sampler = HmcSampler::snaper;
  EXPECT_EQ(resolve_metric(config, 10), MetricKind::diag);
  config.sampler = HmcSampler::chees;
  config.metric = MetricKind::dense;  // asked for: dense at any dimension it supports
  EXPECT_EQ(resolve_metric(config, 500), MetricKind::dense);
  config.metric = MetricKind::diag;
  EXPECT_EQ(resolve_metric(config, 10), MetricKind::diag);
  // Constrained HMC and the ABC samplers adapt no trajectory length: their configurations say
  // fixed-length HMC.
  EXPECT_EQ(ChmcConfig{}.sampler, HmcSampler::hmc);
  EXPECT_EQ(AbcConfig{}.sampler, HmcSampler::hmc);
}

TEST(Scheduler, WithoutAMetricWindowTheDiagonalIdentityRuns) {
  // No warm-up adapts no metric: sampling runs with M = I, reported as the diagonal it is.
  const SampleResult r =
      sample(models::Gaussian<double>::make(3, 0.2), myriad::testing::run_config(8, 0, 5, 1));
  EXPECT_EQ(r.metric, MetricKind::diag);
  EXPECT_EQ(r.inverse_metric, std::vector<double>(3, 1.0));
}

TEST(Scheduler, ThinningKeepsEveryThinthDraw) {
  const auto model = models::Gaussian<double>::make(3, 0.2);
  const SampleResult all = sample(model, small_config());
  SampleConfig config = small_config();
  config.thin = 4;
  const SampleResult thinned = sample(model, config);
  ASSERT_EQ(thinned.kept_draws, 7);  // draws 0, 4, ..., 24 of 25
  for (std::int64_t c = 0; c < config.chains; ++c)
    for (int k = 0; k < thinned.kept_draws; ++k)
      for (int q = 0; q < 3; ++q)
        ASSERT_EQ(thinned.draws_data[(c * 7 + k) * 3 + q], all.draws_data[(c * 25 + 4 * k) * 3 + q]);
}

TEST(Scheduler, RejectsBadConfiguration) {
  const auto model = models::Gaussian<double>::make(3, 0.2);
  SampleConfig config = small_config();
  config.chains = 0;
  EXPECT_THROW(sample(model, config), invalid_argument);
  config = small_config();
  config.superchains = 5;  // does not divide 37
  EXPECT_THROW(sample(model, config), invalid_argument);
  config = small_config();
  config.target_accept = 1.5;
  EXPECT_THROW(sample(model, config), invalid_argument);
}

/// A model whose density is NaN everywhere: no initial point can be found.
struct NowhereFinite {
  MYRIAD_HD int dim() const { return 2; }
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    return x[0] * 0 + std::numeric_limits<double>::quiet_NaN();
  }
};

TEST(Scheduler, NonFiniteInitialPointsAreAnError) {
  SampleConfig config = small_config();
  config.init_tries = 3;
  EXPECT_THROW(sample(NowhereFinite{}, config), invalid_argument);
}

TEST(Scheduler, AutomaticSuperchains) {
  EXPECT_EQ(automatic_superchains(4096), 16);
  EXPECT_EQ(automatic_superchains(24), 12);
  EXPECT_EQ(automatic_superchains(37), 1);
  EXPECT_EQ(automatic_superchains(2), 1);
}

TEST(Scheduler, OneSuperchainMeansIndependentStarts) {
  // Draws one transition of a tiny fixed step after no warm-up: each draw is its chain's start
  // to within 1e-9 (whatever the sampler: a NUTS tree of 1023 steps of 1e-14 moves it ~1e-11).
  // superchains = 1 (as automatic gives for a prime chain count) starts every chain from its
  // own point; K > 1 starts each group of chains/K from one.
  const auto model = models::Gaussian<double>::make(2, 0.0);
  SampleConfig config = myriad::testing::run_config(12, 0, 1, 5);
  config.adapt_step_size = false;
  config.initial_step_size = 1e-14;
  const auto starts = [&](int superchains) {
    config.superchains = superchains;
    return sample(model, config).draws_data;  // [chain][draw 0][quantity]
  };
  const std::vector<double> independent = starts(1);
  for (int a = 0; a < 12; ++a)
    for (int b = a + 1; b < 12; ++b)
      EXPECT_GT(std::fabs(independent[2 * a] - independent[2 * b]), 1e-6) << a << ", " << b;
  const std::vector<double> grouped = starts(4);
  for (int c = 0; c < 12; ++c)
    EXPECT_NEAR(grouped[2 * c], grouped[2 * (c - c % 3)], 1e-9) << "chain " << c;
  EXPECT_GT(std::fabs(grouped[0] - grouped[6]), 1e-6);
}

/// A model that chooses its chains' starts (model/concept.hpp, initial_point).
struct StartsAtOne {
  int dim() const { return 1; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    return -0.5 * x[0] * x[0];
  }
  template <class Vec>
  bool initial_point(const RandomStream&, std::uint32_t, Vec& x) const {
    x[0] = 1.0;
    return true;
  }
};

TEST(Scheduler, InitialPositionsAreWhereTheChainsStart) {
  // As above: no warm-up and a tiny fixed step, so each first draw is its chain's start.
  const auto model = models::Gaussian<double>::make(2, 0.0);
  SampleConfig config = myriad::testing::run_config(3, 0, 1, 5);
  config.adapt_step_size = false;
  config.initial_step_size = 1e-14;
  config.initial_positions = {0.5, -1.0};  // one point for every chain
  const SampleResult shared = sample(model, config);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(shared.draws_data[2 * c], 0.5, 1e-9);
    EXPECT_NEAR(shared.draws_data[2 * c + 1], -1.0, 1e-9);
  }
  EXPECT_EQ(shared.superchains, 1);
  config.initial_positions = {1, 2, 3, 4, 5, 6};  // [chain][dim]
  const SampleResult each = sample(model, config);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(each.draws_data[i], i + 1.0, 1e-9);

  config.initial_positions = {1, 2, 3};
  expect_invalid_argument([&] { sample(model, config); },
                          "initial_positions has 3 values: expected dim = 2");
  config.initial_positions = {1, std::nan("")};
  expect_invalid_argument([&] { sample(model, config); }, "initial_positions[1] is not finite");
  config.initial_positions = {1, 2};
  config.init_radius = 1;
  expect_invalid_argument([&] { sample(model, config); },
                          "init_radius applies to drawn initial points");
  // A point where the log density is not finite is refused, not sampled from.
  config.init_radius = 0;
  config.initial_positions = {-2000.0, 0.5};  // e^{-v} overflows: log density −∞
  expect_invalid_argument([&] { sample(models::Funnel<double>::make(2), config); },
                          "not finite at the given initial point");
}

/// A model whose chains start at their own index (initial_point with the chain argument).
struct StartsAtItsIndex {
  int dim() const { return 1; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    return -0.5 * x[0] * x[0] / 100.0;
  }
  template <class Vec>
  bool initial_point(const RandomStream&, std::uint32_t, std::int64_t chain, Vec& x) const {
    x[0] = static_cast<double>(chain);
    return true;
  }
};

TEST(Scheduler, InitialPointIsToldTheChainOrItsSuperchainsFirstChain) {
  static_assert(model_has_chain_initial_point<StartsAtItsIndex>, "the four-argument form");
  static_assert(model_has_initial_point<StartsAtItsIndex>, "counts as choosing its starts");
  static_assert(!model_has_chain_initial_point<StartsAtOne>, "the three-argument form");
  SampleConfig config = myriad::testing::run_config(4, 0, 1, 5);
  config.adapt_step_size = false;
  config.initial_step_size = 1e-14;
  config.superchains = 1;
  const SampleResult own = sample(StartsAtItsIndex{}, config);
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(own.draws_data[c], c, 1e-9);
  config.superchains = 2;  // chains 0, 1 share chain 0's start; 2, 3 chain 2's
  const SampleResult shared = sample(StartsAtItsIndex{}, config);
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(shared.draws_data[c], c - c % 2, 1e-9);
}

TEST(Scheduler, InitRadiusWithAModelThatChoosesItsStartsIsAnError) {
  SampleConfig config = myriad::testing::run_config(4, 10, 10, 5);
  EXPECT_NO_THROW(sample(StartsAtOne{}, config));
  config.init_radius = 3;
  expect_invalid_argument([&] { sample(StartsAtOne{}, config); },
                          "init_radius does not apply: this model chooses");
}

TEST(WarmupSchedule, StanWindowsForOneThousandIterations) {
  // Stan's defaults: 75 / 25, 50, 100, 200, 500 (the last absorbs the rest) / 50.
  const WarmupSchedule s = WarmupSchedule::make(1000, true);
  const std::vector<int> expected = {99, 149, 249, 449, 949};
  EXPECT_EQ(s.window_ends, expected);
  EXPECT_FALSE(s.in_metric_window(74));
  EXPECT_TRUE(s.in_metric_window(75));
  EXPECT_FALSE(s.in_metric_window(950));
}

TEST(WarmupSchedule, ShortWarmupUsesProportionalBuffers) {
  const WarmupSchedule s = WarmupSchedule::make(100, true);
  EXPECT_EQ(s.metric_start, 15);
  ASSERT_EQ(s.window_ends.size(), 1u);
  EXPECT_EQ(s.window_ends[0], 89);
  EXPECT_FALSE(WarmupSchedule::make(10, true).adapt_metric);
}

TEST(DualAveraging, ConvergesToStepSizeMeetingTheTarget) {
  // A synthetic acceptance curve α(ε) = exp(−ε²): the fixed point of δ = α is ε* = √(−log δ).
  DualAveraging adapter(1.0, DualAveraging::Options{0.8});
  double eps = adapter.step_size();
  for (int t = 0; t < 2000; ++t) eps = adapter.update(std::exp(-eps * eps));
  EXPECT_NEAR(adapter.final_step_size(), std::sqrt(-std::log(0.8)), 0.01);
}

TEST(Welford, BatchMergeEqualsDirectVariance) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal(3.0, 2.0);
  std::vector<double> all;
  WelfordVariance welford(1);
  for (int batch = 0; batch < 7; ++batch) {
    std::vector<double> xs(13 + batch);
    for (double& x : xs) x = normal(rng);
    EnsembleMoments m;
    m.count = static_cast<std::int64_t>(xs.size());
    double mean = 0;
    for (double x : xs) mean += x;
    mean /= xs.size();
    double m2 = 0;
    for (double x : xs) m2 += (x - mean) * (x - mean);
    m.mean = {mean};
    m.m2 = {m2};
    welford.add(m);
    all.insert(all.end(), xs.begin(), xs.end());
  }
  double mean = 0;
  for (double x : all) mean += x;
  mean /= all.size();
  double var = 0;
  for (double x : all) var += (x - mean) * (x - mean);
  var /= (all.size() - 1);
  EXPECT_NEAR(welford.mean()[0], mean, 1e-12);
  EXPECT_NEAR(welford.variance(0), var, 1e-12);
}

}  // namespace
}  // namespace myriad
