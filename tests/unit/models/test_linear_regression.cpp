// Tests of `linear_regression` (include/myriad/models/linear_regression.hpp): the supplied
// gradient against forward-mode duals and central finite differences under each prior of σ, the
// log density against the normal likelihood and priors written out directly (with the Jacobian
// of σ = e^τ), the recorded quantities, and the data container's validation.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/density_derivatives.hpp"
#include "common/device_model.hpp"
#include "common/expect_error.hpp"
#include "common/log_densities.hpp"
#include "common/recorded_quantities.hpp"
#include "common/test_points.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/linear_regression.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

constexpr std::uint64_t kDataSeed = 20261126;
constexpr int kN = 30;
constexpr int kK = 3;

/// An intercept and two normal covariates; y = 1 + 2 x1 − x2 + N(0, 0.5²).
LinearRegressionData<double> regression_data(ScalePrior prior, double scale) {
  std::vector<double> x, y;
  for (int i = 0; i < kN; ++i) {
    const std::vector<double> z = standard_normals(kDataSeed, i, 3);
    x.insert(x.end(), {1.0, z[0], z[1]});
    y.push_back(1.0 + 2.0 * z[0] - z[1] + 0.5 * z[2]);
  }
  // A proper prior on the first two coefficients, a flat one on the third.
  std::vector<double> mean = {0.5, 0.0, 0.0};
  std::vector<double> sd = {3.0, 10.0, std::numeric_limits<double>::infinity()};
  return LinearRegressionData<double>::from_arrays(x, y, kN, kK, mean, sd, prior, scale);
}

/// Points around the posterior and away from it (τ from −1.5 to 1.5).
std::vector<double> regression_point(int p) {
  std::vector<double> theta = standard_normals(kDataSeed + 1, p, kK + 1);
  theta[0] += 1.0;
  theta[1] += 2.0;
  theta[kK] *= 0.75;
  return theta;
}

static_assert(myriad::model_has_gradient<LinearRegression<double>>, "supplies its gradient");
static_assert(std::is_trivially_copyable<LinearRegression<double>>::value, "passed to kernels");

TEST(ModelsGradient, LinearRegressionUnderEachScalePrior) {
  for (const auto prior : {ScalePrior::flat, ScalePrior::half_cauchy, ScalePrior::half_normal}) {
    SCOPED_TRACE(static_cast<int>(prior));
    const auto data = regression_data(prior, 2.5);
    check_model_derivatives(data.host_model(), regression_point);
  }
}

TEST(ModelsLogDensity, LinearRegressionMatchesNormalLikelihoodPriorsAndJacobian) {
  const auto cauchy = regression_data(ScalePrior::half_cauchy, 2.5);
  const auto normal = regression_data(ScalePrior::half_normal, 2.5);
  const auto flat = regression_data(ScalePrior::flat, 1.0);
  const std::vector<double> x_flat = [&] {
    std::vector<double> x;
    for (int i = 0; i < kN; ++i) {
      const std::vector<double> z = standard_normals(kDataSeed, i, 3);
      x.insert(x.end(), {1.0, z[0], z[1]});
    }
    return x;
  }();
  for (int p = 0; p < 8; ++p) {
    const auto theta = regression_point(p);
    const double sigma = std::exp(theta[kK]);
    double direct = normal_lpdf(theta[0], 0.5, 3.0) + normal_lpdf(theta[1], 0.0, 10.0);
    for (int i = 0; i < kN; ++i) {
      const std::vector<double> z = standard_normals(kDataSeed, i, 3);
      const double y = 1.0 + 2.0 * z[0] - z[1] + 0.5 * z[2];
      const double mean =
          x_flat[i * 3] * theta[0] + x_flat[i * 3 + 1] * theta[1] + x_flat[i * 3 + 2] * theta[2];
      direct += normal_lpdf(y, mean, sigma);
    }
    direct += theta[kK];  // the Jacobian of σ = e^τ
    const double tolerance = 1e-12 * std::fabs(direct);
    EXPECT_NEAR(flat.host_model().log_density(theta), direct, tolerance) << "point " << p;
    EXPECT_NEAR(cauchy.host_model().log_density(theta), direct + half_cauchy_lpdf(sigma, 2.5),
                tolerance)
        << "point " << p;
    EXPECT_NEAR(normal.host_model().log_density(theta),
                direct + std::log(2.0) + normal_lpdf(sigma, 0.0, 2.5), tolerance)
        << "point " << p;
  }
}

TEST(ModelsQuantities, LinearRegressionRecordsBetaAndSigmaAsStanNamesThem) {
  const auto data = regression_data(ScalePrior::flat, 1.0);
  const auto model = data.host_model();
  ASSERT_NO_FATAL_FAILURE(
      expect_quantity_names(model, kK + 1, {{0, "beta[1]"}, {2, "beta[3]"}, {3, "sigma"}}));
  const auto theta = regression_point(1);
  const std::vector<double> expected = {theta[0], theta[1], theta[2], std::exp(theta[kK])};
  EXPECT_EQ(recorded_quantities(model, theta), expected);
  EXPECT_EQ(model.dim(), kK + 1);
}

TEST(ModelsLinearRegressionData, FromArraysValidatesData) {
  const std::vector<double> x(6, 1.0), y = {1, 2, 3};
  const std::vector<double> mean = {0, 0}, sd = {1, 1};
  const auto make = [&](std::vector<double> xs, std::vector<double> ys, std::vector<double> m,
                        std::vector<double> s, ScalePrior prior, double scale) {
    return LinearRegressionData<double>::from_arrays(xs, ys, 3, 2, m, s, prior, scale);
  };
  EXPECT_NO_THROW(make(x, y, mean, sd, ScalePrior::half_cauchy, 2.5));
  auto bad_x = x;
  bad_x[3] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_argument([&] { make(bad_x, y, mean, sd, ScalePrior::flat, 1); },
                          "linear_regression: x[1][1] is not finite");
  expect_invalid_argument(
      [&] {
        make(x, {1, 2}, mean, sd, ScalePrior::flat, 1);
      },
      "linear_regression: y has 2 entries, expected n = 3");
  expect_invalid_argument(
      [&] {
        make(x, y, mean, {1, 0}, ScalePrior::flat, 1);
      },
      "linear_regression: prior sd 1 must be positive (infinite: flat), got 0");
  expect_invalid_argument([&] { make(x, y, mean, sd, ScalePrior::half_normal, 0); },
                          "linear_regression: the scale prior's scale must be positive, got 0");
  const auto data = make(x, y, mean, LinearRegressionData<double>::flat(2), ScalePrior::flat, 0);
  EXPECT_EQ(data.host_model().n, 3);
  expect_no_device_model_without_cuda([&] {
    auto owned = make(x, y, mean, sd, ScalePrior::flat, 1);
    return owned.device_model();
  });
}

}  // namespace
