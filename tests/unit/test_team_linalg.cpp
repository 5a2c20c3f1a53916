// The team forms of the per-chain linear algebra (linalg/team_ops.hpp) against the one-lane
// functions, with the lanes as host threads (tests/common/thread_team.hpp): bitwise equal
// results for every size and lane count (team_dot to rounding), the same failure column of a
// matrix that is not positive definite, and matrices in a chain workspace with a stride (the
// GPU's [element][chain] layout) as well as dense ones. Lane counts cover one lane, lanes that
// divide nothing, a warp, and more lanes than rows.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/same_bits.hpp"
#include "common/thread_team.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/dense_ops.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/team_ops.hpp"
#include "myriad/linalg/triangular.hpp"

namespace myriad {
namespace {

using testing::run_team;
using testing::same_bits;
using testing::ThreadTeam;

constexpr int kLaneCounts[] = {1, 3, 32, 45};

/// Storage for one chain's workspace inside an [element][chain] array of `chains` chains (the
/// GPU layout: element e of this chain at e · chains), filled with NaN.
struct StridedWorkspace {
  StridedWorkspace(std::int64_t elements, std::int64_t chains)
      : storage(static_cast<std::size_t>(elements * chains), std::nan("")), chains(chains) {}
  ChainWorkspace<double> workspace() { return {storage.data() + 1, chains}; }  // chain 1
  std::vector<double> storage;
  std::int64_t chains;
};

/// A random M × N matrix in `ws` at offset 0, entries N(0, 1) from a seeded stream.
MatrixView<double> random_matrix(const ChainWorkspace<double>& ws, int m, int n,
                                 std::uint64_t seed) {
  MatrixView<double> a = ws.matrix(0, m, n);
  const RandomStream rng(seed, 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      a(i, j) = rng.normal<double>(0, Purpose::user, static_cast<std::uint32_t>(i * n + j));
  return a;
}

void expect_same_matrix(MatrixView<double> expected, MatrixView<double> actual, bool lower_only,
                        const std::string& what) {
  int mismatches = 0;
  for (int i = 0; i < expected.rows; ++i)
    for (int j = 0; j < (lower_only ? i + 1 : expected.cols); ++j)
      if (!same_bits(expected(i, j), actual(i, j)) && mismatches++ < 3)
        ADD_FAILURE() << what << ": (" << i << ", " << j << ") " << actual(i, j) << " vs "
                      << expected(i, j);
  EXPECT_EQ(mismatches, 0) << what;
}

template <class Vec>
void expect_same_vector(const Vec& expected, const Vec& actual, int n, const std::string& what) {
  int mismatches = 0;
  for (int i = 0; i < n; ++i)
    if (!same_bits(expected[i], actual[i]) && mismatches++ < 3)
      ADD_FAILURE() << what << ": [" << i << "] " << actual[i] << " vs " << expected[i];
  EXPECT_EQ(mismatches, 0) << what;
}

// J (M × N), G = J Jᵀ, its factor, the solves G⁻¹ b in two steps, J x and Jᵀ w: every team
// result has the one-lane bits.
TEST(TeamLinalg, EveryOperationHasTheOneLaneBits) {
  for (const int m : {1, 7, 33, 70}) {
    const int n = m + 5;
    const std::int64_t elements = static_cast<std::int64_t>(m) * n + 2 * m * m + 2 * n + 2 * m;
    // One lane (reference) and the team, each in a strided workspace of its own.
    StridedWorkspace one_storage(elements, 3);
    const ChainWorkspace<double> one = one_storage.workspace();
    const MatrixView<double> j1 = random_matrix(one, m, n, 11 + m);
    const MatrixView<double> g1 = one.matrix(static_cast<std::int64_t>(m) * n, m, m);
    linalg::gram_lower(j1.as_const(), g1);
    const MatrixView<double> l1 = one.matrix(static_cast<std::int64_t>(m) * n + m * m, m, m);
    for (int i = 0; i < m; ++i)
      for (int k = 0; k <= i; ++k) l1(i, k) = g1(i, k);
    ASSERT_TRUE(linalg::cholesky_in_place(l1)) << m;
    const std::int64_t vectors = static_cast<std::int64_t>(m) * n + 2 * m * m;
    ChainVector<double> x1 = one.vector(vectors, n), y1 = one.vector(vectors + n, m);
    ChainVector<double> z1 = one.vector(vectors + n + m, n),
                        b1 = one.vector(vectors + 2 * n + m, m);
    for (int c = 0; c < n; ++c) x1[c] = std::sin(1.0 + c);
    linalg::multiply(j1.as_const(), x1, y1);
    linalg::multiply_transpose(j1.as_const(), y1, z1);
    for (int i = 0; i < m; ++i) b1[i] = y1[i];
    linalg::solve_lower(l1.as_const(), b1);
    std::vector<double> after_forward(m);
    for (int i = 0; i < m; ++i) after_forward[i] = b1[i];
    linalg::solve_lower_transpose(l1.as_const(), b1);
    const double dot1 = linalg::dot(x1, x1, n);

    for (const int lanes : kLaneCounts) {
      const std::string what = "M = " + std::to_string(m) + ", " + std::to_string(lanes) + " lanes";
      StridedWorkspace team_storage(elements, 3);
      const ChainWorkspace<double> ws = team_storage.workspace();
      const MatrixView<double> j = random_matrix(ws, m, n, 11 + m);
      const MatrixView<double> g = ws.matrix(static_cast<std::int64_t>(m) * n, m, m);
      const MatrixView<double> l = ws.matrix(static_cast<std::int64_t>(m) * n + m * m, m, m);
      ChainVector<double> x = ws.vector(vectors, n), y = ws.vector(vectors + n, m);
      ChainVector<double> z = ws.vector(vectors + n + m, n), b = ws.vector(vectors + 2 * n + m, m);
      for (int c = 0; c < n; ++c) x[c] = std::sin(1.0 + c);
      std::vector<int> info(lanes, -1);
      std::vector<double> dots(lanes);
      std::vector<double> forward(m);
      run_team(lanes, [&](const ThreadTeam& team) {
        linalg::team_gram_lower(team, j.as_const(), g);
        for (int t = team.rank(); t < m * m; t += team.size()) {
          const int row = t / m, col = t % m;
          if (col <= row) l(row, col) = g(row, col);
        }
        info[team.rank()] = linalg::team_cholesky_in_place_info(team, l);
        linalg::team_multiply(team, j.as_const(), x, y);
        linalg::team_multiply_transpose(team, j.as_const(), y, z);
        for (int i = team.rank(); i < m; i += team.size()) b[i] = y[i];
        linalg::team_solve_lower(team, l.as_const(), b);
        if (team.rank() == 0)
          for (int i = 0; i < m; ++i) forward[i] = b[i];
        linalg::team_solve_lower_transpose(team, l.as_const(), b);
        dots[team.rank()] = linalg::team_dot(team, x, x, n);
      });
      for (int lane = 0; lane < lanes; ++lane) {
        EXPECT_EQ(info[lane], 0) << what << ", lane " << lane;
        EXPECT_TRUE(same_bits(dots[lane], dots[0])) << what << ", lane " << lane;
      }
      expect_same_matrix(g1, g, true, what + ": J Jᵀ");
      expect_same_matrix(l1, l, true, what + ": L");
      expect_same_vector(y1, y, m, what + ": J x");
      expect_same_vector(z1, z, n, what + ": Jᵀ w");
      expect_same_vector(after_forward, forward, m, what + ": L⁻¹ b");
      expect_same_vector(b1, b, m, what + ": L⁻ᵀ L⁻¹ b");
      EXPECT_NEAR(dots[0], dot1, 1e-13 * dot1) << what;
      // The strict upper triangles were never written, nor anything past the last vector.
      for (int i = 0; i < m; ++i)
        for (int k = i + 1; k < m; ++k) {
          EXPECT_TRUE(std::isnan(g(i, k))) << what << ": G upper (" << i << ", " << k << ")";
          EXPECT_TRUE(std::isnan(l(i, k))) << what << ": L upper (" << i << ", " << k << ")";
        }
    }
  }
}

// A symmetric matrix that stops being positive definite at column 6 (1-based): the team reports
// the same column and leaves the earlier columns as the one-lane factor does.
TEST(TeamLinalg, CholeskyFailsAtTheSameColumn) {
  const int m = 9;
  std::vector<double> a(m * m, 0.0);
  for (int i = 0; i < m; ++i) {
    for (int k = 0; k < m; ++k) a[i * m + k] = 0.3 / (1.0 + std::abs(i - k));
    a[i * m + i] = i == 5 ? -1.0 : 2.0;
  }
  std::vector<double> one = a;
  const int expected = linalg::cholesky_in_place_info(dense_matrix(one.data(), m, m));
  ASSERT_EQ(expected, 6);
  for (const int lanes : kLaneCounts) {
    std::vector<double> teamed = a;
    std::vector<int> info(lanes);
    run_team(lanes, [&](const ThreadTeam& team) {
      info[team.rank()] =
          linalg::team_cholesky_in_place_info(team, dense_matrix(teamed.data(), m, m));
    });
    for (int lane = 0; lane < lanes; ++lane) EXPECT_EQ(info[lane], expected) << lanes << " lanes";
    for (int i = 0; i < m; ++i)
      for (int k = 0; k < expected - 1 && k <= i; ++k)
        EXPECT_TRUE(same_bits(one[i * m + k], teamed[i * m + k]))
            << lanes << " lanes: (" << i << ", " << k << ")";
  }
}

}  // namespace
}  // namespace myriad
