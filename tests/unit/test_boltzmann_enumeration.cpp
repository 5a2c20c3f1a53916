// The streamed enumeration of a Boltzmann machine's exact moments
// (models/boltzmann_enumeration.hpp) against independent computations: the relaxation's own
// enumeration with its table of probabilities (models/boltzmann_relaxation.hpp) for log Z_B, E[s],
// E[ssᵀ] (from the table's probabilities) and E[x]; Cov[x] against the covariance of exact draws x
// = Qᵀs + z.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/expect_error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/models/boltzmann_block.hpp"
#include "myriad/models/boltzmann_enumeration.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"

namespace myriad {
namespace {

using models::BoltzmannRelaxationData;

/// E[s_i s_k] from the relaxation's table of cumulative state probabilities.
std::vector<double> second_moments_from_table(const BoltzmannRelaxationData<double>& data) {
  const int n = data.units();
  const std::vector<double>& cdf = data.state_cdf();
  std::vector<double> second(static_cast<std::size_t>(n) * n, 0.0);
  for (std::size_t k = 0; k < cdf.size(); ++k) {
    const double p = cdf[k] - (k ? cdf[k - 1] : 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        second[static_cast<std::size_t>(i) * n + j] += ((((k >> i) ^ (k >> j)) & 1) ? -p : p);
  }
  return second;
}

// n = 12 fits one block (l = 14); n = 17 spreads over 2^3 blocks of 2^14, so the blocks' merge
// and the high units' sums are exercised.
TEST(BoltzmannEnumeration, MatchesTheTabulatedEnumerationInOneBlockAndAcrossBlocks) {
  for (const int n : {12, 17}) {
    const auto data = BoltzmannRelaxationData<double>::synthetic(n);
    const models::BoltzmannExactMoments m =
        models::boltzmann_exact_moments(data.coupling(), data.bias());
    EXPECT_NEAR(m.log_z, data.log_z_boltzmann(), 1e-11 * std::fabs(data.log_z_boltzmann()));
    const std::vector<double> second = second_moments_from_table(data);
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(m.mean[i], data.mean_s()[i], 1e-11) << "n " << n << " unit " << i;
      for (int j = 0; j < n; ++j)
        EXPECT_NEAR(m.second[static_cast<std::size_t>(i) * n + j],
                    second[static_cast<std::size_t>(i) * n + j], 1e-10)
            << "n " << n << " (" << i << ", " << j << ")";
    }
    const models::RelaxationMoments x = models::relaxation_moments(m, data.factor(), n);
    for (int a = 0; a < n; ++a) EXPECT_NEAR(x.mean[a], data.mean_x()[a], 1e-10) << a;
  }
}

// The GPU path's two halves on the CPU: every block of kBoltzmannGpuLowUnits low units through the
// shared block body (models/boltzmann_block.hpp), laid out [value][block] as the kernel writes
// them (kernels/boltzmann_enumeration.cu), then merged by boltzmann_moments_from_blocks — against
// the CPU path's blocks of 14, to rounding.
TEST(BoltzmannEnumeration, TheGpuPathsBlocksMergeToTheSameMoments) {
  constexpr int l = models::kBoltzmannGpuLowUnits;
  for (const int n : {11, 17}) {
    const auto data = BoltzmannRelaxationData<double>::synthetic(n, 7);
    const std::vector<double>& w = data.coupling();
    const std::vector<double>& b = data.bias();
    const std::int64_t blocks = std::int64_t{1} << (n - l);
    const int per_block = models::boltzmann_block_sum_count(l);
    std::vector<double> sums(static_cast<std::size_t>(blocks) * per_block);
    std::vector<double> s(n), field(l), first(l), second(l * (l + 1) / 2);
    for (std::int64_t high = 0; high < blocks; ++high) {
      const models::BoltzmannBlockTotals t = models::enumerate_boltzmann_block(
          w.data(), b.data(), n, l, high, s.data(), field.data(), first.data(), second.data());
      std::vector<double> values{t.bound, t.total};
      values.insert(values.end(), first.begin(), first.end());
      values.insert(values.end(), second.begin(), second.end());
      for (int q = 0; q < per_block; ++q)
        sums[static_cast<std::size_t>(q) * blocks + high] = values[q];
    }
    const auto merged = models::boltzmann_moments_from_blocks(w, b, l, sums);
    const auto direct = models::boltzmann_exact_moments(w, b);
    EXPECT_NEAR(merged.log_z, direct.log_z, 1e-12 * std::fabs(direct.log_z)) << n;
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(merged.mean[i], direct.mean[i], 1e-12) << "n " << n << " unit " << i;
      for (int j = 0; j < n; ++j)
        EXPECT_NEAR(merged.second[static_cast<std::size_t>(i) * n + j],
                    direct.second[static_cast<std::size_t>(i) * n + j], 1e-12)
            << "n " << n << " (" << i << ", " << j << ")";
    }
  }
  // Block sums of the wrong size are refused.
  const auto data = BoltzmannRelaxationData<double>::synthetic(11, 7);
  testing::expect_invalid_argument(
      [&] { models::boltzmann_moments_from_blocks(data.coupling(), data.bias(), l, {1.0}); },
      "block sums, expected");
}

// Cov[x] = Qᵀ Cov[s] Q + I against the sample covariance of 40000 exact draws, entry by entry
// within 5 standard errors (the SE of a sample covariance, sd(x_a x_c − …)/√N, estimated from the
// draws themselves).
TEST(BoltzmannEnumeration, RelaxationCovarianceMatchesExactDraws) {
  constexpr int kDraws = 40000;
  const int n = 8;
  const auto data = BoltzmannRelaxationData<double>::synthetic(n);
  const models::RelaxationMoments exact = models::relaxation_moments(
      models::boltzmann_exact_moments(data.coupling(), data.bias()), data.factor(), n);
  const auto model = data.host_model();
  const RandomStream rng(17, 0);
  std::vector<double> draws(static_cast<std::size_t>(kDraws) * n);
  for (int d = 0; d < kDraws; ++d) {
    double* x = draws.data() + static_cast<std::size_t>(d) * n;
    model.exact_sample(0, rng, static_cast<std::uint32_t>(d), x);
  }
  for (int a = 0; a < n; ++a) {
    for (int c = 0; c <= a; ++c) {
      double sum = 0, sum_sq = 0;
      for (int d = 0; d < kDraws; ++d) {
        const double* x = draws.data() + static_cast<std::size_t>(d) * n;
        const double v = (x[a] - exact.mean[a]) * (x[c] - exact.mean[c]);
        sum += v;
        sum_sq += v * v;
      }
      const double mean = sum / kDraws;
      const double se = std::sqrt((sum_sq / kDraws - mean * mean) / (kDraws - 1));
      EXPECT_NEAR(mean, exact.covariance[static_cast<std::size_t>(a) * n + c], 5 * se)
          << "(" << a << ", " << c << ")";
    }
  }
}

TEST(BoltzmannEnumeration, RefusesWhatIsNotAMachine) {
  using testing::expect_invalid_argument;
  expect_invalid_argument([] { models::boltzmann_exact_moments({}, {}); }, "units must lie");
  expect_invalid_argument(
      [] {
        models::boltzmann_exact_moments({0, 1, 2, 0}, {0, 0});
      },
      "symmetric");
  expect_invalid_argument(
      [] {
        models::boltzmann_exact_moments({1, 0, 0, 0}, {0, 0});
      },
      "must be 0");
}

}  // namespace
}  // namespace myriad
