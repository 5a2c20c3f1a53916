// The annealing engine: schedules, the base distribution and reflection, the per-particle HAIS
// transition, the CPU backend and the scheduler (estimate/hais.hpp, run/ais.hpp). Statistical
// checks use the estimator's own standard error (hais.md §3) with fixed seeds.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "myriad/app/option_names.hpp"
#include "myriad/backend/cpu_ais_backend.hpp"
#include "myriad/core/error.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_schedule.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/run/ais.hpp"

namespace {

using myriad::AisConfig;
using myriad::AisResult;

constexpr double kHalfLogTwoPi = 0.91893853320467274178;

/// N(μ·1, σ² I) without its normaliser: log Z = D (½ log 2π + log σ). Exact samples for BDMC.
struct ShiftedGaussian {
  using value_type = double;
  int d = 4;
  double mu = 1.5;
  double sigma = 0.5;

  int dim() const { return d; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum = S(0);
    for (int i = 0; i < d; ++i) sum += (x[i] - mu) * (x[i] - mu);
    return S(-0.5) * sum / (sigma * sigma);
  }
  double exact_log_z(int) const { return d * (kHalfLogTwoPi + std::log(sigma)); }
  template <class Out>
  void exact_sample(int, const myriad::RandomStream& rng, std::uint32_t draw, Out& x) const {
    for (int i = 0; i < d; ++i)
      x[i] = mu + sigma * rng.normal<double>(draw, myriad::Purpose::exact_sample,
                                             static_cast<std::uint32_t>(i));
  }
};

/// Problem p of a batch: N(p·1, σ_p² I) unnormalised with σ_p = 0.5 + 0.25 p.
struct GaussianBatch {
  using value_type = double;
  int d = 3;
  int points = 4;
  int dim() const { return d; }
  int num_problems() const { return points; }
  ShiftedGaussian problem(int p) const { return {d, static_cast<double>(p), 0.5 + 0.25 * p}; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    return problem(0).log_density(x);
  }
  double exact_log_z(int p) const { return problem(p).exact_log_z(0); }
};

/// exp(−(x − 1)²/(2·0.5²)) on x ≥ 0 per coordinate: Z = 0.5 √(2π) Φ(2) per coordinate.
struct TruncatedGaussian {
  using value_type = double;
  int d = 3;
  int dim() const { return d; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum = S(0);
    for (int i = 0; i < d; ++i) sum += (x[i] - 1.0) * (x[i] - 1.0);
    return S(-2.0) * sum;
  }
  double lower_bound(int) const { return 0.0; }
  double upper_bound(int) const { return std::numeric_limits<double>::infinity(); }
  double exact_log_z(int) const {
    const double phi2 = 0.5 * std::erfc(-2.0 / std::sqrt(2.0));
    return d * (std::log(0.5) + kHalfLogTwoPi + std::log(phi2));
  }
};

/// The Gaussian of ShiftedGaussian restricted to x₀ ≥ 0 without declaring a bound: base draws
/// and proposals below 0 have log density −∞ (zero weight, rejected), Z is halved… for μ = 0.
struct HalfSpaceGaussian {
  using value_type = double;
  int d = 2;
  int dim() const { return d; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum = S(0);
    for (int i = 0; i < d; ++i) sum += x[i] * x[i];
    if (x[0] < 0) return S(-std::numeric_limits<double>::infinity());
    return S(-0.5) * sum;
  }
  double exact_log_z(int) const { return d * kHalfLogTwoPi - std::log(2.0); }
};

/// N(1, I) in three dimensions, unnormalised, computed in float.
struct FloatGaussian {
  using value_type = float;
  int dim() const { return 3; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum = S(0);
    for (int i = 0; i < 3; ++i) sum += (x[i] - S(1)) * (x[i] - S(1));
    return S(-0.5f) * sum;
  }
};

void expect_within_se(const AisResult& r, int problem, double k, double truth) {
  const auto& e = r.forward.estimates[problem];
  EXPECT_TRUE(std::isfinite(e.se_delta));
  EXPECT_NEAR(e.log_z, truth, k * e.se_delta + 1e-12)
      << "problem " << problem << ": log Z estimate " << e.log_z << " se " << e.se_delta
      << " ESS " << e.ess;
}

AisConfig cpu_config(std::int64_t particles, int temperatures) {
  AisConfig c;
  c.particles = particles;
  c.temperatures = temperatures;
  c.device = myriad::Device::cpu;
  c.seed = 20261122;
  c.bootstrap_replicates = 200;
  return c;
}

TEST(AisSchedule, KindsStartAtZeroEndAtOneAndIncrease) {
  for (auto kind : {myriad::ScheduleKind::linear, myriad::ScheduleKind::geometric,
                    myriad::ScheduleKind::sigmoid}) {
    for (int n : {1, 2, 10, 100000}) {
      const auto beta =
          myriad::make_schedule(kind, n, myriad::default_schedule_parameter(kind));
      ASSERT_EQ(beta.size(), static_cast<std::size_t>(n) + 1);
      EXPECT_EQ(beta.front(), 0.0);
      EXPECT_EQ(beta.back(), 1.0);
      for (int i = 1; i <= n; ++i) ASSERT_GT(beta[i], beta[i - 1]) << myriad::to_string(kind);
    }
  }
  const auto linear = myriad::make_schedule(myriad::ScheduleKind::linear, 4, 0);
  EXPECT_EQ(linear, (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  const auto geometric = myriad::make_schedule(myriad::ScheduleKind::geometric, 3, 0.01);
  EXPECT_NEAR(geometric[1], 0.01, 1e-15);
  EXPECT_NEAR(geometric[2], 0.1, 1e-15);
  // Thesis eq. 5.53: symmetric about the midpoint.
  const auto sigmoid = myriad::make_schedule(myriad::ScheduleKind::sigmoid, 10, 4);
  for (int n = 0; n <= 10; ++n) EXPECT_NEAR(sigmoid[n] + sigmoid[10 - n], 1.0, 1e-14);
}

TEST(AisSchedule, RejectsBadSchedulesNamingTheEntry) {
  EXPECT_THROW(myriad::validate_schedule({0.0}), myriad::invalid_argument);
  EXPECT_THROW(myriad::validate_schedule({0.1, 1.0}), myriad::invalid_argument);
  EXPECT_THROW(myriad::validate_schedule({0.0, 0.9}), myriad::invalid_argument);
  try {
    myriad::validate_schedule({0.0, 0.5, 0.5, 1.0});
    FAIL();
  } catch (const myriad::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("beta[2]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(myriad::make_schedule(myriad::ScheduleKind::geometric, 5, 1.5),
               myriad::invalid_argument);
  EXPECT_THROW(myriad::parse_schedule_kind("cosine"), myriad::invalid_argument);
}

TEST(AisBase, NormalisersAndBoundedDraws) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> scale = {2.0, 1.0, 1.0, 3.0};
  const std::vector<double> lower = {-inf, 1.0, -2.0, -inf};
  const std::vector<double> upper = {inf, inf, 3.0, 0.5};
  // N(0, 4); one-sided at 1; uniform on [−2, 3]; one-sided below 0.5 with scale 3.
  const double expected = (kHalfLogTwoPi + std::log(2.0)) + (kHalfLogTwoPi - std::log(2.0)) +
                          std::log(5.0) + (kHalfLogTwoPi + std::log(3.0) - std::log(2.0));
  EXPECT_NEAR(myriad::base_log_normaliser(4, scale.data(), lower.data(), upper.data()), expected,
              1e-14);

  const myriad::AnnealingBase<double> base{4, nullptr, scale.data(), lower.data(), upper.data()};
  const int n = 20000;
  std::vector<double> sum(4, 0.0);
  std::vector<double> x(4);
  myriad::DenseVector<double> view{x.data(), 4};
  for (int b = 0; b < n; ++b) {
    base.sample(myriad::RandomStream(7, static_cast<std::uint64_t>(b)), 0,
                myriad::Purpose::initial_point, view);
    EXPECT_GE(x[1], 1.0);
    EXPECT_GE(x[2], -2.0);
    EXPECT_LE(x[2], 3.0);
    EXPECT_LE(x[3], 0.5);
    for (int i = 0; i < 4; ++i) sum[i] += x[i];
  }
  // Means: 0; 1 + √(2/π); 0.5; 0.5 − 3√(2/π). Standard errors: 2/√n, √(1 − 2/π)/√n, 5/√(12 n),
  // 3√(1 − 2/π)/√n.
  const double root = std::sqrt(2.0 / M_PI), rn = std::sqrt(static_cast<double>(n));
  const double mean[] = {0.0, 1.0 + root, 0.5, 0.5 - 3.0 * root};
  const double se[] = {2.0 / rn, std::sqrt(1 - 2 / M_PI) / rn, 5.0 / std::sqrt(12.0 * n),
                       3.0 * std::sqrt(1 - 2 / M_PI) / rn};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(sum[i] / n, mean[i], 5 * se[i]) << "coordinate " << i;

  // The energy's gradient matches finite differences of log_density inside the box.
  std::vector<double> y = {0.3, 1.7, 0.4, -1.0};
  myriad::DenseVector<double> yv{y.data(), 4};
  for (int i = 0; i < 4; ++i) {
    const double h = 1e-6, keep = y[i];
    y[i] = keep + h;
    const double up = base.log_density(yv);
    y[i] = keep - h;
    const double down = base.log_density(yv);
    y[i] = keep;
    EXPECT_NEAR(base.gradient(i, y[i]), (up - down) / (2 * h), 1e-6) << i;
  }
}

TEST(AisBase, ReflectionFoldsIntoTheBoxAndFlipsMomentum) {
  const double lower[] = {0.0, -1.0};
  const double upper[] = {std::numeric_limits<double>::infinity(), 1.0};
  const myriad::AnnealingBase<double> base{2, nullptr, nullptr, lower, upper};
  double x[] = {-0.3, 4.5};  // 4.5 → −2.5 → 0.5 after two reflections in [−1, 1]
  double v[] = {-1.0, 2.0};
  EXPECT_TRUE(myriad::reflect_into_box(base, x, v));
  EXPECT_DOUBLE_EQ(x[0], 0.3);
  EXPECT_DOUBLE_EQ(v[0], 1.0);
  EXPECT_DOUBLE_EQ(x[1], 0.5);
  EXPECT_DOUBLE_EQ(v[1], 2.0);  // flipped twice
  double far[] = {0.0, 1e6};
  EXPECT_FALSE(myriad::reflect_into_box(base, far, v));
}

// hais.md §2: N = 1 is plain importance sampling with proposal q; the weights must be exactly
// log Z_q + log p̃(x) − log q̃(x) at the base draws.
TEST(Ais, OneTemperatureIsImportanceSampling) {
  const ShiftedGaussian target;
  AisConfig config = cpu_config(64, 1);
  const AisResult r = myriad::ais(target, config);
  ASSERT_EQ(r.forward.log_weights.size(), 64u);
  EXPECT_EQ(r.forward.stats.transitions, 0);
  const myriad::AnnealingBase<double> base{target.d};
  std::vector<double> x(target.d);
  myriad::DenseVector<double> view{x.data(), target.d};
  for (int b = 0; b < 64; ++b) {
    base.sample(myriad::RandomStream(config.seed, static_cast<std::uint64_t>(b)), 0,
                myriad::Purpose::initial_point, view);
    const double expected =
        target.d * kHalfLogTwoPi + target.log_density(view) - base.log_density(view);
    EXPECT_NEAR(r.forward.log_weights[b], expected, 1e-12 * std::fabs(expected)) << b;
  }
}

TEST(Ais, HamiltonianAisRecoversLogZ) {
  const ShiftedGaussian target;
  const AisResult r = myriad::ais(target, cpu_config(400, 200));
  expect_within_se(r, 0, 4, target.exact_log_z(0));
  EXPECT_GT(r.forward.stats.mean_accept_prob(), 0.5);
  EXPECT_EQ(r.forward.failed_starts, 0);
  EXPECT_EQ(r.forward.stats.transitions, 400 * 199);
  // The weighted posterior sample has the target's moments (5 MCSE).
  ASSERT_EQ(r.summary.size(), static_cast<std::size_t>(target.d));
  for (const auto& m : r.summary) EXPECT_NEAR(m.mean, target.mu, 5 * m.mcse_mean);
}

TEST(Ais, FullRefreshAndRandomWalkBaselinesRecoverLogZ) {
  const ShiftedGaussian target;
  AisConfig hmc = cpu_config(400, 200);
  hmc.refresh = 1.0;
  hmc.steps = 3;
  expect_within_se(myriad::ais(target, hmc), 0, 4, target.exact_log_z(0));
  AisConfig rwm = cpu_config(400, 400);
  rwm.transition = myriad::AisTransition::metropolis;
  rwm.proposal_scale = 0.3;
  const AisResult r = myriad::ais(target, rwm);
  expect_within_se(r, 0, 4, target.exact_log_z(0));
  EXPECT_EQ(r.forward.stats.transitions, 400 * 399);
  EXPECT_EQ(r.forward.stats.gradient_evaluations, 0) << "a random-walk move evaluates no gradient";
}

TEST(Ais, ReflectionAtBoundsRecoversLogZ) {
  const TruncatedGaussian target;
  AisConfig config = cpu_config(400, 200);
  config.step_size = 0.3;
  const AisResult r = myriad::ais(target, config);
  expect_within_se(r, 0, 4, target.exact_log_z(0));
  for (int b = 0; b < 400; ++b)
    for (int i = 0; i < target.d; ++i) ASSERT_GE(r.positions[b * target.d + i], 0.0);
}

TEST(Ais, ZeroDensityStartsCarryZeroWeightAndAreCounted) {
  const HalfSpaceGaussian target;
  const AisResult r = myriad::ais(target, cpu_config(1000, 50));
  // About half the base draws have x₀ < 0: binomial(1000, ½) within 5 sd.
  EXPECT_NEAR(static_cast<double>(r.forward.failed_starts), 500.0, 5 * std::sqrt(250.0));
  EXPECT_GT(r.forward.stats.non_finite, 0);  // proposals across x₀ = 0 are rejected and counted
  expect_within_se(r, 0, 4, target.exact_log_z(0));
}

TEST(Ais, ForwardAndReverseBoundsBracketTheTruth) {
  const ShiftedGaussian target{6, 2.0, 0.4};
  AisConfig config = cpu_config(300, 30);  // short paths: a visible gap between the bounds
  config.reverse = true;
  const AisResult r = myriad::ais(target, config);
  ASSERT_TRUE(r.has_reverse);
  const auto& lower = r.forward.estimates[0];
  const auto& upper = r.reverse.estimates[0];
  const double truth = target.exact_log_z(0);
  EXPECT_LT(lower.log_z, truth + 2 * lower.se_delta);
  EXPECT_GT(upper.log_z, truth - 2 * upper.se_delta);
  EXPECT_LT(lower.log_z, upper.log_z);
  // With a long path both bounds close on the truth.
  config.temperatures = 1000;
  const AisResult tight = myriad::ais(target, config);
  expect_within_se(tight, 0, 4, truth);
  EXPECT_NEAR(tight.reverse.estimates[0].log_z, truth, 4 * tight.reverse.estimates[0].se_delta);
}

TEST(Ais, TwoLevelBatchEstimatesEveryProblem) {
  const GaussianBatch target;
  const AisResult r = myriad::ais(target, cpu_config(300, 200));
  ASSERT_EQ(r.problems, 4);
  ASSERT_EQ(r.forward.estimates.size(), 4u);
  ASSERT_EQ(r.exact_log_z.size(), 4u);
  for (int p = 0; p < 4; ++p) expect_within_se(r, p, 4, target.exact_log_z(p));
  double mean = 0;
  for (int p = 0; p < 4; ++p) mean += r.forward.estimates[p].log_z / 4;
  EXPECT_NEAR(r.average.mean, mean, 1e-12);
}

TEST(Ais, ResultsDoNotDependOnChunking) {
  const ShiftedGaussian target;
  AisConfig a = cpu_config(50, 40);
  a.chunk_temperatures = 1;
  AisConfig b = a;
  b.chunk_temperatures = 7;
  AisConfig c = a;
  c.chunk_temperatures = 1000;
  const auto ra = myriad::ais(target, a), rb = myriad::ais(target, b), rc = myriad::ais(target, c);
  EXPECT_EQ(ra.forward.log_weights, rb.forward.log_weights);
  EXPECT_EQ(ra.forward.log_weights, rc.forward.log_weights);
  EXPECT_EQ(ra.positions, rc.positions);
  EXPECT_EQ(ra.forward.stats.accept_prob_fixed, rc.forward.stats.accept_prob_fixed);
}

TEST(Ais, FloatPrecisionRecoversLogZ) {
  const AisResult r = myriad::ais(FloatGaussian{}, cpu_config(400, 100));
  expect_within_se(r, 0, 4, 3 * kHalfLogTwoPi);
}

TEST(Ais, RejectsBadConfigurations) {
  const ShiftedGaussian target;
  AisConfig c = cpu_config(10, 10);
  c.particles = 0;
  EXPECT_THROW(myriad::ais(target, c), myriad::invalid_argument);
  c = cpu_config(10, 10);
  c.refresh = 1.5;
  EXPECT_THROW(myriad::ais(target, c), myriad::invalid_argument);
  c = cpu_config(10, 10);
  c.step_size = -0.1;
  EXPECT_THROW(myriad::ais(target, c), myriad::invalid_argument);
  c = cpu_config(10, 10);
  c.base.scale = {1.0, 2.0};  // wrong length
  EXPECT_THROW(myriad::ais(target, c), myriad::invalid_argument);
  c = cpu_config(10, 10);
  c.reverse = true;
  EXPECT_THROW(myriad::ais(TruncatedGaussian{}, c), myriad::invalid_argument);  // no exact samples
  c = cpu_config(10, 10);
  c.beta = {0.0, 0.7, 0.6, 1.0};
  EXPECT_THROW(myriad::ais(target, c), myriad::invalid_argument);
}

TEST(Ais, UserBaseAndScheduleAreUsed) {
  const ShiftedGaussian target;
  AisConfig c = cpu_config(200, 1);
  // A base equal to the target: every weight is exactly log Z.
  c.base.mean.assign(target.d, target.mu);
  c.base.scale.assign(target.d, target.sigma);
  const AisResult r = myriad::ais(target, c);
  for (double w : r.forward.log_weights) EXPECT_NEAR(w, target.exact_log_z(0), 1e-12);
  EXPECT_NEAR(r.forward.estimates[0].ess, 200.0, 1e-9);
  AisConfig user = cpu_config(200, 0);
  user.beta = {0.0, 0.1, 0.5, 1.0};
  EXPECT_EQ(myriad::ais(target, user).temperatures, 3);
}

}  // namespace
