// Tests of `gaussian` (include/myriad/models/gaussian.hpp): the supplied gradient against
// forward-mode duals and central finite differences, the log density against the exact
// normalised pdf and the Hessian −Σ⁻¹ against dense linear algebra, float against double,
// argument validation, and the exact log Z and exact samples of an annealing target.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "common/dense_gaussian.hpp"
#include "common/density_derivatives.hpp"
#include "common/exact_samples.hpp"
#include "common/expect_error.hpp"
#include "common/test_points.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/model/autodiff.hpp"
#include "myriad/models/gaussian.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

constexpr std::uint64_t kPointSeed = 20240611;
constexpr int kPoints = 8;

Gaussian<double> positive_rho_gaussian() { return Gaussian<double>::make(5, 0.3, 1.0, 2.0); }
Gaussian<double> negative_rho_gaussian() { return Gaussian<double>::make(4, -0.3, -0.5, 0.7); }

/// Test points in the region where the Gaussian has its mass: mean + 1.5 sd z.
std::vector<double> gaussian_point(const Gaussian<double>& g, int p) {
  std::vector<double> x = standard_normals(kPointSeed, p, g.dim());
  for (double& v : x) v = g.mean + 1.5 * g.sd * v;
  return x;
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

// ---------------------------------------------------------------------------------------------
// Exact normalised density and Hessian −Σ⁻¹ against dense linear algebra.

/// Σ = s²[(1 − ρ)I + ρ11ᵀ] as a dense D × D matrix.
Matrix dense_covariance(int dim, double rho, double sd) {
  Matrix cov(dim, std::vector<double>(dim));
  for (int i = 0; i < dim; ++i)
    for (int j = 0; j < dim; ++j) cov[i][j] = sd * sd * (i == j ? 1.0 : rho);
  return cov;
}

TEST(ModelsGaussian, LogDensityIsExactNormalisedPdf) {
  const int dim = 4;
  for (double rho : {0.6, -0.3}) {
    const double mean = 0.5, sd = 1.7;
    const auto model = Gaussian<double>::make(dim, rho, mean, sd);
    const auto cov = dense_covariance(dim, rho, sd);
    const auto l = cholesky(cov);
    double log_det = 0;
    for (int i = 0; i < dim; ++i) log_det += 2 * std::log(l[i][i]);
    for (int p = 0; p < kPoints; ++p) {
      const auto x = gaussian_point(model, p);
      std::vector<double> r(dim);
      for (int i = 0; i < dim; ++i) r[i] = x[i] - mean;
      const auto w = cholesky_solve(l, r);
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
    const auto l = cholesky(dense_covariance(dim, rho, sd));
    const auto x = gaussian_point(model, 0);
    for (int j = 0; j < dim; ++j) {
      std::vector<double> unit(dim, 0.0);
      unit[j] = 1;
      const auto column = cholesky_solve(l, unit);  // column j of Σ⁻¹
      for (int i = 0; i < dim; ++i) {
        EXPECT_NEAR(myriad::hessian_entry_by_duals(model, x, i, j), -column[i], 1e-12)
            << "rho " << rho << ", entry (" << i << ", " << j << ")";
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// float instantiation: compiles, stays trivially copyable and agrees with double.

static_assert(std::is_trivially_copyable<Gaussian<float>>::value, "Gaussian<float>");

TEST(ModelsFloat, GaussianAgreesWithDouble) {
  const auto g = positive_rho_gaussian();
  check_float_model(Gaussian<float>::make(5, 0.3, 1.0, 2.0), g,
                    [&](int p) { return gaussian_point(g, p); });
  const auto h = negative_rho_gaussian();
  check_float_model(Gaussian<float>::make(4, -0.3, -0.5, 0.7), h,
                    [&](int p) { return gaussian_point(h, p); });
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

// ---------------------------------------------------------------------------------------------
// Annealing target: exact log Z and exact samples.

static_assert(myriad::target_has_exact_log_z<Gaussian<double>>, "");
static_assert(myriad::target_has_exact_sample<Gaussian<float>>, "");

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
  const myriad::RandomStream rng(kExactSampleSeed, 3);
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
