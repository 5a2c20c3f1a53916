#pragma once
// Simulated tempering (thesis §2.3.3, Alg. 7, as used in Ch. 5; thesis-methods.md §7) as
// per-chain code beside continuous tempering (estimate/continuous_tempering.hpp), whose pieces it
// shares: the joint over x and an index k of inverse temperatures 0 = β_0 < … < β_K = 1,
//
//   p(x, k) ∝ exp(−β_k φ(x) − (1 − β_k) ψ(x) + ω_k),   ω_k = −β_k log ζ (Ch. 5's choice),
//
// so that p(k | x) ∝ exp(−β_k Δ(x)) with CT's energy gap Δ: the discrete version of CT's
// β-conditional. An iteration is an HMC update of x at β_k (TemperedDensity) and a Gibbs draw of
// k from p(k | x) (O(K): a log-sum-exp pass and an inverse-CDF pass). The Rao–Blackwellised
// estimators (2.74), (5.57) use p(0 | x) and p(K | x) where CT uses w₀ and w₁:
// Ẑ = e^{ω_0 − ω_K} Σ p(K | x_n) / Σ p(0 | x_n) = ζ Σ p(K | x_n) / Σ p(0 | x_n), so
// estimate/tempering_estimate.hpp serves both.

#include <cmath>
#include <cstdint>
#include <vector>

#include "myriad/core/enum_names.hpp"
#include "myriad/core/error.hpp"
#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"
#include "myriad/estimate/continuous_tempering.hpp"
#include "myriad/mcmc/hmc.hpp"

namespace myriad {

enum class TemperatureSchedule { linear, sigmoidal };

inline constexpr EnumName<TemperatureSchedule> kTemperatureScheduleNames[] = {
    {TemperatureSchedule::linear, "linear"},
    {TemperatureSchedule::sigmoidal, "sigmoidal"},
    {TemperatureSchedule::sigmoidal, "sigmoid"}};

inline const char* to_string(TemperatureSchedule schedule) {
  return enum_name(kTemperatureScheduleNames, schedule);
}

/// The `count` inverse temperatures β_0 = 0 < … < β_{count−1} = 1 (count ≥ 2): linear, β_k = k/K,
/// or sigmoidal (thesis (5.53)): β̃_k = σ(4(2k − K)/K), β_k = (β̃_k − β̃_0)/(β̃_K − β̃_0), with
/// K = count − 1.
inline std::vector<double> inverse_temperatures(int count, TemperatureSchedule schedule) {
  MYRIAD_EXPECTS(count >= 2, "a tempering schedule needs at least 2 inverse temperatures, got ",
                 count);
  const int k_max = count - 1;
  std::vector<double> beta(static_cast<std::size_t>(count));
  const auto raw = [k_max](int k) { return 1 / (1 + std::exp(-4.0 * (2.0 * k - k_max) / k_max)); };
  for (int k = 0; k <= k_max; ++k) {
    beta[static_cast<std::size_t>(k)] = schedule == TemperatureSchedule::linear
                                            ? static_cast<double>(k) / k_max
                                            : (raw(k) - raw(0)) / (raw(k_max) - raw(0));
  }
  beta.front() = 0;
  beta.back() = 1;
  return beta;
}

/// Throws myriad::invalid_argument unless `beta` is a schedule: at least 2 values, strictly
/// increasing, from 0 to 1.
inline void check_inverse_temperatures(const std::vector<double>& beta) {
  MYRIAD_EXPECTS(beta.size() >= 2,
                 "a tempering schedule needs at least 2 inverse temperatures, "
                 "got ",
                 beta.size());
  MYRIAD_EXPECTS(beta.front() == 0 && beta.back() == 1,
                 "a tempering schedule runs from 0 to 1, got ", beta.front(), " to ", beta.back());
  for (std::size_t k = 1; k < beta.size(); ++k)
    MYRIAD_EXPECTS(beta[k] > beta[k - 1], "a tempering schedule must increase: beta[", k,
                   "] = ", beta[k], " after ", beta[k - 1]);
}

/// The index conditional p(k | x) ∝ exp(−β_k Δ) over a device-visible schedule of `count` values.
template <class T>
struct TemperatureLadder {
  const T* beta = nullptr;
  int count = 0;

  /// log Σ_k exp(−β_k Δ), shifted by its largest term (at β_0 = 0 or β_K = 1: −β Δ is monotone).
  MYRIAD_HD T log_normaliser(T gap) const {
    const T top = gap > T(0) ? T(0) : -gap;
    T sum = T(0);
    for (int k = 0; k < count; ++k) sum += myriad::exp(-beta[k] * gap - top);
    return top + myriad::log(sum);
  }

  /// p(0 | x) and p(K | x), the simulated-tempering estimators' weights.
  MYRIAD_HD TemperingWeights<T> end_weights(T gap) const {
    const T log_z = log_normaliser(gap);
    return {myriad::exp(-log_z), myriad::exp(-gap - log_z)};
  }

  /// A draw of k from p(k | x) by inversion of uniform u ∈ (0, 1]: the first k whose cumulative
  /// probability reaches u (the last index if rounding leaves the total short of u).
  MYRIAD_HD int draw(T gap, T u) const {
    const T log_z = log_normaliser(gap);
    T cumulative = T(0);
    for (int k = 0; k < count - 1; ++k) {
      cumulative += myriad::exp(-beta[k] * gap - log_z);
      if (cumulative >= u) return k;
    }
    return count - 1;
  }
};

/// One simulated-tempering transition: HMC on x at β_k (TemperedDensity), then k drawn from
/// p(k | x) (uniform Purpose::temperature), the chain's log density and gradient set to the
/// tempered density's at the new β_k. Returns the HMC outcome, the gap and p(0 | x), p(K | x).
template <class Model, class Base, class T>
MYRIAD_HD TemperingOutcome<T> simulated_tempering_transition(
    const Model& target, const Base& base, const TemperingConstants<T>& constants,
    const TemperatureLadder<T>& ladder, const HmcChain<T>& chain, int& index,
    const RandomStream& rng, std::uint32_t iteration, const HmcStep<T>& step) {
  const TemperedDensity<Model, Base> tempered{target, base, ladder.beta[index]};
  TemperingOutcome<T> out{hmc_transition(tempered, chain, rng, iteration, step), T(0), {}};
  const EndDensities<T> ends = end_densities(target, base, chain);
  out.gap = constants.gap(ends.target, ends.base);
  out.weights = ladder.end_weights(out.gap);
  if (myriad::isfinite(out.gap))
    index = ladder.draw(out.gap, rng.uniform<T>(iteration, Purpose::temperature, 0));
  retemper(base, chain, ends, ladder.beta[index], target.dim());
  return out;
}

}  // namespace myriad
