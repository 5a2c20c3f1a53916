// Tests of `radon` (include/myriad/models/radon.hpp): the supplied gradient against forward-mode
// duals and central finite differences, the log density against the hierarchical model written
// out directly (on the Minnesota data compiled in), float against double, the recorded
// quantities, and the data container's validation.

#include <gtest/gtest.h>

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
#include "myriad/app/stan_data.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/radon.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

constexpr std::uint64_t kSeed = 20261129;
constexpr int kHomes = 30;
constexpr int kCounties = 4;

/// Homes spread over four counties (county 3 has none: its n_a has only its prior), floors 0/1,
/// a county-level log uranium, and log radon from the model with a = (1.2, 1.6, –, 0.9),
/// b = (−0.6, 0.7), σ_y = 0.8.
struct SmallData {
  std::vector<double> y, x, u;
  std::vector<int> c;
};

SmallData small_data() {
  const double a[kCounties] = {1.2, 1.6, 0.0, 0.9};
  const double uranium[kCounties] = {-0.4, 0.3, 0.1, -0.9};
  SmallData d;
  for (int i = 0; i < kHomes; ++i) {
    const std::vector<double> z = standard_normals(kSeed, i, 1);
    const int county = (i % 3 == 2) ? 3 : i % 3;  // 0-based: 0, 1, 3
    d.c.push_back(county + 1);
    d.x.push_back(i % 4 == 0 ? 1.0 : 0.0);
    d.u.push_back(uranium[county]);
    d.y.push_back(a[county] - 0.6 * d.x.back() + 0.7 * d.u.back() + 0.8 * z[0]);
  }
  return d;
}

template <class T>
RadonData<T> small_radon() {
  const SmallData d = small_data();
  return RadonData<T>::from_arrays(d.y, d.x, d.u, d.c, kCounties);
}

/// Points around the posterior and away from it: every coordinate standard normal, the log
/// scales 0.75 of that, and the last two points with a scale far in the half-Cauchy tail and
/// one near zero (the funnel's neck).
std::vector<double> radon_point(int p, int dim) {
  std::vector<double> theta = standard_normals(kSeed + 1, p, dim);
  for (int k = 2; k < 5; ++k) theta[k] *= 0.75;
  if (p == 6) theta[3] = 4.0;
  if (p == 7) theta[2] = -5.0;
  return theta;
}

/// The model written out directly with <cmath>: the normal likelihood, the N(0, 1) priors and the
/// half-Cauchy(0, 2.5) scales with the Jacobian of σ = e^ℓ.
double direct_log_density(const SmallData& d, int counties, const std::vector<double>& theta) {
  const double mu_a = theta[0], mu_b = theta[1];
  const double sigma_a = std::exp(theta[2]), sigma_b = std::exp(theta[3]);
  const double sigma_y = std::exp(theta[4]);
  const double b1 = mu_b + sigma_b * theta[5], b2 = mu_b + sigma_b * theta[6];
  double lp = normal_lpdf(mu_a, 0, 1) + normal_lpdf(mu_b, 0, 1);
  for (int k = 5; k < 7 + counties; ++k) lp += normal_lpdf(theta[k], 0, 1);
  for (int k = 2; k < 5; ++k) {
    const double s = std::exp(theta[k]);
    lp += std::log(2 / (M_PI * 2.5 * (1 + (s / 2.5) * (s / 2.5)))) + theta[k];
  }
  for (std::size_t i = 0; i < d.y.size(); ++i) {
    const double a = mu_a + sigma_a * theta[7 + d.c[i] - 1];
    lp += normal_lpdf(d.y[i], a + d.x[i] * b1 + d.u[i] * b2, sigma_y);
  }
  return lp;
}

static_assert(myriad::model_has_gradient<Radon<double>>, "radon supplies its gradient");
static_assert(std::is_trivially_copyable<Radon<double>>::value, "passed to kernels");
static_assert(std::is_trivially_copyable<Radon<float>>::value, "passed to kernels");

TEST(ModelsGradient, Radon) {
  const auto data = small_radon<double>();
  const int dim = data.host_model().dim();
  ASSERT_EQ(dim, kCounties + 7);
  check_model_derivatives(data.host_model(), [dim](int p) { return radon_point(p, dim); });
}

TEST(ModelsLogDensity, RadonMatchesTheHierarchicalModel) {
  const SmallData d = small_data();
  const auto owner = small_radon<double>();  // the view below reads its arrays
  const auto model = owner.host_model();
  for (int p = 0; p < 8; ++p) {
    const auto theta = radon_point(p, model.dim());
    const double direct = direct_log_density(d, kCounties, theta);
    EXPECT_NEAR(model.log_density(theta), direct, 1e-12 * (1 + std::fabs(direct))) << "point " << p;
  }
}

TEST(ModelsLogDensity, RadonOnTheMinnesotaDataCompiledIn) {
  const auto data = myriad::StanData::parse(std::string(radon_minnesota_json()), "radon_mn.json");
  ASSERT_EQ(data.integer("N", 1, 100000), 919);
  ASSERT_EQ(data.integer("J", 1, 1000), 85);
  SmallData d{data.reals("log_radon", 919), data.reals("floor_measure", 919),
              data.reals("log_uppm", 919), data.integers("county_idx", 919, 1, 85)};
  const auto owner = RadonData<double>::from_arrays(d.y, d.x, d.u, d.c, 85);
  const auto model = owner.host_model();
  EXPECT_EQ(model.dim(), 92);  // the thesis's 92 parameters
  for (int p = 0; p < 4; ++p) {
    const auto theta = radon_point(p, 92);
    const double direct = direct_log_density(d, 85, theta);
    // 919 + 92 terms summed in another order: a few hundred ulps of the summed magnitude.
    double lp_gradient_pass = 0;
    std::vector<double> grad(92);
    lp_gradient_pass = model.log_density_gradient(theta, grad);
    EXPECT_NEAR(model.log_density(theta), direct, 1e-12 * (1 + std::fabs(direct))) << p;
    EXPECT_NEAR(lp_gradient_pass, direct, 1e-12 * (1 + std::fabs(direct))) << p;
  }
}

TEST(ModelsFloat, RadonAgreesWithDouble) {
  const auto f = small_radon<float>();
  const auto d = small_radon<double>();
  const int dim = d.host_model().dim();
  check_float_model(f.host_model(), d.host_model(), [dim](int p) { return radon_point(p, dim); });
}

TEST(ModelsQuantities, RadonRecordsItsCoordinatesByName) {
  const auto owner = small_radon<double>();
  const auto model = owner.host_model();
  ASSERT_NO_FATAL_FAILURE(expect_quantity_names(model, kCounties + 7,
                                                {{0, "mu_a"},
                                                 {2, "log_sigma_a"},
                                                 {4, "log_sigma_y"},
                                                 {6, "n_b[2]"},
                                                 {7, "n_a[1]"},
                                                 {10, "n_a[4]"}}));
  const auto theta = radon_point(1, model.dim());
  EXPECT_EQ(recorded_quantities(model, theta), theta);
}

TEST(ModelsMake, RadonValidatesItsData) {
  SmallData d = small_data();
  d.c[4] = kCounties + 1;
  expect_invalid_argument([&] { RadonData<double>::from_arrays(d.y, d.x, d.u, d.c, kCounties); },
                          "radon: county_idx[5] = 5 is outside 1 … J = 4");
  d = small_data();
  d.u[2] = std::nan("");
  expect_invalid_argument([&] { RadonData<double>::from_arrays(d.y, d.x, d.u, d.c, kCounties); },
                          "radon: home 3 has a value that is not finite");
  d = small_data();
  d.x.pop_back();
  expect_invalid_argument([&] { RadonData<double>::from_arrays(d.y, d.x, d.u, d.c, kCounties); },
                          "radon: floor_measure, log_uppm and county_idx need N = 30 entries");
}

}  // namespace
