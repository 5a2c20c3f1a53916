// Tests of `sphere` (include/myriad/models/sphere.hpp), constrained-hmc.md §2: the analytic
// Jacobian against forward-mode duals and central finite differences, the prior gradient against
// duals, and initialize() on the manifold for 100 seeds as the normalised prior draw.

#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include "common/generator_checks.hpp"
#include "common/generator_problems.hpp"
#include "myriad/core/random.hpp"
#include "myriad/models/sphere.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;
using myriad::Purpose;
using myriad::RandomStream;

// A trivially copyable per-chain struct (it is passed to kernels by value).
static_assert(std::is_trivially_copyable<Sphere>::value, "");

// ---------------------------------------------------------------------------------------------
// Analytic Jacobian = duals = finite differences; log_prior_gradient = duals.

TEST(GeneratorsJacobian, Sphere) {
  const auto g = sphere();
  check_jacobians(g, [&](int p) { return prior_point(g, p); });
}

// ---------------------------------------------------------------------------------------------
// initialize(): on the manifold for 100 seeds, and the normalised prior draw.

TEST(GeneratorsInitialize, Sphere) { check_initialize(sphere()); }

TEST(GeneratorsInitialize, SphereIsTheNormalisedPriorDraw) {
  const auto g = sphere();
  std::vector<double> u(5), v(5);
  ASSERT_TRUE(g.initialize(RandomStream(3, 7), 2, u));
  g.draw_prior(RandomStream(3, 7), 2, Purpose::initial_point, v);
  double norm = 0;
  for (double x : v) norm += x * x;
  for (int n = 0; n < 5; ++n) EXPECT_NEAR(u[n], 2.0 * v[n] / std::sqrt(norm), 1e-15);
}

}  // namespace
