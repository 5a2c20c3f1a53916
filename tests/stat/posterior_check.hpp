#pragma once
// Helpers for statistical tests: compare estimated posterior moments with exact values within a
// multiple of the Monte Carlo standard error, with the MCSE derived from the ESS of the draws.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "myriad/diag/draws_view.hpp"
#include "myriad/diag/ess.hpp"
#include "myriad/run/sample_config.hpp"

namespace myriad::testing {

/// Index of a recorded quantity by name.
inline int quantity_index(const SampleResult& result, const std::string& name) {
  for (std::size_t q = 0; q < result.names.size(); ++q)
    if (result.names[q] == name) return static_cast<int>(q);
  ADD_FAILURE() << "no quantity named " << name;
  return 0;
}

/// Draws of f(quantity q) as a [chain][draw] array.
template <class F>
std::vector<double> transformed_draws(const SampleResult& result, int q, F f) {
  const std::int64_t n = result.chains * result.kept_draws;
  const std::int64_t stride = static_cast<std::int64_t>(result.names.size());
  std::vector<double> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out[i] = f(result.draws_data[i * stride + q]);
  return out;
}

struct MomentCheck {
  double estimate;
  double mcse;
};

/// Mean of f(quantity q) with its MCSE, sd/√ESS (ESS of the transformed draws).
template <class F>
MomentCheck mean_of(const SampleResult& result, int q, F f) {
  const std::vector<double> values = transformed_draws(result, q, f);
  const diag::DrawsView view{values.data(), result.chains, result.kept_draws, result.kept_draws, 1};
  double sum = 0;
  for (double v : values) sum += v;
  return {sum / static_cast<double>(values.size()), diag::mcse_mean(view)};
}

/// Expects |estimate − exact| ≤ k·MCSE (k = 5: a false alarm has probability ~6e-7 per check
/// under normality of the estimator).
inline void expect_within_mcse(const MomentCheck& check, double exact, const std::string& what,
                               double k = 5.0) {
  EXPECT_TRUE(std::isfinite(check.mcse) && check.mcse > 0) << what << ": MCSE " << check.mcse;
  EXPECT_LE(std::abs(check.estimate - exact), k * check.mcse)
      << what << ": estimate " << check.estimate << ", exact " << exact << ", MCSE " << check.mcse;
}

/// Quantity q's mean and variance within 5 MCSE of `mean` and sd² (the variance as the mean of
/// (x − mean)², with that quantity's own MCSE), and its R-hat below 1.01.
inline void expect_marginal_moments(const SampleResult& result, int q, double mean, double sd) {
  const std::string name = result.names[q];
  expect_within_mcse(mean_of(result, q, [](double x) { return x; }), mean, name + " mean");
  expect_within_mcse(mean_of(result, q, [&](double x) { return (x - mean) * (x - mean); }), sd * sd,
                     name + " variance");
  EXPECT_LT(result.summary[q].rhat, 1.01) << name;
}

}  // namespace myriad::testing
