#pragma once
// The Euler–Maruyama simulator shared by the Lotka–Volterra generators of Graham & Storkey 2017
// (journal §10.2; constrained-hmc.md §15.2): its settings, the per-chain dynamics with their
// tangent-linear and adjoint sweeps, and the matrix and vector adaptors both generators use.
// The model and its notation: models/lotka_volterra.hpp.

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
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/standard_normal_prior.hpp"

namespace myriad::models {

/// Settings of the Lotka–Volterra simulator; the defaults are the paper's (§15.2).
struct LotkaVolterraSettings {
  int num_steps = 50;        ///< S Euler–Maruyama steps, all observed
  double dt = 1.0;           ///< δt
  double sigma_r = 1.0;      ///< σ_r, prey noise scale
  double sigma_f = 1.0;      ///< σ_f, predator noise scale
  double r0 = 100.0;         ///< initial prey
  double f0 = 100.0;         ///< initial predators
  double prior_mean = -2.0;  ///< m in z = exp(s u₁ + m)
  double prior_scale = 1.0;  ///< s in z = exp(s u₁ + m)
  std::array<double, 4> true_parameters = {0.4, 0.005, 0.05, 0.001};  ///< z of the data

  /// A short, tame series for tests and benchmarks: S = 10 steps from r₀ = f₀ = 1 at
  /// z = (0.3, 0.1, 0.2, 0.1) (M = 20, N = 24), data where prior draws of z keep the simulation
  /// from exploding, so chains started by initialize() move.
  static LotkaVolterraSettings short_series() {
    LotkaVolterraSettings s;
    s.num_steps = 10;
    s.r0 = 1;
    s.f0 = 1;
    s.true_parameters = {0.3, 0.1, 0.2, 0.1};
    return s;
  }
};

namespace detail {
/// Tangent seed of simulate_tangent: the unit vector of input `direction` (column n of Y).
struct UnitTangentSeed {
  int direction;
  template <class S>
  MYRIAD_HD S parameter(int i, const S& scaled_z) const {
    return i == direction ? scaled_z : S(0);
  }
  template <class S>
  MYRIAD_HD S noise(const S& tangent, const S& scale, int input) const {
    return direction == input ? tangent + scale : tangent;
  }
};

/// Tangent seed of simulate_directional: a direction d over all N inputs (Y d).
template <class Direction>
struct DirectionalTangentSeed {
  const Direction& d;
  template <class S>
  MYRIAD_HD S parameter(int i, const S& scaled_z) const {
    return scaled_z * S(d[i]);
  }
  template <class S>
  MYRIAD_HD S noise(const S& tangent, const S& scale, int input) const {
    return tangent + scale * S(d[input]);
  }
};
}  // namespace detail

/// The Euler–Maruyama simulator shared by both Lotka–Volterra generators (§15.2); per-chain.
struct LotkaVolterraDynamics {
  static constexpr int kNumParameters = 4;  ///< K: inputs u₁

  int num_steps = 50;
  double dt = 1.0;
  double sigma_r = 1.0;
  double sigma_f = 1.0;
  double r0 = 100.0;
  double f0 = 100.0;
  double prior_mean = -2.0;
  double prior_scale = 1.0;

  /// Validates the settings; `model` names the generator in messages.
  static LotkaVolterraDynamics make(const LotkaVolterraSettings& s, const char* model) {
    MYRIAD_EXPECTS(s.num_steps >= 3, model, ": num_steps must be >= 3, got ", s.num_steps);
    MYRIAD_EXPECTS(std::isfinite(s.dt) && s.dt > 0, model, ": dt must be positive, got ", s.dt);
    MYRIAD_EXPECTS(std::isfinite(s.sigma_r) && s.sigma_r > 0, model,
                   ": sigma_r must be positive, got ", s.sigma_r);
    MYRIAD_EXPECTS(std::isfinite(s.sigma_f) && s.sigma_f > 0, model,
                   ": sigma_f must be positive, got ", s.sigma_f);
    MYRIAD_EXPECTS(std::isfinite(s.r0), model, ": r0 must be finite, got ", s.r0);
    MYRIAD_EXPECTS(std::isfinite(s.f0), model, ": f0 must be finite, got ", s.f0);
    MYRIAD_EXPECTS(std::isfinite(s.prior_mean), model, ": prior_mean must be finite, got ",
                   s.prior_mean);
    MYRIAD_EXPECTS(std::isfinite(s.prior_scale) && s.prior_scale > 0, model,
                   ": prior_scale must be positive, got ", s.prior_scale);
    for (int i = 0; i < 4; ++i)
      MYRIAD_EXPECTS(std::isfinite(s.true_parameters[i]) && s.true_parameters[i] > 0, model,
                     ": true_parameters[", i, "] must be positive, got ", s.true_parameters[i]);
    return LotkaVolterraDynamics{s.num_steps, s.dt, s.sigma_r,    s.sigma_f,
                                 s.r0,        s.f0, s.prior_mean, s.prior_scale};
  }

  /// The inputs u₁ of the least-squares ("gradient matching") estimate of z from x̄: the drift
  /// is linear in z, so the implied noise of each step,
  ///   Δr_s − δt (z₁ r − z₂ r f),   Δf_s − δt (z₄ r f − z₃ f)   (r, f at step s − 1 of
  /// the series (r₁, f₁, …, r_S, f_S)),
  /// is affine in z, and minimising its sum of squares is two 2 × 2 normal-equation solves.
  /// False if a component of ẑ is not positive (no log-scale input exists).
  MYRIAD_HD bool gradient_matching_inputs(const double* series, double* u1) const {
    double arr = 0, arf = 0, aff = 0, br0 = 0, br1 = 0;  // prey: regressors (r, −r f)
    double cff = 0, cfr = 0, crr = 0, bf0 = 0, bf1 = 0;  // predator: regressors (−f, r f)
    double r = r0, f = f0;
    for (int s = 0; s < num_steps; ++s) {
      const double next_r = series[2 * s], next_f = series[2 * s + 1];
      const double dr = (next_r - r) / dt, df = (next_f - f) / dt;
      const double a0 = r, a1 = -r * f;  // dr ≈ z₁ a0 + z₂ a1
      arr += a0 * a0;
      arf += a0 * a1;
      aff += a1 * a1;
      br0 += a0 * dr;
      br1 += a1 * dr;
      const double c0 = -f, c1 = r * f;  // df ≈ z₃ c0 + z₄ c1
      cff += c0 * c0;
      cfr += c0 * c1;
      crr += c1 * c1;
      bf0 += c0 * df;
      bf1 += c1 * df;
      r = next_r;
      f = next_f;
    }
    const double det_r = arr * aff - arf * arf, det_f = cff * crr - cfr * cfr;
    if (!(det_r > 0) || !(det_f > 0)) return false;
    const double z[kNumParameters] = {
        (aff * br0 - arf * br1) / det_r, (arr * br1 - arf * br0) / det_r,
        (crr * bf0 - cfr * bf1) / det_f, (cff * bf1 - cfr * bf0) / det_f};
    for (int i = 0; i < kNumParameters; ++i) {
      if (!(z[i] > 0)) return false;
      u1[i] = (myriad::log(z[i]) - prior_mean) / prior_scale;
    }
    return true;
  }

  /// u₁ ← inputs of the gradient-matching estimate + 0.1 u₁, where u₁ holds standard-normal
  /// jitter on entry (the initial points of both Lotka–Volterra generators). Unchanged — a prior
  /// draw — if the estimate has a non-positive component.
  template <class Out>
  MYRIAD_HD void centre_parameters(const double* series, Out& u) const {
    double centre[kNumParameters];
    if (!gradient_matching_inputs(series, centre)) return;
    for (int i = 0; i < kNumParameters; ++i) u[i] = centre[i] + 0.1 * u[i];
  }

  MYRIAD_HD int num_inputs() const { return kNumParameters + 2 * num_steps; }
  /// √δt σ_r and √δt σ_f: the diagonal of T.
  MYRIAD_HD double noise_scale_r() const { return myriad::sqrt(dt) * sigma_r; }
  MYRIAD_HD double noise_scale_f() const { return myriad::sqrt(dt) * sigma_f; }

  /// z_i = exp(s u₁[i] + m).
  template <class Vec, class Z>
  MYRIAD_HD void parameters(const Vec& u, Z& z) const {
    using S = std::decay_t<decltype(u[0])>;
    for (int i = 0; i < kNumParameters; ++i) z[i] = exp(S(prior_scale) * u[i] + S(prior_mean));
  }

  /// The deterministic part of one Euler–Maruyama step:
  ///   r' = r + δt (z₁ r − z₂ r f),   f' = f + δt (z₄ r f − z₃ f).
  template <class S>
  MYRIAD_HD void drift_step(const S* z, const S& r, const S& f, S& next_r, S& next_f) const {
    next_r = r + S(dt) * (z[0] * r - z[1] * r * f);
    next_f = f + S(dt) * (z[3] * r * f - z[2] * f);
  }

  /// Tangent of drift_step: (dr, df) ← d(r', f') given tangents dr, df of the state and dz of
  /// the parameters. Written in the operation order of drift_step, term by term:
  ///   dr' = dr + δt ((dz₁ r + z₁ dr) − ((dz₂ r + z₂ dr) f + z₂ r df)),
  ///   df' = df + δt (((dz₄ r + z₄ dr) f + z₄ r df) − (dz₃ f + z₃ df)).
  template <class S>
  MYRIAD_HD void drift_step_tangent(const S* z, const S* dz, const S& r, const S& f, S& dr,
                                    S& df) const {
    const S dr_in = dr, df_in = df;
    dr = dr_in +
         S(dt) * ((dz[0] * r + z[0] * dr_in) - ((dz[1] * r + z[1] * dr_in) * f + z[1] * r * df_in));
    df = df_in +
         S(dt) * (((dz[3] * r + z[3] * dr_in) * f + z[3] * r * df_in) - (dz[2] * f + z[2] * df_in));
  }

  /// Runs the simulator at u and calls visit(s, r_s, f_s) for s = 0 … S−1 (0-based).
  template <class Vec, class Visitor>
  MYRIAD_HD void simulate(const Vec& u, Visitor& visit) const {
    using S = std::decay_t<decltype(u[0])>;
    S z[kNumParameters];
    parameters(u, z);
    const S scale_r = S(noise_scale_r()), scale_f = S(noise_scale_f());
    S r = S(r0), f = S(f0);
    for (int s = 0; s < num_steps; ++s) {
      S base_r, base_f;
      drift_step(z, r, f, base_r, base_f);
      r = base_r + scale_r * u[kNumParameters + 2 * s];
      f = base_f + scale_f * u[kNumParameters + 2 * s + 1];
      visit(s, r, f);
    }
  }

  /// Runs the simulator at u with the tangent along input `direction` and calls
  /// visit(s, r_s, f_s, dr_s, df_s): the forward sensitivity (tangent-linear) model.
  template <class Vec, class Visitor>
  MYRIAD_HD void simulate_tangent(const Vec& u, int direction, Visitor& visit) const {
    simulate_linearised(u, detail::UnitTangentSeed{direction}, visit);
  }

  /// Runs the simulator at u with the tangent along a direction d (N entries, d[n]) and calls
  /// visit(s, r_s, f_s, dr_s, df_s): column Y d of the series Jacobian, one step at a time.
  template <class Vec, class Direction, class Visitor>
  MYRIAD_HD void simulate_directional(const Vec& u, const Direction& d, Visitor& visit) const {
    simulate_linearised(u, detail::DirectionalTangentSeed<Direction>{d}, visit);
  }

  /// The tangent-linear simulator both of the above run; `seed` says how the direction enters:
  /// seed.parameter(i, s z_i) is dz_i (given dz_i/du₁[i] = s z_i), and
  /// seed.noise(tangent, scale, n) adds noise input n's share, scale · d_n, to a state tangent.
  template <class Vec, class Seed, class Visitor>
  MYRIAD_HD void simulate_linearised(const Vec& u, const Seed& seed, Visitor& visit) const {
    using S = std::decay_t<decltype(u[0])>;
    S z[kNumParameters], dz[kNumParameters];
    parameters(u, z);
    for (int i = 0; i < kNumParameters; ++i) dz[i] = seed.parameter(i, S(prior_scale) * z[i]);
    const S scale_r = S(noise_scale_r()), scale_f = S(noise_scale_f());
    S r = S(r0), f = S(f0), dr = S(0), df = S(0);
    for (int s = 0; s < num_steps; ++s) {
      S base_r, base_f;
      drift_step(z, r, f, base_r, base_f);
      drift_step_tangent(z, dz, r, f, dr, df);
      const int input_r = kNumParameters + 2 * s;
      r = base_r + scale_r * u[input_r];
      f = base_f + scale_f * u[input_r + 1];
      dr = seed.noise(dr, scale_r, input_r);
      df = seed.noise(df, scale_f, input_r + 1);
      visit(s, r, f, dr, df);
    }
  }

  // The log-determinant gradient of both generators is a vector–Jacobian product with the series
  // Jacobian Y = ∂y/∂u of y = (r₁, f₁, …, r_S, f_S) inside (constrained-hmc.md §8, "VJP form"):
  // grad_i += Σ_{q,n} C̃_qn ∂Y_qn/∂u_i for a cotangent C̃ (2S × N), by reverse mode of the
  // tangent-linear simulator ([derived]). Column n of Y follows
  //   ẏⁿ_{s+1} = A_s ẏⁿ_s + F_z(y_s) żⁿ + D e_{n,s},   ẏⁿ_0 = 0,
  // with y_s = (r_s, f_s) the state before step s = 0 … S−1 (rows 2s, 2s+1 of Y hold ẏ_{s+1}),
  // A_s = ∂F/∂y (y_s, z) the drift step's Jacobian, F_z = ∂F/∂z, żⁿ = s_u z_n e_n for a
  // parameter input (s_u = prior_scale), D = diag(√δt σ_r, √δt σ_f) and e_{n,s} the unit vector
  // of noise input n if it belongs to step s. With cⁿ_s = (C̃_{2s,n}, C̃_{2s+1,n}) and
  // Φⁿ(u) = Σ_s cⁿ_s · ẏⁿ_{s+1}, the adjoints of the tangents
  //   μⁿ_{s+1} = cⁿ_s + A_{s+1}ᵀ μⁿ_{s+2}       (μⁿ_{S+1} = 0)
  // give dΦⁿ = Σ_s μⁿ_{s+1} · (dA_s ẏⁿ_s + d(F_z(y_s) żⁿ)): explicit partials w.r.t. the states
  // y_s and z (A and F_z are bilinear in r, f and linear in z), which add_tangent_adjoint
  // accumulates column by column. The simulator's own reverse sweep (add_series_vjp) then
  // carries every cotangent on the states to u:
  //   ȳ_s = w_s + A_sᵀ ȳ_{s+1} (ȳ_S = w_S),   ∂/∂u₂ (step s) = D ȳ_{s+1},
  //   z̄ += Σ_s F_z(y_s)ᵀ ȳ_{s+1},              ∂/∂u₁[k] = s_u z_k z̄_k.
  // ẏⁿ_s = 0 for the noise inputs of steps ≥ s, so column n of a noise input of step t needs
  // steps t+1 … S−1 only: Σ_n (steps) = SK + S(S−1), O(MN) in all, one evaluation of Y's order,
  // where N dual passes of the Jacobian cost N times that.

  /// states[2s], states[2s+1] = y_s = (r_s, f_s) for s = 0 … S (2S + 2 entries) at u.
  template <class Vec, class States>
  MYRIAD_HD void record_states(const Vec& u, States& states) const {
    using V = element_t<Vec>;
    V z[kNumParameters];
    parameters(u, z);
    const V scale_r = V(noise_scale_r()), scale_f = V(noise_scale_f());
    V r = V(r0), f = V(f0);
    states[0] = r;
    states[1] = f;
    for (int s = 0; s < num_steps; ++s) {
      V base_r, base_f;
      drift_step(z, r, f, base_r, base_f);
      r = base_r + scale_r * u[kNumParameters + 2 * s];
      f = base_f + scale_f * u[kNumParameters + 2 * s + 1];
      states[2 * s + 2] = r;
      states[2 * s + 3] = f;
    }
  }

  /// For input n, adds the explicit partials of Φⁿ = Σ_s cⁿ_s · ẏⁿ_{s+1} (see above) w.r.t. the
  /// states y_1 … y_{S−1} into series_bar (at their rows of the series, 2s − 2 and 2s − 1 for
  /// y_s) and w.r.t. z into z_bar[0 … 3]. tangent(q) = Y_qn and cotangent(q) = C̃_qn for rows
  /// q = 0 … 2S−1; the rows of a noise column above T's diagonal (q < n − K) are not read.
  /// `states` from record_states, z = parameters(u). All in the states' element type V (one
  /// chain's double, or a SIMD batch of chains: every branch here is on indices).
  template <class States, class V, class Tangent, class Cotangent, class SeriesBar>
  MYRIAD_HD void add_tangent_adjoint(int n, const States& states, const V* z,
                                     const Tangent& tangent, const Cotangent& cotangent,
                                     SeriesBar& series_bar, V* z_bar) const {
    constexpr int K = kNumParameters;
    const int S = num_steps;
    const V h = V(dt), su = V(prior_scale);
    const bool parameter = n < K;
    const int first_row = parameter ? 0 : n - K;  // rows above are zero
    const int first_step = parameter ? 0 : first_row / 2 + 1;
    V mu_r = V(0), mu_f = V(0);                     // μⁿ_{s+1}
    V a_next[2][2] = {{V(0), V(0)}, {V(0), V(0)}};  // A_{s+1}
    for (int s = S - 1; s >= first_step; --s) {
      const V r = states[2 * s], f = states[2 * s + 1];
      const V next_r = mu_r, next_f = mu_f;
      mu_r = cotangent(2 * s) + a_next[0][0] * next_r + a_next[1][0] * next_f;
      mu_f = cotangent(2 * s + 1) + a_next[0][1] * next_r + a_next[1][1] * next_f;
      V w_r = V(0), w_f = V(0);  // ∂Φⁿ/∂y_s
      if (s > 0) {
        // The A_s ẏⁿ_s terms, ẏ = (ṙ, ḟ): ∂(A_s ẏ)/∂r = (−δt z₁ ḟ, δt z₃ ḟ), ∂(A_s ẏ)/∂f =
        // (−δt z₁ ṙ, δt z₃ ṙ), and ∂/∂z = δt ṙ, −δt(f ṙ + r ḟ), −δt ḟ, δt(f ṙ + r ḟ).
        const V dr = 2 * s - 2 >= first_row ? V(tangent(2 * s - 2)) : V(0);
        const V df = V(tangent(2 * s - 1));
        w_r += h * (z[3] * mu_f - z[1] * mu_r) * df;
        w_f += h * (z[3] * mu_f - z[1] * mu_r) * dr;
        z_bar[0] += h * mu_r * dr;
        z_bar[1] -= h * mu_r * (f * dr + r * df);
        z_bar[2] -= h * mu_f * df;
        z_bar[3] += h * mu_f * (f * dr + r * df);
      }
      if (parameter) {
        // μ · F_z(y_s) żⁿ, żⁿ = s_u z_n e_n: differentiated in y_s and, ∂ż_n/∂z_n = s_u, in z_n.
        const V dz = su * z[n];
        switch (n) {
          case 0:  // δt μ_r ż₀ r
            w_r += h * mu_r * dz;
            z_bar[0] += h * mu_r * r * su;
            break;
          case 1:  // −δt μ_r ż₁ r f
            w_r -= h * mu_r * dz * f;
            w_f -= h * mu_r * dz * r;
            z_bar[1] -= h * mu_r * r * f * su;
            break;
          case 2:  // −δt μ_f ż₂ f
            w_f -= h * mu_f * dz;
            z_bar[2] -= h * mu_f * f * su;
            break;
          default:  // δt μ_f ż₃ r f
            w_r += h * mu_f * dz * f;
            w_f += h * mu_f * dz * r;
            z_bar[3] += h * mu_f * r * f * su;
            break;
        }
      }
      if (s > 0) {  // y_0 is a constant
        series_bar[2 * s - 2] += w_r;
        series_bar[2 * s - 1] += w_f;
      }
      a_next[0][0] = V(1) + h * (z[0] - z[1] * f);
      a_next[0][1] = -h * z[1] * r;
      a_next[1][0] = h * z[3] * f;
      a_next[1][1] = V(1) + h * (z[3] * r - z[2]);
    }
  }

  /// grad += the vector–Jacobian product of u ↦ y(u) with cotangent series_bar (2S, on the
  /// rows of the series) plus, through z, z_bar: the simulator's reverse sweep (see above).
  template <class Vec, class States, class SeriesBar, class V, class Grad>
  MYRIAD_HD void add_series_vjp(const Vec& u, const States& states, const SeriesBar& series_bar,
                                V* z_bar, Grad& grad) const {
    constexpr int K = kNumParameters;
    const int S = num_steps;
    const V h = V(dt);
    V z[K];
    parameters(u, z);
    const V scale_r = V(noise_scale_r()), scale_f = V(noise_scale_f());
    V y_bar_r = series_bar[2 * S - 2], y_bar_f = series_bar[2 * S - 1];  // ȳ_S
    for (int s = S - 1; s >= 0; --s) {
      // ȳ_{s+1} is known.
      const V r = states[2 * s], f = states[2 * s + 1];
      grad[K + 2 * s] += scale_r * y_bar_r;
      grad[K + 2 * s + 1] += scale_f * y_bar_f;
      z_bar[0] += h * r * y_bar_r;
      z_bar[1] -= h * r * f * y_bar_r;
      z_bar[2] -= h * f * y_bar_f;
      z_bar[3] += h * r * f * y_bar_f;
      if (s > 0) {
        const V a00 = V(1) + h * (z[0] - z[1] * f), a01 = -h * z[1] * r;
        const V a10 = h * z[3] * f, a11 = V(1) + h * (z[3] * r - z[2]);
        const V prev_r = series_bar[2 * s - 2] + a00 * y_bar_r + a10 * y_bar_f;
        const V prev_f = series_bar[2 * s - 1] + a01 * y_bar_r + a11 * y_bar_f;
        y_bar_r = prev_r;
        y_bar_f = prev_f;
      }
    }
    for (int k = 0; k < K; ++k) grad[k] += V(prior_scale) * z[k] * z_bar[k];
  }

  /// With u₁ fixed, the u₂ that makes the simulator reproduce `series` (interleaved r, f):
  /// each Euler step is affine in its own noise (§12.2), u^(r)_s = (r̄_s − r'_s)/(√δt σ_r) with
  /// r'_s the drift step from the state the simulator itself computes (r_{s−1} + √δt σ u), so
  /// rounding does not propagate through the dynamics. False if a value is not finite.
  template <class Out>
  MYRIAD_HD bool forward_substitute(const double* series, Out& u) const {
    double z[kNumParameters];
    parameters(u, z);
    const double scale_r = noise_scale_r(), scale_f = noise_scale_f();
    double r = r0, f = f0;
    for (int s = 0; s < num_steps; ++s) {
      double base_r, base_f;
      drift_step(z, r, f, base_r, base_f);
      const double noise_r = (series[2 * s] - base_r) / scale_r;
      const double noise_f = (series[2 * s + 1] - base_f) / scale_f;
      if (!myriad::isfinite(noise_r) || !myriad::isfinite(noise_f)) return false;
      u[kNumParameters + 2 * s] = noise_r;
      u[kNumParameters + 2 * s + 1] = noise_f;
      r = base_r + scale_r * noise_r;  // the simulator's own expression (see simulate)
      f = base_f + scale_f * noise_f;
    }
    return true;
  }
};

/// What both Lotka–Volterra generators (models/lotka_volterra.hpp, lotka_volterra_summaries.hpp)
/// share besides their `dynamics` member: the standard normal prior of u and the recorded
/// quantities, the parameters z = exp(s u₁ + m). A CRTP base of the generator G.
template <class Generator>
struct LotkaVolterraGeneratorBase : StandardNormalPrior<Generator> {
  /// Recorded quantities: z[0] … z[3] = z₁ … z₄.
  MYRIAD_HD int num_quantities() const { return LotkaVolterraDynamics::kNumParameters; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& u, Out& out) const {
    static_cast<const Generator&>(*this).dynamics.parameters(u, out);
  }
  std::string quantity_name(int i) const { return "z[" + std::to_string(i) + "]"; }
};

namespace detail {

/// Column offset into a dense Jacobian: block(i, j) = J(i, j + offset).
template <class Jac>
struct JacobianColumns {
  Jac& jacobian;
  int offset;
  MYRIAD_HD decltype(auto) operator()(int i, int j) const { return jacobian(i, j + offset); }
};

/// work[offset + i]: a sub-range of a scratch vector.
template <class Work>
struct WorkRange {
  Work& work;
  int offset;
  MYRIAD_HD decltype(auto) operator[](int i) const { return work[offset + i]; }
};

/// Column n of a matrix, q ↦ A(q, n), and row m, n ↦ A(m, n).
template <class Matrix>
struct MatrixColumn {
  const Matrix& matrix;
  int column;
  MYRIAD_HD auto operator()(int q) const {
    return std::decay_t<decltype(matrix(q, column))>(matrix(q, column));
  }
};
template <class Matrix>
struct MatrixRow {
  const Matrix& matrix;
  int row;
  MYRIAD_HD auto operator[](int n) const {
    return std::decay_t<decltype(matrix(row, n))>(matrix(row, n));
  }
};

/// The element type of a scratch vector (one chain's double, or a SIMD batch of chains).
template <class Work>
using work_element_t = std::decay_t<decltype(std::declval<const Work&>()[0])>;

/// The series y_1 … y_S of record_states' states: y[q] = states[q + 2].
template <class Work>
struct SeriesOfStates {
  const WorkRange<Work>& states;
  MYRIAD_HD work_element_t<Work> operator[](int q) const { return states[q + 2]; }
};

/// The series lifted to duals along a tangent column: Dual(y[q], column[q]).
template <class Work>
struct DualSeries {
  const SeriesOfStates<Work>& series;
  const WorkRange<Work>& column;
  MYRIAD_HD Dual<work_element_t<Work>> operator[](int q) const {
    return Dual<work_element_t<Work>>(series[q], column[q]);
  }
};

/// A vector read as a column, q ↦ v[q].
template <class Work>
struct VectorAsColumn {
  const WorkRange<Work>& vector;
  MYRIAD_HD work_element_t<Work> operator()(int q) const { return vector[q]; }
};

/// Visitor of simulate_tangent / simulate_directional: column[2s], column[2s+1] = dr_s, df_s.
template <class Work>
struct TangentWriter {
  WorkRange<Work>& column;
  template <class V>
  MYRIAD_HD void operator()(int s, const V&, const V&, const V& dr, const V& df) const {
    column[2 * s] = dr;
    column[2 * s + 1] = df;
  }
};

/// Output of summaries_gradient into row m of H (h[offset + q] = value) …
template <class Work>
struct SummaryGradientWriter {
  WorkRange<Work>& h;
  int offset;
  template <class V>
  MYRIAD_HD void operator()(int q, const V& value) const {
    h[offset + q] = value;
  }
};
/// … and, on duals, the tangent added to a cotangent (series_bar[q] += value.eps).
template <class Work>
struct TangentAdder {
  WorkRange<Work>& series_bar;
  template <class V>
  MYRIAD_HD void operator()(int q, const Dual<V>& value) const {
    series_bar[q] += value.eps;
  }
};

// Writes simulated states into the output vector.
template <class Out>
struct SeriesWriter {
  Out& x;
  template <class S>
  MYRIAD_HD void operator()(int s, const S& r, const S& f) const {
    x[2 * s] = r;
    x[2 * s + 1] = f;
  }
};

}  // namespace detail

}  // namespace myriad::models
