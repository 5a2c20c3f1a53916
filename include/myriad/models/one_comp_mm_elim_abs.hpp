#pragma once
// `one_comp_mm_elim_abs`: a one-compartment pharmacokinetic model with first-order absorption
// and Michaelis–Menten elimination, posteriordb's one_comp_mm_elim_abs-one_comp_mm_elim_abs
// (Stan's model `one_comp_mm_elim_abs`, from the Pathfinder paper's benchmark set: Zhang et al.
// 2022, JMLR 23(306); data: a dose D = 30 mg into V = 2 L, N_t = 20 concentrations at
// t = 0.5, 1, …, 10 days, t0 = 0). The concentration C(t) (mg/L) in the compartment solves
//
//   dC/dt = D k_a e^{−k_a t} / V · [t > 0]  −  (V_m / V) C / (K_m + C),   C(t0) = 0,
//
// (absorption of the dose at rate k_a, saturable elimination with maximum rate V_m and
// Michaelis constant K_m), and
//
//   k_a, K_m, V_m, σ ~ Cauchy(0, 1) on (0, ∞),
//   Ĉ_n ~ LogNormal(log C(t_n), σ),   n = 1, …, N_t.
//
// Parameterisation: Stan's, θ = (log k_a, log K_m, log V_m, log σ) (real<lower=0>:
// lower_bound_transform, log J = Σ θ_p). The log density, every normalising constant included
// (the priors normalised on (0, ∞), the log 2 of their truncation, as eight_schools.hpp and
// linear_regression.hpp do), is
//
//   log p(θ) = Σ_p [log(2/π) − log(1 + x_p²) + θ_p]
//            + Σ_n [−log Ĉ_n − ½ log 2π − log σ − (log Ĉ_n − log C(t_n))² / (2σ²)],
//
// x = (k_a, K_m, V_m, σ); log(1 + x²) is log1p_exp(2θ_p), which does not overflow.
//
// The ODE. Stan solves it with integrate_ode_bdf at its default tolerances (rtol = atol = 1e-6,
// max_num_steps = 1e8); here an explicit Dormand–Prince 5(4) (model/ode_rk45.hpp) at rtol = 1e-8
// and atol = 1e-30 (double; rtol = 1e-5 for float) with at most 10⁴ step attempts. Why these:
//  - the data enter through log C, so what the likelihood needs is C's *relative* accuracy,
//    wherever it is evaluated: near the posterior C is 4–14 mg/L, but in the tails that warm-up
//    crosses (large V_m/K_m, large k_a) the elimination empties the compartment and C falls to
//    1e-12 mg/L and below (at Stan's default starts, to 1e-31). There an absolute tolerance of
//    1e-10 leaves log C wrong by tens of nats (at log k_a = 1, log K_m = −2, log V_m = 1.5:
//    log p = −696 against −721.37), so atol only guards the start at C = 0 and the error control
//    is relative for C ≳ atol/rtol = 1e-22 (C > 0 for t > 0: the absorption is positive);
//  - rtol = 1e-8 keeps the error of log C near 1e-8 (the global error of the system, contractive
//    with ∂f/∂C = −(V_m/V) K_m/(K_m + C)² ≤ 0, is at most the sum of the local errors carried by
//    the flow: tests/unit/models/test_one_comp_mm_elim_abs.cpp derives the bound), 100 times
//    tighter than Stan's, at ~35–50 steps near the posterior (10 % more than atol = 1e-10 takes);
//  - the problem is not stiff where the posterior lives (|∂f/∂C| ≤ V_m/(V K_m) ≈ 5 /day at the
//    5 % quantile of K_m); an excursion to a stiff corner (V_m/(V K_m) ≳ 10⁴ /day) runs out of
//    steps, and a failed solve, like a non-positive C, gives log p = −∞ (Stan rejects such a
//    draw as its solver throws).
// Every step decision is taken on values, so the duals differentiate the discrete solution on its
// mesh (model/ode_rk45.hpp, "Derivatives"). The settings are data (OneCompMmElimAbsData).
//
// The dose branch. Stan's `if (t > 0)` is on time, not on a parameter, so it costs the
// derivatives nothing; but taken literally it switches the absorption off at the single instant
// t = 0 = t0, where a Runge–Kutta method evaluates its first stage, so that the first step would
// see dC/dt = 0 where the solution's derivative is D k_a / V ≈ 11 mg/L/day: an error that the
// embedded estimate underestimates by b_1/(b_1 − b̂_1) ≈ 74 and that a fixed-step method
// reduces only at first order. The solution does not depend on the integrand at one instant
// (C is the integral of dC/dt), and C ≡ 0 before the dose (C0 = 0, and elimination of 0 is 0),
// so the solver starts at t_s = max(t0, 0) with C = 0 and the absorption term on throughout:
// the same C(t) as Stan's ODE, for every t0. Measurement times must then lie after the dose
// (t_n > 0; at t ≤ 0, C = 0 and Stan's lognormal of log 0 rejects every draw).
//
// Not recorded: the transformed parameters C[n, 1] and the generated quantities C_ppc[n]
// (posterior predictive draws), which posteriordb's reference does not list. Recorded: k_a, K_m,
// V_m, sigma, as reference.csv orders them, on their own scale.
//
// Per-chain scratch: the solver's 8 states and 1 error of one component plus the three rate
// parameters and the accumulated sum: ~13 scalars, 520 bytes for DualVector<double, 4> (dim 4:
// one vector-mode pass of 4 tangents, model/autodiff.hpp), 104 for double; nvcc keeps all of it in
// registers (sm_90, CUDA 13.0: gradient_by_forward_mode 188 registers, log_density 66, no stack).
//
// OneCompMmElimAbs<T> is the trivially copyable view the chains evaluate; OneCompMmElimAbsData<T>
// owns the data on the host and, on demand, one copy on the device. A library model (C++ API,
// tests' posteriordb ports), not a CLI built-in; the library holds its CUDA HMC instance for
// double. No gradient of its own: forward-mode duals differentiate log_density through the
// solver.

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/ode_rk45.hpp"
#include "myriad/model/transforms.hpp"

namespace myriad::models {

template <class T>
struct OneCompMmElimAbs {
  using value_type = T;
  static constexpr double kLogTwoOverPi = -0.45158270528945486473;  ///< log(2/π)

  const T* times = nullptr;      ///< t_1 … t_{N_t}, after t_start and non-decreasing
  const T* log_c_hat = nullptr;  ///< log Ĉ_1 … log Ĉ_{N_t}
  int n = 0;                     ///< N_t, the measurements
  T t_start = T(0);              ///< max(t0, 0): where C = 0 and the solver starts
  T dose_per_volume = T(15);     ///< D / V (mg/L)
  T inv_volume = T(0.5);         ///< 1 / V (1/L)
  /// The parameter-free part of log p: 4 log(2/π) + Σ_n (−log Ĉ_n − ½ log 2π).
  T log_constant = T(0);
  Rk45Settings settings;  ///< the ODE solver's tolerances and step limit

  /// (log k_a, log K_m, log V_m, log σ).
  MYRIAD_HD int dim() const { return 4; }

  /// dC/dt = (D/V) k_a e^{−k_a t} − (V_m/V) C/(K_m + C), for t ≥ t_start ≥ 0 (header comment).
  template <class S>
  struct Rhs {
    S k_a, K_m, V_m_over_V;
    T dose_per_volume;
    MYRIAD_HD void operator()(T t, const S* c, S* dcdt) const {
      const S absorption = S(dose_per_volume) * k_a * myriad::exp(-k_a * S(t));
      dcdt[0] = absorption - V_m_over_V * c[0] / (K_m + c[0]);
    }
  };

  /// Σ_n (log Ĉ_n − log C(t_n))², and whether every C(t_n) was positive.
  template <class S>
  struct Residuals {
    const T* log_c_hat;
    S sum_sq = S(0);
    bool positive = true;
    MYRIAD_HD void operator()(int i, const S* c) {
      if (!(value_of(c[0]) > 0)) {
        positive = false;
        return;
      }
      const S r = S(log_c_hat[i]) - myriad::log(c[0]);
      sum_sq += r * r;
    }
  };

  /// log p(θ) as in the header comment, generic over the scalar (duals included); −∞ where the
  /// solver fails or a concentration is not positive.
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S log_jacobian = S(0);
    const S k_a = lower_bound_transform(S(x[0]), 0.0, log_jacobian);
    const S K_m = lower_bound_transform(S(x[1]), 0.0, log_jacobian);
    const S V_m = lower_bound_transform(S(x[2]), 0.0, log_jacobian);
    const S log_sigma = x[3];
    log_jacobian += log_sigma;  // σ = e^{log σ}, entered below through log σ and σ^{−2}

    S lp = S(log_constant) + log_jacobian;
    for (int p = 0; p < 4; ++p) lp -= log1p_exp(S(2) * S(x[p]));  // −log(1 + x_p²)

    const Rhs<S> rhs{k_a, K_m, V_m * S(inv_volume), dose_per_volume};
    Residuals<S> residuals{log_c_hat};
    S c[1] = {S(0)};
    const Rk45Result solved = integrate_rk45<1>(rhs, 1, t_start, c, times, n, residuals, settings);
    if (!solved.ok() || !residuals.positive) return S(-INFINITY);
    return lp - S(T(n)) * log_sigma - S(0.5) * residuals.sum_sq * myriad::exp(S(-2) * log_sigma);
  }

  /// Recorded quantities: k_a, K_m, V_m, sigma, as reference.csv orders them.
  MYRIAD_HD int num_quantities() const { return 4; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& x, Out& out) const {
    for (int p = 0; p < 4; ++p) out[p] = myriad::exp(T(x[p]));
  }
  std::string quantity_name(int i) const {
    static const char* const names[] = {"k_a", "K_m", "V_m", "sigma"};
    return names[i];
  }

  /// Backends the library instantiates (model/library_instances.hpp).
  static constexpr unsigned library_backends = library_backend::hmc_in_double<T>;
};

/// Owning host data of a one_comp_mm_elim_abs posterior, with an optional device copy uploaded
/// once. Movable, not copyable.
template <class T>
class OneCompMmElimAbsData : public MirroredViews<OneCompMmElimAbsData<T>> {
 public:
  /// The solver settings of the header comment: rtol 1e-8 in double (1e-5 in float, whose unit
  /// roundoff is 6e-8), atol 1e-30 (relative control of C, whose log the likelihood takes), 10⁴
  /// step attempts.
  static Rk45Settings default_settings() {
    Rk45Settings s;
    s.rtol = sizeof(T) <= 4 ? 1e-5 : 1e-8;
    s.atol = 1e-30;
    s.max_steps = 10000;
    return s;
  }

  /// Stan's data block: t0, D, V, N_t, times (N_t measurement times) and C_hat (N_t measured
  /// concentrations), and the ODE solver's settings. D and V must be positive and finite (a
  /// dose of 0 leaves C = 0), times finite, non-decreasing and > t0 (Stan's integrate_ode) and
  /// after the dose at t = 0, C_hat positive and finite (the lognormal's support), rtol and atol
  /// positive, max_steps >= 1. Messages index from 1, as Stan does. Throws
  /// myriad::invalid_argument naming the first bad field.
  static OneCompMmElimAbsData from_arrays(double t0, double D, double V, int N_t,
                                          const std::vector<double>& times,
                                          const std::vector<double>& C_hat,
                                          const Rk45Settings& settings = default_settings()) {
    MYRIAD_EXPECTS(std::isfinite(t0), "one_comp_mm_elim_abs: t0 must be finite, got ", t0);
    MYRIAD_EXPECTS(std::isfinite(D) && D > 0,
                   "one_comp_mm_elim_abs: D must be positive and finite, got ", D);
    MYRIAD_EXPECTS(std::isfinite(V) && V > 0,
                   "one_comp_mm_elim_abs: V must be positive and finite, got ", V);
    MYRIAD_EXPECTS(N_t >= 1, "one_comp_mm_elim_abs: N_t must be >= 1, got ", N_t);
    MYRIAD_EXPECTS(times.size() == static_cast<std::size_t>(N_t),
                   "one_comp_mm_elim_abs: times has ", times.size(),
                   " entries, expected N_t = ", N_t);
    MYRIAD_EXPECTS(C_hat.size() == static_cast<std::size_t>(N_t),
                   "one_comp_mm_elim_abs: C_hat has ", C_hat.size(),
                   " entries, expected N_t = ", N_t);
    for (int i = 0; i < N_t; ++i) {
      const double previous = i == 0 ? t0 : times[i - 1];
      MYRIAD_EXPECTS(std::isfinite(times[i]) && times[i] >= previous && (i > 0 || times[i] > t0),
                     "one_comp_mm_elim_abs: times must be non-decreasing and > t0, got times[",
                     i + 1, "] = ", times[i], i == 0 ? " with t0 = " : " after ", previous);
      MYRIAD_EXPECTS(times[i] > 0, "one_comp_mm_elim_abs: times[", i + 1, "] = ", times[i],
                     " is not after the dose at t = 0, where C = 0 and log C = -inf");
      MYRIAD_EXPECTS(std::isfinite(C_hat[i]) && C_hat[i] > 0, "one_comp_mm_elim_abs: C_hat[", i + 1,
                     "] must be positive and finite, got ", C_hat[i]);
    }
    MYRIAD_EXPECTS(settings.rtol > 0 && settings.atol > 0 && std::isfinite(settings.rtol) &&
                       std::isfinite(settings.atol),
                   "one_comp_mm_elim_abs: the solver's rtol and atol must be positive, got ",
                   settings.rtol, " and ", settings.atol);
    MYRIAD_EXPECTS(settings.max_steps >= 1,
                   "one_comp_mm_elim_abs: the solver's max_steps must be >= 1, got ",
                   settings.max_steps);

    OneCompMmElimAbsData data;
    std::vector<T> t(times.size()), log_c(C_hat.size());
    double constant = 4 * OneCompMmElimAbs<T>::kLogTwoOverPi;
    for (int i = 0; i < N_t; ++i) {
      t[i] = T(times[i]);
      log_c[i] = T(std::log(C_hat[i]));
      constant -= std::log(C_hat[i]) + kLogSqrtTwoPi;
    }
    data.model_.n = N_t;
    data.model_.t_start = T(t0 > 0 ? t0 : 0.0);
    data.model_.dose_per_volume = T(D / V);
    data.model_.inv_volume = T(1 / V);
    data.model_.log_constant = T(constant);
    data.model_.settings = settings;
    data.times_ = std::move(t);
    data.log_c_hat_ = std::move(log_c);
    return data;
  }

  int N_t() const { return model_.n; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  OneCompMmElimAbs<T> viewing(Copy copy) const {
    return view(copy(times_), copy(log_c_hat_));
  }

 private:
  OneCompMmElimAbsData() = default;

  OneCompMmElimAbs<T> view(const T* times, const T* log_c_hat) const {
    OneCompMmElimAbs<T> m = model_;
    m.times = times;
    m.log_c_hat = log_c_hat;
    return m;
  }

  OneCompMmElimAbs<T> model_;
  MirroredArray<T> times_, log_c_hat_;
};

}  // namespace myriad::models
