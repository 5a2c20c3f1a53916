#pragma once
// Checks of a density model's supplied log density and gradient (model/concept.hpp): against its
// generic log_density, against forward-mode duals and against central finite differences whose
// bound is derived from the step (expect_consistent_derivatives); and of a float instantiation
// against the double one (expect_float_agrees). The tolerances come from the caller, since each
// family of models bounds its rounding in its own way: relative to the magnitude of a short sum
// (summed_log_density_tolerances, with the drivers check_model_derivatives and
// check_float_model), or from first-order error scales worked out per model
// (error_scale_tolerances).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/third_derivative.hpp"
#include "myriad/model/autodiff.hpp"

namespace myriad::testing {

/// Machine epsilon (twice the unit roundoff) of double and of float.
inline constexpr double kEps = std::numeric_limits<double>::epsilon();
inline constexpr double kFloatEps = std::numeric_limits<float>::epsilon();

/// The tolerances of one point's checks.
struct DerivativeTolerances {
  double value = 0;              ///< on |supplied − generic| and |dual − generic| of log p
  std::vector<double> gradient;  ///< per component, on |supplied − dual| of the gradient
  double rounding = 0;           ///< δf, a bound on the rounding error of one evaluation of log p
  double fd_factor = 4;          ///< safety factor of the central-difference bound
};

/// Largest errors seen by expect_consistent_derivatives over the points it was given.
struct DerivativeAgreement {
  double value_ratio = 0;     ///< max |supplied log p − generic log p| / tolerance
  double dual_ratio = 0;      ///< max |supplied − dual| / tolerance
  double fd_ratio = 0;        ///< max |supplied − finite difference| / tolerance
  double dual_rel_error = 0;  ///< max |supplied − dual| / (1 + ‖∇‖∞)
  double fd_abs_error = 0;    ///< max |supplied − finite difference|
  /// The worst ratio of error to tolerance over the three checks.
  double worst() const { return std::max({value_ratio, dual_ratio, fd_ratio}); }
};

namespace detail {

/// `tolerances` itself, or what it makes of the supplied log p and the reference gradient.
template <class Tolerances>
DerivativeTolerances tolerances_at(const Tolerances& tolerances, double lp,
                                   const std::vector<double>& gradient) {
  if constexpr (std::is_invocable_v<const Tolerances&, double, const std::vector<double>&>) {
    return tolerances(lp, gradient);
  } else {
    return tolerances;
  }
}

}  // namespace detail

/// Checks, at x, that the model's log_density_gradient agrees with (a) its generic log_density on
/// plain doubles, (b) the gradient by forward-mode duals (one tangent per pass, and the
/// vector-mode default of log_density_and_gradient for models without a gradient, which must
/// give the same numbers: each tangent's operations are the scalar dual's) and (c) central
/// finite differences with
/// h = 1e-5·max(1, |x_i|). The error of (f(x + h) − f(x − h))/(2h) against f' is at most
/// h²|f'''(ξ)|/6 with ξ within h of x_i (truncation; f''' at x_i by triple duals, h far below its
/// scale of variation) plus 2δf/(2h) (rounding of the two evaluations) (e.g. Nocedal & Wright,
/// "Numerical Optimization", §8.1): the check allows fd_factor (h²|f'''|/6 + δf/h), while a wrong
/// derivative term is off by O(1) of the gradient's scale. `tolerances` is a DerivativeTolerances
/// or a callable that makes one from the supplied log p and the dual gradient at x.
template <class Model, class Tolerances>
void expect_consistent_derivatives(const Model& model, const std::vector<double>& x,
                                   const Tolerances& tolerances, DerivativeAgreement& agreement) {
  const int dim = model.dim();
  ASSERT_EQ(static_cast<int>(x.size()), dim);
  std::vector<double> grad(dim), dual_grad(dim);
  const double lp = model.log_density_gradient(x, grad);
  const double lp_generic = model.log_density(x);
  const double lp_dual = myriad::gradient_by_duals(model, x, dual_grad, dim);
  std::vector<double> vector_grad(dim);
  const double lp_vector = myriad::gradient_by_forward_mode(model, x, vector_grad, dim);
  EXPECT_EQ(lp_vector, lp_dual);
  EXPECT_EQ(vector_grad, dual_grad);
  ASSERT_TRUE(std::isfinite(lp));
  const DerivativeTolerances tol = detail::tolerances_at(tolerances, lp, dual_grad);

  // (a), (b): the same function in a different order of operations.
  EXPECT_NEAR(lp, lp_generic, tol.value);
  EXPECT_NEAR(lp_dual, lp_generic, tol.value);
  agreement.value_ratio = std::max(agreement.value_ratio, std::fabs(lp - lp_generic) / tol.value);

  double grad_norm = 0;
  for (double g : dual_grad) grad_norm = std::max(grad_norm, std::fabs(g));
  for (int i = 0; i < dim; ++i) {
    EXPECT_NEAR(grad[i], dual_grad[i], tol.gradient[i]) << "component " << i;
    agreement.dual_ratio =
        std::max(agreement.dual_ratio, std::fabs(grad[i] - dual_grad[i]) / tol.gradient[i]);
    agreement.dual_rel_error =
        std::max(agreement.dual_rel_error, std::fabs(grad[i] - dual_grad[i]) / (1 + grad_norm));

    // (c)
    const double h = 1e-5 * std::max(1.0, std::fabs(x[i]));
    std::vector<double> xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    const double step = xp[i] - xm[i];  // exact spacing of the representable points
    const double fd = (model.log_density(xp) - model.log_density(xm)) / step;
    const double f3 = myriad::test::third_derivative(model, x, i);
    const double fd_tol = tol.fd_factor * (h * h * std::fabs(f3) / 6 + tol.rounding / h);
    EXPECT_NEAR(grad[i], fd, fd_tol) << "component " << i << ", f''' = " << f3;
    agreement.fd_ratio = std::max(agreement.fd_ratio, std::fabs(grad[i] - fd) / fd_tol);
    agreement.fd_abs_error = std::max(agreement.fd_abs_error, std::fabs(grad[i] - fd));
  }
}

/// What expect_float_agrees compares besides the float model's supplied log p and gradient.
struct FloatChecks {
  bool generic = false;  ///< the float model's generic log_density
  bool duals = false;    ///< the float model's log p and gradient by float duals
};

/// Evaluates the float model at the float-rounded point and the double model at the same (exactly
/// representable) point, so that the difference is float arithmetic alone, and checks the float
/// results against the double ones within `tolerances` (as for expect_consistent_derivatives,
/// the callable form sees the double model's log p and gradient). `worst` becomes at least the
/// largest ratio of error to tolerance of the supplied log p and gradient.
template <class FloatModel, class DoubleModel, class Tolerances>
void expect_float_agrees(const FloatModel& model_f, const DoubleModel& model_d,
                         const std::vector<double>& x, const Tolerances& tolerances, double& worst,
                         FloatChecks checks = {}) {
  const int dim = model_d.dim();
  ASSERT_EQ(model_f.dim(), dim);
  std::vector<float> xf(x.begin(), x.end());
  std::vector<double> xd(xf.begin(), xf.end());
  std::vector<float> gf(dim), dual_gf(dim);
  std::vector<double> gd(dim);
  const float lp_f = model_f.log_density_gradient(xf, gf);
  const float lp_dual_f =
      checks.duals ? myriad::gradient_by_duals(model_f, xf, dual_gf, dim) : 0.0f;
  const double lp_d = model_d.log_density_gradient(xd, gd);
  const DerivativeTolerances tol = detail::tolerances_at(tolerances, lp_d, gd);
  EXPECT_NEAR(lp_f, lp_d, tol.value);
  if (checks.duals) {
    EXPECT_NEAR(lp_dual_f, lp_d, tol.value);
  }
  if (checks.generic) {
    EXPECT_NEAR(model_f.log_density(xf), lp_d, tol.value);
  }
  worst = std::max(worst, std::fabs(lp_f - lp_d) / tol.value);
  for (int i = 0; i < dim; ++i) {
    EXPECT_NEAR(gf[i], gd[i], tol.gradient[i]) << "component " << i;
    if (checks.duals) {
      EXPECT_NEAR(dual_gf[i], gd[i], tol.gradient[i]) << "dual component " << i;
    }
    worst = std::max(worst, std::fabs(gf[i] - gd[i]) / tol.gradient[i]);
  }
}

/// Data of a float model that are the double model's data rounded: f[i] = float(d[i]) for every
/// entry of d.
inline void expect_rounded_to_float(const std::vector<float>& f, const std::vector<double>& d) {
  for (std::size_t i = 0; i < d.size(); ++i)
    EXPECT_EQ(f[i], static_cast<float>(d[i])) << "entry " << i;
}

// ---------------------------------------------------------------------------------------------
// Tolerances relative to a short sum.

/// For a log density that sums at most ~50 terms of one sign (log-likelihood and log-prior
/// contributions: the models of gaussian, logistic, eight_schools and funnel), at log p = lp with
/// gradient ∇ (by duals):
///  (a) the same function in another order of operations agrees to a few ulps of the summed
///      magnitude, 1e-12 (1 + |lp|);
///  (b) duals compute the same derivative exactly up to rounding: 1e-12 relative to the
///      gradient's scale, 1 + ‖∇‖∞ (components can cancel to near zero, so not to each one);
///  (c) each evaluation's floating-point error is at most δf = 64 ε (1 + |lp|) (Higham,
///      "Accuracy and Stability of Numerical Algorithms", §4.2), with a safety factor of 4 on the
///      central-difference bound for the remaining slack.
inline DerivativeTolerances summed_log_density_tolerances(double lp,
                                                          const std::vector<double>& gradient) {
  double grad_norm = 0;
  for (double g : gradient) grad_norm = std::max(grad_norm, std::fabs(g));
  DerivativeTolerances tol;
  tol.value = 1e-12 * (1 + std::fabs(lp));
  tol.gradient.assign(gradient.size(), 1e-12 * (1 + grad_norm));
  tol.rounding = 64 * kEps * (1 + std::fabs(lp));
  tol.fd_factor = 4;
  return tol;
}

/// Float against double for the same models: a float sum of ≤ 50 terms, each from a few
/// operations and libm calls, is within ~200 ε_f of the summed magnitude (Higham §4.2), and the
/// summed magnitude is within a few times 1 + |f| (log p) or 1 + ‖∇‖∞ (gradient) at the test
/// points: 1e-4 ≈ 840 ε_f relative to that scale.
inline DerivativeTolerances summed_log_density_float_tolerances(
    double lp, const std::vector<double>& gradient) {
  double grad_norm = 0;
  for (double g : gradient) grad_norm = std::max(grad_norm, std::fabs(g));
  DerivativeTolerances tol;
  tol.value = 1e-4 * (1 + std::fabs(lp));
  tol.gradient.assign(gradient.size(), 1e-4 * (1 + grad_norm));
  return tol;
}

/// expect_consistent_derivatives with summed_log_density_tolerances at point(0) … point(points −
/// 1), the worst agreement printed and recorded.
template <class Model>
void check_model_derivatives(const Model& model,
                             const std::function<std::vector<double>(int)>& point, int points = 8) {
  DerivativeAgreement agreement;
  for (int p = 0; p < points; ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    expect_consistent_derivatives(model, point(p), summed_log_density_tolerances, agreement);
  }
  ::testing::Test::RecordProperty("max_dual_error_over_tolerance",
                                  std::to_string(agreement.dual_ratio));
  ::testing::Test::RecordProperty("max_fd_error_over_tolerance",
                                  std::to_string(agreement.fd_ratio));
  std::printf(
      "    max |grad - dual|/(1+|grad|inf) = %.2e, max |grad - fd| = %.2e, "
      "worst ratios to tolerance: dual %.3f, fd %.3f, value %.3f\n",
      agreement.dual_rel_error, agreement.fd_abs_error, agreement.dual_ratio, agreement.fd_ratio,
      agreement.value_ratio);
}

/// expect_float_agrees with summed_log_density_float_tolerances (and the float model's duals and
/// generic log density) at point(0) … point(points − 1), the worst ratio printed.
template <class FloatModel, class DoubleModel>
void check_float_model(const FloatModel& model_f, const DoubleModel& model_d,
                       const std::function<std::vector<double>(int)>& point, int points = 8) {
  double worst = 0;
  for (int p = 0; p < points; ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    expect_float_agrees(model_f, model_d, point(p), summed_log_density_float_tolerances, worst,
                        FloatChecks{true, true});
  }
  std::printf("    worst float-vs-double error / tolerance = %.3f\n", worst);
}

// ---------------------------------------------------------------------------------------------
// Tolerances from first-order error scales.

/// First-order rounding-error scales of a log density at a point (Higham, "Accuracy and
/// Stability of Numerical Algorithms", 2nd ed., §3.1 and §4.2: γ_n ≤ 1.01 n u for sums and dot
/// products): `value` bounds the sum of the magnitudes of the terms of log p, with the errors of
/// their inputs propagated through the derivatives, `gradient[i]` that of ∂_i log p, and `terms`
/// is the longest chain of floating-point operations feeding one result, so that an evaluation
/// with unit roundoff ε is within terms · ε · scale of the exact value.
struct ErrorScales {
  double value = 0;
  std::vector<double> gradient;
  double terms = 0;
};

/// factor · terms · ε · (floor + scale) on log p and on each gradient component, and for finite
/// differences δf = terms · ε · (floor + value) with `factor` as the safety factor: `factor`
/// covers the two evaluations compared and the second-order remainder, `floor` (0 or 1) an
/// absolute allowance where a scale may be near zero. ε is that of the precision checked.
inline DerivativeTolerances error_scale_tolerances(const ErrorScales& scales, double factor,
                                                   double floor, double eps = kEps) {
  DerivativeTolerances tol;
  tol.value = factor * scales.terms * eps * (floor + scales.value);
  for (double g : scales.gradient)
    tol.gradient.push_back(factor * scales.terms * eps * (floor + g));
  tol.rounding = scales.terms * eps * (floor + scales.value);
  tol.fd_factor = factor;
  return tol;
}

}  // namespace myriad::testing
