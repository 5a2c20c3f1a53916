// Tests of `hmm_example` (include/myriad/models/hmm_example.hpp) on posteriordb's hmm_example
// data: the log density against Stan's model block written out with <cmath> — the transforms
// from the reference manual's formulas and the forward algorithm in probability space with
// per-step scaling (Rabiner 1989, §V.A), not the model's log-space recursion — at K = 2 and at
// K = 3 and 4, within first-order rounding bounds of both recursions; its gradient by forward-mode
// duals against central finite differences; float against double; the recorded quantities
// against reference.csv's variables; and the validation of the data.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/expect_error.hpp"
#include "common/posteriordb_port_checks.hpp"
#include "common/recorded_quantities.hpp"
#include "myriad/models/hmm_example.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "hmm_example-hmm_example";
constexpr std::uint64_t kPointSeed = 20261209;
constexpr int kPoints = 10;

/// posteriordb's data, by data.json's names: N, K and y.
struct Observations {
  int N = 0, K = 0;
  std::vector<double> y;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Observations, N, K, y)

/// Points for K states (dim K²). At K = 2, points 0–3 lie within two posterior sds of the
/// reference (theta1[1] ≈ 0.67, theta2[1] ≈ 0.073, mu ≈ (3.02, 8.83): a ≈ 0.69 ± 0.45,
/// b ≈ −2.54 ± 0.42, c ≈ 1.105 ± 0.074, d ≈ 1.76 ± 0.04), 4–6 are standard normals (Stan's
/// default start region), and three are far: theta1 nearly degenerate (a = 12) with the means
/// nearly equal (d = −4), μ_1 = e³ ≈ 20 above every observation, and tiny means (c = d = −3).
/// For K > 2: standard normals, with the means' log-gaps shifted to spread them over the data.
std::vector<double> hmm_point(int K, int p) {
  if (K == 2) {
    const PortPoints two_states{
        kPointSeed + K,
        {0.69, -2.54, 1.105, 1.76},
        {0.45, 0.42, 0.074, 0.04},
        2,
        4,
        7,
        {{12.0, -1.0, 1.0, -4.0}, {0.5, -2.0, 3.0, 0.5}, {-1.0, 1.0, -3.0, -3.0}}};
    return two_states(p);
  }
  std::vector<double> x = standard_normals(kPointSeed + K, p, K * K);
  x[K * (K - 1)] += 1.0;
  for (int k = 1; k < K; ++k) x[K * (K - 1) + k] += 0.5;
  return x;
}

/// Stan's model block of hmm_example written out for K states (rows theta<j> of the transition
/// matrix from their own unconstrained values, as the model's header comment generalises it),
/// with the first-order rounding bounds of this transcription and of the model's recursion.
struct Direct {
  double value = 0;
  double direct_scale = 0;  ///< this transcription's error bound, in units of ε
  double model_scale = 0;   ///< the model's log-space recursion's error bound, in units of ε
  /// |model − direct| in a precision of machine epsilon eps (the model's), the transcription in
  /// double, with a factor 2 to spare.
  double tolerance(double eps) const { return 2 * (model_scale * eps + direct_scale * kEps); }
};

Direct direct_log_density(const std::vector<double>& y, int K, const std::vector<double>& x) {
  std::vector<std::vector<double>> theta(K, std::vector<double>(K)), log_theta = theta;
  double log_jacobian = 0, prior_scale = 0;
  // simplex[K] (Stan Reference Manual, "Unit simplex"): z_k = logit⁻¹(u_k − log(K − k)) for
  // k = 1 … K − 1, x_k = (1 − Σ_{j<k} x_j) z_k, x_K the remainder; log J = Σ_k [log z_k +
  // log(1 − z_k) + log(1 − Σ_{j<k} x_j)].
  for (int j = 0; j < K; ++j) {
    double stick = 1;
    for (int k = 0; k + 1 < K; ++k) {
      const double u = x[j * (K - 1) + k] - std::log(double(K - 1 - k));
      const double z = 1 / (1 + std::exp(-u));
      const double log_z = -std::log1p(std::exp(-u)), log_one_minus_z = -std::log1p(std::exp(u));
      theta[j][k] = stick * z;
      log_jacobian += log_z + log_one_minus_z + std::log(stick);
      prior_scale += std::fabs(log_z) + std::fabs(log_one_minus_z) + std::fabs(std::log(stick));
      stick -= theta[j][k];
    }
    theta[j][K - 1] = stick;
    for (int k = 0; k < K; ++k) log_theta[j][k] = std::log(theta[j][k]);
  }
  // positive_ordered[K]: μ_1 = e^{u_1}, μ_k = μ_{k−1} + e^{u_k}; log J = Σ_k u_k.
  std::vector<double> mu(K);
  for (int k = 0; k < K; ++k) {
    const double u = x[K * (K - 1) + k];
    mu[k] = (k == 0 ? 0.0 : mu[k - 1]) + std::exp(u);
    log_jacobian += u;
    prior_scale += std::fabs(u);
  }
  const double half_log_two_pi = 0.5 * std::log(2 * M_PI);
  const double priors = -half_log_two_pi - 0.5 * (mu[0] - 3) * (mu[0] - 3) - half_log_two_pi -
                        0.5 * (mu[1] - 10) * (mu[1] - 10);
  prior_scale += std::fabs(priors) + 4 * (mu[0] + 3 + mu[1] + 10);

  // The scaled forward algorithm: α̂_t = α_t / (c_1 ⋯ c_t) with Σ_k α̂_t(k) = 1, each emission
  // density scaled by e^{m_t}, m_t = min_k ½(y_t − μ_k)², so that one is e^0 and none
  // underflows where it matters; log p = Σ_t (log c_t − m_t − ½ log 2π).
  Direct out;
  const int N = static_cast<int>(y.size());
  std::vector<double> alpha(K), next(K), log_gamma(K);  // log_gamma: the model's γ_t = log α_t
  double log_p = 0;
  double max_log_theta = 0;
  for (int j = 0; j < K; ++j)
    for (int k = 0; k < K; ++k) max_log_theta = std::max(max_log_theta, std::fabs(log_theta[j][k]));
  for (int t = 0; t < N; ++t) {
    double m = INFINITY, e_max = 0;
    std::vector<double> e(K);
    for (int k = 0; k < K; ++k) {
      e[k] = 0.5 * (y[t] - mu[k]) * (y[t] - mu[k]);
      m = std::min(m, e[k]);
      e_max = std::max(e_max, e[k]);
    }
    double c = 0;
    for (int k = 0; k < K; ++k) {
      double a = std::exp(m - e[k]);
      if (t > 0) {
        double sum = 0;
        for (int j = 0; j < K; ++j) sum += alpha[j] * theta[j][k];
        a *= sum;
      }
      next[k] = a;
      c += a;
    }
    // The model's γ_{t−1} magnitudes (γ_t(k) = log α̂_t(k) + log p so far), over the states whose
    // filtered probability is not 0: an underflowed state's term enters the log-sum-exp with a
    // weight below 1e-300, so its rounding does too.
    double gamma_max = 0;
    if (t > 0)
      for (int k = 0; k < K; ++k)
        if (alpha[k] > 0) gamma_max = std::max(gamma_max, std::fabs(log_gamma[k]));
    log_p += std::log(c) - m - half_log_two_pi;
    for (int k = 0; k < K; ++k) {
      alpha[k] = next[k] / c;
      log_gamma[k] = std::log(alpha[k]) + log_p;
    }
    // This step's roundings. Here: the products and sums of K + 1 positive terms, the division
    // and the log, (K + 6) ε relative, and exp's argument m − e_k, off by ~3ε (m + e_k): each a
    // relative error of α, carried to log p with weight ≤ 1 (the recursion is a positive linear
    // map, so relative input errors stay relative errors of its output), plus the running sum
    // log p, ε |log p|. The model: the log-sum-exp's terms γ_{t−1}(j) + log θ_jk and the
    // emission −½(y_t − μ_k)², each rounded a few times, 4ε (|γ_{t−1}| + |log θ| + e_max + K),
    // carried with weight ≤ 1 (∂γ_t(k)/∂γ_{t−1}(j) are softmax weights, summing to 1).
    out.direct_scale += K + 6 + 3 * (m + e_max) + std::fabs(log_p);
    out.model_scale += 4 * (gamma_max + max_log_theta + e_max + K);
  }
  out.value = log_p + priors + log_jacobian;
  // The priors, transforms and final sums: a few dozen roundings of terms of at most these sizes.
  out.direct_scale += 16 * prior_scale;
  out.model_scale += 16 * prior_scale + 4 * N * half_log_two_pi;
  return out;
}

HmmExampleData<double> hmm_data(int K = 0) {
  const Observations obs = posteriordb_data_as<Observations>(kPosterior);
  return HmmExampleData<double>::from_arrays(obs.N, K == 0 ? obs.K : K, obs.y);
}

static_assert(port_traits<HmmExample, HmmExampleData>(), "hmm_example is a posteriordb port");

TEST(ModelsLogDensity, HmmExampleMatchesStansModelBlock) {
  const Observations obs = posteriordb_data_as<Observations>(kPosterior);
  ASSERT_EQ(obs.K, 2);
  for (int K = 2; K <= HmmExample<double>::kMaxStates; ++K) {
    SCOPED_TRACE("K = " + std::to_string(K));
    const auto data = hmm_data(K);
    const auto model = data.host_model();
    ASSERT_EQ(model.dim(), K * K);
    const auto points = counted_points(kPoints, [&](int p) { return hmm_point(K, p); });
    expect_matches_transcription(
        model, points,
        [&](const auto& x) {
          const Direct direct = direct_log_density(obs.y, K, x);
          return Transcribed{direct.value, direct.tolerance(kEps), std::isfinite(direct.value)};
        },
        "K = " + std::to_string(K) + ": ");
    if (HasFatalFailure()) return;  // as an ASSERT here would
  }
}

TEST(ModelsLogDensity, HmmExampleAtTwoStatesIsTheLogisticForm) {
  // K = 2 in closed form: theta1 = (σ(a), 1 − σ(a)), log J = log σ(a) + log σ(−a), and so for b;
  // mu = (e^c, e^c + e^d), log J = c + d. One forward step by hand on two observations.
  const std::vector<double> y = {2.5, 9.0};
  const auto data = HmmExampleData<double>::from_arrays(2, 2, y);
  const std::vector<double> x = {0.3, -1.2, 1.1, 1.7};
  const double s1 = 1 / (1 + std::exp(-x[0])), s2 = 1 / (1 + std::exp(-x[1]));
  const double m1 = std::exp(x[2]), m2 = m1 + std::exp(x[3]);
  const double theta[2][2] = {{s1, 1 - s1}, {s2, 1 - s2}};
  auto phi = [](double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI); };
  const double mu[2] = {m1, m2};
  double likelihood = 0;
  for (int j = 0; j < 2; ++j)
    for (int k = 0; k < 2; ++k) likelihood += phi(y[0] - mu[j]) * theta[j][k] * phi(y[1] - mu[k]);
  const double expected = std::log(likelihood) + std::log(phi(m1 - 3)) + std::log(phi(m2 - 10)) +
                          std::log(s1 * (1 - s1)) + std::log(s2 * (1 - s2)) + x[2] + x[3];
  // At most 64 roundings, each of a term below 30 in magnitude (Higham §3.1).
  EXPECT_NEAR(data.host_model().log_density(x), expected, 64 * kEps * 30);
}

TEST(ModelsGradient, HmmExampleDualsAgreeWithFiniteDifferences) {
  const Observations obs = posteriordb_data_as<Observations>(kPosterior);
  for (int K : {2, 3}) {
    SCOPED_TRACE("K = " + std::to_string(K));
    const auto data = hmm_data(K);
    const auto points = counted_points(kPoints, [&](int p) { return hmm_point(K, p); });
    // The duals' value is the plain evaluation's up to rounding (Dual's division multiplies by
    // the reciprocal): within the model's bound; δf is the model's bound.
    expect_dual_gradient_agrees(
        data.host_model(), points,
        [&](const auto& x) {
          const Direct direct = direct_log_density(obs.y, K, x);
          return DualBounds{2 * direct.model_scale * kEps, direct.model_scale * kEps};
        },
        "K = " + std::to_string(K) + ": ");
  }
}

TEST(ModelsFloat, HmmExampleAgreesWithTheDirectTranscription) {
  // Float data and arithmetic against the double transcription on the float-rounded data and
  // point: the model's bound at ε_f.
  const Observations obs = posteriordb_data_as<Observations>(kPosterior);
  const std::vector<double> y_rounded = float_representable(obs.y);
  const auto data = HmmExampleData<float>::from_arrays(obs.N, obs.K, y_rounded);
  const auto points =
      counted_points(kPoints, [](int p) { return float_representable(hmm_point(2, p)); });
  expect_matches_transcription(
      data.host_model(), points,
      [&](const auto& x) {
        const Direct direct = direct_log_density(y_rounded, 2, x);
        return Transcribed{direct.value, direct.tolerance(kFloatEps)};
      },
      "float: ");
}

TEST(ModelsQuantities, HmmExampleRecordsReferenceVariablesInOrder) {
  const auto data = hmm_data();
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), posteriordb_reference_variables(kPosterior));
  for (int p = 0; p < kPoints; ++p) {
    const auto x = hmm_point(2, p);
    const auto q = recorded_quantities(model, x);
    ASSERT_EQ(q.size(), 6u);
    const double s1 = 1 / (1 + std::exp(-x[0])), s2 = 1 / (1 + std::exp(-x[1]));
    const double expected[6] = {s1,     1 - s1,         s2,
                                1 - s2, std::exp(x[2]), std::exp(x[2]) + std::exp(x[3])};
    // The stick-breaking's σ, its complement by subtraction (absolute error ε) and exp: a few
    // roundings each, relative, or absolute for the complements.
    for (int i = 0; i < 6; ++i)
      EXPECT_NEAR(q[i], expected[i], 8 * kEps * std::max(1.0, std::fabs(expected[i])))
          << "point " << p << ", " << i;
    EXPECT_EQ(q[0] + q[1], 1.0);
    EXPECT_EQ(q[2] + q[3], 1.0);
  }
  // General K: theta<j>[k] row by row, then mu, as Stan would name them.
  const auto three = hmm_data(3);
  const std::vector<std::string> names = myriad::recorded_quantity_names(three.host_model());
  const std::vector<std::string> expected_names = {
      "theta1[1]", "theta1[2]", "theta1[3]", "theta2[1]", "theta2[2]", "theta2[3]",
      "theta3[1]", "theta3[2]", "theta3[3]", "mu[1]",     "mu[2]",     "mu[3]"};
  EXPECT_EQ(names, expected_names);
  const auto q = recorded_quantities(three.host_model(), hmm_point(3, 0));
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(q[3 * j] + q[3 * j + 1] + q[3 * j + 2], 1.0, 4 * kEps) << "row " << j;
  EXPECT_LT(q[9], q[10]);
  EXPECT_LT(q[10], q[11]);
  EXPECT_GT(q[9], 0.0);
}

TEST(ModelsHmmExampleData, FromArraysValidatesStansDataBlock) {
  const std::vector<double> y = {3.0, 8.5, 9.1};
  EXPECT_EQ(HmmExampleData<double>::from_arrays(3, 2, y).host_model().dim(), 4);
  EXPECT_EQ(HmmExampleData<double>::from_arrays(3, 4, y).host_model().dim(), 16);
  // from_arrays(N, K, y) as a call to expect to throw.
  const auto make = [](int N, int K, std::vector<double> ys) {
    return [=] { HmmExampleData<double>::from_arrays(N, K, ys); };
  };
  expect_invalid_argument(make(0, 2, {}), "hmm_example: N must be >= 1 (Stan reads y[1]), got 0");
  expect_invalid_argument(make(3, 1, y), "hmm_example: K must be in 2..4, got 1");
  expect_invalid_argument(make(3, 5, y), "hmm_example: K must be in 2..4, got 5");
  expect_invalid_argument(make(4, 2, y), "hmm_example: y has 3 entries, expected N = 4");
  expect_invalid_argument(make(3, 2, {3.0, NAN, 9.1}), "hmm_example: y[2] is not finite");
}

}  // namespace
