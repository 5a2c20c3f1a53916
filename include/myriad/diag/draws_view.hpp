#pragma once
// Non-owning view of one scalar quantity's draws from many chains: the input of every
// diagnostic in myriad/diag. Strides let one view address a quantity inside the sampler's
// [chain][draw][quantity] output without copying it.

#include <cstdint>

#include "myriad/core/error.hpp"

namespace myriad::diag {

/// Draws of one scalar quantity: element (chain, draw) sits at
/// data[chain * chain_stride + draw * draw_stride].
struct DrawsView {
  const double* data = nullptr;
  int64_t chains = 0;
  int64_t draws = 0;  ///< draws per chain
  int64_t chain_stride = 0;
  int64_t draw_stride = 0;

  /// The draw `draw` of chain `chain`; no bounds check.
  double operator()(int64_t chain, int64_t draw) const {
    return data[chain * chain_stride + draw * draw_stride];
  }

  /// Total number of draws, chains × draws.
  int64_t size() const { return chains * draws; }
};

/// View of quantity `q` in a C-order array [chain][draw][quantity], the layout the samplers
/// write: chain_stride = num_draws · num_quantities, draw_stride = num_quantities.
inline DrawsView quantity_view(const double* draws, int64_t chains, int64_t num_draws,
                               int64_t num_quantities, int64_t q) {
  MYRIAD_EXPECTS(chains >= 0 && num_draws >= 0, "chains and num_draws must be non-negative, got ",
                 chains, " and ", num_draws);
  MYRIAD_EXPECTS(q >= 0 && q < num_quantities, "quantity index ", q, " is outside [0, ",
                 num_quantities, ")");
  return DrawsView{draws + q, chains, num_draws, num_draws * num_quantities, num_quantities};
}

/// View of a C-order array [chain][draw] holding a single quantity.
inline DrawsView chain_major_view(const double* draws, int64_t chains, int64_t num_draws) {
  MYRIAD_EXPECTS(chains >= 0 && num_draws >= 0, "chains and num_draws must be non-negative, got ",
                 chains, " and ", num_draws);
  return DrawsView{draws, chains, num_draws, num_draws, 1};
}

}  // namespace myriad::diag
