#pragma once
// Kernels of the CUDA AIS backend (cuda_ais_backend.cuh): one thread per particle running the
// per-particle functions of estimate/hais.hpp over a range of temperatures. Particles never
// synchronise, so one launch covers many temperatures (hais.md §8, "GPU notes"); the schedule
// is read from global memory, where every thread of a warp reads the same β at the same time
// (a broadcast served from cache).

#include <cstdint>

#include "kernel_common.cuh"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"
#include "reduction.cuh"

namespace myriad::kernels {

/// Device views of the particles' state, [dim][particle] with a padded stride.
template <class T>
struct AisEnsembleView {
  EnsembleView<T> position, momentum, gradient, proposal, proposal_momentum, proposal_gradient;
  T* target_log_density;
  T* base_log_density;
  double* log_weight;

  __device__ AisParticle<T> particle(std::int64_t i) const {
    return {position.chain(i),          momentum.chain(i),          gradient.chain(i),
            proposal.chain(i),          proposal_momentum.chain(i), proposal_gradient.chain(i),
            target_log_density + i,     base_log_density + i,       log_weight + i};
  }
};

/// Starts every particle: a base draw (forward) or an exact posterior draw (reverse), then
/// momentum, density, gradient. started[i] = 1, or 0 for a particle with a non-finite start.
template <class Target, class T>
MYRIAD_KERNEL void __launch_bounds__(kChainBlockSize)
    ais_start_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base,
                     AisBatch batch, bool reverse, std::uint8_t* started) {
  for (std::int64_t i = global_thread_index(); i < batch.total; i += grid_stride())
    started[i] = start_batch_particle(target, base, state.particle(i), batch, i, reverse) ? 1 : 0;
}

/// Steps [k_begin, k_end) for every particle; adds each particle's counts to stats[i].
template <class Target, class T>
MYRIAD_KERNEL void __launch_bounds__(kChainBlockSize)
    ais_steps_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base,
                     AisBatch batch, AnnealingPath path, std::uint32_t k_begin,
                     std::uint32_t k_end, AisSettings<T> settings, StatisticsTotals* stats) {
  for (std::int64_t i = global_thread_index(); i < batch.total; i += grid_stride()) {
    const IterationStats t = anneal_batch_particle(target, base, state.particle(i), batch, i, path,
                                                   k_begin, k_end, settings);
    StatisticsTotals& s = stats[i];
    s.accept_prob_fixed += t.accept_prob_fixed;
    s.accepted += t.accepted;
    s.divergent += t.divergent;
    s.non_finite += t.non_finite;
    s.gradient_evaluations += t.gradient_evaluations;
    s.transitions += t.transitions;
  }
}

/// Reads particle i's statistics (for reduce_sum).
struct LoadParticleStatistics {
  const StatisticsTotals* stats;
  __device__ StatisticsTotals operator()(std::int64_t i) const { return stats[i]; }
};

}  // namespace myriad::kernels
