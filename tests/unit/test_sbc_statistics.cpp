// The statistics of simulation-based calibration (diag/sbc.hpp): ranks with uniform
// tie-breaking, the rank histogram's chi-square test (Talts et al. 2018) and the simultaneous
// ECDF-difference bands of Säilynoja, Bürkner & Vehtari (2022).
//
// The bands' adjusted level γ is checked against an exact oracle: under uniform ranks the
// counts x_i = N·F̂(z_i) form a Markov chain, x_i − x_{i−1} | x_{i−1} ~
// Binomial(N − x_{i−1}, (z_i − z_{i−1})/(1 − z_{i−1})), so the probability that every count lies
// in its band is a forward recursion over x (O(K N²)), with no simulation. The oracle's binomial
// tails are summed from log-gamma pmfs here, independently of the library's Boost.Math.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/expect_error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/diag/normal_quantile.hpp"
#include "myriad/diag/sbc.hpp"

namespace myriad::diag {
namespace {

using myriad::testing::expect_invalid_argument;

constexpr Purpose kTestDraws = static_cast<Purpose>(user_purpose(0x5BD0));

double binomial_pmf(std::int64_t x, std::int64_t n, double p) {
  if (x < 0 || x > n) return 0.0;
  if (p <= 0.0) return x == 0 ? 1.0 : 0.0;
  if (p >= 1.0) return x == n ? 1.0 : 0.0;
  const double log_choose = std::lgamma(n + 1.0) - std::lgamma(x + 1.0) - std::lgamma(n - x + 1.0);
  return std::exp(log_choose + x * std::log(p) + (n - x) * std::log1p(-p));
}

// The band {x : min(1, 2 min(P(X ≤ x), P(X ≥ x))) ≥ threshold} of X ~ Binomial(n, p), each tail
// summed from its own end (no 1 − cdf cancellation).
void oracle_band(std::int64_t n, double p, double threshold, std::int64_t& lower,
                 std::int64_t& upper) {
  double below = 0.0;
  for (lower = 0; lower <= n; ++lower) {
    below += binomial_pmf(lower, n, p);
    if (std::min(1.0, 2.0 * below) >= threshold) break;
  }
  double above = 0.0;
  for (upper = n; upper >= 0; --upper) {
    above += binomial_pmf(upper, n, p);
    if (std::min(1.0, 2.0 * above) >= threshold) break;
  }
}

// P(lower_i ≤ x_i ≤ upper_i for every i) for N uniform ranks (file comment).
double exact_coverage(std::int64_t n, const std::vector<double>& z,
                      const std::vector<std::int64_t>& lower,
                      const std::vector<std::int64_t>& upper) {
  std::vector<double> probability(static_cast<size_t>(n + 1), 0.0), next(probability.size());
  probability[0] = 1.0;
  double previous_z = 0.0;
  for (size_t i = 0; i < z.size(); ++i) {
    std::fill(next.begin(), next.end(), 0.0);
    const double step = (z[i] - previous_z) / (1.0 - previous_z);
    for (std::int64_t from = 0; from <= n; ++from) {
      if (probability[from] == 0.0) continue;
      for (std::int64_t to = std::max(from, lower[i]); to <= upper[i]; ++to)
        next[to] += probability[from] * binomial_pmf(to - from, n - from, step);
    }
    probability.swap(next);
    previous_z = z[i];
  }
  double total = 0.0;
  for (double q : probability) total += q;
  return total;
}

std::vector<std::int64_t> uniform_ranks(std::int64_t n, std::int64_t max_rank, std::uint64_t seed) {
  const RandomStream stream(seed, 0);
  std::vector<std::int64_t> ranks(static_cast<size_t>(n));
  for (std::int64_t j = 0; j < n; ++j)
    ranks[j] = std::min<std::int64_t>(
        static_cast<std::int64_t>(stream.uniform<double>(0, kTestDraws, j) * (max_rank + 1)),
        max_rank);
  return ranks;
}

// Ranks of truths θ ~ N(0, 1) among L draws from N(shift, scale²), drawn independently of θ:
// a posterior that ignores the data is calibrated exactly when it equals the prior (scale 1,
// shift 0); scale < 1 is overconfident (∪-shaped ranks), shift ≠ 0 is biased. Normals are
// Φ⁻¹(uniform), the same values in every build.
std::vector<std::int64_t> miscalibrated_ranks(std::int64_t replications, int draws, double scale,
                                              double shift, std::uint64_t seed) {
  std::vector<std::int64_t> ranks(static_cast<size_t>(replications));
  std::vector<double> posterior(static_cast<size_t>(draws));
  for (std::int64_t r = 0; r < replications; ++r) {
    const RandomStream stream(seed, static_cast<std::uint64_t>(r));
    const double truth = normal_quantile(stream.uniform<double>(0, kTestDraws, 0));
    for (int j = 0; j < draws; ++j)
      posterior[j] = shift + scale * normal_quantile(stream.uniform<double>(0, kTestDraws, j + 1));
    ranks[r] =
        sbc_rank(posterior.data(), draws, 1, truth, stream.uniform<double>(1, kTestDraws, 0));
  }
  return ranks;
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Pearson non-centrality λ = N Σ_b (p_b − 1/B)² / (1/B) of B equal-width bins of the fractional
// rank u, whose CDF for large L is G(t) = P(Φ((θ − shift)/scale) ≤ t) = Φ(shift + scale Φ⁻¹(t)).
double chi_square_noncentrality(std::int64_t replications, int bins, double scale, double shift) {
  double sum = 0.0, previous = 0.0;
  for (int b = 1; b <= bins; ++b) {
    const double current =
        b == bins ? 1.0 : normal_cdf(shift + scale * normal_quantile(double(b) / bins));
    const double deviation = current - previous - 1.0 / bins;
    sum += deviation * deviation * bins;
    previous = current;
  }
  return static_cast<double>(replications) * sum;
}

// ---------------------------------------------------------------------------------------------
// sbc_rank

TEST(SbcRank, CountsDrawsBelowAndPlacesTruthUniformlyAmongItsTies) {
  const std::vector<double> draws = {3.0, 1.0, 2.0, 2.0, 5.0, 2.0};  // 1 below 2, 3 ties
  EXPECT_EQ(sbc_rank(draws.data(), 6, 1, 2.0, 0.0), 1);              // ⌊0 · 4⌋ = 0
  EXPECT_EQ(sbc_rank(draws.data(), 6, 1, 2.0, 0.2499), 1);           // ⌊0.9996⌋ = 0
  EXPECT_EQ(sbc_rank(draws.data(), 6, 1, 2.0, 0.25), 2);
  EXPECT_EQ(sbc_rank(draws.data(), 6, 1, 2.0, 0.6), 3);     // ⌊2.4⌋ = 2
  EXPECT_EQ(sbc_rank(draws.data(), 6, 1, 2.0, 0.9999), 4);  // all three ties below truth
  EXPECT_EQ(sbc_rank(draws.data(), 6, 1, 2.5, 0.9999), 4);  // no ties: u is unused
  EXPECT_EQ(sbc_rank(draws.data(), 6, 1, 0.0, 0.5), 0);
  EXPECT_EQ(sbc_rank(draws.data(), 6, 1, 9.0, 0.5), 6);
  EXPECT_EQ(sbc_rank(draws.data(), 0, 1, 9.0, 0.5), 0);
  // Strided: every other value of an interleaved [draw][quantity] array.
  const std::vector<double> interleaved = {3.0, -1, 1.0, -1, 2.0, -1, 2.0, -1, 5.0, -1, 2.0, -1};
  EXPECT_EQ(sbc_rank(interleaved.data(), 6, 2, 2.0, 0.6), 3);
  EXPECT_EQ(sbc_rank(interleaved.data() + 1, 6, 2, 0.0, 0.0), 6);
}

TEST(SbcRank, RefusesBadArguments) {
  const std::vector<double> draws = {1.0, std::nan(""), 2.0};
  expect_invalid_argument([&] { sbc_rank(draws.data(), 1, 1, 0.0, 1.0); }, "tie_uniform");
  expect_invalid_argument([&] { sbc_rank(draws.data(), 1, 1, 0.0, -0.1); }, "tie_uniform");
  expect_invalid_argument([&] { sbc_rank(draws.data(), 1, 1, std::nan(""), 0.5); }, "truth");
  expect_invalid_argument([&] { sbc_rank(draws.data(), 3, 1, 0.0, 0.5); }, "draw 1 is NaN");
  expect_invalid_argument([&] { sbc_rank(draws.data(), 1, 0, 0.0, 0.5); }, "stride");
  expect_invalid_argument([&] { sbc_rank(draws.data(), -1, 1, 0.0, 0.5); }, "count");
}

// A discrete quantity (uniform on {0, 1, 2}, truth and 9 draws exchangeable): with the uniform
// tie-break the ranks are exactly uniform on 0 … 9; counting ties as above truth (u = 0) puts
// rank r with probability P(#below = r), a Binomial(9, 1/3) mixture concentrated on low
// ranks — non-centrality in the thousands at N = 3000, so the chi-square test must reject.
TEST(SbcRank, TieBreakKeepsRanksOfDiscreteQuantitiesUniform) {
  const int draws = 9;
  const std::int64_t replications = 3000;
  std::vector<std::int64_t> broken(replications), unbroken(replications);
  std::vector<double> posterior(draws);
  for (std::int64_t r = 0; r < replications; ++r) {
    const RandomStream stream(11, static_cast<std::uint64_t>(r));
    const auto value = [&](std::uint32_t j) {
      return std::floor(3.0 * stream.uniform<double>(0, kTestDraws, j));
    };
    const double truth = value(0);
    for (int j = 0; j < draws; ++j) posterior[j] = value(j + 1);
    broken[r] =
        sbc_rank(posterior.data(), draws, 1, truth, stream.uniform<double>(1, kTestDraws, 0));
    unbroken[r] = sbc_rank(posterior.data(), draws, 1, truth, 0.0);
  }
  // Under H0 p < 1e-3 with probability 1e-3; the seed is fixed.
  EXPECT_GT(rank_histogram(broken, draws, 10).p_value, 1e-3);
  EXPECT_LT(rank_histogram(unbroken, draws, 10).p_value, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// rank_histogram

TEST(RankHistogram, BinsRanksAndMatchesHandComputedChiSquare) {
  // max_rank = 99, 10 bins of 10 ranks each; counts 129, 71, 102, 98, 101, 99, 100 × 4 around
  // E = 100: X² = (29² + 29² + 2² + 2² + 1² + 1²)/100 = 16.92, and P(χ²_9 > 16.919) = 0.050
  // (tables; 16.92 lies 0.001 above, where the density is ≈ 0.015, so p ≈ 0.04998).
  const std::vector<std::int64_t> counts = {129, 71, 102, 98, 101, 99, 100, 100, 100, 100};
  std::vector<std::int64_t> ranks;
  for (int b = 0; b < 10; ++b)
    for (std::int64_t c = 0; c < counts[b]; ++c) ranks.push_back(10 * b + (c * 7) % 10);
  const RankHistogram histogram = rank_histogram(ranks, 99, 10);
  EXPECT_EQ(histogram.counts, counts);
  EXPECT_EQ(histogram.bins, 10);
  EXPECT_EQ(histogram.max_rank, 99);
  EXPECT_EQ(histogram.degrees_of_freedom, 9);
  EXPECT_NEAR(histogram.chi_square, 16.92, 1e-12);
  EXPECT_NEAR(histogram.p_value, 0.05, 1e-4);

  // Bin edges: with 4 bins of 25 ranks, 24 is the last rank of bin 0 and 25 the first of bin 1.
  const RankHistogram edges = rank_histogram({0, 24, 25, 49, 50, 74, 75, 99, 99}, 99, 4);
  EXPECT_EQ(edges.counts, (std::vector<std::int64_t>{2, 2, 2, 3}));

  // Even degrees of freedom have a closed-form tail: P(χ²_{2m} > x) = e^{−x/2} Σ_{j<m} (x/2)^j/j!.
  // 11 bins of one rank each (max_rank = 10), 22 ranks, E = 2: counts (5, 0, 1, 2 × 8) give
  // X² = (3² + 2² + 1²)/2 = 7 with 10 degrees of freedom.
  std::vector<std::int64_t> ranks11 = {0, 0, 0, 0, 0, 2};
  for (int r = 3; r <= 10; ++r) ranks11.insert(ranks11.end(), {r, r});
  const RankHistogram ten = rank_histogram(ranks11, 10, 11);
  EXPECT_EQ(ten.degrees_of_freedom, 10);
  EXPECT_NEAR(ten.chi_square, 7.0, 1e-12);
  double term = 1.0, series = 0.0;
  for (int j = 0; j < 5; ++j) {
    series += term;
    term *= 3.5 / (j + 1);
  }
  EXPECT_NEAR(ten.p_value, std::exp(-3.5) * series, 1e-13);  // 0.72544…
  EXPECT_NEAR(ten.p_value, 0.7254, 1e-4);

  // A perfectly flat histogram: X² = 0, p = 1.
  const RankHistogram flat = rank_histogram({0, 1, 2, 3}, 3, 4);
  EXPECT_EQ(flat.chi_square, 0.0);
  EXPECT_EQ(flat.p_value, 1.0);
}

TEST(RankHistogram, RefusesUnequalBinsAndBadRanks) {
  const std::vector<std::int64_t> ranks = {0, 5, 99};
  expect_invalid_argument([&] { rank_histogram(ranks, 99, 7); }, "must divide max_rank + 1 = 100");
  expect_invalid_argument([&] { rank_histogram(ranks, 99, 1); }, "bins must be >= 2");
  expect_invalid_argument([&] { rank_histogram(ranks, 98, 3); }, "rank 2 is 99");
  expect_invalid_argument([&] { rank_histogram({-1}, 99, 10); }, "rank 0 is -1");
  expect_invalid_argument([&] { rank_histogram({}, 99, 10); }, "no ranks");
  expect_invalid_argument([&] { rank_histogram({0}, 0, 1); }, "bins");
}

// ---------------------------------------------------------------------------------------------
// ecdf_difference_bands

TEST(EcdfBands, EvaluatesTheEcdfAtRankBoundaries) {
  // L = 3, K = 4: z = 1/4, 2/4, 3/4; #{r < 1} = 2, #{r < 2} = 3, #{r < 3} = 3 of N = 4.
  const std::vector<std::int64_t> ranks = {0, 0, 1, 3};
  const EcdfBands four = ecdf_difference_bands(ranks, 3, 0.05, 4, 1, 500);
  EXPECT_EQ(four.z, (std::vector<double>{0.25, 0.5, 0.75}));
  EXPECT_EQ(four.ecdf_difference, (std::vector<double>{0.25, 0.25, 0.0}));
  // K = 3 does not divide L + 1 = 4: points move down to the boundaries ⌊4i/3⌋ = 1, 2.
  const EcdfBands three = ecdf_difference_bands(ranks, 3, 0.05, 3, 1, 500);
  EXPECT_EQ(three.z, (std::vector<double>{0.25, 0.5}));
  EXPECT_EQ(three.ecdf_difference, (std::vector<double>{0.25, 0.25}));
  // Default K = min(L + 1, max(N, 2)).
  EXPECT_EQ(ecdf_difference_bands(ranks, 99, 0.05, 0, 1, 500).z.size(), 3u);
  EXPECT_EQ(ecdf_difference_bands({0, 0, 2}, 2, 0.05, 0, 1, 500).z.size(), 2u);
  // N z_i = 1, 2, 3 is the binomial's median, whose two-sided tail is ≥ 1 ≥ γ: the band holds
  // a zero difference.
  for (size_t i = 0; i < four.z.size(); ++i) {
    EXPECT_LE(four.lower[i], 0.0);
    EXPECT_GE(four.upper[i], 0.0);
  }
}

TEST(EcdfBands, RefusesBadArguments) {
  const std::vector<std::int64_t> ranks = {0, 1, 2};
  expect_invalid_argument([&] { ecdf_difference_bands(ranks, 9, 0.05, 1, 1); }, "points");
  expect_invalid_argument([&] { ecdf_difference_bands(ranks, 9, 0.05, 11, 1); }, "points");
  expect_invalid_argument([&] { ecdf_difference_bands(ranks, 9, 0.0, 10, 1); }, "alpha");
  expect_invalid_argument([&] { ecdf_difference_bands(ranks, 9, 1.0, 10, 1); }, "alpha");
  expect_invalid_argument([&] { ecdf_difference_bands(ranks, 1, 0.05, 2, 1); }, "rank 2 is 2");
  expect_invalid_argument([&] { ecdf_difference_bands({}, 9, 0.05, 2, 1); }, "no ranks");
  expect_invalid_argument([&] { ecdf_difference_bands(ranks, 9, 0.05, 2, 1, 0); }, "simulations");
}

// γ is the α-quantile of a discrete statistic (the smallest two-sided binomial tail of a
// sample), estimated from M simulated samples. With F the statistic's exact distribution, the
// empirical ⌊αM⌋-th order statistic satisfies F(γ−) ≤ α ≤ F(γ) up to the order statistic's Monte
// Carlo error, whose standard deviation in probability is σ = sqrt(α(1 − α)/M). F(γ−) is the
// exact probability of falling outside the returned bands (inclusive of the level γ), F(γ) that
// of falling outside the bands one atom tighter (exclusive of γ); both come from the recursion.
struct LevelCheck {
  double gamma, outside_inclusive, outside_exclusive;
};

LevelCheck check_adjusted_level(std::int64_t n, std::int64_t max_rank, int points, double alpha,
                                int simulations, std::uint64_t seed) {
  const EcdfBands bands = ecdf_difference_bands(uniform_ranks(n, max_rank, seed), max_rank, alpha,
                                                points, seed, simulations);
  const size_t count = bands.z.size();
  std::vector<std::int64_t> lower(count), upper(count), lower_strict(count), upper_strict(count);
  for (size_t i = 0; i < count; ++i) {
    lower[i] = std::llround((bands.lower[i] + bands.z[i]) * n);
    upper[i] = std::llround((bands.upper[i] + bands.z[i]) * n);
    // The library's bands are the binomial quantiles at γ/2 and 1 − γ/2 (oracle_band), with a
    // count whose tail is exactly γ/2 inside; 1e-9 absorbs the two implementations' rounding.
    std::int64_t oracle_lower, oracle_upper;
    oracle_band(n, bands.z[i], bands.gamma * (1 - 1e-9), oracle_lower, oracle_upper);
    EXPECT_EQ(lower[i], oracle_lower) << "point " << i;
    EXPECT_EQ(upper[i], oracle_upper) << "point " << i;
    oracle_band(n, bands.z[i], bands.gamma * (1 + 1e-9), lower_strict[i], upper_strict[i]);
  }
  const double sigma = std::sqrt(alpha * (1 - alpha) / simulations);
  LevelCheck check{bands.gamma, 1 - exact_coverage(n, bands.z, lower, upper),
                   1 - exact_coverage(n, bands.z, lower_strict, upper_strict)};
  EXPECT_LE(check.outside_inclusive, alpha + 4 * sigma);
  EXPECT_GE(check.outside_exclusive, alpha - 4 * sigma);
  std::printf(
      "  N = %lld, L = %lld, K = %d, alpha = %.3f, M = %d: gamma = %.6f, exact "
      "P(outside) = %.4f (bands one atom tighter: %.4f)\n",
      static_cast<long long>(n), static_cast<long long>(max_rank), points, alpha, simulations,
      check.gamma, check.outside_inclusive, check.outside_exclusive);
  return check;
}

// One evaluation point (K = 2, z = 1/2): the minimum is the point's two-sided binomial p-value,
// so γ is the atom of that p-value at its α-quantile — α itself up to the atoms' spacing and
// the Monte Carlo error. At N = 200 the atoms near 0.05 are 2 P(X ≤ 85) ≈ 0.040 and
// 2 P(X ≤ 86) ≈ 0.056 (sd of X = 7.07); at N = 20000 they are ≈ 0.0017 apart, so |γ − α| ≤
// 4σ + 0.0017 = 0.014 (σ = 0.0031 at M = 5000).
TEST(EcdfBands, SinglePointLevelIsAlphaUpToDiscreteness) {
  const LevelCheck coarse = check_adjusted_level(200, 99, 2, 0.05, 5000, 21);
  EXPECT_NEAR(coarse.gamma, 0.056, 0.0015);  // 2 P(X ≤ 86), X ~ Binomial(200, 1/2)
  const LevelCheck fine = check_adjusted_level(20000, 99, 2, 0.05, 5000, 22);
  EXPECT_NEAR(fine.gamma, 0.05, 0.014);
}

// Many points: γ lies below α (one point alone already fails with probability ≈ γ) and above
// the Bonferroni level α/(K − 1) (at which the K − 1 pointwise failures, of probability ≤ γ
// each, add up to at most α). The recursion checks the simultaneous level exactly.
TEST(EcdfBands, AdjustedLevelGivesExactSimultaneousCoverage) {
  const LevelCheck typical = check_adjusted_level(200, 99, 100, 0.05, 5000, 31);
  EXPECT_LT(typical.gamma, 0.05);
  EXPECT_GT(typical.gamma, 0.05 / 99);
  const LevelCheck few = check_adjusted_level(50, 19, 10, 0.1, 5000, 32);
  EXPECT_LT(few.gamma, 0.1);
  EXPECT_GT(few.gamma, 0.1 / 9);
  // K not dividing L + 1 (boundaries ⌊100 i/30⌋): the counts are still exactly binomial.
  check_adjusted_level(200, 99, 30, 0.05, 5000, 33);
  // The seed fixes γ.
  const std::vector<std::int64_t> ranks = uniform_ranks(200, 99, 5);
  EXPECT_EQ(ecdf_difference_bands(ranks, 99, 0.05, 100, 31).gamma, typical.gamma);
}

// Size: over S = 200 independent sets of N = 200 uniform ranks (L = 99, K = 100, α = 0.05, each
// with its own band simulation), the number inside is Binomial(S, 1 − α') with α' the
// achieved level, within α ± 0.012 (exact check above, plus the M = 1000 Monte Carlo spread);
// 4 binomial standard errors sqrt(α(1 − α)/S) = 0.0154 give 1 − α ± 0.062 (+ 0.012). The
// chi-square test (10 bins, E = 20) must reject at 5 % about as often, and its p-values, uniform
// under H0, have mean 1/2 ± 4 sqrt(1/12/S) = 0.082.
TEST(EcdfBands, UniformRanksStayInsideAtTheNominalRate) {
  const int sets = 200;
  const double alpha = 0.05;
  int inside = 0, rejected = 0;
  double p_sum = 0.0, p_min = 1.0;
  for (int s = 0; s < sets; ++s) {
    const std::vector<std::int64_t> ranks = uniform_ranks(200, 99, 1000 + s);
    inside += ecdf_difference_bands(ranks, 99, alpha, 100, 5000 + s, 1000).inside;
    const double p = rank_histogram(ranks, 99, 10).p_value;
    rejected += p < alpha;
    p_sum += p;
    p_min = std::min(p_min, p);
  }
  const double standard_error = std::sqrt(alpha * (1 - alpha) / sets);
  const double fraction_inside = double(inside) / sets;
  std::printf(
      "  inside the 95%% bands: %d of %d; chi-square p < 0.05: %d; mean p %.3f, min p "
      "%.4f\n",
      inside, sets, rejected, p_sum / sets, p_min);
  EXPECT_NEAR(fraction_inside, 1 - alpha, 4 * standard_error + 0.012);
  EXPECT_NEAR(double(rejected) / sets, alpha, 4 * standard_error);
  EXPECT_NEAR(p_sum / sets, 0.5, 4 * std::sqrt(1.0 / 12 / sets));
  EXPECT_GT(p_min, 1e-5);  // P(min of 200 uniforms < 1e-5) = 0.002
}

// Power. An overconfident posterior, N(0, 0.8²) against truths from N(0, 1): the fractional
// ranks have CDF G(t) = Φ(0.8 Φ⁻¹(t)), ∪-shaped, with G(t) − t = +0.053 at t = 0.1 and −0.053 at
// 0.9. A biased posterior, N(0.25, 1): G(t) = Φ(0.25 + Φ⁻¹(t)), G(1/2) − 1/2 = 0.099. At
// N = 2000 replications the bands (half-width ≈ 2.9 sqrt(0.09/2000) ≈ 0.02 at z = 0.1, 0.032 at
// z = 1/2) sit > 4 ECDF standard deviations (0.0067 resp. 0.011) inside these differences, and
// the chi-square non-centralities λ ≈ 146 and 122 (10 bins, 9 dof) put X² near 9 + λ with sd
// sqrt(2(9 + 2λ)) ≈ 25, > 3.5 sd above the 1e-6 critical value (≈ 43): both tests must reject.
// (λ is computed below from G and checked, so the sizes follow from the stated effects.)
TEST(EcdfBands, MiscalibratedPosteriorsFallOutside) {
  const std::int64_t replications = 2000;
  const int draws = 99;
  struct Case {
    const char* name;
    double scale, shift;
  } cases[] = {{"overconfident N(0, 0.8^2)", 0.8, 0.0}, {"biased N(0.25, 1)", 1.0, 0.25}};
  for (const Case& c : cases) {
    const double lambda = chi_square_noncentrality(replications, 10, c.scale, c.shift);
    EXPECT_GT(lambda, 100.0) << c.name;
    const std::vector<std::int64_t> ranks =
        miscalibrated_ranks(replications, draws, c.scale, c.shift, 41);
    const RankHistogram histogram = rank_histogram(ranks, draws, 10);
    const EcdfBands bands = ecdf_difference_bands(ranks, draws, 0.05, 100, 42);
    double largest = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < bands.z.size(); ++i)
      if (std::abs(bands.ecdf_difference[i]) > std::abs(largest)) {
        largest = bands.ecdf_difference[i];
        at = i;
      }
    std::printf(
        "  %s: lambda = %.0f, X^2 = %.1f, p = %.2g; gamma = %.5f, inside = %d, largest "
        "ECDF difference %+.3f at z = %.2f (band %+.3f .. %+.3f)\n",
        c.name, lambda, histogram.chi_square, histogram.p_value, bands.gamma, int(bands.inside),
        largest, bands.z[at], bands.lower[at], bands.upper[at]);
    EXPECT_LT(histogram.p_value, 1e-6) << c.name;
    EXPECT_FALSE(bands.inside) << c.name;
    // Even the 99.9 % bands (about 4.1/2.9 times as wide) stay > 2 ECDF sd inside the effect.
    EXPECT_FALSE(ecdf_difference_bands(ranks, draws, 0.001, 100, 43).inside) << c.name;
    if (c.shift == 0.0) {
      // ∪: the outer bins are over-full and the ECDF rises early.
      EXPECT_GT(histogram.counts.front(), replications / 10);
      EXPECT_GT(histogram.counts.back(), replications / 10);
      EXPECT_GT(bands.ecdf_difference[9], bands.upper[9]);    // z = 0.10
      EXPECT_LT(bands.ecdf_difference[89], bands.lower[89]);  // z = 0.90
    } else {
      // Truths below the posterior: low ranks, an ECDF above the diagonal.
      EXPECT_GT(bands.ecdf_difference[49], bands.upper[49]);  // z = 0.50
    }
  }
  // The same machinery on a calibrated posterior (scale 1, shift 0) accepts, at levels whose
  // false alarms (probability 1e-3 each) cannot pass for the rejections above. (At α = 0.05
  // these calibrated ranks happen to leave the bands, at one point by one count: a 5 % event.)
  const std::vector<std::int64_t> calibrated = miscalibrated_ranks(replications, draws, 1, 0, 41);
  EXPECT_GT(rank_histogram(calibrated, draws, 10).p_value, 1e-3);
  EXPECT_TRUE(ecdf_difference_bands(calibrated, draws, 0.001, 100, 43).inside);
}

}  // namespace
}  // namespace myriad::diag
