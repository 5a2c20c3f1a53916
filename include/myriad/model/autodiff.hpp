#pragma once
// Derivatives of model code by forward-mode dual numbers (core/dual.hpp).
//
// A gradient in D dimensions takes D evaluations of log_density with a single seeded tangent;
// the seeded input is a lazy view, so no scratch memory is needed and the same code runs in a
// GPU thread. Models with many dimensions should supply log_density_gradient (model/concept.hpp).

#include <type_traits>
#include <utility>

#include "myriad/core/dual.hpp"
#include "myriad/core/hd.hpp"

namespace myriad {

/// Element type of an indexable vector view.
template <class Vec>
using element_t = std::decay_t<decltype(std::declval<const Vec&>()[0])>;

/// x lifted to duals with tangent 1 in coordinate `seed` and 0 elsewhere, computed on access.
template <class Vec>
struct SeededDualView {
  using T = element_t<Vec>;
  const Vec& x;
  int seed;
  MYRIAD_HD Dual<T> operator[](int i) const { return Dual<T>(x[i], i == seed ? T(1) : T(0)); }
};

/// A dual view seeded in two coordinates at two nesting levels: the outer tangent marks
/// coordinate `outer`, the inner one `inner`; f(view).eps.eps is ∂²f/∂x_outer∂x_inner.
template <class Vec>
struct SeededNestedDualView {
  using T = element_t<Vec>;
  const Vec& x;
  int outer;
  int inner;
  MYRIAD_HD Dual<Dual<T>> operator[](int i) const {
    return Dual<Dual<T>>(Dual<T>(x[i], i == inner ? T(1) : T(0)),
                         Dual<T>(i == outer ? T(1) : T(0), T(0)));
  }
};

/// log p(x) and its gradient by D forward-mode passes; returns log p(x).
template <class Model, class Vec, class Grad>
MYRIAD_HD auto gradient_by_duals(const Model& model, const Vec& x, Grad& grad, int dim) {
  using T = element_t<Vec>;
  T value = T(0);
  for (int k = 0; k < dim; ++k) {
    const Dual<T> f = model.log_density(SeededDualView<Vec>{x, k});
    grad[k] = f.eps;
    value = f.val;
  }
  if (dim == 0) value = model.log_density(x);
  return value;
}

/// Hessian entry ∂² log p / ∂x_i ∂x_j by nested duals.
template <class Model, class Vec>
MYRIAD_HD auto hessian_entry_by_duals(const Model& model, const Vec& x, int i, int j) {
  return model.log_density(SeededNestedDualView<Vec>{x, i, j}).eps.eps;
}

}  // namespace myriad
