// Tests of `one_comp_mm_elim_abs` (include/myriad/models/one_comp_mm_elim_abs.hpp) on
// posteriordb's one_comp_mm_elim_abs data: the log density against Stan's model block written out
// with <cmath> and an independent ODE solution (classical fixed-step RK4 with Richardson's error
// estimate), within a bound derived from the two solvers' error bounds; its gradient by
// forward-mode duals through the adaptive solver against central finite differences; the
// recorded quantities against reference.csv's variables; a failed solve as −∞; and the
// validation of the data.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/expect_error.hpp"
#include "common/posteriordb_port_checks.hpp"
#include "common/recorded_quantities.hpp"
#include "myriad/models/one_comp_mm_elim_abs.hpp"

namespace {

using namespace myriad::testing;
using namespace myriad::models;
using myriad::Rk45Settings;

const char* const kPosterior = "one_comp_mm_elim_abs-one_comp_mm_elim_abs";

/// posteriordb's data, by data.json's names: t0, D, V, N_t, times, C_hat.
struct PkData {
  double t0 = 0, D = 0, V = 0;
  int N_t = 0;
  std::vector<double> times, C_hat;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PkData, t0, D, V, N_t, times, C_hat)

OneCompMmElimAbsData<double> make_data(const PkData& d, const Rk45Settings& settings) {
  return OneCompMmElimAbsData<double>::from_arrays(d.t0, d.D, d.V, d.N_t, d.times, d.C_hat,
                                                   settings);
}

/// Far tighter than the model's default (rtol 1e-8; atol 1e-30 in both, relative control): the
/// mesh of the finite differences, and a second comparison with the independent solution.
Rk45Settings tight_settings() {
  Rk45Settings s;
  s.rtol = 1e-12;
  s.atol = 1e-30;
  s.max_steps = 100000;
  return s;
}

/// Points 0–3 within 2 posterior sds of the reference (log k_a ≈ −0.27 ± 0.1, log K_m ≈
/// 0 ± 1.3, log V_m ≈ −0.1 ± 0.3, log σ ≈ −2.05 ± 0.18), 4–5 in Stan's default start region
/// (standard normals), and two far ones: K_m small (C/(K_m + C) switches sharply near C = 0, a
/// hard start for any solver) and a large V_m/K_m with a large σ.
const PortPoints pk_point{20261207,
                          {-0.27, 0.0, -0.1, -2.05},
                          {0.1, 1.3, 0.3, 0.18},
                          2,
                          4,
                          6,
                          {{0.2, -3.0, -1.0, -2.0}, {1.0, -2.0, 1.5, 0.5}}};

// ---------------------------------------------------------------------------------------------
// An independent solution: classical RK4 with a fixed step, Richardson's error estimate, and the
// flow's derivative for the error bounds.
//
// How an error made at time s reaches t_n: the system is scalar, so a perturbation δ of C(s) is
// carried to δ ∂C(t_n)/∂C(s) = δ exp(F(t_n) − F(s)), F(t) = ∫_0^t ∂f/∂C du along the solution
// (the variational equation), and ∂f/∂C = −(V_m/V) K_m/(K_m + C)² ≤ 0, so the factor is ≤ 1.
// A solver whose local errors are at most atol + rtol·C(s) (relative control: ode_rk45.hpp) and
// a few ulps of C(s) therefore has a global error at t_n of at most
//   steps · (atol + (rtol + 4ε) M_n),   M_n = max_{s ≤ t_n} C(s) exp(F(t_n) − F(s)),
// which, unlike steps · rtol · max C, follows C down where the compartment empties (M_n ≈ C(t_n)
// when perturbations decay at least as fast as C). Each accepted step's fifth-order local error
// is below its embedded fourth-order estimate (asymptotically, by a factor O(h)), and the
// estimate is below atol + rtol·max(|C_n|, |C_{n+1}|).

/// C at the data's times, and log M_n, by classical RK4 from C(0) = 0 with steps of at most h
/// (each interval between output times cut into equal steps), the absorption on from t = 0 (the
/// model's header comment: Stan's t > 0 differs only at the instant t = 0), F integrated with C.
struct Rk4Solution {
  std::vector<double> c, log_carried;
};

Rk4Solution rk4_concentrations(const PkData& d, const std::vector<double>& x, double h) {
  const double k_a = std::exp(x[0]), K_m = std::exp(x[1]), V_m = std::exp(x[2]);
  auto f = [&](double t, double c) {
    return std::exp(-k_a * t) * d.D * k_a / d.V - (V_m / d.V) * c / (K_m + c);
  };
  auto f_c = [&](double c) { return -(V_m / d.V) * K_m / ((K_m + c) * (K_m + c)); };
  Rk4Solution out;
  double t = 0, c = 0, F = 0;
  double best = -std::numeric_limits<double>::infinity();  // max over the grid of log C − F
  for (double target : d.times) {
    const int steps = static_cast<int>(std::ceil((target - t) / h));
    const double step = (target - t) / steps;
    for (int i = 0; i < steps; ++i) {
      const double s = t + i * step;
      const double k1 = f(s, c), k2 = f(s + step / 2, c + step / 2 * k1),
                   k3 = f(s + step / 2, c + step / 2 * k2), k4 = f(s + step, c + step * k3);
      const double g1 = f_c(c), g2 = f_c(c + step / 2 * k1), g3 = f_c(c + step / 2 * k2),
                   g4 = f_c(c + step * k3);
      c += step / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
      F += step / 6 * (g1 + 2 * g2 + 2 * g3 + g4);
      if (c > 0) best = std::max(best, std::log(c) - F);
    }
    t = target;
    out.c.push_back(c);
    out.log_carried.push_back(F + best);
  }
  return out;
}

/// The reference solution, its error bound and M_n: RK4 at h = 2.5e-4 (4·10⁴ steps), with
/// Richardson's estimate |C_h − C_{2h}|/15 of its O(h⁴) truncation error (doubled for the O(h⁵)
/// remainder) plus the rounding of 4·10⁴ steps, each a few ulps of C, carried as above.
struct Reference {
  std::vector<double> c, error, carried;
};

Reference reference_solution(const PkData& d, const std::vector<double>& x) {
  const double h = 2.5e-4;
  const Rk4Solution fine = rk4_concentrations(d, x, h), coarse = rk4_concentrations(d, x, 2 * h);
  const double steps = d.times.back() / h;
  Reference r;
  for (std::size_t n = 0; n < fine.c.size(); ++n) {
    const double carried = std::exp(fine.log_carried[n]);
    r.c.push_back(fine.c[n]);
    r.carried.push_back(carried);
    r.error.push_back(2 * std::fabs(fine.c[n] - coarse.c[n]) / 15 + steps * 4 * kEps * carried);
  }
  return r;
}

/// Stan's model block written out at the reference's C: the priors normalised on (0, ∞)
/// (log 2/π − log(1 + x²)), the Jacobians θ_p and the lognormal likelihood; with what the bounds
/// need: Σ|terms| and their count, and per measurement |∂lp/∂C_n| = |log Ĉ_n − log C_n|/(σ² C_n),
/// the reference's error and M_n, and Σ_n |∂lp/∂ log C_n| (|log Ĉ_n| + |log C_n|), the scale of
/// the rounding of the residuals' logarithms.
struct Direct {
  double value = 0, magnitude = 0, log_scale = 0;
  int terms = 0;
  std::vector<double> slope, reference_error, carried;

  /// The first-order bound on the error of the model's log p when its solve took `accepted` steps
  /// at `settings` in a precision of machine epsilon `eps`: Σ_n |∂lp/∂C_n| · accepted ·
  /// (atol + (rtol + 4 eps) M_n) (the flow-carried bound above).
  double solver_bound(int accepted, const Rk45Settings& settings, double eps) const {
    double bound = 0;
    for (std::size_t n = 0; n < slope.size(); ++n)
      bound += slope[n] * accepted * (settings.atol + (settings.rtol + 4 * eps) * carried[n]);
    return bound;
  }

  /// The bound on |model − direct|: the model's solver bound, the reference's error carried by
  /// |∂lp/∂C_n|, and the rounding of both sums (Higham, "Accuracy and Stability of Numerical
  /// Algorithms", §4.2: (terms + 16) ε Σ|terms| covers a sum of `terms` terms and a few ulps per
  /// term, with a factor 2 to spare) and of the residuals' logarithms in the model's precision.
  /// The quadratic remainder (δC)² ∂²lp/∂C² is below 1e-3 of the first-order term for
  /// δC/C ≤ 1e-3, as here.
  double tolerance(int accepted, const Rk45Settings& settings, double eps) const {
    double reference = 0;
    for (std::size_t n = 0; n < slope.size(); ++n) reference += slope[n] * reference_error[n];
    return solver_bound(accepted, settings, eps) + reference +
           eps * ((terms + 16) * magnitude + 2 * log_scale) + (terms + 16) * kEps * magnitude;
  }
};

Direct direct_log_density(const PkData& d, const std::vector<double>& x) {
  const Reference ref = reference_solution(d, x);
  const double sigma = std::exp(x[3]);
  Direct out;
  auto add = [&](double t) {
    out.value += t;
    out.magnitude += std::fabs(t);
    ++out.terms;
  };
  for (double u : x) {
    const double value = std::exp(u);
    add(std::log(2 / M_PI) - std::log(1 + value * value) + u);
  }
  for (int n = 0; n < d.N_t; ++n) {
    const double r = std::log(d.C_hat[n]) - std::log(ref.c[n]);
    add(-std::log(d.C_hat[n]) - std::log(sigma) - 0.5 * std::log(2 * M_PI));
    add(-r * r / (2 * sigma * sigma));
    out.slope.push_back(std::fabs(r / (sigma * sigma * ref.c[n])));
    out.reference_error.push_back(ref.error[n]);
    out.carried.push_back(ref.carried[n]);
    out.log_scale += std::fabs(r) / (sigma * sigma) *
                     (std::fabs(std::log(d.C_hat[n])) + std::fabs(std::log(ref.c[n])));
  }
  return out;
}

/// Accepted steps of the model's own solve at x: the same solver on the model's right-hand side
/// and settings.
template <class T>
int accepted_steps(const OneCompMmElimAbs<T>& model, const std::vector<double>& x) {
  struct Ignore {
    void operator()(int, const T*) {}
  } ignore;
  const typename OneCompMmElimAbs<T>::template Rhs<T> rhs{T(std::exp(x[0])), T(std::exp(x[1])),
                                                          T(std::exp(x[2])) * model.inv_volume,
                                                          model.dose_per_volume};
  T c[1] = {T(0)};
  const myriad::Rk45Result solved = myriad::integrate_rk45<1>(rhs, 1, model.t_start, c, model.times,
                                                              model.n, ignore, model.settings);
  EXPECT_TRUE(solved.ok());
  return solved.accepted;
}

/// The log-density check's transcription of Stan's model block for `model` (in its precision,
/// machine epsilon eps): Direct's value, within Direct::tolerance at the model's own solve.
template <class T>
auto transcription(const PkData& d, const OneCompMmElimAbs<T>& model, double eps) {
  return [&d, &model, eps](const std::vector<double>& x) {
    const Direct direct = direct_log_density(d, x);
    return Transcribed{direct.value,
                       direct.tolerance(accepted_steps(model, x), model.settings, eps)};
  };
}

static_assert(port_traits<OneCompMmElimAbs, OneCompMmElimAbsData>(), "a posteriordb port");

TEST(ModelsLogDensity, OneCompMmElimAbsMatchesStansModelBlock) {
  const PkData d = posteriordb_data_as<PkData>(kPosterior);
  for (const bool tight : {false, true}) {
    SCOPED_TRACE(tight ? "rtol 1e-12" : "default settings");
    const auto data =
        make_data(d, tight ? tight_settings() : OneCompMmElimAbsData<double>::default_settings());
    const auto model = data.host_model();
    ASSERT_EQ(model.dim(), 4);
    expect_matches_transcription(model, pk_point, transcription(d, model, kEps),
                                 tight ? "rtol 1e-12: " : "default: ");
  }
}

TEST(ModelsGradient, OneCompMmElimAbsDualsAgreeWithFiniteDifferences) {
  // On the tight mesh (rtol 1e-12), whose jumps as θ moves are far below the step h = 1e-5 of the
  // differences. The computed log p is within δf = Direct::tolerance of the exact one (the bound
  // of the log-density test), so the central difference is within h²|f'''|/6 + δf/h of f'
  // (f''' by triple duals through the solver). The duals' own error, the method applied to the
  // sensitivity equations on the same mesh (ode_rk45.hpp, "Derivatives" (c)), is of the order of
  // the solution's, E_model |∂C/∂θ|, far below δf/h. The duals' value is the plain evaluation's
  // up to rounding on the same mesh (the next test's bound); vector and scalar duals make the
  // same operations (each tangent the scalar dual's), so the helper finds them equal bit for bit,
  // and 1e-12 of the gradient's scale allows them nothing more than a few ulps.
  const PkData d = posteriordb_data_as<PkData>(kPosterior);
  const auto data = make_data(d, tight_settings());
  const auto model = data.host_model();
  expect_dual_gradient_agrees(model, pk_point, [&](const auto& x) {
    const Direct direct = direct_log_density(d, x);
    const int steps = accepted_steps(model, x);
    Rk45Settings exact;  // no tolerance: the rounding of each step alone
    exact.rtol = exact.atol = 0;
    const double rounding =
        direct.solver_bound(steps, exact, kEps) + 2 * (direct.terms + 16) * kEps * direct.magnitude;
    return DualBounds{rounding, direct.tolerance(steps, model.settings, kEps)};
  });
}

TEST(ModelsGradient, OneCompMmElimAbsDefaultSettingsDualsTakeThePlainMesh) {
  // At the default tolerances the duals' value is the plain evaluation's up to rounding: the mesh
  // is decided on values, which differ only by rounding (Dual's division multiplies by the
  // reciprocal), so the same steps are taken; each step's C then differs by a few ulps (4 ε C,
  // carried to t_n and to log p as in Direct::solver_bound), plus the sums' rounding, twice
  // (terms + 16) ε Σ|terms|.
  // A changed mesh would move log p by O(tolerance · Σ|∂lp/∂C|), orders of magnitude more.
  const PkData d = posteriordb_data_as<PkData>(kPosterior);
  const auto data = make_data(d, OneCompMmElimAbsData<double>::default_settings());
  const auto model = data.host_model();
  for (int p = 0; p < pk_point.count(); ++p) {
    const auto x = pk_point(p);
    const Direct direct = direct_log_density(d, x);
    Rk45Settings exact;  // no tolerance: the rounding of each step alone
    exact.rtol = exact.atol = 0;
    const double rounding = direct.solver_bound(accepted_steps(model, x), exact, kEps) +
                            2 * (direct.terms + 16) * kEps * direct.magnitude;
    std::vector<double> g(4);
    const double lp = myriad::log_density_and_gradient(model, x, g);
    EXPECT_NEAR(lp, model.log_density(x), rounding) << "point " << p;
    for (double gi : g) EXPECT_TRUE(std::isfinite(gi)) << "point " << p;
  }
}

// ---------------------------------------------------------------------------------------------
// Failure, quantities, float, validation.

TEST(ModelsLogDensity, OneCompMmElimAbsFailedSolveIsMinusInfinity) {
  const PkData d = posteriordb_data_as<PkData>(kPosterior);
  Rk45Settings few = OneCompMmElimAbsData<double>::default_settings();
  few.max_steps = 3;
  const auto data = make_data(d, few);
  const auto model = data.host_model();
  const auto x = pk_point(0);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(model.log_density(x), -inf);
  std::vector<double> g(4);
  EXPECT_EQ(myriad::log_density_and_gradient(model, x, g), -inf);
  // A stiff corner (V_m / (V K_m) = e^{12}/2 per day) exhausts the default 10⁴ attempts.
  const auto standard = make_data(d, OneCompMmElimAbsData<double>::default_settings());
  EXPECT_EQ(standard.host_model().log_density(std::vector<double>{0.0, -6.0, 6.0, 0.0}), -inf);
}

TEST(ModelsQuantities, OneCompMmElimAbsRecordsReferenceVariablesInOrder) {
  const PkData d = posteriordb_data_as<PkData>(kPosterior);
  const auto data = make_data(d, OneCompMmElimAbsData<double>::default_settings());
  const auto model = data.host_model();
  EXPECT_EQ(myriad::recorded_quantity_names(model), posteriordb_reference_variables(kPosterior));
  for (int p = 0; p < pk_point.count(); ++p) {
    const auto x = pk_point(p);
    const auto q = recorded_quantities(model, x);
    ASSERT_EQ(q.size(), 4u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(q[i], std::exp(x[i])) << "point " << p << ", " << i;
  }
}

TEST(ModelsFloat, OneCompMmElimAbsAgreesWithTheDirectTranscription) {
  // Float at its own tolerances (rtol 1e-5) against the same double transcription: the same
  // bound with the float solve's steps and settings and float rounding (ε_f) of the sums, the
  // logarithms and each step.
  const PkData d = posteriordb_data_as<PkData>(kPosterior);
  const auto data =
      OneCompMmElimAbsData<float>::from_arrays(d.t0, d.D, d.V, d.N_t, d.times, d.C_hat);
  const auto model = data.host_model();
  const auto points =
      counted_points(pk_point.count(), [](int p) { return float_representable(pk_point(p)); });
  expect_matches_transcription(model, points, transcription(d, model, kFloatEps), "float: ");
}

TEST(ModelsOneCompMmElimAbsData, FromArraysValidatesStansDataBlock) {
  using Data = OneCompMmElimAbsData<double>;
  using Values = std::vector<double>;
  const Values times = {0.5, 1.0, 2.0}, c_hat = {5.0, 7.0, 9.0};
  EXPECT_EQ(Data::from_arrays(0, 30, 2, 3, times, c_hat).host_model().dim(), 4);
  EXPECT_EQ(Data::from_arrays(0, 30, 2, 3, Values{0.5, 1.0, 1.0}, c_hat).N_t(), 3);  // sorted
  EXPECT_EQ(Data::from_arrays(-1, 30, 2, 3, times, c_hat).host_model().t_start, 0.0);
  // from_arrays(t0, D, V, N_t, times, C_hat, settings) as a call to expect to throw.
  const auto make = [](double t0, double D, double V, int N_t, Values ts, Values cs,
                       Rk45Settings settings = Data::default_settings()) {
    return [=] { Data::from_arrays(t0, D, V, N_t, ts, cs, settings); };
  };
  const char* const order = "one_comp_mm_elim_abs: times must be non-decreasing and > t0, got ";
  expect_invalid_argument(make(NAN, 30, 2, 3, times, c_hat),
                          "one_comp_mm_elim_abs: t0 must be finite");
  expect_invalid_argument(make(0, 0, 2, 3, times, c_hat),
                          "one_comp_mm_elim_abs: D must be positive and finite, got 0");
  expect_invalid_argument(make(0, 30, -2, 3, times, c_hat),
                          "one_comp_mm_elim_abs: V must be positive and finite, got -2");
  expect_invalid_argument(make(0, 30, 2, 0, {}, {}),
                          "one_comp_mm_elim_abs: N_t must be >= 1, got 0");
  expect_invalid_argument(make(0, 30, 2, 4, times, c_hat),
                          "one_comp_mm_elim_abs: times has 3 entries, expected N_t = 4");
  expect_invalid_argument(make(0, 30, 2, 3, times, {5.0, 7.0}),
                          "one_comp_mm_elim_abs: C_hat has 2 entries, expected N_t = 3");
  expect_invalid_argument(make(0, 30, 2, 3, {0.5, 2.0, 1.0}, c_hat),
                          std::string(order) + "times[3] = 1 after 2");
  expect_invalid_argument(make(0.5, 30, 2, 3, times, c_hat),
                          std::string(order) + "times[1] = 0.5 with t0 = 0.5");
  expect_invalid_argument(make(0, 30, 2, 3, {0.5, INFINITY, 2.0}, c_hat),
                          std::string(order) + "times[2] = inf");
  expect_invalid_argument(make(-2, 30, 2, 3, {-1.0, 1.0, 2.0}, c_hat),
                          "one_comp_mm_elim_abs: times[1] = -1 is not after the dose at t = 0");
  expect_invalid_argument(make(0, 30, 2, 3, times, {5.0, -1.0, 9.0}),
                          "one_comp_mm_elim_abs: C_hat[2] must be positive and finite, got -1");
  Rk45Settings bad = Data::default_settings();
  bad.rtol = 0;
  expect_invalid_argument(make(0, 30, 2, 3, times, c_hat, bad),
                          "one_comp_mm_elim_abs: the solver's rtol and atol must be positive");
  bad = Data::default_settings();
  bad.max_steps = 0;
  expect_invalid_argument(make(0, 30, 2, 3, times, c_hat, bad),
                          "one_comp_mm_elim_abs: the solver's max_steps must be >= 1, got 0");
}

}  // namespace
