#pragma once
// Vector-mode forward dual numbers: a value and N tangents, a + Σ_k b_k ε_k with ε_j ε_k = 0.
// One evaluation of model code over DualVector<T, N> gives N directional derivatives at once,
// so a gradient in D dimensions takes ⌈D/N⌉ passes instead of D (ForwardDiff.jl's "chunk mode",
// Revels, Lubin & Papamarkou 2016). Each pass shares the primal computation and every
// transcendental function among its N tangents: on model code dominated by exp/log that is
// several times cheaper than N scalar passes (docs/writing-models.md). Like Dual<T>, it needs no
// scratch memory, so it runs per thread on a GPU; N values per variable live in registers.
//
// The elementary functions are those of Dual<T> (core/dual.hpp), with the same chain rules in
// the same order of operations: each tangent is bitwise the scalar dual's with that seed.

#include <type_traits>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"

namespace myriad {

template <class T, int N>
struct DualVector {
  static_assert(N >= 1, "a DualVector has at least one tangent");
  T val{};     ///< value
  T eps[N]{};  ///< tangents: derivatives along the N seeded directions

  DualVector() = default;
  MYRIAD_HD constexpr DualVector(T v) : val(v) {}  // NOLINT: implicit lift of constants
  template <class S,
            class = std::enable_if_t<std::is_arithmetic<S>::value && !std::is_same<S, T>::value>>
  MYRIAD_HD constexpr DualVector(S v) : val(T(v)) {}  // NOLINT

  /// f(a) with derivative f'(a) applied to every tangent.
  MYRIAD_HD DualVector chain(T value, T derivative) const {
    DualVector r(value);
    for (int k = 0; k < N; ++k) r.eps[k] = derivative * eps[k];
    return r;
  }

  /// f(a) with derivative 1/divisor applied to every tangent, dividing as Dual<T> does (so that
  /// each tangent rounds exactly as a scalar dual's would).
  MYRIAD_HD DualVector chain_divided(T value, T divisor) const {
    DualVector r(value);
    for (int k = 0; k < N; ++k) r.eps[k] = eps[k] / divisor;
    return r;
  }

  MYRIAD_HD DualVector& operator+=(const DualVector& o) {
    val += o.val;
    for (int k = 0; k < N; ++k) eps[k] += o.eps[k];
    return *this;
  }
  MYRIAD_HD DualVector& operator-=(const DualVector& o) {
    val -= o.val;
    for (int k = 0; k < N; ++k) eps[k] -= o.eps[k];
    return *this;
  }
  MYRIAD_HD DualVector& operator*=(const DualVector& o) { return *this = *this * o; }
  MYRIAD_HD DualVector& operator/=(const DualVector& o) { return *this = *this / o; }

  MYRIAD_HD friend DualVector operator+(DualVector a, const DualVector& b) { return a += b; }
  MYRIAD_HD friend DualVector operator-(DualVector a, const DualVector& b) { return a -= b; }
  MYRIAD_HD friend DualVector operator-(const DualVector& a) { return a.chain(-a.val, T(-1)); }
  MYRIAD_HD friend DualVector operator+(const DualVector& a) { return a; }
  MYRIAD_HD friend DualVector operator*(const DualVector& a, const DualVector& b) {
    DualVector r(a.val * b.val);
    for (int k = 0; k < N; ++k) r.eps[k] = a.eps[k] * b.val + a.val * b.eps[k];
    return r;
  }
  MYRIAD_HD friend DualVector operator/(const DualVector& a, const DualVector& b) {
    const T inv = T(1) / b.val;
    const T q = a.val * inv;
    DualVector r(q);
    for (int k = 0; k < N; ++k) r.eps[k] = (a.eps[k] - q * b.eps[k]) * inv;
    return r;
  }
  // Comparisons look at values only: branches in model code follow the primal computation.
  MYRIAD_HD friend bool operator<(const DualVector& a, const DualVector& b) {
    return a.val < b.val;
  }
  MYRIAD_HD friend bool operator>(const DualVector& a, const DualVector& b) {
    return a.val > b.val;
  }
  MYRIAD_HD friend bool operator<=(const DualVector& a, const DualVector& b) {
    return a.val <= b.val;
  }
  MYRIAD_HD friend bool operator>=(const DualVector& a, const DualVector& b) {
    return a.val >= b.val;
  }
  MYRIAD_HD friend bool operator==(const DualVector& a, const DualVector& b) {
    return a.val == b.val;
  }
  MYRIAD_HD friend bool operator!=(const DualVector& a, const DualVector& b) {
    return a.val != b.val;
  }
};

template <class T, int N>
MYRIAD_HD MYRIAD_INLINE T value_of(const DualVector<T, N>& x) {
  return x.val;
}

template <class T, int N>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> exp(const DualVector<T, N>& x) {
  const T e = exp(x.val);
  return x.chain(e, e);
}
template <class T, int N>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> log(const DualVector<T, N>& x) {
  return x.chain_divided(log(x.val), x.val);
}
template <class T, int N>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> log1p(const DualVector<T, N>& x) {
  return x.chain_divided(log1p(x.val), T(1) + x.val);
}
template <class T, int N>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> expm1(const DualVector<T, N>& x) {
  return x.chain(expm1(x.val), exp(x.val));
}
template <class T, int N>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> sqrt(const DualVector<T, N>& x) {
  const T s = sqrt(x.val);
  return x.chain_divided(s, T(2) * s);
}
template <class T, int N>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> sin(const DualVector<T, N>& x) {
  return x.chain(sin(x.val), cos(x.val));
}
template <class T, int N>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> cos(const DualVector<T, N>& x) {
  return x.chain(cos(x.val), -sin(x.val));
}
template <class T, int N>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> tanh(const DualVector<T, N>& x) {
  const T t = tanh(x.val);
  return x.chain(t, T(1) - t * t);
}
template <class T, int N>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> fabs(const DualVector<T, N>& x) {
  return x.val < T(0) ? -x : x;
}
/// x^y for a constant exponent y.
template <class T, int N, class S, class = std::enable_if_t<std::is_arithmetic<S>::value>>
MYRIAD_HD MYRIAD_INLINE DualVector<T, N> pow(const DualVector<T, N>& x, S y) {
  const T p = pow(x.val, T(y) - T(1));
  return x.chain(p * x.val, T(y) * p);
}
template <class T, int N>
MYRIAD_HD MYRIAD_INLINE bool isfinite(const DualVector<T, N>& x) {
  bool finite = isfinite(x.val);
  for (int k = 0; k < N; ++k) finite = finite && isfinite(x.eps[k]);
  return finite;
}

}  // namespace myriad
