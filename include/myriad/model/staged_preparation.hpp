#pragma once
// A cached estimator's preparation (model/estimator.hpp) stated as stages between dense
// n × n factorisations and products, so that a GPU can run each of those across all chains at
// once (cuSOLVER's potrfBatched and cuBLAS's gemmStridedBatched: the library tier of
// linalg/batched_cholesky.hpp) while the CPU runs them inside the chain. The model offers
//
//   MYRIAD_HD int preparation_matrix_size() const;                 // n
//   template <class X>
//   MYRIAD_HD PreparationStep begin_preparation(const X& x, T* cache, T* workspace) const;
//   MYRIAD_HD PreparationStep continue_preparation(T* cache, T* workspace, int info) const;
//
// begin_preparation does the per-chain work up to the first dense operation and names it;
// continue_preparation (with the Cholesky's LAPACK info, 0 after a product) does the work up to
// the next, until a step says done. Every matrix a step names is n × n, column-major with leading
// dimension n, at an offset into the chain's cache or workspace:
//
//   factor  a ← L with L Lᵀ = A, the lower triangle of A in place (its upper triangle is not read;
//           the library tier may overwrite it)
//   gram    b ← aᵀ a for a lower-triangular a whose strict upper triangle is zero (b's lower
//           triangle is what continue_preparation may read; the library tier writes all of b)
//
// prepare_in_chain below runs the stages serially (the CPU, and any per-chain caller): a model's
// prepare_estimate is that call, so the batched path and the serial path share every line of the
// model's own code.

#include <cstdint>
#include <utility>

#include "myriad/core/hd.hpp"
#include "myriad/detail/detection.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"

namespace myriad {

enum class PreparationKind : std::int32_t { done = 0, factor = 1, gram = 2 };

/// An n × n matrix of a chain's preparation storage: its cache or its workspace, at an offset.
struct PreparationMatrix {
  bool in_workspace = false;
  std::int64_t offset = 0;

  template <class T>
  MYRIAD_HD T* in(T* cache, T* workspace) const {
    return (in_workspace ? workspace : cache) + offset;
  }
};

/// What the driver does next for a chain.
struct PreparationStep {
  PreparationKind kind = PreparationKind::done;
  PreparationMatrix a, b;  ///< factor: a; gram: b ← aᵀ a

  MYRIAD_HD static PreparationStep finished() { return {}; }
  MYRIAD_HD static PreparationStep factor(PreparationMatrix a) {
    return {PreparationKind::factor, a, {}};
  }
  MYRIAD_HD static PreparationStep gram(PreparationMatrix a, PreparationMatrix b) {
    return {PreparationKind::gram, a, b};
  }
};

namespace detail {
template <class Model>
using staged_preparation_expression =
    decltype(std::declval<const Model&>().preparation_matrix_size(),
             std::declval<const Model&>().continue_preparation(
                 std::declval<typename Model::value_type*>(),
                 std::declval<typename Model::value_type*>(), 0));
}  // namespace detail

/// True when the model states its preparation in stages (file comment).
template <class Model>
constexpr bool model_has_staged_preparation =
    is_detected_v<detail::staged_preparation_expression, Model>;

/// The lower triangle of b = aᵀ a for a lower-triangular n × n a (column-major, leading dimension
/// n): b_ij = Σ_{k ≥ i} a_ki a_kj for i ≥ j, dot products down contiguous columns. The strict
/// upper triangles of a and b are neither read nor written.
template <class T>
MYRIAD_HD void lower_gram(const T* a, T* b, int n) {
  for (int j = 0; j < n; ++j) {
    for (int i = j; i < n; ++i) {
      T sum = T(0);
      for (int k = i; k < n; ++k)
        sum += a[k + static_cast<std::int64_t>(i) * n] * a[k + static_cast<std::int64_t>(j) * n];
      b[i + static_cast<std::int64_t>(j) * n] = sum;
    }
  }
}

/// Carries out one dense step inside the chain. Returns the Cholesky's info (0 for gram).
template <class T>
MYRIAD_HD int run_preparation_step(const PreparationStep& step, T* cache, T* workspace, int n) {
  if (step.kind == PreparationKind::factor)
    return linalg::cholesky_in_place_info(MatrixView<T>{step.a.in(cache, workspace), n, n, 1, n});
  if (step.kind == PreparationKind::gram)
    lower_gram(step.a.in(cache, workspace), step.b.in(cache, workspace), n);
  return 0;
}

/// The rest of a preparation begun with `step`, serially in the chain.
template <class Model>
MYRIAD_HD void finish_preparation_in_chain(const Model& model, PreparationStep step,
                                           typename Model::value_type* cache,
                                           typename Model::value_type* workspace) {
  const int n = model.preparation_matrix_size();
  while (step.kind != PreparationKind::done) {
    const int info = run_preparation_step(step, cache, workspace, n);
    step = model.continue_preparation(cache, workspace, info);
  }
}

/// The whole preparation of x into `cache`, serially in the chain.
template <class Model, class X>
MYRIAD_HD void prepare_in_chain(const Model& model, const X& x, typename Model::value_type* cache,
                                typename Model::value_type* workspace) {
  finish_preparation_in_chain(model, model.begin_preparation(x, cache, workspace), cache,
                              workspace);
}

}  // namespace myriad
