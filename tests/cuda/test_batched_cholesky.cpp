// The CUDA tiers of the batched Cholesky factorisation and solves (linalg/batched_cholesky.hpp)
// against the CPU twin and against cuSOLVER/cuBLAS (the library tier), in float and double,
// through the host API. Skipped when no CUDA device is present.
//
// Tolerances (u the unit roundoff, γ_k = k u / (1 − k u); Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed.):
//  - every tier's factor is checked on its own against the componentwise backward-error bound
//    |A − L Lᵀ| ≤ γ_{n+2} |L||Lᵀ| (Theorem 10.3, plus one rounding for 1/l_jj), evaluated in
//    long double — it holds for any order of the inner products, so for all tiers alike;
//  - two backward-stable factors of A differ by at most √2 κ₂(A) ‖L‖₂ ‖ΔA‖_F / ‖A‖₂ to first
//    order (Sun 1991; Higham eq. 10.11) with ‖ΔA‖_F ≤ γ_{n+2} ‖L‖_F² = γ_{n+2} tr(A). The test
//    matrices have λ_min ≥ 1/2 by construction, so κ₂(A) ≤ 2 ‖A‖₂ and
//    ‖L_a − L_b‖_F ≤ 2√2 √‖A‖₂ γ_{n+2} tr(A) ≤ 2√2 √‖A‖_F γ_{n+2} tr(A);
//  - solves: residuals |L x − b| ≤ γ_n |L||x| (Theorem 8.5), |b − L Lᵀ x| ≤ γ_{2n+1} |L||Lᵀ||x|;
//    two full solves differ by ‖Δx‖/‖x‖ ≤ 2 κ₂(A) γ_{3n+2} ‖|L||Lᵀ|‖₂ / ‖A‖₂ ≤ 4 γ_{3n+2} tr(A)
//    (Theorem 10.4, κ₂(A) ≤ 2‖A‖₂, ‖|L||Lᵀ|‖₂ ≤ ‖L‖_F²); two triangular solves by
//    ‖Δx‖/‖x‖ ≤ 2 κ₂(L) γ_n √n ≤ 2 √(2 ‖A‖_F n) γ_n.
// The worst ratio of observed error to bound per case is printed.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/spd_batch.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/device_memory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/linalg/batched_cholesky.hpp"

namespace myriad::linalg {
namespace {

using Real = long double;
using Precisions = ::testing::Types<float, double>;
constexpr CholeskyTier kTiers[] = {CholeskyTier::registers, CholeskyTier::thread,
                                   CholeskyTier::tile, CholeskyTier::library};

template <class T>
Real gamma(int k) {
  const Real ku = k * static_cast<Real>(std::numeric_limits<T>::epsilon()) / 2;
  return ku / (1 - ku);
}

using testing::kUpperSentinel;
using testing::make_normal_vector;
using testing::make_spd_batch;

template <class T>
std::vector<T> factor_on_device(const std::vector<T>& host, int n, std::int64_t batch,
                                CholeskyTier tier, std::vector<int>& info) {
  DeviceArray<T> matrices(host);
  DeviceArray<int> device_info(static_cast<std::size_t>(batch));
  batched_cholesky_cuda(matrices.data(), n, batch, device_info.data(), tier);
  info = device_info.download();
  return matrices.download();
}

/// max over the lower triangle of |A − L Lᵀ|_ij / (γ_{n+2} (|L||Lᵀ|)_ij).
template <class T>
Real backward_error_ratio(const T* a, const T* l, int n) {
  Real worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      Real s = 0, abs_s = 0;
      for (int k = 0; k <= j; ++k) {
        const Real p = static_cast<Real>(l[i + k * n]) * l[j + k * n];
        s += p;
        abs_s += std::fabs(p);
      }
      const Real r = std::fabs(static_cast<Real>(a[i + j * n]) - s);
      if (r > 0) worst = std::max(worst, r / (gamma<T>(n + 2) * abs_s));
    }
  return worst;
}

/// tr(A) and ‖A‖_F of the symmetric matrix whose lower triangle `a` holds.
template <class T>
void trace_and_frobenius(const T* a, int n, Real& trace, Real& frobenius) {
  trace = 0;
  Real f2 = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const Real v = a[i + j * n];
      if (i == j) trace += v;
      f2 += (i == j ? 1 : 2) * v * v;
    }
  frobenius = std::sqrt(f2);
}

/// ‖L_a − L_b‖_F over the lower triangle, divided by 2√2 √‖A‖_F γ_{n+2} tr(A).
template <class T>
Real agreement_ratio(const T* a, const T* la, const T* lb, int n) {
  Real trace, frobenius, d2 = 0;
  trace_and_frobenius(a, n, trace, frobenius);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const Real d = static_cast<Real>(la[i + j * n]) - lb[i + j * n];
      d2 += d * d;
    }
  return std::sqrt(d2) / (2 * std::sqrt(2 * frobenius) * gamma<T>(n + 2) * trace);
}

template <class T>
class CudaBatchedCholesky : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_device_available()) {
      GTEST_SKIP() << "no CUDA device: the batched Cholesky tiers are not run";
    }
  }
};
TYPED_TEST_SUITE(CudaBatchedCholesky, Precisions);

TYPED_TEST(CudaBatchedCholesky, EveryTierAgreesWithTheCpuTwinAndCusolver) {
  using T = TypeParam;
  for (int n : {2, 3, 8, 12, 16, 33, 64, 128, 256}) {
    const std::int64_t batch = n <= 64 ? 77 : 33;  // not multiples of 32
    const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
    const std::vector<T> input = make_spd_batch<T>(n, batch, 300 + n, false);
    std::vector<T> cpu = input;
    std::vector<int> cpu_info(static_cast<std::size_t>(batch));
    batched_cholesky_cpu(cpu.data(), n, batch, cpu_info.data());
    std::vector<int> library_info;
    const std::vector<T> library =
        factor_on_device(input, n, batch, CholeskyTier::library, library_info);
    for (CholeskyTier tier : kTiers) {
      if (n > batched_cholesky_max_size<T>(tier)) continue;
      std::vector<int> info;
      const std::vector<T> l =
          tier == CholeskyTier::library ? library : factor_on_device(input, n, batch, tier, info);
      if (tier == CholeskyTier::library) info = library_info;
      Real backward = 0, vs_cpu = 0, vs_library = 0;
      for (std::int64_t b = 0; b < batch; ++b) {
        ASSERT_EQ(info[b], 0) << to_string(tier) << " n = " << n << " matrix " << b;
        const T* a = input.data() + b * n2;
        backward = std::max(backward, backward_error_ratio(a, l.data() + b * n2, n));
        vs_cpu = std::max(vs_cpu, agreement_ratio(a, l.data() + b * n2, cpu.data() + b * n2, n));
        vs_library =
            std::max(vs_library, agreement_ratio(a, l.data() + b * n2, library.data() + b * n2, n));
        // cuSOLVER may use the upper triangle as workspace (the header's layout note).
        for (int j = 0; j < n && tier != CholeskyTier::library; ++j)
          for (int i = 0; i < j; ++i)
            ASSERT_EQ(l[b * n2 + i + j * n], T(kUpperSentinel))
                << to_string(tier) << " wrote the strict upper triangle, n = " << n;
      }
      EXPECT_LE(backward, 1) << to_string(tier) << " n = " << n;
      EXPECT_LE(vs_cpu, 1) << to_string(tier) << " n = " << n;
      EXPECT_LE(vs_library, 1) << to_string(tier) << " n = " << n;
      std::printf(
          "[ observed ] %-9s %s n=%3d batch=%2lld: backward error/bound %.3Lf, |L-L_cpu|/bound "
          "%.2Lg, |L-L_cusolver|/bound %.2Lg\n",
          to_string(tier), sizeof(T) == 4 ? "float " : "double", n, static_cast<long long>(batch),
          backward, vs_cpu, vs_library);
    }
  }
}

TYPED_TEST(CudaBatchedCholesky, InfoFlagsMatchOnIndefiniteInputs) {
  using T = TypeParam;
  for (int n : {2, 3, 8, 12, 16, 33, 64, 128}) {
    const std::int64_t batch = 45;
    const std::vector<T> input = make_spd_batch<T>(n, batch, 400 + n, true);
    std::vector<T> cpu = input;
    std::vector<int> cpu_info(static_cast<std::size_t>(batch));
    batched_cholesky_cpu(cpu.data(), n, batch, cpu_info.data());
    for (std::int64_t b = 0; b < batch; ++b)
      ASSERT_EQ(cpu_info[b], b % 5 == 3 ? b % n + 1 : 0) << "cpu n = " << n << " matrix " << b;
    for (CholeskyTier tier : kTiers) {
      if (n > batched_cholesky_max_size<T>(tier)) continue;
      std::vector<int> info;
      factor_on_device(input, n, batch, tier, info);
      EXPECT_EQ(info, cpu_info) << to_string(tier) << " n = " << n;
    }
  }
}

TYPED_TEST(CudaBatchedCholesky, NonFinitePivotsAreFlaggedByTheRegistersThreadAndTileTiers) {
  using T = TypeParam;
  const int n = 8;
  const std::int64_t batch = 3;
  std::vector<T> input = make_spd_batch<T>(n, batch, 9, false);
  const std::int64_t n2 = n * n;
  input[1 * n2 + 5 + 2 * n] = std::numeric_limits<T>::quiet_NaN();  // a_52 of matrix 1
  input[2 * n2 + 6 + 6 * n] = std::numeric_limits<T>::infinity();   // a_66 of matrix 2
  const std::vector<int> expected = {0, 6, 7};
  for (CholeskyTier tier : {CholeskyTier::registers, CholeskyTier::thread, CholeskyTier::tile}) {
    std::vector<int> info;
    factor_on_device(input, n, batch, tier, info);
    EXPECT_EQ(info, expected) << to_string(tier);
  }
}

TYPED_TEST(CudaBatchedCholesky, SolvesAgreeWithTheCpuTwin) {
  using T = TypeParam;
  for (int n : {2, 3, 8, 12, 16, 33, 64, 128, 256}) {
    const std::int64_t batch = n <= 64 ? 77 : 33;
    const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
    const std::vector<T> input = make_spd_batch<T>(n, batch, 500 + n, false);
    std::vector<T> factors = input;
    std::vector<int> info(static_cast<std::size_t>(batch));
    batched_cholesky_cpu(factors.data(), n, batch, info.data());
    const std::vector<T> rhs = make_normal_vector<T>(n * batch, 600 + n);
    const DeviceArray<T> device_factors(factors);
    for (CholeskySolve which :
         {CholeskySolve::full, CholeskySolve::forward, CholeskySolve::backward}) {
      std::vector<T> cpu = rhs;
      batched_cholesky_solve_cpu(factors.data(), n, batch, cpu.data(), which);
      for (CholeskyTier tier : kTiers) {
        DeviceArray<T> device_rhs(rhs);
        try {
          batched_cholesky_solve_cuda(device_factors.data(), n, batch, device_rhs.data(), tier,
                                      nullptr, which);
        } catch (const invalid_argument&) {
          continue;  // a size beyond the tier (thread tier, large n)
        }
        const std::vector<T> x = device_rhs.download();
        Real residual = 0, agreement = 0;
        for (std::int64_t b = 0; b < batch; ++b) {
          const T* l = factors.data() + b * n2;
          const T* xb = x.data() + b * n;
          // Residual of the solve against its own bound.
          for (int i = 0; i < n; ++i) {
            Real r = rhs[b * n + i], bound = 0;
            for (int j = 0; j < n; ++j) {
              Real m = 0, abs_m = 0;  // (L), (Lᵀ) or (L Lᵀ) entry (i, j) and its |·| form
              if (which == CholeskySolve::forward) {
                m = j <= i ? static_cast<Real>(l[i + j * n]) : 0;
                abs_m = std::fabs(m);
              } else if (which == CholeskySolve::backward) {
                m = j >= i ? static_cast<Real>(l[j + i * n]) : 0;
                abs_m = std::fabs(m);
              } else {
                for (int k = 0; k <= std::min(i, j); ++k) {
                  const Real p = static_cast<Real>(l[i + k * n]) * l[j + k * n];
                  m += p;
                  abs_m += std::fabs(p);
                }
              }
              r -= m * xb[j];
              bound += abs_m * std::fabs(static_cast<Real>(xb[j]));
            }
            const Real g = which == CholeskySolve::full ? gamma<T>(2 * n + 1) : gamma<T>(n);
            if (r != 0) residual = std::max(residual, std::fabs(r) / (g * bound));
          }
          // Agreement with the CPU twin.
          Real trace, frobenius, d2 = 0, x2 = 0;
          trace_and_frobenius(input.data() + b * n2, n, trace, frobenius);
          for (int i = 0; i < n; ++i) {
            const Real d = static_cast<Real>(xb[i]) - cpu[b * n + i];
            d2 += d * d;
            x2 += static_cast<Real>(cpu[b * n + i]) * cpu[b * n + i];
          }
          const Real tolerance = which == CholeskySolve::full
                                     ? 4 * gamma<T>(3 * n + 2) * trace
                                     : 2 * std::sqrt(2 * frobenius * n) * gamma<T>(n);
          agreement = std::max(agreement, std::sqrt(d2 / x2) / tolerance);
        }
        const char* what = which == CholeskySolve::full
                               ? "full"
                               : (which == CholeskySolve::forward ? "forward" : "backward");
        EXPECT_LE(residual, 1) << to_string(tier) << " " << what << " n = " << n;
        EXPECT_LE(agreement, 1) << to_string(tier) << " " << what << " n = " << n;
        std::printf(
            "[ observed ] solve %-8s %-9s %s n=%3d: residual/bound %.3Lf, |x-x_cpu|/bound "
            "%.2Lg\n",
            what, to_string(tier), sizeof(T) == 4 ? "float " : "double", n, residual, agreement);
      }
    }
  }
}

TYPED_TEST(CudaBatchedCholesky, LargeBatchCrossesGridStrideAndLibraryChunks) {
  using T = TypeParam;
  // 2^20 + 37 matrices: more than one grid-stride pass of every kernel and more than one
  // 2^20-matrix chunk of the library tier's pointer arrays.
  const int n = 3;
  const std::int64_t batch = (std::int64_t{1} << 20) + 37;
  const std::vector<T> input = make_spd_batch<T>(n, batch, 77, true);
  std::vector<T> cpu = input;
  std::vector<int> cpu_info(static_cast<std::size_t>(batch));
  batched_cholesky_cpu(cpu.data(), n, batch, cpu_info.data());
  for (CholeskyTier tier : kTiers) {
    std::vector<int> info;
    const std::vector<T> l = factor_on_device(input, n, batch, tier, info);
    EXPECT_EQ(info, cpu_info) << to_string(tier);
    Real worst = 0;
    for (std::int64_t b = 0; b < batch; ++b) {
      if (cpu_info[b] != 0) continue;
      worst = std::max(
          worst, agreement_ratio(input.data() + b * 9, l.data() + b * 9, cpu.data() + b * 9, n));
    }
    EXPECT_LE(worst, 1) << to_string(tier);
  }
}

TYPED_TEST(CudaBatchedCholesky, RejectsSizesBeyondTheTierNamingTheLimit) {
  using T = TypeParam;
  DeviceArray<T> matrices(4);
  DeviceArray<int> info(1);
  for (CholeskyTier tier : {CholeskyTier::registers, CholeskyTier::thread, CholeskyTier::tile}) {
    const int max_n = batched_cholesky_max_size<T>(tier);
    EXPECT_GE(max_n,
              tier == CholeskyTier::registers ? 12 : (tier == CholeskyTier::thread ? 16 : 64))
        << to_string(tier);
    try {
      batched_cholesky_cuda(matrices.data(), max_n + 1, 1, info.data(), tier);
      ADD_FAILURE() << to_string(tier) << " accepted n = " << max_n + 1;
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(max_n)), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(batched_cholesky_cuda(matrices.data(), 0, 1, info.data(), CholeskyTier::library),
               invalid_argument);
  EXPECT_NO_THROW(batched_cholesky_cuda<T>(nullptr, 2, 0, nullptr, CholeskyTier::tile));
}

}  // namespace
}  // namespace myriad::linalg
