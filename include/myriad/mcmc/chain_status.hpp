#pragma once
// Per-chain outcomes of a transition (DESIGN.md, rule 8). Device code never throws; it reports
// these flags, the backend counts them per chain, and run.json reports the totals.

#include <cstdint>

namespace myriad {

/// Bit flags describing what happened to one chain in one transition.
enum ChainStatus : std::uint32_t {
  kStatusOk = 0,
  kStatusDivergent = 1u << 0,  ///< energy error above the divergence threshold
  kStatusNonFinite = 1u << 1,  ///< log density or energy became NaN/inf along the trajectory
  // Constrained HMC (constrained-hmc.md §7); each rejects the transition.
  kStatusNotConverged = 1u << 2,     ///< a position projection hit its iteration cap
  kStatusNotReversible = 1u << 3,    ///< the reverse sub-step failed or missed the start point
  kStatusCholeskyFailure = 1u << 4,  ///< J Jᵀ lost positive definiteness (rank loss)
  // Slice sampling (mcmc/slice.hpp): the update kept the current point (valid, counted).
  kStatusSliceCapped = 1u << 5,  ///< a shrink loop reached its cap
};

}  // namespace myriad
