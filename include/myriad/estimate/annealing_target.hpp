#pragma once
// The annealing-target concept: what annealed importance sampling (estimate/hais.hpp) needs of
// a model (hais.md §1, §5–§7).
//
// A target is a density model (model/concept.hpp): dim(), log_density(x) = −E_p(x) up to the
// unknown constant log Z_p, and optionally log_density_gradient. AIS estimates log Z_p, i.e.
// log ∫ exp(log_density(x)) dx. Optional members, detected at compile time:
//
//   // Two-level batches (hais.md §6): one target per data point ("problem").
//   int num_problems() const;                          // host; default 1
//   MYRIAD_HD Problem problem(int p) const;            // a density model for data point p
//
//   // Box constraints (hais.md §5): ±infinity where a coordinate is unbounded.
//   MYRIAD_HD T lower_bound(int i) const;
//   MYRIAD_HD T upper_bound(int i) const;
//
//   // Known answers, host only: the exact log Z_p of problem p (tests, run.json log_z_exact),
//   // and the exact posterior mean and sd of each coordinate of problem p, named as the run
//   // names them (x[0], x[1], … or the model's quantity names; run.json exact_posterior_check).
//   double exact_log_z(int p) const;
//   std::vector<ExactMoment> exact_posterior(int p) const;
//
//   // Exact posterior draws for reverse (BDMC) runs, hais.md §7: writes into x a draw from
//   // problem p's normalised target; `draw` numbers the reverse particle. Simulated-data
//   // models may return the latent that generated the data (the same for every draw).
//   template <class Out>
//   MYRIAD_HD void exact_sample(int p, const RandomStream& rng, std::uint32_t draw, Out& x) const;
//   bool has_exact_samples() const;   // host; false where these arguments have none
//
// Problem types must themselves be density models; they need not repeat the optional members
// (bounds are read from the batch model).

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/hd.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/detection.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

namespace detail {
struct ProbeOut {
  double* p;
  MYRIAD_HD double& operator[](int i) const { return p[i]; }
};

template <class Model>
using problems_expression = std::void_t<decltype(std::declval<const Model&>().num_problems()),
                                        decltype(std::declval<const Model&>().problem(0))>;

template <class Model>
using bounds_expression = std::void_t<decltype(std::declval<const Model&>().lower_bound(0)),
                                      decltype(std::declval<const Model&>().upper_bound(0))>;

template <class Model>
using exact_log_z_expression = decltype(std::declval<const Model&>().exact_log_z(0));

template <class Model>
using target_exact_posterior_expression = decltype(std::declval<const Model&>().exact_posterior(0));

template <class Model>
using exact_sample_expression = decltype(std::declval<const Model&>().exact_sample(
    0, std::declval<const RandomStream&>(), std::uint32_t{0}, std::declval<ProbeOut&>()));
}  // namespace detail

/// True when the target is a batch of problems (one per data point).
template <class Model>
constexpr bool target_has_problems = is_detected_v<detail::problems_expression, Model>;
/// True when some coordinates are box-constrained.
template <class Model>
constexpr bool target_has_bounds = is_detected_v<detail::bounds_expression, Model>;
/// True when the target knows its exact log Z.
template <class Model>
constexpr bool target_has_exact_log_z = is_detected_v<detail::exact_log_z_expression, Model>;
/// True when the target knows its posterior's exact means and sds.
template <class Model>
constexpr bool target_has_exact_posterior =
    is_detected_v<detail::target_exact_posterior_expression, Model>;
/// True when the target can draw exact posterior samples (reverse / BDMC runs).
template <class Model>
constexpr bool target_has_exact_sample = is_detected_v<detail::exact_sample_expression, Model>;

namespace detail {
template <class Model>
using exact_samples_query_expression = decltype(std::declval<const Model&>().has_exact_samples());
}  // namespace detail

/// Whether this target can start reverse runs: it has exact_sample, and has_exact_samples()
/// (when declared) says these arguments allow it.
template <class Model>
bool target_can_sample_exactly(const Model& model) {
  if constexpr (!target_has_exact_sample<Model>) {
    (void)model;
    return false;
  } else if constexpr (is_detected_v<detail::exact_samples_query_expression, Model>) {
    return model.has_exact_samples();
  } else {
    (void)model;
    return true;
  }
}

/// Number of problems of a target: num_problems() for batches, else 1.
template <class Model>
int problem_count(const Model& model) {
  if constexpr (target_has_problems<Model>) {
    return model.num_problems();
  } else {
    (void)model;
    return 1;
  }
}

/// The density model of problem p: model.problem(p) for batches, else the model itself.
template <class Model>
MYRIAD_HD decltype(auto) problem_target(const Model& model, int p) {
  if constexpr (target_has_problems<Model>) {
    return model.problem(p);
  } else {
    (void)p;
    return (model);
  }
}

/// Coordinate names: the target's recorded-quantity names when it names one per coordinate,
/// else x[0], x[1], …
template <class Target>
std::vector<std::string> coordinate_names(const Target& target) {
  const int dim = parameter_count(target);
  if constexpr (model_has_quantities<Target>) {
    if (recorded_quantity_count(target) == dim) return recorded_quantity_names(target);
  }
  std::vector<std::string> names;
  for (int i = 0; i < dim; ++i) names.push_back("x[" + std::to_string(i) + "]");
  return names;
}

}  // namespace myriad
