#pragma once
// CPU HMC with chains in SIMD lanes (issue 23): the CPU backend's loop over groups of W
// consecutive chains, each group advanced in lockstep by one call per iteration of a lane kernel
// (detail/hmc_lane_kernel.hpp: hmc_transition with S a batch of W chains), with the per-chain
// bookkeeping (totals, recorded draws, criterion terms) done here per lane by the scalar code the
// one-chain loop uses (detail/hmc_chain_bodies.hpp). Nothing here needs a SIMD library: the
// kernel is reached through a function pointer, compiled where the instruction set is known.
//
// Each lane computes exactly what the one-chain code computes for its chain, with the same
// random numbers, so a chain's draws do not depend on its lane, its group, the width or the
// threads; they equal the scalar path's to rounding (xsimd's exp and log against libm's, FMA
// contraction on AVX2 and AVX-512: tests/unit/test_hmc_lanes.cpp states the tolerance).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/detail/hmc_chain_bodies.hpp"
#include "myriad/detail/hmc_lane_types.hpp"
#include "myriad/detail/lane_group.hpp"
#include "myriad/detail/lane_kernel_choice.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/mcmc/trajectory_criterion.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// The HMC lane kernels' group layout (detail/hmc_lane_kernel.hpp): position, gradient,
/// proposal, momentum and proposal gradient, each [dim][W], then the W log densities.
enum HmcLaneVector : int { kLanePosition, kLaneGradient, kLaneProposal, kLaneMomentum };
constexpr int kHmcLaneVectors = 5;

/// A group of the HMC lane kernels' layout.
template <class T>
LaneGroup<T> hmc_lane_group(int dim, int width) {
  return LaneGroup<T>(dim, width, kHmcLaneVectors, 1);
}

/// Copies chains first … first + count − 1 of `state` into the first `count` lanes of `group`
/// (position, gradient, log density); the other lanes repeat the last of them (their results
/// are never stored).
template <class T>
void load_hmc_lanes(LaneGroup<T>& group, const HmcEnsembleView<T>& state, std::int64_t first,
                    int count) {
  for (int l = 0; l < group.width(); ++l) {
    const std::int64_t c = first + std::min(l, count - 1);
    copy_vector(group.lane(kLanePosition, l), state.position.chain(c));
    copy_vector(group.lane(kLaneGradient, l), state.gradient.chain(c));
    group.scalar(0, l) = state.log_density[c];
  }
}

/// Copies the first `count` lanes of `group` back to chains first … first + count − 1.
template <class T>
void store_hmc_lanes(LaneGroup<T>& group, const HmcEnsembleView<T>& state, std::int64_t first,
                     int count) {
  for (int l = 0; l < count; ++l) {
    copy_vector(state.position.chain(first + l), group.lane(kLanePosition, l));
    copy_vector(state.gradient.chain(first + l), group.lane(kLaneGradient, l));
    state.log_density[first + l] = group.scalar(0, l);
  }
}

/// hmc_chain_iterations for chains first … last − 1 in groups of the kernel's width, on one
/// thread, with `group` as the thread's scratch.
template <class Model, class T>
IterationStats hmc_lane_iterations(const Model& model, const HmcLaneKernel<Model, T>& kernel,
                                   LaneGroup<T>& group, const HmcEnsembleView<T>& state,
                                   std::int64_t first, std::int64_t last,
                                   const HmcSettings<T>& settings, const MetricView<T>& metric,
                                   std::uint32_t first_iteration, int num_iterations, T* recorded,
                                   int num_quantities) {
  IterationStats stats;
  HmcLaneOutcomes<T> out;
  HmcChainTotals totals[kMaxLaneWidth];
  for (std::int64_t c0 = first; c0 < last; c0 += kernel.width) {
    const int count = static_cast<int>(std::min<std::int64_t>(kernel.width, last - c0));
    load_hmc_lanes(group, state, c0, count);
    std::fill(totals, totals + kernel.width, HmcChainTotals{});
    for (int i = 0; i < num_iterations; ++i) {
      const std::uint32_t iteration = first_iteration + static_cast<std::uint32_t>(i);
      kernel.run(model, group.data(), settings.seed, c0, iteration,
                 iteration_step(settings, metric, iteration), out);
      for (int l = 0; l < count; ++l) {
        totals[l].add(out.lane(l));
        record_chain_quantities(model, group.lane(kLanePosition, l), recorded, i, num_quantities,
                                state.position.chains, c0 + l);
      }
    }
    store_hmc_lanes(group, state, c0, count);
    for (int l = 0; l < count; ++l) stats += totals[l].stats(num_iterations);
  }
  return stats;
}

/// hmc_chain_criterion_iteration for chains first … last − 1 in groups of the kernel's width.
template <class Model, class T>
IterationStats hmc_lane_criterion_iteration(
    const Model& model, const HmcLaneKernel<Model, T>& kernel, LaneGroup<T>& group,
    const HmcEnsembleView<T>& state, std::int64_t first, std::int64_t last,
    const HmcSettings<T>& settings, const MetricView<T>& metric, std::uint32_t iteration,
    const CriterionProbe<T>& probe, const CriterionTerms& terms) {
  IterationStats stats;
  HmcLaneOutcomes<T> out;
  double start_square[kMaxLaneWidth];
  for (std::int64_t c0 = first; c0 < last; c0 += kernel.width) {
    const int count = static_cast<int>(std::min<std::int64_t>(kernel.width, last - c0));
    load_hmc_lanes(group, state, c0, count);
    for (int l = 0; l < count; ++l)
      start_square[l] = criterion_square(probe, group.lane(kLanePosition, l), metric);
    kernel.run(model, group.data(), settings.seed, c0, iteration,
               iteration_step(settings, metric, iteration), out);
    for (int l = 0; l < count; ++l) {
      write_criterion_terms(probe, terms, c0 + l, start_square[l],
                            static_cast<double>(out.accept_prob[l]), group.lane(kLaneProposal, l),
                            group.lane(kLaneMomentum, l), group.lane(kLanePosition, l), metric);
      HmcChainTotals totals;
      totals.add(out.lane(l));
      stats += totals.stats(1);
    }
    store_hmc_lanes(group, state, c0, count);
  }
  return stats;
}

}  // namespace myriad

// The family's kernel for one instruction set, which lane_kernel_for compiles for a model of the
// user's (detail/lane_kernel_choice.hpp).
#if MYRIAD_SIMD_LANES
#include "myriad/detail/hmc_lane_kernel.hpp"
#endif
