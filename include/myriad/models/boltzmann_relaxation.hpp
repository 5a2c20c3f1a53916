#pragma once
// `boltzmann_relaxation`: the Gaussian-mixture relaxation of a Boltzmann machine (Graham 2017,
// thesis App. E; thesis-methods.md §9.6), an annealing target (estimate/annealing_target.hpp)
// with exact answers by enumeration.
//
// Boltzmann machine: P(s) = exp(½ sᵀWs + sᵀb) / Z_B over s ∈ {±1}^{D_B}, W symmetric with zero
// diagonal. For a diagonal Λ with W + Λ = QQᵀ positive definite (Q is D_B × D, rows q_iᵀ), s_i²
// = 1 gives ½sᵀ(W + Λ)s = ½sᵀWs + ½ Tr Λ, and the Gaussian integral
// ∫ exp(−½xᵀx + sᵀQx) dx = (2π)^{D/2} exp(½ sᵀQQᵀs) turns P into the marginal of the joint
//   p(x, s) ∝ exp(−½xᵀx + sᵀ(Qx + b)) = exp(−½‖x − Qᵀs‖² + ½ sᵀQQᵀs + sᵀb).
// Summing out s, Σ_s exp(sᵀ(Qx + b)) = 2^{D_B} Π_i cosh(q_iᵀx + b_i), leaves the relaxation
//   log density = −φ(x),   φ(x) = ½xᵀx − Σ_i log cosh(q_iᵀx + b_i),
//   ∇ log density = −∇φ = Qᵀ tanh(Qx + b) − x,
// whose normaliser is (thesis E.9)
//   log Z = log Z_B + ½ Tr Λ + (D/2) log 2π − D_B log 2,
// and whose moments are E[x] = Qᵀ E[s], E[xxᵀ] = Qᵀ E[ssᵀ] Q + I (E.10, E.11).
//
// Exact samples: by the second form of p(x, s), the s-marginal is P(s) (½sᵀQQᵀs + sᵀb =
// ½sᵀWs + sᵀb + const) and x | s ~ N(Qᵀs, I). So draw s from the enumerated P(s), then
// x = Qᵀs + z, z ~ N(0, I).
//
// Parameters (thesis-methods.md §9.6, from one seed, in double with Philox, core/random.hpp):
//   R Haar-orthogonal (models/random_matrices.hpp, tag user + 0), e_i = s₁ tanh(s₂ n_i),
//   n_i ~ N(0, 1) (tag user + 1), s₁ = 6, s₂ = 2; W = R diag(e) Rᵀ with its diagonal zeroed;
//   b_i ~ N(0, 0.1²) (tag user + 2); the vectors are the normal sequences of
//   RandomStream(seed, 0). The thesis uses D_B = 30 and its code seed 201702. Up to
//   kMaxTabulatedUnits = 24 units the 2^{D_B} states are enumerated into a table of cumulative
//   probabilities (2^24: about 2 s on one core at -O2 and 128 MiB), which exact draws (reverse
//   AIS) search; up to kMaxUnits = 30, log Z_B and the moments come from the streamed
//   enumeration alone (models/boltzmann_enumeration.hpp: 2^30 states in about 27 s on two
//   cores) and the model has no exact draws (has_exact_samples() is false).
//
// Λ (any valid Λ keeps the identities exact but changes the target), one of two:
//   identity (default)  Λ = c I: c_min is the smallest c, to 1e-12 · max(1, c) by bisection,
//                       for which W + cI passes Cholesky, i.e. c_min ≈ −λ_min(W), and
//                       c = c_min + 0.01 · max(1, c_min), a 1 % margin that keeps the smallest
//                       eigenvalue of W + Λ well away from rounding. Q is the lower Cholesky
//                       factor of W + Λ, so D = D_B and q_iᵀx = Σ_{k≤i} Q_ik x_k.
//   sdp                 the thesis's: Λ minimising λ_max(W + Λ) subject to W + Λ ⪰ 0, solved
//                       offline and shipped (models/boltzmann_sdp_lambda.hpp). W + Λ is
//                       singular; Q is its pivoted Cholesky factor, D_B × D lower trapezoidal
//                       with D its rank (D < D_B: 26–28 of 30 units), the units reordered by
//                       the pivots (from_parameters with a given Λ).
//
// Cov[x] comes from the streamed enumeration of models/boltzmann_enumeration.hpp (E[ssᵀ]), the
// exact posterior that AIS's weighted moments are checked against (run.json
// exact_posterior_check).
//
// BoltzmannRelaxation<T> is the trivially copyable view that chains evaluate;
// BoltzmannRelaxationData<T> owns Q, b and the state CDF on the host and, on demand, on the
// device.

#include <algorithm>
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
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/pivoted_cholesky.hpp"
#include "myriad/model/exact_moment.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/models/boltzmann_enumeration.hpp"
#include "myriad/models/boltzmann_sdp_lambda.hpp"
#include "myriad/models/random_matrices.hpp"

namespace myriad::models {

/// log cosh t = |t| + log(1 + e^{−2|t|}) − log 2, which neither overflows nor loses the small
/// term for large |t|; generic over the scalar (duals included).
template <class S>
MYRIAD_HD MYRIAD_INLINE S log_cosh(const S& t) {
  const S abs_t = fabs(t);
  return abs_t + log1p(exp(S(-2) * abs_t)) - S(kLogTwo);
}

/// The relaxed Boltzmann machine as a density over x ∈ R^D (D ≤ D_B: D = D_B for Λ = cI, the
/// rank of W + Λ for the SDP's Λ).
template <class T>
struct BoltzmannRelaxation {
  using value_type = T;

  const T* factor = nullptr;           ///< Q, D_B × D lower trapezoidal (Q_ik = 0 for k > i)
  const T* bias = nullptr;             ///< b, D_B entries
  const double* state_cdf = nullptr;   ///< P(state ≤ k) over the 2^{D_B} states, last = 1
  int units = 0;                       ///< D_B; state k has s_i = +1 where bit i of k is set
  int dimension = 0;                   ///< D
  double log_z = 0.0;                  ///< exact log Z of exp(log_density), E.9
  const double* exact_mean = nullptr;  ///< host: E[x] (E.10)
  const double* exact_sd = nullptr;    ///< host: √diag Cov[x] (E.11)

  MYRIAD_HD int dim() const { return dimension; }

  /// Row i of Q and its nonzero entries (k ≤ min(i, D − 1)).
  MYRIAD_HD const T* row(int i) const { return factor + static_cast<std::int64_t>(i) * dimension; }
  MYRIAD_HD int row_length(int i) const { return i < dimension ? i + 1 : dimension; }

  /// −φ(x) = −½xᵀx + Σ_i log cosh(q_iᵀx + b_i), generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S sum_sq = S(0), sum_log_cosh = S(0);
    for (int k = 0; k < dimension; ++k) sum_sq += x[k] * x[k];
    for (int i = 0; i < units; ++i) {
      const T* q = row(i);
      S t = S(bias[i]);
      for (int k = 0; k < row_length(i); ++k) t += S(q[k]) * x[k];
      sum_log_cosh += log_cosh(t);
    }
    return sum_log_cosh - S(0.5) * sum_sq;
  }

  /// −φ(x) and ∇(−φ) = Qᵀ tanh(Qx + b) − x in one pass over the rows of Q; log cosh and tanh
  /// share e = e^{−2|t|}: tanh t = sign(t)(1 − e)/(1 + e).
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& x, Grad& grad) const {
    using S = element_t<Vec>;  // a scalar, or a SIMD batch of particles (core/lanes.hpp)
    S sum_sq = S(0), sum_log_cosh = S(0);
    for (int k = 0; k < dimension; ++k) {
      const S x_k = x[k];
      sum_sq += x_k * x_k;
      grad[k] = -x_k;
    }
    for (int i = 0; i < units; ++i) {
      const T* q = row(i);
      const int length = row_length(i);
      S t = S(bias[i]);
      for (int k = 0; k < length; ++k) t += q[k] * x[k];
      const S abs_t = myriad::fabs(t);
      const S e = myriad::exp(T(-2) * abs_t);
      sum_log_cosh += abs_t + myriad::log1p(e) - T(kLogTwo);
      const S tanh_abs = (T(1) - e) / (T(1) + e);
      const S tanh_t = LaneOps<S>::select(t < S(0), -tanh_abs, tanh_abs);
      for (int k = 0; k < length; ++k) grad[k] += q[k] * tanh_t;
    }
    return sum_log_cosh - T(0.5) * sum_sq;
  }

  /// Exact log Z (E.9), computed by enumeration on the host. Host only; one problem.
  double exact_log_z(int p) const {
    MYRIAD_EXPECTS(p == 0, "boltzmann_relaxation: the only problem is 0, got ", p);
    return log_z;
  }

  /// Whether exact_sample can draw: the state table exists (at most kMaxTabulatedUnits units).
  bool has_exact_samples() const { return state_cdf != nullptr; }

  /// Exact means and sds of x (E.10–E.11, by enumeration). Host only.
  std::vector<ExactMoment> exact_posterior(int p) const {
    MYRIAD_EXPECTS(p == 0, "boltzmann_relaxation: the only problem is 0, got ", p);
    std::vector<ExactMoment> exact;
    for (int k = 0; k < dimension; ++k)
      exact.push_back({"x[" + std::to_string(k) + "]", exact_mean[k], exact_sd[k]});
    return exact;
  }

  /// An exact draw of x: the state with the smallest k such that P(state ≤ k) > u for one
  /// uniform u, then x = Qᵀs + z (header comment). z are the normals 0 … D−1 of
  /// (iteration = draw, Purpose::exact_sample); u is the first uniform of the next Philox block
  /// of that counter, so the two never share random bits.
  template <class Out>
  MYRIAD_HD void exact_sample(int p, const RandomStream& rng, std::uint32_t draw, Out& x) const {
    (void)p;
    const double u = rng.uniform<double>(draw, Purpose::exact_sample,
                                         static_cast<std::uint32_t>((units + 1) / 2));
    std::int64_t lo = 0, hi = (std::int64_t{1} << units) - 1;  // state_cdf[hi] = 1 > u
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (state_cdf[mid] > u) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    rng.fill_normal<T>(draw, Purpose::exact_sample, x, dimension);
    // (Qᵀs)_k = Σ_{i≥k} Q_ik s_i.
    for (int i = 0; i < units; ++i) {
      const T s_i = ((lo >> i) & 1) ? T(1) : T(-1);
      const T* q = row(i);
      for (int k = 0; k < row_length(i); ++k) x[k] = T(x[k]) + q[k] * s_i;
    }
  }

  /// Backends the library instantiates (model/library_instances.hpp): the CPU lane kernels of
  /// Hamiltonian AIS and CUDA's.
  static constexpr unsigned library_backends =
      library_backend::cpu_ais_lanes | library_backend::ais | library_backend::tempering;
};

/// Owning host container of a random Boltzmann machine, its relaxation and the enumerated exact
/// answers, with an optional device copy uploaded once, the first time device_model() is called.
/// Movable, not copyable (it may own device memory).
template <class T>
class BoltzmannRelaxationData : public MirroredViews<BoltzmannRelaxationData<T>> {
 public:
  /// Purpose tags of the parameter streams (core/random.hpp), one per kind of draw.
  static constexpr std::uint32_t kRotationPurpose = user_purpose(0);
  static constexpr std::uint32_t kEigenPurpose = user_purpose(1);
  static constexpr std::uint32_t kBiasPurpose = user_purpose(2);
  static constexpr int kMaxUnits = 30;
  static constexpr int kMaxTabulatedUnits = 24;   ///< the largest D_B with exact draws
  static constexpr double kEigenScale = 6.0;      ///< s₁
  static constexpr double kEigenSharpness = 2.0;  ///< s₂
  static constexpr double kBiasSd = 0.1;
  static constexpr double kLambdaMargin = 0.01;  ///< c = c_min + margin · max(1, c_min)
  /// A given Λ's rank: pivots below this × max diag(W + Λ) end the factor (the SDP's solver
  /// leaves its zero eigenvalues at ~1e-9 of the largest).
  static constexpr double kRankTolerance = 1e-7;

  /// A random system as in the header comment (thesis code seed 201702), relaxed with Λ = cI or
  /// with the SDP's Λ shipped for (units, seed) (models/boltzmann_sdp_lambda.hpp). Throws
  /// myriad::invalid_argument unless 1 ≤ units ≤ 30, or for an SDP Λ not shipped. `enumeration`:
  /// where the exact answers' enumeration runs (2^30 states take 27 s on two CPU cores).
  static BoltzmannRelaxationData synthetic(int units = 12, std::uint64_t seed = 201702,
                                           BoltzmannLambda lambda = BoltzmannLambda::identity,
                                           EnumerationDevice enumeration = EnumerationDevice::cpu) {
    auto [w, b] = random_parameters(units, seed);
    if (lambda == BoltzmannLambda::identity)
      return from_parameters(std::move(w), std::move(b), enumeration);
    const std::vector<double>* sdp = boltzmann_sdp_lambda(units, seed);
    MYRIAD_EXPECTS(sdp != nullptr,
                   "boltzmann_relaxation: no SDP Lambda is shipped for units=", units,
                   " seed=", seed, " (scripts/boltzmann-sdp-lambda makes them)");
    return from_parameters(std::move(w), std::move(b), *sdp, enumeration);
  }

  /// W and b of the random system (header comment), before any relaxation.
  static std::pair<std::vector<double>, std::vector<double>> random_parameters(int units,
                                                                               std::uint64_t seed) {
    MYRIAD_EXPECTS(units >= 1 && units <= kMaxUnits, "boltzmann_relaxation: units must lie in [1, ",
                   kMaxUnits, "] (2^units states are enumerated), got ", units);
    const int n = units;
    const std::vector<double> rotation = haar_orthogonal(n, seed, kRotationPurpose);
    const std::vector<double> eigen_normals = normal_matrix(1, n, seed, kEigenPurpose);
    const std::vector<double> bias_normals = normal_matrix(1, n, seed, kBiasPurpose);
    std::vector<double> w(static_cast<std::size_t>(n) * n, 0.0), b(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      b[i] = kBiasSd * bias_normals[i];
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        double sum = 0.0;
        for (int k = 0; k < n; ++k) {
          const double e_k = kEigenScale * std::tanh(kEigenSharpness * eigen_normals[k]);
          sum += rotation[static_cast<std::size_t>(i) * n + k] * e_k *
                 rotation[static_cast<std::size_t>(j) * n + k];
        }
        w[static_cast<std::size_t>(i) * n + j] = sum;
      }
    }
    // V's entries summed in the same order for (i, j) and (j, i) are equal, but keep W exactly
    // symmetric regardless.
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < i; ++j)
        w[static_cast<std::size_t>(j) * n + i] = w[static_cast<std::size_t>(i) * n + j];
    }
    return {std::move(w), std::move(b)};
  }

  /// A system with caller-supplied couplings W (D_B × D_B row-major, symmetric, zero diagonal)
  /// and biases b, relaxed with Λ = cI. Throws myriad::invalid_argument naming the first bad
  /// entry.
  static BoltzmannRelaxationData from_parameters(
      std::vector<double> w, std::vector<double> b,
      EnumerationDevice enumeration = EnumerationDevice::cpu) {
    check_parameters(w, b);
    BoltzmannRelaxationData data;
    data.units_ = data.dim_ = static_cast<int>(b.size());
    data.coupling_ = std::move(w);
    data.bias_ = std::move(b);
    data.order_.resize(static_cast<std::size_t>(data.units_));
    for (int i = 0; i < data.units_; ++i) data.order_[i] = i;
    data.choose_lambda();
    data.enumerate(enumeration);
    return data;
  }

  /// The same relaxed with a given diagonal Λ (D_B values) for which W + Λ is positive
  /// semi-definite, possibly singular (the SDP's). Q comes from the pivoted Cholesky factor of
  /// W + Λ (linalg/pivoted_cholesky.hpp, relative tolerance kRankTolerance), D its rank; the units
  /// are reordered by its pivots (order(): unit k of this system is unit order()[k] of the given
  /// one), and the machine enumerated is the one the factor defines exactly: couplings
  /// QQᵀ − diag(QQᵀ) and Λ = diag(QQᵀ), which differ from the given W and Λ by the factor's
  /// residual (≤ kRankTolerance × max Λ_ii · D_B). Throws myriad::invalid_argument for bad entries
  /// or a W + Λ that is not positive semi-definite.
  static BoltzmannRelaxationData from_parameters(
      std::vector<double> w, std::vector<double> b, const std::vector<double>& lambda,
      EnumerationDevice enumeration = EnumerationDevice::cpu) {
    check_parameters(w, b);
    const int n = static_cast<int>(b.size());
    MYRIAD_EXPECTS(lambda.size() == b.size(), "boltzmann_relaxation: Lambda has ", lambda.size(),
                   " entries, expected units = ", n);
    for (int i = 0; i < n; ++i) {
      MYRIAD_EXPECTS(std::isfinite(lambda[i]), "boltzmann_relaxation: Lambda[", i,
                     "] is not finite");
      w[static_cast<std::size_t>(i) * n + i] = lambda[i];
    }
    const linalg::PivotedCholesky f = linalg::pivoted_cholesky(w, n, kRankTolerance);
    BoltzmannRelaxationData data;
    data.units_ = n;
    data.dim_ = f.rank;
    data.order_ = f.order;
    data.factor_ = f.factor;
    // QQᵀ split into the couplings (off the diagonal) and Λ (on it).
    data.coupling_ = f.gram();
    data.lambda_diagonal_.assign(static_cast<std::size_t>(n), 0.0);
    for (int i = 0; i < n; ++i) {
      data.bias_.push_back(b[f.order[i]]);
      std::swap(data.lambda_diagonal_[i], data.coupling_[static_cast<std::size_t>(i) * n + i]);
    }
    data.lambda_ = std::numeric_limits<double>::quiet_NaN();
    data.lambda_min_ = std::numeric_limits<double>::quiet_NaN();
    data.factor_t_ = std::vector<T>(data.factor_.begin(), data.factor_.end());
    data.bias_t_ = std::vector<T>(data.bias_.begin(), data.bias_.end());
    data.enumerate(enumeration);
    return data;
  }

  /// Throws myriad::invalid_argument unless W is D_B × D_B, symmetric with a zero diagonal and b
  /// has D_B finite entries, 1 ≤ D_B ≤ 30.
  static void check_parameters(const std::vector<double>& w, const std::vector<double>& b) {
    const int n = static_cast<int>(b.size());
    MYRIAD_EXPECTS(n >= 1 && n <= kMaxUnits, "boltzmann_relaxation: units must lie in [1, ",
                   kMaxUnits, "] (2^units states are enumerated), got ", n);
    MYRIAD_EXPECTS(w.size() == static_cast<std::size_t>(n) * n, "boltzmann_relaxation: W has ",
                   w.size(), " entries, expected units^2 = ", n * n);
    for (int i = 0; i < n; ++i) {
      MYRIAD_EXPECTS(std::isfinite(b[i]), "boltzmann_relaxation: b[", i, "] is not finite");
      MYRIAD_EXPECTS(w[static_cast<std::size_t>(i) * n + i] == 0.0, "boltzmann_relaxation: W[", i,
                     "][", i, "] must be 0, got ", w[static_cast<std::size_t>(i) * n + i]);
      for (int j = 0; j < n; ++j) {
        const double w_ij = w[static_cast<std::size_t>(i) * n + j];
        MYRIAD_EXPECTS(std::isfinite(w_ij), "boltzmann_relaxation: W[", i, "][", j,
                       "] is not finite");
        MYRIAD_EXPECTS(w_ij == w[static_cast<std::size_t>(j) * n + i], "boltzmann_relaxation: W[",
                       i, "][", j, "] != W[", j, "][", i, "]");
      }
    }
  }

  int units() const { return units_; }
  /// D: D_B for Λ = cI (Q square), the rank of W + Λ for a given Λ.
  int dim() const { return dim_; }
  /// The units' order: unit k here is unit order()[k] of the system given (identity for Λ = cI).
  const std::vector<int>& order() const { return order_; }
  /// W, D_B × D_B row-major, zero diagonal (for a given Λ: the one the factor defines).
  const std::vector<double>& coupling() const { return coupling_; }
  /// b (in order()).
  const std::vector<double>& bias() const { return bias_; }
  /// Λ's diagonal: c in every entry for Λ = cI.
  std::vector<double> lambda_diagonal() const {
    return lambda_diagonal_.empty() ? std::vector<double>(static_cast<std::size_t>(units_), lambda_)
                                    : lambda_diagonal_;
  }
  /// c_min: the smallest c (to bisection tolerance) for which W + cI passed Cholesky (NaN for a
  /// given Λ).
  double lambda_min() const { return lambda_min_; }
  /// c: Λ = c I, with the margin of the header comment (NaN for a given Λ).
  double lambda() const { return lambda_; }
  /// Q with QQᵀ = W + Λ, D_B × D row-major, zeros above the diagonal: the Cholesky factor for
  /// Λ = cI, the pivoted one for a given Λ.
  const std::vector<double>& factor() const { return factor_; }
  /// log Z_B = log Σ_s exp(½sᵀWs + sᵀb).
  double log_z_boltzmann() const { return log_z_boltzmann_; }
  /// log Z of the relaxation (E.9).
  double log_z() const { return log_z_; }
  /// P(state ≤ k), k < 2^{D_B}, in the state order of BoltzmannRelaxation; empty above
  /// kMaxTabulatedUnits.
  const std::vector<double>& state_cdf() const { return state_cdf_.host(); }
  /// E[s] under P(s).
  const std::vector<double>& mean_s() const { return mean_s_; }
  /// E[x] = Qᵀ E[s] (E.10).
  const std::vector<double>& mean_x() const { return mean_x_; }
  /// Cov[x] = Qᵀ Cov[s] Q + I (E.11), D × D row-major, from the streamed enumeration
  /// (models/boltzmann_enumeration.hpp).
  const std::vector<double>& covariance_x() const { return covariance_x_; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  BoltzmannRelaxation<T> viewing(Copy copy) const {
    return view(copy(factor_t_), copy(bias_t_), copy(state_cdf_));
  }

 private:
  BoltzmannRelaxationData() = default;

  BoltzmannRelaxation<T> view(const T* factor, const T* bias, const double* cdf) const {
    BoltzmannRelaxation<T> model;
    model.factor = factor;
    model.bias = bias;
    model.state_cdf = cdf;
    model.units = units_;
    model.dimension = dim_;
    model.log_z = log_z_;
    model.exact_mean = mean_x_.data();
    model.exact_sd = sd_x_.data();
    return model;
  }

  // Lower Cholesky factor of W + cI in `out`; false when W + cI is not numerically PD.
  bool shifted_cholesky(double c, std::vector<double>& out) const {
    const int n = units_;
    out = coupling_;
    for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i) * n + i] += c;
    if (!linalg::cholesky_in_place(dense_matrix(out.data(), n, n))) return false;
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) out[static_cast<std::size_t>(i) * n + j] = 0.0;
    }
    return true;
  }

  // Bisection for c_min on [0, Gershgorin bound + 1]: Tr W = 0, so W is not PD and c = 0 fails
  // (λ_min(W) ≤ 0); above the Gershgorin radius max_i Σ_j |W_ij|, W + cI is strictly
  // diagonally dominant with a positive diagonal, hence PD.
  void choose_lambda() {
    const int n = units_;
    double radius = 0.0;
    for (int i = 0; i < n; ++i) {
      double row = 0.0;
      for (int j = 0; j < n; ++j) row += std::fabs(coupling_[static_cast<std::size_t>(i) * n + j]);
      radius = std::max(radius, row);
    }
    double lo = 0.0, hi = radius + 1.0;
    std::vector<double> scratch;
    MYRIAD_EXPECTS(shifted_cholesky(hi, scratch),
                   "boltzmann_relaxation: W + cI failed Cholesky above the Gershgorin bound");
    // Relative tolerance, with an absolute floor of 1e-12 where c_min is near 0 (D_B = 1).
    for (int iteration = 0; iteration < 200 && hi - lo > 1e-12 * std::max(1.0, hi); ++iteration) {
      const double mid = 0.5 * (lo + hi);
      if (shifted_cholesky(mid, scratch)) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    lambda_min_ = hi;
    lambda_ = hi + kLambdaMargin * std::max(1.0, hi);
    MYRIAD_EXPECTS(shifted_cholesky(lambda_, factor_),
                   "boltzmann_relaxation: W + Lambda failed Cholesky");
    factor_t_ = std::vector<T>(factor_.begin(), factor_.end());
    bias_t_ = std::vector<T>(bias_.begin(), bias_.end());
  }

  // All 2^{D_B} states in Gray-code order (one unit flips per step), so that
  // e(s) = ½sᵀWs + sᵀb updates in O(D_B): flipping s_j changes e by −2 s_j (h_j + b_j), with
  // h = Ws (W_jj = 0), and h_k by −2 s_j W_kj. log Z_B by log-sum-exp; the CDF in state-index
  // order; E[s] from the normalised probabilities.
  void enumerate(EnumerationDevice device) {
    const int n = units_;
    // Cov[x] from E[ssᵀ], which the table below does not give; above kMaxTabulatedUnits the
    // streamed enumeration gives everything and there is no table.
    const BoltzmannExactMoments streamed = boltzmann_exact_moments(coupling_, bias_, device);
    const int d = dim_;
    const RelaxationMoments relaxed = relaxation_moments(streamed, factor_, d);
    covariance_x_ = relaxed.covariance;
    sd_x_.resize(static_cast<std::size_t>(d));
    for (int k = 0; k < d; ++k)
      sd_x_[k] = std::sqrt(covariance_x_[static_cast<std::size_t>(k) * d + k]);
    if (n > kMaxTabulatedUnits) {
      log_z_boltzmann_ = streamed.log_z;
      mean_s_ = streamed.mean;
      mean_x_ = relaxed.mean;
      set_log_z();
      return;
    }
    const std::int64_t states = std::int64_t{1} << n;
    std::vector<double> s(static_cast<std::size_t>(n), -1.0), h(static_cast<std::size_t>(n), 0.0);
    double energy = 0.0;  // e(s) at s = (−1, …, −1)
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < n; ++k) h[i] -= coupling_[static_cast<std::size_t>(i) * n + k];
      energy += 0.5 * s[i] * h[i] - bias_[i];
    }
    std::vector<double> log_weight(static_cast<std::size_t>(states), 0.0);  // becomes the CDF
    log_weight[0] = energy;
    double max_log_weight = energy;
    for (std::int64_t t = 1; t < states; ++t) {
      int j = 0;
      while (((t >> j) & 1) == 0) ++j;  // the Gray code t ^ (t >> 1) flips bit j = ctz(t)
      const double s_j = s[j];
      energy -= 2.0 * s_j * (h[j] + bias_[j]);
      for (int k = 0; k < n; ++k)
        h[k] -= 2.0 * s_j * coupling_[static_cast<std::size_t>(k) * n + j];
      s[j] = -s_j;
      const std::int64_t state = t ^ (t >> 1);
      log_weight[static_cast<std::size_t>(state)] = energy;
      if (energy > max_log_weight) max_log_weight = energy;
    }
    double sum = 0.0;
    for (std::int64_t k = 0; k < states; ++k) sum += std::exp(log_weight[k] - max_log_weight);
    log_z_boltzmann_ = max_log_weight + std::log(sum);
    mean_s_.assign(static_cast<std::size_t>(n), 0.0);
    double cumulative = 0.0;
    for (std::int64_t k = 0; k < states; ++k) {
      const double probability = std::exp(log_weight[k] - log_z_boltzmann_);
      for (int i = 0; i < n; ++i) mean_s_[i] += ((k >> i) & 1) ? probability : -probability;
      cumulative += probability;
      log_weight[k] = cumulative;
    }
    log_weight.back() = 1.0;  // the probabilities sum to 1 up to rounding; the search needs 1
    state_cdf_ = std::move(log_weight);
    mean_x_.assign(static_cast<std::size_t>(d), 0.0);
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < std::min(i + 1, d); ++k)
        mean_x_[k] += factor_[static_cast<std::size_t>(i) * d + k] * mean_s_[i];
    }
    set_log_z();
  }

  /// E.9: log Z = log Z_B + ½ Tr Λ + (D/2) log 2π − D_B log 2.
  void set_log_z() {
    double trace = units_ * lambda_;  // Λ = cI (so the identity relaxation's sum is exact)
    if (!lambda_diagonal_.empty()) {
      trace = 0;
      for (double l : lambda_diagonal_) trace += l;
    }
    log_z_ =
        log_z_boltzmann_ + 0.5 * trace + 0.5 * dim_ * std::log(2.0 * M_PI) - units_ * std::log(2.0);
  }

  int units_ = 0;
  int dim_ = 0;
  std::vector<int> order_;
  std::vector<double> coupling_;
  std::vector<double> bias_;
  double lambda_min_ = 0.0;
  double lambda_ = 0.0;
  std::vector<double> lambda_diagonal_;  ///< a given Λ's (empty for Λ = cI)
  std::vector<double> factor_;
  MirroredArray<T> factor_t_, bias_t_;
  double log_z_boltzmann_ = 0.0;
  double log_z_ = 0.0;
  MirroredArray<double> state_cdf_;
  std::vector<double> mean_s_;
  std::vector<double> mean_x_;
  std::vector<double> covariance_x_, sd_x_;
};

}  // namespace myriad::models
