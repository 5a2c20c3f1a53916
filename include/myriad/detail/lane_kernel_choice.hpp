#pragma once
// Which SIMD-lane kernel a CPU backend runs, for every sampler with lane kernels (HMC, Hamiltonian
// AIS, constrained HMC) at once. A sampler's lane family (HmcLaneFamily in detail/hmc_lane_types.hpp,
// AisLaneFamily, ChmcLaneFamily) names its kernel type, the library_backend bit of the built-in models whose
// kernels the library holds, the test that a model is written over its element type, and
// `compiled<Model, T, Arch>()`, its kernel for one instruction set (defined in the family's
// detail/*_lane_kernel.hpp, which needs xsimd). The library compiles the built-in models' kernels
// once per instruction set and dispatches at run time (src/backend/simd/); a model of the user's
// gets a kernel compiled for the instruction set of the translation unit that runs it.

#include <vector>

#include "myriad/model/library_instances.hpp"

#if MYRIAD_SIMD_LANES
#include <xsimd/xsimd.hpp>
#endif

namespace myriad {

/// A lane family's kernel type for Model in precision T.
template <class Family, class Model, class T>
using lane_kernel_t = typename Family::template Kernel<Model, T>;

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
    return Family::template compiled<Model, T, xsimd::default_arch>();
  }
#endif
  return {};
}

}  // namespace myriad
