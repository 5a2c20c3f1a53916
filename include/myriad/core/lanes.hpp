#pragma once
// Lanes: per-chain code written once for one chain and for a group of chains in lockstep.
//
// Per-chain code (transitions, models) is written over an element type S. On a GPU thread and in
// the CPU backend's scalar loop S is float or double and one call advances one chain. On the
// CPU it may also be a SIMD batch holding the same coordinate of W consecutive chains
// (detail/simd_lanes.hpp): one call then advances W chains, as a warp advances 32. Where chains
// would branch apart (accept or reject, a divergence, a trajectory that turned non-finite) the
// code keeps a mask per lane and selects, as the GPU's predication does for a warp.
//
// LaneOps<S> is what that code needs beyond arithmetic: the mask type, whether all or any lane
// of a mask is set, a per-lane select, and per-lane integers (status flags, step counts). The
// primary template is the one-lane case (S a scalar, the mask a bool, a per-lane integer a plain
// integer), so that scalar code pays nothing for it; detail/simd_lanes.hpp specialises it for
// SIMD batches. A class template, not overloads, because per-chain code calls these names from
// templates defined before the SIMD header is included, and a specialisation declared before
// the point of instantiation is found where a later overload is not.

#include <type_traits>
#include <utility>

#include "myriad/core/hd.hpp"

namespace myriad {

/// The most lanes a CPU lane kernel has (16 floats in an AVX-512 register).
constexpr int kMaxLaneWidth = 16;

/// Element type of an indexable vector view.
template <class Vec>
using element_t = std::decay_t<decltype(std::declval<const Vec&>()[0])>;

/// Lane operations of element type S: one lane (S a scalar, a dual number) unless specialised.
template <class S, class = void>
struct LaneOps {
  using mask = bool;
  using scalar = S;  ///< the type of one lane's value
  template <class U>
  using per_lane = U;
  static constexpr int width = 1;

  MYRIAD_HD static constexpr bool all(bool m) { return m; }
  MYRIAD_HD static constexpr bool any(bool m) { return m; }
  /// a where m is set, else b (both are evaluated: callers pass values, not side effects).
  MYRIAD_HD static S select(bool m, const S& a, const S& b) { return m ? a : b; }
  /// x += v in the lanes where m is set.
  template <class U>
  MYRIAD_HD static void add_where(U& x, bool m, std::common_type_t<U> v) {
    if (m) x += v;
  }
  /// x = v in the lanes where m is set.
  template <class U>
  MYRIAD_HD static void assign_where(U& x, bool m, std::common_type_t<U> v) {
    if (m) x = v;
  }
  /// Lane l of a value, of a mask, and of a per-lane variable (l = 0 here).
  MYRIAD_HD static S value(const S& x, int /*l*/) { return x; }
  MYRIAD_HD static bool flag(bool m, int /*l*/) { return m; }
  template <class U>
  MYRIAD_HD static U& entry(U& x, int /*l*/) {
    return x;
  }
};

/// The mask of element type S (bool for a scalar).
template <class S>
using lane_mask_t = typename LaneOps<S>::mask;

/// Lanes of element type S (1 for a scalar).
template <class S>
inline constexpr int lane_width_v = LaneOps<S>::width;

/// Math of element types other than float, double and the duals (core/dual.hpp): a
/// specialisation supplies static exp, log, log1p, expm1, sqrt, fabs and isfinite
/// (detail/simd_lanes.hpp for SIMD batches), which core/math.hpp's myriad::exp etc. forward to.
template <class S, class = void>
struct LaneMath {};

}  // namespace myriad
