#pragma once
// The SIMD-lane kernel of CPU HMC: one transition (mcmc/hmc.hpp, hmc_transition) of a group of W
// chains whose state is a LaneGroup of hmc_lane_group (detail/hmc_lane_blocks.hpp), with S =
// xsimd::batch<T, Arch>. A translation unit that includes this file compiles the kernel for the
// instruction set it is built for (xsimd::default_arch); the library compiles the built-in models'
// kernels once per instruction set and picks the widest the machine runs (src/backend/simd/).
//
// Everything this file instantiates is typed by the batch, hence by Arch, except what it calls
// through non-inline functions of the library (the random numbers, detail/lane_random.hpp):
// nothing scalar and inline is compiled here, so a program cannot end up running a copy of a
// scalar function built for a wider instruction set than the machine has.

#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "myriad/detail/hmc_lane_types.hpp"
#include "myriad/detail/simd_lanes.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

/// One HMC transition of chains first … first + W − 1, whose state `group` holds as batches
/// (hmc_lane_group's layout: position, gradient, proposal, momentum, proposal gradient, each
/// [dim][W], then the W log densities).
template <class Model, class T, class Arch>
void hmc_lane_transition(const Model& model, T* group, std::uint64_t seed, std::int64_t first,
                         std::uint32_t iteration, const HmcStep<T>& step, HmcLaneOutcomes<T>& out) {
  using S = xsimd::batch<T, Arch>;
  constexpr int width = static_cast<int>(S::size);
  const int dim = model.dim();
  S* v = reinterpret_cast<S*>(group);
  const auto vector = [&](int k) { return ChainVector<S>{v + k * dim, 1, dim}; };
  const HmcChain<S> chain{vector(0), vector(1), v + 5 * dim, vector(2), vector(3), vector(4)};
  const HmcOutcome<S> outcome =
      hmc_transition(model, chain, LaneStreams<S>(seed, first), iteration, step);
  outcome.accept_prob.store_unaligned(out.accept_prob);
  for (int l = 0; l < width; ++l) {
    out.accepted[l] = outcome.accepted.get(static_cast<std::size_t>(l));
    out.status[l] = outcome.status[static_cast<std::size_t>(l)];
    out.gradient_evaluations[l] = outcome.gradient_evaluations[static_cast<std::size_t>(l)];
  }
}

template <class Model, class T, class Arch>
struct LaneEntry<HmcLaneFamily, Model, T, Arch> {
  static constexpr auto function = &hmc_lane_transition<Model, T, Arch>;
};

}  // namespace myriad
