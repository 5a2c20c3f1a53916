#pragma once
// The constraint geometry at one point u of the manifold g_x(u) = x̄: the Jacobian J(u) and a
// factorisation of the Gram matrix G = J Jᵀ, in the representation the generator declares
// (model/generator.hpp). Constrained HMC needs only these operations of it
// (constrained-hmc.md §10, "Library primitives"):
//
//   evaluate(g, u)      J at u and the factorisation of G; false on rank loss / non-finite
//                       (= form(g, u), J and G, then factor(), G = L Lᵀ in place: the two
//                       halves between which a batched factorisation across chains can run)
//   apply(v, out)       out = J v                       (M)
//   apply_transpose     out = Jᵀ w                      (N)
//   gram_solve(v)       v ← G⁻¹ v
//   half_log_det()      ½ log|G| = Σ log L_ii
//   add_half_log_det_gradient(g, u, grad)   grad += ∇_u ½ log|J Jᵀ|   (§8): C = G⁻¹J, then
//                       the generator's add_jacobian_vjp(u, J, C, …) when it has one
//                       (model/generator.hpp), else ∂J/∂u_i on dual numbers, one pass per input
//
// DenseConstraintFactor stores J (M × N) and the Cholesky factor L (M × M) in the chain's
// workspace. The structured representations (diagonal / triangular + low rank) implement the
// same interface.
//
// Teams (core/team.hpp). Every operation takes an optional team, the lanes that run one chain
// (a warp per chain: DESIGN.md rule 6(b)); all lanes call it with the same arguments and get
// the same result, fenced by team barriers on both sides. The dense factor shares its linear
// algebra out (linalg/team_ops.hpp: Gram, Cholesky, substitutions, products, and the columns
// of C = G⁻¹J by lane), bitwise equal to one lane. The generator's own functions (J, its
// vector-Jacobian product) and the structured factors' operations run on lane 0 while the others
// wait, which is correct for any generator but gains nothing; a generator without jacobian() is
// differentiated by forward passes of generate(), which the lanes share by input direction.
// With SerialTeam, the default, every operation is the one-lane code.

#include <cstdint>

#include "myriad/core/dual.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/team.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/dense_ops.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/structured_gram.hpp"
#include "myriad/linalg/team_ops.hpp"
#include "myriad/linalg/triangular.hpp"
#include "myriad/model/autodiff.hpp"
#include "myriad/model/generator.hpp"

namespace myriad {

/// J(u) of a generator into a matrix view, by a team: the generator's own generic-scalar
/// Jacobian on lane 0, or N forward-mode passes of generate() (one per input direction), column
/// k by lane k mod size into that lane's M-vector of duals `outputs`. Not fenced: the caller
/// syncs before (u) and after (J).
template <class Generator, class Vec, class Jac, class Scratch, class Team = SerialTeam>
MYRIAD_HD void evaluate_jacobian(const Generator& g, const Vec& u, Jac& jac, Scratch& outputs,
                                 const Team& team = Team{}) {
  if constexpr (generator_has_jacobian<Generator>) {
    (void)outputs;
    if (team.rank() == 0) g.jacobian(u, jac);
  } else {
    const int n = g.input_dim(), m = g.output_dim();
    for (int k = team.rank(); k < n; k += team.size()) {
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

  /// Workspace elements for one factor: J, and L unless the Gram matrices live outside the
  /// workspace (`gram_in_workspace` false: the batched factorisation, chmc.hpp).
  MYRIAD_HD static std::int64_t workspace_size(int m, int n, int /*k*/,
                                               bool gram_in_workspace = true) {
    return static_cast<std::int64_t>(m) * n +
           (gram_in_workspace ? static_cast<std::int64_t>(m) * m : 0);
  }
  /// The factor at `offset` of a workspace; L follows J there unless `gram` is given (an M × M
  /// view elsewhere, e.g. one matrix of a column-major batch).
  MYRIAD_HD static DenseConstraintFactor at(const ChainWorkspace<T>& ws, std::int64_t offset, int m,
                                            int n, int /*k*/, const MatrixView<T>* gram = nullptr) {
    return {ws.matrix(offset, m, n),
            gram != nullptr ? *gram : ws.matrix(offset + static_cast<std::int64_t>(m) * n, m, m), m,
            n};
  }

  /// J at u and the Cholesky factor of J Jᵀ; false on a non-positive pivot or non-finite J
  /// (with T a SIMD batch of chains, core/lanes.hpp: the mask of the lanes that succeeded).
  template <class Generator, class Vec, class DualScratch, class Team = SerialTeam>
  MYRIAD_HD lane_mask_t<T> evaluate(const Generator& g, const Vec& u, DualScratch& dual_outputs,
                                    const Team& team = Team{}) {
    form(g, u, dual_outputs, team);  // always true
    return factor(team);
  }

  /// The first half of evaluate(): J at u and the lower triangle of G = J Jᵀ in `chol`, to be
  /// factored in place by factor() or by a batched Cholesky across chains. Always true (a
  /// non-finite J shows as a failed factorisation).
  template <class Generator, class Vec, class DualScratch, class Team = SerialTeam>
  MYRIAD_HD bool form(const Generator& g, const Vec& u, DualScratch& dual_outputs,
                      const Team& team = Team{}) {
    team.sync();
    evaluate_jacobian(g, u, jacobian, dual_outputs, team);
    linalg::team_gram_lower(team, jacobian.as_const(), chol);
    return true;
  }

  /// The second half: G = L Lᵀ in place; false on a non-positive or non-finite pivot (per lane
  /// for a SIMD batch of chains, whose lanes are never also a team's).
  template <class Team = SerialTeam>
  MYRIAD_HD lane_mask_t<T> factor(const Team& team = Team{}) {
    if constexpr ((lane_width_v<T>) > 1) {
      static_assert(Team::kSerial, "chains in SIMD lanes run one lane of a team each");
      return !linalg::cholesky_in_place_lanes(chol);
    } else {
      return linalg::team_cholesky_in_place(team, chol);
    }
  }

  template <class Vec, class Out, class Team = SerialTeam>
  MYRIAD_HD void apply(const Vec& v, Out& out, const Team& team = Team{}) const {
    linalg::team_multiply(team, jacobian.as_const(), v, out);
  }
  template <class Vec, class Out, class Team = SerialTeam>
  MYRIAD_HD void apply_transpose(const Vec& w, Out& out, const Team& team = Team{}) const {
    linalg::team_multiply_transpose(team, jacobian.as_const(), w, out);
  }
  template <class Vec, class Team = SerialTeam>
  MYRIAD_HD void gram_solve(Vec& v, const Team& team = Team{}) const {
    linalg::team_solve_lower(team, chol.as_const(), v);
    linalg::team_solve_lower_transpose(team, chol.as_const(), v);
  }
  /// Every lane sums all M logs in order (the same bits in every lane; O(M) against the O(M²N)
  /// of forming the factor).
  template <class Team = SerialTeam>
  MYRIAD_HD T half_log_det(const Team& team = Team{}) const {
    team.sync();
    T sum = T(0);
    for (int i = 0; i < m; ++i) sum += myriad::log(chol(i, i));
    return sum;
  }

  /// grad += ∇_u ½ log|J Jᵀ| = Σ_mn C_mn ∂J_mn/∂u_i with C = G⁻¹J (constrained-hmc.md §8).
  /// C (M × N) goes into `c`, its columns dealt to the lanes; then the generator's
  /// add_jacobian_vjp(u, J, C, grad, vjp_work) if it has one, else ∂J/∂u_i from the
  /// generic-scalar Jacobian evaluated on duals seeded along e_i (into `dual_jacobian`, M × N),
  /// both on lane 0, or, without an analytic Jacobian, from nested duals of generate() (N²
  /// passes), gradient element i by lane i mod size into that lane's `nested_outputs`.
  template <class Generator, class Vec, class Grad, class DualMatrix, class DualScratch,
            class NestedScratch, class Team = SerialTeam>
  MYRIAD_HD void add_half_log_det_gradient(const Generator& g, const Vec& u, Grad& grad,
                                           MatrixView<T> c, DualMatrix& dual_jacobian,
                                           DualScratch& dual_outputs, NestedScratch& nested_outputs,
                                           ChainVector<T> vjp_work,
                                           const Team& team = Team{}) const {
    team.sync();
    // Each column solved whole by one lane with the one-lane substitutions: the one-lane bits.
    for (int col = team.rank(); col < n; col += team.size()) {
      ChainVector<T> column = c.column(col);
      for (int i = 0; i < m; ++i) column[i] = jacobian(i, col);
      gram_solve(column);
    }
    team.sync();
    if constexpr (generator_has_jacobian_vjp<Generator>) {
      (void)dual_jacobian;
      (void)dual_outputs;
      (void)nested_outputs;
      if (team.rank() == 0)
        g.add_jacobian_vjp(u, jacobian.as_const(), c.as_const(), grad, vjp_work);
    } else if constexpr (generator_has_jacobian<Generator>) {
      (void)vjp_work;
      // One M × N dual Jacobian per pass: lane 0 alone (a copy per lane would cost 32 of them).
      if (team.rank() == 0)
        add_contraction_by_duals(g, u, grad, c, dual_jacobian, dual_outputs, nested_outputs);
    } else {
      (void)vjp_work;
      add_contraction_by_duals(g, u, grad, c, dual_jacobian, dual_outputs, nested_outputs, team);
    }
    team.sync();
  }

 private:
  // grad_i += Σ_mn C_mn ∂J_mn/∂u_i with ∂J/∂u_i on duals: N passes of jacobian(), or N² of
  // generate() on nested duals; element i by lane i mod size.
  template <class Generator, class Vec, class Grad, class DualMatrix, class DualScratch,
            class NestedScratch, class Team = SerialTeam>
  MYRIAD_HD void add_contraction_by_duals(const Generator& g, const Vec& u, Grad& grad,
                                          MatrixView<T> c, DualMatrix& dual_jacobian,
                                          DualScratch& dual_outputs, NestedScratch& nested_outputs,
                                          const Team& team = Team{}) const {
    for (int i = team.rank(); i < n; i += team.size()) {
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

/// x lifted to duals with tangent 1 in every coordinate from `first` on (a compressed seed).
template <class Vec>
struct SeededTailDualView {
  using T = element_t<Vec>;
  const Vec& x;
  int first;
  MYRIAD_HD Dual<T> operator[](int i) const { return Dual<T>(x[i], i >= first ? T(1) : T(0)); }
};

/// The diagonal of a square block, written by structured_jacobian as noise[m] (or noise(m)).
template <class T>
struct DiagonalView {
  T* data;
  std::int64_t stride;
  int size;
  MYRIAD_HD T& operator[](int i) const { return data[static_cast<std::int64_t>(i) * stride]; }
  MYRIAD_HD T& operator()(int i) const { return (*this)[i]; }
};

/// J = [B T] with B = ∂x/∂u₁ (M × K) and T = ∂x/∂u₂ diagonal or lower triangular
/// (constrained-hmc.md §10.1, §10.2). J is stored in the dense M × N layout, but only the B
/// block and the diagonal (or lower triangle) of the T block are written or read, and every
/// product and solve uses the structure: O(MK + M) (diagonal) or O(MK + M²/2) (triangular)
/// per J v, and the Gram factorisations of linalg/structured_gram.hpp.
template <class T, GramStructure Structure>
struct StructuredConstraintFactor {
  static constexpr bool kDiagonal = Structure == GramStructure::diagonal_plus_low_rank;
  using Gram = std::conditional_t<kDiagonal, linalg::DiagonalPlusLowRankGram<T>,
                                  linalg::TriangularPlusLowRankGram<T>>;

  MatrixView<T> jacobian;  ///< [B T], M × N (N = K + M)
  ChainWorkspace<T> work;
  std::int64_t gram_offset;
  int m;
  int n;
  int k;

  MYRIAD_HD static std::int64_t workspace_size(int m, int n, int k) {
    return static_cast<std::int64_t>(m) * n + Gram::workspace_size(m, k);
  }
  MYRIAD_HD static StructuredConstraintFactor at(const ChainWorkspace<T>& ws, std::int64_t offset,
                                                 int m, int n, int k) {
    return {ws.matrix(offset, m, n), ws, offset + static_cast<std::int64_t>(m) * n, m, n, k};
  }

  MYRIAD_HD Gram gram() const {
    return Gram::from_jacobian(jacobian.as_const(), k, work, gram_offset);
  }

  /// The T block of a J-shaped matrix as structured_jacobian writes it: its diagonal, or all of
  /// it (lower triangle); the B block is linalg::parameter_block.
  template <class S>
  MYRIAD_HD static auto noise_block(MatrixView<S> j, int k) {
    if constexpr (kDiagonal) {
      const ChainVector<S> diagonal = linalg::noise_diagonal(j, k);
      return DiagonalView<S>{diagonal.data, diagonal.stride, diagonal.size};
    } else {
      return linalg::noise_block(j, k);
    }
  }

  template <class Generator, class Vec, class DualScratch, class Team = SerialTeam>
  MYRIAD_HD lane_mask_t<T> evaluate(const Generator& g, const Vec& u, DualScratch& /*dual_outputs*/,
                                    const Team& team = Team{}) {
    return on_lane_zero(team, [&] {
      MatrixView<T> b = linalg::parameter_block(jacobian, k);
      auto t = noise_block(jacobian, k);
      g.structured_jacobian(u, b, t);
      return gram().factor();
    });
  }
  /// The dense factor's two halves: a structured Gram is factored in O(MK) or O(M²K) by its own
  /// algorithm (linalg/structured_gram.hpp) and never batched, so form() does all of evaluate()
  /// and factor() has nothing left to do.
  template <class Generator, class Vec, class DualScratch, class Team = SerialTeam>
  MYRIAD_HD lane_mask_t<T> form(const Generator& g, const Vec& u, DualScratch& dual_outputs,
                                const Team& team = Team{}) {
    return evaluate(g, u, dual_outputs, team);
  }
  template <class Team = SerialTeam>
  MYRIAD_HD lane_mask_t<T> factor(const Team& /*team*/ = Team{}) {
    return lane_mask_t<T>(true);
  }

  /// out = B v₁ + T v₂.
  template <class Vec, class Out, class Team = SerialTeam>
  MYRIAD_HD void apply(const Vec& v, Out& out, const Team& team = Team{}) const {
    on_lane_zero(team, [&] {
      for (int i = 0; i < m; ++i) {
        T sum = T(0);
        for (int p = 0; p < k; ++p) sum += jacobian(i, p) * v[p];
        if constexpr (kDiagonal) {
          sum += jacobian(i, k + i) * v[k + i];
        } else {
          for (int j = 0; j <= i; ++j) sum += jacobian(i, k + j) * v[k + j];
        }
        out[i] = sum;
      }
    });
  }
  /// out = [Bᵀ w; Tᵀ w].
  template <class Vec, class Out, class Team = SerialTeam>
  MYRIAD_HD void apply_transpose(const Vec& w, Out& out, const Team& team = Team{}) const {
    on_lane_zero(team, [&] {
      for (int p = 0; p < k; ++p) {
        T sum = T(0);
        for (int i = 0; i < m; ++i) sum += jacobian(i, p) * w[i];
        out[p] = sum;
      }
      for (int j = 0; j < m; ++j) {
        if constexpr (kDiagonal) {
          out[k + j] = jacobian(j, k + j) * w[j];
        } else {
          T sum = T(0);
          for (int i = j; i < m; ++i) sum += jacobian(i, k + j) * w[i];
          out[k + j] = sum;
        }
      }
    });
  }
  template <class Vec, class Team = SerialTeam>
  MYRIAD_HD void gram_solve(Vec& v, const Team& team = Team{}) const {
    on_lane_zero(team, [&] { gram().solve(v); });
  }
  /// Every lane reads the factor (the same bits in every lane).
  template <class Team = SerialTeam>
  MYRIAD_HD T half_log_det(const Team& team = Team{}) const {
    team.sync();
    return T(0.5) * gram().log_det();
  }

  /// grad += Σ_mn C_mn ∂J_mn/∂u_i, C = G⁻¹J, summed over the structurally non-zero entries only.
  /// C goes into `c` on J's structure: for the diagonal form C_B by K solves and of the noise
  /// columns only C_{j, K+j} = (G⁻¹)_jj d_j; for the triangular form C_B and the lower triangle
  /// of C_T by TriangularPlusLowRankGram::solve_jacobian, O(KM²). Then the generator's
  /// add_jacobian_vjp(u, J, C, grad, vjp_work) if it has one, else ∂J/∂u_i from
  /// structured_jacobian evaluated on duals seeded along e_i (K + 1 compressed passes for the
  /// diagonal form, N for the triangular one).
  template <class Generator, class Vec, class Grad, class DualMatrix, class DualScratch,
            class NestedScratch, class Team = SerialTeam>
  MYRIAD_HD void add_half_log_det_gradient(const Generator& g, const Vec& u, Grad& grad,
                                           MatrixView<T> c, DualMatrix& dual_jacobian,
                                           DualScratch& /*dual_outputs*/,
                                           NestedScratch& /*nested_outputs*/,
                                           ChainVector<T> vjp_work,
                                           const Team& team = Team{}) const {
    on_lane_zero(team, [&] {
      const Gram factor = gram();
      if constexpr (kDiagonal) {
        for (int col = 0; col < k; ++col) {
          ChainVector<T> column = c.column(col);
          for (int i = 0; i < m; ++i) column[i] = jacobian(i, col);
          factor.solve(column);
        }
        for (int j = 0; j < m; ++j) c(j, k + j) = factor.inverse_diagonal(j) * jacobian(j, k + j);
      } else {
        factor.solve_jacobian(c);
      }
      if constexpr (generator_has_jacobian_vjp<Generator>) {
        (void)dual_jacobian;
        g.add_jacobian_vjp(u, jacobian.as_const(), c.as_const(), grad, vjp_work);
      } else {
        (void)vjp_work;
        add_contraction_by_duals(g, u, grad, c, dual_jacobian);
      }
    });
  }

 private:
  // grad_i += Σ_mn C_mn ∂J_mn/∂u_i over J's structure with ∂J/∂u_i from structured_jacobian on
  // duals seeded along e_i.
  template <class Generator, class Vec, class Grad, class DualMatrix>
  MYRIAD_HD void add_contraction_by_duals(const Generator& g, const Vec& u, Grad& grad,
                                          MatrixView<T> c, DualMatrix& dual_jacobian) const {
    auto dual_b = linalg::parameter_block(dual_jacobian, k);
    auto dual_t = noise_block(dual_jacobian, k);
    if constexpr (kDiagonal) {
      // Diagonal T everywhere means x_m depends on u₁ and u₂ₘ only, so row m of J does too.
      // One pass seeded along every noise input at once (compressed forward mode,
      // Curtis–Powell–Reid) then gives ∂(row m)/∂u₂ₘ for all m: K + 1 passes instead of N.
      g.structured_jacobian(SeededTailDualView<Vec>{u, k}, dual_b, dual_t);
      for (int r = 0; r < m; ++r) {
        T sum = c(r, k + r) * dual_t[r].eps;
        for (int p = 0; p < k; ++p) sum += c(r, p) * dual_b(r, p).eps;
        grad[k + r] += sum;
      }
    }
    const int seeds = kDiagonal ? k : n;
    for (int i = 0; i < seeds; ++i) {
      g.structured_jacobian(SeededDualView<Vec>{u, i}, dual_b, dual_t);
      T sum = T(0);
      for (int r = 0; r < m; ++r) {
        for (int p = 0; p < k; ++p) sum += c(r, p) * dual_b(r, p).eps;
        if constexpr (kDiagonal) {
          sum += c(r, k + r) * dual_t[r].eps;
        } else {
          for (int j = 0; j <= r; ++j) sum += c(r, k + j) * dual_t(r, j).eps;
        }
      }
      grad[i] += sum;
    }
  }
};

}  // namespace myriad
