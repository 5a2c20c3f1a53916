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
// restart, is the cure: the check restarts no unmoved chain.
//
// Under HMC a chain also counts as stranded when its log density is far below the ensemble's
// (far_behind_chains): it moves, but only because the ensemble's step has shrunk to what its
// stiffness allows, and so the step of every chain with it. Such chains restart whatever their
// number; the scheduler then finds the step size and the trajectory length afresh (run_hmc.cpp).

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
  std::int64_t stranded = 0;    ///< chains flagged stranded at this check
  std::int64_t far_behind = 0;  ///< of which far behind the ensemble (far_behind_chains)
  bool restart = false;         ///< whether the stranded chains restart (source has moves)
  /// Unmoved chains were half or more of the ensemble and stayed where they were.
  bool unmoved_kept = false;
};

/// Flags the chains whose log density is bitwise the same in both readings: they have not
/// moved in between.
template <class T>
std::vector<bool> unmoved_chains(const std::vector<T>& previous, const std::vector<T>& current) {
  std::vector<bool> unmoved(current.size());
  for (std::size_t c = 0; c < current.size(); ++c) unmoved[c] = current[c] == previous[c];
  return unmoved;
}

/// HMC: how far (in log density) below the ensemble's upper quartile a chain must lie to count
/// as stranded although it moves: 100 + 10·D. Near a D-dimensional posterior that is close to
/// normal, −log p is χ²_D/2 above its minimum (mean D/2, sd √(D/2)), so no chain of the
/// posterior's bulk is that far behind the upper quartile (for D = 4, 140 against an sd of 1.4;
/// for D = 1000, 10 100 against 22). A chain that is has not reached the posterior: on
/// posteriordb's arma11, the chains that Stan's starts put at |θ| > 1 (an explosive moving-average
/// recursion over 200 observations: log p near −10⁶⁰) still accept steps of 10⁻²⁷, at which the
/// ensemble's harmonic-mean step size had settled for every chain (docs/tuning.md).
inline double far_behind_log_density(int dim) { return 100.0 + 10.0 * dim; }

/// Flags the chains whose log density is more than far_behind_log_density(dim) below the
/// ensemble's upper quartile (the ⌈3n/4⌉-th smallest). At least a quarter of the chains are never
/// flagged, so healthy sources remain.
template <class T>
std::vector<bool> far_behind_chains(const std::vector<T>& log_density, int dim) {
  std::vector<T> sorted(log_density);
  if (sorted.empty()) return {};
  const std::size_t quartile = std::min(sorted.size() - 1, (3 * sorted.size()) / 4);
  std::nth_element(sorted.begin(), sorted.begin() + quartile, sorted.end());
  const double bar = static_cast<double>(sorted[quartile]) - far_behind_log_density(dim);
  std::vector<bool> behind(log_density.size());
  for (std::size_t c = 0; c < log_density.size(); ++c)
    behind[c] = static_cast<double>(log_density[c]) < bar;
  return behind;
}

/// Plans the restarts of the chains flagged stranded (see the file comment). The healthy chain
/// that stranded chain c restarts from is drawn from RandomStream(seed, c) at iteration `check`
/// with Purpose::restart, so the plan is the same on every device and thread count.
///
/// `unmoved` chains restart only when they are fewer than half of the ensemble; `far_behind`
/// ones (far_behind_chains; empty: none) restart whatever their number, since the upper quartile
/// they are measured against is set by chains that are not. Sources are the chains neither
/// unmoved nor far behind.
inline RestartPlan plan_restarts(const std::vector<bool>& unmoved,
                                 const std::vector<bool>& far_behind, std::uint64_t seed,
                                 std::uint32_t check) {
  const auto chains = static_cast<std::int64_t>(unmoved.size());
  const auto behind = [&](std::int64_t c) { return !far_behind.empty() && far_behind[c]; };
  std::int64_t unmoved_count = 0;
  for (std::int64_t c = 0; c < chains; ++c) unmoved_count += unmoved[c] ? 1 : 0;
  const bool restart_unmoved = 2 * unmoved_count < chains;
  RestartPlan plan;
  plan.source.resize(unmoved.size());
  plan.unmoved_kept = unmoved_count > 0 && !restart_unmoved;
  std::vector<bool> stranded(unmoved.size());
  std::vector<std::int64_t> healthy;
  for (std::int64_t c = 0; c < chains; ++c) {
    plan.source[c] = c;
    stranded[c] = behind(c) || (restart_unmoved && unmoved[c]);
    if (unmoved[c] || behind(c)) ++plan.stranded;
    if (behind(c)) ++plan.far_behind;
    if (!unmoved[c] && !behind(c)) healthy.push_back(c);
  }
  plan.restart =
      !healthy.empty() && std::find(stranded.begin(), stranded.end(), true) != stranded.end();
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

/// The plan when only unmoved chains count as stranded.
inline RestartPlan plan_restarts(const std::vector<bool>& stranded, std::uint64_t seed,
                                 std::uint32_t check) {
  return plan_restarts(stranded, {}, seed, check);
}

}  // namespace myriad
