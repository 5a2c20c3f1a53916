#pragma once
// Annealed importance sampling for one particle: Hamiltonian AIS (Sohl-Dickstein & Culpepper
// 2011), AIS with full-refresh HMC transitions (Graham 2017, Alg. 13) and AIS with random-walk
// Metropolis transitions (the HAIS paper's baseline). Written once for the CPU backend's OpenMP
// loop and the CUDA kernels (DESIGN.md, rule 1). Equations: hais.md §2, §4, §5, §7, §8.
//
// Bridging densities π_n ∝ exp(−E_n), E_n = (1 − β_n) E_q + β_n E_p, with E_p = −log p̃ (the
// target's log_density) and E_q the base (estimate/annealing_base.hpp). Each particle carries
//
//   log_weight = Σ_n (β_n − β_{n−1}) [log p̃(x_n) + E_q(x_n)]     (hais.md §2, telescoped form)
//
// so that log w = log Z_q + log_weight. The increment of level n is taken at the state before
// the transition at β_n; the last level gets no transition. A reverse (BDMC) run starts from an
// exact posterior draw and visits the levels from N down to 1, with the transition at β_{n−1}
// (§7); its log_weight is the same sum along the reversed path, −r_b in §7's notation.
//
// Hamiltonian transition at β, with unit-mass momentum v that persists across temperatures:
//   L leapfrog steps of size ε, Metropolis accept on H = E_β(x) + ½|v|², on reject v ← −v, then
//   the partial refresh v ← √(1 − γ) v + √γ r, r ~ N(0, I) (γ = 1 − 0.5^ε by default; γ = 1 is
//   the full refresh of plain AIS with HMC). hais.md §4 prints "+ γ r"; the variance-preserving
//   √γ r is used (§12 errata).
//
// Leapfrog form [derived]: the paper's step is position-first (a gradient at x½ and a separate
// energy at x¹). Velocity-first leapfrog with ∇log p̃ cached at the current point leaves the same
// π_n ⊗ N(0, I) invariant (it is also a volume-preserving involution after a momentum flip) and
// needs one fused value-and-gradient evaluation per step instead of a gradient plus a value, so
// it is used here. ∇E_q is analytic and recomputed; the cached ∇log p̃ does not depend on β, so
// the gradient of E_n at the start of each temperature is exact.
//
// Teams (core/team.hpp). Every function takes an optional team: the lanes that run one particle
// together. The default SerialTeam is the one-lane code of the CPU backend and the
// thread-per-particle kernels; the warp-per-particle kernels pass a WarpTeam
// (kernels/warp_team.cuh). Coordinate i belongs to lane i mod size; energies and accept
// decisions come out of team reductions, so every lane takes the same branches and holds the
// same scalars; lane 0 alone writes the particle's scalars back. The target is evaluated through
// model/team_density.hpp (its cooperative gradient when it has one).
//
// Random numbers: RandomStream(seed, particle) with counter (k, purpose, draw) where k is the
// step (1 … N − 1, the same for forward and reverse runs) and 0 for the start: initial point
// (Purpose::initial_point), initial momentum (Purpose::momentum, k = 0), refresh
// (Purpose::momentum, k), accept (Purpose::accept, k, draw = step s), random-walk proposals
// (Purpose::proposal, k, draws s·D …).

#include <cmath>
#include <cstdint>
#include <string>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/enum_names.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/core/team.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/mcmc/chain_status.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/team_density.hpp"

namespace myriad {

/// The transition applied at each intermediate temperature.
enum class AisTransition : int {
  hamiltonian,  ///< leapfrog + Metropolis + partial momentum refresh (HAIS; γ = 1: plain HMC)
  metropolis,   ///< Gaussian random-walk Metropolis (baseline)
};

inline constexpr EnumName<AisTransition> kAisTransitionNames[] = {
    {AisTransition::hamiltonian, "hamiltonian"},
    {AisTransition::metropolis, "metropolis"},
    {AisTransition::hamiltonian, "hmc"},
    {AisTransition::metropolis, "rwm"}};

inline std::string to_string(AisTransition transition) {
  return enum_name(kAisTransitionNames, transition);
}

/// Transition settings shared by every particle.
template <class T>
struct AisSettings {
  AisTransition transition = AisTransition::hamiltonian;
  T step_size = T(0.2);         ///< ε (hais.md §4: 0.2 in all the paper's experiments)
  int steps = 1;                ///< leapfrog steps (or random-walk steps) per temperature
  T refresh = T(0.12944943670387588);  ///< γ = 1 − 0.5^ε for ε = 0.2; 1 = full refresh
  T proposal_scale = T(0.1);    ///< random-walk standard deviation (paper's σ_diffusion)
  T max_energy_error = T(1000); ///< a larger energy error is divergent (rejected, counted)
};

/// γ = 1 − 0.5^ε: half the momentum power replaced per unit of simulated time (hais.md §4).
inline double default_refresh(double step_size) { return 1.0 - std::pow(0.5, step_size); }

/// The inverse-temperature path: β_0 … β_N (device-visible, double) and the direction.
struct AnnealingPath {
  const double* beta = nullptr;
  int temperatures = 1;  ///< N
  bool reverse = false;  ///< BDMC reverse run from an exact posterior draw
};

/// Views of one particle's state; the proposal arrays are scratch.
template <class T>
struct AisParticle {
  ChainVector<T> position;
  ChainVector<T> momentum;
  ChainVector<T> gradient;  ///< ∇ log p̃ at position
  ChainVector<T> proposal;
  ChainVector<T> proposal_momentum;
  ChainVector<T> proposal_gradient;
  T* target_log_density;    ///< log p̃(position) = −E_p
  T* base_log_density;      ///< −E_q(position)
  double* log_weight;       ///< Σ Δβ (log p̃ + E_q) so far
  /// The target's team scratch (model/team_density.hpp): particle_team_scratch_size values, or
  /// null.
  T* scratch = nullptr;
};

/// Team scratch values per particle of a target (model/team_density.hpp): the largest over its
/// problems, since a backend slices one scratch array evenly by particle whatever the particle's
/// problem. Host only: it asks every problem.
template <class Target>
int particle_team_scratch_size(const Target& target) {
  int size = 0;
  for (int p = 0; p < problem_count(target); ++p) {
    const int problem_size = team_scratch_size(problem_target(target, p));
    if (problem_size > size) size = problem_size;
  }
  return size;
}

/// The random stream of particle `particle` of `total` (problems × particles per problem):
/// forward runs use keys 0 … total − 1, reverse runs total … 2·total − 1, so the two
/// directions never share random numbers.
MYRIAD_HD inline std::uint64_t particle_stream(std::int64_t particle, std::int64_t total,
                                               bool reverse) {
  return static_cast<std::uint64_t>(reverse ? total + particle : particle);
}

/// Completes the start of a run whose position is set (a base draw or an exact posterior draw):
/// v ~ N(0, I), log p̃ and its gradient, −E_q, log_weight = 0. Returns false when log p̃ or its
/// gradient is not finite there; the particle's weight is then zero (log_weight = −∞), it makes
/// no further moves, and the host counts it.
template <class Target, class T, class Team = SerialTeam>
MYRIAD_HD bool start_particle(const Target& target, const AnnealingBase<T>& base,
                              const AisParticle<T>& p, const RandomStream& rng,
                              const Team& team = Team{}) {
  const int dim = base.dim;
  fill_normal<T>(team, rng, 0, Purpose::momentum, p.momentum, dim);
  const T lp = team_log_density_and_gradient(team, target, p.position, p.gradient, p.scratch);
  bool finite = myriad::isfinite(lp);
  for (int i = team.rank(); i < dim && finite; i += team.size())
    finite = myriad::isfinite(p.gradient[i]);
  finite = team.all(finite);
  const T lq = base.log_density(p.position, team);
  if (team.rank() == 0) {
    *p.base_log_density = lq;
    *p.target_log_density = finite ? lp : T(-INFINITY);
    *p.log_weight = finite ? 0.0 : -INFINITY;
  }
  team.sync();
  return finite;
}

namespace detail {

/// The particle's log p̃ and −E_q at its current position, held in registers across the
/// temperatures of one anneal_particle call (every lane of a team holds the same values).
template <class T>
struct ParticleEnergies {
  T target;  ///< log p̃(position)
  T base;    ///< −E_q(position)
};

/// One Hamiltonian transition at β (file comment), counted in `tally`.
template <class Target, class T, class Team>
MYRIAD_HD void hamiltonian_transition(const Target& target, const AnnealingBase<T>& base,
                                      const AisParticle<T>& p, ParticleEnergies<T>& current,
                                      const RandomStream& rng, std::uint32_t k, T beta,
                                      const AisSettings<T>& s, IterationStats& tally,
                                      const Team& team) {
  const int dim = base.dim, lane = team.rank(), lanes = team.size();
  const T eps = s.step_size, half_eps = T(0.5) * s.step_size, alpha = T(1) - beta;
  T kinetic = T(0);
  for (int i = lane; i < dim; i += lanes) {
    p.proposal[i] = p.position[i];
    p.proposal_momentum[i] = p.momentum[i];
    p.proposal_gradient[i] = p.gradient[i];
    kinetic += p.momentum[i] * p.momentum[i];
  }
  kinetic = team.sum(kinetic);
  const T initial_energy = -(alpha * current.base + beta * current.target) + T(0.5) * kinetic;
  T lp = current.target, lq;
  bool finite = true;
  int evaluations = 0;
  for (int step = 0; step < s.steps && finite; ++step) {
    for (int i = lane; i < dim; i += lanes) {
      const T x = p.proposal[i];
      p.proposal_momentum[i] +=
          half_eps * (alpha * base.gradient(i, x) + beta * p.proposal_gradient[i]);
      p.proposal[i] = x + eps * p.proposal_momentum[i];
    }
    finite = reflect_into_box(base, p.proposal, p.proposal_momentum, team);
    lp = team_log_density_and_gradient(team, target, p.proposal, p.proposal_gradient, p.scratch);
    ++evaluations;
    finite = finite && myriad::isfinite(lp);
    if (finite) {
      for (int i = lane; i < dim && finite; i += lanes) {
        p.proposal_momentum[i] += half_eps * (alpha * base.gradient(i, p.proposal[i]) +
                                              beta * p.proposal_gradient[i]);
        finite = myriad::isfinite(p.proposal_gradient[i]);
      }
      finite = team.all(finite);
    }
  }
  lq = base.log_density(p.proposal, team);  // only the end point's base energy enters H
  kinetic = T(0);
  for (int i = lane; i < dim; i += lanes) kinetic += p.proposal_momentum[i] * p.proposal_momentum[i];
  kinetic = team.sum(kinetic);
  const T proposal_energy = -(alpha * lq + beta * lp) + T(0.5) * kinetic;
  const T log_accept = initial_energy - proposal_energy;

  std::uint32_t status = kStatusOk;
  T accept_prob = T(0);
  bool accepted = false;
  if (!finite || !myriad::isfinite(log_accept)) {
    status = kStatusNonFinite | kStatusDivergent;
  } else if (-log_accept > s.max_energy_error) {
    status = kStatusDivergent;
  } else {
    accept_prob = log_accept >= T(0) ? T(1) : myriad::exp(log_accept);
    accepted = myriad::log(rng.uniform<T>(k, Purpose::accept, 0)) < log_accept;
  }
  if (accepted) {
    for (int i = lane; i < dim; i += lanes) {
      p.position[i] = p.proposal[i];
      p.momentum[i] = p.proposal_momentum[i];
      p.gradient[i] = p.proposal_gradient[i];
    }
    current.target = lp;
    current.base = lq;
  } else {
    for (int i = lane; i < dim; i += lanes) p.momentum[i] = -p.momentum[i];
  }
  // Partial refresh, v ← √(1 − γ) v + √γ r; r goes through the proposal-momentum scratch.
  fill_normal<T>(team, rng, k, Purpose::momentum, p.proposal_momentum, dim);
  const T keep = myriad::sqrt(T(1) - s.refresh), fresh = myriad::sqrt(s.refresh);
  for (int i = lane; i < dim; i += lanes)
    p.momentum[i] = keep * p.momentum[i] + fresh * p.proposal_momentum[i];
  tally.record(static_cast<double>(accept_prob), accepted, status, evaluations);
}

/// `steps` Gaussian random-walk Metropolis moves at β, each x¹ = x + σ z, reflected at bounds.
template <class Target, class T, class Team>
MYRIAD_HD void metropolis_transition(const Target& target, const AnnealingBase<T>& base,
                                     const AisParticle<T>& p, ParticleEnergies<T>& current,
                                     const RandomStream& rng, std::uint32_t k, T beta,
                                     const AisSettings<T>& s, IterationStats& tally,
                                     const Team& team) {
  const int dim = base.dim, lane = team.rank(), lanes = team.size();
  const T alpha = T(1) - beta;
  for (int step = 0; step < s.steps; ++step) {
    for (int i = lane; i < dim; i += lanes) {
      p.proposal[i] = p.position[i] +
                      s.proposal_scale *
                          rng.normal<T>(k, Purpose::proposal,
                                        static_cast<std::uint32_t>(step * dim + i));
      p.proposal_momentum[i] = T(0);  // reflection flips a momentum nobody uses
    }
    bool finite = reflect_into_box(base, p.proposal, p.proposal_momentum, team);
    const T lp = team_log_density(team, target, p.proposal);
    const T lq = base.log_density(p.proposal, team);
    const T log_accept =
        (alpha * lq + beta * lp) - (alpha * current.base + beta * current.target);
    finite = finite && myriad::isfinite(log_accept);
    std::uint32_t status = kStatusOk;
    T accept_prob = T(0);
    bool accepted = false;
    if (!finite) {
      status = kStatusNonFinite;
    } else {
      accept_prob = log_accept >= T(0) ? T(1) : myriad::exp(log_accept);
      accepted = myriad::log(rng.uniform<T>(k, Purpose::accept, static_cast<std::uint32_t>(step))) <
                 log_accept;
    }
    if (accepted) {
      for (int i = lane; i < dim; i += lanes) p.position[i] = p.proposal[i];
      current.target = lp;
      current.base = lq;
    }
    tally.record(static_cast<double>(accept_prob), accepted, status, 0);  // no gradient
  }
}

}  // namespace detail

/// Advances one particle through steps k ∈ [k_begin, k_end) of the path (1 ≤ k ≤ N): the
/// log-weight increment of the k-th level visited, then, unless k = N, the transition at the
/// next inverse temperature. A particle whose weight is zero (non-finite start) is left alone.
template <class Target, class T, class Team = SerialTeam>
MYRIAD_HD IterationStats anneal_particle(const Target& target, const AnnealingBase<T>& base,
                                         const AisParticle<T>& p, const RandomStream& rng,
                                         const AnnealingPath& path, std::uint32_t k_begin,
                                         std::uint32_t k_end, const AisSettings<T>& settings,
                                         const Team& team = Team{}) {
  IterationStats tally;
  detail::ParticleEnergies<T> current{*p.target_log_density, *p.base_log_density};
  if (!myriad::isfinite(current.target)) return tally;
  const std::uint32_t n_max = static_cast<std::uint32_t>(path.temperatures);
  double log_weight = *p.log_weight;
  for (std::uint32_t k = k_begin; k < k_end; ++k) {
    // Level n of this step and the inverse temperature of the transition that follows it.
    const std::uint32_t n = path.reverse ? n_max - k + 1 : k;
    const double delta = path.beta[n] - path.beta[n - 1];
    // log p̃ + E_q = log p̃ − log q̃, the base's log density being −E_q.
    log_weight +=
        delta * (static_cast<double>(current.target) - static_cast<double>(current.base));
    if (k == n_max) break;
    const T beta = static_cast<T>(path.reverse ? path.beta[n - 1] : path.beta[n]);
    if (settings.transition == AisTransition::hamiltonian) {
      detail::hamiltonian_transition(target, base, p, current, rng, k, beta, settings, tally,
                                     team);
    } else {
      detail::metropolis_transition(target, base, p, current, rng, k, beta, settings, tally,
                                    team);
    }
  }
  if (team.rank() == 0) {
    *p.log_weight = log_weight;
    *p.target_log_density = current.target;
    *p.base_log_density = current.base;
  }
  team.sync();
  return tally;
}

/// The particles a backend runs: P problems × B particles per problem, particle i = p·B + b
/// belonging to problem p, with the random stream of particle_stream. Every backend (and the
/// host test of the device layout) goes through start_batch_particle and anneal_batch_particle,
/// so the mapping from a particle index to its problem, stream and exact draw exists once.
struct AisBatch {
  std::uint64_t seed;
  std::int64_t particles_per_problem;  ///< B
  std::int64_t total;                  ///< P · B

  MYRIAD_HD int problem_of(std::int64_t i) const {
    return static_cast<int>(i / particles_per_problem);
  }
  MYRIAD_HD RandomStream stream(std::int64_t i, bool reverse) const {
    return RandomStream(seed, particle_stream(i, total, reverse));
  }
};

/// Starts particle i of a batch: x ~ q (forward) or an exact posterior draw of its problem
/// (reverse; numbered by the particle's index within its problem), then start_particle.
template <class Target, class T, class Team = SerialTeam>
MYRIAD_HD bool start_batch_particle(const Target& target, const AnnealingBase<T>& base,
                                    const AisParticle<T>& p, const AisBatch& batch,
                                    std::int64_t i, bool reverse, const Team& team = Team{}) {
  const int problem = batch.problem_of(i);
  const RandomStream rng = batch.stream(i, reverse);
  if (reverse) {
    if constexpr (target_has_exact_sample<Target>) {
      // Lane 0 draws; start_particle's evaluation fences the position for the other lanes.
      if (team.rank() == 0) {
        target.exact_sample(problem, rng,
                            static_cast<std::uint32_t>(i % batch.particles_per_problem),
                            p.position);
      }
    }
  } else {
    base.sample(rng, 0, Purpose::initial_point, p.position, team);
  }
  return start_particle(problem_target(target, problem), base, p, rng, team);
}

/// anneal_particle for particle i of a batch, in the direction of `path`.
template <class Target, class T, class Team = SerialTeam>
MYRIAD_HD IterationStats anneal_batch_particle(const Target& target, const AnnealingBase<T>& base,
                                               const AisParticle<T>& p, const AisBatch& batch,
                                               std::int64_t i, const AnnealingPath& path,
                                               std::uint32_t k_begin, std::uint32_t k_end,
                                               const AisSettings<T>& settings,
                                               const Team& team = Team{}) {
  return anneal_particle(problem_target(target, batch.problem_of(i)), base, p,
                         batch.stream(i, path.reverse), path, k_begin, k_end, settings, team);
}

}  // namespace myriad
