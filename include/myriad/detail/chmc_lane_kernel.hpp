#pragma once
// The SIMD-lane kernel of CPU constrained HMC: one transition (mcmc/chmc.hpp,
// ChmcMachine::transition) of a group of W chains in the rows of ChmcLaneRows
// (detail/chmc_lane_types.hpp), with the element type S = xsimd::batch<T, Arch>. As for HMC's
// (detail/hmc_lane_kernel.hpp), a translation unit that includes this file compiles the kernel for
// its instruction set; the library compiles the built-in generators' kernels once per instruction
// set and picks the widest the machine runs (src/backend/simd/). Everything it instantiates is
// typed by the batch, except the random numbers, reached through the library's non-inline
// functions (detail/lane_random.hpp).

#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "myriad/detail/chmc_lane_types.hpp"
#include "myriad/detail/simd_lanes.hpp"
#include "myriad/mcmc/chmc.hpp"
#include "myriad/model/generator.hpp"

namespace myriad {

/// One constrained-HMC transition of chains first … first + W − 1 (ChmcLaneRows's layout), lane l
/// with the step size step_sizes[l] (each chain's back-off, applied by the caller) and the rest
/// of `step`.
template <class Generator, class T, class Arch>
void chmc_lane_transition(const Generator& g, T* group, std::uint64_t seed, std::int64_t first,
                          std::uint32_t iteration, const ChmcStep<T>& step, const T* step_sizes,
                          ChmcLaneOutcomes<T>& out) {
  using S = xsimd::batch<T, Arch>;
  constexpr int width = static_cast<int>(S::size);
  const ChmcLayout layout = chmc_layout<Generator, S>(g);
  const ChmcLaneRows rows = ChmcLaneRows::of(layout);
  const int n = layout.n;
  S* v = reinterpret_cast<S*>(group);
  S* scratch = v + ChmcLaneRows::kVectors * n + 1;
  const ChmcChain<S> chain{
      ChainVector<S>{v, 1, n},
      ChainVector<S>{v + n, 1, n},
      v + ChmcLaneRows::kVectors * n,
      ChainWorkspace<S>{scratch, 1},
      ChainWorkspace<Dual<S>>{reinterpret_cast<Dual<S>*>(scratch + rows.dual), 1},
      ChainWorkspace<Dual<Dual<S>>>{reinterpret_cast<Dual<Dual<S>>*>(scratch + rows.nested), 1}};
  const ChmcStep<S> lane_step{
      S::load_unaligned(step_sizes), step.steps,           step.inner_steps,
      S(step.constraint_tol),        S(step.position_tol), S(step.reverse_tol),
      S(step.divergence_tol),        step.max_iterations};
  ChmcMachine<Generator, S> machine(g, chain);
  const ChmcOutcome<S> outcome =
      machine.transition(LaneStreams<S>(seed, first), iteration, lane_step);
  outcome.accept_prob.store_unaligned(out.accept_prob);
  for (int l = 0; l < width; ++l) {
    const auto lane = static_cast<std::size_t>(l);
    out.accepted[l] = outcome.accepted.get(lane);
    out.status[l] = outcome.status[lane];
    out.gradient_evaluations[l] = outcome.gradient_evaluations[lane];
    out.newton_iterations[l] = outcome.newton_iterations[lane];
  }
}

template <class Generator, class T, class Arch>
struct LaneEntry<ChmcLaneFamily, Generator, T, Arch> {
  static constexpr auto function = &chmc_lane_transition<Generator, T, Arch>;
};

}  // namespace myriad
