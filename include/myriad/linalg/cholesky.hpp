#pragma once
// Per-chain Cholesky factorisation A = L Lᵀ of a small symmetric positive-definite matrix, in
// place, for one thread (tier (a) of DESIGN.md rule 6) on the CPU or in a CUDA kernel. Constrained
// HMC factors the Gram matrix G = J Jᵀ of every chain after every geodesic sub-step
// (constrained-hmc.md §13, GEOSTEP) and reads log|G| off the diagonal of L (§2, §13).
//
// The matrix is any MatrixView: row-major scratch on the CPU, [element][chain] workspace on the
// GPU (matrix_view.hpp), column-major batches (linalg/batched_cholesky.hpp). Only the lower
// triangle is read and written; the strict upper triangle is never touched, so a caller may keep
// other data there.

#include <cstdint>
#include <type_traits>

#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"
#include "myriad/linalg/matrix_view.hpp"

namespace myriad::linalg {

/// Factors the n × n symmetric positive-definite matrix whose lower triangle `a` holds into
/// A = L Lᵀ, overwriting the lower triangle (diagonal included) with L. Returns LAPACK's `info`:
/// 0 on success, or k > 0 when the pivot of column k (1-based) is not positive or not finite
/// (A is not numerically positive definite: indefinite, singular, or holding NaN/Inf). On
/// failure, columns 1..k−1 hold their columns of L, column k and beyond are as on entry, and
/// nothing past column k has been read.
///
/// Cholesky–Crout, column by column (Golub & Van Loan, Matrix Computations, 4th ed., Alg. 4.2.1
/// in dot-product form; Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §10.1):
///   d_j  = a_jj − Σ_{k<j} l_jk²,  l_jj = √d_j,
///   l_ij = (a_ij − Σ_{k<j} l_ik l_jk) / l_jj   for i > j.
/// Backward stable: the computed L satisfies L Lᵀ = A + ΔA with |ΔA| ≤ γ_{n+1} |L| |Lᵀ|,
/// γ_k = k u / (1 − k u), u the unit roundoff (Higham, Theorem 10.3); dividing by l_jj as a
/// multiplication by 1/l_jj (as LAPACK's dpotf2 does) adds one rounding: γ_{n+2}. Every
/// non-finite entry of L would reach a later pivot through Σ l_ik², so success implies a finite
/// L. Row-major and column-major views of the same matrix give bitwise identical factors.
///
/// O(n³/3) multiply-adds, no scratch.
template <class T>
MYRIAD_HD int cholesky_in_place_info(MatrixView<T> a);

/// (Internal.) The Cholesky–Crout loop of cholesky_in_place_info over element type S, with
/// `accept(j, pivot)` judging each pivot d_j before anything of column j is written: false stops
/// the factorisation there; true goes on with `pivot`, which it may have replaced.
template <class S, class Accept>
MYRIAD_HD void cholesky_crout(MatrixView<S> a, Accept&& accept) {
  const int n = a.rows;
  // Column-major-like views (batches in LAPACK layout) update column j by axpys of the earlier
  // columns, which runs down contiguous columns; row-major-like views take the inner products
  // along contiguous rows. Both subtract the same products from each a_ij in the same order
  // k = 0, 1, …, j − 1, so they round identically: the choice changes speed, not results.
  const bool by_columns = a.row_stride < a.col_stride;
  for (int j = 0; j < n; ++j) {
    S pivot = a(j, j);
    for (int k = 0; k < j; ++k) pivot -= a(j, k) * a(j, k);
    if (!accept(j, pivot)) return;
    const S l_jj = sqrt(pivot);
    a(j, j) = l_jj;
    const S inverse_l_jj = S(1) / l_jj;
    if (by_columns) {
      for (int k = 0; k < j; ++k) {
        const S l_jk = a(j, k);
        for (int i = j + 1; i < n; ++i) a(i, j) -= a(i, k) * l_jk;
      }
      for (int i = j + 1; i < n; ++i) a(i, j) *= inverse_l_jj;
    } else {
      for (int i = j + 1; i < n; ++i) {
        S s = a(i, j);
        for (int k = 0; k < j; ++k) s -= a(i, k) * a(j, k);
        a(i, j) = s * inverse_l_jj;
      }
    }
  }
}

template <class T>
MYRIAD_HD int cholesky_in_place_info(MatrixView<T> a) {
  static_assert(!std::is_const<T>::value, "cholesky_in_place_info overwrites its argument");
  int info = 0;
  cholesky_crout(a, [&](int j, const T& pivot) {
    // !(pivot > 0) also catches NaN. Nothing of column j has been written yet.
    if (!(pivot > T(0)) || !isfinite(pivot)) {
      info = j + 1;
      return false;
    }
    return true;
  });
  return info;
}

/// cholesky_in_place_info for W matrices at once, one per lane of a SIMD batch S (core/lanes.hpp;
/// the matrices interleaved, entry (i, j) of every lane in one batch): every lane's factor is the
/// one-lane code's, operation for operation. Returns the lanes whose factorisation failed (a
/// pivot not positive or not finite); such a lane goes on with pivot 1, so that it cannot disturb
/// the others, and its L is meaningless, as a failed one-lane factor is.
template <class S>
MYRIAD_HD lane_mask_t<S> cholesky_in_place_lanes(MatrixView<S> a) {
  static_assert(!std::is_const<S>::value, "cholesky_in_place_lanes overwrites its argument");
  lane_mask_t<S> failed(false);
  cholesky_crout(a, [&](int, S& pivot) {
    const lane_mask_t<S> bad = !(pivot > S(0)) || !isfinite(pivot);
    failed = failed || bad;
    pivot = LaneOps<S>::select(bad, S(1), pivot);
    return true;
  });
  return failed;
}

/// Factors A = L Lᵀ in place (see cholesky_in_place_info); false when A is not numerically
/// positive definite (a non-positive or non-finite pivot), which constrained HMC counts as a
/// Cholesky failure of the chain (constrained-hmc.md §13, CHOL_FAIL).
template <class T>
MYRIAD_HD bool cholesky_in_place(MatrixView<T> a) {
  return cholesky_in_place_info(a) == 0;
}

/// log|A| = log|L Lᵀ| = 2 Σ_i log l_ii from a Cholesky factor (lower triangle of `l`). Summing
/// logarithms cannot overflow where the product of pivots would (|G| for M = 250 outputs easily
/// leaves the double range). `l` may be a view of T or of const T.
template <class T>
MYRIAD_HD std::remove_const_t<T> log_det_from_cholesky(MatrixView<T> l) {
  using Value = std::remove_const_t<T>;
  Value sum = Value(0);
  for (int i = 0; i < l.rows; ++i) sum += log(static_cast<Value>(l(i, i)));
  return Value(2) * sum;
}

}  // namespace myriad::linalg
