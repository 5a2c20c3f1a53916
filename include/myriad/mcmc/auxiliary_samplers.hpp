#pragma once
// The auxiliary-variable samplers of the thesis's chapters 2–3 (thesis-methods.md §1–5) as one
// per-chain transition each, MYRIAD_HD like hmc_transition (mcmc/hmc.hpp): the CPU backend runs
// them in an OpenMP loop, the CUDA backend one chain per thread (DESIGN.md rule 1).
//
//   slice             linear slice sampling of x along a random direction (or each coordinate),
//                     scaled per coordinate by the ensemble's sd; any density model
//   elliptical-slice  elliptical slice sampling on a model's Gaussian prior factor
//   reflective-slice  reflective slice sampling inside [0, 1]^D of the prior's uniform coordinates
//                     (below), for a model with a Gaussian prior factor
//   pm-mh             pseudo-marginal Metropolis–Hastings: random walk on x, a fresh estimate at
//                     the proposal only, the current estimate kept in the state (thesis Alg. 8)
//   apm-A-B           auxiliary pseudo-marginal MCMC (thesis Alg. 9–10): A updates u given x
//                     (mi: Metropolis independence; ss: elliptical slice on normal u, reflective
//                     slice on uniform u), then B updates x given u (mh: random walk; ss: linear
//                     slice), each leaving π(x, u) ∝ ε(x, u) ρ(u) invariant
//
// u is never stored by a sampler that only draws it afresh (pm-mh, apm-mi-*): the chain keeps the
// counter of its stream that u was drawn at, and the estimator reads u entry by entry from the
// stream (AuxiliaryVariates, model/estimator.hpp). Slice updates of u (apm-ss-*) move it, so it
// is stored, [aux][chain].
//
// An estimator with an x-dependent cache (model/estimator.hpp: the GP probit's Laplace fit) is
// prepared once per x: the chain keeps the state's cache and a trial point's, and a move of x
// swaps them, so an update of u given x costs only the cached part of an estimate.
//
// Reflective slice sampling on a density model: the Gaussian prior factor N(μ, diag σ²) is the
// image of the uniform law on the unit cube under Box–Muller pairs, x_{2k}, x_{2k+1} = μ + σ ⊙
// BoxMuller(c_{2k}, c_{2k+1}) (one extra coordinate pads an odd dimension), so π(x) ∝ N(x) L(x)
// is the image of π(c) ∝ L(x(c)) on [0, 1]^{2⌈D/2⌉}: the chain moves c by reflective slice
// sampling and records the quantities of x(c).

#include <cstdint>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/mcmc/chain_status.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/mcmc/slice.hpp"
#include "myriad/model/estimator.hpp"
#include "myriad/model/staged_preparation.hpp"

namespace myriad {

enum class AuxiliaryMethod {
  slice,
  elliptical_slice,
  reflective_slice,
  pm_mh,
  apm_mi_mh,
  apm_ss_mh,
  apm_mi_ss,
  apm_ss_ss,
};

/// The method runs on an estimator model (log_estimate) rather than a log density.
MYRIAD_HD constexpr bool uses_estimator(AuxiliaryMethod m) { return m >= AuxiliaryMethod::pm_mh; }
/// The method moves u by slice sampling, so u is stored per chain.
MYRIAD_HD constexpr bool stores_auxiliary(AuxiliaryMethod m) {
  return m == AuxiliaryMethod::apm_ss_mh || m == AuxiliaryMethod::apm_ss_ss;
}
/// The method updates u given x by Metropolis independence.
MYRIAD_HD constexpr bool independence_update(AuxiliaryMethod m) {
  return m == AuxiliaryMethod::apm_mi_mh || m == AuxiliaryMethod::apm_mi_ss;
}
/// The method moves x by a random walk (whose scale the warm-up adapts to an acceptance rate).
MYRIAD_HD constexpr bool random_walk_on_x(AuxiliaryMethod m) {
  return m == AuxiliaryMethod::pm_mh || m == AuxiliaryMethod::apm_mi_mh ||
         m == AuxiliaryMethod::apm_ss_mh;
}
/// The method's chains live on the unit cube (reflective slice sampling of a density model).
MYRIAD_HD constexpr bool on_unit_cube(AuxiliaryMethod m) {
  return m == AuxiliaryMethod::reflective_slice;
}

/// Ensemble-wide settings of the auxiliary-variable samplers' iterations.
template <class T>
struct AuxiliarySettings {
  AuxiliaryMethod method = AuxiliaryMethod::slice;
  std::uint64_t seed = 1;
  /// Per-coordinate scale s of x (device-visible, dim values): the random walk proposes
  /// x + step · s ⊙ z and linear slices run along s ⊙ n/‖n‖ (or s_d e_d).
  const T* scale = nullptr;
  T step = T(0.5);               ///< λ of the random walk, in units of s
  SliceShape<T> slice;           ///< linear slices of x: width in units of s, step-out, cap
  SliceShape<T> auxiliary;       ///< slices of u: width (reflective), cap
  bool coordinate_wise = false;  ///< slice: one update per coordinate instead of a direction
};

/// One chain's state (views into the backend's arrays) and scratch.
template <class T>
struct AuxiliaryChain {
  ChainVector<T> position;   ///< x, or the cube coordinates c (reflective-slice)
  ChainVector<T> proposal;   ///< scratch: a trial point of the state
  ChainVector<T> direction;  ///< scratch: a line's direction or an ellipse's ν
  ChainVector<T> mapped;     ///< scratch: x(c) (reflective-slice), else unused
  ChainVector<T> auxiliary;  ///< u (apm-ss-*), else empty
  T* log_target;             ///< log π(x) / log L(x) / log L(x(c)) / log ε(x, u) of the state
  std::uint32_t* counter;    ///< the stream counter u was drawn at (pm-mh, apm-mi-*)
  T* caches = nullptr;       ///< two estimator caches of cache_size (cached estimators), else null
  std::int64_t cache_size = 0;
  T* workspace = nullptr;              ///< the estimator's scratch (cached estimators)
  std::uint8_t* cache_slot = nullptr;  ///< which of the two caches is the state's

  MYRIAD_HD T* state_cache() const { return caches + *cache_slot * cache_size; }
  MYRIAD_HD T* trial_cache() const { return caches + (1 - *cache_slot) * cache_size; }
  /// The state moved to the trial point last evaluated: its cache becomes the state's.
  MYRIAD_HD void adopt_trial() const {
    if (cache_slot != nullptr) *cache_slot ^= std::uint8_t{1};
  }
};

/// Counter values of the initial auxiliary draws: the top of the range, below which run the
/// iterations (whose numbers key their proposals).
constexpr std::uint32_t kInitialAuxiliaryCounter = 0xFFFFFFFFu;

/// The number of state coordinates a chain carries for a model of `dim` parameters.
MYRIAD_HD constexpr int auxiliary_state_dim(AuxiliaryMethod m, int dim) {
  return on_unit_cube(m) ? dim + (dim % 2) : dim;
}

namespace detail {

/// x(c): μ + σ ⊙ BoxMuller(c) pair by pair (the reflective sampler's map; file comment).
template <class Model, class C, class X>
MYRIAD_HD void cube_to_prior(const Model& model, const C& c, X& x) {
  using T = typename Model::value_type;
  const int n = model.dim();
  for (int i = 0; i < n; i += 2) {
    T z0, z1;
    RandomStream::box_muller(c[i], c[i + 1], z0, z1);
    x[i] = model.gaussian_prior_mean(i) + model.gaussian_prior_sd(i) * z0;
    if (i + 1 < n)
      x[i + 1] = model.gaussian_prior_mean(i + 1) + model.gaussian_prior_sd(i + 1) * z1;
  }
}

/// log ε(x, u) at the state's x: from the state's cache for a cached estimator.
template <class Model, class T, class U>
MYRIAD_HD T log_estimate_state(const Model& model, const AuxiliaryChain<T>& chain, const U& u) {
  if constexpr (model_has_cached_estimator<Model>) {
    return model.log_estimate_cached(chain.state_cache(), u, chain.workspace);
  } else {
    return model.log_estimate(chain.position, u);
  }
}

/// log ε(x, u) at a trial point x: a cached estimator prepares the trial cache for it first
/// (AuxiliaryChain::adopt_trial keeps it if the chain moves there).
template <class Model, class T, class X, class U>
MYRIAD_HD T log_estimate_trial(const Model& model, const AuxiliaryChain<T>& chain, const X& x,
                               const U& u) {
  if constexpr (model_has_cached_estimator<Model>) {
    model.prepare_estimate(x, chain.trial_cache(), chain.workspace);
    return model.log_estimate_cached(chain.trial_cache(), u, chain.workspace);
  } else {
    return model.log_estimate(x, u);
  }
}

/// f(u) at the chain's current u: the stored one, or the one its counter keys.
template <class Model, class T, class F>
MYRIAD_HD T at_current_variates(const AuxiliaryChain<T>& chain, const RandomStream& rng,
                                bool stored, const F& f) {
  if (stored) return f(chain.auxiliary);
  return f(AuxiliaryVariates<T>{rng, *chain.counter, Model::auxiliary_law});
}

/// The line x + t·v through the state for a linear slice update of x (v in chain.direction),
/// with `log_target(point)` evaluated at the trial point in chain.proposal.
template <class T, class LogTarget>
struct StateLine {
  const AuxiliaryChain<T>& chain;
  const LogTarget& log_target_at;
  int n;
  MYRIAD_HD T log_target(T t) const {
    for (int i = 0; i < n; ++i) chain.proposal[i] = chain.position[i] + t * chain.direction[i];
    return log_target_at(chain.proposal);
  }
  MYRIAD_HD void move_to(T, T value) const {
    for (int i = 0; i < n; ++i) chain.position[i] = chain.proposal[i];
    *chain.log_target = value;
    chain.adopt_trial();
  }
};

/// The prior ellipse μ + (x − μ) cos θ + σ ⊙ ν sin θ through the state (ν in chain.direction),
/// log L at its points (elliptical-slice on a density model).
template <class Model, class T>
struct PriorEllipse {
  const Model& model;
  const AuxiliaryChain<T>& chain;
  MYRIAD_HD T log_target(T theta) const {
    const T c = myriad::cos(theta), s = myriad::sin(theta);
    for (int i = 0; i < model.dim(); ++i) {
      const T mu = model.gaussian_prior_mean(i);
      chain.proposal[i] =
          mu + (chain.position[i] - mu) * c + model.gaussian_prior_sd(i) * chain.direction[i] * s;
    }
    return model.log_likelihood(chain.proposal);
  }
  MYRIAD_HD void move_to(T, T value) const {
    for (int i = 0; i < model.dim(); ++i) chain.position[i] = chain.proposal[i];
    *chain.log_target = value;
  }
};

/// The stored u moved along a line or ellipse without scratch: entry i of the trial point is
/// computed where the estimator reads it, from u_i and the i-th normal of the update's
/// direction tag (regenerated, not stored). Elliptical: u_i cos θ + ν_i sin θ (ρ = N(0, I));
/// reflective: reflect(u_i + t v_i) (ρ uniform; thesis §3.5 with v ~ N(0, I)).
template <class T>
struct MovedVariates {
  ChainVector<T> u;
  NormalSequence<T> direction;
  bool elliptical;
  T a, b;  ///< cos θ and sin θ, or t
  MYRIAD_HD T operator[](int i) const {
    const T v = direction[i];
    return elliptical ? u[i] * a + v * b : reflect_into_unit(u[i] + a * v);
  }
};

/// u's ellipse or reflective line for a slice update of u given x: log ε(x, ·) at its points.
template <class Model, class T>
struct AuxiliaryLine {
  const Model& model;
  const AuxiliaryChain<T>& chain;
  const RandomStream& rng;
  std::uint32_t iteration;
  MYRIAD_HD MovedVariates<T> at(T t) const {
    const NormalSequence<T> direction{rng, iteration, Purpose::auxiliary_slice_direction};
    if (Model::auxiliary_law == AuxiliaryLaw::normal)
      return {chain.auxiliary, direction, true, myriad::cos(t), myriad::sin(t)};
    return {chain.auxiliary, direction, false, t, T(0)};
  }
  MYRIAD_HD T log_target(T t) const { return log_estimate_state(model, chain, at(t)); }
  MYRIAD_HD void move_to(T t, T value) const {
    const MovedVariates<T> moved = at(t);
    // Entry i of the new u depends on the old u_i alone, so it is written in place.
    for (int i = 0; i < model.auxiliary_dim(); ++i) chain.auxiliary[i] = moved[i];
    *chain.log_target = value;
  }
};

/// Accumulates one update's slice outcome into a transition's status and statistics.
template <class T>
MYRIAD_HD void count_slice(const SliceOutcome<T>& out, std::uint32_t& status,
                           IterationStats& stats) {
  stats.density_evaluations += out.evaluations;
  if (out.capped) status |= kStatusSliceCapped;
  if (out.non_finite) status |= kStatusNonFinite;
}

/// An iteration's linear slice updates of x (one along a random direction s ⊙ n/‖n‖, or one per
/// coordinate along s_d e_d), kept between evaluations: next_slice_point names the trial point,
/// the caller evaluates it (in the chain, or after a preparation batched across chains), and
/// tell_slice_point takes the value.
template <class T>
struct SliceOfX {
  LinearSliceSearch<T> search;
  int update = -1;  ///< the update under way (−1: none started)
  bool moved = false;
  std::uint32_t status = kStatusOk;
};

/// The tags of the iteration's update k: disjoint draws for each.
MYRIAD_HD inline SliceTags slice_x_tags(int k) {
  return {Purpose::slice_height, Purpose::slice_direction, Purpose::slice_bracket,
          static_cast<std::uint32_t>(k) * kSliceDrawsPerUpdate};
}

/// Moves the iteration's slice updates of x on until a trial point needs its log target: true
/// with x₀ + t·v in chain.proposal; false when every update is done (s.moved and s.status say
/// how they went; their evaluations are in stats).
template <class T>
MYRIAD_HD bool next_slice_point(const AuxiliaryChain<T>& chain, SliceOfX<T>& s, int n,
                                const AuxiliarySettings<T>& settings, const RandomStream& rng,
                                std::uint32_t iteration, IterationStats& stats) {
  const int updates = settings.coordinate_wise ? n : 1;
  while (!s.search.pending()) {
    if (s.update >= 0) {
      count_slice(s.search.out, s.status, stats);
      s.moved = s.moved || s.search.out.moved;
    }
    if (++s.update == updates) return false;
    const int k = s.update;
    if (settings.coordinate_wise) {
      for (int i = 0; i < n; ++i) chain.direction[i] = i == k ? settings.scale[i] : T(0);
    } else {
      rng.template fill_normal<T>(iteration, Purpose::slice_direction, chain.direction, n);
      T norm = T(0);
      for (int i = 0; i < n; ++i) norm += chain.direction[i] * chain.direction[i];
      const T inverse = T(1) / myriad::sqrt(norm);
      for (int i = 0; i < n; ++i) chain.direction[i] *= inverse * settings.scale[i];
    }
    s.search.start(*chain.log_target, settings.slice, rng, iteration, slice_x_tags(k));
  }
  for (int i = 0; i < n; ++i)
    chain.proposal[i] = chain.position[i] + s.search.t * chain.direction[i];
  return true;
}

/// Takes log π at chain.proposal (next_slice_point's point); an accepted point becomes the state
/// (a cached estimator's trial cache with it).
template <class T>
MYRIAD_HD void tell_slice_point(const AuxiliaryChain<T>& chain, SliceOfX<T>& s, T log_target, int n,
                                const AuxiliarySettings<T>& settings, const RandomStream& rng,
                                std::uint32_t iteration) {
  if (s.search.tell(log_target, settings.slice, rng, iteration, slice_x_tags(s.update))) {
    for (int i = 0; i < n; ++i) chain.position[i] = chain.proposal[i];
    *chain.log_target = log_target;
    chain.adopt_trial();
  }
}

/// The iteration's linear slice updates of x with `log_target_at`, evaluated in the chain.
/// Returns whether x moved.
template <class T, class LogTarget>
MYRIAD_HD bool slice_x(const AuxiliaryChain<T>& chain, const LogTarget& log_target_at, int n,
                       const AuxiliarySettings<T>& settings, const RandomStream& rng,
                       std::uint32_t iteration, std::uint32_t& status, IterationStats& stats) {
  SliceOfX<T> s;
  while (next_slice_point(chain, s, n, settings, rng, iteration, stats))
    tell_slice_point(chain, s, log_target_at(chain.proposal), n, settings, rng, iteration);
  status |= s.status;
  return s.moved;
}

/// The random walk's proposal x* = x + λ s ⊙ z, into chain.proposal.
template <class T>
MYRIAD_HD void propose_walk(const AuxiliaryChain<T>& chain, int n,
                            const AuxiliarySettings<T>& settings, const RandomStream& rng,
                            std::uint32_t iteration) {
  rng.template fill_normal<T>(iteration, Purpose::proposal, chain.proposal, n);
  for (int i = 0; i < n; ++i)
    chain.proposal[i] = chain.position[i] + settings.step * settings.scale[i] * chain.proposal[i];
}

/// The random walk's Metropolis decision once log π(x*) = `proposed` is known: accepted with
/// probability min{1, π(x*)/π(x)}, the state (and a cached estimator's trial cache) taking x*.
/// Returns the acceptance probability; `accepted` says whether it moved.
template <class T>
MYRIAD_HD T decide_walk(const AuxiliaryChain<T>& chain, T proposed, int n, const RandomStream& rng,
                        std::uint32_t iteration, std::uint32_t& status, IterationStats& stats,
                        bool& accepted) {
  ++stats.density_evaluations;
  accepted = false;
  if (!myriad::isfinite(proposed)) {
    if (proposed != proposed) status |= kStatusNonFinite;  // NaN; −∞ is a plain rejection
    return T(0);
  }
  const T log_ratio = proposed - *chain.log_target;
  if (myriad::log(rng.uniform<T>(iteration, Purpose::accept, 0)) < log_ratio) {
    accepted = true;
    for (int i = 0; i < n; ++i) chain.position[i] = chain.proposal[i];
    *chain.log_target = proposed;
    chain.adopt_trial();
  }
  return log_ratio >= T(0) ? T(1) : myriad::exp(log_ratio);
}

/// Begins preparing the trial cache for x: a staged estimator's first dense step (model/
/// staged_preparation.hpp), which the caller carries out, in the chain or batched across chains;
/// nothing to do (finished) for any other model, whose estimate prepares itself.
template <class Model, class T, class X>
MYRIAD_HD PreparationStep begin_trial_preparation(const Model& model,
                                                  const AuxiliaryChain<T>& chain, const X& x) {
  if constexpr (model_has_staged_preparation<Model>) {
    return model.begin_preparation(x, chain.trial_cache(), chain.workspace);
  } else {
    (void)model, (void)chain, (void)x;
    return PreparationStep::finished();
  }
}

/// log ε(x, u) at the trial point x once begin_trial_preparation's steps are done.
template <class Model, class T, class X, class U>
MYRIAD_HD T log_estimate_prepared_trial(const Model& model, const AuxiliaryChain<T>& chain,
                                        const X& x, const U& u) {
  if constexpr (model_has_staged_preparation<Model>) {
    return model.log_estimate_cached(chain.trial_cache(), u, chain.workspace);
  } else {
    return log_estimate_trial(model, chain, x, u);
  }
}

/// APM's update of u given x (Metropolis independence, or a slice update of the stored u),
/// from the state's cache; counted in stats.auxiliary_updates / auxiliary_accepted.
template <class Model, class T>
MYRIAD_HD void update_variates(const Model& model, const AuxiliaryChain<T>& chain,
                               const RandomStream& rng, const AuxiliarySettings<T>& settings,
                               std::uint32_t iteration, std::uint32_t& status,
                               IterationStats& stats) {
  ++stats.auxiliary_updates;
  if (independence_update(settings.method)) {
    const T proposed = log_estimate_state(
        model, chain, AuxiliaryVariates<T>{rng, iteration, Model::auxiliary_law});
    ++stats.density_evaluations;
    if (proposed != proposed) status |= kStatusNonFinite;
    if (myriad::log(rng.uniform<T>(iteration, Purpose::accept, 1)) < proposed - *chain.log_target) {
      *chain.counter = iteration;
      *chain.log_target = proposed;
      ++stats.auxiliary_accepted;
    }
    return;
  }
  const SliceTags tags{Purpose::auxiliary_slice_height, Purpose::auxiliary_slice_direction,
                       Purpose::auxiliary_slice_bracket};
  const AuxiliaryLine<Model, T> line{model, chain, rng, iteration};
  const SliceOutcome<T> out =
      Model::auxiliary_law == AuxiliaryLaw::normal
          ? elliptical_slice_update(line, *chain.log_target, settings.auxiliary.max_shrinks, rng,
                                    iteration, tags)
          : linear_slice_update(line, *chain.log_target, settings.auxiliary, rng, iteration, tags);
  count_slice(out, status, stats);
  if (out.moved) ++stats.auxiliary_accepted;
}

}  // namespace detail

/// One transition of a density model by a slice sampler (slice, elliptical-slice,
/// reflective-slice). Records it in `stats`: acceptance 1, "accepted" when the point moved.
template <class Model, class T>
MYRIAD_HD void slice_transition(const Model& model, const AuxiliaryChain<T>& chain,
                                const RandomStream& rng, const AuxiliarySettings<T>& settings,
                                std::uint32_t iteration, IterationStats& stats) {
  std::uint32_t status = kStatusOk;
  bool moved = false;
  const int n = model.dim();
  if (settings.method == AuxiliaryMethod::slice) {
    const auto log_density = [&](const ChainVector<T>& x) { return model.log_density(x); };
    moved = detail::slice_x(chain, log_density, n, settings, rng, iteration, status, stats);
  } else if constexpr (model_has_gaussian_prior<Model>) {
    const SliceTags tags{Purpose::slice_height, Purpose::slice_direction, Purpose::slice_bracket};
    SliceOutcome<T> out;
    if (settings.method == AuxiliaryMethod::elliptical_slice) {
      rng.template fill_normal<T>(iteration, Purpose::slice_direction, chain.direction, n);
      detail::PriorEllipse<Model, T> ellipse{model, chain};
      out = elliptical_slice_update(ellipse, *chain.log_target, settings.slice.max_shrinks, rng,
                                    iteration, tags);
    } else {
      // Reflective slice on the cube coordinates c, direction v ~ N(0, I) (thesis §3.5).
      const int m = chain.position.size;
      rng.template fill_normal<T>(iteration, Purpose::slice_direction, chain.direction, m);
      const auto log_likelihood = [&](const ChainVector<T>& c) {
        for (int i = 0; i < m; ++i) c[i] = reflect_into_unit(c[i]);
        detail::cube_to_prior(model, c, chain.mapped);
        return model.log_likelihood(chain.mapped);
      };
      const detail::StateLine<T, decltype(log_likelihood)> line{chain, log_likelihood, m};
      out = linear_slice_update(line, *chain.log_target, settings.slice, rng, iteration, tags);
    }
    detail::count_slice(out, status, stats);
    moved = out.moved;
  }
  stats.record(1.0, moved, status, 0);
}

/// The part of a PM-MH or APM-*-MH transition (random_walk_on_x) up to the estimate at the
/// proposal: APM's update of u given x, the proposal x* in chain.proposal, and the first step of
/// preparing its cache, which the caller carries out before finish_walk_transition. The status
/// so far goes in `status`, to be passed on. pseudo_marginal_transition runs the steps in the
/// chain; a GPU runs them batched across chains (kernels/staged_preparation.cuh).
template <class Model, class T>
MYRIAD_HD PreparationStep begin_walk_transition(const Model& model, const AuxiliaryChain<T>& chain,
                                                const RandomStream& rng,
                                                const AuxiliarySettings<T>& settings,
                                                std::uint32_t iteration, std::uint32_t& status,
                                                IterationStats& stats) {
  if (settings.method != AuxiliaryMethod::pm_mh)
    detail::update_variates(model, chain, rng, settings, iteration, status, stats);
  detail::propose_walk(chain, model.dim(), settings, rng, iteration);
  return detail::begin_trial_preparation(model, chain, chain.proposal);
}

/// The rest of the transition begun by begin_walk_transition, once the proposal's preparation is
/// done: the estimate at x* and the Metropolis decision, recorded in `stats` with `status`.
/// PM-MH estimates at x* with a fresh u* keyed by this iteration and keeps the current estimate
/// (thesis Alg. 8: never recompute p̂ at x); APM estimates at the current u.
template <class Model, class T>
MYRIAD_HD void finish_walk_transition(const Model& model, const AuxiliaryChain<T>& chain,
                                      const RandomStream& rng, const AuxiliarySettings<T>& settings,
                                      std::uint32_t iteration, std::uint32_t status,
                                      IterationStats& stats) {
  const bool fresh = settings.method == AuxiliaryMethod::pm_mh;
  const auto at = [&](const auto& u) {
    return detail::log_estimate_prepared_trial(model, chain, chain.proposal, u);
  };
  const T proposed =
      fresh ? at(AuxiliaryVariates<T>{rng, iteration, Model::auxiliary_law})
            : detail::at_current_variates<Model>(chain, rng, stores_auxiliary(settings.method), at);
  bool accepted = false;
  const T accept_prob =
      detail::decide_walk(chain, proposed, model.dim(), rng, iteration, status, stats, accepted);
  if (fresh && accepted) *chain.counter = iteration;
  stats.record(static_cast<double>(accept_prob), accepted, status, 0);
}

namespace detail {
/// Names the next trial point of an APM-*-SS transition's slice updates of x and begins its
/// preparation (true), or records the finished transition in `stats` (false).
template <class Model, class T>
MYRIAD_HD bool ask_slice_point(const Model& model, const AuxiliaryChain<T>& chain,
                               const RandomStream& rng, const AuxiliarySettings<T>& settings,
                               std::uint32_t iteration, SliceOfX<T>& slices, IterationStats& stats,
                               PreparationStep& step) {
  if (next_slice_point(chain, slices, model.dim(), settings, rng, iteration, stats)) {
    step = begin_trial_preparation(model, chain, chain.proposal);
    return true;
  }
  stats.record(1.0, slices.moved, slices.status, 0);
  return false;
}
}  // namespace detail

/// The part of an APM-*-SS transition up to its first trial point of x: the update of u given x,
/// then the first slice update's point, whose preparation begins with `step`. Returns false when
/// no point needs evaluating (every update capped at once), the transition recorded in `stats`.
/// While it and continue_slice_transition return true, the caller carries out `step`'s
/// preparation (in the chain, or batched across chains) and calls continue_slice_transition.
template <class Model, class T>
MYRIAD_HD bool begin_slice_transition(const Model& model, const AuxiliaryChain<T>& chain,
                                      const RandomStream& rng, const AuxiliarySettings<T>& settings,
                                      std::uint32_t iteration, detail::SliceOfX<T>& slices,
                                      IterationStats& stats, PreparationStep& step) {
  slices = detail::SliceOfX<T>{};
  detail::update_variates(model, chain, rng, settings, iteration, slices.status, stats);
  return detail::ask_slice_point(model, chain, rng, settings, iteration, slices, stats, step);
}

/// The estimate at the prepared trial point (at the current u), the slice search moved on, and
/// the next point asked for as begin_slice_transition does.
template <class Model, class T>
MYRIAD_HD bool continue_slice_transition(const Model& model, const AuxiliaryChain<T>& chain,
                                         const RandomStream& rng,
                                         const AuxiliarySettings<T>& settings,
                                         std::uint32_t iteration, detail::SliceOfX<T>& slices,
                                         IterationStats& stats, PreparationStep& step) {
  const T log_target = detail::at_current_variates<Model>(
      chain, rng, stores_auxiliary(settings.method), [&](const auto& u) {
        return detail::log_estimate_prepared_trial(model, chain, chain.proposal, u);
      });
  detail::tell_slice_point(chain, slices, log_target, model.dim(), settings, rng, iteration);
  return detail::ask_slice_point(model, chain, rng, settings, iteration, slices, stats, step);
}

/// One transition of an estimator model by PM-MH or an APM method. Records the x-update's
/// acceptance in `stats` (a slice update of x: 1, "accepted" when it moved) and, for APM, the
/// update of u in stats.auxiliary_updates / auxiliary_accepted.
template <class Model, class T>
MYRIAD_HD void pseudo_marginal_transition(const Model& model, const AuxiliaryChain<T>& chain,
                                          const RandomStream& rng,
                                          const AuxiliarySettings<T>& settings,
                                          std::uint32_t iteration, IterationStats& stats) {
  if (random_walk_on_x(settings.method)) {
    std::uint32_t status = kStatusOk;
    const PreparationStep step =
        begin_walk_transition(model, chain, rng, settings, iteration, status, stats);
    if constexpr (model_has_staged_preparation<Model>)
      finish_preparation_in_chain(model, step, chain.trial_cache(), chain.workspace);
    (void)step;
    finish_walk_transition(model, chain, rng, settings, iteration, status, stats);
    return;
  }
  // APM-*-SS: u given x, then linear slice updates of x given u.
  detail::SliceOfX<T> slices;
  PreparationStep step;
  bool asking = begin_slice_transition(model, chain, rng, settings, iteration, slices, stats, step);
  while (asking) {
    if constexpr (model_has_staged_preparation<Model>)
      finish_preparation_in_chain(model, step, chain.trial_cache(), chain.workspace);
    asking = continue_slice_transition(model, chain, rng, settings, iteration, slices, stats, step);
  }
}

}  // namespace myriad
