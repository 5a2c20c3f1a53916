#pragma once
// Batches of symmetric positive-definite test matrices, and right-hand sides, for the batched
// Cholesky tiers (the CPU twin in tests/unit/test_batched_cholesky_cpu.cpp, the CUDA tiers in
// tests/cuda/test_batched_cholesky.cpp), so that both test the same matrices.

#include <cstdint>
#include <random>
#include <vector>

namespace myriad::testing {

/// Written into the strict upper triangle: it must be neither read nor written.
constexpr double kUpperSentinel = 7777;

/// `batch` column-major n × n matrices A_b = X Xᵀ / n + I / 2 (X standard normal, SPD with
/// λ_min ≥ 1/2), the strict upper triangle set to kUpperSentinel. With `with_indefinite`,
/// members with b % 5 == 3 are made indefinite at column (b mod n) + 1: a_kk − 11 a_kk turns that
/// pivot negative and leaves the leading minors before it alone.
template <class T>
std::vector<T> make_spd_batch(int n, std::int64_t batch, std::uint64_t seed, bool with_indefinite) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
  std::vector<T> out(static_cast<std::size_t>(n2 * batch));
  std::vector<double> x(static_cast<std::size_t>(n2));
  for (std::int64_t b = 0; b < batch; ++b) {
    for (double& v : x) v = normal(engine);
    T* a = out.data() + b * n2;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        if (i < j) {
          a[i + j * n] = T(kUpperSentinel);
          continue;
        }
        double s = i == j ? 0.5 : 0.0;
        for (int k = 0; k < n; ++k) s += x[i * n + k] * x[j * n + k] / n;
        a[i + j * n] = static_cast<T>(s);
      }
    if (with_indefinite && b % 5 == 3) {
      const int k = static_cast<int>(b % n);
      a[k + k * n] -= 11 * a[k + k * n];
    }
  }
  return out;
}

/// `count` standard normals from std::mt19937_64(seed), rounded to T: right-hand sides.
template <class T>
std::vector<T> make_normal_vector(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<T> out(static_cast<std::size_t>(count));
  for (T& v : out) v = static_cast<T>(normal(engine));
  return out;
}

}  // namespace myriad::testing
