#include "myriad/diag/nested_rhat.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "myriad/core/error.hpp"

namespace myriad::diag {

double nested_rhat(DrawsView draws, int superchains) {
  MYRIAD_EXPECTS(superchains >= 2, "nested R-hat needs at least 2 superchains, got ", superchains);
  MYRIAD_EXPECTS(draws.chains >= superchains && draws.chains % superchains == 0, "chains (",
                 draws.chains, ") must be a positive multiple of superchains (", superchains, ")");
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const int64_t k_count = superchains;
  const int64_t m_count = draws.chains / k_count;
  const int64_t n_count = draws.draws;
  if (n_count < 1 || draws.data == nullptr) return kNaN;

  // Margossian et al. (2024), eqs. (15)–(19): superchain means θ̄_{··k} and the within-superchain
  // variance terms B̃_k (between its chains) and W̃_k (within its chains).
  std::vector<double> chain_means(static_cast<size_t>(m_count));
  double sum_of_superchain_means = 0.0;
  std::vector<double> superchain_means(static_cast<size_t>(k_count));
  double sum_of_within_terms = 0.0;  // Σ_k (B̃_k + W̃_k)
  for (int64_t k = 0; k < k_count; ++k) {
    double within_chains = 0.0;  // Σ_m sample variance of chain m
    double superchain_mean = 0.0;
    for (int64_t m = 0; m < m_count; ++m) {
      const int64_t chain = k * m_count + m;
      double sum = 0.0;
      for (int64_t n = 0; n < n_count; ++n) sum += draws(chain, n);
      const double mean = sum / static_cast<double>(n_count);
      if (n_count > 1) {
        double squares = 0.0;
        for (int64_t n = 0; n < n_count; ++n) {
          squares += (draws(chain, n) - mean) * (draws(chain, n) - mean);
        }
        within_chains += squares / static_cast<double>(n_count - 1);
      }
      chain_means[m] = mean;
      superchain_mean += mean;
    }
    superchain_mean /= static_cast<double>(m_count);
    double between_chains = 0.0;  // B̃_k, zero for M = 1
    if (m_count > 1) {
      for (double mean : chain_means) {
        between_chains += (mean - superchain_mean) * (mean - superchain_mean);
      }
      between_chains /= static_cast<double>(m_count - 1);
    }
    superchain_means[k] = superchain_mean;
    sum_of_superchain_means += superchain_mean;
    sum_of_within_terms += between_chains + within_chains / static_cast<double>(m_count);
  }
  const double overall_mean = sum_of_superchain_means / static_cast<double>(k_count);
  double between = 0.0;  // B̂_ν
  for (double mean : superchain_means) between += (mean - overall_mean) * (mean - overall_mean);
  between /= static_cast<double>(k_count - 1);
  const double within = sum_of_within_terms / static_cast<double>(k_count);  // Ŵ_ν

  if (!std::isfinite(between) || !std::isfinite(within)) return kNaN;
  if (within == 0.0) return between == 0.0 ? kNaN : std::numeric_limits<double>::infinity();
  return std::sqrt(1.0 + between / within);
}

}  // namespace myriad::diag
