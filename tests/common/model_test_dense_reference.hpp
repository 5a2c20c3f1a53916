#pragma once
// Small dense linear algebra on the host, written out plainly so that tests can compute the
// reference values of a model (a determinant, a covariance) independently of the library's
// factorisations: log|det A| by LU and A⁻¹ by Gauss–Jordan, both with partial pivoting. Used by
// tests/unit/models/test_product_of_experts.cpp and tests/stat/test_auxiliary_samplers.cpp.

#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace myriad::testing {

/// log|det A| of an n × n row-major matrix by LU with partial pivoting.
inline double log_abs_det(std::vector<double> a, int n) {
  double log_det = 0.0;
  for (int k = 0; k < n; ++k) {
    int pivot = k;
    for (int i = k + 1; i < n; ++i) {
      if (std::fabs(a[i * n + k]) > std::fabs(a[pivot * n + k])) pivot = i;
    }
    for (int j = 0; j < n; ++j) std::swap(a[k * n + j], a[pivot * n + j]);
    log_det += std::log(std::fabs(a[k * n + k]));
    for (int i = k + 1; i < n; ++i) {
      const double factor = a[i * n + k] / a[k * n + k];
      for (int j = k; j < n; ++j) a[i * n + j] -= factor * a[k * n + j];
    }
  }
  return log_det;
}

/// A⁻¹ of an n × n row-major matrix by Gauss–Jordan elimination with partial pivoting.
inline std::vector<double> gauss_jordan_inverse(std::vector<double> a, int n) {
  std::vector<double> inv(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) inv[i * n + i] = 1.0;
  for (int k = 0; k < n; ++k) {
    int pivot = k;
    for (int i = k + 1; i < n; ++i) {
      if (std::fabs(a[i * n + k]) > std::fabs(a[pivot * n + k])) pivot = i;
    }
    for (int j = 0; j < n; ++j) {
      std::swap(a[k * n + j], a[pivot * n + j]);
      std::swap(inv[k * n + j], inv[pivot * n + j]);
    }
    const double diagonal = a[k * n + k];
    for (int j = 0; j < n; ++j) {
      a[k * n + j] /= diagonal;
      inv[k * n + j] /= diagonal;
    }
    for (int i = 0; i < n; ++i) {
      if (i == k) continue;
      const double factor = a[i * n + k];
      for (int j = 0; j < n; ++j) {
        a[i * n + j] -= factor * a[k * n + j];
        inv[i * n + j] -= factor * inv[k * n + j];
      }
    }
  }
  return inv;
}

}  // namespace myriad::testing
