// Tests of the annealing targets `poe_laplace` and `poe_student_t`
// (include/myriad/models/product_of_experts.hpp, hais.md §9.3): the supplied log density against
// the direct formula, the supplied gradient against forward-mode duals and central finite
// differences, float against double, the complete product of experts' exact log Z against
// quadrature of its density in one and two dimensions, its exact samples against closed-form
// moments and marginal probabilities, the seeded parameters' construction, argument validation
// and the device copy.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/density_derivatives.hpp"
#include "common/device_model.hpp"
#include "common/expect_error.hpp"
#include "common/model_test_dense_reference.hpp"
#include "common/quadrature.hpp"
#include "common/test_points.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/product_of_experts.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

constexpr std::uint64_t kPointSeed = 20111212;
constexpr int kPoints = 8;

// ---------------------------------------------------------------------------------------------
// Derivative checks. Tolerances are first-order forward error bounds (ErrorScales,
// common/density_derivatives.hpp): every quantity below is a sum of products accumulated over
// chains of at most n operations, so its rounding error is at most n·ε times its error scale. A
// factor 4 covers two evaluations being compared and the second-order remainder; a wrong
// derivative term is off by O(1) instead: error_scale_tolerances(scales, 4, 0, ε).

// ---------------------------------------------------------------------------------------------
// Direct formula (hais.md §9.3) and error scales.

struct PoeTerms {
  std::vector<double> u, abs_u;                  ///< Φ_l x and Σ_j |Φ_lj x_j|
  std::vector<double> energy, slope, curvature;  ///< E, ψ' = ∂_u E, ψ'' = ∂²_u E
};

PoeTerms poe_terms(const ProductOfExpertsData<double>& data, const std::vector<double>& x) {
  const int m = data.dim(), l_count = data.experts();
  PoeTerms terms;
  for (int l = 0; l < l_count; ++l) {
    double u = 0, abs_u = 0;
    for (int j = 0; j < m; ++j) {
      u += data.filters()[l * m + j] * x[j];
      abs_u += std::fabs(data.filters()[l * m + j] * x[j]);
    }
    const double lambda = data.lambda()[l];
    terms.u.push_back(u);
    terms.abs_u.push_back(abs_u);
    if (data.kind() == ExpertKind::laplace) {
      terms.energy.push_back(lambda * std::fabs(u));
      terms.slope.push_back(u > 0 ? lambda : (u < 0 ? -lambda : 0.0));
      terms.curvature.push_back(0.0);
    } else {
      terms.energy.push_back(lambda * std::log1p(u * u));
      terms.slope.push_back(2 * lambda * u / (1 + u * u));
      terms.curvature.push_back(2 * lambda * (1 - u * u) / ((1 + u * u) * (1 + u * u)));
    }
  }
  return terms;
}

ErrorScales poe_error_scales(const ProductOfExpertsData<double>& data,
                             const std::vector<double>& x) {
  const int m = data.dim(), l_count = data.experts();
  const PoeTerms terms = poe_terms(data, x);
  ErrorScales scales;
  scales.terms = m + l_count + 4;
  scales.gradient.assign(m, 0.0);
  for (int l = 0; l < l_count; ++l) {
    scales.value += terms.energy[l] + std::fabs(terms.slope[l]) * terms.abs_u[l];
    for (int j = 0; j < m; ++j) {
      scales.gradient[j] +=
          std::fabs(data.filters()[l * m + j]) *
          (std::fabs(terms.slope[l]) + std::fabs(terms.curvature[l]) * terms.abs_u[l]);
    }
  }
  return scales;
}

std::vector<double> poe_point(int point, int dim) {
  return standard_normals(kPointSeed, point, dim, 1.5);
}

struct PoeCase {
  ExpertKind kind;
  int dim;
  int experts;
};

const PoeCase kPoeCases[] = {{ExpertKind::laplace, 5, 5},
                             {ExpertKind::laplace, 4, 9},
                             {ExpertKind::student_t, 5, 5},
                             {ExpertKind::student_t, 4, 9},
                             {ExpertKind::student_t, 36, 144}};

std::string describe(const PoeCase& c) {
  return std::string(myriad::models::poe_model_name(c.kind)) + " M=" + std::to_string(c.dim) +
         " L=" + std::to_string(c.experts);
}

// The compile-time properties the samplers and the AIS estimator rely on.
static_assert(std::is_trivially_copyable_v<ProductOfExperts<float>>);
static_assert(myriad::model_has_gradient<ProductOfExperts<double>>);
static_assert(myriad::target_has_exact_log_z<ProductOfExperts<double>>);
static_assert(myriad::target_has_exact_sample<ProductOfExperts<float>>);

TEST(ProductOfExpertsModel, LogDensityMatchesDirectFormula) {
  for (const PoeCase& c : kPoeCases) {
    SCOPED_TRACE(describe(c));
    const auto data = ProductOfExpertsData<double>::synthetic(c.kind, c.dim, c.experts);
    const auto model = data.host_model();
    for (int p = 0; p < kPoints; ++p) {
      const std::vector<double> x = poe_point(p, c.dim);
      const PoeTerms terms = poe_terms(data, x);
      double expected = 0;
      for (double e : terms.energy) expected -= e;
      const ErrorScales scales = poe_error_scales(data, x);
      EXPECT_NEAR(model.log_density(x), expected, 4 * scales.terms * kEps * scales.value);
    }
  }
}

TEST(ProductOfExpertsModel, GradientMatchesDualsAndFiniteDifferences) {
  DerivativeAgreement agreement;  // the expectations report; the ratios are not printed
  for (const PoeCase& c : kPoeCases) {
    SCOPED_TRACE(describe(c));
    const auto data = ProductOfExpertsData<double>::synthetic(c.kind, c.dim, c.experts);
    const auto model = data.host_model();
    for (int p = 0; p < kPoints; ++p) {
      SCOPED_TRACE("point " + std::to_string(p));
      const std::vector<double> x = poe_point(p, c.dim);
      if (c.kind == ExpertKind::laplace) {
        // Finite differences of |u| are exact only if no kink lies within h of x.
        const PoeTerms terms = poe_terms(data, x);
        for (int l = 0; l < c.experts; ++l) {
          double row_norm = 0;
          for (int j = 0; j < c.dim; ++j) row_norm += std::fabs(data.filters()[l * c.dim + j]);
          ASSERT_GT(std::fabs(terms.u[l]), 1e-5 * 10 * row_norm) << "expert " << l;
        }
      }
      expect_consistent_derivatives(
          model, x, error_scale_tolerances(poe_error_scales(data, x), 4, 0), agreement);
    }
  }
}

TEST(ProductOfExpertsModel, LaplaceGradientUsesSignZeroAtKinks) {
  // x = 0 puts every expert at its kink; sign(0) = 0 makes the supplied gradient 0 there.
  const auto data = ProductOfExpertsData<double>::synthetic(ExpertKind::laplace, 4, 7);
  const std::vector<double> x(4, 0.0);
  std::vector<double> grad(4, 1.0);
  EXPECT_EQ(data.host_model().log_density_gradient(x, grad), 0.0);
  for (double g : grad) EXPECT_EQ(g, 0.0);
}

TEST(ProductOfExpertsModel, FloatMatchesDouble) {
  double worst = 0;  // the expectations report; the ratio is not printed
  for (const PoeCase& c : kPoeCases) {
    SCOPED_TRACE(describe(c));
    const auto data_d = ProductOfExpertsData<double>::synthetic(c.kind, c.dim, c.experts);
    const auto data_f = ProductOfExpertsData<float>::synthetic(c.kind, c.dim, c.experts);
    // The float parameters are the double ones rounded, so evaluate the error scales with the
    // double model; parameter rounding (ε_float/2 relative) is inside the n·ε bound.
    for (int p = 0; p < kPoints; ++p) {
      SCOPED_TRACE("point " + std::to_string(p));
      const std::vector<double> x = float_representable(poe_point(p, c.dim));
      const ErrorScales scales = poe_error_scales(data_d, x);
      if (c.kind == ExpertKind::laplace) {
        const PoeTerms terms = poe_terms(data_d, x);
        for (int l = 0; l < c.experts; ++l) {
          ASSERT_GT(std::fabs(terms.u[l]), 4 * scales.terms * kFloatEps * terms.abs_u[l])
              << "expert " << l << " is too close to its kink for a sign-stable comparison";
        }
      }
      expect_float_agrees(data_f.host_model(), data_d.host_model(), x,
                          error_scale_tolerances(scales, 4, 0, kFloatEps), worst);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// parameters and exact log Z.

TEST(ProductOfExpertsData, HaarConstructionGivesExpectedDeterminant) {
  for (ExpertKind kind : {ExpertKind::laplace, ExpertKind::student_t}) {
    for (int experts : {6, 11}) {
      SCOPED_TRACE(std::string(myriad::models::poe_model_name(kind)) +
                   " L=" + std::to_string(experts));
      const int m = 6;
      const auto data = ProductOfExpertsData<double>::synthetic(kind, m, experts);
      const std::vector<double> phi0(data.filters().begin(), data.filters().begin() + m * m);
      // log|det Φ₀| = Σ log s by construction, each log s in [log ½, log 2]; LU agrees to
      // rounding (relative error of each pivot O(M ε) for a matrix of condition ≤ 4).
      EXPECT_NEAR(log_abs_det(phi0, m), data.log_abs_det(), 64 * m * kEps);
      EXPECT_GE(data.log_abs_det(), m * std::log(0.5));
      EXPECT_LE(data.log_abs_det(), m * std::log(2.0));
      // Singular values of Φ₀ are the s_l: Φ₀ᵀΦ₀ has trace Σ s² in [M/4, 4M].
      double trace = 0;
      for (double v : phi0) trace += v * v;
      EXPECT_GE(trace, m * 0.25);
      EXPECT_LE(trace, m * 4.0);
      EXPECT_EQ(data.has_exact(), experts == m);
      EXPECT_EQ(static_cast<int>(data.filters().size()), experts * m);
      for (double lambda : data.lambda()) {
        if (kind == ExpertKind::laplace) {
          EXPECT_EQ(lambda, 1.0);
        } else {
          EXPECT_GE(lambda, 1.5);
          EXPECT_LE(lambda, 3.0);
        }
      }
      if (experts == m) {
        // The stored Φ₀⁻¹ inverts Φ₀ (orthogonal factors: errors O(M ε) times cond ≤ 4).
        const auto& inv = data.inverse_filters();
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < m; ++j) {
            double sum = 0;
            for (int k = 0; k < m; ++k) sum += phi0[i * m + k] * inv[k * m + j];
            EXPECT_NEAR(sum, i == j ? 1.0 : 0.0, 64 * m * kEps) << i << "," << j;
          }
        }
      } else {
        EXPECT_TRUE(data.inverse_filters().empty());
        // Extra rows are N(0, 1/M): their mean square is 1/M within a few standard errors
        // (each squared entry has variance 2/M²).
        double sum_sq = 0;
        const int extra = (experts - m) * m;
        for (int e = 0; e < extra; ++e) sum_sq += std::pow(data.filters()[m * m + e], 2);
        EXPECT_NEAR(sum_sq / extra, 1.0 / m, 5 * std::sqrt(2.0 / extra) / m);
      }
    }
  }
}

TEST(ProductOfExpertsData, IsDeterministicPerSeedAndFloatIsTheRoundedDouble) {
  const auto a = ProductOfExpertsData<double>::synthetic(ExpertKind::student_t, 5, 8, 1.5, 3.0, 7);
  const auto b = ProductOfExpertsData<double>::synthetic(ExpertKind::student_t, 5, 8, 1.5, 3.0, 7);
  const auto c = ProductOfExpertsData<double>::synthetic(ExpertKind::student_t, 5, 8, 1.5, 3.0, 8);
  const auto f = ProductOfExpertsData<float>::synthetic(ExpertKind::student_t, 5, 8, 1.5, 3.0, 7);
  EXPECT_EQ(a.filters(), b.filters());
  EXPECT_EQ(a.lambda(), b.lambda());
  EXPECT_NE(a.filters(), c.filters());
  EXPECT_NE(a.lambda(), c.lambda());
  expect_rounded_to_float(f.filters(), a.filters());
  expect_rounded_to_float(f.lambda(), a.lambda());
}

TEST(ProductOfExpertsExactLogZ, MatchesClosedFormPieces) {
  for (ExpertKind kind : {ExpertKind::laplace, ExpertKind::student_t}) {
    const auto data = ProductOfExpertsData<double>::synthetic(kind, 7, 7);
    double expected = -data.log_abs_det();
    for (double lambda : data.lambda()) {
      expected += kind == ExpertKind::laplace
                      ? std::log(2.0)
                      : 0.5 * std::log(M_PI) + std::lgamma(lambda - 0.5) - std::lgamma(lambda);
    }
    EXPECT_NEAR(data.exact_log_z(), expected, 1e-13 * (1 + std::fabs(expected)));
    EXPECT_EQ(data.host_model().exact_log_z(0), data.exact_log_z());
    const auto overcomplete = ProductOfExpertsData<double>::synthetic(kind, 7, 9);
    EXPECT_TRUE(std::isnan(overcomplete.exact_log_z()));
    EXPECT_TRUE(std::isnan(overcomplete.host_model().exact_log_z(0)));
  }
}

TEST(ProductOfExpertsExactLogZ, MatchesQuadratureInOneDimension) {
  // Z = ∫ p̃(x) dx = ∫ [p̃(e^y) + p̃(−e^y)] e^y dy: the substitution x = ±e^y turns the
  // algebraic Student-t tails into exponential ones, where the trapezoid rule converges
  // exponentially; [−45, 75] leaves out less than e^{−40} of the mass for both experts.
  const int seeds[] = {1, 2, 3};
  for (ExpertKind kind : {ExpertKind::laplace, ExpertKind::student_t}) {
    for (int seed : seeds) {
      SCOPED_TRACE(std::string(myriad::models::poe_model_name(kind)) + " seed " +
                   std::to_string(seed));
      const auto data = ProductOfExpertsData<double>::synthetic(kind, 1, 1, 1.5, 3.0, seed);
      const auto model = data.host_model();
      const auto integrand = [&](double y) {
        const double r = std::exp(y);
        const std::array<double, 1> xp{r}, xm{-r};
        return (std::exp(model.log_density(xp)) + std::exp(model.log_density(xm))) * r;
      };
      const double log_z = std::log(trapezoid_on_line(integrand, -45.0, 75.0, 0.01));
      EXPECT_NEAR(log_z, data.exact_log_z(), 1e-10);
      std::printf("    %s seed %d: |log Z quadrature - exact| = %.1e\n",
                  myriad::models::poe_model_name(kind), seed,
                  std::fabs(log_z - data.exact_log_z()));
    }
  }
}

TEST(ProductOfExpertsExactLogZ, MatchesQuadratureInTwoDimensions) {
  // Polar coordinates, Z = 2 ∫_0^π R(θ) dθ with R(θ) = ∫_0^∞ p̃(r d_θ) r dr (p̃ is even).
  // Laplace: p̃(r d) = e^{−r a(θ)}, a = Σ_l |Φ_l d|, so R = 1/a² exactly, and R has kinks where
  // some Φ_l d = 0: the trapezoid rule in θ converges as h², about 1e-9 relative here.
  // Student-t: R by the trapezoid rule in y = log r as in one dimension; R behaves like
  // |Φ_l d|^{2(λ−1)} near the directions where one expert is blind, so the θ rule converges
  // at least as h² as well (λ ≥ 1.5). Both errors lie far below the tolerance, 1e-7.
  for (ExpertKind kind : {ExpertKind::laplace, ExpertKind::student_t}) {
    for (int seed : {4, 5}) {
      SCOPED_TRACE(std::string(myriad::models::poe_model_name(kind)) + " seed " +
                   std::to_string(seed));
      const auto data = ProductOfExpertsData<double>::synthetic(kind, 2, 2, 1.5, 3.0, seed);
      const auto model = data.host_model();
      const int n_theta = kind == ExpertKind::laplace ? 20000 : 2000;
      double sum = 0;
      for (int i = 0; i < n_theta; ++i) {
        const double theta = M_PI * i / n_theta;  // periodic: the plain sum is the trapezoid
        const double c = std::cos(theta), s = std::sin(theta);
        double radial;
        if (kind == ExpertKind::laplace) {
          const std::array<double, 2> d{c, s};
          const double a = -model.log_density(d);  // Σ_l |Φ_l d|, λ = 1
          radial = 1.0 / (a * a);
        } else {
          radial = trapezoid_on_line(
              [&](double y) {
                const double r = std::exp(y);
                const std::array<double, 2> x{r * c, r * s};
                return std::exp(model.log_density(x) + 2 * y);
              },
              -40.0, 70.0, 0.05);
        }
        sum += radial;
      }
      const double log_z = std::log(2 * M_PI / n_theta * sum);
      EXPECT_NEAR(log_z, data.exact_log_z(), 1e-7);
      std::printf("    %s seed %d: |log Z quadrature - exact| = %.1e\n",
                  myriad::models::poe_model_name(kind), seed,
                  std::fabs(log_z - data.exact_log_z()));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// exact samples.

/// n exact draws (draw numbers 0 … n−1 of one stream), dim × n, row-major by draw.
template <class T>
std::vector<double> exact_draws(const ProductOfExperts<T>& model, int n, std::uint64_t seed) {
  const int m = model.dim();
  const myriad::RandomStream rng(seed, 3);
  std::vector<double> draws(static_cast<std::size_t>(n) * m);
  std::vector<T> x(m);
  for (int d = 0; d < n; ++d) {
    model.exact_sample(0, rng, static_cast<std::uint32_t>(d), x);
    for (int i = 0; i < m; ++i) draws[static_cast<std::size_t>(d) * m + i] = x[i];
  }
  return draws;
}

/// P(|u| ≤ c) for one expert by Simpson's rule on [0, c] over the whole-line integral in
/// y = log u (both far more accurate than the sampling tolerance).
double expert_probability_within(ExpertKind kind, double lambda, double c) {
  const auto density = [&](double u) {
    return kind == ExpertKind::laplace ? std::exp(-lambda * u) : std::pow(1 + u * u, -lambda);
  };
  const int n = 4000;
  double inner = density(0) + density(c);
  for (int i = 1; i < n; ++i) inner += (i % 2 ? 4 : 2) * density(c * i / n);
  inner *= c / (3.0 * n);
  const double total = trapezoid_on_line(
      [&](double y) { return density(std::exp(y)) * std::exp(y); }, -45.0, 75.0, 0.01);
  return inner / total;
}

TEST(PoeExactSample, LaplaceCovarianceMatchesClosedForm) {
  // Cov[x] = Φ₀⁻¹ diag(2/λ²) Φ₀⁻ᵀ = 2 (Φ₀ᵀΦ₀)⁻¹ for λ = 1, with Φ₀⁻¹ computed here from Φ₀ by
  // Gauss–Jordan, not taken from the model. E[x] = 0 is known, so the estimator is
  // S_ij = mean(x_i x_j) with standard error sd(x_i x_j)/√N (Laplace: all moments finite).
  const int m = 4, n = 400000;
  const auto data = ProductOfExpertsData<double>::synthetic(ExpertKind::laplace, m, m);
  const std::vector<double> inv = gauss_jordan_inverse(data.filters(), m);
  const std::vector<double> draws = exact_draws(data.host_model(), n, 17);
  double worst = 0;  // largest |estimate − truth| in standard errors
  for (int i = 0; i < m; ++i) {
    double mean = 0;
    for (int d = 0; d < n; ++d) mean += draws[d * m + i];
    mean /= n;
    double var = 0;
    for (int k = 0; k < m; ++k) var += 2 * inv[i * m + k] * inv[i * m + k];
    EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(var / n)) << "coordinate " << i;
    for (int j = 0; j <= i; ++j) {
      double cov = 0;
      for (int k = 0; k < m; ++k) cov += 2 * inv[i * m + k] * inv[j * m + k];
      double s1 = 0, s2 = 0;
      for (int d = 0; d < n; ++d) {
        const double prod = draws[d * m + i] * draws[d * m + j];
        s1 += prod;
        s2 += prod * prod;
      }
      const double estimate = s1 / n;
      const double se = std::sqrt((s2 / n - estimate * estimate) / n);
      EXPECT_NEAR(estimate, cov, 5 * se) << "entry " << i << "," << j;
      worst = std::max(worst, std::fabs(estimate - cov) / se);
    }
  }
  std::printf("    worst covariance deviation %.2f standard errors\n", worst);
}

TEST(PoeExactSample, ExpertOutputsHaveTheExpertMarginalsAndAreIndependent) {
  // u = Φ₀x (Φ₀ from the model's filters) must be independent draws from the experts: check
  // P(|u_l| ≤ c) against quadrature of the expert density, P(u_l > 0) = ½, and
  // P(|u_0| ≤ 1, |u_1| ≤ 1) = P(|u_0| ≤ 1)·P(|u_1| ≤ 1), each within 5 binomial standard
  // errors. λ in [0.7, 1.4] exercises the Gamma(λ − ½ < 1) boost of the sampler.
  struct Case {
    ExpertKind kind;
    double lambda_min, lambda_max;
  };
  const Case cases[] = {{ExpertKind::laplace, 1.5, 3.0},
                        {ExpertKind::student_t, 1.5, 3.0},
                        {ExpertKind::student_t, 0.7, 1.4}};
  const int m = 3, n = 400000;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(myriad::models::poe_model_name(c.kind)) + " lambda in [" +
                 std::to_string(c.lambda_min) + ", " + std::to_string(c.lambda_max) + "]");
    const auto data =
        ProductOfExpertsData<double>::synthetic(c.kind, m, m, c.lambda_min, c.lambda_max, 23);
    const std::vector<double> draws = exact_draws(data.host_model(), n, 29);
    std::vector<double> u(static_cast<std::size_t>(n) * m);
    for (int d = 0; d < n; ++d) {
      for (int l = 0; l < m; ++l) {
        double sum = 0;
        for (int j = 0; j < m; ++j) sum += data.filters()[l * m + j] * draws[d * m + j];
        u[d * m + l] = sum;
      }
    }
    double worst = 0;  // largest |estimate − p| in standard errors
    const auto expect_probability = [n, &worst](int hits, double p, const std::string& what) {
      const double se = std::sqrt(p * (1 - p) / n);
      EXPECT_NEAR(static_cast<double>(hits) / n, p, 5 * se) << what;
      worst = std::max(worst, std::fabs(static_cast<double>(hits) / n - p) / se);
    };
    for (int l = 0; l < m; ++l) {
      const double lambda = data.lambda()[l];
      for (double cut : {0.25, 1.0, 4.0}) {
        int hits = 0;
        for (int d = 0; d < n; ++d) hits += std::fabs(u[d * m + l]) <= cut;
        expect_probability(hits, expert_probability_within(c.kind, lambda, cut),
                           "P(|u_" + std::to_string(l) + "| <= " + std::to_string(cut) + ")");
      }
      int positive = 0;
      for (int d = 0; d < n; ++d) positive += u[d * m + l] > 0;
      expect_probability(positive, 0.5, "P(u_" + std::to_string(l) + " > 0)");
    }
    int joint = 0;
    for (int d = 0; d < n; ++d) joint += std::fabs(u[d * m]) <= 1 && std::fabs(u[d * m + 1]) <= 1;
    expect_probability(joint,
                       expert_probability_within(c.kind, data.lambda()[0], 1.0) *
                           expert_probability_within(c.kind, data.lambda()[1], 1.0),
                       "P(|u_0| <= 1, |u_1| <= 1)");
    std::printf("    %s: worst deviation %.2f standard errors\n",
                myriad::models::poe_model_name(c.kind), worst);
  }
}

TEST(PoeExactSample, IsDeterministicPerDrawAndFloatFollowsDouble) {
  for (ExpertKind kind : {ExpertKind::laplace, ExpertKind::student_t}) {
    SCOPED_TRACE(myriad::models::poe_model_name(kind));
    const int m = 5;
    const auto data_d = ProductOfExpertsData<double>::synthetic(kind, m, m);
    const auto data_f = ProductOfExpertsData<float>::synthetic(kind, m, m);
    const myriad::RandomStream rng(41, 2);
    std::vector<double> a(m), b(m), c(m);
    data_d.host_model().exact_sample(0, rng, 7, a);
    data_d.host_model().exact_sample(0, rng, 7, b);
    data_d.host_model().exact_sample(0, rng, 8, c);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    // Float draws use the same Philox words (23 instead of 52 bits of each uniform), so they
    // follow the double draws to ~1e-5 relative (more only in the far tails, where the Laplace
    // inverse CDF amplifies the 2^−23 difference of the uniforms by 2/(1 − 2|w|)), unless a
    // Marsaglia–Tsang acceptance flips, which needs a proposal within ~1e-6 of the boundary:
    // over 200 draws, at most a couple may differ by more than 1 %.
    int far = 0;
    for (std::uint32_t d = 0; d < 200; ++d) {
      std::vector<double> x_d(m);
      std::vector<float> x_f(m);
      data_d.host_model().exact_sample(0, rng, d, x_d);
      data_f.host_model().exact_sample(0, rng, d, x_f);
      double scale = 1, diff = 0;
      for (int i = 0; i < m; ++i) {
        ASSERT_TRUE(std::isfinite(x_f[i]));
        scale = std::max(scale, std::fabs(x_d[i]));
        diff = std::max(diff, std::fabs(x_f[i] - x_d[i]));
      }
      far += diff > 1e-2 * scale;
    }
    EXPECT_LE(far, kind == ExpertKind::laplace ? 0 : 2);
  }
}

TEST(PoeExactSample, OvercompleteModelHasNoExactAnswers) {
  const auto data = ProductOfExpertsData<double>::synthetic(ExpertKind::student_t, 4, 6);
  const auto model = data.host_model();
  EXPECT_FALSE(data.has_exact());
  EXPECT_FALSE(model.is_complete());
  EXPECT_EQ(model.inverse_filters, nullptr);
  std::vector<double> x(4, 0.0);
  model.exact_sample(0, myriad::RandomStream(1, 0), 0, x);
  for (double v : x) EXPECT_TRUE(std::isnan(v));
  EXPECT_TRUE(ProductOfExpertsData<double>::synthetic(ExpertKind::laplace, 4, 4)
                  .host_model()
                  .is_complete());
}

// ---------------------------------------------------------------------------------------------
// Argument validation and device copies.

TEST(ProductOfExpertsData, RejectsBadArguments) {
  using Data = ProductOfExpertsData<double>;
  expect_invalid_argument([] { Data::synthetic(ExpertKind::laplace, 0, 4); },
                          "poe_laplace: dim must be >= 1, got 0");
  expect_invalid_argument([] { Data::synthetic(ExpertKind::laplace, 5, 4); },
                          "poe_laplace: experts (4) must be >= dim (5)");
  expect_invalid_argument([] { Data::synthetic(ExpertKind::student_t, 36, 20); },
                          "poe_student_t: experts (20) must be >= dim (36)");
  expect_invalid_argument([] { Data::synthetic(ExpertKind::student_t, 3, 3, 0.5, 3.0); },
                          "poe_student_t: lambda_min must exceed 0.5");
  expect_invalid_argument([] { Data::synthetic(ExpertKind::student_t, 3, 3, std::nan(""), 3.0); },
                          "poe_student_t: lambda_min must exceed 0.5");
  expect_invalid_argument([] { Data::synthetic(ExpertKind::student_t, 3, 3, 2.0, 1.9); },
                          "poe_student_t: lambda_max must be finite and >= lambda_min = 2");
  expect_invalid_argument([] { Data::synthetic(static_cast<ExpertKind>(7), 3, 3); },
                          "unknown expert kind 7");
  // Laplace experts ignore the λ range.
  EXPECT_NO_THROW(Data::synthetic(ExpertKind::laplace, 3, 3, 0.1, 0.0));
  const auto data = Data::synthetic(ExpertKind::laplace, 3, 3);
  expect_invalid_argument([&] { data.host_model().exact_log_z(1); },
                          "poe_laplace: the model has one problem (0), got 1");
}

TEST(ProductOfExpertsData, DeviceModelUploadsOnce) {
  auto data = ProductOfExpertsData<double>::synthetic(ExpertKind::student_t, 4, 4);
  const auto device = device_model_or_nothing([&] { return data.device_model(); });
  if (!device) return;  // skipped, or a build without CUDA (unavailable_error checked)
  const auto& model = *device;
  EXPECT_NE(model.filters, data.filters().data());
  const auto filters = myriad::download(model.filters, data.filters().size());
  const auto lambda = myriad::download(model.lambda, data.lambda().size());
  const auto inv = myriad::download(model.inverse_filters, data.inverse_filters().size());
  EXPECT_EQ(filters, data.filters());
  EXPECT_EQ(lambda, data.lambda());
  EXPECT_EQ(inv, data.inverse_filters());
  EXPECT_EQ(model.exact_log_z(0), data.exact_log_z());
  const auto again = data.device_model();  // no second upload: same device buffers
  EXPECT_EQ(again.filters, model.filters);
  EXPECT_EQ(again.inverse_filters, model.inverse_filters);
}

}  // namespace
