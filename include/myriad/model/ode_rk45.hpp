#pragma once
// An adaptive explicit Runge–Kutta solver for small ODE systems y' = f(t, y) inside a density
// model: Dormand–Prince 5(4) (Dormand & Prince 1980, "A family of embedded Runge–Kutta formulae",
// J. Comput. Appl. Math. 6(1); the tableau of Hairer, Nørsett & Wanner, "Solving Ordinary
// Differential Equations I", 2nd ed., Table II.5.2, as in their code DOPRI5 and MATLAB's ode45),
// written once over a generic scalar so that it runs per chain on the CPU and in a CUDA thread
// and forward-mode duals (core/dual.hpp, core/dual_vector.hpp) differentiate through it.
//
// The method. Seven stages k_1 … k_7 per step (k_7 = f(t + h, y_{n+1}) is the next step's k_1:
// "first same as last"), the fifth-order solution y_{n+1} = y_n + h Σ b_i k_i propagated (local
// extrapolation) and the embedded fourth-order one ŷ giving the error estimate
// e = y_{n+1} − ŷ_{n+1} = h Σ (b_i − b̂_i) k_i. A step is accepted when
//
//   err = sqrt( (1/n) Σ_i (e_i / sc_i)² ) ≤ 1,   sc_i = atol + rtol · max(|y_n,i|, |y_n+1,i|)
//
// and the next step is h · min(10, max(0.2, 0.9 · err^(−1/5))) (HNW I, §II.4, eqs. 4.10–4.13;
// no growth right after a rejection). The first step is HNW's automatic choice (§II.4, "Starting
// step size"). Output is at the requested times by stepping onto them: a step that would pass the
// next output time (or stop within 1 % of a step short of it) is shortened (or stretched by at
// most 1 %) to land on it exactly, and the controller's growth limit is taken relative to the
// step it had proposed, so that a step shortened for an output does not hold back the next one.
// No interpolation, so the value at an output time is the discrete solution itself, and so is
// its derivative.
//
// Tolerances. Controlling the fourth-order estimate per step (error per step) makes the global
// error of the propagated fifth-order solution roughly proportional to the tolerance: h ∝ tol^(1/5)
// gives local errors O(h⁶) = O(tol^(6/5)) over O(tol^(−1/5)) steps. For a contractive system
// (one-sided Lipschitz constant ≤ 0, as the models here) the global error is at most the sum of
// the local errors, each below its estimate (asymptotically), so ≤ steps × (atol + rtol·max|y|).
// The caller chooses rtol and atol (Rk45Settings): rtol well above the precision's unit roundoff
// (1e-8 in double is; float needs ≳ 1e-5), atol in the units of y, and as small as 1e-30 (purely
// relative control) for a solution that stays away from 0 once it has left its start, where a
// model needs the relative accuracy (one_comp_mm_elim_abs.hpp: its data enter through log y).
//
// Derivatives. Every decision — the first step, accept or reject, the next step size, landing on
// the output times, the limits — is taken on value_of(...) of the state and stages, never on the
// tangents. Hence:
//  (a) the mesh t_0 < t_1 < … is a function of the primal values alone: every dual pass, whatever
//      tangents it carries, and a plain evaluation take the same steps (a dual's value is the
//      plain computation up to rounding: Dual divides by multiplying with the reciprocal), and
//      their values agree to rounding, unless a decision sits within rounding of its threshold;
//  (b) on that mesh, the solution at an output time is a composition of explicit Runge–Kutta
//      maps y_{n+1} = Φ_{h_n}(t_n, y_n; θ), a smooth function of the parameters θ and of y_0,
//      and the duals give its exact derivative (up to rounding);
//  (c) that derivative is itself a consistent approximation of the exact sensitivity ∂y(t)/∂θ:
//      differentiating an explicit Runge–Kutta step is applying the same method, on the same
//      mesh, to the variational equation s' = (∂f/∂y) s + ∂f/∂θ ("internal numerical
//      differentiation", Bock 1981; HNW I, §I.14 and §II.6), so the tangents carry the method's
//      fifth-order accuracy on a mesh that resolves y (the sensitivities are not in the error
//      norm: their error is not controlled separately, but is of the order of y's on a smooth
//      problem);
//  (d) what the tangents leave out is the mesh's own dependence on θ: the step sizes move
//      continuously with err^(−1/5), and the number of steps or an accept/reject decision jumps.
//      Either changes the output by an amount of the size of the local errors, O(tolerance), so
//      the derivative of the discrete solution on the frozen mesh differs from the derivative of
//      the computed function only through terms of that size, and the computed log density is
//      smooth between the (rare) jumps of that size. With tolerances near 1e-8 this is far below
//      what HMC's leapfrog error or a Monte Carlo estimate resolves.
//
// Failure is a status, never a crash or an exception: more than max_steps step attempts (accepted
// and rejected together, so the loop is bounded: an explicit method on a stiff excursion of the
// parameters fails fast), a step size below the resolution of t, or a non-finite accepted state
// (value or tangent). A trial step whose values overflow is rejected and shrunk. A density model
// returns −∞ on failure (a proposal there is rejected), as Stan rejects one where its solver
// throws.
//
// Scratch: 8 · MaxDim scalars of the state's type (the seven stages and the trial state) and
// 3 · MaxDim plain values (the error estimate, the starting step's norms), on the stack; no heap,
// no exceptions, no virtual calls, no std:: functions (device-safe).

#include <type_traits>
#include <utility>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"

namespace myriad {

/// Tolerances and limits of integrate_rk45. The defaults are for double: the error per step is
/// held to atol + rtol·|y| (see the file comment for what that means for the global error).
struct Rk45Settings {
  double rtol = 1e-8;       ///< relative tolerance per step
  double atol = 1e-10;      ///< absolute tolerance per step, in the units of y
  int max_steps = 10000;    ///< attempts (accepted + rejected) before giving up
  double initial_step = 0;  ///< > 0: the first step to try; 0: HNW's automatic choice
};

/// The outcome of integrate_rk45.
enum class OdeStatus : int {
  success = 0,
  too_many_steps,       ///< max_steps attempts did not reach the last output time
  step_size_underflow,  ///< the step fell below the resolution of t (16 ulps)
  non_finite,           ///< an accepted state (value or tangent) or f(t0, y0) is not finite
  invalid_input,        ///< n outside 1..MaxDim, or output times before t0 or decreasing
};

/// Status and work of one integration.
struct Rk45Result {
  OdeStatus status = OdeStatus::success;
  int accepted = 0;  ///< accepted steps
  int rejected = 0;  ///< rejected steps
  MYRIAD_HD bool ok() const { return status == OdeStatus::success; }
};

/// The Dormand–Prince 5(4) tableau (HNW I, Table II.5.2): nodes c, coefficients a, fifth-order
/// weights b (those of the last row of a: FSAL) and e = b − b̂, b̂ the fourth-order weights.
namespace dopri5 {
inline constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
inline constexpr double a21 = 1.0 / 5;
inline constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
inline constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
inline constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561,
                        a54 = -212.0 / 729;
inline constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247,
                        a64 = 49.0 / 176, a65 = -5103.0 / 18656;
inline constexpr double b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784,
                        b6 = 11.0 / 84;
inline constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920,
                        e5 = -17253.0 / 339200, e6 = 22.0 / 525, e7 = -1.0 / 40;
}  // namespace dopri5

/// The plain number under a (possibly nested) dual S.
template <class S>
using ode_value_t = std::decay_t<decltype(value_of(std::declval<const S&>()))>;

/// One Dormand–Prince step of size h from (t, y), given k[0] = f(t, y): writes the fifth-order
/// y_new, the stages k[1] … k[6] (k[6] = f(t + h, y_new), the next step's k[0]) and
/// error[i] = value of y5 − y4, the embedded estimate of the local error. The stage states are
/// formed in y_new, so no other scratch. Rhs: rhs(Time t, const S* y, S* dydt).
template <int MaxDim, class Time, class S, class Rhs>
MYRIAD_HD void dopri5_step(const Rhs& rhs, int n, Time t, Time h, const S* y, S (*k)[MaxDim],
                           S* y_new, ode_value_t<S>* error) {
  using namespace dopri5;
  using V = ode_value_t<S>;
  // Coefficients times h, lifted once per stage (a constant dual: zero tangents).
  for (int i = 0; i < n; ++i) y_new[i] = y[i] + S(h * Time(a21)) * k[0][i];
  rhs(t + Time(c2) * h, y_new, k[1]);
  for (int i = 0; i < n; ++i)
    y_new[i] = y[i] + S(h * Time(a31)) * k[0][i] + S(h * Time(a32)) * k[1][i];
  rhs(t + Time(c3) * h, y_new, k[2]);
  for (int i = 0; i < n; ++i)
    y_new[i] =
        y[i] + S(h * Time(a41)) * k[0][i] + S(h * Time(a42)) * k[1][i] + S(h * Time(a43)) * k[2][i];
  rhs(t + Time(c4) * h, y_new, k[3]);
  for (int i = 0; i < n; ++i)
    y_new[i] = y[i] + S(h * Time(a51)) * k[0][i] + S(h * Time(a52)) * k[1][i] +
               S(h * Time(a53)) * k[2][i] + S(h * Time(a54)) * k[3][i];
  rhs(t + Time(c5) * h, y_new, k[4]);
  for (int i = 0; i < n; ++i)
    y_new[i] = y[i] + S(h * Time(a61)) * k[0][i] + S(h * Time(a62)) * k[1][i] +
               S(h * Time(a63)) * k[2][i] + S(h * Time(a64)) * k[3][i] + S(h * Time(a65)) * k[4][i];
  rhs(t + h, y_new, k[5]);
  for (int i = 0; i < n; ++i)
    y_new[i] = y[i] + S(h * Time(b1)) * k[0][i] + S(h * Time(b3)) * k[2][i] +
               S(h * Time(b4)) * k[3][i] + S(h * Time(b5)) * k[4][i] + S(h * Time(b6)) * k[5][i];
  rhs(t + h, y_new, k[6]);
  for (int i = 0; i < n; ++i) {
    error[i] =
        V(h) * (V(e1) * value_of(k[0][i]) + V(e3) * value_of(k[2][i]) + V(e4) * value_of(k[3][i]) +
                V(e5) * value_of(k[4][i]) + V(e6) * value_of(k[5][i]) + V(e7) * value_of(k[6][i]));
  }
}

namespace detail {

/// sqrt((1/n) Σ r_i²), the RMS norm of HNW's error measure, with the largest |r_i| factored out
/// so that the squares cannot overflow (in float, atol = 1e-30 makes r_i = f/atol ~ 1e31).
template <class V>
MYRIAD_HD V ode_rms(const V* r, int n) {
  V largest = V(0);
  for (int i = 0; i < n; ++i) {
    const V a = myriad::fabs(r[i]);
    if (!myriad::isfinite(a)) return a;  // NaN or ∞: the caller rejects or falls back
    if (a > largest) largest = a;
  }
  if (largest == V(0)) return largest;
  V sum = V(0);
  for (int i = 0; i < n; ++i) sum += (r[i] / largest) * (r[i] / largest);
  return largest * myriad::sqrt(sum / V(n));
}

/// The RMS of v_i / (atol + rtol·|y_i|): HNW's scaled norm for the starting step.
template <class V, class S>
MYRIAD_HD V ode_scaled_norm(const V* v, const S* y, int n, V atol, V rtol, V* scratch) {
  for (int i = 0; i < n; ++i) scratch[i] = v[i] / (atol + rtol * myriad::fabs(V(value_of(y[i]))));
  return ode_rms(scratch, n);
}

/// Machine epsilon of float or double (without <limits>, for device code).
template <class Time>
MYRIAD_HD constexpr Time ode_epsilon() {
  return sizeof(Time) == 4 ? Time(1.1920928955078125e-7) : Time(2.220446049250313e-16);
}

template <class S>
MYRIAD_HD bool ode_all_finite(const S* y, int n) {
  for (int i = 0; i < n; ++i)
    if (!myriad::isfinite(y[i])) return false;
  return true;
}

template <class S>
MYRIAD_HD bool ode_values_finite(const S* y, int n) {
  for (int i = 0; i < n; ++i)
    if (!myriad::isfinite(value_of(y[i]))) return false;
  return true;
}

}  // namespace detail

/// Integrates y' = f(t, y), y(t0) = y (n ≤ MaxDim components, updated in place to the state at
/// the last time reached) and calls observe(i, y_at_times_i) at each output time, in order.
/// `times` must be non-decreasing and ≥ t0 (a time equal to t0, or to the previous one, is
/// observed without stepping). Rhs: rhs(Time t, const S* y, S* dydt); Observer:
/// observe(int i, const S* y). Returns the status (the observer has then seen the times before
/// the failure only) and the steps taken; see the file comment for the method, its decisions
/// on values and its derivative.
template <int MaxDim, class Time, class S, class Rhs, class Observer>
MYRIAD_HD Rk45Result integrate_rk45(const Rhs& rhs, int n, Time t0, S* y, const Time* times,
                                    int num_times, Observer& observe,
                                    const Rk45Settings& settings) {
  static_assert(MaxDim >= 1, "an ODE system has at least one component");
  using V = ode_value_t<S>;
  Rk45Result result;
  if (n < 1 || n > MaxDim) {
    result.status = OdeStatus::invalid_input;
    return result;
  }
  for (int i = 0; i < num_times; ++i) {
    if (!(times[i] >= (i == 0 ? t0 : times[i - 1])) || !myriad::isfinite(times[i])) {
      result.status = OdeStatus::invalid_input;
      return result;
    }
  }
  if (num_times == 0) return result;

  const V rtol = V(settings.rtol), atol = V(settings.atol);
  const Time span = times[num_times - 1] - t0;
  S k[7][MaxDim];
  S y_new[MaxDim];
  V error[MaxDim];
  rhs(t0, y, k[0]);
  if (!detail::ode_all_finite(k[0], n) || !detail::ode_all_finite(y, n)) {
    result.status = OdeStatus::non_finite;
    return result;
  }

  // The first step: HNW I, §II.4 ("Starting step size"), on values; y_new and k[1] as scratch.
  Time h = Time(settings.initial_step);
  if (!(h > Time(0))) {
    V scaled_y[MaxDim], scaled_f[MaxDim];
    for (int i = 0; i < n; ++i) {
      scaled_y[i] = value_of(y[i]);
      scaled_f[i] = value_of(k[0][i]);
    }
    const V d0 = detail::ode_scaled_norm(scaled_y, y, n, atol, rtol, error);
    const V d1 = detail::ode_scaled_norm(scaled_f, y, n, atol, rtol, error);
    V h0 = (d0 < V(1e-5) || d1 < V(1e-5)) ? V(1e-6) : V(0.01) * d0 / d1;
    if (V(span) > V(0) && h0 > V(span)) h0 = V(span);
    for (int i = 0; i < n; ++i) y_new[i] = y[i] + S(Time(h0)) * k[0][i];
    rhs(t0 + Time(h0), y_new, k[1]);
    for (int i = 0; i < n; ++i) scaled_f[i] = (value_of(k[1][i]) - value_of(k[0][i])) / h0;
    const V d2 = detail::ode_scaled_norm(scaled_f, y, n, atol, rtol, error);
    const V d12 = d1 > d2 ? d1 : d2;
    V h1 = d12 <= V(1e-15) ? (h0 * V(1e-3) > V(1e-6) ? h0 * V(1e-3) : V(1e-6))
                           : myriad::pow(V(0.01) / d12, V(0.2));
    // The trial stage overflowed (or the norms did): keep the cautious guess.
    if (!(h1 > V(0)) || !myriad::isfinite(h1)) h1 = h0;
    h = Time(V(100) * h0 < h1 ? V(100) * h0 : h1);
  }

  constexpr double kSafety = 0.9, kMinFactor = 0.2, kMaxFactor = 10.0, kStretch = 1.01;
  Time t = t0;
  bool after_rejection = false;
  int next = 0;
  while (true) {
    while (next < num_times && times[next] <= t) observe(next++, static_cast<const S*>(y));
    if (next == num_times) return result;
    if (result.accepted + result.rejected >= settings.max_steps) {
      result.status = OdeStatus::too_many_steps;
      return result;
    }
    const Time t_out = times[next];
    const Time proposed = h;
    bool lands = false;
    if (t + Time(kStretch) * h >= t_out) {
      h = t_out - t;
      lands = true;
    }
    // 16 ulps of t: below that, t + h rounds to (nearly) t and the step makes no progress.
    if (!(h > Time(16) * myriad::fabs(t) * detail::ode_epsilon<Time>())) {
      result.status = OdeStatus::step_size_underflow;
      return result;
    }

    dopri5_step<MaxDim>(rhs, n, t, h, y, k, y_new, error);
    for (int i = 0; i < n; ++i) {
      const V y0 = myriad::fabs(V(value_of(y[i]))), y1 = myriad::fabs(V(value_of(y_new[i])));
      error[i] = error[i] / (atol + rtol * (y0 > y1 ? y0 : y1));
    }
    const V err = detail::ode_rms(error, n);
    // A trial whose values overflowed (NaN or ∞ in a stage) counts as a rejection by the
    // largest factor: a shorter step may well stay finite.
    const bool finite_trial = myriad::isfinite(err) && detail::ode_values_finite(y_new, n);
    // 0.9 err^(−1/5), the step that would just meet the tolerance, with a safety factor.
    const V factor = finite_trial
                         ? (err > V(0) ? V(kSafety) * myriad::pow(err, V(-0.2)) : V(kMaxFactor))
                         : V(kMinFactor);
    if (finite_trial && err <= V(1)) {
      t = lands ? t_out : t + h;
      for (int i = 0; i < n; ++i) {
        y[i] = y_new[i];
        k[0][i] = k[6][i];
      }
      if (!detail::ode_all_finite(y, n) || !detail::ode_all_finite(k[0], n)) {
        result.status = OdeStatus::non_finite;
        return result;
      }
      ++result.accepted;
      // Growth limited relative to the step the controller proposed (a landing step may have
      // been much shorter), and none right after a rejection (HNW I, §II.4).
      const Time base = h > proposed ? h : proposed;
      const Time ceiling = after_rejection ? base : Time(kMaxFactor) * base;
      Time next_h = h * Time(factor > V(kMinFactor) ? factor : V(kMinFactor));
      h = next_h < ceiling ? next_h : ceiling;
      after_rejection = false;
    } else {
      ++result.rejected;
      h = h * Time(factor > V(kMinFactor) ? factor : V(kMinFactor));  // err > 1: factor < 0.9
      after_rejection = true;
    }
  }
}

}  // namespace myriad
