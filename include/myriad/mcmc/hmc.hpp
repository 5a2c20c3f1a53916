#pragma once
// One Hamiltonian Monte Carlo transition for one chain: momentum refresh from N(0, M) with a
// diagonal or dense mass matrix M (mcmc/metric.hpp), L leapfrog steps, Metropolis accept/reject.
// Written once for the CPU backend's OpenMP loop and the CUDA kernels (DESIGN.md, rule 1).
//
// Hamiltonian H(q, p) = −log π(q) + ½ pᵀ M⁻¹ p; leapfrog (Neal 2011, "MCMC using Hamiltonian
// dynamics", eq. 5.18–5.20):
//   p ← p + ε/2 ∇log π(q);  q ← q + ε M⁻¹ p;  p ← p + ε/2 ∇log π(q).
// A trajectory whose energy error exceeds max_energy_error is divergent (Stan's threshold of
// 1000); it is rejected and flagged, never dropped.

#include <cstdint>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/mcmc/chain_status.hpp"
#include "myriad/mcmc/metric.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

/// Settings of one HMC iteration, shared by every chain of the ensemble.
template <class T>
struct HmcStep {
  T step_size = T(0.1);
  int leapfrog_steps = 1;            ///< steps this iteration (already jittered)
  MetricView<T> metric;              ///< M⁻¹, visible to the caller's device
  T max_energy_error = T(1000);
};

/// Views of one chain's state. position/gradient/log_density hold the current point and are
/// updated on acceptance; proposal, momentum and proposal_gradient are scratch.
template <class T>
struct HmcChain {
  ChainVector<T> position;
  ChainVector<T> gradient;
  T* log_density;  ///< T: the element type (a scalar, or a SIMD batch of chains)
  ChainVector<T> proposal;
  ChainVector<T> momentum;
  ChainVector<T> proposal_gradient;
};

/// What one transition did: for one chain (S a scalar), or per lane for a group of chains in
/// lockstep (S a SIMD batch, core/lanes.hpp; HmcLaneOutcomes, detail/hmc_lane_types.hpp, keeps
/// each lane's as a scalar outcome).
template <class S>
struct HmcOutcome {
  S accept_prob;  ///< min(1, exp(−ΔH)); 0 for divergent or non-finite trajectories
  lane_mask_t<S> accepted;
  typename LaneOps<S>::template per_lane<std::uint32_t> status;  ///< ChainStatus flags
  typename LaneOps<S>::template per_lane<int> gradient_evaluations;
  int tree_depth = 0;              ///< NUTS: depth of the final tree (mcmc/nuts.hpp); HMC: 0
  bool tree_depth_capped = false;  ///< NUTS: the tree reached the depth cap
};

/// The iteration's point of the base-2 van der Corput sequence (the first dimension of Halton's)
/// on (0, 1], shifted by a seed-dependent offset modulo 1 (a Cranley–Patterson rotation, so that
/// runs with different seeds differ). Any run of consecutive iterations covers (0, 1] far more
/// evenly than independent uniforms: the trajectory-length jitter of ChEES (Hoffman, Radul &
/// Sountsov 2021, §3.2) uses it so that the adapted length sees every fraction of itself.
MYRIAD_HD inline double quasi_random_fraction(std::uint64_t seed, std::uint32_t iteration) {
  // φ₂(i): the bits of i mirrored about the binary point.
  std::uint32_t bits = iteration;
  bits = ((bits >> 1) & 0x55555555u) | ((bits & 0x55555555u) << 1);
  bits = ((bits >> 2) & 0x33333333u) | ((bits & 0x33333333u) << 2);
  bits = ((bits >> 4) & 0x0F0F0F0Fu) | ((bits & 0x0F0F0F0Fu) << 4);
  bits = ((bits >> 8) & 0x00FF00FFu) | ((bits & 0x00FF00FFu) << 8);
  bits = (bits >> 16) | (bits << 16);
  const double radical_inverse = static_cast<double>(bits) * (1.0 / 4294967296.0);
  const RandomStream ensemble(seed, kEnsembleStream);
  const double shifted = radical_inverse + ensemble.uniform<double>(0, Purpose::trajectory, 1);
  const double u = shifted >= 1.0 ? shifted - 1.0 : shifted;
  return u > 0.0 ? u : 1.0;
}

/// Number of leapfrog steps for an iteration: the same for every chain (so warps stay
/// converged), jittered per iteration to avoid periodic trajectories: on {⌈(1 − jitter)·L⌉, …, L},
/// uniformly at random, or by the quasi-random sequence above when quasi_random is set.
template <class T>
MYRIAD_HD int jittered_leapfrog_steps(std::uint64_t seed, std::uint32_t iteration, int max_steps,
                                      T jitter, bool quasi_random = false) {
  if (jitter <= T(0) || max_steps <= 1) return max_steps < 1 ? 1 : max_steps;
  double u;
  if (quasi_random) {
    u = quasi_random_fraction(seed, iteration);
  } else {
    const RandomStream ensemble(seed, kEnsembleStream);
    u = ensemble.uniform<double>(iteration, Purpose::trajectory, 0);
  }
  int low = static_cast<int>(::ceil((1.0 - static_cast<double>(jitter)) * max_steps));
  if (low < 1) low = 1;
  const int span = max_steps - low + 1;
  int steps = low + static_cast<int>(u * span);
  return steps > max_steps ? max_steps : steps;
}

/// One HMC transition of one chain at `iteration` (which keys its random numbers), or of a group
/// of chains in SIMD lanes (S a batch, core/lanes.hpp; rng then holds the group's streams,
/// detail/simd_lanes.hpp). The lanes' decisions are masks: a lane whose trajectory turns
/// non-finite stops counting and keeps that log density while the others go on, as a chain that
/// stops does in a converged warp; a rejected lane keeps its point. Every branch is a select, so
/// each lane computes exactly what the one-chain call computes for its chain.
template <class Model, class S, class T, class Rng>
MYRIAD_HD HmcOutcome<S> hmc_transition(const Model& model, const HmcChain<S>& chain, const Rng& rng,
                                       std::uint32_t iteration, const HmcStep<T>& step) {
  using Lanes = LaneOps<S>;
  const int dim = model.dim();
  const T eps = step.step_size;
  const T half_eps = T(0.5) * eps;
  const MetricView<T>& metric = step.metric;

  rng.template fill_normal<T>(iteration, Purpose::momentum, chain.momentum, dim);
  metric.momentum_from_normal(chain.momentum);
  const S initial_energy = -*chain.log_density + metric.kinetic_energy(chain.momentum);

  for (int i = 0; i < dim; ++i) {
    chain.proposal[i] = chain.position[i];
    chain.proposal_gradient[i] = chain.gradient[i];
  }
  S proposal_log_density = *chain.log_density;
  typename Lanes::template per_lane<int> evaluations{};
  lane_mask_t<S> running(true);
  for (int s = 0; s < step.leapfrog_steps; ++s) {
    for (int i = 0; i < dim; ++i) chain.momentum[i] += half_eps * chain.proposal_gradient[i];
    metric.drift(chain.proposal, chain.momentum, eps);
    const S log_density = log_density_and_gradient(model, chain.proposal, chain.proposal_gradient);
    for (int i = 0; i < dim; ++i) chain.momentum[i] += half_eps * chain.proposal_gradient[i];
    Lanes::add_where(evaluations, running, 1);
    proposal_log_density = Lanes::select(running, log_density, proposal_log_density);
    // A non-finite density cannot recover; stop integrating this chain (masked lockstep).
    running = running && myriad::isfinite(log_density);
    if (!Lanes::any(running)) break;
  }

  const S proposal_energy = -proposal_log_density + metric.kinetic_energy(chain.momentum);
  const S log_accept_ratio = initial_energy - proposal_energy;

  HmcOutcome<S> outcome{S(0), lane_mask_t<S>(false), {}, evaluations};
  const lane_mask_t<S> finite = myriad::isfinite(log_accept_ratio);
  const lane_mask_t<S> divergent = !finite || -log_accept_ratio > S(step.max_energy_error);
  Lanes::assign_where(outcome.status, divergent, kStatusDivergent);
  Lanes::assign_where(outcome.status, !finite, kStatusNonFinite | kStatusDivergent);
  if (Lanes::all(divergent)) return outcome;

  outcome.accept_prob =
      Lanes::select(divergent, S(0),
                    Lanes::select(log_accept_ratio >= S(0), S(1), myriad::exp(log_accept_ratio)));
  const S u = rng.template uniform<T>(iteration, Purpose::accept, 0);
  outcome.accepted = !divergent && myriad::log(u) < log_accept_ratio;
  if (Lanes::any(outcome.accepted)) {
    for (int i = 0; i < dim; ++i) {
      chain.position[i] = Lanes::select(outcome.accepted, chain.proposal[i], chain.position[i]);
      chain.gradient[i] =
          Lanes::select(outcome.accepted, chain.proposal_gradient[i], chain.gradient[i]);
    }
    *chain.log_density = Lanes::select(outcome.accepted, proposal_log_density, *chain.log_density);
  }
  return outcome;
}

/// Evaluates log density and gradient at the chain's position; true (and the log density
/// stored) when both are finite.
template <class Model, class T>
MYRIAD_HD bool evaluate_chain(const Model& model, const ChainVector<T>& position,
                              const ChainVector<T>& gradient, T* log_density) {
  const T lp = log_density_and_gradient(model, position, gradient);
  bool finite = myriad::isfinite(lp);
  for (int i = 0; i < gradient.size && finite; ++i) finite = myriad::isfinite(gradient[i]);
  if (finite) *log_density = lp;
  return finite;
}

/// Draws an initial point: the model's initial_point when it has one (model/concept.hpp; told
/// `chain`, the index of rng's chain, when it takes one), else uniformly in [−radius, radius]^D
/// (Stan's default with radius 2), retrying up to max_tries times until log density and gradient
/// are finite. Returns false if no finite point was found; the host then reports the chain as
/// failed to initialise.
template <class Model, class T>
MYRIAD_HD bool initialize_chain(const Model& model, const ChainVector<T>& position,
                                const ChainVector<T>& gradient, T* log_density,
                                const RandomStream& rng, T radius, int max_tries,
                                std::int64_t chain = 0) {
  const int dim = model.dim();
  for (int attempt = 0; attempt < max_tries; ++attempt) {
    if constexpr (model_has_chain_initial_point<Model>) {
      ChainVector<T> x = position;
      if (!model.initial_point(rng, static_cast<std::uint32_t>(attempt), chain, x)) continue;
    } else if constexpr (model_has_initial_point<Model>) {
      ChainVector<T> x = position;
      if (!model.initial_point(rng, static_cast<std::uint32_t>(attempt), x)) continue;
    } else {
      for (int i = 0; i < dim; ++i) {
        const T u = rng.uniform<T>(static_cast<std::uint32_t>(attempt), Purpose::initial_point,
                                   static_cast<std::uint32_t>(i));
        position[i] = radius * (T(2) * u - T(1));
      }
    }
    if (evaluate_chain(model, position, gradient, log_density)) return true;
  }
  return false;
}

}  // namespace myriad
