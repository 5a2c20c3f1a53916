// Tests of `arma11` (include/myriad/models/arma11.hpp) on posteriordb's arma-arma11 data: the log
// density against Stan's model block written out directly with <cmath> (the arrays nu and err
// as Stan fills them, plus the Jacobian of σ = e^τ and the half-Cauchy's log 2), its gradient by
// forward-mode duals against central finite differences, the recorded quantities against
// reference.csv's variables, and the validation of the data.

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
#include "myriad/models/arma11.hpp"

#ifndef MYRIAD_TEST_DATA_DIR
#error "MYRIAD_TEST_DATA_DIR must name tests/data"
#endif

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "arma-arma11";
constexpr std::uint64_t kPointSeed = 20261202;
constexpr int kPoints = 9;

std::string data_path(const std::string& file) {
  return std::string(MYRIAD_TEST_DATA_DIR) + "/posteriordb/" + kPosterior + "/" + file;
}

/// posteriordb's data: T and y.
struct Series {
  int T = 0;
  std::vector<double> y;
};

Series posteriordb_series() {
  std::ifstream in(data_path("data.json"));
  EXPECT_TRUE(in.good()) << "cannot read " << data_path("data.json");
  const nlohmann::json data = nlohmann::json::parse(in);
  return {data.at("T").get<int>(), data.at("y").get<std::vector<double>>()};
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

/// log N(x; mean, sd) as its three terms; `input_scale` bounds, in units of ε, the rounding error
/// of x − mean from the arithmetic that formed them, which moves −½z² by |z| ε input_scale / sd.
void add_normal(Terms& terms, double x, double mean, double sd, double input_scale = 0) {
  const double z = (x - mean) / sd;
  terms.add(-0.5 * std::log(2 * M_PI));
  terms.add(-std::log(sd));
  terms.add(-0.5 * z * z, std::fabs(z) * (std::fabs(x) + std::fabs(mean) + input_scale) / sd);
}

/// Stan's model block of arma11 written out plainly, plus log 2 (σ's Cauchy renormalised to
/// σ > 0) and the Jacobian log σ of σ = e^τ. Beside err_t it carries a running bound on its
/// rounding error (Higham §3.3): each step adds the magnitudes it sums, three roundings of them,
/// and carries |ϑ| times the previous bound.
Terms direct_log_density(const Series& s, const std::vector<double>& x) {
  const double mu = x[0], phi = x[1], theta = x[2], sigma = std::exp(x[3]);
  Terms lp;
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

/// Unconstrained reference means and sds (σ's on the log scale: sd(log σ) ≈ sd(σ)/σ).
const double kCentre[4] = {0.0069, 0.957, -0.0337, std::log(0.1665)};
const double kSpread[4] = {0.0114, 0.0229, 0.0599, 0.0509};

/// Points 0–3 within a few posterior sds of the reference means, 4–5 in Stan's default start
/// region (uniform on [−2, 2]: here standard normals, ϑ up to |ϑ| ≈ 2, where the errors grow),
/// and three far but finite ones: σ = e^{−6} off the mode, σ = e^{12} in the half-Cauchy's tail,
/// and a non-invertible ϑ = −1.15, whose errors grow like 1.15^t to ~1e12.
std::vector<double> arma_point(int p) {
  std::vector<double> x = standard_normals(kPointSeed, p, 4);
  if (p < 4) {
    for (int i = 0; i < 4; ++i) x[i] = kCentre[i] + 3 * kSpread[i] * x[i];
  } else if (p == 6) {
    x = {0.3, 0.5, 0.4, -6.0};
  } else if (p == 7) {
    x = {-20.0, -3.0, 0.7, 12.0};
  } else if (p == 8) {
    x = {0.1, 0.9, -1.15, 1.0};
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

static_assert(!myriad::model_has_gradient<Arma11<double>>, "duals differentiate arma11");
static_assert(std::is_trivially_copyable<Arma11<double>>::value, "passed to kernels");
static_assert(std::is_trivially_copyable<Arma11<float>>::value, "passed to kernels");
static_assert(Arma11<double>::library_backends == myriad::library_backend::hmc, "CUDA HMC");
static_assert(Arma11<float>::library_backends == 0u, "no float instance");
static_assert(!std::is_copy_constructible<Arma11Data<double>>::value, "owns device memory");
static_assert(std::is_move_constructible<Arma11Data<double>>::value, "movable");

TEST(ModelsLogDensity, Arma11MatchesStansModelBlock) {
  const Series s = posteriordb_series();
  const auto data = Arma11Data<double>::from_arrays(s.T, s.y);
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), 4);
  double worst = 0;
  for (int p = 0; p < kPoints; ++p) {
    const auto x = arma_point(p);
    const Terms direct = direct_log_density(s, x);
    ASSERT_TRUE(std::isfinite(direct.value)) << "point " << p;
    const double lp = model.log_density(x);
    EXPECT_NEAR(lp, direct.value, direct.tolerance()) << "point " << p;
    worst = std::max(worst, std::fabs(lp - direct.value) / direct.tolerance());
  }
  std::printf("    worst |model - direct| / tolerance = %.3f\n", worst);
}

TEST(ModelsGradient, Arma11DualsAgreeWithFiniteDifferences) {
  const Series s = posteriordb_series();
  const auto data = Arma11Data<double>::from_arrays(s.T, s.y);
  const DualGradient<Arma11<double>> model{data.host_model()};
  DerivativeAgreement agreement;
  for (int p = 0; p < kPoints; ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    const auto x = arma_point(p);
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

TEST(ModelsQuantities, Arma11RecordsReferenceVariablesInOrder) {
  const Series s = posteriordb_series();
  const auto data = Arma11Data<double>::from_arrays(s.T, s.y);
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), reference_variables());
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
