#pragma once
// Per-chain step back-off for the warm-up of an ensemble with one shared step size.
//
// Dual averaging on the ensemble's pooled acceptance tunes δt for the chains already in the
// typical set. A chain initialised far out in the tails can sit where every trajectory at that
// δt fails (a projection that does not converge, a simulator that overflows) and never move: on
// Lotka–Volterra, seed 7, 128 chains, one superchain of 8 chains stayed at its initial point
// through 300 warm-up and 1000 sampling iterations at δt ≈ 1 while δt = 0.25 brings the same
// chains to the posterior in about 15 iterations. The papers warm up "with a smaller δt and
// shorter trajectories" (constrained-hmc.md §7) for this reason; a single smaller δt for the
// whole ensemble would slow every chain to help a few. Instead, during warm-up only, each chain
// runs at δt · 2^−h with its own h: a transition that fails or whose acceptance probability is
// negligible halves that chain's step (h + 1), an accepted one doubles it back (h − 1, down to
// 0), so a stuck chain backs off until it moves and returns to the ensemble's δt once it moves
// freely. Chains in the typical set almost never fail, so they stay at h = 0 and the pooled
// acceptance that the step-size adaptation sees is theirs. Sampling always uses h = 0: every
// chain then runs the same kernel with the same δt, and the warm-up's draws are discarded.
//
// Like Stan's per-chain step sizes, but keeping one step size for sampling (lockstep chains);
// N_s stays shared, so the chains still run in lockstep during warm-up.
//
// One name throughout: the mechanism is the step back-off (the setting step_back_off, the CLI's
// --no-step-back-off to turn it off); its state in a chain is h, counted as step halvings
// (step_halvings(), kMaxStepHalvings), and a chain with h > 0 has backed off
// (warmup_backed_off_chains).

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/mcmc/chain_status.hpp"

namespace myriad {

/// The largest back-off: δt / 2^12.
constexpr int kMaxStepHalvings = 12;

/// An acceptance probability below this counts as a failed transition for the back-off (an
/// energy error above log 100 ≈ 4.6: the step is far too large for where the chain is).
constexpr double kNegligibleAcceptProb = 0.01;

/// The step scale 2^−h of a chain with h halvings.
template <class T>
MYRIAD_HD inline T step_back_off_scale(int halvings) {
  return T(1) / T(std::uint32_t{1} << halvings);  // exact: a power of two, h ≤ kMaxStepHalvings
}

/// A chain's halvings after a transition with this outcome (see the file comment).
MYRIAD_HD inline std::uint8_t next_step_halvings(std::uint8_t halvings, bool accepted,
                                                 std::uint32_t status, double accept_prob) {
  if (accepted) return halvings > 0 ? static_cast<std::uint8_t>(halvings - 1) : halvings;
  if (status != kStatusOk || accept_prob < kNegligibleAcceptProb) {
    return halvings < kMaxStepHalvings ? static_cast<std::uint8_t>(halvings + 1) : halvings;
  }
  return halvings;
}

/// The same from a transition's outcome (ChmcOutcome: accepted, status, accept_prob).
template <class Outcome>
MYRIAD_HD inline std::uint8_t next_step_halvings(std::uint8_t halvings, const Outcome& out) {
  return next_step_halvings(halvings, out.accepted, out.status,
                            static_cast<double>(out.accept_prob));
}

}  // namespace myriad
