#pragma once
// Box–Muller on one xsimd batch of uniform pairs: the formula of the host's normals
// (detail/box_muller_lanes.hpp, src/core/simd/) and of the lane kernels' momenta
// (detail/simd_lanes.hpp, LaneStreams), written once.

#include <xsimd/xsimd.hpp>

namespace myriad::detail {

/// Both normals of the pairs (u1, u2) in one batch: z0 = √(−2 log u1) cos 2πu2, z1 = … sin.
template <class Batch>
void box_muller_batch(const Batch& u1, const Batch& u2, Batch& z0, Batch& z1) {
  using T = typename Batch::value_type;
  const Batch radius = xsimd::sqrt(Batch(T(-2)) * xsimd::log(u1));
  const auto sine_cosine = xsimd::sincos(Batch(T(6.283185307179586476925)) * u2);
  z0 = radius * sine_cosine.second;
  z1 = radius * sine_cosine.first;
}

}  // namespace myriad::detail
