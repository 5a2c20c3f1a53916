#pragma once
// What the CPU backend's lane loop (detail/hmc_lane_blocks.hpp) and the lane kernels
// (detail/hmc_lane_kernel.hpp) exchange: a kernel's entry point and width, and the per-lane
// outcomes of one group transition.

#include <cstdint>

#include "myriad/detail/lane_kernel.hpp"
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

/// A lane kernel of Model: one HMC transition of the chains first … first + W − 1.
template <class Model, class T>
using HmcLaneKernel =
    LaneKernel<void(const Model& model, T* group, std::uint64_t seed, std::int64_t first,
                    std::uint32_t iteration, const HmcStep<T>& step, HmcLaneOutcomes<T>& out)>;

/// HMC's lane family (detail/lane_kernel_choice.hpp).
struct HmcLaneFamily : LaneFamily<HmcLaneKernel, library_backend::cpu_hmc_lanes> {
  template <class Model, class Batch>
  static constexpr bool in_lanes = model_gradient_in_lanes<Model, Batch>;
};

}  // namespace myriad
