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
//
// A staged estimator (model/staged_preparation.hpp: the GP probit's dense factorisations) runs
// its random-walk transitions in three launches per iteration: begin_walk_kernel (u given x, the
// proposal, its preparation's first step), the batched rounds of kernels/staged_preparation.cuh,
// and finish_walk_kernel (the estimate, the decision, the recorded draw); its slice updates of x
// as rounds of one trial point per chain (begin_slice_kernel, then the preparation rounds and
// continue_slice_kernel until no chain asks for a point: a chain whose updates are done waits
// masked, as in a shrink loop); its start likewise (place_chain_kernel, the rounds,
// finish_start_kernel).

#include <cstdint>

#include "kernel_common.cuh"
#include "myriad/core/hd.hpp"
#include "myriad/detail/auxiliary_chain_bodies.hpp"
#include "myriad/detail/chain_statistics.hpp"
#include "staged_preparation.cuh"

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

/// A start's try `attempt` for every chain not yet started (started[c] != 1):
/// place_auxiliary_chain, and the first step of its log target's preparation queued; started[c] = 2
/// where placed.
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    place_chain_kernel(Model model, AuxiliaryEnsembleView<T> state, AuxiliarySettings<T> settings,
                       T radius, int attempt, std::uint8_t* started, PreparationQueue<T> queue) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride()) {
    const AuxiliaryChain<T> chain = state.chain(c);
    PreparationStep step = PreparationStep::finished();
    if (started[c] != 1) {
      const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
      const bool placed = place_auxiliary_chain(model, chain, rng, settings, c, radius, attempt);
      started[c] = placed ? 2 : 0;
      if (placed) step = begin_log_target(model, chain, settings);
    }
    queue.start(c, step, chain.state_cache(), chain.workspace);
  }
}

/// The log target of every chain placed by place_chain_kernel, its preparation done; started[c]
/// = 1 where it is finite, else 0 (the next try).
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    finish_start_kernel(Model model, AuxiliaryEnsembleView<T> state, AuxiliarySettings<T> settings,
                        std::uint8_t* started) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride()) {
    if (started[c] != 2) continue;
    const AuxiliaryChain<T> chain = state.chain(c);
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    *chain.log_target = prepared_log_target(model, chain, rng, settings);
    started[c] = myriad::isfinite(*chain.log_target) ? 1 : 0;
  }
}

/// begin_walk_transition of iteration `iteration` for every chain, the proposal's first
/// preparation step queued and the status so far in status[c].
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    begin_walk_kernel(Model model, AuxiliaryEnsembleView<T> state, AuxiliarySettings<T> settings,
                      std::uint32_t iteration, PreparationQueue<T> queue, std::uint32_t* status,
                      ChainStatisticsView stats) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride()) {
    const AuxiliaryChain<T> chain = state.chain(c);
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    IterationStats counted;
    std::uint32_t so_far = kStatusOk;
    const PreparationStep step =
        begin_walk_transition(model, chain, rng, settings, iteration, so_far, counted);
    queue.start(c, step, chain.trial_cache(), chain.workspace);
    status[c] = so_far;
    stats.add(c, counted);
  }
}

/// finish_walk_transition of iteration `iteration` for every chain, then its draw recorded at
/// position `draw` of `recorded` (when not null) and its capped slice update (of u) counted.
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    finish_walk_kernel(Model model, AuxiliaryEnsembleView<T> state, AuxiliarySettings<T> settings,
                       std::uint32_t iteration, const std::uint32_t* status, T* recorded, int draw,
                       int num_quantities, ChainStatisticsView stats, std::int64_t* capped) {
  const std::int64_t chains = state.position.chains;
  for (std::int64_t c = global_thread_index(); c < chains; c += grid_stride()) {
    const AuxiliaryChain<T> chain = state.chain(c);
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    IterationStats counted;
    finish_walk_transition(model, chain, rng, settings, iteration, status[c], counted);
    stats.add(c, counted);
    capped[c] += counted.slice_capped;
    if (recorded != nullptr)
      record_auxiliary_draw(model, chain, settings, recorded, draw, num_quantities, chains, c);
  }
}

/// A chain's flag as a count (reduce_sum over chains still asking for a point).
struct LoadFlag {
  const std::uint8_t* flag;
  __device__ std::int64_t operator()(std::int64_t c) const { return flag[c]; }
};

/// Where one launch of an APM-*-SS iteration puts its results: each chain's search, whether it
/// asks for a point, the queue of its preparation, the draws and counts.
template <class T>
struct SliceRound {
  detail::SliceOfX<T>* slices;
  std::uint8_t* asking;
  PreparationQueue<T> queue;
  T* recorded;  ///< null: no draw recorded
  int draw, num_quantities;
  ChainStatisticsView stats;
  std::int64_t* capped;

  /// Chain c's step done: its next point's preparation queued, or, its updates over, its draw
  /// recorded and its capped update counted.
  template <class Model>
  __device__ void finish(const Model& model, const AuxiliaryChain<T>& chain,
                         const AuxiliarySettings<T>& settings, std::int64_t chains, std::int64_t c,
                         bool asks, const PreparationStep& step,
                         const IterationStats& counted) const {
    queue.start(c, asks ? step : PreparationStep::finished(), chain.trial_cache(), chain.workspace);
    asking[c] = asks ? 1 : 0;
    stats.add(c, counted);
    if (asks) return;
    capped[c] += counted.slice_capped;
    if (recorded != nullptr)
      record_auxiliary_draw(model, chain, settings, recorded, draw, num_quantities, chains, c);
  }
};

/// begin_slice_transition of iteration `iteration` for every chain (SliceRound::finish).
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    begin_slice_kernel(Model model, AuxiliaryEnsembleView<T> state, AuxiliarySettings<T> settings,
                       std::uint32_t iteration, SliceRound<T> round) {
  const std::int64_t chains = state.position.chains;
  for (std::int64_t c = global_thread_index(); c < chains; c += grid_stride()) {
    const AuxiliaryChain<T> chain = state.chain(c);
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    IterationStats counted;
    PreparationStep step;
    detail::SliceOfX<T> slices;
    const bool asks =
        begin_slice_transition(model, chain, rng, settings, iteration, slices, counted, step);
    round.slices[c] = slices;
    round.finish(model, chain, settings, chains, c, asks, step, counted);
  }
}

/// continue_slice_transition for every chain still asking for a point, its preparation done;
/// the others wait masked.
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    continue_slice_kernel(Model model, AuxiliaryEnsembleView<T> state,
                          AuxiliarySettings<T> settings, std::uint32_t iteration,
                          SliceRound<T> round) {
  const std::int64_t chains = state.position.chains;
  for (std::int64_t c = global_thread_index(); c < chains; c += grid_stride()) {
    if (round.asking[c] == 0) continue;
    const AuxiliaryChain<T> chain = state.chain(c);
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    IterationStats counted;
    PreparationStep step;
    detail::SliceOfX<T> slices = round.slices[c];
    const bool asks =
        continue_slice_transition(model, chain, rng, settings, iteration, slices, counted, step);
    round.slices[c] = slices;
    round.finish(model, chain, settings, chains, c, asks, step, counted);
  }
}

}  // namespace myriad::kernels
