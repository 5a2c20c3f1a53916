#pragma once
// Per-chain triangular solves with a Cholesky factor L (linalg/cholesky.hpp), in place, for one
// thread on the CPU or in a CUDA kernel. Constrained HMC applies G⁻¹ = L⁻ᵀ L⁻¹ in every
// quasi-Newton iteration and momentum projection (constrained-hmc.md §4, §5: Δ = Jᵀ L⁻ᵀ L⁻¹ r)
// and forms C = L⁻ᵀ L⁻¹ J for the log-determinant gradient (§8), i.e. with N right-hand sides.
//
// `l` is a MatrixView of T or of const T whose lower triangle holds L (the strict upper triangle
// is not read). A vector is anything with operator[](int): ChainVector, DenseVector, a pointer,
// std::vector. Both solves are backward stable: the computed x solves (L + ΔL) x = b with
// |ΔL| ≤ γ_n |L| (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Theorem 8.5).

#include <type_traits>

#include "myriad/core/hd.hpp"
#include "myriad/linalg/matrix_view.hpp"

namespace myriad::linalg {

/// b ← L⁻¹ b: forward substitution x_i = (b_i − Σ_{k<i} l_ik x_k) / l_ii, i = 0 … n−1.
/// The inner product runs along row i of L. O(n²/2) multiply-adds.
template <class T, class Vector>
MYRIAD_HD void solve_lower(MatrixView<T> l, Vector&& b) {
  using Value = std::remove_const_t<T>;
  const int n = l.rows;
  for (int i = 0; i < n; ++i) {
    Value s = b[i];
    for (int k = 0; k < i; ++k) s -= l(i, k) * b[k];
    b[i] = s / l(i, i);
  }
}

/// b ← L⁻¹ b as solve_lower, in column form: x_k = b_k / l_kk, then b_i ← b_i − l_ik x_k for
/// i > k, so that L is read down its columns (contiguous for a column-major L, the layout of
/// batched_cholesky.hpp; Golub & Van Loan, 4th ed., §3.1.4). O(n²/2) multiply-adds.
template <class T, class Vector>
MYRIAD_HD void solve_lower_by_columns(MatrixView<T> l, Vector&& b) {
  using Value = std::remove_const_t<T>;
  const int n = l.rows;
  for (int k = 0; k < n; ++k) {
    const Value x_k = b[k] / l(k, k);
    b[k] = x_k;
    for (int i = k + 1; i < n; ++i) b[i] -= l(i, k) * x_k;
  }
}

/// b ← L⁻ᵀ b as solve_lower_transpose, in dot-product form down the columns of L:
/// x_i = (b_i − Σ_{k>i} l_ki x_k) / l_ii for i = n−1 … 0 (contiguous for a column-major L).
/// O(n²/2) multiply-adds.
template <class T, class Vector>
MYRIAD_HD void solve_lower_transpose_by_columns(MatrixView<T> l, Vector&& b) {
  using Value = std::remove_const_t<T>;
  for (int i = l.rows - 1; i >= 0; --i) {
    Value s = b[i];
    for (int k = i + 1; k < l.rows; ++k) s -= l(k, i) * b[k];
    b[i] = s / l(i, i);
  }
}

/// b ← L⁻ᵀ b: back substitution for Lᵀ x = b, i = n−1 … 0, in column form
///   x_i = b_i / l_ii;  b_k ← b_k − l_ik x_i for k < i,
/// so that, as in solve_lower, L is read along its rows (Golub & Van Loan, 4th ed., §3.1.4).
/// O(n²/2) multiply-adds.
template <class T, class Vector>
MYRIAD_HD void solve_lower_transpose(MatrixView<T> l, Vector&& b) {
  using Value = std::remove_const_t<T>;
  for (int i = l.rows - 1; i >= 0; --i) {
    const Value x_i = b[i] / l(i, i);
    b[i] = x_i;
    for (int k = 0; k < i; ++k) b[k] -= l(i, k) * x_i;
  }
}

/// B ← L⁻¹ B for an n × r matrix of right-hand sides (every column solved as in solve_lower).
template <class T, class U>
MYRIAD_HD void solve_lower_columns(MatrixView<T> l, MatrixView<U> b) {
  for (int j = 0; j < b.cols; ++j) solve_lower(l, b.column(j));
}

/// B ← L⁻ᵀ B for an n × r matrix of right-hand sides (every column as in solve_lower_transpose).
template <class T, class U>
MYRIAD_HD void solve_lower_transpose_columns(MatrixView<T> l, MatrixView<U> b) {
  for (int j = 0; j < b.cols; ++j) solve_lower_transpose(l, b.column(j));
}

/// b ← A⁻¹ b = L⁻ᵀ (L⁻¹ b) for A = L Lᵀ: the two substitutions of constrained-hmc.md §4, §5.
template <class T, class Vector>
MYRIAD_HD void cholesky_solve(MatrixView<T> l, Vector&& b) {
  solve_lower(l, b);
  solve_lower_transpose(l, b);
}

}  // namespace myriad::linalg
