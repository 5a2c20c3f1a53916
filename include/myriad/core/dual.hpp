#pragma once
// Forward-mode dual numbers a + b·ε with ε² = 0, for derivatives of model code written once
// over a generic scalar. Dual<T> carries one tangent; a gradient in D dimensions takes D
// evaluations (model/autodiff.hpp), which needs no scratch memory and so runs per thread on a
// GPU. Nesting, Dual<Dual<T>>, gives second derivatives (Hessian entries, Jacobian-vector
// products of gradients).

#include <type_traits>

#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"

namespace myriad {

template <class T>
struct Dual {
  T val{};  ///< value
  T eps{};  ///< tangent: derivative along the seeded direction

  Dual() = default;
  MYRIAD_HD constexpr Dual(T v) : val(v), eps(T(0)) {}  // NOLINT: implicit lift of constants
  MYRIAD_HD constexpr Dual(T v, T e) : val(v), eps(e) {}
  // Lift plain numbers (int, double literals) into nested duals.
  template <class S, class = std::enable_if_t<std::is_arithmetic<S>::value &&
                                              !std::is_same<S, T>::value>>
  MYRIAD_HD constexpr Dual(S v) : val(T(v)), eps(T(0)) {}  // NOLINT

  MYRIAD_HD Dual& operator+=(const Dual& o) { val += o.val; eps += o.eps; return *this; }
  MYRIAD_HD Dual& operator-=(const Dual& o) { val -= o.val; eps -= o.eps; return *this; }
  MYRIAD_HD Dual& operator*=(const Dual& o) { *this = *this * o; return *this; }
  MYRIAD_HD Dual& operator/=(const Dual& o) { *this = *this / o; return *this; }

  MYRIAD_HD friend Dual operator+(const Dual& a, const Dual& b) { return {a.val + b.val, a.eps + b.eps}; }
  MYRIAD_HD friend Dual operator-(const Dual& a, const Dual& b) { return {a.val - b.val, a.eps - b.eps}; }
  MYRIAD_HD friend Dual operator-(const Dual& a) { return {-a.val, -a.eps}; }
  MYRIAD_HD friend Dual operator+(const Dual& a) { return a; }
  MYRIAD_HD friend Dual operator*(const Dual& a, const Dual& b) {
    return {a.val * b.val, a.eps * b.val + a.val * b.eps};
  }
  MYRIAD_HD friend Dual operator/(const Dual& a, const Dual& b) {
    const T inv = T(1) / b.val;
    const T q = a.val * inv;
    return {q, (a.eps - q * b.eps) * inv};
  }
  // Comparisons look at values only: branches in model code follow the primal computation. A
  // bool, or for duals of a SIMD batch of chains the lanes' mask (core/lanes.hpp).
  MYRIAD_HD friend auto operator<(const Dual& a, const Dual& b) { return a.val < b.val; }
  MYRIAD_HD friend auto operator>(const Dual& a, const Dual& b) { return a.val > b.val; }
  MYRIAD_HD friend auto operator<=(const Dual& a, const Dual& b) { return a.val <= b.val; }
  MYRIAD_HD friend auto operator>=(const Dual& a, const Dual& b) { return a.val >= b.val; }
  MYRIAD_HD friend auto operator==(const Dual& a, const Dual& b) { return a.val == b.val; }
  MYRIAD_HD friend auto operator!=(const Dual& a, const Dual& b) { return a.val != b.val; }
};

/// Duals of a SIMD batch of chains (detail/simd_lanes.hpp) have the batch's lanes: a mask
/// selects value and tangent together, so that lane code written over S runs on duals of S.
template <class T>
struct LaneOps<Dual<T>, std::enable_if_t<(LaneOps<T>::width > 1)>> {
  using mask = lane_mask_t<T>;
  using scalar = typename LaneOps<T>::scalar;
  static constexpr int width = LaneOps<T>::width;
  template <class U>
  using per_lane = typename LaneOps<T>::template per_lane<U>;

  static bool all(const mask& m) { return LaneOps<T>::all(m); }
  static bool any(const mask& m) { return LaneOps<T>::any(m); }
  static Dual<T> select(const mask& m, const Dual<T>& a, const Dual<T>& b) {
    return {LaneOps<T>::select(m, a.val, b.val), LaneOps<T>::select(m, a.eps, b.eps)};
  }
};

template <class T>
struct is_dual : std::false_type {};
template <class T>
struct is_dual<Dual<T>> : std::true_type {};

/// The innermost plain value of a (possibly nested) dual number.
template <class T>
MYRIAD_HD MYRIAD_INLINE auto value_of(const Dual<T>& x) {
  return value_of(x.val);
}

// Chain rule: f(a + bε) = f(a) + f'(a) b ε. Each entry gives f and f' in terms of a.
template <class T>
MYRIAD_HD MYRIAD_INLINE Dual<T> exp(const Dual<T>& x) {
  const T e = exp(x.val);
  return {e, e * x.eps};
}
template <class T>
MYRIAD_HD MYRIAD_INLINE Dual<T> log(const Dual<T>& x) {
  return {log(x.val), x.eps / x.val};
}
template <class T>
MYRIAD_HD MYRIAD_INLINE Dual<T> log1p(const Dual<T>& x) {
  return {log1p(x.val), x.eps / (T(1) + x.val)};
}
template <class T>
MYRIAD_HD MYRIAD_INLINE Dual<T> expm1(const Dual<T>& x) {
  return {expm1(x.val), exp(x.val) * x.eps};
}
template <class T>
MYRIAD_HD MYRIAD_INLINE Dual<T> sqrt(const Dual<T>& x) {
  const T s = sqrt(x.val);
  return {s, x.eps / (T(2) * s)};
}
template <class T>
MYRIAD_HD MYRIAD_INLINE Dual<T> sin(const Dual<T>& x) {
  return {sin(x.val), cos(x.val) * x.eps};
}
template <class T>
MYRIAD_HD MYRIAD_INLINE Dual<T> cos(const Dual<T>& x) {
  return {cos(x.val), -sin(x.val) * x.eps};
}
template <class T>
MYRIAD_HD MYRIAD_INLINE Dual<T> tanh(const Dual<T>& x) {
  const T t = tanh(x.val);
  return {t, (T(1) - t * t) * x.eps};
}
template <class T>
MYRIAD_HD MYRIAD_INLINE Dual<T> fabs(const Dual<T>& x) {
  if constexpr ((lane_width_v<T>) > 1) {
    return LaneOps<Dual<T>>::select(x.val < T(0), -x, x);
  } else {
    return value_of(x) < 0 ? -x : x;
  }
}
/// x^y for a constant exponent y.
template <class T, class S, class = std::enable_if_t<std::is_arithmetic<S>::value>>
MYRIAD_HD MYRIAD_INLINE Dual<T> pow(const Dual<T>& x, S y) {
  // The exponent is passed as the innermost scalar so that nested duals recurse into this
  // overload (T(y - 1) would be a dual, for which no pow overload exists).
  using Scalar = decltype(value_of(x));
  const T p = pow(x.val, Scalar(y) - Scalar(1));
  return {p * x.val, T(y) * p * x.eps};
}
template <class T>
MYRIAD_HD MYRIAD_INLINE bool isfinite(const Dual<T>& x) {
  return isfinite(x.val) && isfinite(x.eps);
}

}  // namespace myriad
