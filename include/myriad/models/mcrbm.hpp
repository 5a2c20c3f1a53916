#pragma once
// `mcrbm`: the mean-covariance restricted Boltzmann machine of the HAIS paper's analysis models
// (Ranzato & Hinton 2010; hais.md §9.4), an annealing target (estimate/annealing_target.hpp)
// over x ∈ R^M. Its marginal energy, with the hidden units summed out, as in the mcRBM
// authors' code (hais.md §9.4, with b^v ∈ R^M per the erratum there):
//
//   E(x) = −Σ_k log(1 + e^{t_k(x)}) − Σ_j log(1 + e^{W_j x + b^m_j}) + ‖x‖²/(2σ²) − xᵀb^v,
//   t_k(x) = ½ Σ_l P_lk (C_l x)² / s + b^c_k,   s = ‖x‖² + ½,
//   log density = −E (unnormalised: AIS estimates its log Z; there is no closed form),
//   ∇ log density = Σ_k σ(t_k) ∇t_k + Wᵀσ(Wx + b^m) − x/σ² + b^v,
//   ∇t_k = Σ_l P_lk [(C_l x) C_lᵀ/s − (C_l x)² x/s²],   σ(t) = 1/(1 + e^{−t}),
// with C ∈ R^{L×M} (factors), P ∈ R^{L×K} (pooling of factors into covariance units),
// W ∈ R^{J×M} (mean units), b^c ∈ R^K, b^m ∈ R^J, b^v ∈ R^M.
//
// Properness: for rows of C of norm c_l, (C_l x)²/s < c_l², so every t_k is bounded and the
// covariance term changes the density by a bounded factor; each mean-unit softplus grows at
// most linearly in ‖x‖. The Gaussian term ‖x‖²/(2σ²) therefore dominates in the tails and
// Z < ∞ for any finite parameters and σ > 0.
//
// Parameters from one seed (in double on the host with Philox, core/random.hpp, then cast):
//   σ = 1: the paper's data are whitened, unit variance per component;
//   C_l = n_l/‖n_l‖, n_l ~ N(0, I_M) (normal_matrix, tag user + 0): unit-norm filters, as the
//     mcRBM code normalises C, so (C_l x)²/s ∈ [0, 1) measures only the direction of x;
//   P_lk = −(2M/L)|n_lk|, n_lk ~ N(0, 1) (tag user + 1): non-positive, as in the mcRBM code
//     (covariance units are switched off by large filter outputs). For a uniformly random unit
//     direction x̂, E(C_l x̂)² = 1/M, so ½ Σ_l P_lk (C_l x̂)² has mean −E|n| ≈ −0.8; it moves
//     with the direction (about −1.9 to −0.3 over 2000 random directions for the defaults),
//     and the covariance term Σ_k log(1 + e^{t_k}) at ‖x‖ = √M varies by about 8 nats between
//     the 5 % and 95 % quantiles of directions: the density is far from Gaussian in shape;
//   W_jm ~ N(0, 0.5²/M) (tag user + 2): W_j x ≈ N(0, 0.25) for x of unit-variance components,
//     so the mean units bend the density without swamping the Gaussian term (¼‖W‖₂² is about
//     0.25 for M = 36, J = 32, so the Gaussian and mean terms stay log-concave together);
//   b^c_k ~ N(0, 0.5²), b^m_j ~ N(0, 0.1²), b^v_m ~ N(0, 0.1²) (normals k, j, m of
//     RandomStream(seed, 0), tags user + 3, 4, 5): small, so no unit starts saturated.
// Defaults: M = 36 (the paper's whitened components), L = 64 factors, K = 64 covariance units,
// J = 32 mean units (the paper's mcRBM has 432 hidden units in all; its parameters were
// learned, which these stand in for).
//
// Evaluation: every t_k needs all the filter outputs C_l x, and the gradient needs every σ(t_k)
// again for each factor, so one of the two length-L or length-K vectors must be held. Device
// code has no scratch memory per chain, so t is held in a fixed-size local array for
// kCovarianceTile units at a time, and the C_l x are recomputed once per tile: cost
// ⌈K/64⌉·2LM + 2LK + JM multiply-adds for the gradient, one tile for the defaults.
//
// Mcrbm<T> is the trivially copyable view that chains evaluate; McrbmData<T> owns the
// parameters on the host and, on demand, on the device.

#include <cmath>
#include <cstdint>
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
#include "myriad/models/random_matrices.hpp"

namespace myriad::models {

template <class T>
struct Mcrbm {
  using value_type = T;
  /// Covariance units whose inputs t_k are held at once (a local array in device code).
  static constexpr int kCovarianceTile = 64;

  const T* filters = nullptr;          ///< C, factors × dimension, row-major
  const T* pooling = nullptr;          ///< P, factors × covariance_units, row-major
  const T* mean_weights = nullptr;     ///< W, mean_units × dimension, row-major
  const T* covariance_bias = nullptr;  ///< b^c, covariance_units
  const T* mean_bias = nullptr;        ///< b^m, mean_units
  const T* visible_bias = nullptr;     ///< b^v, dimension
  int dimension = 0;                   ///< M
  int factors = 0;                     ///< L
  int covariance_units = 0;            ///< K
  int mean_units = 0;                  ///< J
  T sigma = T(1);                      ///< σ of the Gaussian term

  MYRIAD_HD int dim() const { return dimension; }

  /// −E(x) as in the header comment, generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum_sq = S(0), linear = S(0);
    for (int m = 0; m < dimension; ++m) {
      sum_sq += x[m] * x[m];
      linear += S(visible_bias[m]) * x[m];
    }
    S lp = linear - sum_sq / S(T(2) * sigma * sigma);
    for (int j = 0; j < mean_units; ++j) {
      const T* row = mean_weights + static_cast<std::int64_t>(j) * dimension;
      S a = S(mean_bias[j]);
      for (int m = 0; m < dimension; ++m) a += S(row[m]) * x[m];
      lp += log1p_exp(a);
    }
    const S half_inverse_s = S(0.5) / (sum_sq + S(0.5));
    S t[kCovarianceTile];
    for (int k0 = 0; k0 < covariance_units; k0 += kCovarianceTile) {
      const int tile = start_covariance_tile(k0, t);
      for (int l = 0; l < factors; ++l) {
        const S q = half_inverse_s * square(filter_output(l, x));
        const T* pool = pooling + static_cast<std::int64_t>(l) * covariance_units + k0;
        for (int kk = 0; kk < tile; ++kk) t[kk] += S(pool[kk]) * q;
      }
      for (int kk = 0; kk < tile; ++kk) lp += log1p_exp(t[kk]);
    }
    return lp;
  }

  /// −E(x) and its gradient (hais.md §9.4), evaluated as in the header comment: per tile of
  /// covariance units, t from one pass over the factors, then r_l = Σ_k σ(t_k) P_lk and
  ///   Σ_k σ(t_k) ∇t_k = (1/s) Σ_l r_l f_l C_lᵀ − (Σ_l r_l f_l²/s²) x,   f_l = C_l x,
  /// from a second pass.
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& x, Grad& grad) const {
    using S = element_t<Vec>;  // a scalar, or a SIMD batch of particles (core/lanes.hpp)
    const T precision = T(1) / (sigma * sigma);
    S sum_sq = S(0), linear = S(0);
    for (int m = 0; m < dimension; ++m) {
      const S xm = x[m];
      sum_sq += xm * xm;
      linear += visible_bias[m] * xm;
      grad[m] = visible_bias[m] - precision * xm;
    }
    S lp = linear - T(0.5) * precision * sum_sq;
    for (int j = 0; j < mean_units; ++j) {
      const T* row = mean_weights + static_cast<std::int64_t>(j) * dimension;
      S a = S(mean_bias[j]);
      for (int m = 0; m < dimension; ++m) a += row[m] * S(x[m]);
      S logistic;
      lp += softplus_and_logistic<T>(a, logistic);
      for (int m = 0; m < dimension; ++m) grad[m] += logistic * row[m];
    }
    const S inverse_s = T(1) / (sum_sq + T(0.5));
    S radial = S(0);  // Σ_l r_l f_l² over all tiles; multiplies −x/s²
    S t[kCovarianceTile];
    for (int k0 = 0; k0 < covariance_units; k0 += kCovarianceTile) {
      const int tile = start_covariance_tile(k0, t);
      for (int l = 0; l < factors; ++l) {
        const S f = filter_output(l, x);
        const S q = T(0.5) * inverse_s * f * f;
        const T* pool = pooling + static_cast<std::int64_t>(l) * covariance_units + k0;
        for (int kk = 0; kk < tile; ++kk) t[kk] += pool[kk] * q;
      }
      for (int kk = 0; kk < tile; ++kk) {
        S logistic;
        lp += softplus_and_logistic<T>(t[kk], logistic);
        t[kk] = logistic;  // from here on t holds σ(t_k)
      }
      for (int l = 0; l < factors; ++l) {
        const S f = filter_output(l, x);
        const T* pool = pooling + static_cast<std::int64_t>(l) * covariance_units + k0;
        S r = S(0);
        for (int kk = 0; kk < tile; ++kk) r += t[kk] * pool[kk];
        radial += r * f * f;
        const S weight = r * f * inverse_s;
        const T* row = filters + static_cast<std::int64_t>(l) * dimension;
        for (int m = 0; m < dimension; ++m) grad[m] += weight * row[m];
      }
    }
    const S radial_weight = radial * inverse_s * inverse_s;
    for (int m = 0; m < dimension; ++m) grad[m] -= radial_weight * S(x[m]);
    return lp;
  }

  /// Backends the library instantiates (model/library_instances.hpp): the CPU lane kernels of
  /// Hamiltonian AIS and CUDA's.
  static constexpr unsigned library_backends =
      library_backend::cpu_ais_lanes | library_backend::ais | library_backend::tempering;

 private:
  /// Starts the tile of covariance units k0, k0 + 1, …: t[kk] = b^c_{k0+kk}, the bias of t_k
  /// before the factors' terms are added. Returns the tile's width (kCovarianceTile, or the
  /// units left).
  template <class S>
  MYRIAD_HD int start_covariance_tile(int k0, S* t) const {
    const int tile =
        covariance_units - k0 < kCovarianceTile ? covariance_units - k0 : kCovarianceTile;
    for (int kk = 0; kk < tile; ++kk) t[kk] = S(covariance_bias[k0 + kk]);
    return tile;
  }

  /// C_l x, generic over the scalar.
  template <class Vec>
  MYRIAD_HD auto filter_output(int l, const Vec& x) const {
    return row_dot(filters + static_cast<std::int64_t>(l) * dimension, x, dimension);
  }
};

/// Owning host container of a seeded mcRBM's parameters, with an optional device copy uploaded
/// once, the first time device_model() is called. Movable, not copyable (it may own device
/// memory).
template <class T>
class McrbmData : public MirroredViews<McrbmData<T>> {
 public:
  /// Purpose tags of the parameter streams (core/random.hpp), one per kind of draw.
  static constexpr std::uint32_t kFilterPurpose = user_purpose(0);
  static constexpr std::uint32_t kPoolingPurpose = user_purpose(1);
  static constexpr std::uint32_t kMeanWeightPurpose = user_purpose(2);
  static constexpr std::uint32_t kCovarianceBiasPurpose = user_purpose(3);
  static constexpr std::uint32_t kMeanBiasPurpose = user_purpose(4);
  static constexpr std::uint32_t kVisibleBiasPurpose = user_purpose(5);

  /// Parameters as in the header comment: `dim` = M, `factors` = L, `covariance_units` = K,
  /// `mean_units` = J. Throws myriad::invalid_argument naming the offending value.
  static McrbmData synthetic(int dim = 36, int factors = 64, int covariance_units = 64,
                             int mean_units = 32, std::uint64_t seed = 2011) {
    MYRIAD_EXPECTS(dim >= 1, "mcrbm: dim must be >= 1, got ", dim);
    MYRIAD_EXPECTS(factors >= 1, "mcrbm: factors must be >= 1, got ", factors);
    MYRIAD_EXPECTS(covariance_units >= 1, "mcrbm: covariance_units must be >= 1, got ",
                   covariance_units);
    MYRIAD_EXPECTS(mean_units >= 1, "mcrbm: mean_units must be >= 1, got ", mean_units);
    McrbmData data;
    data.dim_ = dim;
    data.factors_ = factors;
    data.covariance_units_ = covariance_units;
    data.mean_units_ = mean_units;

    std::vector<double> c = normal_matrix(factors, dim, seed, kFilterPurpose);
    for (int l = 0; l < factors; ++l) {
      double norm_sq = 0.0;
      for (int m = 0; m < dim; ++m)
        norm_sq +=
            c[static_cast<std::size_t>(l) * dim + m] * c[static_cast<std::size_t>(l) * dim + m];
      // A zero row has probability zero (continuous normals; Box–Muller radii are positive).
      const double inverse_norm = 1.0 / std::sqrt(norm_sq);
      for (int m = 0; m < dim; ++m) c[static_cast<std::size_t>(l) * dim + m] *= inverse_norm;
    }
    std::vector<double> p = normal_matrix(factors, covariance_units, seed, kPoolingPurpose);
    const double pooling_scale = 2.0 * dim / factors;
    for (double& v : p) v = -pooling_scale * std::fabs(v);
    std::vector<double> w = normal_matrix(mean_units, dim, seed, kMeanWeightPurpose);
    const double weight_sd = 0.5 / std::sqrt(static_cast<double>(dim));
    for (double& v : w) v *= weight_sd;

    data.filters_ = std::vector<T>(c.begin(), c.end());
    data.pooling_ = std::vector<T>(p.begin(), p.end());
    data.mean_weights_ = std::vector<T>(w.begin(), w.end());
    data.covariance_bias_ = scaled_normals(covariance_units, 0.5, seed, kCovarianceBiasPurpose);
    data.mean_bias_ = scaled_normals(mean_units, 0.1, seed, kMeanBiasPurpose);
    data.visible_bias_ = scaled_normals(dim, 0.1, seed, kVisibleBiasPurpose);
    return data;
  }

  int dim() const { return dim_; }
  int factors() const { return factors_; }
  int covariance_units() const { return covariance_units_; }
  int mean_units() const { return mean_units_; }
  double sigma() const { return sigma_; }
  /// C, factors × dim row-major (unit-norm rows).
  const std::vector<T>& filters() const { return filters_.host(); }
  /// P, factors × covariance_units row-major (non-positive).
  const std::vector<T>& pooling() const { return pooling_.host(); }
  /// W, mean_units × dim row-major.
  const std::vector<T>& mean_weights() const { return mean_weights_.host(); }
  const std::vector<T>& covariance_bias() const { return covariance_bias_.host(); }
  const std::vector<T>& mean_bias() const { return mean_bias_.host(); }
  const std::vector<T>& visible_bias() const { return visible_bias_.host(); }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  Mcrbm<T> viewing(Copy copy) const {
    return view(copy(filters_), copy(pooling_), copy(mean_weights_), copy(covariance_bias_),
                copy(mean_bias_), copy(visible_bias_));
  }

 private:
  McrbmData() = default;

  /// scale × the first n normals of RandomStream(seed, 0) with tag `purpose`.
  static std::vector<T> scaled_normals(int n, double scale, std::uint64_t seed,
                                       std::uint32_t purpose) {
    std::vector<double> v(static_cast<std::size_t>(n));
    DenseVector<double> view{v.data(), n};  // fill_normal is MYRIAD_HD: no std::vector
    RandomStream(seed, 0).fill_normal<double>(0, static_cast<Purpose>(purpose), view, n);
    std::vector<T> out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) out[i] = T(scale * v[i]);
    return out;
  }

  int dim_ = 0;
  int factors_ = 0;
  int covariance_units_ = 0;
  int mean_units_ = 0;
  double sigma_ = 1.0;
  MirroredArray<T> filters_, pooling_, mean_weights_, covariance_bias_, mean_bias_, visible_bias_;
  Mcrbm<T> view(const T* filters, const T* pooling, const T* mean_weights, const T* covariance_bias,
                const T* mean_bias, const T* visible_bias) const {
    Mcrbm<T> model;
    model.filters = filters;
    model.pooling = pooling;
    model.mean_weights = mean_weights;
    model.covariance_bias = covariance_bias;
    model.mean_bias = mean_bias;
    model.visible_bias = visible_bias;
    model.dimension = dim_;
    model.factors = factors_;
    model.covariance_units = covariance_units_;
    model.mean_units = mean_units_;
    model.sigma = T(sigma_);
    return model;
  }
};

}  // namespace myriad::models
