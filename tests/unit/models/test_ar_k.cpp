// Tests of `arK` (include/myriad/models/ar_k.hpp) on posteriordb's arK-arK data: the log density
// against Stan's model block written out directly with <cmath> (plus the Jacobian of σ = e^τ and
// the half-Cauchy's log 2), its gradient by forward-mode duals against central finite
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
#include "myriad/models/ar_k.hpp"

#ifndef MYRIAD_TEST_DATA_DIR
#error "MYRIAD_TEST_DATA_DIR must name tests/data"
#endif

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "arK-arK";
constexpr std::uint64_t kPointSeed = 20261201;
constexpr int kPoints = 9;

std::string data_path(const std::string& file) {
  return std::string(MYRIAD_TEST_DATA_DIR) + "/posteriordb/" + kPosterior + "/" + file;
}

/// posteriordb's data: K, T and y.
struct Series {
  int K = 0, T = 0;
  std::vector<double> y;
};

Series posteriordb_series() {
  std::ifstream in(data_path("data.json"));
  EXPECT_TRUE(in.good()) << "cannot read " << data_path("data.json");
  const nlohmann::json data = nlohmann::json::parse(in);
  return {data.at("K").get<int>(), data.at("T").get<int>(),
          data.at("y").get<std::vector<double>>()};
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

/// log N(x; mean, sd) as its three terms; `mean_scale` is the magnitude of the sum that formed
/// the mean, whose rounding moves −½z² by |z| · ε · mean_scale / sd.
void add_normal(Terms& terms, double x, double mean, double sd, double mean_scale = 0) {
  const double z = (x - mean) / sd;
  terms.add(-0.5 * std::log(2 * M_PI));
  terms.add(-std::log(sd));
  terms.add(-0.5 * z * z, std::fabs(z) * (std::fabs(x) + std::fabs(mean) + mean_scale) / sd);
}

/// Stan's model block of arK written out plainly, plus log 2 (σ's Cauchy renormalised to σ > 0)
/// and the Jacobian log σ of σ = e^τ.
Terms direct_log_density(const Series& s, const std::vector<double>& x) {
  const int K = s.K;
  const double alpha = x[0];
  const double sigma = std::exp(x[K + 1]);
  Terms lp;
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

/// Unconstrained reference means and sds (σ's on the log scale: sd(log σ) ≈ sd(σ)/σ).
const double kCentre[7] = {-0.0007, 0.692, 0.439, 0.106, -0.0354, -0.302, std::log(0.1506)};
const double kSpread[7] = {0.0107, 0.0706, 0.0873, 0.0931, 0.0860, 0.0699, 0.0516};

/// Points 0–3 within a few posterior sds of the reference means, 4–5 in Stan's default start
/// region (uniform on [−2, 2]: here standard normals), and three far but finite ones: σ = e^{−6}
/// with coefficients off the mode (a residual of a few hundred sds), σ = e^{12} in the
/// half-Cauchy's tail, and coefficients of ±40 that make μ_t cancel.
std::vector<double> ar_k_point(int p) {
  std::vector<double> x = standard_normals(kPointSeed, p, 7);
  if (p < 4) {
    for (int i = 0; i < 7; ++i) x[i] = kCentre[i] + 3 * kSpread[i] * x[i];
  } else if (p == 6) {
    x = {0.05, 0.8, 0.3, 0.1, 0.0, -0.2, -6.0};
  } else if (p == 7) {
    x = {-3.0, 2.0, -1.0, 0.5, 0.3, -0.7, 12.0};
  } else if (p == 8) {
    x = {1.0, 40.0, -40.0, 25.0, -25.0, 0.5, 2.0};
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

static_assert(!myriad::model_has_gradient<ArK<double>>, "duals differentiate arK");
static_assert(std::is_trivially_copyable<ArK<double>>::value, "passed to kernels");
static_assert(std::is_trivially_copyable<ArK<float>>::value, "passed to kernels");
static_assert(ArK<double>::library_backends == myriad::library_backend::hmc, "CUDA HMC");
static_assert(ArK<float>::library_backends == 0u, "no float instance");
static_assert(!std::is_copy_constructible<ArKData<double>>::value, "owns device memory");
static_assert(std::is_move_constructible<ArKData<double>>::value, "movable");

TEST(ModelsLogDensity, ArKMatchesStansModelBlock) {
  const Series s = posteriordb_series();
  const auto data = ArKData<double>::from_arrays(s.K, s.T, s.y);
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), s.K + 2);
  double worst = 0;
  for (int p = 0; p < kPoints; ++p) {
    const auto x = ar_k_point(p);
    const Terms direct = direct_log_density(s, x);
    ASSERT_TRUE(std::isfinite(direct.value)) << "point " << p;
    const double lp = model.log_density(x);
    EXPECT_NEAR(lp, direct.value, direct.tolerance()) << "point " << p;
    worst = std::max(worst, std::fabs(lp - direct.value) / direct.tolerance());
  }
  std::printf("    worst |model - direct| / tolerance = %.3f\n", worst);
}

TEST(ModelsGradient, ArKDualsAgreeWithFiniteDifferences) {
  const Series s = posteriordb_series();
  const auto data = ArKData<double>::from_arrays(s.K, s.T, s.y);
  const DualGradient<ArK<double>> model{data.host_model()};
  DerivativeAgreement agreement;
  for (int p = 0; p < kPoints; ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    const auto x = ar_k_point(p);
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

TEST(ModelsQuantities, ArKRecordsReferenceVariablesInOrder) {
  const Series s = posteriordb_series();
  const auto data = ArKData<double>::from_arrays(s.K, s.T, s.y);
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), reference_variables());
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
