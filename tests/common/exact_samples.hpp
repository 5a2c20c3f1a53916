#pragma once
// Exact samples of an annealing target (estimate/annealing_target.hpp: exact_sample) and their
// moments against a Gaussian's, each within kSigmas standard errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "myriad/core/random.hpp"

namespace myriad::testing {

/// Statistical checks pass within this many standard errors.
inline constexpr double kSigmas = 5;

/// The seed of the exact-sample streams.
inline constexpr std::uint64_t kExactSampleSeed = 77;

/// `draws` exact samples of problem p (target_has_exact_sample), one row each (draw index = row),
/// from RandomStream(seed, p).
template <class Model>
std::vector<std::vector<double>> exact_draws(const Model& model, int p, int dim, int draws,
                                             std::uint64_t seed = kExactSampleSeed) {
  const RandomStream rng(seed, static_cast<std::uint64_t>(p));
  std::vector<std::vector<double>> out(draws, std::vector<double>(dim));
  for (int d = 0; d < draws; ++d) model.exact_sample(p, rng, static_cast<std::uint32_t>(d), out[d]);
  return out;
}

/// Sample mean and covariance (about the true mean μ) against a Gaussian N(μ, Σ): the mean's
/// standard error is √(Σ_ii/N) and that of (1/N) Σ (x_i − μ_i)(x_j − μ_j) is
/// √((Σ_ii Σ_jj + Σ_ij²)/N) (Isserlis). Returns the largest |error| / standard error.
inline double expect_gaussian_moments(const std::vector<std::vector<double>>& draws,
                                      const std::vector<double>& mean,
                                      const std::vector<double>& cov) {
  const int n = static_cast<int>(draws.size());
  const int dim = static_cast<int>(mean.size());
  double worst = 0;
  for (int i = 0; i < dim; ++i) {
    double sum = 0;
    for (const auto& x : draws) sum += x[i];
    const double se = std::sqrt(cov[i * dim + i] / n);
    const double z = (sum / n - mean[i]) / se;
    EXPECT_LT(std::fabs(z), kSigmas) << "mean " << i;
    worst = std::max(worst, std::fabs(z));
    for (int j = 0; j <= i; ++j) {
      double product = 0;
      for (const auto& x : draws) product += (x[i] - mean[i]) * (x[j] - mean[j]);
      const double s_ij = cov[i * dim + j];
      const double se_ij = std::sqrt((cov[i * dim + i] * cov[j * dim + j] + s_ij * s_ij) / n);
      const double z_ij = (product / n - s_ij) / se_ij;
      EXPECT_LT(std::fabs(z_ij), kSigmas) << "covariance " << i << ", " << j;
      worst = std::max(worst, std::fabs(z_ij));
    }
  }
  return worst;
}

}  // namespace myriad::testing
