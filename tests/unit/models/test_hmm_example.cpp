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
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "common/density_derivatives.hpp"
#include "common/expect_error.hpp"
#include "common/recorded_quantities.hpp"
#include "common/test_points.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/models/hmm_example.hpp"

#ifndef MYRIAD_TEST_DATA_DIR
#error "MYRIAD_TEST_DATA_DIR must name tests/data"
#endif

namespace {

using namespace myriad::testing;
using namespace myriad::models;

const char* const kPosterior = "hmm_example-hmm_example";
constexpr std::uint64_t kPointSeed = 20261209;
constexpr int kPoints = 10;

std::string data_path(const std::string& file) {
  return std::string(MYRIAD_TEST_DATA_DIR) + "/posteriordb/" + kPosterior + "/" + file;
}

/// posteriordb's data: N, K and y.
struct Observations {
  int N = 0, K = 0;
  std::vector<double> y;
};

Observations posteriordb_observations() {
  std::ifstream in(data_path("data.json"));
  EXPECT_TRUE(in.good()) << "cannot read " << data_path("data.json");
  const nlohmann::json data = nlohmann::json::parse(in);
  return {data.at("N").get<int>(), data.at("K").get<int>(),
          data.at("y").get<std::vector<double>>()};
}

/// The first column of reference.csv: the posterior's variables, in order.
std::vector<std::string> reference_variables() {
  std::ifstream in(data_path("reference.csv"));
  EXPECT_TRUE(in.good()) << "cannot read " << data_path("reference.csv");
  std::vector<std::string> names;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) names.push_back(line.substr(0, line.find(',')));
  return names;
}

/// Points for K states (dim K²). At K = 2, points 0–3 lie within two posterior sds of the
/// reference (theta1[1] ≈ 0.67, theta2[1] ≈ 0.073, mu ≈ (3.02, 8.83): a ≈ 0.69 ± 0.45,
/// b ≈ −2.54 ± 0.42, c ≈ 1.105 ± 0.074, d ≈ 1.76 ± 0.04), 4–6 are standard normals (Stan's
/// default start region), and three are far: theta1 nearly degenerate (a = 12) with the means
/// nearly equal (d = −4), μ_1 = e³ ≈ 20 above every observation, and tiny means (c = d = −3).
/// For K > 2: standard normals, with the means' log-gaps shifted to spread them over the data.
std::vector<double> hmm_point(int K, int p) {
  std::vector<double> x = standard_normals(kPointSeed + K, p, K * K);
  if (K != 2) {
    x[K * (K - 1)] += 1.0;
    for (int k = 1; k < K; ++k) x[K * (K - 1) + k] += 0.5;
    return x;
  }
  const double centre[4] = {0.69, -2.54, 1.105, 1.76}, spread[4] = {0.45, 0.42, 0.074, 0.04};
  if (p < 4) {
    for (int i = 0; i < 4; ++i) x[i] = centre[i] + 2 * spread[i] * x[i];
  } else if (p == 7) {
    x = {12.0, -1.0, 1.0, -4.0};
  } else if (p == 8) {
    x = {0.5, -2.0, 3.0, 0.5};
  } else if (p == 9) {
    x = {-1.0, 1.0, -3.0, -3.0};
  }
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

HmmExampleData<double> posteriordb_data(int K = 0) {
  const Observations obs = posteriordb_observations();
  return HmmExampleData<double>::from_arrays(obs.N, K == 0 ? obs.K : K, obs.y);
}

/// The model with its gradient by forward-mode duals as the library takes it
/// (log_density_and_gradient, model/concept.hpp), so that expect_consistent_derivatives checks
/// that gradient against scalar duals and central finite differences.
template <class Model>
struct DualGradient {
  Model model;
  int dim() const { return model.dim(); }
  template <class Vec>
  auto log_density(const Vec& x) const {
    return model.log_density(x);
  }
  template <class Vec, class Grad>
  double log_density_gradient(const Vec& x, Grad& grad) const {
    return myriad::log_density_and_gradient(model, x, grad);
  }
};

static_assert(!myriad::model_has_gradient<HmmExample<double>>, "duals differentiate it");
static_assert(std::is_trivially_copyable<HmmExample<double>>::value, "passed to kernels");
static_assert(std::is_trivially_copyable<HmmExample<float>>::value, "passed to kernels");
static_assert(HmmExample<double>::library_backends == myriad::library_backend::hmc, "CUDA HMC");
static_assert(HmmExample<float>::library_backends == 0u, "no float instance");
static_assert(!std::is_copy_constructible<HmmExampleData<double>>::value, "owns device memory");
static_assert(std::is_move_constructible<HmmExampleData<double>>::value, "movable");

TEST(ModelsLogDensity, HmmExampleMatchesStansModelBlock) {
  const Observations obs = posteriordb_observations();
  ASSERT_EQ(obs.K, 2);
  for (int K = 2; K <= HmmExample<double>::kMaxStates; ++K) {
    SCOPED_TRACE("K = " + std::to_string(K));
    const auto data = posteriordb_data(K);
    const auto model = data.host_model();
    ASSERT_EQ(model.dim(), K * K);
    double worst = 0;
    for (int p = 0; p < kPoints; ++p) {
      const auto x = hmm_point(K, p);
      const Direct direct = direct_log_density(obs.y, K, x);
      ASSERT_TRUE(std::isfinite(direct.value)) << "point " << p;
      const double lp = model.log_density(x);
      EXPECT_NEAR(lp, direct.value, direct.tolerance(kEps)) << "point " << p;
      worst = std::max(worst, std::fabs(lp - direct.value) / direct.tolerance(kEps));
    }
    std::printf("    K = %d: worst |model - direct| / tolerance = %.3g\n", K, worst);
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
  const Observations obs = posteriordb_observations();
  for (int K : {2, 3}) {
    SCOPED_TRACE("K = " + std::to_string(K));
    const auto data = posteriordb_data(K);
    const DualGradient<HmmExample<double>> model{data.host_model()};
    DerivativeAgreement agreement;
    for (int p = 0; p < kPoints; ++p) {
      SCOPED_TRACE("point " + std::to_string(p));
      const auto x = hmm_point(K, p);
      const Direct direct = direct_log_density(obs.y, K, x);
      // The duals' value is the plain evaluation's up to rounding (Dual's division multiplies by
      // the reciprocal): within the model's bound; vector and scalar duals make the same
      // operations, so they agree to rounding of the gradient's scale; δf is the model's bound.
      const auto tolerances = [&](double, const std::vector<double>& gradient) {
        double norm = 0;
        for (double g : gradient) norm = std::max(norm, std::fabs(g));
        DerivativeTolerances tol;
        tol.value = 2 * direct.model_scale * kEps;
        tol.gradient.assign(gradient.size(), 1e-12 * (1 + norm));
        tol.rounding = direct.model_scale * kEps;
        return tol;
      };
      expect_consistent_derivatives(model, x, tolerances, agreement);
    }
    std::printf(
        "    K = %d: worst ratios to tolerance: fd %.3g, value %.3g; max |grad - fd| = %.2e\n", K,
        agreement.fd_ratio, agreement.value_ratio, agreement.fd_abs_error);
  }
}

TEST(ModelsFloat, HmmExampleAgreesWithTheDirectTranscription) {
  // Float data and arithmetic against the double transcription on the float-rounded data and
  // point: the model's bound at ε_f.
  const Observations obs = posteriordb_observations();
  const std::vector<double> y_rounded = float_representable(obs.y);
  const auto data = HmmExampleData<float>::from_arrays(obs.N, obs.K, y_rounded);
  const auto model = data.host_model();
  double worst = 0;
  for (int p = 0; p < kPoints; ++p) {
    const auto x = float_representable(hmm_point(2, p));
    const std::vector<float> xf(x.begin(), x.end());
    const Direct direct = direct_log_density(y_rounded, 2, x);
    const float lp = model.log_density(xf);
    EXPECT_NEAR(lp, direct.value, direct.tolerance(kFloatEps)) << "point " << p;
    worst = std::max(worst, std::fabs(lp - direct.value) / direct.tolerance(kFloatEps));
  }
  std::printf("    worst |float model - direct| / tolerance = %.3g\n", worst);
}

TEST(ModelsQuantities, HmmExampleRecordsReferenceVariablesInOrder) {
  const auto data = posteriordb_data();
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), reference_variables());
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
  const auto three = posteriordb_data(3);
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
