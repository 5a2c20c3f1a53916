#pragma once
// One block of the streamed enumeration of a Boltzmann machine's states (models/
// boltzmann_enumeration.hpp): the high units fixed, the l low units run through in Gray-code
// order. MYRIAD_HD, so that the CPU's OpenMP loop (src/models/boltzmann_enumeration.cpp) and the
// CUDA kernel (kernels/boltzmann_enumeration.cu) run the same code.

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"

namespace myriad::models {

/// A block's totals besides its low units' sums: the shift (an upper bound of every energy in the
/// block) its weights are scaled by, and Σ ω = Σ_states e^{e − bound}.
struct BoltzmannBlockTotals {
  double bound;
  double total;
};

/// Index of (j, k), k ≤ j, in a packed lower triangle.
MYRIAD_HD inline int packed_lower(int j, int k) { return j * (j + 1) / 2 + k; }

/// Enumerates the block whose high units are `high` (bit k of high is unit l + k; a clear bit is
/// −1) over the 2^l states of its low units, for couplings w (n × n row-major, symmetric, zero
/// diagonal) and biases b. Writes Σ ω s_j to low_first[j] and Σ ω s_j s_k (k ≤ j) to
/// low_second[packed_lower(j, k)], j, k < l, every weight ω = e^{e − bound}; s (n values) and
/// field (l values) are scratch, s left at the last state's (its high units the block's).
///
/// In a block the energy is c_H + ½ s_Lᵀ W_LL s_L + f_Lᵀ s_L with the field f_L = W_LH s_H + b_L:
/// one low unit flips per state (Gray code), so the energy and the low units' fields update in
/// O(l), and each state adds its weight times s_L and s_L s_Lᵀ (O(l²)). The bound c_H + Σ_j
/// (½ Σ_k |W_jk| + |f_j|) over the low units exceeds every energy of the block, so no weight
/// overflows.
MYRIAD_HD inline BoltzmannBlockTotals enumerate_boltzmann_block(const double* w, const double* b,
                                                                int n, int l, std::int64_t high,
                                                                double* s, double* field,
                                                                double* low_first,
                                                                double* low_second) {
  for (int i = 0; i < n; ++i) s[i] = i < l ? -1.0 : (((high >> (i - l)) & 1) ? 1.0 : -1.0);
  // The high units' constant and the low units' field from the high units and the biases.
  double constant = 0;
  for (int i = l; i < n; ++i) {
    double h = 0;
    for (int k = l; k < n; ++k) h += w[static_cast<std::int64_t>(i) * n + k] * s[k];
    constant += 0.5 * s[i] * h + b[i] * s[i];
  }
  double energy = constant, bound = constant;
  for (int j = 0; j < l; ++j) {
    double external = b[j], internal = 0, row = 0;
    for (int k = l; k < n; ++k) external += w[static_cast<std::int64_t>(j) * n + k] * s[k];
    for (int k = 0; k < l; ++k) {
      internal += w[static_cast<std::int64_t>(j) * n + k] * s[k];
      row += myriad::fabs(w[static_cast<std::int64_t>(j) * n + k]);
    }
    field[j] = internal + external;  // ∂e/∂s_j: W_jL s_L + f_j
    energy += 0.5 * s[j] * internal + external * s[j];
    bound += 0.5 * row + myriad::fabs(external);
  }
  for (int j = 0; j < l; ++j) low_first[j] = 0;
  for (int q = 0; q < l * (l + 1) / 2; ++q) low_second[q] = 0;
  double total = 0;
  const std::int64_t states = std::int64_t{1} << l;
  for (std::int64_t t = 0;; ++t) {
    const double weight = myriad::exp(energy - bound);
    total += weight;
    for (int j = 0; j < l; ++j) {
      const double ws = weight * s[j];
      low_first[j] += ws;
      double* row = low_second + packed_lower(j, 0);
      for (int k = 0; k <= j; ++k) row[k] += ws * s[k];
    }
    if (t + 1 == states) break;
    // Gray code: state t + 1 flips unit ctz(t + 1).
    int j = 0;
    while ((((t + 1) >> j) & 1) == 0) ++j;
    const double s_j = s[j];
    energy -= 2.0 * s_j * field[j];
    for (int k = 0; k < l; ++k) field[k] -= 2.0 * s_j * w[static_cast<std::int64_t>(k) * n + j];
    s[j] = -s_j;
  }
  return {bound, total};
}

}  // namespace myriad::models
