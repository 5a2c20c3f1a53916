#pragma once
// The arguments every many-chain backend (HMC, constrained HMC; CPU and CUDA) checks, in one
// place, so that the same invalid input is refused by every backend with the same message.

#include <cstdint>
#include <vector>

#include "myriad/core/error.hpp"

namespace myriad {

/// chains in 1 … 2^32 − 1: the chain index keys a 32-bit word of the Philox counter.
inline void check_chain_count(std::int64_t chains) {
  MYRIAD_EXPECTS(chains > 0, "chains must be positive, got ", chains);
  MYRIAD_EXPECTS(chains <= 0xFFFFFFFFll, "at most 2^32 - 1 chains are supported, got ", chains);
}

/// chains_per_init ≥ 1 (the superchains of initialize()).
inline void check_chains_per_init(std::int64_t chains_per_init) {
  MYRIAD_EXPECTS(chains_per_init >= 1, "chains_per_init must be >= 1, got ", chains_per_init);
}

/// num_iterations ≥ 0 (run()).
inline void check_iteration_count(int num_iterations) {
  MYRIAD_EXPECTS(num_iterations >= 0, "num_iterations must be >= 0, got ", num_iterations);
}

/// set_positions(): dim values per chain.
template <class T>
void check_position_count(const std::vector<T>& positions, std::int64_t chains, int dim) {
  MYRIAD_EXPECTS(static_cast<std::int64_t>(positions.size()) == chains * dim,
                 "set_positions: ", positions.size(), " values for ", chains,
                 " chains of dimension ", dim);
}

/// A checkpoint's chain state (HmcChainState) for `chains` chains of dimension `dim`: positions
/// and gradients chains × dim values, log densities one per chain.
template <class State>
void check_chain_state(const State& state, std::int64_t chains, int dim) {
  const auto values = static_cast<std::size_t>(chains) * static_cast<std::size_t>(dim);
  MYRIAD_EXPECTS(state.position.size() == values && state.gradient.size() == values &&
                     state.log_density.size() == static_cast<std::size_t>(chains),
                 "restore_chain_state: a state of ", state.log_density.size(), " chains (",
                 state.position.size(), " position values) for ", chains, " chains of dimension ",
                 dim);
}

/// The sources of copy_chains(): one per chain, each a chain index, and no source itself moved
/// (source[source[c]] == source[c]), so that every copy reads a point no other copy writes and
/// the copies may run in any order.
inline void check_chain_sources(const std::vector<std::int64_t>& source, std::int64_t chains) {
  MYRIAD_EXPECTS(static_cast<std::int64_t>(source.size()) == chains, "copy_chains: ", source.size(),
                 " sources for ", chains, " chains");
  for (std::int64_t c = 0; c < chains; ++c) {
    const std::int64_t s = source[static_cast<std::size_t>(c)];
    MYRIAD_EXPECTS(s >= 0 && s < chains, "copy_chains: chain ", c, "'s source ", s,
                   " is not a chain");
    MYRIAD_EXPECTS(source[static_cast<std::size_t>(s)] == s, "copy_chains: chain ", c,
                   " copies chain ", s, ", which itself moves to chain ",
                   source[static_cast<std::size_t>(s)]);
  }
}

}  // namespace myriad
