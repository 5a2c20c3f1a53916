// The constrained-HMC linear algebra over SIMD lanes (core/lanes.hpp): W matrices or vectors at
// once, one per lane of an xsimd batch, against the one-lane code on each lane's own data. This
// translation unit is compiled for the baseline instruction set, where neither side contracts
// a·b + c into an FMA, so every lane must equal its one-lane result bit for bit.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "myriad/detail/simd_lanes.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/dense_ops.hpp"
#include "myriad/linalg/matrix_view.hpp"

namespace myriad {
namespace {

using Batch = xsimd::batch<double>;
constexpr int W = static_cast<int>(Batch::size);

/// A random SPD matrix B Bᵀ + n I (n × n, row-major), B with N(0, 1) entries.
std::vector<double> spd(int n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<double> b(n * n), a(n * n, 0.0);
  for (double& x : b) x = normal(rng);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) a[i * n + j] += b[i * n + k] * b[j * n + k];
      if (i == j) a[i * n + j] += n;
    }
  return a;
}

/// Lane l's matrices interleaved: entry (i, j) of every lane in one batch.
std::vector<Batch> interleave(const std::vector<std::vector<double>>& lanes, int size) {
  std::vector<Batch> out(size);
  alignas(64) double values[W];
  for (int e = 0; e < size; ++e) {
    for (int l = 0; l < W; ++l) values[l] = lanes[l][e];
    out[e] = Batch::load_aligned(values);
  }
  return out;
}

double lane_of(const Batch& b, int l) {
  alignas(64) double values[W];
  b.store_aligned(values);
  return values[l];
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(LinalgLanes, CholeskyEqualsTheOneLaneFactorOnEveryLaneAndFlagsFailedLanes) {
  std::mt19937_64 rng(7);
  for (int n : {1, 2, 5, 9, 16, 33}) {
    for (int failing = -1; failing < W; ++failing) {  // -1: no lane fails
      std::vector<std::vector<double>> lanes;
      for (int l = 0; l < W; ++l) {
        std::vector<double> a = spd(n, rng);
        // Lane `failing` gets an indefinite matrix (a negative pivot at column n/2), or a NaN.
        if (l == failing) {
          if (l % 2 == 0) {
            a[(n / 2) * n + n / 2] = -1.0;
          } else {
            a[(n - 1) * n + (n - 1)] = std::numeric_limits<double>::quiet_NaN();
          }
        }
        lanes.push_back(a);
      }
      std::vector<Batch> group = interleave(lanes, n * n);
      const auto failed = linalg::cholesky_in_place_lanes(dense_matrix(group.data(), n, n));
      for (int l = 0; l < W; ++l) {
        std::vector<double> one = lanes[l];
        const int info = linalg::cholesky_in_place_info(dense_matrix(one.data(), n, n));
        EXPECT_EQ(LaneOps<Batch>::flag(failed, l), info != 0)
            << "n " << n << ", lane " << l << ", failing lane " << failing;
        EXPECT_EQ(info != 0, l == failing) << "the test's own matrices";
        if (info != 0) continue;  // a failed factor is meaningless on either side
        for (int i = 0; i < n; ++i)
          for (int j = 0; j <= i; ++j)
            ASSERT_TRUE(same_bits(lane_of(group[i * n + j], l), one[i * n + j]))
                << "n " << n << ", lane " << l << ", L(" << i << ", " << j
                << ") = " << lane_of(group[i * n + j], l) << " against " << one[i * n + j];
      }
    }
  }
}

TEST(LinalgLanes, MaxAbsIsEachLanesNormWithItsNaNRule) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0.0, 10.0);
  const int n = 11;
  std::vector<std::vector<double>> lanes(W, std::vector<double>(n));
  for (auto& v : lanes)
    for (double& x : v) x = normal(rng);
  lanes[0][4] = std::numeric_limits<double>::quiet_NaN();  // a NaN anywhere: the norm is NaN
  lanes[W - 1][n - 1] = -1e300;
  const std::vector<Batch> group = interleave(lanes, n);
  const Batch norm = linalg::max_abs(group, n);
  for (int l = 0; l < W; ++l) {
    const double one = linalg::max_abs(lanes[l], n);
    EXPECT_TRUE(same_bits(lane_of(norm, l), one) ||
                (std::isnan(one) && std::isnan(lane_of(norm, l))))
        << "lane " << l << ": " << lane_of(norm, l) << " against " << one;
  }
  EXPECT_TRUE(std::isnan(lane_of(norm, 0)));
  EXPECT_EQ(lane_of(norm, W - 1), 1e300);
}

}  // namespace
}  // namespace myriad
