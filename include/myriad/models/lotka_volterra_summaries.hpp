#pragma once
// `lotka_volterra_summaries`: the Lotka–Volterra simulator of models/lotka_volterra.hpp
// conditioned on 9 summary statistics of its series instead of every observation (Graham &
// Storkey 2017, §15.2 of constrained-hmc.md; §10.3: a dense 9 × 9 Gram matrix), with the
// summaries' tangent-linear model and the reverse sweep of its log-determinant gradient.

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
    for (int component = 0; component < 2; ++component)
      partial_sum[component] += partial(s, component);
  for (int s = 0; s < n; ++s)
    for (int component = 0; component < 2; ++component)
      out(2 * s + component,
          partial(s, component) - partial_sum[component] / S(n) + S(w[component] / n));
}

}  // namespace detail

/// Lotka–Volterra conditioned on the 9 summary statistics of §15.2 (definitions at
/// detail::LotkaVolterraSummaryAccumulator): x = (m_r, m_f, log v_r, log v_f, ρ_r(1), ρ_r(2),
/// ρ_f(1), ρ_f(2), κ). Dense Gram (§10.3). Holds the observed summaries inline and a view of
/// the full observed series, which initialize() uses to find a first point.
struct LotkaVolterraSummaries : LotkaVolterraGeneratorBase<LotkaVolterraSummaries> {
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
  /// The first kNumParameters inputs are the parameters, the rest the noise (pseudo-marginal ABC:
  /// AbcEstimator, mcmc/abc.hpp).
  MYRIAD_HD int num_parameters() const { return kNumParameters; }

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
    using V = element_t<Vec>;
    constexpr int K = kNumParameters;
    const int S = dynamics.num_steps, Q = 2 * S;
    detail::WorkRange<Work> states{work, 0};              // y_0 … y_S, 2S + 2
    detail::WorkRange<Work> series_bar{work, Q + 2};      // cotangent on y_1 … y_S, 2S
    detail::WorkRange<Work> h{work, 2 * Q + 2};           // H, 9 × 2S, h[m·2S + q]
    detail::WorkRange<Work> column{work, 11 * Q + 2};     // a column of Y, 2S
    detail::WorkRange<Work> cotangent{work, 12 * Q + 2};  // a column of HᵀC, 2S
    dynamics.record_states(u, states);
    const detail::SeriesOfStates<Work> series{states};
    for (int q = 0; q < Q; ++q) series_bar[q] = V(0);
    for (int m = 0; m < kNumSummaries; ++m) {
      double weights[kNumSummaries] = {};
      weights[m] = 1;
      detail::SummaryGradientWriter<Work> row{h, m * Q};
      detail::summaries_gradient(series, S, weights, row);
    }
    V z[K], z_bar[K];
    for (V& x : z_bar) x = V(0);
    dynamics.parameters(u, z);
    detail::TangentWriter<Work> tangent{column};
    for (int n = 0; n < input_dim(); ++n) {
      dynamics.simulate_tangent(u, n, tangent);
      for (int q = 0; q < Q; ++q) {
        V sum = V(0);
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

  /// A point on the summary manifold ([derived]): u₁ around the gradient-matching estimate of
  /// the observed series (as LotkaVolterra::initialize, since prior draws make the dynamics
  /// explode), u₂ reproducing that series by forward substitution (§12.2) — whose summaries
  /// equal x̄ up to rounding — then polished by damped Gauss–Newton (refine_noise). The noise
  /// normals of (attempt, Purpose::initial_point) supply u₁'s jitter. False if the
  /// polish does not reach ‖g(u) − x̄‖∞ < 1e-10.
  template <class Out>
  MYRIAD_HD bool initialize(const RandomStream& rng, std::uint32_t attempt, Out& u) const {
    rng.fill_normal<double>(attempt, Purpose::initial_point, u, input_dim());
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

  /// Backends the library instantiates (CUDA, and the CPU's lanes): model/library_instances.hpp.
  static constexpr unsigned library_backends =
      library_backend::chmc | library_backend::cpu_chmc_lanes;

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

}  // namespace myriad::models
