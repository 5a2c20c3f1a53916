#pragma once
// CPU constrained HMC with chains in SIMD lanes (issue 23): the CPU backend's loop over groups of
// W consecutive chains, each group advanced in lockstep by one call per iteration of a lane
// kernel (detail/chmc_lane_kernel.hpp: ChmcMachine with T a batch of W chains), with the
// per-chain bookkeeping — statistics, step back-off, recorded draws — done here per lane by the
// scalar code of the one-chain loop (detail/chmc_chain_bodies.hpp). Nothing here needs a SIMD
// library: the kernel is reached through a function pointer.
//
// Each lane computes what the one-chain code computes for its chain, with the same random
// numbers, so a chain's draws do not depend on its lane, its group, the width or the threads;
// they equal the one-chain path's to rounding (xsimd's exp and log against libm's, and FMA
// contraction on AVX2 and AVX-512), under the tolerance the CPU and CUDA backends are held to
// (tests/common/chmc_agreement.hpp; tests/unit/test_chmc_lanes.cpp).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "myriad/backend/chmc_backend.hpp"
#include "myriad/detail/chmc_chain_bodies.hpp"
#include "myriad/detail/chmc_lane_types.hpp"
#include "myriad/detail/hmc_chain_bodies.hpp"
#include "myriad/detail/lane_group.hpp"
#include "myriad/detail/lane_kernel_choice.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/mcmc/step_back_off.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// A group of the constrained-HMC lane kernels' layout (ChmcLaneRows).
template <class T>
LaneGroup<T> chmc_lane_group(const ChmcLayout& layout, int width) {
  return LaneGroup<T>(layout.n, width, ChmcLaneRows::kVectors,
                      static_cast<int>(ChmcLaneRows::scalar_rows(layout)));
}

/// chain_iterations (detail/chmc_chain_bodies.hpp) for chains first … last − 1 of `state` (the
/// CPU's [chain][element] layout) in groups of the kernel's width, on one thread, with `group` as
/// the thread's scratch. The lanes past `last` in the final group repeat its last chain; their
/// results are never stored.
template <class Generator, class T>
IterationStats chmc_lane_iterations(const Generator& generator,
                                    const ChmcLaneKernel<Generator, T>& kernel, LaneGroup<T>& group,
                                    const kernels::ChmcEnsembleView<T>& state, std::int64_t first,
                                    std::int64_t last, const ChmcSettings<T>& settings,
                                    std::uint32_t first_iteration, int num_iterations, T* recorded,
                                    int num_quantities) {
  IterationStats stats;
  ChmcLaneOutcomes<T> out;
  IterationStats tallies[kMaxLaneWidth];
  std::uint8_t halvings[kMaxLaneWidth];
  T step_sizes[kMaxLaneWidth];
  for (std::int64_t c0 = first; c0 < last; c0 += kernel.width) {
    const int count = static_cast<int>(std::min<std::int64_t>(kernel.width, last - c0));
    for (int l = 0; l < kernel.width; ++l) {
      const std::int64_t c = c0 + std::min(l, count - 1);
      copy_vector(group.lane(0, l), state.position.chain(c));
      copy_vector(group.lane(1, l), state.gradient.chain(c));
      group.scalar(0, l) = state.potential[c];
      halvings[l] = settings.step_back_off ? state.step_halvings[c] : 0;
      tallies[l] = IterationStats{};
    }
    for (int i = 0; i < num_iterations; ++i) {
      const std::uint32_t iteration = first_iteration + static_cast<std::uint32_t>(i);
      const ChmcStep<T> step = kernels::iteration_step(settings, iteration);
      for (int l = 0; l < kernel.width; ++l)
        step_sizes[l] = step.step_size * step_back_off_scale<T>(halvings[l]);
      kernel.run(generator, group.data(), settings.seed, c0, iteration, step, step_sizes, out);
      for (int l = 0; l < count; ++l) {
        const ChmcOutcome<T> outcome = out.lane(l);
        if (settings.step_back_off) halvings[l] = next_step_halvings(halvings[l], outcome);
        kernels::record_outcome(tallies[l], outcome);
        record_chain_quantities(generator, group.lane(0, l), recorded, i, num_quantities,
                                state.position.chains, c0 + l);
      }
    }
    for (int l = 0; l < count; ++l) {
      const std::int64_t c = c0 + l;
      copy_vector(state.position.chain(c), group.lane(0, l));
      copy_vector(state.gradient.chain(c), group.lane(1, l));
      state.potential[c] = group.scalar(0, l);
      if (settings.step_back_off) state.step_halvings[c] = halvings[l];
      stats += tallies[l];
    }
  }
  return stats;
}

}  // namespace myriad

// The family's kernel for one instruction set, which lane_kernel_for compiles for a model of the
// user's (detail/lane_kernel_choice.hpp).
#if MYRIAD_SIMD_LANES
#include "myriad/detail/chmc_lane_kernel.hpp"
#endif
