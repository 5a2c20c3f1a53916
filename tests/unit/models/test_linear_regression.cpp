// Tests of `linear_regression` (include/myriad/models/linear_regression.hpp): the supplied
// gradient against forward-mode duals and central finite differences under each prior of σ and
// with Student-t coefficient priors, the log density against the normal likelihood and the
// normal, Student-t and half-distribution priors written out directly (with the Jacobian of
// σ = e^τ), float against double, the recorded quantities (Stan's names and given ones), the
// data container's validation, and its simulation for SBC (draws from the priors, the model on
// the same design, the priors it refuses).

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

/// The design and responses of every data set here: an intercept and two normal covariates
/// (row-major, kN × kK), and y = 1 + 2 x1 − x2 + N(0, 0.5²).
struct RegressionArrays {
  std::vector<double> x, y;
};
RegressionArrays regression_arrays() {
  RegressionArrays a;
  for (int i = 0; i < kN; ++i) {
    const std::vector<double> z = standard_normals(kDataSeed, i, 3);
    a.x.insert(a.x.end(), {1.0, z[0], z[1]});
    a.y.push_back(1.0 + 2.0 * z[0] - z[1] + 0.5 * z[2]);
  }
  return a;
}

/// `direct` plus the normal likelihood Σ_i log N(y_i; x_iᵀβ, σ) of regression_arrays() at
/// θ = (β, log σ), written out with <cmath> and added term by term.
double add_normal_likelihood(double direct, const std::vector<double>& theta) {
  const RegressionArrays a = regression_arrays();
  const double sigma = std::exp(theta[kK]);
  for (int i = 0; i < kN; ++i) {
    const double mean =
        a.x[i * kK] * theta[0] + a.x[i * kK + 1] * theta[1] + a.x[i * kK + 2] * theta[2];
    direct += normal_lpdf(a.y[i], mean, sigma);
  }
  return direct;
}

/// regression_arrays() with a proper prior on the first two coefficients, a flat one on the third.
LinearRegressionData<double> regression_data(ScalePrior prior, double scale) {
  const RegressionArrays a = regression_arrays();
  std::vector<double> mean = {0.5, 0.0, 0.0};
  std::vector<double> sd = {3.0, 10.0, std::numeric_limits<double>::infinity()};
  return LinearRegressionData<double>::from_arrays(a.x, a.y, kN, kK, mean, sd, prior, scale);
}

/// regression_data's design and responses with Student-t(3, 0.5, 3) on β1, N(0, 10²) on β2 and
/// Student-t(1.5, −1, 0.7) on β3 (a scale small enough that the test points reach its tails), in
/// the precision T (the data rounded to T).
template <class T>
LinearRegressionData<T> student_t_regression_data(ScalePrior prior, double scale, double scale_df) {
  const RegressionArrays a = regression_arrays();
  const std::vector<T> x(a.x.begin(), a.x.end()), y(a.y.begin(), a.y.end());
  const T inf = std::numeric_limits<T>::infinity();
  return LinearRegressionData<T>::from_arrays(x, y, kN, kK, {T(0.5), T(0), T(-1)},
                                              {T(3), T(10), T(0.7)}, {T(3), inf, T(1.5)}, prior,
                                              scale, scale_df);
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

TEST(ModelsGradient, LinearRegressionWithStudentTPriors) {
  for (const auto prior : {ScalePrior::flat, ScalePrior::half_cauchy, ScalePrior::half_normal,
                           ScalePrior::half_student_t}) {
    SCOPED_TRACE(static_cast<int>(prior));
    const auto data = student_t_regression_data<double>(prior, 2.5, 3.0);
    check_model_derivatives(data.host_model(), regression_point);
  }
  // ν < 1 and a scale small against the points: the Student-t terms far in their tails.
  const auto heavy = student_t_regression_data<double>(ScalePrior::half_student_t, 0.1, 0.5);
  check_model_derivatives(heavy.host_model(), regression_point);
}

TEST(ModelsLogDensity, LinearRegressionMatchesNormalLikelihoodPriorsAndJacobian) {
  const auto cauchy = regression_data(ScalePrior::half_cauchy, 2.5);
  const auto normal = regression_data(ScalePrior::half_normal, 2.5);
  const auto flat = regression_data(ScalePrior::flat, 1.0);
  for (int p = 0; p < 8; ++p) {
    const auto theta = regression_point(p);
    const double sigma = std::exp(theta[kK]);
    double direct = add_normal_likelihood(
        normal_lpdf(theta[0], 0.5, 3.0) + normal_lpdf(theta[1], 0.0, 10.0), theta);
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

TEST(ModelsLogDensity, LinearRegressionMatchesStudentTPriorsWithTheirConstants) {
  // Against student_t_lpdf written with std::lgamma: Stan's constants included, and the
  // half-Student-t's log 2 of the truncation at 0.
  const auto t_flat_sigma = student_t_regression_data<double>(ScalePrior::flat, 1.0, 1.0);
  const auto t_half_t = student_t_regression_data<double>(ScalePrior::half_student_t, 2.5, 3.0);
  for (int p = 0; p < 8; ++p) {
    const auto theta = regression_point(p);
    const double sigma = std::exp(theta[kK]);
    double direct =
        add_normal_likelihood(student_t_lpdf(theta[0], 3, 0.5, 3) + normal_lpdf(theta[1], 0, 10) +
                                  student_t_lpdf(theta[2], 1.5, -1, 0.7),
                              theta);
    direct += theta[kK];  // the Jacobian of σ = e^τ
    const double tolerance = 1e-12 * std::fabs(direct);
    EXPECT_NEAR(t_flat_sigma.host_model().log_density(theta), direct, tolerance) << "point " << p;
    EXPECT_NEAR(t_half_t.host_model().log_density(theta),
                direct + half_student_t_lpdf(sigma, 3, 2.5), tolerance)
        << "point " << p;
  }
}

TEST(ModelsLogDensity, LinearRegressionFlatPriorIgnoresDegreesOfFreedom) {
  // An infinite scale is a flat prior whatever ν says: the same density as regression_data's.
  const double inf = std::numeric_limits<double>::infinity();
  const RegressionArrays a = regression_arrays();
  const auto with_df =
      LinearRegressionData<double>::from_arrays(a.x, a.y, kN, kK, {0.5, 0.0, 0.0}, {3.0, 10.0, inf},
                                                {inf, inf, 2.0}, ScalePrior::flat, 1.0, inf);
  const auto without = regression_data(ScalePrior::flat, 1.0);
  for (int p = 0; p < 8; ++p) {
    const auto theta = regression_point(p);
    EXPECT_EQ(with_df.host_model().log_density(theta), without.host_model().log_density(theta))
        << "point " << p;
  }
}

TEST(ModelsLogDensity, LinearRegressionHalfStudentTWithOneDegreeIsHalfCauchy) {
  const auto cauchy = student_t_regression_data<double>(ScalePrior::half_cauchy, 2.5, 1.0);
  const auto t1 = student_t_regression_data<double>(ScalePrior::half_student_t, 2.5, 1.0);
  for (int p = 0; p < 8; ++p) {
    const auto theta = regression_point(p);
    const double lp = cauchy.host_model().log_density(theta);
    EXPECT_NEAR(t1.host_model().log_density(theta), lp, 1e-12 * std::fabs(lp)) << "point " << p;
  }
}

// ---------------------------------------------------------------------------------------------
// float instantiation: compiles, stays trivially copyable and agrees with double.

static_assert(std::is_trivially_copyable<LinearRegression<float>>::value,
              "LinearRegression<float>");

TEST(ModelsFloat, LinearRegressionAgreesWithDouble) {
  for (const auto prior : {ScalePrior::flat, ScalePrior::half_cauchy, ScalePrior::half_normal,
                           ScalePrior::half_student_t}) {
    SCOPED_TRACE(static_cast<int>(prior));
    const auto data_f = student_t_regression_data<float>(prior, 2.5, 3.0);
    // The double model sees the float-rounded data (and prior settings, all exact in float), so
    // only the arithmetic differs.
    const auto data_d = student_t_regression_data<double>(prior, 2.5, 3.0);
    const auto model_f = data_f.host_model();
    const auto model_d = data_d.host_model();
    std::vector<double> x_rounded(model_d.x, model_d.x + kN * kK);
    for (double& v : x_rounded) v = static_cast<float>(v);
    std::vector<double> y_rounded(model_d.y, model_d.y + kN);
    for (double& v : y_rounded) v = static_cast<float>(v);
    const double inf = std::numeric_limits<double>::infinity();
    const auto rounded = LinearRegressionData<double>::from_arrays(
        x_rounded, y_rounded, kN, kK, {0.5, 0, -1}, {3, 10, 0.7}, {3, inf, 1.5}, prior, 2.5, 3.0);
    ASSERT_NO_FATAL_FAILURE(
        expect_rounded_to_float(std::vector<float>(model_f.x, model_f.x + kN * kK),
                                std::vector<double>(model_d.x, model_d.x + kN * kK)));
    check_float_model(model_f, rounded.host_model(), regression_point);
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

TEST(ModelsQuantities, LinearRegressionRecordsTheCoefficientNamesItWasGiven) {
  auto data = student_t_regression_data<double>(ScalePrior::half_student_t, 10.0, 3.0);
  data.name_coefficients({"b[1]", "b[2]", "Intercept"});
  const auto model = data.host_model();
  ASSERT_NO_FATAL_FAILURE(expect_quantity_names(
      model, kK + 1, {{0, "b[1]"}, {1, "b[2]"}, {2, "Intercept"}, {3, "sigma"}}));
  const auto theta = regression_point(3);
  const std::vector<double> expected = {theta[0], theta[1], theta[2], std::exp(theta[kK])};
  EXPECT_EQ(recorded_quantities(model, theta), expected);
  expect_invalid_argument(
      [&] {
        data.name_coefficients({"b[1]", "b[2]"});
      },
      "linear_regression: 2 coefficient names, expected k = 3");
  expect_invalid_argument(
      [&] {
        data.name_coefficients({"b[1]", "", "Intercept"});
      },
      "linear_regression: coefficient name 1 is empty");
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
  expect_invalid_argument(
      [&] { LinearRegressionData<double>::from_arrays({}, {}, 1, 0, {}, {}, ScalePrior::flat, 1); },
      "linear_regression: k must be >= 1, got 0");
  // The Student-t priors' degrees of freedom, and σ's under half_student_t (which the overload
  // without degrees of freedom cannot give).
  const auto make_t = [&](std::vector<double> df, ScalePrior prior, double scale_df) {
    return LinearRegressionData<double>::from_arrays(x, y, 3, 2, mean, sd, df, prior, 2.5,
                                                     scale_df);
  };
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NO_THROW(make_t({3, inf}, ScalePrior::half_student_t, 3));
  expect_invalid_argument(
      [&] {
        make_t({3, 0}, ScalePrior::flat, 1);
      },
      "linear_regression: prior degrees of freedom 1 must be positive "
      "(infinite: normal), got 0");
  expect_invalid_argument([&] { make_t({3}, ScalePrior::flat, 1); },
                          "linear_regression: prior_df has 1 entries, expected k = 2");
  expect_invalid_argument(
      [&] {
        make_t({3, 3}, ScalePrior::half_student_t, inf);
      },
      "linear_regression: the half-Student-t scale prior's degrees of freedom "
      "must be positive and finite, got inf");
  expect_invalid_argument([&] { make(x, y, mean, sd, ScalePrior::half_student_t, 2.5); },
                          "degrees of freedom must be positive and finite, got inf");
  EXPECT_NO_THROW(make_t({3, 3}, ScalePrior::half_normal, inf));  // ν unused by half_normal
  const auto data = make(x, y, mean, LinearRegressionData<double>::flat(2), ScalePrior::flat, 0);
  EXPECT_EQ(data.host_model().n, 3);
  expect_no_device_model_without_cuda([&] {
    auto owned = make(x, y, mean, sd, ScalePrior::flat, 1);
    return owned.device_model();
  });
}

/// A regression for SBC: kN × kK design of regression_arrays, β_j ~ N(m_j, s_j²) and σ under
/// `scale_prior` with scale 2.
LinearRegressionData<double> simulable(ScalePrior scale_prior) {
  const RegressionArrays a = regression_arrays();
  return LinearRegressionData<double>::from_arrays(a.x, a.y, kN, kK, {1.0, -2.0, 0.5},
                                                   {0.5, 2.0, 1.0}, scale_prior, 2.0);
}

TEST(ModelsLinearRegressionData, SimulateDrawsThePriorsAndTheModelOnTheSameDesign) {
  const LinearRegressionData<double> data = simulable(ScalePrior::half_normal);
  // The same (seed, replication) gives the same draw; another replication another.
  std::vector<double> truth, again, other;
  LinearRegressionData<double> simulated = data.simulate(7, 3, truth);
  const LinearRegressionData<double> twin = data.simulate(7, 3, again);
  data.simulate(7, 4, other);
  ASSERT_EQ(truth.size(), static_cast<std::size_t>(kK + 1));
  EXPECT_EQ(truth, again);
  EXPECT_NE(truth, other);
  EXPECT_GT(truth[kK], 0.0);
  // The design is kept, and the recorded quantities keep their names.
  const LinearRegression<double> model = simulated.host_model();
  const LinearRegression<double> original = data.host_model();
  for (int e = 0; e < kN * kK; ++e) EXPECT_EQ(model.x[e], original.x[e]);
  EXPECT_EQ(myriad::recorded_quantity_names(model), myriad::recorded_quantity_names(original));
  EXPECT_EQ(twin.host_model().y[kN - 1], model.y[kN - 1]);
  EXPECT_NE(model.y[0], original.y[0]);  // the outcomes are simulated
}

TEST(ModelsLinearRegressionData, SimulatedParametersFollowTheirPriors) {
  // Over 4000 replications each β_j's mean and variance, and σ's mean (half-normal:
  // a √(2/π), variance a²(1 − 2/π); half-Cauchy: the median a), within 5 standard errors.
  constexpr int kReplications = 4000;
  const std::vector<double> mean = {1.0, -2.0, 0.5}, sd = {0.5, 2.0, 1.0};
  for (const ScalePrior prior : {ScalePrior::half_normal, ScalePrior::half_cauchy}) {
    const LinearRegressionData<double> data = simulable(prior);
    std::vector<std::vector<double>> draws(kK + 1);
    std::vector<double> truth;
    for (int r = 0; r < kReplications; ++r) {
      data.simulate(2026, r, truth);
      for (int q = 0; q <= kK; ++q) draws[q].push_back(truth[q]);
    }
    for (int j = 0; j < kK; ++j) {
      double m = 0, v = 0;
      for (double b : draws[j]) m += b / kReplications;
      for (double b : draws[j]) v += (b - m) * (b - m) / (kReplications - 1);
      EXPECT_NEAR(m, mean[j], 5 * sd[j] / std::sqrt(kReplications)) << "beta " << j;
      // The variance's standard error for a normal: σ² √(2/(R − 1)).
      EXPECT_NEAR(v, sd[j] * sd[j], 5 * sd[j] * sd[j] * std::sqrt(2.0 / (kReplications - 1)))
          << "beta " << j;
    }
    std::vector<double> sigma = draws[kK];
    if (prior == ScalePrior::half_normal) {
      double m = 0;
      for (double s : sigma) m += s / kReplications;
      const double expected = 2.0 * std::sqrt(2.0 / M_PI);
      EXPECT_NEAR(m, expected, 5 * 2.0 * std::sqrt((1 - 2.0 / M_PI) / kReplications));
    } else {
      // The fraction below the median a = 2 is ½, its standard error ½/√R.
      double below = 0;
      for (double s : sigma) below += s < 2.0 ? 1.0 / kReplications : 0.0;
      EXPECT_NEAR(below, 0.5, 5 * 0.5 / std::sqrt(kReplications));
    }
  }
}

TEST(ModelsLinearRegressionData, SimulateRefusesPriorsItCannotDrawFrom) {
  const RegressionArrays a = regression_arrays();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> mean(kK, 0.0);
  std::vector<double> truth;
  const auto flat_beta = LinearRegressionData<double>::from_arrays(
      a.x, a.y, kN, kK, mean, {1.0, inf, 1.0}, ScalePrior::half_normal, 1.0);
  expect_invalid_argument([&] { flat_beta.simulate(1, 0, truth); },
                          "beta[2]'s prior is flat (improper)");
  const auto flat_sigma = LinearRegressionData<double>::from_arrays(
      a.x, a.y, kN, kK, mean, {1.0, 1.0, 1.0}, ScalePrior::flat, 1.0);
  expect_invalid_argument([&] { flat_sigma.check_simulable(); },
                          "sigma's prior is flat (improper)");
  const auto student = LinearRegressionData<double>::from_arrays(
      a.x, a.y, kN, kK, mean, {1.0, 1.0, 1.0}, {inf, 3.0, inf}, ScalePrior::half_normal, 1.0, 1.0);
  expect_invalid_argument([&] { student.check_simulable(); },
                          "beta[2]'s prior is Student-t, which it does not draw");
}

}  // namespace
