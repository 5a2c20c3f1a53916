#pragma once
// Per-dimension mean and sum of squared deviations of an ensemble's positions across chains,
// by two passes (mean, then squared deviations) accumulated in double: the batch for the
// parallel Welford update in mcmc/welford.hpp. The CUDA backend computes the same two passes on
// the device (kernels/hmc_kernels.cuh); ensemble_moments_cpu is the CPU's.

#include <cstdint>
#include <vector>

#include "myriad/core/ensemble.hpp"

namespace myriad {

/// Per-dimension mean and sum of squared deviations of the current positions across chains
/// (one batch for the parallel Welford update of mcmc/welford.hpp).
struct EnsembleMoments {
  std::vector<double> mean;
  std::vector<double> m2;
  std::int64_t count = 0;
};

/// The two passes on the host, one OpenMP thread per dimension.
template <class T>
void ensemble_moments_cpu(const EnsembleView<const T>& positions, EnsembleMoments& out) {
  const int dim = positions.dim;
  const std::int64_t chains = positions.chains;
  out.mean.assign(dim, 0.0);
  out.m2.assign(dim, 0.0);
  out.count = chains;
#pragma omp parallel for schedule(static)
  for (int d = 0; d < dim; ++d) {
    double sum = 0;
    for (std::int64_t c = 0; c < chains; ++c) sum += positions(d, c);
    const double mean = sum / static_cast<double>(chains);
    double m2 = 0;
    for (std::int64_t c = 0; c < chains; ++c) {
      const double dev = positions(d, c) - mean;
      m2 += dev * dev;
    }
    out.mean[d] = mean;
    out.m2[d] = m2;
  }
}

}  // namespace myriad
