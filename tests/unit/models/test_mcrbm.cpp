// Tests of the annealing target `mcrbm` (include/myriad/models/mcrbm.hpp, hais.md §9.4): the
// supplied log density and gradient against the formulas as printed, the supplied gradient
// against forward-mode duals and central finite differences, float against double, finiteness
// far out, the seeded parameters' construction, argument validation and the device copy.

#include <gtest/gtest.h>

#include <algorithm>
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
#include "common/test_points.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/mcrbm.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

constexpr std::uint64_t kPointSeed = 20111212;
constexpr int kPoints = 8;

// Derivative checks: first-order forward error bounds (ErrorScales,
// common/density_derivatives.hpp) with a factor 4 for the two evaluations compared and the
// second-order remainder: error_scale_tolerances(scales, 4, 0, ε).

// ---------------------------------------------------------------------------------------------
// Direct formula (hais.md §9.4, evaluated literally) and error scales.

double softplus(double a) { return a > 0 ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a)); }
double logistic(double a) {
  return a >= 0 ? 1 / (1 + std::exp(-a)) : std::exp(a) / (1 + std::exp(a));
}

/// −E(x) and its gradient from the formulas of hais.md §9.4 as printed: ∇t_k built for each k.
double mcrbm_direct(const McrbmData<double>& data, const std::vector<double>& x,
                    std::vector<double>& grad) {
  const int m_dim = data.dim(), l_dim = data.factors(), k_dim = data.covariance_units(),
            j_dim = data.mean_units();
  const auto& c = data.filters();
  const auto& p = data.pooling();
  const auto& w = data.mean_weights();
  double sum_sq = 0;
  for (double v : x) sum_sq += v * v;
  const double s = sum_sq + 0.5;
  double energy = 0.5 * sum_sq;
  grad.assign(m_dim, 0.0);
  for (int m = 0; m < m_dim; ++m) {
    energy -= x[m] * data.visible_bias()[m];
    grad[m] = -x[m] + data.visible_bias()[m];
  }
  std::vector<double> f(l_dim);
  for (int l = 0; l < l_dim; ++l) {
    f[l] = 0;
    for (int m = 0; m < m_dim; ++m) f[l] += c[l * m_dim + m] * x[m];
  }
  for (int k = 0; k < k_dim; ++k) {
    double t = data.covariance_bias()[k];
    std::vector<double> grad_t(m_dim, 0.0);
    for (int l = 0; l < l_dim; ++l) {
      const double pk = p[l * k_dim + k];
      t += 0.5 * pk * f[l] * f[l] / s;
      for (int m = 0; m < m_dim; ++m) {
        grad_t[m] += pk * (f[l] * c[l * m_dim + m] / s - f[l] * f[l] * x[m] / (s * s));
      }
    }
    energy -= softplus(t);
    for (int m = 0; m < m_dim; ++m) grad[m] += logistic(t) * grad_t[m];
  }
  for (int j = 0; j < j_dim; ++j) {
    double a = data.mean_bias()[j];
    for (int m = 0; m < m_dim; ++m) a += w[j * m_dim + m] * x[m];
    energy -= softplus(a);
    for (int m = 0; m < m_dim; ++m) grad[m] += logistic(a) * w[j * m_dim + m];
  }
  return -energy;
}

/// First-order error scales of −E and ∇(−E) (see "Derivative checks"), in units of n·ε.
ErrorScales mcrbm_error_scales(const McrbmData<double>& data, const std::vector<double>& x) {
  const int m_dim = data.dim(), l_dim = data.factors(), k_dim = data.covariance_units(),
            j_dim = data.mean_units();
  const auto& c = data.filters();
  const auto& p = data.pooling();
  const auto& w = data.mean_weights();
  ErrorScales scales;
  scales.terms = m_dim + l_dim + k_dim + j_dim + 8;
  scales.gradient.assign(m_dim, 0.0);
  double sum_sq = 0;
  for (double v : x) sum_sq += v * v;
  const double s = sum_sq + 0.5;
  scales.value = sum_sq;  // ‖x‖²/2 with the error of its own sum
  for (int m = 0; m < m_dim; ++m) {
    scales.value += std::fabs(x[m] * data.visible_bias()[m]);
    scales.gradient[m] += std::fabs(data.visible_bias()[m]) + std::fabs(x[m]);
  }
  for (int j = 0; j < j_dim; ++j) {
    double a = data.mean_bias()[j], a_scale = std::fabs(data.mean_bias()[j]);
    for (int m = 0; m < m_dim; ++m) {
      a += w[j * m_dim + m] * x[m];
      a_scale += std::fabs(w[j * m_dim + m] * x[m]);
    }
    scales.value += softplus(a) + logistic(a) * a_scale;
    for (int m = 0; m < m_dim; ++m) {
      scales.gradient[m] += std::fabs(w[j * m_dim + m]) * (logistic(a) + 0.25 * a_scale);
    }
  }
  std::vector<double> f(l_dim), f_scale(l_dim);
  for (int l = 0; l < l_dim; ++l) {
    for (int m = 0; m < m_dim; ++m) {
      f[l] += c[l * m_dim + m] * x[m];
      f_scale[l] += std::fabs(c[l * m_dim + m] * x[m]);
    }
  }
  // t_k and its error scale: δ(f²/(2s)) ≤ (|f| δf + f²/2 · δs/s)/s with δs/s ≲ n ε.
  std::vector<double> sig(k_dim), t_scale(k_dim);
  for (int k = 0; k < k_dim; ++k) {
    double t = data.covariance_bias()[k];
    t_scale[k] = std::fabs(t);
    for (int l = 0; l < l_dim; ++l) {
      const double pk = std::fabs(p[l * k_dim + k]);
      t += 0.5 * p[l * k_dim + k] * f[l] * f[l] / s;
      t_scale[k] += pk * (std::fabs(f[l]) * f_scale[l] + 0.5 * f[l] * f[l]) / s;
    }
    sig[k] = logistic(t);
    scales.value += softplus(t) + sig[k] * t_scale[k];
  }
  // r_l = Σ_k σ(t_k) P_lk with δσ ≤ ¼ δt; then the two gradient terms of the header comment.
  for (int l = 0; l < l_dim; ++l) {
    double r = 0, r_scale = 0;
    for (int k = 0; k < k_dim; ++k) {
      r += sig[k] * p[l * k_dim + k];
      r_scale += std::fabs(p[l * k_dim + k]) * (sig[k] + 0.25 * t_scale[k]);
    }
    const double af = std::fabs(f[l]);
    const double first = (r_scale * af + std::fabs(r) * f_scale[l] + std::fabs(r) * af) / s;
    const double second = (r_scale * f[l] * f[l] + 2 * std::fabs(r) * af * f_scale[l] +
                           2 * std::fabs(r) * f[l] * f[l]) /
                          (s * s);
    for (int m = 0; m < m_dim; ++m) {
      scales.gradient[m] += first * std::fabs(c[l * m_dim + m]) + second * std::fabs(x[m]);
    }
  }
  return scales;
}

struct McrbmCase {
  int dim, factors, covariance_units, mean_units;
};

// Defaults, a small model, and K = 150 > 2 tiles of 64 (the last one partial).
const McrbmCase kMcrbmCases[] = {{36, 64, 64, 32}, {5, 7, 3, 2}, {8, 10, 150, 4}};

std::string describe(const McrbmCase& c) {
  return "M=" + std::to_string(c.dim) + " L=" + std::to_string(c.factors) +
         " K=" + std::to_string(c.covariance_units) + " J=" + std::to_string(c.mean_units);
}

McrbmData<double> mcrbm_data(const McrbmCase& c) {
  return McrbmData<double>::synthetic(c.dim, c.factors, c.covariance_units, c.mean_units);
}

// Whitened data have unit variance per component; 1.5 reaches into the tails as well.
std::vector<double> mcrbm_point(int point, int dim) {
  return standard_normals(kPointSeed, point, dim, 1.5);
}

// The compile-time properties the samplers and the AIS estimator rely on.
static_assert(std::is_trivially_copyable_v<Mcrbm<double>>);
static_assert(myriad::model_has_gradient<Mcrbm<float>>);
static_assert(!myriad::target_has_exact_log_z<Mcrbm<double>>);
static_assert(!myriad::target_has_exact_sample<Mcrbm<double>>);

TEST(McrbmModel, LogDensityAndGradientMatchDirectFormula) {
  for (const McrbmCase& c : kMcrbmCases) {
    SCOPED_TRACE(describe(c));
    const auto data = mcrbm_data(c);
    const auto model = data.host_model();
    for (int p = 0; p < kPoints; ++p) {
      SCOPED_TRACE("point " + std::to_string(p));
      const std::vector<double> x = mcrbm_point(p, c.dim);
      std::vector<double> grad(c.dim), direct_grad;
      const double lp = model.log_density_gradient(x, grad);
      const double direct = mcrbm_direct(data, x, direct_grad);
      const ErrorScales scales = mcrbm_error_scales(data, x);
      const double n_eps = scales.terms * kEps;
      EXPECT_NEAR(lp, direct, 4 * n_eps * scales.value);
      EXPECT_NEAR(model.log_density(x), direct, 4 * n_eps * scales.value);
      for (int m = 0; m < c.dim; ++m) {
        EXPECT_NEAR(grad[m], direct_grad[m], 4 * n_eps * scales.gradient[m]) << "component " << m;
      }
    }
  }
}

TEST(McrbmModel, GradientMatchesDualsAndFiniteDifferences) {
  DerivativeAgreement agreement;  // the expectations report; the ratios are not printed
  for (const McrbmCase& c : kMcrbmCases) {
    SCOPED_TRACE(describe(c));
    const auto data = mcrbm_data(c);
    for (int p = 0; p < kPoints; ++p) {
      SCOPED_TRACE("point " + std::to_string(p));
      const std::vector<double> x = mcrbm_point(p, c.dim);
      expect_consistent_derivatives(data.host_model(), x,
                                    error_scale_tolerances(mcrbm_error_scales(data, x), 4, 0),
                                    agreement);
    }
  }
}

TEST(McrbmModel, FloatMatchesDouble) {
  double worst = 0;  // the expectations report; the ratio is not printed
  for (const McrbmCase& c : kMcrbmCases) {
    SCOPED_TRACE(describe(c));
    const auto data_d = mcrbm_data(c);
    const auto data_f =
        McrbmData<float>::synthetic(c.dim, c.factors, c.covariance_units, c.mean_units);
    for (int p = 0; p < kPoints; ++p) {
      SCOPED_TRACE("point " + std::to_string(p));
      const std::vector<double> x = float_representable(mcrbm_point(p, c.dim));
      expect_float_agrees(data_f.host_model(), data_d.host_model(), x,
                          error_scale_tolerances(mcrbm_error_scales(data_d, x), 4, 0, kFloatEps),
                          worst);
    }
  }
}

TEST(McrbmModel, StaysFiniteFarOut) {
  // Softplus and logistic from e^{−|a|} never overflow; far out the Gaussian term dominates.
  const auto data = McrbmData<double>::synthetic();
  const auto data_f = McrbmData<float>::synthetic();
  for (double scale : {1e2, 1e4}) {
    const std::vector<double> x = standard_normals(kPointSeed, 0, data.dim(), scale);
    std::vector<double> grad(data.dim());
    const double lp = data.host_model().log_density_gradient(x, grad);
    EXPECT_TRUE(std::isfinite(lp));
    for (double g : grad) EXPECT_TRUE(std::isfinite(g));
    std::vector<float> x_f(x.begin(), x.end()), grad_f(data.dim());
    EXPECT_TRUE(std::isfinite(data_f.host_model().log_density_gradient(x_f, grad_f)));
    for (float g : grad_f) EXPECT_TRUE(std::isfinite(g));
    double sum_sq = 0;
    for (double v : x) sum_sq += v * v;
    EXPECT_LT(lp, -0.4 * sum_sq);  // −‖x‖²/2 plus terms of order ‖x‖
  }
}

TEST(McrbmData, ParametersFollowTheDocumentedConstruction) {
  const auto data = McrbmData<double>::synthetic();
  EXPECT_EQ(data.dim(), 36);
  EXPECT_EQ(data.factors(), 64);
  EXPECT_EQ(data.covariance_units(), 64);
  EXPECT_EQ(data.mean_units(), 32);
  EXPECT_EQ(data.sigma(), 1.0);
  ASSERT_EQ(data.filters().size(), 64u * 36u);
  ASSERT_EQ(data.pooling().size(), 64u * 64u);
  ASSERT_EQ(data.mean_weights().size(), 32u * 36u);
  ASSERT_EQ(data.covariance_bias().size(), 64u);
  ASSERT_EQ(data.mean_bias().size(), 32u);
  ASSERT_EQ(data.visible_bias().size(), 36u);
  for (int l = 0; l < 64; ++l) {
    double norm_sq = 0;
    for (int m = 0; m < 36; ++m) norm_sq += std::pow(data.filters()[l * 36 + m], 2);
    EXPECT_NEAR(norm_sq, 1.0, 64 * kEps) << "filter " << l;
  }
  for (double v : data.pooling()) EXPECT_LE(v, 0.0);
  // P = −(2M/L)|n| has mean −(2M/L)√(2/π); W entries have variance 0.25/M. Both within 5
  // standard errors over their entries (Var|n| = 1 − 2/π; Var n² = 2).
  double p_sum = 0;
  for (double v : data.pooling()) p_sum += v;
  const double p_scale = 2.0 * 36 / 64;
  EXPECT_NEAR(p_sum / data.pooling().size(), -p_scale * std::sqrt(2 / M_PI),
              5 * p_scale * std::sqrt((1 - 2 / M_PI) / data.pooling().size()));
  double w_sq = 0;
  for (double v : data.mean_weights()) w_sq += v * v;
  EXPECT_NEAR(w_sq / data.mean_weights().size(), 0.25 / 36,
              5 * (0.25 / 36) * std::sqrt(2.0 / data.mean_weights().size()));

  const auto again = McrbmData<double>::synthetic();
  const auto other = McrbmData<double>::synthetic(36, 64, 64, 32, 2012);
  const auto data_f = McrbmData<float>::synthetic();
  EXPECT_EQ(again.filters(), data.filters());
  EXPECT_EQ(again.covariance_bias(), data.covariance_bias());
  EXPECT_NE(other.filters(), data.filters());
  EXPECT_NE(other.visible_bias(), data.visible_bias());
  expect_rounded_to_float(data_f.pooling(), data.pooling());
}

TEST(McrbmData, CovarianceUnitsShapeTheDensity) {
  // The covariance term Σ_k log(1 + e^{t_k}) depends on the direction of x only through
  // (C_l x)²/s. At ‖x‖ = √M its spread over 200 random directions must exceed 2 nats for the
  // default parameters, or the covariance units would be decoration and the target nearly
  // Gaussian (the header comment quotes about 8 nats between the 5 % and 95 % quantiles).
  const auto data = McrbmData<double>::synthetic();
  const int m_dim = data.dim(), l_dim = data.factors(), k_dim = data.covariance_units();
  double lo = 1e300, hi = -1e300;
  for (int p = 0; p < 200; ++p) {
    std::vector<double> x = standard_normals(kPointSeed, p, m_dim, 1.0);
    double norm = 0;
    for (double v : x) norm += v * v;
    for (double& v : x) v *= std::sqrt(m_dim / norm);
    const double s = m_dim + 0.5;
    double covariance_term = 0;
    for (int k = 0; k < k_dim; ++k) {
      double t = data.covariance_bias()[k];
      for (int l = 0; l < l_dim; ++l) {
        double f = 0;
        for (int m = 0; m < m_dim; ++m) f += data.filters()[l * m_dim + m] * x[m];
        t += 0.5 * data.pooling()[l * k_dim + k] * f * f / s;
      }
      covariance_term += softplus(t);
    }
    lo = std::min(lo, covariance_term);
    hi = std::max(hi, covariance_term);
  }
  std::printf("    covariance term over 200 directions: %.2f .. %.2f nats\n", lo, hi);
  EXPECT_GT(hi - lo, 2.0);
}

TEST(McrbmData, RejectsBadArguments) {
  expect_invalid_argument([] { McrbmData<double>::synthetic(0); },
                          "mcrbm: dim must be >= 1, got 0");
  expect_invalid_argument([] { McrbmData<double>::synthetic(36, 0); },
                          "mcrbm: factors must be >= 1, got 0");
  expect_invalid_argument([] { McrbmData<double>::synthetic(36, 64, -1); },
                          "mcrbm: covariance_units must be >= 1, got -1");
  expect_invalid_argument([] { McrbmData<float>::synthetic(36, 64, 64, 0); },
                          "mcrbm: mean_units must be >= 1, got 0");
}

TEST(McrbmData, DeviceModelUploadsOnce) {
  auto data = McrbmData<float>::synthetic(6, 5, 4, 3);
  const auto device = device_model_or_nothing([&] { return data.device_model(); });
  if (!device) return;  // skipped, or a build without CUDA (unavailable_error checked)
  const auto& model = *device;
  EXPECT_NE(model.filters, data.filters().data());
  using myriad::download;
  EXPECT_EQ(download(model.filters, data.filters().size()), data.filters());
  EXPECT_EQ(download(model.pooling, data.pooling().size()), data.pooling());
  EXPECT_EQ(download(model.mean_weights, data.mean_weights().size()), data.mean_weights());
  EXPECT_EQ(download(model.covariance_bias, 4), data.covariance_bias());
  EXPECT_EQ(download(model.mean_bias, 3), data.mean_bias());
  EXPECT_EQ(download(model.visible_bias, 6), data.visible_bias());
  const auto again = data.device_model();
  EXPECT_EQ(again.filters, model.filters);
  EXPECT_EQ(again.visible_bias, model.visible_bias);
}

}  // namespace
