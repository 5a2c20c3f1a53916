#pragma once
// The per-chain bodies of the tempering samplers (Gibbs CT, CT-HMC, simulated tempering;
// estimate/continuous_tempering.hpp, simulated_tempering.hpp) in a header every compiler can
// include: the CPU backend (backend/cpu_tempering_backend.hpp) is an OpenMP loop over them and
// the CUDA kernels (kernels/tempering_kernels.cuh) grid-stride loops over them (DESIGN.md rule 1),
// on the same layouts as HMC's ([chain][coordinate] on the CPU, [coordinate][chain] on a GPU).
//
// A chain's run: start from the base (x ~ q, β = 0, CT-HMC's u = initial_u, simulated
// tempering's index 0), `warmup` discarded transitions, then `draws` kept ones, each adding the
// chain's x with its weights to the chain's own sums (estimate/tempering_estimate.hpp) and its β
// to the trace, [draw][chain]. Every random number is keyed by (seed, chain, iteration, purpose),
// so a run is the same on either backend and in any number of calls.

#include <cstdint>
#include <type_traits>
#include <utility>

#include "myriad/core/ensemble.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/detail/hmc_chain_bodies.hpp"
#include "myriad/estimate/annealing_target.hpp"
#include "myriad/estimate/continuous_tempering.hpp"
#include "myriad/estimate/simulated_tempering.hpp"
#include "myriad/estimate/tempering_estimate.hpp"
#include "myriad/estimate/tempering_method.hpp"
#include "myriad/mcmc/hmc.hpp"
#include "myriad/model/concept.hpp"

namespace myriad {

/// What every chain of a tempering run shares; pointers are visible where the chains run.
template <class T>
struct TemperingSettings {
  TemperMethod method = TemperMethod::gibbs_ct;
  std::uint64_t seed = 1;
  HmcStep<T> step;                  ///< δt, L and a unit diagonal metric of the moved coordinates
  TemperingConstants<T> constants;  ///< log ζ and the base's log Z_q
  TemperatureLadder<T> ladder;      ///< simulated tempering's β_0 … β_K
  T u_scale = T(1);                 ///< CT-HMC: β = σ(u / s)
  T initial_u = T(-10);             ///< CT-HMC: u at the start
  int warmup = 0;                   ///< transitions discarded before the kept ones
};

/// The ensemble's state and outputs, all with one layout.
template <class T>
struct TemperingEnsembleView {
  HmcEnsembleView<T> hmc;           ///< x, with u last for CT-HMC (its `tree` unused)
  T* beta = nullptr;                ///< per chain: the current β (simulated tempering's β_k)
  int* index = nullptr;             ///< per chain: simulated tempering's k
  TemperingSumsView sums;           ///< per chain: the estimators' sums of TemperedQuantities of x
  T* beta_trace = nullptr;          ///< [draw][chain]: β after each kept transition
  std::int64_t* dropped = nullptr;  ///< per chain: kept samples whose weights were not finite
};

/// The functions of x the estimators sum (2 D of them): x_i, then x_i² (the moments' second).
template <class T>
struct TemperedQuantities {
  ChainVector<T> x;
  int dim;
  MYRIAD_HD T operator[](int q) const { return q < dim ? x[q] : x[q - dim] * x[q - dim]; }
};

/// The density tempered: the target's only problem (a batch target's first, estimate/
/// annealing_target.hpp; myriad::temper runs targets of one problem).
template <class Target>
using TemperedTarget = std::decay_t<decltype(problem_target(std::declval<const Target&>(), 0))>;

/// Starts chain c (file comment); true when its log density and gradient are finite there.
template <class Target, class Base, class T>
MYRIAD_HD bool start_tempering_chain(const Target& batch, const Base& base,
                                     const TemperingSettings<T>& settings,
                                     const TemperingEnsembleView<T>& state, std::int64_t c) {
  using Density = TemperedTarget<Target>;
  const Density& target = problem_target(batch, 0);
  const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
  const HmcChain<T> chain = state.hmc.chain(c);
  base.sample(rng, 0, Purpose::initial_point, chain.position);
  state.beta[c] = T(0);
  state.index[c] = 0;
  if (settings.method == TemperMethod::ct_hmc) {
    const ContinuouslyTemperedDensity<Density, Base> extended{target, base, settings.constants,
                                                              settings.u_scale};
    chain.position[target.dim()] = settings.initial_u;
    state.beta[c] = extended.beta_at(settings.initial_u);
    return evaluate_chain(extended, chain.position, chain.gradient, chain.log_density);
  }
  const TemperedDensity<Density, Base> tempered{target, base, T(0)};
  return evaluate_chain(tempered, chain.position, chain.gradient, chain.log_density);
}

/// Transitions first … first + count − 1 of chain c by `Method` (0-based; those from
/// settings.warmup on are kept: added to the sums and the trace at draw i − warmup). Returns the
/// HMC counters of the kept transitions. The method is a template parameter so that a kernel
/// holds only its own transition's registers. At sm_90 with ptxas's default register bound the
/// one loop over all three spilled 280 bytes per thread; split, most still spill 220–250 (one of
/// the Boltzmann relaxation's none), and none with MYRIAD_CHAIN_MIN_BLOCKS=1, as for HMC's
/// kernels (bench/results/kernel-resources-sm90.md; which is faster awaits a GPU).
template <TemperMethod Method, class Target, class Base, class T>
MYRIAD_HD HmcChainTotals tempering_chain_iterations(const Target& batch, const Base& base,
                                                    const TemperingSettings<T>& settings,
                                                    const TemperingEnsembleView<T>& state,
                                                    std::int64_t c, int first, int count) {
  using Density = TemperedTarget<Target>;
  const Density& target = problem_target(batch, 0);
  const RandomStream rng(settings.seed, static_cast<std::uint64_t>(c));
  const HmcChain<T> chain = state.hmc.chain(c);
  const std::int64_t chains = state.hmc.position.chains;
  T beta = state.beta[c];
  int index = state.index[c];
  HmcChainTotals totals;
  for (int i = first; i < first + count; ++i) {
    const auto iteration = static_cast<std::uint32_t>(i + 1);
    TemperingOutcome<T> moved;
    if constexpr (Method == TemperMethod::gibbs_ct) {
      moved = gibbs_ct_transition(target, base, settings.constants, chain, beta, rng, iteration,
                                  settings.step);
    } else if constexpr (Method == TemperMethod::ct_hmc) {
      const ContinuouslyTemperedDensity<Density, Base> extended{target, base, settings.constants,
                                                                settings.u_scale};
      moved = ct_hmc_transition(extended, chain, rng, iteration, settings.step);
      beta = extended.beta_at(T(chain.position[target.dim()]));
    } else {
      moved = simulated_tempering_transition(target, base, settings.constants, settings.ladder,
                                             chain, index, rng, iteration, settings.step);
      beta = settings.ladder.beta[index];
    }
    if (i < settings.warmup) continue;
    totals.add(moved.hmc);
    if (!state.sums.add(c, moved.weights, TemperedQuantities<T>{chain.position, target.dim()}))
      ++state.dropped[c];  // the gap was not finite
    state.beta_trace[static_cast<std::int64_t>(i - settings.warmup) * chains + c] = beta;
  }
  state.beta[c] = beta;
  state.index[c] = index;
  return totals;
}

/// f(std::integral_constant<TemperMethod, method>{}): a run-time method as a compile-time one,
/// for the backends' calls and launches of tempering_chain_iterations (host code).
template <class F>
auto with_tempering_method(TemperMethod method, const F& f) {
  switch (method) {
    case TemperMethod::ct_hmc:
      return f(std::integral_constant<TemperMethod, TemperMethod::ct_hmc>{});
    case TemperMethod::simulated_tempering:
      return f(std::integral_constant<TemperMethod, TemperMethod::simulated_tempering>{});
    default:
      return f(std::integral_constant<TemperMethod, TemperMethod::gibbs_ct>{});
  }
}

}  // namespace myriad
