#pragma once
// The per-particle bodies of annealed importance sampling and the state they run on, in a header
// every compiler can include (as detail/hmc_chain_bodies.hpp is for HMC): the CPU backend
// (backend/cpu_ais_backend.hpp) is an OpenMP loop over start_particle_at and anneal_particle_at,
// and kernels/ais_kernels.cuh's four kernels are grid-stride loops over them, one thread
// (SerialTeam) or one warp (WarpTeam) per particle; test_ais_team.cpp runs the warp mapping's
// team on the host against one lane, bit for bit.
//
// The particle arrays (AisEnsembleArrays) are EnsembleView<T>s in the backend's layout:
// [particle][dim] on the CPU; on a GPU [dim][padded particle] for the thread mapping, so that a
// warp's 32 particles read consecutive addresses, and [particle][padded dim] for the warp
// mapping, so that a warp's lanes read consecutive coordinates of their particle.

#include <array>
#include <cstddef>
#include <cstdint>

#include "myriad/core/device_memory.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/team.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/mcmc/iteration_stats.hpp"

namespace myriad {

/// The particles' state as the per-particle bodies see it: six ensemble arrays in the backend's
/// layout, three scalars per particle, and the target's team scratch (a GPU's warp mapping).
template <class T>
struct AisEnsembleView {
  EnsembleView<T> position, momentum, gradient, proposal, proposal_momentum, proposal_gradient;
  T* target_log_density;
  T* base_log_density;
  double* log_weight;
  T* scratch = nullptr;  ///< the target's team scratch, scratch_size values per particle
  int scratch_size = 0;

  MYRIAD_HD AisParticle<T> particle(std::int64_t i) const {
    return {position.chain(i),
            momentum.chain(i),
            gradient.chain(i),
            proposal.chain(i),
            proposal_momentum.chain(i),
            proposal_gradient.chain(i),
            target_log_density + i,
            base_log_density + i,
            log_weight + i,
            scratch_size > 0 ? scratch + i * scratch_size : nullptr};
  }
};

/// The particles' state as a backend owns it: Array is HostVector on the CPU and DeviceArray on a
/// GPU (core/device_memory.hpp). Both backends size and view it with these functions, in their
/// own layouts.
template <template <class> class Array, class T>
struct AisEnsembleArrays {
  Array<T> position, momentum, gradient, proposal, proposal_momentum, proposal_gradient;
  Array<T> target_log_density, base_log_density;  ///< one per particle
  Array<double> log_weight;                       ///< one per particle
  Array<T> scratch;      ///< the target's team scratch, scratch_size values per particle
  int scratch_size = 0;  ///< 0: no scratch (every mapping but a GPU's warp per particle)

  /// Every array sized for layout.chains particles of `dim` coordinates (Array(n): zeros on the
  /// CPU, undefined on a GPU).
  void allocate(const EnsembleLayout& layout, int dim) {
    for (Array<T>* array : vectors()) *array = Array<T>(layout.values(dim));
    const auto particles = static_cast<std::size_t>(layout.chains);
    target_log_density = Array<T>(particles);
    base_log_density = Array<T>(particles);
    log_weight = Array<double>(particles);
    if (scratch_size > 0) scratch = Array<T>(static_cast<std::size_t>(scratch_size) * particles);
  }
  /// The six per-particle vectors.
  std::array<Array<T>*, 6> vectors() {
    return {&position, &momentum, &gradient, &proposal, &proposal_momentum, &proposal_gradient};
  }
  AisEnsembleView<T> view(const EnsembleLayout& layout, int dim) {
    const auto rows = [&](Array<T>& array) { return layout.view(array.data(), dim); };
    return {rows(position),
            rows(momentum),
            rows(gradient),
            rows(proposal),
            rows(proposal_momentum),
            rows(proposal_gradient),
            target_log_density.data(),
            base_log_density.data(),
            log_weight.data(),
            scratch_size > 0 ? scratch.data() : nullptr,
            scratch_size};
  }
};

/// Starts particle i (start_batch_particle: a base draw forward, an exact posterior draw in
/// reverse, then momentum, density and gradient); started[i] = 1, or 0 for a non-finite start,
/// written by lane 0.
template <class Target, class T, class Team = SerialTeam>
MYRIAD_HD void start_particle_at(const Target& target, const AisEnsembleView<T>& state,
                                 const AnnealingBase<T>& base, const AisBatch& batch, bool reverse,
                                 std::uint8_t* started, std::int64_t i, const Team& team = Team{}) {
  const bool ok = start_batch_particle(target, base, state.particle(i), batch, i, reverse, team);
  if (team.rank() == 0) started[i] = ok ? 1 : 0;
}

/// Temperatures [k_begin, k_end) of particle i (anneal_batch_particle); its counts are returned
/// and, where `stats` is given (a GPU's per-particle counters), added to stats[i] by lane 0
/// (every lane holds the same counts; the host test of the warp layout checks that they do).
template <class Target, class T, class Team = SerialTeam>
MYRIAD_HD IterationStats anneal_particle_at(const Target& target, const AisEnsembleView<T>& state,
                                            const AnnealingBase<T>& base, const AisBatch& batch,
                                            const AnnealingPath& path, std::uint32_t k_begin,
                                            std::uint32_t k_end, const AisSettings<T>& settings,
                                            IterationStats* stats, std::int64_t i,
                                            const Team& team = Team{}) {
  const IterationStats t = anneal_batch_particle(target, base, state.particle(i), batch, i, path,
                                                 k_begin, k_end, settings, team);
  if (stats != nullptr && team.rank() == 0) stats[i] += t;
  return t;
}

namespace kernels {

/// Reads particle i's statistics (a term of the CUDA backend's reduce_sum).
struct LoadParticleStatistics {
  const IterationStats* stats;
  MYRIAD_HD IterationStats operator()(std::int64_t i) const { return stats[i]; }
};

}  // namespace kernels
}  // namespace myriad
