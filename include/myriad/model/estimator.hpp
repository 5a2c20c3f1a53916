#pragma once
// The two model forms the auxiliary-variable samplers (mcmc/auxiliary_samplers.hpp) read besides
// the density-model concept of model/concept.hpp (docs/pseudo-marginal.md).
//
// An estimator model (pseudo-marginal MH and APM; thesis-methods.md §4–5) has no log density to
// offer, only an unbiased, non-negative estimate of it, driven by auxiliary variates u ~ ρ:
//
//   MYRIAD_HD int dim() const;                   // parameters x
//   MYRIAD_HD int auxiliary_dim() const;         // variates u per estimate
//   static constexpr AuxiliaryLaw auxiliary_law;  // ρ: standard normal or uniform on (0, 1)
//   template <class X, class U> MYRIAD_HD T log_estimate(const X& x, const U& u) const;
//
// log_estimate is log ε(x, u) with E_ρ[ε(x, u)] = p̃(x), the prior and Jacobian terms included,
// and a deterministic function of (x, u) (thesis-methods.md §5, "Determinism"). U is any
// indexable view: the samplers pass u stored per chain, or u regenerated from a counter of the
// chain's stream one entry at a time (AuxiliaryVariates below), so that a Metropolis-independence
// update needs no storage. The density-model members for recorded quantities and initial points
// apply as they do to density models.
//
// An estimator whose x-dependent work is heavy (a Laplace fit, Cholesky factors: the GP probit
// model of models/gp_probit.hpp) may split log_estimate at it, so that an update of u given x
// reuses that work (thesis-methods.md §5: "x-dependent work can be cached"):
//
//   MYRIAD_HD std::int64_t estimator_cache_size() const;      // T elements of one cache
//   MYRIAD_HD std::int64_t estimator_workspace_size() const;  // T elements of scratch
//   template <class X> MYRIAD_HD void prepare_estimate(const X& x, T* cache, T* workspace) const;
//   template <class U> MYRIAD_HD T log_estimate_cached(const T* cache, const U& u,
//                                                     T* workspace) const;
//
// with log ε(x, u) = log_estimate_cached(cache, u, ·) once prepare_estimate(x, cache, ·) has
// filled the cache, both deterministic. A preparation that fails numerically (a factor that is
// not positive definite) leaves a cache whose estimates are NaN, which the samplers count as
// non-finite and reject. Such a model need not offer log_estimate(x, u): the samplers keep two
// caches per chain, the state's and a trial point's, and swap them when the chain moves.
//
// A density model with a Gaussian prior factor (elliptical slice sampling; reflective slice
// sampling through the prior's CDF) writes its density as N(x; μ, diag σ²) · L(x):
//
//   MYRIAD_HD T gaussian_prior_mean(int i) const;  MYRIAD_HD T gaussian_prior_sd(int i) const;
//   template <class Vec> MYRIAD_HD auto log_likelihood(const Vec& x) const;   // log L(x)
//
// with log_density(x) = Σ log N(x_i; μ_i, σ_i²) + log_likelihood(x) up to a constant.

#include <cstdint>
#include <type_traits>
#include <utility>

#include "myriad/core/hd.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/detection.hpp"

namespace myriad {

/// The law ρ of an estimator's auxiliary variates.
enum class AuxiliaryLaw {
  normal,   ///< N(0, I): elliptical slice sampling updates them
  uniform,  ///< U(0, 1)^A: reflective slice sampling updates them
};

namespace detail {
struct ProbeVariates {
  double* p;
  MYRIAD_HD double& operator[](int i) const { return p[i]; }
};
template <class Model>
using log_estimate_expression = decltype(std::declval<const Model&>().log_estimate(
    std::declval<const ProbeVariates&>(), std::declval<const ProbeVariates&>()));
template <class Model>
using cached_estimate_expression =
    decltype(std::declval<const Model&>().estimator_cache_size(),
             std::declval<const Model&>().estimator_workspace_size(),
             std::declval<const Model&>().prepare_estimate(
                 std::declval<const ProbeVariates&>(), std::declval<typename Model::value_type*>(),
                 std::declval<typename Model::value_type*>()),
             std::declval<const Model&>().log_estimate_cached(
                 std::declval<const typename Model::value_type*>(),
                 std::declval<const ProbeVariates&>(),
                 std::declval<typename Model::value_type*>()));
template <class Model>
using prior_factor_expression =
    decltype(std::declval<const Model&>().gaussian_prior_mean(0),
             std::declval<const Model&>().gaussian_prior_sd(0),
             std::declval<const Model&>().log_likelihood(std::declval<const ProbeVariates&>()));
template <class Model>
using log_density_expression =
    decltype(std::declval<const Model&>().log_density(std::declval<const ProbeVariates&>()));
}  // namespace detail

/// True when the model splits its estimate at an x-dependent cache (file comment).
template <class Model>
constexpr bool model_has_cached_estimator =
    is_detected_v<detail::cached_estimate_expression, Model>;

/// True when the model offers an unbiased estimate of its density (pseudo-marginal samplers),
/// directly or through a cache.
template <class Model>
constexpr bool model_has_estimator =
    is_detected_v<detail::log_estimate_expression, Model> || model_has_cached_estimator<Model>;

/// True when the model has a log density (density models).
template <class Model>
constexpr bool model_has_log_density = is_detected_v<detail::log_density_expression, Model>;

/// True when the model states a Gaussian prior factor and its likelihood (elliptical slice).
template <class Model>
constexpr bool model_has_gaussian_prior = is_detected_v<detail::prior_factor_expression, Model>;

/// The standard normals of (iteration, purpose) read entry by entry: normal i is RandomStream::
/// normal(iteration, purpose, i), but the Philox block and Box–Muller transform of a pair are
/// computed once for its two entries (a reader that walks the sequence in order pays one block
/// per pair, as fill_normal does).
template <class T>
struct NormalSequence {
  RandomStream rng;
  std::uint32_t iteration;
  Purpose purpose;
  mutable std::uint32_t pair = 0xFFFFFFFFu;
  mutable T z0 = T(0), z1 = T(0);

  MYRIAD_HD T operator[](int i) const {
    const auto index = static_cast<std::uint32_t>(i);
    if (index / 2 != pair) {
      pair = index / 2;
      const RandomStream::Block b = rng.block(iteration, purpose, pair);
      RandomStream::box_muller(RandomStream::uniform_from_words<T>(b.v[0], b.v[1]),
                               RandomStream::uniform_from_words<T>(b.v[2], b.v[3]), z0, z1);
    }
    return index % 2 == 0 ? z0 : z1;
  }
};

/// The variates u of one estimate, regenerated from the chain's stream at `counter` entry by
/// entry: u_i is normal or uniform number i of (counter, Purpose::auxiliary). Nothing is
/// stored, so a Metropolis-independence update of u keeps only the counter it drew u at
/// (thesis-methods.md §5: "a counter-based PRNG turns this into one stored counter per chain").
template <class T>
struct AuxiliaryVariates {
  MYRIAD_HD AuxiliaryVariates(const RandomStream& rng, std::uint32_t counter, AuxiliaryLaw law)
      : normals{rng, counter, Purpose::auxiliary}, law(law) {}

  NormalSequence<T> normals;
  AuxiliaryLaw law;

  MYRIAD_HD T operator[](int i) const {
    if (law == AuxiliaryLaw::normal) return normals[i];
    return normals.rng.template uniform<T>(normals.iteration, Purpose::auxiliary,
                                           static_cast<std::uint32_t>(i));
  }
};

}  // namespace myriad
