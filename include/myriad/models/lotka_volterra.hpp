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
// §10.3: dense Gram). LotkaVolterraProblem simulates the data once at the paper's
// z = (0.4, 0.005, 0.05, 0.001) and owns it (host and device copies). Quantities of both
// generators: z[0] … z[3] = z₁ … z₄.

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "myriad/core/device_memory.hpp"
#include "myriad/core/ensemble.hpp"
#include "myriad/core/dual.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/linalg/cholesky.hpp"
#include "myriad/linalg/matrix_view.hpp"
#include "myriad/linalg/triangular.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/model/library_instances.hpp"

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
    using S = std::decay_t<decltype(u[0])>;
    S z[kNumParameters], dz[kNumParameters];
    parameters(u, z);
    for (int i = 0; i < kNumParameters; ++i)
      dz[i] = i == direction ? S(prior_scale) * z[i] : S(0);  // dz_i/du₁[i] = s z_i
    const S scale_r = S(noise_scale_r()), scale_f = S(noise_scale_f());
    S r = S(r0), f = S(f0), dr = S(0), df = S(0);
    for (int s = 0; s < num_steps; ++s) {
      S base_r, base_f;
      drift_step(z, r, f, base_r, base_f);
      drift_step_tangent(z, dz, r, f, dr, df);
      const int input_r = kNumParameters + 2 * s;
      r = base_r + scale_r * u[input_r];
      f = base_f + scale_f * u[input_r + 1];
      if (direction == input_r) dr = dr + scale_r;
      if (direction == input_r + 1) df = df + scale_f;
      visit(s, r, f, dr, df);
    }
  }

  /// Runs the simulator at u with the tangent along a direction d (N entries, d[n]) and calls
  /// visit(s, r_s, f_s, dr_s, df_s): column Y d of the series Jacobian, one step at a time.
  template <class Vec, class Direction, class Visitor>
  MYRIAD_HD void simulate_directional(const Vec& u, const Direction& d, Visitor& visit) const {
    using S = std::decay_t<decltype(u[0])>;
    S z[kNumParameters], dz[kNumParameters];
    parameters(u, z);
    for (int i = 0; i < kNumParameters; ++i) dz[i] = S(prior_scale) * z[i] * S(d[i]);
    const S scale_r = S(noise_scale_r()), scale_f = S(noise_scale_f());
    S r = S(r0), f = S(f0), dr = S(0), df = S(0);
    for (int s = 0; s < num_steps; ++s) {
      S base_r, base_f;
      drift_step(z, r, f, base_r, base_f);
      drift_step_tangent(z, dz, r, f, dr, df);
      const int input_r = kNumParameters + 2 * s;
      r = base_r + scale_r * u[input_r];
      f = base_f + scale_f * u[input_r + 1];
      dr = dr + scale_r * S(d[input_r]);
      df = df + scale_f * S(d[input_r + 1]);
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
    double z[kNumParameters];
    parameters(u, z);
    const double scale_r = noise_scale_r(), scale_f = noise_scale_f();
    double r = r0, f = f0;
    states[0] = r;
    states[1] = f;
    for (int s = 0; s < num_steps; ++s) {
      double base_r, base_f;
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
  /// `states` from record_states, z = parameters(u).
  template <class States, class Tangent, class Cotangent, class SeriesBar>
  MYRIAD_HD void add_tangent_adjoint(int n, const States& states, const double* z,
                                     const Tangent& tangent, const Cotangent& cotangent,
                                     SeriesBar& series_bar, double* z_bar) const {
    constexpr int K = kNumParameters;
    const int S = num_steps;
    const double h = dt, su = prior_scale;
    const bool parameter = n < K;
    const int first_row = parameter ? 0 : n - K;  // rows above are zero
    const int first_step = parameter ? 0 : first_row / 2 + 1;
    double mu_r = 0, mu_f = 0;  // μⁿ_{s+1}
    double a_next[2][2] = {{0, 0}, {0, 0}};  // A_{s+1}
    for (int s = S - 1; s >= first_step; --s) {
      const double r = states[2 * s], f = states[2 * s + 1];
      const double next_r = mu_r, next_f = mu_f;
      mu_r = cotangent(2 * s) + a_next[0][0] * next_r + a_next[1][0] * next_f;
      mu_f = cotangent(2 * s + 1) + a_next[0][1] * next_r + a_next[1][1] * next_f;
      double w_r = 0, w_f = 0;  // ∂Φⁿ/∂y_s
      if (s > 0) {
        // The A_s ẏⁿ_s terms, ẏ = (ṙ, ḟ): ∂(A_s ẏ)/∂r = (−δt z₁ ḟ, δt z₃ ḟ), ∂(A_s ẏ)/∂f =
        // (−δt z₁ ṙ, δt z₃ ṙ), and ∂/∂z = δt ṙ, −δt(f ṙ + r ḟ), −δt ḟ, δt(f ṙ + r ḟ).
        const double dr = 2 * s - 2 >= first_row ? double(tangent(2 * s - 2)) : 0.0;
        const double df = double(tangent(2 * s - 1));
        w_r += h * (z[3] * mu_f - z[1] * mu_r) * df;
        w_f += h * (z[3] * mu_f - z[1] * mu_r) * dr;
        z_bar[0] += h * mu_r * dr;
        z_bar[1] -= h * mu_r * (f * dr + r * df);
        z_bar[2] -= h * mu_f * df;
        z_bar[3] += h * mu_f * (f * dr + r * df);
      }
      if (parameter) {
        // μ · F_z(y_s) żⁿ, żⁿ = s_u z_n e_n: differentiated in y_s and, ∂ż_n/∂z_n = s_u, in z_n.
        const double dz = su * z[n];
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
      a_next[0][0] = 1 + h * (z[0] - z[1] * f);
      a_next[0][1] = -h * z[1] * r;
      a_next[1][0] = h * z[3] * f;
      a_next[1][1] = 1 + h * (z[3] * r - z[2]);
    }
  }

  /// grad += the vector–Jacobian product of u ↦ y(u) with cotangent series_bar (2S, on the
  /// rows of the series) plus, through z, z_bar: the simulator's reverse sweep (see above).
  template <class Vec, class States, class SeriesBar, class Grad>
  MYRIAD_HD void add_series_vjp(const Vec& u, const States& states, const SeriesBar& series_bar,
                                double* z_bar, Grad& grad) const {
    constexpr int K = kNumParameters;
    const int S = num_steps;
    const double h = dt;
    double z[K];
    parameters(u, z);
    const double scale_r = noise_scale_r(), scale_f = noise_scale_f();
    double y_bar_r = series_bar[2 * S - 2], y_bar_f = series_bar[2 * S - 1];  // ȳ_S
    for (int s = S - 1; s >= 0; --s) {
      // ȳ_{s+1} is known.
      const double r = states[2 * s], f = states[2 * s + 1];
      grad[K + 2 * s] += scale_r * y_bar_r;
      grad[K + 2 * s + 1] += scale_f * y_bar_f;
      z_bar[0] += h * r * y_bar_r;
      z_bar[1] -= h * r * f * y_bar_r;
      z_bar[2] -= h * f * y_bar_f;
      z_bar[3] += h * r * f * y_bar_f;
      if (s > 0) {
        const double a00 = 1 + h * (z[0] - z[1] * f), a01 = -h * z[1] * r;
        const double a10 = h * z[3] * f, a11 = 1 + h * (z[3] * r - z[2]);
        const double prev_r = series_bar[2 * s - 2] + a00 * y_bar_r + a10 * y_bar_f;
        const double prev_f = series_bar[2 * s - 1] + a01 * y_bar_r + a11 * y_bar_f;
        y_bar_r = prev_r;
        y_bar_f = prev_f;
      }
    }
    for (int k = 0; k < K; ++k) grad[k] += prior_scale * z[k] * z_bar[k];
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
  MYRIAD_HD double operator()(int q) const { return matrix(q, column); }
};
template <class Matrix>
struct MatrixRow {
  const Matrix& matrix;
  int row;
  MYRIAD_HD double operator[](int n) const { return matrix(row, n); }
};

/// The series y_1 … y_S of record_states' states: y[q] = states[q + 2].
template <class Work>
struct SeriesOfStates {
  const WorkRange<Work>& states;
  MYRIAD_HD double operator[](int q) const { return states[q + 2]; }
};

/// The series lifted to duals along a tangent column: Dual(y[q], column[q]).
template <class Work>
struct DualSeries {
  const SeriesOfStates<Work>& series;
  const WorkRange<Work>& column;
  MYRIAD_HD Dual<double> operator[](int q) const { return Dual<double>(series[q], column[q]); }
};

/// A vector read as a column, q ↦ v[q].
template <class Work>
struct VectorAsColumn {
  const WorkRange<Work>& vector;
  MYRIAD_HD double operator()(int q) const { return vector[q]; }
};

/// Visitor of simulate_tangent / simulate_directional: column[2s], column[2s+1] = dr_s, df_s.
template <class Work>
struct TangentWriter {
  WorkRange<Work>& column;
  MYRIAD_HD void operator()(int s, double, double, double dr, double df) const {
    column[2 * s] = dr;
    column[2 * s + 1] = df;
  }
};

/// Output of summaries_gradient into row m of H (h[offset + q] = value) …
template <class Work>
struct SummaryGradientWriter {
  WorkRange<Work>& h;
  int offset;
  MYRIAD_HD void operator()(int q, double value) const { h[offset + q] = value; }
};
/// … and, on duals, the tangent added to a cotangent (series_bar[q] += value.eps).
template <class Work>
struct TangentAdder {
  WorkRange<Work>& series_bar;
  MYRIAD_HD void operator()(int q, const Dual<double>& value) const { series_bar[q] += value.eps; }
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

/// The full-data Lotka–Volterra generator: x = (r₁, f₁, …, r_S, f_S), viewing caller-owned
/// observations. J = [B  T] with T lower triangular, diagonal √δt σ (§10.2).
struct LotkaVolterra {
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

  /// log N(u; 0, I).
  template <class Vec>
  MYRIAD_HD auto log_prior(const Vec& u) const {
    return standard_normal_log_prior(u, input_dim());
  }

  /// ∇ log ρ = −u; returns log ρ(u).
  template <class Vec, class Grad>
  MYRIAD_HD value_type log_prior_gradient(const Vec& u, Grad& g) const {
    for (int n = 0; n < input_dim(); ++n) g[n] = -u[n];
    return standard_normal_log_prior(u, input_dim());
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
    const int S = dynamics.num_steps;
    detail::WorkRange<Work> states{work, 0}, series_bar{work, 2 * S + 2};
    dynamics.record_states(u, states);
    for (int q = 0; q < 2 * S; ++q) series_bar[q] = 0;
    double z[kNumParameters], z_bar[kNumParameters] = {0, 0, 0, 0};
    dynamics.parameters(u, z);
    for (int n = 0; n < input_dim(); ++n)
      dynamics.add_tangent_adjoint(n, states, z, detail::MatrixColumn<Jac>{J, n},
                                   detail::MatrixColumn<Cot>{C, n}, series_bar, z_bar);
    dynamics.add_series_vjp(u, states, series_bar, z_bar, grad);
  }
  /// The states y_0 … y_S and the series cotangent: 4S + 2 elements.
  MYRIAD_HD int jacobian_vjp_workspace() const { return 4 * dynamics.num_steps + 2; }

  /// u ~ N(0, I): normals 0 … N−1 of (iteration, purpose), the numbers the library's default
  /// prior sampler (sample_generator_prior) draws, which the ABC baselines use.
  template <class Out>
  MYRIAD_HD void draw_prior(const RandomStream& rng, std::uint32_t iteration, Purpose purpose,
                            Out& u) const {
    rng.fill_normal<double>(iteration, purpose, u, input_dim());
  }

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

  /// Recorded quantities: z[0] … z[3] = z₁ … z₄.
  MYRIAD_HD int num_quantities() const { return kNumParameters; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& u, Out& out) const {
    dynamics.parameters(u, out);
  }
  std::string quantity_name(int i) const { return "z[" + std::to_string(i) + "]"; }

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

namespace detail {

/// The 9 summary statistics of §15.2 from a series (r_s, f_s), s = 1 … S, in two passes.
/// With c_s = r_s − m_r, d_s = f_s − m_f:
///   x₀ = m_r = (1/S) Σ r_s,                 x₁ = m_f = (1/S) Σ f_s,
///   x₂ = log v_r, v_r = (1/S) Σ c_s²,        x₃ = log v_f, v_f = (1/S) Σ d_s²,
///   x₄, x₅ = ρ_r(1), ρ_r(2),                 x₆, x₇ = ρ_f(1), ρ_f(2),
///     ρ_r(k) = Σ_{s=1}^{S−k} c_s c_{s+k} / Σ_{s=1}^{S} c_s²   (the standard sample ACF),
///   x₈ = κ = Σ c_s d_s / √(Σ c_s² Σ d_s²)     (lag-0 cross-correlation).
template <class S>
struct LotkaVolterraSummaryAccumulator {
  int num_steps;
  S sum_r = S(0), sum_f = S(0);  // pass 1
  S mean_r = S(0), mean_f = S(0);
  S ss_r = S(0), ss_f = S(0), cross = S(0);  // pass 2
  S lag1_r = S(0), lag2_r = S(0), lag1_f = S(0), lag2_f = S(0);
  S prev1_r = S(0), prev2_r = S(0), prev1_f = S(0), prev2_f = S(0);

  MYRIAD_HD explicit LotkaVolterraSummaryAccumulator(int steps) : num_steps(steps) {}

  MYRIAD_HD void first(int /*s*/, const S& r, const S& f) {
    sum_r += r;
    sum_f += f;
  }
  MYRIAD_HD void finish_first() {
    mean_r = sum_r / S(num_steps);
    mean_f = sum_f / S(num_steps);
  }
  MYRIAD_HD void second(int s, const S& r, const S& f) {
    const S c = r - mean_r, d = f - mean_f;
    ss_r += c * c;
    ss_f += d * d;
    cross += c * d;
    if (s >= 1) {
      lag1_r += prev1_r * c;
      lag1_f += prev1_f * d;
    }
    if (s >= 2) {
      lag2_r += prev2_r * c;
      lag2_f += prev2_f * d;
    }
    prev2_r = prev1_r;
    prev1_r = c;
    prev2_f = prev1_f;
    prev1_f = d;
  }
  template <class Out>
  MYRIAD_HD void write(Out& x) const {
    x[0] = mean_r;
    x[1] = mean_f;
    x[2] = log(ss_r / S(num_steps));
    x[3] = log(ss_f / S(num_steps));
    x[4] = lag1_r / ss_r;
    x[5] = lag2_r / ss_r;
    x[6] = lag1_f / ss_f;
    x[7] = lag2_f / ss_f;
    x[8] = cross / sqrt(ss_r * ss_f);
  }
};

template <class S>
struct SummaryFirstPass {
  LotkaVolterraSummaryAccumulator<S>& acc;
  MYRIAD_HD void operator()(int s, const S& r, const S& f) const { acc.first(s, r, f); }
};
template <class S>
struct SummarySecondPass {
  LotkaVolterraSummaryAccumulator<S>& acc;
  MYRIAD_HD void operator()(int s, const S& r, const S& f) const { acc.second(s, r, f); }
};

/// Values and tangents of the 9 summaries along one input direction (the tangent-linear model
/// of LotkaVolterraSummaryAccumulator). With dc_s = dr_s − dm_r (and likewise for f):
///   dm = (1/S) Σ dr_s,   d(Σc²) = 2 Σ c dc,   d(Σ c_s c_{s+k}) = Σ (dc_s c_{s+k} + c_s dc_{s+k}),
///   d log v = d(Σc²)/Σc²,   dρ(k) = (d(Σ c c₊ₖ) − ρ(k) d(Σc²))/Σc²,
///   dκ = d(Σ c d)/√(Σc² Σd²) − (κ/2)(d(Σc²)/Σc² + d(Σd²)/Σd²).
template <class S>
struct LotkaVolterraSummaryTangent {
  int num_steps;
  S sum_r = S(0), sum_f = S(0), dsum_r = S(0), dsum_f = S(0);
  S mean_r = S(0), mean_f = S(0), dmean_r = S(0), dmean_f = S(0);
  S ss_r = S(0), ss_f = S(0), cross = S(0), dss_r = S(0), dss_f = S(0), dcross = S(0);
  S lag_r[2] = {S(0), S(0)}, lag_f[2] = {S(0), S(0)};
  S dlag_r[2] = {S(0), S(0)}, dlag_f[2] = {S(0), S(0)};
  S prev_r[2] = {S(0), S(0)}, prev_f[2] = {S(0), S(0)};  // c_{s−1}, c_{s−2}
  S dprev_r[2] = {S(0), S(0)}, dprev_f[2] = {S(0), S(0)};
  bool second_pass = false;

  MYRIAD_HD explicit LotkaVolterraSummaryTangent(int steps) : num_steps(steps) {}

  MYRIAD_HD void operator()(int s, const S& r, const S& f, const S& dr, const S& df) {
    if (!second_pass) {
      sum_r += r;
      sum_f += f;
      dsum_r += dr;
      dsum_f += df;
      return;
    }
    const S c = r - mean_r, d = f - mean_f;
    const S dc = dr - dmean_r, dd = df - dmean_f;
    ss_r += c * c;
    ss_f += d * d;
    cross += c * d;
    dss_r += S(2) * c * dc;
    dss_f += S(2) * d * dd;
    dcross += dc * d + c * dd;
    for (int k = 0; k < 2; ++k) {
      if (s >= k + 1) {
        lag_r[k] += prev_r[k] * c;
        lag_f[k] += prev_f[k] * d;
        dlag_r[k] += dprev_r[k] * c + prev_r[k] * dc;
        dlag_f[k] += dprev_f[k] * d + prev_f[k] * dd;
      }
    }
    prev_r[1] = prev_r[0];
    prev_r[0] = c;
    prev_f[1] = prev_f[0];
    prev_f[0] = d;
    dprev_r[1] = dprev_r[0];
    dprev_r[0] = dc;
    dprev_f[1] = dprev_f[0];
    dprev_f[0] = dd;
  }
  MYRIAD_HD void finish_first() {
    mean_r = sum_r / S(num_steps);
    mean_f = sum_f / S(num_steps);
    dmean_r = dsum_r / S(num_steps);
    dmean_f = dsum_f / S(num_steps);
    second_pass = true;
  }
  template <class Out>
  MYRIAD_HD void write_tangent(Out& dx) const {
    dx[0] = dmean_r;
    dx[1] = dmean_f;
    dx[2] = dss_r / ss_r;
    dx[3] = dss_f / ss_f;
    for (int k = 0; k < 2; ++k) {
      dx[4 + k] = (dlag_r[k] - lag_r[k] / ss_r * dss_r) / ss_r;
      dx[6 + k] = (dlag_f[k] - lag_f[k] / ss_f * dss_f) / ss_f;
    }
    const S norm = sqrt(ss_r * ss_f);
    const S kappa = cross / norm;
    dx[8] = dcross / norm - kappa * S(0.5) * (dss_r / ss_r + dss_f / ss_f);
  }
};

/// out(q, ∂(Σ_m w_m x_m)/∂y_q) for q = 0 … 2S−1: the gradient of a weighted sum of the 9
/// summaries (definitions at LotkaVolterraSummaryAccumulator) w.r.t. the series y = (r₁, f₁, …)
/// ([derived]), generic scalar (on duals along a direction d its tangent is the Hessian–vector
/// product Σ_m w_m ∇²x_m d). Every summary but the means is a function F of the centred series
/// c = r − m_r 1, e = f − m_f 1, so ∇_r = (w₀/S) 1 + (I − 11ᵀ/S) ∂F/∂c, and with
/// L_k = Σ c_s c_{s+k}, ρ_k = L_k / Σc², κ = Σ c_s e_s / √(Σc² Σe²):
///   ∂F/∂c_s = [2 w₂ c_s + Σ_k w_{3+k} (∂L_k/∂c_s − 2 ρ_k c_s) − w₈ κ c_s] / Σc²
///             + w₈ e_s / √(Σc² Σe²),
///   ∂L_k/∂c_s = c_{s+k} + c_{s−k} (terms outside 0 … S−1 dropped),
/// and likewise for e with w₃, w₆, w₇. Three passes over the series, no per-step storage.
template <class Series, class Out>
MYRIAD_HD void summaries_gradient(const Series& y, int num_steps, const double* w, Out& out) {
  using S = std::decay_t<decltype(y[0])>;
  const int n = num_steps;
  S sum_r = S(0), sum_f = S(0);
  for (int s = 0; s < n; ++s) {
    sum_r += y[2 * s];
    sum_f += y[2 * s + 1];
  }
  const S mean_r = sum_r / S(n), mean_f = sum_f / S(n);
  S ss_r = S(0), ss_f = S(0), cross = S(0);
  S lag_r[2] = {S(0), S(0)}, lag_f[2] = {S(0), S(0)};
  for (int s = 0; s < n; ++s) {
    const S c = y[2 * s] - mean_r, e = y[2 * s + 1] - mean_f;
    ss_r += c * c;
    ss_f += e * e;
    cross += c * e;
    for (int k = 1; k <= 2; ++k) {
      if (s >= k) {
        lag_r[k - 1] += (y[2 * (s - k)] - mean_r) * c;
        lag_f[k - 1] += (y[2 * (s - k) + 1] - mean_f) * e;
      }
    }
  }
  const S norm = sqrt(ss_r * ss_f);
  const S kappa = cross / norm;
  const S rho_r[2] = {lag_r[0] / ss_r, lag_r[1] / ss_r};
  const S rho_f[2] = {lag_f[0] / ss_f, lag_f[1] / ss_f};
  // ∂F/∂c_s (component 0) or ∂F/∂e_s (component 1).
  const auto partial = [&](int s, int component) {
    const S mean = component == 0 ? mean_r : mean_f;
    const S other_mean = component == 0 ? mean_f : mean_r;
    const S ss = component == 0 ? ss_r : ss_f;
    const S* rho = component == 0 ? rho_r : rho_f;
    const double w_log_variance = w[2 + component];
    const double w_lag[2] = {w[4 + 2 * component], w[5 + 2 * component]};
    const S c = y[2 * s + component] - mean;
    S sum = S(2 * w_log_variance) * c - S(w[8]) * kappa * c;
    for (int k = 1; k <= 2; ++k) {
      S lag_partial = S(0);
      if (s + k < n) lag_partial += y[2 * (s + k) + component] - mean;
      if (s >= k) lag_partial += y[2 * (s - k) + component] - mean;
      sum += S(w_lag[k - 1]) * (lag_partial - S(2) * rho[k - 1] * c);
    }
    return sum / ss + S(w[8]) * (y[2 * s + 1 - component] - other_mean) / norm;
  };
  S partial_sum[2] = {S(0), S(0)};
  for (int s = 0; s < n; ++s)
    for (int component = 0; component < 2; ++component) partial_sum[component] += partial(s, component);
  for (int s = 0; s < n; ++s)
    for (int component = 0; component < 2; ++component)
      out(2 * s + component, partial(s, component) - partial_sum[component] / S(n) +
                                 S(w[component] / n));
}

}  // namespace detail

/// Lotka–Volterra conditioned on the 9 summary statistics of §15.2 (definitions at
/// detail::LotkaVolterraSummaryAccumulator): x = (m_r, m_f, log v_r, log v_f, ρ_r(1), ρ_r(2),
/// ρ_f(1), ρ_f(2), κ). Dense Gram (§10.3). Holds the observed summaries inline and a view of
/// the full observed series, which initialize() uses to find a first point.
struct LotkaVolterraSummaries {
  using value_type = double;
  static constexpr int kNumSummaries = 9;
  static constexpr int kNumParameters = LotkaVolterraDynamics::kNumParameters;
  /// initialize() keeps a Gauss–Newton step of u₂ on the stack, which bounds S.
  static constexpr int kMaxSteps = 128;
  /// An initial point is accepted when ‖g(u) − x̄‖∞ is below this.
  static constexpr double kInitializeTolerance = 1e-10;

  LotkaVolterraDynamics dynamics;
  const double* series = nullptr;  ///< the full observed series (r̄₁, f̄₁, …), 2S entries
  double summaries[kNumSummaries]{};  ///< x̄: the summaries of `series`

  /// A view of a caller-owned series (host or device pointer) with its summaries, computed on
  /// the host by summaries_of(series_on_host, …).
  static LotkaVolterraSummaries make(const double* series,
                                     const std::array<double, kNumSummaries>& observed_summaries,
                                     const LotkaVolterraSettings& settings) {
    LotkaVolterraSummaries g;
    g.dynamics = LotkaVolterraDynamics::make(settings, "lotka_volterra_summaries");
    MYRIAD_EXPECTS(settings.num_steps <= kMaxSteps,
                   "lotka_volterra_summaries: num_steps must be <= ", kMaxSteps, ", got ",
                   settings.num_steps);
    MYRIAD_EXPECTS(series != nullptr, "lotka_volterra_summaries: series must not be null");
    for (int m = 0; m < kNumSummaries; ++m) {
      MYRIAD_EXPECTS(std::isfinite(observed_summaries[m]), "lotka_volterra_summaries: summary ", m,
                     " is not finite: ", observed_summaries[m]);
      g.summaries[m] = observed_summaries[m];
    }
    g.series = series;
    return g;
  }

  /// The 9 summaries of a series of S (r, f) pairs, interleaved; host or device.
  template <class Vec, class Out>
  MYRIAD_HD static void summaries_of(const Vec& series, int num_steps, Out& x) {
    using S = std::decay_t<decltype(series[0])>;
    detail::LotkaVolterraSummaryAccumulator<S> acc(num_steps);
    for (int s = 0; s < num_steps; ++s) acc.first(s, series[2 * s], series[2 * s + 1]);
    acc.finish_first();
    for (int s = 0; s < num_steps; ++s) acc.second(s, series[2 * s], series[2 * s + 1]);
    acc.write(x);
  }

  MYRIAD_HD int input_dim() const { return dynamics.num_inputs(); }
  MYRIAD_HD int output_dim() const { return kNumSummaries; }
  MYRIAD_HD value_type observed(int m) const { return summaries[m]; }

  /// x = the summaries of the simulated series (the simulator runs twice: means first).
  template <class Vec, class Out>
  MYRIAD_HD void generate(const Vec& u, Out& x) const {
    using S = std::decay_t<decltype(u[0])>;
    detail::LotkaVolterraSummaryAccumulator<S> acc(dynamics.num_steps);
    detail::SummaryFirstPass<S> first{acc};
    dynamics.simulate(u, first);
    acc.finish_first();
    detail::SummarySecondPass<S> second{acc};
    dynamics.simulate(u, second);
    acc.write(x);
  }

  /// log N(u; 0, I).
  template <class Vec>
  MYRIAD_HD auto log_prior(const Vec& u) const {
    return standard_normal_log_prior(u, input_dim());
  }

  /// ∇ log ρ = −u; returns log ρ(u).
  template <class Vec, class Grad>
  MYRIAD_HD value_type log_prior_gradient(const Vec& u, Grad& g) const {
    for (int n = 0; n < input_dim(); ++n) g[n] = -u[n];
    return standard_normal_log_prior(u, input_dim());
  }

  /// Column n of J (9 entries): the tangent-linear simulator along input n, then the tangents
  /// of the summaries (formulas at detail::LotkaVolterraSummaryTangent). Generic scalar.
  template <class Vec, class Out>
  MYRIAD_HD void jacobian_column(const Vec& u, int n, Out& column) const {
    using S = std::decay_t<decltype(u[0])>;
    detail::LotkaVolterraSummaryTangent<S> tangent(dynamics.num_steps);
    dynamics.simulate_tangent(u, n, tangent);
    tangent.finish_first();
    dynamics.simulate_tangent(u, n, tangent);
    tangent.write_tangent(column);
  }

  /// Dense J (9 × N), column by column.
  template <class Vec, class Jac>
  MYRIAD_HD void jacobian(const Vec& u, Jac& J) const {
    using S = std::decay_t<decltype(u[0])>;
    for (int n = 0; n < input_dim(); ++n) {
      S column[kNumSummaries];
      jacobian_column(u, n, column);
      for (int m = 0; m < kNumSummaries; ++m) J(m, n) = column[m];
    }
  }

  /// grad_i += Σ_mn C(m, n) ∂J_mn/∂u_i, the log-determinant gradient's vector–Jacobian product
  /// (model/generator.hpp), by hand ([derived]). J = H Y with H = ∂x/∂y (9 × 2S, the summaries'
  /// gradients) and Y = ∂y/∂u the series Jacobian, so ∂J/∂u_i = H ∂Y/∂u_i + (∂H/∂u_i) Y and
  ///   Σ_mn C_mn ∂J_mn/∂u_i = Σ_qn (HᵀC)_qn ∂Y_qn/∂u_i + (Yᵀ g)_i,   g = Σ_m ∇²x_m (Y C_m·ᵀ),
  /// (C_m· row m of C). The first term is the series' reverse sweep with cotangent HᵀC
  /// (LotkaVolterraDynamics::add_tangent_adjoint, each column of Y from a tangent sweep); the
  /// second, 9 directional tangent sweeps Y C_m·ᵀ, 9 Hessian–vector products (the summaries'
  /// gradient on duals, detail::summaries_gradient) and the series' VJP with cotangent g. Both
  /// end in one add_series_vjp. O(N S + 9 N S) against the O(N² S) of N dual passes of
  /// jacobian(). J is not read. `work`: jacobian_vjp_workspace() elements.
  template <class Vec, class Jac, class Cot, class Grad, class Work>
  MYRIAD_HD void add_jacobian_vjp(const Vec& u, const Jac& /*J*/, const Cot& C, Grad& grad,
                                  Work& work) const {
    constexpr int K = kNumParameters;
    const int S = dynamics.num_steps, Q = 2 * S;
    detail::WorkRange<Work> states{work, 0};                // y_0 … y_S, 2S + 2
    detail::WorkRange<Work> series_bar{work, Q + 2};        // cotangent on y_1 … y_S, 2S
    detail::WorkRange<Work> h{work, 2 * Q + 2};             // H, 9 × 2S, h[m·2S + q]
    detail::WorkRange<Work> column{work, 11 * Q + 2};       // a column of Y, 2S
    detail::WorkRange<Work> cotangent{work, 12 * Q + 2};    // a column of HᵀC, 2S
    dynamics.record_states(u, states);
    const detail::SeriesOfStates<Work> series{states};
    for (int q = 0; q < Q; ++q) series_bar[q] = 0;
    for (int m = 0; m < kNumSummaries; ++m) {
      double weights[kNumSummaries] = {};
      weights[m] = 1;
      detail::SummaryGradientWriter<Work> row{h, m * Q};
      detail::summaries_gradient(series, S, weights, row);
    }
    double z[K], z_bar[K] = {0, 0, 0, 0};
    dynamics.parameters(u, z);
    detail::TangentWriter<Work> tangent{column};
    for (int n = 0; n < input_dim(); ++n) {
      dynamics.simulate_tangent(u, n, tangent);
      for (int q = 0; q < Q; ++q) {
        double sum = 0;
        for (int m = 0; m < kNumSummaries; ++m) sum += h[m * Q + q] * C(m, n);
        cotangent[q] = sum;
      }
      dynamics.add_tangent_adjoint(n, states, z, detail::VectorAsColumn<Work>{column},
                                   detail::VectorAsColumn<Work>{cotangent}, series_bar, z_bar);
    }
    for (int m = 0; m < kNumSummaries; ++m) {
      dynamics.simulate_directional(u, detail::MatrixRow<Cot>{C, m}, tangent);
      double weights[kNumSummaries] = {};
      weights[m] = 1;
      detail::TangentAdder<Work> add{series_bar};
      detail::summaries_gradient(detail::DualSeries<Work>{series, column}, S, weights, add);
    }
    dynamics.add_series_vjp(u, states, series_bar, z_bar, grad);
  }
  /// States, series cotangent, H, and two series-length columns: 26S + 2 elements.
  MYRIAD_HD int jacobian_vjp_workspace() const { return 26 * dynamics.num_steps + 2; }

  /// u ~ N(0, I): normals 0 … N−1 of (iteration, purpose), the numbers the library's default
  /// prior sampler (sample_generator_prior) draws, which the ABC baselines use.
  template <class Out>
  MYRIAD_HD void draw_prior(const RandomStream& rng, std::uint32_t iteration, Purpose purpose,
                            Out& u) const {
    rng.fill_normal<double>(iteration, purpose, u, input_dim());
  }

  /// A point on the summary manifold ([derived]): u₁ around the gradient-matching estimate of
  /// the observed series (as LotkaVolterra::initialize, since prior draws make the dynamics
  /// explode), u₂ reproducing that series by forward substitution (§12.2) — whose summaries
  /// equal x̄ up to rounding — then polished by damped Gauss–Newton (refine_noise). The noise
  /// draws of draw_prior(attempt, Purpose::initial_point) supply u₁'s jitter. False if the
  /// polish does not reach ‖g(u) − x̄‖∞ < 1e-10.
  template <class Out>
  MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt, Out& u) const {
    draw_prior(rng, attempt, Purpose::initial_point, u);
    dynamics.centre_parameters(series, u);
    if (!dynamics.forward_substitute(series, u)) return false;
    return refine_noise(u, 50);
  }

  /// Damped Gauss–Newton on the 9 equations g(u) = x̄ in u₂ (u₁ fixed): minimum-norm steps
  /// Δu₂ = J₂ᵀ(J₂J₂ᵀ)⁻¹ r with a 9 × 9 Cholesky, J₂ = ∂x/∂u₂, halving the step until ‖r‖∞
  /// decreases. Returns true once ‖r‖∞ < 1e-10 (it iterates on to 1e-12 while that helps).
  template <class Out>
  MYRIAD_HD bool refine_noise(Out& u, int max_iterations) const {
    constexpr int K = kNumParameters;
    const int noise_inputs = 2 * dynamics.num_steps;
    double residual[kNumSummaries];
    double norm = residual_norm(u, residual);
    for (int it = 0; it < max_iterations && myriad::isfinite(norm) && norm >= 1e-12; ++it) {
      double gram[kNumSummaries * kNumSummaries] = {};
      double column[kNumSummaries];
      for (int j = 0; j < noise_inputs; ++j) {
        jacobian_column(u, K + j, column);
        for (int a = 0; a < kNumSummaries; ++a)
          for (int b = 0; b <= a; ++b) gram[a * kNumSummaries + b] += column[a] * column[b];
      }
      const MatrixView<double> factor = dense_matrix(gram, kNumSummaries, kNumSummaries);
      if (!linalg::cholesky_in_place(factor)) break;
      double w[kNumSummaries];  // (J₂J₂ᵀ)⁻¹ r
      for (int a = 0; a < kNumSummaries; ++a) w[a] = residual[a];
      linalg::cholesky_solve(factor.as_const(), DenseVector<double>{w, kNumSummaries});
      double step[2 * kMaxSteps];  // J₂ᵀ w at the current point
      for (int j = 0; j < noise_inputs; ++j) {
        jacobian_column(u, K + j, column);
        double s = 0;
        for (int a = 0; a < kNumSummaries; ++a) s += column[a] * w[a];
        step[j] = s;
      }
      double applied = 0;  // fraction of the step currently applied to u
      bool improved = false;
      for (double fraction = 1; fraction > 1e-6; fraction *= 0.5) {
        for (int j = 0; j < noise_inputs; ++j) u[K + j] = u[K + j] - (fraction - applied) * step[j];
        applied = fraction;
        double trial[kNumSummaries];
        const double trial_norm = residual_norm(u, trial);
        if (trial_norm < norm) {
          norm = trial_norm;
          for (int a = 0; a < kNumSummaries; ++a) residual[a] = trial[a];
          improved = true;
          break;
        }
      }
      if (!improved) {
        for (int j = 0; j < noise_inputs; ++j) u[K + j] = u[K + j] + applied * step[j];
        break;
      }
    }
    return myriad::isfinite(norm) && norm < kInitializeTolerance;
  }

  /// Recorded quantities: z[0] … z[3] = z₁ … z₄.
  MYRIAD_HD int num_quantities() const { return kNumParameters; }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& u, Out& out) const {
    dynamics.parameters(u, out);
  }
  std::string quantity_name(int i) const { return "z[" + std::to_string(i) + "]"; }

 private:
  // r = g(u) − x̄ and ‖r‖∞ (infinite if any entry is not finite).
  template <class Vec>
  MYRIAD_HD double residual_norm(const Vec& u, double* r) const {
    generate(u, r);
    double norm = 0;
    for (int m = 0; m < kNumSummaries; ++m) {
      r[m] -= summaries[m];
      if (!myriad::isfinite(r[m])) return HUGE_VAL;
      norm = norm > myriad::fabs(r[m]) ? norm : myriad::fabs(r[m]);
    }
    return norm;
  }
};

/// Owning host container of Lotka–Volterra data: the series simulated once at the settings'
/// true parameters, its 9 summaries, and an optional device copy of the series, uploaded on
/// the first call to a device_* accessor. Movable, not copyable (it may own device memory).
class LotkaVolterraProblem {
 public:
  /// Default data seed (any seed gives an equally valid data set).
  static constexpr std::uint64_t kDefaultSeed = 20170420;
  /// Purpose tag of the data noise stream.
  static constexpr std::uint32_t kDataPurpose = static_cast<std::uint32_t>(Purpose::user) + 0;

  /// Simulates the data: u₁ = (log z − m)/s for the settings' true z, u₂ = 2S normals of
  /// RandomStream(seed, 0), iteration 0, tag user + 0; x̄ = LotkaVolterra::generate(u).
  /// Deterministic for a seed.
  static LotkaVolterraProblem make(std::uint64_t seed = kDefaultSeed,
                                   const LotkaVolterraSettings& settings = {}) {
    LotkaVolterraProblem p;
    p.settings_ = settings;
    LotkaVolterraDynamics::make(settings, "lotka_volterra");  // validates before any sizing
    const int K = LotkaVolterraDynamics::kNumParameters, M = 2 * settings.num_steps;
    p.true_inputs_.assign(static_cast<std::size_t>(K + M), 0.0);
    for (int i = 0; i < K; ++i)
      p.true_inputs_[i] =
          (std::log(settings.true_parameters[i]) - settings.prior_mean) / settings.prior_scale;
    DenseVector<double> noise{p.true_inputs_.data() + K, M};
    RandomStream(seed, 0).fill_normal<double>(0, static_cast<Purpose>(kDataPurpose), noise, M);
    p.series_.assign(static_cast<std::size_t>(M), 0.0);
    // Views, not std::vector, in MYRIAD_HD calls (host-only operator[] warns under nvcc).
    const DenseVector<const double> u{p.true_inputs_.data(), K + M};
    DenseVector<double> x{p.series_.data(), M};
    LotkaVolterra::make(p.series_.data(), settings).generate(u, x);
    for (int m = 0; m < M; ++m)
      MYRIAD_EXPECTS(std::isfinite(p.series_[m]), "lotka_volterra: the simulated data are not ",
                     "finite (entry ", m, ") for these settings");
    DenseVector<double> summaries{p.summaries_.data(), LotkaVolterraSummaries::kNumSummaries};
    LotkaVolterraSummaries::summaries_of(DenseVector<const double>{p.series_.data(), M},
                                         settings.num_steps, summaries);
    return p;
  }

  const LotkaVolterraSettings& settings() const { return settings_; }
  /// x̄ = (r̄₁, f̄₁, …, r̄_S, f̄_S).
  const std::vector<double>& observations() const { return series_; }
  /// The 9 summaries of x̄ (definitions at LotkaVolterraSummaries).
  const std::array<double, LotkaVolterraSummaries::kNumSummaries>& summaries() const {
    return summaries_;
  }
  /// The inputs u the data were generated from.
  const std::vector<double>& true_inputs() const { return true_inputs_; }

  /// The full-data generator viewing the host copy; valid while this object lives.
  LotkaVolterra host_model() const { return LotkaVolterra::make(series_.data(), settings_); }
  /// The summary generator viewing the host copy; valid while this object lives.
  LotkaVolterraSummaries host_summaries_model() const {
    return LotkaVolterraSummaries::make(series_.data(), summaries_, settings_);
  }
  /// The full-data generator viewing the device copy (uploaded on first use). Throws
  /// myriad::unavailable_error without CUDA, myriad::cuda_error if the upload fails.
  LotkaVolterra device_model() { return LotkaVolterra::make(device_series(), settings_); }
  /// The summary generator viewing the device copy (uploaded on first use).
  LotkaVolterraSummaries device_summaries_model() {
    return LotkaVolterraSummaries::make(device_series(), summaries_, settings_);
  }

 private:
  LotkaVolterraProblem() = default;
  const double* device_series() {
    if (device_series_.size() == 0) {
      DeviceArray<double> device(series_);
      device_series_ = std::move(device);
    }
    return device_series_.data();
  }

  LotkaVolterraSettings settings_;
  std::vector<double> series_;
  std::array<double, LotkaVolterraSummaries::kNumSummaries> summaries_{};
  std::vector<double> true_inputs_;
  DeviceArray<double> device_series_;
};

}  // namespace myriad::models

namespace myriad {

// The library instantiates the constrained-HMC backends (kernels/builtin_chmc_lotka_volterra*.cu):
// model/library_instances.hpp.
template <>
struct has_cuda_chmc_backend<models::LotkaVolterra> : std::true_type {};
template <>
struct has_cuda_chmc_backend<models::LotkaVolterraSummaries> : std::true_type {};

}  // namespace myriad
