// Tests of `low_dim_gauss_mix` (include/myriad/models/low_dim_gauss_mix.hpp) on posteriordb's
// low_dim_gauss_mix data: the log density against Stan's model block written out directly with
// <cmath> (log_mix as the log of the mixture density, the priors' normalisers on their
// constrained supports, and the Jacobians of the ordered, lower-bounded and interval transforms
// written as derivatives of the maps), its gradient by forward-mode duals against central finite
// differences, the recorded quantities against reference.csv's variables, and the validation of
// the data.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "common/expect_error.hpp"
#include "common/log_densities.hpp"
#include "common/posteriordb_port_checks.hpp"
#include "common/recorded_quantities.hpp"
#include "myriad/models/low_dim_gauss_mix.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "low_dim_gauss_mix-low_dim_gauss_mix";

/// posteriordb's data, by data.json's names: N and y.
struct Observations {
  int N = 0;
  std::vector<double> y;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Observations, N, y)

/// normal_lpdf(x | mean, sd) and the error scale of its terms, as add_normal counts them.
struct NormalLpdf {
  double value, scale;
};
NormalLpdf normal_lpdf_with_scale(double x, double mean, double sd) {
  RoundedSum t;
  add_normal(t, x, mean, sd);
  return {t.value, t.scale};
}

/// The constrained parameters (μ_1, μ_2, σ_1, σ_2, θ) of x.
std::vector<double> constrained(const std::vector<double>& x) {
  return {x[0], x[0] + std::exp(x[1]), std::exp(x[2]), std::exp(x[3]), sigmoid(x[4])};
}

/// Stan's model block of low_dim_gauss_mix written out plainly, with each prior's normaliser on
/// its constrained support (log 2 for the ordered pair, log 2 for each half-normal), plus the
/// log-Jacobian: dμ_2/dx_1 = e^{x_1}, dσ_k/dx_{1+k} = σ_k, dθ/dx_4 = θ (1 − θ). log_mix(θ, a, b)
/// = log(θ e^a + (1 − θ) e^b) with the larger of the two logs factored out, so that neither
/// underflows at the far points; its rounding carries that of a and b (weights ≤ 1).
RoundedSum direct_log_density(const Observations& d, const std::vector<double>& x) {
  const std::vector<double> p = constrained(x);
  const double mu[2] = {p[0], p[1]}, sigma[2] = {p[2], p[3]}, theta = p[4];
  const double one_minus_theta = sigmoid(-x[4]);  // 1 − θ, without cancellation as θ → 1
  RoundedSum lp;
  // sigma ~ normal(0, 2), on σ > 0: half-normals.
  for (int k = 0; k < 2; ++k) {
    add_normal(lp, sigma[k], 0, 2);
    lp.add(std::log(2.0), 2 * std::fabs(x[2 + k]));
  }
  // mu ~ normal(0, 2), on μ_1 < μ_2: twice the product.
  for (int k = 0; k < 2; ++k) add_normal(lp, mu[k], 0, 2);
  lp.add(std::log(2.0));
  // theta ~ beta(5, 5).
  lp.add(std::lgamma(10.0) - 2 * std::lgamma(5.0));
  lp.add(4 * std::log(theta), 4 * std::fabs(x[4]));
  lp.add(4 * std::log(one_minus_theta), 4 * std::fabs(x[4]));
  // target += log_mix(theta, normal_lpdf(y[n] | mu[1], sigma[1]), normal_lpdf(y[n] | ...)).
  for (int n = 0; n < d.N; ++n) {
    const NormalLpdf a = normal_lpdf_with_scale(d.y[n], mu[0], sigma[0]);
    const NormalLpdf b = normal_lpdf_with_scale(d.y[n], mu[1], sigma[1]);
    const double la = std::log(theta) + a.value, lb = std::log(one_minus_theta) + b.value;
    const double m = std::max(la, lb);
    lp.add(m + std::log(std::exp(la - m) + std::exp(lb - m)),
           a.scale + b.scale + 2 * std::fabs(x[4]));
  }
  lp.add(x[1]);  // log e^{x_1}
  lp.add(std::log(sigma[0]), std::fabs(x[2]));
  lp.add(std::log(sigma[1]), std::fabs(x[3]));
  lp.add(std::log(theta * one_minus_theta), 2 * std::fabs(x[4]));
  return lp;
}

/// Points 0–3 within 3 posterior sds of the reference means (unconstrained, by the delta method
/// through each transform), 4–5 in Stan's default start region, and five far but finite ones:
/// both means on the upper cluster with μ_2 − μ_1 = e^{−8}; σ_1 = e^{−5}, whose component gives
/// the points of the other cluster z ≈ 10³; wide components (σ = e^5) with θ = σ(25);
/// θ = σ(−40), where the first component's weight is e^{−40}; and means far from the data with
/// the label order the data's reversed.
const PortPoints gauss_mix_point{20261204,
                                 {-2.734, 1.723, 0.0276, 0.0236, 0.4956},
                                 {0.042, 0.0123, 0.0306, 0.0395, 0.0659},
                                 3,
                                 4,
                                 6,
                                 {{2.8, -8.0, 0.0, 0.1, 0.5},
                                  {-2.7, 1.7, -5.0, 0.0, 0.5},
                                  {-1.0, 0.5, 5.0, 5.0, 25.0},
                                  {-2.7, 1.7, 0.0, 0.0, -40.0},
                                  {-30.0, 3.5, 1.0, -1.0, 2.0}}};

static_assert(port_traits<LowDimGaussMix, LowDimGaussMixData>(), "a posteriordb port");

TEST(ModelsLogDensity, LowDimGaussMixMatchesStansModelBlock) {
  const Observations d = posteriordb_data_as<Observations>(kPosterior);
  const auto data = LowDimGaussMixData<double>::from_arrays(d.N, d.y);
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), 5);
  expect_matches_transcription(model, gauss_mix_point,
                               [&](const auto& x) { return direct_log_density(d, x); });
}

/// ∫ exp(f(t)) dt over [a, b] by the trapezoid rule with `steps` intervals, summed by rows of
/// at most 4096 so that the sum's rounding stays near (4096 + steps/4096) ε relative.
template <class F>
double trapezoid(const F& log_f, double a, double b, int steps) {
  const double h = (b - a) / steps;
  double total = 0;
  for (int first = 0; first <= steps; first += 4096) {
    double row = 0;
    for (int i = first; i <= std::min(steps, first + 4095); ++i)
      row += ((i == 0 || i == steps) ? 0.5 : 1.0) * std::exp(log_f(a + i * h));
    total += row;
  }
  return total * h;
}

TEST(ModelsLogDensity, LowDimGaussMixWithoutDataIsItsNormalisedPrior) {
  // N = 0 (Stan's int<lower=0> N): the posterior is the prior, which with its normalisers on the
  // constrained supports is a density on ℝ⁵ integrating to 1, independently of the transcription
  // above. It factorises as p(x) = g(x_0, x_1) f_2(x_2) f_3(x_3) f_4(x_4), each factor integrating
  // to 1, so at any x the integrals along its blocks, I_01 = p/g, I_k = p/f_k, satisfy
  // I_01 I_2 I_3 I_4 = p(x)³. Trapezoid rules on ranges whose tails hold < e^{−30} of each
  // factor (the ordered pair's decays like e^{x_1} as x_1 → −∞, each σ's like e^{x}); for these
  // smooth integrands, analytic in a strip, the rule's error is exponentially small in 1/h, and
  // the sums' rounding is ~1e-12 relative: 1e-10 on the log allows for both.
  const auto data = LowDimGaussMixData<double>::from_arrays(0, {});
  const auto model = data.host_model();
  const std::vector<double> at = {0.3, -0.2, 0.1, -0.4, 0.7};
  const double log_p = model.log_density(at);
  double log_product = 0;
  for (int k = 2; k < 5; ++k) {
    std::vector<double> x = at;
    // log σ_k ≤ 4: the half-normal holds < e^{−370} beyond; logit θ ≤ 40: Beta(5, 5) < e^{−190}.
    const double upper = k < 4 ? 4.0 : 40.0;
    log_product += std::log(trapezoid(
        [&](double t) {
          x[k] = t;
          return model.log_density(x);
        },
        -40.0, upper, 80000));
  }
  std::vector<double> x = at;
  const int rows = 1600;
  const double a0 = -16, b0 = 16, h0 = (b0 - a0) / rows;
  double pair = 0;
  for (int i = 0; i <= rows; ++i) {
    x[0] = a0 + i * h0;
    const double w = (i == 0 || i == rows) ? 0.5 : 1.0;
    pair += w * h0 *
            trapezoid(
                [&](double t) {
                  x[1] = t;
                  return model.log_density(x);
                },
                -34.0, 3.5, 1875);
  }
  log_product += std::log(pair);
  EXPECT_NEAR(log_product, 3 * log_p, 1e-10);
  std::printf("    log(I_01 I_2 I_3 I_4) - 3 log p = %.2e (3 log p = %.17g)\n",
              log_product - 3 * log_p, 3 * log_p);
}

TEST(ModelsGradient, LowDimGaussMixDualsAgreeWithFiniteDifferences) {
  const Observations d = posteriordb_data_as<Observations>(kPosterior);
  const auto data = LowDimGaussMixData<double>::from_arrays(d.N, d.y);
  expect_dual_gradient_agrees(data.host_model(), gauss_mix_point,
                              [&](const auto& x) { return direct_log_density(d, x); });
}

TEST(ModelsQuantities, LowDimGaussMixRecordsReferenceVariablesInOrder) {
  const Observations d = posteriordb_data_as<Observations>(kPosterior);
  const auto data = LowDimGaussMixData<double>::from_arrays(d.N, d.y);
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), posteriordb_reference_variables(kPosterior));
  for (const int p : {0, 6, 9}) {
    const auto x = gauss_mix_point(p);
    const auto q = recorded_quantities(model, x);
    const auto expected = constrained(x);
    ASSERT_EQ(q.size(), 5u);
    // exp, a sum and a sigmoid: a few roundings each, relative.
    for (int i = 0; i < 5; ++i)
      EXPECT_NEAR(q[i], expected[i], 8 * kEps * std::fabs(expected[i]))
          << "point " << p << ", " << i;
    EXPECT_LT(q[0], q[1]) << "ordered, point " << p;
  }
}

TEST(ModelsLowDimGaussMixData, FromArraysValidatesStansDataBlock) {
  const std::vector<double> y = {0.1, 0.2, -0.3};
  EXPECT_EQ(LowDimGaussMixData<double>::from_arrays(3, y).host_model().n, 3);
  expect_invalid_argument([&] { LowDimGaussMixData<double>::from_arrays(-1, {}); },
                          "low_dim_gauss_mix: N must be >= 0, got -1");
  expect_invalid_argument([&] { LowDimGaussMixData<double>::from_arrays(2, y); },
                          "low_dim_gauss_mix: y has 3 entries, expected N = 2");
  std::vector<double> bad = y;
  bad[2] = std::numeric_limits<double>::infinity();
  expect_invalid_argument([&] { LowDimGaussMixData<double>::from_arrays(3, bad); },
                          "low_dim_gauss_mix: y[3] is not finite");
  bad[2] = 0;
  bad[0] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_argument([&] { LowDimGaussMixData<float>::from_arrays(3, bad); },
                          "low_dim_gauss_mix: y[1] is not finite");
}

}  // namespace
