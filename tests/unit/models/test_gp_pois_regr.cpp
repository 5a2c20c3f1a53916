// Tests of `gp_pois_regr` (include/myriad/models/gp_pois_regr.hpp) on posteriordb's gp_pois_regr
// data: the log density and the latent f against Stan's model block written out in long double
// with a Cholesky factorisation of the test's own, within a first-order bound derived from the
// Cholesky's backward error and the exact sensitivity of log p to the kernel matrix (K's
// conditioning ranges from benign near the posterior to near-singular at long length-scales, so
// no one bound relative to |log p| fits both); the gradient by forward-mode duals against central
// finite differences; the recorded quantities against reference.csv's variables; a failed
// factorisation as −∞; and the validation of the data.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "common/expect_error.hpp"
#include "common/posteriordb_port_checks.hpp"
#include "common/recorded_quantities.hpp"
#include "myriad/models/gp_pois_regr.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;
using Real = long double;  // the transcription's precision: ε ≈ 1.1e-19 on x86-64

const char* const kPosterior = "gp_pois_regr-gp_pois_regr";
constexpr std::uint64_t kPointSeed = 20261211;
constexpr int kPoints = 10;

/// posteriordb's data, by data.json's names: N, x, k (its y is not the model's).
struct Counts {
  int N = 0;
  std::vector<double> x;
  std::vector<int> k;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Counts, N, x, k)

/// Points: 0–4 near the posterior (log ρ ≈ 1.73 ± 0.12, log α ≈ 1.04 ± 0.27, f̃ standard
/// normal: their prior, about which the data say little per coordinate), 5–6 standard normals
/// (Stan's default start region), and three far ones: a short length-scale (ρ = e^{−1}: K ≈ α² I,
/// well conditioned), a long one (ρ = e^{3.5} ≈ 33: K's last pivots ~3e-9 α², near singular) with
/// a small α, and a large amplitude (α = e³ ≈ 20).
std::vector<double> gp_point(int N, int p) {
  std::vector<double> u = standard_normals(kPointSeed, p, N + 2);
  if (p < 5) {
    u[0] = 1.73 + 2 * 0.12 * u[0];
    u[1] = 1.04 + 2 * 0.27 * u[1];
  } else if (p == 7) {
    u[0] = -1.0;
  } else if (p == 8) {
    u[0] = 3.5;
    u[1] = -1.0;
  } else if (p == 9) {
    u[1] = 3.0;
  }
  return u;
}

// ---------------------------------------------------------------------------------------------
// The transcription and its error bounds.

using Matrix = std::vector<std::vector<Real>>;

/// L with L Lᵀ = A (lower triangle of A read), column by column (Cholesky–Crout), or empty if a
/// pivot is not positive.
Matrix cholesky(const Matrix& a) {
  const int n = static_cast<int>(a.size());
  Matrix l(n, std::vector<Real>(n, 0));
  for (int j = 0; j < n; ++j) {
    Real d = a[j][j];
    for (int m = 0; m < j; ++m) d -= l[j][m] * l[j][m];
    if (!(d > 0)) return {};
    l[j][j] = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      Real s = a[i][j];
      for (int m = 0; m < j; ++m) s -= l[i][m] * l[j][m];
      l[i][j] = s / l[j][j];
    }
  }
  return l;
}

/// L⁻¹ by forward substitution, column by column.
Matrix lower_inverse(const Matrix& l) {
  const int n = static_cast<int>(l.size());
  Matrix inv(n, std::vector<Real>(n, 0));
  for (int c = 0; c < n; ++c) {
    for (int i = c; i < n; ++i) {
      Real s = i == c ? 1 : 0;
      for (int m = c; m < i; ++m) s -= l[i][m] * inv[m][c];
      inv[i][c] = s / l[i][i];
    }
  }
  return inv;
}

/// S_ij = ∂φ/∂K_ij for a symmetric change of K_ij = K_ji (i ≥ j), where φ = gᵀ f and f = L f̃
/// with f̃ fixed. From K = L Lᵀ: dL = L Φ(L⁻¹ dK L⁻ᵀ), Φ the strictly lower part plus half the
/// diagonal (Murray 2016, "Differentiation of the Cholesky decomposition", eq. 9), so
/// dφ = Σ_{a≥b} c_ab (L⁻¹ dK L⁻ᵀ)_ab with c_ab = w_a f̃_b (halved for a = b), w = Lᵀ g; that is
/// dφ = Σ_ij G_ji dK_ij with G = L⁻ᵀ Cᵀ L⁻¹, and a symmetric change of the pair (i, j) moves φ
/// by G_ij + G_ji (by G_ii on the diagonal).
Matrix kernel_sensitivity(const Matrix& l, const Matrix& l_inv, const std::vector<Real>& g,
                          const std::vector<Real>& f_tilde) {
  const int n = static_cast<int>(l.size());
  std::vector<Real> w(n, 0);
  for (int a = 0; a < n; ++a)
    for (int i = a; i < n; ++i) w[a] += l[i][a] * g[i];
  // H = Cᵀ L⁻¹ (n × n), then G = L⁻ᵀ H.
  Matrix h(n, std::vector<Real>(n, 0)), big_g(n, std::vector<Real>(n, 0));
  for (int b = 0; b < n; ++b)
    for (int c = 0; c < n; ++c)
      for (int a = std::max(b, c); a < n; ++a)
        h[b][c] += (a == b ? 0.5L : 1.0L) * w[a] * f_tilde[b] * l_inv[a][c];
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < n; ++c)
      for (int b = i; b < n; ++b) big_g[i][c] += l_inv[b][i] * h[b][c];
  Matrix s(n, std::vector<Real>(n, 0));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) s[i][j] = i == j ? big_g[i][i] : big_g[i][j] + big_g[j][i];
  return s;
}

/// Stan's model block written out in long double, with the first-order bounds on the model's
/// double evaluation.
struct Direct {
  Real value = 0;
  std::vector<Real> f;
  double value_bound = 0;       ///< on |model log p − value|
  std::vector<double> f_bound;  ///< on |model f_i − f_i|
  bool ok = false;
};

/// The model's double evaluation, first order (Higham, "Accuracy and Stability of Numerical
/// Algorithms", 2nd ed.; u = ε/2):
///  - its kernel entry K̂_ij = K_ij (1 + δ), |δ| ≤ u (6 |a_ij| + 6), a_ij = −(x_i − x_j)²/(2ρ²):
///    ρ = e^{log ρ} and α = e^{log α} each within u, d², ρ², the quotient and the product each one
///    rounding (4u|a| and 2u|a| from ρ in the exponent), then exp, α², and the product;
///  - its factor is the exact one of K̂ + ΔK, |ΔK| ≤ γ_{N+1} |L̂||L̂ᵀ| (Theorem 10.3; |L||Lᵀ|
///    from the exact L to first order);
///  - f_i = Σ_j l_ij f̃_j within γ_{i+1} Σ_j |l_ij f̃_j| (§3.1), carried to log p by
///    g_i = k_i − e^{f_i};
///  - the sums of the terms of log p within γ_{2N+8} Σ|terms|, each term within a few u.
/// A change E of K moves log p by Σ S_ij E_ij and f_i by Σ S⁽ⁱ⁾_kl E_kl (kernel_sensitivity with
/// g = k − e^f, and with g = e_i). The bound is twice the sum of these first-order terms (for the
/// second order, ≪ at these perturbations), plus the transcription's own error, the same bound
/// at long double's ε ≈ 1.1e-19 (1/2000 of double's).
Direct direct_log_density(const Counts& c, const std::vector<double>& u) {
  const int n = c.N;
  const Real rho = std::exp(Real(u[0])), alpha = std::exp(Real(u[1]));
  const Real half_log_two_pi = 0.5L * std::log(2 * Real(M_PI));
  Matrix k(n, std::vector<Real>(n)), exponent = k;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const Real d = Real(c.x[i]) - Real(c.x[j]);
      exponent[i][j] = -d * d / (2 * rho * rho);
      k[i][j] = alpha * alpha * std::exp(exponent[i][j]) + (i == j ? Real(1e-10) : 0);
    }
  Direct out;
  const Matrix l = cholesky(k);
  if (l.empty()) return out;
  out.ok = true;
  std::vector<Real> f_tilde(n), f(n, 0), g(n);
  Real sum_sq = 0, likelihood = 0, magnitude = 0;
  std::vector<double> f_rounding(n, 0);
  for (int i = 0; i < n; ++i) f_tilde[i] = u[2 + i];
  for (int i = 0; i < n; ++i) {
    Real abs_sum = 0;
    for (int j = 0; j <= i; ++j) {
      f[i] += l[i][j] * f_tilde[j];
      abs_sum += std::fabs(l[i][j] * f_tilde[j]);
    }
    f_rounding[i] = double((i + 1) * kEps / 2 * abs_sum);
    g[i] = c.k[i] - std::exp(f[i]);
    likelihood += c.k[i] * f[i] - std::exp(f[i]) - std::lgamma(Real(c.k[i]) + 1);
    magnitude += std::fabs(c.k[i] * f[i]) + std::exp(f[i]) + std::lgamma(Real(c.k[i]) + 1);
    sum_sq += f_tilde[i] * f_tilde[i];
  }
  const Real log_rho = u[0], log_alpha = u[1];
  const Real rho_prior = 25 * std::log(Real(4)) - std::lgamma(Real(25)) + 24 * log_rho - 4 * rho;
  const Real alpha_prior =
      std::log(Real(2)) - half_log_two_pi - std::log(Real(2)) - alpha * alpha / 8;
  const Real f_tilde_prior = -n * half_log_two_pi - sum_sq / 2;
  out.value = rho_prior + alpha_prior + f_tilde_prior + likelihood + log_rho + log_alpha;
  out.f = f;
  magnitude += 25 * std::log(Real(4)) + std::lgamma(Real(25)) + 24 * std::fabs(log_rho) + 4 * rho +
               3 * half_log_two_pi + alpha * alpha / 8 + n * half_log_two_pi + sum_sq / 2 +
               std::fabs(log_rho) + std::fabs(log_alpha);

  // |E_ij|, the change of K that the model's rounding amounts to.
  const double u_double = kEps / 2, gamma = (n + 1) * u_double / (1 - (n + 1) * u_double);
  Matrix e(n, std::vector<Real>(n, 0));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      Real abs_llt = 0;
      for (int m = 0; m <= j; ++m) abs_llt += std::fabs(l[i][m] * l[j][m]);
      e[i][j] = u_double * (6 * std::fabs(exponent[i][j]) + 6) * k[i][j] + gamma * abs_llt;
    }
  const Matrix l_inv = lower_inverse(l);
  auto carried = [&](const Matrix& s) {
    Real total = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) total += std::fabs(s[i][j]) * e[i][j];
    return total;
  };
  Real bound = carried(kernel_sensitivity(l, l_inv, g, f_tilde));
  for (int i = 0; i < n; ++i) bound += std::fabs(g[i]) * f_rounding[i];
  bound += (2 * n + 8) * u_double * magnitude;
  out.value_bound = double(2 * bound * (1 + 1 / 2000.0L));
  for (int i = 0; i < n; ++i) {
    std::vector<Real> unit(n, 0);
    unit[i] = 1;
    const Real fb = carried(kernel_sensitivity(l, l_inv, unit, f_tilde)) + f_rounding[i];
    out.f_bound.push_back(double(2 * fb * (1 + 1 / 2000.0L)));
  }
  return out;
}

GpPoisRegrData<double> gp_data() {
  const Counts c = posteriordb_data_as<Counts>(kPosterior);
  return GpPoisRegrData<double>::from_arrays(c.N, c.x, c.k);
}

static_assert(port_traits<GpPoisRegr, GpPoisRegrData>(), "gp_pois_regr is a posteriordb port");

// ---------------------------------------------------------------------------------------------

TEST(ModelsLogDensity, GpPoisRegrMatchesStansModelBlock) {
  const Counts c = posteriordb_data_as<Counts>(kPosterior);
  const auto data = gp_data();
  const auto model = data.host_model();
  ASSERT_EQ(model.dim(), c.N + 2);
  double widest = 0;
  const auto points = counted_points(kPoints, [&](int p) { return gp_point(c.N, p); });
  expect_matches_transcription(model, points, [&](const auto& u) {
    const Direct direct = direct_log_density(c, u);
    widest = std::max(widest, direct.value_bound / std::fabs(double(direct.value)));
    return Transcribed{double(direct.value), direct.value_bound, direct.ok};
  });
  std::printf("    widest bound / |log p| = %.2g\n", widest);
}

TEST(ModelsQuantities, GpPoisRegrRecordsReferenceVariablesInOrder) {
  const Counts c = posteriordb_data_as<Counts>(kPosterior);
  const auto data = gp_data();
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), posteriordb_reference_variables(kPosterior));
  double worst = 0;
  for (int p = 0; p < kPoints; ++p) {
    const auto u = gp_point(c.N, p);
    const Direct direct = direct_log_density(c, u);
    const auto q = recorded_quantities(model, u);
    ASSERT_EQ(q.size(), static_cast<std::size_t>(c.N + 2));
    EXPECT_EQ(q[0], std::exp(u[0]));
    EXPECT_EQ(q[1], std::exp(u[1]));
    for (int i = 0; i < c.N; ++i) {
      EXPECT_NEAR(q[2 + i], double(direct.f[i]), direct.f_bound[i]) << "point " << p << ", f " << i;
      worst = std::max(worst, std::fabs(q[2 + i] - double(direct.f[i])) / direct.f_bound[i]);
    }
  }
  std::printf("    worst |model f - direct f| / bound = %.3g\n", worst);
}

TEST(ModelsGradient, GpPoisRegrDualsAgreeWithFiniteDifferences) {
  const Counts c = posteriordb_data_as<Counts>(kPosterior);
  const auto data = gp_data();
  const auto points = counted_points(kPoints, [&](int p) { return gp_point(c.N, p); });
  // The duals' value is the plain evaluation's up to the same rounding (Dual's division
  // multiplies by the reciprocal): within twice the bound; δf, one evaluation's deviation from
  // the exact log p, is the bound.
  expect_dual_gradient_agrees(data.host_model(), points, [&](const auto& u) {
    const Direct direct = direct_log_density(c, u);
    return DualBounds{2 * direct.value_bound, direct.value_bound};
  });
}

TEST(ModelsLogDensity, GpPoisRegrFailedFactorisationIsMinusInfinity) {
  // α = e^{400} overflows: K is infinite, its first pivot not finite, as Stan's
  // cholesky_decompose would reject. The duals return −∞ too, and the quantities' f are NaN.
  const Counts c = posteriordb_data_as<Counts>(kPosterior);
  const auto data = gp_data();
  const auto model = data.host_model();
  std::vector<double> u = gp_point(c.N, 0);
  u[1] = 400;
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(model.log_density(u), -inf);
  std::vector<double> g(u.size());
  EXPECT_EQ(myriad::log_density_and_gradient(model, u, g), -inf);
  const auto q = recorded_quantities(model, u);
  for (int i = 0; i < c.N; ++i) EXPECT_TRUE(std::isnan(q[2 + i])) << i;
}

TEST(ModelsFloat, GpPoisRegrFloatCompiles) {
  // Float is instantiated (the header comment: its factor loses its accuracy near the posterior,
  // so a double model, like the library's instance); at a short length-scale it is finite.
  const Counts c = posteriordb_data_as<Counts>(kPosterior);
  const auto data = GpPoisRegrData<float>::from_arrays(c.N, c.x, c.k);
  const auto model = data.host_model();
  std::vector<float> u(static_cast<std::size_t>(c.N + 2), 0.0f);
  u[0] = -1.0f;  // ρ = e^{−1}: K ≈ α² I, well conditioned in float too
  EXPECT_TRUE(std::isfinite(model.log_density(u)));
}

TEST(ModelsGpPoisRegrData, FromArraysValidatesStansDataBlock) {
  const std::vector<double> x = {-1.0, 0.0, 2.0};
  const std::vector<int> k = {3, 0, 7};
  EXPECT_EQ(GpPoisRegrData<double>::from_arrays(3, x, k).host_model().dim(), 5);
  const int cap = GpPoisRegr<double>::kMaxPoints;
  const std::vector<double> x_cap(cap, 1.0), x_over(cap + 1, 1.0);
  const std::vector<int> k_cap(cap, 1), k_over(cap + 1, 1);
  EXPECT_EQ(GpPoisRegrData<double>::from_arrays(cap, x_cap, k_cap).N(), cap);
  // from_arrays(N, x, k) as a call to expect to throw.
  const auto make = [](int N, std::vector<double> xs, std::vector<int> ks) {
    return [=] { GpPoisRegrData<double>::from_arrays(N, xs, ks); };
  };
  expect_invalid_argument(make(0, {}, {}),
                          "gp_pois_regr: N must be in 1..16 (kMaxPoints, the per-chain Cholesky "
                          "scratch), got 0");
  expect_invalid_argument(make(cap + 1, x_over, k_over), "gp_pois_regr: N must be in 1..16");
  expect_invalid_argument(make(4, x, {3, 0, 7, 1}),
                          "gp_pois_regr: x has 3 entries, expected N = 4");
  expect_invalid_argument(make(3, x, {3, 0}), "gp_pois_regr: k has 2 entries, expected N = 3");
  expect_invalid_argument(make(3, {-1.0, NAN, 2.0}, k), "gp_pois_regr: x[2] is not finite");
  expect_invalid_argument(make(3, x, {3, 0, -1}),
                          "gp_pois_regr: k[3] must be a non-negative integer, got -1");
}

}  // namespace
