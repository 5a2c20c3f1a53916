// Tests of `noisy_generator` (include/myriad/models/noisy_generator.hpp), constrained-hmc.md §12:
// Noisy<G> around the sphere and Lotka–Volterra: the Jacobian against forward-mode duals and
// central finite differences, the prior gradient against duals, initialize() on the manifold for
// 100 seeds as the inner prior draw with the noise solved for, and the generator, prior and
// quantities as the inner ones plus the noise; the optional members seen through the wrapper.

#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include "common/generator_checks.hpp"
#include "common/generator_problems.hpp"
#include "myriad/core/random.hpp"
#include "myriad/models/gld.hpp"
#include "myriad/models/lotka_volterra_problem.hpp"
#include "myriad/models/noisy_generator.hpp"
#include "myriad/models/sphere.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;
using myriad::Purpose;
using myriad::RandomStream;

// A trivially copyable per-chain struct (it is passed to kernels by value); the optional members
// are seen by the concept's detection through the wrapper; its Gram matrix is dense.
static_assert(std::is_trivially_copyable<Noisy<LotkaVolterra>>::value, "");
static_assert(myriad::generator_has_jacobian<Gld> && myriad::generator_has_jacobian<Noisy<Gld>>,
              "");
static_assert(myriad::generator_has_log_prior_gradient<Noisy<LotkaVolterraSummaries>>, "");
static_assert(myriad::generator_has_initialize<Noisy<Sphere>>, "");
static_assert(myriad::generator_gram_structure<Noisy<Gld>> == myriad::GramStructure::dense, "");
static_assert(myriad::generator_has_jacobian_vjp<Noisy<LotkaVolterra>>, "");
static_assert(myriad::generator_has_jacobian_vjp<Noisy<LotkaVolterraSummaries>>, "");
static_assert(!myriad::generator_has_jacobian_vjp<Noisy<Gld>>, "");

// ---------------------------------------------------------------------------------------------
// Jacobian = duals = finite differences; log_prior_gradient = duals.

TEST(GeneratorsJacobian, NoisySphere) {
  const auto g = Noisy<Sphere>::make(sphere(), 1.0);
  check_jacobians(g, [&](int p) { return prior_point(g, p); });
}

TEST(GeneratorsJacobian, NoisyLotkaVolterra) {
  const auto g = Noisy<LotkaVolterra>::make(lotka_volterra().host_model(), 1.0);
  check_jacobians(
      g,
      [&](int p) {
        auto v = lotka_volterra_point(p);
        const auto n = standard_normals(kGeneratorPointSeed, p + 100, g.output_dim());
        v.insert(v.end(), n.begin(), n.end());
        return v;
      },
      FdInputs{true, 104, 5});  // all of u, every 5th n (J's n block is the constant εI)
}

// ---------------------------------------------------------------------------------------------
// initialize(): on the manifold for 100 seeds; the inner prior draw and the noise solved for.

TEST(GeneratorsInitialize, NoisySphere) { check_initialize(Noisy<Sphere>::make(sphere(), 1.0)); }

TEST(GeneratorsInitialize, NoisyLotkaVolterra) {
  check_initialize(Noisy<LotkaVolterra>::make(lotka_volterra().host_model(), 1.0));
}

TEST(GeneratorsInitialize, NoisySphereUsesThePriorDrawAndSolvesForTheNoise) {
  // §12.4: u ~ ρ unchanged, n = (x̄ − g_x(u))/ε.
  const auto g = Noisy<Sphere>::make(sphere(), 0.5);
  std::vector<double> v(6), prior(5);
  ASSERT_TRUE(g.initialize(RandomStream(5, 1), 0, v));
  sphere().draw_prior(RandomStream(5, 1), 0, Purpose::initial_point, prior);
  double sum = 0;
  for (int n = 0; n < 5; ++n) {
    EXPECT_EQ(v[n], prior[n]);
    sum += prior[n] * prior[n];
  }
  EXPECT_NEAR(v[5], (4.0 - sum) / 0.5, 1e-14 * (1 + std::fabs(v[5])));
}

// ---------------------------------------------------------------------------------------------
// The generator, prior and quantities wrap the inner ones.

TEST(GeneratorsNoisy, GeneratorPriorAndQuantitiesWrapTheInnerOnes) {
  const auto inner = lotka_volterra().host_model();
  const double epsilon = 0.7;
  const auto g = Noisy<LotkaVolterra>::make(inner, epsilon);
  ASSERT_EQ(g.input_dim(), 204);
  ASSERT_EQ(g.output_dim(), 100);
  auto v = lotka_volterra_point(1);
  const auto n = standard_normals(kGeneratorPointSeed, 9, 100);
  v.insert(v.end(), n.begin(), n.end());
  const std::vector<double> u(v.begin(), v.begin() + 104);
  const auto y = generate(g, v), x = generate(inner, u);
  for (int m = 0; m < 100; ++m) EXPECT_EQ(y[m], x[m] + epsilon * n[m]);
  double n_sq = 0;
  for (double e : n) n_sq += e * e;
  EXPECT_NEAR(g.log_prior(v), inner.log_prior(u) - 100 * 0.91893853320467274178 - 0.5 * n_sq,
              1e-12 * std::fabs(g.log_prior(v)));
  const auto J = dense_jacobian(g, v);
  for (int m = 0; m < 100; ++m)
    for (int j = 0; j < 100; ++j) EXPECT_EQ(J[m * 204 + 104 + j], m == j ? epsilon : 0.0);
  EXPECT_EQ(g.num_quantities(), 4);
  EXPECT_EQ(g.quantity_name(3), "z[3]");
  std::vector<double> qa(4), qb(4);
  g.quantities(v, qa);
  inner.quantities(u, qb);
  EXPECT_EQ(qa, qb);
}

}  // namespace
