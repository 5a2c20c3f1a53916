// Tests of `linear_generative` (include/myriad/models/linear_generative.hpp, hais.md §9.1), an
// annealing target with exact answers: the supplied gradient against forward-mode duals and
// central finite differences, the log density against the normalised joint written out, the
// exact log Z against independent routes (the posterior identity
// log p(x, a) − log p(a | x) = log p(x), numerical quadrature, the zero-Φ noise density), the
// exact samples' moments within 5 standard errors, the synthetic data's distributions, float
// against double, argument checks and the device copy.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/density_derivatives.hpp"
#include "common/device_model.hpp"
#include "common/exact_samples.hpp"
#include "common/expect_error.hpp"
#include "common/quadrature.hpp"
#include "common/test_points.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/linear_generative.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

// Test points come from kPointSeed's streams. The derivative and float checks allow twice the
// rounding of the sums, 2 · terms · ε · (1 + scale), and twice the central-difference bound:
// error_scale_tolerances(scales, 2, 1, ε).
constexpr std::uint64_t kPointSeed = 20240612;

static_assert(std::is_trivially_copyable_v<LinearGenerative<float>>, "views are copied to kernels");
static_assert(std::is_trivially_copyable_v<LinearGenerativePoint<double>>, "");
static_assert(myriad::target_has_problems<LinearGenerative<double>>, "one problem per point");
static_assert(myriad::target_has_exact_log_z<LinearGenerative<double>>, "");
static_assert(myriad::target_has_exact_sample<LinearGenerative<float>>, "");
static_assert(myriad::model_has_gradient<LinearGenerativePoint<float>>, "");
static_assert(!myriad::target_has_bounds<LinearGenerative<double>>, "unbounded latents");
static_assert(!std::is_copy_constructible_v<LinearGenerativeData<double>>, "owns device memory");
static_assert(std::is_move_constructible_v<LinearGenerativeData<double>>, "");
static_assert(
    std::is_same_v<decltype(myriad::problem_target(std::declval<LinearGenerative<float>>(), 0)),
                   LinearGenerativePoint<float>>,
    "problem(p) is the point's density model");

/// Rounding scales of problem p at a (see ErrorScales).
ErrorScales linear_generative_scales(const LinearGenerative<double>& model, int p,
                                     const std::vector<double>& a) {
  const int m_dim = model.observed_dim, l_dim = model.latent_dim;
  const LinearGenerativePoint<double> point = model.problem(p);
  ErrorScales s;
  s.gradient.assign(l_dim, 0.0);
  s.value = std::fabs(model.log_normaliser);
  for (int l = 0; l < l_dim; ++l) {
    s.value += model.prior == LinearGenerativePrior::gaussian ? 0.5 * a[l] * a[l] : std::fabs(a[l]);
    s.gradient[l] = model.prior == LinearGenerativePrior::gaussian ? std::fabs(a[l]) : 1.0;
  }
  for (int m = 0; m < m_dim; ++m) {
    double magnitude = std::fabs(point.x[m]);
    for (int l = 0; l < l_dim; ++l) magnitude += std::fabs(point.phi[m * l_dim + l] * a[l]);
    s.value += 0.5 * model.noise_precision * magnitude * magnitude;
    for (int l = 0; l < l_dim; ++l) {
      s.gradient[l] += model.noise_precision * std::fabs(point.phi[m * l_dim + l]) * magnitude;
    }
  }
  s.terms = 2 * l_dim + m_dim + 8;
  return s;
}

/// Test point near problem p's posterior: the generating latent plus 0.3 z.
std::vector<double> latent_point(const LinearGenerativeData<double>& data, int p, int k) {
  const int l_dim = data.latent_dim();
  std::vector<double> a =
      standard_normals(kPointSeed, static_cast<std::uint64_t>(100 * p + k), l_dim);
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
    DerivativeAgreement agreement;
    for (int p = 0; p < c.points; ++p) {
      for (int k = 0; k < 4; ++k) {
        SCOPED_TRACE("M = " + std::to_string(c.dim) + ", L = " + std::to_string(c.latents) +
                     ", point " + std::to_string(p) + ", draw " + std::to_string(k));
        const auto a = latent_point(data, p, k);
        expect_consistent_derivatives(
            model.problem(p), a,
            error_scale_tolerances(linear_generative_scales(model, p, a), 2, 1), agreement);
      }
    }
    std::printf("    M = %d, L = %d: worst error / tolerance = %.3f\n", c.dim, c.latents,
                agreement.worst());
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
    const auto a = standard_normals(kPointSeed, 500 + p, 36);
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
  expect_rounded_to_float(f.x(), a.x());
  expect_rounded_to_float(f.phi(), a.phi());
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
        expect_float_agrees(
            model_f.problem(p), model_d.problem(p), a,
            error_scale_tolerances(linear_generative_scales(model_d, p, a), 2, 1, kFloatEps), worst,
            FloatChecks{true, false});
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
  const auto device = device_model_or_nothing([&] { return data.device_model(); });
  if (!device) return;  // skipped, or a build without CUDA (unavailable_error checked)
  const auto& model = *device;
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
}

}  // namespace
