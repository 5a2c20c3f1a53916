#pragma once
// Cholesky with diagonal pivoting of a symmetric positive semi-definite matrix (Higham,
// "Accuracy and Stability of Numerical Algorithms", 2nd ed., §10.3): A = Π L Lᵀ Πᵀ with L
// n × r lower trapezoidal and r the numerical rank, the factorisation stopping when the largest
// remaining diagonal of the Schur complement falls to `tolerance` × the largest diagonal of A.
// Host code, for the low-rank factors of model set-up (the SDP relaxation of a Boltzmann machine,
// models/boltzmann_relaxation.hpp); the per-chain factorisations are linalg/cholesky.hpp's.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"

namespace myriad::linalg {

struct PivotedCholesky {
  std::vector<int> order;      ///< Π: row k of L belongs to row order[k] of A
  std::vector<double> factor;  ///< L, n × rank row-major, L_kj = 0 for j > k
  int rank = 0;
  double residual = 0;  ///< max |A − Π L Lᵀ Πᵀ| over the entries, the factorisation's error

  /// L Lᵀ, n × n row-major in the pivoted order: entry (i, j) approximates A[order[i]][order[j]].
  std::vector<double> gram() const {
    const int n = static_cast<int>(order.size());
    std::vector<double> g(static_cast<std::size_t>(n) * n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int m = 0; m < std::min({i + 1, j + 1, rank}); ++m)
          sum += factor[static_cast<std::size_t>(i) * rank + m] *
                 factor[static_cast<std::size_t>(j) * rank + m];
        g[static_cast<std::size_t>(i) * n + j] = sum;
      }
    return g;
  }
};

/// Factors `a` (n × n row-major, symmetric). Throws myriad::invalid_argument when the residual
/// exceeds `tolerance` × the largest diagonal entry: `a` is not positive semi-definite (or not
/// symmetric) to that tolerance.
inline PivotedCholesky pivoted_cholesky(const std::vector<double>& a, int n, double tolerance) {
  MYRIAD_EXPECTS(n >= 1 && a.size() == static_cast<std::size_t>(n) * n,
                 "pivoted_cholesky: expected an n x n matrix, n >= 1");
  MYRIAD_EXPECTS(std::isfinite(tolerance) && tolerance > 0,
                 "pivoted_cholesky: tolerance must be positive, got ", tolerance);
  const auto at = [n](const std::vector<double>& m, int i, int j) -> double {
    return m[static_cast<std::size_t>(i) * n + j];
  };
  std::vector<int> order(static_cast<std::size_t>(n));
  std::vector<double> diagonal(static_cast<std::size_t>(n));
  double scale = 0;
  for (int i = 0; i < n; ++i) {
    order[i] = i;
    diagonal[i] = at(a, i, i);
    scale = std::max(scale, std::fabs(diagonal[i]));
  }
  const double threshold = tolerance * std::max(scale, 1e-300);
  std::vector<double> l(static_cast<std::size_t>(n) * n,
                        0.0);  // n × n, the first `rank` columns used
  int rank = 0;
  for (int k = 0; k < n; ++k) {
    const int pivot =
        static_cast<int>(std::max_element(diagonal.begin() + k, diagonal.end()) - diagonal.begin());
    if (!(diagonal[pivot] > threshold)) break;
    std::swap(order[k], order[pivot]);
    std::swap(diagonal[k], diagonal[pivot]);
    for (int j = 0; j < k; ++j)
      std::swap(l[static_cast<std::size_t>(k) * n + j], l[static_cast<std::size_t>(pivot) * n + j]);
    const double lkk = std::sqrt(diagonal[k]);
    l[static_cast<std::size_t>(k) * n + k] = lkk;
    for (int i = k + 1; i < n; ++i) {
      double sum = at(a, order[i], order[k]);
      for (int j = 0; j < k; ++j)
        sum -= l[static_cast<std::size_t>(i) * n + j] * l[static_cast<std::size_t>(k) * n + j];
      const double lik = sum / lkk;
      l[static_cast<std::size_t>(i) * n + k] = lik;
      diagonal[i] -= lik * lik;
    }
    rank = k + 1;
  }
  PivotedCholesky out;
  out.order = order;
  out.rank = rank;
  out.factor.assign(static_cast<std::size_t>(n) * rank, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < std::min(i + 1, rank); ++j)
      out.factor[static_cast<std::size_t>(i) * rank + j] = l[static_cast<std::size_t>(i) * n + j];
  const std::vector<double> product = out.gram();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      out.residual = std::max(
          out.residual,
          std::fabs(at(a, order[i], order[j]) - product[static_cast<std::size_t>(i) * n + j]));
  MYRIAD_EXPECTS(out.residual <= tolerance * std::max(scale, 1e-300) * n,
                 "pivoted_cholesky: the matrix is not positive semi-definite (residual ",
                 out.residual, " after rank ", rank, ")");
  return out;
}

}  // namespace myriad::linalg
