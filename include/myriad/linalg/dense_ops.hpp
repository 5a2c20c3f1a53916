#pragma once
// Per-chain dense matrix-vector kernels for one thread on the CPU or in a CUDA kernel: the Gram
// matrix G = J Jᵀ of constrained HMC (constrained-hmc.md §13, "Gram JJᵀ, once per sub-step"), the
// products J p and Jᵀ w of the momentum projection and quasi-Newton update (§5, §4), and the
// vector reductions of the convergence tests (§4: ‖r‖∞ < τ).
//
// Matrices are MatrixViews of T or const T; vectors are anything with operator[](int)
// (ChainVector, DenseVector, a pointer, std::vector). Accumulation is in the matrix's value type.

#include <type_traits>

#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"
#include "myriad/linalg/matrix_view.hpp"

namespace myriad::linalg {

/// The lower triangle (diagonal included) of G = J Jᵀ for an M × N matrix J:
/// g_ik = Σ_n j_in j_kn for k ≤ i; the strict upper triangle of `g` (M × M) is not written.
/// ½ M (M + 1) N multiply-adds; inner products run along rows of J.
template <class T, class U>
MYRIAD_HD void gram_lower(MatrixView<T> j, MatrixView<U> g) {
  using Value = std::remove_const_t<T>;
  const int m = j.rows;
  const int n = j.cols;
  for (int i = 0; i < m; ++i) {
    for (int k = 0; k <= i; ++k) {
      Value s = Value(0);
      for (int c = 0; c < n; ++c) s += j(i, c) * j(k, c);
      g(i, k) = s;
    }
  }
}

/// y = A x for an M × N matrix A (x of length N, y of length M; y must not alias x).
template <class T, class X, class Y>
MYRIAD_HD void multiply(MatrixView<T> a, const X& x, Y&& y) {
  using Value = std::remove_const_t<T>;
  for (int i = 0; i < a.rows; ++i) {
    Value s = Value(0);
    for (int c = 0; c < a.cols; ++c) s += a(i, c) * x[c];
    y[i] = s;
  }
}

/// y = Aᵀ w for an M × N matrix A (w of length M, y of length N; y must not alias w). Computed as
/// y = Σ_i w_i a_i· (rows of A in turn), so A is read along its rows as in multiply.
template <class T, class W, class Y>
MYRIAD_HD void multiply_transpose(MatrixView<T> a, const W& w, Y&& y) {
  using Value = std::remove_const_t<T>;
  for (int c = 0; c < a.cols; ++c) y[c] = Value(0);
  for (int i = 0; i < a.rows; ++i) {
    const Value w_i = w[i];
    for (int c = 0; c < a.cols; ++c) y[c] += a(i, c) * w_i;
  }
}

/// xᵀ y = Σ_{i<n} x_i y_i.
template <class X, class Y>
MYRIAD_HD auto dot(const X& x, const Y& y, int n) {
  using Value = std::remove_const_t<std::remove_reference_t<decltype(x[0] * y[0])>>;
  Value s = Value(0);
  for (int i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

/// ‖x‖∞ = max_{i<n} |x_i| (0 for n = 0). NaN if any element is NaN, so that a convergence test
/// ‖r‖∞ < τ fails on a NaN residual rather than skipping it (constrained-hmc.md §4).
/// With SIMD lanes as elements (core/lanes.hpp), each lane's norm of its own vector.
template <class X>
MYRIAD_HD auto max_abs(const X& x, int n) {
  using Value = std::remove_const_t<std::remove_reference_t<decltype(x[0])>>;
  Value m = Value(0);
  for (int i = 0; i < n; ++i) {
    const Value a = fabs(static_cast<Value>(x[i]));
    // a != a is NaN; once m is NaN neither comparison replaces it.
    m = LaneOps<Value>::select(a > m || a != a, a, m);
  }
  return m;
}

}  // namespace myriad::linalg
