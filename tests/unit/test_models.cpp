// Tests of the built-in density models (include/myriad/models): every supplied gradient against
// forward-mode duals and central finite differences, supplied log densities against the generic
// ones and against direct formulas, the Gaussian's normalisation and Hessian, float against
// double, quantities, the logistic data container and argument validation.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/expect_error.hpp"
#include "common/third_derivative.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/autodiff.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/eight_schools.hpp"
#include "myriad/models/funnel.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/logistic.hpp"

namespace {

using myriad::test::third_derivative;

using myriad::Dual;
using myriad::models::EightSchools;
using myriad::models::Funnel;
using myriad::models::Gaussian;
using myriad::models::Logistic;
using myriad::models::LogisticData;

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr std::uint64_t kPointSeed = 20240611;
constexpr int kPoints = 8;

// ---------------------------------------------------------------------------------------------
// Test points: standard normals from myriad's own streams (identical on every machine), one
// chain per point, mapped into the region where each model has its mass.

std::vector<double> standard_normal_point(int point, int dim) {
  std::vector<double> z(dim);
  myriad::RandomStream(kPointSeed, point).fill_normal<double>(0, myriad::Purpose::user, z, dim);
  return z;
}

// ---------------------------------------------------------------------------------------------

/// Largest observed error / tolerance ratios, reported by the tests for the record.
struct DerivativeAgreement {
  double dual_ratio = 0;      ///< max |supplied − dual| / tolerance
  double fd_ratio = 0;        ///< max |supplied − finite difference| / tolerance
  double value_ratio = 0;     ///< max |supplied log p − generic log p| / tolerance
  double dual_rel_error = 0;  ///< max |supplied − dual| / (1 + ‖∇‖∞)
  double fd_abs_error = 0;    ///< max |supplied − finite difference|
};

/// Checks, at x, that the model's own log density and gradient agree with (a) the generic
/// log_density on plain doubles, (b) forward-mode duals and (c) central finite differences.
template <class Model>
void expect_consistent_derivatives(const Model& model, const std::vector<double>& x,
                                   DerivativeAgreement& agreement) {
  const int dim = model.dim();
  ASSERT_EQ(static_cast<int>(x.size()), dim);
  std::vector<double> grad(dim), dual_grad(dim);
  const double lp = model.log_density_gradient(x, grad);
  const double lp_generic = model.log_density(x);
  const double lp_dual = myriad::gradient_by_duals(model, x, dual_grad, dim);
  ASSERT_TRUE(std::isfinite(lp));

  // (a) Same function, different operation order: a few ulps of the summed magnitude.
  const double value_tol = 1e-12 * (1 + std::fabs(lp));
  EXPECT_NEAR(lp, lp_generic, value_tol);
  EXPECT_NEAR(lp_dual, lp_generic, value_tol);
  agreement.value_ratio = std::max(agreement.value_ratio, std::fabs(lp - lp_generic) / value_tol);

  double grad_norm = 0;
  for (double g : dual_grad) grad_norm = std::max(grad_norm, std::fabs(g));
  for (int i = 0; i < dim; ++i) {
    // (b) Duals compute the same derivative exactly up to rounding: 1e-12 relative to the
    // gradient's scale (components can cancel to near zero, so not to each component).
    const double dual_tol = 1e-12 * (1 + grad_norm);
    EXPECT_NEAR(grad[i], dual_grad[i], dual_tol) << "component " << i;
    agreement.dual_ratio =
        std::max(agreement.dual_ratio, std::fabs(grad[i] - dual_grad[i]) / dual_tol);
    agreement.dual_rel_error =
        std::max(agreement.dual_rel_error, std::fabs(grad[i] - dual_grad[i]) / (1 + grad_norm));

    // (c) Central differences with h = 1e-5·max(1, |x_i|). Error bound (e.g. Nocedal & Wright,
    // "Numerical Optimization", §8.1): truncation h²|f'''(ξ)|/6 with ξ within h of x_i — f''' at
    // x_i from triple duals, h far below its scale of variation — plus rounding: each f is a
    // sum of at most ~50 terms of one sign (log-likelihood and log-prior contributions), so its
    // floating-point error is at most ~64 ε (1 + |f|) (Higham, "Accuracy and Stability of
    // Numerical Algorithms", §4.2), and the difference quotient multiplies that by 1/h. A safety
    // factor of 4 covers the remaining slack; a wrong derivative term is off by O(1).
    const double h = 1e-5 * std::max(1.0, std::fabs(x[i]));
    std::vector<double> xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    const double step = xp[i] - xm[i];  // exact spacing of the representable points
    const double fd = (model.log_density(xp) - model.log_density(xm)) / step;
    const double f3 = third_derivative(model, x, i);
    const double fd_tol = 4 * (h * h * std::fabs(f3) / 6 + 64 * kEps * (1 + std::fabs(lp)) / h);
    EXPECT_NEAR(grad[i], fd, fd_tol) << "component " << i << ", f''' = " << f3;
    agreement.fd_ratio = std::max(agreement.fd_ratio, std::fabs(grad[i] - fd) / fd_tol);
    agreement.fd_abs_error = std::max(agreement.fd_abs_error, std::fabs(grad[i] - fd));
  }
}

template <class Model>
void check_model_derivatives(const Model& model,
                             const std::function<std::vector<double>(int)>& point) {
  DerivativeAgreement agreement;
  for (int p = 0; p < kPoints; ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    expect_consistent_derivatives(model, point(p), agreement);
  }
  ::testing::Test::RecordProperty("max_dual_error_over_tolerance",
                                  std::to_string(agreement.dual_ratio));
  ::testing::Test::RecordProperty("max_fd_error_over_tolerance",
                                  std::to_string(agreement.fd_ratio));
  std::printf(
      "    max |grad - dual|/(1+|grad|inf) = %.2e, max |grad - fd| = %.2e, "
      "worst ratios to tolerance: dual %.3f, fd %.3f, value %.3f\n",
      agreement.dual_rel_error, agreement.fd_abs_error, agreement.dual_ratio, agreement.fd_ratio,
      agreement.value_ratio);
}

// ---------------------------------------------------------------------------------------------
// Models under test.

Gaussian<double> positive_rho_gaussian() { return Gaussian<double>::make(5, 0.3, 1.0, 2.0); }
Gaussian<double> negative_rho_gaussian() { return Gaussian<double>::make(4, -0.3, -0.5, 0.7); }

std::vector<double> gaussian_point(const Gaussian<double>& g, int p) {
  std::vector<double> x = standard_normal_point(p, g.dim());
  for (double& v : x) v = g.mean + 1.5 * g.sd * v;
  return x;
}

const LogisticData<double>& logistic_data() {
  static const LogisticData<double> data = LogisticData<double>::synthetic(50, 4, 7);
  return data;
}

std::vector<double> logistic_point(int p) {
  std::vector<double> beta = standard_normal_point(p, 4);
  for (double& b : beta) b *= 1.5;
  return beta;
}

std::vector<double> eight_schools_point(int p) {
  std::vector<double> z = standard_normal_point(p, 10);
  z[0] *= 5;                          // μ on its prior scale; log τ and η standard normal
  if (p == kPoints - 1) z[1] = 4.0;   // τ ≈ 55: far in the half-Cauchy tail
  if (p == kPoints - 2) z[1] = -5.0;  // τ ≈ 0.007: the neck of the funnel
  return z;
}

std::vector<double> funnel_point(int p) {
  std::vector<double> z = standard_normal_point(p, 6);
  z[0] *= 3;
  for (int i = 1; i < 6; ++i) z[i] *= std::exp(z[0] / 2);
  return z;
}

// ---------------------------------------------------------------------------------------------
// Supplied gradient = duals = finite differences; supplied log p = generic log p.

TEST(ModelsGradient, GaussianPositiveRho) {
  const auto g = positive_rho_gaussian();
  check_model_derivatives(g, [&](int p) { return gaussian_point(g, p); });
}

TEST(ModelsGradient, GaussianNegativeRho) {
  const auto g = negative_rho_gaussian();
  check_model_derivatives(g, [&](int p) { return gaussian_point(g, p); });
}

TEST(ModelsGradient, Logistic) {
  check_model_derivatives(logistic_data().host_model(2.5), logistic_point);
}

TEST(ModelsGradient, LogisticWithSeparatedLinearPredictor) {
  // Large |η| exercises both branches of the stable softplus/sigmoid without overflow.
  std::vector<double> x = {1, 40, 1, -40, 1, 0.5, 1, -700};
  std::vector<double> y = {1, 0, 0, 1};
  const auto data = LogisticData<double>::from_arrays(x, y, 4, 2);
  check_model_derivatives(data.host_model(10), [](int p) {
    return std::vector<double>{0.1 * p - 0.3, 1.0 + 0.05 * p};
  });
}

TEST(ModelsGradient, EightSchools) {
  check_model_derivatives(EightSchools<double>::make(), eight_schools_point);
}

TEST(ModelsGradient, Funnel) { check_model_derivatives(Funnel<double>::make(6), funnel_point); }

// ---------------------------------------------------------------------------------------------
// Log densities against direct formulas written independently with <cmath>.

double normal_log_pdf(double x, double mu, double sd) {
  const double z = (x - mu) / sd;
  return -0.5 * std::log(2 * M_PI) - std::log(sd) - 0.5 * z * z;
}

TEST(ModelsLogDensity, LogisticMatchesBernoulliLikelihoodPlusNormalPrior) {
  const auto& data = logistic_data();
  const double prior_sd = 2.5;
  const auto model = data.host_model(prior_sd);
  for (int p = 0; p < kPoints; ++p) {
    const auto beta = logistic_point(p);
    double direct = 0;
    for (int j = 0; j < 4; ++j) direct += normal_log_pdf(beta[j], 0, prior_sd);
    for (int i = 0; i < data.n(); ++i) {
      double eta = 0;
      for (int j = 0; j < 4; ++j) eta += data.x()[i * 4 + j] * beta[j];
      const double prob = 1 / (1 + std::exp(-eta));
      direct += data.y()[i] == 1 ? std::log(prob) : std::log(1 - prob);
    }
    EXPECT_NEAR(model.log_density(beta), direct, 1e-12 * std::fabs(direct)) << "point " << p;
  }
}

TEST(ModelsLogDensity, EightSchoolsMatchesHierarchicalModel) {
  const double y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
  const double sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};
  const auto model = EightSchools<double>::make();
  for (int p = 0; p < kPoints; ++p) {
    const auto z = eight_schools_point(p);
    const double mu = z[0], tau = std::exp(z[1]);
    // p(τ) = 2 / (π·5·(1 + (τ/5)²)) on τ > 0, and dτ/d log τ = τ.
    double direct = normal_log_pdf(mu, 0, 5) +
                    std::log(2 / (M_PI * 5 * (1 + (tau / 5) * (tau / 5)))) + std::log(tau);
    for (int j = 0; j < 8; ++j) {
      direct +=
          normal_log_pdf(z[2 + j], 0, 1) + normal_log_pdf(y[j], mu + tau * z[2 + j], sigma[j]);
    }
    EXPECT_NEAR(model.log_density(z), direct, 1e-12 * std::fabs(direct)) << "point " << p;
  }
}

TEST(ModelsLogDensity, FunnelMatchesNealsDefinition) {
  const auto model = Funnel<double>::make(6);
  for (int p = 0; p < kPoints; ++p) {
    const auto z = funnel_point(p);
    double direct = normal_log_pdf(z[0], 0, 3);
    for (int i = 1; i < 6; ++i) direct += normal_log_pdf(z[i], 0, std::exp(z[0] / 2));
    EXPECT_NEAR(model.log_density(z), direct, 1e-12 * (1 + std::fabs(direct))) << "point " << p;
  }
}

TEST(ModelsLogDensity, FunnelIsNormalisedAlongV) {
  // The marginal of v is N(v; 0, 3), i.e. ∫ p(v, x) dx = N(v; 0, 3) at every v. For D = 2 the
  // integral is one-dimensional: trapezoid rule on ±12 sd of x | v with 20000 steps, whose
  // error for a Gaussian integrand (and the truncated tails, ~e^{−72}) is far below 1e-9.
  const auto model = Funnel<double>::make(2);
  for (double v : {-4.0, 0.0, 2.5}) {
    const double sd = std::exp(v / 2);
    const int steps = 20000;
    const double width = 24 * sd / steps;
    double integral = 0;
    for (int k = 0; k <= steps; ++k) {
      const double x = -12 * sd + k * width;
      const double weight = (k == 0 || k == steps) ? 0.5 : 1.0;
      integral += weight * std::exp(model.log_density(std::vector<double>{v, x}));
    }
    integral *= width;
    EXPECT_NEAR(std::log(integral), normal_log_pdf(v, 0, 3), 1e-9) << "v = " << v;
  }
}

// ---------------------------------------------------------------------------------------------
// Gaussian: exact normalised density and Hessian −Σ⁻¹ against dense linear algebra.

/// Σ = s²[(1 − ρ)I + ρ11ᵀ] as a dense D × D matrix.
std::vector<double> dense_covariance(int dim, double rho, double sd) {
  std::vector<double> cov(dim * dim);
  for (int i = 0; i < dim; ++i)
    for (int j = 0; j < dim; ++j) cov[i * dim + j] = sd * sd * (i == j ? 1.0 : rho);
  return cov;
}

/// Lower Cholesky factor L with LLᵀ = A (Golub & Van Loan, Algorithm 4.2.1).
std::vector<double> cholesky(const std::vector<double>& a, int n) {
  std::vector<double> l(n * n, 0.0);
  for (int j = 0; j < n; ++j) {
    double diag = a[j * n + j];
    for (int k = 0; k < j; ++k) diag -= l[j * n + k] * l[j * n + k];
    l[j * n + j] = std::sqrt(diag);
    for (int i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (int k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = s / l[j * n + j];
    }
  }
  return l;
}

/// Solves LLᵀ w = b.
std::vector<double> cholesky_solve(const std::vector<double>& l, int n, std::vector<double> b) {
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < i; ++k) b[i] -= l[i * n + k] * b[k];
    b[i] /= l[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int k = i + 1; k < n; ++k) b[i] -= l[k * n + i] * b[k];
    b[i] /= l[i * n + i];
  }
  return b;
}

TEST(ModelsGaussian, LogDensityIsExactNormalisedPdf) {
  const int dim = 4;
  for (double rho : {0.6, -0.3}) {
    const double mean = 0.5, sd = 1.7;
    const auto model = Gaussian<double>::make(dim, rho, mean, sd);
    const auto cov = dense_covariance(dim, rho, sd);
    const auto l = cholesky(cov, dim);
    double log_det = 0;
    for (int i = 0; i < dim; ++i) log_det += 2 * std::log(l[i * dim + i]);
    for (int p = 0; p < kPoints; ++p) {
      const auto x = gaussian_point(model, p);
      std::vector<double> r(dim);
      for (int i = 0; i < dim; ++i) r[i] = x[i] - mean;
      const auto w = cholesky_solve(l, dim, r);
      double quad = 0;
      for (int i = 0; i < dim; ++i) quad += r[i] * w[i];
      const double exact = -0.5 * dim * std::log(2 * M_PI) - 0.5 * log_det - 0.5 * quad;
      EXPECT_NEAR(model.log_density(x), exact, 1e-12 * (1 + std::fabs(exact)))
          << "rho " << rho << ", point " << p;
    }
  }
}

TEST(ModelsGaussian, HessianByNestedDualsIsMinusInverseCovariance) {
  const int dim = 4;
  for (double rho : {0.6, -0.3}) {
    const double sd = 1.7;
    const auto model = Gaussian<double>::make(dim, rho, 0.5, sd);
    const auto l = cholesky(dense_covariance(dim, rho, sd), dim);
    const auto x = gaussian_point(model, 0);
    for (int j = 0; j < dim; ++j) {
      std::vector<double> unit(dim, 0.0);
      unit[j] = 1;
      const auto column = cholesky_solve(l, dim, unit);  // column j of Σ⁻¹
      for (int i = 0; i < dim; ++i) {
        EXPECT_NEAR(myriad::hessian_entry_by_duals(model, x, i, j), -column[i], 1e-12)
            << "rho " << rho << ", entry (" << i << ", " << j << ")";
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// float instantiations: compile, stay trivially copyable and agree with double.

static_assert(std::is_trivially_copyable<Gaussian<float>>::value, "Gaussian<float>");
static_assert(std::is_trivially_copyable<Logistic<float>>::value, "Logistic<float>");
static_assert(std::is_trivially_copyable<Logistic<double>>::value, "Logistic<double>");
static_assert(std::is_trivially_copyable<EightSchools<float>>::value, "EightSchools<float>");
static_assert(std::is_trivially_copyable<EightSchools<double>>::value, "EightSchools<double>");
static_assert(std::is_trivially_copyable<Funnel<float>>::value, "Funnel<float>");
static_assert(std::is_trivially_copyable<Funnel<double>>::value, "Funnel<double>");
static_assert(myriad::model_has_gradient<Logistic<float>>, "logistic supplies its gradient");
static_assert(myriad::model_has_gradient<EightSchools<float>>, "eight schools supplies it");
static_assert(myriad::model_has_gradient<Funnel<float>>, "funnel supplies it");
static_assert(myriad::model_has_quantities<Logistic<double>>, "logistic names beta[j]");
static_assert(myriad::model_has_quantities<EightSchools<double>>, "eight schools names mu, ...");
static_assert(myriad::model_has_quantities<Funnel<double>>, "funnel names v, x[i]");

/// Evaluates the float model at the float-rounded point and the double model at the same
/// (exactly representable) point, so the difference is float arithmetic alone. A float sum of
/// ≤ 50 terms, each from a few operations and libm calls, is within ~200 ε_f of the summed
/// magnitude (Higham §4.2), and the summed magnitude is within a few times 1 + |f| (log p) or
/// 1 + ‖∇‖∞ (gradient) at these points: tolerance 1e-4 ≈ 840 ε_f relative to that scale.
template <class FloatModel, class DoubleModel>
void expect_float_agrees(const FloatModel& model_f, const DoubleModel& model_d,
                         const std::vector<double>& x, double& worst) {
  const int dim = model_d.dim();
  ASSERT_EQ(model_f.dim(), dim);
  std::vector<float> xf(x.begin(), x.end());
  std::vector<double> xd(xf.begin(), xf.end());
  std::vector<float> gf(dim), dual_gf(dim);
  std::vector<double> gd(dim);
  const float lp_f = model_f.log_density_gradient(xf, gf);
  const float lp_dual_f = myriad::gradient_by_duals(model_f, xf, dual_gf, dim);
  const double lp_d = model_d.log_density_gradient(xd, gd);
  const double value_tol = 1e-4 * (1 + std::fabs(lp_d));
  EXPECT_NEAR(lp_f, lp_d, value_tol);
  EXPECT_NEAR(lp_dual_f, lp_d, value_tol);
  EXPECT_NEAR(model_f.log_density(xf), lp_d, value_tol);
  worst = std::max(worst, std::fabs(lp_f - lp_d) / value_tol);
  double grad_norm = 0;
  for (double g : gd) grad_norm = std::max(grad_norm, std::fabs(g));
  const double grad_tol = 1e-4 * (1 + grad_norm);
  for (int i = 0; i < dim; ++i) {
    EXPECT_NEAR(gf[i], gd[i], grad_tol) << "component " << i;
    EXPECT_NEAR(dual_gf[i], gd[i], grad_tol) << "dual component " << i;
    worst = std::max(worst, std::fabs(gf[i] - gd[i]) / grad_tol);
  }
}

template <class FloatModel, class DoubleModel>
void check_float_model(const FloatModel& model_f, const DoubleModel& model_d,
                       const std::function<std::vector<double>(int)>& point) {
  double worst = 0;
  for (int p = 0; p < kPoints; ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    expect_float_agrees(model_f, model_d, point(p), worst);
  }
  std::printf("    worst float-vs-double error / tolerance = %.3f\n", worst);
}

TEST(ModelsFloat, GaussianAgreesWithDouble) {
  const auto g = positive_rho_gaussian();
  check_float_model(Gaussian<float>::make(5, 0.3, 1.0, 2.0), g,
                    [&](int p) { return gaussian_point(g, p); });
  const auto h = negative_rho_gaussian();
  check_float_model(Gaussian<float>::make(4, -0.3, -0.5, 0.7), h,
                    [&](int p) { return gaussian_point(h, p); });
}

TEST(ModelsFloat, LogisticAgreesWithDouble) {
  const auto data_f = LogisticData<float>::synthetic(50, 4, 7);
  // The double model sees the float-rounded data, so only the arithmetic differs.
  const auto data_d = LogisticData<double>::from_arrays(
      std::vector<double>(data_f.x().begin(), data_f.x().end()),
      std::vector<double>(data_f.y().begin(), data_f.y().end()), 50, 4);
  check_float_model(data_f.host_model(2.5f), data_d.host_model(2.5), logistic_point);
}

TEST(ModelsFloat, EightSchoolsAgreesWithDouble) {
  check_float_model(EightSchools<float>::make(), EightSchools<double>::make(), eight_schools_point);
}

TEST(ModelsFloat, FunnelAgreesWithDouble) {
  check_float_model(Funnel<float>::make(6), Funnel<double>::make(6), funnel_point);
}

// ---------------------------------------------------------------------------------------------
// Recorded quantities and their names.

TEST(ModelsQuantities, EightSchoolsRecordsMuTauAndSchoolEffects) {
  const auto model = EightSchools<double>::make();
  ASSERT_EQ(myriad::recorded_quantity_count(model), 10);
  EXPECT_EQ(myriad::recorded_quantity_name(model, 0), "mu");
  EXPECT_EQ(myriad::recorded_quantity_name(model, 1), "tau");
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(myriad::recorded_quantity_name(model, 2 + j), "theta[" + std::to_string(j) + "]");
  }
  const auto z = eight_schools_point(0);
  std::vector<double> q(10);
  myriad::record_quantities(model, z, q);
  EXPECT_EQ(q[0], z[0]);
  EXPECT_DOUBLE_EQ(q[1], std::exp(z[1]));
  for (int j = 0; j < 8; ++j) EXPECT_DOUBLE_EQ(q[2 + j], z[0] + std::exp(z[1]) * z[2 + j]);
}

TEST(ModelsQuantities, FunnelRecordsParametersAsVAndX) {
  const auto model = Funnel<double>::make(6);
  ASSERT_EQ(myriad::recorded_quantity_count(model), 6);
  EXPECT_EQ(myriad::recorded_quantity_name(model, 0), "v");
  EXPECT_EQ(myriad::recorded_quantity_name(model, 1), "x[1]");
  EXPECT_EQ(myriad::recorded_quantity_name(model, 5), "x[5]");
  const auto z = funnel_point(1);
  std::vector<double> q(6);
  myriad::record_quantities(model, z, q);
  EXPECT_EQ(q, z);
}

TEST(ModelsQuantities, LogisticRecordsBeta) {
  const auto model = logistic_data().host_model(10);
  ASSERT_EQ(myriad::recorded_quantity_count(model), 4);
  EXPECT_EQ(myriad::recorded_quantity_name(model, 0), "beta[0]");
  EXPECT_EQ(myriad::recorded_quantity_name(model, 3), "beta[3]");
  const auto beta = logistic_point(2);
  std::vector<double> q(4);
  myriad::record_quantities(model, beta, q);
  EXPECT_EQ(q, beta);
}

// ---------------------------------------------------------------------------------------------
// Logistic data: determinism, structure, validation, device upload.

TEST(ModelsLogisticData, SyntheticIsDeterministicPerSeed) {
  const auto a = LogisticData<double>::synthetic(50, 4, 7);
  const auto b = LogisticData<double>::synthetic(50, 4, 7);
  const auto c = LogisticData<double>::synthetic(50, 4, 8);
  EXPECT_EQ(a.x(), b.x());
  EXPECT_EQ(a.y(), b.y());
  EXPECT_EQ(a.true_beta(), b.true_beta());
  EXPECT_NE(a.x(), c.x());
  EXPECT_NE(a.y(), c.y());
  EXPECT_NE(a.true_beta(), c.true_beta());
  // Both precisions see the same data: the float data are the double data rounded.
  const auto f = LogisticData<float>::synthetic(50, 4, 7);
  ASSERT_EQ(f.x().size(), a.x().size());
  for (std::size_t k = 0; k < a.x().size(); ++k) EXPECT_EQ(f.x()[k], float(a.x()[k]));
  for (std::size_t i = 0; i < a.y().size(); ++i) EXPECT_EQ(f.y()[i], float(a.y()[i]));
}

TEST(ModelsLogisticData, SyntheticHasInterceptColumnAndBinaryLabels) {
  const auto data = LogisticData<double>::synthetic(50, 4, 7);
  EXPECT_EQ(data.n(), 50);
  EXPECT_EQ(data.d(), 4);
  ASSERT_EQ(data.x().size(), 200u);
  ASSERT_EQ(data.y().size(), 50u);
  EXPECT_EQ(data.true_beta().size(), 4u);
  int ones = 0;
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(data.x()[i * 4], 1.0) << "row " << i;
    EXPECT_TRUE(data.y()[i] == 0 || data.y()[i] == 1) << "row " << i;
    ones += data.y()[i] == 1;
  }
  EXPECT_GT(ones, 0);
  EXPECT_LT(ones, 50);
  const auto model = data.host_model(10);
  EXPECT_EQ(model.x, data.x().data());
  EXPECT_EQ(model.y, data.y().data());
  EXPECT_EQ(model.n, 50);
  EXPECT_EQ(model.d, 4);
  EXPECT_EQ(model.prior_sd, 10.0);
  EXPECT_EQ(model.dim(), 4);
}

TEST(ModelsLogisticData, SyntheticLabelsFollowTheTrueModel) {
  // n = 20000: Σ (y_i − σ(x_iᵀβ)) has mean 0 and variance Σ σ(1 − σ) given X; covariates have
  // mean 0 and variance 1. Each checked within 5 standard errors.
  const int n = 20000, d = 3;
  const auto data = LogisticData<double>::synthetic(n, d, 11);
  double residual = 0, variance = 0;
  double x_sum = 0, x_sq = 0;
  for (int i = 0; i < n; ++i) {
    double eta = 0;
    for (int j = 0; j < d; ++j) eta += data.x()[i * d + j] * data.true_beta()[j];
    const double p = 1 / (1 + std::exp(-eta));
    residual += data.y()[i] - p;
    variance += p * (1 - p);
    x_sum += data.x()[i * d + 1];
    x_sq += data.x()[i * d + 1] * data.x()[i * d + 1];
  }
  EXPECT_LE(std::fabs(residual), 5 * std::sqrt(variance));
  EXPECT_LE(std::fabs(x_sum / n), 5 * std::sqrt(1.0 / n));
  EXPECT_LE(std::fabs(x_sq / n - 1), 5 * std::sqrt(2.0 / n));
}

using myriad::testing::expect_invalid_argument;

TEST(ModelsLogisticData, FromArraysValidatesData) {
  const int n = 5, d = 4;
  std::vector<double> x(n * d, 0.5), y = {0, 1, 1, 0, 1};
  EXPECT_NO_THROW(LogisticData<double>::from_arrays(x, y, n, d));

  auto bad_x = x;
  bad_x[3 * d + 2] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(bad_x, y, n, d); },
                          "logistic: x[3][2] is not finite");
  bad_x = x;
  bad_x[1 * d + 0] = std::numeric_limits<double>::infinity();
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(bad_x, y, n, d); },
                          "logistic: x[1][0] is not finite");

  auto bad_y = y;
  bad_y[4] = 2;
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(x, bad_y, n, d); },
                          "logistic: y[4] must be 0 or 1, got 2");
  bad_y[4] = 0.5;
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(x, bad_y, n, d); },
                          "logistic: y[4] must be 0 or 1, got 0.5");

  expect_invalid_argument(
      [&] { LogisticData<double>::from_arrays(std::vector<double>(19, 0.0), y, n, d); },
      "logistic: x has 19 entries, expected n*d = 5*4 = 20");
  expect_invalid_argument(
      [&] {
        LogisticData<double>::from_arrays(x, {0, 1}, n, d);
      },
      "logistic: y has 2 entries, expected n = 5");
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(x, y, 0, d); },
                          "logistic: n must be >= 1, got 0");
  expect_invalid_argument([&] { LogisticData<float>::synthetic(10, 0, 1); },
                          "logistic: d must be >= 1, got 0");
}

TEST(ModelsLogisticData, ModelsRejectNonPositivePriorSd) {
  const auto data = LogisticData<double>::synthetic(10, 2, 1);
  expect_invalid_argument([&] { data.host_model(0.0); },
                          "logistic: prior_sd must be positive, got 0");
  expect_invalid_argument([&] { data.host_model(-2.0); },
                          "logistic: prior_sd must be positive, got -2");
  expect_invalid_argument([&] { data.host_model(std::numeric_limits<double>::quiet_NaN()); },
                          "logistic: prior_sd must be positive, got nan");
}

TEST(ModelsLogisticData, DeviceModelUploadsOnce) {
  auto data = LogisticData<double>::synthetic(50, 4, 7);
#if defined(MYRIAD_HAS_CUDA)
  Logistic<double> model;
  try {
    model = data.device_model(10);
  } catch (const myriad::cuda_error& e) {
    GTEST_SKIP() << "CUDA build but no usable device: " << e.what();
  }
  EXPECT_NE(model.x, data.x().data());
  const auto x = myriad::download(model.x, data.x().size());
  const auto y = myriad::download(model.y, data.y().size());
  EXPECT_EQ(x, data.x());
  EXPECT_EQ(y, data.y());
  const auto again = data.device_model(5);  // no second upload: same device buffers
  EXPECT_EQ(again.x, model.x);
  EXPECT_EQ(again.y, model.y);
  EXPECT_EQ(again.prior_sd, 5.0);
#else
  EXPECT_THROW(data.device_model(10), myriad::unavailable_error);
#endif
}

// ---------------------------------------------------------------------------------------------
// make() validation.

TEST(ModelsMake, GaussianRejectsBadArguments) {
  expect_invalid_argument([] { Gaussian<double>::make(5, 1.0); },
                          "gaussian: rho must lie in (-0.25, 1) for dim 5, got 1");
  expect_invalid_argument([] { Gaussian<double>::make(5, -0.25); },
                          "gaussian: rho must lie in (-0.25, 1) for dim 5, got -0.25");
  expect_invalid_argument([] { Gaussian<double>::make(5, -0.3); },
                          "gaussian: rho must lie in (-0.25, 1) for dim 5, got -0.3");
  expect_invalid_argument([] { Gaussian<double>::make(0, 0.0); },
                          "gaussian: dim must be >= 1, got 0");
  expect_invalid_argument([] { Gaussian<double>::make(3, 0.0, 0.0, 0.0); },
                          "gaussian: sd must be positive, got 0");
  EXPECT_NO_THROW(Gaussian<double>::make(5, -0.24));
}

TEST(ModelsMake, FunnelRejectsDimBelowTwo) {
  expect_invalid_argument([] { Funnel<double>::make(1); }, "funnel: dim must be >= 2, got 1");
  expect_invalid_argument([] { Funnel<float>::make(-3); }, "funnel: dim must be >= 2, got -3");
  EXPECT_EQ(Funnel<double>::make().dim(), 10);
  EXPECT_EQ(Funnel<double>::make(2).dim(), 2);
}

TEST(ModelsMake, EightSchoolsValidatesCustomData) {
  const std::array<double, 8> y = {28, 8, -3, 7, -1, 1, 18, 12};
  std::array<double, 8> sigma = {15, 10, 16, 11, 9, 11, 10, 18};
  const auto custom = EightSchools<double>::make(y, sigma);
  const auto standard = EightSchools<double>::make();
  const auto z = eight_schools_point(3);
  EXPECT_EQ(custom.log_density(z), standard.log_density(z));
  EXPECT_EQ(standard.dim(), 10);
  sigma[3] = 0;
  expect_invalid_argument([&] { EightSchools<double>::make(y, sigma); },
                          "eight_schools: sigma[3] must be positive, got 0");
}

}  // namespace
