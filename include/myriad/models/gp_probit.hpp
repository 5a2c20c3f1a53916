#pragma once
// `gp_probit`: Gaussian-process probit classification (thesis §3.6.2; thesis-methods.md §6 and
// §9.2), the pseudo-marginal samplers' heavy workload. Latent values z ~ N(0, C(x)) at the M
// inputs d^(m) ∈ R^K, labels y_m ~ Bernoulli(Φ(z_m)), with the squared-exponential ARD
// covariance (SQEXPCOV)
//
//   C_ii = s + jitter,   C_ij = s · exp(−½ Σ_k ((d_k^(i) − d_k^(j)) / ℓ_k)²),
//
// over the parameters x = [log s; log ℓ_1 … log ℓ_K] with the prior (3.18)
//
//   p(x) ∝ exp(1.1 x_1 − e^{x_1}/10) · Π_{i≥2} exp(x_i − e^{x_i}/3)
//
// (s ~ Gamma(1.1, rate 0.1), ℓ_k ~ Gamma(1, rate 1/3), log-Jacobians included). The marginal
// likelihood p(y | x) = ∫ Π_m Φ(ỹ_m z_m) N(z; 0, C) dz, ỹ = 2y − 1, has no closed form; the model
// is an estimator model (model/estimator.hpp) with an x-dependent cache: importance sampling with
// N draws from the Laplace approximation N(μ, Σ) of the posterior of z,
//
//   log ε(x, u) = log p(x) + LSE_n[Σ_m log Φ(ỹ_m z^(n)_m) + log N(z^(n); 0, C) −
//                 log N(z^(n); μ, Σ)] − log N,   z^(n) = μ + L_Σ u^(n),  u^(n) ~ N(0, I_M),
//
// unbiased for p(x) p(y | x) whatever μ and Σ are, as long as they are deterministic in x.
//
// prepare_estimate (the cache, per x; "cubic operations" of the thesis): builds C, factors it,
// runs the Laplace Newton iteration of Rasmussen & Williams Alg. 3.1 from f = 0 (one Cholesky of
// B = I + W^½ C W^½ per step; until mean((f_new − f)²) < 1e-4 or max_newton steps: the iteration
// count changes μ and Σ, not the estimator's unbiasedness), then Σ = C − Vᵀ V with V = L_B⁻¹ W^½ C
// (= (C⁻¹ + W)⁻¹, W and L_B from the last step, as the thesis's code does) and factors Σ. An
// estimate then costs O(M² N): z = μ + L_Σ u and L_C⁻¹ z per draw, and since z − μ = L_Σ u,
// log N(z; μ, Σ) needs only ‖u‖². A factor that is not positive definite (an extreme x) makes the
// cache's estimates NaN: the samplers reject them and count the chain's non-finite steps.
//
// Storage, all column-major M × M (linalg/batched_cholesky.hpp's layout, so a batch of chains'
// caches is a batch of matrices): the cache holds L_C, L_Σ, μ, the log constant
// log p(x) − log|L_C| + log|L_Σ| (the 2π terms cancel) and the Newton steps taken; the workspace
// holds C, L_B and six M-vectors. With M = 683 that is 7.5 MB per cache, two per chain (the state's
// and a trial point's), and 7.5 MB of workspace.
//
// The data: GpProbitData below standardises the features (mean 0, sd 1 over the rows used);
// built-ins read the Wisconsin breast cancer data (models/breast_cancer_wisconsin.hpp).

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
#include "myriad/core/random.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"
#include "myriad/model/estimator.hpp"

namespace myriad::models {

template <class T>
struct GpProbit {
  using value_type = T;
  static constexpr AuxiliaryLaw auxiliary_law = AuxiliaryLaw::normal;

  const T* features = nullptr;   ///< d_k^(m) at [m · K + k], standardised
  const T* labels = nullptr;     ///< ỹ_m ∈ {−1, +1}
  int rows = 0;                  ///< M
  int num_features = 0;          ///< K
  int samples = 50;              ///< N, importance draws per estimate
  int max_newton = 100;          ///< cap on the Laplace fit's Newton steps
  T newton_tolerance = T(1e-4);  ///< stop when mean((f_new − f)²) falls below it
  T jitter = T(1e-8);            ///< added to C's diagonal

  MYRIAD_HD int dim() const { return 1 + num_features; }
  MYRIAD_HD int auxiliary_dim() const { return rows * samples; }

  // --- Storage (file comment).
  MYRIAD_HD std::int64_t matrix_size() const { return static_cast<std::int64_t>(rows) * rows; }
  MYRIAD_HD std::int64_t estimator_cache_size() const { return 2 * matrix_size() + rows + 2; }
  MYRIAD_HD std::int64_t estimator_workspace_size() const { return 2 * matrix_size() + 6 * rows; }

  /// log p(x), the prior (3.18) on x = [log s; log ℓ].
  template <class X>
  MYRIAD_HD T log_prior(const X& x) const {
    T sum = T(1.1) * x[0] - myriad::exp(x[0]) / T(10);
    for (int k = 1; k <= num_features; ++k) sum += x[k] - myriad::exp(x[k]) / T(3);
    return sum;
  }

  /// Fills `cache` for x (file comment); `workspace` is scratch.
  template <class X>
  MYRIAD_HD void prepare_estimate(const X& x, T* cache, T* workspace) const {
    const int m = rows;
    const std::int64_t mm = matrix_size();
    const MatrixView<T> c = square(workspace), l_b = square(workspace + mm);
    const MatrixView<T> l_c = square(cache), l_sigma = square(cache + mm);
    T* mu = cache + 2 * mm;
    T& log_constant = cache[2 * mm + m];
    T& steps_taken = cache[2 * mm + m + 1];
    T* f = workspace + 2 * mm;
    T *sqrt_w = f + m, *b = f + 2 * m, *a = f + 3 * m, *t = f + 4 * m, *gradient = f + 5 * m;

    covariance(x, c);
    for (int j = 0; j < m; ++j)
      for (int i = j; i < m; ++i) l_c(i, j) = c(i, j);
    log_constant = T(NAN);
    if (linalg::cholesky_in_place_info(l_c) != 0) return;

    // Newton's method for the mode of p(f | y, x) (Rasmussen & Williams Alg. 3.1).
    for (int i = 0; i < m; ++i) f[i] = T(0);
    steps_taken = T(0);
    for (int step = 0; step < max_newton; ++step) {
      steps_taken = T(step + 1);
      for (int i = 0; i < m; ++i) {
        // v = N(f)/Φ(ỹ f) by logs: stable in Φ's lower tail.
        const T v =
            myriad::exp(normal_log_density(f[i], T(0), T(1)) - log_normal_cdf(labels[i] * f[i]));
        gradient[i] = labels[i] * v;               // ∇ log p(y | f)
        const T w = v * v + labels[i] * f[i] * v;  // −∇² log p(y | f) > 0
        sqrt_w[i] = myriad::sqrt(w);
        b[i] = w * f[i] + gradient[i];
      }
      for (int j = 0; j < m; ++j)  // B = I + W^½ C W^½, lower triangle
        for (int i = j; i < m; ++i)
          l_b(i, j) = (i == j ? T(1) : T(0)) + sqrt_w[i] * c(i, j) * sqrt_w[j];
      if (linalg::cholesky_in_place_info(l_b) != 0) return;
      multiply_symmetric(c, b, t);  // a = b − W^½ L⁻ᵀ L⁻¹ (W^½ C b)
      for (int i = 0; i < m; ++i) t[i] *= sqrt_w[i];
      linalg::solve_lower_by_columns(l_b, t);
      linalg::solve_lower_transpose(l_b, t);
      for (int i = 0; i < m; ++i) a[i] = b[i] - sqrt_w[i] * t[i];
      multiply_symmetric(c, a, t);  // f_new = C a
      T change = T(0);
      for (int i = 0; i < m; ++i) {
        change += (t[i] - f[i]) * (t[i] - f[i]);
        f[i] = t[i];
      }
      if (!myriad::isfinite(change)) return;
      if (change < newton_tolerance * T(m)) break;
    }

    // Σ = C − Vᵀ V, V = L_B⁻¹ W^½ C (built in the cache's L_Σ block, then replaced by L_Σ).
    const MatrixView<T> v = l_sigma;
    for (int j = 0; j < m; ++j) {
      for (int i = 0; i < m; ++i) v(i, j) = sqrt_w[i] * c(i, j);
      linalg::solve_lower_by_columns(l_b, v.column(j));
    }
    for (int j = 0; j < m; ++j) {
      for (int i = j; i < m; ++i) {
        T dot = T(0);
        for (int k = 0; k < m; ++k) dot += v(k, i) * v(k, j);
        c(i, j) -= dot;  // Σ's lower triangle over C's
      }
    }
    if (linalg::cholesky_in_place_info(c) != 0) return;
    for (int j = 0; j < m; ++j)
      for (int i = j; i < m; ++i) l_sigma(i, j) = c(i, j);
    T log_det = T(0);
    for (int i = 0; i < m; ++i) {
      mu[i] = f[i];
      log_det += myriad::log(l_sigma(i, i)) - myriad::log(l_c(i, i));
    }
    log_constant = log_prior(x) + log_det;
  }

  /// The Newton steps the Laplace fit of a cache took (benchmarks: each is one Cholesky).
  MYRIAD_HD int newton_steps(const T* cache) const {
    return static_cast<int>(cache[2 * matrix_size() + rows + 1]);
  }

  /// log ε(x, u) from x's cache (file comment); `workspace` is scratch (two M-vectors).
  template <class U>
  MYRIAD_HD T log_estimate_cached(const T* cache, const U& u, T* workspace) const {
    const int m = rows;
    const std::int64_t mm = matrix_size();
    const MatrixView<const T> l_c = square(cache), l_sigma = square(cache + mm);
    const T* mu = cache + 2 * mm;
    const T log_constant = cache[2 * mm + m];
    if (!myriad::isfinite(log_constant)) return T(NAN);
    T* z = workspace + 2 * mm;
    T max_term = T(-INFINITY), sum = T(0);
    for (int n = 0; n < samples; ++n) {
      // z = μ + L_Σ u⁽ⁿ⁾, down the columns of L_Σ; u read once, in order.
      for (int i = 0; i < m; ++i) z[i] = mu[i];
      T u_norm = T(0);
      for (int k = 0; k < m; ++k) {
        const T u_k = u[n * m + k];
        u_norm += u_k * u_k;
        for (int i = k; i < m; ++i) z[i] += l_sigma(i, k) * u_k;
      }
      T log_likelihood = T(0);
      for (int i = 0; i < m; ++i) log_likelihood += log_normal_cdf(labels[i] * z[i]);
      linalg::solve_lower_by_columns(l_c, z);  // z ← L_C⁻¹ z
      T z_norm = T(0);
      for (int i = 0; i < m; ++i) z_norm += z[i] * z[i];
      // log N(z; 0, C) − log N(z; μ, Σ) = −½‖L_C⁻¹z‖² + ½‖u‖² − log|L_C| + log|L_Σ|
      const T term = log_likelihood + T(0.5) * (u_norm - z_norm);
      if (term > max_term) {
        sum = sum * myriad::exp(max_term - term) + T(1);
        max_term = term;
      } else {
        sum += myriad::exp(term - max_term);
      }
    }
    if (!myriad::isfinite(max_term)) return T(NAN);
    return log_constant + max_term + myriad::log(sum / T(samples));
  }

  /// Chains start from the prior, as the thesis's do: s ~ Gamma(1.1, rate 0.1) by Marsaglia and
  /// Tsang's method (ACM TOMS 26(3), 2000), ℓ_k ~ Exponential(mean 3).
  template <class Vec>
  MYRIAD_HD bool initial_point(const RandomStream& rng, std::uint32_t attempt, Vec& x) const {
    for (int k = 1; k <= num_features; ++k)
      x[k] = myriad::log(T(3) * rng.exponential<T>(attempt, Purpose::initial_point,
                                                   static_cast<std::uint32_t>(k)));
    const T d = T(1.1) - T(1) / T(3), c = T(1) / myriad::sqrt(T(9) * d);
    for (std::uint32_t k = 0; k < 32; ++k) {
      const T z = rng.normal<T>(attempt, Purpose::initial_point, 64 + k);
      const T v = (T(1) + c * z) * (T(1) + c * z) * (T(1) + c * z);
      if (v <= T(0)) continue;
      const T log_u = myriad::log(rng.uniform<T>(attempt, Purpose::initial_point, 128 + k));
      if (log_u < T(0.5) * z * z + d - d * v + d * myriad::log(v)) {
        x[0] = myriad::log(d * v / T(0.1));
        return true;
      }
    }
    return false;
  }

  MYRIAD_HD int num_quantities() const { return dim(); }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& x, Out& out) const {
    for (int i = 0; i < dim(); ++i) out[i] = x[i];
  }
  std::string quantity_name(int i) const {
    return i == 0 ? std::string("log_s") : "log_ell[" + std::to_string(i) + "]";
  }

  /// The covariance C(x) (both triangles) into c.
  template <class X>
  MYRIAD_HD void covariance(const X& x, const MatrixView<T>& c) const {
    const T s = myriad::exp(x[0]);
    for (int j = 0; j < rows; ++j) {
      c(j, j) = s + jitter;
      for (int i = j + 1; i < rows; ++i) {
        T r2 = T(0);
        for (int k = 0; k < num_features; ++k) {
          const T r = (features[i * num_features + k] - features[j * num_features + k]) *
                      myriad::exp(-x[1 + k]);
          r2 += r * r;
        }
        c(i, j) = c(j, i) = s * myriad::exp(T(-0.5) * r2);
      }
    }
  }

 private:
  template <class P>
  MYRIAD_HD MatrixView<P> square(P* p) const {
    return {p, rows, rows, 1, rows};
  }
  /// y = C b for the symmetric C (both triangles stored), down its columns.
  MYRIAD_HD void multiply_symmetric(const MatrixView<T>& c, const T* b, T* y) const {
    for (int i = 0; i < rows; ++i) y[i] = T(0);
    for (int j = 0; j < rows; ++j)
      for (int i = 0; i < rows; ++i) y[i] += c(i, j) * b[j];
  }
};

/// Owning host data of a GP probit problem (features standardised per column over the rows
/// given, labels as ỹ = ±1), with an optional device copy uploaded once. Movable, not copyable.
template <class T>
class GpProbitData {
 public:
  /// rows × K features (row-major) and rows labels in {0, 1}. Throws myriad::invalid_argument
  /// for an empty set, a non-finite feature, a label other than 0 or 1, or a constant feature
  /// (it cannot be standardised).
  static GpProbitData from_arrays(int rows, int num_features, const std::vector<double>& features,
                                  const std::vector<int>& labels) {
    MYRIAD_EXPECTS(rows >= 2, "gp_probit: need at least 2 data rows, got ", rows);
    MYRIAD_EXPECTS(num_features >= 1, "gp_probit: need at least one feature, got ", num_features);
    MYRIAD_EXPECTS(features.size() == static_cast<std::size_t>(rows) * num_features,
                   "gp_probit: ", features.size(), " feature values for ", rows, " rows of ",
                   num_features);
    MYRIAD_EXPECTS(labels.size() == static_cast<std::size_t>(rows), "gp_probit: ", labels.size(),
                   " labels for ", rows, " rows");
    std::vector<T> standardised(features.size()), signs(labels.size());
    for (int k = 0; k < num_features; ++k) {
      double mean = 0, square = 0;
      for (int m = 0; m < rows; ++m) {
        const double v = features[static_cast<std::size_t>(m) * num_features + k];
        MYRIAD_EXPECTS(std::isfinite(v), "gp_probit: feature ", k + 1, " of row ", m + 1,
                       " is not finite");
        mean += v;
      }
      mean /= rows;
      for (int m = 0; m < rows; ++m) {
        const double r = features[static_cast<std::size_t>(m) * num_features + k] - mean;
        square += r * r;
      }
      const double sd = std::sqrt(square / (rows - 1));  // sample sd
      MYRIAD_EXPECTS(sd > 0, "gp_probit: feature ", k + 1, " is constant over the rows used");
      for (int m = 0; m < rows; ++m) {
        const std::size_t i = static_cast<std::size_t>(m) * num_features + k;
        standardised[i] = T((features[i] - mean) / sd);
      }
    }
    for (int m = 0; m < rows; ++m) {
      MYRIAD_EXPECTS(labels[m] == 0 || labels[m] == 1, "gp_probit: label of row ", m + 1,
                     " must be 0 or 1, got ", labels[m]);
      signs[m] = labels[m] == 1 ? T(1) : T(-1);
    }
    GpProbitData data;
    data.rows_ = rows;
    data.num_features_ = num_features;
    data.features_ = MirroredArray<T>(std::move(standardised));
    data.labels_ = MirroredArray<T>(std::move(signs));
    return data;
  }

  int rows() const { return rows_; }
  int num_features() const { return num_features_; }

  /// A model viewing the host copy with N = samples; valid while this object lives.
  GpProbit<T> host_model(int samples) const {
    return model(features_.host_data(), labels_.host_data(), samples);
  }

  /// A model viewing the device copy, uploaded on the first call. Throws
  /// myriad::unavailable_error in a build without CUDA.
  GpProbit<T> device_model(int samples) {
    return model(features_.device_data(), labels_.device_data(), samples);
  }

 private:
  GpProbitData() = default;
  GpProbit<T> model(const T* features, const T* labels, int samples) const {
    MYRIAD_EXPECTS(samples >= 1, "gp_probit: samples (N) must be positive, got ", samples);
    GpProbit<T> m;
    m.features = features;
    m.labels = labels;
    m.rows = rows_;
    m.num_features = num_features_;
    m.samples = samples;
    return m;
  }

  int rows_ = 0, num_features_ = 0;
  MirroredArray<T> features_, labels_;
};

}  // namespace myriad::models
