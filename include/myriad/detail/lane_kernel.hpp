#pragma once
// What every SIMD-lane kernel of the CPU backends is (HMC, Hamiltonian AIS, constrained HMC, the
// MP IS contraction): an entry point compiled for one instruction set, reached through a
// function pointer so that the code calling it needs no SIMD library, with the width it runs and
// the instruction set's name. Each family spells its entry's signature (detail/*_lane_types.hpp).

#include "myriad/model/library_instances.hpp"

namespace myriad {

/// A lane kernel whose entry point has the function type Entry; width 0 (no entry) where the
/// model runs one chain at a time.
template <class Entry>
struct LaneKernel {
  Entry* run = nullptr;
  int width = 0;
  const char* isa = "scalar";
};

/// A sampler's lane family (detail/lane_kernel_choice.hpp) names its kernel type for a model and
/// precision and the library_backend bit of the built-in models whose kernels the library
/// compiles; it adds `in_lanes<Model, Batch>`, whether Model is written over its element type.
template <template <class, class> class KernelOf, unsigned kLibrary>
struct LaneFamily {
  template <class Model, class T>
  using Kernel = KernelOf<Model, T>;
  static constexpr unsigned library = kLibrary;
};

/// A lane family's kernel type for Model in precision T.
template <class Family, class Model, class T>
using lane_kernel_t = typename Family::template Kernel<Model, T>;

/// The entry point of Family's kernel for Model in lanes of Arch: `function`, a pointer to the
/// family's group function instantiated for the batch of T in Arch. Each family's
/// detail/*_lane_kernel.hpp (which needs xsimd) specialises it.
template <class Family, class Model, class T, class Arch>
struct LaneEntry;

}  // namespace myriad
