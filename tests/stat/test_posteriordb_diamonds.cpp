// The port of posteriordb's diamonds-diamonds (tests/common/posteriordb_diamonds.hpp) against
// Stan's reference draws without sampling. Given σ, b's posterior is exactly normal: the design's
// columns are centred, so the likelihood does not couple b with the Intercept, and b's prior is
// N(0, I), so
//
//   b | σ, y ~ N(m(σ), A(σ)⁻¹),   A(σ) = XcᵀXc/σ² + I,   m(σ) = A(σ)⁻¹ Xcᵀy/σ²,
//
// and the Intercept's posterior given σ is N(ȳ, σ²/N) times its Student-t(3, 8, 10) prior, whose
// pull at that scale (σ/√N ≈ 0.0017 against a prior scale of 10) is of order 1e-8. σ is known to
// 1% (the reference's sd), so m and A⁻¹ at the reference's σ reproduce the reference's means and
// sds within its Monte Carlo error, once Var m(σ) is added to the variance and the second-order
// (Jensen) terms of σ's uncertainty are allowed for. This checks the data, the centring and the
// order of the coefficients, independently of any sampler.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/posteriordb_diamonds.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"
#include "posteriordb.hpp"

namespace myriad {
namespace {

constexpr const char* kPosterior = "diamonds-diamonds";

/// m(σ) and the diagonal of A(σ)⁻¹ for the K − 1 coefficients b (the header comment).
struct ConditionalPosterior {
  std::vector<double> mean, variance;
};

ConditionalPosterior conditional_posterior(const models::LinearRegression<double>& model,
                                           double sigma) {
  const int kb = model.k - 1;  // the last column is the Intercept's ones
  std::vector<double> a(static_cast<std::size_t>(kb) * kb, 0.0), rhs(kb, 0.0);
  for (int i = 0; i < model.n; ++i) {
    const double* row = model.x + static_cast<std::int64_t>(i) * model.k;
    for (int r = 0; r < kb; ++r) {
      rhs[r] += row[r] * model.y[i];
      for (int c = 0; c <= r; ++c) a[r * kb + c] += row[r] * row[c];
    }
  }
  const double inv_var = 1 / (sigma * sigma);
  for (int r = 0; r < kb; ++r) {
    rhs[r] *= inv_var;
    for (int c = 0; c <= r; ++c) a[r * kb + c] *= inv_var;
    a[r * kb + r] += 1;  // the N(0, 1) prior's precision
  }
  const auto l = dense_matrix(a.data(), kb, kb);
  EXPECT_TRUE(linalg::cholesky_in_place(l));
  ConditionalPosterior post;
  post.mean = rhs;
  linalg::cholesky_solve(l, post.mean);
  for (int j = 0; j < kb; ++j) {
    std::vector<double> e(kb, 0.0);
    e[j] = 1;
    linalg::solve_lower(l, e);  // (A⁻¹)_jj = ‖L⁻¹ e_j‖²
    double sum = 0;
    for (double v : e) sum += v * v;
    post.variance.push_back(sum);
  }
  return post;
}

TEST(StatPosteriordbDiamonds, LoaderCentresTheDesignAndNamesAsTheReference) {
  const auto data =
      testing::diamonds_regression(testing::posteriordb_path(kPosterior, "data.json"));
  const auto model = data.host_model();
  ASSERT_EQ(model.n, 5000);
  ASSERT_EQ(model.k, 25);
  // Every column but the last centred (to rounding of sums of 5000 values of order 10), the last
  // the Intercept's ones.
  for (int j = 0; j < model.k; ++j) {
    double sum = 0, abs_sum = 0;
    for (int i = 0; i < model.n; ++i) {
      sum += model.x[i * model.k + j];
      abs_sum += std::fabs(model.x[i * model.k + j]);
    }
    if (j + 1 < model.k) {
      EXPECT_LE(std::fabs(sum), 1e-12 * abs_sum + 1e-300) << "column " << j;
    } else {
      EXPECT_EQ(sum, model.n);
    }
  }
  // The recorded quantities are the reference's variables, in Stan's order.
  const auto reference = testing::posteriordb_reference(kPosterior);
  ASSERT_EQ(reference.size(), static_cast<std::size_t>(model.num_quantities()));
  for (int q = 0; q < model.num_quantities(); ++q)
    EXPECT_EQ(reference.count(model.quantity_name(q)), 1u) << model.quantity_name(q);
  EXPECT_EQ(model.quantity_name(0), "b[1]");
  EXPECT_EQ(model.quantity_name(24), "Intercept");
  EXPECT_EQ(model.quantity_name(25), "sigma");
}

TEST(StatPosteriordbDiamonds, ConditionalPosteriorReproducesTheReference) {
  const auto data =
      testing::diamonds_regression(testing::posteriordb_path(kPosterior, "data.json"));
  const auto model = data.host_model();
  const auto reference = testing::posteriordb_reference(kPosterior);
  const testing::ReferenceSummary sigma = reference.at("sigma");
  const ConditionalPosterior at = conditional_posterior(model, sigma.mean);
  const ConditionalPosterior below = conditional_posterior(model, sigma.mean - sigma.sd);
  const ConditionalPosterior above = conditional_posterior(model, sigma.mean + sigma.sd);
  constexpr double z = 5;
  // Over σ's posterior (mean s̄, sd s), E f(σ) = f(s̄) + ½ f''(s̄) s² + …, and the central second
  // difference ½ |f(s̄ + s) + f(s̄ − s) − 2 f(s̄)| estimates that Jensen term: the closed form at
  // σ's mean may differ from the marginal moment by it. The marginal variance is E A⁻¹ + Var m(σ),
  // Var m(σ) ≈ (m'(s̄) s)² ≈ ((m(s̄ + s) − m(s̄ − s))/2)².
  const auto jensen = [](double above_value, double below_value, double at_value) {
    return std::fabs(above_value + below_value - 2 * at_value) / 2;
  };
  double worst_mean_z = 0, worst_variance_z = 0, worst_jensen = 0;
  for (int j = 0; j + 1 < model.k; ++j) {
    const std::string name = "b[" + std::to_string(j + 1) + "]";
    const testing::ReferenceSummary ref = reference.at(name);
    const double mean_bias = jensen(above.mean[j], below.mean[j], at.mean[j]);
    EXPECT_LE(std::fabs(at.mean[j] - ref.mean), z * ref.mcse_mean + mean_bias)
        << name << ": closed form " << at.mean[j] << ", reference " << ref.mean;
    const double mean_slope = (above.mean[j] - below.mean[j]) / 2;
    const double variance = at.variance[j] + mean_slope * mean_slope;
    const double variance_bias = jensen(above.variance[j], below.variance[j], at.variance[j]);
    // The reference variance's standard error from its ESS, as in expect_agrees_with_reference.
    const double ref_ess = (ref.sd / ref.mcse_mean) * (ref.sd / ref.mcse_mean);
    const double ref_variance_se = ref.sd * ref.sd * std::sqrt(2.0 / ref_ess);
    EXPECT_LE(std::fabs(variance - ref.sd * ref.sd), z * ref_variance_se + variance_bias)
        << name << ": closed-form sd " << std::sqrt(variance) << ", reference " << ref.sd;
    worst_mean_z = std::max(worst_mean_z, std::fabs(at.mean[j] - ref.mean) / ref.mcse_mean);
    worst_variance_z =
        std::max(worst_variance_z, std::fabs(variance - ref.sd * ref.sd) / ref_variance_se);
    worst_jensen =
        std::max({worst_jensen, mean_bias / ref.mcse_mean, variance_bias / ref_variance_se});
  }
  std::printf(
      "    b: worst |m - mean_ref| / mcse_ref = %.2f, worst |var - sd_ref^2| / se_ref = %.2f, "
      "largest Jensen term / reference se = %.3f\n",
      worst_mean_z, worst_variance_z, worst_jensen);
  // The Intercept: ȳ and σ/√N.
  double y_mean = 0;
  for (int i = 0; i < model.n; ++i) y_mean += model.y[i];
  y_mean /= model.n;
  const testing::ReferenceSummary intercept = reference.at("Intercept");
  EXPECT_LE(std::fabs(y_mean - intercept.mean), z * intercept.mcse_mean);
  const double ref_ess =
      (intercept.sd / intercept.mcse_mean) * (intercept.sd / intercept.mcse_mean);
  const double intercept_sd = sigma.mean / std::sqrt(model.n);
  EXPECT_LE(std::fabs(intercept_sd * intercept_sd - intercept.sd * intercept.sd),
            z * intercept.sd * intercept.sd * std::sqrt(2.0 / ref_ess) +
                2 * intercept_sd * intercept_sd * sigma.sd / sigma.mean);
}

}  // namespace
}  // namespace myriad
