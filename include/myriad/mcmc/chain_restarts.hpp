#pragma once
// Stranded chains and their restarts during an ensemble's warm-up (issue 22).
//
// An ensemble shares one step size. A chain that starts where the density is far stiffer than
// at the posterior (on a regression, a small noise scale with coefficients far from the data:
// curvature 1e8 where the posterior's is 1) rejects every proposal at the ensemble's step and
// never moves; and because the metric is the variance across chains, the stranded chains, far
// from the others, dominate it. Stan adapts each chain on its own draws and is not affected.
//
// The check: a chain whose log density is bitwise the same as at the previous check has rejected
// every proposal in between (a continuous density repeats a value only by staying put); under
// constrained HMC, so is a chain whose step back-off is deep (kStrandedStepHalvings). When
// such chains are fewer than half of the ensemble, each restarts from the current point of a
// healthy chain drawn uniformly at random; two chains at one point part at their next
// transition, whose momenta and accept draws are keyed by the chain. When half or more are
// stuck, the step size is too large for the ensemble as a whole and dual averaging, not a
// restart, is the cure: the check restarts nothing.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "myriad/core/random.hpp"

namespace myriad {

/// Warm-up iterations between two checks for stranded chains: Stan's base metric window. At the
/// ensemble's adapted acceptance (0.8) a healthy chain stays put through all of them with
/// probability 0.2^25 ≈ 3e-18.
inline constexpr int kRestartCheckIterations = 25;

/// Constrained HMC: a chain whose step back-off has halved its step this many times or more at
/// a check (δt/8 or less) counts as stranded too. It moves only by creeping at a fraction of the
/// ensemble's step, and sampling runs every chain at the full step, where it would not move at
/// all (on Lotka–Volterra at 4096 chains, 151 chains crept through warm-up this way, up to δt/64,
/// and then never moved in 200 draws). One or two halvings are normal: a single hopeless
/// proposal late in warm-up puts a healthy chain there (docs/constrained-hmc.md).
inline constexpr int kStrandedStepHalvings = 3;

/// The outcome of one check for stranded chains.
struct RestartPlan {
  /// source[c]: the chain whose point chain c takes (c itself: stays), HmcBackend::copy_chains.
  std::vector<std::int64_t> source;
  std::int64_t stranded = 0;  ///< chains flagged stranded at this check
  bool restart = false;       ///< whether the stranded chains restart (source has moves)
};

/// Flags the chains whose log density is bitwise the same in both readings: they have not
/// moved in between.
template <class T>
std::vector<bool> unmoved_chains(const std::vector<T>& previous, const std::vector<T>& current) {
  std::vector<bool> unmoved(current.size());
  for (std::size_t c = 0; c < current.size(); ++c) unmoved[c] = current[c] == previous[c];
  return unmoved;
}

/// Plans the restarts of the chains flagged stranded (see the file comment). The healthy chain
/// that stranded chain c restarts from is drawn from RandomStream(seed, c) at iteration `check`
/// with Purpose::restart, so the plan is the same on every device and thread count.
inline RestartPlan plan_restarts(const std::vector<bool>& stranded, std::uint64_t seed,
                                 std::uint32_t check) {
  const auto chains = static_cast<std::int64_t>(stranded.size());
  RestartPlan plan;
  plan.source.resize(stranded.size());
  std::vector<std::int64_t> healthy;
  for (std::int64_t c = 0; c < chains; ++c) {
    plan.source[c] = c;
    if (stranded[c]) {
      ++plan.stranded;
    } else {
      healthy.push_back(c);
    }
  }
  plan.restart = plan.stranded > 0 && 2 * plan.stranded < chains;
  if (!plan.restart) return plan;
  const auto count = static_cast<double>(healthy.size());
  for (std::int64_t c = 0; c < chains; ++c) {
    if (!stranded[c]) continue;
    const double u = RandomStream(seed, static_cast<std::uint64_t>(c))
                         .uniform<double>(check, Purpose::restart, 0);
    const auto pick = std::min(static_cast<std::size_t>(u * count), healthy.size() - 1);
    plan.source[c] = healthy[pick];
  }
  return plan;
}

}  // namespace myriad
