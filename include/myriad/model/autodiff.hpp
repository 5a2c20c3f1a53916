#pragma once
// Derivatives of model code by forward-mode dual numbers (core/dual.hpp, core/dual_vector.hpp).
//
// The gradient of a model without log_density_gradient (model/concept.hpp) comes from
// gradient_by_forward_mode: ⌈D/N⌉ evaluations of log_density over DualVector<T, N>, each with N
// seeded tangents (vector mode; N = kDualChunk, fewer for small D, or the model's own
// `static constexpr int dual_chunk`). gradient_by_duals, D evaluations with one tangent each,
// remains for second derivatives and the tests. The seeded inputs are lazy views, so no scratch
// memory is needed and the same code runs in a GPU thread. Models with many dimensions should
// supply log_density_gradient.

#include <type_traits>
#include <utility>

#include "myriad/core/dual.hpp"
#include "myriad/core/dual_vector.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/detail/detection.hpp"

namespace myriad {

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

/// x lifted to vector duals whose tangent k is 1 in coordinate first + k (k < N) and 0 elsewhere.
template <class Vec, int N>
struct SeededDualVectorView {
  using T = element_t<Vec>;
  const Vec& x;
  int first;
  MYRIAD_HD DualVector<T, N> operator[](int i) const {
    DualVector<T, N> v(x[i]);
    const int k = i - first;
    if (k >= 0 && k < N) v.eps[k] = T(1);
    return v;
  }
};

/// log p(x) and its gradient by ⌈dim/N⌉ vector-mode passes; returns log p(x).
template <int N, class Model, class Vec, class Grad>
MYRIAD_HD auto gradient_by_dual_vectors(const Model& model, const Vec& x, Grad& grad, int dim) {
  using T = element_t<Vec>;
  T value = T(0);
  for (int first = 0; first < dim; first += N) {
    const DualVector<T, N> f = model.log_density(SeededDualVectorView<Vec, N>{x, first});
    for (int k = 0; k < N && first + k < dim; ++k) grad[first + k] = f.eps[k];
    value = f.val;
  }
  if (dim == 0) value = model.log_density(x);
  return value;
}

/// Tangents per vector-mode pass by default: one pass up to 8 dimensions, ⌈D/8⌉ beyond (each
/// value then carries 9 numbers; ForwardDiff.jl's default chunk is at most 12 for the same
/// reason: registers and cache, not arithmetic, bound larger chunks).
constexpr int kDualChunk = 8;

namespace detail {
template <class Model>
using dual_chunk_expression = decltype(Model::dual_chunk);
}  // namespace detail

/// The model's gradient by forward-mode duals, the way log_density_and_gradient takes it: vector
/// mode with the model's dual_chunk tangents per pass when it states one (1: one scalar-dual pass
/// per dimension), else 4 tangents up to 4 dimensions (2 scalar passes up to 2) and kDualChunk
/// beyond.
template <class Model, class Vec, class Grad>
MYRIAD_HD auto gradient_by_forward_mode(const Model& model, const Vec& x, Grad& grad, int dim) {
  if constexpr (is_detected_v<detail::dual_chunk_expression, Model>) {
    constexpr int chunk = Model::dual_chunk;
    static_assert(chunk >= 1, "a model's dual_chunk must be at least 1");
    if constexpr (chunk == 1)
      return gradient_by_duals(model, x, grad, dim);
    else
      return gradient_by_dual_vectors<chunk>(model, x, grad, dim);
  } else {
    if (dim <= 2) return gradient_by_duals(model, x, grad, dim);
    if (dim <= 4) return gradient_by_dual_vectors<4>(model, x, grad, dim);
    return gradient_by_dual_vectors<kDualChunk>(model, x, grad, dim);
  }
}

/// Hessian entry ∂² log p / ∂x_i ∂x_j by nested duals.
template <class Model, class Vec>
MYRIAD_HD auto hessian_entry_by_duals(const Model& model, const Vec& x, int i, int j) {
  return model.log_density(SeededNestedDualView<Vec>{x, i, j}).eps.eps;
}

}  // namespace myriad
