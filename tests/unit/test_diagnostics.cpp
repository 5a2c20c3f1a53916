// Tests of the convergence diagnostics (myriad/diag): known answers for Φ⁻¹, the FFT,
// quantiles, ranks and nested R-hat; statistical checks on synthetic chains with tolerances
// derived from the estimators' sampling variability; agreement with ArviZ on fixed data.
//
// The synthetic chains use std::mt19937_64 with fixed seeds and std::normal_distribution; they
// need none of myriad's RNG. The tolerances do not depend on the particular draws.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/diag/draws_view.hpp"
#include "myriad/diag/ess.hpp"
#include "myriad/diag/fft.hpp"
#include "myriad/diag/nested_rhat.hpp"
#include "myriad/diag/normal_quantile.hpp"
#include "myriad/diag/rhat.hpp"
#include "myriad/diag/summary.hpp"

namespace myriad::diag {
namespace {

// Draws stored [chain][draw].
struct Chains {
  int64_t chains;
  int64_t draws;
  std::vector<double> values;
  DrawsView view() const { return chain_major_view(values.data(), chains, draws); }
  double& at(int64_t c, int64_t t) { return values[static_cast<size_t>(c * draws + t)]; }
};

Chains iid_normal(int64_t chains, int64_t draws, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Chains x{chains, draws, std::vector<double>(static_cast<size_t>(chains * draws))};
  for (double& v : x.values) v = normal(rng);
  return x;
}

// x_t = φ x_{t−1} + sqrt(1 − φ²) ε_t with x_0 ~ N(0, 1): stationary with unit variance and
// autocorrelation φ^t, so τ = (1 + φ)/(1 − φ).
Chains ar1(int64_t chains, int64_t draws, double phi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Chains x{chains, draws, std::vector<double>(static_cast<size_t>(chains * draws))};
  const double innovation = std::sqrt(1.0 - phi * phi);
  for (int64_t c = 0; c < chains; ++c) {
    double previous = normal(rng);
    for (int64_t t = 0; t < draws; ++t) {
      if (t > 0) previous = phi * previous + innovation * normal(rng);
      x.at(c, t) = previous;
    }
  }
  return x;
}

// ---------------------------------------------------------------------------------------------
// Φ⁻¹

TEST(DiagnosticsNormalQuantile, KnownValuesToFullPrecision) {
  // Reference values to 17 digits (mpmath, 50 digits).
  const std::pair<double, double> cases[] = {
      {0.975, 1.959963984540054},   {1e-10, -6.361340902404056},   // brief's known values
      {0.05, -1.6448536269514727},  {0.2, -0.84162123357291417},   // central region
      {0.001, -3.0902323061678135}, {1e-20, -9.2623400897984076},  // near and far tails
      {1e-300, -37.047096299361199}};
  for (const auto& [p, expected] : cases) {
    EXPECT_NEAR(normal_quantile(p), expected, 1e-12 * std::fabs(expected)) << "p = " << p;
  }
  EXPECT_EQ(normal_quantile(0.5), 0.0);
}

TEST(DiagnosticsNormalQuantile, SymmetricAndEdges) {
  // p chosen so that 1 − p is exact (or within an ulp of a value ≫ p).
  for (double p : {0x1.0p-40, 0x1.0p-20, 0.01, 0.3, 0.49}) {
    EXPECT_NEAR(normal_quantile(1.0 - p), -normal_quantile(p),
                1e-12 * std::fabs(normal_quantile(p)) + 1e-15);
  }
  EXPECT_EQ(normal_quantile(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(normal_quantile(1.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(normal_quantile(-0.1)));
  EXPECT_TRUE(std::isnan(normal_quantile(1.5)));
  EXPECT_TRUE(std::isnan(normal_quantile(std::numeric_limits<double>::quiet_NaN())));
}

// ---------------------------------------------------------------------------------------------
// FFT and autocovariance

TEST(DiagnosticsFft, KnownTransformOfFourPoints) {
  // DFT of (1, 2, 3, 4): (10, −2 + 2i, −2, −2 − 2i).
  std::vector<std::complex<double>> x = {1.0, 2.0, 3.0, 4.0};
  const FftPlan plan(4);
  plan.forward(x.data());
  const std::complex<double> expected[] = {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(x[k].real(), expected[k].real(), 1e-14) << "k = " << k;
    EXPECT_NEAR(x[k].imag(), expected[k].imag(), 1e-14) << "k = " << k;
  }
  plan.inverse(x.data());
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(std::abs(x[j] - double(j + 1)), 0.0, 1e-14);
}

TEST(DiagnosticsFft, MatchesDirectDftAndInverts) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const int64_t n = 64;
  std::vector<std::complex<double>> x(n);
  for (auto& c : x) c = {normal(rng), normal(rng)};
  std::vector<std::complex<double>> transformed = x;
  const FftPlan plan(n);
  plan.forward(transformed.data());
  const double pi = std::acos(-1.0);
  for (int64_t k = 0; k < n; ++k) {
    std::complex<double> sum = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      // Reduce jk mod n so the angle is accurate.
      sum += x[j] * std::polar(1.0, -2.0 * pi * double((j * k) % n) / double(n));
    }
    // Both sides sum 64 terms of size ~1: rounding is a few 1e-15.
    EXPECT_NEAR(std::abs(sum - transformed[k]), 0.0, 1e-12) << "k = " << k;
  }
  plan.inverse(transformed.data());
  for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(std::abs(transformed[j] - x[j]), 0.0, 1e-14);
}

TEST(DiagnosticsFft, RejectsSizesThatAreNotPowersOfTwo) {
  EXPECT_THROW(FftPlan(12), myriad::invalid_argument);
  EXPECT_THROW(FftPlan(0), myriad::invalid_argument);
  EXPECT_EQ(next_power_of_two(1000), 1024);
  EXPECT_EQ(next_power_of_two(1024), 1024);
  EXPECT_EQ(next_power_of_two(1), 1);
}

// γ̂_t = (1/n) Σ_{i<n−t} (x_i − x̄)(x_{i+t} − x̄), the O(n²) definition.
std::vector<double> direct_autocovariance(const std::vector<double>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / double(n);
  std::vector<double> acov(n, 0.0);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i + t < n; ++i) acov[t] += (x[i] - mean) * (x[i + t] - mean);
    acov[t] /= double(n);
  }
  return acov;
}

TEST(DiagnosticsFft, AutocovarianceMatchesDirectSum) {
  const std::vector<double> x = {1.0, 3.0, -2.0, 0.5, 4.0, 4.0, -1.0};
  const std::vector<double> fft_acov = autocovariance(x.data(), 7);
  const std::vector<double> direct = direct_autocovariance(x);
  ASSERT_EQ(fft_acov.size(), direct.size());
  for (size_t t = 0; t < x.size(); ++t) EXPECT_NEAR(fft_acov[t], direct[t], 1e-13) << t;
}

TEST(DiagnosticsFft, MeanAutocovarianceAveragesChains) {
  // Five chains (odd: the last FFT carries one chain) of 37 draws, with different means.
  Chains x = iid_normal(5, 37, 3);
  for (int64_t c = 0; c < 5; ++c) {
    for (int64_t t = 0; t < 37; ++t) x.at(c, t) += 10.0 * double(c);
  }
  const std::vector<double> mean_acov = mean_autocovariance(x.view());
  ASSERT_EQ(mean_acov.size(), 37u);
  std::vector<double> expected(37, 0.0);
  for (int64_t c = 0; c < 5; ++c) {
    const std::vector<double> chain(x.values.begin() + c * 37, x.values.begin() + (c + 1) * 37);
    const std::vector<double> acov = direct_autocovariance(chain);
    for (int t = 0; t < 37; ++t) expected[t] += acov[t] / 5.0;
  }
  for (int t = 0; t < 37; ++t) EXPECT_NEAR(mean_acov[t], expected[t], 1e-13) << t;
}

// ---------------------------------------------------------------------------------------------
// Views, quantiles and ranks

TEST(DiagnosticsDrawsView, QuantityViewAddressesChainDrawQuantityLayout) {
  // 2 chains × 3 draws × 4 quantities; element (c, t, q) = 100c + 10t + q.
  std::vector<double> draws(24);
  for (int c = 0; c < 2; ++c) {
    for (int t = 0; t < 3; ++t) {
      for (int q = 0; q < 4; ++q) draws[(c * 3 + t) * 4 + q] = 100 * c + 10 * t + q;
    }
  }
  const DrawsView v = quantity_view(draws.data(), 2, 3, 4, 2);
  EXPECT_EQ(v.chains, 2);
  EXPECT_EQ(v.draws, 3);
  EXPECT_EQ(v.size(), 6);
  EXPECT_EQ(v(0, 0), 2.0);
  EXPECT_EQ(v(1, 2), 122.0);
  EXPECT_EQ(v(0, 1), 12.0);
  EXPECT_THROW(quantity_view(draws.data(), 2, 3, 4, 4), myriad::invalid_argument);
  EXPECT_THROW(quantity_view(draws.data(), 2, 3, 4, -1), myriad::invalid_argument);
}

TEST(DiagnosticsQuantile, MatchesNumpyType7OnOneToTen) {
  // numpy.quantile(np.arange(1, 11), [0, .05, .5, .95, 1]) = [1, 1.45, 5.5, 9.55, 10]:
  // h = 9p, x_(⌊h⌋) + (h − ⌊h⌋)(x_(⌊h⌋+1) − x_(⌊h⌋)).
  const std::vector<double> values = {7, 3, 10, 1, 5, 2, 9, 4, 8, 6};  // 2 chains × 5 draws
  const RankedDraws ranked(chain_major_view(values.data(), 2, 5));
  ASSERT_TRUE(ranked.sorted_valid());
  EXPECT_NEAR(ranked.quantile(0.0), 1.0, 1e-14);
  EXPECT_NEAR(ranked.quantile(0.05), 1.45, 1e-14);
  EXPECT_NEAR(ranked.quantile(0.5), 5.5, 1e-14);
  EXPECT_NEAR(ranked.quantile(0.95), 9.55, 1e-14);
  EXPECT_NEAR(ranked.quantile(1.0), 10.0, 1e-14);
  EXPECT_TRUE(std::isnan(ranked.quantile(1.5)));

  const VariableSummary s = summarize(chain_major_view(values.data(), 2, 5), "x");
  EXPECT_EQ(s.name, "x");
  EXPECT_NEAR(s.q5, 1.45, 1e-14);
  EXPECT_NEAR(s.q50, 5.5, 1e-14);
  EXPECT_NEAR(s.q95, 9.55, 1e-14);
  EXPECT_NEAR(s.mean, 5.5, 1e-14);
  EXPECT_NEAR(s.sd, std::sqrt(82.5 / 9.0), 1e-14);  // Σ(i − 5.5)² = 82.5, divisor S − 1
}

// z for average rank r among S pooled draws (Blom): Φ⁻¹((r − 3/8)/(S + 1/4)).
double blom(double rank, double pool) { return normal_quantile((rank - 0.375) / (pool + 0.25)); }

TEST(DiagnosticsRanks, TiesGetAverageRanksAndFoldingUsesTheMedian) {
  // One chain of 4 draws splits into (1, 2) and (2, 3). Pooled ranks 1, 2.5, 2.5, 4. The median
  // of the split draws is 2, so |x − 2| = (1, 0, 0, 1) has ranks 3.5, 1.5, 1.5, 3.5.
  const std::vector<double> x = {1.0, 2.0, 2.0, 3.0};
  const RankedDraws ranked(chain_major_view(x.data(), 1, 4));
  ASSERT_TRUE(ranked.valid());
  const DrawsView bulk = ranked.bulk();
  ASSERT_EQ(bulk.chains, 2);
  ASSERT_EQ(bulk.draws, 2);
  EXPECT_NEAR(bulk(0, 0), blom(1.0, 4), 1e-15);
  EXPECT_NEAR(bulk(0, 1), blom(2.5, 4), 1e-15);
  EXPECT_NEAR(bulk(1, 0), blom(2.5, 4), 1e-15);
  EXPECT_NEAR(bulk(1, 1), blom(4.0, 4), 1e-15);
  const DrawsView folded = ranked.folded();
  EXPECT_NEAR(folded(0, 0), blom(3.5, 4), 1e-15);
  EXPECT_NEAR(folded(0, 1), blom(1.5, 4), 1e-15);
  EXPECT_NEAR(folded(1, 0), blom(1.5, 4), 1e-15);
  EXPECT_NEAR(folded(1, 1), blom(3.5, 4), 1e-15);
}

TEST(DiagnosticsRanks, OddChainsDropTheMiddleDrawFromRanksButNotFromQuantiles) {
  // Chain (5, 1, 100, 2, 3): split chains (5, 1) and (2, 3); 100 is not ranked.
  const std::vector<double> x = {5.0, 1.0, 100.0, 2.0, 3.0};
  const RankedDraws ranked(chain_major_view(x.data(), 1, 5));
  ASSERT_TRUE(ranked.valid());
  const DrawsView bulk = ranked.bulk();
  EXPECT_NEAR(bulk(0, 0), blom(4, 4), 1e-15);
  EXPECT_NEAR(bulk(0, 1), blom(1, 4), 1e-15);
  EXPECT_NEAR(bulk(1, 0), blom(2, 4), 1e-15);
  EXPECT_NEAR(bulk(1, 1), blom(3, 4), 1e-15);
  EXPECT_EQ(ranked.quantile(1.0), 100.0);
  const DrawsView trimmed = ranked.trimmed();
  EXPECT_EQ(trimmed.draws, 4);
  EXPECT_EQ(trimmed(0, 2), 2.0);
}

TEST(DiagnosticsRanks, LargePoolWithTiesAndNearTiesMatchesNaiveRanking) {
  // 8 chains × 1001 draws (the radix-sort path): values on a grid of 0.1 (many exact ties),
  // some nudged by one ulp (values that differ only in their last bits), and a few −0.0/+0.0.
  Chains x = iid_normal(8, 1001, 5);
  for (size_t i = 0; i < x.values.size(); ++i) {
    double v = std::round(x.values[i] * 10.0) / 10.0;
    if (i % 7 == 0) v = std::nextafter(v, 10.0);
    if (i % 101 == 0) v = (i % 202 == 0) ? -0.0 : 0.0;
    x.values[i] = v;
  }
  const RankedDraws ranked(x.view());
  ASSERT_TRUE(ranked.valid());

  // Naive ranking of the split draws: sort (value, position), average ranks over ties.
  const int64_t half = 500, split_size = 8 * 2 * half;
  std::vector<std::pair<double, int64_t>> pool;
  for (int64_t c = 0; c < 8; ++c) {
    for (int64_t t = 0; t < half; ++t) {
      pool.emplace_back(x.at(c, t), (2 * c) * half + t);
      pool.emplace_back(x.at(c, 1001 - half + t), (2 * c + 1) * half + t);
    }
  }
  std::sort(pool.begin(), pool.end());
  std::vector<double> expected(split_size);
  for (size_t a = 0; a < pool.size();) {
    size_t b = a;
    while (b < pool.size() && pool[b].first == pool[a].first) ++b;
    const double rank = 0.5 * double(a + 1 + b);  // average of ranks a + 1 … b
    for (size_t p = a; p < b; ++p) expected[pool[p].second] = blom(rank, double(split_size));
    a = b;
  }
  const DrawsView bulk = ranked.bulk();
  for (int64_t s = 0; s < 16; ++s) {
    for (int64_t t = 0; t < half; ++t) {
      ASSERT_NEAR(bulk(s, t), expected[s * half + t], 1e-15) << "split chain " << s << ", " << t;
    }
  }
  EXPECT_TRUE(std::is_sorted(ranked.sorted().begin(), ranked.sorted().end()));
  EXPECT_EQ(ranked.sorted().size(), 8u * 1001u);
}

// ---------------------------------------------------------------------------------------------
// R-hat and ESS on synthetic chains

TEST(DiagnosticsRhat, IidChainsGiveOne) {
  // For iid draws R̂² − 1 ≈ (1/n)(χ²_{m−1}/(m − 1) − 1) with m = 128 split chains of n = 500,
  // so sd(R̂) ≈ sqrt(2/(m − 1))/(2n) ≈ 1.3e-4; 1e-3 is about 8 sd.
  const Chains x = iid_normal(64, 1000, 1);
  EXPECT_NEAR(rhat(x.view()), 1.0, 1e-3);
  EXPECT_NEAR(split_rhat_basic(x.view()), 1.0, 1e-3);
}

TEST(DiagnosticsEss, IidChainsGiveEssNearS) {
  // For iid draws Geyer's sum stops after a few lags; each ρ̂_t has sd ≈ 1/sqrt(S) = 0.4% and
  // τ̂ sums about 2(2k + 1) of them for k ≈ 1–3 pairs, so sd(ESS/S) ≈ 1–2% (1.1% over 40
  // seeds). A 10% band is ≥ 5 sd.
  const Chains x = iid_normal(64, 1000, 2);
  const double draws = 64000.0;
  EXPECT_NEAR(ess_bulk(x.view()) / draws, 1.0, 0.10);
  EXPECT_NEAR(ess_basic(x.view()) / draws, 1.0, 0.10);
  // Tail ESS is looser: it is the minimum of two estimates (biased low by about half an sd),
  // each for a Bernoulli(0.05) indicator at an estimated quantile; 15%.
  EXPECT_NEAR(ess_tail(x.view()) / draws, 1.0, 0.15);
}

TEST(DiagnosticsEss, Ar1ChainsMatchTheoreticalEss) {
  // ESS = S/τ with τ = (1 + φ)/(1 − φ) (3 for φ = 0.5, 19 for φ = 0.9). The relative sd of
  // the estimate is about sqrt(2(2M + 1)/S) for a window of M lags (Sokal 1997), M ≈ 2τ–5τ:
  // ≈ 2% for φ = 0.5 with S = 128000 (10% band ≈ 5 sd) and ≈ 2.5% for φ = 0.9 with
  // S = 256000 (15% band ≈ 6 sd). The φ = 0.9 case needs lags well past the direct-sum
  // block, so it exercises the FFT.
  const Chains half = ar1(32, 4000, 0.5, 3);
  EXPECT_NEAR(ess_basic(half.view()) / (128000.0 * 0.5 / 1.5), 1.0, 0.10);
  const Chains strong = ar1(64, 4000, 0.9, 4);
  EXPECT_NEAR(ess_basic(strong.view()) / (256000.0 * 0.1 / 1.9), 1.0, 0.15);
  // Rank normalisation is monotone and the draws are Gaussian, so the bulk ESS agrees.
  EXPECT_NEAR(ess_bulk(strong.view()) / (256000.0 * 0.1 / 1.9), 1.0, 0.15);
}

TEST(DiagnosticsEss, McseOfIidMeanIsOneOverRootS) {
  // mcse = sd/sqrt(ESS): sd has relative sd 1/sqrt(2S) ≈ 0.3% and sqrt(ESS) about half the
  // ESS's 1–2%, so 5% is > 5 sd.
  const Chains x = iid_normal(64, 1000, 6);
  EXPECT_NEAR(mcse_mean(x.view()) * std::sqrt(64000.0), 1.0, 0.05);
}

TEST(DiagnosticsRhat, ShiftedChainsAreFlagged) {
  // Half of 16 chains offset by one sd: with m = 32 split chains the chain means' variance is
  // 0.25·m/(m − 1), so R̂ ≈ sqrt(1 + 0.258) ≈ 1.12 (sd ≈ 0.004 over seeds).
  Chains x = iid_normal(16, 1000, 7);
  for (int64_t c = 8; c < 16; ++c) {
    for (int64_t t = 0; t < 1000; ++t) x.at(c, t) += 1.0;
  }
  EXPECT_GT(rhat(x.view()), 1.1);
  EXPECT_NEAR(split_rhat_basic(x.view()), std::sqrt(1.0 + 0.25 * 32.0 / 31.0), 0.02);
}

TEST(DiagnosticsRhat, DifferentScalesAreCaughtByTheFoldedPart) {
  // Half of 16 chains with sd 3: the means agree, so split R̂ stays at 1 (sd ≈ 3e-4 over seeds),
  // but |x − median| differs between chains and the folded R̂ is ≈ 1.15.
  Chains x = iid_normal(16, 1000, 8);
  for (int64_t c = 8; c < 16; ++c) {
    for (int64_t t = 0; t < 1000; ++t) x.at(c, t) *= 3.0;
  }
  EXPECT_LT(split_rhat_basic(x.view()), 1.01);
  EXPECT_GT(rhat(x.view()), 1.05);
}

// ---------------------------------------------------------------------------------------------
// Nested R-hat

TEST(DiagnosticsNestedRhat, HandComputedExample) {
  // K = 2 superchains of M = 2 chains, N = 2 draws. Chain means 1, 3 | 2, 6, within-chain
  // variances all 2. B̃ = 2 and 8, W̃ = 2 and 2, superchain means 2 and 4:
  // B̂_ν = 2, Ŵ_ν = (4 + 10)/2 = 7, nR̂ = sqrt(1 + 2/7).
  const std::vector<double> x = {0, 2, 2, 4, 1, 3, 5, 7};
  EXPECT_NEAR(nested_rhat(chain_major_view(x.data(), 4, 2), 2), std::sqrt(9.0 / 7.0), 1e-15);
  // N = 1: W̃_k = 0. Chain means 0, 2 | 1, 5: B̃ = 2, 8; B̂_ν = (1 − 2)² + (3 − 2)² = 2.
  const std::vector<double> single = {0, 2, 1, 5};
  EXPECT_NEAR(nested_rhat(chain_major_view(single.data(), 4, 1), 2), std::sqrt(1.0 + 2.0 / 5.0),
              1e-15);
}

TEST(DiagnosticsNestedRhat, OneChainPerSuperchainReducesToRhat) {
  // M = 1: B̃_k = 0 and Ŵ_ν = W, B̂_ν = B/n, so nR̂² = B/(nW) + 1 = R̂² + 1/n with R̂ the
  // unsplit potential scale reduction.
  const Chains x = iid_normal(8, 50, 9);
  const double r = potential_scale_reduction(x.view());
  EXPECT_NEAR(nested_rhat(x.view(), 8), std::sqrt(r * r + 1.0 / 50.0), 1e-13);
}

TEST(DiagnosticsNestedRhat, ManyShortIidChainsGiveOne) {
  // K = 16 superchains of M = 64 chains of N = 10 draws: B̂_ν ≈ χ²_{K−1}/(K − 1)/(MN) and
  // Ŵ_ν ≈ 1, so nR̂ − 1 ≈ 1/(2MN) = 7.8e-4 with sd ≈ 7.8e-4·sqrt(2/15) = 2.9e-4. A band of
  // 1.5e-3 around 1/(2MN) is about 5 sd.
  const Chains x = iid_normal(1024, 10, 10);
  EXPECT_NEAR(nested_rhat(x.view(), 16) - 1.0, 1.0 / 1280.0, 1.5e-3);
}

TEST(DiagnosticsNestedRhat, SuperchainsWithDifferentMeansGiveLargeValues) {
  // Superchain k offset by k/2: B̂_ν ≈ var(0, 0.5, …, 3.5) = 1.5, so nR̂ ≈ sqrt(2.5) ≈ 1.58.
  Chains x = iid_normal(256, 10, 11);
  for (int64_t c = 0; c < 256; ++c) {
    for (int64_t t = 0; t < 10; ++t) x.at(c, t) += 0.5 * double(c / 32);
  }
  EXPECT_GT(nested_rhat(x.view(), 8), 1.5);
}

TEST(DiagnosticsNestedRhat, RejectsBadSuperchainCounts) {
  const Chains x = iid_normal(10, 5, 12);
  EXPECT_THROW(nested_rhat(x.view(), 3), myriad::invalid_argument);   // 10 % 3 ≠ 0
  EXPECT_THROW(nested_rhat(x.view(), 1), myriad::invalid_argument);   // needs K ≥ 2
  EXPECT_THROW(nested_rhat(x.view(), 20), myriad::invalid_argument);  // more than chains
  EXPECT_NO_THROW(nested_rhat(x.view(), 5));
}

// ---------------------------------------------------------------------------------------------
// Degenerate input

TEST(DiagnosticsDegenerate, ConstantDrawsGiveNanWithoutCrashing) {
  const std::vector<double> x(4 * 100, 2.5);
  const DrawsView v = chain_major_view(x.data(), 4, 100);
  EXPECT_TRUE(std::isnan(rhat(v)));
  EXPECT_TRUE(std::isnan(split_rhat_basic(v)));
  EXPECT_TRUE(std::isnan(ess_bulk(v)));
  EXPECT_TRUE(std::isnan(ess_tail(v)));
  EXPECT_TRUE(std::isnan(ess_basic(v)));
  EXPECT_TRUE(std::isnan(mcse_mean(v)));
  EXPECT_TRUE(std::isnan(effective_sample_size(v)));
  EXPECT_TRUE(std::isnan(nested_rhat(v, 2)));
  const VariableSummary s = summarize(v, "c");
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_EQ(s.sd, 0.0);
  EXPECT_EQ(s.q5, 2.5);
  EXPECT_EQ(s.q95, 2.5);
  EXPECT_TRUE(std::isnan(s.rhat));
  EXPECT_TRUE(std::isnan(s.ess_bulk));
  EXPECT_TRUE(std::isnan(s.ess_tail));
  EXPECT_TRUE(std::isnan(s.mcse_mean));
}

TEST(DiagnosticsDegenerate, ShortChainsEmptyViewsAndNonFiniteDrawsGiveNan) {
  const Chains short_chains = iid_normal(4, 3, 13);
  EXPECT_TRUE(std::isnan(rhat(short_chains.view())));
  EXPECT_TRUE(std::isnan(ess_bulk(short_chains.view())));
  EXPECT_TRUE(std::isnan(ess_tail(short_chains.view())));
  EXPECT_TRUE(std::isnan(mcse_mean(short_chains.view())));
  EXPECT_TRUE(std::isnan(summarize(short_chains.view(), "s").rhat));

  EXPECT_TRUE(std::isnan(rhat(DrawsView{})));
  EXPECT_TRUE(std::isnan(ess_basic(DrawsView{})));
  EXPECT_TRUE(std::isnan(summarize(DrawsView{}, "e").mean));

  Chains x = iid_normal(4, 100, 14);
  x.at(2, 50) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(rhat(x.view())));
  EXPECT_TRUE(std::isnan(ess_bulk(x.view())));
  EXPECT_TRUE(std::isnan(summarize(x.view(), "n").q50));
  x.at(2, 50) = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isnan(split_rhat_basic(x.view())));
  EXPECT_TRUE(std::isnan(ess_tail(x.view())));
}

// ---------------------------------------------------------------------------------------------
// Summary

TEST(DiagnosticsSummary, AgreesWithTheSeparateFunctions) {
  const Chains x = ar1(6, 301, 0.7, 15);  // odd draws: middle draws dropped from the split
  const DrawsView v = x.view();
  const VariableSummary s = summarize(v, "theta");
  EXPECT_DOUBLE_EQ(s.rhat, rhat(v));
  EXPECT_DOUBLE_EQ(s.ess_bulk, ess_bulk(v));
  EXPECT_DOUBLE_EQ(s.ess_tail, ess_tail(v));
  EXPECT_NEAR(s.mcse_mean, mcse_mean(v), 1e-12 * s.mcse_mean);
  EXPECT_NEAR(s.mean, std::accumulate(x.values.begin(), x.values.end(), 0.0) / 1806.0, 1e-13);
}

TEST(DiagnosticsSummary, SummarizeAllMatchesPerQuantitySummaries) {
  // 8 chains × 200 draws × 5 quantities, quantity q scaled by q + 1.
  const int64_t chains = 8, draws = 200, quantities = 5;
  const Chains base = ar1(chains * quantities, draws, 0.3, 16);
  std::vector<double> array(chains * draws * quantities);
  for (int64_t c = 0; c < chains; ++c) {
    for (int64_t t = 0; t < draws; ++t) {
      for (int64_t q = 0; q < quantities; ++q) {
        array[(c * draws + t) * quantities + q] =
            double(q + 1) * base.values[(q * chains + c) * draws + t];
      }
    }
  }
  const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  const std::vector<VariableSummary> all =
      summarize_all(array.data(), chains, draws, quantities, names);
  ASSERT_EQ(all.size(), 5u);
  for (int64_t q = 0; q < quantities; ++q) {
    const VariableSummary one =
        summarize(quantity_view(array.data(), chains, draws, quantities, q), names[q]);
    EXPECT_EQ(all[q].name, names[q]);
    EXPECT_DOUBLE_EQ(all[q].mean, one.mean);
    EXPECT_DOUBLE_EQ(all[q].sd, one.sd);
    EXPECT_DOUBLE_EQ(all[q].q50, one.q50);
    EXPECT_DOUBLE_EQ(all[q].rhat, one.rhat);
    EXPECT_DOUBLE_EQ(all[q].ess_bulk, one.ess_bulk);
    EXPECT_DOUBLE_EQ(all[q].ess_tail, one.ess_tail);
    EXPECT_DOUBLE_EQ(all[q].mcse_mean, one.mcse_mean);
  }
  EXPECT_EQ(summarize_all(array.data(), chains, draws, quantities, {})[3].name, "q3");
  EXPECT_THROW(summarize_all(array.data(), chains, draws, quantities, {"a"}),
               myriad::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Agreement with ArviZ

// The deterministic draws of tests/unit/data/diagnostics_arviz_reference.py: splitmix64
// uniforms scaled to unit variance driving an AR(1) with φ = 0.95, 4 chains × 301 draws.
Chains splitmix_ar1() {
  uint64_t state = 2024;
  auto uniform = [&state] {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return double(z >> 11) * 0x1.0p-53;
  };
  Chains x{4, 301, std::vector<double>(4 * 301)};
  const double phi = 0.95, innovation = std::sqrt(1.0 - phi * phi), scale = std::sqrt(12.0);
  for (int64_t c = 0; c < 4; ++c) {
    double previous = 0.0;
    for (int64_t t = 0; t < 301; ++t) {
      const double e = (uniform() - 0.5) * scale;
      previous = t == 0 ? e : phi * previous + innovation * e;
      x.at(c, t) = previous;
    }
  }
  return x;
}

void expect_relative(double actual, double expected, const char* what) {
  EXPECT_NEAR(actual, expected, 1e-10 * std::fabs(expected)) << what;
}

/// The diagnostics of one set of chains as arviz 0.23.4 reports them.
struct ArvizDiagnostics {
  double rhat, split_rhat_basic, ess_bulk, ess_tail, ess_basic, mcse_mean;
};

/// Each diagnostic within 1e-10 relative of arviz's.
void expect_matches_arviz(const DrawsView& v, const ArvizDiagnostics& arviz) {
  expect_relative(rhat(v), arviz.rhat, "rhat");
  expect_relative(split_rhat_basic(v), arviz.split_rhat_basic, "split_rhat_basic");
  expect_relative(ess_bulk(v), arviz.ess_bulk, "ess_bulk");
  expect_relative(ess_tail(v), arviz.ess_tail, "ess_tail");
  expect_relative(ess_basic(v), arviz.ess_basic, "ess_basic");
  expect_relative(mcse_mean(v), arviz.mcse_mean, "mcse_mean");
}

TEST(DiagnosticsArviz, MatchesArvizOnAnAutocorrelatedChain) {
  // Reference values printed by the script (arviz 0.23.4).
  const Chains x = splitmix_ar1();
  const DrawsView v = x.view();
  expect_matches_arviz(v, {1.1470603857808939, 1.1502779018057303, 23.87001032460753,
                           82.13444238662369, 23.29119123929837, 0.1912415834618775});
  const VariableSummary s = summarize(v, "x");
  expect_relative(s.q5, -1.2424674789556565, "q5");
  expect_relative(s.q95, 1.7180558265843262, "q95");
}

TEST(DiagnosticsArviz, MatchesArvizWithManyTies) {
  Chains x = splitmix_ar1();
  for (double& v : x.values) v = std::round(v * 4.0) / 4.0;  // numpy rounds half to even;
  const DrawsView v = x.view();                              // no draw is at a half step
  expect_matches_arviz(v, {1.146836573588275, 1.149624648003735, 23.81095283169835,
                           65.05098716472523, 23.28234349326801, 0.1918754895972753});
}

}  // namespace
}  // namespace myriad::diag
