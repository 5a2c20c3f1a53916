#pragma once
// Kernels of the CUDA AIS backend (cuda_ais_backend.cuh): grid-stride loops over the
// per-particle bodies of detail/ais_particle_bodies.hpp (which the host tests run too), over a
// range of temperatures in one of two mappings:
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
#include "myriad/detail/ais_particle_bodies.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"
#include "reduction.cuh"
#include "warp_team.cuh"

namespace myriad::kernels {

/// Threads per block of the warp-per-particle kernels: two warps, so that a few hundred
/// particles spread over every SM (the HAIS protocol's 200 particles: 100 blocks) instead of
/// crowding a few SMs' L1 bandwidth.
constexpr int kWarpBlockSize = 64;

/// Starts every particle (start_particle_at); started[i] = 1, or 0 for a non-finite start.
template <class Target, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    ais_start_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base, AisBatch batch,
                     bool reverse, std::uint8_t* started) {
  for (std::int64_t i = global_thread_index(); i < batch.total; i += grid_stride())
    start_particle_at(target, state, base, batch, reverse, started, i);
}

/// Steps [k_begin, k_end) for every particle (anneal_particle_at); adds each particle's counts
/// to stats[i].
template <class Target, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    ais_steps_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base, AisBatch batch,
                     AnnealingPath path, std::uint32_t k_begin, std::uint32_t k_end,
                     AisSettings<T> settings, IterationStats* stats) {
  for (std::int64_t i = global_thread_index(); i < batch.total; i += grid_stride())
    anneal_particle_at(target, state, base, batch, path, k_begin, k_end, settings, stats, i);
}

/// ais_start_kernel with one warp per particle: warp w of the grid starts particles w, w + warps…
template <class Target, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kWarpBlockSize)
    ais_start_warp_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base,
                          AisBatch batch, bool reverse, std::uint8_t* started) {
  const WarpTeam team;
  for (std::int64_t i = global_warp_index(); i < batch.total; i += grid_warps())
    start_particle_at(target, state, base, batch, reverse, started, i, team);
}

/// ais_steps_kernel with one warp per particle.
template <class Target, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kWarpBlockSize)
    ais_steps_warp_kernel(Target target, AisEnsembleView<T> state, AnnealingBase<T> base,
                          AisBatch batch, AnnealingPath path, std::uint32_t k_begin,
                          std::uint32_t k_end, AisSettings<T> settings, IterationStats* stats) {
  const WarpTeam team;
  for (std::int64_t i = global_warp_index(); i < batch.total; i += grid_warps())
    anneal_particle_at(target, state, base, batch, path, k_begin, k_end, settings, stats, i, team);
}

}  // namespace myriad::kernels
