#pragma once
// Continuous tempering (thesis §5.4–5.5, Alg. 14–15; thesis-methods.md §8) as per-chain code,
// MYRIAD_HD like hmc_transition (mcmc/hmc.hpp), for the CPU's loops and the CUDA kernels alike.
//
// The joint on (x, β) ∈ R^D × [0, 1] (thesis (5.20)):
//
//   p(x, β) ∝ exp(−β φ(x) − β log ζ − (1 − β) ψ(x)),
//
// with φ = −log p̃ the target's energy (its density model's log_density, unnormalised: Z unknown),
// ψ = −log q the normalised base's (a Base offering log_density(x) = −E_q(x) without its
// normaliser log Z_q, and gradient(i, x_i); estimate/annealing_base.hpp's AnnealingBase is one),
// and ζ ≈ Z. With the energy gap Δ(x) = φ(x) + log ζ − ψ(x), the β-conditional is a truncated
// exponential, p(β | x) = Δ e^{−βΔ} / (1 − e^{−Δ}) (5.21), and
//
//   w₁(x) = p(β = 1 | x) = Δ / (e^Δ − 1)     weights the target,
//   w₀(x) = p(β = 0 | x) = Δ / (1 − e^{−Δ})  weights the base
//
// ((5.29)/(5.31); the printed algorithms swap the labels: erratum 14). Every chain sample x_n
// then serves both ends (estimate/tempering_estimate.hpp): Ẑ = ζ Σ w₁ / Σ w₀, E_p[f] by w₁, and
// E_q[f] by w₀, which must match the base's known moments.
//
//   Gibbs CT (Alg. 14)  an HMC update of x at the chain's β (TemperedDensity), then an exact
//                       draw of β from its conditional (draw_inverse_temperature)
//   CT-HMC (Alg. 15)    HMC on (x, u) with β = σ(u / s) (ContinuouslyTemperedDensity): both
//                       energies and gradients at every leapfrog step
//
// Everything here is per chain and branch-free in the data but for the sign of Δ, so chains in
// a warp stay converged (thesis-methods.md §10).

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

/// w₀ = p(β = 0 | x) and w₁ = p(β = 1 | x) (file comment).
template <class T>
struct TemperingWeights {
  T base;    ///< w₀
  T target;  ///< w₁
};

/// The weights at energy gap Δ: w₁ = Δ / expm1(Δ), w₀ = −Δ / expm1(−Δ), both 1 at Δ = 0 and exact
/// near it (expm1); at large |Δ| one tends to |Δ| and the other to |Δ| e^{−|Δ|} (0 beyond
/// underflow). A non-finite Δ gives NaN weights, which the caller counts.
template <class T>
MYRIAD_HD TemperingWeights<T> tempering_weights(T gap) {
  if (gap == T(0)) return {T(1), T(1)};
  return {-gap / myriad::expm1(-gap), gap / myriad::expm1(gap)};
}

/// A draw of β from p(β | x) ∝ e^{−βΔ} on [0, 1] by inversion of uniform u ∈ (0, 1]
/// (Alg. 14 with log1p/expm1): for Δ > 0, β = −log(1 + u·expm1(−Δ)) / Δ; for Δ < 0, 1 − β has
/// the same law with |Δ|; for Δ = 0, β = u.
template <class T>
MYRIAD_HD T draw_inverse_temperature(T gap, T u) {
  if (gap == T(0)) return u;
  const T magnitude = myriad::fabs(gap);
  const T from_end = -myriad::log1p(u * myriad::expm1(-magnitude)) / magnitude;
  const T beta = gap > T(0) ? from_end : T(1) - from_end;
  return beta < T(0) ? T(0) : (beta > T(1) ? T(1) : beta);  // rounding at the ends
}

/// The two energies' constants: Δ(x) = φ(x) + log ζ − ψ(x) = log q̃(x) − log p̃(x) + log ζ − log Z_q
/// from the unnormalised log densities of target (log p̃) and base (log q̃ = −E_q).
template <class T>
struct TemperingConstants {
  T log_zeta = T(0);             ///< log ζ, the guess of log Z
  T base_log_normaliser = T(0);  ///< log Z_q of the base's log_density

  MYRIAD_HD T gap(T target_log_density, T base_log_density) const {
    return base_log_density - target_log_density + log_zeta - base_log_normaliser;
  }
};

/// The x-conditional of the joint at a fixed β, exp(β log p̃(x) + (1 − β) log q̃(x)) (log ζ and
/// log Z_q drop out): a density model for HMC's update of x in Gibbs CT (and simulated
/// tempering). Its gradient is β ∇log p̃ + (1 − β) ∇log q̃: one target and one base gradient.
template <class Model, class Base>
struct TemperedDensity {
  using value_type = typename Model::value_type;
  const Model& target;
  const Base& base;
  value_type beta;

  MYRIAD_HD int dim() const { return target.dim(); }

  template <class Vec>
  MYRIAD_HD value_type log_density(const Vec& x) const {
    return beta * target.log_density(x) + (value_type(1) - beta) * base.log_density(x);
  }

  template <class Vec, class Grad>
  MYRIAD_HD value_type log_density_gradient(const Vec& x, Grad& g) const {
    const value_type lp = log_density_and_gradient(target, x, g);
    const value_type lq = base.log_density(x);
    for (int i = 0; i < dim(); ++i)
      g[i] = beta * g[i] + (value_type(1) - beta) * base.gradient(i, value_type(x[i]));
    return beta * lp + (value_type(1) - beta) * lq;
  }
};

/// log σ(v) = −softplus(−v) and log(1 − σ(v)) = −softplus(v), without overflow.
template <class T>
MYRIAD_HD T log_sigmoid(T v) {
  return -log1p_exp(-v);
}

/// CT-HMC's extended target on (x, u), D + 1 coordinates with u last, β = σ(u / s) (thesis
/// (5.24) without the momenta; s = `u_scale`, 1 in the Boltzmann experiments, 8 for IWAE):
///
///   log π(x, u) = β (log p̃ − log ζ) + (1 − β)(log q̃ − log Z_q) + log β + log(1 − β),
///   ∂/∂x       = β ∇log p̃ + (1 − β) ∇log q̃,
///   ∂/∂u       = (−β(1 − β) Δ + 1 − 2β) / s,
///
/// the last two terms of log π being the Jacobian of u ↦ β (the constant −log s dropped).
template <class Model, class Base>
struct ContinuouslyTemperedDensity {
  using value_type = typename Model::value_type;
  const Model& target;
  const Base& base;
  TemperingConstants<value_type> constants;
  value_type u_scale = value_type(1);

  MYRIAD_HD int dim() const { return target.dim() + 1; }

  /// β at the extended state's last coordinate.
  MYRIAD_HD value_type beta_at(value_type u) const {
    return value_type(1) / (value_type(1) + myriad::exp(-u / u_scale));
  }

  template <class Vec>
  MYRIAD_HD value_type log_density(const Vec& z) const {
    const value_type u = value_type(z[target.dim()]);
    return combine(target.log_density(z), base.log_density(z), u, beta_at(u));
  }

  template <class Vec, class Grad>
  MYRIAD_HD value_type log_density_gradient(const Vec& z, Grad& g) const {
    const int d = target.dim();
    const value_type u = value_type(z[d]);
    const value_type beta = beta_at(u);
    const value_type lp = log_density_and_gradient(target, z, g);  // writes g[0 … D)
    const value_type lq = base.log_density(z);
    for (int i = 0; i < d; ++i)
      g[i] = beta * g[i] + (value_type(1) - beta) * base.gradient(i, value_type(z[i]));
    const value_type gap = constants.gap(lp, lq);
    g[d] = (-beta * (value_type(1) - beta) * gap + value_type(1) - value_type(2) * beta) / u_scale;
    return combine(lp, lq, u, beta);
  }

 private:
  /// log π from the two log densities at x, u and β = σ(u / s) (computed once by the caller).
  MYRIAD_HD value_type combine(value_type lp, value_type lq, value_type u, value_type beta) const {
    const value_type v = u / u_scale;
    return beta * (lp - constants.log_zeta) +
           (value_type(1) - beta) * (lq - constants.base_log_normaliser) + log_sigmoid(v) +
           log_sigmoid(-v);
  }
};

/// What one continuous-tempering transition did: the HMC move's outcome, and the energy gap and
/// weights at the chain's x after it (the sample the estimators use).
template <class T>
struct TemperingOutcome {
  HmcOutcome<T> hmc;
  T gap;
  TemperingWeights<T> weights;
};

/// The target's and the base's log densities at a chain's x after an HMC move.
template <class T>
struct EndDensities {
  T target;  ///< log p̃(x)
  T base;    ///< log q̃(x)
};

/// EndDensities at the chain's x, the target's gradient left in chain.gradient for retemper.
template <class Model, class Base, class T>
MYRIAD_HD EndDensities<T> end_densities(const Model& target, const Base& base,
                                        const HmcChain<T>& chain) {
  const T lp = log_density_and_gradient(target, chain.position, chain.gradient);
  return {lp, base.log_density(chain.position)};
}

/// The chain's log density and gradient set to the tempered density's at `beta` (TemperedDensity)
/// from end_densities' values, chain.gradient holding the target's.
template <class Base, class T>
MYRIAD_HD void retemper(const Base& base, const HmcChain<T>& chain, const EndDensities<T>& ends,
                        T beta, int dim) {
  for (int i = 0; i < dim; ++i)
    chain.gradient[i] =
        beta * chain.gradient[i] + (T(1) - beta) * base.gradient(i, T(chain.position[i]));
  *chain.log_density = beta * ends.target + (T(1) - beta) * ends.base;
}

/// One Gibbs CT transition (Alg. 14): HMC on x at the chain's β (TemperedDensity), then β drawn
/// from p(β | x) (draw_inverse_temperature with uniform Purpose::temperature), and the chain's
/// log density and gradient re-tempered at the new β (one target gradient evaluation besides the
/// trajectory's).
template <class Model, class Base, class T>
MYRIAD_HD TemperingOutcome<T> gibbs_ct_transition(const Model& target, const Base& base,
                                                  const TemperingConstants<T>& constants,
                                                  const HmcChain<T>& chain, T& beta,
                                                  const RandomStream& rng, std::uint32_t iteration,
                                                  const HmcStep<T>& step) {
  const TemperedDensity<Model, Base> tempered{target, base, beta};
  TemperingOutcome<T> out{hmc_transition(tempered, chain, rng, iteration, step), T(0), {}};
  const EndDensities<T> ends = end_densities(target, base, chain);
  out.gap = constants.gap(ends.target, ends.base);
  out.weights = tempering_weights(out.gap);
  if (myriad::isfinite(out.gap))
    beta = draw_inverse_temperature(out.gap, rng.uniform<T>(iteration, Purpose::temperature, 0));
  retemper(base, chain, ends, beta, target.dim());
  return out;
}

/// One CT-HMC transition (Alg. 15): HMC on the extended state (x, u) of `extended`, then the
/// gap and weights at its x (the target's log density evaluated once more there).
template <class Model, class Base, class T>
MYRIAD_HD TemperingOutcome<T> ct_hmc_transition(
    const ContinuouslyTemperedDensity<Model, Base>& extended, const HmcChain<T>& chain,
    const RandomStream& rng, std::uint32_t iteration, const HmcStep<T>& step) {
  TemperingOutcome<T> out{hmc_transition(extended, chain, rng, iteration, step), T(0), {}};
  out.gap = extended.constants.gap(extended.target.log_density(chain.position),
                                   extended.base.log_density(chain.position));
  out.weights = tempering_weights(out.gap);
  return out;
}

}  // namespace myriad
