// Tests of `gld` (include/myriad/models/gld.hpp), constrained-hmc.md §15.1 and §16: the analytic
// Jacobian against forward-mode duals and central finite differences (also near zero shapes),
// the prior gradient against duals, the diagonal-plus-low-rank structured Jacobian against the
// dense one, initialize() on the manifold for 100 seeds and its failure outside the support, and
// the corrected quantile (erratum 5), its support and its prior.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/generator_checks.hpp"
#include "common/generator_problems.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/models/gld.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;
using myriad::RandomStream;

constexpr double kEps = std::numeric_limits<double>::epsilon();

// A trivially copyable per-chain struct (it is passed to kernels by value), whose Gram matrix
// J Jᵀ the sampler factorises as diagonal plus low rank, and without add_jacobian_vjp.
static_assert(std::is_trivially_copyable<Gld>::value, "");
static_assert(myriad::generator_gram_structure<Gld> ==
                  myriad::GramStructure::diagonal_plus_low_rank,
              "");
static_assert(!myriad::generator_has_jacobian_vjp<Gld>, "");

// ---------------------------------------------------------------------------------------------
// Analytic Jacobian = duals = finite differences; log_prior_gradient = duals.

/// The GLD's finite differences: all of u₁, every 5th u₂ input (each with all 250 outputs).
constexpr FdInputs kGldFdInputs = {true, 4, 5};

TEST(GeneratorsJacobian, Gld) {
  const auto g = gld().host_model();
  check_jacobians(
      g, [&](int p) { return prior_point(g, p); }, kGldFdInputs);
}

TEST(GeneratorsJacobian, GldNearZeroShapes) {
  // |z₃ log p|, |z₄ log(1 − p)| around the ½ switch to the Taylor series, and z₃ = 0 exactly.
  const auto g = gld().host_model();
  check_jacobians(
      g,
      [&](int p) {
        auto u = prior_point(g, p);
        const double shapes[4][2] = {{1e-9, -1e-7}, {0.0, 0.0}, {0.3, -0.3}, {-2e-3, 4e-3}};
        u[1] = shapes[p][0];
        u[2] = shapes[p][1];
        return u;
      },
      kGldFdInputs);
}

// ---------------------------------------------------------------------------------------------
// Structured Jacobian: B and T equal the blocks of the dense Jacobian.

/// T of the diagonal form: a vector written as T(m).
struct DiagonalBlock {
  double* d;
  double& operator()(int m) const { return d[m]; }
};

TEST(GeneratorsStructure, GldDiagonalPlusLowRank) {
  const auto g = gld().host_model();
  const int M = g.output_dim(), N = g.input_dim(), K = g.num_parameters();
  ASSERT_EQ(K, 4);
  ASSERT_EQ(N, 254);
  ASSERT_EQ(M, 250);
  for (int p = 0; p < 8; ++p) {
    SCOPED_TRACE("prior point " + std::to_string(p));
    const auto u = prior_point(g, p);
    const auto J = dense_jacobian(g, u);
    std::vector<double> b(M * K, NAN), d(M, NAN);
    auto B = myriad::dense_matrix(b.data(), M, K);
    DiagonalBlock T{d.data()};
    g.structured_jacobian(u, B, T);
    for (int m = 0; m < M; ++m) {
      for (int k = 0; k < K; ++k) EXPECT_EQ(b[m * K + k], J[m * N + k]) << m << ", " << k;
      EXPECT_EQ(d[m], J[m * N + K + m]) << m;
      EXPECT_GT(d[m], 0) << m;
      for (int j = 0; j < M; ++j) {
        if (j != m) {
          ASSERT_EQ(J[m * N + K + j], 0.0) << m << ", " << j;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// initialize(): a point on the manifold for 100 seeds; none outside the support.

TEST(GeneratorsInitialize, Gld) { check_initialize(gld().host_model()); }

TEST(GeneratorsInitialize, GldRejectsDataOutsideTheSupport) {
  // z₃ > 0 bounds the support below by z₁ − 1/(z₂ z₃): an observation under it has no noise
  // input, so initialize() must report failure for that attempt.
  const std::vector<double> data = {0.0, 1.0};
  const auto problem = GldProblem::from_observations(data);
  const auto g = problem.host_model();
  int failures = 0, successes = 0;
  for (std::uint32_t attempt = 0; attempt < 200; ++attempt) {
    std::vector<double> u(g.input_dim());
    const bool ok = g.initialize(RandomStream(1, 0), attempt, u);
    double z[4];
    g.parameters(u, z);
    const double lower = Gld::support_lower(z[0], z[1], z[2]);
    const double upper = Gld::support_upper(z[0], z[1], z[3]);
    const bool inside = data[0] > lower && data[1] < upper;
    EXPECT_EQ(ok, inside) << "attempt " << attempt << ": support [" << lower << ", " << upper
                          << "]";
    (ok ? successes : failures) += 1;
    if (ok) {
      EXPECT_LT(residual_norm(g, u), 1e-10);
    }
  }
  EXPECT_GT(failures, 0);
  EXPECT_GT(successes, 0);
}

// ---------------------------------------------------------------------------------------------
// The corrected quantile, its support and its prior (constrained-hmc.md §15.1, §16).

TEST(GeneratorsGld, QuantileIsMonotoneWithTheCorrectedSign) {
  const auto g = gld().host_model();
  std::vector<std::array<double, 4>> parameters = {{5, 1, 0.4, -0.1}};
  for (int p = 0; p < 50; ++p) {
    const auto u = prior_point(g, p);
    double z[4];
    g.parameters(u, z);
    parameters.push_back({z[0], z[1], z[2], z[3]});
  }
  for (const auto& z : parameters) {
    double previous = -INFINITY;
    for (int i = 1; i < 2000; ++i) {
      const double p = i / 2000.0;
      const double q = Gld::quantile(p, z[0], z[1], z[2], z[3]);
      // Against the printed FMKL formula with "−", evaluated directly with pow.
      const double direct =
          z[0] + ((std::pow(p, z[2]) - 1) / z[2] - (std::pow(1 - p, z[3]) - 1) / z[3]) / z[1];
      ASSERT_NEAR(q, direct, 1e-10 * (1 + std::fabs(direct))) << "p = " << p;
      // q'(p) = (p^{z₃−1} + (1 − p)^{z₄−1})/z₂ > 0: strictly increasing (up to rounding).
      ASSERT_GT(q, previous - 4 * kEps * std::fabs(q)) << "p = " << p << ", z₃ = " << z[2];
      previous = q;
    }
  }
  // The printed "+" is not monotone at the paper's z (erratum 5): its derivative
  // (p^{z₃−1} − (1 − p)^{z₄−1})/z₂ changes sign, so it falls again as p → 1.
  auto plus = [](double p) {
    return 5 + ((std::pow(p, 0.4) - 1) / 0.4 + (std::pow(1 - p, -0.1) - 1) / -0.1);
  };
  EXPECT_GT(plus(0.5), plus(0.999));
}

TEST(GeneratorsGld, GeneratedObservationsLieInTheSupportAndMatchTheQuantile) {
  const auto g = gld().host_model();
  for (int p = 0; p < 50; ++p) {
    const auto u = prior_point(g, p);
    const auto x = generate(g, u);
    double z[4];
    g.parameters(u, z);
    const double lower = Gld::support_lower(z[0], z[1], z[2]);
    const double upper = Gld::support_upper(z[0], z[1], z[3]);
    for (int m = 0; m < g.output_dim(); ++m) {
      ASSERT_GE(x[m], lower) << p << ", " << m;
      ASSERT_LE(x[m], upper) << p << ", " << m;
      // p_m = logistic CDF of u₂[m]; the quantile at moderate p agrees to rounding.
      const double prob = 1 / (1 + std::exp(-Gld::kLogisticRate * u[4 + m]));
      if (prob > 1e-6 && prob < 1 - 1e-6) {
        ASSERT_NEAR(x[m], Gld::quantile(prob, z[0], z[1], z[2], z[3]),
                    1e-9 * (1 + std::fabs(x[m])));
      }
    }
  }
  // The paper's data: z₃ = 0.4 bounds the support below by 5 − 1/0.4 = 2.5.
  for (double x : gld().observations()) EXPECT_GT(x, 2.5);
}

TEST(GeneratorsGld, PriorOfScaleIsExponentialAndOfProbabilitiesUniform) {
  // Moments of 10⁵ transformed prior draws, each within 5 standard errors (se = sd/√n):
  //   z₂ ~ Exp(1): E z₂ = 1 (sd 1), E z₂² = 2 (sd √(E z⁴ − 4) = √20);
  //   p ~ U(0, 1): E p = ½ (sd √(1/12)), E p² = ⅓ (sd √(1/5 − 1/9)).
  const std::vector<double> one = {5.0};
  const auto g = Gld::make(one.data(), 1);
  const int n = 100000;
  double z2 = 0, z2_sq = 0, prob = 0, prob_sq = 0;
  std::vector<double> u(g.input_dim());
  for (int i = 0; i < n; ++i) {
    g.sample_prior(RandomStream(kGeneratorPointSeed, 0), static_cast<std::uint32_t>(i), u);
    double z[4];
    g.parameters(u, z);
    const double p = 1 / (1 + std::exp(-Gld::kLogisticRate * u[4]));
    z2 += z[1];
    z2_sq += z[1] * z[1];
    prob += p;
    prob_sq += p * p;
  }
  const double root_n = std::sqrt(static_cast<double>(n));
  EXPECT_NEAR(z2 / n, 1.0, 5 * 1.0 / root_n);
  EXPECT_NEAR(z2_sq / n, 2.0, 5 * std::sqrt(20.0) / root_n);
  EXPECT_NEAR(prob / n, 0.5, 5 * std::sqrt(1.0 / 12) / root_n);
  EXPECT_NEAR(prob_sq / n, 1.0 / 3, 5 * std::sqrt(1.0 / 5 - 1.0 / 9) / root_n);
  std::printf("    E z2 = %.4f, E z2^2 = %.4f, E p = %.4f, E p^2 = %.4f (n = %d)\n", z2 / n,
              z2_sq / n, prob / n, prob_sq / n, n);
}

TEST(GeneratorsGld, LogPriorIsTheDensityThatMakesScaleExponentialAndProbabilitiesUniform) {
  // Change of variables with the generator's own log_prior: the density of z₂ = softplus(c u)
  // is ρ(u)/|dz₂/du| = e^{−z₂}, that of p = σ(c u) is ρ(u)/|dp/du| = 1. log ρ of one logistic
  // input is read off log_prior as a difference against u = 0, where ρ(0) = c/4 = π/(4√3).
  const std::vector<double> one = {5.0};
  const auto g = Gld::make(one.data(), 1);
  const double c = Gld::kLogisticRate;
  std::vector<double> base = {0.3, -0.2, 0.1, 0.0, 0.0};
  const double log_rho0 = std::log(M_PI / (4 * std::sqrt(3.0)));
  for (double t = -12; t <= 12; t += 0.25) {
    std::vector<double> u = base;
    u[3] = t;
    const double log_rho = g.log_prior(u) - g.log_prior(base) + log_rho0;
    const double z2 = std::log1p(std::exp(c * t));
    const double dz2 = c / (1 + std::exp(-c * t));
    EXPECT_NEAR(log_rho - std::log(dz2), -z2, 1e-12 * (1 + z2)) << "u = " << t;
    u = base;
    u[4] = t;
    const double log_rho_noise = g.log_prior(u) - g.log_prior(base) + log_rho0;
    // log(dp/du) = log(c p (1 − p)) = log c − softplus(c u) − softplus(−c u), without the
    // cancellation of 1 − p.
    auto softplus = [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); };
    const double log_dp = std::log(c) - softplus(c * t) - softplus(-c * t);
    EXPECT_NEAR(log_rho_noise - log_dp, 0.0, 1e-12 * (1 + std::fabs(log_dp))) << "u = " << t;
  }
}

}  // namespace
