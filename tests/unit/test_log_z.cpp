// Tests of the AIS estimators (myriad/estimate/log_z.hpp, hais.md §3, §6, §7): log-sum-exp
// against direct sums and known values at extreme offsets, log Ẑ / se / ESS on hand-computable
// weights, bootstrap vs delta method, coverage and Jensen bias on lognormal weights with known
// Z, segmented and test-set forms, the BDMC upper bound, self-normalised weighted moments and
// quantiles, and the errors for bad input.
//
// Random inputs are Philox normals with fixed seeds (RandomStream, purpose user + 900); the
// tolerances follow from the estimators' sampling variability, not from the particular draws.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "myriad/estimate/log_z.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"

namespace myriad {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr Purpose kTestNormals = static_cast<Purpose>(user_purpose(900));

std::vector<double> philox_normals(std::uint64_t seed, std::uint64_t stream, int n) {
  std::vector<double> z(static_cast<std::size_t>(n));
  RandomStream(seed, stream).fill_normal<double>(0, kTestNormals, z, n);
  return z;
}

// log w_b = log Z + σ z_b − σ²/2 with z_b standard normal: lognormal weights with E[w] = Z.
std::vector<double> lognormal_log_weights(std::uint64_t seed, std::uint64_t stream, int n,
                                          double log_z, double sigma) {
  std::vector<double> log_w = philox_normals(seed, stream, n);
  for (double& l : log_w) l = log_z + sigma * l - 0.5 * sigma * sigma;
  return log_w;
}

double direct_log_sum_exp(const std::vector<double>& x) {
  double s = 0.0;
  for (const double v : x) s += std::exp(v);
  return std::log(s);
}

// The message of the myriad::invalid_argument that f throws, or a marker when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return "<no myriad::invalid_argument>";
}

#define EXPECT_MESSAGE_HAS(message, part) \
  EXPECT_NE((message).find(part), std::string::npos) << "message: " << (message)

// Bitwise-equal doubles, NaN equal to NaN.
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void expect_same_estimate(const LogZEstimate& a, const LogZEstimate& b) {
  EXPECT_TRUE(same(a.log_z, b.log_z)) << a.log_z << " vs " << b.log_z;
  EXPECT_TRUE(same(a.se_delta, b.se_delta)) << a.se_delta << " vs " << b.se_delta;
  EXPECT_TRUE(same(a.se_bootstrap, b.se_bootstrap)) << a.se_bootstrap << " vs " << b.se_bootstrap;
  EXPECT_TRUE(same(a.ess, b.ess)) << a.ess << " vs " << b.ess;
  EXPECT_EQ(a.particles, b.particles);
}

// ---------------------------------------------------------------------------------------------
// log-sum-exp

TEST(LogZLogSumExp, MatchesDirectSumOnWellScaledInputs) {
  const std::vector<double> small = {0.3, -1.2, 2.5, 0.0, -4.0};
  EXPECT_NEAR(log_sum_exp(small.data(), 5), direct_log_sum_exp(small), 1e-14);
  EXPECT_NEAR(log_mean_exp(small.data(), 5), direct_log_sum_exp(small) - std::log(5.0), 1e-14);

  std::vector<double> x = philox_normals(11, 0, 1000);
  for (double& v : x) v *= 3.0;
  const double direct = direct_log_sum_exp(x);
  EXPECT_NEAR(log_sum_exp(x.data(), 1000), direct, 1e-13 * std::fabs(direct));
}

TEST(LogZLogSumExp, KnownValuesAtHugeOffsets) {
  // exp of any of these overflows or underflows; the shifted form gets them exactly.
  const double big[] = {1e300, 1e300};
  EXPECT_EQ(log_sum_exp(big, 2), 1e300);  // + log 2 is below the ulp of 1e300
  const double opposite[] = {-1e300, 1e300};
  EXPECT_EQ(log_sum_exp(opposite, 2), 1e300);
  const double both_low[] = {-1e300, -1e300};
  EXPECT_EQ(log_sum_exp(both_low, 2), -1e300);
  const double with_zero[] = {-1e300, 0.0};
  EXPECT_EQ(log_sum_exp(with_zero, 2), 0.0);

  // 1e4 offsets: log Σ exp(1e4 + y) = 1e4 + log Σ exp(y); ulp(1e4) ≈ 1.8e-12.
  const double pair[] = {1e4, 1e4};
  EXPECT_NEAR(log_sum_exp(pair, 2), 1e4 + std::log(2.0), 4e-12);
  const double shifted[] = {1e4 + 0.5, 1e4 - 1.0, 1e4 + 2.0};
  const double expected = 1e4 + std::log(std::exp(0.5) + std::exp(-1.0) + std::exp(2.0));
  EXPECT_NEAR(log_sum_exp(shifted, 3), expected, 4e-12);
  const double negative[] = {-1e4 - 3.0, -1e4 - 1.0};
  EXPECT_NEAR(log_mean_exp(negative, 2), -1e4 + std::log((std::exp(-3.0) + std::exp(-1.0)) / 2.0),
              4e-12);

  // The small terms survive next to the maximum: log(1 + e^−40) = 4.25e-18, which
  // m + log(1 + rest) would round to 0.
  const double tiny[] = {0.0, -40.0};
  EXPECT_NEAR(log_sum_exp(tiny, 2), std::exp(-40.0), 1e-30);
}

TEST(LogZLogSumExp, NegativeInfinityIsAZeroTerm) {
  const double some[] = {-kInf, 1.0, -kInf, 2.0};
  const std::vector<double> finite = {1.0, 2.0};
  EXPECT_NEAR(log_sum_exp(some, 4), direct_log_sum_exp(finite), 1e-15);
  EXPECT_NEAR(log_mean_exp(some, 4), direct_log_sum_exp(finite) - std::log(4.0), 1e-15);
  const double one[] = {-kInf};
  EXPECT_EQ(log_sum_exp(one, 1), -kInf);
  const double all[] = {-kInf, -kInf, -kInf};
  EXPECT_EQ(log_sum_exp(all, 3), -kInf);
  EXPECT_EQ(log_mean_exp(all, 3), -kInf);
}

TEST(LogZLogSumExp, StreamingAccumulatorMatchesTwoPass) {
  LogSumExp empty;
  EXPECT_EQ(empty.value(), -kInf);

  // Values in an order that raises the maximum several times, with zero weights mixed in.
  const std::vector<double> x = {-kInf, -5.0, 3.0, -kInf, 2.0, 1e4, 1e4 - 1.0, -1e300, 1e4 + 0.5};
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  LogSumExp all;
  for (const double v : x) all.add(v);
  EXPECT_NEAR(all.value(), log_sum_exp(x.data(), n), 4e-12);

  LogSumExp left, right, none;
  for (std::size_t i = 0; i < x.size(); ++i) (i < 4 ? left : right).add(x[i]);
  LogSumExp merged = left;
  merged.merge(right);
  merged.merge(none);  // merging an empty partial changes nothing
  EXPECT_NEAR(merged.value(), log_sum_exp(x.data(), n), 4e-12);
  LogSumExp reversed = right;
  reversed.merge(left);
  EXPECT_NEAR(reversed.value(), log_sum_exp(x.data(), n), 4e-12);
  none.merge(left);
  EXPECT_EQ(none.value(), left.value());
}

// ---------------------------------------------------------------------------------------------
// log Ẑ, se, ESS (hais.md §3)

TEST(LogZEstimate, EqualWeightsAreExact) {
  for (const double level : {-123.456, 0.0, 1e300}) {
    const std::vector<double> log_w(250, level);
    const LogZEstimate e = estimate_log_z(log_w.data(), 250, 7);
    EXPECT_NEAR(e.log_z, level, 1e-12 * std::max(1.0, std::fabs(level)));
    EXPECT_EQ(e.se_delta, 0.0);
    EXPECT_EQ(e.se_bootstrap, 0.0);  // every replicate resamples the same weights
    EXPECT_EQ(e.ess, 250.0);
    EXPECT_EQ(e.particles, 250);
  }
}

TEST(LogZEstimate, OneHugeWeightGivesEssOne) {
  // exp(800) overflows a double; the shifted weights are 1 and e^−800 = 0.
  std::vector<double> log_w(100, 0.0);
  log_w[37] = 800.0;
  const LogZEstimate e = estimate_log_z(log_w.data(), 100, 7, 0);
  EXPECT_NEAR(e.ess, 1.0, 1e-12);
  EXPECT_NEAR(e.log_z, 800.0 - std::log(100.0), 1e-12);
  // se² = (B/ESS − 1)/(B − 1) = 1 for a single carrying particle.
  EXPECT_NEAR(e.se_delta, 1.0, 1e-12);
  EXPECT_TRUE(std::isnan(e.se_bootstrap));  // R = 0

  // A softer case: ESS falls towards 1 as one weight grows.
  double previous = 100.0;
  for (const double big : {1.0, 3.0, 6.0, 12.0, 40.0}) {
    log_w[37] = big;
    const double ess = estimate_log_z(log_w.data(), 100, 7, 0).ess;
    const double w = std::exp(big);
    EXPECT_NEAR(ess, (99.0 + w) * (99.0 + w) / (99.0 + w * w), 1e-9 * ess);
    EXPECT_LT(ess, previous);
    previous = ess;
  }
  EXPECT_LT(previous, 1.0 + 1e-12);
}

TEST(LogZEstimate, DeltaMethodMatchesClosedForm) {
  // w ∝ {1, 2, 3, 6}: mean 3, sd (divisor B − 1) √(14/3), so se = √(14/3)/(√4 · 3) and
  // ESS = 12²/50 = 2.88; the 1e4 offset checks that only differences of log weights matter.
  const double c = 1e4;
  const double log_w[] = {c, c + std::log(2.0), c + std::log(3.0), c + std::log(6.0)};
  const LogZEstimate e = estimate_log_z(log_w, 4, 7, 0);
  EXPECT_NEAR(e.log_z, c + std::log(3.0), 4e-12);
  EXPECT_NEAR(e.se_delta, std::sqrt(14.0 / 3.0) / 6.0, 1e-14);
  EXPECT_NEAR(e.ess, 2.88, 1e-13);
  // The equivalent form in terms of the ESS.
  EXPECT_NEAR(e.se_delta * e.se_delta, (4.0 / e.ess - 1.0) / 3.0, 1e-14);
}

TEST(LogZEstimate, SingleParticle) {
  const double log_w[] = {-7.5};
  const LogZEstimate e = estimate_log_z(log_w, 1, 7);
  EXPECT_EQ(e.log_z, -7.5);
  EXPECT_TRUE(std::isnan(e.se_delta));
  EXPECT_TRUE(std::isnan(e.se_bootstrap));
  EXPECT_EQ(e.ess, 1.0);
  EXPECT_EQ(e.particles, 1);
}

TEST(LogZEstimate, AllZeroWeights) {
  const double log_w[] = {-kInf, -kInf, -kInf};
  const LogZEstimate e = estimate_log_z(log_w, 3, 7);
  EXPECT_EQ(e.log_z, -kInf);
  EXPECT_TRUE(std::isnan(e.se_delta));
  EXPECT_TRUE(std::isnan(e.se_bootstrap));
  EXPECT_EQ(e.ess, 0.0);
  EXPECT_EQ(e.particles, 3);
}

TEST(LogZEstimate, BootstrapIsInfiniteWhenAReplicateDrawsOnlyZeroWeights) {
  // Each replicate draws both indices from the zero-weight particle with probability 1/4.
  const double log_w[] = {0.0, -kInf};
  const LogZEstimate e = estimate_log_z(log_w, 2, 7, 100);
  EXPECT_EQ(e.log_z, -std::log(2.0));
  EXPECT_EQ(e.se_bootstrap, kInf);
  EXPECT_NEAR(e.se_delta, 1.0, 1e-15);  // w̃ = {1, 0}: sd √½, mean ½
  EXPECT_EQ(e.ess, 1.0);
}

TEST(LogZEstimate, BootstrapAgreesWithDeltaMethodOnLognormalWeights) {
  // For B = 10⁴ lognormal weights (σ = 1) log Ẑ is close to normal, so the bootstrap se and the
  // delta-method se estimate the same number; the bootstrap se is an sd over R replicates whose
  // relative Monte Carlo error is ≈ 1/√(2R) (1.6% for R = 2000). The linearisation error of the
  // delta method is O(se²) ≈ 2e-4 relative and the divisors B vs B − 1 differ by 5e-5, both far
  // below it. Tolerance: 5 × 1/√(2R).
  const int b = 10000, replicates = 2000;
  const std::vector<double> log_w = lognormal_log_weights(21, 0, b, -3.0, 1.0);
  const LogZEstimate e = estimate_log_z(log_w.data(), b, 99, replicates);
  const double tolerance = 5.0 / std::sqrt(2.0 * replicates);
  EXPECT_NEAR(e.se_bootstrap / e.se_delta, 1.0, tolerance)
      << "se_bootstrap " << e.se_bootstrap << ", se_delta " << e.se_delta;
  // And both near the population value √((e^{σ²} − 1)/B) of the se of log Ẑ.
  EXPECT_NEAR(e.se_delta, std::sqrt(std::expm1(1.0) / b), 0.2 * std::sqrt(std::expm1(1.0) / b));
}

TEST(LogZEstimate, BootstrapIsReproducibleForASeed) {
  const int b = 300;
  const std::vector<double> log_w = lognormal_log_weights(5, 0, b, 0.0, 1.0);
  const LogZEstimate first = estimate_log_z(log_w.data(), b, 1234, 1000);
  const LogZEstimate again = estimate_log_z(log_w.data(), b, 1234, 1000);
  expect_same_estimate(first, again);
  EXPECT_TRUE(std::isfinite(first.se_bootstrap));

  // Other keys resample differently; the rest of the estimate does not depend on them.
  const LogZEstimate other_seed = estimate_log_z(log_w.data(), b, 1235, 1000);
  const LogZEstimate other_problem = estimate_log_z(log_w.data(), b, 1234, 1000, 1);
  EXPECT_NE(first.se_bootstrap, other_seed.se_bootstrap);
  EXPECT_NE(first.se_bootstrap, other_problem.se_bootstrap);
  EXPECT_EQ(first.log_z, other_seed.log_z);
  EXPECT_EQ(first.se_delta, other_problem.se_delta);

  const LogZEstimate none = estimate_log_z(log_w.data(), b, 1234, 0);
  EXPECT_TRUE(std::isnan(none.se_bootstrap));
  EXPECT_EQ(none.log_z, first.log_z);
  EXPECT_EQ(none.ess, first.ess);

#ifdef _OPENMP
  // Replicates are keyed by their index, not by the thread that computes them.
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const LogZEstimate one_thread = estimate_log_z(log_w.data(), b, 1234, 1000);
  omp_set_num_threads(3);
  const LogZEstimate three_threads = estimate_log_z(log_w.data(), b, 1234, 1000);
  omp_set_num_threads(threads);
  expect_same_estimate(first, one_thread);
  expect_same_estimate(first, three_threads);
#endif
}

// ---------------------------------------------------------------------------------------------
// Statistical behaviour on lognormal weights with known Z: log w_b = log Z + σ z_b − σ²/2.

TEST(LogZStatistical, TwoDeltaMethodStandardErrorsCoverLogZ) {
  // σ = 0.5, B = 500: the relative se of Ẑ is √((e^{0.25} − 1)/500) ≈ 0.024, so log Ẑ is close
  // to normal with sd se_delta and its bias ≈ −se²/2 ≈ −3e-4 is 1% of an se: |log Ẑ − log Z| < 2
  // se should hold with probability P(|N(0,1)| < 2) = 0.9545. (Measured over 10⁶ batches with
  // other seeds: 0.953, the finite-B shortfall of the delta method.) Over K = 20000 independent
  // batches the observed fraction has binomial sd √(p(1 − p)/K) = 0.0015; tolerance 5 of those,
  // which a se off by 10% (coverage 0.928 or 0.972) would exceed.
  const int batches = 20000, b = 500;
  const double log_z = -3.7, sigma = 0.5;
  int covered = 0;
  for (int k = 0; k < batches; ++k) {
    const std::vector<double> log_w = lognormal_log_weights(314, k, b, log_z, sigma);
    const LogZEstimate e = estimate_log_z(log_w.data(), b, 0, 0);
    if (std::fabs(e.log_z - log_z) < 2.0 * e.se_delta) ++covered;
  }
  const double p = 0.9544997361, fraction = static_cast<double>(covered) / batches;
  EXPECT_NEAR(fraction, p, 5.0 * std::sqrt(p * (1.0 - p) / batches));
}

TEST(LogZStatistical, JensenBiasIsDownward) {
  // E[Ẑ] = Z, hence E[log Ẑ] ≤ log Z (hais.md §3). With σ = 1 and B = 10 the bias (≈ −0.09 by
  // the delta method) is many standard errors of the mean over K = 4000 batches, so the test
  // sees its sign. Ẑ/Z itself must average 1 within 5 of its standard errors.
  const int batches = 4000, b = 10;
  const double log_z = 2.0, sigma = 1.0;
  std::vector<double> dev(batches), ratio(batches);
  for (int k = 0; k < batches; ++k) {
    const std::vector<double> log_w = lognormal_log_weights(2718, k, b, log_z, sigma);
    dev[k] = estimate_log_z(log_w.data(), b, 0, 0).log_z - log_z;
    ratio[k] = std::exp(dev[k]);
  }
  const auto mean_and_se = [](const std::vector<double>& v) {
    double mean = 0.0, ss = 0.0;
    for (const double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    for (const double x : v) ss += (x - mean) * (x - mean);
    return std::make_pair(mean, std::sqrt(ss / (v.size() - 1.0) / v.size()));
  };
  const auto [mean_dev, se_dev] = mean_and_se(dev);
  const auto [mean_ratio, se_ratio] = mean_and_se(ratio);
  EXPECT_LT(mean_dev + 3.0 * se_dev, 0.0) << "mean log Ẑ − log Z = " << mean_dev << " ± " << se_dev;
  EXPECT_NEAR(mean_ratio, 1.0, 5.0 * se_ratio);
}

TEST(LogZStatistical, ReverseBoundBiasIsUpward) {
  // Reverse ratios with E[exp(r)] = Z_q / Z_p (hais.md §7): log Ẑ_upper overestimates log Z_p.
  const int batches = 4000, b = 10;
  const double log_z_p = 2.0, log_z_q = -1.5, sigma = 1.0;
  double sum = 0.0, sum_sq = 0.0;
  for (int k = 0; k < batches; ++k) {
    const std::vector<double> log_r = lognormal_log_weights(1618, k, b, log_z_q - log_z_p, sigma);
    const double dev = estimate_log_z_upper(log_z_q, log_r.data(), b, 0, 0).log_z - log_z_p;
    sum += dev;
    sum_sq += dev * dev;
  }
  const double mean = sum / batches;
  const double se = std::sqrt((sum_sq / batches - mean * mean) / (batches - 1.0));
  EXPECT_GT(mean - 3.0 * se, 0.0) << "mean log Ẑ_upper − log Z = " << mean << " ± " << se;
}

// ---------------------------------------------------------------------------------------------
// Segmented (two-level batch, hais.md §6) and test-set averages

TEST(LogZSegmented, EqualsPerProblemCalls) {
  const int problems = 5, b = 64, replicates = 200;
  std::vector<double> log_w;
  for (int p = 0; p < problems; ++p) {
    const std::vector<double> one = lognormal_log_weights(77, p, b, -1.0 * p, 0.3 + 0.4 * p);
    log_w.insert(log_w.end(), one.begin(), one.end());
  }
  log_w[1 * b + 5] = -kInf;                                        // one zero weight
  std::fill(log_w.begin() + 3 * b, log_w.begin() + 4 * b, -kInf);  // a problem of zero weights

  const std::vector<LogZEstimate> seg =
      estimate_log_z_segmented(log_w.data(), problems, b, 42, replicates);
  ASSERT_EQ(seg.size(), static_cast<std::size_t>(problems));
  for (int p = 0; p < problems; ++p) {
    SCOPED_TRACE("problem " + std::to_string(p));
    expect_same_estimate(seg[p], estimate_log_z(log_w.data() + p * b, b, 42, replicates, p));
  }
  EXPECT_EQ(seg[3].log_z, -kInf);
  EXPECT_NE(seg[0].se_bootstrap, seg[2].se_bootstrap);

  const std::vector<LogZEstimate> upper =
      estimate_log_z_upper_segmented(0.25, log_w.data(), problems, b, 42, replicates);
  ASSERT_EQ(upper.size(), static_cast<std::size_t>(problems));
  for (int p = 0; p < problems; ++p) {
    SCOPED_TRACE("problem " + std::to_string(p));
    expect_same_estimate(upper[p],
                         estimate_log_z_upper(0.25, log_w.data() + p * b, b, 42, replicates, p));
  }
  EXPECT_EQ(upper[3].log_z, kInf);
}

TEST(LogZTestSetAverage, HandComputable) {
  // log Ẑ = {−1, −2, −4}: mean −7/3; deviations {4/3, 1/3, −5/3} give sd √(7/3), so the data
  // error is √(7/3)/√3 = √7/3; se = {0.1, 0.2, 0.2} give √0.09/3 = 0.1.
  const std::vector<LogZEstimate> points = {
      {-1.0, 0.1, kNaN, 50.0, 100}, {-2.0, 0.2, kNaN, 40.0, 100}, {-4.0, 0.2, kNaN, 30.0, 100}};
  const TestSetAverage a = average_over_test_set(points);
  EXPECT_NEAR(a.mean, -7.0 / 3.0, 1e-15);
  EXPECT_NEAR(a.mc_error, 0.1, 1e-15);
  EXPECT_NEAR(a.data_error, std::sqrt(7.0) / 3.0, 1e-15);
  EXPECT_EQ(a.points, 3);
}

TEST(LogZTestSetAverage, DegenerateSets) {
  const TestSetAverage one = average_over_test_set({{-2.5, 0.3, kNaN, 10.0, 20}});
  EXPECT_EQ(one.mean, -2.5);
  EXPECT_NEAR(one.mc_error, 0.3, 1e-16);
  EXPECT_TRUE(std::isnan(one.data_error));
  EXPECT_EQ(one.points, 1);

  // A point whose particles all have zero weight: the average is −inf, its spread undefined.
  const TestSetAverage failed =
      average_over_test_set({{-2.5, 0.3, kNaN, 10.0, 20}, {-kInf, kNaN, kNaN, 0.0, 20}});
  EXPECT_EQ(failed.mean, -kInf);
  EXPECT_TRUE(std::isnan(failed.mc_error));
  EXPECT_TRUE(std::isnan(failed.data_error));
}

// ---------------------------------------------------------------------------------------------
// Reverse (BDMC) upper bound, hais.md §7

TEST(LogZUpper, FormulaOnHandInput) {
  // r ∝ {1, 2, 3, 6} · e^{−1e4}: log-mean-exp(r) = log 3 − 1e4, so the bound is
  // log Z_q − log 3 + 1e4, with the se and ESS of the forward hand case.
  const double c = -1e4, log_z_q = 3.5;
  const double log_r[] = {c, c + std::log(2.0), c + std::log(3.0), c + std::log(6.0)};
  const LogZEstimate u = estimate_log_z_upper(log_z_q, log_r, 4, 7, 500);
  EXPECT_NEAR(u.log_z, log_z_q - std::log(3.0) - c, 4e-12);
  EXPECT_NEAR(u.se_delta, std::sqrt(14.0 / 3.0) / 6.0, 1e-14);
  EXPECT_NEAR(u.ess, 2.88, 1e-13);
  EXPECT_EQ(u.particles, 4);

  // The same numbers as log Z_q minus the forward estimator applied to r, except that the
  // bootstrap draws from its own purpose tag.
  const LogZEstimate f = estimate_log_z(log_r, 4, 7, 500);
  EXPECT_EQ(u.log_z, log_z_q - f.log_z);
  EXPECT_EQ(u.se_delta, f.se_delta);
  EXPECT_TRUE(std::isfinite(u.se_bootstrap));
  EXPECT_NE(u.se_bootstrap, f.se_bootstrap);

  const double zero[] = {-kInf, -kInf};
  EXPECT_EQ(estimate_log_z_upper(log_z_q, zero, 2, 7).log_z, kInf);
}

// ---------------------------------------------------------------------------------------------
// Self-normalised weighted moments and quantiles

TEST(WeightedMoments, HandCheckedCase) {
  // Weights ∝ {2, 3, 5, 0} (the 1e4 offset must not matter), particles [particle][dim]:
  //   dim 0: {3, 1, 2, NaN}, dim 1: {10, −10, 0, 1e300}; the zero-weight row is ignored.
  // w̄ = {0.2, 0.3, 0.5}; Σ w̄² = 0.38, ESS = 1/0.38.
  // dim 0: mean 1.9; Σ w̄ (x − mean)² = 0.49; var = 0.49/0.62. Sorted 1 (0.3), 2 (0.5), 3 (0.2):
  //        CDF 0.3, 0.8, 1 → q5 = 1, q50 = 2, q95 = 3.
  // dim 1: mean −1; Σ w̄ (x − mean)² = 49; var = 49/0.62; quantiles −10, 0, 10.
  const double c = 1e4;
  const double log_w[] = {c + std::log(2.0), c + std::log(3.0), c + std::log(5.0), -kInf};
  const double particles[] = {3, 10, 1, -10, 2, 0, kNaN, 1e300};
  const std::vector<WeightedMoments> m = weighted_moments(particles, 4, 2, log_w);
  ASSERT_EQ(m.size(), 2u);
  // Storing c + log k rounds it by up to ulp(1e4)/2 ≈ 9e-13, so the weights themselves are known
  // to ≈ 1e-12 relative; tolerance 1e-11 relative.
  const double tol = 1e-11;
  const double ess = 1.0 / 0.38;
  EXPECT_NEAR(m[0].mean, 1.9, tol * 1.9);
  EXPECT_NEAR(m[0].sd, std::sqrt(0.49 / 0.62), tol);
  EXPECT_NEAR(m[0].mcse_mean, std::sqrt(0.49 / 0.62 / ess), tol);
  EXPECT_NEAR(m[0].ess, ess, tol * ess);
  EXPECT_EQ(m[0].q5, 1.0);
  EXPECT_EQ(m[0].q50, 2.0);
  EXPECT_EQ(m[0].q95, 3.0);
  EXPECT_NEAR(m[1].mean, -1.0, tol * 10.0);  // the sum cancels terms of size 10
  EXPECT_NEAR(m[1].sd, std::sqrt(49.0 / 0.62), tol * 10.0);
  EXPECT_NEAR(m[1].ess, ess, tol * ess);
  EXPECT_EQ(m[1].q5, -10.0);
  EXPECT_EQ(m[1].q50, 0.0);
  EXPECT_EQ(m[1].q95, 10.0);
}

TEST(WeightedMoments, EqualWeightsReduceToSampleStatistics) {
  // 1..21 in scrambled order: mean 11, sd (divisor 20) √(770/20); type-1 quantiles are the
  // ⌈21 q⌉-th order statistics: 2, 11, 20.
  const int n = 21;
  std::vector<double> values(n);
  for (int i = 0; i < n; ++i) values[i] = 1.0 + (i * 8) % n;  // 8 is coprime to 21
  const std::vector<double> log_w(n, -3.25);
  const std::vector<WeightedMoments> m = weighted_moments(values.data(), n, 1, log_w.data());
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NEAR(m[0].mean, 11.0, 1e-13);
  EXPECT_NEAR(m[0].sd, std::sqrt(770.0 / 20.0), 1e-13);
  EXPECT_NEAR(m[0].ess, 21.0, 1e-12);
  EXPECT_NEAR(m[0].mcse_mean, std::sqrt(770.0 / 20.0 / 21.0), 1e-13);
  EXPECT_EQ(m[0].q5, 2.0);
  EXPECT_EQ(m[0].q50, 11.0);
  EXPECT_EQ(m[0].q95, 20.0);
}

TEST(WeightedMoments, MatchesDirectComputation) {
  // Direct formulas on exp(log w) with moderate log weights; the function gets log w + 1e4, whose
  // rounding (ulp(1e4)/2 ≈ 9e-13) perturbs each weight by ≈ 1e-12 relative: tolerance 1e-11
  // relative to the scale of the values (about 1) or of the statistic.
  const int n = 200, dims = 3;
  const std::vector<double> values = philox_normals(8, 0, n * dims);
  const std::vector<double> log_w = lognormal_log_weights(8, 1, n, 0.0, 1.5);
  std::vector<double> shifted = log_w;
  for (double& l : shifted) l += 1e4;
  const std::vector<WeightedMoments> m = weighted_moments(values.data(), n, dims, shifted.data());
  ASSERT_EQ(m.size(), static_cast<std::size_t>(dims));

  std::vector<double> w(n);
  double total = 0.0;
  for (int b = 0; b < n; ++b) total += (w[b] = std::exp(log_w[b]));
  double sum_sq = 0.0;
  for (double& wb : w) {
    wb /= total;
    sum_sq += wb * wb;
  }
  for (int d = 0; d < dims; ++d) {
    SCOPED_TRACE("dim " + std::to_string(d));
    double mean = 0.0, ss = 0.0;
    std::vector<std::pair<double, double>> sorted;
    for (int b = 0; b < n; ++b) {
      mean += w[b] * values[b * dims + d];
      sorted.emplace_back(values[b * dims + d], w[b]);
    }
    for (int b = 0; b < n; ++b) ss += w[b] * std::pow(values[b * dims + d] - mean, 2);
    const double sd = std::sqrt(ss / (1.0 - sum_sq));
    EXPECT_NEAR(m[d].mean, mean, 1e-11);
    EXPECT_NEAR(m[d].sd, sd, 1e-11 * sd);
    EXPECT_NEAR(m[d].ess, 1.0 / sum_sq, 1e-11 / sum_sq);
    EXPECT_NEAR(m[d].mcse_mean, sd * std::sqrt(sum_sq), 1e-11 * sd);
    std::sort(sorted.begin(), sorted.end());
    const double probs[] = {0.05, 0.5, 0.95};
    const double got[] = {m[d].q5, m[d].q50, m[d].q95};
    for (int q = 0; q < 3; ++q) {
      double cdf = 0.0;
      std::size_t k = 0;
      while ((cdf += sorted[k].second) < probs[q]) ++k;
      EXPECT_EQ(got[q], sorted[k].first) << "quantile " << probs[q];
    }
  }
}

TEST(WeightedMoments, DegenerateWeights) {
  // One weight dominates by e^40: 1 − Σ w̄² ≈ 8.5e-18 would round to 0 in the direct form. For
  // two particles the corrected variance is (x₁ − x₂)²/2 whatever the weights.
  const double log_w[] = {0.0, -40.0};
  const double values[] = {1.0, 2.0};
  const std::vector<WeightedMoments> two = weighted_moments(values, 2, 1, log_w);
  EXPECT_NEAR(two[0].sd, std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(two[0].ess, 1.0, 1e-15);
  EXPECT_NEAR(two[0].mean, 1.0, 1e-15);
  EXPECT_EQ(two[0].q5, 1.0);
  EXPECT_EQ(two[0].q95, 1.0);

  // One particle with positive weight: its value, with an undefined sd.
  const double one_live[] = {-kInf, 0.5, -kInf};
  const double three[] = {kNaN, 4.0, kInf};
  const std::vector<WeightedMoments> single = weighted_moments(three, 3, 1, one_live);
  EXPECT_EQ(single[0].mean, 4.0);
  EXPECT_TRUE(std::isnan(single[0].sd));
  EXPECT_EQ(single[0].ess, 1.0);
  EXPECT_EQ(single[0].q5, 4.0);
  EXPECT_EQ(single[0].q50, 4.0);
  EXPECT_EQ(single[0].q95, 4.0);

  // Every weight zero: nothing is determined.
  const double none[] = {-kInf, -kInf};
  const std::vector<WeightedMoments> empty = weighted_moments(values, 2, 1, none);
  EXPECT_TRUE(std::isnan(empty[0].mean));
  EXPECT_TRUE(std::isnan(empty[0].sd));
  EXPECT_TRUE(std::isnan(empty[0].q50));
  EXPECT_EQ(empty[0].ess, 0.0);
}

TEST(WeightedMoments, NonFiniteValueOfALiveParticle) {
  // Column 0 holds an inf with positive weight: its quantiles are NaN and its mean is inf;
  // column 1 is unaffected.
  const double log_w[] = {0.0, 0.0, 0.0};
  const double particles[] = {1.0, 1.0, kInf, 2.0, 3.0, 3.0};
  const std::vector<WeightedMoments> m = weighted_moments(particles, 3, 2, log_w);
  EXPECT_EQ(m[0].mean, kInf);
  EXPECT_TRUE(std::isnan(m[0].q5));
  EXPECT_TRUE(std::isnan(m[0].q50));
  EXPECT_TRUE(std::isnan(m[0].q95));
  EXPECT_NEAR(m[1].mean, 2.0, 1e-15);
  EXPECT_NEAR(m[1].sd, 1.0, 1e-15);
  EXPECT_EQ(m[1].q50, 2.0);
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(LogZErrors, BadInputsThrowNamingTheProblem) {
  const double ok[] = {0.0, 1.0, 2.0, 3.0};
  const double with_nan[] = {0.0, 1.0, kNaN, 3.0};
  const double with_inf[] = {0.0, 1.0, 2.0, kInf};

  EXPECT_MESSAGE_HAS(error_of([&] { log_sum_exp(ok, 0); }), "log_sum_exp: x is empty");
  EXPECT_MESSAGE_HAS(error_of([&] { log_sum_exp(nullptr, 3); }), "null");
  EXPECT_MESSAGE_HAS(error_of([&] { log_sum_exp(with_nan, 4); }), "x[2] is nan");
  EXPECT_MESSAGE_HAS(error_of([&] { log_mean_exp(with_inf, 4); }), "x[3] is inf");

  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z(ok, 0, 1); }), "log_w is empty");
  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z(with_nan, 4, 1); }),
                     "estimate_log_z: log_w[2] is nan");
  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z(with_inf, 4, 1); }), "log_w[3] is inf");
  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z(ok, 4, 1, 1); }),
                     "bootstrap_replicates must be 0 (no bootstrap) or at least 2, got 1");
  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z(ok, 4, 1, -5); }), "got -5");

  std::vector<double> batch(2 * 4, 0.0);
  batch[1 * 4 + 2] = kNaN;
  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z_segmented(batch.data(), 2, 4, 1); }),
                     "log_w[problem 1, particle 2] is nan");
  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z_segmented(ok, 0, 4, 1); }),
                     "problems must be positive, got 0");
  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z_segmented(ok, 1, -4, 1); }),
                     "particles must be positive, got -4");

  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z_upper(kNaN, ok, 4, 1); }),
                     "log_z_q must be finite, got nan");
  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z_upper(0.0, with_inf, 4, 1); }),
                     "estimate_log_z_upper: log_r[3] is inf");
  EXPECT_MESSAGE_HAS(error_of([&] { estimate_log_z_upper_segmented(0.0, batch.data(), 2, 4, 1); }),
                     "log_r[problem 1, particle 2] is nan");

  EXPECT_MESSAGE_HAS(error_of([&] { average_over_test_set({}); }), "empty test set");
  EXPECT_MESSAGE_HAS(error_of([&] {
                       average_over_test_set({{0.0, 0.1, kNaN, 1.0, 1}, {kNaN, 0.1, kNaN, 1.0, 1}});
                     }),
                     "per_point[1].log_z is nan");

  EXPECT_MESSAGE_HAS(error_of([&] { weighted_moments(ok, 4, 0, ok); }),
                     "dims must be positive, got 0");
  EXPECT_MESSAGE_HAS(error_of([&] { weighted_moments(ok, 0, 1, ok); }),
                     "num_particles must be positive, got 0");
  EXPECT_MESSAGE_HAS(error_of([&] { weighted_moments(nullptr, 4, 1, ok); }),
                     "particles is a null pointer");
  EXPECT_MESSAGE_HAS(error_of([&] { weighted_moments(ok, 4, 1, with_nan); }),
                     "weighted_moments: log_w[2] is nan");
}

}  // namespace
}  // namespace myriad
