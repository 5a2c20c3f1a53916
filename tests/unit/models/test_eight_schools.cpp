// Tests of `eight_schools` (include/myriad/models/eight_schools.hpp): the supplied gradient against
// forward-mode duals and central finite differences, the log density against the hierarchical
// model written out directly, float against double, the recorded quantities and validation of
// custom data.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "common/density_derivatives.hpp"
#include "common/expect_error.hpp"
#include "common/log_densities.hpp"
#include "common/recorded_quantities.hpp"
#include "common/test_points.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/eight_schools.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

constexpr std::uint64_t kPointSeed = 20240611;
constexpr int kPoints = 8;

/// Test points: μ on its prior scale, log τ and η standard normal, and the two last points in
/// the half-Cauchy tail and in the neck of the funnel.
std::vector<double> eight_schools_point(int p) {
  std::vector<double> z = standard_normals(kPointSeed, p, 10);
  z[0] *= 5;                          // μ on its prior scale; log τ and η standard normal
  if (p == kPoints - 1) z[1] = 4.0;   // τ ≈ 55: far in the half-Cauchy tail
  if (p == kPoints - 2) z[1] = -5.0;  // τ ≈ 0.007: the neck of the funnel
  return z;
}

// ---------------------------------------------------------------------------------------------
// Supplied gradient = duals = finite differences; supplied log p = generic log p.

static_assert(myriad::model_has_gradient<EightSchools<float>>, "eight schools supplies it");

TEST(ModelsGradient, EightSchools) {
  check_model_derivatives(EightSchools<double>::make(), eight_schools_point);
}

// ---------------------------------------------------------------------------------------------
// Log density against a direct formula written independently with <cmath>.

TEST(ModelsLogDensity, EightSchoolsMatchesHierarchicalModel) {
  const double y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
  const double sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};
  const auto model = EightSchools<double>::make();
  for (int p = 0; p < kPoints; ++p) {
    const auto z = eight_schools_point(p);
    const double mu = z[0], tau = std::exp(z[1]);
    // p(τ) = 2 / (π·5·(1 + (τ/5)²)) on τ > 0, and dτ/d log τ = τ.
    double direct = normal_lpdf(mu, 0, 5) + std::log(2 / (M_PI * 5 * (1 + (tau / 5) * (tau / 5)))) +
                    std::log(tau);
    for (int j = 0; j < 8; ++j) {
      direct += normal_lpdf(z[2 + j], 0, 1) + normal_lpdf(y[j], mu + tau * z[2 + j], sigma[j]);
    }
    EXPECT_NEAR(model.log_density(z), direct, 1e-12 * std::fabs(direct)) << "point " << p;
  }
}

// ---------------------------------------------------------------------------------------------
// float instantiation: compiles, stays trivially copyable and agrees with double.

static_assert(std::is_trivially_copyable<EightSchools<float>>::value, "EightSchools<float>");
static_assert(std::is_trivially_copyable<EightSchools<double>>::value, "EightSchools<double>");

TEST(ModelsFloat, EightSchoolsAgreesWithDouble) {
  check_float_model(EightSchools<float>::make(), EightSchools<double>::make(), eight_schools_point);
}

// ---------------------------------------------------------------------------------------------
// Recorded quantities and their names.

static_assert(myriad::model_has_quantities<EightSchools<double>>, "eight schools names mu, ...");

TEST(ModelsQuantities, EightSchoolsRecordsMuTauAndSchoolEffects) {
  const auto model = EightSchools<double>::make();
  ASSERT_NO_FATAL_FAILURE(expect_quantity_names(model, 10, {{0, "mu"}, {1, "tau"}}));
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(myriad::recorded_quantity_name(model, 2 + j), "theta[" + std::to_string(j + 1) + "]");
  }
  const auto z = eight_schools_point(0);
  const auto q = recorded_quantities(model, z);
  EXPECT_EQ(q[0], z[0]);
  EXPECT_DOUBLE_EQ(q[1], std::exp(z[1]));
  for (int j = 0; j < 8; ++j) EXPECT_DOUBLE_EQ(q[2 + j], z[0] + std::exp(z[1]) * z[2 + j]);
}

// ---------------------------------------------------------------------------------------------
// make() validation.

TEST(ModelsMake, EightSchoolsValidatesCustomData) {
  const std::vector<double> y = {28, 8, -3, 7, -1, 1, 18, 12};
  std::vector<double> sigma = {15, 10, 16, 11, 9, 11, 10, 18};
  const auto custom = EightSchools<double>::make(y, sigma);
  const auto standard = EightSchools<double>::make();
  const auto z = eight_schools_point(3);
  EXPECT_EQ(custom.log_density(z), standard.log_density(z));
  EXPECT_EQ(standard.dim(), 10);
  sigma[3] = 0;
  expect_invalid_argument([&] { EightSchools<double>::make(y, sigma); },
                          "eight_schools: sigma[4] must be positive, got 0");
  // Another number of schools: the first three, as J = 3.
  const auto three = EightSchools<double>::make({28, 8, -3}, {15, 10, 16});
  EXPECT_EQ(three.dim(), 5);
  EXPECT_EQ(myriad::recorded_quantity_name(three, 4), "theta[3]");
  expect_invalid_argument(
      [&] {
        EightSchools<double>::make({1, 2}, {1});
      },
      "eight_schools: sigma has 1 entries, expected J = 2");
  expect_invalid_argument(
      [&] {
        EightSchools<double>::make(std::vector<double>(33, 1.0), std::vector<double>(33, 1.0));
      },
      "eight_schools: J must be in 1..32, got 33");
}

}  // namespace
