#pragma once
// CUDA kernels of the auxiliary-variable samplers (kernels/cuda_auxiliary_backend.cuh launches
// them): grid-stride loops over the per-chain bodies of detail/auxiliary_chain_bodies.hpp, the
// functions the CPU backend calls, one chain per thread. Arrays are [coordinate][chain].
//
// Warps and slices: a slice update's shrink loop runs a different number of evaluations in each
// chain; the lanes of a warp whose chains have accepted wait masked while the others shrink, and
// the cap (max_shrinks) bounds the wait (DESIGN.md rule 4). The random walk and the
// Metropolis-independence updates evaluate the same number of times in every chain and stay
// converged.

#include <cstdint>

#include "kernel_common.cuh"
#include "myriad/core/hd.hpp"
#include "myriad/detail/auxiliary_chain_bodies.hpp"
#include "myriad/detail/chain_statistics.hpp"

namespace myriad::kernels {

/// initialize_auxiliary_chain for every chain; started[c] = 1 where a finite start was found.
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    initialize_auxiliary_kernel(Model model, AuxiliaryEnsembleView<T> state,
                                AuxiliarySettings<T> settings, T radius, int max_tries,
                                std::uint8_t* started) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride()) {
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    started[c] =
        initialize_auxiliary_chain(model, state.chain(c), rng, settings, c, radius, max_tries) ? 1
                                                                                               : 0;
  }
}

/// Iterations first_iteration … + num_iterations − 1 of every chain in one launch, the recorded
/// quantities in DrawSink's layout, each chain's statistics added to `stats` and its capped
/// slice updates to its running total capped[c].
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    auxiliary_iterations_kernel(Model model, AuxiliaryEnsembleView<T> state,
                                AuxiliarySettings<T> settings, std::uint32_t first_iteration,
                                int num_iterations, T* recorded, int num_quantities,
                                ChainStatisticsView stats, std::int64_t* capped) {
  const std::int64_t chains = state.position.chains;
  for (std::int64_t c = global_thread_index(); c < chains; c += grid_stride()) {
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    const IterationStats chain =
        auxiliary_chain_iterations(model, state.chain(c), rng, settings, first_iteration,
                                   num_iterations, recorded, num_quantities, chains, c);
    stats.add(c, chain);
    capped[c] += chain.slice_capped;
  }
}

}  // namespace myriad::kernels
