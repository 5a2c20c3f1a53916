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
// The cache, per x ("cubic operations" of the thesis), in stages between dense factorisations
// and one product (model/staged_preparation.hpp: a GPU batches those across chains):
//   1. C and its Cholesky L_C;
//   2. the Laplace fit, Newton's method of Rasmussen & Williams Alg. 3.1 from f = 0: W(f) and
//      B = I + W^½ C W^½ with its Cholesky L_B, then f ← C a, a = b − W^½ L_B⁻ᵀ L_B⁻¹ W^½ C b,
//      b = W f + ∇ log p(y | f), until mean((f_new − f)²) < 1e-4 or max_newton updates (the
//      count changes μ and Σ, not the estimator's unbiasedness); B is factored once more at the
//      final f = μ, so that W = W(μ) below (s updates take s + 1 factorisations);
//   3. Σ = (C⁻¹ + W)⁻¹ through A = I + L_Cᵀ W L_C = L_A L_Aᵀ: Σ⁻¹ = L_C⁻ᵀ A L_C⁻¹, so
//      S = L_C L_A⁻ᵀ is a square root of Σ (the product is the gram of W^½ L_C, then L_A).
// A draw is then z = μ + S u, and with w = L_C⁻¹ z = L_C⁻¹ μ + L_A⁻ᵀ u,
//   log N(z; 0, C) − log N(z; μ, Σ) = −½‖w‖² + ½‖u‖² − log|L_A|,
// two triangular operations per draw, O(M² N) per estimate. A factorisation that fails (C not
// numerically positive definite at an extreme x) makes the cache's estimates NaN: the samplers
// reject them and count the chain's non-finite steps.
//
// Storage, column-major M × M blocks (so a batch of chains' caches is a batch of matrices):
// the cache holds L_C, L_A, μ, L_C⁻¹ μ, the log constant log p(x) − log|L_A| and the Newton
// updates made; the workspace holds C, L_B (then W^½ L_C), five M-vectors and the stage. With
// M = 683 that is 7.5 MB per cache, two per chain (the state's and a trial point's), and
// 7.5 MB of workspace.
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
#include "myriad/model/library_instances.hpp"
#include "myriad/model/staged_preparation.hpp"

namespace myriad::models {

template <class T>
struct GpProbit {
  using value_type = T;
  static constexpr AuxiliaryLaw auxiliary_law = AuxiliaryLaw::normal;

  static constexpr int kMaxFeatures = 32;
  /// The library's CUDA backend of the auxiliary-variable samplers, in double precision
  /// (model/library_instances.hpp); it batches the preparation's dense steps across chains.
  static constexpr unsigned library_backends =
      std::is_same_v<T, double> ? library_backend::auxiliary : 0u;

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

  // --- Storage (file comment): offsets in the cache and the workspace.
  MYRIAD_HD std::int64_t matrix_size() const { return static_cast<std::int64_t>(rows) * rows; }
  MYRIAD_HD std::int64_t estimator_cache_size() const { return 2 * matrix_size() + 2 * rows + 2; }
  MYRIAD_HD std::int64_t estimator_workspace_size() const {
    return 2 * matrix_size() + 5 * rows + 3;
  }
  MYRIAD_HD int preparation_matrix_size() const { return rows; }

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
    prepare_in_chain(*this, x, cache, workspace);
  }

  /// Stage 1: C, its lower triangle copied to L_C, the log prior kept; then factor L_C.
  template <class X>
  MYRIAD_HD PreparationStep begin_preparation(const X& x, T* cache, T* workspace) const {
    const Layout at(*this, cache, workspace);
    covariance(x, at.c);
    for (int j = 0; j < rows; ++j)
      for (int i = j; i < rows; ++i) at.l_c(i, j) = at.c(i, j);
    *at.log_constant = log_prior(x);
    *at.newton_steps = T(0);
    *at.stage = T(kFactoredCovariance);
    return PreparationStep::factor(lc_matrix());
  }

  /// The stages after each dense step (file comment).
  MYRIAD_HD PreparationStep continue_preparation(T* cache, T* workspace, int info) const {
    const Layout at(*this, cache, workspace);
    const int m = rows;
    if (info != 0) return fail(at);
    switch (static_cast<int>(*at.stage)) {
      case kFactoredCovariance:
        for (int i = 0; i < m; ++i) at.f[i] = T(0);
        *at.converged = T(0);
        form_newton_system(at);
        *at.stage = T(kFactoredNewtonSystem);
        return PreparationStep::factor(lb_matrix());
      case kFactoredNewtonSystem: {
        if (*at.converged != T(0)) {
          // L_B is at the final f: W^½ L_C (lower triangular, zero above) for A's product.
          for (int j = 0; j < m; ++j) {
            for (int i = 0; i < j; ++i) at.l_b(i, j) = T(0);
            for (int i = j; i < m; ++i) at.l_b(i, j) = at.sqrt_w[i] * at.l_c(i, j);
          }
          *at.stage = T(kFormedProduct);
          return PreparationStep::gram(lb_matrix(), la_matrix());
        }
        // a = b − W^½ L⁻ᵀ L⁻¹ (W^½ C b), f_new = C a.
        multiply_symmetric(at.c, at.b, at.t);
        for (int i = 0; i < m; ++i) at.t[i] *= at.sqrt_w[i];
        linalg::solve_lower_by_columns(at.l_b, at.t);
        linalg::solve_lower_transpose_by_columns(at.l_b, at.t);
        for (int i = 0; i < m; ++i) at.a[i] = at.b[i] - at.sqrt_w[i] * at.t[i];
        multiply_symmetric(at.c, at.a, at.t);
        T change = T(0);
        for (int i = 0; i < m; ++i) {
          change += (at.t[i] - at.f[i]) * (at.t[i] - at.f[i]);
          at.f[i] = at.t[i];
        }
        if (!myriad::isfinite(change)) return fail(at);
        *at.newton_steps += T(1);
        if (change < newton_tolerance * T(m) || *at.newton_steps >= T(max_newton))
          *at.converged = T(1);
        form_newton_system(at);
        return PreparationStep::factor(lb_matrix());
      }
      case kFormedProduct:
        for (int i = 0; i < m; ++i) at.l_a(i, i) += T(1);  // A = I + L_Cᵀ W L_C
        *at.stage = T(kFactoredPrecision);
        return PreparationStep::factor(la_matrix());
      default: {  // kFactoredPrecision: μ, L_C⁻¹ μ and the constant
        T log_det = T(0);
        for (int i = 0; i < m; ++i) {
          at.mu[i] = at.f[i];
          at.whitened_mu[i] = at.f[i];
          log_det += myriad::log(at.l_a(i, i));
        }
        linalg::solve_lower_by_columns(at.l_c, at.whitened_mu);
        *at.log_constant -= log_det;
        return PreparationStep::finished();
      }
    }
  }

  /// The Newton updates the Laplace fit of a cache made (benchmarks: each is one Cholesky, plus
  /// one at the mode).
  MYRIAD_HD int newton_steps(const T* cache) const {
    return static_cast<int>(*CacheBlocks<const T>(*this, cache).newton_steps);
  }

  /// log ε(x, u) from x's cache (file comment); `workspace` is scratch (two M-vectors).
  template <class U>
  MYRIAD_HD T log_estimate_cached(const T* cache, const U& u, T* workspace) const {
    const int m = rows;
    const CacheBlocks<const T> at(*this, cache);
    const MatrixView<const T> l_c = at.l_c, l_a = at.l_a;
    const T* whitened_mu = at.whitened_mu;
    const T log_constant = *at.log_constant;
    if (!myriad::isfinite(log_constant)) return T(NAN);
    const WorkspaceBlocks scratch(*this, workspace);
    T* w = scratch.t;
    T* z = scratch.a;
    T max_term = T(-INFINITY), sum = T(0);
    for (int n = 0; n < samples; ++n) {
      // w = L_A⁻ᵀ u⁽ⁿ⁾ + L_C⁻¹ μ.
      T u_norm = T(0);
      for (int i = 0; i < m; ++i) {
        w[i] = u[n * m + i];
        u_norm += w[i] * w[i];
      }
      linalg::solve_lower_transpose_by_columns(l_a, w);
      T w_norm = T(0);
      for (int i = 0; i < m; ++i) {
        w[i] += whitened_mu[i];
        w_norm += w[i] * w[i];
        z[i] = T(0);
      }
      for (int k = 0; k < m; ++k)  // z = L_C w, down the columns of L_C
        for (int i = k; i < m; ++i) z[i] += l_c(i, k) * w[k];
      T log_likelihood = T(0);
      for (int i = 0; i < m; ++i) log_likelihood += log_normal_cdf(labels[i] * z[i]);
      const T term = log_likelihood + T(0.5) * (u_norm - w_norm);
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
    T inverse_length[kMaxFeatures];  // 1/ℓ_k once, not once per pair
    for (int k = 0; k < num_features; ++k) inverse_length[k] = myriad::exp(-x[1 + k]);
    for (int j = 0; j < rows; ++j) {
      c(j, j) = s + jitter;
      for (int i = j + 1; i < rows; ++i) {
        T r2 = T(0);
        for (int k = 0; k < num_features; ++k) {
          const T r =
              (features[i * num_features + k] - features[j * num_features + k]) * inverse_length[k];
          r2 += r * r;
        }
        c(i, j) = c(j, i) = s * myriad::exp(T(-0.5) * r2);
      }
    }
  }

 private:
  enum Stage { kFactoredCovariance = 1, kFactoredNewtonSystem, kFormedProduct, kFactoredPrecision };

  /// The named blocks of one chain's cache (C = T, or const T to read one) and workspace (file
  /// comment): the one place their offsets are written.
  template <class C>
  struct CacheBlocks {
    MatrixView<C> l_c, l_a;
    C *mu, *whitened_mu, *log_constant, *newton_steps;
    MYRIAD_HD CacheBlocks(const GpProbit& model, C* cache) {
      const std::int64_t mm = model.matrix_size();
      l_c = model.square(cache);
      l_a = model.square(cache + mm);
      mu = cache + 2 * mm;
      whitened_mu = mu + model.rows;
      log_constant = whitened_mu + model.rows;
      newton_steps = log_constant + 1;
    }
  };
  struct WorkspaceBlocks {
    MatrixView<T> c, l_b;
    T *f, *sqrt_w, *b, *t, *a, *stage, *converged;
    MYRIAD_HD WorkspaceBlocks(const GpProbit& model, T* workspace) {
      const int m = model.rows;
      c = model.square(workspace);
      l_b = model.square(workspace + model.matrix_size());
      f = workspace + 2 * model.matrix_size();
      sqrt_w = f + m;
      b = sqrt_w + m;
      t = b + m;
      a = t + m;
      stage = a + m;
      converged = stage + 1;
    }
  };
  struct Layout : CacheBlocks<T>, WorkspaceBlocks {
    MYRIAD_HD Layout(const GpProbit& model, T* cache, T* workspace)
        : CacheBlocks<T>(model, cache), WorkspaceBlocks(model, workspace) {}
  };
  MYRIAD_HD static PreparationMatrix lc_matrix() { return {false, 0}; }
  MYRIAD_HD PreparationMatrix la_matrix() const { return {false, matrix_size()}; }
  MYRIAD_HD PreparationMatrix lb_matrix() const { return {true, matrix_size()}; }

  MYRIAD_HD PreparationStep fail(const Layout& at) const {
    *at.log_constant = T(NAN);
    return PreparationStep::finished();
  }

  /// W(f), W^½, b = W f + ∇ log p(y | f) and the lower triangle of B = I + W^½ C W^½.
  MYRIAD_HD void form_newton_system(const Layout& at) const {
    for (int i = 0; i < rows; ++i) {
      // v = N(f)/Φ(ỹ f) by logs: stable in Φ's lower tail.
      const T f = at.f[i];
      const T v = myriad::exp(normal_log_density(f, T(0), T(1)) - log_normal_cdf(labels[i] * f));
      const T w = v * v + labels[i] * f * v;  // −∇² log p(y | f) > 0
      at.sqrt_w[i] = myriad::sqrt(w);
      at.b[i] = w * f + labels[i] * v;
    }
    for (int j = 0; j < rows; ++j)
      for (int i = j; i < rows; ++i)
        at.l_b(i, j) = (i == j ? T(1) : T(0)) + at.sqrt_w[i] * at.c(i, j) * at.sqrt_w[j];
  }

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
    MYRIAD_EXPECTS(num_features >= 1 && num_features <= GpProbit<T>::kMaxFeatures,
                   "gp_probit: the features must number 1 … ", GpProbit<T>::kMaxFeatures, ", got ",
                   num_features);
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
