#pragma once
// The per-chain bodies of the auxiliary-variable samplers' backends (mcmc/auxiliary_samplers.hpp):
// a chain's start and a run of its iterations with their recorded quantities. The CPU backend
// (backend/cpu_auxiliary_backend.hpp) calls them in an OpenMP loop over chains, the CUDA kernels
// (kernels/auxiliary_kernels.cuh) one chain per thread: one code path (DESIGN.md rule 1).

#include <array>
#include <cstddef>
#include <cstdint>

#include "myriad/core/device_memory.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/mcmc/auxiliary_samplers.hpp"
#include "myriad/mcmc/iteration_stats.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/estimator.hpp"
#include "myriad/model/staged_preparation.hpp"

namespace myriad {

/// The ensemble's arrays: position/proposal/direction of auxiliary_state_dim coordinates,
/// mapped of the model's dim (reflective-slice), auxiliary of auxiliary_dim (apm-ss-*; else
/// dim 0), and one log target and counter per chain; for a cached estimator, chain-major, two
/// caches (2 · cache_size values), workspace_size values of scratch and a cache slot per chain
/// (estimator_storage), else null.
template <class T>
struct AuxiliaryEnsembleView {
  EnsembleView<T> position, proposal, direction, mapped, auxiliary;
  T* log_target;
  std::uint32_t* counter;
  T* caches = nullptr;
  std::int64_t cache_size = 0;
  T* workspace = nullptr;
  std::int64_t workspace_size = 0;
  std::uint8_t* cache_slot = nullptr;

  MYRIAD_HD AuxiliaryChain<T> chain(std::int64_t c) const {
    AuxiliaryChain<T> one{position.chain(c), proposal.chain(c),  direction.chain(c),
                          mapped.chain(c),   auxiliary.chain(c), log_target + c,
                          counter + c};
    if (caches != nullptr) {
      one.caches = caches + 2 * cache_size * c;
      one.cache_size = cache_size;
      one.workspace = workspace + workspace_size * c;
      one.cache_slot = cache_slot + c;
    }
    return one;
  }
};

/// Per-chain sizes of a cached estimator's storage (model/estimator.hpp): one cache and the
/// workspace, in values; zero for every other model or a method without an estimator.
struct EstimatorStorage {
  std::int64_t cache_size = 0, workspace_size = 0;
};

/// `view` with a cached estimator's arrays (chain-major: 2 · cache_size values of caches,
/// workspace_size of workspace and one slot per chain), when `storage` has any.
template <class T>
AuxiliaryEnsembleView<T> with_estimator_storage(AuxiliaryEnsembleView<T> view,
                                                const EstimatorStorage& storage, T* caches,
                                                T* workspace, std::uint8_t* cache_slot) {
  if (storage.cache_size > 0) {
    view.caches = caches;
    view.cache_size = storage.cache_size;
    view.workspace = workspace;
    view.workspace_size = storage.workspace_size;
    view.cache_slot = cache_slot;
  }
  return view;
}

template <class Model>
EstimatorStorage estimator_storage(const Model& model, AuxiliaryMethod method) {
  if constexpr (model_has_cached_estimator<Model>) {
    if (uses_estimator(method))
      return {model.estimator_cache_size(), model.estimator_workspace_size()};
  }
  (void)model;
  (void)method;
  return {};
}

/// The variates a chain stores for `method` on Model: an estimator's auxiliary_dim() where the
/// method moves u by slice sampling, else none.
template <class Model>
MYRIAD_HD int stored_auxiliary_dim(const Model& model, AuxiliaryMethod method) {
  if constexpr (model_has_estimator<Model>) {
    if (stores_auxiliary(method)) return model.auxiliary_dim();
  }
  return 0;
}

/// Per-chain sizes of the arrays of an auxiliary sampler's ensemble for one method on one model.
struct AuxiliarySizes {
  int dim = 0;            ///< the model's
  int state_dim = 0;      ///< auxiliary_state_dim: position, proposal, direction
  int auxiliary_dim = 0;  ///< stored_auxiliary_dim
  EstimatorStorage storage;
};

template <class Model>
AuxiliarySizes auxiliary_sizes(const Model& model, AuxiliaryMethod method) {
  return {model.dim(), auxiliary_state_dim(method, model.dim()),
          stored_auxiliary_dim(model, method), estimator_storage(model, method)};
}

/// The ensemble's state as a backend owns it: Array is HostVector on the CPU and DeviceArray on a
/// GPU (core/device_memory.hpp). Both backends size and view it with these functions, in their
/// own layouts (the estimator's storage chain-major in both).
template <template <class> class Array, class T>
struct AuxiliaryEnsembleArrays {
  Array<T> position, proposal, direction, mapped, auxiliary, log_target;
  Array<std::uint32_t> counter;
  Array<T> caches, workspace;  ///< a cached estimator's, chain-major
  Array<std::uint8_t> cache_slot;

  /// Every array sized (Array(n): zeros on the CPU, undefined on a GPU).
  void allocate(const EnsembleLayout& layout, const AuxiliarySizes& sizes) {
    for (Array<T>* array : {&position, &proposal, &direction})
      *array = Array<T>(layout.values(sizes.state_dim));
    mapped = Array<T>(layout.values(sizes.dim));
    auxiliary = Array<T>(layout.values(sizes.auxiliary_dim));
    log_target = Array<T>(layout.values(1));
    counter = Array<std::uint32_t>(layout.values(1));
    const auto chains = static_cast<std::size_t>(layout.chains);
    caches = Array<T>(chains * 2 * static_cast<std::size_t>(sizes.storage.cache_size));
    workspace = Array<T>(chains * static_cast<std::size_t>(sizes.storage.workspace_size));
    cache_slot = Array<std::uint8_t>(sizes.storage.cache_size > 0 ? chains : 0);
  }
  /// The arrays of values of T with one row per dimension.
  std::array<Array<T>*, 6> vectors() {
    return {&position, &proposal, &direction, &mapped, &auxiliary, &log_target};
  }
  AuxiliaryEnsembleView<T> view(const EnsembleLayout& layout, const AuxiliarySizes& sizes) {
    return with_estimator_storage(
        AuxiliaryEnsembleView<T>{
            layout.view(position.data(), sizes.state_dim),
            layout.view(proposal.data(), sizes.state_dim),
            layout.view(direction.data(), sizes.state_dim), layout.view(mapped.data(), sizes.dim),
            layout.view(auxiliary.data(), sizes.auxiliary_dim), log_target.data(), counter.data()},
        sizes.storage, caches.data(), workspace.data(), cache_slot.data());
  }
};

/// Begins preparing the state's cache when its log target is a staged estimator's (model/
/// staged_preparation.hpp): the first dense step, which the caller carries out, in the chain or
/// batched across chains, before prepared_log_target; nothing to do (finished) otherwise.
template <class Model, class T>
MYRIAD_HD PreparationStep begin_log_target(const Model& model, const AuxiliaryChain<T>& chain,
                                           const AuxiliarySettings<T>& settings) {
  if constexpr (model_has_staged_preparation<Model>) {
    if (uses_estimator(settings.method))
      return model.begin_preparation(chain.position, chain.state_cache(), chain.workspace);
  }
  (void)model, (void)chain, (void)settings;
  return PreparationStep::finished();
}

/// log π of the chain's state as its sampler reads it, once begin_log_target's steps are done:
/// log L(x(c)) (reflective-slice), log L(x) (elliptical-slice), log π(x) (slice) or log ε(x, u)
/// (pseudo-marginal; a cached estimator without stages prepares the state's cache here).
template <class Model, class T>
MYRIAD_HD T prepared_log_target(const Model& model, const AuxiliaryChain<T>& chain,
                                const RandomStream& rng, const AuxiliarySettings<T>& settings) {
  const AuxiliaryMethod method = settings.method;
  if constexpr (model_has_estimator<Model>) {
    if (uses_estimator(method)) {
      if constexpr (model_has_cached_estimator<Model> && !model_has_staged_preparation<Model>)
        model.prepare_estimate(chain.position, chain.state_cache(), chain.workspace);
      return detail::at_current_variates<Model>(
          chain, rng, stores_auxiliary(method),
          [&](const auto& u) { return detail::log_estimate_state(model, chain, u); });
    }
  }
  if constexpr (model_has_gaussian_prior<Model>) {
    if (method == AuxiliaryMethod::reflective_slice) {
      detail::cube_to_prior(model, chain.position, chain.mapped);
      return model.log_likelihood(chain.mapped);
    }
    if (method == AuxiliaryMethod::elliptical_slice) return model.log_likelihood(chain.position);
  }
  if constexpr (model_has_log_density<Model>) {
    if (!uses_estimator(method)) return model.log_density(chain.position);
  }
  return T(NAN);  // a method the host refuses for this model (run/sample_auxiliary.hpp)
}

/// log π of the chain's state, its preparation run in the chain.
template <class Model, class T>
MYRIAD_HD T auxiliary_log_target(const Model& model, const AuxiliaryChain<T>& chain,
                                 const RandomStream& rng, const AuxiliarySettings<T>& settings) {
  const PreparationStep step = begin_log_target(model, chain, settings);
  if constexpr (model_has_staged_preparation<Model>)
    finish_preparation_in_chain(model, step, chain.state_cache(), chain.workspace);
  (void)step;
  return prepared_log_target(model, chain, rng, settings);
}

/// Places chain c's start for try `attempt`: uniform cube coordinates (reflective-slice), else
/// the model's initial_point or uniform in [−radius, radius]^D, and for an estimator its u (at
/// counter kInitialAuxiliaryCounter − attempt, stored where the method keeps u). False when the
/// model's initial_point declined the try.
template <class Model, class T>
MYRIAD_HD bool place_auxiliary_chain(const Model& model, const AuxiliaryChain<T>& chain,
                                     const RandomStream& rng, const AuxiliarySettings<T>& settings,
                                     std::int64_t c, T radius, int attempt) {
  const int n = chain.position.size;
  const auto draw = static_cast<std::uint32_t>(attempt);
  if (on_unit_cube(settings.method)) {
    for (int i = 0; i < n; ++i)
      chain.position[i] =
          rng.uniform<T>(draw, Purpose::initial_point, static_cast<std::uint32_t>(i));
  } else if constexpr (model_has_chain_initial_point<Model>) {
    ChainVector<T> x = chain.position;
    if (!model.initial_point(rng, draw, c, x)) return false;
  } else if constexpr (model_has_initial_point<Model>) {
    ChainVector<T> x = chain.position;
    if (!model.initial_point(rng, draw, x)) return false;
  } else {
    for (int i = 0; i < n; ++i) {
      const T u = rng.uniform<T>(draw, Purpose::initial_point, static_cast<std::uint32_t>(i));
      chain.position[i] = radius * (T(2) * u - T(1));
    }
  }
  *chain.counter = kInitialAuxiliaryCounter - draw;
  if constexpr (model_has_estimator<Model>) {
    if (stores_auxiliary(settings.method)) {
      const AuxiliaryVariates<T> u{rng, *chain.counter, Model::auxiliary_law};
      for (int i = 0; i < chain.auxiliary.size; ++i) chain.auxiliary[i] = u[i];
    }
  }
  (void)model, (void)c, (void)radius;
  return true;
}

/// Draws chain c's start (place_auxiliary_chain), trying until the log target is finite; false
/// after max_tries.
template <class Model, class T>
MYRIAD_HD bool initialize_auxiliary_chain(const Model& model, const AuxiliaryChain<T>& chain,
                                          const RandomStream& rng,
                                          const AuxiliarySettings<T>& settings, std::int64_t c,
                                          T radius, int max_tries) {
  for (int attempt = 0; attempt < max_tries; ++attempt) {
    if (!place_auxiliary_chain(model, chain, rng, settings, c, radius, attempt)) continue;
    *chain.log_target = auxiliary_log_target(model, chain, rng, settings);
    if (myriad::isfinite(*chain.log_target)) return true;
  }
  return false;
}

/// Writes the recorded quantities of the chain's state (of x(c) on the cube) for draw i at
/// recorded[(i · q + k) · chains + c] (DrawSink's layout).
template <class Model, class T>
MYRIAD_HD void record_auxiliary_draw(const Model& model, const AuxiliaryChain<T>& chain,
                                     const AuxiliarySettings<T>& settings, T* recorded, int i,
                                     int quantities, std::int64_t chains, std::int64_t c) {
  ChainVector<T> slot{recorded + static_cast<std::int64_t>(i) * quantities * chains + c, chains,
                      quantities};
  if constexpr (model_has_gaussian_prior<Model>) {
    if (on_unit_cube(settings.method)) {
      detail::cube_to_prior(model, chain.position, chain.mapped);
      record_quantities(model, chain.mapped, slot);
      return;
    }
  }
  (void)settings;
  record_quantities(model, chain.position, slot);
}

/// Iterations first_iteration … first_iteration + n − 1 of chain c, writing the recorded
/// quantities of each (of x(c) on the cube) at recorded[(i · q + k) · chains + c] when recorded
/// is not null (DrawSink's layout). Returns the chain's statistics.
template <class Model, class T>
MYRIAD_HD IterationStats auxiliary_chain_iterations(
    const Model& model, const AuxiliaryChain<T>& chain, const RandomStream& rng,
    const AuxiliarySettings<T>& settings, std::uint32_t first_iteration, int n, T* recorded,
    int quantities, std::int64_t chains, std::int64_t c) {
  IterationStats stats;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t iteration = first_iteration + static_cast<std::uint32_t>(i);
    if constexpr (model_has_estimator<Model>) {
      if (uses_estimator(settings.method)) {
        pseudo_marginal_transition(model, chain, rng, settings, iteration, stats);
      }
    }
    if constexpr (model_has_log_density<Model>) {
      if (!uses_estimator(settings.method)) {
        slice_transition(model, chain, rng, settings, iteration, stats);
      }
    }
    if (recorded != nullptr)
      record_auxiliary_draw(model, chain, settings, recorded, i, quantities, chains, c);
  }
  return stats;
}

}  // namespace myriad
