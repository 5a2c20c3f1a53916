// The CPU twin of the batched Cholesky tiers (linalg/batched_cholesky.hpp): against the
// per-matrix routines on column-major views (bitwise: the twin runs the same code), LAPACK's info
// convention on indefinite members of a batch, the untouched strict upper triangle, the three
// solve variants, argument checks, and the CUDA entry points' unavailable_error where CUDA is
// absent (a CPU-only build, or no device). Also the registers tier's per-matrix body
// (linalg/fixed_cholesky.hpp) on the host at every size it is instantiated for, bitwise against
// the same per-matrix routines.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/spd_batch.hpp"
#include "myriad/backend/device.hpp"
#include "myriad/core/error.hpp"
#include "myriad/linalg/batched_cholesky.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/fixed_cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"

namespace myriad::linalg {
namespace {

using Precisions = ::testing::Types<float, double>;

using testing::kUpperSentinel;
using testing::make_normal_vector;
using testing::make_spd_batch;

template <class T>
class LinalgBatchedCholesky : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgBatchedCholesky, Precisions);

TYPED_TEST(LinalgBatchedCholesky, CpuTwinEqualsPerMatrixFactorisation) {
  using T = TypeParam;
  for (int n : {1, 2, 3, 8, 16, 33}) {
    const std::int64_t batch = 37;
    const std::vector<T> input = make_spd_batch<T>(n, batch, 10 + n, true);
    std::vector<T> twin = input;
    std::vector<int> info(static_cast<std::size_t>(batch), -1);
    batched_cholesky_cpu(twin.data(), n, batch, info.data());
    std::vector<T> single = input;
    const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
    for (std::int64_t b = 0; b < batch; ++b) {
      const MatrixView<T> a{single.data() + b * n2, n, n, 1, n};
      const int expected = cholesky_in_place_info(a);
      EXPECT_EQ(info[b], expected) << "n = " << n << ", matrix " << b;
      EXPECT_EQ(info[b], b % 5 == 3 ? b % n + 1 : 0) << "n = " << n << ", matrix " << b;
    }
    EXPECT_EQ(twin, single) << "n = " << n;
    for (std::int64_t b = 0; b < batch; ++b)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < j; ++i) ASSERT_EQ(twin[b * n2 + i + j * n], T(kUpperSentinel));
  }
}

TYPED_TEST(LinalgBatchedCholesky, CpuTwinSolvesEqualPerMatrixSolves) {
  using T = TypeParam;
  const int n = 12;
  const std::int64_t batch = 41, n2 = static_cast<std::int64_t>(n) * n;
  std::vector<T> factors = make_spd_batch<T>(n, batch, 5, false);
  std::vector<int> info(static_cast<std::size_t>(batch));
  batched_cholesky_cpu(factors.data(), n, batch, info.data());
  for (int s : info) ASSERT_EQ(s, 0);
  const std::vector<T> rhs = make_normal_vector<T>(n * batch, 6);
  for (CholeskySolve which :
       {CholeskySolve::full, CholeskySolve::forward, CholeskySolve::backward}) {
    std::vector<T> twin = rhs;
    batched_cholesky_solve_cpu(factors.data(), n, batch, twin.data(), which);
    for (std::int64_t b = 0; b < batch; ++b) {
      const MatrixView<const T> l{factors.data() + b * n2, n, n, 1, n};
      std::vector<T> x(rhs.begin() + b * n, rhs.begin() + (b + 1) * n);
      if (which != CholeskySolve::backward) solve_lower(l, x);
      if (which != CholeskySolve::forward) solve_lower_transpose(l, x);
      for (int i = 0; i < n; ++i) EXPECT_EQ(twin[b * n + i], x[i]);
    }
  }
  // The full solve inverts A: |b − A x| ≤ γ_{3n+2} |L||Lᵀ||x| (Higham, Theorem 10.4).
  const std::vector<T> a = make_spd_batch<T>(n, batch, 5, false);
  std::vector<T> x = rhs;
  batched_cholesky_solve_cpu(factors.data(), n, batch, x.data());
  const double u = std::numeric_limits<T>::epsilon() / 2;
  const double gamma = (3 * n + 2) * u / (1 - (3 * n + 2) * u);
  for (std::int64_t b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i) {
      double r = rhs[b * n + i], bound = 0;
      for (int j = 0; j < n; ++j) {
        const double a_ij = i >= j ? a[b * n2 + i + j * n] : a[b * n2 + j + i * n];
        double abs_llt = 0;
        for (int k = 0; k <= std::min(i, j); ++k)
          abs_llt += std::fabs(static_cast<double>(factors[b * n2 + i + k * n]) *
                               factors[b * n2 + j + k * n]);
        r -= a_ij * x[b * n + j];
        bound += abs_llt * std::fabs(static_cast<double>(x[b * n + j]));
      }
      // The residual is evaluated in double: for T = double add its own rounding, γ_n |A||x|.
      EXPECT_LE(std::fabs(r), 2 * gamma * bound) << "matrix " << b << ", row " << i;
    }
}

/// Runs the registers tier's factor body, instantiated for N = n, on matrix b of a batch.
template <class T>
int fixed_factor(std::vector<T>& batch, int n, std::int64_t b) {
  int info = -1;
  const bool instantiated = with_fixed_cholesky_size<T>(n, [&](auto size) {
    info = fixed_cholesky_in_place<decltype(size)::value>(batch_matrix(batch.data(), n, b));
  });
  EXPECT_TRUE(instantiated) << "n = " << n;
  return info;
}

/// Bytes equal (NaN payloads included), where operator== would fail on any NaN.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TYPED_TEST(LinalgBatchedCholesky, RegistersTierBodyEqualsPerMatrixFactorisationAtEverySize) {
  using T = TypeParam;
  ASSERT_EQ(kFixedCholeskyMaxSize<T>, sizeof(T) == 4 ? 16 : 12);
  for (int n = 1; n <= kFixedCholeskyMaxSize<T>; ++n) {
    // 12 members: b = 3 and 8 are indefinite at column (b mod n) + 1, so failures (a partial
    // factor and the rest of the triangle as on entry) are compared too.
    const std::int64_t batch = 12;
    const std::vector<T> input = make_spd_batch<T>(n, batch, 900 + n, true);
    std::vector<T> fixed = input, single = input;
    for (std::int64_t b = 0; b < batch; ++b) {
      const int expected = cholesky_in_place_info(batch_matrix(single.data(), n, b));
      ASSERT_EQ(expected, b % 5 == 3 ? b % n + 1 : 0) << "n = " << n << ", matrix " << b;
      EXPECT_EQ(fixed_factor(fixed, n, b), expected) << "n = " << n << ", matrix " << b;
    }
    // Bitwise, the strict upper triangle's sentinels included (never read nor written).
    EXPECT_TRUE(same_bits(fixed, single)) << "n = " << n;
  }
}

TYPED_TEST(LinalgBatchedCholesky, RegistersTierBodyFlagsNonFinitePivotsAsThePerMatrixRoutine) {
  using T = TypeParam;
  const int n = 8;
  std::vector<T> input = make_spd_batch<T>(n, 3, 9, false);
  const std::int64_t n2 = n * n;
  input[1 * n2 + 5 + 2 * n] = std::numeric_limits<T>::quiet_NaN();  // a_52 of matrix 1
  input[2 * n2 + 6 + 6 * n] = std::numeric_limits<T>::infinity();   // a_66 of matrix 2
  std::vector<T> fixed = input, single = input;
  const int expected[] = {0, 6, 7};
  for (std::int64_t b = 0; b < 3; ++b) {
    EXPECT_EQ(cholesky_in_place_info(batch_matrix(single.data(), n, b)), expected[b]);
    EXPECT_EQ(fixed_factor(fixed, n, b), expected[b]) << "matrix " << b;
  }
  EXPECT_TRUE(same_bits(fixed, single));
}

TYPED_TEST(LinalgBatchedCholesky, RegistersTierSolvesEqualPerMatrixSolvesAtEverySize) {
  using T = TypeParam;
  for (int n = 1; n <= kFixedCholeskyMaxSize<T>; ++n) {
    const std::int64_t batch = 5;
    std::vector<T> factors = make_spd_batch<T>(n, batch, 40 + n, false);
    std::vector<int> info(static_cast<std::size_t>(batch));
    batched_cholesky_cpu(factors.data(), n, batch, info.data());
    const std::vector<T> rhs = make_normal_vector<T>(n * batch, 80 + n);
    for (CholeskySolve which :
         {CholeskySolve::full, CholeskySolve::forward, CholeskySolve::backward}) {
      std::vector<T> twin = rhs, fixed = rhs;
      batched_cholesky_solve_cpu(factors.data(), n, batch, twin.data(), which);
      for (std::int64_t b = 0; b < batch; ++b) {
        const MatrixView<const T> l = batch_matrix<const T>(factors.data(), n, b);
        with_fixed_cholesky_size<T>(n, [&](auto size) {
          fixed_cholesky_solve<decltype(size)::value, T>(l, fixed.data() + b * n, which);
        });
      }
      EXPECT_TRUE(same_bits(fixed, twin)) << "n = " << n << ", solve " << static_cast<int>(which);
    }
  }
}

TEST(LinalgFixedCholesky, SizeDispatchCoversExactlyTheInstantiatedSizes) {
  for (int n = -1; n <= kFixedCholeskyMaxSize<double> + 1; ++n) {
    int called_with = 0;
    const bool dispatched = with_fixed_cholesky_size<double>(
        n, [&](auto size) { called_with = decltype(size)::value; });
    const bool instantiated = n >= 1 && n <= kFixedCholeskyMaxSize<double>;
    EXPECT_EQ(dispatched, instantiated) << "n = " << n;
    EXPECT_EQ(called_with, instantiated ? n : 0) << "n = " << n;
  }
  EXPECT_TRUE(with_fixed_cholesky_size<float>(16, [](auto) {}));
  EXPECT_FALSE(with_fixed_cholesky_size<float>(17, [](auto) {}));
}

TEST(LinalgBatchedCholeskyArguments, RejectsBadSizesAndAcceptsAnEmptyBatch) {
  std::vector<double> a(4, 1.0);
  std::vector<int> info(1);
  EXPECT_THROW(batched_cholesky_cpu(a.data(), 0, 1, info.data()), invalid_argument);
  EXPECT_THROW(batched_cholesky_cpu(a.data(), 2, -1, info.data()), invalid_argument);
  EXPECT_THROW(batched_cholesky_cpu<double>(nullptr, 2, 1, info.data()), invalid_argument);
  EXPECT_THROW(batched_cholesky_cpu(a.data(), 2, 1, nullptr), invalid_argument);
  EXPECT_NO_THROW(batched_cholesky_cpu<double>(nullptr, 2, 0, nullptr));
  EXPECT_THROW(batched_cholesky_solve_cpu(a.data(), 2, 1, static_cast<double*>(nullptr)),
               invalid_argument);
  EXPECT_NO_THROW(batched_cholesky_solve_cpu<double>(nullptr, 2, 0, nullptr));
}

TEST(LinalgBatchedCholeskyArguments, TierNamesAreStable) {
  EXPECT_STREQ(to_string(CholeskyTier::registers), "registers");
  EXPECT_STREQ(to_string(CholeskyTier::thread), "thread");
  EXPECT_STREQ(to_string(CholeskyTier::tile), "tile");
  EXPECT_STREQ(to_string(CholeskyTier::library), "library");
}

TEST(LinalgBatchedCholesky, OnlyTheLibraryTierAllocatesPerCall) {
  EXPECT_EQ(batched_cholesky_call_bytes(CholeskyTier::registers, 1000), 0);
  EXPECT_EQ(batched_cholesky_call_bytes(CholeskyTier::thread, 1000), 0);
  EXPECT_EQ(batched_cholesky_call_bytes(CholeskyTier::tile, 1000), 0);
  EXPECT_EQ(batched_cholesky_call_bytes(CholeskyTier::library, 1000),
            2 * 1000 * static_cast<std::int64_t>(sizeof(void*)));
  EXPECT_EQ(batched_cholesky_call_bytes(CholeskyTier::library, 1000 * kLibraryCholeskyChunk),
            2 * kLibraryCholeskyChunk * static_cast<std::int64_t>(sizeof(void*)))
      << "the pointer arrays cover one chunk of the batch";
}

TEST(LinalgBatchedCholeskyUnavailable, CudaEntryPointsThrowWithoutCudaOrDevice) {
  if (cuda_device_available()) {
    GTEST_SKIP() << "a CUDA device is present; the CudaBatchedCholesky suite tests the tiers";
  }
  double a[4] = {1, 0, 0, 1};
  int info[1] = {0};
  for (CholeskyTier tier :
       {CholeskyTier::registers, CholeskyTier::thread, CholeskyTier::tile, CholeskyTier::library}) {
    EXPECT_THROW(batched_cholesky_cuda(a, 2, 1, info, tier), unavailable_error);
    EXPECT_THROW(batched_cholesky_solve_cuda<double>(a, 2, 1, a, tier), unavailable_error);
    EXPECT_THROW(batched_cholesky_max_size<float>(tier), unavailable_error);
    EXPECT_THROW(prepare_batched_cholesky_cuda(tier), unavailable_error);
  }
  try {
    batched_cholesky_cuda(a, 2, 1, info, CholeskyTier::tile);
  } catch (const unavailable_error& e) {
    EXPECT_NE(std::string(e.what()).find("batched_cholesky_cpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::linalg
