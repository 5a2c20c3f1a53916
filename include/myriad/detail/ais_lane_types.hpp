#pragma once
// What the CPU AIS backend's lane loop (backend/cpu_ais_backend.hpp) and the AIS lane kernels
// (detail/ais_lane_kernel.hpp) exchange: a kernel's entry point and width, and the layout of a
// group of W particles, all of one problem, as the kernel reads it.

#include <cstdint>
#include <type_traits>
#include <utility>

#include "myriad/detail/lane_kernel.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/library_instances.hpp"

namespace myriad {

/// The group state of an AIS lane kernel: position, momentum, gradient, proposal, proposal
/// momentum and proposal gradient, each [dim][W], then the W target and W base log densities
/// (T); the W log weights are a separate double array.
constexpr int kAisLaneVectors = 6;

/// An AIS lane kernel of Target: Hamiltonian transitions of W particles of one problem in
/// lockstep (anneal_particle with S a batch); width 0 where the target's particles run one at a
/// time. stats receives one IterationStats per lane.
template <class Target, class T>
using AisLaneKernel =
    LaneKernel<void(const Target& target, int problem, const AnnealingBase<T>& base, T* group,
                    double* log_weights, std::uint64_t seed, std::uint64_t first_stream,
                    const AnnealingPath& path, std::uint32_t k_begin, std::uint32_t k_end,
                    const AisSettings<T>& settings, IterationStats* stats)>;

/// The problem type of a target (itself when it has no problems).
template <class Target>
using problem_type_t = std::decay_t<decltype(problem_target(std::declval<const Target&>(), 0))>;

/// Hamiltonian AIS's lane family (detail/lane_kernel_choice.hpp): a target runs in lanes when its
/// problems' gradients are written over their element type.
struct AisLaneFamily : LaneFamily<AisLaneKernel, library_backend::cpu_ais_lanes> {
  template <class Target, class Batch>
  static constexpr bool in_lanes = model_gradient_in_lanes<problem_type_t<Target>, Batch>;
};

}  // namespace myriad
