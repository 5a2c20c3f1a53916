#pragma once
// The density-model concept (DESIGN.md, "Models").
//
// A model is a small trivially copyable struct usable in device code. It provides
//
//   MYRIAD_HD int dim() const;                               // number of unconstrained parameters
//   template <class Vec> MYRIAD_HD auto log_density(const Vec& x) const;
//
// where Vec is any indexable view (ChainVector, DenseVector, a pointer, the dual views of
// model/autodiff.hpp) and the result's type is the element type of Vec. log_density is the
// unnormalised log density of the unconstrained parameters, Jacobian terms included.
//
// Optional members, detected at compile time:
//
//   using value_type = T;                                           // precision (default double)
//   template <class Vec, class Grad>
//   MYRIAD_HD T log_density_gradient(const Vec& x, Grad& g) const;   // returns log p, writes ∇
//     (or element_t<Vec> in place of T: written over the element type S, branch-free, it also
//      runs W chains at once in SIMD lanes on the CPU: model_gradient_in_lanes below)
//   MYRIAD_HD int num_quantities() const;                           // recorded quantities
//   template <class Vec, class Out> MYRIAD_HD void quantities(const Vec& x, Out& out) const;
//   std::string quantity_name(int i) const;                         // host only
//   template <class Vec>
//   MYRIAD_HD bool initial_point(const RandomStream& rng, std::uint32_t attempt,
//                                std::int64_t chain, Vec& x) const;   // or without `chain`
//
// Without the gradient member, derivatives come from vector-mode forward duals
// (model/autodiff.hpp: gradient_by_forward_mode; a model may state `static constexpr int
// dual_chunk`, the tangents per pass); without quantities,
// the recorded quantities are the parameters themselves, named x[0], x[1], ...; without
// initial_point, chains start uniformly in [−2, 2]^D (Stan's default). initial_point writes the
// attempt-th try of a chain's start from its own stream (Purpose::initial_point), false to try
// again; the sampler still requires a finite log density and gradient there. `chain` is the
// index of the chain whose stream rng is: the chain itself, or the first chain of its superchain
// when a superchain's chains share their start (SampleConfig::superchains).

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/detection.hpp"
#include "myriad/model/autodiff.hpp"
#include "myriad/model/returns_element_type.hpp"

namespace myriad {

namespace detail {
struct ProbeVector {
  double* p;
  MYRIAD_HD double& operator[](int i) const { return p[i]; }
};

template <class Model>
using gradient_expression = decltype(std::declval<const Model&>().log_density_gradient(
    std::declval<const ProbeVector&>(), std::declval<ProbeVector&>()));

template <class Model>
using quantities_expression = decltype(std::declval<const Model&>().num_quantities());
}  // namespace detail

/// True when the model supplies its own gradient.
template <class Model>
constexpr bool model_has_gradient = is_detected_v<detail::gradient_expression, Model>;

namespace detail {
template <class Model, class S>
using lane_gradient_expression = decltype(std::declval<const Model&>().log_density_gradient(
    std::declval<const ChainVector<S>&>(), std::declval<ChainVector<S>&>()));
}  // namespace detail

/// True when the model's gradient is written over the element type of its vectors, i.e. declares
/// element_t<Vec> (core/lanes.hpp) as its return type, as the built-in models do: then S may be a
/// SIMD batch of chains and the CPU backend runs the model in lanes (detail/hmc_lane_blocks.hpp).
/// Read from the declaration alone, without instantiating the body; a gradient declared to
/// return T (the scalar type) runs one chain at a time. A body so declared must be branch-free
/// in S: a value-dependent branch is a LaneOps<S>::select (core/lanes.hpp).
template <class Model, class S>
constexpr bool model_gradient_in_lanes =
    detail::returns_element_type<detail::lane_gradient_expression, Model, S>::value;

/// True when the model names its own recorded quantities.
template <class Model>
constexpr bool model_has_quantities = is_detected_v<detail::quantities_expression, Model>;

namespace detail {
template <class Model>
using initial_point_expression = decltype(std::declval<const Model&>().initial_point(
    std::declval<const RandomStream&>(), std::uint32_t{}, std::declval<ProbeVector&>()));
template <class Model>
using chain_initial_point_expression = decltype(std::declval<const Model&>().initial_point(
    std::declval<const RandomStream&>(), std::uint32_t{}, std::int64_t{},
    std::declval<ProbeVector&>()));
}  // namespace detail

/// True when the model's initial_point takes the chain index.
template <class Model>
constexpr bool model_has_chain_initial_point =
    is_detected_v<detail::chain_initial_point_expression, Model>;

/// True when the model chooses where its chains start (either form of initial_point).
template <class Model>
constexpr bool model_has_initial_point =
    model_has_chain_initial_point<Model> || is_detected_v<detail::initial_point_expression, Model>;

namespace detail {
template <class Model>
using dim_expression = decltype(std::declval<const Model&>().dim());
}  // namespace detail

/// The number of parameters of a density model (dim()) or of inputs of a generator
/// (input_dim(), model/generator.hpp).
template <class Model>
MYRIAD_HD int parameter_count(const Model& model) {
  if constexpr (is_detected_v<detail::dim_expression, Model>) {
    return model.dim();
  } else {
    return model.input_dim();
  }
}

/// log p(x) and ∇ log p(x): the model's own gradient when it has one, else vector-mode forward
/// duals (gradient_by_forward_mode, model/autodiff.hpp).
template <class Model, class Vec, class Grad>
MYRIAD_HD auto log_density_and_gradient(const Model& model, const Vec& x, Grad& grad) {
  if constexpr (model_has_gradient<Model>) {
    return model.log_density_gradient(x, grad);
  } else {
    return gradient_by_forward_mode(model, x, grad, model.dim());
  }
}

/// Number of quantities recorded per draw.
template <class Model>
MYRIAD_HD int recorded_quantity_count(const Model& model) {
  if constexpr (model_has_quantities<Model>) {
    return model.num_quantities();
  } else {
    return parameter_count(model);
  }
}

/// Writes the recorded quantities of position x into out[0 .. num_quantities).
template <class Model, class Vec, class Out>
MYRIAD_HD void record_quantities(const Model& model, const Vec& x, Out& out) {
  if constexpr (model_has_quantities<Model>) {
    model.quantities(x, out);
  } else {
    for (int i = 0; i < parameter_count(model); ++i) out[i] = x[i];
  }
}

/// Name of recorded quantity i (host only): the model's own name, else x[i] for a density
/// model's parameters and u[i] for a generator's inputs (the notation of the docs, where x is a
/// generator's output: constrained-hmc.md).
template <class Model>
std::string recorded_quantity_name(const Model& model, int i) {
  if constexpr (model_has_quantities<Model>) {
    return model.quantity_name(i);
  } else if constexpr (is_detected_v<detail::dim_expression, Model>) {
    return "x[" + std::to_string(i) + "]";
  } else {
    return "u[" + std::to_string(i) + "]";
  }
}

/// Names of all recorded quantities (host only).
template <class Model>
std::vector<std::string> recorded_quantity_names(const Model& model) {
  std::vector<std::string> names;
  for (int i = 0; i < recorded_quantity_count(model); ++i)
    names.push_back(recorded_quantity_name(model, i));
  return names;
}

}  // namespace myriad
