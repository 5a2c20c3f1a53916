#pragma once
// `logistic`: Bayesian logistic regression with independent normal priors,
//
//   β_j ~ N(0, s²),   y_i ~ Bernoulli(σ(η_i)),   η = Xβ,   σ(t) = 1 / (1 + e^{−t}),
//
// for an n × d design matrix X (row-major; synthetic data put the intercept, a column of ones,
// in column 0). The log density, every normalising constant included (so log Z = log p(y)), is
//   log p(β) = Σ_i [y_i η_i − log(1 + e^{η_i})] − ½ Σ_j β_j²/s² − d (½ log 2π + log s),
// and its gradient is ∇ log p = Xᵀ(y − σ(η)) − β/s² (e.g. Bishop, "Pattern Recognition and
// Machine Learning", eq. 4.91 with the prior added).
//
// Logistic<T> is the trivially copyable view that chains evaluate; LogisticData<T> owns the
// data on the host and, on demand, one copy on the device. Every chain reads the same row of X
// at the same time, so on a GPU the reads of X and y are broadcasts served from cache.
// CLI defaults: n = 1000, d = 10, s = prior_sd = 10.

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/row_products.hpp"
#include "myriad/model/softplus.hpp"
#include "myriad/model/stacked.hpp"

namespace myriad::models {

template <class T>
struct Logistic {
  using value_type = T;

  const T* x = nullptr;  ///< n × d design matrix, row-major, visible where the chains run
  const T* y = nullptr;  ///< n labels in {0, 1}
  int n = 0;             ///< observations
  int d = 0;             ///< coefficients (columns of X)
  T prior_sd = T(10);    ///< s: prior standard deviation of every β_j

  /// A view of caller-owned data (host or device pointers); checks sizes and prior_sd only.
  static Logistic make(const T* x, const T* y, int n, int d, double prior_sd) {
    MYRIAD_EXPECTS(n >= 1, "logistic: n must be >= 1, got ", n);
    MYRIAD_EXPECTS(d >= 1, "logistic: d must be >= 1, got ", d);
    MYRIAD_EXPECTS(x != nullptr && y != nullptr, "logistic: x and y must not be null");
    MYRIAD_EXPECTS(std::isfinite(prior_sd) && prior_sd > 0,
                   "logistic: prior_sd must be positive, got ", prior_sd);
    return Logistic{x, y, n, d, T(prior_sd)};
  }

  MYRIAD_HD int dim() const { return d; }

  /// log p(β) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& beta) const {
    using S = std::decay_t<decltype(beta[0])>;
    S sum_sq = S(0);
    for (int j = 0; j < d; ++j) sum_sq += beta[j] * beta[j];
    return S(log_prior_normaliser()) - S(0.5) * sum_sq / S(prior_sd * prior_sd) +
           log_likelihood(beta);
  }

  /// The Gaussian prior factor N(0, s² I) and the likelihood Σ_i y_i η_i − log(1 + e^{η_i}),
  /// η = Xβ, for the samplers that move along the prior (elliptical slice sampling;
  /// model/estimator.hpp).
  MYRIAD_HD T gaussian_prior_mean(int) const { return T(0); }
  MYRIAD_HD T gaussian_prior_sd(int) const { return prior_sd; }
  template <class Vec>
  MYRIAD_HD auto log_likelihood(const Vec& beta) const {
    using S = std::decay_t<decltype(beta[0])>;
    S lp = S(0);
    for (int i = 0; i < n; ++i) {
      const S eta = row_dot(x + static_cast<std::int64_t>(i) * d, beta, d);
      lp += S(y[i]) * eta - log1p_exp(eta);
    }
    return lp;
  }

  /// log p(β) and ∇ log p(β) = Xᵀ(y − σ(Xβ)) − β/s² in one pass over the rows of X.
  /// Written over the element type S, so chains also run it in SIMD lanes (core/lanes.hpp).
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& beta, Grad& grad) const {
    using S = element_t<Vec>;
    const T prior_precision = T(1) / (prior_sd * prior_sd);
    S sum_sq = S(0);
    for (int j = 0; j < d; ++j) {
      const S b = beta[j];
      sum_sq += b * b;
      grad[j] = -prior_precision * b;
    }
    S lp = log_prior_normaliser() - T(0.5) * prior_precision * sum_sq;
    for (int i = 0; i < n; ++i) {
      const T* row = x + static_cast<std::int64_t>(i) * d;
      S eta = S(0);
      for (int j = 0; j < d; ++j) eta += row[j] * beta[j];
      S sigmoid;
      const S softplus = softplus_and_logistic<T>(eta, sigmoid);  // log(1 + e^η), σ(η)
      lp += y[i] * eta - softplus;
      const S residual = y[i] - sigmoid;
      for (int j = 0; j < d; ++j) grad[j] += residual * row[j];
    }
    return lp;
  }

  /// Recorded quantities: the coefficients, named beta[0], …, beta[d−1].
  MYRIAD_HD int num_quantities() const { return d; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& beta, Out& out) const {
    for (int j = 0; j < d; ++j) out[j] = beta[j];
  }
  std::string quantity_name(int i) const { return "beta[" + std::to_string(i) + "]"; }

  /// −d (½ log 2π + log s): the normalising constant of the N(0, s² I) prior.
  MYRIAD_HD T log_prior_normaliser() const {
    return T(-d) * (T(kLogSqrtTwoPi) + myriad::log(prior_sd));
  }

  /// Backends the library instantiates (model/library_instances.hpp): the CPU lane kernels and
  /// CUDA's.
  static constexpr unsigned library_backends =
      library_backend::cpu_hmc_lanes | library_backend::hmc |
      (std::is_same_v<T, double> ? library_backend::auxiliary : 0u);
  /// ... and for Stacked<Logistic<double>> (model/stacked.hpp; batched simulation-based
  /// calibration).
  static constexpr unsigned stacked_library_backends = library_backend::hmc_in_double<T>;
};

/// R replications of the model as one (batched SBC, run/sbc.hpp).
template <class T>
using StackedLogistic = Stacked<Logistic<T>>;

/// Owning host container of logistic-regression data: X (n × d, row-major) and y, with an
/// optional device copy that is uploaded once, the first time device_model() is called.
/// Movable, not copyable (it may own device memory).
template <class T>
class LogisticData {
 public:
  /// Purpose tags of the synthetic-data streams (core/random.hpp), one per kind of draw.
  static constexpr std::uint32_t kDesignPurpose = user_purpose(0);
  static constexpr std::uint32_t kBetaPurpose = user_purpose(1);
  static constexpr std::uint32_t kLabelPurpose = user_purpose(2);

  /// Synthetic data: X_i0 = 1 (intercept), X_ij ~ N(0, 1) for j ≥ 1, true β ~ N(0, I_d),
  /// y_i ~ Bernoulli(σ(x_iᵀβ)). Row i draws from RandomStream(seed, i) (X with tag user + 0,
  /// the label's uniform with tag user + 2), β from RandomStream(seed, 0) with tag user + 1, all
  /// at iteration 0 and in double, so every machine and both precisions see the same data
  /// (up to the last-ulp differences between libm implementations of log, sin and cos).
  static LogisticData synthetic(int n, int d, std::uint64_t seed) {
    MYRIAD_EXPECTS(d >= 1, "logistic: d must be >= 1, got ", d);
    std::vector<double> beta(static_cast<std::size_t>(d));
    DenseVector<double> beta_view{beta.data(), d};  // fill_normal is MYRIAD_HD: no std::vector
    RandomStream(seed, 0).fill_normal<double>(0, static_cast<Purpose>(kBetaPurpose), beta_view, d);
    return with_labels(n, d, seed, beta, [seed](int i) {
      return RandomStream(seed, static_cast<std::uint64_t>(i))
          .uniform<double>(0, static_cast<Purpose>(kLabelPurpose), 0);
    });
  }

  /// Simulation-based calibration (run/sbc.hpp): the design X of synthetic(n, d, design_seed), a
  /// draw β ~ N(0, prior_sd² I) from the prior and labels y_i ~ Bernoulli(σ(x_iᵀβ)), both from
  /// RandomStream(seed, replication) (β: tag user + 1, iteration 0; y_i's uniform: tag user + 2,
  /// iteration i). true_beta() is the draw.
  static LogisticData simulate(int n, int d, double prior_sd, std::uint64_t design_seed,
                               std::uint64_t seed, std::int64_t replication) {
    MYRIAD_EXPECTS(d >= 1, "logistic: d must be >= 1, got ", d);
    MYRIAD_EXPECTS(std::isfinite(prior_sd) && prior_sd > 0,
                   "logistic: prior_sd must be positive, got ", prior_sd);
    const RandomStream rng(seed, static_cast<std::uint64_t>(replication));
    std::vector<double> beta(static_cast<std::size_t>(d));
    DenseVector<double> beta_view{beta.data(), d};
    rng.fill_normal<double>(0, static_cast<Purpose>(kBetaPurpose), beta_view, d);
    for (double& b : beta) b *= prior_sd;
    return with_labels(n, d, design_seed, beta, [rng](int i) {
      return rng.uniform<double>(static_cast<std::uint32_t>(i), static_cast<Purpose>(kLabelPurpose),
                                 0);
    });
  }

  /// Caller-supplied data; x is n × d row-major (include a column of ones for an intercept).
  /// Throws myriad::invalid_argument naming the first bad entry.
  static LogisticData from_arrays(std::vector<T> x, std::vector<T> y, int n, int d) {
    MYRIAD_EXPECTS(n >= 1, "logistic: n must be >= 1, got ", n);
    MYRIAD_EXPECTS(d >= 1, "logistic: d must be >= 1, got ", d);
    const std::size_t expected = static_cast<std::size_t>(n) * static_cast<std::size_t>(d);
    MYRIAD_EXPECTS(x.size() == expected, "logistic: x has ", x.size(),
                   " entries, expected n*d = ", n, "*", d, " = ", expected);
    MYRIAD_EXPECTS(y.size() == static_cast<std::size_t>(n), "logistic: y has ", y.size(),
                   " entries, expected n = ", n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < d; ++j) {
        MYRIAD_EXPECTS(std::isfinite(x[static_cast<std::size_t>(i) * d + j]), "logistic: x[", i,
                       "][", j, "] is not finite");
      }
      MYRIAD_EXPECTS(y[i] == T(0) || y[i] == T(1), "logistic: y[", i, "] must be 0 or 1, got ",
                     y[i]);
    }
    LogisticData data;
    data.n_ = n;
    data.d_ = d;
    data.x_ = std::move(x);
    data.y_ = std::move(y);
    return data;
  }

  int n() const { return n_; }
  int d() const { return d_; }
  /// X, row-major n × d.
  const std::vector<T>& x() const { return x_.host(); }
  /// Labels in {0, 1}.
  const std::vector<T>& y() const { return y_.host(); }
  /// The coefficients the synthetic data were drawn from; empty for from_arrays data.
  const std::vector<T>& true_beta() const { return true_beta_; }

  /// A model viewing the host copy (CPU backend); valid while this object lives.
  Logistic<T> host_model(T prior_sd) const {
    return Logistic<T>::make(x_.host_data(), y_.host_data(), n_, d_, static_cast<double>(prior_sd));
  }

  /// A model viewing the device copy, uploading X and y on the first call. Throws
  /// myriad::unavailable_error in a build without CUDA, myriad::cuda_error if the upload fails.
  /// Valid while this object lives.
  Logistic<T> device_model(T prior_sd) {
    host_model(prior_sd);  // validates prior_sd before any upload
    return Logistic<T>::make(x_.device_data(), y_.device_data(), n_, d_,
                             static_cast<double>(prior_sd));
  }

 private:
  LogisticData() = default;

  /// X_i0 = 1, X_ij ~ N(0, 1) for j ≥ 1 from RandomStream(design_seed, i) (tag user + 0,
  /// iteration 0), and y_i = [u_i < σ(x_iᵀβ)] with u_i = label_uniform(i).
  template <class LabelUniform>
  static LogisticData with_labels(int n, int d, std::uint64_t design_seed,
                                  const std::vector<double>& beta, LabelUniform label_uniform) {
    MYRIAD_EXPECTS(n >= 1, "logistic: n must be >= 1, got ", n);
    LogisticData data;
    data.n_ = n;
    data.d_ = d;
    data.true_beta_.assign(beta.begin(), beta.end());
    std::vector<T> x(static_cast<std::size_t>(n) * d), y(static_cast<std::size_t>(n));
    std::vector<double> row(static_cast<std::size_t>(d));
    for (int i = 0; i < n; ++i) {
      const RandomStream stream(design_seed, static_cast<std::uint64_t>(i));
      row[0] = 1.0;
      // Covariates 1..d−1 are normals 0..d−2 of the row's stream.
      DenseVector<double> covariates{row.data() + 1, d - 1};
      stream.fill_normal<double>(0, static_cast<Purpose>(kDesignPurpose), covariates, d - 1);
      double eta = 0.0;
      for (int j = 0; j < d; ++j) eta += row[j] * beta[j];
      const double p = 1.0 / (1.0 + std::exp(-eta));
      const double u = label_uniform(i);
      for (int j = 0; j < d; ++j) x[static_cast<std::size_t>(i) * d + j] = T(row[j]);
      y[i] = u < p ? T(1) : T(0);
    }
    data.x_ = std::move(x);
    data.y_ = std::move(y);
    return data;
  }

  int n_ = 0;
  int d_ = 0;
  MirroredArray<T> x_, y_;
  std::vector<T> true_beta_;
};

}  // namespace myriad::models
