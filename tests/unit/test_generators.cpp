// Tests of the built-in generator models (include/myriad/models: sphere, linear_gaussian, gld,
// lotka_volterra, noisy_generator) against constrained-hmc.md: every analytic Jacobian against
// forward-mode duals and against central finite differences with a bound derived from the step
// (truncation from third derivatives by triple duals, rounding from a running error bound);
// structured Jacobians against the dense one; prior gradients against duals; initialize() on
// the manifold for 100 seeds; deterministic data; argument validation; the GLD errata, support
// and prior; the linear-Gaussian closed forms; the Lotka–Volterra summaries and Gauss–Newton;
// the Lotka–Volterra log-determinant gradient (add_jacobian_vjp) against dual passes and against
// central differences of ½ log|J Jᵀ|.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <limits>
#include <queue>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/dual.hpp"
#include "common/third_derivative.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/mcmc/constrained_hmc.hpp"
#include "myriad/model/autodiff.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/generator_autodiff.hpp"
#include "myriad/models/gld.hpp"
#include "myriad/models/linear_gaussian.hpp"
#include "myriad/models/lotka_volterra_problem.hpp"
#include "myriad/models/noisy_generator.hpp"
#include "myriad/models/sphere.hpp"

namespace {

using myriad::test::TripleSeededView;

using myriad::Dual;
using myriad::GramStructure;
using myriad::Purpose;
using myriad::RandomStream;
using myriad::models::Gld;
using myriad::models::GldProblem;
using myriad::models::LinearGaussian;
using myriad::models::LinearGaussianProblem;
using myriad::models::LotkaVolterra;
using myriad::models::LotkaVolterraProblem;
using myriad::models::LotkaVolterraSettings;
using myriad::models::LotkaVolterraSummaries;
using myriad::models::Noisy;
using myriad::models::Sphere;

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr std::uint64_t kPointSeed = 20240611;
constexpr int kPoints = 4;

// Every generator is a trivially copyable per-chain struct (it is passed to kernels by value).
static_assert(std::is_trivially_copyable<Sphere>::value, "");
static_assert(std::is_trivially_copyable<LinearGaussian>::value, "");
static_assert(std::is_trivially_copyable<Gld>::value, "");
static_assert(std::is_trivially_copyable<LotkaVolterra>::value, "");
static_assert(std::is_trivially_copyable<LotkaVolterraSummaries>::value, "");
static_assert(std::is_trivially_copyable<Noisy<LotkaVolterra>>::value, "");
// The optional members are seen by the concept's detection, through the Noisy wrapper too.
static_assert(myriad::generator_has_jacobian<Gld> && myriad::generator_has_jacobian<Noisy<Gld>>,
              "");
static_assert(myriad::generator_has_log_prior_gradient<Noisy<LotkaVolterraSummaries>>, "");
static_assert(myriad::generator_has_initialize<Noisy<Sphere>>, "");
static_assert(myriad::generator_gram_structure<Gld> == GramStructure::diagonal_plus_low_rank, "");
static_assert(myriad::generator_gram_structure<LotkaVolterra> ==
                  GramStructure::triangular_plus_low_rank,
              "");
static_assert(myriad::generator_gram_structure<LotkaVolterraSummaries> == GramStructure::dense, "");
static_assert(myriad::generator_gram_structure<Noisy<Gld>> == GramStructure::dense, "");

// ---------------------------------------------------------------------------------------------
// Rounding-error bounds by first-order (linearised) error analysis (Linnainmaa 1976; Higham,
// "Accuracy and Stability of Numerical Algorithms", §3.3): every floating-point operation i
// returns v̂_i = v_i + ρ_i with |ρ_i| ≤ ε|v̂_i| (ε = 2u, a factor 2 of slack; libm's exp, log,
// log1p, expm1 are accurate to < 1 ulp, counted as 2ε|v̂_i|), and to first order the computed
// output differs from the exact one by Σ_i (∂x/∂v_i) ρ_i, so |x̂ − x| ≤ Σ_i |∂x/∂v_i| |ρ_i|max.
// The adjoints ∂x/∂v_i come from a reverse sweep over a tape of the evaluation, so cancellation
// along the computation (the oscillating Lotka–Volterra dynamics) is accounted for; a forward
// running bound of absolute values is not sharp there, it grows like Π|A_s| instead of |Π A_s|
// and exceeded |J| itself for most Lotka–Volterra entries. Inputs and constants enter exactly:
// a constant's representation error changes the function, not the difference quotient.

struct TapeNode {
  int parent[2];      // −1: none (input or constant)
  double partial[2];  // ∂v/∂parent
  double rounding;    // bound on this operation's own rounding error
};

/// The tape of the current evaluation (one at a time; the tests are single-threaded).
std::vector<TapeNode>& tape() {
  static std::vector<TapeNode> nodes;
  return nodes;
}

/// A double that records each operation on the tape.
struct Taped {
  double v = 0;
  int id = -1;  // tape node, or −1 for an input or constant
  Taped() = default;
  Taped(double value) : v(value) {}  // NOLINT: implicit lift, like Dual
  Taped(int value) : v(value) {}     // NOLINT
  Taped& operator+=(const Taped& o) { return *this = *this + o; }
  Taped& operator-=(const Taped& o) { return *this = *this - o; }
  Taped& operator*=(const Taped& o) { return *this = *this * o; }
  Taped& operator/=(const Taped& o) { return *this = *this / o; }

  static Taped record(double v, int a, double da, int b, double db, double rounding) {
    Taped t;
    t.v = v;
    t.id = static_cast<int>(tape().size());
    tape().push_back({{a, b}, {da, db}, rounding});
    return t;
  }
  friend Taped operator+(const Taped& a, const Taped& b) {
    const double v = a.v + b.v;
    return record(v, a.id, 1, b.id, 1, kEps * std::fabs(v));
  }
  friend Taped operator-(const Taped& a, const Taped& b) {
    const double v = a.v - b.v;
    return record(v, a.id, 1, b.id, -1, kEps * std::fabs(v));
  }
  friend Taped operator-(const Taped& a) { return record(-a.v, a.id, -1, -1, 0, 0); }
  friend Taped operator*(const Taped& a, const Taped& b) {
    const double v = a.v * b.v;
    return record(v, a.id, b.v, b.id, a.v, kEps * std::fabs(v));
  }
  friend Taped operator/(const Taped& a, const Taped& b) {
    const double v = a.v / b.v;
    return record(v, a.id, 1 / b.v, b.id, -v / b.v, kEps * std::fabs(v));
  }
  friend bool operator<(const Taped& a, const Taped& b) { return a.v < b.v; }
  friend bool operator>(const Taped& a, const Taped& b) { return a.v > b.v; }
};

double value_of(const Taped& x) { return x.v; }
Taped exp(const Taped& x) {
  const double v = std::exp(x.v);
  return Taped::record(v, x.id, v, -1, 0, 2 * kEps * v);
}
Taped log(const Taped& x) {
  const double v = std::log(x.v);
  return Taped::record(v, x.id, 1 / x.v, -1, 0, 2 * kEps * std::fabs(v));
}
Taped log1p(const Taped& x) {
  const double v = std::log1p(x.v);
  return Taped::record(v, x.id, 1 / (1 + x.v), -1, 0, 2 * kEps * std::fabs(v));
}
Taped expm1(const Taped& x) {
  const double v = std::expm1(x.v);
  return Taped::record(v, x.id, std::exp(x.v), -1, 0, 2 * kEps * std::fabs(v));
}
Taped sqrt(const Taped& x) {
  const double v = std::sqrt(x.v);
  return Taped::record(v, x.id, 0.5 / v, -1, 0, kEps * v);
}

/// Runs g.generate on the tape at u: x[m] is the computed output, bound[m] the first-order
/// bound Σ_i |∂x_m/∂v_i| rounding_i on its rounding error, from a reverse sweep over the
/// ancestors of x_m (visited in decreasing tape order, a reverse topological order).
template <class G>
void generate_with_rounding_bound(const G& g, const std::vector<double>& u, std::vector<double>& x,
                                  std::vector<double>& bound) {
  tape().clear();
  tape().reserve(1 << 16);
  const std::vector<Taped> input(u.begin(), u.end());
  std::vector<Taped> output(g.output_dim());
  g.generate(input, output);
  const auto& nodes = tape();
  std::vector<double> adjoint(nodes.size(), 0.0);
  std::vector<char> queued(nodes.size(), 0);
  std::vector<int> touched, storage;
  storage.reserve(nodes.size());
  std::priority_queue<int> pending(std::less<int>(), std::move(storage));
  for (int m = 0; m < g.output_dim(); ++m) {
    x[m] = output[m].v;
    bound[m] = 0;
    if (output[m].id < 0) continue;
    adjoint[output[m].id] = 1;
    queued[output[m].id] = 1;
    pending.push(output[m].id);
    touched.clear();
    while (!pending.empty()) {
      const int i = pending.top();
      pending.pop();
      touched.push_back(i);
      const TapeNode& node = nodes[i];
      bound[m] += std::fabs(adjoint[i]) * node.rounding;
      for (int k = 0; k < 2; ++k) {
        const int parent = node.parent[k];
        if (parent < 0) continue;
        adjoint[parent] += adjoint[i] * node.partial[k];
        if (!queued[parent]) {
          queued[parent] = 1;
          pending.push(parent);
        }
      }
    }
    for (int i : touched) {
      adjoint[i] = 0;
      queued[i] = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers.

template <class G>
std::vector<double> generate(const G& g, const std::vector<double>& u) {
  std::vector<double> x(g.output_dim());
  g.generate(u, x);
  return x;
}

template <class G>
double residual_norm(const G& g, const std::vector<double>& u) {
  const auto x = generate(g, u);
  double norm = 0;
  for (int m = 0; m < g.output_dim(); ++m) {
    const double r = std::fabs(x[m] - g.observed(m));
    if (!std::isfinite(r)) return HUGE_VAL;
    norm = std::max(norm, r);
  }
  return norm;
}

template <class G>
std::vector<double> dense_jacobian(const G& g, const std::vector<double>& u) {
  std::vector<double> storage(static_cast<std::size_t>(g.output_dim()) * g.input_dim(), NAN);
  auto J = myriad::dense_matrix(storage.data(), g.output_dim(), g.input_dim());
  g.jacobian(u, J);
  return storage;
}

template <class G>
std::vector<double> dual_jacobian(const G& g, const std::vector<double>& u) {
  std::vector<double> storage(static_cast<std::size_t>(g.output_dim()) * g.input_dim(), NAN);
  auto J = myriad::dense_matrix(storage.data(), g.output_dim(), g.input_dim());
  myriad::jacobian_by_duals(g, u, J);
  return storage;
}

std::vector<double> standard_normals(int point, int n, std::uint64_t seed = kPointSeed) {
  std::vector<double> z(n);
  RandomStream(seed, point).fill_normal<double>(0, Purpose::user, z, n);
  return z;
}

/// Worst observed agreement, printed for the record.
struct Agreement {
  double dual_rel = 0;    ///< max |J − J_dual| / ‖row of J_dual‖∞
  double fd_ratio = 0;    ///< max |J − fd| / tolerance
  double fd_abs = 0;      ///< max |J − fd|
  double grad_rel = 0;    ///< max |∇ log ρ − dual| / (1 + ‖∇‖∞)
  double fd_tol_rel = 0;  ///< max tolerance / ‖row of J‖∞: how sharp the fd check is
  int fd_checked = 0;     ///< entries compared with finite differences
};

/// Which inputs the finite-difference check visits: all of the first `all_below`, then every
/// `stride`-th (the noise columns of the i.i.d. models share one code path, and the duals
/// check every entry anyway).
struct FdInputs {
  bool enabled = true;
  int all_below = std::numeric_limits<int>::max();
  int stride = 1;
  bool visits(int n) const { return enabled && (n < all_below || (n - all_below) % stride == 0); }
};

/// Checks at u: (a) jacobian() against jacobian_by_duals to 1e-12 relative to the row's scale
/// (same derivative, different operation order: rounding only); (b) against central finite
/// differences within the bound derived from the step (see below); (c) log_prior_gradient
/// against duals.
template <class G>
void expect_consistent_jacobian(const G& g, const std::vector<double>& u, Agreement& agreement,
                                FdInputs fd_inputs = {}) {
  const int M = g.output_dim(), N = g.input_dim();
  ASSERT_EQ(static_cast<int>(u.size()), N);
  const auto J = dense_jacobian(g, u);
  const auto Jd = dual_jacobian(g, u);
  std::vector<double> row_scale(M, 0.0);  // ‖row m of J‖∞ (by duals)
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) row_scale[m] = std::max(row_scale[m], std::fabs(Jd[m * N + n]));
    ASSERT_TRUE(std::isfinite(row_scale[m])) << "row " << m;
    for (int n = 0; n < N; ++n) {
      const double diff = std::fabs(J[m * N + n] - Jd[m * N + n]);
      EXPECT_LE(diff, 1e-12 * row_scale[m])
          << "J(" << m << ", " << n << ") = " << J[m * N + n] << ", duals " << Jd[m * N + n];
      agreement.dual_rel = std::max(agreement.dual_rel, diff / std::max(row_scale[m], 1e-300));
    }
  }

  if (fd_inputs.enabled) {
    // Central differences along each input n with h = 1e-5·max(1, |u_n|). The error of
    // (f(u + h) − f(u − h))/(2h) against f' is (e.g. Nocedal & Wright, "Numerical
    // Optimization", §8.1) at most h² max|f'''|/6 (truncation; f''' at u from triple duals, h
    // far below f's scale of variation) plus (δ₊ + δ₋)/(2h), where δ± bound the rounding errors
    // of the two evaluations, output by output, by the first-order error analysis above. A
    // safety factor of 4 covers ξ ≠ u and the neglected second-order terms. A wrong derivative
    // term is off by O(|J|): each test prints its largest bound relative to its row of J.
    std::vector<double> up = u, down = u, x_up(M), x_down(M), bound_up(M), bound_down(M);
    std::vector<Dual<Dual<Dual<double>>>> third(M);
    for (int n = 0; n < N; ++n) {
      if (!fd_inputs.visits(n)) continue;
      const double h = 1e-5 * std::max(1.0, std::fabs(u[n]));
      up[n] = u[n] + h;
      down[n] = u[n] - h;
      const double step = up[n] - down[n];  // exact spacing of the representable points
      generate_with_rounding_bound(g, up, x_up, bound_up);
      generate_with_rounding_bound(g, down, x_down, bound_down);
      g.generate(TripleSeededView<std::vector<double>>{u, n}, third);
      up[n] = down[n] = u[n];
      for (int m = 0; m < M; ++m) {
        const double fd = (x_up[m] - x_down[m]) / step;
        const double f3 = third[m].eps.eps.eps;
        const double truncation = 0.25 * step * step * std::fabs(f3) / 6;
        const double rounding = (bound_up[m] + bound_down[m]) / step;
        const double tol = 4 * (truncation + rounding) + 1e-300;
        const double diff = std::fabs(J[m * N + n] - fd);
        EXPECT_LE(diff, tol) << "J(" << m << ", " << n << ") = " << J[m * N + n] << ", fd " << fd
                             << ", f''' = " << f3 << ", rounding bound " << rounding;
        agreement.fd_ratio = std::max(agreement.fd_ratio, diff / tol);
        agreement.fd_abs = std::max(agreement.fd_abs, diff);
        agreement.fd_tol_rel = std::max(agreement.fd_tol_rel, tol / row_scale[m]);
        ++agreement.fd_checked;
      }
    }
  }

  std::vector<double> grad(N), dual_grad(N);
  const double lp = g.log_prior_gradient(u, grad);
  const double lp_dual = myriad::log_prior_gradient_by_duals(g, u, dual_grad);
  EXPECT_NEAR(lp, g.log_prior(u), 1e-12 * (1 + std::fabs(lp)));
  EXPECT_NEAR(lp_dual, g.log_prior(u), 1e-12 * (1 + std::fabs(lp)));
  double grad_norm = 0;
  for (double v : dual_grad) grad_norm = std::max(grad_norm, std::fabs(v));
  for (int n = 0; n < N; ++n) {
    const double diff = std::fabs(grad[n] - dual_grad[n]);
    EXPECT_LE(diff, 1e-12 * (1 + grad_norm)) << "component " << n;
    agreement.grad_rel = std::max(agreement.grad_rel, diff / (1 + grad_norm));
  }
}

template <class G>
void check_jacobians(const G& g, const std::function<std::vector<double>(int)>& point,
                     FdInputs fd_inputs = {}) {
  Agreement agreement;
  for (int p = 0; p < kPoints; ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    expect_consistent_jacobian(g, point(p), agreement, fd_inputs);
  }
  ::testing::Test::RecordProperty("max_dual_relative_error", std::to_string(agreement.dual_rel));
  ::testing::Test::RecordProperty("max_fd_error_over_tolerance",
                                  std::to_string(agreement.fd_ratio));
  std::printf(
      "    max |J - dual|/row scale = %.2e; max |J - fd| = %.2e, worst ratio to its bound %.3f, "
      "largest bound/row scale %.1e (%d entries); max |grad log prior - dual|/(1+|grad|) = "
      "%.2e\n",
      agreement.dual_rel, agreement.fd_abs, agreement.fd_ratio, agreement.fd_tol_rel,
      agreement.fd_checked, agreement.grad_rel);
}

/// A prior draw of a generator's own sampler (chain `point`).
template <class G>
std::vector<double> prior_point(const G& g, int point) {
  std::vector<double> u(g.input_dim());
  g.draw_prior(RandomStream(kPointSeed, point), 0, Purpose::user, u);
  return u;
}

// ---------------------------------------------------------------------------------------------
// Problems under test (the sizes of the brief and of constrained-hmc.md §15).

Sphere sphere() { return Sphere::make(5, 2.0); }

const LinearGaussianProblem& linear_gaussian() {
  static const LinearGaussianProblem problem = LinearGaussianProblem::make(3, 6, 11);
  return problem;
}

const GldProblem& gld() {
  static const GldProblem problem = GldProblem::make();
  return problem;
}

const LotkaVolterraProblem& lotka_volterra() {
  static const LotkaVolterraProblem problem = LotkaVolterraProblem::make();
  return problem;
}

/// Lotka–Volterra test points: prior draws from LogNormal(−2, 1) make the Euler–Maruyama
/// trajectories explode within a few steps (z₂ r f ≈ 10³ per step at r = f = 100), so u₁ is
/// drawn around the data's parameters, u₁ = u₁* + 0.1 ξ, and u₂ ~ N(0, I) as under the prior.
std::vector<double> lotka_volterra_point(int point) {
  const auto& truth = lotka_volterra().true_inputs();
  std::vector<double> u = standard_normals(point, static_cast<int>(truth.size()));
  for (int k = 0; k < 4; ++k) u[k] = truth[k] + 0.1 * u[k];
  return u;
}

// ---------------------------------------------------------------------------------------------
// Analytic Jacobian = duals = finite differences; log_prior_gradient = duals.

TEST(GeneratorsJacobian, Sphere) {
  const auto g = sphere();
  check_jacobians(g, [&](int p) { return prior_point(g, p); });
}

TEST(GeneratorsJacobian, LinearGaussian) {
  const auto g = linear_gaussian().host_model();
  check_jacobians(g, [&](int p) { return prior_point(g, p); });
}

/// The GLD's finite differences: all of u₁, every 5th u₂ input (each with all 250 outputs).
constexpr FdInputs kGldFdInputs = {true, 4, 5};

TEST(GeneratorsJacobian, Gld) {
  const auto g = gld().host_model();
  check_jacobians(
      g, [&](int p) { return prior_point(g, p); }, kGldFdInputs);
}

TEST(GeneratorsJacobian, GldNearZeroShapes) {
  // |z₃ log p|, |z₄ log(1 − p)| around the ½ switch to the Taylor series, and z₃ = 0 exactly.
  const auto g = gld().host_model();
  check_jacobians(
      g,
      [&](int p) {
        auto u = prior_point(g, p);
        const double shapes[4][2] = {{1e-9, -1e-7}, {0.0, 0.0}, {0.3, -0.3}, {-2e-3, 4e-3}};
        u[1] = shapes[p][0];
        u[2] = shapes[p][1];
        return u;
      },
      kGldFdInputs);
}

TEST(GeneratorsJacobian, LotkaVolterra) {
  check_jacobians(lotka_volterra().host_model(), lotka_volterra_point);
}

TEST(GeneratorsJacobian, LotkaVolterraSummaries) {
  check_jacobians(lotka_volterra().host_summaries_model(), lotka_volterra_point);
}

TEST(GeneratorsJacobian, NoisySphere) {
  const auto g = Noisy<Sphere>::make(sphere(), 1.0);
  check_jacobians(g, [&](int p) { return prior_point(g, p); });
}

TEST(GeneratorsJacobian, NoisyLotkaVolterra) {
  const auto g = Noisy<LotkaVolterra>::make(lotka_volterra().host_model(), 1.0);
  check_jacobians(
      g,
      [&](int p) {
        auto v = lotka_volterra_point(p);
        const auto n = standard_normals(p + 100, g.output_dim());
        v.insert(v.end(), n.begin(), n.end());
        return v;
      },
      FdInputs{true, 104, 5});  // all of u, every 5th n (J's n block is the constant εI)
}

TEST(GeneratorsJacobian, AtInitialPointsWithPriorParameters) {
  // initialize() draws u₁ from the prior; the Jacobians there reach ~1e30 (the dynamics amplify
  // by |∂x_s/∂x_{s−1}| ≫ 1 per step) and must still agree with duals row by row.
  Agreement agreement;
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
// Structured Jacobians: B and T equal the blocks of the dense Jacobian.

/// T of the diagonal form: a vector written as T(m).
struct DiagonalBlock {
  double* d;
  double& operator()(int m) const { return d[m]; }
};

TEST(GeneratorsStructure, GldDiagonalPlusLowRank) {
  const auto g = gld().host_model();
  const int M = g.output_dim(), N = g.input_dim(), K = g.num_parameters();
  ASSERT_EQ(K, 4);
  ASSERT_EQ(N, 254);
  ASSERT_EQ(M, 250);
  for (int p = 0; p < 8; ++p) {
    SCOPED_TRACE("prior point " + std::to_string(p));
    const auto u = prior_point(g, p);
    const auto J = dense_jacobian(g, u);
    std::vector<double> b(M * K, NAN), d(M, NAN);
    auto B = myriad::dense_matrix(b.data(), M, K);
    DiagonalBlock T{d.data()};
    g.structured_jacobian(u, B, T);
    for (int m = 0; m < M; ++m) {
      for (int k = 0; k < K; ++k) EXPECT_EQ(b[m * K + k], J[m * N + k]) << m << ", " << k;
      EXPECT_EQ(d[m], J[m * N + K + m]) << m;
      EXPECT_GT(d[m], 0) << m;
      for (int j = 0; j < M; ++j) {
        if (j != m) {
          ASSERT_EQ(J[m * N + K + j], 0.0) << m << ", " << j;
        }
      }
    }
  }
}

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
// initialize(): a point on the manifold, ‖g(u) − x̄‖∞ < 1e-9, for 100 seeds (retrying attempts
// as the caller does).

template <class G>
void check_initialize(const G& g) {
  double worst = 0;
  int attempts = 0, max_attempts = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    std::vector<double> u(g.input_dim(), NAN);
    const RandomStream rng(seed, 0);
    int attempt = 0;
    while (attempt < 1000 && !g.initialize(rng, static_cast<std::uint32_t>(attempt), u)) ++attempt;
    ASSERT_LT(attempt, 1000) << "seed " << seed;
    attempts += attempt + 1;
    max_attempts = std::max(max_attempts, attempt + 1);
    const double residual = residual_norm(g, u);
    EXPECT_LT(residual, 1e-9) << "seed " << seed;
    worst = std::max(worst, residual);
    for (int n = 0; n < g.input_dim(); ++n) ASSERT_TRUE(std::isfinite(u[n])) << seed << ", " << n;
  }
  ::testing::Test::RecordProperty("max_residual", std::to_string(worst));
  std::printf("    max residual %.2e, attempts per seed %.2f (max %d)\n", worst, attempts / 100.0,
              max_attempts);
}

TEST(GeneratorsInitialize, Sphere) { check_initialize(sphere()); }
TEST(GeneratorsInitialize, LinearGaussian) { check_initialize(linear_gaussian().host_model()); }
TEST(GeneratorsInitialize, Gld) { check_initialize(gld().host_model()); }
TEST(GeneratorsInitialize, LotkaVolterra) { check_initialize(lotka_volterra().host_model()); }
TEST(GeneratorsInitialize, LotkaVolterraSummaries) {
  check_initialize(lotka_volterra().host_summaries_model());
}
TEST(GeneratorsInitialize, NoisySphere) { check_initialize(Noisy<Sphere>::make(sphere(), 1.0)); }
TEST(GeneratorsInitialize, NoisyLotkaVolterra) {
  check_initialize(Noisy<LotkaVolterra>::make(lotka_volterra().host_model(), 1.0));
}

TEST(GeneratorsInitialize, SphereIsTheNormalisedPriorDraw) {
  const auto g = sphere();
  std::vector<double> u(5), v(5);
  ASSERT_TRUE(g.initialize(RandomStream(3, 7), 2, u));
  g.draw_prior(RandomStream(3, 7), 2, Purpose::initial_point, v);
  double norm = 0;
  for (double x : v) norm += x * x;
  for (int n = 0; n < 5; ++n) EXPECT_NEAR(u[n], 2.0 * v[n] / std::sqrt(norm), 1e-15);
}

TEST(GeneratorsInitialize, NoisySphereUsesThePriorDrawAndSolvesForTheNoise) {
  // §12.4: u ~ ρ unchanged, n = (x̄ − g_x(u))/ε.
  const auto g = Noisy<Sphere>::make(sphere(), 0.5);
  std::vector<double> v(6), prior(5);
  ASSERT_TRUE(g.initialize(RandomStream(5, 1), 0, v));
  sphere().draw_prior(RandomStream(5, 1), 0, Purpose::initial_point, prior);
  double sum = 0;
  for (int n = 0; n < 5; ++n) {
    EXPECT_EQ(v[n], prior[n]);
    sum += prior[n] * prior[n];
  }
  EXPECT_NEAR(v[5], (4.0 - sum) / 0.5, 1e-14 * (1 + std::fabs(v[5])));
}

TEST(GeneratorsInitialize, GldRejectsDataOutsideTheSupport) {
  // z₃ > 0 bounds the support below by z₁ − 1/(z₂ z₃): an observation under it has no noise
  // input, so initialize() must report failure for that attempt.
  const std::vector<double> data = {0.0, 1.0};
  const auto problem = GldProblem::from_observations(data);
  const auto g = problem.host_model();
  int failures = 0, successes = 0;
  for (std::uint32_t attempt = 0; attempt < 200; ++attempt) {
    std::vector<double> u(g.input_dim());
    const bool ok = g.initialize(RandomStream(1, 0), attempt, u);
    double z[4];
    g.parameters(u, z);
    const double lower = Gld::support_lower(z[0], z[1], z[2]);
    const double upper = Gld::support_upper(z[0], z[1], z[3]);
    const bool inside = data[0] > lower && data[1] < upper;
    EXPECT_EQ(ok, inside) << "attempt " << attempt << ": support [" << lower << ", " << upper
                          << "]";
    (ok ? successes : failures) += 1;
    if (ok) {
      EXPECT_LT(residual_norm(g, u), 1e-10);
    }
  }
  EXPECT_GT(failures, 0);
  EXPECT_GT(successes, 0);
}

// ---------------------------------------------------------------------------------------------
// Data.

TEST(GeneratorsData, DeterministicForASeed) {
  const auto a = GldProblem::make(5), b = GldProblem::make(5), c = GldProblem::make(6);
  EXPECT_EQ(a.observations(), b.observations());
  EXPECT_NE(a.observations(), c.observations());
  EXPECT_EQ(a.num_observations(), 250);

  const auto p = LotkaVolterraProblem::make(5), q = LotkaVolterraProblem::make(5),
             r = LotkaVolterraProblem::make(6);
  EXPECT_EQ(p.observations(), q.observations());
  EXPECT_EQ(p.summaries(), q.summaries());
  EXPECT_NE(p.observations(), r.observations());
  EXPECT_EQ(p.observations().size(), 100u);

  const auto s = LinearGaussianProblem::make(3, 6, 5), t = LinearGaussianProblem::make(3, 6, 5),
             w = LinearGaussianProblem::make(3, 6, 6);
  EXPECT_EQ(s.matrix(), t.matrix());
  EXPECT_EQ(s.observations(), t.observations());
  EXPECT_EQ(s.pseudo_inverse(), t.pseudo_inverse());
  EXPECT_NE(s.matrix(), w.matrix());
}

TEST(GeneratorsData, GeneratedByTheModelAtTheTrueInputs) {
  // The data are consistent: g(u*) = x̄ exactly (same code, same inputs).
  const auto& g = gld();
  EXPECT_EQ(residual_norm(g.host_model(), g.true_inputs()), 0.0);
  const auto& lv = lotka_volterra();
  EXPECT_EQ(residual_norm(lv.host_model(), lv.true_inputs()), 0.0);
  EXPECT_EQ(residual_norm(lv.host_summaries_model(), lv.true_inputs()), 0.0);
  const auto& lg = linear_gaussian();
  EXPECT_LT(residual_norm(lg.host_model(), lg.true_inputs()), 1e-15);
  // The true parameters are recovered from the true inputs.
  double z[4];
  g.host_model().parameters(g.true_inputs(), z);
  const auto truth = GldProblem::true_parameters();
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(z[i], truth[i], 1e-15) << i;
  std::vector<double> q(4);
  lv.host_model().quantities(lv.true_inputs(), q);
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(q[i], lv.settings().true_parameters[i], 1e-15 * q[i]) << i;
}

TEST(GeneratorsData, LotkaVolterraSeriesIsPlausible) {
  // At z = (0.4, 0.005, 0.05, 0.001) the populations oscillate and stay positive.
  const auto& x = lotka_volterra().observations();
  for (std::size_t m = 0; m < x.size(); ++m) EXPECT_GT(x[m], 0) << m;
}

// ---------------------------------------------------------------------------------------------
// Arguments.

template <class F>
void expect_rejected(F&& make, std::initializer_list<const char*> words) {
  try {
    make();
    ADD_FAILURE() << "no exception; expected a message naming " << *words.begin();
  } catch (const myriad::invalid_argument& e) {
    const std::string message = e.what();
    for (const char* word : words)
      EXPECT_NE(message.find(word), std::string::npos) << "'" << message << "' lacks " << word;
  }
}

TEST(GeneratorsArguments, MakeRejectsBadArguments) {
  expect_rejected([] { Sphere::make(1, 1.0); }, {"sphere", "dim", "1"});
  expect_rejected([] { Sphere::make(3, 0.0); }, {"sphere", "radius"});
  expect_rejected([] { Sphere::make(3, NAN); }, {"sphere", "radius"});
  expect_rejected([] { LinearGaussianProblem::make(0, 5, 1); }, {"linear_gaussian", "num_outputs"});
  expect_rejected([] { LinearGaussianProblem::make(3, 3, 1); },
                  {"linear_gaussian", "num_inputs", "3"});
  expect_rejected([] { LinearGaussian::make(nullptr, nullptr, nullptr, 2, 4); },
                  {"linear_gaussian", "null"});
  expect_rejected([] { GldProblem::make(1, 0); }, {"gld", "num_observations"});
  expect_rejected([] { GldProblem::from_observations({1.0, NAN}); }, {"gld", "observations[1]"});
  expect_rejected([] { GldProblem::from_observations({}); }, {"gld", "observations"});
  expect_rejected([] { Gld::make(nullptr, 3); }, {"gld", "observations"});
  LotkaVolterraSettings short_run;
  short_run.num_steps = 2;
  expect_rejected([&] { LotkaVolterraProblem::make(1, short_run); },
                  {"lotka_volterra", "num_steps", "2"});
  LotkaVolterraSettings bad_dt;
  bad_dt.dt = -1;
  expect_rejected([&] { LotkaVolterraProblem::make(1, bad_dt); }, {"lotka_volterra", "dt"});
  LotkaVolterraSettings bad_sigma;
  bad_sigma.sigma_f = 0;
  expect_rejected([&] { LotkaVolterraProblem::make(1, bad_sigma); }, {"lotka_volterra", "sigma_f"});
  LotkaVolterraSettings bad_truth;
  bad_truth.true_parameters[2] = -0.05;
  expect_rejected([&] { LotkaVolterraProblem::make(1, bad_truth); },
                  {"lotka_volterra", "true_parameters[2]"});
  LotkaVolterraSettings long_run;
  long_run.num_steps = 200;
  const std::vector<double> series(400, 1.0);
  expect_rejected([&] { LotkaVolterraSummaries::make(series.data(), {}, long_run); },
                  {"lotka_volterra_summaries", "num_steps", "128"});
  expect_rejected([] { LotkaVolterra::make(nullptr, {}); }, {"lotka_volterra", "observations"});
  expect_rejected([] { Noisy<Sphere>::make(Sphere::make(3, 1.0), 0.0); }, {"noisy", "epsilon"});
  expect_rejected([] { Noisy<Sphere>::make(Sphere::make(3, 1.0), -INFINITY); },
                  {"noisy", "epsilon"});
}

// ---------------------------------------------------------------------------------------------
// GLD: the corrected quantile, its support and its prior (constrained-hmc.md §15.1, §16).

TEST(GeneratorsGld, QuantileIsMonotoneWithTheCorrectedSign) {
  const auto g = gld().host_model();
  std::vector<std::array<double, 4>> parameters = {{5, 1, 0.4, -0.1}};
  for (int p = 0; p < 50; ++p) {
    const auto u = prior_point(g, p);
    double z[4];
    g.parameters(u, z);
    parameters.push_back({z[0], z[1], z[2], z[3]});
  }
  for (const auto& z : parameters) {
    double previous = -INFINITY;
    for (int i = 1; i < 2000; ++i) {
      const double p = i / 2000.0;
      const double q = Gld::quantile(p, z[0], z[1], z[2], z[3]);
      // Against the printed FMKL formula with "−", evaluated directly with pow.
      const double direct =
          z[0] + ((std::pow(p, z[2]) - 1) / z[2] - (std::pow(1 - p, z[3]) - 1) / z[3]) / z[1];
      ASSERT_NEAR(q, direct, 1e-10 * (1 + std::fabs(direct))) << "p = " << p;
      // q'(p) = (p^{z₃−1} + (1 − p)^{z₄−1})/z₂ > 0: strictly increasing (up to rounding).
      ASSERT_GT(q, previous - 4 * kEps * std::fabs(q)) << "p = " << p << ", z₃ = " << z[2];
      previous = q;
    }
  }
  // The printed "+" is not monotone at the paper's z (erratum 5): its derivative
  // (p^{z₃−1} − (1 − p)^{z₄−1})/z₂ changes sign, so it falls again as p → 1.
  auto plus = [](double p) {
    return 5 + ((std::pow(p, 0.4) - 1) / 0.4 + (std::pow(1 - p, -0.1) - 1) / -0.1);
  };
  EXPECT_GT(plus(0.5), plus(0.999));
}

TEST(GeneratorsGld, GeneratedObservationsLieInTheSupportAndMatchTheQuantile) {
  const auto g = gld().host_model();
  for (int p = 0; p < 50; ++p) {
    const auto u = prior_point(g, p);
    const auto x = generate(g, u);
    double z[4];
    g.parameters(u, z);
    const double lower = Gld::support_lower(z[0], z[1], z[2]);
    const double upper = Gld::support_upper(z[0], z[1], z[3]);
    for (int m = 0; m < g.output_dim(); ++m) {
      ASSERT_GE(x[m], lower) << p << ", " << m;
      ASSERT_LE(x[m], upper) << p << ", " << m;
      // p_m = logistic CDF of u₂[m]; the quantile at moderate p agrees to rounding.
      const double prob = 1 / (1 + std::exp(-Gld::kLogisticRate * u[4 + m]));
      if (prob > 1e-6 && prob < 1 - 1e-6) {
        ASSERT_NEAR(x[m], Gld::quantile(prob, z[0], z[1], z[2], z[3]),
                    1e-9 * (1 + std::fabs(x[m])));
      }
    }
  }
  // The paper's data: z₃ = 0.4 bounds the support below by 5 − 1/0.4 = 2.5.
  for (double x : gld().observations()) EXPECT_GT(x, 2.5);
}

TEST(GeneratorsGld, PriorOfScaleIsExponentialAndOfProbabilitiesUniform) {
  // Moments of 10⁵ transformed prior draws, each within 5 standard errors (se = sd/√n):
  //   z₂ ~ Exp(1): E z₂ = 1 (sd 1), E z₂² = 2 (sd √(E z⁴ − 4) = √20);
  //   p ~ U(0, 1): E p = ½ (sd √(1/12)), E p² = ⅓ (sd √(1/5 − 1/9)).
  const std::vector<double> one = {5.0};
  const auto g = Gld::make(one.data(), 1);
  const int n = 100000;
  double z2 = 0, z2_sq = 0, prob = 0, prob_sq = 0;
  std::vector<double> u(g.input_dim());
  for (int i = 0; i < n; ++i) {
    g.sample_prior(RandomStream(kPointSeed, 0), static_cast<std::uint32_t>(i), u);
    double z[4];
    g.parameters(u, z);
    const double p = 1 / (1 + std::exp(-Gld::kLogisticRate * u[4]));
    z2 += z[1];
    z2_sq += z[1] * z[1];
    prob += p;
    prob_sq += p * p;
  }
  const double root_n = std::sqrt(static_cast<double>(n));
  EXPECT_NEAR(z2 / n, 1.0, 5 * 1.0 / root_n);
  EXPECT_NEAR(z2_sq / n, 2.0, 5 * std::sqrt(20.0) / root_n);
  EXPECT_NEAR(prob / n, 0.5, 5 * std::sqrt(1.0 / 12) / root_n);
  EXPECT_NEAR(prob_sq / n, 1.0 / 3, 5 * std::sqrt(1.0 / 5 - 1.0 / 9) / root_n);
  std::printf("    E z2 = %.4f, E z2^2 = %.4f, E p = %.4f, E p^2 = %.4f (n = %d)\n", z2 / n,
              z2_sq / n, prob / n, prob_sq / n, n);
}

TEST(GeneratorsGld, LogPriorIsTheDensityThatMakesScaleExponentialAndProbabilitiesUniform) {
  // Change of variables with the generator's own log_prior: the density of z₂ = softplus(c u)
  // is ρ(u)/|dz₂/du| = e^{−z₂}, that of p = σ(c u) is ρ(u)/|dp/du| = 1. log ρ of one logistic
  // input is read off log_prior as a difference against u = 0, where ρ(0) = c/4 = π/(4√3).
  const std::vector<double> one = {5.0};
  const auto g = Gld::make(one.data(), 1);
  const double c = Gld::kLogisticRate;
  std::vector<double> base = {0.3, -0.2, 0.1, 0.0, 0.0};
  const double log_rho0 = std::log(M_PI / (4 * std::sqrt(3.0)));
  for (double t = -12; t <= 12; t += 0.25) {
    std::vector<double> u = base;
    u[3] = t;
    const double log_rho = g.log_prior(u) - g.log_prior(base) + log_rho0;
    const double z2 = std::log1p(std::exp(c * t));
    const double dz2 = c / (1 + std::exp(-c * t));
    EXPECT_NEAR(log_rho - std::log(dz2), -z2, 1e-12 * (1 + z2)) << "u = " << t;
    u = base;
    u[4] = t;
    const double log_rho_noise = g.log_prior(u) - g.log_prior(base) + log_rho0;
    // log(dp/du) = log(c p (1 − p)) = log c − softplus(c u) − softplus(−c u), without the
    // cancellation of 1 − p.
    auto softplus = [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); };
    const double log_dp = std::log(c) - softplus(c * t) - softplus(-c * t);
    EXPECT_NEAR(log_rho_noise - log_dp, 0.0, 1e-12 * (1 + std::fabs(log_dp))) << "u = " << t;
  }
}

// ---------------------------------------------------------------------------------------------
// Linear Gaussian: the exact conditional of constrained-hmc.md §2.

TEST(GeneratorsLinearGaussian, ExactMeanAndCovarianceSolveTheConstraint) {
  for (const auto& [M, N] : std::vector<std::pair<int, int>>{{3, 6}, {20, 50}}) {
    const auto problem = LinearGaussianProblem::make(M, N, 11);
    const auto& A = problem.matrix();
    const auto mean = problem.exact_mean();
    const auto cov = problem.exact_covariance();
    double worst_mean = 0, worst_cov = 0, worst_sym = 0;
    for (int m = 0; m < M; ++m) {
      double am = 0;  // (A · mean)_m = x̄_m
      for (int n = 0; n < N; ++n) am += A[m * N + n] * mean[n];
      worst_mean = std::max(worst_mean, std::fabs(am - problem.observations()[m]));
      for (int i = 0; i < N; ++i) {  // (Σ Aᵀ)_{i m} = 0
        double s = 0;
        for (int n = 0; n < N; ++n) s += cov[i * N + n] * A[m * N + n];
        worst_cov = std::max(worst_cov, std::fabs(s));
      }
    }
    double trace = 0;
    for (int i = 0; i < N; ++i) {
      trace += cov[i * N + i];
      EXPECT_GE(cov[i * N + i], -1e-14);
      EXPECT_LE(cov[i * N + i], 1 + 1e-14);
      for (int j = 0; j < N; ++j)
        worst_sym = std::max(worst_sym, std::fabs(cov[i * N + j] - cov[j * N + i]));
    }
    EXPECT_LT(worst_mean, 1e-12);
    EXPECT_LT(worst_cov, 1e-12);
    EXPECT_LT(worst_sym, 1e-12);
    EXPECT_NEAR(trace, N - M, 1e-12);  // I − P A projects onto null(A), of dimension N − M
    std::printf("    M = %d, N = %d: |A mean - x|inf = %.1e, |cov A^T|max = %.1e\n", M, N,
                worst_mean, worst_cov);
  }
}

TEST(GeneratorsLinearGaussian, InitializeIsTheOrthogonalProjectionOfThePriorDraw) {
  // u = v − P(A v − x̄) is the closest point of the fibre to v: u − v ∈ range(Aᵀ).
  const auto& problem = linear_gaussian();
  const auto g = problem.host_model();
  std::vector<double> u(6), v(6);
  ASSERT_TRUE(g.initialize(RandomStream(9, 0), 0, u));
  g.draw_prior(RandomStream(9, 0), 0, Purpose::initial_point, v);
  const auto cov = problem.exact_covariance();  // I − P A annihilates range(Aᵀ)
  for (int i = 0; i < 6; ++i) {
    double s = 0;
    for (int n = 0; n < 6; ++n) s += cov[i * 6 + n] * (u[n] - v[n]);
    EXPECT_NEAR(s, 0.0, 1e-14);
  }
}

// ---------------------------------------------------------------------------------------------
// Lotka–Volterra summaries.

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
    const auto xi = standard_normals(p, 100);
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
// Noisy generator.

TEST(GeneratorsNoisy, GeneratorPriorAndQuantitiesWrapTheInnerOnes) {
  const auto inner = lotka_volterra().host_model();
  const double epsilon = 0.7;
  const auto g = Noisy<LotkaVolterra>::make(inner, epsilon);
  ASSERT_EQ(g.input_dim(), 204);
  ASSERT_EQ(g.output_dim(), 100);
  auto v = lotka_volterra_point(1);
  const auto n = standard_normals(9, 100);
  v.insert(v.end(), n.begin(), n.end());
  const std::vector<double> u(v.begin(), v.begin() + 104);
  const auto y = generate(g, v), x = generate(inner, u);
  for (int m = 0; m < 100; ++m) EXPECT_EQ(y[m], x[m] + epsilon * n[m]);
  double n_sq = 0;
  for (double e : n) n_sq += e * e;
  EXPECT_NEAR(g.log_prior(v), inner.log_prior(u) - 100 * 0.91893853320467274178 - 0.5 * n_sq,
              1e-12 * std::fabs(g.log_prior(v)));
  const auto J = dense_jacobian(g, v);
  for (int m = 0; m < 100; ++m)
    for (int j = 0; j < 100; ++j) EXPECT_EQ(J[m * 204 + 104 + j], m == j ? epsilon : 0.0);
  EXPECT_EQ(g.num_quantities(), 4);
  EXPECT_EQ(g.quantity_name(3), "z[3]");
  std::vector<double> qa(4), qb(4);
  g.quantities(v, qa);
  inner.quantities(u, qb);
  EXPECT_EQ(qa, qb);
}

// ---------------------------------------------------------------------------------------------
// The log-determinant gradient's vector–Jacobian product, add_jacobian_vjp (model/generator.hpp):
// Lotka–Volterra's reverse sweep against the library's dual passes and against central
// differences of ½ log|J Jᵀ|.

static_assert(myriad::generator_has_jacobian_vjp<LotkaVolterra>, "");
static_assert(myriad::generator_has_jacobian_vjp<Noisy<LotkaVolterra>>, "");
static_assert(!myriad::generator_has_jacobian_vjp<Gld>, "");
static_assert(!myriad::generator_has_jacobian_vjp<Noisy<Gld>>, "");

/// A generator without add_jacobian_vjp: every other member forwarded, so that constrained HMC
/// falls back to dual passes (N of structured_jacobian for Lotka–Volterra, of jacobian for the
/// dense forms).
template <class G>
struct WithoutJacobianVjp {
  using value_type = double;
  static constexpr GramStructure gram_structure = myriad::generator_gram_structure<G>;
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
                  GramStructure::triangular_plus_low_rank,
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
    auto C = standard_normals(static_cast<int>(p) + 300, M * N);
    for (int m = 0; m < M; ++m)
      for (int j = m + 1; j < M; ++j) J[m * N + K + j] = C[m * N + K + j] = NAN;
    std::vector<double> v(N, 0.0), work(g.jacobian_vjp_workspace(), NAN);
    const auto j_view = myriad::dense_matrix(J.data(), M, N).as_const();
    const auto c_view = myriad::dense_matrix(C.data(), M, N).as_const();
    g.add_jacobian_vjp(u, j_view, c_view, v, work);
    std::vector<Dual<double>> dual_storage(static_cast<std::size_t>(M) * N, Dual<double>(NAN));
    auto dual_j = myriad::dense_matrix(dual_storage.data(), M, N);
    for (int i = 0; i < N; ++i) {
      g.jacobian(myriad::SeededDualView<std::vector<double>>{u, i}, dual_j);
      double expected = 0, scale = 0;
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < K + m + 1; ++n) {
          expected += C[m * N + n] * dual_j(m, n).eps;
          scale += std::fabs(C[m * N + n] * dual_j(m, n).eps);
        }
      ASSERT_TRUE(std::isfinite(v[i])) << "input " << i;
      EXPECT_LE(std::fabs(v[i] - expected), 1e-10 * scale)
          << "input " << i << ": " << v[i] << ", duals " << expected << ", scale " << scale;
      worst = std::max(worst, std::fabs(v[i] - expected) / scale);
    }
  }
  std::printf("    max |vjp - duals| / sum |C dJ| = %.2e\n", worst);
}

static_assert(myriad::generator_has_jacobian_vjp<LotkaVolterraSummaries>, "");
static_assert(myriad::generator_has_jacobian_vjp<Noisy<LotkaVolterraSummaries>>, "");

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
    const auto C = standard_normals(static_cast<int>(p) + 500, M * N);
    std::vector<double> v(N, 0.0), work(g.jacobian_vjp_workspace(), NAN);
    g.add_jacobian_vjp(u, myriad::dense_matrix(J.data(), M, N),
                       myriad::dense_matrix(C.data(), M, N), v, work);
    std::vector<Dual<double>> dual_storage(static_cast<std::size_t>(M) * N, Dual<double>(NAN));
    auto dual_j = myriad::dense_matrix(dual_storage.data(), M, N);
    for (int i = 0; i < N; ++i) {
      g.jacobian(myriad::SeededDualView<std::vector<double>>{u, i}, dual_j);
      double expected = 0, scale = 0;
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          expected += C[m * N + n] * dual_j(m, n).eps;
          scale += std::fabs(C[m * N + n] * dual_j(m, n).eps);
        }
      ASSERT_TRUE(std::isfinite(v[i])) << "input " << i;
      EXPECT_LE(std::fabs(v[i] - expected), 1e-10 * scale)
          << "input " << i << ": " << v[i] << ", duals " << expected << ", scale " << scale;
      worst = std::max(worst, std::fabs(v[i] - expected) / scale);
    }
  }
  std::printf("    max |vjp - duals| / sum |C dJ| = %.2e\n", worst);
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
  std::vector<S> l(static_cast<std::size_t>(K) * K, S(0));
  for (int a = 0; a < K; ++a)
    for (int c = 0; c <= a; ++c) {
      S sum = a == c ? S(1) : S(0);
      for (int i = 0; i < M; ++i) sum = sum + B(i, a) * B(i, c);
      for (int e = 0; e < c; ++e) sum = sum - l[a * K + e] * l[c * K + e];
      l[a * K + c] = a == c ? sqrt(sum) : sum / l[c * K + c];
    }
  for (int a = 0; a < K; ++a) half_log_det = half_log_det + log(l[a * K + a]);
  return half_log_det;
}

/// ½ log|J Jᵀ| of a dense generator in any scalar: J from jacobian(), G = J Jᵀ and its Cholesky
/// factor L, Σ log L_ii (the summaries' M = 9).
template <class Vec>
auto lotka_volterra_half_log_det(const LotkaVolterraSummaries& g, const Vec& u) {
  using S = std::decay_t<decltype(u[0])>;
  const int M = g.output_dim(), N = g.input_dim();
  std::vector<S> j(static_cast<std::size_t>(M) * N), l(static_cast<std::size_t>(M) * M, S(0));
  auto J = myriad::dense_matrix(j.data(), M, N);
  g.jacobian(u, J);
  S half_log_det = S(0);
  for (int a = 0; a < M; ++a)
    for (int c = 0; c <= a; ++c) {
      S sum = S(0);
      for (int n = 0; n < N; ++n) sum = sum + J(a, n) * J(c, n);
      for (int e = 0; e < c; ++e) sum = sum - l[a * M + e] * l[c * M + e];
      l[a * M + c] = a == c ? sqrt(sum) : sum / l[c * M + c];
      if (a == c) half_log_det = half_log_det + log(l[a * M + a]);
    }
  return half_log_det;
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
  /// φ(u) and ∇φ(u) by ConstrainedChain::evaluate_current.
  void evaluate(const G& g, const std::vector<double>& at) {
    u = at;
    const myriad::ChmcChain<double> view{
        {u.data(), 1, layout.n}, {grad.data(), 1, layout.n}, &potential,
        {work.data(), 1},        {dual.data(), 1},           {nested.data(), 1}};
    myriad::ConstrainedChain<G, double> machine(g, view);
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
          lotka_volterra_half_log_det(g, TripleSeededView<std::vector<double>>{u, n}).eps.eps.eps;
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
    const auto n = standard_normals(p + 400, extra);
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

TEST(GeneratorsJacobianVjp, ConstrainedHmcGradientAgreesWithTheDualPath) {
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
  EXPECT_EQ((myriad::chmc_layout<LotkaVolterraSummaries, double>(summaries).vjp_size),
            26 * 50 + 2);
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
