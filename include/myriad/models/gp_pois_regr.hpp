#pragma once
// `gp_pois_regr`: Poisson regression on a latent Gaussian process, posteriordb's
// gp_pois_regr-gp_pois_regr (Stan's model `gp_pois_regr`, from the Stan benchmark set; data:
// N = 11 counts k_i at x_i = −10, −8, …, 10), in the non-centred parameterisation:
//
//   ρ ~ Gamma(25, 4) (shape, rate),   α ~ N(0, 2²) on (0, ∞),   f̃_i ~ N(0, 1),
//   K_ij = α² exp(−(x_i − x_j)² / (2ρ²)) + 10⁻¹⁰ δ_ij   (gp_exp_quad_cov plus Stan's jitter),
//   f = L f̃,  L L^T = K  (cholesky_decompose),        k_i ~ Poisson(e^{f_i})  (poisson_log),
//
// so that f ~ N(0, K) a priori: the squared-exponential GP with amplitude α and length-scale ρ
// (Rasmussen & Williams, "Gaussian Processes for Machine Learning", 2006, eq. 2.31).
//
// Parameterisation: Stan's, in its declaration order: θ = (log ρ, log α, f̃_1, …, f̃_N)
// (real<lower=0>: lower_bound_transform, log J = log ρ + log α), dim N + 2. The log density, every
// normalising constant included (α's prior normalised on (0, ∞), the log 2 of its truncation, as
// eight_schools.hpp and linear_regression.hpp do; log k_i! computed once on the host), is
//
//   log p(θ) = 25 log 4 − log Γ(25) + 24 log ρ − 4ρ  +  log 2 − ½ log 2π − log 2 − α²/8
//            − (N/2) log 2π − ½ Σ f̃_i²  +  Σ_i [k_i f_i − e^{f_i} − log k_i!]  +  log ρ + log α.
//
// The Cholesky factor is computed in the density over the generic scalar (Cholesky–Banachiewicz,
// row by row: l_ij = (K_ij − Σ_{m<j} l_im l_jm)/l_jj, l_ii = √(K_ii − Σ_{m<i} l_im²); Golub & Van
// Loan, "Matrix Computations", 4th ed., §4.2), so forward-mode duals differentiate through it.
// f_i = Σ_{j≤i} l_ij f̃_j is formed as soon as row i is done, and the likelihood term of k_i
// added, so no f is stored. Conditioning: where the posterior lives (ρ ≈ 4.6–6.8 against the
// spacing 2, α ≈ 2–4) the last pivots of K/α² are 2e-3 … 1e-5, far above the jitter and the
// rounding; K nears singularity only at long length-scales (last pivots 4e-8 α² at ρ = 15,
// 3e-9 α² at ρ = 33), and as ρ → ∞ they fall to the jitter, which keeps K positive definite in
// double while the rounding of the Schur complements, ~N ε α², stays below 10⁻¹⁰ (α ≲ 200).
// A pivot that is not positive or not finite makes the density −∞: Stan's cholesky_decompose
// throws there and Stan rejects the draw. The branch is on value_of(pivot).
// (tests/unit/models/test_gp_pois_regr.cpp bounds the rounding's effect on log p from the
// Cholesky's backward error and the exact sensitivity of log p to K.)
//
// Recorded quantities, in reference.csv's order and names: rho, alpha, f[1], …, f[N] (the
// transformed parameter f, not f_tilde), on their own scale; f is NaN where the factorisation
// fails.
//
// Per-chain scratch: the packed lower triangle of L, kMaxPoints (kMaxPoints + 1)/2 = 136 scalars
// at kMaxPoints = 16, plus a few: 9.8 KB for DualVector<double, 8> (the vector-mode passes of
// gradient_by_forward_mode at dim 13, posteriordb's N = 11), 15.2 KB for DualVector<double, 13>
// (all 13 tangents in one pass), 1.1 KB for double (ptxas, sm_90: stack frames of 9872, 15440 and
// 1088 bytes). The cap is 16 rather than 32 for that reason: at 32 the triangle is 528 scalars,
// 38 KB of local memory per GPU thread for the same duals.
//
// Double only in practice: in float the jitter 10⁻¹⁰ is below the resolution of α² (ε_f α² ≈ 1e-6
// at α ≈ 3), and the rounding of the Schur complements, ~N ε_f α² ≈ 1e-5, approaches the
// posterior's last pivots, so the factor loses its accuracy or fails there.
//
// GpPoisRegr<T> is the trivially copyable view the chains evaluate; GpPoisRegrData<T> owns the
// data on the host and, on demand, one copy on the device. A library model (C++ API, tests'
// posteriordb ports), not a CLI built-in; the library holds its CUDA HMC instance for double.
// No gradient of its own: forward-mode duals differentiate log_density.

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
#include "myriad/model/transforms.hpp"

namespace myriad::models {

template <class T>
struct GpPoisRegr {
  using value_type = T;
  /// The most points: the Cholesky scratch is sized by it (the header comment's bytes).
  static constexpr int kMaxPoints = 16;
  static constexpr int kTriangle = kMaxPoints * (kMaxPoints + 1) / 2;
  static constexpr double kJitter = 1e-10;   ///< Stan's diag_matrix(rep_vector(1e-10, N))
  static constexpr double kRhoShape = 25.0;  ///< ρ ~ Gamma(25, 4)
  static constexpr double kRhoRate = 4.0;
  static constexpr double kAlphaSd = 2.0;  ///< α ~ N(0, 2²) on (0, ∞)

  const T* x = nullptr;       ///< x_1 … x_N
  const T* counts = nullptr;  ///< k_1 … k_N, as T
  int n = 0;                  ///< N
  /// The parameter-free part of log p: 25 log 4 − log Γ(25) − ½ log 2π (α's half-normal:
  /// log 2 − log 2 cancel) − (N/2) log 2π − Σ log k_i!.
  T log_constant = T(0);

  /// (log ρ, log α, f̃_1, …, f̃_N).
  MYRIAD_HD int dim() const { return n + 2; }

  /// Factors K(ρ, α) row by row and calls visit(i, f_i) with f_i = Σ_{j≤i} l_ij f̃_j (f̃ read
  /// from u[2 + j]) as each row is done. Returns false, having visited the rows before it, at the
  /// first pivot that is not positive and finite (by value).
  template <class Vec, class S, class Visit>
  MYRIAD_HD bool latent(const Vec& u, const S& rho, const S& alpha, Visit& visit) const {
    S l[kTriangle];
    const S alpha_sq = alpha * alpha;
    const S neg_half_inv_rho_sq = S(-0.5) / (rho * rho);
    for (int i = 0; i < n; ++i) {
      S* row = l + i * (i + 1) / 2;
      S f = S(0);
      for (int j = 0; j <= i; ++j) {
        const S* other = l + j * (j + 1) / 2;
        const T d = x[i] - x[j];
        // K_ij: gp_exp_quad_cov's α² exp(−d²/(2ρ²)), its diagonal α² plus the jitter.
        S s = alpha_sq + S(kJitter);
        if (j < i) s = alpha_sq * myriad::exp(S(d * d) * neg_half_inv_rho_sq);
        for (int m = 0; m < j; ++m) s -= row[m] * other[m];
        if (j < i) {
          row[j] = s / other[j];
        } else {
          const auto pivot = value_of(s);
          if (!(pivot > 0) || !myriad::isfinite(pivot)) return false;
          row[i] = myriad::sqrt(s);
        }
        f += row[j] * S(u[2 + j]);
      }
      visit(i, f);
    }
    return true;
  }

  /// Σ_i [k_i f_i − e^{f_i}], accumulated as latent() visits the rows.
  template <class S>
  struct PoissonTerms {
    const T* counts;
    S sum = S(0);
    MYRIAD_HD void operator()(int i, const S& f) { sum += S(counts[i]) * f - myriad::exp(f); }
  };

  /// log p(θ) as in the header comment, generic over the scalar (duals included); −∞ where the
  /// factorisation fails.
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& u) const {
    using S = std::decay_t<decltype(u[0])>;
    S log_jacobian = S(0);
    const S log_rho = u[0];
    const S rho = lower_bound_transform(log_rho, 0.0, log_jacobian);
    const S alpha = lower_bound_transform(S(u[1]), 0.0, log_jacobian);
    S sum_sq = S(0);
    for (int i = 0; i < n; ++i) sum_sq += square(S(u[2 + i]));
    PoissonTerms<S> likelihood{counts};
    if (!latent(u, rho, alpha, likelihood)) return S(-INFINITY);
    return S(log_constant) + S(kRhoShape - 1) * log_rho - S(kRhoRate) * rho -
           square(alpha) * S(0.5 / (kAlphaSd * kAlphaSd)) - S(0.5) * sum_sq + likelihood.sum +
           log_jacobian;
  }

  /// Writes f_i into out[2 + i].
  template <class Out>
  struct LatentWriter {
    Out& out;
    MYRIAD_HD void operator()(int i, const T& f) { out[2 + i] = f; }
  };

  /// Recorded quantities: rho, alpha, f[1 … N] (reference.csv's order).
  MYRIAD_HD int num_quantities() const { return n + 2; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& u, Out& out) const {
    const T rho = myriad::exp(T(u[0])), alpha = myriad::exp(T(u[1]));
    out[0] = rho;
    out[1] = alpha;
    LatentWriter<Out> writer{out};
    if (!latent(u, rho, alpha, writer))
      for (int i = 0; i < n; ++i) out[2 + i] = T(NAN);
  }
  std::string quantity_name(int i) const {
    if (i == 0) return "rho";
    if (i == 1) return "alpha";
    return "f[" + std::to_string(i - 1) + "]";
  }

  /// Backends the library instantiates (model/library_instances.hpp).
  static constexpr unsigned library_backends = library_backend::hmc_in_double<T>;
};

/// Owning host data of a gp_pois_regr posterior, with an optional device copy uploaded once.
/// Movable, not copyable.
template <class T>
class GpPoisRegrData : public MirroredViews<GpPoisRegrData<T>> {
 public:
  /// Stan's data block: N, x (N inputs) and k (N counts; posteriordb's data.json also holds a y
  /// that the model does not read). N must be in 1 … kMaxPoints (the Cholesky scratch), x finite,
  /// k non-negative (Stan's array[N] int, poisson_log's support). Messages index from 1, as Stan
  /// does. Throws myriad::invalid_argument naming the first bad field.
  static GpPoisRegrData from_arrays(int N, const std::vector<double>& x,
                                    const std::vector<int>& k) {
    constexpr int kMax = GpPoisRegr<T>::kMaxPoints;
    MYRIAD_EXPECTS(N >= 1 && N <= kMax, "gp_pois_regr: N must be in 1..", kMax,
                   " (kMaxPoints, the per-chain Cholesky scratch), got ", N);
    MYRIAD_EXPECTS(x.size() == static_cast<std::size_t>(N), "gp_pois_regr: x has ", x.size(),
                   " entries, expected N = ", N);
    MYRIAD_EXPECTS(k.size() == static_cast<std::size_t>(N), "gp_pois_regr: k has ", k.size(),
                   " entries, expected N = ", N);
    double constant = GpPoisRegr<T>::kRhoShape * std::log(GpPoisRegr<T>::kRhoRate) -
                      std::lgamma(GpPoisRegr<T>::kRhoShape) - kLogSqrtTwoPi - N * kLogSqrtTwoPi;
    std::vector<T> inputs(x.size()), counts(k.size());
    for (int i = 0; i < N; ++i) {
      MYRIAD_EXPECTS(std::isfinite(x[i]), "gp_pois_regr: x[", i + 1, "] is not finite, got ", x[i]);
      MYRIAD_EXPECTS(k[i] >= 0, "gp_pois_regr: k[", i + 1, "] must be a non-negative integer, got ",
                     k[i]);
      inputs[i] = T(x[i]);
      counts[i] = T(k[i]);
      constant -= std::lgamma(k[i] + 1.0);
    }
    GpPoisRegrData data;
    data.n_ = N;
    data.log_constant_ = T(constant);
    data.x_ = std::move(inputs);
    data.counts_ = std::move(counts);
    return data;
  }

  int N() const { return n_; }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  GpPoisRegr<T> viewing(Copy copy) const {
    return GpPoisRegr<T>{copy(x_), copy(counts_), n_, log_constant_};
  }

 private:
  GpPoisRegrData() = default;

  int n_ = 0;
  T log_constant_ = T(0);
  MirroredArray<T> x_, counts_;
};

}  // namespace myriad::models
