// Tests of `arma11` (include/myriad/models/arma11.hpp) on posteriordb's arma-arma11 data: the log
// density against Stan's model block written out directly with <cmath> (the arrays nu and err
// as Stan fills them, plus the Jacobian of σ = e^τ and the half-Cauchy's log 2), its gradient by
// forward-mode duals against central finite differences, the recorded quantities against
// reference.csv's variables, and the validation of the data.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/expect_error.hpp"
#include "common/posteriordb_port_checks.hpp"
#include "common/recorded_quantities.hpp"
#include "myriad/models/arma11.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "arma-arma11";

/// posteriordb's data, by data.json's names: T and y.
struct Series {
  int T = 0;
  std::vector<double> y;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Series, T, y)

/// Stan's model block of arma11 written out plainly, plus log 2 (σ's Cauchy renormalised to
/// σ > 0) and the Jacobian log σ of σ = e^τ. Beside err_t it carries a running bound on its
/// rounding error (Higham §3.3): each step adds the magnitudes it sums, three roundings of them,
/// and carries |ϑ| times the previous bound; add_normal's input_scale takes it to −½z².
RoundedSum direct_log_density(const Series& s, const std::vector<double>& x) {
  const double mu = x[0], phi = x[1], theta = x[2], sigma = std::exp(x[3]);
  RoundedSum lp;
  add_normal(lp, mu, 0, 10);
  add_normal(lp, phi, 0, 2);
  add_normal(lp, theta, 0, 2);
  lp.add(std::log(2.0));                                // half-Cauchy: twice the Cauchy on σ > 0
  lp.add(-std::log(M_PI * 2.5));                        // cauchy_lpdf(σ | 0, 2.5) ...
  lp.add(-std::log(1 + (sigma / 2.5) * (sigma / 2.5)),  // ... whose argument 2τ the model rounds
         2 * std::fabs(x[3]));

  std::vector<double> nu(s.T), err(s.T), err_scale(s.T);
  nu[0] = mu + phi * mu;  // assume err[0] == 0
  err[0] = s.y[0] - nu[0];
  err_scale[0] = 3 * (std::fabs(s.y[0]) + std::fabs(mu) + std::fabs(phi * mu));
  for (int t = 1; t < s.T; ++t) {
    nu[t] = mu + phi * s.y[t - 1] + theta * err[t - 1];
    err[t] = s.y[t] - nu[t];
    err_scale[t] = 3 * (std::fabs(s.y[t]) + std::fabs(mu) + std::fabs(phi * s.y[t - 1]) +
                        std::fabs(theta * err[t - 1])) +
                   std::fabs(theta) * err_scale[t - 1];
  }
  for (int t = 0; t < s.T; ++t) add_normal(lp, err[t], 0, sigma, err_scale[t]);
  lp.add(std::log(sigma));  // the Jacobian dσ/dτ = σ
  return lp;
}

/// Points 0–3 within 3 posterior sds of the reference means (unconstrained: σ's on the log
/// scale, sd(log σ) ≈ sd(σ)/σ), 4–5 in Stan's default start region (ϑ up to |ϑ| ≈ 2, where the
/// errors grow), and three far but finite ones: σ = e^{−6} off the mode, σ = e^{12} in the
/// half-Cauchy's tail, and a non-invertible ϑ = −1.15, whose errors grow like 1.15^t to ~1e12.
const PortPoints arma_point{
    20261202,
    {0.0069, 0.957, -0.0337, std::log(0.1665)},
    {0.0114, 0.0229, 0.0599, 0.0509},
    3,
    4,
    6,
    {{0.3, 0.5, 0.4, -6.0}, {-20.0, -3.0, 0.7, 12.0}, {0.1, 0.9, -1.15, 1.0}}};

static_assert(port_traits<Arma11, Arma11Data>(), "arma11 is a posteriordb port");

TEST(ModelsLogDensity, Arma11MatchesStansModelBlock) {
  const Series s = posteriordb_data_as<Series>(kPosterior);
  const auto data = Arma11Data<double>::from_arrays(s.T, s.y);
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), 4);
  expect_matches_transcription(model, arma_point,
                               [&](const auto& x) { return direct_log_density(s, x); });
}

TEST(ModelsGradient, Arma11DualsAgreeWithFiniteDifferences) {
  const Series s = posteriordb_data_as<Series>(kPosterior);
  const auto data = Arma11Data<double>::from_arrays(s.T, s.y);
  expect_dual_gradient_agrees(data.host_model(), arma_point,
                              [&](const auto& x) { return direct_log_density(s, x); });
}

TEST(ModelsQuantities, Arma11RecordsReferenceVariablesInOrder) {
  const Series s = posteriordb_data_as<Series>(kPosterior);
  const auto data = Arma11Data<double>::from_arrays(s.T, s.y);
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), posteriordb_reference_variables(kPosterior));
  const auto x = arma_point(2);
  const auto q = recorded_quantities(model, x);
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[0], x[0]);
  EXPECT_EQ(q[1], x[1]);
  EXPECT_EQ(q[2], x[2]);
  EXPECT_NEAR(q[3], std::exp(x[3]), 2 * kEps * std::exp(x[3]));  // σ on its own scale
}

TEST(ModelsArma11Data, FromArraysValidatesStansDataBlock) {
  const std::vector<double> y = {0.1, 0.2, -0.3, 0.4};
  EXPECT_EQ(Arma11Data<double>::from_arrays(4, y).host_model().n, 4);
  EXPECT_EQ(Arma11Data<double>::from_arrays(1, {0.5}).host_model().dim(), 4);
  expect_invalid_argument([&] { Arma11Data<double>::from_arrays(0, {}); },
                          "arma11: T must be >= 1, got 0");
  expect_invalid_argument([&] { Arma11Data<double>::from_arrays(3, y); },
                          "arma11: y has 4 entries, expected T = 3");
  std::vector<double> bad = y;
  bad[0] = -std::numeric_limits<double>::infinity();
  expect_invalid_argument([&] { Arma11Data<double>::from_arrays(4, bad); },
                          "arma11: y[1] is not finite");
  bad[0] = 0;
  bad[3] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_argument([&] { Arma11Data<float>::from_arrays(4, bad); },
                          "arma11: y[4] is not finite");
}

}  // namespace
