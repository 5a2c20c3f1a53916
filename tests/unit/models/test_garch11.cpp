// Tests of `garch11` (include/myriad/models/garch11.hpp) on posteriordb's garch-garch11 data: the
// log density against Stan's model block written out directly with <cmath> (σ_t by Stan's sqrt
// recursion, plus the Jacobians of α_0 = e^a, α_1 = σ(b) and β_1 = (1 − α_1) σ(c) written as
// derivatives of the maps), its gradient by forward-mode duals against central finite
// differences, the recorded quantities against reference.csv's variables, and the validation of
// the data.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/expect_error.hpp"
#include "common/log_densities.hpp"
#include "common/posteriordb_port_checks.hpp"
#include "common/recorded_quantities.hpp"
#include "myriad/models/garch11.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "garch-garch11";

/// posteriordb's data, by data.json's names: T, y and sigma1.
struct Series {
  int T = 0;
  std::vector<double> y;
  double sigma1 = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Series, T, y, sigma1)

/// The constrained parameters (μ, α_0, α_1, β_1) of x = (μ, a, b, c); 1 − α_1 is σ(−b), which
/// Stan's 1 − alpha1 equals in exact arithmetic.
std::vector<double> constrained(const std::vector<double>& x) {
  const double alpha1 = sigmoid(x[2]), upper = sigmoid(-x[2]);
  return {x[0], std::exp(x[1]), alpha1, upper * sigmoid(x[3])};
}

/// Stan's model block of garch11 written out plainly, plus the log-Jacobian of the transforms:
/// dα_0/da = α_0, dα_1/db = α_1 (1 − α_1), dβ_1/dc = (1 − α_1) s (1 − s) with s = σ(c). Beside
/// σ_t² it carries a running bound on its rounding error (Higham §3.3): the recursion adds
/// positive terms, each rounded a few times, and carries β_1 times the previous bound; σ_t's
/// relative error reaches the normal's terms through add_normal's sd_error.
RoundedSum direct_log_density(const Series& s, const std::vector<double>& x) {
  const std::vector<double> p = constrained(x);
  const double mu = p[0], alpha0 = p[1], alpha1 = p[2], beta1 = p[3];
  // 1 − α_1 and 1 − s as σ(−b) and σ(−c): 1 − σ(u) would keep few digits where σ(u) → 1.
  const double one_minus_alpha1 = sigmoid(-x[2]);
  const double share = sigmoid(x[3]), one_minus_share = sigmoid(-x[3]);
  RoundedSum lp;
  std::vector<double> sigma(s.T), var_error(s.T);
  sigma[0] = s.sigma1;
  var_error[0] = 2 * s.sigma1 * s.sigma1;
  for (int t = 1; t < s.T; ++t) {
    const double r = s.y[t - 1] - mu;
    sigma[t] = std::sqrt(alpha0 + alpha1 * (r * r) + beta1 * (sigma[t - 1] * sigma[t - 1]));
    var_error[t] = 4 * (alpha0 + alpha1 * r * r + beta1 * sigma[t - 1] * sigma[t - 1]) +
                   2 * alpha1 * std::fabs(r) * (std::fabs(s.y[t - 1]) + std::fabs(mu)) +
                   beta1 * var_error[t - 1];
  }
  for (int t = 0; t < s.T; ++t) {
    // Relative error of σ_t: half that of σ_t², and the sqrt's own rounding.
    const double sd_error = 0.5 * var_error[t] / (sigma[t] * sigma[t]) + 1;
    add_normal(lp, s.y[t], mu, sigma[t], 0, sd_error);
  }
  lp.add(std::log(alpha0));
  lp.add(std::log(alpha1 * one_minus_alpha1), std::fabs(x[2]));
  lp.add(std::log(one_minus_alpha1 * share * one_minus_share), std::fabs(x[2]) + std::fabs(x[3]));
  return lp;
}

/// Points 0–3 within 3 posterior sds of the reference means (unconstrained, by the delta method
/// through each transform), 4–5 in Stan's default start region (μ far from the data's mean 5),
/// and four far but finite ones: α_1 → 1 (b = 30, where Stan's 1 − alpha1 keeps only 3 digits)
/// with β_1/(1 − α_1) → 0, α_1 → 0 with β_1 → 1, a tiny α_0 with μ far off, and a large α_0.
const PortPoints garch_point{20261203,
                             {5.05, 0.386, 0.27, 0.74},
                             {0.124, 0.39, 0.52, 1.3},
                             3,
                             4,
                             6,
                             {{5.0, 0.5, 30.0, -25.0},
                              {4.0, 0.0, -30.0, 30.0},
                              {-10.0, -8.0, 1.0, 1.0},
                              {5.0, 10.0, -2.0, -1.0}}};

static_assert(port_traits<Garch11, Garch11Data>(), "garch11 is a posteriordb port");

TEST(ModelsLogDensity, Garch11MatchesStansModelBlock) {
  const Series s = posteriordb_data_as<Series>(kPosterior);
  const auto data = Garch11Data<double>::from_arrays(s.T, s.y, s.sigma1);
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), 4);
  expect_matches_transcription(model, garch_point,
                               [&](const auto& x) { return direct_log_density(s, x); });
}

TEST(ModelsGradient, Garch11DualsAgreeWithFiniteDifferences) {
  const Series s = posteriordb_data_as<Series>(kPosterior);
  const auto data = Garch11Data<double>::from_arrays(s.T, s.y, s.sigma1);
  expect_dual_gradient_agrees(data.host_model(), garch_point,
                              [&](const auto& x) { return direct_log_density(s, x); });
}

TEST(ModelsQuantities, Garch11RecordsReferenceVariablesInOrder) {
  const Series s = posteriordb_data_as<Series>(kPosterior);
  const auto data = Garch11Data<double>::from_arrays(s.T, s.y, s.sigma1);
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), posteriordb_reference_variables(kPosterior));
  for (const int p : {0, 6, 7}) {
    const auto x = garch_point(p);
    const auto q = recorded_quantities(model, x);
    const auto expected = constrained(x);
    ASSERT_EQ(q.size(), 4u);
    // exp, the sigmoids and a product: a few roundings each, relative.
    for (int i = 0; i < 4; ++i)
      EXPECT_NEAR(q[i], expected[i], 8 * kEps * std::fabs(expected[i]))
          << "point " << p << ", " << i;
    EXPECT_LT(q[2] + q[3], 1.0) << "stationarity, point " << p;
    EXPECT_GT(q[3], 0.0) << "point " << p;
  }
}

TEST(ModelsGarch11Data, FromArraysValidatesStansDataBlock) {
  const std::vector<double> y = {0.1, 0.2, -0.3, 0.4};
  EXPECT_EQ(Garch11Data<double>::from_arrays(4, y, 0.5).host_model().sigma1, 0.5);
  EXPECT_EQ(Garch11Data<double>::from_arrays(1, {0.5}, 1.0).host_model().dim(), 4);
  expect_invalid_argument([&] { Garch11Data<double>::from_arrays(0, {}, 0.5); },
                          "garch11: T must be >= 1, got 0");
  expect_invalid_argument([&] { Garch11Data<double>::from_arrays(5, y, 0.5); },
                          "garch11: y has 4 entries, expected T = 5");
  std::vector<double> bad = y;
  bad[1] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_argument([&] { Garch11Data<double>::from_arrays(4, bad, 0.5); },
                          "garch11: y[2] is not finite");
  expect_invalid_argument([&] { Garch11Data<double>::from_arrays(4, y, 0.0); },
                          "garch11: sigma1 must be positive and finite, got 0");
  expect_invalid_argument([&] { Garch11Data<double>::from_arrays(4, y, -1.0); },
                          "garch11: sigma1 must be positive and finite, got -1");
  expect_invalid_argument(
      [&] { Garch11Data<float>::from_arrays(4, y, std::numeric_limits<double>::infinity()); },
      "garch11: sigma1 must be positive and finite, got inf");
}

}  // namespace
