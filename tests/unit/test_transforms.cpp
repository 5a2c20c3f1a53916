// Tests of Stan's constraining transforms (include/myriad/model/transforms.hpp): each transform's
// value and log-Jacobian against the formulas of the Stan Reference Manual ("Constraint
// transforms") written out with <cmath>, and each log-Jacobian against log |det J| of the map
// computed two ways: from J by forward-mode duals (exact up to rounding) and from J by central
// finite differences, with a bound on the differences' error derived per entry. The simplex's
// K values have K − 1 degrees of freedom: its map is that of the first K − 1 coordinates.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/test_points.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/model/transforms.hpp"

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

using D1 = myriad::Dual<double>;
using D3 = myriad::Dual<myriad::Dual<D1>>;

double sigmoid(double u) { return 1 / (1 + std::exp(-u)); }

/// A transform as a map ℝ^m → ℝ^m over any scalar S: `map(u, lj)` returns the m constrained
/// coordinates that determine the rest, adding the transform's log-Jacobian to lj.
template <class S>
using MapOf = std::function<std::vector<S>(const std::vector<S>&, S&)>;

/// The same map instantiated for double, first-order duals and third-order duals.
struct Transform {
  std::string name;
  MapOf<double> plain;
  MapOf<D1> dual;
  MapOf<D3> triple;
};

/// Wraps a generic lambda `f(u, lj) -> std::vector<S>` for the three scalars.
template <class F>
Transform transform(const std::string& name, const F& f) {
  return {name, [f](const std::vector<double>& u, double& lj) { return f(u, lj); },
          [f](const std::vector<D1>& u, D1& lj) { return f(u, lj); },
          [f](const std::vector<D3>& u, D3& lj) { return f(u, lj); }};
}

/// log |det A| by Gaussian elimination with partial pivoting; A is overwritten. Also returns A⁻¹
/// in `inverse` (Gauss–Jordan on the same pivots).
double log_abs_det(std::vector<std::vector<double>> a, std::vector<std::vector<double>>& inverse) {
  const int m = static_cast<int>(a.size());
  inverse.assign(m, std::vector<double>(m, 0.0));
  for (int i = 0; i < m; ++i) inverse[i][i] = 1;
  double log_det = 0;
  for (int c = 0; c < m; ++c) {
    int pivot = c;
    for (int r = c + 1; r < m; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    std::swap(a[c], a[pivot]);
    std::swap(inverse[c], inverse[pivot]);
    const double p = a[c][c];
    log_det += std::log(std::fabs(p));
    for (int k = 0; k < m; ++k) {
      a[c][k] /= p;
      inverse[c][k] /= p;
    }
    for (int r = 0; r < m; ++r) {
      if (r == c) continue;
      const double f = a[r][c];
      for (int k = 0; k < m; ++k) {
        a[r][k] -= f * a[c][k];
        inverse[r][k] -= f * inverse[c][k];
      }
    }
  }
  return log_det;
}

/// Checks the transform's log-Jacobian at u against log |det J|:
///  (a) J by first-order duals, seeded per coordinate: the same arithmetic as the map, so log
///      |det| agrees to rounding of the log-Jacobian's terms, 1e-12 (1 + |lj| + Σ|u_j|);
///  (b) J by central differences with h_j = 1e-5 max(1, |u_j|). Entry (i, j) is off by at most
///      E_ij = h_j² |∂_j³ x_i| / 6 (truncation; the third derivative by triple duals) + (m + 4) ε
///      S_i / h_j (the rounding of two evaluations of x_i, each a chain of at most m + 4
///      operations on terms of total magnitude S_i = output_scale[i]) (Nocedal & Wright,
///      "Numerical Optimization", §8.1); to first order log |det| moves by tr(J⁻¹ δJ), at most
///      Σ_ij |(J⁻¹)_ji| E_ij, allowed 4 times. The bound must stay below 1e-4 for the check to
///      mean something (a wrong Jacobian term is off by O(1)).
void expect_log_jacobian_matches(const Transform& t, const std::vector<double>& u,
                                 const std::vector<double>& output_scale) {
  SCOPED_TRACE(t.name);
  const int m = static_cast<int>(u.size());
  double lj = 0;
  const std::vector<double> x = t.plain(u, lj);
  ASSERT_EQ(static_cast<int>(x.size()), m);

  std::vector<std::vector<double>> j_dual(m, std::vector<double>(m)), j_fd = j_dual, third = j_dual;
  double magnitude = 1 + std::fabs(lj);
  for (int j = 0; j < m; ++j) {
    magnitude += std::fabs(u[j]);
    std::vector<D1> seeded(m);
    std::vector<D3> triple(m);
    for (int k = 0; k < m; ++k) {
      const double s = k == j ? 1.0 : 0.0;
      seeded[k] = D1(u[k], s);
      triple[k] = D3(myriad::Dual<D1>(D1(u[k], s), D1(s, 0)), myriad::Dual<D1>(D1(s, 0), D1(0, 0)));
    }
    D1 lj1 = 0;
    const std::vector<D1> xd = t.dual(seeded, lj1);
    D3 lj3 = 0;
    const std::vector<D3> x3 = t.triple(triple, lj3);
    const double h = 1e-5 * std::max(1.0, std::fabs(u[j]));
    std::vector<double> up = u, down = u;
    up[j] += h;
    down[j] -= h;
    double unused = 0;
    const std::vector<double> xp = t.plain(up, unused), xm = t.plain(down, unused);
    for (int i = 0; i < m; ++i) {
      j_dual[i][j] = xd[i].eps;
      j_fd[i][j] = (xp[i] - xm[i]) / (up[j] - down[j]);
      third[i][j] = x3[i].eps.eps.eps;
    }
  }
  std::vector<std::vector<double>> inverse;
  EXPECT_NEAR(log_abs_det(j_dual, inverse), lj, 1e-12 * magnitude) << "duals";

  const double log_det_fd = log_abs_det(j_fd, inverse);
  double bound = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) {
      const double h = 1e-5 * std::max(1.0, std::fabs(u[j]));
      const double entry =
          h * h * std::fabs(third[i][j]) / 6 + (m + 4) * kEps * output_scale[i] / h;
      bound += std::fabs(inverse[j][i]) * entry;
    }
  }
  EXPECT_LT(4 * bound, 1e-4) << "finite differences too coarse here to check anything";
  EXPECT_NEAR(log_det_fd, lj, 4 * bound) << "finite differences";
}

// ---------------------------------------------------------------------------------------------
// real<lower=a>: x = a + e^u, log J = u.

TEST(Transforms, LowerBoundMatchesStansFormula) {
  for (const double a : {0.0, -3.5, 2.0}) {
    for (const double u : {-30.0, -2.0, 0.0, 1.5, 30.0}) {
      double lj = 0.25;  // adds to what is there
      const double x = myriad::lower_bound_transform(u, a, lj);
      const double expected = a + std::exp(u);
      EXPECT_NEAR(x, expected, 2 * kEps * (std::fabs(a) + std::exp(u))) << a << ", " << u;
      EXPECT_EQ(lj, 0.25 + u) << a << ", " << u;
      EXPECT_GT(x, a) << "inside the bound where it is representable: " << a << ", " << u;
    }
  }
}

TEST(Transforms, LowerBoundJacobianIsTheMapsDeterminant) {
  for (const double a : {0.0, -3.5}) {
    const Transform t = transform("lower a = " + std::to_string(a), [a](const auto& u, auto& lj) {
      using S = std::decay_t<decltype(lj)>;
      return std::vector<S>{myriad::lower_bound_transform(u[0], a, lj)};
    });
    for (const double u : {-6.0, -2.0, 0.0, 1.5, 12.0})
      expect_log_jacobian_matches(t, {u}, {std::fabs(a) + std::exp(u)});
  }
}

// ---------------------------------------------------------------------------------------------
// real<lower=a, upper=b>: x = a + (b − a) σ(u), log J = log(b − a) + log σ(u) + log(1 − σ(u)).

TEST(Transforms, IntervalMatchesStansFormula) {
  const double bounds[3][2] = {{0.0, 1.0}, {-2.0, 5.0}, {1e-3, 2e-3}};
  for (const auto& ab : bounds) {
    const double a = ab[0], b = ab[1];
    for (const double u : {-40.0, -3.0, 0.0, 0.7, 25.0, 40.0}) {
      double lj = -1.0;
      const double x = myriad::interval_transform(u, a, b, lj);
      // σ(u) and 1 − σ(u) = σ(−u), each without cancellation.
      const double expected = a + (b - a) * sigmoid(u);
      const double expected_lj =
          -1.0 + std::log(b - a) + std::log(sigmoid(u)) + std::log(sigmoid(-u));
      EXPECT_NEAR(x, expected, 4 * kEps * (std::fabs(a) + std::fabs(b - a))) << a << ", " << u;
      EXPECT_NEAR(lj, expected_lj, 8 * kEps * (1 + std::fabs(std::log(b - a)) + std::fabs(u)))
          << a << ", " << b << ", " << u;
      EXPECT_GE(x, a);
      EXPECT_LE(x, b);
    }
  }
}

TEST(Transforms, IntervalJacobianIsTheMapsDeterminant) {
  const Transform t = transform("interval (-2, 5)", [](const auto& u, auto& lj) {
    using S = std::decay_t<decltype(lj)>;
    return std::vector<S>{myriad::interval_transform(u[0], -2.0, 5.0, lj)};
  });
  for (const double u : {-8.0, -1.0, 0.0, 2.5, 9.0}) expect_log_jacobian_matches(t, {u}, {9.0});
}

TEST(Transforms, IntervalWithParameterBoundsIsTheJointMapsDeterminant) {
  // garch11's pair: α = σ(u_0) ∈ (0, 1), β ∈ (0, 1 − α); the joint map is triangular, its log
  // |det J| the sum of both transforms' terms.
  const Transform garch = transform("alpha, beta < 1 - alpha", [](const auto& u, auto& lj) {
    using S = std::decay_t<decltype(lj)>;
    const S alpha = myriad::interval_transform(u[0], 0.0, 1.0, lj);
    return std::vector<S>{alpha, myriad::interval_transform(u[1], 0.0, S(1) - alpha, lj)};
  });
  for (const auto& u : std::vector<std::vector<double>>{{0.3, -0.4}, {-3.0, 2.0}, {4.0, 6.0}})
    expect_log_jacobian_matches(garch, u, {1.0, 1.0});
  // Both bounds parameters: lo = u_0, hi = lo + e^{u_1}, x ∈ (lo, hi).
  const Transform both = transform("lo, hi, x in (lo, hi)", [](const auto& u, auto& lj) {
    using S = std::decay_t<decltype(lj)>;
    const S lo = u[0];
    const S hi = lo + myriad::lower_bound_transform(u[1], 0.0, lj);
    return std::vector<S>{lo, hi, myriad::interval_transform(u[2], lo, hi, lj)};
  });
  for (const auto& u :
       std::vector<std::vector<double>>{{0.5, 0.2, -0.3}, {-4.0, 2.0, 3.0}, {3.0, -3.0, -5.0}}) {
    const double width = std::exp(u[1]);
    const double scale = std::fabs(u[0]) + width;
    expect_log_jacobian_matches(both, u, {std::fabs(u[0]), scale, 2 * scale});
  }
}

// ---------------------------------------------------------------------------------------------
// ordered[K]: x_1 = u_1, x_k = x_{k−1} + e^{u_k}, log J = Σ_{k≥2} u_k.
// positive_ordered[K]: x_1 = e^{u_1}, then as ordered, log J = Σ_k u_k.

TEST(Transforms, OrderedMatchesStansFormula) {
  for (int p = 0; p < 4; ++p) {
    const int K = 1 + p;
    std::vector<double> u = myriad::testing::standard_normals(31, p, K + 2, 3.0);
    u[0] = 99.0;  // `first` skips it
    double lj = 0.5, plj = 0.5;
    std::vector<double> x(K), px(K);
    myriad::ordered_transform(u, 1, K, x.data(), lj);
    myriad::positive_ordered_transform(u, 1, K, px.data(), plj);
    double expected = u[1], expected_positive = std::exp(u[1]), scale = std::fabs(u[1]);
    double expected_lj = 0.5, expected_plj = 0.5 + u[1];
    for (int k = 0; k < K; ++k) {
      if (k > 0) {
        expected += std::exp(u[1 + k]);
        expected_positive += std::exp(u[1 + k]);
        scale += std::exp(u[1 + k]);
        expected_lj += u[1 + k];
        expected_plj += u[1 + k];
        EXPECT_GT(x[k], x[k - 1]);
        EXPECT_GT(px[k], px[k - 1]);
      }
      EXPECT_NEAR(x[k], expected, (k + 2) * kEps * scale) << "K " << K << ", k " << k;
      EXPECT_NEAR(px[k], expected_positive, (k + 2) * kEps * expected_positive)
          << "K " << K << ", k " << k;
    }
    EXPECT_NEAR(lj, expected_lj, (K + 1) * kEps * (1 + scale + 3 * K));
    EXPECT_NEAR(plj, expected_plj, (K + 1) * kEps * (1 + scale + 3 * K));
    EXPECT_GT(px[0], 0.0);
  }
}

TEST(Transforms, OrderedJacobiansAreTheMapsDeterminants) {
  for (const int K : {1, 2, 4}) {
    const Transform ordered = transform("ordered", [K](const auto& u, auto& lj) {
      using S = std::decay_t<decltype(lj)>;
      std::vector<S> x(K);
      myriad::ordered_transform(u, 0, K, x.data(), lj);
      return x;
    });
    const Transform positive = transform("positive_ordered", [K](const auto& u, auto& lj) {
      using S = std::decay_t<decltype(lj)>;
      std::vector<S> x(K);
      myriad::positive_ordered_transform(u, 0, K, x.data(), lj);
      return x;
    });
    for (int p = 0; p < 3; ++p) {
      const std::vector<double> u = myriad::testing::standard_normals(37, 10 * K + p, K, 2.0);
      std::vector<double> scale(K), positive_scale(K);
      double sum = std::fabs(u[0]), positive_sum = 0;
      for (int k = 0; k < K; ++k) {
        if (k > 0) sum += std::exp(u[k]);
        positive_sum += std::exp(u[k]);
        scale[k] = sum;
        positive_scale[k] = positive_sum;
      }
      SCOPED_TRACE("K " + std::to_string(K) + ", point " + std::to_string(p));
      expect_log_jacobian_matches(ordered, u, scale);
      expect_log_jacobian_matches(positive, u, positive_scale);
    }
  }
}

TEST(Transforms, OrderedOfNoElementsWritesNothing) {
  double x[1] = {7.0}, lj = 0;
  const std::vector<double> u = {1.0};
  myriad::ordered_transform(u, 0, 0, x, lj);
  myriad::positive_ordered_transform(u, 0, 0, x, lj);
  EXPECT_EQ(x[0], 7.0);
  EXPECT_EQ(lj, 0.0);
}

// ---------------------------------------------------------------------------------------------
// simplex[K] by stick-breaking: z_k = σ(u_k − log(K − k)), x_k = (1 − Σ_{j<k} x_j) z_k (k < K),
// x_K the rest, log J = Σ_k [log z_k + log(1 − z_k) + log(1 − Σ_{j<k} x_j)].

/// The Reference Manual's stick-breaking written out plainly (1-based k as the manual's).
std::vector<double> stick_breaking(const std::vector<double>& u, int K, double& lj) {
  std::vector<double> x(K);
  double used = 0;
  for (int k = 1; k < K; ++k) {
    const double shifted = u[k - 1] + std::log(1.0 / (K - k));
    const double z = sigmoid(shifted), one_minus_z = sigmoid(-shifted);
    x[k - 1] = (1 - used) * z;
    lj += std::log(z) + std::log(one_minus_z) + std::log(1 - used);
    used += x[k - 1];
  }
  x[K - 1] = 1 - used;
  return x;
}

TEST(Transforms, SimplexMatchesStansStickBreaking) {
  for (const int K : {1, 2, 3, 5}) {
    for (int p = 0; p < 4; ++p) {
      std::vector<double> u = myriad::testing::standard_normals(41, 10 * K + p, K, 2.0);
      if (p == 3 && K > 1) u[0] = -30;  // a nearly empty first share
      double lj = 0, expected_lj = 0;
      std::vector<double> x(K);
      myriad::simplex_transform(u, 0, K, x.data(), lj);
      const std::vector<double> expected = stick_breaking(u, K, expected_lj);
      double sum = 0, lj_scale = 1;
      for (int k = 0; k < K; ++k) {
        // Each share is a product of k sticks and one z, each a few roundings: relative error
        // ≲ 4(k + 2) ε; the last is 1 − Σ, absolute error ≲ K ε.
        const double tol = k + 1 < K ? 4 * (k + 2) * kEps * expected[k] : 4 * K * kEps;
        EXPECT_NEAR(x[k], expected[k], tol) << "K " << K << ", k " << k;
        EXPECT_GE(x[k], 0.0);
        sum += x[k];
      }
      for (int k = 0; k + 1 < K; ++k) lj_scale += std::fabs(u[k]) + std::log(double(K));
      EXPECT_NEAR(sum, 1.0, 2 * K * kEps);
      EXPECT_NEAR(lj, expected_lj, 8 * K * kEps * lj_scale) << "K " << K;
    }
  }
}

TEST(Transforms, SimplexJacobianIsThatOfItsFreeCoordinates) {
  for (const int K : {2, 3, 5}) {
    const Transform t = transform("simplex", [K](const auto& u, auto& lj) {
      using S = std::decay_t<decltype(lj)>;
      std::vector<S> x(K);
      myriad::simplex_transform(u, 0, K, x.data(), lj);
      x.resize(K - 1);  // x_K = 1 − Σ: the map's image is the first K − 1 coordinates
      return x;
    });
    for (int p = 0; p < 3; ++p) {
      SCOPED_TRACE("K " + std::to_string(K) + ", point " + std::to_string(p));
      const std::vector<double> u = myriad::testing::standard_normals(43, 10 * K + p, K - 1);
      expect_log_jacobian_matches(t, u, std::vector<double>(K - 1, 1.0));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// float: the same formulas in single precision.

TEST(Transforms, FloatAgreesWithDouble) {
  const std::vector<float> uf = {0.3f, -1.2f, 2.0f};
  const std::vector<double> ur(uf.begin(), uf.end());  // the same values, in double
  float ljf = 0;
  double ljd = 0;
  float xf[3];
  double xd[3];
  myriad::simplex_transform(uf, 0, 3, xf, ljf);
  myriad::simplex_transform(ur, 0, 3, xd, ljd);
  constexpr double kFloatEps = std::numeric_limits<float>::epsilon();
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(xf[k], xd[k], 16 * kFloatEps) << k;
  EXPECT_NEAR(ljf, ljd, 32 * kFloatEps * (1 + std::fabs(ljd)));
  ljf = 0;
  ljd = 0;
  EXPECT_NEAR(myriad::interval_transform(uf[1], 0.0, 1.0, ljf),
              myriad::interval_transform(ur[1], 0.0, 1.0, ljd), 4 * kFloatEps);
  EXPECT_NEAR(ljf, ljd, 8 * kFloatEps * (1 + std::fabs(ljd)));
}

}  // namespace
