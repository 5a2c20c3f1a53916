#pragma once
// `poe_laplace`, `poe_student_t`: the product-of-experts analysis model of the HAIS paper
// (Sohl-Dickstein & Culpepper 2011; hais.md §9.3), an annealing target
// (estimate/annealing_target.hpp) over x ∈ R^M:
//
//   p(x) = (1/Z) Π_l exp(−E(Φ_l x; λ_l)),   Φ ∈ R^{L×M} (filters, rows Φ_l), L ≥ M,
//   Laplace:   E(u; λ) = λ|u|,          ∂_u E = λ sign(u) (sign(0) = 0),   z(λ) = 2/λ, λ = 1;
//   Student-t: E(u; λ) = λ log(1 + u²), ∂_u E = 2λu/(1 + u²),  z(λ) = √π Γ(λ − ½)/Γ(λ), λ > ½,
//   log density = −Σ_l E(Φ_l x; λ_l) (unnormalised: AIS estimates its log Z),
//   ∇ log density = −Φᵀ ψ'(Φx), ψ'_l = ∂_u E(Φ_l x; λ_l).
// With fewer experts than dimensions the density is constant along the null space of Φ and
// improper, so L ≥ M is required. Every factor exp(−E) is at most 1, so the L − M experts
// beyond a complete, invertible set only lower Z: the density is proper whenever Φ has rank M.
//
// Known answers, complete case L = M only (hais.md §9.3; change variables to u = Φx):
//   log Z = Σ_l log z(λ_l) − log|det Φ|,
// and the u_l are independent with densities exp(−E(u; λ_l))/z(λ_l), so x = Φ⁻¹u is an exact
// draw. For L > M, exact_log_z is NaN and exact_sample must not be used (it writes NaN, which
// a reverse run reports as non-finite starting points); ProductOfExpertsData::has_exact() and
// ProductOfExperts::is_complete() say which case holds.
//
// Parameters from one seed, in double on the host with Philox (core/random.hpp), then cast:
//   Φ₀ = R₁ diag(s) R₂ (rows 0 … M−1 of Φ), R₁, R₂ Haar orthogonal (models/random_matrices.hpp,
//     tags user + 0 and user + 1), log s_l uniform on [log ½, log 2] (uniform l of
//     RandomStream(seed, 0), tag user + 2), so log|det Φ₀| = Σ_l log s_l exactly and
//     Φ₀⁻¹ = R₂ᵀ diag(1/s) R₁ᵀ needs no factorisation;
//   rows M … L−1 of Φ: N(0, 1/M) entries (normal_matrix, tag user + 3), so that Φ_l x has
//     about the spread of the complete rows' outputs for x of unit scale;
//   Student-t λ_l uniform on [lambda_min, lambda_max] (uniform l of RandomStream(seed, 0), tag
//     user + 4). u_l has tails |u|^{−2λ}: a finite mean needs λ > 1 and a finite variance
//     λ > 1.5, so the defaults [1.5, 3] keep both finite, but only barely for λ_l near 1.5,
//     where AIS weights become heavy-tailed and standard errors understate the error (the
//     paper notes that learned λ_l ≤ 1, which has no mean, make estimators struggle).
// The HAIS paper's sizes are M = 36 whitened PCA components, L = 36 (complete, the validation
// case) or 144 (Table 1); its Φ and λ were learned from image patches, which these stand in for.
//
// ProductOfExperts<T> is the trivially copyable view that chains evaluate;
// ProductOfExpertsData<T> owns Φ, λ and Φ₀⁻¹ on the host and, on demand, on the device. Every
// chain reads Φ row by row at the same time, so on a GPU those reads are broadcasts.

#include <cmath>
#include <cstdint>
#include <limits>
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
#include "myriad/models/random_matrices.hpp"

namespace myriad::models {

/// The expert energy E(u; λ) of a product of experts (hais.md §9.3).
enum class ExpertKind : int {
  laplace = 0,    ///< λ|u| with λ = 1
  student_t = 1,  ///< λ log(1 + u²), λ > ½
};

/// The model's registered name: "poe_laplace" or "poe_student_t".
inline const char* poe_model_name(ExpertKind kind) {
  return kind == ExpertKind::laplace ? "poe_laplace" : "poe_student_t";
}

template <class T>
struct ProductOfExperts {
  using value_type = T;
  /// Marsaglia–Tsang tries per Gamma variate in exact_sample (see gamma_draw).
  static constexpr int kMaxGammaTries = 32;
  /// Philox blocks reserved per expert in exact_sample: the mixture normal, the boost uniform,
  /// then a normal and a uniform per Marsaglia–Tsang try.
  static constexpr std::uint32_t kBlocksPerExpert = 2 + 2 * kMaxGammaTries;

  const T* filters = nullptr;  ///< Φ, experts × dimension, row-major; rows 0 … M−1 are Φ₀
  /// Φᵀ, dimension × experts, row-major (the team gradient's first pass); null: read Φ.
  const T* filters_transposed = nullptr;
  const T* lambda = nullptr;  ///< λ_l, one per expert (all 1 for Laplace experts)
  /// Φ₀⁻¹, dimension × dimension, row-major, in the complete case; null otherwise.
  const T* inverse_filters = nullptr;
  int dimension = 0;  ///< M
  int experts = 0;    ///< L ≥ M
  ExpertKind kind = ExpertKind::laplace;
  /// log Z in the complete case, NaN otherwise (host value, read by exact_log_z).
  double log_z = std::numeric_limits<double>::quiet_NaN();

  MYRIAD_HD int dim() const { return dimension; }

  /// True when L = M: exact_log_z is finite and exact_sample draws from p.
  MYRIAD_HD bool is_complete() const { return experts == dimension && inverse_filters != nullptr; }
  /// Whether exact_sample can draw (annealing_target.hpp): only in the complete case.
  bool has_exact_samples() const { return is_complete(); }

  /// −Σ_l E(Φ_l x; λ_l), generic over the scalar (duals included).
  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& x) const {
    using S = std::decay_t<decltype(x[0])>;
    S energy = S(0);
    for (int l = 0; l < experts; ++l) {
      const S u = row_dot(filters + static_cast<std::int64_t>(l) * dimension, x, dimension);
      energy += kind == ExpertKind::laplace ? S(lambda[l]) * fabs(u) : S(lambda[l]) * log1p(u * u);
    }
    return -energy;
  }

  /// log p(x) up to log Z and ∇ log p = −Φᵀψ'(Φx) (hais.md §9.3) in one pass over the rows of Φ.
  /// Written over the element type S, so particles also run it in SIMD lanes (core/lanes.hpp).
  template <class Vec, class Grad>
  MYRIAD_HD element_t<Vec> log_density_gradient(const Vec& x, Grad& grad) const {
    using S = element_t<Vec>;
    for (int j = 0; j < dimension; ++j) grad[j] = S(0);
    S energy = S(0);
    for (int l = 0; l < experts; ++l) {
      const T* row = filters + static_cast<std::int64_t>(l) * dimension;
      S u = S(0);
      for (int j = 0; j < dimension; ++j) u += row[j] * S(x[j]);
      energy += expert_energy(l, u);
      const S slope = expert_slope(l, u);
      for (int j = 0; j < dimension; ++j) grad[j] -= slope * row[j];
    }
    return -energy;
  }

  /// Scratch of the team gradient: one slope ψ'_l per expert (model/team_density.hpp).
  MYRIAD_HD int team_scratch_size() const { return experts; }

  /// The gradient above computed by a team of lanes (core/team.hpp, model/team_density.hpp):
  /// expert l belongs to lane l mod size, which forms u_l = Φ_l·x, its energy and its slope
  /// ψ'_l into slopes[l]; after a barrier, coordinate j belongs to lane j mod size, which forms
  /// ∇_j = −Σ_l ψ'_l Φ_lj over the experts in the one-lane order (so each gradient element has
  /// the one-lane bits; the energy is summed in a different order). On a warp both passes read
  /// consecutive addresses across the lanes: the first reads Φᵀ (column j of Φ at consecutive
  /// l), the second row l of Φ at consecutive j; x[j] and slopes[l] are broadcasts.
  template <class Team, class Vec, class Grad>
  MYRIAD_HD T log_density_gradient(const Team& team, const Vec& x, Grad& grad, T* slopes) const {
    T energy = T(0);
    for (int l = team.rank(); l < experts; l += team.size()) {
      T u = T(0);
      if (filters_transposed != nullptr) {
        for (int j = 0; j < dimension; ++j)
          u += filters_transposed[static_cast<std::int64_t>(j) * experts + l] * T(x[j]);
      } else {
        const T* row = filters + static_cast<std::int64_t>(l) * dimension;
        for (int j = 0; j < dimension; ++j) u += row[j] * T(x[j]);
      }
      energy += expert_energy(l, u);
      slopes[l] = expert_slope(l, u);
    }
    team.sync();
    for (int j = team.rank(); j < dimension; j += team.size()) {
      T g = T(0);
      for (int l = 0; l < experts; ++l)
        g -= slopes[l] * filters[static_cast<std::int64_t>(l) * dimension + j];
      grad[j] = g;
    }
    return -team.sum(energy);
  }

  /// log Z (complete case) or NaN (L > M). Host only; the model has the single problem 0.
  double exact_log_z(int problem) const {
    MYRIAD_EXPECTS(problem == 0, poe_model_name(kind), ": the model has one problem (0), got ",
                   problem);
    return log_z;
  }

  /// An exact draw from p into x (complete case): u_l drawn independently from the expert
  /// densities, then x = Φ₀⁻¹u. Uses Philox iteration `draw` with Purpose::exact_sample, blocks
  /// l · kBlocksPerExpert + 0 … kBlocksPerExpert − 1 for expert l, so reverse particle `draw`
  /// gets its own numbers from any stream and float and double use the same words.
  /// In the overcomplete case (L > M) there is no exact sampler: x is set to NaN.
  template <class Out>
  MYRIAD_HD void exact_sample(int problem, const RandomStream& rng, std::uint32_t draw,
                              Out& x) const {
    (void)problem;
    if (!is_complete()) {
      for (int i = 0; i < dimension; ++i) x[i] = std::numeric_limits<T>::quiet_NaN();
      return;
    }
    for (int i = 0; i < dimension; ++i) x[i] = T(0);
    // x = Σ_l u_l · (column l of Φ₀⁻¹): one u at a time, no scratch vector.
    for (int l = 0; l < dimension; ++l) {
      const T u = expert_draw(l, rng, draw);
      for (int i = 0; i < dimension; ++i) {
        x[i] += inverse_filters[static_cast<std::int64_t>(i) * dimension + l] * u;
      }
    }
  }

  /// Backends the library instantiates (model/library_instances.hpp): the CPU lane kernels of
  /// Hamiltonian AIS and CUDA's.
  static constexpr unsigned library_backends =
      library_backend::cpu_ais_lanes | library_backend::ais | library_backend::tempering;

 private:
  /// E(u; λ_l) of expert l.
  template <class S>
  MYRIAD_HD S expert_energy(int l, const S& u) const {
    return kind == ExpertKind::laplace ? lambda[l] * myriad::fabs(u)
                                       : lambda[l] * myriad::log1p(u * u);
  }
  /// ψ'_l = ∂_u E(u; λ_l) of expert l (sign(0) = 0 for Laplace experts).
  template <class S>
  MYRIAD_HD S expert_slope(int l, const S& u) const {
    using Lanes = LaneOps<S>;
    if (kind == ExpertKind::laplace)
      return Lanes::select(u > S(0), S(lambda[l]), Lanes::select(u < S(0), S(-lambda[l]), S(0)));
    return T(2) * lambda[l] * u / (T(1) + u * u);
  }

  /// One draw of u_l ~ exp(−E(u; λ_l))/z(λ_l).
  MYRIAD_HD T expert_draw(int l, const RandomStream& rng, std::uint32_t draw) const {
    const std::uint32_t base = static_cast<std::uint32_t>(l) * kBlocksPerExpert;
    if (kind == ExpertKind::laplace) {
      // Inverse CDF of the Laplace density (λ/2) e^{−λ|u|}: with w = v − ½, v ~ U(0, 1),
      // u = −sign(w) log(1 − 2|w|)/λ; v lies in the open interval, so the log is finite.
      const T w = rng.uniform<T>(draw, Purpose::exact_sample, base) - T(0.5);
      const T magnitude = -myriad::log1p(T(-2) * myriad::fabs(w)) / lambda[l];
      return w < T(0) ? -magnitude : magnitude;
    }
    // (1 + u²)^{−λ} is the Student-t density with ν = 2λ − 1 degrees of freedom scaled by
    // 1/√ν: u = t/√ν, t = z/√(χ²_ν/ν), χ²_ν = 2G with G ~ Gamma(ν/2) = Gamma(λ − ½), hence
    // u = z/√(2G) with z ~ N(0, 1) independent of G.
    const T z = rng.normal<T>(draw, Purpose::exact_sample, 2 * base);  // z0 of block `base`
    const T g = gamma_draw(lambda[l] - T(0.5), rng, draw, base);
    return z / myriad::sqrt(T(2) * g);
  }

  /// G ~ Gamma(a, 1), a > 0, by Marsaglia & Tsang (2000, "A simple method for generating gamma
  /// variables", ACM TOMS 26(3)): with d = a' − ⅓, c = 1/√(9d), propose v = (1 + cz)³,
  /// z ~ N(0, 1), and accept d·v when log U < ½z² + d − dv + d log v. For a < 1 it draws
  /// Gamma(a + 1) and multiplies by U^{1/a} (their §6). The acceptance probability is at least
  /// 0.95 for a' = a or a + 1 ≥ 1, so all kMaxGammaTries = 32 tries fail with probability
  /// below 0.05³² ≈ 2e-42: never in practice. The fixed cap keeps the loop bounded in device
  /// code; on the impossible exhaustion the result is d (the v = 1 proposal, near the mode),
  /// finite and positive, so nothing downstream breaks.
  MYRIAD_HD T gamma_draw(T a, const RandomStream& rng, std::uint32_t draw,
                         std::uint32_t base) const {
    const bool boost = a < T(1);
    const T shape = boost ? a + T(1) : a;
    const T d = shape - T(1) / T(3);
    const T c = T(1) / myriad::sqrt(T(9) * d);
    T g = d;
    for (int attempt = 0; attempt < kMaxGammaTries; ++attempt) {
      const std::uint32_t block = base + 2 + 2 * static_cast<std::uint32_t>(attempt);
      const T z = rng.normal<T>(draw, Purpose::exact_sample, 2 * block);
      const T cube_root = T(1) + c * z;
      if (cube_root <= T(0)) continue;
      const T v = cube_root * cube_root * cube_root;
      const T log_u = myriad::log(rng.uniform<T>(draw, Purpose::exact_sample, block + 1));
      if (log_u < T(0.5) * z * z + d - d * v + d * myriad::log(v)) {
        g = d * v;
        break;
      }
    }
    if (boost) {
      const T u = rng.uniform<T>(draw, Purpose::exact_sample, base + 1);
      g *= myriad::exp(myriad::log(u) / a);
    }
    return g;
  }
};

/// Owning host container of a seeded product of experts: Φ, λ and (complete case) Φ₀⁻¹, with
/// an optional device copy uploaded once, the first time device_model() is called. Movable, not
/// copyable (it may own device memory).
template <class T>
class ProductOfExpertsData : public MirroredViews<ProductOfExpertsData<T>> {
 public:
  /// Purpose tags of the parameter streams (core/random.hpp), one per kind of draw.
  static constexpr std::uint32_t kLeftRotationPurpose = user_purpose(0);
  static constexpr std::uint32_t kRightRotationPurpose = user_purpose(1);
  static constexpr std::uint32_t kScalePurpose = user_purpose(2);
  static constexpr std::uint32_t kExtraFilterPurpose = user_purpose(3);
  static constexpr std::uint32_t kLambdaPurpose = user_purpose(4);
  /// Range of log s_l, the log singular values of Φ₀.
  static constexpr double kMinScale = 0.5;
  static constexpr double kMaxScale = 2.0;

  /// Parameters as in the header comment: `dim` = M, `experts` = L ≥ M. lambda_min and
  /// lambda_max bound the Student-t λ_l (ignored for Laplace experts, whose λ is 1). Throws
  /// myriad::invalid_argument naming the model and the offending value.
  static ProductOfExpertsData synthetic(ExpertKind kind, int dim = 36, int experts = 36,
                                        double lambda_min = 1.5, double lambda_max = 3.0,
                                        std::uint64_t seed = 2011) {
    MYRIAD_EXPECTS(kind == ExpertKind::laplace || kind == ExpertKind::student_t,
                   "product_of_experts: unknown expert kind ", static_cast<int>(kind));
    const char* name = poe_model_name(kind);
    MYRIAD_EXPECTS(dim >= 1, name, ": dim must be >= 1, got ", dim);
    MYRIAD_EXPECTS(experts >= dim, name, ": experts (", experts, ") must be >= dim (", dim,
                   "); with fewer experts than dimensions the density is improper");
    if (kind == ExpertKind::student_t) {
      MYRIAD_EXPECTS(std::isfinite(lambda_min) && lambda_min > 0.5, name,
                     ": lambda_min must exceed 0.5 (the expert normaliser is finite only for "
                     "lambda > 1/2), got ",
                     lambda_min);
      MYRIAD_EXPECTS(std::isfinite(lambda_max) && lambda_max >= lambda_min, name,
                     ": lambda_max must be finite and >= lambda_min = ", lambda_min, ", got ",
                     lambda_max);
    }
    const int m = dim, l_count = experts;
    ProductOfExpertsData data;
    data.kind_ = kind;
    data.dim_ = m;
    data.experts_ = l_count;

    const std::vector<double> r1 = haar_orthogonal(m, seed, kLeftRotationPurpose);
    const std::vector<double> r2 = haar_orthogonal(m, seed, kRightRotationPurpose);
    const RandomStream stream(seed, 0);
    std::vector<double> log_s(static_cast<std::size_t>(m));
    const double log_lo = std::log(kMinScale), log_hi = std::log(kMaxScale);
    data.log_abs_det_ = 0.0;
    for (int k = 0; k < m; ++k) {
      const double v = stream.uniform<double>(0, static_cast<Purpose>(kScalePurpose),
                                              static_cast<std::uint32_t>(k));
      log_s[k] = log_lo + (log_hi - log_lo) * v;
      data.log_abs_det_ += log_s[k];
    }
    const auto at = [m](const std::vector<double>& a, int i, int j) {
      return a[static_cast<std::size_t>(i) * m + j];
    };

    // Φ₀ = R₁ diag(s) R₂, then the extra rows.
    std::vector<double> phi(static_cast<std::size_t>(l_count) * m);
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j) {
        double sum = 0.0;
        for (int k = 0; k < m; ++k) sum += at(r1, i, k) * std::exp(log_s[k]) * at(r2, k, j);
        phi[static_cast<std::size_t>(i) * m + j] = sum;
      }
    }
    if (l_count > m) {
      const std::vector<double> extra = normal_matrix(l_count - m, m, seed, kExtraFilterPurpose);
      const double extra_sd = 1.0 / std::sqrt(static_cast<double>(m));
      for (std::size_t e = 0; e < extra.size(); ++e) {
        phi[static_cast<std::size_t>(m) * m + e] = extra_sd * extra[e];
      }
    }

    std::vector<double> lambda(static_cast<std::size_t>(l_count), 1.0);
    if (kind == ExpertKind::student_t) {
      for (int l = 0; l < l_count; ++l) {
        const double v = stream.uniform<double>(0, static_cast<Purpose>(kLambdaPurpose),
                                                static_cast<std::uint32_t>(l));
        lambda[l] = lambda_min + (lambda_max - lambda_min) * v;
      }
    }

    data.log_z_ = std::numeric_limits<double>::quiet_NaN();
    if (l_count == m) {
      // Φ₀⁻¹ = R₂ᵀ diag(1/s) R₁ᵀ.
      std::vector<double> inverse(static_cast<std::size_t>(m) * m);
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < m; ++j) {
          double sum = 0.0;
          for (int k = 0; k < m; ++k) sum += at(r2, k, i) * std::exp(-log_s[k]) * at(r1, j, k);
          inverse[static_cast<std::size_t>(i) * m + j] = sum;
        }
      }
      data.inverse_filters_ = std::vector<T>(inverse.begin(), inverse.end());
      // hais.md §9.3: log Z = Σ_l log z(λ_l) − log|det Φ|, from the double parameters (the
      // float model's rounding of Φ moves log Z by O(M ε_float)).
      double log_z = -data.log_abs_det_;
      for (int l = 0; l < l_count; ++l) log_z += log_expert_normaliser(kind, lambda[l]);
      data.log_z_ = log_z;
    }
    data.filters_ = std::vector<T>(phi.begin(), phi.end());
    std::vector<T> transposed(phi.size());
    for (int l = 0; l < l_count; ++l)
      for (int j = 0; j < m; ++j)
        transposed[static_cast<std::size_t>(j) * l_count + l] =
            static_cast<T>(phi[static_cast<std::size_t>(l) * m + j]);
    data.filters_transposed_ = std::move(transposed);
    data.lambda_ = std::vector<T>(lambda.begin(), lambda.end());
    return data;
  }

  /// log z(λ) of one expert (hais.md §9.3): log(2/λ) (Laplace) or
  /// ½ log π + log Γ(λ − ½) − log Γ(λ) (Student-t, λ > ½).
  static double log_expert_normaliser(ExpertKind kind, double lambda) {
    if (kind == ExpertKind::laplace) return std::log(2.0 / lambda);
    return 0.5 * std::log(M_PI) + std::lgamma(lambda - 0.5) - std::lgamma(lambda);
  }

  ExpertKind kind() const { return kind_; }
  const char* name() const { return poe_model_name(kind_); }
  int dim() const { return dim_; }
  int experts() const { return experts_; }
  /// True in the complete case L = M, the only one with exact log Z and exact samples.
  bool has_exact() const { return experts_ == dim_; }
  /// log Z, or NaN when L > M.
  double exact_log_z() const { return log_z_; }
  /// log|det Φ₀| = Σ_l log s_l of the double parameters.
  double log_abs_det() const { return log_abs_det_; }
  /// Φ, experts × dim row-major; rows 0 … dim−1 are Φ₀.
  const std::vector<T>& filters() const { return filters_.host(); }
  /// Φᵀ, dim × experts row-major.
  const std::vector<T>& filters_transposed() const { return filters_transposed_.host(); }
  /// λ_l, one per expert.
  const std::vector<T>& lambda() const { return lambda_.host(); }
  /// Φ₀⁻¹, dim × dim row-major, in the complete case; empty when L > M.
  const std::vector<T>& inverse_filters() const { return inverse_filters_.host(); }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  ProductOfExperts<T> viewing(Copy copy) const {
    return view(copy(filters_), copy(filters_transposed_), copy(lambda_), copy(inverse_filters_));
  }

 private:
  ProductOfExpertsData() = default;

  ProductOfExperts<T> view(const T* filters, const T* transposed, const T* lambda,
                           const T* inverse) const {
    ProductOfExperts<T> model;
    model.filters = filters;
    model.filters_transposed = transposed;
    model.lambda = lambda;
    model.inverse_filters = has_exact() ? inverse : nullptr;
    model.dimension = dim_;
    model.experts = experts_;
    model.kind = kind_;
    model.log_z = log_z_;
    return model;
  }

  ExpertKind kind_ = ExpertKind::laplace;
  int dim_ = 0;
  int experts_ = 0;
  double log_abs_det_ = 0.0;
  double log_z_ = std::numeric_limits<double>::quiet_NaN();
  MirroredArray<T> filters_, filters_transposed_, lambda_;
  MirroredArray<T> inverse_filters_;  ///< empty when L > M
};

}  // namespace myriad::models
