#pragma once
// Which SIMD-lane kernel a CPU backend runs, for every sampler with lane kernels (HMC, Hamiltonian
// AIS, constrained HMC) at once. A sampler's lane family (HmcLaneFamily in
// detail/hmc_lane_types.hpp, AisLaneFamily, ChmcLaneFamily) names its kernel type, the
// library_backend bit of the built-in models whose kernels the library holds and the test that a
// model is written over its element type; its detail/*_lane_kernel.hpp (which needs xsimd) names
// the entry point of its kernel for one instruction set (LaneEntry, compiled_lane_kernel). The
// library compiles the built-in models' kernels once per instruction set and dispatches at run time
// (src/backend/simd/); a model of the user's gets a kernel compiled for the instruction set of the
// translation unit that runs it.

#include <cstdint>
#include <string>
#include <vector>

#include "myriad/detail/cpu_ensemble.hpp"
#include "myriad/detail/lane_group.hpp"
#include "myriad/detail/lane_kernel.hpp"
#include "myriad/model/library_instances.hpp"

#if MYRIAD_SIMD_LANES
#include <xsimd/xsimd.hpp>
#endif

namespace myriad {

/// Family's kernel of Model compiled for instruction set Arch (defined in detail/simd_lanes.hpp,
/// which needs xsimd; the library instantiates the built-in models' in src/backend/simd/).
template <class Family, class Model, class T, class Arch>
lane_kernel_t<Family, Model, T> compiled_lane_kernel();

/// The library's lane kernel of a built-in model, for the widest instruction set this machine
/// runs (chosen once per model); defined in the library (src/backend/simd/) for the models that
/// list Family::library in their library_backend.
template <class Family, class Model, class T>
lane_kernel_t<Family, Model, T> library_lane_kernel();

/// Every lane kernel the library holds for a built-in model that this machine runs, widest first
/// (the tests run each against the one-chain path).
template <class Family, class Model, class T>
std::vector<lane_kernel_t<Family, Model, T>> library_lane_kernels();

/// The lane kernel the CPU backend runs Model with: the library's, dispatched at run time, for a
/// built-in model; else, for a model written over its element type (Family::in_lanes), one
/// compiled here for this translation unit's instruction set; else none (width 0), and the
/// backend runs one chain at a time. Builds without xsimd (MYRIAD_SIMD_LANES unset) have none.
template <class Family, class Model, class T>
lane_kernel_t<Family, Model, T> lane_kernel_for() {
#if MYRIAD_SIMD_LANES
  if constexpr (library_holds<Model, Family::library>::value) {
    return library_lane_kernel<Family, Model, T>();
  } else if constexpr (Family::template in_lanes<Model, xsimd::batch<T>>) {
    return compiled_lane_kernel<Family, Model, T, xsimd::default_arch>();
  }
#endif
  return {};
}

/// The lane kernel a CPU backend runs (HMC, Hamiltonian AIS, constrained HMC derive from it):
/// lane_kernel_for's, or none with simd_lanes = false (one chain at a time: the reference the
/// lanes are tested against, and the benchmarks' scalar rows); what the backend says about it;
/// and the tests' and benchmarks' way to put another instruction set's in its place.
template <class Family, class Model, class T>
class LaneKernelChoice {
 public:
  using Kernel = lane_kernel_t<Family, Model, T>;

  /// Chains per SIMD group (1: one at a time) and the instruction set.
  int lane_width() const { return lanes_.width > 0 ? lanes_.width : 1; }
  const char* lane_isa() const { return lanes_.isa; }

  /// Runs with `kernel` from now on: one of library_lane_kernels<Family, Model, T>, or Kernel{}
  /// for one chain at a time.
  void set_lane_kernel(const Kernel& kernel) {
    check_lane_kernel(kernel.width, kernel.run != nullptr);
    lanes_ = kernel;
  }

 protected:
  explicit LaneKernelChoice(bool simd_lanes)
      : lanes_(simd_lanes ? lane_kernel_for<Family, Model, T>() : Kernel{}) {}

  /// cpu_device_name(), and where the lanes run "<what> in <isa> lanes of <width> <units>".
  std::string lane_device_name(const char* what, const char* units) const {
    if (lanes_.width == 0) return cpu_device_name();
    return cpu_device_name() + ", " + what + " in " + lanes_.isa + " lanes of " +
           std::to_string(lanes_.width) + " " + units;
  }

  Kernel lanes_;  ///< width 0: one chain at a time
};

}  // namespace myriad
