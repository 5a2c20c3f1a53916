// Tests of the adaptive Dormand–Prince 5(4) solver (include/myriad/model/ode_rk45.hpp): the
// tableau against the Runge–Kutta order conditions, the orders of the local error and of its
// estimate, solutions against closed forms (exponential decay, the harmonic oscillator, logistic
// growth) within bounds derived from the error control, the global error proportional to the
// tolerance, derivatives through duals (the discrete solution's, exactly, and the exact
// sensitivity's within a derived bound), the same mesh for every scalar type, and failures
// reported as a status.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "myriad/core/dual.hpp"
#include "myriad/core/dual_vector.hpp"
#include "myriad/model/ode_rk45.hpp"

namespace {

using myriad::Dual;
using myriad::DualVector;
using myriad::integrate_rk45;
using myriad::OdeStatus;
using myriad::Rk45Result;
using myriad::Rk45Settings;

constexpr double kEps = 2.220446049250313e-16;

/// Records the values (first component's value and whole state) seen at the output times.
template <class S, int N = 1>
struct Recorder {
  std::vector<std::vector<S>> states;
  std::vector<int> indices;
  void operator()(int i, const S* y) {
    indices.push_back(i);
    states.emplace_back(y, y + N);
  }
};

/// y' = −k y: y(t) = y0 e^{−k t}. K may be a dual (a parameter to differentiate).
template <class K>
struct Decay {
  K k;
  template <class S>
  void operator()(double, const S* y, S* dydt) const {
    dydt[0] = -S(k) * y[0];
  }
};

/// y1' = y2, y2' = −y1: (cos t, −sin t) from (1, 0).
struct Oscillator {
  template <class S>
  void operator()(double, const S* y, S* dydt) const {
    dydt[0] = y[1];
    dydt[1] = -y[0];
  }
};

/// y' = r y (1 − y/K): y(t) = K / (1 + (K/y0 − 1) e^{−r t}).
struct Logistic {
  double r, capacity;
  template <class S>
  void operator()(double, const S* y, S* dydt) const {
    dydt[0] = S(r) * y[0] * (S(1) - y[0] / S(capacity));
  }
  double exact(double y0, double t) const {
    return capacity / (1 + (capacity / y0 - 1) * std::exp(-r * t));
  }
  double slope(double y) const { return r * y * (1 - y / capacity); }
};

/// y' = cos(t) y: y(t) = e^{sin t} (non-autonomous, so the nodes c_i matter).
struct CosineGrowth {
  template <class S>
  void operator()(double t, const S* y, S* dydt) const {
    dydt[0] = S(std::cos(t)) * y[0];
  }
};

Rk45Settings tolerances(double rtol, double atol, int max_steps = 10000) {
  Rk45Settings s;
  s.rtol = rtol;
  s.atol = atol;
  s.max_steps = max_steps;
  return s;
}

// ---------------------------------------------------------------------------------------------
// The tableau.

TEST(OdeRk45, TableauSatisfiesTheOrderConditions) {
  namespace dp = myriad::dopri5;
  // Stages 1 … 7; row 7 of a is b (FSAL), c_7 = 1.
  const double c[7] = {0, dp::c2, dp::c3, dp::c4, dp::c5, 1, 1};
  const double a[7][7] = {{0},
                          {dp::a21},
                          {dp::a31, dp::a32},
                          {dp::a41, dp::a42, dp::a43},
                          {dp::a51, dp::a52, dp::a53, dp::a54},
                          {dp::a61, dp::a62, dp::a63, dp::a64, dp::a65},
                          {dp::b1, 0, dp::b3, dp::b4, dp::b5, dp::b6}};
  const double b[7] = {dp::b1, 0, dp::b3, dp::b4, dp::b5, dp::b6, 0};
  const double e[7] = {dp::e1, 0, dp::e3, dp::e4, dp::e5, dp::e6, dp::e7};
  double b_hat[7];
  for (int i = 0; i < 7; ++i) b_hat[i] = b[i] - e[i];

  // Row sums: c_i = Σ_j a_ij (the stages are consistent in time).
  for (int i = 0; i < 7; ++i) {
    double sum = 0;
    for (int j = 0; j < 7; ++j) sum += a[i][j];
    EXPECT_NEAR(sum, c[i], 8 * kEps) << "row " << i + 1;
  }
  using Vec = std::vector<double>;
  auto times = [&](const Vec& u, const Vec& v) {
    Vec w(7);
    for (int i = 0; i < 7; ++i) w[i] = u[i] * v[i];
    return w;
  };
  auto apply_a = [&](const Vec& v) {  // (A v)_i = Σ_j a_ij v_j
    Vec w(7, 0.0);
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 7; ++j) w[i] += a[i][j] * v[j];
    return w;
  };
  auto weigh = [&](const double* weights, const Vec& v) {
    double s = 0;
    for (int i = 0; i < 7; ++i) s += weights[i] * v[i];
    return s;
  };
  const Vec one(7, 1.0), cv(c, c + 7);
  const Vec c2 = times(cv, cv), c3 = times(c2, cv), c4 = times(c3, cv);
  const Vec ac = apply_a(cv), ac2 = apply_a(c2), aac = apply_a(ac);
  // The rooted trees up to order 5 (Butcher, "Numerical Methods for ODEs", §31; HNW I, Table
  // II.2.2): Σ b Φ(τ) = 1/γ(τ).
  struct Condition {
    Vec phi;
    double value;
    int order;
  };
  const std::vector<Condition> conditions = {
      {one, 1.0, 1},
      {cv, 1.0 / 2, 2},
      {c2, 1.0 / 3, 3},
      {ac, 1.0 / 6, 3},
      {c3, 1.0 / 4, 4},
      {times(cv, ac), 1.0 / 8, 4},
      {ac2, 1.0 / 12, 4},
      {aac, 1.0 / 24, 4},
      {c4, 1.0 / 5, 5},
      {times(c2, ac), 1.0 / 10, 5},
      {times(ac, ac), 1.0 / 20, 5},
      {times(cv, ac2), 1.0 / 15, 5},
      {times(cv, aac), 1.0 / 30, 5},
      {apply_a(c3), 1.0 / 20, 5},
      {apply_a(times(cv, ac)), 1.0 / 40, 5},
      {apply_a(ac2), 1.0 / 60, 5},
      {apply_a(aac), 1.0 / 120, 5},
  };
  // Sums of a few dozen products of coefficients below 50 in magnitude: 1e-13 is ~450 ε, while a
  // wrong digit in any coefficient breaks some condition by far more.
  for (std::size_t q = 0; q < conditions.size(); ++q) {
    EXPECT_NEAR(weigh(b, conditions[q].phi), conditions[q].value, 1e-13) << "b, tree " << q;
    if (conditions[q].order <= 4) {
      EXPECT_NEAR(weigh(b_hat, conditions[q].phi), conditions[q].value, 1e-13)
          << "b_hat, tree " << q;
    }
  }
  // b̂ is of order 4 exactly: it fails Σ b̂ c⁴ = 1/5 (else the estimate would vanish).
  EXPECT_GT(std::fabs(weigh(b_hat, c4) - 0.2), 1e-4);
}

TEST(OdeRk45, LocalErrorIsOrderSixAndItsEstimateOrderFive) {
  // One step from t = 0.3 on y' = cos(t) y. The fifth-order solution's local error is C h⁶ (1 +
  // O(h)), the estimate y5 − y4 is C' h⁵ (1 + O(h)): halving h divides them by 64 and 32, up to
  // a relative change of the next term, α h/2 with α = O(1) here (the derivatives of e^{sin t}
  // are O(1)): at h = 0.1 that moves the observed order by ≲ αh/(2 ln 2) < 0.1. The errors
  // (≥ 3e-12) stay far above rounding (~1e-16 of y ≈ 1.3).
  const CosineGrowth f;
  const double t = 0.3;
  double local[2], estimate[2];
  const double steps[2] = {0.1, 0.05};
  for (int s = 0; s < 2; ++s) {
    double y[1] = {std::exp(std::sin(t))}, k[7][1], y_new[1], error[1];
    f(t, y, k[0]);
    myriad::dopri5_step<1>(f, 1, t, steps[s], y, k, y_new, error);
    local[s] = std::fabs(y_new[0] - std::exp(std::sin(t + steps[s])));
    estimate[s] = std::fabs(error[0]);
    // FSAL: the last stage is f at the new point.
    EXPECT_DOUBLE_EQ(k[6][0], std::cos(t + steps[s]) * y_new[0]);
  }
  EXPECT_NEAR(std::log2(local[0] / local[1]), 6.0, 0.1);
  EXPECT_NEAR(std::log2(estimate[0] / estimate[1]), 5.0, 0.1);
}

// ---------------------------------------------------------------------------------------------
// Closed-form solutions.
//
// The bound. Each accepted step's fourth-order estimate is within its scale, |e_i| ≤ √n ·
// (atol + rtol·max|y|) (the RMS norm ≤ 1), and the propagated fifth-order solution's local error
// is below the estimate (asymptotically, by a factor O(h)). A perturbation δ at t is carried to
// T by the flow's derivative, ‖∂y(T)/∂y(t)‖ ≤ G; hence the global error is at most
// G · steps · √n · (atol + rtol·max|y|). G = 1 for a contractive system (decay) and for an
// isometric one (the oscillator in the Euclidean norm); for a scalar autonomous equation
// ∂y(T)/∂y(t) = f(y(T))/f(y(t)) (the variational equation s' = f'(y) s solved by s = f(y)).

TEST(OdeRk45, ExponentialDecayWithinTheSumOfLocalTolerances) {
  const std::vector<double> times = {0.0, 0.5, 1, 2, 3.5, 5, 7.5, 10};
  const Decay<double> f{0.7};
  for (double rtol : {1e-4, 1e-6, 1e-8, 1e-10, 1e-12}) {
    SCOPED_TRACE(rtol);
    const Rk45Settings settings = tolerances(rtol, 1e-2 * rtol);
    double y[1] = {2.0};
    Recorder<double> seen;
    const Rk45Result result = integrate_rk45<1>(f, 1, 0.0, y, times.data(),
                                                static_cast<int>(times.size()), seen, settings);
    ASSERT_TRUE(result.ok());
    ASSERT_EQ(seen.states.size(), times.size());
    const double bound = result.accepted * (settings.atol + settings.rtol * 2.0);
    for (std::size_t i = 0; i < times.size(); ++i) {
      EXPECT_EQ(seen.indices[i], static_cast<int>(i));
      EXPECT_NEAR(seen.states[i][0], 2.0 * std::exp(-0.7 * times[i]), bound) << "t " << times[i];
    }
    EXPECT_EQ(seen.states[0][0], 2.0);  // t0 itself is observed without a step
    EXPECT_EQ(y[0], seen.states.back()[0]);
  }
}

TEST(OdeRk45, GlobalErrorIsProportionalToTheTolerance) {
  // Error per step held to tol with a fourth-order estimate: h ∝ tol^(1/5), local errors of the
  // propagated fifth-order solution O(h⁶) over O(1/h) steps, so the global error is O(tol)
  // (HNW I, §II.4, "tolerance proportionality"), and the number of steps grows as tol^(−1/5).
  // Over six decades the fitted exponents are within 0.1 of 1 and of 1/5: the step counts are
  // integers (≈ 30 to 400 here) and the steps landing on output times are not controlled, which
  // perturbs each by a few percent, far less than the 10^0.6 = 4 that 0.1 in an exponent allows.
  const std::vector<double> times = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const Decay<double> f{0.7};
  double error[2];
  int steps[2];
  const double rtols[2] = {1e-6, 1e-12};
  for (int r = 0; r < 2; ++r) {
    double y[1] = {1.0};
    Recorder<double> seen;
    const Rk45Result result =
        integrate_rk45<1>(f, 1, 0.0, y, times.data(), static_cast<int>(times.size()), seen,
                          tolerances(rtols[r], 1e-2 * rtols[r]));
    ASSERT_TRUE(result.ok());
    error[r] = 0;
    for (std::size_t i = 0; i < times.size(); ++i)
      error[r] = std::max(error[r], std::fabs(seen.states[i][0] - std::exp(-0.7 * times[i])));
    steps[r] = result.accepted + result.rejected;
  }
  const double decades = std::log10(rtols[0] / rtols[1]);
  EXPECT_NEAR(std::log10(error[0] / error[1]) / decades, 1.0, 0.1);
  EXPECT_NEAR(std::log10(double(steps[1]) / steps[0]) / decades, 0.2, 0.1);
}

TEST(OdeRk45, HarmonicOscillatorOverThreePeriods) {
  std::vector<double> times;
  for (int i = 1; i <= 40; ++i) times.push_back(0.5 * i);  // t up to 20 ≈ 3.2 periods
  const Oscillator f;
  for (double rtol : {1e-6, 1e-9, 1e-12}) {
    SCOPED_TRACE(rtol);
    const Rk45Settings settings = tolerances(rtol, rtol);
    double y[2] = {1.0, 0.0};
    Recorder<double, 2> seen;
    const Rk45Result result = integrate_rk45<2>(f, 2, 0.0, y, times.data(),
                                                static_cast<int>(times.size()), seen, settings);
    ASSERT_TRUE(result.ok());
    // The flow is a rotation: G = 1 in the Euclidean norm; max|y| = 1; n = 2.
    const double bound = result.accepted * std::sqrt(2.0) * (settings.atol + settings.rtol);
    for (std::size_t i = 0; i < times.size(); ++i) {
      const double d0 = seen.states[i][0] - std::cos(times[i]);
      const double d1 = seen.states[i][1] + std::sin(times[i]);
      EXPECT_LE(std::hypot(d0, d1), bound) << "t " << times[i];
    }
  }
}

TEST(OdeRk45, LogisticGrowthThroughItsInflection) {
  // From y0 = K/10 through the inflection at K/2 to near K: errors made early are amplified by
  // G(t_n, T) = f(y(T))/f(y(t_n)) ≤ max(1, f(y(T))/f(y0)), f(y(t)) being unimodal along the
  // monotone solution (the bound's minimum of f(y(t)) over [0, T] is at an end).
  const Logistic f{1.5, 4.0};
  const double y0 = 0.4;
  std::vector<double> times;
  for (int i = 1; i <= 16; ++i) times.push_back(0.5 * i);
  for (double rtol : {1e-6, 1e-9, 1e-12}) {
    SCOPED_TRACE(rtol);
    const Rk45Settings settings = tolerances(rtol, 1e-2 * rtol);
    double y[1] = {y0};
    Recorder<double> seen;
    const Rk45Result result = integrate_rk45<1>(f, 1, 0.0, y, times.data(),
                                                static_cast<int>(times.size()), seen, settings);
    ASSERT_TRUE(result.ok());
    const double per_step = settings.atol + settings.rtol * f.capacity;
    for (std::size_t i = 0; i < times.size(); ++i) {
      const double exact = f.exact(y0, times[i]);
      const double growth = std::max(1.0, f.slope(exact) / f.slope(y0));
      EXPECT_NEAR(seen.states[i][0], exact, result.accepted * per_step * growth)
          << "t " << times[i];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Derivatives.

TEST(OdeRk45, DualsGiveTheDiscreteSolutionsDerivative) {
  // y' = −k y from y0 with tangents in (k, y0). The method is linear in y0 on a fixed mesh
  // (y_N = Π_n R(−k h_n) y0), so ∂y_N/∂y0 = y_N / y0 exactly up to rounding: the derivative of
  // the discrete solution, not of the exact one (e^{−kT}, different at the tolerance's order).
  // ∂y_N/∂k approximates −T y0 e^{−kT}: the tangent is the same method applied, on y's mesh, to
  // s' = −k s − y. With y⁽⁶⁾ = k⁶ y and s⁽⁶⁾ = −k⁵(kt − 6) y, its local errors are |t − 6/k|
  // times y's, and y's errors drive s's (e_s' = −k e_s − e_y); so |tangent − exact| ≤
  // (max(T, 6/k) + T) · steps · (atol + rtol·y0).
  const double k = 0.7, y0 = 2.0, T = 10.0;
  const double times[3] = {1.0, 4.0, T};
  const Rk45Settings settings = tolerances(1e-8, 1e-10);
  using D2 = DualVector<double, 2>;
  D2 kd(k), yd(y0);
  kd.eps[0] = 1;
  yd.eps[1] = 1;
  D2 y[1] = {yd};
  Recorder<D2> seen;
  const Rk45Result result = integrate_rk45<1>(Decay<D2>{kd}, 1, 0.0, y, times, 3, seen, settings);
  ASSERT_TRUE(result.ok());
  const double yN = y[0].val;
  EXPECT_NEAR(y[0].eps[1], yN / y0, 4 * result.accepted * kEps * (yN / y0));
  const double bound =
      (std::max(T, 6 / k) + T) * result.accepted * (settings.atol + settings.rtol * y0);
  EXPECT_NEAR(y[0].eps[0], -T * y0 * std::exp(-k * T), bound);
  EXPECT_LT(std::fabs(y[0].eps[0] + T * y0 * std::exp(-k * T)), 1e-6);  // and not vacuously
  // Decisions on values: the plain solve takes the same steps to the same value, bit for bit.
  double plain[1] = {y0};
  Recorder<double> plain_seen;
  const Rk45Result plain_result =
      integrate_rk45<1>(Decay<double>{k}, 1, 0.0, plain, times, 3, plain_seen, settings);
  EXPECT_EQ(plain_result.accepted, result.accepted);
  EXPECT_EQ(plain_result.rejected, result.rejected);
  EXPECT_EQ(plain[0], yN);
}

TEST(OdeRk45, EveryScalarTypeTakesTheSameMesh) {
  // Logistic growth with a rejected step or two on the way (a large first guess).
  const Logistic f{1.5, 4.0};
  const double times[4] = {0.5, 2, 2, 8};  // a repeated time is observed twice, no step between
  Rk45Settings settings = tolerances(1e-9, 1e-11);
  settings.initial_step = 2.0;
  double y[1] = {0.4};
  Recorder<double> seen;
  const Rk45Result plain = integrate_rk45<1>(f, 1, 0.0, y, times, 4, seen, settings);
  ASSERT_TRUE(plain.ok());
  EXPECT_GT(plain.rejected, 0);
  ASSERT_EQ(seen.states.size(), 4u);
  EXPECT_EQ(seen.states[1][0], seen.states[2][0]);

  Dual<double> yd[1] = {Dual<double>(0.4, 1.0)};
  Recorder<Dual<double>> seen_dual;
  const Rk45Result dual = integrate_rk45<1>(f, 1, 0.0, yd, times, 4, seen_dual, settings);
  DualVector<double, 3> yv[1] = {DualVector<double, 3>(0.4)};
  yv[0].eps[1] = 1;
  Recorder<DualVector<double, 3>> seen_vector;
  const Rk45Result vector = integrate_rk45<1>(f, 1, 0.0, yv, times, 4, seen_vector, settings);
  Dual<Dual<double>> yn[1] = {Dual<Dual<double>>(Dual<double>(0.4, 1.0), Dual<double>(1.0, 0.0))};
  Recorder<Dual<Dual<double>>> seen_nested;
  const Rk45Result nested = integrate_rk45<1>(f, 1, 0.0, yn, times, 4, seen_nested, settings);
  for (const Rk45Result* r : {&dual, &vector, &nested}) {
    EXPECT_EQ(r->accepted, plain.accepted);
    EXPECT_EQ(r->rejected, plain.rejected);
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(seen_dual.states[i][0].val, seen.states[i][0]);
    EXPECT_EQ(seen_vector.states[i][0].val, seen.states[i][0]);
    EXPECT_EQ(seen_nested.states[i][0].val.val, seen.states[i][0]);
    // The scalar dual's tangent and the vector dual's seeded one: the same operations.
    EXPECT_EQ(seen_vector.states[i][0].eps[1], seen_dual.states[i][0].eps);
    EXPECT_EQ(seen_vector.states[i][0].eps[0], 0.0);
    EXPECT_EQ(seen_nested.states[i][0].val.eps, seen_dual.states[i][0].eps);
  }
}

// ---------------------------------------------------------------------------------------------
// Failures are statuses.

struct Blowup {  // y' = y², y(0) = 1: y = 1/(1 − t), infinite at t = 1
  template <class S>
  void operator()(double, const S* y, S* dydt) const {
    dydt[0] = y[0] * y[0];
  }
};

struct NotANumber {
  template <class S>
  void operator()(double, const S*, S* dydt) const {
    dydt[0] = S(std::nan(""));
  }
};

TEST(OdeRk45, FailuresAreReportedNotThrown) {
  const double times[3] = {0.5, 0.9, 2.0};
  {
    // Through the singularity: the solution is followed to t = 0.9, then the steps shrink until
    // the attempts or the resolution of t run out.
    double y[1] = {1.0};
    Recorder<double> seen;
    const Rk45Result r =
        integrate_rk45<1>(Blowup{}, 1, 0.0, y, times, 3, seen, tolerances(1e-8, 1e-10, 100000));
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(r.status == OdeStatus::step_size_underflow || r.status == OdeStatus::non_finite ||
                r.status == OdeStatus::too_many_steps)
        << static_cast<int>(r.status);
    ASSERT_EQ(seen.states.size(), 2u);
    EXPECT_NEAR(seen.states[1][0], 10.0, 1e-5);
  }
  {
    double y[1] = {1.0};
    Recorder<double> seen;
    const Rk45Result r = integrate_rk45<1>(Decay<double>{0.7}, 1, 0.0, y, times, 3, seen,
                                           tolerances(1e-8, 1e-10, 5));
    EXPECT_EQ(r.status, OdeStatus::too_many_steps);
    EXPECT_EQ(r.accepted + r.rejected, 5);
    EXPECT_LT(seen.states.size(), 3u);
  }
  {
    double y[1] = {1.0};
    Recorder<double> seen;
    const Rk45Result r =
        integrate_rk45<1>(NotANumber{}, 1, 0.0, y, times, 3, seen, tolerances(1e-8, 1e-10));
    EXPECT_EQ(r.status, OdeStatus::non_finite);
    EXPECT_TRUE(seen.states.empty());
  }
  {
    double y[1] = {1.0};
    Recorder<double> seen;
    const double backwards[2] = {1.0, 0.5};
    EXPECT_EQ(integrate_rk45<1>(Decay<double>{0.7}, 1, 0.0, y, backwards, 2, seen,
                                tolerances(1e-8, 1e-10))
                  .status,
              OdeStatus::invalid_input);
    const double before_t0[1] = {-1.0};
    EXPECT_EQ(integrate_rk45<1>(Decay<double>{0.7}, 1, 0.0, y, before_t0, 1, seen,
                                tolerances(1e-8, 1e-10))
                  .status,
              OdeStatus::invalid_input);
    EXPECT_EQ(
        integrate_rk45<1>(Decay<double>{0.7}, 2, 0.0, y, times, 3, seen, tolerances(1e-8, 1e-10))
            .status,
        OdeStatus::invalid_input);  // n above MaxDim
    EXPECT_TRUE(seen.states.empty());
    EXPECT_EQ(y[0], 1.0);
  }
}

TEST(OdeRk45, FloatAtFloatTolerances) {
  // Float time and state: rtol 1e-5 is ~80 ε_f, well above rounding; the same bound as in double.
  const float times[3] = {1.0f, 5.0f, 10.0f};
  Rk45Settings settings = tolerances(1e-5, 1e-7);
  float y[1] = {2.0f};
  Recorder<float> seen;
  struct FloatDecay {
    void operator()(float, const float* y, float* dydt) const { dydt[0] = -0.7f * y[0]; }
  };
  const Rk45Result r = integrate_rk45<1>(FloatDecay{}, 1, 0.0f, y, times, 3, seen, settings);
  ASSERT_TRUE(r.ok());
  for (int i = 0; i < 3; ++i) {
    const double exact = 2.0 * std::exp(-0.7 * times[i]);
    // Per step also the float rounding of one step, a few ε_f of y.
    const double bound = r.accepted * (settings.atol + settings.rtol * 2.0 + 8 * 1.2e-7 * 2.0);
    EXPECT_NEAR(seen.states[i][0], exact, bound) << "t " << times[i];
  }
}

}  // namespace
