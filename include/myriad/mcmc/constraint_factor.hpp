#pragma once
// The constraint geometry at one point u of the manifold g_x(u) = x̄: the Jacobian J(u) and a
// factorisation of the Gram matrix G = J Jᵀ, in the representation the generator declares
// (model/generator.hpp). Constrained HMC needs only these operations of it
// (constrained-hmc.md §10, "Library primitives"):
//
//   evaluate(g, u)      J at u and the factorisation of G; false on rank loss / non-finite
//   apply(v, out)       out = J v                       (M)
//   apply_transpose     out = Jᵀ w                      (N)
//   gram_solve(v)       v ← G⁻¹ v
//   half_log_det()      ½ log|G| = Σ log L_ii
//   add_half_log_det_gradient(g, u, grad)   grad += ∇_u ½ log|J Jᵀ|   (§8)
//
// DenseConstraintFactor stores J (M × N) and the Cholesky factor L (M × M) in the chain's
// workspace. The structured representations (diagonal / triangular + low rank) implement the
// same interface.

#include <cstdint>

#include "myriad/core/dual.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/dense_ops.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"
#include "myriad/model/autodiff.hpp"
#include "myriad/model/generator.hpp"

namespace myriad {

/// J(u) of a generator into a matrix view: the generator's own generic-scalar Jacobian, or
/// N forward-mode passes of generate() (one per input direction).
template <class Generator, class Vec, class Jac, class Scratch>
MYRIAD_HD void evaluate_jacobian(const Generator& g, const Vec& u, Jac& jac, Scratch& outputs) {
  if constexpr (generator_has_jacobian<Generator>) {
    (void)outputs;
    g.jacobian(u, jac);
  } else {
    // outputs: an M-vector of duals (per-chain scratch).
    const int n = g.input_dim(), m = g.output_dim();
    for (int k = 0; k < n; ++k) {
      g.generate(SeededDualView<Vec>{u, k}, outputs);
      for (int i = 0; i < m; ++i) jac(i, k) = outputs[i].eps;
    }
  }
}

template <class T>
struct DenseConstraintFactor {
  MatrixView<T> jacobian;  ///< J, M × N
  MatrixView<T> chol;      ///< lower-triangular L with L Lᵀ = J Jᵀ, M × M
  int m;
  int n;

  /// Workspace elements for one factor.
  MYRIAD_HD static std::int64_t workspace_size(int m, int n, int /*k*/) {
    return static_cast<std::int64_t>(m) * n + static_cast<std::int64_t>(m) * m;
  }
  MYRIAD_HD static DenseConstraintFactor at(const ChainWorkspace<T>& ws, std::int64_t offset,
                                            int m, int n, int /*k*/) {
    return {ws.matrix(offset, m, n), ws.matrix(offset + static_cast<std::int64_t>(m) * n, m, m),
            m, n};
  }

  /// J at u and the Cholesky factor of J Jᵀ; false on a non-positive pivot or non-finite J.
  template <class Generator, class Vec, class DualScratch>
  MYRIAD_HD bool evaluate(const Generator& g, const Vec& u, DualScratch& dual_outputs) {
    evaluate_jacobian(g, u, jacobian, dual_outputs);
    linalg::gram_lower(jacobian.as_const(), chol);
    return linalg::cholesky_in_place(chol);
  }

  template <class Vec, class Out>
  MYRIAD_HD void apply(const Vec& v, Out& out) const {
    linalg::multiply(jacobian.as_const(), v, out);
  }
  template <class Vec, class Out>
  MYRIAD_HD void apply_transpose(const Vec& w, Out& out) const {
    linalg::multiply_transpose(jacobian.as_const(), w, out);
  }
  template <class Vec>
  MYRIAD_HD void gram_solve(Vec& v) const {
    linalg::solve_lower(chol.as_const(), v);
    linalg::solve_lower_transpose(chol.as_const(), v);
  }
  MYRIAD_HD T half_log_det() const {
    T sum = T(0);
    for (int i = 0; i < m; ++i) sum += myriad::log(chol(i, i));
    return sum;
  }

  /// grad += ∇_u ½ log|J Jᵀ| = Σ_mn C_mn ∂J_mn/∂u_i with C = G⁻¹J (constrained-hmc.md §8).
  /// C (M × N) goes into `c`; ∂J/∂u_i comes from the generic-scalar Jacobian evaluated on duals
  /// seeded along e_i (into `dual_jacobian`, M × N), or, without an analytic Jacobian, from
  /// nested duals of generate() (N² passes).
  template <class Generator, class Vec, class Grad, class DualMatrix, class DualScratch,
            class NestedScratch>
  MYRIAD_HD void add_half_log_det_gradient(const Generator& g, const Vec& u, Grad& grad,
                                           MatrixView<T> c, DualMatrix& dual_jacobian,
                                           DualScratch& dual_outputs,
                                           NestedScratch& nested_outputs) const {
    for (int col = 0; col < n; ++col) {
      ChainVector<T> column = c.column(col);
      for (int i = 0; i < m; ++i) column[i] = jacobian(i, col);
      gram_solve(column);
    }
    for (int i = 0; i < n; ++i) {
      T sum = T(0);
      if constexpr (generator_has_jacobian<Generator>) {
        (void)dual_outputs;
        (void)nested_outputs;
        g.jacobian(SeededDualView<Vec>{u, i}, dual_jacobian);
        for (int r = 0; r < m; ++r)
          for (int col = 0; col < n; ++col) sum += c(r, col) * dual_jacobian(r, col).eps;
      } else {
        (void)dual_jacobian;
        (void)dual_outputs;
        for (int col = 0; col < n; ++col) {
          g.generate(SeededNestedDualView<Vec>{u, i, col}, nested_outputs);
          for (int r = 0; r < m; ++r) sum += c(r, col) * nested_outputs[r].eps.eps;
        }
      }
      grad[i] += sum;
    }
  }
};

}  // namespace myriad
