#pragma once
// What the CPU constrained-HMC backend's lane loop (detail/chmc_lane_blocks.hpp) and the lane
// kernels (detail/chmc_lane_kernel.hpp) exchange: a kernel's entry point and width, the per-lane
// outcomes of one group transition, and the layout of a group of W chains as the kernel reads it.

#include <cstdint>

#include "myriad/core/dual.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/detail/hmc_lane_types.hpp"
#include "myriad/detail/lane_kernel.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// A group of W chains in [row][W] rows of T (LaneGroup, detail/lane_group.hpp): u and ∇φ
/// ([N][W] each, vectors 0 and 1), then φ (one row), then the transition's scratch — the
/// chain's ChmcLayout workspaces as W-wide rows: size() rows of T, then dual_size() duals of two
/// rows each and nested_size() nested duals of four. The scratch need not survive a transition
/// (each starts by evaluating J and the Gram factor at u).
struct ChmcLaneRows {
  static constexpr int kVectors = 2;     ///< u, ∇φ
  static constexpr int kDualRows = 2;    ///< a Dual<S>: value and tangent
  static constexpr int kNestedRows = 4;  ///< a Dual<Dual<S>>
  /// First rows of the dual and nested-dual workspaces, and the scratch's rows in all, counted
  /// from the scratch (whose T workspace comes first).
  std::int64_t dual, nested, end;

  static ChmcLaneRows of(const ChmcLayout& layout) {
    const std::int64_t dual = layout.size();
    const std::int64_t nested = dual + kDualRows * layout.dual_size();
    return {dual, nested, nested + kNestedRows * layout.nested_size()};
  }
  /// Rows after the vectors: φ and the scratch.
  static std::int64_t scalar_rows(const ChmcLayout& layout) { return 1 + of(layout).end; }
};

/// The outcomes of one lane-group transition, per lane: HMC's and the projections' Newton
/// iterations.
template <class T>
struct ChmcLaneOutcomes : HmcLaneOutcomes<T> {
  int newton_iterations[kMaxLaneWidth];

  ChmcOutcome<T> lane(int l) const {
    return {this->accept_prob[l], this->accepted[l], this->status[l], this->gradient_evaluations[l],
            newton_iterations[l]};
  }
};

/// A lane kernel of Generator: one constrained-HMC transition of W chains whose state is a group
/// of ChmcLaneRows, chain first + l in lane l with its own step size step_sizes[l] (the step
/// back-off); width 0 where the generator runs one chain at a time.
template <class Generator, class T>
using ChmcLaneKernel = LaneKernel<void(
    const Generator& g, T* group, std::uint64_t seed, std::int64_t first, std::uint32_t iteration,
    const ChmcStep<T>& step, const T* step_sizes, ChmcLaneOutcomes<T>& out)>;

/// Constrained HMC's lane family (detail/lane_kernel_choice.hpp).
struct ChmcLaneFamily : LaneFamily<ChmcLaneKernel, library_backend::cpu_chmc_lanes> {
  template <class Generator, class Batch>
  static constexpr bool in_lanes = generator_in_lanes<Generator, Batch>;
};

}  // namespace myriad
