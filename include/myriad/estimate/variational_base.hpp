#pragma once
// A fitted base distribution and log ζ for tempering and AIS (thesis §5.5; thesis-methods.md
// §8.4): mean-field Gaussian variational fits q_i = N(μ_i, diag(σ_i²)) from several random
// starts, duplicates dropped, combined as the mixture m = ζ⁻¹ Σ_i e^{ℓ_i} q_i with ℓ_i the ELBO
// of fit i and ζ = Σ_i e^{ℓ_i}, and moment-matched into one diagonal Gaussian (the mixture
// itself would be multimodal). log ζ = log Σ e^{ℓ_i} makes the slope of log p_β at β = 0 about
// zero for one fit (ELBO = log Z − KL[Q‖P]).
//
// Each fit maximises ELBO(μ, ρ) = E_q[log p̃(x)] + Σ_i ρ_i + D/2 log 2πe, σ = e^ρ, by Adam on
// reparameterised gradients (x = μ + σ ⊙ ε, ε ~ N(0, I): ∇_μ = E[∇log p̃(x)], ∇_ρ =
// E[∇log p̃(x) ⊙ σ ⊙ ε] + 1) with `samples` draws a step, the iterates of the last quarter
// averaged (Polyak–Ruppert: the constant-step iterates jitter around the optimum); its ELBO is
// then estimated with `elbo_samples` fresh draws, with that estimate's standard error. Every
// number comes from the restart's Philox stream (seed, restart), so a fit is reproducible and the
// restarts run in parallel. Host code: it evaluates the target on the CPU (a GPU run fits on the
// target's host view).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/annealing_base.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

/// Settings of fit_variational_base; validated by validate().
struct VariationalBaseConfig {
  /// Independent fits from random starts. 32: on a 16-unit Boltzmann relaxation 8 fits missed
  /// modes that the chains then reached too rarely (log Ẑ a nat low after 8000 draws); 32 found
  /// 26 distinct ones and the estimates agreed with the exact log Z (tests/stat/
  /// test_tempering_boltzmann.cpp). A fit costs iterations × samples gradients.
  int restarts = 32;
  int iterations = 2000;        ///< Adam steps per fit
  int samples = 8;              ///< reparameterised draws per step
  double learning_rate = 0.02;  ///< Adam's step
  double start_scale = 2;       ///< the starts' means ~ N(0, start_scale² I); σ starts at 1
  int elbo_samples = 2000;      ///< draws of each fit's final ELBO estimate
  std::uint64_t seed = 1;

  void validate() const {
    MYRIAD_EXPECTS(restarts >= 1, "variational restarts must be >= 1, got ", restarts);
    MYRIAD_EXPECTS(iterations >= 4, "variational iterations must be >= 4, got ", iterations);
    MYRIAD_EXPECTS(samples >= 1, "variational samples must be >= 1, got ", samples);
    MYRIAD_EXPECTS(std::isfinite(learning_rate) && learning_rate > 0,
                   "variational learning rate must be positive, got ", learning_rate);
    MYRIAD_EXPECTS(std::isfinite(start_scale) && start_scale >= 0,
                   "variational start scale must be >= 0, got ", start_scale);
    MYRIAD_EXPECTS(elbo_samples >= 2, "variational ELBO samples must be >= 2, got ", elbo_samples);
  }
};

/// One mean-field fit: q = N(mean, diag(scale²)) and its ELBO estimate.
struct VariationalComponent {
  std::vector<double> mean, scale;
  double elbo = -std::numeric_limits<double>::infinity();
  double elbo_se = 0;
  std::int64_t skipped_steps = 0;  ///< steps whose gradient was not finite (not taken)
};

/// The fitted base: the distinct fits (ELBO descending), the moment-matched Gaussian and log ζ.
struct VariationalBase {
  std::vector<VariationalComponent> components;
  int restarts = 0;
  std::vector<double> mean, scale;  ///< the moment-matched diagonal Gaussian
  double log_zeta = 0;              ///< log Σ_i e^{ℓ_i} over the distinct fits
  double seconds = 0;

  AisBaseSpec spec() const { return AisBaseSpec{mean, scale, 1.0, 0.0}; }
};

namespace detail {

/// Adam's state for one parameter vector (Kingma & Ba 2015, with their defaults β₁ = 0.9,
/// β₂ = 0.999, ε = 1e-8), ascending.
struct AdamAscent {
  std::vector<double> first, second;
  explicit AdamAscent(int n) : first(static_cast<std::size_t>(n)), second(first.size()) {}
  void step(std::vector<double>& x, const std::vector<double>& gradient, int t, double rate) {
    constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-8;
    const double c1 = 1 - std::pow(kBeta1, t), c2 = 1 - std::pow(kBeta2, t);
    for (std::size_t i = 0; i < x.size(); ++i) {
      first[i] = kBeta1 * first[i] + (1 - kBeta1) * gradient[i];
      second[i] = kBeta2 * second[i] + (1 - kBeta2) * gradient[i] * gradient[i];
      x[i] += rate * (first[i] / c1) / (std::sqrt(second[i] / c2) + kEpsilon);
    }
  }
};

/// Fit `restart` (file comment).
template <class Density>
VariationalComponent fit_mean_field(const Density& target, const VariationalBaseConfig& config,
                                    int restart) {
  const int d = target.dim();
  const auto n = static_cast<std::size_t>(d);
  const RandomStream rng(config.seed, static_cast<std::uint64_t>(restart));
  std::vector<double> mu(n), rho(n, 0.0), eps(n), x(n), g(n), grad_mu(n), grad_rho(n);
  const auto vec = [d](std::vector<double>& v) { return DenseVector<double>{v.data(), d}; };
  DenseVector<double> start = vec(mu);
  rng.fill_normal<double>(0, Purpose::initial_point, start, d);
  for (double& m : mu) m *= config.start_scale;
  AdamAscent adam_mu(d), adam_rho(d);
  std::vector<double> mean_mu(n, 0.0), mean_rho(n, 0.0);
  const int average_from = config.iterations - config.iterations / 4;
  VariationalComponent fit;
  DenseVector<double> noise = vec(eps), point = vec(x), gradient = vec(g);
  std::uint32_t counter = 1;  // the stream's iteration counter: one per draw
  for (int t = 1; t <= config.iterations; ++t) {
    std::fill(grad_mu.begin(), grad_mu.end(), 0.0);
    std::fill(grad_rho.begin(), grad_rho.end(), 1.0);  // the entropy's ∂/∂ρ_i
    bool finite = true;
    for (int s = 0; s < config.samples && finite; ++s) {
      rng.fill_normal<double>(counter++, Purpose::variational, noise, d);
      for (std::size_t i = 0; i < n; ++i) x[i] = mu[i] + std::exp(rho[i]) * eps[i];
      finite = std::isfinite(log_density_and_gradient(target, point, gradient));
      for (std::size_t i = 0; i < n && finite; ++i) {
        finite = std::isfinite(g[i]);
        grad_mu[i] += g[i] / config.samples;
        grad_rho[i] += g[i] * std::exp(rho[i]) * eps[i] / config.samples;
      }
    }
    if (finite) {
      adam_mu.step(mu, grad_mu, t, config.learning_rate);
      adam_rho.step(rho, grad_rho, t, config.learning_rate);
    } else {
      ++fit.skipped_steps;
    }
    if (t > average_from) {
      for (std::size_t i = 0; i < n; ++i) {
        mean_mu[i] += mu[i] / (config.iterations - average_from);
        mean_rho[i] += rho[i] / (config.iterations - average_from);
      }
    }
  }
  fit.mean = mean_mu;
  for (double r : mean_rho) fit.scale.push_back(std::exp(r));
  // ELBO = E_q[log p̃] + H[q], H = Σ log σ_i + D/2 log 2πe; the expectation by fresh draws.
  double entropy = 0.5 * d * std::log(2 * M_PI * M_E);
  for (double r : mean_rho) entropy += r;
  double sum = 0, sum_sq = 0;
  for (int s = 0; s < config.elbo_samples; ++s) {
    rng.fill_normal<double>(counter++, Purpose::variational, noise, d);
    for (std::size_t i = 0; i < n; ++i) x[i] = fit.mean[i] + fit.scale[i] * eps[i];
    const double lp = log_density_and_gradient(target, point, gradient);
    sum += lp;
    sum_sq += lp * lp;
  }
  const double m = sum / config.elbo_samples;
  fit.elbo = m + entropy;  // −inf or NaN where the target is not finite under q
  fit.elbo_se =
      std::sqrt(std::max(0.0, sum_sq / config.elbo_samples - m * m) / (config.elbo_samples - 1));
  return fit;
}

/// Whether fits a and b found the same mode: every mean within half a scale of the other's.
inline bool same_mode(const VariationalComponent& a, const VariationalComponent& b) {
  for (std::size_t i = 0; i < a.mean.size(); ++i)
    if (std::fabs(a.mean[i] - b.mean[i]) > 0.5 * std::max(a.scale[i], b.scale[i])) return false;
  return true;
}

}  // namespace detail

/// Fits the base of a target of one problem (file comment); throws myriad::invalid_argument if
/// no fit has a finite ELBO.
template <class Target>
VariationalBase fit_variational_base(const Target& target, const VariationalBaseConfig& config) {
  config.validate();
  MYRIAD_EXPECTS(problem_count(target) == 1,
                 "a variational base is fitted to a target with one problem, got ",
                 problem_count(target));
  const auto start = std::chrono::steady_clock::now();
  const auto& density = problem_target(target, 0);
  std::vector<VariationalComponent> fits(static_cast<std::size_t>(config.restarts));
#pragma omp parallel for schedule(dynamic)
  for (int r = 0; r < config.restarts; ++r)
    fits[static_cast<std::size_t>(r)] = detail::fit_mean_field(density, config, r);
  std::stable_sort(fits.begin(), fits.end(),
                   [](const auto& a, const auto& b) { return a.elbo > b.elbo; });
  VariationalBase base;
  base.restarts = config.restarts;
  for (auto& fit : fits) {
    if (!std::isfinite(fit.elbo)) continue;
    const bool duplicate =
        std::any_of(base.components.begin(), base.components.end(),
                    [&](const VariationalComponent& kept) { return detail::same_mode(kept, fit); });
    if (!duplicate) base.components.push_back(std::move(fit));
  }
  MYRIAD_EXPECTS(!base.components.empty(), "no variational fit of the base has a finite ELBO (",
                 config.restarts, " restarts)");
  const double top = base.components.front().elbo;
  double total = 0;
  for (const auto& c : base.components) total += std::exp(c.elbo - top);
  base.log_zeta = top + std::log(total);
  // The mixture's mean and per-coordinate variance, weights e^{ℓ_i} / ζ.
  const std::size_t d = base.components.front().mean.size();
  base.mean.assign(d, 0.0);
  std::vector<double> second(d, 0.0);
  for (const auto& c : base.components) {
    const double w = std::exp(c.elbo - base.log_zeta);
    for (std::size_t i = 0; i < d; ++i) {
      base.mean[i] += w * c.mean[i];
      second[i] += w * (c.scale[i] * c.scale[i] + c.mean[i] * c.mean[i]);
    }
  }
  for (std::size_t i = 0; i < d; ++i)
    base.scale.push_back(std::sqrt(std::max(second[i] - base.mean[i] * base.mean[i], 1e-300)));
  base.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return base;
}

}  // namespace myriad
