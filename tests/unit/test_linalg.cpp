// Per-chain linear algebra (include/myriad/linalg): Cholesky, triangular solves, dense products
// and the structured Gram factorisations of constrained-hmc.md §10, in float and double.
//
// Tolerances come from rounding-error analysis, with u the unit roundoff of the precision under
// test and γ_k = k u / (1 − k u) (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.):
//  - Cholesky: L Lᵀ = A + ΔA, |ΔA| ≤ γ_{n+2} |L||Lᵀ| componentwise (Theorem 10.3, one more
//    rounding for multiplying by 1/l_jj); summed, ‖ΔA‖_F ≤ γ_{n+2} ‖L‖_F² (‖|L||Lᵀ|‖_F ≤ ‖L‖_F²).
//  - triangular solves: (L + ΔL) x = b, |ΔL| ≤ γ_n |L| (Theorem 8.5), so |L x − b| ≤ γ_n |L||x|.
//  - Cholesky solve: |b − A x| ≤ γ_{3n+2} |L||Lᵀ||x| (Theorem 10.4, plus the reciprocal).
//  - inner products of length n: |x̂ᵀy − xᵀy| ≤ γ_n |x|ᵀ|y| (eq. 3.5).
//  - structured Gram matrices, against a dense Cholesky of the explicitly formed G in long
//    double: a solve is backward stable with normwise backward error ≲ M u, so its forward error
//    is ‖Δx‖/‖x‖ ≤ c M κ₂(G) u (Theorem 7.2) with c = 4 for the composition of the Woodbury
//    steps; (G⁻¹)_mm = e_mᵀ G⁻¹ e_m inherits ‖G⁻¹e_m‖ ≤ ‖G⁻¹‖₂ times that; log|G| is the sum of
//    Σ log d_i² (or 2 Σ log T_ii), exact up to γ_{M+2} Σ(|log d_i²| + 1), and log|S|, whose
//    first-order perturbation |tr(S⁻¹ ΔS)| ≤ K κ₂(S) ‖ΔS‖₂/‖S‖₂ with ‖ΔS‖₂/‖S‖₂ ≤ K (γ_{M+3} +
//    γ_{K+2}) from forming S (inner products of length M) and factoring it. κ₂ is estimated with
//    power and inverse iteration in long double.
// References are computed in long double; the observed errors are printed next to the bounds.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "myriad/core/ensemble.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/dense_ops.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/structured_gram.hpp"
#include "myriad/linalg/triangular.hpp"

namespace myriad::linalg {
namespace {

using Real = long double;
using Precisions = ::testing::Types<float, double>;

template <class T>
constexpr Real unit_roundoff() {
  return static_cast<Real>(std::numeric_limits<T>::epsilon()) / 2;
}

template <class T>
Real gamma(int k) {
  const Real ku = k * unit_roundoff<T>();
  return ku / (1 - ku);
}

/// A row-major n × n matrix of long doubles.
struct RealMatrix {
  int rows = 0;
  int cols = 0;
  std::vector<Real> v;
  RealMatrix(int r, int c) : rows(r), cols(c), v(static_cast<std::size_t>(r) * c, 0) {}
  Real& operator()(int i, int j) { return v[static_cast<std::size_t>(i) * cols + j]; }
  Real operator()(int i, int j) const { return v[static_cast<std::size_t>(i) * cols + j]; }
};

std::vector<Real> normals(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<Real> out(count);
  for (auto& x : out) x = normal(engine);
  return out;
}

/// A = X Xᵀ / n + I / 2 rounded to T, with X standard normal: SPD with eigenvalues in about
/// [1/2, 4.5] (Marchenko–Pastur), so every test matrix is well conditioned.
template <class T>
std::vector<T> random_spd(int n, std::uint64_t seed) {
  const std::vector<Real> x = normals(static_cast<std::size_t>(n) * n, seed);
  std::vector<T> a(static_cast<std::size_t>(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      Real s = i == j ? Real(0.5) : Real(0);
      for (int k = 0; k < n; ++k) s += x[i * n + k] * x[j * n + k] / n;
      a[i * n + j] = a[j * n + i] = static_cast<T>(s);
    }
  return a;
}

/// max over (i, j ≤ i) of |A − L Lᵀ|_ij / (γ_{n+2} (|L||Lᵀ|)_ij) and ‖A − L Lᵀ‖_F /
/// (γ_{n+2} ‖L‖_F²): both ≤ 1 by Higham's Theorem 10.3. Also ‖A − L Lᵀ‖_F / (n u ‖A‖_F).
struct ReconstructionError {
  Real componentwise = 0;
  Real normwise = 0;
  Real relative_in_n_u = 0;
};

template <class T>
ReconstructionError reconstruction_error(const std::vector<T>& a, const std::vector<T>& l, int n) {
  ReconstructionError e;
  Real residual2 = 0, l2 = 0, a2 = 0;
  const Real g = gamma<T>(n + 2);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      Real llt = 0, abs_llt = 0;
      for (int k = 0; k <= j; ++k) {
        llt += static_cast<Real>(l[i * n + k]) * l[j * n + k];
        abs_llt += std::fabs(static_cast<Real>(l[i * n + k]) * l[j * n + k]);
      }
      const Real r = std::fabs(static_cast<Real>(a[i * n + j]) - llt);
      if (r > 0) e.componentwise = std::max(e.componentwise, r / (g * abs_llt));
      const Real weight = i == j ? 1 : 2;  // the strict upper triangle mirrors the lower
      residual2 += weight * r * r;
      a2 += weight * static_cast<Real>(a[i * n + j]) * a[i * n + j];
      l2 += static_cast<Real>(l[i * n + j]) * l[i * n + j];
    }
  e.normwise = std::sqrt(residual2) / (g * l2);
  e.relative_in_n_u = std::sqrt(residual2) / (n * unit_roundoff<T>() * std::sqrt(a2));
  return e;
}

template <class T>
class LinalgCholesky : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgCholesky, Precisions);

TYPED_TEST(LinalgCholesky, KnownFactors) {
  using T = TypeParam;
  // [[4, 2], [2, 3]] = L Lᵀ with L = [[2, 0], [1, √2]].
  std::vector<T> a2 = {4, 2, 2, 3};
  ASSERT_EQ(cholesky_in_place_info(dense_matrix(a2.data(), 2, 2)), 0);
  EXPECT_EQ(a2[0], T(2));
  EXPECT_EQ(a2[2], T(1));
  EXPECT_EQ(a2[3], std::sqrt(T(2)));
  // Golub & Van Loan's example: every quantity is an exactly representable integer.
  std::vector<T> a3 = {4, 12, -16, 12, 37, -43, -16, -43, 98};
  ASSERT_TRUE(cholesky_in_place(dense_matrix(a3.data(), 3, 3)));
  const std::vector<T> expected = {2, 12, -16, 6, 1, -43, -8, 5, 3};  // upper triangle untouched
  EXPECT_EQ(a3, expected);
  // |A| = (2 · 1 · 3)² = 36.
  EXPECT_NEAR(log_det_from_cholesky(dense_matrix(a3.data(), 3, 3)), std::log(T(36)),
              8 * std::numeric_limits<T>::epsilon() * std::log(T(36)));
  std::vector<T> one = {T(9)};
  ASSERT_TRUE(cholesky_in_place(dense_matrix(one.data(), 1, 1)));
  EXPECT_EQ(one[0], T(3));
}

TYPED_TEST(LinalgCholesky, ReconstructsRandomSpdWithinTheBackwardErrorBound) {
  using T = TypeParam;
  for (int n : {1, 2, 3, 5, 8, 16, 33, 64, 128}) {
    const std::vector<T> a = random_spd<T>(n, 100 + n);
    std::vector<T> l = a;
    ASSERT_EQ(cholesky_in_place_info(dense_matrix(l.data(), n, n)), 0) << "n = " << n;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) ASSERT_EQ(l[i * n + j], a[i * n + j]) << "upper touched";
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) l[i * n + j] = T(0);
    const ReconstructionError e = reconstruction_error(a, l, n);
    EXPECT_LE(e.componentwise, 1) << "n = " << n;
    EXPECT_LE(e.normwise, 1) << "n = " << n;
    EXPECT_LE(e.relative_in_n_u, 2) << "n = " << n;  // ‖ΔA‖_F ≤ 2 n u ‖A‖_F, observed ≪
    std::printf(
        "[ observed ] cholesky %s n=%3d: |dA|/(g|L||L^T|) %.3Lf, ||dA||_F/(n u ||A||_F) %.3Lf\n",
        sizeof(T) == 4 ? "float " : "double", n, e.componentwise, e.relative_in_n_u);
  }
}

TYPED_TEST(LinalgCholesky, RowAndColumnMajorViewsGiveIdenticalFactors) {
  using T = TypeParam;
  // The column-major view walks columns with axpys, the row-major view rows with inner
  // products; both subtract the same products in the same order.
  for (int n : {1, 2, 5, 17, 40}) {
    const std::vector<T> a = random_spd<T>(n, 60 + n);  // symmetric: its own transpose
    std::vector<T> row_major = a, column_major = a;
    ASSERT_TRUE(cholesky_in_place(dense_matrix(row_major.data(), n, n)));
    ASSERT_TRUE(cholesky_in_place(MatrixView<T>{column_major.data(), n, n, 1, n}));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j)
        ASSERT_EQ(row_major[i * n + j], column_major[i + j * n]) << n << ": " << i << "," << j;
  }
  // A failing column is left as on entry in both layouts.
  const int n = 6, bad = 3;
  std::vector<T> a = random_spd<T>(n, 7);
  a[bad * n + bad] -= 11 * a[bad * n + bad];
  std::vector<T> column_major = a;
  EXPECT_EQ(cholesky_in_place_info(MatrixView<T>{column_major.data(), n, n, 1, n}), bad + 1);
  for (int j = bad; j < n; ++j)
    for (int i = 0; i < n; ++i) EXPECT_EQ(column_major[i + j * n], a[i + j * n]);
}

TYPED_TEST(LinalgCholesky, FailsAtTheFirstNonPositivePivotWithoutTouchingLaterColumns) {
  using T = TypeParam;
  const int n = 6;
  for (int bad = 0; bad < n; ++bad) {
    std::vector<T> a = random_spd<T>(n, 7);
    // Leading minors of order ≤ bad are unchanged; the pivot of column bad + 1 is its old
    // (positive, ≤ a_kk) value minus 10 a_kk: clearly negative.
    a[bad * n + bad] -= 11 * a[bad * n + bad];
    std::vector<T> l = a;
    EXPECT_EQ(cholesky_in_place_info(dense_matrix(l.data(), n, n)), bad + 1);
    for (int i = 0; i < n; ++i)
      for (int j = bad; j < n; ++j) EXPECT_EQ(l[i * n + j], a[i * n + j]) << i << "," << j;
    // Columns before the failure hold the factor of the leading block.
    std::vector<T> good = random_spd<T>(n, 7);
    ASSERT_TRUE(cholesky_in_place(dense_matrix(good.data(), n, n)));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < std::min(bad, i + 1); ++j) EXPECT_EQ(l[i * n + j], good[i * n + j]);
  }
}

TYPED_TEST(LinalgCholesky, FailsOnSingularAndIndefiniteMatrices) {
  using T = TypeParam;
  std::vector<T> indefinite = {1, 2, 2, 1};  // eigenvalues 3 and −1
  EXPECT_EQ(cholesky_in_place_info(dense_matrix(indefinite.data(), 2, 2)), 2);
  std::vector<T> ones(16, T(1));  // rank 1: the second pivot is 1 − 1·1 = 0 exactly
  EXPECT_EQ(cholesky_in_place_info(dense_matrix(ones.data(), 4, 4)), 2);
  std::vector<T> zero(9, T(0));
  EXPECT_EQ(cholesky_in_place_info(dense_matrix(zero.data(), 3, 3)), 1);
  std::vector<T> negative = {T(-1)};
  EXPECT_FALSE(cholesky_in_place(dense_matrix(negative.data(), 1, 1)));
}

TYPED_TEST(LinalgCholesky, FailsOnNonFiniteEntries) {
  using T = TypeParam;
  const int n = 5;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  for (T bad_value : {nan, inf, -inf}) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        std::vector<T> a = random_spd<T>(n, 3);
        a[i * n + j] = bad_value;
        // A non-finite a_ij (j ≤ i) reaches the pivot of column i + 1 (through l_ij²) or, on
        // the diagonal, is that pivot.
        EXPECT_EQ(cholesky_in_place_info(dense_matrix(a.data(), n, n)), i + 1)
            << "entry (" << i << ", " << j << ") = " << bad_value;
      }
  }
}

TYPED_TEST(LinalgCholesky, LogDetIsTheLogOfTheProductOfSquaredPivots) {
  using T = TypeParam;
  for (int n : {1, 4, 16, 64}) {
    std::vector<T> l = random_spd<T>(n, 11 + n);
    ASSERT_TRUE(cholesky_in_place(dense_matrix(l.data(), n, n)));
    Real product = 1;  // eigenvalues in [1/2, 4.5]: no overflow in long double for n ≤ 64
    for (int i = 0; i < n; ++i) product *= static_cast<Real>(l[i * n + i]) * l[i * n + i];
    const Real expected = std::log(product);
    const T log_det = log_det_from_cholesky(dense_matrix(l.data(), n, n).as_const());
    // n logarithms, each within 1 ulp ≤ 2u of its value, summed (γ_{n−1}) and doubled (exact):
    // |error| ≤ γ_{n+2} Σ |2 log l_ii|.
    Real bound = std::numeric_limits<T>::min();
    for (int i = 0; i < n; ++i)
      bound += gamma<T>(n + 2) * 2 * std::fabs(std::log(static_cast<Real>(l[i * n + i])));
    EXPECT_LE(std::fabs(log_det - expected), bound) << "n = " << n;
  }
  // A diagonal matrix with det = 2^60 · 3^-20 in a form that overflows nowhere.
  std::vector<T> d(20 * 20, T(0));
  for (int i = 0; i < 20; ++i) d[i * 20 + i] = i % 2 == 0 ? T(64) : T(1) / T(9);
  ASSERT_TRUE(cholesky_in_place(dense_matrix(d.data(), 20, 20)));
  EXPECT_NEAR(log_det_from_cholesky(dense_matrix(d.data(), 20, 20)),
              60 * std::log(2.0) - 20 * std::log(3.0),
              static_cast<double>(gamma<T>(22) * (10 * std::log(64.0) + 10 * std::log(9.0))));
}

template <class T>
class LinalgTriangular : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgTriangular, Precisions);

template <class T>
std::vector<T> random_factor(int n, std::uint64_t seed) {
  std::vector<T> l = random_spd<T>(n, seed);
  EXPECT_TRUE(cholesky_in_place(dense_matrix(l.data(), n, n)));
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) l[i * n + j] = T(0);
  return l;
}

template <class T>
std::vector<T> random_vector(int n, std::uint64_t seed) {
  const std::vector<Real> x = normals(static_cast<std::size_t>(n), seed);
  return std::vector<T>(x.begin(), x.end());
}

/// max_i |(M x − b)_i| / (g (|M||x|)_i) for M = L (transpose = false) or Lᵀ.
template <class T>
Real solve_residual_ratio(const std::vector<T>& l, int n, const std::vector<T>& x,
                          const std::vector<T>& b, bool transpose, Real g) {
  Real worst = 0;
  for (int i = 0; i < n; ++i) {
    Real s = 0, abs_s = 0;
    for (int k = 0; k < n; ++k) {
      const Real m = transpose ? l[k * n + i] : l[i * n + k];
      s += m * x[k];
      abs_s += std::fabs(m * x[k]);
    }
    const Real r = std::fabs(s - static_cast<Real>(b[i]));
    if (r > 0) worst = std::max(worst, r / (g * abs_s));
  }
  return worst;
}

TYPED_TEST(LinalgTriangular, SolvesSatisfyTheBackwardErrorBound) {
  using T = TypeParam;
  for (int n : {1, 2, 7, 32, 100}) {
    const std::vector<T> l = random_factor<T>(n, 21 + n);
    const std::vector<T> b = random_vector<T>(n, 5 + n);
    const auto view = dense_matrix(l.data(), n, n).as_const();
    std::vector<T> x = b;
    solve_lower(view, x);
    EXPECT_LE(solve_residual_ratio(l, n, x, b, false, gamma<T>(n)), 1) << "n = " << n;
    x = b;
    solve_lower_transpose(view, x);
    EXPECT_LE(solve_residual_ratio(l, n, x, b, true, gamma<T>(n)), 1) << "n = " << n;
    // b − A x with A = L Lᵀ, against γ_{3n+2} |L||Lᵀ||x|.
    x = b;
    cholesky_solve(view, x);
    std::vector<T> lt_x(static_cast<std::size_t>(n));
    Real worst = 0;
    for (int i = 0; i < n; ++i) {
      Real s = 0, abs_s = 0;
      for (int j = 0; j < n; ++j) {
        Real a_ij = 0, abs_a_ij = 0;
        for (int k = 0; k <= std::min(i, j); ++k) {
          a_ij += static_cast<Real>(l[i * n + k]) * l[j * n + k];
          abs_a_ij += std::fabs(static_cast<Real>(l[i * n + k]) * l[j * n + k]);
        }
        s += a_ij * x[j];
        abs_s += abs_a_ij * std::fabs(static_cast<Real>(x[j]));
      }
      worst = std::max(worst, std::fabs(s - b[i]) / (gamma<T>(3 * n + 2) * abs_s));
    }
    EXPECT_LE(worst, 1) << "n = " << n;
  }
}

TYPED_TEST(LinalgTriangular, ColumnSolvesEqualVectorSolves) {
  using T = TypeParam;
  const int n = 9, r = 4;
  const std::vector<T> l = random_factor<T>(n, 3);
  const std::vector<T> rhs = random_vector<T>(n * r, 4);  // n × r, row-major
  const auto lv = dense_matrix(l.data(), n, n).as_const();
  for (bool transpose : {false, true}) {
    std::vector<T> columns = rhs;
    const auto b = dense_matrix(columns.data(), n, r);
    if (transpose)
      solve_lower_transpose_columns(lv, b);
    else
      solve_lower_columns(lv, b);
    for (int c = 0; c < r; ++c) {
      std::vector<T> x(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) x[i] = rhs[i * r + c];
      if (transpose)
        solve_lower_transpose(lv, x);
      else
        solve_lower(lv, x);
      for (int i = 0; i < n; ++i) EXPECT_EQ(columns[i * r + c], x[i]);
    }
  }
}

TYPED_TEST(LinalgTriangular, StrictUpperTriangleIsNotRead) {
  using T = TypeParam;
  const int n = 6;
  std::vector<T> l = random_factor<T>(n, 8);
  std::vector<T> poisoned = l;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) poisoned[i * n + j] = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> x = random_vector<T>(n, 9), y = x;
  cholesky_solve(dense_matrix(l.data(), n, n), x);
  cholesky_solve(dense_matrix(poisoned.data(), n, n), y);
  EXPECT_EQ(x, y);
  EXPECT_EQ(log_det_from_cholesky(dense_matrix(poisoned.data(), n, n)),
            log_det_from_cholesky(dense_matrix(l.data(), n, n)));
}

template <class T>
class LinalgDenseOps : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgDenseOps, Precisions);

TYPED_TEST(LinalgDenseOps, ProductsAgreeWithLongDoubleWithinTheInnerProductBound) {
  using T = TypeParam;
  const int m = 13, n = 29;
  const std::vector<T> j = random_vector<T>(m * n, 31);
  const std::vector<T> x = random_vector<T>(n, 32);
  const std::vector<T> w = random_vector<T>(m, 33);
  const auto jv = dense_matrix(j.data(), m, n).as_const();
  const T sentinel = T(-12345);
  std::vector<T> g(static_cast<std::size_t>(m) * m, sentinel);
  gram_lower(jv, dense_matrix(g.data(), m, m));
  for (int i = 0; i < m; ++i)
    for (int k = 0; k < m; ++k) {
      if (k > i) {
        EXPECT_EQ(g[i * m + k], sentinel) << "upper triangle written";
        continue;
      }
      Real s = 0, abs_s = 0;
      for (int c = 0; c < n; ++c) {
        s += static_cast<Real>(j[i * n + c]) * j[k * n + c];
        abs_s += std::fabs(static_cast<Real>(j[i * n + c]) * j[k * n + c]);
      }
      EXPECT_LE(std::fabs(g[i * m + k] - s), gamma<T>(n) * abs_s);
    }
  std::vector<T> y(static_cast<std::size_t>(m));
  multiply(jv, x, y);
  for (int i = 0; i < m; ++i) {
    Real s = 0, abs_s = 0;
    for (int c = 0; c < n; ++c) {
      s += static_cast<Real>(j[i * n + c]) * x[c];
      abs_s += std::fabs(static_cast<Real>(j[i * n + c]) * x[c]);
    }
    EXPECT_LE(std::fabs(y[i] - s), gamma<T>(n) * abs_s);
  }
  std::vector<T> z(static_cast<std::size_t>(n));
  multiply_transpose(jv, w, z);
  for (int c = 0; c < n; ++c) {
    Real s = 0, abs_s = 0;
    for (int i = 0; i < m; ++i) {
      s += static_cast<Real>(j[i * n + c]) * w[i];
      abs_s += std::fabs(static_cast<Real>(j[i * n + c]) * w[i]);
    }
    EXPECT_LE(std::fabs(z[c] - s), gamma<T>(m) * abs_s);
  }
  Real s = 0, abs_s = 0;
  for (int i = 0; i < m; ++i) {
    s += static_cast<Real>(w[i]) * y[i];
    abs_s += std::fabs(static_cast<Real>(w[i]) * y[i]);
  }
  EXPECT_LE(std::fabs(dot(w, y, m) - s), gamma<T>(m) * abs_s);
}

TYPED_TEST(LinalgDenseOps, MaxAbsIsTheInfinityNormAndPropagatesNaN) {
  using T = TypeParam;
  std::vector<T> x = {T(1), T(-7.5), T(3), T(0)};
  EXPECT_EQ(max_abs(x, 4), T(7.5));
  EXPECT_EQ(max_abs(x, 0), T(0));
  EXPECT_EQ(max_abs(x.data(), 1), T(1));
  for (int where = 0; where < 4; ++where) {
    std::vector<T> y = x;
    y[where] = std::numeric_limits<T>::quiet_NaN();
    EXPECT_TRUE(std::isnan(max_abs(y, 4))) << "NaN at " << where;
  }
  x[2] = -std::numeric_limits<T>::infinity();
  EXPECT_EQ(max_abs(x, 4), std::numeric_limits<T>::infinity());
}

/// One chain's workspace inside a [element][chain] array of `chains` chains (stride = chains),
/// as on the GPU, with every other chain's elements set to a sentinel that must survive.
template <class T>
struct InterleavedWorkspace {
  static constexpr int kChains = 7;
  static constexpr int kChain = 3;
  std::vector<T> storage;
  explicit InterleavedWorkspace(std::int64_t elements)
      : storage(static_cast<std::size_t>(elements * kChains), T(-999)) {}
  ChainWorkspace<T> workspace() { return {storage.data() + kChain, kChains}; }
  bool others_untouched() const {
    for (std::size_t e = 0; e < storage.size(); ++e)
      if (static_cast<int>(e % kChains) != kChain && storage[e] != T(-999)) return false;
    return true;
  }
};

template <class T>
class LinalgStrided : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgStrided, Precisions);

TYPED_TEST(LinalgStrided, WorkspaceStrideSevenGivesBitwiseIdenticalResults) {
  using T = TypeParam;
  const int n = 11;
  const std::vector<T> a = random_spd<T>(n, 41);
  const std::vector<T> b = random_vector<T>(n, 42);
  // The chain's elements: A (n × n) at 0, b at n², y at n² + n, G = L Lᵀ's lower triangle
  // recomputed by gram_lower at n² + 2n.
  const std::int64_t elements = 2 * n * n + 2 * n;
  InterleavedWorkspace<T> strided(elements);
  std::vector<T> contiguous_storage(static_cast<std::size_t>(elements), T(-999));
  const ChainWorkspace<T> contiguous{contiguous_storage.data(), 1};
  for (const ChainWorkspace<T>& ws : {strided.workspace(), contiguous}) {
    const MatrixView<T> m = ws.matrix(0, n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) m(i, j) = a[i * n + j];
    const ChainVector<T> rhs = ws.vector(n * n, n);
    for (int i = 0; i < n; ++i) rhs[i] = b[i];
    ASSERT_TRUE(cholesky_in_place(m));
    solve_lower(m.as_const(), rhs);
    solve_lower_transpose(m, rhs);
    const ChainVector<T> y = ws.vector(n * n + n, n);
    multiply(m.as_const(), rhs, y);
    multiply_transpose(m.as_const(), y, rhs);
    gram_lower(m.as_const(), ws.matrix(n * n + 2 * n, n, n));
  }
  for (std::int64_t e = 0; e < elements; ++e)
    EXPECT_EQ(strided.workspace()[e], contiguous[e]) << "element " << e;
  EXPECT_TRUE(strided.others_untouched());
}

template <class T>
class LinalgStructuredGram : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgStructuredGram, Precisions);

/// Extreme eigenvalues of an SPD matrix given with its Cholesky factor: power iteration on G
/// and on G⁻¹ (Rayleigh quotients), in long double.
struct Spectrum {
  Real lambda_max = 0;
  Real lambda_min = 0;
  Real condition() const { return lambda_max / lambda_min; }
};

void real_cholesky(RealMatrix& a) {
  const int n = a.rows;
  for (int j = 0; j < n; ++j) {
    Real d = a(j, j);
    for (int k = 0; k < j; ++k) d -= a(j, k) * a(j, k);
    ASSERT_GT(d, 0);
    a(j, j) = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      Real s = a(i, j);
      for (int k = 0; k < j; ++k) s -= a(i, k) * a(j, k);
      a(i, j) = s / a(j, j);
    }
  }
}

void real_cholesky_solve(const RealMatrix& l, std::vector<Real>& b) {
  const int n = l.rows;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < i; ++k) b[i] -= l(i, k) * b[k];
    b[i] /= l(i, i);
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int k = i + 1; k < n; ++k) b[i] -= l(k, i) * b[k];
    b[i] /= l(i, i);
  }
}

Spectrum spectrum(const RealMatrix& g, const RealMatrix& l) {
  const int n = g.rows;
  const auto normalise = [](std::vector<Real>& v) {
    Real s = 0;
    for (Real x : v) s += x * x;
    for (Real& x : v) x /= std::sqrt(s);
  };
  const auto multiply_g = [&](const std::vector<Real>& v) {
    std::vector<Real> out(v.size(), 0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) out[i] += g(i, j) * v[j];
    return out;
  };
  Spectrum s;
  std::vector<Real> v(static_cast<std::size_t>(n), 1);
  for (int it = 0; it < 300; ++it) {
    normalise(v);
    std::vector<Real> gv = multiply_g(v);
    Real rayleigh = 0;
    for (int i = 0; i < n; ++i) rayleigh += v[i] * gv[i];
    s.lambda_max = rayleigh;
    v = gv;
  }
  v.assign(static_cast<std::size_t>(n), 1);
  for (int i = 0; i < n; ++i) v[i] += Real(i % 3);  // not orthogonal to the bottom eigenvector
  for (int it = 0; it < 300; ++it) {
    normalise(v);
    std::vector<Real> w = v;
    real_cholesky_solve(l, w);
    Real rayleigh = 0;
    for (int i = 0; i < n; ++i) rayleigh += v[i] * w[i];
    s.lambda_min = 1 / rayleigh;
    v = w;
  }
  return s;
}

/// The random structured Jacobian J = [B T] of one test case, in T, with its explicitly formed
/// G = B Bᵀ + T Tᵀ and G's Cholesky factor in long double.
template <class T>
struct StructuredCase {
  int m, k;
  std::vector<T> b;  // M × K row-major
  std::vector<T> d;  // diagonal T
  std::vector<T> t;  // M × M lower triangular, row-major (the triangular case)
  RealMatrix g{0, 0}, l{0, 0};
  Spectrum spectrum_g;
};

/// B standard normal; d uniform on [0.5, 2] (the diagonal case) or T lower triangular with
/// diagonal uniform on [0.5, 1.5] and T_ij = 0.5^{i−j} z_ij / 2 below it (a decaying Markov
/// dependence, so that T is well conditioned, like Lotka–Volterra's noise Jacobian).
template <class T>
StructuredCase<T> make_case(int m, int k, bool triangular, std::uint64_t seed) {
  StructuredCase<T> c;
  c.m = m;
  c.k = k;
  const std::vector<Real> z = normals(static_cast<std::size_t>(m) * (m + k + 1), seed);
  std::mt19937_64 engine(seed + 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  c.b.resize(static_cast<std::size_t>(m) * k);
  for (int i = 0; i < m * k; ++i) c.b[i] = static_cast<T>(z[i]);
  c.d.resize(static_cast<std::size_t>(m));
  c.t.assign(static_cast<std::size_t>(m) * m, T(0));
  for (int i = 0; i < m; ++i) {
    c.d[i] = static_cast<T>(0.5 + 1.5 * uniform(engine));
    c.t[i * m + i] = static_cast<T>(0.5 + uniform(engine));
    for (int j = 0; j < i; ++j)
      c.t[i * m + j] = static_cast<T>(std::pow(0.5L, i - j) * z[m * k + i * m + j] / 2);
  }
  c.g = RealMatrix(m, m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      Real s = 0;
      for (int a = 0; a < k; ++a) s += static_cast<Real>(c.b[i * k + a]) * c.b[j * k + a];
      if (triangular) {
        for (int a = 0; a <= std::min(i, j); ++a)
          s += static_cast<Real>(c.t[i * m + a]) * c.t[j * m + a];
      } else if (i == j) {
        s += static_cast<Real>(c.d[i]) * c.d[i];
      }
      c.g(i, j) = s;
    }
  c.l = c.g;
  real_cholesky(c.l);
  c.spectrum_g = spectrum(c.g, c.l);
  return c;
}

/// κ₂(S) of the K × K capacitance formed in long double from the rows r_i (scaled B or W).
Real capacitance_condition(const std::vector<Real>& rows, int m, int k) {
  RealMatrix s(k, k);
  for (int a = 0; a < k; ++a) {
    s(a, a) = 1;
    for (int c = 0; c < k; ++c)
      for (int i = 0; i < m; ++i) s(a, c) += rows[i * k + a] * rows[i * k + c];
  }
  RealMatrix l = s;
  real_cholesky(l);
  return spectrum(s, l).condition();
}

template <class T, class Gram>
void check_against_dense(const StructuredCase<T>& c, const Gram& gram, Real log_det_s_condition,
                         Real sum_abs_log_noise, const char* name) {
  constexpr bool check_inverse_diagonal = std::is_same<Gram, DiagonalPlusLowRankGram<T>>::value;
  const int m = c.m, k = c.k;
  const Real u = unit_roundoff<T>();
  const Real kappa = c.spectrum_g.condition();
  // log|G|.
  Real log_det = 0;
  for (int i = 0; i < m; ++i) log_det += 2 * std::log(c.l(i, i));
  const Real log_det_bound = gamma<T>(m + 2) * (sum_abs_log_noise + m) +
                             k * log_det_s_condition * k * (gamma<T>(m + 3) + gamma<T>(k + 2));
  const Real log_det_error = std::fabs(gram.log_det() - log_det);
  EXPECT_LE(log_det_error, log_det_bound) << name;
  // G⁻¹ v for three right-hand sides.
  const Real solve_bound = 4 * m * kappa * u;
  Real worst_solve = 0;
  for (int r = 0; r < 3; ++r) {
    const std::vector<T> v = random_vector<T>(m, 1000 + r);
    std::vector<Real> x(v.begin(), v.end());
    real_cholesky_solve(c.l, x);
    std::vector<T> y = v;
    gram.solve(y);
    Real err2 = 0, x2 = 0;
    for (int i = 0; i < m; ++i) {
      err2 += (y[i] - x[i]) * (y[i] - x[i]);
      x2 += x[i] * x[i];
    }
    worst_solve = std::max(worst_solve, std::sqrt(err2 / x2));
  }
  EXPECT_LE(worst_solve, solve_bound) << name;
  // (G⁻¹)_mm.
  Real worst_diagonal = 0;
  const Real diagonal_bound = solve_bound / c.spectrum_g.lambda_min;  // × ‖G⁻¹‖₂
  if constexpr (std::is_same<Gram, DiagonalPlusLowRankGram<T>>::value) {
    for (int i = 0; i < m; ++i) {
      std::vector<Real> e(static_cast<std::size_t>(m), 0);
      e[i] = 1;
      real_cholesky_solve(c.l, e);
      worst_diagonal =
          std::max(worst_diagonal, std::fabs(static_cast<Real>(gram.inverse_diagonal(i)) - e[i]));
    }
    EXPECT_LE(worst_diagonal, diagonal_bound) << name;
  }
  std::printf(
      "[ observed ] %s %s M=%d K=%d kappa(G)=%.3Lg: log|G| err %.2Lg (bound %.2Lg), solve rel err "
      "%.2Lg (bound %.2Lg)",
      name, sizeof(T) == 4 ? "float" : "double", m, k, kappa, log_det_error, log_det_bound,
      worst_solve, solve_bound);
  if (check_inverse_diagonal)
    std::printf(", diag(G^-1) err %.2Lg (bound %.2Lg)", worst_diagonal, diagonal_bound);
  std::printf("\n");
}

TYPED_TEST(LinalgStructuredGram, DiagonalPlusLowRankMatchesDenseCholesky) {
  using T = TypeParam;
  for (int m : {50, 250}) {
    const int k = 4;
    const StructuredCase<T> c = make_case<T>(m, k, false, 500 + m);
    using Gram = DiagonalPlusLowRankGram<T>;
    std::vector<T> workspace(static_cast<std::size_t>(Gram::workspace_size(m, k)));
    const Gram gram(dense_matrix(c.b.data(), m, k).as_const(),
                    ChainVector<const T>{c.d.data(), 1, m}, ChainWorkspace<T>{workspace.data(), 1},
                    0);
    ASSERT_TRUE(gram.factor());
    std::vector<Real> scaled(static_cast<std::size_t>(m) * k);
    Real sum_abs_log = 0;
    for (int i = 0; i < m; ++i) {
      for (int a = 0; a < k; ++a) scaled[i * k + a] = static_cast<Real>(c.b[i * k + a]) / c.d[i];
      sum_abs_log += std::fabs(2 * std::log(static_cast<Real>(c.d[i])));
    }
    check_against_dense(c, gram, capacitance_condition(scaled, m, k), sum_abs_log,
                        "diagonal+low-rank  ");
  }
}

TYPED_TEST(LinalgStructuredGram, TriangularPlusLowRankMatchesDenseCholesky) {
  using T = TypeParam;
  for (int m : {50, 250}) {
    const int k = 4;
    const StructuredCase<T> c = make_case<T>(m, k, true, 700 + m);
    using Gram = TriangularPlusLowRankGram<T>;
    std::vector<T> workspace(static_cast<std::size_t>(Gram::workspace_size(m, k)));
    const Gram gram(dense_matrix(c.b.data(), m, k).as_const(),
                    dense_matrix(c.t.data(), m, m).as_const(),
                    ChainWorkspace<T>{workspace.data(), 1}, 0);
    ASSERT_TRUE(gram.factor());
    // W = T⁻¹ B in long double for κ₂(S).
    std::vector<Real> w(static_cast<std::size_t>(m) * k);
    Real sum_abs_log = 0;
    for (int a = 0; a < k; ++a)
      for (int i = 0; i < m; ++i) {
        Real s = c.b[i * k + a];
        for (int j = 0; j < i; ++j) s -= static_cast<Real>(c.t[i * m + j]) * w[j * k + a];
        w[i * k + a] = s / c.t[i * m + i];
      }
    for (int i = 0; i < m; ++i)
      sum_abs_log += std::fabs(2 * std::log(static_cast<Real>(c.t[i * m + i])));
    // T⁻¹ adds the forward error of the triangular solves (κ(T) u per column of W) to S; it is
    // covered by κ₂(G) ≥ κ₂(T)²-scale terms in the solve bound and by the γ_{M+3} term here.
    check_against_dense(c, gram, capacitance_condition(w, m, k), sum_abs_log,
                        "triangular+low-rank");
  }
}

TYPED_TEST(LinalgStructuredGram, FromJacobianReadsTheBlocksOfJ) {
  using T = TypeParam;
  const int m = 12, k = 3, n = k + m;
  const StructuredCase<T> c = make_case<T>(m, k, true, 77);
  // J = [B T] row-major, M × (K + M); the diagonal case reads only J(i, K + i) of the T block.
  std::vector<T> j(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int a = 0; a < k; ++a) j[i * n + a] = c.b[i * k + a];
    for (int a = 0; a < m; ++a) j[i * n + k + a] = c.t[i * m + a];
  }
  std::vector<T> diagonal(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) diagonal[i] = c.t[i * m + i];
  const auto jv = dense_matrix(j.data(), m, n).as_const();
  const auto bv = dense_matrix(c.b.data(), m, k).as_const();
  {
    using Gram = DiagonalPlusLowRankGram<T>;
    std::vector<T> w1(Gram::workspace_size(m, k)), w2(Gram::workspace_size(m, k));
    const Gram from_j = Gram::from_jacobian(jv, k, {w1.data(), 1}, 0);
    const Gram direct(bv, {diagonal.data(), 1, m}, {w2.data(), 1}, 0);
    ASSERT_TRUE(from_j.factor());
    ASSERT_TRUE(direct.factor());
    EXPECT_EQ(w1, w2);
  }
  {
    using Gram = TriangularPlusLowRankGram<T>;
    std::vector<T> w1(Gram::workspace_size(m, k)), w2(Gram::workspace_size(m, k));
    const Gram from_j = Gram::from_jacobian(jv, k, {w1.data(), 1}, 0);
    const Gram direct(bv, dense_matrix(c.t.data(), m, m).as_const(), {w2.data(), 1}, 0);
    ASSERT_TRUE(from_j.factor());
    ASSERT_TRUE(direct.factor());
    EXPECT_EQ(w1, w2);
  }
}

TYPED_TEST(LinalgStructuredGram, TriangularSolveJacobianIsTheGramInverseTimesJ) {
  // C = G⁻¹ J on J's structure (the cotangent of the log-determinant gradient): the K columns
  // G⁻¹B and the lower triangle of G⁻¹T against solves with the long-double Cholesky of G; the
  // strict upper triangle of the T block is not written. Bound: that of solve() above, 4 M κ₂(G)
  // u relative to the column, for G⁻¹B (T⁻ᵀ W S⁻¹ is the same substitutions reordered); for the
  // T block, below its diagonal C_T = −C_B Wᵀ (T⁻ᵀ is upper triangular), so column j inherits
  // C_B's error times ‖W(j, :)‖: the bound scales with ‖C_T(:, j)‖ + ‖C_B‖_F ‖W(j, :)‖.
  using T = TypeParam;
  const Real u = unit_roundoff<T>();
  for (int m : {50, 250}) {
    const int k = 4, n = k + m;
    const StructuredCase<T> c = make_case<T>(m, k, true, 900 + m);
    using Gram = TriangularPlusLowRankGram<T>;
    std::vector<T> workspace(static_cast<std::size_t>(Gram::workspace_size(m, k)));
    const Gram gram(dense_matrix(c.b.data(), m, k).as_const(),
                    dense_matrix(c.t.data(), m, m).as_const(),
                    ChainWorkspace<T>{workspace.data(), 1}, 0);
    ASSERT_TRUE(gram.factor());
    std::vector<T> cotangent(static_cast<std::size_t>(m) * n, std::numeric_limits<T>::quiet_NaN());
    gram.solve_jacobian(dense_matrix(cotangent.data(), m, n));
    const Real bound = 4 * m * c.spectrum_g.condition() * u;
    Real worst_b = 0, worst_t = 0, norm_cb2 = 0;
    for (int a = 0; a < k; ++a) {
      std::vector<Real> x(static_cast<std::size_t>(m));
      for (int i = 0; i < m; ++i) x[i] = c.b[i * k + a];
      real_cholesky_solve(c.l, x);
      Real err2 = 0, x2 = 0;
      for (int i = 0; i < m; ++i) {
        const Real d = static_cast<Real>(cotangent[i * n + a]) - x[i];
        err2 += d * d;
        x2 += x[i] * x[i];
      }
      norm_cb2 += x2;
      worst_b = std::max(worst_b, std::sqrt(err2 / x2));
    }
    EXPECT_LE(worst_b, bound);
    for (int j = 0; j < m; ++j) {
      std::vector<Real> x(static_cast<std::size_t>(m), 0);
      for (int i = j; i < m; ++i) x[i] = c.t[i * m + j];
      real_cholesky_solve(c.l, x);
      Real err2 = 0, x2 = 0, w2 = 0;
      for (int i = j; i < m; ++i) {
        const Real d = static_cast<Real>(cotangent[i * n + k + j]) - x[i];
        err2 += d * d;
        x2 += x[i] * x[i];
      }
      for (int i = 0; i < j; ++i)
        ASSERT_TRUE(std::isnan(cotangent[i * n + k + j])) << "written above the diagonal";
      for (int a = 0; a < k; ++a) w2 += static_cast<Real>(gram.w(j, a)) * gram.w(j, a);
      worst_t = std::max(worst_t, std::sqrt(err2) / (std::sqrt(x2) + std::sqrt(norm_cb2 * w2)));
    }
    EXPECT_LE(worst_t, bound);
    std::printf(
        "[ observed ] %s M=%d: G^-1 B rel err %.2Lg, G^-1 T (lower) rel err %.2Lg (bound %.2Lg)\n",
        sizeof(T) == 4 ? "float" : "double", m, worst_b, worst_t, bound);
  }
}

TYPED_TEST(LinalgStructuredGram, StridedWorkspaceAtAnOffsetGivesBitwiseIdenticalResults) {
  using T = TypeParam;
  const int m = 20, k = 4;
  const std::int64_t offset = 5;
  const StructuredCase<T> c = make_case<T>(m, k, true, 91);
  const auto bv = dense_matrix(c.b.data(), m, k).as_const();
  const auto tv = dense_matrix(c.t.data(), m, m).as_const();
  const ChainVector<const T> dv{c.d.data(), 1, m};
  const std::int64_t size = offset + TriangularPlusLowRankGram<T>::workspace_size(m, k);
  InterleavedWorkspace<T> strided(size);
  std::vector<T> contiguous(static_cast<std::size_t>(size));
  const ChainWorkspace<T> contiguous_ws{contiguous.data(), 1};
  const std::vector<T> v = random_vector<T>(m, 92);
  std::vector<T> results[2][2];
  int slot = 0;
  for (const ChainWorkspace<T>& ws : {strided.workspace(), contiguous_ws}) {
    const TriangularPlusLowRankGram<T> tri(bv, tv, ws, offset);
    ASSERT_TRUE(tri.factor());
    std::vector<T> x = v;
    tri.solve(x);
    x.push_back(tri.log_det());
    results[slot][0] = x;
    const DiagonalPlusLowRankGram<T> diag(bv, dv, ws, offset);
    ASSERT_TRUE(diag.factor());
    x = v;
    diag.solve(x);
    x.push_back(diag.log_det());
    x.push_back(diag.inverse_diagonal(3));
    results[slot][1] = x;
    ++slot;
  }
  EXPECT_EQ(results[0][0], results[1][0]);
  EXPECT_EQ(results[0][1], results[1][1]);
  EXPECT_TRUE(strided.others_untouched());
  for (std::int64_t e = 0; e < offset; ++e) EXPECT_EQ(strided.workspace()[e], T(-999));
}

TYPED_TEST(LinalgStructuredGram, FactorFailsOnInvalidNoiseScalesAndNonFiniteInput) {
  using T = TypeParam;
  const int m = 8, k = 2;
  const StructuredCase<T> good = make_case<T>(m, k, true, 13);
  for (T bad :
       {T(0), T(-1), std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    StructuredCase<T> c = good;
    c.d[5] = bad;
    c.t[5 * m + 5] = bad;
    std::vector<T> w1(DiagonalPlusLowRankGram<T>::workspace_size(m, k));
    std::vector<T> w2(TriangularPlusLowRankGram<T>::workspace_size(m, k));
    EXPECT_FALSE(DiagonalPlusLowRankGram<T>(dense_matrix(c.b.data(), m, k).as_const(),
                                            {c.d.data(), 1, m}, {w1.data(), 1}, 0)
                     .factor())
        << bad;
    EXPECT_FALSE(TriangularPlusLowRankGram<T>(dense_matrix(c.b.data(), m, k).as_const(),
                                              dense_matrix(c.t.data(), m, m).as_const(),
                                              {w2.data(), 1}, 0)
                     .factor())
        << bad;
  }
  // A NaN in B reaches S.
  StructuredCase<T> c = good;
  c.b[3] = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> w1(DiagonalPlusLowRankGram<T>::workspace_size(m, k));
  std::vector<T> w2(TriangularPlusLowRankGram<T>::workspace_size(m, k));
  EXPECT_FALSE(DiagonalPlusLowRankGram<T>(dense_matrix(c.b.data(), m, k).as_const(),
                                          {c.d.data(), 1, m}, {w1.data(), 1}, 0)
                   .factor());
  EXPECT_FALSE(TriangularPlusLowRankGram<T>(dense_matrix(c.b.data(), m, k).as_const(),
                                            dense_matrix(c.t.data(), m, m).as_const(),
                                            {w2.data(), 1}, 0)
                   .factor());
}

}  // namespace
}  // namespace myriad::linalg
