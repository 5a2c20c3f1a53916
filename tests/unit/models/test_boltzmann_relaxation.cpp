// Tests of `boltzmann_relaxation` (include/myriad/models/boltzmann_relaxation.hpp,
// thesis-methods.md §9.6), an annealing target with exact answers: the supplied gradient against
// forward-mode duals and central finite differences, the log density against the relaxed energy,
// the parameters' construction, the exact log Z against brute-force sums over states and
// numerical quadrature, the exact samples' moments and states within 5 standard errors, float
// against double, argument checks, determinism and the device copy; and the relaxation with a
// given (the SDP's) Λ: rank-deficient, D < D_B, its answers against quadrature.

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
#include "common/exact_samples.hpp"
#include "common/expect_error.hpp"
#include "common/quadrature.hpp"
#include "common/test_points.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/boltzmann_relaxation.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;
using myriad::RandomStream;

// Test points come from kPointSeed's streams. The derivative and float checks allow twice the
// rounding of the sums, 2 · terms · ε · (1 + scale), and twice the central-difference bound:
// error_scale_tolerances(scales, 2, 1, ε).
constexpr std::uint64_t kPointSeed = 20240612;

static_assert(std::is_trivially_copyable_v<BoltzmannRelaxation<float>>, "");
static_assert(!myriad::target_has_problems<BoltzmannRelaxation<double>>, "one problem");
static_assert(myriad::target_has_exact_log_z<BoltzmannRelaxation<float>>, "");
static_assert(myriad::target_has_exact_sample<BoltzmannRelaxation<double>>, "");
static_assert(myriad::model_has_gradient<BoltzmannRelaxation<double>>, "");
static_assert(!std::is_copy_constructible_v<BoltzmannRelaxationData<double>>, "");
static_assert(std::is_move_constructible_v<BoltzmannRelaxationData<double>>, "");

double at(const std::vector<double>& a, int cols, int i, int j) {
  return a[static_cast<std::size_t>(i) * cols + j];
}

/// Rounding scales at x (see ErrorScales): t_i = b_i + Σ_k Q_ik x_k is within γ m_i,
/// m_i = |b_i| + Σ_k |Q_ik x_k|, log cosh and tanh are 1-Lipschitz, and ∂_k sums |Q_ik| tanh.
ErrorScales boltzmann_scales(const BoltzmannRelaxationData<double>& data,
                             const std::vector<double>& x) {
  const int n = data.units();
  ErrorScales s;
  s.gradient.assign(n, 0.0);
  for (int k = 0; k < n; ++k) {
    s.value += 0.5 * x[k] * x[k];
    s.gradient[k] = std::fabs(x[k]);
  }
  for (int i = 0; i < n; ++i) {
    double m = std::fabs(data.bias()[i]);
    for (int k = 0; k <= i; ++k) m += std::fabs(at(data.factor(), n, i, k) * x[k]);
    s.value += 2 * m + std::log(2.0);  // |log cosh t| ≤ |t| ≤ m
    for (int k = 0; k <= i; ++k) s.gradient[k] += std::fabs(at(data.factor(), n, i, k)) * (1 + m);
  }
  s.terms = n + 8;
  return s;
}

std::vector<double> boltzmann_point(const BoltzmannRelaxationData<double>& data, int k) {
  std::vector<double> x = standard_normals(kPointSeed, 1000 + k, data.units());
  const double scale = k == 0 ? 8.0 : 1.5;  // point 0: far out, tanh saturated
  for (int i = 0; i < data.units(); ++i) x[i] = data.mean_x()[i] + scale * x[i];
  return x;
}

/// ½sᵀWs + sᵀb for state index k (s_i = +1 where bit i is set), summed directly.
double boltzmann_log_weight(const BoltzmannRelaxationData<double>& data, std::int64_t k) {
  const int n = data.units();
  double e = 0;
  for (int i = 0; i < n; ++i) {
    const double s_i = ((k >> i) & 1) ? 1.0 : -1.0;
    e += data.bias()[i] * s_i;
    for (int j = 0; j < n; ++j) {
      const double s_j = ((k >> j) & 1) ? 1.0 : -1.0;
      e += 0.5 * s_i * at(data.coupling(), n, i, j) * s_j;
    }
  }
  return e;
}

/// E[ssᵀ] by a direct sum over states.
std::vector<double> boltzmann_second_moment_s(const BoltzmannRelaxationData<double>& data) {
  const int n = data.units();
  std::vector<double> moment(n * n, 0.0);
  for (std::int64_t k = 0; k < (std::int64_t{1} << n); ++k) {
    const double p = std::exp(boltzmann_log_weight(data, k) - data.log_z_boltzmann());
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        moment[i * n + j] += (((k >> i) & 1) == ((k >> j) & 1) ? p : -p);
      }
    }
  }
  return moment;
}

TEST(AisModelsBoltzmann, GradientMatchesDualsAndFiniteDifferences) {
  for (int units : {12, 3, 1}) {
    const auto data = BoltzmannRelaxationData<double>::synthetic(units);
    const auto model = data.host_model();
    DerivativeAgreement agreement;
    for (int k = 0; k < 8; ++k) {
      SCOPED_TRACE("D_B = " + std::to_string(units) + ", point " + std::to_string(k));
      const auto x = boltzmann_point(data, k);
      expect_consistent_derivatives(
          model, x, error_scale_tolerances(boltzmann_scales(data, x), 2, 1), agreement);
    }
    std::printf("    D_B = %d: worst error / tolerance = %.3f\n", units, agreement.worst());
  }
}

TEST(AisModelsBoltzmann, LogDensityIsTheRelaxedEnergy) {
  // −φ(x) = −½xᵀx + Σ_i log cosh(q_iᵀx + b_i) with std::cosh (no overflow at these points).
  const auto data = BoltzmannRelaxationData<double>::synthetic(12);
  const auto model = data.host_model();
  for (int k = 1; k < 6; ++k) {
    const auto x = boltzmann_point(data, k);
    double direct = 0;
    for (int i = 0; i < 12; ++i) {
      direct -= 0.5 * x[i] * x[i];
      double t = data.bias()[i];
      for (int j = 0; j < 12; ++j) t += at(data.factor(), 12, i, j) * x[j];
      direct += std::log(std::cosh(t));
    }
    EXPECT_NEAR(model.log_density(x), direct, 1e-12 * (1 + std::fabs(direct)));
  }
  // The stable log cosh at large |t|, where std::cosh overflows: |t| − log 2.
  EXPECT_DOUBLE_EQ(myriad::models::log_cosh(1000.0), 1000.0 - std::log(2.0));
  EXPECT_DOUBLE_EQ(myriad::models::log_cosh(-1000.0), 1000.0 - std::log(2.0));
  EXPECT_EQ(myriad::models::log_cosh(0.0), 0.0);
  // Near 0 the stable form cancels |t| + log1p(e^{−2|t|}) against log 2: accurate to a few ε
  // absolutely (what a sum of log densities needs), not relatively.
  EXPECT_NEAR(myriad::models::log_cosh(1e-4), 0.5e-8, 1e-15);
}

TEST(AisModelsBoltzmann, ParametersFollowTheThesisRecipe) {
  for (int units : {1, 2, 12, 20}) {
    SCOPED_TRACE("D_B = " + std::to_string(units));
    const auto data = BoltzmannRelaxationData<double>::synthetic(units);
    const int n = data.units();
    ASSERT_EQ(n, units);
    ASSERT_EQ(data.dim(), units);
    const auto& w = data.coupling();
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(at(w, n, i, i), 0.0);
      for (int j = 0; j < n; ++j) EXPECT_EQ(at(w, n, i, j), at(w, n, j, i));
    }
    // Λ = cI with c = c_min + 1 % margin; W + Λ is PD, W + c′I is not for c′ just below c_min.
    EXPECT_DOUBLE_EQ(data.lambda(), data.lambda_min() + 0.01 * std::max(1.0, data.lambda_min()));
    auto shifted = [&](double c) {
      std::vector<double> a = w;
      for (int i = 0; i < n; ++i) a[i * n + i] += c;
      return a;
    };
    std::vector<double> a = shifted(data.lambda());
    EXPECT_TRUE(myriad::linalg::cholesky_in_place(myriad::dense_matrix(a.data(), n, n)));
    if (n > 1) {
      a = shifted(data.lambda_min() * (1 - 1e-6));
      EXPECT_FALSE(myriad::linalg::cholesky_in_place(myriad::dense_matrix(a.data(), n, n)));
      EXPECT_GT(data.lambda_min(), 0.0);
    }
    // Q lower triangular with QQᵀ = W + Λ.
    const auto& q = data.factor();
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (j > i) {
          EXPECT_EQ(at(q, n, i, j), 0.0);
        }
        double sum = 0;
        for (int k = 0; k < n; ++k) sum += at(q, n, i, k) * at(q, n, j, k);
        EXPECT_NEAR(sum, at(w, n, i, j) + (i == j ? data.lambda() : 0.0),
                    1e-12 * (1 + data.lambda()));
      }
    }
  }
  // The eigenvalues of V are 6 tanh(2 n_i) ∈ (−6, 6) and W is V with its diagonal removed, so
  // ‖W‖_F² ≤ ‖V‖_F² < 36 D_B; the biases are N(0, 0.1²): 500 of them have mean-square 0.01.
  const auto data = BoltzmannRelaxationData<double>::synthetic(20);
  double frobenius = 0;
  for (double v : data.coupling()) frobenius += v * v;
  EXPECT_LT(frobenius, 36.0 * 20);
  EXPECT_GT(frobenius, 0.0);
  double bias_sq = 0;
  int count = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const auto system = BoltzmannRelaxationData<double>::synthetic(10, seed);
    for (double b : system.bias()) {
      bias_sq += b * b;
      ++count;
    }
  }
  EXPECT_LT(std::fabs(bias_sq / count - 0.01) / (0.01 * std::sqrt(2.0 / count)), kSigmas);
}

TEST(AisModelsBoltzmann, EnumerationMatchesDirectSum) {
  for (int units : {1, 2, 5, 10, 16}) {
    SCOPED_TRACE("D_B = " + std::to_string(units));
    const auto data = BoltzmannRelaxationData<double>::synthetic(units, 99);
    const std::int64_t states = std::int64_t{1} << units;
    std::vector<double> log_weight(states);
    double max_lw = -std::numeric_limits<double>::infinity();
    for (std::int64_t k = 0; k < states; ++k) {
      log_weight[k] = boltzmann_log_weight(data, k);
      max_lw = std::max(max_lw, log_weight[k]);
    }
    double sum = 0;
    for (double lw : log_weight) sum += std::exp(lw - max_lw);
    const double log_z_b = max_lw + std::log(sum);
    // The Gray-code walk accumulates ≤ 2^D_B rounding steps of size ε·Σ|W_kj|.
    EXPECT_NEAR(data.log_z_boltzmann(), log_z_b, 1e-9);
    std::vector<double> mean_s(units, 0.0);
    double cumulative = 0, worst_cdf = 0;
    ASSERT_EQ(data.state_cdf().size(), static_cast<std::size_t>(states));
    for (std::int64_t k = 0; k < states; ++k) {
      const double p = std::exp(log_weight[k] - log_z_b);
      cumulative += p;
      worst_cdf = std::max(worst_cdf, std::fabs(data.state_cdf()[k] - cumulative));
      for (int i = 0; i < units; ++i) mean_s[i] += ((k >> i) & 1) ? p : -p;
    }
    EXPECT_LT(worst_cdf, 1e-9);
    EXPECT_EQ(data.state_cdf().back(), 1.0);
    for (int i = 0; i < units; ++i) EXPECT_NEAR(data.mean_s()[i], mean_s[i], 1e-9);
    // E.9 and E.10.
    EXPECT_NEAR(data.log_z(),
                log_z_b + 0.5 * units * data.lambda() + 0.5 * units * std::log(2 * M_PI) -
                    units * std::log(2.0),
                1e-9);
    EXPECT_EQ(data.host_model().exact_log_z(0), data.log_z());
    for (int k = 0; k < units; ++k) {
      double qs = 0;
      for (int i = 0; i < units; ++i) qs += at(data.factor(), units, i, k) * mean_s[i];
      EXPECT_NEAR(data.mean_x()[k], qs, 1e-9);
    }
  }
}

TEST(AisModelsBoltzmann, LogZMatchesQuadrature) {
  // ∫ exp(−φ) dx over R^D for D = 1, 2 by the trapezoid rule. exp(−φ) ∝ Σ_s c_s N(x; Qᵀs, I) is
  // a mixture of unit Gaussians, so with spacing h = 0.125 the lattice-sum error is of order
  // exp(−2π²/h²) (Poisson summation) and the box max_s ‖Qᵀs‖∞ ± 12 leaves tails below e^{−72}.
  const auto strong =
      BoltzmannRelaxationData<double>::from_parameters({0.0, 3.0, 3.0, 0.0}, {0.4, -0.2});
  const auto synthetic_1 = BoltzmannRelaxationData<double>::synthetic(1);
  const auto synthetic_2 = BoltzmannRelaxationData<double>::synthetic(2);
  for (const auto* data : {&synthetic_1, &synthetic_2, &strong}) {
    const int n = data->units();
    SCOPED_TRACE("D_B = " + std::to_string(n));
    const auto model = data->host_model();
    double reach = 0;
    for (int k = 0; k < n; ++k) {
      double column = 0;
      for (int i = 0; i < n; ++i) column += std::fabs(at(data->factor(), n, i, k));
      reach = std::max(reach, column);
    }
    const double half = reach + 12;
    const int steps = static_cast<int>(std::ceil(2 * half / 0.125));
    const double quadrature =
        log_trapezoid([&](const std::vector<double>& x) { return model.log_density(x); },
                      std::vector<double>(n, -half), std::vector<double>(n, half), steps);
    EXPECT_NEAR(quadrature, model.exact_log_z(0), 1e-9);
  }
}

TEST(AisModelsBoltzmann, ExactSamplesMatchTheMoments) {
  // E[x] = Qᵀ E[s] with standard error √(Var x_i / N), Var x_i = (Qᵀ Cov[s] Q)_ii + 1 (E.11,
  // E[ssᵀ] summed directly); E[x_i x_j] = (Qᵀ E[ssᵀ] Q)_ij + δ_ij within 5 sample standard
  // errors of the products.
  for (int units : {12, 5}) {
    SCOPED_TRACE("D_B = " + std::to_string(units));
    const auto data = BoltzmannRelaxationData<double>::synthetic(units);
    const int n = units;
    const auto& q = data.factor();
    const auto ess = boltzmann_second_moment_s(data);
    std::vector<double> second(n * n, 0.0);  // E[xxᵀ]
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        double sum = a == b ? 1.0 : 0.0;
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) sum += at(q, n, i, a) * ess[i * n + j] * at(q, n, j, b);
        second[a * n + b] = sum;
      }
    }
    const int draws = 40000;
    const auto x = exact_draws(data.host_model(), 0, n, draws);
    double worst = 0;
    for (int a = 0; a < n; ++a) {
      double sum = 0;
      for (const auto& row : x) sum += row[a];
      const double variance = second[a * n + a] - data.mean_x()[a] * data.mean_x()[a];
      const double z = (sum / draws - data.mean_x()[a]) / std::sqrt(variance / draws);
      EXPECT_LT(std::fabs(z), kSigmas) << "E[x_" << a << "]";
      worst = std::max(worst, std::fabs(z));
      for (int b = 0; b <= a; ++b) {
        double s1 = 0, s2 = 0;
        for (const auto& row : x) {
          s1 += row[a] * row[b];
          s2 += row[a] * row[b] * row[a] * row[b];
        }
        const double m = s1 / draws;
        const double se = std::sqrt((s2 / draws - m * m) / draws);
        const double zz = (m - second[a * n + b]) / se;
        EXPECT_LT(std::fabs(zz), kSigmas) << "E[x_" << a << " x_" << b << "]";
        worst = std::max(worst, std::fabs(zz));
      }
    }
    std::printf("    D_B = %d: worst |z| = %.2f\n", units, worst);
  }
}

TEST(AisModelsBoltzmann, ExactSampleStatesFollowTheCdf) {
  // D_B = 3: the state behind each draw is recovered from x − z (z regenerated from the same
  // counter), and the 8 state frequencies match P(s) within 5 binomial standard errors.
  const auto data = BoltzmannRelaxationData<double>::synthetic(3, 5);
  const auto model = data.host_model();
  const int draws = 20000;
  const RandomStream rng(kExactSampleSeed, 0);
  std::vector<int> counts(8, 0);
  for (int d = 0; d < draws; ++d) {
    std::vector<double> x(3), z(3);
    model.exact_sample(0, rng, static_cast<std::uint32_t>(d), x);
    rng.fill_normal<double>(static_cast<std::uint32_t>(d), myriad::Purpose::exact_sample, z, 3);
    // Qᵀs = x − z; Q is lower triangular, so s_2 = (x − z)_2 / Q_22, then upwards.
    std::vector<double> qs(3);
    for (int k = 0; k < 3; ++k) qs[k] = x[k] - z[k];
    int state = 0;
    std::vector<double> s(3);
    for (int i = 2; i >= 0; --i) {
      double r = qs[i];
      for (int j = i + 1; j < 3; ++j) r -= at(data.factor(), 3, j, i) * s[j];
      s[i] = r / at(data.factor(), 3, i, i);
      ASSERT_NEAR(std::fabs(s[i]), 1.0, 1e-9);
      if (s[i] > 0) state |= 1 << i;
    }
    ++counts[state];
  }
  for (int k = 0; k < 8; ++k) {
    const double p = data.state_cdf()[k] - (k == 0 ? 0.0 : data.state_cdf()[k - 1]);
    const double se = std::sqrt(p * (1 - p) / draws);
    EXPECT_LT(std::fabs(counts[k] / static_cast<double>(draws) - p), kSigmas * se + 1e-12)
        << "state " << k;
  }
}

TEST(AisModelsBoltzmann, FloatAgreesWithDouble) {
  const auto data_d = BoltzmannRelaxationData<double>::synthetic(12);
  const auto data_f = BoltzmannRelaxationData<float>::synthetic(12);
  const auto model_f = data_f.host_model();
  // The double model views double copies of the float parameters.
  const std::vector<double> q(model_f.factor, model_f.factor + 144);
  const std::vector<double> b(model_f.bias, model_f.bias + 12);
  BoltzmannRelaxation<double> model_d = data_d.host_model();
  model_d.factor = q.data();
  model_d.bias = b.data();
  double worst = 0;
  for (int k = 0; k < 6; ++k) {
    const auto x = boltzmann_point(data_d, k);
    expect_float_agrees(model_f, model_d, x,
                        error_scale_tolerances(boltzmann_scales(data_d, x), 2, 1, kFloatEps), worst,
                        FloatChecks{true, false});
  }
  std::printf("    worst float-vs-double error / tolerance = %.3f\n", worst);
  EXPECT_EQ(model_f.exact_log_z(0), data_d.log_z());  // exact answers are computed in double
}

TEST(AisModelsBoltzmann, RejectsBadArguments) {
  using Data = BoltzmannRelaxationData<double>;
  expect_invalid_argument([] { Data::synthetic(0); },
                          "boltzmann_relaxation: units must lie in [1, 30]");
  expect_invalid_argument([] { Data::synthetic(31); }, "got 31");
  // Parameters (W, b) that are no Boltzmann machine, and what the refusal says.
  struct NotAMachine {
    std::vector<double> w, b;
    const char* message;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const NotAMachine& bad : std::vector<NotAMachine>{
           {{0, 1, 1}, {0, 0}, "boltzmann_relaxation: W has 3 entries, expected units^2 = 4"},
           {{0.5, 1, 1, 0}, {0, 0}, "boltzmann_relaxation: W[0][0] must be 0, got 0.5"},
           {{0, 1, 2, 0}, {0, 0}, "boltzmann_relaxation: W[0][1] != W[1][0]"},
           {{0, 1, 1, 0}, {0, nan}, "boltzmann_relaxation: b[1] is not finite"},
           {{}, {}, "boltzmann_relaxation: units must lie in [1, 30]"}})
    expect_invalid_argument([&] { Data::from_parameters(bad.w, bad.b); }, bad.message);
  const auto data = Data::synthetic(3);
  expect_invalid_argument([&] { data.host_model().exact_log_z(1); },
                          "boltzmann_relaxation: the only problem is 0, got 1");
}

// Above the table's 24 units the answers come from the streamed enumeration alone. A 24-unit
// system with one more, uncoupled unit of bias β has Z_B(25) = Z_B(24) · 2 cosh β, E[s_25] =
// tanh β and the other units' moments unchanged: checked against the tabulated 24-unit system.
// Without a table there are no exact draws.
TEST(AisModelsBoltzmann, AboveTheTableTheStreamedEnumerationGivesTheExactAnswers) {
  using Data = BoltzmannRelaxationData<double>;
  const Data small = Data::synthetic(24);
  const double beta = 0.3;
  std::vector<double> w(25 * 25, 0.0), b(small.bias());
  for (int i = 0; i < 24; ++i)
    for (int k = 0; k < 24; ++k) w[i * 25 + k] = small.coupling()[i * 24 + k];
  b.push_back(beta);
  const Data large = Data::from_parameters(w, b);
  EXPECT_NEAR(large.log_z_boltzmann(), small.log_z_boltzmann() + std::log(2 * std::cosh(beta)),
              1e-10 * std::fabs(large.log_z_boltzmann()));
  EXPECT_NEAR(large.mean_s()[24], std::tanh(beta), 1e-12);
  // The table's E[s] sums 2^24 probabilities in one sequence: rounding up to 2^24 · 2^-53 ≈ 2e-9
  // (the streamed sums go by blocks of 2^14 and are the more accurate).
  for (int i = 0; i < 24; ++i) EXPECT_NEAR(large.mean_s()[i], small.mean_s()[i], 2e-9) << i;
  EXPECT_TRUE(large.state_cdf().empty());
  EXPECT_FALSE(large.host_model().has_exact_samples());
  EXPECT_TRUE(small.host_model().has_exact_samples());
  EXPECT_FALSE(myriad::target_can_sample_exactly(large.host_model()));
}

TEST(AisModelsBoltzmann, SyntheticIsDeterministicPerSeed) {
  const auto a = BoltzmannRelaxationData<double>::synthetic(8, 201702);
  const auto b = BoltzmannRelaxationData<double>::synthetic(8);
  const auto c = BoltzmannRelaxationData<double>::synthetic(8, 201703);
  EXPECT_EQ(a.coupling(), b.coupling());
  EXPECT_EQ(a.bias(), b.bias());
  EXPECT_EQ(a.log_z(), b.log_z());
  EXPECT_NE(a.coupling(), c.coupling());
  EXPECT_EQ(BoltzmannRelaxationData<float>::synthetic().units(), 12);
}

TEST(AisModelsBoltzmann, DeviceModelUploadsOnce) {
  auto data = BoltzmannRelaxationData<double>::synthetic(6);
  const auto device = device_model_or_nothing([&] { return data.device_model(); });
  if (!device) return;  // skipped, or a build without CUDA (unavailable_error checked)
  const auto& model = *device;
  const auto q = myriad::download(model.factor, 36);
  const auto cdf = myriad::download(model.state_cdf, 64);
  EXPECT_EQ(q, data.factor());
  EXPECT_EQ(cdf, data.state_cdf());
  EXPECT_EQ(model.exact_log_z(0), data.log_z());
  EXPECT_EQ(data.device_model().state_cdf, model.state_cdf);
}

}  // namespace

namespace {

/// A machine whose W + Λ = QQᵀ has rank 2 (Q 5 × 2 from a seed): W = offdiag(QQᵀ), Λ = diag(QQᵀ).
struct RankTwoSystem {
  std::vector<double> w, b, lambda;
  RankTwoSystem() {
    constexpr int n = 5, r = 2;
    const RandomStream rng(77, 0);
    std::vector<double> q(n * r);
    for (int i = 0; i < n * r; ++i) q[i] = rng.normal<double>(0, myriad::Purpose::user, i);
    w.assign(n * n, 0.0);
    lambda.assign(n, 0.0);
    for (int i = 0; i < n; ++i) {
      b.push_back(0.3 * rng.normal<double>(1, myriad::Purpose::user, i));
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int k = 0; k < r; ++k) sum += q[i * r + k] * q[j * r + k];
        (i == j ? lambda[i] : w[i * n + j]) = sum;
      }
    }
  }
};

/// λ_max(QQᵀ) = λ_max(W + Λ) by power iteration (QQᵀ is positive semi-definite, so the iterates'
/// Rayleigh quotients rise to it; 5000 steps take any gap above 1e-3 of it to rounding).
double largest_eigenvalue(const BoltzmannRelaxationData<double>& data) {
  const int n = data.units(), d = data.dim();
  const auto& q = data.factor();
  std::vector<double> v(n, 1.0), u(d);
  double value = 0;
  for (int step = 0; step < 5000; ++step) {
    std::fill(u.begin(), u.end(), 0.0);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < d; ++k) u[k] += at(q, d, i, k) * v[i];
    double norm = 0;
    for (int i = 0; i < n; ++i) {
      double sum = 0;
      for (int k = 0; k < d; ++k) sum += at(q, d, i, k) * u[k];
      norm += sum * v[i];  // vᵀ QQᵀ v with ‖v‖ = 1 after the first step
      v[i] = sum;
    }
    double length = 0;
    for (double x : v) length += x * x;
    length = std::sqrt(length);
    for (double& x : v) x /= length;
    value = step == 0 ? length : norm;
  }
  return value;
}

TEST(AisModelsBoltzmann, AGivenLambdaGivesARankDeficientRelaxationWithExactAnswers) {
  // D = rank(W + Λ) = 2 < D_B = 5; the factor reproduces W + Λ in its pivot order, and log Z and
  // E[x] (by enumeration, E.9–E.10 with D = 2) match 2-D quadrature as in LogZMatchesQuadrature.
  const RankTwoSystem system;
  const auto data =
      BoltzmannRelaxationData<double>::from_parameters(system.w, system.b, system.lambda);
  ASSERT_EQ(data.units(), 5);
  ASSERT_EQ(data.dim(), 2);
  const auto& order = data.order();
  const auto& q = data.factor();
  for (int i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(data.bias()[i], system.b[order[i]]);
    for (int j = 0; j < 5; ++j) {
      double sum = 0;
      for (int k = 0; k < 2; ++k) sum += at(q, 2, i, k) * at(q, 2, j, k);
      const double given = i == j ? system.lambda[order[i]] : at(system.w, 5, order[i], order[j]);
      EXPECT_NEAR(sum, given, 1e-12 * (1 + std::fabs(given))) << i << ", " << j;
      EXPECT_NEAR(i == j ? data.lambda_diagonal()[i] : at(data.coupling(), 5, i, j), sum, 1e-15)
          << "the machine enumerated is the factor's";
    }
  }
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), 2);
  double reach = 0;
  for (int k = 0; k < 2; ++k) {
    double column = 0;
    for (int i = 0; i < 5; ++i) column += std::fabs(at(q, 2, i, k));
    reach = std::max(reach, column);
  }
  const double half = reach + 12;
  const int steps = static_cast<int>(std::ceil(2 * half / 0.125));
  const std::vector<double> lo(2, -half), hi(2, half);
  const double log_z = log_trapezoid(
      [&](const std::vector<double>& x) { return model.log_density(x); }, lo, hi, steps);
  EXPECT_NEAR(log_z, model.exact_log_z(0), 1e-9);
  for (int k = 0; k < 2; ++k) {
    // E[x_k] = ∫ x_k p: the trapezoid of x_k e^{log p − log Z} (positive and negative parts
    // apart, so that the log-domain rule applies).
    const auto part = [&](double sign) {
      return std::exp(log_trapezoid(
          [&](const std::vector<double>& x) {
            const double v = sign * x[k];
            return v > 0 ? std::log(v) + model.log_density(x) - log_z
                         : -std::numeric_limits<double>::infinity();
          },
          lo, hi, steps));
    };
    EXPECT_NEAR(part(1) - part(-1), data.mean_x()[k], 1e-8) << "E[x_" << k << "]";
  }
  // The gradient of the rank-deficient model against duals and differences, as for Λ = cI.
  std::vector<double> x{0.3, -1.1}, g(2);
  const double lp = model.log_density_gradient(x, g);
  EXPECT_NEAR(lp, model.log_density(x), 1e-13);
  for (int k = 0; k < 2; ++k) {
    std::vector<double> up = x, down = x;
    up[k] += 1e-6;
    down[k] -= 1e-6;
    EXPECT_NEAR(g[k], (model.log_density(up) - model.log_density(down)) / 2e-6, 1e-6) << k;
  }
}

TEST(AisModelsBoltzmann, TheShippedSdpLambdasRelaxTheLibrarysSystems) {
  // Every system scripts/boltzmann-sdp-lambda solved (data/boltzmann-sdp-lambda.json) up to 16
  // units (the 30-unit ones enumerate 2^30 states: bench/tempering_comparison.cpp runs them):
  // W + Λ is positive semi-definite to the factor's tolerance (from_parameters checks) and
  // singular, so D < D_B, and λ_max(W + Λ) — what the SDP minimises — is below cI's
  // (λ_max(W) + c), both by power iteration on QQᵀ.
  const auto systems = boltzmann_sdp_systems();
  ASSERT_GE(systems.size(), 17u) << "12 (1), 16 (3), 20 (3) and 30 units (10)";
  int checked = 0;
  for (const BoltzmannSystem& s : systems) {
    if (s.units > 16) continue;
    SCOPED_TRACE("units " + std::to_string(s.units) + " seed " + std::to_string(s.seed));
    const auto sdp =
        BoltzmannRelaxationData<double>::synthetic(s.units, s.seed, BoltzmannLambda::sdp);
    const auto identity = BoltzmannRelaxationData<double>::synthetic(s.units, s.seed);
    EXPECT_LT(sdp.dim(), s.units);
    EXPECT_TRUE(std::isfinite(sdp.host_model().exact_log_z(0)));
    EXPECT_LT(largest_eigenvalue(sdp), largest_eigenvalue(identity) - 1e-3);
    ++checked;
  }
  EXPECT_EQ(checked, 4);
  expect_invalid_argument(
      [] { BoltzmannRelaxationData<double>::synthetic(13, 201702, BoltzmannLambda::sdp); },
      "no SDP Lambda is shipped for units=13 seed=201702");
  RankTwoSystem indefinite;
  indefinite.lambda[0] -= 1.0;  // W + Λ now has a negative eigenvalue
  expect_invalid_argument(
      [&] {
        BoltzmannRelaxationData<double>::from_parameters(indefinite.w, indefinite.b,
                                                         indefinite.lambda);
      },
      "not positive semi-definite");
}

}  // namespace
