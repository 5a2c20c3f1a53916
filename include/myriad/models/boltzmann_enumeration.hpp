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
// by log-sum-exp, so nothing overflows. Cost: about 2^n (l²/2 + 2l) multiply-adds. The block is
// MYRIAD_HD code (models/boltzmann_block.hpp): on the CPU the blocks spread over OpenMP threads,
// on a GPU (boltzmann_exact_moments_cuda) over threads, one block each, the host merging the
// blocks' sums.
// (models/boltzmann_relaxation.hpp keeps its own enumeration with a cumulative table, for exact
// samples at n ≤ 24.)

#include <vector>

#include "myriad/core/error.hpp"

namespace myriad::models {

struct BoltzmannExactMoments {
  int units = 0;
  double log_z = 0;            ///< log Z_B = log Σ_s exp(½sᵀWs + sᵀb)
  std::vector<double> mean;    ///< E[s], n values
  std::vector<double> second;  ///< E[ssᵀ], n × n row-major (ones on the diagonal)
};

/// The low units enumerated inside a block (see the file comment).
inline constexpr int kBoltzmannLowUnits = 14;

/// Throws myriad::invalid_argument, naming the first bad entry, unless w (n × n row-major) is
/// finite and symmetric with a zero diagonal and b has n finite entries, 1 ≤ n ≤ 40.
void check_boltzmann_machine(const std::vector<double>& w, const std::vector<double>& b);

/// Enumerates all 2^n states of the machine with couplings w (n × n row-major, symmetric, zero
/// diagonal) and biases b (n = b.size(), 1 ≤ n ≤ 40). Throws myriad::invalid_argument for bad
/// shapes or entries.
BoltzmannExactMoments boltzmann_exact_moments(const std::vector<double>& w,
                                              const std::vector<double>& b);

/// Where the enumeration runs: OpenMP threads, or the current CUDA device.
enum class EnumerationDevice { cpu, cuda };

/// The low units a GPU thread enumerates (2^10 states per thread: 2^20 threads at n = 30).
inline constexpr int kBoltzmannGpuLowUnits = 10;

/// Values per block of boltzmann_moments_from_blocks's input: the bound and Σ ω, the l low units'
/// Σ ω s_j, and Σ ω s_j s_k as a packed lower triangle (models/boltzmann_block.hpp).
inline int boltzmann_block_sum_count(int l) { return 2 + l + l * (l + 1) / 2; }

/// The moments from every block's sums, laid out [value][block] with block index = its high
/// units (2^(n − low_units) blocks of boltzmann_block_sum_count(low_units) values each): the host
/// half of the GPU enumeration. Throws myriad::invalid_argument for bad shapes.
BoltzmannExactMoments boltzmann_moments_from_blocks(const std::vector<double>& w,
                                                    const std::vector<double>& b, int low_units,
                                                    const std::vector<double>& block_sums);

/// boltzmann_exact_moments on the current CUDA device (kernels/boltzmann_enumeration.cu): one
/// thread per block of kBoltzmannGpuLowUnits low units, the blocks' sums merged on the host;
/// 10 < n ≤ 32 (the sums take 2^(n − 10) × 67 doubles: 0.56 GB at n = 30). Throws
/// myriad::invalid_argument for other n, myriad::unavailable_error in a build without CUDA.
#if defined(MYRIAD_HAS_CUDA)
BoltzmannExactMoments boltzmann_exact_moments_cuda(const std::vector<double>& w,
                                                   const std::vector<double>& b);
#else
inline BoltzmannExactMoments boltzmann_exact_moments_cuda(const std::vector<double>&,
                                                          const std::vector<double>&) {
  throw unavailable_error("myriad was built without CUDA; enumerate on the CPU");
}
#endif

/// boltzmann_exact_moments on `device`; a machine of 10 units or fewer (2^10 states: nothing to
/// spread over a GPU) is enumerated on the CPU either way.
inline BoltzmannExactMoments boltzmann_exact_moments(const std::vector<double>& w,
                                                     const std::vector<double>& b,
                                                     EnumerationDevice device) {
  if (device == EnumerationDevice::cuda && b.size() > kBoltzmannGpuLowUnits)
    return boltzmann_exact_moments_cuda(w, b);
  return boltzmann_exact_moments(w, b);
}

/// The relaxation's moments from the machine's: E[x] = Qᵀ E[s] and Cov[x] = Qᵀ Cov[s] Q + I for
/// Q (n × d row-major, rows q_iᵀ) with QQᵀ = W + Λ.
struct RelaxationMoments {
  std::vector<double> mean;        ///< d values
  std::vector<double> covariance;  ///< d × d row-major
};
RelaxationMoments relaxation_moments(const BoltzmannExactMoments& machine,
                                     const std::vector<double>& factor, int dim);

}  // namespace myriad::models
