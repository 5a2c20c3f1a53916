#pragma once
// The detection idiom (the Library Fundamentals TS's is_detected): whether an expression is
// well-formed for a type, which the model concepts use to find a model's optional members. Each
// optional member is one alias template naming the expression's type, e.g.
//
//   template <class Model>
//   using gradient_expression = decltype(std::declval<const Model&>().log_density_gradient(...));
//   template <class Model>
//   constexpr bool model_has_gradient = is_detected_v<gradient_expression, Model>;

#include <type_traits>

namespace myriad {

namespace detection {
template <class, template <class...> class Op, class... Args>
struct detector : std::false_type {};
template <template <class...> class Op, class... Args>
struct detector<std::void_t<Op<Args...>>, Op, Args...> : std::true_type {};
}  // namespace detection

/// std::true_type when Op<Args...> is a valid type, else std::false_type.
template <template <class...> class Op, class... Args>
using is_detected = typename detection::detector<void, Op, Args...>::type;

/// is_detected<Op, Args...>::value.
template <template <class...> class Op, class... Args>
constexpr bool is_detected_v = is_detected<Op, Args...>::value;

}  // namespace myriad
