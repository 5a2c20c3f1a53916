#pragma once
// The warp as a team (core/team.hpp): 32 lanes cooperating on one particle or chain. The
// collectives are warp intrinsics over the full mask, so every lane of the warp must reach each
// of them: kernels using WarpTeam give whole warps the same work item (warp-uniform loops), and
// team code keeps collectives out of lane-dependent branches (the team.hpp conventions).
//
// sum() is a butterfly (__shfl_xor_sync): at every level a lane adds its partner's value to its
// own, and partners add the same two numbers (a + b = b + a exactly), so all 32 lanes end with
// the same bits, which keeps branches on the sum warp-uniform.
//
// Members are MYRIAD_HD so that MYRIAD_HD per-particle templates instantiated with WarpTeam
// compile without host/device call warnings; the host bodies are never run.

#include <cstdint>

#include "myriad/core/hd.hpp"

namespace myriad::kernels {

struct WarpTeam {
  static constexpr bool kSerial = false;
  static constexpr int kLanes = 32;
  static constexpr unsigned kFullMask = 0xffffffffu;

  MYRIAD_HD int rank() const {
#if MYRIAD_DEVICE_CODE
    return static_cast<int>(threadIdx.x) & (kLanes - 1);
#else
    return 0;
#endif
  }
  MYRIAD_HD int size() const { return kLanes; }
  MYRIAD_HD void sync() const {
#if MYRIAD_DEVICE_CODE
    __syncwarp(kFullMask);
#endif
  }
  template <class T>
  MYRIAD_HD T sum(T x) const {
#if MYRIAD_DEVICE_CODE
    for (int offset = kLanes / 2; offset > 0; offset /= 2)
      x += __shfl_xor_sync(kFullMask, x, offset);
#endif
    return x;
  }
  MYRIAD_HD bool all(bool x) const {
#if MYRIAD_DEVICE_CODE
    return __all_sync(kFullMask, x ? 1 : 0) != 0;
#else
    return x;
#endif
  }
  template <class T>
  MYRIAD_HD T broadcast(T x, int from) const {
#if MYRIAD_DEVICE_CODE
    return __shfl_sync(kFullMask, x, from);
#else
    (void)from;
    return x;
#endif
  }
};

/// The index of the calling warp in the grid and the number of warps in it (64-bit), for
/// grid-stride loops that hand one work item to each warp.
__device__ __forceinline__ std::int64_t global_warp_index() {
  return (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / WarpTeam::kLanes;
}
__device__ __forceinline__ std::int64_t grid_warps() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x / WarpTeam::kLanes;
}

}  // namespace myriad::kernels
