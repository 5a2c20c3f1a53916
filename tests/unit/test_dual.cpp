// Tests of the forward-mode dual numbers (core/dual.hpp) and of the generic math of
// core/math.hpp on duals: each function's value and first derivative against its analytic
// derivative, second derivatives through nesting, comparisons and literal mixing.

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "myriad/core/dual.hpp"
#include "myriad/core/dual_vector.hpp"
#include "myriad/core/math.hpp"
#include "myriad/model/concept.hpp"

namespace {

using myriad::Dual;

// Relative tolerances. A double result of at most a few correctly rounded operations and libm
// calls (≤ 1 ulp each in glibc) at well-conditioned points (condition number ≤ 8 at the points
// below) is within 8 · 8 ε of the analytic value; float likewise with ε = FLT_EPSILON.
template <class T>
constexpr double kRelTol = 64 * std::numeric_limits<T>::epsilon();

template <class T>
void expect_close(T actual, double expected, const char* what, double x) {
  const double tol = kRelTol<T> * std::fmax(std::fabs(expected), 1e-300);
  EXPECT_NEAR(double(actual), expected, tol) << what << " at x = " << x;
}

/// One unary function: the dual overload, and its analytic value and derivatives in double.
struct UnaryCase {
  const char* name;
  double (*value)(double);
  double (*first)(double);
  double (*second)(double);
  std::vector<double> points;
};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases = {
      {"exp",
       [](double x) { return std::exp(x); },
       [](double x) { return std::exp(x); },
       [](double x) { return std::exp(x); },
       {-3.0, -0.5, 0.0, 0.7, 4.0}},
      {"log",
       [](double x) { return std::log(x); },
       [](double x) { return 1 / x; },
       [](double x) { return -1 / (x * x); },
       {0.05, 0.5, 2.0, 30.0}},
      {"log1p",
       [](double x) { return std::log1p(x); },
       [](double x) { return 1 / (1 + x); },
       [](double x) { return -1 / ((1 + x) * (1 + x)); },
       {-0.5, 1e-8, 0.3, 5.0}},
      {"expm1",
       [](double x) { return std::expm1(x); },
       [](double x) { return std::exp(x); },
       [](double x) { return std::exp(x); },
       {-2.0, -1e-6, 1e-6, 1.5}},
      {"sqrt",
       [](double x) { return std::sqrt(x); },
       [](double x) { return 0.5 / std::sqrt(x); },
       [](double x) { return -0.25 / (x * std::sqrt(x)); },
       {0.01, 1.0, 2.0, 100.0}},
      {"sin",
       [](double x) { return std::sin(x); },
       [](double x) { return std::cos(x); },
       [](double x) { return -std::sin(x); },
       {-2.0, 0.3, 1.0, 2.5}},
      {"cos",
       [](double x) { return std::cos(x); },
       [](double x) { return -std::sin(x); },
       [](double x) { return -std::cos(x); },
       {-2.5, 0.3, 1.0, 2.0}},
      {"tanh",
       [](double x) { return std::tanh(x); },
       [](double x) { return 1 - std::tanh(x) * std::tanh(x); },
       [](double x) { return -2 * std::tanh(x) * (1 - std::tanh(x) * std::tanh(x)); },
       {-1.5, -0.2, 0.4, 1.0}},
      {"fabs",
       [](double x) { return std::fabs(x); },
       [](double x) { return x < 0 ? -1.0 : 1.0; },
       [](double) { return 0.0; },
       {-3.0, -0.5, 0.25, 2.0}},
      {"square",
       [](double x) { return x * x; },
       [](double x) { return 2 * x; },
       [](double) { return 2.0; },
       {-3.0, 0.5, 2.0}},
      {"pow(x, 3)",
       [](double x) { return x * x * x; },
       [](double x) { return 3 * x * x; },
       [](double x) { return 6 * x; },
       {-1.5, 0.5, 2.0}},
      {"pow(x, 2.5)",
       [](double x) { return std::pow(x, 2.5); },
       [](double x) { return 2.5 * std::pow(x, 1.5); },
       [](double x) { return 3.75 * std::sqrt(x); },
       {0.2, 1.0, 3.0}},
      {"pow(x, -0.5)",
       [](double x) { return 1 / std::sqrt(x); },
       [](double x) { return -0.5 / (x * std::sqrt(x)); },
       [](double x) { return 0.75 / (x * x * std::sqrt(x)); },
       {0.2, 1.0, 3.0}},
      // log(1 + eˣ): derivative σ(x), second derivative σ(x)(1 − σ(x)) = σ(x)σ(−x).
      {"log1p_exp",
       [](double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); },
       sigmoid,
       [](double x) { return sigmoid(x) * sigmoid(-x); },
       {-30.0, -2.0, 0.0, 0.5, 3.0, 40.0}},
  };
  return cases;
}

/// Applies case `name` to a (possibly nested) dual, through myriad's overloads.
template <class S>
S apply(const char* name, const S& x) {
  using myriad::log1p_exp;
  using myriad::square;
  const std::string n = name;
  if (n == "exp") return myriad::exp(x);
  if (n == "log") return myriad::log(x);
  if (n == "log1p") return myriad::log1p(x);
  if (n == "expm1") return myriad::expm1(x);
  if (n == "sqrt") return myriad::sqrt(x);
  if (n == "sin") return myriad::sin(x);
  if (n == "cos") return myriad::cos(x);
  if (n == "tanh") return myriad::tanh(x);
  if (n == "fabs") return myriad::fabs(x);
  if (n == "square") return square(x);
  if (n == "pow(x, 3)") return myriad::pow(x, 3);
  if (n == "pow(x, 2.5)") return myriad::pow(x, 2.5);
  if (n == "pow(x, -0.5)") return myriad::pow(x, -0.5);
  if (n == "log1p_exp") return log1p_exp(x);
  ADD_FAILURE() << "unknown case " << name;
  return x;
}

template <class T>
class DualFunctions : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DualFunctions, Precisions);

TYPED_TEST(DualFunctions, ValueAndFirstDerivativeMatchAnalytic) {
  using T = TypeParam;
  for (const auto& c : unary_cases()) {
    for (double x : c.points) {
      if (std::is_same<T, float>::value && std::fabs(x) < 1e-5) continue;  // below float's grid
      const T xt = T(x);
      // Seed dx = 1: f(x + ε) = f(x) + f'(x) ε.
      const Dual<T> f = apply(c.name, Dual<T>(xt, T(1)));
      expect_close<T>(f.val, c.value(double(xt)), c.name, x);
      expect_close<T>(f.eps, c.first(double(xt)), c.name, x);
      // The tangent is linear in the seed.
      const Dual<T> g = apply(c.name, Dual<T>(xt, T(-2)));
      expect_close<T>(g.eps, -2 * c.first(double(xt)), c.name, x);
    }
  }
}

TYPED_TEST(DualFunctions, NestedDualsGiveSecondDerivative) {
  using T = TypeParam;
  using D2 = Dual<Dual<T>>;
  for (const auto& c : unary_cases()) {
    for (double x : c.points) {
      if (std::is_same<T, float>::value && std::fabs(x) < 1e-5) continue;
      const T xt = T(x);
      // x + ε₁ + ε₂: the ε₁ε₂ coefficient of f is f''(x); both single tangents are f'(x).
      const D2 seeded(Dual<T>(xt, T(1)), Dual<T>(T(1), T(0)));
      const D2 f = apply(c.name, seeded);
      expect_close<T>(f.val.val, c.value(double(xt)), c.name, x);
      expect_close<T>(f.val.eps, c.first(double(xt)), c.name, x);
      expect_close<T>(f.eps.val, c.first(double(xt)), c.name, x);
      expect_close<T>(f.eps.eps, c.second(double(xt)), c.name, x);
    }
  }
}

TYPED_TEST(DualFunctions, NormalLogDensityPartials) {
  using T = TypeParam;
  // log N(x; μ, σ) = −½ log 2π − log σ − z²/2, z = (x − μ)/σ:
  // ∂/∂x = −z/σ, ∂/∂μ = z/σ, ∂/∂σ = (z² − 1)/σ, ∂²/∂x² = −1/σ², ∂²/∂σ² = (1 − 3z²)/σ².
  const double points[][3] = {{0.3, -1.0, 2.0}, {-4.0, 0.5, 0.7}, {1.0, 1.0, 1.0}};
  for (const auto& p : points) {
    const T x = T(p[0]), mu = T(p[1]), sigma = T(p[2]);
    const double xd = x, mud = mu, sd = sigma;
    const double z = (xd - mud) / sd;
    const double value = -0.5 * std::log(2 * M_PI) - std::log(sd) - 0.5 * z * z;
    const auto fx = myriad::normal_log_density(Dual<T>(x, T(1)), mu, sigma);
    const auto fm = myriad::normal_log_density(x, Dual<T>(mu, T(1)), sigma);
    const auto fs = myriad::normal_log_density(x, mu, Dual<T>(sigma, T(1)));
    static_assert(std::is_same<std::decay_t<decltype(fx)>, Dual<T>>::value, "dual result");
    expect_close<T>(fx.val, value, "normal value", xd);
    expect_close<T>(fx.eps, -z / sd, "normal d/dx", xd);
    expect_close<T>(fm.eps, z / sd, "normal d/dmu", xd);
    expect_close<T>(fs.eps, (z * z - 1) / sd, "normal d/dsigma", xd);
    expect_close<T>(myriad::normal_log_density(x, mu, sigma), value, "plain value", xd);

    using D2 = Dual<Dual<T>>;
    const auto fxx =
        myriad::normal_log_density(D2(Dual<T>(x, T(1)), Dual<T>(T(1), T(0))), mu, sigma);
    expect_close<T>(fxx.eps.eps, -1 / (sd * sd), "normal d2/dx2", xd);
    const auto fss =
        myriad::normal_log_density(x, mu, D2(Dual<T>(sigma, T(1)), Dual<T>(T(1), T(0))));
    expect_close<T>(fss.eps.eps, (1 - 3 * z * z) / (sd * sd), "normal d2/dsigma2", xd);
  }
}

TYPED_TEST(DualFunctions, ArithmeticFollowsSumProductAndQuotientRules) {
  using T = TypeParam;
  const Dual<T> a(T(3), T(1.5)), b(T(-2), T(0.25));
  const double av = 3, ae = 1.5, bv = -2, be = 0.25;
  expect_close<T>((a + b).eps, ae + be, "a + b", av);
  expect_close<T>((a - b).eps, ae - be, "a - b", av);
  expect_close<T>((-a).eps, -ae, "-a", av);
  expect_close<T>((+a).eps, ae, "+a", av);
  expect_close<T>((a * b).val, av * bv, "a * b value", av);
  expect_close<T>((a * b).eps, ae * bv + av * be, "a * b", av);
  expect_close<T>((a / b).val, av / bv, "a / b value", av);
  expect_close<T>((a / b).eps, (ae * bv - av * be) / (bv * bv), "a / b", av);
  Dual<T> c = a;
  c += b;
  expect_close<T>(c.eps, ae + be, "+=", av);
  c = a;
  c -= b;
  expect_close<T>(c.eps, ae - be, "-=", av);
  c = a;
  c *= b;
  expect_close<T>(c.eps, ae * bv + av * be, "*=", av);
  c = a;
  c /= b;
  expect_close<T>(c.eps, (ae * bv - av * be) / (bv * bv), "/=", av);
}

TEST(DualNested, MixedPartialOfTwoVariables) {
  // f(x, y) = x y eˣ + sin(x y): ∂²f/∂x∂y = eˣ(1 + x) + cos(xy) − xy sin(xy).
  using D2 = Dual<Dual<double>>;
  const double x0 = 0.7, y0 = -1.3;
  const D2 x(Dual<double>(x0, 1), Dual<double>(0, 0));  // inner tangent marks x
  const D2 y(Dual<double>(y0, 0), Dual<double>(1, 0));  // outer tangent marks y
  const D2 f = x * y * myriad::exp(x) + myriad::sin(x * y);
  const double xy = x0 * y0;
  EXPECT_NEAR(f.val.eps, y0 * std::exp(x0) * (1 + x0) + y0 * std::cos(xy), 1e-14);
  EXPECT_NEAR(f.eps.val, x0 * std::exp(x0) + x0 * std::cos(xy), 1e-14);
  EXPECT_NEAR(f.eps.eps, std::exp(x0) * (1 + x0) + std::cos(xy) - xy * std::sin(xy), 1e-14);
  static_assert(std::is_same<decltype(myriad::value_of(f)), double>::value,
                "value_of unwraps every nesting level");
  EXPECT_EQ(myriad::value_of(f), f.val.val);
}

TEST(DualNested, ThirdDerivativeByTripleNesting) {
  // d³/dx³ [x⁴ log x] = 24 x log x + 26 x.
  using D1 = Dual<double>;
  using D2 = Dual<D1>;
  using D3 = Dual<D2>;
  const double x0 = 1.7;
  const D3 x(D2(D1(x0, 1), D1(1, 0)), D2(D1(1, 0), D1(0, 0)));  // x0 + ε₁ + ε₂ + ε₃
  const D3 f = myriad::pow(x, 4) * myriad::log(x);
  EXPECT_NEAR(f.eps.eps.eps, 24 * x0 * std::log(x0) + 26 * x0, 1e-12);
}

TEST(DualIsFinite, LooksAtValueAndTangent) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(myriad::isfinite(Dual<double>(1, 2)));
  EXPECT_FALSE(myriad::isfinite(Dual<double>(inf, 0)));
  EXPECT_FALSE(myriad::isfinite(Dual<double>(1, nan)));
  EXPECT_FALSE(myriad::isfinite(Dual<float>(1.0f, std::numeric_limits<float>::infinity())));
  // sqrt at 0 has an infinite derivative: the dual reports it as non-finite.
  EXPECT_FALSE(myriad::isfinite(myriad::sqrt(Dual<double>(0, 1))));
}

TYPED_TEST(DualFunctions, ComparisonsUseValuesOnly) {
  using T = TypeParam;
  const Dual<T> a(T(1), T(100)), b(T(2), T(-100));
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(b > a);
  EXPECT_TRUE(a <= b);
  EXPECT_TRUE(b >= a);
  EXPECT_FALSE(a > b);
  EXPECT_FALSE(b <= a);
  const Dual<T> c(T(1), T(-7));  // same value as a, different tangent
  EXPECT_TRUE(a <= c);
  EXPECT_TRUE(a >= c);
  EXPECT_FALSE(a < c);
  EXPECT_TRUE(a == c);
  EXPECT_FALSE(a != c);
  EXPECT_TRUE(a != b);
  // Against literals of either type.
  EXPECT_TRUE(a < 2);
  EXPECT_TRUE(a < 1.5);
  EXPECT_TRUE(2 > a);
  EXPECT_TRUE(0.5 < a);
  EXPECT_TRUE(a == 1);
  EXPECT_TRUE(1.0 == a);
  EXPECT_TRUE(a != 0);
  // Nested duals compare their innermost values.
  using D2 = Dual<Dual<T>>;
  EXPECT_TRUE(D2(Dual<T>(T(1), T(5)), Dual<T>(T(9), T(9))) < 1.5);
  EXPECT_TRUE(D2(Dual<T>(T(1), T(5)), Dual<T>(T(9), T(9))) == 1);
}

TYPED_TEST(DualFunctions, LiteralsMixWithDuals) {
  using T = TypeParam;
  using D = Dual<T>;
  const D x(T(3), T(1));
  static_assert(std::is_same<decltype(x * 2), D>::value, "int literal keeps the dual type");
  static_assert(std::is_same<decltype(2.0 * x), D>::value, "double literal keeps the dual type");
  static_assert(std::is_same<decltype(x + 1.0f), D>::value, "float literal keeps the dual type");
  EXPECT_EQ((x * 2).val, T(6));
  EXPECT_EQ((x * 2).eps, T(2));
  EXPECT_EQ((2 * x).eps, T(2));
  EXPECT_EQ((x + 1.5).val, T(4.5));
  EXPECT_EQ((x + 1.5).eps, T(1));
  EXPECT_EQ((1 - x).val, T(-2));
  EXPECT_EQ((1 - x).eps, T(-1));
  EXPECT_EQ((x / 2).eps, T(0.5));
  expect_close<T>((2.0 / x).eps, -2.0 / 9.0, "2 / x", 3);
  expect_close<T>((x - 0.25).val, 2.75, "x - 0.25", 3);
  D y = x;
  y += 1;
  y *= 2.0;
  y -= 1;
  y /= 2;
  EXPECT_EQ(y.val, T(3.5));  // ((3 + 1)·2 − 1)/2
  EXPECT_EQ(y.eps, T(1));    // (1·2)/2

  using D2 = Dual<D>;
  const D2 z(D(T(3), T(1)), D(T(1), T(0)));
  const D2 w = 2 * z * z + 1.0 - z / 2;  // 2z² + 1 − z/2: first 4z − ½, second 4
  EXPECT_EQ(w.val.val, T(2 * 9 + 1 - 1.5));
  EXPECT_EQ(w.val.eps, T(11.5));
  EXPECT_EQ(w.eps.eps, T(4));
  const D2 mixed = z * D(T(2), T(0));  // a dual of the inner level lifts into the outer one
  EXPECT_EQ(mixed.val.eps, T(2));
}

TEST(DualLayout, TriviallyCopyable) {
  static_assert(std::is_trivially_copyable<Dual<float>>::value, "Dual<float>");
  static_assert(std::is_trivially_copyable<Dual<Dual<double>>>::value, "Dual<Dual<double>>");
  static_assert(sizeof(Dual<double>) == 2 * sizeof(double), "no padding");
  SUCCEED();
}

}  // namespace

// A scalar type of a user's own (docs/writing-models.md, "Writing a model"): the library's
// branching functions read its value through value_of and call exp and log1p on it, all found
// by argument-dependent lookup in the user's namespace. This one counts the calls it receives.
namespace user_scalar {
struct Scalar {
  double v;
};
inline int calls = 0;
inline double value_of(const Scalar& s) {
  ++calls;
  return s.v;
}
inline Scalar exp(const Scalar& s) { return {std::exp(s.v)}; }
inline Scalar log1p(const Scalar& s) { return {std::log1p(s.v)}; }
inline Scalar operator-(const Scalar& s) { return {-s.v}; }
inline Scalar operator+(const Scalar& a, const Scalar& b) { return {a.v + b.v}; }
}  // namespace user_scalar

namespace {
TEST(UserScalar, Log1pExpFindsTheUsersFunctions) {
  using user_scalar::Scalar;
  user_scalar::calls = 0;
  for (const double x : {-40.0, -1.5, 0.0, 2.0, 50.0})
    EXPECT_NEAR(myriad::log1p_exp(Scalar{x}).v, myriad::log1p_exp(x), 1e-15 * (1 + std::fabs(x)));
  EXPECT_EQ(user_scalar::calls, 5) << "one branch on the value per call";
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Vector-mode duals (core/dual_vector.hpp): each tangent is the scalar dual's with that seed,
// bit for bit, and chunked gradients are the one-tangent gradients.

namespace {

TYPED_TEST(DualFunctions, VectorTangentsAreTheScalarDualsBitForBit) {
  using T = TypeParam;
  const T seeds[3] = {T(1), T(-2), T(0.5)};
  for (const auto& c : unary_cases()) {
    for (double x : c.points) {
      myriad::DualVector<T, 3> v{T(x)};
      for (int k = 0; k < 3; ++k) v.eps[k] = seeds[k];
      const myriad::DualVector<T, 3> f = apply(c.name, v);
      for (int k = 0; k < 3; ++k) {
        const myriad::Dual<T> scalar = apply(c.name, myriad::Dual<T>(T(x), seeds[k]));
        EXPECT_EQ(f.val, scalar.val) << c.name << " at " << x;
        EXPECT_EQ(f.eps[k], scalar.eps) << c.name << " at " << x << ", tangent " << k;
      }
    }
  }
}

TYPED_TEST(DualFunctions, VectorArithmeticAndComparisons) {
  using T = TypeParam;
  using V = myriad::DualVector<T, 2>;
  V a(T(3)), b(T(-1.5));
  a.eps[0] = T(1);
  b.eps[1] = T(1);
  // f(a, b) = (a·b − a/b + 2)·(−a): ∂f/∂a = −(2ab − 2a/b + 2), ∂f/∂b = −a(a + a/b²).
  const V f = (a * b - a / b + 2) * (-a);
  const double av = 3, bv = -1.5;
  EXPECT_NEAR(double(f.val), -(av * bv - av / bv + 2) * av, 1e-5);
  EXPECT_NEAR(double(f.eps[0]), -(2 * av * bv - 2 * av / bv + 2), 1e-5);
  EXPECT_NEAR(double(f.eps[1]), -av * (av + av / (bv * bv)), 1e-5);
  EXPECT_TRUE(b < a);
  EXPECT_TRUE(a == V(T(3)));  // values only
  EXPECT_FALSE(myriad::isfinite(a / V(T(0))));
}

/// A model with only a generic log density (no gradient member), coupling every coordinate.
struct CoupledDensity {
  int dimension;
  int dim() const { return dimension; }
  template <class Vec>
  auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum = S(0), previous = S(0.3);
    for (int i = 0; i < dimension; ++i) {
      sum += myriad::log1p_exp(x[i] * previous) - 0.5 * x[i] * x[i] + myriad::sin(x[i]);
      previous = x[i];
    }
    return sum * myriad::exp(S(0.1) * previous);
  }
};

TEST(DualVectorGradient, ChunkedPassesGiveTheOneTangentGradient) {
  for (int dim : {1, 2, 3, 4, 5, 8, 9, 17}) {
    const CoupledDensity model{dim};
    std::vector<double> x(dim), by_duals(dim), by_chunks(dim), by_default(dim);
    for (int i = 0; i < dim; ++i) x[i] = 0.4 * i - 1.1;
    const double lp = myriad::gradient_by_duals(model, x, by_duals, dim);
    EXPECT_EQ(myriad::gradient_by_dual_vectors<3>(model, x, by_chunks, dim), lp);
    EXPECT_EQ(by_chunks, by_duals) << "dim " << dim;
    EXPECT_EQ(myriad::log_density_and_gradient(model, x, by_default), lp);
    EXPECT_EQ(by_default, by_duals) << "dim " << dim;
  }
}

/// A model that asks for one scalar-dual pass per dimension.
struct ScalarDualDensity : CoupledDensity {
  static constexpr int dual_chunk = 1;
};

TEST(DualVectorGradient, AModelMayChooseItsChunk) {
  const ScalarDualDensity model{{6}};
  std::vector<double> x{0.1, -0.2, 0.3, 0.4, -0.5, 0.6}, a(6), b(6);
  EXPECT_EQ(myriad::log_density_and_gradient(model, x, a),
            myriad::gradient_by_duals(model, x, b, 6));
  EXPECT_EQ(a, b);
}

}  // namespace
