#pragma once
// Checks of a generator model (model/generator.hpp, constrained-hmc.md) shared by the tests of
// the built-in generators (tests/unit/models): its analytic Jacobian against forward-mode duals
// and against central finite differences with a bound derived from the step (truncation from
// third derivatives by triple duals, rounding from common/rounding_tape.hpp), its
// log_prior_gradient against duals, initialize() on the manifold, and the small helpers these
// need (outputs, residuals, dense Jacobians, prior draws as test points).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/rounding_tape.hpp"
#include "common/third_derivative.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/generator_autodiff.hpp"

namespace myriad::testing {

/// The seed of the generator tests' points (prior draws, standard normals).
inline constexpr std::uint64_t kGeneratorPointSeed = 20240611;

/// g(u).
template <class G>
std::vector<double> generate(const G& g, const std::vector<double>& u) {
  std::vector<double> x(g.output_dim());
  g.generate(u, x);
  return x;
}

/// ‖g(u) − x̄‖∞, or HUGE_VAL where an output is not finite.
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

/// The M × N Jacobian from g.jacobian(), row-major.
template <class G>
std::vector<double> dense_jacobian(const G& g, const std::vector<double>& u) {
  std::vector<double> storage(static_cast<std::size_t>(g.output_dim()) * g.input_dim(), NAN);
  auto J = myriad::dense_matrix(storage.data(), g.output_dim(), g.input_dim());
  g.jacobian(u, J);
  return storage;
}

/// The M × N Jacobian by forward-mode duals (model/generator_autodiff.hpp), row-major.
template <class G>
std::vector<double> dual_jacobian(const G& g, const std::vector<double>& u) {
  std::vector<double> storage(static_cast<std::size_t>(g.output_dim()) * g.input_dim(), NAN);
  auto J = myriad::dense_matrix(storage.data(), g.output_dim(), g.input_dim());
  myriad::jacobian_by_duals(g, u, J);
  return storage;
}

/// Worst observed agreement, printed for the record.
struct JacobianAgreement {
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
void expect_consistent_jacobian(const G& g, const std::vector<double>& u,
                                JacobianAgreement& agreement, FdInputs fd_inputs = {}) {
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
      g.generate(myriad::test::TripleSeededView<std::vector<double>>{u, n}, third);
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

/// expect_consistent_jacobian at point(0) … point(points − 1), the worst agreement printed and
/// recorded.
template <class G>
void check_jacobians(const G& g, const std::function<std::vector<double>(int)>& point,
                     FdInputs fd_inputs = {}, int points = 4) {
  JacobianAgreement agreement;
  for (int p = 0; p < points; ++p) {
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
  g.draw_prior(RandomStream(kGeneratorPointSeed, point), 0, Purpose::user, u);
  return u;
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

}  // namespace myriad::testing
