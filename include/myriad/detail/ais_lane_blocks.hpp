#pragma once
// CPU AIS with particles in SIMD lanes (issue 23): the CPU AIS backend's loop over groups of W
// particles of one problem, each group annealed in lockstep by one call of a lane kernel
// (detail/ais_lane_kernel.hpp: anneal_particle with S a batch of W particles). Hamiltonian
// transitions only; random-walk Metropolis runs one particle at a time. As for HMC
// (detail/hmc_lane_blocks.hpp), each lane computes exactly what the one-particle code computes
// for its particle, so the log weights equal the scalar path's to rounding.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "myriad/detail/ais_lane_types.hpp"
#include "myriad/detail/ais_particle_bodies.hpp"
#include "myriad/detail/lane_group.hpp"
#include "myriad/detail/lane_kernel_choice.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// A group of the AIS lane kernels' layout (detail/ais_lane_types.hpp): the six particle
/// vectors, then the target and base log densities.
template <class T>
LaneGroup<T> ais_lane_group(int dim, int width) {
  return LaneGroup<T>(dim, width, kAisLaneVectors, 2);
}

/// Anneals particles first … last − 1 of `particles` (the CPU AIS backend's arrays, [particle]
/// [dim]; a group loads their position, momentum, gradient and scalars), all of problem
/// `problem`, through steps [k_begin, k_end) in groups of the kernel's width (a short last group
/// padded with copies of its last particle, whose results are dropped), on one thread with `group`
/// as scratch.
template <class Target, class T>
IterationStats ais_lane_anneal_range(const Target& target, const AisLaneKernel<Target, T>& kernel,
                                     LaneGroup<T>& group, const AisEnsembleView<T>& particles,
                                     const AnnealingBase<T>& base, const AisBatch& batch,
                                     int problem, std::int64_t first, std::int64_t last,
                                     const AnnealingPath& path, std::uint32_t k_begin,
                                     std::uint32_t k_end, const AisSettings<T>& settings) {
  constexpr int kVectors = 3;  // position, momentum, gradient persist; the rest is scratch
  IterationStats total;
  IterationStats stats[kMaxLaneWidth];
  double weights[kMaxLaneWidth];
  const EnsembleView<T> vectors[kVectors] = {particles.position, particles.momentum,
                                             particles.gradient};
  for (std::int64_t i0 = first; i0 < last; i0 += kernel.width) {
    const int count = static_cast<int>(std::min<std::int64_t>(kernel.width, last - i0));
    for (int l = 0; l < kernel.width; ++l) {
      const std::int64_t i = i0 + std::min(l, count - 1);
      for (int v = 0; v < kVectors; ++v) copy_vector(group.lane(v, l), vectors[v].chain(i));
      group.scalar(0, l) = particles.target_log_density[i];
      group.scalar(1, l) = particles.base_log_density[i];
      weights[l] = particles.log_weight[i];
    }
    kernel.run(target, problem, base, group.data(), weights, batch.seed,
               particle_stream(i0, batch.total, path.reverse), path, k_begin, k_end, settings,
               stats);
    for (int l = 0; l < count; ++l) {
      const std::int64_t i = i0 + l;
      for (int v = 0; v < kVectors; ++v) copy_vector(vectors[v].chain(i), group.lane(v, l));
      particles.target_log_density[i] = group.scalar(0, l);
      particles.base_log_density[i] = group.scalar(1, l);
      particles.log_weight[i] = weights[l];
      total += stats[l];
    }
  }
  return total;
}

}  // namespace myriad

// The family's kernel for one instruction set, which lane_kernel_for compiles for a model of the
// user's (detail/lane_kernel_choice.hpp).
#if MYRIAD_SIMD_LANES
#include "myriad/detail/ais_lane_kernel.hpp"
#endif
