#pragma once
// Stan's constraining transforms (Stan Reference Manual, "Constraint transforms"), for models
// sampled on the unconstrained scale as Stan samples them: each maps unconstrained values u to
// the constrained parameter x and adds log |dx/du| (the Jacobian term a density on u carries) to
// `log_jacobian`. Generic over the scalar S (double, float, the duals of model/autodiff.hpp),
// device-safe and allocation-free.
//
//   real<lower=a>            x = a + e^u,                       log J = u
//   real<lower=a, upper=b>   x = a + (b − a) σ(u),              log J = log(b − a) + log σ(u) +
//   log(1 − σ(u)) ordered[K]               x_1 = u_1, x_k = x_{k−1} + e^{u_k}, log J = Σ_{k≥2} u_k
//   positive_ordered[K]      x_1 = e^{u_1}, then as ordered,    log J = Σ_k u_k
//   simplex[K]               stick-breaking on K − 1 values:   z_k = σ(u_k − log(K − k)),
//                            x_k = (1 − Σ_{j<k} x_j) z_k, x_K the rest,
//                            log J = Σ_k [log z_k + log(1 − z_k) + log(1 − Σ_{j<k} x_j)]
//
// with σ(t) = 1 / (1 + e^{−t}); log σ(t) = −log(1 + e^{−t}) and log(1 − σ(t)) = −log(1 + e^t)
// are evaluated by log1p_exp, which neither overflows nor loses the tail.

// The duals' overloads of exp, log, … must be visible where a model's template is defined: a
// qualified call such as myriad::log(v) on a dual finds its overloads there, not by ADL later.
#include "myriad/core/dual.hpp"
#include "myriad/core/dual_vector.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"

namespace myriad {

/// `real<lower=a>`: a + e^u.
template <class S>
MYRIAD_HD S lower_bound_transform(const S& u, double a, S& log_jacobian) {
  log_jacobian += u;
  return S(a) + myriad::exp(u);
}

/// `real<lower=a, upper=b>` with bounds that may themselves be parameters (Stan's
/// `real<lower=0, upper=(1 - alpha1)>`): a + (b − a) σ(u).
template <class S, class A, class B>
MYRIAD_HD S interval_transform(const S& u, const A& a, const B& b, S& log_jacobian) {
  const S width = S(b) - S(a);
  const S log_sigmoid = -log1p_exp(-u);
  log_jacobian += myriad::log(width) + log_sigmoid - log1p_exp(u);
  return S(a) + width * myriad::exp(log_sigmoid);
}

/// `ordered[K]`: x[k] from u[first + k], k = 0 … K − 1.
template <class Vec, class S>
MYRIAD_HD void ordered_transform(const Vec& u, int first, int K, S* x, S& log_jacobian) {
  if (K < 1) return;  // ordered[0]: nothing to write
  x[0] = S(u[first]);
  for (int k = 1; k < K; ++k) {
    const S step = u[first + k];
    log_jacobian += step;
    x[k] = x[k - 1] + myriad::exp(step);
  }
}

/// `positive_ordered[K]`: x[k] from u[first + k].
template <class Vec, class S>
MYRIAD_HD void positive_ordered_transform(const Vec& u, int first, int K, S* x, S& log_jacobian) {
  for (int k = 0; k < K; ++k) {
    const S step = u[first + k];
    log_jacobian += step;
    x[k] = (k == 0 ? S(0) : x[k - 1]) + myriad::exp(step);
  }
}

/// `simplex[K]` by Stan's stick-breaking: x[0 … K − 1] from the K − 1 values u[first + k].
template <class Vec, class S>
MYRIAD_HD void simplex_transform(const Vec& u, int first, int K, S* x, S& log_jacobian) {
  if (K < 1) return;  // no simplex of 0 elements: write nothing rather than x[−1]
  S stick = S(1);
  for (int k = 0; k + 1 < K; ++k) {
    const S t = S(u[first + k]) - S(myriad::log(double(K - 1 - k)));
    const S log_z = -log1p_exp(-t), log_one_minus_z = -log1p_exp(t);
    log_jacobian += log_z + log_one_minus_z + myriad::log(stick);
    x[k] = stick * myriad::exp(log_z);
    stick = stick - x[k];
  }
  x[K - 1] = stick;
}

}  // namespace myriad
