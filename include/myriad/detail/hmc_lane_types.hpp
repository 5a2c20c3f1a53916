#pragma once
// What the CPU backend's lane loop (detail/hmc_lane_blocks.hpp) and the lane kernels
// (detail/hmc_lane_kernel.hpp) exchange: a kernel's entry point and width, and the per-lane
// outcomes of one group transition.

#include <cstdint>

#include "myriad/mcmc/hmc.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// The outcomes of one lane-group transition, per lane.
template <class T>
struct HmcLaneOutcomes {
  T accept_prob[kMaxLaneWidth];
  bool accepted[kMaxLaneWidth];
  std::uint32_t status[kMaxLaneWidth];
  int gradient_evaluations[kMaxLaneWidth];

  HmcOutcome<T> lane(int l) const {
    return {accept_prob[l], accepted[l], status[l], gradient_evaluations[l]};
  }
};

/// A lane kernel of Model: its transition, its width and instruction set; width 0 where the
/// model runs one chain at a time.
template <class Model, class T>
struct HmcLaneKernel {
  void (*transition)(const Model& model, T* group, std::uint64_t seed, std::int64_t first,
                     std::uint32_t iteration, const HmcStep<T>& step,
                     HmcLaneOutcomes<T>& out) = nullptr;
  int width = 0;
  const char* isa = "scalar";
};

/// HMC's lane family (detail/lane_kernel_choice.hpp).
struct HmcLaneFamily {
  template <class Model, class T>
  using Kernel = HmcLaneKernel<Model, T>;
  static constexpr unsigned library = library_backend::cpu_hmc_lanes;
  template <class Kernel>
  static auto entry(const Kernel& kernel) {
    return kernel.transition;
  }
  template <class Model, class Batch>
  static constexpr bool in_lanes = model_gradient_in_lanes<Model, Batch>;
  /// The kernel of Model in lanes of Arch (detail/hmc_lane_kernel.hpp).
  template <class Model, class T, class Arch>
  static HmcLaneKernel<Model, T> compiled();
};

}  // namespace myriad
