#pragma once
// Scalar math callable from host and device. Models call myriad::exp, myriad::log, ... so that
// the same expression works for float, double and the dual numbers of core/dual.hpp, which
// overload these names, and for the SIMD batches of chains of detail/simd_lanes.hpp, which
// supply them through LaneMath (core/lanes.hpp).

#include <cmath>

#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"

namespace myriad {

// The normalising constants of the normal and Student-t densities, written once for every
// model (constexpr scalars: usable in device code).
inline constexpr double kLogSqrtTwoPi = 0.91893853320467274178;  ///< ½ log 2π
inline constexpr double kLogTwo = 0.69314718055994530942;        ///< log 2
inline constexpr double kLogPi = 1.14472988584940017414;         ///< log π

#define MYRIAD_UNARY_MATH(name)                                                 \
  MYRIAD_HD MYRIAD_INLINE double name(double x) { return ::name(x); }          \
  MYRIAD_HD MYRIAD_INLINE float name(float x) { return ::name##f(x); }

MYRIAD_UNARY_MATH(exp)
MYRIAD_UNARY_MATH(log)
MYRIAD_UNARY_MATH(log1p)
MYRIAD_UNARY_MATH(expm1)
MYRIAD_UNARY_MATH(sqrt)
MYRIAD_UNARY_MATH(sin)
MYRIAD_UNARY_MATH(cos)
MYRIAD_UNARY_MATH(tanh)
MYRIAD_UNARY_MATH(fabs)
MYRIAD_UNARY_MATH(tan)
MYRIAD_UNARY_MATH(atan)
MYRIAD_UNARY_MATH(lgamma)
MYRIAD_UNARY_MATH(floor)
MYRIAD_UNARY_MATH(erfc)
#undef MYRIAD_UNARY_MATH

// Element types with a LaneMath specialisation (host only: SIMD batches of chains). Removed from
// overload resolution for every other type, so float, double and the duals keep their own.
#define MYRIAD_LANE_MATH(name)                                   \
  template <class S>                                             \
  inline auto name(const S& x)->decltype(LaneMath<S>::name(x)) { \
    return LaneMath<S>::name(x);                                 \
  }

MYRIAD_LANE_MATH(exp)
MYRIAD_LANE_MATH(log)
MYRIAD_LANE_MATH(log1p)
MYRIAD_LANE_MATH(expm1)
MYRIAD_LANE_MATH(sqrt)
MYRIAD_LANE_MATH(fabs)
MYRIAD_LANE_MATH(tanh)
MYRIAD_LANE_MATH(isfinite)
#undef MYRIAD_LANE_MATH

MYRIAD_HD MYRIAD_INLINE double pow(double x, double y) { return ::pow(x, y); }
MYRIAD_HD MYRIAD_INLINE float pow(float x, float y) { return ::powf(x, y); }

#if MYRIAD_DEVICE_CODE
MYRIAD_HD MYRIAD_INLINE bool isfinite(double x) { return ::isfinite(x); }
MYRIAD_HD MYRIAD_INLINE bool isfinite(float x) { return ::isfinite(x); }
#else
MYRIAD_HD MYRIAD_INLINE bool isfinite(double x) { return std::isfinite(x); }
MYRIAD_HD MYRIAD_INLINE bool isfinite(float x) { return std::isfinite(x); }
#endif

template <class T>
MYRIAD_HD MYRIAD_INLINE T square(const T& x) {
  return x * x;
}

/// The plain value of a scalar (overloaded for dual numbers), used for branching.
MYRIAD_HD MYRIAD_INLINE double value_of(double x) { return x; }
MYRIAD_HD MYRIAD_INLINE float value_of(float x) { return x; }

template <class T>
MYRIAD_HD MYRIAD_INLINE bool value_of_positive(const T& x) {
  return value_of(x) > 0;
}

/// log(1 + exp(x)) without overflow (softplus).
template <class T>
MYRIAD_HD MYRIAD_INLINE T log1p_exp(const T& x) {
  // For x > 0: x + log1p(exp(-x)); else log1p(exp(x)). Both arguments of exp are <= 0.
  if constexpr ((lane_width_v<T>) > 1) {
    // Chains in SIMD lanes: the same two expressions as one, max(x, 0) + log1p(exp(−|x|)).
    return LaneOps<T>::select(x > T(0), x, T(0)) + log1p(exp(-fabs(x)));
  } else {
    return value_of_positive(x) ? x + log1p(exp(-x)) : log1p(exp(x));
  }
}

/// log N(x; mu, sigma) including the normalising constant.
template <class X, class M, class S>
MYRIAD_HD MYRIAD_INLINE auto normal_log_density(const X& x, const M& mu, const S& sigma) {
  const auto z = (x - mu) / sigma;
  using Z = decltype(z * z);
  return Z(-kLogSqrtTwoPi) - log(sigma) - Z(0.5) * z * z;
}

/// log Φ(x), the standard normal CDF, accurate in both tails: log(½ erfc(−x/√2)) while erfc
/// keeps its relative accuracy (to x ≈ −37 in double, −12 in float, where Φ nears the smallest
/// normal number), and beyond that Mills' ratio, log Φ(x) = −x²/2 − log(−x) − ½ log 2π +
/// log(1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸), whose truncation error there is below the type's
/// rounding (Abramowitz & Stegun 26.2.12).
template <class T>
MYRIAD_HD MYRIAD_INLINE T log_normal_cdf(T x) {
  if (x > T(sizeof(T) == sizeof(float) ? -12 : -37))
    return log(T(0.5) * erfc(x * T(-0.70710678118654752440)));
  const T r = T(1) / (x * x);
  return T(-0.5) * x * x - log(-x) - T(kLogSqrtTwoPi) +
         log1p(r * (T(-1) + r * (T(3) + r * (T(-15) + r * T(105)))));
}

}  // namespace myriad
