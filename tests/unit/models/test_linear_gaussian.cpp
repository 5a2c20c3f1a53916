// Tests of `linear_gaussian` (include/myriad/models/linear_gaussian.hpp), constrained-hmc.md §2:
// the analytic Jacobian against forward-mode duals and central finite differences, the prior
// gradient against duals, initialize() on the manifold for 100 seeds and as the orthogonal
// projection of the prior draw, and the exact conditional mean and covariance.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/generator_checks.hpp"
#include "common/generator_problems.hpp"
#include "myriad/core/random.hpp"
#include "myriad/models/linear_gaussian.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;
using myriad::Purpose;
using myriad::RandomStream;

// A trivially copyable per-chain struct (it is passed to kernels by value).
static_assert(std::is_trivially_copyable<LinearGaussian>::value, "");

// ---------------------------------------------------------------------------------------------
// Analytic Jacobian = duals = finite differences; log_prior_gradient = duals.

TEST(GeneratorsJacobian, LinearGaussian) {
  const auto g = linear_gaussian().host_model();
  check_jacobians(g, [&](int p) { return prior_point(g, p); });
}

// ---------------------------------------------------------------------------------------------
// initialize(): a point on the manifold for 100 seeds.

TEST(GeneratorsInitialize, LinearGaussian) { check_initialize(linear_gaussian().host_model()); }

// ---------------------------------------------------------------------------------------------
// The exact conditional of constrained-hmc.md §2.

TEST(GeneratorsLinearGaussian, ExactMeanAndCovarianceSolveTheConstraint) {
  for (const auto& [M, N] : std::vector<std::pair<int, int>>{{3, 6}, {20, 50}}) {
    const auto problem = LinearGaussianProblem::make(M, N, 11);
    const auto& A = problem.matrix();
    const auto mean = problem.exact_mean();
    const auto cov = problem.exact_covariance();
    double worst_mean = 0, worst_cov = 0, worst_sym = 0;
    for (int m = 0; m < M; ++m) {
      double am = 0;  // (A · mean)_m = x̄_m
      for (int n = 0; n < N; ++n) am += A[m * N + n] * mean[n];
      worst_mean = std::max(worst_mean, std::fabs(am - problem.observations()[m]));
      for (int i = 0; i < N; ++i) {  // (Σ Aᵀ)_{i m} = 0
        double s = 0;
        for (int n = 0; n < N; ++n) s += cov[i * N + n] * A[m * N + n];
        worst_cov = std::max(worst_cov, std::fabs(s));
      }
    }
    double trace = 0;
    for (int i = 0; i < N; ++i) {
      trace += cov[i * N + i];
      EXPECT_GE(cov[i * N + i], -1e-14);
      EXPECT_LE(cov[i * N + i], 1 + 1e-14);
      for (int j = 0; j < N; ++j)
        worst_sym = std::max(worst_sym, std::fabs(cov[i * N + j] - cov[j * N + i]));
    }
    EXPECT_LT(worst_mean, 1e-12);
    EXPECT_LT(worst_cov, 1e-12);
    EXPECT_LT(worst_sym, 1e-12);
    EXPECT_NEAR(trace, N - M, 1e-12);  // I − P A projects onto null(A), of dimension N − M
    std::printf("    M = %d, N = %d: |A mean - x|inf = %.1e, |cov A^T|max = %.1e\n", M, N,
                worst_mean, worst_cov);
  }
}

TEST(GeneratorsLinearGaussian, InitializeIsTheOrthogonalProjectionOfThePriorDraw) {
  // u = v − P(A v − x̄) is the closest point of the fibre to v: u − v ∈ range(Aᵀ).
  const auto& problem = linear_gaussian();
  const auto g = problem.host_model();
  std::vector<double> u(6), v(6);
  ASSERT_TRUE(g.initialize(RandomStream(9, 0), 0, u));
  g.draw_prior(RandomStream(9, 0), 0, Purpose::initial_point, v);
  const auto cov = problem.exact_covariance();  // I − P A annihilates range(Aᵀ)
  for (int i = 0; i < 6; ++i) {
    double s = 0;
    for (int n = 0; n < 6; ++n) s += cov[i * 6 + n] * (u[n] - v[n]);
    EXPECT_NEAR(s, 0.0, 1e-14);
  }
}

}  // namespace
