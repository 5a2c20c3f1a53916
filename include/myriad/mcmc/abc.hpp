#pragma once
// Approximate Bayesian computation baselines on the same generators as constrained HMC
// (constrained-hmc.md §11): the ABC kernels, ABC rejection, pseudo-marginal ABC-MCMC, and the
// Gaussian-kernel ABC target in input space (for ordinary HMC). They condition on ‖x − x̄‖ ≲ ε
// instead of x = x̄ exactly, and are here to be compared against.

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/estimator.hpp"
#include "myriad/model/generator.hpp"

namespace myriad {

/// ABC kernels k_ε(x̄ | x) (§11).
enum class AbcKernel {
  uniform_ball,  ///< ∝ ε^{-M} 1[‖x̄ − x‖₂ ≤ ε]
  gaussian,      ///< N(x̄ | x, ε² I)
};

/// log k_ε(x̄ | x) from the squared distance ‖x̄ − x‖², up to a constant in x (the constants
/// cancel in every ratio used here); −∞ outside the uniform ball.
template <class T>
MYRIAD_HD T abc_log_kernel(AbcKernel kernel, T squared_distance, T epsilon) {
  if (kernel == AbcKernel::gaussian) return -squared_distance / (T(2) * epsilon * epsilon);
  return squared_distance <= epsilon * epsilon ? T(0) : -T(INFINITY);
}

/// Simulates x = g_x(u) into `x` and returns ‖x − x̄‖₂² (NaN if x is not finite).
template <class Generator, class Vec, class Out>
MYRIAD_HD auto abc_squared_distance(const Generator& g, const Vec& u, Out& x) {
  using T = typename Generator::value_type;
  g.generate(u, x);
  T sum = T(0);
  for (int m = 0; m < g.output_dim(); ++m) {
    const T r = x[m] - g.observed(m);
    sum += r * r;
  }
  return sum;
}

/// Views of one ABC-MCMC chain: the current inputs u and log k_ε(x̄ | g_x(u)), and scratch for
/// the proposal, a prior draw and the simulated outputs.
template <class T>
struct AbcChain {
  ChainVector<T> position;
  T* log_kernel;
  ChainVector<T> proposal;
  ChainVector<T> prior_draw;
  ChainVector<T> outputs;
};

/// ABC-MCMC settings: kernel, tolerance, random-walk scale on the parameter inputs.
template <class T>
struct AbcStep {
  AbcKernel kernel = AbcKernel::uniform_ball;
  T epsilon = T(1);
  T proposal_scale = T(0.1);
  int parameters = 0;  ///< K: inputs moved by the random walk; the rest are redrawn from ρ
};

/// The number of inputs ABC-MCMC moves by random walk: K for structured (directed) generators,
/// all inputs otherwise.
template <class Generator>
MYRIAD_HD int abc_parameter_count(const Generator& g) {
  if constexpr (generator_gram_structure<Generator> != GramStructure::dense) {
    return g.num_parameters();
  } else {
    return g.input_dim();
  }
}

/// Outcome of an ABC-MCMC transition.
template <class T>
struct AbcOutcome {
  T accept_prob;
  bool accepted;
  bool non_finite;
};

/// One pseudo-marginal ABC-MCMC transition (§11; Marjoram et al. 2003): propose
/// u₁* = u₁ + s·N(0, I), simulate afresh with u₂* ~ ρ₂, accept with
///   min{1, ρ₁(u₁*) k_ε(x̄ | x*) / (ρ₁(u₁) k_ε(x̄ | x))}.
/// ρ₁(u₁*)/ρ₁(u₁) is computed as ρ(u₁*, u₂)/ρ(u₁, u₂) with the old u₂, which equals it when the
/// prior factorises as ρ₁(u₁)ρ₂(u₂) (true of the directed generators).
template <class Generator, class T>
MYRIAD_HD AbcOutcome<T> abc_mcmc_transition(const Generator& g, const AbcChain<T>& c,
                                            const RandomStream& rng, std::uint32_t iteration,
                                            const AbcStep<T>& step) {
  const int n = g.input_dim();
  const int k = step.parameters;
  AbcOutcome<T> out{T(0), false, false};
  for (int i = 0; i < n; ++i) c.proposal[i] = c.position[i];
  const T log_prior_old = g.log_prior(c.proposal);
  for (int i = 0; i < k; ++i)
    c.proposal[i] += step.proposal_scale * rng.normal<T>(iteration, Purpose::momentum, i);
  const T log_prior_ratio = g.log_prior(c.proposal) - log_prior_old;
  if (k < n) {
    // Fresh noise inputs u₂* ~ ρ₂: the tail of a full prior draw.
    sample_generator_prior(g, rng, iteration, Purpose::user, c.prior_draw);
    for (int i = k; i < n; ++i) c.proposal[i] = c.prior_draw[i];
  }
  const T distance = abc_squared_distance(g, c.proposal, c.outputs);
  if (!myriad::isfinite(distance) || !myriad::isfinite(log_prior_ratio)) {
    out.non_finite = true;
    return out;
  }
  const T log_kernel = abc_log_kernel(step.kernel, distance, step.epsilon);
  const T log_ratio = log_prior_ratio + log_kernel - *c.log_kernel;
  out.accept_prob = log_ratio >= T(0) ? T(1) : myriad::exp(log_ratio);
  if (myriad::log(rng.uniform<T>(iteration, Purpose::accept, 0)) < log_ratio) {
    out.accepted = true;
    for (int i = 0; i < n; ++i) c.position[i] = c.proposal[i];
    *c.log_kernel = log_kernel;
  }
  return out;
}

/// Where the ABC targets' chains start: where constrained HMC's and ABC-MCMC's do, the
/// generator's point on (or near) the manifold g_x(u) = x̄, inside any kernel (a prior draw
/// without initialize()). A stiff simulator's prior draws, or points in [−2, 2]^N, almost never
/// come near the data (Lotka–Volterra's explode), and there the kernel's log density and gradient
/// overflow.
template <class Generator, class Vec>
MYRIAD_HD bool abc_initial_inputs(const Generator& generator, const RandomStream& rng,
                                  std::uint32_t attempt, Vec& u) {
  if constexpr (generator_has_initialize<Generator>) {
    return generator.initialize(rng, attempt, u);
  } else {
    sample_generator_prior(generator, rng, attempt, Purpose::initial_point, u);
    return true;
  }
}

/// What a density model over a generator's inputs u (Derived, by CRTP, holding a `generator`)
/// takes from the generator: its initial points (abc_initial_inputs) and its recorded
/// quantities. An empty base: the model stays an aggregate, {{}, generator, ...}.
template <class Derived>
struct GeneratorInputs {
  template <class Vec>
  MYRIAD_HD bool initial_point(const RandomStream& rng, std::uint32_t attempt, Vec& u) const {
    return abc_initial_inputs(self().generator, rng, attempt, u);
  }

  MYRIAD_HD int num_quantities() const { return recorded_quantity_count(self().generator); }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& u, Out& out) const {
    record_quantities(self().generator, u, out);
  }
  std::string quantity_name(int i) const { return recorded_quantity_name(self().generator, i); }

 private:
  MYRIAD_HD const Derived& self() const { return static_cast<const Derived&>(*this); }
};

/// The Gaussian-kernel ABC posterior in input space as a density model for ordinary HMC (§11):
///   log π_ε(u) = log ρ(u) − ‖x̄ − g_x(u)‖² / (2ε²),
/// differentiated by dual numbers (N passes of the generator). Outputs go to a per-call buffer
/// of at most kMaxOutputs entries.
template <class Generator>
struct AbcGaussianTarget : GeneratorInputs<AbcGaussianTarget<Generator>> {
  static constexpr int kMaxOutputs = 256;
  using value_type = typename Generator::value_type;
  Generator generator;
  value_type epsilon;

  MYRIAD_HD int dim() const { return generator.input_dim(); }

  template <class Vec>
  MYRIAD_HD auto log_density(const Vec& u) const {
    using S = std::decay_t<decltype(u[0])>;
    S outputs[kMaxOutputs];
    DenseVector<S> x{outputs, generator.output_dim()};
    generator.generate(u, x);
    S sum = S(0);
    for (int m = 0; m < generator.output_dim(); ++m) {
      const S r = x[m] - S(generator.observed(m));
      sum += r * r;
    }
    return generator.log_prior(u) - sum / S(2 * epsilon * epsilon);
  }
};

/// The ABC posterior in input space, π_ε(u) ∝ ρ(u) k_ε(x̄ | g_x(u)), as a density model with the
/// Gaussian prior factor N(0, I) (model/estimator.hpp) for the slice samplers: the constrained-HMC
/// papers' "ABC by elliptical slice sampling" baseline on the generator's inputs
/// (thesis-methods.md §9.4; `myriad sample --sampler elliptical-slice --abc-epsilon E` on a
/// generator). Its likelihood is log ρ(u) + ½‖u‖² + log k_ε: the kernel alone when ρ is the
/// standard normal of most generators, and still exact when it is not. A non-finite simulation
/// (an exploding Lotka–Volterra path) is outside every slice. Outputs go to a per-call buffer of
/// at most kMaxOutputs entries.
template <class Generator>
struct AbcSliceTarget : GeneratorInputs<AbcSliceTarget<Generator>> {
  static constexpr int kMaxOutputs = 256;
  using value_type = typename Generator::value_type;
  Generator generator;
  AbcKernel kernel;
  value_type epsilon;

  MYRIAD_HD int dim() const { return generator.input_dim(); }
  MYRIAD_HD value_type gaussian_prior_mean(int) const { return value_type(0); }
  MYRIAD_HD value_type gaussian_prior_sd(int) const { return value_type(1); }

  template <class Vec>
  MYRIAD_HD value_type log_likelihood(const Vec& u) const {
    value_type half_norm = value_type(0);
    for (int i = 0; i < dim(); ++i) half_norm += value_type(0.5) * u[i] * u[i];
    return log_density(u) + half_norm;
  }

  template <class Vec>
  MYRIAD_HD value_type log_density(const Vec& u) const {
    value_type outputs[kMaxOutputs];
    DenseVector<value_type> x{outputs, generator.output_dim()};
    const value_type distance = abc_squared_distance(generator, u, x);
    if (!myriad::isfinite(distance)) return -value_type(INFINITY);
    return generator.log_prior(u) + abc_log_kernel(kernel, distance, epsilon);
  }
};

/// Pseudo-marginal ABC as an estimator model (model/estimator.hpp) for PM-MH and APM: x are a
/// directed generator's parameters (its first num_parameters() inputs), u its noise inputs with
/// law N(0, I), and ε(x, u) = ρ(x, u) k_ε(x̄ | g_x(x, u)) / N(u; 0, I) is an unbiased estimate of
/// ρ₁(x) ∫ ρ₂(u) k_ε(x̄ | g_x(x, u)) du, the ABC posterior of the parameters (thesis-methods.md
/// §9.4: "pseudo-marginal ABC-MCMC on the summaries, run as APM MI+MH"). A simulation that is
/// not finite gives ε = 0. The recorded quantities are the generator's, read from the
/// parameters with the noise at 0: directed generators record functions of their parameters.
template <class Generator>
struct AbcEstimator {
  static constexpr int kMaxInputs = 256;
  static constexpr int kMaxOutputs = 256;
  static constexpr AuxiliaryLaw auxiliary_law = AuxiliaryLaw::normal;
  using value_type = typename Generator::value_type;
  Generator generator;
  AbcKernel kernel;
  value_type epsilon;

  MYRIAD_HD int dim() const { return generator.num_parameters(); }
  MYRIAD_HD int auxiliary_dim() const { return generator.input_dim() - generator.num_parameters(); }

  template <class X, class U>
  MYRIAD_HD value_type log_estimate(const X& x, const U& u) const {
    value_type inputs[kMaxInputs], outputs[kMaxOutputs];
    const int k = dim();
    value_type half_norm = value_type(0);
    for (int i = 0; i < k; ++i) inputs[i] = x[i];
    for (int i = 0; i < auxiliary_dim(); ++i) {
      const value_type v = u[i];
      inputs[k + i] = v;
      half_norm += value_type(0.5) * v * v;
    }
    const DenseVector<value_type> all{inputs, generator.input_dim()};
    DenseVector<value_type> simulated{outputs, generator.output_dim()};
    const value_type distance = abc_squared_distance(generator, all, simulated);
    if (!myriad::isfinite(distance)) return -value_type(INFINITY);
    return generator.log_prior(all) + half_norm + abc_log_kernel(kernel, distance, epsilon);
  }

  /// The parameters of the generator's start on (or near) the manifold; the noise of the first
  /// estimate is the sampler's draw from N(0, I).
  template <class Vec>
  MYRIAD_HD bool initial_point(const RandomStream& rng, std::uint32_t attempt, Vec& x) const {
    value_type inputs[kMaxInputs];
    DenseVector<value_type> all{inputs, generator.input_dim()};
    const bool ok = abc_initial_inputs(generator, rng, attempt, all);
    for (int i = 0; i < dim(); ++i) x[i] = inputs[i];
    return ok;
  }

  MYRIAD_HD int num_quantities() const { return recorded_quantity_count(generator); }
  template <class Vec, class Out>
  MYRIAD_HD void quantities(const Vec& x, Out& out) const {
    value_type inputs[kMaxInputs] = {};
    for (int i = 0; i < dim(); ++i) inputs[i] = x[i];
    const DenseVector<value_type> all{inputs, generator.input_dim()};
    record_quantities(generator, all, out);
  }
  std::string quantity_name(int i) const { return recorded_quantity_name(generator, i); }
};

}  // namespace myriad
