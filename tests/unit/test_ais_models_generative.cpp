// Tests of the built-in annealing targets with exact answers (include/myriad/models):
// linear_generative (hais.md §9.1), boltzmann_relaxation (thesis-methods.md §9.6) and the exact
// log Z / exact samples of gaussian. Supplied gradients against forward-mode duals and central
// finite differences; exact log Z against independent routes (the posterior identity
// log p(x, a) − log p(a | x) = log p(x), numerical quadrature, brute-force sums over states);
// exact samples' moments within 5 standard errors; data, parameters and argument checks.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/expect_error.hpp"
#include "common/third_derivative.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/model/autodiff.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"
#include "myriad/models/gaussian.hpp"
#include "myriad/models/linear_generative.hpp"

namespace {

using myriad::test::third_derivative;

using myriad::Dual;
using myriad::RandomStream;
using myriad::models::BoltzmannRelaxation;
using myriad::models::BoltzmannRelaxationData;
using myriad::models::Gaussian;
using myriad::models::LinearGenerative;
using myriad::models::LinearGenerativeData;
using myriad::models::LinearGenerativePoint;
using myriad::models::LinearGenerativePrior;

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kEpsFloat = std::numeric_limits<float>::epsilon();
constexpr std::uint64_t kPointSeed = 20240612;
constexpr std::uint64_t kSampleSeed = 77;
constexpr double kSigmas = 5;  // statistical checks: within 5 standard errors

std::vector<double> standard_normals(std::uint64_t stream, int n) {
  std::vector<double> z(n);
  RandomStream(kPointSeed, stream).fill_normal<double>(0, myriad::Purpose::user, z, n);
  return z;
}

double at(const std::vector<double>& a, int cols, int i, int j) {
  return a[static_cast<std::size_t>(i) * cols + j];
}

using myriad::testing::expect_invalid_argument;

// ---------------------------------------------------------------------------------------------
// Derivative checks. Each model supplies the rounding scales of its sums: `value` bounds
// Σ|terms| of log p and `grad[i]` that of ∂_i log p, and `terms` the longest chain of
// floating-point operations feeding one result, so that a double evaluation is within
// terms · ε · scale of the exact value (Higham, "Accuracy and Stability of Numerical
// Algorithms", 2nd ed., §3.1 and §4.2: γ_n ≤ 1.01 n u for sums and dot products).

struct RoundingScales {
  double value = 0;
  std::vector<double> grad;
  double terms = 0;
};

/// The supplied log density and gradient at x against (a) the generic log_density, (b) the
/// gradient by forward-mode duals, (c) central differences. Returns the worst ratio of error to
/// tolerance over the three.
template <class Model>
double expect_consistent_derivatives(const Model& model, const std::vector<double>& x,
                                     const RoundingScales& scales) {
  const int dim = model.dim();
  std::vector<double> grad(dim), dual_grad(dim);
  const double lp = model.log_density_gradient(x, grad);
  const double lp_generic = model.log_density(x);
  const double lp_dual = myriad::gradient_by_duals(model, x, dual_grad, dim);
  EXPECT_TRUE(std::isfinite(lp));
  double worst = 0;
  // (a), (b): the same sums in different orders, each within terms · ε · scale of the truth.
  const double value_tol = 2 * scales.terms * kEps * (1 + scales.value);
  EXPECT_NEAR(lp, lp_generic, value_tol);
  EXPECT_NEAR(lp_dual, lp_generic, value_tol);
  worst = std::max(worst, std::fabs(lp - lp_generic) / value_tol);
  for (int i = 0; i < dim; ++i) {
    const double dual_tol = 2 * scales.terms * kEps * (1 + scales.grad[i]);
    EXPECT_NEAR(grad[i], dual_grad[i], dual_tol) << "component " << i;
    worst = std::max(worst, std::fabs(grad[i] - dual_grad[i]) / dual_tol);

    // (c) h = 1e-5·max(1, |x_i|): truncation h²|f'''|/6 (f''' at x_i from triple duals, h far
    // below its scale of variation) plus rounding 2 δf / (2h), δf = terms · ε · scale; twice
    // that for slack. A wrong derivative term is off by O(1) of the gradient's scale.
    const double h = 1e-5 * std::max(1.0, std::fabs(x[i]));
    std::vector<double> xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    const double step = xp[i] - xm[i];
    const double fd = (model.log_density(xp) - model.log_density(xm)) / step;
    const double f3 = third_derivative(model, x, i);
    const double fd_tol =
        2 * (h * h * std::fabs(f3) / 6 + scales.terms * kEps * (1 + scales.value) / h);
    EXPECT_NEAR(grad[i], fd, fd_tol) << "component " << i << ", f''' = " << f3;
    worst = std::max(worst, std::fabs(grad[i] - fd) / fd_tol);
  }
  return worst;
}

/// The float model at the float-rounded point against the double model (on the same float
/// data) at that point: the difference is float arithmetic alone, within terms · ε_f · scale.
template <class FloatModel, class DoubleModel>
double expect_float_agrees(const FloatModel& model_f, const DoubleModel& model_d,
                           const std::vector<double>& x, const RoundingScales& scales) {
  const int dim = model_d.dim();
  std::vector<float> xf(x.begin(), x.end());
  std::vector<double> xd(xf.begin(), xf.end());
  std::vector<float> gf(dim);
  std::vector<double> gd(dim);
  const float lp_f = model_f.log_density_gradient(xf, gf);
  const double lp_d = model_d.log_density_gradient(xd, gd);
  const double value_tol = 2 * scales.terms * kEpsFloat * (1 + scales.value);
  EXPECT_NEAR(lp_f, lp_d, value_tol);
  EXPECT_NEAR(model_f.log_density(xf), lp_d, value_tol);
  double worst = std::fabs(lp_f - lp_d) / value_tol;
  for (int i = 0; i < dim; ++i) {
    const double grad_tol = 2 * scales.terms * kEpsFloat * (1 + scales.grad[i]);
    EXPECT_NEAR(gf[i], gd[i], grad_tol) << "component " << i;
    worst = std::max(worst, std::fabs(gf[i] - gd[i]) / grad_tol);
  }
  return worst;
}

// ---------------------------------------------------------------------------------------------
// Moments of exact samples.

/// `draws` exact samples of problem p, one row each (draw index = row), from RandomStream(seed, p).
template <class Model>
std::vector<std::vector<double>> exact_draws(const Model& model, int p, int dim, int draws) {
  const RandomStream rng(kSampleSeed, static_cast<std::uint64_t>(p));
  std::vector<std::vector<double>> out(draws, std::vector<double>(dim));
  for (int d = 0; d < draws; ++d) model.exact_sample(p, rng, static_cast<std::uint32_t>(d), out[d]);
  return out;
}

/// Sample mean and covariance (about the true mean μ) against a Gaussian N(μ, Σ): the mean's
/// standard error is √(Σ_ii/N) and that of (1/N) Σ (x_i − μ_i)(x_j − μ_j) is
/// √((Σ_ii Σ_jj + Σ_ij²)/N) (Isserlis). Returns the largest |error| / standard error.
double expect_gaussian_moments(const std::vector<std::vector<double>>& draws,
                               const std::vector<double>& mean, const std::vector<double>& cov) {
  const int n = static_cast<int>(draws.size());
  const int dim = static_cast<int>(mean.size());
  double worst = 0;
  for (int i = 0; i < dim; ++i) {
    double sum = 0;
    for (const auto& x : draws) sum += x[i];
    const double se = std::sqrt(at(cov, dim, i, i) / n);
    const double z = (sum / n - mean[i]) / se;
    EXPECT_LT(std::fabs(z), kSigmas) << "mean " << i;
    worst = std::max(worst, std::fabs(z));
    for (int j = 0; j <= i; ++j) {
      double product = 0;
      for (const auto& x : draws) product += (x[i] - mean[i]) * (x[j] - mean[j]);
      const double s_ij = at(cov, dim, i, j);
      const double se_ij = std::sqrt((at(cov, dim, i, i) * at(cov, dim, j, j) + s_ij * s_ij) / n);
      const double z_ij = (product / n - s_ij) / se_ij;
      EXPECT_LT(std::fabs(z_ij), kSigmas) << "covariance " << i << ", " << j;
      worst = std::max(worst, std::fabs(z_ij));
    }
  }
  return worst;
}

/// log ∫ exp(f) over an axis-aligned box by the trapezoid rule with `steps` intervals per axis
/// (one or two dimensions), with the maximum subtracted before exponentiating.
double log_trapezoid(const std::function<double(const std::vector<double>&)>& f,
                     const std::vector<double>& lo, const std::vector<double>& hi, int steps) {
  const int dim = static_cast<int>(lo.size());
  std::vector<double> h(dim);
  for (int d = 0; d < dim; ++d) h[d] = (hi[d] - lo[d]) / steps;
  std::vector<double> values;
  std::vector<double> weights;
  std::vector<double> x(dim);
  const int n1 = dim == 2 ? steps + 1 : 1;
  for (int a = 0; a <= steps; ++a) {
    for (int b = 0; b < n1; ++b) {
      x[0] = lo[0] + a * h[0];
      double w = (a == 0 || a == steps) ? 0.5 : 1.0;
      if (dim == 2) {
        x[1] = lo[1] + b * h[1];
        w *= (b == 0 || b == steps) ? 0.5 : 1.0;
      }
      values.push_back(f(x));
      weights.push_back(w);
    }
  }
  const double max_value = *std::max_element(values.begin(), values.end());
  double sum = 0;
  for (std::size_t k = 0; k < values.size(); ++k)
    sum += weights[k] * std::exp(values[k] - max_value);
  double volume = 1;
  for (double v : h) volume *= v;
  return max_value + std::log(sum * volume);
}

// =============================================================================================
// Concept membership.

static_assert(std::is_trivially_copyable_v<LinearGenerative<float>>, "views are copied to kernels");
static_assert(std::is_trivially_copyable_v<LinearGenerativePoint<double>>, "");
static_assert(std::is_trivially_copyable_v<BoltzmannRelaxation<float>>, "");
static_assert(myriad::target_has_problems<LinearGenerative<double>>, "one problem per point");
static_assert(!myriad::target_has_problems<BoltzmannRelaxation<double>>, "one problem");
static_assert(myriad::target_has_exact_log_z<LinearGenerative<double>>, "");
static_assert(myriad::target_has_exact_log_z<BoltzmannRelaxation<float>>, "");
static_assert(myriad::target_has_exact_log_z<Gaussian<double>>, "");
static_assert(myriad::target_has_exact_sample<LinearGenerative<float>>, "");
static_assert(myriad::target_has_exact_sample<BoltzmannRelaxation<double>>, "");
static_assert(myriad::target_has_exact_sample<Gaussian<float>>, "");
static_assert(myriad::model_has_gradient<LinearGenerativePoint<float>>, "");
static_assert(myriad::model_has_gradient<BoltzmannRelaxation<double>>, "");
static_assert(!myriad::target_has_bounds<LinearGenerative<double>>, "unbounded latents");
static_assert(!std::is_copy_constructible_v<LinearGenerativeData<double>>, "owns device memory");
static_assert(std::is_move_constructible_v<LinearGenerativeData<double>>, "");
static_assert(!std::is_copy_constructible_v<BoltzmannRelaxationData<double>>, "");
static_assert(std::is_move_constructible_v<BoltzmannRelaxationData<double>>, "");
static_assert(
    std::is_same_v<decltype(myriad::problem_target(std::declval<LinearGenerative<float>>(), 0)),
                   LinearGenerativePoint<float>>,
    "problem(p) is the point's density model");

// =============================================================================================
// Linear generative model.

/// Rounding scales of problem p at a (see RoundingScales).
RoundingScales linear_generative_scales(const LinearGenerative<double>& model, int p,
                                        const std::vector<double>& a) {
  const int m_dim = model.observed_dim, l_dim = model.latent_dim;
  const LinearGenerativePoint<double> point = model.problem(p);
  RoundingScales s;
  s.grad.assign(l_dim, 0.0);
  s.value = std::fabs(model.log_normaliser);
  for (int l = 0; l < l_dim; ++l) {
    s.value += model.prior == LinearGenerativePrior::gaussian ? 0.5 * a[l] * a[l] : std::fabs(a[l]);
    s.grad[l] = model.prior == LinearGenerativePrior::gaussian ? std::fabs(a[l]) : 1.0;
  }
  for (int m = 0; m < m_dim; ++m) {
    double magnitude = std::fabs(point.x[m]);
    for (int l = 0; l < l_dim; ++l) magnitude += std::fabs(point.phi[m * l_dim + l] * a[l]);
    s.value += 0.5 * model.noise_precision * magnitude * magnitude;
    for (int l = 0; l < l_dim; ++l) {
      s.grad[l] += model.noise_precision * std::fabs(point.phi[m * l_dim + l]) * magnitude;
    }
  }
  s.terms = 2 * l_dim + m_dim + 8;
  return s;
}

/// Test point near problem p's posterior: the generating latent plus 0.3 z.
std::vector<double> latent_point(const LinearGenerativeData<double>& data, int p, int k) {
  const int l_dim = data.latent_dim();
  std::vector<double> a = standard_normals(static_cast<std::uint64_t>(100 * p + k), l_dim);
  for (int l = 0; l < l_dim; ++l) a[l] = data.latents()[p * l_dim + l] + 0.3 * a[l];
  return a;
}

TEST(AisModelsLinearGenerative, GradientMatchesDualsAndFiniteDifferences) {
  struct Case {
    int dim, latents, points;
    LinearGenerativePrior prior;
    double noise_sd, phi_scale;
  };
  const Case cases[] = {
      {36, 36, 3, LinearGenerativePrior::gaussian, 0.1, 1.0},
      {36, 36, 3, LinearGenerativePrior::laplace, 0.1, 1.0},
      {8, 3, 2, LinearGenerativePrior::laplace, 0.5, 2.0},
      {5, 7, 2, LinearGenerativePrior::gaussian, 0.1, 0.0},
  };
  for (const Case& c : cases) {
    const auto data = LinearGenerativeData<double>::synthetic(c.dim, c.latents, c.points, c.prior,
                                                              c.noise_sd, c.phi_scale, 3);
    const auto model = data.host_model();
    double worst = 0;
    for (int p = 0; p < c.points; ++p) {
      for (int k = 0; k < 4; ++k) {
        SCOPED_TRACE("M = " + std::to_string(c.dim) + ", L = " + std::to_string(c.latents) +
                     ", point " + std::to_string(p) + ", draw " + std::to_string(k));
        const auto a = latent_point(data, p, k);
        worst = std::max(worst, expect_consistent_derivatives(
                                    model.problem(p), a, linear_generative_scales(model, p, a)));
      }
    }
    std::printf("    M = %d, L = %d: worst error / tolerance = %.3f\n", c.dim, c.latents, worst);
  }
}

TEST(AisModelsLinearGenerative, LaplaceGradientUsesSignOfZeroEqualsZero) {
  // At a_0 = 0 the supplied gradient uses sign(0) = 0, i.e. only the likelihood term
  // Σ_m Φ_m0 r_m / σ². The central difference of |a_0| at 0 is exactly 0 too, and the rest of
  // log p is quadratic in a_0 (no truncation error), so finite differences must agree to
  // rounding. Duals take fabs's right derivative (+1) at 0, so they are not compared here.
  const auto data =
      LinearGenerativeData<double>::synthetic(6, 3, 1, LinearGenerativePrior::laplace, 0.5, 1.0, 5);
  const auto point = data.host_model().problem(0);
  std::vector<double> a = latent_point(data, 0, 0);
  a[0] = 0.0;
  std::vector<double> grad(3);
  point.log_density_gradient(a, grad);
  double expected = 0;
  for (int m = 0; m < 6; ++m) {
    double r = point.x[m];
    for (int l = 0; l < 3; ++l) r -= point.phi[m * 3 + l] * a[l];
    expected += point.phi[m * 3 + 0] * r * point.noise_precision;
  }
  EXPECT_NEAR(grad[0], expected, 1e-12 * (1 + std::fabs(expected)));
  const double h = 1e-5;
  std::vector<double> ap = a, am = a;
  ap[0] = h;
  am[0] = -h;
  const double fd = (point.log_density(ap) - point.log_density(am)) / (2 * h);
  EXPECT_NEAR(grad[0], fd, 1e-7 * (1 + std::fabs(expected)));
}

TEST(AisModelsLinearGenerative, LogDensityIsTheNormalisedJoint) {
  // log p(x, a) = Σ_m log N(x_m; (Φa)_m, σ_n) + Σ_l log p(a_l), written out independently.
  for (auto prior : {LinearGenerativePrior::gaussian, LinearGenerativePrior::laplace}) {
    const auto data = LinearGenerativeData<double>::synthetic(7, 4, 3, prior, 0.3, 1.0, 11);
    const auto model = data.host_model();
    for (int p = 0; p < 3; ++p) {
      const auto a = latent_point(data, p, 1);
      double direct = 0;
      for (int m = 0; m < 7; ++m) {
        double mean = 0;
        for (int l = 0; l < 4; ++l) mean += data.phi()[m * 4 + l] * a[l];
        const double z = (data.x()[p * 7 + m] - mean) / 0.3;
        direct += -0.5 * std::log(2 * M_PI) - std::log(0.3) - 0.5 * z * z;
      }
      for (int l = 0; l < 4; ++l) {
        direct += prior == LinearGenerativePrior::gaussian
                      ? -0.5 * std::log(2 * M_PI) - 0.5 * a[l] * a[l]
                      : -std::log(2.0) - std::fabs(a[l]);
      }
      EXPECT_NEAR(model.problem(p).log_density(a), direct, 1e-12 * (1 + std::fabs(direct)));
    }
  }
}

/// A = ΦᵀΦ/σ² + I, the posterior precision, formed in the test from the data.
std::vector<double> posterior_precision(const LinearGenerativeData<double>& data) {
  const int m_dim = data.observed_dim(), l_dim = data.latent_dim();
  const double precision = 1 / (data.noise_sd() * data.noise_sd());
  std::vector<double> a(l_dim * l_dim);
  for (int i = 0; i < l_dim; ++i) {
    for (int j = 0; j < l_dim; ++j) {
      double sum = 0;
      for (int m = 0; m < m_dim; ++m) sum += data.phi()[m * l_dim + i] * data.phi()[m * l_dim + j];
      a[i * l_dim + j] = precision * sum + (i == j ? 1.0 : 0.0);
    }
  }
  return a;
}

TEST(AisModelsLinearGenerative, GaussianLogZSatisfiesThePosteriorIdentity) {
  // Bayes: log p(x) = log p(x, a) − log N(a; μ, A⁻¹) for every a. exact_log_z comes from the
  // M × M covariance S = ΦΦᵀ + σ²I; the right-hand side uses the L × L precision A formed here
  // (quadratic form and log|A| with no inverse), so the two routes share no computation.
  const auto data = LinearGenerativeData<double>::synthetic();  // M = L = 36, P = 10, σ_n = 0.1
  const auto model = data.host_model();
  const int l_dim = data.latent_dim();
  const std::vector<double> precision = posterior_precision(data);
  std::vector<double> factor = precision;
  ASSERT_TRUE(myriad::linalg::cholesky_in_place(myriad::dense_matrix(factor.data(), l_dim, l_dim)));
  const double log_det_a = myriad::linalg::log_det_from_cholesky(
      myriad::dense_matrix(static_cast<const double*>(factor.data()), l_dim, l_dim));
  for (int p = 0; p < data.points(); ++p) {
    const double log_z = model.exact_log_z(p);
    ASSERT_TRUE(std::isfinite(log_z));
    EXPECT_EQ(log_z, data.exact_log_z(p));
    for (int k = 0; k < 3; ++k) {
      const auto a = latent_point(data, p, k);
      double quadratic = 0;
      for (int i = 0; i < l_dim; ++i) {
        for (int j = 0; j < l_dim; ++j) {
          quadratic += (a[i] - data.posterior_mean()[p * l_dim + i]) * precision[i * l_dim + j] *
                       (a[j] - data.posterior_mean()[p * l_dim + j]);
        }
      }
      const double log_posterior =
          -0.5 * quadratic + 0.5 * log_det_a - 0.5 * l_dim * std::log(2 * M_PI);
      const double joint = model.problem(p).log_density(a);
      // Sums of ~L² terms of size up to ~|joint|: 1e-10 relative to the magnitudes involved.
      EXPECT_NEAR(joint - log_posterior, log_z,
                  1e-10 * (std::fabs(joint) + std::fabs(log_posterior)))
          << "point " << p << ", a " << k;
    }
  }
}

TEST(AisModelsLinearGenerative, PosteriorCovarianceAndFactorInvertThePrecision) {
  const auto data = LinearGenerativeData<double>::synthetic(
      12, 5, 2, LinearGenerativePrior::gaussian, 0.2, 1.0, 9);
  const int l = data.latent_dim();
  const std::vector<double> precision = posterior_precision(data);
  const auto& cov = data.posterior_covariance();
  const auto& factor = data.posterior_factor();
  ASSERT_EQ(cov.size(), static_cast<std::size_t>(l * l));
  ASSERT_EQ(factor.size(), static_cast<std::size_t>(l * l));
  for (int i = 0; i < l; ++i) {
    for (int j = 0; j < l; ++j) {
      double identity = 0, product = 0;
      for (int k = 0; k < l; ++k) {
        identity += cov[i * l + k] * precision[k * l + j];
        product += factor[i * l + k] * factor[j * l + k];
      }
      EXPECT_NEAR(identity, i == j ? 1.0 : 0.0, 1e-11) << i << ", " << j;
      EXPECT_NEAR(product, cov[i * l + j], 1e-13) << i << ", " << j;
      EXPECT_EQ(cov[i * l + j], cov[j * l + i]);
      if (j > i) {
        EXPECT_EQ(factor[i * l + j], 0.0);
      }
    }
  }
  // μ_p solves A μ = Φᵀ x_p / σ².
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < l; ++i) {
      double lhs = 0, rhs = 0;
      for (int k = 0; k < l; ++k) lhs += precision[i * l + k] * data.posterior_mean()[p * l + k];
      for (int m = 0; m < 12; ++m) rhs += data.phi()[m * l + i] * data.x()[p * 12 + m];
      rhs /= 0.2 * 0.2;
      EXPECT_NEAR(lhs, rhs, 1e-11 * (1 + std::fabs(rhs)));
    }
  }
}

TEST(AisModelsLinearGenerative, LogZMatchesQuadrature) {
  // Gaussian prior, L = 1 and 2: the trapezoid rule on a box of ±12 around μ (Σ_post ⪯ I, so
  // the tails beyond carry < e^{−72}) with spacing h ≤ √λ_min(Σ_post)/6: for a Gaussian
  // integrand the lattice-sum error is of order exp(−2π² λ_min / h²) ≤ e^{−700} (Poisson
  // summation), so the result is exact to rounding. σ_n = 0.5 keeps the posterior wide.
  for (int latents : {1, 2}) {
    const auto data = LinearGenerativeData<double>::synthetic(
        3, latents, 2, LinearGenerativePrior::gaussian, 0.5, 1.0, 21);
    const auto model = data.host_model();
    const std::vector<double> precision = posterior_precision(data);
    double trace = 0;
    for (int i = 0; i < latents; ++i) trace += precision[i * latents + i];
    const double width = 24.0;
    const int steps = static_cast<int>(std::ceil(width * 6 * std::sqrt(trace)));
    for (int p = 0; p < 2; ++p) {
      std::vector<double> lo(latents), hi(latents);
      for (int i = 0; i < latents; ++i) {
        lo[i] = data.posterior_mean()[p * latents + i] - width / 2;
        hi[i] = lo[i] + width;
      }
      const auto point = model.problem(p);
      const double quadrature = log_trapezoid(
          [&](const std::vector<double>& a) { return point.log_density(a); }, lo, hi, steps);
      EXPECT_NEAR(quadrature, model.exact_log_z(p), 1e-9) << "L = " << latents << ", point " << p;
    }
  }

  // Laplace prior, L = 1: exact_log_z is NaN (no closed form in general), but for one latent
  // with φ = Φ (an M-vector), k = ‖φ‖², c = φᵀx and v = σ²/k, completing the square on each
  // side of 0 gives
  //   p(x) = ½ (2πσ²)^{−M/2} e^{−‖x‖²/(2σ²)} √(2πv) [e^{m₊²/2v} Φ(m₊/√v) + e^{m₋²/2v} Φ(−m₋/√v)],
  //   m± = (c ∓ σ²)/k.
  // Quadrature: composite Simpson on each side of the kink at 0 (each piece is smooth, error
  // O(h⁴)), over ±40 around the data's least-squares latent.
  const double sd = 0.5;
  const auto data =
      LinearGenerativeData<double>::synthetic(3, 1, 3, LinearGenerativePrior::laplace, sd, 1.0, 22);
  const auto model = data.host_model();
  for (int p = 0; p < 3; ++p) {
    EXPECT_TRUE(std::isnan(model.exact_log_z(p)));
    double k = 0, c = 0, xx = 0;
    for (int m = 0; m < 3; ++m) {
      k += data.phi()[m] * data.phi()[m];
      c += data.phi()[m] * data.x()[p * 3 + m];
      xx += data.x()[p * 3 + m] * data.x()[p * 3 + m];
    }
    const double v = sd * sd / k;
    const double m_plus = (c - sd * sd) / k, m_minus = (c + sd * sd) / k;
    const double t_plus =
        m_plus * m_plus / (2 * v) + std::log(0.5 * std::erfc(-m_plus / std::sqrt(2 * v)));
    const double t_minus =
        m_minus * m_minus / (2 * v) + std::log(0.5 * std::erfc(m_minus / std::sqrt(2 * v)));
    const double t_max = std::max(t_plus, t_minus);
    const double closed = -1.5 * std::log(2 * M_PI * sd * sd) - std::log(2.0) - xx / (2 * sd * sd) +
                          0.5 * std::log(2 * M_PI * v) + t_max +
                          std::log(std::exp(t_plus - t_max) + std::exp(t_minus - t_max));

    const auto point = model.problem(p);
    const double centre = c / k;
    const double lo = std::min(centre - 40.0, -1.0), hi = std::max(centre + 40.0, 1.0);
    double max_value = -std::numeric_limits<double>::infinity();
    const int steps = 200000;  // even
    auto simpson = [&](double from, double to, bool first_pass) {
      const double h = (to - from) / steps;
      double sum = 0;
      for (int i = 0; i <= steps; ++i) {
        const double f = point.log_density(std::vector<double>{from + i * h});
        if (first_pass) {
          max_value = std::max(max_value, f);
          continue;
        }
        const double w = (i == 0 || i == steps) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
        sum += w * std::exp(f - max_value);
      }
      return sum * h / 3;
    };
    simpson(lo, 0.0, true);
    simpson(0.0, hi, true);
    const double quadrature =
        max_value + std::log(simpson(lo, 0.0, false) + simpson(0.0, hi, false));
    EXPECT_NEAR(quadrature, closed, 1e-8) << "point " << p;
  }
}

TEST(AisModelsLinearGenerative, ZeroPhiLogZIsTheNoiseDensityForBothPriors) {
  // Φ = 0 (the paper's sanity check): ε does not depend on the prior, so both priors see the
  // same data x = σ ε; the Laplace closed form, the Gaussian-prior Cholesky route at S = σ²I and
  // the formula below must agree, and log p(x, a) − log p(a) must equal log p(x) for every a.
  const double sd = 0.1;
  const auto gaussian = LinearGenerativeData<double>::synthetic(
      36, 36, 4, LinearGenerativePrior::gaussian, sd, 0.0, 5);
  const auto laplace = LinearGenerativeData<double>::synthetic(
      36, 36, 4, LinearGenerativePrior::laplace, sd, 0.0, 5);
  EXPECT_EQ(gaussian.x(), laplace.x());
  for (double phi : gaussian.phi()) EXPECT_EQ(phi, 0.0);
  const auto g_model = gaussian.host_model();
  const auto l_model = laplace.host_model();
  for (int p = 0; p < 4; ++p) {
    double sum_sq = 0;
    for (int m = 0; m < 36; ++m) sum_sq += gaussian.x()[p * 36 + m] * gaussian.x()[p * 36 + m];
    const double expected = -sum_sq / (2 * sd * sd) - 18 * std::log(2 * M_PI * sd * sd);
    EXPECT_NEAR(g_model.exact_log_z(p), expected, 1e-12 * std::fabs(expected));
    EXPECT_NEAR(l_model.exact_log_z(p), expected, 1e-12 * std::fabs(expected));
    const auto a = standard_normals(500 + p, 36);
    double log_prior_g = 0, log_prior_l = 0;
    for (double v : a) {
      log_prior_g += -0.5 * std::log(2 * M_PI) - 0.5 * v * v;
      log_prior_l += -std::log(2.0) - std::fabs(v);
    }
    EXPECT_NEAR(g_model.problem(p).log_density(a) - log_prior_g, expected,
                1e-12 * std::fabs(expected));
    EXPECT_NEAR(l_model.problem(p).log_density(a) - log_prior_l, expected,
                1e-12 * std::fabs(expected));
  }
}

/// The Gaussian posterior by the Woodbury route: with S = ΦΦᵀ + σ²I,
///   μ = Φᵀ S⁻¹ x,   Σ_post = I − Φᵀ S⁻¹ Φ
/// (the M × M form, independent of the L × L inversion inside the model).
void woodbury_posterior(const LinearGenerativeData<double>& data, int p, std::vector<double>& mean,
                        std::vector<double>& cov) {
  const int m_dim = data.observed_dim(), l_dim = data.latent_dim();
  std::vector<double> s(m_dim * m_dim);
  for (int i = 0; i < m_dim; ++i) {
    for (int j = 0; j < m_dim; ++j) {
      double sum = 0;
      for (int l = 0; l < l_dim; ++l) sum += data.phi()[i * l_dim + l] * data.phi()[j * l_dim + l];
      s[i * m_dim + j] = sum + (i == j ? data.noise_sd() * data.noise_sd() : 0.0);
    }
  }
  const auto view = myriad::dense_matrix(s.data(), m_dim, m_dim);
  ASSERT_TRUE(myriad::linalg::cholesky_in_place(view));
  const auto solve = [&](std::vector<double> b) {  // S⁻¹ b
    for (int i = 0; i < m_dim; ++i) {
      for (int k = 0; k < i; ++k) b[i] -= s[i * m_dim + k] * b[k];
      b[i] /= s[i * m_dim + i];
    }
    for (int i = m_dim - 1; i >= 0; --i) {
      for (int k = i + 1; k < m_dim; ++k) b[i] -= s[k * m_dim + i] * b[k];
      b[i] /= s[i * m_dim + i];
    }
    return b;
  };
  std::vector<double> x(data.x().begin() + p * m_dim, data.x().begin() + (p + 1) * m_dim);
  const std::vector<double> w = solve(x);
  mean.assign(l_dim, 0.0);
  for (int l = 0; l < l_dim; ++l)
    for (int m = 0; m < m_dim; ++m) mean[l] += data.phi()[m * l_dim + l] * w[m];
  cov.assign(l_dim * l_dim, 0.0);
  for (int j = 0; j < l_dim; ++j) {
    std::vector<double> column(m_dim);
    for (int m = 0; m < m_dim; ++m) column[m] = data.phi()[m * l_dim + j];
    const std::vector<double> sc = solve(column);
    for (int i = 0; i < l_dim; ++i) {
      double sum = 0;
      for (int m = 0; m < m_dim; ++m) sum += data.phi()[m * l_dim + i] * sc[m];
      cov[i * l_dim + j] = (i == j ? 1.0 : 0.0) - sum;
    }
  }
}

TEST(AisModelsLinearGenerative, ExactSamplesMatchThePosterior) {
  // Gaussian prior: mean and covariance of 20 000 exact draws within 5 standard errors of the
  // Woodbury-route posterior (at the defaults, M = L = 36: 36 means and 666 covariances).
  struct Case {
    int dim, latents;
    double noise_sd;
  };
  for (const Case& c : {Case{36, 36, 0.1}, Case{6, 4, 0.5}}) {
    const auto data = LinearGenerativeData<double>::synthetic(
        c.dim, c.latents, 2, LinearGenerativePrior::gaussian, c.noise_sd, 1.0, 31);
    const auto model = data.host_model();
    for (int p = 0; p < 2; ++p) {
      SCOPED_TRACE("M = " + std::to_string(c.dim) + ", point " + std::to_string(p));
      std::vector<double> mean, cov;
      woodbury_posterior(data, p, mean, cov);
      for (int l = 0; l < c.latents; ++l) {
        EXPECT_NEAR(data.posterior_mean()[p * c.latents + l], mean[l],
                    1e-10 * (1 + std::fabs(mean[l])));
        for (int j = 0; j < c.latents; ++j) {
          // I − ΦᵀS⁻¹Φ cancels: absolute error ~ ε cond(S) ≈ 1e-13 at the defaults.
          EXPECT_NEAR(data.posterior_covariance()[l * c.latents + j], cov[l * c.latents + j],
                      1e-10);
        }
      }
      const double worst =
          expect_gaussian_moments(exact_draws(model, p, c.latents, 20000), mean, cov);
      std::printf("    M = %d, L = %d, point %d: worst |z| = %.2f\n", c.dim, c.latents, p, worst);
    }
  }

  // Laplace prior: the generating latent, for every draw.
  const auto data = LinearGenerativeData<double>::synthetic(5, 3, 2, LinearGenerativePrior::laplace,
                                                            0.1, 1.0, 31);
  const auto model = data.host_model();
  for (int p = 0; p < 2; ++p) {
    for (const auto& a : exact_draws(model, p, 3, 4)) {
      for (int l = 0; l < 3; ++l) EXPECT_EQ(a[l], data.latents()[p * 3 + l]);
    }
  }
}

TEST(AisModelsLinearGenerative, LatentsAndNoiseFollowTheirDistributions) {
  // 4000 points × 2 latents: Laplace latents have mean 0, variance 2, E|a| = 1 and Var|a| = 1;
  // Gaussian ones mean 0 and E a² = 1 (Var a² = 2); the noise (x − Φa)/σ is N(0, 1) for both.
  const int points = 4000;
  for (auto prior : {LinearGenerativePrior::gaussian, LinearGenerativePrior::laplace}) {
    const auto data = LinearGenerativeData<double>::synthetic(3, 2, points, prior, 0.2, 1.0, 41);
    const double n = 2.0 * points;
    double sum = 0, sum_abs = 0, sum_sq = 0;
    for (double a : data.latents()) {
      sum += a;
      sum_abs += std::fabs(a);
      sum_sq += a * a;
    }
    if (prior == LinearGenerativePrior::laplace) {
      EXPECT_LT(std::fabs(sum / n) / std::sqrt(2.0 / n), kSigmas);
      EXPECT_LT(std::fabs(sum_abs / n - 1) / std::sqrt(1.0 / n), kSigmas);
    } else {
      EXPECT_LT(std::fabs(sum / n) / std::sqrt(1.0 / n), kSigmas);
      EXPECT_LT(std::fabs(sum_sq / n - 1) / std::sqrt(2.0 / n), kSigmas);
    }
    double noise_sum = 0, noise_sq = 0;
    for (int p = 0; p < points; ++p) {
      for (int m = 0; m < 3; ++m) {
        double r = data.x()[p * 3 + m];
        for (int l = 0; l < 2; ++l) r -= data.phi()[m * 2 + l] * data.latents()[p * 2 + l];
        noise_sum += r / 0.2;
        noise_sq += (r / 0.2) * (r / 0.2);
      }
    }
    const double nm = 3.0 * points;
    EXPECT_LT(std::fabs(noise_sum / nm) / std::sqrt(1.0 / nm), kSigmas);
    EXPECT_LT(std::fabs(noise_sq / nm - 1) / std::sqrt(2.0 / nm), kSigmas);
  }
  // Φ entries: N(0, phi_scale²/L).
  const auto data = LinearGenerativeData<double>::synthetic(
      200, 20, 1, LinearGenerativePrior::gaussian, 0.1, 3.0, 43);
  double sum_sq = 0;
  for (double phi : data.phi()) sum_sq += phi * phi;
  const double n = 200.0 * 20, variance = 9.0 / 20;
  EXPECT_LT(std::fabs(sum_sq / n - variance) / (variance * std::sqrt(2.0 / n)), kSigmas);
}

TEST(AisModelsLinearGenerative, SyntheticIsDeterministicPerSeedAndPrecision) {
  using Prior = LinearGenerativePrior;
  const auto a = LinearGenerativeData<double>::synthetic(6, 4, 3, Prior::laplace, 0.1, 1.0, 7);
  const auto b = LinearGenerativeData<double>::synthetic(6, 4, 3, Prior::laplace, 0.1, 1.0, 7);
  const auto c = LinearGenerativeData<double>::synthetic(6, 4, 3, Prior::laplace, 0.1, 1.0, 8);
  EXPECT_EQ(a.x(), b.x());
  EXPECT_EQ(a.phi(), b.phi());
  EXPECT_EQ(a.latents(), b.latents());
  EXPECT_NE(a.x(), c.x());
  EXPECT_TRUE(a.posterior_mean().empty());
  const auto f = LinearGenerativeData<float>::synthetic(6, 4, 3, Prior::laplace, 0.1, 1.0, 7);
  for (std::size_t i = 0; i < a.x().size(); ++i) EXPECT_EQ(f.x()[i], static_cast<float>(a.x()[i]));
  for (std::size_t i = 0; i < a.phi().size(); ++i) {
    EXPECT_EQ(f.phi()[i], static_cast<float>(a.phi()[i]));
  }
  EXPECT_EQ(a.observed_dim(), 6);
  EXPECT_EQ(a.latent_dim(), 4);
  EXPECT_EQ(a.points(), 3);
  EXPECT_EQ(a.prior(), Prior::laplace);
  const auto model = a.host_model();
  EXPECT_EQ(model.dim(), 4);
  EXPECT_EQ(model.num_problems(), 3);
  EXPECT_EQ(myriad::problem_count(model), 3);
  EXPECT_EQ(model.problem(2).x, model.x + 2 * 6);
  const auto defaults = LinearGenerativeData<float>::synthetic();
  EXPECT_EQ(defaults.observed_dim(), 36);
  EXPECT_EQ(defaults.latent_dim(), 36);
  EXPECT_EQ(defaults.points(), 10);
  EXPECT_EQ(defaults.noise_sd(), 0.1);
  EXPECT_EQ(defaults.prior(), Prior::gaussian);
}

TEST(AisModelsLinearGenerative, FloatAgreesWithDouble) {
  for (auto prior : {LinearGenerativePrior::gaussian, LinearGenerativePrior::laplace}) {
    const auto data_f = LinearGenerativeData<float>::synthetic(36, 36, 2, prior);
    // The double model views double copies of the float data, so only the arithmetic differs.
    const std::vector<double> phi(data_f.phi().begin(), data_f.phi().end());
    const std::vector<double> x(data_f.x().begin(), data_f.x().end());
    const auto model_f = data_f.host_model();
    LinearGenerative<double> model_d;
    model_d.phi = phi.data();
    model_d.x = x.data();
    model_d.observed_dim = 36;
    model_d.latent_dim = 36;
    model_d.points = 2;
    model_d.prior = prior;
    model_d.noise_precision = model_f.noise_precision;
    model_d.log_normaliser = model_f.log_normaliser;
    const auto data_d = LinearGenerativeData<double>::synthetic(36, 36, 2, prior);
    double worst = 0;
    for (int p = 0; p < 2; ++p) {
      for (int k = 0; k < 3; ++k) {
        const auto a = latent_point(data_d, p, k);
        worst = std::max(worst, expect_float_agrees(model_f.problem(p), model_d.problem(p), a,
                                                    linear_generative_scales(model_d, p, a)));
      }
    }
    std::printf("    worst float-vs-double error / tolerance = %.3f\n", worst);
  }
}

TEST(AisModelsLinearGenerative, RejectsBadArguments) {
  using Data = LinearGenerativeData<double>;
  using Prior = LinearGenerativePrior;
  expect_invalid_argument([] { Data::synthetic(0); }, "linear_generative: dim must be >= 1, got 0");
  expect_invalid_argument([] { Data::synthetic(4, -1); },
                          "linear_generative: latents must be >= 1, got -1");
  expect_invalid_argument([] { Data::synthetic(4, 2, 0); },
                          "linear_generative: points must be >= 1, got 0");
  expect_invalid_argument([] { Data::synthetic(4, 2, 1, static_cast<Prior>(7)); },
                          "linear_generative: unknown prior 7");
  expect_invalid_argument([] { Data::synthetic(4, 2, 1, Prior::gaussian, 0.0); },
                          "linear_generative: noise_sd must be positive, got 0");
  expect_invalid_argument(
      [] { Data::synthetic(4, 2, 1, Prior::gaussian, std::numeric_limits<double>::infinity()); },
      "linear_generative: noise_sd must be positive, got inf");
  expect_invalid_argument([] { Data::synthetic(4, 2, 1, Prior::laplace, 0.1, -1.0); },
                          "linear_generative: phi_scale must be finite and >= 0, got -1");
  const auto data = Data::synthetic(4, 2, 3);
  expect_invalid_argument([&] { data.exact_log_z(3); },
                          "linear_generative: problem must lie in [0, 3), got 3");
  expect_invalid_argument([&] { data.host_model().exact_log_z(-1); },
                          "linear_generative: problem must lie in [0, 3), got -1");
}

TEST(AisModelsLinearGenerative, DeviceModelUploadsOnce) {
  auto data = LinearGenerativeData<double>::synthetic(6, 4, 3);
#if defined(MYRIAD_HAS_CUDA)
  LinearGenerative<double> model;
  try {
    model = data.device_model();
  } catch (const myriad::cuda_error& e) {
    GTEST_SKIP() << "CUDA build but no usable device: " << e.what();
  }
  EXPECT_NE(model.phi, data.phi().data());
  using myriad::download;
  EXPECT_EQ(download(model.phi, data.phi().size()), data.phi());
  EXPECT_EQ(download(model.x, data.x().size()), data.x());
  EXPECT_EQ(download(model.latents, data.latents().size()), data.latents());
  EXPECT_EQ(download(model.posterior_mean, data.posterior_mean().size()), data.posterior_mean());
  EXPECT_EQ(download(model.posterior_factor, data.posterior_factor().size()),
            data.posterior_factor());
  EXPECT_EQ(model.exact_log_z(1), data.exact_log_z(1));  // host copy
  const auto again = data.device_model();
  EXPECT_EQ(again.phi, model.phi);
  EXPECT_EQ(again.posterior_factor, model.posterior_factor);
#else
  EXPECT_THROW(data.device_model(), myriad::unavailable_error);
#endif
}

// =============================================================================================
// Boltzmann-machine relaxation.

/// Rounding scales at x (see RoundingScales): t_i = b_i + Σ_k Q_ik x_k is within γ m_i,
/// m_i = |b_i| + Σ_k |Q_ik x_k|, log cosh and tanh are 1-Lipschitz, and ∂_k sums |Q_ik| tanh.
RoundingScales boltzmann_scales(const BoltzmannRelaxationData<double>& data,
                                const std::vector<double>& x) {
  const int n = data.units();
  RoundingScales s;
  s.grad.assign(n, 0.0);
  for (int k = 0; k < n; ++k) {
    s.value += 0.5 * x[k] * x[k];
    s.grad[k] = std::fabs(x[k]);
  }
  for (int i = 0; i < n; ++i) {
    double m = std::fabs(data.bias()[i]);
    for (int k = 0; k <= i; ++k) m += std::fabs(at(data.factor(), n, i, k) * x[k]);
    s.value += 2 * m + std::log(2.0);  // |log cosh t| ≤ |t| ≤ m
    for (int k = 0; k <= i; ++k) s.grad[k] += std::fabs(at(data.factor(), n, i, k)) * (1 + m);
  }
  s.terms = n + 8;
  return s;
}

std::vector<double> boltzmann_point(const BoltzmannRelaxationData<double>& data, int k) {
  std::vector<double> x = standard_normals(1000 + k, data.units());
  const double scale = k == 0 ? 8.0 : 1.5;  // point 0: far out, tanh saturated
  for (int i = 0; i < data.units(); ++i) x[i] = data.mean_x()[i] + scale * x[i];
  return x;
}

/// ½sᵀWs + sᵀb for state index k (s_i = +1 where bit i is set), summed directly.
double boltzmann_log_weight(const BoltzmannRelaxationData<double>& data, std::int64_t k) {
  const int n = data.units();
  double e = 0;
  for (int i = 0; i < n; ++i) {
    const double s_i = ((k >> i) & 1) ? 1.0 : -1.0;
    e += data.bias()[i] * s_i;
    for (int j = 0; j < n; ++j) {
      const double s_j = ((k >> j) & 1) ? 1.0 : -1.0;
      e += 0.5 * s_i * at(data.coupling(), n, i, j) * s_j;
    }
  }
  return e;
}

/// E[ssᵀ] by a direct sum over states.
std::vector<double> boltzmann_second_moment_s(const BoltzmannRelaxationData<double>& data) {
  const int n = data.units();
  std::vector<double> moment(n * n, 0.0);
  for (std::int64_t k = 0; k < (std::int64_t{1} << n); ++k) {
    const double p = std::exp(boltzmann_log_weight(data, k) - data.log_z_boltzmann());
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        moment[i * n + j] += (((k >> i) & 1) == ((k >> j) & 1) ? p : -p);
      }
    }
  }
  return moment;
}

TEST(AisModelsBoltzmann, GradientMatchesDualsAndFiniteDifferences) {
  for (int units : {12, 3, 1}) {
    const auto data = BoltzmannRelaxationData<double>::synthetic(units);
    const auto model = data.host_model();
    double worst = 0;
    for (int k = 0; k < 8; ++k) {
      SCOPED_TRACE("D_B = " + std::to_string(units) + ", point " + std::to_string(k));
      const auto x = boltzmann_point(data, k);
      worst = std::max(worst, expect_consistent_derivatives(model, x, boltzmann_scales(data, x)));
    }
    std::printf("    D_B = %d: worst error / tolerance = %.3f\n", units, worst);
  }
}

TEST(AisModelsBoltzmann, LogDensityIsTheRelaxedEnergy) {
  // −φ(x) = −½xᵀx + Σ_i log cosh(q_iᵀx + b_i) with std::cosh (no overflow at these points).
  const auto data = BoltzmannRelaxationData<double>::synthetic(12);
  const auto model = data.host_model();
  for (int k = 1; k < 6; ++k) {
    const auto x = boltzmann_point(data, k);
    double direct = 0;
    for (int i = 0; i < 12; ++i) {
      direct -= 0.5 * x[i] * x[i];
      double t = data.bias()[i];
      for (int j = 0; j < 12; ++j) t += at(data.factor(), 12, i, j) * x[j];
      direct += std::log(std::cosh(t));
    }
    EXPECT_NEAR(model.log_density(x), direct, 1e-12 * (1 + std::fabs(direct)));
  }
  // The stable log cosh at large |t|, where std::cosh overflows: |t| − log 2.
  EXPECT_DOUBLE_EQ(myriad::models::log_cosh(1000.0), 1000.0 - std::log(2.0));
  EXPECT_DOUBLE_EQ(myriad::models::log_cosh(-1000.0), 1000.0 - std::log(2.0));
  EXPECT_EQ(myriad::models::log_cosh(0.0), 0.0);
  // Near 0 the stable form cancels |t| + log1p(e^{−2|t|}) against log 2: accurate to a few ε
  // absolutely (what a sum of log densities needs), not relatively.
  EXPECT_NEAR(myriad::models::log_cosh(1e-4), 0.5e-8, 1e-15);
}

TEST(AisModelsBoltzmann, ParametersFollowTheThesisRecipe) {
  for (int units : {1, 2, 12, 20}) {
    SCOPED_TRACE("D_B = " + std::to_string(units));
    const auto data = BoltzmannRelaxationData<double>::synthetic(units);
    const int n = data.units();
    ASSERT_EQ(n, units);
    ASSERT_EQ(data.dim(), units);
    const auto& w = data.coupling();
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(at(w, n, i, i), 0.0);
      for (int j = 0; j < n; ++j) EXPECT_EQ(at(w, n, i, j), at(w, n, j, i));
    }
    // Λ = cI with c = c_min + 1 % margin; W + Λ is PD, W + c′I is not for c′ just below c_min.
    EXPECT_DOUBLE_EQ(data.lambda(), data.lambda_min() + 0.01 * std::max(1.0, data.lambda_min()));
    auto shifted = [&](double c) {
      std::vector<double> a = w;
      for (int i = 0; i < n; ++i) a[i * n + i] += c;
      return a;
    };
    std::vector<double> a = shifted(data.lambda());
    EXPECT_TRUE(myriad::linalg::cholesky_in_place(myriad::dense_matrix(a.data(), n, n)));
    if (n > 1) {
      a = shifted(data.lambda_min() * (1 - 1e-6));
      EXPECT_FALSE(myriad::linalg::cholesky_in_place(myriad::dense_matrix(a.data(), n, n)));
      EXPECT_GT(data.lambda_min(), 0.0);
    }
    // Q lower triangular with QQᵀ = W + Λ.
    const auto& q = data.factor();
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (j > i) {
          EXPECT_EQ(at(q, n, i, j), 0.0);
        }
        double sum = 0;
        for (int k = 0; k < n; ++k) sum += at(q, n, i, k) * at(q, n, j, k);
        EXPECT_NEAR(sum, at(w, n, i, j) + (i == j ? data.lambda() : 0.0),
                    1e-12 * (1 + data.lambda()));
      }
    }
  }
  // The eigenvalues of V are 6 tanh(2 n_i) ∈ (−6, 6) and W is V with its diagonal removed, so
  // ‖W‖_F² ≤ ‖V‖_F² < 36 D_B; the biases are N(0, 0.1²): 500 of them have mean-square 0.01.
  const auto data = BoltzmannRelaxationData<double>::synthetic(20);
  double frobenius = 0;
  for (double v : data.coupling()) frobenius += v * v;
  EXPECT_LT(frobenius, 36.0 * 20);
  EXPECT_GT(frobenius, 0.0);
  double bias_sq = 0;
  int count = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const auto system = BoltzmannRelaxationData<double>::synthetic(10, seed);
    for (double b : system.bias()) {
      bias_sq += b * b;
      ++count;
    }
  }
  EXPECT_LT(std::fabs(bias_sq / count - 0.01) / (0.01 * std::sqrt(2.0 / count)), kSigmas);
}

TEST(AisModelsBoltzmann, EnumerationMatchesDirectSum) {
  for (int units : {1, 2, 5, 10, 16}) {
    SCOPED_TRACE("D_B = " + std::to_string(units));
    const auto data = BoltzmannRelaxationData<double>::synthetic(units, 99);
    const std::int64_t states = std::int64_t{1} << units;
    std::vector<double> log_weight(states);
    double max_lw = -std::numeric_limits<double>::infinity();
    for (std::int64_t k = 0; k < states; ++k) {
      log_weight[k] = boltzmann_log_weight(data, k);
      max_lw = std::max(max_lw, log_weight[k]);
    }
    double sum = 0;
    for (double lw : log_weight) sum += std::exp(lw - max_lw);
    const double log_z_b = max_lw + std::log(sum);
    // The Gray-code walk accumulates ≤ 2^D_B rounding steps of size ε·Σ|W_kj|.
    EXPECT_NEAR(data.log_z_boltzmann(), log_z_b, 1e-9);
    std::vector<double> mean_s(units, 0.0);
    double cumulative = 0, worst_cdf = 0;
    ASSERT_EQ(data.state_cdf().size(), static_cast<std::size_t>(states));
    for (std::int64_t k = 0; k < states; ++k) {
      const double p = std::exp(log_weight[k] - log_z_b);
      cumulative += p;
      worst_cdf = std::max(worst_cdf, std::fabs(data.state_cdf()[k] - cumulative));
      for (int i = 0; i < units; ++i) mean_s[i] += ((k >> i) & 1) ? p : -p;
    }
    EXPECT_LT(worst_cdf, 1e-9);
    EXPECT_EQ(data.state_cdf().back(), 1.0);
    for (int i = 0; i < units; ++i) EXPECT_NEAR(data.mean_s()[i], mean_s[i], 1e-9);
    // E.9 and E.10.
    EXPECT_NEAR(data.log_z(),
                log_z_b + 0.5 * units * data.lambda() + 0.5 * units * std::log(2 * M_PI) -
                    units * std::log(2.0),
                1e-9);
    EXPECT_EQ(data.host_model().exact_log_z(0), data.log_z());
    for (int k = 0; k < units; ++k) {
      double qs = 0;
      for (int i = 0; i < units; ++i) qs += at(data.factor(), units, i, k) * mean_s[i];
      EXPECT_NEAR(data.mean_x()[k], qs, 1e-9);
    }
  }
}

TEST(AisModelsBoltzmann, LogZMatchesQuadrature) {
  // ∫ exp(−φ) dx over R^D for D = 1, 2 by the trapezoid rule. exp(−φ) ∝ Σ_s c_s N(x; Qᵀs, I) is
  // a mixture of unit Gaussians, so with spacing h = 0.125 the lattice-sum error is of order
  // exp(−2π²/h²) (Poisson summation) and the box max_s ‖Qᵀs‖∞ ± 12 leaves tails below e^{−72}.
  const auto strong =
      BoltzmannRelaxationData<double>::from_parameters({0.0, 3.0, 3.0, 0.0}, {0.4, -0.2});
  const auto synthetic_1 = BoltzmannRelaxationData<double>::synthetic(1);
  const auto synthetic_2 = BoltzmannRelaxationData<double>::synthetic(2);
  for (const auto* data : {&synthetic_1, &synthetic_2, &strong}) {
    const int n = data->units();
    SCOPED_TRACE("D_B = " + std::to_string(n));
    const auto model = data->host_model();
    double reach = 0;
    for (int k = 0; k < n; ++k) {
      double column = 0;
      for (int i = 0; i < n; ++i) column += std::fabs(at(data->factor(), n, i, k));
      reach = std::max(reach, column);
    }
    const double half = reach + 12;
    const int steps = static_cast<int>(std::ceil(2 * half / 0.125));
    const double quadrature =
        log_trapezoid([&](const std::vector<double>& x) { return model.log_density(x); },
                      std::vector<double>(n, -half), std::vector<double>(n, half), steps);
    EXPECT_NEAR(quadrature, model.exact_log_z(0), 1e-9);
  }
}

TEST(AisModelsBoltzmann, ExactSamplesMatchTheMoments) {
  // E[x] = Qᵀ E[s] with standard error √(Var x_i / N), Var x_i = (Qᵀ Cov[s] Q)_ii + 1 (E.11,
  // E[ssᵀ] summed directly); E[x_i x_j] = (Qᵀ E[ssᵀ] Q)_ij + δ_ij within 5 sample standard
  // errors of the products.
  for (int units : {12, 5}) {
    SCOPED_TRACE("D_B = " + std::to_string(units));
    const auto data = BoltzmannRelaxationData<double>::synthetic(units);
    const int n = units;
    const auto& q = data.factor();
    const auto ess = boltzmann_second_moment_s(data);
    std::vector<double> second(n * n, 0.0);  // E[xxᵀ]
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        double sum = a == b ? 1.0 : 0.0;
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) sum += at(q, n, i, a) * ess[i * n + j] * at(q, n, j, b);
        second[a * n + b] = sum;
      }
    }
    const int draws = 40000;
    const auto x = exact_draws(data.host_model(), 0, n, draws);
    double worst = 0;
    for (int a = 0; a < n; ++a) {
      double sum = 0;
      for (const auto& row : x) sum += row[a];
      const double variance = second[a * n + a] - data.mean_x()[a] * data.mean_x()[a];
      const double z = (sum / draws - data.mean_x()[a]) / std::sqrt(variance / draws);
      EXPECT_LT(std::fabs(z), kSigmas) << "E[x_" << a << "]";
      worst = std::max(worst, std::fabs(z));
      for (int b = 0; b <= a; ++b) {
        double s1 = 0, s2 = 0;
        for (const auto& row : x) {
          s1 += row[a] * row[b];
          s2 += row[a] * row[b] * row[a] * row[b];
        }
        const double m = s1 / draws;
        const double se = std::sqrt((s2 / draws - m * m) / draws);
        const double zz = (m - second[a * n + b]) / se;
        EXPECT_LT(std::fabs(zz), kSigmas) << "E[x_" << a << " x_" << b << "]";
        worst = std::max(worst, std::fabs(zz));
      }
    }
    std::printf("    D_B = %d: worst |z| = %.2f\n", units, worst);
  }
}

TEST(AisModelsBoltzmann, ExactSampleStatesFollowTheCdf) {
  // D_B = 3: the state behind each draw is recovered from x − z (z regenerated from the same
  // counter), and the 8 state frequencies match P(s) within 5 binomial standard errors.
  const auto data = BoltzmannRelaxationData<double>::synthetic(3, 5);
  const auto model = data.host_model();
  const int draws = 20000;
  const RandomStream rng(kSampleSeed, 0);
  std::vector<int> counts(8, 0);
  for (int d = 0; d < draws; ++d) {
    std::vector<double> x(3), z(3);
    model.exact_sample(0, rng, static_cast<std::uint32_t>(d), x);
    rng.fill_normal<double>(static_cast<std::uint32_t>(d), myriad::Purpose::exact_sample, z, 3);
    // Qᵀs = x − z; Q is lower triangular, so s_2 = (x − z)_2 / Q_22, then upwards.
    std::vector<double> qs(3);
    for (int k = 0; k < 3; ++k) qs[k] = x[k] - z[k];
    int state = 0;
    std::vector<double> s(3);
    for (int i = 2; i >= 0; --i) {
      double r = qs[i];
      for (int j = i + 1; j < 3; ++j) r -= at(data.factor(), 3, j, i) * s[j];
      s[i] = r / at(data.factor(), 3, i, i);
      ASSERT_NEAR(std::fabs(s[i]), 1.0, 1e-9);
      if (s[i] > 0) state |= 1 << i;
    }
    ++counts[state];
  }
  for (int k = 0; k < 8; ++k) {
    const double p = data.state_cdf()[k] - (k == 0 ? 0.0 : data.state_cdf()[k - 1]);
    const double se = std::sqrt(p * (1 - p) / draws);
    EXPECT_LT(std::fabs(counts[k] / static_cast<double>(draws) - p), kSigmas * se + 1e-12)
        << "state " << k;
  }
}

TEST(AisModelsBoltzmann, FloatAgreesWithDouble) {
  const auto data_d = BoltzmannRelaxationData<double>::synthetic(12);
  const auto data_f = BoltzmannRelaxationData<float>::synthetic(12);
  const auto model_f = data_f.host_model();
  // The double model views double copies of the float parameters.
  const std::vector<double> q(model_f.factor, model_f.factor + 144);
  const std::vector<double> b(model_f.bias, model_f.bias + 12);
  BoltzmannRelaxation<double> model_d = data_d.host_model();
  model_d.factor = q.data();
  model_d.bias = b.data();
  double worst = 0;
  for (int k = 0; k < 6; ++k) {
    const auto x = boltzmann_point(data_d, k);
    worst = std::max(worst, expect_float_agrees(model_f, model_d, x, boltzmann_scales(data_d, x)));
  }
  std::printf("    worst float-vs-double error / tolerance = %.3f\n", worst);
  EXPECT_EQ(model_f.exact_log_z(0), data_d.log_z());  // exact answers are computed in double
}

TEST(AisModelsBoltzmann, RejectsBadArguments) {
  using Data = BoltzmannRelaxationData<double>;
  expect_invalid_argument([] { Data::synthetic(0); },
                          "boltzmann_relaxation: units must lie in [1, 24]");
  expect_invalid_argument([] { Data::synthetic(25); }, "got 25");
  expect_invalid_argument(
      [] {
        Data::from_parameters({0, 1, 1}, {0, 0});
      },
      "boltzmann_relaxation: W has 3 entries, expected units^2 = 4");
  expect_invalid_argument(
      [] {
        Data::from_parameters({0.5, 1, 1, 0}, {0, 0});
      },
      "boltzmann_relaxation: W[0][0] must be 0, got 0.5");
  expect_invalid_argument(
      [] {
        Data::from_parameters({0, 1, 2, 0}, {0, 0});
      },
      "boltzmann_relaxation: W[0][1] != W[1][0]");
  expect_invalid_argument(
      [] {
        Data::from_parameters({0, 1, 1, 0}, {0, std::numeric_limits<double>::quiet_NaN()});
      },
      "boltzmann_relaxation: b[1] is not finite");
  expect_invalid_argument([] { Data::from_parameters({}, {}); },
                          "boltzmann_relaxation: units must lie in [1, 24]");
  const auto data = Data::synthetic(3);
  expect_invalid_argument([&] { data.host_model().exact_log_z(1); },
                          "boltzmann_relaxation: the only problem is 0, got 1");
}

TEST(AisModelsBoltzmann, SyntheticIsDeterministicPerSeed) {
  const auto a = BoltzmannRelaxationData<double>::synthetic(8, 201702);
  const auto b = BoltzmannRelaxationData<double>::synthetic(8);
  const auto c = BoltzmannRelaxationData<double>::synthetic(8, 201703);
  EXPECT_EQ(a.coupling(), b.coupling());
  EXPECT_EQ(a.bias(), b.bias());
  EXPECT_EQ(a.log_z(), b.log_z());
  EXPECT_NE(a.coupling(), c.coupling());
  EXPECT_EQ(BoltzmannRelaxationData<float>::synthetic().units(), 12);
}

TEST(AisModelsBoltzmann, DeviceModelUploadsOnce) {
  auto data = BoltzmannRelaxationData<double>::synthetic(6);
#if defined(MYRIAD_HAS_CUDA)
  BoltzmannRelaxation<double> model;
  try {
    model = data.device_model();
  } catch (const myriad::cuda_error& e) {
    GTEST_SKIP() << "CUDA build but no usable device: " << e.what();
  }
  const auto q = myriad::download(model.factor, 36);
  const auto cdf = myriad::download(model.state_cdf, 64);
  EXPECT_EQ(q, data.factor());
  EXPECT_EQ(cdf, data.state_cdf());
  EXPECT_EQ(model.exact_log_z(0), data.log_z());
  EXPECT_EQ(data.device_model().state_cdf, model.state_cdf);
#else
  EXPECT_THROW(data.device_model(), myriad::unavailable_error);
#endif
}

// =============================================================================================
// Gaussian: exact log Z and exact samples.

TEST(AisModelsGaussian, ExactSamplesMatchTheMoments) {
  struct Case {
    int dim;
    double rho, mean, sd;
  };
  for (const Case& c : {Case{5, 0.3, 1.0, 2.0}, Case{4, -0.3, -0.5, 0.7}, Case{1, 0.0, 2.0, 3.0}}) {
    SCOPED_TRACE("rho = " + std::to_string(c.rho));
    const auto g = Gaussian<double>::make(c.dim, c.rho, c.mean, c.sd);
    EXPECT_EQ(g.exact_log_z(0), 0.0);
    std::vector<double> mean(c.dim, c.mean), cov(c.dim * c.dim);
    for (int i = 0; i < c.dim; ++i)
      for (int j = 0; j < c.dim; ++j) cov[i * c.dim + j] = c.sd * c.sd * (i == j ? 1.0 : c.rho);
    const double worst = expect_gaussian_moments(exact_draws(g, 0, c.dim, 20000), mean, cov);
    std::printf("    D = %d, rho = %.1f: worst |z| = %.2f\n", c.dim, c.rho, worst);
  }
  // float: the same draws up to float rounding.
  const auto gf = Gaussian<float>::make(5, 0.3, 1.0, 2.0);
  const auto gd = Gaussian<double>::make(5, 0.3, 1.0, 2.0);
  const RandomStream rng(kSampleSeed, 3);
  for (std::uint32_t d = 0; d < 10; ++d) {
    std::vector<float> xf(5);
    std::vector<double> xd(5);
    gf.exact_sample(0, rng, d, xf);
    gd.exact_sample(0, rng, d, xd);
    // float uniforms keep 23 of the 52 random bits: Box–Muller differs by ~2^-23 |dz/du|.
    for (int i = 0; i < 5; ++i) EXPECT_NEAR(xf[i], xd[i], 1e-4 * (1 + std::fabs(xd[i])));
  }
}

}  // namespace
