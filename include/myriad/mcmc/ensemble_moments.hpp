#pragma once
// Per-dimension mean and sum of squared deviations of an ensemble's positions across chains, or
// the mean and the matrix of centred cross-products: the batches for the parallel Welford
// updates in mcmc/welford.hpp (diagonal and dense metric). The backends compute them by two
// passes (mean, then deviations) accumulated in double: on the host
// detail/cpu_ensemble_moments.hpp, on the device kernels/hmc_kernels.cuh and
// kernels/ensemble_covariance.cuh.

#include <cstdint>
#include <vector>

namespace myriad {

/// Per-dimension mean and sum of squared deviations of the current positions across chains
/// (one batch for the parallel Welford update of mcmc/welford.hpp).
struct EnsembleMoments {
  std::vector<double> mean;
  std::vector<double> m2;
  std::int64_t count = 0;
};

/// The mean and the dim × dim matrix of centred cross-products Σ_c (x_c − x̄)(x_c − x̄)ᵀ
/// (row-major, symmetric) of the current positions across chains: one batch for
/// WelfordCovariance, D + D² values where the positions are D · chains.
struct EnsembleCovariance {
  std::vector<double> mean;
  std::vector<double> scatter;
  std::int64_t count = 0;
};

}  // namespace myriad
