#pragma once
// `lotka_volterra`: the stochastic Lotka–Volterra predator–prey model of Graham & Storkey 2017
// (journal §10.2), exactly as constrained-hmc.md §15.2.
//
// SDEs dr = (z₁r − z₂rf)dt + dn_r, df = (z₄rf − z₃f)dt + dn_f, discretised by Euler–Maruyama
// over s = 1 … S (S = 50, δt = 1, σ_r = σ_f = 1, r₀ = f₀ = 100):
//   r_s = r_{s−1} + δt (z₁ r_{s−1} − z₂ r_{s−1} f_{s−1}) + √δt σ_r u^(r)_s,
//   f_s = f_{s−1} + δt (z₄ r_{s−1} f_{s−1} − z₃ f_{s−1}) + √δt σ_f u^(f)_s.
// Inputs u = (u₁ ∈ ℝ⁴, u₂ ∈ ℝ^{2S}), all N(0, 1) a priori; z = exp(s u₁ + m) with m = −2,
// s = 1, i.e. z_i ~ LogNormal(−2, 1). u₂ is interleaved, u₂ = (u^(r)_1, u^(f)_1, u^(r)_2, …),
// like the output x = (r₁, f₁, …, r_S, f_S), so that T = ∂x/∂u₂ is lower triangular with
// diagonal √δt σ (§15.2, erratum 10 of §16). N = 2S + 4 = 104, M = 2S = 100, K = 4.
//
// LotkaVolterra conditions on every observation (gram_structure = triangular_plus_low_rank,
// §10.2). LotkaVolterraSummaries conditions on 9 summary statistics of the same data (§15.2,
// §10.3: dense Gram; models/lotka_volterra_summaries.hpp). LotkaVolterraProblem simulates the
// data once at the paper's z = (0.4, 0.005, 0.05, 0.001) and owns it (host and device copies;
// models/lotka_volterra_problem.hpp). The simulator both share: models/lotka_volterra_dynamics.hpp.
// Quantities of both generators: z[0] … z[3] = z₁ … z₄.

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/dual.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/lanes.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/library_instances.hpp"
#include "myriad/models/lotka_volterra_dynamics.hpp"

namespace myriad::models {

/// The full-data Lotka–Volterra generator: x = (r₁, f₁, …, r_S, f_S), viewing caller-owned
/// observations. J = [B  T] with T lower triangular, diagonal √δt σ (§10.2).
struct LotkaVolterra : LotkaVolterraGeneratorBase<LotkaVolterra> {
  using value_type = double;
  static constexpr GramStructure gram_structure = GramStructure::triangular_plus_low_rank;
  static constexpr int kNumParameters = LotkaVolterraDynamics::kNumParameters;

  LotkaVolterraDynamics dynamics;
  const double* observations = nullptr;  ///< x̄ = (r̄₁, f̄₁, …, r̄_S, f̄_S)

  /// A view of caller-owned observations (host or device pointer, 2S entries).
  static LotkaVolterra make(const double* observations, const LotkaVolterraSettings& settings) {
    LotkaVolterra g;
    g.dynamics = LotkaVolterraDynamics::make(settings, "lotka_volterra");
    MYRIAD_EXPECTS(observations != nullptr, "lotka_volterra: observations must not be null");
    g.observations = observations;
    return g;
  }

  MYRIAD_HD int input_dim() const { return dynamics.num_inputs(); }
  MYRIAD_HD int output_dim() const { return 2 * dynamics.num_steps; }
  MYRIAD_HD value_type observed(int m) const { return observations[m]; }
  MYRIAD_HD int num_parameters() const { return kNumParameters; }

  /// x_{2s} = r_{s+1}, x_{2s+1} = f_{s+1}.
  template <class Vec, class Out>
  MYRIAD_HD void generate(const Vec& u, Out& x) const {
    detail::SeriesWriter<Out> writer{x};
    dynamics.simulate(u, writer);
  }

  /// Dense J = [B  T], all M × N entries (zeros above T's diagonal included).
  template <class Vec, class Jac>
  MYRIAD_HD void jacobian(const Vec& u, Jac& J) const {
    detail::JacobianColumns<Jac> params{J, 0};
    detail::JacobianColumns<Jac> noise{J, kNumParameters};
    blocks(u, params, noise, true);
  }

  /// B(m, k) = ∂x_m/∂u₁[k] (M × 4) and T(m, j) = ∂x_m/∂u₂[j] for j ≤ m (entries above the
  /// diagonal are neither read nor written). Forward sensitivities, one Euler step at a time:
  /// rows 2s, 2s+1 follow from rows 2s−2, 2s−1 by the tangent of the drift step (plus ∂z
  /// terms for B), and T(2s, 2s) = √δt σ_r, T(2s+1, 2s) = 0, T(2s+1, 2s+1) = √δt σ_f. O(M²).
  template <class Vec, class Params, class Noise>
  MYRIAD_HD void structured_jacobian(const Vec& u, Params& B, Noise& T) const {
    blocks(u, B, T, false);
  }

  /// grad_i += Σ_mn C(m, n) ∂J_mn/∂u_i, the log-determinant gradient's vector–Jacobian product
  /// (model/generator.hpp): J = Y is the series Jacobian itself, so this is the reverse sweep of
  /// LotkaVolterraDynamics (add_tangent_adjoint for every column of J with C's column as its
  /// cotangent, then add_series_vjp), O(SK + S²) = O(MN) against the O(N M²) of N dual passes
  /// of structured_jacobian. J as structured_jacobian or jacobian wrote it at u; of J and C only
  /// B and T's lower triangle are read. `work`: jacobian_vjp_workspace() elements.
  template <class Vec, class Jac, class Cot, class Grad, class Work>
  MYRIAD_HD void add_jacobian_vjp(const Vec& u, const Jac& J, const Cot& C, Grad& grad,
                                  Work& work) const {
    using V = element_t<Vec>;
    const int S = dynamics.num_steps;
    detail::WorkRange<Work> states{work, 0}, series_bar{work, 2 * S + 2};
    dynamics.record_states(u, states);
    for (int q = 0; q < 2 * S; ++q) series_bar[q] = V(0);
    V z[kNumParameters], z_bar[kNumParameters];
    for (V& x : z_bar) x = V(0);
    dynamics.parameters(u, z);
    for (int n = 0; n < input_dim(); ++n)
      dynamics.add_tangent_adjoint(n, states, z, detail::MatrixColumn<Jac>{J, n},
                                   detail::MatrixColumn<Cot>{C, n}, series_bar, z_bar);
    dynamics.add_series_vjp(u, states, series_bar, z_bar, grad);
  }
  /// The states y_0 … y_S and the series cotangent: 4S + 2 elements.
  MYRIAD_HD int jacobian_vjp_workspace() const { return 4 * dynamics.num_steps + 2; }

  /// A point on the manifold near the posterior ([derived]). Prior draws of u₁ make the
  /// dynamics explode along the observed series (z₂ r f ≈ 10³ per step), leaving the chain at a
  /// point whose Jacobian entries reach 1e31 and whose gradients overflow, so it cannot move.
  /// Instead, u₁ is drawn around the gradient-matching estimate ẑ (gradient_matching_inputs):
  /// u₁ = log-scale(ẑ) + 0.1·N(0, I), and u₂ follows by forward substitution so that the
  /// simulator reproduces x̄ exactly (§12.2). Falls back to a prior draw of u₁ if ẑ has a
  /// non-positive component. False if a noise value is not finite.
  template <class Out>
  MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt, Out& u) const {
    rng.fill_normal<double>(attempt, Purpose::initial_point, u, kNumParameters);
    dynamics.centre_parameters(observations, u);
    return dynamics.forward_substitute(observations, u);
  }

  /// Backends the library instantiates (CUDA, and the CPU's lanes): model/library_instances.hpp.
  static constexpr unsigned library_backends =
      library_backend::chmc | library_backend::cpu_chmc_lanes;

 private:
  template <class Vec, class Params, class Noise>
  MYRIAD_HD void blocks(const Vec& u, Params& B, Noise& T, bool dense) const {
    using S = std::decay_t<decltype(u[0])>;
    constexpr int K = kNumParameters;
    const int M = output_dim();
    S z[K], no_dz[K];
    dynamics.parameters(u, z);
    for (int k = 0; k < K; ++k) no_dz[k] = S(0);
    const S scale_r = S(dynamics.noise_scale_r()), scale_f = S(dynamics.noise_scale_f());
    S r = S(dynamics.r0), f = S(dynamics.f0);  // state before step s
    for (int s = 0; s < dynamics.num_steps; ++s) {
      const int row_r = 2 * s, row_f = 2 * s + 1;
      for (int k = 0; k < K; ++k) {
        S dz[K];
        for (int i = 0; i < K; ++i) dz[i] = i == k ? S(dynamics.prior_scale) * z[i] : S(0);
        S dr = s > 0 ? S(B(row_r - 2, k)) : S(0);
        S df = s > 0 ? S(B(row_f - 2, k)) : S(0);
        dynamics.drift_step_tangent(z, dz, r, f, dr, df);
        B(row_r, k) = dr;
        B(row_f, k) = df;
      }
      for (int j = 0; j < row_r; ++j) {
        // T(2s−2, 2s−1) lies above the diagonal and is zero: r_s does not depend on u^(f)_s.
        S dr = j < row_r - 1 ? S(T(row_r - 2, j)) : S(0);
        S df = S(T(row_f - 2, j));
        dynamics.drift_step_tangent(z, no_dz, r, f, dr, df);
        T(row_r, j) = dr;
        T(row_f, j) = df;
      }
      T(row_r, row_r) = scale_r;
      T(row_f, row_r) = S(0);
      T(row_f, row_f) = scale_f;
      if (dense) {
        for (int j = row_f; j < M; ++j) T(row_r, j) = S(0);
        for (int j = row_f + 1; j < M; ++j) T(row_f, j) = S(0);
      }
      S base_r, base_f;
      dynamics.drift_step(z, r, f, base_r, base_f);
      r = base_r + scale_r * u[K + row_r];
      f = base_f + scale_f * u[K + row_f];
    }
  }
};

}  // namespace myriad::models
