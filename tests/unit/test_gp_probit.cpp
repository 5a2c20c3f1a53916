// The GP probit workload (models/gp_probit.hpp, models/breast_cancer_wisconsin.hpp) piece by
// piece: the shipped data, log Φ in both tails, the Laplace fit's defining equations, the
// estimator's unbiasedness where the marginal likelihood is a bivariate normal orthant
// probability (two points), the cache's equivalence to preparing afresh and to a preparation
// with the GPU library tier's writes, and the refusals.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "common/expect_error.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/models/breast_cancer_wisconsin.hpp"
#include "myriad/models/gp_probit.hpp"
#include "myriad/run/sample_auxiliary.hpp"

namespace myriad {
namespace {

using models::BreastCancerRows;
using models::GpProbit;
using models::GpProbitData;
using testing::expect_invalid_argument;

TEST(BreastCancerData, HasTheCompleteRowsOfTheOriginalSet) {
  const BreastCancerRows all = models::breast_cancer_wisconsin();
  ASSERT_EQ(all.rows, 683);
  ASSERT_EQ(all.features.size(), 683u * 9);
  // 699 biopsies, 458 benign and 241 malignant; of the 16 with bare nuclei missing, 14 are
  // benign and 2 malignant (MASS::biopsy), leaving 444 and 239.
  EXPECT_EQ(std::accumulate(all.labels.begin(), all.labels.end(), 0), 239);
  // First row: "1000025",5,1,1,1,2,1,3,1,1,"benign".
  const std::vector<double> first(all.features.begin(), all.features.begin() + 9);
  EXPECT_EQ(first, (std::vector<double>{5, 1, 1, 1, 2, 1, 3, 1, 1}));
  EXPECT_EQ(all.labels[0], 0);
  for (double v : all.features) {
    EXPECT_GE(v, 1);
    EXPECT_LE(v, 10);
  }
}

TEST(BreastCancerData, AReducedSetIsEvenlySpacedCompleteRows) {
  const BreastCancerRows all = models::breast_cancer_wisconsin();
  const BreastCancerRows some = models::breast_cancer_wisconsin(40);
  ASSERT_EQ(some.rows, 40);
  for (int i = 0; i < 40; ++i) {
    const int r = i * 683 / 40;
    EXPECT_EQ(some.labels[i], all.labels[r]);
    for (int k = 0; k < 9; ++k) EXPECT_EQ(some.features[i * 9 + k], all.features[r * 9 + k]);
  }
  expect_invalid_argument([] { models::breast_cancer_wisconsin(684); }, "rows must lie in");
  expect_invalid_argument([] { models::breast_cancer_wisconsin(-1); }, "rows must lie in");
}

TEST(LogNormalCdf, MatchesErfcInLongDoubleInBothTailsAndAcrossTheSwitch) {
  for (double x : {-60.0, -40.0, -37.5, -37.0, -36.5, -20.0, -5.0, -1.0, 0.0, 1.0, 5.0, 9.0}) {
    const long double reference =
        std::log(0.5L * std::erfc(-static_cast<long double>(x) / std::sqrt(2.0L)));
    EXPECT_NEAR(log_normal_cdf(x), static_cast<double>(reference),
                1e-14 * std::max(1.0, std::fabs(static_cast<double>(reference))))
        << "x = " << x;
  }
  EXPECT_NEAR(log_normal_cdf(-12.5f), -81.575968f, 1e-4f);  // float's series branch
}

/// A GP probit problem on the given one-feature inputs and 0/1 labels.
GpProbitData<double> one_feature(const std::vector<double>& inputs,
                                 const std::vector<int>& labels) {
  return GpProbitData<double>::from_arrays(static_cast<int>(inputs.size()), 1, inputs, labels);
}

struct Prepared {
  std::vector<double> cache, workspace;
  explicit Prepared(const GpProbit<double>& model)
      : cache(static_cast<std::size_t>(model.estimator_cache_size())),
        workspace(static_cast<std::size_t>(model.estimator_workspace_size())) {}
};

TEST(GpProbitLaplace, TheModeSolvesItsEquationAndTheFactorsDefineSigma) {
  const auto data = one_feature({0.1, 0.9, 1.7, 2.2, 3.0, 4.1}, {0, 0, 1, 0, 1, 1});
  GpProbit<double> model = data.host_model(1);
  model.newton_tolerance = 1e-30;  // run Newton to its cap: μ is the mode to rounding
  model.max_newton = 60;
  const double x[2] = {std::log(1.5), std::log(0.8)};
  Prepared p(model);
  model.prepare_estimate(x, p.cache.data(), p.workspace.data());
  // Newton stops early only when an update changes nothing in floating point: the mode to
  // rounding either way.
  EXPECT_GE(model.newton_steps(p.cache.data()), 3);
  EXPECT_LE(model.newton_steps(p.cache.data()), 60);
  const int m = model.rows;
  std::vector<double> c(static_cast<std::size_t>(m * m));
  model.covariance(x, MatrixView<double>{c.data(), m, m, 1, m});
  const double* l_c = p.cache.data();
  const double* l_a = p.cache.data() + m * m;
  const double* mu = p.cache.data() + 2 * m * m;
  const auto lower = [m](const double* l, int i, int j) { return i >= j ? l[i + j * m] : 0.0; };
  // The mode: μ = C ∇ log p(y | μ), ∇_i = ỹ_i N(μ_i) / Φ(ỹ_i μ_i); W_i = v_i² + ỹ_i μ_i v_i.
  std::vector<double> gradient(m), w(m);
  for (int i = 0; i < m; ++i) {
    const double y = model.labels[i];
    const double v = std::exp(normal_log_density(mu[i], 0.0, 1.0) - log_normal_cdf(y * mu[i]));
    gradient[i] = y * v;
    w[i] = v * v + y * mu[i] * v;
  }
  for (int i = 0; i < m; ++i) {
    double cg = 0;
    for (int j = 0; j < m; ++j) cg += c[i + j * m] * gradient[j];
    EXPECT_NEAR(mu[i], cg, 1e-10) << i;
  }
  // L_C L_Cᵀ = C and L_A L_Aᵀ = I + L_Cᵀ W(μ) L_C, so that (L_C L_A⁻ᵀ)(L_C L_A⁻ᵀ)ᵀ =
  // (C⁻¹ + W(μ))⁻¹ = Σ, the Laplace covariance at the mode.
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) {
      double llt = 0, aat = 0, ltwl = i == j ? 1.0 : 0.0;
      for (int k = 0; k < m; ++k) {
        llt += lower(l_c, i, k) * lower(l_c, j, k);
        aat += lower(l_a, i, k) * lower(l_a, j, k);
        ltwl += lower(l_c, k, i) * w[k] * lower(l_c, k, j);
      }
      EXPECT_NEAR(llt, c[i + j * m], 1e-12) << i << "," << j;
      EXPECT_NEAR(aat, ltwl, 1e-10) << i << "," << j;
    }
  }
  // The covariance is SE-ARD: C_01 = s exp(−½ ((d_0 − d_1)/ℓ)²), the diagonal s + jitter.
  const double d0 = model.features[0], d1 = model.features[1];
  EXPECT_NEAR(c[1], 1.5 * std::exp(-0.5 * std::pow((d0 - d1) / 0.8, 2)), 1e-14);
  EXPECT_DOUBLE_EQ(c[0], 1.5 + 1e-8);
}

/// The marginal likelihood of two points, E[Φ(ỹ_1 z_1) Φ(ỹ_2 z_2)] for z ~ N(0, C): with
/// Φ(z) = P(z + e > 0), e ~ N(0, 1), it is the orthant probability P(ỹ_1 a_1 > 0, ỹ_2 a_2 > 0)
/// of a ~ N(0, C + I), ¼ + asin(ρ)/(2π) with ρ = ỹ_1 ỹ_2 C_12 / √((C_11 + 1)(C_22 + 1))
/// (Sheppard's formula).
double two_point_likelihood(const GpProbit<double>& model, const double* x) {
  double c[4];
  model.covariance(x, MatrixView<double>{c, 2, 2, 1, 2});
  const double rho = model.labels[0] * model.labels[1] * c[1] / std::sqrt((c[0] + 1) * (c[3] + 1));
  return 0.25 + std::asin(rho) / (2 * M_PI);
}

TEST(GpProbitEstimator, IsUnbiasedForTheTwoPointOrthantProbability) {
  // Small s keeps W below C⁻¹, where the importance weights have finite variance (the
  // proposal's precision C⁻¹ + W stays under 2 C⁻¹), so the sample mean's standard error is a
  // sound yardstick. Same labels (ρ > 0) and opposite labels (ρ < 0), N = 1 and N = 5.
  for (const auto& labels : {std::vector<int>{1, 1}, std::vector<int>{1, 0}}) {
    const auto data = one_feature({0.0, 1.0}, labels);
    for (int samples : {1, 5}) {
      const GpProbit<double> model = data.host_model(samples);
      const double x[2] = {std::log(0.3), std::log(1.2)};
      Prepared p(model);
      model.prepare_estimate(x, p.cache.data(), p.workspace.data());
      const double exact = two_point_likelihood(model, x);
      const double log_prior = model.log_prior(x);
      constexpr int kEstimates = 100000;
      const RandomStream rng(11, static_cast<std::uint64_t>(samples));
      double sum = 0, square = 0;
      for (int e = 0; e < kEstimates; ++e) {
        const AuxiliaryVariates<double> u{rng, static_cast<std::uint32_t>(e), AuxiliaryLaw::normal};
        const double ratio =
            std::exp(model.log_estimate_cached(p.cache.data(), u, p.workspace.data()) - log_prior);
        sum += ratio;
        square += ratio * ratio;
      }
      const double mean = sum / kEstimates;
      const double se = std::sqrt((square / kEstimates - mean * mean) / kEstimates);
      EXPECT_NEAR(mean, exact, 5 * se) << "labels " << labels[0] << labels[1] << " N " << samples
                                       << " exact " << exact << " se " << se;
      EXPECT_LT(se, 0.01 * exact);  // the test has power
    }
  }
}

TEST(GpProbitEstimator, ACachedEstimateEqualsOneFromAFreshPreparation) {
  const BreastCancerRows rows = models::breast_cancer_wisconsin(30);
  const auto data = GpProbitData<double>::from_arrays(rows.rows, 9, rows.features, rows.labels);
  const GpProbit<double> model = data.host_model(8);
  double x[10];
  const RandomStream rng(5, 0);
  ASSERT_TRUE(model.initial_point(rng, 0, x));
  Prepared a(model), b(model);
  model.prepare_estimate(x, a.cache.data(), a.workspace.data());
  const AuxiliaryVariates<double> u{rng, 3, AuxiliaryLaw::normal};
  const double first = model.log_estimate_cached(a.cache.data(), u, a.workspace.data());
  // Another x in between leaves the first cache alone; preparing x again gives the same bits.
  double y[10];
  ASSERT_TRUE(model.initial_point(rng, 1, y));
  model.prepare_estimate(y, b.cache.data(), a.workspace.data());
  EXPECT_EQ(model.log_estimate_cached(a.cache.data(), u, b.workspace.data()), first);
  model.prepare_estimate(x, b.cache.data(), b.workspace.data());
  EXPECT_EQ(model.log_estimate_cached(b.cache.data(), u, b.workspace.data()), first);
  EXPECT_TRUE(std::isfinite(first));
}

// The GPU's library tier may write what the serial steps leave alone (model/
// staged_preparation.hpp): potrfBatched the strict upper triangle of a factor (its workspace),
// gemmBatched all of a gram's b, from all of a. A preparation run with both liberties taken (NaN
// above each factor's diagonal, the full product aᵀ a) must give the serial cache's estimates:
// the model keeps nothing above a factor's diagonal and zeroes a gram's a there.
TEST(GpProbitEstimator, APreparationWithTheLibraryTiersWritesGivesTheSameEstimates) {
  const BreastCancerRows rows = models::breast_cancer_wisconsin(30);
  const auto data = GpProbitData<double>::from_arrays(rows.rows, 9, rows.features, rows.labels);
  const GpProbit<double> model = data.host_model(8);
  const int n = model.preparation_matrix_size();
  const auto library_step = [n](const PreparationStep& step, double* cache, double* workspace) {
    double* a = step.a.in(cache, workspace);
    if (step.kind == PreparationKind::factor) {
      const int info = linalg::cholesky_in_place_info(MatrixView<double>{a, n, n, 1, n});
      for (int j = 1; j < n; ++j)
        for (int i = 0; i < j; ++i) a[i + j * n] = NAN;
      return info;
    }
    double* b = step.b.in(cache, workspace);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double sum = 0;
        for (int k = 0; k < n; ++k) sum += a[k + i * n] * a[k + j * n];
        b[i + j * n] = sum;
      }
    return 0;
  };
  const RandomStream rng(7, 0);
  for (std::uint32_t draw = 0; draw < 3; ++draw) {
    double x[10];
    ASSERT_TRUE(model.initial_point(rng, draw, x));
    Prepared serial(model), library(model);
    model.prepare_estimate(x, serial.cache.data(), serial.workspace.data());
    PreparationStep step =
        model.begin_preparation(x, library.cache.data(), library.workspace.data());
    int steps = 0;
    for (; step.kind != PreparationKind::done; ++steps) {
      const int info = library_step(step, library.cache.data(), library.workspace.data());
      step = model.continue_preparation(library.cache.data(), library.workspace.data(), info);
    }
    EXPECT_GE(steps, 4) << "C, a Newton system, the gram and A";
    for (std::uint32_t k = 0; k < 3; ++k) {
      const AuxiliaryVariates<double> u{rng, k, AuxiliaryLaw::normal};
      const double expected =
          model.log_estimate_cached(serial.cache.data(), u, serial.workspace.data());
      ASSERT_TRUE(std::isfinite(expected));
      EXPECT_NEAR(model.log_estimate_cached(library.cache.data(), u, library.workspace.data()),
                  expected, 1e-9 * std::abs(expected))
          << "draw " << draw << " variates " << k;
    }
  }
}

TEST(GpProbitEstimator, AFailedFactorisationGivesNaNNotACrash) {
  // log s = 800: s overflows to +∞, and C's Cholesky meets a non-finite pivot (a random walk
  // far into the prior's tail proposes such points).
  const auto data = one_feature({0.0, 0.5, 1.0}, {1, 1, 0});
  const GpProbit<double> model = data.host_model(2);
  const double x[2] = {800.0, std::log(1.0)};
  Prepared p(model);
  model.prepare_estimate(x, p.cache.data(), p.workspace.data());
  const RandomStream rng(1, 0);
  const AuxiliaryVariates<double> u{rng, 0, AuxiliaryLaw::normal};
  EXPECT_TRUE(std::isnan(model.log_estimate_cached(p.cache.data(), u, p.workspace.data())));
}

TEST(GpProbitData, RefusesWhatCannotBeStandardisedOrLabelled) {
  expect_invalid_argument([] { one_feature({1.0, 1.0, 1.0}, {0, 1, 0}); }, "constant");
  expect_invalid_argument([] { one_feature({1.0, 2.0}, {0, 2}); }, "must be 0 or 1");
  expect_invalid_argument([] { one_feature({1.0, NAN}, {0, 1}); }, "not finite");
  expect_invalid_argument([] { one_feature({1.0}, {0}); }, "at least 2");
  const auto data = one_feature({1.0, 2.0}, {0, 1});
  expect_invalid_argument([&] { data.host_model(0); }, "samples (N) must be positive");
}

TEST(GpProbitSamplers, OnlyTheEstimatorSamplersTakeIt) {
  expect_invalid_argument([] { check_auxiliary_model<GpProbit<double>>(AuxiliaryMethod::slice); },
                          "needs a density model");
  check_auxiliary_model<GpProbit<double>>(AuxiliaryMethod::apm_ss_ss);
  static_assert(model_has_cached_estimator<GpProbit<double>>);
  static_assert(model_has_estimator<GpProbit<double>>);
}

}  // namespace
}  // namespace myriad
