#pragma once
// The moments of mcmc/ensemble_moments.hpp on the host: two passes (mean, then squared
// deviations) accumulated in double, one OpenMP thread per dimension. The CUDA backend's
// reductions (kernels/hmc_kernels.cuh) divide and sum in the same way.

#include <cstdint>

#include "myriad/core/ensemble.hpp"
#include "myriad/mcmc/ensemble_moments.hpp"

namespace myriad {

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
