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
#include <cstdint>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "common/density_derivatives.hpp"
#include "common/expect_error.hpp"
#include "common/recorded_quantities.hpp"
#include "common/test_points.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/low_dim_gauss_mix.hpp"

#ifndef MYRIAD_TEST_DATA_DIR
#error "MYRIAD_TEST_DATA_DIR must name tests/data"
#endif

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "low_dim_gauss_mix-low_dim_gauss_mix";
constexpr std::uint64_t kPointSeed = 20261204;
constexpr int kPoints = 11;

std::string data_path(const std::string& file) {
  return std::string(MYRIAD_TEST_DATA_DIR) + "/posteriordb/" + kPosterior + "/" + file;
}

/// posteriordb's data: N and y.
struct Observations {
  int N = 0;
  std::vector<double> y;
};

Observations posteriordb_observations() {
  std::ifstream in(data_path("data.json"));
  EXPECT_TRUE(in.good()) << "cannot read " << data_path("data.json");
  const nlohmann::json data = nlohmann::json::parse(in);
  return {data.at("N").get<int>(), data.at("y").get<std::vector<double>>()};
}

/// The first column of reference.csv: the posterior's variables, in order.
std::vector<std::string> reference_variables() {
  std::ifstream in(data_path("reference.csv"));
  EXPECT_TRUE(in.good()) << "cannot read " << data_path("reference.csv");
  std::vector<std::string> names;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) names.push_back(line.substr(0, line.find(',')));
  return names;
}

/// A sum with its first-order rounding-error scale (Higham, "Accuracy and Stability of Numerical
/// Algorithms", 2nd ed., §3.1, §4.2): `scale` is Σ|t_i| plus, per term, the effect on t_i of the
/// rounding of its inputs (`propagated`, in units of ε). One evaluation of the sum, by this
/// transcription or by the model in another order, is then within (count/2 + 8) ε · scale of the
/// exact value: γ_n ≤ 1.01 n u = 0.505 n ε for the sum of n terms, and a few ulps per term.
struct Terms {
  double value = 0, scale = 0;
  int count = 0;
  void add(double t, double propagated = 0) {
    value += t;
    scale += std::fabs(t) + propagated;
    ++count;
  }
  /// |model − transcription| ≤ twice one evaluation's bound, with a factor 2 to spare:
  /// 2 (count + 16) ε · scale (below 1e-12 · scale for the ≤ 1000 terms of these tests).
  double tolerance() const { return 2 * (count + 16) * kEps * scale; }
  /// One evaluation's bound, δf of the central differences.
  double rounding() const { return (count / 2.0 + 8) * kEps * scale; }
};

/// log N(x; mean, sd) as its three terms; the rounding of x − mean moves −½z² by
/// |z| ε (|x| + |mean|)/sd.
void add_normal(Terms& terms, double x, double mean, double sd) {
  const double z = (x - mean) / sd;
  terms.add(-0.5 * std::log(2 * M_PI));
  terms.add(-std::log(sd));
  terms.add(-0.5 * z * z, std::fabs(z) * (std::fabs(x) + std::fabs(mean)) / sd);
}

/// normal_lpdf(x | mean, sd) and the error scale of its terms, as add_normal counts them.
struct NormalLpdf {
  double value, scale;
};
NormalLpdf normal_lpdf_with_scale(double x, double mean, double sd) {
  Terms t;
  add_normal(t, x, mean, sd);
  return {t.value, t.scale};
}

double sigmoid(double u) { return 1 / (1 + std::exp(-u)); }

/// The constrained parameters (μ_1, μ_2, σ_1, σ_2, θ) of x.
std::vector<double> constrained(const std::vector<double>& x) {
  return {x[0], x[0] + std::exp(x[1]), std::exp(x[2]), std::exp(x[3]), sigmoid(x[4])};
}

/// Stan's model block of low_dim_gauss_mix written out plainly, with each prior's normaliser on
/// its constrained support (log 2 for the ordered pair, log 2 for each half-normal), plus the
/// log-Jacobian: dμ_2/dx_1 = e^{x_1}, dσ_k/dx_{1+k} = σ_k, dθ/dx_4 = θ (1 − θ). log_mix(θ, a, b)
/// = log(θ e^a + (1 − θ) e^b) with the larger of the two logs factored out, so that neither
/// underflows at the far points; its rounding carries that of a and b (weights ≤ 1).
Terms direct_log_density(const Observations& d, const std::vector<double>& x) {
  const std::vector<double> p = constrained(x);
  const double mu[2] = {p[0], p[1]}, sigma[2] = {p[2], p[3]}, theta = p[4];
  const double one_minus_theta = sigmoid(-x[4]);  // 1 − θ, without cancellation as θ → 1
  Terms lp;
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

/// Unconstrained reference means and sds (by the delta method through each transform).
const double kCentre[5] = {-2.734, 1.723, 0.0276, 0.0236, 0.4956};
const double kSpread[5] = {0.042, 0.0123, 0.0306, 0.0395, 0.0659};

/// Points 0–3 within a few posterior sds of the reference means, 4–5 in Stan's default start
/// region (uniform on [−2, 2]: here standard normals), and five far but finite ones: both means
/// on the upper cluster with μ_2 − μ_1 = e^{−8}; σ_1 = e^{−5}, whose component gives the points
/// of the other cluster z ≈ 10³; wide components (σ = e^5) with θ = σ(25); θ = σ(−40), where the
/// first component's weight is e^{−40}; and means far from the data with the label order the
/// data's reversed.
std::vector<double> gauss_mix_point(int p) {
  std::vector<double> x = standard_normals(kPointSeed, p, 5);
  if (p < 4) {
    for (int i = 0; i < 5; ++i) x[i] = kCentre[i] + 3 * kSpread[i] * x[i];
  } else if (p == 6) {
    x = {2.8, -8.0, 0.0, 0.1, 0.5};
  } else if (p == 7) {
    x = {-2.7, 1.7, -5.0, 0.0, 0.5};
  } else if (p == 8) {
    x = {-1.0, 0.5, 5.0, 5.0, 25.0};
  } else if (p == 9) {
    x = {-2.7, 1.7, 0.0, 0.0, -40.0};
  } else if (p == 10) {
    x = {-30.0, 3.5, 1.0, -1.0, 2.0};
  }
  return x;
}

/// The model with its gradient by forward-mode duals as the library takes it
/// (log_density_and_gradient, model/concept.hpp), so that expect_consistent_derivatives checks
/// that gradient against scalar duals and central finite differences.
template <class Model>
struct DualGradient {
  Model model;
  int dim() const { return model.dim(); }
  template <class Vec>
  auto log_density(const Vec& x) const {
    return model.log_density(x);
  }
  template <class Vec, class Grad>
  double log_density_gradient(const Vec& x, Grad& grad) const {
    return myriad::log_density_and_gradient(model, x, grad);
  }
};

static_assert(!myriad::model_has_gradient<LowDimGaussMix<double>>, "duals differentiate it");
static_assert(std::is_trivially_copyable<LowDimGaussMix<double>>::value, "passed to kernels");
static_assert(std::is_trivially_copyable<LowDimGaussMix<float>>::value, "passed to kernels");
static_assert(LowDimGaussMix<double>::library_backends == myriad::library_backend::hmc, "CUDA");
static_assert(LowDimGaussMix<float>::library_backends == 0u, "no float instance");
static_assert(!std::is_copy_constructible<LowDimGaussMixData<double>>::value, "owns device data");
static_assert(std::is_move_constructible<LowDimGaussMixData<double>>::value, "movable");

TEST(ModelsLogDensity, LowDimGaussMixMatchesStansModelBlock) {
  const Observations d = posteriordb_observations();
  const auto data = LowDimGaussMixData<double>::from_arrays(d.N, d.y);
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), 5);
  double worst = 0;
  for (int p = 0; p < kPoints; ++p) {
    const auto x = gauss_mix_point(p);
    const Terms direct = direct_log_density(d, x);
    ASSERT_TRUE(std::isfinite(direct.value)) << "point " << p;
    const double lp = model.log_density(x);
    EXPECT_NEAR(lp, direct.value, direct.tolerance()) << "point " << p;
    worst = std::max(worst, std::fabs(lp - direct.value) / direct.tolerance());
  }
  std::printf("    worst |model - direct| / tolerance = %.3f\n", worst);
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
  const Observations d = posteriordb_observations();
  const auto data = LowDimGaussMixData<double>::from_arrays(d.N, d.y);
  const DualGradient<LowDimGaussMix<double>> model{data.host_model()};
  DerivativeAgreement agreement;
  for (int p = 0; p < kPoints; ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    const auto x = gauss_mix_point(p);
    const Terms direct = direct_log_density(d, x);
    // Vector and scalar duals make the same operations (core/dual_vector.hpp), so they agree to
    // rounding of the gradient's scale; δf is one evaluation's bound (Terms).
    const auto tolerances = [&](double, const std::vector<double>& gradient) {
      double norm = 0;
      for (double g : gradient) norm = std::max(norm, std::fabs(g));
      DerivativeTolerances tol;
      tol.value = direct.tolerance();
      tol.gradient.assign(gradient.size(), 1e-12 * (1 + norm));
      tol.rounding = direct.rounding();
      return tol;
    };
    expect_consistent_derivatives(model, x, tolerances, agreement);
  }
  std::printf("    worst ratios to tolerance: fd %.3f, value %.3f; max |grad - fd| = %.2e\n",
              agreement.fd_ratio, agreement.value_ratio, agreement.fd_abs_error);
}

TEST(ModelsQuantities, LowDimGaussMixRecordsReferenceVariablesInOrder) {
  const Observations d = posteriordb_observations();
  const auto data = LowDimGaussMixData<double>::from_arrays(d.N, d.y);
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), reference_variables());
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
