#pragma once
// Structured Gram matrices of directed generative models (constrained-hmc.md §10). When the
// Jacobian of the generator splits as J = [B T] with B = ∂x/∂u₁ dense M × K (K "parameter"
// inputs) and T = ∂x/∂u₂ M × M (one noise input per observation), then
//   G = J Jᵀ = B Bᵀ + T Tᵀ,
// and log|G| and G⁻¹v cost O(MK² + K³) to set up and O(MK) (diagonal T) or O(M² + MK)
// (triangular T) per solve, instead of the M³/6 of a dense Cholesky: for the generalised-lambda
// model (M = 250, K = 4) about 4k multiply-adds against 16M (§10.1). No M × M matrix is formed.
//
// Both factorisations are small structs of views built from one chain's ChainWorkspace
// (linalg/matrix_view.hpp) at an element offset; `workspace_size(M, K)` gives the elements they
// use there. `factor()` computes the factorisation into the workspace; log_det(), solve(),
// solve_columns() and (diagonal case) inverse_diagonal() then read it. Everything lives in the
// workspace (the cached log-determinant included), so a struct rebuilt over the same views in a
// later kernel launch sees the same factorisation. The methods use a K-element scratch inside the
// workspace: one chain's struct must not be used by two threads at once.
//
// Conditioning. Both reduce G to the K × K capacitance S, which is I plus a positive
// semi-definite matrix, hence SPD with λ_min(S) ≥ 1 in exact arithmetic: its Cholesky fails only
// on overflow or non-finite input. The accuracy of solve() is that of a backward-stable solve with
// G, ‖Δx‖/‖x‖ ≲ c · M · κ₂(G) · u, but ‖S‖ grows like ‖B‖²/min d_i², so tiny d_i (or tiny T_ii)
// make S, and with it G, ill-conditioned (§10.1, last bullet).

#include <cstdint>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/dense_ops.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"

namespace myriad::linalg {

/// The same vector, read-only.
template <class T>
MYRIAD_HD ChainVector<const T> read_only(ChainVector<T> v) {
  return {v.data, v.stride, v.size};
}

/// The blocks of a Jacobian J = [B T] (M × (K + M), the K parameter inputs first): B, its first K
/// columns;
template <class S>
MYRIAD_HD MatrixView<S> parameter_block(MatrixView<S> j, int k) {
  return {j.data, j.rows, k, j.row_stride, j.col_stride};
}

/// T, the remaining M × M block;
template <class S>
MYRIAD_HD MatrixView<S> noise_block(MatrixView<S> j, int k) {
  return {j.data + static_cast<std::int64_t>(k) * j.col_stride, j.rows, j.rows, j.row_stride,
          j.col_stride};
}

/// and T's diagonal J(i, K + i), all of T when T is diagonal.
template <class S>
MYRIAD_HD ChainVector<S> noise_diagonal(MatrixView<S> j, int k) {
  const MatrixView<S> t = noise_block(j, k);
  return {t.data, t.row_stride + t.col_stride, t.rows};
}

namespace detail {

/// s ← I_K + Σ_{i<m} r_i r_iᵀ (lower triangle of the K × K `s` only): the capacitance of both
/// structured Gram matrices. `row_of(i)` gives the K-vector r_i (a row of W, or a scaled row of B
/// that it writes into scratch), read once per row.
template <class T, class RowOf>
MYRIAD_HD void identity_plus_gram_of_rows(int m, const RowOf& row_of, MatrixView<T> s) {
  const int k = s.cols;
  for (int a = 0; a < k; ++a)
    for (int c = 0; c <= a; ++c) s(a, c) = a == c ? T(1) : T(0);
  for (int i = 0; i < m; ++i) {
    const auto r = row_of(i);
    for (int a = 0; a < k; ++a) {
      const T r_a = r[a];
      for (int c = 0; c <= a; ++c) s(a, c) += r_a * r[c];
    }
  }
}

/// log_sum += Σ_{i<m} log x(i) for a diagonal that must be positive and finite. With one chain,
/// false at the first entry that is not (the factorisation has failed); with SIMD lanes
/// (core/lanes.hpp) such lanes are cleared in `ok` and add log 1, and the result is true.
template <class T, class Diagonal>
MYRIAD_HD bool add_log_positive_diagonal(const Diagonal& x, int m, T& log_sum, lane_mask_t<T>& ok) {
  for (int i = 0; i < m; ++i) {
    const T x_i = x(i);
    const lane_mask_t<T> positive = x_i > T(0) && isfinite(x_i);
    if constexpr (lane_width_v<T> == 1) {
      if (!positive) return false;
      log_sum += log(x_i);
    } else {
      ok = ok && positive;
      log_sum += log(LaneOps<T>::select(positive, x_i, T(1)));
    }
  }
  return true;
}

/// Cholesky of the capacitance S in place: with one chain, false if it fails; with SIMD lanes the
/// failed lanes are cleared in `ok` and the result is true.
template <class T>
MYRIAD_HD bool factor_capacitance(MatrixView<T> s, lane_mask_t<T>& ok) {
  if constexpr (lane_width_v<T> == 1) {
    return cholesky_in_place(s);
  } else {
    ok = ok && !cholesky_in_place_lanes(s);
    return true;
  }
}

/// The capacitance half of both structured Gram matrices, their base: the K × K capacitance S
/// (L_S after factor_with()), a K-element scratch and the cached log|G|, which fill size(K)
/// workspace elements from `offset` in that order, and the factorisation
///   log|G| = 2 Σ_i log x_i + log|S|
/// with x the diagonal of the noise block (d, or T's diagonal).
template <class T>
struct CapacitanceFactor {
  /// S = I + Σ_i r_i r_iᵀ; after factor_with(), L_S in its lower triangle.
  MatrixView<T> capacitance;
  ChainVector<T> scratch;  ///< K elements
  T* log_det_cache;        ///< the workspace element holding log|G| after factor_with()

  /// Workspace elements for K parameter inputs.
  MYRIAD_HD static constexpr std::int64_t size(int k) {
    return static_cast<std::int64_t>(k) * k + k + 1;
  }

  MYRIAD_HD CapacitanceFactor(ChainWorkspace<T> workspace, std::int64_t offset, int k)
      : capacitance(workspace.matrix(offset, k, k)),
        scratch(workspace.vector(offset + static_cast<std::int64_t>(k) * k, k)),
        log_det_cache(&workspace[offset + size(k) - 1]) {}

  /// Checks that x(0) … x(m − 1) are positive and finite and sums their logs, lets
  /// `form_capacitance` write S, factors S in place and caches log|G|. False (or the mask of the
  /// lanes that succeeded) as the Gram matrices' factor() documents.
  template <class Diagonal, class FormCapacitance>
  MYRIAD_HD lane_mask_t<T> factor_with(const Diagonal& x, int m,
                                       const FormCapacitance& form_capacitance) const {
    lane_mask_t<T> ok(true);
    T log_x = T(0);
    if (!add_log_positive_diagonal(x, m, log_x, ok)) return false;
    form_capacitance();
    if (!factor_capacitance(capacitance, ok)) return false;
    const T log_det_g = T(2) * log_x + log_det_from_cholesky(capacitance);
    *log_det_cache = log_det_g;
    return ok && isfinite(log_det_g);
  }

  /// log|G| = log|J Jᵀ| (after a successful factor()).
  MYRIAD_HD T log_det() const { return *log_det_cache; }
};

}  // namespace detail

/// G = B Bᵀ + diag(d²) for J = [B diag(d)], d > 0: independent observations with one scalar
/// noise input each (constrained-hmc.md §10.1, generalised-lambda model). With D = diag(d²) and
/// the K × K capacitance S = I_K + Bᵀ D⁻¹ B = L_S L_Sᵀ,
///   log|G| = Σ_i log d_i² + 2 Σ_j log (L_S)_jj         (matrix determinant lemma:
///            |D + B Bᵀ| = |D| · |I_K + Bᵀ D⁻¹ B|; Harville, Matrix Algebra from a
///            Statistician's Perspective, Thm 18.1.1),
///   G⁻¹ v  = D⁻¹ v − D⁻¹ B S⁻¹ Bᵀ D⁻¹ v                 (Woodbury identity; Golub & Van Loan,
///            Matrix Computations, 4th ed., §2.1.4).
/// S is accumulated from the scaled rows b_i / d_i, which keeps 1/d_i² out of the arithmetic.
///
/// Workspace at `offset` (elements): [0, K²) S and then L_S (K × K, row-major in the element
/// index, lower triangle), [K², K² + K) scratch, [K² + K] log|G|.
template <class T>
struct DiagonalPlusLowRankGram : detail::CapacitanceFactor<T> {
  using CapacitanceFactor = detail::CapacitanceFactor<T>;
  using CapacitanceFactor::capacitance;  // S = I + Bᵀ D⁻¹ B
  using CapacitanceFactor::scratch;

  MatrixView<const T> b;   ///< B, M × K
  ChainVector<const T> d;  ///< d, M (G's noise block is diag(d)²)

  /// Elements of the workspace used for M observations and K parameter inputs.
  MYRIAD_HD static constexpr std::int64_t workspace_size(int m, int k) {
    static_cast<void>(m);  // S and the scratch are K-sized; B and d are the caller's
    return CapacitanceFactor::size(k);
  }

  /// Views over B, d and the chain's workspace at element `offset`.
  MYRIAD_HD DiagonalPlusLowRankGram(MatrixView<const T> b_block, ChainVector<const T> diagonal,
                                    ChainWorkspace<T> workspace, std::int64_t offset)
      : CapacitanceFactor(workspace, offset, b_block.cols), b(b_block), d(diagonal) {}

  /// From the M × (K + M) Jacobian J = [B diag(d)]: B is its first K columns and d the
  /// diagonal of the remaining M × M block, J(i, K + i). The off-diagonal entries of that
  /// block are not read (they are zero for this structure).
  MYRIAD_HD static DiagonalPlusLowRankGram from_jacobian(MatrixView<const T> j, int k,
                                                         ChainWorkspace<T> workspace,
                                                         std::int64_t offset) {
    return {parameter_block(j, k), noise_diagonal(j, k), workspace, offset};
  }

  /// Forms and factors S and caches log|G|. False (and the chain's Gram matrix unusable) when
  /// some d_i is not positive and finite, S is not numerically positive definite, or log|G| is
  /// not finite. O(MK² + K³).
  ///
  /// With T a SIMD batch of chains (core/lanes.hpp): the mask of the lanes that succeeded; a
  /// failed lane goes on with harmless values (its result is meaningless, as one chain's is).
  MYRIAD_HD lane_mask_t<T> factor() const {
    // S = I + Σ_i (b_i / d_i)(b_i / d_i)ᵀ, one scaled row of B at a time in the scratch.
    const auto scaled_row = [&](int i) {
      const T inverse_d_i = T(1) / d[i];
      for (int a = 0; a < b.cols; ++a) scratch[a] = b(i, a) * inverse_d_i;
      return scratch;
    };
    const auto form_capacitance = [&] {
      detail::identity_plus_gram_of_rows(b.rows, scaled_row, capacitance);
    };
    // log|G| = Σ log d_i² + log|S|.
    return this->factor_with([&](int i) { return T(d[i]); }, b.rows, form_capacitance);
  }

  /// v ← G⁻¹ v = D⁻¹ v − D⁻¹ B S⁻¹ Bᵀ D⁻¹ v (Woodbury), in place, for any indexable v of length M.
  /// 2MK + M multiply-adds, M divisions and 2 triangular solves of size K.
  template <class Vector>
  MYRIAD_HD void solve(Vector&& v) const {
    const int m = b.rows;
    const int k = b.cols;
    for (int i = 0; i < m; ++i) v[i] = v[i] / (d[i] * d[i]);  // y = D⁻¹ v
    for (int a = 0; a < k; ++a) scratch[a] = T(0);            // z = Bᵀ y
    for (int i = 0; i < m; ++i) {
      const T y_i = v[i];
      for (int a = 0; a < k; ++a) scratch[a] += b(i, a) * y_i;
    }
    cholesky_solve(capacitance.as_const(), scratch);  // z ← S⁻¹ z
    for (int i = 0; i < m; ++i) {                     // v = y − D⁻¹ B z
      T bz = T(0);
      for (int a = 0; a < k; ++a) bz += b(i, a) * scratch[a];
      v[i] -= bz / (d[i] * d[i]);
    }
  }

  /// V ← G⁻¹ V for an M × r matrix (e.g. C = G⁻¹ J of the log-determinant gradient, §8).
  template <class U>
  MYRIAD_HD void solve_columns(MatrixView<U> v) const {
    for (int c = 0; c < v.cols; ++c) solve(v.column(c));
  }

  /// (G⁻¹)_mm = (1 − b̃_mᵀ S⁻¹ b̃_m) / d_m² with b̃_m = b_m / d_m the scaled row m of B (the
  /// diagonal of the Woodbury form above; b̃ᵀ S⁻¹ b̃ = ‖L_S⁻¹ b̃‖²). These are the weights of the
  /// log-determinant gradient when output m couples only u₁ and u₂,m (constrained-hmc.md §8,
  /// "structured models"). O(K²). Relative accuracy degrades like u / (1 − b̃ᵀ S⁻¹ b̃) when
  /// d_m ≪ ‖b_m‖, where the subtraction cancels.
  MYRIAD_HD T inverse_diagonal(int m) const {
    const int k = b.cols;
    const T inverse_d_m = T(1) / d[m];
    for (int a = 0; a < k; ++a) scratch[a] = b(m, a) * inverse_d_m;
    solve_lower(capacitance.as_const(), scratch);
    T t = T(0);
    for (int a = 0; a < k; ++a) t += scratch[a] * scratch[a];
    return (T(1) - t) * (inverse_d_m * inverse_d_m);
  }
};

/// G = B Bᵀ + T Tᵀ for J = [B T] with T lower triangular with positive diagonal: Markov
/// observations with their noise inputs ordered like the outputs (constrained-hmc.md §10.2,
/// Lotka–Volterra). T is then the Cholesky factor of T Tᵀ. With W = T⁻¹ B (M × K, K triangular
/// solves) G = T (I_M + W Wᵀ) Tᵀ, and with S = I_K + Wᵀ W = L_S L_Sᵀ:
///   log|G| = 2 Σ_i log T_ii + log|S|                      (|I_M + W Wᵀ| = |I_K + Wᵀ W|, the
///            matrix determinant lemma / Sylvester's identity),
///   G⁻¹ v  = T⁻ᵀ (I − W S⁻¹ Wᵀ) T⁻¹ v                      (Woodbury on I_M + W Wᵀ),
/// the parallel alternative ([derived] in §10.2) to K sequential rank-1 updates of T.
/// O(KM² + MK² + K³) to factor; each solve is two triangular solves of size M plus O(MK).
///
/// Workspace at `offset` (elements): [0, MK) W (M × K, row-major in the element index),
/// [MK, MK + K²) S and then L_S, [MK + K², MK + K² + K) scratch, [MK + K² + K] log|G|.
template <class T>
struct TriangularPlusLowRankGram : detail::CapacitanceFactor<T> {
  using CapacitanceFactor = detail::CapacitanceFactor<T>;
  using CapacitanceFactor::capacitance;  // S = I + Wᵀ W
  using CapacitanceFactor::scratch;

  MatrixView<const T> b;  ///< B, M × K
  MatrixView<const T> t;  ///< T, M × M lower triangular (the strict upper triangle is not read)
  MatrixView<T> w;        ///< W = T⁻¹ B after factor()

  /// Elements of the workspace used for M observations and K parameter inputs.
  MYRIAD_HD static constexpr std::int64_t workspace_size(int m, int k) {
    return static_cast<std::int64_t>(m) * k + CapacitanceFactor::size(k);
  }

  /// Views over B, T and the chain's workspace at element `offset`.
  MYRIAD_HD TriangularPlusLowRankGram(MatrixView<const T> b_block,
                                      MatrixView<const T> triangular_block,
                                      ChainWorkspace<T> workspace, std::int64_t offset)
      : CapacitanceFactor(workspace,
                          offset + static_cast<std::int64_t>(b_block.rows) * b_block.cols,
                          b_block.cols),
        b(b_block),
        t(triangular_block),
        w(workspace.matrix(offset, b_block.rows, b_block.cols)) {}

  /// From the M × (K + M) Jacobian J = [B T]: B is its first K columns, T the remaining M × M
  /// block.
  MYRIAD_HD static TriangularPlusLowRankGram from_jacobian(MatrixView<const T> j, int k,
                                                           ChainWorkspace<T> workspace,
                                                           std::int64_t offset) {
    return {parameter_block(j, k), noise_block(j, k), workspace, offset};
  }

  /// Computes W = T⁻¹ B, forms and factors S, and caches log|G|. False when some T_ii is not
  /// positive and finite, S is not numerically positive definite (e.g. W overflowed), or log|G|
  /// is not finite. O(KM² + MK² + K³).
  ///
  /// With T a SIMD batch of chains: the mask of the lanes that succeeded (as the diagonal case).
  MYRIAD_HD lane_mask_t<T> factor() const {
    const auto form_capacitance = [&] {
      for (int i = 0; i < b.rows; ++i)
        for (int a = 0; a < b.cols; ++a) w(i, a) = b(i, a);
      solve_lower_columns(t, w);  // W = T⁻¹ B
      detail::identity_plus_gram_of_rows(
          b.rows, [&](int i) { return w.row(i); }, capacitance);
    };
    // log|G| = log|T|² + log|S|.
    return this->factor_with([&](int i) { return T(t(i, i)); }, b.rows, form_capacitance);
  }

  /// v ← G⁻¹ v = T⁻ᵀ (v' − W S⁻¹ Wᵀ v') with v' = T⁻¹ v, in place, for any indexable v of
  /// length M. M² + 2MK multiply-adds and 2 triangular solves of size K.
  template <class Vector>
  MYRIAD_HD void solve(Vector&& v) const {
    solve_lower(t, v);                                // v' = T⁻¹ v
    multiply_transpose(w.as_const(), v, scratch);     // z = Wᵀ v'
    cholesky_solve(capacitance.as_const(), scratch);  // z ← S⁻¹ z
    const int k = b.cols;
    for (int i = 0; i < b.rows; ++i) {  // v' ← v' − W z
      T wz = T(0);
      for (int a = 0; a < k; ++a) wz += w(i, a) * scratch[a];
      v[i] -= wz;
    }
    solve_lower_transpose(t, v);  // v ← T⁻ᵀ v'
  }

  /// V ← G⁻¹ V for an M × r matrix (e.g. C = G⁻¹ J of the log-determinant gradient, §8).
  template <class U>
  MYRIAD_HD void solve_columns(MatrixView<U> v) const {
    for (int c = 0; c < v.cols; ++c) solve(v.column(c));
  }

  /// C = G⁻¹ J for J = [B T], the cotangent of the log-determinant gradient (§8), on J's
  /// structure: into the M × (K + M) matrix `c`, its first K columns C_B = G⁻¹ B and the lower
  /// triangle (diagonal included) of C_T = G⁻¹ T in the remaining M × M block; the strict upper
  /// triangle of that block is not written. From G⁻¹ = T⁻ᵀ (I + W Wᵀ)⁻¹ T⁻¹ and the push-through
  /// identity (I + W Wᵀ)⁻¹ W = W S⁻¹ ([derived]):
  ///   C_B = T⁻ᵀ (I + W Wᵀ)⁻¹ W = T⁻ᵀ W S⁻¹,
  ///   C_T = T⁻ᵀ (I + W Wᵀ)⁻¹ = T⁻ᵀ (I − W S⁻¹ Wᵀ) = T⁻ᵀ − C_B Wᵀ,
  /// and T⁻ᵀ is upper triangular, so on and below the diagonal C_T(i, j) = δ_ij / T_ii −
  /// Σ_a C_B(i, a) W(j, a). About MK² + KM² multiply-adds, against (M + K)(M² + 2MK) for
  /// solve() on every column of J.
  template <class U>
  MYRIAD_HD void solve_jacobian(MatrixView<U> c) const {
    const int m = b.rows;
    const int k = b.cols;
    for (int i = 0; i < m; ++i) {  // rows of W S⁻¹
      for (int a = 0; a < k; ++a) scratch[a] = w(i, a);
      cholesky_solve(capacitance.as_const(), scratch);
      for (int a = 0; a < k; ++a) c(i, a) = scratch[a];
    }
    const MatrixView<U> c_b{c.data, m, k, c.row_stride, c.col_stride};
    solve_lower_transpose_columns(t, c_b);  // C_B = T⁻ᵀ (W S⁻¹)
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j <= i; ++j) {
        T sum = i == j ? T(1) / t(i, i) : T(0);
        for (int a = 0; a < k; ++a) sum -= c(i, a) * w(j, a);
        c(i, k + j) = sum;
      }
    }
  }
};

}  // namespace myriad::linalg
