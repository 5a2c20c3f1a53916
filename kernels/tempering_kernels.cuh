#pragma once
// CUDA kernels of the tempering samplers (kernels/cuda_tempering_backend.cuh launches them):
// grid-stride loops over the per-chain bodies of detail/tempering_chain_bodies.hpp, the functions
// the CPU backend calls, one chain per thread. Arrays are [coordinate][chain].
//
// Warps: Gibbs CT and CT-HMC evaluate the same number of times in every chain (L leapfrog steps
// and one re-tempering evaluation), so a warp's lanes stay converged but for the sign of the
// energy gap in the β draw. Simulated tempering's index draw inverts the CDF over the K + 1
// rungs and stops at a different rung in each chain: the lanes that stop early wait masked for
// at most K exponentials, small beside a trajectory's L gradients.

#include <cstdint>

#include "kernel_common.cuh"
#include "myriad/detail/chain_statistics.hpp"
#include "myriad/detail/tempering_chain_bodies.hpp"
#include "myriad/estimate/annealing_base.hpp"

namespace myriad::kernels {

/// start_tempering_chain for every chain; started[c] = 1 where its start is finite.
template <class Target>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    tempering_start_kernel(Target target, AnnealingBase<double> base,
                           TemperingSettings<double> settings, TemperingEnsembleView<double> state,
                           std::uint8_t* started) {
  for (std::int64_t c = global_thread_index(); c < state.hmc.position.chains; c += grid_stride())
    started[c] = start_tempering_chain(target, base, settings, state, c) ? 1 : 0;
}

/// Transitions first … first + count − 1 of every chain by Method in one launch, the counters of
/// its `kept` kept transitions added to `stats`.
template <class Target, TemperMethod Method>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    tempering_iterations_kernel(Target target, AnnealingBase<double> base,
                                TemperingSettings<double> settings,
                                TemperingEnsembleView<double> state, int first, int count,
                                std::int64_t kept, ChainStatisticsView stats) {
  for (std::int64_t c = global_thread_index(); c < state.hmc.position.chains; c += grid_stride())
    stats.add(c, tempering_chain_iterations<Method>(target, base, settings, state, c, first, count)
                     .stats(kept));
}

}  // namespace myriad::kernels
