#pragma once
// CUDA kernels of the many-chain HMC backend (kernels/cuda_hmc_backend.cuh launches them).
//
// Each kernel is a grid-stride loop over the per-chain bodies of detail/hmc_chain_bodies.hpp
// (the same functions the CPU backend calls in its OpenMP loop), one chain per thread, so the
// launch configuration never changes a chain's result. Ensemble arrays are [dim][chain] with the
// chain index fastest, so the threads of a warp touch consecutive addresses. The kernel plumbing
// (MYRIAD_KERNEL, block sizes, 64-bit indexing) is in kernel_common.cuh and the sums over chains
// in reduction.cuh, shared with the constrained-HMC kernels.

#include <cstdint>

#include "kernel_common.cuh"
#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/detail/chain_statistics.hpp"
#include "myriad/detail/hmc_chain_bodies.hpp"
#include "reduction.cuh"

namespace myriad::kernels {

// ---------------------------------------------------------------------------------------------
// Per-chain kernels

/// Draws each chain's initial point (initialize_chain_at, detail/hmc_chain_bodies.hpp) and
/// writes initialized[c] = 1 when a finite point was found, else 0.
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    initialize_chains_kernel(Model model, EnsembleView<T> position, EnsembleView<T> gradient,
                             T* log_density, std::uint8_t* initialized, std::uint64_t seed,
                             T radius, int max_tries, std::int64_t chains_per_init) {
  for (std::int64_t c = global_thread_index(); c < position.chains; c += grid_stride()) {
    const bool ok = initialize_chain_at(model, position, gradient, log_density, c, seed, radius,
                                        max_tries, chains_per_init);
    initialized[c] = ok ? 1 : 0;
  }
}

/// Runs iterations first_iteration … first_iteration + num_iterations − 1 of every chain in one
/// launch (hmc_chain_iterations_at; fused: the state stays put between iterations and launch
/// overhead is paid once per chunk). Recorded quantities go to `recorded` in the layout
/// DrawSink::consume expects, so that the chunk leaves the device in one contiguous copy.
/// Statistics are added to `stats`.
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    hmc_iterations_kernel(Model model, HmcEnsembleView<T> state, HmcSettings<T> settings,
                          MetricView<T> metric, std::uint32_t first_iteration, int num_iterations,
                          T* recorded, int num_quantities, ChainStatisticsView stats) {
  const std::int64_t chains = state.position.chains;
  for (std::int64_t c = global_thread_index(); c < chains; c += grid_stride()) {
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    const HmcChain<T> chain = state.chain(c);
    stats.add(c, hmc_chain_iterations(model, chain, rng, settings, metric, first_iteration,
                                      num_iterations, recorded, num_quantities, chains, c));
  }
}

/// The largest `value` among the lanes of `mask` (lanes 0 … n − 1 of the warp), in every one of
/// them.
__device__ __forceinline__ int warp_max(unsigned mask, int lanes, int value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  (void)lanes;
  return static_cast<int>(__reduce_max_sync(mask, static_cast<unsigned>(value)));
#else
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (int offset = 16; offset > 0; offset /= 2) {
    const int other = __shfl_down_sync(mask, value, offset);  // undefined past the last lane
    if (lane + offset < lanes) value = other > value ? other : value;
  }
  return __shfl_sync(mask, value, 0);
#endif
}

/// NUTS (nuts_chain_iterations, detail/hmc_chain_bodies.hpp) for every chain, one iteration at a
/// time so that each lane adds its warp's most leapfrog steps of the iteration to the lockstep
/// count: a warp runs as long as its longest tree, the lanes whose trees have finished waiting
/// masked (IterationStats::lockstep_gradient_evaluations). The mask is the warp's lanes that
/// hold a chain (consecutive chains, since the block size and grid stride are multiples of 32),
/// computed, not read from __activemask, so that it does not depend on the scheduler.
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    nuts_iterations_kernel(Model model, HmcEnsembleView<T> state, HmcSettings<T> settings,
                           MetricView<T> metric, std::uint32_t first_iteration, int num_iterations,
                           T* recorded, int num_quantities, ChainStatisticsView stats) {
  const std::int64_t chains = state.position.chains;
  for (std::int64_t c = global_thread_index(); c < chains; c += grid_stride()) {
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    const std::int64_t warp_first = c - static_cast<std::int64_t>(threadIdx.x % 32);
    const int lanes = static_cast<int>(chains - warp_first < 32 ? chains - warp_first : 32);
    const unsigned mask = lanes == 32 ? 0xFFFFFFFFu : (1u << lanes) - 1u;
    IterationStats totals;
    for (int i = 0; i < num_iterations; ++i) {
      int steps = 0;
      T* slot = recorded == nullptr
                    ? nullptr
                    : recorded + static_cast<std::int64_t>(i) * num_quantities * chains;
      totals += nuts_chain_iterations(model, state.chain(c), state.nuts_tree(c), rng, settings,
                                      metric, first_iteration + static_cast<std::uint32_t>(i), 1,
                                      slot, num_quantities, chains, c, &steps);
      totals.lockstep_gradient_evaluations += warp_max(mask, lanes, steps);
    }
    stats.add(c, totals);
  }
}

/// One warm-up iteration of every chain that also writes each chain's terms of a
/// trajectory-length criterion (hmc_chain_criterion_iteration, detail/hmc_chain_bodies.hpp).
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    hmc_criterion_kernel(Model model, HmcEnsembleView<T> state, HmcSettings<T> settings,
                         MetricView<T> metric, std::uint32_t iteration, CriterionProbe<T> probe,
                         CriterionTerms terms, ChainStatisticsView stats) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride()) {
    const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
    stats.add(c, hmc_chain_criterion_iteration(model, state.chain(c), rng, settings, metric,
                                               iteration, probe, terms, c));
  }
}

/// place_chain_at for every chain; placed[c] = 1 where log density and gradient are finite.
template <class Model, class T>
MYRIAD_KERNEL void MYRIAD_CHAIN_LAUNCH_BOUNDS(kChainBlockSize)
    place_chains_kernel(Model model, EnsembleView<T> position, EnsembleView<T> gradient,
                        T* log_density, const T* points, std::uint8_t* placed) {
  for (std::int64_t c = global_thread_index(); c < position.chains; c += grid_stride())
    placed[c] = place_chain_at(model, position, gradient, log_density, points, c) ? 1 : 0;
}

/// Every chain c with source[c] ≠ c takes chain source[c]'s point (copy_chain_state_at).
template <class T>
MYRIAD_KERNEL void __launch_bounds__(kChainBlockSize)
    copy_chains_kernel(HmcEnsembleView<T> state, const std::int64_t* source) {
  for (std::int64_t c = global_thread_index(); c < state.position.chains; c += grid_stride())
    copy_chain_state_at(state, source, c);
}

// ---------------------------------------------------------------------------------------------
// Reductions (reduction.cuh): the per-dimension moments (the statistics' loader is
// detail/chain_statistics.hpp's).

/// Σ_c x(d, c) as a term of the per-dimension sums below.
struct IdentityTerm {
  __device__ double operator()(double x, int) const { return x; }
};

/// (x(d, c) − mean[d])², for the second pass of the moments.
struct SquaredDeviationTerm {
  const double* mean;
  __device__ double operator()(double x, int d) const {
    const double deviation = x - mean[d];
    return deviation * deviation;
  }
};

/// partials[d · gridDim.x + blockIdx.x] = this block's share of Σ_c term(x(d, c), d), in
/// double. Blocks tile chains along x and dimensions along y (looping when dim > gridDim.y).
template <class T, class Term>
MYRIAD_KERNEL void __launch_bounds__(kReduceBlockSize)
    dimension_partial_sums_kernel(EnsembleView<const T> x, Term term, double* partials) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (int d = static_cast<int>(blockIdx.y); d < x.dim; d += static_cast<int>(gridDim.y)) {
    double sum = 0;
    for (std::int64_t c = first; c < x.chains; c += stride)
      sum += term(static_cast<double>(x(d, c)), d);
    sum = block_sum<double, kReduceBlockSize>(sum);
    if (threadIdx.x == 0) partials[static_cast<std::int64_t>(d) * gridDim.x + blockIdx.x] = sum;
  }
}

/// out[d] = (Σ_b partials[d · blocks + b]) / divisor, one block per dimension (looping when dim
/// exceeds the grid). Dividing, not multiplying by 1 / divisor, matches the rounding of the
/// mean in ensemble_moments_cpu. A template only so that it lives in the header with the rest.
template <class Value>
MYRIAD_KERNEL void __launch_bounds__(kReduceBlockSize)
    finish_dimension_sums_kernel(const Value* partials, int blocks, int dim, Value divisor,
                                 Value* out) {
  for (int d = static_cast<int>(blockIdx.x); d < dim; d += static_cast<int>(gridDim.x)) {
    Value sum{};
    for (int b = static_cast<int>(threadIdx.x); b < blocks; b += blockDim.x)
      sum += partials[static_cast<std::int64_t>(d) * blocks + b];
    sum = block_sum<Value, kReduceBlockSize>(sum);
    if (threadIdx.x == 0) out[d] = sum / divisor;
  }
}

}  // namespace myriad::kernels
