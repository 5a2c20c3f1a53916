// Tests of `funnel` (include/myriad/models/funnel.hpp): the supplied gradient against forward-mode
// duals and central finite differences, the log density against Neal's definition and its
// normalisation along v, float against double, the recorded quantities and argument validation.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/density_derivatives.hpp"
#include "common/expect_error.hpp"
#include "common/log_densities.hpp"
#include "common/recorded_quantities.hpp"
#include "common/test_points.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/funnel.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

constexpr std::uint64_t kPointSeed = 20240611;
constexpr int kPoints = 8;

/// Test points from the funnel itself: v ~ N(0, 3²), x_i | v ~ N(0, e^v).
std::vector<double> funnel_point(int p) {
  std::vector<double> z = standard_normals(kPointSeed, p, 6);
  z[0] *= 3;
  for (int i = 1; i < 6; ++i) z[i] *= std::exp(z[0] / 2);
  return z;
}

// ---------------------------------------------------------------------------------------------
// Supplied gradient = duals = finite differences; supplied log p = generic log p.

static_assert(myriad::model_has_gradient<Funnel<float>>, "funnel supplies it");

TEST(ModelsGradient, Funnel) { check_model_derivatives(Funnel<double>::make(6), funnel_point); }

// ---------------------------------------------------------------------------------------------
// Log densities against direct formulas written independently with <cmath>.

TEST(ModelsLogDensity, FunnelMatchesNealsDefinition) {
  const auto model = Funnel<double>::make(6);
  for (int p = 0; p < kPoints; ++p) {
    const auto z = funnel_point(p);
    double direct = normal_lpdf(z[0], 0, 3);
    for (int i = 1; i < 6; ++i) direct += normal_lpdf(z[i], 0, std::exp(z[0] / 2));
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
    EXPECT_NEAR(std::log(integral), normal_lpdf(v, 0, 3), 1e-9) << "v = " << v;
  }
}

// ---------------------------------------------------------------------------------------------
// float instantiation: compiles, stays trivially copyable and agrees with double.

static_assert(std::is_trivially_copyable<Funnel<float>>::value, "Funnel<float>");
static_assert(std::is_trivially_copyable<Funnel<double>>::value, "Funnel<double>");

TEST(ModelsFloat, FunnelAgreesWithDouble) {
  check_float_model(Funnel<float>::make(6), Funnel<double>::make(6), funnel_point);
}

// ---------------------------------------------------------------------------------------------
// Recorded quantities and their names.

static_assert(myriad::model_has_quantities<Funnel<double>>, "funnel names v, x[i]");

TEST(ModelsQuantities, FunnelRecordsParametersAsVAndX) {
  const auto model = Funnel<double>::make(6);
  ASSERT_NO_FATAL_FAILURE(expect_quantity_names(model, 6, {{0, "v"}, {1, "x[1]"}, {5, "x[5]"}}));
  const auto z = funnel_point(1);
  EXPECT_EQ(recorded_quantities(model, z), z);
}

// ---------------------------------------------------------------------------------------------
// make() validation.

TEST(ModelsMake, FunnelRejectsDimBelowTwo) {
  expect_invalid_argument([] { Funnel<double>::make(1); }, "funnel: dim must be >= 2, got 1");
  expect_invalid_argument([] { Funnel<float>::make(-3); }, "funnel: dim must be >= 2, got -3");
  EXPECT_EQ(Funnel<double>::make().dim(), 10);
  EXPECT_EQ(Funnel<double>::make(2).dim(), 2);
}

}  // namespace
