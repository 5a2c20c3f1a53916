// Tests of `arK` (include/myriad/models/ar_k.hpp) on posteriordb's arK-arK data: the log density
// against Stan's model block written out directly with <cmath> (plus the Jacobian of σ = e^τ and
// the half-Cauchy's log 2), its gradient by forward-mode duals against central finite
// differences, the recorded quantities against reference.csv's variables, and the validation of
// the data.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/expect_error.hpp"
#include "common/posteriordb_port_checks.hpp"
#include "common/recorded_quantities.hpp"
#include "myriad/models/ar_k.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "arK-arK";

/// posteriordb's data, by data.json's names: K, T and y.
struct Series {
  int K = 0, T = 0;
  std::vector<double> y;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Series, K, T, y)

/// Stan's model block of arK written out plainly, plus log 2 (σ's Cauchy renormalised to σ > 0)
/// and the Jacobian log σ of σ = e^τ. Each μ_t's rounding, K times the magnitude of its sum,
/// enters its normal's residual (add_normal's input_scale).
RoundedSum direct_log_density(const Series& s, const std::vector<double>& x) {
  const int K = s.K;
  const double alpha = x[0];
  const double sigma = std::exp(x[K + 1]);
  RoundedSum lp;
  add_normal(lp, alpha, 0, 10);
  for (int k = 1; k <= K; ++k) add_normal(lp, x[k], 0, 10);
  lp.add(std::log(2.0));                                // half-Cauchy: twice the Cauchy on σ > 0
  lp.add(-std::log(M_PI * 2.5));                        // cauchy_lpdf(σ | 0, 2.5) ...
  lp.add(-std::log(1 + (sigma / 2.5) * (sigma / 2.5)),  // ... whose argument 2τ the model rounds
         2 * std::fabs(x[K + 1]));
  for (int t = K + 1; t <= s.T; ++t) {  // Stan's 1-based t
    double mu = alpha, mu_scale = std::fabs(alpha);
    for (int k = 1; k <= K; ++k) {
      mu = mu + x[k] * s.y[t - k - 1];
      mu_scale += std::fabs(x[k] * s.y[t - k - 1]);
    }
    add_normal(lp, s.y[t - 1], mu, sigma, K * mu_scale);
  }
  lp.add(std::log(sigma));  // the Jacobian dσ/dτ = σ
  return lp;
}

/// Points 0–3 within 3 posterior sds of the reference means (unconstrained: σ's on the log
/// scale, sd(log σ) ≈ sd(σ)/σ), 4–5 in Stan's default start region, and three far but finite
/// ones: σ = e^{−6} with coefficients off the mode (a residual of a few hundred sds), σ = e^{12}
/// in the half-Cauchy's tail, and coefficients of ±40 that make μ_t cancel.
const PortPoints ar_k_point{20261201,
                            {-0.0007, 0.692, 0.439, 0.106, -0.0354, -0.302, std::log(0.1506)},
                            {0.0107, 0.0706, 0.0873, 0.0931, 0.0860, 0.0699, 0.0516},
                            3,
                            4,
                            6,
                            {{0.05, 0.8, 0.3, 0.1, 0.0, -0.2, -6.0},
                             {-3.0, 2.0, -1.0, 0.5, 0.3, -0.7, 12.0},
                             {1.0, 40.0, -40.0, 25.0, -25.0, 0.5, 2.0}}};

static_assert(port_traits<ArK, ArKData>(), "arK is a posteriordb port");

TEST(ModelsLogDensity, ArKMatchesStansModelBlock) {
  const Series s = posteriordb_data_as<Series>(kPosterior);
  const auto data = ArKData<double>::from_arrays(s.K, s.T, s.y);
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), s.K + 2);
  expect_matches_transcription(model, ar_k_point,
                               [&](const auto& x) { return direct_log_density(s, x); });
}

TEST(ModelsGradient, ArKDualsAgreeWithFiniteDifferences) {
  const Series s = posteriordb_data_as<Series>(kPosterior);
  const auto data = ArKData<double>::from_arrays(s.K, s.T, s.y);
  expect_dual_gradient_agrees(data.host_model(), ar_k_point,
                              [&](const auto& x) { return direct_log_density(s, x); });
}

TEST(ModelsQuantities, ArKRecordsReferenceVariablesInOrder) {
  const Series s = posteriordb_data_as<Series>(kPosterior);
  const auto data = ArKData<double>::from_arrays(s.K, s.T, s.y);
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), posteriordb_reference_variables(kPosterior));
  const auto x = ar_k_point(1);
  std::vector<double> expected(x.begin(), x.end());
  expected.back() = std::exp(x.back());  // σ on its own scale
  const auto q = recorded_quantities(model, x);
  for (int i = 0; i < s.K + 1; ++i) EXPECT_EQ(q[i], expected[i]) << i;
  EXPECT_NEAR(q[s.K + 1], expected[s.K + 1], 2 * kEps * expected[s.K + 1]);
}

TEST(ModelsArKData, FromArraysValidatesStansDataBlock) {
  const std::vector<double> y = {0.1, 0.2, -0.3, 0.4};
  EXPECT_EQ(ArKData<double>::from_arrays(3, 4, y).host_model().dim(), 5);
  expect_invalid_argument([&] { ArKData<double>::from_arrays(0, 4, y); },
                          "arK: K must be in 1..T-1, got 0");
  expect_invalid_argument([&] { ArKData<double>::from_arrays(4, 4, y); },
                          "arK: K must be in 1..T-1, got 4");
  expect_invalid_argument([&] { ArKData<double>::from_arrays(1, 1, {0.5}); },
                          "arK: T must be >= 2, got 1");
  expect_invalid_argument([&] { ArKData<double>::from_arrays(1, 5, y); },
                          "arK: y has 4 entries, expected T = 5");
  std::vector<double> bad = y;
  bad[2] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_argument([&] { ArKData<double>::from_arrays(1, 4, bad); },
                          "arK: y[3] is not finite");
  bad[2] = std::numeric_limits<double>::infinity();
  expect_invalid_argument([&] { ArKData<float>::from_arrays(1, 4, bad); },
                          "arK: y[3] is not finite");
}

}  // namespace
