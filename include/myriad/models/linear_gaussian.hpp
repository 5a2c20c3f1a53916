#pragma once
// `linear_gaussian`: the linear generator g(u) = A u with u ~ N(0, I_N), A of size M × N
// (M < N), conditioned on A u = x̄ (constrained-hmc.md §2, "Obvious analytic checks").
//
// The Gram term |A Aᵀ| is constant, so the target of §2 is the Gaussian conditional
//   mean       = Aᵀ (A Aᵀ)⁻¹ x̄ = P x̄,        P = Aᵀ (A Aᵀ)⁻¹   (N × M),
//   covariance = I − Aᵀ (A Aᵀ)⁻¹ A = I − P A  (singular: supported on the affine fibre),
// which LinearGaussianProblem computes on the host (exact_mean, exact_covariance).
//
// Synthetic problem: A_mn ~ N(0, 1/N) and x̄ = A u* with u* ~ N(0, I_N), all from one seed
// (so the data are consistent). LinearGaussian is the trivially copyable view that chains
// evaluate; LinearGaussianProblem owns A, x̄ and P on the host and, on demand, on the device
// (M × N can be large, so the view holds pointers). The recorded quantities are the inputs,
// named u[0], …, u[N−1].

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/mirrored_array.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/model/standard_normal_prior.hpp"

namespace myriad::models {

/// The linear generator g(u) = A u, ρ = N(0, I_N), viewing caller-owned A, x̄ and P.
struct LinearGaussian : StandardNormalPrior<LinearGaussian> {
  using value_type = double;

  const double* matrix = nullptr;          ///< A, M × N row-major
  const double* observations = nullptr;    ///< x̄, M entries
  const double* pseudo_inverse = nullptr;  ///< P = Aᵀ(A Aᵀ)⁻¹, N × M row-major
  int num_outputs = 0;                     ///< M
  int num_inputs = 0;                      ///< N > M

  /// A view of caller-owned arrays (host or device pointers); checks sizes and pointers only.
  static LinearGaussian make(const double* matrix, const double* observations,
                             const double* pseudo_inverse, int num_outputs, int num_inputs) {
    MYRIAD_EXPECTS(num_outputs >= 1, "linear_gaussian: num_outputs must be >= 1, got ",
                   num_outputs);
    MYRIAD_EXPECTS(num_inputs > num_outputs, "linear_gaussian: num_inputs must exceed ",
                   "num_outputs = ", num_outputs, ", got ", num_inputs);
    MYRIAD_EXPECTS(matrix != nullptr && observations != nullptr && pseudo_inverse != nullptr,
                   "linear_gaussian: matrix, observations and pseudo_inverse must not be null");
    // {} initialises the empty StandardNormalPrior base.
    return LinearGaussian{{}, matrix, observations, pseudo_inverse, num_outputs, num_inputs};
  }

  MYRIAD_HD int input_dim() const { return num_inputs; }
  MYRIAD_HD int output_dim() const { return num_outputs; }
  MYRIAD_HD value_type observed(int m) const { return observations[m]; }

  /// A(m, n).
  MYRIAD_HD double a(int m, int n) const {
    return matrix[static_cast<std::int64_t>(m) * num_inputs + n];
  }

  /// x_m = Σ_n A_mn u_n.
  template <class Vec, class Out>
  MYRIAD_HD void generate(const Vec& u, Out& x) const {
    using S = std::decay_t<decltype(u[0])>;
    for (int m = 0; m < num_outputs; ++m) {
      S sum = S(0);
      for (int n = 0; n < num_inputs; ++n) sum += S(a(m, n)) * u[n];
      x[m] = sum;
    }
  }

  /// J = A (constant).
  template <class Vec, class Jac>
  MYRIAD_HD void jacobian(const Vec& u, Jac& J) const {
    using S = std::decay_t<decltype(u[0])>;
    for (int m = 0; m < num_outputs; ++m)
      for (int n = 0; n < num_inputs; ++n) J(m, n) = S(a(m, n));
  }

  /// grad += Σ_mn C_mn ∂J_mn/∂u = 0: J = A is constant, so ½ log|A Aᵀ| has no gradient
  /// (constrained-hmc.md §8). Declared so that the library does not form ∂J/∂u_i on duals,
  /// N passes of an M × N Jacobian, only to add zeros.
  template <class Vec, class Jac, class Cot, class Grad, class Work>
  MYRIAD_HD void add_jacobian_vjp(const Vec& /*u*/, const Jac& /*J*/, const Cot& /*C*/,
                                  Grad& /*grad*/, Work& /*work*/) const {}

  /// u ~ N(0, I): normals 0 … N−1 of (iteration, purpose), the numbers the library's default
  /// prior sampler (sample_generator_prior) draws, which the ABC baselines use.
  template <class Out>
  MYRIAD_HD void draw_prior(const RandomStream& rng, std::uint32_t iteration, Purpose purpose,
                            Out& u) const {
    rng.fill_normal<double>(iteration, purpose, u, num_inputs);
  }

  /// The exact projection of the prior draw v of draw_prior(attempt, Purpose::initial_point)
  /// onto the fibre, u = v − P(A v − x̄) (the
  /// quasi-Newton step of constrained-hmc.md §4, exact for a linear generator), applied twice:
  /// the second sweep is one step of iterative refinement against the rounding of an
  /// ill-conditioned A Aᵀ. False if ‖A u − x̄‖∞ is not below 1e-10 (or not finite).
  template <class Out>
  MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt, Out& u) const {
    draw_prior(rng, attempt, Purpose::initial_point, u);
    project_once(u);
    project_once(u);
    double residual = 0;
    for (int m = 0; m < num_outputs; ++m) {
      double r = -observations[m];
      for (int n = 0; n < num_inputs; ++n) r += a(m, n) * u[n];
      if (!myriad::isfinite(r)) return false;
      residual = residual > myriad::fabs(r) ? residual : myriad::fabs(r);
    }
    return residual < 1e-10;
  }

  /// Recorded quantities: u itself, named u[0], …, u[N−1].
  MYRIAD_HD int num_quantities() const { return num_inputs; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& u, Out& out) const {
    for (int n = 0; n < num_inputs; ++n) out[n] = u[n];
  }
  std::string quantity_name(int i) const { return "u[" + std::to_string(i) + "]"; }

  /// Backends the library instantiates (CUDA, and the CPU's lanes): model/library_instances.hpp.
  static constexpr unsigned library_backends =
      library_backend::chmc | library_backend::cpu_chmc_lanes;

 private:
  // u ← u − P (A u − x̄) row by row without scratch: r_m = (A u)_m − x̄_m at the current u,
  // then u ← u − P e_m r_m. Since A P = I, the update for row m changes row m' ≠ m of A u by
  // (A P)_{m'm} r_m = 0, so in exact arithmetic the sweep equals the simultaneous projection.
  template <class Out>
  MYRIAD_HD void project_once(Out& u) const {
    for (int m = 0; m < num_outputs; ++m) {
      double r = -observations[m];
      for (int n = 0; n < num_inputs; ++n) r += a(m, n) * u[n];
      for (int n = 0; n < num_inputs; ++n)
        u[n] = u[n] - pseudo_inverse[static_cast<std::int64_t>(n) * num_outputs + m] * r;
    }
  }
};

/// Owning host container of a linear-Gaussian problem: A (M × N), x̄ = A u*, and the
/// precomputed P = Aᵀ(A Aᵀ)⁻¹ with an optional device copy uploaded on the first call to
/// device_model(). Movable, not copyable (it may own device memory).
class LinearGaussianProblem : public MirroredViews<LinearGaussianProblem> {
 public:
  /// Purpose tags of the synthetic-data streams: rows of A and u*.
  static constexpr std::uint32_t kMatrixPurpose = user_purpose(0);
  static constexpr std::uint32_t kTruthPurpose = user_purpose(1);

  /// Synthetic problem: row m of A is N normals of RandomStream(seed, m) (tag user + 0,
  /// iteration 0) divided by √N, so A_mn ~ N(0, 1/N); u* is N normals of RandomStream(seed, 0)
  /// (tag user + 1); x̄ = A u*. Throws myriad::invalid_argument for M < 1, N ≤ M, or an A A ᵀ
  /// that is numerically singular (probability zero).
  static LinearGaussianProblem make(int num_outputs, int num_inputs, std::uint64_t seed) {
    MYRIAD_EXPECTS(num_inputs >= 1, "linear_gaussian: num_inputs must be >= 1, got ", num_inputs);
    std::vector<double> truth(static_cast<std::size_t>(num_inputs));
    DenseVector<double> view{truth.data(), num_inputs};
    RandomStream(seed, 0).fill_normal<double>(0, static_cast<Purpose>(kTruthPurpose), view,
                                              num_inputs);
    return make(num_outputs, num_inputs, seed, std::move(truth));
  }

  /// Simulation-based calibration (run/sbc.hpp): A from `matrix_seed` as in make(), a draw
  /// u* ~ N(0, I_N) from the prior by RandomStream(seed, replication) (tag user + 1) and the data
  /// x̄ = A u* it generates. The problem's true_inputs() is the draw.
  static LinearGaussianProblem simulate(int num_outputs, int num_inputs, std::uint64_t matrix_seed,
                                        std::uint64_t seed, std::int64_t replication) {
    MYRIAD_EXPECTS(num_inputs >= 1, "linear_gaussian: num_inputs must be >= 1, got ", num_inputs);
    std::vector<double> truth(static_cast<std::size_t>(num_inputs));
    DenseVector<double> view{truth.data(), num_inputs};
    RandomStream(seed, static_cast<std::uint64_t>(replication))
        .fill_normal<double>(0, static_cast<Purpose>(kTruthPurpose), view, num_inputs);
    return make(num_outputs, num_inputs, matrix_seed, std::move(truth));
  }

  /// A from `seed` (row m: N normals of RandomStream(seed, m), tag user + 0, divided by √N) and
  /// the data x̄ = A u* of the given inputs u*.
  static LinearGaussianProblem make(int num_outputs, int num_inputs, std::uint64_t seed,
                                    std::vector<double> true_inputs) {
    MYRIAD_EXPECTS(num_outputs >= 1, "linear_gaussian: num_outputs must be >= 1, got ",
                   num_outputs);
    MYRIAD_EXPECTS(num_inputs > num_outputs, "linear_gaussian: num_inputs must exceed ",
                   "num_outputs = ", num_outputs, ", got ", num_inputs);
    MYRIAD_EXPECTS(true_inputs.size() == static_cast<std::size_t>(num_inputs),
                   "linear_gaussian: ", true_inputs.size(),
                   " true inputs, expected N = ", num_inputs);
    const int M = num_outputs, N = num_inputs;
    LinearGaussianProblem p;
    p.num_outputs_ = M;
    p.num_inputs_ = N;
    std::vector<double> matrix(static_cast<std::size_t>(M) * N);
    const double scale = 1.0 / std::sqrt(static_cast<double>(N));
    for (int m = 0; m < M; ++m) {
      DenseVector<double> row{matrix.data() + static_cast<std::size_t>(m) * N, N};
      RandomStream(seed, static_cast<std::uint64_t>(m))
          .fill_normal<double>(0, static_cast<Purpose>(kMatrixPurpose), row, N);
      for (int n = 0; n < N; ++n) row[n] *= scale;
    }
    p.matrix_ = std::move(matrix);
    p.true_inputs_ = std::move(true_inputs);
    std::vector<double> observations(static_cast<std::size_t>(M), 0.0);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) observations[m] += p.a(m, n) * p.true_inputs_[n];
    p.observations_ = std::move(observations);

    // G = A Aᵀ = L Lᵀ; Y = G⁻¹ A by two triangular solves per column; P = Yᵀ.
    std::vector<double> gram(static_cast<std::size_t>(M) * M, 0.0);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j <= i; ++j) {
        double s = 0;
        for (int n = 0; n < N; ++n) s += p.a(i, n) * p.a(j, n);
        gram[i * M + j] = gram[j * M + i] = s;
      }
    // A pivot l_jj² below 1e-13 of the largest diagonal entry of G means A is rank deficient
    // to rounding, even where the factorisation itself would go through.
    double max_diag = 0;
    for (int i = 0; i < M; ++i) max_diag = std::fmax(max_diag, gram[i * M + i]);
    const MatrixView<double> factor = dense_matrix(gram.data(), M, M);
    bool regular = linalg::cholesky_in_place(factor);
    for (int i = 0; i < M && regular; ++i) regular = factor(i, i) * factor(i, i) > 1e-13 * max_diag;
    MYRIAD_EXPECTS(regular, "linear_gaussian: A Aᵀ is numerically singular for seed ", seed);
    std::vector<double> pseudo_inverse(static_cast<std::size_t>(N) * M, 0.0);
    for (int n = 0; n < N; ++n) {
      DenseVector<double> y{pseudo_inverse.data() + static_cast<std::size_t>(n) * M, M};
      for (int i = 0; i < M; ++i) y[i] = p.a(i, n);
      linalg::cholesky_solve(factor.as_const(), y);
    }
    p.pseudo_inverse_ = std::move(pseudo_inverse);
    return p;
  }

  int num_outputs() const { return num_outputs_; }
  int num_inputs() const { return num_inputs_; }
  /// A, row-major M × N.
  const std::vector<double>& matrix() const { return matrix_.host(); }
  /// x̄ = A u*.
  const std::vector<double>& observations() const { return observations_.host(); }
  /// P = Aᵀ(A Aᵀ)⁻¹, row-major N × M.
  const std::vector<double>& pseudo_inverse() const { return pseudo_inverse_.host(); }
  /// u*, the input the data were generated from.
  const std::vector<double>& true_inputs() const { return true_inputs_; }

  /// Mean of u given A u = x̄: P x̄ (N entries).
  std::vector<double> exact_mean() const {
    std::vector<double> mean(static_cast<std::size_t>(num_inputs_), 0.0);
    for (int n = 0; n < num_inputs_; ++n)
      for (int m = 0; m < num_outputs_; ++m)
        mean[n] +=
            pseudo_inverse_[static_cast<std::size_t>(n) * num_outputs_ + m] * observations_[m];
    return mean;
  }

  /// Covariance of u given A u = x̄: I − P A (N × N, row-major; rank N − M).
  std::vector<double> exact_covariance() const {
    const int N = num_inputs_, M = num_outputs_;
    std::vector<double> cov(static_cast<std::size_t>(N) * N, 0.0);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        double s = i == j ? 1.0 : 0.0;
        for (int m = 0; m < M; ++m)
          s -= pseudo_inverse_[static_cast<std::size_t>(i) * M + m] * a(m, j);
        cov[static_cast<std::size_t>(i) * N + j] = s;
      }
    return cov;
  }

  /// The model viewing copy(array) of each array (MirroredViews: host_model, device_model).
  template <class Copy>
  LinearGaussian viewing(Copy copy) const {
    return LinearGaussian::make(copy(matrix_), copy(observations_), copy(pseudo_inverse_),
                                num_outputs_, num_inputs_);
  }

 private:
  LinearGaussianProblem() = default;
  double a(int m, int n) const { return matrix_[static_cast<std::size_t>(m) * num_inputs_ + n]; }

  int num_outputs_ = 0;
  int num_inputs_ = 0;
  MirroredArray<double> matrix_, observations_, pseudo_inverse_;
  std::vector<double> true_inputs_;
};

}  // namespace myriad::models
