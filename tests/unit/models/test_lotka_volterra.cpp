// Tests of the Lotka–Volterra generators (include/myriad/models/lotka_volterra.hpp,
// lotka_volterra_dynamics.hpp, lotka_volterra_problem.hpp, lotka_volterra_summaries.hpp),
// constrained-hmc.md §15.2: the analytic Jacobians of the full data and of the summaries against
// forward-mode duals and central finite differences (also at initial points with prior
// parameters), the prior gradient against duals, the triangular-plus-low-rank structured
// Jacobian against the dense one, initialize() on the manifold for 100 seeds, the data, the
// summaries' definitions and Gauss–Newton, the forward substitution, and the log-determinant
// gradient's vector–Jacobian product (add_jacobian_vjp) against dual passes and against central
// differences of ½ log|J Jᵀ|.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "common/generator_checks.hpp"
#include "common/generator_problems.hpp"
#include "common/rounding_tape.hpp"
#include "common/third_derivative.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/generator_autodiff.hpp"
#include "myriad/models/lotka_volterra_problem.hpp"
#include "myriad/models/noisy_generator.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;
using myriad::Dual;
using myriad::GramStructure;
using myriad::RandomStream;

constexpr int kPoints = 4;

// Trivially copyable per-chain structs (they are passed to kernels by value), whose Gram
// matrices J Jᵀ the sampler factorises as triangular plus low rank (full data) and dense (the
// summaries), each with add_jacobian_vjp.
static_assert(std::is_trivially_copyable<LotkaVolterra>::value, "");
static_assert(std::is_trivially_copyable<LotkaVolterraSummaries>::value, "");
static_assert(myriad::generator_gram_structure<LotkaVolterra> ==
                  GramStructure::triangular_plus_low_rank,
              "");
static_assert(myriad::generator_gram_structure<LotkaVolterraSummaries> == GramStructure::dense, "");
static_assert(myriad::generator_has_jacobian_vjp<LotkaVolterra>, "");
static_assert(myriad::generator_has_jacobian_vjp<LotkaVolterraSummaries>, "");

// ---------------------------------------------------------------------------------------------
// Analytic Jacobian = duals = finite differences; log_prior_gradient = duals.

TEST(GeneratorsJacobian, LotkaVolterra) {
  check_jacobians(lotka_volterra().host_model(), lotka_volterra_point);
}

TEST(GeneratorsJacobian, LotkaVolterraSummaries) {
  check_jacobians(lotka_volterra().host_summaries_model(), lotka_volterra_point);
}

TEST(GeneratorsJacobian, AtInitialPointsWithPriorParameters) {
  // initialize() draws u₁ from the prior; the Jacobians there reach ~1e30 (the dynamics amplify
  // by |∂x_s/∂x_{s−1}| ≫ 1 per step) and must still agree with duals row by row.
  JacobianAgreement agreement;
  const auto& problem = lotka_volterra();
  const auto full = problem.host_model();
  const auto summaries = problem.host_summaries_model();
  for (int seed = 0; seed < 3; ++seed) {
    std::vector<double> u(full.input_dim());
    ASSERT_TRUE(full.initialize(RandomStream(seed, 0), 0, u));
    expect_consistent_jacobian(full, u, agreement, FdInputs{false});
    ASSERT_TRUE(summaries.initialize(RandomStream(seed, 0), 0, u));
    expect_consistent_jacobian(summaries, u, agreement, FdInputs{false});
  }
  std::printf("    max |J - dual|/row scale = %.2e\n", agreement.dual_rel);
}

// ---------------------------------------------------------------------------------------------
// Structured Jacobian: B and T equal the blocks of the dense Jacobian.

TEST(GeneratorsStructure, LotkaVolterraTriangularPlusLowRank) {
  const auto g = lotka_volterra().host_model();
  const int M = g.output_dim(), N = g.input_dim(), K = g.num_parameters();
  ASSERT_EQ(K, 4);
  ASSERT_EQ(N, 104);
  ASSERT_EQ(M, 100);
  const double diagonal[2] = {g.dynamics.noise_scale_r(), g.dynamics.noise_scale_f()};
  // Points near the data's parameters, and initial points (u₁ from the prior itself).
  std::vector<std::vector<double>> points;
  for (int p = 0; p < kPoints; ++p) points.push_back(lotka_volterra_point(p));
  for (int seed = 0; seed < kPoints; ++seed) {
    std::vector<double> u(N);
    ASSERT_TRUE(g.initialize(RandomStream(seed, 0), 0, u));
    points.push_back(u);
  }
  for (std::size_t p = 0; p < points.size(); ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    const auto& u = points[p];
    const auto J = dense_jacobian(g, u);
    std::vector<double> b(M * K, NAN), t(M * M, NAN);
    auto B = myriad::dense_matrix(b.data(), M, K);
    auto T = myriad::dense_matrix(t.data(), M, M);
    g.structured_jacobian(u, B, T);
    for (int m = 0; m < M; ++m) {
      for (int k = 0; k < K; ++k) EXPECT_EQ(b[m * K + k], J[m * N + k]) << m << ", " << k;
      for (int j = 0; j < M; ++j) {
        if (j <= m) {
          EXPECT_EQ(t[m * M + j], J[m * N + K + j]) << m << ", " << j;
        } else {
          EXPECT_TRUE(std::isnan(t[m * M + j])) << "written above the diagonal: " << m << ", " << j;
          EXPECT_EQ(J[m * N + K + j], 0.0) << m << ", " << j;
        }
      }
      EXPECT_EQ(t[m * M + m], diagonal[m % 2]) << m;
      EXPECT_GT(t[m * M + m], 0) << m;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// initialize(): a point on the manifold for 100 seeds.

TEST(GeneratorsInitialize, LotkaVolterra) { check_initialize(lotka_volterra().host_model()); }

TEST(GeneratorsInitialize, LotkaVolterraSummaries) {
  check_initialize(lotka_volterra().host_summaries_model());
}

// ---------------------------------------------------------------------------------------------
// Data, summaries, Gauss–Newton and forward substitution.

TEST(GeneratorsData, LotkaVolterraSeriesIsPlausible) {
  // At z = (0.4, 0.005, 0.05, 0.001) the populations oscillate and stay positive.
  const auto& x = lotka_volterra().observations();
  for (std::size_t m = 0; m < x.size(); ++m) EXPECT_GT(x[m], 0) << m;
}

TEST(GeneratorsLotkaVolterra, SummariesFollowTheirDefinitions) {
  const auto& problem = lotka_volterra();
  const auto& x = problem.observations();
  const int S = 50;
  double mean[2] = {0, 0};
  for (int s = 0; s < S; ++s)
    for (int c = 0; c < 2; ++c) mean[c] += x[2 * s + c] / S;
  double ss[2] = {0, 0}, lag[2][2] = {{0, 0}, {0, 0}}, cross = 0;
  for (int s = 0; s < S; ++s) {
    for (int c = 0; c < 2; ++c) {
      const double d = x[2 * s + c] - mean[c];
      ss[c] += d * d;
      for (int k = 1; k <= 2; ++k)
        if (s + k < S) lag[c][k - 1] += d * (x[2 * (s + k) + c] - mean[c]);
    }
    cross += (x[2 * s] - mean[0]) * (x[2 * s + 1] - mean[1]);
  }
  const double expected[9] = {mean[0],
                              mean[1],
                              std::log(ss[0] / S),
                              std::log(ss[1] / S),
                              lag[0][0] / ss[0],
                              lag[0][1] / ss[0],
                              lag[1][0] / ss[1],
                              lag[1][1] / ss[1],
                              cross / std::sqrt(ss[0] * ss[1])};
  const auto& summaries = problem.summaries();
  for (int m = 0; m < 9; ++m) EXPECT_NEAR(summaries[m], expected[m], 1e-12) << m;
  // Generated from the true inputs, the summary model reproduces them bit for bit.
  const auto g = problem.host_summaries_model();
  const auto generated = generate(g, problem.true_inputs());
  for (int m = 0; m < 9; ++m) EXPECT_EQ(generated[m], summaries[m]) << m;
}

TEST(GeneratorsLotkaVolterra, GaussNewtonReturnsToTheSummaryManifold) {
  // From the exact point u* perturbed in u₂, refine_noise (minimum-norm damped Gauss–Newton
  // with the 9 × 9 Cholesky) converges to ‖g(u) − x̄‖∞ < 1e-10 without touching u₁.
  const auto& problem = lotka_volterra();
  const auto g = problem.host_summaries_model();
  for (int p = 0; p < 5; ++p) {
    auto u = problem.true_inputs();
    const auto xi = standard_normals(kGeneratorPointSeed, p, 100);
    for (int j = 0; j < 100; ++j) u[4 + j] += 0.2 * xi[j];
    const double before = residual_norm(g, u);
    const auto u1 = std::vector<double>(u.begin(), u.begin() + 4);
    ASSERT_TRUE(g.refine_noise(u, 50)) << "point " << p << ", start residual " << before;
    EXPECT_LT(residual_norm(g, u), 1e-10);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(u[k], u1[k]);
  }
}

TEST(GeneratorsLotkaVolterra, ForwardSubstitutionReproducesTheSeries) {
  // §12.2: with u₁ fixed, each Euler step is affine in its own noise.
  const auto& problem = lotka_volterra();
  const auto g = problem.host_model();
  auto u = problem.true_inputs();
  u[0] += 0.3;  // other parameters: different noise, same series
  ASSERT_TRUE(g.dynamics.forward_substitute(problem.observations().data(), u));
  EXPECT_LT(residual_norm(g, u), 1e-12);
  // At the true parameters the substituted noise is the data's noise.
  auto w = problem.true_inputs();
  ASSERT_TRUE(g.dynamics.forward_substitute(problem.observations().data(), w));
  for (int j = 4; j < 104; ++j) EXPECT_NEAR(w[j], problem.true_inputs()[j], 1e-10) << j;
}

// ---------------------------------------------------------------------------------------------
// The log-determinant gradient's vector–Jacobian product, add_jacobian_vjp (model/generator.hpp):
// Lotka–Volterra's reverse sweep against the library's dual passes and against central
// differences of ½ log|J Jᵀ|.

/// A generator without add_jacobian_vjp: every other member forwarded, so that constrained HMC
/// falls back to dual passes (N of structured_jacobian for Lotka–Volterra, of jacobian for the
/// dense forms).
template <class G>
struct WithoutJacobianVjp {
  using value_type = double;
  static constexpr myriad::GramStructure gram_structure = myriad::generator_gram_structure<G>;
  G inner;
  int input_dim() const { return inner.input_dim(); }
  int output_dim() const { return inner.output_dim(); }
  int num_parameters() const { return inner.num_parameters(); }
  double observed(int m) const { return inner.observed(m); }
  template <class Vec, class Out>
  void generate(const Vec& u, Out& x) const {
    inner.generate(u, x);
  }
  template <class Vec>
  auto log_prior(const Vec& u) const {
    return inner.log_prior(u);
  }
  template <class Vec, class Grad>
  double log_prior_gradient(const Vec& u, Grad& g) const {
    return inner.log_prior_gradient(u, g);
  }
  template <class Vec, class Jac>
  void jacobian(const Vec& u, Jac& J) const {
    inner.jacobian(u, J);
  }
  template <class Vec, class Params, class Noise>
  void structured_jacobian(const Vec& u, Params& B, Noise& T) const {
    inner.structured_jacobian(u, B, T);
  }
};
static_assert(!myriad::generator_has_jacobian_vjp<WithoutJacobianVjp<LotkaVolterra>>, "");
static_assert(myriad::generator_gram_structure<WithoutJacobianVjp<LotkaVolterra>> ==
                  myriad::GramStructure::triangular_plus_low_rank,
              "");

/// Points for the log-determinant gradient: near the data's parameters (off the manifold) and
/// initial points (on it).
std::vector<std::vector<double>> log_det_gradient_points() {
  std::vector<std::vector<double>> points;
  const auto g = lotka_volterra().host_model();
  for (int p = 0; p < 2; ++p) points.push_back(lotka_volterra_point(p));
  for (int seed = 0; seed < 2; ++seed) {
    std::vector<double> u(g.input_dim());
    EXPECT_TRUE(g.initialize(RandomStream(seed, 0), 0, u));
    points.push_back(u);
  }
  return points;
}

/// add_jacobian_vjp's v against v_i = Σ_mn C_mn ∂J_mn/∂u_i with ∂J/∂u_i from jacobian() on duals
/// seeded along e_i, summed over the entries n < columns(m) of each row m, within 1e-10 of
/// Σ_mn |C_mn ∂J_mn/∂u_i| (the tests below say why); `worst` becomes at least the largest
/// |v_i − Σ| / that sum.
template <class G, class Columns>
void expect_vjp_matches_dual_passes(const G& g, const std::vector<double>& u,
                                    const std::vector<double>& C, const std::vector<double>& v,
                                    Columns columns, double& worst) {
  const int M = g.output_dim(), N = g.input_dim();
  std::vector<Dual<double>> dual_storage(static_cast<std::size_t>(M) * N, Dual<double>(NAN));
  auto dual_j = myriad::dense_matrix(dual_storage.data(), M, N);
  for (int i = 0; i < N; ++i) {
    g.jacobian(myriad::SeededDualView<std::vector<double>>{u, i}, dual_j);
    double expected = 0, scale = 0;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < columns(m); ++n) {
        expected += C[m * N + n] * dual_j(m, n).eps;
        scale += std::fabs(C[m * N + n] * dual_j(m, n).eps);
      }
    ASSERT_TRUE(std::isfinite(v[i])) << "input " << i;
    EXPECT_LE(std::fabs(v[i] - expected), 1e-10 * scale)
        << "input " << i << ": " << v[i] << ", duals " << expected << ", scale " << scale;
    worst = std::max(worst, std::fabs(v[i] - expected) / scale);
  }
}

TEST(GeneratorsJacobianVjp, LotkaVolterraMatchesDualPassesForAnyCotangent) {
  // v_i = Σ_mn C_mn ∂J_mn/∂u_i for a random C against the same sum with ∂J/∂u_i from jacobian()
  // on duals seeded along e_i. The entries of J and C above T's diagonal are NaN: they must not
  // be read. Both sides sum the same terms, each second derivative by a different recursion, so
  // they agree to rounding relative to Σ_mn |C_mn ∂J_mn/∂u_i|; the derivatives run through
  // S = 50 steps of the dynamics (a few operations each), whose cancellation that sum does not
  // see (as for J, whose duals agree to 1e-12 of the row scale): 1e-10 ≈ 5·10⁵ u allows 10⁴
  // operations' worth of growth.
  const auto g = lotka_volterra().host_model();
  const int M = g.output_dim(), N = g.input_dim(), K = g.num_parameters();
  const auto points = log_det_gradient_points();
  double worst = 0;
  for (std::size_t p = 0; p < points.size(); ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    const auto& u = points[p];
    auto J = dense_jacobian(g, u);
    auto C = standard_normals(kGeneratorPointSeed, static_cast<int>(p) + 300, M * N);
    for (int m = 0; m < M; ++m)
      for (int j = m + 1; j < M; ++j) J[m * N + K + j] = C[m * N + K + j] = NAN;
    std::vector<double> v(N, 0.0), work(g.jacobian_vjp_workspace(), NAN);
    const auto j_view = myriad::dense_matrix(J.data(), M, N).as_const();
    const auto c_view = myriad::dense_matrix(C.data(), M, N).as_const();
    g.add_jacobian_vjp(u, j_view, c_view, v, work);
    ASSERT_NO_FATAL_FAILURE(expect_vjp_matches_dual_passes(
        g, u, C, v, [&](int m) { return K + m + 1; }, worst));
  }
  std::printf("    max |vjp - duals| / sum |C dJ| = %.2e\n", worst);
}

TEST(GeneratorsJacobianVjp, LotkaVolterraSummariesMatchesDualPassesForAnyCotangent) {
  // As for the full data, with a random dense 9 × N cotangent and ∂J/∂u_i from jacobian() on
  // duals (N tangent sweeps each); the same bound, relative to Σ_mn |C_mn ∂J_mn/∂u_i|.
  const auto g = lotka_volterra().host_summaries_model();
  const int M = g.output_dim(), N = g.input_dim();
  const auto points = log_det_gradient_points();
  double worst = 0;
  for (std::size_t p = 0; p < points.size(); ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    const auto& u = points[p];
    const std::vector<double> J(static_cast<std::size_t>(M) * N, NAN);  // not read
    const auto C = standard_normals(kGeneratorPointSeed, static_cast<int>(p) + 500, M * N);
    std::vector<double> v(N, 0.0), work(g.jacobian_vjp_workspace(), NAN);
    g.add_jacobian_vjp(u, myriad::dense_matrix(J.data(), M, N),
                       myriad::dense_matrix(C.data(), M, N), v, work);
    ASSERT_NO_FATAL_FAILURE(expect_vjp_matches_dual_passes(
        g, u, C, v, [&](int) { return N; }, worst));
  }
  std::printf("    max |vjp - duals| / sum |C dJ| = %.2e\n", worst);
}

/// `half_log_det` + Σ_a log L_aa, added in the order of a, for the Cholesky factor L of the n × n
/// Gram matrix G whose entry G_ac (c ≤ a) is gram(a, c), in any scalar S: ½ log|G| when
/// half_log_det is 0.
template <class S, class Gram>
S add_half_log_det_by_cholesky(S half_log_det, int n, const Gram& gram) {
  std::vector<S> l(static_cast<std::size_t>(n) * n, S(0));
  for (int a = 0; a < n; ++a)
    for (int c = 0; c <= a; ++c) {
      S sum = gram(a, c);
      for (int e = 0; e < c; ++e) sum = sum - l[a * n + e] * l[c * n + e];
      l[a * n + c] = a == c ? sqrt(sum) : sum / l[c * n + c];
    }
  for (int a = 0; a < n; ++a) half_log_det = half_log_det + log(l[a * n + a]);
  return half_log_det;
}

/// ½ log|J Jᵀ| of Lotka–Volterra in any scalar, independently of the library's factorisations:
/// J = [B T] from structured_jacobian, W = T⁻¹B by forward substitution, and
/// ½ log|J Jᵀ| = Σ log T_ii + ½ log|I + WᵀW| (matrix determinant lemma) with a K × K Cholesky.
template <class Vec>
auto lotka_volterra_half_log_det(const LotkaVolterra& g, const Vec& u) {
  using S = std::decay_t<decltype(u[0])>;
  const int M = g.output_dim(), K = g.num_parameters();
  std::vector<S> b(static_cast<std::size_t>(M) * K), t(static_cast<std::size_t>(M) * M, S(0));
  auto B = myriad::dense_matrix(b.data(), M, K);
  auto T = myriad::dense_matrix(t.data(), M, M);
  g.structured_jacobian(u, B, T);
  S half_log_det = S(0);
  for (int i = 0; i < M; ++i) {
    half_log_det = half_log_det + log(T(i, i));
    for (int a = 0; a < K; ++a) {
      S sum = B(i, a);
      for (int j = 0; j < i; ++j) sum = sum - T(i, j) * B(j, a);
      B(i, a) = sum / T(i, i);  // B now holds W
    }
  }
  return add_half_log_det_by_cholesky(half_log_det, K, [&](int a, int c) {  // I + WᵀW
    S sum = a == c ? S(1) : S(0);
    for (int i = 0; i < M; ++i) sum = sum + B(i, a) * B(i, c);
    return sum;
  });
}

/// ½ log|J Jᵀ| of a dense generator in any scalar: J from jacobian(), G = J Jᵀ and its Cholesky
/// factor L, Σ log L_ii (the summaries' M = 9).
template <class Vec>
auto lotka_volterra_half_log_det(const LotkaVolterraSummaries& g, const Vec& u) {
  using S = std::decay_t<decltype(u[0])>;
  const int M = g.output_dim(), N = g.input_dim();
  std::vector<S> j(static_cast<std::size_t>(M) * N);
  auto J = myriad::dense_matrix(j.data(), M, N);
  g.jacobian(u, J);
  return add_half_log_det_by_cholesky(S(0), M, [&](int a, int c) {  // J Jᵀ
    S sum = S(0);
    for (int n = 0; n < N; ++n) sum = sum + J(a, n) * J(c, n);
    return sum;
  });
}

/// The value of ½ log|J Jᵀ| at u and a first-order bound on its rounding error (the tape's
/// reverse sweep, as in generate_with_rounding_bound; the tape is in topological order).
template <class G>
double half_log_det_with_rounding_bound(const G& g, const std::vector<double>& u, double& bound) {
  tape().clear();
  tape().reserve(1 << 20);
  const std::vector<Taped> input(u.begin(), u.end());
  const Taped y = lotka_volterra_half_log_det(g, input);
  const auto& nodes = tape();
  std::vector<double> adjoint(nodes.size(), 0.0);
  bound = 0;
  if (y.id >= 0) adjoint[y.id] = 1;
  for (int i = y.id; i >= 0; --i) {
    if (adjoint[i] == 0) continue;
    bound += std::fabs(adjoint[i]) * nodes[i].rounding;
    for (int k = 0; k < 2; ++k)
      if (nodes[i].parent[k] >= 0) adjoint[nodes[i].parent[k]] += adjoint[i] * nodes[i].partial[k];
  }
  return y.v;
}

/// One chain's constrained-HMC scratch on the host.
template <class G>
struct HostChain {
  explicit HostChain(const G& g) : layout(myriad::chmc_layout<G, double>(g)) {
    u.assign(layout.n, 0.0);
    grad.assign(layout.n, 0.0);
    work.assign(layout.size(), NAN);
    dual.assign(layout.dual_size(), Dual<double>(NAN));
    nested.assign(layout.nested_size(), Dual<Dual<double>>(Dual<double>(NAN)));
  }
  /// φ(u) and ∇φ(u) by ChmcMachine::evaluate_current.
  void evaluate(const G& g, const std::vector<double>& at) {
    u = at;
    const myriad::ChmcChain<double> view{
        {u.data(), 1, layout.n}, {grad.data(), 1, layout.n}, &potential,
        {work.data(), 1},        {dual.data(), 1},           {nested.data(), 1}};
    myriad::ChmcMachine<G, double> machine(g, view);
    ASSERT_EQ(machine.evaluate_current(), myriad::kStatusOk);
  }
  myriad::ChmcLayout layout;
  std::vector<double> u, grad, work;
  std::vector<Dual<double>> dual;
  std::vector<Dual<Dual<double>>> nested;
  double potential = 0;
};

/// ∇φ = u + ∇ ½ log|J Jᵀ| from constrained HMC's evaluate_current (C = G⁻¹J from the
/// generator's factorisation, then add_jacobian_vjp) against central differences of the
/// independent ½ log|J Jᵀ| above along the inputs `fd_inputs` visits, h = 1e-5·max(1, |u_n|),
/// within the bound of expect_consistent_jacobian: 4 (h² |f'''|/6 + (δ₊ + δ₋)/(2h)), f''' by
/// triple duals, δ± the first-order rounding bounds of the two evaluations. φ itself against
/// −log ρ + ½ log|J Jᵀ|.
template <class G>
void expect_log_det_gradient_matches_finite_differences(const G& g, FdInputs fd_inputs) {
  const int N = g.input_dim();
  HostChain<G> chain(g);
  double worst_ratio = 0, largest_tol = 0, largest_gradient = 0;
  int checked = 0;
  for (const auto& u : log_det_gradient_points()) {
    chain.evaluate(g, u);
    double bound = 0;
    const double half_log_det = half_log_det_with_rounding_bound(g, u, bound);
    EXPECT_NEAR(chain.potential, -g.log_prior(u) + half_log_det,
                4 * bound + 1e-12 * std::fabs(chain.potential));
    std::vector<double> up = u, down = u;
    for (int n = 0; n < N; ++n) {
      if (!fd_inputs.visits(n)) continue;
      const double h = 1e-5 * std::max(1.0, std::fabs(u[n]));
      up[n] = u[n] + h;
      down[n] = u[n] - h;
      const double step = up[n] - down[n];
      double bound_up = 0, bound_down = 0;
      const double f_up = half_log_det_with_rounding_bound(g, up, bound_up);
      const double f_down = half_log_det_with_rounding_bound(g, down, bound_down);
      up[n] = down[n] = u[n];
      const double f3 =
          lotka_volterra_half_log_det(g, myriad::test::TripleSeededView<std::vector<double>>{u, n})
              .eps.eps.eps;
      const double fd = (f_up - f_down) / step;
      const double tol =
          4 * (0.25 * step * step * std::fabs(f3) / 6 + (bound_up + bound_down) / step);
      const double gradient = chain.grad[n] - u[n];  // ∇ ½ log|J Jᵀ|
      EXPECT_LE(std::fabs(gradient - fd), tol)
          << "input " << n << ": " << gradient << ", fd " << fd << ", f''' " << f3;
      worst_ratio = std::max(worst_ratio, std::fabs(gradient - fd) / tol);
      largest_tol = std::max(largest_tol, tol);
      largest_gradient = std::max(largest_gradient, std::fabs(gradient));
      ++checked;
    }
  }
  std::printf(
      "    worst |grad - fd| / bound = %.3f; largest bound %.2e (largest |grad| %.2e; %d "
      "entries)\n",
      worst_ratio, largest_tol, largest_gradient, checked);
}

TEST(GeneratorsJacobianVjp, LotkaVolterraLogDetGradientMatchesFiniteDifferences) {
  expect_log_det_gradient_matches_finite_differences(lotka_volterra().host_model(), FdInputs{});
}

TEST(GeneratorsJacobianVjp, LotkaVolterraSummariesLogDetGradientMatchesFiniteDifferences) {
  // All of u₁ and every 3rd noise input: each evaluation of J costs N tangent sweeps (on the tape
  // and on triple duals). The rounding bound of the summaries' ½ log|J Jᵀ| is coarse (sums of
  // 50-step tangents that cancel), so this check catches wrong terms of the size of the gradient;
  // the comparison with dual passes above is the sharp one.
  expect_log_det_gradient_matches_finite_differences(lotka_volterra().host_summaries_model(),
                                                     FdInputs{true, 4, 3});
}

/// φ and ∇φ of two generators at the same points, to rounding relative to ‖∇φ‖∞ (the
/// per-entry check against duals is above). `extra` noise inputs (Noisy<…>) are appended.
template <class A, class B>
void expect_same_potential_and_gradient(const A& a, const B& b, int extra) {
  HostChain<A> x(a);
  HostChain<B> y(b);
  int p = 0;
  for (const auto& u : log_det_gradient_points()) {
    SCOPED_TRACE("point " + std::to_string(p));
    auto v = u;
    const auto n = standard_normals(kGeneratorPointSeed, p + 400, extra);
    v.insert(v.end(), n.begin(), n.end());
    x.evaluate(a, v);
    y.evaluate(b, v);
    double norm = 0;
    for (double g : y.grad) norm = std::max(norm, std::fabs(g));
    EXPECT_NEAR(x.potential, y.potential, 1e-12 * std::fabs(y.potential));
    for (std::size_t i = 0; i < y.grad.size(); ++i)
      EXPECT_NEAR(x.grad[i], y.grad[i], 1e-10 * norm) << "input " << i;
    ++p;
  }
}

TEST(GeneratorsJacobianVjp, ChmcGradientAgreesWithTheDualPath) {
  // The same φ and ∇φ with and without add_jacobian_vjp, for the structured factor
  // (LotkaVolterra) and the dense one (the summaries, and both under Noisy<…>, C = G⁻¹J by
  // dense solves). Without the member the chain keeps ∂J on duals (M × N of them); with it, the
  // generator's scratch instead: 4S + 2 (full data), 26S + 2 (summaries).
  const auto full = lotka_volterra().host_model();
  const auto summaries = lotka_volterra().host_summaries_model();
  const WithoutJacobianVjp<LotkaVolterra> full_by_duals{full};
  const WithoutJacobianVjp<LotkaVolterraSummaries> summaries_by_duals{summaries};
  const int M = full.output_dim(), N = full.input_dim();
  const auto full_layout = myriad::chmc_layout<LotkaVolterra, double>(full);
  const auto by_duals_layout =
      myriad::chmc_layout<WithoutJacobianVjp<LotkaVolterra>, double>(full_by_duals);
  EXPECT_EQ(full_layout.vjp_size, 4 * 50 + 2);
  EXPECT_EQ(full_layout.dual_size(), M);
  EXPECT_EQ(by_duals_layout.vjp_size, 0);
  EXPECT_EQ(by_duals_layout.dual_size(), std::int64_t(M) * N + M);
  EXPECT_EQ((myriad::chmc_layout<LotkaVolterraSummaries, double>(summaries).vjp_size), 26 * 50 + 2);
  expect_same_potential_and_gradient(full, full_by_duals, 0);
  expect_same_potential_and_gradient(summaries, summaries_by_duals, 0);
  expect_same_potential_and_gradient(
      Noisy<LotkaVolterra>::make(full, 0.5),
      Noisy<WithoutJacobianVjp<LotkaVolterra>>::make(full_by_duals, 0.5), M);
  expect_same_potential_and_gradient(
      Noisy<LotkaVolterraSummaries>::make(summaries, 0.5),
      Noisy<WithoutJacobianVjp<LotkaVolterraSummaries>>::make(summaries_by_duals, 0.5),
      summaries.output_dim());
}

}  // namespace
