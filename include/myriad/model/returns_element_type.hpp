#pragma once
// Whether a model member is written over the element type of its vectors: called on vectors of
// S, it is declared to return S (element_t<Vec>, core/lanes.hpp) rather than the model's scalar
// type, so that S may be a SIMD batch of W chains (model_gradient_in_lanes, model/concept.hpp;
// generator_in_lanes, model/generator.hpp). Read from the declaration alone, without
// instantiating the body.

#include <type_traits>

namespace myriad::detail {

/// std::true_type when Call<Model, S> (the type of a member's call on vectors of S) is S; false
/// when it is another type or the call is ill-formed.
template <template <class...> class Call, class Model, class S, class = void>
struct returns_element_type : std::false_type {};
template <template <class...> class Call, class Model, class S>
struct returns_element_type<Call, Model, S, std::void_t<Call<Model, S>>>
    : std::is_same<Call<Model, S>, S> {};

}  // namespace myriad::detail
