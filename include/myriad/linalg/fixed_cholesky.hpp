#pragma once
// Cholesky factorisation and solves of one small matrix whose size N is a compile-time constant,
// held in registers: tier (a) of DESIGN.md rule 6 ("thread per chain, fixed-size templates in
// registers"). The batched Cholesky's `registers` tier (linalg/batched_cholesky.hpp,
// kernels/batched_cholesky_kernels.cuh) runs one thread per matrix through these functions; the
// CPU tests run the same functions on the host.
//
// Why registers. The per-chain factorisation (linalg/cholesky.hpp) works through a MatrixView,
// so every one of its ~N³/6 multiply-adds reads memory: shared memory in the batched thread tier,
// the chain's [element][chain] workspace in the constrained-HMC kernels. Here the lower triangle
// is loaded once into a packed local array, every loop is unrolled (MYRIAD_UNROLL), so every
// index is a constant and the array is register-allocated, and the factor is stored once: N²/2
// loads and stores instead of O(N³) memory operations, and no shared memory, so occupancy is set
// by registers alone. The N(N + 1)/2 values must fit a thread's 255 registers with room to
// spare: 78 doubles (156 registers) at N = 12, 136 floats at N = 16 (kFixedCholeskyMaxSize<T>);
// ptxas's count for every instantiated size is in bench/results/kernel-resources-sm90.md.
//
// Arithmetic. The same Cholesky–Crout recurrences as cholesky_in_place_info, subtracting the
// same products in the same order (k = 0, 1, …, j − 1) and scaling by the same reciprocal, and
// the same substitutions as solve_lower / solve_lower_transpose: on the host the results are
// those of the per-chain functions bit for bit (tests/unit/test_batched_cholesky_cpu.cpp checks
// every size); on the device they agree to rounding, nvcc being free to fuse a product and a
// subtraction into an FMA in one and not in the other. Failure semantics are
// cholesky_in_place_info's: info k > 0 names the first column whose pivot is not positive or not
// finite; columns before it hold L, the rest of the lower triangle is as on entry.

#include <type_traits>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/linalg/batched_cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"

namespace myriad::linalg {

/// The largest N for which the batched `registers` tier instantiates the fixed-size functions:
/// the packed triangle stays well inside a thread's 255 registers (see the file comment).
template <class T>
inline constexpr int kFixedCholeskyMaxSize = sizeof(T) <= 4 ? 16 : 12;

/// The lower triangle of an N × N matrix packed by rows: (i, j), i ≥ j, at i(i + 1)/2 + j.
template <int N, class T>
struct PackedLower {
  static_assert(N >= 1, "a matrix has at least one row");
  static constexpr int kElements = N * (N + 1) / 2;
  T element[kElements];

  static constexpr MYRIAD_HD int index(int i, int j) { return i * (i + 1) / 2 + j; }
  MYRIAD_HD T& operator()(int i, int j) { return element[index(i, j)]; }
  MYRIAD_HD const T& operator()(int i, int j) const { return element[index(i, j)]; }

  /// Reads the lower triangle of `a` (N × N; the strict upper triangle is not read).
  template <class U>
  MYRIAD_HD void load(MatrixView<U> a) {
    MYRIAD_UNROLL
    for (int j = 0; j < N; ++j) {
      MYRIAD_UNROLL
      for (int i = j; i < N; ++i) (*this)(i, j) = a(i, j);
    }
  }
  /// Writes the lower triangle back into `a`; the strict upper triangle is not written.
  MYRIAD_HD void store(MatrixView<T> a) const {
    MYRIAD_UNROLL
    for (int j = 0; j < N; ++j) {
      MYRIAD_UNROLL
      for (int i = j; i < N; ++i) a(i, j) = (*this)(i, j);
    }
  }
};

/// A = L Lᵀ in place in `a`; returns LAPACK's info as cholesky_in_place_info does (0, or the
/// 1-based column of the first pivot that is not positive or not finite).
template <int N, class T>
MYRIAD_HD int fixed_cholesky_info(PackedLower<N, T>& a) {
  MYRIAD_UNROLL
  for (int j = 0; j < N; ++j) {
    T pivot = a(j, j);
    MYRIAD_UNROLL
    for (int k = 0; k < j; ++k) pivot -= a(j, k) * a(j, k);
    // !(pivot > 0) also catches NaN. Nothing of column j has been written yet.
    if (!(pivot > T(0)) || !isfinite(pivot)) return j + 1;
    const T l_jj = sqrt(pivot);
    a(j, j) = l_jj;
    const T inverse_l_jj = T(1) / l_jj;
    MYRIAD_UNROLL
    for (int i = j + 1; i < N; ++i) {
      T s = a(i, j);
      MYRIAD_UNROLL
      for (int k = 0; k < j; ++k) s -= a(i, k) * a(j, k);
      a(i, j) = s * inverse_l_jj;
    }
  }
  return 0;
}

/// b ← L⁻¹ b (forward substitution, as solve_lower).
template <int N, class T>
MYRIAD_HD void fixed_solve_lower(const PackedLower<N, T>& l, T (&b)[N]) {
  MYRIAD_UNROLL
  for (int i = 0; i < N; ++i) {
    T s = b[i];
    MYRIAD_UNROLL
    for (int k = 0; k < i; ++k) s -= l(i, k) * b[k];
    b[i] = s / l(i, i);
  }
}

/// b ← L⁻ᵀ b (back substitution in column form, as solve_lower_transpose).
template <int N, class T>
MYRIAD_HD void fixed_solve_lower_transpose(const PackedLower<N, T>& l, T (&b)[N]) {
  MYRIAD_UNROLL
  for (int i = N - 1; i >= 0; --i) {
    const T x_i = b[i] / l(i, i);
    b[i] = x_i;
    MYRIAD_UNROLL
    for (int k = 0; k < i; ++k) b[k] -= l(i, k) * x_i;
  }
}

/// The registers tier's body for one matrix: loads the lower triangle of the N × N matrix `a`,
/// factors it in registers and stores it back (the partial factor too when it fails, as the
/// other tiers do); returns info.
template <int N, class T>
MYRIAD_HD int fixed_cholesky_in_place(MatrixView<T> a) {
  PackedLower<N, T> l;
  l.load(a);
  const int info = fixed_cholesky_info(l);
  l.store(a);
  return info;
}

/// The registers tier's solve for one right-hand side: rhs ← A⁻¹ rhs, L⁻¹ rhs or L⁻ᵀ rhs (per
/// `which`) with the factor whose lower triangle `l` holds; `rhs` is anything with
/// operator[](int) over N values.
template <int N, class T, class Vector>
MYRIAD_HD void fixed_cholesky_solve(MatrixView<const T> l, Vector&& rhs, CholeskySolve which) {
  PackedLower<N, T> factor;
  factor.load(l);
  T x[N];
  MYRIAD_UNROLL
  for (int i = 0; i < N; ++i) x[i] = rhs[i];
  if (which != CholeskySolve::backward) fixed_solve_lower(factor, x);
  if (which != CholeskySolve::forward) fixed_solve_lower_transpose(factor, x);
  MYRIAD_UNROLL
  for (int i = 0; i < N; ++i) rhs[i] = x[i];
}

/// Calls f(std::integral_constant<int, N>{}) for the N equal to the run-time size n, for
/// 1 ≤ n ≤ kFixedCholeskyMaxSize<T>; returns false (and calls nothing) for any other n.
template <class T, class F, int N = 1>
bool with_fixed_cholesky_size(int n, F&& f) {
  if constexpr (N > kFixedCholeskyMaxSize<T>) {
    static_cast<void>(n);
    static_cast<void>(f);
    return false;
  } else {
    if (n == N) {
      f(std::integral_constant<int, N>{});
      return true;
    }
    return with_fixed_cholesky_size<T, F, N + 1>(n, static_cast<F&&>(f));
  }
}

}  // namespace myriad::linalg
