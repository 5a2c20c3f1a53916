#pragma once
// Per-dimension mean and sum of squared deviations of an ensemble's positions across chains:
// the batch for the parallel Welford update in mcmc/welford.hpp. The backends compute it by two
// passes (mean, then squared deviations) accumulated in double: on the host
// detail/cpu_ensemble_moments.hpp, on the device kernels/hmc_kernels.cuh.

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

}  // namespace myriad
