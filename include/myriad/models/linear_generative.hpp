#pragma once
// `linear_generative`: the linear generative model of the HAIS paper (Sohl-Dickstein & Culpepper
// 2011; hais.md §9.1), an annealing target (estimate/annealing_target.hpp) with one problem per
// data point (the two-level batch of hais.md §6):
//
//   p(a) = N(0, I_L)  or  Π_l ½ e^{−|a_l|} (Laplace),   p(x | a) = N(x; Φ a, σ_n² I_M),
//
// with Φ ∈ R^{M×L}. Problem p is the density over the latent a ∈ R^L of the joint at data point
// x_p, fully normalised, so that its Z is the marginal likelihood p(x_p):
//
//   log p(x_p, a) = −E_p(a) = −‖x_p − Φa‖²/(2σ_n²) − (M/2) log(2πσ_n²) − E_a(a) − log Z_a,
//   E_a = ½‖a‖², log Z_a = (L/2) log 2π (Gaussian);   E_a = ‖a‖₁, log Z_a = L log 2 (Laplace;
//   the paper prints the normaliser as 2, hais.md §12),
//   ∇_a log p = Φᵀ(x_p − Φa)/σ_n² − ∇E_a,   ∇E_a = a or sign(a) (sign(0) = 0).
//
// Known answers (hais.md §9.1, §7):
//   Gaussian prior: log p(x) = log N(x; 0, S), S = ΦΦᵀ + σ_n² I_M, and the posterior is
//     N(μ, Σ_post), Σ_post = (ΦᵀΦ/σ_n² + I_L)⁻¹, μ = Σ_post Φᵀ x / σ_n² (Bishop, "Pattern
//     Recognition and Machine Learning", eqs. 2.113–2.117 with A = Φ, Λ = I, L = I/σ_n²);
//   Φ = 0, either prior (the paper's sanity check): log p(x) = −‖x‖²/(2σ_n²) − (M/2) log(2πσ_n²);
//   Laplace prior with Φ ≠ 0: no closed form (exact_log_z is NaN). Its exact posterior sample is
//     the latent that generated x: (a_p, x_p) is a draw from the joint, so a_p | x_p is a draw
//     from p(a | x_p) (the simulated-data argument of hais.md §7).
//
// Synthetic data from one seed, drawn in double on the host with Philox (core/random.hpp):
//   Φ_ml = phi_scale · N(0, 1/L)   (row m: normals of RandomStream(seed, m), tag user + 0),
//   a_p ~ prior                    (RandomStream(seed, p), tag user + 1: normals, or uniforms
//                                   through the Laplace inverse CDF),
//   x_p = Φ a_p + σ_n ε_p, ε_p ~ N(0, I_M)  (RandomStream(seed, p), tag user + 2).
// ε does not depend on the prior, so at phi_scale = 0 both priors see the same data.
// HAIS-paper sizes are the defaults: M = 36 (whitened PCA components), L = 36, σ_n = 0.1; the
// paper's Φ was learned from natural-image patches, which a random Φ stands in for.
//
// LinearGenerative<T> (the batch) and LinearGenerativePoint<T> (one problem) are trivially
// copyable views of arrays visible where the chains run; LinearGenerativeData<T> owns them on
// the host and, on demand, one copy on the device. All chains of one problem read the same x_p
// and every chain reads Φ row by row, so on a GPU those reads are broadcasts served from cache.

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/row_products.hpp"
#include "myriad/models/random_matrices.hpp"

namespace myriad::models {

/// The prior of the latents a of the linear generative model.
enum class LinearGenerativePrior : int {
  gaussian = 0,  ///< a ~ N(0, I_L)
  laplace = 1,   ///< a_l ~ ½ e^{−|a_l|} independently
};

/// One problem of the linear generative model: log p(x_p, a) as a density over a ∈ R^L.
template <class T>
struct LinearGenerativePoint {
  using value_type = T;

  const T* phi = nullptr;  ///< Φ, M × L row-major
  const T* x = nullptr;    ///< x_p, M entries
  int observed_dim = 0;    ///< M
  int latent_dim = 0;      ///< L
  LinearGenerativePrior prior = LinearGenerativePrior::gaussian;
  T noise_precision = T(100);  ///< 1/σ_n²
  T log_normaliser = T(0);     ///< −(M/2) log(2πσ_n²) − log Z_a

  MYRIAD_HD int dim() const { return latent_dim; }

  /// log p(x_p, a) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& a) const {
    using S = std::decay_t<decltype(a[0])>;
    S prior_energy = S(0);
    for (int l = 0; l < latent_dim; ++l) {
      prior_energy += prior == LinearGenerativePrior::gaussian ? S(0.5) * a[l] * a[l] : fabs(a[l]);
    }
    const S sum_sq = residual_sum_of_squares(phi, x, a, observed_dim, latent_dim);
    return S(log_normaliser) - S(0.5) * S(noise_precision) * sum_sq - prior_energy;
  }

  /// log p(x_p, a) and ∇_a log p = Φᵀ(x_p − Φa)/σ_n² − ∇E_a in one pass over the rows of Φ.
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& a, Grad& grad) const {
    using S = element_t<Vec>;  // a scalar, or a SIMD batch of particles (core/lanes.hpp)
    using Lanes = LaneOps<S>;
    S prior_energy = S(0);
    for (int l = 0; l < latent_dim; ++l) {
      const S a_l = a[l];
      if (prior == LinearGenerativePrior::gaussian) {
        prior_energy += T(0.5) * a_l * a_l;
        grad[l] = -a_l;
      } else {
        prior_energy += myriad::fabs(a_l);
        grad[l] = Lanes::select(a_l > S(0), S(-1), Lanes::select(a_l < S(0), S(1), S(0)));
      }
    }
    S sum_sq = S(0);
    for (int m = 0; m < observed_dim; ++m) {
      const T* row = phi + static_cast<std::int64_t>(m) * latent_dim;
      S r = S(x[m]);
      for (int l = 0; l < latent_dim; ++l) r -= row[l] * a[l];
      sum_sq += r * r;
      const S weighted = noise_precision * r;
      for (int l = 0; l < latent_dim; ++l) grad[l] += weighted * row[l];
    }
    return log_normaliser - T(0.5) * noise_precision * sum_sq - prior_energy;
  }
};

/// The batch of P problems (one per data point), with their exact answers.
template <class T>
struct LinearGenerative {
  using value_type = T;

  const T* phi = nullptr;      ///< Φ, M × L row-major
  const T* x = nullptr;        ///< data, P × M row-major (row p is x_p)
  const T* latents = nullptr;  ///< the a_p that generated x_p, P × L row-major
  /// Gaussian prior only (null otherwise): posterior means μ_p, P × L row-major, and the lower
  /// Cholesky factor of Σ_post, L × L row-major (the same for every point).
  const T* posterior_mean = nullptr;
  const T* posterior_factor = nullptr;
  /// exact_log_z of every point, P entries, always a host pointer (read by host code only).
  const double* host_log_z = nullptr;
  int observed_dim = 0;  ///< M
  int latent_dim = 0;    ///< L
  int points = 0;        ///< P
  LinearGenerativePrior prior = LinearGenerativePrior::gaussian;
  T noise_precision = T(100);  ///< 1/σ_n²
  T log_normaliser = T(0);     ///< −(M/2) log(2πσ_n²) − log Z_a

  /// Dimension of every problem: the number of latents L.
  MYRIAD_HD int dim() const { return latent_dim; }
  MYRIAD_HD int num_problems() const { return points; }

  /// The density model of data point p over a ∈ R^L.
  MYRIAD_HD LinearGenerativePoint<T> problem(int p) const {
    return LinearGenerativePoint<T>{phi,           x + static_cast<std::int64_t>(p) * observed_dim,
                                    observed_dim,  latent_dim,
                                    prior,         noise_precision,
                                    log_normaliser};
  }

  /// log p(x_p): closed form for the Gaussian prior and for Φ = 0, NaN otherwise. Host only.
  double exact_log_z(int p) const {
    MYRIAD_EXPECTS(p >= 0 && p < points, "linear_generative: problem must lie in [0, ", points,
                   "), got ", p);
    return host_log_z[p];
  }

  /// An exact draw from p(a | x_p) into a: Gaussian prior, a = μ_p + L_post z with z ~ N(0, I_L)
  /// the normals 0 … L−1 of (iteration = draw, Purpose::exact_sample), so that reverse particle
  /// `draw` gets its own normals from any stream; Laplace prior, the generating latent a_p (the
  /// same for every draw, hais.md §7).
  template <class Out>
  MYRIAD_HD void exact_sample(int p, const RandomStream& rng, std::uint32_t draw, Out& a) const {
    const std::int64_t offset = static_cast<std::int64_t>(p) * latent_dim;
    if (prior != LinearGenerativePrior::gaussian) {
      for (int l = 0; l < latent_dim; ++l) a[l] = latents[offset + l];
      return;
    }
    rng.fill_normal<T>(draw, Purpose::exact_sample, a, latent_dim);
    // a_i = μ_i + Σ_{k≤i} L_ik z_k in place, from the last row up: row i reads z_0 … z_i only,
    // which rows below it have not yet overwritten.
    for (int i = latent_dim - 1; i >= 0; --i) {
      const T* row = posterior_factor + static_cast<std::int64_t>(i) * latent_dim;
      T sum = posterior_mean[offset + i];
      for (int k = 0; k <= i; ++k) sum += row[k] * T(a[k]);
      a[i] = sum;
    }
  }

  /// Backends the library instantiates (model/library_instances.hpp): the CPU lane kernels of
  /// Hamiltonian AIS and CUDA's.
  static constexpr unsigned library_backends =
      library_backend::cpu_ais_lanes | library_backend::ais | library_backend::tempering;
};

/// Owning host container of a synthetic linear generative model (Φ, data, generating latents,
/// Gaussian-prior posteriors and exact log Z), with an optional device copy uploaded once, the
/// first time device_model() is called. Movable, not copyable (it may own device memory).
template <class T>
class LinearGenerativeData : public MirroredViews<LinearGenerativeData<T>> {
 public:
  /// Purpose tags of the synthetic-data streams (core/random.hpp), one per kind of draw.
  static constexpr std::uint32_t kPhiPurpose = user_purpose(0);
  static constexpr std::uint32_t kLatentPurpose = user_purpose(1);
  static constexpr std::uint32_t kNoisePurpose = user_purpose(2);

  /// Synthetic model and data as in the header comment: `dim` = M observed dimensions,
  /// `latents` = L, `points` = P data points. phi_scale = 0 gives Φ = 0 (the paper's sanity
  /// check). Throws myriad::invalid_argument naming the offending value.
  static LinearGenerativeData synthetic(
      int dim = 36, int latents = 36, int points = 10,
      LinearGenerativePrior prior = LinearGenerativePrior::gaussian, double noise_sd = 0.1,
      double phi_scale = 1.0, std::uint64_t seed = 12051925) {
    MYRIAD_EXPECTS(dim >= 1, "linear_generative: dim must be >= 1, got ", dim);
    MYRIAD_EXPECTS(latents >= 1, "linear_generative: latents must be >= 1, got ", latents);
    MYRIAD_EXPECTS(points >= 1, "linear_generative: points must be >= 1, got ", points);
    MYRIAD_EXPECTS(
        prior == LinearGenerativePrior::gaussian || prior == LinearGenerativePrior::laplace,
        "linear_generative: unknown prior ", static_cast<int>(prior));
    MYRIAD_EXPECTS(std::isfinite(noise_sd) && noise_sd > 0,
                   "linear_generative: noise_sd must be positive, got ", noise_sd);
    MYRIAD_EXPECTS(std::isfinite(phi_scale) && phi_scale >= 0,
                   "linear_generative: phi_scale must be finite and >= 0, got ", phi_scale);
    const int m_dim = dim, l_dim = latents;
    LinearGenerativeData data;
    data.observed_dim_ = m_dim;
    data.latent_dim_ = l_dim;
    data.points_ = points;
    data.prior_ = prior;
    data.noise_sd_ = noise_sd;
    data.phi_scale_ = phi_scale;

    std::vector<double> phi = normal_matrix(m_dim, l_dim, seed, kPhiPurpose);
    const double phi_sd = phi_scale / std::sqrt(static_cast<double>(l_dim));
    for (double& v : phi) v *= phi_sd;

    std::vector<double> a(static_cast<std::size_t>(points) * l_dim);
    if (prior == LinearGenerativePrior::gaussian) {
      a = normal_matrix(points, l_dim, seed, kLatentPurpose);
    } else {
      // Inverse CDF of the standard Laplace distribution: F⁻¹(u) = log 2u for u < ½,
      // −log 2(1 − u) otherwise (u in the open interval (0, 1), so both logs are finite).
      for (int p = 0; p < points; ++p) {
        const RandomStream stream(seed, static_cast<std::uint64_t>(p));
        for (int l = 0; l < l_dim; ++l) {
          const double u = stream.uniform<double>(0, static_cast<Purpose>(kLatentPurpose),
                                                  static_cast<std::uint32_t>(l));
          a[static_cast<std::size_t>(p) * l_dim + l] =
              u < 0.5 ? std::log(2.0 * u) : -std::log(2.0 * (1.0 - u));
        }
      }
    }
    const std::vector<double> noise = normal_matrix(points, m_dim, seed, kNoisePurpose);
    std::vector<double> x(static_cast<std::size_t>(points) * m_dim);
    for (int p = 0; p < points; ++p) {
      for (int m = 0; m < m_dim; ++m) {
        double sum = noise_sd * noise[static_cast<std::size_t>(p) * m_dim + m];
        for (int l = 0; l < l_dim; ++l) {
          sum += phi[static_cast<std::size_t>(m) * l_dim + l] *
                 a[static_cast<std::size_t>(p) * l_dim + l];
        }
        x[static_cast<std::size_t>(p) * m_dim + m] = sum;
      }
    }

    const double noise_var = noise_sd * noise_sd;
    const double log_two_pi = std::log(2.0 * M_PI);
    const double log_z_prior =
        prior == LinearGenerativePrior::gaussian ? 0.5 * l_dim * log_two_pi : l_dim * std::log(2.0);
    data.log_normaliser_ = -0.5 * m_dim * std::log(2.0 * M_PI * noise_var) - log_z_prior;

    data.log_z_.assign(static_cast<std::size_t>(points), std::numeric_limits<double>::quiet_NaN());
    if (prior == LinearGenerativePrior::gaussian) {
      data.gaussian_posterior(phi, x);
      data.gaussian_log_z(phi, x);
    } else if (phi_scale == 0.0) {
      // Φ = 0: p(x | a) does not depend on a and the prior integrates to 1 (hais.md §9.1).
      for (int p = 0; p < points; ++p) {
        double sum_sq = 0.0;
        for (int m = 0; m < m_dim; ++m)
          sum_sq += x[static_cast<std::size_t>(p) * m_dim + m] *
                    x[static_cast<std::size_t>(p) * m_dim + m];
        data.log_z_[p] = -0.5 * sum_sq / noise_var - 0.5 * m_dim * std::log(2.0 * M_PI * noise_var);
      }
    }
    data.phi_ = std::vector<T>(phi.begin(), phi.end());
    data.x_ = std::vector<T>(x.begin(), x.end());
    data.latents_ = std::vector<T>(a.begin(), a.end());
    return data;
  }

  int observed_dim() const { return observed_dim_; }
  int latent_dim() const { return latent_dim_; }
  int points() const { return points_; }
  LinearGenerativePrior prior() const { return prior_; }
  double noise_sd() const { return noise_sd_; }
  double phi_scale() const { return phi_scale_; }
  /// Φ, M × L row-major.
  const std::vector<T>& phi() const { return phi_.host(); }
  /// The data, P × M row-major.
  const std::vector<T>& x() const { return x_.host(); }
  /// The latents a_p that generated the data, P × L row-major.
  const std::vector<T>& latents() const { return latents_.host(); }
  /// Gaussian prior: μ_p, P × L row-major (empty for the Laplace prior).
  const std::vector<T>& posterior_mean() const { return posterior_mean_.host(); }
  /// Gaussian prior: Σ_post = (ΦᵀΦ/σ_n² + I)⁻¹, L × L row-major (empty for the Laplace prior).
  const std::vector<T>& posterior_covariance() const { return posterior_covariance_; }
  /// Gaussian prior: the lower Cholesky factor of Σ_post, L × L row-major (else empty).
  const std::vector<T>& posterior_factor() const { return posterior_factor_.host(); }
  /// log p(x_p), or NaN where there is no closed form (Laplace prior, Φ ≠ 0).
  double exact_log_z(int p) const {
    MYRIAD_EXPECTS(p >= 0 && p < points_, "linear_generative: problem must lie in [0, ", points_,
                   "), got ", p);
    return log_z_[p];
  }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  LinearGenerative<T> viewing(Copy copy) const {
    return view(copy(phi_), copy(x_), copy(latents_), copy(posterior_mean_),
                copy(posterior_factor_));
  }

 private:
  LinearGenerativeData() = default;

  LinearGenerative<T> view(const T* phi, const T* x, const T* latents, const T* mean,
                           const T* factor) const {
    const bool gaussian = prior_ == LinearGenerativePrior::gaussian;
    LinearGenerative<T> model;
    model.phi = phi;
    model.x = x;
    model.latents = latents;
    model.posterior_mean = gaussian ? mean : nullptr;
    model.posterior_factor = gaussian ? factor : nullptr;
    model.host_log_z = log_z_.data();
    model.observed_dim = observed_dim_;
    model.latent_dim = latent_dim_;
    model.points = points_;
    model.prior = prior_;
    model.noise_precision = T(1.0 / (noise_sd_ * noise_sd_));
    model.log_normaliser = T(log_normaliser_);
    return model;
  }

  // Gaussian prior: precision A = ΦᵀΦ/σ_n² + I = C Cᵀ, Σ_post = A⁻¹ column by column
  // (C⁻ᵀ C⁻¹ e_j), μ_p = A⁻¹ Φᵀ x_p / σ_n², and the lower Cholesky factor of Σ_post.
  void gaussian_posterior(const std::vector<double>& phi, const std::vector<double>& x) {
    const int m_dim = observed_dim_, l_dim = latent_dim_;
    const double precision = 1.0 / (noise_sd_ * noise_sd_);
    const auto phi_at = [&](int m, int l) { return phi[static_cast<std::size_t>(m) * l_dim + l]; };
    std::vector<double> chol(static_cast<std::size_t>(l_dim) * l_dim, 0.0);
    for (int i = 0; i < l_dim; ++i) {
      for (int j = 0; j <= i; ++j) {
        double sum = 0.0;
        for (int m = 0; m < m_dim; ++m) sum += phi_at(m, i) * phi_at(m, j);
        chol[static_cast<std::size_t>(i) * l_dim + j] = precision * sum + (i == j ? 1.0 : 0.0);
      }
    }
    const MatrixView<double> c = dense_matrix(chol.data(), l_dim, l_dim);
    // A ⪰ I, so the factorisation cannot fail for finite Φ.
    MYRIAD_EXPECTS(linalg::cholesky_in_place(c),
                   "linear_generative: posterior precision is not positive definite");
    std::vector<double> covariance(static_cast<std::size_t>(l_dim) * l_dim);
    // Solves take DenseVector views: linalg is MYRIAD_HD, and nvcc warns when a host/device
    // function touches std::vector.
    std::vector<double> column(static_cast<std::size_t>(l_dim));
    const DenseVector<double> column_view{column.data(), l_dim};
    for (int j = 0; j < l_dim; ++j) {
      for (int i = 0; i < l_dim; ++i) column[i] = i == j ? 1.0 : 0.0;
      linalg::cholesky_solve(c.as_const(), column_view);
      for (int i = 0; i < l_dim; ++i)
        covariance[static_cast<std::size_t>(i) * l_dim + j] = column[i];
    }
    // Symmetrise the rounding before factoring.
    for (int i = 0; i < l_dim; ++i) {
      for (int j = 0; j < i; ++j) {
        const double mean = 0.5 * (covariance[static_cast<std::size_t>(i) * l_dim + j] +
                                   covariance[static_cast<std::size_t>(j) * l_dim + i]);
        covariance[static_cast<std::size_t>(i) * l_dim + j] = mean;
        covariance[static_cast<std::size_t>(j) * l_dim + i] = mean;
      }
    }
    std::vector<double> factor = covariance;
    MYRIAD_EXPECTS(linalg::cholesky_in_place(dense_matrix(factor.data(), l_dim, l_dim)),
                   "linear_generative: posterior covariance is not positive definite");
    for (int i = 0; i < l_dim; ++i) {
      for (int j = i + 1; j < l_dim; ++j) factor[static_cast<std::size_t>(i) * l_dim + j] = 0.0;
    }
    std::vector<double> mean(static_cast<std::size_t>(points_) * l_dim);
    for (int p = 0; p < points_; ++p) {
      for (int l = 0; l < l_dim; ++l) {
        double sum = 0.0;
        for (int m = 0; m < m_dim; ++m)
          sum += phi_at(m, l) * x[static_cast<std::size_t>(p) * m_dim + m];
        column[l] = precision * sum;
      }
      linalg::cholesky_solve(c.as_const(), column_view);
      for (int l = 0; l < l_dim; ++l) mean[static_cast<std::size_t>(p) * l_dim + l] = column[l];
    }
    posterior_covariance_.assign(covariance.begin(), covariance.end());
    posterior_factor_ = std::vector<T>(factor.begin(), factor.end());
    posterior_mean_ = std::vector<T>(mean.begin(), mean.end());
  }

  // Gaussian prior: log p(x_p) = log N(x_p; 0, S), S = ΦΦᵀ + σ_n² I = C Cᵀ (hais.md §9.1):
  //   −½‖C⁻¹x‖² − Σ_i log C_ii − (M/2) log 2π.
  void gaussian_log_z(const std::vector<double>& phi, const std::vector<double>& x) {
    const int m_dim = observed_dim_, l_dim = latent_dim_;
    std::vector<double> chol(static_cast<std::size_t>(m_dim) * m_dim, 0.0);
    for (int i = 0; i < m_dim; ++i) {
      for (int j = 0; j <= i; ++j) {
        double sum = 0.0;
        for (int l = 0; l < l_dim; ++l) {
          sum += phi[static_cast<std::size_t>(i) * l_dim + l] *
                 phi[static_cast<std::size_t>(j) * l_dim + l];
        }
        chol[static_cast<std::size_t>(i) * m_dim + j] =
            sum + (i == j ? noise_sd_ * noise_sd_ : 0.0);
      }
    }
    const MatrixView<double> c = dense_matrix(chol.data(), m_dim, m_dim);
    MYRIAD_EXPECTS(linalg::cholesky_in_place(c),
                   "linear_generative: marginal covariance is not positive definite");
    const double half_log_det = 0.5 * linalg::log_det_from_cholesky(c.as_const());
    std::vector<double> y(static_cast<std::size_t>(m_dim));
    const DenseVector<double> y_view{y.data(), m_dim};
    for (int p = 0; p < points_; ++p) {
      for (int m = 0; m < m_dim; ++m) y[m] = x[static_cast<std::size_t>(p) * m_dim + m];
      linalg::solve_lower(c.as_const(), y_view);
      double sum_sq = 0.0;
      for (double v : y) sum_sq += v * v;
      log_z_[p] = -0.5 * sum_sq - half_log_det - 0.5 * m_dim * std::log(2.0 * M_PI);
    }
  }

  int observed_dim_ = 0;
  int latent_dim_ = 0;
  int points_ = 0;
  LinearGenerativePrior prior_ = LinearGenerativePrior::gaussian;
  double noise_sd_ = 0.1;
  double phi_scale_ = 1.0;
  double log_normaliser_ = 0.0;
  MirroredArray<T> phi_, x_, latents_;
  MirroredArray<T> posterior_mean_, posterior_factor_;  ///< Gaussian prior only, else empty
  std::vector<T> posterior_covariance_;
  std::vector<double> log_z_;
};

}  // namespace myriad::models
