// Tests of `garch11` (include/myriad/models/garch11.hpp) on posteriordb's garch-garch11 data: the
// log density against Stan's model block written out directly with <cmath> (σ_t by Stan's sqrt
// recursion, plus the Jacobians of α_0 = e^a, α_1 = σ(b) and β_1 = (1 − α_1) σ(c) written as
// derivatives of the maps), its gradient by forward-mode duals against central finite
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
#include "myriad/models/garch11.hpp"

#ifndef MYRIAD_TEST_DATA_DIR
#error "MYRIAD_TEST_DATA_DIR must name tests/data"
#endif

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "garch-garch11";
constexpr std::uint64_t kPointSeed = 20261203;
constexpr int kPoints = 10;

std::string data_path(const std::string& file) {
  return std::string(MYRIAD_TEST_DATA_DIR) + "/posteriordb/" + kPosterior + "/" + file;
}

/// posteriordb's data: T, y and sigma1.
struct Series {
  int T = 0;
  std::vector<double> y;
  double sigma1 = 0;
};

Series posteriordb_series() {
  std::ifstream in(data_path("data.json"));
  EXPECT_TRUE(in.good()) << "cannot read " << data_path("data.json");
  const nlohmann::json data = nlohmann::json::parse(in);
  return {data.at("T").get<int>(), data.at("y").get<std::vector<double>>(),
          data.at("sigma1").get<double>()};
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

/// log N(x; mean, sd) as its three terms. The rounding of x − mean (|x| + |mean| in units of ε)
/// moves −½z² by |z| ε (|x| + |mean|)/sd, and a relative error sd_error · ε of sd moves −log sd
/// by sd_error · ε and −½z² by z² sd_error · ε.
void add_normal(Terms& terms, double x, double mean, double sd, double sd_error = 0) {
  const double z = (x - mean) / sd;
  terms.add(-0.5 * std::log(2 * M_PI));
  terms.add(-std::log(sd), sd_error);
  terms.add(-0.5 * z * z, std::fabs(z) * (std::fabs(x) + std::fabs(mean)) / sd + z * z * sd_error);
}

double sigmoid(double u) { return 1 / (1 + std::exp(-u)); }

/// The constrained parameters (μ, α_0, α_1, β_1) of x = (μ, a, b, c); 1 − α_1 is σ(−b), which
/// Stan's 1 − alpha1 equals in exact arithmetic.
std::vector<double> constrained(const std::vector<double>& x) {
  const double alpha1 = sigmoid(x[2]), upper = sigmoid(-x[2]);
  return {x[0], std::exp(x[1]), alpha1, upper * sigmoid(x[3])};
}

/// Stan's model block of garch11 written out plainly, plus the log-Jacobian of the transforms:
/// dα_0/da = α_0, dα_1/db = α_1 (1 − α_1), dβ_1/dc = (1 − α_1) s (1 − s) with s = σ(c). Beside
/// σ_t² it carries a running bound on its rounding error (Higham §3.3): the recursion adds
/// positive terms, each rounded a few times, and carries β_1 times the previous bound.
Terms direct_log_density(const Series& s, const std::vector<double>& x) {
  const std::vector<double> p = constrained(x);
  const double mu = p[0], alpha0 = p[1], alpha1 = p[2], beta1 = p[3];
  // 1 − α_1 and 1 − s as σ(−b) and σ(−c): 1 − σ(u) would keep few digits where σ(u) → 1.
  const double one_minus_alpha1 = sigmoid(-x[2]);
  const double share = sigmoid(x[3]), one_minus_share = sigmoid(-x[3]);
  Terms lp;
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
    add_normal(lp, s.y[t], mu, sigma[t], sd_error);
  }
  lp.add(std::log(alpha0));
  lp.add(std::log(alpha1 * one_minus_alpha1), std::fabs(x[2]));
  lp.add(std::log(one_minus_alpha1 * share * one_minus_share), std::fabs(x[2]) + std::fabs(x[3]));
  return lp;
}

/// Unconstrained reference means and sds (by the delta method through each transform).
const double kCentre[4] = {5.05, 0.386, 0.27, 0.74};
const double kSpread[4] = {0.124, 0.39, 0.52, 1.3};

/// Points 0–3 within a few posterior sds of the reference means, 4–5 in Stan's default start
/// region (uniform on [−2, 2]: here standard normals, μ far from the data's mean 5), and four far
/// but finite ones: α_1 → 1 (b = 30, where Stan's 1 − alpha1 keeps only 3 digits) with
/// β_1/(1 − α_1) → 0, α_1 → 0 with β_1 → 1, a tiny α_0 with μ far off, and a large α_0.
std::vector<double> garch_point(int p) {
  std::vector<double> x = standard_normals(kPointSeed, p, 4);
  if (p < 4) {
    for (int i = 0; i < 4; ++i) x[i] = kCentre[i] + 3 * kSpread[i] * x[i];
  } else if (p == 6) {
    x = {5.0, 0.5, 30.0, -25.0};
  } else if (p == 7) {
    x = {4.0, 0.0, -30.0, 30.0};
  } else if (p == 8) {
    x = {-10.0, -8.0, 1.0, 1.0};
  } else if (p == 9) {
    x = {5.0, 10.0, -2.0, -1.0};
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

static_assert(!myriad::model_has_gradient<Garch11<double>>, "duals differentiate garch11");
static_assert(std::is_trivially_copyable<Garch11<double>>::value, "passed to kernels");
static_assert(std::is_trivially_copyable<Garch11<float>>::value, "passed to kernels");
static_assert(Garch11<double>::library_backends == myriad::library_backend::hmc, "CUDA HMC");
static_assert(Garch11<float>::library_backends == 0u, "no float instance");
static_assert(!std::is_copy_constructible<Garch11Data<double>>::value, "owns device memory");
static_assert(std::is_move_constructible<Garch11Data<double>>::value, "movable");

TEST(ModelsLogDensity, Garch11MatchesStansModelBlock) {
  const Series s = posteriordb_series();
  const auto data = Garch11Data<double>::from_arrays(s.T, s.y, s.sigma1);
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), 4);
  double worst = 0;
  for (int p = 0; p < kPoints; ++p) {
    const auto x = garch_point(p);
    const Terms direct = direct_log_density(s, x);
    ASSERT_TRUE(std::isfinite(direct.value)) << "point " << p;
    const double lp = model.log_density(x);
    EXPECT_NEAR(lp, direct.value, direct.tolerance()) << "point " << p;
    worst = std::max(worst, std::fabs(lp - direct.value) / direct.tolerance());
  }
  std::printf("    worst |model - direct| / tolerance = %.3f\n", worst);
}

TEST(ModelsGradient, Garch11DualsAgreeWithFiniteDifferences) {
  const Series s = posteriordb_series();
  const auto data = Garch11Data<double>::from_arrays(s.T, s.y, s.sigma1);
  const DualGradient<Garch11<double>> model{data.host_model()};
  DerivativeAgreement agreement;
  for (int p = 0; p < kPoints; ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    const auto x = garch_point(p);
    const Terms direct = direct_log_density(s, x);
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

TEST(ModelsQuantities, Garch11RecordsReferenceVariablesInOrder) {
  const Series s = posteriordb_series();
  const auto data = Garch11Data<double>::from_arrays(s.T, s.y, s.sigma1);
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), reference_variables());
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
