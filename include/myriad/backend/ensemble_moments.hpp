#pragma once
// Per-dimension mean and sum of squared deviations of an ensemble's positions across chains,
// by two passes (mean, then squared deviations) accumulated in double: the batch for the
// parallel Welford update in run/welford.hpp.

#include <cstdint>

#include "myriad/backend/hmc_backend.hpp"
#include "myriad/core/ensemble.hpp"

namespace myriad {

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
