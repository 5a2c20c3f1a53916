#pragma once
// Kernels of the CUDA AIS backend (cuda_ais_backend.cuh), running the per-particle functions of
// estimate/hais.hpp over a range of temperatures in one of two mappings:
//   thread  one thread per particle (SerialTeam), for many particles; the state is
//           [dim][particle], so a warp's 32 particles read consecutive addresses;
//   warp    one warp per particle (WarpTeam, kernels/warp_team.cuh), for few particles with a
//           costly target: the lanes share the coordinates and, through the target's team
//           gradient (model/team_density.hpp), the evaluation; the state is [particle][dim],
//           so a warp's lanes read consecutive coordinates of their particle.
// Particles never synchronise, so one launch covers many temperatures (hais.md §8, "GPU
// notes"); the schedule is read from global memory, where every thread of a warp reads the same
// β at the same time (a broadcast served from cache).

#include <cstdint>

#include "kernel_common.cuh"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"
#include "reduction.cuh"
#include "warp_team.cuh"

namespace myriad::kernels {

/// Device views of the particles' state: [dim][particle] with a padded stride (thread mapping)
/// or [particle][padded dim] (warp mapping).
template <class T>
struct AisEnsembleView {
  EnsembleView<T> position, momentum, gradient, proposal, proposal_momentum, proposal_gradient;
  T* target_log_density;
  T* base_log_density;
  double* log_weight;
  T* scratch = nullptr;  ///< the target's team scratch, scratch_size values per particle
  int scratch_size = 0;

  __device__ AisParticle<T> particle(std::int64_t i) const {
    return {position.chain(i),
            momentum.chain(i),
            gradient.chain(i),
            proposal.chain(i),
            proposal_momentum.chain(i),
            proposal_gradient.chain(i),
            target_log_density + i,
            base_log_density + i,
            log_weight + i,
            scratch_size > 0 ? scratch + i * scratch_size : nullptr};
  }
};

/// Threads per block of the warp-per-particle kernels: two warps, so that a few hundred
/// particles spread over every SM (the HAIS protocol's 200 particles: 100 blocks) instead of
/// crowding a few SMs' L1 bandwidth.
constexpr int kWarpBlockSize = 64;

/// Starts every particle: a base draw (forward) or an exact posterior draw (reverse), then
/// momentum, density, gradient. started[i] = 1, or 0 for a particle with a non-finite start.
template <class Target, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    ais_start_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base,
                     AisBatch batch, bool reverse, std::uint8_t* started) {
  for (std::int64_t i = global_thread_index(); i < batch.total; i += grid_stride())
    started[i] = start_batch_particle(target, base, state.particle(i), batch, i, reverse) ? 1 : 0;
}

/// Steps [k_begin, k_end) for every particle; adds each particle's counts to stats[i].
template <class Target, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    ais_steps_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base,
                     AisBatch batch, AnnealingPath path, std::uint32_t k_begin,
                     std::uint32_t k_end, AisSettings<T> settings, IterationStats* stats) {
  for (std::int64_t i = global_thread_index(); i < batch.total; i += grid_stride()) {
    const IterationStats t = anneal_batch_particle(target, base, state.particle(i), batch, i, path,
                                                   k_begin, k_end, settings);
    stats[i] += t;
  }
}

/// ais_start_kernel with one warp per particle: warp w of the grid starts particles w, w + warps…
template <class Target, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kWarpBlockSize)
    ais_start_warp_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base,
                          AisBatch batch, bool reverse, std::uint8_t* started) {
  const WarpTeam team;
  for (std::int64_t i = global_warp_index(); i < batch.total; i += grid_warps()) {
    const bool ok = start_batch_particle(target, base, state.particle(i), batch, i, reverse, team);
    if (team.rank() == 0) started[i] = ok ? 1 : 0;
  }
}

/// ais_steps_kernel with one warp per particle. Every lane holds the same counts; lane 0 adds
/// them.
template <class Target, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kWarpBlockSize)
    ais_steps_warp_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base,
                          AisBatch batch, AnnealingPath path, std::uint32_t k_begin,
                          std::uint32_t k_end, AisSettings<T> settings, IterationStats* stats) {
  const WarpTeam team;
  for (std::int64_t i = global_warp_index(); i < batch.total; i += grid_warps()) {
    const IterationStats t = anneal_batch_particle(target, base, state.particle(i), batch, i, path,
                                                   k_begin, k_end, settings, team);
    if (team.rank() == 0) stats[i] += t;
  }
}

/// Reads particle i's statistics (for reduce_sum).
struct LoadParticleStatistics {
  const IterationStats* stats;
  __device__ IterationStats operator()(std::int64_t i) const { return stats[i]; }
};

}  // namespace myriad::kernels
