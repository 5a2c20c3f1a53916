#pragma once
// Evaluating a density model with a team of lanes (core/team.hpp): what the warp-per-particle
// kernels call where one-lane code calls log_density_and_gradient and log_density
// (model/concept.hpp).
//
// A model may cooperate. Optional members, detected at compile time (the model must then also
// declare `using value_type = T`):
//
//   // Called by every lane of the team with the same x (readable by every lane). Every lane
//   // returns log p(x); ∇ log p(x) goes into grad, each element written by some lane.
//   // `scratch` holds team_scratch_size() values private to this particle, shared by its lanes.
//   template <class Team, class Vec, class Grad>
//   MYRIAD_HD T log_density_gradient(const Team& team, const Vec& x, Grad& grad, T* scratch) const;
//   MYRIAD_HD int team_scratch_size() const;   // default 0
//
// A model without them is evaluated by lane 0 alone and the value broadcast, which is correct
// but gains nothing from the team. The dispatchers fence the evaluation with team barriers on
// both sides (x may have been written by any lane; grad and the scratch are read by any lane
// afterwards). With SerialTeam they are exactly the one-lane functions.

#include <type_traits>
#include <utility>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/team.hpp"
#include "myriad/detail/detection.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

namespace detail {
template <class Model>
using team_gradient_expression = decltype(std::declval<const Model&>().log_density_gradient(
    std::declval<const SerialTeam&>(),
    std::declval<const DenseVector<typename Model::value_type>&>(),
    std::declval<DenseVector<typename Model::value_type>&>(),
    std::declval<typename Model::value_type*>()));

template <class Model>
using team_scratch_size_expression = decltype(std::declval<const Model&>().team_scratch_size());
}  // namespace detail

/// True when the model evaluates its gradient cooperatively (the file comment's members).
template <class Model>
constexpr bool model_has_team_gradient = is_detected_v<detail::team_gradient_expression, Model>;

/// Scratch values per particle that the model's team gradient needs (0 without one).
template <class Model>
MYRIAD_HD int team_scratch_size(const Model& model) {
  if constexpr (model_has_team_gradient<Model> &&
                is_detected_v<detail::team_scratch_size_expression, Model>) {
    return model.team_scratch_size();
  } else {
    (void)model;
    return 0;
  }
}

/// log p(x) and ∇ log p(x) by the team: the model's cooperative member, or lane 0 alone
/// (on_lane_zero). With one lane, the one-lane function.
template <class Team, class Model, class Vec, class Grad, class T>
MYRIAD_HD auto team_log_density_and_gradient(const Team& team, const Model& model, const Vec& x,
                                             Grad& grad, T* scratch) {
  if constexpr (!Team::kSerial && model_has_team_gradient<Model>) {
    team.sync();
    const auto value = model.log_density_gradient(team, x, grad, scratch);
    team.sync();
    return value;
  } else {
    (void)scratch;
    return on_lane_zero(team, [&] { return log_density_and_gradient(model, x, grad); });
  }
}

/// log p(x) by the team: lane 0 evaluates, every lane gets the value.
template <class Team, class Model, class Vec>
MYRIAD_HD auto team_log_density(const Team& team, const Model& model, const Vec& x) {
  return on_lane_zero(team, [&] { return model.log_density(x); });
}

}  // namespace myriad
