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
};

}  // namespace myriad
