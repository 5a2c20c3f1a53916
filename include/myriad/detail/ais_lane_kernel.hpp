#pragma once
// The SIMD-lane kernel of CPU AIS: anneal_particle (estimate/hais.hpp) for W particles of one
// problem, with S = xsimd::batch<T, Arch> and the serial team, on the group layout of
// detail/ais_lane_types.hpp. Compiled as the HMC lane kernel is (detail/hmc_lane_kernel.hpp):
// for this translation unit's instruction set, or by the library once per instruction set for
// its built-in targets; nothing scalar and inline is instantiated here.

#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "myriad/core/team.hpp"
#include "myriad/detail/ais_lane_types.hpp"
#include "myriad/detail/simd_lanes.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

template <class Target, class T, class Arch>
void ais_lane_anneal(const Target& target, int problem, const AnnealingBase<T>& base, T* group,
                     double* log_weights, std::uint64_t seed, std::uint64_t first_stream,
                     const AnnealingPath& path, std::uint32_t k_begin, std::uint32_t k_end,
                     const AisSettings<T>& settings, IterationStats* stats) {
  using S = xsimd::batch<T, Arch>;
  constexpr int width = static_cast<int>(S::size);
  const int dim = base.dim;
  S* v = reinterpret_cast<S*>(group);
  const auto vector = [&](int k) { return ChainVector<S>{v + k * dim, 1, dim}; };
  typename LaneOps<S>::template per_lane<double> weights;
  for (int l = 0; l < width; ++l) weights[static_cast<std::size_t>(l)] = log_weights[l];
  const AisParticle<S> particle{vector(0),
                                vector(1),
                                vector(2),
                                vector(3),
                                vector(4),
                                vector(5),
                                v + kAisLaneVectors * dim,
                                v + kAisLaneVectors * dim + 1,
                                &weights,
                                nullptr};
  const auto tally = anneal_particle(problem_target(target, problem), base, particle,
                                     LaneStreams<S>(seed, static_cast<std::int64_t>(first_stream)),
                                     path, k_begin, k_end, settings, SerialTeam{});
  for (int l = 0; l < width; ++l) {
    log_weights[l] = weights[static_cast<std::size_t>(l)];
    stats[l] = tally[static_cast<std::size_t>(l)];
  }
}

template <class Target, class T, class Arch>
struct LaneEntry<AisLaneFamily, Target, T, Arch> {
  static constexpr auto function = &ais_lane_anneal<Target, T, Arch>;
};

}  // namespace myriad
