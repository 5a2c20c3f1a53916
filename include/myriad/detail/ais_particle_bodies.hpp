#pragma once
// The CUDA AIS backend's per-particle kernel bodies and device view, compilable by any C++
// compiler (as detail/hmc_chain_bodies.hpp and detail/chmc_chain_bodies.hpp are for HMC and
// constrained HMC): kernels/ais_kernels.cuh's four kernels are grid-stride loops over
// start_particle_at and anneal_particle_at, one thread (SerialTeam) or one warp (WarpTeam) per
// particle, and tests/unit/test_ais_device_layout.cpp and test_ais_team.cpp run the same
// functions on host arrays in both device layouts against CpuAisBackend, bit for bit.
//
// The particle arrays are EnsembleView<T>s: [dim][padded particle] for the thread mapping, so
// that a warp's 32 particles read consecutive addresses, and [particle][padded dim] for the
// warp mapping, so that a warp's lanes read consecutive coordinates of their particle.

#include <cstdint>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/team.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/hais.hpp"
#include "myriad/mcmc/iteration_stats.hpp"

namespace myriad::kernels {

/// The particles' state as the kernels see it: six ensemble arrays in one of the two layouts,
/// three scalars per particle, and the target's team scratch (warp mapping).
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

/// Temperatures [k_begin, k_end) of particle i (anneal_batch_particle); its counts are added to
/// stats[i] by lane 0 and returned (every lane holds the same counts; the host test of the warp
/// layout checks that they do).
template <class Target, class T, class Team = SerialTeam>
MYRIAD_HD IterationStats anneal_particle_at(const Target& target, const AisEnsembleView<T>& state,
                                            const AnnealingBase<T>& base, const AisBatch& batch,
                                            const AnnealingPath& path, std::uint32_t k_begin,
                                            std::uint32_t k_end, const AisSettings<T>& settings,
                                            IterationStats* stats, std::int64_t i,
                                            const Team& team = Team{}) {
  const IterationStats t = anneal_batch_particle(target, base, state.particle(i), batch, i, path,
                                                 k_begin, k_end, settings, team);
  if (team.rank() == 0) stats[i] += t;
  return t;
}

/// Reads particle i's statistics (a term of the CUDA backend's reduce_sum).
struct LoadParticleStatistics {
  const IterationStats* stats;
  MYRIAD_HD IterationStats operator()(std::int64_t i) const { return stats[i]; }
};

}  // namespace myriad::kernels
