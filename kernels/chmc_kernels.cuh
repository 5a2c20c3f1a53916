#pragma once
// CUDA kernels of the many-chain constrained-HMC backend (kernels/cuda_chmc_backend.cuh launches
// them), in two chain mappings (ChmcChainMapping, backend/chmc_backend.hpp).
//
// Thread per chain. Like the HMC kernels (hmc_kernels.cuh), each kernel is a grid-stride loop
// over chains that calls the per-chain code of mcmc/chmc.hpp, the same functions the
// CPU backend (backend/cpu_chmc_backend.hpp) calls in its OpenMP loop, so a chain's arithmetic
// does not depend on the launch configuration. Every per-chain array is [element][chain] with one
// padded stride (detail/chmc_chain_bodies.hpp), so a warp reads element e of 32 consecutive
// chains in one coalesced transaction, whatever the generator's M and N.
//
// Lockstep: N_s is drawn per iteration from the ensemble stream (uniform_trajectory_steps), so
// every thread runs the same outer loop; projections whose Newton counts differ per chain, and
// chains whose trajectory failed, diverge inside a warp and are masked by the hardware until the
// warp reconverges (DESIGN.md, rule 4). A failed chain returns at once: its remaining lanes idle.
//
// Warp per chain (DESIGN.md rule 6(b)). A grid-stride loop over chains hands each chain to one
// warp, which runs the same per-chain code with a WarpTeam (warp_team.cuh): vector updates by
// element, the dense factor's Gram, Cholesky, substitutions and products shared by the lanes
// (linalg/team_ops.hpp), the generator's own functions on lane 0. The scratch is [chain][element]
// so that a warp's lanes read consecutive elements. Every lane takes every branch together
// (control flow depends only on scalars all lanes compute alike), so the warp never diverges
// around its collectives, and a chain's bits are those of the thread mapping and the CPU.

#include <cstdint>

#include "kernel_common.cuh"
#include "myriad/backend/chmc_backend.hpp"
#include "myriad/detail/chmc_chain_bodies.hpp"
#include "reduction.cuh"
#include "warp_team.cuh"

namespace myriad::kernels {

// ---------------------------------------------------------------------------------------------
// Kernels, thread per chain: grid-stride loops over chains, one chain per thread.

/// initialize_chain_at for every chain; initialized[c] = 1 on success, else 0.
template <class Generator, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    initialize_chmc_chains_kernel(Generator generator, ChmcEnsembleView<T> state,
                                  std::uint8_t* initialized, std::uint64_t seed, int max_tries,
                                  std::int64_t chains_per_init) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride()) {
    initialized[c] =
        initialize_chain_at(generator, state, seed, max_tries, chains_per_init, c) ? 1 : 0;
  }
}

/// restart_chain_at for every chain; evaluated[c] = 1 on success (and for chains that stay),
/// else 0, as initialized[] (LoadInitializationFailure counts the failures).
template <class Generator, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    restart_chmc_chains_kernel(Generator generator, ChmcEnsembleView<T> state,
                               const std::int64_t* source, std::uint8_t* evaluated) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride())
    evaluated[c] = restart_chain_at(generator, state, source, c) ? 1 : 0;
}

/// chain_iterations_at for every chain: one launch runs a whole chunk of iterations (fused:
/// launch overhead is paid once per chunk, and a chain's state stays put between iterations).
template <class Generator, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    chmc_iterations_kernel(Generator generator, ChmcEnsembleView<T> state, ChmcSettings<T> settings,
                           std::uint32_t first_iteration, int num_iterations, T* recorded,
                           int num_quantities, ChainStatisticsView stats) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride()) {
    chain_iterations_at(generator, state, settings, first_iteration, num_iterations, recorded,
                        num_quantities, stats, c);
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels, warp per chain: grid-stride loops over chains, one chain per warp. Blocks of
// kWarpChainBlockSize threads (4 warps): a chain's lanes are heavy on registers (the generator's
// code runs on lane 0 with the whole per-chain machinery), and small blocks spread a few hundred
// chains over every SM.

constexpr int kWarpChainBlockSize = 128;

/// initialize_chain_at for every chain, a warp per chain; lane 0 writes initialized[c].
template <class Generator, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kWarpChainBlockSize)
    initialize_chmc_chains_warp_kernel(Generator generator, ChmcEnsembleView<T> state,
                                       std::uint8_t* initialized, std::uint64_t seed, int max_tries,
                                       std::int64_t chains_per_init) {
  const WarpTeam team;
  for (std::int64_t c = global_warp_index(); c < state.position.chains; c += grid_warps()) {
    const bool placed =
        initialize_chain_at(generator, state, seed, max_tries, chains_per_init, c, team);
    if (team.rank() == 0) initialized[c] = placed ? 1 : 0;
  }
}

/// restart_chain_at for every chain, a warp per chain; lane 0 writes evaluated[c].
template <class Generator, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kWarpChainBlockSize)
    restart_chmc_chains_warp_kernel(Generator generator, ChmcEnsembleView<T> state,
                                    const std::int64_t* source, std::uint8_t* evaluated) {
  const WarpTeam team;
  for (std::int64_t c = global_warp_index(); c < state.position.chains; c += grid_warps()) {
    const bool ok = restart_chain_at(generator, state, source, c, team);
    if (team.rank() == 0) evaluated[c] = ok ? 1 : 0;
  }
}

/// chain_iterations_at for every chain, a warp per chain (one launch per chunk, as the thread
/// mapping).
template <class Generator, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kWarpChainBlockSize)
    chmc_iterations_warp_kernel(Generator generator, ChmcEnsembleView<T> state,
                                ChmcSettings<T> settings, std::uint32_t first_iteration,
                                int num_iterations, T* recorded, int num_quantities,
                                ChainStatisticsView stats) {
  const WarpTeam team;
  for (std::int64_t c = global_warp_index(); c < state.position.chains; c += grid_warps()) {
    chain_iterations_at(generator, state, settings, first_iteration, num_iterations, recorded,
                        num_quantities, stats, c, team);
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels of the batched Gram factorisation (GramFactorization, backend/gram_factorization.hpp):
// one transition in 1 + N_s · N_g phases, each launch one phase of every chain, with the
// batched Cholesky of every chain's pending Gram matrix between two launches
// (kernels/cuda_chmc_backend.cuh). Templated on the team: SerialTeam (thread per chain) or
// WarpTeam (warp per chain).

/// The grid-stride loop over chains of a chain mapping.
template <class Team>
struct ChainGrid;
template <>
struct ChainGrid<SerialTeam> {
  static constexpr int kBlockSize = kChainBlockSize;
  __device__ static std::int64_t first() { return global_thread_index(); }
  __device__ static std::int64_t stride() { return grid_stride(); }
};
template <>
struct ChainGrid<WarpTeam> {
  static constexpr int kBlockSize = kWarpChainBlockSize;
  __device__ static std::int64_t first() { return global_warp_index(); }
  __device__ static std::int64_t stride() { return grid_warps(); }
};

/// begin_transition_at for every chain.
template <class Generator, class T, class Team>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(ChainGrid<Team>::kBlockSize)
    begin_chmc_transitions_kernel(Generator generator, ChmcEnsembleView<T> state,
                                  ChmcProgress<T>* progress) {
  const Team team;
  for (std::int64_t c = ChainGrid<Team>::first(); c < state.position.chains;
       c += ChainGrid<Team>::stride()) {
    begin_transition_at(generator, state, progress, c, team);
  }
}

/// resume_transition_at for every chain.
template <class Generator, class T, class Team>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(ChainGrid<Team>::kBlockSize)
    resume_chmc_transitions_kernel(Generator generator, ChmcEnsembleView<T> state,
                                   std::uint64_t seed, std::uint32_t iteration, ChmcStep<T> step,
                                   bool step_back_off, int phase, const int* info,
                                   ChmcProgress<T>* progress, bool last, T* recorded_iteration,
                                   int num_quantities, ChainStatisticsView stats) {
  const Team team;
  for (std::int64_t c = ChainGrid<Team>::first(); c < state.position.chains;
       c += ChainGrid<Team>::stride()) {
    resume_transition_at(generator, state, seed, iteration, step, step_back_off, phase, info,
                         progress, last, recorded_iteration, num_quantities, stats, c, team);
  }
}

}  // namespace myriad::kernels
