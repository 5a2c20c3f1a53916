#pragma once
// Host-side random matrices for built-in models whose parameters are drawn from a seed (the
// annealing targets of hais.md §9 and the Boltzmann relaxation of thesis-methods.md §9.6).
// Every draw comes from Philox (core/random.hpp) in double, so every machine sees the same
// parameters for a given seed.

#include <cmath>
#include <cstdint>
#include <vector>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"

namespace myriad::models {

/// rows × cols standard normals, row-major: row i is the normal sequence of
/// RandomStream(seed, i) at iteration 0 with tag `purpose`.
inline std::vector<double> normal_matrix(int rows, int cols, std::uint64_t seed,
                                         std::uint32_t purpose) {
  MYRIAD_EXPECTS(rows >= 1 && cols >= 1, "normal_matrix: sizes must be positive, got ", rows, " x ",
                 cols);
  std::vector<double> a(static_cast<std::size_t>(rows) * cols);
  for (int i = 0; i < rows; ++i) {
    DenseVector<double> row{a.data() + static_cast<std::size_t>(i) * cols, cols};
    RandomStream(seed, static_cast<std::uint64_t>(i))
        .fill_normal<double>(0, static_cast<Purpose>(purpose), row, cols);
  }
  return a;
}

/// A Haar-distributed n × n orthogonal matrix, row-major: the Q of the QR factorisation of a
/// standard-normal matrix with R's diagonal positive, the convention that makes Q exactly Haar
/// (Mezzadri 2007, "How to generate random matrices from the classical compact groups", §5).
/// Gram–Schmidt on the columns yields that convention; each column is orthogonalised twice
/// ("twice is enough", Giraud et al. 2005), which keeps QᵀQ = I to rounding.
inline std::vector<double> haar_orthogonal(int n, std::uint64_t seed, std::uint32_t purpose) {
  std::vector<double> q = normal_matrix(n, n, seed, purpose);
  auto at = [&](int i, int j) -> double& { return q[static_cast<std::size_t>(i) * n + j]; };
  for (int j = 0; j < n; ++j) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int k = 0; k < j; ++k) {
        double dot = 0.0;
        for (int i = 0; i < n; ++i) dot += at(i, k) * at(i, j);
        for (int i = 0; i < n; ++i) at(i, j) -= dot * at(i, k);
      }
      double norm = 0.0;
      for (int i = 0; i < n; ++i) norm += at(i, j) * at(i, j);
      norm = std::sqrt(norm);
      MYRIAD_EXPECTS(norm > 0.0, "haar_orthogonal: degenerate normal matrix");
      for (int i = 0; i < n; ++i) at(i, j) /= norm;
    }
  }
  return q;
}

}  // namespace myriad::models
