// Tests of `logistic` (include/myriad/models/logistic.hpp): the supplied gradient against
// forward-mode duals and central finite differences, the log density against the Bernoulli
// likelihood and normal prior written out directly, float against double, the recorded
// quantities, and the data container: determinism, structure, validation and device upload.

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
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/logistic.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

constexpr std::uint64_t kPointSeed = 20240611;
constexpr int kPoints = 8;

const LogisticData<double>& logistic_data() {
  static const LogisticData<double> data = LogisticData<double>::synthetic(50, 4, 7);
  return data;
}

/// Test points where the posterior has its mass: 1.5 z.
std::vector<double> logistic_point(int p) {
  std::vector<double> beta = standard_normals(kPointSeed, p, 4);
  for (double& b : beta) b *= 1.5;
  return beta;
}

// ---------------------------------------------------------------------------------------------
// Supplied gradient = duals = finite differences; supplied log p = generic log p.

static_assert(myriad::model_has_gradient<Logistic<float>>, "logistic supplies its gradient");

TEST(ModelsGradient, Logistic) {
  check_model_derivatives(logistic_data().host_model(2.5), logistic_point);
}

TEST(ModelsGradient, LogisticWithSeparatedLinearPredictor) {
  // Large |η| exercises both branches of the stable softplus/sigmoid without overflow.
  std::vector<double> x = {1, 40, 1, -40, 1, 0.5, 1, -700};
  std::vector<double> y = {1, 0, 0, 1};
  const auto data = LogisticData<double>::from_arrays(x, y, 4, 2);
  check_model_derivatives(data.host_model(10), [](int p) {
    return std::vector<double>{0.1 * p - 0.3, 1.0 + 0.05 * p};
  });
}

// ---------------------------------------------------------------------------------------------
// Log density against a direct formula written independently with <cmath>.

TEST(ModelsLogDensity, LogisticMatchesBernoulliLikelihoodPlusNormalPrior) {
  const auto& data = logistic_data();
  const double prior_sd = 2.5;
  const auto model = data.host_model(prior_sd);
  for (int p = 0; p < kPoints; ++p) {
    const auto beta = logistic_point(p);
    double direct = 0;
    for (int j = 0; j < 4; ++j) direct += normal_lpdf(beta[j], 0, prior_sd);
    for (int i = 0; i < data.n(); ++i) {
      double eta = 0;
      for (int j = 0; j < 4; ++j) eta += data.x()[i * 4 + j] * beta[j];
      const double prob = 1 / (1 + std::exp(-eta));
      direct += data.y()[i] == 1 ? std::log(prob) : std::log(1 - prob);
    }
    EXPECT_NEAR(model.log_density(beta), direct, 1e-12 * std::fabs(direct)) << "point " << p;
  }
}

// ---------------------------------------------------------------------------------------------
// float instantiation: compiles, stays trivially copyable and agrees with double.

static_assert(std::is_trivially_copyable<Logistic<float>>::value, "Logistic<float>");
static_assert(std::is_trivially_copyable<Logistic<double>>::value, "Logistic<double>");

TEST(ModelsFloat, LogisticAgreesWithDouble) {
  const auto data_f = LogisticData<float>::synthetic(50, 4, 7);
  // The double model sees the float-rounded data, so only the arithmetic differs.
  const auto data_d = LogisticData<double>::from_arrays(
      std::vector<double>(data_f.x().begin(), data_f.x().end()),
      std::vector<double>(data_f.y().begin(), data_f.y().end()), 50, 4);
  check_float_model(data_f.host_model(2.5f), data_d.host_model(2.5), logistic_point);
}

// ---------------------------------------------------------------------------------------------
// Recorded quantities and their names.

static_assert(myriad::model_has_quantities<Logistic<double>>, "logistic names beta[j]");

TEST(ModelsQuantities, LogisticRecordsBeta) {
  const auto model = logistic_data().host_model(10);
  ASSERT_NO_FATAL_FAILURE(expect_quantity_names(model, 4, {{0, "beta[0]"}, {3, "beta[3]"}}));
  const auto beta = logistic_point(2);
  EXPECT_EQ(recorded_quantities(model, beta), beta);
}

// ---------------------------------------------------------------------------------------------
// Logistic data: determinism, structure, validation, device upload.

TEST(ModelsLogisticData, SyntheticIsDeterministicPerSeed) {
  const auto a = LogisticData<double>::synthetic(50, 4, 7);
  const auto b = LogisticData<double>::synthetic(50, 4, 7);
  const auto c = LogisticData<double>::synthetic(50, 4, 8);
  EXPECT_EQ(a.x(), b.x());
  EXPECT_EQ(a.y(), b.y());
  EXPECT_EQ(a.true_beta(), b.true_beta());
  EXPECT_NE(a.x(), c.x());
  EXPECT_NE(a.y(), c.y());
  EXPECT_NE(a.true_beta(), c.true_beta());
  // Both precisions see the same data: the float data are the double data rounded.
  const auto f = LogisticData<float>::synthetic(50, 4, 7);
  ASSERT_EQ(f.x().size(), a.x().size());
  expect_rounded_to_float(f.x(), a.x());
  expect_rounded_to_float(f.y(), a.y());
}

TEST(ModelsLogisticData, SyntheticHasInterceptColumnAndBinaryLabels) {
  const auto data = LogisticData<double>::synthetic(50, 4, 7);
  EXPECT_EQ(data.n(), 50);
  EXPECT_EQ(data.d(), 4);
  ASSERT_EQ(data.x().size(), 200u);
  ASSERT_EQ(data.y().size(), 50u);
  EXPECT_EQ(data.true_beta().size(), 4u);
  int ones = 0;
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(data.x()[i * 4], 1.0) << "row " << i;
    EXPECT_TRUE(data.y()[i] == 0 || data.y()[i] == 1) << "row " << i;
    ones += data.y()[i] == 1;
  }
  EXPECT_GT(ones, 0);
  EXPECT_LT(ones, 50);
  const auto model = data.host_model(10);
  EXPECT_EQ(model.x, data.x().data());
  EXPECT_EQ(model.y, data.y().data());
  EXPECT_EQ(model.n, 50);
  EXPECT_EQ(model.d, 4);
  EXPECT_EQ(model.prior_sd, 10.0);
  EXPECT_EQ(model.dim(), 4);
}

TEST(ModelsLogisticData, SyntheticLabelsFollowTheTrueModel) {
  // n = 20000: Σ (y_i − σ(x_iᵀβ)) has mean 0 and variance Σ σ(1 − σ) given X; covariates have
  // mean 0 and variance 1. Each checked within 5 standard errors.
  const int n = 20000, d = 3;
  const auto data = LogisticData<double>::synthetic(n, d, 11);
  double residual = 0, variance = 0;
  double x_sum = 0, x_sq = 0;
  for (int i = 0; i < n; ++i) {
    double eta = 0;
    for (int j = 0; j < d; ++j) eta += data.x()[i * d + j] * data.true_beta()[j];
    const double p = 1 / (1 + std::exp(-eta));
    residual += data.y()[i] - p;
    variance += p * (1 - p);
    x_sum += data.x()[i * d + 1];
    x_sq += data.x()[i * d + 1] * data.x()[i * d + 1];
  }
  EXPECT_LE(std::fabs(residual), 5 * std::sqrt(variance));
  EXPECT_LE(std::fabs(x_sum / n), 5 * std::sqrt(1.0 / n));
  EXPECT_LE(std::fabs(x_sq / n - 1), 5 * std::sqrt(2.0 / n));
}

TEST(ModelsLogisticData, FromArraysValidatesData) {
  const int n = 5, d = 4;
  std::vector<double> x(n * d, 0.5), y = {0, 1, 1, 0, 1};
  EXPECT_NO_THROW(LogisticData<double>::from_arrays(x, y, n, d));

  auto bad_x = x;
  bad_x[3 * d + 2] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(bad_x, y, n, d); },
                          "logistic: x[3][2] is not finite");
  bad_x = x;
  bad_x[1 * d + 0] = std::numeric_limits<double>::infinity();
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(bad_x, y, n, d); },
                          "logistic: x[1][0] is not finite");

  auto bad_y = y;
  bad_y[4] = 2;
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(x, bad_y, n, d); },
                          "logistic: y[4] must be 0 or 1, got 2");
  bad_y[4] = 0.5;
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(x, bad_y, n, d); },
                          "logistic: y[4] must be 0 or 1, got 0.5");

  expect_invalid_argument(
      [&] { LogisticData<double>::from_arrays(std::vector<double>(19, 0.0), y, n, d); },
      "logistic: x has 19 entries, expected n*d = 5*4 = 20");
  expect_invalid_argument(
      [&] {
        LogisticData<double>::from_arrays(x, {0, 1}, n, d);
      },
      "logistic: y has 2 entries, expected n = 5");
  expect_invalid_argument([&] { LogisticData<double>::from_arrays(x, y, 0, d); },
                          "logistic: n must be >= 1, got 0");
  expect_invalid_argument([&] { LogisticData<float>::synthetic(10, 0, 1); },
                          "logistic: d must be >= 1, got 0");
}

TEST(ModelsLogisticData, ModelsRejectNonPositivePriorSd) {
  const auto data = LogisticData<double>::synthetic(10, 2, 1);
  expect_invalid_argument([&] { data.host_model(0.0); },
                          "logistic: prior_sd must be positive, got 0");
  expect_invalid_argument([&] { data.host_model(-2.0); },
                          "logistic: prior_sd must be positive, got -2");
  expect_invalid_argument([&] { data.host_model(std::numeric_limits<double>::quiet_NaN()); },
                          "logistic: prior_sd must be positive, got nan");
}

TEST(ModelsLogisticData, DeviceModelUploadsOnce) {
  auto data = LogisticData<double>::synthetic(50, 4, 7);
  const auto device = device_model_or_nothing([&] { return data.device_model(10); });
  if (!device) return;  // skipped, or a build without CUDA (unavailable_error checked)
  const auto& model = *device;
  EXPECT_NE(model.x, data.x().data());
  const auto x = myriad::download(model.x, data.x().size());
  const auto y = myriad::download(model.y, data.y().size());
  EXPECT_EQ(x, data.x());
  EXPECT_EQ(y, data.y());
  const auto again = data.device_model(5);  // no second upload: same device buffers
  EXPECT_EQ(again.x, model.x);
  EXPECT_EQ(again.y, model.y);
  EXPECT_EQ(again.prior_sd, 5.0);
}

}  // namespace
