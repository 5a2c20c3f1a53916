#pragma once
// `linear_regression`: the normal linear model with an unknown noise scale, as posteriordb's
// regression posteriors write it (kidiq, earnings, mesquite, nes, blr, kilpisjarvi, and brms's
// diamonds),
//
//   y_i ~ N(x_iᵀβ, σ²),   β_j ~ N(m_j, s_j²), Student-t(ν_j, m_j, s_j) or flat,
//   σ ~ half-Cauchy(0, a), half-N(0, a²), half-Student-t(ν, 0, a) or flat on (0, ∞),
//
// sampled on the unconstrained scale θ = (β, τ = log σ) as Stan samples `real<lower=0> sigma`:
// the density of τ carries the Jacobian dσ/dτ = σ. With r = y − Xβ, n observations and
// z_j = (β_j − m_j)/s_j,
//
//   log p(θ) = −½ Σ_i r_i²/σ² − n log σ − (n/2) log 2π + Σ_j log p_j(β_j) + log p_σ(σ) + τ,
//
//   log p_j(β_j) = −½ z_j² − log(s_j √(2π))                              (normal),
//                = c_j − ((ν_j + 1)/2) log(1 + z_j²/ν_j),                  (Student-t)
//                  c_j = log Γ((ν_j + 1)/2) − log Γ(ν_j/2) − ½ log(ν_j π) − log s_j,
//
// and for σ, with u = σ/a,
//
//   log p_σ(σ) = log 2 − log(π a) − log(1 + u²)                            (half-Cauchy),
//              = log 2 − log(a √(2π)) − ½ u²                               (half-normal),
//              = log 2 + c_σ − ((ν + 1)/2) log(1 + u²/ν)                   (half-Student-t),
//                c_σ = log Γ((ν + 1)/2) − log Γ(ν/2) − ½ log(ν π) − log a,
//
// all with Stan's constants: the log 2 is that of the truncation at 0 (Stan's
// − student_t_lccdf(0 | ν, 0, a) and its half-normal, half-Cauchy kin). The log Γ constants c_j
// and c_σ are computed once on the host when the data are made (LinearRegressionData), not per
// evaluation. The gradient is
//
//   ∂/∂β_j = Σ_i r_i x_ij / σ² + d log p_j/dβ_j,
//            d log p_j/dβ_j = −z_j/s_j (normal), −(ν_j + 1) z_j / (s_j (ν_j + z_j²)) (Student-t),
//   ∂/∂τ   = Σ_i r_i²/σ² − n + σ · d log p_σ/dσ + 1,
//
// with σ · d log p_σ/dσ = −2u²/(1 + u²) for the half-Cauchy, −u² for the half-normal,
// −(ν + 1)u²/(ν + u²) for the half-Student-t and 0 for the flat prior.
//
// LinearRegression<T> is the trivially copyable view the chains evaluate (X row-major n × k, y,
// and the k prior means, scales, degrees of freedom and Student-t constants, an infinite scale
// meaning a flat prior and an infinite ν a normal one); LinearRegressionData<T> owns them on the
// host and, on demand, one copy on the device. Recorded quantities are on the constrained scale and
// named as Stan names them: beta[1] … beta[k], sigma, or the coefficient names the data were
// given (LinearRegressionData::name_coefficients; brms's b[1] … b[K−1], Intercept for diamonds).
// The CLI registers it under each posteriordb model name (src/app/posteriordb_regressions.cpp),
// which does each Stan program's transformed data; the library holds its CUDA instance in double
// precision (a float one is compiled with nvcc, as for any user model).

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/row_products.hpp"

namespace myriad::models {

/// The prior of the noise scale σ.
enum class ScalePrior { flat, half_cauchy, half_normal, half_student_t };

template <class T>
struct LinearRegression {
  using value_type = T;

  const T* x = nullptr;               ///< n × k design matrix, row-major
  const T* y = nullptr;               ///< n responses
  const T* prior_mean = nullptr;      ///< k prior locations m_j
  const T* prior_sd = nullptr;        ///< k prior scales s_j (the sd of a normal); +inf: flat
  const T* prior_df = nullptr;        ///< k prior degrees of freedom ν_j; +inf: normal
  const T* prior_log_norm = nullptr;  ///< k Student-t constants c_j (unused for the others)
  int n = 0;                          ///< observations
  int k = 0;                          ///< coefficients (columns of X)
  ScalePrior scale_prior = ScalePrior::flat;
  T scale = T(1);           ///< a, the scale of σ's prior (unused when flat)
  T scale_df = T(1);        ///< ν of σ's half-Student-t prior (unused by the others)
  T scale_log_norm = T(0);  ///< log 2 + c_σ of σ's half-Student-t prior (unused by the others)
  /// Host only: the k names of the coefficients' recorded quantities; null: beta[1] … beta[k].
  const std::string* coefficient_names = nullptr;

  MYRIAD_HD int dim() const { return k + 1; }

  /// log p(θ) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& theta) const {
    using S = std::decay_t<decltype(theta[0])>;
    const S tau = theta[k];
    const S sigma = myriad::exp(tau);
    const S inv_var = S(1) / (sigma * sigma);
    const S sum_sq = residual_sum_of_squares(x, y, theta, n, k);
    S lp = S(-0.5) * sum_sq * inv_var - S(n) * tau - S(T(n) * T(kLogSqrtTwoPi)) + tau;
    for (int j = 0; j < k; ++j) {
      if (!myriad::isfinite(prior_sd[j])) continue;
      const S z = (theta[j] - S(prior_mean[j])) / S(prior_sd[j]);
      if (myriad::isfinite(prior_df[j])) {
        lp += S(prior_log_norm[j]) -
              S(T(0.5) * (prior_df[j] + T(1))) * myriad::log1p(z * z / S(prior_df[j]));
      } else {
        lp += S(-0.5) * z * z - S(myriad::log(prior_sd[j]) + T(kLogSqrtTwoPi));
      }
    }
    return lp + log_scale_prior(sigma);
  }

  /// log p(θ) and its gradient in one pass over the rows of X.
  template <class Vec, class Grad>
  MYRIAD_HD T log_density_gradient(const Vec& theta, Grad& grad) const {
    const T tau = theta[k];
    const T sigma = myriad::exp(tau);
    const T inv_var = T(1) / (sigma * sigma);
    for (int j = 0; j < k; ++j) grad[j] = T(0);
    T sum_sq = T(0);
    for (int i = 0; i < n; ++i) {
      const T* row = x + static_cast<std::int64_t>(i) * k;
      T r = y[i];
      for (int j = 0; j < k; ++j) r -= row[j] * theta[j];
      sum_sq += r * r;
      for (int j = 0; j < k; ++j) grad[j] += r * row[j];
    }
    T lp = T(-0.5) * sum_sq * inv_var - T(n) * tau - T(n) * T(kLogSqrtTwoPi) + tau;
    for (int j = 0; j < k; ++j) {
      grad[j] *= inv_var;
      if (!myriad::isfinite(prior_sd[j])) continue;
      const T z = (theta[j] - prior_mean[j]) / prior_sd[j];
      if (myriad::isfinite(prior_df[j])) {
        const T nu = prior_df[j];
        lp += prior_log_norm[j] - T(0.5) * (nu + T(1)) * myriad::log1p(z * z / nu);
        grad[j] -= (nu + T(1)) * z / (prior_sd[j] * (nu + z * z));
      } else {
        lp += T(-0.5) * z * z - (myriad::log(prior_sd[j]) + T(kLogSqrtTwoPi));
        grad[j] -= z / prior_sd[j];
      }
    }
    grad[k] = sum_sq * inv_var - T(n) + scale_prior_slope(sigma) + T(1);
    return lp + log_scale_prior(sigma);
  }

  /// Recorded quantities: β on its own scale and σ = e^τ.
  MYRIAD_HD int num_quantities() const { return k + 1; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& theta, Out& out) const {
    for (int j = 0; j < k; ++j) out[j] = theta[j];
    out[k] = myriad::exp(theta[k]);
  }
  std::string quantity_name(int i) const {
    if (i >= k) return "sigma";
    return coefficient_names != nullptr ? coefficient_names[i]
                                        : "beta[" + std::to_string(i + 1) + "]";
  }

  /// log p_σ(σ), normalised on (0, ∞); 0 for the flat prior.
  /// Backends the library instantiates (model/library_instances.hpp).
  static constexpr unsigned library_backends = library_backend::hmc_in_double<T>;

  template <class S>
  MYRIAD_HD S log_scale_prior(const S& sigma) const {
    const S u = sigma / S(scale);
    switch (scale_prior) {
      case ScalePrior::half_cauchy:
        return S(T(kLogTwo) - T(kLogPi) - myriad::log(scale)) - myriad::log1p(u * u);
      case ScalePrior::half_normal:
        return S(T(kLogTwo) - T(kLogSqrtTwoPi) - myriad::log(scale)) - S(0.5) * u * u;
      case ScalePrior::half_student_t:
        return S(scale_log_norm) -
               S(T(0.5) * (scale_df + T(1))) * myriad::log1p(u * u / S(scale_df));
      default:
        return S(0);
    }
  }

  /// σ · d log p_σ(σ)/dσ: the prior's term of ∂/∂τ.
  MYRIAD_HD T scale_prior_slope(T sigma) const {
    const T u = sigma / scale;
    switch (scale_prior) {
      case ScalePrior::half_cauchy:
        return T(-2) * u * u / (T(1) + u * u);
      case ScalePrior::half_normal:
        return -u * u;
      case ScalePrior::half_student_t:
        return -(scale_df + T(1)) * u * u / (scale_df + u * u);
      default:
        return T(0);
    }
  }
};

/// Owning host data of a linear regression, with an optional device copy uploaded once.
/// Movable, not copyable.
template <class T>
class LinearRegressionData : public MirroredViews<LinearRegressionData<T>> {
 public:
  /// x is n × k row-major (a column of ones for an intercept); prior_mean and prior_sd have k
  /// entries (an infinite sd: a flat prior on that coefficient), every proper prior normal;
  /// `scale` is a, the scale of σ's prior, which may not be half_student_t (it needs ν: the
  /// overload below). Throws myriad::invalid_argument naming the first bad entry.
  static LinearRegressionData from_arrays(std::vector<T> x, std::vector<T> y, int n, int k,
                                          std::vector<T> prior_mean, std::vector<T> prior_sd,
                                          ScalePrior scale_prior, double scale) {
    return from_arrays(std::move(x), std::move(y), n, k, std::move(prior_mean), std::move(prior_sd),
                       normal(k > 0 ? k : 0), scale_prior, scale,
                       std::numeric_limits<double>::infinity());
  }

  /// As above, with Student-t priors: coefficient j has the prior Student-t(prior_df[j],
  /// prior_mean[j], prior_sd[j]), normal where prior_df[j] is infinite and flat where prior_sd[j]
  /// is; σ's half_student_t prior has scale_df degrees of freedom (positive and finite; unused
  /// by the other scale priors). The Student-t constants are computed here, in double.
  static LinearRegressionData from_arrays(std::vector<T> x, std::vector<T> y, int n, int k,
                                          std::vector<T> prior_mean, std::vector<T> prior_sd,
                                          std::vector<T> prior_df, ScalePrior scale_prior,
                                          double scale, double scale_df) {
    MYRIAD_EXPECTS(n >= 1, "linear_regression: n must be >= 1, got ", n);
    MYRIAD_EXPECTS(k >= 1, "linear_regression: k must be >= 1, got ", k);
    const std::size_t entries = static_cast<std::size_t>(n) * static_cast<std::size_t>(k);
    MYRIAD_EXPECTS(x.size() == entries, "linear_regression: x has ", x.size(),
                   " entries, expected n*k = ", entries);
    MYRIAD_EXPECTS(y.size() == static_cast<std::size_t>(n), "linear_regression: y has ", y.size(),
                   " entries, expected n = ", n);
    MYRIAD_EXPECTS(prior_mean.size() == static_cast<std::size_t>(k) &&
                       prior_sd.size() == static_cast<std::size_t>(k),
                   "linear_regression: the priors need k = ", k, " means and sds");
    MYRIAD_EXPECTS(prior_df.size() == static_cast<std::size_t>(k),
                   "linear_regression: prior_df has ", prior_df.size(),
                   " entries, expected k = ", k);
    for (std::size_t e = 0; e < entries; ++e)
      MYRIAD_EXPECTS(std::isfinite(x[e]), "linear_regression: x[", e / k, "][", e % k,
                     "] is not finite");
    for (int i = 0; i < n; ++i)
      MYRIAD_EXPECTS(std::isfinite(y[i]), "linear_regression: y[", i, "] is not finite");
    std::vector<T> prior_log_norm(static_cast<std::size_t>(k), T(0));
    for (int j = 0; j < k; ++j) {
      MYRIAD_EXPECTS(std::isfinite(prior_mean[j]), "linear_regression: prior mean ", j,
                     " is not finite");
      MYRIAD_EXPECTS(prior_sd[j] > 0, "linear_regression: prior sd ", j,
                     " must be positive (infinite: flat), got ", prior_sd[j]);
      MYRIAD_EXPECTS(prior_df[j] > 0, "linear_regression: prior degrees of freedom ", j,
                     " must be positive (infinite: normal), got ", prior_df[j]);
      if (std::isfinite(prior_sd[j]) && std::isfinite(prior_df[j]))
        prior_log_norm[j] = T(student_t_log_norm(prior_df[j], prior_sd[j]));
    }
    MYRIAD_EXPECTS(scale_prior == ScalePrior::flat || (std::isfinite(scale) && scale > 0),
                   "linear_regression: the scale prior's scale must be positive, got ", scale);
    MYRIAD_EXPECTS(
        scale_prior != ScalePrior::half_student_t || (std::isfinite(scale_df) && scale_df > 0),
        "linear_regression: the half-Student-t scale prior's degrees of freedom must be "
        "positive and finite, got ",
        scale_df);
    LinearRegressionData d;
    d.model_.n = n;
    d.model_.k = k;
    d.model_.scale_prior = scale_prior;
    d.model_.scale = T(scale_prior == ScalePrior::flat ? 1.0 : scale);
    if (scale_prior == ScalePrior::half_student_t) {
      d.model_.scale_df = T(scale_df);
      d.model_.scale_log_norm = T(kLogTwo + student_t_log_norm(scale_df, scale));
    }
    d.x_ = std::move(x);
    d.y_ = std::move(y);
    d.prior_mean_ = std::move(prior_mean);
    d.prior_sd_ = std::move(prior_sd);
    d.prior_df_ = std::move(prior_df);
    d.prior_log_norm_ = std::move(prior_log_norm);
    return d;
  }

  /// k flat coefficient priors (Stan's default for an unbounded `vector[k] beta` with no prior).
  static std::vector<T> flat(int k) {
    return std::vector<T>(static_cast<std::size_t>(k), std::numeric_limits<T>::infinity());
  }

  /// k infinite degrees of freedom: every proper coefficient prior normal.
  static std::vector<T> normal(int k) { return flat(k); }

  /// Names the coefficients' recorded quantities (k names, e.g. brms's b[1] … b[K−1],
  /// Intercept) in place of beta[1] … beta[k]; σ stays `sigma`. Throws myriad::invalid_argument
  /// unless there are k non-empty names.
  void name_coefficients(std::vector<std::string> names) {
    MYRIAD_EXPECTS(names.size() == static_cast<std::size_t>(model_.k),
                   "linear_regression: ", names.size(),
                   " coefficient names, expected k = ", model_.k);
    for (std::size_t j = 0; j < names.size(); ++j)
      MYRIAD_EXPECTS(!names[j].empty(), "linear_regression: coefficient name ", j, " is empty");
    coefficient_names_ = std::move(names);
  }

  int n() const { return model_.n; }
  int k() const { return model_.k; }

  /// Throws myriad::invalid_argument unless simulate can draw from every prior: β_j normal and
  /// σ half-normal or half-Cauchy. A flat prior is improper (nothing to draw), and the library
  /// draws no Student-t; the message names the first such coefficient, or sigma.
  void check_simulable() const {
    const std::vector<T>& sd = prior_sd_.host();
    const std::vector<T>& df = prior_df_.host();
    for (int j = 0; j < model_.k; ++j) {
      const std::string what =
          "simulation-based calibration draws the parameters from the prior: " +
          coefficient_name(j) + "'s prior is ";
      if (!std::isfinite(sd[j])) throw invalid_argument(what + "flat (improper)");
      if (std::isfinite(df[j])) throw invalid_argument(what + "Student-t, which it does not draw");
    }
    const std::string what =
        "simulation-based calibration draws the parameters from the prior: sigma's prior is ";
    if (model_.scale_prior == ScalePrior::flat) throw invalid_argument(what + "flat (improper)");
    if (model_.scale_prior == ScalePrior::half_student_t)
      throw invalid_argument(what + "half-Student-t, which it does not draw");
  }

  /// Simulation-based calibration (run/sbc.hpp): a draw from the prior — β_j ~ N(m_j, s_j²),
  /// σ = a|z| (half-normal) or a tan(πu/2) (half-Cauchy), z normal and u uniform — and data from
  /// the model given it on this design, ỹ_i = x_iᵀβ + σ ε_i, from RandomStream(seed,
  /// replication) at iteration 0 (tag user + 0: β's k normals, then the n of ε; user + 1: σ's
  /// draw). Returns the regression on ỹ (the same design, priors and names) and writes the draw
  /// as the recorded quantities (β, σ) to `truth`. Throws as check_simulable.
  LinearRegressionData simulate(std::uint64_t seed, std::int64_t replication,
                                std::vector<double>& truth) const {
    check_simulable();
    constexpr double kPi = 3.14159265358979323846;
    const int n = model_.n, k = model_.k;
    const RandomStream rng(seed, static_cast<std::uint64_t>(replication));
    const auto normal = static_cast<Purpose>(user_purpose(0));
    const auto scale_draw = static_cast<Purpose>(user_purpose(1));
    const std::vector<T>& mean = prior_mean_.host();
    const std::vector<T>& sd = prior_sd_.host();
    truth.assign(static_cast<std::size_t>(k) + 1, 0.0);
    for (int j = 0; j < k; ++j)
      truth[j] =
          static_cast<double>(mean[j]) +
          static_cast<double>(sd[j]) * rng.normal<double>(0, normal, static_cast<std::uint32_t>(j));
    const double a = static_cast<double>(model_.scale);
    const double sigma = model_.scale_prior == ScalePrior::half_normal
                             ? a * std::fabs(rng.normal<double>(0, scale_draw, 0))
                             : a * std::tan(0.5 * kPi * rng.uniform<double>(0, scale_draw, 0));
    truth[k] = sigma;
    const std::vector<T>& x = x_.host();
    std::vector<T> y(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      double mu = 0;
      for (int j = 0; j < k; ++j)
        mu += static_cast<double>(x[static_cast<std::size_t>(i) * k + j]) * truth[j];
      y[i] = T(mu + sigma * rng.normal<double>(0, normal, static_cast<std::uint32_t>(k + i)));
    }
    LinearRegressionData simulated =
        from_arrays(x, std::move(y), n, k, prior_mean_.host(), prior_sd_.host(), prior_df_.host(),
                    model_.scale_prior, a, static_cast<double>(model_.scale_df));
    simulated.coefficient_names_ = coefficient_names_;
    return simulated;
  }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  LinearRegression<T> viewing(Copy copy) const {
    return view(copy(x_), copy(y_), copy(prior_mean_), copy(prior_sd_), copy(prior_df_),
                copy(prior_log_norm_));
  }

 private:
  LinearRegressionData() = default;

  /// c = log Γ((ν + 1)/2) − log Γ(ν/2) − ½ log(ν π) − log s, Stan's student_t_lpdf constant.
  static double student_t_log_norm(double nu, double s) {
    return std::lgamma(0.5 * (nu + 1)) - std::lgamma(0.5 * nu) - 0.5 * (std::log(nu) + kLogPi) -
           std::log(s);
  }

  /// Coefficient j's recorded name: its given name, else beta[j + 1] (Stan's).
  std::string coefficient_name(int j) const {
    return coefficient_names_.empty() ? "beta[" + std::to_string(j + 1) + "]"
                                      : coefficient_names_[static_cast<std::size_t>(j)];
  }

  LinearRegression<T> view(const T* x, const T* y, const T* mean, const T* sd, const T* df,
                           const T* log_norm) const {
    LinearRegression<T> m = model_;
    m.x = x;
    m.y = y;
    m.prior_mean = mean;
    m.prior_sd = sd;
    m.prior_df = df;
    m.prior_log_norm = log_norm;
    m.coefficient_names = coefficient_names_.empty() ? nullptr : coefficient_names_.data();
    return m;
  }

  LinearRegression<T> model_;
  MirroredArray<T> x_, y_, prior_mean_, prior_sd_, prior_df_, prior_log_norm_;
  std::vector<std::string> coefficient_names_;
};

}  // namespace myriad::models
