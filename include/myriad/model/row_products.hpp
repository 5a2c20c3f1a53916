#pragma once
// Products of the rows of a row-major data matrix with a chain's parameter vector, as the
// built-in models' log densities take them (logistic's Xβ, product_of_experts' and mcrbm's
// filter outputs Φ_l x, linear_regression's and linear_generative's residuals y − Xθ). Generic
// over the parameters' scalar, duals included; the data's element type T is converted to it
// term by term, and every sum runs in index order, so each model keeps its arithmetic.

#include <cstdint>
#include <type_traits>

#include "myriad/core/hd.hpp"

namespace myriad {

/// Σ_j row_j v_j over j = 0 … n−1: the product of one matrix row with v.
template <class T, class Vec>
MYRIAD_HD auto row_dot(const T* row, const Vec& v, int n) {
  using S = std::decay_t<decltype(v[0])>;
  S sum = S(0);
  for (int j = 0; j < n; ++j) sum += S(row[j]) * v[j];
  return sum;
}

/// Σ_i r_i² with r_i = y_i − Σ_j X_ij θ_j (subtracted term by term, in order), for X row-major
/// rows × cols: the residual sum of squares of a linear model.
template <class T, class Vec>
MYRIAD_HD auto residual_sum_of_squares(const T* matrix, const T* y, const Vec& theta, int rows,
                                       int cols) {
  using S = std::decay_t<decltype(theta[0])>;
  S sum_sq = S(0);
  for (int i = 0; i < rows; ++i) {
    const T* row = matrix + static_cast<std::int64_t>(i) * cols;
    S r = S(y[i]);
    for (int j = 0; j < cols; ++j) r -= S(row[j]) * theta[j];
    sum_sq += r * r;
  }
  return sum_sq;
}

}  // namespace myriad
