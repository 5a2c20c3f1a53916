#pragma once
// Exact moments of a Boltzmann machine P(s) = exp(½ sᵀWs + sᵀb) / Z_B over s ∈ {±1}^n by
// enumerating all 2^n states as a stream (thesis-methods.md §9.6: the tempering benchmark's
// oracle at n = 30), nothing stored per state: log Z_B, E[s] and E[ssᵀ], and from them the
// relaxation's E[x] = Qᵀ E[s] and Cov[x] = Qᵀ Cov[s] Q + I (thesis E.10–E.11).
//
// The states split into 2^h blocks of 2^l (l = min(n, kLowUnits) low units, h = n − l high
// ones fixed per block), the blocks spread over OpenMP threads. In a block the energy is
// c_H + ½ s_Lᵀ W_LL s_L + f_Lᵀ s_L with the field f_L = W_LH s_H + b_L: the low units run through
// the block in Gray-code order, one unit flipping per state, so the energy and the low units'
// fields update in O(l), and each state adds its weight times s_L and s_L s_Lᵀ (O(l²)); the
// high units' sums follow from the block's totals (s_H is constant in the block). Weights are
// exp(e − m_block) with m_block ≥ every energy of the block (|terms| bounded), and blocks merge
// by log-sum-exp, so nothing overflows. Cost: about 2^n (l²/2 + 2l) multiply-adds.
// (models/boltzmann_relaxation.hpp keeps its own enumeration with a cumulative table, for exact
// samples at n ≤ 24.)

#include <vector>

namespace myriad::models {

struct BoltzmannExactMoments {
  int units = 0;
  double log_z = 0;            ///< log Z_B = log Σ_s exp(½sᵀWs + sᵀb)
  std::vector<double> mean;    ///< E[s], n values
  std::vector<double> second;  ///< E[ssᵀ], n × n row-major (ones on the diagonal)
};

/// The low units enumerated inside a block (see the file comment).
inline constexpr int kBoltzmannLowUnits = 14;

/// Enumerates all 2^n states of the machine with couplings w (n × n row-major, symmetric, zero
/// diagonal) and biases b (n = b.size(), 1 ≤ n ≤ 40). Throws myriad::invalid_argument for bad
/// shapes or entries.
BoltzmannExactMoments boltzmann_exact_moments(const std::vector<double>& w,
                                              const std::vector<double>& b);

/// The relaxation's moments from the machine's: E[x] = Qᵀ E[s] and Cov[x] = Qᵀ Cov[s] Q + I for
/// Q (n × d row-major, rows q_iᵀ) with QQᵀ = W + Λ.
struct RelaxationMoments {
  std::vector<double> mean;        ///< d values
  std::vector<double> covariance;  ///< d × d row-major
};
RelaxationMoments relaxation_moments(const BoltzmannExactMoments& machine,
                                     const std::vector<double>& factor, int dim);

}  // namespace myriad::models
