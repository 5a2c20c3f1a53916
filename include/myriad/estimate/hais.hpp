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
#include "myriad/core/lanes.hpp"
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
  T step_size = T(0.2);                ///< ε (hais.md §4: 0.2 in all the paper's experiments)
  int steps = 1;                       ///< leapfrog steps (or random-walk steps) per temperature
  T refresh = T(0.12944943670387588);  ///< γ = 1 − 0.5^ε for ε = 0.2; 1 = full refresh
  T proposal_scale = T(0.1);           ///< random-walk standard deviation (paper's σ_diffusion)
  T max_energy_error = T(1000);        ///< a larger energy error is divergent (rejected, counted)
};

/// γ = 1 − 0.5^ε: half the momentum power replaced per unit of simulated time (hais.md §4).
inline double default_refresh(double step_size) { return 1.0 - std::pow(0.5, step_size); }

/// The inverse-temperature path: β_0 … β_N (device-visible, double) and the direction.
struct AnnealingPath {
  const double* beta = nullptr;
  int temperatures = 1;  ///< N
  bool reverse = false;  ///< BDMC reverse run from an exact posterior draw
};

/// Views of one particle's state; the proposal arrays are scratch. T is the element type: a
/// scalar, or a SIMD batch of particles in lanes (core/lanes.hpp), whose log weights are then
/// one double per lane.
template <class T>
struct AisParticle {
  ChainVector<T> position;
  ChainVector<T> momentum;
  ChainVector<T> gradient;  ///< ∇ log p̃ at position
  ChainVector<T> proposal;
  ChainVector<T> proposal_momentum;
  ChainVector<T> proposal_gradient;
  T* target_log_density;                                       ///< log p̃(position) = −E_p
  T* base_log_density;                                         ///< −E_q(position)
  typename LaneOps<T>::template per_lane<double>* log_weight;  ///< Σ Δβ (log p̃ + E_q) so far
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

/// The counts of one anneal_particle call: one IterationStats, or one per SIMD lane.
template <class S>
using AisTally = typename LaneOps<S>::template per_lane<IterationStats>;

/// Records one transition of each lane where `alive` is set (particles with a zero weight make
/// no moves and are not counted).
template <class S>
MYRIAD_HD void record_transition(
    AisTally<S>& tally, const lane_mask_t<S>& alive, const S& accept_prob,
    const lane_mask_t<S>& accepted,
    const typename LaneOps<S>::template per_lane<std::uint32_t>& status,
    const typename LaneOps<S>::template per_lane<int>& evaluations) {
  using Lanes = LaneOps<S>;
  for (int l = 0; l < Lanes::width; ++l) {
    if (!Lanes::flag(alive, l)) continue;
    Lanes::entry(tally, l).record(static_cast<double>(Lanes::value(accept_prob, l)),
                                  Lanes::flag(accepted, l), Lanes::entry(status, l),
                                  Lanes::entry(evaluations, l));
  }
}

/// A transition's acceptance probability and decision, per lane.
template <class S>
struct MetropolisDecision {
  S accept_prob;
  lane_mask_t<S> accepted;
};

/// The Metropolis decision on a proposal in each lane where `valid` is set: min(1, exp(log_accept))
/// and log u < log_accept, u the `draw`-th Purpose::accept uniform of step k. Lanes that are not
/// valid reject with probability 0; no draw is made when none is valid.
template <class T, class S, class Rng>
MYRIAD_HD MetropolisDecision<S> metropolis_decision(const lane_mask_t<S>& valid,
                                                    const S& log_accept, const Rng& rng,
                                                    std::uint32_t k, std::uint32_t draw) {
  using Lanes = LaneOps<S>;
  MetropolisDecision<S> decision{S(0), lane_mask_t<S>(false)};
  if (Lanes::any(valid)) {
    decision.accept_prob = Lanes::select(
        valid, Lanes::select(log_accept >= S(0), S(1), myriad::exp(log_accept)), S(0));
    decision.accepted =
        valid && myriad::log(rng.template uniform<T>(k, Purpose::accept, draw)) < log_accept;
  }
  return decision;
}

/// One Hamiltonian transition at β (file comment), counted in `tally`. Written over the
/// element type S: one particle (S a scalar, with a team of lanes or without), or W particles in
/// SIMD lanes (S a batch, with the serial team), whose decisions are masks: a particle whose
/// trajectory turns non-finite stops counting steps and is rejected while the others go on.
template <class Target, class S, class T, class Rng, class Team>
MYRIAD_HD void hamiltonian_transition(const Target& target, const AnnealingBase<T>& base,
                                      const AisParticle<S>& p, ParticleEnergies<S>& current,
                                      const Rng& rng, std::uint32_t k, T beta,
                                      const AisSettings<T>& s, AisTally<S>& tally,
                                      const lane_mask_t<S>& alive, const Team& team) {
  using Lanes = LaneOps<S>;
  const int dim = base.dim, lane = team.rank(), lanes = team.size();
  const T eps = s.step_size, half_eps = T(0.5) * s.step_size, alpha = T(1) - beta;
  S kinetic = S(0);
  for (int i = lane; i < dim; i += lanes) {
    p.proposal[i] = p.position[i];
    p.proposal_momentum[i] = p.momentum[i];
    p.proposal_gradient[i] = p.gradient[i];
    kinetic += p.momentum[i] * p.momentum[i];
  }
  kinetic = team.sum(kinetic);
  const S initial_energy = -(alpha * current.base + beta * current.target) + T(0.5) * kinetic;
  S lp = current.target, lq;
  lane_mask_t<S> finite(true);
  typename Lanes::template per_lane<int> evaluations{};
  for (int step = 0; step < s.steps && Lanes::any(finite); ++step) {
    for (int i = lane; i < dim; i += lanes) {
      const S x = p.proposal[i];
      p.proposal_momentum[i] +=
          half_eps * (alpha * base.gradient(i, x) + beta * p.proposal_gradient[i]);
      p.proposal[i] = x + eps * p.proposal_momentum[i];
    }
    const lane_mask_t<S> inside = reflect_into_box(base, p.proposal, p.proposal_momentum, team);
    lp = team_log_density_and_gradient(team, target, p.proposal, p.proposal_gradient, p.scratch);
    Lanes::add_where(evaluations, finite, 1);
    finite = finite && inside && myriad::isfinite(lp);
    if (Lanes::any(finite)) {
      lane_mask_t<S> gradient_finite(true);
      for (int i = lane; i < dim; i += lanes) {
        p.proposal_momentum[i] +=
            half_eps * (alpha * base.gradient(i, S(p.proposal[i])) + beta * p.proposal_gradient[i]);
        gradient_finite = gradient_finite && myriad::isfinite(S(p.proposal_gradient[i]));
      }
      finite = finite && team.all(gradient_finite);
    }
  }
  lq = base.log_density(p.proposal, team);  // only the end point's base energy enters H
  kinetic = S(0);
  for (int i = lane; i < dim; i += lanes)
    kinetic += p.proposal_momentum[i] * p.proposal_momentum[i];
  kinetic = team.sum(kinetic);
  const S proposal_energy = -(alpha * lq + beta * lp) + T(0.5) * kinetic;
  const S log_accept = initial_energy - proposal_energy;

  const lane_mask_t<S> non_finite = !finite || !myriad::isfinite(log_accept);
  const lane_mask_t<S> divergent = non_finite || -log_accept > S(s.max_energy_error);
  typename Lanes::template per_lane<std::uint32_t> status{};
  Lanes::assign_where(status, divergent, kStatusDivergent);
  Lanes::assign_where(status, non_finite, kStatusNonFinite | kStatusDivergent);
  const auto [accept_prob, accepted] = metropolis_decision<T>(!divergent, log_accept, rng, k, 0);
  // Accepted: the proposal's state; rejected: the momentum flipped.
  for (int i = lane; i < dim; i += lanes)
    p.momentum[i] = Lanes::select(accepted, S(p.proposal_momentum[i]), -S(p.momentum[i]));
  if (Lanes::any(accepted)) {
    for (int i = lane; i < dim; i += lanes) {
      p.position[i] = Lanes::select(accepted, S(p.proposal[i]), S(p.position[i]));
      p.gradient[i] = Lanes::select(accepted, S(p.proposal_gradient[i]), S(p.gradient[i]));
    }
    current.target = Lanes::select(accepted, lp, current.target);
    current.base = Lanes::select(accepted, lq, current.base);
  }
  // Partial refresh, v ← √(1 − γ) v + √γ r; r goes through the proposal-momentum scratch.
  fill_normal<T>(team, rng, k, Purpose::momentum, p.proposal_momentum, dim);
  const T keep = myriad::sqrt(T(1) - s.refresh), fresh = myriad::sqrt(s.refresh);
  for (int i = lane; i < dim; i += lanes)
    p.momentum[i] = keep * p.momentum[i] + fresh * p.proposal_momentum[i];
  record_transition<S>(tally, alive, accept_prob, accepted, status, evaluations);
}

/// `steps` Gaussian random-walk Metropolis moves at β, each x¹ = x + σ z, reflected at bounds;
/// written over S as hamiltonian_transition is, though anneal_particle runs only the latter in
/// SIMD lanes.
template <class Target, class S, class T, class Rng, class Team>
MYRIAD_HD void metropolis_transition(const Target& target, const AnnealingBase<T>& base,
                                     const AisParticle<S>& p, ParticleEnergies<S>& current,
                                     const Rng& rng, std::uint32_t k, T beta,
                                     const AisSettings<T>& s, AisTally<S>& tally,
                                     const lane_mask_t<S>& alive, const Team& team) {
  using Lanes = LaneOps<S>;
  const int dim = base.dim, lane = team.rank(), lanes = team.size();
  const T alpha = T(1) - beta;
  const typename Lanes::template per_lane<int> no_gradients{};
  for (int step = 0; step < s.steps; ++step) {
    for (int i = lane; i < dim; i += lanes) {
      p.proposal[i] =
          p.position[i] +
          s.proposal_scale * rng.template normal<T>(k, Purpose::proposal,
                                                    static_cast<std::uint32_t>(step * dim + i));
      p.proposal_momentum[i] = S(0);  // reflection flips a momentum nobody uses
    }
    const lane_mask_t<S> inside = reflect_into_box(base, p.proposal, p.proposal_momentum, team);
    const S lp = team_log_density(team, target, p.proposal);
    const S lq = base.log_density(p.proposal, team);
    const S log_accept = (alpha * lq + beta * lp) - (alpha * current.base + beta * current.target);
    const lane_mask_t<S> finite = inside && myriad::isfinite(log_accept);
    typename Lanes::template per_lane<std::uint32_t> status{};
    Lanes::assign_where(status, !finite, kStatusNonFinite);
    const auto [accept_prob, accepted] =
        metropolis_decision<T>(finite, log_accept, rng, k, static_cast<std::uint32_t>(step));
    if (Lanes::any(accepted)) {
      for (int i = lane; i < dim; i += lanes)
        p.position[i] = Lanes::select(accepted, S(p.proposal[i]), S(p.position[i]));
      current.target = Lanes::select(accepted, lp, current.target);
      current.base = Lanes::select(accepted, lq, current.base);
    }
    record_transition<S>(tally, alive, accept_prob, accepted, status, no_gradients);
  }
}

}  // namespace detail

/// Advances one particle through steps k ∈ [k_begin, k_end) of the path (1 ≤ k ≤ N): the
/// log-weight increment of the k-th level visited, then, unless k = N, the transition at the
/// next inverse temperature. A particle whose weight is zero (non-finite start) is left alone
/// (in SIMD lanes: its lane's transitions are rejected and neither counted nor weighted).
template <class Target, class S, class T, class Rng, class Team = SerialTeam>
MYRIAD_HD detail::AisTally<S> anneal_particle(const Target& target, const AnnealingBase<T>& base,
                                              const AisParticle<S>& p, const Rng& rng,
                                              const AnnealingPath& path, std::uint32_t k_begin,
                                              std::uint32_t k_end, const AisSettings<T>& settings,
                                              const Team& team = Team{}) {
  using Lanes = LaneOps<S>;
  detail::AisTally<S> tally{};
  detail::ParticleEnergies<S> current{*p.target_log_density, *p.base_log_density};
  const lane_mask_t<S> alive = myriad::isfinite(current.target);
  if (!Lanes::any(alive)) return tally;
  const std::uint32_t n_max = static_cast<std::uint32_t>(path.temperatures);
  typename Lanes::template per_lane<double> log_weight = *p.log_weight;
  for (std::uint32_t k = k_begin; k < k_end; ++k) {
    // Level n of this step and the inverse temperature of the transition that follows it.
    const std::uint32_t n = path.reverse ? n_max - k + 1 : k;
    const double delta = path.beta[n] - path.beta[n - 1];
    // log p̃ + E_q = log p̃ − log q̃, the base's log density being −E_q.
    for (int l = 0; l < Lanes::width; ++l) {
      if (!Lanes::flag(alive, l)) continue;
      Lanes::entry(log_weight, l) += delta * (static_cast<double>(Lanes::value(current.target, l)) -
                                              static_cast<double>(Lanes::value(current.base, l)));
    }
    if (k == n_max) break;
    const T beta = static_cast<T>(path.reverse ? path.beta[n - 1] : path.beta[n]);
    if constexpr ((lane_width_v<S>) > 1) {
      // In SIMD lanes only the Hamiltonian transition: the CPU backend runs the random-walk
      // baseline one particle at a time (its log density need not be written over S).
      detail::hamiltonian_transition(target, base, p, current, rng, k, beta, settings, tally, alive,
                                     team);
    } else if (settings.transition == AisTransition::hamiltonian) {
      detail::hamiltonian_transition(target, base, p, current, rng, k, beta, settings, tally, alive,
                                     team);
    } else {
      detail::metropolis_transition(target, base, p, current, rng, k, beta, settings, tally, alive,
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
/// belonging to problem p, with the random stream of particle_stream. Every backend (through
/// detail/ais_particle_bodies.hpp) goes through start_batch_particle and anneal_batch_particle,
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
                                    const AisParticle<T>& p, const AisBatch& batch, std::int64_t i,
                                    bool reverse, const Team& team = Team{}) {
  const int problem = batch.problem_of(i);
  const RandomStream rng = batch.stream(i, reverse);
  if (reverse) {
    if constexpr (target_has_exact_sample<Target>) {
      // Lane 0 draws; start_particle's evaluation fences the position for the other lanes.
      if (team.rank() == 0) {
        target.exact_sample(
            problem, rng, static_cast<std::uint32_t>(i % batch.particles_per_problem), p.position);
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
